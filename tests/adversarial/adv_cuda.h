/* The harness's CUDA side (adv_cuda.cu when the CUDA backend is built, adv_nocuda.c otherwise):
 * device memory for the arrays and results, so that the CUDA backend is checked on device
 * pointers and through its asynchronous entry point, not only on host data. */
#ifndef TALLY_ADV_CUDA_H
#define TALLY_ADV_CUDA_H

#include <stddef.h>
#include "tally.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if this build has the CUDA backend (a GPU may still be missing). */
int adv_cuda_built(void);
/* Copies bytes of host data to a device buffer owned by the harness (grown as needed; one at a
 * time) and returns its device address, or NULL on failure. */
const void *adv_cuda_upload(const void *host, size_t bytes);
/* tally_cuda_reduce_async into device-resident results, then a synchronisation and the copy
 * back to results (host). Returns the call's status, or the first result's failure. */
tally_status adv_cuda_reduce_async(tally_context *ctx, tally_type t, const void *d_data,
                                   uint64_t n, const tally_op *ops, size_t nops,
                                   const tally_reduce_options *opts, tally_result *results);
void adv_cuda_release(void);

#ifdef __cplusplus
}
#endif
#endif
