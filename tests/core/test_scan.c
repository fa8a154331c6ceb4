/* Scans: sum, prod, min, max, and, or, xor of every type, inclusive and exclusive (identity or
 * init), in place and not, on every ISA path and thread count {1,2,3}, against a reference that
 * follows tally.h's definition: integers wrap modulo 2^bits; float sum/prod are evaluated in
 * tally.h's fixed order (blocks of 4096 elements, groups of 16 with a log-step prefix each, a
 * running local value per block; written out plainly here, one element at a time); min/max
 * are IEEE minimum/maximum. */
#include "reference.h"
#include "cpu/cpu.h"     /* tally_cpu_set_scan_piece */
#include "cpu/kernels.h" /* the min/max scan kernels, called directly */

#define SCAN_BLOCK 4096

static const uint64_t scan_sizes[] = {0, 1, 2, 3, 7, 16, 17, 63, 65, 1000, 4095, 4096, 4097,
                                      8191, 8193, 16385, 32767, 32769, 65537, 131073, 262147, 800001};
#define N_SCAN_SIZES (sizeof scan_sizes / sizeof scan_sizes[0])

/* ---- reference ---------------------------------------------------------------------------- */
static uint64_t get_bits(tally_type t, const void *x, uint64_t i)
{
    uint64_t v = 0;
    memcpy(&v, (const char *)x + i * tally_type_size(t), tally_type_size(t));
    return v;
}
static void put_bits(tally_type t, void *x, uint64_t i, uint64_t v)
{
    memcpy((char *)x + i * tally_type_size(t), &v, tally_type_size(t));
}
/* bits as a signed/unsigned value for comparisons */
static __int128 bits_value(tally_type t, uint64_t b)
{
    size_t w = tally_type_size(t) * 8;
    if (t_is_signed(t) && w < 64 && ((b >> (w - 1)) & 1)) return (__int128)(int64_t)(b | ~((1ull << w) - 1));
    if (t_is_signed(t)) return (__int128)(int64_t)b;
    return (__int128)b;
}

static uint64_t int_op(tally_type t, tally_op op, uint64_t a, uint64_t b)
{
    size_t w = tally_type_size(t) * 8;
    uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
    switch (op) {
    case TALLY_SUM: return (a + b) & mask;
    case TALLY_PROD: return (a * b) & mask;
    case TALLY_MIN: return bits_value(t, b) < bits_value(t, a) ? b : a;
    case TALLY_MAX: return bits_value(t, b) > bits_value(t, a) ? b : a;
    case TALLY_AND: return a & b;
    case TALLY_OR: return a | b;
    default: return a ^ b;
    }
}

static uint64_t int_identity(tally_type t, tally_op op)
{
    size_t w = tally_type_size(t) * 8;
    uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
    switch (op) {
    case TALLY_PROD: return 1;
    case TALLY_MIN: return t_is_signed(t) ? mask >> 1 : mask;
    case TALLY_MAX: return t_is_signed(t) ? (mask >> 1) + 1 : 0;
    case TALLY_AND: return mask;
    default: return 0;
    }
}

