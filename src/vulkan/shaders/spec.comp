#version 450
/* The speculative compensated sum of f32/f64 inputs (one-shot SUM; vk_reduce.c, spec_sum).
 * The design, invariant, add and merge rules and bound are src/core/exact_sum.h's block
 * "Speculative compensated sums"; this shader follows them literally:
 *   add x:    (s, e) = TwoSum(s, x);  c = fl(c + e);  D = fl(D + |c|)
 *   merge:    (s, e) = TwoSum(s1, s2);  t = fl(c1 + c2);  c = fl(t + e);
 *             D = fl(fl(D1 + D2) + fl(|t| + |c|))
 * The fold dispatch (pc.fin = 0, one per segment): each invocation adds its elements (grid-stride
 * over the segment's whole 16-byte vectors, UU (8) in flight; the at most 2 x (16 / TSIZE - 1)
 * elements of the partial vectors at the segment's ends by workgroup 0) into NT independent
 * triples (element k of a step into triple k % NT: NT chains of dependent adds instead of one),
 * merges them into its first triple by the merge rule, the workgroup merges
 * its 256 triples by a shared-memory tree (8 levels, a barrier each, the same trip count in every
 * invocation) and invocation 0 writes the workgroup's triple and flag as record rec0 + group of
 * binding 2. The finish dispatch (pc.fin = 1, one workgroup, after a pipeline barrier) merges the
 * call's nrec records (from rec0: a batch's calls share binding 2) the same way and writes one
 * record to binding 1 (host-visible; a batch binds each call's own slot). The host
 * adds that record's s and c exactly into a tally_exact V, takes E = D * 2^-53 * 1.001 and decides
 * with tally_exact_round_within; a set flag or a non-finite value sends the call to the exact
 * path (reduce.comp), unchanged.
 *
 * Why the device's float behaviour cannot break the invariant (the rules need round-to-nearest,
 * no contraction or reassociation, and no flushed subnormals):
 *  - No subnormal, infinity or NaN ever reaches an f64 operation that matters. Inputs are
 *    checked by integer code on their bits and a call with any other input is flagged (FLAG_*),
 *    so every accepted input is a multiple of 2^-1022 with magnitude below 2^900: f32 values are
 *    multiples of 2^-149 below 2^128 (widened exactly to f64 by integer code, subnormal f32s
 *    included, so a device that flushes f32 subnormals changes nothing); f64 inputs must be
 *    zero or have a biased exponent in [53, 1922] (ulp >= 2^(53-1075) = 2^-1022, below 2^900).
 *    Sums, differences and absolute values of multiples of q = 2^-1022 are multiples of q, and
 *    rounding one keeps it one (below 2^53 q it is representable, so not rounded at all; above,
 *    the double grid is coarser than q): by induction every s, e, c, t, D here is a multiple of
 *    2^-1022, so every nonzero one is a NORMAL double. So flush-to-zero / denormals-are-zero
 *    modes (NVIDIA's driver and lavapipe do not promise shaderDenormPreserveFloat64) never act,
 *    and the tier needs no float-controls execution mode at all.
 *  - No overflow: a call takes at most 2^40 elements (vk_reduce.c), so |s| <= 2^941, each
 *    |e| <= 2^-53 |s|, |c| <= 2^40 * 2^888 (1 + 2^-12) < 2^929, D < 2^40 * 2^929 (1 + 2^-12)
 *    < 2^970, and the merges only add such quantities over the call's elements. So no infinity,
 *    and a NaN can only come from a flagged input (whose results the host ignores).
 *  - Rounding: Vulkan requires OpFAdd/OpFSub on normal 64-bit operands with normal results to be
 *    correctly rounded, round-to-nearest-even by default (no RoundingModeRTZ is declared).
 *  - No contraction or reassociation: every operation of the rules writes a `precise` variable
 *    (SPIR-V NoContraction; GLSL: computed in the order written), and no multiplication exists
 *    outside the exact f32 subnormal widening (m * 2^-149, exact) whose product is precise too.
 * The merge order (tree, records, segments) is free: the invariant holds for any merge tree. An
 * invocation's NT triples are such a tree: each starts as the empty sum's (0, 0, 0) and takes a
 * subsequence of the invocation's elements by the add rule, then they are merged.
 */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_shader_explicit_arithmetic_types_float64 : require

