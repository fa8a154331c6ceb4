/* Per-thread exponent-indexed bins for the CUDA exact float sums (after xsum's small
 * superaccumulator, one per thread): a thread's values that the fast paths cannot prove exact are
 * added into bins chosen by their exponent, where every add is exact by construction whatever
 * the range. Plain C (host and device): the CUDA kernels keep one column of bins per thread in
 * shared memory (reduce_worker.cuh, Bins), tests/exact/test_exact_bins.c runs the same code on
 * the host against the big-integer reference.
 *
 * A column is stored with a stride (word k at col[k * stride]): the kernels interleave the
 * threads' columns (word k of thread t at k * 256 + t), so that a warp's 32 lanes touch 32
 * consecutive words whichever bins they pick: no bank conflicts.
 *
 * f64: integer digits. Digit k stands for chunk k of core/exact_sum.h's layout (weight
 * 2^(32 k - TALLY_EXACT_BIAS)), 68 digits, so a column adds into a superaccumulator digit by digit.
 *   - Normalised (tbins_normalize): digits 0 .. 66 in [0, 2^32), the top one signed; the value is
 *     sum digit[k] 2^(32 k - BIAS), and it is 0 iff every digit is 0.
 *   - An add puts the signed 53-bit integer mantissa sm = +-m, times 2^s (s < 32), into two digits:
 *     lo = the low 32 bits of sm << s (in [0, 2^32)) into digit i, hi = floor(sm 2^s / 2^32)
 *     (|hi| <= 2^53) into digit i + 1 <= 65.
 *   - So after normalising, TBINS_F64_ADDS = 1023 adds (1023 * 2^53 + 2^32 < 2^63) leave every digit
 *     inside int64; the caller normalises before it could pass that. The carry pass adds at most
 *     2^31 + 2^31 to a digit on top of that: still inside int64.
 *   - The top digit takes only carries: |top| 2^(32 * 67 - BIAS) <= |value| < 2^(1024 + 40): below
 *     2^8 for up to 2^40 adds.
 *
 * f32: doubles, one per window of 16 exponents (bin j = exponent field >> 4, 16 bins), in two
 * sets of 16 (TBINS_F32_SETS): a batch's values at even positions go to set 0, those at odd
 * positions to set 1, so that a thread's two adds of a step touch different words and both
 * loads may go before both stores (two independent chains through shared memory, with no
 * compare or select per value). Why every add is exact: the values of window j >= 1 are
 * multiples of g = 2^(16 j - 150) (the ulp of the window's least exponent field 16 j) and below
 * 2^(16 j + 15 - 126) = 2^(16 j - 111) = 2^39 g; window 0 (subnormals and fields 1 .. 15) has
 * g = 2^-149 and |x| < 2^-111 = 2^38 g. A sum of at most TBINS_F32_ADDS = 2^14 such values (per
 * set) is a multiple of g below 2^14 * 2^39 g = 2^53 g: a double. So every partial sum of a bin
 * is a double and each f64 add returns it exactly. The caller moves the bins out (exactly, into
 * a superaccumulator) before a set could take more adds.
 * The f32 bins need no check per value (tbins_f32_drain reads what the checks would have said):
 *   - A bin starts at -0 and stays -0 exactly while every value added to it is -0: in round to
 *     nearest x + y is -0 only when both are -0 (an exact cancellation gives +0, and the adds are
 *     exact, so nothing rounds to zero); once not -0 it never returns to -0 (+0 + -0 = +0). So
 *     "some value not -0 was summed" (NONNEGZERO) is "some bin is not -0".
 *   - NaN and inf (exponent field 255) fall in window 15 (bits 30..27 all ones), whose finite
 *     values (fields 240 .. 254, g = 2^90) sum below 2^143: never inf. So bin 15 is NaN or inf
 *     exactly when NaN or inf went in: NaN when a NaN did, or both +inf and -inf (IEEE), else
 *     +inf or -inf when only infinities of that sign did, which are the exact sums' flags
 *     (NaN, PINF, NINF) of its values, and what tally_exact_round makes of them.
 * (A sum that omits NaN maps each NaN to -0 before the add.)
 *
 * f64 windows (the column's other mode, tried first): the same 68 words as doubles, two sets of
 * TBINS_F64W_WINDOWS = 34 windows of 8 exponent fields each, from a base window w0 the column
 * chose (1 <= w0, w0 + 34 <= TBINS_F64W_TOP + 1): word k is set H's window w0 + k, word 34 + k set
 * L's. A value whose field E lies in window j = E >> 3 (w0 <= j < w0 + 34) is split once into
 * hi = its bits with the low 26 mantissa bits cleared and lo = x - hi, hi added to H[j - w0] and
 * lo to L[j - w0]: per value an and, a subtraction and two f64 adds, against the digits' ~20
 * integer ops (the digits stay for the values no window holds). Why every add is exact: x =
 * m 2^(E - 1075), E >= 8 (j >= 1), m < 2^53. hi = (m with its low 26 bits cleared) 2^(E - 1075),
 * a multiple of 2^(E - 1049) >= 2^(8 j - 1049) =: gH and below 2^(E - 1022) <= 2^(8 j + 7 - 1022)
 * = 2^34 gH; lo = x - hi (exact: both are multiples of x's ulp 2^(E - 1075) and |x - hi| < 2^26 of
 * it), a multiple of 2^(8 j - 1075) =: gL below 2^(E - 1049) <= 2^33 gL. So at most
 * TBINS_F64W_ADDS = 2^19 pieces in a word sum to a multiple of its g below 2^53 g: every partial
 * sum is a double and each f64 add returns it exactly; the caller moves the words out (exactly,
 * into a superaccumulator) before a word could take more. No overflow: j <= TBINS_F64W_TOP = 252
 * gives sums below 2^19 2^(8 * 252 + 8 - 1023) = 2^1020. Fields 0 .. 7 (zeros, subnormals, the
 * least normals) and 2024 .. 2047 (the largest values, inf, NaN) are in no window: such values
 * take the digits. A window value is never +-0 (E >= 8), so a window batch sets NONNEGZERO.
 * Sign: hi has x's sign (its magnitude bits truncated) and lo too or is +-0; the words start at
 * +0 (the digits' zero bits), and a word's sign of zero carries nothing (the flags come from
 * the batches). */