#define REF_FLOAT_SCAN(name, C)                                                                \
    static C fmin_##name(C a, C b)                                                             \
    {                                                                                          \
        if (isnan(a) || isnan(b)) return isnan(a) ? a : b;                                     \
        if (a == b) return signbit(a) ? a : b;                                                 \
        return a < b ? a : b;                                                                  \
    }                                                                                          \
    static C fmax_##name(C a, C b)                                                             \
    {                                                                                          \
        if (isnan(a) || isnan(b)) return isnan(a) ? a : b;                                     \
        if (a == b) return signbit(a) ? b : a;                                                 \
        return a > b ? a : b;                                                                  \
    }                                                                                          \
    static C ref_op_##name(tally_op op, C a, C b) { return op == TALLY_SUM ? a + b : a * b; }  \
    static void ref_scan_##name(tally_op op, const C *x, C *o, uint64_t n, int excl,           \
                                int has_init, double init)                                     \
    {                                                                                          \
        C c;                                                                                   \
        if (has_init) c = (C)init;                                                             \
        else if (op == TALLY_SUM) c = excl ? (C)0.0 : (C)-0.0;                                \
        else if (op == TALLY_PROD) c = 1;                                                      \
        else c = op == TALLY_MIN ? (C)INFINITY : (C)-INFINITY;                                 \
        if (op == TALLY_MIN || op == TALLY_MAX) {                                              \
            for (uint64_t i = 0; i < n; i++) {                                                 \
                C v = x[i];                                                                    \
                if (excl) o[i] = c;                                                            \
                c = op == TALLY_MIN ? fmin_##name(c, v) : fmax_##name(c, v);                   \
                if (!excl) o[i] = c;                                                           \
            }                                                                                  \
            return;                                                                            \
        }                                                                                      \
        for (uint64_t b0 = 0; b0 < n; b0 += SCAN_BLOCK) {                                      \
            uint64_t e = n - b0 < SCAN_BLOCK ? n : b0 + SCAN_BLOCK;                            \
            C L = 0, prev = 0;                                                                 \
            for (uint64_t g = b0; g < e; g += 16) {                                            \
                int m = (int)(e - g < 16 ? e - g : 16), k, s;                                  \
                C p[16];                                                                       \
                for (k = 0; k < m; k++) p[k] = x[g + (uint64_t)k];                             \
                for (s = 1; s < 8; s *= 2)                                                     \
                    for (k = m - 1; k >= 0; k--)                                               \
                        if ((k & 7) >= s) p[k] = ref_op_##name(op, p[k - s], p[k]);            \
                for (k = 8; k < m; k++) p[k] = ref_op_##name(op, p[7], p[k]);                  \
                for (k = 0; k < m; k++) {                                                      \
                    uint64_t i = g + (uint64_t)k;                                              \
                    C l = g == b0 ? p[k] : ref_op_##name(op, L, p[k]);                         \
                    if (excl) o[i] = i == b0 ? c : ref_op_##name(op, c, prev);                 \
                    else o[i] = ref_op_##name(op, c, l);                                       \
                    prev = l;                                                                  \
                }                                                                              \
                L = prev;                                                                      \
            }                                                                                  \
            c = ref_op_##name(op, c, prev);                                                    \
        }                                                                                      \
    }
REF_FLOAT_SCAN(f32, float)
REF_FLOAT_SCAN(f64, double)

static void ref_scan(tally_type t, tally_op op, const void *x, void *o, uint64_t n,
                     const tally_scan_options *so)
{
    if (t == TALLY_F32) {
        ref_scan_f32(op, x, o, n, so->exclusive, so->has_init, so->init.f64);
        return;
    }
    if (t == TALLY_F64) {
        ref_scan_f64(op, x, o, n, so->exclusive, so->has_init, so->init.f64);
        return;
    }
    size_t w = tally_type_size(t) * 8;
    uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
    uint64_t c = int_identity(t, op);
    if (so->has_init) c = (t_is_signed(t) ? (uint64_t)so->init.i64 : so->init.u64) & mask;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = get_bits(t, x, i);
        if (so->exclusive) put_bits(t, o, i, c);
        c = int_op(t, op, c, v);
        if (!so->exclusive) put_bits(t, o, i, c);
    }
}

static int same_elements(tally_type t, const void *a, const void *b, uint64_t n, uint64_t *bad)
{
    for (uint64_t i = 0; i < n; i++) {
        int eq;
        if (t == TALLY_F32) {
            float x = ((const float *)a)[i], y = ((const float *)b)[i];
            eq = (isnan(x) && isnan(y)) || memcmp(&x, &y, 4) == 0;
        } else if (t == TALLY_F64) {
            eq = same_double(((const double *)a)[i], ((const double *)b)[i]);
        } else {
            eq = get_bits(t, a, i) == get_bits(t, b, i);
        }
        if (!eq) { *bad = i; return 0; }
    }
    return 1;
}

static const tally_op scan_ops[] = {TALLY_SUM, TALLY_PROD, TALLY_MIN, TALLY_MAX,
                                    TALLY_AND, TALLY_OR, TALLY_XOR};

/* full: every mode, in place and not, on every thread count; else (big sizes) inclusive and
 * exclusive-with-init, in place on 2 threads only. */
