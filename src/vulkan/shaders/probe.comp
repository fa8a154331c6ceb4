#version 450
/* Benchmark probes for the f32 sums' per-element cost (bench_vulkan --probe-f32; vk_reduce.c,
 * tally_vulkan_bench_probe). Not a reduction of the library: no answer of tally comes from here.
 * Each mode reads f32 data exactly as spec.comp does (grid-stride over whole 16-byte vectors,
 * UU loads in flight per invocation, at most 2048 workgroups) and does one kind of per-element
 * work, so that one GPU run can tell which work sets the pace:
 *   MODE 0  umax of the bits (the f32 max's work: the baseline)
 *   MODE 1  OpFConvert f32 -> f64, then f64 adds into NCH independent accumulators
 *   MODE 2  spec.comp's integer widening (fields moved, no conversion), the same adds
 *   MODE 3  spec.comp's triple (TwoSum, c, D: 8 f64 adds) into NCH independent triples
 *   MODE 4  the integer widening, then 8 f64 adds per element into 8 accumulators (the triple's
 *           add count without its dependences: FP64 issue alone)
 *   MODE 5  f32 adds (no 64-bit value at all) into NCH accumulators
 *   MODE 6  MODE 2 with the widening's zero test as a select (OpSelect: glslang writes the ?: of
 *           MODE 2 as a branch per element)
 *   MODE 7  MODE 3 with that widening
 * Element k of a step (vector u, component c: k = 4u + c) goes to accumulator k % NCH, a constant
 * once the pipeline is specialised (the step is written out, not looped). Every workgroup
 * writes one record (s, c, d: plain f64 sums of its invocations' accumulators; flag: the max); the
 * finish dispatch (pc.fin = 1, one workgroup) adds the records into record 0 of binding 1. The
 * sums are for a plausibility check (the host compares them with a double sum of the data), not
 * exact results. Only whole vectors are read: the host passes 16-byte aligned data whose length
 * is a multiple of 4. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_shader_explicit_arithmetic_types_float64 : require

#define WG 256
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint MODE = 0;
layout(constant_id = 1) const uint NCH = 1; /* 1, 2, 4 or 8 (MODE 3, 7: at most 4) */
layout(constant_id = 2) const uint UU = 8;  /* 4 or 8 */

struct Trip {
    uint64_t s, c, d, flag;
};
layout(std430, binding = 0) readonly buffer InV { uvec4 inv[]; };
layout(std430, binding = 1) writeonly buffer Out { Trip outrec[]; };
layout(std430, binding = 2) buffer Recs { Trip rec[]; };

layout(push_constant) uniform PC {
    uint64_t n;
    uint head;
    uint rec0;
    uint nrec;
    uint fin;
} pc;

double a0, a1, a2, a3, a4, a5, a6, a7;   /* f64 accumulators / triples' s */
double c0, c1, c2, c3, d0, d1, d2, d3;   /* triples' c and D */
float f0, f1, f2, f3, f4, f5, f6, f7;    /* MODE 5 */
uint mx;

#define TWOSUM3(S, C, D, X)                                                                     \
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

double widen(uint u) /* spec.comp's add_bits_normal */
{
    uint mag = u & 0x7fffffffu;
    uint hi = mag == 0u ? 0u : (mag >> 3) + 0x38000000u;
    return packDouble2x32(uvec2(u << 29, (u & 0x80000000u) | hi));
}

double widen_sel(uint u) /* the same bits, the zero test as OpSelect */
{
    uint mag = u & 0x7fffffffu;
    uint hi = mix((mag >> 3) + 0x38000000u, 0u, mag == 0u);
    return packDouble2x32(uvec2(u << 29, (u & 0x80000000u) | hi));
}

void acc_add(uint j, double x)
{
    if (j == 0u) { precise double t = a0 + x; a0 = t; }
    else if (j == 1u) { precise double t = a1 + x; a1 = t; }
    else if (j == 2u) { precise double t = a2 + x; a2 = t; }
    else if (j == 3u) { precise double t = a3 + x; a3 = t; }
    else if (j == 4u) { precise double t = a4 + x; a4 = t; }
    else if (j == 5u) { precise double t = a5 + x; a5 = t; }
    else if (j == 6u) { precise double t = a6 + x; a6 = t; }
    else { precise double t = a7 + x; a7 = t; }
}
void facc_add(uint j, float x)
{
    if (j == 0u) { precise float t = f0 + x; f0 = t; }
    else if (j == 1u) { precise float t = f1 + x; f1 = t; }
    else if (j == 2u) { precise float t = f2 + x; f2 = t; }
    else if (j == 3u) { precise float t = f3 + x; f3 = t; }
    else if (j == 4u) { precise float t = f4 + x; f4 = t; }
    else if (j == 5u) { precise float t = f5 + x; f5 = t; }
    else if (j == 6u) { precise float t = f6 + x; f6 = t; }
    else { precise float t = f7 + x; f7 = t; }
}
void trip_add(uint j, double x)
{
    if (j == 0u) TWOSUM3(a0, c0, d0, x)
    else if (j == 1u) TWOSUM3(a1, c1, d1, x)
    else if (j == 2u) TWOSUM3(a2, c2, d2, x)
    else TWOSUM3(a3, c3, d3, x)
}

