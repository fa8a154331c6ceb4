/* The API surface: names and messages, context options (threads, ISA from options and from
 * TALLY_ISA), every bad-argument status with its message, and the streaming API against
 * one-shot results. */
#include "reference.h"

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(tally_version(), "0.1.0");
    assert_string_equal(tally_status_name(TALLY_OK), "TALLY_OK");
    assert_string_equal(tally_status_name(TALLY_ERR_OVERFLOW), "TALLY_ERR_OVERFLOW");
    assert_string_equal(tally_status_name(TALLY_ERR_DOMAIN), "TALLY_ERR_DOMAIN");
    assert_string_equal(tally_status_name((tally_status)99), "TALLY_UNKNOWN_STATUS");
    assert_string_equal(tally_status_name((tally_status)-1), "TALLY_UNKNOWN_STATUS");
    for (int s = 0; s < TALLY_STATUS_COUNT; s++) {
        assert_non_null(tally_status_string((tally_status)s));
        assert_true(strlen(tally_status_string((tally_status)s)) > 5);
        assert_true(strncmp(tally_status_name((tally_status)s), "TALLY_", 6) == 0);
    }
    assert_non_null(tally_status_string((tally_status)1000));
    static const char *types[] = {"i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64"};
    static const size_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        assert_string_equal(tally_type_name((tally_type)t), types[t]);
        assert_int_equal(tally_type_size((tally_type)t), sizes[t]);
    }
    assert_null(tally_type_name((tally_type)10));
    assert_int_equal(tally_type_size((tally_type)-1), 0);
    static const char *ops[] = {"sum", "prod", "min", "max", "and", "or", "xor", "count",
                                "argmin", "argmax", "mean", "var"};
    for (int o = 0; o < TALLY_OP_COUNT; o++) assert_string_equal(tally_op_name((tally_op)o), ops[o]);
    assert_null(tally_op_name((tally_op)12));
    assert_string_equal(tally_backend_name(TALLY_BACKEND_CPU), "cpu");
    assert_string_equal(tally_backend_name(TALLY_BACKEND_CUDA), "cuda");
    assert_null(tally_backend_name((tally_backend_kind)7));
    assert_string_equal(tally_isa_name(TALLY_ISA_AVX512), "avx512");
    assert_true(tally_backend_available(TALLY_BACKEND_CPU));
    assert_string_equal(tally_backend_name(TALLY_BACKEND_VULKAN), "vulkan");
}

static void test_contexts(void **state)
{
    (void)state;
    tally_context *ctx = (tally_context *)0x1;
    /* defaults: all cores, the best ISA (no TALLY_ISA set here), the CPU or a GPU */
    unsetenv("TALLY_ISA");
    assert_int_equal(tally_create(&ctx, NULL), TALLY_OK);
    assert_true(tally_thread_count(ctx) >= 1);
    assert_int_equal(tally_active_isa(ctx), tally_cpu_best_isa());
    assert_int_not_equal(tally_active_backend(ctx), TALLY_BACKEND_AUTO);
    assert_string_equal(tally_last_error(ctx), "");
    assert_non_null(tally_device_description(ctx));
    tally_destroy(ctx);
    tally_destroy(NULL);

    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    o.threads = 3;
    o.isa = TALLY_ISA_SCALAR;
    assert_int_equal(tally_create(&ctx, &o), TALLY_OK);
    assert_int_equal(tally_thread_count(ctx), 3);
    assert_int_equal(tally_active_isa(ctx), TALLY_ISA_SCALAR);
    assert_int_equal(tally_active_backend(ctx), TALLY_BACKEND_CPU);
    assert_string_equal(tally_device_description(ctx), "");
    tally_destroy(ctx);

    /* bad options */
    o.threads = -1;
    assert_int_equal(tally_create(&ctx, &o), TALLY_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(tally_create_error(), "threads = -1"));
    o.threads = 1;
    o.isa = (tally_isa)9;
    assert_int_equal(tally_create(&ctx, &o), TALLY_ERR_INVALID_ARGUMENT);
    o.isa = TALLY_ISA_AUTO;
    o.backend = (tally_backend_kind)9;
    assert_int_equal(tally_create(&ctx, &o), TALLY_ERR_INVALID_ARGUMENT);
    if (!tally_backend_available(TALLY_BACKEND_VULKAN)) { /* (tests/vulkan covers it when there) */
        o.backend = TALLY_BACKEND_VULKAN;
        assert_int_equal(tally_create(&ctx, &o), TALLY_ERR_BACKEND_UNAVAILABLE);
        assert_non_null(strstr(tally_create_error(), "vulkan"));
    }
    if (!tally_backend_available(TALLY_BACKEND_CUDA)) {
        o.backend = TALLY_BACKEND_CUDA;
        assert_int_equal(tally_create(&ctx, &o), TALLY_ERR_BACKEND_UNAVAILABLE);
        assert_non_null(strstr(tally_create_error(), "cuda"));
    }
    assert_int_equal(tally_create(NULL, NULL), TALLY_ERR_INVALID_ARGUMENT);
    /* an ISA the CPU lacks */
    o.backend = TALLY_BACKEND_CPU;
    if (tally_cpu_best_isa() < TALLY_ISA_AVX512) {
        o.isa = TALLY_ISA_AVX512;
        assert_int_equal(tally_create(&ctx, &o), TALLY_ERR_BACKEND_UNAVAILABLE);
        assert_non_null(strstr(tally_create_error(), "avx512"));
    } else {
        print_message("this CPU has every path: the 'ISA the CPU lacks' case cannot run\n");
    }
}

