#version 450
#pragma use_vulkan_memory_model
/* Float sum and product scans in the CPU backend's order (tally.h above tally_scan;
 * src/cpu/kernels_body.h), in ONE pass: each element read once and written once.
 *
 * The order (bit for bit the CPU's): blocks of 4096 elements, each cut into 256 groups of 16; in
 * a group the fixed log-step prefix p (fscan_ops.glsl's group_prefix); the block's local values
 * l = p in its first group and l = L_(i-1) op p in group i, with L_0 = P_0 and L_i = L_(i-1) op
 * P_i over the groups' totals P_i (the "L chain", serial by definition); the block's aggregate
 * A_b = L_last; the carries carry_0 = start, carry_(b+1) = carry_b op A_b (the "carry chain",
 * serial too); outputs carry_b op l (inclusive), or carry_b, then carry_b op (the element
 * before's l) (exclusive).
 *
 * Here one block is a tile (global tile g = pc.tile0 + its index in the segment), NB
 * consecutive tiles are one workgroup's. A group lies on a quad of lanes (the quad layout,
 * below: coalesced loads and stores) or, where the subgroups do not allow that, on one
 * invocation (its 16 elements and their prefix in registers). The quad layout keeps its
 * prefixes for the outputs (STAGE: in shared memory, or some in registers); otherwise the
 * groups are loaded again for the outputs. Each block's L chain runs in ONE
 * invocation (32 b for the workgroup's block b: the chains side by side), 16 totals at a time
 * from shared memory into registers and the L's back, plain operations checked afterwards by
 * every invocation (on CPU devices, flags bit 3, every invocation runs every chain: lavapipe
 * drops stores after a loop one SIMD group ran alone). The workgroup publishes its blocks' A's,
 * looks back once for its first block's carry, and publishes their P's.
 *
 * The carry chain is an ORDERED-FOLD look-back, the CUDA backend's (src/cuda/scan_lookback.cuh):
 * a tile publishes A_g as soon as its block is reduced and its inclusive prefix P_g =
 * carry_(g+1) once known (global tile 0: P_0 = start op A_0 at once). The look-back reads the
 * predecessors' states nearest first, up to 256 at a time, and stops at the nearest tile j holding a P
 * (every tile between j and g holding its A); then it FOLDS LEFT TO RIGHT from that P:
 * carry_g = (..(P_j op A_(j+1)) op ..) op A_(g-1). Since P_j = carry_(j+1) and each step is the
 * chain's own step carry_(t+1) = carry_t op A_t on the same operands, carry_g is the serial
 * chain's value bit for bit, whichever j the timing gives. A and P live in separate slots of the
 * tile's state, so the A's between j and g can be read again after they were passed (a tile's
 * A slot never changes within a call once written: every writer writes the same bits).
 *
 * Forward progress (Vulkan promises none between workgroups; lavapipe runs workgroups in chunks
 * per thread): when the nearest tile without a state has published nothing for pc.spins steps,
 * the whole workgroup reduces that tile's block itself from the input (the same operations in
 * the same order, so the same A bits) and PUBLISHES that A in the tile's A slot (tile 0: its P),
 * and the look-back walks on. The input is never written during the dispatch (the host runs
 * this shader out of place only: in place it first copies the input), so a fallback's loads
 * always see input.
 *
 * Every decision is taken by every invocation from the same shared words after a barrier, so
 * every loop has the same trip count in every invocation and the fold is computed by all (the
 * same operations on the same operands: the same bits everywhere).
 *
 * States (binding 3, flag words; binding 2, 64-bit values): tile t's A word st[t << sh] and P
 * word st[(t << sh) + 1] (sh = pc.flags bits 8-11, at least 1), each (flag << 32 | 32-bit value)
 * with flag = epoch << 2 | status (1: A, 2: P); f64 values at val[2t] (A) and val[2t + 1] (P),
 * stored before their flag word (release) and loaded after it (acquire). The flag words share the
 * buffer and the epoch counter with scan1.comp's states: every word's high half there is some
 * call's flag, so no call reads another's bits as its own state.
 *
 * Edge flag (without TVK_DENORM_PRESERVE): fscan_ops.glsl's op2 marks any operation meeting a
 * subnormal or a flushed zero; the call's flag word is stw[pc.stats_at] and the host redoes a
 * flagged call on the CPU backend (vk_scan.c, fscan_on_device). */
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#if TVK_CLOCK
/* the probe variant (fscan1_clk, bench/probe_fscan.c): each workgroup's phases timed */
#extension GL_EXT_shader_realtime_clock : require
#extension GL_ARB_shader_clock : require
#endif
#include "common.glsl"
#if TVK_DENORM_PRESERVE && TSIZE == 4
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 32);
#elif TVK_DENORM_PRESERVE
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 64);
#endif

#define WG 256 /* a block is 256 groups of 16; one group per invocation */
#define LBW 256 /* tile states read per look-back step, at most: one per invocation */
#define LBW0 32 /* ... at a walk's first step and after a stall (less polling) */
/* A's kept in shared memory for the fold (walks on the H200 passed ~90-160 A's, at most ~900:
 * bench/probe_fscan); f64 within lavapipe's 32 KiB of shared memory */
#if TSIZE == 4
#define KEEP 1024
#else
#define KEEP 512
#endif
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;   /* 0 sum, 1 prod */
layout(constant_id = 1) const uint VAR = 0;  /* bit 0 (tests): emulate a flushing device (op2);
                                              * bits 1-2: log2 of the blocks per workgroup;
                                              * bit 3: CHAIN_PF; bit 4: QUAD; bit 5: SEQ1;
                                              * bit 9: FULLP; bit 10: STAGE; bit 12: REGB;
                                              * bits 16-17: LEAN, EPUB
                                              * (bits 6-8, 11 and 13-15: tried and removed,
                                              * docs/performance.md) */
layout(constant_id = 2) const uint EXCL = 0;

