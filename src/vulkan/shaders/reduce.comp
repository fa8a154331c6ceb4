#version 450
/* Fused reductions in one or two dispatches per call. The fold dispatch (pc.fin = 0, one or more per
 * call, one per segment): each workgroup folds an even share of the input into its state, and
 * the state travels to one accumulator record per call (struct Acc, in device memory) by 64-bit
 * atomics: integer sums as three 64-bit digits, extremes, bit ops and NaN counts by atomic
 * min/max/and/or/xor/add, and the exact float sums as the 68 digits of core/exact_sum.h. What
 * atomics cannot fold (integer products; an argmin/argmax whose key and index do not pack into
 * 64 bits) goes to a partial record per workgroup instead (PART = 1). The finish dispatch
 * (pc.fin = 1, one workgroup, recorded after a compute -> compute pipeline barrier) reads the
 * accumulator (and merges the partials), writes the call's one record (struct Partial,
 * mirrored by tvk_partial in vk_internal.h) to the host-visible result buffer, and zeroes the
 * accumulator for the next call, so no call clears anything. The host turns the record into
 * results with the core's code (core/partial.c), so the results are the CPU backend's bit for
 * bit. Where every field travels by atomics (PART = 0), the fold's last workgroup does the
 * finish instead (TICKET, fold_ticket: a ticket per workgroup, device-scope fences), and the
 * call is one dispatch; the finish dispatch remains for partial records, the segmented mode and
 * as a measuring knob (vk_reduce.c).
 *
 * Memory order of the two-dispatch form, by construction: no workgroup ever reads what another
 * workgroup of the same dispatch wrote. Within a dispatch, workgroups only add into the accumulator with atomics
 * (whose order cannot matter: every fold is commutative) or write their own partial record.
 * Everything a dispatch reads from another dispatch is ordered by the API: the pipeline barrier
 * between the fold and finish dispatches (vk_reduce.c: compute -> compute, shader writes ->
 * shader reads and writes) makes every atomic and every partial record of the fold complete and
 * visible to the finish; the barrier after the finish orders its record for the host and its
 * zeroing before the next call's atomics, and every command buffer begins with the same barrier
 * (tvk_begin), which orders the previous submission's writes before this one's accesses. So no
 * fence inside a shader, no coherent qualifier and no reasoning about the memory model's
 * scopes is needed there (the one-dispatch form's reasoning is at fold_ticket). Within a workgroup, shared memory is written and read only across
 * barrier()s (each place says which).
 *
 * Every fold here is order-free: integer sums (128-bit), extremes with the index as tie-break
 * (the first occurrence wins whatever the order), bit ops, counts, and the exact float sums,
 * which are integer digits (core/exact_sum.h). So neither the thread count nor the workgroup
 * count nor the device's scheduling can change a bit of the results.
 *
 * The accumulator's zero is every field's identity: fields whose identity is all ones are kept
 * complemented (nkmin = ~min key, nband = ~and, nfirst = ~first NaN index), so min becomes max
 * and and becomes or. A packed argmin/argmax (32-bit key << 32 | index, elements below 2^32 - 1,
 * PACK = 1): argmin is the least packed value (ties: the lower index), argmax the greatest of
 * key << 32 | ~index (ties: the lower index again); an index of 2^32 - 1 never occurs, so the
 * zero (or its complement) means "none".
 *
 * Speed: the bulk of a segment is read as whole 16-byte vectors, UU (8, or 4) of them in flight
 * per invocation, grid-stride (N_GRID: all workgroups sweep the segment together, a few
 * thousand of them; or, without it, a contiguous share per workgroup); only the first and last
 * vectors of a segment, which may hold bytes outside the input, take the general path. Keys of elements of 4 bytes or less are 32-bit. Indices are
 * computed only for argmin/argmax/first NaN. The workgroup combine folds 256 values in two
 * levels of 16 (two barriers per group of fields).
 *
 * Exact float sums. Each thread keeps a window accumulator: an integer (int64 for f32 input,
 * 128-bit for f64 and for squares) whose lowest bit sits at a position P of the fixed-point
 * number of exact_sum.h (bit 0 = 2^-1088). An element m * 2^pos (m: its integer significand)
 * is added as m << (pos - P) when 0 <= pos - P <= W (W = 24 for f32, 40 otherwise). Proof that
 * the window never overflows: f32: m < 2^24, so each add is below 2^48 in magnitude, and the
 * accumulator is flushed after 2^14 adds: |acc| < 2^62. f64: m < 2^53, each add < 2^93, and a
 * thread makes fewer than 2^31 adds (the host caps each workgroup's share at 2^30 elements):
 * |acc| < 2^124 (f64_batch's adds, at most two per batch of up to 16 values, are below 2^103:
 * with fewer than 2^20 adds per thread, which a segment of at most 2^30 bytes guarantees (at
 * most 2^18 vectors per thread, so 2^17 batch adds or 2^19 element adds), still
 * below 2^124). An element outside the window flushes the accumulator into the workgroup's
 * shared digits (atomic int64 adds of 32-bit pieces, exactly exact_sum.h's deferred-carry
 * layout) and re-centres the window on the element. Nothing is ever rounded: the flushed digits
 * plus the window are the exact sum at every step. At the end the workgroup's digits are
 * carried once (each below 2^33 in magnitude: its low 32 bits plus the carry out of the digit
 * below, which is below 2^31 as every shared digit is below 2^63; the top one whole and small)
 * and added to the accumulator's (the threads' last windows join the digits by a shared-memory
 * fold of digit columns, not by atomics: x_combine; f32 sums alone take a proved-exact f64
 * fast path first: f32_batch4, f64 sums one too: f64_batch3, each value cut into three exact
 * doubles; N_XOLD, for benchmarks, gives the former f32_batch and f64_batch instead): with fewer than 2^30
 * workgroups per call no int64 digit of the accumulator can overflow, and the finish dispatch
 * normalises the sum fully before writing it. Data within the window's span (prices, measurements)
 * never flush but at the end; wide-range data flush often and run slower.
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
#define UMAX 8 /* 16-byte loads in flight per invocation in the bulk loop: UU of them (4 or 8) */
layout(local_size_x = WG) in;
layout(constant_id = 0) const uint FEAT = 0;  /* TALLY_NEED_* of core/partial.h, + N_SQDEV */
layout(constant_id = 1) const uint OMIT = 0;  /* omit NaN */
layout(constant_id = 2) const uint PART = 0;  /* 1: partial records for the non-digit fields */

const uint N_SUM = 1u, N_PROD = 2u, N_MIN = 4u, N_MAX = 8u, N_ARGMIN = 16u, N_ARGMAX = 32u,
           N_BITS = 64u, N_NANS = 128u, N_FIRSTNAN = 512u, N_SQDEV = 1024u, N_PACK = 2048u,
           N_GRID = 4096u, N_U8 = 8192u, N_BLOCK = 16384u, N_NOMM = 32768u,
           N_ONLY_FOLD = 65536u, N_ONLY_FIN = 131072u, N_ONEBIN = 262144u,
           N_XOLD = 524288u, N_TICKET = 1048576u;
/* benchmarks: the exact sums' former batch paths (f32_batch, f64_batch) instead of the
 * speculative ones (f32_batch4, f64_batch3) */
const bool XOLD = (FEAT & N_XOLD) != 0u;
/* the fold and the finish as pipelines of their own (the host binds the one it dispatches), so
 * that the fold's register allocation is not the finish's (the digits' normalisation, the
 * partial records' merge); without either bit, pc.fin chooses (the segmented mode) */
const bool ONLY_FOLD = (FEAT & N_ONLY_FOLD) != 0u;
const bool ONLY_FIN = (FEAT & N_ONLY_FIN) != 0u;
/* the fold's last workgroup finishes the call (no finish dispatch; fold_ticket), for calls
 * whose fields all travel by atomics (PART is 0 or 1; one comparison, as glslang's spec-constant
 * && of comparisons fails to compile) */
const bool TICKET = ((FEAT & (N_ONLY_FOLD | N_TICKET)) | PART) == (N_ONLY_FOLD | N_TICKET);
/* the bulk loop's shape (vk_reduce.c picks it): grid-stride or a contiguous share per
 * workgroup; 8 or 4 vectors in flight per invocation */
const bool GRID = (FEAT & N_GRID) != 0u;
/* grid-stride by blocks (with GRID): a batch is UU * WG consecutive vectors (vector u of thread t
 * at block + u * WG + t), the workgroups' blocks side by side, so that a workgroup's loads in
 * flight fall in one UU * 4 KiB window instead of UU windows G * 4 KiB apart */
