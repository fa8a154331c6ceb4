/* The body of the exact-sum kernels, written once and stamped out per ISA. The including file
 * defines a vector of XW doubles and its operations, then includes this file:
 *
 *   XV, XW, XU (independent accumulator sets), XBLK (block length in elements), XFN(name)
 *   XV_ZERO(), XV_SET1(d), XV_ADD, XV_SUB, XV_MUL, XV_FMS(a,b,c) = fma(a,b,-c), XV_OR (bitwise),
 *   XV_MAXABS(acc, v) = lanewise max(acc, |v|) (any value where v is NaN), XV_STORE(double*, v),
 *   XV_LOAD_F64(p), XV_LOAD_F32(p) (XW floats widened exactly), XV_LOAD_F64_PART(p, k),
 *   XV_LOAD_F32_PART(p, k) (first k < XW lanes, the rest +0.0), XV_KEEP(v, k) (first k lanes of
 *   v, the rest +0.0), XV_KEEP_ORD(a, x) (lanes of a where x is not NaN, the rest +0.0),
 *   XV_NONZERO_MASK(v) (bit i set where lane i != 0 or is NaN),
 *   XV_MIN(a, v) / XV_MAX(a, v): lanewise IEEE 754-2019 minimum / maximum, -0 < +0 (a lane where
 *   a or v is NaN may give anything), XV_MIN_ORD / XV_MAX_ORD: the same, but a NaN lane of v
 *   leaves a, XV_NAN_MASK(v) (bit i set where lane i is NaN).
 * Optionally XF_W = XU * XW and a vector XF of XF_W 32-bit integers: XF_LOAD(const float *),
 * XF_STORE(uint32_t *, v), XF_SET1(u32), XF_MINU, XF_MAXU, XF_MINS, XF_MAXS (lanewise unsigned /
 * signed min and max), XF_ABSBITS(v) (the sign bits cleared). Then f32 sums without omit_nan
 * take their extremes (or max |x|) from integer min/max of the bits as loaded (see
 * XFN(xf_extremes)): integer ops on XF_W elements at once instead of FP ops on every widened
 * vector, which leaves the FP ports to the levels' adds.
 * Optionally XV_FEED_SUBR(a, b): a - b for the residue r = v - q of each level, as the body likes
 * it (XV_SUB if not defined). An FMA form fnmadd(b, 1, a) computes -(b*1) + a exactly and
 * rounds once, so it gives fl(a - b), the same bits as XV_SUB (and r is exact anyway, see
 * below); it runs on the multiply ports, which the adds leave idle.
 *
 * ---- The method ------------------------------------------------------------------------------
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
 * Whatever is left after the last level (r != 0: data spanning more than ~40*L bits) is added
 * exactly, lane by lane, through integer bins (the "careful" pass below). Every 2^T adds per lane
 * (and whenever m grows), each S - C (exact: same binade) is added exactly to the
 * superaccumulator and S restarts at C. The fast path needs E <= 1023, i.e. m <= 1010; blocks
 * with larger values (near DBL_MAX), NaN or inf go to the scalar exact path.
 * Squared deviations: hi = fl(d*d) enters level 0; lo = d*d - hi (exact by FMA when d*d neither
 * under- nor overflows) has |lo| <= ulp(hi)/2 <= 2^(m-53) <= 2^m1, so it enters level 1 directly;
 * levels >= 1 then take two adds per element, counted as such.
 *
 * ---- Blocks -----------------------------------------------------------------------------------
 * Data goes in blocks of XBLK elements. A block is first run optimistically with the current
 * grids while it computes its max |v| and the OR of its last residues; then
 *   - an accumulator that is not finite means NaN/inf (or huge values) in the block: restore the
 *     accumulators saved before the block and add the block element by element, exactly;
 *   - max > 2^m: restore, flush, raise m, run the block again (rare: m only grows);
 *   - some residue != 0: restore and run the block again with one more level (up to XL_MAX = 4),
 *     or, with 4 levels already, in careful mode, which hands each nonzero residue to per-exponent
 *     integer bins (tally_xbins below) that reach the superaccumulator exactly.
 * The NaN/inf and max tests cost nothing per element beyond one max; the residue test one OR.
 * The level count L adapts: the level-0 grid does not depend on L (level k only ever sees the
 * residues of level k-1), so blocks run with different L share the same accumulators. A block
 * also reports whether L-1 levels would have left no residue; after 8 such blocks in a row L
 * drops by one. So f32 price-like data runs with one level (24-bit values, 40-bit level),
 * f64 price-like with two, squared deviations (106-bit exact squares over a range of sizes)
 * three or four, and data spanning a huge range pays for four plus the bins. (With at most
 * three levels, squared deviations of data spanning 2^-20..2^20 ran 8x slower, through the bins.)
 * The first block's max is looked at before the loop, so a call does not start with a wasted
 * pass (the CPU backend calls these kernels on 64 KiB pieces).
 */
