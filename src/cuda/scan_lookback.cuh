/* Single-pass prefix scan with decoupled look-back (Merrill & Garland 2016), layered
 * thread -> warp -> block (tile) -> device.
 *
 * Tile: 256 threads; each warp owns a contiguous stretch of 32 * VPT 16-byte vectors; lane l
 * loads vectors l, l+32, ... of it (coalesced 512-byte rows), scans each vector in registers and
 * the rows with shuffles. Tile t is block t: blocks are dispatched in index order, so a tile only
 * waits on tiles that are already running.
 *
 * Look-back: a tile publishes its aggregate (A) at once and its inclusive prefix (P) once known;
 * warp 0 reads its predecessors' states 32 at a time, nearest first, until one is a P.
 * For 4-byte values the flag and value share one 64-bit word; for 8-byte values the flag is a
 * separate word written after a fence, with separate A and P slots. Flags carry a launch epoch,
 * so the state array never needs clearing between launches; the last tile advances the epoch
 * once its look-back is done (the kernel stays graph-replayable).
 *
 * Float determinism: integer ops, min/max (NaN made canonical) and bitwise ops are associative,
 * so the look-back combines in any order. Float sums and products are not: their look-back keeps
 * the values it read and folds them left to right starting from the nearest P. Since every P(t)
 * is itself defined as fold(P(t-1), A(t)), the value found equals P(t-1) whichever predecessor
 * happened to hold a P, so the results cannot depend on timing: float scans give the same bits
 * every run. */
#ifndef TALLY_CUDA_SCAN_LOOKBACK_CUH
#define TALLY_CUDA_SCAN_LOOKBACK_CUH

#include <type_traits>
#include "tally_cuda.cuh"
#include "cuda/cuda_common.cuh"
#include "cuda/cuda_internal.h"

