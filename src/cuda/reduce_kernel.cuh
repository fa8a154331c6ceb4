/* One-launch reductions, layered thread -> warp -> block -> device.
 *
 * Thread: each block takes an even share of whole batches (256 threads x 8 vectors); a thread
 * issues its batch's eight 16-byte loads (no bounds checks but in the last batch) before it
 * folds the elements into a State (only the members its feature mask M asks for are touched).
 * For large inputs the kernels instead receive their batches in shared memory, through a ring
 * of stages that one thread fills with bulk copies (cp.async.bulk) well ahead of use.
 * Float sums are exact: f32 values are added in plain f64 and the adds proved exact from the
 * values' exponents; f64 values and squares keep a two-term expansion per thread. A batch whose
 * adds cannot be proved exact (wide-range values) goes through a three-term expansion, and the
 * rare errors beyond it spill into the block's shared-memory superaccumulator (core/exact_sum.h
 * layout); a batch that meets NaN, inf or overflow is redone element by element. Warp: the
 * members of the State that the mask uses are shuffled (the exact sums by plain adds where
 * those are exact). Block: warp states through shared memory. Device:
 * every block writes its partial and takes an atomic ticket (release/acquire); the last block
 * to finish combines the partials with the same merge code, writes the results and resets the
 * ticket: one launch, no host synchronisation, capturable in a CUDA graph. Small integer sums
 * and a min or max alone skip the partials: the blocks fold into one word by atomics (packable,
 * extreme_only). Launched with programmatic dependent launch (sm90.cuh), so the launch
 * overlaps the end of the kernel before it. */
#ifndef TALLY_CUDA_REDUCE_KERNEL_CUH
#define TALLY_CUDA_REDUCE_KERNEL_CUH

#include <cstddef>
#include <type_traits>
#include "cuda/exact.cuh"
#include "cuda/sm90.cuh"
#include "cuda/reduce_worker.cuh"
#include "cuda/reduce_result.cuh"

namespace tcu {

/* The last block's rare step: the superaccumulators of the blocks that spilled (their partials'
 * xflags have kSpilledFlag) added into sacc. Warp w takes the blocks b = w mod kWarps, its
 * lanes the digits lane, lane + 32 and lane + 64, and adds its sums with one atomic per digit
 * at the end: with wide-range values every block spills, and one thread per block adding its
 * digits one atomic at a time would serialise the last block on hundreds of blocks' digits. */
static __device__ __noinline__ void add_spilled_partials(unsigned grid, const void *partials,
                                                         const long long *xpartials, unsigned long long *sacc,
                                                         size_t xflags_offset)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const bool has2 = lane + 64 < TALLY_EXACT_CHUNKS;
    long long d0 = 0, d1 = 0, d2 = 0;
    constexpr int G = 4; /* blocks' flags, then digits, in flight at once */
    for (unsigned b0 = warp; b0 < grid; b0 += G * kWarps) {
        uint32_t f[G];
#pragma unroll
        for (int j = 0; j < G; j++) {
            const unsigned b = b0 + j * kWarps;
            f[j] = b < grid ? __ldcg((const uint32_t *)((const char *)partials + (size_t)b * TCU_PARTIAL_BYTES +
                                                        xflags_offset))
                            : 0u;
        }
#pragma unroll
        for (int j = 0; j < G; j++) {
            if (!(f[j] & kSpilledFlag)) continue;
            const long long *src = xpartials + (size_t)(b0 + j * kWarps) * TALLY_EXACT_CHUNKS;
            d0 += __ldcg(src + lane);
            d1 += __ldcg(src + lane + 32);
            if (has2) d2 += __ldcg(src + lane + 64);
        }
    }
    if (d0) atomicAdd(&sacc[lane], (unsigned long long)d0);
    if (d1) atomicAdd(&sacc[lane + 32], (unsigned long long)d1);
    if (has2 && d2) atomicAdd(&sacc[lane + 64], (unsigned long long)d2);
}

/* Whether the block's superaccumulator holds anything (every thread of the block calls it).
 * The first barrier lets every spill of every warp land before any thread reads its digit: a
 * thread that read its digit on the way into the barrier could miss a spill that another warp,
 * still merging, had not made yet, and the block then dropped its superaccumulator (sums off by
 * whole terms, at random, since it depends on the warps' timing). */
