/* The adversarial harness's inputs: families of arrays chosen to break exact reductions
 * (cancellation over the whole exponent range, huge values among tiny ones, partial sums beyond
 * the f64 range, halfway ties, sorted magnitudes, subnormals, NaN/inf at every position class,
 * integer sums at the edge of overflow), at sizes around every kernel boundary. Every array is
 * a function of one 64-bit seed, so a failure is reproduced from the seed alone. */
#ifndef TALLY_ADV_FAMILIES_H
#define TALLY_ADV_FAMILIES_H

#include <stdint.h>
#include "tally.h"

/* X(ENUM, name, for_floats, for_ints) */
#define ADV_FAMILIES(X)                    \
    X(CANCEL_WIDE, cancel_wide, 1, 0)      \
    X(HUGE_TINY, huge_tiny, 1, 0)          \
    X(PARTIAL_OVERFLOW, partial_overflow, 1, 0) \
    X(TIES, ties, 1, 0)                    \
    X(SORTED, sorted, 1, 0)                \
    X(SUBNORMAL, subnormal, 1, 0)          \
    X(SPECIALS, specials, 1, 0)            \
    X(PRICES, prices, 1, 0)                \
    X(WIDE40, wide40, 1, 0)                \
    X(FULL_RANGE, full_range, 1, 0)        \
    X(CONSTANT, constant, 1, 1)            \
    X(ALTERNATING, alternating, 1, 0)      \
    X(BATCH_SPREAD, batch_spread, 1, 0)    \
    X(INT_EDGE, int_edge, 0, 1)            \
    X(INT_EXTREMES, int_extremes, 0, 1)    \
    X(INT_RANDOM, int_random, 0, 1)

typedef enum adv_family {
#define ADV_ENUM(E, name, f, i) ADV_##E,
    ADV_FAMILIES(ADV_ENUM)
#undef ADV_ENUM
    ADV_FAMILY_COUNT
} adv_family;

const char *adv_family_name(adv_family f);
int adv_family_for(adv_family f, tally_type t); /* 1 if the family makes arrays of type t */

/* A deterministic generator (splitmix64): every array draws from its own. */
typedef struct adv_rng {
    uint64_t s;
} adv_rng;
uint64_t adv_next(adv_rng *r);
uint64_t adv_below(adv_rng *r, uint64_t n); /* uniform in [0, n), n > 0 */
double adv_unit(adv_rng *r);                /* uniform in [0, 1) */

/* What the caller allows. */
typedef struct adv_limits {
    uint64_t max_n;      /* largest array */
    uint32_t families;   /* bit f: family f allowed (0: all) */
    uint32_t types;      /* bit t: tally_type t allowed (0: all) */
} adv_limits;

/* One array: data has room for offset + n elements; the array is data + offset elements
 * (offset 0..3: starts that are not 16-byte aligned). */
typedef struct adv_case {
    uint64_t seed;
    adv_family family;
    tally_type type;
    uint64_t n;
    unsigned offset;
    int omit_nan;
    int ddof;
    void *data; /* malloc'd; free with adv_case_free */
} adv_case;

/* Draws array number index of the run with master seed `seed`. Returns 0, or -1 when out of
 * memory. */
int adv_case_make(uint64_t seed, uint64_t index, const adv_limits *lim, adv_case *c);
void adv_case_free(adv_case *c);
static inline const void *adv_case_array(const adv_case *c)
{
    return (const char *)c->data + (size_t)c->offset * tally_type_size(c->type);
}

#endif