#include <math.h>

#define XT_BITS 10
#define XL_MAX 4
#define XM_INIT (-1100)     /* "no nonzero value yet": every grid clamps to u = 2^-1074 */
#define XM_FAST_MAX (1023 - XT_BITS - 3) /* E0 = m + T + 3 <= 1023 */

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

#ifndef TALLY_EXACT_IMPL_COMMON /* once per file, however many bodies it stamps */
#define TALLY_EXACT_IMPL_COMMON
enum { XK_SUM_F32 = 0, XK_SUM_F64 = 1, XK_SQ_F32 = 2, XK_SQ_F64 = 3 };
enum { XMODE_CAREFUL = 1, XMODE_OMIT = 2, XMODE_MINMAX = 4 }; /* block modes, see XFN(step) */
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

/* Residues that the levels could not hold (data spanning more than ~40 L bits) are collected by
 * exponent before they reach the superaccumulator: bin[e] holds a sum of signed 53-bit
 * significands that all scale by 2^(e-1075) (e = the biased exponent, 1 for subnormals), so an
 * add is one integer add. A bin takes at most 1024 adds (|bin| < 2^63) before it is spilled
 * exactly into the superaccumulator; every bin is spilled at the end of a call, which leaves the
 * bins zero again. One set per thread (thread-local: 20 KiB, zero at thread start). */
typedef struct {
    int64_t bin[2048];
    uint16_t cnt[2048];  /* adds since the last spill; 0: not in the dirty list */
    uint16_t dirty[2048];
    int ndirty;
} tally_xbins;

static inline void tally_xbins_spill_(tally_exact *acc, int64_t v, int e) {
    /* v * 2^(e-1075), |v| < 2^63: its lowest bit sits at bit p >= 14 of the fixed-point number,
     * and |v| << (p mod 32) spans at most 94 bits: three chunks, each changed by < 2^32. */
    int p = e - 1075 + TALLY_EXACT_BIAS;
    int i = p >> 5, s = p & 31;
    int64_t neg = v < 0 ? -1 : 0;
    uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    uint64_t rest = a >> (32 - s); /* < 2^62 */
    int64_t c0 = (int64_t)((a << s) & 0xffffffffu);
    int64_t c1 = (int64_t)(rest & 0xffffffffu);
    int64_t c2 = (int64_t)(rest >> 32);
    acc->chunk[i] += (c0 ^ neg) - neg;
    acc->chunk[i + 1] += (c1 ^ neg) - neg;
    acc->chunk[i + 2] += (c2 ^ neg) - neg;
    if (++acc->nadds >= TALLY_EXACT_MAX_ADDS) tally_exact_normalize(acc);
}

