/* Tests of the Vulkan backend: every result compared with the CPU backend, bit for bit (float
 * products and float scans included: the Vulkan backend keeps the CPU's order). The model is
 * tests/cuda/test_cuda.cu. A plain program with its own checks; ctest reads exit code 77 as
 * "skipped" (no Vulkan loader or device here).
 *
 *   test_vulkan              the matrix (sized for lavapipe in CI)
 *   test_vulkan --full       more sizes and every offset for every size
 *   test_vulkan --big        also > 2^32 elements of i8 and u8 (a GPU with 5+ GB)
 *   test_vulkan --no-int64   the documented answer for a device without 64-bit integers
 *   test_vulkan --only reduce|scan|batch   one matrix (batch: segments and batches)
 *   test_vulkan --only lookback   the one-pass scan's tile boundaries, long look-back chains
 *                                 and a stress repetition (TALLY_TEST_SCAN_REPS runs)
 *   test_vulkan --only longchain  one scan whose look-back takes ~1,000 fallbacks in a row
 *   test_vulkan --only flookback  the one-pass float sum/product scan's tile boundaries and look-back
 *   test_vulkan --only auto       the device list and AUTO's choice of GPU alone
 *
 * TALLY_TEST_QUICK=1 (CI sets it: the CMake option TALLY_TEST_QUICK): the look-back matrices
 * (lookback, flookback) keep their types, ops, sizes and data placements but spread the
 * placements over the sizes (each op and size meets some of them, each placement every
 * boundary), and the stress repetition runs a third as often. Without it they run whole. (The
 * other matrices' time on lavapipe is almost all pipeline creation, about a second per op set,
 * type and path, which fewer combinations would not save.)
 *
 * With TALLY_VULKAN_VALIDATION=1 the run fails if the validation layer reported anything. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tally.h"
#include "tally_vulkan.h"
#include "vk_util.h"
#include "../support/check.h"

/* the library's benchmark hooks (vk_backend.c): device-local buffers, read back */
TALLY_API tally_status tally_vulkan_bench_buffer(tally_context *ctx, int slot, const void *data,
                                                 uint64_t bytes, VkBuffer *out);
TALLY_API tally_status tally_vulkan_bench_read(tally_context *ctx, VkBuffer buf, uint64_t off,
                                               uint64_t bytes, void *dst);

static int g_skip;
/* TALLY_TEST_QUICK: the look-back matrices' placements spread over their sizes, fewer stress runs */
static int g_quick;
/* Quick mode's turns: placement k of `period` runs at size index si and op index op when its
 * turn comes (always without quick mode), so each op and size meets some placements and each
 * placement every size. */
static int quick_turn(size_t si, size_t op, size_t k, size_t period)
{
    return !g_quick || (si + op + k) % period == 0;
}


/* ---- random data (tests/support/rng.h) ---------------------------------------------------- */
#include "../support/rng.h"

enum { D_BITS, D_SMALL, D_PRICES, D_WIDE, D_SPECIAL, D_NEGZERO, D_NEAR1, D_TWOSCALE, D_SUBNORMAL,
       D_HUGE, D_COUNT };
static const char *dname[] = {"bits", "small", "prices", "wide", "special", "negzero", "near1",
                              "twoscale", "subnormal", "huge"};

static int is_float(tally_type t) { return t == TALLY_F32 || t == TALLY_F64; }

static void fill(unsigned char *buf, tally_type t, uint64_t n, int d)
{
    size_t es = tally_type_size(t);
    for (uint64_t i = 0; i < n; i++) {
        unsigned char *p = buf + i * es;
        if (!is_float(t)) {
            uint64_t v = rnd();
            if (d == D_SMALL) v = (uint64_t)((int64_t)(rnd() % 7) - 3);
            else if (d == D_NEAR1) v = (rnd() % 16 == 0) ? (uint64_t)((int64_t)(rnd() % 5) - 2) : 1;
            memcpy(p, &v, es);
            continue;
        }
        double v;
        switch (d) {
        case D_PRICES: v = floor(urand() * 100000.0) / 100.0 + 0.01; break;
        case D_WIDE: v = (rnd() & 1 ? -1.0 : 1.0) * (1.0 + urand()) * ldexp(1.0, (int)(rnd() % 120) - 60); break;
        case D_SPECIAL: {
            uint64_t r = rnd() % 64;
            v = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : r == 3 ? -0.0 : r == 4 ? 0.0 : urand() - 0.5;
            break;
        }
        case D_NEGZERO: v = -0.0; break;
        case D_NEAR1: v = 1.0 + (urand() - 0.5) * 1e-3; break;
        case D_TWOSCALE: {
            int s = t == TALLY_F32 ? 40 : 25;
            v = (rnd() & 1 ? -1.0 : 1.0) * (1.0 + urand()) * ldexp(1.0, rnd() & 2 ? s : -s);
            break;
        }
        case D_SUBNORMAL: /* the smallest values of the type, and a few normal ones */
            v = (rnd() & 1 ? -1.0 : 1.0) * (double)(rnd() % 1000) *
                (t == TALLY_F32 ? ldexp(1.0, -149) : ldexp(1.0, -1074));
            if (rnd() % 8 == 0) v = urand() * (t == TALLY_F32 ? 1e-37 : 1e-307);
            break;
        case D_HUGE: /* near the top of the range: sums overflow, squares overflow */
            v = (rnd() & 1 ? -1.0 : 1.0) * (1.0 + urand()) * (t == TALLY_F32 ? 1e38 : 1e307);
            break;
        case D_SMALL: v = (double)((int)(rnd() % 7) - 3); break;
        default: v = (urand() - 0.5) * 1e6; break;
        }
        if (t == TALLY_F32) {
            float f = (float)v;
            memcpy(p, &f, 4);
        } else {
            memcpy(p, &v, 8);
        }
    }
}

/* ---- comparisons -------------------------------------------------------------------------- */
static int same(const tally_result *g, const tally_result *c)
{
    if (g->status != c->status) return 0;
    if (g->status != TALLY_OK) return 1;
    if (g->type != c->type || g->index != c->index) return 0;
    if (g->type == TALLY_F64 && isnan(g->value.f64)) return isnan(c->value.f64);
    return g->value.u64 == c->value.u64;
}

static void print_result(const char *who, const tally_result *r)
{
    printf("    %s: status=%s type=%d value=%#llx (%.17g) index=%llu\n", who,
           tally_status_name(r->status), (int)r->type, (unsigned long long)r->value.u64,
           r->type == TALLY_F64 ? r->value.f64 : (double)r->value.i64, (unsigned long long)r->index);
}

static tally_context *g_cpu, *g_cpu1, *g_vk;
static int g_have_bufs;
static tvk_test_buf g_buf; /* one buffer for the VkBuffer cases, grown as needed */

static unsigned char *buf_at(size_t need)
{
    if (g_buf.size < need) {
        tvk_test_buf_free(&g_buf);
        if (!tvk_test_buf_make(&g_buf, need + (1u << 20))) {
            printf("FATAL: could not make a %zu-byte VkBuffer\n", need);
            exit(1);
        }
    }
    return g_buf.map;
}

/* Compares the Vulkan backend with the CPU backend: through the host-pointer API (via == 0) or
 * a VkBuffer at byte offset off (via == 1; the data is copied there first). */
static void compare_reduce(tally_type t, const unsigned char *h, uint64_t n, const tally_op *ops,
                           size_t nops, int omit, int ddof, int via, size_t off, const char *what)
{
    tally_result gr[16], cr[16];
    tally_reduce_options o = {omit, ddof};
    size_t es = tally_type_size(t);
    if (via && g_have_bufs) {
        unsigned char *m = buf_at(off + n * es + 16);
        memcpy(m + off, h, n * es);
        tally_vulkan_reduce_buffer(g_vk, t, g_buf.buf, off, n, ops, nops, &o, gr);
    } else {
        tally_reduce_many(g_vk, t, h, n, ops, nops, &o, gr);
    }
    tally_reduce_many(n < 100000 ? g_cpu1 : g_cpu, t, h, n, ops, nops, &o, cr);
    for (size_t i = 0; i < nops; i++) {
        int ok = same(&gr[i], &cr[i]);
        CHECK(ok, "reduce %s %s n=%llu omit=%d ddof=%d op=%s via=%s off=%zu (%s)", tally_type_name(t),
              what, (unsigned long long)n, omit, ddof, tally_op_name(ops[i]), via ? "buffer" : "host",
              off, tally_last_error(g_vk));
        if (!ok && g_check_printed <= g_check_limit) {
            print_result("vulkan", &gr[i]);
            print_result("cpu   ", &cr[i]);
        }
    }
}

static const tally_type all_types[] = {TALLY_I8, TALLY_U8, TALLY_I16, TALLY_U16, TALLY_I32,
                                       TALLY_U32, TALLY_I64, TALLY_U64, TALLY_F32, TALLY_F64};

/* TALLY_TEST_TYPES=f32,f64 (a comma-separated list of type names): the reduce and scan matrices of
 * those types alone (ctest splits the reduce matrix in two this way, to run side by side) */
static int type_wanted(tally_type t)
{
    const char *e = getenv("TALLY_TEST_TYPES");
    if (!e || !*e) return 1;
    const char *name = tally_type_name(t);
    size_t len = strlen(name);
    for (const char *q = e; q && *q; q = strchr(q, ',') ? strchr(q, ',') + 1 : NULL)
        if (!strncmp(q, name, len) && (q[len] == ',' || q[len] == 0)) return 1;
    return 0;
}

