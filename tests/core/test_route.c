/* AUTO contexts (core/route.c) without a GPU: the router over the CPU and a stand-in "GPU"
 * backend whose device memory is an arena of host memory (its owns() says which pointers are
 * in it) and whose calls run on a CPU state of its own, counted. So every routing decision can
 * be checked here: where host and "device" pointers go, that the GPU starts only when a call
 * needs it, the size model, failures to start, streams, batches and the carry of libtally_mpi;
 * and every routed result is compared bit for bit with a plain CPU context's. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "tally.h"
#include "core/backend.h"
#include "core/internal.h"
#include "core/route.h"

/* ---- the stand-in GPU ---------------------------------------------------------------------- */
static struct {
    int available, fail_init;
    int inits, finis, reduces, scans, copies;
    char *arena;
    size_t arena_bytes;
} fake;

static int fake_available(void) { return fake.available; }
static int fake_owns(const void *p)
{
    const char *c = p;
    return fake.arena && c >= fake.arena && c < fake.arena + fake.arena_bytes;
}
static tally_status fake_init(tally_context *ctx, const tally_options *opts, void **state)
{
    fake.inits++;
    if (fake.fail_init)
        return tally_set_error(ctx, TALLY_ERR_BACKEND_FAILURE, "fake: the device fell over");
    tally_options o = *opts;
    o.threads = 1;
    return tally_cpu_backend.init(ctx, &o, state);
}
static void fake_fini(void *state)
{
    fake.finis++;
    tally_cpu_backend.fini(state);
}
static tally_status fake_reduce(tally_context *ctx, void *state, tally_type type, const void *data,
                                uint64_t n, const tally_op *ops, size_t nops,
                                const tally_reduce_options *opts, tally_result *results)
{
    fake.reduces++;
    return tally_cpu_backend.reduce(ctx, state, type, data, n, ops, nops, opts, results);
}
static tally_status fake_scan(tally_context *ctx, void *state, tally_op op, tally_type type,
                              const void *in, void *out, uint64_t n, const tally_scan_options *o)
{
    fake.scans++;
    return tally_cpu_backend.scan(ctx, state, op, type, in, out, n, o);
}
static tally_status fake_copy(tally_context *ctx, void *state, void *dst, const void *src,
                              uint64_t bytes)
{
    (void)ctx;
    (void)state;
    fake.copies++;
    memcpy(dst, src, (size_t)bytes);
    return TALLY_OK;
}
static const char *fake_describe(void *state)
{
    (void)state;
    return "fake GPU";
}
static const tally_backend fake_gpu = {
    .kind = TALLY_BACKEND_CUDA, .name = "cuda", .available = fake_available, .init = fake_init,
    .fini = fake_fini, .reduce = fake_reduce, .scan = fake_scan, .describe = fake_describe,
    .copy = fake_copy, .owns = fake_owns,
};

static void fake_reset(int available, size_t arena_bytes)
{
    free(fake.arena);
    memset(&fake, 0, sizeof fake);
    fake.available = available;
    fake.arena_bytes = arena_bytes;
    fake.arena = arena_bytes ? calloc(1, arena_bytes) : NULL;
}

static tally_context *auto_ctx(int threads)
{
    tally_options o;
    tally_options_init(&o);
    o.threads = threads;
    tally_context *c = NULL;
    assert_int_equal(tally_route_create_with(&c, &o, &fake_gpu), TALLY_OK);
    assert_non_null(c);
    return c;
}

static tally_context *cpu_ctx(void)
{
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    o.threads = 2;
    tally_context *c = NULL;
    assert_int_equal(tally_create(&c, &o), TALLY_OK);
    return c;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static void fill_f64(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = ((double)(int64_t)(next_u64() >> 11) - 0x1p52) * 0x1p-30 * ((i % 7) ? 1 : 0x1p40);
}

static void assert_same_results(const tally_result *a, const tally_result *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(a[i].status, b[i].status);
        assert_int_equal(a[i].type, b[i].type);
        assert_memory_equal(&a[i].value, &b[i].value, sizeof a[i].value);
        assert_int_equal(a[i].index, b[i].index);
    }
}

/* ---- tests --------------------------------------------------------------------------------- */
/* Creating an AUTO context starts no GPU; host data runs on the CPU; "device" data on the GPU,
 * which starts once, at the first call that needs it; results as a CPU context's. */
