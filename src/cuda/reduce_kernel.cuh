/* One-launch reductions, layered thread -> warp -> block -> device.
 *
 * Thread: each block takes an even share of whole batches (256 threads x 8 vectors); a thread
 * issues its batch's eight 16-byte loads (no bounds checks but in the last batch) before it
 * folds the elements into a State (only the members its feature mask M asks for are touched).
 * For large inputs the kernels instead receive their batches in shared memory, through a ring
 * of stages that one thread fills with bulk copies (cp.async.bulk) well ahead of use.
 * Float sums are exact: f32 values are added in plain f64 and the adds proved exact from the
 * values' exponents; f64 values and squares keep a two-term expansion per thread. A batch whose
 * adds cannot be proved exact (wide-range values) goes through a three-term expansion, and the
 * rare errors beyond it spill into the block's shared-memory superaccumulator (core/exact_sum.h
 * layout); a batch that meets NaN, inf or overflow is redone element by element. Warp: the
 * members of the State that the mask uses are shuffled (the exact sums by plain adds where
 * those are exact). Block: warp states through shared memory. Device:
 * every block writes its partial and takes an atomic ticket (release/acquire); the last block
 * to finish combines the partials with the same merge code, writes the results and resets the
 * ticket: one launch, no host synchronisation, capturable in a CUDA graph. Small integer sums
 * and a min or max alone skip the partials: the blocks fold into one word by atomics (packable,
 * extreme_only). Launched with programmatic dependent launch (cuda_common.cuh), so the launch
 * overlaps the end of the kernel before it. */
#ifndef TALLY_CUDA_REDUCE_KERNEL_CUH
#define TALLY_CUDA_REDUCE_KERNEL_CUH

#include <cstddef>
#include <type_traits>
#include "cuda/cuda_common.cuh"
#include "cuda/cuda_internal.h"

