/* The CUDA backend's tuning knobs: the kernel shapes and launch rules a benchmark varies to
 * compare them (docs/tuning.md says what each does, docs/performance.md what was measured).
 * In the default build every knob is its default, a constant the launchers fold in, and only
 * the kernel shapes the defaults use are instantiated. Built with -DTALLY_TUNING=ON, the
 * library reads each knob once from its environment variable TALLY_CUDA_<ID>, instantiates
 * every shape, and the benchmark (bench/bench_cuda.cu) sets knobs between cases and times the
 * plain f64 sum it measures exactness against, through the functions below. Internal: not
 * installed, not exported from the shared library. */
#ifndef TALLY_CUDA_TUNING_H
#define TALLY_CUDA_TUNING_H

#include "tally.h"

/* X(ID, name, default, lo, hi): knob TCU_KNOB_<ID>, named <name> for tally_cuda_bench_set_knob,
 * read from TALLY_CUDA_<ID>; values outside lo .. hi are clamped.
 * SCAN_WIDE      the scan's tile shape, 0 .. 5 (scan_lookback.cuh, scan_kernel.cuh); 6: 5 for
 *                inputs of TCU_SCAN_STAGED_MIN_BYTES or more, else 4
 * REDUCE_WAVES   the reduce grid is at most this many times the resident blocks
 * REDUCE_MINB    batches each reduce block gets at least; 0: the launcher's rule by size
 *                (reduce_launch.cuh, launch_reduce_t)
 * SCAN_SLEEP     the look-back's first pause (ns) when a predecessor has not published
 * SCAN_BACKOFF   the pauses double up to this (ns); 0: they stay SCAN_SLEEP
 * SCAN_SHIFT     tile t's state sits at slot t << SCAN_SHIFT: a tile per cache line at 4
 * PDL            1: kernels launch with programmatic dependent launch (sm_90)
 * REDUCE_RING    0: the reduce loads into registers; 1 (the default) as 2; 2: a ring of 32 KB
 *                stages filled by bulk copies, one block per SM (6 stages); 3: two blocks per
 *                SM (3 stages); 4: three where the registers allow, else two (2 stages)
 * REDUCE_RING_MIN  batches (32 KB each) from which the ring is used
 * REDUCE_PACKED  1: small integer sums combine through one atomic (reduce_state.cuh, packable)
 * REDUCE_EXTREME 1: a min or max alone combines through one word (reduce_state.cuh)
 * REDUCE_BINS    1: the exact f32/f64 sums put the batches their fast paths cannot prove exact
 *                into per-thread exponent-indexed bins in shared memory (exact_bins.h,
 *                reduce_worker.cuh's bins_batch_out) instead of three-term expansions, f64 into
 *                integer digits; 2 (the default): the same, f64 first into windows of doubles
 *                while a thread's values stay within 34 windows of 8 exponents; 3 (a -DTCU_RW=1
 *                build): as 2, f64 batches first into four register windows (exact_bins.h, tbins_rw_*)
 *                while a thread's values stay within 108 exponents; 4: as 3, f32 batches too
 *                (three register windows, within 97 exponents); 0: off
 * SPEC           the speculative f32/f64 sum and mean before the exact one (spec_sum.cuh): 0 off,
 *                1 always first from TCU_SPEC_MIN_BYTES of input, 2 always first at every size
 *                (tests); 3 (the default) adaptive from TCU_SPEC_MIN_BYTES: first unless the last
 *                sum of that type on the context showed narrow data, which the exact kernel sums
 *                at the plain sum's speed (cuda_backend.cu, spec_plan); 4 adaptive at every size
 *                (tests). The default build reads TALLY_CUDA_SPEC too (cuda_backend.cu, spec_mode) */
#define TCU_KNOBS(X)                                                                             \
    X(SCAN_WIDE, scan_wide, 6, 0, 6)                                                             \
    X(REDUCE_WAVES, reduce_waves, 1, 1, 8)                                                       \
    X(REDUCE_MINB, reduce_minb, 0, 0, 64)                                                        \
    X(SCAN_SLEEP, scan_sleep, 20, 0, 100000)                                                     \
    X(SCAN_BACKOFF, scan_backoff, 0, 0, 1000000)                                                 \
    X(SCAN_SHIFT, scan_shift, 4, 0, TCU_MAX_STATUS_SHIFT)                                        \
    X(PDL, pdl, 1, 0, 1)                                                                         \
    X(REDUCE_RING, reduce_ring, 1, 0, 4)                                                         \
    X(REDUCE_RING_MIN, reduce_ring_min, 1024, 1, 1 << 30)                                        \
    X(REDUCE_PACKED, reduce_packed, 1, 0, 1)                                                     \
    X(REDUCE_EXTREME, reduce_extreme, 1, 0, 1)                                                   \
    X(REDUCE_BINS, reduce_bins, 2, 0, 4)                                                         \
    X(SPEC, spec, 3, 0, 4)

#define TCU_MAX_STATUS_SHIFT 6
#define TCU_SPEC_MIN_BYTES (4ull << 20) /* SPEC 1, 3: the speculative sum from here */
#define TCU_SPEC_PROBE_FIRST 16u /* SPEC 3, 4: pass-first calls between probes, at first */
#define TCU_SPEC_PROBE_MOST 1024u /* ... doubling up to this (cuda_backend.cu, spec_plan) */
#define TCU_SCAN_AUTO 6                        /* SCAN_WIDE: by size */
#define TCU_SCAN_STAGED_MIN_BYTES (32ull << 20) /* SCAN_WIDE 6: shape 5 from here */

enum {
#define X(ID, name, dflt, lo, hi) TCU_KNOB_##ID,
    TCU_KNOBS(X)
#undef X
    TCU_KNOB_COUNT
};

#ifdef TALLY_TUNING
/* The knob's value (read from the environment on first use, thread-safe). */
int tcu_knob(int k);
/* Sets a knob for the calls that follow; returns the old value, -1 for an unknown knob. */
int tcu_set_knob(int k, int v);
/* "scan_wide", "pdl", ...: the TCU_KNOB_*, -1 if none. */
int tcu_knob_index(const char *name);

#ifdef __cplusplus
extern "C" {
#endif
/* For bench/bench_cuda.cu: sets the knob named name (tcu_set_knob); returns the old value,
 * -1 for an unknown name. */
int tally_cuda_bench_set_knob(const char *name, int value);
/* For bench/bench_cuda.cu: the yardstick of the exact float sums, a plain fixed-order f64 sum
 * (not correctly rounded) of float data into d_result, enqueued like tally_cuda_reduce_async. */
tally_status tally_cuda_bench_plain_sum_async(tally_context *ctx, tally_type type,
                                              const void *d_data, uint64_t n,
                                              tally_result *d_result);
/* For tests/cuda/test_cuda.cu: the word the adaptive f32/f64 sums of ctx read (TCU_HINT_*,
 * cuda_internal.h; 0: none yet), as it is now (complete after a synchronisation). */
unsigned tally_cuda_bench_spec_hint(tally_context *ctx, tally_type type);
#ifdef __cplusplus
}
#endif
#else
static inline int tcu_knob(int k)
{
    switch (k) {
#define X(ID, name, dflt, lo, hi) case TCU_KNOB_##ID: return dflt;
        TCU_KNOBS(X)
#undef X
    }
    return 0;
}
#endif

#endif