/* TALLY_ISA forces a path for contexts whose options say AUTO; options win over it. */
static void test_isa_env(void **state)
{
    (void)state;
    static const char *names[] = {"scalar", "avx2", "avx512"};
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    tally_context *ctx;
    for (int i = 0; i < 3; i++) {
        tally_isa isa = (tally_isa)(TALLY_ISA_SCALAR + i);
        setenv("TALLY_ISA", names[i], 1);
        tally_status s = tally_create(&ctx, &o);
        if ((int)isa > (int)tally_cpu_best_isa()) {
            assert_int_equal(s, TALLY_ERR_BACKEND_UNAVAILABLE);
            assert_non_null(strstr(tally_create_error(), "TALLY_ISA"));
            continue;
        }
        assert_int_equal(s, TALLY_OK);
        assert_int_equal(tally_active_isa(ctx), isa);
        /* and it computes */
        int16_t v[5] = {1, -2, 3, -4, 5};
        tally_result r;
        assert_int_equal(tally_reduce(ctx, TALLY_SUM, TALLY_I16, v, 5, NULL, &r), TALLY_OK);
        assert_true(r.value.i64 == 3);
        tally_destroy(ctx);
    }
    setenv("TALLY_ISA", "avx2", 1);
    o.isa = TALLY_ISA_SCALAR;
    assert_int_equal(tally_create(&ctx, &o), TALLY_OK);
    assert_int_equal(tally_active_isa(ctx), TALLY_ISA_SCALAR);
    tally_destroy(ctx);
    o.isa = TALLY_ISA_AUTO;
    setenv("TALLY_ISA", "sse9", 1);
    assert_int_equal(tally_create(&ctx, &o), TALLY_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tally_create_error(), "TALLY_ISA=sse9"));
    unsetenv("TALLY_ISA");
}

static tally_context *cpu_ctx(int threads)
{
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    o.threads = threads;
    tally_context *ctx = NULL;
    assert_int_equal(tally_create(&ctx, &o), TALLY_OK);
    return ctx;
}

#define assert_error(call, status, text)                                                      \
    do {                                                                                      \
        assert_int_equal((call), (status));                                                   \
        if (!strstr(tally_last_error(ctx), (text))) {                                         \
            print_error("message '%s' lacks '%s'\n", tally_last_error(ctx), (text));          \
            fail();                                                                           \
        }                                                                                     \
    } while (0)