layout(std430, binding = 0) readonly buffer InW { uint inw[]; };
layout(std430, binding = 0) readonly buffer InV { uvec4 inv[]; };
layout(std430, binding = 1) buffer OutW { uint outw[]; };
layout(std430, binding = 1) buffer OutV { uvec4 outv[]; };
layout(std430, binding = 2) buffer Val { uint64_t val[]; };
layout(std430, binding = 3) buffer State { uint64_t st[]; };
layout(std430, binding = 3) buffer StateW { uint stw[]; };

layout(push_constant) uniform PC {
    uint64_t n;       /* elements of this segment (its first starts a block) */
    uint64_t start;   /* the start carry's bits (carry_0) */
    uint in_head, out_head;
    uint ntiles;      /* tiles (blocks) of this dispatch, NB per workgroup */
    uint tile0;       /* global index of the segment's first tile */
    uint epoch;       /* the call's epoch (1 .. 2^30 - 1) */
    uint spins;       /* look-back steps without progress before a fallback */
    uint flags;       /* bit 0 (tests): workgroups in reverse order (the last first); bit 3: every
                       * invocation runs the L chain and the fold (CPU devices), bit 7 (tests,
                       * with bit 3) the sums' fold there the GPUs' lean one; bit 5 (tests):
                       * keep 16 A's; bit 6 (default): every look-back step reads LBW; bits 8-11: sh
                       * (above); bits 16-27: PD (prefetch_input) */
    uint stats_at;    /* index in stw of the call's edge flag word */
} pc;

#define FTZ_EMU ((VAR & 1u) != 0u)
/* blocks per workgroup (the host keeps it within NBMAX: shared memory). The loops over a
 * workgroup's blocks run to NBMAX, unrolled, and skip b >= NB (a constant once specialized) as
 * well as b >= nbw, so that the copies past NB are dropped before the driver compiles them
 * (lavapipe's LLVM: the shader's compile time) */
#if TSIZE == 4
#define NBMAX 4u
#else
#define NBMAX 2u
#endif
const uint NB = 1u << ((VAR >> 1) & 3u);
/* bit 3: a whole block's L chain without bounds and with its totals read ahead (GPUs) */
const bool CHAIN_PF = (VAR & 8u) != 0u;
/* bit 4: the quad layout (below) where the subgroups allow it */
const bool QUAD_REQ = (VAR & 16u) != 0u;
/* bit 5 (benchmarks): the first loads block by block, a barrier between (fewer registers held,
 * so perhaps more workgroups resident, against fewer loads in flight per invocation) */
const bool SEQ1 = (VAR & 32u) != 0u;
/* bit 9: the quad layout's whole blocks (4096 elements) take prefixes and outputs compiled
 * without the bounds of a partial block's groups (the same operations on the same operands):
 * fewer instructions, which is what bounds this shader on the H200 (f32 2^26 266 against 324 us) */
const bool FULLP = (VAR & 512u) != 0u;
/* bit 10: the quad layout keeps each chunk's prefix, computed for the totals, in shared memory
 * (stg, private to the invocation) for the outputs, which then neither read the input again nor
 * compute the prefix again. Without it the second read of every element came from memory, not
 * L2 (the block's first read is ~25 us and ~80 MB of traffic earlier on the H200), so the scan
 * moved 3n elements where a scan needs 2n: 0.67x CUB's 2n. Its shared memory (16 KiB per f32
 * block) caps the blocks per workgroup: the host picks NB within maxComputeSharedMemorySize. */
const bool STAGE = (VAR & 1024u) != 0u;
/* bit 12 (with STAGE): the workgroup's first block kept in registers (16 f32 a block), the
 * others in stg: more workgroups resident where shared memory sets the limit (H200: NVIDIA's
 * Vulkan driver keeps ~2 workgroups of 47 KiB per SM, 3 of 31 KiB; docs/performance.md) */
const bool REGB = (VAR & 5120u) == 5120u;
const uint SBLOCKS = REGB ? NB - 1u : NB; /* blocks in stg */
/* (STAGE: 256, within NVIDIA's 48 KiB beside two staged f32 blocks; the fold's steps beyond
 * KEEP use cs[0 .. LBW - 1], so never below LBW) */
const uint KEEPN = STAGE ? uint(LBW) : uint(KEEP);
/* bit 16: the sums' lean fold (fold, below); bit 17: EPUB, each A published by its chain's
 * invocation as the chain ends, and (LEAN) the P's by the fold's as it ends, not after a barrier
 * (walks wait on the predecessor's A, a tile's P is its successors' nearest P) */
const bool LEAN = (VAR & 65536u) != 0u && OP == 0u;
const bool EPUB = (VAR & 131072u) != 0u;
#include "fscan_ops.glsl"

uint tid;
bool all_chain;
FT pub_a[NBMAX];       /* EPUB: the workgroup's A's, for the fold to publish the P's */
uint pub_n = 0u;
bool pub_done = false; /* ... and it did */
bool quad; /* the quad layout: QUAD_REQ, and full subgroups of 4 lanes or more */
uint mt;   /* this invocation's place in that layout (subgroup by subgroup, lane by lane) */
uint keep; /* A's kept: KEEP, or 16 (flags bit 5, tests: the fold's reads again) */
#if TVK_CLOCK
uint pr_d = 0u, pr_steps = 0u; /* the walk's A's folded and its steps */
uint64_t pr_f0 = 0ul;           /* the clock when the walk found its P (the fold's start) */
uint64_t clk() { return packUint2x32(clock2x32ARB()); }
uint64_t rt() { return packUint2x32(clockRealtime2x32EXT()); }
#endif

/* Slots 0 .. NB - 1: this workgroup's blocks; NB and NB + 1: the fallbacks' blocks,
 * alternating (no shared word read before a barrier is written by another invocation right
 * after it: lavapipe). */
