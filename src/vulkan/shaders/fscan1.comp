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
 * Here one block is one workgroup's tile (global tile g = pc.tile0 + workgroup), one group one
 * invocation (its 16 elements and their prefix in registers). The L chain runs in ONE invocation,
 * 16 totals at a time from shared memory into registers and the L's back (on CPU devices, flags
 * bit 3, every invocation runs it: lavapipe drops stores after a loop one SIMD group ran alone).
 *
 * The carry chain is an ORDERED-FOLD look-back, the CUDA backend's (src/cuda/scan_lookback.cuh):
 * a tile publishes A_g as soon as its block is reduced and its inclusive prefix P_g =
 * carry_(g+1) once known (global tile 0: P_0 = start op A_0 at once). The look-back reads the
 * predecessors' states nearest first, LB at a time, and stops at the nearest tile j holding a P
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
#include "common.glsl"
#if TVK_DENORM_PRESERVE && TSIZE == 4
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 32);
#elif TVK_DENORM_PRESERVE
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 64);
#endif

#define WG 256 /* one block (256 groups of 16) per workgroup, one group per invocation */
#define LB 32  /* tile states read per look-back step */
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;   /* 0 sum, 1 prod */
layout(constant_id = 1) const uint VAR = 0;  /* (unused) */
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
    uint ntiles;      /* tiles (workgroups) of this dispatch */
    uint tile0;       /* global index of the segment's first tile */
    uint epoch;       /* the call's epoch (1 .. 2^30 - 1) */
    uint spins;       /* look-back steps without progress before a fallback */
    uint flags;       /* bit 0 (tests): workgroup i takes tile ntiles - 1 - i; bit 2 (tests):
                       * emulate a flushing device (op2); bit 3: every invocation runs the L
                       * chain (CPU devices); bits 8-11: sh (above) */
    uint stats_at;    /* index in stw of the call's edge flag word */
} pc;

#include "fscan_ops.glsl"

uint tid;
bool all_chain;

/* Slot 0: this tile's block; 1 and 2: the fallbacks' blocks, alternating (no shared word read
 * before a barrier is written by another invocation right after it: lavapipe). */
shared FT tots[3][WG]; /* the groups' totals */
shared FT ls[3][WG];   /* the L chain over them */
shared uint lb_f[2][LB];
shared FT lb_v[2][LB];
shared FT fa[2][LB];

/* The L chain over the block's ng group totals in tots[slot] (written by the caller, then a
 * barrier): lprev = L_(tid-1) (0 for group 0, which takes p itself), llast = L_(ng-1). */
void l_chain(uint slot, uint ng, out FT lprev, out FT llast)
{
    lprev = FT(0);
    llast = FT(0);
    if (all_chain || tid == 0u) {
        FT l = tots[slot][0];
        for (uint q = 0u; q < uint(WG) / 16u; q++) {
            FT v[16];
            [[unroll]] for (uint c = 0u; c < 16u; c++) v[c] = tots[slot][16u * q + c];
            [[unroll]] for (uint c = 0u; c < 16u; c++) {
                uint i = 16u * q + c;
                if (i > 0u && i < ng) l = op2(l, v[c]);
                v[c] = l;
                if (all_chain && i + 1u == tid) lprev = l;
            }
            if (!all_chain) [[unroll]] for (uint c = 0u; c < 16u; c++) ls[slot][16u * q + c] = v[c];
        }
        llast = l;
    }
    barrier();
    if (!all_chain) {
        lprev = tid > 0u ? ls[slot][tid - 1u] : FT(0);
        llast = ls[slot][ng - 1u];
    }
}

/* Block kb of this segment: its groups' prefixes (this invocation's in p, m elements) and the L
 * chain; returns A = L_last, lprev as l_chain's. */
