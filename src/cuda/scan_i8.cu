/* Scan kernels instantiated for i8, u8. */
#include "cuda/scan_kernel.cuh"

cudaError_t tcu_launch_scan_i8(tally_op op, const tcu_scan_params *p, cudaStream_t s)
{
    return tcu::launch_scan_type<int8_t>(op, p, s);
}
cudaError_t tcu_launch_scan_u8(tally_op op, const tcu_scan_params *p, cudaStream_t s)
{
    return tcu::launch_scan_type<uint8_t>(op, p, s);
}
