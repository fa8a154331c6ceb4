/* The CUDA backend's batched (segmented) reduce: the interface between its host side
 * (segments.cu, the backend's reduce_segments hook) and the per-type kernel launchers
 * (segments_kernel.cuh, one translation unit per row of the type table). Not installed. */
#ifndef TALLY_CUDA_SEGMENTS_H
#define TALLY_CUDA_SEGMENTS_H

#include <stdint.h>
#include <cuda_runtime.h>
#include "cuda/cuda_internal.h"

/* Segments of this many elements or more leave the block-per-segment kernel: each runs on the
 * device-wide reduce (many blocks, one launch) instead, when it is also a large share of the
 * whole batch (segments.cu: seg_long_min). A block reads a 2^18-element segment (1 MB of f32)
 * in a few microseconds, about the cost of a launch. Below 2^31 elements a block's integer sums
 * cannot overflow their 64-bit accumulators (|sum| < 2^31 * 2^32). */
#define TCU_SEG_LONG_MIN ((uint64_t)1 << 18)
#define TCU_SEG_LONG_CAP ((uint64_t)1 << 31)
/* Segments shorter than this run on the short-segment kernel (segments_kernel.cuh,
 * segments_short_kernel: a group of lanes per segment) instead of a block each, unless a float
 * product is asked for (segments.cu). */
#define TCU_SEG_SHORT_MAX ((uint64_t)4096)
/* The kernel's grid: one block per segment up to this many; blocks then take segments
 * blockIdx.x, blockIdx.x + grid, ... */
#define TCU_SEG_MAX_GRID (1u << 24)

typedef struct tcu_seg_params {
    /* As for one reduce (ops, nops, omit_nan, ddof, pass2), with: data = element `first` of the
     * input (device-readable); out = nops results per segment, segment s's at out + s * nops;
     * aux = one per segment (the variance's mean), or NULL. n, head, body_vec, tail and the
     * scratch pointers are not used. */
    tcu_reduce_params r;
    const uint64_t *offsets; /* device copy of the nseg + 1 offsets; NULL: rows */
    uint64_t first;          /* offsets[0] (0 for rows): the element r.data points at */
    uint64_t nseg;
    uint64_t row_len, row_stride; /* rows: segment s is row_len elements from s * row_stride */
    uint64_t long_min;       /* segments this long or longer are skipped (run by the caller) */
    uint64_t short_max;      /* segments shorter than this run on the short kernel only */
    int32_t lanes;           /* 0: the block kernel (short_max <= length < long_min); 4, 8,
                              * 16 or 32: the short kernel with that many lanes per segment
                              * (length < short_max) */
} tcu_seg_params;

/* Launches the block-per-segment reduce or the short-segment one (p->lanes) (mask one of the
 * TCU_MASK_*, as tcu_launch_reduce) on the current device. */
cudaError_t tcu_launch_segments(tally_type type, unsigned mask, int omit_nan,
                                const tcu_seg_params *p, const tcu_device *dev,
                                cudaStream_t stream);

#define TCU_DECLARE_SEG_LAUNCHER(E, name, C, is_int, is_signed, W)                                 \
    cudaError_t tcu_launch_segments_##name(unsigned mask, int omit_nan, const tcu_seg_params *p,  \
                                           const tcu_device *d, cudaStream_t s);
TALLY_TYPES(TCU_DECLARE_SEG_LAUNCHER)
#undef TCU_DECLARE_SEG_LAUNCHER

#endif