#define WG 256
layout(local_size_x = WG) in;
/* 16-byte loads in flight per invocation in the bulk loop: 8 (the reduce's default) or 4
 * (TALLY_VULKAN_SPEC_U=4) */
layout(constant_id = 0) const uint UU = 8;
/* independent triples per invocation: 1 (the default), 2 or 4 (TALLY_VULKAN_SPEC_T). A triple's
 * adds form one chain of dependent f64 adds (each add's s feeds the next): NT chains let a
 * warp issue NT adds where one waited for the previous add's result. */
layout(constant_id = 1) const uint NT = 1;
/* bit 0 (TALLY_VULKAN_SPEC_STEP=1): the bulk loop's step written out (UU loads into x0..x7, then
 * the vectors' adds in order, each element's triple a constant in the SPIR-V itself), not left
 * to the driver as a loop over an array. bit 1 (f32; TALLY_VULKAN_SPEC_Q4=1): a vector whose
 * nonzero values lie within 28 exponent fields is summed exactly in f64 first (three adds) and
 * goes into its triple as one value: 11 f64 adds per 4 elements instead of 32 (add_vec). bit 2
 * (f32; TALLY_VULKAN_SPEC_SEL=1): the widening's zero test and the vector's range flag as
 * selects, not the branches glslang makes of them (one per element, one per vector; the same
 * bits). */
layout(constant_id = 2) const uint SF = 0;

/* flag bits of a record (any set: the host declines) */
#define FLAG_RANGE 1u /* an input outside the accepted range (NaN, inf, huge, tiny f64) */

struct Trip {
    uint64_t s, c, d, flag; /* doubles as bits: moved, never converted */
};
layout(std430, binding = 0) readonly buffer InV { uvec4 inv[]; };
layout(std430, binding = 0) readonly buffer InW { uint inw[]; };
layout(std430, binding = 1) writeonly buffer Out { Trip outrec[]; };
layout(std430, binding = 2) buffer Recs { Trip rec[]; };

layout(push_constant) uniform PC {
    uint64_t n;  /* fold: elements of this segment */
    uint head;   /* fold: bytes from the binding's start to element 0 (element aligned) */
    uint rec0;   /* this segment's first record (fold); the call's first (finish) */
    uint nrec;   /* finish: records of the call */
    uint fin;    /* 1: the finish dispatch */
} pc;

/* ---- the triple's rules (exact_sum.h) --------------------------------------------------- */
/* triple 0 (t_s, t_c, t_d) and, with NT > 1, triples 1-3; set to 0 in main; every value
 * written to them is a precise result */
double t_s, t_c, t_d, t1_s, t1_c, t1_d, t2_s, t2_c, t2_d, t3_s, t3_c, t3_d;
uint t_flag;

/* TwoSum (Knuth): S + X = s1 + e exactly, for any order of magnitudes; then c and D */
#define ADD_X(S, C, D, X)                                                                       \
    {                                                                                           \
        precise double s1_ = S + X;                                                             \
        precise double bb_ = s1_ - S;                                                           \
        precise double e_ = (S - (s1_ - bb_)) + (X - bb_);                                      \
        precise double c1_ = C + e_;                                                            \
        precise double d1_ = D + abs(c1_);                                                      \
        S = s1_;                                                                                \
        C = c1_;                                                                                \
        D = d1_;                                                                                \
    }

/* x into triple k % NT (k: the element's place in the step, a constant once specialised) */
void add_x(uint k, double x)
{
    uint j = k % NT;
    if (j == 0u) ADD_X(t_s, t_c, t_d, x)
    else if (j == 1u) ADD_X(t1_s, t1_c, t1_d, x)
    else if (j == 2u) ADD_X(t2_s, t2_c, t2_d, x)
    else ADD_X(t3_s, t3_c, t3_d, x)
}

