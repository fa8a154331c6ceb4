#version 450
/* Fused reductions. MERGE = 0: each workgroup folds an even share of the input into one partial
 * record (layout: struct Partial below, mirrored by vk_partial in vk_internal.h); MERGE = 1: one
 * workgroup folds the partials into one record, which the host turns into results with the core's
 * code (core/partial.c), so the results are the CPU backend's bit for bit.
 *
 * Every merge here is order-free: integer sums (128-bit), extremes with the index as tie-break
 * (the first occurrence wins whatever the tree), bit ops, counts, and the exact float sums,
 * which are integer digits (core/exact_sum.h). So neither the thread count nor the workgroup
 * count nor the device's scheduling can change a bit of the results.
 *
 * Exact float sums. Each thread keeps a window accumulator: an integer (int64 for f32 input,
 * 128-bit for f64 and for squares) whose lowest bit sits at a position P of the fixed-point
 * number of exact_sum.h (bit 0 = 2^-1088). An element m * 2^pos (m: its integer significand)
 * is added as m << (pos - P) when 0 <= pos - P <= W (W = 24 for f32, 40 otherwise). Proof that
 * the window never overflows: f32: m < 2^24, so each add is below 2^48 in magnitude, and the
 * accumulator is flushed after 2^14 adds: |acc| < 2^62. f64: m < 2^53, each add < 2^93, and a
 * thread makes fewer than 2^31 adds (the host caps each workgroup's share at 2^30 elements):
 * |acc| < 2^124. An element outside the window flushes the accumulator into the workgroup's
 * shared digits (atomic int64 adds of 32-bit pieces, exactly exact_sum.h's deferred-carry
 * layout) and re-centres the window on the element. Nothing is ever rounded: the flushed digits
 * plus the window are the exact sum at every step. Data within the window's span (prices,
 * measurements) never flush but at the end; wide-range data flush often and run slower.
 *
 * Variance (SQDEV): the exact sum of (x - mean)^2 with x - mean rounded to f64 (the one float
 * operation, correctly rounded by Vulkan's rules for normal operands), each square formed
 * exactly as a 106-bit integer. The CPU adds the square as two doubles hi + lo (fma), which is
 * the same exact value unless lo underflows or hi overflows: |x - mean| below 2^-463 or above
 * 2^510, a subnormal operand, or a flushed difference. Those elements set XF_EDGE and the host
 * recomputes the variance on the CPU backend, so the bits stay the CPU's in every case. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define WG 256
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint FEAT = 0;  /* TALLY_NEED_* of core/partial.h, + N_SQDEV */
layout(constant_id = 1) const uint OMIT = 0;  /* omit NaN */
layout(constant_id = 2) const uint MERGE = 0; /* 1: merge partials */

const uint N_SUM = 1u, N_PROD = 2u, N_MIN = 4u, N_MAX = 8u, N_ARGMIN = 16u, N_ARGMAX = 32u,
           N_BITS = 64u, N_NANS = 128u, N_FIRSTNAN = 512u, N_SQDEV = 1024u;
const bool DO_SUM = (FEAT & N_SUM) != 0u;
const bool DO_IPROD = (FEAT & N_PROD) != 0u && TFLOAT == 0;
const bool DO_MIN = (FEAT & (N_MIN | N_ARGMIN)) != 0u;
const bool DO_MAX = (FEAT & (N_MAX | N_ARGMAX)) != 0u;
const bool DO_ARGMIN = (FEAT & N_ARGMIN) != 0u;
const bool DO_ARGMAX = (FEAT & N_ARGMAX) != 0u;
const bool DO_BITS = (FEAT & N_BITS) != 0u && TFLOAT == 0;
const bool DO_NANS = (FEAT & (N_NANS | N_FIRSTNAN)) != 0u && TFLOAT != 0;
const bool DO_FIRSTNAN = (FEAT & N_FIRSTNAN) != 0u && TFLOAT != 0;
const bool DO_SQDEV = (FEAT & N_SQDEV) != 0u;
const bool DO_XSUM = (DO_SUM && TFLOAT != 0) || DO_SQDEV; /* the exact digits */
const bool DO_ISUM = DO_SUM && TFLOAT == 0 && !DO_SQDEV;

