/* The exported internal API (core/internal.h): thin wrappers over the core's partial states and
 * argument checks, and the partial states of a context's data on any backend. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/api_check.h"
#include "core/backend.h"
#include "core/internal.h"
#include "core/types.h"

uint32_t tally_internal_ops_need(tally_type type, const tally_op *ops, size_t nops, int omit_nan)
{
    return tally_ops_need(type, ops, nops, omit_nan);
}

void tally_internal_partial_init(tally_partial *p, tally_type type, uint32_t need, int omit_nan)
{
    /* partial_init sets only what need asks for; a state that is encoded, copied or merged
     * whole must have defined bytes everywhere. Zero bytes are also an empty exact sum
     * (exact_sum.h), so the sums need ask for nothing more. */
    memset(p, 0, sizeof *p);
    tally_partial_init(p, type, need, omit_nan);
    if (!(need & TALLY_NEED_PROD))
        for (int i = 0; i < TALLY_PROD_LANES; i++) p->lanes[i] = 1.0;
}

void tally_internal_partial_append(tally_partial *dst, const tally_partial *src)
{
    tally_partial s = *src;
    if (s.imin != TALLY_NO_INDEX) s.imin += dst->n;
    if (s.imax != TALLY_NO_INDEX) s.imax += dst->n;
    if (s.first_nan != TALLY_NO_INDEX) s.first_nan += dst->n;
    tally_partial_merge(dst, &s);
}

tally_status tally_internal_partial_result(const tally_partial *p, tally_op op, int ddof,
                                           const tally_exact *sqdev, tally_result *r)
{
    return tally_partial_result(p, op, ddof, sqdev, r);
}

double tally_internal_partial_mean(const tally_partial *p, tally_status *status)
{
    return tally_partial_mean(p, status);
}

double tally_internal_partial_fprod(const tally_partial *p)
{
    return p->fprod * tally_prod_lanes(p->lanes);
}

tally_status tally_internal_check_reduce(tally_context *ctx, const char *fn, tally_type type,
                                         const void *data, uint64_t n, const tally_op *ops,
                                         size_t nops, const tally_reduce_options *opts)
{
    tally_status st;
    if (!ctx) return TALLY_ERR_INVALID_ARGUMENT;
    if (!ops) return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: ops is NULL", fn);
    if (nops == 0) return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: nops is 0", fn);
    if ((st = tally_check_type(ctx, fn, type)) != TALLY_OK ||
        (st = tally_check_data(ctx, fn, "data", type, data, n)) != TALLY_OK ||
        (st = tally_check_reduce_ops(ctx, fn, type, ops, nops, opts)) != TALLY_OK)
        return st;
    return TALLY_OK;
}

tally_status tally_internal_check_scan(tally_context *ctx, const char *fn, tally_op op,
                                       tally_type type, const void *in, const void *out,
                                       uint64_t n, const tally_scan_options *opts)
{
    if (!ctx) return TALLY_ERR_INVALID_ARGUMENT;
    return tally_check_scan(ctx, fn, op, type, "in", in, "out", out, n, opts);
}

tally_status tally_internal_set_error(tally_context *ctx, tally_status status, const char *fmt, ...)
{
    if (!ctx) return status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
    va_end(ap);
    return status;
}

/* ---- a context's data --------------------------------------------------------------------- */
/* CPU contexts, and AUTO ones (core/route.c: a carry sends host data to the CPU) */
static int is_cpu(const tally_context *ctx)
{
    return ctx->backend == &tally_cpu_backend || ctx->backend->kind == TALLY_BACKEND_AUTO;
}

tally_status tally_internal_copy(tally_context *ctx, void *dst, const void *src, uint64_t bytes)
{
    if (bytes == 0) return TALLY_OK;
    if (ctx->backend->copy) return ctx->backend->copy(ctx, ctx->state, dst, src, bytes);
    memcpy(dst, src, (size_t)bytes);
    return TALLY_OK;
}

/* Staging for backends without accumulate or sqdev: a CPU backend state (made through its
 * table) and a host buffer, per call. */
typedef struct stage {
    void *cpu;
    void *buf;
    uint64_t per; /* elements per piece */
} stage;

static tally_status stage_open(tally_context *ctx, tally_type type, uint64_t n, stage *s)
{
    size_t size = tally_type_size(type);
    s->per = TALLY_INTERNAL_STAGE_BYTES / size;
    if (s->per > n) s->per = n;
    s->buf = malloc((size_t)(s->per * size));
    if (!s->buf)
        return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY,
                               "tally_mpi: out of memory for a %llu-byte staging buffer",
                               (unsigned long long)(s->per * size));
    tally_status st = tally_cpu_backend.init(ctx, &ctx->opts, &s->cpu);
    if (st != TALLY_OK) {
        free(s->buf);
        s->buf = NULL;
    }
    return st;
}

static void stage_close(stage *s)
{
    tally_cpu_backend.fini(s->cpu);
    free(s->buf);
}

tally_status tally_internal_accumulate(tally_context *ctx, const void *data, uint64_t n,
                                       tally_partial *acc)
{
    if (n == 0) return TALLY_OK;
    if (ctx->backend->accumulate) return ctx->backend->accumulate(ctx, ctx->state, data, n, acc->n, acc);
    stage s;
    tally_status st = stage_open(ctx, acc->type, n, &s);
    if (st != TALLY_OK) return st;
    size_t size = tally_type_size(acc->type);
    for (uint64_t i = 0; i < n && st == TALLY_OK; i += s.per) {
        uint64_t m = n - i < s.per ? n - i : s.per;
        st = tally_internal_copy(ctx, s.buf, (const char *)data + i * size, m * size);
        if (st == TALLY_OK) st = tally_cpu_backend.accumulate(ctx, s.cpu, s.buf, m, acc->n, acc);
    }
    stage_close(&s);
    return st;
}

tally_status tally_internal_sqdev(tally_context *ctx, tally_type type, const void *data,
                                  uint64_t n, double mean, int omit_nan, tally_exact *out)
{
    tally_exact_init(out);
    if (n == 0) return TALLY_OK;
    if (ctx->backend->sqdev) return ctx->backend->sqdev(ctx, ctx->state, type, data, n, mean, omit_nan, out);
    stage s;
    tally_status st = stage_open(ctx, type, n, &s);
    if (st != TALLY_OK) return st;
    size_t size = tally_type_size(type);
    for (uint64_t i = 0; i < n && st == TALLY_OK; i += s.per) {
        uint64_t m = n - i < s.per ? n - i : s.per;
        st = tally_internal_copy(ctx, s.buf, (const char *)data + i * size, m * size);
        if (st == TALLY_OK) {
            tally_exact e;
            st = tally_cpu_backend.sqdev(ctx, s.cpu, type, s.buf, m, mean, omit_nan, &e);
            if (st == TALLY_OK) tally_exact_merge(out, &e);
        }
    }
    stage_close(&s);
    return st;
}

tally_status tally_internal_scan(tally_context *ctx, tally_op op, tally_type type, const void *in,
                                 void *out, uint64_t n, const tally_scan_options *opts)
{
    if (opts->has_init && !opts->exclusive && !is_cpu(ctx))
        return tally_set_error(ctx, TALLY_ERR_UNSUPPORTED,
                               "tally_mpi_scan: the %s backend takes no carry into an inclusive "
                               "scan", ctx->backend->name);
    return ctx->backend->scan(ctx, ctx->state, op, type, in, out, n, opts);
}