static inline void tally_xbins_add_(tally_xbins *b, tally_exact *acc, double r) {
    uint64_t x = tally_exact_bits_(r);
    int e = (int)((x >> 52) & 0x7ff);
    int64_t m = (int64_t)(x & 0x000fffffffffffffull);
    if (e) m |= (int64_t)1 << 52;
    else e = 1;
    int64_t neg = -(int64_t)(x >> 63);
    m = (m ^ neg) - neg; /* branch-free: the sign is random in wide data */
    if (b->cnt[e] == 0) b->dirty[b->ndirty++] = (uint16_t)e;
    b->bin[e] += m;
    if (++b->cnt[e] == 1024) {
        tally_xbins_spill_(acc, b->bin[e], e);
        b->bin[e] = 0;
        b->cnt[e] = 1; /* stays in the dirty list */
    }
}

static inline void tally_xbins_flush_(tally_xbins *b, tally_exact *acc) {
    for (int j = 0; j < b->ndirty; j++) {
        int e = b->dirty[j];
        if (b->bin[e]) tally_xbins_spill_(acc, b->bin[e], e);
        b->bin[e] = 0;
        b->cnt[e] = 0;
    }
    b->ndirty = 0;
}

static _Thread_local tally_xbins tally_xbins_tls;

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
#endif

XINLINE XV XFN(load)(const void *x, uint64_t i, int kind) {
    return (kind == XK_SUM_F32 || kind == XK_SQ_F32) ? XV_LOAD_F32((const float *)x + i)
                                                     : XV_LOAD_F64((const double *)x + i);
}
XINLINE XV XFN(load_part)(const void *x, uint64_t i, int k, int kind) {
    return (kind == XK_SUM_F32 || kind == XK_SQ_F32) ? XV_LOAD_F32_PART((const float *)x + i, k)
                                                     : XV_LOAD_F64_PART((const double *)x + i, k);
}

/* Runs v through levels k0..L-1 of one accumulator set; the last residue is ORed into *res
 * (fast) or added exactly lane by lane (careful). The residue after level L-2 (what L-1 levels
 * would have left) is ORed into *res1, so the driver knows when fewer levels would do. */
XINLINE void XFN(feed)(XV *S, int k0, int L, XV v, XV *res, XV *res1, int careful,
                       tally_exact *acc) {
    for (int k = k0; k < L; k++) {
        XV s = XV_ADD(S[k], v);
        XV q = XV_SUB(s, S[k]);
        S[k] = s;
        v = XV_FEED_SUBR(v, q);
        if (!careful && k == L - 2) *res1 = XV_OR(*res1, v);
    }
    if (!careful) {
        *res = XV_OR(*res, v);
    } else if (XW == 1) { /* scalar: adding a zero is harmless and cheaper than a branch */
        double lane[XW];
        XV_STORE(lane, v);
        tally_xbins_add_(&tally_xbins_tls, acc, lane[0]);
    } else {
        unsigned mask = XV_NONZERO_MASK(v);
        if (mask) {
            double lane[XW];
            XV_STORE(lane, v);
            do { /* over the set bits: no branch per lane to mispredict */
                unsigned j = (unsigned)__builtin_ctz(mask);
                if (j >= XW) break; /* never: the mask has XW bits (see exact_avx512.c) */
                tally_xbins_add_(&tally_xbins_tls, acc, lane[j]);
                mask &= mask - 1;
            } while (mask);
        }
    }
}

/* One vector of input (k < XW: only the first k lanes are data). mode: XMODE_* bits. With
 * omit_nan, NaN lanes become +0 (adding nothing) so that sparse NaNs keep the fast path; the
 * flags for blocks of nothing but zeros and NaNs come from tally_xzero_block_flags_.
 * The block's bound comes from *vmax (max |v|), or with XMODE_MINMAX from the extremes *vmn,
 * *vmx (max |v| = max(-min, max)): then one max op per vector becomes two (min and max), and the
 * extremes of a fused sum+min+max cost one op per vector. A partial vector (k < XW, the call's
 * last elements) is left out of the extremes: its padding lanes are +0, not data; XFN(block)
 * folds those elements itself. In omit mode the extremes skip NaN lanes and *nans counts them;
 * otherwise a NaN makes the level-0 accumulator NaN and the block goes the exact slow way,
 * which counts it there (a NaN lane's extremes may then be anything: they are dropped). */
