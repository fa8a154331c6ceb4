/* The speculative tier of the correctly rounded f32/f64 sum (and the mean, which divides it):
 * one memory-bound pass that keeps per thread two compensated triples (s, c, D) in registers
 * (spec_triple.h: the rules and the invariant of core/exact_sum.h's "Speculative compensated
 * sums"), merges them thread -> warp -> block by the merge rule, and lets the last block (an
 * atomic ticket, as the reduce kernel's) merge the blocks' triples and decide: when the bound
 * decides the rounding it writes the results and sets the skip flag that makes the exact
 * reduce kernel, launched right after it on the same stream, return at once; otherwise it
 * clears the flag and that kernel runs as it always does. One stream, no host round trip, so
 * the asynchronous calls and CUDA graphs keep working, and the answer is the exact sum rounded
 * once whichever kernel gives it.
 *
 * Whether the pass goes first is the host's choice (cuda_backend.cu, spec_mode and spec_plan):
 * by default (SPEC 3) per context and float type, from what the last sum of that type saw,
 * through a word of mapped host memory (tcu_reduce_params.hint): the exact kernel alone after
 * narrow data (its fast path held in every block; it then runs at the plain sum's speed), the
 * pass first otherwise, with the exact kernel alone now and then as a probe while the pass keeps
 * answering. This kernel writes TCU_HINT_SPEC there when it answered (and the word is asked
 * for); the exact kernel writes narrow or wide when it runs. A stale word costs speed only.
 *
 * Why the kernel keeps the invariant: every element goes through tcu_spec_add exactly once (the
 * head elements in block 0, the 16-byte vectors by a loop that visits each index once, grid-
 * stride or in even contiguous shares (see the kernel), or through the shared-memory ring
 * (spec_ring_kernel, from 32 MiB), the tail in the last block), widened
 * exactly from f32; every triple is merged exactly once into another (the two of a thread, then the shuffle tree, the warps' triples in shared
 * memory, the blocks' triples in the last block), and a thread with no elements merges a
 * (0, 0, 0) triple, which is the state of an empty lane. The adds are __dadd_rn/__dsub_rn (no
 * FMA contraction: the library is built with -fmad=false as well), doubles are never flushed to
 * zero on the GPU, and E is rounded up (spec_triple.h). */
#ifndef TALLY_CUDA_SPEC_SUM_CUH
#define TALLY_CUDA_SPEC_SUM_CUH

#include "cuda/cuda_internal.h"
#include "cuda/launch.cuh"
#include "cuda/sm90.cuh"
#include "cuda/spec_triple.h"

namespace tcu {

/* Blocks per SM the kernel is compiled for, by the 16-byte loads a thread has in flight (U)
 * and its triples (NT, 1 or 2); ptxas -v (sm_90), no spills in any: U = 4 with two triples, the
 * default, 6 x 256 threads within 40 registers (96 KB per SM in flight). The tuning build's
 * variants (TALLY_CUDA_SPEC_UNROLL, spec_sum.cu): U = 2, 8 blocks within 32 registers (64 KB);
 * U = 4 with one triple, 8 blocks within 32 (128 KB); U = 8, 5 blocks within 48 registers (two
 * triples, 160 KB) or 6 within 40 (one triple, as Vulkan's spec.comp, 192 KB). */
template <int U, int NT> constexpr int spec_min_blocks() { return U <= 2 ? 8 : U == 4 ? (NT == 1 ? 8 : 6) : NT == 1 ? 6 : 5; }

__device__ __forceinline__ void spec_shfl_merge(tcu_spec_triple &t, int off)
{
    tcu_spec_triple o;
    o.s = __shfl_down_sync(0xffffffffu, t.s, off);
    o.c = __shfl_down_sync(0xffffffffu, t.c, off);
    o.D = __shfl_down_sync(0xffffffffu, t.D, off);
    tcu_spec_merge(&t, &o);
}

/* The block's triples merged into thread 0's (every thread calls it; sh: kWarps triples). */
__device__ __forceinline__ tcu_spec_triple spec_block_merge(tcu_spec_triple t, tcu_spec_triple *sh)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) spec_shfl_merge(t, off);
    if (lane == 0) sh[warp] = t;
    __syncthreads();
    if (warp == 0) {
        t = lane < kWarps ? sh[lane] : tcu_spec_triple{0.0, 0.0, 0.0};
#pragma unroll
        for (int off = kWarps / 2; off > 0; off >>= 1) spec_shfl_merge(t, off);
    }
    return t;
}

/* One 16-byte vector into the thread's triples: alternately into a and b (two dependent chains,
 * NT = 2), or all into a (NT = 1: fewer registers, more blocks or loads in flight). */
