/* Argument checks shared by the public entry points (api.c, stream.c, the backends' own entry
 * points such as tally_cuda_scan_async). Each returns TALLY_OK or
 * sets the context's message ("<fn>: <what is wrong>") and returns the status. */
#ifndef TALLY_CORE_API_CHECK_H
#define TALLY_CORE_API_CHECK_H

#include "tally.h"

#ifdef __cplusplus
extern "C" {
#endif

tally_status tally_check_type(tally_context *ctx, const char *fn, tally_type type);
tally_status tally_check_data(tally_context *ctx, const char *fn, const char *arg,
                              tally_type type, const void *data, uint64_t n);
tally_status tally_check_reduce_ops(tally_context *ctx, const char *fn, tally_type type,
                                    const tally_op *ops, size_t nops,
                                    const tally_reduce_options *opts);
/* A scan's arguments: op (a scan op that takes type), type, in and out (named in_name and
 * out_name in the messages) valid for n elements and equal or apart, and opts (NULL: an
 * inclusive scan). */
tally_status tally_check_scan(tally_context *ctx, const char *fn, tally_op op, tally_type type,
                              const char *in_name, const void *in, const char *out_name,
                              const void *out, uint64_t n, const tally_scan_options *opts);

#ifdef __cplusplus
}
#endif
#endif
