/* tally_cuda.cuh: warp and block reductions and scans for people writing their own CUDA
 * kernels (header-only, C++17, no library needed).
 *
 *   tally::cuda::warp_reduce<tally::cuda::Sum>(x)      every lane of the (full) warp gets the
 *                                                       sum of the 32 lanes' x
 *   tally::cuda::block_reduce<tally::cuda::Max>(x, s)   every thread of the block gets the max;
 *                                                       s: __shared__ T s[32]
 *   warp_inclusive_scan / warp_exclusive_scan / block_inclusive_scan / block_exclusive_scan
 *
 * Ops: Sum, Prod, Min, Max, And, Or, Xor (And/Or/Xor on integers only). Integer sums and
 * products wrap in T, as in C. 32-bit (and narrower) integer Sum/Min/Max/And/Or/Xor use one
 * redux.sync instruction on sm_80 and newer; everything else is a 5-step shuffle butterfly.
 * Float Min/Max follow IEEE 754-2019 minimum/maximum, as tally does: a NaN propagates and
 * -0 < +0. Float Sum/Prod combine in a fixed tree, so the bits are the same every run.
 * Rules: every lane of the warp (warp_*) or every thread of the block (block_*) must make the
 * call, with blockDim.x a multiple of 32 and at most 1024; block_* contain __syncthreads(). */
#ifndef TALLY_CUDA_CUH
#define TALLY_CUDA_CUH

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <cuda_runtime.h>

namespace tally {
namespace cuda {

struct Sum {
    template <typename T> static __device__ __forceinline__ T identity() { return T(0); }
    template <typename T> static __device__ __forceinline__ T apply(T a, T b)
    {
        if constexpr (std::is_integral<T>::value)
            return (T)((typename std::make_unsigned<T>::type)a + (typename std::make_unsigned<T>::type)b);
        else return a + b;
    }
};
struct Prod {
    template <typename T> static __device__ __forceinline__ T identity() { return T(1); }
    template <typename T> static __device__ __forceinline__ T apply(T a, T b)
    {
        if constexpr (std::is_integral<T>::value)
            return (T)((typename std::make_unsigned<T>::type)a * (typename std::make_unsigned<T>::type)b);
        else return a * b;
    }
};
struct Min {
    template <typename T> static __device__ __forceinline__ T identity()
    {
        if constexpr (std::is_floating_point<T>::value) return (T)INFINITY;
        else if constexpr (std::is_signed<T>::value) return (T)((typename std::make_unsigned<T>::type)~0u >> 1);
        else return (T)~(T)0;
    }
    template <typename T> static __device__ __forceinline__ T apply(T a, T b)
    {
        if constexpr (std::is_floating_point<T>::value) {
            if (a != a) return a;
            if (b != b) return b;
            if (a < b) return a;
            if (b < a) return b;
            return signbit(a) ? a : b;
        } else {
            return b < a ? b : a;
        }
    }
};
struct Max {
    template <typename T> static __device__ __forceinline__ T identity()
    {
        if constexpr (std::is_floating_point<T>::value) return (T)-INFINITY;
        else if constexpr (std::is_signed<T>::value) return (T)~((typename std::make_unsigned<T>::type)~0u >> 1);
        else return (T)0;
    }
    template <typename T> static __device__ __forceinline__ T apply(T a, T b)
    {
        if constexpr (std::is_floating_point<T>::value) {
            if (a != a) return a;
            if (b != b) return b;
            if (a > b) return a;
            if (b > a) return b;
            return signbit(a) ? b : a;
        } else {
            return b > a ? b : a;
        }
    }
};
struct And {
    template <typename T> static __device__ __forceinline__ T identity() { return (T)~(T)0; }
    template <typename T> static __device__ __forceinline__ T apply(T a, T b) { return a & b; }
};
struct Or {
    template <typename T> static __device__ __forceinline__ T identity() { return T(0); }
    template <typename T> static __device__ __forceinline__ T apply(T a, T b) { return a | b; }
};
struct Xor {
    template <typename T> static __device__ __forceinline__ T identity() { return T(0); }
    template <typename T> static __device__ __forceinline__ T apply(T a, T b) { return a ^ b; }
};

namespace detail {
template <typename T> __device__ __forceinline__ T shfl_xor(T v, int m)
{
    static_assert(sizeof(T) <= 8, "values up to 8 bytes");
    if constexpr (sizeof(T) == 8) {
        unsigned long long b;
        memcpy(&b, &v, 8);
        b = __shfl_xor_sync(0xffffffffu, b, m);
        memcpy(&v, &b, 8);
        return v;
    } else {
        unsigned int b = 0;
        memcpy(&b, &v, sizeof(T));
        b = __shfl_xor_sync(0xffffffffu, b, m);
        memcpy(&v, &b, sizeof(T));
        return v;
    }
}
template <typename T> __device__ __forceinline__ T shfl_up(T v, int d)
{
    if constexpr (sizeof(T) == 8) {
        unsigned long long b;
        memcpy(&b, &v, 8);
        b = __shfl_up_sync(0xffffffffu, b, d);
        memcpy(&v, &b, 8);
        return v;
    } else {
        unsigned int b = 0;
        memcpy(&b, &v, sizeof(T));
        b = __shfl_up_sync(0xffffffffu, b, d);
        memcpy(&v, &b, sizeof(T));
        return v;
    }
}
template <typename T> __device__ __forceinline__ T shfl_idx(T v, int src)
{
    if constexpr (sizeof(T) == 8) {
        unsigned long long b;
        memcpy(&b, &v, 8);
        b = __shfl_sync(0xffffffffu, b, src);
        memcpy(&v, &b, 8);
        return v;
    } else {
        unsigned int b = 0;
        memcpy(&b, &v, sizeof(T));
        b = __shfl_sync(0xffffffffu, b, src);
        memcpy(&v, &b, sizeof(T));
        return v;
    }
}
} // namespace detail

namespace detail {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
template <typename Op, typename T> __host__ __device__ constexpr bool use_redux()
{
    return std::is_integral<T>::value && sizeof(T) <= 4 && !std::is_same<Op, Prod>::value;
}
/* redux.sync: one instruction. Narrow types widen (a sum wraps back on return). */
template <typename Op, typename T> __device__ __forceinline__ T redux(T x)
{
    using W = typename std::conditional<std::is_signed<T>::value, int, unsigned>::type;
    W w = (W)x;
    if constexpr (std::is_same<Op, Sum>::value) return (T)__reduce_add_sync(0xffffffffu, (unsigned)w);
    else if constexpr (std::is_same<Op, Min>::value) return (T)__reduce_min_sync(0xffffffffu, w);
    else if constexpr (std::is_same<Op, Max>::value) return (T)__reduce_max_sync(0xffffffffu, w);
    else if constexpr (std::is_same<Op, And>::value) return (T)__reduce_and_sync(0xffffffffu, (unsigned)w);
    else if constexpr (std::is_same<Op, Or>::value) return (T)__reduce_or_sync(0xffffffffu, (unsigned)w);
    else return (T)__reduce_xor_sync(0xffffffffu, (unsigned)w);
}
#else
template <typename Op, typename T> __host__ __device__ constexpr bool use_redux() { return false; }
template <typename Op, typename T> __device__ __forceinline__ T redux(T x) { return x; }
#endif
} // namespace detail

/* Reduction over the 32 lanes of a warp; every lane gets the result. */
template <typename Op, typename T> __device__ __forceinline__ T warp_reduce(T x)
{
    if constexpr (detail::use_redux<Op, T>()) {
        return detail::redux<Op>(x);
    } else {
        /* butterfly: after each step lanes l and l^m hold the same value, combined in lane order */
#pragma unroll
        for (int m = 1; m < 32; m <<= 1) {
            T o = detail::shfl_xor(x, m);
            bool lower = (threadIdx.x & m) == 0;
            x = lower ? Op::template apply<T>(x, o) : Op::template apply<T>(o, x);
        }
        return x;
    }
}

/* Inclusive scan over the lanes of a warp (lane i gets x0 op .. op xi). */
template <typename Op, typename T> __device__ __forceinline__ T warp_inclusive_scan(T x)
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        T o = detail::shfl_up(x, d);
        if (lane >= d) x = Op::template apply<T>(o, x);
    }
    return x;
}