template <typename T, int NT>
__device__ __forceinline__ void spec_add_vec(tcu_spec_triple &a, tcu_spec_triple &b, const Vec<T> &x)
{
#pragma unroll
    for (int j = 0; j < Traits<T>::vec; j += 2) {
        tcu_spec_add(&a, (double)x.v[j]);
        tcu_spec_add(NT == 2 ? &b : &a, (double)x.v[j + 1]);
    }
}

/* The end of both kernels: the thread's two triples merged, the block's into thread 0's, its
 * triple written and the ticket taken; the last block merges every block's triple and decides
 * (writes the results and the skip flag, or clears the flag). sh: kWarps triples, am_last: a
 * shared word. */
__device__ __forceinline__ void spec_finish(tcu_spec_triple a, tcu_spec_triple b, const tcu_reduce_params &p,
                                            tcu_spec_triple *sh, bool &am_last)
{
    const int tid = threadIdx.x;
    const unsigned bid = blockIdx.x, grid = gridDim.x;
    tcu_spec_merge(&a, &b);
    a = spec_block_merge(a, sh);
    if (tid == 0) {
        double *out = (double *)p.partials + 3 * (size_t)bid;
        __stcg(out, a.s);
        __stcg(out + 1, a.c);
        __stcg(out + 2, a.D);
        unsigned t;
        /* release: the triple before the ticket; acquire: the last block sees every triple */
        asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(t) : "l"(p.spec) : "memory");
        am_last = t == grid - 1;
    }
    __syncthreads();
    if (!am_last) return;
    tcu_spec_triple m = {0.0, 0.0, 0.0};
    for (unsigned k = (unsigned)tid; k < grid; k += kThreads) {
        const double *in = (const double *)p.partials + 3 * (size_t)k;
        const tcu_spec_triple x = {__ldcg(in), __ldcg(in + 1), __ldcg(in + 2)};
        tcu_spec_merge(&m, &x);
    }
    __syncthreads(); /* sh is reused */
    m = spec_block_merge(m, sh);
    if (tid == 0) {
        double r = 0.0;
        const int ok = tcu_spec_decide(&m, &r);
        if (ok) {
            for (int k = 0; k < p.nops; k++) {
                tally_result res;
                res.op = (tally_op)p.ops[k];
                res.type = TALLY_F64;
                res.status = TALLY_OK;
                res.value.f64 = res.op == TALLY_MEAN ? __ddiv_rn(r, (double)p.n) : r;
                res.index = 0;
                p.out[k] = res;
            }
        }
        p.spec[1] = ok ? 1u : 0u;
        p.spec[0] = 0u;
        /* the adaptive setting's word (cuda_internal.h): answered here; when declined, the
         * exact kernel after this one writes what it saw */
        if (p.hint != nullptr && ok) *(volatile unsigned int *)p.hint = TCU_HINT_SPEC;
    }
}

/* p: the reduce's parameters (data, n, head/body_vec/tail, the results' ops and out); p.partials
 * takes one triple per block, p.spec[0] is the ticket (0 between launches, reset by the last
 * block), p.spec[1] the skip flag it writes (1: the results are written). */
template <typename T, int U, int NT, bool C>
__global__ void __launch_bounds__(kThreads, (spec_min_blocks<U, NT>())) spec_sum_kernel(const __grid_constant__ tcu_reduce_params p)
{
    __shared__ tcu_spec_triple sh[kWarps];
    __shared__ bool am_last;
    const int tid = threadIdx.x;
    const unsigned bid = blockIdx.x, grid = gridDim.x;
    const T *data = (const T *)p.data;
    const Vec<T> *vec = (const Vec<T> *)(data + p.head);
    const unsigned long long nv = p.body_vec, stride = (unsigned long long)grid * kThreads;
    tcu_spec_triple a = {0.0, 0.0, 0.0}, b = {0.0, 0.0, 0.0};
    pdl_wait();
    /* Thread tid's vectors: i, i + d, ..., i + (U - 1) d, then i + U d, ... below end. Grid-stride
     * (C false): i = bid * kThreads + tid, d = the grid's threads, end = nv, so every vector is
     * one thread's exactly once. Contiguous (C true, a tuning variant): block bid takes the
     * batches [b0, b1) of kThreads * U vectors (an even share, as the reduce kernel's), d =
     * kThreads, end = the share's end; the shares tile [0, nv), and within one the same
     * argument holds. Either way, once the loop stops (i + (U - 1) d >= end) at most U - 1 of
     * the thread's vectors are left, all at i + u d, and none after them. */
    unsigned long long i, d, end;
    if constexpr (C) {
        constexpr unsigned long long kB = (unsigned long long)kThreads * U;
        const unsigned long long nb = (nv + kB - 1) / kB;
        const unsigned long long b0 = nb * bid / grid, b1 = nb * (bid + 1) / grid;
        i = b0 * kB + (unsigned)tid;
        d = kThreads;
        end = b1 * kB < nv ? b1 * kB : nv;
    } else {
        i = (unsigned long long)bid * kThreads + (unsigned)tid;
        d = stride;
        end = nv;
    }
    /* U vectors a turn, all loaded before any is summed; then the last few */
    for (; i + (U - 1) * d < end; i += U * d) {
        Vec<T> x[U];
#pragma unroll
        for (int u = 0; u < U; u++) x[u] = load_vec(vec + i + u * d);
#pragma unroll
        for (int u = 0; u < U; u++) spec_add_vec<T, NT>(a, b, x[u]);
    }
#pragma unroll
    for (int u = 0; u < U - 1; u++) /* at most U - 1 are left */
        if (i + u * d < end) spec_add_vec<T, NT>(a, b, load_vec(vec + i + u * d));
    if (bid == 0 && tid < (int)p.head) tcu_spec_add(&a, (double)data[tid]);
    if (bid == grid - 1 && tid < (int)p.tail) tcu_spec_add(&b, (double)data[p.head + nv * Traits<T>::vec + tid]);
    pdl_trigger();
    spec_finish(a, b, p, sh, am_last);
}

