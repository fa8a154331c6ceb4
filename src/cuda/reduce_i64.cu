/* Reduce kernels instantiated for i64, u64 (one file per type pair so that builds run in parallel). */
#include "cuda/reduce_launch.cuh"

cudaError_t tcu_launch_reduce_i64(unsigned mask, int omit_nan, const tcu_reduce_params *p, int sm,
                                  cudaStream_t s)
{
    return tcu::launch_reduce_type<int64_t>(mask, omit_nan, p, sm, s);
}
cudaError_t tcu_launch_reduce_u64(unsigned mask, int omit_nan, const tcu_reduce_params *p, int sm,
                                  cudaStream_t s)
{
    return tcu::launch_reduce_type<uint64_t>(mask, omit_nan, p, sm, s);
}
