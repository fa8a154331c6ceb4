/* The reduce launcher: grid size, the shared-memory ring's shape and the one-word combines
 * for a launch, and the switch from the runtime feature mask to the kernels. */
#ifndef TALLY_CUDA_REDUCE_LAUNCH_CUH
#define TALLY_CUDA_REDUCE_LAUNCH_CUH

#include "cuda/reduce_kernel.cuh"

namespace tcu {

/* The ring's shape for the reduce_ring knob (1: the default, 2: one block per SM, 3: two, 4:
 * three where the registers allow, else two), as blocks per SM and stages per block; false:
 * no ring. The default is one block per SM with six stages, for every kernel. The exact sums
 * had three blocks per SM while their batches of wide-range values went element by element
 * and needed several blocks' warps to hide their latency (2^28 f32 values: 1.3 ms, 3.6 with
 * one block per SM; f64 10.7 ms); with three-term batches held in the ring (slow_batch_out)
 * one block per SM takes 0.65 ms (f32) and 0.92 ms (f64), and price-like data is as fast as
 * with more blocks per SM (H200, 2026-11-30 tables). */
static inline bool ring_shape(int ring, int *per_sm, int *stages)
{
    if (ring == 0) return false;
    if (ring == 1) ring = 2;
    *per_sm = ring - 1;
    *stages = ring == 2 ? 6 : ring == 3 ? 3 : 2;
    return true;
}

/* The one-word combines the launch may use (p.packed, p.extreme; see packable, extreme_only).
 * packed: the bits B of the sum field, with C = 64 - B the fewest count bits for grid - 1, when
 * every block's sum is below the bias 2^(63 - 2C): a block sums at most ceil(nb / grid) batches
 * plus the head or tail (< 32 elements), each at most 2^(8 sizeof(T) - 1) (signed) or below
 * 2^(8 sizeof(T)) (unsigned) in magnitude. */
template <typename T, unsigned M>
static void set_combine(tcu_reduce_params *q, unsigned long long nb, unsigned grid, unsigned long long per_block)
{
    q->packed = 0;
    q->extreme = 0;
    if (grid < 2) return;
    if constexpr (packable<T, M>()) {
        if (tcu_knob(TCU_KNOB_RED_PACKED)) {
            int cbits = 1;
            while ((1ull << cbits) < grid) cbits++;
            const int bias_log2 = 63 - 2 * cbits;
            const unsigned long long most = ((nb + grid - 1) / grid) * per_block * Traits<T>::vec + 32;
            const int elem_log2 = 8 * (int)sizeof(T) - (Traits<T>::is_signed ? 1 : 0);
            /* most * 2^elem_log2 <= 2^bias_log2 (unsigned elements stay below 2^elem_log2) */
            if (bias_log2 > elem_log2 && most <= (1ull << (bias_log2 - elem_log2)) - (Traits<T>::is_signed ? 1 : 0))
                q->packed = 64 - cbits;
        }
    }
    if constexpr (extreme_only<T, M>()) {
        /* only when min and max are all that is asked: a count (TALLY_COUNT with omit_nan
         * counts the non-NaN elements) does not travel through the word */
        bool only = true;
        for (int i = 0; i < q->nops; i++) only &= q->ops[i] == TALLY_MIN || q->ops[i] == TALLY_MAX;
        q->extreme = only && tcu_knob(TCU_KNOB_RED_EXTREME);
    }
}

/* Blocks for n elements: enough to fill the GPU (resident blocks), fewer for small inputs. */
template <typename T, unsigned M, bool OMIT>
cudaError_t launch_reduce_t(const tcu_reduce_params *p, int sm_count, cudaStream_t stream)
{
    constexpr unsigned long long per_block = (unsigned long long)kThreads * Worker<T, M, OMIT>::U;
    const unsigned long long nb = (p->body_vec + per_block - 1) / per_block;
    static const bool sm90 = built_for_sm90(reduce_kernel<T, M, OMIT, false>) &&
                             built_for_sm90(reduce_kernel<T, M, OMIT, true>);
    const bool pdl = p->pdl && sm90;
    const int ring = sm90 ? tcu_knob(TCU_KNOB_RED_RING) : 0;
    int per_sm_ring = 0, stages = 0;
    if (ring_shape(ring, &per_sm_ring, &stages) &&
        nb >= (unsigned long long)tcu_knob(TCU_KNOB_RED_RING_MIN)) {
        static bool smem_ready = false;
        const size_t stage_bytes = per_block * sizeof(Vec<T>);
        if (!smem_ready) {
            cudaError_t err = cudaFuncSetAttribute(reduce_kernel<T, M, OMIT, true>,
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   (int)(stage_bytes * 6));
            if (err != cudaSuccess) return err;
            smem_ready = true;
        }
        /* no more blocks than fit at once (the kernel's registers may allow fewer) */
        static int fit[kMaxRingStages + 1];
        if (fit[stages] == 0) {
            int b = 0;
            cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &b, reduce_kernel<T, M, OMIT, true>, kThreads, stage_bytes * (size_t)stages);
            if (err != cudaSuccess) return err;
            fit[stages] = b > 0 ? b : 1;
        }
        if (per_sm_ring > fit[stages]) per_sm_ring = fit[stages];
        unsigned long long want = (unsigned long long)per_sm_ring * (unsigned long long)sm_count;
        if (want > TCU_MAX_BLOCKS) want = TCU_MAX_BLOCKS;
        unsigned grid = (unsigned)(nb < want ? nb : want);
        tcu_reduce_params q = *p;
        q.ring_stages = stages;
        set_combine<T, M>(&q, nb, grid, per_block);
        return launch_kernel(reduce_kernel<T, M, OMIT, true>, grid, stage_bytes * (size_t)stages, stream,
                             pdl, q);
    }
    static int per_sm = 0;
    if (per_sm == 0) {
        int b = 0;
        cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, reduce_kernel<T, M, OMIT, false>, kThreads, 0);
        if (err != cudaSuccess) return err;
        per_sm = b > 0 ? b : 1;
    }
    /* at most WAVES times the resident blocks; at least MINB batches per block */
    unsigned long long waves = (unsigned long long)tcu_knob(TCU_KNOB_RED_WAVES);
    unsigned long long minb = (unsigned long long)tcu_knob(TCU_KNOB_RED_MINB);
    unsigned long long max_blocks = (unsigned long long)per_sm * (unsigned long long)sm_count * waves;
    if (max_blocks > TCU_MAX_BLOCKS) max_blocks = TCU_MAX_BLOCKS;
    if (minb == 0) {
        /* Measured on the H200 (2026-11-29): up to 2 batches, one block doing them in turn beats
         * two blocks and the partials' round trip (i32 2^14: 3.9 vs 5.8 us; exact f32 sum 7.3 vs
         * 16.3 us); in between, one batch per block was best; from 512 batches (16 MB) on, 2
         * per block (CUDA graphs, 2^22: i32 sum 5.92 us against 6.45 with 4 and 6.08 with 1, i32
         * max 6.57 / 6.86 / 6.63, exact f32 sum 9.31 / 9.60 / 10.30). */
        minb = (nb <= 2 || nb >= 512) ? 2 : 1;
        /* The exact f64 sum alone: at most one block per SM, as its blocks' merges and partials
         * cost more than the other kernels' (H200, CUDA graphs, price-like data: 2^20 8.69 ->
         * 7.80 us with 2 batches per block, 2^21 11.32 -> 10.11 with 4; the plain f64 sum and
         * max were slower so, and the exact f32 sum no faster) */
        if constexpr (Worker<T, M, OMIT>::EXACT && sizeof(T) == 8 && M == TCU_MASK_SUM) {
            const unsigned long long sms = (unsigned long long)sm_count;
            const unsigned long long per_sm_share = (nb + sms - 1) / sms;
            if (per_sm_share > minb) minb = per_sm_share;
        }
    }
    unsigned long long want = (nb + minb - 1) / minb;
    if (want < 1) want = 1;
    unsigned grid = (unsigned)(want < max_blocks ? want : max_blocks);
    tcu_reduce_params q = *p;
    set_combine<T, M>(&q, nb, grid, per_block);
    return launch_kernel(reduce_kernel<T, M, OMIT, false>, grid, 0, stream, pdl, q);
}

