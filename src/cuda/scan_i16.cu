/* Scan kernels instantiated for i16, u16. */
#include "cuda/scan_kernel.cuh"

cudaError_t tcu_launch_scan_i16(tally_op op, const tcu_scan_params *p, cudaStream_t s)
{
    return tcu::launch_scan_type<int16_t>(op, p, s);
}
cudaError_t tcu_launch_scan_u16(tally_op op, const tcu_scan_params *p, cudaStream_t s)
{
    return tcu::launch_scan_type<uint16_t>(op, p, s);
}
