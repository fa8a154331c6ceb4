/* Exact-sum kernels for AVX-512 (F, DQ, VL): eight doubles per vector, four accumulator sets,
 * W32 on sixteen floats. The method and its exactness proofs are in exact_impl.h; here the
 * levels' adds other than the last suppress exceptions (embedded rounding, SAE), so the inexact
 * flag after a block says whether the last level was exact (no residue test per vector). */
#if defined(TALLY_X86)
#include <immintrin.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include "cpu/exact_kernels.h"

/* Vectorized by hand: GCC's loop vectorizer only got in the way. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-loop-vectorize")
#endif

/* A compare mask as a plain unsigned of `lanes` bits. GCC 12 at -O2 (seen with the sanitizers)
 * kept an unsigned made from an __mmask8 in a mask register, spilled it with kmovb (one byte) and
 * reloaded four, so stale stack bytes showed up as lanes 8.. (UBSan: index out of bounds). The
 * empty asm pins the value in a general register, and the AND then really happens. */
static inline unsigned tally_xmask_(unsigned m, unsigned lanes) {
    __asm__("" : "+r"(m));
    return m & ((1u << lanes) - 1);
}

#define XV __m512d
#define XW 8
#define XU 4
#define XFN(name) tally_xavx512_##name
#define XNX (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define XV_ZERO() _mm512_setzero_pd()
#define XV_SET1(d) _mm512_set1_pd(d)
#define XV_ADD(a, b) _mm512_add_pd((a), (b))
#define XV_SUB(a, b) _mm512_sub_pd((a), (b))
#define XV_MUL(a, b) _mm512_mul_pd((a), (b))
#define XV_FMS(a, b, c) _mm512_fmsub_pd((a), (b), (c))
#define XV_SAE 1
#define XV_ADD_NX(a, b) _mm512_add_round_pd((a), (b), XNX)
#define XV_SUB_NX(a, b) _mm512_sub_round_pd((a), (b), XNX)
#define XV_MUL_NX(a, b) _mm512_mul_round_pd((a), (b), XNX)
#define XV_FMS_NX(a, b, c) _mm512_fmsub_round_pd((a), (b), (c), XNX)
#define XV_OR(a, b) _mm512_or_pd((a), (b))
/* VRANGEPD imm 0x0B / 0x0A: the larger / smaller magnitude (bits 1:0 = 11 / 10), sign cleared
 * (bits 3:2 = 10). */
#define XV_MAXABS(acc, v) _mm512_range_pd((acc), (v), 0x0B)
#define XV_MINABS(acc, v) _mm512_range_pd((acc), (v), 0x0A)
/* key(v) (exact_impl.h): the lowest set bit of the 53-bit significand m, m & -m = 2^t, converted
 * to a double (exact), has the exponent field t + 1023. */
static inline __m512i tally_xavx512_lsbmin_(__m512i acc, __m512d v) {
    __m512i b = _mm512_castpd_si512(v);
    __m512i e = _mm512_and_si512(_mm512_srli_epi64(b, 52), _mm512_set1_epi64(0x7ff));
    __m512i f = _mm512_and_si512(b, _mm512_set1_epi64(0x000fffffffffffffll));
    __m512i m = _mm512_mask_or_epi64(f, _mm512_test_epi64_mask(e, e), f, _mm512_set1_epi64(1ll << 52));
    __m512i low = _mm512_and_si512(m, _mm512_sub_epi64(_mm512_setzero_si512(), m));
    __m512i t = _mm512_srli_epi64(_mm512_castpd_si512(_mm512_cvtepu64_pd(low)), 52);
    __m512i key = _mm512_add_epi64(t, _mm512_max_epi64(e, _mm512_set1_epi64(1)));
    return _mm512_mask_min_epi64(acc, _mm512_test_epi64_mask(m, m), acc, key);
}
#define XVK __m512i
#define XVK_INIT() _mm512_set1_epi64(INT64_MAX)
#define XVK_STORE(p, v) _mm512_storeu_si512((void *)(p), (v))
#define XVK_LSBMIN(acc, v) tally_xavx512_lsbmin_((acc), (v))
#define XV_STORE(p, v) _mm512_storeu_pd((p), (v))
#define XV_LOAD_F64(p) _mm512_loadu_pd(p)
#define XV_LOAD_F32(p) _mm512_cvtps_pd(_mm256_loadu_ps(p))
#define XV_LOAD_F64_PART(p, k) _mm512_maskz_loadu_pd((__mmask8)((1u << (k)) - 1), (p))
#define XV_LOAD_F32_PART(p, k) _mm512_cvtps_pd(_mm256_maskz_loadu_ps((__mmask8)((1u << (k)) - 1), (p)))
#define XV_KEEP(v, k) _mm512_maskz_mov_pd((__mmask8)((1u << (k)) - 1), (v))
#define XV_KEEP_ORD(a, x) _mm512_maskz_mov_pd(_mm512_cmp_pd_mask((x), (x), _CMP_ORD_Q), (a)) /* a where x is not NaN */
#define XV_NONZERO_MASK(v) tally_xmask_((unsigned)_mm512_cmp_pd_mask((v), _mm512_setzero_pd(), _CMP_NEQ_UQ), 8)
/* VRANGEPD imm 0x04 / 0x05: the smaller / larger value (bits 1:0 = 00 / 01), its own sign (3:2 =
 * 01: the sign of the compare result; 00 would take src1's sign). It orders -0 < +0 (IEEE
 * 754-2019 minimum / maximum). With one NaN operand it gave the other one on Zen 4; nothing
 * relies on that (the _ORD forms mask NaN lanes, and a NaN block goes the slow way). */