/* element k of the step (a constant after specialisation), bits u */
void elem(uint k, uint u)
{
    uint j = k % NCH;
    if (MODE == 0u) {
        mx = max(mx, u);
    } else if (MODE == 1u) {
        acc_add(j, double(uintBitsToFloat(u)));
    } else if (MODE == 2u) {
        acc_add(j, widen(u));
    } else if (MODE == 3u) {
        trip_add(j, widen(u));
    } else if (MODE == 6u) {
        acc_add(j, widen_sel(u));
    } else if (MODE == 7u) {
        trip_add(j, widen_sel(u));
    } else if (MODE == 4u) {
        double x = widen(u);
        precise double t0 = a0 + x, t1 = a1 + x, t2 = a2 + x, t3 = a3 + x;
        precise double t4 = a4 + x, t5 = a5 + x, t6 = a6 + x, t7 = a7 + x;
        a0 = t0, a1 = t1, a2 = t2, a3 = t3, a4 = t4, a5 = t5, a6 = t6, a7 = t7;
    } else {
        facc_add(j, uintBitsToFloat(u));
    }
}
void vec(uint u, uvec4 v)
{
    elem(4u * u, v.x);
    elem(4u * u + 1u, v.y);
    elem(4u * u + 2u, v.z);
    elem(4u * u + 3u, v.w);
}

shared double sh_s[WG], sh_c[WG], sh_d[WG];
shared uint sh_m[WG];

/* d: the triples' D (MODE 3, 7), summed into the record so that no compiler drops its adds */
void wg_sum(uint tid, double s, double c, double d, uint m)
{
    sh_s[tid] = s;
    sh_c[tid] = c;
    sh_d[tid] = d;
    sh_m[tid] = m;
    barrier();
    for (uint h = WG / 2; h > 0u; h >>= 1) {
        if (tid < h) {
            sh_s[tid] += sh_s[tid + h];
            sh_c[tid] += sh_c[tid + h];
            sh_d[tid] += sh_d[tid + h];
            sh_m[tid] = max(sh_m[tid], sh_m[tid + h]);
        }
        barrier();
    }
}

void main()
{
    uint tid = gl_LocalInvocationID.x;
    if (pc.fin != 0u) {
        double s = 0.0, c = 0.0, d = 0.0;
        uint m = 0u;
        for (uint i = tid; i < pc.nrec; i += uint(WG)) {
            s += uint64BitsToDouble(rec[i].s);
            c += uint64BitsToDouble(rec[i].c);
            d += uint64BitsToDouble(rec[i].d);
            m = max(m, uint(rec[i].flag));
        }
        wg_sum(tid, s, c, d, m);
        if (tid == 0u)
            outrec[0] = Trip(doubleBitsToUint64(sh_s[0]), doubleBitsToUint64(sh_c[0]), doubleBitsToUint64(sh_d[0]),
                             uint64_t(sh_m[0]));
        return;
    }
    /* MODE 4's accumulators start apart (a compiler cannot merge them); taken off below */
    a0 = 0.0, a1 = MODE == 4u ? 1.0 : 0.0, a2 = MODE == 4u ? 2.0 : 0.0, a3 = MODE == 4u ? 3.0 : 0.0;
    a4 = MODE == 4u ? 4.0 : 0.0, a5 = MODE == 4u ? 5.0 : 0.0, a6 = MODE == 4u ? 6.0 : 0.0;
    a7 = MODE == 4u ? 7.0 : 0.0;
    c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0, d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
    f0 = 0.0, f1 = 0.0, f2 = 0.0, f3 = 0.0, f4 = 0.0, f5 = 0.0, f6 = 0.0, f7 = 0.0;
    mx = 0u;
    uint g = gl_WorkGroupID.x, G = gl_NumWorkGroups.x;
    uint fv1 = uint((uint64_t(pc.n) * 4ul) >> 4);
    uint stride = G * uint(WG);
    uint v = g * uint(WG) + tid;
    for (; v + (UU - 1u) * stride < fv1; v += UU * stride) {
        uvec4 x0 = inv[v], x1 = inv[v + stride], x2 = inv[v + 2u * stride], x3 = inv[v + 3u * stride];
        uvec4 x4 = uvec4(0u), x5 = uvec4(0u), x6 = uvec4(0u), x7 = uvec4(0u);
        if (UU == 8u) {
            x4 = inv[v + 4u * stride];
            x5 = inv[v + 5u * stride];
            x6 = inv[v + 6u * stride];
            x7 = inv[v + 7u * stride];
        }
        vec(0u, x0);
        vec(1u, x1);
        vec(2u, x2);
        vec(3u, x3);
        if (UU == 8u) {
            vec(4u, x4);
            vec(5u, x5);
            vec(6u, x6);
            vec(7u, x7);
        }
    }
    for (; v < fv1; v += stride) vec(0u, inv[v]);
    double s = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
    s += double(((f0 + f1) + (f2 + f3)) + ((f4 + f5) + (f6 + f7)));
    if (MODE == 4u) s = (s - 28.0) * 0.125; /* 8 x the sum + 0 + 1 + ... + 7 */
    double c = (c0 + c1) + (c2 + c3);
    double d = (d0 + d1) + (d2 + d3);
    wg_sum(tid, s, c, d, mx);
    if (tid == 0u)
        rec[pc.rec0 + g] = Trip(doubleBitsToUint64(sh_s[0]), doubleBitsToUint64(sh_c[0]), doubleBitsToUint64(sh_d[0]),
                                uint64_t(sh_m[0]));
}
