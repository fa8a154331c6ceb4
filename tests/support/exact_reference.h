/* Exact reference results for every reduction of tally.h, written from the definitions with
 * integer, __int128 and big fixed-point arithmetic, independently of the library's code (no
 * superaccumulator, no expansions, no shared header but tally.h). Used by the core tests and by
 * the adversarial harness; plain C, no test framework.
 *
 * The float sums: a big two's-complement fixed-point number with immediate carries (slow, plain,
 * obviously right), wide enough for any sum of doubles and any sum of exact squares of doubles;
 * rounding once at the end with the bits read one by one and the result built with ldexp. */
#ifndef TALLY_TEST_EXACT_REFERENCE_H
#define TALLY_TEST_EXACT_REFERENCE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "tally.h"

/* Bitwise equality of doubles, with every NaN equal to every NaN. */
static inline int same_double(double a, double b)
{
    if (isnan(a) && isnan(b)) return 1;
    return memcmp(&a, &b, sizeof a) == 0;
}

/* ---- a big two's-complement fixed-point number ---------------------------------------------
 * value = (signed integer in w[0..BF_WORDS-1], 32 bits a word, little-endian) * 2^-BF_LSB.
 * Squares of doubles reach down to 2^-2148 and up to 2^2048: BF_LSB = 2200 and 140 words (up to
 * 2^2279) leave room for 2^31 of the largest squares. */
#define BF_WORDS 140
#define BF_LSB 2200
typedef struct bigfix {
    uint32_t w[BF_WORDS];
    int nan, pinf, ninf, any, nonnegzero;
} bigfix;

static inline void bf_init(bigfix *b) { memset(b, 0, sizeof *b); }

/* Adds (or subtracts) the integer m << shift (m < 2^64), propagating the carry (borrow) as far
 * as it goes; the two's complement wraps at the top word. */
static inline void bf_add_shifted(bigfix *b, uint64_t m, int shift, int negative)
{
    int wi = shift / 32, s = shift % 32;
    unsigned __int128 v = (unsigned __int128)m << s;
    int64_t carry = 0;
    for (int k = wi; k < BF_WORDS; k++) {
        int64_t part = k - wi < 4 ? (int64_t)(uint32_t)(v >> (32 * (k - wi))) : 0;
        if (k - wi >= 4 && carry == 0) break;
        int64_t t = (int64_t)b->w[k] + (negative ? -part : part) + carry;
        b->w[k] = (uint32_t)t;
        carry = (t - (int64_t)(uint32_t)t) / ((int64_t)1 << 32); /* -1, 0 or 1 */
    }
}

/* |x| = M * 2^E with M a 53-bit integer (exact for every finite nonzero double). */
static inline void bf_split(double x, uint64_t *M, int *E)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int be = (int)((b >> 52) & 0x7ff);
    uint64_t frac = b & ((1ull << 52) - 1);
    *M = be ? frac | (1ull << 52) : frac; /* subnormals: no hidden bit, the least exponent */
    *E = (be ? be : 1) - 1075;
}

static inline void bf_add(bigfix *b, double x)
{
    if (isnan(x)) { b->nan = 1; b->any = 1; b->nonnegzero = 1; return; }
    if (isinf(x)) { if (x > 0) b->pinf = 1; else b->ninf = 1; b->any = b->nonnegzero = 1; return; }
    b->any = 1;
    if (!(x == 0 && signbit(x))) b->nonnegzero = 1;
    if (x == 0) return;
    uint64_t M;
    int E;
    bf_split(x, &M, &E);
    bf_add_shifted(b, M, E + BF_LSB, x < 0);
}

/* Adds d * d exactly (d finite): M^2 has up to 106 bits, added as two pieces. */
static inline void bf_add_square(bigfix *b, double d)
{
    if (isnan(d)) { b->nan = 1; b->any = b->nonnegzero = 1; return; }
    if (isinf(d)) { b->pinf = 1; b->any = b->nonnegzero = 1; return; }
    b->any = 1;
    b->nonnegzero = 1; /* a square is +0 or positive */
    if (d == 0) return;
    uint64_t M;
    int E;
    bf_split(d, &M, &E);
    unsigned __int128 sq = (unsigned __int128)M * M;
    int shift = 2 * E + BF_LSB;
    bf_add_shifted(b, (uint64_t)sq, shift, 0);
    bf_add_shifted(b, (uint64_t)(sq >> 64), shift + 64, 0);
}

