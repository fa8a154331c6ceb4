/* A reduce thread's worker: its State plus the exact sums' expansions, fed one batch of
 * 16-byte vectors at a time, with the fast paths that prove plain f64 adds exact and the slow
 * batch (three terms, then element by element) for the batches they reject. */
#ifndef TALLY_CUDA_REDUCE_WORKER_CUH
#define TALLY_CUDA_REDUCE_WORKER_CUH

#include <type_traits>
#include "cuda/exact.cuh"
#include "cuda/exact_bins.h"
#include "cuda/reduce_merge.cuh"

/* the kernel's dynamic shared memory (the ring's stages, then the bins; see Bins) */
extern __shared__ __align__(16) unsigned char tcu_dyn_smem[];

/* The register windows (REDUCE_BINS=3 turns on f64's, 4 f32's too) are compiled in only with
 * -DTCU_RW=1: on the H200 they ran the wide f64 sum at 773 us against 705 for the shared windows
 * (2^28), and their register budget (the exact ring kernels at one block per SM, 184/206
 * registers) slowed the other exact rows too (docs/performance.md). Without them REDUCE_BINS 3
 * and 4 run as 2. */
#ifndef TCU_RW
#define TCU_RW 0
#endif
#ifndef TCU_RW32
#define TCU_RW32 1 /* the f32 ones */
#endif

