/* The threaded reduction pass hands out chunks of the data from a counter, so a thread's partial
 * covers ranges that interleave with the other threads', and the partials are merged in thread
 * order, not index order. Every result must still be that of the data in index order: the first
 * index of a tied minimum or maximum, the first NaN, overflow and zero in integer products, the
 * float product's block order. Here the chunks also go round robin with the partials merged last
 * thread first (tally_cpu_set_reduce_chunks), which makes a merge that depends on the order fail
 * on every run, with ties and NaNs placed in late chunks, at sizes around the block, chunk and
 * prefetch boundaries, against the exact references. */
#include "reference.h"
#include "cpu/cpu.h" /* tally_cpu_set_reduce_chunks */

static const int chunk_threads[] = {3, 16, 2};

/* (bytes, interleave): by size; one block per chunk from the counter; one block per chunk
 * round robin; by size round robin */
static const struct { uint64_t bytes; int interleave; } schedules[] = {{1, 1}, {0, 0}, {1, 0}, {0, 1}};
/* A sanitizer build (20x slower) takes the first two thread counts and schedules. */
#define N_CT (UNDER_SANITIZER ? 2 : 3)
#define N_SCHED (UNDER_SANITIZER ? 2 : 4)

static const tally_op all_ops[] = {TALLY_SUM, TALLY_PROD, TALLY_MIN, TALLY_MAX, TALLY_AND,
                                   TALLY_OR, TALLY_XOR, TALLY_COUNT, TALLY_ARGMIN, TALLY_ARGMAX,
                                   TALLY_MEAN, TALLY_VAR};
#define N_ALL_OPS 12
/* Single calls take other paths (a float sum alone, argmin alone, ...). */
static const tally_op single_ops[] = {TALLY_SUM, TALLY_PROD, TALLY_MIN, TALLY_ARGMIN, TALLY_ARGMAX};
#define N_SINGLE 5

enum pattern { PAT_TIES, PAT_CONSTANT, PAT_LATE };
static const char *pattern_name[] = {"ties", "constant", "late NaN / zero"};

static void put(tally_type t, void *x, uint64_t i, double v)
{
    switch (t) {
    case TALLY_I8: ((int8_t *)x)[i] = (int8_t)v; break;
    case TALLY_I16: ((int16_t *)x)[i] = (int16_t)v; break;
    case TALLY_I32: ((int32_t *)x)[i] = (int32_t)v; break;
    case TALLY_I64: ((int64_t *)x)[i] = (int64_t)v; break;
    case TALLY_U8: ((uint8_t *)x)[i] = (uint8_t)v; break;
    case TALLY_U16: ((uint16_t *)x)[i] = (uint16_t)v; break;
    case TALLY_U32: ((uint32_t *)x)[i] = (uint32_t)v; break;
    case TALLY_U64: ((uint64_t *)x)[i] = (uint64_t)v; break;
    case TALLY_F32: ((float *)x)[i] = (float)v; break;
    case TALLY_F64: ((double *)x)[i] = v; break;
    default: break;
    }
}

/* A position in the last two thirds of the data (past the first chunks). */
static uint64_t late(uint64_t n) { return n / 3 + rnd() % (n - n / 3); }

static void make(tally_type t, void *x, uint64_t n, enum pattern p)
{
    const int sgn = t_is_signed(t) || t_is_float(t);
    const double lo = sgn ? -100 : 0, hi = sgn ? 100 : 200;
    if (p == PAT_CONSTANT) {
        for (uint64_t i = 0; i < n; i++) put(t, x, i, 7);
        return;
    }
    if (p == PAT_TIES) {
        /* values strictly between lo and hi; each extreme planted a few times, first past the
         * first third, so that its first occurrence and its ties lie in different chunks */
        for (uint64_t i = 0; i < n; i++) put(t, x, i, lo + 1 + (double)(rnd() % (uint64_t)(hi - lo - 1)));
        for (int k = 0; k < 6; k++) {
            put(t, x, late(n), lo);
            put(t, x, late(n), hi);
        }
        if (t_is_float(t)) { /* -0 < +0: a tie only for equal signs */
            put(t, x, late(n), 0.0);
            put(t, x, late(n), -0.0);
        }
        return;
    }
    /* late: floats over many binades with NaNs only in late chunks; integers whose product
     * overflows in the early chunks and is zero from a late one */
    fill(t, x, n, t_is_float(t) ? DATA_RANDOM : DATA_PROD);
    for (int k = 0; k < 3; k++) put(t, x, late(n), t_is_float(t) ? NAN : 0);
}

