/* Scan kernels instantiated for f32. */
#include "cuda/scan_kernel.cuh"

cudaError_t tcu_launch_scan_f32(tally_op op, const tcu_scan_params *p, cudaStream_t s)
{
    return tcu::launch_scan_type<float>(op, p, s);
}