static void test_reduce_matrix(int full)
{
    /* the workgroup share is 1024 vectors (16 KiB) at small sizes; segments are forced small
     * by the ctest entry (TALLY_VULKAN_SEGMENT_BYTES) so that they are crossed too */
    uint64_t sizes_ci[] = {0, 1, 2, 3, 7, 16, 17, 33, 255, 257, 1023, 1025, 4095, 4096, 4097,
                           8191, 16385, 65537, 262143, 300007};
    uint64_t sizes_full[] = {0, 1, 2, 3, 7, 16, 17, 33, 255, 257, 1023, 1025, 2047, 2049, 4097,
                             8191, 16383, 16385, 65535, 65537, 262143, 262145, 1000003,
                             (4u << 20) + 13};
    uint64_t *sizes = full ? sizes_full : sizes_ci;
    size_t nsizes = full ? sizeof sizes_full / 8 : sizeof sizes_ci / 8;
    size_t maxn = full ? (4u << 20) + 13 : 300007;
    unsigned char *h = malloc(maxn * 8 + 64);
    for (size_t ti = 0; ti < sizeof all_types / sizeof all_types[0]; ti++) {
        tally_type t = all_types[ti];
        if (!type_wanted(t)) continue;
        printf("  reduce %s ... (%d passed, %d failed so far)\n", tally_type_name(t), g_pass, g_fail);
        fflush(stdout);
        size_t es = tally_type_size(t);
        int dsf[] = {D_BITS, D_PRICES, D_WIDE, D_SPECIAL, D_NEGZERO, D_SMALL, D_TWOSCALE, D_SUBNORMAL, D_HUGE};
        int dsi[] = {D_BITS, D_SMALL, D_NEAR1};
        int *ds = is_float(t) ? dsf : dsi;
        int nds = is_float(t) ? 9 : 3;
        tally_op all[TALLY_OP_COUNT];
        size_t nall = 0;
        for (int op = 0; op < TALLY_OP_COUNT; op++) {
            if (is_float(t) && (op == TALLY_AND || op == TALLY_OR || op == TALLY_XOR)) continue;
            all[nall++] = (tally_op)op;
        }
        for (size_t si = 0; si < nsizes; si++) {
            uint64_t n = sizes[si];
            for (int di = 0; di < nds; di++) {
                int d = ds[di];
                if (d == D_NEGZERO && n > 5000) continue;
                if (!full && n > 70000 && di > 3) continue;
                fill(h, t, n, d);
                char what[64];
                snprintf(what, sizeof what, "%s", dname[d]);
                /* host pointer; then a VkBuffer at offsets 0, one element, and 19 elements + 16
                 * bytes in (a head that is no multiple of 16) */
                size_t offs[] = {0, 0, es, 16 + 19 * es};
                int vias[] = {0, 1, 1, 1};
                for (int oi = 0; oi < 4; oi++) {
                    if (!full && oi >= 2 && n > 5000 && oi != 3) continue;
                    int via = vias[oi];
                    size_t off = offs[oi];
                    for (int omit = 0; omit <= (is_float(t) ? 1 : 0); omit++) {
                        /* skipping NaNs matters where there are NaNs: outside --full, omit=1 runs
                         * on the data families that hold them (raw bits, specials) */
                        if (omit && !full && d != D_BITS && d != D_SPECIAL) continue;
                        compare_reduce(t, h, n, all, nall, omit, 0, via, off, what);
                        /* the single ops and the small sets pick their own pipelines; where the
                         * data comes from (host copy or the caller's buffer at an offset) is the
                         * same for every op, so outside --full they run on the host pointer only */
                        if (oi > 0 && !full) continue;
                        /* ... and at the even-indexed sizes, which still meet every boundary
                         * (0, 2, 7, 17, 255, 1023, 4095, 4097, 16385, 262143) */
                        if (!full && si % 2) continue;
                        const tally_op singles[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX, TALLY_ARGMIN,
                                                    TALLY_ARGMAX, TALLY_MEAN, TALLY_VAR, TALLY_COUNT,
                                                    TALLY_PROD};
                        for (size_t k = 0; k < sizeof singles / sizeof singles[0]; k++)
                            compare_reduce(t, h, n, &singles[k], 1, omit, 1, via, off, what);
                        tally_op smm[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX};
                        compare_reduce(t, h, n, smm, 3, omit, 0, via, off, what);
                        tally_op amm[] = {TALLY_ARGMIN, TALLY_MIN, TALLY_COUNT};
                        compare_reduce(t, h, n, amm, 3, omit, 0, via, off, what);
                        if (!is_float(t)) {
                            tally_op bits[] = {TALLY_XOR, TALLY_AND, TALLY_OR, TALLY_PROD};
                            compare_reduce(t, h, n, bits, 4, omit, 0, via, off, what);
                        }
                    }
                }
            }
        }
    }
    /* integer sums that overflow, and ones that just fit; products likewise */
    {
        int64_t *v = (int64_t *)h;
        for (int i = 0; i < 5000; i++) v[i] = INT64_MAX / 4000;
        tally_op op = TALLY_SUM;
        compare_reduce(TALLY_I64, h, 5000, &op, 1, 0, 0, 0, 0, "overflow");
        compare_reduce(TALLY_I64, h, 4000, &op, 1, 0, 0, 0, 0, "fits");
        for (int i = 0; i < 5000; i++) v[i] = INT64_MIN / 4000;
        compare_reduce(TALLY_I64, h, 4001, &op, 1, 0, 0, 0, 0, "negative overflow");
        compare_reduce(TALLY_I64, h, 4000, &op, 1, 0, 0, 0, 0, "negative fits");
        uint64_t *u = (uint64_t *)h;
        for (int i = 0; i < 5000; i++) u[i] = UINT64_MAX - (uint64_t)i;
        compare_reduce(TALLY_U64, h, 5000, &op, 1, 0, 0, 0, 0, "u64 sum (fits u128, not u64)");
        compare_reduce(TALLY_U64, h, 1, &op, 1, 0, 0, 0, 0, "u64 max");
        op = TALLY_PROD;
        for (int i = 0; i < 64; i++) v[i] = (i % 3 == 0) ? -2 : 2;
        compare_reduce(TALLY_I64, h, 63, &op, 1, 0, 0, 0, 0, "prod -2^63 (fits)");
        compare_reduce(TALLY_I64, h, 64, &op, 1, 0, 0, 0, 0, "prod 2^64 (overflow)");
        v[0] = 2;
        compare_reduce(TALLY_I64, h, 63, &op, 1, 0, 0, 0, 0, "prod 2^63 (overflow)");
        v[5] = 0;
        compare_reduce(TALLY_I64, h, 64, &op, 1, 0, 0, 0, 0, "prod with zero");
        for (int i = 0; i < 64; i++) u[i] = 2;
        compare_reduce(TALLY_U64, h, 63, &op, 1, 0, 0, 0, 0, "u64 prod 2^63");
        compare_reduce(TALLY_U64, h, 64, &op, 1, 0, 0, 0, 0, "u64 prod 2^64");
    }
    free(h);
}

/* ---- scans ------------------------------------------------------------------------------------ */
static int scan_elem_same(tally_type t, const unsigned char *a, const unsigned char *b)
{
    size_t es = tally_type_size(t);
    if (t == TALLY_F32) {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
    } else if (t == TALLY_F64) {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
    }
    return memcmp(a, b, es) == 0;
}

/* via 0: host pointers (out of place, or in place); via 1: VkBuffers, in at in_off, out in the
 * same buffer at out_off (in place when equal). */
static void compare_scan(tally_type t, tally_op op, const unsigned char *h, uint64_t n, int via,
                         int inplace, size_t in_off, size_t out_off, int exclusive, int has_init,
                         const char *what)
{
    size_t es = tally_type_size(t);
    tally_scan_options o;
    memset(&o, 0, sizeof o);
    o.exclusive = exclusive;
    o.has_init = has_init;
    if (is_float(t)) o.init.f64 = 2.5;
    else o.init.i64 = 5;
    unsigned char *co = malloc(n * es + 16), *go = malloc(n * es + 16);
    tally_status cs = tally_scan(n < 100000 ? g_cpu1 : g_cpu, op, t, h, co, n, &o), gs;
    if (via && g_have_bufs) {
        size_t end = (in_off > out_off ? in_off : out_off) + n * es + 64;
        unsigned char *m = buf_at(end);
        memset(m, 0xa5, end);
        memcpy(m + in_off, h, n * es);
        gs = tally_vulkan_scan_buffer(g_vk, op, t, g_buf.buf, in_off, g_buf.buf, inplace ? in_off : out_off,
                                      n, &o);
        size_t oo = inplace ? in_off : out_off;
        memcpy(go, m + oo, n * es);
        /* bytes around the output untouched */
        int guard = 1;
        for (size_t b = (oo >= 8 ? oo - 8 : 0); b < oo; b++)
            if (!inplace && b >= in_off + n * es && m[b] != 0xa5) guard = 0;
        for (size_t b = oo + n * es; b < oo + n * es + 8; b++)
            if ((inplace || b < in_off || b >= in_off + n * es) && m[b] != 0xa5) guard = 0;
        CHECK(guard, "scan %s %s n=%llu: bytes next to the output changed", tally_type_name(t), tally_op_name(op),
              (unsigned long long)n);
    } else if (inplace) {
        memcpy(go, h, n * es);
        gs = tally_scan(g_vk, op, t, go, go, n, &o);
    } else {
        gs = tally_scan(g_vk, op, t, h, go, n, &o);
    }
    CHECK(cs == gs, "scan status %s vs %s", tally_status_name(gs), tally_status_name(cs));
    uint64_t bad = 0, first = n;
    for (uint64_t i = 0; i < n; i++)
        if (!scan_elem_same(t, go + i * es, co + i * es)) {
            if (first == n) first = i;
            bad++;
        }
    uint64_t gv = 0, cv = 0;
    if (bad) {
        memcpy(&gv, go + first * es, es);
        memcpy(&cv, co + first * es, es);
    }
    CHECK(bad == 0, "scan %s %s %s n=%llu via=%s inplace=%d in_off=%zu out_off=%zu excl=%d init=%d: %llu "
          "elements differ, first at %llu (%#llx, expected %#llx)", tally_type_name(t), tally_op_name(op), what,
          (unsigned long long)n, via ? "buffer" : "host", inplace, in_off, out_off, exclusive, has_init,
          (unsigned long long)bad, (unsigned long long)first, (unsigned long long)gv, (unsigned long long)cv);
    free(co);
    free(go);
}

