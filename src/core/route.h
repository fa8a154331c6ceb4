/* AUTO contexts (route.c): a CPU backend state, a GPU backend state made the first time a call
 * needs it, and each call sent to one of them by where its data lives and what each path is
 * expected to cost. The rule, as tally.h states it:
 *
 *   - memory the GPU backend owns (device or managed memory: its owns() says so) goes to the GPU;
 *     a scan goes there when either of its pointers does;
 *   - host memory (pageable, a mapped file, pinned) goes to the CPU, unless the GPU path is
 *     predicted faster for that size: at least TALLY_ROUTE_MIN_BYTES, for an op whose bits are
 *     the same on both backends (not float products, not float sum/product scans), and
 *     start + bytes / gpu_rate < TALLY_ROUTE_MARGIN * bytes / cpu_rate, where start is the time
 *     to start the GPU backend (0 once started) and the rates are bytes of input per second:
 *     estimates at first (per CPU thread, and for the GPU's host link), each replaced by the
 *     rate a routed call of host data of at least TALLY_ROUTE_MIN_BYTES measured on that path.
 *
 * Measured rates change only where a call runs, never its result: calls whose bits could differ
 * between the backends always run on the CPU for host data. */
#ifndef TALLY_CORE_ROUTE_H
#define TALLY_CORE_ROUTE_H

#include <stdint.h>
#include "core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TALLY_ROUTE_MIN_BYTES ((uint64_t)64 << 20)
#define TALLY_ROUTE_MARGIN 0.8
/* Estimates before anything is measured. CPU: per thread (the exact sums' one-core rate on
 * the H200 host, and about half that per input byte for a scan, which also writes); GPU: the
 * host link as a PCIe 4 x16 slot gives it through pinned staging, and a scan crossing it twice;
 * start: creating a CUDA context and the backend's buffers. */
#define TALLY_ROUTE_CPU_THREAD_RATE 6e9
#define TALLY_ROUTE_CPU_THREAD_RATE_SCAN 3e9
#define TALLY_ROUTE_GPU_RATE 20e9
#define TALLY_ROUTE_GPU_RATE_SCAN 10e9
#define TALLY_ROUTE_GPU_START_S 0.3

enum { TALLY_ROUTE_REDUCE = 0, TALLY_ROUTE_SCAN = 1 };

typedef struct tally_route_model {
    double cpu_rate[2];   /* bytes of input per second, [TALLY_ROUTE_REDUCE], [TALLY_ROUTE_SCAN] */
    double gpu_rate[2];   /* the GPU path for host data (over the host link) */
    double gpu_start_s;   /* seconds to start the GPU backend while it is not started */
} tally_route_model;

/* The estimates for a CPU state of threads threads. */
void tally_route_model_init(tally_route_model *m, int threads);
/* 1 if host data of bytes bytes goes to the GPU under m (kind: TALLY_ROUTE_REDUCE or _SCAN),
 * for an op whose bits are the same on both backends. */
int tally_route_host_to_gpu(const tally_route_model *m, int kind, uint64_t bytes,
                            int gpu_started);
/* The smallest size of host data that goes to the GPU under m, or UINT64_MAX if none does. */
uint64_t tally_route_crossover(const tally_route_model *m, int kind, int gpu_started);

/* The table of AUTO contexts (kind TALLY_BACKEND_AUTO: never what tally_active_backend says). */
extern const tally_backend tally_route_backend;
/* The GPU backend AUTO contexts route to (CUDA), or NULL when none is built. */
const tally_backend *tally_route_gpu_backend(void);

/* 1 if ctx is an AUTO context. */
int tally_route_is(const tally_context *ctx);
/* For an AUTO context: the GPU backend's kind when the context can take device pointers (its
 * GPU started, or available: asking may load the driver), else TALLY_BACKEND_CPU. */
tally_backend_kind tally_route_active(const tally_context *ctx);
/* The backend of the last call routed (TALLY_BACKEND_CPU before any). */
tally_backend_kind tally_route_last(const tally_context *ctx);
/* The state of b (the routed GPU backend) in the AUTO context ctx, started if need be; NULL (and
 * ctx's message says why) when it cannot start or b is not the GPU backend. For
 * tally_cuda_*'s extras on an AUTO context. */
void *tally_route_backend_state(tally_context *ctx, const tally_backend *b);
/* The rule with this context's figures, one line (tally_auto_rule). */
const char *tally_route_rule(const tally_context *ctx);

/* The AUTO context's state over the CPU and gpu (NULL: none); context.c makes AUTO contexts
 * through this (the backend table's init takes no GPU). */
tally_status tally_route_init_with(tally_context *ctx, const tally_options *opts,
                                   const tally_backend *gpu, void **state);

/* For tests: an AUTO context over the CPU and gpu (a backend with owns()), so that the routing
 * can be tested without a GPU. Same ownership as tally_create. */
tally_status tally_route_create_with(tally_context **ctx, const tally_options *opts,
                                     const tally_backend *gpu);
/* For tests: the context's model (to set rates). */
tally_route_model *tally_route_model_of(tally_context *ctx);

#ifdef __cplusplus
}
#endif
#endif
