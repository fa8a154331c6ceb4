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

/* TCU_SPEC_BREAK (tests only, never in a shipped build): 1 drops E to 0, 2 stops feeding D, 3 lets
 * a biased lane take any batch (its |x| check dropped);
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


/* ---- the biased lane (SPECF, the CPU's XFN(specf_) step without the flags; TALLY_CUDA_SPEC_FAST)
 * A segment holds S (the sum under the bias B = 1.5 * 2^E), C (the residuals' rounded sum),
 * M = max |C| and k (its steps, at most 2^T). Its step, for |x| <= lim = 2^(E - T - 3):
 *   s = fl(S + x), q = fl(s - S), r = fl(x - q), C = fl(C + r), M = max(M, |C|), S = s:
 * four adds and a max against TwoSum's six adds and the triple's two.
 * Claim: the segment's inputs sum to (S - B) + (sum of its r) exactly, and that sum of r is C
 *   within k * u * M.
 * Proof. By induction over the steps, S lies in [B - 2^(E-2), B + 2^(E-2)], inside [2^E, 2^(E+1)):
 *   at a step, S >= 2^E > |x|, so e(S) >= e(x) and Fast2Sum (Dekker: rounding to nearest,
 *   subnormals included) makes q = s - S and r = x - q exact, i.e. s = S + q and x = q + r; then
 *   |q| <= |x| + |r| <= 2^(E-T-3) + 2^(E-52) (|r| is at most half an ulp of s, s < 2^(E+1)), and
 *   after k <= 2^T steps |S - B| <= 2^(E-3) + 2^(T+E-52) < 2^(E-2) (T <= 40). So S_end = B + sum q
 *   and sum x = sum q + sum r. Each C add errs by at most u |C_new| <= u M. []
 * Flush: the triple (S - B, C, k * M rounded up) into the lane's triple t by the merge rule; S - B
 *   is exact (Sterbenz: S in [B/2, 2B]), and |sum x - (S - B) - C| <= u * k * M is the triple
 *   invariant for it. A batch whose largest |x| (xmax, from the caller) exceeds lim, or that would
 *   pass 2^T steps, flushes first and takes a new bias from xmax: E = e + T + 3 + 4 with
 *   xmax < 2^e, so lim = 2^(e + 4) > xmax (E raised to -1022 at least: a bias never needs to be
 *   small); where that E passes 1022 (B or S would overflow) the batch goes through TwoSum into t
 *   instead (tcu_spec_add), as do infinities (xmax = inf: no bias fits). A NaN may pass the check
 *   (a max ignores NaNs) but then makes S NaN, hence the flushed triple, hence the decision's
 *   input: declined. */
typedef struct tcu_specf_lane {
    double S, C, M, B, lim;
    unsigned k, cap; /* steps in the segment, at most cap = 2^T */
    int T;
    tcu_spec_triple t;
} tcu_specf_lane;

static inline TALLY_HD void tcu_specf_init(tcu_specf_lane *l, int T)
{
    l->S = l->C = l->M = l->B = l->lim = 0.0;
    l->k = 0;
    l->T = T < 1 ? 1 : T > 30 ? 30 : T;
    l->cap = 1u << l->T;
    l->t.s = l->t.c = l->t.D = 0.0;
}

static inline TALLY_HD void tcu_specf_flush(tcu_specf_lane *l)
{
    if (l->k == 0) return;
    tcu_spec_triple f;
    f.s = TCU_SPEC_SUB(l->S, l->B);
    f.c = l->C;
    f.D = l->M > 0.0 ? tcu_spec_mul_up((double)l->k, l->M) : l->M; /* M NaN stays NaN */
    tcu_spec_merge(&l->t, &f);
    l->S = l->B; /* a new segment under the same bias */
    l->C = l->M = 0.0;
    l->k = 0;
}

static inline TALLY_HD double tcu_specf_pow2_(int e) /* 2^e, -1022 <= e <= 1023 */
{
    return ldexp(1.0, e);
}

/* Before a batch of cnt steps whose largest |x| is xmax: 1 when the batch may take the biased
 * step (a segment is active, xmax <= lim, the count fits), after a new bias if it needs one;
 * 0 when it must go through tcu_spec_add instead (no bias fits). */
static inline TALLY_HD int tcu_specf_ready(tcu_specf_lane *l, double xmax, unsigned cnt)
{
#if TCU_SPEC_BREAK == 3
    if (l->B != 0.0 && l->k + cnt <= l->cap) return 1; /* tests: the |x| check dropped */
#endif
    if (l->B != 0.0 && xmax <= l->lim && l->k + cnt <= l->cap) return 1; /* B = 0: no bias yet */
    tcu_specf_flush(l);
    if (!(xmax <= 1.7976931348623157e308)) return 0; /* inf */
    const uint64_t xb = tally_exact_bits_(xmax);
    int e = (int)((xb >> 52) & 0x7ff) - 1022; /* xmax < 2^e */
    if (e < -1021) e = -1021;
    int E = e + l->T + 3 + 4;
    if (E < -1022) E = -1022;
    if (E > 1022 || cnt > l->cap) {
        l->B = 0.0;
        return 0;
    }
    l->B = 1.5 * tcu_specf_pow2_(E);
    l->lim = tcu_specf_pow2_(E - l->T - 3);
    l->S = l->B;
    l->C = l->M = 0.0;
    return 1;
}

static inline TALLY_HD void tcu_specf_step(tcu_specf_lane *l, double x)
{
    const double s = TCU_SPEC_ADD(l->S, x);
    const double q = TCU_SPEC_SUB(s, l->S);
    const double r = TCU_SPEC_SUB(x, q);
    l->C = TCU_SPEC_ADD(l->C, r);
    l->M = fmax(l->M, fabs(l->C));
    l->S = s;
    l->k++;
}

/* The lane's triple once its last segment is flushed. */
static inline TALLY_HD tcu_spec_triple tcu_specf_done(tcu_specf_lane *l)
{
    tcu_specf_flush(l);
    return l->t;
}
#endif
