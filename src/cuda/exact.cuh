/* The device side of the exact float sums: error-free transformations, a thread's two-term
 * expansion, and the block's superaccumulator in shared memory (core/exact_sum.h's layout,
 * shared with the host) with its rounding. */
#ifndef TALLY_CUDA_EXACT_CUH
#define TALLY_CUDA_EXACT_CUH

#include <cstdint>
#include <cuda_runtime.h>
#include "tally.h"
#include "core/exact_sum.h"

namespace tcu {

/* ---- exact float sums ------------------------------------------------------------------------
 * A block's superaccumulator lives in shared memory as TALLY_EXACT_CHUNKS int64 digits with the
 * layout of core/exact_sum.h; threads add to it with shared-memory atomics. Inline: callers on
 * rare paths keep it out of the kernels' main code themselves (reduce_merge.cuh's
 * xcombine_rare, reduce_worker.cuh's slow_batch_out), since a kernel's code size is paid at
 * every launch. */
__device__ __forceinline__ void sacc_add_finite(unsigned long long *acc, double x)
{
    uint64_t b = (uint64_t)__double_as_longlong(x);
    uint64_t e = (b >> 52) & 0x7ff;
    uint64_t m = b & 0x000fffffffffffffull;
    if ((b << 1) == 0) return;
    if (e) m |= 0x0010000000000000ull; else e = 1;
    int p = (int)e - 1075 + TALLY_EXACT_BIAS;
    int i = p >> 5, s = p & 31;
    uint64_t hi = m >> (32 - s);
    uint64_t c0 = (m << s) & 0xffffffffu, c1 = hi & 0xffffffffu, c2 = hi >> 32;
    if (b >> 63) { c0 = 0 - c0; c1 = 0 - c1; c2 = 0 - c2; }
    if (c0) atomicAdd(&acc[i], c0);
    if (c1) atomicAdd(&acc[i + 1], c1);
    if (c2) atomicAdd(&acc[i + 2], c2);
}

/* Flags of one value as tally_exact_add would set them. */
__device__ __forceinline__ uint32_t exact_flags_of(double x)
{
    uint64_t b = (uint64_t)__double_as_longlong(x);
    if (((b >> 52) & 0x7ff) == 0x7ff) {
        uint32_t f = TALLY_EXACT_F_ANY | TALLY_EXACT_F_NONNEGZERO;
        if (b & 0x000fffffffffffffull) return f | TALLY_EXACT_F_NAN;
        return f | ((b >> 63) ? TALLY_EXACT_F_NINF : TALLY_EXACT_F_PINF);
    }
    return b == 0x8000000000000000ull ? (uint32_t)TALLY_EXACT_F_ANY
                                      : (uint32_t)(TALLY_EXACT_F_ANY | TALLY_EXACT_F_NONNEGZERO);
}

/* Error-free sum: s + e == a + b exactly (round to nearest, no FMA involved). */
__device__ __forceinline__ double two_sum(double a, double b, double &e)
{
    double s = __dadd_rn(a, b);
    double bp = __dsub_rn(s, a);
    double ap = __dsub_rn(s, bp);
    e = __dadd_rn(__dsub_rn(a, ap), __dsub_rn(b, bp));
    return s;
}

/* Fast2Sum: the same when |a| >= |b| (three ops instead of six). */
__device__ __forceinline__ double fast_two_sum(double a, double b, double &e)
{
    double s = __dadd_rn(a, b);
    e = __dsub_rn(b, __dsub_rn(s, a));
    return s;
}

/* Adds x (finite) to the shared superaccumulator on behalf of the whole warp: every lane must
 * call it. Lanes whose digits fall in the same 4-digit window combine in registers first, so a
 * warp does 4 shared atomics instead of 96 (the lanes of a warp mostly hold sums of similar
 * size); the rest add on their own. */
__device__ __forceinline__ void sacc_add_warp(unsigned long long *acc, double x)
{
    uint64_t b = (uint64_t)__double_as_longlong(x);
    bool zero = (b << 1) == 0;
    uint64_t e = (b >> 52) & 0x7ff;
    uint64_t m = b & 0x000fffffffffffffull;
    if (e) m |= 0x0010000000000000ull; else e = 1;
    int p = (int)e - 1075 + TALLY_EXACT_BIAS;
    unsigned i = zero ? 0xffffffffu : (unsigned)(p >> 5);
    int s = p & 31;
    uint64_t hi = m >> (32 - s);
    long long c0 = (long long)((m << s) & 0xffffffffu), c1 = (long long)(hi & 0xffffffffu),
              c2 = (long long)(hi >> 32);
    if (b >> 63) { c0 = -c0; c1 = -c1; c2 = -c2; }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    unsigned base = __reduce_min_sync(0xffffffffu, i);
#else
    unsigned base = i;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) base = min(base, __shfl_xor_sync(0xffffffffu, base, o));
#endif
    if (base == 0xffffffffu) return; /* every lane holds a zero */
    long long w0 = 0, w1 = 0, w2 = 0, w3 = 0;
    if (i == base) { w0 = c0; w1 = c1; w2 = c2; }
    else if (i == base + 1) { w1 = c0; w2 = c1; w3 = c2; }
    else if (i != 0xffffffffu) {
        atomicAdd(&acc[i], (unsigned long long)c0);
        atomicAdd(&acc[i + 1], (unsigned long long)c1);
        atomicAdd(&acc[i + 2], (unsigned long long)c2);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        w0 += __shfl_xor_sync(0xffffffffu, w0, o);
        w1 += __shfl_xor_sync(0xffffffffu, w1, o);
        w2 += __shfl_xor_sync(0xffffffffu, w2, o);
        w3 += __shfl_xor_sync(0xffffffffu, w3, o);
    }
    if ((threadIdx.x & 31) == 0) {
        if (w0) atomicAdd(&acc[base], (unsigned long long)w0);
        if (w1) atomicAdd(&acc[base + 1], (unsigned long long)w1);
        if (w2) atomicAdd(&acc[base + 2], (unsigned long long)w2);
        if (w3) atomicAdd(&acc[base + 3], (unsigned long long)w3);
    }
}

