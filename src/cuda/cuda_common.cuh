/* Shared pieces of the CUDA kernels: per-type traits, order keys, loads of 16-byte vectors and
 * the exact float machinery (two-term expansions that spill into the core's superaccumulator,
 * core/exact_sum.h, whose layout the device shares with the host). */
#ifndef TALLY_CUDA_COMMON_CUH
#define TALLY_CUDA_COMMON_CUH

#include <cstdint>
#include <cuda_runtime.h>
#include "tally.h"
#include "core/exact_sum.h"

namespace tcu {

constexpr int kThreads = 256; /* every kernel runs 256-thread blocks (8 warps) */
constexpr int kWarps = kThreads / 32;

/* Per-type facts. Key: the unsigned order key (32 bits for types up to 4 bytes, else 64). */
template <typename T> struct Traits;
#define TCU_TRAITS(T, TT, KEY, SIGNED, FLOAT)                                                  \
    template <> struct Traits<T> {                                                             \
        using Key = KEY;                                                                       \
        static constexpr tally_type type = TT;                                                 \
        static constexpr bool is_signed = SIGNED;                                              \
        static constexpr bool is_float = FLOAT;                                                \
        static constexpr int vec = 16 / (int)sizeof(T); /* elements in one 16-byte vector */   \
    };
TCU_TRAITS(int8_t, TALLY_I8, uint32_t, true, false)
TCU_TRAITS(uint8_t, TALLY_U8, uint32_t, false, false)
TCU_TRAITS(int16_t, TALLY_I16, uint32_t, true, false)
TCU_TRAITS(uint16_t, TALLY_U16, uint32_t, false, false)
TCU_TRAITS(int32_t, TALLY_I32, uint32_t, true, false)
TCU_TRAITS(uint32_t, TALLY_U32, uint32_t, false, false)
TCU_TRAITS(int64_t, TALLY_I64, uint64_t, true, false)
TCU_TRAITS(uint64_t, TALLY_U64, uint64_t, false, false)
TCU_TRAITS(float, TALLY_F32, uint32_t, true, true)
TCU_TRAITS(double, TALLY_F64, uint64_t, true, true)
#undef TCU_TRAITS

/* Order keys: unsigned integers ordered like the values; floats: -inf < .. < -0 < +0 < .. <
 * +inf (NaN is mapped by the callers). */
__device__ __forceinline__ uint32_t key_of(int8_t v) { return (uint32_t)(int32_t)v ^ 0x80000000u; }
__device__ __forceinline__ uint32_t key_of(int16_t v) { return (uint32_t)(int32_t)v ^ 0x80000000u; }
__device__ __forceinline__ uint32_t key_of(int32_t v) { return (uint32_t)v ^ 0x80000000u; }
__device__ __forceinline__ uint32_t key_of(uint8_t v) { return v; }
__device__ __forceinline__ uint32_t key_of(uint16_t v) { return v; }
__device__ __forceinline__ uint32_t key_of(uint32_t v) { return v; }
__device__ __forceinline__ uint64_t key_of(int64_t v) { return (uint64_t)v ^ (1ull << 63); }
__device__ __forceinline__ uint64_t key_of(uint64_t v) { return v; }
__device__ __forceinline__ uint32_t key_of(float v)
{
    uint32_t b = __float_as_uint(v);
    return (b >> 31) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ uint64_t key_of(double v)
{
    uint64_t b = (uint64_t)__double_as_longlong(v);
    return (b >> 63) ? ~b : (b | (1ull << 63));
}

/* A key back to the result value (the widened input value), as tally_result's union bits. */
template <typename T> __device__ __forceinline__ uint64_t key_to_result_bits(typename Traits<T>::Key k)
{
    if constexpr (Traits<T>::is_float) {
        if constexpr (sizeof(T) == 4) {
            uint32_t b = (k >> 31) ? (k & 0x7fffffffu) : ~k;
            return (uint64_t)__double_as_longlong((double)__uint_as_float(b));
        } else {
            return (k >> 63) ? (k & ~(1ull << 63)) : ~k;
        }
    } else if constexpr (Traits<T>::is_signed) {
        if constexpr (sizeof(T) <= 4) return (uint64_t)(int64_t)(int32_t)(k ^ 0x80000000u);
        else return k ^ (1ull << 63);
    } else {
        return (uint64_t)k;
    }
}

template <typename T> __device__ __forceinline__ bool is_nan(T v)
{
    if constexpr (Traits<T>::is_float) return v != v;
    else return false;
}

/* 16-byte vector of T. */
template <typename T> struct alignas(16) Vec {
    T v[Traits<T>::vec];
};

template <typename T> __device__ __forceinline__ Vec<T> load_vec(const Vec<T> *p)
{
    uint4 raw = __ldg(reinterpret_cast<const uint4 *>(p));
    Vec<T> r;
    memcpy(&r, &raw, 16);
    return r;
}

/* ---- exact float sums ------------------------------------------------------------------------
 * A block's superaccumulator lives in shared memory as TALLY_EXACT_CHUNKS int64 digits with the
 * layout of core/exact_sum.h; threads add to it with shared-memory atomics. Inline: callers on
 * rare paths keep it out of the kernels' main code themselves (reduce_kernel.cuh's
 * xcombine_rare, slow_batch_out), since a kernel's code size is paid at every launch. */
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

/* ---- programmatic dependent launch (sm_90+) ------------------------------------------------
 * A kernel launched with the PDL attribute may start while the kernel before it in the stream
 * is still finishing. pdl_wait() returns once that kernel has completed and its writes are
 * visible: every kernel calls it before its first access to global memory, so the overlap
 * covers only the launch and the block set-up. pdl_trigger() lets the next kernel start its
 * set-up (it takes effect once every block of this grid has called it or exited). Both are
 * no-ops when the launch had no PDL attribute. */
__device__ __forceinline__ void pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_trigger()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Whether kernel was compiled for sm_90+ (its PTX target), so that its PDL wait and bulk copies
 * are really there (a build for older GPUs compiles them out, and may still run on a Hopper). */
template <typename... K> bool built_for_sm90(void (*kernel)(K...))
{
    cudaFuncAttributes a;
    if (cudaFuncGetAttributes(&a, kernel) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return a.ptxVersion >= 90;
}

/* Launches kernel<<<grid, kThreads, smem, stream>>>(args...), with the PDL attribute if pdl. */
template <typename... K, typename... A>
cudaError_t launch_kernel(void (*kernel)(K...), unsigned grid, size_t smem, cudaStream_t stream,
                          bool pdl, A &&...args)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, static_cast<A &&>(args)...);
}

/* ---- bulk copies into shared memory (sm_90+): the reduce's staging ring ------------------- */
__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

/* A bulk load's first half: the proxy fence, and the barrier told to expect bytes. */
__device__ __forceinline__ void bulk_expect(uint64_t *bar, unsigned bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes)
                 : "memory");
