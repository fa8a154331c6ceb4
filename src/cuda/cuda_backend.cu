/* The CUDA backend: the C backend table (core/backend.h) and the host side of every launch
 * (pointer kinds, staging of host data, scratch buffers, results); tally_cuda.h's extras are
 * cuda_api.cu. The library must load and run on machines without a GPU or driver: the CUDA
 * runtime is linked statically and loads the driver lazily, so available() just reports 0
 * there. */
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <dlfcn.h>
#include "core/route.h"
#include "core/types.h"
#include "cuda/host.h"
#include "cuda/tuning.h"

namespace tcu_host {

tally_status cuda_fail(tally_context *ctx, cudaError_t err, const char *fn, const char *what)
{
    cudaGetLastError(); /* clear a sticky-free error so the next call starts clean */
    tally_status st = err == cudaErrorMemoryAllocation ? TALLY_ERR_OUT_OF_MEMORY
                                                       : TALLY_ERR_BACKEND_FAILURE;
    return tally_set_error(ctx, st, "%s: %s failed: %s (%s)", fn, what, cudaGetErrorName(err),
                           cudaGetErrorString(err));
}

int cuda_available(void)
{
    static const int available = [] { /* once per process, thread-safe */
        int count = 0;
        cudaError_t err = cudaGetDeviceCount(&count);
        cudaGetLastError();
        return (err == cudaSuccess && count > 0) ? 1 : 0;
    }();
    return available;
}

void free_state(State *s)
{
    if (!s) return;
    DeviceGuard g(s->device);
    if (s->own_stream) cudaStreamSynchronize(s->own_stream);
    if (s->stream && s->stream != s->own_stream) cudaStreamSynchronize(s->stream);
    stage_free(s);
    cudaFree(s->partials);
    cudaFree(s->xpartials);
    cudaFree(s->counter);
    cudaFree(s->aux);
    cudaFree(s->spec);
    cudaFree(s->scan_sync);
    cudaFree(s->scan_status);
    cudaFree(s->staging);
    cudaFree(s->seg_scratch);
    if (s->h_results) cudaFreeHost(s->h_results);
    if (s->hint) cudaFreeHost(s->hint);
    if (s->own_stream) cudaStreamDestroy(s->own_stream);
    delete s;
}

tally_status cuda_init(tally_context *ctx, const tally_options *opts, void **out)
{
    static const char fn[] = "tally_create";
    *out = nullptr;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        cudaGetLastError();
        return tally_set_error(ctx, TALLY_ERR_BACKEND_UNAVAILABLE,
                               "%s: no usable CUDA device (%s)", fn,
                               err != cudaSuccess ? cudaGetErrorString(err) : "no device");
    }
    int dev = opts ? opts->device : 0;
    if (dev < 0 || dev >= count)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: device = %d but this machine has %d CUDA device(s)", fn, dev,
                               count);
    State *s = new (std::nothrow) State();
    if (!s) return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    s->device = dev;
    DeviceGuard g(dev);
    cudaDeviceProp prop;
    tally_status st = TALLY_OK;
