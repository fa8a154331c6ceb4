/* The CPU backend's batched reduce (core/backend.h: reduce_segments). */
#ifndef TALLY_CPU_BATCH_H
#define TALLY_CPU_BATCH_H

#include "core/backend.h"

tally_status tally_cpu_reduce_segments(tally_context *ctx, void *state, tally_type type,
                                       const void *data, const uint64_t *offsets, uint64_t nseg,
                                       uint64_t row_len, uint64_t row_stride, const tally_op *ops,
                                       size_t nops, const tally_reduce_options *opts,
                                       tally_result *results);

#endif