/* Correctly rounded (nearest, ties to even) double, with tally.h's special cases: NaN for a NaN
 * or both infinities, the infinity of one sign, -0.0 only when values were added and all were
 * -0.0, +-inf when the rounding goes beyond DBL_MAX. */
static inline double bf_round(const bigfix *b0)
{
    if (b0->nan || (b0->pinf && b0->ninf)) return NAN;
    if (b0->pinf) return INFINITY;
    if (b0->ninf) return -INFINITY;
    bigfix b = *b0;
    int neg = (b.w[BF_WORDS - 1] >> 31) & 1;
    if (neg) { /* negate */
        uint64_t carry = 1;
        for (int k = 0; k < BF_WORDS; k++) {
            uint64_t t = (uint64_t)(uint32_t)~b.w[k] + carry;
            b.w[k] = (uint32_t)t;
            carry = t >> 32;
        }
    }
    int h = -1;
    for (int k = BF_WORDS * 32 - 1; k >= 0; k--)
        if ((b.w[k / 32] >> (k % 32)) & 1) { h = k; break; }
    if (h < 0) return (b.any && !b.nonnegzero) ? -0.0 : 0.0;
#define BF_BIT(k) ((k) >= 0 ? (int)((b.w[(k) / 32] >> ((k) % 32)) & 1) : 0)
    int lo = h - 52, sub = BF_LSB - 1074; /* the 2^-1074 bit */
    if (lo < sub) lo = sub;
    uint64_t mant = 0;
    for (int k = h; k >= lo; k--) mant = (mant << 1) | (uint64_t)BF_BIT(k);
    int half = BF_BIT(lo - 1), sticky = 0;
    for (int k = lo - 2; k >= 0 && !sticky; k--) sticky = BF_BIT(k);
#undef BF_BIT
    if (half && (sticky || (mant & 1))) mant++;
    double r = ldexp((double)mant, lo - BF_LSB); /* exact, or inf beyond the range */
    return neg ? -r : r;
}

/* ---- element access ------------------------------------------------------------------------ */
static inline int t_is_float(tally_type t) { return t == TALLY_F32 || t == TALLY_F64; }
static inline int t_is_signed(tally_type t)
{
    return t == TALLY_I8 || t == TALLY_I16 || t == TALLY_I32 || t == TALLY_I64;
}

/* Element i as an exact integer (integer types). */
static inline __int128 get_i(tally_type t, const void *x, uint64_t i)
{
    switch (t) {
    case TALLY_I8: return ((const int8_t *)x)[i];
    case TALLY_U8: return ((const uint8_t *)x)[i];
    case TALLY_I16: return ((const int16_t *)x)[i];
    case TALLY_U16: return ((const uint16_t *)x)[i];
    case TALLY_I32: return ((const int32_t *)x)[i];
    case TALLY_U32: return ((const uint32_t *)x)[i];
    case TALLY_I64: return ((const int64_t *)x)[i];
    case TALLY_U64: return ((const uint64_t *)x)[i];
    default: return 0;
    }
}
/* Element i as a double (exact for float types). */
static inline double get_f(tally_type t, const void *x, uint64_t i)
{
    if (t == TALLY_F32) return ((const float *)x)[i];
    if (t == TALLY_F64) return ((const double *)x)[i];
    return (double)get_i(t, x, i);
}

static inline void set_int_result(tally_result *r, tally_type t, __int128 v)
{
    if (t_is_signed(t)) {
        if (v > INT64_MAX || v < INT64_MIN) r->status = TALLY_ERR_OVERFLOW;
        else { r->type = TALLY_I64; r->value.i64 = (int64_t)v; }
    } else {
        if (v > (__int128)UINT64_MAX || v < 0) r->status = TALLY_ERR_OVERFLOW;
        else { r->type = TALLY_U64; r->value.u64 = (uint64_t)v; }
    }
}

