/* Reduce kernels instantiated for i8, u8 (one file per type pair so that builds run in parallel). */
#include "cuda/reduce_launch.cuh"

cudaError_t tcu_launch_reduce_i8(unsigned mask, int omit_nan, const tcu_reduce_params *p, int sm,
                                  cudaStream_t s)
{
    return tcu::launch_reduce_type<int8_t>(mask, omit_nan, p, sm, s);
}
cudaError_t tcu_launch_reduce_u8(unsigned mask, int omit_nan, const tcu_reduce_params *p, int sm,
                                  cudaStream_t s)
{
    return tcu::launch_reduce_type<uint8_t>(mask, omit_nan, p, sm, s);
}
