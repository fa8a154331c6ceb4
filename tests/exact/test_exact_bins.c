/* The CUDA exact sums' per-thread bins (src/cuda/exact_bins.h) run on the host as the kernels
 * run them: 64 "threads" with interleaved columns (stride 64), batches of 32 f32 (even
 * positions to set 0, odd ones to set 1) or 16 f64 values with the carry pass (f64) or the move
 * of the bins into the superaccumulator (f32) due before a batch could pass the add budget; at
 * the end the f32 bins, or each warp's digit sums over its 32 normalised columns, added into one
 * superaccumulator and rounded once. The f32 bins take every value unchecked, and the flags
 * (NaN, infinities, "some value not -0") come from the bins alone (tbins_f32_flags), as in the
 * kernels. Checked bit for bit against the independent big-integer reference
 * (tests/support/exact_reference.h) on wide, full-range, cancelling, subnormal and budget-edge
 * data (the same digit hit with the largest addend on every add), and for f32 on NaN and
 * infinities at random positions and on zeros of both signs. Every f64 array runs twice, as the
 * kernels with REDUCE_BINS=1 (digits only) and =2 (each column first in the f64 windows, switched
 * to digits when a batch strays out of its windows): the windows' own families are bands of 1 to
 * 40 windows anywhere in the range with values at the windows' edges and strays far out, and
 * the windows' budget edge (two threads, every word driven to 2^53 of its grain, then back).
 * Every f64 array runs a third time as REDUCE_BINS=3 (whole batches first into the thread's
 * register windows, exact_bins.h's tbins_rw_*), every f32 array a second time as =4 (tbins_rw32_*):
 * their families put values at both ends of the accepted fields, bits around the windows'
 * 40-bit bounds, bases at both ends of their range, strays, zeros, inf and NaN, and drive each
 * window's sum to its budget's edge (TBINS_TEST_RWLIMIT: another budget, to watch it fail).
 * Prints its seed; argv[1] sets it, argv[2] the number of arrays. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda/exact_bins.h"
#include "../support/exact_reference.h"

#define NT 64 /* threads: two warps */

static uint64_t g_rng;
static uint64_t rnd(void)
{
    g_rng += 0x9e3779b97f4a7c15ull;
    uint64_t x = g_rng;
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull; x ^= x >> 27; x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static double urand(void) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0); }

static uint64_t dbits(double x) { uint64_t b; memcpy(&b, &x, 8); return b; }
static uint32_t fbits(float x) { uint32_t b; memcpy(&b, &x, 4); return b; }
static double dfrom(uint64_t b) { double x; memcpy(&x, &b, 8); return x; }
static float ffrom(uint32_t b) { float x; memcpy(&x, &b, 4); return x; }

/* The kernels' way: batch b goes to thread b % NT; limit: the add budget (f64: a carry pass
 * before a batch could pass it; f32: the bins moved into the superaccumulator, as the kernel's
 * mid-run flush does). Returns the rounded sum of n finite values (f64 bits in d, or f32 bits
 * in f). */
/* f64: windows: each column first in the f64 windows (the base from its first batch), moved
 * into the superaccumulator and switched to digits when a batch strays out (REDUCE_BINS=2);
 * wlimit the windows' budget; nt threads (NT at most). */
/* windows = 2: each whole batch first into the thread's f64 register windows (REDUCE_BINS=3: the
 * base from the first batch that fits, off after TEST_RW_REJECTS batches turned away; moved into
 * the superaccumulator before a thread passes rwlimit values), the rest as windows = 1. */
