/* probe_stream: which kernel shape streams memory fastest on this GPU, for a reduce (read only)
 * and for a scan (read + write)? A design probe, not a library test: each variant computes an
 * i32 sum (or a copy), is checked, and is timed against CUB and a D2D memcpy in the same run.
 *
 * Reduce variants (the sum of n i32 into one u64 with atomicAdd per block):
 *   even8   tally's shape: 256 threads, 8 x 16-byte loads per thread per batch, even share of
 *           batches per block, 4 blocks per SM
 *   even8w  the same with 8 blocks per SM (U = 4)
 *   dyn8    batches taken from an atomic counter (next one claimed while this one is summed)
 *   bulkK   persistent, K blocks per SM, a ring of S shared-memory stages filled by 1-D bulk
 *           copies (cp.async.bulk, sm_90) that complete on an mbarrier
 * Copy variants (the ceiling of a scan's shape, no look-back):
 *   tilecopy   tally's wide scan tile (256 threads x 8 vectors in, then out), one block per tile
 *   bulkcopy   persistent bulk-load ring, stores from registers (st.global.v4)
 *
 *   probe_stream [--min-log2 N] [--max-log2 N]
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cub/cub.cuh>

#define CK(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "FATAL %s:%d %s: %s\n", __FILE__, __LINE__, #call,                 \
                    cudaGetErrorString(e_));                                                   \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static int g_sms;
static cudaStream_t g_s;

/* ---------------------------------------------------------------- reduce: register loads */
template <int U, int MINB>
__global__ void __launch_bounds__(256, 8 / (U / 4 > 0 ? U / 4 : 1)) even_kernel(const int4 *v, uint64_t nv,
                                                                                 unsigned long long *out)
{
    constexpr uint64_t kB = 256ull * U;
    uint64_t nb = nv / kB; /* whole batches only (sizes are powers of two here) */
    uint64_t b0 = nb * blockIdx.x / gridDim.x, b1 = nb * (blockIdx.x + 1) / gridDim.x;
    long long s = 0;
    for (uint64_t b = b0; b < b1; b++) {
        int4 x[U];
#pragma unroll
        for (int u = 0; u < U; u++) x[u] = __ldg(v + b * kB + u * 256 + threadIdx.x);
#pragma unroll
        for (int u = 0; u < U; u++) s += (long long)x[u].x + x[u].y + (long long)x[u].z + x[u].w;
    }
    for (int o = 16; o; o >>= 1) s += __shfl_down_sync(~0u, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, (unsigned long long)s);
}

__global__ void __launch_bounds__(256, 4) dyn_kernel(const int4 *v, uint64_t nv, unsigned long long *out,
                                                     unsigned *ctr)
{
    constexpr int U = 8;
    constexpr uint64_t kB = 256ull * U;
    uint64_t nb = nv / kB;
    __shared__ unsigned next[2];
    if (threadIdx.x == 0) next[0] = atomicAdd(ctr, 1u);
    __syncthreads();
    long long s = 0;
    int k = 0;
    for (;;) {
        unsigned b = next[k & 1];
        if (b >= nb) break;
        if (threadIdx.x == 0) next[(k + 1) & 1] = atomicAdd(ctr, 1u);
        int4 x[U];
#pragma unroll
        for (int u = 0; u < U; u++) x[u] = __ldg(v + b * kB + u * 256 + threadIdx.x);
#pragma unroll
        for (int u = 0; u < U; u++) s += (long long)x[u].x + x[u].y + (long long)x[u].z + x[u].w;
        __syncthreads();
        k++;
    }
    for (int o = 16; o; o >>= 1) s += __shfl_down_sync(~0u, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, (unsigned long long)s);
}

/* even8 with tally's ending (partials, fence, ticket, last block combines) and/or tally's
 * fully serial 64-bit add chain */
