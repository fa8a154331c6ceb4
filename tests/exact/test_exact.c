/* Tests of the exact float sums: the superaccumulator (core/exact_sum.h) and the per-ISA kernels
 * (cpu/exact_kernels.h), against an independent reference: a plain two's-complement big integer
 * in units of 2^-1074 with its own round-half-even, written here without the superaccumulator
 * and without any float accumulation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fenv.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include "core/exact_sum.h"
#include "cpu/exact_kernels.h"
#include "cpu/cpu.h"
#include "tally.h"

/* ---- reference ------------------------------------------------------------------------------
 * ref.w[0..REF_WORDS-1]: little-endian 32-bit words of a two's-complement integer N; the value is
 * N * 2^-1074. A sum of 2^64 doubles needs 1074 + 1088 + 1 bits, but a square of a double is
 * up to 2^2048: 2^64 of them need 1074 + 2112 + 1 bits, so 100 words (3200 bits). (With 70 words
 * the squares of |d| > 2^583 wrapped the sign: a sum of overflowing squares came out -inf.) */
#define REF_WORDS 100
typedef struct {
    uint32_t w[REF_WORDS];
    int nan, pinf, ninf, any, nonnegzero;
} ref_t;

static void ref_init(ref_t *r) { memset(r, 0, sizeof *r); }

static uint64_t bits_of(double x) {
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
}
static double from_bits(uint64_t b) {
    double x;
    memcpy(&x, &b, 8);
    return x;
}

/* N += sign * mag * 2^shift, mag < 2^64. */
static void ref_add_int(ref_t *r, uint64_t mag, int shift, int negative) {
    /* spread mag << shift over words: up to 4 words */
    int wi = shift / 32, bs = shift % 32;
    uint32_t part[4];
    unsigned __int128 v = (unsigned __int128)mag << bs;
    for (int i = 0; i < 4; i++) part[i] = (uint32_t)(v >> (32 * i));
    if (!negative) {
        uint64_t carry = 0;
        for (int i = wi; i < REF_WORDS; i++) {
            uint64_t add = (i - wi < 4 ? part[i - wi] : 0) + carry;
            if (add == 0 && i - wi >= 4) break;
            uint64_t s = (uint64_t)r->w[i] + add;
            r->w[i] = (uint32_t)s;
            carry = s >> 32;
        }
    } else {
        uint64_t borrow = 0;
        for (int i = wi; i < REF_WORDS; i++) {
            uint64_t sub = (i - wi < 4 ? part[i - wi] : 0) + borrow;
            if (sub == 0 && i - wi >= 4) break;
            uint64_t cur = r->w[i];
            r->w[i] = (uint32_t)(cur - sub);
            borrow = cur < sub;
        }
    }
}

static void ref_add(ref_t *r, double x) {
    uint64_t b = bits_of(x);
    int e = (int)((b >> 52) & 0x7ff);
    uint64_t m = b & ((1ull << 52) - 1);
    if (e == 0x7ff) {
        r->any = r->nonnegzero = 1;
        if (m) r->nan = 1;
        else if (b >> 63) r->ninf = 1;
        else r->pinf = 1;
        return;
    }
    r->any = 1;
    if (b != 0x8000000000000000ull) r->nonnegzero = 1;
    if (e) m |= 1ull << 52;
    else e = 1;
    /* x = m * 2^(e - 1075) = m * 2^(e - 1) units of 2^-1074 */
    if (m) ref_add_int(r, m, e - 1, (int)(b >> 63));
}

/* Adds d*d exactly, from the 106-bit integer square of d's significand. */
static void ref_add_square(ref_t *r, double d) {
    uint64_t b = bits_of(d);
    int e = (int)((b >> 52) & 0x7ff);
    uint64_t m = b & ((1ull << 52) - 1);
    r->any = r->nonnegzero = 1;
    if (e == 0x7ff) {
        if (m) r->nan = 1;
        else r->pinf = 1;
        return;
    }
    if (e) m |= 1ull << 52;
    else e = 1;
    if (m == 0) return;
    /* d^2 = m^2 * 2^(2e - 2150) = m^2 * 2^(2e - 1076) units; tests keep 2e - 1076 >= 0 */
    unsigned __int128 sq = (unsigned __int128)m * m;
    int sh = 2 * e - 1076;
    assert_true(sh >= 0);
    ref_add_int(r, (uint64_t)sq & ((1ull << 53) - 1), sh, 0);
    ref_add_int(r, (uint64_t)(sq >> 53), sh + 53, 0);
}

static int ref_bit(const uint32_t *w, int i) { return (int)(w[i / 32] >> (i % 32) & 1); }

static double ref_round(const ref_t *r0) {
    if (r0->nan || (r0->pinf && r0->ninf)) return NAN;
    if (r0->pinf) return INFINITY;
    if (r0->ninf) return -INFINITY;
    uint32_t w[REF_WORDS];
    memcpy(w, r0->w, sizeof w);
    int neg = (int)(w[REF_WORDS - 1] >> 31);
    if (neg) { /* two's complement negate */
        uint64_t carry = 1;
        for (int i = 0; i < REF_WORDS; i++) {
            uint64_t s = (uint64_t)(uint32_t)~w[i] + carry;
            w[i] = (uint32_t)s;
            carry = s >> 32;
        }
    }
    int h = REF_WORDS * 32 - 1;
    while (h >= 0 && !ref_bit(w, h)) h--;
    if (h < 0) return (r0->any && !r0->nonnegzero) ? -0.0 : 0.0;
    double v;
    if (h < 53) { /* below 2^-1021: fits the subnormal/first-binade grid exactly */
        uint64_t mant = 0;
        for (int i = h; i >= 0; i--) mant = mant << 1 | (uint64_t)ref_bit(w, i);
        v = ldexp((double)mant, -1074);
    } else {
        int cut = h - 52;
        uint64_t mant = 0;
        for (int i = h; i >= cut; i--) mant = mant << 1 | (uint64_t)ref_bit(w, i);
        int round = ref_bit(w, cut - 1), sticky = 0;
        for (int i = 0; i < cut - 1 && !sticky; i++) sticky = ref_bit(w, i);
        if (round && (sticky || (mant & 1))) mant++;
        v = ldexp((double)mant, cut - 1074); /* inf when beyond DBL_MAX */
    }
    return neg ? -v : v;
}

/* ---- helpers -------------------------------------------------------------------------------- */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}
static double unif(void) { return (double)(rnd() >> 11) * 0x1p-53; }

static int same(double a, double b) {
    if (a != a && b != b) return 1;
    return bits_of(a) == bits_of(b);
}

