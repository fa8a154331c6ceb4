/* The body of the exact-sum kernels, written once and stamped out per ISA. The including file
 * defines a vector of XW doubles and its operations, then includes this file:
 *
 *   XV, XW, XU (independent accumulator sets), XFN(name)
 *   XV_ZERO(), XV_SET1(d), XV_ADD, XV_SUB, XV_MUL, XV_FMS(a,b,c) = fma(a,b,-c), XV_OR (bitwise),
 *   XV_MAXABS(acc, v) = lanewise max(acc, |v|) (any value where v is NaN),
 *   XV_MINABS(acc, v) = lanewise min(acc, |v|) (any value where v is NaN), XVK: a vector of XW int64 lanes, XVK_INIT() (all INT64_MAX), XVK_STORE,
 *   XVK_LSBMIN(acc, v) = lanewise min(acc, key(v)) over v != 0, where key(v) = 2098 + the
 *   exponent of v's lowest set bit (v a multiple of 2^(key - 2098) and of no larger power of
 *   two; any value where v is inf or NaN), XV_STORE(double*, v), XV_LOAD_F64(p), XV_LOAD_F32(p) (XW floats widened
 *   exactly), XV_LOAD_F64_PART(p, k), XV_LOAD_F32_PART(p, k) (first k < XW lanes, the rest +0.0),
 *   XV_KEEP(v, k) (first k lanes of v, the rest +0.0), XV_KEEP_ORD(a, x) (lanes of a where x is
 *   not NaN, the rest +0.0), XV_NONZERO_MASK(v) (bit i set where lane i != 0 or is NaN),
 *   XV_MIN(a, v) / XV_MAX(a, v): lanewise IEEE 754-2019 minimum / maximum, -0 < +0 (a lane where
 *   a or v is NaN may give anything), XV_MIN_ORD / XV_MAX_ORD: the same, but a NaN lane of v
 *   leaves a, XV_NAN_MASK(v) (bit i set where lane i is NaN).
 * Optional:
 *   XB32_PREP(x, idx, add), XB32_N: for XB32_N floats at x (as bits b), idx[j] = b >> 23 and
 *     add[j] = (b & 0x7fffff) + 2^40 (the f32 bins' index and addend, see BINS), by vector ops;
 *     returns 0 if some exponent field is 255 (inf, NaN), else 1.
 *   XB64_PREP(x, idx, sig), XB64_N: for XB64_N doubles at x (as bits b), idx[j] = b >> 52 and
 *     sig[j] = the 52 fraction bits, with 2^52 where the exponent field is not 0; returns 0 if
 *     some exponent field is 2047 (inf, NaN), else 1.
 *   XV_FEED_SUBR(a, b): a - b for the residue r = v - q of a level, as the body likes it (an FMA
 *     form fnmadd(b, 1, a) rounds the exact a - b once: the same bits as XV_SUB, on other ports).
 *   XV_SAE 1, with XV_ADD_NX, XV_SUB_NX, XV_MUL_NX, XV_FMS_NX: the same operations, same results,
 *     but raising no floating-point exception flags (AVX-512 "suppress all exceptions"). Then the
 *     inexact flag after a block says whether its last level's adds were all exact (see LEV).
 *   XF_* (XF_W = XU * XW floats as 32-bit integers: XF_LOAD, XF_STORE, XF_SET1, XF_MINU, XF_MAXU,
 *     XF_MINS, XF_MAXS): f32 extremes for the fused sum+min+max from integer min/max of the bits
 *     (see XFN(xf_extremes)), which leaves the FP ports to the levels.
 *   XW32 1: the W32 method for f32 sums, on a vector XP of XPW floats and XI of XPW int32 lanes:
 *     XP_LOAD(p), XP_LOAD_PART(p, k), XP_KEEP_ORD(v) (NaN lanes +0, raising nothing), XP_SET1,
 *     XP_MUL, XP_MAXABS(acc, v), XP_STORE(float*, v), XP_CVT(v) (to int32, rounding as MXCSR
 *     says: raises inexact / invalid when not exact / out of range), XI_ZERO(), XI_ADD, and XL, a
 *     vector of XPW/2 int64 lanes: XL_ZERO(), XL_ADD (lanewise int64 add), XL_WIDEN_ADD(lo, hi, xi) (lo += the first XPW/2
 *     int32 lanes of xi sign-extended, hi += the others), XL_STORE(int64_t*, v); XU32 sets.
 *
 * ---- Methods ----------------------------------------------------------------------------------
 * Data goes in blocks of XBLK_BYTES. Each block is added by one of four methods, all exact:
 *   W32  (f32 sums)  y = x * 2^s as int32 (exact iff x is a multiple of 2^-s), summed in int32
 *        lanes (|y| <= 2^27, 8 adds per lane, then widened into int64 lanes). The FP inexact /
 *        invalid flags after the block say whether every conversion was exact and in range.
 *        Cost ~4 vector ops per XPW floats; fits data whose max / min nonzero ulp span <= 27
 *        bits (prices with 24-bit floats over 3 binades).
 *   LEV(L) levels of double accumulators (below), 3 ops per level per vector, 1 for the last.
 *   BINS data spanning more than XL_MAX levels: xsum's large accumulator (Neal 2015): an integer
 *        bin per sign and exponent, one add per element (see tally_xbins below).
 *   SLOW blocks with NaN or inf: element by element into the superaccumulator.
 * A block is run optimistically with the method of the last one; if the result cannot be trusted
 * (inexact flag, residue, bound exceeded, non-finite), the accumulators are restored, a stats
 * pass (max |x| and the lowest set bit of any input: vector ops only) picks the method that is
 * exact by the proofs below, and the block runs again. After 32 blocks, then 64, .., every 256,
 * the next cheaper method is tried (a wrong try costs a rerun); in BINS, plain sums take a block
 * without a stats pass (the bins' prep finds inf and NaN itself); every 16th (from the 8th) then
 * takes one on the block in cache, which may pick a cheaper method for the blocks after it; with
 * extremes or omitted NaNs a stats pass runs on every block. So
 * the cost follows the data: a call on price-like f32 data is W32 throughout, on data over
 * 2^-40..2^40 LEV(3) or LEV(4), over the whole exponent range BINS, and a change of character
 * costs a block or two. A method chosen from stats that still fails (never, by the
 * proofs) leaves the block to SLOW: the checks, not the proofs alone, guard the result.
 *
 * ---- LEV: the levels --------------------------------------------------------------------------
 * Level-0 inputs v (x itself for sums, d*d for squared deviations) are bounded by a running power
 * of two: |v| <= 2^m for everything that took the fast path. For a level k with inputs bounded by
 * 2^mk, the accumulator starts at C = 1.5 * 2^E with E = mk + T + 3 (T = XT_BITS), whose ulp is
 * u = 2^(E-52). Each add does
 *      s = S + v;   q = s - S;   S = s;   r = v - q;          (r goes on to the next level)
 * Claim: as long as at most 2^T values were added since S was C, every one of these operations is
 * exact in the sense we need, i.e. q is v rounded to a multiple of u, S = C + (sum of the q's)
 * exactly, and r = v - q exactly.
 * Proof. Rounding v (|v| <= 2^mk) to a multiple of u gives |q| <= 2^(mk+1): when u <= 2^mk,
 *   2^mk is itself a multiple of u, so |q| <= 2^mk; when u > 2^mk, q is 0 or +-u, and +-u only
 *   if |v| >= u/2, so |q| <= 2|v|. For the n-th add (n <= 2^T), the earlier q's and v give
 *   |sum q| + |v| <= (n-1) 2^(mk+1) + 2^mk < 2^T * 2^(mk+1) = 2^(E-2), so the exact S + v lies in
 *   [1.25 * 2^E, 1.75 * 2^E] inside the binade [2^E, 2^(E+1)), where the doubles are exactly the
 *   multiples of u. S is such a multiple, so fl(S + v) = S + (v rounded to a multiple of u), and
 *   it stays in the binade. q = s - S: both in the same binade, so the difference is exact
 *   (Sterbenz). r = v - q: if ulp(v) >= u then v is a multiple of u, q = v, r = 0; otherwise r is a
 *   multiple of ulp(v) with |r| <= u/2 and (q = 0, r = v) or |r| <= u/2 <= |v|, so r has fewer
 *   significant bits than v: representable, exact. (Subnormals included: ulp = 2^-1074.)
 * So |r| <= u/2 = 2^(E-53): level k+1 uses mk' = E - 53 and gets E' = E - 50 + T, i.e. each level
 * holds 50 - T = 40 bits of the input. E is clamped to >= -1022 (C must be normal); then u is
 * 2^-1074, every v is a multiple of u, and r = 0: more headroom only.
 * The last level L-1 only adds: S += v, exact (and within the binade, as above) iff v is a
 * multiple of u_(L-1). Every level input is a multiple of 2^g when every element is (g: the
 * smallest ulp exponent of the data; r = v - q with q a multiple of u_k, which is a multiple of
 * 2^g or else q = v), so L levels are exact when u_(L-1) <= 2^g (XFN(levels_for)). At run time
 * the exactness is checked, not assumed: with XV_SAE the other levels' adds raise no flags, so
 * the inexact flag after the block is set iff some last-level add rounded; without it, the last
 * level does the full split and its residues r are ORed (the block was exact iff all are 0), or
 * with one level the plain add's own inexact flag tells.
 * Every 2^T adds per lane (and whenever m grows), each S - C (exact: same binade) is added
 * exactly to the superaccumulator and S restarts at C. The fast path needs E <= 1023, i.e.
 * m <= 1010; larger finite values take BINS.
 * Squared deviations: hi = fl(d*d) enters level 0; lo = d*d - hi (exact by FMA when d*d neither
 * under- nor overflows; when it underflows, lo is the same rounded double as in the slow path)
 * has |lo| <= ulp(hi)/2 <= 2^(m-53) <= 2^m1, so it enters level 1 directly; levels >= 1 then take
 * two adds per element, counted as such. hi and lo are multiples of 2^g with g = 2 * (the ulp
 * exponent of the smallest nonzero |d|), at least 2^-1074.
 *
 * ---- W32 --------------------------------------------------------------------------------------
 * With the block's |x| <= 2^m32 and s = 27 - m32, |y| = |x| 2^s <= 2^27, so 8 adds stay below
 * 2^30 in an int32 lane, and a widened int64 lane takes 2^33 such batches. x * 2^s is exact
 * unless it underflows (then inexact: the block fails); the conversion to int32 is exact iff y
 * is an integer (else the inexact flag) and fits (else invalid, also for NaN and inf). So a
 * block whose flags stay clear and whose max is <= 2^m32 added sum(y) exactly; the int64 lanes
 * are worth 2^-s each. s must keep 2^s a normal float: m32 in [-100, 153].
 *
 * ---- Floating-point environment ---------------------------------------------------------------
 * The kernels save the caller's environment (MXCSR on x86), run with round-to-nearest, no
 * flush-to-zero or denormals-are-zero, all exceptions masked and the flags clear, and restore the
 * caller's environment (flags included) on return. So the caller's mode cannot change a result,
 * and the kernels' flags do not leak.
 */
#include <math.h>
#include <limits.h>

#define XT_BITS 10
#define XL_MAX 4
#define XM_INIT (-1100)     /* "no nonzero value yet": every grid clamps to u = 2^-1074 */
#define XM_FAST_MAX (1023 - XT_BITS - 3) /* E0 = m + T + 3 <= 1023 */
#define XBLK_BYTES 65536    /* a block stays in L2 for a rerun; the flags are read once a block */
#define XW32_BITS 27        /* W32: |y| <= 2^27 */
#define XW32_ADDS 8         /* W32: adds per int32 lane between widenings */
/* The block loops prefetch TALLY_XPF_DIST bytes ahead (exact_kernels.h; a run-time setting, read
 * once per block): with a few ops per element between loads the
 * hardware prefetcher alone left a core at ~0.65 of a read loop's bandwidth from DRAM (compute
 * and memory did not overlap); with it ~0.8 (at 4 KiB ahead, on 2 cores). 16 KiB ahead, into L2:
 * with 16 cores sharing the bus each line takes longer to come, and the threaded pass prefetches
 * the same distance (cpu/state.h). Past the end of the data a prefetch is harmless. */
#define XPREFETCH(p) __builtin_prefetch((p), 0, 2)
#define XPREFETCH_L1(p) __builtin_prefetch((p), 0, 3)
/* Blocks between tries of a cheaper method: at first (more than the 16 blocks of the threaded
 * pass's 1 MiB calls, whose method comes from their own sample and stats: a try there, on data
 * that stay alike, fails and reruns a block, 1/16 of the call), */
#define XPROBE_MIN 32
#define XPROBE_MAX 256      /* and at most (doubling at each try) */

#if defined(__GNUC__)
#define XINLINE static inline __attribute__((always_inline))
#define XENTRY static __attribute__((unused)) /* a file may stamp bodies it uses in part */
#else
#define XINLINE static inline
#define XENTRY static
#endif

#ifndef XV_FEED_SUBR
#define XV_FEED_SUBR XV_SUB
#endif
#ifndef XV_SAE
#define XV_SAE 0
#define XV_ADD_NX XV_ADD
#define XV_SUB_NX XV_SUB
#define XV_MUL_NX XV_MUL
#define XV_FMS_NX XV_FMS
#endif

#ifndef TALLY_EXACT_IMPL_COMMON /* once per file, however many bodies it stamps */
#define TALLY_EXACT_IMPL_COMMON
#include <stdatomic.h>
/* The prefetch distances (exact_kernels.h: tally_exact_set_prefetch), read once per block. */
extern _Atomic uint32_t tally_xpf_far_, tally_xpf_near_;
static inline uint64_t tally_xpf_far_get_(void) {
    return atomic_load_explicit(&tally_xpf_far_, memory_order_relaxed);
}
static inline uint64_t tally_xpf_near_get_(void) {
    return atomic_load_explicit(&tally_xpf_near_, memory_order_relaxed);
}
/* SMALL's f32 method and its SPEC (exact_kernels.h: tally_exact_set_small_w32w, _spec), read
 * once per call. */
extern _Atomic int tally_xsmall_w32w_, tally_xsmall_spec_;
/* The large sums' speculative pass: SPECF where the ISA has it (1, the default), else SPEC
 * (exact_kernels.h: tally_exact_set_spec_fast), read once per call. */
extern _Atomic int tally_xspec_fast_;
#if !(defined(__x86_64__) || defined(__i386__))
#include <fenv.h>
#endif
enum { XK_SUM_F32 = 0, XK_SUM_F64 = 1, XK_SQ_F32 = 2, XK_SQ_F64 = 3 };
enum { XMODE_OMIT = 1, XMODE_MINMAX = 2 };           /* block modes */
enum { XM_W32 = 0, XM_LEV = 1, XM_BINS = 2, XM_SLOW = 3 }; /* methods, cheapest first */

static inline double tally_xgrid_(int e) { /* 1.5 * 2^e, -1022 <= e <= 1023 */
    return tally_exact_double_(((uint64_t)(e + 1023) << 52) | (1ull << 51));
}
static inline void tally_xgrids_(int m, int L, double *C) {
    int mk = m;
    for (int k = 0; k < L; k++) {
        int e = mk + XT_BITS + 3;
        if (e < -1022) e = -1022;
        C[k] = tally_xgrid_(e);
        mk = e - 53;
    }
}
/* The levels that bound m needs so that the last one's ulp is <= 2^g (at least Lmin); XL_MAX + 1
 * if more than XL_MAX. */
static inline int tally_xlevels_for_(int m, int g, int Lmin) {
    int e = m + XT_BITS + 3;
    for (int L = 1; L <= XL_MAX; L++) {
        if (e < -1022) e = -1022;
        if (e - 52 <= g) return L < Lmin ? Lmin : L;
        e = e - 53 + XT_BITS + 3;
    }
    return XL_MAX + 1;
}
/* 2^e as a double (0 below 2^-1074); e <= 1023. */
static inline double tally_xpow2_(int e) {
    if (e < -1074) return 0.0;
    if (e < -1022) return tally_exact_double_(1ull << (e + 1074));
    return tally_exact_double_((uint64_t)(e + 1023) << 52);
}
/* Smallest m with v <= 2^m, for finite v > 0. */
static inline int tally_xceil_log2_(double v) {
    uint64_t b = tally_exact_bits_(v);
    int e = (int)(b >> 52);
    if (e == 0) return -1022;
    return (b & 0x000fffffffffffffull) ? e - 1022 : e - 1023;
}

/* ---- the floating-point environment (see the top) ---- */
#if defined(__x86_64__) || defined(__i386__)
typedef unsigned tally_xfenv;
#define TALLY_XCSR_BASE 0x1F80u /* all exceptions masked, round to nearest, no FTZ / DAZ */
static inline unsigned tally_xcsr_get_(void) {
    unsigned c;
    __asm__ volatile("stmxcsr %0" : "=m"(c) : : "memory");
    return c;
}
static inline void tally_xcsr_set_(unsigned c) { __asm__ volatile("ldmxcsr %0" : : "m"(c) : "memory"); }
static inline void tally_xfenv_enter_(tally_xfenv *saved) {
    *saved = tally_xcsr_get_();
    tally_xcsr_set_(TALLY_XCSR_BASE);
}
static inline void tally_xfenv_leave_(const tally_xfenv *saved) { tally_xcsr_set_(*saved); }
static inline void tally_xfenv_clear_(void) { tally_xcsr_set_(TALLY_XCSR_BASE); }
/* Inexact or invalid since the last clear. */
static inline int tally_xfenv_raised_(void) { return (tally_xcsr_get_() & 0x21u) != 0; }
#else
typedef fenv_t tally_xfenv;
static inline void tally_xfenv_enter_(tally_xfenv *saved) {
    fegetenv(saved);
    fesetenv(FE_DFL_ENV);
}
static inline void tally_xfenv_leave_(const tally_xfenv *saved) { fesetenv(saved); }
static inline void tally_xfenv_clear_(void) { feclearexcept(FE_ALL_EXCEPT); }
static inline int tally_xfenv_raised_(void) { return fetestexcept(FE_INEXACT | FE_INVALID) != 0; }
#endif

/* acc += (neg ? -1 : 1) * v * 2^k, exactly. Needs k >= -TALLY_EXACT_BIAS and v * 2^k < 2^1059
 * (the chunks touched end below the top one): v << (p mod 32) spans at most 95 bits, three
 * chunks from p / 32 on, each changed by less than 2^32 (the add budget counts one add). */
