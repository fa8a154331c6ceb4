/* A persistent thread pool: created once per context, workers sleep on a condition variable
 * between calls (after a short spin), the caller takes part as thread 0. */
#ifndef TALLY_CPU_POOL_H
#define TALLY_CPU_POOL_H

#include "tally.h"

typedef struct tally_pool tally_pool;
typedef void (*tally_job_fn)(void *arg, int tid, int nthreads);

/* A pool for nthreads threads in all (nthreads - 1 workers). */
tally_status tally_pool_create(int nthreads, tally_pool **out);
void tally_pool_destroy(tally_pool *p);
int tally_pool_size(const tally_pool *p);
/* Runs fn(arg, tid, nthreads) for tid = 0 .. nthreads-1 (nthreads <= the pool's size), tid 0
 * on the calling thread; returns when all are done. */
void tally_pool_run(tally_pool *p, int nthreads, tally_job_fn fn, void *arg);
/* Inside a job: waits until all nthreads participants reach it. */
void tally_pool_barrier(tally_pool *p, int nthreads);

#endif
