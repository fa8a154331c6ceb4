/* tcu_launch_scan and the scan geometry: the switch from the runtime type to the launchers. */
#include <cstdlib>
#include <cstring>
#include "cuda/scan_kernel.cuh"

/* Defaults from the H200 runs of 2026-11-29 (bench/probes/probe_scan.cu; bench_cuda's rows
 * with a knob in the note): the wide tiles were 10-25% faster than the narrow one from 2^22 on
 * and as fast below; the 64 KB tile at 2 blocks per SM (shape 4) then beat the 32 KB one at 4
 * (shape 3) for the f32 sum by 3-12% from 2^22 and matched it below; staged in shared memory
 * (shape 5) it was 4-8% faster again from 2^24 (i32 sum at 2^28 542.0 against 561.0 us, f32 534.8
 * against 564.6; CUB 683.5 and 680.5) but 10-15% slower at 2^20-2^22. TCU_SCAN_AUTO: shape 5
 * from TCU_SCAN_STAGED_MIN_BYTES of input, shape 4 below. */
#define TCU_SCAN_AUTO 6
#define TCU_SCAN_STAGED_MIN_BYTES (32ull << 20)
#ifndef TCU_SCAN_WIDE_DEFAULT
#define TCU_SCAN_WIDE_DEFAULT TCU_SCAN_AUTO
#endif

#define TCU_DECL(n) cudaError_t tcu_launch_scan_##n(tally_op op, const tcu_scan_params *p, cudaStream_t s);
TCU_DECL(i8) TCU_DECL(u8) TCU_DECL(i16) TCU_DECL(u16) TCU_DECL(i32) TCU_DECL(u32)
TCU_DECL(i64) TCU_DECL(u64) TCU_DECL(f32) TCU_DECL(f64)
#undef TCU_DECL

#ifndef TCU_RED_WAVES_DEFAULT
#define TCU_RED_WAVES_DEFAULT 1
#endif
/* 0: the launcher's own rule (reduce_launch.cuh: one block for up to 2 batches, 2 batches per
 * block from 512 batches on, else one; the exact f64 sum at most one block per SM); more waves
 * than one were slower at every size. */
#ifndef TCU_RED_MINB_DEFAULT
#define TCU_RED_MINB_DEFAULT 0
#endif

/* The look-back's pauses and the tile-state spacing (see tcu_scan_params). Every waiting tile
 * polls its predecessors' states; packed 16 to a cache line they made a hot spot in the L2, and
 * the look-back cost a third of the scan's time (i32 sum at 2^28 on the H200: 760 us, against
 * 516 us without the look-back). A line per tile (shift 4): 595 us; shifts 5 and 6 were no
 * better, and the pause length and a doubling back-off changed little either way. */
#ifndef TCU_SCAN_SLEEP_DEFAULT
#define TCU_SCAN_SLEEP_DEFAULT 20
#endif
#ifndef TCU_SCAN_BACKOFF_DEFAULT
#define TCU_SCAN_BACKOFF_DEFAULT 0
#endif
#ifndef TCU_SCAN_SHIFT_DEFAULT
#define TCU_SCAN_SHIFT_DEFAULT 4
#endif

/* Programmatic dependent launch: a kernel's launch and block set-up overlap the end of the
 * kernel before it in the stream (every kernel waits for it before touching memory). */
#ifndef TCU_PDL_DEFAULT
#define TCU_PDL_DEFAULT 1
#endif
/* The reduce's shared-memory ring (reduce_launch.cuh) and the batches from which it is used. */
#ifndef TCU_RED_RING_DEFAULT
#define TCU_RED_RING_DEFAULT 1
#endif
#ifndef TCU_RED_RING_MIN_DEFAULT
#define TCU_RED_RING_MIN_DEFAULT 1024
#endif
/* The small integer sums' one-atomic combine (reduce_state.cuh). */
#ifndef TCU_RED_PACKED_DEFAULT
#define TCU_RED_PACKED_DEFAULT 1
#endif
/* The min or max alone folded into one word by atomics (reduce_state.cuh). */
#ifndef TCU_RED_EXTREME_DEFAULT
#define TCU_RED_EXTREME_DEFAULT 1
#endif