static const char *isa_names[] = {"auto", "scalar", "avx2", "avx512"};
static int isa_ok(tally_isa isa) {
#if defined(TALLY_X86)
    if (isa == TALLY_ISA_AVX2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (isa == TALLY_ISA_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
    return 1;
#else
    return isa == TALLY_ISA_SCALAR;
#endif
}
static int skipped_msg_done[4];
static int isa_usable(tally_isa isa) {
    if (isa_ok(isa)) return 1;
    if (!skipped_msg_done[isa]) {
        printf("[   INFO   ] this CPU lacks %s: its exact kernels are not tested here\n",
               isa_names[isa]);
        skipped_msg_done[isa] = 1;
    }
    return 0;
}

enum { K_SUM = 0, K_SQ = 1 };

/* Runs one kernel of isa over x (f32 if xf is set) and returns the rounded result. */
static double run_kernel(tally_isa isa, int kind, const float *xf, const double *xd, uint64_t n,
                         double mean, int omit_nan, tally_exact *out) {
    const tally_exact_kernels *k = tally_exact_kernels_for(isa);
    tally_exact a;
    tally_exact_init(&a);
    if (kind == K_SUM) {
        if (xf) k->sum_f32(xf, n, omit_nan, &a);
        else k->sum_f64(xd, n, omit_nan, &a);
    } else {
        if (xf) k->sqdev_f32(xf, n, mean, omit_nan, &a);
        else k->sqdev_f64(xd, n, mean, omit_nan, &a);
    }
    if (out) *out = a;
    return tally_exact_round(&a);
}

static double reference(int kind, const float *xf, const double *xd, uint64_t n, double mean,
                        int omit_nan) {
    ref_t r;
    ref_init(&r);
    for (uint64_t i = 0; i < n; i++) {
        double v = xf ? (double)xf[i] : xd[i];
        if (v != v && omit_nan) continue;
        if (kind == K_SUM) ref_add(&r, v);
        else ref_add_square(&r, v - mean);
    }
    return ref_round(&r);
}

static int failures;
static void check(const char *what, double got, double want, tally_isa isa, int kind, int f32,
                  uint64_t n, int omit) {
    if (!same(got, want)) {
        printf("MISMATCH %s isa=%s %s %s n=%llu omit_nan=%d: got %a want %a\n", what,
               isa_names[isa], kind == K_SUM ? "sum" : "sqdev", f32 ? "f32" : "f64",
               (unsigned long long)n, omit, got, want);
        failures++;
    }
}

/* ---- the fused sum + min + max kernels --------------------------------------------------------
 * Reference extremes from order keys on the bits (-0 < +0 by construction), not from float
 * compares: the unsigned key of a double is its bits with the sign bit flipped if positive, all
 * bits flipped if negative. */
static uint64_t okey(double v) {
    uint64_t b = bits_of(v);
    return (b >> 63) ? ~b : b | (1ull << 63);
}
typedef struct {
    int any;
    double mn, mx;
    uint64_t nans;
} ref_mm;
static ref_mm reference_mm(const float *xf, const double *xd, uint64_t n) {
    ref_mm r = {0, 0, 0, 0};
    for (uint64_t i = 0; i < n; i++) {
        double v = xf ? (double)xf[i] : xd[i];
        if (v != v) {
            r.nans++;
            continue;
        }
        if (!r.any || okey(v) < okey(r.mn)) r.mn = v;
        if (!r.any || okey(v) > okey(r.mx)) r.mx = v;
        r.any = 1;
    }
    return r;
}
static void check_mm(const char *what, const tally_xminmax *mm, const ref_mm *r, tally_isa isa,
                     int f32, uint64_t n, int omit) {
    int any = mm->min <= mm->max;
    int ok = any == r->any && mm->nans == r->nans &&
             (!any || (bits_of(mm->min) == bits_of(r->mn) && bits_of(mm->max) == bits_of(r->mx)));
    /* the IEEE views: minimum/maximum propagate NaN, minimumNumber/maximumNumber skip it */
    double wmin = (!omit && r->nans) || !r->any ? NAN : r->mn;
    double wmax = (!omit && r->nans) || !r->any ? NAN : r->mx;
    ok = ok && same(tally_xminmax_min(mm, omit), wmin) && same(tally_xminmax_max(mm, omit), wmax);
    if (!ok) {
        printf("MISMATCH %s isa=%s sum_minmax %s n=%llu omit_nan=%d: got min %a max %a nans %llu"
               " (any %d), want min %a max %a nans %llu (any %d)\n",
               what, isa_names[isa], f32 ? "f32" : "f64", (unsigned long long)n, omit, mm->min,
               mm->max, (unsigned long long)mm->nans, any, r->mn, r->mx,
               (unsigned long long)r->nans, r->any);
        failures++;
    }
}
/* The fused kernel over [lo, hi) of x, into a and mm. */
static void run_fused(tally_isa isa, const float *xf, const double *xd, uint64_t lo, uint64_t hi,
                      int omit_nan, tally_exact *a, tally_xminmax *mm) {
    const tally_exact_kernels *k = tally_exact_kernels_for(isa);
    if (xf) k->sum_minmax_f32(xf + lo, hi - lo, omit_nan, a, mm);
    else k->sum_minmax_f64(xd + lo, hi - lo, omit_nan, a, mm);
}
/* The fused kernel of every ISA: its sum must equal the plain one's (want), its extremes the
 * reference's; in one call and in three calls on consecutive pieces (one accumulator, one mm),
 * and in three pieces merged. */
static void check_fused(const char *what, const float *xf, const double *xd, uint64_t n,
                        int omit_nan, double want) {
    ref_mm r = reference_mm(xf, xd, n);
    for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++) {
        if (!isa_usable(isa)) continue;
        tally_exact a;
        tally_xminmax mm;
        tally_exact_init(&a);
        tally_xminmax_init(&mm);
        run_fused(isa, xf, xd, 0, n, omit_nan, &a, &mm);
        check("fused", tally_exact_round(&a), want, isa, K_SUM, xf != NULL, n, omit_nan);
        check_mm(what, &mm, &r, isa, xf != NULL, n, omit_nan);
        if (n >= 2) {
            uint64_t c1 = rnd() % n, c2 = rnd() % n;
            if (c1 > c2) { uint64_t t = c1; c1 = c2; c2 = t; }
            uint64_t lo[3] = {0, c1, c2}, hi[3] = {c1, c2, n};
            tally_exact_init(&a);
            tally_xminmax_init(&mm);
            tally_exact p[3];
            for (int j = 0; j < 3; j++) {
                run_fused(isa, xf, xd, lo[j], hi[j], omit_nan, &a, &mm);
                tally_exact_init(&p[j]);
                tally_xminmax scratch;
                tally_xminmax_init(&scratch);
                run_fused(isa, xf, xd, lo[j], hi[j], omit_nan, &p[j], &scratch);
            }
            check("fused pieces", tally_exact_round(&a), want, isa, K_SUM, xf != NULL, n,
                  omit_nan);
            check_mm(what, &mm, &r, isa, xf != NULL, n, omit_nan);
            tally_exact_merge(&p[0], &p[1]);
            tally_exact_merge(&p[2], &p[0]);
            check("fused merged", tally_exact_round(&p[2]), want, isa, K_SUM, xf != NULL, n,
                  omit_nan);
        }
    }
}

/* Checks every ISA on x against the reference; also a random split + merge. Sums: the fused
 * sum + min + max kernels too. */
/* SMALL (exact_impl.h): the one-pass sum of a short array returns 1 only with the correctly
 * rounded sum; how often each ISA's took a case (printed at the end: the path must be exercised). */
static uint64_t small_tried[4], small_taken[4];
static void check_small(const char *what, tally_isa isa, const float *xf, const double *xd, uint64_t n,
                        double want) {
    const tally_exact_kernels *k = tally_exact_kernels_for(isa);
    double got = 0;
    int ok;
    if (xf) ok = k->small_sum_f32 ? k->small_sum_f32(xf, n, &got) : 0;
    else ok = k->small_sum_f64 ? k->small_sum_f64(xd, n, &got) : 0;
    small_tried[isa]++;
    if (!ok) return;
    small_taken[isa]++;
    check(what, got, want, isa, K_SUM, xf != NULL, n, 0);
}

/* SPEC (exact_impl.h; core/exact_sum.h "Speculative compensated sums"): the speculative pass of
 * every ISA, on the whole array and on three pieces merged, decided by tally_exact_round_within
 * with tally_exact_spec_bound: an answer must be the reference's; the answered and declined
 * cases are counted per ISA (both must occur, and the must-decline families below may not
 * answer at all). */
static uint64_t spec_answered[4], spec_declined[4];
static int spec_must_decline; /* the data's exact sum is a midpoint, 0, or not finite */
static void spec_run(tally_isa isa, const float *xf, const double *xd, uint64_t lo, uint64_t hi,
                     tally_exact *a, double *D) {
    const tally_exact_kernels *k = tally_exact_kernels_for(isa);
    if (xf) k->spec_sum_f32(xf + lo, hi - lo, a, D);
    else k->spec_sum_f64(xd + lo, hi - lo, a, D);
}
static void spec_decide(const char *what, tally_isa isa, const tally_exact *a, double D, int f32,
                        uint64_t n, double want) {
    double got = 0;
    if (tally_exact_round_within(a, tally_exact_spec_bound(D), &got)) {
        spec_answered[isa]++;
        check(what, got, want, isa, K_SUM, f32, n, 0);
        if (spec_must_decline) {
            printf("MISMATCH %s isa=%s: answered %a where it must decline\n", what, isa_names[isa], got);
            failures++;
        }
    } else {
        spec_declined[isa]++;
    }
}
static void check_spec(const char *what, tally_isa isa, const float *xf, const double *xd,
                       uint64_t n, double want) {
    tally_exact a;
    double D = 0;
    tally_exact_init(&a);
    spec_run(isa, xf, xd, 0, n, &a, &D);
    spec_decide(what, isa, &a, D, xf != NULL, n, want);
    if (n >= 2) {
        uint64_t c1 = rnd() % n, c2 = rnd() % n;
        if (c1 > c2) { uint64_t t = c1; c1 = c2; c2 = t; }
        const uint64_t lo[3] = {0, c1, c2}, hi[3] = {c1, c2, n};
        tally_exact p[3];
        double d[3] = {0, 0, 0};
        for (int j = 0; j < 3; j++) {
            tally_exact_init(&p[j]);
            spec_run(isa, xf, xd, lo[j], hi[j], &p[j], &d[j]);
        }
        tally_exact_merge(&p[2], &p[0]);
        tally_exact_merge(&p[2], &p[1]);
        spec_decide(what, isa, &p[2], d[0] + d[1] + d[2], xf != NULL, n, want);
    }
}

static void check_all(const char *what, int kind, const float *xf, const double *xd, uint64_t n,
                      double mean, int omit_nan) {
    double want = reference(kind, xf, xd, n, mean, omit_nan);
    if (kind == K_SUM) check_fused(what, xf, xd, n, omit_nan, want);
    for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++) {
        if (!isa_usable(isa)) continue;
        if (kind == K_SUM && !omit_nan) check_small(what, isa, xf, xd, n, want);
        if (kind == K_SUM && !omit_nan) check_spec(what, isa, xf, xd, n, want);
        double got = run_kernel(isa, kind, xf, xd, n, mean, omit_nan, NULL);
        check(what, got, want, isa, kind, xf != NULL, n, omit_nan);
        if (n >= 2) { /* split at random points into 3 pieces, merge */
            uint64_t a = rnd() % n, b = rnd() % n;
            if (a > b) { uint64_t t = a; a = b; b = t; }
            tally_exact p[3];
            uint64_t lo[3] = {0, a, b}, hi[3] = {a, b, n};
            for (int j = 0; j < 3; j++)
                run_kernel(isa, kind, xf ? xf + lo[j] : NULL, xd ? xd + lo[j] : NULL,
                           hi[j] - lo[j], mean, omit_nan, &p[j]);
            tally_exact_merge(&p[0], &p[1]);
            tally_exact_merge(&p[2], &p[0]);
            check("merged", tally_exact_round(&p[2]), want, isa, kind, xf != NULL, n, omit_nan);
        }
    }
}

/* Every kernel-shape boundary: vectors (4, 8, 16 lanes), a step of the sets (8 to 64 elements), a
 * W32 batch (128 / 512 floats), a block (16384 floats, 8192 doubles), several blocks. */
static const uint64_t sizes[] = {0,    1,    2,    3,    7,    8,    9,    15,   16,    17,    31,
                                 32,   33,   63,   64,   65,   127,  129,  255,  256,   257,   511,
                                 512,  513,  1023, 1025, 4097, 8191, 8193, 16383, 16385, 32769, 100003};

typedef double (*gen_fn)(uint64_t i, int f32);

static void run_shape(const char *name, gen_fn gen, int kinds_mask, uint64_t extra_n) {
    uint64_t maxn = extra_n > 100003 ? extra_n : 100003;
    double *xd = malloc(maxn * sizeof *xd);
    float *xf = malloc(maxn * sizeof *xf);
    assert_non_null(xd);
    assert_non_null(xf);
    int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    for (int si = 0; si <= nsizes; si++) {
        uint64_t n = si < nsizes ? sizes[si] : extra_n;
        if (si == nsizes && extra_n == 0) break;
        for (int f32 = 0; f32 <= 1; f32++) {
            for (uint64_t i = 0; i < n; i++) {
                double v = gen(i, f32);
                if (f32) xf[i] = (float)v;
                else xd[i] = v;
            }
            for (int kind = K_SUM; kind <= K_SQ; kind++) {
                if (!(kinds_mask >> kind & 1)) continue;
                double mean = 0;
                if (kind == K_SQ && n > 0) { /* some mean near the data (any double is fine) */
                    double v = f32 ? xf[n / 2] : xd[n / 2];
                    mean = v == v && v - v == 0 ? v * 0.999 : 1.0;
                }
                for (int omit = 0; omit <= 1; omit++)
                    check_all(name, kind, f32 ? xf : NULL, f32 ? NULL : xd, n, mean, omit);
            }
        }
    }
    free(xd);
    free(xf);
    assert_int_equal(failures, 0);
}