namespace tcu {


template <typename T> struct SumType {
    using type = typename std::conditional<
        sizeof(T) <= 4,
        typename std::conditional<Traits<T>::is_signed, long long, unsigned long long>::type,
        typename std::conditional<Traits<T>::is_signed, __int128, unsigned __int128>::type>::type;
};

constexpr uint32_t kSpilledFlag = 0x80000000u; /* in a block partial's xflags */

/* The small integer sums' combine in one atomic (p.packed = B, the bits of the sum field):
 * every block adds 2^B + (its sum + 2^(2B - 65)) to one 64-bit word, whose low B bits gather
 * the biased sums and whose 64 - B bits above count the blocks. The block whose add finds
 * grid - 1 blocks counted has the total at once: no partials written, no release fence, no
 * reads, one relaxed atomic (the partials and the acq_rel ticket cost ~1 us per launch,
 * probe_kernel.cu). With C = 64 - B count bits (grid <= 2^C, so the count grid - 1 fits) and
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
 * warp loads is 32 separate requests. Measured on the H200: 0.06-0.12 us off the exact f64
 * sum at 2^14-2^26 (its last block spent 1.3-1.9 us reading and merging 396 partials). */
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

/* xcombine's rare cases, out of line (keeps the kernels' code small; see sacc_add_finite):
 * a result beyond the f64 range keeps the four inputs exactly in the superaccumulator; else
 * the nonzero second-order errors m and f go there. Returns the new (h1, l1). sacc NULL: the
 * caller's result is discarded (a lane outside a shuffle tree's live half), so nothing may be
 * spilled either: a spill is a side effect that the discarded pair would not take back. */
static __device__ __noinline__ double2 xcombine_rare(double h1, double l1, double h2, double l2, double H,
                                                     double L, double m, double f, unsigned long long *sacc)
{
    if (!sacc) return make_double2(H, L);
    if (!isfinite(H)) {
        sacc_add_finite(sacc, h1);
        sacc_add_finite(sacc, l1);
        sacc_add_finite(sacc, h2);
        sacc_add_finite(sacc, l2);
        return make_double2(-0.0, -0.0);
    }
    if (m != 0.0) sacc_add_finite(sacc, m);
    if (f != 0.0) sacc_add_finite(sacc, f);
    return make_double2(H, L);
}

/* (h1, l1) += (h2, l2) exactly: afterwards h1 + l1 + (spilled) == old h1 + l1 + h2 + l2. All
 * finite. The spilled terms are second-order rounding errors: rare for real data. */
__device__ __forceinline__ void xcombine(double &h1, double &l1, double h2, double l2,
                                         unsigned long long *sacc)
{
    double e, f, g, k, m;
    double s = two_sum(h1, h2, e);
    double t = two_sum(l1, l2, f);
    double u = two_sum(e, t, g);
    double H = two_sum(s, u, k);
    double L = two_sum(k, g, m);
    if (!isfinite(H) || m != 0.0 || f != 0.0) {
        double2 r = xcombine_rare(h1, l1, h2, l2, H, L, m, f, sacc);
        H = r.x;
        L = r.y;
    }
    h1 = H;
    l1 = L;
}

/* xcombine when plain adds do: the high parts by a two-sum, the low parts and its error by
 * plain adds, kept when those are exact (see exact_tree_plain); the usual case. */
__device__ __forceinline__ void xcombine_quick(double &h1, double &l1, double h2, double l2,
                                               unsigned long long *sacc)
{
    double e, f, g;
    double h = two_sum(h1, h2, e);
    double l = two_sum(l1, l2, f);
    l = two_sum(l, e, g);
    if (f == 0.0 && g == 0.0) {
        h1 = h;
        l1 = l;
    } else {
        xcombine(h1, l1, h2, l2, sacc);
    }
}

/* The integer product merge needs both old flag sets: done outside State::merge. XS: the exact
 * sums are merged too (false: the caller has summed them already, see warp_merge). */
template <bool XS = true, typename T, unsigned M, bool OMIT>
__device__ __forceinline__ void merge_state(State<T, M, OMIT> &a, const State<T, M, OMIT> &b,
                                            unsigned long long *sacc)
{
    if constexpr (XS && ((Traits<T>::is_float && (M & TCU_F_SUM)) || (M & TCU_F_SQDEV)))
        xcombine(a.xh, a.xl, b.xh, b.xl, sacc);
    if constexpr ((M & TCU_F_PROD) && !Traits<T>::is_float) {
        uint32_t f = (a.pflags | b.pflags) & 3u;
        f |= (a.pflags ^ b.pflags) & 4u;
        if (__umul64hi(a.pmag, b.pmag)) f |= 2;
        unsigned long long m = a.pmag * b.pmag;
        a.merge(b);
        a.pflags = f;
        a.pmag = m;
    } else {
        a.merge(b);
    }
}

/* Shuffles one value of any whole-word size down the warp. */
template <typename X> __device__ __forceinline__ X shfl_down_any(const X &v, int off)
{
    static_assert(sizeof(X) % 4 == 0, "whole words");
    constexpr int W = sizeof(X) / 4;
    uint32_t w[W];
    memcpy(w, &v, sizeof(X));
#pragma unroll
    for (int i = 0; i < W; i++) w[i] = __shfl_down_sync(0xffffffffu, w[i], off);
    X r;
    memcpy(&r, w, sizeof(X));
    return r;
}

/* The state of the lane off places down: only the members the mask M uses travel (the others
 * hold their initial values in every lane, so merging the initial value is exact). */
template <bool XS = true, typename T, unsigned M, bool OMIT>
__device__ __forceinline__ State<T, M, OMIT> shfl_down_state(const State<T, M, OMIT> &s, int off)
{
    constexpr bool FL = Traits<T>::is_float;
    constexpr bool EXACT = (FL && (M & TCU_F_SUM)) || (M & TCU_F_SQDEV);
    State<T, M, OMIT> o;
    o.init();
    if constexpr (!FL && (M & TCU_F_SUM)) o.isum = shfl_down_any(s.isum, off);
    if constexpr (FL && (M & TCU_F_PROD)) o.fprod = shfl_down_any(s.fprod, off);
    if constexpr (!FL && (M & TCU_F_PROD)) {
        o.pmag = shfl_down_any(s.pmag, off);
        o.pflags = shfl_down_any(s.pflags, off);
    }
    if constexpr (M & TCU_F_FSUM) o.fsum = shfl_down_any(s.fsum, off);
    if constexpr (EXACT) {
        if constexpr (XS) {
            o.xh = shfl_down_any(s.xh, off);
            o.xl = shfl_down_any(s.xl, off);
        }
        o.xflags = shfl_down_any(s.xflags, off);
    }
    if constexpr (M & (TCU_F_MIN | TCU_F_ARGMIN)) o.kmin = shfl_down_any(s.kmin, off);
    if constexpr (M & (TCU_F_MAX | TCU_F_ARGMAX)) o.kmax = shfl_down_any(s.kmax, off);
    if constexpr (M & TCU_F_ARGMIN) o.imin = shfl_down_any(s.imin, off);
    if constexpr (M & TCU_F_ARGMAX) o.imax = shfl_down_any(s.imax, off);
    if constexpr (!FL && (M & TCU_F_BITS)) {
        o.band = shfl_down_any(s.band, off);
        o.bor = shfl_down_any(s.bor, off);
        o.bxor = shfl_down_any(s.bxor, off);
    }
    if constexpr (FL && OMIT && (M & TCU_F_COUNT)) o.cnt = shfl_down_any(s.cnt, off);
    return o;
}

/* The exact sums (xh, xl) of lanes [0, W) added into lane 0 down a shuffle tree by a two-sum of
 * the high parts and plain adds of the low parts and those two-sums' errors (as xcombine_quick):
 * kept, and true returned, when every plain add that lane 0's result depends on is exact (zero
 * two-sum error). Then lane 0's xh + xl is the exact sum (not normalized: exact_result rounds
 * xh + xl once, and xcombine takes any pair). The usual case, as a block's values share a
 * scale: a few f64 adds per level on the critical path instead of xcombine's chain of five
 * two-sums. Otherwise nothing changes and false is returned (the same in every lane). */
template <int W> __device__ __forceinline__ bool exact_tree_plain(double &xh, double &xl)
{
    const int lane = threadIdx.x & 31;
    double h = xh, l = xl;
    bool bad = false;
#pragma unroll
    for (int off = W / 2; off > 0; off >>= 1) {
        double e, f, g;
        double oh = __shfl_down_sync(0xffffffffu, h, off);
        double ol = __shfl_down_sync(0xffffffffu, l, off);
        h = two_sum(h, oh, e);
        l = two_sum(l, ol, f);
        l = two_sum(l, e, g);
        bad |= lane < off && (f != 0.0 || g != 0.0); /* lanes >= off hold sums nobody reads */
    }
    if (__any_sync(0xffffffffu, bad)) return false;
    xh = h;
    xl = l;
    return true;
}

/* The states of lanes [0, W) merged into lane 0 (W a power of two; every lane of the warp
 * takes part). */
template <int W, typename T, unsigned M, bool OMIT>
__device__ __forceinline__ void warp_merge(State<T, M, OMIT> &s, unsigned long long *sacc)
{
    constexpr bool EXACT = (Traits<T>::is_float && (M & TCU_F_SUM)) || (M & TCU_F_SQDEV);
    /* the tree of the other members; xs: with the exact sums. At each level only lanes below
     * off hold states that are read again; the others merge what they are handed and their
     * results are dropped, so they must not spill into the shared superaccumulator (their
     * spills would add values that no kept state accounts for: sums off by whole terms). */
    const int lane = threadIdx.x & 31;
    auto tree = [&](auto xs) {
#pragma unroll
        for (int off = W / 2; off > 0; off >>= 1) {
            State<T, M, OMIT> o = shfl_down_state<decltype(xs)::value>(s, off);
            merge_state<decltype(xs)::value>(s, o, lane < off ? sacc : nullptr);
        }
    };
    bool plain = false;
    if constexpr (EXACT) plain = exact_tree_plain<W>(s.xh, s.xl);
    /* the exact sum alone: the flags are all that is left, one warp-wide OR instead of a tree
     * of shuffles (a few hundred cycles per merge on the critical path) */
    constexpr bool FLAGS_ONLY = EXACT && (M == TCU_MASK_SUM || M == TCU_MASK_SQDEV) &&
                                !(OMIT && (M & TCU_F_COUNT));
    if (plain) {
        if constexpr (FLAGS_ONLY) s.xflags = __reduce_or_sync(0xffffffffu, s.xflags);
        else tree(std::false_type{});
    } else {
        tree(std::true_type{});
    }
}

/* The third term of a thread's exact sum, which only the slow batches use (slow_batch_out):
 * one double per thread after the superaccumulator's digits in shared memory, +0 at start. */
__device__ __forceinline__ double *wide_tail(unsigned long long *sacc)
{
    return (double *)(sacc + TALLY_EXACT_CHUNKS) + threadIdx.x;
}

/* A rare spill, out of line (keeps the unrolled code around its call sites small). */
static __device__ __noinline__ void sacc_spill(unsigned long long *sacc, double x)
{
    sacc_add_finite(sacc, x);
}

/* The exact f32 sum's running sum a1 moved into the second term a2, so that a1 can start
 * again from near 0: a2 + a1 by a two-sum, whose error (a multiple of a1's grain, at most half
 * an ulp of the new a2) is a1's new start. The pair's sum is unchanged and nothing leaves the
 * thread: with the error put into the third term, nearly every thread spilled at the end (the
 * exact f32 sum of 2^30 prices was 2.7% behind the plain one). Only when a2 dwarfs a1 (after
 * a huge value) is the error not small (below 'small'); it then goes to the third term as
 * before, so that a1 still starts from 0. Rare; inline, as a call in the batch loop made the
 * f32 kernel spill more. */
__device__ __forceinline__ void f32_rebase(double &a1, double &a2, double small, unsigned long long *sacc)
{
    double e, e3;
    a2 = two_sum(a2, a1, e);
    a1 = e;
    if (fabs(e) < small) return;
    double *tail = wide_tail(sacc);
    *tail = two_sum(*tail, e, e3);
    if (e3 != 0.0) sacc_spill(sacc, e3);
    a1 = 0.0;
}

/* The per-thread worker: the State plus, for float sums and the variance pass, the exact
 * expansions (ea: sums or the high parts of squares; eb: the low parts). */
template <typename T, unsigned M, bool OMIT> struct Worker {
    static constexpr bool FL = Traits<T>::is_float;
    static constexpr bool EXACT = (FL && (M & TCU_F_SUM)) || (M & TCU_F_SQDEV);
    /* 16-byte vectors in flight per thread */
    static constexpr int U = 8;
    static constexpr bool SQ = (M & TCU_F_SQDEV) != 0;
    static constexpr int VEC = Traits<T>::vec;
    /* f32 sums: the fast path adds in plain f64 and proves the adds exact from the operands'
     * exponents (see add_batch); emin is the least f32 exponent field (at least 1) of the values
     * this thread has summed, so that its running sum is a multiple of 2^(emin - 150). */
    static constexpr bool F32SUM = sizeof(T) == 4 && FL && !SQ;
    /* f64 sums: a two-sum per element into a1, its errors added plainly into a2 and those adds
     * proved exact afterwards the same way (emin then is the least f64 exponent field). */
    static constexpr bool F64SUM = sizeof(T) == 8 && FL && !SQ;
    static constexpr uint32_t kNoExp = sizeof(T) == 8 ? 2047u : 255u; /* emin: nothing yet */
    State<T, M, OMIT> s;
    Expansion ea, eb;
    double mean;
    uint32_t emin;
    bool fits; /* f32 sums: the last batch alone fitted the fast path's window (see add_batch) */

    __device__ __forceinline__ void init(double m)
    {
        s.init();
        ea.init();
        eb.init();
        mean = m;
        emin = kNoExp;
        fits = false;
    }

    /* The exactness proofs' view of a value: |x|'s bits shifted out of the sign, minus one, so
     * that zero wraps to the top and an unsigned min finds the least nonzero magnitude. */
    using MagKey = typename std::conditional<sizeof(T) == 8, unsigned long long, uint32_t>::type;
    static __device__ __forceinline__ MagKey mag_key(T x)
    {
        if constexpr (sizeof(T) == 8) return ((unsigned long long)__double_as_longlong((double)x) << 1) - 1ull;
        else return (__float_as_uint((float)x) << 1) - 1u;
    }
    /* emin := min(emin, exponent field of the value whose key is lo); denormals count as 1
     * (their spacing is that of the least normals); NaN and inf give kNoExp, no constraint. */
    __device__ __forceinline__ void note_least(MagKey lo)
    {
        if (lo == (MagKey)~(MagKey)0) return; /* only zeros */
        uint32_t e = (uint32_t)((lo + 1) >> (sizeof(T) == 8 ? 53 : 24));
        emin = min(emin, e ? e : 1u);
    }
    /* The f64 fast path's cheaper view (one 32-bit key per element serves both the least and
     * the greatest magnitude): bits 31..62 of |x|'s bits minus one. Zeros (either sign) give
     * ~0, no constraint; a nonzero denormal gives an exponent field of 0, counted as 1; an
     * exact power of two gives its exponent field minus one (its bits minus one end in ones),
     * which claims less than is true: still sound. */
    static __device__ __forceinline__ uint32_t mag_key_hi(double x)
    {
        return (uint32_t)(((unsigned long long)__double_as_longlong(x) - 1ull) >> 31);
    }
    __device__ __forceinline__ void note_least_hi(uint32_t lo)
    {
        if (lo == ~0u) return; /* only zeros */
        uint32_t e = lo >> 21;
        emin = min(emin, e ? e : 1u);
    }
    static __device__ __forceinline__ double pow2(int k) /* 2^k, k clamped to -1022 .. 1023 */
    {
        k = k < -1022 ? -1022 : k > 1023 ? 1023 : k;
        return __longlong_as_double((long long)(k + 1023) << 52);
    }

    /* The value(s) element x contributes to the exact sums. */
    __device__ __forceinline__ void exact_values(T x, double &v0, double &v1)
    {
        double xd = (double)x;
        if constexpr (SQ) {
            double d = xd - mean;
            v0 = __dmul_rn(d, d);
            /* d * d == v0 + v1 exactly while v0 is finite; an infinite square adds +inf alone
             * (fma would give inf - inf = NaN), as on the CPU */
            v1 = isinf(v0) ? -0.0 : fma(d, d, -v0);
            if (OMIT && x != x) { v0 = -0.0; v1 = -0.0; }
        } else {
            v0 = (OMIT && x != x) ? -0.0 : xd;
            v1 = -0.0;
        }
    }

    /* One element, carefully (head, tail, and batches the fast path rejected). */
    __device__ __forceinline__ void exact_slow(T x, unsigned long long *sacc)
    {
        double v0, v1;
        exact_values(x, v0, v1);
        if (!isfinite(v0)) s.xflags |= exact_flags_of(v0); else ea.add_slow(v0, sacc);
        if constexpr (SQ) {
            if (!isfinite(v1)) s.xflags |= exact_flags_of(v1); else eb.add_slow(v1, sacc);
        }
    }

    /* Rare: the batch (vectors vbase[v + u * kThreads] below vend; global or shared memory)
     * with a third term and no proof. Runs on a copy of the worker (slow_batch_out), so that
     * this worker's address is never taken: a member call out of line would keep the whole
     * worker in local memory, stored to and loaded from on every batch. */
    __device__ __forceinline__ void slow_batch(const Vec<T> *vbase, unsigned long long v,
                                               unsigned long long vend, unsigned long long *sacc);

    __device__ __forceinline__ void add_scalar(T x, unsigned long long idx, unsigned long long *sacc)
    {
        s.add(x, idx);
        if constexpr (EXACT) exact_slow(x, sacc);
        if constexpr (EXACT && (F32SUM || F64SUM)) note_least(mag_key(x));
    }

    /* U vectors (ok[u]: vector u is in range); idx0[u]: index of its first element; vector u
     * is still at vbase[vfirst + u * kThreads] if in range (below vend). REBASE: see the f32
     * sums' fast path (the ring kernels, whose threads sum many batches). */
    template <bool REBASE>
    __device__ __forceinline__ void add_batch(const Vec<T> *v, const bool *ok,
                                              const unsigned long long *idx0,
                                              unsigned long long *sacc, const Vec<T> *vbase,
                                              unsigned long long vfirst, unsigned long long vend)
    {
        if constexpr (M & ~(unsigned)(TCU_F_SQDEV | (FL ? TCU_F_SUM : 0u))) {
#pragma unroll
            for (int u = 0; u < U; u++)
                if (ok[u]) {
#pragma unroll
                    for (int k = 0; k < VEC; k++) s.add(v[u].v[k], idx0[u] + k);
                }
        }
        if constexpr (EXACT && F32SUM) {
            /* Fast path for f32: plain f64 adds, kept only if proved exact afterwards. The proof:
             *  - q = emin - 150, emin (>= 1) the least f32 exponent field of every value this
             *    thread has summed, this batch included: every value is a multiple of 2^q, and
             *    by induction so is every exact partial sum of a1.
             *  - A multiple of 2^q of magnitude below 2^(q+53) = 2^(emin-97) is a double, so an
             *    add whose exact result stays below that is exact.
             *  - Every partial sum of the batch is at most |a1 before| + 32 max|x| in magnitude,
             *    and max|x| < 2^(emax - 126) (emax: the batch's greatest exponent field), so
             *    |a1 before| + 2^(emax - 121) < 2^(emin - 97) proves every add exact. The
             *    threshold is a double and rounding monotone: a rounded left side cannot pass
             *    when the exact one does not.
             *  - NaN and inf make a1 NaN or inf (or are omitted as -0), which fails the test.
             * A batch that fails is redone by slow_batch_out, exact by construction.
             * Per element: one f64 add (a two-sum is six, on the same half-rate pipe), an f32 max
             * of |x| and two integer ops for the least nonzero |x| (zeros wrap to the top).
             * The window 2^(emin - 97) does not grow with the running sum: once a1 fills an
             * eighth of it, and the last batch alone fitted in it, a1 moves into a2 by an exact
             * two-sum whose error (a multiple of 2^q) is a1's new start (f32_rebase), so that
             * batches fit again however many values a thread sums. At half the window a thread
             * whose least value came late (the window halves with each binade emin drops) sent
             * its next batch to the slow path; at an eighth that is rare (docs/performance.md).
             * Wide-range batches never fit, so they never move it. Only in the ring kernels,
             * whose threads sum many batches (the f32 kernel without the ring has 64 registers
             * and spilled more with it). */
            if (REBASE && fits && !(fabs(ea.a1) < pow2((int)emin - 100)))
                f32_rebase(ea.a1, ea.a2, pow2((int)emin - 104), sacc);
            const double a1_before = ea.a1;
            MagKey lo = ~(MagKey)0;
            float hi = 0.0f;
#pragma unroll
            for (int u = 0; u < U; u++) {
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    T x = v[u].v[k];
                    bool skip = !ok[u] || (OMIT && x != x);
                    lo = min(lo, mag_key(x));
                    hi = fmaxf(hi, fabsf((float)x)); /* NaN is ignored here, caught below */
                    ea.a1 = __dadd_rn(ea.a1, skip ? -0.0 : (double)x);
                }
            }
            static_assert(U * VEC == 32, "the bound below counts 32 values per batch");
            note_least(lo);
            const int emax = (int)((__float_as_uint(hi) >> 23) & 0xffu);
            if constexpr (REBASE) fits = pow2(emax - 121) < pow2((int)emin - 99);
            bool bad = !(fabs(a1_before) + pow2(emax - 121) < pow2((int)emin - 97)) || !isfinite(ea.a1);
            if (bad) {
                ea.a1 = a1_before;
                slow_batch(vbase, vfirst, vend, sacc);
            }
        } else if constexpr (EXACT && F64SUM) {
            /* Fast path for f64: a two-sum per element into a1; its exact errors e go into a2 by
             * plain adds, kept only if these adds are proved exact afterwards. The proof:
             *  - q = emin - 1075, emin (>= 1) the least exponent field of every value this thread
             *    has summed, this batch included. Values are multiples of 2^q; so are a1 (a
             *    multiple of 2^q below 2^(q+53) is a double, so rounding is exact there, and
             *    above it the rounding's ulp is a multiple of 2^q), every two-sum error e, and a2
             *    (by induction, while its adds are exact).
             *  - A sum of two multiples of 2^q of magnitude <= 2^(q+53) = 2^(emin-1022) is a
             *    double: a2's adds are exact while every partial sum of a2 stays within that.
             *  - |e_i| <= 2^-53 |a1_i| and |a1_i| <= (|a1 before| + i M)(1 + 2^-52)^i for M >=
             *    max |x| and i <= 32, so every partial |a2| <= |a2 before| + 2^-48 (|a1 before| +
             *    32 M)(1 + 2^-47) < 2 B, B being that bound computed in f64 (relative error below
             *    2^-50). M = hi is above every |x| except for exponent field 2046, where pow2's
             *    clamp at 2^1023 can halve it: then partial |a2| < 4 B.
             *  - So B < 2^(emin - 1024) proves every add exact. 2^(emin-1024) is a double (made as
             *    pow2(emin - 1022) / 4, since pow2 stops at 2^-1022) and rounding is monotone, so
             *    a rounded B cannot pass the test when B does not.
             *  - Overflow: a1 or a2 infinite fails the test; while a1_i is finite the two-sums'
             *    intermediate values are bounded by |a1_i| + |x| and stay finite.
             * A batch that fails is redone by slow_batch_out, exact by construction.
             * When the running sum dominates the batch (|a1 before| >= 34 M, so |a1| > 34 M -
             * 31 M (1 + 2^-47) > |x| at every add of at most 32 values), the two-sum is Fast2Sum's
             * three ops instead of six: four f64 ops per element instead of seven. The warp
             * takes one path (a vote), so summing a zero-mean series costs a vote more, not both. */
            const double a1_before = ea.a1, a2_before = ea.a2;
            /* lo: the least nonzero |x| (mag_key_hi); khi: one more than the greatest key, so
             * zeros give 0 (NaN and inf are caught below). Integer ops, not an f64 max: the
             * exact f64 sum 2^20 9.01 -> 8.78 us, 2^26 128.07 -> 126.87 (H200, CUDA graphs). */
            uint32_t lo = ~0u, khi = 0;
#pragma unroll
            for (int u = 0; u < U; u++) {
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    const uint32_t key = mag_key_hi(v[u].v[k]);
                    lo = min(lo, key);
                    khi = max(khi, key + 1u);
                }
            }
            /* above every |x|: (khi >> 21) is at least each exponent field (the + 1 can only
             * carry upwards), and |x| < 2^(E - 1022) */
            const double hi = khi ? pow2((int)(khi >> 21) - 1022) : 0.0;
            auto add_all = [&](auto add2) { /* add2: two_sum or fast_two_sum */
#pragma unroll
                for (int u = 0; u < U; u++) {
#pragma unroll
                    for (int k = 0; k < VEC; k++) {
                        T x = v[u].v[k];
                        double e;
                        ea.a1 = add2(ea.a1, (!ok[u] || (OMIT && x != x)) ? -0.0 : (double)x, e);
                        ea.a2 = __dadd_rn(ea.a2, e);
                    }
                }
            };
            if (__all_sync(__activemask(), fabs(a1_before) >= 34.0 * hi))
                add_all([](double a, double b, double &e) { return fast_two_sum(a, b, e); });
            else
                add_all([](double a, double b, double &e) { return two_sum(a, b, e); });
            static_assert(U * VEC <= 32, "the bounds here count at most 32 values per batch");
            note_least_hi(lo);
            const double bound = fabs(a2_before) + 0x1p-48 * (fabs(a1_before) + 32.0 * hi);
            bool bad = !(bound < 0.25 * pow2((int)emin - 1022)) || !isfinite(ea.a1) || !isfinite(ea.a2);
            if (bad) {
                ea.a1 = a1_before;
                ea.a2 = a2_before;
                slow_batch(vbase, vfirst, vend, sacc);
            }
        } else if constexpr (EXACT) {
            /* Fast path: plain f64 adds with their errors checked (squares: two terms whose
             * second-level error is rare). */
            Expansion sa = ea, sb = eb;
            bool bad = false;
#pragma unroll
            for (int u = 0; u < U; u++) {
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    double v0, v1;
                    exact_values(v[u].v[k], v0, v1);
                    if (!ok[u]) { v0 = -0.0; v1 = -0.0; }
                    double e, e2;
                    ea.a1 = two_sum(ea.a1, v0, e);
                    ea.a2 = two_sum(ea.a2, e, e2);
                    bad |= (e2 != 0.0);
                    if constexpr (SQ) {
                        eb.a1 = two_sum(eb.a1, v1, e);
                        eb.a2 = two_sum(eb.a2, e, e2);
                        bad |= (e2 != 0.0);
                    }
                }
            }
            bad |= !isfinite(ea.a1);
            if constexpr (SQ) bad |= !isfinite(eb.a1);
            if (bad) {
                ea = sa;
                eb = sb;
                slow_batch(vbase, vfirst, vend, sacc);
            }
        }
    }

    /* The thread's exact sums into its state (one pair). */
    __device__ __forceinline__ void flush(unsigned long long *sacc)
    {
        if constexpr (EXACT) {
            s.xh = ea.a1;
            s.xl = ea.a2;
            /* a1 starts at -0 and stays -0 only while every value added was -0; a2 is nonzero
             * only after a nonzero value (a rebase, or a slow batch's error) */
            if (__double_as_longlong(ea.a1) != (long long)0x8000000000000000ull || ea.a2 != 0.0)
                s.xflags |= TALLY_EXACT_F_NONNEGZERO;
            /* f32: after a rebase (or a slow batch) a2 can be the larger term; the pair as
             * (high, low) with the low part below half an ulp of the high one, so that the
             * merges' plain adds of low parts stay exact (exact_tree_plain) */
            if constexpr (F32SUM)
                if (ea.a2 != 0.0) s.xh = two_sum(ea.a2, ea.a1, s.xl);
            if constexpr (SQ) xcombine(s.xh, s.xl, eb.a1, eb.a2, sacc);
            const double t = *wide_tail(sacc); /* nonzero only after slow batches */
            if (t != 0.0) sacc_add_finite(sacc, t);
        }
    }
};

