/* Exact float sums: a superaccumulator that holds any sum of doubles exactly, and the one
 * rounding to f64 at the end. Header-only so that the CPU kernels, the core and CUDA device code
 * share one definition (every function is `static inline TALLY_HD`).
 *
 * Layout (the CUDA backend accumulates into this on the device and rounds on the host):
 *
 *   value = sum over i of chunk[i] * 2^(32*i - TALLY_EXACT_BIAS),   i = 0 .. TALLY_EXACT_CHUNKS-1
 *
 *   - chunk[] are signed 64-bit "digits" of nominal width 32 bits with DEFERRED carries: an add
 *     puts at most 32 bits of magnitude into each of three consecutive chunks, so the digits may
 *     run outside [0, 2^32) until tally_exact_normalize propagates the carries. Because the value
 *     is a plain weighted sum of the chunks, merging two accumulators is an element-wise integer
 *     add (a GPU can atomicAdd each chunk), and the order of adds and merges cannot change it.
 *   - TALLY_EXACT_BIAS = 1088: chunk 0 has weight 2^-1088, below the smallest subnormal 2^-1074,
 *     so every finite double is a whole number of chunk-0 units. The largest double (< 2^1024)
 *     touches chunks up to 66; chunk 67 (weight 2^1056) takes carries, so 68 chunks hold any sum of
 *     up to 2^64 finite doubles (|sum| < 2^1088) with room to spare.
 *   - nadds counts adds since the last normalisation, with the invariant
 *     |chunk[i]| < (nadds + 1) * 2^32: a normalised chunk lies in [0, 2^32), each add changes a
 *     chunk by less than 2^32, and a merge sets nadds = nadds_dst + nadds_src + 1. So the int64
 *     digits cannot overflow while nadds <= TALLY_EXACT_MAX_ADDS (2^30; the true limit is about
 *     2^31). The add and merge functions normalise on their own when the counter reaches the
 *     limit; whoever adds into the chunks directly (a GPU kernel: atomicAdd of one double's three
 *     32-bit pieces) must keep the same invariant and normalise before it would break.
 *   - flags: NaN, +inf and -inf seen (these values are not in the chunks), ANY (some value was
 *     added) and NONNEGZERO (some added value was not -0.0). Merging ORs the flags.
 *
 * Rounding (tally_exact_round): NaN if a NaN was added or both +inf and -inf; else +-inf if only
 * one sign of infinity; else the exact finite value rounded once to nearest, ties to even, to
 * f64 (+-inf when that rounding goes beyond DBL_MAX). An exact zero gives -0.0 only when values
 * were added and every one was -0.0 (IEEE: -0 + -0 = -0); otherwise +0.0 (the empty sum is +0.0,
 * as in NumPy).
 *
 * Needs IEEE double arithmetic only for callers; this file itself uses integer arithmetic on the
 * bits, so -ffast-math or flush-to-zero elsewhere cannot break it (they do break the kernels).
 */
#ifndef TALLY_CORE_EXACT_SUM_H
#define TALLY_CORE_EXACT_SUM_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define TALLY_HD __host__ __device__
#else
#define TALLY_HD
#endif

#define TALLY_EXACT_CHUNKS 68
#define TALLY_EXACT_BIAS 1088
#define TALLY_EXACT_MAX_ADDS (1u << 30)

enum {
    TALLY_EXACT_F_NAN = 1,        /* a NaN was added */
    TALLY_EXACT_F_PINF = 2,       /* +inf was added */
    TALLY_EXACT_F_NINF = 4,       /* -inf was added */
    TALLY_EXACT_F_ANY = 8,        /* at least one value was added */
    TALLY_EXACT_F_NONNEGZERO = 16 /* at least one added value was not -0.0 */
};

typedef struct tally_exact {
    int64_t chunk[TALLY_EXACT_CHUNKS];
    uint32_t nadds; /* adds since the last normalisation (see above) */
    uint32_t flags; /* TALLY_EXACT_F_* */
} tally_exact;

static inline TALLY_HD uint64_t tally_exact_bits_(double x) {
#if defined(__CUDA_ARCH__)
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
#endif
}