/* ---- data shapes ---------------------------------------------------------------------------- */
static double g_price(uint64_t i, int f32) {
    (void)i; (void)f32;
    return (double)(500 + rnd() % 4500) / 100.0; /* 5.00 .. 49.99 */
}
static double g_wide(uint64_t i, int f32) { /* random sign, exponents over the whole range */
    (void)i;
    int e = f32 ? (int)(rnd() % 270) - 149 : (int)(rnd() % 2000) - 1000;
    double v = ldexp(1.0 + unif(), e);
    return rnd() & 1 ? -v : v;
}
static double g_moderate(uint64_t i, int f32) { /* 2^-20 .. 2^20, both signs */
    (void)i; (void)f32;
    double v = ldexp(1.0 + unif(), (int)(rnd() % 40) - 20);
    return rnd() & 1 ? -v : v;
}
static double cancel_prev;
static double g_cancel(uint64_t i, int f32) { /* x, -x pairs of big values, plus tiny ones */
    (void)f32;
    if (i % 2 == 1) return -cancel_prev;
    if (rnd() % 16 == 0) return ldexp(unif(), -60);
    cancel_prev = ldexp(1.0 + unif(), 40 + (int)(rnd() % 20));
    return rnd() & 1 ? cancel_prev : (cancel_prev = -cancel_prev);
}
static double g_subnormal(uint64_t i, int f32) {
    (void)i;
    double v = f32 ? ldexp((double)(rnd() % (1u << 23)), -149) : from_bits(rnd() >> 12);
    return rnd() & 1 ? -v : v;
}
static double g_huge(uint64_t i, int f32) { /* near DBL_MAX / FLT_MAX, mostly positive */
    (void)i;
    double v = f32 ? ldexp(1.0 + unif(), 120 + (int)(rnd() % 8)) : ldexp(1.0 + unif(), 1016 + (int)(rnd() % 8));
    if (f32 && v > FLT_MAX) v = FLT_MAX;
    return rnd() % 8 == 0 ? -v : v;
}
static double g_huge_cancel(uint64_t i, int f32) { /* near-DBL_MAX values whose sum is finite */
    if (i % 2 == 1) return -cancel_prev * 0.5;
    (void)f32;
    cancel_prev = f32 ? ldexp(1.0 + unif(), 126) : ldexp(1.0 + unif(), 1022);
    if (f32) cancel_prev = (float)cancel_prev;
    if (rnd() & 1) cancel_prev = -cancel_prev;
    return cancel_prev;
}
static double g_specials(uint64_t i, int f32) { /* NaN / inf / -0 sprinkled in moderate data */
    (void)i; (void)f32;
    uint64_t r = rnd() % 64;
    if (r == 0) return NAN;
    if (r == 1) return INFINITY;
    if (r == 2) return -INFINITY;
    if (r < 6) return -0.0;
    return g_moderate(i, f32);
}
static double g_nan_rare(uint64_t i, int f32) { /* one NaN in a while: omit_nan must skip */
    (void)f32;
    if (i % 1000 == 999) return NAN;
    return g_price(i, f32);
}
static double g_infs_one_sign(uint64_t i, int f32) {
    (void)f32;
    if (i % 777 == 5) return -INFINITY;
    return (double)(rnd() % 100) - 50;
}
static double g_negzero(uint64_t i, int f32) { (void)i; (void)f32; return -0.0; }
static double g_zeros(uint64_t i, int f32) {
    (void)i; (void)f32;
    return rnd() % 100 == 0 ? 0.0 : -0.0;
}
static double g_negzero_nan(uint64_t i, int f32) { /* omit_nan: -0; else NaN */
    (void)i; (void)f32;
    return rnd() % 50 == 0 ? NAN : -0.0;
}
static double g_nan_only(uint64_t i, int f32) { (void)i; (void)f32; return NAN; }
static double g_price_nan(uint64_t i, int f32) { /* sparse NaNs (missing values) */
    return rnd() % 300 == 0 ? NAN : g_price(i, f32);
}
static double g_const(uint64_t i, int f32) { /* same value everywhere: max stress on each lane */
    (void)i;
    return f32 ? (double)(float)63.99 : 63.99;
}
static double g_outliers(uint64_t i, int f32) { /* narrow data, bound grows now and then */
    (void)f32;
    if (rnd() % 5000 == 0) return ldexp(1.0 + unif(), (int)(i / 1000 % 90));
    if (rnd() % 7000 == 0) return ldexp(unif(), -90);
    return g_price(i, f32);
}
static double g_far(uint64_t i, int f32) { /* a huge value, then many tiny ones of one binade:
                                              * the leftovers pile into one exponent bin */
    (void)f32;
    if (i % 4096 == 0) return (i / 4096) % 2 ? -0x1.8p100 : 0x1.8p100; /* cancel in pairs */
    double v = ldexp(1.0 + unif(), -50);
    return rnd() % 3 ? v : -v;
}
static double g_ints(uint64_t i, int f32) {
    (void)i; (void)f32;
    return (double)((int64_t)(rnd() % 2000001) - 1000000);
}

/* SMALL's sample (the first 16 elements) sees price-like data; the rest mostly too, but now and
 * then an element that breaks the sample's grid: a finer lowest bit, a larger magnitude (up to
 * overflow of an accumulator), a huge pair that cancels, a tie, inf, NaN, a subnormal. */
static double g_sample_lies(uint64_t i, int f32) {
    static double pend;
    if (pend != 0) {
        double v = pend;
        pend = 0;
        return v;
    }
    double p = (double)(500 + rnd() % 4500) / 100.0;
    if (f32) p = (float)p;
    if (i < 16 || rnd() % 64) return p;
    switch (rnd() % 10) {
    case 0: return p + ldexp(1.0, f32 ? -30 : -70);                      /* finer lowest bit */
    case 1: return ldexp(1.0 + unif(), 10 + (int)(rnd() % 40));          /* larger */
    case 2: pend = f32 ? -ldexp(1.0, 120) : -ldexp(1.0, 1020); return -pend; /* huge pair */
    case 3: return f32 ? FLT_MAX : DBL_MAX;                              /* overflows S */
    case 4: return ldexp(1.0, f32 ? -149 : -1074);                       /* subnormal */
    case 5: return rnd() & 1 ? INFINITY : -INFINITY;
    case 6: return NAN;
    case 7: return -p;
    case 8: return ldexp(3.0, -(int)(rnd() % 60));                      /* ties near the grids */
    default: return ldexp(1.0 + unif(), -(int)(rnd() % 120));
    }
}
/* Sums whose 4 KiB of data stay near a grid boundary of SMALL's levels: many equal values (the
 * sample's max) plus a little below and above. */
static double g_grid_edge(uint64_t i, int f32) {
    (void)i;
    double b = f32 ? 0x1.fffffep5 : 0x1.fffffffffffffp5;
    uint64_t r = rnd() % 8;
    if (r == 0) return -b;
    if (r == 1) return ldexp(1.0, -(int)(rnd() % (f32 ? 40 : 90)));
    return b;
}
/* The wrap families' runs of 1,024 (w32w_wrap, w64w_wrap, w64d_wrap): v itself, alternating
 * signs (the float sums near 0, the lanes still wrapping), -v (the float sums below the true
 * sums as often as above), then top, the largest value below the conversion's limit. */
static double wrap_run(uint64_t i, double v, double top) {
    switch ((i / 1024) % 4) {
    case 0: return v;
    case 1: return i & 1 ? -v : v;
    case 2: return -v;
    default: return top;
    }
}
/* SMALL's W32W (f32): a sample in [0.5, 1) (so y = x * 2^30), then elements whose y lie just
 * below the conversion's limit 2^31: every int32 lane wraps many times and only the float sums
 * beside the lanes say by how many multiples of 2^32. In runs of 1,024: all positive, alternating
 * signs (the float sums near 0, the lanes still wrapping), all negative (the float sums below the
 * true sums as often as above), the largest float below 2 (y = 2^31 - 2^7); at i = 16383 one
 * 2.0 (y = 2^31: invalid, so W32W must decline the call of 16,384; W64W then takes it). */
static double g_w32w_wrap(uint64_t i, int f32) {
    (void)f32;
    if (i < 16) return (float)(0.5 + 0.4999 * unif());
    if (i == 16383) return 2.0;
    const double v = (float)(1.0 + 0.9999999 * unif());
    return wrap_run(i, v, 0x1.fffffep0);
}
/* SMALL's W64W (f32): the sample in [1, 2) but for one element near 2^-35 (a lowest bit too fine
 * for W32W's 31 bits, within W64W's sample limit of 52; so y = x * 2^59), then elements in [8, 16), whose y lie in [2^62, 2^63):
 * every int64 lane wraps every other add and only the float sums (of the x, scaled afterwards)
 * say by how many multiples of 2^64. Runs of 1,024 as w32w_wrap's, the largest float below 16
 * (y = 2^63 - 2^39), and at i = 16383 one 16.0 (y = 2^63: invalid, so the call of 16,384 must
 * decline). */
static double g_w64w_wrap(uint64_t i, int f32) {
    (void)f32;
    if (i == 5) return ldexp(1.0 + (double)(rnd() % 16) / 16.0, -35); /* lowest bit >= 2^-39 */
    if (i < 16) return (float)(1.0 + 0.9999 * unif());
    if (i == 16383) return 16.0;
    const double v = (float)(8.0 + 7.9999999 * unif());
    return wrap_run(i, v, 0x1.fffffep3);
}
/* SMALL's W64D (f64): a sample in [1, 2) (so y = x * 2^61), then doubles in [2, 4), whose y
 * lie in [2^62, 2^63): every int64 lane wraps every other add and only the double sums beside
 * the lanes say by how many multiples of 2^64. Runs of 1,024 as w32w_wrap's, the largest double
 * below 4 (y = 2^63 - 2^10), and at i = 8191 one 4.0 (y = 2^63: invalid, so the call of 8,192
 * must decline). (Its f32 runs: the same values rounded to floats.) */
static double g_w64d_wrap(uint64_t i, int f32) {
    (void)f32;
    if (i < 16) return 1.0 + 0.9999 * unif();
    if (i == 8191) return 4.0;
    const double v = 2.0 + 1.9999999 * unif();
    return wrap_run(i, v, 0x1.fffffffffffffp1);
}
/* SMALL's SPEC (the speculative compensated sum, f64). Element i goes to lane i % 32. Lane 0
 * starts with 2^80 and lane 1 with -2^80 (they cancel when the lanes merge), lanes 2..31 with a
 * value in [1, 2); then lane 0 takes runs of t near 2^20, e near 2^-40, -t, the other lanes
 * zeros. Under 2^80 each t and e go whole into lane 0's C, which rounds e away next to t and
 * comes back to 0 with -t: the e (far above the exact sum's ulp, ~2^-47) are lost, and only D,
 * the sum of the |C| seen (~2^20 each time), bounds that, so a D not fed (or E = 0) answers a
 * wrong rounding, and the right bound declines. */
