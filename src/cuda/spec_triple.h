/* The speculative compensated sum's lane state (s, c, D) for the CUDA backend: its add, merge and
 * decision, written once for the kernel (spec_sum.cuh) and for the host test that checks the
 * same arithmetic without a GPU (tests/exact/test_spec_triple.c). The rules and the invariant
 * are those of the block "Speculative compensated sums" in core/exact_sum.h:
 *
 *      true sum of the lane's inputs = s + c + delta,   |delta| <= u * D_true,   u = 2^-53
 *
 * Why this code keeps it: every add below is one IEEE double add rounded to nearest (device:
 * __dadd_rn / __dsub_rn, which nvcc never contracts into an FMA and which do not flush
 * subnormals; host: plain + and -, and no multiply sits next to them that a compiler could fuse).
 * add() is TwoSum (Knuth's six operations, exact for any order of magnitudes, subnormals
 * included) followed by c' = fl(c + e), whose error is at most u * |c'|, and D' = fl(D + |c'|):
 * the term |c'| enters D, so the invariant carries over. merge() is the rule of exact_sum.h:
 * TwoSum of the s parts (exact), t = fl(c1 + c2) (error <= u|t|), c = fl(t + e) (error <=
 * u|c|), D = fl(fl(D1 + D2) + fl(|t| + |c|)): both new error terms' magnitudes enter D. The
 * order of the merges does not matter to the bound. Non-finite values never come back to finite
 * ones (inf + x is inf or NaN, NaN stays NaN), so an overflow or a NaN/inf input anywhere leaves
 * s, c or D of the final triple non-finite, and decide() declines.
 *
 * decide(): V = s + c exactly (two exact adds into a tally_exact), E = D * 1.001 * 2^-53 with
 * both products rounded UP (device: __dmul_ru; host: the nearest product's next double up), so E is never below the bound even when it is subnormal; exact_sum.h's
 * tally_exact_round_within answers only when V - E and V + E round alike. D's own roundings make
 * D at most a factor (1 - u)^k below D_true (k the longest chain of adds a term took, here below
 * 2^40), which the 1.001 covers. */
#ifndef TALLY_CUDA_SPEC_TRIPLE_H
#define TALLY_CUDA_SPEC_TRIPLE_H

#include <math.h>
#include "core/exact_sum.h"

#if defined(__CUDA_ARCH__)
#define TCU_SPEC_ADD(a, b) __dadd_rn((a), (b))
#define TCU_SPEC_SUB(a, b) __dsub_rn((a), (b))
#else
#define TCU_SPEC_ADD(a, b) ((a) + (b))
#define TCU_SPEC_SUB(a, b) ((a) - (b))
#endif

/* TCU_SPEC_BREAK (tests only, never in a shipped build): 1 drops E to 0, 2 stops feeding D;
 * the host twin test and the GPU tests must then fail (they did). */
#ifndef TCU_SPEC_BREAK
#define TCU_SPEC_BREAK 0
#endif

typedef struct tcu_spec_triple {
    double s, c, D;
} tcu_spec_triple;

static inline TALLY_HD void tcu_spec_two_sum(double a, double b, double *s, double *e)
{
    const double t = TCU_SPEC_ADD(a, b);
    const double bb = TCU_SPEC_SUB(t, a);
    *e = TCU_SPEC_ADD(TCU_SPEC_SUB(a, TCU_SPEC_SUB(t, bb)), TCU_SPEC_SUB(b, bb));
    *s = t;
}

/* Adds x (a double, or a float widened exactly) to the lane. */
static inline TALLY_HD void tcu_spec_add(tcu_spec_triple *t, double x)
{
    double e;
    tcu_spec_two_sum(t->s, x, &t->s, &e);
    t->c = TCU_SPEC_ADD(t->c, e);
#if TCU_SPEC_BREAK != 2
    t->D = TCU_SPEC_ADD(t->D, fabs(t->c));
#endif
}

/* a = the merge of a and b (exact_sum.h's rule). */
static inline TALLY_HD void tcu_spec_merge(tcu_spec_triple *a, const tcu_spec_triple *b)
{
    double s, e;
    tcu_spec_two_sum(a->s, b->s, &s, &e);
    const double t = TCU_SPEC_ADD(a->c, b->c);
    const double c = TCU_SPEC_ADD(t, e);
    a->D = TCU_SPEC_ADD(TCU_SPEC_ADD(a->D, b->D), TCU_SPEC_ADD(fabs(t), fabs(c)));
    a->s = s;
    a->c = c;
}