static void check_scans(isa_ctxs *c, tally_type t, const void *x, uint64_t n, void *want,
                        void *got, const char *what, int full)
{
    size_t bytes = n * tally_type_size(t);
    for (size_t oi = 0; oi < 7; oi++) {
        tally_op op = scan_ops[oi];
        if (t_is_float(t) && oi >= 4) break;
        for (int mode = 0; mode < 3; mode++) { /* inclusive, exclusive, exclusive + init */
            if (!full && mode == 1) continue;
            tally_scan_options so;
            memset(&so, 0, sizeof so);
            so.exclusive = mode > 0;
            so.has_init = mode == 2;
            if (t_is_float(t)) so.init.f64 = op == TALLY_PROD ? 1.5 : -2.25;
            else if (t_is_signed(t)) so.init.i64 = op == TALLY_PROD ? -3 : -77;
            else so.init.u64 = op == TALLY_PROD ? 3 : 77;
            ref_scan(t, op, x, want, n, &so);
            for (int k = 0; k < N_THREADS; k++) {
                for (int inplace = 0; inplace <= 1; inplace++) {
                    if (!full && inplace != (k == 1)) continue;
                    memset(got, 0xA5, bytes);
                    if (inplace) memcpy(got, x, bytes);
                    tally_status s = tally_scan(c->ctx[k], op, t, inplace ? got : x, got, n, &so);
                    uint64_t bad = 0;
                    if (s != TALLY_OK || !same_elements(t, got, want, n, &bad)) {
                        print_error("scan %s %s mode=%d inplace=%d n=%llu %s threads=%d (%s): "
                                    "status %s, first difference at %llu\n",
                                    tally_op_name(op), tally_type_name(t), mode, inplace,
                                    (unsigned long long)n, tally_isa_name(c->isa),
                                    test_threads[k], what, tally_status_name(s),
                                    (unsigned long long)bad);
                        fail();
                    }
                }
            }
        }
    }
}

static void test_scans(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    rng_state = 1234;
    uint64_t maxn = scan_sizes[N_SCAN_SIZES - 1];
    void *x = malloc(maxn * 8 + 8), *want = malloc(maxn * 8 + 8), *got = malloc(maxn * 8 + 8);
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        for (size_t s = 0; s < N_SCAN_SIZES; s++) {
            uint64_t n = scan_sizes[s];
            /* the biggest sizes only where they add rounds (bytes > 3 threads x 128 KiB x 2) */
            if (n > 200000 && n * tally_type_size((tally_type)t) > 1100000) continue;
            if (UNDER_SANITIZER && n > 300000) continue;
            fill((tally_type)t, x, n, t_is_float((tally_type)t) && s % 2 ? DATA_PROD : DATA_RANDOM);
            check_scans(c, (tally_type)t, x, n, want, got, "random", n <= 20000);
        }
        if (t_is_float((tally_type)t)) {
            fill((tally_type)t, x, 70001, DATA_SPECIAL);
            check_scans(c, (tally_type)t, x, 70001, want, got, "NaN/inf/-0", 0);
        }
    }
    free(x);
    free(want);
    free(got);
}

static void test_scan_big(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    rng_state = 77;
    uint64_t n = big_n();
    void *x = malloc(n * 8), *want = malloc(n * 8), *got = malloc(n * 8);
    static const tally_type types[] = {TALLY_I32, TALLY_F32, TALLY_F64, TALLY_U8};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        fill(types[t], x, n, DATA_RANDOM);
        size_t bytes = n * tally_type_size(types[t]);
        tally_scan_options so;
        memset(&so, 0, sizeof so);
        ref_scan(types[t], TALLY_SUM, x, want, n, &so);
        for (int k = 0; k < N_THREADS; k++) {
            memset(got, 0, bytes);
            assert_int_equal(tally_scan(c->ctx[k], TALLY_SUM, types[t], x, got, n, NULL), TALLY_OK);
            uint64_t bad = 0;
            if (!same_elements(types[t], got, want, n, &bad)) {
                print_error("big sum scan %s threads=%d: first difference at %llu\n",
                            tally_type_name(types[t]), test_threads[k], (unsigned long long)bad);
                fail();
            }
        }
    }
    free(x);
    free(want);
    free(got);
}

/* Large out-of-place f32 sum and product scans (over 8 MiB: blocks in chunks of whole groups,
 * streaming stores), inclusive, exclusive and exclusive from an init, with a partial last
 * block and piece: the same bits as the reference on every thread count. */
