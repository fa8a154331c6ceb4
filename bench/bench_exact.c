/* tally_bench_exact: the exact-sum kernels alone, one core, per ISA, data shape and kernel.
 *
 *   tally_bench_exact [-n ELEMENTS] [-r RUNS] [-i scalar|avx2|avx512] [-d DATA] [-k KERNEL]
 *                     [-p FAR,NEAR]   (the kernels' prefetch distances in bytes, exact_kernels.h)
 *
 * Every row: ns per element and GB/s of input (best of RUNS, the thread's CPU time, so other load
 * on the machine inflates them less), next to a read loop over the same bytes in the same run
 * (SIMD integer adds: the core's ceiling for that many bytes) and their ratio, and which of the
 * kernels' methods added the elements (W32 / LEV / BINS / SLOW, see src/cpu/exact_impl.h).
 * Before anything is timed, each answer is checked bit for bit against the superaccumulator fed
 * element by element (core/exact_sum.h) and the extremes against a plain loop.
 *
 * Data: price (5.00 .. 49.99), pm40 (random sign, exponents spread over 2^-40..2^40), full
 * (random sign, exponents over the whole range of the type), pm20 (2^-20..2^20), fullfin (full,
 * but f64 only up to 2^991 as in bench_cpu: with full's, partial sums of a few values near
 * DBL_MAX overflow, which the speculative sum declines).
 * Kernels: sum, sum+min+max (the fused one), sqdev (squared deviations from a mean near the data),
 * spec (the speculative compensated sum decided by tally_exact_round_within, the sum kernel after
 * it when it declines, as tally_reduce does for large one-shot sums; its last column says
 * "spec" when every call answered, "declined" when they fell back).
 * n = 16384 stays in L1/L2: the kernel's own speed; n = 2^24 reads from memory.
 *
 *   tally_bench_exact -s [-n ELEMENTS] [-r RUNS] [-i ISA] [-d DATA]      (n = 4096 by default)
 *
 * Short arrays, one whole sum per call as tally_reduce does it: the one-pass path (SMALL in
 * exact_impl.h, the general kernel when it declines) and the general kernel alone (superaccumulator
 * and rounding included), against a plain rounding SIMD loop over the same array (four
 * accumulators, AVX-512 or AVX2): time-stamp-counter ticks per call (best of RUNS x 2000 calls,
 * the three interleaved) and the ratios to the plain loop; "taken" says whether SMALL took it.
 * The last column times the one-pass path without its W32W and SPEC methods (tally_exact_set_
 * small_w32w(0), _spec(0), interleaved with the others): the before / after in one run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include "cpu/exact_kernels.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static double unif(void) { return (double)(rnd() >> 11) * 0x1p-53; }

static int isa_ok(tally_isa isa) {
#if defined(TALLY_X86)
    if (isa == TALLY_ISA_AVX2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (isa == TALLY_ISA_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
    return 1;
#else
    return isa == TALLY_ISA_SCALAR;
#endif
}

/* ---- the read loop: integer adds over the same bytes ---- */
static volatile uint64_t g_sink;
#if defined(__x86_64__)
__attribute__((target("avx512f"))) static uint64_t read_avx512(const void *p, size_t bytes) {
    const char *c = p;
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 256 <= bytes; i += 256) {
        a0 = _mm512_add_epi32(a0, _mm512_loadu_si512(c + i));
        a1 = _mm512_add_epi32(a1, _mm512_loadu_si512(c + i + 64));
        a2 = _mm512_add_epi32(a2, _mm512_loadu_si512(c + i + 128));
        a3 = _mm512_add_epi32(a3, _mm512_loadu_si512(c + i + 192));
    }
    uint64_t s = (uint64_t)_mm512_reduce_add_epi32(
        _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)));
    for (; i < bytes; i++) s += (unsigned char)c[i];
    return s;
}
__attribute__((target("avx2"))) static uint64_t read_avx2(const void *p, size_t bytes) {
    const char *c = p;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 128 <= bytes; i += 128) {
        a0 = _mm256_add_epi32(a0, _mm256_loadu_si256((const __m256i *)(c + i)));
        a1 = _mm256_add_epi32(a1, _mm256_loadu_si256((const __m256i *)(c + i + 32)));
        a2 = _mm256_add_epi32(a2, _mm256_loadu_si256((const __m256i *)(c + i + 64)));
        a3 = _mm256_add_epi32(a3, _mm256_loadu_si256((const __m256i *)(c + i + 96)));
    }
    uint64_t l[4];
    _mm256_storeu_si256((__m256i *)l, _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
    uint64_t s = l[0] + l[1] + l[2] + l[3];
    for (; i < bytes; i++) s += (unsigned char)c[i];
    return s;
}
#endif
static uint64_t read_plain(const void *p, size_t bytes) {
    const uint64_t *w = p;
    uint64_t s = 0;
    for (size_t i = 0; i < bytes / 8; i++) s += w[i];
    return s;
}

