/* libtally_mpi under mpirun -np N: every rank makes the same global array from the same seed,
 * reduces or scans its slice of a random split (empty slices included) through tally_mpi, and
 * checks the result against
 *   - the one-process library (tally_reduce_many / tally_scan / tally_stream over the whole
 *     array on this rank), bit for bit, and
 *   - the independent references of tests/core/reference.h (big fixed-point sums, __int128),
 * with both cross-rank algorithms (MPI user op, our own tree). Float products and float sum /
 * product scans are checked against their documented rules (tally_mpi.h), re-implemented here.
 * Also: a bad argument on one rank, a mismatch between ranks, scans that must not write.
 * The data: the adversarial harness's families (tests/adversarial/families.h: cancellation over
 * the whole exponent range, huge among tiny, ties, subnormals, NaN/inf, integer sums at the edge
 * of overflow, ...) at its sizes around every kernel boundary, and values near 1 for products.
 * Every rank counts its failures; rank 0 prints a summary line and the exit status says it. */
#include <mpi.h>
#include <stdlib.h>
#include "../support/exact_reference.h"
#include "../adversarial/families.h"
#include "../support/check.h"
#include "tally_mpi.h"

/* The same sequence on every rank (splits, roots, product data). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dull;
}
static double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-53; }

/* Values whose products stay in range: near 1 for floats, mostly +-1 with a few 2s and 3s for
 * integers (the core tests' product data). */
static void fill_prod(tally_type t, void *x, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        if (t_is_float(t)) {
            double v = 1.0 + ((double)(int64_t)(r >> 40) - (double)(1 << 23)) * 0x1p-44;
            if (t == TALLY_F32) ((float *)x)[i] = (float)v;
            else ((double *)x)[i] = v;
            continue;
        }
        uint64_t s = (r >> 32) % 4096;
        int64_t v = s == 0 ? 2 : s == 1 ? 3 : (r & 1) ? 1 : -1;
        if (!t_is_signed(t) && v < 0) v = 1;
        memcpy((char *)x + i * tally_type_size(t), &v, tally_type_size(t)); /* little-endian */
    }
}

/* Array number idx of type t from the adversarial families (n <= max_n); *c owns it. */
static const void *adv_array(tally_type t, uint64_t idx, uint64_t max_n, adv_case *c)
{
    adv_limits lim = {max_n, 0, 1u << t};
    if (adv_case_make(0x7a11f00dull, idx * 16 + (uint64_t)t, &lim, c) != 0) return NULL;
    return adv_case_array(c);
}

static int g_rank, g_size;
static int g_verbose;
/* the second algorithm's pass: a third of the sizes (CI runs every rank count on 2 cores) */
static int g_light;


/* ---- splits ------------------------------------------------------------------------------- */
/* A random split of n into g_size slices (the same on every rank: rnd() is seeded alike), with
 * empty slices more often than chance would give. off[r] .. off[r+1]. */
static void make_split(uint64_t n, uint64_t *off)
{
    off[0] = 0;
    off[g_size] = n;
    uint64_t *cuts = malloc(sizeof(uint64_t) * (size_t)(g_size + 1));
    for (int r = 1; r < g_size; r++) {
        uint64_t k = rnd() % 8;
        cuts[r] = k == 0 ? 0 : k == 1 ? n : n ? rnd() % (n + 1) : 0;
        if (k == 2 && n > 8192) cuts[r] = (rnd() % (n / 4096 + 1)) * 4096; /* block-aligned */
    }
    /* sort the cuts */
    for (int i = 1; i < g_size; i++)
        for (int j = i + 1; j < g_size; j++)
            if (cuts[j] < cuts[i]) {
                uint64_t t = cuts[i];
                cuts[i] = cuts[j];
                cuts[j] = t;
            }
    for (int r = 1; r < g_size; r++) off[r] = cuts[r];
    free(cuts);
}

static const uint64_t g_sizes[] = {0, 1, 2, 7, 4095, 4096, 4097, 8193, 30011, 100003};
#define N_SIZES (sizeof g_sizes / sizeof g_sizes[0])

static int valid_reduce_op(tally_type t, tally_op op)
{
    return !(t_is_float(t) && (op == TALLY_AND || op == TALLY_OR || op == TALLY_XOR));
}