static inline void tally_xadd_u64_(tally_exact *acc, uint64_t v, int k, int neg) {
    int p = k + TALLY_EXACT_BIAS;
    int i = p >> 5, s = p & 31;
    unsigned __int128 t = (unsigned __int128)v << s;
    int64_t c0 = (int64_t)((uint64_t)t & 0xffffffffu);
    int64_t c1 = (int64_t)((uint64_t)(t >> 32) & 0xffffffffu);
    int64_t c2 = (int64_t)(uint64_t)(t >> 64); /* < 2^31 */
    int64_t m = neg ? -1 : 0;
    acc->chunk[i] += (c0 ^ m) - m;
    acc->chunk[i + 1] += (c1 ^ m) - m;
    /* the bins' grouped flush adds its high part (v < 2^11) near the top, where chunk i + 2
     * would lie past the end: it is zero there, and never touched */
    if (c2) acc->chunk[i + 2] += (c2 ^ m) - m;
    if (++acc->nadds >= TALLY_EXACT_MAX_ADDS) tally_exact_normalize(acc);
}
static inline void tally_xadd_i64_(tally_exact *acc, int64_t v, int k) {
    if (v < 0) tally_xadd_u64_(acc, 0 - (uint64_t)v, k, 1);
    else if (v) tally_xadd_u64_(acc, (uint64_t)v, k, 0);
}

/* Element by element, exactly, with NaN/inf/-0 handling: the reference semantics. */
static inline void tally_xslow_(const void *x, uint64_t n, int kind, double mean, int omit_nan,
                                tally_exact *acc) {
    for (uint64_t i = 0; i < n; i++) {
        double v = (kind == XK_SUM_F32 || kind == XK_SQ_F32) ? (double)((const float *)x)[i]
                                                              : ((const double *)x)[i];
        if (v != v && omit_nan) continue;
        if (kind <= XK_SUM_F64) {
            tally_exact_add(acc, v);
            continue;
        }
        double d = v - mean;
        double hi = d * d;
        if (!(hi - hi == 0)) { /* NaN or inf */
            tally_exact_add(acc, hi);
            continue;
        }
        double lo = fma(d, d, -hi);
        acc->flags |= TALLY_EXACT_F_ANY | TALLY_EXACT_F_NONNEGZERO;
        tally_exact_add_finite_(acc, hi);
        tally_exact_add_finite_(acc, lo);
    }
}
/* IEEE 754-2019 minimum / maximum of a and b for the extremes, -0 < +0; a NaN b is skipped
 * (a never is NaN here). */
static inline double tally_xmin_(double a, double b) {
    return b < a || (b == a && tally_exact_bits_(b) >> 63) ? b : a;
}
static inline double tally_xmax_(double a, double b) {
    return b > a || (b == a && !(tally_exact_bits_(b) >> 63)) ? b : a;
}
/* The extremes of x[i0 .. i0+n) folded into *mn, *mx, element by element; returns the NaN count.
 * (The slow path's blocks and a call's last partial vector.) */
static inline unsigned tally_xslow_minmax_(const void *x, uint64_t i0, uint64_t n, int kind,
                                           double *mn, double *mx) {
    unsigned nans = 0;
    for (uint64_t i = i0; i < i0 + n; i++) {
        double v = kind == XK_SUM_F32 ? (double)((const float *)x)[i] : ((const double *)x)[i];
        if (v != v) {
            nans++;
            continue;
        }
        *mn = tally_xmin_(*mn, v);
        *mx = tally_xmax_(*mx, v);
    }
    return nans;
}
/* For a block whose level-0 inputs are all zero (NaNs skipped): bit 0 if some element is not
 * NaN (something was added), bit 1 if some element is neither NaN nor -0.0. */
static inline unsigned tally_xzero_block_flags_(const void *x, uint64_t n, int kind) {
    unsigned f = 0;
    for (uint64_t i = 0; i < n && f != 3; i++) {
        double v = (kind == XK_SUM_F32 || kind == XK_SQ_F32) ? (double)((const float *)x)[i]
                                                              : ((const double *)x)[i];
        if (v != v) continue;
        f |= 1;
        if (tally_exact_bits_(v) != 0x8000000000000000ull) f |= 2;
    }
    return f;
}

/* What a stats pass found over a block (NaNs skipped with omit_nan). */
typedef struct {
    double maxabs;  /* max |level-0 input|: |x|, or d*d for squared deviations */
    double minabs;  /* f64 sums: min |x| (zeros included; omitted NaNs count as zeros) */
    int64_t lsbkey; /* with want_lsb: min over the level inputs (x; hi and lo) of key(v) (see
                     * XVK_LSBMIN); INT64_MAX if all are zero */
    int nonfinite;  /* some level-0 input is inf or NaN (a NaN not omitted) */
    unsigned nans;  /* XMODE_OMIT: NaN elements */
    double mn, mx;  /* XMODE_MINMAX: extremes of the non-NaN elements (+inf / -inf: none) */
} tally_xstats;

/* g: every level input is a multiple of 2^g (from the stats' lsbkey), or a large number if all
 * are zero. */
static inline int tally_xgexp_(int64_t lsbkey) {
    return lsbkey >= INT_MAX / 2 ? INT_MAX / 2 : (int)(lsbkey - 2098);
}

/* ---- BINS: xsum's large accumulator ---------------------------------------------------------
 * f64: b64[sign+exponent] (the top 12 bits) holds a sum of 53-bit significands (with the implicit
 * bit; none for exponent 0) that all scale by 2^(max(e,1) - 1075): one unsigned add per element.
 * An add that would carry out of 64 bits first spills the bin exactly into the superaccumulator,
 * or (the loops fed by XB64_PREP) adds anyway and sends the carry, 2^64 units of the bin, there:
 * either way the bins plus the superaccumulator hold the exact sum (rare: 2^11 adds of one sign
 * and exponent). The bins from b64lo to b64hi (exponents, both
 * signs) may be nonzero; the end of a call spills them.
 * f32: b32[sign+exponent] += fraction + 2^40, so bits 40.. count the adds (the implicit bits,
 * count * 2^23 for e != 0, come back at the spill) and bits 0..39 sum the 23-bit fractions,
 * which holds 2^17 adds: all bins are spilled every 2^17 adds and at the end of a call.
 * Only finite values go in (blocks with NaN or inf take SLOW). One set per thread (thread-local,
 * zero at thread start, left zero by every call). */
#define TALLY_XB32_ADDS (1u << 17) /* f32 bins: adds between spills (2^17 * 2^23 = 2^40) */
typedef struct {
    uint64_t b64[4096];
    uint64_t b32[512];
    uint32_t n32; /* adds into b32 since it was spilled */
    int b64lo, b64hi;
} tally_xbins;
static _Thread_local tally_xbins tally_xbins_tls;

static inline void tally_xbins64_spill_(tally_exact *acc, unsigned ix, uint64_t v) {
    int e = (int)(ix & 0x7ff);
    tally_xadd_u64_(acc, v, (e ? e : 1) - 1075, (int)(ix >> 11));
}
/* The same, out of line: the rare spill inside the bins' loops (inlined, it cost the loop its
 * registers). */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static void tally_xbins64_spill_cold_(tally_exact *acc, unsigned ix, uint64_t v) {
    tally_xbins64_spill_(acc, ix, v);
}
/* A bin's add carried out of 64 bits (the bin kept the low 64 bits of the sum): the carry, 2^64
 * units of the bin, goes exactly into the superaccumulator. Out of line: rare (2^11 adds of one
 * sign and exponent at least). */
#if defined(__GNUC__)
__attribute__((noinline, cold, unused))
#endif
static void tally_xbins64_carry_cold_(tally_exact *acc, unsigned ix) {
    int e = (int)(ix & 0x7ff);
    tally_xadd_u64_(acc, 1, (e ? e : 1) - 1075 + 64, (int)(ix >> 11));
}
/* n finite doubles (as bits) into the bins. e0: some element may have exponent field 0 (zeros,
 * subnormals); without it the implicit bit is set unconditionally. */
static void tally_xbins64_add_(tally_xbins *b, tally_exact *acc, const uint64_t *restrict x,
                               uint64_t n, int e0) {
    uint64_t *restrict bin = b->b64;
#define TALLY_XBIN64(u, implicit)                                                                \
    do {                                                                                         \
        unsigned ix_ = (unsigned)((u) >> 52);                                                    \
        uint64_t m_ = ((u) & 0x000fffffffffffffull) | (implicit);                                \
        uint64_t o_ = bin[ix_], s_ = o_ + m_;                                                    \
        if (__builtin_expect(s_ < o_, 0)) {                                                      \
            tally_xbins64_spill_cold_(acc, ix_, o_);                                             \
            s_ = m_;                                                                             \
        }                                                                                        \
        bin[ix_] = s_;                                                                           \
    } while (0)
    if (!e0) {
        for (uint64_t i = 0; i < n; i++) TALLY_XBIN64(x[i], 1ull << 52);
    } else {
        for (uint64_t i = 0; i < n; i++)
            TALLY_XBIN64(x[i], (uint64_t)((x[i] & 0x7ff0000000000000ull) != 0) << 52);
    }
#undef TALLY_XBIN64
}
/* The bins of 8 consecutive exponents, both signs, go in as one signed 128-bit number: each
 * bin is below 2^64, shifted by less than 2^7 relative to the group's lowest weight (exponent 0
 * weighs as 1), so |sum| < 16 * 2^71 = 2^75. Two exact adds (its low and high 64 bits) per
 * group instead of one per bin: a call's flush over the whole range was ~1 cycle per element. */
static void tally_xbins64_flush_(tally_xbins *b, tally_exact *acc) {
    for (int g = b->b64lo & ~7; g <= b->b64hi; g += 8) {
        const int base = g ? g : 1;
        __int128 sum = 0;
        int any = 0;
        for (int e = g; e < g + 8 && e < 2047; e++) {
            uint64_t p = b->b64[e], q = b->b64[2048 + e];
            if (!(p | q)) continue;
            any = 1;
            b->b64[e] = b->b64[2048 + e] = 0;
            const int w = e ? e : 1;
            sum += ((__int128)p - (__int128)q) * ((__int128)1 << (w - base));
        }
        if (!any || sum == 0) continue;
        const int neg = sum < 0;
        const unsigned __int128 mag = neg ? -(unsigned __int128)sum : (unsigned __int128)sum;
        tally_xadd_u64_(acc, (uint64_t)mag, base - 1075, neg);
        if (mag >> 64) tally_xadd_u64_(acc, (uint64_t)(mag >> 64), base - 1075 + 64, neg);
    }
    b->b64lo = 2047;
    b->b64hi = 0;
}
/* A bin's value holds at most 2^17 adds (n32): its fraction sum is below 2^40 and its implicit
 * bits count * 2^23 <= 2^40, so val < 2^41, worth val * 2^(max(e,1) - 150). The two signs of
 * one exponent are subtracted (|difference| < 2^41) and 16 consecutive exponents are combined
 * with their relative shifts (< 2^15) into one int64 (|sum| < 16 * 2^56 = 2^60): 16 exact adds
 * into the superaccumulator instead of one per bin. Exponent 255 (inf, NaN) never enters. */
static inline int64_t tally_xbins32_val_(uint64_t v, unsigned e) {
    return (int64_t)((v & ((1ull << 40) - 1)) + (e ? (v >> 40) << 23 : 0));
}
static void tally_xbins32_flush_(tally_xbins *b, tally_exact *acc) {
    for (unsigned g = 0; g < 256; g += 16) {
        const unsigned base = g ? g : 1; /* exponent 0 (subnormals) weighs as exponent 1 */
        int64_t sum = 0;
        for (unsigned e = g; e < g + 16 && e < 255; e++) {
            uint64_t p = b->b32[e], q = b->b32[256 + e];
            if (!(p | q)) continue;
            b->b32[e] = b->b32[256 + e] = 0;
            const unsigned w = e ? e : 1;
            sum += (tally_xbins32_val_(p, e) - tally_xbins32_val_(q, e)) * ((int64_t)1 << (w - base));
        }
        tally_xadd_i64_(acc, sum, (int)base - 150);
    }
    b->n32 = 0;
}
/* The f32 probe that may leave BINS (see run), from the bins instead of a stats pass over the
 * block (which cost a 1 MiB call of f32 bins ~7% more: ~0.6 ns per element of its block): before[] holds the bins
 * as they were before the block, bins as after it, with no spill between. A bin whose value
 * changed took some of the block's elements (every add is at least 2^40, and the count field
 * does not wrap between spills); for exponent 0 only a change of the fraction sum (bits 0..39)
 * counts, so that zeros (2^40 added, nothing to the sum) do not make the data look wide. The
 * stats are bounds: |x| <= 2^(max(e_hi,1) - 126) and every x is a multiple of
 * 2^(max(e_lo,1) - 150). They only pick the next blocks' method, which runs checked. */
static inline void tally_xbins32_probe_(const uint64_t *before, const uint64_t *bins, tally_xstats *s) {
    int lo = 256, hi = -1;
    for (int i = 0; i < 512; i++) {
        const uint64_t d = before[i] ^ bins[i];
        const int e = i & 255;
        if (!d || (e == 0 && !(d & ((1ull << 40) - 1)))) continue;
        lo = e < lo ? e : lo;
        hi = e > hi ? e : hi;
    }
    memset(s, 0, sizeof *s);
    s->lsbkey = INT64_MAX;
    if (hi < 0) return; /* nothing but zeros: maxabs 0 */
    s->maxabs = tally_xpow2_((hi ? hi : 1) - 126);
    s->lsbkey = (int64_t)((lo ? lo : 1) - 150) + 2098;
}
static void tally_xbins32_loop_(uint64_t *restrict bin, const uint32_t *restrict x, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) bin[x[i] >> 23] += (x[i] & 0x7fffffu) + (1ull << 40);
}
typedef void (*tally_xbins32_loop_fn)(uint64_t *restrict bin, const uint32_t *restrict x, uint64_t n);
static void tally_xbins32_add_(tally_xbins *b, tally_exact *acc, const uint32_t *x, uint64_t n,
                               tally_xbins32_loop_fn loop) {
    while (n) {
        uint64_t room = TALLY_XB32_ADDS - b->n32, k = n < room ? n : room;
        loop(b->b32, x, k);
        b->n32 += (uint32_t)k;
        x += k;
        n -= k;
        if (b->n32 >= TALLY_XB32_ADDS) tally_xbins32_flush_(b, acc);
    }
}

#if defined(__SIZEOF_INT128__)
/* SMALL (below): d / 2^e as an integer into *k if d is finite, a multiple of 2^e and |d / 2^e| <
 * 2^58; else 0. Integer work on the bits (no scaling that could round or overflow). */
static inline int tally_xto_int_(double d, int e, int64_t *k) {
    const uint64_t b = tally_exact_bits_(d);
    const int be = (int)((b >> 52) & 0x7ff);
    if (be == 0x7ff) return 0;
    uint64_t sig = b & 0x000fffffffffffffull;
    int ex = -1074; /* d = sig * 2^ex */
    if (be) {
        sig |= 1ull << 52;
        ex = be - 1075;
    }
    if (sig == 0) {
        *k = 0;
        return 1;
    }
    const int sh = ex - e;
    uint64_t mag;
    if (sh >= 0) {
        if (sh > 5) return 0; /* sig >= 2^52 (or a subnormal's): keep below 2^58 */
        mag = sig << sh;
    } else {
        if (sh <= -64 || (sig & ((1ull << -sh) - 1))) return 0; /* not a multiple of 2^e */
        mag = sig >> -sh;
    }
    if (mag >> 58) return 0;
    *k = (b >> 63) ? -(int64_t)mag : (int64_t)mag;
    return 1;
}
/* |f| widened to a double, as bits, by integer operations only (the conversion instruction
 * raises the invalid flag on a signalling NaN). */
static inline uint64_t tally_xf32_abs_bits64_(uint32_t b) {
    const uint32_t a = b & 0x7fffffffu, e = a >> 23, m = a & 0x7fffffu;
    if (e == 0xff) return 0x7ff0000000000000ull | ((uint64_t)m << 29); /* inf, NaN */
    if (e) return ((uint64_t)(e + 1023 - 127) << 52) | ((uint64_t)m << 29);
    if (m == 0) return 0;
    const int top = 31 - __builtin_clz(m); /* subnormal m * 2^-149 = 2^(top-149) * (m / 2^top) */
    return ((uint64_t)(top - 149 + 1023) << 52) | (((uint64_t)m << (52 - top)) & 0x000fffffffffffffull);
}
/* SMALL's sample: max |x| and the exponent of the lowest set bit over x[0 .. k), element by
 * element (a handful: cheaper than a vector stats pass's set-up), by integer operations only: it
 * runs before the MXCSR is saved, and raises no flag. Each type in its own bits, without branches
 * (the f32 sample widened each element to a double's bits first: ~100 of a 4,096-element call's
 * ~500 ticks on the 2-core EPYC): with a = |x|'s bits, the biased exponent be (1 for subnormals)
 * and the significand's lowest set bit ctz(a | implicit bit) give the lowest set bit's exponent
 * (be - bias - mantissa bits) + ctz (a zero is skipped; an inf or NaN makes the max's bits reach
 * the all-ones exponent). Returns 0 if one is inf or NaN or all are zero. */
static inline int tally_xsample_(const void *x, int k, int f32, double *maxabs, int *g) {
    int lo = INT_MAX;
    if (f32) {
        uint32_t mx = 0;
#if defined(XSAMPLE_F32)
        XSAMPLE_F32((const float *)x, k, &mx, &lo);
#else
        for (int i = 0; i < k; i++) {
            uint32_t a;
            memcpy(&a, (const float *)x + i, sizeof a);
            a &= 0x7fffffffu;
            mx = a > mx ? a : mx;
            const int be = (int)(a >> 23);
            const int e = (be ? be : 1) - 150 + __builtin_ctz(a | 0x800000u);
            lo = a && e < lo ? e : lo;
        }
#endif
        if (mx == 0 || mx >= 0x7f800000u) return 0;
        *maxabs = tally_exact_double_(tally_xf32_abs_bits64_(mx));
    } else {
        uint64_t mx = 0;
#if defined(XSAMPLE_F64)
        XSAMPLE_F64((const double *)x, k, &mx, &lo);
#else
        for (int i = 0; i < k; i++) {
            uint64_t a;
            memcpy(&a, (const double *)x + i, sizeof a);
            a &= 0x7fffffffffffffffull;
            mx = a > mx ? a : mx;
            const int be = (int)(a >> 52);
            const int e = (be ? be : 1) - 1075 + __builtin_ctzll(a | (1ull << 52));
            lo = a && e < lo ? e : lo;
        }
#endif
        if (mx == 0 || mx >= 0x7ff0000000000000ull) return 0;
        *maxabs = tally_exact_double_(mx);
    }
    *g = lo;
    return 1;
}
/* V * 2^k rounded once to nearest, ties to even, as a double into *out. Returns 0 (and leaves
 * *out) where that result is zero, subnormal or beyond the normal range: the sign of an exact
 * zero and the subnormal range are left to the general path. */