enum { D_PRICE, D_PM40, D_FULL, D_PM20, D_FULLFIN, D_COUNT };
static const char *dnames[] = {"price", "pm40", "full", "pm20", "fullfin"};
enum { K_SUM, K_FUSED, K_SQ, K_SPEC, K_SPEC2, K_COUNT };
/* spec2: the same speculative pass by SPEC's TwoSum step (tally_exact_set_spec_fast(0)) where
 * spec is SPECF (exact_impl.h): the before / after of that change in one run */
static const char *knames[] = {"sum", "sum+min+max", "sqdev", "spec", "spec2"};
static uint64_t g_spec_declined; /* spec calls that fell back to the sum kernel */
static const char *inames[] = {"", "scalar", "avx2", "avx512"};

static void fill(int d, float *f, double *x, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        double s = rnd() & 1 ? 1 : -1;
        if (d == D_PRICE) {
            x[i] = (double)(500 + rnd() % 4500) / 100.0;
            f[i] = (float)((double)(500 + rnd() % 4500) / 100.0);
        } else if (d == D_PM40 || d == D_PM20) {
            int w = d == D_PM40 ? 40 : 20;
            x[i] = s * ldexp(1 + unif(), (int)(rnd() % (2 * w)) - w);
            f[i] = (float)(s * ldexp(1 + unif(), (int)(rnd() % (2 * w)) - w));
        } else if (d == D_FULLFIN) { /* f64 up to 2^991 (bench_cpu's full range): no partial
                                         * sum of 2^24 of them overflows */
            x[i] = s * ldexp(1 + unif(), (int)(rnd() % 2013) - 1022);
            f[i] = (float)(s * ldexp(1 + unif(), (int)(rnd() % 253) - 126));
        } else {
            x[i] = s * ldexp(1 + unif(), (int)(rnd() % 2045) - 1022);
            f[i] = (float)(s * ldexp(1 + unif(), (int)(rnd() % 253) - 126));
        }
    }
}

/* One kernel call; returns the rounded sum (min, max in mm for the fused kernel). */
static double call(const tally_exact_kernels *k, int kern, int f32, const float *f, const double *x,
                   uint64_t n, double mean, tally_xminmax *mm) {
    tally_exact a;
    tally_exact_init(&a);
    tally_xminmax_init(mm);
    if (kern == K_SUM) {
        if (f32) k->sum_f32(f, n, 0, &a);
        else k->sum_f64(x, n, 0, &a);
    } else if (kern == K_FUSED) {
        if (f32) k->sum_minmax_f32(f, n, 0, &a, mm);
        else k->sum_minmax_f64(x, n, 0, &a, mm);
    } else if (kern == K_SPEC || kern == K_SPEC2) { /* as tally_reduce does it: the speculative pass, decided */
        double D = 0, r;
        if (f32) k->spec_sum_f32(f, n, &a, &D);
        else k->spec_sum_f64(x, n, &a, &D);
        if (tally_exact_round_within(&a, tally_exact_spec_bound(D), &r)) return r;
        g_spec_declined++; /* then the exact kernel, as the caller would */
        tally_exact_init(&a);
        if (f32) k->sum_f32(f, n, 0, &a);
        else k->sum_f64(x, n, 0, &a);
    } else {
        if (f32) k->sqdev_f32(f, n, mean, 0, &a);
        else k->sqdev_f64(x, n, mean, 0, &a);
    }
    return tally_exact_round(&a);
}

/* The reference: the superaccumulator fed one element at a time (hi + lo for squares). */
static double reference(int kern, int f32, const float *f, const double *x, uint64_t n, double mean,
                        double *mn, double *mx) {
    tally_exact a;
    tally_exact_init(&a);
    *mn = HUGE_VAL;
    *mx = -HUGE_VAL;
    for (uint64_t i = 0; i < n; i++) {
        double v = f32 ? (double)f[i] : x[i];
        if (v < *mn) *mn = v;
        if (v > *mx) *mx = v;
        if (kern == K_SQ) { /* d*d split exactly; an overflow adds +inf (exact_kernels.h) */
            double d = v - mean, hi = d * d;
            tally_exact_add(&a, hi);
            if (hi - hi == 0) tally_exact_add(&a, fma(d, d, -hi));
        } else {
            tally_exact_add(&a, v);
        }
    }
    return tally_exact_round(&a);
}