namespace tcu {

/* The type scans compute in: narrow integers widen to 32 bits (results are truncated on store,
 * which gives the same bits as wrapping in the narrow type). */
template <typename T> struct ScanW {
    using type = typename std::conditional<
        Traits<T>::is_float || sizeof(T) == 8, T,
        typename std::conditional<Traits<T>::is_signed, int32_t, uint32_t>::type>::type;
};

template <typename W, int OP> struct ScanOp {
    using U = typename std::conditional<sizeof(W) == 4, uint32_t, uint64_t>::type;
    static constexpr bool FL = std::is_floating_point<W>::value;
    static __device__ __forceinline__ W identity()
    {
        if constexpr (OP == TALLY_SUM) return FL ? (W)-0.0 : (W)0; /* -0 + x == x for every x */
        if constexpr (OP == TALLY_PROD) return (W)1;
        if constexpr (OP == TALLY_MIN) {
            if constexpr (FL) return (W)INFINITY;
            else return std::is_signed<W>::value ? (W)((U)~(U)0 >> 1) : (W)~(U)0;
        }
        if constexpr (OP == TALLY_MAX) {
            if constexpr (FL) return (W)-INFINITY;
            else return std::is_signed<W>::value ? (W)(~((U)~(U)0 >> 1)) : (W)0;
        }
        if constexpr (OP == TALLY_AND) return (W)~(U)0;
        return (W)0;
    }
    /* The one NaN min/max scans give (so that combining is commutative, bits included). */
    static __device__ __forceinline__ W qnan()
    {
        if constexpr (sizeof(W) == 4) return (W)__int_as_float(0x7fc00000);
        else return (W)__longlong_as_double(0x7ff8000000000000ll);
    }
    /* a: the earlier elements, b: the later. */
    static __device__ __forceinline__ W apply(W a, W b)
    {
        if constexpr (OP == TALLY_SUM) {
            if constexpr (FL) return a + b;
            else return (W)((U)a + (U)b);
        }
        if constexpr (OP == TALLY_PROD) {
            if constexpr (FL) return a * b;
            else return (W)((U)a * (U)b);
        }
        if constexpr (OP == TALLY_MIN) {
            if constexpr (FL) {
                if (a != a || b != b) return qnan();
                if (a < b) return a;
                if (b < a) return b;
                return signbit(a) ? a : b; /* -0 < +0 */
            } else {
                return b < a ? b : a;
            }
        }
        if constexpr (OP == TALLY_MAX) {
            if constexpr (FL) {
                if (a != a || b != b) return qnan();
                if (a > b) return a;
                if (b > a) return b;
                return signbit(a) ? b : a;
            } else {
                return b > a ? b : a;
            }
        }
        if constexpr (OP == TALLY_AND) return (W)((U)a & (U)b);
        if constexpr (OP == TALLY_OR) return (W)((U)a | (U)b);
        return (W)((U)a ^ (U)b);
    }
};

/* Whole-warp shuffles of 4- and 8-byte values: the public header's (tally_cuda.cuh). */
using tally::cuda::detail::shfl_idx;
using tally::cuda::detail::shfl_up;
using tally::cuda::detail::shfl_xor;

/* Vectors per thread of tile shape `shape` (the scan_wide knob, see scan_kernel): the narrow
 * tile (shapes 0 and 2), the wide one with twice as many (1 and 3: bigger tiles, fewer
 * look-backs, more registers), and twice the wide one (4; 5 stages it in shared memory). */
__host__ __device__ constexpr int scan_vpt(int elem_size, int shape)
{
    return (elem_size == 1 ? 1 : elem_size == 2 ? 2 : 4) * (shape >= 4 ? 4 : shape == 1 || shape == 3 ? 2 : 1);
}
template <typename T, int SHAPE = 0> struct ScanShape {
    static constexpr int VEC = Traits<T>::vec;
    static constexpr int VPT = scan_vpt(sizeof(T), SHAPE);
    static constexpr int TILE = kThreads * VPT * VEC;
};

/* Tile states. */
constexpr uint32_t kStA = 1, kStP = 2;

template <typename W> struct TileStatus;

template <typename W> struct TileStatus {
    static_assert(sizeof(W) == 4 || sizeof(W) == 8, "4- or 8-byte scan values");
    static constexpr bool PACKED = sizeof(W) == 4;
    void *base;
    uint64_t nslots;  /* ntiles << shift */
    uint32_t shift;   /* tile t's state is slot t << shift */
    __device__ __forceinline__ void publish(uint64_t t, uint32_t ep, uint32_t st, W v) const
    {
        uint32_t flag = (ep << 2) | st;
        t <<= shift;
        if constexpr (PACKED) {
            uint32_t vb;
            memcpy(&vb, &v, 4);
            unsigned long long w = ((unsigned long long)flag << 32) | vb;
            ((volatile unsigned long long *)base)[t] = w;
        } else {
            unsigned long long vb;
            memcpy(&vb, &v, 8);
            volatile unsigned long long *vals = slots();
            vals[2 * t + (st == kStP ? 1 : 0)] = vb;
            __threadfence();
            ((volatile uint32_t *)base)[t] = flag;
        }
    }
    /* Reads tile t: returns its state for epoch ep (0 when not yet published) and its value. */
    __device__ __forceinline__ uint32_t read(uint64_t t, uint32_t ep, W &v) const
    {
        t <<= shift;
        if constexpr (PACKED) {
            unsigned long long w = ((volatile unsigned long long *)base)[t];
            uint32_t flag = (uint32_t)(w >> 32);
            uint32_t vb = (uint32_t)w;
            memcpy(&v, &vb, 4);
            return (flag >> 2) == ep ? (flag & 3u) : 0u;
        } else {
            uint32_t flag = ((volatile uint32_t *)base)[t];
            uint32_t st = (flag >> 2) == ep ? (flag & 3u) : 0u;
            if (st) {
                __threadfence();
                unsigned long long vb = slots()[2 * t + (st == kStP ? 1 : 0)];
                memcpy(&v, &vb, 8);
            }
            return st;
        }
    }
    __device__ __forceinline__ volatile unsigned long long *slots() const
    {
        /* after the flags, 16-byte aligned: [A, P] per slot */
        uint64_t flag_bytes = (nslots * 4 + 15) & ~(uint64_t)15;
        return (volatile unsigned long long *)((char *)base + flag_bytes);
    }
};

/* Shared memory of one tile's scan. */
template <typename W, bool ORDERED> struct TileShared {
    static constexpr int kMaxWin = 16; /* look-back windows kept for the ordered fold */
    uint32_t epoch;
    W wtot[kWarps];
    W excl;
    W look[ORDERED ? kMaxWin * 32 : 1];
};

/* Float sums and products are not associative: their look-back keeps the values and folds
 * them in order (see the top of this file); every other op combines in any order. */
template <typename T, int OP> __host__ __device__ constexpr bool ordered_fold()
{
    return Traits<T>::is_float && (OP == TALLY_SUM || OP == TALLY_PROD);
}

/* Scans tile `tile`: loads it (the identity outside the input), thread and warp scans, the
 * block's total and the look-back (warp 0), then the outputs. epoch_ld: the launch epoch
 * (thread 0). SMEM: a full tile is already in shared memory at `stage` (a partial one is read
 * from global memory), and each row is read from there twice, for the scans and for the
 * outputs, instead of the tile living in registers. LOOKBACK = false is for the benchmark
 * probes only (bench/probes/probe_scan.cu): no look-back, so wrong results; it times what a
 * tile costs without waiting for its predecessors. */
template <typename T, int OP, int VPT, bool LOOKBACK, bool SMEM = false>
__device__ __forceinline__ void scan_tile(const tcu_scan_params &p, uint64_t tile, uint32_t epoch_ld,
                                          TileShared<typename ScanW<T>::type, ordered_fold<T, OP>()> &sh,
                                          const Vec<T> *stage = nullptr)
{
    using W = typename ScanW<T>::type;
    using Op = ScanOp<W, OP>;
    constexpr int VEC = Traits<T>::vec, TILE = kThreads * VPT * VEC;
    constexpr bool kOrderedFold = ordered_fold<T, OP>();
    constexpr int kMaxWin = TileShared<W, kOrderedFold>::kMaxWin;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    TileStatus<W> ts{p.status, p.ntiles << p.status_shift, p.status_shift};
    const T *in = (const T *)p.in;
    T *out = (T *)p.out;
    const uint64_t tile_pos = tile * (uint64_t)TILE; /* from the aligned base */
    const uint64_t warp_pos = tile_pos + (uint64_t)warp * 32 * VPT * VEC;
    const bool full = tile_pos >= p.head && tile_pos + TILE <= p.head + p.n;

    W x[SMEM ? 1 : VPT][VEC]; /* the tile, in registers (not SMEM) */
    if constexpr (!SMEM) {
        if (full) {
            const Vec<T> *vin = (const Vec<T> *)(in + (tile_pos - p.head));
#pragma unroll
            for (int j = 0; j < VPT; j++) {
                Vec<T> v = load_vec(vin + (uint64_t)warp * 32 * VPT + j * 32 + lane);
#pragma unroll
                for (int k = 0; k < VEC; k++) x[j][k] = (W)v.v[k];
            }
        } else {
#pragma unroll
            for (int j = 0; j < VPT; j++) {
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    uint64_t pos = warp_pos + (uint64_t)(j * 32 + lane) * VEC + k;
                    x[j][k] = (pos >= p.head && pos < p.head + p.n) ? (W)in[pos - p.head] : Op::identity();
                }
            }
        }
    }

