#version 450
#pragma use_vulkan_memory_model
/* Single-pass scans of the associative ops (integer sum/prod/min/max/and/or/xor, float
 * min/max): one dispatch, each element read once and written once, with a decoupled look-back
 * that needs no forward progress between workgroups. The model is the CUDA backend's one-pass
 * scan (src/cuda/scan_lookback.cuh).
 *
 * Tile: TB = 256 invocations x VPT 16-byte vectors (VPT a specialization constant, the host's
 * SCAN1_VPT), laid on the output binding (tile k is its bytes [k TB, (k+1) TB)), so that every
 * 16-byte output vector, and so every output word, has one writer. The tile is split among the
 * subgroups: subgroup s owns a contiguous stretch of SG * VPT vectors, and its lane l holds
 * vectors l, l + SG, ... of it in registers (each row of SG vectors one coalesced load and one
 * coalesced store). A full tile whose input and output share their alignment is loaded and
 * stored as whole vectors; a tile at an edge of the data, or an input whose byte offset differs
 * from the output's modulo 16, goes element by element.
 *
 * Scan inside the tile: each vector's elements in registers, each row over the lanes with
 * subgroup shuffles, the subgroups' totals in shared memory. Values are 32-bit for the 1-, 2-
 * and 4-byte types (sums and products wrap modulo 2^32, which leaves the element's low bytes
 * as modulo 2^bits would), 64-bit for the 8-byte ones. Where the workgroup's subgroups are not
 * all full (Vulkan allows partial ones; no known driver makes them at this size), or the host
 * asks for it (flags bit 1, tests), every invocation is a "subgroup" of one lane: the same code
 * without shuffles.
 *
 * Look-back: the tile publishes its aggregate A at once and its inclusive prefix P when known.
 * With LBSG (GPU drivers) subgroup 0 alone walks back, one predecessor's state per lane and
 * step, with no workgroup barrier in its loop (lookback_sg); otherwise (CPU devices: lavapipe)
 * every invocation takes every step, invocations 0-31 reading LB (32) states and invocation 0
 * combining them, with three workgroup barriers a step. Both combine, nearest first, the A's
 * until they meet a P. A state is one 64-bit word per tile: the flag (epoch << 2 | status,
 * status 1: A, 2: P) in its high half and, for 32-bit values, the value in its low half (one
 * load, no ordering between flag and value); 64-bit values sit in two slots of val (A, P),
 * stored before the flag word (release) and loaded after it (acquire). (Each tile's words may
 * have a cache line of their own: sidx, vidx.) Every state word's high
 * half is a flag of some call's epoch, whichever value width wrote it, so a call never mistakes
 * another call's value bits for a flag. The epoch is the call's: earlier calls' states read as
 * "nothing yet" and no buffer is cleared per call. Global tile 0 publishes P at once.
 *
 * Forward progress (Vulkan promises none between workgroups; lavapipe runs a dispatch's
 * workgroups on a few threads, in any order): when the nearest tile without a state has
 * published nothing for pc.spins steps in a row, the whole workgroup reduces that tile itself
 * from the input (the "decoupled fallback") and the look-back walks on. So no workgroup ever
 * waits for one that has not started, and a dispatch finishes whatever the scheduling.
 *
 * In place, a tile's input is overwritten by its outputs, and a fallback may read a tile whose
 * owner is writing. The owner writes outputs only after publishing P (its state store
 * happens-before its outputs: a workgroup barrier with buffer semantics, then a device-scope
 * release fence in every invocation before its stores); the fallback re-reads the state after
 * its input loads (a device-scope acquire fence in every invocation, then a barrier). If any
 * load saw an output, the re-read state is P and its value is taken instead (the seqlock
 * pattern); otherwise every load saw the input. (Out of place, APART, no output is read during
 * the dispatch: the outputs are plain stores without that fence.)
 *
 * Memory model: Vulkan's (use_vulkan_memory_model; the device needs vulkanMemoryModel and
 * vulkanMemoryModelDeviceScope, and subgroup shuffles in compute shaders). Segments of one call
 * (data beyond one binding) are separate dispatches with a pipeline barrier between: an
 * earlier segment's tiles all hold P. */
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#define WG 256
#define LB 32                  /* tile states read per look-back step */
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;   /* tally_op: 0 sum .. 6 xor */
layout(constant_id = 1) const uint VPT = 8;  /* 16-byte vectors per invocation */
layout(constant_id = 2) const uint VAR = 0;  /* bit 0: exclusive scan; bit 1: subgroup look-back;
                                              * bit 2: the input is not the output (plain stores) */
