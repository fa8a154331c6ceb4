#version 450
/* Float sum and product scans in the CPU backend's order (tally.h; src/cpu/kernels_body.h): the
 * data is cut into blocks of 4096 elements and each block into groups of 16. In a group, a fixed
 * log-step prefix p (group_prefix); the block's local values are l = p in its first group and
 * l = L op p after, L being the previous group's last l (all in the element's type); outputs
 * are carry_b op l_j (inclusive) or carry_b, carry_b op l_(j-1) (exclusive), and
 * carry_(b+1) = carry_b op l_last. Each block is one invocation, by that definition:
 *   MODE 0: tot[b] = l_last of every block;
 *   MODE 1: one invocation folds the carries, carry[b], from the start value;
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

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint OP = 0;   /* 0 sum, 1 prod */
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const uint EXCL = 0;

layout(std430, binding = 0) readonly buffer InW { uint inw[]; };
layout(std430, binding = 1) buffer OutW { uint outw[]; };
layout(std430, binding = 2) buffer Tot { uint64_t tot[]; };  /* block totals, then carries */
layout(std430, binding = 3) buffer Flag { uint edge; };

layout(push_constant) uniform PC {
    uint64_t n;        /* elements of this segment (its first starts a block) */
    uint64_t start;    /* MODE 1: the start carry's bits */
    uint in_head, out_head;
    uint nblocks;      /* MODE 1: blocks in all */
    uint blk0;         /* global index of the segment's first block */
    uint unused0, unused1;
    uint flags;        /* tests: bit 2 emulates a flushing device (see op2) */
} pc;

#if TSIZE == 4
#define FT float
#define TO_BITS(x) uint64_t(floatBitsToUint(x))
#define FROM_BITS(b) uintBitsToFloat(uint(b))
#define EXP_MASK 0x7f800000ul
#else
#define FT double
#define TO_BITS(x) doubleBitsToUint64(x)
#define FROM_BITS(b) uint64BitsToDouble(b)
#define EXP_MASK 0x7ff0000000000000ul
#endif

bool bad = false;

bool subnormal(uint64_t b) { return (b & EXP_MASK) == 0ul && (b << (65 - 8 * TSIZE)) != 0ul; }
bool zero(uint64_t b) { return (b << (65 - 8 * TSIZE)) == 0ul; }

/* Tests (pc.flags bit 2, TALLY_VULKAN_EMULATE_FTZ=1, without TVK_DENORM_PRESERVE): subnormal
 * operands read as zero and subnormal results flushed to zero (sign kept), as a device without
 * subnormals may do, so that lavapipe (which keeps subnormals though it does not promise to)
 * shows whether every such operation sets the edge flag: the flagged call is redone on the CPU,
 * so the results must stay the CPU's bits. */
FT flushed(FT x)
{
    uint64_t b = TO_BITS(x);
    return subnormal(b) ? FROM_BITS(b & (1ul << (8 * TSIZE - 1))) : x;
}

FT op2(FT a, FT b)
{
#if !TVK_DENORM_PRESERVE
    bool ftz = (pc.flags & 4u) != 0u;
    precise FT r = OP == 0u ? (ftz ? flushed(a) : a) + (ftz ? flushed(b) : b)
                            : (ftz ? flushed(a) : a) * (ftz ? flushed(b) : b);
    if (ftz) r = flushed(r);
    uint64_t ab = TO_BITS(a), bb = TO_BITS(b), rb = TO_BITS(r);
    if (subnormal(ab) || subnormal(bb) || subnormal(rb)) bad = true;
    /* a result flushed to zero: a sum of non-opposite values, or a product of nonzeros */
    if (zero(rb) && (OP == 0u ? (a != -b) : (!zero(ab) && !zero(bb)))) bad = true;
#else
    precise FT r = OP == 0u ? a + b : a * b;
#endif
    return r;
}

/* The group's prefix (m elements, m <= 16): p[k] = p[k-s] op p[k] for s = 1, 2, 4 where
 * k mod 8 >= s (each half of 8 on its own), then p[k] = p[7] op p[k] for k >= 8. */
void group_prefix(inout FT p[16], uint m)
{
    for (uint s = 1u; s < 8u; s *= 2u)
        for (int k = int(m) - 1; k >= 0; k--)
            if ((uint(k) & 7u) >= s) p[k] = op2(p[uint(k) - s], p[k]);
    for (uint k = 8u; k < m; k++) p[k] = op2(p[7], p[k]);
}

FT load(uint64_t i)
{
    uint w = uint((uint64_t(pc.in_head) + i * uint64_t(TSIZE)) >> 2);
#if TSIZE == 4
    return uintBitsToFloat(inw[w]);
#else
    return uint64BitsToDouble(pack64(uvec2(inw[w], inw[w + 1u])));
#endif
}

void store(uint64_t i, FT v)
{
    uint w = uint((uint64_t(pc.out_head) + i * uint64_t(TSIZE)) >> 2);
#if TSIZE == 4
    outw[w] = floatBitsToUint(v);
#else
    uvec2 u = unpack32(doubleBitsToUint64(v));
    outw[w] = u.x;
    outw[w + 1u] = u.y;
#endif
}

void main()
{
    if (MODE == 1u) {
        if (gl_GlobalInvocationID.x != 0u) return;
        /* the chain in order; each run of 16 totals loaded before it is folded (16 loads in
         * flight instead of one: the fold is one invocation's) */
        FT c = FROM_BITS(pc.start);
        uint b = 0u;
        for (; b + 16u <= pc.nblocks; b += 16u) {
            FT t[16];
            [[unroll]] for (uint q = 0u; q < 16u; q++) t[q] = FROM_BITS(tot[b + q]);
            [[unroll]] for (uint q = 0u; q < 16u; q++) {
                tot[b + q] = TO_BITS(c);
                c = op2(c, t[q]);
            }
        }
        for (; b < pc.nblocks; b++) {
            FT t = FROM_BITS(tot[b]);
            tot[b] = TO_BITS(c);
            c = op2(c, t);
        }
        if (bad) atomicOr(edge, 1u);
        return;
    }
    uint b = gl_GlobalInvocationID.x;
    uint64_t e0 = uint64_t(b) * 4096ul;
    if (e0 >= pc.n) return;
    uint len = uint(min(pc.n - e0, 4096ul));
    FT c = MODE == 0u ? FT(0) : FROM_BITS(tot[pc.blk0 + b]);
    FT L = FT(0), prev = FT(0);
    FT p[16];
    for (uint g = 0u; g < len; g += 16u) {
        uint m = min(len - g, 16u);
        for (uint k = 0u; k < m; k++) p[k] = load(e0 + uint64_t(g + k));
        group_prefix(p, m);
        for (uint k = 0u; k < m; k++) {
            FT l = g == 0u ? p[k] : op2(L, p[k]);
            if (MODE != 0u) {
                /* the group was loaded first: in place, these are its inputs no more */
                if (EXCL != 0u) store(e0 + uint64_t(g + k), g + k == 0u ? c : op2(c, prev));
                else store(e0 + uint64_t(g + k), op2(c, l));
            }
            prev = l;
        }
        L = prev;
    }
    if (MODE == 0u) tot[pc.blk0 + b] = TO_BITS(L);
    if (bad) atomicOr(edge, 1u);
}