/* A thread's exact running sum: the value is a1 + a2 + (whatever was spilled into the block's
 * superaccumulator). a1 starts at -0.0 so that a sum of only -0.0 stays -0.0. */
struct Expansion {
    double a1, a2;
    __device__ __forceinline__ void init() { a1 = -0.0; a2 = -0.0; }
    /* The careful add: never loses a bit, whatever x is (x finite). */
    __device__ __forceinline__ void add_slow(double x, unsigned long long *acc)
    {
        double e;
        double s = two_sum(a1, x, e);
        if (!isfinite(s)) { sacc_add_finite(acc, x); return; } /* the sum left the f64 range */
        a1 = s;
        double e2;
        a2 = two_sum(a2, e, e2);
        if (e2 != 0.0) sacc_add_finite(acc, e2);
    }
    /* Puts the expansion into the superaccumulator (all lanes of the warp call it); returns
     * NONNEGZERO if a1 is not -0. */
    __device__ __forceinline__ uint32_t flush(unsigned long long *acc)
    {
        sacc_add_warp(acc, a1);
        sacc_add_warp(acc, a2);
        return (__double_as_longlong(a1) != (long long)0x8000000000000000ull)
                   ? (uint32_t)TALLY_EXACT_F_NONNEGZERO : 0u;
    }
};

/* Rounds the superaccumulator held in shared memory (digits as in core/exact_sum.h; changed
 * in place) exactly as tally_exact_round would, with the flags f. One thread; shared memory
 * instead of a local tally_exact keeps it to a few microseconds. */