#define TCU_INIT(call)                                                                         \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            st = cuda_fail(ctx, e_, fn, #call);                                                \
            free_state(s);                                                                     \
            return st;                                                                         \
        }                                                                                      \
    } while (0)
    TCU_INIT(cudaGetDeviceProperties(&prop, dev));
    s->dev.ordinal = dev;
    s->dev.sm_count = prop.multiProcessorCount;
    snprintf(s->desc, sizeof s->desc, "%s, %d SMs, %.0f GiB", prop.name, prop.multiProcessorCount,
             (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    /* a blocking stream: it waits for the legacy default stream, so a plain cudaMemcpy of the
     * input just before a call (whose DMA may still run when it returns) is always seen */
    TCU_INIT(cudaStreamCreateWithFlags(&s->own_stream, cudaStreamDefault));
    s->stream = s->own_stream;
    TCU_INIT(cudaMalloc(&s->partials, (size_t)TCU_MAX_BLOCKS * TCU_PARTIAL_BYTES));
    TCU_INIT(cudaMalloc((void **)&s->xpartials,
                        (size_t)TCU_MAX_BLOCKS * TALLY_EXACT_CHUNKS * sizeof(long long)));
    /* the ticket (4 bytes); 8 bytes in, the packed integer sum (0); at 16 the max word (0), at
     * 24 the min word (~0): each is reset so by the launch that uses it */
    TCU_INIT(cudaMalloc((void **)&s->counter, 32));
    TCU_INIT(cudaMemset(s->counter, 0, 24));
    TCU_INIT(cudaMemset((char *)s->counter + 24, 0xff, 8));
    TCU_INIT(cudaMalloc((void **)&s->aux, sizeof(tcu_aux)));
    /* the speculative sum's ticket (0 between launches) and answer flag */
    TCU_INIT(cudaMalloc((void **)&s->spec, 2 * sizeof(unsigned int)));
    TCU_INIT(cudaMemset(s->spec, 0, 2 * sizeof(unsigned int)));
    TCU_INIT(cudaHostAlloc((void **)&s->h_results, TCU_MAX_OPS * sizeof(tally_result),
                           cudaHostAllocMapped));
    /* what the last adaptive f32 and f64 sums saw (spec_plan): none yet */
    TCU_INIT(cudaHostAlloc((void **)&s->hint, 2 * sizeof(unsigned int), cudaHostAllocMapped));
    s->hint[0] = s->hint[1] = 0u;
    for (auto &a : s->adapt) {
        a.wait = 0;
        a.gap = TCU_SPEC_PROBE_FIRST / 2;
    }
    TCU_INIT(cudaMalloc((void **)&s->scan_sync, 4 * sizeof(unsigned int)));
    {
        unsigned int init[4] = {0, 0, 1, 0};
        TCU_INIT(cudaMemcpy(s->scan_sync, init, sizeof init, cudaMemcpyHostToDevice));
    }
#undef TCU_INIT
    *out = s;
    return TALLY_OK;
}

void cuda_fini(void *state) { free_state((State *)state); }

const char *cuda_describe(void *state) { return state ? ((State *)state)->desc : ""; }

/* Where a pointer lives: 1 device-accessible (device, managed, registered host), 0 plain host.
 * *dev gets the pointer to use on the device. */
int device_accessible(const void *p, const void **dev)
{
    cudaPointerAttributes a;
    *dev = p;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    switch (a.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged: return 1;
    case cudaMemoryTypeHost:
        if (a.devicePointer) {
            *dev = a.devicePointer;
            return 1;
        }
        return 0;
    default: return 0;
    }
}

/* 1 if the kernels read p where it is (device or managed memory, or a small pinned buffer
 * read through its mapping; *dev: the pointer to use there); 0 for host memory to be copied to
 * the device first (larger pinned buffers move faster by DMA than read over the link). */
int read_in_place(const void *p, size_t bytes, const void **dev)
{
    *dev = p;
    if (!device_accessible(p, dev)) return 0;
    if (bytes >= TCU_PIN_DMA_MIN && host_kind(p) == HOST_PINNED) {
        *dev = p;
        return 0;
    }
    return 1;
}

/* The driver is in the process once anything has used CUDA (the runtime loads it by this name
 * and never unloads it); before that no pointer can be device memory. */
static int driver_loaded(void)
{
    static std::atomic<int> loaded{0};
    if (loaded.load(std::memory_order_relaxed)) return 1;
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    dlclose(h);
    loaded.store(1, std::memory_order_relaxed);
    return 1;
}

int cuda_owns(const void *p)
{
    if (!p || !driver_loaded()) return 0;
    return host_kind(p) == HOST_DEVICE;
}

tally_status ensure_staging(tally_context *ctx, State *s, size_t bytes, const char *fn)
{
    if (s->staging_bytes >= bytes) return TALLY_OK;
    cudaStreamSynchronize(s->stream);
    cudaFree(s->staging);
    s->staging = nullptr;
    s->staging_bytes = 0;
    cudaError_t err = cudaMalloc(&s->staging, bytes);
    if (err != cudaSuccess) return cuda_fail(ctx, err, fn, "cudaMalloc (staging for host data)");
    s->staging_bytes = bytes;
    return TALLY_OK;
}

tally_status ensure_scan_status(tally_context *ctx, State *s, tally_type type, uint64_t ntiles,
                                const char *fn)
{
    size_t bytes = tcu_scan_status_bytes(type, ntiles);
    if (bytes < 4096) bytes = 4096;
    if (s->scan_status_bytes >= bytes) return TALLY_OK;
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaStreamIsCapturing(s->stream, &cs);
    if (cs != cudaStreamCaptureStatusNone)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: the scan needs more scratch than reserved while the stream "
                               "is being captured; call tally_cuda_reserve first", fn);
    bytes += bytes / 4; /* grow in steps */
    cudaStreamSynchronize(s->stream);
    cudaFree(s->scan_status);
    s->scan_status = nullptr;
    s->scan_status_bytes = 0;
    TCU_TRY(ctx, fn, cudaMalloc(&s->scan_status, bytes));
    /* zero flags mean "not published" for every epoch (epochs start at 1) */
    TCU_TRY(ctx, fn, cudaMemset(s->scan_status, 0, bytes));
    s->scan_status_bytes = bytes;
    return TALLY_OK;
}

