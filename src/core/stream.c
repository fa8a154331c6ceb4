/* Streaming reductions: one running partial (core/partial.h), fed chunk by chunk through the
 * context's backend (its accumulate entry), or through a CPU backend state of the stream's own
 * where the backend has none. Sums are exact and partials merge in order, so results equal a
 * one-shot reduce over the concatenation (variance aside: see tally.h). */
#include <stdlib.h>
#include <string.h>
#include "core/api_check.h"
#include "core/backend.h"
#include "core/partial.h"
#include "core/types.h"

struct tally_stream {
    tally_context *ctx;
    const tally_backend *backend; /* whose accumulate feeds acc */
    void *state;                  /* its state: the context's, or one owned here (own_state) */
    int own_state;
    tally_type type;
    tally_reduce_options opts;
    size_t nops;
    tally_op *ops;
    tally_partial acc;
};

tally_status tally_stream_create(tally_context *ctx, tally_type type, const tally_op *ops,
                                 size_t nops, const tally_reduce_options *opts,
                                 tally_stream **out)
{
    static const char fn[] = "tally_stream_create";
    tally_status st;
    if (!ctx) return TALLY_ERR_INVALID_ARGUMENT;
    if (!out) return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: stream is NULL", fn);
    *out = NULL;
    if (!ops) return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: ops is NULL", fn);
    if (nops == 0) return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: nops is 0", fn);
    if ((st = tally_check_type(ctx, fn, type)) != TALLY_OK ||
        (st = tally_check_reduce_ops(ctx, fn, type, ops, nops, opts)) != TALLY_OK)
        return st;
    tally_stream *s = calloc(1, sizeof *s);
    tally_op *o = malloc(nops * sizeof *o);
    if (!s || !o) {
        free(s);
        free(o);
        return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    memcpy(o, ops, nops * sizeof *o);
    s->ctx = ctx;
    s->type = type;
    s->ops = o;
    s->nops = nops;
    if (opts) s->opts = *opts;
    if (ctx->backend->accumulate) {
        s->backend = ctx->backend;
        s->state = ctx->state;
    } else {
        s->backend = &tally_cpu_backend;
        st = s->backend->init(ctx, &ctx->opts, &s->state);
        if (st != TALLY_OK) {
            free(o);
            free(s);
            return st;
        }
        s->own_state = 1;
    }
    uint32_t need = tally_ops_need(type, ops, nops, s->opts.omit_nan);
    if (tally_ops_needs(ops, nops) & TALLY_FEAT_VAR) need |= TALLY_NEED_SQ; /* no second pass */
    tally_partial_init(&s->acc, type, need, s->opts.omit_nan);
    *out = s;
    return TALLY_OK;
}

tally_status tally_stream_update(tally_stream *s, const void *data, uint64_t n)
{
    if (!s) return TALLY_ERR_INVALID_ARGUMENT;
    tally_status st = tally_check_data(s->ctx, "tally_stream_update", "data", s->type, data, n);
    if (st != TALLY_OK || n == 0) return st;
    return s->backend->accumulate(s->ctx, s->state, data, n, s->acc.n, &s->acc);
}

tally_status tally_stream_results(const tally_stream *s, tally_result *results)
{
    if (!s) return TALLY_ERR_INVALID_ARGUMENT;
    if (!results)
        return tally_set_error(s->ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "tally_stream_results: results is NULL");
    tally_status first = TALLY_OK;
    for (size_t i = 0; i < s->nops; i++) {
        tally_status st = tally_partial_result(&s->acc, s->ops[i], s->opts.ddof, NULL, &results[i]);
        if (st != TALLY_OK && first == TALLY_OK) {
            first = st;
            tally_set_error(s->ctx, st, "tally_stream_results: %s of %llu %s elements: %s",
                            tally_op_name(s->ops[i]), (unsigned long long)s->acc.n,
                            tally_type_name(s->type), tally_status_string(st));
        }
    }
    return first;
}

uint64_t tally_stream_count(const tally_stream *s) { return s ? s->acc.n : 0; }

void tally_stream_destroy(tally_stream *s)
{
    if (!s) return;
    if (s->own_state) s->backend->fini(s->state);
    free(s->ops);
    free(s);
}