/* Out of line, on its own copy of the worker's exact state (see Worker::slow_batch). The batch
 * is reloaded (from the ring's stage, or L1/L2), not taken from the registers: the fast paths
 * would then have to keep them to their end (spills in the exact kernels' main loops). The
 * values go into a1 + a2 + a3 by three two-sums each, with no branch per element, a3 being the
 * thread's wide_tail: values of a wide exponent range then leave no error beyond the third
 * term, where two terms spilled one into the superaccumulator's shared-memory atomics at nearly
 * every element (the exact f64 sum of values 2^-40 .. 2^40 at 2^28 took 10.7 ms on the H200,
 * the plain sum 0.47). A batch that leaves a third-order error, or meets NaN, inf or overflow,
 * is redone element by element with a spill wherever one is due. */
template <typename T, unsigned M, bool OMIT>
__device__ __noinline__ void slow_batch_out(const Vec<T> *vbase, unsigned long long v,
                                            unsigned long long vend, unsigned long long *sacc,
                                            double mean, Expansion *ea, Expansion *eb, uint32_t *xflags)
{
    using W = Worker<T, M, OMIT>;
    W w;
    w.s.init();
    w.ea = *ea;
    w.eb = *eb;
    w.s.xflags = *xflags;
    w.mean = mean;
    double *tail = wide_tail(sacc);
    double a3 = *tail;
    bool bad = false;
    int nvec = 0; /* vectors u < nvec are in range */
    for (int u = 0; u < W::U; u++) nvec += v + (unsigned long long)u * kThreads < vend;
    const Vec<T> *first = vbase + v;
#pragma unroll 2
    for (int u = 0; u < nvec; u++) {
        const Vec<T> x = first[u * kThreads]; /* a generic load: shared or global memory */
#pragma unroll
        for (int k = 0; k < Traits<T>::vec; k++) {
            double v0, v1, e1, e2, e3;
            w.exact_values(x.v[k], v0, v1);
            w.ea.a1 = two_sum(w.ea.a1, v0, e1);
            w.ea.a2 = two_sum(w.ea.a2, e1, e2);
            a3 = two_sum(a3, e2, e3);
            bad |= e3 != 0.0;
            if constexpr (W::SQ) {
                w.eb.a1 = two_sum(w.eb.a1, v1, e1);
                w.eb.a2 = two_sum(w.eb.a2, e1, e2);
                bad |= e2 != 0.0;
            }
        }
    }
    bad |= !isfinite(w.ea.a1) || !isfinite(w.ea.a2) || !isfinite(a3);
    if constexpr (W::SQ) bad |= !isfinite(w.eb.a1) || !isfinite(w.eb.a2);
    if (bad) {
        w.ea = *ea;
        w.eb = *eb;
        a3 = *tail;
#pragma unroll 1
        for (int u = 0; u < nvec; u++) {
            const Vec<T> x = first[u * kThreads];
#pragma unroll 1
            for (int k = 0; k < Traits<T>::vec; k++) {
                double v0, v1;
                w.exact_values(x.v[k], v0, v1);
                if (!isfinite(v0)) {
                    w.s.xflags |= exact_flags_of(v0);
                } else {
                    double e1, e2, e3;
                    double t = two_sum(w.ea.a1, v0, e1);
                    if (!isfinite(t)) { /* the sum left the f64 range */
                        sacc_spill(sacc, v0);
                    } else {
                        w.ea.a1 = t;
                        w.ea.a2 = two_sum(w.ea.a2, e1, e2);
                        a3 = two_sum(a3, e2, e3);
                        if (e3 != 0.0) sacc_spill(sacc, e3);
                    }
                }
                if constexpr (W::SQ) {
                    if (!isfinite(v1)) w.s.xflags |= exact_flags_of(v1);
                    else w.eb.add_slow(v1, sacc);
                }
            }
        }
    }
    *tail = a3;
    *ea = w.ea;
    *eb = w.eb;
    *xflags = w.s.xflags;
}