static const char *algo_name(void)
{
    tally_mpi_algo a = tally_mpi_set_algo(TALLY_MPI_ALGO_AUTO);
    tally_mpi_set_algo(a);
    return a == TALLY_MPI_ALGO_OP ? "op" : "tree";
}

/* The float product of the slices' reference products, left to right (tally_mpi.h). */
static double ref_prod_fold(tally_type t, const char *x, const uint64_t *off, int omit_nan)
{
    double p = 1.0;
    size_t es = tally_type_size(t);
    for (int r = 0; r < g_size; r++) {
        tally_result rr;
        ref_reduce(t, x + off[r] * es, off[r + 1] - off[r], TALLY_PROD, omit_nan, 0, &rr);
        p = r == 0 ? rr.value.f64 : p * rr.value.f64;
    }
    return p;
}

/* ---- reductions ------------------------------------------------------------------------------ */
static void check_reduce_case(tally_context *ctx, tally_type t, const void *x, uint64_t n,
                              const uint64_t *off, const tally_op *ops, size_t nops, int omit_nan,
                              int ddof, int rooted, const char *what)
{
    size_t es = tally_type_size(t);
    const char *mine = (const char *)x + off[g_rank] * es;
    uint64_t mn = off[g_rank + 1] - off[g_rank];
    tally_reduce_options ro = {omit_nan, ddof};
    tally_result got[TALLY_OP_COUNT], one[TALLY_OP_COUNT];
    memset(got, 0xab, sizeof got);
    tally_status st;
    int root = rooted ? (int)(rnd() % (uint64_t)g_size) : -1;
    if (rooted)
        st = tally_mpi_reduce_many_root(ctx, MPI_COMM_WORLD, root, t, mine, mn, ops, nops, &ro,
                                        g_rank == root ? got : NULL);
    else
        st = tally_mpi_reduce_many(ctx, MPI_COMM_WORLD, t, mine, mn, ops, nops, &ro, got);
    tally_status st1 = tally_reduce_many(ctx, t, x, n, ops, nops, &ro, one);
    CHECK(st == st1, "%s: %s n=%llu: status %s, one process %s (%s)", what, tally_type_name(t),
          (unsigned long long)n, tally_status_name(st), tally_status_name(st1), tally_last_error(ctx));
    if (rooted && g_rank != root) return;
    for (size_t i = 0; i < nops; i++) {
        tally_result want = one[i], ref;
        ref_reduce(t, x, n, ops[i], omit_nan, ddof, &ref);
        if (ops[i] == TALLY_PROD && t_is_float(t)) {
            /* the ranks' products, left to right */
            double p = ref_prod_fold(t, x, off, omit_nan);
            ref.value.f64 = p;
            want.value.f64 = p;
        }
        char g[128], w[128], r[128];
        describe_result(g, sizeof g, &got[i]);
        describe_result(w, sizeof w, &want);
        describe_result(r, sizeof r, &ref);
        CHECK(result_matches(&got[i], &want), "%s [%s]: %s %s n=%llu omit_nan=%d: got %s, one "
              "process %s", what, algo_name(), tally_op_name(ops[i]), tally_type_name(t),
              (unsigned long long)n, omit_nan, g, w);
        CHECK(result_matches(&got[i], &ref), "%s [%s]: %s %s n=%llu omit_nan=%d: got %s, "
              "reference %s", what, algo_name(), tally_op_name(ops[i]), tally_type_name(t),
              (unsigned long long)n, omit_nan, g, r);
    }
}

