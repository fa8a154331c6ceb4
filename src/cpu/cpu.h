/* The CPU backend's per-context state (its table is tally_cpu_backend, core/backend.h). */
#ifndef TALLY_CPU_CPU_H
#define TALLY_CPU_CPU_H

#include <stdint.h>
#include "tally.h"
#include "core/partial.h"

/* Per-context CPU state (thread pool, kernel tables, scratch). */
typedef struct tally_cpu_state tally_cpu_state;
tally_status tally_cpu_state_create(tally_context *ctx, int threads, tally_isa isa,
                                    tally_cpu_state **out);
void tally_cpu_state_destroy(tally_cpu_state *st);
/* For the tests: the scans of a CPU context (else nothing) go in pieces of about bytes
 * (clamped to the sizes scan.c allows), so that small inputs cross many piece boundaries. */
void tally_cpu_set_scan_piece(tally_context *ctx, uint64_t bytes);
/* For the tests: the threaded reductions of a CPU context (else nothing) hand out chunks of
 * about bytes (whole 4096-element blocks, at least one; 0: chosen by size). With interleave,
 * thread t takes chunks t, t + nth, t + 2 nth, ... and the threads' partials are merged from the
 * last thread to the first, so that a merge that depended on the order of the chunks fails
 * every time instead of when the scheduler happens to interleave them. */
void tally_cpu_set_reduce_chunks(tally_context *ctx, uint64_t bytes, int interleave);

/* For the benchmarks: where a threaded scan's time goes. Nanoseconds summed over the threads
 * and the calls: from the call's start to a thread's first piece (the pool's wake-up), in the
 * block totals (reading the piece), in the look-back (waiting for and folding the carries of
 * the pieces before), in scanning and writing the pieces (with the next piece's prefetch), and
 * from a thread's last piece to the call's end (waiting for the slowest). One-thread scans
 * count all of their time as scanning. */
typedef struct tally_cpu_scan_prof {
    uint64_t calls, pieces, thread_calls; /* thread_calls: the threads' runs, summed */
    double wake_ns, totals_ns, lookback_ns, scan_ns, tail_ns;
    /* look-backs that found an earlier piece without its totals and waited for them, and
     * pieces whose totals a look-back computed itself (their thread was late) */
    uint64_t waits, stolen;
} tally_cpu_scan_prof;
/* Accumulate into *prof the scans of a CPU context from now on (NULL: stop). Not for scans that
 * run concurrently on one context (nothing is). */
void tally_cpu_set_scan_profile(tally_context *ctx, tally_cpu_scan_prof *prof);

/* For the tests and benchmarks: the speculative sums (reduce.c) that answered ([0]) and that
 * declined to the exact path ([1]) in this process since the last reset (reset: zero them after
 * copying them out). */
void tally_cpu_spec_counts(uint64_t out[2], int reset);

/* Adds n elements (global indices base .. base+n-1) into acc, using the state's threads.
 * acc may already hold earlier elements (streams); float products continue its open block.
 * The backend table's accumulate. */
tally_status tally_cpu_accumulate(tally_context *ctx, tally_cpu_state *st, const void *data,
                                  uint64_t n, uint64_t base, tally_partial *acc);

/* The variance pass: *out = the exact sum over the n elements (NaNs left out with omit_nan) of
 * (x - mean)^2, each deviation rounded to f64 and squared exactly, using the state's threads. */
void tally_cpu_sqdev(tally_cpu_state *st, tally_type type, const void *data, uint64_t n,
                     double mean, int omit_nan, tally_exact *out);

#endif
