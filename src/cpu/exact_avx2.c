/* Exact-sum kernels for AVX2 + FMA: four doubles per vector, two accumulator sets; W32 on eight
 * floats.
 * The method and its exactness proof are in exact_impl.h. */
#if defined(TALLY_X86)
#include <immintrin.h>
#include <math.h>
#include <string.h>
#include "cpu/exact_kernels.h"

/* Vectorized by hand: GCC's loop vectorizer only got in the way (see XF_W in exact_impl.h). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-loop-vectorize")
#endif

#define XV __m256d
#define XW 4
#define XU 2
#define XFN(name) tally_xavx2_##name
static inline __m128i tally_xavx2_lanes_(int k) { /* first k of 4 i32 lanes all-ones */
    return _mm_cmpgt_epi32(_mm_set1_epi32(k), _mm_setr_epi32(0, 1, 2, 3));
}
static inline __m256i tally_xavx2_lanes8_(int k) { /* first k of 8 i32 lanes all-ones */
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#define XV_ZERO() _mm256_setzero_pd()
#define XV_SET1(d) _mm256_set1_pd(d)
#define XV_ADD(a, b) _mm256_add_pd((a), (b))
#define XV_SUB(a, b) _mm256_sub_pd((a), (b))
#define XV_MUL(a, b) _mm256_mul_pd((a), (b))
#define XV_FMS(a, b, c) _mm256_fmsub_pd((a), (b), (c))
#define XV_OR(a, b) _mm256_or_pd((a), (b))
#define XV_MAXABS(acc, v) _mm256_max_pd((acc), _mm256_andnot_pd(_mm256_set1_pd(-0.0), (v)))
#define XV_MINABS(acc, v) _mm256_min_pd((acc), _mm256_andnot_pd(_mm256_set1_pd(-0.0), (v)))
/* key(v) (exact_impl.h): the lowest set bit of the 53-bit significand m, m & -m = 2^t (t <= 52),
 * goes to a double exactly as (bits of 2^53 | 2^t) - 2^53 = 2^(t+1), whose exponent field is
 * t + 1024: 2^t lands in the fraction field of 2^53 (ulp 2), or for t = 52 (m a power of two)
 * on the lowest exponent bit, making it 2^54. (With 2^52 as the base, t = 52 gave 0, a key far
 * too small: exact still, but a power of two such as 8.0 in price-like data sent blocks to BINS.) */
static inline __m256i tally_xavx2_lsbmin_(__m256i acc, __m256d v) {
    const __m256i zero = _mm256_setzero_si256();
    __m256i b = _mm256_castpd_si256(v);
    __m256i e = _mm256_and_si256(_mm256_srli_epi64(b, 52), _mm256_set1_epi64x(0x7ff));
    __m256i ez = _mm256_cmpeq_epi64(e, zero);
    __m256i m = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi64x(0x000fffffffffffffll)),
                                _mm256_andnot_si256(ez, _mm256_set1_epi64x(1ll << 52)));
    __m256i low = _mm256_and_si256(m, _mm256_sub_epi64(zero, m));
    __m256d two53 = _mm256_set1_pd(0x1p53);
    __m256d ld = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(low, _mm256_castpd_si256(two53))), two53);
    __m256i key = _mm256_add_epi64(_mm256_srli_epi64(_mm256_castpd_si256(ld), 52),
                                   _mm256_sub_epi64(e, _mm256_sub_epi64(ez, _mm256_set1_epi64x(-1)))); /* t + 1023 + (e, or 1 for e = 0) */
    key = _mm256_blendv_epi8(key, _mm256_set1_epi64x(INT64_MAX), _mm256_cmpeq_epi64(m, zero));
    return _mm256_blendv_epi8(acc, key, _mm256_cmpgt_epi64(acc, key));
}
#define XVK __m256i
#define XVK_INIT() _mm256_set1_epi64x(INT64_MAX)
#define XVK_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define XVK_LSBMIN(acc, v) tally_xavx2_lsbmin_((acc), (v))
#define XV_STORE(p, v) _mm256_storeu_pd((p), (v))
#define XV_LOAD_F64(p) _mm256_loadu_pd(p)
#define XV_LOAD_F32(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
#define XV_LOAD_F64_PART(p, k) _mm256_maskload_pd((p), _mm256_cvtepi32_epi64(tally_xavx2_lanes_(k)))
#define XV_LOAD_F32_PART(p, k) _mm256_cvtps_pd(_mm_maskload_ps((p), tally_xavx2_lanes_(k)))
#define XV_KEEP(v, k) _mm256_and_pd((v), _mm256_castsi256_pd(_mm256_cvtepi32_epi64(tally_xavx2_lanes_(k))))
#define XV_KEEP_ORD(a, x) _mm256_and_pd((a), _mm256_cmp_pd((x), (x), _CMP_ORD_Q)) /* a where x is not NaN */
#define XV_NONZERO_MASK(v) ((unsigned)_mm256_movemask_pd(_mm256_cmp_pd((v), _mm256_setzero_pd(), _CMP_NEQ_UQ)))
/* IEEE minimum / maximum from MINPD / MAXPD, which give their second operand when the two are
 * equal (so -0 and +0 in either order) or either is NaN. min(a, v) and min(v, a) are the same
 * number unless a and v are zeros of opposite signs, where they are -0 and +0 in some order:
 * the OR of the two (bits) is -0, the IEEE minimum; for the maximum the AND is +0. Equal nonzero
 * numbers have equal bits, so OR / AND leave them alone. */