static __device__ __noinline__ double sacc_round(unsigned long long *acc, uint32_t f)
{
    if ((f & TALLY_EXACT_F_NAN) || ((f & TALLY_EXACT_F_PINF) && (f & TALLY_EXACT_F_NINF)))
        return __longlong_as_double(0x7ff8000000000000ll);
    if (f & TALLY_EXACT_F_PINF) return __longlong_as_double(0x7ff0000000000000ll);
    if (f & TALLY_EXACT_F_NINF) return __longlong_as_double((long long)0xfff0000000000000ull);
    constexpr int N = TALLY_EXACT_CHUNKS;
    long long carry = 0;
#pragma unroll 4
    for (int i = 0; i < N - 1; i++) {
        long long c = (long long)acc[i] + carry;
        long long low = c & 0xffffffffll;
        carry = (c - low) >> 32;
        acc[i] = (unsigned long long)low;
    }
    acc[N - 1] = (unsigned long long)((long long)acc[N - 1] + carry);
    uint64_t sign = 0;
    if ((long long)acc[N - 1] < 0) {
        sign = 1;
        carry = 0;
#pragma unroll 4
        for (int i = 0; i < N - 1; i++) {
            long long c = -(long long)acc[i] + carry;
            long long low = c & 0xffffffffll;
            carry = (c - low) >> 32;
            acc[i] = (unsigned long long)low;
        }
        acc[N - 1] = (unsigned long long)(-(long long)acc[N - 1] + carry);
    }
    int top = N - 1;
    while (top >= 0 && acc[top] == 0) top--;
    if (top < 0) {
        bool negzero = (f & TALLY_EXACT_F_ANY) && !(f & TALLY_EXACT_F_NONNEGZERO);
        return __longlong_as_double(negzero ? (long long)0x8000000000000000ull : 0ll);
    }
    auto getbits = [&](int pos, int n) -> uint64_t {
        int i = pos >> 5, s = pos & 31;
        uint64_t w = acc[i] >> s;
        if (i + 1 < N) w |= acc[i + 1] << (32 - s);
        return w & ((1ull << n) - 1);
    };
    int msb = top * 32 + 63 - __clzll((long long)acc[top]);
    int r = msb - 52;
    if (r < TALLY_EXACT_BIAS - 1074) r = TALLY_EXACT_BIAS - 1074;
    int nk = msb - r + 1;
    uint64_t mant = nk > 32 ? (getbits(r, 32) | (getbits(r + 32, nk - 32) << 32)) : getbits(r, nk);
    uint64_t half = getbits(r - 1, 1);
    bool sticky = false;
    {
        int below = r - 1, wi = below >> 5;
        for (int i = 0; i < wi && !sticky; i++) sticky = acc[i] != 0;
        if (!sticky && (below & 31)) sticky = (acc[wi] & ((1ull << (below & 31)) - 1)) != 0;
    }
    if (half && (sticky || (mant & 1))) {
        mant++;
        if (mant >> 53) { mant >>= 1; r++; }
    }
    uint64_t bits;
    if (mant < (1ull << 52)) {
        bits = mant;
    } else {
        long long be = (long long)r - TALLY_EXACT_BIAS + 1075;
        if (be >= 2047) return __longlong_as_double((long long)(sign ? 0xfff0000000000000ull : 0x7ff0000000000000ull));
        bits = ((uint64_t)be << 52) | (mant & 0x000fffffffffffffull);
    }
    return __longlong_as_double((long long)(bits | (sign << 63)));
}

/* Normalises a shared superaccumulator partially and in parallel (one carry round), so that
 * each digit is below 2^33 in magnitude: enough to add thousands of them without overflow. */
__device__ __forceinline__ int64_t sacc_split_digit(const unsigned long long *acc, int c)
{
    int64_t v = (int64_t)acc[c];
    int64_t low = (c == TALLY_EXACT_CHUNKS - 1) ? v : (int64_t)((uint64_t)v & 0xffffffffu);
    int64_t carry = 0;
    if (c > 0) {
        int64_t pv = (int64_t)acc[c - 1];
        carry = (pv - (int64_t)((uint64_t)pv & 0xffffffffu)) / ((int64_t)1 << 32);
    }
    return low + carry;
}

} // namespace tcu

#endif
