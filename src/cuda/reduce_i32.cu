/* Reduce kernels instantiated for i32, u32 (one file per type pair so that builds run in parallel). */
#include "cuda/reduce_launch.cuh"

cudaError_t tcu_launch_reduce_i32(unsigned mask, int omit_nan, const tcu_reduce_params *p, int sm,
                                  cudaStream_t s)
{
    return tcu::launch_reduce_type<int32_t>(mask, omit_nan, p, sm, s);
}
cudaError_t tcu_launch_reduce_u32(unsigned mask, int omit_nan, const tcu_reduce_params *p, int sm,
                                  cudaStream_t s)
{
    return tcu::launch_reduce_type<uint32_t>(mask, omit_nan, p, sm, s);
}