namespace tcu {

/* ---- the exact sums' per-thread bins (knob REDUCE_BINS) ----------------------------------------
 * Where the fast paths cannot prove a batch exact (values spread over more binades than a double
 * holds), the batch goes into the thread's column of exponent-indexed bins (exact_bins.h):
 * f64 values into the column's windows while its values stay within them (two doubles per value,
 * hi and lo; REDUCE_BINS=2, the default) and else into integer digits (two shared-memory
 * read-modify-writes each, with ~20 integer ops to place them), f32 values into
 * one double per window of 16 exponents in two sets (one f64 add in shared memory each, two
 * independent values per dependent step, no check per value: NaN, inf and -0 show in the bins
 * themselves), exact whatever the range, instead of three two-sums per value (and spills
 * into the block superaccumulator's atomics beyond them). Layout in dynamic shared memory from
 * byte p.bins: WORDS + 1 words per thread, interleaved (word k of thread t at k * kThreads + t:
 * conflict-free whatever bin each lane picks); the last word is the thread's meta word:
 *   bits 0..31  adds since the column was last normalised (f64 digits) or emptied into the
 *               block's superaccumulator (f32: adds per set; f64 windows: values): the budgets
 *               of exact_bins.h
 *   bits 32..39 f64 windows: the column's base window
 *   bit 60      f64: digits only (windows off by the knob, or the column has left them)
 *   bit 61      f64: the column holds windows (exact_bins.h), not digits
 *   bit 62      the column was zeroed (at the thread's first binned batch)
 * (The batches still to send straight to the bins without trying the fast path are counted in
 * a register, Worker::bins_skip: a shared-memory word read before each batch's loads delayed
 * them by its latency.)
 * The kernel zeroes each thread's meta word at its start (Bins::init); the bins are zeroed
 * lazily, so kernels that never bin pay one store. Only the thread itself touches its column
 * until bins_fold, which adds the warp's columns into the block's superaccumulator (then the
 * block's usual spilled path rounds them once).
 * Invariant: thread t's exact sum = its expansion (a1, a2, wide_tail) + its column's value +
 * what it spilled. */
template <typename T> struct Bins {
    static constexpr bool F64 = sizeof(T) == 8;
    static constexpr int WORDS = F64 ? TBINS_F64_DIGITS : TBINS_F32_WORDS; /* bins, then meta */
    static constexpr int LO = TBINS_F64_LO; /* f64: digit 0's chunk in sacc */
    static constexpr unsigned ADDS = F64 ? TBINS_F64_ADDS : TBINS_F32_ADDS;
    static constexpr size_t BYTES = (size_t)(WORDS + 1) * kThreads * sizeof(long long);
    static constexpr unsigned long long kZeroed = 1ull << 62;
    static constexpr unsigned long long kWin = 1ull << 61;
    static constexpr unsigned long long kNoWin = 1ull << 60;
    /* f64 windows: a word's byte offset from its column is its index times kRow */
    static constexpr uint32_t kRow = (uint32_t)kThreads * 8u;
    static_assert(kRow == 1u << 11, "the window offsets (tbins_f64w_off256) assume 256 threads");
    /* batches sent straight to the bins after one the fast path rejected (Worker::bins_skip):
     * wide-range data then tries the fast path on one batch in 16 */
    static constexpr unsigned kSkip = 15;
    static __device__ __forceinline__ int64_t *col(int at)
    {
        return (int64_t *)(tcu_dyn_smem + at) + threadIdx.x;
    }
    /* windows: f64 columns may start in windows (REDUCE_BINS=2) */
    static __device__ __forceinline__ void init(int at, bool windows = false)
    {
        if (at >= 0) col(at)[WORDS * kThreads] = (F64 && !windows) ? (long long)kNoWin : 0ll;
    }
};

/* Every lane of the warp calls it (converged), once, after its last batch; returns the lane's
 * exact-sum flags that its bins hold (f32: tbins_f32_flags; f64: 0, its batches returned them).
 * f32: each of the 32 bins added into sacc by sacc_add_warp (lanes with nothing binned, and
 * bins holding NaN or inf, add 0). f64: the columns in windows add their words by
 * sacc_add_warp (words zero in every such lane skipped); each column in digits
 * normalised (its digits then in [0, 2^32) but the top one, whose magnitude is far below 2^32:
 * exact_bins.h), then lane L sums digit c = L, L + 32, L + 64 over the warp's used columns
 * (visiting column (L + k) mod 32 at step k: the lanes read 32 different columns, no bank
 * conflicts) and adds the sum (|sum| < 32 * 2^32) into sacc's chunk c + LO by one atomic. */
template <typename T> static __device__ __noinline__ uint32_t bins_fold(int at, unsigned long long *sacc)
{
    using B = Bins<T>;
    int64_t *mine = B::col(at);
    const bool used = ((unsigned long long)mine[B::WORDS * kThreads] & B::kZeroed) != 0;
    const unsigned mask = __ballot_sync(0xffffffffu, used);
    if (!mask) return 0u;
    if constexpr (!B::F64) {
        const double *bins = (const double *)mine;
        uint32_t flags = 0;
        for (int j = 0; j < TBINS_F32_WORDS; j++) {
            const double d = used ? bins[j * kThreads] : -0.0;
            int finite;
            flags |= tbins_f32_flags(d, &finite);
            sacc_add_warp(sacc, finite ? d : 0.0);
        }
        return flags;
    }
    const unsigned long long meta = (unsigned long long)mine[B::WORDS * kThreads];
    const bool win = used && (meta & B::kWin);
    if (__ballot_sync(0xffffffffu, win)) {
        const double *words = (const double *)mine;
        for (int k = 0; k < B::WORDS; k++) {
            const double d = win ? words[k * kThreads] : 0.0;
            if (__ballot_sync(0xffffffffu, d != 0.0)) sacc_add_warp(sacc, d);
        }
    }
    const unsigned dmask = mask & __ballot_sync(0xffffffffu, !win);
    if (!dmask) return 0u;
    if (used && !win) tbins_normalize(mine, kThreads, B::WORDS);
    __syncwarp(); /* the other lanes' columns, normalised, are visible from here */
    const int lane = threadIdx.x & 31;
    const int64_t *warp_cols = (const int64_t *)(tcu_dyn_smem + at) + (threadIdx.x & ~31);
    for (int c = lane; c < B::WORDS; c += 32) {
        int64_t sum = 0;
#pragma unroll 8
        for (int k = 0; k < 32; k++) {
            const int j = (lane + k) & 31;
            if (dmask >> j & 1u) sum += warp_cols[c * kThreads + j];
        }
        if (sum) atomicAdd(&sacc[c + B::LO], (unsigned long long)sum);
    }
    return 0u;
}

/* A batch into the thread's bins (defined after Worker, whose U it reads). */
template <typename T, unsigned M, bool OMIT>
__device__ __noinline__ uint32_t bins_batch_out(const Vec<T> *vbase, unsigned long long v,
                                                unsigned long long vend, int at,
                                                unsigned long long *sacc);

/* The third term of a thread's exact sum, which only the slow batches use (slow_batch_out):
 * one double per thread after the superaccumulator's digits in shared memory, +0 at start. */
__device__ __forceinline__ double *wide_tail(unsigned long long *sacc)
{
    return (double *)(sacc + TALLY_EXACT_CHUNKS) + threadIdx.x;
}

/* A rare spill, out of line (keeps the unrolled code around its call sites small). */
static __device__ __noinline__ void sacc_spill(unsigned long long *sacc, double x)
{
    sacc_add_finite(sacc, x);
}

/* The exact f32 sum's running sum a1 moved into the second term a2, so that a1 can start
 * again from near 0: a2 + a1 by a two-sum, whose error (a multiple of a1's grain, at most half
 * an ulp of the new a2) is a1's new start. The pair's sum is unchanged and nothing leaves the
 * thread: with the error put into the third term, nearly every thread spilled at the end (the
 * exact f32 sum of 2^30 prices was 2.7% behind the plain one). Only when a2 dwarfs a1 (after
 * a huge value) is the error not small (below 'small'); it then goes to the third term as
 * before, so that a1 still starts from 0. Rare; inline, as a call in the batch loop made the
 * f32 kernel spill more. */
__device__ __forceinline__ void f32_rebase(double &a1, double &a2, double small, unsigned long long *sacc)
{
    double e, e3;
    a2 = two_sum(a2, a1, e);
    a1 = e;
    if (fabs(e) < small) return;
    double *tail = wide_tail(sacc);
    *tail = two_sum(*tail, e, e3);
    if (e3 != 0.0) sacc_spill(sacc, e3);
    a1 = 0.0;
}

/* The per-thread worker: the State plus, for float sums and the variance pass, the exact
 * expansions (ea: sums or the high parts of squares; eb: the low parts). */
template <typename T, unsigned M, bool OMIT> struct Worker {
    static constexpr bool FL = Traits<T>::is_float;
    static constexpr bool EXACT = (FL && (M & TCU_F_SUM)) || (M & TCU_F_SQDEV);
    /* 16-byte vectors in flight per thread */
    static constexpr int U = 8;
    static constexpr bool SQ = (M & TCU_F_SQDEV) != 0;
    static constexpr int VEC = Traits<T>::vec;
    /* f32 sums: the fast path adds in plain f64 and proves the adds exact from the operands'
     * exponents (see add_batch); emin is the least f32 exponent field (at least 1) of the values
     * this thread has summed, so that its running sum is a multiple of 2^(emin - 150). */
    static constexpr bool F32SUM = sizeof(T) == 4 && FL && !SQ;
    /* f64 sums: a two-sum per element into a1, its errors added plainly into a2 and those adds
     * proved exact afterwards the same way (emin then is the least f64 exponent field). */
    static constexpr bool F64SUM = sizeof(T) == 8 && FL && !SQ;
    /* the kernels whose rejected batches may go into per-thread bins (knob REDUCE_BINS) */
    static constexpr bool BINS = EXACT && (F32SUM || F64SUM);
    static constexpr uint32_t kNoExp = sizeof(T) == 8 ? 2047u : 255u; /* emin: nothing yet */
    State<T, M, OMIT> s;
    Expansion ea, eb;
    double mean;
    uint32_t emin;
    bool fits; /* f32 sums: the last batch alone fitted the fast path's window (see add_batch) */
    /* bins on: batches still to send straight to the bins without trying the fast path
     * (Bins::kSkip after a batch the fast path rejected; 0 while the bins are off) */
    unsigned bins_skip;
    /* register windows (REDUCE_BINS=3: f64; 4: f32 too; exact_bins.h, tbins_rw_*, tbins_rw32_*):
     * the windows (f32: rw0 .. rw2), their base field (0: not chosen yet; kRwOff: off, by the
     * knob or for good), the values added since they were last moved out, and the batches they
     * turned away */
    static constexpr uint32_t kRwOff = 0xffffffffu;
    /* the kernels with register windows (none when built with TCU_RW=0, f32 not with
     * TCU_RW32=0: such ring kernels stay at 128 registers, where the windows' code spills) */
    static constexpr bool RW = TCU_RW && BINS && (F64SUM || (F32SUM && TCU_RW32));
    static constexpr unsigned kRwRejects = 8; /* turned away this often: off for good */
    double rw0, rw1, rw2, rw3;
    uint32_t rw_f;
    unsigned rw_n, rw_rej;

    __device__ __forceinline__ void init(double m)
    {
        s.init();
        ea.init();
        eb.init();
        mean = m;
        emin = kNoExp;
        fits = false;
        bins_skip = 0;
        rw0 = rw1 = rw2 = rw3 = 0.0;
        rw_f = kRwOff;
        rw_n = rw_rej = 0;
    }
    /* The register windows on (the kernel's bins knob says so); call after init. */
    __device__ __forceinline__ void rw_enable(bool on)
    {
        if constexpr (RW) rw_f = on ? 0u : kRwOff;
    }

    /* A whole batch (all U vectors in range, in registers) into the register windows, if every
     * value lies in their fields (exact_bins.h has the proofs); returns whether it did.
     * The first batch that fits 108 exponent fields chooses the windows' base (tbins_rw_base);
     * after kRwRejects batches turned away (full-range data: the first eight) the windows are
     * off for good, so that such threads pay one compare per batch. Values
     * are added in registers: no shared memory, 13 f64 adds (f32: a conversion and 9) and 3
     * integer ops per value, against the shared windows' two read-modify-writes (f32: one). */
    __device__ __forceinline__ bool rw_batch(const Vec<T> *x, unsigned long long *sacc)
    {
        if constexpr (RW) {
            if (rw_f == kRwOff) return false;
            uint32_t amin = 0xffffffffu, amax = 0u;
#pragma unroll
            for (int u = 0; u < U; u++) {
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    uint32_t a;
                    if constexpr (F64SUM) a = (uint32_t)__double2hiint((double)x[u].v[k]) & 0x7fffffffu;
                    else a = __float_as_uint((float)x[u].v[k]) & 0x7fffffffu;
                    amin = min(amin, a);
                    amax = max(amax, a);
                }
            }
            if (rw_f == 0u) {
                rw_f = F64SUM ? tbins_rw_base(amin >> 20, amax >> 20) : tbins_rw32_base(amin >> 23, amax >> 23);
                if (rw_f == 0u) { /* no base holds this batch: counted as turned away */
                    if (++rw_rej >= kRwRejects) rw_f = kRwOff;
                    return false;
                }
            }
            if (!(F64SUM ? tbins_rw_accepts(rw_f, amin, amax) : tbins_rw32_accepts(rw_f, amin, amax))) {
                if (++rw_rej >= kRwRejects) rw_f = kRwOff; /* the windows' sums stay, for flush */
                return false;
            }
            if (rw_n + (unsigned)(U * VEC) > TBINS_RW_ADDS) {
                rw_spill(sacc, rw0, rw1, rw2, rw3);
                rw0 = rw1 = rw2 = rw3 = 0.0;
                rw_n = 0;
            }
            if constexpr (F64SUM) {
                const double s0 = __longlong_as_double((long long)tbins_rw_sigma_bits(rw_f, 0));
                const double s1 = __longlong_as_double((long long)tbins_rw_sigma_bits(rw_f, 1));
                const double s2 = __longlong_as_double((long long)tbins_rw_sigma_bits(rw_f, 2));
#pragma unroll
                for (int u = 0; u < U; u++) {
#pragma unroll
                    for (int k = 0; k < VEC; k++) tbins_rw_add(&rw0, &rw1, &rw2, &rw3, s0, s1, s2, (double)x[u].v[k]);
                }
            } else {
                const double s0 = __longlong_as_double((long long)tbins_rw32_sigma_bits(rw_f, 0));
                const double s1 = __longlong_as_double((long long)tbins_rw32_sigma_bits(rw_f, 1));
#pragma unroll
                for (int u = 0; u < U; u++) {
#pragma unroll
                    for (int k = 0; k < VEC; k++) tbins_rw32_add(&rw0, &rw1, &rw2, s0, s1, (double)x[u].v[k]);
                }
            }
            rw_n += (unsigned)(U * VEC);
            s.xflags |= TALLY_EXACT_F_NONNEGZERO; /* every accepted value is nonzero and finite */
            return true;
        }
        return false;
    }
    /* Rare (a thread's 8192nd value): the windows into the block's superaccumulator, exactly. */
    static __device__ __noinline__ void rw_spill(unsigned long long *sacc, double a0, double a1, double a2, double a3)
    {
        if (a0 != 0.0) sacc_add_finite(sacc, a0);
        if (a1 != 0.0) sacc_add_finite(sacc, a1);
        if (a2 != 0.0) sacc_add_finite(sacc, a2);
        if (a3 != 0.0) sacc_add_finite(sacc, a3);
    }

