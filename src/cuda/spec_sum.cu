/* The speculative f32/f64 sum's launcher (spec_sum.cuh), its own translation unit. */
#include <cstdlib>
#include "cuda/spec_sum.cuh"

/* The loads in flight per thread (spec_sum.cuh, spec_min_blocks): 4 (on the H200 2-6% faster
 * than 2 at 2^28, f32 and f64); a tuning build reads TALLY_CUDA_SPEC_UNROLL at every call (2:
 * the variant), so that the benchmark and the tests can set it between calls. */
static int spec_unroll(void)
{
#ifdef TALLY_TUNING
    const char *e = getenv("TALLY_CUDA_SPEC_UNROLL");
    return e && *e && atoi(e) < 4 ? 2 : 4;
#else
    return 4;
#endif
}

template <typename T>
static cudaError_t launch_spec(const tcu_reduce_params *p, const tcu_device *dev, cudaStream_t stream)
{
#ifdef TALLY_TUNING
    if (spec_unroll() == 2) return tcu::launch_spec_sum_t<T, 2>(p, dev, stream);
#endif
    (void)spec_unroll;
    return tcu::launch_spec_sum_t<T, 4>(p, dev, stream);
}

cudaError_t tcu_launch_spec_sum(tally_type type, const tcu_reduce_params *p, const tcu_device *dev,
                                cudaStream_t stream)
{
    switch (type) {
    case TALLY_F32: return launch_spec<float>(p, dev, stream);
    case TALLY_F64: return launch_spec<double>(p, dev, stream);
    default: return cudaErrorInvalidValue;
    }
}