static inline TALLY_HD double tally_exact_double_(uint64_t b) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double((long long)b);
#else
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
#endif
}

static inline TALLY_HD void tally_exact_init(tally_exact *a) {
    for (int i = 0; i < TALLY_EXACT_CHUNKS; i++) a->chunk[i] = 0;
    a->nadds = 0;
    a->flags = 0;
}

/* Propagates the deferred carries: afterwards chunk[0..CHUNKS-2] lie in [0, 2^32) and the top
 * chunk holds the signed rest (so the value is negative iff the top chunk is). Exact. */
static inline TALLY_HD void tally_exact_normalize(tally_exact *a) {
    /* Only the span of nonzero chunks needs work: zeros below it make no carry, and above it
     * the carry dies out within a few chunks (real data touch a handful of chunks). */
    int lo = 0, hi = TALLY_EXACT_CHUNKS - 1;
    while (lo < TALLY_EXACT_CHUNKS - 1 && a->chunk[lo] == 0) lo++;
    while (hi > lo && a->chunk[hi] == 0) hi--;
    int64_t carry = 0;
    int i = lo;
    for (; i < TALLY_EXACT_CHUNKS - 1; i++) {
        if (i > hi && carry == 0) break;
        int64_t c = a->chunk[i] + carry; /* |c| < 2^63: digits are bounded by the add budget */
        uint64_t low = (uint64_t)c & 0xffffffffu;
        carry = (c - (int64_t)low) / ((int64_t)1 << 32); /* exact division: floor(c / 2^32) */
        a->chunk[i] = (int64_t)low;
    }
    if (i == TALLY_EXACT_CHUNKS - 1) a->chunk[TALLY_EXACT_CHUNKS - 1] += carry;
    a->nadds = 0;
}

/* Adds a FINITE double exactly, without touching the flags (for kernels that set the flags
 * themselves). x = m * 2^(e-1075) with a 53-bit integer m (e = 1 for subnormals); its lowest
 * bit sits at bit p = e - 1075 + BIAS >= 14 of the fixed-point number, so m << (p mod 32) spans
 * at most 85 bits: three chunks starting at p / 32. */
static inline TALLY_HD void tally_exact_add_finite_(tally_exact *a, double x) {
    uint64_t b = tally_exact_bits_(x);
    uint64_t e = (b >> 52) & 0x7ff;
    uint64_t m = b & 0x000fffffffffffffull;
    if (e) m |= 0x0010000000000000ull; else e = 1;
    int p = (int)e - 1075 + TALLY_EXACT_BIAS;
    int i = p >> 5, s = p & 31;
    uint64_t hi = m >> (32 - s);             /* bits 32.. of m << s (s = 0: m >> 32) */
    int64_t c0 = (int64_t)((m << s) & 0xffffffffu);
    int64_t c1 = (int64_t)(hi & 0xffffffffu);
    int64_t c2 = (int64_t)(hi >> 32);         /* < 2^21 */
    int64_t neg = -(int64_t)(b >> 63);        /* 0 or -1: conditional negation */
    a->chunk[i] += (c0 ^ neg) - neg;
    a->chunk[i + 1] += (c1 ^ neg) - neg;
    a->chunk[i + 2] += (c2 ^ neg) - neg;
    if (++a->nadds >= TALLY_EXACT_MAX_ADDS) tally_exact_normalize(a);
}

/* Adds any double exactly (NaN and infinities go to the flags). */
static inline TALLY_HD void tally_exact_add(tally_exact *a, double x) {
    uint64_t b = tally_exact_bits_(x);
    if (((b >> 52) & 0x7ff) == 0x7ff) {
        if (b & 0x000fffffffffffffull) a->flags |= TALLY_EXACT_F_NAN;
        else a->flags |= (b >> 63) ? TALLY_EXACT_F_NINF : TALLY_EXACT_F_PINF;
        a->flags |= TALLY_EXACT_F_ANY | TALLY_EXACT_F_NONNEGZERO;
        return;
    }
    a->flags |= (b == 0x8000000000000000ull) ? (uint32_t)TALLY_EXACT_F_ANY
                                            : (uint32_t)(TALLY_EXACT_F_ANY | TALLY_EXACT_F_NONNEGZERO);
    if ((b << 1) == 0) return; /* +-0 adds nothing */
    tally_exact_add_finite_(a, x);
}