void merge(double s2, double c2, double d2)
{
    precise double s1 = t_s + s2;
    precise double bb = s1 - t_s;
    precise double e = (t_s - (s1 - bb)) + (s2 - bb);
    precise double t = t_c + c2;
    precise double c = t + e;
    precise double dd = t_d + d2;
    precise double tc = abs(t) + abs(c);
    precise double d1 = dd + tc;
    t_s = s1;
    t_c = c;
    t_d = d1;
}

/* ---- inputs: checked by their bits, widened exactly ------------------------------------ */
#if TSIZE == 4
/* f32 bits u to f64, exactly: NaN/inf flagged; a subnormal f32 is m * 2^-149 (m < 2^23, exact
 * conversion, and the product is a normal double); zero and normal f32s by moving the fields
 * (integer code: no float conversion, so no flush of f32 subnormals can act) */
void add_bits(uint k, uint u)
{
    uint mag = u & 0x7fffffffu;
    if (mag >= 0x7f800000u) t_flag |= FLAG_RANGE;
    double x;
    if (mag < 0x00800000u) {
        precise double m = double(mag) * packDouble2x32(uvec2(0u, 874u << 20)); /* x 2^-149 */
        x = (u >> 31) != 0u ? -m : m;
    } else {
        x = packDouble2x32(uvec2(u << 29, (u & 0x80000000u) | ((mag >> 3) + 0x38000000u)));
    }
    add_x(k, x);
}
/* a zero or normal f32 (or NaN/inf, flagged) by moving the fields alone */
void add_bits_normal(uint k, uint u)
{
    uint mag = u & 0x7fffffffu;
    uint hi = (SF & 4u) != 0u ? mix((mag >> 3) + 0x38000000u, 0u, mag == 0u)
                              : mag == 0u ? 0u : (mag >> 3) + 0x38000000u;
    add_x(k, packDouble2x32(uvec2(u << 29, (u & 0x80000000u) | hi)));
}
/* A vector: integer code alone unless one of its elements is a subnormal f32 (a branch that
 * whole subgroups skip on ordinary data, so the conversion is not paid per element). */
/* vector u of a step: elements 4u .. 4u + 3 of the step */
double widen_normal(uint u)
{
    uint mag = u & 0x7fffffffu;
    uint hi = (SF & 4u) != 0u ? mix((mag >> 3) + 0x38000000u, 0u, mag == 0u)
                              : mag == 0u ? 0u : (mag >> 3) + 0x38000000u;
    return packDouble2x32(uvec2(u << 29, (u & 0x80000000u) | hi));
}
/* With SF bit 1, a vector of zeros and normal f32s whose nonzero exponent fields lie in [lo, hi]
 * with hi - lo <= 27 is added as q = (x + y) + (z + w), every add exact: each value is a
 * multiple of 2^(lo - 150) below 2^(hi - 126) <= 2^(lo - 99) in magnitude, so every partial sum
 * of at most four is a multiple of 2^(lo - 150) below 2^(lo - 97), i.e. 2^53 such units: a
 * double, and a normal one or zero (at least 2^-149); any correctly rounded add returns it as it
 * is. So q is the vector's exact sum and the triple takes it by the add rule like any input
 * (fewer adds: the bound's chain is shorter). Other vectors take the element path (both exact). */