const bool BLOCK = (FEAT & N_BLOCK) != 0u;
const uint UU = (FEAT & N_U8) != 0u ? 8u : 4u;
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
const bool NEED_IDX = DO_ARGMIN || DO_ARGMAX || DO_FIRSTNAN;
const bool PACK = (FEAT & N_PACK) != 0u && TSIZE <= 4; /* argmin/argmax packed in 64 bits */
const bool PACKMIN = PACK && DO_ARGMIN, PACKMAX = PACK && DO_ARGMAX;
const bool KEY32 = TSIZE <= 4;
/* which windows a thread keeps (see fsum_add, w_add): f32 sums f_acc at f_P (and the fast
 * path's a1), f64 sums and every variance pass the 128-bit w at w_P (the choice by the
 * preprocessor: glslang mis-compiles spec-constant && with a literal false) */
#if TSIZE == 4 && TFLOAT
const bool XF_ON = DO_SUM && !DO_SQDEV;
const bool XW_ON = DO_SQDEV;
#elif TSIZE == 4
const bool XF_ON = false;
const bool XW_ON = DO_SQDEV;
#else
const bool XF_ON = false;
const bool XW_ON = DO_XSUM;
#endif

struct Partial {
    uint64_t nans, sum_lo, sum_hi, kmin, kmax, imin, imax, first_nan, band, bor, bxor, pmag;
    uint pflags, xflags, pad0, pad1;
    int64_t chunk[X_CHUNKS];
};

struct Acc {
    int64_t digit[X_CHUNKS];
    uint64_t s0, s1, s2;    /* integer sum = s0 + s1 * 2^32 + s2 * 2^64 (mod 2^128) */
    uint64_t nans, nfirst;  /* nfirst = ~(first NaN index) */
    uint64_t nkmin, kmax;   /* nkmin = ~(min key); PACK: ~(key << 32 | index), key << 32 | ~index */
    uint64_t nband, bor, bxor;
    uint xflags, ticket; /* ticket: fold workgroups done (TICKET) */
};

layout(std430, binding = 0) readonly buffer InV { uvec4 inv[]; };
layout(std430, binding = 0) readonly buffer InW { uint inw[]; };
layout(std430, binding = 1) writeonly buffer Rec { Partial rec[]; };
layout(std430, binding = 2) buffer Parts { Partial part[]; };
layout(std430, binding = 3) buffer AccB { Acc acc[]; };
/* Segmented mode (pc.fin 2 and 3): workgroup j reduces segment j alone, its elements at byte
 * head of binding 0; its accumulator, record and partial record are entry j of bindings 3, 1
 * and 2. */
struct Seg {
    uint64_t head, n, mean_bits, pad;
};
layout(std430, binding = 4) readonly buffer SegB { Seg seg[]; };

layout(push_constant) uniform PC {
    uint64_t n;         /* elements of this segment */
    uint64_t gbase;     /* global index of its first element */
    uint64_t mean_bits; /* SQDEV: the mean as f64 bits */
    uint head;          /* bytes from the binding's start to element 0 (element aligned) */
    uint vec_per_wg;    /* 16-byte vectors per workgroup */
    uint part0;         /* fold: the partial record of this segment's first workgroup; finish:
                           the call's first partial record (calls batched into one command
                           buffer keep their records one after another in one buffer) */
    uint nvec;          /* vectors covering [0, head + n * TSIZE) */
    uint total_wg;      /* workgroups of the call's fold dispatches, every segment's */
    uint fin;           /* 1: the finish dispatch (one workgroup), 0: a fold dispatch */
} pc;

/* This workgroup's segment: the push constants', or (segmented mode) its seg[] entry. */
uint g_slot = 0u;   /* accumulator and record entry */
uint64_t g_n, g_gbase, g_mean;
uint g_head, g_vpw, g_part0, g_nvec, g_total, g_wg;
uint g_groups; /* workgroups sweeping this segment (GRID) */

/* ---- thread state ---------------------------------------------------------------------- */
uint64_t t_nans = 0ul;
uint64_t t_lo = 0ul, t_hi = 0ul; /* integer sum, 128-bit two's complement */
uint64_t t_kmin = ~0ul, t_kmax = 0ul, t_imin = ~0ul, t_imax = ~0ul, t_first_nan = ~0ul;
uint t_kmin32 = ~0u, t_kmax32 = 0u; /* KEY32 */
uint64_t t_band = ~0ul, t_bor = 0ul, t_bxor = 0ul;
uint64_t t_pmag = 1ul;
uint t_pflags = 0u; /* 1 zero seen, 2 overflow, 4 negative */
uint t_xflags = 0u;
/* window accumulators (see the header): f32 int64, else 128-bit */
int64_t f_acc = 0l;
int f_P = -100000;
uint f_cnt = 0u;
/* the f32 sums' fast path (f32_batch): a running double and the least exponent field of the
 * values in it (255: none yet) */
double a1 = 0.0;
uint a1_emin = 255u;
/* f32_batch4: four running doubles and the least exponent field of their values (255: none) */
double f4a = 0.0, f4b = 0.0, f4c = 0.0, f4d = 0.0;
uint f4_emin = 255u;
/* f64_batch3: the values' top, middle and low bits summed apart, and the least exponent field of
 * the values in them (0x7ff: none) */
double d3t = 0.0, d3m = 0.0, d3l = 0.0;
uint d3_emin = 0x7ffu;
uint64_t w_lo = 0ul;
int64_t w_hi = 0l;
int w_P = -100000;

shared int64_t xs[X_CHUNKS];
shared uint xs_flags;
shared uint64_t sa[WG];
shared uint64_t sb[WG];
shared uint64_t sc[WG];

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
/* Thread 0 after the workgroup's flushes: a column sum into digit i (plain: no other thread
 * touches xs then). Columns past the top digit hold only zeros (every window lies inside). */
void x_add_col(int i, uint64_t v)
{
    if (v != 0ul && i < X_CHUNKS) xs[i] += int64_t(v);
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
    uint64_t mb = g_mean;
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

/* 32-bit order keys of elements of 4 bytes or less (KEY32): unsigned numbers ordered like the
 * values; f32 keys are the host's 32-bit ones, integer keys widen with key64_of. */
uint key32(uint64_t b)
{
    uint u = uint(b);
#if TFLOAT
    return (u >> 31) != 0u ? ~u : (u | 0x80000000u);
#elif TSIGNED
    return uint(int(elem_signed(b))) ^ 0x80000000u;
#else
    return u;
#endif
}
/* A 32-bit key as the record's key (elem_key's for integers; f32 keys stay 32-bit). */
uint64_t key64_of(uint k)
{
#if TFLOAT
    return uint64_t(k);
#elif TSIGNED
    return uint64_t(int64_t(int(k ^ 0x80000000u))) ^ 0x8000000000000000ul;
#else
    return uint64_t(k);
#endif
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
        /* elements come in increasing index order per thread: strict compares keep the
         * first occurrence; the index ~0 marks "none yet" (any key beats it) */
        if (KEY32) {
            uint k = key32(b);
            if (NEED_IDX) {
                if (DO_ARGMIN && (k < t_kmin32 || t_imin == ~0ul)) { t_kmin32 = k; t_imin = idx; }
                if (DO_ARGMAX && (k > t_kmax32 || t_imax == ~0ul)) { t_kmax32 = k; t_imax = idx; }
                if (DO_MIN && !DO_ARGMIN) t_kmin32 = min(t_kmin32, k);
                if (DO_MAX && !DO_ARGMAX) t_kmax32 = max(t_kmax32, k);
            } else {
                /* the identities (~0, 0) are keys too, so a plain min/max is exact */
                if (DO_MIN) t_kmin32 = min(t_kmin32, k);
                if (DO_MAX) t_kmax32 = max(t_kmax32, k);
            }
        } else {
            uint64_t k = elem_key(b);
            if (DO_ARGMIN) {
                if (k < t_kmin || t_imin == ~0ul) { t_kmin = k; t_imin = idx; }
            } else if (DO_MIN) t_kmin = min(t_kmin, k);
            if (DO_ARGMAX) {
                if (k > t_kmax || t_imax == ~0ul) { t_kmax = k; t_imax = idx; }
            } else if (DO_MAX) t_kmax = max(t_kmax, k);
        }
    }
    if (DO_BITS) {
        t_band &= b | (TSIZE == 8 ? 0ul : ~((1ul << (8 * TSIZE)) - 1ul));
        t_bor |= b;
        t_bxor ^= b;
    }
    if (DO_IPROD) iprod_add(b);
}

/* The elements of one whole 16-byte vector; v: its index in the binding. */
void add_vec(uvec4 x, uint v)
{
    uint64_t idx0 = 0ul;
    if (NEED_IDX) idx0 = g_gbase + (uint64_t(v) * 16ul - uint64_t(g_head)) / uint64_t(TSIZE);
    for (uint k = 0u; k < uint(VPE); k++) add_elem(elem_bits(x, k), idx0 + uint64_t(k));
}