#define TEST_RW_REJECTS 8 /* Worker::kRwRejects */
static double bins_sum(const uint64_t *d, const uint32_t *f, size_t n, unsigned limit, int windows,
                       unsigned wlimit, unsigned rwlimit, int nt)
{
    static double rw[4][NT];
    uint32_t rw_f[NT]; /* 0: not chosen; ~0u: off */
    unsigned rw_n[NT], rw_rej[NT];
    for (int t = 0; t < NT; t++) {
        rw[0][t] = rw[1][t] = rw[2][t] = rw[3][t] = 0.0;
        rw_f[t] = windows == 2 ? 0u : ~0u;
        rw_n[t] = rw_rej[t] = 0;
    }
    static int64_t cols[TBINS_F64_DIGITS * NT];
    static double fcols[TBINS_F32_WORDS * NT];
    int started[NT], base[NT]; /* base >= 0: the column is in windows from that base */
    const int f32 = f != NULL;
    const size_t per = f32 ? 32 : 16;
    unsigned count[NT];
    memset(count, 0, sizeof count);
    tally_exact acc;
    tally_exact_init(&acc);
    for (int t = 0; t < NT; t++) {
        tbins_zero(cols + t, NT, TBINS_F64_DIGITS);
        tbins_zero_f32(fcols + t, NT);
        started[t] = 0;
        base[t] = -1;
    }
    double *wcols = (double *)cols; /* a column in windows: its words as doubles */
    /* a column's windows into the superaccumulator (the kernel's tbins_f64w move) */
    #define MOVE_WINDOWS(t)                                                                         \
        do {                                                                                        \
            for (int k_ = 0; k_ < TBINS_F64_DIGITS; k_++) {                                         \
                tally_exact_add_finite_(&acc, wcols[k_ * NT + (t)]);                                \
                cols[k_ * NT + (t)] = 0;                                                            \
            }                                                                                       \
        } while (0)
    int nonneg = 0;
    uint32_t flags = 0;
    /* a bin into the superaccumulator as the kernels move it (flags from its value alone) */
    #define MOVE_BIN(k)                                                                             \
        do {                                                                                        \
            int fin_;                                                                               \
            flags |= tbins_f32_flags(fcols[k], &fin_);                                              \
            if (fin_) tally_exact_add_finite_(&acc, fcols[k]);                                      \
        } while (0)
    const unsigned per_set = f32 ? (unsigned)per / TBINS_F32_SETS : (unsigned)per;
    for (size_t b0 = 0, batch = 0; b0 < n; b0 += per, batch++) {
        const int t = (int)(batch % (size_t)nt);
        size_t m = n - b0 < per ? n - b0 : per;
        if (m == per && rw_f[t] != ~0u) { /* the register windows first (Worker::rw_batch) */
            uint32_t amin = 0xffffffffu, amax = 0;
            for (size_t i = 0; i < m; i++) {
                const uint32_t a = f32 ? f[b0 + i] & 0x7fffffffu : (uint32_t)(d[b0 + i] >> 32) & 0x7fffffffu;
                amin = a < amin ? a : amin;
                amax = a > amax ? a : amax;
            }
            int take = 1;
            if (rw_f[t] == 0u) {
                rw_f[t] = f32 ? tbins_rw32_base(amin >> 23, amax >> 23) : tbins_rw_base(amin >> 20, amax >> 20);
                if (rw_f[t] == 0u) {
                    take = 0;
                    if (++rw_rej[t] >= TEST_RW_REJECTS) rw_f[t] = ~0u;
                }
            }
            if (take && !(f32 ? tbins_rw32_accepts(rw_f[t], amin, amax) : tbins_rw_accepts(rw_f[t], amin, amax))) {
                take = 0;
                if (++rw_rej[t] >= TEST_RW_REJECTS) rw_f[t] = ~0u;
            }
            if (take) {
                if (rw_n[t] + per > rwlimit) {
                    for (int j = 0; j < 4; j++) {
                        tally_exact_add_finite_(&acc, rw[j][t]);
                        rw[j][t] = 0.0;
                    }
                    rw_n[t] = 0;
                }
                if (f32) {
                    const double s0 = dfrom(tbins_rw32_sigma_bits(rw_f[t], 0)), s1 = dfrom(tbins_rw32_sigma_bits(rw_f[t], 1));
                    for (size_t i = 0; i < m; i++)
                        tbins_rw32_add(&rw[0][t], &rw[1][t], &rw[2][t], s0, s1, (double)ffrom(f[b0 + i]));
                } else {
                    const double s0 = dfrom(tbins_rw_sigma_bits(rw_f[t], 0)), s1 = dfrom(tbins_rw_sigma_bits(rw_f[t], 1)),
                                 s2 = dfrom(tbins_rw_sigma_bits(rw_f[t], 2));
                    for (size_t i = 0; i < m; i++)
                        tbins_rw_add(&rw[0][t], &rw[1][t], &rw[2][t], &rw[3][t], s0, s1, s2, dfrom(d[b0 + i]));
                }
                rw_n[t] += (unsigned)m;
                nonneg = 1;
                continue;
            }
        }
        if (!f32 && windows) { /* the windows first, as bins_batch_out does */
            uint32_t jmin = 255, jmax = 0;
            for (size_t i = 0; i < m; i++) {
                const uint32_t j = tbins_f64w_window((uint32_t)(d[b0 + i] >> 32));
                jmin = j < jmin ? j : jmin;
                jmax = j > jmax ? j : jmax;
            }
            if (!started[t]) {
                started[t] = 1;
                base[t] = tbins_f64w_base(jmin, jmax);
            }
            if (base[t] >= 0) {
                if (jmin >= (uint32_t)base[t] && jmax < (uint32_t)base[t] + TBINS_F64W_WINDOWS) {
                    if (count[t] + per > wlimit) {
                        MOVE_WINDOWS(t);
                        count[t] = 0;
                    }
                    for (size_t i = 0; i < m; i++)
                        tbins_add_f64w(wcols + t, NT, d[b0 + i],
                                       tbins_f64w_window((uint32_t)(d[b0 + i] >> 32)) - (uint32_t)base[t]);
                    count[t] += (unsigned)m;
                    nonneg = 1;
                    continue;
                }
                MOVE_WINDOWS(t); /* a stray batch: digits from here on */
                base[t] = -1;
                count[t] = 0;
            }
        }
        if (count[t] + per_set > limit) {
            if (f32)
                for (int k = 0; k < TBINS_F32_WORDS; k++) {
                    MOVE_BIN(k * NT + t);
                    fcols[k * NT + t] = -0.0;
                }
            else
                tbins_normalize(cols + t, NT, TBINS_F64_DIGITS);
            count[t] = 0;
        }
        size_t i = 0;
        if (f32) {
            /* an odd last value pairs with -0, which changes no bin (the kernels' batches are
             * whole vectors of four) */
            for (; i < m; i += 2) tbins_add_f32_2(fcols + t, NT, f[b0 + i], i + 1 < m ? f[b0 + i + 1] : 0x80000000u);
            count[t] += (unsigned)(m + 1) / 2;
        } else {
            for (; i < m; i++) tbins_add_f64(cols + t, NT, d[b0 + i]);
            count[t] += (unsigned)m;
            for (i = 0; i < m; i++) nonneg |= d[b0 + i] != 0x8000000000000000ull;
        }
    }
    for (int t = 0; t < NT; t++) /* the kernel's end: the register windows in */
        for (int j = 0; j < 4; j++) tally_exact_add_finite_(&acc, rw[j][t]);
    if (f32) { /* every bin into the block's superaccumulator */
        for (int k = 0; k < TBINS_F32_WORDS * NT; k++) MOVE_BIN(k);
        /* zeroed columns only: a column the kernel never used adds nothing */
    } else { /* columns in windows: their words added in; the others normalised, then each
              * warp's digit sums added in */
        for (int t = 0; t < NT; t++) {
            if (base[t] >= 0) MOVE_WINDOWS(t);
            tbins_normalize(cols + t, NT, TBINS_F64_DIGITS);
        }
        for (int w = 0; w < NT / 32; w++)
            for (int k = 0; k < TBINS_F64_DIGITS; k++) {
                int64_t s = 0;
                for (int j = 0; j < 32; j++) s += cols[k * NT + w * 32 + j];
                acc.chunk[k + TBINS_F64_LO] += s;
            }
    }
    acc.flags = TALLY_EXACT_F_ANY | flags | (nonneg ? TALLY_EXACT_F_NONNEGZERO : 0);
    return tally_exact_round(&acc);
}

