/* The scan kernel (one tile per block, by tile shape) and its launchers. */
#ifndef TALLY_CUDA_SCAN_KERNEL_CUH
#define TALLY_CUDA_SCAN_KERNEL_CUH

#include "cuda/launch.cuh"
#include "cuda/scan_lookback.cuh"

namespace tcu {

/* SHAPE (the scan_wide knob): 0 the narrow tile (about 40 registers: 6 blocks per SM); 1 the
 * wide tile (twice the vectors per thread); 2 the narrow tile held to 32 registers, so that 8
 * blocks (2048 threads) share an SM and hide each other's look-back waits (a few spills);
 * 3 the wide tile held to 64 registers, so that 4 blocks share an SM (a few spills for 8-byte
 * types); 4 twice the wide tile held to 128 registers, 2 blocks per SM (64 KB tiles for 4-byte
 * types): the bytes in flight per SM of 3 with half its look-backs per byte; 5 (sm_90) the
 * tile of 4 staged in shared memory by one bulk copy instead of held in registers, each row
 * read from there for the scans and again for the outputs: 77 registers, 3 blocks and 192 KB
 * on their way per SM against 128 KB. One block per tile; tcu_scan_shape picks 4 or 5 by size
 * (docs/performance.md, "scan tile shapes", has what each shape measured). */
template <int SHAPE> constexpr int scan_blocks_per_sm()
{
    return SHAPE == 2 ? 8 : SHAPE == 3 ? 4 : SHAPE == 4 ? 2 : SHAPE == 5 ? 3 : 1;
}

template <typename T, int OP, int SHAPE>
__global__ void __launch_bounds__(kThreads, scan_blocks_per_sm<SHAPE>()) scan_kernel(const tcu_scan_params p)
{
    using W = typename ScanW<T>::type;
    constexpr bool SMEM = SHAPE >= 5;
    constexpr int VPT = ScanShape<T, SHAPE>::VPT;
    __shared__ TileShared<W, ordered_fold<T, OP>()> sh;
    __shared__ uint64_t staged; /* SMEM: the bulk copy's barrier */
    extern __shared__ __align__(128) unsigned char stage_smem[];
    /* Tiles in block order: blocks are dispatched in increasing index, so a tile only waits on
     * tiles already running (as CUB assumes); an atomic ticket would cost a round trip. The
     * epoch's load is issued now and used after the data loads. */
    uint32_t epoch_ld = 0;
    if constexpr (SMEM) {
        if (threadIdx.x == 0) mbar_init(&staged, 1);
        __syncthreads();
    }
    pdl_wait(); /* the kernel before this one (PDL) has finished */
    pdl_trigger();
    if constexpr (SMEM) {
        constexpr uint64_t TILE = ScanShape<T, SHAPE>::TILE;
        const uint64_t pos = blockIdx.x * TILE;
        const bool full = pos >= p.head && pos + TILE <= p.head + p.n;
        if (full && threadIdx.x == 0)
            bulk_load(stage_smem, (const T *)p.in + (pos - p.head), (unsigned)(TILE * sizeof(T)), &staged);
        if (threadIdx.x == 0) epoch_ld = ((volatile unsigned int *)p.sync)[2] & 0x3fffffffu;
        if (full) mbar_wait(&staged, 0);
    } else {
        if (threadIdx.x == 0) epoch_ld = ((volatile unsigned int *)p.sync)[2] & 0x3fffffffu;
    }
    scan_tile<T, OP, VPT, SMEM>(p, blockIdx.x, epoch_ld, sh, (const Vec<T> *)stage_smem);
}

template <typename T, int OP, int SHAPE>
cudaError_t launch_scan_shape(const tcu_scan_params *p, const tcu_device *dev, cudaStream_t stream)
{
    auto *const kernel = scan_kernel<T, OP, SHAPE>;
    /* per device: built for sm_90; shape 5's shared memory granted */
    static DeviceCache sm90_cache, smem_cache;
    const bool sm90 = built_for_sm90_on(sm90_cache, dev->ordinal, kernel);
    size_t smem = 0;
    if constexpr (SHAPE >= 5) {
        if (!sm90) return launch_scan_shape<T, OP, 4>(p, dev, stream); /* no bulk copies; same tile */
        smem = ScanShape<T, SHAPE>::TILE * sizeof(T);
        int done = 0;
        const cudaError_t err = smem_cache.get(dev->ordinal, &done, [&](int *out) {
            *out = 1;
            return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        });
        if (err != cudaSuccess) return err;
    }
    return launch_kernel(kernel, (unsigned)p->ntiles, smem, stream, p->pdl && sm90, *p);
}

/* The kernel of tile shape p->wide: the default build instantiates only the shapes that
 * tcu_scan_shape picks without a knob (4, and 5 on sm_90), a tuning build every one. */
template <typename T, int OP>
cudaError_t launch_scan_t(const tcu_scan_params *p, const tcu_device *d, cudaStream_t stream)
{
    switch (p->wide) {
    case 5: return launch_scan_shape<T, OP, 5>(p, d, stream);
#ifdef TALLY_TUNING
    case 0: return launch_scan_shape<T, OP, 0>(p, d, stream);
    case 1: return launch_scan_shape<T, OP, 1>(p, d, stream);
    case 2: return launch_scan_shape<T, OP, 2>(p, d, stream);
    case 3: return launch_scan_shape<T, OP, 3>(p, d, stream);
#endif
    default: return launch_scan_shape<T, OP, 4>(p, d, stream);
    }
}

/* The kernel of op: every scan op of the op table that takes T. */
template <typename T> cudaError_t launch_scan_type(tally_op op, const tcu_scan_params *p, const tcu_device *d,
                                                   cudaStream_t s)
{
    switch (op) {
#define TCU_SCAN_CASE(E, name, scan_ok, float_ok, result, needs, identity)                          \
    case TALLY_##E:                                                                                 \
        if constexpr (float_ok || !Traits<T>::is_float) return launch_scan_t<T, TALLY_##E>(p, d, s); \
        break;
        TALLY_SCAN_OPS(TCU_SCAN_CASE)
#undef TCU_SCAN_CASE
    default: break;
    }
    return cudaErrorInvalidValue;
}

} // namespace tcu

/* The scan launcher of one type, tcu_launch_scan_<name> (cuda_internal.h): what each generated
 * translation unit (scan_type.cu.in) defines. */
#define TCU_DEFINE_SCAN_LAUNCHER(name, C)                                                        \
    cudaError_t tcu_launch_scan_##name(tally_op op, const tcu_scan_params *p, const tcu_device *d, \
                                       cudaStream_t s)                                           \
    {                                                                                            \
        return tcu::launch_scan_type<C>(op, p, d, s);                                            \
    }

#endif
