/* Reductions: every op x type x ISA path x thread count {1,2,3} on random data of many sizes,
 * against exact references (reference.h). */
#include "reference.h"

static const tally_op all_ops[] = {TALLY_SUM, TALLY_PROD, TALLY_MIN, TALLY_MAX,
                                   TALLY_AND, TALLY_OR, TALLY_XOR, TALLY_COUNT,
                                   TALLY_ARGMIN, TALLY_ARGMAX, TALLY_MEAN, TALLY_VAR};
#define N_ALL_OPS 12

/* Sizes around the SIMD widths, the 4096-element product/scan blocks and the 64 KiB pieces. */
static const uint64_t sizes[] = {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65,
                                 127, 129, 255, 257, 1000, 4095, 4096, 4097, 8191, 8193, 16383,
                                 16385, 32767, 32769, 65535, 65537, 131071, 131073, 262145};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

/* The ops valid for t. */
static size_t ops_for(tally_type t, tally_op *ops)
{
    size_t k = 0;
    for (int i = 0; i < N_ALL_OPS; i++) {
        tally_op op = all_ops[i];
        if (t_is_float(t) && (op == TALLY_AND || op == TALLY_OR || op == TALLY_XOR)) continue;
        ops[k++] = op;
    }
    return k;
}

/* Checks every op on x, fused (one tally_reduce_many) and, if singles, one call per op, on
 * every thread count of c. */
static void check_all(isa_ctxs *c, tally_type t, const void *x, uint64_t n, int omit_nan,
                      int ddof, int singles, const char *what)
{
    tally_op ops[N_ALL_OPS];
    size_t nops = ops_for(t, ops);
    tally_result want[N_ALL_OPS], got[N_ALL_OPS];
    for (size_t i = 0; i < nops; i++) ref_reduce(t, x, n, ops[i], omit_nan, ddof, &want[i]);
    tally_reduce_options o = {omit_nan, ddof};
    for (int k = 0; k < N_THREADS; k++) {
        tally_reduce_many(c->ctx[k], t, x, n, ops, nops, &o, got);
        for (size_t i = 0; i < nops; i++)
            assert_result(&got[i], &want[i], "fused, %s n=%llu %s threads=%d omit_nan=%d (%s)",
                          tally_type_name(t), (unsigned long long)n, tally_isa_name(c->isa),
                          test_threads[k], omit_nan, what);
        if (!singles) continue;
        for (size_t i = 0; i < nops; i++) {
            tally_result r;
            tally_status s = tally_reduce(c->ctx[k], ops[i], t, x, n, &o, &r);
            assert_int_equal(s, r.status);
            assert_result(&r, &want[i], "single, %s n=%llu %s threads=%d omit_nan=%d (%s)",
                          tally_type_name(t), (unsigned long long)n, tally_isa_name(c->isa),
                          test_threads[k], omit_nan, what);
        }
    }
}

static void test_random(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    rng_state = 42;
    uint64_t maxn = sizes[N_SIZES - 1];
    void *x = malloc(maxn * 8 + 8);
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        for (size_t s = 0; s < N_SIZES; s++) {
            uint64_t n = sizes[s];
            if (UNDER_SANITIZER && n > 140000 && t != TALLY_U8) continue;
            fill((tally_type)t, x, n, DATA_RANDOM);
            check_all(c, (tally_type)t, x, n, 0, 0, n <= 20000, "random");
            fill((tally_type)t, x, n, DATA_PROD);
            check_all(c, (tally_type)t, x, n, 0, 1, 0, "product-friendly");
        }
    }
    free(x);
}

static void test_big(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    rng_state = 7;
    uint64_t n = big_n();
    void *x = malloc(n * 8 + 8);
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        const tally_type type = (tally_type)t;
        fill(type, x, n, DATA_RANDOM);
        check_all(c, type, x, n, 0, 0, 0, "big random");
        /* the extreme in the last element: argmin/argmax across thread ranges */
        if (type == TALLY_F32) ((float *)x)[n - 1] = -INFINITY;
        if (type == TALLY_I32) ((int32_t *)x)[n - 1] = INT32_MIN;
        check_all(c, type, x, n, 0, 0, 0, "big, extreme last");
    }
    free(x);
}