    /* this thread's vector of row j */
    auto fetch = [&](int j, W(&v)[VEC]) {
        if constexpr (!SMEM) {
#pragma unroll
            for (int k = 0; k < VEC; k++) v[k] = x[j][k];
        } else if (full) {
            Vec<T> q = stage[warp * 32 * VPT + j * 32 + lane];
#pragma unroll
            for (int k = 0; k < VEC; k++) v[k] = (W)q.v[k];
        } else {
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                uint64_t pos = warp_pos + (uint64_t)(j * 32 + lane) * VEC + k;
                v[k] = (pos >= p.head && pos < p.head + p.n) ? (W)in[pos - p.head] : Op::identity();
            }
        }
    };

    /* thread: each vector's total; warp: each row's inclusive scan over lanes */
    W pre[VPT];   /* the prefix of the warp's elements before this lane's vector j */
    W wagg = Op::identity();
#pragma unroll
    for (int j = 0; j < VPT; j++) {
        W v[VEC];
        fetch(j, v);
        W t = v[0];
#pragma unroll
        for (int k = 1; k < VEC; k++) t = Op::apply(t, v[k]);
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            W o = shfl_up(t, d);
            if (lane >= d) t = Op::apply(o, t);
        }
        W ex = shfl_up(t, 1);
        if (lane == 0) ex = Op::identity();
        pre[j] = Op::apply(wagg, ex);
        wagg = Op::apply(wagg, shfl_idx(t, 31));
    }
    if (lane == 0) sh.wtot[warp] = wagg;
    if (tid == 0) sh.epoch = epoch_ld;
    __syncthreads();
    const uint32_t epoch = sh.epoch;

    if (warp == 0) {
        W agg = sh.wtot[0];
#pragma unroll
        for (int w = 1; w < kWarps; w++) agg = Op::apply(agg, sh.wtot[w]);
        W excl;
        bool has_init = p.exclusive && tile == 0;
        W init;
        {
            W iv;
            if constexpr (sizeof(W) == 8) memcpy(&iv, &p.init_bits, 8);
            else {
                /* the initial value arrives in the element type's bits */
                T tv;
                memcpy(&tv, &p.init_bits, sizeof(T));
                iv = (W)tv;
            }
            init = iv;
        }
        if constexpr (!LOOKBACK) {
            excl = Op::identity();
            (void)has_init;
            (void)init;
        } else if (tile == 0) {
            excl = p.exclusive ? init : Op::identity();
            if (lane == 0) ts.publish(0, epoch, kStP, has_init ? Op::apply(excl, agg) : agg);
        } else {
            if (lane == 0) ts.publish(tile, epoch, kStA, agg);
            /* Look back one window of 32 predecessors at a time (lane l reads tile base - l)
             * until one holds a P. A window with an unpublished tile nearer than its first P is
             * read again after a pause. (Reading 4 windows per round trip was slower on the
             * H200: more polling traffic; bench/probes/NOTES.md.) */
            int64_t base = (int64_t)tile - 1;
            int win = 0, lp = 0;
            W run = Op::identity();
            uint32_t pause = p.lb_sleep_ns;
            for (;;) {
                const int64_t pred = base - lane;
                W v = Op::identity();
                uint32_t st = kStA; /* before tile 0: never reached, tile 0 is a P */
                if (pred >= 0) st = ts.read((uint64_t)pred, epoch, v);
                unsigned pm = __ballot_sync(0xffffffffu, st == kStP);
                unsigned xm = __ballot_sync(0xffffffffu, st == 0);
                unsigned nearer = pm ? ((1u << (__ffs(pm) - 1)) - 1u) : 0xffffffffu;
                bool stall = (xm & nearer) != 0;
                if (!stall) {
                    lp = pm ? __ffs(pm) - 1 : 32;
                    if constexpr (kOrderedFold) {
                        sh.look[win * 32 + lane] = v;
                        if (pm) break;
                        stall = win == kMaxWin - 1; /* out of room: wait here for a P */
                    } else {
                        W xs = lane <= lp ? v : Op::identity();
#pragma unroll
                        for (int m = 1; m < 32; m <<= 1) xs = Op::apply(xs, shfl_xor(xs, m));
                        run = Op::apply(run, xs);
                        if (pm) break;
                    }
                }
                if (stall) {
                    __nanosleep(pause);
                    if (p.lb_backoff_ns) pause = pause * 2 > p.lb_backoff_ns ? p.lb_backoff_ns : pause * 2 + 1;
                    continue;
                }
                base -= 32;
                win++;
            }
            if constexpr (kOrderedFold) {
                /* left fold from the P towards this tile: the same value whichever P was found */
                __syncwarp();
                W e = sh.look[win * 32 + lp];
                if (lane == 0) {
                    for (int w = win; w >= 0; w--)
                        for (int l = (w == win ? lp - 1 : 31); l >= 0; l--) e = Op::apply(e, sh.look[w * 32 + l]);
                }
                excl = shfl_idx(e, 0);
            } else {
                excl = run;
            }
            if (lane == 0) ts.publish(tile, epoch, kStP, Op::apply(excl, agg));
        }
        if (lane == 0) sh.excl = excl;
        /* The last tile's look-back has seen every tile publish, so every tile has read the
         * epoch: the next launch (stream-ordered after this one) can use a new one. */
        if (lane == 0 && tile == p.ntiles - 1) {
            uint32_t ne = (epoch + 1) & 0x3fffffffu;
            p.sync[2] = ne ? ne : 1;
        }
    }
    __syncthreads();

    W c = sh.excl;
