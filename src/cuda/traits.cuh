/* Per-type facts for the CUDA kernels: block size, type traits, order keys (min/max/argmin/
 * argmax compare unsigned keys), and loads of 16-byte vectors. */
#ifndef TALLY_CUDA_TRAITS_CUH
#define TALLY_CUDA_TRAITS_CUH

#include <cstdint>
#include <cuda_runtime.h>
#include "tally.h"

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

} // namespace tcu

#endif
