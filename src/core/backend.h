/* The contract between the core (src/core) and each backend (src/cpu, src/cuda, ...).
 * The core checks every argument (NULL, op/type validity, overlap) before it calls a backend,
 * so a backend only sees valid calls. A backend fills results and returns a status; it reports
 * details with tally_set_error(ctx, ...). */
#ifndef TALLY_CORE_BACKEND_H
#define TALLY_CORE_BACKEND_H

#include "tally.h"
#include "core/exact_sum.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tally_partial; /* core/partial.h */

typedef struct tally_backend {
    tally_backend_kind kind;
    const char *name;
    /* 1 if usable on this machine (cheap after the first call; no side effects beyond that). */
    int (*available)(void);
    /* Makes the backend's per-context state. */
    tally_status (*init)(tally_context *ctx, const tally_options *opts, void **state);
    void (*fini)(void *state);
    /* n > 0 or n == 0; data valid for n elements; ops valid for type; nops >= 1. */
    tally_status (*reduce)(tally_context *ctx, void *state, tally_type type, const void *data,
                           uint64_t n, const tally_op *ops, size_t nops,
                           const tally_reduce_options *opts, tally_result *results);
    /* op in sum..xor, valid for type; out == in or no overlap. */
    tally_status (*scan)(tally_context *ctx, void *state, tally_op op, tally_type type,
                         const void *in, void *out, uint64_t n, const tally_scan_options *opts);
    /* Optional: "NVIDIA H200, 132 SMs"; may be NULL. */
    const char *(*describe)(void *state);
    /* Optional (NULL: the backend takes host memory only, copied with memcpy): copies bytes
     * between any two pointers the backend's calls accept (device or host) and waits for the
     * copy. libtally_mpi stages device data through host memory with it. */
    tally_status (*copy)(tally_context *ctx, void *state, void *dst, const void *src,
                         uint64_t bytes);
    /* Optional batched reduce (tally_reduce_segments / tally_reduce_rows); NULL: the core calls
     * reduce once per segment. offsets != NULL: segment s is elements offsets[s] ..
     * offsets[s+1]-1 (host memory, checked nondecreasing); offsets == NULL: segment s is row_len
     * elements from s * row_stride. nseg >= 1; results[s * nops + i] as reduce fills them. */
    tally_status (*reduce_segments)(tally_context *ctx, void *state, tally_type type,
                                    const void *data, const uint64_t *offsets, uint64_t nseg,
                                    uint64_t row_len, uint64_t row_stride, const tally_op *ops,
                                    size_t nops, const tally_reduce_options *opts,
                                    tally_result *results);
    /* Optional, for streams: adds n elements (global indices base .. base + n - 1) into acc,
     * which may hold earlier ones (core/partial.h). NULL: the context's streams run on a CPU
     * backend state of their own. */
    tally_status (*accumulate)(tally_context *ctx, void *state, const void *data, uint64_t n,
                               uint64_t base, struct tally_partial *acc);
    /* Optional, for libtally_mpi's variance pass: *out = the exact sum over the n elements
     * (NaNs left out with omit_nan) of (x - mean)^2, each deviation rounded to f64 and squared
     * exactly. NULL: the data are staged through a CPU backend state. */
    tally_status (*sqdev)(tally_context *ctx, void *state, tally_type type, const void *data,
                          uint64_t n, double mean, int omit_nan, tally_exact *out);
    /* Optional, for AUTO contexts (core/route.c): 1 if p is memory this backend should take
     * (its device's memory, or managed memory), 0 for host memory (pageable, mapped, pinned).
     * Cheap, and it must not start the backend when it can tell without (no device memory can
     * exist before the driver is loaded). NULL: the backend owns no pointers. */
    int (*owns)(const void *p);
} tally_backend;

/* Registered backends; NULL where not built. Defined by each backend's source. */
extern const tally_backend tally_cpu_backend;
const tally_backend *tally_cuda_backend_get(void); /* NULL when CUDA is not built */
#ifdef TALLY_HAVE_VULKAN
const tally_backend *tally_vulkan_backend_get(void);
/* 1 if a Vulkan device AUTO may pick is usable: a real GPU, never a CPU emulation (lavapipe). */
int tally_vulkan_auto_available(void);
/* The Vulkan backend as AUTO contexts use it: available() is tally_vulkan_auto_available. */
const tally_backend *tally_vulkan_auto_backend_get(void);
#endif

struct tally_context {
    const tally_backend *backend;
    void *state;
    tally_options opts;       /* as resolved: threads and isa filled in */
    char error[512];
};

/* Formats the context's detail message (printf-style) and returns status, so a caller can
 * write `return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "data is NULL")`. */
tally_status tally_set_error(tally_context *ctx, tally_status status, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
