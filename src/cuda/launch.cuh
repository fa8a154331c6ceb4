/* The host side of a kernel launch: the launch helper (with programmatic dependent launch,
 * sm90.cuh), whether a kernel was built for sm_90, and the per-device cache of what the
 * launchers learn about their kernels. */
#ifndef TALLY_CUDA_LAUNCH_CUH
#define TALLY_CUDA_LAUNCH_CUH

#include <atomic>
#include <cuda_runtime.h>
#include "cuda/traits.cuh"

namespace tcu {

/* Whether kernel's image for the current device was compiled for sm_90+ (its PTX target), so
 * that its PDL wait and bulk copies are really there (a build for older GPUs compiles them
 * out, and may still run on a Hopper). */
template <typename... K> bool built_for_sm90(void (*kernel)(K...))
{
    cudaFuncAttributes a;
    if (cudaFuncGetAttributes(&a, kernel) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return a.ptxVersion >= 90;
}

/* What a launcher learns about a kernel on a device (whether it was built for sm_90, that its
 * shared-memory opt-in is done, how many blocks fit per SM), found once per device and kept in
 * a static DeviceCache per kernel: these are per device (a multi-architecture build picks an
 * image per device, and cudaFuncSetAttribute applies to the current device only). Thread-safe:
 * a slot goes once from 0 (unknown) to value + 1; threads that race compute the same value
 * (the CUDA calls are idempotent) and store it alike. Devices past kMaxDevices are not kept. */
constexpr int kMaxDevices = 64;
struct DeviceCache {
    std::atomic<int> slot[kMaxDevices]; /* static storage: zero */
    /* *out := the value for device dev: compute(&value) the first time (a cudaError_t; a
     * failure is returned and not kept). */
    template <typename F> cudaError_t get(int dev, int *out, F compute)
    {
        const bool keep = dev >= 0 && dev < kMaxDevices;
        if (keep) {
            const int s = slot[dev].load(std::memory_order_acquire);
            if (s) {
                *out = s - 1;
                return cudaSuccess;
            }
        }
        int v = 0;
        const cudaError_t err = compute(&v);
        if (err != cudaSuccess) return err;
        if (keep) slot[dev].store(v + 1, std::memory_order_release);
        *out = v;
        return cudaSuccess;
    }
};

/* built_for_sm90 of every kernel given, on device dev, kept in cache. */
template <typename... Kernels> bool built_for_sm90_on(DeviceCache &cache, int dev, Kernels... kernels)
{
    int v = 0;
    cache.get(dev, &v, [&](int *out) {
        *out = (built_for_sm90(kernels) && ...) ? 1 : 0;
        return cudaSuccess;
    });
    return v != 0;
}

/* Launches kernel<<<grid, kThreads, smem, stream>>>(args...), with the PDL attribute if pdl. */
template <typename... K, typename... A>
cudaError_t launch_kernel(void (*kernel)(K...), unsigned grid, size_t smem, cudaStream_t stream,
                          bool pdl, A &&...args)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, static_cast<A &&>(args)...);
}

} // namespace tcu

#endif
