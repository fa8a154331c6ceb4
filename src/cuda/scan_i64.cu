/* Scan kernels instantiated for i64, u64. */
#include "cuda/scan_kernel.cuh"

cudaError_t tcu_launch_scan_i64(tally_op op, const tcu_scan_params *p, cudaStream_t s)
{
    return tcu::launch_scan_type<int64_t>(op, p, s);
}
cudaError_t tcu_launch_scan_u64(tally_op op, const tcu_scan_params *p, cudaStream_t s)
{
    return tcu::launch_scan_type<uint64_t>(op, p, s);
}