#ifndef TALLY_CUDA_EXACT_BINS_H
#define TALLY_CUDA_EXACT_BINS_H

#include <stdint.h>
#include <string.h>
#include "core/exact_sum.h"

#define TBINS_F64_LO 0
#define TBINS_F64_DIGITS 68
#define TBINS_F64_ADDS 1023u
#define TBINS_F32_BINS 16
#define TBINS_F32_SETS 2
#define TBINS_F32_WORDS (TBINS_F32_BINS * TBINS_F32_SETS)
#define TBINS_F32_ADDS 16384u
#define TBINS_NEGZERO_BITS 0x8000000000000000ull
#define TBINS_F64W_WINDOWS 34 /* per set: 2 * 34 = TBINS_F64_DIGITS words */
#define TBINS_F64W_TOP 252    /* the greatest window any column may hold */
#define TBINS_F64W_ADDS 524288u /* 2^19 values (one piece each per set) between moves */

/* high 32 bits of (hi:lo) << s, 0 <= s < 32 (the device's funnel shift) */
static inline TALLY_HD uint32_t tbins_funnel_l(uint32_t lo, uint32_t hi, uint32_t s)
{
#if defined(__CUDA_ARCH__)
    return __funnelshift_l(lo, hi, s);
#else
    return (uint32_t)((((uint64_t)hi << 32) | lo) << s >> 32);
#endif
}