template <typename T, bool OMIT>
cudaError_t launch_reduce_mask(unsigned mask, const tcu_reduce_params *p, int sm, cudaStream_t s)
{
    switch (mask) {
    case TCU_MASK_SUM: return launch_reduce_t<T, TCU_MASK_SUM, OMIT>(p, sm, s);
    case TCU_MASK_MIN: return launch_reduce_t<T, TCU_MASK_MIN, OMIT>(p, sm, s);
    case TCU_MASK_MAX: return launch_reduce_t<T, TCU_MASK_MAX, OMIT>(p, sm, s);
    case TCU_MASK_SMM: return launch_reduce_t<T, TCU_MASK_SMM, OMIT>(p, sm, s);
    case TCU_MASK_ARGMIN: return launch_reduce_t<T, TCU_MASK_ARGMIN, OMIT>(p, sm, s);
    case TCU_MASK_ARGMAX: return launch_reduce_t<T, TCU_MASK_ARGMAX, OMIT>(p, sm, s);
    case TCU_MASK_SQDEV: return launch_reduce_t<T, TCU_MASK_SQDEV, OMIT>(p, sm, s);
    case TCU_MASK_FASTSUM:
        if constexpr (Traits<T>::is_float) return launch_reduce_t<T, TCU_MASK_FASTSUM, OMIT>(p, sm, s);
        return launch_reduce_t<T, TCU_MASK_SUM, OMIT>(p, sm, s);
    default: return launch_reduce_t<T, TCU_MASK_ALL, OMIT>(p, sm, s);
    }
}

template <typename T>
cudaError_t launch_reduce_type(unsigned mask, int omit_nan, const tcu_reduce_params *p, int sm,
                               cudaStream_t s)
{
    if constexpr (Traits<T>::is_float) {
        if (omit_nan) return launch_reduce_mask<T, true>(mask, p, sm, s);
    }
    return launch_reduce_mask<T, false>(mask, p, sm, s);
}

} // namespace tcu

#endif