static void test_scan_big_f32(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    rng_state = 99;
    uint64_t n = UNDER_SANITIZER ? 300001ull : 2200001ull;
    float *x = malloc(n * 4), *want = malloc(n * 4), *got = malloc(n * 4);
    static const tally_op ops[] = {TALLY_SUM, TALLY_PROD};
    for (size_t o = 0; o < 2; o++) {
        fill(TALLY_F32, x, n, ops[o] == TALLY_PROD ? DATA_PROD : DATA_RANDOM);
        for (int mode = 0; mode < 3; mode++) {
            tally_scan_options so;
            memset(&so, 0, sizeof so);
            so.exclusive = mode > 0;
            so.has_init = mode == 2;
            so.init.f64 = 0.5;
            ref_scan(TALLY_F32, ops[o], x, want, n, &so);
            for (int k = 0; k < N_THREADS; k++) {
                memset(got, 0, n * 4);
                assert_int_equal(tally_scan(c->ctx[k], ops[o], TALLY_F32, x, got, n, &so), TALLY_OK);
                uint64_t bad = 0;
                if (!same_elements(TALLY_F32, got, want, n, &bad)) {
                    print_error("big f32 %s scan mode=%d threads=%d: first difference at %llu\n",
                                ops[o] == TALLY_SUM ? "sum" : "prod", mode, test_threads[k],
                                (unsigned long long)bad);
                    fail();
                }
            }
        }
    }
    free(x);
    free(want);
    free(got);
}

/* Float min/max scans whose look-back meets +0 against -0: blocks of only -0 and -1 (max) or of
 * only +0 and +1 (min) among blocks that also hold the other zero, so that carries and block
 * totals of both signs of zero meet where the pieces' totals are folded (scan.c, fold_total):
 * IEEE maximum(-0, +0) = +0 and minimum = -0 whichever side each is on. Inclusive and exclusive,
 * every thread count, the same bits as the reference. */
static void test_scan_minmax_zeros(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    rng_state = 4242;
    const uint64_t n = UNDER_SANITIZER ? 300001ull : (1ull << 21) + 3;
    double *x = malloc(n * 8), *want = malloc(n * 8), *got = malloc(n * 8);
    static const tally_type types[] = {TALLY_F32, TALLY_F64};
    for (size_t t = 0; t < 2; t++) {
        for (int mx = 0; mx < 2; mx++) {
            tally_op op = mx ? TALLY_MAX : TALLY_MIN;
            for (uint64_t b = 0; b * 4096 < n; b++) {
                int both = rnd() % 4 == 0; /* else only the zero that loses to the other */
                for (uint64_t i = b * 4096; i < n && i < (b + 1) * 4096; i++) {
                    uint64_t r = rnd() % 8;
                    double v = r < 3 ? (mx ? -1.0 : 1.0) : (r == 7 && both) == mx ? 0.0 : -0.0;
                    if (types[t] == TALLY_F32) ((float *)x)[i] = (float)v;
                    else x[i] = v;
                }
            }
            for (int excl = 0; excl < 2; excl++) {
                tally_scan_options so;
                memset(&so, 0, sizeof so);
                so.exclusive = excl;
                ref_scan(types[t], op, x, want, n, &so);
                for (int k = 0; k < N_THREADS; k++) {
                    memset(got, 0, n * 8);
                    assert_int_equal(tally_scan(c->ctx[k], op, types[t], x, got, n, &so), TALLY_OK);
                    uint64_t bad = 0;
                    if (!same_elements(types[t], got, want, n, &bad)) {
                        print_error("+-0 %s scan %s excl=%d threads=%d: first difference at %llu\n",
                                    mx ? "max" : "min", tally_type_name(types[t]), excl,
                                    test_threads[k], (unsigned long long)bad);
                        fail();
                    }
                }
            }
        }
    }
    free(x);
    free(want);
    free(got);
}

