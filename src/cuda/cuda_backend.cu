/* The CUDA backend: the C backend table (core/backend.h), the extras of tally_cuda.h, and the
 * host side of every launch (pointer kinds, staging of host data, scratch buffers, results).
 * The library must load and run on machines without a GPU or driver: the CUDA runtime is linked
 * statically and loads the driver lazily, so available() just reports 0 there. */
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <cuda_runtime.h>

extern "C" {
#include "core/api_check.h"
#include "core/backend.h"
}
#include "tally_cuda.h"
#include "cuda/cuda_internal.h"
#include "core/exact_sum.h"

namespace {

struct State {
    int device;
    int sm_count;
    char desc[192];
    cudaStream_t own_stream;
    cudaStream_t stream;
    void *partials;            /* TCU_MAX_BLOCKS * TCU_PARTIAL_BYTES */
    long long *xpartials;      /* TCU_MAX_BLOCKS * TALLY_EXACT_CHUNKS */
    unsigned int *counter;     /* reduce ticket; then the packed integer sum, the max and min words */
    tcu_aux *aux;
    tally_result *h_results;   /* mapped pinned host memory: TCU_MAX_OPS results */
    unsigned int *scan_sync;   /* [2]: the scan epoch */
    void *scan_status;
    size_t scan_status_bytes;
    void *staging;
    size_t staging_bytes;
};

/* Makes the context's device current for the duration of a call, then restores the caller's. */
struct DeviceGuard {
    int prev = -1;
    explicit DeviceGuard(int dev)
    {
        if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
        if (prev != dev) cudaSetDevice(dev);
    }
    ~DeviceGuard()
    {
        int cur;
        if (prev >= 0 && cudaGetDevice(&cur) == cudaSuccess && cur != prev) cudaSetDevice(prev);
    }
};

tally_status cuda_fail(tally_context *ctx, cudaError_t err, const char *fn, const char *what)
{
    cudaGetLastError(); /* clear a sticky-free error so the next call starts clean */
    tally_status st = err == cudaErrorMemoryAllocation ? TALLY_ERR_OUT_OF_MEMORY
                                                       : TALLY_ERR_BACKEND_FAILURE;
    return tally_set_error(ctx, st, "%s: %s failed: %s (%s)", fn, what, cudaGetErrorName(err),
                           cudaGetErrorString(err));
}

#define TCU_TRY(ctx, fn, call)                                                                 \
    do {                                                                                       \
        cudaError_t err_ = (call);                                                             \
        if (err_ != cudaSuccess) return cuda_fail((ctx), err_, (fn), #call);                   \
    } while (0)

int cuda_available(void)
{
    static int cached = -1;
    if (cached < 0) {
        int count = 0;
        cudaError_t err = cudaGetDeviceCount(&count);
        cached = (err == cudaSuccess && count > 0) ? 1 : 0;
        cudaGetLastError();
    }
    return cached;
}

void free_state(State *s)
{
    if (!s) return;
    DeviceGuard g(s->device);
    if (s->own_stream) cudaStreamSynchronize(s->own_stream);
    if (s->stream && s->stream != s->own_stream) cudaStreamSynchronize(s->stream);
    cudaFree(s->partials);
    cudaFree(s->xpartials);
    cudaFree(s->counter);
    cudaFree(s->aux);
    cudaFree(s->scan_sync);
    cudaFree(s->scan_status);
    cudaFree(s->staging);
    if (s->h_results) cudaFreeHost(s->h_results);
    if (s->own_stream) cudaStreamDestroy(s->own_stream);
    delete s;
}

tally_status cuda_init(tally_context *ctx, const tally_options *opts, void **out)
{
    static const char fn[] = "tally_create";
    *out = nullptr;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        cudaGetLastError();
        return tally_set_error(ctx, TALLY_ERR_BACKEND_UNAVAILABLE,
                               "%s: no usable CUDA device (%s)", fn,
                               err != cudaSuccess ? cudaGetErrorString(err) : "no device");
    }
    int dev = opts ? opts->device : 0;
    if (dev < 0 || dev >= count)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: device = %d but this machine has %d CUDA device(s)", fn, dev,
                               count);
    State *s = new (std::nothrow) State();
    if (!s) return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    s->device = dev;
    DeviceGuard g(dev);
    cudaDeviceProp prop;
    tally_status st = TALLY_OK;
#define TCU_INIT(call)                                                                         \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            st = cuda_fail(ctx, e_, fn, #call);                                                \
            free_state(s);                                                                     \
            return st;                                                                         \
        }                                                                                      \
    } while (0)
    TCU_INIT(cudaGetDeviceProperties(&prop, dev));
    s->sm_count = prop.multiProcessorCount;
    snprintf(s->desc, sizeof s->desc, "%s, %d SMs, %.0f GiB", prop.name, prop.multiProcessorCount,
             (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    /* a blocking stream: it waits for the legacy default stream, so a plain cudaMemcpy of the
     * input just before a call (whose DMA may still run when it returns) is always seen */
    TCU_INIT(cudaStreamCreateWithFlags(&s->own_stream, cudaStreamDefault));
    s->stream = s->own_stream;
    TCU_INIT(cudaMalloc(&s->partials, (size_t)TCU_MAX_BLOCKS * TCU_PARTIAL_BYTES));
    TCU_INIT(cudaMalloc((void **)&s->xpartials,
                        (size_t)TCU_MAX_BLOCKS * TALLY_EXACT_CHUNKS * sizeof(long long)));
    /* the ticket (4 bytes); 8 bytes in, the packed integer sum (0); at 16 the max word (0), at
     * 24 the min word (~0): each is reset so by the launch that uses it */
    TCU_INIT(cudaMalloc((void **)&s->counter, 32));
    TCU_INIT(cudaMemset(s->counter, 0, 24));
    TCU_INIT(cudaMemset((char *)s->counter + 24, 0xff, 8));
    TCU_INIT(cudaMalloc((void **)&s->aux, sizeof(tcu_aux)));
    TCU_INIT(cudaHostAlloc((void **)&s->h_results, TCU_MAX_OPS * sizeof(tally_result),
                           cudaHostAllocMapped));
    TCU_INIT(cudaMalloc((void **)&s->scan_sync, 4 * sizeof(unsigned int)));
    {
        unsigned int init[4] = {0, 0, 1, 0};
        TCU_INIT(cudaMemcpy(s->scan_sync, init, sizeof init, cudaMemcpyHostToDevice));
    }
#undef TCU_INIT
    *out = s;
    return TALLY_OK;
}

void cuda_fini(void *state) { free_state((State *)state); }

const char *cuda_describe(void *state) { return state ? ((State *)state)->desc : ""; }

/* Where a pointer lives: 1 device-accessible (device, managed, registered host), 0 plain host.
 * *dev gets the pointer to use on the device. */
int device_accessible(const void *p, const void **dev)
{
    cudaPointerAttributes a;
    *dev = p;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    switch (a.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged: return 1;
    case cudaMemoryTypeHost:
        if (a.devicePointer) {
            *dev = a.devicePointer;
            return 1;
        }
        return 0;
    default: return 0;
    }
}

tally_status ensure_staging(tally_context *ctx, State *s, size_t bytes, const char *fn)
{
    if (s->staging_bytes >= bytes) return TALLY_OK;
    cudaStreamSynchronize(s->stream);
    cudaFree(s->staging);
    s->staging = nullptr;
    s->staging_bytes = 0;
    cudaError_t err = cudaMalloc(&s->staging, bytes);
    if (err != cudaSuccess) return cuda_fail(ctx, err, fn, "cudaMalloc (staging for host data)");
    s->staging_bytes = bytes;
    return TALLY_OK;
}

tally_status ensure_scan_status(tally_context *ctx, State *s, tally_type type, uint64_t ntiles,
                                const char *fn)
{
    size_t bytes = tcu_scan_status_bytes(type, ntiles);
    if (bytes < 4096) bytes = 4096;
    if (s->scan_status_bytes >= bytes) return TALLY_OK;
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaStreamIsCapturing(s->stream, &cs);
    if (cs != cudaStreamCaptureStatusNone)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: the scan needs more scratch than reserved while the stream "
                               "is being captured; call tally_cuda_reserve first", fn);
    bytes += bytes / 4; /* grow in steps */
    cudaStreamSynchronize(s->stream);
    cudaFree(s->scan_status);
    s->scan_status = nullptr;
    s->scan_status_bytes = 0;
    TCU_TRY(ctx, fn, cudaMalloc(&s->scan_status, bytes));
    /* zero flags mean "not published" for every epoch (epochs start at 1) */
    TCU_TRY(ctx, fn, cudaMemset(s->scan_status, 0, bytes));
    s->scan_status_bytes = bytes;
    return TALLY_OK;
}