/* a < b in IEEE 754-2019 minimum's order (-0 < +0); no NaNs. */
static inline int ieee_less(double a, double b)
{
    if (a < b) return 1;
    return a == b && a == 0 && signbit(a) && !signbit(b);
}

/* The result of op over x[0..n-1] as tally.h defines it. */
static inline void ref_reduce(tally_type t, const void *x, uint64_t n, tally_op op, int omit_nan,
                              int ddof, tally_result *r)
{
    memset(r, 0, sizeof *r);
    r->op = op;
    r->status = TALLY_OK;
    r->type = t_is_float(t) ? TALLY_F64 : t_is_signed(t) ? TALLY_I64 : TALLY_U64;
    int fl = t_is_float(t);
    uint64_t nans = 0;
    if (fl)
        for (uint64_t i = 0; i < n; i++) nans += isnan(get_f(t, x, i)) ? 1 : 0;
    uint64_t cnt = (fl && omit_nan) ? n - nans : n;
    switch (op) {
    case TALLY_SUM:
    case TALLY_MEAN:
    case TALLY_VAR: {
        double sum_f = 0;
        __int128 sum_i = 0;
        if (fl) {
            bigfix b;
            bf_init(&b);
            for (uint64_t i = 0; i < n; i++) {
                double v = get_f(t, x, i);
                if (omit_nan && isnan(v)) continue;
                bf_add(&b, v);
            }
            sum_f = bf_round(&b);
        } else {
            for (uint64_t i = 0; i < n; i++) sum_i += get_i(t, x, i);
        }
        if (op == TALLY_SUM) {
            if (fl) r->value.f64 = sum_f;
            else set_int_result(r, t, sum_i);
            break;
        }
        r->type = TALLY_F64;
        if (cnt == 0) { r->status = TALLY_ERR_EMPTY; break; }
        /* mean: the correctly rounded sum (integers: the exact sum rounded once) over n */
        double mean = (fl ? sum_f : (double)sum_i) / (double)cnt;
        if (op == TALLY_MEAN) { r->value.f64 = mean; break; }
        if (cnt <= (uint64_t)ddof) { r->status = TALLY_ERR_DOMAIN; break; }
        /* var: the exact sum of the squared deviations d = fl(x - mean), each square taken as
         * tally.h defines it: fl(d*d) + fl(d*d - fl(d*d)), which is d*d exactly unless d*d is
         * below 2^-968 (then the second term is rounded to a subnormal); an infinite square
         * adds +inf alone */
        bigfix b;
        bf_init(&b);
        for (uint64_t i = 0; i < n; i++) {
            double v = get_f(t, x, i);
            if (omit_nan && isnan(v)) continue;
            double d = v - mean;
            double hi = d * d;
            if (isnan(hi) || isinf(hi)) { bf_add(&b, hi); continue; }
            double lo = fma(d, d, -hi);
            if (fabs(hi) >= 0x1p-968) { /* the split is exact: check it against the exact square */
                bigfix sq, pair;
                bf_init(&sq);
                bf_init(&pair);
                bf_add_square(&sq, d);
                bf_add(&pair, hi);
                bf_add(&pair, lo);
                if (memcmp(sq.w, pair.w, sizeof sq.w) != 0) { r->status = TALLY_ERR_BACKEND_FAILURE; return; }
            }
            bf_add(&b, hi);
            bf_add(&b, lo);
            b.nonnegzero = 1;
        }
        r->value.f64 = bf_round(&b) / (double)(cnt - (uint64_t)ddof);
        break;
    }
    case TALLY_PROD:
        if (fl) { /* the order tally.h fixes: 4096-element blocks, 8 lanes */
            double total = 1.0;
            for (uint64_t b0 = 0; b0 < n; b0 += 4096) {
                double lane[8] = {1, 1, 1, 1, 1, 1, 1, 1};
                for (uint64_t i = b0; i < n && i < b0 + 4096; i++) {
                    double v = get_f(t, x, i);
                    if (omit_nan && isnan(v)) continue;
                    lane[(i - b0) % 8] *= v;
                }
                double bp = lane[0];
                for (int j = 1; j < 8; j++) bp *= lane[j];
                total *= bp;
            }
            r->value.f64 = total;
        } else {
            __int128 p = 1;
            int zero = 0, ovf = 0;
            for (uint64_t i = 0; i < n; i++) {
                __int128 v = get_i(t, x, i);
                if (v == 0) zero = 1;
                if (!ovf && __builtin_mul_overflow(p, v, &p)) ovf = 1;
            }
            if (zero) set_int_result(r, t, 0);
            else if (ovf) r->status = TALLY_ERR_OVERFLOW;
            else set_int_result(r, t, p);
        }
        break;
    case TALLY_MIN:
    case TALLY_MAX:
    case TALLY_ARGMIN:
    case TALLY_ARGMAX: {
        int want_min = op == TALLY_MIN || op == TALLY_ARGMIN;
        if (n == 0) { r->status = TALLY_ERR_EMPTY; break; }
        if (fl) {
            if (!omit_nan && nans) {
                r->value.f64 = NAN;
                for (uint64_t i = 0; i < n; i++)
                    if (isnan(get_f(t, x, i))) { r->index = i; break; }
                break;
            }
            if (cnt == 0) { r->status = TALLY_ERR_EMPTY; break; }
            int have = 0;
            double best = 0;
            for (uint64_t i = 0; i < n; i++) {
                double v = get_f(t, x, i);
                if (isnan(v)) continue;
                if (!have || (want_min ? ieee_less(v, best) : ieee_less(best, v))) {
                    best = v;
                    r->index = i;
                    have = 1;
                }
            }
            r->value.f64 = best;
        } else {
            __int128 best = get_i(t, x, 0);
            for (uint64_t i = 1; i < n; i++) {
                __int128 v = get_i(t, x, i);
                if (want_min ? v < best : v > best) { best = v; r->index = i; }
            }
            set_int_result(r, t, best);
        }
        if (op == TALLY_MIN || op == TALLY_MAX) r->index = 0;
        break;
    }
    case TALLY_AND:
    case TALLY_OR:
    case TALLY_XOR: {
        /* signed: sign-extended values; unsigned: zero-extended */
        uint64_t mask = ~0ull;
        size_t bits = tally_type_size(t) * 8;
        if (!t_is_signed(t) && bits < 64) mask = (1ull << bits) - 1;
        uint64_t a = op == TALLY_AND ? mask : 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t v = (uint64_t)(int64_t)get_i(t, x, i);
            if (!t_is_signed(t)) v = (uint64_t)get_i(t, x, i);
            a = op == TALLY_AND ? a & v : op == TALLY_OR ? a | v : a ^ v;
        }
        r->value.u64 = a;
        break;
    }
    case TALLY_COUNT:
        r->type = TALLY_U64;
        r->value.u64 = cnt;
        break;
    }
}