static double spec_hist[1 << 17];
static double g_spec_cancel(uint64_t i, int f32) {
    (void)f32;
    const uint64_t lane = i % 32, p = i / 32, mask = (1u << 17) - 1;
    double v;
    if (p == 0) v = lane == 0 ? 0x1p80 : lane == 1 ? -0x1p80 : 1.0 + unif();
    else if (lane != 0) v = 0.0;
    else if (p % 3 == 1) v = ldexp(1.0 + unif(), 20);
    else if (p % 3 == 2) v = ldexp(1.0 + unif(), -40);
    else v = -spec_hist[(i - 64) & mask];
    spec_hist[i & mask] = v;
    return v;
}
/* SMALL's SPECF (a bias 2^12 above the sample's max under each lane's sum, the flags as the
 * check). specf_above: a sample over [2^-100, 2) (too wide for W32 and TWO, so SPECF runs with
 * its bias near 2^(13 + T + 3)), then [1, 2) values with one near +-2^40 in every 128 and its
 * negation 32 later in the same lane (far above the bias: q = s - S inexact, the flag raised, so
 * the call must fall back; S comes back near B, so only the flag tells, and without its check
 * the sums come out wrong). specf_cancel: lanes 0 and 1 start with +-2^68 (so the bias is near
 * 2^91, its ulp 2^39), lane 2 with 2^39 (on that grid: it stays out of C) and lane 15 with a
 * value near 2^-20 (a fine bit in the sample, so that no exact method takes the array): a sum
 * near 2^39, ulp 2^-13. Then lane 0 takes runs of t near 2^38 (C gets t - 2^39, of magnitude
 * 2^37..2^38), e near 2^-17 (below half of C's ulp: lost when added), -t, the other lanes
 * zeros. Over the 85 runs of 8,192 elements the e lost come to several ulps of the sum: more
 * than max |C| * 2^-53 ~ 2^-15, less than k * max |C| * 2^-53: a bound without k answers a
 * wrong rounding, the right bound declines. */
static double specf_big;
static double g_specf_above(uint64_t i, int f32) {
    if (i < 16) return i & 1 ? ldexp(1.0 + unif(), -100) : 1.0 + unif();
    if (i % 128 == 16) { /* and its negation 32 later, in the same lane: S comes back to B */
        specf_big = (rnd() & 1 ? 1 : -1) * ldexp(1.0 + unif(), 40);
        if (f32) specf_big = (float)specf_big;
        return specf_big;
    }
    if (i % 128 == 48) return -specf_big;
    return 1.0 + unif();
}
static double specf_hist[1 << 17];
static double g_specf_cancel(uint64_t i, int f32) {
    const uint64_t lane = i % 32, p = i / 32, mask = (1u << 17) - 1;
    double v;
    if (p == 0) v = lane == 0 ? 0x1p68 : lane == 1 ? -0x1p68 : lane == 2 ? 0x1p39 : lane == 15 ? ldexp(1.0 + unif(), -20) : 0.0;
    else if (lane != 0) v = 0.0;
    else if (p % 3 == 1) v = ldexp(1.0 + 0.5 * unif(), 38);
    else if (p % 3 == 2) v = ldexp(1.0 + 0.98 * unif(), -17);
    else v = -specf_hist[(i - 64) & mask];
    if (f32) v = (float)v;
    specf_hist[i & mask] = v;
    return v;
}
static void test_specf_small(void **s) {
    (void)s;
    const uint64_t keep = rng_state;
    run_shape("specf_above", g_specf_above, 1, 8192);
    run_shape("specf_cancel", g_specf_cancel, 1, 8192);
    rng_state = keep;
}
/* These leave the generator's state as they found it: the later tests' data stay the same. */
static void test_sample_lies(void **s) {
    (void)s;
    const uint64_t keep = rng_state;
    run_shape("sample_lies", g_sample_lies, 1, 8192);
    rng_state = keep;
}
static void test_w32w_wrap(void **s) {
    (void)s;
    const uint64_t keep = rng_state;
    run_shape("w32w_wrap", g_w32w_wrap, 1, 16384);
    rng_state = keep;
}
static void test_w64d_wrap(void **s) {
    (void)s;
    const uint64_t keep = rng_state;
    run_shape("w64d_wrap", g_w64d_wrap, 1, 8192);
    rng_state = keep;
}
static void test_w64w_wrap(void **s) {
    (void)s;
    const uint64_t keep = rng_state;
    run_shape("w64w_wrap", g_w64w_wrap, 1, 16384);
    rng_state = keep;
}
static void test_spec_cancel(void **s) {
    (void)s;
    const uint64_t keep = rng_state;
    run_shape("spec_cancel", g_spec_cancel, 1, 8192);
    rng_state = keep;
}
static void test_grid_edge(void **s) {
    (void)s;
    const uint64_t keep = rng_state;
    run_shape("grid_edge", g_grid_edge, 1, 16384);
    rng_state = keep;
}
static void test_price(void **s) { (void)s; run_shape("price", g_price, 3, 1000003); }
static void test_wide(void **s) { (void)s; run_shape("wide", g_wide, 1, 0); }
static void test_moderate(void **s) { (void)s; run_shape("moderate", g_moderate, 3, 300001); }
static void test_cancel(void **s) { (void)s; run_shape("cancel", g_cancel, 3, 0); }
static void test_subnormal(void **s) { (void)s; run_shape("subnormal", g_subnormal, 1, 0); }
static void test_huge(void **s) { (void)s; run_shape("huge", g_huge, 1, 0); }
static void test_huge_cancel(void **s) { (void)s; run_shape("huge_cancel", g_huge_cancel, 1, 0); }
static void test_specials(void **s) { (void)s; run_shape("specials", g_specials, 3, 0); }
static void test_nan_rare(void **s) { (void)s; run_shape("nan_rare", g_nan_rare, 3, 0); }
static void test_infs(void **s) { (void)s; run_shape("inf_one_sign", g_infs_one_sign, 3, 0); }
static void test_negzero(void **s) { (void)s; run_shape("negzero", g_negzero, 3, 0); }
static void test_zeros(void **s) { (void)s; run_shape("zeros", g_zeros, 3, 0); }
static void test_const(void **s) { (void)s; run_shape("const", g_const, 3, 1 << 20); }
static void test_outliers(void **s) { (void)s; run_shape("outliers", g_outliers, 3, 0); }
static void test_negzero_nan(void **s) { (void)s; run_shape("negzero_nan", g_negzero_nan, 3, 0); }
static void test_nan_only(void **s) { (void)s; run_shape("nan_only", g_nan_only, 3, 0); }
static void test_price_nan(void **s) { (void)s; run_shape("price_nan", g_price_nan, 3, 0); }
static void test_far(void **s) { (void)s; run_shape("far", g_far, 3, 400001); }
static void test_ints(void **s) { (void)s; run_shape("ints", g_ints, 3, 0); }

static double g_wide_zeros(uint64_t i, int f32) { /* wide data with zeros and subnormals (bins) */
    uint64_t r = rnd() % 16;
    if (r == 0) return rnd() & 1 ? 0.0 : -0.0;
    if (r == 1) return (rnd() & 1 ? 1 : -1) * (f32 ? ldexp((double)(rnd() % 100), -149) : 0x1p-1074 * (double)(rnd() % 1000));
    return g_wide(i, f32);
}
static double g_wide_nan(uint64_t i, int f32) { /* wide data, a NaN now and then */
    return rnd() % 700 == 0 ? NAN : g_wide(i, f32);
}
static double g_bin_overflow(uint64_t i, int f32) { /* one sign and exponent, many times, in wide
                                                      * blocks: a bin overflows and spills */
    if (i % 1000 == 0) return f32 ? 0x1p100 : 0x1p900;
    if (i % 1000 == 1) return f32 ? -0x1p-100 : -0x1p-900;
    return ldexp(1.0 + (double)(rnd() % 1024) / 1024.0 + 0.999, 3); /* mantissas near 2 */
}
static double g_phases(uint64_t i, int f32) { /* the character changes every 20000 elements */
    switch (i / 20000 % 4) {
    case 0: return g_price(i, f32);
    case 1: return g_wide(i, f32);
    case 2: return g_moderate(i, f32);
    default: return (double)(rnd() % 1000); /* integers: few significant bits */
    }
}
static double g_growing(uint64_t i, int f32) { /* magnitudes grow: the bound is raised often */
    double v = ldexp(1.0 + unif(), (int)(i / 3000) - 30);
    if (f32) v = (float)v;
    return rnd() & 1 ? v : -v;
}
static double g_w32_edge(uint64_t i, int f32) { /* f32 spans of 27 and 28 bits: W32 or not */
    (void)f32;
    uint64_t blk = i / 16384;
    if (i % 997 == 0) return ldexp(1.0, (int)(blk % 2) ? -22 : -21); /* lowest bit 2^-21 / 2^-22 */
    return (double)(float)(32.0 + 31.99 * unif());                    /* max below 2^6 */
}
static double g_w32_scale(uint64_t i, int f32) { /* f32 data near the W32 scale limits */
    (void)f32;
    int e = (i / 16384) % 2 ? 120 : -110;
    return (rnd() & 1 ? 1 : -1) * (double)(float)ldexp(1.0 + unif(), e + (int)(rnd() % 4));
}

static double g_bin_count(uint64_t i, int f32) { /* f32 values at the top of one binade in wide
                                                   * blocks: > 2^17 adds into one f32 bin */
    (void)f32;
    if (i % 1000 >= 997) return i % 1000 == 997 ? 0x1p-100 : i % 1000 == 998 ? 0x1p100 : -0x1p100;
    return (double)(float)(16.0 - ldexp((double)(rnd() % 64), -19));
}
static double g_wide_cancel(uint64_t i, int f32) { /* x, -x over the whole range, plus zeros and
                                                     * subnormals: the exact sum is tiny */
    if (i % 2 == 1) return -cancel_prev;
    uint64_t r = rnd() % 8;
    if (r == 0) return cancel_prev = (rnd() & 1 ? 0.0 : -0.0);
    if (r == 1) return cancel_prev = 0, f32 ? ldexp((double)(rnd() % 1000), -149) : 0x1p-1074 * (double)(rnd() % 100000);
    return cancel_prev = g_wide(i, f32);
}

static void test_wide_zeros(void **s) { (void)s; run_shape("wide_zeros", g_wide_zeros, 1, 100003); }
static void test_wide_nan(void **s) { (void)s; run_shape("wide_nan", g_wide_nan, 1, 0); }
/* Wide data with one inf (arrays past 20001 elements) or two of opposite signs (past 60001) far
 * into the call: in an f32 block and f64 blocks that the bins take without a stats pass
 * (bins32_try, bins64_try), where the block's prep meets the inf itself. */
