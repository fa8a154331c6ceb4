/* tio_parse_number against the C library's strtod (glibc rounds correctly): hard cases
 * (17+ digits, halfway cases, subnormals, the edges of the double range) and random strings;
 * integers must be exact; shortest formatting must read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally_io.h"

static uint64_t rng_state = 0x1234567887654321ull;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int same_bits(double a, double b)
{
    if (isnan(a) && isnan(b)) return 1;
    return memcmp(&a, &b, 8) == 0;
}

/* The text must parse, and give exactly strtod's double. */
static void check_like_strtod(const char *s)
{
    int64_t iv;
    double dv;
    tio_num_kind k = tio_parse_number(s, strlen(s), &iv, &dv);
    double ref = strtod(s, NULL);
    if (k == TIO_NUM_INVALID) fail_msg("'%s' rejected", s);
    double got = k == TIO_NUM_INT ? (double)iv : dv;
    if (k == TIO_NUM_INT ? got != ref : !same_bits(got, ref)) fail_msg("'%s': got %.17g, strtod %.17g", s, got, ref);
}

static void test_hard_cases(void **state)
{
    (void)state;
    static const char *cases[] = {
        "0", "-0", "0.0", "-0.0", "1", "0.1", "0.2", "0.3", "0.30000000000000004", "1.5",
        "2.2250738585072011e-308", "2.2250738585072014e-308", "2.2250738585072012e-308",
        "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
        "1e-324", "5e-324", "3e-324", "1e-323", "1.7976931348623157e308",
        "1.7976931348623158e308", "1.7976931348623159e308", "1e308", "1e309", "-1e309",
        "9007199254740993.0", "9007199254740995.0", "9007199254740992.5", "9007199254740993.5",
        "123456789012345678901234567890", "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203126",
        "1.00000000000000011102230246251565404236316680908203124", "7.038531e-26",
        "3.14159265358979323846264338327950288", "1e22", "1e23", "1e-22", "1e-23", "8.589973e9",
        "0.000000000000000000000000000000000001", ".5", "5.", "+1.5", "-1.5e-10", "1E5", "1e+5",
        "12345678901234567e-5", "1234567890123456789", "12345678901234567890",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "18446744073709551615", "18446744073709551616",
        "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368",
        "2.225073858507201136057409796709131975934819546351645648e-308",
        "0.500000000000000166533453693773481063544750213623046875",
        "4503599627370496.5", "4503599627370497.5", "1e23", "8.41e21", "5.0e-324",
        "1448997445238699", "30000000000000000000000000000000000000000000000000000e-50",
        "1e0000000000000000000000000000001", "0e999999", "000000000000000000001.5",
        "100000000000000000000000", "1000000000000000000000000e-2", "123.456e-789",
        "6.02214076e23", "1.602176634e-19", "9999999999999999999", "99999999999999999999.5",
        "   42.5  ", "42\r", "inf", "-inf", "Infinity", "-INFINITY", "nan", "NaN", "+inf",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_like_strtod(cases[i]);
}

static void test_integers(void **state)
{
    (void)state;
    static const struct { const char *s; int64_t v; } ints[] = {
        {"0", 0}, {"-0", 0}, {"7", 7}, {"+5", 5}, {"007", 7}, {" 42 ", 42}, {"42\r", 42},
        {"9223372036854775807", INT64_MAX}, {"-9223372036854775808", INT64_MIN},
        {"-123456789012345678", -123456789012345678LL}, {"0000000000000000000000001", 1},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        int64_t iv = 0;
        double dv;
        tio_num_kind k = tio_parse_number(ints[i].s, strlen(ints[i].s), &iv, &dv);
        if (k != TIO_NUM_INT || iv != ints[i].v) fail_msg("'%s' not the integer it is", ints[i].s);
    }
    static const char *floats[] = {"9223372036854775808", "-9223372036854775809", "1.0", "1e3",
                                   "99999999999999999999", "5."};
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
        int64_t iv;
        double dv;
        if (tio_parse_number(floats[i], strlen(floats[i]), &iv, &dv) != TIO_NUM_FLOAT)
            fail_msg("'%s' should be a float", floats[i]);
    }
}

static void test_invalid(void **state)
{
    (void)state;
    static const char *bad[] = {"", " ", "abc", "1,5", "0x10", "1e", "1e+", "--1", "1.2.3", ".",
                                "+", "-", "1 2", "nan1", "infinit", "in", "1e5x", "e5", "1_000",
                                "+-1", "1..2", "$5", "5%", "\"5\"", "1e-", "0x1p3", "١",
                                ".inf", "-.nan", ".e5", "inf.", "1.e"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t iv;
        double dv;
        if (tio_parse_number(bad[i], strlen(bad[i]), &iv, &dv) != TIO_NUM_INVALID)
            fail_msg("'%s' accepted", bad[i]);
    }
    /* not NUL-terminated: the length is what counts */
    int64_t iv;
    double dv;
    assert_int_equal(tio_parse_number("123456", 3, &iv, &dv), TIO_NUM_INT);
    assert_int_equal(iv, 123);
}