/* The elements of vector v that lie in [head, endb) (the segment's first and last vectors):
 * whole 4-byte words inside the binding only (its range ends at endb rounded up to 4). */
void add_edge_vec(uint v, uint64_t endb)
{
    uint64_t vb = uint64_t(v) * 16ul;
    uvec4 x = uvec4(0u);
    for (uint w = 0u; w < 4u; w++)
        if (vb + uint64_t(4u * w) < endb) x[w] = inw[4u * v + w];
    for (uint k = 0u; k < uint(VPE); k++) {
        uint64_t byte = vb + uint64_t(k * uint(TSIZE));
        if (byte >= uint64_t(g_head) && byte < endb)
            add_elem(elem_bits(x, k), g_gbase + (byte - uint64_t(g_head)) / uint64_t(TSIZE));
    }
}

/* ---- the f32 sums' fast path ----------------------------------------------------------------
 * For a float sum alone (no other field but NaN counts), a batch of the bulk loop (UU vectors,
 * at most 32 values, all finite and normal) is added to a running double a1 by plain f64 adds,
 * after proving from the values' exponents, by integer code and before adding anything, that
 * every add is exact (the CUDA backend's proof, reduce_worker.cuh):
 *  - emin (>= 1): the least exponent field of every value in a1, this batch's included; every
 *    such value is a multiple of 2^q, q = emin - 150, so is every exact partial sum, and a
 *    multiple of 2^q below 2^(q + 53) = 2^(emin - 97) in magnitude is a double: an add whose
 *    exact result stays below that returns it exactly under any rounding (and it is a normal
 *    double, at least 2^-149, so flushing denormals cannot touch it either).
 *  - every partial sum of the batch is at most |a1| + 32 max|x|, max|x| < 2^(emax - 126) (emax:
 *    the batch's greatest exponent field), so |a1| + 2^(emax - 121) < 2^(emin - 97) proves every
 *    add exact; that test is made in f64 too, and it is sound: the threshold is a double and
 *    rounding is monotone, so a rounded left side below it means the exact one is.
 *  - the batch's values are normal or zero (emin >= 1 for the nonzero ones, emax <= 254: no NaN,
 *    inf or subnormal), so float(bits) widened to double is exact on any device.
 * A batch that fails with a1 nonzero moves a1 exactly into the thread's integer digits first
 * (a1_spill) and is tested again on its own: |a1| = 0 then, so a batch fits whenever its
 * nonzero values span fewer than 24 exponent fields. One that still fails (wide ranges, NaN,
 * inf, subnormals) goes element by element into the integer window (fsum_add), exact by
 * construction. The order of adds cannot matter: any order's partial sums meet the same bound.
 * Zeros add nothing; the signed-zero flags come from the bits. At the end a1 joins the
 * workgroup's digits with the windows (x_combine). */
#if TSIZE == 4 && TFLOAT
/* the sum, and no field but NaN counts (one comparison: glslang mis-compiles some spec-constant
 * && chains) */
const bool FAST32 = (FEAT & (N_SUM | N_SQDEV | N_MIN | N_MAX | N_ARGMIN | N_ARGMAX | N_BITS | N_PROD)) == N_SUM;
#else
const bool FAST32 = false;
#endif

double pow2d(int k) /* 2^k, -1022 <= k <= 1023 */
{
    return uint64BitsToDouble(uint64_t(k + 1023) << 52);
}

/* a1 into the shared digits (a flush: the thread's other windows are untouched) */
void a1_spill()
{
    uint64_t b = doubleBitsToUint64(a1);
    if ((b << 1) != 0ul) {
        uint e = uint(b >> 52) & 0x7ffu; /* a1 is normal: see above */
        uint64_t m = (b & 0x000ffffffffffffful) | 0x0010000000000000ul;
        x_put_mag(m, int(e) + (X_BIAS - 1075), (b >> 63) != 0ul);
    }
    a1 = 0.0;
    a1_emin = 255u;
}

/* The batch x[0 .. UU-1] (whole vectors of the segment) by the fast path; false: not taken
 * (nothing added). */
bool f32_batch(uvec4 x[UMAX])
{
    uint lo = ~0u, hi = 0u;
    bool nonnegz = false;
    for (uint u = 0u; u < UU; u++) {
        for (uint k = 0u; k < 4u; k++) {
            uint b = x[u][k];
            lo = min(lo, (b << 1) - 1u); /* zeros wrap to the top: the least nonzero |x| */
            hi = max(hi, b << 1);
            nonnegz = nonnegz || b != 0x80000000u;
        }
    }
    uint emax = hi >> 24;
    if (lo == ~0u) { /* zeros only */
        t_xflags |= nonnegz ? (XF_ANY | XF_NONNEGZERO) : XF_ANY;
        return true;
    }
    uint eb = (lo + 1u) >> 24;
    if (eb == 0u || emax == 255u) return false; /* subnormal, NaN or inf: the careful path */
    uint emin = min(a1_emin, eb);
    precise double lhs = abs(a1) + pow2d(int(emax) - 121);
    if (!(lhs < pow2d(int(emin) - 97))) {
        if (emax - eb >= 24u) return false; /* cannot fit even alone */
        a1_spill();
        emin = eb;
    }
    precise double acc = a1;
    for (uint u = 0u; u < UU; u++)
        for (uint k = 0u; k < 4u; k++) acc += double(uintBitsToFloat(x[u][k]));
    a1 = acc;
    a1_emin = emin;
    t_xflags |= nonnegz ? (XF_ANY | XF_NONNEGZERO) : XF_ANY;
    return true;
}

/* ---- the f32 sums' speculative path (the default; f32_batch with N_XOLD) ---------------------
 * The same proof as f32_batch's, arranged for the GPU's pipelines: the batch's values are added
 * first, into four running doubles (element k of each vector into accumulator k: at most 8 values
 * each, four independent chains of f64 adds instead of one chain of 32), while the least and
 * greatest magnitudes are found, and the proof is checked after, from the running doubles as
 * they were before the batch; a batch that fails leaves them as they were (its adds are thrown
 * away; NaN, inf or subnormal values can only reach the thrown-away sums). The proof:
 *  - emin: the least exponent field of every value in the accumulators, this batch's included;
 *    all of them, and every partial sum, are multiples of 2^(emin - 150), and such a multiple
 *    below 2^(emin - 97) is a double, so an add whose exact result stays below that is exact in
 *    any rounding mode (and normal: at least 2^-149, untouched by a flush of denormals).
 *  - each accumulator's partial sums over the batch are at most m + 8 max|x|, m the greatest
 *    |accumulator| before it, max|x| < 2^(emax - 126): m + 2^(emax - 123) < 2^(emin - 99)
 *    (one rounded f64 add against a power of two: sound, rounding is monotone) proves every add
 *    exact and keeps every |accumulator| below 2^(emin - 99), so that their sum at the end (four
 *    values below 2^(emin - 97) together) is exact too.
 *  - a batch that fails with nonzero accumulators moves their sum into the digits (a1_spill) and
 *    is added again alone: it fits when emax - eb < 24 (eb: its least nonzero exponent field).
 *    One that does not fit goes element by element (fsum_add).
 * Per element: a conversion, an f64 add, and four 32-bit integer ops (shift, subtract, min, max);
 * the signed-zero flag is read from the bits only for a batch of zeros. */
bool f32_batch4(uvec4 x[UMAX])
{
    double b0 = f4a, b1 = f4b, b2 = f4c, b3 = f4d;
    precise double c0 = b0, c1 = b1, c2 = b2, c3 = b3;
    uint lo = ~0u, hi = 0u;
    for (uint u = 0u; u < UU; u++) {
        uvec4 w = x[u];
        c0 += double(uintBitsToFloat(w.x));
        c1 += double(uintBitsToFloat(w.y));
        c2 += double(uintBitsToFloat(w.z));
        c3 += double(uintBitsToFloat(w.w));
        uvec4 sh = w << 1u; /* |x|'s bits, shifted out of the sign */
        uvec4 m1 = sh - 1u; /* zeros wrap to the top: the least nonzero |x| */
        lo = min(lo, min(min(m1.x, m1.y), min(m1.z, m1.w)));
        hi = max(hi, max(max(sh.x, sh.y), max(sh.z, sh.w)));
    }
    if (lo == ~0u) { /* zeros only: nothing to add; a +0 among them is a non-negative zero */
        bool pz = false;
        for (uint u = 0u; u < UU; u++) pz = pz || any(equal(x[u], uvec4(0u)));
        t_xflags |= pz ? (XF_ANY | XF_NONNEGZERO) : XF_ANY;
        return true;
    }
    uint emax = hi >> 24, eb = (lo + 1u) >> 24;
    if (eb == 0u || emax == 255u) return false; /* subnormal, NaN or inf: the careful path */
    uint emin = min(f4_emin, eb);
    double m = max(max(abs(b0), abs(b1)), max(abs(b2), abs(b3)));
    precise double lhs = m + pow2d(int(emax) - 123);
    if (lhs < pow2d(int(emin) - 99)) {
        f4a = c0; f4b = c1; f4c = c2; f4d = c3;
        f4_emin = emin;
        t_xflags |= XF_ANY | XF_NONNEGZERO;
        return true;
    }
    if (emax - eb >= 24u) return false; /* cannot fit even alone */
    precise double s01 = b0 + b1, s23 = b2 + b3;
    precise double s = s01 + s23; /* exact: see above */
    a1 = s;
    a1_spill();
    precise double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
    for (uint u = 0u; u < UU; u++) {
        d0 += double(uintBitsToFloat(x[u].x));
        d1 += double(uintBitsToFloat(x[u].y));
        d2 += double(uintBitsToFloat(x[u].z));
        d3 += double(uintBitsToFloat(x[u].w));
    }
    f4a = d0; f4b = d1; f4c = d2; f4d = d3;
    f4_emin = eb;
    t_xflags |= XF_ANY | XF_NONNEGZERO;
    return true;
}