size_t unique_ops(const tally_op *ops, size_t nops, tally_op *uniq)
{
    size_t nu = 0;
    for (size_t i = 0; i < nops; i++) {
        size_t j = 0;
        while (j < nu && uniq[j] != ops[i]) j++;
        if (j == nu) uniq[nu++] = ops[i];
    }
    return nu;
}

/* The kernel features the ops need (the op table's needs: a mean, and the variance's first
 * pass, need the count of the values summed), and the kernel mask that covers them; *has_var:
 * a second pass follows (the exact sum of squared deviations). */
unsigned ops_mask(const tally_op *ops, size_t nops, int *has_var)
{
    static const struct { uint32_t needs; unsigned features; } k_features[] = {
        {TALLY_FEAT_SUM, TCU_F_SUM},       {TALLY_FEAT_PROD, TCU_F_PROD},
        {TALLY_FEAT_MIN, TCU_F_MIN},       {TALLY_FEAT_MAX, TCU_F_MAX},
        {TALLY_FEAT_ARGMIN, TCU_F_ARGMIN}, {TALLY_FEAT_ARGMAX, TCU_F_ARGMAX},
        {TALLY_FEAT_BITS, TCU_F_BITS},     {TALLY_FEAT_COUNT, TCU_F_COUNT},
        {TALLY_FEAT_MEAN, TCU_F_COUNT},
    };
    const uint32_t needs = tally_ops_needs(ops, nops);
    unsigned need = 0;
    for (const auto &f : k_features)
        if (needs & f.needs) need |= f.features;
    *has_var = (needs & TALLY_FEAT_VAR) != 0;
    static const unsigned masks[] = {TCU_MASK_SUM, TCU_MASK_MIN, TCU_MASK_MAX, TCU_MASK_ARGMIN,
                                     TCU_MASK_ARGMAX, TCU_MASK_SMM};
    for (unsigned m : masks)
        if ((need & ~m) == 0) return m;
    return TCU_MASK_ALL;
}

/* The speculative sum's setting (tuning.h, SPEC): the knob in a tuning build, else
 * TALLY_CUDA_SPEC from the environment, read once (default 3, adaptive). */
static int spec_mode(void)
{
#ifdef TALLY_TUNING
    return tcu_knob(TCU_KNOB_SPEC);
#else
    static const int mode = [] {
        const char *e = getenv("TALLY_CUDA_SPEC");
        return e && *e ? atoi(e) : 3;
    }();
    return mode;
#endif
}

/* Whether the speculative f32/f64 sum (spec_sum.cuh) may go first: sums and means only (its
 * last block writes nothing else), every element counted (no omit_nan), no variance pass, and
 * by SPEC: not off, and from TCU_SPEC_MIN_BYTES of input unless the setting is "every size". */
static bool spec_eligible(int mode, tally_type type, uint64_t n, const tally_op *ops, size_t nops,
                          int omit_nan, int has_var, unsigned force_mask)
{
    if (force_mask || has_var || omit_nan || n == 0) return false;
    if (type != TALLY_F32 && type != TALLY_F64) return false;
    for (size_t i = 0; i < nops; i++)
        if (ops[i] != TALLY_SUM && ops[i] != TALLY_MEAN) return false;
    if (mode == 0) return false;
    return mode == 2 || mode == 4 || n * tally_type_size(type) >= TCU_SPEC_MIN_BYTES;
}

