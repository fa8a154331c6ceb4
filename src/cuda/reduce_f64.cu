/* Reduce kernels instantiated for f64 (one file per type pair so that builds run in parallel). */
#include "cuda/reduce_launch.cuh"

cudaError_t tcu_launch_reduce_f64(unsigned mask, int omit_nan, const tcu_reduce_params *p, int sm,
                                  cudaStream_t s)
{
    return tcu::launch_reduce_type<double>(mask, omit_nan, p, sm, s);
}