/* ---- the f64 sums' batch path ------------------------------------------------------------------
 * For an f64 sum alone: a batch (UU vectors, at most 16 values) whose nonzero values are normal
 * and lie within 14 exponent fields (emax - emin <= 13) is summed exactly in two int64 bins:
 * with base b = emin when emax - emin <= 6 (one bin holds all), else b = emax - 6, a value of
 * exponent field e >= b goes to the high bin as +-m << (e - b), one with e < b (then e >= b - 7)
 * to the low bin as +-m << (e - b + 7): each below 2^59 in magnitude, 16 of them below 2^63. Each
 * bin is then added once into the 128-bit window, at b's position and at b - 7's (w_add_wide),
 * instead of a window add per element: at most two window adds per batch of 16, within the
 * window's bound (fewer than 2^20 adds per thread). Zeros add nothing (their mantissa is 0 and
 * no implicit bit is set); the signed-zero flags come from the bits. Other batches (NaN, inf,
 * subnormals, wider spreads) go element by element. Why two bins: a batch that fails costs its
 * thread 16 element adds, and its whole subgroup waits for them; with one bin of 7 fields about
 * 12% of price-like batches (0.01 .. 1000) failed, so nearly every subgroup of 32 had one; with
 * 14 fields a batch fails only when it holds a value below 2^-13 of its largest. */
#if TSIZE == 8 && TFLOAT
const bool FAST64 = (FEAT & (N_SUM | N_SQDEV | N_MIN | N_MAX | N_ARGMIN | N_ARGMAX | N_BITS | N_PROD)) == N_SUM;
#else
const bool FAST64 = false;
#endif

/* Adds (neg ? -mag : mag) * 2^(pos - BIAS), mag < 2^64, into the 128-bit window (w_add's
 * bound: each add below 2^104, fewer than 2^20 of them per thread). */
void w_add_wide(uint64_t mag, int pos, bool neg)
{
    int d = pos - w_P;
    if (uint(d) > 40u) {
        w_flush();
        w_P = max(pos - 20, 0);
        d = pos - w_P;
    }
    uint64_t vlo = mag << d;
    uint64_t vhi = d == 0 ? 0ul : mag >> (64 - d);
    if (neg) {
        vhi = ~vhi + (vlo == 0ul ? 1ul : 0ul);
        vlo = 0ul - vlo;
    }
    uint64_t lo = w_lo + vlo;
    w_hi += int64_t(vhi + (lo < vlo ? 1ul : 0ul));
    w_lo = lo;
}

bool f64_batch(uvec4 x[UMAX])
{
    uint emin = 0x7ffu, emax = 0u;
    bool nonnegz = false;
    for (uint u = 0u; u < UU; u++) {
        for (uint k = 0u; k < 2u; k++) {
            uint hw = x[u][2u * k + 1u], lw = x[u][2u * k];
            uint mag = hw & 0x7fffffffu;
            uint e = mag >> 20;
            bool zero = mag == 0u && lw == 0u;
            emin = min(emin, zero ? 0x7ffu : e);
            emax = max(emax, e);
            nonnegz = nonnegz || hw != 0x80000000u || lw != 0u;
        }
    }
    if (emax == 0u && emin == 0x7ffu) { /* zeros only */
        t_xflags |= nonnegz ? (XF_ANY | XF_NONNEGZERO) : XF_ANY;
        return true;
    }
    /* N_ONEBIN (benchmarks): one bin of 7 fields, the former path */
    if (emin == 0u || emax == 0x7ffu || emax - emin > ((FEAT & N_ONEBIN) != 0u ? 6u : 13u)) return false;
    uint base = emax - emin <= 6u ? emin : emax - 6u; /* the high bin's; the low bin's is base - 7 */
    int64_t ahi = 0l, alo = 0l;
    for (uint u = 0u; u < UU; u++) {
        for (uint k = 0u; k < 2u; k++) {
            uint hw = x[u][2u * k + 1u], lw = x[u][2u * k];
            uint e = (hw >> 20) & 0x7ffu;
            uint mh = (hw & 0x000fffffu) | (e != 0u ? 0x00100000u : 0u);
            bool high = e >= base;
            /* zeros (e = 0, m = 0) add 0 to the low bin */
            uint sh = e == 0u ? 0u : (high ? e - base : e + 7u - base);
            int64_t v = int64_t(pack64(uvec2(lw, mh)) << sh);
            v = (hw >> 31) != 0u ? -v : v;
            ahi += high ? v : 0l;
            alo += high ? 0l : v;
        }
    }
    if (ahi != 0l) {
        bool neg = ahi < 0l;
        w_add_wide(neg ? 0ul - uint64_t(ahi) : uint64_t(ahi), int(base) + (X_BIAS - 1075), neg);
    }
    if (alo != 0l) {
        bool neg = alo < 0l;
        w_add_wide(neg ? 0ul - uint64_t(alo) : uint64_t(alo), int(base) - 7 + (X_BIAS - 1075), neg);
    }
    t_xflags |= nonnegz ? (XF_ANY | XF_NONNEGZERO) : XF_ANY;
    return true;
}

/* ---- the f64 sums' speculative path (the default; f64_batch with N_XOLD) ---------------------
 * Each value x (exponent field e, significand M < 2^53) is cut exactly into three doubles by
 * masking bits: its top (M's bits 35..52: x with the low 35 bits cleared), middle (bits 17..34)
 * and low part (bits 0..16), t = x & ~(2^35 - 1), tm = x & ~(2^17 - 1), mid = tm - t and
 * low = x - tm (subtractions whose exact results are doubles: exact in any rounding mode). The
 * three parts are summed by plain f64 adds into d3t, d3m, d3l (three independent chains), the
 * batch's adds first and the proof checked after from the sums as they were before it (a
 * batch that fails leaves them as they were). The proof, E being the least exponent field of
 * every value in the sums (this batch's included, at least 53) and emax the batch's greatest:
 *  - top parts are multiples of 2^(E - 1040), below 2^(e - 1022) each; middle parts multiples of
 *    2^(E - 1058), below 2^(e - 1040); low parts multiples of 2^(E - 1075), below 2^(e - 1058).
 *    A multiple of 2^g below 2^(g + 53) is a double, so the adds are exact while the partial sums
 *    stay below 2^(E - 987), 2^(E - 1005) and 2^(E - 1022) respectively (and normal: every
 *    nonzero one is at least 2^(E - 1075) >= 2^-1022, so a flush of denormals cannot touch them).
 *  - a batch (at most 16 values) moves each sum by at most 16 times its parts' bound:
 *    2^(emax - 1018), 2^(emax - 1036), 2^(emax - 1054). Scaled by 2^-18, 1 and 2^18 (exact: no
 *    result leaves the normal range), the three conditions hold when
 *    max(|d3t| 2^-18, |d3m|, |d3l| 2^18) + 2^(emax - 1036) < 2^min(E - 1005, 1005)
 *    (one rounded add against a power of two: sound, rounding is monotone; the cap keeps d3t
 *    below 2^1023, finite).
 *  - every value of a taken batch is normal with e >= 53, or zero (whose parts are zeros).
 * So a batch of values within 30 binades of each other always fits while the sums are small; a
 * batch that fails with nonzero sums moves them into the 128-bit window (d3_spill) and is added
 * again alone. One that does not fit alone (wider, NaN, inf, subnormal or tiny values) goes
 * element by element (fsum_add). Per element: two 32-bit masks, two f64 subtractions and three
 * f64 adds, and the exponent keys (six 32-bit ops); no 64-bit integer op, no branch. */

/* d (a double, zero or normal, a multiple of 2^(E - 1075), below 2^(E - 986) in magnitude) added
 * into the 128-bit (lo, hi) whose bit 0 is 2^(E - k - 1075), 0 <= k <= 12. */