template <bool TAIL, bool CHAIN>
__global__ void __launch_bounds__(256, 4) even8x_kernel(const int4 *v, uint64_t nv, unsigned long long *out,
                                                        unsigned long long *partials, unsigned *ticket)
{
    constexpr int U = 8;
    constexpr uint64_t kB = 256ull * U;
    uint64_t nb = nv / kB;
    uint64_t b0 = nb * blockIdx.x / gridDim.x, b1 = nb * (blockIdx.x + 1) / gridDim.x;
    long long s = 0;
    for (uint64_t b = b0; b < b1; b++) {
        int4 x[U];
#pragma unroll
        for (int u = 0; u < U; u++) x[u] = __ldg(v + b * kB + u * 256 + threadIdx.x);
        if (CHAIN) {
#pragma unroll
            for (int u = 0; u < U; u++) { s += x[u].x; s += x[u].y; s += x[u].z; s += x[u].w; }
        } else {
#pragma unroll
            for (int u = 0; u < U; u++) s += (long long)x[u].x + x[u].y + (long long)x[u].z + x[u].w;
        }
    }
    for (int o = 16; o; o >>= 1) s += __shfl_down_sync(~0u, s, o);
    if (!TAIL) {
        if ((threadIdx.x & 31) == 0) atomicAdd(out, (unsigned long long)s);
        return;
    }
    __shared__ long long ws[8];
    __shared__ bool last;
    if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        long long t = 0;
        for (int w = 0; w < 8; w++) t += ws[w];
        partials[blockIdx.x * 32] = (unsigned long long)t; /* 256-byte slots */
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    long long t = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += 256) t += (long long)__ldcg(partials + b * 32);
    for (int o = 16; o; o >>= 1) t += __shfl_down_sync(~0u, t, o);
    if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = t;
    __syncthreads();
    if (threadIdx.x == 0) {
        long long r = 0;
        for (int w = 0; w < 8; w++) r += ws[w];
        atomicAdd(out, (unsigned long long)r);
        *ticket = 0;
    }
}

/* ---------------------------------------------------------------- bulk-copy ring */
__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}
__device__ __forceinline__ void bulk_load(void *dst, const void *src, unsigned bytes, uint64_t *bar)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity)
{
    asm volatile("{\n\t.reg .pred p;\n"
                 "W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
                 "@!p bra W;\n}" ::"r"(smem_addr(bar)),
                 "r"(parity)
                 : "memory");
}

/* Persistent: block b streams chunks [c0, c1) of CHUNK bytes through a ring of S stages.
 * COPY: write each element back out to dst (the scan's shape without the scan). */
