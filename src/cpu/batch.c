/* Batched reductions on the CPU. A segment big enough to give every thread a fair share goes
 * through the ordinary threaded reduce; the others are spread over the threads in contiguous
 * runs balanced by bytes (plus a fixed cost per segment), and each thread reduces its segments
 * one after the other on its own, so many short rows cost one pool wake-up in all, not one
 * each. A segment's results are those of tally_reduce_many on it alone: the same code runs it,
 * on a one-thread view of the context's state. */
#include <stdint.h>
#include <string.h>
#include "cpu/batch.h"
#include "cpu/state.h"

/* The fixed cost of one segment (partial set-up and results), in bytes of data it is worth. */
#define TALLY_SEGMENT_COST 512u
/* At most this many threads share the short segments (bounds the split table on the stack). */
#define TALLY_SEGMENT_THREADS_MAX 256

typedef struct seg_job {
    tally_cpu_state *st;
    tally_type type;
    size_t size;
    const char *data;
    const uint64_t *offsets;    /* NULL: rows */
    uint64_t row_len, row_stride;
    const tally_op *ops;
    size_t nops;
    const tally_reduce_options *opts;
    tally_result *results;
    uint64_t big;               /* segments of at least this many bytes are left to the caller */
    const uint64_t *split;      /* thread t takes segments split[t] .. split[t+1]-1 */
} seg_job;

static uint64_t seg_start(const seg_job *j, uint64_t s)
{
    return j->offsets ? j->offsets[s] : s * j->row_stride;
}
static uint64_t seg_len(const seg_job *j, uint64_t s)
{
    return j->offsets ? j->offsets[s + 1] - j->offsets[s] : j->row_len;
}

/* Reduces segment s with the backend's own reduce on st (a view or the context's state). A
 * failure of the reduce itself (out of memory) goes into the segment's results. */
static tally_status reduce_one(tally_context *ctx, tally_cpu_state *st, const seg_job *j,
                               uint64_t s)
{
    uint64_t len = seg_len(j, s);
    const char *x = len ? j->data + seg_start(j, s) * j->size : j->data;
    tally_result *r = &j->results[s * j->nops];
    tally_status status =
        tally_cpu_backend.reduce(ctx, st, j->type, x, len, j->ops, j->nops, j->opts, r);
    if (status != TALLY_OK)
        for (size_t i = 0; i < j->nops; i++) {
            memset(&r[i], 0, sizeof r[i]);
            r[i].op = j->ops[i];
            r[i].status = status;
        }
    return status;
}

static void seg_thread(void *arg, int tid, int nth)
{
    (void)nth;
    const seg_job *j = arg;
    /* A one-thread view: the reduce then runs on this thread alone (the pool is never woken
     * for one thread) and its scratch is this thread's, so the views of several threads
     * cannot race. No context: messages of failures are made by the caller. */
    tally_cpu_state view = *j->st;
    tally_partial part;
    tally_exact sq;
    view.threads = 1;
    view.parts = &part;
    view.sq = &sq;
    for (uint64_t s = j->split[tid]; s < j->split[tid + 1]; s++)
        if (seg_len(j, s) * j->size < j->big) reduce_one(NULL, &view, j, s);
}

tally_status tally_cpu_reduce_segments(tally_context *ctx, void *state, tally_type type,
                                       const void *data, const uint64_t *offsets, uint64_t nseg,
                                       uint64_t row_len, uint64_t row_stride, const tally_op *ops,
                                       size_t nops, const tally_reduce_options *opts,
                                       tally_result *results)
{
    tally_cpu_state *st = state;
    seg_job j = {st, type, tally_type_size(type), data, offsets, row_len, row_stride,
                 ops, nops, opts, results, 0, NULL};
    /* a segment worth a pool run of its own: every thread gets at least SMALL_BYTES of it */
    j.big = st->threads > 1 ? (uint64_t)TALLY_CPU_SMALL_BYTES * (uint64_t)st->threads
                            : UINT64_MAX;
    uint64_t nsmall = 0, cost = 0;
    if (offsets) {
        for (uint64_t s = 0; s < nseg; s++) {
            uint64_t b = seg_len(&j, s) * j.size;
            if (b < j.big) {
                nsmall++;
                cost += b + TALLY_SEGMENT_COST;
            }
        }
    } else if (row_len * j.size < j.big) {
        nsmall = nseg;
        cost = nseg * (row_len * j.size + TALLY_SEGMENT_COST);
    }
    if (nsmall) {
        uint64_t split[TALLY_SEGMENT_THREADS_MAX + 1];
        uint64_t nth = cost / TALLY_CPU_SMALL_BYTES;
        if (nth > (uint64_t)st->threads) nth = (uint64_t)st->threads;
        if (nth > TALLY_SEGMENT_THREADS_MAX) nth = TALLY_SEGMENT_THREADS_MAX;
        if (nth > nsmall) nth = nsmall;
        if (nth < 1) nth = 1;
        split[0] = 0;
        split[nth] = nseg;
        if (!offsets) {
            for (uint64_t t = 1; t < nth; t++) split[t] = nseg * t / nth;
        } else {
            /* thread t starts at the first segment whose cost so far reaches t/nth of it all */
            uint64_t t = 1, acc = 0;
            for (uint64_t s = 0; s < nseg && t < nth; s++) {
                while (t < nth && acc >= cost / nth * t) split[t++] = s;
                uint64_t b = seg_len(&j, s) * j.size;
                if (b < j.big) acc += b + TALLY_SEGMENT_COST;
            }
            while (t < nth) split[t++] = nseg;
        }
        j.split = split;
        if (nth == 1) seg_thread(&j, 0, 1);
        else tally_pool_run(st->pool, (int)nth, seg_thread, &j);
    }
    if (nsmall < nseg)
        for (uint64_t s = 0; s < nseg; s++)
            if (seg_len(&j, s) * j.size >= j.big) {
                tally_status status = reduce_one(ctx, st, &j, s);
                if (status != TALLY_OK) return status;
            }
    return TALLY_OK;
}