static void test_special_floats(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    rng_state = 99;
    uint64_t maxn = 300000;
    void *x = malloc(maxn * 8);
    for (int t = TALLY_F32; t <= TALLY_F64; t++) {
        for (size_t s = 0; s < N_SIZES; s++) {
            uint64_t n = sizes[s];
            fill((tally_type)t, x, n, DATA_SPECIAL);
            for (int omit = 0; omit <= 1; omit++)
                check_all(c, (tally_type)t, x, n, omit, 0, n <= 5000, "NaN/inf/-0");
        }
    }
    /* hand-made cases */
    double d[8];
    float f[8];
    struct { int n; double v[8]; const char *what; } cases[] = {
        {2, {0.0, -0.0}, "+0 then -0: min -0 at 1, max +0 at 0"},
        {2, {-0.0, 0.0}, "-0 then +0"},
        {3, {-0.0, -0.0, -0.0}, "all -0: sum -0"},
        {3, {NAN, NAN, NAN}, "all NaN: EMPTY with omit_nan"},
        {4, {1.0, NAN, -1.0, NAN}, "NaN in the middle: argmin is its index"},
        {3, {INFINITY, -INFINITY, 1.0}, "+inf and -inf: sum NaN"},
        {2, {1e308, 1e308}, "sum beyond the f64 range: +inf"},
        {3, {0x1p-1074, 0x1p-1074, -0x1p-1074}, "subnormals"},
        {4, {1.0, 0x1p-53, 0x1p-106, 0x1p-160}, "round: just above a tie"},
        {3, {1.0, 0x1p-53, -0x1p-200}, "round: just below a tie"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int i = 0; i < cases[k].n; i++) {
            d[i] = cases[k].v[i];
            f[i] = (float)cases[k].v[i];
        }
        for (int omit = 0; omit <= 1; omit++) {
            check_all(c, TALLY_F64, d, (uint64_t)cases[k].n, omit, 0, 1, cases[k].what);
            if (k != 6 && k != 7) /* not representable in f32 */
                check_all(c, TALLY_F32, f, (uint64_t)cases[k].n, omit, 0, 1, cases[k].what);
        }
    }
    /* the answers to a few of them, stated outright (not only via the reference) */
    tally_result r;
    double z[2] = {0.0, -0.0};
    assert_int_equal(tally_reduce(c->ctx[0], TALLY_MIN, TALLY_F64, z, 2, NULL, &r), TALLY_OK);
    assert_true(r.value.f64 == 0 && signbit(r.value.f64));
    assert_int_equal(tally_reduce(c->ctx[0], TALLY_ARGMAX, TALLY_F64, z, 2, NULL, &r), TALLY_OK);
    assert_true(r.index == 0 && !signbit(r.value.f64));
    double nn[4] = {1.0, NAN, -1.0, NAN};
    assert_int_equal(tally_reduce(c->ctx[0], TALLY_ARGMIN, TALLY_F64, nn, 4, NULL, &r), TALLY_OK);
    assert_true(r.index == 1 && isnan(r.value.f64));
    tally_reduce_options omit = {1, 0};
    assert_int_equal(tally_reduce(c->ctx[0], TALLY_ARGMIN, TALLY_F64, nn, 4, &omit, &r), TALLY_OK);
    assert_true(r.index == 2 && r.value.f64 == -1.0);
    double an[2] = {NAN, NAN};
    assert_int_equal(tally_reduce(c->ctx[0], TALLY_MAX, TALLY_F64, an, 2, &omit, &r), TALLY_ERR_EMPTY);
    free(x);
}

