/* Hopper (sm_90) features the kernels use, compiled out for older targets: programmatic
 * dependent launch, bulk copies into shared memory and their mbarriers, and L2 cache policies.
 * The host side (the launch attribute, whether a kernel has them): launch.cuh. */
#ifndef TALLY_CUDA_SM90_CUH
#define TALLY_CUDA_SM90_CUH

#include <cstdint>
#include <cuda_runtime.h>
#include "cuda/traits.cuh"

namespace tcu {

/* ---- programmatic dependent launch (sm_90+) ------------------------------------------------
 * A kernel launched with the PDL attribute may start while the kernel before it in the stream
 * is still finishing. pdl_wait() returns once that kernel has completed and its writes are
 * visible: every kernel calls it before its first access to global memory, so the overlap
 * covers only the launch and the block set-up. pdl_trigger() lets the next kernel start its
 * set-up (it takes effect once every block of this grid has called it or exited). Both are
 * no-ops when the launch had no PDL attribute. */
__device__ __forceinline__ void pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_trigger()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* ---- bulk copies into shared memory (sm_90+): the reduce's staging ring ------------------- */
__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

/* A bulk load's first half: the proxy fence, and the barrier told to expect bytes. */
__device__ __forceinline__ void bulk_expect(uint64_t *bar, unsigned bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes)
                 : "memory");
#endif
}

/* One thread: copies bytes (a multiple of 16, both addresses 16-byte aligned) from global src
 * to shared dst; the barrier's current phase completes when they have landed. Shared memory
 * that the block read before (generic proxy) is ordered before the copy's writes (async proxy)
 * by the caller's __syncthreads() and the proxy fence here. */
__device__ __forceinline__ void bulk_load(void *dst, const void *src, unsigned bytes, uint64_t *bar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    bulk_expect(bar, bytes);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
#endif
}

/* An L2 policy that evicts first what is loaded under it: for data read once, so that a long
 * stream does not push out of L2 what the kernel reads at its end (its own code and the blocks'
 * partials, which would otherwise come back from memory and lengthen the last block). */
__device__ __forceinline__ uint64_t l2_evict_first_policy()
{
    uint64_t pol = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
#endif
    return pol;
}

/* bulk_load under an L2 policy (l2_evict_first_policy). */
__device__ __forceinline__ void bulk_load_hint(void *dst, const void *src, unsigned bytes, uint64_t *bar,
                                               uint64_t pol)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    bulk_expect(bar, bytes);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
                     smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar)), "l"(pol)
                 : "memory");
#endif
}

/* Waits until the barrier's phase with the given parity has completed. */
__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t done = 0;
    while (!done) {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(smem_u32(bar)), "r"(parity)
                     : "memory");
    }
#endif
}

} // namespace tcu

#endif