    /* The exactness proofs' view of a value: |x|'s bits shifted out of the sign, minus one, so
     * that zero wraps to the top and an unsigned min finds the least nonzero magnitude. */
    using MagKey = typename std::conditional<sizeof(T) == 8, unsigned long long, uint32_t>::type;
    static __device__ __forceinline__ MagKey mag_key(T x)
    {
        if constexpr (sizeof(T) == 8) return ((unsigned long long)__double_as_longlong((double)x) << 1) - 1ull;
        else return (__float_as_uint((float)x) << 1) - 1u;
    }
    /* emin := min(emin, exponent field of the value whose key is lo); denormals count as 1
     * (their spacing is that of the least normals); NaN and inf give kNoExp, no constraint. */
    __device__ __forceinline__ void note_least(MagKey lo)
    {
        if (lo == (MagKey)~(MagKey)0) return; /* only zeros */
        uint32_t e = (uint32_t)((lo + 1) >> (sizeof(T) == 8 ? 53 : 24));
        emin = min(emin, e ? e : 1u);
    }
    /* The f64 fast path's cheaper view (one 32-bit key per element serves both the least and
     * the greatest magnitude): bits 31..62 of |x|'s bits minus one. Zeros (either sign) give
     * ~0, no constraint; a nonzero denormal gives an exponent field of 0, counted as 1; an
     * exact power of two gives its exponent field minus one (its bits minus one end in ones),
     * which claims less than is true: still sound. */
    static __device__ __forceinline__ uint32_t mag_key_hi(double x)
    {
        return (uint32_t)(((unsigned long long)__double_as_longlong(x) - 1ull) >> 31);
    }
    __device__ __forceinline__ void note_least_hi(uint32_t lo)
    {
        if (lo == ~0u) return; /* only zeros */
        uint32_t e = lo >> 21;
        emin = min(emin, e ? e : 1u);
    }
    static __device__ __forceinline__ double pow2(int k) /* 2^k, k clamped to -1022 .. 1023 */
    {
        k = k < -1022 ? -1022 : k > 1023 ? 1023 : k;
        return __longlong_as_double((long long)(k + 1023) << 52);
    }

