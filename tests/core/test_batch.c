/* Batched reductions (tally_reduce_segments, tally_reduce_rows): every segment's results must be
 * those of tally_reduce_many on the segment alone, bit for bit, and match the exact references;
 * on every ISA path and thread count, with short, empty and long segments mixed (the CPU backend
 * spreads the short ones over the threads and gives each long one all threads). */
#include "reference.h"

static const tally_op all_ops[] = {TALLY_SUM, TALLY_PROD, TALLY_MIN, TALLY_MAX,
                                   TALLY_AND, TALLY_OR, TALLY_XOR, TALLY_COUNT,
                                   TALLY_ARGMIN, TALLY_ARGMAX, TALLY_MEAN, TALLY_VAR};
#define N_ALL_OPS 12

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

/* Checks results[s * nops + i] against tally_reduce_many on segment s (and, for every
 * ref_every-th segment, against the exact reference). */
static void check_segments(tally_context *ctx, tally_type t, const void *x,
                           const uint64_t *starts, const uint64_t *lens, uint64_t nseg,
                           const tally_op *ops, size_t nops, const tally_reduce_options *o,
                           const tally_result *got, uint64_t ref_every, const char *what)
{
    size_t size = tally_type_size(t);
    tally_result want[N_ALL_OPS];
    for (uint64_t s = 0; s < nseg; s++) {
        const char *seg = (const char *)x + starts[s] * size;
        tally_reduce_many(ctx, t, seg, lens[s], ops, nops, o, want);
        for (size_t i = 0; i < nops; i++)
            assert_result(&got[s * nops + i], &want[i], "%s %s segment %llu of %llu (len %llu) %s "
                          "threads=%d omit_nan=%d", what, tally_type_name(t),
                          (unsigned long long)s, (unsigned long long)nseg,
                          (unsigned long long)lens[s], tally_isa_name(tally_active_isa(ctx)),
                          tally_thread_count(ctx), o->omit_nan);
        if (ref_every && s % ref_every == 0)
            for (size_t i = 0; i < nops; i++) {
                tally_result r;
                ref_reduce(t, seg, lens[s], ops[i], o->omit_nan, o->ddof, &r);
                assert_result(&got[s * nops + i], &r, "%s %s segment %llu against the reference",
                              what, tally_type_name(t), (unsigned long long)s);
            }
    }
}

/* A random segment length: mostly short (0, 1, a few, around the 4096-element blocks), now and
 * then long enough that the backend gives it every thread. */
static uint64_t random_len(void)
{
    uint64_t r = rnd() % 100;
    if (r < 10) return 0;
    if (r < 20) return 1;
    if (r < 70) return rnd() % 40;
    if (r < 85) return 4095 + rnd() % 3;
    if (r < 98) return rnd() % 3000;
    return 60000 + rnd() % 80000;
}

static void test_segments_random(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    rng_state = 1234;
    enum { MAXSEG = 400 };
    uint64_t *offsets = malloc((MAXSEG + 1) * sizeof *offsets);
    uint64_t *lens = malloc(MAXSEG * sizeof *lens);
    tally_result *got = malloc((size_t)MAXSEG * N_ALL_OPS * sizeof *got);
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        for (int round = 0; round < 2; round++) {
            uint64_t nseg = round == 0 ? 7 : MAXSEG;
            offsets[0] = rnd() % 5; /* need not start at 0 */
            for (uint64_t s = 0; s < nseg; s++) {
                lens[s] = random_len();
                if (UNDER_SANITIZER && lens[s] > 10000) lens[s] = 10000;
                offsets[s + 1] = offsets[s] + lens[s];
            }
            uint64_t n = offsets[nseg];
            void *x = malloc(n * 8 + 8);
            fill((tally_type)t, x, n, round == 0 ? DATA_PROD : DATA_RANDOM);
            tally_op ops[N_ALL_OPS];
            size_t nops = ops_for((tally_type)t, ops);
            for (int omit = 0; omit < 2; omit++) {
                tally_reduce_options o = {omit, omit};
                for (int k = 0; k < N_THREADS; k++) {
                    memset(got, 0xa5, (size_t)nseg * nops * sizeof *got); /* no stale results */
                    tally_status st = tally_reduce_segments(c->ctx[k], (tally_type)t, x, offsets,
                                                            nseg, ops, nops, &o, got);
                    /* some segments are empty: their min/argmin/mean/var are EMPTY */
                    assert_true(st == TALLY_OK || st == TALLY_ERR_EMPTY || st == TALLY_ERR_DOMAIN ||
                                st == TALLY_ERR_OVERFLOW); /* products */
                    check_segments(c->ctx[k], (tally_type)t, x, offsets, lens, nseg, ops, nops,
                                   &o, got, k == 0 ? 5 : 0, "segments");
                }
            }
            free(x);
        }
    }
    free(offsets);
    free(lens);
    free(got);
}

