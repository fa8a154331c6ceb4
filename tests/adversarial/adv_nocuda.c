/* Without the CUDA backend: the harness's CUDA side reports itself absent. */
#include "adv_cuda.h"

int adv_cuda_built(void) { return 0; }
const void *adv_cuda_upload(const void *host, size_t bytes)
{
    (void)host;
    (void)bytes;
    return NULL;
}
tally_status adv_cuda_reduce_async(tally_context *ctx, tally_type t, const void *d_data,
                                   uint64_t n, const tally_op *ops, size_t nops,
                                   const tally_reduce_options *opts, tally_result *results)
{
    (void)ctx, (void)t, (void)d_data, (void)n, (void)ops, (void)nops, (void)opts, (void)results;
    return TALLY_ERR_BACKEND_UNAVAILABLE;
}
void adv_cuda_release(void) {}