    /* The value(s) element x contributes to the exact sums. */
    __device__ __forceinline__ void exact_values(T x, double &v0, double &v1)
    {
        double xd = (double)x;
        if constexpr (SQ) {
            double d = xd - mean;
            v0 = __dmul_rn(d, d);
            /* d * d == v0 + v1 exactly while v0 is finite; an infinite square adds +inf alone
             * (fma would give inf - inf = NaN), as on the CPU */
            v1 = isinf(v0) ? -0.0 : fma(d, d, -v0);
            if (OMIT && x != x) { v0 = -0.0; v1 = -0.0; }
        } else {
            v0 = (OMIT && x != x) ? -0.0 : xd;
            v1 = -0.0;
        }
    }

    /* One element, carefully (head, tail, and batches the fast path rejected). */
    __device__ __forceinline__ void exact_slow(T x, unsigned long long *sacc)
    {
        double v0, v1;
        exact_values(x, v0, v1);
        if (!isfinite(v0)) s.xflags |= exact_flags_of(v0); else ea.add_slow(v0, sacc);
        if constexpr (SQ) {
            if (!isfinite(v1)) s.xflags |= exact_flags_of(v1); else eb.add_slow(v1, sacc);
        }
    }

    /* Rare: the batch (vectors vbase[v + u * kThreads] below vend; global or shared memory)
     * with a third term and no proof. Runs on a copy of the worker (slow_batch_out), so that
     * this worker's address is never taken: a member call out of line would keep the whole
     * worker in local memory, stored to and loaded from on every batch. */
    __device__ __forceinline__ void slow_batch(const Vec<T> *vbase, unsigned long long v,
                                               unsigned long long vend, unsigned long long *sacc);

    __device__ __forceinline__ void add_scalar(T x, unsigned long long idx, unsigned long long *sacc)
    {
        s.add(x, idx);
        if constexpr (EXACT) exact_slow(x, sacc);
        if constexpr (EXACT && (F32SUM || F64SUM)) note_least(mag_key(x));
    }

    /* A whole batch straight from the ring's stage into the bins, not loaded into registers
     * first, when the thread sends its batches straight to the bins (bins_skip) and
     * nothing else needs the values: a sum alone, NaN not omitted (the count then needs
     * nothing either). The batch then crosses shared memory once instead of twice. Returns
     * whether it did. */
    static constexpr bool kBinsDirect = BINS && !OMIT && !(M & ~(unsigned)(TCU_F_SUM | TCU_F_COUNT));
    __device__ __forceinline__ bool bins_direct(const Vec<T> *stage, unsigned long long vfirst,
                                                unsigned long long vend, int bins_at, unsigned long long *sacc)
    {
        if constexpr (kBinsDirect) {
            if (bins_skip != 0) {
                bins_skip--;
                if constexpr (RW) {
                    if (rw_f != kRwOff) { /* whole batches here: vend is the stage's end */
                        Vec<T> x[U];
#pragma unroll
                        for (int u = 0; u < U; u++) x[u] = stage[vfirst + (unsigned long long)u * kThreads];
                        if (rw_batch(x, sacc)) return true;
                    }
                }
                s.xflags |= bins_batch_out<T, M, OMIT>(stage, vfirst, vend, bins_at, sacc);
                return true;
            }
        }
        return false;
    }

