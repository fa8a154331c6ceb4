/* The CUDA backend's internal interface between the host code (cuda_backend.cu) and the kernel
 * launchers (reduce_*.cu, scan_*.cu). Not installed. */
#ifndef TALLY_CUDA_INTERNAL_H
#define TALLY_CUDA_INTERNAL_H

#include <stdint.h>
#include <cuda_runtime.h>
#include "tally.h"

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
    uint8_t ops[TCU_MAX_OPS];
} tcu_reduce_params;

/* Launches one reduction (mask is one of the TCU_MASK_*). grid: blocks (<= TCU_MAX_BLOCKS);
 * grid == 0 asks the launcher for its own choice given max_resident_blocks. */
cudaError_t tcu_launch_reduce(tally_type type, unsigned mask, int omit_nan,
                              const tcu_reduce_params *p, int sm_count, cudaStream_t stream);

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

/* Tile size in elements of scan kernel `shape` (tcu_scan_shape()), and bytes of tile state per
 * tile, per element size. */
uint64_t tcu_scan_tile_elems(tally_type type, int shape);
/* The scan kernel for n elements of type: 0 narrow tile, 1 wide tile, 2 narrow at 8 blocks per
 * SM (one block per tile); 3 the wide tile at 4 blocks per SM; 4 twice the wide tile at 2
 * blocks per SM; 5 that tile staged in shared memory, 3 blocks per SM. TALLY_CUDA_SCAN_WIDE
 * forces one; 6 (the default) picks 5 for inputs of 32 MB or more, else 4. */
int tcu_scan_shape(tally_type type, uint64_t n);

/* Tuning knobs, read from the environment once (TALLY_CUDA_SCAN_WIDE and the others: the table
 * in scan_dispatch.cu); the benchmark sets them between cases to time variants side by side.
 * SCAN_WIDE: see tcu_scan_shape. RED_WAVES: the reduce grid is at most WAVES times the
 * resident blocks (capped by TCU_MAX_BLOCKS). RED_MINB: each reduce block gets at least MINB
 * batches (kThreads * U vectors) when the input allows, so small inputs use fewer blocks; 0 (the
 * default) lets the launcher choose by the number of batches (see launch_reduce_t). */
enum {
    TCU_KNOB_SCAN_WIDE = 0,
    TCU_KNOB_RED_WAVES = 1,
    TCU_KNOB_RED_MINB = 2,
    TCU_KNOB_SCAN_SLEEP = 3,   /* TALLY_CUDA_SCAN_SLEEP: lb_sleep_ns */
    TCU_KNOB_SCAN_BACKOFF = 4, /* TALLY_CUDA_SCAN_BACKOFF: lb_backoff_ns */
    TCU_KNOB_SCAN_SHIFT = 5,   /* TALLY_CUDA_SCAN_SHIFT: status_shift (0 .. TCU_MAX_STATUS_SHIFT) */
    TCU_KNOB_PDL = 6,          /* TALLY_CUDA_PDL: 1 launches with programmatic dependent launch */
    TCU_KNOB_RED_RING = 7,     /* TALLY_CUDA_REDUCE_RING: 0 loads into registers; else a ring of
                                  32 KB stages filled by bulk copies: 1 the default (as 2), 2
                                  one block per SM (6 stages), 3 two blocks per SM (3 stages),
                                  4 three blocks per SM where the kernel's registers allow, else
                                  two (2 stages) */
    TCU_KNOB_RED_RING_MIN = 8, /* TALLY_CUDA_REDUCE_RING_MIN: batches (32 KB) from which the ring
                                  is used */
    TCU_KNOB_RED_PACKED = 9,   /* TALLY_CUDA_REDUCE_PACKED: 1 lets the small integer sums
                                  combine through one atomic (0: partials and a ticket) */
    TCU_KNOB_RED_EXTREME = 10, /* TALLY_CUDA_REDUCE_EXTREME: 1 lets a min or max alone combine
                                  through one word and the ticket (0: partials) */
    TCU_KNOB_COUNT = 11
};
#define TCU_MAX_STATUS_SHIFT 6
int tcu_knob(int k);
int tcu_set_knob(int k, int v); /* returns the old value, -1 for an unknown knob */
int tcu_knob_index(const char *name); /* "scan_wide", "pdl", ...: the TCU_KNOB_*, -1 if none */
size_t tcu_scan_status_bytes(tally_type type, uint64_t ntiles);
cudaError_t tcu_launch_scan(tally_type type, tally_op op, const tcu_scan_params *p,
                            cudaStream_t stream);

#endif