const uint EXCL = VAR & 1u;
const uint LBSG = (VAR >> 1) & 1u;
const uint APART = (VAR >> 2) & 1u;
const uint TB = WG * 16u * VPT;              /* tile bytes */
const uint VEC = 16u / uint(TSIZE);          /* elements per vector */

/* The tile's own input is read once, before its outputs are written by the same invocations:
 * a plain view. The fallback reads other tiles' input while their owners may write there (in
 * place): coherent views, like the outputs (see the seqlock above). Views of one binding alias. */
layout(std430, binding = 0) readonly buffer InV { uvec4 inv[]; };
layout(std430, binding = 0) coherent readonly buffer InVC { uvec4 invc[]; };
layout(std430, binding = 0) coherent readonly buffer InW { uint inw[]; };
layout(std430, binding = 1) coherent buffer OutV { uvec4 outv[]; };
layout(std430, binding = 1) coherent buffer OutW { uint outw[]; };
/* Where the input is another range than the output (APART), no invocation of the dispatch reads
 * an output: plain stores, and no release fence before them. */
layout(std430, binding = 1) buffer OutVP { uvec4 outvp[]; };
layout(std430, binding = 1) buffer OutWP { uint outwp[]; };
/* Tile t's state word is st[t << sh] and its 64-bit values val[(t << vsh) + 0 (A) or 1 (P)]
 * (sh = pc.flags bits 8-11, vsh = max(sh, 1)): with sh = 4 every tile's state has its own
 * 128-byte line, so the tiles polling one state do not contend with the stores to its
 * neighbours' (the CUDA backend's hot spot: scan_lookback.cuh, docs/performance.md). */
layout(std430, binding = 2) buffer Val { uint64_t val[]; };
layout(std430, binding = 3) buffer State { uint64_t st[]; }; /* flag << 32 | 32-bit value */
layout(std430, binding = 3) buffer StatW { uint stw[]; };    /* (pc.stats_at's counters) */

layout(push_constant) uniform PC {
    uint64_t n;         /* elements of this segment */
    uint64_t start;     /* the start value (element bits): global tile 0's exclusive prefix */
    uint in_head;       /* bytes from the input binding's start to element 0 */
    uint out_head;      /* bytes from the output binding's start to element 0 */
    uint ntiles;        /* tiles (workgroups) of this dispatch */
    uint tile0;         /* global index of this segment's first tile */
    uint epoch;         /* the call's epoch (1 .. 2^30 - 1) */
    uint spins;         /* look-back steps without progress before a fallback */
    uint flags;         /* tests: bit 0 workgroup i takes tile ntiles - 1 - i; bit 1 one-lane
                         * subgroups; bit 3 every subgroup takes the subgroup look-back;
                         * bits 8-11: log2 of the 8-byte words per tile state (sh above) */
    uint stats_at;      /* benchmarks: nonzero, the index in stw of four counters (tiles that
                         * looked back, look-back steps, steps without progress, fallbacks) */
} pc;

#define SCAN_OPS_NO_WG_SCAN
#include "scan_ops.glsl"

#if TSIZE == 8
#define W uint64_t
#else
#define W uint
#endif

/* Shared memory: a few KiB. No word read before a barrier is written by another invocation
 * after it (the control words and the fallback's totals alternate between two slots): on
 * lavapipe, whose workgroups run as coroutines switched at barriers, such a read now and then
 * got the value written after the barrier. */
shared W stot[WG];        /* each subgroup's total of this tile */
shared W fr[2][WG];       /* each subgroup's total of a tile reduced by the fallback */
shared uint lb_f[LB];     /* the look-back step's states (3: before tile 0) */
shared W lb_v[LB];        /* and their values */
shared uint lb_ctl, lb_j; /* lane 0's decision for subgroup 0 */
shared uint sh_ctl[2], sh_j[2], sh_done[2];
shared W sh_x;

W wid() { return W(identity()); }

W wc(W a, W b) /* a op b, a earlier */
{
#if TSIZE == 8
    return combine(a, b);
#else
    if (OP == 0u) return a + b;
    if (OP == 1u) return a * b;
    if (OP == 4u) return a & b;
    if (OP == 5u) return a | b;
    if (OP == 6u) return a ^ b;
    return W(combine(uint64_t(a), uint64_t(b))); /* min/max: one of the operands' bits */
#endif
}