void d3_put(double d, uint E, int k, inout uint64_t lo, inout int64_t hi)
{
    uint64_t b = doubleBitsToUint64(d);
    if ((b << 1) == 0ul) return;
    int s = (int(b >> 52) & 0x7ff) - int(E) + k; /* -52 .. 48 */
    uint64_t m = (b & 0x000ffffffffffffful) | 0x0010000000000000ul;
    uint64_t vlo = s >= 0 ? m << s : m >> (-s);
    uint64_t vhi = s > 0 ? m >> (64 - s) : 0ul;
    if ((b >> 63) != 0ul) {
        vhi = ~vhi + (vlo == 0ul ? 1ul : 0ul);
        vlo = 0ul - vlo;
    }
    uint64_t nlo = lo + vlo;
    hi += int64_t(vhi + (nlo < vlo ? 1ul : 0ul));
    lo = nlo;
}

/* The three sums into the 128-bit window, exactly (their total is below 2^89 grains of
 * 2^(E - 1075), 2^101 of the window's): the window takes them as one add when it is empty
 * (always, but where the element path ran), else it is flushed into the shared digits first.
 * The window's position is at most 2047 (k grains lower, k <= 12, for the largest E), as the
 * element path's are: x_combine writes a window as 5 digits from digit P / 32, the top one
 * signed, and a top digit past the last one (from P >= 2048) would be dropped with the sign
 * of a negative window. */
void d3_spill()
{
    if (d3_emin == 0x7ffu) return;
    uint64_t lo = 0ul;
    int64_t hi = 0l;
    int P0 = int(d3_emin) + (X_BIAS - 1075);
    int k = max(P0 - 2047, 0);
    P0 -= k;
    d3_put(d3t, d3_emin, k, lo, hi);
    d3_put(d3m, d3_emin, k, lo, hi);
    d3_put(d3l, d3_emin, k, lo, hi);
    d3t = 0.0; d3m = 0.0; d3l = 0.0;
    d3_emin = 0x7ffu;
    if (lo == 0ul && hi == 0l) return;
    if (w_lo != 0ul || w_hi != 0l) w_flush();
    w_lo = lo;
    w_hi = hi;
    w_P = P0;
}

bool f64_batch3(uvec4 x[UMAX])
{
    double bt = d3t, bm = d3m, bl = d3l;
    precise double ct = bt, cm = bm, cl = bl;
    uint kmin = ~0u, kmax = 0u;
    for (uint u = 0u; u < UU; u++) {
        for (uint k = 0u; k < 2u; k++) {
            uint lw = x[u][2u * k], hw = x[u][2u * k + 1u];
            uint sh = hw << 1u; /* bits 62..31 of |x|: the exponent field on top */
            /* zeros (either sign) wrap to the top; a nonzero value's key minus one keeps its
             * exponent field or claims one less (an exact power of two): still sound */
            kmin = min(kmin, (sh | min(lw, 1u)) - 1u);
            kmax = max(kmax, sh);
            double v = packDouble2x32(uvec2(lw, hw));
            double t = packDouble2x32(uvec2(0u, hw & 0xfffffff8u));
            double tm = packDouble2x32(uvec2(lw & 0xfffe0000u, hw));
            precise double pm = tm - t, pl = v - tm;
            ct += t;
            cm += pm;
            cl += pl;
        }
    }
    if (kmin == ~0u) { /* zeros only: nothing to add; a +0 among them is a non-negative zero */
        bool pz = false;
        for (uint u = 0u; u < UU; u++) pz = pz || x[u].y == 0u || x[u].w == 0u;
        t_xflags |= pz ? (XF_ANY | XF_NONNEGZERO) : XF_ANY;
        return true;
    }
    uint emax = kmax >> 21, eb = kmin >> 21;
    if (eb < 53u || emax == 0x7ffu) return false; /* tiny, subnormal, NaN or inf: the careful path */
    uint E = min(d3_emin, eb);
    double m = max(max(abs(bt) * pow2d(-18), abs(bm)), abs(bl) * pow2d(18));
    precise double lhs = m + pow2d(int(emax) - 1036);
    if (lhs < pow2d(min(int(E) - 1005, 1005))) {
        d3t = ct; d3m = cm; d3l = cl;
        d3_emin = E;
        t_xflags |= XF_ANY | XF_NONNEGZERO;
        return true;
    }
    if (int(emax) - 1036 >= min(int(eb) - 1005, 1005)) return false; /* cannot fit even alone */
    d3_spill();
    precise double et = 0.0, em = 0.0, el = 0.0;
    for (uint u = 0u; u < UU; u++) {
        for (uint k = 0u; k < 2u; k++) {
            uint lw = x[u][2u * k], hw = x[u][2u * k + 1u];
            double v = packDouble2x32(uvec2(lw, hw));
            double t = packDouble2x32(uvec2(0u, hw & 0xfffffff8u));
            double tm = packDouble2x32(uvec2(lw & 0xfffe0000u, hw));
            precise double pm = tm - t, pl = v - tm;
            et += t;
            em += pm;
            el += pl;
        }
    }
    d3t = et; d3m = em; d3l = el;
    d3_emin = eb;
    t_xflags |= XF_ANY | XF_NONNEGZERO;
    return true;
}

/* ---- float min/max without indices: a batch without NaN ------------------------------------
 * For float min and/or max alone (no sum, variance, index or first NaN: those take add_elem),
 * a batch of the bulk loop is folded without a branch per element: each element's order key
 * (elem_key's, by a sign mask: bits ^ (negative ? ~0 : 0x80000000)), the batch's least and
 * greatest keys, and the greatest |x| bits. A batch holding a NaN (f64: a NaN or an infinity,
 * tested on the high words alone) is not taken (nothing folded) and goes element by element,
 * where add_elem counts its NaNs and leaves them out of the keys. A taken batch holds no NaN:
 * its NaN count is zero and every key is a value's, so it folds exactly as add_elem would
 * (min/max of keys is order-free). N_NOMM (benchmarks) turns it off. */
#if TFLOAT
const bool FASTMM = (FEAT & (N_SUM | N_SQDEV | N_ARGMIN | N_ARGMAX | N_FIRSTNAN | N_BITS | N_PROD | N_NOMM)) == 0u &&
                    (FEAT & (N_MIN | N_MAX)) != 0u;
#else
const bool FASTMM = false;
#endif

bool mm_batch(uvec4 x[UMAX])
{
#if TFLOAT && TSIZE == 4
    uint kmn = ~0u, kmx = 0u, am = 0u;
    for (uint u = 0u; u < UU; u++) {
        for (uint k = 0u; k < 4u; k++) {
            uint b = x[u][k];
            uint key = b ^ (uint(int(b) >> 31) | 0x80000000u);
            if (DO_MIN) kmn = min(kmn, key);
            if (DO_MAX) kmx = max(kmx, key);
            am = max(am, b << 1);
        }
    }
    if (am > 0xff000000u) return false; /* a NaN: |x| bits above the infinity's */
    if (DO_MIN) t_kmin32 = min(t_kmin32, kmn);
    if (DO_MAX) t_kmax32 = max(t_kmax32, kmx);
    return true;
#elif TFLOAT
    uint64_t kmn = ~0ul, kmx = 0ul;
    uint am = 0u;
    for (uint u = 0u; u < UU; u++) {
        for (uint k = 0u; k < 2u; k++) {
            uint lw = x[u][2u * k], hw = x[u][2u * k + 1u];
            uint m = uint(int(hw) >> 31);
            uint64_t key = pack64(uvec2(lw ^ m, hw ^ (m | 0x80000000u)));
            if (DO_MIN) kmn = min(kmn, key);
            if (DO_MAX) kmx = max(kmx, key);
            am = max(am, hw << 1);
        }
    }
    if (am >= 0xffe00000u) return false; /* a NaN or an infinity: exponent field all ones */
    if (DO_MIN) t_kmin = min(t_kmin, kmn);
    if (DO_MAX) t_kmax = max(t_kmax, kmx);
    return true;
#else
    return false;
#endif
}

/* One batch of the bulk loop: UU whole vectors, vector u at index v + u * step. */
void add_batch(uvec4 x[UMAX], uint v, uint step)
{
    if (FAST32) {
        if (XOLD ? f32_batch(x) : f32_batch4(x)) return;
    }
    if (FAST64) {
        if (XOLD ? f64_batch(x) : f64_batch3(x)) return;
    }
    if (FASTMM) {
        if (mm_batch(x)) return;
    }
    for (uint u = 0u; u < UU; u++) add_vec(x[u], v + u * step);
}

/* ---- the workgroup's state ---------------------------------------------------------------- */
uint tid;

/* The threads' key/index pairs folded (the least key, or greatest with is_max; ties to the
 * lower index); the result is valid in thread 0. */
