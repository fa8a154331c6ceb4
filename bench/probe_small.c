/* probe_small: what the loop of a short exact f32 sum costs on this core, before any fixed cost.
 * Standalone (no tally code): each candidate loop over the same n floats (L1-resident), with
 * every result used, timed as TSC ticks per call (best of 30 x 2000 calls) and as a ratio to the
 * plain loop of bench_exact -s (four AVX-512 accumulators). The loops are the candidates for a
 * correctly rounded sum of a short array (docs/performance.md, "CPU: the short sums' floor"):
 *
 *   plain      vaddps, 4 accumulators (the baseline)
 *   plain8     vaddps, 8 accumulators (the add ports' throughput, not their latency)
 *   cvt64      vcvtps2pd + vaddpd: f32 summed in f64, no check at all
 *   cvt64+int  the same with the exponent checks on the bits (and, max, sub, min)
 *   w32        x * 2^s, vcvtps2dq, vpaddd: W32's conversion and add, no check
 *   w32+max    W32 as it runs with the MXCSR flags (vrangeps max |x| as the bound)
 *   w32+max+widen  the same with the int64 widening every 8 adds per lane (the older SMALL W32)
 *   w32wrap+fsum   W32W (SMALL's f32 method): int32 lanes that wrap, and a float sum of the scaled
 *              floats beside them instead of the max (4 ops per 16 floats, no widening)
 *   w32wrap+fsum{sae}  the same with the float adds raising no flag, as W32W runs; x8: 8 sets
 *   w32+mm     W32 without flags: max |x| and min |x| (both vrangeps), zeros not allowed
 *   w32+mmz    the same with zeros allowed (vfixupimmps maps +-0 to +inf before the min)
 *   magic      x + 1.5*2^23 and vpaddd of the bits (fixed point in f32: 22 bits, no check)
 *
 *   cc -O3 -march=native bench/probe_small.c -o probe_small && ./probe_small [n...]
 * (default n: 1024 4096 16384). x86-64 with AVX-512F/DQ only. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

static float xf[65536] __attribute__((aligned(64)));
static volatile double sink;
#define U4 _Pragma("GCC unroll 4")
#define RED_I(a) _mm512_reduce_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a[0], a[1]), _mm512_add_epi32(a[2], a[3])))
#define RED_MAX(a) _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(a[0], a[1]), _mm512_max_ps(a[2], a[3])))
#define RED_MIN(a) _mm512_reduce_min_ps(_mm512_min_ps(_mm512_min_ps(a[0], a[1]), _mm512_min_ps(a[2], a[3])))

__attribute__((noinline)) static double plain(const float *x, int n) {
    __m512 a[4];
    U4 for (int u = 0; u < 4; u++) a[u] = _mm512_setzero_ps();
    for (int i = 0; i + 64 <= n; i += 64) U4 for (int u = 0; u < 4; u++) a[u] = _mm512_add_ps(a[u], _mm512_loadu_ps(x + i + 16 * u));
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])));
}
__attribute__((noinline)) static double plain8(const float *x, int n) {
    __m512 a[8];
    _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++) a[u] = _mm512_setzero_ps();
    for (int i = 0; i + 128 <= n; i += 128)
        _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++) a[u] = _mm512_add_ps(a[u], _mm512_loadu_ps(x + i + 16 * u));
    _Pragma("GCC unroll 8") for (int u = 1; u < 8; u++) a[0] = _mm512_add_ps(a[0], a[u]);
    return _mm512_reduce_add_ps(a[0]);
}
__attribute__((noinline)) static double cvt64(const float *x, int n) {
    __m512d a[4];
    U4 for (int u = 0; u < 4; u++) a[u] = _mm512_setzero_pd();
    for (int i = 0; i + 32 <= n; i += 32)
        U4 for (int u = 0; u < 4; u++) a[u] = _mm512_add_pd(a[u], _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8 * u)));
    return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a[0], a[1]), _mm512_add_pd(a[2], a[3])));
}
__attribute__((noinline)) static double cvt64_int(const float *x, int n) {
    const __m512i ab = _mm512_set1_epi32(0x7fffffff), one = _mm512_set1_epi32(1);
    __m512d a[4];
    __m512i mx[2], mn[2];
    U4 for (int u = 0; u < 4; u++) a[u] = _mm512_setzero_pd();
    for (int u = 0; u < 2; u++) mx[u] = _mm512_setzero_si512(), mn[u] = _mm512_set1_epi32(-1);
    for (int i = 0; i + 32 <= n; i += 32) {
        for (int u = 0; u < 2; u++) {
            const __m512i b = _mm512_and_si512(_mm512_loadu_si512(x + i + 16 * u), ab);
            mx[u] = _mm512_max_epu32(mx[u], b);
            mn[u] = _mm512_min_epu32(mn[u], _mm512_sub_epi32(b, one));
        }
        U4 for (int u = 0; u < 4; u++) a[u] = _mm512_add_pd(a[u], _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8 * u)));
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a[0], a[1]), _mm512_add_pd(a[2], a[3]))) +
           _mm512_reduce_max_epu32(_mm512_max_epu32(mx[0], mx[1])) + _mm512_reduce_min_epu32(_mm512_min_epu32(mn[0], mn[1]));
}
/* check: 0 none, 1 max, 2 max + min, 3 max + min with zeros */
#define W32_LOOP(check)                                                                                     \
    const __m512 S = _mm512_set1_ps(64.0f);                                                                 \
    __m512i s[4];                                                                                           \
    __m512 mx[4], mn[4];                                                                                    \
    U4 for (int u = 0; u < 4; u++) s[u] = _mm512_setzero_si512(), mx[u] = _mm512_setzero_ps(),              \
                                   mn[u] = _mm512_set1_ps(1e30f);                                           \
    for (int i = 0; i + 64 <= n; i += 64)                                                                   \
        U4 for (int u = 0; u < 4; u++) {                                                                    \
            const __m512 v = _mm512_loadu_ps(x + i + 16 * u);                                               \
            if (check >= 1) mx[u] = _mm512_range_ps(mx[u], v, 0x0B);                                        \
            if (check == 2) mn[u] = _mm512_range_ps(mn[u], v, 0x0A);                                        \
            if (check == 3)                                                                                 \
                mn[u] = _mm512_range_ps(mn[u], _mm512_fixupimm_ps(v, v, _mm512_set1_epi32(0x11111511), 0), 0x0A); \
            s[u] = _mm512_add_epi32(s[u], _mm512_cvtps_epi32(_mm512_mul_ps(v, S)));                         \
        }                                                                                                   \
    return RED_I(s) + (check >= 1 ? RED_MAX(mx) : 0) + (check >= 2 ? RED_MIN(mn) : 0);