static void test_scan_matrix(int full)
{
    uint64_t sizes[] = {1, 2, 3, 17, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 8191,
                        8192, 8193, 16385, 65537, 100003};
    size_t nsizes = sizeof sizes / 8;
    unsigned char *h = malloc(100003 * 8 + 64);
    for (size_t ti = 0; ti < sizeof all_types / sizeof all_types[0]; ti++) {
        tally_type t = all_types[ti];
        size_t es = tally_type_size(t);
        if (!type_wanted(t)) continue;
        printf("  scan %s ... (%d passed, %d failed so far)\n", tally_type_name(t), g_pass, g_fail);
        fflush(stdout);
        int nops = is_float(t) ? 4 : 7;
        for (size_t si = 0; si < nsizes; si++) {
            uint64_t n = sizes[si];
            int d = is_float(t) ? (si % 3 == 0 ? D_SPECIAL : si % 3 == 1 ? D_WIDE : D_PRICES)
                                : (si % 2 ? D_SMALL : D_BITS);
            fill(h, t, n, d);
            for (int op = 0; op < nops; op++) {
                if (!full && n > 20000 && op >= 2 && op != 3) continue;
                /* float products of wide data under/overflow: near-1 values keep them finite */
                if (is_float(t) && op == TALLY_PROD) fill(h, t, n, D_NEAR1);
                compare_scan(t, (tally_op)op, h, n, 0, 0, 0, 0, 0, 0, dname[d]);
                compare_scan(t, (tally_op)op, h, n, 0, 1, 0, 0, 1, 1, dname[d]);
                compare_scan(t, (tally_op)op, h, n, 1, 1, 3 * es, 3 * es, 1, 0, dname[d]);
                compare_scan(t, (tally_op)op, h, n, 1, 0, es, (n + 37) * es + 16, 0, 0, dname[d]);
                if (full || n < 5000) {
                    compare_scan(t, (tally_op)op, h, n, 1, 0, (n + 9) * es + 8, 7 * es, 1, 1, dname[d]);
                    compare_scan(t, (tally_op)op, h, n, 0, 0, 0, 0, 1, 0, dname[d]);
                }
                if (is_float(t) && op == TALLY_PROD) fill(h, t, n, d);
            }
        }
    }
    /* float sum scans over subnormal data: the shaders' edge (or the CPU) must give the CPU's bits */
    for (int f = 0; f < 2; f++) {
        tally_type t = f ? TALLY_F64 : TALLY_F32;
        fill(h, t, 9000, D_SUBNORMAL);
        compare_scan(t, TALLY_SUM, h, 9000, 0, 0, 0, 0, 0, 0, "subnormal");
        compare_scan(t, TALLY_SUM, h, 9000, 1, 1, 0, 0, 1, 0, "subnormal");
        compare_scan(t, TALLY_PROD, h, 9000, 1, 0, 0, 9000 * 8 + 64, 0, 0, "subnormal");
    }
    /* normal data whose scans underflow: products of small values (through the subnormals to
     * zero), and sums of normals near the smallest normal that cancel into the subnormals; a
     * device that flushes them must flag the call (the CPU redoes it). Then positive sums with
     * subnormal elements among normals near the smallest normal: no sum is zero or subnormal,
     * yet a flushed operand changes it (2^emin-scale sums keep bits down to ~2^(emin-11) for
     * f32). Then sums that cancel into the subnormals from operands far above them. */
    for (int f = 0; f < 2; f++) {
        tally_type t = f ? TALLY_F64 : TALLY_F32;
        int emin = f ? -1022 : -126;
        for (int kind = 0; kind < 4; kind++) {
            uint64_t n = kind == 1 ? 9001 : 4099;
            for (uint64_t i = 0; i < n; i++) {
                double v;
                if (kind == 0) /* products: 2^-20 .. 2^-19, about 7 (f32) or 52 (f64) to underflow */
                    v = (1.0 + urand()) * ldexp(1.0, -20);
                else if (kind == 3) { /* pairs a, -(a +- 1 ulp), a ~ 2^(emin + p - 4): every sum
                                       * of a range is ~a or one ulp of it (2^(emin - 3), a
                                       * subnormal) or zero, the operands three binades below the
                                       * sums' bound (fscan_ops.glsl's LIMIT) */
                    double ulp = ldexp(1.0, emin - 3);
                    double a = (1.0 + 8.0 * ldexp(1.0, f ? -52 : -23)) * ldexp(1.0, emin + (f ? 53 : 24) - 4);
                    v = i & 1 ? -(a + ((i >> 1) & 1 ? -ulp : ulp)) : a;
                }
                else if (kind == 2) /* every 5th a subnormal of 2^(emin-7) .. 2^(emin-1) */
                    v = i % 5 == 3 ? (1.0 + urand()) * ldexp(1.0, emin - 7 + (int)(rnd() % 6))
                                   : (1.0 + urand()) * ldexp(1.0, emin);
                else /* sums: +-(1 + a few ulps) * 2^emin, alternating; a big one now and then */
                    v = (i & 1 ? -1.0 : 1.0) * (1.0 + (double)(rnd() % 64) * ldexp(1.0, f ? -52 : -23)) *
                        ldexp(1.0, emin) * (i % 3000 == 2999 ? ldexp(1.0, 60) : 1.0);
                if (t == TALLY_F32) {
                    float fv = (float)v;
                    memcpy(h + i * 4, &fv, 4);
                } else {
                    memcpy(h + i * 8, &v, 8);
                }
            }
            tally_op op = kind == 0 ? TALLY_PROD : TALLY_SUM;
            compare_scan(t, op, h, n, 0, 0, 0, 0, 0, 0, "underflow");
            compare_scan(t, op, h, n, 1, 1, 0, 0, 1, 0, "underflow");
            compare_scan(t, op, h, n, 1, 0, 0, n * 8 + 64, 0, 0, "underflow");
        }
    }
    /* overlapping ranges of one buffer */
    if (g_have_bufs) {
        buf_at(4096);
        tally_status st = tally_vulkan_scan_buffer(g_vk, TALLY_SUM, TALLY_U8, g_buf.buf, 0, g_buf.buf, 5, 10, NULL);
        CHECK(st == TALLY_ERR_OVERLAP, "overlap in one buffer: %s", tally_status_name(st));
        st = tally_vulkan_scan_buffer(g_vk, TALLY_SUM, TALLY_U8, g_buf.buf, 0, g_buf.buf, 11, 10, NULL);
        CHECK(st == TALLY_ERR_OVERLAP, "ranges sharing a word: %s", tally_status_name(st));
    }
    free(h);
}

/* ---- the one-pass float sum/product scan's look-back (fscan1.comp) -------------------------- */
/* Sizes at and around every multiple of the 4096-element block (a tile) up to look-backs that
 * pass several 32-tile windows (TALLY_TEST_FLOOKBACK_TILES, 80 by default; below 34 the walks
 * stay shorter), f32
 * and f64, sums (wide and price-like data) and products (near 1), inclusive, exclusive with
 * init, in place and at odd offsets, bit for bit against the CPU backend; run without small
 * segments, so that one dispatch holds every tile (ctest runs it with TALLY_VULKAN_FLOAT_SCAN=
 * 1pass as it runs by default on GPUs, with every wait turned into a fallback, in reverse
 * order, and on one lavapipe thread). */