shared FT tots[NB + 2u][WG]; /* the groups' totals */
shared FT ls[NB + 2u][WG];   /* the L chain over them */
shared uint win_f[2][LBW]; /* a look-back step's states and values, nearest first */
shared FT win_v[2][LBW];
shared uint win_first[3];  /* the step's first non-A (atomicMin), three slots in turn */
shared FT kept[KEEPN];     /* the A's passed (see lookback) */
shared FT cs[KEEPN];       /* the fold's steps (GPUs) */
/* STAGE: block b's chunk c's prefix of invocation tid, 16 bytes (f32) or 32 (f64) */
shared uvec4 stg[(STAGE ? SBLOCKS * 4u * uint(WG) * uint(TSIZE / 4) : 0u) + 1u];
shared FT c_in;            /* the fold's start there */
shared FT cw_in;           /* the start of the fold's steps beyond KEEP (in cs[0 .. LBW - 1],
                            * one look-back window at a time: f64's 32 KiB on lavapipe) */

uint block_len(uint kb) { return uint(min(pc.n - uint64_t(kb) * 4096ul, 4096ul)); }

/* Group tid of block kb of this segment: m of its elements, loaded, and their prefix, in p
 * (checked: see group_prefix). */
void group_load_prefix(uint kb, out FT p[16], out uint m, bool checked)
{
    uint len = block_len(kb);
    m = tid * 16u < len ? min(len - tid * 16u, 16u) : 0u;
    load_group(uint64_t(kb) * uint64_t(WG) + uint64_t(tid), m, p);
    group_prefix(p, m, checked);
}

/* ---- the quad layout (GPUs; VAR bit 4 and full subgroups of at least 4 lanes) ----
 * A block's 4096 elements are 4 chunks of 1024; in chunk c the invocation at place mt holds
 * elements c * 1024 + 4 mt .. + 3 (one 16-byte vector for f32, two for f64), so that each row
 * of a subgroup is one coalesced load or store, where the group-per-invocation layout's
 * invocations each read 64 bytes of their own (f32). Group c * 64 + mt / 4 then lies on the 4
 * lanes of a quad, lane q = mt & 3 holding its positions 4q .. 4q + 3. Its prefix is
 * group_prefix's, the same operations on the same operands; the steps that cross lanes take
 * the neighbour's values by shuffles. Everything else (the totals in tots, the L chains, the
 * look-back) is the same for both layouts. */
FT sh_xor1(FT x)
{
#if TSIZE == 4
    return uintBitsToFloat(subgroupShuffleXor(floatBitsToUint(x), 1u));
#else
    return uint64BitsToDouble(pack64(subgroupShuffleXor(unpack32(doubleBitsToUint64(x)), 1u)));
#endif
}
/* x of lane src of this invocation's quad */
FT sh_quad(FT x, uint src)
{
    uint l = (gl_SubgroupInvocationID & ~3u) | src;
#if TSIZE == 4
    return uintBitsToFloat(subgroupShuffle(floatBitsToUint(x), l));
#else
    return uint64BitsToDouble(pack64(subgroupShuffle(unpack32(doubleBitsToUint64(x)), l)));
#endif
}
FT qop(FT a, FT b, bool checked) { return checked ? op2(a, b) : op_raw(a, b); }
FT pick4(FT p[4], uint i) { return i == 0u ? p[0] : i == 1u ? p[1] : i == 2u ? p[2] : p[3]; }

/* group_prefix on a quad: p holds positions 4q .. 4q + 3 of a group of m elements. Position
 * k's step partner k - s is in the same lane, or (q odd, the half's second lane) in lane q - 1,
 * which is lane q ^ 1; p[7] is lane 1's p[3]. Every lane runs every shuffle (uniform control
 * flow); only positions below m are computed, as there. */
void quad_prefix(inout FT p[4], uint q, uint m, bool checked, bool full)
{
#if !TVK_DENORM_PRESERVE
    if (checked) [[unroll]] for (uint j = 0u; j < 4u; j++) edge_note(p[j]); /* the elements */
#endif
    uint k0 = 4u * q;
    bool odd = (q & 1u) != 0u;
    /* s = 1: k mod 8 >= 1 */
    FT x3 = sh_xor1(p[3]);
    [[unroll]] for (int j = 3; j >= 1; j--)
        if (full || k0 + uint(j) < m) p[j] = qop(p[j - 1], p[j], checked);
    if (odd && (full || k0 < m)) p[0] = qop(x3, p[0], checked);
    /* s = 2: k mod 8 >= 2 */
    FT x2 = sh_xor1(p[2]);
    x3 = sh_xor1(p[3]);
    [[unroll]] for (int j = 3; j >= 2; j--)
        if (full || k0 + uint(j) < m) p[j] = qop(p[j - 2], p[j], checked);
    if (odd && (full || k0 + 1u < m)) p[1] = qop(x3, p[1], checked);
    if (odd && (full || k0 < m)) p[0] = qop(x2, p[0], checked);
    /* s = 4: k mod 8 >= 4, the odd lanes' positions */
    FT x[4];
    [[unroll]] for (uint j = 0u; j < 4u; j++) x[j] = sh_xor1(p[j]);
    if (odd) [[unroll]] for (uint j = 0u; j < 4u; j++)
        if (full || k0 + j < m) p[j] = qop(x[j], p[j], checked);
    /* k >= 8: p[7] op p[k] */
    FT b7 = sh_quad(p[3], 1u);
    if (q >= 2u) [[unroll]] for (uint j = 0u; j < 4u; j++)
        if (full || k0 + j < m) p[j] = qop(b7, p[j], checked);
}

/* This invocation's 4 elements of chunk c of block kb (len elements): those below len, zeros
 * beyond; vector loads where all 4 are there and the input is 16-byte aligned. */
void quad_load(uint kb, uint c, uint len, out FT p[4])
{
    uint eb = c * 1024u + 4u * mt;
    uint e32 = kb * 4096u + eb; /* (32 bits: a segment's binding is below 4 GiB) */
    if (eb + 4u <= len && (pc.in_head & 15u) == 0u) {
        uint v0 = (pc.in_head + e32 * uint(TSIZE)) >> 4;
#if TSIZE == 4
        uvec4 v = inv[v0];
        [[unroll]] for (uint j = 0u; j < 4u; j++) p[j] = uintBitsToFloat(v[j]);
#else
        uvec4 v = inv[v0], w = inv[v0 + 1u];
        p[0] = uint64BitsToDouble(pack64(v.xy));
        p[1] = uint64BitsToDouble(pack64(v.zw));
        p[2] = uint64BitsToDouble(pack64(w.xy));
        p[3] = uint64BitsToDouble(pack64(w.zw));
#endif
    } else {
        [[unroll]] for (uint j = 0u; j < 4u; j++) p[j] = eb + j < len ? load(uint64_t(e32 + j)) : FT(0);
    }
}

