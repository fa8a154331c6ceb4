/* Exact statistics of a decimal text field. Its values are integers m standing for m / 10^scale
 * (prices in cents): their sum and sum of squares are kept exactly (128 and 384-bit integers),
 * so that the sum, the mean and the variance are each the exact rational rounded once to the
 * nearest double, whatever the number of values or their order:
 *
 *   sum  = S / 10^s,   mean = S / (n 10^s),   var = (n Q - S^2) / (n (n - ddof) 10^(2s))
 *
 * with S = sum m and Q = sum m^2. */
#include "decimal.h"

#include <limits.h>
#include <math.h>
#include <string.h>

const int64_t cli_pow10_i64[19] = {
    1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000, 10000000000,
    100000000000, 1000000000000, 10000000000000, 100000000000000, 1000000000000000,
    10000000000000000, 100000000000000000, 1000000000000000000};

int cli_rescale(const int64_t *v, size_t n, int k, int64_t *out)
{
    const int64_t f = cli_pow10_i64[k];
    for (size_t i = 0; i < n; i++) {
        if (v[i] > INT64_MAX / f || v[i] < INT64_MIN / f) return 0;
        out[i] = v[i] * f;
    }
    return 1;
}

#define W CLI_BIG_LIMBS

static void big_zero(cli_big *a) { memset(a, 0, sizeof *a); }

static void big_from_u128(cli_big *a, unsigned __int128 v)
{
    big_zero(a);
    a->w[0] = (uint64_t)v;
    a->w[1] = (uint64_t)(v >> 64);
}

/* a += b; returns the carry out */
static int big_add(cli_big *a, const cli_big *b)
{
    unsigned __int128 c = 0;
    for (int i = 0; i < W; i++) {
        c += (unsigned __int128)a->w[i] + b->w[i];
        a->w[i] = (uint64_t)c;
        c >>= 64;
    }
    return (int)c;
}

/* a -= b (a >= b) */
static void big_sub(cli_big *a, const cli_big *b)
{
    uint64_t borrow = 0;
    for (int i = 0; i < W; i++) {
        uint64_t x = a->w[i], y = b->w[i];
        uint64_t d = x - y - borrow;
        borrow = (x < y) || (x - y < borrow);
        a->w[i] = d;
    }
}

static int big_cmp(const cli_big *a, const cli_big *b)
{
    for (int i = W - 1; i >= 0; i--)
        if (a->w[i] != b->w[i]) return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

/* a *= m; returns 1 if the product left the integer */
static int big_mul_u64(cli_big *a, uint64_t m)
{
    unsigned __int128 c = 0;
    for (int i = 0; i < W; i++) {
        c += (unsigned __int128)a->w[i] * m;
        a->w[i] = (uint64_t)c;
        c >>= 64;
    }
    return c != 0;
}

static int big_bits(const cli_big *a)
{
    for (int i = W - 1; i >= 0; i--)
        if (a->w[i]) return 64 * i + 64 - __builtin_clzll(a->w[i]);
    return 0;
}

static void big_shl(cli_big *a, int s)
{
    if (s <= 0) return;
    int limbs = s / 64, bits = s % 64;
    for (int i = W - 1; i >= 0; i--) {
        uint64_t v = i - limbs >= 0 ? a->w[i - limbs] << bits : 0;
        if (bits && i - limbs - 1 >= 0) v |= a->w[i - limbs - 1] >> (64 - bits);
        a->w[i] = v;
    }
}

static int big_is_zero(const cli_big *a)
{
    for (int i = 0; i < W; i++)
        if (a->w[i]) return 0;
    return 1;
}

double cli_big_ratio(const cli_big *num, const cli_big *den, int negative)
{
    if (big_is_zero(num)) return 0.0;
    if (big_is_zero(den)) return negative ? -INFINITY : INFINITY;
    /* q = floor(num 2^-e / den) with 55..56 bits, and whether a remainder is left */
    int e = big_bits(num) - big_bits(den) - 55;
    cli_big n = *num, d = *den;
    if (e < 0) big_shl(&n, -e);
    else big_shl(&d, e);
    uint64_t q = 0;
    cli_big t;
    for (int i = 57; i >= 0; i--) {
        t = d;
        big_shl(&t, i);
        if (big_bits(&d) + i <= 64 * W && big_cmp(&n, &t) >= 0) {
            big_sub(&n, &t);
            q |= (uint64_t)1 << i;
        }
    }
    int sticky = !big_is_zero(&n);
    int len = 64 - __builtin_clzll(q);
    int s = len - 53;
    uint64_t keep = q >> s, rem = q & (((uint64_t)1 << s) - 1), half = (uint64_t)1 << (s - 1);
    if (rem > half || (rem == half && (sticky || (keep & 1)))) keep++;
    double v = ldexp((double)keep, e + s);
    return negative ? -v : v;
}

static const uint64_t cli_pow10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
    1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
    1000000000000000000ull, 10000000000000000000ull};

