/* The batched (segmented) reduce: one block per segment, many segments in one launch, like
 * CUB's DeviceSegmentedReduce. Each segment is reduced exactly as the one-launch reduce
 * (reduce_kernel.cuh) reduces an input whose grid is one block: the same Worker (the exact
 * sums' fast paths, slow batches and spills), the same warp and block merges, the same results
 * code (exact_result, write_results/finalize), so the results are those of tally_reduce over
 * the segment alone, bit for bit. The one exception is the float product, whose order is not
 * fixed across launch shapes: here it is the one-block order, which tally_reduce also takes
 * when it runs one block (inputs up to two batches of 2048 vectors). Segments the caller leaves
 * to the device-wide reduce (p.long_min or longer) and the short ones (below p.short_max: see
 * segments_short_kernel) are skipped.
 *
 * Shared memory is reused from one segment to the next, so each segment starts with a barrier
 * (the previous segment's last readers of sacc and wstate, thread 0 rounding and warp 0
 * merging, are done) and, for the exact sums, the superaccumulator and the threads' third terms
 * cleared and a barrier after that. The segment's bounds are the same in every thread, so every
 * barrier is reached by the whole block or skipped by the whole block. */
#ifndef TALLY_CUDA_SEGMENTS_KERNEL_CUH
#define TALLY_CUDA_SEGMENTS_KERNEL_CUH

#include "cuda/launch.cuh"
#include "cuda/mask_dispatch.cuh"
#include "cuda/reduce_kernel.cuh"
#include "cuda/segments.h"

namespace tcu {

/* Segment seg's first element (relative to p.r.data) and length: from the offsets, or a row. */
__device__ __forceinline__ void seg_bounds(const tcu_seg_params &p, unsigned long long seg,
                                           unsigned long long &start, unsigned long long &n)
{
    if (p.offsets) {
        const unsigned long long o0 = p.offsets[seg], o1 = p.offsets[seg + 1];
        start = o0 - p.first;
        n = o1 - o0;
    } else {
        start = seg * p.row_stride;
        n = p.row_len;
    }
}

/* Segment seg's results (n elements, folded state s; the exact sums' superaccumulator sacc and
 * whether anything spilled there) into its slots of out and aux. */
template <bool EXACT, typename T, unsigned M, bool OMIT>
__device__ __forceinline__ void seg_write(const tcu_seg_params &p, unsigned long long seg, unsigned long long n,
                                          const State<T, M, OMIT> &s, unsigned long long *sacc, bool spilled)
{
    tcu_reduce_params q = p.r;
    q.n = n;
    q.out = p.r.out + seg * (unsigned long long)p.r.nops;
    q.aux = p.r.aux ? p.r.aux + seg : nullptr;
    double xr = 0.0;
    if constexpr (EXACT) xr = exact_result(s, q, sacc, spilled);
    write_results(q, s, xr);
}

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
        seg_bounds(p, seg, start, n);
        /* the short kernel's and the caller's segments; the same in every thread: no barrier
         * is split */
        if (n >= p.long_min || n < p.short_max) continue;
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
        if (tid == 0) seg_write<EXACT>(p, seg, n, s, sacc, spilled);
        (void)spilled;
    }
}

/* ---- the short segments: a group of lanes per segment -------------------------------------------
 * Segments shorter than p.short_max go to segments_short_kernel: one-warp blocks, each warp
 * reducing 32 / p.lanes segments at a time, p.lanes lanes (4, 8, 16 or 32) per segment, with
 * no barrier and no block-wide step per segment (the block kernel's per-segment barriers,
 * superaccumulator clears and thread-0 rounding cost more than reading a short segment).
 * A lane adds its elements (lane, lane + lanes, ...) one at a time with Worker::add_scalar,
 * the careful path the block kernel takes for its head and tail elements, and flushes as the
 * block kernel does; the group's states are merged by shuffles (warp_merge for 32 lanes; for
 * fewer, the same tree with every member, merge_state's exact xcombine included); the group's
 * first lane rounds and writes with exact_result and write_results. Every result but the float
 * product depends only on the elements, not on the order they are combined in: integer sums
 * and counts are exact, min/max/argmin/argmax take the least index among equal keys, the bits
 * commute, the integer product's overflow flag is set exactly when the product of the
 * magnitudes reaches 2^64 (partial products only grow), and the exact float sums are the exact
 * sum rounded once, whatever expansion holds it (exact_result: fl(xh + xl), or the
 * superaccumulator). So these results are those of the block kernel, bit for bit. The float
 * product's bits do depend on the order: the host sends no segment here when one is asked for
 * (segments.cu), so it keeps the block kernel's (tally_reduce's one-block) order.
 *
 * Each group has its own superaccumulator for spills (rare), laid out as the block kernel's
 * (TALLY_EXACT_CHUNKS digits, then the wide_tail terms, which reduce_worker.cuh indexes by
 * threadIdx.x: so kShortThreads of them per group). It is zeroed at the start and again only
 * after a segment that spilled into it. */
constexpr int kShortThreads = 32; /* one warp per block */
constexpr int kShortMinLanes = 4; /* the fewest lanes per segment */
constexpr int kShortGroups = kShortThreads / kShortMinLanes;
/* blocks per SM the kernel is compiled for: at most 128 registers a lane, so that 16 warps
 * (half the 32 blocks an SM holds) fit */
constexpr int kShortMinBlocks = 16;

/* The states of the group's lanes merged into its first lane (lanes: a power of two below 32,
 * the same in the whole warp; every lane of the warp calls it). As warp_merge's tree, on the
 * lanes of each group: the lanes whose results are dropped at a level (glane >= off) must not
 * spill, as there. */