/* Exclusive scan (lane 0 gets init, lane i gets init op x0 op .. op x(i-1)); *total, if given,
 * gets the op over all 32 lanes (without init). */
template <typename Op, typename T>
__device__ __forceinline__ T warp_exclusive_scan(T x, T init, T *total = nullptr)
{
    T inc = warp_inclusive_scan<Op>(x);
    if (total) *total = detail::shfl_idx(inc, 31);
    T ex = detail::shfl_up(inc, 1);
    const int lane = threadIdx.x & 31;
    return lane == 0 ? init : Op::template apply<T>(init, ex);
}

/* Reduction over the block; every thread gets the result. smem: 32 T of shared memory. */
template <typename Op, typename T> __device__ __forceinline__ T block_reduce(T x, T *smem)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    T w = warp_reduce<Op>(x);
    __syncthreads(); /* smem may still be read by a previous call */
    if (lane == 0) smem[warp] = w;
    __syncthreads();
    T v = lane < nw ? smem[lane] : Op::template identity<T>();
    return warp_reduce<Op>(v);
}

/* Inclusive scan over the block in thread order. smem: 32 T of shared memory. */
template <typename Op, typename T> __device__ __forceinline__ T block_inclusive_scan(T x, T *smem)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T inc = warp_inclusive_scan<Op>(x);
    __syncthreads();
    if (lane == 31) smem[warp] = inc;
    __syncthreads();
    T pre = Op::template identity<T>();
    bool any = false;
    for (int w = 0; w < warp; w++) {
        pre = any ? Op::template apply<T>(pre, smem[w]) : smem[w];
        any = true;
    }
    return any ? Op::template apply<T>(pre, inc) : inc;
}

/* Exclusive scan over the block: thread 0 gets init. smem: 32 T of shared memory. */
template <typename Op, typename T>
__device__ __forceinline__ T block_exclusive_scan(T x, T init, T *smem)
{
    T inc = block_inclusive_scan<Op>(x, smem);
    /* the previous thread's inclusive value: within the warp by shuffle, across by smem */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T prev = detail::shfl_up(inc, 1);
    __syncthreads();
    if (lane == 31) smem[warp] = inc;
    __syncthreads();
    if (lane == 0) prev = warp > 0 ? smem[warp - 1] : init;
    else prev = Op::template apply<T>(init, prev);
    if (threadIdx.x == 0) return init;
    if (lane == 0) return Op::template apply<T>(init, prev);
    return prev;
}

} // namespace cuda
} // namespace tally

#endif
