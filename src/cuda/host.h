/* The CUDA backend's host state and the helpers shared by its two halves: cuda_backend.cu
 * (the backend table: contexts, tally_reduce, tally_scan) and cuda_api.cu (tally_cuda.h's
 * extras). Not installed. */
#ifndef TALLY_CUDA_HOST_H
#define TALLY_CUDA_HOST_H

#include <cstddef>
#include <cuda_runtime.h>
#include "tally.h"
#include "tally_cuda.h"
#include "core/api_check.h"
#include "core/backend.h"
#include "core/exact_sum.h"
#include "cuda/cuda_internal.h"

namespace tcu_host {

/* A CUDA context's state: its device, streams and the scratch its launches use. */
struct State {
    int device;
    tcu_device dev; /* device and its SM count, for the launchers */
    char desc[192];
    cudaStream_t own_stream;
    cudaStream_t stream;
    void *partials;            /* TCU_MAX_BLOCKS * TCU_PARTIAL_BYTES */
    long long *xpartials;      /* TCU_MAX_BLOCKS * TALLY_EXACT_CHUNKS */
    unsigned int *counter;     /* reduce ticket; then the packed integer sum, the max and min words */
    tcu_aux *aux;
    unsigned int *spec;        /* the speculative sum's ticket and answer flag (cuda_internal.h) */
    unsigned int *hint;        /* mapped pinned host memory, [0] f32 [1] f64: TCU_HINT_* of the
                                  last adaptive sum of that type (written by the GPU) */
    struct {
        unsigned wait, gap;    /* spec_plan's probes: pass-first calls left before the next, and
                                  what wait is set to after it */
    } adapt[2];
    tally_result *h_results;   /* mapped pinned host memory: TCU_MAX_OPS results */
    unsigned int *scan_sync;   /* [2]: the scan epoch */
    void *scan_status;
    size_t scan_status_bytes;
    void *staging;             /* device copy of host data (grown as needed) */
    size_t staging_bytes;
    void *seg_scratch;         /* segments.cu: results, means and offsets of a batch (grown) */
    size_t seg_scratch_bytes;
    struct Stager *stager;     /* host_stage.cu: workers and pinned buffers, made on first use */
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

/* Sets the context's message for a failed CUDA call and returns the status. */
tally_status cuda_fail(tally_context *ctx, cudaError_t err, const char *fn, const char *what);

#define TCU_TRY(ctx, fn, call)                                                                 \
    do {                                                                                       \
        cudaError_t err_ = (call);                                                             \
        if (err_ != cudaSuccess) return tcu_host::cuda_fail((ctx), err_, (fn), #call);         \
    } while (0)

/* The context's CUDA state, or NULL when ctx is not a CUDA context. */
State *cuda_state(tally_context *ctx);
/* 1 if the GPU can read p (device, managed or registered host memory; *dev: the pointer to
 * use there), 0 for plain host memory. */
int device_accessible(const void *p, const void **dev);
/* 1 if the kernels read the bytes at p where they are (device or managed memory, or a small
 * pinned buffer read through its mapping; *dev: the pointer to use there); 0 for host memory
 * to be copied to the device first. */
int read_in_place(const void *p, size_t bytes, const void **dev);
/* Host memory to be staged: into the context's staging buffer, grown to bytes if need be. */
tally_status ensure_staging(tally_context *ctx, State *s, size_t bytes, const char *fn);
/* ops[0..nops) without repeats, in first-seen order, into uniq (TALLY_OP_COUNT slots); their
 * count. The kernels compute each op once; the caller spreads the results back. */
size_t unique_ops(const tally_op *ops, size_t nops, tally_op *uniq);
/* The kernel mask (TCU_MASK_*) that covers ops; *has_var: a variance pass follows. */
unsigned ops_mask(const tally_op *ops, size_t nops, int *has_var);
/* The backend's reduce_segments hook (segments.cu; core/backend.h). */
tally_status cuda_reduce_segments(tally_context *ctx, void *state, tally_type type,
                                  const void *data, const uint64_t *offsets, uint64_t nseg,
                                  uint64_t row_len, uint64_t row_stride, const tally_op *ops,
                                  size_t nops, const tally_reduce_options *opts,
                                  tally_result *results);
/* ---- host data (host_stage.cu) ------------------------------------------------------------
 * Pageable host data (malloc'd, a mapped file) of TCU_STAGE_MIN_BYTES or more crosses the link
 * through a team of stage_workers() threads, each with two pinned buffers of TCU_STAGE_CHUNK
 * bytes and a stream; pinned host data is copied by DMA directly. Pinned inputs under
 * TCU_PIN_DMA_MIN bytes are read in place by the kernels (mapped memory). */
#define TCU_STAGE_CHUNK ((size_t)8 << 20)
#define TCU_STAGE_MAX_WORKERS 8
#define TCU_STAGE_MIN_BYTES ((size_t)4 << 20)
#define TCU_PIN_DMA_MIN ((size_t)1 << 20)

enum HostKind { HOST_PAGEABLE = 0, HOST_PINNED = 1, HOST_DEVICE = 2 /* or managed */ };
/* Where p lives (cudaPointerGetAttributes). */
HostKind host_kind(const void *p);
/* Copies bytes of host memory (any kind) to device memory d_dst, ordered before the work
 * enqueued on the context's stream after it; returns once the copies are queued or done. */
tally_status stage_h2d(tally_context *ctx, State *s, void *d_dst, const void *h_src, size_t bytes,
                       const char *fn);
/* Copies bytes of device memory to host memory (any kind) after the work queued on the
 * context's stream so far; returns when h_dst holds them. */
tally_status stage_d2h(tally_context *ctx, State *s, void *h_dst, const void *d_src, size_t bytes,
                       const char *fn);
/* Stops the workers and frees the pinned buffers (the state's fini). */
void stage_free(State *s);
/* Workers a context's stager runs: half the cores, 2 .. TCU_STAGE_MAX_WORKERS. */
int stage_workers(void);
/* 1 if p is device or managed memory, decided without starting CUDA when the driver is not
 * loaded in the process (then no device memory exists): the backend's owns() for AUTO. */
int cuda_owns(const void *p);

/* Tile-state scratch for ntiles slots of type (grown outside graph capture only). */
tally_status ensure_scan_status(tally_context *ctx, State *s, tally_type type, uint64_t ntiles,
                                const char *fn);
/* Enqueues the reduce kernels on the context's stream (one, or two with a variance); results
 * go to out[i] for ops[i]. force_mask: a kernel mask other than the ops' (the benchmark's). */
tally_status enqueue_reduce(tally_context *ctx, State *s, const char *fn, tally_type type,
                            const void *ddata, uint64_t n, const tally_op *ops, size_t nops,
                            const tally_reduce_options *opts, tally_result *out,
                            unsigned force_mask = 0);
/* Enqueues the scan kernel on the context's stream. */
tally_status enqueue_scan(tally_context *ctx, State *s, const char *fn, tally_op op,
                          tally_type type, const void *din, void *dout, uint64_t n,
                          const tally_scan_options *opts);

} // namespace tcu_host

#endif