static inline int tally_xround_i128_(__int128 V, int k, double *out) {
    if (V == 0) return 0;
    const uint64_t sign = V < 0;
    const unsigned __int128 M = sign ? -(unsigned __int128)V : (unsigned __int128)V;
    const uint64_t hi = (uint64_t)(M >> 64), lo = (uint64_t)M;
    const int nb = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll(lo);
    uint64_t mant;
    if (nb <= 53) {
        mant = lo << (53 - nb); /* exact */
        k -= 53 - nb;
    } else {
        const int sh = nb - 53;
        mant = (uint64_t)(M >> sh);
        const unsigned __int128 rem = M & (((unsigned __int128)1 << sh) - 1);
        const unsigned __int128 half = (unsigned __int128)1 << (sh - 1);
        k += sh;
        if (rem > half || (rem == half && (mant & 1))) {
            mant++;
            if (mant >> 53) { /* 2^53: one bit more */
                mant >>= 1;
                k++;
            }
        }
    }
    /* mant in [2^52, 2^53): the value is mant * 2^k, biased exponent k + 52 + 1023 */
    const int64_t be = (int64_t)k + 52 + 1023;
    if (be < 1 || be > 2046) return 0;
    *out = tally_exact_double_((sign << 63) | ((uint64_t)be << 52) | (mant & 0x000fffffffffffffull));
    return 1;
}
/* SMALL's masked rest: how many of the rest's n - full elements each of the 4 sets of w lanes
 * takes (full: the elements before it, a multiple of 4 * w). */
static inline void tally_xrest4_(int n, int full, int w, int k[4]) {
    for (int u = 0; u < 4; u++) {
        const int r = n - full - u * w;
        k[u] = r < 0 ? 0 : r > w ? w : r;
    }
}
/* W64W's and W64D's integer Y from its residue At modulo 2^64 and an approximation fy with
 * |fy - Y| < 2^62 (their proofs): At + 2^64 * floor((fy - At) / 2^64 + 1/2). */
static inline __int128 tally_xunwrap64_(double fy, int64_t At) {
    const double j = floor((fy - (double)At) * 0x1p-64 + 0.5);
    return (__int128)At + (__int128)(int64_t)j * ((__int128)1 << 64);
}
#endif
#endif /* TALLY_EXACT_IMPL_COMMON */

/* ---- per-ISA body ------------------------------------------------------------------------- */

XINLINE XV XFN(load)(const void *x, uint64_t i, int kind) {
    return (kind == XK_SUM_F32 || kind == XK_SQ_F32) ? XV_LOAD_F32((const float *)x + i)
                                                     : XV_LOAD_F64((const double *)x + i);
}
XINLINE XV XFN(load_part)(const void *x, uint64_t i, int k, int kind) {
    return (kind == XK_SUM_F32 || kind == XK_SQ_F32) ? XV_LOAD_F32_PART((const float *)x + i, k)
                                                     : XV_LOAD_F64_PART((const double *)x + i, k);
}
static inline double XFN(hmax)(XV v) {
    double lane[XW], mx = 0;
    XV_STORE(lane, v);
    for (int j = 0; j < XW; j++) mx = lane[j] > mx ? lane[j] : mx;
    return mx;
}
static inline unsigned XFN(orbits)(XV v) { /* 1 if some lane has a nonzero magnitude */
    double lane[XW];
    uint64_t orbits = 0;
    XV_STORE(lane, v);
    for (int j = 0; j < XW; j++) orbits |= tally_exact_bits_(lane[j]);
    return (orbits << 1) != 0; /* a -0 residue (from x = -0) is no residue */
}

/* The stats of x[i0 .. i0+len) (see tally_xstats), vector ops only; the lowest set bits (the
 * dearest part) only with want_lsb. */
XINLINE void XFN(stats_)(const void *x, uint64_t i0, int len, int kind, XV vmean, int mode,
                         int want_lsb, tally_xstats *o) {
    XV vmax0 = XV_ZERO(), vmax1 = XV_ZERO(), vmin0 = XV_SET1(HUGE_VAL), vmin1 = vmin0;
    XV fin = XV_ZERO(), emn = XV_SET1(HUGE_VAL), emx = XV_SET1(-HUGE_VAL);
    XVK lsb = XVK_INIT();
    unsigned nans = 0;
    const int omit = mode & XMODE_OMIT, minmax = mode & XMODE_MINMAX;
    const int full = len - len % XW;
    /* two vectors a step: two max chains (the op's latency) */
#define XSTAT(v, k, vmax, vmin)                                                                  \
    do {                                                                                         \
        if (omit) nans += (unsigned)__builtin_popcount(XV_NAN_MASK(v)); /* padding is +0 */     \
        if (kind <= XK_SUM_F64) {                                                                \
            if (minmax && (k) == XW) {                                                           \
                if (omit) {                                                                      \
                    emn = XV_MIN_ORD(emn, v);                                                    \
                    emx = XV_MAX_ORD(emx, v);                                                    \
                } else {                                                                         \
                    emn = XV_MIN(emn, v);                                                        \
                    emx = XV_MAX(emx, v);                                                        \
                }                                                                                \
            }                                                                                    \
            if (omit) v = XV_KEEP_ORD(v, v);                                                     \
            fin = XV_OR(fin, XV_SUB(v, v)); /* NaN where v is inf or NaN */                     \
            vmax = XV_MAXABS(vmax, v);                                                           \
            if (kind == XK_SUM_F64 && (k) == XW) vmin = XV_MINABS(vmin, v);                      \
            if (want_lsb) lsb = XVK_LSBMIN(lsb, v);                                              \
        } else {                                                                                 \
            XV d_ = XV_SUB(v, vmean);                                                            \
            XV hi_ = XV_MUL(d_, d_);                                                             \
            XV lo_ = XV_FMS(d_, d_, hi_);                                                        \
            if ((k) < XW) {                                                                      \
                hi_ = XV_KEEP(hi_, k);                                                           \
                lo_ = XV_KEEP(lo_, k);                                                           \
            }                                                                                    \
            if (omit) {                                                                          \
                hi_ = XV_KEEP_ORD(hi_, v);                                                       \
                lo_ = XV_KEEP_ORD(lo_, v);                                                       \
            }                                                                                    \
            fin = XV_OR(fin, XV_SUB(hi_, hi_));                                                  \
            vmax = XV_MAXABS(vmax, hi_);                                                         \
            if (want_lsb) lsb = XVK_LSBMIN(XVK_LSBMIN(lsb, hi_), lo_);                           \
        }                                                                                        \
    } while (0)
    int i = 0;
    const size_t es = (kind == XK_SUM_F32 || kind == XK_SQ_F32) ? 4 : 8;
    const uint64_t pfd = tally_xpf_far_get_();
    for (; i + 2 * XW <= len; i += 2 * XW) {
        for (int u = 0; u < 2 * XW * (int)es; u += 64)
            XPREFETCH((const char *)x + (i0 + (uint64_t)i) * es + pfd + u);
        XV v0 = XFN(load)(x, i0 + i, kind), v1 = XFN(load)(x, i0 + i + XW, kind);
        XSTAT(v0, XW, vmax0, vmin0);
        XSTAT(v1, XW, vmax1, vmin1);
    }
    for (; i < len; i += XW) {
        const int k = len - i < XW ? len - i : XW;
        XV v = k == XW ? XFN(load)(x, i0 + i, kind) : XFN(load_part)(x, i0 + i, k, kind);
        XSTAT(v, k, vmax0, vmin0);
    }
#undef XSTAT
    o->nonfinite = XV_NONZERO_MASK(fin) != 0;
    o->nans = nans;
    o->maxabs = XFN(hmax)(XV_MAXABS(vmax0, vmax1));
    double lane[XW];
    if (kind == XK_SUM_F64) {
        double mn = HUGE_VAL;
        XV_STORE(lane, XV_MINABS(vmin0, vmin1));
        for (int j = 0; j < XW; j++) mn = lane[j] < mn ? lane[j] : mn;
        for (int j = full; j < len; j++) { /* the partial vector (its padding is no data) */
            double v = fabs(((const double *)x)[i0 + (uint64_t)j]);
            if (v != v) v = 0; /* an omitted NaN counts as 0 (see minabs) */
            if (v < mn) mn = v;
        }
        o->minabs = mn;
    }
    o->lsbkey = INT64_MAX;
    if (want_lsb) {
        int64_t kl[XW];
        XVK_STORE(kl, lsb);
        for (int j = 0; j < XW; j++) o->lsbkey = kl[j] < o->lsbkey ? kl[j] : o->lsbkey;
    }
    if (minmax) {
        double lmn = HUGE_VAL, lmx = -HUGE_VAL;
        XV_STORE(lane, emn);
        for (int j = 0; j < XW; j++) lmn = tally_xmin_(lmn, lane[j]);
        XV_STORE(lane, emx);
        for (int j = 0; j < XW; j++) lmx = tally_xmax_(lmx, lane[j]);
        if (full < len) /* the partial vector's elements (their NaNs are counted above) */
            tally_xslow_minmax_(x, i0 + (uint64_t)full, (uint64_t)(len - full), kind, &lmn, &lmx);
        o->mn = lmn;
        o->mx = lmx;
    }
}
static void XFN(stats)(const void *x, uint64_t i0, int len, int kind, XV vmean, int mode,
                       int want_lsb, tally_xstats *o) {
    if (want_lsb) XFN(stats_)(x, i0, len, kind, vmean, mode, 1, o);
    else XFN(stats_)(x, i0, len, kind, vmean, mode, 0, o);
}

/* Runs v through levels k0..L-1 of one accumulator set. pe: the last level is a plain add, its
 * exactness read from the inexact flag (the other levels' adds raise none); else the last
 * level splits too and its residue is ORed into *res. */
XINLINE void XFN(feed)(XV *S, int k0, int L, XV v, XV *res, int pe) {
    for (int k = k0; k < L; k++) {
        if (pe && k == L - 1) {
            S[k] = XV_ADD(S[k], v);
            return;
        }
        XV s = pe ? XV_ADD_NX(S[k], v) : XV_ADD(S[k], v);
        XV q = XV_SUB(s, S[k]);
        S[k] = s;
        v = XV_FEED_SUBR(v, q);
    }
    *res = XV_OR(*res, v);
}

/* One vector of input (k < XW: only the first k lanes are data). With omit_nan, NaN lanes become
 * +0 (adding nothing) so that sparse NaNs keep the fast path; the flags for blocks of nothing
 * but zeros and NaNs come from tally_xzero_block_flags_. The block's bound comes from *vmax
 * (max |v|), or with XMODE_MINMAX from the extremes *vmn, *vmx (max |v| = max(-min, max)). A
 * partial vector (k < XW, the call's last elements) is left out of the extremes: its padding
 * lanes are +0, not data; XFN(block) folds those elements itself. In omit mode the extremes skip
 * NaN lanes and *nans counts them; otherwise a NaN makes the level-0 accumulator NaN and the
 * block goes the exact slow way, which counts it there. */
XINLINE void XFN(step)(XV *S, XV v, int k, int kind, int L, XV vmean, XV *vmax, XV *vmn,
                       XV *vmx, unsigned *nans, XV *res, int mode, int ext, int pe) {
    if (kind <= XK_SUM_F64) {
        if (mode & XMODE_MINMAX) {
            if (k == XW && ext) {
                if (mode & XMODE_OMIT) {
                    *vmn = XV_MIN_ORD(*vmn, v);
                    *vmx = XV_MAX_ORD(*vmx, v);
                    *nans += (unsigned)__builtin_popcount(XV_NAN_MASK(v));
                } else {
                    *vmn = XV_MIN(*vmn, v);
                    *vmx = XV_MAX(*vmx, v);
                }
            }
            if (mode & XMODE_OMIT) v = XV_KEEP_ORD(v, v);
        } else {
            if (mode & XMODE_OMIT) v = XV_KEEP_ORD(v, v);
            if (ext) *vmax = XV_MAXABS(*vmax, v);
        }
        XFN(feed)(S, 0, L, v, res, pe);
    } else {
        XV d = XV_SUB_NX(v, vmean);
        XV hi = XV_MUL_NX(d, d);
        XV lo = XV_FMS_NX(d, d, hi);
        if (k < XW) {
            hi = XV_KEEP(hi, k);
            lo = XV_KEEP(lo, k);
        }
        if (mode & XMODE_OMIT) {
            hi = XV_KEEP_ORD(hi, v);
            lo = XV_KEEP_ORD(lo, v);
        }
        *vmax = XV_MAXABS(*vmax, hi);
        XFN(feed)(S, 0, L, hi, res, pe);
        XFN(feed)(S, 1, L, lo, res, pe);
    }
}

#if defined(XF_W)
/* The extremes of f32 data from four reductions of their bits as 32-bit integers (no key
 * transform per element): unsigned, the non-negative floats (sign 0) order like their bits and
 * lie below every negative one, and the negative floats order by magnitude (bits without the
 * sign), -0 = 0x80000000 being the smallest; signed, the negative floats lie below the
 * non-negative ones. So with umin/umax/smin/smax over all bits:
 *   min = umax if it has the sign bit (some negative: the one of largest magnitude), else umin;
 *   max = smax if it is >= 0 as a signed int (some non-negative: the largest), else smin (all
 *         negative: the smallest signed int is the one of smallest magnitude, -0 first).
 * NaN bits would pass for values: only NaN-free blocks use this (without omit_nan a NaN sends
 * the block to the slow path). Returns the min; the max goes to *mx (folded in). */
XINLINE double XFN(xf_extremes)(XF fminu, XF fmaxu, XF fmins, XF fmaxs, double *mx) {
    uint32_t l0[XF_W], l1[XF_W], l2[XF_W], l3[XF_W];
    XF_STORE(l0, fminu);
    XF_STORE(l1, fmaxu);
    XF_STORE(l2, fmins);
    XF_STORE(l3, fmaxs);
    uint32_t umin = l0[0], umax = l1[0];
    int32_t smin = (int32_t)l2[0], smax = (int32_t)l3[0];
    for (int j = 1; j < XF_W; j++) {
        umin = l0[j] < umin ? l0[j] : umin;
        umax = l1[j] > umax ? l1[j] : umax;
        smin = (int32_t)l2[j] < smin ? (int32_t)l2[j] : smin;
        smax = (int32_t)l3[j] > smax ? (int32_t)l3[j] : smax;
    }
    uint32_t bmn = (umax >> 31) ? umax : umin, bmx = smax >= 0 ? (uint32_t)smax : (uint32_t)smin;
    float fmn, fmx;
    memcpy(&fmn, &bmn, sizeof fmn);
    memcpy(&fmx, &bmx, sizeof fmx);
    *mx = tally_xmax_(*mx, (double)fmx);
    return (double)fmn;
}
#define tally_xf_extremes_ XFN(xf_extremes)
#endif

/* What one LEV run of a block found. */
typedef struct {
    double bmax;    /* max |level-0 input| (0 if none) */
    int finite;     /* the level-0 accumulators stayed finite */
    unsigned res;   /* without pe: some last residue is nonzero */
    double mn, mx;  /* XMODE_MINMAX: extremes of the non-NaN elements (+inf / -inf: none) */
    unsigned nans;  /* XMODE_MINMAX with XMODE_OMIT: NaN elements */
} XFN(lres);

/* Runs one block of len elements through L levels (see XFN(lres)). Every max (or min/max) chain
 * has one accumulator per set: on one chain the op's latency bounded the f32 sum. */
XINLINE void XFN(block)(XV Sm[XU][XL_MAX], const void *x, uint64_t i0, int len, int kind, int L,
                        XV vmean, int mode, XFN(lres) *o) {
    const int pe = XV_SAE || (L == 1 && kind <= XK_SUM_F64);
    XV S[XU][XL_MAX]; /* a local copy the compiler can keep in registers */
    for (int w = 0; w < XU; w++)
        for (int k = 0; k < L; k++) S[w][k] = Sm[w][k];
    XV vmax[XU], vmn[XU], vmx[XU], res = XV_ZERO();
    for (int w = 0; w < XU; w++) {
        vmax[w] = XV_ZERO();
        vmn[w] = XV_SET1(HUGE_VAL);
        vmx[w] = XV_SET1(-HUGE_VAL);
    }
    unsigned nans = 0;
    int i = 0;
#if defined(XF_W) /* f32 sums: the extremes on the bits as loaded, see XF_W above */
    const int fx = kind == XK_SUM_F32 && (mode & XMODE_MINMAX) && !(mode & XMODE_OMIT);
    XF fminu = XF_SET1(0xffffffffu), fmaxu = XF_SET1(0), fmins = XF_SET1(0x7fffffffu),
       fmaxs = XF_SET1(0x80000000u);
#else
    const int fx = 0;
#endif
#if defined(XW32)
    /* Plain f32 sums take the bound's max on the floats as loaded (XPW a vector) instead of on
     * every widened vector of XW doubles: half the max ops (the levels fill the FP ports). A NaN
     * or inf makes the level-0 accumulators non-finite anyway, so the max may ignore it. */
    const int fm = kind == XK_SUM_F32 && mode == 0;
    XP pmax0 = XP_SET1(0.0f), pmax1 = XP_SET1(0.0f);
#else
    const int fm = 0;
#endif
    const uint64_t pfd = tally_xpf_far_get_();
    for (; i + XU * XW <= len; i += XU * XW) {
        for (int u = 0; u < XU * XW * (int)((kind == XK_SUM_F32 || kind == XK_SQ_F32) ? 4 : 8); u += 64)
            XPREFETCH((const char *)x + (i0 + i) * ((kind == XK_SUM_F32 || kind == XK_SQ_F32) ? 4 : 8) + pfd + u);
#if defined(XF_W)
        if (fx) {
            XF f = XF_LOAD((const float *)x + i0 + i);
            fminu = XF_MINU(fminu, f);
            fmaxu = XF_MAXU(fmaxu, f);
            fmins = XF_MINS(fmins, f);
            fmaxs = XF_MAXS(fmaxs, f);
        }
#endif
#if defined(XW32)
        if (fm) {
            for (int u = 0; u + 2 * XPW <= XU * XW; u += 2 * XPW) {
                pmax0 = XP_MAXABS(pmax0, XP_LOAD((const float *)x + i0 + i + u));
                pmax1 = XP_MAXABS(pmax1, XP_LOAD((const float *)x + i0 + i + u + XPW));
            }
            if ((XU * XW) % (2 * XPW))
                pmax0 = XP_MAXABS(pmax0, XP_LOAD((const float *)x + i0 + i + XU * XW - XPW));
        }
#endif
        for (int u = 0; u < XU; u++)
            XFN(step)(S[u], XFN(load)(x, i0 + i + u * XW, kind), XW, kind, L, vmean, &vmax[u],
                      &vmn[u], &vmx[u], &nans, &res, mode, !fx && !fm, pe);
    }
#if defined(XF_W)
    /* Reduced right away: live across the calls below, GCC 12 kept them in memory in the loop
     * (a store-load chain per step, f32 sum+min+max 2x slower). */
    double fxmn = HUGE_VAL, fxmx = -HUGE_VAL;
    if (fx && i > 0) fxmn = tally_xf_extremes_(fminu, fmaxu, fmins, fmaxs, &fxmx);
#endif
    int u = 0;
    for (; i + XW <= len; i += XW, u++)
        XFN(step)(S[u], XFN(load)(x, i0 + i, kind), XW, kind, L, vmean, &vmax[u], &vmn[u],
                  &vmx[u], &nans, &res, mode, 1, pe);
    const int tail = i;
    if (i < len)
        XFN(step)(S[u], XFN(load_part)(x, i0 + i, len - i, kind), len - i, kind, L, vmean,
                  &vmax[u], &vmn[u], &vmx[u], &nans, &res, mode, 1, pe);
    for (int w = 0; w < XU; w++)
        for (int k = 0; k < L; k++) Sm[w][k] = S[w][k];
    double lane[XW];
    unsigned bad = 0;
    for (int w = 0; w < XU; w++) bad |= XV_NONZERO_MASK(XV_SUB(S[w][0], S[w][0]));
    o->finite = bad == 0;
    double mx = 0;
    if (mode & XMODE_MINMAX) {
        XV a = vmn[0], b = vmx[0];
        for (int w = 1; w < XU; w++) {
            a = XV_MIN(a, vmn[w]);
            b = XV_MAX(b, vmx[w]);
        }
        double lmn = HUGE_VAL, lmx = -HUGE_VAL;
        XV_STORE(lane, a);
        for (int j = 0; j < XW; j++) lmn = tally_xmin_(lmn, lane[j]);
        XV_STORE(lane, b);
        for (int j = 0; j < XW; j++) lmx = tally_xmax_(lmx, lane[j]);
#if defined(XF_W)
        lmn = tally_xmin_(lmn, fxmn);
        lmx = tally_xmax_(lmx, fxmx);
#endif
        if (tail < len) /* the partial vector's elements */
            nans += tally_xslow_minmax_(x, i0 + (uint64_t)tail, (uint64_t)(len - tail), kind,
                                        &lmn, &lmx);
        o->mn = lmn;
        o->mx = lmx;
        o->nans = nans;
        if (-lmn > mx) mx = -lmn;
        if (lmx > mx) mx = lmx;
    } else {
        XV a = vmax[0];
        for (int w = 1; w < XU; w++) a = XV_MAXABS(a, vmax[w]);
        mx = XFN(hmax)(a);
#if defined(XW32)
        if (fm) {
            float pl[XPW];
            XP_STORE(pl, XP_MAXABS(pmax0, pmax1));
            for (int j = 0; j < XPW; j++) mx = (double)pl[j] > mx ? (double)pl[j] : mx;
        }
#endif
    }
    o->bmax = mx;
    o->res = pe ? 0 : XFN(orbits)(res);
}