static double g_wide_late(uint64_t i, int f32) {
    if (i % 80000 == 20001) return INFINITY;
    if (i % 80000 == 60001) return -INFINITY;
    return g_wide(i, f32);
}
static void test_wide_late(void **s) { (void)s; run_shape("wide_late", g_wide_late, 1, 0); }
/* The levels' bound: values far above the running bound 2^m, in a block that runs the levels
 * optimistically, must fail the block (its max is checked against the bound) and not go through.
 * Data over 2^-29..2^-9 with their low bits (two levels; the first element fixes the sample's max,
 * so the levels start at E = 9, C = 1.5 * 2^9, and the last blocks were the same).
 * lev_bound: in every block after the first the last two elements are +H and -H, H = 2^20 + a
 * low bit: added anyway, H takes a level-0 accumulator out of its binade, and without AVX-512's
 * suppressed exceptions q = s - S rounds there unseen (no residue is left for the last level).
 * lev_bound_flush (AVX-512, where that q's rounding raises the flag): V = 230.25 = 0.45 * 2^9 in
 * the 8 lanes of the last 8 elements of block 1, -V the same in block 9. Each accumulator stays in
 * its binade and every add is exact, but the lanes' S - C reach 0.45 * 2^E instead of at most
 * 2^(E-2), and the flush's plain sum of 8 lanes (exact only below 2^(E+1)) rounds: bits lost.
 * Both pairs cancel, so the exact sum stays small and any lost bit shows. */
static double lev_bound_base(uint64_t i, int f32) {
    double v = i == 0 ? 0x1.fp-9 : ldexp(1.0 + unif(), -9 - (int)(rnd() % 20));
    if (f32) v = (float)v;
    return rnd() & 1 || i == 0 ? v : -v;
}
static double g_lev_bound(uint64_t i, int f32) {
    const uint64_t blk = f32 ? 16384 : 8192, r = i % blk;
    const double H = f32 ? 0x1p20 + 0x1p-3 : 0x1p20 + 0x1p-32;
    if (i >= blk && r == blk - 1) return H;
    if (i >= blk && r == blk - 2) return -H;
    return lev_bound_base(i, f32);
}
static double g_lev_bound_flush(uint64_t i, int f32) {
    const uint64_t blk = f32 ? 16384 : 8192, r = i % blk, b = i / blk;
    if ((b == 1 || b == 9) && r >= blk - 8) return b == 1 ? 230.25 : -230.25;
    return lev_bound_base(i, f32);
}
static void test_lev_bound(void **s) { (void)s; run_shape("lev_bound", g_lev_bound, 1, 5 * 16384); }
static void test_lev_bound_flush(void **s) {
    (void)s;
    run_shape("lev_bound_flush", g_lev_bound_flush, 1, 10 * 16384);
}
static void test_bin_overflow(void **s) { (void)s; run_shape("bin_overflow", g_bin_overflow, 1, 60001); }
static void test_bin_count(void **s) { (void)s; run_shape("bin_count", g_bin_count, 1, 300001); }
static void test_wide_cancel(void **s) { (void)s; run_shape("wide_cancel", g_wide_cancel, 1, 100003); }
static void test_wide_long(void **s) { (void)s; run_shape("wide_long", g_wide, 1, 300001); } /* f32 bin counts spill */
static void test_phases(void **s) { (void)s; run_shape("phases", g_phases, 3, 400001); }
/* Squares past DBL_MAX: their exact sum is +inf, whatever the reference's width (two squares of
 * 2^582 reach its old sign bit), and every kernel says so. */
static void test_huge_squares(void **s) {
    (void)s;
    const double xs[][3] = {{0x1p582, 0x1p582, 0}, {0x1p1000, -0x1p1023, 0x1p600}, {-0x1p583, 1.0, 0x1p583}};
    for (int k = 0; k < 3; k++) {
        assert_true(reference(K_SQ, NULL, xs[k], 3, 0.0, 0) == INFINITY);
        check_all("huge squares", K_SQ, NULL, xs[k], 3, 0.0, 0);
    }
    assert_int_equal(failures, 0);
}
static void test_growing(void **s) { (void)s; run_shape("growing", g_growing, 3, 200003); }
static void test_w32_edge(void **s) { (void)s; run_shape("w32_edge", g_w32_edge, 1, 65536); }
static void test_w32_scale(void **s) { (void)s; run_shape("w32_scale", g_w32_scale, 1, 65536); }

/* Each method really runs on the data meant for it (the counters of exact_kernels.h), so the
 * tests above cover W32, LEV and BINS on every ISA that has them. */
static void test_methods(void **s) {
    (void)s;
    enum { N = 50000 };
    static float xf[N];
    static double xd[N];
    struct { gen_fn gen; int f32; int want; } cases[] = {
        {g_price, 1, 0}, {g_price, 0, 1}, {g_moderate, 1, 1}, {g_moderate, 0, 1},
        {g_wide, 1, 2},  {g_wide, 0, 2},  {g_specials, 0, 3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int i = 0; i < N; i++) {
            double v = cases[c].gen((uint64_t)i, cases[c].f32);
            xf[i] = (float)v;
            xd[i] = v;
        }
        for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++) {
            if (!isa_usable(isa)) continue;
            int want = cases[c].want;
            if (want == 0 && isa == TALLY_ISA_SCALAR) want = 1; /* no W32 in the scalar kernels */
            uint64_t cnt[4];
            tally_exact_method_counts(cnt, 1);
            double got = run_kernel(isa, K_SUM, cases[c].f32 ? xf : NULL, cases[c].f32 ? NULL : xd,
                                    N, 0, 0, NULL);
            tally_exact_method_counts(cnt, 1);
            check("methods", got, reference(K_SUM, cases[c].f32 ? xf : NULL, cases[c].f32 ? NULL : xd, N, 0, 0),
                  isa, K_SUM, cases[c].f32, N, 0);
            if (cnt[want] < N / 2 || (want != 3 && cnt[3])) { /* finite data never go SLOW */
                printf("METHOD case %zu isa=%s: W32/LEV/BINS/SLOW %llu/%llu/%llu/%llu, want most by %d\n",
                       c, isa_names[isa], (unsigned long long)cnt[0], (unsigned long long)cnt[1],
                       (unsigned long long)cnt[2], (unsigned long long)cnt[3], want);
                failures++;
            }
        }
    }
    assert_int_equal(failures, 0);
}

/* BINS's probe: a plain sum in BINS adds its blocks without stats and, on the 8th BINS block of
 * a call (then every 16th), takes the block's stats to choose the method of the blocks after it.
 * Blocks 0-6 wide, 7 and 8 price-like, 9-11 wide (blocks of 16384 floats / 8192 doubles): the
 * probe on block 7 must leave BINS, block 8 take the cheaper method (W32 for f32 where the ISA has
 * it, else LEV) and block 9 fail it and go back; every sum exact, split and merged too. */
static double g_probe(uint64_t i, int f32) {
    const uint64_t p = i / (f32 ? 16384 : 8192) % 10;
    return p == 7 || p == 8 ? g_price(i, f32) : g_wide(i, f32);
}
static void test_bins_probe(void **s) {
    (void)s;
    for (int f32 = 0; f32 <= 1; f32++) {
        const uint64_t blk = f32 ? 16384 : 8192, n = 12 * blk;
        float *xf = malloc(n * sizeof *xf);
        double *xd = malloc(n * sizeof *xd);
        assert_non_null(xf);
        assert_non_null(xd);
        for (uint64_t i = 0; i < n; i++) {
            const double v = g_probe(i, f32);
            xf[i] = (float)v;
            xd[i] = v;
        }
        check_all("bins_probe", K_SUM, f32 ? xf : NULL, f32 ? NULL : xd, n, 0, 0);
        for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++) {
            if (!isa_usable(isa)) continue;
            const int cheap = f32 && isa != TALLY_ISA_SCALAR ? 0 : 1; /* W32 : LEV */
            uint64_t cnt[4];
            tally_exact_method_counts(cnt, 1);
            (void)run_kernel(isa, K_SUM, f32 ? xf : NULL, f32 ? NULL : xd, n, 0, 0, NULL);
            tally_exact_method_counts(cnt, 1);
            if (cnt[cheap] < blk || cnt[2] < 8 * blk) {
                printf("PROBE f32=%d isa=%s: W32/LEV/BINS/SLOW %llu/%llu/%llu/%llu, want a block by %d\n",
                       f32, isa_names[isa], (unsigned long long)cnt[0], (unsigned long long)cnt[1],
                       (unsigned long long)cnt[2], (unsigned long long)cnt[3], cheap);
                failures++;
            }
        }
        free(xf);
        free(xd);
    }
    assert_int_equal(failures, 0);
}

/* The caller's floating-point environment cannot change a result, and the kernels leave it as
 * they found it (flags included). */
static void test_fenv(void **s) {
    (void)s;
    enum { N = 30000 };
    static float xf[N];
    static double xd[N];
    for (int i = 0; i < N; i++) {
        double v = i % 3 ? g_price(0, 0) : g_subnormal(0, 0) * (i % 2 ? 1 : 0x1p40);
        xd[i] = v;
        xf[i] = (float)g_moderate(0, 1);
    }
    double wd = reference(K_SUM, NULL, xd, N, 0, 0), wf = reference(K_SUM, xf, NULL, N, 0, 0);
    double wq = reference(K_SQ, NULL, xd, N, 1.25, 0);
    const int modes[] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    for (int m = 0; m < 4; m++)
        for (int ftz = 0; ftz <= 1; ftz++)
            for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++) {
                if (!isa_usable(isa)) continue;
                fesetround(modes[m]);
#if defined(__x86_64__)
                if (ftz) _mm_setcsr(_mm_getcsr() | 0x8040); /* flush-to-zero, denormals-are-zero */
#endif
                feclearexcept(FE_ALL_EXCEPT);
                feraiseexcept(FE_OVERFLOW);
                fenv_t before;
                fegetenv(&before);
#if defined(__x86_64__)
                unsigned csr = _mm_getcsr();
#endif
                double gd = run_kernel(isa, K_SUM, NULL, xd, N, 0, 0, NULL);
                double gf = run_kernel(isa, K_SUM, xf, NULL, N, 0, 0, NULL);
                double gq = run_kernel(isa, K_SQ, NULL, xd, N, 1.25, 0, NULL);
                int kept = fetestexcept(FE_ALL_EXCEPT) == FE_OVERFLOW && fegetround() == modes[m];
#if defined(__x86_64__)
                kept = kept && _mm_getcsr() == csr;
                _mm_setcsr(_mm_getcsr() & ~0x8040u);
#endif
                fesetround(FE_TONEAREST);
                feclearexcept(FE_ALL_EXCEPT);
                check("fenv f64", gd, wd, isa, K_SUM, 0, N, 0);
                check("fenv f32", gf, wf, isa, K_SUM, 1, N, 0);
                check("fenv sq", gq, wq, isa, K_SQ, 0, N, 0);
                if (!kept) {
                    printf("MISMATCH fenv isa=%s: the caller's environment changed\n", isa_names[isa]);
                    failures++;
                }
            }
    assert_int_equal(failures, 0);
}

/* SMALL's sample runs before the MXCSR is saved: it must raise no flag, whatever the first
 * elements are (a float-to-double conversion raises invalid on a signalling NaN; subnormals
 * too are placed in and after the sample). Each short array leaves the caller's MXCSR as it was (a flag raised before the
 * call included), and a taken result is the correctly rounded sum. */
