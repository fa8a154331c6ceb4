/* Host data to and from the device at the link's speed (host.h: stage_h2d, stage_d2h).
 *
 * A plain cudaMemcpy from pageable memory (malloc'd, a mapped file) runs at a fraction of the
 * link: the driver copies through a small pinned buffer with one thread. Here a team of worker
 * threads, each with its own stream and two pinned buffers of TCU_STAGE_CHUNK bytes, takes the
 * transfer piece by piece (an atomic counter hands out the pieces): a worker copies a piece
 * into one of its buffers with memcpy while the DMA of its other buffer runs, so that the CPU
 * copies of all workers and the DMAs of all streams overlap and keep the link busy. Device to
 * host runs the same pipeline backwards (each worker queues the DMA of its next piece before
 * copying out the one that has landed). Pinned memory (cudaHostAlloc, cudaHostRegister) needs
 * no CPU copy: one cudaMemcpyAsync on the context's stream moves it at the link's speed.
 *
 * Ordering with the context's stream: an upload leaves the context's stream waiting on every
 * worker's last copy (events), so a kernel enqueued after it sees the data; a download starts
 * its copies after the work queued on the context's stream so far (an event) and returns when
 * the host buffer holds the data. The bytes moved are the bytes given: results are those of
 * the same kernels on the same data, bit for bit. */
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <vector>
#include <unistd.h>
#include "cuda/host.h"

namespace tcu_host {

struct StageWorker {
    cudaStream_t stream = nullptr;
    void *pin[2] = {nullptr, nullptr};
    cudaEvent_t ev[2] = {nullptr, nullptr};
    cudaEvent_t fin = nullptr;   /* after the worker's last upload of a job */
    bool used[2] = {false, false};
};

struct Stager {
    int device = 0;
    size_t chunk = TCU_STAGE_CHUNK;
    std::vector<StageWorker> w;
    std::vector<std::thread> threads;
    std::mutex mu;
    std::condition_variable go, done;
    uint64_t job = 0;             /* bumped for each job; workers run each once */
    int running = 0;              /* workers still on the current job */
    bool quit = false;
    /* the current job */
    int to_device = 1;
    char *dev = nullptr;
    char *host = nullptr;
    size_t bytes = 0;
    std::atomic<size_t> next{0};  /* the next piece to take */
    std::atomic<int> err{0};      /* the first CUDA error (a cudaError_t), 0 if none */
    cudaEvent_t start = nullptr;  /* downloads: the context's work before them */
};

static void fail(Stager *g, cudaError_t e)
{
    int none = 0;
    g->err.compare_exchange_strong(none, (int)e);
    g->next.store(SIZE_MAX / 2); /* no more pieces for anyone */
}

static bool take(Stager *g, size_t *off, size_t *len)
{
    size_t i = g->next.fetch_add(1);
    if (i >= SIZE_MAX / 4 || i >= (g->bytes + g->chunk - 1) / g->chunk) return false;
    *off = i * g->chunk;
    *len = std::min(g->chunk, g->bytes - *off);
    return true;
}

static void upload(Stager *g, StageWorker &w)
{
    int slot = 0;
    size_t off, len;
    cudaError_t e;
    while (take(g, &off, &len)) {
        if (w.used[slot] && (e = cudaEventSynchronize(w.ev[slot])) != cudaSuccess) return fail(g, e);
        memcpy(w.pin[slot], g->host + off, len);
        if ((e = cudaMemcpyAsync(g->dev + off, w.pin[slot], len, cudaMemcpyHostToDevice,
                                 w.stream)) != cudaSuccess ||
            (e = cudaEventRecord(w.ev[slot], w.stream)) != cudaSuccess)
            return fail(g, e);
        w.used[slot] = true;
        slot ^= 1;
    }
    if ((e = cudaEventRecord(w.fin, w.stream)) != cudaSuccess) fail(g, e);
}

static void download(Stager *g, StageWorker &w)
{
    cudaError_t e;
    if ((e = cudaStreamWaitEvent(w.stream, g->start, 0)) != cudaSuccess) return fail(g, e);
    size_t off[2], len[2];
    int slot = 0;
    if (!take(g, &off[0], &len[0])) return;
    /* the buffers are free: every earlier job's pieces were copied out before it ended */
    if ((e = cudaMemcpyAsync(w.pin[0], g->dev + off[0], len[0], cudaMemcpyDeviceToHost,
                             w.stream)) != cudaSuccess ||
        (e = cudaEventRecord(w.ev[0], w.stream)) != cudaSuccess)
        return fail(g, e);
    for (;;) {
        int other = slot ^ 1;
        bool more = take(g, &off[other], &len[other]);
        if (more && ((e = cudaMemcpyAsync(w.pin[other], g->dev + off[other], len[other],
                                          cudaMemcpyDeviceToHost, w.stream)) != cudaSuccess ||
                     (e = cudaEventRecord(w.ev[other], w.stream)) != cudaSuccess))
            return fail(g, e);
        if ((e = cudaEventSynchronize(w.ev[slot])) != cudaSuccess) return fail(g, e);
        if (g->err.load()) return;
        memcpy(g->host + off[slot], w.pin[slot], len[slot]);
        if (!more) return;
        slot = other;
    }
}

static void worker_main(Stager *g, int k)
{
    cudaSetDevice(g->device);
    uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock<std::mutex> lk(g->mu);
            g->go.wait(lk, [&] { return g->quit || g->job != seen; });
            if (g->quit) return;
            seen = g->job;
        }
        if (g->to_device) upload(g, g->w[k]);
        else download(g, g->w[k]);
        std::lock_guard<std::mutex> lk(g->mu);
        if (--g->running == 0) g->done.notify_all();
    }
}