/* The adaptive setting (SPEC 3, the default; 4 at every size): per context and float type, the
 * exact kernel alone when the last sum of that type showed narrow data, else the speculative
 * pass first. The choice changes only the speed, never the bits (either path gives the exact
 * sum rounded once), so the word it reads may be stale (an asynchronous call still queued, a
 * graph captured earlier): it is read from mapped host memory as it is, never waited for.
 *  - TCU_HINT_NARROW (the exact kernel ran and every batch stayed on its fast path, price-like
 *    data, which it sums at the plain sum's speed): the exact kernel alone.
 *  - nothing yet, or TCU_HINT_WIDE (some batch left the fast path: wide-range data, where the
 *    pass is faster): the pass first.
 *  - TCU_HINT_SPEC (the pass answered, so the exact kernel did not run and the data's range is
 *    unknown): the pass first, but every so often the exact kernel alone as a probe, which
 *    reports the range. The probes' spacing doubles from TCU_SPEC_PROBE_FIRST up to
 *    TCU_SPEC_PROBE_MOST pass-first calls while the data stays wide (a probe there costs about
 *    0.4 of a call for f64, 0.1 for f32), and starts again from TCU_SPEC_PROBE_FIRST once the
 *    data was narrow; a fresh context probes at its second sum.
 * Returns whether the pass goes first. */
static bool spec_plan(State *s, tally_type type)
{
    const int k = type == TALLY_F64 ? 1 : 0;
    auto &a = s->adapt[k];
    const unsigned h = *(volatile unsigned int *)&s->hint[k];
    if (h == TCU_HINT_NARROW) {
        a.gap = TCU_SPEC_PROBE_FIRST;
        a.wait = TCU_SPEC_PROBE_FIRST;
        return false;
    }
    if (h == TCU_HINT_SPEC && a.wait == 0) { /* a probe */
        a.gap = a.gap * 2 < TCU_SPEC_PROBE_MOST ? a.gap * 2 : TCU_SPEC_PROBE_MOST;
        a.wait = a.gap;
        return false;
    }
    if (a.wait) a.wait--;
    return true;
}

/* Enqueues the reduce kernels (one, or two with a variance; the speculative sum first when
 * spec_first); results go to out[i] for ops[i]. */
tally_status enqueue_reduce(tally_context *ctx, State *s, const char *fn, tally_type type,
                            const void *ddata, uint64_t n, const tally_op *ops, size_t nops,
                            const tally_reduce_options *opts, tally_result *out,
                            unsigned force_mask)
{
    tcu_reduce_params p;
    memset(&p, 0, sizeof p);
    size_t es = tally_type_size(type);
    uint64_t vec = 16 / es;
    uintptr_t a = (uintptr_t)ddata;
    if (n && a % es)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: data = %p is not aligned to its %zu-byte elements (the CUDA "
                               "backend needs element-aligned pointers)", fn, ddata, es);
    uint64_t head = ((16 - a % 16) % 16) / es;
    if (head > n) head = n;
    p.data = ddata;
    p.n = n;
    p.head = (uint32_t)head;
    p.body_vec = (n - head) / vec;
    p.tail = (uint32_t)(n - head - p.body_vec * vec);
    p.partials = s->partials;
    p.xpartials = s->xpartials;
    p.counter = s->counter;
    p.acc = (unsigned long long *)((char *)s->counter + 8);
    p.kmax_word = (unsigned long long *)((char *)s->counter + 16);
    p.kmin_word = (unsigned long long *)((char *)s->counter + 24);
    p.out = out;
    p.nops = (int)nops;
    p.omit_nan = opts && opts->omit_nan ? 1 : 0;
    p.ddof = opts ? opts->ddof : 0;
    for (size_t i = 0; i < nops; i++) p.ops[i] = (uint8_t)ops[i];
    int has_var;
    unsigned mask = ops_mask(ops, nops, &has_var);
    if (force_mask) mask = force_mask;
    p.aux = has_var ? s->aux : nullptr;
    p.pdl = tcu_knob(TCU_KNOB_PDL);
    const int mode = spec_mode();
    bool spec = spec_eligible(mode, type, n, ops, nops, p.omit_nan, has_var, force_mask);
    if (spec && mode >= 3) {
        p.hint = s->hint + (type == TALLY_F64 ? 1 : 0);
        spec = spec_plan(s, type);
    }
    if (spec) {
        /* the exact kernel after it returns at once when it answered (its flag, p.spec[1]) */
        p.spec = s->spec;
        cudaError_t e = tcu_launch_spec_sum(type, &p, &s->dev, s->stream);
        if (e != cudaSuccess) return cuda_fail(ctx, e, fn, "the speculative sum kernel launch");
    }
    cudaError_t err = tcu_launch_reduce(type, mask, p.omit_nan, &p, &s->dev, s->stream);
    if (err != cudaSuccess) return cuda_fail(ctx, err, fn, "the reduce kernel launch");
    if (has_var) {
        p.pass2 = 1;
        p.spec = nullptr;
        p.hint = nullptr;
        err = tcu_launch_reduce(type, TCU_MASK_SQDEV, p.omit_nan, &p, &s->dev, s->stream);
        if (err != cudaSuccess) return cuda_fail(ctx, err, fn, "the variance kernel launch");
    }
    return TALLY_OK;
}

