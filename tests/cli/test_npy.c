/* .npy header parsing: versions 1, 2, 3; every dtype; both byte orders; shapes; and the bad
 * headers (no magic, truncated, malformed dict, unsupported dtype). Headers are written here by
 * hand, byte for byte as numpy writes them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "tally_io.h"

/* A header of the given version around dict (padded with spaces, ended by '\n'). */
static size_t make_header(unsigned char *buf, int major, const char *dict)
{
    size_t pre = major == 1 ? 10 : 12;
    size_t dl = strlen(dict);
    size_t total = (pre + dl + 1 + 63) / 64 * 64;
    size_t hlen = total - pre;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    if (major == 1) {
        buf[8] = (unsigned char)(hlen & 0xff);
        buf[9] = (unsigned char)(hlen >> 8);
    } else {
        buf[8] = (unsigned char)(hlen & 0xff);
        buf[9] = (unsigned char)(hlen >> 8);
        buf[10] = 0;
        buf[11] = 0;
    }
    memcpy(buf + pre, dict, dl);
    memset(buf + pre + dl, ' ', hlen - dl - 1);
    buf[total - 1] = '\n';
    return total;
}

static void test_dtypes(void **state)
{
    (void)state;
    static const struct { const char *descr; tally_type t; int swap; } cases[] = {
        {"|i1", TALLY_I8, 0},  {"|u1", TALLY_U8, 0},  {"<i2", TALLY_I16, 0}, {">i2", TALLY_I16, 1},
        {"<u2", TALLY_U16, 0}, {">u2", TALLY_U16, 1}, {"<i4", TALLY_I32, 0}, {">i4", TALLY_I32, 1},
        {"<u4", TALLY_U32, 0}, {">u4", TALLY_U32, 1}, {"<i8", TALLY_I64, 0}, {">i8", TALLY_I64, 1},
        {"<u8", TALLY_U64, 0}, {">u8", TALLY_U64, 1}, {"<f4", TALLY_F32, 0}, {">f4", TALLY_F32, 1},
        {"<f8", TALLY_F64, 0}, {">f8", TALLY_F64, 1}, {"|b1", TALLY_U8, 0}, {"=f8", TALLY_F64, 0},
        {">i1", TALLY_I8, 0},
    };
    unsigned char buf[256];
    for (int major = 1; major <= 3; major++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char dict[128];
            snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (7,), }",
                     cases[i].descr);
            size_t len = make_header(buf, major, dict);
            tio_npy_info info;
            char err[128];
            assert_int_equal(tio_npy_parse(buf, len, &info, err, sizeof err), TIO_NPY_OK);
            assert_int_equal(info.type, cases[i].t);
            assert_int_equal(info.swap, cases[i].swap);
            assert_int_equal(info.count, 7);
            assert_int_equal(info.data_offset, len);
            assert_int_equal(info.major, major);
        }
    }
}

static void test_shapes(void **state)
{
    (void)state;
    unsigned char buf[256];
    tio_npy_info info;
    char err[128];
    size_t len = make_header(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }");
    assert_int_equal(tio_npy_parse(buf, len, &info, err, sizeof err), TIO_NPY_OK);
    assert_int_equal(info.ndim, 0);
    assert_int_equal(info.count, 1);
    len = make_header(buf, 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }");
    assert_int_equal(tio_npy_parse(buf, len, &info, err, sizeof err), TIO_NPY_OK);
    assert_int_equal(info.ndim, 2);
    assert_int_equal(info.count, 6);
    assert_int_equal(info.fortran_order, 1);
    len = make_header(buf, 1, "{'shape': (0,), 'fortran_order': False, 'descr': '<i8'}");
    assert_int_equal(tio_npy_parse(buf, len, &info, err, sizeof err), TIO_NPY_OK);
    assert_int_equal(info.count, 0);
    len = make_header(buf, 1, "{\"descr\": \"<u2\", \"fortran_order\": False, \"shape\": (4, 5, 6)}");
    assert_int_equal(tio_npy_parse(buf, len, &info, err, sizeof err), TIO_NPY_OK);
    assert_int_equal(info.count, 120);
}

static void test_bad(void **state)
{
    (void)state;
    unsigned char buf[256];
    tio_npy_info info;
    char err[128];
    assert_int_equal(tio_npy_parse("hello world", 11, &info, err, sizeof err), TIO_NPY_NOT_NPY);
    assert_int_equal(tio_npy_parse("\x93NUM", 4, &info, err, sizeof err), TIO_NPY_TRUNCATED);
    size_t len = make_header(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }");
    for (size_t cut = 6; cut < len; cut += 7)
        assert_int_equal(tio_npy_parse(buf, cut, &info, err, sizeof err), TIO_NPY_TRUNCATED);
    buf[6] = 9;
    assert_int_equal(tio_npy_parse(buf, len, &info, err, sizeof err), TIO_NPY_MALFORMED);
    static const char *malformed[] = {
        "{'descr': '<f8', 'fortran_order': False}",
        "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (3,), }",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3,, }",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
        "['descr', '<f8']",
        "{'descr': '<f8' 'fortran_order': False, 'shape': (3,)}",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999)}",
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        len = make_header(buf, 1, malformed[i]);
        if (tio_npy_parse(buf, len, &info, err, sizeof err) != TIO_NPY_MALFORMED)
            fail_msg("accepted: %s", malformed[i]);
    }
    static const char *unsupported[] = {
        "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }",
        "{'descr': '<c16', 'fortran_order': False, 'shape': (3,), }",
        "{'descr': '|S5', 'fortran_order': False, 'shape': (3,), }",
        "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }",
        "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }",
        "{'descr': 'float64', 'fortran_order': False, 'shape': (3,), }",
    };
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        len = make_header(buf, 1, unsupported[i]);
        if (tio_npy_parse(buf, len, &info, err, sizeof err) != TIO_NPY_UNSUPPORTED)
            fail_msg("not reported unsupported: %s", unsupported[i]);
        assert_non_null(strstr(err, "unsupported dtype"));
    }
}

static void test_write_header(void **state)
{
    (void)state;
    char buf[256];
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        size_t len = tio_npy_write_header(buf, sizeof buf, (tally_type)t, 12345);
        assert_int_equal(len % 64, 0);
        tio_npy_info info;
        char err[128];
        assert_int_equal(tio_npy_parse(buf, len, &info, err, sizeof err), TIO_NPY_OK);
        assert_int_equal(info.type, t);
        assert_int_equal(info.count, 12345);
        assert_int_equal(info.swap, 0);
    }
}

static void test_dtype_words(void **state)
{
    (void)state;
    tally_type t;
    int swap, is_bool;
    assert_int_equal(tio_parse_dtype("f64", &t, &swap, &is_bool), 0);
    assert_int_equal(t, TALLY_F64);
    assert_int_equal(tio_parse_dtype(">i4", &t, &swap, &is_bool), 0);
    assert_int_equal(t, TALLY_I32);
    assert_int_equal(swap, 1);
    assert_int_equal(tio_parse_dtype("uint16", &t, &swap, &is_bool), 0);
    assert_int_equal(t, TALLY_U16);
    assert_int_not_equal(tio_parse_dtype("f16", &t, &swap, &is_bool), 0);
    assert_int_not_equal(tio_parse_dtype("<f2", &t, &swap, &is_bool), 0);
    assert_int_not_equal(tio_parse_dtype("", &t, &swap, &is_bool), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtypes),       cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_bad),          cmocka_unit_test(test_write_header),
        cmocka_unit_test(test_dtype_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
