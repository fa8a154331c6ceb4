#version 450
/* A device copy of n elements, word by word: the in-place float sum/product scans' copy of their
 * input (vk_scan.c, the one pass's fallback and the CPU's redo after an edge read the input while
 * the scan overwrites it). The driver's vkCmdCopyBuffer moved 1 GiB in 2,530 us on the H200
 * (849 GB/s of read and write: bench_vulkan's bigbuf_copy rows), where a shader's loads and
 * stores move ~4 TB/s. Both heads are multiples of 4 bytes (the host checks). */
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#define WG 256
layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer InW { uint inw[]; };
layout(std430, binding = 1) writeonly buffer OutW { uint outw[]; };

layout(push_constant) uniform PC {
    uint64_t n;     /* elements of this segment */
    uint64_t start; /* (unused: the scans' push constants, shared) */
    uint in_head, out_head; /* bytes before the windows' first element */
} pc;

void main()
{
    uint words = uint(pc.n) * uint(TSIZE / 4); /* (built for f32 and f64 only) */
    uint ih = pc.in_head >> 2, oh = pc.out_head >> 2;
    uint stride = gl_NumWorkGroups.x * uint(WG);
    /* four loads in flight per invocation, then their stores */
    for (uint i = gl_GlobalInvocationID.x; i < words; i += 4u * stride) {
        uint v[4];
        [[unroll]] for (uint k = 0u; k < 4u; k++) {
            uint j = i + k * stride;
            v[k] = j < words ? inw[ih + j] : 0u;
        }
        [[unroll]] for (uint k = 0u; k < 4u; k++) {
            uint j = i + k * stride;
            if (j < words) outw[oh + j] = v[k];
        }
    }
}
