/* Exact reference results for every reduction, computed here from the definitions in tally.h
 * with integer, __int128 and big fixed-point arithmetic (common.h), independently of the
 * library's code. */
#ifndef TALLY_TEST_REFERENCE_H
#define TALLY_TEST_REFERENCE_H

#include "common.h"

static inline int t_is_float(tally_type t) { return t == TALLY_F32 || t == TALLY_F64; }
static inline int t_is_signed(tally_type t)
{
    return t == TALLY_I8 || t == TALLY_I16 || t == TALLY_I32 || t == TALLY_I64;
}

/* Element i as an exact integer (integer types) or double (float types). */
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
        double mean = (fl ? sum_f : (double)sum_i) / (double)cnt;
        if (op == TALLY_MEAN) { r->value.f64 = mean; break; }
        if (cnt <= (uint64_t)ddof) { r->status = TALLY_ERR_DOMAIN; break; }
        bigfix b;
        bf_init(&b);
        for (uint64_t i = 0; i < n; i++) {
            double v = get_f(t, x, i);
            if (omit_nan && isnan(v)) continue;
            double d = v - mean;
            double hi = d * d, lo = fma(d, d, -hi);
            bf_add(&b, hi);
            if (!isinf(hi)) bf_add(&b, lo); /* an infinite square adds +inf (fma gives NaN) */
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

#define assert_result(got, want, ...)                                                         \
    do {                                                                                      \
        if (!result_matches((got), (want))) {                                                 \
            char g_[128], w_[128];                                                            \
            describe_result(g_, sizeof g_, (got));                                            \
            describe_result(w_, sizeof w_, (want));                                           \
            print_error("%s: got %s, want %s: ", tally_op_name((want)->op), g_, w_);          \
            print_error(__VA_ARGS__);                                                         \
            print_error("\n");                                                                \
            fail();                                                                           \
        }                                                                                     \
    } while (0)

/* ---- test data ---------------------------------------------------------------------------- */
enum data_kind { DATA_RANDOM, DATA_PROD, DATA_SPECIAL };

/* Fills x with n elements of type t. RANDOM: integers over varied magnitudes (64-bit ones kept
 * below 2^49 so sums fit), floats over 80 binades with exact cancellations and signed zeros;
 * PROD: values whose products stay in range; SPECIAL: floats with NaN, inf, -0. */
static inline void fill(tally_type t, void *x, uint64_t n, enum data_kind kind)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        if (t_is_float(t)) {
            double v;
            if (kind == DATA_PROD) {
                v = 1.0 + ((double)(int64_t)(r >> 40) - (double)(1 << 23)) * 0x1p-44;
            } else {
                v = (1.0 + rnd_unit()) * ldexp(1.0, (int)(r % 80) - 40);
                if (r & (1ull << 40)) v = -v;
                if ((r >> 41) % 16 == 0 && i > 0) v = -get_f(t, x, i - 1); /* cancellation */
                if ((r >> 45) % 64 == 0) v = (r >> 51) & 1 ? -0.0 : 0.0;
                if (kind == DATA_SPECIAL) {
                    uint64_t s = (r >> 52) % 97;
                    if (s == 0) v = NAN;
                    else if (s == 1) v = INFINITY;
                    else if (s == 2) v = -INFINITY;
                    else if (s < 8) v = (r >> 58) & 1 ? -0.0 : 0.0;
                }
            }
            if (t == TALLY_F32) ((float *)x)[i] = (float)v;
            else ((double *)x)[i] = v;
        } else {
            int64_t v;
            if (kind == DATA_PROD) {
                uint64_t s = (r >> 32) % 4096;
                v = s == 0 ? 2 : s == 1 ? 3 : (r & 1) ? 1 : -1;
                if (!t_is_signed(t)) v = v < 0 ? 1 : v;
            } else {
                v = (int64_t)(r >> ((r >> 58) % 64)); /* varied magnitudes */
                if (tally_type_size(t) == 8) v >>= 15;
                if (t_is_signed(t) && (r & 1)) v = -v;
            }
            switch (t) {
            case TALLY_I8: ((int8_t *)x)[i] = (int8_t)v; break;
            case TALLY_U8: ((uint8_t *)x)[i] = (uint8_t)v; break;
            case TALLY_I16: ((int16_t *)x)[i] = (int16_t)v; break;
            case TALLY_U16: ((uint16_t *)x)[i] = (uint16_t)v; break;
            case TALLY_I32: ((int32_t *)x)[i] = (int32_t)v; break;
            case TALLY_U32: ((uint32_t *)x)[i] = (uint32_t)v; break;
            case TALLY_I64: ((int64_t *)x)[i] = v; break;
            case TALLY_U64: ((uint64_t *)x)[i] = (uint64_t)v; break;
            default: break;
            }
        }
    }
}

#endif