static inline __m256d tally_xavx2_min_(__m256d a, __m256d v) {
    return _mm256_or_pd(_mm256_min_pd(a, v), _mm256_min_pd(v, a));
}
static inline __m256d tally_xavx2_max_(__m256d a, __m256d v) {
    return _mm256_and_pd(_mm256_max_pd(a, v), _mm256_max_pd(v, a));
}
static inline __m256d tally_xavx2_ord_(__m256d a, __m256d v) { /* v, with a in v's NaN lanes */
    return _mm256_blendv_pd(v, a, _mm256_cmp_pd(v, v, _CMP_UNORD_Q));
}
#define XV_MIN(a, v) tally_xavx2_min_((a), (v))
#define XV_MAX(a, v) tally_xavx2_max_((a), (v))
#define XV_MIN_ORD(a, v) tally_xavx2_min_((a), tally_xavx2_ord_((a), (v)))
#define XV_MAX_ORD(a, v) tally_xavx2_max_((a), tally_xavx2_ord_((a), (v)))
#define XV_NAN_MASK(v) ((unsigned)_mm256_movemask_pd(_mm256_cmp_pd((v), (v), _CMP_UNORD_Q)))
#include "cpu/exact_xf_avx2.h"
/* W32 on eight floats (see exact_impl.h) */
#define XW32 1
#define XU32 2
#define XP __m256
#define XPW 8
#define XP_LOAD(p) _mm256_loadu_ps(p)
#define XP_LOAD_PART(p, k) _mm256_maskload_ps((p), tally_xavx2_lanes8_(k))
#define XP_KEEP_ORD(v) _mm256_and_ps((v), _mm256_cmp_ps((v), (v), _CMP_ORD_Q))
#define XP_SET1(f) _mm256_set1_ps(f)
#define XP_MUL(a, b) _mm256_mul_ps((a), (b))
#define XP_MAXABS(acc, v) _mm256_max_ps((acc), _mm256_andnot_ps(_mm256_set1_ps(-0.0f), (v)))
#define XP_STORE(p, v) _mm256_storeu_ps((p), (v))
#define XP_CVT(v) _mm256_cvtps_epi32(v)
#define XI __m256i
#define XI_ZERO() _mm256_setzero_si256()
#define XI_ADD(a, b) _mm256_add_epi32((a), (b))
#define XL __m256i
#define XL_ZERO() _mm256_setzero_si256()
#define XL_ADD(a, b) _mm256_add_epi64((a), (b))
#define XL_WIDEN_ADD(lo, hi, xi)                                                                 \
    do {                                                                                         \
        __m256i t_ = (xi);                                                                       \
        (lo) = _mm256_add_epi64((lo), _mm256_cvtepi32_epi64(_mm256_castsi256_si128(t_)));        \
        (hi) = _mm256_add_epi64((hi), _mm256_cvtepi32_epi64(_mm256_extracti128_si256(t_, 1)));   \
    } while (0)