/* Element e (0 .. VEC-1) of a vector, and its placement in an output vector (zeroed before) */
W el(uvec4 v, uint e)
{
#if TSIZE == 8
    return pack64(uvec2(v[2u * e], v[2u * e + 1u]));
#elif TSIZE == 4
    return v[e];
#elif TSIZE == 2
    return (v[e >> 1] >> ((e & 1u) * 16u)) & 0xffffu;
#else
    return (v[e >> 2] >> ((e & 3u) * 8u)) & 0xffu;
#endif
}

void put(inout uvec4 v, uint e, W x)
{
#if TSIZE == 8
    v[2u * e] = uint(x);
    v[2u * e + 1u] = uint(x >> 32);
#elif TSIZE == 4
    v[e] = x;
#elif TSIZE == 2
    v[e >> 1] |= (x & 0xffffu) << ((e & 1u) * 16u);
#else
    v[e >> 2] |= (x & 0xffu) << ((e & 3u) * 8u);
#endif
}

/* The subgroup layout (see the top): sgs lanes per subgroup, this invocation's subgroup and
 * lane. vsub: real subgroups (shuffles allowed); otherwise one lane each. */
uint sgs, sgid, lane, nsub;
bool vsub, leader;

W shup(W v, uint d)
{
#if TSIZE == 8
    return pack64(subgroupShuffleUp(unpack32(v), d));
#else
    return subgroupShuffleUp(v, d);
#endif
}

W shidx(W v, uint i)
{
#if TSIZE == 8
    return pack64(subgroupShuffle(unpack32(v), i));
#else
    return subgroupShuffle(v, i);
#endif
}

/* Inclusive scan of t over the lanes (lower lanes earlier); called by every lane. */
W sg_incl(W t)
{
    if (vsub) {
        for (uint d = 1u; d < sgs; d <<= 1) {
            W o = shup(t, d);
            if (lane >= d) t = wc(o, t);
        }
    }
    return t;
}

W sg_last(W t) { return vsub ? shidx(t, sgs - 1u) : t; }

/* The element at index i read from the input binding (coherent: also the fallback's). */
W loaded(uint64_t i)
{
    uint64_t byte = uint64_t(pc.in_head) + i * uint64_t(TSIZE);
    uint w = uint(byte >> 2);
#if TSIZE == 8
    return pack64(uvec2(inw[w], inw[w + 1u]));
#elif TSIZE == 4
    return inw[w];
#else
    return (inw[w] >> ((uint(byte) & 3u) * 8u)) & uint(ONES);
#endif
}

/* Output vector vi's elements from the input, one at a time (the identity where no element is) */
uvec4 slow_vec(uint vi)
{
    uvec4 o = uvec4(0u);
    uint64_t lo = uint64_t(pc.out_head), hi = lo + pc.n * uint64_t(TSIZE);
    [[unroll]] for (uint e = 0u; e < VEC; e++) {
        uint64_t b = uint64_t(vi) * 16ul + uint64_t(e * uint(TSIZE));
        W x = wid();
        if (b >= lo && b < hi) x = loaded((b - lo) / uint64_t(TSIZE));
        put(o, e, x);
    }
    return o;
}

/* Local tile kk is whole vectors of elements in both bindings. */
bool tile_full(uint kk)
{
    uint lo = kk * TB; /* (segments are at most 2^30 bytes) */
    return pc.in_head == pc.out_head && lo >= pc.out_head &&
           uint64_t(lo + TB) <= uint64_t(pc.out_head) + pc.n * uint64_t(TSIZE);
}

/* This invocation's vector j of local tile kk (an index into the bindings' vectors) */
uint vindex(uint kk, uint j) { return kk * (WG * VPT) + sgid * sgs * VPT + j * sgs + lane; }

W vtotal(uvec4 v)
{
    W t = el(v, 0u);
    [[unroll]] for (uint e = 1u; e < VEC; e++) t = wc(t, el(v, e));
    return t;
}

/* The aggregate of local tile kk read straight from the input (in the leader; called by every
 * invocation in uniform control flow). Ends with the seqlock's reader side: every invocation's
 * input loads before the leader's state load. */
