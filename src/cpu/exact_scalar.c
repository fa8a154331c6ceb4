/* Portable exact-sum kernels (one double per "vector", four independent accumulator sets for
 * instruction-level parallelism), and the ISA table lookup. */
#include <math.h>
#include <string.h>
#include "cpu/exact_kernels.h"

#define XV double
#define XW 1
#define XU 4
#define XFN(name) tally_xscalar_##name
static inline double tally_xscalar_or_(double a, double b) {
    return tally_exact_double_(tally_exact_bits_(a) | tally_exact_bits_(b));
}
#define XV_ZERO() 0.0
#define XV_SET1(d) (d)
#define XV_ADD(a, b) ((a) + (b))
#define XV_SUB(a, b) ((a) - (b))
#define XV_MUL(a, b) ((a) * (b))
#define XV_FMS(a, b, c) fma((a), (b), -(c))
#define XV_OR(a, b) tally_xscalar_or_((a), (b))
#define XV_MAXABS(acc, v) (fabs(v) > (acc) ? fabs(v) : (acc))
#define XV_MINABS(acc, v) (fabs(v) < (acc) ? fabs(v) : (acc))
#define XV_STORE(p, v) (*(p) = (v))
static inline int64_t tally_xscalar_lsbmin_(int64_t acc, double v) {
    uint64_t b = tally_exact_bits_(v);
    int64_t e = (int64_t)((b >> 52) & 0x7ff);
    uint64_t m = b & 0x000fffffffffffffull;
    if (e) m |= 1ull << 52;
    else e = 1;
    if (!m) return acc;
    int64_t key = e + __builtin_ctzll(m) + 1023;
    return key < acc ? key : acc;
}
#define XVK int64_t
#define XVK_INIT() INT64_MAX
#define XVK_STORE(p, v) (*(p) = (v))
#define XVK_LSBMIN(acc, v) tally_xscalar_lsbmin_((acc), (v))
#define XV_LOAD_F64(p) (*(p))
#define XV_LOAD_F32(p) ((double)*(p))
#define XV_LOAD_F64_PART(p, k) ((void)(p), (void)(k), 0.0) /* never used: XW = 1 */
#define XV_LOAD_F32_PART(p, k) ((void)(p), (void)(k), 0.0)
#define XV_KEEP(v, k) ((void)(k), (v))
#define XV_KEEP_ORD(a, x) ((x) == (x) ? (a) : 0.0) /* a where x is not NaN */
#define XV_NONZERO_MASK(v) ((unsigned)((v) != 0))
#define XV_MIN(a, v) tally_xmin_((a), (v)) /* these skip a NaN v */
#define XV_MAX(a, v) tally_xmax_((a), (v))
#define XV_MIN_ORD(a, v) tally_xmin_((a), (v))
#define XV_MAX_ORD(a, v) tally_xmax_((a), (v))
#define XV_NAN_MASK(v) ((unsigned)((v) != (v)))
#define XS_ABS(v) fabs(v)
#include "cpu/exact_impl.h"

const tally_exact_kernels tally_exact_kernels_scalar = {
    tally_xscalar_sum_f32,   tally_xscalar_sum_f64,        tally_xscalar_sqdev_f32,
    tally_xscalar_sqdev_f64, tally_xscalar_sum_minmax_f32, tally_xscalar_sum_minmax_f64,
    NULL, NULL, tally_xscalar_spec_sum_f32, tally_xscalar_spec_sum_f64};

_Thread_local uint64_t tally_xmethod_n[4];

void tally_exact_method_counts(uint64_t out[4], int reset) {
    for (int i = 0; i < 4; i++) {
        out[i] = tally_xmethod_n[i];
        if (reset) tally_xmethod_n[i] = 0;
    }
}

_Atomic uint32_t tally_xpf_far_ = TALLY_XPF_DIST, tally_xpf_near_ = TALLY_XPF_NEAR;

void tally_exact_set_prefetch(uint32_t far_bytes, uint32_t near_bytes) {
    atomic_store_explicit(&tally_xpf_far_, far_bytes, memory_order_relaxed);
    atomic_store_explicit(&tally_xpf_near_, near_bytes, memory_order_relaxed);
}
void tally_exact_get_prefetch(uint32_t *far_bytes, uint32_t *near_bytes) {
    *far_bytes = atomic_load_explicit(&tally_xpf_far_, memory_order_relaxed);
    *near_bytes = atomic_load_explicit(&tally_xpf_near_, memory_order_relaxed);
}

_Atomic int tally_xsmall_w32w_ = 1, tally_xsmall_spec_ = 1, tally_xspec_fast_ = 1;

void tally_exact_set_spec_fast(int on) {
    atomic_store_explicit(&tally_xspec_fast_, on != 0, memory_order_relaxed);
}
int tally_exact_get_spec_fast(void) {
    return atomic_load_explicit(&tally_xspec_fast_, memory_order_relaxed);
}

void tally_exact_set_small_spec(int on) {
    atomic_store_explicit(&tally_xsmall_spec_, on != 0, memory_order_relaxed);
}
int tally_exact_get_small_spec(void) {
    return atomic_load_explicit(&tally_xsmall_spec_, memory_order_relaxed);
}

void tally_exact_set_small_w32w(int on) {
    atomic_store_explicit(&tally_xsmall_w32w_, on != 0, memory_order_relaxed);
}
int tally_exact_get_small_w32w(void) {
    return atomic_load_explicit(&tally_xsmall_w32w_, memory_order_relaxed);
}

const tally_exact_kernels *tally_exact_kernels_for(tally_isa isa) {
#if defined(TALLY_X86)
    if (isa == TALLY_ISA_AVX512) return &tally_exact_kernels_avx512;
    if (isa == TALLY_ISA_AVX2) return &tally_exact_kernels_avx2;
#endif
    (void)isa;
    return &tally_exact_kernels_scalar;
}
