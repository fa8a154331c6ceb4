/* Exact sums of decimal values m / 10^scale, and their sum, mean and variance rounded once. */
#ifndef TALLY_CLI_DECIMAL_H
#define TALLY_CLI_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

#define CLI_BIG_LIMBS 6
typedef struct cli_big { uint64_t w[CLI_BIG_LIMBS]; } cli_big;   /* little-endian limbs */

typedef struct cli_decimal {
    __int128 sum;              /* S = sum of m */
    cli_big sq;                /* Q = sum of m^2 */
    uint64_t n;
    int scale;
    int broken;                /* a bound was passed (cannot happen below 2^63 values) */
} cli_decimal;

/* 10^k for k = 0 .. 18: every power of ten in int64. */
extern const int64_t cli_pow10_i64[19];
/* out[i] = v[i] * 10^k (0 <= k <= 18; out may be v). 1, or 0 if one does not fit int64 (out is
 * then partly written). */
int cli_rescale(const int64_t *v, size_t n, int k, int64_t *out);

/* num / den rounded to the nearest double, ties to even (negated when negative). */
double cli_big_ratio(const cli_big *num, const cli_big *den, int negative);

void cli_decimal_init(cli_decimal *a);
/* Adds n values at a's scale. 0, or -1 if the sums left their integers. */
int cli_decimal_add(cli_decimal *a, const int64_t *v, size_t n);
/* Multiplies what was added by 10^(new_scale - scale). 0, or -1 as above. */
int cli_decimal_rescale(cli_decimal *a, int new_scale);
/* a += b: the sums of two sets of values at one scale. 0, or -1 as above (or when the scales
 * differ). */
int cli_decimal_merge(cli_decimal *a, const cli_decimal *b);
double cli_decimal_sum(const cli_decimal *a);
double cli_decimal_mean(const cli_decimal *a);          /* n > 0 */
double cli_decimal_var(const cli_decimal *a, int ddof); /* n > ddof */

#endif