static void test_fscan_lookback(void)
{
    const char *te = getenv("TALLY_TEST_FLOOKBACK_TILES");
    uint64_t big = te && *te ? strtoull(te, NULL, 10) : 80;
    if (big < 1) big = 1; /* (big * 4096 - 3 below) */
    /* TALLY_TEST_FLOOKBACK_OPS=sum: sums only (the lean fold's schedule on lavapipe, whose
     * products' fold in one invocation meets its defect: ctest's vulkan_fscan1_fold1) */
    const char *oe = getenv("TALLY_TEST_FLOOKBACK_OPS");
    int nops = oe && !strcmp(oe, "sum") ? 1 : 2;
    uint64_t sizes[] = {1, 4095, 4096, 4097, 2 * 4096 - 1, 3 * 4096 + 5, 33 * 4096 - 1, 33 * 4096 + 1,
                        big * 4096 - 3, big * 4096, big * 4096 + 4097};
    uint64_t most = 0;
    for (size_t si = 0; si < sizeof sizes / 8; si++) most = sizes[si] > most ? sizes[si] : most;
    unsigned char *h = malloc(most * 8 + 64); /* the 33-tile sizes pass big * 4096 + 4097 when big < 32 */
    for (int f = 0; f < 2; f++) {
        tally_type t = f ? TALLY_F64 : TALLY_F32;
        size_t es = tally_type_size(t);
        if (!type_wanted(t)) continue;
        printf("  float scan look-back %s ... (%d passed, %d failed so far)\n", tally_type_name(t), g_pass, g_fail);
        fflush(stdout);
        for (size_t si = 0; si < sizeof sizes / 8; si++) {
            uint64_t n = sizes[si];
            if (si >= 6 && n > 40 * 4096 && t == TALLY_F64 && si % 2) continue; /* (lavapipe's time) */
            for (int op = 0; op < nops; op++) {
                int d = op == 1 ? D_NEAR1 : si % 2 ? D_WIDE : D_PRICES;
                fill(h, t, n, d);
                /* quick: the four placements take turns, two at each size */
                if (quick_turn(si, (size_t)op, 0, 2))
                    compare_scan(t, (tally_op)op, h, n, 1, 0, 0, (n + 4) * es + 16, 0, 0, dname[d]);
                if (quick_turn(si, (size_t)op, 1, 2))
                    compare_scan(t, (tally_op)op, h, n, 1, 0, 3 * es, (n + 9) * es, 1, 1, dname[d]);
                if (quick_turn(si, (size_t)op, 0, 2)) compare_scan(t, (tally_op)op, h, n, 1, 1, es, es, 0, 0, dname[d]);
                if (quick_turn(si, (size_t)op, 1, 2)) compare_scan(t, (tally_op)op, h, n, 0, 1, 0, 0, 1, 0, dname[d]);
            }
        }
    }
    free(h);
}

/* ---- the one-pass scan's look-back (scan1.comp) --------------------------------------------- */
/* scan1.comp's tile bytes: 256 invocations x VPT 16-byte vectors (TALLY_VULKAN_SCAN_VPT, as
 * vk_scan.c reads it; 8 by default) */
static uint64_t scan1_tb(void)
{
    const char *e = getenv("TALLY_VULKAN_SCAN_VPT");
    unsigned long v = e && *e ? strtoul(e, NULL, 10) : 8;
    if (v != 1 && v != 2 && v != 4 && v != 8 && v != 16) v = 8;
    return 256u * 16u * v;
}
#define SCAN1_TB scan1_tb()

/* A wrapping i32 sum scan by a plain loop: a reference that shares no code with the library. */
static void ref_scan_i32(const int32_t *x, int32_t *y, uint64_t n, int exclusive, uint32_t start)
{
    uint32_t run = start;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t v = (uint32_t)x[i];
        if (exclusive) {
            memcpy(&y[i], &run, 4);
            run += v;
        } else {
            run += v;
            memcpy(&y[i], &run, 4);
        }
    }
}

/* Sizes at every tile boundary of scan1.comp and chains long enough to cross its 32-tile
 * look-back window several times; run without small segments (ctest runs this under several
 * schedules: the default, every wait turned into a fallback, tiles in reverse order, one
 * lavapipe thread). Then a stress repetition of one many-tile scan against a plain loop. */
static void test_scan_lookback(void)
{
    static const tally_type types[] = {TALLY_U8, TALLY_I16, TALLY_I32, TALLY_U64, TALLY_F32, TALLY_F64};
    static const tally_op iops[] = {TALLY_SUM, TALLY_MAX, TALLY_XOR};
    static const tally_op fops[] = {TALLY_MIN, TALLY_MAX};
    const char *big_env = getenv("TALLY_TEST_LOOKBACK_TILES");
    uint64_t big_tiles = big_env && *big_env ? strtoull(big_env, NULL, 10) : 100;
    int before = g_fail;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        tally_type t = types[ti];
        size_t es = tally_type_size(t);
        uint64_t te = SCAN1_TB / es;
        uint64_t sizes[] = {1, te - 1, te, te + 1, 2 * te - 1, 2 * te, 2 * te + 1, 3 * te + 5,
                            33 * te - 1, 33 * te, 33 * te + 1, big_tiles * te + 7};
        size_t nsizes = sizeof sizes / sizeof sizes[0];
        uint64_t most = 0;
        for (size_t si = 0; si < nsizes; si++) most = sizes[si] > most ? sizes[si] : most;
        unsigned char *h = malloc(most * es + 64);
        printf("  look-back %s ... (%d passed, %d failed so far)\n", tally_type_name(t), g_pass, g_fail);
        fflush(stdout);
        for (size_t si = 0; si < nsizes; si++) {
            uint64_t n = sizes[si];
            int d = is_float(t) ? (si % 2 ? D_SPECIAL : D_WIDE) : (si % 2 ? D_SMALL : D_BITS);
            fill(h, t, n, d);
            const tally_op *ops = is_float(t) ? fops : iops;
            int nops = is_float(t) ? 2 : 3;
            for (int oi = 0; oi < nops; oi++) {
                /* host (in place on the device), buffer in place at an odd element offset,
                 * buffer out of place with the output's alignment unlike the input's */
                /* quick: one placement per op and size, in turn */
                if (quick_turn(si, (size_t)oi, 0, 3)) compare_scan(t, ops[oi], h, n, 0, 0, 0, 0, oi & 1, oi & 1, dname[d]);
                if (quick_turn(si, (size_t)oi, 1, 3)) compare_scan(t, ops[oi], h, n, 1, 1, 3 * es, 3 * es, 1, 1, dname[d]);
                if (quick_turn(si, (size_t)oi, 2, 3)) compare_scan(t, ops[oi], h, n, 1, 0, es, (n + 37) * es + 16, 0, 0, dname[d]);
            }
        }
        free(h);
    }
    /* stress: one many-tile scan again and again (every run a new schedule), against a loop */
    const char *reps_env = getenv("TALLY_TEST_SCAN_REPS");
    int reps = reps_env && *reps_env ? atoi(reps_env) : 20;
    if (g_quick) reps = (reps + 2) / 3; /* quick: a third of the repetitions, at least one */
    uint64_t n = (big_tiles + big_tiles / 2) * (SCAN1_TB / 4) + 1001;
    int32_t *x = malloc(n * 4), *ref = malloc(n * 4), *y = malloc(n * 4);
    for (uint64_t i = 0; i < n; i++) x[i] = (int32_t)rnd();
    uint64_t bad_runs = 0;
    for (int r = 0; r < reps; r++) {
        int exclusive = r & 1;
        tally_scan_options o;
        memset(&o, 0, sizeof o);
        o.exclusive = exclusive;
        o.has_init = exclusive;
        o.init.i64 = r;
        ref_scan_i32(x, ref, n, exclusive, exclusive ? (uint32_t)r : 0u);
        memcpy(y, x, n * 4);
        tally_status st = tally_scan(g_vk, TALLY_SUM, TALLY_I32, y, y, n, &o);
        uint64_t bad = 0, first = n;
        for (uint64_t i = 0; i < n; i++)
            if (y[i] != ref[i]) {
                if (first == n) first = i;
                bad++;
            }
        if (st != TALLY_OK || bad) bad_runs++;
        CHECK(st == TALLY_OK && bad == 0, "stress run %d (n=%llu, exclusive=%d): %s, %llu elements differ, "
              "first at %llu (tile %llu)", r, (unsigned long long)n, exclusive, tally_status_name(st),
              (unsigned long long)bad, (unsigned long long)first, (unsigned long long)(first / (SCAN1_TB / 4)));
    }
    printf("  stress: %d runs of an i32 sum scan of %llu elements, %llu wrong\n", reps, (unsigned long long)n,
           (unsigned long long)bad_runs);
    free(x);
    free(ref);
    free(y);
    printf("look-back: %d failed\n", g_fail - before);
}

/* One look-back of about a thousand fallbacks in a row (ctest runs it with every wait a fallback,
 * one-lane subgroups and 8 KiB tiles): lavapipe ends every loop of an invocation after 65,535
 * iterations in all, which such a chain used to pass, leaving the second half of the scan wrong.
 * vk_scan.c now bounds the tiles per dispatch on CPU devices. */
static void test_scan_long_chain(void)
{
    const uint64_t n = 2000u * (SCAN1_TB / 4) + 123; /* 2,000 tiles of 8 KiB */
    int32_t *x = malloc(n * 4), *ref = malloc(n * 4), *y = malloc(n * 4);
    for (uint64_t i = 0; i < n; i++) x[i] = (int32_t)rnd();
    ref_scan_i32(x, ref, n, 0, 0);
    tally_status st = tally_scan(g_vk, TALLY_SUM, TALLY_I32, x, y, n, NULL);
    uint64_t bad = 0, first = n;
    for (uint64_t i = 0; i < n; i++)
        if (y[i] != ref[i]) {
            if (first == n) first = i;
            bad++;
        }
    CHECK(st == TALLY_OK && bad == 0, "long look-back chain (n=%llu): %s, %llu elements differ, first at %llu",
          (unsigned long long)n, tally_status_name(st), (unsigned long long)bad, (unsigned long long)first);
    printf("long chain: an i32 sum scan of %llu elements, %llu wrong\n", (unsigned long long)n,
           (unsigned long long)bad);
    free(x);
    free(ref);
    free(y);
}

