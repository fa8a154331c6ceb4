/* Single-threaded kernels that add float data exactly into a superaccumulator (core/exact_sum.h).
 * The CPU backend splits the data across threads, gives each thread its own tally_exact, merges
 * them (an integer add, so the result cannot depend on the split) and rounds once.
 *
 *   sum_f32 / sum_f64:     acc += x[0] + ... + x[n-1], exactly. omit_nan: NaNs are skipped
 *                          (they are then not "added" for the -0 rule either).
 *   sqdev_f32 / sqdev_f64: for each x_i, d = fl((double)x_i - mean) (the deviation rounded to f64)
 *                          and acc += d*d exactly, as hi = fl(d*d) plus lo = fma(d, d, -hi).
 *                          d*d is exact this way unless it underflows (|d| < ~2^-511: lo loses
 *                          bits below 2^-1074) or overflows (fl(d*d) = inf: +inf is added).
 *                          x_i = NaN: NaN (skipped with omit_nan); x_i = +-inf: +inf.
 *   sum_minmax_f32 / _f64: sum_f32 / sum_f64 (the same accumulator, bit for bit), plus the
 *                          extremes in the same loop over the same loaded vectors (one pass for
 *                          a fused sum+min+max): *mm is updated with the min and max of the
 *                          non-NaN elements (IEEE 754-2019 order: -0 < +0) and the NaN count,
 *                          whatever omit_nan. So mm gives minimum/maximum (NaN if nans > 0) and,
 *                          for omit_nan, minimumNumber/maximumNumber (tally_xminmax_* below).
 *
 * Every kernel gives the same accumulator value (bit for bit after rounding) for any ISA.
 * n may be 0; x may then be NULL. The kernels keep state only inside one call (plus 20 KiB of
 * thread-local scratch that every call leaves zeroed), so calls on consecutive pieces equal one
 * call on the whole, and any number of threads may call them at once on their own accumulators.
 * Speed: memory-bound on price-like data; a call costs ~0.2 us beyond its elements (the first
 * block's bound, the final flush), so pieces of 16 KiB and up are fine. The method and its
 * exactness proof: exact_impl.h. */
#ifndef TALLY_CPU_EXACT_KERNELS_H
#define TALLY_CPU_EXACT_KERNELS_H

#include <math.h>
#include <stdint.h>
#include "tally.h"
#include "core/exact_sum.h"

/* Extremes of the elements seen so far (f32 values widened exactly). min > max: no non-NaN
 * element yet (any real element makes min <= max, +-inf included). Calls on consecutive pieces
 * update one tally_xminmax as one call on the whole would. */
typedef struct tally_xminmax {
    double min, max; /* of the non-NaN elements, -0 < +0; +inf / -inf when there is none */
    uint64_t nans;   /* NaN elements */
} tally_xminmax;

static inline void tally_xminmax_init(tally_xminmax *m) {
    m->min = HUGE_VAL;
    m->max = -HUGE_VAL;
    m->nans = 0;
}
/* IEEE 754-2019 minimum / maximum (omit_nan = 0: NaN if any NaN was seen) or minimumNumber /
 * maximumNumber (omit_nan = 1). NaN also when nothing but NaNs (or nothing) was seen. */
static inline double tally_xminmax_min(const tally_xminmax *m, int omit_nan) {
    return (!omit_nan && m->nans) || m->min > m->max ? NAN : m->min;
}
static inline double tally_xminmax_max(const tally_xminmax *m, int omit_nan) {
    return (!omit_nan && m->nans) || m->min > m->max ? NAN : m->max;
}