template <typename T, unsigned M, bool OMIT>
__device__ __forceinline__ void Worker<T, M, OMIT>::slow_batch(const Vec<T> *vbase, unsigned long long v,
                                                               unsigned long long vend, unsigned long long *sacc)
{
    Expansion a = ea, b = eb;
    uint32_t f = s.xflags;
    slow_batch_out<T, M, OMIT>(vbase, v, vend, sacc, mean, &a, &b, &f);
    ea = a;
    eb = b;
    s.xflags = f;
}

/* Integer sum -> tally_exact (chunk 34 has weight 2^0), for a correctly rounded mean. */
template <typename S> __device__ __forceinline__ void exact_from_int(tally_exact *e, S v)
{
    tally_exact_init(e);
    bool neg = false;
    unsigned __int128 m;
    if constexpr (std::is_signed<S>::value || std::is_same<S, __int128>::value) {
        neg = v < 0;
        m = neg ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    } else {
        m = (unsigned __int128)v;
    }
    for (int i = 0; i < 4; i++) {
        long long d = (long long)(uint32_t)(m >> (32 * i));
        e->chunk[TALLY_EXACT_BIAS / 32 + i] = neg ? -d : d;
    }
    if (m) e->flags = TALLY_EXACT_F_ANY | TALLY_EXACT_F_NONNEGZERO;
}

