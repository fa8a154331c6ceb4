/* Per-thread exponent-indexed bins for the CUDA exact float sums (xsum's small superaccumulator,
 * one per thread): a thread's values that the fast paths cannot prove exact are added as
 * integers into digits chosen by their exponent, with a carry pass only every few hundred adds.
 * Plain C (host and device): the CUDA kernels keep one column of digits per thread in shared
 * memory, tests/exact/test_exact_bins.c runs the same code on the host against the big-integer
 * reference.
 *
 * Digits. Digit k of a column stands for chunk k + lo of core/exact_sum.h's layout (weight
 * 2^(32 (k + lo) - TALLY_EXACT_BIAS)), so a column is added into a superaccumulator digit by digit:
 *   f64: lo = 0, 68 digits (every chunk);
 *   f32: lo = 29, 10 digits (chunks 29 .. 38: f32 values reach from 2^-149 = chunk 29's bit 11 to
 *        below 2^128 = chunk 38's bit 0; chunk 38 takes only carries).
 * A column is stored with a stride (digit k at col[k * stride]): the kernels interleave the
 * threads' columns (digit k of thread t at k * 256 + t), so that a warp's 32 lanes touch 32
 * consecutive words whichever digits they pick: no bank conflicts.
 *
 * Invariants (what makes a column exact and never overflow):
 *   - Normalised (tbins_normalize): digits 0 .. n-2 in [0, 2^32), the top digit signed; the column's
 *     value is sum digit[k] 2^(32 k), and it is 0 iff every digit is 0.
 *   - An f64 add puts its 53-bit integer mantissa m, shifted by s < 32, into two digits: the low 32
 *     bits of m << s (< 2^32) into digit i and m >> (32 - s) (< 2^53) into digit i + 1 <= 65; an f32
 *     add puts m << s (< 2^24 + 31 = 2^55) into one digit i <= 8. Signed (the f64 pair as
 *     lo in [0, 2^32) and hi = floor(+-m 2^s / 2^32)): |each add| <= 2^53 (f64), < 2^55 (f32).
 *   - So after normalising, TBINS_F64_ADDS = 1023 f64 adds (1023 * 2^53 + 2^32 < 2^63) or
 *     TBINS_F32_ADDS = 255 f32 adds (255 (2^55 - 1) + 2^32 < 2^63) leave every digit inside int64; the
 *     caller normalises before it could pass that. The carry pass adds at most 2^31 + 2^31 to a
 *     digit on top of that: still inside int64.
 *   - The top digit takes only carries: |top| * 2^(32 (n - 1)) <= |value| < 2^(1024 + 40) (f64:
 *     below 2^8 at chunk 67) or 2^(128 + 40) (f32: below 2^40 at chunk 38) for up to 2^40 adds.
 * Zeros add nothing (m = 0). NaN and inf must not be added (the caller sets flags instead). */
#ifndef TALLY_CUDA_EXACT_BINS_H
#define TALLY_CUDA_EXACT_BINS_H

#include <stdint.h>
#include "core/exact_sum.h"

#define TBINS_F64_LO 0
#define TBINS_F64_DIGITS 68
#define TBINS_F32_LO 29
#define TBINS_F32_DIGITS 10
#define TBINS_F64_ADDS 1023u
#define TBINS_F32_ADDS 255u

/* Adds the finite double with bits b to the column (f64 layout). x = m 2^(e - 1075), e >= 1 (1 for
 * subnormals, whose m lacks the implicit bit); its lowest bit sits at bit p = e - 1075 + 1088 =
 * e + 13 (14 .. 2059) of the fixed-point number: digit i = p / 32 (0 .. 64), shift s = p mod 32. */
static inline TALLY_HD void tbins_add_f64(int64_t *col, int stride, uint64_t b)
{
    uint64_t e = (b >> 52) & 0x7ff;
    uint64_t m = b & 0x000fffffffffffffull;
    if (e) m |= 0x0010000000000000ull; else e = 1;
    const int p = (int)e + (TALLY_EXACT_BIAS - 1075);
    const int i = p >> 5, s = p & 31;
    /* the signed mantissa sm = +-m times 2^s as hi 2^32 + lo with lo in [0, 2^32): lo is the low
     * 32 bits of sm << s (two's complement; they survive the wrap), hi = floor(sm 2^s / 2^32) by
     * an arithmetic shift (s = 0: sm >> 32), |hi| <= 2^53 */
    const int64_t sm = (b >> 63) ? -(int64_t)m : (int64_t)m;
    const int64_t lo = (int64_t)(((uint64_t)sm << s) & 0xffffffffu);
    const int64_t hi = sm >> (32 - s);
    /* two different digits: both loads may go before both stores */
    int64_t *d = col + i * stride;
    const int64_t d0 = d[0], d1 = d[stride];
    d[0] = d0 + lo;
    d[stride] = d1 + hi;
}

/* The f32 digit index and signed addend of the finite float with bits b: x = m 2^(e - 150),
 * e >= 1; lowest bit at p = e - 150 + 1088 - 32 * 29 = e + 10 (11 .. 264): digit p / 32 (0 .. 8),
 * addend m << (p mod 32) < 2^55. */
static inline TALLY_HD int tbins_f32_split(uint32_t b, int64_t *addend)
{
    uint32_t e = (b >> 23) & 0xffu;
    uint32_t m = b & 0x7fffffu;
    if (e) m |= 0x800000u; else e = 1;
    const int p = (int)e + (TALLY_EXACT_BIAS - 150 - 32 * TBINS_F32_LO);
    const int32_t sm = (b >> 31) ? -(int32_t)m : (int32_t)m; /* |sm| < 2^24 */
    /* sm 2^(p mod 32), |.| < 2^55: the shift on the two's-complement bits, read back signed */
    *addend = (int64_t)((uint64_t)(int64_t)sm << (p & 31));
    return p >> 5;
}

/* Adds two finite floats (bits a and b): one read-modify-write each, both loads before both
 * stores, so that a thread's adds are not one long chain through shared memory. When both land
 * in the same digit their addends are combined first (and the digit takes two adds' worth,
 * < 2^56, which the add budget counts as two). The second store goes to b's digit first so that
 * with equal digits the first store (a's, with the combined addend) is the one that stays. */
static inline TALLY_HD void tbins_add_f32_pair(int64_t *col, int stride, uint32_t a, uint32_t b)
{
    int64_t va, vb;
    const int ia = tbins_f32_split(a, &va), ib = tbins_f32_split(b, &vb);
    if (ia == ib) {
        va += vb;
        vb = 0;
    }
    int64_t *da = col + ia * stride, *db = col + ib * stride;
    const int64_t xa = *da, xb = *db;
    *db = xb + vb;
    *da = xa + va;
}

static inline TALLY_HD void tbins_add_f32(int64_t *col, int stride, uint32_t b)
{
    int64_t v;
    const int i = tbins_f32_split(b, &v);
    col[i * stride] += v;
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

#endif