static void test_pointer_kinds(void **state)
{
    (void)state;
    const size_t n = 10007;
    fake_reset(1, n * sizeof(double));
    tally_context *a = auto_ctx(2), *c = cpu_ctx();
    assert_int_equal(fake.inits, 0);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
    /* it can take device pointers, so it says CUDA; asking starts nothing */
    assert_int_equal(tally_active_backend(a), TALLY_BACKEND_CUDA);
    assert_int_equal(fake.inits, 0);

    double *host = malloc(n * sizeof *host), *dev = (double *)fake.arena;
    fill_f64(host, n);
    memcpy(dev, host, n * sizeof *host);
    const tally_op ops[] = {TALLY_SUM, TALLY_MIN, TALLY_ARGMAX, TALLY_VAR, TALLY_PROD};
    tally_result ra[5], rc[5];
    assert_int_equal(tally_reduce_many(c, TALLY_F64, host, n, ops, 5, NULL, rc), TALLY_OK);

    assert_int_equal(tally_reduce_many(a, TALLY_F64, host, n, ops, 5, NULL, ra), TALLY_OK);
    assert_same_results(ra, rc, 5);
    assert_int_equal(fake.inits, 0);
    assert_int_equal(fake.reduces, 0);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);

    assert_int_equal(tally_reduce_many(a, TALLY_F64, dev, n, ops, 5, NULL, ra), TALLY_OK);
    assert_same_results(ra, rc, 5);
    assert_int_equal(fake.inits, 1);
    assert_int_equal(fake.reduces, 1);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CUDA);
    assert_string_equal(tally_device_description(a), "fake GPU");

    /* host again: the CPU, and the GPU stays started (no second start) */
    assert_int_equal(tally_reduce_many(a, TALLY_F64, host + 1, n - 1, ops, 2, NULL, ra), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
    assert_int_equal(tally_reduce_many(a, TALLY_F64, dev, n, ops, 5, NULL, ra), TALLY_OK);
    assert_int_equal(fake.inits, 1);
    assert_int_equal(fake.reduces, 2);

    /* scans: to the GPU when either side is device memory */
    double *o1 = malloc(n * sizeof *o1), *o2 = malloc(n * sizeof *o2);
    assert_int_equal(tally_scan(c, TALLY_SUM, TALLY_F64, host, o1, n, NULL), TALLY_OK);
    assert_int_equal(tally_scan(a, TALLY_SUM, TALLY_F64, host, o2, n, NULL), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
    assert_memory_equal(o1, o2, n * sizeof *o1);
    assert_int_equal(fake.scans, 0);
    assert_int_equal(tally_scan(a, TALLY_MAX, TALLY_F64, host, dev, n, NULL), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CUDA);
    assert_int_equal(tally_scan(a, TALLY_MAX, TALLY_F64, dev, o2, n, NULL), TALLY_OK);
    assert_int_equal(fake.scans, 2);
    assert_int_equal(tally_scan(c, TALLY_MAX, TALLY_F64, host, o1, n, NULL), TALLY_OK);
    assert_memory_equal(o1, o2, n * sizeof *o1);

    /* the rule names both paths */
    const char *rule = tally_auto_rule(a);
    assert_non_null(strstr(rule, "device memory -> cuda"));
    assert_non_null(strstr(rule, "host memory -> cpu (2 threads)"));
    assert_string_equal(tally_auto_rule(c), "every call -> cpu");
    tally_destroy(a);
    assert_int_equal(fake.finis, 1);
    tally_destroy(c);
    free(host);
    free(o1);
    free(o2);
    fake_reset(0, 0);
}

/* No usable GPU: device pointers fail with a message (never read by the CPU); host data runs;
 * the context says CPU. A GPU that fails to start: the same, and its message comes back on
 * every call that needs it, which never starts it twice. */
static void test_no_gpu(void **state)
{
    (void)state;
    fake_reset(0, 4096);
    tally_context *a = auto_ctx(1);
    assert_int_equal(tally_active_backend(a), TALLY_BACKEND_CPU);
    assert_string_equal(tally_device_description(a), "");
    assert_non_null(strstr(tally_auto_rule(a), "every call -> cpu (1 thread; the cuda backend cannot run here"));
    tally_result r;
    int64_t host[3] = {1, 2, 3};
    assert_int_equal(tally_reduce(a, TALLY_SUM, TALLY_I64, host, 3, NULL, &r), TALLY_OK);
    assert_int_equal(r.value.i64, 6);
    assert_int_equal(tally_reduce(a, TALLY_SUM, TALLY_I64, fake.arena, 3, NULL, &r),
                     TALLY_ERR_BACKEND_UNAVAILABLE);
    assert_non_null(strstr(tally_last_error(a), "cannot run here"));
    assert_int_equal(fake.inits, 0);
    tally_destroy(a);

    fake_reset(1, 4096);
    fake.fail_init = 1;
    a = auto_ctx(1);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(tally_reduce(a, TALLY_SUM, TALLY_I64, fake.arena, 3, NULL, &r),
                         TALLY_ERR_BACKEND_FAILURE);
        assert_non_null(strstr(tally_last_error(a), "the device fell over"));
    }
    assert_int_equal(fake.inits, 1);
    assert_int_equal(tally_reduce(a, TALLY_SUM, TALLY_I64, host, 3, NULL, &r), TALLY_OK);
    assert_int_equal(tally_active_backend(a), TALLY_BACKEND_CPU);
    assert_non_null(strstr(tally_auto_rule(a), "could not start"));
    tally_destroy(a);
    assert_int_equal(fake.finis, 0);
    fake_reset(0, 0);
}