static inline TALLY_HD int tcu_spec_finite(double x)
{
    return ((tally_exact_bits_(x) >> 52) & 0x7ff) != 0x7ff;
}

/* x * y rounded up (x, y >= 0, finite). */
static inline TALLY_HD double tcu_spec_mul_up(double x, double y)
{
#if defined(__CUDA_ARCH__)
    return __dmul_ru(x, y);
#else
    return nextafter(x * y, INFINITY); /* the nearest double, one step up: never below */
#endif
}

/* d + e rounded up and d - e rounded down (outward: never inside the exact values). */
static inline TALLY_HD double tcu_spec_add_up(double d, double e)
{
#if defined(__CUDA_ARCH__)
    return __dadd_ru(d, e);
#else
    return nextafter(d + e, INFINITY);
#endif
}
static inline TALLY_HD double tcu_spec_sub_down(double d, double e)
{
#if defined(__CUDA_ARCH__)
    return __dsub_rd(d, e);
#else
    return nextafter(d - e, -INFINITY);
#endif
}

/* The decision in a few double operations, for the common case (one GPU thread runs it; the
 * integer superaccumulator below costs tens of microseconds there). r = fl(s + c) and
 * d = (s + c) - r exactly (TwoSum, barring overflow: then d is not finite and this declines), so
 * the true sum lies in [r + d - E, r + d + E]. Every value strictly between r - g_neg and
 * r + g_pos rounds to r, g_pos and g_neg being half the gaps from r to its neighbours above and
 * below (powers of two; the gap toward zero is half as wide where |r| is a power of two; above
 * DBL_MAX the rounding threshold is DBL_MAX + half its ulp, the same rule). With d + E rounded
 * up below g_pos and d - E rounded down above -g_neg (strictly: a midpoint may round away),
 * the whole interval rounds to r. |r| >= 2^-1020 keeps the half gaps representable. Declines
 * (0) whatever it cannot show; the caller then tries the exact decision. */
static inline TALLY_HD int tcu_spec_decide_fast(double s, double c, double E, double *out)
{
    const double r = TCU_SPEC_ADD(s, c);
    const double bb = TCU_SPEC_SUB(r, s);
    const double d = TCU_SPEC_ADD(TCU_SPEC_SUB(s, TCU_SPEC_SUB(r, bb)), TCU_SPEC_SUB(c, bb));
    if (!tcu_spec_finite(r) || !tcu_spec_finite(d) || !(fabs(r) >= 0x1p-1020)) return 0;
    const uint64_t rb = tally_exact_bits_(r);
    const int k = (int)((rb >> 52) & 0x7ff) - 1023; /* |r| in [2^k, 2^(k+1)) */
    const double half = ldexp(1.0, k - 53);         /* half an ulp of r */
    const double half_in = (rb & 0x000fffffffffffffull) ? half : ldexp(1.0, k - 54);
    const double g_pos = r > 0 ? half : half_in, g_neg = r > 0 ? half_in : half;
    if (tcu_spec_add_up(d, E) < g_pos && tcu_spec_sub_down(d, E) > -g_neg) {
        *out = r;
        return 1;
    }
    return 0;
}

/* The final triple's decision: 1 and *out = the exact sum rounded once when the bound decides
 * it (finite, nonzero); 0 to run the exact path. */
static inline TALLY_HD int tcu_spec_decide(const tcu_spec_triple *t, double *out)
{
    if (!tcu_spec_finite(t->s) || !tcu_spec_finite(t->c) || !tcu_spec_finite(t->D)) return 0;
#if TCU_SPEC_BREAK != 1
    {
        const double Ef = tcu_spec_mul_up(tcu_spec_mul_up(t->D, 1.001), 0x1p-53);
        if (tcu_spec_decide_fast(t->s, t->c, Ef, out)) return 1;
    }
#endif
    tally_exact v;
    tally_exact_init(&v);
    tally_exact_add_finite_(&v, t->s);
    tally_exact_add_finite_(&v, t->c);
#if TCU_SPEC_BREAK == 1
    const double E = 0.0;
#else
    const double E = tcu_spec_mul_up(tcu_spec_mul_up(t->D, 1.001), 0x1p-53);
#endif
    return tally_exact_round_within(&v, E, out);
}

#endif
