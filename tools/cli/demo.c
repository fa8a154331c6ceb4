/* tally demo: the seeds' examples on each backend.
 *
 *   seed 000: 256 hashed prices as u32 cents, fused sum/min/max (693720, 500, 4999);
 *   seed 001: 4,194,304 f32 prices summed four ways (exact rational, tally's correctly rounded
 *             sum, NumPy-style pairwise f32, naive f32 running total);
 *   seed 003: the inclusive scan of (l * 7) % 5 for l < 256, ending at 510. */
#include "cli.h"
#include "tally_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* NumPy-style pairwise float sum (8 accumulators below 128 elements), in float. */
static float cli_pairwise_f32(const float *a, uint64_t n)
{
    if (n < 8) {
        float s = 0;
        for (uint64_t i = 0; i < n; i++) s += a[i];
        return s;
    }
    if (n <= 128) {
        float r[8];
        for (int k = 0; k < 8; k++) r[k] = a[k];
        uint64_t i;
        for (i = 8; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) r[k] += a[i + k];
        float s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) s += a[i];
        return s;
    }
    uint64_t half = n / 2;
    half -= half % 8;
    return cli_pairwise_f32(a, half) + cli_pairwise_f32(a + half, n - half);
}

static uint64_t cli_splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Exact decimal of t / 2^21 (t >= 0). */
static void cli_dyadic_text(int64_t t, char *buf, size_t len)
{
    uint64_t ip = (uint64_t)t >> 21, fp = (uint64_t)t & ((1u << 21) - 1);
    unsigned __int128 digits = (unsigned __int128)fp * 476837158203125ull; /* fp * 5^21 */
    char frac[32];
    for (int k = 20; k >= 0; k--) {
        frac[k] = (char)('0' + (int)(digits % 10));
        digits /= 10;
    }
    int e = 21;
    while (e > 1 && frac[e - 1] == '0') e--;
    frac[e] = '\0';
    snprintf(buf, len, "%llu.%s", (unsigned long long)ip, frac);
}

int cli_demo(const cli_opts *o)
{
    int bad = 0;
    /* seed 000: 256 hashed prices in cents */
    uint32_t cents[256];
    for (uint32_t l = 0; l < 256; l++) cents[l] = 500 + (uint32_t)(l * 2654435761u) % 4500;
    /* seed 001: 4,194,304 prices, $5.00 to $50.00, as float32 */
    const uint64_t N = 4194304;
    float *prices = malloc(N * sizeof *prices);
    if (!prices) { cli_error("out of memory"); return 1; }
    uint64_t seed = 1;
    int64_t exact = 0;                 /* the f32 values times 2^21: integers, summed exactly */
    float naive = 0;
    for (uint64_t i = 0; i < N; i++) {
        uint32_t c = 500 + (uint32_t)(cli_splitmix(&seed) % 4501);
        prices[i] = (float)(c / 100.0);
        exact += (int64_t)ldexp((double)prices[i], 21);
        naive += prices[i];
    }
    float pairwise = cli_pairwise_f32(prices, N);
    double exact_rounded = ldexp((double)exact, -21);
    char ex[64], b1[40], b2[40], b3[40];
    cli_dyadic_text(exact, ex, sizeof ex);
    /* seed 003: copies sold per day */
    uint32_t sold[256], running[256], scanned[256];
    uint32_t acc = 0;
    for (uint32_t l = 0; l < 256; l++) {
        sold[l] = (l * 7) % 5;
        acc += sold[l];
        running[l] = acc;
    }
    int ran = 0;
    for (int k = TALLY_BACKEND_CPU; k < TALLY_BACKEND_KIND_COUNT; k++) {
        tally_backend_kind kind = (tally_backend_kind)k;
        if (!tally_backend_available(kind)) continue;
        if (o->backend != TALLY_BACKEND_AUTO && o->backend != kind) continue;
        tally_context *ctx = cli_context(o, kind, 0);
        if (!ctx) { bad = 1; continue; }
        ran++;
        const char *dev = tally_device_description(ctx);
        printf("== backend %s%s%s%s\n", tally_backend_name(kind), dev && *dev ? " (" : "",
               dev && *dev ? dev : "", dev && *dev ? ")" : "");
        tally_op ops[3] = {TALLY_SUM, TALLY_MIN, TALLY_MAX};
        tally_result r[3];
        tally_status s = tally_reduce_many(ctx, TALLY_U32, cents, 256, ops, 3, NULL, r);
        int ok = s == TALLY_OK && r[0].value.u64 == 693720 && r[1].value.u64 == 500 &&
                 r[2].value.u64 == 4999;
        printf("seed 000  256 hashed prices (u32 cents), one fused pass:\n"
               "          sum %llu  min %llu  max %llu   %s (expected 693720, 500, 4999)\n",
               (unsigned long long)r[0].value.u64, (unsigned long long)r[1].value.u64,
               (unsigned long long)r[2].value.u64, ok ? "ok" : "MISMATCH");
        bad |= !ok;
        tally_result sr;
        s = tally_reduce(ctx, TALLY_SUM, TALLY_F32, prices, N, NULL, &sr);
        ok = s == TALLY_OK && sr.value.f64 == exact_rounded;
        printf("seed 001  4,194,304 prices (f32), summed four ways:\n"
               "          exact (rational)            %s\n"
               "          tally (correctly rounded)   %s   %s\n"
               "          pairwise f32 (NumPy-style)  %s\n"
               "          naive f32 running total     %s\n",
               ex, tio_format_double(sr.value.f64, b1), ok ? "ok" : "MISMATCH",
               tio_format_double((double)pairwise, b2), tio_format_double((double)naive, b3));
        bad |= !ok;
        s = tally_scan(ctx, TALLY_SUM, TALLY_U32, sold, scanned, 256, NULL);
        ok = s == TALLY_OK && memcmp(scanned, running, sizeof running) == 0;
        printf("seed 003  inclusive scan of 256 values (l*7)%%5:\n          ");
        for (int i = 0; i < 12; i++) printf("%u, ", scanned[i]);
        printf("..., %u   %s (a sequential running sum ends at %u)\n", scanned[255],
               ok ? "ok" : "MISMATCH", running[255]);
        bad |= !ok;
        tally_destroy(ctx);
    }
    free(prices);
    if (!ran) { cli_error("no backend to run on"); return 1; }
    return bad;
}