#pragma unroll
    for (int w = 0; w < kWarps; w++)
        if (w < warp) c = Op::apply(c, sh.wtot[w]);
    /* Note: c folds the earlier warps one at a time, the same order for every tile. */

    /* Each row's outputs replace its inputs right before the row is stored, so that the
     * registers never hold the tile twice (all outputs first, then the stores, kept inputs and
     * outputs live together: spills at shape 3's 64 registers and at shape 4's 128). */
    auto scan_row = [&](int j, W(&v)[VEC]) {
        fetch(j, v);
        W r = Op::apply(c, pre[j]);
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            W a = v[k];
            if (p.exclusive) {
                v[k] = r;
                r = Op::apply(r, a);
            } else {
                r = Op::apply(r, a);
                v[k] = r;
            }
        }
    };
    if (full && p.vec_out) {
        Vec<T> *vout = (Vec<T> *)(out + (tile_pos - p.head));
#pragma unroll
        for (int j = 0; j < VPT; j++) {
            W o[VEC];
            scan_row(j, o);
            Vec<T> v;
#pragma unroll
            for (int k = 0; k < VEC; k++) v.v[k] = (T)o[k];
            vout[(uint64_t)warp * 32 * VPT + j * 32 + lane] = v;
        }
    } else {
#pragma unroll
        for (int j = 0; j < VPT; j++) {
            W o[VEC];
            scan_row(j, o);
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                uint64_t pos = warp_pos + (uint64_t)(j * 32 + lane) * VEC + k;
                if (pos >= p.head && pos < p.head + p.n) out[pos - p.head] = (T)o[k];
            }
        }
    }
}

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