void quad_store(uint kb, uint c, uint len, FT o[4])
{
    uint eb = c * 1024u + 4u * mt;
    uint e32 = kb * 4096u + eb;
    if (eb + 4u <= len && (pc.out_head & 15u) == 0u) {
        uint v0 = (pc.out_head + e32 * uint(TSIZE)) >> 4;
#if TSIZE == 4
        outv[v0] = uvec4(floatBitsToUint(o[0]), floatBitsToUint(o[1]), floatBitsToUint(o[2]), floatBitsToUint(o[3]));
#else
        outv[v0] = uvec4(unpack32(doubleBitsToUint64(o[0])), unpack32(doubleBitsToUint64(o[1])));
        outv[v0 + 1u] = uvec4(unpack32(doubleBitsToUint64(o[2])), unpack32(doubleBitsToUint64(o[3])));
#endif
    } else {
        [[unroll]] for (uint j = 0u; j < 4u; j++)
            if (eb + j < len) store(uint64_t(e32 + j), o[j]);
    }
}

/* The elements of group gi of a block of len: m */
uint group_len(uint gi, uint len) { return 16u * gi < len ? min(len - 16u * gi, 16u) : 0u; }

/* STAGE: this invocation's prefix of chunk c of the workgroup's block b, kept and taken back
 * (its own words: no barrier) */
uint stg_at(uint b, uint c, uint h)
{
    uint sb = REGB ? b - 1u : b;
    return ((sb * 4u + c) * uint(TSIZE / 4) + h) * uint(WG) + tid;
}
void stage_put(uint b, uint c, FT p[4])
{
#if TSIZE == 4
    stg[stg_at(b, c, 0u)] = uvec4(floatBitsToUint(p[0]), floatBitsToUint(p[1]), floatBitsToUint(p[2]), floatBitsToUint(p[3]));
#else
    stg[stg_at(b, c, 0u)] = uvec4(unpack32(doubleBitsToUint64(p[0])), unpack32(doubleBitsToUint64(p[1])));
    stg[stg_at(b, c, 1u)] = uvec4(unpack32(doubleBitsToUint64(p[2])), unpack32(doubleBitsToUint64(p[3])));
#endif
}
void stage_get(uint b, uint c, out FT p[4])
{
    uvec4 v = stg[stg_at(b, c, 0u)];
#if TSIZE == 4
    [[unroll]] for (uint j = 0u; j < 4u; j++) p[j] = uintBitsToFloat(v[j]);
#else
    uvec4 w = stg[stg_at(b, c, 1u)];
    p[0] = uint64BitsToDouble(pack64(v.xy));
    p[1] = uint64BitsToDouble(pack64(v.zw));
    p[2] = uint64BitsToDouble(pack64(w.xy));
    p[3] = uint64BitsToDouble(pack64(w.zw));
#endif
}

/* Block kb's group totals into tots[slot] (the quad layout; checked prefixes): group G's total
 * is its last element's prefix, held by lane (m - 1) / 4 (lane 0 writes an empty group's 0).
 * All chunks are loaded before any prefix (their loads in flight together); full: len is 4096.
 * keep: the prefixes go to stg as the workgroup's block slot (STAGE; not a fallback's block). */
void quad_totals_in(uint slot, FT p[4][4], uint len, bool full, bool keep, out FT pre[4][4])
{
    uint q = mt & 3u;
    [[unroll]] for (uint c = 0u; c < 4u; c++) {
        uint G = c * 64u + (mt >> 2), m = full ? 16u : group_len(G, len);
        FT pc4[4] = p[c];
        quad_prefix(pc4, q, m, true, full);
        uint last = m > 0u ? m - 1u : 0u;
        if ((last >> 2) == q) tots[slot][G] = m > 0u ? pick4(pc4, last & 3u) : FT(0);
        if (keep) stage_put(slot, c, pc4);
        pre[c] = pc4;
    }
}
/* (pre: the chunks' prefixes, for a block held in registers: REGB) */
void quad_totals(uint kb, uint slot, bool keep, out FT pre[4][4])
{
    uint len = block_len(kb);
    FT p[4][4];
    [[unroll]] for (uint c = 0u; c < 4u; c++) quad_load(kb, c, len, p[c]);
    if (FULLP && len == 4096u) quad_totals_in(slot, p, len, true, keep, pre);
    else quad_totals_in(slot, p, len, false, keep, pre);
}

/* The outputs of chunk c of block kb (the workgroup's block b, len elements) from its prefix in
 * p (prefixed: from stg; else its elements, prefixed again here, unchecked: the same bits),
 * l = p (the block's first group) or L_(G-1) op p, then carry op l; the exclusive scan's element
 * before is in this lane, or lane q - 1's last, or (q = 0) L_(G-1) itself. full: len is 4096
 * (every group whole, no bounds). */
void quad_out(uint kb, uint b, uint c, uint len, FT p[4], FT carry, bool full, bool prefixed)
{
    uint q = mt & 3u;
    uint G = c * 64u + (mt >> 2), mm = full ? 16u : group_len(G, len);
    if (!prefixed) quad_prefix(p, q, mm, false, full);
    FT lp = G > 0u ? ls[b][G - 1u] : FT(0);
    FT l[4], o[4];
    [[unroll]] for (uint j = 0u; j < 4u; j++)
        l[j] = G == 0u || (!full && 4u * q + j >= mm) ? p[j] : op2(lp, p[j]);
    FT before = sh_quad(l[3], (q + 3u) & 3u);
    [[unroll]] for (uint j = 0u; j < 4u; j++) {
        o[j] = FT(0);
        if (full || 4u * q + j < mm) {
            if (EXCL == 0u) o[j] = op2(carry, l[j]);
            else if (G == 0u && q == 0u && j == 0u) o[j] = carry;
            else o[j] = op2(carry, j > 0u ? l[j - 1u] : q > 0u ? before : lp);
        }
    }
    quad_store(kb, c, len, o);
}