__attribute__((noinline)) static double w32(const float *x, int n) { W32_LOOP(0) }
__attribute__((noinline)) static double w32max(const float *x, int n) { W32_LOOP(1) }
__attribute__((noinline)) static double w32mm(const float *x, int n) { W32_LOOP(2) }
__attribute__((noinline)) static double w32mmz(const float *x, int n) { W32_LOOP(3) }
/* W32 as the library's short sum ran it: + the int64 widening after every 8 adds per lane */
__attribute__((noinline)) static double w32maxw(const float *x, int n) {
    const __m512 S = _mm512_set1_ps(64.0f);
    __m512i s[4], w[4][2];
    __m512 mx[4];
    U4 for (int u = 0; u < 4; u++) s[u] = w[u][0] = w[u][1] = _mm512_setzero_si512(), mx[u] = _mm512_setzero_ps();
    int b = 0;
    for (int i = 0; i + 64 <= n; i += 64) {
        U4 for (int u = 0; u < 4; u++) {
            const __m512 v = _mm512_loadu_ps(x + i + 16 * u);
            mx[u] = _mm512_range_ps(mx[u], v, 0x0B);
            s[u] = _mm512_add_epi32(s[u], _mm512_cvtps_epi32(_mm512_mul_ps(v, S)));
        }
        if (++b == 8) {
            U4 for (int u = 0; u < 4; u++) {
                w[u][0] = _mm512_add_epi64(w[u][0], _mm512_cvtepi32_epi64(_mm512_castsi512_si256(s[u])));
                w[u][1] = _mm512_add_epi64(w[u][1], _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(s[u], 1)));
                s[u] = _mm512_setzero_si512();
            }
            b = 0;
        }
    }
    __m512i t = _mm512_setzero_si512();
    U4 for (int u = 0; u < 4; u++) t = _mm512_add_epi64(t, _mm512_add_epi64(w[u][0], w[u][1]));
    return _mm512_reduce_add_epi64(t) + RED_I(s) + RED_MAX(mx);
}
/* W32 with wrapping int32 lanes and a plain f32 sum of the scaled floats beside them (the
 * invalid flag bounds every |y| below 2^31; the float sum then fixes the lanes' multiple of 2^32) */