struct Partial {
    uint64_t nans, sum_lo, sum_hi, kmin, kmax, imin, imax, first_nan, band, bor, bxor, pmag;
    uint pflags, xflags, pad0, pad1;
    int64_t chunk[X_CHUNKS];
};

layout(std430, binding = 0) readonly buffer InV { uvec4 inv[]; };
layout(std430, binding = 0) readonly buffer InW { uint inw[]; };
layout(std430, binding = 2) buffer Parts { Partial part[]; };

layout(push_constant) uniform PC {
    uint64_t n;         /* elements of this segment */
    uint64_t gbase;     /* global index of its first element */
    uint64_t mean_bits; /* SQDEV: the mean as f64 bits */
    uint head;          /* bytes from the binding's start to element 0 (element aligned) */
    uint vec_per_wg;    /* 16-byte vectors per workgroup (MERGE: partials to merge) */
    uint part0;         /* index of this segment's first partial (MERGE: of the first input) */
    uint nvec;          /* vectors covering [0, head + n * TSIZE) (MERGE: output index) */
} pc;

/* ---- thread state ---------------------------------------------------------------------- */
uint64_t t_nans = 0ul;
uint64_t t_lo = 0ul, t_hi = 0ul; /* integer sum, 128-bit two's complement */
uint64_t t_kmin = ~0ul, t_kmax = 0ul, t_imin = ~0ul, t_imax = ~0ul, t_first_nan = ~0ul;
uint64_t t_band = ~0ul, t_bor = 0ul, t_bxor = 0ul;
uint64_t t_pmag = 1ul;
uint t_pflags = 0u; /* 1 zero seen, 2 overflow, 4 negative */
uint t_xflags = 0u;
/* window accumulators (see the header): f32 int64, else 128-bit */
int64_t f_acc = 0l;
int f_P = -100000;
uint f_cnt = 0u;
uint64_t w_lo = 0ul;
int64_t w_hi = 0l;
int w_P = -100000;

shared int64_t xs[X_CHUNKS];
shared uint xs_flags;
shared uint64_t sa[WG];
shared uint64_t sb[WG];

/* Adds mag * 2^(p - BIAS) (sign: neg) to the shared digits: 32-bit pieces at p / 32 .. +2. */
void x_put_mag(uint64_t mag, int p, bool neg)
{
    int i = p >> 5, s = p & 31;
    uint64_t lo = mag << s;
    uint64_t c[3];
    c[0] = lo & 0xfffffffful;
    c[1] = lo >> 32;
    c[2] = s == 0 ? 0ul : mag >> (64 - s);
    for (int k = 0; k < 3; k++) {
        if (c[k] != 0ul && i + k < X_CHUNKS) {
            int64_t v = int64_t(c[k]);
            atomicAdd(xs[i + k], neg ? -v : v);
        }
    }
}
void x_put_signed(int64_t v, int p)
{
    bool neg = v < 0l;
    x_put_mag(neg ? 0ul - uint64_t(v) : uint64_t(v), p, neg);
}

void f_flush()
{
    if (f_acc != 0l) x_put_signed(f_acc, f_P);
    f_acc = 0l;
    f_cnt = 0u;
}
void w_flush()
{
    if (w_lo != 0ul) x_put_mag(w_lo, w_P, false);
    if (w_hi != 0l) x_put_signed(w_hi, w_P + 64);
    w_lo = 0ul;
    w_hi = 0l;
}
/* Adds (neg ? -m : m) * 2^(pos - BIAS), m < 2^53, pos >= 0, into the 128-bit window. */
void w_add(uint64_t m, int pos, bool neg)
{
    int d = pos - w_P;
    if (uint(d) > 40u) {
        w_flush();
        w_P = max(pos - 20, 0);
        d = pos - w_P;
    }
    uint64_t vlo = m << d;
    uint64_t vhi = d > 11 ? m >> (64 - d) : 0ul;
    if (neg) {
        vhi = ~vhi + (vlo == 0ul ? 1ul : 0ul);
        vlo = 0ul - vlo;
    }
    uint64_t lo = w_lo + vlo;
    w_hi += int64_t(vhi + (lo < vlo ? 1ul : 0ul));
    w_lo = lo;
}

