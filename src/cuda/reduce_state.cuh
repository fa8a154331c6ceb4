/* A reduce thread's state: the members each feature mask M needs (State), what a block's
 * partial holds and which of its words the last block reads, and the one-word combines. */
#ifndef TALLY_CUDA_REDUCE_STATE_CUH
#define TALLY_CUDA_REDUCE_STATE_CUH

#include <cstddef>
#include <type_traits>
#include "cuda/traits.cuh"
#include "cuda/cuda_internal.h"

namespace tcu {

template <typename T> struct SumType {
    using type = typename std::conditional<
        sizeof(T) <= 4,
        typename std::conditional<Traits<T>::is_signed, long long, unsigned long long>::type,
        typename std::conditional<Traits<T>::is_signed, __int128, unsigned __int128>::type>::type;
};

constexpr uint32_t kSpilledFlag = 0x80000000u; /* in a block partial's xflags */
/* In the exact f32/f64 sums' xflags: a batch failed its fast path's proof (went to the slow
 * path or the bins) because of its values' range (f32: the batch alone, not the running sum,
 * overfilled the window; f64: any failure). Merged by OR like the others, read only for tcu_reduce_params.hint, and
 * masked off before the flags reach the rounding (exact_result). */
constexpr uint32_t kSlowFlag = 0x40000000u;

/* The small integer sums' combine in one atomic (p.packed = B, the bits of the sum field):
 * every block adds 2^B + (its sum + 2^(2B - 65)) to one 64-bit word, whose low B bits gather
 * the biased sums and whose 64 - B bits above count the blocks. The block whose add finds
 * grid - 1 blocks counted has the total at once: no partials written, no release fence, no
 * reads, one relaxed atomic (the partials and the acq_rel ticket are most of a small
 * launch's fixed cost: docs/performance.md). With C = 64 - B count bits (grid <= 2^C, so the count grid - 1 fits) and
 * every block's sum below the bias 2^(63 - 2C) in magnitude (the launcher's bound, see
 * set_combine), each biased sum is positive and below 2^(64 - 2C), and grid of them below
 * 2^(64 - C) = 2^B: the sum field never carries into the count. */
template <typename T, unsigned M> __host__ __device__ constexpr bool packable()
{
    return M == TCU_MASK_SUM && !Traits<T>::is_float && sizeof(T) <= 4;
}
/* The min or max alone combines through one word too (p.extreme; set_combine allows it only
 * when nothing else is asked, not even the count that shares their mask): each block folds its
 * key into the word by an atomic min or max (relaxed, ordered by the ticket's release after
 * it); the last block takes the word, resetting it to the identity, instead of reading partials
 * and merging them once more. */
template <typename T, unsigned M> __host__ __device__ constexpr bool extreme_only()
{
    return M == TCU_MASK_MAX || M == TCU_MASK_MIN;
}
constexpr int kMaxRingStages = 8;               /* the ring's stages (32 KB each), at most */

template <typename T, unsigned M, bool OMIT> struct alignas(16) State {
    using K = typename Traits<T>::Key;
    static constexpr bool FL = Traits<T>::is_float;
    typename SumType<T>::type isum;
    double fprod;
    double fsum; /* TCU_F_FSUM */
    double xh, xl; /* exact sums: value = xh + xl + (what was spilled to superaccumulators) */
    unsigned long long pmag;
    uint32_t pflags; /* 1 zero seen, 2 overflow, 4 negative */
    uint32_t xflags; /* TALLY_EXACT_F_* of the exact sums */
    K kmin, kmax;
    unsigned long long imin, imax;
    unsigned long long band, bor, bxor;
    unsigned long long cnt;

    /* NaN's key: the extreme (propagates) or the identity (omitted). */
    static constexpr K kmax_key = (K)~(K)0;
    __device__ __forceinline__ void init()
    {
        isum = 0;
        fprod = 1.0;
        fsum = 0.0;
        xh = -0.0;
        xl = -0.0;
        pmag = 1;
        pflags = 0;
        xflags = 0;
        kmin = kmax_key;
        kmax = 0;
        imin = imax = ~0ull;
        band = ~0ull;
        bor = bxor = 0;
        cnt = 0;
    }

    __device__ __forceinline__ void add(T x, unsigned long long idx)
    {
        if constexpr (M & TCU_F_COUNT) {
            if constexpr (FL && OMIT) cnt += (x == x) ? 1 : 0;
        }
        if constexpr (!FL && (M & TCU_F_SUM)) isum += x;
        if constexpr (FL && (M & TCU_F_FSUM)) {
            if (!(OMIT && x != x)) fsum += (double)x;
        }
        if constexpr (M & TCU_F_PROD) {
            if constexpr (FL) {
                if (!(OMIT && x != x)) fprod *= (double)x;
            } else {
                if (x == 0) {
                    pflags |= 1;
                } else {
                    unsigned long long m;
                    if constexpr (Traits<T>::is_signed) {
                        long long v = (long long)x;
                        if (v < 0) pflags ^= 4;
                        m = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
                    } else {
                        m = (unsigned long long)x;
                    }
                    if (__umul64hi(pmag, m)) pflags |= 2;
                    pmag *= m;
                }
            }
        }
        if constexpr (M & (TCU_F_MIN | TCU_F_MAX | TCU_F_ARGMIN | TCU_F_ARGMAX)) {
            K k = key_of(x);
            K k_lo = k, k_hi = k;
            if constexpr (FL) {
                if (x != x) {
                    k_lo = OMIT ? kmax_key : (K)0;
                    k_hi = OMIT ? (K)0 : kmax_key;
                }
            }
            if constexpr (M & TCU_F_ARGMIN) {
                if (k_lo < kmin || (k_lo == kmin && idx < imin)) { kmin = k_lo; imin = idx; }
            } else if constexpr (M & TCU_F_MIN) {
                kmin = k_lo < kmin ? k_lo : kmin;
            }
            if constexpr (M & TCU_F_ARGMAX) {
                if (k_hi > kmax || (k_hi == kmax && idx < imax)) { kmax = k_hi; imax = idx; }
            } else if constexpr (M & TCU_F_MAX) {
                kmax = k_hi > kmax ? k_hi : kmax;
            }
        }
        if constexpr (!FL && (M & TCU_F_BITS)) {
            unsigned long long w;
            if constexpr (Traits<T>::is_signed) w = (unsigned long long)(long long)x;
            else w = (unsigned long long)x;
            band &= w;
            bor |= w;
            bxor ^= w;
        }
    }

    /* this := this followed by o (o covers later elements: matters for the float product only). */
    __device__ __forceinline__ void merge(const State &o)
    {
        if constexpr (!FL && (M & TCU_F_SUM)) isum += o.isum;
        if constexpr (M & TCU_F_FSUM) fsum += o.fsum;
        if constexpr ((FL && (M & TCU_F_SUM)) || (M & TCU_F_SQDEV)) xflags |= o.xflags;
        if constexpr (M & TCU_F_PROD) {
            if constexpr (FL) fprod *= o.fprod; /* integers: see merge_state */
        }
        if constexpr (M & TCU_F_ARGMIN) {
            if (o.kmin < kmin || (o.kmin == kmin && o.imin < imin)) { kmin = o.kmin; imin = o.imin; }
        } else if constexpr (M & TCU_F_MIN) {
            kmin = o.kmin < kmin ? o.kmin : kmin;
        }
        if constexpr (M & TCU_F_ARGMAX) {
            if (o.kmax > kmax || (o.kmax == kmax && o.imax < imax)) { kmax = o.kmax; imax = o.imax; }
        } else if constexpr (M & TCU_F_MAX) {
            kmax = o.kmax > kmax ? o.kmax : kmax;
        }
        /* only the members the mask uses: the others keep their initial values (constants) */
        if constexpr (!FL && (M & TCU_F_BITS)) {
            band &= o.band;
            bor |= o.bor;
            bxor ^= o.bxor;
        }
        if constexpr (FL && OMIT && (M & TCU_F_COUNT)) cnt += o.cnt;
    }
};

/* The 16-byte words of a partial (State) that hold members the mask M merges: the last block
 * loads only those (2 of 8 for the exact sums). Partials are 256 bytes apart, so each word a
 * warp loads is 32 separate requests, on the last block's critical path. */
template <typename T, unsigned M, bool OMIT> __host__ __device__ constexpr unsigned partial_words()
{
    using S = State<T, M, OMIT>;
    constexpr bool FL = Traits<T>::is_float;
    unsigned w = 0;
    auto use = [&w](size_t off, size_t size) {
        for (size_t i = off / 16; i <= (off + size - 1) / 16; i++) w |= 1u << i;
    };
    if ((FL && (M & TCU_F_SUM)) || (M & TCU_F_SQDEV)) {
        use(offsetof(S, xh), 2 * sizeof(double));
        use(offsetof(S, xflags), sizeof(uint32_t));
    }
    if (!FL && (M & TCU_F_SUM)) use(offsetof(S, isum), sizeof(typename SumType<T>::type));
    if (M & TCU_F_FSUM) use(offsetof(S, fsum), sizeof(double));
    if ((M & TCU_F_PROD) && FL) use(offsetof(S, fprod), sizeof(double));
    if ((M & TCU_F_PROD) && !FL) {
        use(offsetof(S, pmag), sizeof(unsigned long long));
        use(offsetof(S, pflags), sizeof(uint32_t));
    }
    if (M & (TCU_F_MIN | TCU_F_ARGMIN)) use(offsetof(S, kmin), sizeof(typename Traits<T>::Key));
    if (M & (TCU_F_MAX | TCU_F_ARGMAX)) use(offsetof(S, kmax), sizeof(typename Traits<T>::Key));
    if (M & TCU_F_ARGMIN) use(offsetof(S, imin), sizeof(unsigned long long));
    if (M & TCU_F_ARGMAX) use(offsetof(S, imax), sizeof(unsigned long long));
    if (!FL && (M & TCU_F_BITS)) use(offsetof(S, band), 3 * sizeof(unsigned long long));
    if (FL && OMIT && (M & TCU_F_COUNT)) use(offsetof(S, cnt), sizeof(unsigned long long));
    return w;
}

} // namespace tcu

#endif
