/* The one switch from a runtime feature mask and omit_nan to a kernel instantiation, shared by
 * the reduce (reduce_launch.cuh) and the segmented reduce (segments_kernel.cuh) launchers. */
#ifndef TALLY_CUDA_MASK_DISPATCH_CUH
#define TALLY_CUDA_MASK_DISPATCH_CUH

#include <type_traits>
#include <cuda_runtime.h>
#include "cuda/cuda_internal.h"
#include "cuda/traits.cuh"

namespace tcu {

template <unsigned M> using MaskC = std::integral_constant<unsigned, M>;
template <bool OMIT> using OmitC = std::integral_constant<bool, OMIT>;

/* Returns f(MaskC<M>{}, OmitC<OMIT>{}) for the kernel of mask (one of the TCU_MASK_*; anything
 * else runs the ALL kernel) and omit_nan (floats only: an integer kernel has no NaN to omit, so
 * none is built with OMIT). FASTSUM: TCU_MASK_FASTSUM has a kernel of its own (the benchmarks'
 * plain f64 sum, tuning builds only; integers run the SUM kernel for it); without it, it runs
 * the ALL kernel like any other mask. */
template <typename T, bool FASTSUM = false, typename F>
cudaError_t dispatch_mask(unsigned mask, int omit_nan, F &&f)
{
    auto by_mask = [&](auto omit) -> cudaError_t {
        switch (mask) {
        case TCU_MASK_SUM: return f(MaskC<TCU_MASK_SUM>{}, omit);
        case TCU_MASK_MIN: return f(MaskC<TCU_MASK_MIN>{}, omit);
        case TCU_MASK_MAX: return f(MaskC<TCU_MASK_MAX>{}, omit);
        case TCU_MASK_SMM: return f(MaskC<TCU_MASK_SMM>{}, omit);
        case TCU_MASK_ARGMIN: return f(MaskC<TCU_MASK_ARGMIN>{}, omit);
        case TCU_MASK_ARGMAX: return f(MaskC<TCU_MASK_ARGMAX>{}, omit);
        case TCU_MASK_SQDEV: return f(MaskC<TCU_MASK_SQDEV>{}, omit);
        default: break;
        }
        if constexpr (FASTSUM) {
            if (mask == TCU_MASK_FASTSUM) {
                if constexpr (Traits<T>::is_float) return f(MaskC<TCU_MASK_FASTSUM>{}, omit);
                return f(MaskC<TCU_MASK_SUM>{}, omit);
            }
        }
        return f(MaskC<TCU_MASK_ALL>{}, omit);
    };
    if constexpr (Traits<T>::is_float) {
        if (omit_nan) return by_mask(OmitC<true>{});
    }
    return by_mask(OmitC<false>{});
}

} // namespace tcu

#endif