W tile_reduce(uint kk, uint par)
{
    bool full = tile_full(kk);
    W agg = wid();
    [[unroll]] for (uint j = 0u; j < VPT; j++) {
        uint vi = vindex(kk, j);
        uvec4 v = full ? invc[vi] : slow_vec(vi);
        agg = wc(agg, sg_last(sg_incl(vtotal(v))));
    }
    if (lane == 0u) fr[par][sgid] = agg;
    memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup,
                   gl_StorageSemanticsBuffer | gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
    W a = wid();
    for (uint s = 0u; s < nsub; s++) a = wc(a, fr[par][s]);
    return a;
}

uint state_of(uint f) { return (f >> 2) == pc.epoch ? (f & 3u) : 0u; }

uint sidx(uint t) { return t << ((pc.flags >> 8) & 15u); }
uint vidx(uint t, uint s) { return (t << max((pc.flags >> 8) & 15u, 1u)) + (s - 1u); }

/* Tile t's state (0: nothing this call) and value. */
uint read_state(uint t, out W v)
{
    uint64_t w = atomicLoad(st[sidx(t)], gl_ScopeDevice, 0, 0);
    uint s = state_of(uint(w >> 32));
#if TSIZE == 8
    v = 0ul;
    if (s != 0u) {
        memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
        v = atomicLoad(val[vidx(t, s)], gl_ScopeDevice, 0, 0);
    }
#else
    v = uint(w);
#endif
    return s;
}