#define XV_MIN(a, v) _mm512_range_pd((a), (v), 0x04)
#define XV_MAX(a, v) _mm512_range_pd((a), (v), 0x05)
#define XV_MIN_ORD(a, v) _mm512_mask_range_pd((a), _mm512_cmp_pd_mask((v), (v), _CMP_ORD_Q), (a), (v), 0x04)
#define XV_MAX_ORD(a, v) _mm512_mask_range_pd((a), _mm512_cmp_pd_mask((v), (v), _CMP_ORD_Q), (a), (v), 0x05)
#define XV_NAN_MASK(v) tally_xmask_((unsigned)_mm512_cmp_pd_mask((v), (v), _CMP_UNORD_Q), 8)
/* r = v - q on the FMA ports (same bits, see exact_impl.h) */
#define XV_FEED_SUBR(a, b) _mm512_fnmadd_pd((b), _mm512_set1_pd(1.0), (a))
/* W32 on sixteen floats */
#define XW32 1
#define XU32 4
#define XP __m512
#define XPW 16
#define XP_LOAD(p) _mm512_loadu_ps(p)
#define XP_LOAD_PART(p, k) _mm512_maskz_loadu_ps((__mmask16)((1u << (k)) - 1), (p))
#define XP_KEEP_ORD(v) _mm512_maskz_mov_ps(_mm512_cmp_ps_mask((v), (v), _CMP_ORD_Q), (v))
#define XP_SET1(f) _mm512_set1_ps(f)
#define XP_MUL(a, b) _mm512_mul_ps((a), (b))
/* the same add, rounded to nearest, raising no flag (SMALL's W32W: its float sum must not touch
 * the inexact flag that checks the conversions) */
#define XP_ADD_NX(a, b) _mm512_add_round_ps((a), (b), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define XP_MAXABS(acc, v) _mm512_range_ps((acc), (v), 0x0B)
#define XP_STORE(p, v) _mm512_storeu_ps((p), (v))
#define XP_CVT(v) _mm512_cvtps_epi32(v)
#define XI __m512i
#define XI_ZERO() _mm512_setzero_si512()
#define XI_ADD(a, b) _mm512_add_epi32((a), (b))
#define XL __m512i
#define XL_ZERO() _mm512_setzero_si512()
#define XL_ADD(a, b) _mm512_add_epi64((a), (b))
#define XL_WIDEN_ADD(lo, hi, xi)                                                                 \
    do {                                                                                         \
        __m512i t_ = (xi);                                                                       \
        (lo) = _mm512_add_epi64((lo), _mm512_cvtepi32_epi64(_mm512_castsi512_si256(t_)));        \
        (hi) = _mm512_add_epi64((hi), _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(t_, 1)));  \
    } while (0)
