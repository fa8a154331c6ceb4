/* The scans' ops: the type a scan computes in, each op's identity and combine. */
#ifndef TALLY_CUDA_SCAN_OP_CUH
#define TALLY_CUDA_SCAN_OP_CUH

#include <type_traits>
#include "tally_cuda.cuh"
#include "cuda/traits.cuh"

namespace tcu {

/* The type scans compute in: narrow integers widen to 32 bits (results are truncated on store,
 * which gives the same bits as wrapping in the narrow type). */
template <typename T> struct ScanW {
    using type = typename std::conditional<
        Traits<T>::is_float || sizeof(T) == 8, T,
        typename std::conditional<Traits<T>::is_signed, int32_t, uint32_t>::type>::type;
};

template <typename W, int OP> struct ScanOp {
    using U = typename std::conditional<sizeof(W) == 4, uint32_t, uint64_t>::type;
    static constexpr bool FL = std::is_floating_point<W>::value;
    /* the op table's identity in W (a type of the table: the narrow integers compute in 32
     * bits); float sums: -0, as -0 + x == x for every x */
    static __device__ __forceinline__ W identity() { return Traits<W>::identity(OP); }
    /* The one NaN min/max scans give (so that combining is commutative, bits included). */
    static __device__ __forceinline__ W qnan()
    {
        if constexpr (sizeof(W) == 4) return (W)__int_as_float(0x7fc00000);
        else return (W)__longlong_as_double(0x7ff8000000000000ll);
    }
    /* a: the earlier elements, b: the later. */
    static __device__ __forceinline__ W apply(W a, W b)
    {
        if constexpr (OP == TALLY_SUM) {
            if constexpr (FL) return a + b;
            else return (W)((U)a + (U)b);
        }
        if constexpr (OP == TALLY_PROD) {
            if constexpr (FL) return a * b;
            else return (W)((U)a * (U)b);
        }
        if constexpr (OP == TALLY_MIN) {
            if constexpr (FL) {
                if (a != a || b != b) return qnan();
                if (a < b) return a;
                if (b < a) return b;
                return signbit(a) ? a : b; /* -0 < +0 */
            } else {
                return b < a ? b : a;
            }
        }
        if constexpr (OP == TALLY_MAX) {
            if constexpr (FL) {
                if (a != a || b != b) return qnan();
                if (a > b) return a;
                if (b > a) return b;
                return signbit(a) ? b : a;
            } else {
                return b > a ? b : a;
            }
        }
        if constexpr (OP == TALLY_AND) return (W)((U)a & (U)b);
        if constexpr (OP == TALLY_OR) return (W)((U)a | (U)b);
        return (W)((U)a ^ (U)b);
    }
};

/* Whole-warp shuffles of 4- and 8-byte values: the public header's (tally_cuda.cuh). */
using tally::cuda::detail::shfl_idx;
using tally::cuda::detail::shfl_up;
using tally::cuda::detail::shfl_xor;

} // namespace tcu

#endif