void add_vec(uint u, uvec4 v)
{
    uvec4 mag = v & uvec4(0x7fffffffu);
    if ((SF & 4u) != 0u) t_flag |= mix(0u, FLAG_RANGE, any(greaterThanEqual(mag, uvec4(0x7f800000u))));
    else if (any(greaterThanEqual(mag, uvec4(0x7f800000u)))) t_flag |= FLAG_RANGE;
    uvec4 m1 = mag - uvec4(1u); /* zeros wrap to the top: out of the least */
    if ((SF & 2u) != 0u) {
        uint lo = min(min(m1.x, m1.y), min(m1.z, m1.w));
        uint hi = max(max(mag.x, mag.y), max(mag.z, mag.w));
        /* lo >= 0x007fffff: no subnormal; all zeros: lo wraps, hi 0, and q = 0 */
        if (lo >= 0x007fffffu && (hi >> 23) <= ((lo + 1u) >> 23) + 27u) {
            precise double p0 = widen_normal(v.x) + widen_normal(v.y);
            precise double p1 = widen_normal(v.z) + widen_normal(v.w);
            precise double q = p0 + p1;
            add_x(u, q);
            return;
        }
    }
    if (any(lessThan(m1, uvec4(0x007fffffu)))) {
        add_bits(4u * u, v.x);
        add_bits(4u * u + 1u, v.y);
        add_bits(4u * u + 2u, v.z);
        add_bits(4u * u + 3u, v.w);
    } else {
        add_bits_normal(4u * u, v.x);
        add_bits_normal(4u * u + 1u, v.y);
        add_bits_normal(4u * u + 2u, v.z);
        add_bits_normal(4u * u + 3u, v.w);
    }
}
#else
/* f64 (lo, hi): accepted when zero or biased exponent in [53, 1922] */
void add_bits2(uint k, uint lo, uint hi)
{
    uint ef = (hi >> 20) & 0x7ffu;
    if (ef - 53u >= 1870u && ((hi << 1) | lo) != 0u) t_flag |= FLAG_RANGE;
    add_x(k, packDouble2x32(uvec2(lo, hi)));
}
/* vector u of a step: elements 2u, 2u + 1 of the step */
void add_vec(uint u, uvec4 v)
{
    add_bits2(2u * u, v.x, v.y);
    add_bits2(2u * u + 1u, v.z, v.w);
}
#endif

/* element i (0 <= i < n) of the segment, read word by word (the ends' partial vectors) */
void add_elem(uint64_t i)
{
    uint w = uint((uint64_t(pc.head) + i * uint64_t(TSIZE)) >> 2);
#if TSIZE == 4
    add_bits(0u, inw[w]);
#else
    add_bits2(0u, inw[w], inw[w + 1u]);
#endif
}

/* ---- the workgroup's merge ---------------------------------------------------------------- */
shared uint64_t sh_s[WG], sh_c[WG], sh_d[WG];
shared uint sh_f[WG];

/* merges the 256 invocations' triples; invocation 0 ends with the workgroup's. Every invocation
 * runs every level (same trip count: lavapipe, docs/vulkan.md); each shared word is written by
 * its owner before a barrier and read by another only after it, and rewritten by its owner only
 * after the next barrier. */
void wg_merge(uint tid)
{
    sh_s[tid] = doubleBitsToUint64(t_s);
    sh_c[tid] = doubleBitsToUint64(t_c);
    sh_d[tid] = doubleBitsToUint64(t_d);
    sh_f[tid] = t_flag;
    barrier();
    for (uint h = WG / 2; h > 0u; h >>= 1) {
        if (tid < h) {
            merge(uint64BitsToDouble(sh_s[tid + h]), uint64BitsToDouble(sh_c[tid + h]),
                  uint64BitsToDouble(sh_d[tid + h]));
            t_flag |= sh_f[tid + h];
        }
        barrier();
        if (tid < h) {
            sh_s[tid] = doubleBitsToUint64(t_s);
            sh_c[tid] = doubleBitsToUint64(t_c);
            sh_d[tid] = doubleBitsToUint64(t_d);
            sh_f[tid] = t_flag;
        }
        barrier();
    }
}