static void test_bad_arguments(void **state)
{
    (void)state;
    tally_context *ctx = cpu_ctx(2);
    int32_t v[100] = {0};
    tally_result r, rs[3];
    tally_op ops[3] = {TALLY_SUM, TALLY_MIN, TALLY_MAX};
    /* NULLs */
    assert_int_equal(tally_reduce(NULL, TALLY_SUM, TALLY_I32, v, 5, NULL, &r), TALLY_ERR_INVALID_ARGUMENT);
    assert_int_equal(r.status, TALLY_ERR_INVALID_ARGUMENT);
    assert_error(tally_reduce(ctx, TALLY_SUM, TALLY_I32, NULL, 5, NULL, &r),
                 TALLY_ERR_INVALID_ARGUMENT, "tally_reduce: data is NULL but n = 5");
    assert_int_equal(r.status, TALLY_ERR_INVALID_ARGUMENT);
    assert_int_equal(tally_reduce(ctx, TALLY_SUM, TALLY_I32, NULL, 0, NULL, &r), TALLY_OK);
    assert_error(tally_reduce(ctx, TALLY_SUM, TALLY_I32, v, 5, NULL, NULL),
                 TALLY_ERR_INVALID_ARGUMENT, "tally_reduce: result is NULL");
    assert_error(tally_reduce_many(ctx, TALLY_I32, v, 5, NULL, 3, NULL, rs),
                 TALLY_ERR_INVALID_ARGUMENT, "tally_reduce_many: ops is NULL");
    assert_error(tally_reduce_many(ctx, TALLY_I32, v, 5, ops, 0, NULL, rs),
                 TALLY_ERR_INVALID_ARGUMENT, "nops is 0");
    assert_error(tally_reduce_many(ctx, TALLY_I32, v, 5, ops, 3, NULL, NULL),
                 TALLY_ERR_INVALID_ARGUMENT, "results is NULL");
    /* unknown op / type, bitwise on floats */
    assert_error(tally_reduce(ctx, (tally_op)12, TALLY_I32, v, 5, NULL, &r), TALLY_ERR_UNKNOWN_OP,
                 "tally_reduce: ops[0] = 12 is not a tally_op");
    assert_error(tally_reduce(ctx, (tally_op)-3, TALLY_I32, v, 5, NULL, &r), TALLY_ERR_UNKNOWN_OP,
                 "-3");
    assert_error(tally_reduce(ctx, TALLY_SUM, (tally_type)10, v, 5, NULL, &r),
                 TALLY_ERR_UNKNOWN_TYPE, "tally_reduce: type = 10 is not a tally_type");
    for (int op = TALLY_AND; op <= TALLY_XOR; op++) {
        assert_error(tally_reduce(ctx, (tally_op)op, TALLY_F32, v, 5, NULL, &r),
                     TALLY_ERR_UNSUPPORTED, "bitwise");
        assert_error(tally_scan(ctx, (tally_op)op, TALLY_F64, v, v, 5, NULL), TALLY_ERR_UNSUPPORTED,
                     "tally_scan: op");
    }
    ops[1] = (tally_op)77;
    assert_error(tally_reduce_many(ctx, TALLY_I32, v, 5, ops, 3, NULL, rs), TALLY_ERR_UNKNOWN_OP,
                 "ops[1] = 77");
    for (int i = 0; i < 3; i++) assert_int_equal(rs[i].status, TALLY_ERR_UNKNOWN_OP);
    ops[1] = TALLY_MIN;
    /* ddof */
    tally_reduce_options bad = {0, -1};
    assert_error(tally_reduce(ctx, TALLY_VAR, TALLY_I32, v, 5, &bad, &r), TALLY_ERR_INVALID_ARGUMENT,
                 "ddof = -1");
    /* a range past the end of the address space */
    assert_error(tally_reduce(ctx, TALLY_SUM, TALLY_I32, v, UINT64_MAX / 2, NULL, &r),
                 TALLY_ERR_INVALID_ARGUMENT, "address space");
    /* scans: reduce-only ops, overlap, init without exclusive */
    static const tally_op red_only[] = {TALLY_COUNT, TALLY_ARGMIN, TALLY_ARGMAX, TALLY_MEAN, TALLY_VAR};
    for (int i = 0; i < 5; i++)
        assert_error(tally_scan(ctx, red_only[i], TALLY_I32, v, v, 5, NULL), TALLY_ERR_UNSUPPORTED,
                     "is a reduction only");
    char expect[160];
    snprintf(expect, sizeof expect, "tally_scan: out overlaps in (in=[%p,+400), out=%p)",
             (void *)v, (void *)(v + 1));
    assert_error(tally_scan(ctx, TALLY_SUM, TALLY_I32, v, v + 1, 100, NULL), TALLY_ERR_OVERLAP, expect);
    assert_error(tally_scan(ctx, TALLY_SUM, TALLY_I32, v + 1, v, 99, NULL), TALLY_ERR_OVERLAP,
                 "overlaps");
    assert_int_equal(tally_scan(ctx, TALLY_SUM, TALLY_I32, v, v + 50, 50, NULL), TALLY_OK); /* adjacent */
    assert_int_equal(tally_scan(ctx, TALLY_SUM, TALLY_I32, v, v, 100, NULL), TALLY_OK);    /* in place */
    assert_error(tally_scan(ctx, TALLY_SUM, TALLY_I32, NULL, v, 3, NULL), TALLY_ERR_INVALID_ARGUMENT,
                 "tally_scan: in is NULL but n = 3");
    assert_error(tally_scan(ctx, TALLY_SUM, TALLY_I32, v, NULL, 3, NULL), TALLY_ERR_INVALID_ARGUMENT,
                 "tally_scan: out is NULL");
    assert_int_equal(tally_scan(ctx, TALLY_SUM, TALLY_I32, NULL, NULL, 0, NULL), TALLY_OK);
    tally_scan_options so = {0, 1, {.i64 = 3}};
    assert_error(tally_scan(ctx, TALLY_SUM, TALLY_I32, v, v, 3, &so), TALLY_ERR_INVALID_ARGUMENT,
                 "has_init");
    assert_error(tally_scan(ctx, (tally_op)40, TALLY_I32, v, v, 3, NULL), TALLY_ERR_UNKNOWN_OP,
                 "op = 40");
    assert_error(tally_scan(ctx, TALLY_SUM, (tally_type)-1, v, v, 3, NULL), TALLY_ERR_UNKNOWN_TYPE,
                 "type = -1");
    assert_int_equal(tally_scan(NULL, TALLY_SUM, TALLY_I32, v, v, 3, NULL), TALLY_ERR_INVALID_ARGUMENT);
    /* status messages for per-result failures */
    assert_error(tally_reduce(ctx, TALLY_MIN, TALLY_I32, v, 0, NULL, &r), TALLY_ERR_EMPTY,
                 "tally_reduce: min of 0 i32 elements");
    tally_destroy(ctx);
}