/* The block with a run-time level count and mode, each case compiled with constant ones. */
static void XFN(block_l)(XV S[XU][XL_MAX], const void *x, uint64_t i0, int len, int kind, int L,
                         XV vmean, int mode, XFN(lres) *o) {
    switch (kind * 64 + mode * 8 + L) {
#define XCASE(K, MO, LL)                                                                         \
    case (K) * 64 + (MO) * 8 + (LL):                                                             \
        XFN(block)(S, x, i0, len, K, LL, vmean, (MO), o);                                        \
        return;
#define XCASES_L(K, MO) XCASE(K, MO, 1) XCASE(K, MO, 2) XCASE(K, MO, 3) XCASE(K, MO, 4)
#define XCASES_SUM(K)                                                                            \
    XCASES_L(K, 0)                                                                               \
    XCASES_L(K, XMODE_OMIT) XCASES_L(K, XMODE_MINMAX) XCASES_L(K, XMODE_MINMAX | XMODE_OMIT)
#define XCASES_SQ(K)                                                                             \
    XCASE(K, 0, 2) XCASE(K, 0, 3) XCASE(K, 0, 4)                                                 \
    XCASE(K, XMODE_OMIT, 2) XCASE(K, XMODE_OMIT, 3) XCASE(K, XMODE_OMIT, 4)
        XCASES_SUM(XK_SUM_F32)
        XCASES_SUM(XK_SUM_F64)
        XCASES_SQ(XK_SQ_F32)
        XCASES_SQ(XK_SQ_F64)
#undef XCASES_SQ
#undef XCASES_SUM
#undef XCASES_L
#undef XCASE
    default:
        o->finite = 0; /* not reached */
        return;
    }
}

/* Moves what the accumulators hold into the superaccumulator and restarts them at C. Each lane
 * value S - C is exact (same binade), a multiple of u_k, and at most 2^(E-2) in magnitude (the
 * invariant above); a sum of up to 8 of them is a multiple of u_k below 2^(E+1) = 2^53 u_k, so it
 * is exact in any order. So lanes are summed in groups of 8 with plain adds, and only one exact
 * add per group reaches the superaccumulator (a few per level instead of one per lane). */
static void XFN(flush)(XV S[XU][XL_MAX], const double *C, tally_exact *acc) {
    for (int k = 0; k < XL_MAX; k++) {
        unsigned used = 0; /* a level left at C (not used since the last flush) holds nothing */
        for (int u = 0; u < XU; u++) used |= XV_NONZERO_MASK(XV_SUB(S[u][k], XV_SET1(C[k])));
        if (!used) continue;
        double t = 0;
        int cnt = 0;
        for (int u = 0; u < XU; u++) {
            double lane[XW];
            XV_STORE(lane, XV_SUB(S[u][k], XV_SET1(C[k])));
            S[u][k] = XV_SET1(C[k]);
            for (int j = 0; j < XW; j++) {
                t += lane[j];
                if (++cnt == 8) {
                    if (t != 0) tally_exact_add_finite_(acc, t);
                    t = 0;
                    cnt = 0;
                }
            }
        }
        if (t != 0) tally_exact_add_finite_(acc, t);
    }
}

#if defined(XW32)
/* One W32 run over len floats (see W32 at the top): sum(x * scale) into the int64 lanes W.
 * Returns max |x| (NaN lanes skipped with omit). The caller checks the flags and the bound. */
XINLINE double XFN(w32_block_)(XL W[XU32][2], const float *x, int len, float scale, int omit,
                               int pf) {
    const uint64_t pfd = pf ? tally_xpf_far_get_() : 0;
    const XP vs = XP_SET1(scale);
    XP vmax[XU32];
    XI A[XU32];
    for (int u = 0; u < XU32; u++) {
        vmax[u] = XP_SET1(0.0f);
        A[u] = XI_ZERO();
    }
    int i = 0, batch = 0;
    for (; i + XU32 * XPW <= len; i += XU32 * XPW) {
        if (pf) /* not for SMALL: its data are in cache, and the loads' ports are busy enough */
            for (int u = 0; u < XU32 * XPW * 4; u += 64) XPREFETCH((const char *)(x + i) + pfd + u);
        for (int u = 0; u < XU32; u++) {
            XP v = XP_LOAD(x + i + u * XPW);
            if (omit) v = XP_KEEP_ORD(v);
            vmax[u] = XP_MAXABS(vmax[u], v);
            A[u] = XI_ADD(A[u], XP_CVT(XP_MUL(v, vs)));
        }
        if (++batch == XW32_ADDS) {
            for (int u = 0; u < XU32; u++) {
                XL_WIDEN_ADD(W[u][0], W[u][1], A[u]);
                A[u] = XI_ZERO();
            }
            batch = 0;
        }
    }
    /* the rest: at most XU32 vectors, one more add per set after a widening */
    for (int u = 0; u < XU32; u++) {
        XL_WIDEN_ADD(W[u][0], W[u][1], A[u]);
        A[u] = XI_ZERO();
    }
    for (int u = 0; i < len; i += XPW, u++) {
        const int k = len - i < XPW ? len - i : XPW;
        XP v = k == XPW ? XP_LOAD(x + i) : XP_LOAD_PART(x + i, k);
        if (omit) v = XP_KEEP_ORD(v);
        vmax[u] = XP_MAXABS(vmax[u], v);
        XL_WIDEN_ADD(W[u][0], W[u][1], XP_CVT(XP_MUL(v, vs)));
    }
    float lane[XPW], mx = 0;
    for (int u = 1; u < XU32; u++) vmax[0] = XP_MAXABS(vmax[0], vmax[u]);
    XP_STORE(lane, vmax[0]);
    for (int j = 0; j < XPW; j++) mx = lane[j] > mx ? lane[j] : mx;
    return (double)mx;
}
static double XFN(w32_block)(XL W[XU32][2], const float *x, int len, float scale, int omit) {
    if (omit) return XFN(w32_block_)(W, x, len, scale, 1, 1);
    return XFN(w32_block_)(W, x, len, scale, 0, 1);
}
/* Adds sum(W) * 2^-s exactly to acc and zeroes W. nadded: elements added into W since it was
 * zero. Each |y| <= 2^27, so any sum of lanes (a sum of some of those y) is at most
 * nadded * 2^27 in magnitude: below 2^62 the lanes are summed as they are, vector by vector
 * (no order can overflow). Otherwise each lane is split into its low 32 bits (unsigned) and
 * the rest (signed), whose sums cannot overflow. */
static void XFN(w32_flush)(XL W[XU32][2], int s, uint64_t nadded, tally_exact *acc) {
    if (nadded < ((uint64_t)1 << (62 - XW32_BITS))) {
        XL t = XL_ZERO();
        for (int u = 0; u < XU32; u++) {
            t = XL_ADD(t, XL_ADD(W[u][0], W[u][1]));
            W[u][0] = W[u][1] = XL_ZERO();
        }
        int64_t lane[XPW / 2], sum = 0;
        XL_STORE(lane, t);
        for (int j = 0; j < XPW / 2; j++) sum += lane[j];
        tally_xadd_i64_(acc, sum, -s);
        return;
    }
    int64_t lo = 0, hi = 0;
    for (int u = 0; u < XU32; u++)
        for (int h = 0; h < 2; h++) {
            int64_t lane[XPW / 2];
            XL_STORE(lane, W[u][h]);
            W[u][h] = XL_ZERO();
            for (int j = 0; j < XPW / 2; j++) {
                lo += (int64_t)((uint64_t)lane[j] & 0xffffffffu);
                hi += lane[j] >> 32; /* arithmetic: floor(lane / 2^32) */
            }
        }
    tally_xadd_i64_(acc, lo, -s);
    tally_xadd_i64_(acc, hi, 32 - s);
}
#endif

/* The per-call state of the LEV and W32 methods. */
typedef struct {
    XV S[XU][XL_MAX];
    double C[XL_MAX];
    double bound; /* 2^m */
    int m, L;
    unsigned cnt; /* adds per lane per level since the last flush (upper bound) */
    int lev_used, lev_ready; /* ready: S and C are set up for bound m */
#if defined(XW32)
    XL W[XU32][2];
    int m32, w32_used; /* scale 2^(27 - m32) */
    uint64_t w32_n;    /* elements added into W since it was zero */
#endif
} XFN(state);

static void XFN(lev_setm)(XFN(state) *st, int m, tally_exact *acc) {
    if (st->lev_used) XFN(flush)(st->S, st->C, acc);
    st->lev_ready = 1;
    st->m = m;
    tally_xgrids_(m, XL_MAX, st->C);
    st->bound = tally_xpow2_(m);
    for (int u = 0; u < XU; u++)
        for (int k = 0; k < XL_MAX; k++) st->S[u][k] = XV_SET1(st->C[k]);
    st->cnt = 0;
    st->lev_used = 0;
}

/* The cheapest method that is exact for a block with stats s (finite), setting it up (a new
 * bound or scale flushes what the method held). shrink: the LEV bound may also go down. BINS
 * takes no NaN (omitted ones included): such blocks go the slow way. */
static int XFN(choose)(XFN(state) *st, const tally_xstats *s, int kind, int w32_ok, int shrink,
                       tally_exact *acc) {
    const int Lmin = kind <= XK_SUM_F64 ? 1 : 2;
    if (!(s->maxabs > 0)) { /* nothing nonzero: any level count adds it exactly */
        if (st->L < Lmin) st->L = Lmin;
        return XM_LEV;
    }
    const int mneed = tally_xceil_log2_(s->maxabs);
    if (mneed > XM_FAST_MAX) return s->nans ? XM_SLOW : XM_BINS;
    const int g = tally_xgexp_(s->lsbkey);
#if defined(XW32)
    if (w32_ok) {
        if (st->w32_used && mneed <= st->m32 && g >= st->m32 - XW32_BITS) return XM_W32;
        if (mneed >= -100 && g >= mneed - XW32_BITS) {
            if (st->w32_used) XFN(w32_flush)(st->W, XW32_BITS - st->m32, st->w32_n, acc);
            st->w32_n = 0;
            st->m32 = mneed;
            st->w32_used = 1;
            return XM_W32;
        }
    }
#else
    (void)w32_ok;
#endif
    int m = st->m > mneed ? st->m : mneed;
    if (shrink && mneed + 8 < st->m) m = mneed;
    const int L = tally_xlevels_for_(m, g, Lmin);
    if (L > XL_MAX) return s->nans ? XM_SLOW : XM_BINS;
    if (m != st->m || !st->lev_ready) XFN(lev_setm)(st, m, acc);
    st->L = L;
    return XM_LEV;
}

/* The bins' loops prefetch TALLY_XPF_DIST ahead as the other methods' do: without it the scalar adds
 * into the bins and the reads from memory did not overlap (a call from DRAM took the in-cache
 * time plus more than a read loop's). One prefetch per 64 bytes of input, spread through the
 * scalar adds (XBINS_PF_LINE), not one burst per group of XB32_N / XB64_N elements (16 or 32
 * lines): on Intel cores a software prefetch holds one of the L1's 16 fill buffers until its
 * line comes, so a burst took them all and the next group's own loads waited about a memory
 * latency per group, i.e. time = compute + memory instead of the larger of the two; from DRAM
 * on one core that burst cost a quarter to a third of the call (full-range f32 and f64). */
#define XBINS_PF_LINE(p, far, near)                                                              \
    do {                                                                                         \
        XPREFETCH((const char *)(p) + (far));                                                    \
        if (near) XPREFETCH_L1((const char *)(p) + (near));                                      \
    } while (0)
#if defined(XB32_PREP)
/* The adds of one prepared group of XB32_N floats at x, with a prefetch per 16 (64 bytes). */
#define XBINS32_GROUP(bin, idx, add, x, far, near)                                               \
    do {                                                                                         \
        for (int j_ = 0; j_ < XB32_N; j_ += 16) {                                                \
            XBINS_PF_LINE((x) + j_, far, near);                                                  \
            for (int k_ = j_; k_ < j_ + 16; k_ += 4) {                                           \
                (bin)[(idx)[k_]] += (add)[k_];                                                   \
                (bin)[(idx)[k_ + 1]] += (add)[k_ + 1];                                           \
                (bin)[(idx)[k_ + 2]] += (add)[k_ + 2];                                           \
                (bin)[(idx)[k_ + 3]] += (add)[k_ + 3];                                           \
            }                                                                                    \
        }                                                                                        \
    } while (0)
/* tally_xbins32_loop_ with the bin index and the addend of XB32_N floats at a time computed by
 * vector ops (XB32_PREP) into two small arrays: the scalar adds into the bins are then one
 * load, one add to memory, with no shifts and masks between them (the scalar loop was bound by
 * its instruction count, not by the bins' loads and stores). Same adds, same bins. */
static void XFN(bins32_loop)(uint64_t *restrict bin, const uint32_t *restrict x, uint64_t n) {
    __asm__("" : "+r"(bin)); /* kept in a register (see bins64_add) */
    _Alignas(64) uint32_t idx[XB32_N];
    _Alignas(64) uint64_t add[XB32_N];
    const uint64_t far = tally_xpf_far_get_(), near = tally_xpf_near_get_();
    uint64_t i = 0;
    for (; i + XB32_N <= n; i += XB32_N) {
        XB32_PREP(x + i, idx, add);
        XBINS32_GROUP(bin, idx, add, x + i, far, near);
    }
    tally_xbins32_loop_(bin, x + i, n - i);
}
#define XBINS32_LOOP XFN(bins32_loop)

/* A block of len f32 (as bits) into the bins if every element is finite: returns 1 then;
 * else 0, and the bins are as before. For plain sums (no NaN omitted, no extremes), where
 * BINS then needs no stats pass: the finiteness comes from the prep (exponent field 255), and a
 * block that has an inf or NaN takes back the adds it made (the bins are sums modulo 2^64, so
 * subtracting them restores every bit) and goes the usual way. The bins are spilled first if
 * the block could take them past TALLY_XB32_ADDS adds, so none is spilled in the middle. */
static int XFN(bins32_try)(tally_xbins *b, tally_exact *acc, const uint32_t *restrict x, int len) {
    if (b->n32 + (uint64_t)len > TALLY_XB32_ADDS) tally_xbins32_flush_(b, acc);
    uint64_t *restrict bin = b->b32;
    __asm__("" : "+r"(bin));
    _Alignas(64) uint32_t idx[XB32_N];
    _Alignas(64) uint64_t add[XB32_N];
    const uint64_t far = tally_xpf_far_get_(), near = tally_xpf_near_get_();
    int i = 0, bad = 0;
    for (; i + XB32_N <= len; i += XB32_N) {
        if (!XB32_PREP(x + i, idx, add)) {
            bad = 1;
            break;
        }
        XBINS32_GROUP(bin, idx, add, x + i, far, near);
    }
    for (int j = i; j < len && !bad; j++) bad = (x[j] & 0x7f800000u) == 0x7f800000u;
    if (bad) {
        for (int j = 0; j < i; j++) bin[x[j] >> 23] -= (x[j] & 0x7fffffu) + (1ull << 40);
        return 0;
    }
    tally_xbins32_loop_(bin, x + i, (uint64_t)(len - i));
    b->n32 += (uint32_t)len;
    return 1;
}
#else
#define XBINS32_LOOP tally_xbins32_loop_
#endif

#if defined(XB64_PREP)
/* The adds of one prepared group into the bins: bin[idx[j]] += sig[j], and a carry out of 64 bits
 * (the bin keeps the low 64 bits) goes to the superaccumulator (tally_xbins64_carry_cold_), so
 * the bins plus what was carried are always the exact sum. On x86 with GCC or clang each add is
 * one add to memory whose carry flag is tested (asm goto), four per step: the C form (load,
 * add, compare, branch, store; GCC did not unroll it) took about a third more time. */
#ifndef TALLY_XBINS64_GROUP_DEFINED
#define TALLY_XBINS64_GROUP_DEFINED
#if defined(__GNUC__) && defined(__x86_64__)
#define XBIN64_ADD_ASM_(bin, idx, sig, j, u, lbl)                                                \
    __asm__ goto("addq %1, (%0,%2,8)\n\tjc %l[" #lbl "]"                                      \
                 :                                                                               \
                 : "r"(bin), "r"((sig)[(j) + (u)]), "r"((idx)[(j) + (u)])                        \
                 : "cc", "memory"                                                                \
                 : lbl)