template <int CHUNK, int S, bool COPY>
__global__ void __launch_bounds__(256) bulk_kernel(const int4 *v, uint64_t nv, unsigned long long *out,
                                                   int4 *dst)
{
    extern __shared__ __align__(128) unsigned char ring[];
    __shared__ uint64_t full[S];
    constexpr int VPC = CHUNK / 16;         /* vectors per chunk */
    constexpr int PER = VPC / 256;          /* per thread */
    const uint64_t nc = nv / VPC;
    const uint64_t c0 = nc * blockIdx.x / gridDim.x, c1 = nc * (blockIdx.x + 1) / gridDim.x;
    if (threadIdx.x == 0) {
        for (int i = 0; i < S; i++) mbar_init(&full[i], 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int i = 0; i < S && c0 + i < c1; i++)
            bulk_load(ring + i * CHUNK, v + (c0 + i) * VPC, CHUNK, &full[i]);
    long long s = 0;
    for (uint64_t c = c0; c < c1; c++) {
        const int k = (int)((c - c0) % S);
        const unsigned par = (unsigned)(((c - c0) / S) & 1);
        mbar_wait(&full[k], par);
        const int4 *sv = (const int4 *)(ring + k * CHUNK);
        int4 x[PER];
#pragma unroll
        for (int j = 0; j < PER; j++) x[j] = sv[j * 256 + threadIdx.x];
        __syncthreads(); /* every thread has read stage k */
        if (threadIdx.x == 0 && c + S < c1) bulk_load(ring + k * CHUNK, v + (c + S) * VPC, CHUNK, &full[k]);
#pragma unroll
        for (int j = 0; j < PER; j++) {
            s += (long long)x[j].x + x[j].y + (long long)x[j].z + x[j].w;
            if (COPY) dst[c * VPC + j * 256 + threadIdx.x] = x[j];
        }
    }
    for (int o = 16; o; o >>= 1) s += __shfl_down_sync(~0u, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, (unsigned long long)s);
}

/* tally's wide scan tile as a plain copy (one block per 32 KB tile) */
__global__ void __launch_bounds__(256, 1) tilecopy_kernel(const int4 *v, int4 *dst)
{
    constexpr int VPT = 8;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint64_t base = (uint64_t)blockIdx.x * 256 * VPT + warp * 32 * VPT;
    int4 x[VPT];
#pragma unroll
    for (int j = 0; j < VPT; j++) x[j] = __ldg(v + base + j * 32 + lane);
#pragma unroll
    for (int j = 0; j < VPT; j++) dst[base + j * 32 + lane] = x[j];
}

/* ---------------------------------------------------------------- timing */
template <typename F> static double time_us(F fn, int rot, double expect_us)
{
    int reps = (int)std::min(500.0, std::max(10.0, 8000.0 / std::max(expect_us, 1.0)));
    for (int i = 0; i < 3; i++) fn(i % rot);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> t;
    for (int k = 0; k < 5; k++) {
        CK(cudaEventRecord(a, g_s));
        for (int r = 0; r < reps; r++) fn((k * reps + r) % rot);
        CK(cudaEventRecord(b, g_s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000.0 / reps);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[2];
}

/* the reference: one thread per element-stride, 64-bit atomics */
__global__ void ref_sum(const int *p, uint64_t n, unsigned long long *out)
{
    long long s = 0;
    for (uint64_t i = blockIdx.x * 256ull + threadIdx.x; i < n; i += (uint64_t)gridDim.x * 256) s += p[i];
    atomicAdd(out, (unsigned long long)s);
}

__global__ void fill(int *p, uint64_t n)
{
    for (uint64_t i = blockIdx.x * 256ull + threadIdx.x; i < n; i += (uint64_t)gridDim.x * 256)
        p[i] = (int)((i * 2654435761ull >> 7) % 2001) - 1000;
}

int main(int argc, char **argv)
{
    int lo = 20, hi = 30;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--min-log2")) lo = atoi(argv[++i]);
        if (!strcmp(argv[i], "--max-log2")) hi = atoi(argv[++i]);
    }
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaStreamCreateWithFlags(&g_s, cudaStreamNonBlocking));
    const size_t cap = (size_t)4 << 30; /* input pool: 4 GiB (rotations), output the same */
    int *pool, *dpool;
    CK(cudaMalloc(&pool, cap));
    CK(cudaMalloc(&dpool, cap));
    fill<<<4096, 256>>>(pool, cap / 4);
    unsigned long long *res;
    unsigned *ctr;
    CK(cudaMalloc(&res, 64));
    CK(cudaMalloc(&ctr, 4096 * 4));
    CK(cudaMemset(ctr, 0, 4096 * 4));
    unsigned long long *partials;
    unsigned *ticket;
    CK(cudaMalloc(&partials, 2048 * 256));
    CK(cudaMalloc(&ticket, 4));
    CK(cudaMemset(ticket, 0, 4));
    size_t cub_bytes = 0;
    cub::DeviceReduce::Sum(nullptr, cub_bytes, (const long long *)nullptr, (long long *)nullptr, (int64_t)1 << 30);
    size_t cub_scan_bytes = 0;
    cub::DeviceScan::InclusiveSum(nullptr, cub_scan_bytes, (const int *)nullptr, (int *)nullptr, (int64_t)1 << 30);
    void *cub_tmp;
    CK(cudaMalloc(&cub_tmp, std::max(cub_bytes, cub_scan_bytes) + 1024));

    auto set_smem = [](const void *k, int bytes) {
        CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    };
    set_smem((const void *)bulk_kernel<16384, 8, false>, 16384 * 8);
    set_smem((const void *)bulk_kernel<16384, 4, false>, 16384 * 4);
    set_smem((const void *)bulk_kernel<8192, 6, false>, 8192 * 6);
    set_smem((const void *)bulk_kernel<16384, 6, true>, 16384 * 6);
    set_smem((const void *)bulk_kernel<16384, 3, true>, 16384 * 3);

    printf("device: %d SMs\n", g_sms);
    printf("| variant | n | us | GB/s | vs CUB | note |\n|---|---|---|---|---|---|\n");
    for (int lg = lo; lg <= hi; lg++) {
        uint64_t n = 1ull << lg;
        size_t bytes = n * 4;
        int rot = (int)std::max<size_t>(1, std::min<size_t>(cap / bytes, (size_t)(1u << 30) / bytes + 1));
        uint64_t nv = n / 4;
        auto src = [&](int r) { return (const int4 *)((const char *)pool + (size_t)r * bytes); };
        auto dst = [&](int r) { return (int4 *)((char *)dpool + (size_t)r * bytes); };
        /* reference */
        long long ref = 0;
        {
            unsigned long long *dref;
            CK(cudaMalloc(&dref, 8));
            CK(cudaMemsetAsync(dref, 0, 8, g_s));
            ref_sum<<<1024, 256, 0, g_s>>>((const int *)src(0), n, dref);
            CK(cudaMemcpyAsync(&ref, dref, 8, cudaMemcpyDeviceToHost, g_s));
            CK(cudaStreamSynchronize(g_s));
            CK(cudaFree(dref));
        }
        auto check = [&](const char *name, auto launch) {
            CK(cudaMemsetAsync(res, 0, 8, g_s));
            CK(cudaMemsetAsync(ctr, 0, 4096 * 4, g_s));
            launch(0);
            unsigned long long got;
            CK(cudaMemcpyAsync(&got, res, 8, cudaMemcpyDeviceToHost, g_s));
            CK(cudaStreamSynchronize(g_s));
            if ((long long)got != ref) printf("WRONG %s n=2^%d: %lld vs %lld\n", name, lg, (long long)got, ref);
        };
        double cub_r = time_us([&](int r) {
            size_t tb = cub_bytes;
            cub::DeviceReduce::Sum(cub_tmp, tb, (const int *)src(r), (int *)res, (int64_t)n, g_s);
        }, rot, bytes / 4e3);
        auto row = [&](const char *name, double us, double base, double b, const char *note) {
            printf("| %s | 2^%d | %.2f | %.0f | %.3f | %s |\n", name, lg, us, b / us / 1e3, base / us, note);
            fflush(stdout);
        };
        row("cub_reduce", cub_r, cub_r, bytes, "");
        auto even = [&](auto kern, int U, int per_sm, int minb, const char *name) {
            uint64_t nb = nv / (256ull * U);
            uint64_t g = std::min<uint64_t>((nb + minb - 1) / minb, (uint64_t)per_sm * g_sms);
            if (g < 1) g = 1;
            auto L = [&](int r) { kern<<<(unsigned)g, 256, 0, g_s>>>(src(r), nv, res); };
            check(name, L);
            char note[64];
            snprintf(note, sizeof note, "grid %llu", (unsigned long long)g);
            row(name, time_us(L, rot, bytes / 4e3), cub_r, bytes, note);
        };
        even(even_kernel<8, 1>, 8, 4, 1, "even8_minb1");
        even(even_kernel<8, 1>, 8, 4, 4, "even8_minb4");
        even(even_kernel<4, 1>, 4, 8, 1, "even4x8_minb1");
        even(even_kernel<4, 1>, 4, 8, 4, "even4x8_minb4");
        auto evx = [&](auto kern, int minb, const char *name) {
            uint64_t nb = nv / 2048;
            uint64_t g = std::min<uint64_t>((nb + minb - 1) / minb, (uint64_t)4 * g_sms);
            if (g < 1) g = 1;
            auto L = [&](int r) { kern<<<(unsigned)g, 256, 0, g_s>>>(src(r), nv, res, partials, ticket); };
            check(name, L);
            char note[64];
            snprintf(note, sizeof note, "grid %llu", (unsigned long long)g);
            row(name, time_us(L, rot, bytes / 4e3), cub_r, bytes, note);
        };
        int mb = nv / 2048 >= 512 ? 4 : 1;
        evx(even8x_kernel<true, false>, mb, "even8_tail");
        evx(even8x_kernel<false, true>, mb, "even8_chain");
        evx(even8x_kernel<true, true>, mb, "even8_tail_chain");
        {
            auto L = [&](int r) {
                cudaMemsetAsync(ctr, 0, 4, g_s);
                dyn_kernel<<<4 * g_sms, 256, 0, g_s>>>(src(r), nv, res, ctr);
            };
            check("dyn8", L);
            row("dyn8", time_us(L, rot, bytes / 4e3), cub_r, bytes, "includes a 4-byte memset");
        }
        auto bulk = [&](auto kern, int chunk, int stages, int per_sm, const char *name, bool copy) {
            uint64_t nc = bytes / chunk;
            uint64_t g = std::min<uint64_t>(nc, (uint64_t)per_sm * g_sms);
            if (g < 1) return;
            auto L = [&](int r) { kern<<<(unsigned)g, 256, chunk * stages, g_s>>>(src(r), nv, res, dst(r)); };
            check(name, L);
            double us = time_us(L, rot, bytes / 4e3);
            char note[64];
            snprintf(note, sizeof note, "grid %llu, %d x %d KB", (unsigned long long)g, stages, chunk / 1024);
            row(name, us, copy ? 0 : cub_r, copy ? 2.0 * bytes : bytes, note);
            return;
        };
        if (bytes >= 16384) {
            bulk(bulk_kernel<16384, 8, false>, 16384, 8, 1, "bulk1_8x16", false);
            bulk(bulk_kernel<16384, 4, false>, 16384, 4, 2, "bulk2_4x16", false);
            bulk(bulk_kernel<8192, 6, false>, 8192, 6, 4, "bulk4_6x8", false);
        }
        /* copies: the ceiling of a scan */
        double cpy = time_us([&](int r) {
            CK(cudaMemcpyAsync(dst(r), src(r), bytes, cudaMemcpyDeviceToDevice, g_s));
        }, rot, bytes / 2e3);
        row("memcpy", cpy, 0, 2.0 * bytes, "read+write GB/s");
        double cs = time_us([&](int r) {
            size_t tb = cub_scan_bytes;
            cub::DeviceScan::InclusiveSum(cub_tmp, tb, (const int *)src(r), (int *)dst(r), (int64_t)n, g_s);
        }, rot, bytes / 2e3);
        printf("| cub_scan | 2^%d | %.2f | %.0f | %.3f | vs memcpy |\n", lg, cs, 2.0 * bytes / cs / 1e3, cpy / cs);
        if (n % 8192 == 0) {
            auto L = [&](int r) { tilecopy_kernel<<<(unsigned)(n / 8192), 256, 0, g_s>>>(src(r), dst(r)); };
            double us = time_us(L, rot, bytes / 2e3);
            printf("| tilecopy | 2^%d | %.2f | %.0f | %.3f | vs memcpy |\n", lg, us, 2.0 * bytes / us / 1e3, cpy / us);
        }
        if (bytes >= 16384) {
            for (int per_sm = 1; per_sm <= 2; per_sm++) {
                uint64_t nc = bytes / 16384;
                uint64_t g = std::min<uint64_t>(nc, (uint64_t)per_sm * g_sms);
                int st = per_sm == 1 ? 6 : 3;
                auto L = [&](int r) {
                    if (st == 6) bulk_kernel<16384, 6, true><<<(unsigned)g, 256, 16384 * 6, g_s>>>(src(r), nv, res, dst(r));
                    else bulk_kernel<16384, 3, true><<<(unsigned)g, 256, 16384 * 3, g_s>>>(src(r), nv, res, dst(r));
                };
                check("bulkcopy", L);
                double us = time_us(L, rot, bytes / 2e3);
                printf("| bulkcopy%d_%dx16 | 2^%d | %.2f | %.0f | %.3f | vs memcpy |\n", per_sm, st, lg, us,
                       2.0 * bytes / us / 1e3, cpy / us);
            }
        }
        fflush(stdout);
    }
    CK(cudaDeviceSynchronize());
    printf("probe done\n");
    return 0;
}