void fsum_add(uint64_t b)
{
#if TSIZE == 4
    uint u = uint(b);
    uint e = (u >> 23) & 0xffu, m = u & 0x7fffffu;
    if (e == 0xffu) { /* NaN was handled by the caller */
        t_xflags |= ((u >> 31) != 0u ? XF_NINF : XF_PINF) | XF_ANY | XF_NONNEGZERO;
        return;
    }
    t_xflags |= u == 0x80000000u ? XF_ANY : (XF_ANY | XF_NONNEGZERO);
    if (e == 0u) {
        if (m == 0u) return;
        e = 1u;
    } else {
        m |= 0x800000u;
    }
    int pos = int(e) + (X_BIAS - 150);
    int d = pos - f_P;
    if (uint(d) > 24u || f_cnt >= 16384u) {
        f_flush();
        f_P = pos - 12;
        d = 12;
    }
    int64_t v = int64_t(uint64_t(m) << d);
    f_acc += (u >> 31) != 0u ? -v : v;
    f_cnt++;
#else
    uint e = uint(b >> 52) & 0x7ffu;
    uint64_t m = b & 0x000ffffffffffffful;
    if (e == 0x7ffu) {
        t_xflags |= ((b >> 63) != 0ul ? XF_NINF : XF_PINF) | XF_ANY | XF_NONNEGZERO;
        return;
    }
    t_xflags |= b == 0x8000000000000000ul ? XF_ANY : (XF_ANY | XF_NONNEGZERO);
    if (e == 0u) {
        if (m == 0ul) return;
        e = 1u;
    } else {
        m |= 0x0010000000000000ul;
    }
    w_add(m, int(e) + (X_BIAS - 1075), (b >> 63) != 0ul);
#endif
}

void sq_add(uint64_t b)
{
    uint64_t vb = elem_f64_bits(b);
    uint64_t mb = pc.mean_bits;
    uint ev = uint(vb >> 52) & 0x7ffu, em = uint(mb >> 52) & 0x7ffu;
    if ((ev == 0u && (vb << 1) != 0ul) || (em == 0u && (mb << 1) != 0ul)) {
        t_xflags |= XF_EDGE;
        return;
    }
    double v = uint64BitsToDouble(vb), mean = uint64BitsToDouble(mb);
    precise double dd = v - mean;
    uint64_t db = doubleBitsToUint64(dd);
    uint ed = uint(db >> 52) & 0x7ffu;
    if (ed == 0x7ffu) { /* the CPU's hi = d * d is NaN or +inf */
        t_xflags |= ((db << 12) != 0ul ? XF_NAN : XF_PINF) | XF_ANY | XF_NONNEGZERO;
        return;
    }
    t_xflags |= XF_ANY | XF_NONNEGZERO;
    if ((db << 1) == 0ul) {
        if (v != mean) t_xflags |= XF_EDGE; /* a difference flushed to zero */
        return;
    }
    if (ed < 560u || ed >= 1534u) {
        t_xflags |= XF_EDGE;
        return;
    }
    uint64_t M = (db & 0x000ffffffffffffful) | 0x0010000000000000ul;
    uint64_t a0 = M & 0xfffffffful, a1 = M >> 32;
    uint64_t p0 = a0 * a0, p1 = a0 * a1; /* < 2^64, < 2^53 */
    uint64_t t = p1 << 33;
    uint64_t lo = p0 + t;
    uint64_t hi = a1 * a1 + (p1 >> 31) + (lo < t ? 1ul : 0ul); /* M^2 = hi * 2^64 + lo */
    uint64_t L = lo & 0x001ffffffffffffful;
    uint64_t H = (hi << 11) | (lo >> 53);
    int posL = 2 * int(ed) - 2150 + X_BIAS;
    w_add(L, posL, false);
    w_add(H, posL + 53, false);
}