static inline __attribute__((always_inline)) void tally_xbins64_group_(
    uint64_t *bin, const uint64_t *idx, const uint64_t *sig, int n, tally_exact *acc,
    const uint64_t *x, uint64_t far, uint64_t near) {
    for (int j = 0; j < n; j += 4) {
        if ((j & 7) == 0) XBINS_PF_LINE(x + j, far, near); /* one line per 8 doubles */
        XBIN64_ADD_ASM_(bin, idx, sig, j, 0, cy0);
    a1:
        XBIN64_ADD_ASM_(bin, idx, sig, j, 1, cy1);
    a2:
        XBIN64_ADD_ASM_(bin, idx, sig, j, 2, cy2);
    a3:
        XBIN64_ADD_ASM_(bin, idx, sig, j, 3, cy3);
        continue;
    cy0:
        tally_xbins64_carry_cold_(acc, (unsigned)idx[j]);
        goto a1;
    cy1:
        tally_xbins64_carry_cold_(acc, (unsigned)idx[j + 1]);
        goto a2;
    cy2:
        tally_xbins64_carry_cold_(acc, (unsigned)idx[j + 2]);
        goto a3;
    cy3:
        tally_xbins64_carry_cold_(acc, (unsigned)idx[j + 3]);
    }
}
#else
static inline void tally_xbins64_group_(uint64_t *bin, const uint64_t *idx, const uint64_t *sig,
                                        int n, tally_exact *acc, const uint64_t *x, uint64_t far,
                                        uint64_t near) {
    for (int j = 0; j < n; j++) {
        if ((j & 7) == 0) XBINS_PF_LINE(x + j, far, near);
        const uint64_t o = bin[idx[j]], t = o + sig[j];
        bin[idx[j]] = t;
        if (__builtin_expect(t < o, 0)) tally_xbins64_carry_cold_(acc, (unsigned)idx[j]);
    }
}
#endif
#endif
#define XBINS64_GROUP(bin, idx, sig, acc, x, far, near)                                          \
    tally_xbins64_group_((bin), (idx), (sig), XB64_N, (acc), (x), (far), (near))
/* tally_xbins64_add_ (e0 = 1: the implicit bit from the exponent field) with the bin indices and
 * significands of XB64_N doubles at a time computed by vector ops (XB64_PREP), as for f32. */
static void XFN(bins64_add)(tally_xbins *b, tally_exact *acc, const uint64_t *restrict x,
                            uint64_t n) {
    uint64_t *restrict bin = b->b64;
    __asm__("" : "+r"(bin)); /* kept in a register: GCC recomputed the thread-local address per element */
    _Alignas(64) uint64_t idx[XB64_N];
    _Alignas(64) uint64_t sig[XB64_N];
    const uint64_t far = tally_xpf_far_get_(), near = tally_xpf_near_get_();
    uint64_t i = 0;
    for (; i + XB64_N <= n; i += XB64_N) {
        (void)XB64_PREP(x + i, idx, sig); /* finite: the stats said so */
        XBINS64_GROUP(bin, idx, sig, acc, x + i, far, near);
    }
    tally_xbins64_add_(b, acc, x + i, n - i, 1);
}
#define XBINS64_ADD(b, acc, x, n, e0) XFN(bins64_add)((b), (acc), (x), (n))

/* Plain f64 sums in BINS without a stats pass (as bins32_try for f32): the leading elements of a
 * block of len doubles (as bits) go into the bins, XB64_N at a time, up to the first group that
 * holds an inf or NaN (the prep says so before any of the group is added). Returns how many
 * were added (len if all); the caller adds the rest element by element (SLOW), which is exact
 * whatever the split. Without the stats the call's flush cannot know the exponents seen, so it
 * runs over all of them (a few thousand cycles a call, in calls of up to 1 MiB). The stats pass
 * had cost a second pass over every block: from memory, the blocks' time was the stats pass's
 * read plus the bins' work on the then cached data, instead of the larger of the two. */
static int XFN(bins64_try)(tally_xbins *b, tally_exact *acc, const uint64_t *restrict x, int len) {
    uint64_t *restrict bin = b->b64;
    __asm__("" : "+r"(bin));
    _Alignas(64) uint64_t idx[XB64_N];
    _Alignas(64) uint64_t sig[XB64_N];
    const uint64_t far = tally_xpf_far_get_(), near = tally_xpf_near_get_();
    int i = 0;
    b->b64lo = 0;
    b->b64hi = 2046;
    for (; i + XB64_N <= len; i += XB64_N) {
        if (!XB64_PREP(x + i, idx, sig)) return i;
        XBINS64_GROUP(bin, idx, sig, acc, x + i, far, near);
    }
    for (int j = i; j < len; j++)
        if ((x[j] & 0x7ff0000000000000ull) == 0x7ff0000000000000ull) return i;
    tally_xbins64_add_(b, acc, x + i, (uint64_t)(len - i), 1);
    return len;
}
#else
#define XBINS64_ADD(b, acc, x, n, e0) tally_xbins64_add_((b), (acc), (x), (n), (e0))
#endif

/* A finite, NaN-free block with stats s into the bins (BINS). */
static void XFN(bins_block)(tally_xbins *b, tally_exact *acc, const void *xb, int len, int kind,
                            double mean, const tally_xstats *s) {
    if (kind == XK_SUM_F32) {
        tally_xbins32_add_(b, acc, (const uint32_t *)xb, (uint64_t)len, XBINS32_LOOP);
        return;
    }
    int ehi = (int)(tally_exact_bits_(s->maxabs) >> 52), elo = 0, e0 = 1;
    if (kind == XK_SUM_F64) {
        e0 = !(s->minabs >= 0x1p-1022); /* some zero or subnormal */
        if (!e0) elo = (int)(tally_exact_bits_(s->minabs) >> 52);
        XBINS64_ADD(b, acc, (const uint64_t *)xb, (uint64_t)len, e0);
    } else { /* squared deviations: hi and lo of each element, as the slow path has them */
        uint64_t buf[512];
        for (int i = 0; i < len; i += 256) {
            int k = len - i < 256 ? len - i : 256;
            for (int j = 0; j < k; j++) {
                double v = kind == XK_SQ_F32 ? (double)((const float *)xb)[i + j]
                                             : ((const double *)xb)[i + j];
                double d = v - mean, hi = d * d, lo = fma(d, d, -hi);
                buf[2 * j] = tally_exact_bits_(hi);
                buf[2 * j + 1] = tally_exact_bits_(lo);
            }
            XBINS64_ADD(b, acc, buf, 2 * (uint64_t)k, 1);
        }
    }
    if (elo < b->b64lo) b->b64lo = elo;
    if (ehi > b->b64hi) b->b64hi = ehi;
}

/* One call: blocks of XBLK_BYTES, each by the method of the last one, unless it fails (then the
 * block's stats pick the method) or it is time to try a cheaper one (see Methods at the top). */
static void XFN(run)(const void *x, uint64_t n, int kind, double mean, int omit_nan,
                     tally_exact *acc, tally_xminmax *mm) {
    if (n == 0) return;
    tally_xfenv fenv;
    tally_xfenv_enter_(&fenv);
    const int f32 = kind == XK_SUM_F32 || kind == XK_SQ_F32;
    const size_t esize = f32 ? 4 : 8;
    const int blk = (int)(XBLK_BYTES / esize);
    const int mode = (omit_nan ? XMODE_OMIT : 0) | (mm ? XMODE_MINMAX : 0);
    const int w32_ok = kind == XK_SUM_F32 && !mm;
    const int Lmin = kind <= XK_SUM_F64 ? 1 : 2;
    const XV vmean = XV_SET1(mean);
    XFN(state) st;
    st.L = Lmin;
    st.m = XM_INIT;
    st.lev_used = st.lev_ready = 0; /* set up when first used (a W32 call never needs it) */
    XV saved[XU][XL_MAX];
#if defined(XW32)
    st.m32 = 0;
    st.w32_used = 0;
    st.w32_n = 0;
    for (int u = 0; u < XU32; u++) st.W[u][0] = st.W[u][1] = XL_ZERO();
    XL Wsaved[XU32][2];
#endif
    /* adds per lane per level in one block (upper bound): the vectors are dealt round-robin */
    const unsigned per_block = (unsigned)((((blk + XW - 1) / XW) + XU - 1) / XU) *
                               (kind <= XK_SUM_F64 ? 1u : 2u);
    tally_xbins *bins = &tally_xbins_tls;
    int bins64 = 0, bins32 = 0;
    unsigned bins_blocks = 0;
    int any_fast = 0, nonneg = kind > XK_SUM_F64;
    double mn = HUGE_VAL, mx = -HUGE_VAL; /* the call's extremes (mm) */
    uint64_t nans = 0;
    int method, since_try = 0, gap = XPROBE_MIN;
    /* dirty: the inexact / invalid flags may be set (the checked runs need them clear); other
     * code may raise them: stats, BINS and SLOW for squared deviations, a failed run */
    int dirty;
    double recent = 0; /* max |level-0 input| since the last try */
    { /* the first method from a sample: a wrong guess costs one block */
        tally_xstats s;
        XFN(stats)(x, 0, (int)(n < 64 ? n : 64), kind, vmean, mode & XMODE_OMIT, 1, &s);
        dirty = s.nonfinite || kind > XK_SUM_F64; /* inf - inf, or the squares' roundings */
        method = XM_LEV;
        if (!s.nonfinite) {
            /* BINS (the sample's span is too wide for the levels) takes the block's stats
             * first, at the top of the loop: no failed run of the levels first */
            method = XFN(choose)(&st, &s, kind, w32_ok, 0, acc);
            if (method == XM_LEV && s.maxabs > 0) {
                /* The block's extremes lie beyond the sample's, often: its max by a binade or
                 * two, its lowest bit by a few (2^-40..2^40 data failed the sample's levels
                 * about every other call, and the block ran twice). The levels get 4 binades
                 * of room above and 8 bits below; W32 keeps the sample's (its 27 bits fit
                 * price-like data exactly, and its try is cheap). */
                tally_xstats wide = s;
                wide.maxabs = s.maxabs * 16.0;
                if (wide.lsbkey != INT64_MAX) /* no lower than 2^-1074 (key 1024) */
                    wide.lsbkey = wide.lsbkey - 8 < 1024 ? 1024 : wide.lsbkey - 8;
                method = XFN(choose)(&st, &wide, kind, 0, 0, acc);
            }
            if (method == XM_SLOW) method = XM_BINS; /* a NaN in the sample: decided per block */
        }
    }
    for (uint64_t i0 = 0; i0 < n; i0 += (uint64_t)blk) {
        const int len = (int)(n - i0 < (uint64_t)blk ? n - i0 : (uint64_t)blk);
        const void *xb = (const char *)x + i0 * esize;
        tally_xstats s;
        int have_stats = 0, tries = 0, bm = method, trying = 0;
        double bmax = 0;
        int direct = 0; /* added to the bins without stats (see bins32_try, bins64_try) */
        int slow_rest = 0; /* of those, the last ones went the SLOW way (see bins64_try) */
        if (method == XM_BINS) { /* needs the block's finiteness; the lsb now and then, to leave */
            dirty = 1;
            /* every 16th block in BINS, from the 8th: not the first (the sample has just chosen
             * BINS; the stats pass cost a call of 4 blocks a quarter more), and once in a 1 MiB
             * call of the threaded pass, in its middle: the direct blocks' probe (below) picks
             * the method of the blocks after it */
            const int lsb = ++bins_blocks % 16 == 8;
            int probed = 0;
#if defined(XB32_PREP)
            if (kind == XK_SUM_F32 && mode == 0) {
                uint64_t before[512]; /* the f32 probe: the bins before the block (see below) */
                if (lsb) {
                    if (bins->n32 + (uint64_t)len > TALLY_XB32_ADDS) tally_xbins32_flush_(bins, acc);
                    memcpy(before, bins->b32, sizeof before); /* bins32_try will not spill now */
                }
                if (XFN(bins32_try)(bins, acc, (const uint32_t *)xb, len)) {
                    direct = 1;
                    bins32 = 1;
                    if (lsb) {
                        tally_xbins32_probe_(before, bins->b32, &s);
                        method = XFN(choose)(&st, &s, kind, w32_ok, 1, acc);
                        probed = 1;
                    }
                }
            }
#endif
#if defined(XB64_PREP)
            if (kind == XK_SUM_F64 && mode == 0) {
                const int k = XFN(bins64_try)(bins, acc, (const uint64_t *)xb, len);
                bins64 = 1;
                direct = 1;
                if (k < len) { /* an inf or NaN from element k's group on */
                    tally_xslow_((const double *)xb + k, (uint64_t)(len - k), kind, mean, omit_nan, acc);
                    tally_xmethod_n[XM_SLOW] += (uint64_t)(len - k);
                    slow_rest = len - k;
                }
            }
#endif
            if (direct && lsb && slow_rest == 0 && !probed) {
                /* The probe that may leave BINS, after the block went in directly: its stats,
                 * now read from cache (before, they read the block from memory and the bins then
                 * worked on it in cache, time = read + bins for that block), choose the method
                 * of the NEXT block, which runs it optimistically as after any change (a wrong
                 * choice fails its checks and is corrected from that block's own stats). The
                 * block itself is in the bins already, exactly; the stats see it whole and
                 * finite (a direct block with an inf or NaN went SLOW from there: no probe). */
                XFN(stats)(x, i0, len, kind, vmean, mode, 1, &s);
                if (!s.nonfinite) method = XFN(choose)(&st, &s, kind, w32_ok, 1, acc);
            }
            if (!direct) {
                XFN(stats)(x, i0, len, kind, vmean, mode, lsb, &s);
                have_stats = lsb;
                if (s.nonfinite || s.nans) bm = XM_SLOW;
                else if (lsb) bm = XFN(choose)(&st, &s, kind, w32_ok, 1, acc);
            }
        } else if (++since_try >= gap) { /* try the next cheaper method; failing costs a rerun */
            since_try = 0;
            gap = gap * 2 < XPROBE_MAX ? gap * 2 : XPROBE_MAX;
            if (method == XM_LEV && recent > 0) {
                const int mr = tally_xceil_log2_(recent);
#if defined(XW32)
                if (w32_ok && mr >= -100 && mr <= 128) {
                    if (st.w32_used && st.m32 != mr) {
                        XFN(w32_flush)(st.W, XW32_BITS - st.m32, st.w32_n, acc);
                        st.w32_n = 0;
                    }
                    st.m32 = mr;
                    st.w32_used = 1;
                    bm = XM_W32;
                    trying = 1;
                } else
#endif
                {
                    if (mr + 8 < st.m) XFN(lev_setm)(&st, mr, acc); /* the data shrank */
                    if (st.L > Lmin) {
                        st.L--;
                        trying = 1;
                    }
                }
            }
            recent = 0;
        }
        for (; !direct;) {
            if ((bm == XM_W32 || bm == XM_LEV) && tries++ == 3)
                bm = XM_SLOW; /* never: a method chosen from stats is exact by its proof */
            if (bm == XM_SLOW) {
                dirty = 1;
                tally_xslow_(xb, (uint64_t)len, kind, mean, omit_nan, acc);
                if (mm) nans += tally_xslow_minmax_(x, i0, (uint64_t)len, kind, &mn, &mx);
                break;
            }
            if (bm == XM_BINS) { /* only chosen from this block's stats (finite, no NaN) */
                dirty = 1;
                XFN(bins_block)(bins, acc, xb, len, kind, mean, &s);
                if (kind == XK_SUM_F32) bins32 = 1;
                else bins64 = 1;
                bmax = s.maxabs;
                if (mm) {
                    mn = tally_xmin_(mn, s.mn);
                    mx = tally_xmax_(mx, s.mx);
                }
                method = bm;
                break;
            }
            int ok;
#if defined(XW32)
            if (bm == XM_W32) {
                memcpy(Wsaved, st.W, sizeof Wsaved);
                if (dirty) tally_xfenv_clear_();
                uint32_t sb = (uint32_t)(XW32_BITS - st.m32 + 127) << 23; /* 2^s, s in -101..127 */
                float scale;
                memcpy(&scale, &sb, sizeof scale);
                bmax = XFN(w32_block)(st.W, (const float *)xb, len, scale, omit_nan);
                ok = !tally_xfenv_raised_() && bmax <= tally_xpow2_(st.m32);
                dirty = !ok;
                if (!ok) memcpy(st.W, Wsaved, sizeof Wsaved);
                else st.w32_n += (uint64_t)len;
            } else
#endif
            {
                if (!st.lev_ready) XFN(lev_setm)(&st, st.m, acc);
                memcpy(saved, st.S, sizeof saved);
                if (dirty) tally_xfenv_clear_();
                XFN(lres) o;
                XFN(block_l)(st.S, x, i0, len, kind, st.L, vmean, mode, &o);
                const int pe = XV_SAE || (st.L == 1 && kind <= XK_SUM_F64);
                ok = o.finite && o.bmax <= st.bound && (pe ? !tally_xfenv_raised_() : !o.res);
                dirty = !ok || !pe || kind > XK_SUM_F64;
                if (!ok) {
                    memcpy(st.S, saved, sizeof saved);
                } else {
                    st.lev_used = 1;
                    bmax = o.bmax;
                    if (mm) { /* the extremes of the run that counts */
                        mn = tally_xmin_(mn, o.mn);
                        mx = tally_xmax_(mx, o.mx);
                        nans += o.nans;
                    }
                    st.cnt += per_block;
                    if (st.cnt + per_block > (1u << XT_BITS)) {
                        XFN(flush)(st.S, st.C, acc);
                        st.cnt = 0;
                    }
                }
            }
            if (ok) {
                method = bm;
                if (bmax > recent) recent = bmax;
                break;
            }
            if (trying) { /* back to what worked */
                trying = 0;
                if (bm == XM_LEV) st.L++;
                bm = XM_LEV;
                continue;
            }
            if (!have_stats) {
                XFN(stats)(x, i0, len, kind, vmean, mode, 1, &s);
                have_stats = 1;
            }
            dirty = 1;
            bm = s.nonfinite ? XM_SLOW : XFN(choose)(&st, &s, kind, w32_ok, 0, acc);
        }
        tally_xmethod_n[bm] += (uint64_t)(len - slow_rest);
        /* the flags ANY / NONNEGZERO for what the fast methods added (SLOW sets its own) */
        if (bm != XM_SLOW) {
            if (bmax > 0) {
                any_fast = nonneg = 1;
            } else if (!any_fast || !nonneg) {
                unsigned f = tally_xzero_block_flags_(xb, (uint64_t)len, kind);
                any_fast |= (int)(f & 1);
                nonneg |= (int)(f >> 1);
            }
        }
    }
    if (st.lev_used) XFN(flush)(st.S, st.C, acc);
#if defined(XW32)
    if (st.w32_used) XFN(w32_flush)(st.W, XW32_BITS - st.m32, st.w32_n, acc);
#endif
    if (bins64) tally_xbins64_flush_(bins, acc);
    if (bins32) tally_xbins32_flush_(bins, acc);
    if (any_fast)
        acc->flags |= TALLY_EXACT_F_ANY | (nonneg ? (uint32_t)TALLY_EXACT_F_NONNEGZERO : 0u);
    if (mm) {
        mm->min = tally_xmin_(mm->min, mn);
        mm->max = tally_xmax_(mm->max, mx);
        mm->nans += nans;
    }
    tally_xfenv_leave_(&fenv);
}

