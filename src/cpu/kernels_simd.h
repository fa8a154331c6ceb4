/* Hand-vectorised kernels for the loops the compiler does not vectorise by itself: float
 * extremes (order keys with NaN masking) and integer sum scans (an in-register prefix).
 * Written once with GCC vector types over the register width TK_VB (32 bytes for AVX2, 64 for
 * AVX-512) and included only by kernels_body.h. Each replaces the plain kernel of the same
 * name in the table (the #defines at the end); the results are identical by construction
 * (integer arithmetic, or exact selections of input values). */
#if !defined(TALLY_KSCALAR) && defined(__AVX512F__) && defined(__AVX512BW__)
#define TK_VB 64
#elif !defined(TALLY_KSCALAR) && defined(__AVX2__)
#define TK_VB 32
#else
#define TK_VB 0
#endif

#if TK_VB
#include <immintrin.h>
#endif

static void tk_stream_copy(void *dst, const void *src, uint64_t bytes)
{
#if TK_VB
    char *d = dst;
    const char *s = src;
    uint64_t head = (uint64_t)(-(uintptr_t)d) & (TK_VB - 1);
    if (head > bytes) head = bytes;
    memcpy(d, s, head);
    d += head;
    s += head;
    bytes -= head;
    for (; bytes >= TK_VB; bytes -= TK_VB, d += TK_VB, s += TK_VB) {
#if TK_VB == 64
        __m512i v;
        memcpy(&v, s, sizeof v);
        _mm512_stream_si512((void *)d, v);
#else
        __m256i v;
        memcpy(&v, s, sizeof v);
        _mm256_stream_si256((__m256i *)d, v);
#endif
    }
    memcpy(d, s, bytes);
#else
    memcpy(dst, src, bytes);
#endif
}

static void tk_stream_fence(void)
{
#if TK_VB
    _mm_sfence();
#endif
}

#if TK_VB

typedef int32_t tk_vi32 __attribute__((vector_size(TK_VB)));
typedef uint32_t tk_vu32 __attribute__((vector_size(TK_VB)));
typedef int64_t tk_vi64 __attribute__((vector_size(TK_VB)));
typedef uint64_t tk_vu64 __attribute__((vector_size(TK_VB)));

#if TK_VB == 64
#define TK_VI __m512i
static inline tk_vi32 tk_vmin_i32(tk_vi32 a, tk_vi32 b) { return (tk_vi32)_mm512_min_epi32((TK_VI)a, (TK_VI)b); }
static inline tk_vi32 tk_vmax_i32(tk_vi32 a, tk_vi32 b) { return (tk_vi32)_mm512_max_epi32((TK_VI)a, (TK_VI)b); }
static inline tk_vi64 tk_vmin_i64(tk_vi64 a, tk_vi64 b) { return (tk_vi64)_mm512_min_epi64((TK_VI)a, (TK_VI)b); }
static inline tk_vi64 tk_vmax_i64(tk_vi64 a, tk_vi64 b) { return (tk_vi64)_mm512_max_epi64((TK_VI)a, (TK_VI)b); }
#else
#define TK_VI __m256i
static inline tk_vi32 tk_vmin_i32(tk_vi32 a, tk_vi32 b) { return (tk_vi32)_mm256_min_epi32((TK_VI)a, (TK_VI)b); }
static inline tk_vi32 tk_vmax_i32(tk_vi32 a, tk_vi32 b) { return (tk_vi32)_mm256_max_epi32((TK_VI)a, (TK_VI)b); }
static inline tk_vi64 tk_vmin_i64(tk_vi64 a, tk_vi64 b)
{
    return (tk_vi64)_mm256_blendv_epi8((TK_VI)a, (TK_VI)b, _mm256_cmpgt_epi64((TK_VI)a, (TK_VI)b));
}
static inline tk_vi64 tk_vmax_i64(tk_vi64 a, tk_vi64 b)
{
    return (tk_vi64)_mm256_blendv_epi8((TK_VI)a, (TK_VI)b, _mm256_cmpgt_epi64((TK_VI)b, (TK_VI)a));
}
#endif

/* Float extremes: keys k (two's complement order of the bits), NaN lanes masked to the
 * identity, NaNs counted per lane; two independent accumulators per result. */
