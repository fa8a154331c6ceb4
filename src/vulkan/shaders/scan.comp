#version 450
/* Scans of the associative ops (integer sum/prod/min/max/and/or/xor, float min/max): reduce,
 * then scan, in three dispatches, so that no workgroup ever waits for another (Vulkan promises
 * no forward progress between workgroups):
 *   MODE 0: each workgroup writes its tile's aggregate to agg[tile];
 *   MODE 1: one workgroup turns agg[] into exclusive tile prefixes, from the start value;
 *   MODE 2: each workgroup scans its tile from its prefix and writes the outputs.
 * Integer sums and products wrap modulo 2^bits (C's and CUB's rule) and every op here is
 * associative, so the tiles' grouping cannot change a bit. Float min/max follow tally.h: NaN
 * propagates (the first one), -0 < +0.
 *
 * Tiles are laid out on the output: tile k covers output bytes [k*TB, (k+1)*TB) of the output
 * binding (TB a multiple of 16), so each thread owns whole 4-byte output words and no two
 * threads (or workgroups) ever write the same word; words at the ends of the output that hold
 * bytes outside it are read, merged and written back by their one owner. The input is staged
 * through shared memory with coalesced word loads, whatever its alignment against the
 * output. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define WG 256
#define VPT 2                  /* 16-byte output vectors per thread */
#define TB (WG * 16 * VPT)     /* tile bytes */
#define TE (TB / TSIZE)        /* slots (elements) per tile */
#define IPT (TE / WG)          /* slots per thread */
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;   /* tally_op: 0 sum .. 6 xor */
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const uint EXCL = 0; /* exclusive scan */

layout(std430, binding = 0) readonly buffer InW { uint inw[]; };
layout(std430, binding = 1) buffer OutW { uint outw[]; };
layout(std430, binding = 2) buffer Agg { uint64_t agg[]; };

layout(push_constant) uniform PC {
    uint64_t n;         /* elements of this segment */
    uint64_t start;     /* MODE 1: the start value (element bits) */
    uint in_head;       /* bytes from the input binding's start to element 0 */
    uint out_head;      /* bytes from the output binding's start to element 0 */
    uint ntiles;        /* MODE 1: tiles in all */
    uint tile0;         /* global index of this segment's first tile */
} pc;

shared uint sw[TB / 4 + 8]; /* the tile's input words; then its output words */

#include "scan_ops.glsl"

/* The element in slot j (tile-relative) from the staged input words; wbase: the first staged
 * word's index in the input binding. */
uint64_t staged(uint64_t i, uint wbase)
{
    uint64_t byte = uint64_t(pc.in_head) + i * uint64_t(TSIZE) - uint64_t(wbase) * 4ul;
    uint w = uint(byte >> 2);
#if TSIZE == 8
    return pack64(uvec2(sw[w], sw[w + 1u]));
#elif TSIZE == 4
    return uint64_t(sw[w]);
#else
    return uint64_t((sw[w] >> ((uint(byte) & 3u) * 8u)) & uint(ONES));
#endif
}

void main()
{
    tid = gl_LocalInvocationID.x;
    if (MODE == 1u) {
        uint64_t carry = pc.start;
        for (uint c = 0u; c < pc.ntiles; c += WG) {
            uint k = c + tid;
            uint64_t v = k < pc.ntiles ? agg[k] : identity();
            uint64_t inc = wg_inclusive(v);
            uint64_t excl = tid == 0u ? identity() : ss[tid - 1u];
            uint64_t total = ss[WG - 1u];
            barrier();
            if (k < pc.ntiles) agg[k] = combine(carry, excl);
            carry = combine(carry, total);
        }
        return;
    }
    uint k = gl_WorkGroupID.x;
    uint hs = pc.out_head / uint(TSIZE); /* slots before element 0 */
    /* this tile's elements [ilo, ihi) */
    int64_t slot0 = int64_t(k) * int64_t(TE);
    uint64_t ilo = uint64_t(max(slot0 - int64_t(hs), 0l));
    uint64_t ihi = uint64_t(min(slot0 + int64_t(TE) - int64_t(hs), int64_t(pc.n)));
    if (ilo >= ihi) return; /* (never: the host dispatches covering tiles only) */
    uint wbase = uint((uint64_t(pc.in_head) + ilo * uint64_t(TSIZE)) >> 2);
    uint wend = uint((uint64_t(pc.in_head) + ihi * uint64_t(TSIZE) + 3ul) >> 2);
    for (uint w = tid; w < wend - wbase; w += WG) sw[w] = inw[wbase + w];
    barrier();
    /* this thread's slots [s0, s0 + IPT) -> elements s - hs */
    int64_t s0 = slot0 + int64_t(tid * uint(IPT));
    uint64_t tot = identity();
    for (uint j = 0u; j < uint(IPT); j++) {
        int64_t i = s0 + int64_t(j) - int64_t(hs);
        if (i >= int64_t(ilo) && i < int64_t(ihi)) tot = combine(tot, staged(uint64_t(i), wbase));
    }
    uint64_t inc = wg_inclusive(tot);
    if (MODE == 0u) {
        if (tid == WG - 1u) agg[pc.tile0 + k] = inc;
        return;
    }
    uint64_t run = combine(agg[pc.tile0 + k], tid == 0u ? identity() : ss[tid - 1u]);
    /* outputs into registers, a 16-byte vector at a time, then into shared words */
    uint ow[4 * VPT];
    for (uint q = 0u; q < 4u * uint(VPT); q++) ow[q] = 0u;
    for (uint j = 0u; j < uint(IPT); j++) {
        int64_t i = s0 + int64_t(j) - int64_t(hs);
        uint64_t o = 0ul;
        if (i >= int64_t(ilo) && i < int64_t(ihi)) {
            uint64_t x = staged(uint64_t(i), wbase);
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
    barrier(); /* every thread has read its input from sw */
    for (uint q = 0u; q < 4u * uint(VPT); q++) sw[tid * 4u * uint(VPT) + q] = ow[q];
    barrier();
    /* coalesced stores of the tile's output words; a word holding bytes outside the output is
     * merged with what memory holds there (its one writer is this thread) */
    uint64_t out_lo = uint64_t(pc.out_head), out_hi = uint64_t(pc.out_head) + pc.n * uint64_t(TSIZE);
    for (uint w = tid; w < uint(TB / 4); w += WG) {
        uint64_t b0 = uint64_t(k) * uint64_t(TB) + uint64_t(4u * w);
        if (b0 + 4ul <= out_lo || b0 >= out_hi) continue;
        uint word = uint(b0 >> 2);
        if (b0 >= out_lo && b0 + 4ul <= out_hi) {
            outw[word] = sw[w];
        } else {
            uint keep = 0u; /* bytes of the word outside the output */
            for (uint b = 0u; b < 4u; b++) {
                uint64_t at = b0 + uint64_t(b);
                if (at < out_lo || at >= out_hi) keep |= 0xffu << (8u * b);
            }
            outw[word] = (outw[word] & keep) | (sw[w] & ~keep);
        }
    }
}