    /* U vectors (ok[u]: vector u is in range); idx0[u]: index of its first element; vector u
     * is still at vbase[vfirst + u * kThreads] if in range (below vend). REBASE: see the f32
     * sums' fast path (the ring kernels, whose threads sum many batches). */
    template <bool REBASE>
    __device__ __forceinline__ void add_batch(const Vec<T> *v, const bool *ok,
                                              const unsigned long long *idx0,
                                              unsigned long long *sacc, const Vec<T> *vbase,
                                              unsigned long long vfirst, unsigned long long vend,
                                              int bins_at)
    {
        if constexpr (M & ~(unsigned)(TCU_F_SQDEV | (FL ? TCU_F_SUM : 0u))) {
#pragma unroll
            for (int u = 0; u < U; u++)
                if (ok[u]) {
#pragma unroll
                    for (int k = 0; k < VEC; k++) s.add(v[u].v[k], idx0[u] + k);
                }
        }
        /* bins on (bins_at >= 0) and a batch rejected lately: straight to the bins (where
         * bins_direct does that before the batch is loaded, not again here: a partial last
         * batch then tries the fast path, exact or redone like any other) */
        if constexpr (BINS && !kBinsDirect) {
            if (bins_skip != 0) {
                bins_skip--;
                if (!(ok[U - 1] && rw_batch(v, sacc))) /* ok[]: a prefix of the vectors */
                    s.xflags |= bins_batch_out<T, M, OMIT>(vbase, vfirst, vend, bins_at, sacc);
                return;
            }
        }
        if constexpr (EXACT && F32SUM) {
            /* Fast path for f32: plain f64 adds, kept only if proved exact afterwards. The proof:
             *  - q = emin - 150, emin (>= 1) the least f32 exponent field of every value this
             *    thread has summed, this batch included: every value is a multiple of 2^q, and
             *    by induction so is every exact partial sum of a1.
             *  - A multiple of 2^q of magnitude below 2^(q+53) = 2^(emin-97) is a double, so an
             *    add whose exact result stays below that is exact.
             *  - Every partial sum of the batch is at most |a1 before| + 32 max|x| in magnitude,
             *    and max|x| < 2^(emax - 126) (emax: the batch's greatest exponent field), so
             *    |a1 before| + 2^(emax - 121) < 2^(emin - 97) proves every add exact. The
             *    threshold is a double and rounding monotone: a rounded left side cannot pass
             *    when the exact one does not.
             *  - NaN and inf make a1 NaN or inf (or are omitted as -0), which fails the test.
             * A batch that fails is redone by slow_batch_out, exact by construction.
             * Per element: one f64 add (a two-sum is six, on the same half-rate pipe), an f32 max
             * of |x| and two integer ops for the least nonzero |x| (zeros wrap to the top).
             * The window 2^(emin - 97) does not grow with the running sum: once a1 fills an
             * eighth of it, and the last batch alone fitted in it, a1 moves into a2 by an exact
             * two-sum whose error (a multiple of 2^q) is a1's new start (f32_rebase), so that
             * batches fit again however many values a thread sums. At half the window a thread
             * whose least value came late (the window halves with each binade emin drops) sent
             * its next batch to the slow path; at an eighth that is rare (docs/performance.md).
             * Wide-range batches never fit, so they never move it. Only in the ring kernels,
             * whose threads sum many batches (the f32 kernel without the ring has 64 registers
             * and spilled more with it). */
            if (REBASE && fits && !(fabs(ea.a1) < pow2((int)emin - 100)))
                f32_rebase(ea.a1, ea.a2, pow2((int)emin - 104), sacc);
            const double a1_before = ea.a1;
            MagKey lo = ~(MagKey)0;
            float hi = 0.0f;
#pragma unroll
            for (int u = 0; u < U; u++) {
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    T x = v[u].v[k];
                    bool skip = !ok[u] || (OMIT && x != x);
                    lo = min(lo, mag_key(x));
                    hi = fmaxf(hi, fabsf((float)x)); /* NaN is ignored here, caught below */
                    ea.a1 = __dadd_rn(ea.a1, skip ? -0.0 : (double)x);
                }
            }
            static_assert(U * VEC == 32, "the bound below counts 32 values per batch");
            note_least(lo);
            const int emax = (int)((__float_as_uint(hi) >> 23) & 0xffu);
            if constexpr (REBASE) fits = pow2(emax - 121) < pow2((int)emin - 99);
            bool bad = !(fabs(a1_before) + pow2(emax - 121) < pow2((int)emin - 97)) || !isfinite(ea.a1);
            if (bad) {
                /* the adaptive setting's "wide" only where the batch alone overfills half the
                 * window (wide-range data); a full a1 (a late, smaller least value: the rebase
                 * above catches up) happens now and then on price-like data too */
                if (!(pow2(emax - 121) < pow2((int)emin - 98)) || !isfinite(ea.a1)) s.xflags |= kSlowFlag;
                ea.a1 = a1_before;
                if (bins_at >= 0) {
                    bins_skip = Bins<T>::kSkip;
                    if (!(ok[U - 1] && rw_batch(v, sacc)))
                        s.xflags |= bins_batch_out<T, M, OMIT>(vbase, vfirst, vend, bins_at, sacc);
                } else {
                    slow_batch(vbase, vfirst, vend, sacc);
                }
            }
        } else if constexpr (EXACT && F64SUM) {
            /* Fast path for f64: a two-sum per element into a1; its exact errors e go into a2 by
             * plain adds, kept only if these adds are proved exact afterwards. The proof:
             *  - q = emin - 1075, emin (>= 1) the least exponent field of every value this thread
             *    has summed, this batch included. Values are multiples of 2^q; so are a1 (a
             *    multiple of 2^q below 2^(q+53) is a double, so rounding is exact there, and
             *    above it the rounding's ulp is a multiple of 2^q), every two-sum error e, and a2
             *    (by induction, while its adds are exact).
             *  - A sum of two multiples of 2^q of magnitude <= 2^(q+53) = 2^(emin-1022) is a
             *    double: a2's adds are exact while every partial sum of a2 stays within that.
             *  - |e_i| <= 2^-53 |a1_i| and |a1_i| <= (|a1 before| + i M)(1 + 2^-52)^i for M >=
             *    max |x| and i <= 32, so every partial |a2| <= |a2 before| + 2^-48 (|a1 before| +
             *    32 M)(1 + 2^-47) < 2 B, B being that bound computed in f64 (relative error below
             *    2^-50). M = hi is above every |x| except for exponent field 2046, where pow2's
             *    clamp at 2^1023 can halve it: then partial |a2| < 4 B.
             *  - So B < 2^(emin - 1024) proves every add exact. 2^(emin-1024) is a double (made as
             *    pow2(emin - 1022) / 4, since pow2 stops at 2^-1022) and rounding is monotone, so
             *    a rounded B cannot pass the test when B does not.
             *  - Overflow: a1 or a2 infinite fails the test; while a1_i is finite the two-sums'
             *    intermediate values are bounded by |a1_i| + |x| and stay finite.
             * A batch that fails is redone by slow_batch_out, exact by construction.
             * When the running sum dominates the batch (|a1 before| >= 34 M, so |a1| > 34 M -
             * 31 M (1 + 2^-47) > |x| at every add of at most 32 values), the two-sum is Fast2Sum's
             * three ops instead of six: four f64 ops per element instead of seven. The warp
             * takes one path (a vote), so summing a zero-mean series costs a vote more, not both. */
            const double a1_before = ea.a1, a2_before = ea.a2;
            /* lo: the least nonzero |x| (mag_key_hi); khi: one more than the greatest key, so
             * zeros give 0 (NaN and inf are caught below). Integer ops, not an f64 max: the
             * exact f64 sum 2^20 9.01 -> 8.78 us, 2^26 128.07 -> 126.87 (H200, CUDA graphs). */
            uint32_t lo = ~0u, khi = 0;
#pragma unroll
            for (int u = 0; u < U; u++) {
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    const uint32_t key = mag_key_hi(v[u].v[k]);
                    lo = min(lo, key);
                    khi = max(khi, key + 1u);
                }
            }
            /* above every |x|: (khi >> 21) is at least each exponent field (the + 1 can only
             * carry upwards), and |x| < 2^(E - 1022) */
            const double hi = khi ? pow2((int)(khi >> 21) - 1022) : 0.0;
            auto add_all = [&](auto add2) { /* add2: two_sum or fast_two_sum */
#pragma unroll
                for (int u = 0; u < U; u++) {
#pragma unroll
                    for (int k = 0; k < VEC; k++) {
                        T x = v[u].v[k];
                        double e;
                        ea.a1 = add2(ea.a1, (!ok[u] || (OMIT && x != x)) ? -0.0 : (double)x, e);
                        ea.a2 = __dadd_rn(ea.a2, e);
                    }
                }
            };
            if (__all_sync(__activemask(), fabs(a1_before) >= 34.0 * hi))
                add_all([](double a, double b, double &e) { return fast_two_sum(a, b, e); });
            else
                add_all([](double a, double b, double &e) { return two_sum(a, b, e); });
            static_assert(U * VEC <= 32, "the bounds here count at most 32 values per batch");
            note_least_hi(lo);
            const double bound = fabs(a2_before) + 0x1p-48 * (fabs(a1_before) + 32.0 * hi);
            bool bad = !(bound < 0.25 * pow2((int)emin - 1022)) || !isfinite(ea.a1) || !isfinite(ea.a2);
            if (bad) {
                s.xflags |= kSlowFlag;
                ea.a1 = a1_before;
                ea.a2 = a2_before;
                if (bins_at >= 0) {
                    bins_skip = Bins<T>::kSkip;
                    if (!(ok[U - 1] && rw_batch(v, sacc)))
                        s.xflags |= bins_batch_out<T, M, OMIT>(vbase, vfirst, vend, bins_at, sacc);
                } else {
                    slow_batch(vbase, vfirst, vend, sacc);
                }
            }
        } else if constexpr (EXACT) {
            /* Fast path: plain f64 adds with their errors checked (squares: two terms whose
             * second-level error is rare). */
            Expansion sa = ea, sb = eb;
            bool bad = false;
#pragma unroll
            for (int u = 0; u < U; u++) {
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    double v0, v1;
                    exact_values(v[u].v[k], v0, v1);
                    if (!ok[u]) { v0 = -0.0; v1 = -0.0; }
                    double e, e2;
                    ea.a1 = two_sum(ea.a1, v0, e);
                    ea.a2 = two_sum(ea.a2, e, e2);
                    bad |= (e2 != 0.0);
                    if constexpr (SQ) {
                        eb.a1 = two_sum(eb.a1, v1, e);
                        eb.a2 = two_sum(eb.a2, e, e2);
                        bad |= (e2 != 0.0);
                    }
                }
            }
            bad |= !isfinite(ea.a1);
            if constexpr (SQ) bad |= !isfinite(eb.a1);
            if (bad) {
                ea = sa;
                eb = sb;
                slow_batch(vbase, vfirst, vend, sacc);
            }
        }
    }

    /* The thread's exact sums into its state (one pair), its bins into sacc (bins_at >= 0:
     * every lane of the warp calls it, converged). */
    __device__ __forceinline__ void flush(unsigned long long *sacc, int bins_at)
    {
        if constexpr (BINS) {
            if (bins_at >= 0) s.xflags |= bins_fold<T>(bins_at, sacc);
            if constexpr (RW) { /* the register windows (zero where unused) */
                if (bins_at >= 0 && __ballot_sync(0xffffffffu, rw_n != 0)) {
                    sacc_add_warp(sacc, rw0);
                    sacc_add_warp(sacc, rw1);
                    sacc_add_warp(sacc, rw2);
                    if constexpr (F64SUM) sacc_add_warp(sacc, rw3);
                }
            }
        }
        if constexpr (EXACT) {
            s.xh = ea.a1;
            s.xl = ea.a2;
            /* a1 starts at -0 and stays -0 only while every value added was -0; a2 is nonzero
             * only after a nonzero value (a rebase, or a slow batch's error) */
            if (__double_as_longlong(ea.a1) != (long long)0x8000000000000000ull || ea.a2 != 0.0)
                s.xflags |= TALLY_EXACT_F_NONNEGZERO;
            /* f32: after a rebase (or a slow batch) a2 can be the larger term; the pair as
             * (high, low) with the low part below half an ulp of the high one, so that the
             * merges' plain adds of low parts stay exact (exact_tree_plain) */
            if constexpr (F32SUM)
                if (ea.a2 != 0.0) s.xh = two_sum(ea.a2, ea.a1, s.xl);
            if constexpr (SQ) xcombine(s.xh, s.xl, eb.a1, eb.a2, sacc);
            const double t = *wide_tail(sacc); /* nonzero only after slow batches */
            if (t != 0.0) sacc_add_finite(sacc, t);
        }
    }
};