#define TK_VMINMAX(name, VS, VU, S, SB)                                                          \
    static void vminmax_masked_##name(const void *vx, uint64_t n, tally_minmax *mm)              \
    {                                                                                            \
        const char *x = vx;                                                                      \
        const uint64_t L = TK_VB / sizeof(S);                                                    \
        const VS absm = (VS){0} + (S)TK_ABS_##name, inf = (VS){0} + (S)TK_INF_##name;            \
        const VS smax = (VS){0} + TK_SMAX_##name, smin = (VS){0} + TK_SMIN_##name;               \
        S mn = TK_SMAX_##name, mx = TK_SMIN_##name;                                              \
        uint64_t nans = 0, i = 0;                                                                \
        while (n - i >= 2 * L) {                                                                 \
            /* lane NaN counts stay far below 2^31 per run */                                    \
            uint64_t end = i + ((n - i) / (2 * L)) * (2 * L);                                    \
            if (end - i > (1ull << 30)) end = i + (1ull << 30);                                  \
            VS mn0 = smax, mn1 = smax, mx0 = smin, mx1 = smin, nc0 = {0}, nc1 = {0};             \
            for (; i < end; i += 2 * L) {                                                        \
                VS b0, b1;                                                                       \
                memcpy(&b0, x + i * sizeof(S), TK_VB);                                           \
                memcpy(&b1, x + (i + L) * sizeof(S), TK_VB);                                     \
                VS k0 = b0 ^ (VS)((VU)(b0 >> (sizeof(S) * 8 - 1)) >> 1);                         \
                VS k1 = b1 ^ (VS)((VU)(b1 >> (sizeof(S) * 8 - 1)) >> 1);                         \
                VS n0 = (b0 & absm) > inf, n1 = (b1 & absm) > inf;                               \
                mn0 = tk_vmin_##SB(mn0, (k0 & ~n0) | (smax & n0));                               \
                mn1 = tk_vmin_##SB(mn1, (k1 & ~n1) | (smax & n1));                               \
                mx0 = tk_vmax_##SB(mx0, (k0 & ~n0) | (smin & n0));                               \
                mx1 = tk_vmax_##SB(mx1, (k1 & ~n1) | (smin & n1));                               \
                nc0 -= n0;                                                                       \
                nc1 -= n1;                                                                       \
            }                                                                                    \
            mn0 = tk_vmin_##SB(mn0, mn1);                                                        \
            mx0 = tk_vmax_##SB(mx0, mx1);                                                        \
            nc0 += nc1;                                                                          \
            for (uint64_t j = 0; j < L; j++) {                                                   \
                mn = TK_MIN(mn, mn0[j]);                                                         \
                mx = TK_MAX(mx, mx0[j]);                                                         \
                nans += (uint64_t)nc0[j];                                                        \
            }                                                                                    \
        }                                                                                        \
        const TK_UB_##name *t = (const TK_UB_##name *)(x + i * sizeof(S));                       \
        for (uint64_t j = 0; j < n - i; j++) {                                                   \
            TK_UT_##name b = t[j];                                                               \
            TK_SB_##name k = tk_key_##name(b);                                                   \
            int isnan_ = (b & TK_ABS_##name) > TK_INF_##name;                                    \
            mn = TK_MIN(mn, isnan_ ? TK_SMAX_##name : k);                                        \
            mx = TK_MAX(mx, isnan_ ? TK_SMIN_##name : k);                                        \
            nans += (uint64_t)isnan_;                                                            \
        }                                                                                        \
        mm->nans += nans;                                                                        \
        if (nans < n) tk_fold_minmax(mm, tk_key64_##name(mn), tk_key64_##name(mx));              \
    }
TK_VMINMAX(f32, tk_vi32, tk_vu32, int32_t, i32)
TK_VMINMAX(f64, tk_vi64, tk_vu64, int64_t, i64)

/* The common case first: extremes of the keys with no NaN masking (half the work). A NaN key
 * lies beyond the keys of +-inf, so extremes within them prove there was no NaN; otherwise the
 * piece (now in cache) goes through the masked kernel above. */
#define TK_VMINMAX_FAST(name, VS, S, SB)                                                         \
    static void vminmax_##name(const void *vx, uint64_t n, tally_minmax *mm)                     \
    {                                                                                            \
        const char *x = vx;                                                                      \
        const uint64_t L = TK_VB / sizeof(S);                                                    \
        const VS smax = (VS){0} + TK_SMAX_##name, smin = (VS){0} + TK_SMIN_##name;               \
        VS mn0 = smax, mn1 = smax, mx0 = smin, mx1 = smin;                                       \
        uint64_t i = 0;                                                                          \
        for (; i + 2 * L <= n; i += 2 * L) {                                                     \
            VS b0, b1;                                                                           \
            memcpy(&b0, x + i * sizeof(S), TK_VB);                                               \
            memcpy(&b1, x + (i + L) * sizeof(S), TK_VB);                                         \
            VS k0 = b0 ^ ((b0 >> (sizeof(S) * 8 - 1)) & smax);                                   \
            VS k1 = b1 ^ ((b1 >> (sizeof(S) * 8 - 1)) & smax);                                   \
            mn0 = tk_vmin_##SB(mn0, k0);                                                         \
            mn1 = tk_vmin_##SB(mn1, k1);                                                         \
            mx0 = tk_vmax_##SB(mx0, k0);                                                         \
            mx1 = tk_vmax_##SB(mx1, k1);                                                         \
        }                                                                                        \
        mn0 = tk_vmin_##SB(mn0, mn1);                                                            \
        mx0 = tk_vmax_##SB(mx0, mx1);                                                            \
        S mn = TK_SMAX_##name, mx = TK_SMIN_##name;                                              \
        for (uint64_t j = 0; j < L; j++) {                                                       \
            mn = TK_MIN(mn, mn0[j]);                                                             \
            mx = TK_MAX(mx, mx0[j]);                                                             \
        }                                                                                        \
        const TK_UB_##name *t = (const TK_UB_##name *)(x + i * sizeof(S));                       \
        for (uint64_t j = 0; j < n - i; j++) {                                                   \
            TK_SB_##name k = tk_key_##name(t[j]);                                                \
            mn = TK_MIN(mn, k);                                                                  \
            mx = TK_MAX(mx, k);                                                                  \
        }                                                                                        \
        if (!n) return;                                                                          \
        if (mn < tk_key_##name(TK_NINF_##name) || mx > (S)TK_INF_##name) {                       \
            vminmax_masked_##name(vx, n, mm);                                                    \
            return;                                                                              \
        }                                                                                        \
        tk_fold_minmax(mm, tk_key64_##name(mn), tk_key64_##name(mx));                            \
    }
#define TK_NINF_f32 0xff800000u
#define TK_NINF_f64 0xfff0000000000000ull
TK_VMINMAX_FAST(f32, tk_vi32, int32_t, i32)
TK_VMINMAX_FAST(f64, tk_vi64, int64_t, i64)

/* Integer scans of every op in registers: an inclusive prefix of the L lanes of a vector in
 * log2(L) steps (the vector shifted up by 1, 2, 4, ... lanes with the identity shifted in, then
 * combined with op), and the carry kept in every lane of a vector. The carry chain is one op per
 * vector: the vector's own total (its last lane, broadcast) is added to the carry off the
 * critical path. Integer ops are associative, so the results are those of the plain loop.
 * TK_SHm_s: shift up by s of m lanes (index 0 picks the identity vector's lane); TK_LASTm:
 * broadcast lane m-1. Generated lists. */
/* Constant two-vector shuffles: GCC spells them __builtin_shuffle with a mask vector, clang
 * __builtin_shufflevector with the indices as arguments (GCC has that one only from 12 on).
 * Index i < L picks a[i], L + i picks b[i]. */
#if defined(__clang__)
#define TK_SHUF(V, a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define TK_SHUF(V, a, b, ...) __builtin_shuffle(a, b, (V){__VA_ARGS__})
#endif
#define TK_SH4_1 0, 4, 5, 6
#define TK_SH4_2 0, 0, 4, 5
#define TK_LAST4 3, 3, 3, 3
#define TK_SH8_1 0, 8, 9, 10, 11, 12, 13, 14
#define TK_SH8_2 0, 0, 8, 9, 10, 11, 12, 13
#define TK_SH8_4 0, 0, 0, 0, 8, 9, 10, 11
#define TK_LAST8 7, 7, 7, 7, 7, 7, 7, 7
#define TK_SH16_1 0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30
#define TK_SH16_2 0, 0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29
#define TK_SH16_4 0, 0, 0, 0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27
#define TK_SH16_8 0, 0, 0, 0, 0, 0, 0, 0, 16, 17, 18, 19, 20, 21, 22, 23
#define TK_LAST16 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15
#define TK_SH32_1 0, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62
#define TK_SH32_2 0, 0, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61
#define TK_SH32_4 0, 0, 0, 0, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59
#define TK_SH32_8 0, 0, 0, 0, 0, 0, 0, 0, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55
#define TK_SH32_16 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47
#define TK_LAST32 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31
#define TK_SH64_1 0, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126
#define TK_SH64_2 0, 0, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125
#define TK_SH64_4 0, 0, 0, 0, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123
#define TK_SH64_8 0, 0, 0, 0, 0, 0, 0, 0, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119
#define TK_SH64_16 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111
#define TK_SH64_32 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95
#define TK_LAST64 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63
#define TK_PFX_4(V, v, z, OP) \
    v = OP(v, TK_SHUF(V, z, v, TK_SH4_1)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH4_2))
#define TK_PFX_8(V, v, z, OP) \
    v = OP(v, TK_SHUF(V, z, v, TK_SH8_1)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH8_2)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH8_4))
#define TK_PFX_16(V, v, z, OP) \
    v = OP(v, TK_SHUF(V, z, v, TK_SH16_1)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH16_2)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH16_4)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH16_8))
#define TK_PFX_32(V, v, z, OP) \
    v = OP(v, TK_SHUF(V, z, v, TK_SH32_1)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH32_2)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH32_4)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH32_8)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH32_16))
#define TK_PFX_64(V, v, z, OP) \
    v = OP(v, TK_SHUF(V, z, v, TK_SH64_1)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH64_2)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH64_4)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH64_8)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH64_16)); \
    v = OP(v, TK_SHUF(V, z, v, TK_SH64_32))