/* ---- -s: short arrays against a plain SIMD loop ---- */
#if defined(__x86_64__)
#include <x86intrin.h>
__attribute__((target("avx512f"))) static double plain512(const void *p, size_t n, int f32) {
    size_t i = 0;
    double s = 0;
    if (!f32) {
        const double *x = p;
        __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
        for (; i + 32 <= n; i += 32) {
            a0 = _mm512_add_pd(a0, _mm512_loadu_pd(x + i));
            a1 = _mm512_add_pd(a1, _mm512_loadu_pd(x + i + 8));
            a2 = _mm512_add_pd(a2, _mm512_loadu_pd(x + i + 16));
            a3 = _mm512_add_pd(a3, _mm512_loadu_pd(x + i + 24));
        }
        s = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3)));
        for (; i < n; i++) s += x[i];
    } else {
        const float *x = p;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; i + 64 <= n; i += 64) {
            a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i));
            a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + i + 16));
            a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + i + 32));
            a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + i + 48));
        }
        s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
        for (; i < n; i++) s += x[i];
    }
    return s;
}
__attribute__((target("avx2"))) static double plain256(const void *p, size_t n, int f32) {
    size_t i = 0;
    double s = 0;
    if (!f32) {
        const double *x = p;
        __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
        for (; i + 16 <= n; i += 16) {
            a0 = _mm256_add_pd(a0, _mm256_loadu_pd(x + i));
            a1 = _mm256_add_pd(a1, _mm256_loadu_pd(x + i + 4));
            a2 = _mm256_add_pd(a2, _mm256_loadu_pd(x + i + 8));
            a3 = _mm256_add_pd(a3, _mm256_loadu_pd(x + i + 12));
        }
        double l[4];
        _mm256_storeu_pd(l, _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
        s = l[0] + l[1] + l[2] + l[3];
        for (; i < n; i++) s += x[i];
    } else {
        const float *x = p;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; i + 32 <= n; i += 32) {
            a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
            a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
            a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
            a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
        }
        float l[8];
        _mm256_storeu_ps(l, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
        for (int j = 0; j < 8; j++) s += l[j];
        for (; i < n; i++) s += x[i];
    }
    return s;
}
static double one_sum(const tally_exact_kernels *k, int small, int f32, const float *f, const double *x,
                      uint64_t n, int *taken) {
    double v;
    *taken = 0;
    if (small) {
        if (f32 && k->small_sum_f32 && k->small_sum_f32(f, n, &v)) return *taken = 1, v;
        if (!f32 && k->small_sum_f64 && k->small_sum_f64(x, n, &v)) return *taken = 1, v;
    }
    tally_exact a;
    tally_exact_init(&a);
    if (f32) k->sum_f32(f, n, 0, &a);
    else k->sum_f64(x, n, 0, &a);
    return tally_exact_round(&a);
}
static int small_table(uint64_t n, int runs, int only_isa, int only_d, float *f, double *x) {
    const int avx512 = __builtin_cpu_supports("avx512f");
    int bad = 0;
    printf("tally_bench_exact -s: one core, n = %llu, one sum per call, best of %d runs x 2000 calls, "
           "TSC ticks per call; plain loop %s\n\n", (unsigned long long)n, runs, avx512 ? "AVX-512" : "AVX2");
    printf("| data | type | ISA | plain | one-pass (ratio) | general (ratio) | taken | one-pass without W32W "
           "and SPEC (before) |\n|---|---|---|---:|---:|---:|---|---:|\n");
    for (int d = 0; d < D_COUNT; d++) {
        if (only_d >= 0 && d != only_d) continue;
        fill(d, f, x, n);
        for (int f32 = 1; f32 >= 0; f32--) {
            double rmn, rmx, want = reference(K_SUM, f32, f, x, n, 0.0, &rmn, &rmx);
            for (tally_isa isa = TALLY_ISA_AVX2; isa <= TALLY_ISA_AVX512; isa++) {
                if (!isa_ok(isa) || (only_isa && (int)isa != only_isa)) continue;
                const tally_exact_kernels *k = tally_exact_kernels_for(isa);
                int taken, t2;
                double g1 = one_sum(k, 1, f32, f, x, n, &taken), g2 = one_sum(k, 0, f32, f, x, n, &t2);
                if (memcmp(&g1, &want, 8) || memcmp(&g2, &want, 8)) {
                    fprintf(stderr, "tally_bench_exact: WRONG -s %s %s %s: %a / %a, want %a\n", dnames[d],
                            f32 ? "f32" : "f64", inames[isa], g1, g2, want);
                    bad = 1;
                }
                uint64_t best[4] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
                const int w32w = tally_exact_get_small_w32w(), spec = tally_exact_get_small_spec(), mmax = 3;
                const void *p = f32 ? (const void *)f : (const void *)x;
                for (int r = 0; r < runs; r++) {
                    uint64_t t = __rdtsc();
                    double acc = 0;
                    for (int j = 0; j < 2000; j++) {
                        const void *q = p;
                        __asm__ volatile("" : "+r"(q)); /* each call really runs (no hoisting) */
                        acc += avx512 ? plain512(q, n, f32) : plain256(q, n, f32);
                    }
                    t = __rdtsc() - t;
                    if (t < best[0]) best[0] = t;
                    for (int m = 1; m <= mmax; m++) {
                        if (m == 3) tally_exact_set_small_w32w(0), tally_exact_set_small_spec(0); /* before */
                        t = __rdtsc();
                        for (int j = 0; j < 2000; j++) {
                            const float *qf = f;
                            const double *qx = x;
                            __asm__ volatile("" : "+r"(qf), "+r"(qx));
                            acc += one_sum(k, m != 2, f32, qf, qx, n, &t2);
                        }
                        t = __rdtsc() - t;
                        if (m == 3) tally_exact_set_small_w32w(w32w), tally_exact_set_small_spec(spec);
                        if (t < best[m]) best[m] = t;
                    }
                    g_sink += (uint64_t)(acc != acc) + (uint64_t)(acc > 0);
                }
                char other[64];
                snprintf(other, sizeof other, "%.0f (%.2fx)", best[3] / 2000.0, (double)best[3] / (double)best[0]);
                printf("| %s | %s | %s | %.0f | %.0f (%.2fx) | %.0f (%.2fx) | %s | %s |\n", dnames[d], f32 ? "f32" : "f64",
                       inames[isa], best[0] / 2000.0, best[1] / 2000.0, (double)best[1] / (double)best[0],
                       best[2] / 2000.0, (double)best[2] / (double)best[0], taken ? "yes" : "no", other);
                fflush(stdout);
            }
        }
    }
    return bad;
}
#endif

int main(int argc, char **argv) {
    uint64_t n = 16384;
    int runs = 20, only_isa = 0, only_d = -1, only_k = -1, small = 0, n_set = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s")) small = 1;
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) n = strtoull(argv[++i], NULL, 0), n_set = 1;
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-i") && i + 1 < argc) {
            const char *s = argv[++i];
            for (int j = 1; j <= 3; j++)
                if (!strcmp(s, inames[j])) only_isa = j;
        } else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
            const char *s = argv[++i];
            for (int j = 0; j < D_COUNT; j++)
                if (!strcmp(s, dnames[j])) only_d = j;
        } else if (!strcmp(argv[i], "-k") && i + 1 < argc) {
            const char *s = argv[++i];
            for (int j = 0; j < K_COUNT; j++)
                if (!strcmp(s, knames[j])) only_k = j;
        } else if (!strcmp(argv[i], "-p") && i + 1 < argc) { /* FAR,NEAR: prefetch distances */
            unsigned long far = 0, near = 0;
            if (sscanf(argv[++i], "%lu,%lu", &far, &near) < 1) far = TALLY_XPF_DIST;
            tally_exact_set_prefetch((uint32_t)far, (uint32_t)near);
        } else {
            fprintf(stderr, "usage: %s [-s] [-n ELEMENTS] [-r RUNS] [-i scalar|avx2|avx512] "
                            "[-d price|pm40|full|pm20|fullfin] [-k sum|sum+min+max|sqdev|spec|spec2] [-p FAR,NEAR]\n", argv[0]);
            return 2;
        }
    }
    if (n < 1) n = 1;
    if (runs < 1) runs = 1;
    float *f = malloc(n * sizeof *f);
    double *x = malloc(n * sizeof *x);
    if (!f || !x) return 1;