XINLINE void XFN(step)(XV *S, XV v, int k, int kind, int L, XV vmean, XV *vmax, XV *vmn,
                       XV *vmx, unsigned *nans, XV *res, XV *res1, int mode, int ext,
                       tally_exact *acc) {
    const int careful = mode & XMODE_CAREFUL;
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
        XFN(feed)(S, 0, L, v, res, res1, careful, acc);
    } else {
        XV d = XV_SUB(v, vmean);
        XV hi = XV_MUL(d, d);
        XV lo = XV_FMS(d, d, hi);
        if (k < XW) { hi = XV_KEEP(hi, k); lo = XV_KEEP(lo, k); }
        if (mode & XMODE_OMIT) { hi = XV_KEEP_ORD(hi, v); lo = XV_KEEP_ORD(lo, v); }
        *vmax = XV_MAXABS(*vmax, hi);
        XFN(feed)(S, 0, L, hi, res, res1, careful, acc);
        XFN(feed)(S, 1, L, lo, res, res1, careful, acc);
    }
}

static inline unsigned XFN(orbits)(XV v) { /* 1 if some lane has a nonzero magnitude */
    double lane[XW];
    uint64_t orbits = 0;
    XV_STORE(lane, v);
    for (int j = 0; j < XW; j++) orbits |= tally_exact_bits_(lane[j]);
    return (orbits << 1) != 0; /* a -0 residue (from x = -0) is no residue */
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

/* What one run of a block found besides the residue bits. */
typedef struct {
    double bmax;    /* max |level-0 input| (0 if none) */
    int finite;     /* the level-0 accumulators stayed finite */
    double mn, mx;  /* XMODE_MINMAX: extremes of the non-NaN elements (+inf / -inf: none) */
    unsigned nans;  /* XMODE_MINMAX with XMODE_OMIT: NaN elements */
} XFN(bres);

/* Runs one block of len <= XBLK elements through L levels. Returns bit 0: some last residue is
 * nonzero (fast mode only); bit 1: some residue after level L-2 is nonzero. *o: see above.
 * Every max (or min/max) chain has one accumulator per set: on one chain the op's latency (3
 * cycles for VRANGEPD on Zen 4) bounded the f32 sum. */
XINLINE unsigned XFN(block)(XV Sm[XU][XL_MAX], const void *x, uint64_t i0, int len, int kind,
                            int L, XV vmean, int mode, tally_exact *acc, XFN(bres) *o) {
    XV S[XU][XL_MAX]; /* a local copy the compiler can keep in registers */
    for (int w = 0; w < XU; w++)
        for (int k = 0; k < XL_MAX; k++) S[w][k] = Sm[w][k];
    XV vmax[XU], vmn[XU], vmx[XU], res = XV_ZERO(), res1 = XV_ZERO();
    for (int w = 0; w < XU; w++) {
        vmax[w] = XV_ZERO();
        vmn[w] = XV_SET1(HUGE_VAL);
        vmx[w] = XV_SET1(-HUGE_VAL);
    }
    unsigned nans = 0;
    int i = 0;
#if defined(XF_W) /* f32 sums: the extremes (or max |x|) on the bits as loaded, see XF_W above */
    const int fx = kind == XK_SUM_F32 && !(mode & XMODE_OMIT);
    XF fminu = XF_SET1(0xffffffffu), fmaxu = XF_SET1(0), fmins = XF_SET1(0x7fffffffu),
       fmaxs = XF_SET1(0x80000000u);
#else
    const int fx = 0;
#endif
    for (; i + XU * XW <= len; i += XU * XW) {
#if defined(XF_W)
        if (fx) {
            XF f = XF_LOAD((const float *)x + i0 + i);
            if (mode & XMODE_MINMAX) {
                fminu = XF_MINU(fminu, f);
                fmaxu = XF_MAXU(fmaxu, f);
                fmins = XF_MINS(fmins, f);
                fmaxs = XF_MAXS(fmaxs, f);
            } else {
                fmaxu = XF_MAXU(fmaxu, XF_ABSBITS(f));
            }
        }
#endif
        for (int u = 0; u < XU; u++)
            XFN(step)(S[u], XFN(load)(x, i0 + i + u * XW, kind), XW, kind, L, vmean, &vmax[u],
                      &vmn[u], &vmx[u], &nans, &res, &res1, mode, !fx, acc);
    }
#if defined(XF_W)
    /* Reduced right away: live across the calls below, GCC 12 kept them in memory in the loop
     * (a store-load chain per step, f32 sum+min+max 2x slower). The files that define XF_W also
     * turn GCC's loop vectorizer off: it had these lane loops move the accumulators through the
     * stack on every step of the loop above. */
    double fxmn = HUGE_VAL, fxmx = -HUGE_VAL, fxabs = 0;
    if (fx && i > 0) {
        if (mode & XMODE_MINMAX) {
            fxmn = tally_xf_extremes_(fminu, fmaxu, fmins, fmaxs, &fxmx);
        } else {
            uint32_t fl[XF_W], top = 0;
            XF_STORE(fl, fmaxu);
            for (int j = 0; j < XF_W; j++) top = fl[j] > top ? fl[j] : top;
            float f;
            memcpy(&f, &top, sizeof f);
            fxabs = (double)f; /* a NaN (bits above inf) is no bound: no harm, see the block's end */
        }
    }
#endif
    int u = 0;
    for (; i + XW <= len; i += XW, u++)
        XFN(step)(S[u], XFN(load)(x, i0 + i, kind), XW, kind, L, vmean, &vmax[u], &vmn[u],
                  &vmx[u], &nans, &res, &res1, mode, 1, acc);
    const int tail = i;
    if (i < len)
        XFN(step)(S[u], XFN(load_part)(x, i0 + i, len - i, kind), len - i, kind, L, vmean,
                  &vmax[u], &vmn[u], &vmx[u], &nans, &res, &res1, mode, 1, acc);
    for (int w = 0; w < XU; w++)
        for (int k = 0; k < XL_MAX; k++) Sm[w][k] = S[w][k];
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
        XV_STORE(lane, a);
        for (int j = 0; j < XW; j++) mx = lane[j] > mx ? lane[j] : mx;
#if defined(XF_W)
        if (fxabs > mx) mx = fxabs;
#endif
    }
    o->bmax = mx;
    if (mode & XMODE_CAREFUL) return 0;
    return XFN(orbits)(res) | (L >= 2 ? XFN(orbits)(res1) << 1 : 2u);
}

