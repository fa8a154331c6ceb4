/* Sums a generated array of prices three ways: tally's correctly rounded sum, a naive float
 * running total, and tally's fused sum+min+max+mean in one pass over the data.
 *   sum_prices [N]        (default 4194304 prices of $5.00 .. $49.99, as in seed 001) */
#include <stdio.h>
#include <stdlib.h>
#include <tally.h>

int main(int argc, char **argv)
{
    unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 4194304ull;
    float *prices = malloc((n ? n : 1) * sizeof *prices);
    if (!prices) {
        fprintf(stderr, "sum_prices: cannot allocate %llu prices\n", n);
        return 1;
    }
    unsigned long long state = 42;
    for (unsigned long long i = 0; i < n; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        prices[i] = 5.0f + (float)((state >> 33) % 4500) / 100.0f;
    }

    tally_context *ctx;
    tally_status st = tally_create(&ctx, NULL);
    if (st != TALLY_OK) {
        fprintf(stderr, "sum_prices: %s: %s\n", tally_status_string(st), tally_create_error());
        return 1;
    }
    const tally_op ops[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX, TALLY_MEAN};
    tally_result r[4];
    st = tally_reduce_many(ctx, TALLY_F32, prices, n, ops, 4, NULL, r);
    if (st != TALLY_OK) {
        fprintf(stderr, "sum_prices: %s: %s\n", tally_status_string(st), tally_last_error(ctx));
        tally_destroy(ctx);
        free(prices);
        return 1;
    }
    float naive = 0.0f;
    for (unsigned long long i = 0; i < n; i++)
        naive += prices[i];

    printf("backend        %s (%d threads, %s)\n", tally_backend_name(tally_active_backend(ctx)),
           tally_thread_count(ctx), tally_isa_name(tally_active_isa(ctx)));
    printf("prices         %llu\n", n);
    printf("sum (tally)    %.2f   correctly rounded\n", r[0].value.f64);
    printf("sum (naive)    %.2f   float running total, off by %.2f\n", (double)naive,
           (double)naive - r[0].value.f64);
    printf("min, max       %.2f, %.2f\n", r[1].value.f64, r[2].value.f64);
    printf("mean           %.6f\n", r[3].value.f64);
    tally_destroy(ctx);
    free(prices);
    return 0;
}
