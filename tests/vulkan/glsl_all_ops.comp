#version 450
/* Calls every function of include/tally_subgroup.glsl (the test compiles it four ways: native
 * or butterfly, with or without the 64-bit types). */
#define TALLY_WG_SIZE 128
#include "tally_subgroup.glsl"
layout(local_size_x = TALLY_WG_SIZE) in;
layout(std430, binding = 0) buffer BU { uint u[]; };
layout(std430, binding = 1) buffer BI { int i[]; };
layout(std430, binding = 2) buffer BF { float f[]; };
#ifdef TALLY_GLSL_64
layout(std430, binding = 3) buffer BUL { uint64_t ul[]; };
layout(std430, binding = 4) buffer BIL { int64_t il[]; };
layout(std430, binding = 5) buffer BD { double d[]; };
#endif
#define ALL_INT(SFX, A) \
    A[k] = tally_subgroup_sum_##SFX(A[k]) + tally_subgroup_prod_##SFX(A[k]) + tally_subgroup_min_##SFX(A[k]) + \
           tally_subgroup_max_##SFX(A[k]) + tally_subgroup_and_##SFX(A[k]) + tally_subgroup_or_##SFX(A[k]) + \
           tally_subgroup_xor_##SFX(A[k]) + tally_workgroup_sum_##SFX(A[k]) + tally_workgroup_prod_##SFX(A[k]) + \
           tally_workgroup_min_##SFX(A[k]) + tally_workgroup_max_##SFX(A[k]) + tally_workgroup_and_##SFX(A[k]) + \
           tally_workgroup_or_##SFX(A[k]) + tally_workgroup_xor_##SFX(A[k]);
#define ALL_FLOAT(SFX, A) \
    A[k] = tally_subgroup_sum_##SFX(A[k]) + tally_subgroup_prod_##SFX(A[k]) + tally_subgroup_min_##SFX(A[k]) + \
           tally_subgroup_max_##SFX(A[k]) + tally_workgroup_sum_##SFX(A[k]) + tally_workgroup_prod_##SFX(A[k]) + \
           tally_workgroup_min_##SFX(A[k]) + tally_workgroup_max_##SFX(A[k]);
void main()
{
    uint k = gl_GlobalInvocationID.x;
    ALL_INT(u32, u)
    ALL_INT(i32, i)
    ALL_FLOAT(f32, f)
#ifdef TALLY_GLSL_64
    ALL_INT(u64, ul)
    ALL_INT(i64, il)
    ALL_FLOAT(f64, d)
#endif
}