typedef struct tally_exact_kernels {
    void (*sum_f32)(const float *x, uint64_t n, int omit_nan, tally_exact *acc);
    void (*sum_f64)(const double *x, uint64_t n, int omit_nan, tally_exact *acc);
    void (*sqdev_f32)(const float *x, uint64_t n, double mean, int omit_nan, tally_exact *acc);
    void (*sqdev_f64)(const double *x, uint64_t n, double mean, int omit_nan, tally_exact *acc);
    void (*sum_minmax_f32)(const float *x, uint64_t n, int omit_nan, tally_exact *acc,
                           tally_xminmax *mm);
    void (*sum_minmax_f64)(const double *x, uint64_t n, int omit_nan, tally_exact *acc,
                           tally_xminmax *mm);
    /* A whole call's correctly rounded sum of a short array (at most 64 KiB) in one pass: 1 with
     * it in *out, or 0 where this cheap path cannot vouch for it (then nothing happened and the
     * caller takes the general path). NULL where an ISA has none. See SMALL in exact_impl.h. */
    int (*small_sum_f32)(const float *x, uint64_t n, double *out);
    int (*small_sum_f64)(const double *x, uint64_t n, double *out);
    /* The speculative compensated sum (SPEC in exact_impl.h; the design: core/exact_sum.h,
     * "Speculative compensated sums"): one pass that adds to *acc (exactly) a value V_call and to
     * *D a D_call >= 0 such that, over any calls on the pieces of an array (their accumulators
     * merged into V, their D added into D),
     *      |sum of x - V| <= 2^-53 * D * (1 + 2^-12)
     * unless acc has a NaN / inf flag or D is not finite (an inf / NaN input or an overflow; the
     * answer must then come from the exact path). tally_exact_round_within(V, E) with
     * E = D * 2^-53 * 1.001 + 2^-1074 gives the correctly rounded sum or declines. Every ISA. */
    void (*spec_sum_f32)(const float *x, uint64_t n, tally_exact *acc, double *D);
    void (*spec_sum_f64)(const double *x, uint64_t n, tally_exact *acc, double *D);
} tally_exact_kernels;

/* The kernels for isa (TALLY_ISA_SCALAR, TALLY_ISA_AVX2 or TALLY_ISA_AVX512); the caller makes
 * sure the CPU has that ISA. AUTO and any ISA not built here (every x86 one on other CPUs) give
 * the scalar kernels. Never NULL. */
const tally_exact_kernels *tally_exact_kernels_for(tally_isa isa);

/* Elements the calling thread's kernel calls added by each method since the last reset:
 * [0] W32 (f32 fixed point), [1] LEV (double levels), [2] BINS (exponent bins), [3] SLOW (element
 * by element: NaN / inf blocks); a rerun block counts once, by the method that added it (see
 * exact_impl.h). For tests and benchmarks: they check that data of a shape takes the path meant
 * for it. reset: zero the counts after copying them out. */
void tally_exact_method_counts(uint64_t out[4], int reset);
extern _Thread_local uint64_t tally_xmethod_n[4];

/* The kernels' software prefetch distances in bytes, process-wide (benchmark knobs: the CPU
 * backend sets them from TALLY_CPU_TUNE's xpf_dist and xpf_near when a context is made, reduce.c;
 * a kernel reads them once per block). far: every block loop prefetches its input this far ahead
 * into L2 (default TALLY_XPF_DIST); near: the bins' loops (full-range data) also prefetch into L1
 * this far ahead (0, the default: not), so that their vector prep of a group finds its lines in
 * L1 instead of waiting on L2 or memory with the group's scalar adds behind it. Any values give
 * the same results. */
#define TALLY_XPF_DIST 16384u
#define TALLY_XPF_NEAR 0u
void tally_exact_set_prefetch(uint32_t far_bytes, uint32_t near_bytes);
void tally_exact_get_prefetch(uint32_t *far_bytes, uint32_t *near_bytes);
/* small_sum_f32's method where an ISA has both, process-wide (a benchmark knob: TALLY_CPU_TUNE's
 * small_w32w, reduce.c; before/after rows of bench_exact -s and bench_cpu -x): 1 (the default)
 * W32W and W64W for f32, W64D for f64; 0 the older W32 for f32, TWO for both (exact_impl.h,
 * SMALL). Either gives the same results. */
void tally_exact_set_small_w32w(int on);
int tally_exact_get_small_w32w(void);
/* The same for SMALL's SPEC (the speculative compensated sum for data over many binades,
 * exact_impl.h; TALLY_CPU_TUNE's small_spec): 1 (the default) on, 0 off (the general path). */
void tally_exact_set_small_spec(int on);
int tally_exact_get_small_spec(void);
/* The large sums' speculative pass (spec_sum_f32/f64) where the ISA has SAE (AVX-512), process-
 * wide (TALLY_CPU_TUNE's spec_fast): 1 (the default) SPECF, 5 vector ops per 8 doubles with a
 * bias and the flags, 0 SPEC, 8 with TwoSum (exact_impl.h). Either gives the same answers; they
 * may differ in which rare sums they decline. */
void tally_exact_set_spec_fast(int on);
int tally_exact_get_spec_fast(void);

/* Per-ISA tables (internal; only the x86 ones exist where TALLY_X86 is defined). */
extern const tally_exact_kernels tally_exact_kernels_scalar;
#if defined(TALLY_X86)
extern const tally_exact_kernels tally_exact_kernels_avx2;
extern const tally_exact_kernels tally_exact_kernels_avx512;
#endif

#endif