template <typename T, unsigned M, bool OMIT>
__device__ __forceinline__ void group_merge(State<T, M, OMIT> &s, unsigned long long *sacc, int lanes, int glane)
{
    for (int off = kShortThreads / 2; off > 0; off >>= 1) {
        if (off >= lanes) continue; /* the same in every lane */
        State<T, M, OMIT> o = shfl_down_state<true>(s, off);
        merge_state<true>(s, o, glane < off ? sacc : nullptr);
    }
}

template <typename T, unsigned M, bool OMIT>
__global__ void __launch_bounds__(kShortThreads, kShortMinBlocks) segments_short_kernel(const __grid_constant__ tcu_seg_params p)
{
    using W = Worker<T, M, OMIT>;
    using S = State<T, M, OMIT>;
    constexpr bool EXACT = W::EXACT;
    constexpr int kSacc = TALLY_EXACT_CHUNKS + kShortThreads; /* a group's digits, then tails */
    constexpr int kUnroll = 8; /* loads in flight per lane */
    __shared__ unsigned long long sacc_all[EXACT ? kShortGroups * kSacc : 1];
    const int lane = threadIdx.x;
    const int lanes = p.lanes;
    const int glane = lane & (lanes - 1), group = lane / lanes, ngroups = kShortThreads / lanes;
    unsigned long long *const sacc = EXACT ? sacc_all + group * kSacc : nullptr;
    if constexpr (EXACT) {
        for (int c = lane; c < kShortGroups * kSacc; c += kShortThreads) sacc_all[c] = 0;
        __syncwarp();
    }
    const T *const base = (const T *)p.r.data;
    const unsigned long long step = (unsigned long long)gridDim.x * ngroups;
    for (unsigned long long seg0 = (unsigned long long)blockIdx.x * ngroups; seg0 < p.nseg; seg0 += step) {
        const unsigned long long seg = seg0 + group;
        unsigned long long start = 0, n = 0;
        bool mine = seg < p.nseg;
        if (mine) {
            seg_bounds(p, seg, start, n);
            mine = n < p.short_max;
        }
        /* the whole warp goes on (its shuffles need every lane): groups without a segment of
         * theirs add nothing and write nothing */
        if (!__any_sync(0xffffffffu, mine)) continue;
        if (!mine) n = 0;
        const T *data = base + start;
        W w;
        double mean = 0.0;
        if constexpr (W::SQ) {
            if (mine) mean = p.r.aux[seg].mean;
        }
        w.init(mean);
        for (unsigned long long i0 = glane; i0 < n; i0 += (unsigned long long)lanes * kUnroll) {
            T x[kUnroll] = {};
#pragma unroll
            for (int k = 0; k < kUnroll; k++) {
                const unsigned long long i = i0 + (unsigned long long)k * lanes;
                if (i < n) x[k] = data[i];
            }
#pragma unroll
            for (int k = 0; k < kUnroll; k++) {
                const unsigned long long i = i0 + (unsigned long long)k * lanes;
                if (i < n) w.add_scalar(x[k], i, sacc);
            }
        }
        w.flush(sacc, -1);
        S s = w.s;
        if (lanes == kShortThreads) warp_merge<kShortThreads>(s, sacc);
        else group_merge(s, sacc, lanes, glane);
        bool spilled = false;
        if constexpr (EXACT) {
            __syncwarp(); /* the group's spills are visible */
            bool nz = false;
            for (int c = glane; c < TALLY_EXACT_CHUNKS; c += lanes) nz |= sacc[c] != 0;
            const unsigned gmask = (lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u) << (group * lanes);
            spilled = (__ballot_sync(0xffffffffu, nz) & gmask) != 0;
        }
        if (mine && glane == 0) seg_write<EXACT>(p, seg, n, s, sacc, spilled);
        if constexpr (EXACT) {
            *wide_tail(sacc) = 0.0; /* the lane's own third term (flush has taken it) */
            __syncwarp();           /* the rounding's reads of the digits are done */
            if (spilled)
                for (int c = glane; c < TALLY_EXACT_CHUNKS; c += lanes) sacc[c] = 0;
            __syncwarp();
        }
    }
}

template <typename T, unsigned M, bool OMIT>
cudaError_t launch_segments_t(const tcu_seg_params *p, const tcu_device *dev, cudaStream_t stream)
{
    (void)dev;
    if (p->nseg == 0) return cudaSuccess;
    if (p->lanes) { /* the short segments (segments_short_kernel) */
        const unsigned long long per_block = (unsigned long long)(kShortThreads / p->lanes);
        const unsigned long long want = (p->nseg + per_block - 1) / per_block;
        const unsigned grid = want < TCU_SEG_MAX_GRID ? (unsigned)want : TCU_SEG_MAX_GRID;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(grid);
        cfg.blockDim = dim3(kShortThreads);
        cfg.stream = stream;
        return cudaLaunchKernelEx(&cfg, segments_short_kernel<T, M, OMIT>, *p);
    }
    const unsigned grid = p->nseg < TCU_SEG_MAX_GRID ? (unsigned)p->nseg : TCU_SEG_MAX_GRID;
    return launch_kernel(segments_kernel<T, M, OMIT>, grid, 0, stream, false, *p);
}

template <typename T>
cudaError_t launch_segments_type(unsigned mask, int omit_nan, const tcu_seg_params *p, const tcu_device *d,
                                 cudaStream_t s)
{
    return dispatch_mask<T>(mask, omit_nan, [&](auto m, auto omit) {
        return launch_segments_t<T, decltype(m)::value, decltype(omit)::value>(p, d, s);
    });
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
