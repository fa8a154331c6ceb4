/* Exact-sum kernels for AVX-512 (F, DQ, VL). The method and its exactness proof are in
 * exact_impl.h. Two bodies are stamped here: one on 512-bit vectors (eight doubles, two
 * accumulator sets) and one on 256-bit vectors with the AVX-512VL instructions (range, masks).
 * f32 sums use the 256-bit one: widening 16 floats costs more in 512-bit form, and on CPUs that
 * split 512-bit operations in two (AMD Zen 4) the 256-bit body measured 24% faster on f32 sums
 * (19.6 vs 15.8 GB/s per core in cache); the f64 kernels and the squared deviations, where the
 * 512-bit body was as fast or faster, use it. Both give the same bits (every add is exact). */
#if defined(TALLY_X86)
#include <immintrin.h>
#include <math.h>
#include <string.h>
#include "cpu/exact_kernels.h"

/* Vectorized by hand: GCC's loop vectorizer only got in the way (see XF_W in exact_impl.h). */
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

/* ---- 512-bit body ---- */
#define XV __m512d
#define XW 8
#define XU 2
#define XBLK 512
#define XFN(name) tally_xavx512_##name
#define XV_ZERO() _mm512_setzero_pd()
#define XV_SET1(d) _mm512_set1_pd(d)
#define XV_ADD(a, b) _mm512_add_pd((a), (b))
#define XV_SUB(a, b) _mm512_sub_pd((a), (b))
#define XV_MUL(a, b) _mm512_mul_pd((a), (b))
#define XV_FMS(a, b, c) _mm512_fmsub_pd((a), (b), (c))
#define XV_OR(a, b) _mm512_or_pd((a), (b))
/* VRANGEPD imm 0x0B: select the larger magnitude (bits 1:0 = 11), clear its sign (3:2 = 10). */
#define XV_MAXABS(acc, v) _mm512_range_pd((acc), (v), 0x0B)
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
/* r = v - q on the FMA ports (same bits, see exact_impl.h): f64 sums 27 -> 33 GB/s per core in
 * cache (Zen 4) */
#define XV_FEED_SUBR(a, b) _mm512_fnmadd_pd((b), _mm512_set1_pd(1.0), (a))
#include "cpu/exact_impl.h"
#undef XV
#undef XW
#undef XU
#undef XBLK
#undef XFN
#undef XV_ZERO
#undef XV_SET1
#undef XV_ADD
#undef XV_SUB
#undef XV_MUL
#undef XV_FMS
#undef XV_OR
#undef XV_MAXABS
#undef XV_STORE
#undef XV_LOAD_F64
#undef XV_LOAD_F32
#undef XV_LOAD_F64_PART
#undef XV_LOAD_F32_PART
#undef XV_KEEP
#undef XV_KEEP_ORD
#undef XV_NONZERO_MASK
#undef XV_MIN
#undef XV_MAX
#undef XV_MIN_ORD
#undef XV_MAX_ORD
#undef XV_NAN_MASK
#undef XV_FEED_SUBR

/* ---- 256-bit body with AVX-512VL ---- */
#define XV __m256d
#define XW 4
#define XU 2
#define XBLK 512
#define XFN(name) tally_xavx512y_##name
#define XV_ZERO() _mm256_setzero_pd()
#define XV_SET1(d) _mm256_set1_pd(d)
#define XV_ADD(a, b) _mm256_add_pd((a), (b))
#define XV_SUB(a, b) _mm256_sub_pd((a), (b))
#define XV_MUL(a, b) _mm256_mul_pd((a), (b))
#define XV_FMS(a, b, c) _mm256_fmsub_pd((a), (b), (c))
#define XV_OR(a, b) _mm256_or_pd((a), (b))
#define XV_MAXABS(acc, v) _mm256_range_pd((acc), (v), 0x0B)
#define XV_STORE(p, v) _mm256_storeu_pd((p), (v))
#define XV_LOAD_F64(p) _mm256_loadu_pd(p)
#define XV_LOAD_F32(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
#define XV_LOAD_F64_PART(p, k) _mm256_maskz_loadu_pd((__mmask8)((1u << (k)) - 1), (p))
#define XV_LOAD_F32_PART(p, k) _mm256_cvtps_pd(_mm_maskz_loadu_ps((__mmask8)((1u << (k)) - 1), (p)))
#define XV_KEEP(v, k) _mm256_maskz_mov_pd((__mmask8)((1u << (k)) - 1), (v))
#define XV_KEEP_ORD(a, x) _mm256_maskz_mov_pd(_mm256_cmp_pd_mask((x), (x), _CMP_ORD_Q), (a))
#define XV_NONZERO_MASK(v) tally_xmask_((unsigned)_mm256_cmp_pd_mask((v), _mm256_setzero_pd(), _CMP_NEQ_UQ), 4)
#define XV_MIN(a, v) _mm256_range_pd((a), (v), 0x04)
#define XV_MAX(a, v) _mm256_range_pd((a), (v), 0x05)
#define XV_MIN_ORD(a, v) _mm256_mask_range_pd((a), _mm256_cmp_pd_mask((v), (v), _CMP_ORD_Q), (a), (v), 0x04)
#define XV_MAX_ORD(a, v) _mm256_mask_range_pd((a), _mm256_cmp_pd_mask((v), (v), _CMP_ORD_Q), (a), (v), 0x05)
#define XV_NAN_MASK(v) tally_xmask_((unsigned)_mm256_cmp_pd_mask((v), (v), _CMP_UNORD_Q), 4)
#include "cpu/exact_xf_avx2.h"
/* The residue r = v - q as fnmadd(q, 1, v): the same single rounding of the exact v - q (so the
 * same bits; exact anyway), on the FMA ports, which the levels' adds and subs (FADD ports) left
 * idle: f32 sums 20 -> 26 GB/s per core in cache (Zen 4). */
#define XV_FEED_SUBR(a, b) _mm256_fnmadd_pd((b), _mm256_set1_pd(1.0), (a))
#include "cpu/exact_impl.h"

const tally_exact_kernels tally_exact_kernels_avx512 = {
    tally_xavx512y_sum_f32,  tally_xavx512_sum_f64,         tally_xavx512_sqdev_f32,
    tally_xavx512_sqdev_f64, tally_xavx512y_sum_minmax_f32, tally_xavx512_sum_minmax_f64};
#endif
