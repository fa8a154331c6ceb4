/* The reduce results from the combined state: the exact sum rounded once, the simple ops
 * written from registers, and finalize's general path (mean, variance, product, bits). */
#ifndef TALLY_CUDA_REDUCE_RESULT_CUH
#define TALLY_CUDA_REDUCE_RESULT_CUH

#include <type_traits>
#include "cuda/exact.cuh"
#include "cuda/reduce_state.cuh"

namespace tcu {

/* Integer sum -> tally_exact (chunk 34 has weight 2^0), for a correctly rounded mean. */
template <typename S> __device__ __forceinline__ void exact_from_int(tally_exact *e, S v)
{
    tally_exact_init(e);
    bool neg = false;
    unsigned __int128 m;
    if constexpr (std::is_signed<S>::value || std::is_same<S, __int128>::value) {
        neg = v < 0;
        m = neg ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    } else {
        m = (unsigned __int128)v;
    }
    for (int i = 0; i < 4; i++) {
        long long d = (long long)(uint32_t)(m >> (32 * i));
        e->chunk[TALLY_EXACT_BIAS / 32 + i] = neg ? -d : d;
    }
    if (m) e->flags = TALLY_EXACT_F_ANY | TALLY_EXACT_F_NONNEGZERO;
}

/* A result for op before its value: the op, its wide type (f64, i64 or u64), OK, zeros. */
template <typename T> __device__ __forceinline__ tally_result blank_result(tally_op op)
{
    tally_result r;
    r.op = op;
    r.type = Traits<T>::is_float ? TALLY_F64 : Traits<T>::is_signed ? TALLY_I64 : TALLY_U64;
    r.status = TALLY_OK;
    r.value.u64 = 0;
    r.index = 0;
    return r;
}

/* The result of an op that needs nothing but the combined state: sum (xr: the exact float sum
 * rounded), min, max, argmin, argmax. r comes initialised (op, type, status OK, zeros). */
template <typename T, unsigned M, bool OMIT>
__device__ __forceinline__ void simple_result(tally_op op, const tcu_reduce_params &p,
                                              const State<T, M, OMIT> &s, double xr, tally_result &r)
{
    constexpr bool FL = Traits<T>::is_float;
    constexpr bool SG = Traits<T>::is_signed && !FL;
    if (op == TALLY_SUM) {
        if constexpr (M & TCU_F_FSUM) r.value.f64 = s.fsum;
        if constexpr ((M & TCU_F_SUM) && !(M & TCU_F_SQDEV)) {
            if constexpr (FL) {
                r.value.f64 = xr;
            } else if constexpr (SG) {
                __int128 v = (__int128)s.isum;
                if (v > (__int128)INT64_MAX || v < (__int128)INT64_MIN) r.status = TALLY_ERR_OVERFLOW;
                else r.value.i64 = (int64_t)v;
            } else {
                unsigned __int128 v = (unsigned __int128)s.isum;
                if (v > (unsigned __int128)UINT64_MAX) r.status = TALLY_ERR_OVERFLOW;
                else r.value.u64 = (uint64_t)v;
            }
        }
        return;
    }
    /* min, max, argmin, argmax */
    bool lo = (op == TALLY_MIN || op == TALLY_ARGMIN);
    typename Traits<T>::Key k = lo ? s.kmin : s.kmax;
    unsigned long long idx = lo ? s.imin : s.imax;
    using K = typename Traits<T>::Key;
    if (p.n == 0) {
        r.status = TALLY_ERR_EMPTY;
    } else if (FL && ((lo && k == (K)0 && !p.omit_nan) || (!lo && k == (K)~(K)0 && !p.omit_nan))) {
        r.value.u64 = 0x7ff8000000000000ull; /* a NaN propagates */
        r.index = idx;
    } else if (FL && ((lo && k == (K)~(K)0) || (!lo && k == (K)0))) {
        r.status = TALLY_ERR_EMPTY; /* every element was NaN (omitted) */
    } else {
        r.value.u64 = key_to_result_bits<T>(k);
        r.index = idx;
    }
    if (op == TALLY_MIN || op == TALLY_MAX) r.index = 0;
}

/* Writes the results of ops from the combined state. xr: the exact sum rounded (float
 * SUM/MEAN), or the exact sum of squared deviations rounded (pass 2). */
template <typename T, unsigned M, bool OMIT>
__device__ __noinline__ void finalize(const tcu_reduce_params &p, const State<T, M, OMIT> &s, double xr)
{
    constexpr bool FL = Traits<T>::is_float;
    constexpr bool SG = Traits<T>::is_signed && !FL;
    unsigned long long count = (FL && p.omit_nan) ? s.cnt : p.n;
    bool has_nan = FL && !p.omit_nan && (count > 0);
    /* the rounded sum and the mean, only when some result needs them */
    bool want_mean = p.aux != nullptr && !p.pass2, want_fsum = false;
    for (int i = 0; i < p.nops; i++) {
        want_mean |= p.ops[i] == TALLY_MEAN;
        want_fsum |= p.ops[i] == TALLY_SUM;
    }
    double mean = 0.0, fsum_rounded = 0.0;
    tally_status mst = TALLY_OK;
    if constexpr (!(M & TCU_F_SQDEV) && (M & TCU_F_SUM)) {
        if constexpr (FL) {
            fsum_rounded = xr;
        }
        if (want_mean) {
            if (count == 0) {
                mst = TALLY_ERR_EMPTY;
            } else {
                double sum;
                if constexpr (FL) {
                    sum = fsum_rounded;
                } else {
                    tally_exact e;
                    exact_from_int(&e, s.isum);
                    sum = tally_exact_round(&e);
                }
                mean = sum / (double)count;
            }
            if (p.aux && !p.pass2) {
                p.aux->mean = mean;
                p.aux->count = count;
                p.aux->status = (int32_t)mst;
            }
        }
    }
    for (int i = 0; i < p.nops; i++) {
        tally_op op = (tally_op)p.ops[i];
        if (p.pass2 != (op == TALLY_VAR)) continue;
        tally_result r = blank_result<T>(op);
        switch (op) {
        case TALLY_SUM:
        case TALLY_MIN:
        case TALLY_MAX:
        case TALLY_ARGMIN:
        case TALLY_ARGMAX:
            simple_result<T, M, OMIT>(op, p, s, xr, r);
            break;
        case TALLY_PROD:
            if constexpr (M & TCU_F_PROD) {
                if constexpr (FL) {
                    r.value.f64 = s.fprod;
                } else if (s.pflags & 1) {
                    r.value.u64 = 0;
                } else if (s.pflags & 2) {
                    r.status = TALLY_ERR_OVERFLOW;
                } else if constexpr (SG) {
                    if (s.pflags & 4) {
                        if (s.pmag > (1ull << 63)) r.status = TALLY_ERR_OVERFLOW;
                        else r.value.u64 = 0ull - s.pmag;
                    } else {
                        if (s.pmag > (unsigned long long)INT64_MAX) r.status = TALLY_ERR_OVERFLOW;
                        else r.value.u64 = s.pmag;
                    }
                } else {
                    r.value.u64 = s.pmag;
                }
            }
            break;
        case TALLY_AND:
        case TALLY_OR:
        case TALLY_XOR:
            if constexpr (!FL && (M & TCU_F_BITS)) {
                r.value.u64 = op == TALLY_AND ? s.band : op == TALLY_OR ? s.bor : s.bxor;
                if constexpr (!SG && sizeof(T) < 8) r.value.u64 &= (1ull << (8 * sizeof(T))) - 1;
            }
            break;
        case TALLY_COUNT:
            r.type = TALLY_U64;
            r.value.u64 = count;
            break;
        case TALLY_MEAN:
            r.type = TALLY_F64;
            r.status = mst;
            r.value.f64 = mean;
            break;
        case TALLY_VAR:
            r.type = TALLY_F64;
            if constexpr (M & TCU_F_SQDEV) {
                if (p.aux->status != TALLY_OK) {
                    r.status = (tally_status)p.aux->status;
                } else if (p.aux->count <= (unsigned long long)p.ddof) {
                    r.status = TALLY_ERR_DOMAIN;
                } else {
                    double sq = xr;
                    r.value.f64 = sq / (double)(p.aux->count - (unsigned long long)p.ddof);
                }
            }
            break;
        default:
            break;
        }
        (void)has_nan;
        p.out[i] = r;
    }
}

/* The exact sum, rounded once: xh + xl when nothing was spilled (then fl(xh + xl) is the
 * correctly rounded value of the exact sum), else through the superaccumulator. The flags are
 * those the CPU's superaccumulator would have: ANY when some element was summed (the
 * non-omitted ones), NONNEGZERO when some value was not -0.0, NaN and inf. spilled: sacc holds
 * something. sacc is changed. */
template <typename T, unsigned M, bool OMIT>
__device__ __forceinline__ double exact_result(const State<T, M, OMIT> &s, const tcu_reduce_params &p,
                                               unsigned long long *sacc, bool spilled)
{
    bool any;
    if constexpr ((M & TCU_F_SQDEV) != 0) any = p.n > 0;
    else any = (OMIT ? s.cnt : p.n) > 0;
    if (!any) return 0.0;
    uint32_t f = (s.xflags & ~kSlowFlag) | TALLY_EXACT_F_ANY;
    if (f & (TALLY_EXACT_F_NAN | TALLY_EXACT_F_PINF | TALLY_EXACT_F_NINF)) return sacc_round(sacc, f);
    if (!spilled) {
        double r = s.xh + s.xl;
        /* zeros lose their sign in the error terms: -0 exactly when every value was -0 */
        if (r == 0.0) r = (f & TALLY_EXACT_F_NONNEGZERO) ? 0.0 : -0.0;
        return r;
    }
    sacc_add_finite(sacc, s.xh);
    sacc_add_finite(sacc, s.xl);
    return sacc_round(sacc, f | TALLY_EXACT_F_NONNEGZERO); /* a spill means a nonzero value */
}

/* finalize takes the state by reference and is not inlined, so its argument lives in local
 * memory. Copying it there in the one thread that calls finalize keeps the caller's state in
 * registers: passing the caller's own variable made every thread of every block store its whole
 * state to local memory (15 MB of writes at 2^24 elements, a third of the kernel's time). */
template <typename T, unsigned M, bool OMIT>
__device__ __forceinline__ void finalize_copy(const tcu_reduce_params &p, State<T, M, OMIT> s, double xr)
{
    State<T, M, OMIT> copy = s;
    finalize<T, M, OMIT>(p, copy, xr);
}

/* The results when every op is one of simple_result's (the usual calls), written from
 * registers by the calling thread; otherwise finalize's general path. That path is long and
 * out of line, and takes the state through local memory: a cost every small launch would pay
 * (docs/performance.md, "the reduce's fixed costs"). */
template <typename T, unsigned M, bool OMIT>
__device__ __forceinline__ void write_results(const tcu_reduce_params &p, const State<T, M, OMIT> &s, double xr)
{
    bool simple = p.aux == nullptr && !p.pass2;
    for (int i = 0; i < p.nops; i++) {
        tally_op op = (tally_op)p.ops[i];
        simple &= op == TALLY_SUM || op == TALLY_MIN || op == TALLY_MAX || op == TALLY_ARGMIN ||
                  op == TALLY_ARGMAX;
    }
    if (!simple) {
        finalize_copy(p, s, xr);
        return;
    }
#pragma unroll 1
    for (int i = 0; i < p.nops; i++) {
        tally_result r = blank_result<T>((tally_op)p.ops[i]);
        simple_result<T, M, OMIT>(r.op, p, s, xr, r);
        p.out[i] = r;
    }
}

} // namespace tcu

#endif