/* A result for op before its value: the op, its wide type (f64, i64 or u64), OK, zeros. */
template <typename T> __device__ __forceinline__ tally_result blank_result(tally_op op)
{
    tally_result r;
    r.op = op;
    r.type = Traits<T>::is_float ? TALLY_F64 : Traits<T>::is_signed ? TALLY_I64 : TALLY_U64;
    r.status = TALLY_OK;
    r.value.u64 = 0;
    r.index = 0;
    return r;
}

/* The result of an op that needs nothing but the combined state: sum (xr: the exact float sum
 * rounded), min, max, argmin, argmax. r comes initialised (op, type, status OK, zeros). */
template <typename T, unsigned M, bool OMIT>
__device__ __forceinline__ void simple_result(tally_op op, const tcu_reduce_params &p,
                                              const State<T, M, OMIT> &s, double xr, tally_result &r)
{
    constexpr bool FL = Traits<T>::is_float;
    constexpr bool SG = Traits<T>::is_signed && !FL;
    if (op == TALLY_SUM) {
        if constexpr (M & TCU_F_FSUM) r.value.f64 = s.fsum;
        if constexpr ((M & TCU_F_SUM) && !(M & TCU_F_SQDEV)) {
            if constexpr (FL) {
                r.value.f64 = xr;
            } else if constexpr (SG) {
                __int128 v = (__int128)s.isum;
                if (v > (__int128)INT64_MAX || v < (__int128)INT64_MIN) r.status = TALLY_ERR_OVERFLOW;
                else r.value.i64 = (int64_t)v;
            } else {
                unsigned __int128 v = (unsigned __int128)s.isum;
                if (v > (unsigned __int128)UINT64_MAX) r.status = TALLY_ERR_OVERFLOW;
                else r.value.u64 = (uint64_t)v;
            }
        }
        return;
    }
    /* min, max, argmin, argmax */
    bool lo = (op == TALLY_MIN || op == TALLY_ARGMIN);
    typename Traits<T>::Key k = lo ? s.kmin : s.kmax;
    unsigned long long idx = lo ? s.imin : s.imax;
    using K = typename Traits<T>::Key;
    if (p.n == 0) {
        r.status = TALLY_ERR_EMPTY;
    } else if (FL && ((lo && k == (K)0 && !p.omit_nan) || (!lo && k == (K)~(K)0 && !p.omit_nan))) {
        r.value.u64 = 0x7ff8000000000000ull; /* a NaN propagates */
        r.index = idx;
    } else if (FL && ((lo && k == (K)~(K)0) || (!lo && k == (K)0))) {
        r.status = TALLY_ERR_EMPTY; /* every element was NaN (omitted) */
    } else {
        r.value.u64 = key_to_result_bits<T>(k);
        r.index = idx;
    }
    if (op == TALLY_MIN || op == TALLY_MAX) r.index = 0;
}

/* Writes the results of ops from the combined state. xr: the exact sum rounded (float
 * SUM/MEAN), or the exact sum of squared deviations rounded (pass 2). */