/* dst += src, exactly. src is not changed. */
static inline TALLY_HD void tally_exact_merge(tally_exact *dst, const tally_exact *src) {
    /* Invariant: |chunk| < (nadds + 1) * 2^32 (a normalised accumulator counts as one add). */
    uint64_t total = (uint64_t)dst->nadds + src->nadds + 1;
    if (total >= TALLY_EXACT_MAX_ADDS) {
        tally_exact s = *src;
        tally_exact_normalize(&s);
        tally_exact_normalize(dst);
        for (int i = 0; i < TALLY_EXACT_CHUNKS; i++) dst->chunk[i] += s.chunk[i];
        dst->nadds = 1; /* both were normalised: each digit is now < 2^33 */
        dst->flags |= src->flags;
        tally_exact_normalize(dst);
        return;
    }
    for (int i = 0; i < TALLY_EXACT_CHUNKS; i++) dst->chunk[i] += src->chunk[i];
    dst->nadds = (uint32_t)total;
    dst->flags |= src->flags;
}

/* Digit i of a normalised magnitude whose digits lo .. top are in d[] (the others are zero). */
static inline TALLY_HD uint64_t tally_exact_digit_(const int64_t *d, int lo, int top, int i) {
    return (i < lo || i > top) ? 0 : (uint64_t)d[i];
}
/* Bits [pos, pos+n) (n <= 32) of that magnitude. */
static inline TALLY_HD uint64_t tally_exact_getbits_(const int64_t *d, int lo, int top, int pos,
                                                     int n) {
    int i = pos >> 5, s = pos & 31;
    uint64_t w = tally_exact_digit_(d, lo, top, i) >> s;
    w |= tally_exact_digit_(d, lo, top, i + 1) << (32 - s);
    return w & ((1ull << n) - 1);
}
static inline TALLY_HD int tally_exact_clz32_(uint64_t v) { /* 0 < v < 2^32: leading zeros of 32 */
#if defined(__CUDA_ARCH__)
    return __clzll((long long)v) - 32;
#elif defined(__GNUC__)
    return __builtin_clzll(v) - 32;
#else
    int n = 0;
    while (!(v & 0x80000000u)) { v <<= 1; n++; }
    return n;
#endif
}

/* The exact value rounded once to nearest-even f64, with the special cases described above.
 * Does not change *a. Works on the span of nonzero digits only (real sums touch a handful of the
 * 68), so a call costs about a scan of the digits. */
