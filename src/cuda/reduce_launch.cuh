/* The reduce launcher: grid size, the shared-memory ring's shape and the one-word combines
 * for a launch, and the switch from the runtime feature mask to the kernels. */
#ifndef TALLY_CUDA_REDUCE_LAUNCH_CUH
#define TALLY_CUDA_REDUCE_LAUNCH_CUH

#include "cuda/launch.cuh"
#include "cuda/mask_dispatch.cuh"
#include "cuda/reduce_kernel.cuh"
#include "cuda/tuning.h"

namespace tcu {

/* The ring's shape for the reduce_ring knob (1: the default, 2: one block per SM, 3: two, 4:
 * three where the registers allow, else two), as blocks per SM and stages per block; false:
 * no ring. The default is one block per SM with six stages, for every kernel: six stages keep
 * 192 KB per SM in flight whatever the registers, and since the slow batches of wide-range
 * values are summed from the ring's held stage (slow_batch_out), they need no more blocks per
 * SM to hide their latency than price-like data does (docs/performance.md, "reduce ring"). */
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
        if (tcu_knob(TCU_KNOB_REDUCE_PACKED)) {
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
        q->extreme = only && tcu_knob(TCU_KNOB_REDUCE_EXTREME);
    }
}

/* Blocks for n elements: enough to fill the GPU (resident blocks), fewer for small inputs. */
template <typename T, unsigned M, bool OMIT>
cudaError_t launch_reduce_t(const tcu_reduce_params *p, const tcu_device *dev, cudaStream_t stream)
{
    auto *const plain_kernel = reduce_kernel<T, M, OMIT, false>;
    auto *const ring_kernel = reduce_kernel<T, M, OMIT, true>;
    /* per device: built for sm_90, the ring's shared memory granted, blocks that fit per SM */
    static DeviceCache sm90_cache, smem_cache, plain_fit, ring_fit[kMaxRingStages + 1];
    static DeviceCache smem_cache_bins, ring_fit_bins[kMaxRingStages + 1];
    constexpr unsigned long long per_block = (unsigned long long)kThreads * Worker<T, M, OMIT>::U;
    /* the exact sums' per-thread bins (knob REDUCE_BINS; reduce_worker.cuh, Bins), in the ring
     * kernels only: their bytes after the ring's stages in dynamic shared memory, so the ring
     * keeps only the stages that fit beside them (kBlockSmem: the most a block may have, less
     * kStaticSmem for the kernel's static shared memory) */
    constexpr bool kBinsKernel = Worker<T, M, OMIT>::BINS;
    const bool bins = kBinsKernel && tcu_knob(TCU_KNOB_REDUCE_BINS) != 0;
    constexpr size_t kBinsBytes = kBinsKernel ? Bins<T>::BYTES : 0;
    constexpr size_t kBlockSmem = 227u * 1024u, kStaticSmem = 8u * 1024u;
    const unsigned long long nb = (p->body_vec + per_block - 1) / per_block;
    const bool sm90 = built_for_sm90_on(sm90_cache, dev->ordinal, plain_kernel, ring_kernel);
    const bool pdl = p->pdl && sm90;
    const int ring = sm90 ? tcu_knob(TCU_KNOB_REDUCE_RING) : 0;
    const unsigned long long sm_count = (unsigned long long)dev->sm_count;
    int per_sm_ring = 0, stages = 0;
    if (ring_shape(ring, &per_sm_ring, &stages) &&
        nb >= (unsigned long long)tcu_knob(TCU_KNOB_REDUCE_RING_MIN)) {
        const size_t stage_bytes = per_block * sizeof(Vec<T>);
        /* with bins: the stages that fit beside them (f32: four; f64: two) */
        if (bins)
            while (stages > 1 && stage_bytes * (size_t)stages + kBinsBytes + kStaticSmem > kBlockSmem) stages--;
        const size_t ring_smem = stage_bytes * (size_t)stages + (bins ? kBinsBytes : 0);
        int done = 0;
        cudaError_t err = (bins ? smem_cache_bins : smem_cache).get(dev->ordinal, &done, [&](int *out) {
            *out = 1;
            const size_t most = stage_bytes * 6 > ring_smem ? stage_bytes * 6 : ring_smem;
            return cudaFuncSetAttribute(ring_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)most);
        });
        if (err != cudaSuccess) return err;
        /* no more blocks than fit at once (the kernel's registers may allow fewer) */
        int fit = 0;
        err = (bins ? ring_fit_bins : ring_fit)[stages].get(dev->ordinal, &fit, [&](int *out) {
            int b = 0;
            cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, ring_kernel, kThreads, ring_smem);
            *out = b > 0 ? b : 1;
            return e;
        });
        if (err != cudaSuccess) return err;
        if (per_sm_ring > fit) per_sm_ring = fit;
        unsigned long long want = (unsigned long long)per_sm_ring * sm_count;
        if (want > TCU_MAX_BLOCKS) want = TCU_MAX_BLOCKS;
        unsigned grid = (unsigned)(nb < want ? nb : want);
        tcu_reduce_params q = *p;
        q.ring_stages = stages;
        /* bit 0 (the offset is a multiple of the stage size): f64 windows on (REDUCE_BINS >= 2);
         * bit 1: f64 register windows first (REDUCE_BINS >= 3); bit 2: f32 (REDUCE_BINS=4) */
        q.bins = bins ? (int32_t)(stage_bytes * (size_t)stages) | (tcu_knob(TCU_KNOB_REDUCE_BINS) >= 2 ? 1 : 0) |
                            (tcu_knob(TCU_KNOB_REDUCE_BINS) >= 3 ? 2 : 0) | (tcu_knob(TCU_KNOB_REDUCE_BINS) >= 4 ? 4 : 0)
                      : -1;
        set_combine<T, M>(&q, nb, grid, per_block);
        return launch_kernel(ring_kernel, grid, ring_smem, stream, pdl, q);
    }
    int per_sm = 0;
    cudaError_t err = plain_fit.get(dev->ordinal, &per_sm, [&](int *out) {
        int b = 0;
        cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, plain_kernel, kThreads, 0);
        *out = b > 0 ? b : 1;
        return e;
    });
    if (err != cudaSuccess) return err;
    /* at most WAVES times the resident blocks; at least MINB batches per block */
    unsigned long long waves = (unsigned long long)tcu_knob(TCU_KNOB_REDUCE_WAVES);
    unsigned long long minb = (unsigned long long)tcu_knob(TCU_KNOB_REDUCE_MINB);
    unsigned long long max_blocks = (unsigned long long)per_sm * sm_count * waves;
    if (max_blocks > TCU_MAX_BLOCKS) max_blocks = TCU_MAX_BLOCKS;
    if (minb == 0) {
        /* Up to 2 batches, one block does them in turn: a second block and the partials' round
         * trip cost more than the batch it takes. From 512 batches (16 MB) on, 2 batches per
         * block; in between, one (docs/performance.md, "reduce grid"). */
        minb = (nb <= 2 || nb >= 512) ? 2 : 1;
        /* The exact f64 sum alone: at most one block per SM, as its blocks' merges and partials
         * cost more than the other kernels' (the plain f64 sum and max are slower so, and the
         * exact f32 sum no faster). */
        if constexpr (Worker<T, M, OMIT>::EXACT && sizeof(T) == 8 && M == TCU_MASK_SUM) {
            const unsigned long long per_sm_share = (nb + sm_count - 1) / sm_count;
            if (per_sm_share > minb) minb = per_sm_share;
        }
    }
    unsigned long long want = (nb + minb - 1) / minb;
    if (want < 1) want = 1;
    unsigned grid = (unsigned)(want < max_blocks ? want : max_blocks);
    tcu_reduce_params q = *p;
    q.bins = -1; /* the ring kernels' only (reduce_kernel) */
    set_combine<T, M>(&q, nb, grid, per_block);
    return launch_kernel(plain_kernel, grid, 0, stream, pdl, q);
}

template <typename T>
cudaError_t launch_reduce_type(unsigned mask, int omit_nan, const tcu_reduce_params *p, const tcu_device *d,
                               cudaStream_t s)
{
#ifdef TALLY_TUNING
    constexpr bool kFastSum = true; /* the benchmark's yardstick only */
#else
    constexpr bool kFastSum = false;
#endif
    return dispatch_mask<T, kFastSum>(mask, omit_nan, [&](auto m, auto omit) {
        return launch_reduce_t<T, decltype(m)::value, decltype(omit)::value>(p, d, s);
    });
}

} // namespace tcu

/* The reduce launcher of one type, tcu_launch_reduce_<name> (cuda_internal.h): what each
 * generated translation unit (reduce_type.cu.in) defines. */
#define TCU_DEFINE_REDUCE_LAUNCHER(name, C)                                                      \
    cudaError_t tcu_launch_reduce_##name(unsigned mask, int omit_nan, const tcu_reduce_params *p, \
                                         const tcu_device *d, cudaStream_t s)                    \
    {                                                                                            \
        return tcu::launch_reduce_type<C>(mask, omit_nan, p, d, s);                              \
    }

#endif
