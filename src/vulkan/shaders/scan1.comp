#version 450
#pragma use_vulkan_memory_model
/* Single-pass scans of the associative ops (integer sum/prod/min/max/and/or/xor, float
 * min/max): one dispatch, each element read once and written once, with a decoupled look-back
 * that needs no forward progress between workgroups.
 *
 * Each workgroup owns one tile (laid on the output as in scan.comp: TB bytes of the output
 * binding, so every thread owns whole output words). It stages its input, reduces it, and
 * publishes the tile's aggregate A; then it walks back over the earlier tiles' states, LB tiles
 * a step, combining aggregates until it meets an inclusive prefix P; it publishes its own P and
 * writes its outputs. Tile states: flag[t] = (epoch << 2) | status (1: A in val[2t], 2: P in
 * val[2t + 1]); the epoch is the call's, so the states of earlier calls read as "nothing yet"
 * and no buffer is cleared per call. Global tile 0 publishes P (from the start value) at once.
 *
 * Forward progress (Vulkan promises none between workgroups; lavapipe runs a dispatch's
 * workgroups on a few threads, in any order they are handed out): a workgroup that finds a
 * tile with nothing published, pc.spins steps in a row, reduces that tile itself from the
 * input (the "decoupled fallback") and walks on. So no workgroup ever waits for one that has
 * not started, and a dispatch finishes whatever the scheduling.
 *
 * In place, the input of a tile is overwritten by its outputs, and a fallback may read a tile
 * whose owner is writing. The owner writes outputs only after publishing P (its flag store
 * happens-before its outputs: a workgroup barrier with buffer semantics, then a device-scope
 * release fence in every invocation before its stores); the fallback re-reads the flag after
 * its input loads (a device-scope acquire fence in every invocation, then a barrier). If any
 * load saw an output, the re-read flag is P and its value is taken instead (the seqlock
 * pattern); otherwise every load saw the input.
 *
 * Memory model: Vulkan's (use_vulkan_memory_model; the device needs vulkanMemoryModel and
 * vulkanMemoryModelDeviceScope). Flags are stored with release and loaded with acquire
 * semantics at device scope; values are relaxed device-scope atomics, published before and
 * read after their flag. Segments of one call (data beyond one binding) are separate
 * dispatches with a pipeline barrier between: an earlier segment's tiles all hold P. */
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require
#include "common.glsl"

#define WG 256
#define VPT 2                  /* 16-byte output vectors per thread (vk_scan.c: SCAN1_VPT) */
#define TB (WG * 16 * VPT)     /* tile bytes */
#define TE (TB / TSIZE)        /* slots (elements) per tile */
#define IPT (TE / WG)          /* slots per thread */
#define LB 32                  /* tile states read per look-back step */
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;   /* tally_op: 0 sum .. 6 xor */
layout(constant_id = 1) const uint MODE = 0; /* (unused: one mode) */
layout(constant_id = 2) const uint EXCL = 0; /* exclusive scan */

/* coherent: a fallback's loads of a tile's input and that tile's owner's output stores (in
 * place, the same words) take part in the fences above */
layout(std430, binding = 0) coherent readonly buffer InW { uint inw[]; };
layout(std430, binding = 1) coherent buffer OutW { uint outw[]; };
layout(std430, binding = 2) buffer Val { uint64_t val[]; };  /* [2t]: A, [2t + 1]: P */
layout(std430, binding = 3) buffer Flag { uint flag[]; };

layout(push_constant) uniform PC {
    uint64_t n;         /* elements of this segment */
    uint64_t start;     /* the start value (element bits): global tile 0's exclusive prefix */
    uint in_head;       /* bytes from the input binding's start to element 0 */
    uint out_head;      /* bytes from the output binding's start to element 0 */
    uint ntiles;        /* tiles (workgroups) of this dispatch */
    uint tile0;         /* global index of this segment's first tile */
    uint epoch;         /* the call's epoch (1 .. 2^30 - 1) */
    uint spins;         /* look-back steps without progress before a fallback */
    uint reverse;       /* tests: workgroup i takes tile ntiles - 1 - i */
} pc;