template <typename T, unsigned M, bool OMIT>
__device__ __noinline__ void finalize(const tcu_reduce_params &p, const State<T, M, OMIT> &s, double xr)
{
    constexpr bool FL = Traits<T>::is_float;
    constexpr bool SG = Traits<T>::is_signed && !FL;
    unsigned long long count = (FL && p.omit_nan) ? s.cnt : p.n;
    bool has_nan = FL && !p.omit_nan && (count > 0);
    /* the rounded sum and the mean, only when some result needs them */
    bool want_mean = p.aux != nullptr && !p.pass2, want_fsum = false;
    for (int i = 0; i < p.nops; i++) {
        want_mean |= p.ops[i] == TALLY_MEAN;
        want_fsum |= p.ops[i] == TALLY_SUM;
    }
    double mean = 0.0, fsum_rounded = 0.0;
    tally_status mst = TALLY_OK;
    if constexpr (!(M & TCU_F_SQDEV) && (M & TCU_F_SUM)) {
        if constexpr (FL) {
            fsum_rounded = xr;
        }
        if (want_mean) {
            if (count == 0) {
                mst = TALLY_ERR_EMPTY;
            } else {
                double sum;
                if constexpr (FL) {
                    sum = fsum_rounded;
                } else {
                    tally_exact e;
                    exact_from_int(&e, s.isum);
                    sum = tally_exact_round(&e);
                }
                mean = sum / (double)count;
            }
            if (p.aux && !p.pass2) {
                p.aux->mean = mean;
                p.aux->count = count;
                p.aux->status = (int32_t)mst;
            }
        }
    }
    for (int i = 0; i < p.nops; i++) {
        tally_op op = (tally_op)p.ops[i];
        if (p.pass2 != (op == TALLY_VAR)) continue;
        tally_result r = blank_result<T>(op);
        switch (op) {
        case TALLY_SUM:
        case TALLY_MIN:
        case TALLY_MAX:
        case TALLY_ARGMIN:
        case TALLY_ARGMAX:
            simple_result<T, M, OMIT>(op, p, s, xr, r);
            break;
        case TALLY_PROD:
            if constexpr (M & TCU_F_PROD) {
                if constexpr (FL) {
                    r.value.f64 = s.fprod;
                } else if (s.pflags & 1) {
                    r.value.u64 = 0;
                } else if (s.pflags & 2) {
                    r.status = TALLY_ERR_OVERFLOW;
                } else if constexpr (SG) {
                    if (s.pflags & 4) {
                        if (s.pmag > (1ull << 63)) r.status = TALLY_ERR_OVERFLOW;
                        else r.value.u64 = 0ull - s.pmag;
                    } else {
                        if (s.pmag > (unsigned long long)INT64_MAX) r.status = TALLY_ERR_OVERFLOW;
                        else r.value.u64 = s.pmag;
                    }
                } else {
                    r.value.u64 = s.pmag;
                }
            }
            break;
        case TALLY_AND:
        case TALLY_OR:
        case TALLY_XOR:
            if constexpr (!FL && (M & TCU_F_BITS)) {
                r.value.u64 = op == TALLY_AND ? s.band : op == TALLY_OR ? s.bor : s.bxor;
                if constexpr (!SG && sizeof(T) < 8) r.value.u64 &= (1ull << (8 * sizeof(T))) - 1;
            }
            break;
        case TALLY_COUNT:
            r.type = TALLY_U64;
            r.value.u64 = count;
            break;
        case TALLY_MEAN:
            r.type = TALLY_F64;
            r.status = mst;
            r.value.f64 = mean;
            break;
        case TALLY_VAR:
            r.type = TALLY_F64;
            if constexpr (M & TCU_F_SQDEV) {
                if (p.aux->status != TALLY_OK) {
                    r.status = (tally_status)p.aux->status;
                } else if (p.aux->count <= (unsigned long long)p.ddof) {
                    r.status = TALLY_ERR_DOMAIN;
                } else {
                    double sq = xr;
                    r.value.f64 = sq / (double)(p.aux->count - (unsigned long long)p.ddof);
                }
            }
            break;
        default:
            break;
        }
        (void)has_nan;
        p.out[i] = r;
    }
}

/* The exact sum, rounded once: xh + xl when nothing was spilled (then fl(xh + xl) is the
 * correctly rounded value of the exact sum), else through the superaccumulator. The flags are
 * those the CPU's superaccumulator would have: ANY when some element was summed (the
 * non-omitted ones), NONNEGZERO when some value was not -0.0, NaN and inf. spilled: sacc holds
 * something. sacc is changed. */
template <typename T, unsigned M, bool OMIT>
__device__ __forceinline__ double exact_result(const State<T, M, OMIT> &s, const tcu_reduce_params &p,
                                               unsigned long long *sacc, bool spilled)
{
    bool any;
    if constexpr ((M & TCU_F_SQDEV) != 0) any = p.n > 0;
    else any = (OMIT ? s.cnt : p.n) > 0;
    if (!any) return 0.0;
    uint32_t f = s.xflags | TALLY_EXACT_F_ANY;
    if (f & (TALLY_EXACT_F_NAN | TALLY_EXACT_F_PINF | TALLY_EXACT_F_NINF)) return sacc_round(sacc, f);
    if (!spilled) {
        double r = s.xh + s.xl;
        /* zeros lose their sign in the error terms: -0 exactly when every value was -0 */
        if (r == 0.0) r = (f & TALLY_EXACT_F_NONNEGZERO) ? 0.0 : -0.0;
        return r;
    }
    sacc_add_finite(sacc, s.xh);
    sacc_add_finite(sacc, s.xl);
    return sacc_round(sacc, f | TALLY_EXACT_F_NONNEGZERO); /* a spill means a nonzero value */
}

/* finalize takes the state by reference and is not inlined, so its argument lives in local
 * memory. Copying it there in the one thread that calls finalize keeps the caller's state in
 * registers: passing the caller's own variable made every thread of every block store its whole
 * state to local memory (15 MB of writes at 2^24 elements, a third of the kernel's time). */
template <typename T, unsigned M, bool OMIT>
__device__ __forceinline__ void finalize_copy(const tcu_reduce_params &p, State<T, M, OMIT> s, double xr)
{
    State<T, M, OMIT> copy = s;
    finalize<T, M, OMIT>(p, copy, xr);
}

/* The results when every op is one of simple_result's (the usual calls), written from
 * registers by the calling thread; otherwise finalize's general path. That path is long and
 * out of line, and takes the state through local memory: on the H200 it cost ~0.8 us per launch
 * (i32 sum in a CUDA graph, 2^10 elements: 2.21 us with it, 1.46 without; probe_kernel.cu). */
template <typename T, unsigned M, bool OMIT>
__device__ __forceinline__ void write_results(const tcu_reduce_params &p, const State<T, M, OMIT> &s, double xr)
{
    bool simple = p.aux == nullptr && !p.pass2;
    for (int i = 0; i < p.nops; i++) {
        tally_op op = (tally_op)p.ops[i];
        simple &= op == TALLY_SUM || op == TALLY_MIN || op == TALLY_MAX || op == TALLY_ARGMIN ||
                  op == TALLY_ARGMAX;
    }
    if (!simple) {
        finalize_copy(p, s, xr);
        return;
    }
#pragma unroll 1
    for (int i = 0; i < p.nops; i++) {
        tally_result r = blank_result<T>((tally_op)p.ops[i]);
        simple_result<T, M, OMIT>(r.op, p, s, xr, r);
        p.out[i] = r;
    }
}

/* The last block's rare step: the superaccumulators of the blocks that spilled (their partials'
 * xflags have kSpilledFlag) added into sacc. Warp w takes the blocks b = w mod kWarps, its
 * lanes the digits lane, lane + 32 and lane + 64, and adds its sums with one atomic per digit
 * at the end. With wide-range values every block spills: one thread per block adding its 68
 * digits one atomic at a time took ~0.2 ms at 396 blocks (H200). */
static __device__ __noinline__ void add_spilled_partials(unsigned grid, const void *partials,
                                                         const long long *xpartials, unsigned long long *sacc,
                                                         size_t xflags_offset)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const bool has2 = lane + 64 < TALLY_EXACT_CHUNKS;
    long long d0 = 0, d1 = 0, d2 = 0;
    constexpr int G = 4; /* blocks' flags, then digits, in flight at once */
    for (unsigned b0 = warp; b0 < grid; b0 += G * kWarps) {
        uint32_t f[G];
#pragma unroll
        for (int j = 0; j < G; j++) {
            const unsigned b = b0 + j * kWarps;
            f[j] = b < grid ? __ldcg((const uint32_t *)((const char *)partials + (size_t)b * TCU_PARTIAL_BYTES +
                                                        xflags_offset))
                            : 0u;
        }
#pragma unroll
        for (int j = 0; j < G; j++) {
            if (!(f[j] & kSpilledFlag)) continue;
            const long long *src = xpartials + (size_t)(b0 + j * kWarps) * TALLY_EXACT_CHUNKS;
            d0 += __ldcg(src + lane);
            d1 += __ldcg(src + lane + 32);
            if (has2) d2 += __ldcg(src + lane + 64);
        }
    }
    if (d0) atomicAdd(&sacc[lane], (unsigned long long)d0);
    if (d1) atomicAdd(&sacc[lane + 32], (unsigned long long)d1);
    if (has2 && d2) atomicAdd(&sacc[lane + 64], (unsigned long long)d2);
}

