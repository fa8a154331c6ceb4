/* Reduce kernels instantiated for i16, u16 (one file per type pair so that builds run in parallel). */
#include "cuda/reduce_launch.cuh"

cudaError_t tcu_launch_reduce_i16(unsigned mask, int omit_nan, const tcu_reduce_params *p, int sm,
                                  cudaStream_t s)
{
    return tcu::launch_reduce_type<int16_t>(mask, omit_nan, p, sm, s);
}
cudaError_t tcu_launch_reduce_u16(unsigned mask, int omit_nan, const tcu_reduce_params *p, int sm,
                                  cudaStream_t s)
{
    return tcu::launch_reduce_type<uint16_t>(mask, omit_nan, p, sm, s);
}