/* Shared memory, about 23 KiB (VPT 2 keeps it within lavapipe's 32 KiB). No word read before a
 * barrier is written by another invocation after it (outputs, the workgroup scan and the
 * fallback each have their own arrays): on lavapipe, whose workgroups run as coroutines switched
 * at barriers, such a read (the outputs staged in the input's words) now and then got the value
 * written after the barrier. */
shared uint sw[TB / 4 + 8]; /* the tile's input words */
shared uint so[TB / 4];     /* the tile's output words */
shared uint64_t sr[WG];     /* the fallback's reduction */
shared uint lb_stat[LB];
shared uint64_t lb_val[LB];
shared uint64_t sh_x;
shared uint sh_ctl;

#include "scan_ops.glsl"

/* The element in slot q of this tile (0 .. TE-1) from the staged input words: its byte is
 * sbase + q * TSIZE in sw (32-bit arithmetic: sbase, set in main, is the staged bytes' offset
 * of slot 0, negative before element 0 in a segment's first tile). */
int sbase;
uint64_t staged(uint q)
{
    uint byte = uint(sbase + int(q) * TSIZE);
    uint w = byte >> 2;
#if TSIZE == 8
    return pack64(uvec2(sw[w], sw[w + 1u]));
#elif TSIZE == 4
    return uint64_t(sw[w]);
#else
    return uint64_t((sw[w] >> ((byte & 3u) * 8u)) & uint(ONES));
#endif
}

/* The element at index i read from the input binding (the fallback). */
uint64_t loaded(uint64_t i)
{
    uint64_t byte = uint64_t(pc.in_head) + i * uint64_t(TSIZE);
    uint w = uint(byte >> 2);
#if TSIZE == 8
    return pack64(uvec2(inw[w], inw[w + 1u]));
#elif TSIZE == 4
    return uint64_t(inw[w]);
#else
    return uint64_t((inw[w] >> ((uint(byte) & 3u) * 8u)) & uint(ONES));
#endif
}

/* Elements [lo, hi) of local tile k. */
void tile_range(uint k, out uint64_t lo, out uint64_t hi)
{
    int64_t slot0 = int64_t(k) * int64_t(TE);
    int64_t hs = int64_t(pc.out_head / uint(TSIZE));
    lo = uint64_t(max(slot0 - hs, 0l));
    hi = uint64_t(min(slot0 + int64_t(TE) - hs, int64_t(pc.n)));
}

/* The aggregate of local tile k read straight from the input, in every invocation (called in
 * uniform control flow: it holds barriers). A tree over sr[] in index order: in each step an
 * invocation reads only a slot that no invocation writes in that step or later. */
uint64_t tile_reduce(uint k)
{
    uint64_t lo, hi;
    tile_range(k, lo, hi);
    int64_t s0 = int64_t(k) * int64_t(TE) + int64_t(tid * uint(IPT)) - int64_t(pc.out_head / uint(TSIZE));
    uint64_t t = identity();
    for (uint j = 0u; j < uint(IPT); j++) {
        int64_t i = s0 + int64_t(j);
        if (i >= int64_t(lo) && i < int64_t(hi)) t = combine(t, loaded(uint64_t(i)));
    }
    sr[tid] = t;
    barrier();
    for (uint d = 1u; d < WG; d <<= 1) {
        if ((tid & (2u * d - 1u)) == 0u) sr[tid] = combine(sr[tid], sr[tid + d]);
        barrier();
    }
    return sr[0];
}

uint state_of(uint f) { return (f >> 2) == pc.epoch ? (f & 3u) : 0u; }

/* The exclusive prefix of global tile g > 0 (in invocation 0; the others return garbage).
 * Uniform control flow: every invocation runs every step and takes every barrier, and every
 * decision is invocation 0's, read by all from shared memory after a barrier (one loop exit,
 * no continue: lavapipe runs a workgroup as coroutines switched at barriers, which must meet
 * the same barriers in the same order). */