void fold_arg(inout uint64_t k, inout uint64_t i, uint64_t k2, uint64_t i2, bool is_max)
{
    bool take = i2 != ~0ul && (i == ~0ul || (is_max ? k2 > k : k2 < k) || (k2 == k && i2 < i));
    if (take) { k = k2; i = i2; }
}

/* fold_arg with indices, a plain min/max of keys without (DO_ARG* as with_index). */
void fold_arg_or_min(inout uint64_t k, inout uint64_t i, uint64_t k2, uint64_t i2, bool is_max)
{
    if (is_max ? DO_ARGMAX : DO_ARGMIN) fold_arg(k, i, k2, i2, is_max);
    else k = is_max ? max(k, k2) : min(k, k2);
}

/* Two-level folds of the threads' values: 16 threads fold 16 consecutive threads' values each
 * (shared memory, no barrier inside), then thread 0 folds the 16; two barriers per group of
 * fields. RED folds entry j into the folding thread's running values. */
#define WG_FOLD(STORE, INIT, RED, LOAD, FINAL)                                                   \
    STORE;                                                                                       \
    barrier();                                                                                   \
    if (tid < 16u) {                                                                             \
        INIT;                                                                                    \
        for (uint j = tid * 16u + 1u; j < tid * 16u + 16u; j++) { RED; }                         \
        LOAD;                                                                                    \
    }                                                                                            \
    barrier();                                                                                   \
    if (tid == 0u) {                                                                             \
        for (uint j = 16u; j < uint(WG); j += 16u) { RED; }                                       \
        FINAL;                                                                                   \
    }                                                                                            \
    barrier();

/* Folds the threads' states into thread 0's (t_* of thread 0 hold the workgroup's; the other
 * threads' are stale afterwards). Sums leave as three digits (s0, s1, s2). Contains barriers:
 * call in uniform control flow. */
void combine(out uint64_t d0, out uint64_t d1, out uint64_t d2)
{
    if (KEY32) {
        t_kmin = uint64_t(t_kmin32);
        t_kmax = uint64_t(t_kmax32);
    }
#if TSIZE < 8
    if (DO_ISUM) t_hi = (TSIGNED != 0 && int64_t(t_lo) < 0l) ? ~0ul : 0ul;
#endif
    uint64_t s0 = t_lo & 0xfffffffful, s1 = t_lo >> 32, s2 = t_hi;
    if (DO_ISUM) {
        WG_FOLD((sa[tid] = s0, sb[tid] = s1, sc[tid] = s2), (s0 = sa[tid * 16u], s1 = sb[tid * 16u], s2 = sc[tid * 16u]),
                (s0 += sa[j], s1 += sb[j], s2 += sc[j]), (sa[tid * 16u] = s0, sb[tid * 16u] = s1, sc[tid * 16u] = s2),
                (s0 = s0))
    }
    if (DO_NANS || DO_FIRSTNAN) {
        WG_FOLD((sa[tid] = t_nans, sb[tid] = t_first_nan), (t_nans = sa[tid * 16u], t_first_nan = sb[tid * 16u]),
                (t_nans += sa[j], t_first_nan = min(t_first_nan, sb[j])),
                (sa[tid * 16u] = t_nans, sb[tid * 16u] = t_first_nan), (t_nans = t_nans))
    }
    if (DO_MIN) {
        WG_FOLD((sa[tid] = t_kmin, sb[tid] = t_imin), (t_kmin = sa[tid * 16u], t_imin = sb[tid * 16u]),
                fold_arg_or_min(t_kmin, t_imin, sa[j], sb[j], false),
                (sa[tid * 16u] = t_kmin, sb[tid * 16u] = t_imin), (t_kmin = t_kmin))
    }
    if (DO_MAX) {
        WG_FOLD((sa[tid] = t_kmax, sb[tid] = t_imax), (t_kmax = sa[tid * 16u], t_imax = sb[tid * 16u]),
                fold_arg_or_min(t_kmax, t_imax, sa[j], sb[j], true),
                (sa[tid * 16u] = t_kmax, sb[tid * 16u] = t_imax), (t_kmax = t_kmax))
    }
    if (DO_BITS) {
        WG_FOLD((sa[tid] = t_band, sb[tid] = t_bor, sc[tid] = t_bxor),
                (t_band = sa[tid * 16u], t_bor = sb[tid * 16u], t_bxor = sc[tid * 16u]),
                (t_band &= sa[j], t_bor |= sb[j], t_bxor ^= sc[j]),
                (sa[tid * 16u] = t_band, sb[tid * 16u] = t_bor, sc[tid * 16u] = t_bxor), (t_band = t_band))
    }
    if (DO_IPROD) { /* products: a tree */
        sa[tid] = t_pmag;
        sb[tid] = uint64_t(t_pflags);
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
        t_pmag = sa[0];
        t_pflags = uint(sb[0]);
        barrier();
    }
    d0 = s0;
    d1 = s1;
    d2 = s2;
}

/* ---- the threads' windows into the workgroup's digits --------------------------------------
 * At the end of a fold every thread holds its window (exact: see the header) as a 128-bit
 * two's complement value (lo, hi) whose bit 0 sits at bit P of the fixed-point number. Adding
 * them by shared atomics, as the flushes do, makes 256 threads hit the same two or three
 * digits at once (their windows sit where the data's magnitudes are), and the atomics on one
 * address run one after another. Instead: each thread writes its value as 5 digits from digit
 * P >> 5 (four in [0, 2^32), the top one signed), the workgroup finds the least and greatest
 * first digit, and when they lie within XK - 5 digits the XK digit columns relative to the
 * least are summed by the shared-memory fold (three columns per WG_FOLD; 256 digits below
 * 2^32, or small signed top digits, cannot overflow an int64) and thread 0 adds the XK sums
 * into xs. Wider spreads (windows of wide-range data) take the atomics. Exact either way.
 * Contains barriers: call in uniform control flow; xs must be complete (no flush in flight) and
 * the thread's window is its last word. */
#define XK 9
shared int s_imin, s_imax;

int64_t x_digit(uint j, int64_t d0, int64_t d1, int64_t d2, int64_t d3, int64_t d4)
{
    return j == 0u ? d0 : j == 1u ? d1 : j == 2u ? d2 : j == 3u ? d3 : j == 4u ? d4 : 0l;
}

void x_combine(uint64_t lo, int64_t hi, int P)
{
    bool has = lo != 0ul || hi != 0l;
    int base = P >> 5;
    if (tid == 0u) {
        s_imin = 0x7fffffff;
        s_imax = -1;
    }
    barrier(); /* initialised before any thread's atomics */
    if (has) {
        atomicMin(s_imin, base);
        atomicMax(s_imax, base);
    }
    barrier(); /* every thread's first digit in */
    int imin = s_imin, imax = s_imax;
    barrier(); /* read by all before a later call re-initialises them */
    if (imax < 0) return; /* uniform: no thread holds anything */
    if (imax - imin > XK - 5) { /* uniform: a wide spread */
        if (has) {
            if (lo != 0ul) x_put_mag(lo, P, false);
            if (hi != 0l) x_put_signed(hi, P + 64);
        }
        return;
    }
    /* (lo, hi) * 2^(P & 31) as n0 + n1 2^64 + n2 2^128 (n2 signed) */
    uint sh = uint(P & 31);
    uint64_t n0 = lo << sh;
    uint64_t n1 = sh == 0u ? uint64_t(hi) : ((uint64_t(hi) << sh) | (lo >> (64u - sh)));
    int64_t n2 = sh == 0u ? (hi < 0l ? -1l : 0l) : (hi >> (64u - sh));
    int64_t d0 = int64_t(n0 & 0xfffffffful), d1 = int64_t(n0 >> 32);
    int64_t d2 = int64_t(n1 & 0xfffffffful), d3 = int64_t(n1 >> 32), d4 = n2;
    uint off = has ? uint(base - imin) : uint(XK); /* column of this thread's first digit */
    for (uint k0 = 0u; k0 < uint(XK); k0 += 3u) {
        uint64_t s0 = uint64_t(x_digit(k0 - off, d0, d1, d2, d3, d4));
        uint64_t s1 = uint64_t(x_digit(k0 + 1u - off, d0, d1, d2, d3, d4));
        uint64_t s2 = uint64_t(x_digit(k0 + 2u - off, d0, d1, d2, d3, d4));
        WG_FOLD((sa[tid] = s0, sb[tid] = s1, sc[tid] = s2), (s0 = sa[tid * 16u], s1 = sb[tid * 16u], s2 = sc[tid * 16u]),
                (s0 += sa[j], s1 += sb[j], s2 += sc[j]), (sa[tid * 16u] = s0, sb[tid * 16u] = s1, sc[tid * 16u] = s2),
                (x_add_col(imin + int(k0), s0), x_add_col(imin + int(k0) + 1, s1), x_add_col(imin + int(k0) + 2, s2)))
    }
}

