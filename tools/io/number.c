/* Number parsing and shortest round-trip formatting.
 *
 * Integers are exact. Decimals take Clinger's fast path when it is exact: at most 19
 * significant digits whose value w <= 2^53 and a power of ten 10^k with |k| <= 22 (every such
 * power is an exact double), so w * 10^k or w / 10^k is one IEEE operation on exact operands:
 * correctly rounded. Everything else (long mantissas, large exponents, subnormals) goes to the C
 * library's strtod, which glibc rounds correctly. The CLI never calls setlocale, so strtod's
 * decimal point is '.'. */
#include "tally_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double tio_pow10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int tio_is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* Case-insensitive match of the whole of [p, end) against word. */
static int tio_word_is(const char *p, const char *end, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(end - p) != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != word[i]) return 0;
    }
    return 1;
}

static double tio_strtod_slice(const char *p, const char *end)
{
    char small[128];
    size_t n = (size_t)(end - p);
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) return NAN;
    memcpy(buf, p, n);
    buf[n] = '\0';
    double v = strtod(buf, NULL);
    if (buf != small) free(buf);
    return v;
}

double tio_decimal_to_double(int64_t m, int scale)
{
    if (scale == 0) return (double)m;
    uint64_t a = m < 0 ? 0 - (uint64_t)m : (uint64_t)m;
    if (a <= (UINT64_C(1) << 53) && scale <= 22) return (double)m / tio_pow10[scale];
    /* rare: let strtod round the decimal text */
    char buf[48], digits[24];
    int nd = snprintf(digits, sizeof digits, "%llu", (unsigned long long)a);
    char *o = buf;
    if (m < 0) *o++ = '-';
    if (nd <= scale) {
        o += sprintf(o, "0.");
        for (int k = 0; k < scale - nd; k++) *o++ = '0';
        strcpy(o, digits);
    } else {
        memcpy(o, digits, (size_t)(nd - scale));
        o += nd - scale;
        *o++ = '.';
        strcpy(o, digits + nd - scale);
    }
    return strtod(buf, NULL);
}

tio_num_kind tio_parse_number(const char *s, size_t len, int64_t *iv, double *dv)
{
    int scale;
    tio_num_kind k = tio_parse_number_scaled(s, len, iv, &scale, dv);
    if (k == TIO_NUM_INT && scale > 0) {
        *dv = tio_decimal_to_double(*iv, scale);
        return TIO_NUM_FLOAT;
    }
    return k;
}