tally_status cuda_reduce(tally_context *ctx, void *state, tally_type type, const void *data,
                         uint64_t n, const tally_op *ops, size_t nops,
                         const tally_reduce_options *opts, tally_result *results)
{
    static const char fn[] = "tally_reduce";
    State *s = (State *)state;
    DeviceGuard g(s->device);
    const void *d = data;
    size_t bytes = (size_t)n * tally_type_size(type);
    if (n > 0 && !read_in_place(data, bytes, &d)) {
        /* host data: into device memory at the link's speed, then the same kernel */
        tally_status st = ensure_staging(ctx, s, bytes, fn);
        if (st == TALLY_OK) st = stage_h2d(ctx, s, s->staging, data, bytes, fn);
        if (st != TALLY_OK) return st;
        d = s->staging;
    }
    /* each distinct op once, then spread back */
    tally_op uniq[TALLY_OP_COUNT];
    const size_t nu = unique_ops(ops, nops, uniq);
    tally_status st = enqueue_reduce(ctx, s, fn, type, d, n, uniq, nu, opts, s->h_results);
    if (st != TALLY_OK) return st;
    TCU_TRY(ctx, fn, cudaStreamSynchronize(s->stream));
    for (size_t i = 0; i < nops; i++) {
        size_t j = 0;
        while (uniq[j] != ops[i]) j++;
        tally_result r;
        memcpy(&r, (const void *)&s->h_results[j], sizeof r);
        results[i] = r;
    }
    return TALLY_OK;
}

tally_status enqueue_scan(tally_context *ctx, State *s, const char *fn, tally_op op,
                          tally_type type, const void *din, void *dout, uint64_t n,
                          const tally_scan_options *opts)
{
    size_t es = tally_type_size(type);
    uintptr_t a = (uintptr_t)din, b = (uintptr_t)dout;
    if (a % es || b % es)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: in = %p / out = %p are not aligned to their %zu-byte elements "
                               "(the CUDA backend needs element-aligned pointers)", fn, din, dout, es);
    tcu_scan_params p;
    memset(&p, 0, sizeof p);
    p.in = din;
    p.out = dout;
    p.n = n;
    p.head = (uint32_t)((a % 16) / es);
    p.vec_out = (a % 16) == (b % 16);
    p.wide = tcu_scan_shape(type, n);
    uint64_t tile = tcu_scan_tile_elems(type, p.wide);
    p.ntiles = (p.head + n + tile - 1) / tile;
    if (p.ntiles > 0x7fffffffull)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: n = %llu is too large for one "
                               "CUDA scan", fn, (unsigned long long)n);
    p.exclusive = opts->exclusive ? 1 : 0;
    p.init_bits = tally_scan_start_bits(op, type, opts);
    p.lb_sleep_ns = (uint32_t)tcu_knob(TCU_KNOB_SCAN_SLEEP);
    p.lb_backoff_ns = (uint32_t)tcu_knob(TCU_KNOB_SCAN_BACKOFF);
    p.status_shift = (uint32_t)tcu_knob(TCU_KNOB_SCAN_SHIFT);
    tally_status st = ensure_scan_status(ctx, s, type, p.ntiles << p.status_shift, fn);
    if (st != TALLY_OK) return st;
    p.status = s->scan_status;
    p.sync = s->scan_sync;
    p.pdl = tcu_knob(TCU_KNOB_PDL);
    cudaError_t err = tcu_launch_scan(type, op, &p, &s->dev, s->stream);
    if (err != cudaSuccess) return cuda_fail(ctx, err, fn, "the scan kernel launch");
    return TALLY_OK;
}

