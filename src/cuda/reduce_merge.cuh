/* Merging reduce states: the exact sums' pair combine (xcombine), whole states, and the warp
 * shuffle tree that merges a warp's states into lane 0. */
#ifndef TALLY_CUDA_REDUCE_MERGE_CUH
#define TALLY_CUDA_REDUCE_MERGE_CUH

#include <type_traits>
#include "cuda/exact.cuh"
#include "cuda/reduce_state.cuh"

namespace tcu {

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

} // namespace tcu

#endif
