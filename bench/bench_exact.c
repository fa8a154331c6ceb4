/* tally_bench_exact: the exact-sum kernels alone, one core, per ISA and data shape.
 *
 *   tally_bench_exact [-n ELEMENTS] [-r RUNS]
 *
 * Prints GB/s of input per core (best of RUNS) for sum and squared deviations of f32 and f64,
 * on price-like data (5.00 .. 49.99, the fast path with one or two levels), data spanning
 * 2^-20 .. 2^20 (two levels) and data spanning the whole exponent range (most of it through
 * the per-exponent bins). Each result is checked against the scalar kernel (bitwise). Times are
 * the thread's CPU time, so other load on the machine does not inflate them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cpu/exact_kernels.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* one thread: CPU time, robust on a shared machine */
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

int main(int argc, char **argv) {
    uint64_t n = 1u << 24;
    int runs = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) n = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) runs = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-n ELEMENTS] [-r RUNS]\n", argv[0]);
            return 2;
        }
    }
    if (n < 1) n = 1;
    if (runs < 1) runs = 1;
    float *f = malloc(n * sizeof *f);
    double *d = malloc(n * sizeof *d);
    if (!f || !d) return 1;
    const char *shapes[] = {"price 5.00..49.99", "2^-20..2^20, both signs", "whole exponent range"};
    const char *names[] = {"", "scalar", "avx2", "avx512"};
    const double mean = 27.31;
    int bad = 0;
    printf("one core, n = %llu, best of %d runs; GB/s of input\n\n", (unsigned long long)n, runs);
    printf("| data | ISA | sum f32 | sum f64 | sqdev f32 | sqdev f64 |\n|---|---|---:|---:|---:|---:|\n");
    for (int shape = 0; shape < 3; shape++) {
        for (uint64_t i = 0; i < n; i++) {
            if (shape == 0) {
                d[i] = (double)(500 + rnd() % 4500) / 100.0;
                f[i] = (float)((double)(500 + rnd() % 4500) / 100.0);
            } else if (shape == 1) {
                d[i] = (rnd() & 1 ? 1 : -1) * ldexp(1 + unif(), (int)(rnd() % 40) - 20);
                f[i] = (float)d[i];
            } else {
                d[i] = (rnd() & 1 ? 1 : -1) * ldexp(1 + unif(), (int)(rnd() % 2000) - 1000);
                f[i] = (float)((rnd() & 1 ? 1 : -1) * ldexp(1 + unif(), (int)(rnd() % 250) - 125));
            }
        }
        double want[4] = {0};
        for (tally_isa isa = TALLY_ISA_SCALAR; isa <= TALLY_ISA_AVX512; isa++) {
            if (!isa_ok(isa)) continue;
            const tally_exact_kernels *k = tally_exact_kernels_for(isa);
            double best[4] = {1e30, 1e30, 1e30, 1e30}, got[4] = {0};
            for (int r = 0; r < runs; r++) {
                for (int op = 0; op < 4; op++) {
                    tally_exact a;
                    tally_exact_init(&a);
                    double t = now();
                    if (op == 0) k->sum_f32(f, n, 0, &a);
                    else if (op == 1) k->sum_f64(d, n, 0, &a);
                    else if (op == 2) k->sqdev_f32(f, n, mean, 0, &a);
                    else k->sqdev_f64(d, n, mean, 0, &a);
                    t = now() - t;
                    if (t < best[op]) best[op] = t;
                    got[op] = tally_exact_round(&a);
                }
            }
            for (int op = 0; op < 4; op++) {
                if (isa == TALLY_ISA_SCALAR) want[op] = got[op];
                else if (memcmp(&want[op], &got[op], 8)) bad = 1;
            }
            printf("| %s | %s | %.1f | %.1f | %.1f | %.1f |\n", shapes[shape], names[isa],
                   (double)n * 4 / best[0] / 1e9, (double)n * 8 / best[1] / 1e9,
                   (double)n * 4 / best[2] / 1e9, (double)n * 8 / best[3] / 1e9);
        }
    }
    if (bad) fprintf(stderr, "tally_bench_exact: ISA results differ from the scalar kernels\n");
    free(f);
    free(d);
    return bad;
}
