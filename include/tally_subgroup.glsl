/* tally_subgroup.glsl: wave (subgroup) and workgroup reductions for your own Vulkan compute
 * shaders, the surface of tally's seed 002 (Wave.reduce{Sum,Max,Min,And,Or,Xor}) for every
 * 32- and 64-bit type, product included.
 *
 *   #define TALLY_WG_SIZE 256            // your local_size_x (needed by the workgroup functions)
 *   #include "tally_subgroup.glsl"       // glslc -I <prefix>/include
 *
 *   uint  s = tally_subgroup_sum_u32(x);     // every invocation of the subgroup gets it
 *   float m = tally_workgroup_max_f32(v);    // every invocation of the workgroup gets it
 *
 * Functions: tally_subgroup_OP_T(x) and tally_workgroup_OP_T(x), OP in sum, prod, min, max
 * (all types) and and, or, xor (integers); T in u32, i32, f32, and with TALLY_GLSL_64 defined
 * u64, i64, f64 (needs shaderInt64 / shaderFloat64 and shaderSubgroupExtendedTypes for the
 * 64-bit integers). Min/max of u32/u64 are unsigned, of i32/i64 signed.
 *
 * How they lower: sum/min/max/and/or/xor to one GroupNonUniform{IAdd,FAdd,UMin,SMin,FMin,...}
 * instruction (GL_KHR_shader_subgroup_arithmetic); product, which no hardware reduces, to a
 * butterfly of subgroupShuffleXor (log2(subgroup size) steps). Define
 * TALLY_SUBGROUP_NO_ARITHMETIC before the include for devices without subgroup arithmetic:
 * every op then takes the butterfly (GL_KHR_shader_subgroup_shuffle). The butterfly gives every
 * lane the same bits, floats included: each step combines the same two values in either order,
 * and + and * are commutative in IEEE arithmetic. Float sums through subgroupAdd are rounded in
 * the hardware's order (not tally's correctly rounded sums: call tally for those).
 *
 * Rules: call them in uniform control flow of the subgroup (workgroup functions: of the whole
 * workgroup; they contain barriers), with every invocation active (full subgroups: a workgroup
 * size that is a multiple of the subgroup size), and use the result in every invocation, as
 * seed 002 asks ("consume the result unconditionally"). */
#ifndef TALLY_SUBGROUP_GLSL
#define TALLY_SUBGROUP_GLSL

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#ifndef TALLY_SUBGROUP_NO_ARITHMETIC
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#ifdef TALLY_GLSL_64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_subgroup_extended_types_int64 : require
#endif

#define TALLY_OP_sum(a, b) ((a) + (b))
#define TALLY_OP_prod(a, b) ((a) * (b))
#define TALLY_OP_min(a, b) min(a, b)
#define TALLY_OP_max(a, b) max(a, b)
#define TALLY_OP_and(a, b) ((a) & (b))
#define TALLY_OP_or(a, b) ((a) | (b))
#define TALLY_OP_xor(a, b) ((a) ^ (b))

/* the butterfly: log2(gl_SubgroupSize) shuffles */
#define TALLY_BUTTERFLY(T, OP, NAME)                                                            \
    T tally_subgroup_##NAME(T x)                                                                \
    {                                                                                           \
        for (uint d = 1u; d < gl_SubgroupSize; d <<= 1) {                                       \
            T y = subgroupShuffleXor(x, d);                                                     \
            x = OP(x, y);                                                                       \
        }                                                                                       \
        return x;                                                                               \
    }
#define TALLY_NATIVE(T, FN, NAME) T tally_subgroup_##NAME(T x) { return FN(x); }

#ifdef TALLY_SUBGROUP_NO_ARITHMETIC
#define TALLY_SG(T, OP, FN, NAME) TALLY_BUTTERFLY(T, TALLY_OP_##OP, NAME)
#else
#define TALLY_SG(T, OP, FN, NAME) TALLY_NATIVE(T, FN, NAME)
#endif

/* workgroup: subgroup results through shared memory, folded in subgroup order by everyone */
#ifdef TALLY_WG_SIZE
#define TALLY_WG(T, OP, NAME)                                                                   \
    shared T tally_wg_##NAME##_sh[TALLY_WG_SIZE];                                               \
    T tally_workgroup_##NAME(T x)                                                               \
    {                                                                                           \
        T r = tally_subgroup_##NAME(x);                                                         \
        if (subgroupElect()) tally_wg_##NAME##_sh[gl_SubgroupID] = r;                          \
        barrier();                                                                              \
        r = tally_wg_##NAME##_sh[0];                                                            \
        for (uint i = 1u; i < gl_NumSubgroups; i++) r = TALLY_OP_##OP(r, tally_wg_##NAME##_sh[i]); \
        barrier();                                                                              \
        return r;                                                                               \
    }
#else
#define TALLY_WG(T, OP, NAME)
#endif

#define TALLY_DEFINE(T, SFX, OP, FN)                                                            \
    TALLY_SG(T, OP, FN, OP##_##SFX)                                                             \
    TALLY_WG(T, OP, OP##_##SFX)
#define TALLY_DEFINE_PROD(T, SFX)                                                               \
    TALLY_BUTTERFLY(T, TALLY_OP_prod, prod_##SFX)                                               \
    TALLY_WG(T, prod, prod_##SFX)

#define TALLY_DEFINE_NUMERIC(T, SFX)                                                            \
    TALLY_DEFINE(T, SFX, sum, subgroupAdd)                                                      \
    TALLY_DEFINE(T, SFX, min, subgroupMin)                                                      \
    TALLY_DEFINE(T, SFX, max, subgroupMax)                                                      \
    TALLY_DEFINE_PROD(T, SFX)
#define TALLY_DEFINE_INTEGER(T, SFX)                                                            \
    TALLY_DEFINE_NUMERIC(T, SFX)                                                                \
    TALLY_DEFINE(T, SFX, and, subgroupAnd)                                                      \
    TALLY_DEFINE(T, SFX, or, subgroupOr)                                                        \
    TALLY_DEFINE(T, SFX, xor, subgroupXor)

TALLY_DEFINE_INTEGER(uint, u32)
TALLY_DEFINE_INTEGER(int, i32)
TALLY_DEFINE_NUMERIC(float, f32)
#ifdef TALLY_GLSL_64
TALLY_DEFINE_INTEGER(uint64_t, u64)
TALLY_DEFINE_INTEGER(int64_t, i64)
TALLY_DEFINE_NUMERIC(double, f64)
#endif

#endif
