/* tally_cuda.h: what a CUDA context offers beyond tally.h. Plain C; no CUDA header needed
 * (streams travel as void *, which is what a cudaStream_t is).
 *
 * On a CUDA context (tally_create with TALLY_BACKEND_CUDA, or AUTO on a machine with a GPU):
 *   - tally_reduce / tally_reduce_many / tally_scan accept device pointers (cudaMalloc, managed,
 *     or mapped pinned host memory) and plain host pointers; host pointers are copied through
 *     device memory (a convenience: correct, but it costs the PCIe transfer). They run on the
 *     context's stream and return when the work is done; reduce results land in host memory.
 *   - The _async functions below only enqueue work on the context's stream: no host
 *     synchronisation, no allocation (after tally_cuda_reserve), so they can be captured in a
 *     CUDA graph. Their pointers must all be device-accessible.
 *   - Results are bit for bit those of the CPU backend, except float products and float scans,
 *     which are deterministic (the same bits every run on the same GPU model) but may round
 *     differently.
 * A context holds one set of scratch buffers: calls on one context run one after the other on
 * its stream. For concurrent streams, create one context per stream.
 * On sm_90+ GPUs tally's kernels use programmatic dependent launch: each waits for the kernel
 * before it in the stream to finish before touching memory, and lets the next kernel start its
 * set-up early. That changes nothing for ordinary launches; a kernel of yours that you launch
 * after tally's with the PDL attribute must call cudaGridDependencySynchronize() before reading
 * tally's results, as PDL requires. (Only a benchmarking build turns it off: TALLY_CUDA_PDL=0,
 * docs/tuning.md.)
 * The functions fail with TALLY_ERR_INVALID_ARGUMENT on a context that is not a CUDA one. */
#ifndef TALLY_CUDA_H
#define TALLY_CUDA_H

#include "tally.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Work of this context runs on stream (a cudaStream_t of the context's device) from now on;
 * NULL returns to the context's own stream (a blocking one: ordered after work on the legacy
 * default stream). The context does not own stream:
 * keep it alive until the context is destroyed or another stream is set. */
TALLY_API tally_status tally_cuda_set_stream(tally_context *ctx, void *stream);
/* The stream the context's work runs on (its own unless one was set); NULL if not CUDA. */
TALLY_API void *tally_cuda_stream(const tally_context *ctx);
/* The CUDA device ordinal of the context; -1 if not CUDA. */
TALLY_API int tally_cuda_device(const tally_context *ctx);

/* Enqueues tally_reduce_many on the context's stream and returns at once. d_results: nops
 * tally_result in device-accessible memory, written when the stream reaches this work; each
 * one's status field says whether it succeeded (EMPTY, OVERFLOW, DOMAIN as in tally.h).
 * nops <= 32. The return value covers argument errors and launch failures only. */
TALLY_API tally_status tally_cuda_reduce_async(tally_context *ctx, tally_type type,
                                               const void *d_data, uint64_t n,
                                               const tally_op *ops, size_t nops,
                                               const tally_reduce_options *opts,
                                               tally_result *d_results);

/* Enqueues tally_scan on the context's stream and returns at once (d_out == d_in allowed). */
TALLY_API tally_status tally_cuda_scan_async(tally_context *ctx, tally_op op, tally_type type,
                                             const void *d_in, void *d_out, uint64_t n,
                                             const tally_scan_options *opts);

/* Sizes the context's scratch for scans of up to n elements of type, so that later _async
 * calls allocate nothing (needed before capturing them in a graph). */
TALLY_API tally_status tally_cuda_reserve(tally_context *ctx, tally_type type, uint64_t n);

/* Waits for the context's stream. */
TALLY_API tally_status tally_cuda_synchronize(tally_context *ctx);

#ifdef __cplusplus
}
#endif
#endif /* TALLY_CUDA_H */
