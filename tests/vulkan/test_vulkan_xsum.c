/* The Vulkan backend's correctly rounded f32/f64 sums against the CPU backend, bit for bit, on
 * data at the bounds of reduce.comp's batch paths (the default f32_batch/f64_batch and, with
 * TALLY_VULKAN_REDUCE_EXACT=new, the speculative f32_batch4/f64_batch3): exponents spread over S
 * binades with S at and around each path's limit (f32: 24 exponent fields; f64: 31, and the
 * former 7 and 14), the least exponent near the smallest one the paths take (f32: the least
 * normal; f64: field 53) or the greatest near the top of the range, the two edge exponents only,
 * any between, mostly the top one (running sums that grow to the bound and spill), or prices;
 * one sign or both, zeros of either sign, and now and then a NaN, an inf or a subnormal.
 * ctest runs it with one workgroup (TALLY_VULKAN_REDUCE_GROUPS=1) so that each invocation sums
 * thousands of values and its running sums reach the bounds; with the default plan's thousands
 * of workgroups each invocation sees a few batches and never gets there.
 *
 * With TALLY_VULKAN_VALIDATION=1 any validation message fails the run too.
 *
 *   test_vulkan_xsum [TRIALS [MAX_N [SEED]]]     exit 0 all equal, 1 a difference, 77 no device */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tally.h"
#include "tally_vulkan.h"

static uint64_t g_s;
static uint64_t next(void)
{
    uint64_t z = (g_s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return next() % n; }

/* A value with 2^e <= |v| < 2^(e+1) (clamped to the type's range; subnormal below its least
 * normal), a random significand, sign s (+1/-1, 0: random). */
static double val_exp(int f32, int e, int s)
{
    int mb = f32 ? 24 : 53, emin = f32 ? -126 : -1022, emax = f32 ? 127 : 1023, esub = f32 ? -149 : -1074;
    if (e > emax) e = emax;
    if (e < esub) e = esub;
    double v;
    if (e >= emin) {
        v = ldexp((double)((1ull << (mb - 1)) | (next() & ((1ull << (mb - 1)) - 1))), e - (mb - 1));
    } else {
        int b = e - esub;
        v = ldexp((double)((1ull << b) | (next() & ((1ull << b) - 1))), esub);
    }
    if (s == 0) s = (next() & 1) ? 1 : -1;
    return s < 0 ? -v : v;
}

int main(int argc, char **argv)
{
    int trials = argc > 1 ? atoi(argv[1]) : 40;
    uint64_t maxn = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
    g_s = argc > 3 ? strtoull(argv[3], NULL, 0) : 0x5eed;
    printf("test_vulkan_xsum: %d trials, n up to %llu, seed 0x%llx\n", trials, (unsigned long long)maxn,
           (unsigned long long)g_s);
    tally_options o;
    tally_options_init(&o);
    tally_context *cpu, *vk;
    o.backend = TALLY_BACKEND_CPU;
    if (tally_create(&cpu, &o) != TALLY_OK) {
        printf("the CPU backend: %s\n", tally_last_error(NULL));
        return 1;
    }
    o.backend = TALLY_BACKEND_VULKAN;
    if (tally_create(&vk, &o) != TALLY_OK) {
        printf("SKIP: no Vulkan device (%s)\n", tally_last_error(NULL));
        tally_destroy(cpu);
        return 77;
    }
    double *x = malloc(maxn * sizeof *x + 64);
    float *xf = malloc(maxn * sizeof *xf + 64);
    if (!x || !xf) return 1;
    static const int s32[] = {15, 22, 23, 24, 25, 30}, s64[] = {6, 7, 13, 14, 29, 30, 31, 32, 40};
    int fails = 0;
    for (int t = 0; t < trials; t++) {
        int f32 = t & 1;
        uint64_t n = below(4) == 0 ? 1 + below(100) : 1 + below(maxn);
        int S = f32 ? s32[below(6)] : s64[below(9)];
        int lo, kind = (int)below(5);
        if (kind == 0) lo = (f32 ? -126 : 53 - 1023) - 2 + (int)below(5);
        else if (kind == 1) lo = (f32 ? 127 : 1023) - S - (int)below(6);
        else lo = f32 ? (int)below(81) - 40 : (int)below(801) - 400;
        int sign = (int)below(3) - 1, mode = (int)below(4), zeros = below(4) == 0;
        for (uint64_t i = 0; i < n; i++) {
            int e = mode == 0 ? ((next() & 1) ? lo : lo + S)
                  : mode == 1 ? lo + (int)below((uint64_t)S + 1)
                              : (below(32) == 0 ? lo : lo + S);
            double v = mode == 3 ? (double)below(10000000) / 100.0 : val_exp(f32, e, sign);
            if (zeros && below(16) == 0) v = (next() & 1) ? -0.0 : 0.0;
            if (f32) xf[i] = (float)v;
            else x[i] = v;
        }
        if (t == 0 || t == 2) { /* first: f64 values near the top of the range, whose batch sums
                                 * leave at the highest window position (enough of them for the
                                 * bulk loop's batches: 1,793 vectors and up): t 0 of either sign,
                                 * a finite sum; t 2 negative, a sum that overflows to -inf */
            n = maxn < 4000 ? maxn : 4000;
            for (uint64_t i = 0; i < n; i++)
                x[i] = val_exp(0, t == 2 ? 1010 + (int)below(6) : 1014 + (int)below(2), t == 2 ? -1 : 0);
        }
        if (below(10) == 0) { /* a special value somewhere */
            uint64_t p = below(n);
            int k = (int)below(3);
            double v = k == 0 ? NAN : k == 1 ? INFINITY : (f32 ? 1e-40 : 1e-310);
            if (f32) xf[p] = (float)v;
            else x[p] = v;
        }
        tally_type ty = f32 ? TALLY_F32 : TALLY_F64;
        const void *d = f32 ? (const void *)xf : (const void *)x;
        tally_result a, b;
        tally_reduce(cpu, TALLY_SUM, ty, d, n, NULL, &a);
        tally_reduce(vk, TALLY_SUM, ty, d, n, NULL, &b);
        int bad = a.status != b.status || (a.status == TALLY_OK && memcmp(&a.value, &b.value, 8) != 0);
        if (bad) {
            printf("FAIL: trial %d %s n=%llu spread %d from 2^%d sign %d mode %d zeros %d: cpu %a (status %d), "
                   "vulkan %a (status %d) %s\n",
                   t, f32 ? "f32" : "f64", (unsigned long long)n, S, lo, sign, mode, zeros, a.value.f64, (int)a.status,
                   b.value.f64, (int)b.status, b.status != TALLY_OK ? tally_last_error(vk) : "");
            fails++;
        }
    }
    const char *last = "";
    uint64_t msgs = tally_vulkan_validation_messages(vk, &last);
    const char *val = getenv("TALLY_VULKAN_VALIDATION");
    if (val && *val && strcmp(val, "0")) {
        printf("validation layer: %llu messages%s%s\n", (unsigned long long)msgs, msgs ? "; the last: " : "",
               msgs ? last : "");
        if (msgs) fails++;
    }
    printf("test_vulkan_xsum: %d passed, %d failed\n", trials - fails, fails);
    free(x);
    free(xf);
    tally_destroy(vk);
    tally_destroy(cpu);
    return fails ? 1 : 0;
}