void main()
{
    uint tid = gl_LocalInvocationID.x;
    t_s = 0.0, t_c = 0.0, t_d = 0.0, t1_s = 0.0, t1_c = 0.0, t1_d = 0.0;
    t2_s = 0.0, t2_c = 0.0, t2_d = 0.0, t3_s = 0.0, t3_c = 0.0, t3_d = 0.0;
    t_flag = 0u;
    if (pc.fin != 0u) {
        /* finish: records [rec0, rec0 + nrec), a uniform trip count */
        for (uint i = 0u; i < pc.nrec; i += uint(WG)) {
            uint k = i + tid;
            if (k < pc.nrec) {
                Trip r = rec[pc.rec0 + k];
                merge(uint64BitsToDouble(r.s), uint64BitsToDouble(r.c), uint64BitsToDouble(r.d));
                t_flag |= uint(r.flag);
            }
        }
        wg_merge(tid);
        if (tid == 0u)
            outrec[0] = Trip(doubleBitsToUint64(t_s), doubleBitsToUint64(t_c), doubleBitsToUint64(t_d),
                             uint64_t(t_flag));
        return;
    }
    uint g = gl_WorkGroupID.x, G = gl_NumWorkGroups.x;
    uint64_t endb = uint64_t(pc.head) + pc.n * uint64_t(TSIZE);
    uint fv0 = (pc.head + 15u) >> 4; /* whole vectors [fv0, fv1) */
    uint fv1 = uint(endb >> 4);
    if (fv1 > fv0) {
        uint stride = G * uint(WG);
        uint v = fv0 + g * uint(WG) + tid;
        if ((SF & 1u) != 0u) {
            for (; v + (UU - 1u) * stride < fv1; v += UU * stride) {
                uvec4 x0 = inv[v], x1 = inv[v + stride], x2 = inv[v + 2u * stride], x3 = inv[v + 3u * stride];
                uvec4 x4 = uvec4(0u), x5 = uvec4(0u), x6 = uvec4(0u), x7 = uvec4(0u);
                if (UU == 8u) {
                    x4 = inv[v + 4u * stride];
                    x5 = inv[v + 5u * stride];
                    x6 = inv[v + 6u * stride];
                    x7 = inv[v + 7u * stride];
                }
                add_vec(0u, x0);
                add_vec(1u, x1);
                add_vec(2u, x2);
                add_vec(3u, x3);
                if (UU == 8u) {
                    add_vec(4u, x4);
                    add_vec(5u, x5);
                    add_vec(6u, x6);
                    add_vec(7u, x7);
                }
            }
        }
        for (; v + (UU - 1u) * stride < fv1; v += UU * stride) {
            uvec4 x[8];
            for (uint u = 0u; u < UU; u++) x[u] = inv[v + u * stride];
            for (uint u = 0u; u < UU; u++) add_vec(u, x[u]);
        }
        for (; v < fv1; v += stride) add_vec(0u, inv[v]);
    }
    if (g == 0u) {
        /* the elements outside the whole vectors: before fv0 and from fv1 on (all of them when
         * there are no whole vectors); fewer than 16 / TSIZE at each end */
        uint64_t nh = pc.n, t0 = pc.n;
        if (fv1 > fv0) {
            nh = (uint64_t(fv0) * 16ul - uint64_t(pc.head)) / uint64_t(TSIZE);
            t0 = (uint64_t(fv1) * 16ul - uint64_t(pc.head)) / uint64_t(TSIZE);
        }
        if (tid < 16u && uint64_t(tid) < nh) add_elem(uint64_t(tid));
        if (tid >= 16u && tid < 32u && t0 + uint64_t(tid - 16u) < pc.n) add_elem(t0 + uint64_t(tid - 16u));
    }
    /* the invocation's other triples into triple 0 (the merge rule) */
    if (NT > 1u) merge(t1_s, t1_c, t1_d);
    if (NT > 2u) {
        merge(t2_s, t2_c, t2_d);
        merge(t3_s, t3_c, t3_d);
    }
    wg_merge(tid);
    if (tid == 0u)
        rec[pc.rec0 + g] = Trip(doubleBitsToUint64(t_s), doubleBitsToUint64(t_c), doubleBitsToUint64(t_d),
                                uint64_t(t_flag));
}