static void test_reduce(tally_context *ctx)
{
    const int cases = g_light ? 4 : 12;
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        tally_type ty = (tally_type)t;
        size_t es = tally_type_size(ty);
        tally_op all[TALLY_OP_COUNT], noprod[TALLY_OP_COUNT];
        size_t nall = 0, nnp = 0;
        for (int op = 0; op < TALLY_OP_COUNT; op++)
            if (valid_reduce_op(ty, (tally_op)op)) {
                all[nall++] = (tally_op)op;
                if (op != TALLY_PROD) noprod[nnp++] = (tally_op)op;
            }
        uint64_t off[64];
        for (int k = 0; k < cases; k++) {
            adv_case c;
            const void *x = adv_array(ty, (uint64_t)k, 100003, &c);
            if (!x) { CHECK(0, "out of memory"); return; }
            make_split(c.n, off);
            /* every op at once (fused), then (some cases) each op alone, and the rooted form */
            check_reduce_case(ctx, ty, x, c.n, off, all, nall, c.omit_nan, c.ddof, 0, "all ops");
            if (k % 3 == 0)
                for (size_t i = 0; i < nall; i++)
                    check_reduce_case(ctx, ty, x, c.n, off, &all[i], 1, c.omit_nan, 1, 0, "one op");
            if (k % 4 == 1)
                check_reduce_case(ctx, ty, x, c.n, off, noprod, nnp, c.omit_nan, c.ddof, 1, "rooted");
            adv_case_free(&c);
        }
        /* products that stay in range */
        for (size_t si = 0; si < N_SIZES; si += g_light ? 3 : 1) {
            uint64_t n = g_sizes[si];
            void *x = malloc(n * es + 8);
            fill_prod(ty, x, n);
            make_split(n, off);
            tally_op pops[] = {TALLY_PROD, TALLY_SUM, TALLY_MIN};
            check_reduce_case(ctx, ty, x, n, off, pops, 3, 0, 0, 0, "prod");
            free(x);
        }
    }
}

/* Float sums across ranks where only the exact sum survives: huge values cancelling across
 * slices, subnormals, a sum that rounds on a tie. */
static void test_adversarial(tally_context *ctx)
{
    const uint64_t n = 4099;
    double *x = malloc(n * sizeof *x);
    uint64_t off[64];
    for (int fam = 0; fam < 5; fam++) {
        for (uint64_t i = 0; i < n; i++) {
            double s = (i & 1) ? -1.0 : 1.0;
            switch (fam) {
            case 0: x[i] = i < n / 2 ? ldexp(1.0, 1000) * (1 + (double)(i % 7)) : 0; break;
            case 1: x[i] = ldexp(s, -1074) * (double)(rnd() % 5); break; /* subnormals */
            case 2: x[i] = i == 0 ? 1.0 : i == n - 1 ? ldexp(1.0, -53) : 0.0; break; /* a tie */
            case 3: x[i] = ldexp(1.0 + rnd_unit(), (int)(rnd() % 2000) - 1000) * s; break;
            default: x[i] = (rnd() % 3 == 0 ? 1e16 : 1.0) * s; break;
            }
        }
        if (fam == 0) /* the negatives of the first half, in the second half, shuffled */
            for (uint64_t i = 0; i < n / 2; i++) x[n - 1 - i] = -x[i];
        make_split(n, off);
        tally_op ops[] = {TALLY_SUM, TALLY_MEAN, TALLY_VAR, TALLY_MIN, TALLY_ARGMAX};
        check_reduce_case(ctx, TALLY_F64, x, n, off, ops, 5, 0, 0, 0, "adversarial");
        float *xf = malloc(n * sizeof *xf);
        for (uint64_t i = 0; i < n; i++) xf[i] = (float)x[i];
        check_reduce_case(ctx, TALLY_F32, xf, n, off, ops, 5, 0, 0, 0, "adversarial f32");
        free(xf);
    }
    free(x);
}

/* ---- streams ----------------------------------------------------------------------------------- */
static void test_stream(tally_context *ctx)
{
    tally_type types[] = {TALLY_I32, TALLY_U8, TALLY_I64, TALLY_F32, TALLY_F64};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        tally_type t = types[ti];
        size_t es = tally_type_size(t);
        adv_case c;
        const char *x = adv_array(t, 100 + ti, 30011, &c);
        if (!x) { CHECK(0, "out of memory"); return; }
        uint64_t n = c.n;
        uint64_t off[64];
        make_split(n, off);
        tally_op ops[TALLY_OP_COUNT];
        size_t nops = 0;
        for (int op = 0; op < TALLY_OP_COUNT; op++)
            if (valid_reduce_op(t, (tally_op)op) && op != TALLY_PROD) ops[nops++] = (tally_op)op;
        tally_mpi_stream *ms;
        tally_stream *s1;
        tally_reduce_options ro = {0, 1};
        tally_status st = tally_mpi_stream_create(ctx, MPI_COMM_WORLD, t, ops, nops, &ro, &ms);
        CHECK(st == TALLY_OK, "stream create: %s", tally_last_error(ctx));
        tally_stream_create(ctx, t, ops, nops, &ro, &s1);
        tally_stream_update(s1, x, n);
        uint64_t lo = off[g_rank], hi = off[g_rank + 1];
        uint64_t chunk_rng = 0x1234567u + (uint64_t)g_rank; /* rank-local: rnd() stays alike */
        while (lo < hi) { /* random chunks */
            chunk_rng = chunk_rng * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t m = 1 + (chunk_rng >> 33) % 5000;
            if (m > hi - lo) m = hi - lo;
            tally_mpi_stream_update(ms, x + lo * es, m);
            lo += m;
        }
        tally_result got[TALLY_OP_COUNT], want[TALLY_OP_COUNT];
        tally_status sg = tally_mpi_stream_results(ms, got);
        tally_status sw = tally_stream_results(s1, want);
        CHECK(sg == sw, "stream %s: status %s, one process %s", tally_type_name(t),
              tally_status_name(sg), tally_status_name(sw));
        for (size_t i = 0; i < nops; i++) {
            char g[128], w[128];
            describe_result(g, sizeof g, &got[i]);
            describe_result(w, sizeof w, &want[i]);
            CHECK(result_matches(&got[i], &want[i]), "stream %s %s: got %s, one process %s",
                  tally_op_name(ops[i]), tally_type_name(t), g, w);
        }
        tally_mpi_stream_destroy(ms);
        tally_stream_destroy(s1);
        adv_case_free(&c);
    }
}

