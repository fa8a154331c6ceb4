/* The body of every CPU kernel, written once and compiled once per ISA path: kernels_scalar.c
 * (no vectorisation: the reference), kernels_avx2.c and kernels_avx512.c (the same loops,
 * vectorised by the compiler for that ISA; the loops are shaped for it: independent lanes, no
 * early exits inside the hot loops). The includer defines TALLY_KTABLE, the table's name, and
 * TALLY_KNAME, its printable name. Per-type functions come from the X-macro lists of
 * core/types.h, so no body is copied per type.
 *
 * Nothing here depends on evaluation order except the float product (fixed lanes, see
 * core/partial.h) and float sum/prod scans (a fixed order inside a block, tally.h, written once
 * for every path), so every path gives the same bits. */
#include <math.h>
#include <string.h>
#include "core/partial.h"
#include "core/types.h"
#include "cpu/kernels.h"

/* Loads through these may alias any element type. */
typedef uint32_t tk_u32a __attribute__((may_alias));
typedef uint64_t tk_u64a __attribute__((may_alias));
typedef uint64_t tk_u64u __attribute__((may_alias, aligned(1)));

/* Per-type helpers picked by token pasting on the type's name or signedness. */
#define TK_ACC_1 __int128
#define TK_ACC_0 unsigned __int128
#define TK_U_i8 uint8_t
#define TK_U_u8 uint8_t
#define TK_U_i16 uint16_t
#define TK_U_u16 uint16_t
#define TK_U_i32 uint32_t
#define TK_U_u32 uint32_t
#define TK_U_i64 uint64_t
#define TK_U_u64 uint64_t
#define TK_KEY_1(v) tally_key_from_i64((int64_t)(v))
#define TK_KEY_0(v) ((uint64_t)(v))
#define TK_UNKEY_1(k) tally_key_to_i64(k)
#define TK_UNKEY_0(k) (k)
/* Float bit layouts. */
#define TK_UB_f32 tk_u32a
#define TK_UB_f64 tk_u64a
#define TK_SB_f32 int32_t
#define TK_SB_f64 int64_t
#define TK_UT_f32 uint32_t
#define TK_UT_f64 uint64_t
#define TK_SHIFT_f32 31
#define TK_SHIFT_f64 63
#define TK_ABS_f32 0x7fffffffu
#define TK_ABS_f64 0x7fffffffffffffffull
#define TK_INF_f32 0x7f800000u
#define TK_INF_f64 0x7ff0000000000000ull
#define TK_SMAX_f32 INT32_MAX
#define TK_SMAX_f64 INT64_MAX
#define TK_SMIN_f32 INT32_MIN
#define TK_SMIN_f64 INT64_MIN

#define TK_MAYBE_UNUSED __attribute__((unused))
#define TK_MIN(a, b) ((b) < (a) ? (b) : (a))
#define TK_MAX(a, b) ((b) > (a) ? (b) : (a))

/* Pieces are split so that 64-bit lane sums cannot overflow. */
#define TK_SPLIT (1ull << 31)

static void tk_fold_minmax(tally_minmax *mm, uint64_t kmin, uint64_t kmax)
{
    if (kmin < mm->kmin) mm->kmin = kmin;
    if (kmax > mm->kmax) mm->kmax = kmax;
}

