/* Internals of the CPU backend shared with the core (ISA detection, core count, the partial
 * accumulation that streams reuse). */
#ifndef TALLY_CPU_CPU_H
#define TALLY_CPU_CPU_H

#include <stdint.h>
#include "tally.h"
#include "core/partial.h"

/* The best ISA this CPU and OS support (cpuid + xgetbv), cached. */
tally_isa tally_cpu_detect_isa(void);
/* 1 if this CPU can run isa (AUTO and SCALAR: always). */
int tally_cpu_isa_supported(tally_isa isa);
/* Cores this process may run on (sched_getaffinity), at least 1. */
int tally_cpu_core_count(void);

/* Per-context CPU state (thread pool, kernel tables, scratch). */
typedef struct tally_cpu_state tally_cpu_state;
tally_status tally_cpu_state_create(tally_context *ctx, int threads, tally_isa isa,
                                    tally_cpu_state **out);
void tally_cpu_state_destroy(tally_cpu_state *st);

/* Adds n elements (global indices base .. base+n-1) into acc, using the state's threads.
 * acc may already hold earlier elements (streams); float products continue its open block. */
tally_status tally_cpu_accumulate(tally_context *ctx, tally_cpu_state *st, const void *data,
                                  uint64_t n, uint64_t base, tally_partial *acc);

/* The variance pass: *out = the exact sum over the n elements (NaNs left out with omit_nan) of
 * (x - mean)^2, each deviation rounded to f64 and squared exactly, using the state's threads. */
void tally_cpu_sqdev(tally_cpu_state *st, tally_type type, const void *data, uint64_t n,
                     double mean, int omit_nan, tally_exact *out);

#endif