static void test_small_fenv(void **s) {
    (void)s;
    enum { N = 4096 };
    static float xf[N];
    static double xd[N];
    const uint32_t snan32 = 0x7fa00000u, sub32 = 0x00000301u;
    const uint64_t snan64 = 0x7ff4000000000000ull, sub64 = 0x0000000000012345ull;
    const uint64_t sizes[] = {1, 2, 15, 16, 17, 1024, N};
    for (int c = 0; c < 6; c++) /* where the odd element sits: 0, 7, 15 (in the sample), 16, n-1, n/2 */
        for (int odd = 0; odd < 3; odd++)          /* signalling NaN, subnormal, none */
            for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
                const uint64_t n = sizes[z];
                for (uint64_t i = 0; i < n; i++) {
                    xf[i] = (float)g_price(i, 1);
                    xd[i] = g_price(i, 0);
                }
                const uint64_t at[] = {0, 7, 15, 16, n - 1, n / 2};
                const uint64_t j = at[c] < n ? at[c] : n - 1;
                if (odd == 0) {
                    memcpy(&xf[j], &snan32, 4);
                    memcpy(&xd[j], &snan64, 8);
                } else if (odd == 1) {
                    memcpy(&xf[j], &sub32, 4);
                    memcpy(&xd[j], &sub64, 8);
                }
                const double wf = odd ? reference(K_SUM, xf, NULL, n, 0, 0) : 0;
                const double wd = odd ? reference(K_SUM, NULL, xd, n, 0, 0) : 0;
                for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++) {
                    if (!isa_usable(isa)) continue;
                    const tally_exact_kernels *k = tally_exact_kernels_for(isa);
                    for (int f32 = 0; f32 <= 1; f32++) {
                        int (*fn)(const void *, uint64_t, double *) =
                            f32 ? (int (*)(const void *, uint64_t, double *))k->small_sum_f32
                                : (int (*)(const void *, uint64_t, double *))k->small_sum_f64;
                        if (!fn) continue;
                        feclearexcept(FE_ALL_EXCEPT);
                        feraiseexcept(FE_OVERFLOW);
#if defined(__x86_64__)
                        const unsigned csr = _mm_getcsr();
#endif
                        double got = 0;
                        const int ok = fn(f32 ? (const void *)xf : (const void *)xd, n, &got);
                        int kept = fetestexcept(FE_ALL_EXCEPT) == FE_OVERFLOW;
#if defined(__x86_64__)
                        kept = kept && _mm_getcsr() == csr;
#endif
                        feclearexcept(FE_ALL_EXCEPT);
                        if (!kept) {
                            printf("MISMATCH small fenv isa=%s %s n=%llu odd=%d at=%llu: the caller's "
                                   "flags changed\n", isa_names[isa], f32 ? "f32" : "f64",
                                   (unsigned long long)n, odd, (unsigned long long)j);
                            failures++;
                        }
                        if (ok && odd == 0) {
                            printf("MISMATCH small fenv isa=%s: took an array with a NaN\n", isa_names[isa]);
                            failures++;
                        }
                        if (ok && odd) check("small fenv", got, f32 ? wf : wd, isa, K_SUM, f32, n, 0);
                    }
                }
            }
    assert_int_equal(failures, 0);
}

/* ---- SPEC's must-decline families --------------------------------------------------------------
 * midpoint: every lane first gets a big value (+1.0 at i < 64, taken back by -1.0 at the last 64
 * positions), then tiny values t of random bits (2^-60 .. 2^-80) and, later, each one's -t, and
 * 1.0 + 2^-53 in the middle: the exact sum is the midpoint 1 + 2^-53 (rounds to 1.0, ties to
 * even), while the lanes' c (which collect the t's beside s ~ 1) round on the way: V misses the
 * midpoint by a little, to either side, and only the bound keeps the answer from being
 * 1 + 2^-52. zero: the same without the 1 + 2^-53 (exact sum 0). tiny: the midpoint family with
 * everything scaled by 2^-1000 (its c reach the subnormals). overflow: DBL_MAX / FLT_MAX-sized
 * values whose lanes' partial sums overflow (and whose exact sum may or may not). */
static void fill_spec_family(int fam, float *xf, double *xd, uint64_t n, int f32) {
    double *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (uint64_t i = 0; i < n; i++) v[i] = 0;
    /* [0, 64): +1; [64, 64 + h): t's; [64 + h, 64 + 2h): their negations, permuted (7919 is a
     * prime above every h here); then 1.0 and 2^-53; [n - 64, n): -1 */
    const uint64_t h = (n - 128 - 2) / 2;
    for (uint64_t i = 0; i < 64; i++) {
        v[i] = 1.0;
        v[n - 64 + i] = -1.0;
    }
    for (uint64_t i = 0; i < h; i++) {
        double t = ldexp(1.0 + unif(), -60 - (int)(rnd() % 20)) * ((rnd() & 1) ? -1 : 1);
        if (f32) t = (float)t;
        v[64 + i] = t;
    }
    for (uint64_t i = 0; i < h; i++) v[64 + h + (i * 7919) % h] = -v[64 + i];
    if (fam == 0 || fam == 2) { /* the midpoint 1 + 2^-53 (2^-53 is a float too) */
        v[64 + 2 * h] = 1.0;
        v[64 + 2 * h + 1] = 0x1p-53;
    }
    if (fam == 2)
        for (uint64_t i = 0; i < n; i++) v[i] = ldexp(v[i], -1000);
    if (fam == 3)
        for (uint64_t i = 0; i < n; i++)
            v[i] = (f32 ? 0x1.fp127 : 0x1.fp1023) * ((i % 3 == 2) ? -1 : 1);
    for (uint64_t i = 0; i < n; i++) {
        if (f32) xf[i] = (float)v[i];
        else xd[i] = v[i];
    }
    free(v);
}
static void test_spec_decline(void **state) {
    (void)state;
    const uint64_t ns[] = {200, 1001, 4099, 70001};
    float *xf = malloc(70001 * sizeof *xf);
    double *xd = malloc(70001 * sizeof *xd);
    assert_non_null(xf);
    assert_non_null(xd);
    for (int fam = 0; fam < 4; fam++)
        for (int f32 = 0; f32 <= 1; f32++)
            for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                const uint64_t n = ns[ni];
                if (f32 && fam == 2) continue; /* f32 cannot hold 2^-1000 */
                fill_spec_family(fam, xf, xd, n, f32);
                const double want = reference(K_SUM, f32 ? xf : NULL, f32 ? NULL : xd, n, 0, 0);
                if (fam == 0) assert_true(same(want, 1.0));
                if (fam == 1) assert_true(same(want, 0.0));
                if (fam == 2) assert_true(same(want, 0x1p-1000));
                /* fam 3 overflows in the lanes; its exact sum may still be finite */
                spec_must_decline = fam != 3;
                for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++)
                    if (isa_usable(isa)) check_spec("spec_decline", isa, f32 ? xf : NULL,
                                                    f32 ? NULL : xd, n, want);
                spec_must_decline = 0;
            }
    free(xf);
    free(xd);
    assert_int_equal(failures, 0);
}
/* The same through tally_reduce (the threaded speculative pass, src/cpu/reduce.c): segments of
 * 4096 laid out as fill_spec_family's (each sums to 0 exactly, and the lanes see s ~ 1 beside
 * tiny t's) or zeros, then 1.0 and 2^-53 (midpoint) or nothing more (zero). Every ISA, 1..3
 * threads, also with small interleaved chunks: the answer must be the reference's and every one
 * of these sums must have declined to the exact path. */
static void test_spec_api(void **state) {
    (void)state;
    enum { L = 4096, SEGS = 100, N = L * SEGS + 2 };
    float *xf = malloc(N * sizeof *xf);
    double *xd = malloc(N * sizeof *xd);
    assert_non_null(xf);
    assert_non_null(xd);
    for (int fam = 0; fam <= 1; fam++)
        for (int f32 = 0; f32 <= 1; f32++) {
            /* only the segments in chunks 1, 7, 13, .. of 64 KiB (the interleaved runs give
             * them to thread 1 of 2 or 3) carry data, the others are zeros: a thread whose D
             * went unmerged would leave E too small, and the test would see it */
            for (int sg = 0; sg < SEGS; sg++) {
                const int chunk = sg * L * (f32 ? 4 : 8) / 65536;
                if (chunk % 6 == 1) {
                    fill_spec_family(1, xf + (size_t)sg * L, xd + (size_t)sg * L, L, f32);
                } else {
                    memset(xf + (size_t)sg * L, 0, L * sizeof *xf);
                    memset(xd + (size_t)sg * L, 0, L * sizeof *xd);
                }
            }
            const double tail[2] = {fam == 0 ? 1.0 : 0.0, fam == 0 ? 0x1p-53 : 0.0};
            for (int i = 0; i < 2; i++) {
                xf[L * SEGS + i] = (float)tail[i];
                xd[L * SEGS + i] = tail[i];
            }
            const double want = reference(K_SUM, f32 ? xf : NULL, f32 ? NULL : xd, N, 0, 0);
            assert_true(same(want, fam == 0 ? 1.0 : 0.0));
            for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++) {
                if (!isa_usable(isa)) continue;
                for (int th = 1; th <= 3; th++)
                    for (int small_chunks = 0; small_chunks <= 1; small_chunks++) {
                        tally_options o;
                        tally_options_init(&o);
                        o.backend = TALLY_BACKEND_CPU;
                        o.threads = th;
                        o.isa = isa;
                        tally_context *ctx;
                        assert_int_equal(tally_create(&ctx, &o), TALLY_OK);
                        if (small_chunks) tally_cpu_set_reduce_chunks(ctx, 65536, 1);
                        uint64_t cnt[2];
                        tally_cpu_spec_counts(cnt, 1);
                        tally_result r;
                        assert_int_equal(tally_reduce(ctx, TALLY_SUM, f32 ? TALLY_F32 : TALLY_F64,
                                                      f32 ? (const void *)xf : (const void *)xd, N,
                                                      NULL, &r),
                                         TALLY_OK);
                        check("spec api", r.value.f64, want, isa, K_SUM, f32, N, th);
                        tally_cpu_spec_counts(cnt, 1);
                        if (!getenv("TALLY_CPU_SPEC") && !(cnt[0] == 0 && cnt[1] == 1)) {
                            printf("MISMATCH spec api isa=%s f32=%d threads=%d: %llu answered, "
                                   "%llu declined (want 0, 1)\n", isa_names[isa], f32, th,
                                   (unsigned long long)cnt[0], (unsigned long long)cnt[1]);
                            failures++;
                        }
                        tally_destroy(ctx);
                    }
            }
        }
    free(xf);
    free(xd);
    assert_int_equal(failures, 0);
}