static void test_overflow(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    for (int k = 0; k < N_THREADS; k++) {
        tally_context *ctx = c->ctx[k];
        tally_result r;
        /* sums: just fitting, just not, and back into range */
        int64_t a[3] = {INT64_MAX, 1, -1};
        assert_int_equal(tally_reduce(ctx, TALLY_SUM, TALLY_I64, a, 3, NULL, &r), TALLY_OK);
        assert_int_equal(r.value.i64, INT64_MAX);
        assert_int_equal(tally_reduce(ctx, TALLY_SUM, TALLY_I64, a, 2, NULL, &r), TALLY_ERR_OVERFLOW);
        assert_int_equal(r.status, TALLY_ERR_OVERFLOW);
        int64_t b[2] = {INT64_MIN, -1};
        assert_int_equal(tally_reduce(ctx, TALLY_SUM, TALLY_I64, b, 2, NULL, &r), TALLY_ERR_OVERFLOW);
        assert_int_equal(tally_reduce(ctx, TALLY_SUM, TALLY_I64, b, 1, NULL, &r), TALLY_OK);
        assert_true(r.value.i64 == INT64_MIN);
        uint64_t u[3] = {UINT64_MAX, 0, 1};
        assert_int_equal(tally_reduce(ctx, TALLY_SUM, TALLY_U64, u, 2, NULL, &r), TALLY_OK);
        assert_true(r.value.u64 == UINT64_MAX);
        assert_int_equal(tally_reduce(ctx, TALLY_SUM, TALLY_U64, u, 3, NULL, &r), TALLY_ERR_OVERFLOW);
        /* many large values: the overflow comes from the 64-bit lanes, across threads */
        uint64_t n = 300001;
        int64_t *big = malloc(n * sizeof *big);
        for (uint64_t i = 0; i < n; i++) big[i] = INT64_MAX / 200000;
        assert_int_equal(tally_reduce(ctx, TALLY_SUM, TALLY_I64, big, n, NULL, &r), TALLY_ERR_OVERFLOW);
        for (uint64_t i = 0; i < n; i += 2) big[i] = -big[i]; /* cancels back into range */
        assert_int_equal(tally_reduce(ctx, TALLY_SUM, TALLY_I64, big, n, NULL, &r), TALLY_OK);
        assert_true(r.value.i64 == INT64_MAX / 200000 * -1);
        free(big);
        /* i32 sums wider than 32 bits are fine (i64 result) */
        int32_t w[4] = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX};
        assert_int_equal(tally_reduce(ctx, TALLY_SUM, TALLY_I32, w, 4, NULL, &r), TALLY_OK);
        assert_true(r.value.i64 == 4LL * INT32_MAX);
        /* products */
        int64_t p1[2] = {(int64_t)1 << 62, -2}; /* exactly INT64_MIN: fits */
        assert_int_equal(tally_reduce(ctx, TALLY_PROD, TALLY_I64, p1, 2, NULL, &r), TALLY_OK);
        assert_true(r.value.i64 == INT64_MIN);
        int64_t p2[3] = {(int64_t)1 << 62, 2, -1}; /* 2^63 on the way, -2^63 at the end */
        assert_int_equal(tally_reduce(ctx, TALLY_PROD, TALLY_I64, p2, 3, NULL, &r), TALLY_OK);
        assert_true(r.value.i64 == INT64_MIN);
        int64_t p3[2] = {(int64_t)1 << 62, 2};
        assert_int_equal(tally_reduce(ctx, TALLY_PROD, TALLY_I64, p3, 2, NULL, &r), TALLY_ERR_OVERFLOW);
        int32_t p4[5] = {65536, 65536, 65536, 65536, 65536}; /* 2^80 */
        assert_int_equal(tally_reduce(ctx, TALLY_PROD, TALLY_I32, p4, 5, NULL, &r), TALLY_ERR_OVERFLOW);
        int32_t p5[6] = {65536, 65536, 65536, 65536, 65536, 0}; /* then a zero: exactly 0 */
        assert_int_equal(tally_reduce(ctx, TALLY_PROD, TALLY_I32, p5, 6, NULL, &r), TALLY_OK);
        assert_true(r.value.i64 == 0);
        uint64_t p6[2] = {UINT64_MAX, 1};
        assert_int_equal(tally_reduce(ctx, TALLY_PROD, TALLY_U64, p6, 2, NULL, &r), TALLY_OK);
        assert_true(r.value.u64 == UINT64_MAX);
        uint64_t p7[2] = {UINT64_MAX, 2};
        assert_int_equal(tally_reduce(ctx, TALLY_PROD, TALLY_U64, p7, 2, NULL, &r), TALLY_ERR_OVERFLOW);
        /* a long product that overflows in one thread's range, with a zero in another's */
        n = 200000;
        int16_t *q = malloc(n * sizeof *q);
        for (uint64_t i = 0; i < n; i++) q[i] = 3;
        assert_int_equal(tally_reduce(ctx, TALLY_PROD, TALLY_I16, q, n, NULL, &r), TALLY_ERR_OVERFLOW);
        q[n - 5] = 0;
        assert_int_equal(tally_reduce(ctx, TALLY_PROD, TALLY_I16, q, n, NULL, &r), TALLY_OK);
        assert_true(r.value.i64 == 0);
        free(q);
        /* fused: one failing result does not spoil the others */
        tally_op ops[3] = {TALLY_SUM, TALLY_MAX, TALLY_COUNT};
        tally_result rs[3];
        assert_int_equal(tally_reduce_many(ctx, TALLY_I64, a, 2, ops, 3, NULL, rs), TALLY_ERR_OVERFLOW);
        assert_int_equal(rs[0].status, TALLY_ERR_OVERFLOW);
        assert_int_equal(rs[1].status, TALLY_OK);
        assert_true(rs[1].value.i64 == INT64_MAX);
        assert_true(rs[2].value.u64 == 2);
    }
}

