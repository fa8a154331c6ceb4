/* Shared by the core tests: the ISA x thread-count matrix of contexts, random data, and exact
 * references written independently of the library (tests/support/exact_reference.h). */
#ifndef TALLY_TEST_COMMON_H
#define TALLY_TEST_COMMON_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "tally.h"
#include "../support/exact_reference.h"

/* ---- the matrix ------------------------------------------------------------------------- */
static const int test_threads[] = {1, 2, 3};
#define N_THREADS 3

/* Contexts for one ISA path, one per thread count; skips the test (with a message) when the
 * CPU lacks the path. */
typedef struct isa_ctxs {
    tally_isa isa;
    tally_context *ctx[N_THREADS];
} isa_ctxs;

static inline int open_isa(void **state, tally_isa isa)
{
    isa_ctxs *c = calloc(1, sizeof *c);
    c->isa = isa;
    *state = c;
    if ((int)isa > (int)tally_cpu_best_isa()) return 0;
#if defined(__SANITIZE_THREAD__)
    /* ThreadSanitizer looks for races in the threading, which every ISA path shares: the best
     * path alone (the others are the same pool over other kernels, 3x the time there) */
    if (isa != tally_cpu_best_isa()) return 0;
#endif
    for (int i = 0; i < N_THREADS; i++) {
        tally_options o;
        tally_options_init(&o);
        o.backend = TALLY_BACKEND_CPU;
        o.threads = test_threads[i];
        o.isa = isa;
        tally_status s = tally_create(&c->ctx[i], &o);
        if (s != TALLY_OK) {
            fprintf(stderr, "tally_create(%s, %d threads): %s: %s\n", tally_isa_name(isa),
                    o.threads, tally_status_name(s), tally_create_error());
            return -1;
        }
    }
    return 0;
}
static inline int setup_scalar(void **state) { return open_isa(state, TALLY_ISA_SCALAR); }
static inline int setup_avx2(void **state) { return open_isa(state, TALLY_ISA_AVX2); }
static inline int setup_avx512(void **state) { return open_isa(state, TALLY_ISA_AVX512); }
static inline int teardown_isa(void **state)
{
    isa_ctxs *c = *state;
    for (int i = 0; i < N_THREADS; i++) tally_destroy(c->ctx[i]);
    free(c);
    return 0;
}
/* Call first in a test: skips it where the CPU lacks the path. */
#define REQUIRE_ISA(c)                                                                        \
    do {                                                                                      \
        if (!(c)->ctx[0]) {                                                                   \
            print_message("[  SKIP    ] %s path: %s (best: %s)\n", tally_isa_name((c)->isa),    \
                          (int)(c)->isa > (int)tally_cpu_best_isa()                            \
                              ? "this CPU has none" : "ThreadSanitizer runs the best only",    \
                          tally_isa_name(tally_cpu_best_isa()));                               \
            skip();                                                                           \
        }                                                                                     \
    } while (0)

/* One test per ISA path: NAME_scalar, NAME_avx2, NAME_avx512. */
#define ISA_TESTS(fn)                                                                         \
    cmocka_unit_test_setup_teardown(fn, setup_scalar, teardown_isa),                          \
    cmocka_unit_test_setup_teardown(fn, setup_avx2, teardown_isa),                            \
    cmocka_unit_test_setup_teardown(fn, setup_avx512, teardown_isa)

/* ---- random data ---------------------------------------------------------------------------- */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static inline uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dull;
}
static inline double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-53; }

/* Sanitizer builds run 5-20x slower: the biggest cases shrink there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#else
#define UNDER_SANITIZER 0
#endif

/* Largest size the big cases use: TALLY_TEST_BIG (elements), default 3,000,001 (300,001 under
 * a sanitizer). */
static inline uint64_t big_n(void)
{
    const char *e = getenv("TALLY_TEST_BIG");
    if (e && *e) return strtoull(e, NULL, 10);
    return UNDER_SANITIZER ? 300001ull : 3000001ull;
}

#define assert_same_double(a, b, ...)                                                         \
    do {                                                                                      \
        double a_ = (a), b_ = (b);                                                            \
        if (!same_double(a_, b_)) {                                                           \
            print_error("got %.17g (%a), want %.17g (%a): ", a_, a_, b_, b_);                 \
            print_error(__VA_ARGS__);                                                         \
            print_error("\n");                                                                \
            fail();                                                                           \
        }                                                                                     \
    } while (0)

#endif