__device__ __forceinline__ bool block_spilled(const unsigned long long *sacc)
{
    __syncthreads();
    return __syncthreads_or(threadIdx.x < TALLY_EXACT_CHUNKS && sacc[threadIdx.x] != 0);
}

/* Blocks per SM a kernel is compiled for (so its register budget): the exact f32 sum 64
 * registers (some spills), the other exact sums 80, the fused masks and the ring kernels 128
 * (the ring runs one block per SM by default; ring=3 still fits two), but the exact float
 * sums' ring kernels 255: their register windows (Worker::rw_batch) hold up to 11 more
 * registers across the batch loop, which spilled at 128 (with the bins' shared memory they ran
 * one block per SM anyway; ptxas -v: f64 sum 184 registers, f32 206, no spills). */
template <typename T, unsigned M, bool OMIT, bool RING> constexpr int reduce_min_blocks()
{
    if (RING) return Worker<T, M, OMIT>::RW ? 1 : 2;
    if (Worker<T, M, OMIT>::EXACT) return M != TCU_MASK_SUM ? 2 : sizeof(T) == 4 && !OMIT ? 4 : 3;
    return 4;
}

/* RING: whole batches reach shared memory by bulk copies through a ring of p.ring_stages
 * stages of one batch (32 KB) each, issued by thread 0 ahead of use, so the bytes in flight
 * do not depend on the registers (one block per SM has 192 KB coming). */