/* A few results stated outright, and proof that the comparison can fail. */
static void test_scan_examples(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    int32_t a[5] = {3, 1, 4, 1, 5}, o[5];
    assert_int_equal(tally_scan(c->ctx[0], TALLY_SUM, TALLY_I32, a, o, 5, NULL), TALLY_OK);
    int32_t w1[5] = {3, 4, 8, 9, 14};
    assert_memory_equal(o, w1, sizeof o);
    tally_scan_options ex = {1, 1, {.i64 = 10}};
    assert_int_equal(tally_scan(c->ctx[0], TALLY_SUM, TALLY_I32, a, o, 5, &ex), TALLY_OK);
    int32_t w2[5] = {10, 13, 14, 18, 19};
    assert_memory_equal(o, w2, sizeof o);
    ex.has_init = 0;
    assert_int_equal(tally_scan(c->ctx[0], TALLY_MAX, TALLY_I32, a, a, 5, &ex), TALLY_OK);
    int32_t w3[5] = {INT32_MIN, 3, 3, 4, 4};
    assert_memory_equal(a, w3, sizeof a);
    uint8_t u[3] = {200, 100, 1}, uo[3];
    assert_int_equal(tally_scan(c->ctx[0], TALLY_SUM, TALLY_U8, u, uo, 3, NULL), TALLY_OK);
    assert_int_equal(uo[1], 44); /* 300 mod 256 */
    assert_int_equal(uo[2], 45);
    int8_t s8[2] = {127, 1}, so8[2];
    assert_int_equal(tally_scan(c->ctx[0], TALLY_SUM, TALLY_I8, s8, so8, 2, NULL), TALLY_OK);
    assert_int_equal(so8[1], -128);
    float f[3] = {-0.0f, NAN, 1.0f}, fo[3];
    assert_int_equal(tally_scan(c->ctx[0], TALLY_MIN, TALLY_F32, f, fo, 3, NULL), TALLY_OK);
    assert_true(fo[0] == 0 && signbit(fo[0]) && isnan(fo[1]) && isnan(fo[2]));
    assert_int_equal(tally_scan(c->ctx[0], TALLY_SUM, TALLY_F32, f, fo, 1, NULL), TALLY_OK);
    assert_true(fo[0] == 0 && signbit(fo[0])); /* inclusive sum keeps -0 */
    /* a reference with a plain running float sum differs from the blocked definition */
    uint64_t n = 3 * SCAN_BLOCK + 5;
    float *x = malloc(n * 4), *want = malloc(n * 4);
    rng_state = 3;
    for (uint64_t i = 0; i < n; i++) x[i] = (float)rnd_unit();
    tally_scan_options inc;
    memset(&inc, 0, sizeof inc);
    ref_scan(TALLY_F32, TALLY_SUM, x, want, n, &inc);
    float run = 0;
    int differs = 0;
    for (uint64_t i = 0; i < n; i++) {
        run += x[i];
        differs |= run != want[i];
    }
    assert_true(differs);
    uint64_t bad;
    want[n - 1] = nextafterf(want[n - 1], 10.0f);
    assert_int_equal(tally_scan(c->ctx[2], TALLY_SUM, TALLY_F32, x, x, n, NULL), TALLY_OK);
    assert_false(same_elements(TALLY_F32, x, want, n, &bad));
    assert_true(bad == n - 1);
    free(x);
    free(want);
}

/* tally.h's error bound for float sum scans, against exact prefix sums: f32 values of both
 * signs from 2^-10 to 2^10 (24 + 20 + 15 bits: every prefix of up to 2^15 of them is exact in
 * long double's 64), inclusive and exclusive from an init. */
static void test_scan_error_bound(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    rng_state = 17;
    const uint64_t n = 7 * SCAN_BLOCK + 77;
    float *x = malloc(n * 4), *got = malloc(n * 4);
    for (uint64_t i = 0; i < n; i++) {
        float v = (float)ldexp(1.0 + rnd_unit(), (int)(rnd_unit() * 20.0) - 10);
        x[i] = (i % 3 == 0) ? -v : v;
    }
    const long double u = ldexpl(1.0L, -24);
    for (int excl = 0; excl < 2; excl++) {
        tally_scan_options so;
        memset(&so, 0, sizeof so);
        so.exclusive = excl;
        so.has_init = excl;
        so.init.f64 = 0.375;
        assert_int_equal(tally_scan(c->ctx[1], TALLY_SUM, TALLY_F32, x, got, n, &so), TALLY_OK);
        long double sum = excl ? 0.375L : 0.0L, mag = excl ? 0.375L : 0.0L;
        double worst = 0;
        for (uint64_t i = 0; i < n; i++) {
            if (!excl) {
                sum += x[i];
                mag += fabsl((long double)x[i]);
            }
            long double d = 260.0L + (long double)(i / SCAN_BLOCK), g = d * u / (1 - d * u);
            long double err = fabsl((long double)got[i] - sum);
            if (err > g * mag) {
                print_error("excl=%d element %llu: error %Lg over the bound %Lg\n", excl,
                            (unsigned long long)i, err, g * mag);
                fail();
            }
            if ((double)(err / (g * mag)) > worst) worst = (double)(err / (g * mag));
            if (excl) {
                sum += x[i];
                mag += fabsl((long double)x[i]);
            }
        }
        assert_true(worst > 0); /* the data does round */
    }
    free(x);
    free(got);
}