tio_num_kind tio_parse_number_scaled(const char *s, size_t len, int64_t *iv, int *scale,
                                     double *dv)
{
    *scale = 0;
    const char *p = s, *end = s + len;
    while (p < end && tio_is_blank(*p)) p++;
    while (end > p && tio_is_blank(end[-1])) end--;
    if (p == end) return TIO_NUM_INVALID;
    const char *start = p;
    int neg = 0;
    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        p++;
    }
    const char *after_sign = p;
    uint64_t mant = 0;     /* the first 19 significant digits */
    int ndig = 0;          /* significant digits held in mant */
    int64_t exp10 = 0;     /* value = mant * 10^exp10 (+ dropped digits) */
    int dropped = 0;       /* a nonzero digit did not fit in mant */
    int any = 0, saw_point = 0, saw_exp = 0;
    while (p < end && (unsigned)(*p - '0') < 10) {
        unsigned d = (unsigned)(*p - '0');
        any = 1;
        if (ndig < 19) {
            mant = mant * 10 + d;
            if (mant) ndig++;
        } else {
            exp10++;
            if (d) dropped = 1;
        }
        p++;
    }
    if (p == end) {
        if (!any) return TIO_NUM_INVALID;
        if (exp10 == 0) {          /* at most 19 digits: an int64 if it fits */
            if (!neg && mant <= (uint64_t)INT64_MAX) {
                *iv = (int64_t)mant;
                return TIO_NUM_INT;
            }
            if (neg && mant <= (uint64_t)INT64_MAX + 1) {
                *iv = mant == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mant;
                return TIO_NUM_INT;
            }
        }
    } else {
        if (*p == '.') {
            saw_point = 1;
            p++;
            while (p < end && (unsigned)(*p - '0') < 10) {
                unsigned d = (unsigned)(*p - '0');
                any = 1;
                if (ndig < 19) {
                    mant = mant * 10 + d;
                    if (mant) ndig++;
                    exp10--;
                } else if (d) {
                    dropped = 1;
                }
                p++;
            }
        }
        if (!any) {
            /* inf, infinity, nan: only without digits, after the optional sign */
            p = after_sign;
            if (tio_word_is(p, end, "inf") || tio_word_is(p, end, "infinity")) {
                *dv = neg ? -INFINITY : INFINITY;
                return TIO_NUM_FLOAT;
            }
            if (tio_word_is(p, end, "nan")) {
                *dv = NAN;
                return TIO_NUM_FLOAT;
            }
            return TIO_NUM_INVALID;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
            saw_exp = 1;
            p++;
            int eneg = 0;
            if (p < end && (*p == '+' || *p == '-')) {
                eneg = *p == '-';
                p++;
            }
            if (p == end || (unsigned)(*p - '0') >= 10) return TIO_NUM_INVALID;
            int64_t e = 0;
            while (p < end && (unsigned)(*p - '0') < 10) {
                if (e < 100000000) e = e * 10 + (*p - '0');
                p++;
            }
            exp10 += eneg ? -e : e;
        }
        if (p != end) return TIO_NUM_INVALID;
        /* a plain decimal (no exponent, at most 18 digits, not -0.0): exact as mant * 10^-k */
        if (!dropped && saw_point && !saw_exp && exp10 < 0 && exp10 >= -TIO_MAX_SCALE &&
            mant <= UINT64_C(999999999999999999) &&
            !(neg && mant == 0)) {
            *iv = neg ? -(int64_t)mant : (int64_t)mant;
            *scale = (int)-exp10;
            return TIO_NUM_INT;
        }
    }
    /* Clinger's exact cases. */
    if (!dropped && mant <= (UINT64_C(1) << 53)) {
        double v;
        int ok = 1;
        if (mant == 0)
            v = 0.0;
        else if (exp10 == 0)
            v = (double)mant;
        else if (exp10 > 0 && exp10 <= 22)
            v = (double)mant * tio_pow10[exp10];
        else if (exp10 < 0 && exp10 >= -22)
            v = (double)mant / tio_pow10[-exp10];
        else if (exp10 > 22 && exp10 <= 22 + 16) {
            /* 1234e25 = (1234 * 10^3) * 10^22 when the first factor stays exact */
            uint64_t m = mant;
            for (int64_t k = exp10 - 22; k > 0 && ok; k--) {
                if (m > (UINT64_C(1) << 53) / 10) ok = 0;
                else m *= 10;
            }
            v = ok ? (double)m * tio_pow10[22] : 0.0;
        } else
            ok = 0;
        if (ok) {
            *dv = neg ? -v : v;
            return TIO_NUM_FLOAT;
        }
    }
    *dv = tio_strtod_slice(start, end);
    return TIO_NUM_FLOAT;
}

/* Lays out the shortest digits: plain notation for decimal exponents -5..16 (693720, 0.001,
 * 274966082.42), scientific beyond (1e+300, 5e-324). prec_max 17 for double, 9 for float. */
static char *tio_format_shortest(double v, int prec_max, int is_float, char *buf)
{
    if (isnan(v)) return strcpy(buf, "nan");
    if (isinf(v)) return strcpy(buf, v < 0 ? "-inf" : "inf");
    if (v == 0) return strcpy(buf, signbit(v) ? "-0" : "0");
    char e[40];
    int prec = 1;
    for (; prec <= prec_max; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, v);
        if (is_float ? strtof(e, NULL) == (float)v : strtod(e, NULL) == v) break;
    }
    if (prec > prec_max) prec = prec_max;
    /* e = [-]d[.ddd]e[+-]XX */
    char digits[24];
    int nd = 0, neg = e[0] == '-';
    const char *q = e + neg;
    for (; *q && *q != 'e'; q++)
        if (*q != '.') digits[nd++] = *q;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = '\0';
    int x = atoi(q + 1);
    char *o = buf;
    if (neg) *o++ = '-';
    if (x < -5 || x > 16) {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, (size_t)nd - 1);
            o += nd - 1;
        }
        sprintf(o, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
    } else if (x >= nd - 1) {
        memcpy(o, digits, (size_t)nd);
        o += nd;
        for (int k = 0; k < x - (nd - 1); k++) *o++ = '0';
        *o = '\0';
    } else if (x >= 0) {
        memcpy(o, digits, (size_t)x + 1);
        o += x + 1;
        *o++ = '.';
        memcpy(o, digits + x + 1, (size_t)(nd - x - 1));
        o += nd - x - 1;
        *o = '\0';
    } else {
        *o++ = '0';
        *o++ = '.';
        for (int k = 0; k < -x - 1; k++) *o++ = '0';
        memcpy(o, digits, (size_t)nd);
        o[nd] = '\0';
    }
    return buf;
}

char *tio_format_double(double v, char *buf) { return tio_format_shortest(v, 17, 0, buf); }

char *tio_format_float(float v, char *buf) { return tio_format_shortest((double)v, 9, 1, buf); }