/* ---- more than 2^32 elements (64-bit counts and indices; several segments) ------------------- */
static void test_big(void)
{
    uint64_t n = (1ull << 32) + 4099;
    unsigned char *h = malloc(n + 16), *co = malloc(n + 16), *go = malloc(n + 16);
    if (!h || !co || !go) {
        printf("SKIP big: no host memory\n");
        g_skip++;
        return;
    }
    for (uint64_t i = 0; i < n; i += 8) {
        uint64_t v = rnd();
        memcpy(h + i, &v, 8);
    }
    h[n - 5] = (unsigned char)-128;
    h[n - 3] = 127;
    VkBuffer b;
    if (tally_vulkan_bench_buffer(g_vk, 0, h, n + 16, &b) != TALLY_OK) {
        printf("SKIP big: no device buffer of %llu bytes (%s)\n", (unsigned long long)n, tally_last_error(g_vk));
        g_skip++;
        free(h); free(co); free(go);
        return;
    }
    tally_op ops[] = {TALLY_SUM, TALLY_ARGMAX, TALLY_ARGMIN, TALLY_XOR, TALLY_COUNT, TALLY_MEAN};
    tally_result gr[6], cr[6];
    tally_vulkan_reduce_buffer(g_vk, TALLY_I8, b, 1, n, ops, 6, NULL, gr);
    tally_reduce_many(g_cpu, TALLY_I8, h + 1, n, ops, 6, NULL, cr);
    for (int i = 0; i < 6; i++) {
        int ok = same(&gr[i], &cr[i]);
        CHECK(ok, "big i8 op %s", tally_op_name(ops[i]));
        if (!ok) { print_result("vulkan", &gr[i]); print_result("cpu   ", &cr[i]); }
    }
    /* the same bytes as u8 (the type): unsigned sums and the unsigned order */
    tally_op uops[] = {TALLY_SUM, TALLY_ARGMAX, TALLY_ARGMIN, TALLY_OR, TALLY_MAX};
    tally_vulkan_reduce_buffer(g_vk, TALLY_U8, b, 1, n, uops, 5, NULL, gr);
    tally_reduce_many(g_cpu, TALLY_U8, h + 1, n, uops, 5, NULL, cr);
    for (int i = 0; i < 5; i++) {
        int ok = same(&gr[i], &cr[i]);
        CHECK(ok, "big u8 op %s", tally_op_name(uops[i]));
        if (!ok) { print_result("vulkan", &gr[i]); print_result("cpu   ", &cr[i]); }
    }
    tally_scan(g_cpu, TALLY_SUM, TALLY_I8, h + 1, co, n, NULL);
    CHECK(tally_vulkan_scan_buffer(g_vk, TALLY_SUM, TALLY_I8, b, 1, b, 1, n, NULL) == TALLY_OK, "big scan: %s",
          tally_last_error(g_vk));
    tally_vulkan_bench_read(g_vk, b, 1, n, go);
    CHECK(memcmp(go, co, n) == 0, "big i8 scan in place differs");
    printf("+ big (2^32 + 4099 i8 and u8): %d passed, %d failed\n", g_pass, g_fail);
    free(h); free(co); free(go);
}

/* ---- streams --------------------------------------------------------------------------------- */
static void test_streams(void)
{
    uint64_t n = 100003;
    double *h = malloc(n * 8);
    fill((unsigned char *)h, TALLY_F64, n, D_WIDE);
    tally_op ops[] = {TALLY_SUM, TALLY_MIN, TALLY_ARGMAX, TALLY_MEAN, TALLY_COUNT};
    tally_stream *st = NULL;
    CHECK(tally_stream_create(g_vk, TALLY_F64, ops, 5, NULL, &st) == TALLY_OK, "stream on a Vulkan context: %s",
          tally_last_error(g_vk));
    if (st) {
        for (uint64_t i = 0; i < n; i += 7919) tally_stream_update(st, h + i, n - i < 7919 ? n - i : 7919);
        tally_result sr[5], cr[5];
        tally_stream_results(st, sr);
        tally_reduce_many(g_cpu, TALLY_F64, h, n, ops, 5, NULL, cr);
        for (int i = 0; i < 5; i++) CHECK(same(&sr[i], &cr[i]), "stream op %s", tally_op_name(ops[i]));
        tally_stream_destroy(st);
    }
    free(h);
}

/* ---- errors ---------------------------------------------------------------------------------- */
static void test_errors(void)
{
    tally_result r;
    tally_op op = TALLY_SUM;
    CHECK(tally_vulkan_reduce_buffer(g_cpu, TALLY_I32, VK_NULL_HANDLE, 0, 0, &op, 1, NULL, &r) ==
              TALLY_ERR_INVALID_ARGUMENT, "VkBuffer API on a CPU context");
    if (g_have_bufs) {
        buf_at(64);
        tally_status s = tally_vulkan_reduce_buffer(g_vk, TALLY_I32, g_buf.buf, 2, 4, &op, 1, NULL, &r);
        CHECK(s == TALLY_ERR_INVALID_ARGUMENT && strstr(tally_last_error(g_vk), "offset"),
              "misaligned offset: %s (%s)", tally_status_name(s), tally_last_error(g_vk));
        s = tally_vulkan_reduce_buffer(g_vk, TALLY_F32, g_buf.buf, 0, 4, (tally_op[]){TALLY_XOR}, 1, NULL, &r);
        CHECK(s == TALLY_ERR_UNSUPPORTED, "xor of f32 through the buffer API: %s", tally_status_name(s));
        s = tally_vulkan_reduce_buffer(g_vk, TALLY_I32, g_buf.buf, 0, 0, (tally_op[]){TALLY_MIN}, 1, NULL, &r);
        CHECK(s == TALLY_ERR_EMPTY && r.status == TALLY_ERR_EMPTY, "min of nothing: %s", tally_status_name(s));
    }
    tally_vulkan_handles hd;
    CHECK(tally_vulkan_get_handles(g_cpu, &hd) == TALLY_ERR_INVALID_ARGUMENT, "handles of a CPU context");
}

/* ---- the device without 64-bit integers (documented answer) ---------------------------------- */

/* ---- batched (segmented) reductions: tally_reduce_segments / _rows against the CPU ------------ */
static const tally_op seg_int_ops[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX, TALLY_ARGMIN, TALLY_ARGMAX,
                                       TALLY_AND, TALLY_OR, TALLY_XOR, TALLY_COUNT, TALLY_MEAN};
static const tally_op seg_float_ops[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX, TALLY_ARGMIN, TALLY_ARGMAX,
                                         TALLY_COUNT, TALLY_MEAN};
static const tally_op seg_var_ops[] = {TALLY_VAR, TALLY_MEAN, TALLY_SUM};
static const tally_op seg_prod_ops[] = {TALLY_PROD, TALLY_SUM};

/* Both backends on one segmented call; statuses and every result the same bits. */
static void compare_segments(tally_type t, const unsigned char *h, const uint64_t *off, uint64_t nseg,
                             uint64_t nrows, uint64_t row_len, uint64_t stride, const tally_op *ops,
                             size_t nops, int omit, const char *what)
{
    tally_reduce_options o = {omit, 1};
    uint64_t cnt = (off ? nseg : nrows) * nops;
    tally_result *gr = calloc(cnt ? cnt : 1, sizeof *gr), *cr = calloc(cnt ? cnt : 1, sizeof *cr);
    tally_status gs, cs;
    if (off) {
        gs = tally_reduce_segments(g_vk, t, h, off, nseg, ops, nops, &o, gr);
        cs = tally_reduce_segments(g_cpu1, t, h, off, nseg, ops, nops, &o, cr);
    } else {
        gs = tally_reduce_rows(g_vk, t, h, nrows, row_len, stride, ops, nops, &o, gr);
        cs = tally_reduce_rows(g_cpu1, t, h, nrows, row_len, stride, ops, nops, &o, cr);
    }
    CHECK(gs == cs, "segments %s %s: status %s, CPU %s (%s)", tally_type_name(t), what, tally_status_name(gs),
          tally_status_name(cs), tally_last_error(g_vk));
    int bad = 0;
    for (uint64_t k = 0; k < cnt && bad < 3; k++) {
        int ok = same(&gr[k], &cr[k]);
        CHECK(ok, "segments %s %s omit=%d: segment %llu (%llu elements) op %s", tally_type_name(t), what, omit,
              (unsigned long long)(k / nops),
              (unsigned long long)(off ? off[k / nops + 1] - off[k / nops] : row_len), tally_op_name(ops[k % nops]));
        if (!ok) {
            bad++;
            if (g_check_printed <= g_check_limit) {
                print_result("vulkan", &gr[k]);
                print_result("cpu   ", &cr[k]);
            }
        }
    }
    free(gr);
    free(cr);
}

/* Segment lengths: kind 0 many tiny (0-3), 1 around the workgroup tiles and the dispatch
 * segments of the type, 2 mixed random up to max. */
static uint64_t seg_len_of(int kind, size_t es, uint64_t max)
{
    static const uint64_t tile_bytes[] = {16, 4096, 16384, 65536};
    if (kind == 0) return rnd() % 4;
    if (kind == 1) {
        uint64_t b = tile_bytes[rnd() % 4] / es;
        uint64_t m = 1 + rnd() % 2;
        int64_t d = (int64_t)(rnd() % 3) - 1;
        uint64_t v = b * m + (uint64_t)d;
        return rnd() % 5 == 0 ? 0 : v;
    }
    return rnd() % 3 == 0 ? rnd() % 17 : rnd() % max;
}