/* The features a reduce over ops needs, and the kernel mask that covers them. */
unsigned ops_mask(const tally_op *ops, size_t nops, int *has_var)
{
    unsigned need = 0;
    *has_var = 0;
    for (size_t i = 0; i < nops; i++) {
        switch (ops[i]) {
        case TALLY_SUM: need |= TCU_F_SUM; break;
        case TALLY_PROD: need |= TCU_F_PROD; break;
        case TALLY_MIN: need |= TCU_F_MIN; break;
        case TALLY_MAX: need |= TCU_F_MAX; break;
        case TALLY_AND: case TALLY_OR: case TALLY_XOR: need |= TCU_F_BITS; break;
        case TALLY_COUNT: need |= TCU_F_COUNT; break;
        case TALLY_ARGMIN: need |= TCU_F_ARGMIN; break;
        case TALLY_ARGMAX: need |= TCU_F_ARGMAX; break;
        case TALLY_MEAN: need |= TCU_F_SUM | TCU_F_COUNT; break;
        case TALLY_VAR: need |= TCU_F_SUM | TCU_F_COUNT; *has_var = 1; break;
        }
    }
    static const unsigned masks[] = {TCU_MASK_SUM, TCU_MASK_MIN, TCU_MASK_MAX, TCU_MASK_ARGMIN,
                                     TCU_MASK_ARGMAX, TCU_MASK_SMM};
    for (unsigned m : masks)
        if ((need & ~m) == 0) return m;
    return TCU_MASK_ALL;
}