static void test_empty_and_ddof(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        tally_op ops[N_ALL_OPS];
        size_t nops = ops_for((tally_type)t, ops);
        for (size_t i = 0; i < nops; i++) {
            tally_result r;
            tally_status s = tally_reduce(c->ctx[1], ops[i], (tally_type)t, NULL, 0, NULL, &r);
            switch (ops[i]) {
            case TALLY_MIN: case TALLY_MAX: case TALLY_ARGMIN: case TALLY_ARGMAX:
            case TALLY_MEAN: case TALLY_VAR:
                assert_int_equal(s, TALLY_ERR_EMPTY);
                break;
            default:
                assert_int_equal(s, TALLY_OK);
                if (ops[i] == TALLY_PROD) {
                    if (t_is_float((tally_type)t)) assert_true(r.value.f64 == 1.0);
                    else assert_true(r.value.u64 == 1);
                } else if (ops[i] == TALLY_AND) {
                    uint64_t want = t_is_signed((tally_type)t) ? ~0ull
                                    : tally_type_size((tally_type)t) == 8
                                        ? ~0ull
                                        : (1ull << (8 * tally_type_size((tally_type)t))) - 1;
                    assert_true(r.value.u64 == want);
                } else {
                    assert_true(r.value.u64 == 0); /* sum 0 (+0.0 too), count 0, or/xor 0 */
                }
            }
        }
    }
    double one = 5.0, two[2] = {1.0, 3.0};
    tally_reduce_options o1 = {0, 1};
    tally_result r;
    assert_int_equal(tally_reduce(c->ctx[0], TALLY_VAR, TALLY_F64, &one, 1, &o1, &r), TALLY_ERR_DOMAIN);
    assert_int_equal(tally_reduce(c->ctx[0], TALLY_VAR, TALLY_F64, two, 2, &o1, &r), TALLY_OK);
    assert_true(r.value.f64 == 2.0);
    assert_int_equal(tally_reduce(c->ctx[0], TALLY_VAR, TALLY_F64, two, 2, NULL, &r), TALLY_OK);
    assert_true(r.value.f64 == 1.0);
    assert_int_equal(tally_reduce(c->ctx[0], TALLY_MEAN, TALLY_F64, two, 2, NULL, &r), TALLY_OK);
    assert_true(r.value.f64 == 2.0);
}

/* The checks above must be able to fail: a naive f32 running sum is not the correctly rounded
 * sum, a result one ulp off or with the wrong index does not match, and a reference that skips
 * the exact accumulator gets a classic case wrong. */
static void test_checks_can_fail(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    uint64_t n = 1u << 20;
    float *f = malloc(n * sizeof *f);
    rng_state = 5;
    for (uint64_t i = 0; i < n; i++) f[i] = (float)(rnd_unit() * 100.0);
    tally_result want, got;
    ref_reduce(TALLY_F32, f, n, TALLY_SUM, 0, 0, &want);
    assert_int_equal(tally_reduce(c->ctx[2], TALLY_SUM, TALLY_F32, f, n, NULL, &got), TALLY_OK);
    assert_true(result_matches(&got, &want));
    float naive = 0;
    for (uint64_t i = 0; i < n; i++) naive += f[i];
    tally_result bad = got;
    bad.value.f64 = naive;
    assert_false(result_matches(&bad, &want));
    bad.value.f64 = nextafter(got.value.f64, INFINITY);
    assert_false(result_matches(&bad, &want));
    double d[3] = {1.0, 1e100, -1e100}; /* a double running sum gives 0 */
    ref_reduce(TALLY_F64, d, 3, TALLY_SUM, 0, 0, &want);
    assert_true(want.value.f64 == 1.0);
    assert_int_equal(tally_reduce(c->ctx[0], TALLY_SUM, TALLY_F64, d, 3, NULL, &got), TALLY_OK);
    assert_true(got.value.f64 == 1.0);
    int32_t v[4] = {3, 1, 1, 2};
    ref_reduce(TALLY_I32, v, 4, TALLY_ARGMIN, 0, 0, &want);
    assert_int_equal(want.index, 1);
    bad = want;
    bad.index = 2; /* the second minimum: not the first occurrence */
    assert_false(result_matches(&bad, &want));
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        ISA_TESTS(test_random),        ISA_TESTS(test_big),
        ISA_TESTS(test_special_floats), ISA_TESTS(test_overflow),
        ISA_TESTS(test_empty_and_ddof), ISA_TESTS(test_checks_can_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