XENTRY void XFN(sum_f32)(const float *x, uint64_t n, int omit_nan, tally_exact *acc) {
    XFN(run)(x, n, XK_SUM_F32, 0.0, omit_nan, acc, NULL);
}
XENTRY void XFN(sum_f64)(const double *x, uint64_t n, int omit_nan, tally_exact *acc) {
    XFN(run)(x, n, XK_SUM_F64, 0.0, omit_nan, acc, NULL);
}
XENTRY void XFN(sqdev_f32)(const float *x, uint64_t n, double mean, int omit_nan,
                           tally_exact *acc) {
    XFN(run)(x, n, XK_SQ_F32, mean, omit_nan, acc, NULL);
}
XENTRY void XFN(sqdev_f64)(const double *x, uint64_t n, double mean, int omit_nan,
                           tally_exact *acc) {
    XFN(run)(x, n, XK_SQ_F64, mean, omit_nan, acc, NULL);
}
XENTRY void XFN(sum_minmax_f32)(const float *x, uint64_t n, int omit_nan, tally_exact *acc,
                                tally_xminmax *mm) {
    XFN(run)(x, n, XK_SUM_F32, 0.0, omit_nan, acc, mm);
}
XENTRY void XFN(sum_minmax_f64)(const double *x, uint64_t n, int omit_nan, tally_exact *acc,
                                tally_xminmax *mm) {
    XFN(run)(x, n, XK_SUM_F64, 0.0, omit_nan, acc, mm);
}

/* ---- SPEC: the speculative compensated sum (core/exact_sum.h, "Speculative compensated sums") --
 * One vector pass over x[0 .. n): XS_U * XW lanes, each a triple (s, c, D) from (0, 0, 0), every
 * element (f32 widened exactly) added to one lane by exactly the rule of exact_sum.h:
 *      (s', e) = TwoSum(s, x);   c' = fl(c + e);   D' = fl(D + |c'|)
 * At the end every lane's s and c go EXACTLY into *acc (tally_exact_add: a NaN or inf among
 * them sets acc's flags), and the lanes' D are summed into *D (more adds of D's chain, covered by
 * the bound). So after any number of calls on the pieces of an array, with V the value of the
 * merged accumulators and D the sum of the calls' *D:
 *      true sum = V + delta,   |delta| <= 2^-53 * D_true <= 2^-53 * D * (1 + 2^-12)
 * as exact_sum.h proves for one lane (the lanes' deltas add; V holds their s + c exactly, with
 * no merge of triples, so no merge rounding enters). Why this code keeps the invariant:
 *   - TwoSum is the 6-op form (s' = s + x; b = s' - s; a = s' - b; e = (s - a) + (x - b)), each
 *     op a separate intrinsic add/sub: exact for any order of magnitudes in round-to-nearest.
 *     There is no multiply to contract, and the whole library is compiled with
 *     -ffp-contract=off (CMakeLists.txt) besides: every op is one rounded add.
 *   - The kernel runs under tally_xfenv_enter_: round-to-nearest, no FTZ / DAZ whatever the
 *     caller set, so subnormal e and c are exact as exact_sum.h assumes.
 *   - |c'| is taken by clearing the sign bit (exact), and each c' enters D once, right after it
 *     is made. A lane of a partial last vector adds +0.0: s and c unchanged, D gets |c| again
 *     (D only grows: harmless).
 *   - XS_DMAX (AVX-512: VRANGEPD, one op where the sum takes two): a lane keeps M = max |c'|
 *     over its k adds instead of D, and gives fl(k * M) at the end. k * M >= the sum of the k
 *     values |c'| that D would add up, so the invariant holds with this larger D_true; the one
 *     rounding of the product is one more add-sized rounding of D's chain (covered as those
 *     are). The bound is looser (k * max against the sum): a few more declines, no error.
 *     A NaN c' may leave M anything: c itself stays NaN and goes into acc's flags.
 *   - An overflow of s, e, c or D, or a NaN / inf input, leaves some final s or c non-finite
 *     (inf - inf = NaN, inf + finite = inf: a non-finite value never turns finite in these ops)
 *     or D non-finite: acc's NaN / inf flags or a non-finite *D, and the caller declines.
 * The caller decides with tally_exact_round_within(V, E) where E = D * 2^-53 * 1.001 + 2^-1074
 * (the last term covers the product's rounding should it fall among the subnormals). */
#ifndef XS_U
#define XS_U 4 /* lane sets: each carries three 1-add chains (s, c, D), 4 ticks apiece */
#endif
#ifndef XS_ABS /* |v|: the sign bit cleared (a NaN lane may give anything: c is NaN there) */
#define XS_ABS(v) XV_MAXABS(XV_ZERO(), (v))
#endif
XINLINE void XFN(spec_)(const void *x, uint64_t n, int kind, tally_exact *acc, double *Dout) {
    tally_xfenv fenv;
    tally_xfenv_enter_(&fenv);
    const XV zero = XV_ZERO();
    XV S[XS_U], C[XS_U], D[XS_U];
    for (int u = 0; u < XS_U; u++) S[u] = C[u] = D[u] = zero;
    const uint64_t es = kind == XK_SUM_F32 ? 4 : 8;
    const uint64_t pfd = tally_xpf_far_get_();
    uint64_t i = 0;
#define XS_STEP(u, v)                                                                            \
    do {                                                                                         \
        const XV x_ = (v);                                                                       \
        const XV s_ = XV_ADD(S[u], x_);                                                          \
        const XV b_ = XV_SUB(s_, S[u]);                                                          \
        const XV a_ = XV_SUB(s_, b_);                                                            \
        const XV e_ = XV_ADD(XV_SUB(S[u], a_), XV_SUB(x_, b_));                                  \
        S[u] = s_;                                                                               \
        C[u] = XV_ADD(C[u], e_);                                                                 \
        XS_FEED_D(u);                                                                            \
    } while (0)
#if defined(XS_DMAX) /* D[u] holds max |c'| of its lanes; k adds per lane of set u */
#define XS_FEED_D(u) (D[u] = XS_DMAX(D[u], C[u]))
#else
#define XS_FEED_D(u) (D[u] = XV_ADD(D[u], XS_ABS(C[u])))
#endif
    for (; i + XS_U * XW <= n; i += XS_U * XW) {
        if (pfd)
            for (uint64_t b = 0; b < XS_U * XW * es; b += 64)
                XPREFETCH((const char *)x + i * es + pfd + b);
        for (int u = 0; u < XS_U; u++) XS_STEP(u, XFN(load)(x, i + (uint64_t)u * XW, kind));
    }
    const uint64_t steps = i / (XS_U * XW); /* adds per lane so far, every set alike */
    int tail = 0;
    for (int u = 0; i < n; i += XW, u++, tail++) {
        const uint64_t k = n - i < XW ? n - i : XW;
        XS_STEP(u, k == XW ? XFN(load)(x, i, kind) : XFN(load_part)(x, i, (int)k, kind));
    }
#undef XS_STEP
#undef XS_FEED_D
    double ls[XW], lc[XW], ld[XW], dsum = 0.0;
    for (int u = 0; u < XS_U; u++) {
        XV_STORE(ls, S[u]);
        XV_STORE(lc, C[u]);
        XV_STORE(ld, D[u]);
#if defined(XS_DMAX)
        const double adds = (double)(steps + (u < tail)); /* exact: < 2^53 */
#endif
        for (int j = 0; j < XW; j++) {
            tally_exact_add(acc, ls[j]);
            tally_exact_add(acc, lc[j]);
#if defined(XS_DMAX)
            dsum += adds * ld[j]; /* >= the sum of the lane's |c'| (one rounding more) */
#else
            dsum += ld[j];
#endif
        }
    }
    (void)steps;
    (void)tail;
    *Dout += dsum;
    tally_xfenv_leave_(&fenv);
}
#if XV_SAE && defined(XS_DMAX)
/* ---- SPECF: the speculative sum in 5 vector ops per XW elements (ISAs with XV_SAE) ------------
 * SPEC above spends 6 of its 8 ops per vector on TwoSum, which is exact for any S and x. Here
 * each lane's running sum S starts at a bias B = 1.5 * 2^E far above the data, and one step is
 *      s = S + x (no flags);  q = s - S;  r = x - q;  C' = fl(C + r) (no flags);
 *      M = max(M, |C'|);  S = s
 * Claim: if neither q's nor r's operation raised the inexact or invalid flag, s + r = S + x
 * exactly. Proof: q = s - S and r = x - q hold exactly, so r = x - s + S. No bound on x is needed
 * for this: the bias only makes the flags stay clear (Fast2Sum: q and r are exact whenever
 * |S| >= |x|, which E = m + XSF_T + 3 keeps for 2^XSF_T adds of |x| <= 2^m, as LEV's proof
 * shows), and the flags, read once per block, are what the result rests on. So over a block
 * whose flags stay clear, sum(x) = (S_end - S_start) + sum(r), and C holds sum(r) but for its
 * roundings, each at most 2^-53 |C'|: over kc adds per lane at most 2^-53 * kc * max |C'|, the
 * D of SPEC's XS_DMAX form (M = max |C'| over the lane's adds, given as kc * M at the end).
 * After every block, S and -B go into the second level by SPEC's rule (TwoSum triples S2, C2,
 * D2 with D2 = fl(D2 + |C2'|): exact whatever S is), and S restarts at B. A block whose flags
 * were raised is undone (S, C, M as before it) and run again with E from its own max; if that
 * fails too (a NaN, an inf, a max beyond 2^1009) or failures are frequent, it goes through
 * SPEC's step into the second level, exactly. An inf or NaN input or an overflow leaves a
 * non-finite S2, C2, C or D, so the caller declines, as for SPEC. At the end the lanes' C, S2
 * and C2 go exactly into *acc and kc * M + D2 into *D: SPEC's invariant, |delta| <= 2^-53 * D. */
#define XSF_T 10 /* adds per lane in a block: 2^XSF_T (a block, 32 Ki elements, stays in L2) */
/* The bias 1.5 * 2^E, E = ceil(log2(maxabs)) + room (at least -1022), in every lane of *vB;
 * 0 where maxabs is NaN or inf or E would pass 1023 (no bias: SPEC's step). Shared with SMALL's
 * SPECF below. */
XINLINE int XFN(specf_bias_)(double maxabs, int room, XV *vB) {
    if (!(maxabs <= 0x1.fffffffffffffp1023)) return 0; /* NaN, inf */
    int e = (maxabs > 0 ? tally_xceil_log2_(maxabs) : -1100) + room;
    if (e > 1023) return 0;
    if (e < -1022) e = -1022;
    *vB = XV_SET1(tally_xgrid_(e));
    return 1;
}
/* SPECF's step for lane set u of the arrays S, C, M (no flags but from q and r: see above);
 * shared with SMALL's SPECF below, #undef'd after it. */
#define XSF_STEP(S, C, M, u, v)                                                                  \
    do {                                                                                         \
        const XV x_ = (v);                                                                       \
        const XV s_ = XV_ADD_NX((S)[u], x_);                                                     \
        const XV q_ = XV_SUB(s_, (S)[u]);                                                        \
        (C)[u] = XV_ADD_NX((C)[u], XV_FEED_SUBR(x_, q_));                                        \
        (M)[u] = XS_DMAX((M)[u], (C)[u]);                                                        \
        (S)[u] = s_;                                                                             \
    } while (0)
XINLINE double XFN(specf_maxabs_)(const void *x, uint64_t i0, uint64_t len, int kind) {
    XV a = XV_ZERO();
    uint64_t i = 0;
    for (; i + XW <= len; i += XW) a = XV_MAXABS(a, XFN(load)(x, i0 + i, kind));
    if (i < len) a = XV_MAXABS(a, XFN(load_part)(x, i0 + i, (int)(len - i), kind));
    double l[XW], m = 0.0;
    XV_STORE(l, a);
    for (int j = 0; j < XW; j++) {
        if (l[j] != l[j]) return l[j]; /* NaN */
        if (l[j] > m) m = l[j];
    }
    return m;
}
XINLINE void XFN(specf_)(const void *x, uint64_t n, int kind, tally_exact *acc, double *Dout) {
    tally_xfenv fenv;
    tally_xfenv_enter_(&fenv);
    const XV zero = XV_ZERO();
    XV S[XS_U], C[XS_U], M[XS_U], S2[XS_U], C2[XS_U], D2[XS_U], vB = zero;
    for (int u = 0; u < XS_U; u++) C[u] = M[u] = S2[u] = C2[u] = D2[u] = zero;
    const uint64_t es = kind == XK_SUM_F32 ? 4 : 8, set = (uint64_t)XS_U * XW;
    const uint64_t pfd = tally_xpf_far_get_();
    uint64_t kc = 0; /* fast steps kept, per lane (every lane alike) */
    unsigned fails = 0, blocks = 0;
    /* the first bias from a sample (a wrong guess costs one rerun of the first block) */
    int fast = XFN(specf_bias_)(4.0 * XFN(specf_maxabs_)(x, 0, n < 256 ? n : 256, kind), XSF_T + 3, &vB);
    for (int u = 0; u < XS_U; u++) S[u] = vB;
#define XSF_TWO(u, v) /* SPEC's step into the second level, raising no flag (the blocks' check) */ \
    do {                                                                                         \
        const XV x_ = (v);                                                                       \
        const XV s_ = XV_ADD_NX(S2[u], x_);                                                      \
        const XV b_ = XV_SUB_NX(s_, S2[u]);                                                      \
        const XV a_ = XV_SUB_NX(s_, b_);                                                         \
        const XV e_ = XV_ADD_NX(XV_SUB_NX(S2[u], a_), XV_SUB_NX(x_, b_));                        \
        S2[u] = s_;                                                                              \
        C2[u] = XV_ADD_NX(C2[u], e_);                                                            \
        D2[u] = XV_ADD_NX(D2[u], XS_ABS(C2[u]));                                                 \
    } while (0)
    const uint64_t whole = n / set * set;
    uint64_t i = 0;
    while (i < whole) {
        const uint64_t len = whole - i < (set << XSF_T) ? whole - i : (set << XSF_T);
        int done = 0;
        for (int attempt = 0; attempt < 2 && fast && !done; attempt++) {
            XV sC[XS_U], sM[XS_U];
            for (int u = 0; u < XS_U; u++) sC[u] = C[u], sM[u] = M[u];
            for (uint64_t j = 0; j < len; j += set) {
                if (pfd)
                    for (uint64_t b = 0; b < set * es; b += 64)
                        XPREFETCH((const char *)x + (i + j) * es + pfd + b);
                for (int u = 0; u < XS_U; u++) XSF_STEP(S, C, M, u, XFN(load)(x, i + j + (uint64_t)u * XW, kind));
            }
            if (!tally_xfenv_raised_()) {
                kc += len / set;
                done = 1;
                break;
            }
            /* undone: C and M as before, S back to the bias; E again from this block's max */
            tally_xfenv_clear_();
            for (int u = 0; u < XS_U; u++) C[u] = sC[u], M[u] = sM[u], S[u] = vB;
            fails++;
            if (attempt == 0) {
                fast = XFN(specf_bias_)(XFN(specf_maxabs_)(x, i, len, kind), XSF_T + 3, &vB);
                for (int u = 0; u < XS_U; u++) S[u] = vB;
            }
        }
        if (!done) /* SPEC's step, exact for any data */
            for (uint64_t j = 0; j < len; j += set)
                for (int u = 0; u < XS_U; u++) XSF_TWO(u, XFN(load)(x, i + j + (uint64_t)u * XW, kind));
        /* S - B into the second level, exactly, as two inputs; S restarts at B */
        for (int u = 0; u < XS_U; u++) {
            XSF_TWO(u, S[u]);
            XSF_TWO(u, XV_SUB_NX(zero, vB));
            S[u] = vB;
        }
        i += len;
        /* blocks keep failing (magnitudes that keep growing): SPEC's step from here on */
        if (++blocks >= 8 && fails * 4 > blocks) fast = 0;
    }
    for (int u = 0; i < n; i += XW, u++) {
        const uint64_t k = n - i < XW ? n - i : XW;
        XSF_TWO(u % XS_U, k == XW ? XFN(load)(x, i, kind) : XFN(load_part)(x, i, (int)k, kind));
    }
#undef XSF_TWO
    double lc[XW], lm[XW], ls2[XW], lc2[XW], ld2[XW], dsum = 0.0;
    const double adds = (double)kc; /* exact: < 2^53 */
    for (int u = 0; u < XS_U; u++) {
        XV_STORE(lc, C[u]);
        XV_STORE(lm, M[u]);
        XV_STORE(ls2, S2[u]);
        XV_STORE(lc2, C2[u]);
        XV_STORE(ld2, D2[u]);
        for (int j = 0; j < XW; j++) {
            tally_exact_add(acc, lc[j]);
            tally_exact_add(acc, ls2[j]);
            tally_exact_add(acc, lc2[j]);
            dsum += adds * lm[j] + ld2[j]; /* >= the lane's bound (roundings covered as SPEC's) */
        }
    }
    *Dout += dsum;
    tally_xfenv_leave_(&fenv);
}
#endif
XENTRY void XFN(spec_sum_f32)(const float *x, uint64_t n, tally_exact *acc, double *D) {
#if XV_SAE && defined(XS_DMAX)
    if (atomic_load_explicit(&tally_xspec_fast_, memory_order_relaxed)) {
        XFN(specf_)(x, n, XK_SUM_F32, acc, D);
        return;
    }
#endif
    XFN(spec_)(x, n, XK_SUM_F32, acc, D);
}
XENTRY void XFN(spec_sum_f64)(const double *x, uint64_t n, tally_exact *acc, double *D) {
#if XV_SAE && defined(XS_DMAX)
    if (atomic_load_explicit(&tally_xspec_fast_, memory_order_relaxed)) {
        XFN(specf_)(x, n, XK_SUM_F64, acc, D);
        return;
    }
#endif
    XFN(spec_)(x, n, XK_SUM_F64, acc, D);
}

