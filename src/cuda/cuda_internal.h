/* The CUDA backend's internal interface between the host code (cuda_backend.cu) and the kernel
 * launchers (launch.cu and the per-type translation units). Not installed. */
#ifndef TALLY_CUDA_INTERNAL_H
#define TALLY_CUDA_INTERNAL_H

#include <stdint.h>
#include <cuda_runtime.h>
#include "tally.h"
#include "core/types.h"
#include "cuda/tuning.h"

#define TCU_MAX_OPS 32          /* ops in one kernel launch (the host splits longer lists) */
#define TCU_MAX_BLOCKS 2048     /* reduce grid cap: partials are sized for this */
#define TCU_PARTIAL_BYTES 256   /* room for one block's partial state */

/* Features a reduce kernel computes (a set of ops maps onto these). */
enum {
    TCU_F_SUM = 1u << 0,
    TCU_F_PROD = 1u << 1,
    TCU_F_MIN = 1u << 2,
    TCU_F_MAX = 1u << 3,
    TCU_F_ARGMIN = 1u << 4,
    TCU_F_ARGMAX = 1u << 5,
    TCU_F_BITS = 1u << 6,
    TCU_F_COUNT = 1u << 7, /* non-NaN count (floats with omit_nan) */
    TCU_F_SQDEV = 1u << 8, /* the variance pass: exact sum of (x - mean)^2 */
    TCU_F_FSUM = 1u << 9   /* benchmarks only: a plain (not exact) f64 sum in a fixed order */
};

/* The kernels instantiated for every type; anything else runs the ALL kernel. */
#define TCU_MASK_SUM (TCU_F_SUM | TCU_F_COUNT)
#define TCU_MASK_MIN (TCU_F_MIN | TCU_F_COUNT)
#define TCU_MASK_MAX (TCU_F_MAX | TCU_F_COUNT)
#define TCU_MASK_SMM (TCU_F_SUM | TCU_F_MIN | TCU_F_MAX | TCU_F_COUNT)
#define TCU_MASK_ARGMIN (TCU_F_ARGMIN | TCU_F_MIN | TCU_F_COUNT)
#define TCU_MASK_ARGMAX (TCU_F_ARGMAX | TCU_F_MAX | TCU_F_COUNT)
#define TCU_MASK_ALL (TCU_F_SUM | TCU_F_PROD | TCU_F_MIN | TCU_F_MAX | TCU_F_ARGMIN | \
                      TCU_F_ARGMAX | TCU_F_BITS | TCU_F_COUNT)
#define TCU_MASK_SQDEV (TCU_F_SQDEV)
#define TCU_MASK_FASTSUM (TCU_F_FSUM | TCU_F_COUNT)

/* Written by the first pass when a variance is asked for; read by the second. */
typedef struct tcu_aux {
    double mean;
    uint64_t count;
    int32_t status; /* TALLY_OK or TALLY_ERR_EMPTY */
    int32_t pad;
} tcu_aux;

/* What the last adaptive f32/f64 sum of a context saw (tcu_reduce_params.hint); 0: none yet. */
#define TCU_HINT_NARROW 1u /* the exact kernel ran, every batch on its fast path */
#define TCU_HINT_WIDE 2u   /* the exact kernel ran, some batch went to its slow path or bins */
#define TCU_HINT_SPEC 3u   /* the speculative sum answered (the exact kernel returned at once) */

typedef struct tcu_reduce_params {
    const void *data;
    uint64_t n;
    uint64_t body_vec;       /* whole 16-byte vectors after the head */
    uint32_t head, tail;     /* elements before the first aligned vector, after the last */
    void *partials;          /* grid * TCU_PARTIAL_BYTES */
    long long *xpartials;    /* grid * TALLY_EXACT_CHUNKS */
    unsigned int *counter;   /* zero between launches; the last block resets it */
    unsigned long long *acc; /* zero between launches: the packed integer sum (see packed) */
    unsigned long long *kmax_word; /* 0 between launches: the max key (see extreme) */
    unsigned long long *kmin_word; /* ~0 between launches: the min key (see extreme) */
    tally_result *out;       /* results[i] for ops[i] (device or mapped host memory) */
    tcu_aux *aux;
    int32_t nops;
    int32_t omit_nan;
    int32_t ddof;
    int32_t pass2;           /* 1: the variance pass (writes only the TALLY_VAR results) */
    int32_t pdl;             /* launch with programmatic dependent launch (sm_90+) */
    int32_t ring_stages;     /* set by the launcher: stages of the shared-memory ring (0: none) */
    int32_t packed;          /* set by the launcher: 0, or the bits of the sum field when blocks
                                add sum and count in one atomic (reduce_state.cuh, packable) */
    int32_t extreme;         /* set by the launcher: 1 when blocks fold a min or max into one word
                                (reduce_state.cuh, extreme_only) */
    int32_t bins;            /* set by the launcher: -1, or the byte offset in dynamic shared
                                memory of the exact sums' per-thread bins (reduce_worker.cuh),
                                bit 0 set: f64 columns may start in windows (REDUCE_BINS >= 2),
                                bit 1 set: f64 register windows first (REDUCE_BINS >= 3),
                                bit 2 set: f32 register windows first (REDUCE_BINS=4) */
    unsigned int *spec;      /* the speculative sum (spec_sum.cuh): [0] its ticket (0 between
                                launches), [1] its answer flag; non-NULL in the exact reduce kernel
                                launched after it, which returns at once when [1] is 1 */
    unsigned int *hint;      /* the adaptive setting (SPEC 3 and 4, cuda_backend.cu's spec_plan):
                                one word of mapped host memory per float type, NULL otherwise.
                                The exact sum's last block writes TCU_HINT_NARROW or _WIDE (a
                                block left its fast path), the speculative one TCU_HINT_SPEC
                                when it answered. Only speed depends on it, never the bits. */
    uint8_t ops[TCU_MAX_OPS];
} tcu_reduce_params;