/* The L chains of blocks kb0 .. kb0 + nbw - 1 over their group totals in tots[slot0 + b]
 * (written by the caller, then a barrier): lprev[b] = L_(tid-1) (0 for group 0, which takes p
 * itself), llast[b] = L_last = the block's A. On GPUs block b's chain runs in invocation 32 b
 * alone (the chains side by side, one per subgroup), with plain operations, and each step is
 * checked afterwards by the invocation of its group; on CPU devices every invocation runs every
 * chain (lavapipe drops stores after a loop one SIMD group ran alone). */
void publish(uint t, uint s, FT v);
void l_chains(uint kb0, uint slot0, uint nbw, uint gpub, out FT lprev[NBMAX], out FT llast[NBMAX])
{
    [[unroll]] for (uint b = 0u; b < NBMAX; b++) {
        lprev[b] = FT(0);
        llast[b] = FT(0);
    }
    for (uint b = 0u; b < nbw; b++) {
        if (!all_chain && !(tid == 32u * b)) continue;
        uint sl = slot0 + b, ng = (block_len(kb0 + b) + 15u) / 16u;
        FT l = tots[sl][0];
        if (all_chain) {
            for (uint q = 0u; q < uint(WG) / 16u; q++) {
                FT v[16];
                [[unroll]] for (uint c = 0u; c < 16u; c++) v[c] = tots[sl][16u * q + c];
                [[unroll]] for (uint c = 0u; c < 16u; c++) {
                    uint i = 16u * q + c;
                    if (i > 0u && i < ng) l = op2(l, v[c]);
                    if (i + 1u == tid) lprev[b] = l;
                    if (i == tid) ls[sl][i] = l; /* (the quad layout reads its groups' L's here) */
                }
            }
        } else if (CHAIN_PF && ng == uint(WG)) {
            /* a whole block's chain: no bounds, the next 16 totals read while these are added
             * (the chains' phase ~6,700 -> ~4,000 cycles per workgroup on the H200) */
            FT v[16];
            [[unroll]] for (uint c = 0u; c < 16u; c++) v[c] = tots[sl][c];
            for (uint q = 0u; q < uint(WG) / 16u; q++) {
                FT nv[16];
                uint qn = min(q + 1u, uint(WG) / 16u - 1u);
                [[unroll]] for (uint c = 0u; c < 16u; c++) nv[c] = tots[sl][16u * qn + c];
                [[unroll]] for (uint c = 0u; c < 16u; c++) {
                    if (c > 0u || q > 0u) l = op_raw(l, v[c]);
                    ls[sl][16u * q + c] = l;
                }
                [[unroll]] for (uint c = 0u; c < 16u; c++) v[c] = nv[c];
            }
        } else if (ng == uint(WG)) {
            /* a whole block's chain without bounds: its steps' only dependence is the add */
            for (uint q = 0u; q < uint(WG) / 16u; q++) {
                FT v[16];
                [[unroll]] for (uint c = 0u; c < 16u; c++) v[c] = tots[sl][16u * q + c];
                [[unroll]] for (uint c = 0u; c < 16u; c++) {
                    if (c > 0u || q > 0u) l = op_raw(l, v[c]);
                    ls[sl][16u * q + c] = l;
                }
            }
        } else {
            for (uint q = 0u; q < uint(WG) / 16u; q++) {
                FT v[16];
                [[unroll]] for (uint c = 0u; c < 16u; c++) v[c] = tots[sl][16u * q + c];
                [[unroll]] for (uint c = 0u; c < 16u; c++) {
                    uint i = 16u * q + c;
                    if (i > 0u && i < ng) l = op_raw(l, v[c]);
                    ls[sl][i] = l;
                }
            }
        }
        llast[b] = l;
        /* (EPUB: the chain's own invocation publishes its A; gpub: the first block's tile, or
         * ~0u for none) */
        if (EPUB && !all_chain && gpub != ~0u) publish(gpub + b, 1u, l);
    }
    barrier();
    if (!all_chain) {
        [[unroll]] for (uint b = 0u; b < NBMAX; b++) {
            if (b < NB && b < nbw) {
                uint sl = slot0 + b, ng = (block_len(kb0 + b) + 15u) / 16u;
                lprev[b] = tid > 0u ? ls[sl][tid - 1u] : FT(0);
                llast[b] = ls[sl][ng - 1u];
                /* the chain's step tid, checked here (one per invocation) */
                if (tid > 0u && tid < ng) op_check(lprev[b], tots[sl][tid], ls[sl][tid]);
            }
        }
    }
}

/* Block kb of this segment reduced (a fallback's): returns its A. */
FT block_reduce(uint kb, uint slot)
{
    if (quad) {
        FT unused[4][4];
        quad_totals(kb, slot, false, unused);
    } else {
        FT p[16];
        uint m;
        group_load_prefix(kb, p, m, true);
        tots[slot][tid] = m > 0u ? p[m - 1u] : FT(0);
    }
    barrier();
    FT lp[NBMAX], ll[NBMAX];
    l_chains(kb, slot, 1u, ~0u, lp, ll);
    return ll[0];
}

uint state_of(uint64_t w) { uint f = uint(w >> 32); return (f >> 2) == pc.epoch ? (f & 3u) : 0u; }
uint sidx(uint t) { return t << max((pc.flags >> 8) & 15u, 1u); }

/* Slot s (1: A, 2: P) of tile t: its value if published this call. */
bool read_slot(uint t, uint s, out FT v)
{
    uint64_t w = atomicLoad(st[sidx(t) + s - 1u], gl_ScopeDevice, 0, 0);
    bool ok = state_of(w) == s;
#if TSIZE == 8
    v = FT(0);
    if (ok) {
        memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
        v = FROM_BITS(atomicLoad(val[2u * t + s - 1u], gl_ScopeDevice, 0, 0));
    }
#else
    v = FROM_BITS(uint(w));
#endif
    return ok;
}