/* ---- SMALL: a short array's sum in one pass, rounded without the superaccumulator ------------
 * For one call's sum of at most XSMALL_BYTES (the cost that matters there is per call: the
 * general path's method choice, its superaccumulator and its rounding cost about as much as the
 * adds). The entry returns 1 with the correctly rounded sum in *out, or 0 having changed nothing:
 * the caller then takes the general path. It never returns a wrong 1; the argument for each
 * method is its checks, not the data: the stats of a sample (the first XSMALL_SAMPLE elements)
 * only choose the method and its grid, so that the checks are likely to pass.
 *
 * W32W (f32, ISAs with XP_ADD_NX: AVX-512): W32 without the bound's max and the int64 widening:
 * the int32 lanes wrap, and a float sum beside them (raising no flag) says by how many multiples
 * of 2^32; the conversion's own invalid flag is the range check (|y| < 2^31). 4 vector ops per 16
 * floats against W32's ~4.6. The proof is at XFN(small32w_). Switched off (the older W32 below
 * instead) by tally_exact_set_small_w32w(0), for benchmarks' before / after.
 *
 * W64W (f32, AVX-512): W32W with int64 lanes, where W32W's 31 bits are too few (the sample's
 * bits within 52 binades); proof at XFN(small64w_). W64D (f64, AVX-512): the same on doubles
 * whose bits span at most 63; proof at XFN(small64d_). The order: W32W, W64W (f32) or W64D
 * (f64), then TWO, SPECF, SPEC; a method whose flags fail clears them for the next.
 *
 * W32 (f32, every ISA with XW32): the method above, on the whole array at once with the sample's
 * bound 2^m32: clear flags and max |x| <= 2^m32 afterwards make sum(W) * 2^-s the exact sum
 * (see W32). n <= 2^14 floats of |y| <= 2^27 keep every partial sum of the int64 lanes below 2^41.
 *
 * TWO (f64, and f32 that W32 cannot take; ISAs with XV_SAE): two levels, with checks that hold
 * whatever the data. Per lane: s = S + v (rounded, raising nothing: SAE), q = s - S, r = v - q,
 * R = R + r, S = s, with S from C0 = 1.5 * 2^E0 and R from C1 = 1.5 * 2^E1 (the LEV grids).
 * Claim: if no flag is raised (inexact, invalid, overflow) and every final S and R is finite,
 *   sum(v) = sum over lanes of (S - C0) + (R - C1), exactly.
 * Proof. No inexact flag: q = s - S and r = v - q are exact, so v = q + r and s = S + q exactly;
 *   by induction S_end = C0 + sum(q) and, each R + r being exact, R_end = C1 + sum(r); summing
 *   v = q + r gives the claim. (Quiet NaNs raise nothing, but make an S or R NaN: not finite. An
 *   inf makes r = inf - inf: invalid. An overflow of s leaves an S infinite.) The four sets of
 *   lanes are summed by flag-checked adds, each lane's S - C0 and R - C1 the same way, and each
 *   result is converted to an integer multiple of u0 = 2^(E0-52) and u1 = 2^(E1-52) by
 *   tally_xto_int_, which fails on anything else; then sum(v) = (A0 * 2^(E0-E1) + A1) * u1 with
 *   int64 A0, A1 (|lane| < 2^58, XW <= 8 lanes) in a 128-bit integer, rounded once
 *   (tally_xround_i128_). So a returned 1 is the exact sum rounded once.
 * Why the checks usually pass: with max |v| <= 2^m and at most 2^T adds per lane, E0 = m + T + 3
 *   and E1 = E0 - 53 + T + 3 are the LEV grids of two levels (see LEV), which make every one of
 *   these operations exact when the data are multiples of u1. The sample's max gets 4 binades of
 *   room (m = its ceiling + 4) and its lowest set bit must lie 8 bits above u1; else the general
 *   path is taken at once. */
#define XSMALL_BYTES 65536
#define XSMALL_SAMPLE 16
#if defined(__SIZEOF_INT128__)
#if XV_SAE
XINLINE int XFN(small2_)(const void *x, int n, int kind, int E0, int E1, double *out) {
    const double C0 = tally_xgrid_(E0), C1 = tally_xgrid_(E1);
    const XV c0 = XV_SET1(C0), c1 = XV_SET1(C1);
    XV S[XU], R[XU];
    for (int u = 0; u < XU; u++) {
        S[u] = c0;
        R[u] = c1;
    }
    int i = 0;
    for (; i + XU * XW <= n; i += XU * XW)
        for (int u = 0; u < XU; u++) {
            const XV v = XFN(load)(x, (uint64_t)(i + u * XW), kind);
            const XV s = XV_ADD_NX(S[u], v);
            const XV q = XV_SUB(s, S[u]);
            R[u] = XV_ADD(R[u], XV_SUB(v, q));
            S[u] = s;
        }
    for (int u = 0; i < n; i += XW, u++) {
        const int k = n - i < XW ? n - i : XW;
        const XV v = k == XW ? XFN(load)(x, (uint64_t)i, kind) : XFN(load_part)(x, (uint64_t)i, k, kind);
        const XV s = XV_ADD_NX(S[u], v);
        const XV q = XV_SUB(s, S[u]);
        R[u] = XV_ADD(R[u], XV_SUB(v, q));
        S[u] = s;
    }
    XV d0 = XV_SUB(S[0], c0), d1 = XV_SUB(R[0], c1);
    for (int u = 1; u < XU; u++) {
        d0 = XV_ADD(d0, XV_SUB(S[u], c0));
        d1 = XV_ADD(d1, XV_SUB(R[u], c1));
    }
    double l0[XW], l1[XW];
    XV_STORE(l0, d0);
    XV_STORE(l1, d1);
    int64_t a0 = 0, a1 = 0;
    for (int j = 0; j < XW; j++) {
        int64_t k0, k1;
        if (!tally_xto_int_(l0[j], E0 - 52, &k0) || !tally_xto_int_(l1[j], E1 - 52, &k1)) return 0;
        a0 += k0;
        a1 += k1;
    }
    if (tally_xfenv_raised_()) return 0;
    const __int128 V = (__int128)a0 * ((__int128)1 << (E0 - E1)) + a1;
    return tally_xround_i128_(V, E1 - 52, out);
}
#endif
#if defined(XW32)
XINLINE int XFN(small32_)(const float *x, int n, int m32, double *out) {
    XL W[XU32][2];
    for (int u = 0; u < XU32; u++) W[u][0] = W[u][1] = XL_ZERO();
    const int s = XW32_BITS - m32; /* 2^s a normal float: m32 in -100 .. 153 */
    const uint32_t sb = (uint32_t)(s + 127) << 23;
    float scale;
    memcpy(&scale, &sb, sizeof scale);
    const double bmax = XFN(w32_block_)(W, x, n, scale, 0, 0);
    if (tally_xfenv_raised_() || !(bmax <= tally_xpow2_(m32))) return 0;
    XL t = XL_ZERO();
    for (int u = 0; u < XU32; u++) t = XL_ADD(t, XL_ADD(W[u][0], W[u][1]));
    int64_t lane[XPW / 2], sum = 0;
    XL_STORE(lane, t);
    for (int j = 0; j < XPW / 2; j++) sum += lane[j];
    return tally_xround_i128_(sum, -s, out);
}
#endif
#if XV_SAE
/* SPEC (f32 and f64, ISAs with XV_SAE: AVX-512): the speculative compensated sum of core/
 * exact_sum.h ("Speculative compensated sums"), for the short sums the exact methods above
 * decline (data over many binades). Per lane a triple (S, C, D): (s, e) = TwoSum(S, v) (Knuth's
 * six operations), C = fl(C + e), D = fl(D + |C|), S = s; a masked rest adds zeros (TwoSum(S, 0)
 * = (S, 0) exactly, C and D as before, so the invariant holds); then the XU sets and the XW lanes
 * are merged by that block's merge rule, in any order. The invariant of the block holds for every
 * lane and merge because each operation here is exactly the rule's, in round-to-nearest (the
 * caller's tally_xfenv_enter_), with no FMA contraction (the build's -ffp-contract=off) and no
 * FTZ / DAZ (the MXCSR the caller loaded). The final (s, c, D) must be finite (a NaN or inf input,
 * or an overflow anywhere, leaves s, c or D non-finite: then 0, the exact path); s and c go
 * exactly into a tally_exact V, and tally_exact_round_within(V, D * 2^-53 * 1.001) answers with
 * the exact sum rounded once, or declines (0). A lane takes at most 2^9 adds (n <= 2^14 f32 /
 * 2^13 f64 over 32 lanes), the merges 31 more: far below the block's 2^40. */
#define XSPEC_TWOSUM(S, v, s_, e_)                                                                 \
    do {                                                                                           \
        s_ = XV_ADD((S), (v));                                                                     \
        const XV bp_ = XV_SUB(s_, (S));                                                            \
        e_ = XV_ADD(XV_SUB((S), XV_SUB(s_, bp_)), XV_SUB((v), bp_));                               \
    } while (0)
#define XSPEC_ADD(S, C, D, v)                                                                      \
    do {                                                                                           \
        XV s_, e_;                                                                                 \
        XSPEC_TWOSUM(S, v, s_, e_);                                                                \
        C = XV_ADD(C, e_);                                                                         \
        D = XV_ADD(D, XV_MAXABS(XV_ZERO(), C));                                                    \
        S = s_;                                                                                    \
    } while (0)
static inline void XFN(spec_merge1_)(double *s1, double *c1, double *d1, double s2, double c2, double d2) {
    const double s = *s1 + s2, bp = s - *s1, e = (*s1 - (s - bp)) + (s2 - bp);
    const double t = *c1 + c2, c = t + e;
    *d1 = (*d1 + d2) + (fabs(t) + fabs(c));
    *s1 = s;
    *c1 = c;
}
XINLINE int XFN(small_spec_)(const void *x, int n, int kind, double *out) {
    XV S[XU], C[XU], D[XU];
    for (int u = 0; u < XU; u++) S[u] = C[u] = D[u] = XV_ZERO();
    int i = 0;
    for (; i + XU * XW <= n; i += XU * XW)
        for (int u = 0; u < XU; u++) {
            const XV v = XFN(load)(x, (uint64_t)(i + u * XW), kind);
            XSPEC_ADD(S[u], C[u], D[u], v);
        }
    for (int u = 0; i < n; i += XW, u++) {
        const int k = n - i < XW ? n - i : XW;
        const XV v = k == XW ? XFN(load)(x, (uint64_t)i, kind) : XFN(load_part)(x, (uint64_t)i, k, kind);
        XSPEC_ADD(S[u], C[u], D[u], v);
    }
    /* the sets, then the lanes, by the merge rule */
    double ls[XU][XW], lc[XU][XW], ld[XU][XW];
    for (int u = 0; u < XU; u++) {
        XV_STORE(ls[u], S[u]);
        XV_STORE(lc[u], C[u]);
        XV_STORE(ld[u], D[u]);
    }
    double s = ls[0][0], c = lc[0][0], d = ld[0][0];
    for (int u = 0; u < XU; u++)
        for (int j = 0; j < XW; j++)
            if (u || j) XFN(spec_merge1_)(&s, &c, &d, ls[u][j], lc[u][j], ld[u][j]);
    if (!(s - s == 0) || !(c - c == 0) || !(d - d == 0)) return 0; /* NaN or inf */
    tally_exact V;
    tally_exact_init(&V);
    tally_exact_add_finite_(&V, s);
    tally_exact_add_finite_(&V, c);
    return tally_exact_round_within(&V, tally_exact_spec_bound(d), out);
}
#undef XSPEC_ADD
#undef XSPEC_TWOSUM
#if defined(XS_DMAX)
/* SMALL's SPECF: SPECF's step (above: a bias B under each lane's sum, q = s - S and r = x - q
 * checked by the inexact flag, C += r and M = max |C| without flags) over the whole short array
 * in one go. B = 1.5 * 2^E with E = m + T + 3, 2^m >= 2^12 * the sample's max, 2^T >= the adds
 * per lane. The caller cleared the flags; raised at the end means some step's split was not
 * exact (0: the caller clears them and goes on). Then each lane is a triple of SPEC's rule:
 * s = S - B (exact, Sterbenz, when B/2 <= S <= 2B, else 0), c = C, D = k * M with k the lane's
 * adds at most (one rounding more, as SPEC's XS_DMAX form), merged and decided as small_spec_
 * does. Out of line: inlined into small_sum, it changed the code of the price-like path there
 * (10-17% slower at 4,096 elements on the 2-core EPYC). */
static __attribute__((noinline)) int XFN(small_specf_)(const void *x, int n, int kind, double smax, double *out) {
    const int set = XU * XW, per = (n + set - 1) / set;
    int T = 0;
    while ((1 << T) < per) T++;
    XV vB;
    if (!XFN(specf_bias_)(smax, 12 + T + 3, &vB)) return 0;
    double lb[XW];
    XV_STORE(lb, vB);
    const double B = lb[0];
    XV S[XU], C[XU], M[XU];
    for (int u = 0; u < XU; u++) S[u] = vB, C[u] = M[u] = XV_ZERO();
    int i = 0;
    for (; i + set <= n; i += set)
        for (int u = 0; u < XU; u++) XSF_STEP(S, C, M, u, XFN(load)(x, (uint64_t)(i + u * XW), kind));
    for (int u = 0; i < n; i += XW, u++) {
        const int k = n - i < XW ? n - i : XW;
        XSF_STEP(S, C, M, u, k == XW ? XFN(load)(x, (uint64_t)i, kind) : XFN(load_part)(x, (uint64_t)i, k, kind));
    }
    if (tally_xfenv_raised_()) return 0;
    const double adds = (double)per; /* every lane's adds, at most */
    double ls[XU][XW], lc[XU][XW], lm[XU][XW];
    for (int u = 0; u < XU; u++) {
        XV_STORE(ls[u], S[u]);
        XV_STORE(lc[u], C[u]);
        XV_STORE(lm[u], M[u]);
    }
    double s = 0, c = 0, d = 0;
    for (int u = 0; u < XU; u++)
        for (int j = 0; j < XW; j++) {
            if (!(ls[u][j] >= 0.5 * B && ls[u][j] <= 2 * B)) return 0; /* also NaN */
            const double sl = ls[u][j] - B; /* exact: Sterbenz */
            if (u || j) XFN(spec_merge1_)(&s, &c, &d, sl, lc[u][j], adds * lm[u][j]);
            else s = sl, c = lc[u][j], d = adds * lm[u][j];
        }
    if (!(s - s == 0) || !(c - c == 0) || !(d - d == 0)) return 0; /* NaN or inf */
    tally_exact V;
    tally_exact_init(&V);
    tally_exact_add_finite_(&V, s);
    tally_exact_add_finite_(&V, c);
    return tally_exact_round_within(&V, tally_exact_spec_bound(d), out);
}
#undef XSF_STEP
#endif
#endif
#if defined(XW32) && defined(XP_ADD_NX)
/* W32W (f32, ISAs with XP_ADD_NX): W32 without the bound's max and without the int64 widening,
 * 4 vector ops per XPW floats (scale, convert, int32 add, float add). Per element y = x * 2^s
 * (s from the sample), a = cvt(y) added into int32 lanes A that may wrap (sums modulo 2^32), and
 * y added into float lanes F by XP_ADD_NX (rounded to nearest, raising no flag).
 * Claim: if neither the inexact nor the invalid flag is raised, Y = sum(x) * 2^s is the int64
 *   At + 2^32 * floor((Fsum - At + 2^31) / 2^32), with At the wrapped sum of all A lanes (any
 *   int64 congruent to it modulo 2^32) and Fsum the exact sum of all F lanes.
 * Proof. No inexact and no invalid flag: every product x * 2^s was exact (one that is not raises
 *   inexact; one that overflowed is inf, whose conversion is invalid; no FTZ / DAZ, see the top),
 *   and every conversion was exact and in range: y is an integer with -2^31 <= y < 2^31 (NaN and
 *   inf convert as invalid). So each A lane is its y's sum modulo 2^32, and At = Y (mod 2^32).
 *   Each F lane is a recursive float sum of k <= K = ceil(n / (4 * XPW)) of those y (from 0;
 *   a masked rest adds zeros), so |F - sum| <= (K-1) * 2^-24 / (1 - (K-1) * 2^-24) * sum |y|
 *   (Higham, Accuracy and Stability, 4.2), and every F is an integer (sums of integers rounded
 *   to a float of magnitude >= 1 stay integers) below 2^31 * K * 1.01 <= 2^40, so its exact
 *   widening to double and Fsum's double adds (integers below 2^53) are exact. Over all lanes,
 *   |Fsum - Y| <= (K-1) * 2^-24 * 1.01 * n * 2^31, and with n <= XSMALL_F32 = 2^14 floats and
 *   K <= 2^14 / (4 * XPW) + 1 <= 257 (4 * XPW >= 64 lanes, checked below) that is below 2^30.
 *   Y - At is a multiple of 2^32, so (Fsum - At) / 2^32 lies within 2^30 / 2^32 = 1/4 of the
 *   integer (Y - At) / 2^32, which the floor of it plus 1/2 therefore gives. |Y| < n * 2^31
 *   <= 2^45. So a returned 1 is sum(x) = Y * 2^-s rounded once (tally_xround_i128_).
 * The flags: the caller cleared them; this loop's only flag-raising operations are the products
 *   and the conversions (XP_ADD_NX raises none, the integer adds none). */
