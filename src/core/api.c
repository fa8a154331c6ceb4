/* The public entry points: every argument is checked here, so backends only see valid calls. */
#include <stdint.h>
#include <string.h>
#include "core/api_check.h"
#include "core/backend.h"
#include "core/types.h"

tally_status tally_check_type(tally_context *ctx, const char *fn, tally_type type)
{
    if (!tally_type_valid((int)type))
        return tally_set_error(ctx, TALLY_ERR_UNKNOWN_TYPE, "%s: type = %d is not a tally_type",
                               fn, (int)type);
    return TALLY_OK;
}

tally_status tally_check_data(tally_context *ctx, const char *fn, const char *arg,
                              tally_type type, const void *data, uint64_t n)
{
    if (n == 0) return TALLY_OK;
    if (!data)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: %s is NULL but n = %llu", fn, arg, (unsigned long long)n);
    uint64_t size = tally_type_table[type].size, bytes;
    if (__builtin_mul_overflow(n, size, &bytes) || bytes > (uint64_t)SIZE_MAX ||
        bytes > UINT64_MAX - (uint64_t)(uintptr_t)data)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: n = %llu elements of %s at %p run past the end of the address "
                               "space", fn, (unsigned long long)n, tally_type_name(type), data);
    return TALLY_OK;
}

tally_status tally_check_reduce_ops(tally_context *ctx, const char *fn, tally_type type,
                                    const tally_op *ops, size_t nops,
                                    const tally_reduce_options *opts)
{
    for (size_t i = 0; i < nops; i++) {
        tally_op op = ops[i];
        if (!tally_op_valid((int)op))
            return tally_set_error(ctx, TALLY_ERR_UNKNOWN_OP, "%s: ops[%zu] = %d is not a tally_op",
                                   fn, i, (int)op);
        if (tally_type_is_float(type) && !tally_op_table[op].float_ok)
            return tally_set_error(ctx, TALLY_ERR_UNSUPPORTED,
                                   "%s: ops[%zu] = %s is a bitwise op and type %s is a float type",
                                   fn, i, tally_op_name(op), tally_type_name(type));
    }
    if (opts && opts->ddof < 0)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: opts->ddof = %d (must be >= 0)", fn, opts->ddof);
    return TALLY_OK;
}

static void fill_status(tally_result *results, const tally_op *ops, size_t nops, tally_status st)
{
    if (!results) return;
    for (size_t i = 0; i < nops; i++) {
        memset(&results[i], 0, sizeof results[i]);
        results[i].op = ops ? ops[i] : TALLY_SUM;
        results[i].status = st;
    }
}

static tally_status reduce_checked(tally_context *ctx, const char *fn, tally_type type,
                                   const void *data, uint64_t n, const tally_op *ops, size_t nops,
                                   const tally_reduce_options *opts, tally_result *results)
{
    tally_status st;
    if (!ctx) {
        fill_status(results, ops, nops, TALLY_ERR_INVALID_ARGUMENT);
        return TALLY_ERR_INVALID_ARGUMENT;
    }
    if (!results)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                               nops == 1 && !strcmp(fn, "tally_reduce") ? "result" : "results");
    if (!ops) {
        st = tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: ops is NULL", fn);
        fill_status(results, NULL, nops, st);
        return st;
    }
    if (nops == 0)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: nops is 0", fn);
    if ((st = tally_check_type(ctx, fn, type)) != TALLY_OK ||
        (st = tally_check_data(ctx, fn, "data", type, data, n)) != TALLY_OK ||
        (st = tally_check_reduce_ops(ctx, fn, type, ops, nops, opts)) != TALLY_OK) {
        fill_status(results, ops, nops, st);
        return st;
    }
    tally_reduce_options defaults = {0, 0};
    st = ctx->backend->reduce(ctx, ctx->state, type, data, n, ops, nops,
                              opts ? opts : &defaults, results);
    if (st != TALLY_OK) return st;
    for (size_t i = 0; i < nops; i++) {
        if (results[i].status != TALLY_OK) {
            tally_set_error(ctx, results[i].status, "%s: %s of %llu %s elements: %s", fn,
                            tally_op_name(ops[i]), (unsigned long long)n, tally_type_name(type),
                            tally_status_string(results[i].status));
            return results[i].status;
        }
    }
    return TALLY_OK;
}

tally_status tally_reduce(tally_context *ctx, tally_op op, tally_type type, const void *data,
                          uint64_t n, const tally_reduce_options *opts, tally_result *result)
{
    return reduce_checked(ctx, "tally_reduce", type, data, n, &op, 1, opts, result);
}

tally_status tally_reduce_many(tally_context *ctx, tally_type type, const void *data, uint64_t n,
                               const tally_op *ops, size_t nops, const tally_reduce_options *opts,
                               tally_result *results)
{
    return reduce_checked(ctx, "tally_reduce_many", type, data, n, ops, nops, opts, results);
}

tally_status tally_check_scan(tally_context *ctx, const char *fn, tally_op op, tally_type type,
                              const char *in_name, const void *in, const char *out_name,
                              const void *out, uint64_t n, const tally_scan_options *opts)
{
    tally_status st;
    if (!tally_op_valid((int)op))
        return tally_set_error(ctx, TALLY_ERR_UNKNOWN_OP, "%s: op = %d is not a tally_op", fn,
                               (int)op);
    if ((st = tally_check_type(ctx, fn, type)) != TALLY_OK) return st;
    if (!tally_op_table[op].scan_ok)
        return tally_set_error(ctx, TALLY_ERR_UNSUPPORTED,
                               "%s: op %s is a reduction only; scans take sum, prod, min, max, "
                               "and, or, xor", fn, tally_op_name(op));
    if (tally_type_is_float(type) && !tally_op_table[op].float_ok)
        return tally_set_error(ctx, TALLY_ERR_UNSUPPORTED,
                               "%s: op %s is a bitwise op and type %s is a float type", fn,
                               tally_op_name(op), tally_type_name(type));
    if ((st = tally_check_data(ctx, fn, in_name, type, in, n)) != TALLY_OK ||
        (st = tally_check_data(ctx, fn, out_name, type, out, n)) != TALLY_OK)
        return st;
    if (opts && opts->has_init && !opts->exclusive)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: opts->has_init = 1 needs opts->exclusive = 1 (an inclusive "
                               "scan has no initial value)", fn);
    if (n > 0 && in != out) {
        uintptr_t a = (uintptr_t)in, b = (uintptr_t)out;
        uint64_t bytes = n * tally_type_size(type);
        if (a < b + bytes && b < a + bytes)
            return tally_set_error(ctx, TALLY_ERR_OVERLAP,
                                   "%s: %s overlaps %s (%s=[%p,+%llu), %s=%p); only %s == %s is "
                                   "allowed", fn, out_name, in_name, in_name, in,
                                   (unsigned long long)bytes, out_name, out, out_name, in_name);
    }
    return TALLY_OK;
}

tally_status tally_scan(tally_context *ctx, tally_op op, tally_type type, const void *in,
                        void *out, uint64_t n, const tally_scan_options *opts)
{
    if (!ctx) return TALLY_ERR_INVALID_ARGUMENT;
    tally_status st = tally_check_scan(ctx, "tally_scan", op, type, "in", in, "out", out, n, opts);
    if (st != TALLY_OK) return st;
    tally_scan_options defaults;
    memset(&defaults, 0, sizeof defaults);
    return ctx->backend->scan(ctx, ctx->state, op, type, in, out, n, opts ? opts : &defaults);
}