/* The device a launch runs on (the current one): its ordinal, for the launchers' per-device
 * caches (launch.cuh), and its SM count, for grid sizes. */
typedef struct tcu_device {
    int ordinal;
    int sm_count;
} tcu_device;

/* Launches the speculative f32/f64 sum (spec_sum.cuh) of p's data for p's ops (SUM and MEAN
 * only, omit_nan off, n > 0); p->spec as above. The exact reduce kernel must follow it on the
 * same stream with the same p (it skips itself when the speculative sum answered). */
cudaError_t tcu_launch_spec_sum(tally_type type, const tcu_reduce_params *p, const tcu_device *dev,
                                cudaStream_t stream);

/* Launches one reduction (mask is one of the TCU_MASK_*) on the current device, dev. */
cudaError_t tcu_launch_reduce(tally_type type, unsigned mask, int omit_nan,
                              const tcu_reduce_params *p, const tcu_device *dev, cudaStream_t stream);

typedef struct tcu_scan_params {
    const void *in;          /* as given (element aligned) */
    void *out;
    uint64_t n;
    uint64_t ntiles;
    uint32_t head;           /* elements between the 16-byte aligned base and in */
    int32_t exclusive;
    int32_t vec_out;         /* out has the same 16-byte misalignment as in */
    int32_t wide;            /* the scan kernel's tile shape (tcu_scan_shape(): 0 .. 5) */
    uint64_t init_bits;      /* the exclusive scan's initial value, as the element's bits */
    void *status;            /* tile states (see scan_lookback.cuh) */
    uint32_t lb_sleep_ns;    /* look-back: first pause when a predecessor has not published */
    uint32_t lb_backoff_ns;  /* look-back: pauses double up to this (0: they stay lb_sleep_ns) */
    uint32_t status_shift;   /* tile t's state sits at slot t << status_shift (spreads the
                                polled words over more cache lines) */
    unsigned int *sync;      /* [2]: the launch epoch ([0], [1] unused) */
    int32_t pdl;             /* launch with programmatic dependent launch (sm_90+) */
    int32_t pad;
} tcu_scan_params;

/* Tile size in elements of scan kernel `shape` (tcu_scan_shape()). */
uint64_t tcu_scan_tile_elems(tally_type type, int shape);
/* The scan kernel's tile shape for n elements of type (scan_kernel.cuh): 4 (twice the wide
 * tile in registers) below TCU_SCAN_STAGED_MIN_BYTES of input, 5 (that tile staged in shared
 * memory) from there on; any of 0 .. 5 when the scan_wide knob of a tuning build forces one. */
int tcu_scan_shape(tally_type type, uint64_t n);
/* Bytes of tile state for ntiles tiles (slots) of type. */
size_t tcu_scan_status_bytes(tally_type type, uint64_t ntiles);
/* Launches one scan (op a scan op that takes type) on the current device, dev. */
cudaError_t tcu_launch_scan(tally_type type, tally_op op, const tcu_scan_params *p,
                            const tcu_device *dev, cudaStream_t stream);

/* The per-type launchers, one translation unit each (generated from reduce_type.cu.in and
 * scan_type.cu.in for every row of the type table); launch.cu switches on the type. */
#define TCU_DECLARE_LAUNCHERS(E, name, C, is_int, is_signed, W)                                     \
    cudaError_t tcu_launch_reduce_##name(unsigned mask, int omit_nan, const tcu_reduce_params *p,  \
                                         const tcu_device *d, cudaStream_t s);                     \
    cudaError_t tcu_launch_scan_##name(tally_op op, const tcu_scan_params *p, const tcu_device *d, \
                                       cudaStream_t s);
TALLY_TYPES(TCU_DECLARE_LAUNCHERS)
#undef TCU_DECLARE_LAUNCHERS

#endif