/* Enqueues the reduce kernels (one, or two with a variance); results go to out[i] for ops[i]. */
tally_status enqueue_reduce(tally_context *ctx, State *s, const char *fn, tally_type type,
                            const void *ddata, uint64_t n, const tally_op *ops, size_t nops,
                            const tally_reduce_options *opts, tally_result *out,
                            unsigned force_mask = 0)
{
    tcu_reduce_params p;
    memset(&p, 0, sizeof p);
    size_t es = tally_type_size(type);
    uint64_t vec = 16 / es;
    uintptr_t a = (uintptr_t)ddata;
    if (n && a % es)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: data = %p is not aligned to its %zu-byte elements (the CUDA "
                               "backend needs element-aligned pointers)", fn, ddata, es);
    uint64_t head = ((16 - a % 16) % 16) / es;
    if (head > n) head = n;
    p.data = ddata;
    p.n = n;
    p.head = (uint32_t)head;
    p.body_vec = (n - head) / vec;
    p.tail = (uint32_t)(n - head - p.body_vec * vec);
    p.partials = s->partials;
    p.xpartials = s->xpartials;
    p.counter = s->counter;
    p.acc = (unsigned long long *)((char *)s->counter + 8);
    p.kmax_word = (unsigned long long *)((char *)s->counter + 16);
    p.kmin_word = (unsigned long long *)((char *)s->counter + 24);
    p.out = out;
    p.nops = (int)nops;
    p.omit_nan = opts && opts->omit_nan ? 1 : 0;
    p.ddof = opts ? opts->ddof : 0;
    for (size_t i = 0; i < nops; i++) p.ops[i] = (uint8_t)ops[i];
    int has_var;
    unsigned mask = ops_mask(ops, nops, &has_var);
    if (force_mask) mask = force_mask;
    p.aux = has_var ? s->aux : nullptr;
    p.pdl = tcu_knob(TCU_KNOB_PDL);
    cudaError_t err = tcu_launch_reduce(type, mask, p.omit_nan, &p, s->sm_count, s->stream);
    if (err != cudaSuccess) return cuda_fail(ctx, err, fn, "the reduce kernel launch");
    if (has_var) {
        p.pass2 = 1;
        err = tcu_launch_reduce(type, TCU_MASK_SQDEV, p.omit_nan, &p, s->sm_count, s->stream);
        if (err != cudaSuccess) return cuda_fail(ctx, err, fn, "the variance kernel launch");
    }
    return TALLY_OK;
}

