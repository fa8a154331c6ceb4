/* What libtally exports beyond tally.h, for libtally_mpi (and tests) only: partial states of a
 * context's data, on any backend, and the pieces to merge them and turn them into results.
 *
 * Not a public API: not installed, no stability promise between versions (libtally_mpi is
 * built from the same tree as the libtally it links). The symbols are exported from the shared
 * library (TALLY_API) so that libtally_mpi can link libtally itself rather than a copy of its
 * objects: a context must be served by the one copy of the backends that created it. */
#ifndef TALLY_CORE_INTERNAL_H
#define TALLY_CORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "tally.h"
#include "core/partial.h"
#include "core/partial_codec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- partial states (core/partial.h) ------------------------------------------------------ */
TALLY_API uint32_t tally_internal_ops_need(tally_type type, const tally_op *ops, size_t nops,
                                           int omit_nan);
TALLY_API void tally_internal_partial_init(tally_partial *p, tally_type type, uint32_t need,
                                           int omit_nan);
/* dst := dst followed by src, where src's indices (argmin/argmax, first NaN) count from src's
 * own first element: they are moved by dst->n here. Float products are left alone (they do not
 * merge: see partial.h). */
TALLY_API void tally_internal_partial_append(tally_partial *dst, const tally_partial *src);
TALLY_API tally_status tally_internal_partial_result(const tally_partial *p, tally_op op,
                                                     int ddof, const tally_exact *sqdev,
                                                     tally_result *r);
TALLY_API double tally_internal_partial_mean(const tally_partial *p, tally_status *status);
/* The float product a state holds, as tally_reduce gives it for the same elements. */
TALLY_API double tally_internal_partial_fprod(const tally_partial *p);

/* ---- argument checks, with the messages of tally.h's functions under the caller's name ------ */
TALLY_API tally_status tally_internal_check_reduce(tally_context *ctx, const char *fn,
                                                   tally_type type, const void *data, uint64_t n,
                                                   const tally_op *ops, size_t nops,
                                                   const tally_reduce_options *opts);
TALLY_API tally_status tally_internal_check_scan(tally_context *ctx, const char *fn, tally_op op,
                                                 tally_type type, const void *in,
                                                 const void *out, uint64_t n,
                                                 const tally_scan_options *opts);
TALLY_API tally_status tally_internal_set_error(tally_context *ctx, tally_status status,
                                                const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- a context's data --------------------------------------------------------------------- *
 * data/in/out are what the context's calls accept (host memory on the CPU; device or host
 * memory on CUDA). A CPU context works in place with its own threads; any other backend's data
 * is copied to host memory in pieces (TALLY_INTERNAL_STAGE_BYTES) and reduced there by a CPU
 * state made for the call, since only the CPU code keeps partial states today. */
#define TALLY_INTERNAL_STAGE_BYTES ((uint64_t)32 << 20)

/* Adds n elements to acc (their indices follow acc's: base acc->n). Float products continue
 * acc's open block. */
TALLY_API tally_status tally_internal_accumulate(tally_context *ctx, const void *data, uint64_t n,
                                                 tally_partial *acc);
/* The variance pass: *out = exact sum of (x - mean)^2 over the n elements, each deviation
 * rounded to f64 (NaNs left out with omit_nan), as tally_reduce's TALLY_VAR forms it. */
TALLY_API tally_status tally_internal_sqdev(tally_context *ctx, tally_type type, const void *data,
                                            uint64_t n, double mean, int omit_nan,
                                            tally_exact *out);
/* The backend's scan without the public checks (the caller has made them), except that
 * opts->has_init is honoured by an inclusive scan too, as the carry into its first element:
 * out[i] = init op (x0 op .. op xi) by the backend's rule. Backends that cannot take a carry
 * into an inclusive scan return TALLY_ERR_UNSUPPORTED before touching out. */
TALLY_API tally_status tally_internal_scan(tally_context *ctx, tally_op op, tally_type type,
                                           const void *in, void *out, uint64_t n,
                                           const tally_scan_options *opts);
/* Copies bytes between host memory and memory the context's calls accept (either way) and
 * waits for the copy. */
TALLY_API tally_status tally_internal_copy(tally_context *ctx, void *dst, const void *src,
                                           uint64_t bytes);

#ifdef __cplusplus
}
#endif
#endif
