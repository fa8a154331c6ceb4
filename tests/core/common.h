/* Shared by the core tests: the ISA x thread-count matrix of contexts, random data, and exact
 * references written independently of the library (integer and big fixed-point arithmetic). */
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
            print_message("[  SKIP    ] this CPU has no %s path (best: %s)\n",                \
                          tally_isa_name((c)->isa), tally_isa_name(tally_cpu_best_isa()));    \
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

/* ---- exact float sums: a big two's-complement fixed-point number --------------------------
 * value = (signed integer in w[0..BF_WORDS-1], 32 bits a word, little-endian) * 2^-BF_LSB.
 * Every double is a whole multiple of 2^-1074; the range reaches past 2^1100. Adds propagate
 * carries at once (slow, plain, obviously right). */
#define BF_WORDS 72
#define BF_LSB 1100
typedef struct bigfix {
    uint32_t w[BF_WORDS];
    int nan, pinf, ninf, any, nonnegzero;
} bigfix;

static inline void bf_init(bigfix *b) { memset(b, 0, sizeof *b); }

/* Adds (or subtracts) the integer m << shift, propagating the carry (borrow) as far as it goes;
 * the two's complement wraps at the top word. */
static inline void bf_add_shifted(bigfix *b, uint64_t m, int shift, int negative)
{
    int wi = shift / 32, s = shift % 32;
    unsigned __int128 v = (unsigned __int128)m << s;
    int64_t carry = 0;
    for (int k = wi; k < BF_WORDS; k++) {
        int64_t part = k - wi < 4 ? (int64_t)(uint32_t)(v >> (32 * (k - wi))) : 0;
        if (k - wi >= 4 && carry == 0) break;
        int64_t t = (int64_t)b->w[k] + (negative ? -part : part) + carry;
        b->w[k] = (uint32_t)t;
        carry = (t - (int64_t)(uint32_t)t) / ((int64_t)1 << 32); /* -1, 0 or 1 */
    }
}

static inline void bf_add(bigfix *b, double x)
{
    if (isnan(x)) { b->nan = 1; b->any = 1; b->nonnegzero = 1; return; }
    if (isinf(x)) { if (x > 0) b->pinf = 1; else b->ninf = 1; b->any = b->nonnegzero = 1; return; }
    b->any = 1;
    if (!(x == 0 && signbit(x))) b->nonnegzero = 1;
    if (x == 0) return;
    int e;
    double f = frexp(fabs(x), &e); /* |x| = f * 2^e, f in [0.5, 1) */
    /* |x| = M * 2^(e-53) with M = f * 2^53 an integer (exact for every double). */
    uint64_t M = (uint64_t)ldexp(f, 53);
    int shift = e - 53 + BF_LSB;
    while (shift < 0) { M >>= 1; shift++; } /* never drops set bits: subnormals are multiples */
    bf_add_shifted(b, M, shift, x < 0);
}

/* Correctly rounded (nearest, ties to even) value. */
static inline double bf_round(const bigfix *b0)
{
    if (b0->nan || (b0->pinf && b0->ninf)) return NAN;
    if (b0->pinf) return INFINITY;
    if (b0->ninf) return -INFINITY;
    bigfix b = *b0;
    int neg = (b.w[BF_WORDS - 1] >> 31) & 1;
    if (neg) { /* negate */
        uint64_t carry = 1;
        for (int k = 0; k < BF_WORDS; k++) {
            uint64_t t = (uint64_t)(uint32_t)~b.w[k] + carry;
            b.w[k] = (uint32_t)t;
            carry = t >> 32;
        }
    }
    int h = -1;
    for (int k = BF_WORDS * 32 - 1; k >= 0; k--)
        if ((b.w[k / 32] >> (k % 32)) & 1) { h = k; break; }
    if (h < 0) return (b.any && !b.nonnegzero) ? -0.0 : 0.0;
#define BF_BIT(k) ((k) >= 0 ? (int)((b.w[(k) / 32] >> ((k) % 32)) & 1) : 0)
    int lo = h - 52, sub = BF_LSB - 1074; /* the 2^-1074 bit */
    if (lo < sub) lo = sub;
    uint64_t mant = 0;
    for (int k = h; k >= lo; k--) mant = (mant << 1) | (uint64_t)BF_BIT(k);
    int half = BF_BIT(lo - 1), sticky = 0;
    for (int k = lo - 2; k >= 0 && !sticky; k--) sticky = BF_BIT(k);
#undef BF_BIT
    if (half && (sticky || (mant & 1))) mant++;
    double r = ldexp((double)mant, lo - BF_LSB); /* exact, or inf beyond the range */
    return neg ? -r : r;
}

/* Bitwise equality of doubles, with every NaN equal to every NaN. */
static inline int same_double(double a, double b)
{
    if (isnan(a) && isnan(b)) return 1;
    return memcmp(&a, &b, sizeof a) == 0;
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
