/* The switches from a runtime type to the per-type launchers (one row of the type table each),
 * and the scan's geometry (its tile shape and tile state for a size). */
#include "cuda/cuda_internal.h"
#include "cuda/scan_lookback.cuh"
#include "cuda/segments.h"

cudaError_t tcu_launch_reduce(tally_type type, unsigned mask, int omit_nan,
                              const tcu_reduce_params *p, const tcu_device *dev, cudaStream_t stream)
{
    switch (type) {
#define X(E, name, C, is_int, is_signed, W)                                                      \
    case TALLY_##E: return tcu_launch_reduce_##name(mask, omit_nan, p, dev, stream);
        TALLY_TYPES(X)
#undef X
    }
    return cudaErrorInvalidValue;
}

cudaError_t tcu_launch_segments(tally_type type, unsigned mask, int omit_nan,
                                const tcu_seg_params *p, const tcu_device *dev, cudaStream_t stream)
{
    switch (type) {
#define X(E, name, C, is_int, is_signed, W)                                                      \
    case TALLY_##E: return tcu_launch_segments_##name(mask, omit_nan, p, dev, stream);
        TALLY_TYPES(X)
#undef X
    }
    return cudaErrorInvalidValue;
}

cudaError_t tcu_launch_scan(tally_type type, tally_op op, const tcu_scan_params *p,
                            const tcu_device *dev, cudaStream_t stream)
{
    switch (type) {
#define X(E, name, C, is_int, is_signed, W)                                                      \
    case TALLY_##E: return tcu_launch_scan_##name(op, p, dev, stream);
        TALLY_TYPES(X)
#undef X
    }
    return cudaErrorInvalidValue;
}

/* Shape 5 (the tile staged in shared memory) pays for its bulk copy's latency only once the
 * input is large enough to keep the copies in flight; shape 4 below that (docs/performance.md,
 * "scan tile shapes"). */
int tcu_scan_shape(tally_type type, uint64_t n)
{
    int k = tcu_knob(TCU_KNOB_SCAN_WIDE);
    if (k != TCU_SCAN_AUTO) return k;
    return n * tally_type_size(type) >= TCU_SCAN_STAGED_MIN_BYTES ? 5 : 4;
}

uint64_t tcu_scan_tile_elems(tally_type type, int shape)
{
    int es = (int)tally_type_size(type);
    return (uint64_t)tcu::kThreads * tcu::scan_vpt(es, shape) * (16 / es);
}

size_t tcu_scan_status_bytes(tally_type type, uint64_t ntiles)
{
    if (tally_type_size(type) <= 4) return (size_t)ntiles * 8;
    return (size_t)(((ntiles * 4 + 15) & ~(uint64_t)15) + ntiles * 16);
}