/* Every knob: its environment variable, its name for tally_cuda_bench_set_knob, its default
 * and its range (values outside are clamped), in the order of the TCU_KNOB_* enum. */
static const struct knob_def {
    const char *env, *name;
    int dflt, lo, hi;
} k_knobs[TCU_KNOB_COUNT] = {
    {"TALLY_CUDA_SCAN_WIDE", "scan_wide", TCU_SCAN_WIDE_DEFAULT, 0, TCU_SCAN_AUTO},
    {"TALLY_CUDA_REDUCE_WAVES", "reduce_waves", TCU_RED_WAVES_DEFAULT, 1, 8},
    {"TALLY_CUDA_REDUCE_MINB", "reduce_minb", TCU_RED_MINB_DEFAULT, 0, 64},
    {"TALLY_CUDA_SCAN_SLEEP", "scan_sleep", TCU_SCAN_SLEEP_DEFAULT, 0, 100000},
    {"TALLY_CUDA_SCAN_BACKOFF", "scan_backoff", TCU_SCAN_BACKOFF_DEFAULT, 0, 1000000},
    {"TALLY_CUDA_SCAN_SHIFT", "scan_shift", TCU_SCAN_SHIFT_DEFAULT, 0, TCU_MAX_STATUS_SHIFT},
    {"TALLY_CUDA_PDL", "pdl", TCU_PDL_DEFAULT, 0, 1},
    {"TALLY_CUDA_REDUCE_RING", "reduce_ring", TCU_RED_RING_DEFAULT, 0, 4},
    {"TALLY_CUDA_REDUCE_RING_MIN", "reduce_ring_min", TCU_RED_RING_MIN_DEFAULT, 1, 1 << 30},
    {"TALLY_CUDA_REDUCE_PACKED", "reduce_packed", TCU_RED_PACKED_DEFAULT, 0, 1},
    {"TALLY_CUDA_REDUCE_EXTREME", "reduce_extreme", TCU_RED_EXTREME_DEFAULT, 0, 1},
};

static int g_knobs[TCU_KNOB_COUNT];
static int g_knobs_ready = 0;

static int knob_clamp(int k, int v)
{
    return v < k_knobs[k].lo ? k_knobs[k].lo : v > k_knobs[k].hi ? k_knobs[k].hi : v;
}

int tcu_knob(int k)
{
    if (!g_knobs_ready) {
        for (int i = 0; i < TCU_KNOB_COUNT; i++) {
            const char *e = getenv(k_knobs[i].env);
            g_knobs[i] = e && *e ? knob_clamp(i, atoi(e)) : k_knobs[i].dflt;
        }
        g_knobs_ready = 1;
    }
    return (k >= 0 && k < TCU_KNOB_COUNT) ? g_knobs[k] : 0;
}

int tcu_set_knob(int k, int v)
{
    if (k < 0 || k >= TCU_KNOB_COUNT) return -1;
    int old = tcu_knob(k);
    g_knobs[k] = knob_clamp(k, v);
    return old;
}

int tcu_knob_index(const char *name)
{
    for (int i = 0; name && i < TCU_KNOB_COUNT; i++)
        if (!strcmp(name, k_knobs[i].name)) return i;
    return -1;
}

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

cudaError_t tcu_launch_scan(tally_type type, tally_op op, const tcu_scan_params *p,
                            cudaStream_t stream)
{
    switch (type) {
    case TALLY_I8: return tcu_launch_scan_i8(op, p, stream);
    case TALLY_U8: return tcu_launch_scan_u8(op, p, stream);
    case TALLY_I16: return tcu_launch_scan_i16(op, p, stream);
    case TALLY_U16: return tcu_launch_scan_u16(op, p, stream);
    case TALLY_I32: return tcu_launch_scan_i32(op, p, stream);
    case TALLY_U32: return tcu_launch_scan_u32(op, p, stream);
    case TALLY_I64: return tcu_launch_scan_i64(op, p, stream);
    case TALLY_U64: return tcu_launch_scan_u64(op, p, stream);
    case TALLY_F32: return tcu_launch_scan_f32(op, p, stream);
    case TALLY_F64: return tcu_launch_scan_f64(op, p, stream);
    }
    return cudaErrorInvalidValue;
}