/* ---- scans ---------------------------------------------------------------------------------- */
/* The documented rule for float sum/prod scans (tally_mpi.h and tally.h): the slice scanned in
 * blocks of 4096 from its start, each output = carry op (the block's local value at it), from
 * the carry c (has_c = 0: the inclusive identity, -0.0 or 1.0). Local values: groups of 16, a
 * log-step prefix p each (p[k] = p[k-s] op p[k] for s = 1, 2, 4 where k mod 8 >= s, then
 * p[k] = p[7] op p[k] for k >= 8); p in the block's first group, L op p after, L the previous
 * group's last local value. Computed in the element type. */
#define RULE(C)                                                                               \
    static C rule_op_##C(int sum, C a, C b) { return (C)(sum ? a + b : a * b); }             \
    static void rule_##C(int sum, int excl, const C *x, C *o, uint64_t n, int has_c, double c0) \
    {                                                                                         \
        C c = has_c ? (C)c0 : (sum ? (C)(excl ? 0.0 : -0.0) : (C)1.0);                        \
        for (uint64_t b = 0; b < n; b += 4096) {                                              \
            uint64_t e = b + 4096 < n ? b + 4096 : n;                                         \
            C L = 0, prev = 0;                                                                \
            for (uint64_t g = b; g < e; g += 16) {                                            \
                int m = (int)(e - g < 16 ? e - g : 16), k, s;                                 \
                C p[16];                                                                      \
                for (k = 0; k < m; k++) p[k] = x[g + (uint64_t)k];                            \
                for (s = 1; s < 8; s *= 2)                                                    \
                    for (k = m - 1; k >= 0; k--)                                              \
                        if ((k & 7) >= s) p[k] = rule_op_##C(sum, p[k - s], p[k]);            \
                for (k = 8; k < m; k++) p[k] = rule_op_##C(sum, p[7], p[k]);                  \
                for (k = 0; k < m; k++) {                                                     \
                    uint64_t i = g + (uint64_t)k;                                             \
                    C l = g == b ? p[k] : rule_op_##C(sum, L, p[k]);                          \
                    if (excl) o[i] = i == b ? c : rule_op_##C(sum, c, prev);                  \
                    else o[i] = rule_op_##C(sum, c, l);                                       \
                    prev = l;                                                                 \
                }                                                                             \
                L = prev;                                                                     \
            }                                                                                 \
            c = rule_op_##C(sum, c, prev);                                                    \
        }                                                                                     \
    }
RULE(float)
RULE(double)

static int same_bits(tally_type t, const void *a, const void *b, uint64_t i)
{
    size_t es = tally_type_size(t);
    if (t_is_float(t)) {
        double x = get_f(t, a, i), y = get_f(t, b, i);
        return same_double(x, y);
    }
    return memcmp((const char *)a + i * es, (const char *)b + i * es, es) == 0;
}

