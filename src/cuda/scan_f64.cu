/* Scan kernels instantiated for f64. */
#include "cuda/scan_kernel.cuh"

cudaError_t tcu_launch_scan_f64(tally_op op, const tcu_scan_params *p, cudaStream_t s)
{
    return tcu::launch_scan_type<double>(op, p, s);
}