/* 64 x 64 -> 64 with overflow (*ovf set when the product needs more than 64 bits). */
uint64_t mul_ovf(uint64_t a, uint64_t b, inout bool ovf)
{
    uint64_t ah = a >> 32, bh = b >> 32;
    if (ah != 0ul && bh != 0ul) {
        ovf = true;
        return 0ul;
    }
    if (ah != 0ul) { /* make a the one with a nonzero high half, b < 2^32 */
    } else if (bh != 0ul) {
        uint64_t t = a; a = b; b = t; ah = bh;
    }
    uint64_t t1 = ah * b; /* both < 2^32 */
    if ((t1 >> 32) != 0ul) {
        ovf = true;
        return 0ul;
    }
    uint64_t hi = t1 << 32;
    uint64_t r = hi + (a & 0xfffffffful) * b;
    if (r < hi) ovf = true;
    return r;
}

void iprod_add(uint64_t b)
{
    uint64_t m;
#if TSIGNED
    int64_t v = elem_signed(b);
    if (v < 0l) t_pflags ^= 4u;
    m = v < 0l ? 0ul - uint64_t(v) : uint64_t(v);
#else
    m = b;
#endif
    if (m == 0ul) {
        t_pflags |= 1u;
        return;
    }
    if ((t_pflags & 2u) != 0u) return;
    bool ovf = false;
    t_pmag = mul_ovf(t_pmag, m, ovf);
    if (ovf) t_pflags |= 2u;
}

void add_elem(uint64_t b, uint64_t idx)
{
    if (DO_NANS || DO_XSUM) {
        if (elem_isnan(b)) {
            t_nans += 1ul;
            if (DO_FIRSTNAN) t_first_nan = min(t_first_nan, idx);
            if (OMIT == 0u && DO_XSUM) t_xflags |= XF_NAN | XF_ANY | XF_NONNEGZERO;
            return;
        }
    }
    if (DO_SQDEV) {
        sq_add(b);
        return;
    }
    if (DO_SUM) {
        if (TFLOAT != 0) {
            fsum_add(b);
        } else {
#if TSIGNED
            uint64_t v = uint64_t(elem_signed(b));
#else
            uint64_t v = b;
#endif
#if TSIZE == 8
            uint64_t lo = t_lo + v;
            t_hi += (TSIGNED != 0 && int64_t(v) < 0l ? ~0ul : 0ul) + (lo < v ? 1ul : 0ul);
            t_lo = lo;
#else
            t_lo += v; /* < 2^31 adds of < 2^32: exact in 64 bits */
#endif
        }
    }
    if (DO_MIN || DO_MAX) {
        uint64_t k = elem_key(b);
        /* elements come in increasing index order per thread: strict compares keep the
         * first occurrence; the index ~0 marks "none yet" (any key beats it) */
        if (DO_MIN && (k < t_kmin || t_imin == ~0ul)) { t_kmin = k; t_imin = idx; }
        if (DO_MAX && (k > t_kmax || t_imax == ~0ul)) { t_kmax = k; t_imax = idx; }
    }
    if (DO_BITS) {
        t_band &= b | (TSIZE == 8 ? 0ul : ~((1ul << (8 * TSIZE)) - 1ul));
        t_bor |= b;
        t_bxor ^= b;
    }
    if (DO_IPROD) iprod_add(b);
}

/* ---- workgroup combines (shared-memory trees; every thread gets the result) -------------- */
uint tid;

#define WG_TREE(COMBINE)                                   \
    barrier();                                             \
    for (uint s = WG / 2u; s > 0u; s >>= 1) {              \
        if (tid < s) { COMBINE; }                          \
        barrier();                                         \
    }