tally_status cuda_reduce(tally_context *ctx, void *state, tally_type type, const void *data,
                         uint64_t n, const tally_op *ops, size_t nops,
                         const tally_reduce_options *opts, tally_result *results)
{
    static const char fn[] = "tally_reduce";
    State *s = (State *)state;
    DeviceGuard g(s->device);
    const void *d = data;
    size_t bytes = (size_t)n * tally_type_size(type);
    if (n > 0 && !device_accessible(data, &d)) {
        tally_status st = ensure_staging(ctx, s, bytes, fn);
        if (st != TALLY_OK) return st;
        TCU_TRY(ctx, fn, cudaMemcpyAsync(s->staging, data, bytes, cudaMemcpyHostToDevice, s->stream));
        d = s->staging;
    }
    /* each distinct op once, then spread back */
    tally_op uniq[TALLY_OP_COUNT];
    size_t nu = 0;
    for (size_t i = 0; i < nops; i++) {
        size_t j = 0;
        while (j < nu && uniq[j] != ops[i]) j++;
        if (j == nu) uniq[nu++] = ops[i];
    }
    tally_status st = enqueue_reduce(ctx, s, fn, type, d, n, uniq, nu, opts, s->h_results);
    if (st != TALLY_OK) return st;
    TCU_TRY(ctx, fn, cudaStreamSynchronize(s->stream));
    for (size_t i = 0; i < nops; i++) {
        size_t j = 0;
        while (uniq[j] != ops[i]) j++;
        tally_result r;
        memcpy(&r, (const void *)&s->h_results[j], sizeof r);
        results[i] = r;
    }
    return TALLY_OK;
}

/* The scan's initial value in the element's bits: opts->init converted, or the op's identity. */
uint64_t scan_init_bits(tally_op op, tally_type type, const tally_scan_options *o)
{
    uint64_t b = 0;
    int sg = type == TALLY_I8 || type == TALLY_I16 || type == TALLY_I32 || type == TALLY_I64;
    unsigned bits = (unsigned)tally_type_size(type) * 8;
    if (type == TALLY_F32 || type == TALLY_F64) {
        double v;
        if (o->has_init) v = o->init.f64;
        else if (op == TALLY_PROD) v = 1.0;
        else if (op == TALLY_MIN) v = __builtin_inf();
        else if (op == TALLY_MAX) v = -__builtin_inf();
        else v = 0.0;
        if (type == TALLY_F32) {
            float f = (float)v;
            uint32_t w;
            memcpy(&w, &f, 4);
            b = w;
        } else {
            memcpy(&b, &v, 8);
        }
        return b;
    }
    uint64_t lowmask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
    if (o->has_init) {
        b = sg ? (uint64_t)o->init.i64 : o->init.u64;
    } else {
        switch (op) {
        case TALLY_PROD: b = 1; break;
        case TALLY_MIN: b = sg ? (lowmask >> 1) : lowmask; break;
        case TALLY_MAX: b = sg ? ~(lowmask >> 1) : 0; break;
        case TALLY_AND: b = ~0ull; break;
        default: b = 0; break;
        }
    }
    return b & lowmask;
}

