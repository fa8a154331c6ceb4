#version 450
/* The lab's Vulkan variants of seed 004's reduction kernels (f32 sums), one module, the kernel
 * chosen by a specialisation constant:
 *   MODE 0  naive accumulate: grid-stride sum per invocation, then one float atomic add each
 *           (a compare-and-swap loop on the bits: no float-atomics extension needed)
 *   MODE 1  workgroup tree, pass 1: grid-stride sums into shared memory, a tree, one partial
 *           per workgroup
 *   MODE 2  the deliberately incorrect tree: its loads skip the last element of every block of
 *           1024 (and the input's last element), the CPU lab's off-by-one: wrong at every size
 *   MODE 3  subgroup reduce, pass 1: subgroupAdd, the subgroup sums through shared memory,
 *           subgroupAdd again in the first subgroup
 *   MODE 4  as 3 with 16-byte (vec4) loads
 *   MODE 5  tree over the partials (pass 2, one workgroup)
 *   MODE 6  subgroup reduce over the partials (pass 2, one workgroup)
 * Every shared-memory step is separated by barrier(); passes by a pipeline barrier. */
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

#define WG 256
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint MODE = 0;

layout(std430, binding = 0) readonly buffer In { float x[]; };
layout(std430, binding = 0) readonly buffer In4 { vec4 x4[]; };
layout(std430, binding = 1) buffer Part { float part[]; };
layout(std430, binding = 2) buffer Res { uint res_bits; };
layout(push_constant) uniform PC { uint n; } pc; /* pass 2: the number of partials */

shared float s[WG];
shared float sg[WG];

float tree(float v)
{
    uint t = gl_LocalInvocationID.x;
    s[t] = v;
    barrier();
    for (uint k = WG / 2u; k > 0u; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        barrier();
    }
    return s[0];
}

/* The workgroup's sum, valid in the first subgroup. */
float by_subgroups(float v)
{
    v = subgroupAdd(v);
    if (subgroupElect()) sg[gl_SubgroupID] = v;
    barrier();
    float w = 0.0;
    if (gl_SubgroupID == 0u) {
        for (uint i = gl_SubgroupInvocationID; i < gl_NumSubgroups; i += gl_SubgroupSize) w += sg[i];
        w = subgroupAdd(w);
    }
    return w;
}

void main()
{
    uint t = gl_LocalInvocationID.x, g = gl_WorkGroupID.x;
    uint gid = gl_GlobalInvocationID.x, stride = gl_NumWorkGroups.x * uint(WG);
    float v = 0.0;
    if (MODE == 5u || MODE == 6u) {
        for (uint i = t; i < pc.n; i += uint(WG)) v += part[i];
    } else if (MODE == 4u) {
        uint nv = pc.n / 4u;
        for (uint i = gid; i < nv; i += stride) {
            vec4 q = x4[i];
            v += (q.x + q.y) + (q.z + q.w);
        }
        if (gid < pc.n % 4u) v += x[nv * 4u + gid];
    } else if (MODE == 2u) {
        for (uint i = gid; i < pc.n; i += stride)
            if (i % 1024u != 1023u && i != pc.n - 1u) v += x[i];
    } else {
        for (uint i = gid; i < pc.n; i += stride) v += x[i];
    }
    if (MODE == 0u) {
        uint old = res_bits;
        for (;;) {
            uint prev = atomicCompSwap(res_bits, old, floatBitsToUint(uintBitsToFloat(old) + v));
            if (prev == old) break;
            old = prev;
        }
    } else if (MODE == 1u || MODE == 2u || MODE == 5u) {
        float r = tree(v);
        if (t == 0u) {
            if (MODE == 5u) res_bits = floatBitsToUint(r);
            else part[g] = r;
        }
    } else {
        float r = by_subgroups(v);
        if (t == 0u) {
            if (MODE == 6u) res_bits = floatBitsToUint(r);
            else part[g] = r;
        }
    }
}