uint64_t wg_sum(uint64_t v)
{
    sa[tid] = v;
    WG_TREE(sa[tid] += sa[tid + s])
    uint64_t r = sa[0];
    barrier();
    return r;
}
uint64_t wg_and(uint64_t v)
{
    sa[tid] = v;
    WG_TREE(sa[tid] &= sa[tid + s])
    uint64_t r = sa[0];
    barrier();
    return r;
}
uint64_t wg_or(uint64_t v)
{
    sa[tid] = v;
    WG_TREE(sa[tid] |= sa[tid + s])
    uint64_t r = sa[0];
    barrier();
    return r;
}
uint64_t wg_xor(uint64_t v)
{
    sa[tid] = v;
    WG_TREE(sa[tid] ^= sa[tid + s])
    uint64_t r = sa[0];
    barrier();
    return r;
}
uint64_t wg_min(uint64_t v)
{
    sa[tid] = v;
    WG_TREE(sa[tid] = min(sa[tid], sa[tid + s]))
    uint64_t r = sa[0];
    barrier();
    return r;
}
/* 128-bit sum */
void wg_sum128(inout uint64_t lo, inout uint64_t hi)
{
    sa[tid] = lo;
    sb[tid] = hi;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1) {
        if (tid < s) {
            uint64_t a = sa[tid], b = sa[tid + s];
            uint64_t r = a + b;
            sb[tid] += sb[tid + s] + (r < a ? 1ul : 0ul);
            sa[tid] = r;
        }
        barrier();
    }
    lo = sa[0];
    hi = sb[0];
    barrier();
}
/* (key, index): the least key (max = 0) or greatest (max = 1), ties to the lower index */
void wg_arg(inout uint64_t k, inout uint64_t i, bool is_max)
{
    sa[tid] = k;
    sb[tid] = i;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1) {
        if (tid < s) {
            uint64_t k2 = sa[tid + s], i2 = sb[tid + s], k1 = sa[tid], i1 = sb[tid];
            bool take = is_max ? (k2 > k1 || (k2 == k1 && i2 < i1)) : (k2 < k1 || (k2 == k1 && i2 < i1));
            if (take) { sa[tid] = k2; sb[tid] = i2; }
        }
        barrier();
    }
    k = sa[0];
    i = sb[0];
    barrier();
}
void wg_prod(inout uint64_t mag, inout uint flags)
{
    sa[tid] = mag;
    sb[tid] = uint64_t(flags);
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1) {
        if (tid < s) {
            uint f = uint(sb[tid]) | uint(sb[tid + s]);
            f = (f & 3u) | ((uint(sb[tid]) ^ uint(sb[tid + s])) & 4u);
            bool ovf = (f & 2u) != 0u;
            uint64_t r = ovf ? 0ul : mul_ovf(sa[tid], sa[tid + s], ovf);
            if (ovf) f |= 2u;
            sa[tid] = r;
            sb[tid] = uint64_t(f);
        }
        barrier();
    }
    mag = sa[0];
    flags = uint(sb[0]);
    barrier();
}

/* Folds the thread states into the workgroup's and writes it to part[out]. The digits in xs
 * are normalised (core/exact_sum.h) before they are written, so that summing many partials'
 * digits cannot overflow. */
void finish(uint out_idx)
{
    if (DO_XSUM) {
        f_flush();
        w_flush();
        atomicOr(xs_flags, t_xflags);
    }
    if (DO_NANS) t_nans = wg_sum(t_nans);
    if (DO_FIRSTNAN) t_first_nan = wg_min(t_first_nan);
    if (DO_ISUM) {
#if TSIZE < 8
        if (MERGE == 0u) t_hi = (TSIGNED != 0 && int64_t(t_lo) < 0l) ? ~0ul : 0ul;
#endif
        wg_sum128(t_lo, t_hi);
    }
    if (DO_MIN) wg_arg(t_kmin, t_imin, false);
    if (DO_MAX) wg_arg(t_kmax, t_imax, true);
    if (DO_BITS) {
        t_band = wg_and(t_band);
        t_bor = wg_or(t_bor);
        t_bxor = wg_xor(t_bxor);
    }
    if (DO_IPROD) wg_prod(t_pmag, t_pflags);
    barrier();
    if (tid == 0u) {
        part[out_idx].nans = t_nans;
        part[out_idx].sum_lo = t_lo;
        part[out_idx].sum_hi = t_hi;
        part[out_idx].kmin = t_kmin;
        part[out_idx].kmax = t_kmax;
        part[out_idx].imin = t_imin;
        part[out_idx].imax = t_imax;
        part[out_idx].first_nan = t_first_nan;
        part[out_idx].band = t_band;
        part[out_idx].bor = t_bor;
        part[out_idx].bxor = t_bxor;
        part[out_idx].pmag = t_pmag;
        part[out_idx].pflags = t_pflags;
        part[out_idx].xflags = DO_XSUM ? xs_flags : 0u;
        if (DO_XSUM) {
            int64_t carry = 0l;
            for (int i = 0; i < X_CHUNKS - 1; i++) {
                int64_t c = xs[i] + carry;
                int64_t low = c & 0xffffffffl;
                carry = (c - low) >> 32;
                part[out_idx].chunk[i] = low;
            }
            part[out_idx].chunk[X_CHUNKS - 1] = xs[X_CHUNKS - 1] + carry;
        }
    }
}