/* The stream equals one-shot results bit for bit (the variance to a few ulps), whatever the
 * chunking, including chunks that split the float product's blocks. */
static void test_stream(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 3; threads++) {
        tally_context *ctx = cpu_ctx(threads);
        uint64_t n = 300007;
        void *x = malloc(n * 8);
        for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
            rng_state = 11 + (uint64_t)t;
            fill((tally_type)t, x, n, t_is_float((tally_type)t) ? DATA_PROD : DATA_RANDOM);
            if (t_is_float((tally_type)t)) ((float *)x)[77] = NAN; /* (a NaN either way) */
            tally_op ops[12];
            size_t nops = 0;
            for (int o = 0; o < TALLY_OP_COUNT; o++)
                if (!t_is_float((tally_type)t) || (o < TALLY_AND || o > TALLY_XOR)) ops[nops++] = (tally_op)o;
            for (int omit = 0; omit <= 1; omit++) {
                tally_reduce_options ro = {omit, 1};
                tally_result want[12], got[12];
                tally_reduce_many(ctx, (tally_type)t, x, n, ops, nops, &ro, want);
                tally_stream *s = NULL;
                assert_int_equal(tally_stream_create(ctx, (tally_type)t, ops, nops, &ro, &s), TALLY_OK);
                size_t size = tally_type_size((tally_type)t);
                uint64_t done = 0;
                while (done < n) {
                    uint64_t k = rnd() % 3 == 0 ? rnd() % 100 : rnd() % 70000;
                    if (k > n - done) k = n - done;
                    assert_int_equal(tally_stream_update(s, (char *)x + done * size, k), TALLY_OK);
                    done += k;
                    if (rnd() % 4 == 0) tally_stream_results(s, got); /* reading does not disturb */
                }
                assert_int_equal(tally_stream_count(s), n);
                tally_stream_results(s, got);
                for (size_t i = 0; i < nops; i++) {
                    if (ops[i] == TALLY_VAR && want[i].status == TALLY_OK && !isnan(want[i].value.f64)) {
                        assert_int_equal(got[i].status, TALLY_OK);
                        double rel = fabs(got[i].value.f64 - want[i].value.f64) / want[i].value.f64;
                        if (rel > 1e-12) {
                            print_error("stream var %s: %.17g vs %.17g\n", tally_type_name((tally_type)t),
                                        got[i].value.f64, want[i].value.f64);
                            fail();
                        }
                        continue;
                    }
                    assert_result(&got[i], &want[i], "stream vs one-shot, %s threads=%d omit=%d",
                                  tally_type_name((tally_type)t), threads, omit);
                }
                tally_stream_destroy(s);
            }
        }
        /* errors */
        tally_stream *s = NULL;
        tally_op bad[2] = {TALLY_SUM, TALLY_XOR};
        assert_int_equal(tally_stream_create(ctx, TALLY_F32, bad, 2, NULL, &s), TALLY_ERR_UNSUPPORTED);
        assert_null(s);
        assert_int_equal(tally_stream_create(ctx, TALLY_F32, bad, 0, NULL, &s), TALLY_ERR_INVALID_ARGUMENT);
        assert_int_equal(tally_stream_create(ctx, TALLY_F32, bad, 1, NULL, NULL), TALLY_ERR_INVALID_ARGUMENT);
        assert_int_equal(tally_stream_create(ctx, TALLY_F32, bad, 1, NULL, &s), TALLY_OK);
        assert_int_equal(tally_stream_update(s, NULL, 4), TALLY_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(tally_last_error(ctx), "tally_stream_update: data is NULL"));
        assert_int_equal(tally_stream_update(s, NULL, 0), TALLY_OK);
        assert_int_equal(tally_stream_update(NULL, x, 4), TALLY_ERR_INVALID_ARGUMENT);
        tally_result r;
        assert_int_equal(tally_stream_results(s, &r), TALLY_OK);
        assert_true(r.value.f64 == 0.0);
        tally_stream_destroy(s);
        tally_stream_destroy(NULL);
        free(x);
        tally_destroy(ctx);
    }
}

