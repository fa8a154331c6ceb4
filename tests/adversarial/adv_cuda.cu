/* The harness's CUDA side: device copies of the arrays, and the asynchronous reduce with its
 * results in device memory. */
#include <cuda_runtime.h>
#include "adv_cuda.h"
#include "tally_cuda.h"

namespace {
void *g_buf = nullptr;
size_t g_bytes = 0;
tally_result *g_results = nullptr;
} // namespace

extern "C" int adv_cuda_built(void) { return 1; }

extern "C" const void *adv_cuda_upload(const void *host, size_t bytes)
{
    if (bytes == 0) bytes = 1;
    if (bytes > g_bytes) {
        cudaFree(g_buf);
        g_buf = nullptr;
        g_bytes = 0;
        if (cudaMalloc(&g_buf, bytes) != cudaSuccess) {
            cudaGetLastError();
            return nullptr;
        }
        g_bytes = bytes;
    }
    if (cudaMemcpy(g_buf, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return g_buf;
}

extern "C" tally_status adv_cuda_reduce_async(tally_context *ctx, tally_type t, const void *d_data,
                                              uint64_t n, const tally_op *ops, size_t nops,
                                              const tally_reduce_options *opts, tally_result *results)
{
    if (!g_results && cudaMalloc((void **)&g_results, 32 * sizeof(tally_result)) != cudaSuccess) {
        cudaGetLastError();
        return TALLY_ERR_OUT_OF_MEMORY;
    }
    cudaMemset(g_results, 0xa5, 32 * sizeof(tally_result)); /* poison: every result must be written */
    tally_status s = tally_cuda_reduce_async(ctx, t, d_data, n, ops, nops, opts, g_results);
    if (s != TALLY_OK) return s;
    s = tally_cuda_synchronize(ctx);
    if (s != TALLY_OK) return s;
    if (cudaMemcpy(results, g_results, nops * sizeof(tally_result), cudaMemcpyDeviceToHost) != cudaSuccess) {
        cudaGetLastError();
        return TALLY_ERR_BACKEND_FAILURE;
    }
    for (size_t i = 0; i < nops; i++)
        if (results[i].status != TALLY_OK) return results[i].status;
    return TALLY_OK;
}

extern "C" void adv_cuda_release(void)
{
    cudaFree(g_buf);
    cudaFree(g_results);
    g_buf = nullptr;
    g_results = nullptr;
    g_bytes = 0;
}