/* ---- integer kernels ------------------------------------------------------------------------ */
#define TK_INT_KERNELS(E, name, C, is_int, sgn, W)                                               \
    static TK_MAYBE_UNUSED void isum_##name(const void *vx, uint64_t n, void *vacc)              \
    {                                                                                            \
        const C *x = vx;                                                                         \
        TK_ACC_##sgn *acc = vacc;                                                                \
        while (n) {                                                                              \
            uint64_t m = n < TK_SPLIT ? n : TK_SPLIT;                                            \
            if (sizeof(C) < 8) {                                                                 \
                W s = 0; /* |x| < 2^32, m <= 2^31: no overflow */                                \
                for (uint64_t i = 0; i < m; i++) s += x[i];                                      \
                *acc += s;                                                                       \
            } else {                                                                             \
                /* 64-bit: bias signed values to unsigned, sum 32-bit halves in 64-bit lanes. */ \
                const uint64_t bias = sgn ? 1ull << 63 : 0;                                      \
                const tk_u64a *u = (const tk_u64a *)x;                                           \
                uint64_t lo = 0, hi = 0;                                                         \
                for (uint64_t i = 0; i < m; i++) {                                               \
                    uint64_t v = u[i] ^ bias;                                                    \
                    lo += v & 0xffffffffu;                                                       \
                    hi += v >> 32;                                                               \
                }                                                                                \
                *acc += ((TK_ACC_##sgn)hi << 32) + lo;                                           \
                if (sgn) *acc -= (TK_ACC_##sgn)m << 63;                                          \
            }                                                                                    \
            x += m;                                                                              \
            n -= m;                                                                              \
        }                                                                                        \
    }                                                                                            \
    static void minmax_##name(const void *vx, uint64_t n, tally_minmax *mm)                      \
    {                                                                                            \
        const C *x = vx;                                                                         \
        if (!n) return;                                                                          \
        C mn = x[0], mx = x[0];                                                                  \
        for (uint64_t i = 0; i < n; i++) {                                                       \
            mn = TK_MIN(mn, x[i]);                                                               \
            mx = TK_MAX(mx, x[i]);                                                               \
        }                                                                                        \
        tk_fold_minmax(mm, TK_KEY_##sgn(mn), TK_KEY_##sgn(mx));                                  \
    }                                                                                            \
    static uint64_t find_key_##name(const void *vx, uint64_t n, uint64_t key)                    \
    {                                                                                            \
        const C *x = vx;                                                                         \
        const C v = (C)TK_UNKEY_##sgn(key);                                                      \
        uint64_t i = 0;                                                                          \
        for (; i + 64 <= n; i += 64) {                                                           \
            int hit = 0;                                                                         \
            for (int j = 0; j < 64; j++) hit |= x[i + j] == v;                                   \
            if (hit) break;                                                                      \
        }                                                                                        \
        for (; i < n; i++)                                                                       \
            if (x[i] == v) return i;                                                             \
        return n;                                                                                \
    }                                                                                            \
    static void iprod_##name(const void *vx, uint64_t n, tally_iprod_acc *p)                     \
    {                                                                                            \
        const C *x = vx;                                                                         \
        uint64_t i = 0;                                                                          \
        if (p->zero) return;                                                                     \
        for (; !p->ovf && i < n; i++) {                                                          \
            if (x[i] == 0) {                                                                     \
                p->zero = 1;                                                                     \
                return;                                                                          \
            }                                                                                    \
            if (sgn) {                                                                           \
                __int128 r = p->s * (__int128)x[i]; /* |.| <= 2^126 */                           \
                if (r > ((__int128)1 << 63) || r < -((__int128)1 << 63)) p->ovf = 1;             \
                else p->s = r;                                                                   \
            } else {                                                                             \
                unsigned __int128 r = p->u * (unsigned __int128)x[i];                            \
                if (r > UINT64_MAX) p->ovf = 1;                                                  \
                else p->u = r;                                                                   \
            }                                                                                    \
        }                                                                                        \
        /* Overflowed (|product| only grows): only a zero can change the result. */              \
        for (; i + 64 <= n; i += 64) {                                                           \
            int z = 0;                                                                           \
            for (int j = 0; j < 64; j++) z |= x[i + j] == 0;                                     \
            if (z) break;                                                                        \
        }                                                                                        \
        for (; i < n; i++)                                                                       \
            if (x[i] == 0) {                                                                     \
                p->zero = 1;                                                                     \
                return;                                                                          \
            }                                                                                    \
    }                                                                                            \
    static void to_f64_##name(const void *vx, uint64_t n, double *out)                           \
    {                                                                                            \
        const C *x = vx;                                                                         \
        for (uint64_t i = 0; i < n; i++) out[i] = (double)x[i];                                  \
    }
TALLY_INT_TYPES(TK_INT_KERNELS)

/* ---- float kernels: extremes on order keys (sign-magnitude bits made two's complement) ------ */
#define TK_FLOAT_KERNELS(E, name, C, is_int, sgn, W)                                             \
    static inline TK_SB_##name tk_key_##name(TK_UT_##name b)                                     \
    {                                                                                            \
        return (TK_SB_##name)(b ^ ((TK_UT_##name)((TK_SB_##name)b >> TK_SHIFT_##name) >> 1));    \
    }                                                                                            \
    static inline uint64_t tk_key64_##name(TK_SB_##name k)                                       \
    {                                                                                            \
        TK_UT_##name b = (TK_UT_##name)k ^ ((TK_UT_##name)(k >> TK_SHIFT_##name) >> 1);          \
        C v;                                                                                     \
        memcpy(&v, &b, sizeof v);                                                                \
        return tally_key_from_f64((double)v);                                                    \
    }                                                                                            \
    static TK_MAYBE_UNUSED void minmax_##name(const void *vx, uint64_t n, tally_minmax *mm)      \
    {                                                                                            \
        const TK_UB_##name *x = vx;                                                              \
        TK_SB_##name mn = TK_SMAX_##name, mx = TK_SMIN_##name; /* both NaN keys: never real */   \
        uint64_t nans = 0;                                                                       \
        for (uint64_t i = 0; i < n; i++) {                                                       \
            TK_UT_##name b = x[i];                                                               \
            TK_SB_##name k = tk_key_##name(b);                                                   \
            int isnan_ = (b & TK_ABS_##name) > TK_INF_##name;                                    \
            TK_SB_##name kl = isnan_ ? TK_SMAX_##name : k;                                       \
            TK_SB_##name kh = isnan_ ? TK_SMIN_##name : k;                                       \
            mn = TK_MIN(mn, kl);                                                                 \
            mx = TK_MAX(mx, kh);                                                                 \
            nans += (uint64_t)isnan_;                                                            \
        }                                                                                        \
        mm->nans += nans;                                                                        \
        if (nans < n) tk_fold_minmax(mm, tk_key64_##name(mn), tk_key64_##name(mx));              \
    }                                                                                            \
    static uint64_t find_key_##name(const void *vx, uint64_t n, uint64_t key)                    \
    {                                                                                            \
        const TK_UB_##name *x = vx;                                                              \
        C fv = (C)tally_key_to_f64(key); /* exact: key came from a C */                          \
        TK_UT_##name v;                                                                          \
        memcpy(&v, &fv, sizeof v);                                                               \
        uint64_t i = 0;                                                                          \
        for (; i + 64 <= n; i += 64) {                                                           \
            int hit = 0;                                                                         \
            for (int j = 0; j < 64; j++) hit |= x[i + j] == v;                                   \
            if (hit) break;                                                                      \
        }                                                                                        \
        for (; i < n; i++)                                                                       \
            if (x[i] == v) return i;                                                             \
        return n;                                                                                \
    }                                                                                            \
    static uint64_t find_nan_##name(const void *vx, uint64_t n)                                  \
    {                                                                                            \
        const TK_UB_##name *x = vx;                                                              \
        uint64_t i = 0;                                                                          \
        for (; i + 64 <= n; i += 64) {                                                           \
            int hit = 0;                                                                         \
            for (int j = 0; j < 64; j++) hit |= (x[i + j] & TK_ABS_##name) > TK_INF_##name;      \
            if (hit) break;                                                                      \
        }                                                                                        \
        for (; i < n; i++)                                                                       \
            if ((x[i] & TK_ABS_##name) > TK_INF_##name) return i;                                \
        return n;                                                                                \
    }                                                                                            \
    static double fprod_block_##name(const void *vx, uint64_t n, int omit_nan)                   \
    {                                                                                            \
        const C *x = vx;                                                                         \
        double l[TALLY_PROD_LANES];                                                              \
        for (int j = 0; j < TALLY_PROD_LANES; j++) l[j] = 1.0;                                   \
        uint64_t i = 0;                                                                          \
        if (omit_nan) {                                                                          \
            for (; i + TALLY_PROD_LANES <= n; i += TALLY_PROD_LANES)                             \
                for (int j = 0; j < TALLY_PROD_LANES; j++) {                                     \
                    double v = (double)x[i + j];                                                 \
                    l[j] *= v != v ? 1.0 : v;                                                    \
                }                                                                                \
        } else {                                                                                 \
            for (; i + TALLY_PROD_LANES <= n; i += TALLY_PROD_LANES)                             \
                for (int j = 0; j < TALLY_PROD_LANES; j++) l[j] *= (double)x[i + j];             \
        }                                                                                        \
        for (int j = 0; i < n; i++, j++) {                                                       \
            double v = (double)x[i];                                                             \
            l[j] *= (omit_nan && v != v) ? 1.0 : v;                                              \
        }                                                                                        \
        return tally_prod_lanes(l);                                                              \
    }
TALLY_FLOAT_TYPES(TK_FLOAT_KERNELS)

static void bits_words(const void *vx, uint64_t nw, uint64_t *acc)
{
    const tk_u64u *w = vx;
    uint64_t a = acc[0], o = acc[1], x = acc[2];
    for (uint64_t i = 0; i < nw; i++) {
        uint64_t v = w[i];
        a &= v;
        o |= v;
        x ^= v;
    }
    acc[0] = a;
    acc[1] = o;
    acc[2] = x;
}

/* ---- scans ---------------------------------------------------------------------------------- */
/* Integer ops wrap modulo 2^bits (done in unsigned arithmetic: no UB). */
#define TK_ISUM(C, U, a, b) ((C)(U)((uint64_t)(U)(a) + (uint64_t)(U)(b)))
#define TK_IPROD(C, U, a, b) ((C)(U)((uint64_t)(U)(a) * (uint64_t)(U)(b)))

/* IEEE 754-2019 minimum/maximum: NaN propagates, -0 < +0. */
#define TK_FMINMAX(name, C)                                                                      \
    static inline C tk_fmin_##name(C a, C b)                                                     \
    {                                                                                            \
        if (a != a) return a;                                                                    \
        if (b != b) return b;                                                                    \
        if (a < b) return a;                                                                     \
        if (b < a) return b;                                                                     \
        return signbit(a) ? a : b;                                                               \
    }                                                                                            \
    static inline C tk_fmax_##name(C a, C b)                                                     \
    {                                                                                            \
        if (a != a) return a;                                                                    \
        if (b != b) return b;                                                                    \
        if (a > b) return a;                                                                     \
        if (b > a) return b;                                                                     \
        return signbit(a) ? b : a;                                                               \
    }
TK_FMINMAX(f32, float)
TK_FMINMAX(f64, double)

/* Ops whose result does not depend on grouping: a running carry. */
#define TK_SCAN_ASSOC(opname, name, C, OPEXPR)                                                   \
    static TK_MAYBE_UNUSED void scan_incl_##opname##_##name(const void *vi, void *vo,            \
                                                            uint64_t n, tally_carry *cy)         \
    {                                                                                            \
        const C *x = vi;                                                                         \
        C *o = vo;                                                                               \
        C c = cy->name;                                                                          \
        for (uint64_t i = 0; i < n; i++) {                                                       \
            C a = c, b = x[i];                                                                   \
            c = OPEXPR;                                                                          \
            o[i] = c;                                                                            \
        }                                                                                        \
        cy->name = c;                                                                            \
    }                                                                                            \
    static TK_MAYBE_UNUSED void scan_excl_##opname##_##name(const void *vi, void *vo,            \
                                                            uint64_t n, tally_carry *cy)         \
    {                                                                                            \
        const C *x = vi;                                                                         \
        C *o = vo;                                                                               \
        C c = cy->name;                                                                          \
        for (uint64_t i = 0; i < n; i++) {                                                       \
            C a = c, b = x[i];                                                                   \
            o[i] = c;                                                                            \
            c = OPEXPR;                                                                          \
        }                                                                                        \
        cy->name = c;                                                                            \
    }                                                                                            \
    static TK_MAYBE_UNUSED void scan_total_##opname##_##name(const void *vi, uint64_t n,         \
                                                             tally_carry *cy)                    \
    {                                                                                            \
        const C *x = vi;                                                                         \
        C c = cy->name;                                                                          \
        for (uint64_t i = 0; i < n; i++) {                                                       \
            C a = c, b = x[i];                                                                   \
            c = OPEXPR;                                                                          \
        }                                                                                        \
        cy->name = c;                                                                            \
    }

/* Float sum/prod: tally.h's order. A block is cut into groups of TK_SG consecutive elements
 * (a partial group only at the end of the data). Within a group a fixed log-step prefix
 * (tk_gprefix): p = x; for s = 1, 2, 4: p[k] = p[k-s] op p[k] where k mod 8 >= s (each half
 * of 8 on its own); then p[k] = p[7] op p[k] for k >= 8. A local running value L, the
 * identity at the block start, gives the group's local values l[k] = L op p[k], and L becomes
 * the group's last l. Outputs: carry op l[k] (inclusive), carry op (the previous element's l,
 * or the identity at the block start) (exclusive). Every path runs this one vector code (GCC
 * vector extensions: the compiler maps a group onto the ISA's registers, or onto plain
 * scalar code), and the lanes that a step leaves alone take `identity op p[k]`, which is
 * p[k] exactly: so every path gives the same bits. */
#define TK_SG 16
/* Constant shuffles: index i < L picks a[i], L + i picks b[i] (kernels_simd.h's TK_SHUF) */
#if defined(__clang__)
#define TK_FSHUF(V, a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define TK_FSHUF(V, a, b, ...) __builtin_shuffle(a, b, (V){__VA_ARGS__})
#endif
/* The wide form: a group in one vector of 16 (AVX-512 f32); the half form: two vectors of 8
 * (the others). The same operations on the same values, so the same bits. */
#if !defined(TALLY_KSCALAR) && defined(__AVX512F__)
#define TK_FSCAN_WIDE(C) (sizeof(C) == 4)
#else
#define TK_FSCAN_WIDE(C) 0
#endif
/* the 8-block totals (ftot8): f64 on AVX-512 (0.20 cycles per element against 0.41 block by
 * block, in L2). Not f32 on AVX2: without two-register lane permutes it was no faster. */
#if !defined(TALLY_KSCALAR) && defined(__AVX512F__)
#define TK_FTOT8_F32 0
#define TK_FTOT8_F64 1
#else
#define TK_FTOT8_F32 0
#define TK_FTOT8_F64 0
#endif
#define TK_FSCAN_GROUP(opname, name, C, OP, IDENT, IC)                                           \
    typedef C tk_g_##opname##_##name __attribute__((vector_size(TK_SG * sizeof(C))));            \
    typedef IC tk_gi_##opname##_##name __attribute__((vector_size(TK_SG * sizeof(C))));          \
    typedef C tk_h_##opname##_##name __attribute__((vector_size(8 * sizeof(C))));                \
    typedef IC tk_hi_##opname##_##name __attribute__((vector_size(8 * sizeof(C))));              \
    static inline __attribute__((always_inline)) void                                            \
    tk_gprefix_##opname##_##name(tk_g_##opname##_##name *pp, const tk_g_##opname##_##name *idp)  \
    {                                                                                            \
        typedef tk_gi_##opname##_##name I;                                                       \
        tk_g_##opname##_##name p = *pp, id = *idp;                                               \
        p = TK_FSHUF(I, p, id, 16, 0, 1, 2, 3, 4, 5, 6, 16, 8, 9, 10, 11, 12, 13, 14)            \
            OP p;                                                                                \
        p = TK_FSHUF(I, p, id, 16, 16, 0, 1, 2, 3, 4, 5, 16, 16, 8, 9, 10, 11, 12, 13)           \
            OP p;                                                                                \
        p = TK_FSHUF(I, p, id, 16, 16, 16, 16, 0, 1, 2, 3, 16, 16, 16, 16, 8, 9, 10, 11)         \
            OP p;                                                                                \
        p = TK_FSHUF(I, p, id, 16, 16, 16, 16, 16, 16, 16, 16, 7, 7, 7, 7, 7, 7, 7, 7)           \
            OP p;                                                                                \
        *pp = p;                                                                                 \
    }                                                                                            \
    static inline __attribute__((always_inline)) void                                            \
    tk_hprefix_##opname##_##name(tk_h_##opname##_##name *pp, const tk_h_##opname##_##name *idp)  \
    {                                                                                            \
        typedef tk_hi_##opname##_##name I;                                                       \
        tk_h_##opname##_##name p = *pp, id = *idp;                                               \
        p = TK_FSHUF(I, p, id, 8, 0, 1, 2, 3, 4, 5, 6) OP p;                                     \
        p = TK_FSHUF(I, p, id, 8, 8, 0, 1, 2, 3, 4, 5) OP p;                                     \
        p = TK_FSHUF(I, p, id, 8, 8, 8, 8, 0, 1, 2, 3) OP p;                                     \
        *pp = p;                                                                                 \
    }                                                                                            \
    /* A group x[0..16) (the missing elements of a partial group the identity: no lane reads a   \
     * later one): its outputs into w (NULL: none) and *L, the local value, in every lane,       \
     * becomes its element mlast's. The wide form (one vector of 16) and the half form (two      \
     * of 8) do the same operations on the same values. */                                       \
    static inline __attribute__((always_inline)) void                                            \
    tk_fgroup_w_##opname##_##name(const C *x, C *w, tk_g_##opname##_##name *L,                   \
                                  const tk_g_##opname##_##name *cvp,                             \
                                  const tk_g_##opname##_##name *idp, int excl, int mlast)        \
    {                                                                                            \
        const tk_g_##opname##_##name cv = *cvp, id = *idp;                                       \
        typedef tk_g_##opname##_##name V;                                                        \
        typedef tk_gi_##opname##_##name J;                                                       \
        V v;                                                                                     \
        memcpy(&v, x, sizeof v);                                                                 \
        tk_gprefix_##opname##_##name(&v, &id);                                                   \
        if (w) {                                                                                 \
            V l = *L OP v;                                                                       \
            if (excl) l = TK_FSHUF(J, l, *L, 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,           \
                                                      12, 13, 14);                               \
            V o = cv OP l;                                                                       \
            memcpy(w, &o, sizeof o);                                                             \
        }                                                                                        \
        if (mlast == TK_SG - 1) {                                                                \
            *L = *L OP TK_FSHUF(J, v, v, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, \
                                15, 15);                                                         \
        } else { /* a partial group */                                                           \
            V e;                                                                                 \
            for (int k = 0; k < TK_SG; k++) e[k] = v[mlast];                                     \
            *L = *L OP e;                                                                        \
        }                                                                                        \
    }                                                                                            \
    static inline __attribute__((always_inline)) void                                            \
    tk_fgroup_h_##opname##_##name(const C *x, C *w, tk_h_##opname##_##name *L,                   \
                                  const tk_h_##opname##_##name *cvp,                             \
                                  const tk_h_##opname##_##name *idp, int excl, int mlast)        \
    {                                                                                            \
        const tk_h_##opname##_##name cv = *cvp, id = *idp;                                       \
        typedef tk_h_##opname##_##name H;                                                        \
        typedef tk_hi_##opname##_##name I;                                                       \
        H a, b;                                                                                  \
        memcpy(&a, x, sizeof a);                                                                 \
        memcpy(&b, x + 8, sizeof b);                                                             \
        tk_hprefix_##opname##_##name(&a, &id);                                                   \
        tk_hprefix_##opname##_##name(&b, &id);                                                   \
        b = TK_FSHUF(I, a, a, 7, 7, 7, 7, 7, 7, 7, 7) OP b;                                      \
        if (w) {                                                                                 \
            H la = *L OP a, lb = *L OP b;                                                        \
            if (excl) {                                                                          \
                lb = TK_FSHUF(I, lb, la, 15, 0, 1, 2, 3, 4, 5, 6);                               \
                la = TK_FSHUF(I, la, *L, 8, 0, 1, 2, 3, 4, 5, 6);                                \
            }                                                                                    \
            la = cv OP la;                                                                       \
            lb = cv OP lb;                                                                       \
            memcpy(w, &la, sizeof la);                                                           \
            memcpy(w + 8, &lb, sizeof lb);                                                       \
        }                                                                                        \
        if (mlast == TK_SG - 1) {                                                                \
            *L = *L OP TK_FSHUF(I, b, b, 7, 7, 7, 7, 7, 7, 7, 7);                                \
        } else { /* a partial group */                                                           \
            H e;                                                                                 \
            for (int k = 0; k < 8; k++) e[k] = mlast < 8 ? a[mlast] : b[mlast - 8];              \
            *L = *L OP e;                                                                        \
        }                                                                                        \
    }                                                                                            \
    /* n elements from a group boundary of a block; c: the block's carry; *lp: L (the identity   \
     * at the block start), afterwards the last element's l. out NULL: only *lp. */              \
    static inline __attribute__((always_inline)) void                                            \
    tk_fscan_body_##opname##_##name(const C *x, C *o, uint64_t n, C c, C *lp, int excl)          \
    {                                                                                            \
        typedef tk_g_##opname##_##name V;                                                        \
        typedef tk_h_##opname##_##name H;                                                        \
        V idw, cw, Lw;                                                                           \
        H id, cv, L;                                                                             \
        for (int k = 0; k < TK_SG; k++) {                                                        \
            idw[k] = (C)(IDENT);                                                                 \
            cw[k] = c;                                                                           \
            Lw[k] = *lp;                                                                         \
        }                                                                                        \
        for (int k = 0; k < 8; k++) {                                                            \
            id[k] = (C)(IDENT);                                                                  \
            cv[k] = c;                                                                           \
            L[k] = *lp;                                                                          \
        }                                                                                        \
        C t[TK_SG], w[TK_SG];                                                                    \
        uint64_t i = 0;                                                                          \
        if (TK_FSCAN_WIDE(C)) {                                                                  \
            for (; i + TK_SG <= n; i += TK_SG)                                                   \
                tk_fgroup_w_##opname##_##name(x + i, o ? o + i : NULL, &Lw, &cw, &idw, excl,     \
                                              TK_SG - 1);                                        \
            if (i < n) { /* a partial group */                                                   \
                for (int k = 0; k < TK_SG; k++) t[k] = (C)(IDENT);                               \
                memcpy(t, x + i, (n - i) * sizeof(C));                                           \
                tk_fgroup_w_##opname##_##name(t, o ? w : NULL, &Lw, &cw, &idw, excl,             \
                                              (int)(n - i - 1));                                 \
                if (o) memcpy(o + i, w, (n - i) * sizeof(C));                                    \
            }                                                                                    \
            *lp = Lw[0];                                                                         \
            return;                                                                              \
        }                                                                                        \
        for (; i + TK_SG <= n; i += TK_SG)                                                       \
            tk_fgroup_h_##opname##_##name(x + i, o ? o + i : NULL, &L, &cv, &id, excl, TK_SG - 1); \
        if (i < n) { /* a partial group */                                                       \
            for (int k = 0; k < TK_SG; k++) t[k] = (C)(IDENT);                                   \
            memcpy(t, x + i, (n - i) * sizeof(C));                                               \
            tk_fgroup_h_##opname##_##name(t, o ? w : NULL, &L, &cv, &id, excl, (int)(n - i - 1)); \
            if (o) memcpy(o + i, w, (n - i) * sizeof(C));                                        \
        }                                                                                        \
        *lp = L[0];                                                                              \
    }                                                                                            \
    static void fscan_##opname##_##name(const void *vi, void *vo, uint64_t n,                    \
                                        const tally_carry *cy, tally_carry *lp, int excl)        \
    {                                                                                            \
        if (!vo) tk_fscan_body_##opname##_##name(vi, NULL, n, 0, &lp->name, 0);                  \
        else if (excl) tk_fscan_body_##opname##_##name(vi, vo, n, cy->name, &lp->name, 1);       \
        else tk_fscan_body_##opname##_##name(vi, vo, n, cy->name, &lp->name, 0);                 \
    }                                                                                            \
    static void scan_incl_##opname##_##name(const void *vi, void *vo, uint64_t n,                \
                                            tally_carry *cy)                                     \
    {                                                                                            \
        tally_carry l;                                                                           \
        l.name = (C)(IDENT);                                                                     \
        fscan_##opname##_##name(vi, vo, n, cy, &l, 0);                                           \
        cy->name = cy->name OP l.name;                                                           \
    }                                                                                            \
    static void scan_excl_##opname##_##name(const void *vi, void *vo, uint64_t n,                \
                                            tally_carry *cy)                                     \
    {                                                                                            \
        tally_carry l;                                                                           \
        l.name = (C)(IDENT);                                                                     \
        fscan_##opname##_##name(vi, vo, n, cy, &l, 1);                                           \
        cy->name = cy->name OP l.name;                                                           \
    }                                                                                            \
    static void scan_total_##opname##_##name(const void *vi, uint64_t n, tally_carry *cy)        \
    {                                                                                            \
        tally_carry l;                                                                           \
        l.name = (C)(IDENT);                                                                     \
        fscan_##opname##_##name(vi, NULL, n, cy, &l, 0);                                         \
        cy->name = cy->name OP l.name;                                                           \
    }                                                                                                 \
    /* The totals of 16 whole blocks at once (block k's from x + k * TALLY_SCAN_BLOCK) into       \
     * tot[0..16), each identity op its last local value, as scan_total gives it. A group's     \
     * total (the prefix's last lane) is the balanced tree of its 16 elements, lower half on     \
     * the left at every level: so the groups of 16 blocks are added as pairs of even and odd    \
     * lanes, four times, which leaves block k's group total in lane k, and the 16 blocks'     \
     * local values advance side by side, one vector op per 16 groups: one dependent op per      \
     * group of one block made the totals pass latency-bound. Wide form only (AVX-512 f32). */  \
    static TK_MAYBE_UNUSED void ftot16_##opname##_##name(const void *vi, tally_carry *tot)       \
    {                                                                                            \
        typedef tk_g_##opname##_##name V;                                                        \
        typedef tk_gi_##opname##_##name J;                                                       \
        const C *x = vi;                                                                         \
        V L, id;                                                                                 \
        for (int k = 0; k < TK_SG; k++) L[k] = id[k] = (C)(IDENT);                               \
        for (uint64_t g = 0; g < TALLY_SCAN_BLOCK; g += TK_SG) {                                 \
            V v[TK_SG];                                                                          \
            for (int b = 0; b < TK_SG; b++)                                                      \
                memcpy(&v[b], x + (uint64_t)b * TALLY_SCAN_BLOCK + g, sizeof v[b]);              \
            for (int w = TK_SG; w > 1; w /= 2)                                                   \
                for (int i = 0; i < w / 2; i++)                                                  \
                    v[i] = TK_FSHUF(J, v[2 * i], v[2 * i + 1], 0, 2, 4, 6, 8, 10, 12, 14, 16,    \
                                    18, 20, 22, 24, 26, 28, 30)                                  \
                        OP TK_FSHUF(J, v[2 * i], v[2 * i + 1], 1, 3, 5, 7, 9, 11, 13, 15, 17,    \
                                    19, 21, 23, 25, 27, 29, 31);                                 \
            L = L OP v[0];                                                                       \
        }                                                                                        \
        L = id OP L;                                                                             \
        for (int k = 0; k < TK_SG; k++) tot[k].name = L[k];                                      \
    }                                                                                                 \
    /* The same for 8 whole blocks in vectors of 8 (AVX-512 f64): a group is two                  \
     * vectors (its halves); the first round pairs the two halves of one group, the next three   \
     * pair groups of different blocks, which leaves block k's group total in lane k. */         \
    static TK_MAYBE_UNUSED void ftot8_##opname##_##name(const void *vi, tally_carry *tot)        \
    {                                                                                            \
        typedef tk_h_##opname##_##name H;                                                        \
        typedef tk_hi_##opname##_##name I;                                                       \
        const C *x = vi;                                                                         \
        H L, id;                                                                                 \
        for (int k = 0; k < 8; k++) L[k] = id[k] = (C)(IDENT);                                   \
        for (uint64_t g = 0; g < TALLY_SCAN_BLOCK; g += TK_SG) {                                 \
            H v[16];                                                                             \
            for (int b = 0; b < 8; b++) {                                                        \
                memcpy(&v[2 * b], x + (uint64_t)b * TALLY_SCAN_BLOCK + g, sizeof v[0]);          \
                memcpy(&v[2 * b + 1], x + (uint64_t)b * TALLY_SCAN_BLOCK + g + 8, sizeof v[0]);  \
            }                                                                                    \
            for (int w = 16; w > 1; w /= 2)                                                      \
                for (int i = 0; i < w / 2; i++)                                                  \
                    v[i] = TK_FSHUF(I, v[2 * i], v[2 * i + 1], 0, 2, 4, 6, 8, 10, 12, 14)        \
                        OP TK_FSHUF(I, v[2 * i], v[2 * i + 1], 1, 3, 5, 7, 9, 11, 13, 15);       \
            L = L OP v[0];                                                                       \
        }                                                                                        \
        L = id OP L;                                                                             \
        for (int k = 0; k < 8; k++) tot[k].name = L[k];                                          \
    }

#define TK_INT_SCANS(E, name, C, is_int, sgn, W)                                                 \
    TK_SCAN_ASSOC(sum, name, C, TK_ISUM(C, TK_U_##name, a, b))                                   \
    TK_SCAN_ASSOC(prod, name, C, TK_IPROD(C, TK_U_##name, a, b))                                 \
    TK_SCAN_ASSOC(min, name, C, TK_MIN(a, b))                                                    \
    TK_SCAN_ASSOC(max, name, C, TK_MAX(a, b))                                                    \
    TK_SCAN_ASSOC(and, name, C, (C)(a & b))                                                      \
    TK_SCAN_ASSOC(or, name, C, (C)(a | b))                                                       \
    TK_SCAN_ASSOC(xor, name, C, (C)(a ^ b))
TALLY_INT_TYPES(TK_INT_SCANS)

#define TK_GI_f32 int32_t
#define TK_GI_f64 int64_t
#define TK_FLOAT_SCANS(E, name, C, is_int, sgn, W)                                               \
    TK_FSCAN_GROUP(sum, name, C, +, -0.0, TK_GI_##name)                                         \
    TK_FSCAN_GROUP(prod, name, C, *, 1.0, TK_GI_##name)                                          \
    TK_SCAN_ASSOC(min, name, C, tk_fmin_##name(a, b))                                            \
    TK_SCAN_ASSOC(max, name, C, tk_fmax_##name(a, b))
TALLY_FLOAT_TYPES(TK_FLOAT_SCANS)

#include "cpu/kernels_simd.h"
#ifndef TK_ISCAN
#define TK_ISCAN(kind, opname, name) scan_##kind##_##opname##_##name
#endif

/* Float min/max scans through order keys. For floats that are not NaN, the signed integer key
 * b ^ ((b >> (W-1)) >>> 1) of the bits b orders as IEEE 754-2019 minimum/maximum do (-0 < +0)
 * and equal keys are equal bits, so the integer scan of the keys, keyed back (the map is its own
 * inverse), gives the bits of the scalar scan, at the integer scan's speed. A chunk with a NaN
 * (or a NaN carry) goes to the scalar scan from there on: the first NaN sticks. */
#define TK_KCHUNK 256
#define TK_KEY_f32 int32_t
#define TK_KEY_f64 int64_t
#define TK_UKEY_f32 uint32_t
#define TK_UKEY_f64 uint64_t
#define TK_KN_f32 i32
#define TK_KN_f64 i64
#define TK_ISCAN_X(kind, opname, kname) TK_ISCAN(kind, opname, kname)
#define TK_KEYED_SCAN(kind, opname, name, C)                                                     \
    static TK_MAYBE_UNUSED void kscan_##kind##_##opname##_##name(const void *vi, void *vo,       \
                                                                 uint64_t n, tally_carry *cy)    \
    {                                                                                            \
        typedef TK_KEY_##name K;                                                                 \
        typedef TK_UKEY_##name U;                                                                \
        const C *x = vi;                                                                         \
        C *o = vo;                                                                               \
        K a[TK_KCHUNK], b[TK_KCHUNK];                                                            \
        uint64_t i = 0;                                                                          \
        while (i < n && cy->name == cy->name) {                                                  \
            uint64_t m = n - i < TK_KCHUNK ? n - i : TK_KCHUNK;                                  \
            int nan = 0;                                                                         \
            for (uint64_t k = 0; k < m; k++) {                                                   \
                K v;                                                                             \
                memcpy(&v, x + i + k, sizeof v);                                                 \
                nan |= x[i + k] != x[i + k];                                                     \
                a[k] = v ^ (K)((U)(v >> (sizeof(K) * 8 - 1)) >> 1);                              \
            }                                                                                    \
            if (nan) break;                                                                      \
            tally_carry kc;                                                                      \
            memcpy(&kc.TK_KN_##name, &cy->name, sizeof(K));                                      \
            kc.TK_KN_##name ^= (K)((U)(kc.TK_KN_##name >> (sizeof(K) * 8 - 1)) >> 1);            \
            TK_ISCAN_X(kind, opname, TK_KN_##name)(a, b, m, &kc);                                \
            for (uint64_t k = 0; k < m; k++) {                                                   \
                K v = b[k] ^ (K)((U)(b[k] >> (sizeof(K) * 8 - 1)) >> 1);                         \
                memcpy(o + i + k, &v, sizeof v);                                                 \
            }                                                                                    \
            kc.TK_KN_##name ^= (K)((U)(kc.TK_KN_##name >> (sizeof(K) * 8 - 1)) >> 1);            \
            memcpy(&cy->name, &kc.TK_KN_##name, sizeof(K));                                      \
            i += m;                                                                              \
        }                                                                                        \
        if (i < n) scan_##kind##_##opname##_##name(x + i, o + i, n - i, cy);                    \
    }
#define TK_KEYED_TOTAL(opname, name, C, CMP)                                                     \
    static TK_MAYBE_UNUSED void kscan_total_##opname##_##name(const void *vi, uint64_t n,        \
                                                              tally_carry *cy)                   \
    {                                                                                            \
        typedef TK_KEY_##name K;                                                                 \
        typedef TK_UKEY_##name U;                                                                \
        const C *x = vi;                                                                         \
        K c;                                                                                     \
        memcpy(&c, &cy->name, sizeof c);                                                         \
        int nan = cy->name != cy->name;                                                          \
        c ^= (K)((U)(c >> (sizeof(K) * 8 - 1)) >> 1);                                            \
        for (uint64_t i = 0; i < n; i++) {                                                       \
            K k;                                                                                 \
            memcpy(&k, x + i, sizeof k);                                                         \
            nan |= x[i] != x[i];                                                                 \
            k ^= (K)((U)(k >> (sizeof(K) * 8 - 1)) >> 1);                                        \
            c = k CMP c ? k : c;                                                                 \
        }                                                                                        \
        if (nan) {                                                                               \
            scan_total_##opname##_##name(vi, n, cy);                                             \
            return;                                                                              \
        }                                                                                        \
        c ^= (K)((U)(c >> (sizeof(K) * 8 - 1)) >> 1);                                            \
        memcpy(&cy->name, &c, sizeof c);                                                         \
    }
#define TK_KEYED_SCANS(E, name, C, is_int, sgn, W)                                               \
    TK_KEYED_SCAN(incl, min, name, C)                                                            \
    TK_KEYED_SCAN(excl, min, name, C)                                                            \
    TK_KEYED_SCAN(incl, max, name, C)                                                            \
    TK_KEYED_SCAN(excl, max, name, C)                                                            \
    TK_KEYED_TOTAL(min, name, C, <)                                                              \
    TK_KEYED_TOTAL(max, name, C, >)
TALLY_FLOAT_TYPES(TK_KEYED_SCANS)
/* the float entries of the scan tables */
#define TK_FSCAN_FN_sum(kind, name) scan_##kind##_sum_##name
#define TK_FSCAN_FN_prod(kind, name) scan_##kind##_prod_##name
/* min/max: the fused vector scans where the ISA has them (kernels_simd.h), else the keyed ones */
#ifdef TK_FKSCAN
#define TK_FSCAN_FN_min(kind, name) TK_FSCAN_MM_##kind(min, name)
#define TK_FSCAN_FN_max(kind, name) TK_FSCAN_MM_##kind(max, name)
#define TK_FSCAN_MM_incl(opname, name) fkscan_incl_##opname##_##name
#define TK_FSCAN_MM_excl(opname, name) fkscan_excl_##opname##_##name
#define TK_FSCAN_MM_total(opname, name) TK_RT_TOTAL_##name(opname)
#if TK_VB == 64
#define TK_RT_TOTAL_f32(opname) frtotal1_##opname##_f32
#define TK_RT_TOTAL_f64(opname) frtotal1_##opname##_f64
#elif TK_RTOTAL_F64
#define TK_RT_TOTAL_f32(opname) frtotal_##opname##_f32
#define TK_RT_TOTAL_f64(opname) frtotal_##opname##_f64
#else
#define TK_RT_TOTAL_f32(opname) frtotal_##opname##_f32
#define TK_RT_TOTAL_f64(opname) fktotal_##opname##_f64
#endif
#else
#define TK_FSCAN_FN_min(kind, name) kscan_##kind##_min_##name
#define TK_FSCAN_FN_max(kind, name) kscan_##kind##_max_##name
#endif

/* ---- the table ------------------------------------------------------------------------------ */
#define TK_E_ISUM(E, name, C, i, s, W) [TALLY_##E] = isum_##name,
#define TK_E_MINMAX(E, name, C, i, s, W) [TALLY_##E] = minmax_##name,
#define TK_E_FINDKEY(E, name, C, i, s, W) [TALLY_##E] = find_key_##name,
#define TK_E_FINDNAN(E, name, C, i, s, W) [TALLY_##E] = find_nan_##name,
#define TK_E_IPROD(E, name, C, i, s, W) [TALLY_##E] = iprod_##name,
#define TK_E_FPROD(E, name, C, i, s, W) [TALLY_##E] = fprod_block_##name,
#define TK_E_TOF64(E, name, C, i, s, W) [TALLY_##E] = to_f64_##name,
/* scan tables: [op][type], the scan ops of the op table over the types each takes (integer
 * types through TK_ISCAN, which the SIMD paths override) */
#define TK_SCAN_ROW(kind, E, opname, scan_ok, float_ok, result, needs, identity)                 \
    TALLY_KEEP_IF_##scan_ok(                                                                     \
        [TALLY_##E] = {TALLY_TYPE_ROWS(TK_SCAN_ENTRY, (kind, opname, float_ok))}, )
#define TK_SCAN_ENTRY(ctx, E, name, C, is_int, sgn, W)                                           \
    TK_SCAN_ENTRY_(TALLY_UNPACK_ ctx, E, name, is_int)
#define TK_SCAN_ENTRY_(...) TK_SCAN_ENTRY__(__VA_ARGS__)
#define TK_SCAN_ENTRY__(kind, opname, float_ok, E, name, is_int)                                 \
    TK_SCAN_FN_##is_int##float_ok(kind, opname, E, name)
#define TK_SCAN_FN_11(kind, opname, E, name) [TALLY_##E] = TK_ISCAN(kind, opname, name),
#define TK_SCAN_FN_10(kind, opname, E, name) [TALLY_##E] = TK_ISCAN(kind, opname, name),
#define TK_SCAN_FN_01(kind, opname, E, name) [TALLY_##E] = TK_FSCAN_FN_##opname(kind, name),
#define TK_SCAN_FN_00(kind, opname, E, name)
#define TK_SCAN_TABLE(kind) {TALLY_OP_ROWS(TK_SCAN_ROW, kind)}

const tally_cpu_kernels TALLY_KTABLE = {
    .name = TALLY_KNAME,
    .isum = {TALLY_INT_TYPES(TK_E_ISUM)},
    .minmax = {TALLY_TYPES(TK_E_MINMAX)},
    .find_key = {TALLY_TYPES(TK_E_FINDKEY)},
    .find_nan = {TALLY_FLOAT_TYPES(TK_E_FINDNAN)},
    .bits = bits_words,
    .iprod = {TALLY_INT_TYPES(TK_E_IPROD)},
    .fprod_block = {TALLY_FLOAT_TYPES(TK_E_FPROD)},
    .to_f64 = {TALLY_INT_TYPES(TK_E_TOF64)},
    .stream_copy = tk_stream_copy,
    .stream_fence = tk_stream_fence,
    .fscan = {{[TALLY_F32] = fscan_sum_f32, [TALLY_F64] = fscan_sum_f64},
              {[TALLY_F32] = fscan_prod_f32, [TALLY_F64] = fscan_prod_f64}},
    .ftot16 = {TK_FSCAN_WIDE(float) ? ftot16_sum_f32 : NULL,
               TK_FSCAN_WIDE(float) ? ftot16_prod_f32 : NULL},
    .ftot8 = {{[TALLY_F32] = TK_FTOT8_F32 ? ftot8_sum_f32 : NULL,
               [TALLY_F64] = TK_FTOT8_F64 ? ftot8_sum_f64 : NULL},
              {[TALLY_F32] = TK_FTOT8_F32 ? ftot8_prod_f32 : NULL,
               [TALLY_F64] = TK_FTOT8_F64 ? ftot8_prod_f64 : NULL}},
    .scan_incl = TK_SCAN_TABLE(incl),
    .scan_excl = TK_SCAN_TABLE(excl),
    .scan_total = TK_SCAN_TABLE(total),
#ifdef TK_FKSCAN
    .kscan_mm = {{{[TALLY_F32] = kscan_incl_min_f32, [TALLY_F64] = kscan_incl_min_f64},
                  {[TALLY_F32] = kscan_incl_max_f32, [TALLY_F64] = kscan_incl_max_f64}},
                 {{[TALLY_F32] = kscan_excl_min_f32, [TALLY_F64] = kscan_excl_min_f64},
                  {[TALLY_F32] = kscan_excl_max_f32, [TALLY_F64] = kscan_excl_max_f64}}},
    .ktotal_mm = {{[TALLY_F32] = kscan_total_min_f32, [TALLY_F64] = kscan_total_min_f64},
                  {[TALLY_F32] = kscan_total_max_f32, [TALLY_F64] = kscan_total_max_f64}},
    .fktotal_mm = {{[TALLY_F32] = fktotal_min_f32, [TALLY_F64] = fktotal_min_f64},
                   {[TALLY_F32] = fktotal_max_f32, [TALLY_F64] = fktotal_max_f64}},
    .fkscanv_mm = {{{[TALLY_F32] = fkscanv_incl_min_f32, [TALLY_F64] = fkscanv_incl_min_f64},
                    {[TALLY_F32] = fkscanv_incl_max_f32, [TALLY_F64] = fkscanv_incl_max_f64}},
                   {{[TALLY_F32] = fkscanv_excl_min_f32, [TALLY_F64] = fkscanv_excl_min_f64},
                    {[TALLY_F32] = fkscanv_excl_max_f32, [TALLY_F64] = fkscanv_excl_max_f64}}},
#endif
};