/* Whether the block's superaccumulator holds anything (every thread of the block calls it).
 * The first barrier lets every spill of every warp land before any thread reads its digit: a
 * thread that read its digit on the way into the barrier could miss a spill that another warp,
 * still merging, had not made yet, and the block then dropped its superaccumulator (sums off by
 * whole terms, at random, since it depends on the warps' timing). */
__device__ __forceinline__ bool block_spilled(const unsigned long long *sacc)
{
    __syncthreads();
    return __syncthreads_or(threadIdx.x < TALLY_EXACT_CHUNKS && sacc[threadIdx.x] != 0);
}

/* Blocks per SM a kernel is compiled for (so its register budget): the exact f32 sum 64
 * registers (some spills), the other exact sums 80, the fused masks and the ring kernels 128
 * (the ring runs one block per SM by default; ring=3 still fits two). */
template <typename T, unsigned M, bool OMIT, bool RING> constexpr int reduce_min_blocks()
{
    if (RING) return 2;
    if (Worker<T, M, OMIT>::EXACT) return M != TCU_MASK_SUM ? 2 : sizeof(T) == 4 && !OMIT ? 4 : 3;
    return 4;
}

/* RING: whole batches reach shared memory by bulk copies through a ring of p.ring_stages
 * stages of one batch (32 KB) each, issued by thread 0 ahead of use, so the bytes in flight
 * do not depend on the registers (one block per SM has 192 KB coming). */