tally_status enqueue_scan(tally_context *ctx, State *s, const char *fn, tally_op op,
                          tally_type type, const void *din, void *dout, uint64_t n,
                          const tally_scan_options *opts)
{
    size_t es = tally_type_size(type);
    uintptr_t a = (uintptr_t)din, b = (uintptr_t)dout;
    if (a % es || b % es)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: in = %p / out = %p are not aligned to their %zu-byte elements "
                               "(the CUDA backend needs element-aligned pointers)", fn, din, dout, es);
    tcu_scan_params p;
    memset(&p, 0, sizeof p);
    p.in = din;
    p.out = dout;
    p.n = n;
    p.head = (uint32_t)((a % 16) / es);
    p.vec_out = (a % 16) == (b % 16);
    p.wide = tcu_scan_shape(type, n);
    uint64_t tile = tcu_scan_tile_elems(type, p.wide);
    p.ntiles = (p.head + n + tile - 1) / tile;
    if (p.ntiles > 0x7fffffffull)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: n = %llu is too large for one "
                               "CUDA scan", fn, (unsigned long long)n);
    p.exclusive = opts->exclusive ? 1 : 0;
    p.init_bits = scan_init_bits(op, type, opts);
    p.lb_sleep_ns = (uint32_t)tcu_knob(TCU_KNOB_SCAN_SLEEP);
    p.lb_backoff_ns = (uint32_t)tcu_knob(TCU_KNOB_SCAN_BACKOFF);
    p.status_shift = (uint32_t)tcu_knob(TCU_KNOB_SCAN_SHIFT);
    tally_status st = ensure_scan_status(ctx, s, type, p.ntiles << p.status_shift, fn);
    if (st != TALLY_OK) return st;
    p.status = s->scan_status;
    p.sync = s->scan_sync;
    p.pdl = tcu_knob(TCU_KNOB_PDL);
    cudaError_t err = tcu_launch_scan(type, op, &p, s->stream);
    if (err != cudaSuccess) return cuda_fail(ctx, err, fn, "the scan kernel launch");
    return TALLY_OK;
}

tally_status cuda_scan(tally_context *ctx, void *state, tally_op op, tally_type type,
                       const void *in, void *out, uint64_t n, const tally_scan_options *opts)
{
    static const char fn[] = "tally_scan";
    State *s = (State *)state;
    if (n == 0) return TALLY_OK;
    DeviceGuard g(s->device);
    const void *din;
    const void *dout_c;
    int in_dev = device_accessible(in, &din);
    int out_dev = device_accessible(out, &dout_c);
    size_t bytes = (size_t)n * tally_type_size(type);
    if (in_dev && out_dev) {
        tally_status st = enqueue_scan(ctx, s, fn, op, type, din, (void *)dout_c, n, opts);
        if (st != TALLY_OK) return st;
        TCU_TRY(ctx, fn, cudaStreamSynchronize(s->stream));
        return TALLY_OK;
    }
    /* host memory on either side: scan a device copy in place, copy back */
    tally_status st = ensure_staging(ctx, s, bytes, fn);
    if (st != TALLY_OK) return st;
    TCU_TRY(ctx, fn, cudaMemcpyAsync(s->staging, in, bytes, cudaMemcpyDefault, s->stream));
    st = enqueue_scan(ctx, s, fn, op, type, s->staging, s->staging, n, opts);
    if (st != TALLY_OK) return st;
    TCU_TRY(ctx, fn, cudaMemcpyAsync(out, s->staging, bytes, cudaMemcpyDefault, s->stream));
    TCU_TRY(ctx, fn, cudaStreamSynchronize(s->stream));
    return TALLY_OK;
}