tally_status cuda_scan(tally_context *ctx, void *state, tally_op op, tally_type type,
                       const void *in, void *out, uint64_t n, const tally_scan_options *opts)
{
    static const char fn[] = "tally_scan";
    State *s = (State *)state;
    if (n == 0) return TALLY_OK;
    DeviceGuard g(s->device);
    const void *din;
    const void *dout_c;
    size_t bytes = (size_t)n * tally_type_size(type);
    int in_dev = read_in_place(in, bytes, &din);
    int out_dev = read_in_place(out, bytes, &dout_c);
    tally_status st;
    if (in_dev && out_dev) {
        st = enqueue_scan(ctx, s, fn, op, type, din, (void *)dout_c, n, opts);
        if (st != TALLY_OK) return st;
        TCU_TRY(ctx, fn, cudaStreamSynchronize(s->stream));
        return TALLY_OK;
    }
    /* host memory on either side: the input in device memory (staged unless it is there), the
     * scan into the output there, or into the staging buffer and back to host memory */
    st = ensure_staging(ctx, s, bytes, fn);
    if (st != TALLY_OK) return st;
    if (!in_dev) {
        st = stage_h2d(ctx, s, s->staging, in, bytes, fn);
        if (st != TALLY_OK) return st;
        din = s->staging;
    }
    void *dst = out_dev ? (void *)dout_c : s->staging;
    st = enqueue_scan(ctx, s, fn, op, type, din, dst, n, opts);
    if (st != TALLY_OK) return st;
    if (!out_dev) return stage_d2h(ctx, s, out, s->staging, bytes, fn);
    TCU_TRY(ctx, fn, cudaStreamSynchronize(s->stream));
    return TALLY_OK;
}

/* Copies between any pointers the calls accept (libtally_mpi stages device data with it). */
tally_status cuda_copy(tally_context *ctx, void *state, void *dst, const void *src, uint64_t bytes)
{
    static const char fn[] = "tally_mpi (staging)";
    State *s = (State *)state;
    if (bytes == 0) return TALLY_OK;
    DeviceGuard g(s->device);
    TCU_TRY(ctx, fn, cudaMemcpyAsync(dst, src, (size_t)bytes, cudaMemcpyDefault, s->stream));
    TCU_TRY(ctx, fn, cudaStreamSynchronize(s->stream));
    return TALLY_OK;
}

/* no accumulate: streams on a CUDA context run on a CPU backend state of their own */
const tally_backend cuda_backend = {
    TALLY_BACKEND_CUDA, "cuda",    cuda_available, cuda_init, cuda_fini,
    cuda_reduce,        cuda_scan, cuda_describe,  cuda_copy, cuda_reduce_segments,
    nullptr /* accumulate */, nullptr /* sqdev */, cuda_owns,
};

State *cuda_state(tally_context *ctx)
{
    if (!ctx || !ctx->backend) return nullptr;
    if (ctx->backend->kind == TALLY_BACKEND_CUDA) return (State *)ctx->state;
    /* an AUTO context: its CUDA state, started now if need be */
    if (tally_route_is(ctx)) return (State *)tally_route_backend_state(ctx, &cuda_backend);
    return nullptr;
}

} // namespace tcu_host

extern "C" const tally_backend *tally_cuda_backend_get(void) { return &tcu_host::cuda_backend; }