template <typename T, unsigned M, bool OMIT, bool RING>
__global__ void __launch_bounds__(kThreads, (reduce_min_blocks<T, M, OMIT, RING>())) reduce_kernel(const __grid_constant__ tcu_reduce_params p)
{
    using W = Worker<T, M, OMIT>;
    using S = State<T, M, OMIT>;
    constexpr int VEC = Traits<T>::vec;
    constexpr bool EXACT = W::EXACT;
    static_assert(sizeof(S) <= TCU_PARTIAL_BYTES, "partial state too large");
    static_assert(sizeof(S) % 16 == 0, "partials are read in 16-byte words");
    /* the block's superaccumulator, then the threads' wide_tail terms */
    __shared__ unsigned long long sacc[EXACT ? TALLY_EXACT_CHUNKS + kThreads : 1];
    __shared__ S wstate[kWarps];
    __shared__ bool am_last;
    __shared__ bool spill_any; /* the last block: some block spilled */
    __shared__ uint64_t full[RING ? kMaxRingStages : 1];
    extern __shared__ __align__(128) unsigned char ring_smem[];

    const int tid = threadIdx.x;
    const unsigned bid = blockIdx.x, grid = gridDim.x;
    const T *data = (const T *)p.data;
    if constexpr (EXACT) {
        for (int c = tid; c < TALLY_EXACT_CHUNKS + kThreads; c += kThreads) sacc[c] = 0;
    }
    if constexpr (RING) {
        if (tid == 0)
            for (int i = 0; i < p.ring_stages; i++) mbar_init(&full[i], 1);
    }
    if constexpr (EXACT || RING) __syncthreads();
    W w;
    /* the kernel before this one (PDL) has finished: global memory may be touched from here */
    pdl_wait();
    pdl_trigger();
    double mean = 0.0;
    if constexpr (W::SQ) mean = p.aux->mean;
    w.init(mean);

    if (bid == 0 && tid < (int)p.head) w.add_scalar(data[tid], tid, sacc);
    if (bid == grid - 1 && tid < (int)p.tail) {
        unsigned long long i = p.head + p.body_vec * VEC + tid;
        w.add_scalar(data[i], i, sacc);
    }
    const Vec<T> *vdata = (const Vec<T> *)(data + p.head);
    /* Even shares of whole batches (kThreads * U vectors): block bid gets batches [b0, b1), so
     * every batch but the very last is full and runs without bounds checks; U independent
     * 16-byte loads per thread are issued before any is used. */
    constexpr int U = W::U;
    constexpr unsigned long long kBatch = (unsigned long long)kThreads * U;
    const unsigned long long nb = (p.body_vec + kBatch - 1) / kBatch;
    const unsigned long long b0 = nb * bid / grid, b1 = nb * (bid + 1) / grid;
    const unsigned long long vb = b0 * kBatch;
    const unsigned long long ve = b1 * kBatch < p.body_vec ? b1 * kBatch : p.body_vec;
    unsigned long long v = vb + tid;
    /* a whole batch: thread tid's vectors v + u * kThreads, u < U, still at vbase[vfirst + u *
     * kThreads] (vbase: the input, or the ring's stage) */
    auto whole_batch = [&](const Vec<T>(&x)[U], const Vec<T> *vbase, unsigned long long vfirst,
                           unsigned long long vend) {
        bool ok[U];
        unsigned long long idx0[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            ok[u] = true;
            idx0[u] = p.head + (v + (unsigned long long)u * kThreads) * VEC;
        }
        w.template add_batch<RING>(x, ok, idx0, sacc, vbase, vfirst, vend);
    };
    if constexpr (RING) {
        const Vec<T> *ring = (const Vec<T> *)ring_smem;
        const unsigned long long whole = (ve - vb) / kBatch;
        const int nst = p.ring_stages;
        constexpr unsigned kBytes = (unsigned)(kBatch * sizeof(Vec<T>));
        const uint64_t pol = l2_evict_first_policy(); /* the input is read once */
        if (tid == 0)
            for (int i = 0; i < nst && (unsigned long long)i < whole; i++)
                bulk_load_hint((void *)(ring + i * kBatch), vdata + vb + i * kBatch, kBytes, &full[i], pol);
        int k = 0;
        unsigned parity = 0;
        for (unsigned long long i = 0; i < whole; i++, v += kBatch) {
            mbar_wait(&full[k], parity);
            Vec<T> x[U];
            const Vec<T> *stage = ring + k * kBatch;
#pragma unroll
            for (int u = 0; u < U; u++) x[u] = stage[u * kThreads + tid];
            /* The exact sums hold stage k until its batch is summed, so that a batch the fast
             * path rejects is read again from there and not from L2 or memory: with one block
             * per SM, the exact f64 sum of wide-range values at 2^28 took 2.8 ms so, 0.93 held
             * (H200; the plain sum 0.46). Holding only once a batch had gone slow (a block-wide
             * vote per batch) was slower on price-like data than holding always. */
            if constexpr (EXACT) whole_batch(x, stage, tid, kBatch);
            __syncthreads(); /* stage k read (and summed, if held) by every thread: it may be refilled */
            if (tid == 0 && i + nst < whole)
                bulk_load_hint((void *)stage, vdata + vb + (i + nst) * kBatch, kBytes, &full[k], pol);
            if (++k == nst) {
                k = 0;
                parity ^= 1u;
            }
            if constexpr (!EXACT) whole_batch(x, stage, tid, kBatch); /* never rereads: no slow path */
        }
    } else {
        for (; v + (unsigned long long)(U - 1) * kThreads < ve; v += kBatch) {
            Vec<T> x[U];
#pragma unroll
            for (int u = 0; u < U; u++) x[u] = load_vec(vdata + v + (unsigned long long)u * kThreads);
            whole_batch(x, vdata, v, ve);
        }
    }
    if (v < ve) { /* the last, partial batch (the last block only) */
        Vec<T> x[U];
        bool ok[U];
        unsigned long long idx0[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            unsigned long long vi = v + (unsigned long long)u * kThreads;
            ok[u] = vi < ve;
            idx0[u] = p.head + vi * VEC;
            if (ok[u]) x[u] = load_vec(vdata + vi);
            else memset(&x[u], 0, sizeof x[u]);
        }
        w.template add_batch<RING>(x, ok, idx0, sacc, vdata, v, ve);
    }
    w.flush(sacc);

    /* Warp, then block; then, in the last block to finish, the same code once more over the
     * blocks' partials (for the exact sums one copy of that code, warm in the instruction cache
     * by then: the cold fetches of a second copy cost microseconds). */
    const int lane = tid & 31, warp = tid >> 5;
    S s = w.s;
    bool spilled = false;
    /* round 0: this block's state; round 1 (the last block): the partials. True: done. */
    auto merge_round = [&](int round) -> bool {
        warp_merge<32>(s, sacc);
        /* Round 1 over at most 32 partials: they all sit in warp 0, which finishes alone (no
         * block barrier; the other warps merged initial states and leave below). In graphs on
         * the H200: plain f64 sum 2^14 (4 blocks) 3.23 -> 2.92 us, i32 sum with partials 2^16
         * 3.14 -> 2.91. Not for the exact sums: their code then got slower elsewhere (exact f32
         * 2^20 5.96 -> 6.28 us, one block 0.13 us slower) for 0.26 us at 2^14-2^16 (f64). */
        const bool warp_only = !EXACT && round == 1 && grid <= 32;
        if (!warp_only) {
            /* round 1: warp 0 read wstate in round 0 before the ticket's barrier */
            if (lane == 0) wstate[warp] = s;
            __syncthreads();
            if (warp == 0) {
                S t;
                if (lane < kWarps) t = wstate[lane]; else t.init();
                warp_merge<kWarps>(t, sacc);
                s = t; /* lane 0: the block's state (round 1: the grid's) */
            }
        }
        if constexpr (EXACT) spilled = block_spilled(sacc);
        if constexpr (packable<T, M>()) {
            if (p.packed && grid > 1) { /* round 0 only: no block waits for the others */
                if (tid == 0) {
                    const int bits = p.packed;
                    const unsigned long long low = (1ull << bits) - 1;
                    const long long bias = 1ll << (2 * bits - 65);
                    const unsigned long long v = (unsigned long long)((long long)s.isum + bias) + (1ull << bits);
                    unsigned long long old;
                    asm volatile("atom.add.relaxed.gpu.u64 %0, [%1], %2;" : "=l"(old) : "l"(p.acc), "l"(v) : "memory");
                    if ((old >> bits) == grid - 1) {
                        s.isum = (long long)((old & low) + (v & low)) - (long long)grid * bias;
                        *p.acc = 0;
                        write_results(p, s, 0.0);
                    }
                }
                return true;
            }
        }
        if constexpr (extreme_only<T, M>()) {
            if (p.extreme && grid > 1) { /* round 0 only */
                if (tid == 0) {
                    constexpr bool MX = M == TCU_MASK_MAX;
                    unsigned long long *word = MX ? p.kmax_word : p.kmin_word;
                    const unsigned long long key = (unsigned long long)(MX ? s.kmax : s.kmin);
                    if (MX) asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" :: "l"(word), "l"(key) : "memory");
                    else asm volatile("red.relaxed.gpu.global.min.u64 [%0], %1;" :: "l"(word), "l"(key) : "memory");
                    /* the release orders this block's fold before its count; the last block's
                     * acquire then sees every block's fold */
                    unsigned int t;
                    asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(t) : "l"(p.counter) : "memory");
                    if (t == grid - 1) {
                        const unsigned long long ident = MX ? 0ull : ~0ull;
                        unsigned long long w;
                        asm volatile("atom.exch.relaxed.gpu.b64 %0, [%1], %2;" : "=l"(w) : "l"(word), "l"(ident) : "memory");
                        if (MX) s.kmax = (typename Traits<T>::Key)w;
                        else s.kmin = (typename Traits<T>::Key)w;
                        *p.counter = 0;
                        write_results(p, s, 0.0);
                    }
                }
                return true;
            }
        }
        if (round == 1 || grid == 1) {
            if constexpr (EXACT) {
                /* the spilled blocks' digits, here at the end, where little else is live (a call
                 * among the merges cost 0.1-0.2 us at 2^12-2^20 on the H200 though never made) */
                if (round == 1 && spill_any) {
                    add_spilled_partials(grid, p.partials, p.xpartials, sacc, offsetof(S, xflags));
                    spilled = block_spilled(sacc);
                }
            }
            if (tid == 0) {
                double xr = 0.0;
                if constexpr (EXACT) xr = exact_result(s, p, sacc, spilled);
                write_results(p, s, xr);
                if (round == 1) *p.counter = 0;
            }
            return true;
        }

        /* write this block's partial (and its superaccumulator, if anything was spilled) */
        if (tid == 0) {
            if (spilled) s.xflags |= kSpilledFlag;
            *(S *)((char *)p.partials + (size_t)bid * TCU_PARTIAL_BYTES) = s;
        }
        /* The ticket: thread 0's release orders its partial (and, through the barrier, the
         * spilled digits, fenced by their writers) before the increment; its acquire and the
         * barrier after order the last block's reads of the partials after every other block's
         * writes (and this block's reads of sacc before the last block clears it). */
        if (EXACT && spilled) {
            if (tid < TALLY_EXACT_CHUNKS) {
                p.xpartials[(size_t)bid * TALLY_EXACT_CHUNKS + tid] = sacc_split_digit(sacc, tid);
                __threadfence();
            }
            __syncthreads();
        }
        if (tid == 0) {
            unsigned int t;
            asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(t) : "l"(p.counter) : "memory");
            am_last = t == grid - 1;
            if constexpr (EXACT) spill_any = false;
        }
        __syncthreads();
        if (!am_last) return true;

        /* the last block: thread tid takes the partials of blocks tid, tid + 256, ... (merging
         * the threads in order then keeps the float product's order fixed: not block order, but
         * the same every run). sacc holds something only if this block spilled. */
        if (EXACT && spilled) {
            for (int c = tid; c < TALLY_EXACT_CHUNKS; c += kThreads) sacc[c] = 0;
            __syncthreads();
        }
        s.init();
        /* Only the words the mask merges (partial_words; the others keep their initial
         * values), and the next partial loaded before this one is merged. */
        constexpr int W16 = sizeof(S) / 16;
        constexpr unsigned kWords = partial_words<T, M, OMIT>();
        union Partial { S s; uint4 w[W16]; };
        auto load_partial = [&](unsigned b, Partial &u) {
            const uint4 *src = (const uint4 *)((const char *)p.partials + (size_t)b * TCU_PARTIAL_BYTES);
            u.s.init();
#pragma unroll
            for (int i = 0; i < W16; i++)
                if (kWords >> i & 1u) u.w[i] = __ldcg(src + i);
        };
        Partial next;
        if (tid < grid) load_partial(tid, next);
        for (unsigned b = tid; b < grid; b += kThreads) {
            Partial u = next;
            if (b + kThreads < grid) load_partial(b + kThreads, next);
            if constexpr (EXACT) {
                if (u.s.xflags & kSpilledFlag) { /* its digits: add_spilled_partials, below */
                    spill_any = true;
                    u.s.xflags &= ~kSpilledFlag;
                }
                xcombine_quick(s.xh, s.xl, u.s.xh, u.s.xl, sacc);
            }
            merge_state<false>(s, u.s, sacc);
        }
        return false;
    };
    /* One copy for the exact sums, whose merge code is long (2^16 elements on the H200: f32
     * 8.1 -> 5.6 us, f64 8.6 -> 6.1); two for the light kernels, faster so by 0.2-0.8 us up to
     * 2^22 (their code is short), and for the 1- and 2-byte types, which spill more with one. */
    if constexpr (EXACT && sizeof(T) >= 4) {
#pragma unroll 1
        for (int round = 0; round < 2; round++)
            if (merge_round(round)) return;
    } else {
        if (!merge_round(0)) merge_round(1);
    }
}

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