/* Tile t's state: 2 (its P in v), 1 (its A in v) or 0 (nothing yet). */
uint read_state(uint t, out FT v)
{
    FT pv, av;
    bool hp = read_slot(t, 2u, pv);
    bool ha = read_slot(t, 1u, av);
    v = hp ? pv : av;
    return hp ? 2u : (ha ? 1u : 0u);
}

void publish(uint t, uint s, FT v)
{
    uint64_t f = uint64_t((pc.epoch << 2) | s) << 32;
#if TSIZE == 8
    atomicStore(val[2u * t + s - 1u], TO_BITS(v), gl_ScopeDevice, 0, 0);
    atomicStore(st[sidx(t) + s - 1u], f, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
#else
    atomicStore(st[sidx(t) + s - 1u], f | TO_BITS(v), gl_ScopeDevice, 0, 0);
#endif
}

/* The sums' lean fold of kept[n - 1] (the farthest) .. kept[0] into c (LEAN; GPUs: in
 * invocation 0). op_check is empty for sums, so no step's result is kept: a read and an add per
 * A, not a read, an add and a store. The farthest n mod 16 first, then aligned runs of 16
 * (kept[16 q .. 16 q + 15], q descending; reading the next run while this one is added made no
 * difference). Why it matters: the fold's cost per A, f, sets how far back the walks find their
 * P. Tiles publish their A every ~a cycles (H200 f32: ~28), and a tile publishes its P only
 * after its fold; the walks' length then grows like f / (a - f). At f ~19 cycles (a read, an
 * add and a store, issued among the SM's other warps) the walks passed ~110 A's. */
FT lean_fold(FT c, uint n)
{
    uint r = n & 15u, nq = n >> 4;
    [[unroll]] for (uint k = 0u; k < 15u; k++)
        if (k < r) c = op_raw(c, kept[n - 1u - k]);
    for (uint q = nq; q > 0u; q--) {
        FT v[16];
        [[unroll]] for (uint k = 0u; k < 16u; k++) v[k] = kept[((q - 1u) << 4) + 15u - k];
        [[unroll]] for (uint k = 0u; k < 16u; k++) c = op_raw(c, v[k]);
    }
    return c;
}

/* EPUB: the workgroup's P's from its carry c, as main computes them (the same operations) */
void publish_ps(uint g, FT c)
{
    [[unroll]] for (uint b = 0u; b < NBMAX; b++) {
        if (b < NB && b < pub_n) {
            c = op2(c, pub_a[b]);
            publish(g + b, 2u, c);
        }
    }
}

/* The fold of the A's passed, kept[d - 1] (the farthest) .. kept[0] (tile g - 1), into c: the
 * carry of tile g, returned to every invocation. A's beyond KEEP were not kept and are read
 * again from their slots first, LBW at a time (they never change once written), and folded by
 * invocation 0 (every invocation on CPU devices), its steps checked afterwards by all. */
FT fold(uint g, FT c, uint d, uint par)
{
    uint r = par ^ 1u; /* (the walk's last step read win_v[par]) */
    for (uint hi = d; hi > keep;) {
        uint lo = hi > keep + uint(LBW) ? hi - uint(LBW) : keep;
        barrier(); /* win_v[r] is free: not read since two barriers ago */
        if (tid < hi - lo) {
            FT v;
            read_slot(g - hi + tid, 1u, v); /* index hi - 1 - tid: passed as an A, holds one */
            win_v[r][tid] = v;
        }
        barrier();
        uint cnt = hi - lo;
        if (all_chain) {
            for (uint q = 0u; q < cnt; q++) c = op2(c, win_v[r][q]);
        } else {
            /* GPUs: as the kept part below (a step here used to cost a read from shared
             * memory and an op2, ~40 cycles; walks this long are rare, so the scan's pace did
             * not move, but a long walk should not cost more per step than a short one) */
            if (tid == 0u) {
                cw_in = c;
                for (uint q = 0u; q < cnt; q += 16u) {
                    FT v[16];
                    [[unroll]] for (uint k = 0u; k < 16u; k++) v[k] = win_v[r][q + k];
                    [[unroll]] for (uint k = 0u; k < 16u; k++) {
                        if (q + k < cnt) {
                            c = op_raw(c, v[k]);
                            cs[q + k] = c;
                        }
                    }
                }
            }
            barrier();
            if (tid < cnt) op_check(tid > 0u ? cs[tid - 1u] : cw_in, win_v[r][tid], cs[tid]);
            c = cs[cnt - 1u];
        }
        hi = lo;
        r ^= 1u;
    }
    if (d > keep) barrier(); /* (cs read above, written below) */
    uint n = min(d, keep);
    if (all_chain && LEAN && (pc.flags & 128u) != 0u) {
        /* tests (flags bit 7, lavapipe): the GPUs' lean fold and its P's, in every invocation
         * (lavapipe loses the stores after a loop that one invocation runs alone) */
        c = lean_fold(c, n);
        if (tid == 0u && EPUB) publish_ps(g, c);
        pub_done = EPUB;
        return c;
    }
    if (all_chain) {
        /* CPU devices: every invocation folds, each step checked as it goes */
        uint i = n;
        for (; i >= 16u; i -= 16u) {
            FT v[16];
            [[unroll]] for (uint k = 0u; k < 16u; k++) v[k] = kept[i - 1u - k];
            [[unroll]] for (uint k = 0u; k < 16u; k++) c = op2(c, v[k]);
        }
        [[unroll]] for (uint k = 0u; k < 16u; k++)
            if (k < i) c = op2(c, kept[i - 1u - k]);
        return c;
    }
    /* GPUs: invocation 0 folds with plain operations (the fold is the carry chain: every tile
     * waits on some fold, so its steps must cost no more than an add), keeping each step's
     * result (cs[x]: the fold through kept[x]); then every invocation checks some steps, and
     * the last result is everyone's */
    if (LEAN) {
        if (tid == 0u) {
            c = lean_fold(c, n);
            c_in = c;
            if (EPUB) publish_ps(g, c);
        }
        pub_done = EPUB;
        barrier();
        return c_in;
    }
    if (tid == 0u) {
        c_in = c;
        uint i = n;
        for (; i >= 16u; i -= 16u) {
            FT v[16];
            [[unroll]] for (uint k = 0u; k < 16u; k++) v[k] = kept[i - 1u - k];
            [[unroll]] for (uint k = 0u; k < 16u; k++) {
                c = op_raw(c, v[k]);
                cs[i - 1u - k] = c;
            }
        }
        [[unroll]] for (uint k = 0u; k < 16u; k++) {
            if (k < i) {
                c = op_raw(c, kept[i - 1u - k]);
                cs[i - 1u - k] = c;
            }
        }
    }
    barrier();
    for (uint x = tid; x < n; x += uint(WG)) op_check(x + 1u < n ? cs[x + 1u] : c_in, kept[x], cs[x]);
    return n > 0u ? cs[0] : c_in;
}

/* carry_g, the fold from the nearest P (see the top): every invocation returns it.
 * The walk reads LBW states (one per invocation) at every step, so that a walk past many A's
 * costs few round trips (flags bit 6, the host's default; without it LBW0 at the first step and
 * after a stall, then LBW); the A's it passes are kept in shared memory (kept[i] = A of tile g - 1 - i) for
 * the fold, which then reads nothing from memory (up to KEEP of them). */
FT lookback(uint g)
{
    FT start = FROM_BITS(pc.start);
    uint got = 0u;   /* A's passed: tiles g - 1 .. g - got */
    /* flags bit 6: LBW at every step (walks on the H200 pass ~110 A's: 1.6 steps instead of 2.6) */
    uint w0 = (pc.flags & 64u) != 0u ? uint(LBW) : uint(LBW0);
    uint w = w0;
    uint idle = 0u, par = 0u, s3 = 0u;
    uint fb = 0u;
    if (tid == 0u) win_first[0] = uint(LBW);
    for (;;) {
        barrier(); /* win_*[par] are free (read two steps ago); win_first[s3] is set */
        /* the next step's slot (read three barriers ago, so never right before this one) */
        if (tid == 0u) win_first[s3 == 2u ? 0u : s3 + 1u] = uint(LBW);
        uint j = g - 1u - got; /* the nearest tile not yet passed */
        if (tid < w) {
            FT v = FT(0);
            uint s = 3u; /* before tile 0: the start value stands for a P there */
            if (tid <= j) s = read_state(j - tid, v);
            win_f[par][tid] = s;
            win_v[par][tid] = v;
            if (s == 1u && got + tid < keep) kept[got + tid] = v;
            if (s != 1u) atomicMin(win_first[s3], tid);
        }
        barrier();
        /* nearest first: m A's, then (m < w) a P or the start, which ends the walk, or a tile
         * without a state, which stops this step */
        uint m = min(win_first[s3], w);
#if TVK_CLOCK
        pr_steps++;
        pr_d = got + m;
#endif
        if (m < w && win_f[par][m] != 0u) {
#if TVK_CLOCK
            pr_f0 = clk();
#endif
            FT c = win_f[par][m] == 2u ? win_v[par][m] : start;
            return fold(g, c, got + m, par);
        }
        got += m;
        if (m == w) {
            w = uint(LBW);
            idle = 0u;
        } else {
            w = w0;
            idle = m > 0u ? 0u : idle + 1u;
            /* tile j has published nothing for too long: reduce its block here and publish
             * its A (an earlier segment's tiles all hold P: only this dispatch's can be silent) */
            j = g - 1u - got;
            if (idle > pc.spins && j >= pc.tile0) {
                FT a = block_reduce(j - pc.tile0, NB + (fb & 1u));
                fb++;
                if (tid == 0u) {
                    if (j == 0u) publish(0u, 2u, op2(start, a));
                    else publish(j, 1u, a);
                }
                idle = 0u;
            }
        }
        par ^= 1u;
        s3 = s3 == 2u ? 0u : s3 + 1u;
    }
    return start;
}

/* flags bits 16-27 (PD): the invocations of the subgroups not running an L chain read one word
 * of every 32-byte sector (L2's unit; one word per 64 or 128 bytes was slower on the H200) of
 * the input of workgroup w + PD's blocks while the chains run, so that those sectors are in L2
 * when that workgroup loads them: the workgroups resident at once hold only their own loads in
 * flight, and each spends ~60% of its life in the L chains, the look-back and the outputs. The
 * words are combined and tested against flags bit 31, which the host never sets, so that the
 * loads are kept; they change no result. The loads are waited for before the chains' barrier,
 * which those subgroups would wait at anyway. (12 reads per invocation cover 2 blocks of either
 * type; of 4 f32 blocks, taken without STAGE, the first 3/4.) */
void prefetch_input(uint w2)
{
    uint kb = w2 * NB;
    if (kb >= pc.ntiles || tid < 32u * NB) return;
    uint64_t rem = pc.n - uint64_t(kb) * 4096ul;
    uint len = min(rem >= 16384ul ? 16384u : uint(rem), NB * 4096u);
    uint words = len * uint(TSIZE / 4);
    uint base = (pc.in_head >> 2) + kb * 4096u * uint(TSIZE / 4);
    const uint nthr = uint(WG) - 32u * NB;
    uint acc = 0u;
    [[unroll]] for (uint k = 0u; k < 12u; k++) {
        uint i = ((tid - 32u * NB) + k * nthr) * 8u;
        if (i < words) acc |= inw[base + i];
    }
    if ((acc & (pc.flags >> 31)) != 0u) atomicOr(stw[pc.stats_at], 2u);
}

void main()
{
    tid = gl_LocalInvocationID.x;
    quad = QUAD_REQ && gl_SubgroupSize >= 4u && gl_NumSubgroups * gl_SubgroupSize == uint(WG);
    mt = quad ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID : tid;
    all_chain = (pc.flags & 8u) != 0u;
    keep = (pc.flags & 32u) != 0u ? 16u : KEEPN;
    uint nwg = (pc.ntiles + NB - 1u) / NB;
    uint w = (pc.flags & 1u) != 0u ? nwg - 1u - gl_WorkGroupID.x : gl_WorkGroupID.x;
    uint k0 = w * NB, nbw = min(NB, pc.ntiles - k0); /* this workgroup's blocks of the segment */
    uint g0 = pc.tile0 + k0;                          /* (global index of the first) */
#if TVK_CLOCK
    uint64_t r0 = rt(), c0 = clk();
#endif
    uint m[NBMAX];
    FT lprev[NBMAX], a[NBMAX];
    FT hb[4][4]; /* REGB: the first block's prefixes */
    [[unroll]] for (uint b = 0u; b < NBMAX; b++) {
        m[b] = 0u;
        if (b >= NB) continue;
        if (b < nbw && quad) {
            FT pre[4][4];
            quad_totals(k0 + b, b, STAGE && !(REGB && b == 0u), pre);
            if (b == 0u) hb = pre;
            if (SEQ1) barrier();
        } else if (b < nbw) {
            FT p[16]; /* (dead after the reduction: the outputs load the group again, below) */
            group_load_prefix(k0 + b, p, m[b], true);
            tots[b][tid] = m[b] > 0u ? p[m[b] - 1u] : FT(0);
        }
    }
    barrier();
#if TVK_CLOCK
    uint64_t c1 = clk();
#endif
    uint pd = (pc.flags >> 16) & 4095u;
    if (pd != 0u) prefetch_input(w + pd);
    l_chains(k0, 0u, nbw, g0 != 0u ? g0 : ~0u, lprev, a);
#if TVK_CLOCK
    uint64_t c2 = clk(), r2 = rt();
#endif
    FT start = FROM_BITS(pc.start);
    edge_note(start);
    FT c = start;
    if (g0 != 0u) {
        if (tid == 0u && !(EPUB && !all_chain))
            [[unroll]] for (uint b = 0u; b < NBMAX; b++)
                if (b < NB && b < nbw) publish(g0 + b, 1u, a[b]);
        pub_a = a;
        pub_n = nbw;
        c = lookback(g0);
    }
#if TVK_CLOCK
    uint64_t c3 = clk(), r3 = rt();
#endif
    /* the blocks' carries, the chain's own steps: carry_(b+1) = carry_b op A_b = P_b */
    FT cb[NBMAX];
    [[unroll]] for (uint b = 0u; b < NBMAX; b++) {
        cb[b] = c;
        if (b < NB && b < nbw) {
            c = op2(c, a[b]);
            if (tid == 0u && !pub_done) publish(g0 + b, 2u, c);
        }
    }
    if (quad) {
        /* the quad layout's outputs: each chunk's prefix from stg (STAGE), or its elements
         * loaded again (quad_out) */
        [[unroll]] for (uint b = 0u; b < NBMAX; b++) {
            if (b >= NB || b >= nbw) continue;
            uint len = block_len(k0 + b);
            [[unroll]] for (uint c = 0u; c < 4u; c++) {
                FT p[4];
                if (REGB && b == 0u) p = hb[c];
                else if (STAGE) stage_get(b, c, p);
                else quad_load(k0 + b, c, len, p);
                if (FULLP && len == 4096u) quad_out(k0 + b, b, c, len, p, cb[b], true, STAGE);
                else quad_out(k0 + b, b, c, len, p, cb[b], false, STAGE);
            }
        }
    }
    [[unroll]] for (uint b = 0u; b < NBMAX; b++) {
        if (quad || b >= NB || b >= nbw || m[b] == 0u) continue;
        /* The group again, from memory (L2, read moments ago: the input never changes during
         * the dispatch) and its prefix again (the same operations, the same bits): holding the
         * groups in registers through the look-back costs more (H200, 2^26: f32 exclusive 392
         * against 365 µs, f64 1,148 against 1,059; f32 inclusive 391 against 405), and so
         * did loading every block's group at once, or side by side through shared memory
         * (docs/performance.md, "Vulkan: where the float scan's time goes"). Then the
         * local values l = p (first group) or L_(i-1) op p; outputs carry op l (inclusive), or
         * carry, then carry op (the element before's l) (exclusive). */
        FT p[16];
        uint mm;
        group_load_prefix(k0 + b, p, mm, false); /* (checked the first time) */
        FT o[16];
        FT prev = lprev[b];
        [[unroll]] for (uint q = 0u; q < 16u; q++) {
            o[q] = FT(0);
            if (q < mm) {
                FT l = tid == 0u ? p[q] : op2(lprev[b], p[q]);
                if (EXCL != 0u) o[q] = tid == 0u && q == 0u ? cb[b] : op2(cb[b], prev);
                else o[q] = op2(cb[b], l);
                prev = l;
            }
        }
        store_group(uint64_t(k0 + b) * uint64_t(WG) + uint64_t(tid), mm, o);
    }
    if (edge_seen()) atomicOr(stw[pc.stats_at], 1u);
#if TVK_CLOCK
    /* 8 words per workgroup in val, after the tiles' values (f64: 2 per tile; f32 keeps its
     * values in the state words); the host sized val for them */
    if (tid == 0u) {
        uint64_t c4 = clk(), r4 = rt();
        uint b8 = (TSIZE == 8 ? 2u * (pc.tile0 + pc.ntiles) : 0u) + 8u * gl_WorkGroupID.x;
        val[b8] = r0;
        val[b8 + 1u] = r2;
        val[b8 + 2u] = r3;
        val[b8 + 3u] = r4;
        val[b8 + 4u] = c1 - c0;
        val[b8 + 5u] = c2 - c1;
        val[b8 + 6u] = (c3 - c2) | (g0 != 0u ? (c3 - pr_f0) << 32 : 0ul); /* high: the fold */
        val[b8 + 7u] = (c4 - c3) | (uint64_t(pr_d) << 32) | (uint64_t(min(pr_steps, 255u)) << 56);
    }
#endif
}