static void test_rows(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    rng_state = 99;
    /* rows x len, stride - len elements between rows */
    static const uint64_t shapes[][3] = {
        {0, 5, 5},      {3, 0, 0},     {1, 1, 1},     {1000, 7, 7}, {999, 3, 5},
        {5, 4097, 4097}, {64, 1000, 1003}, {3, 70000, 70000}, {20000, 1, 1}, {4, 16, 0},
    };
    tally_result *got = malloc((size_t)20000 * N_ALL_OPS * sizeof *got);
    uint64_t *starts = malloc(20000 * sizeof *starts), *lens = malloc(20000 * sizeof *lens);
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        tally_op ops[N_ALL_OPS];
        size_t nops = ops_for((tally_type)t, ops);
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            uint64_t rows = shapes[k][0], len = shapes[k][1], stride = shapes[k][2];
            uint64_t n = rows ? (rows - 1) * stride + len : 0;
            void *x = malloc(n * 8 + 8);
            fill((tally_type)t, x, n, DATA_RANDOM);
            for (uint64_t r = 0; r < rows; r++) {
                starts[r] = r * stride;
                lens[r] = len;
            }
            tally_reduce_options o = {0, 1};
            for (int th = 0; th < N_THREADS; th++) {
                memset(got, 0xa5, (size_t)(rows ? rows : 1) * nops * sizeof *got);
                tally_status st = tally_reduce_rows(c->ctx[th], (tally_type)t, x, rows, len, stride,
                                                    ops, nops, &o, got);
                assert_true(st == TALLY_OK || st == TALLY_ERR_OVERFLOW || (len <= 1 && rows > 0));
                check_segments(c->ctx[th], (tally_type)t, x, starts, lens, rows, ops, nops, &o,
                               got, th == 0 ? 97 : 0, "rows");
            }
            free(x);
        }
    }
    free(got);
    free(starts);
    free(lens);
}

