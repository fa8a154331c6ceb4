#version 450
/* An example compute shader on tally_subgroup.glsl (seed 002's wave reductions, seed 004's
 * "subgroup + vec4" reduction): each workgroup sums its share of a u32 array loaded as uvec4,
 * keeps its maximum, its bit parity (xor) and whether any value had the top bit set (or), and
 * writes one partial per workgroup; a second dispatch (or tally) folds the partials.
 *
 *   glslc --target-env=vulkan1.1 -I <tally>/include wave_reduce.comp -o wave_reduce.spv */
#define TALLY_WG_SIZE 256
#include "tally_subgroup.glsl"

layout(local_size_x = TALLY_WG_SIZE) in;
layout(std430, binding = 0) readonly buffer In { uvec4 data[]; };
layout(std430, binding = 1) writeonly buffer Out { uvec4 partial[]; };
layout(push_constant) uniform PC { uint nvec; } pc; /* 16-byte vectors in data */

void main()
{
    uint sum = 0u, mx = 0u, par = 0u, top = 0u;
    uint stride = gl_NumWorkGroups.x * TALLY_WG_SIZE;
    for (uint i = gl_GlobalInvocationID.x; i < pc.nvec; i += stride) {
        uvec4 v = data[i];
        sum += v.x + v.y + v.z + v.w;     /* wraps modulo 2^32, like the seed's uint32 */
        mx = max(mx, max(max(v.x, v.y), max(v.z, v.w)));
        par ^= v.x ^ v.y ^ v.z ^ v.w;
        top |= (v.x | v.y | v.z | v.w) & 0x80000000u;
    }
    /* every invocation calls every reduction (uniform control flow) and gets the result */
    uvec4 r = uvec4(tally_workgroup_sum_u32(sum), tally_workgroup_max_u32(mx),
                    tally_workgroup_xor_u32(par), tally_workgroup_or_u32(top));
    if (gl_LocalInvocationIndex == 0u) partial[gl_WorkGroupID.x] = r;
}
