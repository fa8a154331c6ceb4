/* The test programs' random numbers: xorshift64 from a fixed seed, so that a failure comes back
 * on the next run. A program that wants other data defines TALLY_TEST_RNG_SEED before this. */
#ifndef TALLY_TESTS_SUPPORT_RNG_H
#define TALLY_TESTS_SUPPORT_RNG_H

#include <stdint.h>

#ifndef TALLY_TEST_RNG_SEED
#define TALLY_TEST_RNG_SEED 0x9e3779b97f4a7c15ull
#endif

static uint64_t g_rng = TALLY_TEST_RNG_SEED;

static inline uint64_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

/* Uniform in [0, 1), 53 random bits. */
static inline double urand(void) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0); }

#endif