static void test_statuses_and_errors(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    for (int k = 0; k < N_THREADS; k++) {
        tally_context *ctx = c->ctx[k];
        /* one segment overflows, one is empty: each result says so; the call returns the first
         * failure in result order and the message names its segment */
        int64_t a[5] = {INT64_MAX, 1, INT64_MIN, -1, -7};
        uint64_t off[4] = {0, 2, 2, 5};
        tally_op ops[2] = {TALLY_MIN, TALLY_SUM};
        tally_result r[6];
        assert_int_equal(tally_reduce_segments(ctx, TALLY_I64, a, off, 3, ops, 2, NULL, r),
                         TALLY_ERR_OVERFLOW);
        assert_int_equal(r[0].status, TALLY_OK);
        assert_true(r[0].value.i64 == 1);
        assert_int_equal(r[1].status, TALLY_ERR_OVERFLOW);
        assert_int_equal(r[2].status, TALLY_ERR_EMPTY);
        assert_int_equal(r[3].status, TALLY_OK);
        assert_true(r[3].value.i64 == 0);
        assert_int_equal(r[4].status, TALLY_OK);
        assert_true(r[4].value.i64 == INT64_MIN);
        assert_int_equal(r[5].status, TALLY_ERR_OVERFLOW);
        assert_non_null(strstr(tally_last_error(ctx), "segment 0"));
        assert_non_null(strstr(tally_last_error(ctx), "tally_reduce_segments"));
        /* rows: the empty-row message */
        assert_int_equal(tally_reduce_rows(ctx, TALLY_I64, a, 2, 0, 1, ops, 1, NULL, r),
                         TALLY_ERR_EMPTY);
        assert_non_null(strstr(tally_last_error(ctx), "min of segment 0 (0 i64 elements)"));
        /* argument errors fill every result and say what is wrong */
        uint64_t bad[4] = {0, 3, 2, 5};
        assert_int_equal(tally_reduce_segments(ctx, TALLY_I64, a, bad, 3, ops, 2, NULL, r),
                         TALLY_ERR_INVALID_ARGUMENT);
        for (int i = 0; i < 6; i++) assert_int_equal(r[i].status, TALLY_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(tally_last_error(ctx), "offsets[2] = 2 is less than offsets[1] = 3"));
        assert_int_equal(tally_reduce_segments(ctx, TALLY_I64, a, NULL, 3, ops, 2, NULL, r),
                         TALLY_ERR_INVALID_ARGUMENT);
        assert_int_equal(tally_reduce_segments(ctx, TALLY_I64, a, off, 3, ops, 2, NULL, NULL),
                         TALLY_ERR_INVALID_ARGUMENT);
        assert_int_equal(tally_reduce_segments(ctx, TALLY_I64, NULL, off, 3, ops, 2, NULL, r),
                         TALLY_ERR_INVALID_ARGUMENT);
        assert_int_equal(tally_reduce_rows(ctx, TALLY_I64, a, 2, 3, 1, NULL, 2, NULL, r),
                         TALLY_ERR_INVALID_ARGUMENT);
        assert_int_equal(tally_reduce_rows(ctx, TALLY_I64, a, 2, 3, 1, ops, 0, NULL, r),
                         TALLY_ERR_INVALID_ARGUMENT);
        assert_int_equal(tally_reduce_rows(ctx, TALLY_I64, a, 3, 1, UINT64_MAX / 2, ops, 1, NULL,
                                           r), TALLY_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(tally_last_error(ctx), "past the end of the address space"));
        tally_op xor_op = TALLY_XOR;
        double f[2] = {1, 2};
        assert_int_equal(tally_reduce_rows(ctx, TALLY_F64, f, 2, 1, 1, &xor_op, 1, NULL, r),
                         TALLY_ERR_UNSUPPORTED);
        assert_int_equal(r[0].status, TALLY_ERR_UNSUPPORTED);
        assert_int_equal(tally_reduce_rows(ctx, (tally_type)77, f, 2, 1, 1, ops, 1, NULL, r),
                         TALLY_ERR_UNKNOWN_TYPE);
        /* no segments: nothing to do, nothing read (results may be NULL) */
        assert_int_equal(tally_reduce_segments(ctx, TALLY_I64, NULL, NULL, 0, ops, 2, NULL, NULL),
                         TALLY_OK);
        assert_int_equal(tally_reduce_rows(ctx, TALLY_I64, NULL, 0, 9, 9, ops, 2, NULL, NULL),
                         TALLY_OK);
        /* empty segments anywhere: data may be NULL when no element is read */
        uint64_t empty[3] = {4, 4, 4};
        assert_int_equal(tally_reduce_segments(ctx, TALLY_I64, NULL, empty, 2, &ops[1], 1, NULL, r),
                         TALLY_OK);
        assert_true(r[0].value.i64 == 0 && r[1].value.i64 == 0);
    }
    tally_result r;
    tally_op op = TALLY_SUM;
    assert_int_equal(tally_reduce_rows(NULL, TALLY_I64, NULL, 1, 0, 0, &op, 1, NULL, &r),
                     TALLY_ERR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        ISA_TESTS(test_segments_random),
        ISA_TESTS(test_rows),
        ISA_TESTS(test_statuses_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