static void test_random(void **state)
{
    (void)state;
    char s[128];
    for (int it = 0; it < 400000; it++) {
        uint64_t r = rnd();
        switch (it % 5) {
        case 0: {                       /* any finite double, printed with 1..17 digits */
            uint64_t bits = rnd();
            double d;
            memcpy(&d, &bits, 8);
            if (!isfinite(d)) continue;
            snprintf(s, sizeof s, "%.*g", (int)(1 + r % 17), d);
            break;
        }
        case 1: {                       /* random digit strings, random exponent */
            int nd = 1 + (int)(r % 30), k = 0;
            if (rnd() & 1) s[k++] = '-';
            for (int i = 0; i < nd; i++) s[k++] = (char)('0' + rnd() % 10);
            if (rnd() & 1) {
                s[k++] = '.';
                for (int i = 0, m = (int)(rnd() % 25); i < m; i++) s[k++] = (char)('0' + rnd() % 10);
            }
            k += snprintf(s + k, sizeof s - (size_t)k, "e%d", (int)(rnd() % 700) - 350);
            break;
        }
        case 2:                         /* prices and other short decimals */
            snprintf(s, sizeof s, "%llu.%02llu", (unsigned long long)(r % 100000),
                     (unsigned long long)(rnd() % 100));
            break;
        case 3: {                       /* near halfway: 17 digits then 5 then more */
            uint64_t bits = (rnd() & 0x7fefffffffffffffull);
            double d;
            memcpy(&d, &bits, 8);
            int k = snprintf(s, sizeof s, "%.16e", d);
            char *e = strchr(s, 'e');
            char exp[16];
            snprintf(exp, sizeof exp, "%s", e);
            k = (int)(e - s);
            k += snprintf(s + k, sizeof s - (size_t)k, "5%s", (rnd() & 1) ? "" : "0000001");
            snprintf(s + k, sizeof s - (size_t)k, "%s", exp);
            break;
        }
        default:                        /* subnormals */
            snprintf(s, sizeof s, "%.*e", (int)(r % 20), ldexp((double)(rnd() % 1000000), -1074));
            break;
        }
        check_like_strtod(s);
    }
}

static void test_format(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(tio_format_double(0.1, buf), "0.1");
    assert_string_equal(tio_format_double(693720, buf), "693720");
    assert_string_equal(tio_format_double(NAN, buf), "nan");
    assert_string_equal(tio_format_double(-INFINITY, buf), "-inf");
    assert_string_equal(tio_format_double(-0.0, buf), "-0");
    assert_string_equal(tio_format_double(1e300, buf), "1e+300");
    assert_string_equal(tio_format_float(0.1f, buf), "0.1");
    assert_string_equal(tio_format_double(274966082.42, buf), "274966082.42");
    assert_string_equal(tio_format_double(0.001, buf), "0.001");
    assert_string_equal(tio_format_double(1e-7, buf), "1e-07");
    assert_string_equal(tio_format_double(1e17, buf), "1e+17");
    assert_string_equal(tio_format_double(12345678901234567.0, buf), "12345678901234568");
    assert_string_equal(tio_format_double(-2.5, buf), "-2.5");
    assert_string_equal(tio_format_double(5e-324, buf), "5e-324");
    assert_string_equal(tio_format_float(1.1536286e+08f, buf), "115362860");
    for (int it = 0; it < 200000; it++) {
        uint64_t bits = rnd();
        double d;
        memcpy(&d, &bits, 8);
        if (!isfinite(d)) continue;
        tio_format_double(d, buf);
        if (strtod(buf, NULL) != d) fail_msg("%s does not read back", buf);
        /* shortest: no fewer significant digits read back */
        int digits = 0, started = 0;
        for (const char *p = buf; *p && *p != 'e'; p++) {
            if (*p >= '1' && *p <= '9') started = 1;
            digits += started && *p >= '0' && *p <= '9';
        }
        char shorter[400];
        snprintf(shorter, sizeof shorter, "%.*e", digits > 1 ? digits - 2 : 0, d);
        if (digits > 1 && strtod(shorter, NULL) == d) {
            /* trailing zeros of an integer part are not significant digits */
            char *dot = strchr(buf, '.');
            if (dot || strchr(buf, 'e')) fail_msg("%s is not the shortest (%s)", buf, shorter);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hard_cases), cmocka_unit_test(test_integers),
        cmocka_unit_test(test_invalid), cmocka_unit_test(test_random),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