void cli_decimal_init(cli_decimal *a) { memset(a, 0, sizeof *a); }

int cli_decimal_add(cli_decimal *a, const int64_t *v, size_t n)
{
    /* squares in a 128-bit partial, carried into Q before it could overflow (2^126 each) */
    unsigned __int128 part = 0;
    __int128 sum = a->sum;
    cli_big t;
    for (size_t i = 0; i < n; i++) {
        int64_t x = v[i];
        sum += x;
        uint64_t ax = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
        unsigned __int128 sq = (unsigned __int128)ax * ax;
        if (part + sq < part) {
            big_from_u128(&t, part);
            if (big_add(&a->sq, &t)) a->broken = 1;
            part = 0;
        }
        part += sq;
    }
    big_from_u128(&t, part);
    if (big_add(&a->sq, &t)) a->broken = 1;
    a->sum = sum;
    a->n += n;
    return a->broken ? -1 : 0;
}

int cli_decimal_rescale(cli_decimal *a, int new_scale)
{
    int up = new_scale - a->scale;
    if (up <= 0) return 0;
    for (; up > 0; up -= 18) {
        int k = up > 18 ? 18 : up;
        __int128 f = (__int128)cli_pow10[k];
        __int128 lim = (((__int128)1) << 126) / f;
        if (a->sum > lim || a->sum < -lim) a->broken = 1;
        else a->sum *= f;
        if (big_mul_u64(&a->sq, cli_pow10[k]) || big_mul_u64(&a->sq, cli_pow10[k])) a->broken = 1;
    }
    a->scale = new_scale;
    return a->broken ? -1 : 0;
}

int cli_decimal_merge(cli_decimal *a, const cli_decimal *b)
{
    const __int128 lim = ((__int128)1) << 126;
    if (a->scale != b->scale) a->broken = 1;   /* sums of different units do not add */
    if (a->sum > lim || a->sum < -lim || b->sum > lim || b->sum < -lim) a->broken = 1;
    else a->sum += b->sum;
    if (big_add(&a->sq, &b->sq)) a->broken = 1;
    a->n += b->n;
    a->broken |= b->broken;
    return a->broken ? -1 : 0;
}

/* den = c * 10^s (s <= 36 here) */
static void cli_den(cli_big *den, unsigned __int128 c, int s)
{
    big_from_u128(den, c);
    for (; s > 0; s -= 19) big_mul_u64(den, cli_pow10[s > 19 ? 19 : s]);
}

static void cli_abs_sum(const cli_decimal *a, cli_big *num, int *negative)
{
    *negative = a->sum < 0;
    unsigned __int128 m = a->sum < 0 ? 0 - (unsigned __int128)a->sum : (unsigned __int128)a->sum;
    big_from_u128(num, m);
}

double cli_decimal_sum(const cli_decimal *a)
{
    cli_big num, den;
    int neg;
    cli_abs_sum(a, &num, &neg);
    cli_den(&den, 1, a->scale);
    double v = cli_big_ratio(&num, &den, neg);
    return v == 0 ? 0.0 : v;
}

double cli_decimal_mean(const cli_decimal *a)
{
    cli_big num, den;
    int neg;
    cli_abs_sum(a, &num, &neg);
    cli_den(&den, a->n, a->scale);
    return cli_big_ratio(&num, &den, neg);
}

double cli_decimal_var(const cli_decimal *a, int ddof)
{
    /* n Q - S^2 >= 0 (Cauchy-Schwarz), exactly */
    cli_big num = a->sq, s2;
    big_mul_u64(&num, a->n);
    unsigned __int128 m = a->sum < 0 ? 0 - (unsigned __int128)a->sum : (unsigned __int128)a->sum;
    big_from_u128(&s2, (uint64_t)m);
    big_mul_u64(&s2, (uint64_t)m);               /* lo * lo */
    cli_big cross;
    big_from_u128(&cross, (uint64_t)(m >> 64));
    big_mul_u64(&cross, (uint64_t)m);            /* hi * lo, twice, shifted by 64 */
    big_shl(&cross, 65);
    big_add(&s2, &cross);
    cli_big hh;
    big_from_u128(&hh, (uint64_t)(m >> 64));
    big_mul_u64(&hh, (uint64_t)(m >> 64));
    big_shl(&hh, 128);
    big_add(&s2, &hh);
    if (big_cmp(&num, &s2) < 0) return 0.0;       /* cannot happen; kept for safety */
    big_sub(&num, &s2);
    cli_big den;
    cli_den(&den, (unsigned __int128)a->n * (a->n - (uint64_t)ddof), 2 * a->scale);
    return cli_big_ratio(&num, &den, 0);
}