static void check_scan_case(tally_context *ctx, tally_op op, tally_type t, const char *x,
                            uint64_t n, const uint64_t *off, const tally_scan_options *so,
                            int in_place)
{
    size_t es = tally_type_size(t);
    uint64_t lo = off[g_rank], mn = off[g_rank + 1] - lo;
    char *in = malloc(mn * es + 8), *out = malloc(mn * es + 8);
    memcpy(in, x + lo * es, mn * es);
    char *dst = in_place ? in : out;
    tally_status st = tally_mpi_scan(ctx, MPI_COMM_WORLD, op, t, in, dst, mn, so);
    CHECK(st == TALLY_OK, "scan %s %s: %s", tally_op_name(op), tally_type_name(t),
          tally_last_error(ctx));
    int fl = t_is_float(t) && (op == TALLY_SUM || op == TALLY_PROD);
    char *want = malloc(n * es + 8);
    if (!fl) {
        /* exact ops: one process's tally_scan over the concatenation */
        tally_scan(ctx, op, t, x, want, n, so);
        for (uint64_t i = 0; i < mn; i++)
            if (!same_bits(t, dst, want + lo * es, i)) {
                CHECK(0, "scan %s %s excl=%d n=%llu: element %llu of rank %d's slice differs "
                      "from one process", tally_op_name(op), tally_type_name(t),
                      so ? so->exclusive : 0, (unsigned long long)n,
                      (unsigned long long)i, g_rank);
                break;
            }
    } else {
        /* the carry from the reference: exact sum before the slice (bigfix) or the ranks'
         * products left to right, then the block rule from it */
        int excl = so && so->exclusive;
        double init = so && so->has_init ? so->init.f64 : (op == TALLY_SUM ? 0.0 : 1.0);
        if (t == TALLY_F32) init = (double)(float)init;
        int has_c;
        double c = init;
        if (g_rank == 0) {
            has_c = excl; /* rank 0 is tally_scan of its slice: from init, or the identity */
        } else if (op == TALLY_SUM) {
            bigfix b;
            bf_init(&b);
            if (excl) bf_add(&b, init);
            for (uint64_t i = 0; i < lo; i++) bf_add(&b, get_f(t, x, i));
            c = bf_round(&b);
            has_c = excl || lo > 0;
        } else {
            has_c = excl;
            for (int r = 0; r < g_rank; r++) {
                if (off[r + 1] == off[r]) continue;
                tally_result rr;
                ref_reduce(t, x + off[r] * es, off[r + 1] - off[r], TALLY_PROD, 0, 0, &rr);
                c = has_c ? c * rr.value.f64 : rr.value.f64;
                has_c = 1;
            }
        }
        if (t == TALLY_F32) c = (double)(float)c;
        if (t == TALLY_F32) rule_float(op == TALLY_SUM, excl, (const float *)(x + lo * es), (float *)want, mn, has_c, c);
        else rule_double(op == TALLY_SUM, excl, (const double *)(x + lo * es), (double *)want, mn, has_c, c);
        for (uint64_t i = 0; i < mn; i++)
            if (!same_bits(t, dst, want, i)) {
                CHECK(0, "scan %s %s excl=%d n=%llu: element %llu of rank %d's slice: got %.17g, "
                      "rule %.17g", tally_op_name(op), tally_type_name(t), excl,
                      (unsigned long long)n, (unsigned long long)i, g_rank, get_f(t, dst, i),
                      get_f(t, want, i));
                break;
            }
        if (g_rank == 0) { /* rank 0's slice is one process's scan */
            tally_scan(ctx, op, t, x, want, n, so);
            for (uint64_t i = 0; i < mn; i++)
                if (!same_bits(t, dst, want, i)) {
                    CHECK(0, "scan %s %s: rank 0 element %llu differs from one process",
                          tally_op_name(op), tally_type_name(t), (unsigned long long)i);
                    break;
                }
        }
    }
    free(in);
    free(out);
    free(want);
}