#if defined(__x86_64__)
    if (small) {
        if (!n_set) {
            n = 4096;
        }
        int bad = small_table(n, runs, only_isa, only_d, f, x);
        if (bad) fprintf(stderr, "tally_bench_exact: VALIDATION FAILED\n");
        free(f);
        free(x);
        return bad;
    }
#else
    (void)small;
    (void)n_set;
#endif
    uint64_t (*read_fn)(const void *, size_t) = read_plain;
    const char *read_name = "plain";
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) { read_fn = read_avx512; read_name = "AVX-512"; }
    else if (__builtin_cpu_supports("avx2")) { read_fn = read_avx2; read_name = "AVX2"; }
#endif
    /* repeat small inputs so that each timing covers ~2^22 elements */
    int reps = (int)((1u << 22) / n);
    if (reps < 1) reps = 1;
    int bad = 0;
    printf("tally_bench_exact: one core, n = %llu, best of %d runs x %d calls, CPU time; read loop %s\n\n",
           (unsigned long long)n, runs, reps, read_name);
    printf("| data | kernel | type | ISA | ns/elem | GB/s | read GB/s | ratio | W32/LEV/BINS/SLOW %% |\n"
           "|---|---|---|---|---:|---:|---:|---:|---|\n");
    for (int d = 0; d < D_COUNT; d++) {
        if (only_d >= 0 && d != only_d) continue;
        fill(d, f, x, n);
        for (int kern = 0; kern < K_COUNT; kern++) {
            if (only_k >= 0 && kern != only_k) continue;
            for (int f32 = 1; f32 >= 0; f32--) {
                double mean = f32 ? (double)f[n / 2] * 0.999 : x[n / 2] * 0.999;
                double rmn, rmx;
                double want = reference(kern, f32, f, x, n, mean, &rmn, &rmx);
                const size_t bytes = n * (f32 ? 4 : 8);
                for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++) {
                    if (!isa_ok(isa) || (only_isa && (int)isa != only_isa)) continue;
                    const tally_exact_kernels *k = tally_exact_kernels_for(isa);
                    tally_exact_set_spec_fast(kern != K_SPEC2);
                    tally_xminmax mm;
                    uint64_t cnt[4];
                    tally_exact_method_counts(cnt, 1);
                    double got = call(k, kern, f32, f, x, n, mean, &mm);
                    tally_exact_method_counts(cnt, 1);
                    int ok = memcmp(&got, &want, 8) == 0 &&
                             (kern != K_FUSED || (mm.min == rmn && mm.max == rmx));
                    if (!ok) {
                        fprintf(stderr, "tally_bench_exact: WRONG %s %s %s %s: %a, want %a\n",
                                dnames[d], knames[kern], f32 ? "f32" : "f64", inames[isa], got, want);
                        bad = 1;
                    }
                    double best = 1e30, bestr = 1e30;
                    for (int r = 0; r < runs; r++) {
                        double t = now();
                        for (int j = 0; j < reps; j++) call(k, kern, f32, f, x, n, mean, &mm);
                        t = now() - t;
                        if (t < best) best = t;
                        t = now();
                        for (int j = 0; j < reps; j++) g_sink += read_fn(f32 ? (void *)f : (void *)x, bytes);
                        t = now() - t;
                        if (t < bestr) bestr = t;
                    }
                    double tot = (double)(cnt[0] + cnt[1] + cnt[2] + cnt[3]);
                    if (tot == 0) tot = 1;
                    best /= reps;
                    bestr /= reps;
                    if (kern == K_SPEC || kern == K_SPEC2) {
                        printf("| %s | %s | %s | %s | %.3f | %.1f | %.1f | %.2f | %s%s |\n",
                               dnames[d], knames[kern], f32 ? "f32" : "f64", inames[isa],
                               best / (double)n * 1e9, (double)bytes / best / 1e9,
                               (double)bytes / bestr / 1e9, bestr / best,
                               g_spec_declined ? "declined" : "spec", ok ? "" : " WRONG");
                        g_spec_declined = 0;
                        fflush(stdout);
                        continue;
                    }
                    printf("| %s | %s | %s | %s | %.3f | %.1f | %.1f | %.2f | %.0f/%.0f/%.0f/%.0f%s |\n",
                           dnames[d], knames[kern], f32 ? "f32" : "f64", inames[isa],
                           best / (double)n * 1e9, (double)bytes / best / 1e9,
                           (double)bytes / bestr / 1e9, bestr / best, 100 * cnt[0] / tot,
                           100 * cnt[1] / tot, 100 * cnt[2] / tot, 100 * cnt[3] / tot,
                           ok ? "" : " WRONG");
                    fflush(stdout);
                }
            }
        }
    }
    if (bad) fprintf(stderr, "tally_bench_exact: VALIDATION FAILED\n");
    free(f);
    free(x);
    return bad;
}