/* After every family: each usable ISA's speculative pass both answered and declined. */
static void test_spec_counts(void **state) {
    (void)state;
    for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++) {
        if (!isa_ok(isa)) continue;
        printf("[   INFO   ] spec %s: %llu answered, %llu declined\n", isa_names[isa],
               (unsigned long long)spec_answered[isa], (unsigned long long)spec_declined[isa]);
        assert_true(spec_answered[isa] > 0 && spec_declined[isa] > 0);
    }
}

/* The public API on adversarial data: every ISA, 1..3 threads, sizes that split into pieces
 * of several blocks: sum, mean, var and the fused sum+min+max against the big-integer reference. */
static void test_api(void **s) {
    (void)s;
    enum { N = 600000 };
    float *xf = malloc(N * sizeof *xf);
    double *xd = malloc(N * sizeof *xd);
    assert_non_null(xf);
    assert_non_null(xd);
    gen_fn gens[] = {g_price, g_moderate, g_wide, g_phases, g_huge_cancel, g_wide_zeros, g_cancel, g_specials};
    const uint64_t ns[] = {4096, 70001, N};
    uint64_t spec[2];
    tally_cpu_spec_counts(spec, 1);
    for (size_t gi = 0; gi < sizeof gens / sizeof gens[0]; gi++)
        for (int f32 = 0; f32 <= 1; f32++) {
            for (uint64_t i = 0; i < N; i++) {
                double v = gens[gi](i, f32);
                if (f32) xf[i] = (float)v;
                else xd[i] = v;
            }
            for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                uint64_t n = ns[ni];
                double want = reference(K_SUM, f32 ? xf : NULL, f32 ? NULL : xd, n, 0, 0);
                for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++) {
                    if (!isa_usable(isa)) continue;
                    for (int th = 1; th <= 3; th++) {
                        tally_options o;
                        tally_options_init(&o);
                        o.backend = TALLY_BACKEND_CPU;
                        o.threads = th;
                        o.isa = isa;
                        tally_context *ctx;
                        assert_int_equal(tally_create(&ctx, &o), TALLY_OK);
                        const void *x = f32 ? (const void *)xf : (const void *)xd;
                        tally_type t = f32 ? TALLY_F32 : TALLY_F64;
                        tally_result r[4];
                        tally_op ops[4] = {TALLY_SUM, TALLY_MIN, TALLY_MAX, TALLY_MEAN};
                        assert_int_equal(tally_reduce(ctx, TALLY_SUM, t, x, n, NULL, &r[0]), TALLY_OK);
                        check("api sum", r[0].value.f64, want, isa, K_SUM, f32, n, th);
                        assert_int_equal(tally_reduce_many(ctx, t, x, n, ops, 4, NULL, r), TALLY_OK);
                        check("api fused sum", r[0].value.f64, want, isa, K_SUM, f32, n, th);
                        if (want - want == 0) { /* finite: mean = sum / n */
                            check("api mean", r[3].value.f64, want / (double)n, isa, K_SUM, f32, n, th);
                            tally_result v; /* var: where ref_add_square's squares are exact */
                            if (gi <= 1 && tally_reduce(ctx, TALLY_VAR, t, x, n, NULL, &v) == TALLY_OK) {
                                double sq = reference(K_SQ, f32 ? xf : NULL, f32 ? NULL : xd, n,
                                                      r[3].value.f64, 0);
                                check("api var", v.value.f64, sq / (double)n, isa, K_SQ, f32, n, th);
                            }
                        }
                        tally_destroy(ctx);
                    }
                }
            }
        }
    free(xf);
    free(xd);
    assert_int_equal(failures, 0);
    /* the one-shot sums above the small path went through the speculative sum (reduce.c): some
     * answered, some declined to the exact path, all checked above */
    tally_cpu_spec_counts(spec, 0);
    printf("[   INFO   ] api speculative sums: %llu answered, %llu declined\n",
           (unsigned long long)spec[0], (unsigned long long)spec[1]);
    if (!getenv("TALLY_CPU_SPEC")) assert_true(spec[0] > 0 && spec[1] > 0);
}

/* ---- hand-made cases on the superaccumulator ------------------------------------------------ */
static double acc_of(int n, const double *v) {
    tally_exact a;
    tally_exact_init(&a);
    for (int i = 0; i < n; i++) tally_exact_add(&a, v[i]);
    double got = tally_exact_round(&a);
    ref_t r;
    ref_init(&r);
    for (int i = 0; i < n; i++) ref_add(&r, v[i]);
    assert_true(same(got, ref_round(&r)));
    return got;
}
#define ACC(...) acc_of((int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), (double[]){__VA_ARGS__})
#define ASSERT_SAME(a, b) assert_true(same((a), (b)))

static void test_hard_cases(void **s) {
    (void)s;
    const double two53 = 0x1p53, tiny = 0x1p-1074;
    ASSERT_SAME(ACC(two53, 1.0), two53);                      /* tie -> even */
    ASSERT_SAME(ACC(two53, 1.0, 0x1p-100), two53 + 2);        /* just above the tie */
    ASSERT_SAME(ACC(two53, 1.0, -0x1p-100), two53);
    ASSERT_SAME(ACC(two53 + 2, 1.0), two53 + 4);              /* tie, odd -> up */
    ASSERT_SAME(ACC(1.0, 0x1p-53), 1.0);
    ASSERT_SAME(ACC(1.0, 0x1p-53, tiny), 1.0 + 0x1p-52);
    ASSERT_SAME(ACC(1.0, -0x1p-54), 1.0);                     /* tie below 1: even is 1.0 */
    ASSERT_SAME(ACC(1.0, -0x1p-54, -0x1p-106), 1.0 - 0x1p-53);
    ASSERT_SAME(ACC(1.0, -0x1p-53), 1.0 - 0x1p-53);           /* exact below 1 */
    ASSERT_SAME(ACC(1e100, 1.0, -1e100), 1.0);                /* catastrophic cancellation */
    ASSERT_SAME(ACC(0x1p1000, 0x1p-1000, -0x1p1000), 0x1p-1000);
    ASSERT_SAME(ACC(DBL_MAX, 0x1p970), INFINITY);             /* DBL_MAX + half ulp: tie, odd */
    ASSERT_SAME(ACC(DBL_MAX, 0x1p970, -tiny), DBL_MAX);
    ASSERT_SAME(ACC(-DBL_MAX, -0x1p970), -INFINITY);
    ASSERT_SAME(ACC(DBL_MAX, DBL_MAX), INFINITY);
    ASSERT_SAME(ACC(DBL_MAX, DBL_MAX, -DBL_MAX), DBL_MAX);    /* no intermediate overflow */
    ASSERT_SAME(ACC(-DBL_MAX, -DBL_MAX, DBL_MAX, 1.0), -DBL_MAX);
    ASSERT_SAME(ACC(tiny, tiny), 2 * tiny);
    ASSERT_SAME(ACC(0x1p-1022 - tiny, tiny), 0x1p-1022);      /* subnormal to normal */
    ASSERT_SAME(ACC(0x1p-1022, -tiny), 0x1p-1022 - tiny);
    ASSERT_SAME(ACC(-tiny, tiny), 0.0);
    ASSERT_SAME(ACC(1.0, -1.0), 0.0);                         /* exact zero is +0 */
    ASSERT_SAME(ACC(-0.0), -0.0);                             /* all -0: -0 */
    ASSERT_SAME(ACC(-0.0, -0.0, -0.0), -0.0);
    ASSERT_SAME(ACC(-0.0, 0.0), 0.0);
    ASSERT_SAME(ACC(-1.0, 1.0, -0.0), 0.0);
    {
        tally_exact a;
        tally_exact_init(&a);
        ASSERT_SAME(tally_exact_round(&a), 0.0);               /* empty: +0 */
    }
    assert_true(isnan(ACC(1.0, NAN, 2.0)));
    assert_true(isnan(ACC(INFINITY, -INFINITY)));
    ASSERT_SAME(ACC(INFINITY, 1.0, INFINITY), INFINITY);
    ASSERT_SAME(ACC(-INFINITY, DBL_MAX), -INFINITY);
    assert_true(isnan(ACC(INFINITY, NAN)));
    /* 2^53 + 1 patterns at many scales */
    for (int e = -1000; e <= 960; e += 37) {
        double hi = ldexp(1.0, e + 53), lo = ldexp(1.0, e);
        ASSERT_SAME(ACC(hi, lo), hi);
        ASSERT_SAME(ACC(hi, lo, lo), hi + 2 * lo);
        ASSERT_SAME(ACC(hi, lo, ldexp(1.0, e - 60)), hi + 2 * lo);
        ASSERT_SAME(ACC(-hi, -lo, -ldexp(1.0, e - 60)), -hi - 2 * lo);
    }
}

static void test_merge_and_headroom(void **s) {
    (void)s;
    /* Doubling an accumulator by merging it into itself: 2^64 * DBL_MAX stays exact inside
     * (rounds to inf), and subtracting the same back gives exactly 0. */
    tally_exact a, b;
    tally_exact_init(&a);
    tally_exact_init(&b);
    tally_exact_add(&a, DBL_MAX);
    tally_exact_add(&b, -DBL_MAX);
    for (int i = 0; i < 63; i++) {
        tally_exact_merge(&a, &a);
        tally_exact_merge(&b, &b);
    }
    ASSERT_SAME(tally_exact_round(&a), INFINITY);
    ASSERT_SAME(tally_exact_round(&b), -INFINITY);
    tally_exact c = a;
    tally_exact_add(&c, 1.0);
    tally_exact_merge(&c, &b);
    ASSERT_SAME(tally_exact_round(&c), 1.0);
    /* many adds straight into the chunks' budget: nadds triggers normalisation */
    tally_exact d;
    tally_exact_init(&d);
    d.nadds = TALLY_EXACT_MAX_ADDS - 5;
    for (int i = 0; i < 20; i++) tally_exact_add(&d, 0.1);
    assert_true(d.nadds < 20);
    ref_t r;
    ref_init(&r);
    for (int i = 0; i < 20; i++) ref_add(&r, 0.1);
    ASSERT_SAME(tally_exact_round(&d), ref_round(&r));
    /* normalising does not change the value */
    tally_exact e;
    tally_exact_init(&e);
    for (int i = 0; i < 1000; i++) tally_exact_add(&e, g_wide(0, 0));
    double before = tally_exact_round(&e);
    tally_exact_normalize(&e);
    ASSERT_SAME(tally_exact_round(&e), before);
}

/* The fused sum + min + max kernels on hand-placed special values: one odd element (NaN, -0,
 * +0, inf, a new extreme) at every position of short arrays (every lane of a vector and of the
 * last partial vector) and at sampled positions of arrays spanning several blocks; zeros of both
 * signs as the extremes; nothing but NaN. check_all runs them against the key-order reference,
 * with and without omit_nan, in one call and in pieces. */