/* The size model, as arithmetic: the crossover is where the prediction turns, and many threads
 * (or a fast CPU measured) keep host data on the CPU at any size. */
static void test_model(void **state)
{
    (void)state;
    tally_route_model m;
    tally_route_model_init(&m, 1);
    /* 1 thread at 6 GB/s vs 20 GB/s and 0.3 s to start: 0.3 / (0.8/6e9 - 1/20e9) = 3.6e9 */
    uint64_t x = tally_route_crossover(&m, TALLY_ROUTE_REDUCE, 0);
    assert_true(x > 3590000000ull && x < 3610000000ull);
    assert_true(tally_route_host_to_gpu(&m, TALLY_ROUTE_REDUCE, x, 0));
    assert_false(tally_route_host_to_gpu(&m, TALLY_ROUTE_REDUCE, x - x / 100, 0));
    /* once started, the size floor alone */
    assert_int_equal(tally_route_crossover(&m, TALLY_ROUTE_REDUCE, 1), TALLY_ROUTE_MIN_BYTES);
    assert_false(tally_route_host_to_gpu(&m, TALLY_ROUTE_REDUCE, TALLY_ROUTE_MIN_BYTES - 1, 1));
    tally_route_model_init(&m, 16);
    assert_int_equal(tally_route_crossover(&m, TALLY_ROUTE_REDUCE, 1), UINT64_MAX);
    assert_int_equal(tally_route_crossover(&m, TALLY_ROUTE_SCAN, 0), UINT64_MAX);
    assert_false(tally_route_host_to_gpu(&m, TALLY_ROUTE_REDUCE, UINT64_MAX / 2, 1));
}

/* Host data the model sends to the GPU: big enough, and only ops whose bits are the same on
 * both; a CPU call of host data measures the CPU's rate. */