#endif
}

/* One thread: copies bytes (a multiple of 16, both addresses 16-byte aligned) from global src
 * to shared dst; the barrier's current phase completes when they have landed. Shared memory
 * that the block read before (generic proxy) is ordered before the copy's writes (async proxy)
 * by the caller's __syncthreads() and the proxy fence here. */
__device__ __forceinline__ void bulk_load(void *dst, const void *src, unsigned bytes, uint64_t *bar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    bulk_expect(bar, bytes);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
#endif
}

/* An L2 policy that evicts first what is loaded under it: for data read once, so that a long
 * stream does not push out of L2 what the kernel reads at its end (its own code and the blocks'
 * partials, which otherwise come back from memory: exact f64 sum 2^26 on the H200, the last
 * block's partials read in 1.82 us against 1.41 at 2^24). */
__device__ __forceinline__ uint64_t l2_evict_first_policy()
{
    uint64_t pol = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
#endif
    return pol;
}

/* bulk_load under an L2 policy (l2_evict_first_policy). */
__device__ __forceinline__ void bulk_load_hint(void *dst, const void *src, unsigned bytes, uint64_t *bar,
                                               uint64_t pol)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    bulk_expect(bar, bytes);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
                     smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar)), "l"(pol)
                 : "memory");
#endif
}

/* Waits until the barrier's phase with the given parity has completed. */
__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t done = 0;
    while (!done) {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(smem_u32(bar)), "r"(parity)
                     : "memory");
    }
#endif
}

} // namespace tcu

#endif