/* Out of line, on its own copy of the worker's exact state (see Worker::slow_batch). The batch
 * is reloaded (from the ring's stage, or L1/L2), not taken from the registers: the fast paths
 * would then have to keep them to their end (spills in the exact kernels' main loops). The
 * values go into a1 + a2 + a3 by three two-sums each, with no branch per element, a3 being the
 * thread's wide_tail: values of a wide exponent range then leave no error beyond the third
 * term, where two terms spilled one into the superaccumulator's shared-memory atomics at nearly
 * every element (the exact f64 sum of values 2^-40 .. 2^40 at 2^28 took 10.7 ms on the H200,
 * the plain sum 0.47). A batch that leaves a third-order error, or meets NaN, inf or overflow,
 * is redone element by element with a spill wherever one is due. */
template <typename T, unsigned M, bool OMIT>
__device__ __noinline__ void slow_batch_out(const Vec<T> *vbase, unsigned long long v,
                                            unsigned long long vend, unsigned long long *sacc,
                                            double mean, Expansion *ea, Expansion *eb, uint32_t *xflags)
{
    using W = Worker<T, M, OMIT>;
    W w;
    w.s.init();
    w.ea = *ea;
    w.eb = *eb;
    w.s.xflags = *xflags;
    w.mean = mean;
    double *tail = wide_tail(sacc);
    double a3 = *tail;
    bool bad = false;
    int nvec = 0; /* vectors u < nvec are in range */
    for (int u = 0; u < W::U; u++) nvec += v + (unsigned long long)u * kThreads < vend;
    const Vec<T> *first = vbase + v;
#pragma unroll 2
    for (int u = 0; u < nvec; u++) {
        const Vec<T> x = first[u * kThreads]; /* a generic load: shared or global memory */
#pragma unroll
        for (int k = 0; k < Traits<T>::vec; k++) {
            double v0, v1, e1, e2, e3;
            w.exact_values(x.v[k], v0, v1);
            w.ea.a1 = two_sum(w.ea.a1, v0, e1);
            w.ea.a2 = two_sum(w.ea.a2, e1, e2);
            a3 = two_sum(a3, e2, e3);
            bad |= e3 != 0.0;
            if constexpr (W::SQ) {
                w.eb.a1 = two_sum(w.eb.a1, v1, e1);
                w.eb.a2 = two_sum(w.eb.a2, e1, e2);
                bad |= e2 != 0.0;
            }
        }
    }
    bad |= !isfinite(w.ea.a1) || !isfinite(w.ea.a2) || !isfinite(a3);
    if constexpr (W::SQ) bad |= !isfinite(w.eb.a1) || !isfinite(w.eb.a2);
    if (bad) {
        w.ea = *ea;
        w.eb = *eb;
        a3 = *tail;
#pragma unroll 1
        for (int u = 0; u < nvec; u++) {
            const Vec<T> x = first[u * kThreads];
#pragma unroll 1
            for (int k = 0; k < Traits<T>::vec; k++) {
                double v0, v1;
                w.exact_values(x.v[k], v0, v1);
                if (!isfinite(v0)) {
                    w.s.xflags |= exact_flags_of(v0);
                } else {
                    double e1, e2, e3;
                    double t = two_sum(w.ea.a1, v0, e1);
                    if (!isfinite(t)) { /* the sum left the f64 range */
                        sacc_spill(sacc, v0);
                    } else {
                        w.ea.a1 = t;
                        w.ea.a2 = two_sum(w.ea.a2, e1, e2);
                        a3 = two_sum(a3, e2, e3);
                        if (e3 != 0.0) sacc_spill(sacc, e3);
                    }
                }
                if constexpr (W::SQ) {
                    if (!isfinite(v1)) w.s.xflags |= exact_flags_of(v1);
                    else w.eb.add_slow(v1, sacc);
                }
            }
        }
    }
    *tail = a3;
    *ea = w.ea;
    *eb = w.eb;
    *xflags = w.s.xflags;
}