#define XSMALL_F32 (XSMALL_BYTES / 4)
_Static_assert(XSMALL_F32 <= 16384 && 4 * XPW >= 64, "W32W's bound needs n <= 2^14, 64 lanes");
XINLINE int XFN(small32w_)(const float *x, int n, int s, double *out) {
    const uint32_t sb = (uint32_t)(s + 127) << 23; /* 2^s a normal float: s in -126 .. 127 */
    float scale;
    memcpy(&scale, &sb, sizeof scale);
    const XP vs = XP_SET1(scale);
    /* four named sets, not arrays: with arrays GCC 12 copied each int sum to a new register
     * per add (one more op per vector) */
    XI A0 = XI_ZERO(), A1 = XI_ZERO(), A2 = XI_ZERO(), A3 = XI_ZERO();
    XP F0 = XP_SET1(0.0f), F1 = F0, F2 = F0, F3 = F0;
#define XSMALL32W_ADD(Fu, Au, v)                                                                   \
    do {                                                                                           \
        const XP y_ = XP_MUL((v), vs);                                                             \
        Fu = XP_ADD_NX(Fu, y_);                                                                    \
        Au = XI_ADD(Au, XP_CVT(y_));                                                               \
    } while (0)
    /* the rest first, masked (one add per lane at most) */
    const int full = n - n % (4 * XPW);
    if (full < n) {
        int k[4];
        tally_xrest4_(n, full, XPW, k);
        const float *t = x + full;
        XSMALL32W_ADD(F0, A0, XP_LOAD_PART(t, k[0]));
        XSMALL32W_ADD(F1, A1, XP_LOAD_PART(k[1] ? t + XPW : x, k[1]));
        XSMALL32W_ADD(F2, A2, XP_LOAD_PART(k[2] ? t + 2 * XPW : x, k[2]));
        XSMALL32W_ADD(F3, A3, XP_LOAD_PART(k[3] ? t + 3 * XPW : x, k[3]));
    }
    for (int i = 0; i < full; i += 4 * XPW) {
        XSMALL32W_ADD(F0, A0, XP_LOAD(x + i));
        XSMALL32W_ADD(F1, A1, XP_LOAD(x + i + XPW));
        XSMALL32W_ADD(F2, A2, XP_LOAD(x + i + 2 * XPW));
        XSMALL32W_ADD(F3, A3, XP_LOAD(x + i + 3 * XPW));
    }
#undef XSMALL32W_ADD
    if (tally_xfenv_raised_()) return 0;
    const XI At4 = XI_ADD(XI_ADD(A0, A1), XI_ADD(A2, A3)); /* modulo 2^32, as the lanes */
#if defined(XP_HSUM4_D) && defined(XI_HSUM_U32)
    const double fsum = XP_HSUM4_D(F0, F1, F2, F3);
    const uint32_t at = XI_HSUM_U32(At4);
#else
    float fl[4 * XPW];
    XP_STORE(fl, F0);
    XP_STORE(fl + XPW, F1);
    XP_STORE(fl + 2 * XPW, F2);
    XP_STORE(fl + 3 * XPW, F3);
    XV fs = XV_LOAD_F32(fl);
    for (int j = XW; j < 4 * XPW; j += XW) fs = XV_ADD(fs, XV_LOAD_F32(fl + j));
    double fd[XW], fsum = 0;
    XV_STORE(fd, fs);
    for (int j = 0; j < XW; j++) fsum += fd[j];
    int64_t al64[XPW / 2];
    int32_t al[XPW];
    uint32_t at = 0;
    XL_STORE(al64, At4); /* the int32 lanes, stored whole */
    memcpy(al, al64, sizeof al);
    for (int j = 0; j < XPW; j++) at += (uint32_t)al[j];
#endif
    const int64_t At = (int32_t)at, d = (int64_t)fsum - At;
    const int64_t Y = At + (int64_t)((uint64_t)((d + ((int64_t)1 << 31)) >> 32) << 32);
    return tally_xround_i128_(Y, -s, out);
}
#endif
#if defined(XW32) && defined(XP_ADD_NX) && defined(XH_CVT64) && defined(XP_HSUM4_D)
/* W64W (f32, AVX-512): W32W with int64 lanes, for short f32 arrays whose bits span more than
 * W32W's 31 (prices from 0.01 to 100: 24 significand bits 13 binades apart; they took TWO or the
 * general path, ~9x the plain loop on the 2-core EPYC). Per element y = x * 2^s (s from the
 * sample), converted to int64 and added into int64 lanes A that may wrap (sums modulo 2^64),
 * and x added into float lanes F by XP_ADD_NX (rounded to nearest, raising no flag). Per XPW
 * floats: F's add, and per half (XH) a product, a conversion and an int64 add (the halves loaded
 * as such: an extract of the upper half cost a shuffle on the conversion's port).
 * Claim: if neither the inexact nor the invalid flag is raised and Fsum is finite, Y = sum(x) *
 *   2^s is the integer At + 2^64 * floor((Fsum * 2^s - At) / 2^64 + 1/2), with At the int64
 *   sum of all A lanes modulo 2^64 and Fsum the F lanes' sum in doubles.
 * Proof. No inexact and no invalid flag: every product x * 2^s was exact (an inexact one raises
 *   inexact; an overflowed one is inf, whose conversion is invalid; no FTZ / DAZ) and every
 *   conversion exact and in range: y is an integer with -2^63 <= y < 2^63. So At = Y (mod 2^64).
 *   Each F lane is a recursive float sum of k <= K = ceil(n / (4 * XPW)) <= 256 of the x, so
 *   |F - its exact sum| <= (K-1) * 2^-24 / (1 - (K-1) * 2^-24) * sum |x| + (K-1) * 2^-150 (the
 *   last term: adds rounded among subnormals), which times 2^s (s <= 127) is below
 *   2^-15.99 * K * 2^63 + 2^-15 < 2^55 in y's units. The 4 * XPW = 64 lanes, widened exactly to
 *   doubles, are summed in doubles (at most 63 rounded adds; if Fsum is finite, every F was, and
 *   every |F| * 2^s < 2^72): an error below 63 * 2^-53 * 2^78 < 2^31 in y's units; the scaling by
 *   2^s is exact (a double's range). So |Fsum * 2^s - Y| < 64 * 2^55 + 2^31 < 2^62, i.e.
 *   (Fsum * 2^s - At) / 2^64 lies within 1/4 of the integer (Y - At) / 2^64; computed in doubles
 *   (At widened: an error below 2^10; the difference below 2^79: below 2^26; the scaling exact;
 *   the + 1/2 below 2^-39) it stays within 1/4 + 2^-30, so the floor of it plus 1/2 is that
 *   integer. |Y| <= n * 2^63 <= 2^77: an int128. So a returned 1 is sum(x) = Y * 2^-s rounded
 *   once (tally_xround_i128_).
 * The flags: the caller cleared them; this loop's only flag-raising operations are the products
 *   and the conversions (XP_ADD_NX raises none, the integer adds none). */
XINLINE int XFN(small64w_)(const float *x, int n, int s, double *out) {
    const uint32_t sb = (uint32_t)(s + 127) << 23; /* 2^s a normal float: s in -126 .. 127 */
    float scale;
    memcpy(&scale, &sb, sizeof scale);
    const XH vs = XH_SET1(scale);
    const int HW = XPW / 2;
    XL A0 = XL_ZERO(), A1 = XL_ZERO(), A2 = XL_ZERO(), A3 = XL_ZERO();
    XL B0 = XL_ZERO(), B1 = XL_ZERO(), B2 = XL_ZERO(), B3 = XL_ZERO();
    XP F0 = XP_SET1(0.0f), F1 = F0, F2 = F0, F3 = F0;
#define XSMALL64W_ADD(Fu, Au, Bu, v, lo, hi)                                                       \
    do {                                                                                           \
        Fu = XP_ADD_NX(Fu, (v));                                                                   \
        Au = XL_ADD(Au, XH_CVT64(XH_MUL((lo), vs)));                                               \
        Bu = XL_ADD(Bu, XH_CVT64(XH_MUL((hi), vs)));                                               \
    } while (0)
#define XSMALL64W_PART(Fu, Au, Bu, v)                                                              \
    do {                                                                                           \
        const XP v_ = (v);                                                                         \
        XSMALL64W_ADD(Fu, Au, Bu, v_, XP_LO(v_), XP_HI(v_));                                       \
    } while (0)
#define XSMALL64W_FULL(Fu, Au, Bu, p)                                                              \
    XSMALL64W_ADD(Fu, Au, Bu, XP_LOAD(p), XH_LOAD(p), XH_LOAD((p) + HW))
    const int full = n - n % (4 * XPW);
    if (full < n) { /* the rest first, masked (one add per lane at most) */
        int k[4];
        tally_xrest4_(n, full, XPW, k);
        const float *t = x + full;
        XSMALL64W_PART(F0, A0, B0, XP_LOAD_PART(t, k[0]));
        XSMALL64W_PART(F1, A1, B1, XP_LOAD_PART(k[1] ? t + XPW : x, k[1]));
        XSMALL64W_PART(F2, A2, B2, XP_LOAD_PART(k[2] ? t + 2 * XPW : x, k[2]));
        XSMALL64W_PART(F3, A3, B3, XP_LOAD_PART(k[3] ? t + 3 * XPW : x, k[3]));
    }
    for (int i = 0; i < full; i += 4 * XPW) {
        XSMALL64W_FULL(F0, A0, B0, x + i);
        XSMALL64W_FULL(F1, A1, B1, x + i + XPW);
        XSMALL64W_FULL(F2, A2, B2, x + i + 2 * XPW);
        XSMALL64W_FULL(F3, A3, B3, x + i + 3 * XPW);
    }
#undef XSMALL64W_FULL
#undef XSMALL64W_PART
#undef XSMALL64W_ADD
    if (tally_xfenv_raised_()) return 0;
    const double fsum = XP_HSUM4_D(F0, F1, F2, F3);
    if (!(fsum - fsum == 0)) return 0; /* an F overflowed (data near FLT_MAX) */
    const XL At8 = XL_ADD(XL_ADD(XL_ADD(A0, A1), XL_ADD(A2, A3)), XL_ADD(XL_ADD(B0, B1), XL_ADD(B2, B3)));
    const int64_t At = (int64_t)XL_HSUM_U64(At8);
    return tally_xround_i128_(tally_xunwrap64_(ldexp(fsum, s), At), -s, out);
}
#endif
#if defined(XV_CVT64) && defined(XV_HSUM) && defined(XL_HSUM_U64) && XV_SAE
/* W64D (f64, AVX-512): W64W for doubles whose bits span at most 63 (prices with two decimals:
 * 53 significand bits a few binades apart; TWO took them, four adds per vector against W64D's
 * one, a product, a conversion and an int64 add). Per element y = x * 2^s (s from the sample),
 * converted to int64 and added into int64 lanes A that may wrap (sums modulo 2^64), and y added
 * into double lanes F by XV_ADD_NX (rounded to nearest, raising no flag).
 * Claim: if neither the inexact nor the invalid flag is raised, Y = sum(x) * 2^s is the integer
 *   At + 2^64 * floor((Fsum - At) / 2^64 + 1/2), with At the int64 sum of all A lanes modulo 2^64
 *   and Fsum the F lanes' sum in doubles.
 * Proof. No inexact and no invalid flag: every product x * 2^s was exact (an inexact one, an
 *   underflow among them, raises inexact; an overflowed one is inf, whose conversion is
 *   invalid; no FTZ / DAZ) and every conversion exact and in range: y is an integer with
 *   -2^63 <= y < 2^63. So At = Y (mod 2^64). Each F lane is a recursive double sum of
 *   k <= K = ceil(n / (XU * XW)) <= 256 of those y (n <= 8,192 doubles, XU * XW >= 32 lanes,
 *   checked below), so |F - its exact sum| <= (K-1) * 2^-53 * 1.01 * K * 2^63 < 2^35, |F| < 2^72.
 *   The XU * XW lanes are summed in doubles (at most 31 rounded adds below 2^77): an error below
 *   2^29. So |Fsum - Y| < 32 * 2^35 + 2^29 < 2^41, far within 1/4 of 2^64: (Fsum - At) / 2^64,
 *   computed in doubles (errors below 2^27 before the exact scaling, 2^-39 after the + 1/2),
 *   lies within 1/4 + 2^-30 of the integer (Y - At) / 2^64, which the floor of it plus 1/2
 *   therefore gives. |Y| <= n * 2^63 <= 2^76: an int128. So a returned 1 is sum(x) = Y * 2^-s
 *   rounded once (tally_xround_i128_).
 * The flags: the caller cleared them; this loop's only flag-raising operations are the products
 *   and the conversions (XV_ADD_NX raises none, the integer adds none). */
_Static_assert(XSMALL_BYTES / 8 <= 8192 && XU * XW >= 32, "W64D's bound needs n <= 2^13, 32 lanes");
XINLINE int XFN(small64d_)(const double *x, int n, int s, double *out) {
    const XV vs = XV_SET1(tally_xpow2_(s)); /* s in -1022 .. 1023 */
    XL A0 = XL_ZERO(), A1 = XL_ZERO(), A2 = XL_ZERO(), A3 = XL_ZERO();
    XV F0 = XV_ZERO(), F1 = F0, F2 = F0, F3 = F0;
#define XSMALL64D_ADD(Fu, Au, v)                                                                   \
    do {                                                                                           \
        const XV y_ = XV_MUL((v), vs);                                                             \
        Fu = XV_ADD_NX(Fu, y_);                                                                    \
        Au = XL_ADD(Au, XV_CVT64(y_));                                                             \
    } while (0)
    const int full = n - n % (4 * XW);
    if (full < n) { /* the rest first, masked (one add per lane at most) */
        int k[4];
        tally_xrest4_(n, full, XW, k);
        const double *t = x + full;
        XSMALL64D_ADD(F0, A0, XV_LOAD_F64_PART(t, k[0]));
        XSMALL64D_ADD(F1, A1, XV_LOAD_F64_PART(k[1] ? t + XW : x, k[1]));
        XSMALL64D_ADD(F2, A2, XV_LOAD_F64_PART(k[2] ? t + 2 * XW : x, k[2]));
        XSMALL64D_ADD(F3, A3, XV_LOAD_F64_PART(k[3] ? t + 3 * XW : x, k[3]));
    }
    for (int i = 0; i < full; i += 4 * XW) {
        XSMALL64D_ADD(F0, A0, XV_LOAD_F64(x + i));
        XSMALL64D_ADD(F1, A1, XV_LOAD_F64(x + i + XW));
        XSMALL64D_ADD(F2, A2, XV_LOAD_F64(x + i + 2 * XW));
        XSMALL64D_ADD(F3, A3, XV_LOAD_F64(x + i + 3 * XW));
    }
#undef XSMALL64D_ADD
    if (tally_xfenv_raised_()) return 0;
    const double fsum = XV_HSUM(XV_ADD(XV_ADD(F0, F1), XV_ADD(F2, F3)));
    const int64_t At = (int64_t)XL_HSUM_U64(XL_ADD(XL_ADD(A0, A1), XL_ADD(A2, A3)));
    return tally_xround_i128_(tally_xunwrap64_(fsum, At), -s, out);
}
#endif
XINLINE int XFN(small_sum)(const void *x, uint64_t n, int kind, double *out) {
    const size_t esize = kind == XK_SUM_F32 ? 4 : 8;
    if (n == 0 || n > XSMALL_BYTES / esize) return 0;
    double smax;
    int g, ok = 0;
    /* The sample first: integer work that overlaps the caller's floating-point work still in
     * flight, which the MXCSR save and load below wait for (~200 ticks a call less than with the
     * sample after them, measured on the 2-core VM at 4,096 elements, f32 and f64 alike). */
    if (!tally_xsample_(x, (int)(n < XSMALL_SAMPLE ? n : XSMALL_SAMPLE), kind == XK_SUM_F32, &smax, &g))
        return 0;
    tally_xfenv fenv;
    tally_xfenv_enter_(&fenv); /* flags clear */
    {
        const int mneed = tally_xceil_log2_(smax);
        /* the knob for W32W, W64W and W64D (exact_kernels.h: tally_exact_set_small_w32w) */
        const int wide = atomic_load_explicit(&tally_xsmall_w32w_, memory_order_relaxed);
        int done = 0, w32w = 0;
#if defined(XW32) && defined(XP_ADD_NX)
        w32w = kind == XK_SUM_F32 && wide;
        /* 2^30 for the sample's bound 2^mneed: 2x room below W32W's 2^31 (2-4x above the
         * sample's max), and a grid 2^(mneed-30) as fine as the 31 bits allow: a later, smaller
         * element may have finer bits. With 2^29 (4x room), prices from 1.00 to 100.00 (a
         * 24-bit significand 6.6 binades below the max) failed the flags and took the general
         * path, 4-6x slower (2-core EPYC, 4,096 f32). A failure (the flags) clears them and
         * goes on to W64W, then TWO. */
        if (w32w && mneed >= -97 && mneed <= 156 && g >= mneed - 30) {
            ok = XFN(small32w_)((const float *)x, (int)n, 30 - mneed, out);
            if (!ok) tally_xfenv_clear_();
        }
#endif
#if defined(XW32) && defined(XP_ADD_NX) && defined(XH_CVT64) && defined(XP_HSUM4_D)
        /* W64W where W32W's 31 bits were too few (the sample's, or the array's: its flags), with
         * 2^60 for the sample's bound (8x room below 2^63), a grid 2^(mneed-60), and the sample's
         * bits at most 52 binades apart: over 2^-20..2^20 a sample of 16 spans ~35 binades, the
         * array 40 (+ 24 bits), and a wasted pass before TWO cost 1.5x (2-core EPYC, 4,096 f32). */
        if (w32w && !ok && mneed >= -67 && mneed <= 186 && g >= mneed - 52) {
            ok = XFN(small64w_)((const float *)x, (int)n, 60 - mneed, out);
            if (!ok) tally_xfenv_clear_();
        }
#endif
#if defined(XV_CVT64) && defined(XV_HSUM) && defined(XL_HSUM_U64) && XV_SAE
        /* W64D: 2^62 for the sample's bound (2x room below 2^63, as W32W's) and a grid
         * 2^(mneed-62); a failure (the flags) clears them and goes on to TWO */
        if (wide && kind == XK_SUM_F64 && mneed >= -960 && mneed <= 1023 && g >= mneed - 62) {
            ok = XFN(small64d_)((const double *)x, (int)n, 62 - mneed, out);
            if (!ok) tally_xfenv_clear_();
        }
#endif
        done = ok;
#if defined(XW32)
        if (!done && !w32w && kind == XK_SUM_F32 && mneed >= -100 && mneed <= 153 && g >= mneed - XW32_BITS) {
            ok = XFN(small32_)((const float *)x, (int)n, mneed, out);
            done = 1;
        }
#endif
#if XV_SAE
        if (!done) {
            /* adds per lane, at most 2^T */
            const int per = (int)((((n + XW - 1) / XW) + XU - 1) / XU);
            int T = 0;
            while ((1 << T) < per) T++;
            const int m = mneed + 4, E0 = m + T + 3, E1 = E0 - 53 + T + 3;
            if (E0 <= 1023 && E1 >= -1022 && E1 - 52 <= g - 8) {
                ok = XFN(small2_)(x, (int)n, kind, E0, E1, out);
                done = 1;
            }
        }
#endif
#if XV_SAE && defined(XS_DMAX)
        /* SPECF where the sample ruled out the exact methods, f32 and f64 alike, unless the
         * sample spans more than 200 binades: over the whole exponent range 16 elements do not
         * bound the max, and a bias below it fails the flags (a wasted pass: full-range 4,096
         * f32 2,311 -> 3,278 ticks on the 2-core EPYC). When it declines, the flags cleared,
         * the rest as before. */
        if (!ok && !done && mneed - g <= 200 && atomic_load_explicit(&tally_xsmall_spec_, memory_order_relaxed) &&
            atomic_load_explicit(&tally_xspec_fast_, memory_order_relaxed)) {
            ok = XFN(small_specf_)(x, (int)n, kind, smax, out);
            if (!ok) tally_xfenv_clear_();
        }
#endif
#if XV_SAE
        /* SPEC where the sample ruled out the exact methods (a method whose checks failed is
         * rare: the general path then); f32 only where the general path would take BINS (its
         * LEV(2..4) on f32 data cost about what SPEC does, measured on the 2-core VM) */
        if (!ok && !done && atomic_load_explicit(&tally_xsmall_spec_, memory_order_relaxed) &&
            (kind == XK_SUM_F64 || tally_xlevels_for_(mneed + 4, g, 1) > XL_MAX))
            ok = XFN(small_spec_)(x, (int)n, kind, out);
#endif
        (void)done;
        (void)w32w;
        (void)wide;
        (void)mneed;
        (void)g;
    }
    (void)out;
    tally_xfenv_leave_(&fenv);
    return ok;
}
XENTRY int XFN(small_sum_f32)(const float *x, uint64_t n, double *out) {
    return XFN(small_sum)(x, n, XK_SUM_F32, out);
}
XENTRY int XFN(small_sum_f64)(const double *x, uint64_t n, double *out) {
    return XFN(small_sum)(x, n, XK_SUM_F64, out);
}
#endif