FT block_reduce(uint kb, uint slot, out FT p[16], out uint m, out FT lprev)
{
    uint len = uint(min(pc.n - uint64_t(kb) * 4096ul, 4096ul));
    uint ng = (len + 15u) / 16u;
    m = tid * 16u < len ? min(len - tid * 16u, 16u) : 0u;
    load_group(uint64_t(kb) * uint64_t(WG) + uint64_t(tid), m, p);
    group_prefix(p, m);
    tots[slot][tid] = m > 0u ? p[m - 1u] : FT(0);
    barrier();
    FT llast;
    l_chain(slot, ng, lprev, llast);
    return llast;
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

/* carry_g, the fold from the nearest P (see the top): every invocation computes it. */
FT lookback(uint g)
{
    FT start = FROM_BITS(pc.start);
    uint j = g - 1u;  /* the nearest tile not yet passed (tiles (j, g) hold A's) */
    uint idle = 0u, par = 0u, fb = 0u;
    for (;;) {
        barrier(); /* lb_*[par] are free (read two steps ago) */
        if (tid < uint(LB)) {
            FT v = FT(0);
            uint s = 3u; /* before tile 0: the start value stands for a P there */
            if (tid <= j) s = read_state(j - tid, v);
            lb_f[par][tid] = s;
            lb_v[par][tid] = v;
        }
        barrier();
        /* nearest first: A's, then a P (or the start) ends the walk, a tile without a state
         * stops this step */
        uint m = 0u, stop = 0u;
        [[unroll]] for (uint q = 0u; q < uint(LB); q++) {
            uint s = lb_f[par][q];
            if (stop == 0u) {
                if (s == 1u) m++;
                else stop = s == 0u ? 2u : 1u;
            }
        }
        if (stop == 1u) {
            /* the P (or the start) at q = m, then this window's A's left to right, then the
             * A's of the nearer windows (tiles j + 1 .. g - 1) read again, LB at a time */
            FT c = lb_f[par][m] == 2u ? lb_v[par][m] : start;
            [[unroll]] for (uint r = 0u; r < uint(LB); r++) {
                uint q = uint(LB) - 1u - r;
                if (q < m) c = op2(c, lb_v[par][q]);
            }
            for (uint t0 = j + 1u; t0 < g; t0 += uint(LB)) {
                par ^= 1u;
                barrier();
                if (tid < uint(LB) && t0 + tid < g) {
                    FT v;
                    read_slot(t0 + tid, 1u, v); /* (passed as an A: it holds one) */
                    fa[par][tid] = v;
                }
                barrier();
                [[unroll]] for (uint q = 0u; q < uint(LB); q++)
                    if (t0 + q < g) c = op2(c, fa[par][q]);
            }
            return c;
        }
        if (stop == 0u) {
            j -= uint(LB); /* LB A's: walk on (j >= LB, else a q past tile 0 had stopped it) */
            idle = 0u;
        } else {
            j -= m;
            idle = m > 0u ? 0u : idle + 1u;
            /* tile j has published nothing for too long: reduce its block here and publish
             * its A (an earlier segment's tiles all hold P: only this dispatch's can be silent) */
            if (idle > pc.spins && j >= pc.tile0) {
                FT q[16], lp;
                uint qm;
                FT a = block_reduce(j - pc.tile0, 1u + (fb & 1u), q, qm, lp);
                fb++;
                if (tid == 0u) {
                    if (j == 0u) publish(0u, 2u, op2(start, a));
                    else publish(j, 1u, a);
                }
                idle = 0u;
            }
        }
        par ^= 1u;
    }
    return start;
}

void main()
{
    tid = gl_LocalInvocationID.x;
    all_chain = (pc.flags & 8u) != 0u;
    uint k = (pc.flags & 1u) != 0u ? pc.ntiles - 1u - gl_WorkGroupID.x : gl_WorkGroupID.x;
    uint g = pc.tile0 + k;
    FT p[16], lprev;
    uint m;
    FT a = block_reduce(k, 0u, p, m, lprev);
    FT start = FROM_BITS(pc.start);
    FT c = start;
    if (g == 0u) {
        if (tid == 0u) publish(0u, 2u, op2(start, a));
    } else {
        if (tid == 0u) publish(g, 1u, a);
        c = lookback(g);
        if (tid == 0u) publish(g, 2u, op2(c, a));
    }
    if (m > 0u) {
        /* local values l = p (first group) or L_(i-1) op p; outputs c op l (inclusive), or c,
         * then c op (the element before's l) (exclusive) */
        FT o[16];
        FT prev = lprev;
        [[unroll]] for (uint q = 0u; q < 16u; q++) {
            o[q] = FT(0);
            if (q < m) {
                FT l = tid == 0u ? p[q] : op2(lprev, p[q]);
                if (EXCL != 0u) o[q] = tid == 0u && q == 0u ? c : op2(c, prev);
                else o[q] = op2(c, l);
                prev = l;
            }
        }
        store_group(uint64_t(k) * uint64_t(WG) + uint64_t(tid), m, o);
    }
    if (bad) atomicOr(stw[pc.stats_at], 1u);
}
