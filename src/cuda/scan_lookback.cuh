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

#include "cuda/scan_op.cuh"
#include "cuda/sm90.cuh"
#include "cuda/cuda_internal.h"

namespace tcu {

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
 * outputs, instead of the tile living in registers. */
template <typename T, int OP, int VPT, bool SMEM = false>
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
        if (tile == 0) {
            excl = p.exclusive ? init : Op::identity();
            if (lane == 0) ts.publish(0, epoch, kStP, has_init ? Op::apply(excl, agg) : agg);
        } else {
            if (lane == 0) ts.publish(tile, epoch, kStA, agg);
            /* Look back one window of 32 predecessors at a time (lane l reads tile base - l)
             * until one holds a P. A window with an unpublished tile nearer than its first P is
             * read again after a pause. (One window per round trip: reading more at once only
             * adds polling traffic; docs/performance.md, "the scan's look-back".) */
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

} // namespace tcu

#endif