static void test_host_to_gpu(void **state)
{
    (void)state;
    const size_t n = (size_t)(TALLY_ROUTE_MIN_BYTES / 4); /* 64 MiB of f32 */
    fake_reset(1, 0);
    tally_context *a = auto_ctx(1), *c = cpu_ctx();
    tally_route_model *m = tally_route_model_of(a);
    assert_non_null(m);
    m->gpu_start_s = 0;
    m->gpu_rate[TALLY_ROUTE_REDUCE] = m->gpu_rate[TALLY_ROUTE_SCAN] = 1e15;
    m->cpu_rate[TALLY_ROUTE_REDUCE] = m->cpu_rate[TALLY_ROUTE_SCAN] = 1e3;
    float *x = malloc(n * sizeof *x), *o = malloc(n * sizeof *o), *o2 = malloc(n * sizeof *o2);
    for (size_t i = 0; i < n; i++) x[i] = (float)(int32_t)(next_u64() >> 40) * 0x1p-10f;
    tally_result ra[2], rc[2];
    const tally_op sm[] = {TALLY_SUM, TALLY_MAX};
    assert_int_equal(tally_reduce_many(a, TALLY_F32, x, n, sm, 2, NULL, ra), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CUDA);
    assert_int_equal(fake.reduces, 1);
    assert_int_equal(tally_reduce_many(c, TALLY_F32, x, n, sm, 2, NULL, rc), TALLY_OK);
    assert_same_results(ra, rc, 2);
    /* the GPU's measured rate replaced the estimate */
    assert_true(m->gpu_rate[TALLY_ROUTE_REDUCE] < 1e15);
    /* one element less than the floor: the CPU */
    assert_int_equal(tally_reduce_many(a, TALLY_F32, x, n - 1, sm, 2, NULL, ra), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
    /* a float product may round differently: the CPU */
    m->gpu_rate[TALLY_ROUTE_REDUCE] = 1e15;
    const tally_op pr[] = {TALLY_SUM, TALLY_PROD};
    assert_int_equal(tally_reduce_many(a, TALLY_F32, x, n, pr, 2, NULL, ra), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
    /* which was measured: the CPU's rate is now real */
    assert_true(m->cpu_rate[TALLY_ROUTE_REDUCE] > 1e6);
    /* scans: float sum scans stay; max scans go */
    m->cpu_rate[TALLY_ROUTE_SCAN] = 1e3;
    assert_int_equal(tally_scan(a, TALLY_SUM, TALLY_F32, x, o, n, NULL), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
    m->cpu_rate[TALLY_ROUTE_SCAN] = 1e3;
    assert_int_equal(tally_scan(a, TALLY_MAX, TALLY_F32, x, o, n, NULL), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CUDA);
    assert_int_equal(tally_scan(c, TALLY_MAX, TALLY_F32, x, o2, n, NULL), TALLY_OK);
    assert_memory_equal(o, o2, n * sizeof *o);
    /* integer scans go too */
    m->cpu_rate[TALLY_ROUTE_SCAN] = 1e3;
    m->gpu_rate[TALLY_ROUTE_SCAN] = 1e15;
    assert_int_equal(tally_scan(a, TALLY_SUM, TALLY_I32, x, o, n, NULL), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CUDA);
    assert_int_equal(tally_scan(c, TALLY_SUM, TALLY_I32, x, o2, n, NULL), TALLY_OK);
    assert_memory_equal(o, o2, n * sizeof *o);
    tally_destroy(a);
    tally_destroy(c);

    /* predicted faster but it cannot start: the CPU takes it, no error */
    fake_reset(1, 0);
    fake.fail_init = 1;
    a = auto_ctx(1);
    m = tally_route_model_of(a);
    m->gpu_start_s = 0;
    m->gpu_rate[TALLY_ROUTE_REDUCE] = 1e15;
    m->cpu_rate[TALLY_ROUTE_REDUCE] = 1e3;
    assert_int_equal(tally_reduce_many(a, TALLY_F32, x, n, sm, 2, NULL, ra), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
    assert_string_equal(tally_last_error(a), "");
    tally_destroy(a);
    free(x);
    free(o);
    free(o2);
    fake_reset(0, 0);
}

/* Streams, batches, copies and libtally_mpi's carry on an AUTO context. */
static void test_other_paths(void **state)
{
    (void)state;
    /* more than one 32 MiB piece of staged device data, the minimum in the second */
    const size_t n = (size_t)4500000;
    fake_reset(1, n * sizeof(int64_t));
    tally_context *a = auto_ctx(2), *c = cpu_ctx();
    int64_t *host = malloc(n * sizeof *host), *dev = (int64_t *)fake.arena;
    for (size_t i = 0; i < n; i++) host[i] = (int64_t)(next_u64() >> 20) - (1ll << 43);
    host[4400000] = INT64_MIN / 2;
    memcpy(dev, host, n * sizeof *host);
    const tally_op ops[] = {TALLY_SUM, TALLY_ARGMIN, TALLY_VAR};
    tally_result want[3];
    assert_int_equal(tally_reduce_many(c, TALLY_I64, host, n, ops, 3, NULL, want), TALLY_OK);

    /* a stream fed host pieces, then device pieces (staged through copies) */
    tally_stream *s = NULL, *sc = NULL;
    assert_int_equal(tally_stream_create(a, TALLY_I64, ops, 3, NULL, &s), TALLY_OK);
    assert_int_equal(tally_stream_create(c, TALLY_I64, ops, 3, NULL, &sc), TALLY_OK);
    assert_int_equal(tally_stream_update(s, host, 1234), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
    assert_int_equal(tally_stream_update(s, dev + 1234, n - 1234), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CUDA);
    assert_true(fake.copies > 0);
    assert_int_equal(tally_stream_update(sc, host, n), TALLY_OK);
    tally_result sa[3], sb[3];
    assert_int_equal(tally_stream_results(s, sa), TALLY_OK);
    assert_int_equal(tally_stream_results(sc, sb), TALLY_OK);
    assert_same_results(sa, sb, 3);
    assert_same_results(sa, want, 2);
    tally_stream_destroy(s);
    tally_stream_destroy(sc);

    /* batches: device rows run row by row on the GPU's reduce */
    uint64_t offs[4] = {0, 10, 10, n};
    tally_result ba[9], bc[9];
    assert_int_equal(tally_reduce_segments(c, TALLY_I64, host, offs, 3, ops, 3, NULL, bc),
                     TALLY_ERR_EMPTY);
    int before = fake.reduces;
    assert_int_equal(tally_reduce_segments(a, TALLY_I64, dev, offs, 3, ops, 3, NULL, ba),
                     TALLY_ERR_EMPTY);
    assert_int_equal(fake.reduces - before, 3);
    assert_same_results(ba, bc, 9);
    assert_int_equal(tally_reduce_segments(a, TALLY_I64, host, offs, 3, ops, 3, NULL, ba),
                     TALLY_ERR_EMPTY);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
    assert_same_results(ba, bc, 9);

    /* copies: host to host without the GPU's copy */
    int copies = fake.copies;
    int64_t tmp[4];
    assert_int_equal(tally_internal_copy(a, tmp, host, sizeof tmp), TALLY_OK);
    assert_int_equal(fake.copies, copies);
    assert_int_equal(tally_internal_copy(a, tmp, dev + 8, sizeof tmp), TALLY_OK);
    assert_int_equal(fake.copies, copies + 1);
    assert_memory_equal(tmp, host + 8, sizeof tmp);

    /* the variance pass of libtally_mpi over device data */
    tally_exact e1, e2;
    assert_int_equal(tally_internal_sqdev(a, TALLY_I64, dev, n, 12.5, 0, &e1), TALLY_OK);
    assert_int_equal(tally_internal_sqdev(c, TALLY_I64, host, n, 12.5, 0, &e2), TALLY_OK);
    double d1 = tally_exact_round(&e1), d2 = tally_exact_round(&e2);
    assert_memory_equal(&d1, &d2, sizeof d1);

    /* a carry into an inclusive scan: the CPU's for host data, refused for device data */
    tally_scan_options so;
    memset(&so, 0, sizeof so);
    so.has_init = 1;
    so.init.i64 = 77;
    int64_t *o1 = malloc(n * sizeof *o1), *o2 = malloc(n * sizeof *o2);
    assert_int_equal(tally_internal_scan(a, TALLY_SUM, TALLY_I64, host, o1, n, &so), TALLY_OK);
    assert_int_equal(tally_internal_scan(c, TALLY_SUM, TALLY_I64, host, o2, n, &so), TALLY_OK);
    assert_memory_equal(o1, o2, n * sizeof *o1);
    assert_int_equal(o1[0], 77 + host[0]);
    assert_int_equal(tally_internal_scan(a, TALLY_SUM, TALLY_I64, dev, o1, n, &so),
                     TALLY_ERR_UNSUPPORTED);
    tally_destroy(a);
    tally_destroy(c);
    free(host);
    free(o1);
    free(o2);
    fake_reset(0, 0);
}

/* 1 if the CUDA driver is loaded in this process (the runtime loads it by this name). */
static int cuda_driver_loaded(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != NULL;
}

/* A real AUTO context (tally_create) given host data: every call runs on the CPU with the CPU
 * context's bits, and neither creating it nor running host data loads a GPU driver. On a
 * machine without a GPU this holds at every size; with one, for data under the size floor. */
static void test_real_auto(void **state)
{
    (void)state;
    int driver_before = cuda_driver_loaded();
    tally_context *a = NULL, *c = cpu_ctx();
    tally_options o;
    tally_options_init(&o);
    o.threads = 2;
    assert_int_equal(tally_create(&a, &o), TALLY_OK);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
    const size_t sizes[] = {0, 1, 2, 255, 4097, 65537, 1000003};
    const size_t nmax = 1000003;
    double *x = malloc(nmax * sizeof *x), *o1 = malloc(nmax * sizeof *o1),
           *o2 = malloc(nmax * sizeof *o2);
    fill_f64(x, nmax);
    const tally_op ops[] = {TALLY_SUM, TALLY_PROD, TALLY_MIN, TALLY_ARGMAX, TALLY_MEAN, TALLY_VAR};
    const tally_op sops[] = {TALLY_SUM, TALLY_PROD, TALLY_MAX};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        tally_result ra[6], rc[6];
        tally_status sa = tally_reduce_many(a, TALLY_F64, x, n, ops, 6, NULL, ra);
        tally_status sc = tally_reduce_many(c, TALLY_F64, x, n, ops, 6, NULL, rc);
        assert_int_equal(sa, sc);
        assert_same_results(ra, rc, 6);
        assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
        for (size_t j = 0; j < 3; j++) {
            memset(o1, 0, nmax * sizeof *o1);
            memset(o2, 0, nmax * sizeof *o2);
            assert_int_equal(tally_scan(a, sops[j], TALLY_F64, x, o1, n, NULL),
                             tally_scan(c, sops[j], TALLY_F64, x, o2, n, NULL));
            assert_memory_equal(o1, o2, nmax * sizeof *o1);
            assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
        }
    }
    /* a stream of host pieces, against the same stream on the CPU context */
    tally_stream *s = NULL, *sc = NULL;
    tally_result sr[6], want[6];
    assert_int_equal(tally_stream_create(a, TALLY_F64, ops, 6, NULL, &s), TALLY_OK);
    assert_int_equal(tally_stream_create(c, TALLY_F64, ops, 6, NULL, &sc), TALLY_OK);
    for (size_t i = 0; i < nmax; i += 100000) {
        size_t m = nmax - i < 100000 ? nmax - i : 100000;
        assert_int_equal(tally_stream_update(s, x + i, m), TALLY_OK);
        assert_int_equal(tally_stream_update(sc, x + i, m), TALLY_OK);
    }
    assert_int_equal(tally_stream_results(s, sr), TALLY_OK);
    assert_int_equal(tally_stream_results(sc, want), TALLY_OK);
    tally_stream_destroy(s);
    tally_stream_destroy(sc);
    assert_same_results(sr, want, 6);
    assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
    /* nothing above needed a GPU, so no driver came into the process */
    if (!driver_before) assert_false(cuda_driver_loaded());
    if (!tally_backend_available(TALLY_BACKEND_CUDA)) {
        /* no GPU: the context says CPU, and host data past every size floor stays there */
        assert_int_equal(tally_active_backend(a), TALLY_BACKEND_CPU);
        assert_non_null(strstr(tally_auto_rule(a), "every call -> cpu"));
        const size_t big = (size_t)(TALLY_ROUTE_MIN_BYTES / sizeof(int32_t)) + 17;
        int32_t *y = malloc(big * sizeof *y);
        for (size_t i = 0; i < big; i++) y[i] = (int32_t)(next_u64() >> 40) - (1 << 23);
        tally_result r1, r2;
        assert_int_equal(tally_reduce(a, TALLY_SUM, TALLY_I32, y, big, NULL, &r1), TALLY_OK);
        assert_int_equal(tally_last_backend(a), TALLY_BACKEND_CPU);
        assert_int_equal(tally_reduce(c, TALLY_SUM, TALLY_I32, y, big, NULL, &r2), TALLY_OK);
        assert_same_results(&r1, &r2, 1);
        free(y);
    }
    tally_destroy(a);
    tally_destroy(c);
    free(x);
    free(o1);
    free(o2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pointer_kinds), cmocka_unit_test(test_no_gpu),
        cmocka_unit_test(test_model),         cmocka_unit_test(test_host_to_gpu),
        cmocka_unit_test(test_other_paths),   cmocka_unit_test(test_real_auto),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