/* MERGE: fold partials [part0, part0 + count) into this thread's state. */
void merge_partial(uint j)
{
    t_nans += part[j].nans;
    t_first_nan = min(t_first_nan, part[j].first_nan);
    uint64_t lo = t_lo + part[j].sum_lo;
    t_hi += part[j].sum_hi + (lo < t_lo ? 1ul : 0ul);
    t_lo = lo;
    uint64_t k = part[j].kmin, i = part[j].imin;
    if (k < t_kmin || (k == t_kmin && i < t_imin)) { t_kmin = k; t_imin = i; }
    k = part[j].kmax;
    i = part[j].imax;
    if (k > t_kmax || (k == t_kmax && i < t_imax)) { t_kmax = k; t_imax = i; }
    t_band &= part[j].band;
    t_bor |= part[j].bor;
    t_bxor ^= part[j].bxor;
    if (DO_IPROD) {
        uint f = part[j].pflags;
        t_pflags = ((t_pflags | f) & 3u) | ((t_pflags ^ f) & 4u);
        if ((t_pflags & 2u) == 0u) {
            bool ovf = false;
            t_pmag = mul_ovf(t_pmag, part[j].pmag, ovf);
            if (ovf) t_pflags |= 2u;
        }
    }
    t_xflags |= part[j].xflags;
}

void main()
{
    tid = gl_LocalInvocationID.x;
    if (DO_XSUM) {
        if (tid < uint(X_CHUNKS)) xs[tid] = 0l;
        if (tid == 0u) xs_flags = 0u;
        barrier();
    }
    if (MERGE != 0u) {
        uint count = pc.vec_per_wg;
        for (uint j = tid; j < count; j += WG) merge_partial(pc.part0 + j);
        if (DO_XSUM) { /* digits: thread c sums digit c over the partials (each below 2^32) */
            if (tid < uint(X_CHUNKS)) {
                int64_t s = 0l;
                for (uint j = 0u; j < count; j++) s += part[pc.part0 + j].chunk[tid];
                xs[tid] = s;
            }
        }
        finish(pc.nvec);
        return;
    }

    uint g = gl_WorkGroupID.x;
    uint v0 = g * pc.vec_per_wg;
    uint v1 = min(v0 + pc.vec_per_wg, pc.nvec);
    uint head = pc.head;
    uint64_t endb = uint64_t(head) + pc.n * uint64_t(TSIZE); /* bytes covered */
    for (uint v = v0 + tid; v < v1; v += WG) {
        uint64_t vb = uint64_t(v) * 16ul;
        bool full = vb >= uint64_t(head) && vb + 16ul <= endb;
        uint64_t idx0 = pc.gbase + (vb - uint64_t(head)) / uint64_t(TSIZE); /* may wrap: see below */
        if (full) {
            uvec4 x = inv[v];
            for (uint k = 0u; k < uint(VPE); k++) add_elem(elem_bits(x, k), idx0 + uint64_t(k));
        } else {
            /* the first and last vectors: whole 4-byte words inside [0, endb) only (the
             * binding's range ends at endb rounded up to 4) */
            uvec4 x = uvec4(0u);
            for (uint w = 0u; w < 4u; w++)
                if (vb + uint64_t(4u * w) < endb) x[w] = inw[4u * v + w];
            for (uint k = 0u; k < uint(VPE); k++) {
                uint64_t byte = vb + uint64_t(k * uint(TSIZE));
                if (byte >= uint64_t(head) && byte < endb)
                    add_elem(elem_bits(x, k), pc.gbase + (byte - uint64_t(head)) / uint64_t(TSIZE));
            }
        }
    }
    finish(pc.part0 + g);
}