enum { FAMILIES = 18 };
static const char *family_name[FAMILIES] = {"f64 wide", "f64 full", "f64 cancel", "f64 budget", "f64 subnormal",
                                            "f32 wide", "f32 full", "f32 cancel", "f32 budget", "f32 subnormal",
                                            "f32 specials", "f32 zeros", "f64 window bands", "f64 window budget",
                                            "f64 register windows", "f64 register budget",
                                            "f32 register windows", "f32 register budget"};
static uint32_t g_rw_f0; /* register windows: the array's least field F0 (its windows' base when a
                          * thread's first batch spans F0 .. F0 + 107) */
static int g_rw_j;       /* register budget: the window whose sum the values drive up */
static int g_mode; /* the specials' and zeros' kind for the array (drawn per array) */
static int g_band_lo, g_band_w; /* f64 window bands: the array's first window and width */
#define WBUDGET_WINDOW 130 /* the window budget family's window (fields 1040 .. 1047) */

/* A double of field e (1 .. 2046) with mantissa bits by kind: random, all ones, none, or the
 * window pieces' extremes (hi's lowest bit alone, lo's bits all ones). */
static double dfield(uint32_t e, int kind, double sg)
{
    uint64_t m;
    switch (kind) {
    case 0: m = 0x000fffffffffffffull; break;
    case 1: m = 0; break;
    case 2: m = 1ull << 26; break;
    case 3: m = 0x3ffffffull; break;
    default: m = rnd() & 0x000fffffffffffffull; break;
    }
    return sg * dfrom(((uint64_t)e << 52) | m);
}

