/* Batched (segmented) reductions: tally_reduce_segments and tally_reduce_rows. The arguments are
 * checked here once for the whole batch; a backend with a reduce_segments hook gets the batch in
 * one call, any other backend gets one reduce call per segment (so every backend runs batches,
 * with the same per-segment semantics as tally_reduce_many). */
#include <stdint.h>
#include <string.h>
#include "core/api_check.h"
#include "core/backend.h"
#include "core/types.h"

/* Writes st into every result (a failed call leaves no stale values behind). */
static void fill_all(tally_result *results, uint64_t count, const tally_op *ops, size_t nops,
                     tally_status st)
{
    if (!results) return;
    for (uint64_t k = 0; k < count; k++) {
        memset(&results[k], 0, sizeof results[k]);
        results[k].op = ops ? ops[k % nops] : TALLY_SUM;
        results[k].status = st;
    }
}

/* The checks common to both entry points; *count gets nseg * nops. */
static tally_status check_batch(tally_context *ctx, const char *fn, tally_type type,
                                uint64_t nseg, const tally_op *ops, size_t nops,
                                const tally_reduce_options *opts, tally_result *results,
                                uint64_t *count)
{
    tally_status st;
    *count = 0;
    if (nseg == 0) return TALLY_OK;
    if (!results) return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: results is NULL", fn);
    if (!ops) return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: ops is NULL", fn);
    if (nops == 0) return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: nops is 0", fn);
    if (__builtin_mul_overflow(nseg, (uint64_t)nops, count) ||
        *count > SIZE_MAX / sizeof(tally_result))
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: nseg = %llu segments of %zu ops need more results than memory "
                               "can hold", fn, (unsigned long long)nseg, nops);
    if ((st = tally_check_type(ctx, fn, type)) != TALLY_OK ||
        (st = tally_check_reduce_ops(ctx, fn, type, ops, nops, opts)) != TALLY_OK)
        return st;
    return TALLY_OK;
}

static uint64_t seg_start(const uint64_t *offsets, uint64_t row_stride, uint64_t s)
{
    return offsets ? offsets[s] : s * row_stride;
}

static uint64_t seg_len(const uint64_t *offsets, uint64_t row_len, uint64_t s)
{
    return offsets ? offsets[s + 1] - offsets[s] : row_len;
}

/* Runs the batch on the backend and turns the first failing result into the context's message. */
static tally_status run_batch(tally_context *ctx, const char *fn, tally_type type,
                              const void *data, const uint64_t *offsets, uint64_t nseg,
                              uint64_t row_len, uint64_t row_stride, const tally_op *ops,
                              size_t nops, const tally_reduce_options *opts,
                              tally_result *results)
{
    tally_reduce_options defaults = {0, 0};
    if (!opts) opts = &defaults;
    const tally_backend *b = ctx->backend;
    const size_t size = tally_type_table[type].size;
    tally_status st = TALLY_OK;
    if (b->reduce_segments) {
        st = b->reduce_segments(ctx, ctx->state, type, data, offsets, nseg, row_len, row_stride,
                                ops, nops, opts, results);
    } else {
        for (uint64_t s = 0; s < nseg && st == TALLY_OK; s++) {
            uint64_t len = seg_len(offsets, row_len, s);
            const char *x = len ? (const char *)data + seg_start(offsets, row_stride, s) * size
                                : (const char *)data;
            st = b->reduce(ctx, ctx->state, type, x, len, ops, nops, opts, &results[s * nops]);
        }
    }
    if (st != TALLY_OK) {
        /* a failure of the backend itself (out of memory, a device error), whose message the
         * backend has set: no result stands */
        fill_all(results, nseg * (uint64_t)nops, ops, nops, st);
        return st;
    }
    for (uint64_t k = 0; k < nseg * (uint64_t)nops; k++) {
        if (results[k].status == TALLY_OK) continue;
        uint64_t s = k / nops;
        return tally_set_error(ctx, results[k].status,
                               "%s: %s of segment %llu (%llu %s elements): %s", fn,
                               tally_op_name(ops[k % nops]), (unsigned long long)s,
                               (unsigned long long)seg_len(offsets, row_len, s),
                               tally_type_name(type), tally_status_string(results[k].status));
    }
    return TALLY_OK;
}

tally_status tally_reduce_segments(tally_context *ctx, tally_type type, const void *data,
                                   const uint64_t *offsets, uint64_t nseg, const tally_op *ops,
                                   size_t nops, const tally_reduce_options *opts,
                                   tally_result *results)
{
    static const char fn[] = "tally_reduce_segments";
    if (!ctx) return TALLY_ERR_INVALID_ARGUMENT;
    uint64_t count;
    tally_status st = check_batch(ctx, fn, type, nseg, ops, nops, opts, results, &count);
    if (st == TALLY_OK && nseg > 0) {
        if (!offsets) {
            st = tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                                 "%s: offsets is NULL but nseg = %llu", fn,
                                 (unsigned long long)nseg);
        } else {
            for (uint64_t s = 0; s < nseg; s++) {
                if (offsets[s + 1] < offsets[s]) {
                    st = tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                                         "%s: offsets[%llu] = %llu is less than offsets[%llu] = "
                                         "%llu (offsets must be nondecreasing)", fn,
                                         (unsigned long long)(s + 1),
                                         (unsigned long long)offsets[s + 1],
                                         (unsigned long long)s, (unsigned long long)offsets[s]);
                    break;
                }
            }
            if (st == TALLY_OK && offsets[nseg] > offsets[0])
                st = tally_check_data(ctx, fn, "data", type, data, offsets[nseg]);
        }
    }
    if (st != TALLY_OK) {
        fill_all(results, count, ops, nops, st);
        return st;
    }
    if (nseg == 0) return TALLY_OK;
    return run_batch(ctx, fn, type, data, offsets, nseg, 0, 0, ops, nops, opts, results);
}

tally_status tally_reduce_rows(tally_context *ctx, tally_type type, const void *data,
                               uint64_t nrows, uint64_t row_len, uint64_t row_stride,
                               const tally_op *ops, size_t nops, const tally_reduce_options *opts,
                               tally_result *results)
{
    static const char fn[] = "tally_reduce_rows";
    if (!ctx) return TALLY_ERR_INVALID_ARGUMENT;
    uint64_t count;
    tally_status st = check_batch(ctx, fn, type, nrows, ops, nops, opts, results, &count);
    if (st == TALLY_OK && nrows > 0 && row_len > 0) {
        /* the last row ends (nrows - 1) * row_stride + row_len elements after data */
        uint64_t span;
        if (__builtin_mul_overflow(nrows - 1, row_stride, &span) ||
            __builtin_add_overflow(span, row_len, &span))
            st = tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                                 "%s: %llu rows of %llu elements, %llu apart, run past the end of "
                                 "the address space", fn, (unsigned long long)nrows,
                                 (unsigned long long)row_len, (unsigned long long)row_stride);
        else
            st = tally_check_data(ctx, fn, "data", type, data, span);
    }
    if (st != TALLY_OK) {
        fill_all(results, count, ops, nops, st);
        return st;
    }
    if (nrows == 0) return TALLY_OK;
    return run_batch(ctx, fn, type, data, NULL, nrows, row_len, row_stride, ops, nops, opts,
                     results);
}