static inline TALLY_HD double tally_exact_round(const tally_exact *a) {
    uint32_t f = a->flags;
    if ((f & TALLY_EXACT_F_NAN) || ((f & TALLY_EXACT_F_PINF) && (f & TALLY_EXACT_F_NINF)))
        return tally_exact_double_(0x7ff8000000000000ull);
    if (f & TALLY_EXACT_F_PINF) return tally_exact_double_(0x7ff0000000000000ull);
    if (f & TALLY_EXACT_F_NINF) return tally_exact_double_(0xfff0000000000000ull);

    const int N = TALLY_EXACT_CHUNKS;
    const uint64_t zero = (f & TALLY_EXACT_F_ANY) && !(f & TALLY_EXACT_F_NONNEGZERO)
                              ? 0x8000000000000000ull : 0; /* -0 only if all added were -0 */
    int lo = 0, hi = N - 1;
    while (lo < N && a->chunk[lo] == 0) lo++;
    if (lo == N) return tally_exact_double_(zero);
    while (a->chunk[hi] == 0) hi--;
    /* Normalise digits lo.. into d: carries go up from lo, and die out a few digits above hi
     * (|digit| < 2^63 by the add budget, each step divides the carry by 2^32). */
    int64_t d[TALLY_EXACT_CHUNKS];
    int64_t carry = 0;
    int i = lo;
    for (; i < N - 1; i++) {
        if (i > hi && carry == 0) break;
        int64_t c = a->chunk[i] + carry;
        uint64_t low = (uint64_t)c & 0xffffffffu;
        carry = (c - (int64_t)low) / ((int64_t)1 << 32); /* exact division: floor(c / 2^32) */
        d[i] = (int64_t)low;
    }
    int top = i - 1; /* digits above are zero, or: */
    if (i == N - 1) {
        d[N - 1] = a->chunk[N - 1] + carry; /* signed: the value is negative iff this is */
        top = N - 1;
    }
    uint64_t sign = 0;
    if (top >= lo && d[top] < 0) { /* only the top chunk can be negative: negate, -(sum d_i w_i) = sum (-d_i) w_i */
        sign = 1;
        carry = 0;
        for (i = lo; i < top; i++) {
            int64_t c = -d[i] + carry;
            uint64_t low = (uint64_t)c & 0xffffffffu;
            carry = (c - (int64_t)low) / ((int64_t)1 << 32);
            d[i] = (int64_t)low;
        }
        d[top] = -d[top] + carry; /* in [0, 2^32): |sum| < 2^1088 */
    }
    while (top >= lo && d[top] == 0) top--;
    if (top < lo) return tally_exact_double_(zero); /* the digits cancelled exactly */
    int msb = top * 32 + 31 - tally_exact_clz32_((uint64_t)d[top]);
    /* The value is M * 2^-BIAS with M's top bit at msb. Keep 53 bits, or fewer where the result
     * is subnormal: the lowest kept bit r is never below the 2^-1074 bit (index BIAS - 1074). */
    int r = msb - 52;
    if (r < TALLY_EXACT_BIAS - 1074) r = TALLY_EXACT_BIAS - 1074;
    int nk = msb - r + 1; /* kept bits, 1..53 */
    uint64_t mant;
    if (nk > 32)
        mant = tally_exact_getbits_(d, lo, top, r, 32) |
               (tally_exact_getbits_(d, lo, top, r + 32, nk - 32) << 32);
    else
        mant = tally_exact_getbits_(d, lo, top, r, nk);
    /* r >= 14 since BIAS - 1074 = 14, so the round bit r-1 exists; sticky = any bit below it. */
    uint64_t half = tally_exact_getbits_(d, lo, top, r - 1, 1);
    int sticky = 0;
    {
        int below = r - 1; /* bits [0, below) */
        int wi = below >> 5;
        for (i = lo; i < wi && i <= top && !sticky; i++) sticky = d[i] != 0;
        if (!sticky && (below & 31))
            sticky = (tally_exact_digit_(d, lo, top, wi) & ((1ull << (below & 31)) - 1)) != 0;
    }
    if (half && (sticky || (mant & 1))) {
        mant++;
        if (mant >> 53) { mant >>= 1; r++; } /* carried into a new bit: 2^53 -> 2^52, r+1 */
    }
    uint64_t bits;
    if (mant < (1ull << 52)) {
        bits = mant; /* subnormal (r is the 2^-1074 bit), or it became normal by rounding: */
    } else {
        /* mant in [2^52, 2^53): value = mant * 2^(r - BIAS), biased exponent r - BIAS + 1075 */
        int64_t be = (int64_t)r - TALLY_EXACT_BIAS + 1075;
        if (be >= 2047) return tally_exact_double_(sign ? 0xfff0000000000000ull : 0x7ff0000000000000ull);
        bits = ((uint64_t)be << 52) | (mant & 0x000fffffffffffffull);
    }
    /* A subnormal that rounded up to 2^52 keeps be = 1 automatically: mant = 2^52 with r at the
     * 2^-1074 bit gives be = 14 - 1088 + 1075 = 1. */
    return tally_exact_double_(bits | (sign << 63));
}