/* ---- the float min/max scan kernels on adversarial data --------------------------------------
 * Each ISA path's min/max scan kernels (kernels.h: scan_incl, scan_excl, scan_total), called
 * directly so that every size and carry reaches them: sizes 0..160 and around 256, 1024, 4096
 * (every vector and chunk boundary of every path), data drawn from NaNs with payloads (quiet and
 * signalling, both signs), +-0, +-inf, the smallest and largest subnormals, +-FLT_MIN/MAX and
 * random finite values, a NaN at every position (and a second one after it), every special
 * carry in. Checked bit for bit (NaN payloads included: the first NaN is the one that
 * propagates) against the plain IEEE minimum/maximum loop above (fmin_/fmax_). */
static const char *adv_kname(const tally_cpu_kernels *k) { return k->name; }
#define ADV_MM(E, name, C, U, MB, ONE)                                                                  \
    static const U adv_special_##name[] = {                                                    \
        0, ADV_INF(U, MB), 1, /* +0 (-0 by the sign flip below), +inf, smallest subnormal */   \
        ((U)1 << MB) - 1, (U)1 << MB, /* largest subnormal, smallest normal */                 \
        ADV_INF(U, MB) - 1, ONE}; /* largest finite, 1 */                                      \
    static U adv_nan_##name(uint64_t r)                                                        \
    {                                                                                          \
        U payload = (U)(r % (((U)1 << MB) - 1)) + 1; /* quiet or signalling, never 0 */        \
        return ((r >> 60) & 1 ? ADV_SIGN(U) : 0) | ADV_INF(U, MB) | payload;                   \
    }                                                                                          \
    /* a value that is not NaN: a special one (either sign) or random finite bits */           \
    static U adv_value_##name(void)                                                            \
    {                                                                                          \
        uint64_t r = rnd();                                                                    \
        if (r % 3) {                                                                           \
            U v = adv_special_##name[(r >> 8) % (sizeof adv_special_##name / sizeof(U))];      \
            return (r >> 20) & 1 ? v ^ ADV_SIGN(U) : v;                                        \
        }                                                                                      \
        U v = (U)rnd();                                                                        \
        if ((v & ADV_INF(U, MB)) == ADV_INF(U, MB)) v ^= (U)1 << MB; /* finite */              \
        return v;                                                                              \
    }                                                                                          \
    static C adv_c_##name(U b)                                                                 \
    {                                                                                          \
        C v;                                                                                   \
        memcpy(&v, &b, sizeof v);                                                              \
        return v;                                                                              \
    }                                                                                          \
    /* one kernel call against the reference; returns 0 (and says why) on a difference */     \
    static int adv_check_##name(const tally_cpu_kernels *k, tally_op op, int excl, int keyed,  \
                                const U *x, uint64_t n, U carry, U *want, U *got,              \
                                const char *what)                                              \
    {                                                                                          \
        C c = adv_c_##name(carry);                                                             \
        for (uint64_t i = 0; i < n; i++) {                                                     \
            C v = adv_c_##name(x[i]), prev = c;                                                \
            c = op == TALLY_MIN ? fmin_##name(c, v) : fmax_##name(c, v);                       \
            C o = excl ? prev : c;                                                             \
            memcpy(&want[i], &o, sizeof o);                                                    \
        }                                                                                      \
        U cwant, cgot, ctot, cfk;                                                              \
        memcpy(&cwant, &c, sizeof c);                                                          \
        for (uint64_t i = 0; i < n + 1; i++) got[i] = (U)0x5a5a5a5a5a5a5a5aull;                \
        tally_carry cy, ct;                                                                    \
        memset(&cy, 0, sizeof cy);                                                             \
        memcpy(&cy.name, &carry, sizeof carry);                                                \
        ct = cy;                                                                               \
        if (keyed == 1) { /* the keyed kernels kept beside the fused ones */                  \
            k->kscan_mm[excl][op == TALLY_MAX][TALLY_##E](x, got, n, &cy);                     \
            k->ktotal_mm[op == TALLY_MAX][TALLY_##E](x, n, &ct);                               \
        } else if (keyed == 2) { /* the fused ones testing every vector for NaN (before) */   \
            k->fkscanv_mm[excl][op == TALLY_MAX][TALLY_##E](x, got, n, &cy);                   \
            k->scan_total[op][TALLY_##E](x, n, &ct);                                           \
        } else {                                                                               \
            (excl ? k->scan_excl : k->scan_incl)[op][TALLY_##E](x, got, n, &cy);                \
            k->scan_total[op][TALLY_##E](x, n, &ct);                                           \
        }                                                                                      \
        memcpy(&cgot, &cy.name, sizeof cgot);                                                  \
        memcpy(&ctot, &ct.name, sizeof ctot);                                                  \
        cfk = cwant; /* the totals from order keys that the raw-bits ones replaced */          \
        if (!keyed && k->fktotal_mm[op == TALLY_MAX][TALLY_##E]) {                             \
            tally_carry cf;                                                                    \
            memset(&cf, 0, sizeof cf);                                                         \
            memcpy(&cf.name, &carry, sizeof carry);                                            \
            k->fktotal_mm[op == TALLY_MAX][TALLY_##E](x, n, &cf);                              \
            memcpy(&cfk, &cf.name, sizeof cfk);                                                \
        }                                                                                      \
        if (cfk != cwant) ctot = cfk; /* reported as the total below */                        \
        uint64_t bad = n;                                                                      \
        for (uint64_t i = 0; i < n && bad == n; i++)                                           \
            if (got[i] != want[i]) bad = i;                                                    \
        if (bad < n || cgot != cwant || ctot != cwant || got[n] != (U)0x5a5a5a5a5a5a5a5aull) { \
            print_error("%s %s %s %s n=%llu (%s): element %llu got %llx want %llx, carry out " \
                        "%llx (total %llx) want %llx\n",                                       \
                        adv_kname(k), op == TALLY_MIN ? "min" : "max",                         \
                        keyed == 2 ? (excl ? "excl per-vector" : "incl per-vector")            \
                        : keyed ? (excl ? "excl keyed" : "incl keyed") : excl ? "excl" : "incl", \
                        #name, (unsigned long long)n, what, (unsigned long long)bad,            \
                        (unsigned long long)(bad < n ? got[bad] : got[n]),                     \
                        (unsigned long long)(bad < n ? want[bad] : 0),                         \
                        (unsigned long long)cgot, (unsigned long long)ctot,                    \
                        (unsigned long long)cwant);                                            \
            return 0;                                                                          \
        }                                                                                      \
        return 1;                                                                              \
    }                                                                                          \
    static int adv_all_##name(const tally_cpu_kernels *k, const U *x, uint64_t n, U carry,     \
                              U *want, U *got, const char *what)                               \
    {                                                                                          \
        int ok = 1;                                                                            \
        for (int keyed = 0; keyed <= 2 * (k->ktotal_mm[0][TALLY_##E] != NULL); keyed++)        \
            for (int excl = 0; excl < 2; excl++) {                                             \
                ok &= adv_check_##name(k, TALLY_MIN, excl, keyed, x, n, carry, want, got, what);\
                ok &= adv_check_##name(k, TALLY_MAX, excl, keyed, x, n, carry, want, got, what);\
            }                                                                                  \
        return ok;                                                                             \
    }                                                                                          \
    static int adv_run_##name(const tally_cpu_kernels *k, uint64_t n)                          \
    {                                                                                          \
        U *x = malloc((n + 1) * sizeof(U)), *want = malloc((n + 1) * sizeof(U)),               \
          *got = malloc((n + 1) * sizeof(U));                                                  \
        const U inf = ADV_INF(U, MB), sign = ADV_SIGN(U);                                      \
        const U carries[] = {inf, inf | sign, 0, sign, 1, sign | 1, adv_nan_##name(rnd()),     \
                             adv_nan_##name(rnd()), 0};                                        \
        int ok = 1;                                                                            \
        for (size_t ci = 0; ci < sizeof carries / sizeof carries[0]; ci++) {                   \
            for (uint64_t i = 0; i < n; i++) x[i] = adv_value_##name();                        \
            U cin = ci + 1 == sizeof carries / sizeof carries[0] ? adv_value_##name()          \
                                                                 : carries[ci];                \
            ok &= adv_all_##name(k, x, n, cin, want, got, "no NaN in the data");               \
        }                                                                                      \
        /* one sign throughout (the totals' picks differ by whether both signs occur) */       \
        for (int neg = 0; neg < 2; neg++) {                                                    \
            for (uint64_t i = 0; i < n; i++)                                                   \
                x[i] = neg ? adv_value_##name() | sign : adv_value_##name() & (U)~sign;        \
            U cin = rnd() % 2 ? adv_value_##name() : neg ? inf | sign : inf;                   \
            ok &= adv_all_##name(k, x, n, neg ? cin | sign : cin & (U)~sign, want, got,        \
                                 neg ? "all negative" : "no negative");                        \
        }                                                                                      \
        /* a NaN at every position (beyond 160 elements: at the boundaries), a second after */ \
        for (uint64_t p = 0; p < n && ok; p++) {                                               \
            if (n > 160 && p > 70 && p + 70 < n && p % 64 > 1 && p % 64 < 62) continue;        \
            const U keep = p % 3 ? (U)~(U)0 : (U)~sign; /* a third: no negative value */       \
            for (uint64_t i = 0; i < n; i++) x[i] = adv_value_##name() & keep;                 \
            x[p] = adv_nan_##name(rnd());                                                      \
            if (p + 1 < n && rnd() % 2) x[p + 1 + rnd() % (n - p - 1)] = adv_nan_##name(rnd());\
            ok &= adv_all_##name(k, x, n, adv_value_##name() & keep, want, got,                \
                                 p % 3 ? "NaN in the data" : "NaN among values of sign 0");     \
        }                                                                                      \
        free(x);                                                                               \
        free(want);                                                                            \
        free(got);                                                                             \
        return ok;                                                                             \
    }
#define ADV_SIGN(U) ((U)1 << (sizeof(U) * 8 - 1))
#define ADV_INF(U, MB) ((U)(ADV_SIGN(U) - 1) >> MB << MB) /* exponent all ones */
ADV_MM(F32, f32, float, uint32_t, 23, 0x3f800000u)
ADV_MM(F64, f64, double, uint64_t, 52, 0x3ff0000000000000ull)

static void test_scan_minmax_kernels(void **state)
{
    isa_ctxs *c = *state;
    REQUIRE_ISA(c);
    const tally_cpu_kernels *k = tally_cpu_kernels_for(c->isa);
    rng_state = 4242;
    int ok = 1;
    for (uint64_t n = 0; n <= 160; n++) ok &= adv_run_f32(k, n) & adv_run_f64(k, n);
    static const uint64_t more[] = {255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        ok &= adv_run_f32(k, more[i]) & adv_run_f64(k, more[i]);
    assert_true(ok);
}

/* test_scans runs with 256 KiB scan pieces (many pieces on every thread count, float blocks'
 * totals and carries across several pieces); the big test keeps the default. */
static int small_pieces(void **state, int (*setup)(void **))
{
    int r = setup(state);
    isa_ctxs *c = *state;
    for (int i = 0; i < N_THREADS; i++)
        if (c->ctx[i]) tally_cpu_set_scan_piece(c->ctx[i], 262144);
    return r;
}
static int setup_scalar_sr(void **state) { return small_pieces(state, setup_scalar); }
static int setup_avx2_sr(void **state) { return small_pieces(state, setup_avx2); }
static int setup_avx512_sr(void **state) { return small_pieces(state, setup_avx512); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_scans, setup_scalar_sr, teardown_isa),
        cmocka_unit_test_setup_teardown(test_scans, setup_avx2_sr, teardown_isa),
        cmocka_unit_test_setup_teardown(test_scans, setup_avx512_sr, teardown_isa),
        ISA_TESTS(test_scan_big),
        ISA_TESTS(test_scan_big_f32),
        ISA_TESTS(test_scan_examples),
        ISA_TESTS(test_scan_error_bound),
        ISA_TESTS(test_scan_minmax_kernels),
        ISA_TESTS(test_scan_minmax_zeros),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