static void test_scan(tally_context *ctx)
{
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        tally_type ty = (tally_type)t;
        size_t es = tally_type_size(ty);
        for (int op = 0; op <= TALLY_XOR; op++) {
            if (t_is_float(ty) && op >= TALLY_AND) continue;
            for (size_t si = 0; si < N_SIZES; si += 2) {
                adv_case c;
                uint64_t n;
                char *x;
                if (op == TALLY_PROD) {
                    n = g_sizes[si];
                    x = malloc(n * es + 8);
                    fill_prod(ty, x, n);
                } else {
                    const char *a = adv_array(ty, 200 + si * 8 + (uint64_t)op, 65536, &c);
                    if (!a) { CHECK(0, "out of memory"); return; }
                    n = c.n;
                    x = malloc(n * es + 8);
                    memcpy(x, a, n * es);
                    adv_case_free(&c);
                }
                uint64_t off[64];
                make_split(n, off);
                tally_scan_options so;
                memset(&so, 0, sizeof so);
                check_scan_case(ctx, (tally_op)op, ty, x, n, off, &so, 0);
                so.exclusive = 1;
                check_scan_case(ctx, (tally_op)op, ty, x, n, off, &so, si % 4 == 0);
                so.has_init = 1;
                if (t_is_float(ty)) so.init.f64 = 0.1;
                else if (t_is_signed(ty)) so.init.i64 = -3;
                else so.init.u64 = 5;
                check_scan_case(ctx, (tally_op)op, ty, x, n, off, &so, 1);
                free(x);
            }
        }
    }
}