void publish(uint t, uint s, W v)
{
    uint64_t f = uint64_t((pc.epoch << 2) | s) << 32;
#if TSIZE == 8
    atomicStore(val[vidx(t, s)], v, gl_ScopeDevice, 0, 0);
    atomicStore(st[sidx(t)], f, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
#else
    atomicStore(st[sidx(t)], f | uint64_t(v), gl_ScopeDevice, 0, 0);
#endif
}

void count(uint c, uint v)
{
    if (pc.stats_at != 0u && v != 0u) atomicAdd(stw[pc.stats_at + c], v);
}

/* ---- the subgroup look-back (LBSG: GPU drivers) ----
 * Subgroup 0 alone walks back, with no workgroup barrier per step, as the CUDA backend's warp
 * does; the other subgroups wait at the barrier before the outputs. Every lane takes the same
 * decisions (they come from shuffles of all lanes' states), so the loop is uniform in the
 * subgroup. (lavapipe, whose SIMD groups switch at barriers, is given the workgroup look-back
 * below by default: a loop of one SIMD group before a barrier lost stores there.) */

/* The largest v over the lanes (every lane gets it) */
int sg_max(int v)
{
    if (vsub)
        for (uint d = 1u; d < sgs; d <<= 1) v = max(v, subgroupShuffleXor(v, d));
    return v;
}


/* The aggregate of local tile kk from the input, by this subgroup alone (every lane gets it):
 * lane l folds a contiguous run of the tile's vectors, the runs combined in order. Then the
 * seqlock's reader side: each lane's loads before its own reading of the state again
 * (device-scope acquire; the caller's). */
W tile_reduce_sg(uint kk)
{
    bool full = tile_full(kk);
    uint run = (uint(WG) * VPT) / sgs;
    uint v0 = kk * (uint(WG) * VPT) + lane * run;
    W a = wid();
    for (uint i = 0u; i < run; i++) {
        uvec4 v = full ? invc[v0 + i] : slow_vec(v0 + i);
        a = wc(a, vtotal(v));
    }
    a = sg_last(sg_incl(a));
    memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
    return a;
}

/* The combined values of tiles [0 or the nearest P, g) for global tile g > 0, in every lane of
 * subgroup 0. Each step lane l reads tile j - (sgs - 1 - l) (the nearest in the last lane), and
 * the step combines, nearest first, the A states up to and including a P, stopping before a
 * tile that has published nothing; spins steps in a row without progress and the subgroup
 * reduces that silent tile itself (the decoupled fallback). */
W lookback_sg(uint g)
{
    uint j = g - 1u; /* the nearest tile not yet combined */
    uint idle = 0u;
    W x = wid();
    count(0u, leader ? 1u : 0u);
    for (;;) {
        count(1u, leader ? 1u : 0u);
        uint d = sgs - 1u - lane;
        W v = wid();
        uint s = 3u; /* before tile 0 (never combined: tile 0 holds P, nearer) */
        if (d <= j) s = read_state(j - d, v);
        int top = sg_max(s != 1u ? int(lane) : -1); /* the nearest lane that is not an A */
        uint ts = top >= 0 ? (vsub ? subgroupShuffle(s, uint(top)) : s) : 1u;
        uint first = top < 0 ? 0u : (ts == 2u ? uint(top) : uint(top) + 1u);
        x = wc(sg_last(sg_incl(lane >= first ? v : wid())), x);
        if (ts == 2u) break;
        uint m = sgs - first;
        j -= m;
        idle = m > 0u ? 0u : idle + 1u;
        if (m == 0u) count(2u, leader ? 1u : 0u);
        /* tile j has published nothing for too long (an earlier segment's tiles all hold P) */
        if (idle > pc.spins && j >= pc.tile0) {
            count(3u, leader ? 1u : 0u);
            W a = tile_reduce_sg(j - pc.tile0);
            /* every lane reads the state again after its own loads: if any load saw an output,
             * that lane sees P (in place, a may then be torn) */
            W pv;
            uint ps = read_state(j, pv);
            int pl = sg_max(ps == 2u ? int(lane) : -1);
            if (pl >= 0) { /* its owner published meanwhile */
                x = wc(vsub ? shidx(pv, uint(pl)) : pv, x);
                break;
            }
            if (j == 0u) {
                x = wc(wc(W(pc.start), a), x);
                break;
            }
            x = wc(a, x);
            j -= 1u;
            idle = 0u;
        }
    }
    return x;
}

#define C_DONE 1u
#define C_FALLBACK 2u

void main()
{
    tid = gl_LocalInvocationID.x;
    vsub = gl_NumSubgroups * gl_SubgroupSize == uint(WG) && (pc.flags & 2u) == 0u;
    sgs = vsub ? gl_SubgroupSize : 1u;
    sgid = vsub ? gl_SubgroupID : tid;
    lane = vsub ? gl_SubgroupInvocationID : 0u;
    nsub = uint(WG) / sgs;
    leader = sgid == 0u && lane == 0u;
    uint k = (pc.flags & 1u) != 0u ? pc.ntiles - 1u - gl_WorkGroupID.x : gl_WorkGroupID.x;
    uint g = pc.tile0 + k;
    bool full = tile_full(k);

    /* the tile into registers */
    uvec4 d[VPT];
    if (full) {
        [[unroll]] for (uint j = 0u; j < VPT; j++) d[j] = inv[vindex(k, j)];
    } else {
        [[unroll]] for (uint j = 0u; j < VPT; j++) d[j] = slow_vec(vindex(k, j));
    }
    /* each row over the lanes: pre[j] = the subgroup's elements before this lane's vector j */
    W pre[VPT];
    W sagg = wid();
    [[unroll]] for (uint j = 0u; j < VPT; j++) {
        W t = sg_incl(vtotal(d[j]));
        W ex = vsub ? shup(t, 1u) : wid();
        if (lane == 0u) ex = wid();
        pre[j] = wc(sagg, ex);
        sagg = wc(sagg, sg_last(t));
    }
    if (lane == 0u) stot[sgid] = sagg;
    barrier();
    /* (every invocation folds the totals: lavapipe dropped the first SIMD group's output stores
     * when only the leader ran this loop) */
    W agg = wid();
    for (uint s = 0u; s < nsub; s++) agg = wc(agg, stot[s]);
    if (leader) publish(g, g == 0u ? 2u : 1u, g == 0u ? wc(W(pc.start), agg) : agg);

    /* the look-back: x (in the leader) is the combined states of tiles (j, g). Uniform control
     * flow: every invocation runs every step and takes every barrier, and every decision is the
     * leader's, read by all from shared memory after a barrier (lavapipe runs a workgroup as
     * coroutines switched at barriers, which must meet the same barriers in the same order; it
     * also lost a SIMD group's later stores after a loop whose trip count differed between
     * groups, so no loop here has one). */
    W x = wid();
    if (g != 0u && LBSG != 0u) {
        /* (tests on lavapipe, flags bit 3: every subgroup walks back on its own, the same
         * code in every SIMD group, so that the look-back's logic is tested there too) */
        if (sgid == 0u || (pc.flags & 8u) != 0u) x = lookback_sg(g);
        if (leader) {
            publish(g, 2u, wc(x, agg));
            sh_x = x;
        }
    } else if (g != 0u) {
        count(0u, leader ? 1u : 0u);
        uint j = g - 1u; /* the next tile to combine (the same in every invocation) */
        uint idle = 0u;  /* leader: steps in a row without progress */
        uint par = 0u;
        for (;;) {
            barrier(); /* lb_* are free (read in the step before) */
            if (tid < uint(LB)) {
                W v = W(0u);
                uint s = 3u; /* before tile 0 (never combined: tile 0 holds P) */
                if (tid <= j) s = read_state(j - tid, v);
                lb_f[tid] = s;
                lb_v[tid] = v;
            }
            barrier();
            if (leader) {
                /* nearest first: aggregates until a prefix, stopping at a tile with nothing */
                uint m = 0u, cc = 0u;
                bool stop = false;
                [[unroll]] for (uint q = 0u; q < uint(LB); q++) {
                    uint s = lb_f[q];
                    if (!stop && (s == 0u || s == 3u)) stop = true;
                    if (!stop) {
                        x = wc(lb_v[q], x);
                        m++;
                        if (s == 2u) {
                            cc = C_DONE;
                            stop = true;
                        }
                    }
                }
                idle = m > 0u ? 0u : idle + 1u;
                count(1u, 1u);
                count(2u, m > 0u ? 0u : 1u);
                /* tile j - m has published nothing for too long: reduce it here. (An earlier
                 * segment's tiles all hold P: only this dispatch's are waited for.) */
                if (cc == 0u && idle > pc.spins && j - m >= pc.tile0) cc = C_FALLBACK;
                sh_ctl[par] = cc;
                sh_j[par] = j - m;
            }
            barrier();
            uint c = sh_ctl[par];
            j = sh_j[par];
            if (c == C_DONE) break;
            if (c == C_FALLBACK) {
                count(3u, leader ? 1u : 0u);
                W a = tile_reduce(j - pc.tile0, par);
                if (leader) {
                    W v;
                    uint done = 1u;
                    if (read_state(j, v) == 2u) /* its owner published meanwhile (in place, a may be torn) */
                        x = wc(v, x);
                    else if (j == 0u)
                        x = wc(wc(W(pc.start), a), x);
                    else {
                        x = wc(a, x);
                        done = 0u;
                    }
                    idle = 0u;
                    sh_done[par] = done;
                }
                barrier();
                if (sh_done[par] != 0u) break;
                j -= 1u;
            }
            par ^= 1u;
        }
        if (leader) {
            publish(g, 2u, wc(x, agg));
            sh_x = x;
        }
    }
    /* the P store before every invocation's output stores (the in-place fallback's seqlock) */
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup,
                   gl_StorageSemanticsBuffer | gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
    W run0 = g != 0u ? sh_x : W(pc.start);
    for (uint s = 0u; s < nsub; s++)
        if (s < sgid) run0 = wc(run0, stot[s]);
    if (APART == 0u) memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);

    uint64_t out_lo = uint64_t(pc.out_head), out_hi = out_lo + pc.n * uint64_t(TSIZE);
    [[unroll]] for (uint j = 0u; j < VPT; j++) {
        W r = wc(run0, pre[j]);
        uvec4 o = uvec4(0u);
        [[unroll]] for (uint e = 0u; e < VEC; e++) {
            W a = el(d[j], e);
            if (EXCL != 0u) {
                put(o, e, r);
                r = wc(r, a);
            } else {
                r = wc(r, a);
                put(o, e, r);
            }
        }
        uint vi = vindex(k, j);
        if (full) {
            if (APART != 0u) outvp[vi] = o;
            else outv[vi] = o;
        } else {
            /* words inside the output whole; a word holding bytes outside it merged with what
             * memory holds there (its one writer is this invocation) */
            [[unroll]] for (uint q = 0u; q < 4u; q++) {
                uint64_t b0 = uint64_t(vi) * 16ul + uint64_t(4u * q);
                if (b0 + 4ul <= out_lo || b0 >= out_hi) continue;
                uint word = vi * 4u + q;
                if (b0 >= out_lo && b0 + 4ul <= out_hi) {
                    if (APART != 0u) outwp[word] = o[q];
                    else outw[word] = o[q];
                } else {
                    uint keep = 0u; /* bytes of the word outside the output */
                    for (uint b = 0u; b < 4u; b++) {
                        uint64_t at = b0 + uint64_t(b);
                        if (at < out_lo || at >= out_hi) keep |= 0xffu << (8u * b);
                    }
                    if (APART != 0u) outwp[word] = (outwp[word] & keep) | (o[q] & ~keep);
                    else outw[word] = (outw[word] & keep) | (o[q] & ~keep);
                }
            }
        }
    }
}