__attribute__((noinline)) static double w32wrap(const float *x, int n) {
    const __m512 S = _mm512_set1_ps(64.0f);
    __m512i s[4];
    __m512 f[4];
    U4 for (int u = 0; u < 4; u++) s[u] = _mm512_setzero_si512(), f[u] = _mm512_setzero_ps();
    for (int i = 0; i + 64 <= n; i += 64)
        U4 for (int u = 0; u < 4; u++) {
            const __m512 y = _mm512_mul_ps(_mm512_loadu_ps(x + i + 16 * u), S);
            f[u] = _mm512_add_ps(f[u], y);
            s[u] = _mm512_add_epi32(s[u], _mm512_cvtps_epi32(y));
        }
    return RED_I(s) + _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(f[0], f[1]), _mm512_add_ps(f[2], f[3])));
}
__attribute__((noinline)) static double w32wrapsae(const float *x, int n) {
    const __m512 S = _mm512_set1_ps(64.0f);
    __m512i s[4];
    __m512 f[4];
    U4 for (int u = 0; u < 4; u++) s[u] = _mm512_setzero_si512(), f[u] = _mm512_setzero_ps();
    for (int i = 0; i + 64 <= n; i += 64)
        U4 for (int u = 0; u < 4; u++) {
            const __m512 y = _mm512_mul_ps(_mm512_loadu_ps(x + i + 16 * u), S);
            f[u] = _mm512_add_round_ps(f[u], y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            s[u] = _mm512_add_epi32(s[u], _mm512_cvtps_epi32(y));
        }
    return RED_I(s) + _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(f[0], f[1]), _mm512_add_ps(f[2], f[3])));
}
__attribute__((noinline)) static double w32wrap8(const float *x, int n) {
    const __m512 S = _mm512_set1_ps(64.0f);
    __m512i s[8];
    __m512 f[8];
    _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++) s[u] = _mm512_setzero_si512(), f[u] = _mm512_setzero_ps();
    for (int i = 0; i + 128 <= n; i += 128)
        _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++) {
            const __m512 y = _mm512_mul_ps(_mm512_loadu_ps(x + i + 16 * u), S);
            f[u] = _mm512_add_ps(f[u], y);
            s[u] = _mm512_add_epi32(s[u], _mm512_cvtps_epi32(y));
        }
    _Pragma("GCC unroll 8") for (int u = 1; u < 8; u++) f[0] = _mm512_add_ps(f[0], f[u]), s[0] = _mm512_add_epi32(s[0], s[u]);
    return _mm512_reduce_add_epi32(s[0]) + _mm512_reduce_add_ps(f[0]);
}
__attribute__((noinline)) static double magic(const float *x, int n) {
    const __m512 M = _mm512_set1_ps(12582912.0f);
    __m512i s[4];
    U4 for (int u = 0; u < 4; u++) s[u] = _mm512_setzero_si512();
    for (int i = 0; i + 64 <= n; i += 64)
        U4 for (int u = 0; u < 4; u++) s[u] = _mm512_add_epi32(s[u], _mm512_castps_si512(_mm512_add_ps(_mm512_loadu_ps(x + i + 16 * u), M)));
    return RED_I(s);
}

int main(int argc, char **argv) {
    static const int defaults[] = {1024, 4096, 16384};
    const int nn = argc > 1 ? argc - 1 : 3;
    for (int i = 0; i < 65536; i++) xf[i] = (float)((500 + rand() % 4500) / 100.0); /* bench_exact's price-like */
    double (*const fs[])(const float *, int) = {plain, plain8, cvt64, cvt64_int, w32, w32max, w32maxw, w32wrap, w32wrapsae, w32wrap8, w32mm, w32mmz, magic};
    const char *names[] = {"plain", "plain8", "cvt64", "cvt64+int", "w32", "w32+max", "w32+max+widen", "w32wrap+fsum", "w32wrap+fsum{sae}", "w32wrap+fsum x8", "w32+mm", "w32+mmz", "magic"};
    const int K = (int)(sizeof fs / sizeof fs[0]);
    printf("probe_small: TSC ticks per call (best of 30 x 2000), ratio to plain\n\n| loop |");
    for (int a = 0; a < nn; a++) printf(" n = %d |", argc > 1 ? atoi(argv[a + 1]) : defaults[a]);
    printf("\n|---|");
    for (int a = 0; a < nn; a++) printf("---:|");
    printf("\n");
    double t[16][8];
    for (int a = 0; a < nn; a++) {
        int n = argc > 1 ? atoi(argv[a + 1]) : defaults[a];
        if (n < 128 || n > 65536) n = 4096;
        n &= ~127;
        for (int k = 0; k < K; k++) {
            uint64_t best = UINT64_MAX;
            for (int r = 0; r < 30; r++) {
                uint64_t c = __rdtsc();
                double acc = 0;
                for (int j = 0; j < 2000; j++) {
                    const float *q = xf;
                    __asm__ volatile("" : "+r"(q));
                    acc += fs[k](q, n);
                }
                c = __rdtsc() - c;
                sink += acc;
                if (c < best) best = c;
            }
            t[k][a] = best / 2000.0;
        }
    }
    for (int k = 0; k < K; k++) {
        printf("| %s |", names[k]);
        for (int a = 0; a < nn; a++) printf(" %.0f (%.2fx) |", t[k][a], t[k][a] / t[0][a]);
        printf("\n");
    }
    return 0;
}