#define TK_PFX(L, V, v, z, OP) TK_PFX_##L(V, v, z, OP)
#define TK_XPFX(L, V, v, z, OP) TK_PFX(L, V, v, z, OP)
#define TK_SHL1(L) TK_SH##L##_1
#define TK_XSHL1(L) TK_SHL1(L)
#define TK_LASTL(L) TK_LAST##L
#define TK_XLASTL(L) TK_LASTL(L)

typedef int8_t tk_vi8 __attribute__((vector_size(TK_VB)));
typedef uint8_t tk_vu8 __attribute__((vector_size(TK_VB)));
typedef uint16_t tk_vu16 __attribute__((vector_size(TK_VB)));
typedef int16_t tk_vi16 __attribute__((vector_size(TK_VB)));
/* per type: the unsigned and signed vector types and the lane count (a literal, for pasting) */
#define TK_VU_i8 tk_vu8
#define TK_VU_u8 tk_vu8
#define TK_VU_i16 tk_vu16
#define TK_VU_u16 tk_vu16
#define TK_VU_i32 tk_vu32
#define TK_VU_u32 tk_vu32
#define TK_VU_i64 tk_vu64
#define TK_VU_u64 tk_vu64
#define TK_VS_i8 tk_vi8
#define TK_VS_u8 tk_vu8
#define TK_VS_i16 tk_vi16
#define TK_VS_u16 tk_vu16
#define TK_VS_i32 tk_vi32
#define TK_VS_u32 tk_vu32
#define TK_VS_i64 tk_vi64
#define TK_VS_u64 tk_vu64
#if TK_VB == 64
#define TK_L_1 64
#define TK_L_2 32
#define TK_L_4 16
#define TK_L_8 8
#else
#define TK_L_1 32
#define TK_L_2 16
#define TK_L_4 8
#define TK_L_8 4
#endif
#define TK_L_i8 TK_L_1
#define TK_L_u8 TK_L_1
#define TK_L_i16 TK_L_2
#define TK_L_u16 TK_L_2
#define TK_L_i32 TK_L_4
#define TK_L_u32 TK_L_4
#define TK_L_i64 TK_L_8
#define TK_L_u64 TK_L_8

/* The ops on vectors of the unsigned type VU (wrapping); min/max by the element type. */
#define TK_VOP_sum(VS, VU, a, b) ((a) + (b))
#define TK_VOP_prod(VS, VU, a, b) ((a) * (b))
#define TK_VOP_and(VS, VU, a, b) ((a) & (b))
#define TK_VOP_or(VS, VU, a, b) ((a) | (b))
#define TK_VOP_xor(VS, VU, a, b) ((a) ^ (b))
#define TK_VOP_min(name, VU, a, b) TK_VMIN_##name(a, b)
#define TK_VOP_max(name, VU, a, b) TK_VMAX_##name(a, b)
/* m ? b : a, lane by lane (m: all ones or zero) */
#define tk_vsel(a, b, m) (((b) & (m)) | ((a) & ~(m)))
/* Lane-wise min/max by width and signedness (AVX2 has no 64-bit ones: compare and blend). */
#if TK_VB == 64
#define TK_VMIN_i8(a, b) (TK_VU_i8)_mm512_min_epi8((__m512i)(a), (__m512i)(b))
#define TK_VMAX_i8(a, b) (TK_VU_i8)_mm512_max_epi8((__m512i)(a), (__m512i)(b))
#define TK_VMIN_u8(a, b) (TK_VU_u8)_mm512_min_epu8((__m512i)(a), (__m512i)(b))
#define TK_VMAX_u8(a, b) (TK_VU_u8)_mm512_max_epu8((__m512i)(a), (__m512i)(b))
#define TK_VMIN_i16(a, b) (TK_VU_i16)_mm512_min_epi16((__m512i)(a), (__m512i)(b))
#define TK_VMAX_i16(a, b) (TK_VU_i16)_mm512_max_epi16((__m512i)(a), (__m512i)(b))
#define TK_VMIN_u16(a, b) (TK_VU_u16)_mm512_min_epu16((__m512i)(a), (__m512i)(b))
#define TK_VMAX_u16(a, b) (TK_VU_u16)_mm512_max_epu16((__m512i)(a), (__m512i)(b))
#define TK_VMIN_i32(a, b) (TK_VU_i32)_mm512_min_epi32((__m512i)(a), (__m512i)(b))
#define TK_VMAX_i32(a, b) (TK_VU_i32)_mm512_max_epi32((__m512i)(a), (__m512i)(b))
#define TK_VMIN_u32(a, b) (TK_VU_u32)_mm512_min_epu32((__m512i)(a), (__m512i)(b))
#define TK_VMAX_u32(a, b) (TK_VU_u32)_mm512_max_epu32((__m512i)(a), (__m512i)(b))
#define TK_VMIN_i64(a, b) (TK_VU_i64)_mm512_min_epi64((__m512i)(a), (__m512i)(b))
#define TK_VMAX_i64(a, b) (TK_VU_i64)_mm512_max_epi64((__m512i)(a), (__m512i)(b))
#define TK_VMIN_u64(a, b) (TK_VU_u64)_mm512_min_epu64((__m512i)(a), (__m512i)(b))
#define TK_VMAX_u64(a, b) (TK_VU_u64)_mm512_max_epu64((__m512i)(a), (__m512i)(b))
#else
#define TK_VMIN_i8(a, b) (TK_VU_i8)_mm256_min_epi8((__m256i)(a), (__m256i)(b))
#define TK_VMAX_i8(a, b) (TK_VU_i8)_mm256_max_epi8((__m256i)(a), (__m256i)(b))
#define TK_VMIN_u8(a, b) (TK_VU_u8)_mm256_min_epu8((__m256i)(a), (__m256i)(b))
#define TK_VMAX_u8(a, b) (TK_VU_u8)_mm256_max_epu8((__m256i)(a), (__m256i)(b))
#define TK_VMIN_i16(a, b) (TK_VU_i16)_mm256_min_epi16((__m256i)(a), (__m256i)(b))
#define TK_VMAX_i16(a, b) (TK_VU_i16)_mm256_max_epi16((__m256i)(a), (__m256i)(b))
#define TK_VMIN_u16(a, b) (TK_VU_u16)_mm256_min_epu16((__m256i)(a), (__m256i)(b))
#define TK_VMAX_u16(a, b) (TK_VU_u16)_mm256_max_epu16((__m256i)(a), (__m256i)(b))
#define TK_VMIN_i32(a, b) (TK_VU_i32)_mm256_min_epi32((__m256i)(a), (__m256i)(b))
#define TK_VMAX_i32(a, b) (TK_VU_i32)_mm256_max_epi32((__m256i)(a), (__m256i)(b))
#define TK_VMIN_u32(a, b) (TK_VU_u32)_mm256_min_epu32((__m256i)(a), (__m256i)(b))
#define TK_VMAX_u32(a, b) (TK_VU_u32)_mm256_max_epu32((__m256i)(a), (__m256i)(b))
#define TK_VMIN_i64(a, b) tk_vsel(a, b, (tk_vu64)((tk_vi64)(b) < (tk_vi64)(a)))
#define TK_VMAX_i64(a, b) tk_vsel(a, b, (tk_vu64)((tk_vi64)(b) > (tk_vi64)(a)))
#define TK_VMIN_u64(a, b) tk_vsel(a, b, (tk_vu64)((tk_vi64)((b) ^ TK_B63) < (tk_vi64)((a) ^ TK_B63)))
#define TK_VMAX_u64(a, b) tk_vsel(a, b, (tk_vu64)((tk_vi64)((b) ^ TK_B63) > (tk_vi64)((a) ^ TK_B63)))
#define TK_B63 ((tk_vu64){0} + (1ull << 63))
#endif