static void test_segments(void)
{
    int before = g_fail;
    for (size_t ti = 0; ti < sizeof all_types / sizeof all_types[0]; ti++) {
        tally_type t = all_types[ti];
        size_t es = tally_type_size(t);
        int fl = is_float(t);
        for (int kind = 0; kind < 3; kind++) {
            uint64_t nseg = kind == 0 ? 700 : kind == 1 ? 40 : 300;
            uint64_t *off = malloc((nseg + 1) * sizeof *off);
            off[0] = rnd() % 5; /* offsets[0] need not be 0 */
            for (uint64_t k = 0; k < nseg; k++) off[k + 1] = off[k] + seg_len_of(kind, es, 3000);
            uint64_t n = off[nseg];
            unsigned char *h = malloc(n * es + 16);
            int d = fl ? (int)(rnd() % D_COUNT) : (kind == 2 ? D_SMALL : D_BITS);
            if (fl && (d == D_HUGE || d == D_SUBNORMAL) && kind != 0) d = D_SPECIAL;
            fill(h, t, n, d);
            char what[96];
            snprintf(what, sizeof what, "layout %d (%llu segments, %s)", kind, (unsigned long long)nseg, dname[d]);
            if (fl) {
                compare_segments(t, h, off, nseg, 0, 0, 0, seg_float_ops, 7, 0, what);
                compare_segments(t, h, off, nseg, 0, 0, 0, seg_float_ops, 7, 1, what);
            } else {
                compare_segments(t, h, off, nseg, 0, 0, 0, seg_int_ops, 10, 0, what);
            }
            compare_segments(t, h, off, nseg, 0, 0, 0, seg_var_ops, 3, fl, what);
            compare_segments(t, h, off, nseg, 0, 0, 0, seg_prod_ops, 2, 0, what);
            /* one segment; every segment empty; segment 0 only */
            compare_segments(t, h, off, 1, 0, 0, 0, fl ? seg_float_ops : seg_int_ops, fl ? 7 : 10, 0, "one segment");
            free(off);
            free(h);
        }
        /* rows: packed (stride > len), overlapping (stride < len), repeated (stride 0) */
        static const uint64_t rl[][3] = {{50, 37, 100}, {20, 1025, 1024}, {30, 1, 4}, {40, 333, 0}, {3, 0, 9},
                                         {300, 4, 4}, {5, 16385, 16400}};
        for (size_t r = 0; r < sizeof rl / sizeof rl[0]; r++) {
            uint64_t nrows = rl[r][0], len = rl[r][1], stride = rl[r][2];
            uint64_t n = nrows ? (nrows - 1) * stride + len : 0;
            unsigned char *h = malloc(n * es + 16);
            fill(h, t, n, fl ? D_WIDE : D_BITS);
            char what[96];
            snprintf(what, sizeof what, "rows %llu x %llu stride %llu", (unsigned long long)nrows,
                     (unsigned long long)len, (unsigned long long)stride);
            compare_segments(t, h, NULL, 0, nrows, len, stride, fl ? seg_float_ops : seg_int_ops, fl ? 7 : 10, 0, what);
            compare_segments(t, h, NULL, 0, nrows, len, stride, seg_var_ops, 3, 0, what);
            free(h);
        }
    }
    /* integer overflow in one segment: that segment's status, the others' values */
    {
        int64_t v[8] = {INT64_MAX, 1, 5, 6, INT64_MIN, -1, 2, 3};
        uint64_t off[5] = {0, 2, 4, 6, 8};
        compare_segments(TALLY_I64, (const unsigned char *)v, off, 4, 0, 0, 0, seg_int_ops, 10, 0, "overflow");
    }
    printf("segments: %d failed\n", g_fail - before);
}

/* ---- the segmented dispatch (one workgroup per short segment) against exact references ----- */
/* An exact reference independent of the library: the sum of doubles as a fixed-point integer
 * (32-bit limbs held in int64, bit 0 = 2^-1088), rounded once to f64 (nearest, ties to even). */
#define XL 72
static double exact_sum_f64(const double *x, uint64_t n)
{
    int64_t limb[XL] = {0};
    for (uint64_t i = 0; i < n; i++) {
        int e;
        double m = frexp(x[i], &e); /* x = m * 2^e, 0.5 <= |m| < 1 */
        if (m == 0.0) continue;
        int64_t mi = (int64_t)ldexp(m, 53); /* x = mi * 2^(e - 53), exact */
        int pos = e - 53 + 1088;
        if (pos < 14) { /* subnormals: mi has trailing zeros down to 2^-1074 */
            mi >>= 14 - pos;
            pos = 14;
        }
        uint64_t mag = mi < 0 ? (uint64_t)-mi : (uint64_t)mi;
        int li = pos / 32, sh = pos % 32;
        unsigned __int128 v = (unsigned __int128)mag << sh;
        for (int k = 0; k < 4 && li + k < XL; k++) {
            int64_t piece = (int64_t)(uint32_t)(v >> (32 * k));
            limb[li + k] += mi < 0 ? -piece : piece;
        }
    }
    for (int k = 0; k < XL - 1; k++) { /* limbs in [0, 2^32), the top one signed */
        int64_t c = limb[k] >> 32;
        limb[k] -= c * 4294967296ll;
        limb[k + 1] += c;
    }
    int neg = limb[XL - 1] < 0;
    uint32_t u[XL];
    if (neg) { /* the magnitude: two's complement of the limbs */
        uint64_t carry = 1;
        for (int k = 0; k < XL; k++) {
            uint64_t t = (uint64_t)(~(uint32_t)limb[k]) + carry;
            u[k] = (uint32_t)t;
            carry = t >> 32;
        }
    } else {
        for (int k = 0; k < XL; k++) u[k] = (uint32_t)limb[k];
    }
    int top = -1;
    for (int b = XL * 32 - 1; b >= 0; b--)
        if ((u[b / 32] >> (b % 32)) & 1u) { top = b; break; }
    if (top < 0) return 0.0; /* an exact zero: the sign is the CPU comparison's business */
#define XBIT(b) ((b) >= 0 && ((u[(b) / 32] >> ((b) % 32)) & 1u))
    int lsb = top - 52 > 14 ? top - 52 : 14;
    uint64_t M = 0;
    for (int b = top; b >= lsb; b--) M = (M << 1) | (uint64_t)XBIT(b);
    int half = XBIT(lsb - 1), sticky = 0;
    for (int b = lsb - 2; b >= 0 && !sticky; b--) sticky = XBIT(b);
#undef XBIT
    if (half && (sticky || (M & 1))) M++;
    double r = ldexp((double)M, lsb - 1088);
    return neg ? -r : r;
}

