/* tally_cuda.h's extras over a CUDA context (cuda_backend.cu): its stream and device,
 * reductions and scans enqueued on device data without waiting, scratch reserved ahead of graph
 * capture; and, in a tuning build, the benchmark's plain-sum yardstick (tuning.h). */
#include <cstring>
#include "cuda/host.h"
#include "cuda/tuning.h"

using namespace tcu_host;

extern "C" {

tally_status tally_cuda_set_stream(tally_context *ctx, void *stream)
{
    State *s = cuda_state(ctx);
    if (!s) {
        if (ctx) tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                                 "tally_cuda_set_stream: the context is not a CUDA context");
        return TALLY_ERR_INVALID_ARGUMENT;
    }
    DeviceGuard g(s->device);
    /* work queued so far on the old stream finishes before the new stream touches scratch */
    cudaStreamSynchronize(s->stream);
    s->stream = stream ? (cudaStream_t)stream : s->own_stream;
    return TALLY_OK;
}

void *tally_cuda_stream(const tally_context *ctx)
{
    State *s = cuda_state((tally_context *)ctx);
    return s ? (void *)s->stream : nullptr;
}

int tally_cuda_device(const tally_context *ctx)
{
    State *s = cuda_state((tally_context *)ctx);
    return s ? s->device : -1;
}

tally_status tally_cuda_reduce_async(tally_context *ctx, tally_type type, const void *d_data,
                                     uint64_t n, const tally_op *ops, size_t nops,
                                     const tally_reduce_options *opts, tally_result *d_results)
{
    static const char fn[] = "tally_cuda_reduce_async";
    State *s = cuda_state(ctx);
    tally_status st;
    if (!s) {
        if (ctx) tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: the context is not a CUDA context", fn);
        return TALLY_ERR_INVALID_ARGUMENT;
    }
    if (!ops || !d_results || nops == 0 || nops > TCU_MAX_OPS)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: ops and d_results must be non-NULL and 1 <= nops <= %d (nops = %zu)",
                               fn, TCU_MAX_OPS, nops);
    if ((st = tally_check_type(ctx, fn, type)) != TALLY_OK ||
        (st = tally_check_data(ctx, fn, "d_data", type, d_data, n)) != TALLY_OK ||
        (st = tally_check_reduce_ops(ctx, fn, type, ops, nops, opts)) != TALLY_OK)
        return st;
    DeviceGuard g(s->device);
    const void *d = d_data;
    if (n > 0 && !device_accessible(d_data, &d))
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: d_data = %p is host memory the GPU cannot read; use "
                               "tally_reduce_many for host data", fn, d_data);
    tally_reduce_options defaults = {0, 0};
    return enqueue_reduce(ctx, s, fn, type, d, n, ops, nops, opts ? opts : &defaults, d_results);
}

tally_status tally_cuda_scan_async(tally_context *ctx, tally_op op, tally_type type,
                                   const void *d_in, void *d_out, uint64_t n,
                                   const tally_scan_options *opts)
{
    static const char fn[] = "tally_cuda_scan_async";
    State *s = cuda_state(ctx);
    tally_status st;
    if (!s) {
        if (ctx) tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: the context is not a CUDA context", fn);
        return TALLY_ERR_INVALID_ARGUMENT;
    }
    if ((st = tally_check_scan(ctx, fn, op, type, "d_in", d_in, "d_out", d_out, n, opts)) != TALLY_OK)
        return st;
    if (n == 0) return TALLY_OK;
    DeviceGuard g(s->device);
    const void *din, *dout;
    if (!device_accessible(d_in, &din) || !device_accessible(d_out, &dout))
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: d_in or d_out is host memory the GPU cannot use; use "
                               "tally_scan for host data", fn);
    tally_scan_options defaults;
    memset(&defaults, 0, sizeof defaults);
    return enqueue_scan(ctx, s, fn, op, type, din, (void *)dout, n, opts ? opts : &defaults);
}

#ifdef TALLY_TUNING
tally_status tally_cuda_bench_plain_sum_async(tally_context *ctx, tally_type type, const void *d_data,
                                              uint64_t n, tally_result *d_result)
{
    State *s = cuda_state(ctx);
    if (!s) return TALLY_ERR_INVALID_ARGUMENT;
    DeviceGuard g(s->device);
    tally_op op = TALLY_SUM;
    tally_reduce_options o = {0, 0};
    return enqueue_reduce(ctx, s, "tally_cuda_bench_plain_sum_async", type, d_data, n, &op, 1, &o,
                          d_result, TCU_MASK_FASTSUM);
}

unsigned tally_cuda_bench_spec_hint(tally_context *ctx, tally_type type)
{
    State *s = cuda_state(ctx);
    if (!s || (type != TALLY_F32 && type != TALLY_F64)) return 0;
    return *(volatile unsigned int *)&s->hint[type == TALLY_F64 ? 1 : 0];
}
#endif

tally_status tally_cuda_reserve(tally_context *ctx, tally_type type, uint64_t n)
{
    static const char fn[] = "tally_cuda_reserve";
    State *s = cuda_state(ctx);
    if (!s) {
        if (ctx) tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: the context is not a CUDA context", fn);
        return TALLY_ERR_INVALID_ARGUMENT;
    }
    tally_status st = tally_check_type(ctx, fn, type);
    if (st != TALLY_OK) return st;
    DeviceGuard g(s->device);
    /* room for the narrow tile (the smallest), so that the benchmark's tile variants need no
     * more scratch later (inside a graph capture, say) */
    uint64_t tile = tcu_scan_tile_elems(type, 0);
    if (tile < 16) tile = 16;
    return ensure_scan_status(ctx, s, type, ((n + 16 + tile - 1) / tile + 1) << tcu_knob(TCU_KNOB_SCAN_SHIFT), fn);
}

tally_status tally_cuda_synchronize(tally_context *ctx)
{
    State *s = cuda_state(ctx);
    if (!s) return TALLY_ERR_INVALID_ARGUMENT;
    DeviceGuard g(s->device);
    TCU_TRY(ctx, "tally_cuda_synchronize", cudaStreamSynchronize(s->stream));
    return TALLY_OK;
}

} // extern "C"