/* Rare: the thread's f64 windows into the block's superaccumulator, exactly (its own atomics),
 * and the column zeroed (so it is also an empty column of digits). */
static __device__ __noinline__ void bins_move_windows(int at, unsigned long long *sacc)
{
    double *w = (double *)Bins<double>::col(at);
    for (int k = 0; k < Bins<double>::WORDS; k++) {
        const double d = w[k * kThreads];
        if (d != 0.0) sacc_add_finite(sacc, d);
        w[k * kThreads] = 0.0;
    }
}

/* A batch (vectors vbase[v + u * kThreads] below vend, as slow_batch_out) into the thread's bins
 * (the caller counts Worker::bins_skip). Returns
 * exact-sum flags: f64, those of the batch's values (NaN and inf set their flags and add
 * nothing, an omitted NaN counts as -0, every other value not -0 sets NONNEGZERO, as a1 would
 * have shown it); f32, those of the bins emptied here (the values' own flags stay in the bins
 * until bins_fold: exact_bins.h). Before the batch could take a column past its add budget (at
 * most U * VEC adds come, U * VEC / 2 per f32 set), the column is normalised (f64 digits) or
 * emptied into sacc (f32, f64 windows).
 * f64 windows: a column whose windows are allowed (not kNoWin) takes its base from its first
 * batch's windows (tbins_f64w_base; digits if none holds them); a batch whose every value lies
 * in the column's windows goes there (per value: its window's byte offset from the bits in two
 * ops, a subtraction of the base checked by one unsigned max for the whole batch, the hi bits
 * by one and, lo by one f64 subtraction, two f64 adds); the first batch that strays moves the
 * windows into sacc and turns the column into digits for the rest of the kernel. */