/* ---- errors ---------------------------------------------------------------------------------- */
static void test_errors(tally_context *ctx)
{
    int bad = g_size - 1;
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    tally_op ops[] = {TALLY_SUM, TALLY_MAX};
    tally_result r[2];
    /* NULL data with n > 0 on the last rank */
    tally_status st = tally_mpi_reduce_many(ctx, MPI_COMM_WORLD, TALLY_F64,
                                            g_rank == bad ? NULL : x, 8, ops, 2, NULL, r);
    CHECK(st == TALLY_ERR_INVALID_ARGUMENT, "NULL data on rank %d: got %s", bad,
          tally_status_name(st));
    CHECK(r[0].status == TALLY_ERR_INVALID_ARGUMENT, "results carry the status");
    char want[64];
    snprintf(want, sizeof want, "rank %d of %d", bad, g_size);
    CHECK(strstr(tally_last_error(ctx), want) && strstr(tally_last_error(ctx), "data is NULL"),
          "message: %s", tally_last_error(ctx));
    /* a type that differs on the last rank (only with 2+ ranks) */
    if (g_size > 1) {
        st = tally_mpi_reduce_many(ctx, MPI_COMM_WORLD, g_rank == bad ? TALLY_I64 : TALLY_F64, x,
                                   8, ops, 2, NULL, r);
        CHECK(st == TALLY_ERR_INVALID_ARGUMENT, "type mismatch: got %s", tally_status_name(st));
        CHECK(strstr(tally_last_error(ctx), "differ"), "message: %s", tally_last_error(ctx));
    }
    /* an unknown op on rank 0 */
    tally_op badops[] = {TALLY_SUM, (tally_op)99};
    st = tally_mpi_reduce_many(ctx, MPI_COMM_WORLD, TALLY_F64, x, 8, g_rank == 0 ? badops : ops, 2,
                               NULL, r);
    CHECK(st == TALLY_ERR_UNKNOWN_OP, "unknown op on rank 0: got %s", tally_status_name(st));
    /* the rooted form, a bad ddof on the last rank */
    tally_reduce_options ro = {0, g_rank == bad ? -1 : 0};
    tally_op vops[] = {TALLY_VAR};
    st = tally_mpi_reduce_many_root(ctx, MPI_COMM_WORLD, 0, TALLY_F64, x, 8, vops, 1, &ro,
                                    g_rank == 0 ? r : NULL);
    CHECK(st == TALLY_ERR_INVALID_ARGUMENT, "bad ddof (rooted): got %s", tally_status_name(st));
    /* overflow is a result status, the same on every rank */
    int64_t big[2] = {INT64_MAX, 1};
    st = tally_mpi_reduce_many(ctx, MPI_COMM_WORLD, TALLY_I64, big, 2, ops, 1, NULL, r);
    CHECK(st == (g_size >= 1 ? TALLY_ERR_OVERFLOW : TALLY_OK), "overflow: got %s",
          tally_status_name(st));
    /* an empty array everywhere: min is EMPTY */
    tally_op mops[] = {TALLY_COUNT, TALLY_MIN};
    st = tally_mpi_reduce_many(ctx, MPI_COMM_WORLD, TALLY_F64, NULL, 0, mops, 2, NULL, r);
    CHECK(st == TALLY_ERR_EMPTY && r[0].status == TALLY_OK && r[0].value.u64 == 0 &&
              r[1].status == TALLY_ERR_EMPTY, "empty: got %s", tally_status_name(st));
    /* scans: out overlapping in on the last rank: nothing written anywhere */
    double in[8], out[8];
    for (int i = 0; i < 8; i++) in[i] = i + 1, out[i] = -7;
    st = tally_mpi_scan(ctx, MPI_COMM_WORLD, TALLY_SUM, TALLY_F64, in,
                        g_rank == bad ? in + 1 : out, g_rank == bad ? 7 : 8, NULL);
    CHECK(st == TALLY_ERR_OVERLAP, "overlap on rank %d: got %s", bad, tally_status_name(st));
    int untouched = 1;
    for (int i = 0; i < 8; i++) untouched &= out[i] == -7 && in[i] == i + 1;
    CHECK(untouched, "a failed scan wrote its output");
    /* scan of a reduction-only op on rank 0 */
    st = tally_mpi_scan(ctx, MPI_COMM_WORLD, g_rank == 0 ? TALLY_ARGMIN : TALLY_SUM, TALLY_F64, in,
                        out, 8, NULL);
    CHECK(st == TALLY_ERR_UNSUPPORTED, "argmin scan: got %s", tally_status_name(st));
    /* a stream whose update failed on the last rank */
    tally_mpi_stream *s;
    tally_mpi_stream_create(ctx, MPI_COMM_WORLD, TALLY_F64, ops, 2, NULL, &s);
    tally_mpi_stream_update(s, g_rank == bad ? NULL : x, 8);
    st = tally_mpi_stream_results(s, r);
    CHECK(st == TALLY_ERR_INVALID_ARGUMENT, "stream: got %s", tally_status_name(st));
    tally_mpi_stream_destroy(s);
    /* after all that, a normal call still works */
    st = tally_mpi_reduce_many(ctx, MPI_COMM_WORLD, TALLY_F64, x, 8, ops, 2, NULL, r);
    CHECK(st == TALLY_OK && r[0].value.f64 == 36.0 * g_size, "after errors: %s %g",
          tally_status_name(st), r[0].value.f64);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_check_out = stderr;
    g_check_limit = 20;
    snprintf(g_check_prefix, sizeof g_check_prefix, "[rank %d/%d] ", g_rank, g_size);
    g_verbose = getenv("TALLY_TEST_VERBOSE") != NULL;
    if (g_size > 63) {
        if (g_rank == 0) fprintf(stderr, "test_mpi: at most 63 ranks\n");
        MPI_Finalize();
        return 1;
    }
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    /* ranks share the cores: one thread each, two on rank 0 (the threaded paths run too) */
    o.threads = g_rank == 0 ? 2 : 1;
    tally_context *ctx;
    if (tally_create(&ctx, &o) != TALLY_OK) {
        fprintf(stderr, "tally_create: %s\n", tally_create_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const char *only = argc > 1 ? argv[1] : "";
    struct { const char *name; void (*fn)(tally_context *); } parts[] = {
        {"reduce", test_reduce}, {"adversarial", test_adversarial}, {"stream", test_stream},
        {"scan", test_scan}, {"errors", test_errors}};
    for (int a = TALLY_MPI_ALGO_OP; a <= TALLY_MPI_ALGO_TREE; a++) {
        tally_mpi_set_algo((tally_mpi_algo)a);
        g_light = a == TALLY_MPI_ALGO_TREE || g_size > 4;
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
            if (*only && strcmp(only, parts[i].name)) continue;
            /* scans do not use the algorithm: once is enough */
            if (a == TALLY_MPI_ALGO_TREE && !strcmp(parts[i].name, "scan")) continue;
            /* every part starts from the same random state on every rank */
            rng_state = 0x9e3779b97f4a7c15ull + i;
            int before = g_fail;
            double t0 = MPI_Wtime();
            parts[i].fn(ctx);
            int f = g_fail - before, total;
            MPI_Allreduce(&f, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            if (g_rank == 0)
                printf("%-12s [%s] %d ranks: %s (%.1f s)\n", parts[i].name,
                       a == TALLY_MPI_ALGO_OP ? "op" : "tree", g_size,
                       total ? "FAILED" : "ok", MPI_Wtime() - t0);
            fflush(stdout);
        }
    }
    int checks, fails;
    int mine = g_pass + g_fail;
    MPI_Allreduce(&mine, &checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0) printf("test_mpi: %d ranks, %d checks, %d failed\n", g_size, checks, fails);
    tally_destroy(ctx);
    MPI_Finalize();
    return fails ? 1 : 0;
}