/* The ring variant (large inputs, sm_90): the batches reach shared memory by bulk copies
 * through a ring of `stages` stages of one batch each (kRingU 16-byte vectors per thread, 32 KB),
 * issued by thread 0 ahead of use, as the reduce kernel's ring (reduce_kernel.cuh): the bytes in
 * flight no longer depend on the registers. Why: on the H200 at 2^28 f64, the exact kernel took
 * 527 us with register loads and 467 through its ring (bench_cuda's "ring=0 spec=0" rows), and
 * this pass with register loads 518-527 us against the plain sum's 460-477; through this ring
 * 463 (docs/performance.md, "CUDA: the speculative pass through a ring").
 * Why every element is added once: block bid takes the batches [b0, b1) of nb = ceil(nv / kB)
 * (even shares that tile [0, nv)); its whole batches come through the ring in order, each
 * vector u * kThreads + tid of a stage to thread tid (every vector of the batch exactly once);
 * only the last batch of all can be partial, and its vectors below nv are loaded directly, each
 * by the thread whose place it is. Head and tail as in spec_sum_kernel. A stage is refilled only
 * after the barrier that follows every thread's reads of it (the x[] copies in registers), and
 * the proxy fence in bulk_load orders those reads before the copy's writes. */
constexpr int kRingU = 8;
constexpr int kSpecRingStagesMost = 6;
template <typename T, int NT, int MINB>
__global__ void __launch_bounds__(kThreads, MINB) spec_ring_kernel(const __grid_constant__ tcu_reduce_params p, int stages)
{
    __shared__ tcu_spec_triple sh[kWarps];
    __shared__ bool am_last;
    __shared__ uint64_t full[kSpecRingStagesMost];
    extern __shared__ __align__(128) unsigned char ring_smem[];
    const int tid = threadIdx.x;
    const unsigned bid = blockIdx.x, grid = gridDim.x;
    const T *data = (const T *)p.data;
    const Vec<T> *vec = (const Vec<T> *)(data + p.head);
    const unsigned long long nv = p.body_vec;
    constexpr unsigned long long kB = (unsigned long long)kThreads * kRingU;
    constexpr unsigned kBytes = (unsigned)(kB * sizeof(Vec<T>));
    if (tid == 0)
        for (int k = 0; k < stages; k++) mbar_init(&full[k], 1);
    __syncthreads();
    tcu_spec_triple a = {0.0, 0.0, 0.0}, b = {0.0, 0.0, 0.0};
    pdl_wait();
    const unsigned long long nb = (nv + kB - 1) / kB;
    const unsigned long long b0 = nb * bid / grid, b1 = nb * (bid + 1) / grid;
    const unsigned long long vb = b0 * kB, ve = b1 * kB < nv ? b1 * kB : nv;
    const unsigned long long whole = (ve - vb) / kB;
    const Vec<T> *ring = (const Vec<T> *)ring_smem;
    const uint64_t pol = l2_evict_first_policy(); /* the input is read once */
    if (tid == 0)
        for (int k = 0; k < stages && (unsigned long long)k < whole; k++)
            bulk_load_hint((void *)(ring + k * kB), vec + vb + k * kB, kBytes, &full[k], pol);
    int k = 0;
    unsigned parity = 0;
    for (unsigned long long i = 0; i < whole; i++) {
        mbar_wait(&full[k], parity);
        const Vec<T> *stage = ring + k * kB;
        Vec<T> x[kRingU];
#pragma unroll
        for (int u = 0; u < kRingU; u++) x[u] = stage[u * kThreads + tid];
        __syncthreads(); /* stage k read by every thread: it may be refilled */
        if (tid == 0 && i + stages < whole)
            bulk_load_hint((void *)stage, vec + vb + (i + stages) * kB, kBytes, &full[k], pol);
        if (++k == stages) {
            k = 0;
            parity ^= 1u;
        }
#pragma unroll
        for (int u = 0; u < kRingU; u++) spec_add_vec<T, NT>(a, b, x[u]);
    }
    /* the last, partial batch (the last block's share only) */
    const unsigned long long v = vb + whole * kB + (unsigned)tid;
#pragma unroll
    for (int u = 0; u < kRingU; u++)
        if (v + (unsigned long long)u * kThreads < ve) spec_add_vec<T, NT>(a, b, load_vec(vec + v + (unsigned long long)u * kThreads));
    if (bid == 0 && tid < (int)p.head) tcu_spec_add(&a, (double)data[tid]);
    if (bid == grid - 1 && tid < (int)p.tail) tcu_spec_add(&b, (double)data[p.head + nv * Traits<T>::vec + tid]);
    pdl_trigger();
    spec_finish(a, b, p, sh, am_last);
}