/* The block with a run-time level count and mode, each case compiled with constant ones. */
static unsigned XFN(block_l)(XV S[XU][XL_MAX], const void *x, uint64_t i0, int len, int kind,
                             int L, XV vmean, int mode, tally_exact *acc, XFN(bres) *o) {
    switch (kind * 64 + mode * 8 + L) {
#define XCASE(K, MO, LL)                                                                         \
    case (K) * 64 + (MO) * 8 + (LL):                                                             \
        return XFN(block)(S, x, i0, len, K, LL, vmean, (MO), acc, o);
#define XCASES(K, MO)                                                                            \
    XCASE(K, MO, 2) XCASE(K, MO, 3) XCASE(K, MO, 4) XCASE(K, MO | 1, 4)                          \
    XCASE(K, MO | 2, 2) XCASE(K, MO | 2, 3) XCASE(K, MO | 2, 4) XCASE(K, MO | 3, 4)
#define XCASES_SUM(K)                                                                            \
    XCASES(K, 0) XCASE(K, 0, 1) XCASE(K, 2, 1)                                                   \
    XCASES(K, XMODE_MINMAX) XCASE(K, XMODE_MINMAX, 1) XCASE(K, XMODE_MINMAX | 2, 1)
        XCASES_SUM(XK_SUM_F32)
        XCASES_SUM(XK_SUM_F64)
        XCASES(XK_SQ_F32, 0)
        XCASES(XK_SQ_F64, 0)
#undef XCASES_SUM
#undef XCASES
#undef XCASE
    default:
        return 0; /* not reached */
    }
}
/* Max |level-0 input| over x[i0 .. i0+len): a cheap first look that sets the first bound, so
 * the first block of a call is not run twice. NaN/inf give NaN/inf or are missed: no harm, the
 * block checks catch them. */