static void check(tally_context *ctx, tally_type t, const void *x, uint64_t n, int omit_nan,
                  const tally_result *want, const tally_op *ops, size_t nops, const char *what)
{
    tally_reduce_options o = {omit_nan, 1};
    tally_result got[N_ALL_OPS];
    tally_reduce_many(ctx, t, x, n, ops, nops, &o, got);
    for (size_t i = 0; i < nops; i++) assert_result(&got[i], &want[i], "fused, %s", what);
    for (int s = 0; s < N_SINGLE; s++) {
        size_t i = 0;
        while (i < nops && ops[i] != single_ops[s]) i++;
        tally_result r;
        tally_reduce(ctx, single_ops[s], t, x, n, &o, &r);
        assert_result(&r, &want[i], "single, %s", what);
    }
    /* a stream: the first update leaves the float product's block open, the others carry on */
    tally_stream *st = NULL;
    assert_int_equal(tally_stream_create(ctx, t, ops, nops, &o, &st), TALLY_OK);
    const size_t es = tally_type_size(t);
    uint64_t cut1 = n < 1001 ? n : 1001, cut2 = cut1 + (n - cut1) / 2;
    tally_stream_update(st, x, cut1);
    tally_stream_update(st, (const char *)x + cut1 * es, cut2 - cut1);
    tally_stream_update(st, (const char *)x + cut2 * es, n - cut2);
    tally_stream_results(st, got);
    tally_stream_destroy(st);
    for (size_t i = 0; i < nops; i++) /* (a stream's variance is not correctly rounded) */
        if (ops[i] != TALLY_VAR) assert_result(&got[i], &want[i], "stream, %s", what);
}

static void test_chunk_order(void **state)
{
    (void)state;
    tally_context *ctx[3];
    for (int k = 0; k < N_CT; k++) {
        tally_options o;
        tally_options_init(&o);
        o.backend = TALLY_BACKEND_CPU;
        o.threads = chunk_threads[k];
        assert_int_equal(tally_create(&ctx[k], &o), TALLY_OK);
    }
    rng_state = 23;
    for (int ti = 0; ti < TALLY_TYPE_COUNT; ti++) {
        const tally_type t = (tally_type)ti;
        const uint64_t es = tally_type_size(t);
        /* elements: a few blocks; 64 blocks +-1; the 2 MiB from which the chunks are read in
         * prefetched sub-pieces, +-1; an odd size past it (fewer under a sanitizer) */
        const uint64_t pf = (2u << 20) / es;
        uint64_t sizes[] = {3 * 4096 + 1, 64 * 4096 - 1, 64 * 4096 + 1, pf - 1, pf + 1,
                            pf + 37 * 4096 + 4095};
        const int nsizes = UNDER_SANITIZER ? 3 : 6;
        void *x = malloc(sizes[5] * es);
        assert_non_null(x);
        tally_op ops[N_ALL_OPS];
        size_t nops = 0;
        for (int i = 0; i < N_ALL_OPS; i++)
            if (!t_is_float(t) || (all_ops[i] != TALLY_AND && all_ops[i] != TALLY_OR && all_ops[i] != TALLY_XOR))
                ops[nops++] = all_ops[i];
        for (int si = 0; si < nsizes; si++) {
            const uint64_t n = sizes[si];
            for (int p = 0; p < 3; p++) {
                make(t, x, n, (enum pattern)p);
                for (int omit_nan = 0; omit_nan <= (t_is_float(t) && p == PAT_LATE); omit_nan++) {
                    tally_result want[N_ALL_OPS];
                    for (size_t i = 0; i < nops; i++) ref_reduce(t, x, n, ops[i], omit_nan, 1, &want[i]);
                    for (int k = 0; k < N_CT; k++)
                        for (int s = 0; s < N_SCHED; s++) {
                            tally_cpu_set_reduce_chunks(ctx[k], schedules[s].bytes, schedules[s].interleave);
                            char what[160];
                            snprintf(what, sizeof what,
                                     "%s n=%llu %s omit_nan=%d threads=%d chunk bytes=%llu interleave=%d",
                                     tally_type_name(t), (unsigned long long)n, pattern_name[p],
                                     omit_nan, chunk_threads[k],
                                     (unsigned long long)schedules[s].bytes, schedules[s].interleave);
                            check(ctx[k], t, x, n, omit_nan, want, ops, nops, what);
                        }
                }
            }
        }
        free(x);
    }
    for (int k = 0; k < N_CT; k++) tally_destroy(ctx[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_chunk_order)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