#define XL_STORE(p, v) _mm512_storeu_si512((void *)(p), (v))
/* the f32 bins' indices and addends, 16 floats a step */
#define XB32_N 256
static inline int tally_xavx512_b32prep_(const uint32_t *x, uint32_t *idx, uint64_t *add) {
    const __m512i mask = _mm512_set1_epi32(0x7fffff), c40 = _mm512_set1_epi64(1ll << 40);
    const __m512i e255 = _mm512_set1_epi32(0xff);
    __mmask16 nonfinite = 0;
    for (int j = 0; j < XB32_N; j += 16) {
        __m512i v = _mm512_loadu_si512((const void *)(x + j));
        __m512i ix = _mm512_srli_epi32(v, 23);
        nonfinite |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(ix, e255), e255);
        _mm512_store_si512((void *)(idx + j), ix);
        __m512i m = _mm512_and_si512(v, mask);
        _mm512_store_si512((void *)(add + j),
                           _mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(m)), c40));
        _mm512_store_si512((void *)(add + j + 8),
                           _mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(m, 1)), c40));
    }
    return tally_xmask_((unsigned)nonfinite, 16) == 0;
}
#define XB32_PREP(x, idx, add) tally_xavx512_b32prep_((x), (idx), (add))
/* the f64 bins' indices and significands, 8 doubles a step */
#define XB64_N 256
static inline int tally_xavx512_b64prep_(const uint64_t *x, uint64_t *idx, uint64_t *sig) {
    const __m512i frac = _mm512_set1_epi64(0x000fffffffffffffll);
    const __m512i expo = _mm512_set1_epi64(0x7ff0000000000000ll), imp = _mm512_set1_epi64(1ll << 52);
    __mmask8 nonfinite = 0;
    for (int j = 0; j < XB64_N; j += 8) {
        __m512i v = _mm512_loadu_si512((const void *)(x + j));
        _mm512_store_si512((void *)(idx + j), _mm512_srli_epi64(v, 52));
        __m512i e = _mm512_and_si512(v, expo), f = _mm512_and_si512(v, frac);
        nonfinite |= _mm512_cmpeq_epi64_mask(e, expo);
        _mm512_store_si512((void *)(sig + j), _mm512_mask_or_epi64(f, _mm512_test_epi64_mask(e, e), f, imp));
    }
    return tally_xmask_((unsigned)nonfinite, 8) == 0;
}
#define XB64_PREP(x, idx, sig) tally_xavx512_b64prep_((x), (idx), (sig))
#define XS_ABS(v) _mm512_abs_pd(v)
/* max(|m|, |c|), sign cleared (VRANGEPD imm 0x0B as XV_MAXABS): the speculative sum's D (SPEC) */
#define XS_DMAX(m, c) _mm512_range_pd((m), (c), 0x0B)
/* SMALL's sample of k <= 16 elements in one or two vectors (tally_xsample_): |x|'s bits, their
 * max, and each nonzero element's lowest set bit exponent, from the lowest set bit of the
 * significand (with its implicit bit) as a power of two converted to a float: exact, so no flag
 * is raised (it runs before the MXCSR is saved). mx: the max of |x|'s bits; lo: the min exponent
 * (INT_MAX where all are zero). */
static inline void tally_xavx512_sample_f32_(const float *x, int k, uint32_t *mx, int *lo) {
    const __m512i a = _mm512_and_si512(_mm512_maskz_loadu_epi32((__mmask16)((1u << k) - 1), x),
                                       _mm512_set1_epi32(0x7fffffff));
    const __mmask16 nz = _mm512_test_epi32_mask(a, a);
    const __m512i be = _mm512_max_epi32(_mm512_srli_epi32(a, 23), _mm512_set1_epi32(1));
    const __m512i v = _mm512_or_si512(a, _mm512_set1_epi32(0x800000));
    const __m512i low = _mm512_and_si512(v, _mm512_sub_epi32(_mm512_setzero_si512(), v));
    const __m512i c127 = _mm512_srli_epi32(_mm512_castps_si512(_mm512_cvtepi32_ps(low)), 23); /* 127 + ctz */
    const __m512i e = _mm512_mask_add_epi32(_mm512_set1_epi32(INT_MAX), nz, be, c127);
    *mx = _mm512_reduce_max_epu32(a);
    const int m = _mm512_reduce_min_epi32(e);
    *lo = m == INT_MAX ? INT_MAX : m - 150 - 127;
}
static inline void tally_xavx512_sample_f64_(const double *x, int k, uint64_t *mx, int *lo) {
    const __m512i ab = _mm512_set1_epi64(0x7fffffffffffffffll), one = _mm512_set1_epi64(1);
    const __m512i imp = _mm512_set1_epi64(1ll << 52), big = _mm512_set1_epi64(INT_MAX);
    __m512i m2 = _mm512_setzero_si512(), e2 = big;
    for (int h = 0; h < 2; h++) {
        const int kh = k - 8 * h < 0 ? 0 : k - 8 * h > 8 ? 8 : k - 8 * h;
        const __m512i a = _mm512_and_si512(_mm512_maskz_loadu_epi64((__mmask8)((1u << kh) - 1), x + 8 * h), ab);
        const __mmask8 nz = _mm512_test_epi64_mask(a, a);
        const __m512i be = _mm512_max_epi64(_mm512_srli_epi64(a, 52), one);
        const __m512i v = _mm512_or_si512(a, imp);
        const __m512i low = _mm512_and_si512(v, _mm512_sub_epi64(_mm512_setzero_si512(), v));
        const __m512i c1023 = _mm512_srli_epi64(_mm512_castpd_si512(_mm512_cvtepi64_pd(low)), 52);
        e2 = _mm512_mask_min_epi64(e2, nz, e2, _mm512_add_epi64(be, c1023));
        m2 = _mm512_max_epu64(m2, a);
    }
    *mx = _mm512_reduce_max_epu64(m2);
    const long long m = _mm512_reduce_min_epi64(e2);
    *lo = m == INT_MAX ? INT_MAX : (int)m - 1075 - 1023;
}
/* W32W's tail in registers (through memory, the stores' halves reloaded waited for the stores):
 * the exact sum of four float vectors of integers below 2^40 (widened, summed in doubles: integers
 * below 2^53, so in any order), and the int32 lanes' sum modulo 2^32 */
