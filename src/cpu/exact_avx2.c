/* Exact-sum kernels for AVX2 + FMA: four doubles per vector, two accumulator sets.
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
#define XBLK 512
#define XFN(name) tally_xavx2_##name
static inline __m128i tally_xavx2_lanes_(int k) { /* first k of 4 i32 lanes all-ones */
    return _mm_cmpgt_epi32(_mm_set1_epi32(k), _mm_setr_epi32(0, 1, 2, 3));
}
#define XV_ZERO() _mm256_setzero_pd()
#define XV_SET1(d) _mm256_set1_pd(d)
#define XV_ADD(a, b) _mm256_add_pd((a), (b))
#define XV_SUB(a, b) _mm256_sub_pd((a), (b))
#define XV_MUL(a, b) _mm256_mul_pd((a), (b))
#define XV_FMS(a, b, c) _mm256_fmsub_pd((a), (b), (c))
#define XV_OR(a, b) _mm256_or_pd((a), (b))
#define XV_MAXABS(acc, v) _mm256_max_pd((acc), _mm256_andnot_pd(_mm256_set1_pd(-0.0), (v)))
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
/* r = v - q on the FMA ports (same rounding, same bits: see exact_avx512.c) */
#define XV_FEED_SUBR(a, b) _mm256_fnmadd_pd((b), _mm256_set1_pd(1.0), (a))
#include "cpu/exact_impl.h"

const tally_exact_kernels tally_exact_kernels_avx2 = {
    tally_xavx2_sum_f32,   tally_xavx2_sum_f64,        tally_xavx2_sqdev_f32,
    tally_xavx2_sqdev_f64, tally_xavx2_sum_minmax_f32, tally_xavx2_sum_minmax_f64};
#endif
