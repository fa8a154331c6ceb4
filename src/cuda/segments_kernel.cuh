/* The batched (segmented) reduce: one block per segment, many segments in one launch, like
 * CUB's DeviceSegmentedReduce. Each segment is reduced exactly as the one-launch reduce
 * (reduce_kernel.cuh) reduces an input whose grid is one block: the same Worker (the exact
 * sums' fast paths, slow batches and spills), the same warp and block merges, the same results
 * code (exact_result, write_results/finalize), so the results are those of tally_reduce over
 * the segment alone, bit for bit. The one exception is the float product, whose order is not
 * fixed across launch shapes: here it is the one-block order, which tally_reduce also takes
 * when it runs one block (inputs up to two batches of 2048 vectors). Segments the caller leaves
 * to the device-wide reduce (p.long_min or longer) are skipped.
 *
 * Shared memory is reused from one segment to the next, so each segment starts with a barrier
 * (the previous segment's last readers of sacc and wstate, thread 0 rounding and warp 0
 * merging, are done) and, for the exact sums, the superaccumulator and the threads' third terms
 * cleared and a barrier after that. The segment's bounds are the same in every thread, so every
 * barrier is reached by the whole block or skipped by the whole block. */
#ifndef TALLY_CUDA_SEGMENTS_KERNEL_CUH
#define TALLY_CUDA_SEGMENTS_KERNEL_CUH

#include "cuda/launch.cuh"
#include "cuda/reduce_kernel.cuh"
#include "cuda/segments.h"

