#version 450
/* Float sum and product scans in the CPU backend's order (tally.h; src/cpu/kernels_body.h): the
 * data is cut into blocks of 4096 elements and each block into groups of 16. In a group, a fixed
 * log-step prefix p (group_prefix); the block's local values are l = p in its first group and
 * l = L op p after, L being the previous group's last l (all in the element's type); outputs
 * are carry_b op l_j (inclusive) or carry_b, carry_b op l_(j-1) (exclusive), and
 * carry_(b+1) = carry_b op l_last. Each block is one workgroup, each of its groups one
 * invocation (its prefix in registers), the chain over the block's groups one invocation's loop
 * over their totals in shared memory (every operation the CPU's, on the same operands):
 *   MODE 0: tot[b] = l_last of every block;
 *   MODE 1: one workgroup folds the carries, carry[b], from the start value (the chain itself
 *           in one invocation, the totals loaded and the carries stored by all, WG at a time);
 *   MODE 2: every block's outputs from its carry.
 * Built twice: with TVK_DENORM_PRESERVE the shader declares IEEE subnormals (used where the
 * device supports it); without, an operation that meets a subnormal or underflows to zero sets
 * the edge flag and the host redoes the scan on the CPU backend. */
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#if TVK_DENORM_PRESERVE && TSIZE == 4
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 32);
#elif TVK_DENORM_PRESERVE
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 64);
#endif

#define WG 256 /* one block (256 groups of 16) per workgroup, one group per invocation */
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint OP = 0;   /* 0 sum, 1 prod */
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const uint EXCL = 0;

layout(std430, binding = 0) readonly buffer InW { uint inw[]; };
layout(std430, binding = 0) readonly buffer InV { uvec4 inv[]; };
layout(std430, binding = 1) buffer OutW { uint outw[]; };
layout(std430, binding = 1) buffer OutV { uvec4 outv[]; };
layout(std430, binding = 2) buffer Tot { uint64_t tot[]; };  /* block totals, then carries */
layout(std430, binding = 3) buffer Flag { uint edge; };

layout(push_constant) uniform PC {
    uint64_t n;        /* elements of this segment (its first starts a block) */
    uint64_t start;    /* MODE 1: the start carry's bits */
    uint in_head, out_head;
    uint nblocks;      /* MODE 1: blocks in all */
    uint blk0;         /* global index of the segment's first block */
    uint unused0, unused1;
    uint flags;        /* tests: bit 2 emulates a flushing device (see op2); bit 3: every
                        * invocation runs the serial chains (CPU devices, see below) */
} pc;

#define FTZ_EMU ((pc.flags & 4u) != 0u) /* tests: see op2 */
#include "fscan_ops.glsl"

/* Shared memory, two of each, alternating between a loop's rounds: no word read before a
 * barrier is written again by another invocation right after it (lavapipe, whose SIMD groups
 * run as coroutines switched at barriers, gave such reads the later value). */
shared FT gp[2][WG]; /* the groups' totals (their prefixes' last values); MODE 1: block totals */
shared FT gl[2][WG]; /* the chain over them (one-invocation chains) */

void main()
{
    uint tid = gl_LocalInvocationID.x;
    /* The serial chains (each a left fold, in the CPU's order) run in invocation 0 alone, or,
     * on CPU devices (flags bit 3), in every invocation at once: lavapipe lost stores after a
     * loop that one SIMD group ran alone. */
    bool all = (pc.flags & 8u) != 0u;
    if (MODE == 1u) {
        /* the carries: carry[0] = start, carry[b + 1] = carry[b] op total[b], in chunks of WG
         * totals (one coalesced load each, the next chunk's load in flight during the chain) */
        FT c = FROM_BITS(pc.start);
        edge_note(c);
        uint nchunks = (pc.nblocks + uint(WG) - 1u) / uint(WG);
        FT nxt = tid < pc.nblocks ? FROM_BITS(tot[tid]) : FT(0);
        for (uint ch = 0u; ch < nchunks; ch++) {
            uint par = ch & 1u, b0 = ch * uint(WG);
            uint cnt = min(pc.nblocks - b0, uint(WG));
            gp[par][tid] = nxt;
            nxt = b0 + uint(WG) + tid < pc.nblocks ? FROM_BITS(tot[b0 + uint(WG) + tid]) : FT(0);
            barrier();
            FT mine = FT(0);
            if (all || tid == 0u) {
                for (uint q = 0u; q < cnt; q++) {
                    if (!all) gl[par][q] = c;
                    if (q == tid) mine = c;
                    c = op2(c, gp[par][q]);
                }
            }
            barrier();
            if (!all) mine = gl[par][tid];
            if (tid < cnt) tot[b0 + tid] = TO_BITS(mine);
        }
        if (edge_seen()) atomicOr(edge, 1u);
        return;
    }
    /* MODE 0 and 2: workgroup per block (grid-stride: a segment may have more blocks than a
     * dispatch has workgroups), invocation i its group i */
    uint64_t nb = (pc.n + 4095ul) / 4096ul;
    uint round = 0u;
    for (uint64_t b = uint64_t(gl_WorkGroupID.x); b < nb; b += uint64_t(gl_NumWorkGroups.x)) {
        uint par = round & 1u;
        round++;
        uint len = uint(min(pc.n - b * 4096ul, 4096ul));
        uint ng = (len + 15u) / 16u;
        uint m = tid * 16u < len ? min(len - tid * 16u, 16u) : 0u;
        FT p[16];
        load_group(b * uint64_t(WG) + uint64_t(tid), m, p);
        group_prefix(p, m, true);
        gp[par][tid] = m > 0u ? p[m - 1u] : FT(0);
        barrier();
        /* the block's chain: L_0 = P_0, L_i = L_(i-1) op P_i (P: the groups' totals); this
         * group needs L_(i-1), the block's total is L_(ng-1) */
        FT lprev = FT(0), llast = FT(0);
        if (all || tid == 0u) {
            FT l = gp[par][0];
            if (!all) gl[par][0] = l;
            for (uint i = 1u; i < ng; i++) {
                if (i == tid) lprev = l;
                l = op2(l, gp[par][i]);
                if (!all) gl[par][i] = l;
            }
            llast = l;
        }
        barrier();
        if (!all) {
            lprev = tid > 0u ? gl[par][tid - 1u] : FT(0);
            llast = gl[par][ng - 1u];
        }
        if (MODE == 0u) {
            if (tid == 0u) tot[pc.blk0 + uint(b)] = TO_BITS(llast);
        } else if (m > 0u) {
            /* local values l = p (first group) or L_(i-1) op p; outputs carry op l (inclusive),
             * or carry, then carry op (the element before's l) (exclusive) */
            FT c = FROM_BITS(tot[pc.blk0 + uint(b)]);
            FT o[16];
            FT prev = lprev;
            [[unroll]] for (uint k = 0u; k < 16u; k++) {
                o[k] = FT(0);
                if (k < m) {
                    FT l = tid == 0u ? p[k] : op2(lprev, p[k]);
                    if (EXCL != 0u) o[k] = tid == 0u && k == 0u ? c : op2(c, prev);
                    else o[k] = op2(c, l);
                    prev = l;
                }
            }
            store_group(b * uint64_t(WG) + uint64_t(tid), m, o);
        }
    }
    if (edge_seen()) atomicOr(edge, 1u);
}