/* ---- Speculative compensated sums (one design for every backend) -------------------------------
 * A correctly rounded sum may first be computed cheaply with a rigorous error bound, and answered
 * from it when the bound decides the rounding (tally_exact_round_within below); otherwise the
 * caller runs its exact path. The answer is then the exact sum rounded once, whatever the split,
 * so the bits stay those of every other backend.
 *
 * State of one lane: a triple (s, c, D) of doubles with the invariant
 *      true sum of the lane's inputs = s + c + delta,   |delta| <= u * D_true,   u = 2^-53,
 * where D_true is the exact sum of the terms D's adds were given (D itself is their rounded sum).
 * Start (0, 0, 0). Add x (a double, or a float widened exactly), in round-to-nearest, no FMA
 * contraction, no flush-to-zero:
 *      (s', e) = TwoSum(s, x)            s + x = s' + e exactly (Knuth's 6 ops, any order of sizes)
 *      c' = fl(c + e)                    error <= u * |c'|  (none when c' is subnormal)
 *      D' = fl(D + |c'|)
 * Merge (s1, c1, D1) and (s2, c2, D2) (lanes, threads, blocks, in any order):
 *      (s, e) = TwoSum(s1, s2);  t = fl(c1 + c2);  c = fl(t + e);  D = fl(fl(D1 + D2) + fl(|t| + |c|))
 * Each rounding of c is bounded by u times its result, whose magnitude goes into D, so the
 * invariant holds with D_true; D's own roundings only make D smaller than D_true by a factor
 * (1 - u)^k, k the longest chain of adds any term took (k <= 2^40 gives D_true <= D * (1 + 2^-12)).
 * So E = D * 2^-53 * 1.001 (times the (1 + 2^-52) of that product's own rounding, covered by the
 * 1.001) bounds |true - (s + c)|; s and c of every final lane go EXACTLY into a tally_exact (V);
 * tally_exact_round_within(V, sum of the lanes' E, rounded then multiplied by 1.001) decides.
 * Overflow: any s, e, c or D that overflows (or a NaN / inf input) leaves some s, c or D
 * non-finite (inf - inf is NaN, inf + finite is inf), and a non-finite final triple must go to the
 * exact path. TwoSum is exact with subnormals (every sum of doubles is a multiple of 2^-1074). */

/* E for tally_exact_round_within from a speculative sum's total D (the block above), for host
 * code (a GPU may round the product up instead). The product's rounding costs at most 2^-52
 * relative (covered by the 1.001) or, among the subnormals, 2^-1075 absolute (covered by the
 * 2^-1074 added); a non-finite D gives a non-finite E, which tally_exact_round_within declines. */
static inline TALLY_HD double tally_exact_spec_bound(double D) { return D * 0x1p-53 * 1.001 + 0x1p-1074; }

/* The speculative sums' decision. *a holds a FINITE exact value V (no NaN/inf flags) and E >= 0
 * bounds |true sum - V|, where the true sum is what the caller approximated by V. Rounding to
 * nearest is monotone, so if V - E and V + E round to the same double r, every value between them
 * does too, and r is the true sum rounded once. Returns 1 and sets *out = r when that r is finite
 * and nonzero (a zero or an overflow is left to the exact path, which owns the sign-of-zero and
 * infinity rules); else 0. E must be finite and >= 0 (anything else: 0). Exact, integer only. */
static inline TALLY_HD int tally_exact_round_within(const tally_exact *a, double E, double *out) {
    const uint64_t eb = tally_exact_bits_(E);
    if ((eb >> 63) || ((eb >> 52) & 0x7ff) == 0x7ff) return 0; /* negative, NaN or inf */
    if (a->flags & (TALLY_EXACT_F_NAN | TALLY_EXACT_F_PINF | TALLY_EXACT_F_NINF)) return 0;
    tally_exact t = *a;
    t.flags = TALLY_EXACT_F_ANY | TALLY_EXACT_F_NONNEGZERO;
    if (eb == 0) {
        const double r = tally_exact_round(&t);
        const uint64_t rb = tally_exact_bits_(r);
        if ((rb << 1) == 0 || ((rb >> 52) & 0x7ff) == 0x7ff) return 0;
        *out = r;
        return 1;
    }
    tally_exact_add_finite_(&t, -E);
    const double lo = tally_exact_round(&t);
    tally_exact_add_finite_(&t, E);
    tally_exact_add_finite_(&t, E);
    const double hi = tally_exact_round(&t);
    const uint64_t lb = tally_exact_bits_(lo), hb = tally_exact_bits_(hi);
    if (lb != hb || (lb << 1) == 0 || ((lb >> 52) & 0x7ff) == 0x7ff) return 0;
    *out = lo;
    return 1;
}

#endif