static inline double tally_xavx512_hsum4_(__m512 a, __m512 b, __m512 c, __m512 d) {
#define XH2_(v) _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), _mm512_cvtps_pd(_mm512_extractf32x8_ps((v), 1)))
    return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(XH2_(a), XH2_(b)), _mm512_add_pd(XH2_(c), XH2_(d))));
#undef XH2_
}
/* the int32 / int64 lanes' sums modulo 2^32 / 2^64 by vector adds (GCC's _mm512_reduce_add_epi32
 * and _epi64 add the lanes as signed scalars: undefined on the wrap these sums rely on) */
static inline uint32_t tally_xavx512_hsum_u32_(__m512i v) {
    const __m256i a = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    __m128i b = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    b = _mm_add_epi32(b, _mm_shuffle_epi32(b, 0x4E));
    b = _mm_add_epi32(b, _mm_shuffle_epi32(b, 0xB1));
    return (uint32_t)_mm_cvtsi128_si32(b);
}
static inline uint64_t tally_xavx512_hsum_u64_(__m512i v) {
    const __m256i a = _mm256_add_epi64(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    __m128i b = _mm_add_epi64(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    b = _mm_add_epi64(b, _mm_unpackhi_epi64(b, b));
    return (uint64_t)_mm_cvtsi128_si64(b);
}
#define XP_HSUM4_D(a, b, c, d) tally_xavx512_hsum4_((a), (b), (c), (d))
#define XI_HSUM_U32(v) tally_xavx512_hsum_u32_(v)
/* W64W: half vectors of floats (XH: XPW / 2), their products, their conversion to int64 lanes
 * (rounding as the MXCSR says, raising inexact / invalid), a float vector's halves, and the int64
 * lanes' sum modulo 2^64 */
#define XH __m256
#define XH_LOAD(p) _mm256_loadu_ps(p)
#define XH_SET1(f) _mm256_set1_ps(f)
#define XH_MUL(a, b) _mm256_mul_ps((a), (b))
#define XH_CVT64(v) _mm512_cvtps_epi64(v)
#define XP_LO(v) _mm512_castps512_ps256(v)
#define XP_HI(v) _mm512_extractf32x8_ps((v), 1)
#define XL_HSUM_U64(v) tally_xavx512_hsum_u64_(v)
/* W64D: doubles converted to int64 lanes (rounding as the MXCSR says, raising inexact /
 * invalid), and a double vector's sum (rounded) */
#define XV_CVT64(v) _mm512_cvtpd_epi64(v)
#define XV_HSUM(v) _mm512_reduce_add_pd(v)
#define XSAMPLE_F32(x, k, mx, lo) tally_xavx512_sample_f32_((x), (k), (mx), (lo))
#define XSAMPLE_F64(x, k, mx, lo) tally_xavx512_sample_f64_((x), (k), (mx), (lo))
#include "cpu/exact_impl.h"

const tally_exact_kernels tally_exact_kernels_avx512 = {
    tally_xavx512_sum_f32,   tally_xavx512_sum_f64,        tally_xavx512_sqdev_f32,
    tally_xavx512_sqdev_f64, tally_xavx512_sum_minmax_f32, tally_xavx512_sum_minmax_f64,
    tally_xavx512_small_sum_f32, tally_xavx512_small_sum_f64,
    tally_xavx512_spec_sum_f32,  tally_xavx512_spec_sum_f64};
#endif