/* The three sum digits as a 128-bit (lo, hi). */
void digits_to_128(uint64_t s0, uint64_t s1, uint64_t s2, out uint64_t lo, out uint64_t hi)
{
    lo = s0 + (s1 << 32);
    hi = s2 + (s1 >> 32) + (lo < s0 ? 1ul : 0ul);
}

/* Normalises xs (thread 0): every digit in [0, 2^32) but the top one (signed). */
void normalise_xs()
{
    int64_t carry = 0l;
    for (int i = 0; i < X_CHUNKS - 1; i++) {
        int64_t c = xs[i] + carry;
        int64_t low = c & 0xffffffffl;
        carry = (c - low) >> 32;
        xs[i] = low;
    }
    xs[X_CHUNKS - 1] += carry;
}

/* The finish dispatch: merges partial j into this thread's state (PART). */
void merge_partial(uint j)
{
    t_nans += part[j].nans;
    t_first_nan = min(t_first_nan, part[j].first_nan);
    uint64_t lo = t_lo + part[j].sum_lo;
    t_hi += part[j].sum_hi + (lo < t_lo ? 1ul : 0ul);
    t_lo = lo;
    if (DO_ARGMIN) fold_arg(t_kmin, t_imin, part[j].kmin, part[j].imin, false);
    else t_kmin = min(t_kmin, part[j].kmin);
    if (DO_ARGMAX) fold_arg(t_kmax, t_imax, part[j].kmax, part[j].imax, true);
    else t_kmax = max(t_kmax, part[j].kmax);
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
}

/* The fold dispatch: this workgroup's share into the accumulator (or its partial record). */
void fold_share()
{
    if (DO_XSUM) {
        if (tid < uint(X_CHUNKS)) xs[tid] = 0l;
        if (tid == 0u) xs_flags = 0u;
        barrier();
    }

    /* ---- this workgroup's share: vectors [v0, v1) ---- */
    uint g = g_wg;
    uint v0 = g * g_vpw;
    uint v1 = min(v0 + g_vpw, g_nvec);
    uint64_t endb = uint64_t(g_head) + g_n * uint64_t(TSIZE); /* bytes covered */
    /* whole vectors: [fv0, fv1) */
    uint fv0 = (g_head + 15u) >> 4;
    uint fv1 = uint(endb >> 4);
    uint a = max(v0, fv0), b = min(v1, fv1);
    /* the vectors at the segment's ends that hold bytes outside it (at most two): the first
     * before the bulk by thread 0, the last after it by the last thread, so that every thread
     * meets its elements in increasing index order (the first occurrence of a key wins) */
    uint hv = g_head >> 4, lv = uint((endb - 1ul) >> 4);
    bool hp = hv < fv0 || hv >= fv1;                     /* the first vector is partial */
    bool lp = (lv < fv0 || lv >= fv1) && !(hp && lv == hv); /* the last is, and is another one */
    if (GRID) {
        /* grid-stride: every workgroup of the dispatch sweeps the segment's whole vectors
         * together (thread t of workgroup g: vectors fv0 + g * WG + t, then every
         * G * WG), so that the threads resident at any moment read one contiguous window of
         * the buffer; each thread still meets its vectors in increasing order, the first
         * partial vector first (workgroup 0's thread 0) and the last one last */
        uint G = g_groups, stride = G * uint(WG);
        if (hp && g == 0u && tid == 0u) add_edge_vec(hv, endb);
        if (BLOCK) {
            /* the loop ends at the first block this thread does not fill; every later block
             * starts past fv1 (blocks are UU * WG vectors, G * UU * WG apart), so the tail is
             * the rest of that one block, still in increasing order */
            uint v = fv0 + g * (UU * uint(WG)) + tid;
            for (; v + (UU - 1u) * uint(WG) < fv1; v += UU * stride) {
                uvec4 x[UMAX];
                for (uint u = 0u; u < UU; u++) x[u] = inv[v + u * uint(WG)];
                add_batch(x, v, uint(WG));
            }
            for (; v < fv1; v += uint(WG)) add_vec(inv[v], v);
        } else {
            uint v = fv0 + g * uint(WG) + tid;
            for (; v + (UU - 1u) * stride < fv1; v += UU * stride) {
                uvec4 x[UMAX];
                for (uint u = 0u; u < UU; u++) x[u] = inv[v + u * stride];
                add_batch(x, v, stride);
            }
            for (; v < fv1; v += stride) add_vec(inv[v], v);
        }
        if (lp && g == G - 1u && tid == uint(WG - 1)) add_edge_vec(lv, endb);
    } else {
        if (hp && hv >= v0 && hv < v1 && tid == 0u) add_edge_vec(hv, endb);
        if (a < b) {
            uint v = a + tid;
            for (; v + (UU - 1u) * uint(WG) < b; v += UU * uint(WG)) {
                uvec4 x[UMAX];
                for (uint u = 0u; u < UU; u++) x[u] = inv[v + u * uint(WG)];
                add_batch(x, v, uint(WG));
            }
            for (; v < b; v += uint(WG)) add_vec(inv[v], v);
        }
        if (lp && lv >= v0 && lv < v1 && tid == uint(WG - 1)) add_edge_vec(lv, endb);
    }

    /* ---- the workgroup's state into the accumulator (and its partial record) ---- */
    if (DO_XSUM) {
        if (XF_ON) x_combine(uint64_t(f_acc), f_acc < 0l ? -1l : 0l, f_P);
        if (FAST32) {
            if (!XOLD) { /* the four running doubles' sum: exact (see f32_batch4) */
                precise double s01 = f4a + f4b, s23 = f4c + f4d;
                a1 = s01 + s23;
            }
            /* a1 = +-m 2^(e - 1075), normal or zero (see f32_batch) */
            uint64_t b = doubleBitsToUint64(a1);
            bool nz = (b << 1) != 0ul;
            uint64_t m = (b & 0x000ffffffffffffful) | 0x0010000000000000ul;
            bool neg = (b >> 63) != 0ul;
            int e = int(b >> 52) & 0x7ff;
            x_combine(nz ? (neg ? 0ul - m : m) : 0ul, nz && neg ? -1l : 0l, e + (X_BIAS - 1075));
        }
        if (FAST64) {
            if (!XOLD) d3_spill(); /* the three sums into the window, exactly */
        }
        if (XW_ON) x_combine(w_lo, w_hi, w_P);
        atomicOr(xs_flags, t_xflags);
    }
    uint64_t s0, s1, s2;
    combine(s0, s1, s2);
    if (DO_XSUM) {
        /* every thread's flushes into xs (shared atomics), x_combine's column sums and the
         * xs_flags are done before the digits are read (combine() holds no barrier when the
         * exact sum is the only field: a float sum alone, an integer variance's pass). One
         * carry round, all digits at once (thread c: the low 32 bits of digit c plus the carry
         * out of digit c - 1; the top digit whole), instead of thread 0's 68 dependent steps:
         * the same value, each digit below 2^33 in magnitude (see the header's bound) */
        barrier();
        if (tid < uint(X_CHUNKS)) {
            int64_t v = xs[tid];
            int64_t d = tid == uint(X_CHUNKS - 1) ? v : (v & 0xffffffffl);
            if (tid > 0u) {
                int64_t pv = xs[tid - 1u];
                d += (pv - (pv & 0xffffffffl)) >> 32;
            }
            if (d != 0l) atomicAdd(acc[g_slot].digit[tid], d);
        }
        if (tid == 0u && xs_flags != 0u) atomicOr(acc[g_slot].xflags, xs_flags);
    }
    if (tid == 0u) {
        if (PART != 0u) {
            uint j = g_part0 + g;
            uint64_t lo, hi;
            digits_to_128(s0, s1, s2, lo, hi);
            part[j].nans = t_nans;
            part[j].sum_lo = lo;
            part[j].sum_hi = hi;
            part[j].kmin = t_kmin;
            part[j].kmax = t_kmax;
            part[j].imin = t_imin;
            part[j].imax = t_imax;
            part[j].first_nan = t_first_nan;
            part[j].band = t_band;
            part[j].bor = t_bor;
            part[j].bxor = t_bxor;
            part[j].pmag = t_pmag;
            part[j].pflags = t_pflags;
        } else {
            if (DO_ISUM) {
                if (s0 != 0ul) atomicAdd(acc[g_slot].s0, s0);
                if (s1 != 0ul) atomicAdd(acc[g_slot].s1, s1);
                if (s2 != 0ul) atomicAdd(acc[g_slot].s2, s2);
            }
            if (DO_NANS && t_nans != 0ul) atomicAdd(acc[g_slot].nans, t_nans);
            if (DO_FIRSTNAN && t_first_nan != ~0ul) atomicMax(acc[g_slot].nfirst, ~t_first_nan);
            if (DO_MIN) {
                if (PACKMIN) {
                    if (t_imin != ~0ul) atomicMax(acc[g_slot].nkmin, ~((t_kmin << 32) | (t_imin & 0xfffffffful)));
                } else {
                    atomicMax(acc[g_slot].nkmin, ~t_kmin);
                }
            }
            if (DO_MAX) {
                if (PACKMAX) {
                    if (t_imax != ~0ul) atomicMax(acc[g_slot].kmax, (t_kmax << 32) | (~t_imax & 0xfffffffful));
                } else {
                    atomicMax(acc[g_slot].kmax, t_kmax);
                }
            }
            if (DO_BITS) {
                atomicOr(acc[g_slot].nband, ~t_band);
                if (t_bor != 0ul) atomicOr(acc[g_slot].bor, t_bor);
                if (t_bxor != 0ul) atomicXor(acc[g_slot].bxor, t_bxor);
            }
        }
    }
}