namespace tcu {

template <typename T, unsigned M, bool OMIT>
__global__ void __launch_bounds__(kThreads, (reduce_min_blocks<T, M, OMIT, false>()))
segments_kernel(const __grid_constant__ tcu_seg_params p)
{
    using W = Worker<T, M, OMIT>;
    using S = State<T, M, OMIT>;
    constexpr int VEC = Traits<T>::vec;
    constexpr bool EXACT = W::EXACT;
    constexpr int U = W::U;
    constexpr unsigned long long kBatch = (unsigned long long)kThreads * U;
    /* the block's superaccumulator, then the threads' wide_tail terms */
    __shared__ unsigned long long sacc[EXACT ? TALLY_EXACT_CHUNKS + kThreads : 1];
    __shared__ S wstate[kWarps];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const T *const base = (const T *)p.r.data;

    for (unsigned long long seg = blockIdx.x; seg < p.nseg; seg += gridDim.x) {
        unsigned long long start, n;
        if (p.offsets) {
            const unsigned long long o0 = p.offsets[seg], o1 = p.offsets[seg + 1];
            start = o0 - p.first;
            n = o1 - o0;
        } else {
            start = seg * p.row_stride;
            n = p.row_len;
        }
        if (n >= p.long_min) continue; /* the same in every thread: no barrier is split */
        __syncthreads(); /* the previous segment's reads of sacc and wstate are done */
        if constexpr (EXACT) {
            for (int c = tid; c < TALLY_EXACT_CHUNKS + kThreads; c += kThreads) sacc[c] = 0;
            __syncthreads();
        }
        const T *data = base + start;
        /* elements before the first 16-byte boundary, whole vectors, elements after them */
        unsigned long long head = ((16 - (uintptr_t)data % 16) % 16) / sizeof(T);
        if (head > n) head = n;
        const unsigned long long body_vec = (n - head) / VEC;
        const unsigned long long tail = n - head - body_vec * VEC;
        W w;
        double mean = 0.0;
        if constexpr (W::SQ) mean = p.r.aux[seg].mean;
        w.init(mean);
        if ((unsigned long long)tid < head) w.add_scalar(data[tid], (unsigned long long)tid, sacc);
        if ((unsigned long long)tid < tail) {
            const unsigned long long i = head + body_vec * VEC + tid;
            w.add_scalar(data[i], i, sacc);
        }
        const Vec<T> *vdata = (const Vec<T> *)(data + head);
        const unsigned long long ve = body_vec;
        unsigned long long v = tid;
        /* whole batches without bounds checks, then the last, partial one (as reduce_kernel) */
        for (; v + (unsigned long long)(U - 1) * kThreads < ve; v += kBatch) {
            Vec<T> x[U];
            bool ok[U];
            unsigned long long idx0[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                x[u] = load_vec(vdata + v + (unsigned long long)u * kThreads);
                ok[u] = true;
                idx0[u] = head + (v + (unsigned long long)u * kThreads) * VEC;
            }
            w.template add_batch<false>(x, ok, idx0, sacc, vdata, v, ve, -1); /* no bins (reduce_worker.cuh) */
        }
        if (v < ve) {
            Vec<T> x[U];
            bool ok[U];
            unsigned long long idx0[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const unsigned long long vi = v + (unsigned long long)u * kThreads;
                ok[u] = vi < ve;
                idx0[u] = head + vi * VEC;
                if (ok[u]) x[u] = load_vec(vdata + vi);
                else memset(&x[u], 0, sizeof x[u]);
            }
            w.template add_batch<false>(x, ok, idx0, sacc, vdata, v, ve, -1); /* no bins (reduce_worker.cuh) */
        }
        w.flush(sacc, -1);

        /* warp, then block (warp 0 merges the warps' states; lane 0 ends with the block's) */
        S s = w.s;
        warp_merge<32>(s, sacc);
        if (lane == 0) wstate[warp] = s;
        __syncthreads();
        if (warp == 0) {
            S t;
            if (lane < kWarps) t = wstate[lane];
            else t.init();
            warp_merge<kWarps>(t, sacc);
            s = t;
        }
        bool spilled = false;
        if constexpr (EXACT) spilled = block_spilled(sacc); /* every thread: two barriers */
        if (tid == 0) {
            tcu_reduce_params q = p.r;
            q.n = n;
            q.out = p.r.out + seg * (unsigned long long)p.r.nops;
            q.aux = p.r.aux ? p.r.aux + seg : nullptr;
            double xr = 0.0;
            if constexpr (EXACT) xr = exact_result(s, q, sacc, spilled);
            write_results(q, s, xr);
        }
        (void)spilled;
    }
}

template <typename T, unsigned M, bool OMIT>
cudaError_t launch_segments_t(const tcu_seg_params *p, const tcu_device *dev, cudaStream_t stream)
{
    (void)dev;
    const unsigned grid = p->nseg < TCU_SEG_MAX_GRID ? (unsigned)p->nseg : TCU_SEG_MAX_GRID;
    if (grid == 0) return cudaSuccess;
    return launch_kernel(segments_kernel<T, M, OMIT>, grid, 0, stream, false, *p);
}

/* The kernel for a feature mask (one of the TCU_MASK_*; anything else runs the ALL kernel). */
template <typename T, bool OMIT>
cudaError_t launch_segments_mask(unsigned mask, const tcu_seg_params *p, const tcu_device *d, cudaStream_t s)
{
    switch (mask) {
    case TCU_MASK_SUM: return launch_segments_t<T, TCU_MASK_SUM, OMIT>(p, d, s);
    case TCU_MASK_MIN: return launch_segments_t<T, TCU_MASK_MIN, OMIT>(p, d, s);
    case TCU_MASK_MAX: return launch_segments_t<T, TCU_MASK_MAX, OMIT>(p, d, s);
    case TCU_MASK_SMM: return launch_segments_t<T, TCU_MASK_SMM, OMIT>(p, d, s);
    case TCU_MASK_ARGMIN: return launch_segments_t<T, TCU_MASK_ARGMIN, OMIT>(p, d, s);
    case TCU_MASK_ARGMAX: return launch_segments_t<T, TCU_MASK_ARGMAX, OMIT>(p, d, s);
    case TCU_MASK_SQDEV: return launch_segments_t<T, TCU_MASK_SQDEV, OMIT>(p, d, s);
    default: return launch_segments_t<T, TCU_MASK_ALL, OMIT>(p, d, s);
    }
}

template <typename T>
cudaError_t launch_segments_type(unsigned mask, int omit_nan, const tcu_seg_params *p, const tcu_device *d,
                                 cudaStream_t s)
{
    if constexpr (Traits<T>::is_float) {
        if (omit_nan) return launch_segments_mask<T, true>(mask, p, d, s);
    }
    return launch_segments_mask<T, false>(mask, p, d, s);
}

} // namespace tcu

/* The segmented launcher of one type, tcu_launch_segments_<name> (segments.h): what each
 * generated translation unit (segments_type.cu.in) defines. */
#define TCU_DEFINE_SEG_LAUNCHER(name, C)                                                         \
    cudaError_t tcu_launch_segments_##name(unsigned mask, int omit_nan, const tcu_seg_params *p, \
                                           const tcu_device *d, cudaStream_t s)                  \
    {                                                                                            \
        return tcu::launch_segments_type<C>(mask, omit_nan, p, d, s);                            \
    }

#endif
