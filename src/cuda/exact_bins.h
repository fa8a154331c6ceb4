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
 * f32: doubles, one per window of 16 exponents (bin j = exponent field >> 4, 16 bins; the field
 * 255, NaN and inf, never comes). Why every add is exact: the values of window j >= 1 are
 * multiples of g = 2^(16 j - 150) (the ulp of the window's least exponent field 16 j) and below
 * 2^(16 j + 15 - 126) = 2^(16 j - 111) = 2^39 g; window 0 (subnormals and fields 1 .. 15) has
 * g = 2^-149 and |x| < 2^-111 = 2^38 g. A sum of at most
 * TBINS_F32_ADDS = 2^14 such values is a multiple of g below 2^14 * 2^39 g = 2^53 g: a double. So
 * every partial sum of a bin is a double and each f64 add returns it exactly (as does the add
 * that combines two values of one window first, below 2^40 g). The caller moves the bins out
 * (exactly, into a superaccumulator) before a bin could take more adds.
 * Zeros add nothing. NaN and inf must not be added (the caller sets flags instead). */
#ifndef TALLY_CUDA_EXACT_BINS_H
#define TALLY_CUDA_EXACT_BINS_H

#include <stdint.h>
#include "core/exact_sum.h"

#define TBINS_F64_LO 0
#define TBINS_F64_DIGITS 68
#define TBINS_F64_ADDS 1023u
#define TBINS_F32_BINS 16
#define TBINS_F32_ADDS 16384u

/* Adds the finite double with bits b to the column (f64 digits). x = m 2^(e - 1075), e >= 1 (1 for
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

/* Adds the finite float with bits b to its window's bin (f32 layout). */
static inline TALLY_HD void tbins_add_f32(double *col, int stride, uint32_t b)
{
    col[(int)((b >> 27) & 15u) * stride] += tbins_f32_value(b);
}

/* Adds two finite floats (bits a and b): both loads before both stores, so that a thread's adds
 * are not one long chain through shared memory. When both fall in one window their sum (exact:
 * see above) goes in as one add, which the caller's budget counts as two. The store to b's bin
 * goes first so that with one window the second store (a's, with the combined value) stays. */
static inline TALLY_HD void tbins_add_f32_pair(double *col, int stride, uint32_t a, uint32_t b)
{
    const int ia = (int)((a >> 27) & 15u), ib = (int)((b >> 27) & 15u);
    double va = tbins_f32_value(a), vb = tbins_f32_value(b);
    if (ia == ib) {
        va += vb;
        vb = 0.0;
    }
    double *da = col + ia * stride, *db = col + ib * stride;
    const double xa = *da, xb = *db;
    *db = xb + vb;
    *da = xa + va;
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

static inline TALLY_HD void tbins_zero_f32(double *col, int stride)
{
    for (int k = 0; k < TBINS_F32_BINS; k++) col[k * stride] = 0.0;
}

#endif
