#version 450
/* Float products in the CPU backend's fixed order (core/partial.h, TALLY_PROD_BLOCK): one
 * invocation per (block of 4096 elements, lane), lane k multiplying elements k, k+8, ... of its
 * block in f64 from 1.0, left to right. The host multiplies the lanes and the blocks in order
 * with the core's code. Built twice: with TVK_DENORM_PRESERVE the shader declares IEEE
 * subnormals (used where the device supports that); without, any product that meets a
 * subnormal (or underflows to zero) sets the edge flag and the host recomputes the product on
 * the CPU backend. */
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
#include "common.glsl"
#if TVK_DENORM_PRESERVE
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 64);
#endif

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint SPEC0 = 0;
layout(constant_id = 1) const uint OMIT = 0;
layout(std430, binding = 0) readonly buffer InW { uint inw[]; };
layout(std430, binding = 2) buffer Lanes { uint64_t lanes[]; };
layout(std430, binding = 3) buffer Flag { uint edge; };
layout(push_constant) uniform PC {
    uint64_t n;  /* elements of this segment (its first is a block's first) */
    uint head;   /* bytes from the binding's start to element 0 */
    uint blk0;   /* global index of the segment's first block */
} pc;

bool f64_subnormal(uint64_t b) { return (b & 0x7ff0000000000000ul) == 0ul && (b << 1) != 0ul; }

void main()
{
    uint t = gl_GlobalInvocationID.x;
    uint blk = t >> 3, lane = t & 7u;
    uint64_t b0 = uint64_t(blk) * 4096ul;
    if (b0 >= pc.n) return;
    uint len = uint(min(pc.n - b0, 4096ul));
    double p = 1.0;
    bool bad = false;
    uint w0 = pc.head / 4u;
    for (uint j = lane; j < len; j += 8u) {
        uint gi = uint(b0) + j;
#if TSIZE == 4
        uint64_t bits = uint64_t(inw[w0 + gi]);
#else
        uint64_t bits = pack64(uvec2(inw[w0 + 2u * gi], inw[w0 + 2u * gi + 1u]));
#endif
        if (OMIT != 0u && elem_isnan(bits)) continue; /* the CPU multiplies by 1.0: the same */
        uint64_t fb = elem_f64_bits(bits);
        uint64_t pb = doubleBitsToUint64(p);
        precise double r = p * uint64BitsToDouble(fb);
        uint64_t rb = doubleBitsToUint64(r);
#if !TVK_DENORM_PRESERVE
        if (f64_subnormal(fb) || f64_subnormal(rb) ||
            ((rb << 1) == 0ul && (pb << 1) != 0ul && (fb << 1) != 0ul))
            bad = true;
#endif
        p = r;
    }
    lanes[(pc.blk0 + blk) * 8u + lane] = doubleBitsToUint64(p);
    if (bad) atomicOr(edge, 1u);
}
