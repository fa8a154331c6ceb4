/* The XF_* vector of exact_impl.h (f32 extremes from the bits of eight floats at once: XF_W =
 * XU * XW = 8) in AVX2 integer ops, for the files that instantiate exact_impl.h with four f64
 * lanes (exact_avx2.c), just before exact_impl.h. */
#define XF_W 8
#define XF __m256i
#define XF_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define XF_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define XF_SET1(u) _mm256_set1_epi32((int)(u))
#define XF_MINU(a, v) _mm256_min_epu32((a), (v))
#define XF_MAXU(a, v) _mm256_max_epu32((a), (v))
#define XF_MINS(a, v) _mm256_min_epi32((a), (v))
#define XF_MAXS(a, v) _mm256_max_epi32((a), (v))
#define XF_ABSBITS(v) _mm256_and_si256((v), _mm256_set1_epi32(0x7fffffff))
