/* Per-type facts for the CUDA kernels: block size, type traits, order keys (min/max/argmin/
 * argmax compare unsigned keys), and loads of 16-byte vectors. */
#ifndef TALLY_CUDA_TRAITS_CUH
#define TALLY_CUDA_TRAITS_CUH

#include <cstdint>
#include <type_traits>
#include <cuda_runtime.h>
#include "tally.h"
#include "core/types.h"

namespace tcu {

constexpr int kThreads = 256; /* every kernel runs 256-thread blocks (8 warps) */
constexpr int kWarps = kThreads / 32;

/* Per-type facts, one specialisation per row of the type table (core/types.h). Key: the
 * unsigned order key (32 bits for types up to 4 bytes, else 64). identity(op): the scan
 * identity of op in the type (the op table's identity column). */
template <typename T> struct Traits;
#define TCU_IDENTITY_CASE(type_cols, E, name, scan_ok, float_ok, result, needs, identity)        \
    case TALLY_##E: return TALLY_IDENTITY_OF(identity, type_cols);
#define TCU_TRAITS(E, name, C, is_int, sgn, W)                                                   \
    template <> struct Traits<C> {                                                               \
        using Key = typename std::conditional<sizeof(C) <= 4, uint32_t, uint64_t>::type;         \
        static constexpr tally_type type = TALLY_##E;                                            \
        static constexpr bool is_signed = sgn;                                                   \
        static constexpr bool is_float = !is_int;                                                \
        static constexpr int vec = 16 / (int)sizeof(C); /* elements in one 16-byte vector */     \
        static __host__ __device__ __forceinline__ C identity(int op)                            \
        {                                                                                        \
            switch (op) { TALLY_OP_ROWS(TCU_IDENTITY_CASE, (C, is_int, sgn)) }                   \
            return (C)0;                                                                         \
        }                                                                                        \
    };
TALLY_TYPES(TCU_TRAITS)
#undef TCU_TRAITS
#undef TCU_IDENTITY_CASE

/* Order keys: unsigned integers ordered like the values; floats: -inf < .. < -0 < +0 < .. <
 * +inf (NaN is mapped by the callers). */
template <typename T> __device__ __forceinline__ typename Traits<T>::Key key_of(T v)
{
    using K = typename Traits<T>::Key;
    constexpr K top = (K)1 << (8 * sizeof(K) - 1);
    if constexpr (Traits<T>::is_float) {
        K b;
        if constexpr (sizeof(T) == 4) b = __float_as_uint(v);
        else b = (K)__double_as_longlong(v);
        return (b & top) ? ~b : (b | top);
    } else if constexpr (Traits<T>::is_signed) {
        return (K)(typename std::make_signed<K>::type)v ^ top;
    } else {
        return (K)v;
    }
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
