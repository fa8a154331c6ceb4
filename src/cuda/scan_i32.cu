/* Scan kernels instantiated for i32, u32. */
#include "cuda/scan_kernel.cuh"

cudaError_t tcu_launch_scan_i32(tally_op op, const tcu_scan_params *p, cudaStream_t s)
{
    return tcu::launch_scan_type<int32_t>(op, p, s);
}
cudaError_t tcu_launch_scan_u32(tally_op op, const tcu_scan_params *p, cudaStream_t s)
{
    return tcu::launch_scan_type<uint32_t>(op, p, s);
}
