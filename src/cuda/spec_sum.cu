/* The speculative f32/f64 sum's launcher (spec_sum.cuh), its own translation unit. */
#include "cuda/spec_sum.cuh"

cudaError_t tcu_launch_spec_sum(tally_type type, const tcu_reduce_params *p, const tcu_device *dev,
                                cudaStream_t stream)
{
    switch (type) {
    case TALLY_F32: return tcu::launch_spec_sum_t<float>(p, dev, stream);
    case TALLY_F64: return tcu::launch_spec_sum_t<double>(p, dev, stream);
    default: return cudaErrorInvalidValue;
    }
}