#define LB_DONE 1u
#define LB_FALLBACK 2u
uint64_t look_back(uint g)
{
    uint64_t x = identity(); /* the combined states of tiles (j, g) */
    uint j = g - 1u;         /* the next tile to combine (the same in every invocation) */
    uint idle = 0u;          /* invocation 0: steps in a row without progress */
    uint ctl = 0u;
    while ((ctl & LB_DONE) == 0u) {
        barrier(); /* lb_* and sh_ctl are free (read in the step before) */
        if (tid < uint(LB)) {
            uint st = 3u; /* before tile 0 (never combined: tile 0 holds P) */
            uint64_t v = 0ul;
            if (tid <= j) {
                uint t = j - tid;
                st = state_of(atomicLoad(flag[t], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                                         gl_SemanticsAcquire));
                if (st != 0u)
                    v = atomicLoad(val[2u * t + (st - 1u)], gl_ScopeDevice, 0, 0);
            }
            lb_stat[tid] = st;
            lb_val[tid] = v;
        }
        barrier();
        if (tid == 0u) {
            /* nearest first: aggregates until a prefix, stopping at a tile with nothing */
            uint m = 0u, c = 0u;
            for (; m < uint(LB); m++) {
                uint st = lb_stat[m];
                if (st == 0u || st == 3u) break;
                x = combine(lb_val[m], x);
                if (st == 2u) {
                    c = LB_DONE;
                    break;
                }
            }
            idle = m > 0u ? 0u : idle + 1u;
            /* tile j - m has published nothing for too long: reduce it here. (An earlier
             * segment's tiles all hold P: only this dispatch's tiles are waited for.) */
            if (c == 0u && idle > pc.spins && j - m >= pc.tile0) c = LB_FALLBACK;
            sh_ctl = c | (m << 2);
        }
        barrier();
        ctl = sh_ctl;
        j -= ctl >> 2;
        if ((ctl & LB_FALLBACK) != 0u) {
            uint64_t a = tile_reduce(j - pc.tile0);
            /* the seqlock's reader side: every invocation's input loads before the flag */
            memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
            controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup,
                           gl_StorageSemanticsBuffer | gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
            if (tid == 0u) {
                uint st = state_of(atomicLoad(flag[j], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                                              gl_SemanticsAcquire));
                uint c = 0u;
                if (st == 2u) { /* its owner published meanwhile (in place, a may be torn) */
                    x = combine(atomicLoad(val[2u * j + 1u], gl_ScopeDevice, 0, 0), x);
                    c = LB_DONE;
                } else if (j == 0u) {
                    x = combine(combine(pc.start, a), x);
                    c = LB_DONE;
                } else {
                    x = combine(a, x);
                }
                idle = 0u;
                sh_ctl = c;
            }
            barrier();
            ctl = sh_ctl;
            j -= 1u;
        }
    }
    return x;
}