template <typename T, unsigned M, bool OMIT, bool RING>
__global__ void __launch_bounds__(kThreads, (reduce_min_blocks<T, M, OMIT, RING>())) reduce_kernel(const __grid_constant__ tcu_reduce_params p)
{
    using W = Worker<T, M, OMIT>;
    using S = State<T, M, OMIT>;
    constexpr int VEC = Traits<T>::vec;
    constexpr bool EXACT = W::EXACT;
    static_assert(sizeof(S) <= TCU_PARTIAL_BYTES, "partial state too large");
    static_assert(sizeof(S) % 16 == 0, "partials are read in 16-byte words");
    /* the block's superaccumulator, then the threads' wide_tail terms */
    __shared__ unsigned long long sacc[EXACT ? TALLY_EXACT_CHUNKS + kThreads : 1];
    __shared__ S wstate[kWarps];
    __shared__ bool am_last;
    __shared__ bool spill_any; /* the last block: some block spilled */
    __shared__ uint64_t full[RING ? kMaxRingStages : 1];
    extern __shared__ __align__(128) unsigned char ring_smem[];

    const int tid = threadIdx.x;
    const unsigned bid = blockIdx.x, grid = gridDim.x;
    const T *data = (const T *)p.data;
    if constexpr (EXACT) {
        for (int c = tid; c < TALLY_EXACT_CHUNKS + kThreads; c += kThreads) sacc[c] = 0;
    }
    if constexpr (RING) {
        if (tid == 0)
            for (int i = 0; i < p.ring_stages; i++) mbar_init(&full[i], 1);
    }
    if constexpr (EXACT || RING) __syncthreads();
    W w;
    /* the exact sums' bins (Bins, reduce_worker.cuh): -1 when off or not this kernel's kind.
     * Only the ring kernels (large inputs) have them: in the others (64 registers for the f32
     * sum) the bins' code alone made the fast path spill more. */
    const int bins_at = (W::BINS && RING && p.bins >= 0) ? (p.bins & ~7) : -1;
    if constexpr (W::BINS) Bins<T>::init(bins_at, (p.bins & 1) != 0); /* bit 0: f64 windows */
    /* the kernel before this one (PDL) has finished: global memory may be touched from here */
    pdl_wait();
    pdl_trigger();
    /* the speculative sum launched just before answered (spec_sum.cuh): nothing to do; a
     * uniform branch, since every thread reads the same flag, written by the finished kernel */
    if (p.spec != nullptr && __ldcg(p.spec + 1) != 0u) return;
    double mean = 0.0;
    if constexpr (W::SQ) mean = p.aux->mean;
    w.init(mean);
    /* bit 1: f64 register windows; bit 2: f32 */
    if constexpr (W::BINS) w.rw_enable(bins_at >= 0 && (p.bins & (sizeof(T) == 8 ? 2 : 4)) != 0);

    if (bid == 0 && tid < (int)p.head) w.add_scalar(data[tid], tid, sacc);
    if (bid == grid - 1 && tid < (int)p.tail) {
        unsigned long long i = p.head + p.body_vec * VEC + tid;
        w.add_scalar(data[i], i, sacc);
    }
    const Vec<T> *vdata = (const Vec<T> *)(data + p.head);
    /* Even shares of whole batches (kThreads * U vectors): block bid gets batches [b0, b1), so
     * every batch but the very last is full and runs without bounds checks; U independent
     * 16-byte loads per thread are issued before any is used. */
    constexpr int U = W::U;
    constexpr unsigned long long kBatch = (unsigned long long)kThreads * U;
    const unsigned long long nb = (p.body_vec + kBatch - 1) / kBatch;
    const unsigned long long b0 = nb * bid / grid, b1 = nb * (bid + 1) / grid;
    const unsigned long long vb = b0 * kBatch;
    const unsigned long long ve = b1 * kBatch < p.body_vec ? b1 * kBatch : p.body_vec;
    unsigned long long v = vb + tid;
    /* a whole batch: thread tid's vectors v + u * kThreads, u < U, still at vbase[vfirst + u *
     * kThreads] (vbase: the input, or the ring's stage) */
    auto whole_batch = [&](const Vec<T>(&x)[U], const Vec<T> *vbase, unsigned long long vfirst,
                           unsigned long long vend) {
        bool ok[U];
        unsigned long long idx0[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            ok[u] = true;
            idx0[u] = p.head + (v + (unsigned long long)u * kThreads) * VEC;
        }
        w.template add_batch<RING>(x, ok, idx0, sacc, vbase, vfirst, vend, bins_at);
    };
    if constexpr (RING) {
        const Vec<T> *ring = (const Vec<T> *)ring_smem;
        const unsigned long long whole = (ve - vb) / kBatch;
        const int nst = p.ring_stages;
        constexpr unsigned kBytes = (unsigned)(kBatch * sizeof(Vec<T>));
        const uint64_t pol = l2_evict_first_policy(); /* the input is read once */
        if (tid == 0)
            for (int i = 0; i < nst && (unsigned long long)i < whole; i++)
                bulk_load_hint((void *)(ring + i * kBatch), vdata + vb + i * kBatch, kBytes, &full[i], pol);
        int k = 0;
        unsigned parity = 0;
        for (unsigned long long i = 0; i < whole; i++, v += kBatch) {
            mbar_wait(&full[k], parity);
            Vec<T> x[U];
            const Vec<T> *stage = ring + k * kBatch;
            /* a batch that goes straight to the exact sums' bins is read there from the stage,
             * not loaded here first (Worker::bins_direct: shared memory is what limits them) */
            if (!w.bins_direct(stage, tid, kBatch, bins_at, sacc)) {
#pragma unroll
                for (int u = 0; u < U; u++) x[u] = stage[u * kThreads + tid];
                /* The exact sums hold stage k until its batch is summed, so that a batch the
                 * fast path rejects is read again from there and not from L2 or memory (with
                 * one block per SM, nothing else hides that latency). Holding always beats
                 * holding only once a batch has gone slow, whose block-wide vote costs every
                 * batch (docs/performance.md, "wide-range data"). */
                if constexpr (EXACT) whole_batch(x, stage, tid, kBatch);
            }
            __syncthreads(); /* stage k read (and summed, if held) by every thread: it may be refilled */
            if (tid == 0 && i + nst < whole)
                bulk_load_hint((void *)stage, vdata + vb + (i + nst) * kBatch, kBytes, &full[k], pol);
            if (++k == nst) {
                k = 0;
                parity ^= 1u;
            }
            if constexpr (!EXACT) whole_batch(x, stage, tid, kBatch); /* never rereads: no slow path */
        }
    } else {
        for (; v + (unsigned long long)(U - 1) * kThreads < ve; v += kBatch) {
            Vec<T> x[U];
#pragma unroll
            for (int u = 0; u < U; u++) x[u] = load_vec(vdata + v + (unsigned long long)u * kThreads);
            whole_batch(x, vdata, v, ve);
        }
    }
    if (v < ve) { /* the last, partial batch (the last block only) */
        Vec<T> x[U];
        bool ok[U];
        unsigned long long idx0[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            unsigned long long vi = v + (unsigned long long)u * kThreads;
            ok[u] = vi < ve;
            idx0[u] = p.head + vi * VEC;
            if (ok[u]) x[u] = load_vec(vdata + vi);
            else memset(&x[u], 0, sizeof x[u]);
        }
        w.template add_batch<RING>(x, ok, idx0, sacc, vdata, v, ve, bins_at);
    }
    w.flush(sacc, bins_at);

    /* Warp, then block; then, in the last block to finish, the same code once more over the
     * blocks' partials (for the exact sums one copy of that code, warm in the instruction cache
     * by then: the cold fetches of a second copy cost microseconds). */
    const int lane = tid & 31, warp = tid >> 5;
    S s = w.s;
    bool spilled = false;
    /* round 0: this block's state; round 1 (the last block): the partials. True: done. */
    auto merge_round = [&](int round) -> bool {
        warp_merge<32>(s, sacc);
        /* Round 1 over at most 32 partials: they all sit in warp 0, which finishes alone (no
         * block barrier; the other warps merged initial states and leave below). Not for the
         * exact sums, whose code grows with it and gets slower elsewhere than it gains here
         * (docs/performance.md, "the kernels' ends"). */
        const bool warp_only = !EXACT && round == 1 && grid <= 32;
        if (!warp_only) {
            /* round 1: warp 0 read wstate in round 0 before the ticket's barrier */
            if (lane == 0) wstate[warp] = s;
            __syncthreads();
            if (warp == 0) {
                S t;
                if (lane < kWarps) t = wstate[lane]; else t.init();
                warp_merge<kWarps>(t, sacc);
                s = t; /* lane 0: the block's state (round 1: the grid's) */
            }
        }
        if constexpr (EXACT) spilled = block_spilled(sacc);
        if constexpr (packable<T, M>()) {
            if (p.packed && grid > 1) { /* round 0 only: no block waits for the others */
                if (tid == 0) {
                    const int bits = p.packed;
                    const unsigned long long low = (1ull << bits) - 1;
                    const long long bias = 1ll << (2 * bits - 65);
                    const unsigned long long v = (unsigned long long)((long long)s.isum + bias) + (1ull << bits);
                    unsigned long long old;
                    asm volatile("atom.add.relaxed.gpu.u64 %0, [%1], %2;" : "=l"(old) : "l"(p.acc), "l"(v) : "memory");
                    if ((old >> bits) == grid - 1) {
                        s.isum = (long long)((old & low) + (v & low)) - (long long)grid * bias;
                        *p.acc = 0;
                        write_results(p, s, 0.0);
                    }
                }
                return true;
            }
        }
        if constexpr (extreme_only<T, M>()) {
            if (p.extreme && grid > 1) { /* round 0 only */
                if (tid == 0) {
                    constexpr bool MX = M == TCU_MASK_MAX;
                    unsigned long long *word = MX ? p.kmax_word : p.kmin_word;
                    const unsigned long long key = (unsigned long long)(MX ? s.kmax : s.kmin);
                    if (MX) asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" :: "l"(word), "l"(key) : "memory");
                    else asm volatile("red.relaxed.gpu.global.min.u64 [%0], %1;" :: "l"(word), "l"(key) : "memory");
                    /* the release orders this block's fold before its count; the last block's
                     * acquire then sees every block's fold */
                    unsigned int t;
                    asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(t) : "l"(p.counter) : "memory");
                    if (t == grid - 1) {
                        const unsigned long long ident = MX ? 0ull : ~0ull;
                        unsigned long long w;
                        asm volatile("atom.exch.relaxed.gpu.b64 %0, [%1], %2;" : "=l"(w) : "l"(word), "l"(ident) : "memory");
                        if (MX) s.kmax = (typename Traits<T>::Key)w;
                        else s.kmin = (typename Traits<T>::Key)w;
                        *p.counter = 0;
                        write_results(p, s, 0.0);
                    }
                }
                return true;
            }
        }
        if (round == 1 || grid == 1) {
            if constexpr (EXACT) {
                /* the spilled blocks' digits, here at the end, where little else is live (a call
                 * among the merges costs registers on every launch, even when never made) */
                if (round == 1 && spill_any) {
                    add_spilled_partials(grid, p.partials, p.xpartials, sacc, offsetof(S, xflags));
                    spilled = block_spilled(sacc);
                }
            }
            if (tid == 0) {
                double xr = 0.0;
                if constexpr (EXACT) xr = exact_result(s, p, sacc, spilled);
                write_results(p, s, xr);
                if (round == 1) *p.counter = 0;
                /* the adaptive setting's word (cuda_internal.h): whether every block's batches
                 * stayed on the fast path (s.xflags: the OR of every thread's) */
                if constexpr (W::BINS)
                    if (p.hint != nullptr)
                        *(volatile unsigned int *)p.hint = (s.xflags & kSlowFlag) ? TCU_HINT_WIDE : TCU_HINT_NARROW;
            }
            return true;
        }

        /* write this block's partial (and its superaccumulator, if anything was spilled) */
        if (tid == 0) {
            if (spilled) s.xflags |= kSpilledFlag;
            *(S *)((char *)p.partials + (size_t)bid * TCU_PARTIAL_BYTES) = s;
        }
        /* The ticket: thread 0's release orders its partial (and, through the barrier, the
         * spilled digits, fenced by their writers) before the increment; its acquire and the
         * barrier after order the last block's reads of the partials after every other block's
         * writes (and this block's reads of sacc before the last block clears it). */
        if (EXACT && spilled) {
            if (tid < TALLY_EXACT_CHUNKS) {
                p.xpartials[(size_t)bid * TALLY_EXACT_CHUNKS + tid] = sacc_split_digit(sacc, tid);
                __threadfence();
            }
            __syncthreads();
        }
        if (tid == 0) {
            unsigned int t;
            asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(t) : "l"(p.counter) : "memory");
            am_last = t == grid - 1;
            if constexpr (EXACT) spill_any = false;
        }
        __syncthreads();
        if (!am_last) return true;

        /* the last block: thread tid takes the partials of blocks tid, tid + 256, ... (merging
         * the threads in order then keeps the float product's order fixed: not block order, but
         * the same every run). sacc holds something only if this block spilled. */
        if (EXACT && spilled) {
            for (int c = tid; c < TALLY_EXACT_CHUNKS; c += kThreads) sacc[c] = 0;
            __syncthreads();
        }
        s.init();
        /* Only the words the mask merges (partial_words; the others keep their initial
         * values), and the next partial loaded before this one is merged. */
        constexpr int W16 = sizeof(S) / 16;
        constexpr unsigned kWords = partial_words<T, M, OMIT>();
        union Partial { S s; uint4 w[W16]; };
        auto load_partial = [&](unsigned b, Partial &u) {
            const uint4 *src = (const uint4 *)((const char *)p.partials + (size_t)b * TCU_PARTIAL_BYTES);
            u.s.init();
#pragma unroll
            for (int i = 0; i < W16; i++)
                if (kWords >> i & 1u) u.w[i] = __ldcg(src + i);
        };
        Partial next;
        if (tid < grid) load_partial(tid, next);
        for (unsigned b = tid; b < grid; b += kThreads) {
            Partial u = next;
            if (b + kThreads < grid) load_partial(b + kThreads, next);
            if constexpr (EXACT) {
                if (u.s.xflags & kSpilledFlag) { /* its digits: add_spilled_partials, below */
                    spill_any = true;
                    u.s.xflags &= ~kSpilledFlag;
                }
                xcombine_quick(s.xh, s.xl, u.s.xh, u.s.xl, sacc);
            }
            merge_state<false>(s, u.s, sacc);
        }
        return false;
    };
    /* One copy of the merge code for the exact sums, whose merges are long (a second copy's
     * cold instruction fetches cost more than the loop); two for the light kernels, whose code
     * is short and faster unrolled, and for the 1- and 2-byte types, which spill more with one
     * (docs/performance.md, "the kernels' ends"). */
    if constexpr (EXACT && sizeof(T) >= 4) {
#pragma unroll 1
        for (int round = 0; round < 2; round++)
            if (merge_round(round)) return;
    } else {
        if (!merge_round(0)) merge_round(1);
    }
}

} // namespace tcu

#endif