static void stager_free(Stager *g)
{
    if (!g) return;
    {
        std::lock_guard<std::mutex> lk(g->mu);
        g->quit = true;
    }
    g->go.notify_all();
    for (auto &t : g->threads) t.join();
    for (auto &w : g->w) {
        if (w.stream) cudaStreamSynchronize(w.stream);
        for (int k = 0; k < 2; k++) {
            if (w.pin[k]) cudaFreeHost(w.pin[k]);
            if (w.ev[k]) cudaEventDestroy(w.ev[k]);
        }
        if (w.fin) cudaEventDestroy(w.fin);
        if (w.stream) cudaStreamDestroy(w.stream);
    }
    if (g->start) cudaEventDestroy(g->start);
    delete g;
}

void stage_free(State *s)
{
    stager_free(s->stager);
    s->stager = nullptr;
}

int stage_workers(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = (int)(cores / 2);
    return std::max(2, std::min(n, TCU_STAGE_MAX_WORKERS));
}

/* The team, made on first use: its threads, streams, events and pinned buffers. */
static tally_status stager_get(tally_context *ctx, State *s, const char *fn, Stager **out)
{
    if (s->stager) {
        *out = s->stager;
        return TALLY_OK;
    }
    Stager *g = new (std::nothrow) Stager();
    if (!g) return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    g->device = s->device;
    int n = stage_workers();
    g->w.resize(n);
    cudaError_t e = cudaEventCreateWithFlags(&g->start, cudaEventDisableTiming);
    for (int k = 0; k < n && e == cudaSuccess; k++) {
        StageWorker &w = g->w[k];
        e = cudaStreamCreateWithFlags(&w.stream, cudaStreamNonBlocking);
        for (int b = 0; b < 2 && e == cudaSuccess; b++) {
            e = cudaHostAlloc(&w.pin[b], g->chunk, cudaHostAllocDefault);
            if (e == cudaSuccess) e = cudaEventCreateWithFlags(&w.ev[b], cudaEventDisableTiming);
        }
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&w.fin, cudaEventDisableTiming);
    }
    if (e != cudaSuccess) {
        stager_free(g);
        return cuda_fail(ctx, e, fn, "setting up the pinned staging buffers");
    }
    try {
        for (int k = 0; k < n; k++) g->threads.emplace_back(worker_main, g, k);
    } catch (...) {
        stager_free(g);
        return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: cannot start the staging threads",
                               fn);
    }
    s->stager = g;
    *out = g;
    return TALLY_OK;
}

/* Runs one job on every worker and waits for them. */
static cudaError_t run_job(Stager *g, int to_device, char *dev, char *host, size_t bytes)
{
    {
        std::lock_guard<std::mutex> lk(g->mu);
        g->to_device = to_device;
        g->dev = dev;
        g->host = host;
        g->bytes = bytes;
        g->next.store(0);
        g->err.store(0);
        g->running = (int)g->w.size();
        g->job++;
    }
    g->go.notify_all();
    std::unique_lock<std::mutex> lk(g->mu);
    g->done.wait(lk, [&] { return g->running == 0; });
    return (cudaError_t)g->err.load();
}

HostKind host_kind(const void *p)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return HOST_PAGEABLE;
    }
    switch (a.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged: return HOST_DEVICE;
    case cudaMemoryTypeHost: return HOST_PINNED;
    default: return HOST_PAGEABLE;
    }
}

tally_status stage_h2d(tally_context *ctx, State *s, void *d_dst, const void *h_src, size_t bytes,
                       const char *fn)
{
    if (bytes == 0) return TALLY_OK;
    if (bytes < TCU_STAGE_MIN_BYTES || host_kind(h_src) != HOST_PAGEABLE) {
        TCU_TRY(ctx, fn, cudaMemcpyAsync(d_dst, h_src, bytes, cudaMemcpyHostToDevice, s->stream));
        return TALLY_OK;
    }
    Stager *g;
    tally_status st = stager_get(ctx, s, fn, &g);
    if (st != TALLY_OK) return st;
    /* the destination may still be read by work queued earlier (staging reused) */
    TCU_TRY(ctx, fn, cudaStreamSynchronize(s->stream));
    cudaError_t e = run_job(g, 1, (char *)d_dst, (char *)h_src, bytes);
    if (e != cudaSuccess) return cuda_fail(ctx, e, fn, "copying host data to the device");
    for (auto &w : g->w) TCU_TRY(ctx, fn, cudaStreamWaitEvent(s->stream, w.fin, 0));
    return TALLY_OK;
}

tally_status stage_d2h(tally_context *ctx, State *s, void *h_dst, const void *d_src, size_t bytes,
                       const char *fn)
{
    if (bytes == 0) return TALLY_OK;
    if (bytes < TCU_STAGE_MIN_BYTES || host_kind(h_dst) != HOST_PAGEABLE) {
        TCU_TRY(ctx, fn, cudaMemcpyAsync(h_dst, d_src, bytes, cudaMemcpyDeviceToHost, s->stream));
        TCU_TRY(ctx, fn, cudaStreamSynchronize(s->stream));
        return TALLY_OK;
    }
    Stager *g;
    tally_status st = stager_get(ctx, s, fn, &g);
    if (st != TALLY_OK) return st;
    TCU_TRY(ctx, fn, cudaEventRecord(g->start, s->stream));
    cudaError_t e = run_job(g, 0, (char *)d_src, (char *)h_dst, bytes);
    if (e != cudaSuccess) return cuda_fail(ctx, e, fn, "copying device data to host memory");
    return TALLY_OK;
}

} // namespace tcu_host