static void fill_both(float *xf, double *xd, uint64_t n, double v) {
    for (uint64_t i = 0; i < n; i++) {
        xf[i] = (float)v;
        xd[i] = v;
    }
}
static void put_both(float *xf, double *xd, uint64_t i, double v) {
    xf[i] = (float)v;
    xd[i] = v;
}
static void check_both(const char *what, const float *xf, const double *xd, uint64_t n) {
    for (int omit = 0; omit <= 1; omit++) {
        check_all(what, K_SUM, xf, NULL, n, 0, omit);
        check_all(what, K_SUM, NULL, xd, n, 0, omit);
    }
}
static void test_fused_minmax(void **s) {
    (void)s;
    enum { N = 1600 };
    static float xf[N];
    static double xd[N];
    /* base data: positive, negative, zeros of one sign, or price-like */
    const double odd[] = {NAN, -0.0, 0.0, INFINITY, -INFINITY, 1e30, -1e30, 0x1p-140, -7.5};
    const uint64_t lens[] = {1, 2, 3, 5, 8, 13, 31, 33, 511, 513, 1031, N};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        uint64_t n = lens[li];
        for (int base = 0; base < 5; base++) {
            for (size_t oi = 0; oi < sizeof odd / sizeof odd[0]; oi++) {
                uint64_t step = n <= 40 ? 1 : n / 23 + 1;
                for (uint64_t p = 0; p < n; p += step) {
                    for (uint64_t i = 0; i < n; i++) {
                        double v = base == 0 ? 2.5 : base == 1 ? -2.5 : base == 2 ? 0.0
                                 : base == 3 ? -0.0 : (double)(500 + rnd() % 4500) / 100.0;
                        put_both(xf, xd, i, v);
                    }
                    put_both(xf, xd, p, odd[oi]);
                    if (p + 1 == n || rnd() % 4 == 0) put_both(xf, xd, n - 1, odd[oi]);
                    check_both("fused odd one", xf, xd, n);
                }
            }
        }
    }
    /* zeros as the extremes: non-negative data whose minimum is a zero of either sign (and
     * non-positive data for the maximum), the deciding zero anywhere */
    for (uint64_t n = 1; n <= 40; n++)
        for (uint64_t p = 0; p < n; p++)
            for (int sg = 0; sg < 4; sg++) {
                for (uint64_t i = 0; i < n; i++)
                    put_both(xf, xd, i, sg & 1 ? -(double)(1 + rnd() % 9) : (double)(1 + rnd() % 9));
                if (n > 1) put_both(xf, xd, (p + 1) % n, sg & 1 ? -0.0 : 0.0);
                put_both(xf, xd, p, sg & 2 ? -0.0 : 0.0);
                check_both("fused zeros", xf, xd, n);
            }
    /* nothing but NaN; NaN with one zero; NaN everywhere but the last element */
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        uint64_t n = lens[li];
        fill_both(xf, xd, n, NAN);
        check_both("fused all NaN", xf, xd, n);
        put_both(xf, xd, n / 2, -0.0);
        check_both("fused NaN and -0", xf, xd, n);
        put_both(xf, xd, n / 2, NAN);
        put_both(xf, xd, n - 1, 3.0);
        check_both("fused NaN then one", xf, xd, n);
    }
    /* zero elements: mm stays empty */
    for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++) {
        if (!isa_usable(isa)) continue;
        tally_exact a;
        tally_xminmax mm;
        tally_exact_init(&a);
        tally_xminmax_init(&mm);
        run_fused(isa, NULL, xd, 0, 0, 0, &a, &mm);
        assert_true(mm.min > mm.max && mm.nans == 0);
        assert_true(isnan(tally_xminmax_min(&mm, 1)) && isnan(tally_xminmax_max(&mm, 0)));
    }
    assert_int_equal(failures, 0);
}

/* The kernels on unaligned starts and lengths near the block size, for every ISA. */
static void test_offsets(void **s) {
    (void)s;
    enum { N = 3000 };
    static double xd[N];
    static float xf[N];
    for (int i = 0; i < N; i++) {
        xd[i] = g_moderate(0, 0);
        xf[i] = (float)g_price(0, 1);
    }
    for (int off = 0; off < 9; off++)
        for (int len = 500; len < 530; len += 3) {
            check_all("offset", K_SUM, NULL, xd + off, (uint64_t)len, 0, 0);
            check_all("offset", K_SUM, xf + off, NULL, (uint64_t)len, 0, 0);
        }
    assert_int_equal(failures, 0);
}

/* tally_exact_round_within against the big-integer reference: V a sum of a few doubles, E a
 * bound drawn at, just under and just over the distance from V to the nearest midpoint (where
 * the answer flips), and at random. When it answers, the reference's roundings of V - E and
 * V + E must both equal its answer; when it declines, they must differ, be zero or overflow. */
static double ref_round_of(const double *v, int k) {
    ref_t r;
    ref_init(&r);
    for (int i = 0; i < k; i++) ref_add(&r, v[i]);
    return ref_round(&r);
}
static void test_round_within(void **state) {
    (void)state;
    int answered = 0, declined = 0;
    for (int it = 0; it < 200000; it++) {
        double v[4];
        const int k = 1 + (int)(rnd() % 3);
        const int e0 = (int)(rnd() % 2000) - 1000;
        for (int i = 0; i < k; i++) {
            const int de = i == 0 ? 0 : -(int)(rnd() % 120);
            v[i] = ldexp(unif() + 0.5, e0 + de) * ((rnd() & 1) ? -1 : 1);
            if (rnd() % 7 == 0) v[i] = nextafter(v[i], 0); /* odd last bits: ties and near-ties */
        }
        if (rnd() % 50 == 0) v[1 % k] = -v[0]; /* cancellations down to the small terms, or 0 */
        tally_exact a;
        tally_exact_init(&a);
        for (int i = 0; i < k; i++) tally_exact_add(&a, v[i]);
        /* the distance from V to the midpoint above its rounding, as a double (approximately) */
        const double r = ref_round_of(v, k);
        const double ulp = fabs(nextafter(r, INFINITY) - r);
        double E;
        switch (rnd() % 5) {
        case 0: E = 0; break;
        case 1: E = ulp * 0.5; break;
        case 2: E = nextafter(ulp * 0.25, 0); break;
        case 3: E = ldexp(unif(), (int)(rnd() % 2100) - 1074 - 20); break;
        default: E = ulp * unif(); break;
        }
        if (!isfinite(E)) E = 0;
        double got = 0;
        const int ok = tally_exact_round_within(&a, E, &got);
        double w[6];
        for (int i = 0; i < k; i++) w[i] = v[i];
        w[k] = -E;
        const double lo = ref_round_of(w, k + 1);
        w[k] = E;
        const double hi = ref_round_of(w, k + 1);
        const int agree = same(lo, hi) && lo != 0 && isfinite(lo);
        if (ok != agree || (ok && !same(got, lo))) {
            fprintf(stderr, "round_within: k=%d v0=%a v1=%a v2=%a E=%a ok=%d got=%a lo=%a hi=%a\n", k, v[0],
                    k > 1 ? v[1] : 0.0, k > 2 ? v[2] : 0.0, E, ok, got, lo, hi);
            fail();
        }
        ok ? answered++ : declined++;
    }
    /* both answers occur often, or the draw above missed the interesting region */
    assert_true(answered > 20000 && declined > 20000);
    /* bad bounds are declined */
    tally_exact a;
    tally_exact_init(&a);
    tally_exact_add(&a, 1.0);
    double got;
    assert_int_equal(tally_exact_round_within(&a, -1.0, &got), 0);
    assert_int_equal(tally_exact_round_within(&a, NAN, &got), 0);
    assert_int_equal(tally_exact_round_within(&a, INFINITY, &got), 0);
    assert_int_equal(tally_exact_round_within(&a, 0.0, &got), 1);
    assert_true(got == 1.0);
    tally_exact_add(&a, INFINITY);
    assert_int_equal(tally_exact_round_within(&a, 0.0, &got), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hard_cases),  cmocka_unit_test(test_merge_and_headroom),
        cmocka_unit_test(test_price),       cmocka_unit_test(test_wide),
        cmocka_unit_test(test_sample_lies), cmocka_unit_test(test_small_fenv), cmocka_unit_test(test_grid_edge), cmocka_unit_test(test_w32w_wrap), cmocka_unit_test(test_w64w_wrap), cmocka_unit_test(test_w64d_wrap), cmocka_unit_test(test_spec_cancel), cmocka_unit_test(test_specf_small),
        cmocka_unit_test(test_moderate),    cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_subnormal),   cmocka_unit_test(test_huge),
        cmocka_unit_test(test_huge_cancel), cmocka_unit_test(test_specials),
        cmocka_unit_test(test_nan_rare),    cmocka_unit_test(test_infs),
        cmocka_unit_test(test_negzero),     cmocka_unit_test(test_zeros),
        cmocka_unit_test(test_const),       cmocka_unit_test(test_outliers),
        cmocka_unit_test(test_ints),        cmocka_unit_test(test_offsets),
        cmocka_unit_test(test_far),         cmocka_unit_test(test_negzero_nan),
        cmocka_unit_test(test_nan_only),    cmocka_unit_test(test_price_nan),
        cmocka_unit_test(test_fused_minmax), cmocka_unit_test(test_wide_zeros),
        cmocka_unit_test(test_wide_nan),    cmocka_unit_test(test_wide_late),    cmocka_unit_test(test_bins_probe),
        cmocka_unit_test(test_lev_bound), cmocka_unit_test(test_lev_bound_flush),
        cmocka_unit_test(test_bin_overflow),
        cmocka_unit_test(test_wide_long),   cmocka_unit_test(test_phases), cmocka_unit_test(test_huge_squares),
        cmocka_unit_test(test_growing),     cmocka_unit_test(test_w32_edge),
        cmocka_unit_test(test_w32_scale),   cmocka_unit_test(test_methods),
        cmocka_unit_test(test_fenv),        cmocka_unit_test(test_api),
        cmocka_unit_test(test_bin_count),   cmocka_unit_test(test_round_within),   cmocka_unit_test(test_wide_cancel),
        cmocka_unit_test(test_spec_decline), cmocka_unit_test(test_spec_api),
        cmocka_unit_test(test_spec_counts), /* last */
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++)
        if (small_tried[isa])
            printf("one-pass small sums (%s): %llu of %llu cases taken, all checked\n", isa_names[isa],
                   (unsigned long long)small_taken[isa], (unsigned long long)small_tried[isa]);
    if (isa_usable(TALLY_ISA_AVX512) && small_taken[TALLY_ISA_AVX512] == 0) {
        printf("FAIL: the AVX-512 one-pass small sum took no case\n");
        rc = 1;
    }
    return rc;
}