XINLINE double XFN(blockmax)(const void *x, uint64_t i0, int len, int kind, XV vmean) {
    XV vmax = XV_ZERO(), m4[4] = {XV_ZERO(), XV_ZERO(), XV_ZERO(), XV_ZERO()};
    int i = 0;
    for (; i + 4 * XW <= len; i += 4 * XW) /* four chains: the max latency would dominate */
        for (int j = 0; j < 4; j++) {
            XV v = XFN(load)(x, i0 + i + j * XW, kind);
            if (kind > XK_SUM_F64) {
                XV d = XV_SUB(v, vmean);
                v = XV_MUL(d, d);
            }
            m4[j] = XV_MAXABS(m4[j], v);
        }
    vmax = XV_MAXABS(XV_MAXABS(m4[0], m4[1]), XV_MAXABS(m4[2], m4[3]));
    for (; i + XW <= len; i += XW) {
        XV v = XFN(load)(x, i0 + i, kind);
        if (kind > XK_SUM_F64) {
            XV d = XV_SUB(v, vmean);
            v = XV_MUL(d, d);
        }
        vmax = XV_MAXABS(vmax, v);
    }
    if (i < len) {
        XV v = XFN(load_part)(x, i0 + i, len - i, kind);
        if (kind > XK_SUM_F64) {
            XV d = XV_SUB(v, vmean);
            v = XV_KEEP(XV_MUL(d, d), len - i);
        }
        vmax = XV_MAXABS(vmax, v);
    }
    double lane[XW], mx = 0;
    XV_STORE(lane, vmax);
    for (int j = 0; j < XW; j++) mx = lane[j] > mx ? lane[j] : mx;
    return mx;
}

/* Moves what the accumulators hold into the superaccumulator and restarts them at C. Each lane
 * value S - C is exact (same binade), a multiple of u_k, and at most 2^(E-2) in magnitude (the
 * invariant above); a sum of up to 8 of them is a multiple of u_k below 2^(E+1) = 2^53 u_k, so it
 * is exact in any order. So lanes are summed in groups of 8 with plain adds, and only one exact
 * add per group reaches the superaccumulator (a few per level instead of one per lane). */