void main()
{
    tid = gl_LocalInvocationID.x;
    uint k = pc.reverse != 0u ? pc.ntiles - 1u - gl_WorkGroupID.x : gl_WorkGroupID.x;
    uint g = pc.tile0 + k;
    uint hs = pc.out_head / uint(TSIZE); /* slots before element 0 */
    int64_t slot0 = int64_t(k) * int64_t(TE);
    uint64_t ilo, ihi;
    tile_range(k, ilo, ihi);
    /* (ilo < ihi: the host dispatches covering tiles only) */
    uint wbase = uint((uint64_t(pc.in_head) + ilo * uint64_t(TSIZE)) >> 2);
    uint wend = uint((uint64_t(pc.in_head) + ihi * uint64_t(TSIZE) + 3ul) >> 2);
    for (uint w = tid; w < wend - wbase; w += WG) sw[w] = inw[wbase + w];
    barrier();
    /* slot q of the tile holds element slot0 + q - hs; the tile's elements are slots
     * [qlo, qhi); this thread's slots are [tid * IPT, tid * IPT + IPT) */
    uint qlo = uint(int64_t(ilo) - slot0 + int64_t(hs)), qhi = uint(int64_t(ihi) - slot0 + int64_t(hs));
    sbase = int(int64_t(pc.in_head) + (slot0 - int64_t(hs)) * int64_t(TSIZE) - int64_t(wbase) * 4l);
    uint q0 = tid * uint(IPT);
    uint64_t tot = identity();
    for (uint j = 0u; j < uint(IPT); j++) {
        uint q = q0 + j;
        if (q >= qlo && q < qhi) tot = combine(tot, staged(q));
    }
    wg_inclusive(tot);
    uint64_t mine = tid == 0u ? identity() : ss[tid - 1u]; /* exclusive, inside the tile */
    uint64_t agg = ss[WG - 1u];
    uint ep = pc.epoch << 2;
    if (tid == 0u) {
        if (g == 0u) {
            atomicStore(val[1], combine(pc.start, agg), gl_ScopeDevice, 0, 0);
            atomicStore(flag[0], ep | 2u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
        } else {
            atomicStore(val[2u * g], agg, gl_ScopeDevice, 0, 0);
            atomicStore(flag[g], ep | 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
        }
    }
    uint64_t excl = pc.start;
    if (g != 0u) {
        uint64_t x = look_back(g); /* (its first barrier orders the reads of ss above) */
        if (tid == 0u) {
            atomicStore(val[2u * g + 1u], combine(x, agg), gl_ScopeDevice, 0, 0);
            atomicStore(flag[g], ep | 2u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
            sh_x = x;
        }
    }
    /* the P store before every invocation's output stores (the in-place fallback's seqlock) */
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup,
                   gl_StorageSemanticsBuffer | gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
    if (g != 0u) excl = sh_x;
    memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
    uint64_t run = combine(excl, mine);
    /* outputs into registers, a 16-byte vector at a time, then into shared words */
    uint ow[4 * VPT];
    for (uint q = 0u; q < 4u * uint(VPT); q++) ow[q] = 0u;
    for (uint j = 0u; j < uint(IPT); j++) {
        uint q = q0 + j;
        uint64_t o = 0ul;
        if (q >= qlo && q < qhi) {
            uint64_t x = staged(q);
            if (EXCL != 0u) {
                o = run;
                run = combine(run, x);
            } else {
                run = combine(run, x);
                o = run;
            }
        }
        uint byte = j * uint(TSIZE);
#if TSIZE == 8
        ow[byte >> 2] = uint(o);
        ow[(byte >> 2) + 1u] = uint(o >> 32);
#else
        ow[byte >> 2] |= (uint(o) & uint(ONES)) << ((byte & 3u) * 8u);
#endif
    }
    for (uint q = 0u; q < 4u * uint(VPT); q++) so[tid * 4u * uint(VPT) + q] = ow[q];
    barrier();
    /* coalesced stores of the tile's output words; a word holding bytes outside the output is
     * merged with what memory holds there (its one writer is this thread) */
    uint64_t out_lo = uint64_t(pc.out_head), out_hi = uint64_t(pc.out_head) + pc.n * uint64_t(TSIZE);
    for (uint w = tid; w < uint(TB / 4); w += WG) {
        uint64_t b0 = uint64_t(k) * uint64_t(TB) + uint64_t(4u * w);
        if (b0 + 4ul <= out_lo || b0 >= out_hi) continue;
        uint word = uint(b0 >> 2);
        if (b0 >= out_lo && b0 + 4ul <= out_hi) {
            outw[word] = so[w];
        } else {
            uint keep = 0u; /* bytes of the word outside the output */
            for (uint b = 0u; b < 4u; b++) {
                uint64_t at = b0 + uint64_t(b);
                if (at < out_lo || at >= out_hi) keep |= 0xffu << (8u * b);
            }
            outw[word] = (outw[word] & keep) | (so[w] & ~keep);
        }
    }
}