/* Several contexts used at once from several threads (each context by one thread). */
#include <pthread.h>
static void *one_user(void *arg)
{
    int64_t *sum = arg;
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    o.threads = 2;
    tally_context *ctx;
    if (tally_create(&ctx, &o) != TALLY_OK) return NULL;
    uint64_t n = 1u << 20;
    int32_t *v = malloc(n * 4);
    for (uint64_t i = 0; i < n; i++) v[i] = (int32_t)(i % 1000) - 500;
    tally_result r;
    for (int rep = 0; rep < 20; rep++) {
        tally_reduce(ctx, TALLY_SUM, TALLY_I32, v, n, NULL, &r);
        tally_scan(ctx, TALLY_SUM, TALLY_I32, v, v, 1000, NULL);
        for (int i = 999; i > 0; i--) v[i] -= v[i - 1]; /* undo */
    }
    *sum = r.value.i64;
    free(v);
    tally_destroy(ctx);
    return NULL;
}

static void test_concurrent_contexts(void **state)
{
    (void)state;
    pthread_t th[3];
    int64_t sums[3] = {1, 1, 1};
    for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, one_user, &sums[i]);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    int64_t want = 0;
    for (uint64_t i = 0; i < (1u << 20); i++) want += (int64_t)(i % 1000) - 500;
    for (int i = 0; i < 3; i++) assert_true(sums[i] == want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),         cmocka_unit_test(test_contexts),
        cmocka_unit_test(test_isa_env),       cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_stream),        cmocka_unit_test(test_concurrent_contexts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