#define XL_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
/* r = v - q on the FMA ports (same rounding, same bits: see exact_avx512.c) */
#define XV_FEED_SUBR(a, b) _mm256_fnmadd_pd((b), _mm256_set1_pd(1.0), (a))
/* the f32 bins' indices and addends, 8 floats a step */
#define XB32_N 256
static inline int tally_xavx2_b32prep_(const uint32_t *x, uint32_t *idx, uint64_t *add) {
    const __m256i mask = _mm256_set1_epi32(0x7fffff), c40 = _mm256_set1_epi64x(1ll << 40);
    const __m256i e255 = _mm256_set1_epi32(0xff);
    __m256i nonfinite = _mm256_setzero_si256();
    for (int j = 0; j < XB32_N; j += 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + j));
        __m256i ix = _mm256_srli_epi32(v, 23);
        nonfinite = _mm256_or_si256(nonfinite, _mm256_cmpeq_epi32(_mm256_and_si256(ix, e255), e255));
        _mm256_store_si256((__m256i *)(void *)(idx + j), ix);
        __m256i m = _mm256_and_si256(v, mask);
        _mm256_store_si256((__m256i *)(void *)(add + j),
                           _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(m)), c40));
        _mm256_store_si256((__m256i *)(void *)(add + j + 4),
                           _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_extracti128_si256(m, 1)), c40));
    }
    return _mm256_testz_si256(nonfinite, nonfinite);
}
#define XB32_PREP(x, idx, add) tally_xavx2_b32prep_((x), (idx), (add))
/* the f64 bins' indices and significands, 4 doubles a step */
#define XB64_N 256
static inline int tally_xavx2_b64prep_(const uint64_t *x, uint64_t *idx, uint64_t *sig) {
    const __m256i frac = _mm256_set1_epi64x(0x000fffffffffffffll);
    const __m256i expo = _mm256_set1_epi64x(0x7ff0000000000000ll), imp = _mm256_set1_epi64x(1ll << 52);
    __m256i nonfinite = _mm256_setzero_si256();
    for (int j = 0; j < XB64_N; j += 4) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + j));
        _mm256_store_si256((__m256i *)(void *)(idx + j), _mm256_srli_epi64(v, 52));
        __m256i e = _mm256_and_si256(v, expo);
        nonfinite = _mm256_or_si256(nonfinite, _mm256_cmpeq_epi64(e, expo));
        __m256i zero_e = _mm256_cmpeq_epi64(e, _mm256_setzero_si256());
        _mm256_store_si256((__m256i *)(void *)(sig + j),
                           _mm256_or_si256(_mm256_and_si256(v, frac), _mm256_andnot_si256(zero_e, imp)));
    }
    return _mm256_testz_si256(nonfinite, nonfinite);
}
#define XB64_PREP(x, idx, sig) tally_xavx2_b64prep_((x), (idx), (sig))
#define XS_ABS(v) _mm256_andnot_pd(_mm256_set1_pd(-0.0), (v))
#include "cpu/exact_impl.h"

const tally_exact_kernels tally_exact_kernels_avx2 = {
    tally_xavx2_sum_f32,   tally_xavx2_sum_f64,        tally_xavx2_sqdev_f32,
    tally_xavx2_sqdev_f64, tally_xavx2_sum_minmax_f32, tally_xavx2_sum_minmax_f64,
    tally_xavx2_small_sum_f32, NULL /* TWO needs SAE */,
    tally_xavx2_spec_sum_f32,  tally_xavx2_spec_sum_f64};
#endif