/* 1 if got equals want (status; type, value bits and index where they matter). */
static inline int result_matches(const tally_result *got, const tally_result *want)
{
    if (got->status != want->status || got->op != want->op) return 0;
    if (want->status != TALLY_OK) return 1;
    if (got->type != want->type) return 0;
    if (want->type == TALLY_F64) {
        if (!same_double(got->value.f64, want->value.f64)) return 0;
    } else if (got->value.u64 != want->value.u64) {
        return 0;
    }
    if (want->op == TALLY_ARGMIN || want->op == TALLY_ARGMAX) return got->index == want->index;
    return 1;
}

static inline void describe_result(char *buf, size_t len, const tally_result *r)
{
    if (r->status != TALLY_OK)
        snprintf(buf, len, "%s", tally_status_name(r->status));
    else if (r->type == TALLY_F64)
        snprintf(buf, len, "%.17g (%a) idx %llu", r->value.f64, r->value.f64,
                 (unsigned long long)r->index);
    else if (r->type == TALLY_I64)
        snprintf(buf, len, "%lld idx %llu", (long long)r->value.i64, (unsigned long long)r->index);
    else
        snprintf(buf, len, "%llu idx %llu", (unsigned long long)r->value.u64,
                 (unsigned long long)r->index);
}

#endif