static double elem_f64(tally_type t, const unsigned char *p)
{
    if (t == TALLY_F32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    double d;
    memcpy(&d, p, 8);
    return d;
}
static __int128 elem_int(tally_type t, const unsigned char *p)
{
    switch (t) {
    case TALLY_I8: return *(const int8_t *)p;
    case TALLY_U8: return *p;
    case TALLY_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case TALLY_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case TALLY_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case TALLY_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case TALLY_I64: { int64_t v; memcpy(&v, p, 8); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

/* Every segment's Vulkan sum against the exact reference: integers as __int128 (OVERFLOW past
 * the result type), floats (segments of finite values) the exact sum rounded once. */
static void check_exact_sums(tally_type t, const unsigned char *h, const uint64_t *off, uint64_t nseg,
                             const char *what)
{
    size_t es = tally_type_size(t);
    tally_op op = TALLY_SUM;
    tally_reduce_options o = {0, 1};
    tally_result *r = calloc(nseg ? nseg : 1, sizeof *r);
    tally_reduce_segments(g_vk, t, h, off, nseg, &op, 1, &o, r);
    double *tmp = NULL;
    uint64_t cap = 0;
    int bad = 0;
    for (uint64_t k = 0; k < nseg && bad < 3; k++) {
        uint64_t n = off[k + 1] - off[k];
        const unsigned char *p = h + off[k] * es;
        int ok;
        if (is_float(t)) {
            if (n > cap) {
                cap = n;
                tmp = realloc(tmp, cap * sizeof *tmp);
            }
            int finite = 1;
            for (uint64_t i = 0; i < n; i++) {
                tmp[i] = elem_f64(t, p + i * es);
                finite &= isfinite(tmp[i]) != 0;
            }
            if (!finite) continue;
            double want = exact_sum_f64(tmp, n);
            ok = r[k].status == TALLY_OK &&
                 (want == 0.0 ? r[k].value.f64 == 0.0 : memcmp(&want, &r[k].value.f64, 8) == 0);
            CHECK(ok, "exact sums %s %s: segment %llu (%llu elements): %.17g, exact %.17g", tally_type_name(t),
                  what, (unsigned long long)k, (unsigned long long)n, r[k].value.f64, want);
        } else {
            __int128 sum = 0;
            for (uint64_t i = 0; i < n; i++) sum += elem_int(t, p + i * es);
            int sg = t == TALLY_I8 || t == TALLY_I16 || t == TALLY_I32 || t == TALLY_I64;
            int fits = sg ? (sum >= INT64_MIN && sum <= INT64_MAX) : (sum >= 0 && sum <= (__int128)UINT64_MAX);
            if (!fits) ok = r[k].status == TALLY_ERR_OVERFLOW;
            else ok = r[k].status == TALLY_OK && (sg ? r[k].value.i64 == (int64_t)sum : r[k].value.u64 == (uint64_t)sum);
            CHECK(ok, "exact sums %s %s: segment %llu (%llu elements): status %s value %llu", tally_type_name(t), what,
                  (unsigned long long)k, (unsigned long long)n, tally_status_name(r[k].status),
                  (unsigned long long)r[k].value.u64);
        }
        if (!ok) bad++;
    }
    free(tmp);
    free(r);
}

/* Layouts aimed at the segmented dispatch: lengths at its shapes (0, 1, the workgroup's 256
 * invocations +-1, one 16-byte vector per invocation +-1, the bulk loop's four vectors per
 * invocation +-1), many tiny segments (more than one dispatch group of 32768), random offsets,
 * one long segment (past the short limit, the other path) among short ones; every type, the
 * float families adversarial for the exact sums; against the CPU and the exact references. */
static void test_segments_short(void)
{
    int before = g_fail;
    for (size_t ti = 0; ti < sizeof all_types / sizeof all_types[0]; ti++) {
        tally_type t = all_types[ti];
        size_t es = tally_type_size(t);
        int fl = is_float(t);
        uint64_t vpe = 16 / es;
        const uint64_t shapes[] = {0, 1, 2, 255, 256, 257, 256 * vpe - 1, 256 * vpe, 256 * vpe + 1,
                                   1024 * vpe - 1, 1024 * vpe, 1024 * vpe + 1, 3 * 1024 * vpe + 7};
        const size_t nshape = sizeof shapes / sizeof shapes[0];
        for (int layout = 0; layout < 4; layout++) {
            int tiny_many = t == TALLY_I32; /* two dispatch groups: lavapipe takes seconds */
            uint64_t nseg = layout == 0 ? 2 * nshape : layout == 1 ? (tiny_many ? 33000 : 700)
                          : layout == 2 ? 200 : 60;
            uint64_t *off = malloc((nseg + 1) * sizeof *off);
            off[0] = rnd() % 7;
            uint64_t long_at = rnd() % nseg;
            for (uint64_t k = 0; k < nseg; k++) {
                uint64_t len;
                if (layout == 0) len = shapes[k % nshape];
                else if (layout == 1) len = rnd() % 4;
                else if (layout == 2) len = rnd() % 1500;
                else len = k == long_at ? (256 * 1024) / es + 1 + rnd() % 5000 : rnd() % 300;
                off[k + 1] = off[k] + len;
            }
            uint64_t n = off[nseg];
            unsigned char *h = malloc(n * es + 16);
            int nd = fl ? D_COUNT : 3;
            for (int d = 0; d < nd; d++) {
                int dd = fl ? d : (d == 0 ? D_BITS : d == 1 ? D_SMALL : D_NEAR1);
                if (layout == 1 && d > 1 && !fl) break;
                if (layout == 1 && tiny_many && fl && d != 0 && dd != D_SPECIAL) continue; /* lavapipe's time */
                fill(h, t, n, dd);
                if (!fl && dd == D_BITS && es == 8 && layout == 0) { /* overflow in some segments, not others */
                    for (uint64_t i = 0; i < n; i += 3) h[i * es + 7] &= 0x3f;
                }
                char what[96];
                snprintf(what, sizeof what, "short layout %d (%llu segments, %s)", layout, (unsigned long long)nseg,
                         dname[dd]);
                check_exact_sums(t, h, off, nseg, what);
                /* every op on the main families (NaN rules: special; ranges: subnormal, huge) */
                int every = d == 0 || dd == D_SPECIAL || (layout == 0 && (dd == D_SUBNORMAL || dd == D_HUGE));
                if (!every || (layout == 1 && d > 0)) continue;
                if (fl) {
                    compare_segments(t, h, off, nseg, 0, 0, 0, seg_float_ops, 7, dd == D_SPECIAL, what);
                } else {
                    compare_segments(t, h, off, nseg, 0, 0, 0, seg_int_ops, 10, 0, what);
                }
                if (layout == 1) continue;
                compare_segments(t, h, off, nseg, 0, 0, 0, seg_var_ops, 3, fl && dd == D_SPECIAL, what);
                compare_segments(t, h, off, nseg, 0, 0, 0, seg_prod_ops, 2, 0, what);
            }
            free(off);
            free(h);
        }
    }
    printf("segments (segmented dispatch): %d failed\n", g_fail - before);
}

/* ---- batches: tally_vulkan_batch_begin / end ------------------------------------------------ */
typedef struct bcase {
    tally_type t;
    uint64_t n;
    int via;         /* 0 host, 1 VkBuffer */
    size_t off;      /* byte offset in the buffer */
    unsigned char *h;
    const tally_op *ops;
    size_t nops;
    int omit;
    tally_result gr[10], cr[10];
} bcase;

static void test_batch(void)
{
    int before = g_fail;
    enum { NC = 600 };
    static bcase c[NC];
    size_t boff = 0;
    /* the calls: sizes 0 .. 2^16 (mostly small), every type, host and buffer data */
    for (int i = 0; i < NC; i++) {
        c[i].t = all_types[rnd() % 10];
        size_t es = tally_type_size(c[i].t);
        int fl = is_float(c[i].t);
        c[i].n = i % 50 == 0 ? 0 : i % 97 == 0 ? 65536 + rnd() % 3 : rnd() % 2000;
        c[i].via = g_have_bufs && (rnd() & 1);
        c[i].h = malloc(c[i].n * es + 16);
        fill(c[i].h, c[i].t, c[i].n, fl ? (int)(rnd() % D_COUNT) : D_BITS);
        int which = (int)(rnd() % 4);
        c[i].ops = which == 0 ? seg_var_ops : which == 1 ? seg_prod_ops : fl ? seg_float_ops : seg_int_ops;
        c[i].nops = which == 0 ? 3 : which == 1 ? 2 : fl ? 7 : 10;
        c[i].omit = fl && (rnd() & 1);
        c[i].off = ((boff + 15) & ~(size_t)15) + es * (rnd() % 4); /* unaligned heads too */
        if (c[i].via) boff = c[i].off + c[i].n * es + 4;
    }
    unsigned char *m = g_have_bufs ? buf_at(boff + 64) : NULL;
    CHECK(tally_vulkan_batch_end(g_vk) == TALLY_ERR_INVALID_ARGUMENT, "batch_end without begin");
    CHECK(tally_vulkan_batch_begin(g_vk) == TALLY_OK, "batch_begin: %s", tally_last_error(g_vk));
    CHECK(tally_vulkan_batch_begin(g_vk) == TALLY_ERR_INVALID_ARGUMENT, "a second batch_begin");
    for (int i = 0; i < NC; i++) {
        tally_reduce_options o = {c[i].omit, 1};
        tally_status st;
        if (c[i].via) {
            memcpy(m + c[i].off, c[i].h, c[i].n * tally_type_size(c[i].t));
            st = tally_vulkan_reduce_buffer(g_vk, c[i].t, g_buf.buf, c[i].off, c[i].n, c[i].ops, c[i].nops, &o, c[i].gr);
        } else {
            st = tally_reduce_many(g_vk, c[i].t, c[i].h, c[i].n, c[i].ops, c[i].nops, &o, c[i].gr);
        }
        CHECK(st == TALLY_OK, "recording call %d: %s", i, tally_last_error(g_vk));
        if (i == 10) { /* errors while the batch is open */
            int32_t x[4] = {1, 2, 3, 4}, y[4];
            tally_result r;
            CHECK(tally_scan(g_vk, TALLY_SUM, TALLY_I32, x, y, 4, NULL) == TALLY_ERR_INVALID_ARGUMENT,
                  "a scan inside a batch");
            CHECK(tally_reduce(g_vk, TALLY_XOR, TALLY_F32, x, 4, NULL, &r) != TALLY_OK, "an argument error inside a batch");
        }
    }
    /* the host copies are the batch's: scribbling on the callers' data now changes nothing */
    unsigned char **saved = calloc(NC, sizeof *saved);
    for (int i = 0; i < NC; i++) {
        size_t bytes = c[i].n * tally_type_size(c[i].t);
        saved[i] = malloc(bytes + 1);
        memcpy(saved[i], c[i].h, bytes);
        if (!c[i].via) memset(c[i].h, 0x5a, bytes);
    }
    tally_status end = tally_vulkan_batch_end(g_vk);
    tally_status want = TALLY_OK;
    for (int i = 0; i < NC; i++) {
        tally_reduce_options o = {c[i].omit, 1};
        tally_reduce_many(g_cpu1, c[i].t, saved[i], c[i].n, c[i].ops, c[i].nops, &o, c[i].cr);
        for (size_t k = 0; k < c[i].nops; k++) {
            if (want == TALLY_OK && c[i].cr[k].status != TALLY_OK) want = c[i].cr[k].status;
            int ok = same(&c[i].gr[k], &c[i].cr[k]);
            CHECK(ok, "batch call %d: %s n=%llu via=%s off=%zu op=%s omit=%d", i, tally_type_name(c[i].t),
                  (unsigned long long)c[i].n, c[i].via ? "buffer" : "host", c[i].off, tally_op_name(c[i].ops[k]),
                  c[i].omit);
            if (!ok && g_check_printed <= g_check_limit) {
                print_result("vulkan", &c[i].gr[k]);
                print_result("cpu   ", &c[i].cr[k]);
            }
        }
        free(saved[i]);
        free(c[i].h);
    }
    free(saved);
    CHECK(end == want, "batch_end returned %s, the first failing result is %s (%s)", tally_status_name(end),
          tally_status_name(want), tally_last_error(g_vk));
    /* after the batch: calls run at once again; an empty batch; an overflow in one call */
    {
        int32_t x[3] = {1, 2, 3};
        int64_t big[2] = {INT64_MAX, 1};
        tally_result r1, r2, r3;
        CHECK(tally_vulkan_batch_begin(g_vk) == TALLY_OK && tally_vulkan_batch_end(g_vk) == TALLY_OK, "empty batch");
        tally_vulkan_batch_begin(g_vk);
        tally_reduce(g_vk, TALLY_SUM, TALLY_I32, x, 3, NULL, &r1);
        tally_reduce(g_vk, TALLY_SUM, TALLY_I64, big, 2, NULL, &r2);
        tally_reduce(g_vk, TALLY_MAX, TALLY_I32, x, 3, NULL, &r3);
        tally_status st = tally_vulkan_batch_end(g_vk);
        CHECK(st == TALLY_ERR_OVERFLOW && strstr(tally_last_error(g_vk), "call 1 of the batch"),
              "overflow in call 1: %s (%s)", tally_status_name(st), tally_last_error(g_vk));
        CHECK(r1.status == TALLY_OK && r1.value.i64 == 6 && r2.status == TALLY_ERR_OVERFLOW && r3.status == TALLY_OK &&
                  r3.value.i64 == 3, "results around the failing call");
        CHECK(tally_reduce(g_vk, TALLY_SUM, TALLY_I32, x, 3, NULL, &r1) == TALLY_OK && r1.value.i64 == 6,
              "a call after the batch");
    }
    printf("batches: %d failed\n", g_fail - before);
}

static int test_no_int64(void)
{
    setenv("TALLY_VULKAN_PRETEND_NO_INT64", "1", 1);
    int n = tally_vulkan_device_count(NULL);
    if (n == 0) {
        printf("SKIP: no Vulkan device\n0 passed, 0 failed, 1 skipped\n");
        return 77;
    }
    tally_vulkan_device_info info;
    CHECK(tally_vulkan_get_device_info(0, &info) == TALLY_OK && !info.usable &&
              strstr(info.why_not, "shaderInt64"), "device 0 listed unusable, naming shaderInt64: '%s'",
          info.why_not);
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_VULKAN;
    tally_context *c = NULL;
    tally_status s = tally_create(&c, &o);
    CHECK(s == TALLY_ERR_BACKEND_UNAVAILABLE && !c && strstr(tally_create_error(), "shaderInt64"),
          "create: %s (%s)", tally_status_name(s), tally_create_error());
    o.backend = TALLY_BACKEND_AUTO;
    s = tally_create(&c, &o);
    CHECK(s == TALLY_OK && c && tally_active_backend(c) != TALLY_BACKEND_VULKAN, "AUTO falls back: %s",
          tally_status_name(s));
    tally_destroy(c);
    printf("%d passed, %d failed, %d skipped\n", g_pass, g_fail, g_skip);
    return g_fail ? 1 : 0;
}

int main(int argc, char **argv)
{
    int full = 0, big = 0, skip_batch = 0;
    const char *only = "";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        if (!strcmp(argv[i], "--full")) full = 1;
        if (!strcmp(argv[i], "--big")) big = 1;
        if (!strcmp(argv[i], "--skip-batch")) skip_batch = 1; /* ctest runs it as its own entry */
        if (!strcmp(argv[i], "--no-int64")) return test_no_int64();
    }
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    if (tally_create(&g_cpu, &o) != TALLY_OK) {
        printf("FATAL: no CPU context: %s\n", tally_create_error());
        return 1;
    }
    o.threads = 1;
    if (tally_create(&g_cpu1, &o) != TALLY_OK) return 1;
    o.threads = 0;
    const char *quick_env = getenv("TALLY_TEST_QUICK");
    g_quick = quick_env && *quick_env && strcmp(quick_env, "0");
    if (g_quick) printf("TALLY_TEST_QUICK: the look-back matrices' placements spread over their sizes\n");
    const char *why = "";
    int ndev = tally_vulkan_device_count(&why);
    if (!tally_backend_available(TALLY_BACKEND_VULKAN)) {
        tally_context *c = NULL;
        o.backend = TALLY_BACKEND_VULKAN;
        tally_status st = tally_create(&c, &o);
        if (st != TALLY_ERR_BACKEND_UNAVAILABLE || c) {
            printf("FAIL: without a usable Vulkan device, VULKAN must report BACKEND_UNAVAILABLE (got %s)\n",
                   tally_status_name(st));
            return 1;
        }
        printf("SKIP: no usable Vulkan device here (%d listed; %s; %s)\n", ndev, why, tally_create_error());
        printf("0 passed, 0 failed, 1 skipped\n");
        return 77;
    }
    for (int i = 0; i < ndev; i++) {
        tally_vulkan_device_info info;
        tally_vulkan_get_device_info(i, &info);
        printf("vulkan device %d: %s [%s] type %d subgroup %u arith %d int64 %d f64 %d denorm32/64 %d/%d%s%s\n",
               i, info.name, info.driver, info.device_type, info.subgroup_size, info.subgroup_arithmetic,
               info.int64, info.float64, info.denorm_preserve32, info.denorm_preserve64,
               info.usable ? "" : " UNUSABLE: ", info.usable ? "" : info.why_not);
    }
    /* AUTO's GPU (include/tally.h): CUDA where it can run, else a real Vulkan GPU, never a
     * CPU-emulated one (lavapipe); no GPU: the CPU. CUDA_VISIBLE_DEVICES= hides CUDA (h200.sh
     * runs `--only auto` so on the H200, where Vulkan must then be picked). */
    {
        int real_gpu = 0;
        for (int i = 0; i < ndev; i++) {
            tally_vulkan_device_info info;
            if (tally_vulkan_get_device_info(i, &info) == TALLY_OK && info.usable &&
                info.device_type != 4 /* VK_PHYSICAL_DEVICE_TYPE_CPU */)
                real_gpu = 1;
        }
        const tally_backend_kind want = tally_backend_available(TALLY_BACKEND_CUDA) ? TALLY_BACKEND_CUDA
                                        : real_gpu                                  ? TALLY_BACKEND_VULKAN
                                                                                    : TALLY_BACKEND_CPU;
        tally_context *a = NULL;
        tally_options ao;
        tally_options_init(&ao);
        CHECK(tally_create(&a, &ao) == TALLY_OK, "AUTO context");
        if (a) {
            CHECK(tally_active_backend(a) == want, "AUTO's GPU is %s, expected %s (CUDA %s, a real Vulkan GPU %s)",
                  tally_backend_name(tally_active_backend(a)), tally_backend_name(want),
                  tally_backend_available(TALLY_BACKEND_CUDA) ? "available" : "not available",
                  real_gpu ? "present" : "absent");
            /* a sum of host data through AUTO: the CPU's bits wherever it runs */
            static float x[100003];
            for (int i = 0; i < 100003; i++) x[i] = (float)((i * 7919) % 1000) * 0.01f - 3.0f;
            tally_result ra, rc;
            tally_op op = TALLY_SUM;
            CHECK(tally_reduce(a, op, TALLY_F32, x, 100003, NULL, &ra) == TALLY_OK, "AUTO sum");
            tally_context *c = NULL;
            tally_options co;
            tally_options_init(&co);
            co.backend = TALLY_BACKEND_CPU;
            if (tally_create(&c, &co) == TALLY_OK) {
                CHECK(tally_reduce(c, op, TALLY_F32, x, 100003, NULL, &rc) == TALLY_OK, "cpu sum");
                CHECK(ra.value.f64 == rc.value.f64, "AUTO sum %.17g != cpu %.17g", ra.value.f64, rc.value.f64);
                tally_destroy(c);
            }
        }
        printf("auto: %s (expected %s)\n", a ? tally_backend_name(tally_active_backend(a)) : "-",
               tally_backend_name(want));
        tally_destroy(a);
    }
    if (!strcmp(only, "auto")) {
        printf("%d passed, %d failed, %d skipped\n", g_pass, g_fail, g_skip);
        return g_fail ? 1 : 0;
    }
    o.backend = TALLY_BACKEND_VULKAN;
    const char *dev = getenv("TALLY_TEST_VULKAN_DEVICE");
    o.device = dev ? atoi(dev) : 0;
    if (tally_create(&g_vk, &o) != TALLY_OK) {
        printf("FATAL: no Vulkan context: %s\n", tally_create_error());
        return 1;
    }
    printf("device: %s\n", tally_device_description(g_vk));
    g_have_bufs = tvk_test_init(g_vk);
    CHECK(g_have_bufs, "VkBuffers for the buffer API");
    test_errors();
    if ((!*only && !skip_batch) || !strcmp(only, "batch")) {
        test_segments();
        test_segments_short();
        test_batch();
    }
    if (!*only || !strcmp(only, "reduce")) {
        test_reduce_matrix(full);
        printf("reduce matrix: %d passed, %d failed\n", g_pass, g_fail);
    }
    if (!*only || !strcmp(only, "scan")) {
        test_scan_matrix(full);
        printf("+ scan matrix: %d passed, %d failed\n", g_pass, g_fail);
    }
    if (!strcmp(only, "lookback")) test_scan_lookback();
    if (!strcmp(only, "flookback")) test_fscan_lookback();
    if (!strcmp(only, "longchain")) test_scan_long_chain();
    test_streams();
    if (big) test_big();
    else g_skip++;
    const char *last = "";
    uint64_t msgs = tally_vulkan_validation_messages(g_vk, &last);
    const char *val = getenv("TALLY_VULKAN_VALIDATION");
    if (val && *val && strcmp(val, "0")) {
        CHECK(msgs == 0, "%llu validation messages; the last: %s", (unsigned long long)msgs, last);
        printf("validation layer: %llu messages\n", (unsigned long long)msgs);
    }
    tvk_test_buf_free(&g_buf);
    tally_destroy(g_vk);
    tally_destroy(g_cpu);
    tally_destroy(g_cpu1);
    printf("%d passed, %d failed, %d skipped\n", g_pass, g_fail, g_skip);
    return g_fail ? 1 : 0;
}