tally_status cuda_copy(tally_context *ctx, void *state, void *dst, const void *src,
                       uint64_t bytes)
{
    static const char fn[] = "tally_mpi (staging)";
    State *s = (State *)state;
    if (bytes == 0) return TALLY_OK;
    DeviceGuard g(s->device);
    TCU_TRY(ctx, fn, cudaMemcpyAsync(dst, src, (size_t)bytes, cudaMemcpyDefault, s->stream));
    TCU_TRY(ctx, fn, cudaStreamSynchronize(s->stream));
    return TALLY_OK;
}

const tally_backend cuda_backend = {
    TALLY_BACKEND_CUDA, "cuda", cuda_available, cuda_init, cuda_fini,
    cuda_reduce,        cuda_scan, cuda_describe, cuda_copy,
};

State *cuda_state(tally_context *ctx)
{
    if (!ctx || !ctx->backend || ctx->backend->kind != TALLY_BACKEND_CUDA) return nullptr;
    return (State *)ctx->state;
}

} // namespace

extern "C" {

const tally_backend *tally_cuda_backend_get(void) { return &cuda_backend; }

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
    if ((int)op < 0 || (int)op > TALLY_XOR)
        return tally_set_error(ctx, TALLY_ERR_UNSUPPORTED, "%s: op = %d is not a scan op "
                               "(sum, prod, min, max, and, or, xor)", fn, (int)op);
    if ((st = tally_check_type(ctx, fn, type)) != TALLY_OK ||
        (st = tally_check_data(ctx, fn, "d_in", type, d_in, n)) != TALLY_OK ||
        (st = tally_check_data(ctx, fn, "d_out", type, d_out, n)) != TALLY_OK)
        return st;
    if ((type == TALLY_F32 || type == TALLY_F64) && op >= TALLY_AND)
        return tally_set_error(ctx, TALLY_ERR_UNSUPPORTED, "%s: bitwise scans need an integer type", fn);
    if (n > 0 && d_in != d_out) {
        uintptr_t a = (uintptr_t)d_in, b = (uintptr_t)d_out;
        uint64_t bytes = n * tally_type_size(type);
        if (a < b + bytes && b < a + bytes)
            return tally_set_error(ctx, TALLY_ERR_OVERLAP, "%s: d_out overlaps d_in", fn);
    }
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

/* Not in tally_cuda.h: the benchmark's yardstick, a plain fixed-order f64 sum (not correctly
 * rounded) of float data, so the cost of exactness can be measured in the same run. */
TALLY_API tally_status tally_cuda_bench_plain_sum_async(tally_context *ctx, tally_type type,
                                                       const void *d_data, uint64_t n,
                                                       tally_result *d_result)
{
    State *s = cuda_state(ctx);
    if (!s) return TALLY_ERR_INVALID_ARGUMENT;
    DeviceGuard g(s->device);
    tally_op op = TALLY_SUM;
    tally_reduce_options o = {0, 0};
    return enqueue_reduce(ctx, s, "tally_cuda_bench_plain_sum_async", type, d_data, n, &op, 1, &o,
                          d_result, TCU_MASK_FASTSUM);
}

/* Benchmarks only: sets a tuning knob ("scan_wide", "reduce_waves", "reduce_minb", "pdl",
 * "reduce_ring", ...; see cuda_internal.h) for the calls that follow; returns the old value, -1
 * for an unknown name. */
TALLY_API int tally_cuda_bench_set_knob(const char *name, int value)
{
    int k = tcu_knob_index(name);
    return k < 0 ? -1 : tcu_set_knob(k, value);
}

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