static void XFN(flush)(XV S[XU][XL_MAX], const double *C, tally_exact *acc) {
    for (int k = 0; k < XL_MAX; k++) {
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

/* Level counts: sums start with one level and go up to four when residues appear, and back
 * down after a run of blocks that did not need the last level; squared deviations need two at
 * least (lo enters at level 1). */
static void XFN(run)(const void *x, uint64_t n, int kind, double mean, int omit_nan,
                     tally_exact *acc, tally_xminmax *mm) {
    if (n == 0) return;
    const int Lmin = kind <= XK_SUM_F64 ? 1 : 2, Lmax = XL_MAX;
    /* f32 values have 24 bits: one level of 40 usually holds them; f64 values need two */
    int L = kind == XK_SUM_F32 ? 1 : 2, easy_run = 0;
    XV vmean = XV_SET1(mean);
    int m = XM_INIT;
    {
        double mx = XFN(blockmax)(x, 0, (int)(n < XBLK ? n : XBLK), kind, vmean);
        if (mx > 0 && mx <= tally_xpow2_(XM_FAST_MAX)) m = tally_xceil_log2_(mx);
    }
    double C[XL_MAX];
    tally_xgrids_(m, XL_MAX, C);
    double bound = tally_xpow2_(m); /* 2^m */
    XV S[XU][XL_MAX], saved[XU][XL_MAX];
    for (int u = 0; u < XU; u++)
        for (int k = 0; k < XL_MAX; k++) S[u][k] = XV_SET1(C[k]);
    /* adds per lane per level in one block (upper bound): the vectors are dealt round-robin */
    const unsigned per_block = (unsigned)((((XBLK + XW - 1) / XW) + XU - 1) / XU) *
                               (kind <= XK_SUM_F64 ? 1u : 2u);
    const size_t esize = (kind == XK_SUM_F32 || kind == XK_SQ_F32) ? 4 : 8;
    unsigned cnt = 0;
    int any_fast = 0, nonneg = kind > XK_SUM_F64;
    const int omode = (omit_nan ? XMODE_OMIT : 0) | (mm ? XMODE_MINMAX : 0);
    double mn = HUGE_VAL, mx = -HUGE_VAL; /* the call's extremes (mm) */
    uint64_t nans = 0;
    for (uint64_t i0 = 0; i0 < n; i0 += XBLK) {
        int len = (int)(n - i0 < XBLK ? n - i0 : XBLK);
        const void *xb = (const char *)x + i0 * esize;
        memcpy(saved, S, sizeof S);
        for (;;) {
            XFN(bres) o;
            unsigned r = XFN(block_l)(S, x, i0, len, kind, L, vmean, omode, acc, &o);
            if (o.finite && o.bmax > bound && o.bmax <= tally_xpow2_(XM_FAST_MAX)) {
                /* grow the bound: flush what the accumulators held at the block start */
                memcpy(S, saved, sizeof S);
                XFN(flush)(S, C, acc);
                m = tally_xceil_log2_(o.bmax);
                tally_xgrids_(m, XL_MAX, C);
                bound = tally_xpow2_(m);
                for (int u = 0; u < XU; u++)
                    for (int k = 0; k < XL_MAX; k++) S[u][k] = XV_SET1(C[k]);
                memcpy(saved, S, sizeof S);
                cnt = 0;
                continue;
            }
            if (!o.finite || o.bmax > bound) { /* NaN, inf or values beyond 2^1010 */
                memcpy(S, saved, sizeof S);
                tally_xslow_(xb, (uint64_t)len, kind, mean, omit_nan, acc);
                if (mm) nans += tally_xslow_minmax_(x, i0, (uint64_t)len, kind, &mn, &mx);
                break;
            }
            if (r & 1) {
                memcpy(S, saved, sizeof S);
                if (L < Lmax) {
                    L++;
                    easy_run = 0;
                    continue;
                }
                XFN(block_l)(S, x, i0, len, kind, L, vmean, omode | XMODE_CAREFUL, acc, &o);
            } else if (L > Lmin && !(r & 2) && ++easy_run >= 8) {
                L--;
                easy_run = 0;
            }
            if (mm) { /* the extremes of the run that counts (every run sees every element) */
                mn = tally_xmin_(mn, o.mn);
                mx = tally_xmax_(mx, o.mx);
                nans += o.nans;
            }
            if (o.bmax > 0) {
                any_fast = nonneg = 1;
            } else if (!any_fast || !nonneg) {
                unsigned f = tally_xzero_block_flags_(xb, (uint64_t)len, kind);
                any_fast |= (int)(f & 1);
                nonneg |= (int)(f >> 1);
            }
            cnt += per_block;
            if (cnt + per_block > (1u << XT_BITS)) {
                XFN(flush)(S, C, acc);
                cnt = 0;
            }
            break;
        }
    }
    XFN(flush)(S, C, acc);
    tally_xbins_flush_(&tally_xbins_tls, acc);
    if (any_fast)
        acc->flags |= TALLY_EXACT_F_ANY | (nonneg ? (uint32_t)TALLY_EXACT_F_NONNEGZERO : 0u);
    if (mm) {
        mm->min = tally_xmin_(mm->min, mn);
        mm->max = tally_xmax_(mm->max, mx);
        mm->nans += nans;
    }
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