/* One vector scan body for both kinds: an inclusive scan stores carry op prefix; an exclusive
 * one stores carry op (prefix shifted one lane up, the identity in lane 0). EXCL is a constant,
 * so each instance keeps only its own branch. */
#define TK_VSCAN_KIND(opname, name, C, kind, EXCL)                                               \
    static void vscan_##kind##_##opname##_##name(const void *vi, void *vo, uint64_t n,           \
                                                 tally_carry *cy)                                \
    {                                                                                            \
        typedef TK_VU_##name VU;                                                                 \
        const char *x = vi;                                                                      \
        char *o = vo;                                                                            \
        tally_carry id;                                                                          \
        memset(&id, 0, sizeof id);                                                               \
        id.name = (C)tk_ident_##opname##_##name;                                                 \
        const VU z = (VU){0} + (TK_U_##name)id.name;                                             \
        VU c = (VU){0} + (TK_U_##name)cy->name;                                                  \
        const uint64_t L = TK_VB / sizeof(C);                                                    \
        uint64_t i = 0;                                                                          \
        for (; i + L <= n; i += L) {                                                             \
            VU v;                                                                                \
            memcpy(&v, x + i * sizeof(C), sizeof v);                                             \
            TK_XPFX(TK_L_##name, VU, v, z, tk_vop_##opname##_##name);                            \
            VU t = TK_SHUF(VU, v, v, TK_XLASTL(TK_L_##name));                                    \
            VU e = (EXCL) ? TK_SHUF(VU, z, v, TK_XSHL1(TK_L_##name)) : v;                        \
            e = tk_vop_##opname##_##name(c, e);                                                  \
            memcpy(o + i * sizeof(C), &e, sizeof e);                                             \
            c = tk_vop_##opname##_##name(c, t);                                                  \
        }                                                                                        \
        cy->name = (C)c[0];                                                                      \
        scan_##kind##_##opname##_##name(x + i * sizeof(C), o + i * sizeof(C), n - i, cy);       \
    }
#define TK_VSCAN(opname, name, C)                                                                \
    static inline TK_VU_##name tk_vop_##opname##_##name(TK_VU_##name a, TK_VU_##name b)          \
    {                                                                                            \
        return TK_VOP_##opname(name, TK_VU_##name, a, b);                                        \
    }                                                                                            \
    TK_VSCAN_KIND(opname, name, C, incl, 0)                                                      \
    TK_VSCAN_KIND(opname, name, C, excl, 1)
/* identities, by op and type: tk_ident_<op>_<type> (the op table's identity column) */
#define TK_IDENT(type_cols, E, opname, scan_ok, float_ok, result, needs, identity)              \
    TALLY_KEEP_IF_##scan_ok(TK_IDENT_(opname, identity, TALLY_UNPACK_ type_cols))
#define TK_IDENT_(...) TK_IDENT__(__VA_ARGS__)
#define TK_IDENT__(opname, identity, name, C, is_int, sgn)                                       \
    static const C tk_ident_##opname##_##name = TALLY_IDENTITY(identity, C, is_int, sgn);
#define TK_IDENTS(E, name, C, is_int, sgn, W) TALLY_OP_ROWS(TK_IDENT, (name, C, is_int, sgn))
TALLY_INT_TYPES(TK_IDENTS)
#define TK_VSCANS(E, name, C, is_int, sgn, W)                                                    \
    TK_VSCAN(sum, name, C)                                                                       \
    TK_VSCAN(prod, name, C)                                                                      \
    TK_VSCAN(min, name, C)                                                                       \
    TK_VSCAN(max, name, C)                                                                       \
    TK_VSCAN(and, name, C)                                                                       \
    TK_VSCAN(or, name, C)                                                                        \
    TK_VSCAN(xor, name, C)
TALLY_INT_TYPES(TK_VSCANS)
/* the table takes the integer scans from here, the totals from the plain (vectorised) loops */
#define TK_ISCAN_incl(opname, name) vscan_incl_##opname##_##name
#define TK_ISCAN_excl(opname, name) vscan_excl_##opname##_##name
#define TK_ISCAN_total(opname, name) scan_total_##opname##_##name
#define TK_ISCAN(kind, opname, name) TK_ISCAN_##kind(opname, name)

/* Float min/max scans fused into one pass: each vector's bits are keyed (k = b ^ ((b >> (W-1))
 * >>> 1), the signed order of IEEE 754-2019 minimum/maximum on non-NaN values, -0 < +0, equal
 * keys equal bits), scanned as integers in registers (the prefix above, the carry a key in
 * every lane) and keyed back (the map is its own inverse) before the store: no pass through a
 * key buffer. So the bits are those of the scalar scan (tk_fmin/tk_fmax) on every input without
 * NaN. A vector with a NaN in it (or a NaN carry in) sends the rest of the call to the scalar
 * scan from that vector's first element, with the carry of the elements before it: a NaN
 * propagates from its position exactly as there. The identity shifted into the prefix is the
 * key beyond every non-NaN key (INT_MIN for max, INT_MAX for min), never an output. */
#if TK_VB == 64
static inline int tk_vnan_f32(tk_vi32 b)
{
    __m512 f = _mm512_castsi512_ps((__m512i)b);
    return _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q) != 0;
}
static inline int tk_vnan_f64(tk_vi64 b)
{
    __m512d f = _mm512_castsi512_pd((__m512i)b);
    return _mm512_cmp_pd_mask(f, f, _CMP_UNORD_Q) != 0;
}
#else
static inline int tk_vnan_f32(tk_vi32 b)
{
    __m256 f = _mm256_castsi256_ps((__m256i)b);
    return _mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)) != 0;
}
static inline int tk_vnan_f64(tk_vi64 b)
{
    __m256d f = _mm256_castsi256_pd((__m256i)b);
    return _mm256_movemask_pd(_mm256_cmp_pd(f, f, _CMP_UNORD_Q)) != 0;
}
#endif
#define TK_FK_S_f32 int32_t
#define TK_FK_S_f64 int64_t
#define TK_FK_V_f32 tk_vi32
#define TK_FK_V_f64 tk_vi64
#define TK_FK_N_f32 i32
#define TK_FK_N_f64 i64
#define TK_FK_ID_max(name) TK_SMIN_##name
#define TK_FK_ID_min(name) TK_SMAX_##name
#define TK_FK_PFX(L, V, v, z, OP) TK_PFX(L, V, v, z, OP)
#define TK_FK_OP(opname, KN) TK_FK_OP_(opname, KN)
#define TK_FK_OP_(opname, KN) tk_v##opname##_##KN
#define TK_FK_LANES(KN) TK_FK_LANES_(KN)
#define TK_FK_LANES_(KN) TK_L_##KN
/* "No NaN so far" over a call, when the output is not the input: one compare a vector into a
 * running mask (AVX-512: masked by the mask so far, on the shuffle port; AVX2: and-ed), tested
 * once at the end, in place of a test and branch a vector. A NaN found at the end means the
 * call is done again by the scalar scan from its start and its carry in (the outputs written so
 * far are overwritten; none of them was read): the same bits as stopping at the NaN's vector. */
#if TK_VB == 64
typedef __mmask16 tk_ordacc_f32;
typedef __mmask8 tk_ordacc_f64;
#define TK_ORD_INIT_f32 ((__mmask16)0xffff)
#define TK_ORD_INIT_f64 ((__mmask8)0xff)
#define TK_ORD_ACC_f32(a, b) _mm512_mask_cmp_ps_mask(a, _mm512_castsi512_ps((__m512i)(b)), _mm512_castsi512_ps((__m512i)(b)), _CMP_ORD_Q)
#define TK_ORD_ACC_f64(a, b) _mm512_mask_cmp_pd_mask(a, _mm512_castsi512_pd((__m512i)(b)), _mm512_castsi512_pd((__m512i)(b)), _CMP_ORD_Q)
#define TK_ORD_ALL_f32(a) ((a) == TK_ORD_INIT_f32)
#define TK_ORD_ALL_f64(a) ((a) == TK_ORD_INIT_f64)
#else
typedef __m256 tk_ordacc_f32;
typedef __m256d tk_ordacc_f64;
#define TK_ORD_INIT_f32 _mm256_castsi256_ps(_mm256_set1_epi32(-1))
#define TK_ORD_INIT_f64 _mm256_castsi256_pd(_mm256_set1_epi32(-1))
#define TK_ORD_ACC_f32(a, b) _mm256_and_ps(a, _mm256_cmp_ps(_mm256_castsi256_ps((__m256i)(b)), _mm256_castsi256_ps((__m256i)(b)), _CMP_ORD_Q))
#define TK_ORD_ACC_f64(a, b) _mm256_and_pd(a, _mm256_cmp_pd(_mm256_castsi256_pd((__m256i)(b)), _mm256_castsi256_pd((__m256i)(b)), _CMP_ORD_Q))
#define TK_ORD_ALL_f32(a) (_mm256_movemask_ps(a) == 0xff)
#define TK_ORD_ALL_f64(a) (_mm256_movemask_pd(a) == 0xf)
#endif
/* one vector k (keyed) scanned into o + i, the carry c advanced */
#define TK_FK_STEP(opname, name, C, EXCL)                                                         \
    k ^= (k >> W1) & m;                                                                          \
    TK_FK_PFX(TK_FK_LANES(TK_FK_N_##name), VS, k, z, TK_FK_OP(opname, TK_FK_N_##name));          \
    VS t = TK_SHUF(VS, k, k, TK_XLASTL(TK_FK_LANES(TK_FK_N_##name)));                            \
    VS e = (EXCL) ? TK_SHUF(VS, z, k, TK_XSHL1(TK_FK_LANES(TK_FK_N_##name))) : k;                \
    e = TK_FK_OP(opname, TK_FK_N_##name)(c, e);                                                  \
    e ^= (e >> W1) & m;                                                                          \
    memcpy(o + i * sizeof(C), &e, sizeof e);                                                     \
    c = TK_FK_OP(opname, TK_FK_N_##name)(c, t);
/* FN: fkscan_* (the NaN test deferred where the output is not the input) or fkscanv_* (a test
 * and branch a vector, as before: kept for comparing the two, TALLY_CPU_TUNE scan_fkv=1) */
/* The same step on a vector whose values are all of sign 0 and not NaN (their bits are their
 * keys), from a carry with which every output is of sign 0 (TK_FK_RAW_OK): no key either way. tk_vkeyed_*: a lane of sign 1 or above +inf's bits (a NaN), i.e. one that needs
 * the key or the NaN test. */
#define TK_FK_STEP_RAW(opname, name, C, EXCL)                                                    \
    TK_FK_PFX(TK_FK_LANES(TK_FK_N_##name), VS, k, z, TK_FK_OP(opname, TK_FK_N_##name));          \
    VS t = TK_SHUF(VS, k, k, TK_XLASTL(TK_FK_LANES(TK_FK_N_##name)));                            \
    VS e = (EXCL) ? TK_SHUF(VS, z, k, TK_XSHL1(TK_FK_LANES(TK_FK_N_##name))) : k;                \
    e = TK_FK_OP(opname, TK_FK_N_##name)(c, e);                                                  \
    memcpy(o + i * sizeof(C), &e, sizeof e);                                                     \
    c = TK_FK_OP(opname, TK_FK_N_##name)(c, t);
#if TK_VB == 64
static inline int tk_vkeyed_f32(tk_vi32 b)
{
    return _mm512_cmpgt_epu32_mask((__m512i)b, _mm512_set1_epi32((int)TK_INF_f32)) != 0;
}
static inline int tk_vkeyed_f64(tk_vi64 b)
{
    return _mm512_cmpgt_epu64_mask((__m512i)b, _mm512_set1_epi64((long long)TK_INF_f64)) != 0;
}
#else
static inline int tk_vkeyed_f32(tk_vi32 b)
{
    __m256i g = _mm256_or_si256(_mm256_cmpgt_epi32((__m256i)b, _mm256_set1_epi32((int)TK_INF_f32)), (__m256i)b);
    return _mm256_movemask_ps(_mm256_castsi256_ps(g)) != 0;
}
static inline int tk_vkeyed_f64(tk_vi64 b)
{
    __m256i g = _mm256_or_si256(_mm256_cmpgt_epi64((__m256i)b, _mm256_set1_epi64x((long long)TK_INF_f64)), (__m256i)b);
    return _mm256_movemask_pd(_mm256_castsi256_pd(g)) != 0;
}
#endif
/* the carry: any for an inclusive max (every output is a max with a value of sign 0), else of
 * sign 0 (an exclusive scan's first output is the carry itself; a min's may be) */
#define TK_FK_RAW_OK_max(ck, EXCL) (!(EXCL) || (ck) >= 0)
#define TK_FK_RAW_OK_min(ck, EXCL) ((ck) >= 0)
#define TK_FKSCAN_KIND(opname, name, C, kind, EXCL) TK_FKSCAN_FN(fkscan, 1, opname, name, C, kind, EXCL) \
    TK_FKSCAN_FN(fkscanv, 0, opname, name, C, kind, EXCL)
#define TK_FKSCAN_FN(FN, DEFER, opname, name, C, kind, EXCL)                                     \
    static void FN##_##kind##_##opname##_##name(const void *vi, void *vo, uint64_t n,            \
                                                tally_carry *cy)                                 \
    {                                                                                            \
        typedef TK_FK_V_##name VS;                                                               \
        typedef TK_FK_S_##name S;                                                                \
        const char *x = vi;                                                                      \
        char *o = vo;                                                                            \
        const uint64_t L = TK_VB / sizeof(C);                                                    \
        const int W1 = (int)sizeof(S) * 8 - 1;                                                   \
        uint64_t i = 0;                                                                          \
        if (cy->name == cy->name) {                                                              \
            const VS m = (VS){0} + TK_SMAX_##name;                                               \
            const VS z = (VS){0} + TK_FK_ID_##opname(name);                                      \
            S ck;                                                                                \
            memcpy(&ck, &cy->name, sizeof ck);                                                   \
            VS c = (VS){0} + ck;                                                                 \
            c ^= (c >> W1) & m;                                                                  \
            if ((DEFER) && TK_FK_RAW_OK_##opname(ck, EXCL)) { /* sign 0 from the start: no keys */     \
                for (; i + L <= n; i += L) {                                                     \
                    VS k;                                                                        \
                    memcpy(&k, x + i * sizeof(C), sizeof k);                                     \
                    if (tk_vkeyed_##name(k)) break;                                              \
                    TK_FK_STEP_RAW(opname, name, C, EXCL)                                        \
                }                                                                                \
            }                                                                                    \
            const uintptr_t xa = (uintptr_t)x, oa = (uintptr_t)o, nb = n * sizeof(C);            \
            if ((DEFER) && (oa + nb <= xa || xa + nb <= oa)) {                                 \
                tk_ordacc_##name ord = TK_ORD_INIT_##name;                                       \
                for (; i + L <= n; i += L) {                                                     \
                    VS k;                                                                        \
                    memcpy(&k, x + i * sizeof(C), sizeof k);                                     \
                    ord = TK_ORD_ACC_##name(ord, k);                                             \
                    TK_FK_STEP(opname, name, C, EXCL)                                            \
                }                                                                                \
                if (!TK_ORD_ALL_##name(ord)) i = 0; /* a NaN: all of it again, from the carry */ \
            } else {                                                                             \
                for (; i + L <= n; i += L) {                                                     \
                    VS k;                                                                        \
                    memcpy(&k, x + i * sizeof(C), sizeof k);                                     \
                    if (tk_vnan_##name(k)) break;                                                \
                    TK_FK_STEP(opname, name, C, EXCL)                                            \
                }                                                                                \
            }                                                                                    \
            if (i) {                                                                             \
                c ^= (c >> W1) & m;                                                              \
                ck = c[0];                                                                       \
                memcpy(&cy->name, &ck, sizeof ck);                                               \
            }                                                                                    \
        }                                                                                        \
        scan_##kind##_##opname##_##name(x + i * sizeof(C), o + i * sizeof(C), n - i, cy);        \
    }
#define TK_FKSCANS(E, name, C, is_int, sgn, W)                                                   \
    TK_FKSCAN_KIND(min, name, C, incl, 0)                                                        \
    TK_FKSCAN_KIND(min, name, C, excl, 1)                                                        \
    TK_FKSCAN_KIND(max, name, C, incl, 0)                                                        \
    TK_FKSCAN_KIND(max, name, C, excl, 1)
TALLY_FLOAT_TYPES(TK_FKSCANS)
/* Their block totals (the look-back's input, read from memory on many threads): the keys'
 * extreme and, to prove there was no NaN, their other extreme, in two accumulators each; a NaN
 * key lies beyond the keys of +-inf, so extremes within them prove there was none. Otherwise
 * (or with a NaN carry in) the scalar total from the start: the same bits. */
#define TK_FKTOTAL(opname, name, C, VEXT, VOTH)                                                  \
    static void fktotal_##opname##_##name(const void *vi, uint64_t n, tally_carry *cy)           \
    {                                                                                            \
        typedef TK_FK_V_##name VS;                                                               \
        typedef TK_FK_S_##name S;                                                                \
        const char *x = vi;                                                                      \
        const uint64_t L = TK_VB / sizeof(C);                                                    \
        const int W1 = (int)sizeof(S) * 8 - 1;                                                   \
        const VS m = (VS){0} + TK_SMAX_##name;                                                   \
        if (cy->name != cy->name) {                                                              \
            scan_total_##opname##_##name(vi, n, cy);                                             \
            return;                                                                              \
        }                                                                                        \
        S ck;                                                                                    \
        memcpy(&ck, &cy->name, sizeof ck);                                                       \
        ck ^= (S)((ck >> W1) & TK_SMAX_##name);                                                  \
        VS e0 = (VS){0} + ck, e1 = e0, o0 = e0, o1 = e0;                                         \
        uint64_t i = 0;                                                                          \
        for (; i + 2 * L <= n; i += 2 * L) {                                                     \
            VS b0, b1;                                                                           \
            memcpy(&b0, x + i * sizeof(C), sizeof b0);                                           \
            memcpy(&b1, x + (i + L) * sizeof(C), sizeof b1);                                     \
            b0 ^= (b0 >> W1) & m;                                                                \
            b1 ^= (b1 >> W1) & m;                                                                \
            e0 = VEXT(e0, b0);                                                                   \
            e1 = VEXT(e1, b1);                                                                   \
            o0 = VOTH(o0, b0);                                                                   \
            o1 = VOTH(o1, b1);                                                                   \
        }                                                                                        \
        e0 = VEXT(e0, e1);                                                                       \
        o0 = VOTH(o0, o1);                                                                       \
        S lo = TK_SMAX_##name, hi = TK_SMIN_##name;                                              \
        for (uint64_t j = 0; j < L; j++) {                                                       \
            lo = TK_MIN(lo, TK_MIN(e0[j], o0[j]));                                               \
            hi = TK_MAX(hi, TK_MAX(e0[j], o0[j]));                                               \
        }                                                                                        \
        for (; i < n; i++) {                                                                     \
            S k;                                                                                 \
            memcpy(&k, x + i * sizeof(C), sizeof k);                                             \
            k ^= (S)((k >> W1) & TK_SMAX_##name);                                                \
            lo = TK_MIN(lo, k);                                                                  \
            hi = TK_MAX(hi, k);                                                                  \
        }                                                                                        \
        if (lo < tk_key_##name(TK_NINF_##name) || hi > (S)TK_INF_##name) {                       \
            scan_total_##opname##_##name(vi, n, cy);                                             \
            return;                                                                              \
        }                                                                                        \
        S r = TK_FK_PICK_##opname(lo, hi);                                                       \
        r ^= (S)((r >> W1) & TK_SMAX_##name);                                                    \
        memcpy(&cy->name, &r, sizeof r);                                                         \
    }
#define TK_FK_PICK_min(lo, hi) (lo)
#define TK_FK_PICK_max(lo, hi) (hi)
TK_FKTOTAL(min, f32, float, tk_vmin_i32, tk_vmax_i32)
TK_FKTOTAL(max, f32, float, tk_vmax_i32, tk_vmin_i32)
TK_FKTOTAL(min, f64, double, tk_vmin_i64, tk_vmax_i64)
TK_FKTOTAL(max, f64, double, tk_vmax_i64, tk_vmin_i64)
/* The same totals from the raw bits, without keys: three extremes of the bits (as signed and as
 * unsigned integers), one op each a vector where the ISA has them (f32 everywhere, f64 on
 * AVX-512; AVX2 has no 64-bit max/min), against the keyed totals' key (two ops) and two
 * extremes. With the carry among the values, and no NaN (none of sign 0 above +inf's bits: the
 * signed max; none of sign 1 above -inf's: the unsigned max):
 *   max = the signed max if that is >= 0 (the largest bits of sign 0 are the largest such value,
 *         and +0 > every negative), else (all negative) the unsigned min (the smallest magnitude);
 *   min = the unsigned max if its sign bit is set (the largest magnitude of sign 1), else (no
 *         negative) the unsigned min.
 * Each picks one of the values' own bits, the one IEEE minimum/maximum picks (-0 < +0), so the
 * bits are those of the keyed totals; a NaN anywhere (the carry too) takes the scalar total from
 * the start, which lets the first NaN stick. */
#if TK_VB == 64
#define TK_RT_SMAX_32 _mm512_max_epi32
#define TK_RT_UMAX_32 _mm512_max_epu32
#define TK_RT_UMIN_32 _mm512_min_epu32
#define TK_RT_SMAX_64 _mm512_max_epi64
#define TK_RT_UMAX_64 _mm512_max_epu64
#define TK_RT_UMIN_64 _mm512_min_epu64
#define TK_RT_SET1_32(v) _mm512_set1_epi32((int)(v))
#define TK_RT_SET1_64(v) _mm512_set1_epi64((long long)(v))
#define TK_RTOTAL_F64 1
#else
#define TK_RT_SMAX_32 _mm256_max_epi32
#define TK_RT_UMAX_32 _mm256_max_epu32
#define TK_RT_UMIN_32 _mm256_min_epu32
#define TK_RT_SET1_32(v) _mm256_set1_epi32((int)(v))
#define TK_RTOTAL_F64 0
#endif
/* (intrinsic types throughout the loop: through the vector-extension types GCC copied every
 * accumulator once more a step) */
#define TK_RTOTAL(opname, name, C, U, S, BITS)                                                   \
    static TK_MAYBE_UNUSED void frtotal_##opname##_##name(const void *vi, uint64_t n,            \
                                                          tally_carry *cy)                       \
    {                                                                                            \
        const char *x = vi;                                                                      \
        const uint64_t L = TK_VB / sizeof(C);                                                    \
        U cb;                                                                                    \
        memcpy(&cb, &cy->name, sizeof cb);                                                       \
        TK_VI s0 = TK_RT_SET1_##BITS(cb), s1 = s0, a0 = s0, a1 = s0, b0 = s0, b1 = s0;           \
        uint64_t i = 0;                                                                          \
        for (; i + 2 * L <= n; i += 2 * L) {                                                     \
            TK_VI v0, v1;                                                                        \
            memcpy(&v0, x + i * sizeof(C), sizeof v0);                                           \
            memcpy(&v1, x + (i + L) * sizeof(C), sizeof v1);                                     \
            s0 = TK_RT_SMAX_##BITS(s0, v0);                                                      \
            s1 = TK_RT_SMAX_##BITS(s1, v1);                                                      \
            a0 = TK_RT_UMAX_##BITS(a0, v0);                                                      \
            a1 = TK_RT_UMAX_##BITS(a1, v1);                                                      \
            b0 = TK_RT_UMIN_##BITS(b0, v0);                                                      \
            b1 = TK_RT_UMIN_##BITS(b1, v1);                                                      \
            __asm__("" : "+v"(s0), "+v"(s1), "+v"(a0), "+v"(a1), "+v"(b0), "+v"(b1));            \
        }                                                                                        \
        U sl[TK_VB / sizeof(U)], al[TK_VB / sizeof(U)], bl[TK_VB / sizeof(U)];                   \
        s0 = TK_RT_SMAX_##BITS(s0, s1);                                                          \
        a0 = TK_RT_UMAX_##BITS(a0, a1);                                                          \
        b0 = TK_RT_UMIN_##BITS(b0, b1);                                                          \
        memcpy(sl, &s0, sizeof sl);                                                              \
        memcpy(al, &a0, sizeof al);                                                              \
        memcpy(bl, &b0, sizeof bl);                                                              \
        S smax = (S)cb;                                                                          \
        U umax = cb, umin = cb;                                                                  \
        for (uint64_t j = 0; j < L; j++) {                                                       \
            smax = TK_MAX(smax, (S)sl[j]);                                                       \
            umax = TK_MAX(umax, al[j]);                                                          \
            umin = TK_MIN(umin, bl[j]);                                                          \
        }                                                                                        \
        for (; i < n; i++) {                                                                     \
            U v;                                                                                 \
            memcpy(&v, x + i * sizeof(C), sizeof v);                                             \
            smax = TK_MAX(smax, (S)v);                                                           \
            umax = TK_MAX(umax, v);                                                              \
            umin = TK_MIN(umin, v);                                                              \
        }                                                                                        \
        if (smax > (S)TK_INF_##name || umax > (U)TK_NINF_##name) {                               \
            scan_total_##opname##_##name(vi, n, cy);                                             \
            return;                                                                              \
        }                                                                                        \
        U r = TK_RT_PICK_##opname(smax, umax, umin, (U)1 << (BITS - 1));                          \
        memcpy(&cy->name, &r, sizeof r);                                                         \
    }
#define TK_RT_PICK_max(smax, umax, umin, sign) ((smax) >= 0 ? (__typeof__(umin))(smax) : (umin))
#define TK_RT_PICK_min(smax, umax, umin, sign) ((umax) & (sign) ? (umax) : (umin))
TK_RTOTAL(min, f32, float, uint32_t, int32_t, 32)
TK_RTOTAL(max, f32, float, uint32_t, int32_t, 32)
#if TK_RTOTAL_F64
TK_RTOTAL(min, f64, double, uint64_t, int64_t, 64)
TK_RTOTAL(max, f64, double, uint64_t, int64_t, 64)
#endif
/* AVX-512: where the ISA has one 512-bit port for integer max/min (the three extremes above then
 * cost three cycles a vector, as the keyed totals' key and two extremes do), one extreme and the
 * NaN test on the other port: e = the signed max (max) or min (min) of the bits with the carry's,
 * and a running "no NaN yet" mask (a compare into a mask register, masked by the mask so far, on
 * the shuffle port). Without NaN: e >= 0 as a signed number means a value of sign 0 is present
 * (max: then the largest such bits are the maximum, as above), resp. every value is of sign 0
 * (min: the smallest bits are the minimum). Otherwise (max: all negative; min: a negative
 * present), a NaN, a NaN carry or a partial vector pair at the end: the three extremes above,
 * from the start (their own fallback is the scalar total). The same bits either way. */
#if TK_VB == 64
#define TK_R1_EXT_max_32 _mm512_max_epi32
#define TK_R1_EXT_min_32 _mm512_min_epi32
#define TK_R1_EXT_max_64 _mm512_max_epi64
#define TK_R1_EXT_min_64 _mm512_min_epi64
#define TK_R1_RED_max_32 _mm512_reduce_max_epi32
#define TK_R1_RED_min_32 _mm512_reduce_min_epi32
#define TK_R1_RED_max_64 _mm512_reduce_max_epi64
#define TK_R1_RED_min_64 _mm512_reduce_min_epi64
#define TK_R1_ORD_32(k, v) _mm512_mask_cmp_ps_mask(k, _mm512_castsi512_ps(v), _mm512_castsi512_ps(v), _CMP_ORD_Q)
#define TK_R1_ORD_64(k, v) _mm512_mask_cmp_pd_mask(k, _mm512_castsi512_pd(v), _mm512_castsi512_pd(v), _CMP_ORD_Q)
#define TK_R1_MASK_32 __mmask16
#define TK_R1_MASK_64 __mmask8
#define TK_RTOTAL1(opname, name, C, U, S, BITS)                                                  \
    static void frtotal1_##opname##_##name(const void *vi, uint64_t n, tally_carry *cy)          \
    {                                                                                            \
        const char *x = vi;                                                                      \
        const uint64_t L = 64 / sizeof(C);                                                       \
        U cb;                                                                                    \
        memcpy(&cb, &cy->name, sizeof cb);                                                       \
        if (n % (4 * L) || (cb & (U)TK_ABS_##name) > (U)TK_INF_##name) {                         \
            frtotal_##opname##_##name(vi, n, cy);                                                \
            return;                                                                              \
        }                                                                                        \
        __m512i e0 = TK_RT_SET1_##BITS(cb), e1 = e0;                                             \
        TK_R1_MASK_##BITS k0 = (TK_R1_MASK_##BITS)~0u, k1 = k0, k2 = k0, k3 = k0;                \
        for (uint64_t i = 0; i < n; i += 4 * L) { /* four masks: a compare's latency is 3 */     \
            __m512i v0, v1, v2, v3;                                                              \
            memcpy(&v0, x + i * sizeof(C), sizeof v0);                                           \
            memcpy(&v1, x + (i + L) * sizeof(C), sizeof v1);                                     \
            memcpy(&v2, x + (i + 2 * L) * sizeof(C), sizeof v2);                                 \
            memcpy(&v3, x + (i + 3 * L) * sizeof(C), sizeof v3);                                 \
            e0 = TK_R1_EXT_##opname##_##BITS(e0, TK_R1_EXT_##opname##_##BITS(v0, v1));           \
            e1 = TK_R1_EXT_##opname##_##BITS(e1, TK_R1_EXT_##opname##_##BITS(v2, v3));           \
            k0 = TK_R1_ORD_##BITS(k0, v0);                                                       \
            k1 = TK_R1_ORD_##BITS(k1, v1);                                                       \
            k2 = TK_R1_ORD_##BITS(k2, v2);                                                       \
            k3 = TK_R1_ORD_##BITS(k3, v3);                                                       \
            __asm__("" : "+v"(e0), "+v"(e1));                                                    \
        }                                                                                        \
        k0 &= k1 & k2 & k3;                                                                      \
        S e = (S)TK_R1_RED_##opname##_##BITS(TK_R1_EXT_##opname##_##BITS(e0, e1));              \
        if (k0 != (TK_R1_MASK_##BITS)~0u || e < 0) {                                             \
            frtotal_##opname##_##name(vi, n, cy);                                                \
            return;                                                                              \
        }                                                                                        \
        memcpy(&cy->name, &e, sizeof e);                                                         \
    }
TK_RTOTAL1(min, f32, float, uint32_t, int32_t, 32)
TK_RTOTAL1(max, f32, float, uint32_t, int32_t, 32)
TK_RTOTAL1(min, f64, double, uint64_t, int64_t, 64)
TK_RTOTAL1(max, f64, double, uint64_t, int64_t, 64)
#endif
#define TK_FKSCAN 1

/* Byte sums: psadbw adds 8 bytes into each 64-bit lane in one instruction. Signed bytes are
 * biased by 128 (x ^ 0x80 = x + 128 as an unsigned byte) and the bias is taken off at the end. */
static inline tk_vu64 tk_sad(tk_vu8 v)
{
#if TK_VB == 64
    return (tk_vu64)_mm512_sad_epu8((TK_VI)v, _mm512_setzero_si512());
#else
    return (tk_vu64)_mm256_sad_epu8((TK_VI)v, _mm256_setzero_si256());
#endif
}
#define TK_VSUM8(name, sgn)                                                                      \
    static void visum_##name(const void *vx, uint64_t n, void *vacc)                             \
    {                                                                                            \
        const uint8_t *x = vx;                                                                   \
        const tk_vu8 bias = (tk_vu8){0} + (uint8_t)(sgn ? 0x80 : 0);                             \
        tk_vu64 s0 = {0}, s1 = {0};                                                              \
        uint64_t i = 0;                                                                          \
        for (; i + 2 * TK_VB <= n; i += 2 * TK_VB) { /* lanes: < 2^11 per add, no overflow */    \
            tk_vu8 a, b;                                                                         \
            memcpy(&a, x + i, TK_VB);                                                            \
            memcpy(&b, x + i + TK_VB, TK_VB);                                                    \
            s0 += tk_sad(a ^ bias);                                                              \
            s1 += tk_sad(b ^ bias);                                                              \
        }                                                                                        \
        s0 += s1;                                                                                \
        uint64_t u = 0;                                                                          \
        for (uint64_t j = 0; j < TK_VB / 8; j++) u += s0[j];                                     \
        if (sgn) {                                                                               \
            __int128 s = (__int128)u - (__int128)i * 128;                                        \
            for (; i < n; i++) s += (int8_t)x[i];                                                \
            *(__int128 *)vacc += s;                                                              \
        } else {                                                                                 \
            for (; i < n; i++) u += x[i];                                                        \
            *(unsigned __int128 *)vacc += u;                                                     \
        }                                                                                        \
    }
TK_VSUM8(i8, 1)
TK_VSUM8(u8, 0)

/* 16-bit sums: pmaddwd adds neighbouring pairs into 32-bit lanes; unsigned values are biased by
 * -32768 (x ^ 0x8000 as a signed number) and the bias is added back at the end. A 32-bit lane
 * gains at most 2^16 per step, so runs of 2^14 steps cannot overflow it. */
static inline tk_vi32 tk_madd_ones(tk_vi16 v)
{
#if TK_VB == 64
    return (tk_vi32)_mm512_madd_epi16((TK_VI)v, _mm512_set1_epi16(1));
#else
    return (tk_vi32)_mm256_madd_epi16((TK_VI)v, _mm256_set1_epi16(1));
#endif
}
#define TK_VSUM16(name, C, sgn)                                                                  \
    static void visum_##name(const void *vx, uint64_t n, void *vacc)                             \
    {                                                                                            \
        const char *x = vx;                                                                      \
        const uint64_t L = TK_VB / 2;                                                            \
        const tk_vi16 bias = (tk_vi16){0} + (int16_t)(sgn ? 0 : INT16_MIN);                      \
        __int128 total = 0;                                                                      \
        uint64_t i = 0;                                                                          \
        while (n - i >= L) {                                                                     \
            uint64_t steps = (n - i) / L;                                                        \
            if (steps > (1u << 14)) steps = 1u << 14;                                            \
            tk_vi32 s = {0};                                                                     \
            for (uint64_t k = 0; k < steps; k++, i += L) {                                       \
                tk_vi16 v;                                                                       \
                memcpy(&v, x + 2 * i, TK_VB);                                                    \
                s += tk_madd_ones(v ^ bias);                                                     \
            }                                                                                    \
            for (uint64_t j = 0; j < TK_VB / 4; j++) total += s[j];                              \
        }                                                                                        \
        if (!sgn) total += (__int128)i * 32768;                                                  \
        for (; i < n; i++) {                                                                     \
            C v;                                                                                 \
            memcpy(&v, x + 2 * i, 2);                                                            \
            total += v;                                                                          \
        }                                                                                        \
        if (sgn) *(__int128 *)vacc += total;                                                     \
        else *(unsigned __int128 *)vacc += (unsigned __int128)total;                             \
    }
TK_VSUM16(i16, int16_t, 1)
TK_VSUM16(u16, uint16_t, 0)

/* The table (kernels_body.h) picks these up under the plain names. */
#define isum_i16 visum_i16
#define isum_u16 visum_u16
#define isum_i8 visum_i8
#define isum_u8 visum_u8
#define minmax_f32 vminmax_f32
#define minmax_f64 vminmax_f64
#endif /* TK_VB */
