/* probe_scan: where does tally's scan lose time against a copy? Times tally's scan kernels
 * (i32 inclusive sum) as they are and without their look-back (LOOKBACK = false: wrong results, the
 * cost of a tile without waiting for its predecessors), against a D2D memcpy and CUB's scan, in
 * one run. A design probe; answers are checked for the real variants only. (The persistent
 * bulk-copy ring kernel it also timed was removed from the library after commit 67381bb, and
 * the look-back over 4 windows per round trip after commit c5913cc.)
 *   nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc bench/probes/probe_scan.cu -o probe_scan */
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cub/cub.cuh>
#include "cuda/scan_kernel.cuh"

#define CK(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "FATAL %s:%d %s: %s\n", __FILE__, __LINE__, #call,                 \
                    cudaGetErrorString(e_));                                                   \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static cudaStream_t g_s;

template <typename F> static double time_us(F fn, int rot)
{
    for (int i = 0; i < 3; i++) fn(i % rot);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> t;
    for (int k = 0; k < 5; k++) {
        CK(cudaEventRecord(a, g_s));
        for (int r = 0; r < 20; r++) fn((k * 20 + r) % rot);
        CK(cudaEventRecord(b, g_s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000.0 / 20);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[2];
}

__global__ void fill(int *p, uint64_t n)
{
    for (uint64_t i = blockIdx.x * 256ull + threadIdx.x; i < n; i += (uint64_t)gridDim.x * 256)
        p[i] = (int)((i * 2654435761ull >> 7) % 2001) - 1000;
}
__global__ void count_diff(const int *a, const int *b, uint64_t n, unsigned long long *bad)
{
    unsigned long long c = 0;
    for (uint64_t i = blockIdx.x * 256ull + threadIdx.x; i < n; i += (uint64_t)gridDim.x * 256) c += a[i] != b[i];
    if (c) atomicAdd(bad, c);
}

int main()
{
    CK(cudaStreamCreateWithFlags(&g_s, cudaStreamNonBlocking));
    const size_t cap = (size_t)2 << 30;
    int *in, *out, *ref;
    CK(cudaMalloc(&in, cap));
    CK(cudaMalloc(&out, cap));
    CK(cudaMalloc(&ref, (size_t)1 << 30));
    fill<<<4096, 256>>>(in, cap / 4);
    void *status;
    unsigned *sync;
    CK(cudaMalloc(&status, (size_t)256 << 20));
    CK(cudaMalloc(&sync, 16));
    unsigned init[4] = {0, 0, 1, 0};
    CK(cudaMemcpy(sync, init, 16, cudaMemcpyHostToDevice));
    unsigned long long *bad;
    CK(cudaMalloc(&bad, 8));
    size_t tb = 0;
    cub::DeviceScan::InclusiveSum(nullptr, tb, (const int *)nullptr, (int *)nullptr, (int64_t)1 << 28);
    void *tmp;
    CK(cudaMalloc(&tmp, tb));
    printf("| variant | n | us | %% of memcpy | vs CUB |\n|---|---|---|---|---|\n");
    for (int lg : {22, 24, 26, 28}) {
        uint64_t n = 1ull << lg;
        size_t bytes = n * 4;
        int rot = (int)std::max<size_t>(1, std::min<size_t>(cap / bytes, 8));
        auto src = [&](int r) { return in + (size_t)r * n; };
        auto dst = [&](int r) { return out + (size_t)r * n; };
        double cpy = time_us([&](int r) { cudaMemcpyAsync(dst(r), src(r), bytes, cudaMemcpyDeviceToDevice, g_s); }, rot);
        double cub = time_us([&](int r) {
            size_t t2 = tb;
            cub::DeviceScan::InclusiveSum(tmp, t2, src(r), dst(r), (int64_t)n, g_s);
        }, rot);
        {
            size_t t2 = tb;
            cub::DeviceScan::InclusiveSum(tmp, t2, src(0), ref, (int64_t)n, g_s);
        }
        auto row = [&](const char *name, double us) {
            printf("| %s | 2^%d | %.2f | %.1f | %.3f |\n", name, lg, us, 100.0 * cpy / us, cub / us);
            fflush(stdout);
        };
        row("memcpy", cpy);
        row("cub", cub);
        tcu_scan_params p;
        memset(&p, 0, sizeof p);
        p.n = n;
        p.status = status;
        p.sync = sync;
        auto run = [&](const char *name, bool check, int wide, auto launch) {
            p.wide = wide;
            uint64_t tile = wide == 0 ? tcu::ScanShape<int>::TILE : tcu::ScanShape<int, 1>::TILE;
            p.ntiles = (n + tile - 1) / tile;
            p.in = src(0);
            p.out = dst(0);
            p.vec_out = 1;
            launch();
            if (check) {
                CK(cudaMemsetAsync(bad, 0, 8, g_s));
                count_diff<<<1024, 256, 0, g_s>>>(dst(0), ref, n, bad);
                unsigned long long h;
                CK(cudaMemcpyAsync(&h, bad, 8, cudaMemcpyDeviceToHost, g_s));
                CK(cudaStreamSynchronize(g_s));
                if (h) printf("WRONG %s 2^%d: %llu differ\n", name, lg, h);
            }
            row(name, time_us([&](int r) {
                p.in = src(r);
                p.out = dst(r);
                launch();
            }, rot));
        };
        using namespace tcu;
        p.lb_sleep_ns = 20;
        p.lb_backoff_ns = 0;
        for (uint32_t sh : {0u, 4u, 5u, 6u}) {
            p.status_shift = sh;
            char nm[96];
            snprintf(nm, sizeof nm, "tile_wide shift=%u", sh);
            run(nm, true, 1, [&] { scan_kernel<int, TALLY_SUM, 1><<<(unsigned)p.ntiles, kThreads, 0, g_s>>>(p); });
            if (sh == 0) continue;
            snprintf(nm, sizeof nm, "tile_wide4 shift=%u", sh);
            run(nm, true, 1, [&] { scan_kernel<int, TALLY_SUM, 3><<<(unsigned)p.ntiles, kThreads, 0, g_s>>>(p); });
        }
        p.status_shift = 0;
        run("tile_wide4_nolookback", false, 1, [&] { scan_kernel<int, TALLY_SUM, 3, false><<<(unsigned)p.ntiles, kThreads, 0, g_s>>>(p); });
        run("tile_wide_nolookback", false, 1, [&] { scan_kernel<int, TALLY_SUM, 1, false><<<(unsigned)p.ntiles, kThreads, 0, g_s>>>(p); });
        p.lb_sleep_ns = 20;
        p.lb_backoff_ns = 0;
        p.status_shift = 0;
    }
    CK(cudaDeviceSynchronize());
    printf("probe done\n");
    return 0;
}