template <typename T, unsigned M, bool OMIT>
__device__ __noinline__ uint32_t bins_batch_out(const Vec<T> *vbase, unsigned long long v,
                                                unsigned long long vend, int at,
                                                unsigned long long *sacc)
{
    using B = Bins<T>;
    constexpr int VEC = Traits<T>::vec;
    constexpr int U = Worker<T, M, OMIT>::U;
    static_assert(U * VEC <= 32, "a batch is at most 32 adds (the budget check below)");
    constexpr unsigned kAddsPerBatch = B::F64 ? U * VEC : U * VEC / TBINS_F32_SETS;
    int64_t *col = B::col(at);
    double *fcol = (double *)col; /* f32: the windows' doubles */
    unsigned long long meta = (unsigned long long)col[B::WORDS * kThreads];
    /* vectors u < nvec are in range (all U but in the last, partial batch) */
    int nvec = U;
    if (v + (unsigned long long)(U - 1) * kThreads >= vend) {
        nvec = 0;
        for (int u = 0; u < U; u++) nvec += v + (unsigned long long)u * kThreads < vend;
    }
    const Vec<T> *first = vbase + v;
    /* every load first (generic loads: the ring's stage or global memory, where one at a time
     * would pay the latency eight times) */
    Vec<T> x[U];
#pragma unroll
    for (int u = 0; u < U; u++)
        if (u < nvec) x[u] = first[u * kThreads];
    if constexpr (B::F64) {
        if (!(meta & B::kNoWin)) {
            if (!(meta & B::kZeroed)) { /* the first batch: the windows' base, or digits */
                uint32_t jmin = 255u, jmax = 0u;
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (u >= nvec) break;
#pragma unroll
                    for (int k = 0; k < VEC; k++) {
                        const uint32_t j = tbins_f64w_window((uint32_t)((uint64_t)__double_as_longlong((double)x[u].v[k]) >> 32));
                        jmin = min(jmin, j);
                        jmax = max(jmax, j);
                    }
                }
                const int b = tbins_f64w_base(jmin, jmax);
                tbins_zero(col, kThreads, B::WORDS);
                meta = B::kZeroed | (b >= 0 ? B::kWin | ((unsigned long long)b << 32) : B::kNoWin);
            }
            if (meta & B::kWin) {
                const uint32_t base_off = ((uint32_t)(meta >> 32) & 0xffu) * B::kRow;
                uint32_t rel[U][VEC], relmax = 0;
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (u >= nvec) break;
#pragma unroll
                    for (int k = 0; k < VEC; k++) {
                        const uint32_t bh = (uint32_t)__double2hiint((double)x[u].v[k]);
                        rel[u][k] = tbins_f64w_off256(bh) - base_off; /* (window - base) * kRow */
                        relmax = max(relmax, rel[u][k]);
                    }
                }
                if (relmax < (uint32_t)TBINS_F64W_WINDOWS * B::kRow) {
                    unsigned count = (unsigned)meta;
                    if (count + kAddsPerBatch > TBINS_F64W_ADDS) {
                        bins_move_windows(at, sacc);
                        count = 0;
                    }
                    char *cb = (char *)col;
#pragma unroll
                    for (int u = 0; u < U; u++) {
                        if (u >= nvec) break;
#pragma unroll
                        for (int k = 0; k < VEC; k++) {
                            const double xv = (double)x[u].v[k];
                            tbins_add_f64w_at(cb, rel[u][k], (uint32_t)TBINS_F64W_WINDOWS * B::kRow,
                                              (uint32_t)__double2hiint(xv), (uint32_t)__double2loint(xv));
                        }
                    }
                    count += (unsigned)nvec * VEC;
                    col[B::WORDS * kThreads] = (long long)((meta & ~0xffffffffull) | count);
                    return nvec > 0 ? (uint32_t)TALLY_EXACT_F_NONNEGZERO : 0u;
                }
                /* a stray batch: the windows out, digits from here on (the column is zero) */
                bins_move_windows(at, sacc);
                meta = B::kZeroed | B::kNoWin;
            }
        }
    }
    if (!(meta & B::kZeroed)) {
        if constexpr (B::F64) tbins_zero(col, kThreads, B::WORDS);
        else tbins_zero_f32(fcol, kThreads);
        meta |= B::kZeroed;
    }
    unsigned count = (unsigned)meta;
    uint32_t flags = 0;
    if (count + kAddsPerBatch > B::ADDS) {
        if constexpr (B::F64) {
            tbins_normalize(col, kThreads, B::WORDS);
        } else { /* the bins into the block's superaccumulator, exactly (a thread's own atomics) */
            for (int j = 0; j < TBINS_F32_WORDS; j++) {
                const double d = fcol[j * kThreads];
                int finite;
                flags |= tbins_f32_flags(d, &finite);
                if (finite) sacc_add_finite(sacc, d);
                fcol[j * kThreads] = -0.0;
            }
        }
        count = 0;
    }
    if constexpr (!B::F64) {
        /* no check per value (exact_bins.h): NaN and inf go into bin 15 and -0 keeps a bin -0;
         * only a sum that omits NaN maps each NaN to -0 first */
        auto bits = [](T y) {
            uint32_t b = __float_as_uint((float)y);
            if (OMIT && (b & 0x7fffffffu) > 0x7f800000u) b = 0x80000000u;
            return b;
        };
        static_assert(VEC % 2 == 0, "f32 values go in pairs, one to each set");
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (u >= nvec) break;
#pragma unroll
            for (int k = 0; k < VEC; k += 2)
                tbins_add_f32_2(fcol, kThreads, bits(x[u].v[k]), bits(x[u].v[k + 1]));
        }
        count += (unsigned)nvec * (VEC / TBINS_F32_SETS);
    } else {
        /* One look at the batch: the greatest exponent field (the one the adds extract too).
         * 2047: some NaN or inf; otherwise some field >= 1 means some value is not +-0, so not -0
         * (NONNEGZERO); only a batch of zeros and subnormals needs a look at every bit. Without
         * specials the adds take the bits as they are, with no check per value. */
        uint32_t emax = 0;
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (u >= nvec) break;
#pragma unroll
            for (int k = 0; k < VEC; k++)
                emax = max(emax, (uint32_t)((uint64_t)__double_as_longlong((double)x[u].v[k]) >> 52) & 0x7ffu);
        }
        if (emax != 0x7ffu) {
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (u >= nvec) break;
#pragma unroll
                for (int k = 0; k < VEC; k++) tbins_add_f64(col, kThreads, (uint64_t)__double_as_longlong((double)x[u].v[k]));
            }
            bool nonneg = emax != 0;
            if (!nonneg) { /* rare: zeros and subnormals only */
#pragma unroll 1
                for (int u = 0; u < nvec; u++)
                    for (int k = 0; k < VEC; k++)
                        nonneg |= (uint64_t)__double_as_longlong((double)first[u * kThreads].v[k]) != 0x8000000000000000ull;
            }
            if (nonneg) flags |= TALLY_EXACT_F_NONNEGZERO;
        } else { /* rare: each value checked, read again (a second unrolled copy would double the code) */
            bool nonneg = false;
#pragma unroll 1
            for (int u = 0; u < nvec; u++) {
                const Vec<T> y = first[u * kThreads];
#pragma unroll 1
                for (int k = 0; k < VEC; k++) {
                    uint64_t b = (uint64_t)__double_as_longlong((double)y.v[k]);
                    if (((b >> 52) & 0x7ff) == 0x7ff) {
                        if (!(OMIT && y.v[k] != y.v[k])) flags |= exact_flags_of((double)y.v[k]);
                        b = 0x8000000000000000ull;
                    }
                    nonneg |= b != 0x8000000000000000ull;
                    tbins_add_f64(col, kThreads, b);
                }
            }
            if (nonneg) flags |= TALLY_EXACT_F_NONNEGZERO;
        }
        count += (unsigned)nvec * VEC;
    }
    col[B::WORDS * kThreads] = (long long)((meta & ~0xffffffffull) | count);
    return flags;
}

template <typename T, unsigned M, bool OMIT>
__device__ __forceinline__ void Worker<T, M, OMIT>::slow_batch(const Vec<T> *vbase, unsigned long long v,
                                                               unsigned long long vend, unsigned long long *sacc)
{
    Expansion a = ea, b = eb;
    uint32_t f = s.xflags;
    slow_batch_out<T, M, OMIT>(vbase, v, vend, sacc, mean, &a, &b, &f);
    ea = a;
    eb = b;
    s.xflags = f;
}

} // namespace tcu

#endif
