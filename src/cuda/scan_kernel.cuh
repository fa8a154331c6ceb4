/* The scan kernel (one tile per block, by tile shape) and its launchers. */
#ifndef TALLY_CUDA_SCAN_KERNEL_CUH
#define TALLY_CUDA_SCAN_KERNEL_CUH

#include "cuda/scan_lookback.cuh"

namespace tcu {

/* SHAPE (the scan_wide knob): 0 the narrow tile (about 40 registers: 6 blocks per SM); 1 the
 * wide tile (twice the vectors per thread); 2 the narrow tile held to 32 registers, so that 8
 * blocks (2048 threads) share an SM and hide each other's look-back waits (a few spills);
 * 3 the wide tile held to 64 registers, so that 4 blocks share an SM (a few spills for 8-byte
 * types; on the H200, 2026-11-29, i32 sum at 2^28, with the tile states a cache line apart:
 * 576 us against 595 for 1 and 683 for CUB; a persistent kernel that kept each block's next
 * two tiles coming into shared memory by bulk copies took 580, bench/probes/NOTES.md); 4 twice
 * the wide tile held to 128 registers, 2 blocks per SM (64 KB tiles for 4-byte types): the
 * bytes in flight per SM of 3 with half its look-backs per byte (publishing the tile's
 * aggregate before the row scans, so that the other warps scan while warp 0 looks back, was no
 * faster: bench/probes/NOTES.md); 5 (sm_90) the tile of 4 staged in shared memory by one bulk
 * copy instead of held in registers, each row read from there for the scans and again for the
 * outputs: 77 registers, 3 blocks and 192 KB on their way per SM against 128 KB (the wide tile
 * staged at 6 blocks per SM spilled at 40 registers and was slower than 4). One block per tile;
 * tcu_scan_shape picks 4 or 5 by size. */
template <int SHAPE> constexpr int scan_blocks_per_sm()
{
    return SHAPE == 2 ? 8 : SHAPE == 3 ? 4 : SHAPE == 4 ? 2 : SHAPE == 5 ? 3 : 1;
}

template <typename T, int OP, int SHAPE, bool LOOKBACK = true>
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
    scan_tile<T, OP, VPT, LOOKBACK, SMEM>(p, blockIdx.x, epoch_ld, sh, (const Vec<T> *)stage_smem);
}

template <typename T, int OP, int SHAPE> cudaError_t launch_scan_shape(const tcu_scan_params *p, cudaStream_t stream)
{
    static const bool sm90 = built_for_sm90(scan_kernel<T, OP, SHAPE>);
    size_t smem = 0;
    if constexpr (SHAPE >= 5) {
        if (!sm90) return launch_scan_shape<T, OP, 4>(p, stream); /* no bulk copies; same tile */
        smem = ScanShape<T, SHAPE>::TILE * sizeof(T);
        static const cudaError_t attr = cudaFuncSetAttribute(
            scan_kernel<T, OP, SHAPE>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (attr != cudaSuccess) return attr;
    }
    return launch_kernel(scan_kernel<T, OP, SHAPE>, (unsigned)p->ntiles, smem, stream, p->pdl && sm90, *p);
}

template <typename T, int OP>
cudaError_t launch_scan_t(const tcu_scan_params *p, cudaStream_t stream)
{
    if (p->wide == 1) return launch_scan_shape<T, OP, 1>(p, stream);
    if (p->wide == 3) return launch_scan_shape<T, OP, 3>(p, stream);
    if (p->wide == 2) return launch_scan_shape<T, OP, 2>(p, stream);
    if (p->wide == 4) return launch_scan_shape<T, OP, 4>(p, stream);
    if (p->wide == 5) return launch_scan_shape<T, OP, 5>(p, stream);
    return launch_scan_shape<T, OP, 0>(p, stream);
}

template <typename T> cudaError_t launch_scan_type(tally_op op, const tcu_scan_params *p, cudaStream_t s)
{
    switch (op) {
    case TALLY_SUM: return launch_scan_t<T, TALLY_SUM>(p, s);
    case TALLY_PROD: return launch_scan_t<T, TALLY_PROD>(p, s);
    case TALLY_MIN: return launch_scan_t<T, TALLY_MIN>(p, s);
    case TALLY_MAX: return launch_scan_t<T, TALLY_MAX>(p, s);
    default: break;
    }
    if constexpr (!Traits<T>::is_float) {
        switch (op) {
        case TALLY_AND: return launch_scan_t<T, TALLY_AND>(p, s);
        case TALLY_OR: return launch_scan_t<T, TALLY_OR>(p, s);
        case TALLY_XOR: return launch_scan_t<T, TALLY_XOR>(p, s);
        default: break;
        }
    }
    return cudaErrorInvalidValue;
}

} // namespace tcu

#endif