static double gen_f64(int fam, size_t i, size_t n, double prev)
{
    const double sg = (rnd() & 1) ? -1.0 : 1.0;
    switch (fam) {
    case 0: return sg * (1.0 + urand()) * ldexp(1.0, (int)(rnd() % 81) - 40);
    case 1: return dfrom(rnd() & 0xffefffffffffffffull) ; /* every finite exponent but the top's */
    case 2: return (i & 1) ? -prev : sg * urand() * ldexp(1.0, (int)(rnd() % 2000) - 1000) +
                                     ((i + 1 == n) ? ldexp(1.0, -1070) : 0.0);
    case 3: return dfrom(((uint64_t)(18 + 32 * 31) << 52) | 0x000fffffffffffffull); /* one digit pair */
    case 12: { /* a band of g_band_w windows from g_band_lo (fields clamped to 1 .. 2046), its
                * edges often, and now and then a stray from anywhere (mode 5: positive) */
        if (rnd() % 509 == 0) return dfrom(rnd() & 0xffefffffffffffffull);
        int e = 8 * g_band_lo + (int)(rnd() % (uint64_t)(8 * g_band_w));
        if (rnd() % 5 == 0) e = (rnd() & 1) ? 8 * g_band_lo : 8 * (g_band_lo + g_band_w) - 1;
        e = e < 1 ? 1 : e > 2046 ? 2046 : e;
        return dfield((uint32_t)e, (int)(rnd() % 8), g_mode == 5 ? 1.0 : sg);
    }
    case 13: { /* two threads, window WBUDGET_WINDOW: the first half of the values its largest
                * value L (every word's piece then 2^34 - 2^7 or ~2^33 of its grain, so that a
                * thread's 3 * 2^18 of them drive each word past 2^53 grains unless it is moved at
                * its budget of 2^19), the second half -L; every 64th value an odd multiple of
                * both grains (either sign), which a word past 2^53 grains would round */
        if (i % 64 == 5)
            return sg * dfrom(((uint64_t)(8 * WBUDGET_WINDOW) << 52) | (rnd() & 0x000fffffffffffffull) |
                              (1ull << 26) | 1u);
        return (i < n / 2 ? 1.0 : -1.0) * dfield(8 * WBUDGET_WINDOW + 7, 0, 1.0);
    }
    case 14: { /* register windows: fields F0 .. F0 + 107 (modes 0, 1: each batch's first two
                * values at F0 and F0 + 107, so that the base is F0), the edges often, mantissas
                * with bits around the windows' bounds (40, 80, 120 bits above 2^L, L = F0 - 1075);
                * now and then a stray from anywhere, a field just outside, or a zero (mode 4) */
        if (rnd() % 509 == 0) return dfrom(rnd() & 0xffefffffffffffffull);
        if (g_mode == 4 && rnd() % 97 == 0) return sg * 0.0;
        int e = (int)g_rw_f0 + (int)(rnd() % TBINS_RW_FIELDS);
        if (g_mode < 2 && i % 16 < 2) e = (int)g_rw_f0 + (i % 16 ? (int)TBINS_RW_FIELDS - 1 : 0);
        else if (rnd() % 5 == 0) e = (int)g_rw_f0 + ((rnd() & 1) ? (int)TBINS_RW_FIELDS - 1 : 0);
        else if (rnd() % 301 == 0) e = (int)g_rw_f0 + ((rnd() & 1) ? (int)TBINS_RW_FIELDS : -1);
        e = e < 1 ? 1 : e > 2046 ? 2046 : e;
        if (rnd() % 3 == 0) { /* bits at and around a window bound */
            const int pos = 40 * (1 + (int)(rnd() % 3)) - (e - (int)g_rw_f0) + (int)(rnd() % 5) - 2;
            uint64_t m = rnd() & 0x000fffffffffffffull & ((rnd() & 1) ? ~0ull : 0ull);
            if (pos >= 0 && pos < 52) m ^= (1ull << pos) | ((rnd() & 1) ? (1ull << pos) - 1 : 0);
            return sg * dfrom(((uint64_t)e << 52) | m);
        }
        return dfield((uint32_t)e, (int)(rnd() % 8), sg);
    }
    case 15: { /* register budget (two threads, the second half the first negated): each batch's
                * first value at F0 and its second the largest at F0 + 107 (the base is F0);
                * the others drive window g_rw_j's sum up at its fastest, about 2^40 of its grain
                * g_j per value: j = 0, the largest values; j = 1, field F0 + 107 (ulp 2^-13 g_0)
                * with the low 14 mantissa bits 0x1fff (x mod 2 g_0 = g_0 - ulp: q_0 rounds down
                * and leaves g_0 - ulp to window 1); j = 2 and 3, fields F0 + 66 and F0 + 26 (below
                * g_0 and g_1, so that the windows above take 0; ulp 2^-14 g_1 and 2^-14 g_2) with
                * the low 15 bits 0x3fff (the residual g_1 - ulp, g_2 - ulp); every 64th an odd
                * multiple of g_j, either sign (fields F0 + 107, 80, 40, 0: the least ulps that
                * reach window j), which a window past 2^53 grains rounds; the last value, and
                * the one before the half (the last one left as it is), of 2^L, so that the sum
                * is small and such an error shows */
        if (i % 16 == 0 || i + 1 == n || i + 1 == n / 2) return sg * dfrom(((uint64_t)g_rw_f0 << 52) | (rnd() & 0x000fffffffffffffull) | 1u);
        if (i % 16 == 1) return dfield(g_rw_f0 + TBINS_RW_FIELDS - 1, 0, 1.0);
        const uint32_t e = g_rw_f0 + (g_rw_j == 0 ? TBINS_RW_FIELDS - 1u : g_rw_j == 1 ? 107u : g_rw_j == 2 ? 66u : 26u);
        if (i % 64 == 5)
            return sg * dfrom(((uint64_t)(g_rw_f0 + (g_rw_j == 0 ? 107u : 120u - 40u * (uint32_t)g_rw_j)) << 52) |
                              (rnd() & 0x000fffffffffffffull) | 1u);
        if (g_rw_j == 0) return dfield(e, 0, 1.0);
        if (g_rw_j == 1) return dfrom(((uint64_t)e << 52) | (rnd() & 0x000fffffffffc000ull) | 0x1fffu);
        return dfrom(((uint64_t)e << 52) | (rnd() & 0x000fffffffff8000ull) | 0x3fffu);
    }
    default: return dfrom((rnd() & 0x800fffffffffffffull) | ((rnd() & 3) == 0 ? (1ull << 52) : 0));
    }
}
static float gen_f32(int fam, size_t i, size_t n, float prev)
{
    const float sg = (rnd() & 1) ? -1.0f : 1.0f;
    switch (fam) {
    case 5: return sg * (float)((1.0 + urand()) * ldexp(1.0, (int)(rnd() % 81) - 40));
    case 6: return ffrom((uint32_t)rnd() & 0xff7fffffu);
    case 7: return (i & 1) ? -prev : sg * (float)(urand() * ldexp(1.0, (int)(rnd() % 250) - 125)) +
                                     ((i + 1 == n) ? ldexpf(1.0f, -149) : 0.0f);
    case 8: /* window 9 at its edge: set 0 (even positions) its largest value L and every 64th its
             * grain's odd multiples, set 1 (odd positions) -L and every 64th -0, so that the L
             * cancel and any bit a set lost past its budget shows in the (small) sum */
        if (i % 64 == 0) return ffrom(((uint32_t)(16 * 9) << 23) | ((uint32_t)rnd() & 0x7fffffu) | 1u);
        if (i % 64 == 1) return -0.0f;
        return (i & 1 ? -1.0f : 1.0f) * ffrom(((uint32_t)(16 * 9 + 15) << 23) | 0x7fffffu);
    case 9: return ffrom(((uint32_t)rnd() & 0x807fffffu) | ((rnd() & 3) == 0 ? (1u << 23) : 0));
    case 16: { /* f32 register windows: fields G0 .. G0 + 96 (G0 = g_rw_f0 folded into 1 .. 158;
                * modes 0, 1: each batch's first two values at G0 and G0 + 96), the edges often,
                * bits around the windows' bounds (40, 80 bits above 2^L, L = G0 - 150), now and
                * then a stray, a field just outside, a zero, inf or NaN (mode 4) */
        const uint32_t g0 = 1u + (g_rw_f0 - 1u) % TBINS_RW32_GMAX;
        if (rnd() % 509 == 0) return ffrom((uint32_t)rnd() & 0xff7fffffu);
        if (g_mode == 4 && rnd() % 97 == 0) return (rnd() & 1) ? sg * 0.0f : (rnd() & 1) ? sg * INFINITY : NAN;
        int e = (int)g0 + (int)(rnd() % TBINS_RW32_FIELDS);
        if (g_mode < 2 && i % 32 < 2) e = (int)g0 + (i % 32 ? (int)TBINS_RW32_FIELDS - 1 : 0);
        else if (rnd() % 5 == 0) e = (int)g0 + ((rnd() & 1) ? (int)TBINS_RW32_FIELDS - 1 : 0);
        else if (rnd() % 301 == 0) e = (int)g0 + ((rnd() & 1) ? (int)TBINS_RW32_FIELDS : -1);
        e = e < 1 ? 1 : e > 254 ? 254 : e;
        uint32_t m = (uint32_t)rnd() & 0x7fffffu;
        switch (rnd() % 4) {
        case 0: m = 0x7fffffu; break;
        case 1: m = 0; break;
        case 2: {
            const int pos = 40 * (1 + (int)(rnd() % 2)) - (e - (int)g0) + (int)(rnd() % 5) - 2;
            if (!(rnd() & 1)) m = 0;
            if (pos >= 0 && pos < 23) m ^= (1u << pos) | ((rnd() & 1) ? (1u << pos) - 1 : 0);
            break;
        }
        default: break;
        }
        return sg * ffrom(((uint32_t)e << 23) | m);
    }
    case 17: { /* f32 register budget (two threads, the second half the first negated): each
                * batch's first value at G0, its second the largest at G0 + 96; the others drive
                * window g_rw_j's sum (j = 0 .. 2) up by about 2^40 of its grain per value: j = 0,
                * the largest values; j = 1, field G0 + 67 (ulp 2^-13 g_0) with the low 14 bits
                * 0x1fff; j = 2, field G0 + 26 (below g_0, ulp 2^-14 g_1), low 15 bits 0x3fff;
                * every 64th an odd multiple of g_j (fields G0 + 80, 40, 0) or of g_j / 2, either sign; the
                * last value and the one before the half at G0 */
        const uint32_t g0 = 1u + (g_rw_f0 - 1u) % TBINS_RW32_GMAX;
        const int alt = g_rw_j % 4 == 3; /* j = 2 with the low 16 bits 0x7fff: residuals near 2 g_1,
                                          * the most a sigma_1 twice too high leaves (a check of it) */
        const int j = alt ? 2 : g_rw_j % 4;
        if (i % 32 == 0 || i + 1 == n || i + 1 == n / 2) return sg * ffrom((g0 << 23) | ((uint32_t)rnd() & 0x7fffffu) | 1u);
        if (i % 32 == 1) return ffrom(((g0 + TBINS_RW32_FIELDS - 1u) << 23) | 0x7fffffu);
        if (i % 64 == 5) /* and every other time one field lower: a grain half g_j (a sigma too low) */
            return sg * ffrom(((g0 + 80u - 40u * (uint32_t)j - (uint32_t)(i / 64 % 2 && g0 + 80u - 40u * (uint32_t)j > 1u)) << 23) |
                              ((uint32_t)rnd() & 0x7fffffu) | 1u);
        if (j == 0) return ffrom(((g0 + TBINS_RW32_FIELDS - 1u) << 23) | 0x7fffffu);
        if (j == 1) return ffrom(((g0 + 67u) << 23) | ((uint32_t)rnd() & 0x7fc000u) | 0x1fffu);
        if (alt) return ffrom(((g0 + 26u) << 23) | ((uint32_t)rnd() & 0x7f0000u) | 0x7fffu);
        return ffrom(((g0 + 26u) << 23) | ((uint32_t)rnd() & 0x7f8000u) | 0x3fffu);
    }
    case 10: /* wide and full-range values, with NaN or infinities at random positions and last:
              * mode 0 +inf only, 1 -inf only, 2 both, 3 NaN (any payload, either sign), 4 NaN
              * and infinities, 5 inf and values near the top of window 15 */
        if (i + 1 == n || rnd() % 97 == 0) {
            const int m = g_mode == 2 ? (int)(rnd() & 1) : g_mode == 4 ? (int)(rnd() % 3) : g_mode == 5 ? 0 : g_mode;
            if (m == 0) return INFINITY;
            if (m == 1) return -INFINITY;
            return ffrom(0x7f800000u | ((uint32_t)rnd() & 0x807fffffu) | 1u);
        }
        if (g_mode == 5) return sg * ffrom(((uint32_t)(240 + rnd() % 15) << 23) | ((uint32_t)rnd() & 0x7fffffu));
        return (rnd() & 1) ? ffrom((uint32_t)rnd() & 0xff7fffffu) : sg * (float)((1.0 + urand()) * ldexp(1.0, (int)(rnd() % 81) - 40));
    default: /* zeros: mode 0 all -0; 1 both signs; 2 -0 and cancelling pairs (exact sum +0);
              * 3 -0 and one +0 last; 4 -0 and one least subnormal (either sign) somewhere */
        switch (g_mode % 5) {
        case 0: return -0.0f;
        case 1: return (rnd() & 1) ? -0.0f : 0.0f;
        case 2: return (i & 1) ? -prev : (rnd() & 1) ? -0.0f : sg * (float)((1.0 + urand()) * ldexp(1.0, (int)(rnd() % 250) - 125));
        case 3: return i + 1 == n ? 0.0f : -0.0f;
        default: return i == n / 3 ? sg * ldexpf(1.0f, -149) : -0.0f;
        }
    }
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261201ull;
    int arrays = argc > 2 ? atoi(argv[2]) : 400;
    /* TBINS_TEST_LIMIT: an add budget to try instead of the real ones (to watch a wrong one fail) */
    const char *lim = getenv("TBINS_TEST_LIMIT");
    /* TBINS_TEST_WLIMIT: the same for the f64 windows' budget */
    const char *wl = getenv("TBINS_TEST_WLIMIT");
    const unsigned wlimit = wl ? (unsigned)atoi(wl) : TBINS_F64W_ADDS;
    /* TBINS_TEST_RWLIMIT: the same for the f64 register windows' budget */
    const char *rwl = getenv("TBINS_TEST_RWLIMIT");
    const unsigned rwlimit = rwl ? (unsigned)atoi(rwl) : TBINS_RW_ADDS;
    g_rng = seed;
    printf("test_exact_bins: seed %llu, %d arrays\n", (unsigned long long)seed, arrays);
    /* the kernels' window offsets (stride 256) against the window, for every sign and field */
    int bad_off = 0;
    for (uint32_t k = 0; k < 4096; k++) {
        const uint32_t bh = (k << 20) | ((uint32_t)rnd() & 0xfffffu);
        bad_off += tbins_f64w_off256(bh) != tbins_f64w_window(bh) * 256u * 8u;
    }
    if (bad_off) printf("FAIL: tbins_f64w_off256 wrong for %d high words\n", bad_off);
    const size_t cap = 1u << 22; /* the f32 budget family: 2^15 values per thread and set, twice its budget */
    uint64_t *d = malloc(cap * 8);
    uint32_t *f = malloc(cap * 4);
    int bad = 0, runs = 0;
    for (int a = 0; a < arrays; a++) {
        const int fam = a % FAMILIES;
        const int f32 = (fam >= 5 && fam <= 11) || fam >= 16;
        /* the first two of each budget family: at full size */
        const int budget = ((fam == 3 || fam == 8 || fam == 13) && a < 2 * FAMILIES) ||
                           ((fam == 15 || fam == 17) && a < 4 * FAMILIES);
        size_t n = budget ? (fam == 13 ? (size_t)3 << 20 : fam == 15 || fam == 17 ? (size_t)3 << 14 : f32 ? cap : cap / 16)
                          : (size_t)(rnd() % (a < 40 ? 70 : 40000)) + 1;
        g_mode = (int)(rnd() % 6);
        /* bands: any width to 40 windows, or about the windows' 34, anywhere, or at either end */
        g_band_w = (rnd() & 1) ? 32 + (int)(rnd() % 5) : 1 + (int)(rnd() % 40);
        switch (rnd() % 4) {
        case 0: g_band_lo = 256 - g_band_w - (int)(rnd() % 4); break;
        case 1: g_band_lo = (int)(rnd() % 3); break;
        default: g_band_lo = (int)(rnd() % 253); break;
        }
        if (g_mode == 5) { /* the top windows, positive, then taken back: past 2^1024 in any window
                            * that held the largest fields */
            g_band_lo = 250;
            g_band_w = 6;
        }
        /* register windows: F0 anywhere, or at either end of 1 .. TBINS_RW_FMAX; the budget's
         * window: each in turn in the first four, at full size (3 * 2^13 values per thread) */
        switch (rnd() % 4) {
        case 0: g_rw_f0 = 1u + (uint32_t)(rnd() % 4); break;
        case 1: g_rw_f0 = TBINS_RW_FMAX - (uint32_t)(rnd() % 4); break;
        default: g_rw_f0 = 1u + (uint32_t)(rnd() % TBINS_RW_FMAX); break;
        }
        g_rw_j = (fam == 15 || fam == 17) && budget ? a / FAMILIES : (int)(rnd() % 4);
        bigfix ref;
        bf_init(&ref);
        double prev = 0.0;
        float prevf = 0.0f;
        for (size_t i = 0; i < n; i++) {
            if (f32) {
                prevf = gen_f32(fam, i, n, prevf);
                /* f32 register windows (mode 0) and budget: the second half the first negated */
                if (((fam == 16 && g_mode == 0) || fam == 17) && i >= n / 2 && i + 1 < n) prevf = -ffrom(f[i - n / 2]);
                f[i] = fbits(prevf);
                bf_add(&ref, (double)prevf);
            } else {
                prev = gen_f64(fam, i, n, prev);
                /* window bands, half of the arrays: the second half the first negated (but the
                 * last value), so that the sum is small and any bit a word lost shows */
                if (((fam == 12 && (g_mode < 3 || g_mode == 5)) || (fam == 14 && g_mode % 2 == 0) || fam == 15) &&
                    i >= n / 2 && i + 1 < n)
                    prev = -dfrom(d[i - n / 2]);
                d[i] = dbits(prev);
                bf_add(&ref, prev);
            }
        }
        unsigned limit = f32 ? TBINS_F32_ADDS : TBINS_F64_ADDS;
        if (lim) limit = (unsigned)atoi(lim);
        const double want = bf_round(&ref);
        /* f64: digits only (REDUCE_BINS=1), windows first (=2), register windows first (=3);
         * f32: the bins (1 .. 3), register windows first (=4) */
        for (int win = 0; win <= 2; win++) {
            if (f32 && win == 1) continue;
            const int nt = (fam == 13 && win) || fam == 15 || fam == 17 ? 2 : NT;
            double got = bins_sum(f32 ? NULL : d, f32 ? f : NULL, n, limit, win, wlimit, rwlimit, nt);
            runs++;
            if (!same_double(got, want)) {
                if (bad++ < 10)
                    printf("FAIL: %s%s, array %d, n=%zu: got %.17g, want %.17g (seed %llu)\n", family_name[fam],
                           win == 2 ? " (register windows)" : win ? " (windows)" : "", a, n, got, want,
                           (unsigned long long)seed);
            }
        }
    }
    free(d);
    free(f);
    printf("test_exact_bins: %d runs (f64 arrays three times, f32 twice), %d mismatches\n", runs, bad);
    return bad || bad_off ? 1 : 0;
}