/* The ring's launch: per_sm blocks per SM (at most what fits), `stages` stages each; false when
 * the kernel was not built for this device's sm_90 (the caller then takes the register loads). */
template <typename T>
cudaError_t launch_spec_ring_t(const tcu_reduce_params *p, const tcu_device *dev, cudaStream_t stream, int per_sm,
                               int stages, bool *launched)
{
    /* two blocks per SM need the registers of two (128 a thread) */
    auto *const kernel = per_sm >= 2 ? spec_ring_kernel<T, 2, 2> : spec_ring_kernel<T, 2, 1>;
    static DeviceCache sm90_cache[2], smem_cache[2], fit[2][kSpecRingStagesMost + 1];
    const int kv = per_sm >= 2 ? 1 : 0;
    *launched = false;
    if (!built_for_sm90_on(sm90_cache[kv], dev->ordinal, kernel)) return cudaSuccess;
    if (stages < 1) stages = 1;
    if (stages > kSpecRingStagesMost) stages = kSpecRingStagesMost;
    const size_t stage_bytes = (size_t)kThreads * kRingU * sizeof(Vec<T>);
    const size_t smem = stage_bytes * (size_t)stages;
    int done = 0;
    cudaError_t err = smem_cache[kv].get(dev->ordinal, &done, [&](int *out) {
        *out = 1;
        return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)(stage_bytes * kSpecRingStagesMost));
    });
    if (err != cudaSuccess) return err;
    int f = 0;
    err = fit[kv][stages].get(dev->ordinal, &f, [&](int *out) {
        int b = 0;
        cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, kThreads, smem);
        *out = b > 0 ? b : 1;
        return e;
    });
    if (err != cudaSuccess) return err;
    if (per_sm > f) per_sm = f;
    const unsigned long long nb = (p->body_vec + (unsigned long long)kThreads * kRingU - 1) /
                                  ((unsigned long long)kThreads * kRingU);
    unsigned long long want = (unsigned long long)per_sm * (unsigned long long)dev->sm_count;
    if (want > TCU_MAX_BLOCKS) want = TCU_MAX_BLOCKS;
    if (want > nb) want = nb;
    if (want < 1) want = 1;
    *launched = true;
    return launch_kernel(kernel, (unsigned)want, smem, stream, p->pdl != 0, *p, stages);
}

/* Enough blocks to fill the GPU once (the grid-stride loop takes the rest), fewer for small
 * inputs (at least two vectors per thread). */
template <typename T, int U, int NT, bool C>
cudaError_t launch_spec_sum_t(const tcu_reduce_params *p, const tcu_device *dev, cudaStream_t stream)
{
    auto *const kernel = spec_sum_kernel<T, U, NT, C>;
    static DeviceCache sm90_cache, fit;
    int per_sm = 0;
    cudaError_t err = fit.get(dev->ordinal, &per_sm, [&](int *out) {
        int b = 0;
        cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, kThreads, 0);
        *out = b > 0 ? b : 1;
        return e;
    });
    if (err != cudaSuccess) return err;
    unsigned long long most = (unsigned long long)per_sm * (unsigned long long)dev->sm_count;
    if (most > TCU_MAX_BLOCKS) most = TCU_MAX_BLOCKS;
    unsigned long long want = (p->body_vec + 2ull * kThreads - 1) / (2ull * kThreads);
    if (want < 1) want = 1;
    const unsigned grid = (unsigned)(want < most ? want : most);
    const bool pdl = p->pdl && built_for_sm90_on(sm90_cache, dev->ordinal, kernel);
    return launch_kernel(kernel, grid, 0, stream, pdl, *p);
}

} // namespace tcu

#endif