/* The finish reads each accumulator field and zeroes it in one atomic exchange: after a
 * pipeline barrier (the finish dispatch) a plain load and store would do, but in the fold's last
 * workgroup (fold_ticket) the fields are read where the other workgroups' atomics were made
 * (an atomic is performed at the device's point of coherence, never in a workgroup's cache) */
#define ACC_TAKE(F) atomicExchange(acc[g_slot].F, 0ul)

/* The finish (the finish dispatch, one workgroup, after a pipeline barrier; or the fold's last
 * workgroup, see fold_ticket): every fold workgroup's atomics and partial records are complete
 * and visible: the call's record from the accumulator and the partials; the accumulator zeroed
 * for the next call (the barrier after the dispatch orders that before the next call's
 * atomics). The thread state is the initial one where partial records are merged. */
void finish()
{
    if (PART != 0u) {
        for (uint j = tid; j < g_total; j += uint(WG)) merge_partial(g_part0 + j);
        if (KEY32) { /* combine() takes the 32-bit keys */
            t_kmin32 = uint(t_kmin);
            t_kmax32 = uint(t_kmax);
        }
    }
    uint64_t r0 = 0ul, r1 = 0ul, r2 = 0ul;
    if (PART != 0u) {
        /* partial sums are 128-bit already: fold them as digits directly */
        sa[tid] = t_lo & 0xfffffffful;
        sb[tid] = t_lo >> 32;
        sc[tid] = t_hi;
        barrier();
        for (uint s = WG / 2u; s > 0u; s >>= 1) {
            if (tid < s) { sa[tid] += sa[tid + s]; sb[tid] += sb[tid + s]; sc[tid] += sc[tid + s]; }
            barrier();
        }
        r0 = sa[0];
        r1 = sb[0];
        r2 = sc[0];
        barrier();
        t_lo = 0ul;
        t_hi = 0ul;
        uint64_t d0, d1, d2;
        combine(d0, d1, d2); /* the other fields; its sums are zero */
    }
    if (DO_XSUM) {
        if (tid < uint(X_CHUNKS)) {
            xs[tid] = atomicExchange(acc[g_slot].digit[tid], 0l);
        }
        barrier(); /* xs complete before thread 0 normalises it */
        if (tid == 0u) normalise_xs();
        barrier(); /* normalised before every thread reads its digit */
        if (tid < uint(X_CHUNKS)) rec[g_slot].chunk[tid] = xs[tid];
    }
    if (tid == 0u) {
        uint64_t kmin = ~0ul, kmax = 0ul, imin = ~0ul, imax = ~0ul;
        if (PART != 0u) {
            kmin = t_kmin; kmax = t_kmax; imin = t_imin; imax = t_imax;
            rec[g_slot].nans = t_nans;
            rec[g_slot].first_nan = t_first_nan;
            rec[g_slot].band = t_band;
            rec[g_slot].bor = t_bor;
            rec[g_slot].bxor = t_bxor;
            rec[g_slot].pmag = t_pmag;
            rec[g_slot].pflags = t_pflags;
        } else {
            r0 = ACC_TAKE(s0);
            r1 = ACC_TAKE(s1);
            r2 = ACC_TAKE(s2);
            rec[g_slot].nans = ACC_TAKE(nans);
            rec[g_slot].first_nan = ~ACC_TAKE(nfirst);
            uint64_t pk = ~ACC_TAKE(nkmin), px = ACC_TAKE(kmax);
            if (PACKMIN) {
                if (pk != ~0ul) { kmin = pk >> 32; imin = pk & 0xfffffffful; }
            } else {
                kmin = pk;
            }
            if (PACKMAX) {
                if (px != 0ul) { kmax = px >> 32; imax = ~px & 0xfffffffful; }
            } else {
                kmax = px;
            }
            rec[g_slot].band = ~ACC_TAKE(nband);
            rec[g_slot].bor = ACC_TAKE(bor);
            rec[g_slot].bxor = ACC_TAKE(bxor);
            rec[g_slot].pmag = 1ul;
            rec[g_slot].pflags = 0u;
        }
        if (!DO_ARGMIN) imin = 0ul; /* min/max alone: no index; the key is a value's */
        if (!DO_ARGMAX) imax = 0ul;
        if (KEY32) {
            if (imin != ~0ul) kmin = key64_of(uint(kmin));
            if (imax != ~0ul) kmax = key64_of(uint(kmax));
        }
        rec[g_slot].kmin = kmin;
        rec[g_slot].kmax = kmax;
        rec[g_slot].imin = imin;
        rec[g_slot].imax = imax;
        uint64_t lo, hi;
        digits_to_128(r0, r1, r2, lo, hi);
        rec[g_slot].sum_lo = lo;
        rec[g_slot].sum_hi = hi;
        rec[g_slot].xflags = atomicExchange(acc[g_slot].xflags, 0u);
        rec[g_slot].pad0 = 0u;
        rec[g_slot].pad1 = 0u;
    }
}

/* The fold's end with TICKET: the workgroup takes a ticket after its atomics into the
 * accumulator, and the one that takes the last (g_total - 1: every fold workgroup of the call,
 * every segment's dispatch) finishes the call, so no finish dispatch and no pipeline barrier
 * before it. Order: every invocation that made accumulator atomics makes a device-scope fence
 * (memoryBarrierBuffer: acquire-release on buffer memory) and the workgroup barrier follows;
 * then invocation 0 takes the ticket (a device-scope atomic). So every atomic of a workgroup
 * precedes its ticket. The last workgroup's invocation 0 sees every other ticket, hence (its
 * fence after the ticket, then the barrier and every invocation's fence) every workgroup's
 * atomics precede the finish's reads, which are atomic exchanges themselves (ACC_TAKE). The
 * folds are order-free, so which workgroup comes last changes no bit. The ticket is zeroed by
 * the finish; the barrier after the call orders that before the next call's tickets. */
shared uint s_last;

void fold_ticket()
{
    memoryBarrierBuffer(); /* this invocation's accumulator atomics before the ticket */
    barrier();
    if (tid == 0u) {
        memoryBarrierBuffer();
        uint t = atomicAdd(acc[g_slot].ticket, 1u);
        s_last = t == g_total - 1u ? 1u : 0u;
        memoryBarrierBuffer(); /* every workgroup's atomics before what follows */
    }
    barrier();
    if (s_last == 0u) return; /* uniform */
    memoryBarrierBuffer();
    if (tid == 0u) atomicExchange(acc[g_slot].ticket, 0u);
    finish();
}

void main()
{
    tid = gl_LocalInvocationID.x;
    if (!ONLY_FOLD && !ONLY_FIN && pc.fin >= 2u) { /* segmented: one workgroup per segment, the whole of it */
        uint j = gl_WorkGroupID.x;
        g_slot = j;
        g_n = seg[j].n;
        if (g_n == 0ul) return; /* uniform in the workgroup; the host knows empty segments */
        g_head = uint(seg[j].head);
        g_gbase = 0ul;
        g_mean = seg[j].mean_bits;
        g_nvec = uint((uint64_t(g_head) + g_n * uint64_t(TSIZE) + 15ul) >> 4);
        g_vpw = g_nvec;
        g_part0 = j;
        g_total = 1u;
        g_wg = 0u;
        g_groups = 1u;
    } else {
        g_n = pc.n;
        g_gbase = pc.gbase;
        g_mean = pc.mean_bits;
        g_head = pc.head;
        g_vpw = pc.vec_per_wg;
        g_part0 = pc.part0;
        g_nvec = pc.nvec;
        g_total = pc.total_wg;
        g_wg = gl_WorkGroupID.x;
        g_groups = gl_NumWorkGroups.x;
    }
    if (ONLY_FIN) finish();
    else if (ONLY_FOLD) {
        fold_share();
        if (TICKET) fold_ticket();
    }
    else if (pc.fin == 1u || pc.fin == 3u) finish();
    else fold_share();
}