/* x >> n, arithmetic, 1 <= n <= 32 (n = 32: the sign in every bit; PTX clamps the shift) */
static inline TALLY_HD int32_t tbins_sra(int32_t x, uint32_t n)
{
#if defined(__CUDA_ARCH__)
    int32_t r;
    asm("shr.s32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(n));
    return r;
#else
    return (int32_t)((int64_t)x >> n);
#endif
}

/* Adds the finite double with bits b to the column (f64 digits). x = m 2^(e - 1075), e >= 1 (1 for
 * subnormals, whose m lacks the implicit bit); its lowest bit sits at bit p = e - 1075 + 1088 =
 * e + 13 (14 .. 2059) of the fixed-point number: digit i = p / 32 (0 .. 64), shift s = p mod 32.
 * In 32-bit pieces (the GPU's integer ops are 32 bits wide): the signed mantissa sm = +-m
 * (|sm| < 2^53) as smh 2^32 + sml; then sm 2^s = hi 2^32 + lo with lo = sml << s (the low 32 bits
 * of sm 2^s, in [0, 2^32): two's complement, they survive the wrap) and hi = floor(sm 2^s / 2^32)
 * = sm >> (32 - s) (arithmetic), whose low word is the high word of (smh:sml) << s and whose high
 * word is smh >> (32 - s), |hi| <= 2^53. */
static inline TALLY_HD void tbins_add_f64(int64_t *col, int stride, uint64_t b)
{
    const uint32_t bh = (uint32_t)(b >> 32), bl = (uint32_t)b;
    const uint32_t e = (bh >> 20) & 0x7ffu;
    const uint32_t e1 = e > 1u ? e : 1u;                              /* subnormals: 1 */
    const uint32_t mh = (bh & 0xfffffu) | ((e < 1u ? e : 1u) << 20); /* the implicit bit */
    const uint32_t p = e1 + (uint32_t)(TALLY_EXACT_BIAS - 1075);
    const uint32_t s = p & 31u;
    const uint64_t m = ((uint64_t)mh << 32) | bl;
    const uint64_t sm = (bh >> 31) ? 0 - m : m;
    const uint32_t sml = (uint32_t)sm, smh = (uint32_t)(sm >> 32);
    const int64_t lo = (int64_t)(uint32_t)(sml << s);
    const int64_t hi = (int64_t)(((uint64_t)(uint32_t)tbins_sra((int32_t)smh, 32u - s) << 32) |
                                 tbins_funnel_l(sml, smh, s));
    /* two different digits: both loads may go before both stores; byte offsets in 32 bits */
    const uint32_t row = (uint32_t)stride * (uint32_t)sizeof(int64_t);
    int64_t *d = (int64_t *)((char *)col + (p >> 5) * row);
    int64_t *d1p = (int64_t *)((char *)d + row);
    const int64_t d0 = *d, d1 = *d1p;
    *d = d0 + lo;
    *d1p = d1 + hi;
}

/* The f32 value with bits b, as a double (exact). */
static inline TALLY_HD double tbins_f32_value(uint32_t b)
{
#if defined(__CUDA_ARCH__)
    return (double)__uint_as_float(b);
#else
    float f;
    memcpy(&f, &b, sizeof f);
    return (double)f;
#endif
}

/* The bin (0 .. 15, within its set) of the float with bits b: its exponent field >> 4. */
static inline TALLY_HD int tbins_f32_bin(uint32_t b)
{
    return (int)((b >> 27) & 15u);
}

/* Adds the float with bits a to set 0 and the one with bits b to set 1 (any floats: NaN and inf
 * go to bin 15, see above). Different sets, so different words: both loads before both stores. */
static inline TALLY_HD void tbins_add_f32_2(double *col, int stride, uint32_t a, uint32_t b)
{
    /* byte offsets in 32 bits (the kernels: ((a >> 16) & 0x7800), one shift and one and) */
    const uint32_t row = (uint32_t)stride * (uint32_t)sizeof(double);
    double *da = (double *)((char *)col + ((a >> 27) & 15u) * row);
    double *db = (double *)((char *)col + (TBINS_F32_BINS + ((b >> 27) & 15u)) * row);
    const double xa = *da, xb = *db;
    *da = xa + tbins_f32_value(a);
    *db = xb + tbins_f32_value(b);
}

/* Every bin of both sets to -0 (see above: a bin still -0 has had only -0 added). */
static inline TALLY_HD void tbins_zero_f32(double *col, int stride)
{
    for (int k = 0; k < TBINS_F32_WORDS; k++) col[k * stride] = -0.0;
}

/* What bin value d says of the values added to it, as the exact sums' flags: NONNEGZERO unless
 * d is -0, and for NaN or inf (bin 15 only) TALLY_EXACT_F_NAN, _PINF or _NINF as
 * tally_exact_add would have set them for those values. *finite: whether d may be added to a
 * superaccumulator (it then holds the bin's exact sum). */
static inline TALLY_HD uint32_t tbins_f32_flags(double d, int *finite)
{
    uint64_t b;
#if defined(__CUDA_ARCH__)
    b = (uint64_t)__double_as_longlong(d);
#else
    memcpy(&b, &d, sizeof b);
#endif
    uint32_t f = b != TBINS_NEGZERO_BITS ? (uint32_t)TALLY_EXACT_F_NONNEGZERO : 0u;
    *finite = ((b >> 52) & 0x7ff) != 0x7ff;
    if (!*finite) {
        if (b & 0x000fffffffffffffull) f |= TALLY_EXACT_F_NAN;
        else f |= (b >> 63) ? TALLY_EXACT_F_NINF : TALLY_EXACT_F_PINF;
    }
    return f;
}

/* Propagates the carries: afterwards digits 0 .. n-2 lie in [0, 2^32) and the top one holds the
 * signed rest. Exact (floor division by 2^32 of c - low, a multiple of it). */
static inline TALLY_HD void tbins_normalize(int64_t *col, int stride, int n)
{
    int64_t carry = 0;
    for (int k = 0; k < n - 1; k++) {
        const int64_t c = col[k * stride] + carry;
        const int64_t low = (int64_t)((uint64_t)c & 0xffffffffu);
        carry = (c - low) / ((int64_t)1 << 32);
        col[k * stride] = low;
    }
    col[(n - 1) * stride] += carry;
}

static inline TALLY_HD void tbins_zero(int64_t *col, int stride, int n)
{
    for (int k = 0; k < n; k++) col[k * stride] = 0;
}

/* ---- f64 windows (see the top: the column's first mode) ---- */

/* The window (field >> 3, 0 .. 255) of the double with high word bh. */
static inline TALLY_HD uint32_t tbins_f64w_window(uint32_t bh)
{
    return (bh >> 23) & 0xffu;
}

/* The base window a column starts with for values in windows jmin .. jmax, or -1 if no base
 * holds them (the column then takes digits): centred, so later values may stray either way. */
static inline TALLY_HD int tbins_f64w_base(uint32_t jmin, uint32_t jmax)
{
    if (jmin < 1u || jmax > TBINS_F64W_TOP || jmax - jmin >= TBINS_F64W_WINDOWS) return -1;
    int b = (int)jmin - (int)(TBINS_F64W_WINDOWS - 1 - (jmax - jmin)) / 2;
    if (b < 1) b = 1;
    if (b > TBINS_F64W_TOP + 1 - TBINS_F64W_WINDOWS) b = TBINS_F64W_TOP + 1 - TBINS_F64W_WINDOWS;
    return b;
}

/* The byte offset of window j = field >> 3 from window 0 in a column of stride 256 (the
 * kernels': word k at k * 2048 bytes), from the double's high word bh in two ops. */
static inline TALLY_HD uint32_t tbins_f64w_off256(uint32_t bh)
{
    return (bh >> 12) & 0x7f800u; /* bits 23..30 (the window) to 11..18 */
}

/* Adds the double with bits (bh, bl) to the windows' words at byte offset off from the column
 * (hi: set H's word of its window, whose byte offset off the caller computed and checked) and
 * off + set_bytes (lo: set L's), both loads before both stores. The kernels' code. */
static inline TALLY_HD void tbins_add_f64w_at(char *col, uint32_t off, uint32_t set_bytes, uint32_t bh,
                                             uint32_t bl)
{
    double x, h;
#if defined(__CUDA_ARCH__)
    x = __hiloint2double((int)bh, (int)bl);
    h = __hiloint2double((int)bh, (int)(bl & 0xfc000000u)); /* the low 26 mantissa bits cleared */
    const double l = __dsub_rn(x, h);                        /* exact (see the top) */
#else
    const uint64_t b = ((uint64_t)bh << 32) | bl, hb = b & ~(uint64_t)0x3ffffff;
    memcpy(&x, &b, sizeof x);
    memcpy(&h, &hb, sizeof h);
    const double l = x - h;
#endif
    double *dh = (double *)(col + off);
    double *dl = (double *)(col + off + set_bytes);
    const double yh = *dh, yl = *dl;
    *dh = yh + h;
    *dl = yl + l;
}

/* The same for a column of any stride: the double with bits b, in window base + k
 * (0 <= k < TBINS_F64W_WINDOWS; the caller checked it). */
static inline TALLY_HD void tbins_add_f64w(double *col, int stride, uint64_t b, uint32_t k)
{
    const uint32_t row = (uint32_t)stride * (uint32_t)sizeof(double);
    tbins_add_f64w_at((char *)col, k * row, (uint32_t)TBINS_F64W_WINDOWS * row, (uint32_t)(b >> 32), (uint32_t)b);
}

/* ---- f64 register windows (REDUCE_BINS=3; reduce_worker.cuh, Worker::rw_batch) ----
 * A thread's binned f64 values summed in TBINS_RW_K = 4 doubles held in registers, no shared
 * memory, by Rump, Ogita and Oishi's ExtractScalar. The thread picks the least exponent field F
 * (1 <= F <= TBINS_RW_FMAX) it accepts from its first binned batch (tbins_rw_base); a batch
 * goes to the register windows only if every value's exponent field lies in F .. F + 107
 * (TBINS_RW_FIELDS = 108: so no zero, subnormal below field F, inf or NaN), else to the shared
 * bins above, which are exact whatever the values. With L = F - 1075 (every accepted value is a
 * multiple of 2^L) and W = TBINS_RW_W = 40, the windows' grains are g_j = 2^(L + W (3 - j))
 * (j = 0 .. 3) and sigma_j = 2^53 g_j (j = 0 .. 2); an accepted value x is below
 * 2^(F + 107 - 1022) = 2^(L + 160) = 2^W g_0. Per value (tbins_rw_add):
 *   t = x; for j = 0, 1, 2: s = sigma_j + t; q = s - sigma_j; t = t - q; acc_j += q;
 *   acc_3 += t.
 * Why every op is exact (p: the t going into window j):
 *   - |p| <= 2^W g_j: for j = 0 it is x; for j > 0 it is the last step's t, |t| <= g_(j-1) =
 *     2^W g_j (below). So |p| <= 2^(W - 53) sigma_j <= sigma_j / 2 (W <= 52).
 *   - s = fl(sigma + p) lies in [sigma / 2, 2 sigma] (rounding is monotone and sigma + p does),
 *     so q = s - sigma is exact (Sterbenz) and a multiple of g_j = 2^-53 sigma (every double in
 *     [sigma / 2, 2 sigma] is one). |p - q| = |sigma + p - s| <= half an ulp of [sigma, 2 sigma)
 *     = g_j, since sigma + p <= 3 sigma / 2.
 *   - t - q is exact: if q = 0, t is unchanged. Else s != sigma, and s is the double nearest to
 *     sigma + p, so |p - q| = |sigma + p - s| <= |sigma + p - sigma| = |p|. p and q are
 *     multiples of h = min(ulp(p), g_j); if h = ulp(p), |p - q| <= |p| < 2^53 ulp(p); if h = g_j,
 *     |p - q| <= g_j: either way a multiple of h below 2^53 h, a double.
 *   - So x = q_0 + q_1 + q_2 + t exactly, each q_j a multiple of g_j with |q_j| <= |p| + |p - q|
 *     <= (2^W + 1) g_j, and the last t a multiple of g_3 = 2^L (x and every q_j are) with
 *     |t| <= g_2 = 2^W g_3 <= (2^W + 1) g_3.
 *   - acc_j after n adds is a multiple of g_j, and so is every partial sum, of magnitude at most
 *     n (2^W + 1) g_j <= 2^53 g_j for n <= TBINS_RW_ADDS = 2^(53 - W) - 1 (since (2^13 - 1)
 *     (2^40 + 1) < 2^53): a double, so every add returns it exactly. The caller moves the four
 *     doubles out (exactly, into a superaccumulator) before a thread passes that many values.
 *   - Range: sigma_0 = 2^(F + 121 - 1023) <= 2^1023 (F <= TBINS_RW_FMAX = 1925), and every
 *     intermediate is at most 3 sigma_0 / 2 or |acc_0| <= sigma_0: finite; sigma_2 = 2^(F + 41 -
 *     1023) >= 2^-981, so [sigma_2 / 2, 2 sigma_2] is normal (the ulp argument above).
 *   - Exact in any order: the acc_j hold exact sums, so neither the order of a thread's values
 *     nor a move out between batches changes what they add up to.
 * Flags: an accepted value is a nonzero finite double, so an accepted batch sets NONNEGZERO and
 * nothing else. */
#define TBINS_RW_W 40
#define TBINS_RW_K 4
#define TBINS_RW_FIELDS 108u    /* accepted exponent fields F .. F + 107: W K - 53 + 1 */
#define TBINS_RW_FMAX 1925u     /* F + 121 <= 2046: sigma_0 finite */
#define TBINS_RW_ADDS 8191u     /* values between moves: 2^(53 - W) - 1 */

/* The least field F a thread accepts, from its first binned batch's least and greatest
 * exponent fields (emin >= 1, emax <= 2046; else none: 0): the batch centred in the 108 fields,
 * so later values may stray either way; 0 if it spans more. */
static inline TALLY_HD uint32_t tbins_rw_base(uint32_t emin, uint32_t emax)
{
    if (emin < 1u || emax > 2046u || emax < emin || emax - emin >= TBINS_RW_FIELDS) return 0u;
    int f = (int)emin - (int)(TBINS_RW_FIELDS - 1u - (emax - emin)) / 2;
    if (f < 1) f = 1;
    if (f > (int)TBINS_RW_FMAX) f = (int)TBINS_RW_FMAX;
    return (uint32_t)f;
}

/* sigma_j (j = 0 .. 2) for base field f: 2^(f + 121 - 40 j - 1023), as its bits */
static inline TALLY_HD uint64_t tbins_rw_sigma_bits(uint32_t f, int j)
{
    return (uint64_t)(f + 121u - (uint32_t)(TBINS_RW_W * j)) << 52;
}

/* Whether a batch whose |x| high words (bits 32..62 of each value) have least amin and
 * greatest amax goes to the register windows of base field f. */
static inline TALLY_HD int tbins_rw_accepts(uint32_t f, uint32_t amin, uint32_t amax)
{
    return amin >= (f << 20) && amax < ((f + TBINS_RW_FIELDS) << 20);
}

/* One accepted value x into the windows a0 .. a3 (see above). */
static inline TALLY_HD void tbins_rw_add(double *a0, double *a1, double *a2, double *a3, double s0, double s1,
                                         double s2, double x)
{
#if defined(__CUDA_ARCH__)
    double q = __dsub_rn(__dadd_rn(s0, x), s0);
    x = __dsub_rn(x, q);
    *a0 = __dadd_rn(*a0, q);
    q = __dsub_rn(__dadd_rn(s1, x), s1);
    x = __dsub_rn(x, q);
    *a1 = __dadd_rn(*a1, q);
    q = __dsub_rn(__dadd_rn(s2, x), s2);
    x = __dsub_rn(x, q);
    *a2 = __dadd_rn(*a2, q);
    *a3 = __dadd_rn(*a3, x);
#else
    volatile double v; /* each op rounded to double, in this order */
    double q;
    v = s0 + x; q = v - s0; x = x - q; *a0 += q;
    v = s1 + x; q = v - s1; x = x - q; *a1 += q;
    v = s2 + x; q = v - s2; x = x - q; *a2 += q;
    *a3 += x;
#endif
}

/* f32 register windows (REDUCE_BINS=4): the same with K = 3 windows of W = 40 bits, for f32
 * values converted to double (exactly). With G (1 <= G <= TBINS_RW32_GMAX) the least accepted
 * f32 exponent field and L = G - 150, an accepted value (fields G .. G + 96, TBINS_RW32_FIELDS =
 * 97: W K - 24 + 1) is a multiple of 2^L (an f32 of field e is a multiple of 2^(e - 150)) and
 * below 2^(G + 96 - 126 + 1) = 2^(L + 120) = 2^W g_0, with g_j = 2^(L + W (2 - j)) and sigma_j =
 * 2^53 g_j = 2^(G - 17 - 40 j) (j = 0, 1): per value s = sigma_j + t; q = s - sigma_j; t -= q;
 * acc_j += q (j = 0, 1), acc_2 += t, nine f64 adds. The proof above holds word for word with
 * three windows (the last t a multiple of g_2 = 2^L below g_1 = 2^W g_2), and the same budget,
 * TBINS_RW_ADDS values between moves. Range: every sigma lies in [2^-56, 2^141], doubles far
 * from the range's ends. */
#define TBINS_RW32_FIELDS 97u
#define TBINS_RW32_GMAX 158u /* G + 96 <= 254: no inf or NaN accepted */

/* G from a batch's least and greatest f32 exponent fields, as tbins_rw_base (0: none). */
static inline TALLY_HD uint32_t tbins_rw32_base(uint32_t emin, uint32_t emax)
{
    if (emin < 1u || emax > 254u || emax < emin || emax - emin >= TBINS_RW32_FIELDS) return 0u;
    int g = (int)emin - (int)(TBINS_RW32_FIELDS - 1u - (emax - emin)) / 2;
    if (g < 1) g = 1;
    if (g > (int)TBINS_RW32_GMAX) g = (int)TBINS_RW32_GMAX;
    return (uint32_t)g;
}

/* sigma_j (j = 0, 1) for base field g: 2^(g - 17 - 40 j), as its bits */
static inline TALLY_HD uint64_t tbins_rw32_sigma_bits(uint32_t g, int j)
{
    return (uint64_t)(g + 1006u - (uint32_t)(TBINS_RW_W * j)) << 52;
}

/* Whether a batch whose |x| bits (f32) have least amin and greatest amax goes to the f32
 * register windows of base field g. */
static inline TALLY_HD int tbins_rw32_accepts(uint32_t g, uint32_t amin, uint32_t amax)
{
    return amin >= (g << 23) && amax < ((g + TBINS_RW32_FIELDS) << 23);
}

/* One accepted f32 value x (as a double) into the windows a0 .. a2. */
static inline TALLY_HD void tbins_rw32_add(double *a0, double *a1, double *a2, double s0, double s1, double x)
{
#if defined(__CUDA_ARCH__)
    double q = __dsub_rn(__dadd_rn(s0, x), s0);
    x = __dsub_rn(x, q);
    *a0 = __dadd_rn(*a0, q);
    q = __dsub_rn(__dadd_rn(s1, x), s1);
    x = __dsub_rn(x, q);
    *a1 = __dadd_rn(*a1, q);
    *a2 = __dadd_rn(*a2, x);
#else
    volatile double v;
    double q;
    v = s0 + x; q = v - s0; x = x - q; *a0 += q;
    v = s1 + x; q = v - s1; x = x - q; *a1 += q;
    *a2 += x;
#endif
}

#endif
