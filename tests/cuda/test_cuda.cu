/* GPU tests of the CUDA backend: every result compared with the CPU backend, bit for bit
 * (float products and float sum/product scans within a tolerance: tally.h lets them round
 * differently). A plain program with its own checks (no cmocka, so that it also runs on GPU
 * machines without it); ctest reads exit code 77 as "skipped".
 *
 *   test_cuda            the full matrix
 *   test_cuda --quick    a smaller matrix (for compute-sanitizer)
 *   test_cuda --big      also the > 2^31-element cases (about 6 GB of GPU memory)
 */
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <dlfcn.h>
#include <cuda_runtime.h>
#include "tally.h"
#include "tally_cuda.h"
#include "tally_cuda.cuh"
#include "../support/check.h"


/* Tuning knobs (src/cuda/tuning.h): a tuning build (-DTALLY_TUNING=ON) can set them, so the
 * variants below run there; in the default build they are constants, and a variant that needs
 * a knob away from its default is skipped (KNOB_SKIP). */
#include "cuda/tuning.h"
#ifdef TALLY_TUNING
static const bool kTuning = true;
#else
static int tally_cuda_bench_set_knob(const char *name, int value)
{
#define X(ID, knob, dflt, lo, hi)                                                                  \
    if (!strcmp(name, #knob)) return value == dflt ? dflt : -1;
    TCU_KNOBS(X)
#undef X
    return -1;
}
static const bool kTuning = false;
static unsigned tally_cuda_bench_spec_hint(tally_context *, tally_type) { return 0; }
#endif
/* in a loop: skips this iteration (counted) when a default build could not set a knob */
#define KNOB_SKIP(ok)                                                                              \
    if (!kTuning && !(ok)) {                                                                       \
        g_skip++;                                                                                  \
        continue;                                                                                  \
    }

static int g_skip = 0;
static int g_scan_fail_printed = 0;


#define CUDA_OK(call)                                                                          \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            printf("FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

/* ---- random data -------------------------------------------------------------------------- */
#include "../support/rng.h"

enum Dataset { D_BITS, D_SMALL, D_PRICES, D_WIDE, D_SPECIAL, D_NEGZERO, D_NEAR1, D_TWOSCALE, D_COUNT };
static const char *dname[] = {"bits", "small", "prices", "wide", "special", "negzero", "near1", "twoscale"};

static bool is_float(tally_type t) { return t == TALLY_F32 || t == TALLY_F64; }
/* every type of the library (tally.h's enum) */
static std::vector<tally_type> all_types()
{
    std::vector<tally_type> v;
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) v.push_back((tally_type)t);
    return v;
}

/* n elements of type t into buf (bytes). */
static void fill(std::vector<unsigned char> &buf, tally_type t, uint64_t n, Dataset d)
{
    size_t es = tally_type_size(t);
    buf.resize(n * es + 64);
    for (uint64_t i = 0; i < n; i++) {
        unsigned char *p = buf.data() + i * es;
        if (!is_float(t)) {
            uint64_t v = rnd();
            if (d == D_SMALL) v = (uint64_t)((int64_t)(rnd() % 7) - 3);
            else if (d == D_NEAR1) v = (rnd() % 16 == 0) ? (uint64_t)((int64_t)(rnd() % 5) - 2) : 1;
            memcpy(p, &v, es); /* little endian: the low bytes */
            continue;
        }
        double v;
        switch (d) {
        case D_PRICES: v = std::floor(urand() * 100000.0) / 100.0 + 0.01; break;
        case D_WIDE: v = (rnd() & 1 ? -1.0 : 1.0) * (1.0 + urand()) * std::ldexp(1.0, (int)(rnd() % 120) - 60); break;
        case D_SPECIAL: {
            uint64_t r = rnd() % 64;
            v = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : r == 3 ? -0.0 : r == 4 ? 0.0 : urand() - 0.5;
            break;
        }
        case D_NEGZERO: v = -0.0; break;
        case D_NEAR1: v = 1.0 + (urand() - 0.5) * 1e-3; break;
        case D_TWOSCALE: {
            /* two magnitudes 80 (f32) or 50 (f64) binades apart: every batch mixes them, so the
             * exact sums' fast paths reject it and the merges carry 110-odd bit spans */
            int s = t == TALLY_F32 ? 40 : 25;
            v = (rnd() & 1 ? -1.0 : 1.0) * (1.0 + urand()) * std::ldexp(1.0, rnd() & 2 ? s : -s);
            break;
        }
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

/* ---- comparisons --------------------------------------------------------------------------- */
static bool same(const tally_result &g, const tally_result &c, bool loose)
{
    if (g.status != c.status) return false;
    if (g.status != TALLY_OK) return true;
    if (g.type != c.type || g.index != c.index) return false;
    if (g.type == TALLY_F64) {
        double a = g.value.f64, b = c.value.f64;
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
        if (!loose) return g.value.u64 == c.value.u64;
        if (a == b) return true;
        double m = std::fmax(std::fabs(a), std::fabs(b));
        return std::fabs(a - b) <= 1e-9 * m;
    }
    return g.value.u64 == c.value.u64;
}

static void print_result(const char *who, const tally_result &r)
{
    printf("    %s: status=%s type=%d value=%#llx (%.17g) index=%llu\n", who,
           tally_status_name(r.status), (int)r.type, (unsigned long long)r.value.u64,
           r.type == TALLY_F64 ? r.value.f64 : (double)r.value.i64, (unsigned long long)r.index);
}

static tally_context *g_cpu, *g_cpu1, *g_gpu; /* g_cpu1: one thread, for small inputs */

/* One device buffer big enough for all the matrix cases, reused. */
static unsigned char *g_dbuf;
static size_t g_dbuf_bytes;
static unsigned char *dev_copy(const std::vector<unsigned char> &h, size_t bytes, size_t offset)
{
    if (2 * (offset + bytes) + 512 > g_dbuf_bytes) {
        if (g_dbuf) CUDA_OK(cudaFree(g_dbuf));
        /* room for an out-of-place result after the input (compare_scan) */
        g_dbuf_bytes = 2 * (offset + bytes) + 512 + (1u << 20);
        CUDA_OK(cudaMalloc(&g_dbuf, g_dbuf_bytes));
    }
    CUDA_OK(cudaMemcpy(g_dbuf + offset, h.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize()); /* a pageable copy may return before its DMA is done */
    return g_dbuf + offset;
}

/* How far some partial product of the input can leave 1 in log2 (floats; zeros, NaN and inf
 * skipped): the larger of the sums of the positive and of the negative log2|x|. Past about 1000,
 * some order of multiplication under- or overflows f64 on the way, whatever the final value. */
static double product_log2_reach(tally_type t, const void *hdata, uint64_t n)
{
    double pos = 0.0, neg = 0.0;
    for (uint64_t i = 0; i < n; i++) {
        double x = t == TALLY_F32 ? (double)((const float *)hdata)[i] : ((const double *)hdata)[i];
        if (x == 0.0 || x != x || !std::isfinite(x)) continue;
        double l = std::log2(std::fabs(x));
        if (l > 0) pos += l; else neg -= l;
    }
    return std::fmax(pos, neg);
}

static void compare_reduce(tally_type t, const void *hdata, const void *ddata, uint64_t n,
                           const tally_op *ops, size_t nops, int omit, int ddof, const char *what)
{
    tally_result gr[16], cr[16];
    tally_reduce_options o = {omit, ddof};
    tally_reduce_many(g_gpu, t, ddata, n, ops, nops, &o, gr);
    tally_reduce_many(n < 100000 ? g_cpu1 : g_cpu, t, hdata, n, ops, nops, &o, cr);
    for (size_t i = 0; i < nops; i++) {
        bool loose = is_float(t) && ops[i] == TALLY_PROD;
        bool ok = same(gr[i], cr[i], loose);
        if (!ok && loose && gr[i].status == cr[i].status) {
            /* Float products are deterministic per backend, not identical across backends:
             * their order differs, and on wide data intermediate under/overflow (to 0, inf or
             * inf*0 = NaN) depends on it. Only well-scaled products must agree closely. */
            double c = cr[i].value.f64, g = gr[i].value.f64;
            bool scaled = std::isfinite(c) && std::fabs(c) > 1e-200 && std::fabs(c) < 1e200;
            ok = !scaled || std::fabs(g - c) <= 1e-6 * std::fabs(c);
            if (!ok && (g == 0.0 || !std::isfinite(g)) && product_log2_reach(t, hdata, n) > 1000.0) {
                /* some partial products of this input leave the f64 range: whether the GPU's
                 * (tree) order meets one on the way to a scaled result (giving 0, inf, or
                 * inf*0 = NaN) depends on the order, which tally.h leaves to each backend
                 * ("computed in f64 in a fixed order, not correctly rounded") */
                ok = true;
            }
        }
        CHECK(ok, "reduce %s %s n=%llu omit=%d ddof=%d op=%s (%s)", tally_type_name(t), what,
              (unsigned long long)n, omit, ddof, tally_op_name(ops[i]), tally_last_error(g_gpu));
        if (!ok && g_check_printed <= g_check_limit) {
            print_result("cuda", gr[i]);
            print_result("cpu ", cr[i]);
        }
    }
}

static void test_reduce_matrix(bool quick)
{
    std::vector<uint64_t> sizes = {0, 1, 2, 3, 7, 16, 17, 33, 255, 257, 1023, 1025, 2047, 2049,
                                   4097, 8191, 16385, 65537, 262143, 1000003, (4u << 20) + 13};
    if (quick) sizes = {0, 1, 17, 1025, 4097, 65537, 300001};
    std::vector<unsigned char> h;
    for (tally_type t : all_types()) {
        printf("  reduce %s ... (%d passed, %d failed so far)\n", tally_type_name(t), g_pass, g_fail);
        fflush(stdout);
        size_t es = tally_type_size(t);
        std::vector<Dataset> ds;
        if (is_float(t)) ds = {D_BITS, D_PRICES, D_WIDE, D_SPECIAL, D_NEGZERO, D_SMALL, D_TWOSCALE};
        else ds = {D_BITS, D_SMALL, D_NEAR1};
        if (quick) ds.resize(is_float(t) ? 4 : 2);
        std::vector<tally_op> all;
        for (int op = 0; op < TALLY_OP_COUNT; op++) {
            if (is_float(t) && (op == TALLY_AND || op == TALLY_OR || op == TALLY_XOR)) continue;
            all.push_back((tally_op)op);
        }
        for (uint64_t n : sizes) {
            for (Dataset d : ds) {
                if (d == D_NEGZERO && n > 5000) continue;
                fill(h, t, n, d);
                size_t offs[] = {0, es, 3 * es};
                for (size_t oi = 0; oi < (quick ? 2u : 3u); oi++) {
                    size_t off = offs[oi];
                    if (oi > 0 && n > 70000) continue;
                    const unsigned char *dd = dev_copy(h, n * es, off);
                    char what[64];
                    snprintf(what, sizeof what, "%s off=%zu", dname[d], off / es);
                    for (int omit = 0; omit <= (is_float(t) ? 1 : 0); omit++) {
                        compare_reduce(t, h.data(), dd, n, all.data(), all.size(), omit, 0, what);
                        /* one op alone: each specialised kernel, and the variance's two passes */
                        const tally_op singles[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX, TALLY_ARGMIN,
                                                    TALLY_ARGMAX, TALLY_MEAN, TALLY_VAR, TALLY_COUNT};
                        for (tally_op op : singles) compare_reduce(t, h.data(), dd, n, &op, 1, omit, 1, what);
                        tally_op smm[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX};
                        compare_reduce(t, h.data(), dd, n, smm, 3, omit, 0, what);
                        tally_op amm[] = {TALLY_ARGMIN, TALLY_MIN, TALLY_COUNT};
                        compare_reduce(t, h.data(), dd, n, amm, 3, omit, 0, what);
                        /* min or max with the count: their kernel, but not the one-word combine */
                        tally_op mc[] = {TALLY_MIN, TALLY_COUNT}, xc[] = {TALLY_COUNT, TALLY_MAX};
                        compare_reduce(t, h.data(), dd, n, mc, 2, omit, 0, what);
                        compare_reduce(t, h.data(), dd, n, xc, 2, omit, 0, what);
                    }
                }
            }
        }
    }
    /* integer sums that overflow, and ones that just fit */
    {
        std::vector<int64_t> v(5000, INT64_MAX / 4000);
        int64_t *d;
        CUDA_OK(cudaMalloc(&d, v.size() * 8));
        CUDA_OK(cudaMemcpy(d, v.data(), v.size() * 8, cudaMemcpyHostToDevice));
        tally_op op = TALLY_SUM;
        compare_reduce(TALLY_I64, v.data(), d, v.size(), &op, 1, 0, 0, "overflow");
        compare_reduce(TALLY_I64, v.data(), d, 4000, &op, 1, 0, 0, "fits");
        CUDA_OK(cudaFree(d));
    }
}

/* ---- scans --------------------------------------------------------------------------------- */
static bool scan_elem_same(tally_type t, tally_op op, const unsigned char *a, const unsigned char *b)
{
    size_t es = tally_type_size(t);
    if (!is_float(t)) return memcmp(a, b, es) == 0;
    double x, y;
    if (t == TALLY_F32) {
        float fx, fy;
        memcpy(&fx, a, 4);
        memcpy(&fy, b, 4);
        x = fx;
        y = fy;
    } else {
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
    }
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    if (op == TALLY_MIN || op == TALLY_MAX) return memcmp(a, b, es) == 0;
    if (x == y) return true;
    /* sums: different association orders; f32 products of 10^5..10^6 factors drift by up to
     * n * 2^-24 relative between any two orders */
    double tol = t == TALLY_F32 ? (op == TALLY_PROD ? 5e-2 : 1e-4) : 1e-9;
    double m = std::fmax(std::fabs(x), std::fabs(y));
    return std::fabs(x - y) <= tol * std::fmax(m, 1.0);
}

static void compare_scan(tally_type t, tally_op op, const std::vector<unsigned char> &h, uint64_t n,
                         size_t in_off, size_t out_off, bool inplace, int exclusive, int has_init,
                         const char *what)
{
    size_t es = tally_type_size(t);
    tally_scan_options o;
    memset(&o, 0, sizeof o);
    o.exclusive = exclusive;
    o.has_init = has_init;
    if (is_float(t)) o.init.f64 = 2.5;
    else o.init.i64 = 5;
    std::vector<unsigned char> cpu_out(n * es + 16), gpu_out(n * es + 16);
    tally_status cs = tally_scan(n < 100000 ? g_cpu1 : g_cpu, op, t, h.data(), cpu_out.data(), n, &o);
    unsigned char *din = dev_copy(h, n * es, in_off);
    unsigned char *dout = inplace ? din : g_dbuf + ((in_off + n * es + 255) / 256 * 256) + out_off;
    if (!inplace && (size_t)(dout - g_dbuf) + n * es > g_dbuf_bytes) {
        g_skip++;
        return;
    }
    tally_status gs = tally_scan(g_gpu, op, t, din, dout, n, &o);
    CHECK(gs == cs, "scan %s %s status cuda=%s cpu=%s (%s)", tally_type_name(t), what,
          tally_status_name(gs), tally_status_name(cs), tally_last_error(g_gpu));
    if (gs != TALLY_OK || cs != TALLY_OK) return;
    if (n) CUDA_OK(cudaMemcpy(gpu_out.data(), dout, n * es, cudaMemcpyDeviceToHost));
    uint64_t bad = n, nbad = 0;
    for (uint64_t i = 0; i < n; i++)
        if (!scan_elem_same(t, op, gpu_out.data() + i * es, cpu_out.data() + i * es)) {
            if (bad == n) bad = i;
            nbad++;
        }
    if (nbad && g_scan_fail_printed++ < 60) {
        double gv = 0, cv = 0;
        memcpy(&gv, gpu_out.data() + bad * es, es > 8 ? 8 : es);
        memcpy(&cv, cpu_out.data() + bad * es, es > 8 ? 8 : es);
        printf("    first bad: cuda bits %#llx cpu bits %#llx\n", *(unsigned long long *)&gv, *(unsigned long long *)&cv);
    }
    if (nbad && g_scan_fail_printed < 60) g_check_printed = 0; /* let the scan failures print */
    CHECK(nbad == 0, "scan %s %s %s n=%llu in_off=%zu out_off=%zu inplace=%d excl=%d init=%d: "
          "%llu bad elements, first at %llu", tally_type_name(t), tally_op_name(op), what,
          (unsigned long long)n, in_off / es, out_off / es, (int)inplace, exclusive, has_init,
          (unsigned long long)nbad, (unsigned long long)bad);
}

static void test_scan_matrix(bool quick)
{
    std::vector<unsigned char> h;
    for (tally_type t : all_types()) {
        printf("  scan %s ... (%d passed, %d failed so far)\n", tally_type_name(t), g_pass, g_fail);
        fflush(stdout);
        size_t es = tally_type_size(t);
        uint64_t tile = es == 8 ? 2048 : 4096;
        /* tile: the narrow tile; the default (shape 4) is four of them */
        std::vector<uint64_t> sizes = {1, 2, 5, 33, tile - 1, tile, tile + 1, 2 * tile + 1,
                                       4 * tile - 1, 4 * tile, 4 * tile + 1, 8 * tile + 1,
                                       33 * tile + 7, 100 * tile + 3, 1000003};
        if (quick) sizes = {1, 33, tile - 1, tile + 1, 2 * tile + 1, 40 * tile + 7};
        for (int op = TALLY_SUM; op <= TALLY_XOR; op++) {
            if (is_float(t) && op >= TALLY_AND) continue;
            Dataset d = is_float(t) ? (op == TALLY_PROD ? D_NEAR1 : op == TALLY_SUM ? D_PRICES : D_SPECIAL)
                                    : (op == TALLY_PROD ? D_NEAR1 : D_BITS);
            for (uint64_t n : sizes) {
                fill(h, t, n, d);
                compare_scan(t, (tally_op)op, h, n, 0, 0, false, 0, 0, "aligned");
                compare_scan(t, (tally_op)op, h, n, 0, 0, false, 1, 0, "excl");
                compare_scan(t, (tally_op)op, h, n, es, es, false, 1, 1, "excl+init off1");
                if (!quick || n < 10000) {
                    compare_scan(t, (tally_op)op, h, n, 3 * es, es, false, 0, 0, "mismatched offsets");
                    compare_scan(t, (tally_op)op, h, n, es, 0, true, 0, 0, "in place");
                }
            }
        }
    }
}

/* The tuning knobs the benchmark measures side by side (scan tile shapes, reduce grids) must
 * give the same answers as the defaults: each one set in turn over a few sizes per type. */
static void test_knob_variants(bool quick)
{
    std::vector<unsigned char> h;
    const tally_type stypes[] = {TALLY_I8, TALLY_I32, TALLY_F32, TALLY_F64};
    for (int shape = 0; shape <= 6; shape++) {
        int old = tally_cuda_bench_set_knob("scan_wide", shape);
        KNOB_SKIP(old >= 0);
        CHECK(old >= 0, "knob scan_wide");
        for (tally_type t : stypes) {
            size_t es = tally_type_size(t);
            uint64_t tile = es == 8 ? 2048 : 4096;
            std::vector<uint64_t> sizes = {tile - 1, 2 * tile + 1, 5 * tile + 3, 300 * tile + 5};
            if (quick) sizes.resize(3);
            /* shapes 4's and 5's tile is 4 of these: one past two of its tiles (6: the default,
             * shape 4 for these sizes, 5 for the thousands of tiles below) */
            if (shape >= 4) sizes.push_back(8 * tile + 1);
            /* thousands of tiles: look-backs that cross many windows */
            if (shape >= 3) sizes.push_back(3000 * tile + 5);
            for (int op : {(int)TALLY_SUM, (int)TALLY_MAX}) {
                Dataset d = is_float(t) ? (op == TALLY_SUM ? D_PRICES : D_SPECIAL) : D_BITS;
                for (uint64_t n : sizes) {
                    fill(h, t, n, d);
                    char what[64];
                    snprintf(what, sizeof what, "scan_wide=%d", shape);
                    compare_scan(t, (tally_op)op, h, n, 0, 0, false, 0, 0, what);
                    compare_scan(t, (tally_op)op, h, n, es, es, false, 1, 1, what);
                    if (shape >= 3 && n > 1000 * tile) compare_scan(t, (tally_op)op, h, n, es, 0, true, 0, 0, what);
                }
            }
        }
        tally_cuda_bench_set_knob("scan_wide", old);
    }
    /* the look-back's tile-state spacing and pauses */
    struct { int shift, sleep, backoff; } lk[] = {{0, 20, 0}, {2, 0, 0}, {6, 32, 1000}};
    for (auto &k : lk) {
        int o1 = tally_cuda_bench_set_knob("scan_shift", k.shift);
        int o2 = tally_cuda_bench_set_knob("scan_sleep", k.sleep);
        int o3 = tally_cuda_bench_set_knob("scan_backoff", k.backoff);
        KNOB_SKIP(o1 >= 0 && o2 >= 0 && o3 >= 0);
        CHECK(o1 >= 0 && o2 >= 0 && o3 >= 0, "scan look-back knobs");
        for (tally_type t : stypes) {
            size_t es = tally_type_size(t);
            uint64_t tile = es == 8 ? 2048 : 4096;
            for (uint64_t n : {tile + 1, 700 * tile + 3}) {
                fill(h, t, n, is_float(t) ? D_PRICES : D_BITS);
                char what[64];
                snprintf(what, sizeof what, "scan_shift=%d sleep=%d backoff=%d", k.shift, k.sleep, k.backoff);
                compare_scan(t, TALLY_SUM, h, n, 0, 0, false, 0, 0, what);
                compare_scan(t, TALLY_SUM, h, n, es, es, false, 1, 1, what);
            }
        }
        tally_cuda_bench_set_knob("scan_shift", o1);
        tally_cuda_bench_set_knob("scan_sleep", o2);
        tally_cuda_bench_set_knob("scan_backoff", o3);
    }
    /* scans launched without PDL */
    for (int once = 0; once < 1; once++) {
        int o = tally_cuda_bench_set_knob("pdl", 0);
        KNOB_SKIP(o >= 0);
        CHECK(o >= 0, "knob pdl");
        for (tally_type t : stypes) {
            size_t es = tally_type_size(t);
            uint64_t tile = es == 8 ? 2048 : 4096;
            for (uint64_t n : {tile + 1, 700 * tile + 3}) {
                fill(h, t, n, is_float(t) ? D_PRICES : D_BITS);
                compare_scan(t, TALLY_SUM, h, n, 0, 0, false, 0, 0, "pdl=0");
                compare_scan(t, TALLY_SUM, h, n, es, es, false, 1, 1, "pdl=0");
            }
        }
        tally_cuda_bench_set_knob("pdl", o);
    }
    struct { const char *k1; int v1; const char *k2; int v2; } rk[] = {
        {"reduce_waves", 2, "reduce_minb", 1}, {"reduce_waves", 1, "reduce_minb", 4},
        {"reduce_waves", 3, "reduce_minb", 2},
        /* the shared-memory ring from the first batch on, both shapes; launches without PDL */
        {"reduce_ring", 1, "reduce_ring_min", 1}, {"reduce_ring", 2, "reduce_ring_min", 1},
        {"reduce_ring", 3, "reduce_ring_min", 2}, {"reduce_ring", 4, "reduce_ring_min", 1},
        {"reduce_ring", 0, "pdl", 0},
        /* the small integer sums through partials and the ticket instead of one atomic; the
         * min or max alone through partials instead of one word, and with more blocks */
        {"reduce_packed", 0, "reduce_minb", 0}, {"reduce_extreme", 0, "reduce_minb", 0},
        {"reduce_extreme", 1, "reduce_minb", 1},
        /* the exact sums' per-thread bins (ring kernels only) from the first and second batch on:
         * f64 in digits only (1), first in windows (2), first in register windows (3, the
         * default), f32 too in register windows (4) */
        {"reduce_bins", 1, "reduce_ring_min", 1}, {"reduce_bins", 1, "reduce_ring_min", 2},
        {"reduce_bins", 2, "reduce_ring_min", 1}, {"reduce_bins", 2, "reduce_ring_min", 2},
        {"reduce_bins", 3, "reduce_ring_min", 1}, {"reduce_bins", 3, "reduce_ring_min", 2},
        {"reduce_bins", 4, "reduce_ring_min", 1}, {"reduce_bins", 4, "reduce_ring_min", 2}};
    const tally_type rtypes[] = {TALLY_I32, TALLY_I64, TALLY_F32, TALLY_F64};
    const tally_op rops[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX, TALLY_ARGMIN};
    for (auto &k : rk) {
        int o1 = tally_cuda_bench_set_knob(k.k1, k.v1);
        int o2 = tally_cuda_bench_set_knob(k.k2, k.v2);
        KNOB_SKIP(o1 >= 0 && o2 >= 0);
        CHECK(o1 >= 0 && o2 >= 0, "reduce knobs");
        for (tally_type t : rtypes) {
            std::vector<uint64_t> sizes = {1000, 16389, 262147, 4000037};
            if (quick) sizes.resize(3);
            for (uint64_t n : sizes) {
                fill(h, t, n, is_float(t) ? D_PRICES : D_BITS);
                size_t es = tally_type_size(t);
                unsigned char *d = dev_copy(h, n * es, es);
                char what[96];
                snprintf(what, sizeof what, "%s=%d %s=%d", k.k1, k.v1, k.k2, k.v2);
                compare_reduce(t, h.data(), d, n, rops, 4, 0, 0, what);
                compare_reduce(t, h.data(), d, n, rops, 1, 0, 0, what); /* the sum's own kernel */
                compare_reduce(t, h.data(), d, n, rops, 3, 0, 0, what); /* sum, min, max */
                compare_reduce(t, h.data(), d, n, rops + 1, 1, 0, 0, what); /* min alone */
                compare_reduce(t, h.data(), d, n, rops + 2, 1, 0, 0, what); /* max alone */
                if (is_float(t)) { /* the exact sum's element-by-element batches */
                    fill(h, t, n, D_WIDE);
                    d = dev_copy(h, n * es, es);
                    compare_reduce(t, h.data(), d, n, rops, 1, 0, 0, what);
                }
                if (is_float(t) && !strcmp(k.k1, "reduce_bins")) /* the bins: NaN, inf, every exponent, -0 */
                    for (Dataset ds : {D_BITS, D_SPECIAL, D_NEGZERO, D_TWOSCALE}) {
                        fill(h, t, n, ds);
                        d = dev_copy(h, n * es, es);
                        compare_reduce(t, h.data(), d, n, rops, 1, 0, 0, what);
                        compare_reduce(t, h.data(), d, n, rops, 4, 0, 0, what);
                    }
            }
        }
        tally_cuda_bench_set_knob(k.k1, o1);
        tally_cuda_bench_set_knob(k.k2, o2);
    }
}

/* The exact float sums past the ring's threshold (12-13 batches per block with one block per
 * SM) on data whose batches go to the slow path: every batch (wide, twoscale), or a few (prices
 * with a huge value every 100003 elements). The exact kernels hold each ring stage until its
 * batch is summed and reread a rejected batch from there (reduce_kernel.cuh). For f32 also data
 * whose running sums are rebased every few batches, alone and with huge values after which the
 * rebase's error goes to the third term. Each ring shape, the sum alone and with min, max and
 * mean, the input one element past an aligned start; bit for bit against the CPU backend. */
static void test_exact_ring_batches(bool quick)
{
    if (quick) { /* 10^7 elements: too long under compute-sanitizer (--quick); the knob
                  * variants' ring cases cover the held stages at small sizes */
        g_skip++;
        return;
    }
    std::vector<unsigned char> h;
    const tally_op ops[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX, TALLY_MEAN};
    const int rings[] = {1, 3, 4};
    for (tally_type t : {TALLY_F32, TALLY_F64}) {
        const uint64_t n = t == TALLY_F32 ? 13000003 : 7000001;
        for (int d = 0; d < (t == TALLY_F32 ? 5 : 3); d++) {
            fill(h, t, n, d == 0 ? D_WIDE : d == 1 ? D_TWOSCALE : D_PRICES);
            const char *dn = d == 0   ? "wide"
                             : d == 1 ? "twoscale"
                             : d == 2 ? "rare huge"
                             : d == 3 ? "rebased"
                                      : "rebased, rare huge";
            if (d >= 3) /* f32: the fast path's running sum fills its window within a few batches per
                         * thread, so that it moves into the second term (f32_rebase) again and
                         * again: values in [2^21, 2^22), every 29th in [1, 2) (the grain), 21
                         * binades apart, the most a batch may span and still fit */
                for (uint64_t i = 0; i < n; i++) {
                    const float f = (float)std::ldexp(1.0 + urand(), i % 29 == 0 ? 0 : 21);
                    memcpy(h.data() + i * 4, &f, 4);
                }
            if (d == 2 || d == 4) /* a huge value of either sign every 100003 elements (d = 4: past
                                   * 2^76, so that the running sum's second term dwarfs the next
                                   * rebased sums and their errors go to the third term) */
                for (uint64_t i = 50000; i < n; i += 100003) {
                    double v = (i & 1 ? -1.0 : 1.0) * std::ldexp(1.0 + urand(), d == 4 ? 100 : t == TALLY_F32 ? 60 : 200);
                    if (t == TALLY_F32) {
                        float f = (float)v;
                        memcpy(h.data() + i * 4, &f, 4);
                    } else {
                        memcpy(h.data() + i * 8, &v, 8);
                    }
                }
            const size_t es = tally_type_size(t);
            unsigned char *dp = dev_copy(h, n * es, es);
            for (int r : rings) {
                for (int bins = 0; bins <= 4; bins++) { /* the rejected batches' bins off, on (f64: digits only, windows first, register windows first; 4: f32 too) */
                    int o = tally_cuda_bench_set_knob("reduce_ring", r);
                    int ob = tally_cuda_bench_set_knob("reduce_bins", bins);
                    KNOB_SKIP(o >= 0 && ob >= 0);
                    CHECK(o >= 0 && ob >= 0, "knobs reduce_ring, reduce_bins");
                    char what[64];
                    snprintf(what, sizeof what, "%s, reduce_ring=%d reduce_bins=%d", dn, r, bins);
                    compare_reduce(t, h.data(), dp, n, ops, 1, 0, 0, what);  /* the sum alone */
                    compare_reduce(t, h.data(), dp, n, ops, 4, 0, 0, what);  /* sum, min, max, mean */
                    tally_cuda_bench_set_knob("reduce_ring", o);
                    tally_cuda_bench_set_knob("reduce_bins", ob);
                }
            }
        }
    }
}

/* Integer sums of extreme values where the blocks' sums come closest to the one-atomic
 * combine's bound (reduce_launch.cuh, set_combine: with C count bits for the grid, each block's
 * sum below 2^(63 - 2C)) and just past it, with that combine allowed and not: bit for bit
 * against the CPU. Shapes forced through the knobs (batches per block, no ring): for i32,
 * 31 batches of 8192 per block at 128 blocks (C = 7) is inside the bound and 32 past it; 7 and
 * 8 at 256 blocks (C = 8); 1 and 2 at 512 blocks (C = 9; u32 is past it already at 1). */
static void test_sum_extremes(bool quick)
{
    const tally_type types[] = {TALLY_I8, TALLY_U8, TALLY_I16, TALLY_U16, TALLY_I32, TALLY_U32};
    const tally_op ops[] = {TALLY_SUM, TALLY_MEAN};
    struct Shape { int minb, grid; };
    const Shape shapes[] = {{0, 0}, {1, 512}, {2, 512}, {7, 256}, {8, 256}, {31, 128}, {32, 128}};
    std::vector<unsigned char> h;
    for (int packed = 1; packed >= 0; packed--) {
        for (const Shape &sh : shapes) {
            if (quick && sh.minb) continue; /* quick (the sanitizers' run): smaller sizes only */
            if (sh.minb > 2 && !packed) continue; /* the partials' path needs no bound */
            int o1 = tally_cuda_bench_set_knob("reduce_packed", packed);
            int o2 = tally_cuda_bench_set_knob("reduce_minb", sh.minb);
            int o3 = tally_cuda_bench_set_knob("reduce_ring", sh.minb ? 0 : 1);
            KNOB_SKIP(o1 >= 0 && o2 >= 0 && o3 >= 0);
            CHECK(o1 >= 0 && o2 >= 0 && o3 >= 0, "knobs reduce_packed, reduce_minb, reduce_ring");
            std::vector<uint64_t> sizes = {2, 8193, 65536 * 7 + 3, (1u << 22) - 5, 1u << 22};
            if (quick) sizes = {8193, 65536 * 7 + 3};
            for (tally_type t : types) {
                size_t es = tally_type_size(t);
                bool sg = t == TALLY_I8 || t == TALLY_I16 || t == TALLY_I32;
                if (sh.minb) { /* whole batches (32 KB) for the grid; then the last one short */
                    if (es != 4) continue;
                    uint64_t n = (32768 / es) * (uint64_t)sh.minb * (uint64_t)sh.grid;
                    sizes = {n, n - 5};
                }
                for (uint64_t n : sizes) {
                    for (int pattern = 0; pattern < 2; pattern++) {
                        /* 0: every element the type's extreme (signed: its minimum, unsigned:
                         * its maximum); 1: runs of 5000 at either end */
                        h.assign(n * es + 64, 0);
                        for (uint64_t i = 0; i < n; i++) {
                            bool hi = pattern == 0 ? !sg : ((i / 5000) & 1) != 0;
                            unsigned char *q = h.data() + i * es;
                            memset(q, hi ? 0xff : 0x00, es);
                            if (sg) q[es - 1] = hi ? 0x7f : 0x80; /* max 0x7f..ff, min 0x80..00 */
                        }
                        const unsigned char *d = dev_copy(h, n * es, 0);
                        char what[80];
                        snprintf(what, sizeof what, "extremes %d packed=%d minb=%d grid=%d", pattern, packed,
                                 sh.minb, sh.grid);
                        compare_reduce(t, h.data(), d, n, ops, 2, 0, 0, what);
                        compare_reduce(t, h.data(), d, n, ops, 1, 0, 0, what);
                    }
                }
            }
            tally_cuda_bench_set_knob("reduce_packed", o1);
            tally_cuda_bench_set_knob("reduce_minb", o2);
            tally_cuda_bench_set_knob("reduce_ring", o3);
        }
    }
}

/* Midpoint data for the speculative sum (spec_sum.cuh): a base, the half-ulp that makes the
 * sum a tie (f64: 2^-53 of it; f32 data sum exactly in f64 here, so a tie of f64 needs terms
 * 2^-53 apart as well: the f32 base and half-ulp are 2^24 and 2^-29), tiny terms far below that
 * the triples' c loses (which decide the rounding), and cancelling pairs, shuffled. With the
 * bound the speculative sum must decline these (or answer right); with E dropped it answers
 * the tie's even neighbour, wrong (the host twin, tests/exact/test_spec_triple.c, shows it). */
static void fill_midpoint(std::vector<unsigned char> &buf, tally_type t, uint64_t n, int variant)
{
    const bool f32 = t == TALLY_F32;
    std::vector<double> v;
    const int sc = f32 ? (int)(rnd() % 40) - 20 : (int)(rnd() % 400) - 200;
    const double sg = rnd() & 1 ? -1.0 : 1.0;
    const double base = f32 ? std::ldexp(1.0, sc + 24) : std::ldexp(1.0 + (double)(rnd() % 16) / 16.0, sc);
    const double half = f32 ? std::ldexp(1.0, sc - 29) : std::ldexp(1.0, sc - 53);
    v.push_back(sg * base);
    if (variant != 1) v.push_back(sg * half);
    else v.push_back(sg * (half - std::ldexp(half, -47))); /* just below the midpoint */
    const int tiny = variant == 2 ? 0 : 1 + (int)(rnd() % 3);
    for (int k = 0; k < tiny && v.size() < n; k++)
        v.push_back((rnd() & 1 ? -1.0 : 1.0) * std::ldexp(1.0, sc - (f32 ? 60 : 100) - (int)(rnd() % 30)));
    while (v.size() + 1 < n) {
        double x = (1.0 + urand()) * std::ldexp(1.0, sc + (int)(rnd() % 16) - 8);
        if (f32) x = (double)(float)x;
        v.push_back(x);
        v.push_back(-x);
    }
    while (v.size() < n) v.push_back(0.0);
    for (size_t i = v.size(); i > 1; i--) std::swap(v[i - 1], v[rnd() % i]);
    const size_t es = f32 ? 4 : 8;
    buf.assign(n * es + 64, 0);
    for (uint64_t i = 0; i < n; i++) {
        if (f32) {
            float f = (float)v[i];
            memcpy(buf.data() + i * es, &f, 4);
        } else {
            memcpy(buf.data() + i * es, &v[i], 8);
        }
    }
}

/* The speculative f32/f64 sum and mean (spec_sum.cuh) at every size (knob spec=2) and off
 * (spec=0), against the CPU bit for bit: the matrix's float datasets (NaN, inf, -0 and empty
 * answers all go to the exact path), every head misalignment, and midpoint data that it must
 * decline; then a graph replayed over data it declines and data it answers in turn (its flag
 * is written by every launch). */
static void test_spec_sum(bool quick)
{
    const tally_op sum[] = {TALLY_SUM}, sm[] = {TALLY_SUM, TALLY_MEAN}, mean[] = {TALLY_MEAN};
    const tally_type types[] = {TALLY_F32, TALLY_F64};
    std::vector<uint64_t> sizes = {1, 2, 3, 5, 17, 255, 511, 512, 513, 1023, 1025, 2049, 4097, 65537, 262143, 1000003};
    if (quick) sizes = {1, 3, 17, 513, 2049, 65537};
    std::vector<unsigned char> h;
    /* spec=2 with the default kernel shape (four loads in flight per thread, two triples), with
     * each of a tuning build's variants (TALLY_CUDA_SPEC_UNROLL, spec_sum.cu: loads x triples),
     * and spec=0 */
    static const struct { int spec; const char *unroll; } cfgs[] = {
        {2, NULL}, {2, "2"}, {2, "8"}, {2, "4x1"}, {2, "8x1"}, {2, "2x1"}, {2, "4c"}, {2, "8c"},
        {2, "4x1c"}, {2, "8x1c"}, {0, NULL}};
    for (int cfg = 0; cfg < (int)(sizeof cfgs / sizeof cfgs[0]); cfg++) {
        const int spec = cfgs[cfg].spec;
        if (cfgs[cfg].unroll && !kTuning) continue; /* only a tuning build reads it */
        /* --quick (the sanitizers' run): the shapes 8x1 and 8x1c only */
        if (quick && cfgs[cfg].unroll && strncmp(cfgs[cfg].unroll, "8x1", 3) != 0) continue;
        int old = tally_cuda_bench_set_knob("spec", spec);
        KNOB_SKIP(old >= 0);
        CHECK(old >= 0, "knob spec");
        if (cfgs[cfg].unroll) setenv("TALLY_CUDA_SPEC_UNROLL", cfgs[cfg].unroll, 1);
        for (tally_type t : types) {
            const size_t es = tally_type_size(t);
            for (uint64_t n : sizes) {
                for (int d = 0; d < D_COUNT; d++) {
                    if (quick && d != D_WIDE && d != D_SPECIAL && d != D_PRICES) continue;
                    fill(h, t, n, (Dataset)d);
                    for (size_t off = 0; off < 16; off += es) {
                        if (off && d != D_WIDE) break;
                        h.insert(h.begin(), off, 0);
                        const unsigned char *dp = dev_copy(h, n * es + off, 0) + off;
                        char what[64];
                        snprintf(what, sizeof what, "spec=%d cfg=%d %s off=%zu", spec, cfg, dname[d], off);
                        compare_reduce(t, h.data() + off, dp, n, sum, 1, 0, 0, what);
                        compare_reduce(t, h.data() + off, dp, n, sm, 2, 0, 0, what);
                        compare_reduce(t, h.data() + off, dp, n, mean, 1, 1, 0, what); /* omit: exact path */
                        h.erase(h.begin(), h.begin() + off);
                    }
                }
                for (int variant = 0; variant < 3; variant++) {
                    for (int rep = 0; rep < (quick ? 2 : 6); rep++) {
                        fill_midpoint(h, t, n < 3 ? 3 : n, variant);
                        const uint64_t m = n < 3 ? 3 : n;
                        const unsigned char *dp = dev_copy(h, m * es, 0);
                        char what[64];
                        snprintf(what, sizeof what, "spec=%d cfg=%d midpoint %d", spec, cfg, variant);
                        compare_reduce(t, h.data(), dp, m, sum, 1, 0, 0, what);
                        compare_reduce(t, h.data(), dp, m, sm, 2, 0, 0, what);
                    }
                }
            }
        }
        tally_cuda_bench_set_knob("spec", old);
        unsetenv("TALLY_CUDA_SPEC_UNROLL");
    }

    /* a graph over one buffer, replayed with midpoint data (declined) and wide data (answered)
     * in turn: each replay's speculative kernel writes its own flag (spec=1: the pass always
     * first, where a tuning build can set it; the adaptive default may capture the exact kernel
     * alone, test_spec_adaptive's case) */
    const int old_spec = tally_cuda_bench_set_knob("spec", 1);
    for (tally_type t : types) {
        const size_t es = tally_type_size(t);
        const uint64_t n = 3000017; /* above TCU_SPEC_MIN_BYTES: spec=1 runs it */
        unsigned char *d;
        tally_result *dres;
        CUDA_OK(cudaMalloc(&d, n * es));
        CUDA_OK(cudaMalloc(&dres, 4 * sizeof(tally_result)));
        cudaStream_t st = (cudaStream_t)tally_cuda_stream(g_gpu);
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_OK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
        tally_status s1 = tally_cuda_reduce_async(g_gpu, t, d, n, sm, 2, NULL, dres);
        CUDA_OK(cudaStreamEndCapture(st, &graph));
        CHECK(s1 == TALLY_OK, "spec graph capture: %s", tally_last_error(g_gpu));
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        for (int rep = 0; rep < 6; rep++) {
            if (rep % 2) fill(h, t, n, rep == 3 ? D_SPECIAL : D_WIDE);
            else fill_midpoint(h, t, n, rep / 2 % 3);
            CUDA_OK(cudaMemcpy(d, h.data(), n * es, cudaMemcpyHostToDevice));
            CUDA_OK(cudaMemset(dres, 0xab, 4 * sizeof(tally_result)));
            CUDA_OK(cudaGraphLaunch(exec, st));
            CUDA_OK(cudaStreamSynchronize(st));
            tally_result gr[2], cr[2];
            CUDA_OK(cudaMemcpy(gr, dres, 2 * sizeof(tally_result), cudaMemcpyDeviceToHost));
            tally_reduce_many(g_cpu, t, h.data(), n, sm, 2, NULL, cr);
            for (int i = 0; i < 2; i++)
                CHECK(same(gr[i], cr[i], false), "spec graph %s replay %d op %s", tally_type_name(t), rep,
                      tally_op_name(sm[i]));
        }
        CUDA_OK(cudaGraphExecDestroy(exec));
        CUDA_OK(cudaGraphDestroy(graph));
        CUDA_OK(cudaFree(d));
        CUDA_OK(cudaFree(dres));
    }
    if (old_spec >= 0) tally_cuda_bench_set_knob("spec", old_spec);
}

/* The adaptive setting (SPEC 3, the default, from 4 MiB; 4 at every size; cuda_backend.cu's
 * spec_plan) on a context of its own: narrow (prices), wide, declining (midpoint) and special
 * data in turn, so that each choice meets each kind of data (the exact kernel alone on wide
 * data after narrow data, the pass first on narrow data, the probes), every sum bit-identical
 * to the CPU backend: by synchronous calls; by asynchronous calls queued eight deep over
 * different buffers (the word each reads is stale); by a graph captured on one choice and
 * replayed over the other kinds. In a tuning build the word itself is checked after the
 * synchronous calls: narrow after two price-like sums on a fresh context and while they go on,
 * never narrow after wide data. */
enum { K_PRICES, K_WIDE, K_MID, K_SPECIAL };
static void fill_kind(std::vector<unsigned char> &h, tally_type t, uint64_t n, int kind)
{
    if (kind == K_MID) fill_midpoint(h, t, n, (int)(rnd() % 3));
    else fill(h, t, n, kind == K_PRICES ? D_PRICES : kind == K_WIDE ? D_WIDE : D_SPECIAL);
}

static void test_spec_adaptive(bool quick)
{
    const tally_op sm[] = {TALLY_SUM, TALLY_MEAN};
    const tally_type types[] = {TALLY_F32, TALLY_F64};
    static const int seq[] = {K_PRICES, K_PRICES, K_PRICES, K_WIDE, K_WIDE, K_PRICES, K_WIDE, K_PRICES,
                              K_MID, K_PRICES, K_MID, K_WIDE, K_SPECIAL, K_PRICES, K_PRICES, K_WIDE,
                              K_WIDE, K_WIDE, K_WIDE, K_WIDE, K_WIDE, K_WIDE, K_WIDE, K_PRICES, K_PRICES};
    const int nseq = (int)(sizeof seq / sizeof seq[0]);
    static const char *kname[] = {"prices", "wide", "midpoint", "special"};
    for (int mode : {4, 3}) {
        int old = tally_cuda_bench_set_knob("spec", mode);
        KNOB_SKIP(old >= 0);
        CHECK(old >= 0, "knob spec");
        for (tally_type t : types) {
            const size_t es = tally_type_size(t);
            /* mode 3 runs only from 4 MiB; mode 4 at every size */
            std::vector<uint64_t> sizes;
            if (mode == 3) sizes = {(4u << 20) / es + 17};
            else sizes = quick ? std::vector<uint64_t>{4097} : std::vector<uint64_t>{513, 4097, 65537, 300001};
            for (uint64_t n : sizes) {
                tally_options o;
                tally_options_init(&o);
                o.backend = TALLY_BACKEND_CUDA;
                tally_context *ctx = NULL;
                CHECK(tally_create(&ctx, &o) == TALLY_OK, "adaptive: context");
                if (!ctx) continue;
                tally_context *const saved = g_gpu;
                g_gpu = ctx; /* compare_reduce's GPU context */
                std::vector<unsigned char> h;
                /* synchronous calls */
                for (int i = 0; i < nseq; i++) {
                    const int k = seq[i];
                    fill_kind(h, t, n, k);
                    const unsigned char *dp = dev_copy(h, n * es, 0);
                    char what[96];
                    snprintf(what, sizeof what, "adaptive spec=%d sync call %d (%s)", mode, i, kname[k]);
                    const unsigned before = tally_cuda_bench_spec_hint(ctx, t);
                    compare_reduce(t, h.data(), dp, n, sm, 2, 0, 0, what);
                    if (kTuning) {
                        /* a fresh context probes at its second sum; narrow data stays narrow */
                        const unsigned hw = tally_cuda_bench_spec_hint(ctx, t);
                        if (k == K_PRICES && (i == 1 || before == 1u))
                            CHECK(hw == 1u, "%s %s: the word is %u, not narrow (1)", what, tally_type_name(t), hw);
                        if (k == K_WIDE || k == K_SPECIAL)
                            CHECK(hw != 1u, "%s %s: the word is narrow (1) after wide data", what, tally_type_name(t));
                    }
                }
                /* asynchronous calls, eight deep, over eight buffers of mixed kinds */
                {
                    const int kQ = 8;
                    unsigned char *d;
                    tally_result *dres;
                    CUDA_OK(cudaMalloc(&d, kQ * (n * es + 256)));
                    CUDA_OK(cudaMalloc(&dres, kQ * 2 * sizeof(tally_result)));
                    std::vector<std::vector<unsigned char>> hs(kQ);
                    const size_t stride = (n * es + 255) / 256 * 256;
                    for (int round = 0; round < 3; round++) {
                        for (int q = 0; q < kQ; q++) {
                            fill_kind(hs[q], t, n, seq[(q * 5 + round * 3) % nseq]);
                            CUDA_OK(cudaMemcpy(d + q * stride, hs[q].data(), n * es, cudaMemcpyHostToDevice));
                        }
                        CUDA_OK(cudaDeviceSynchronize());
                        for (int q = 0; q < kQ; q++)
                            CHECK(tally_cuda_reduce_async(ctx, t, d + q * stride, n, sm, 2, NULL, dres + 2 * q) == TALLY_OK,
                                  "adaptive async enqueue: %s", tally_last_error(ctx));
                        CHECK(tally_cuda_synchronize(ctx) == TALLY_OK, "adaptive async sync");
                        std::vector<tally_result> gr(2 * kQ);
                        CUDA_OK(cudaMemcpy(gr.data(), dres, 2 * kQ * sizeof(tally_result), cudaMemcpyDeviceToHost));
                        for (int q = 0; q < kQ; q++) {
                            tally_result cr[2];
                            tally_reduce_many(g_cpu, t, hs[q].data(), n, sm, 2, NULL, cr);
                            for (int i = 0; i < 2; i++)
                                CHECK(same(gr[2 * q + i], cr[i], false), "adaptive spec=%d async %s n=%llu round %d call %d op %s",
                                      mode, tally_type_name(t), (unsigned long long)n, round, q, tally_op_name(sm[i]));
                        }
                    }
                    CUDA_OK(cudaFree(d));
                    CUDA_OK(cudaFree(dres));
                }
                /* graphs: captured after price-like sums (the exact kernel alone, once the word
                 * says narrow) and after wide ones (the pass first), each replayed over every kind */
                for (int cap_kind : {K_PRICES, K_WIDE}) {
                    unsigned char *d;
                    tally_result *dres;
                    CUDA_OK(cudaMalloc(&d, n * es + 256));
                    CUDA_OK(cudaMalloc(&dres, 2 * sizeof(tally_result)));
                    for (int i = 0; i < 3; i++) {
                        fill_kind(h, t, n, cap_kind);
                        const unsigned char *dp = dev_copy(h, n * es, 0);
                        compare_reduce(t, h.data(), dp, n, sm, 2, 0, 0, "adaptive before capture");
                    }
                    cudaStream_t st = (cudaStream_t)tally_cuda_stream(ctx);
                    cudaGraph_t graph;
                    cudaGraphExec_t exec;
                    CUDA_OK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
                    tally_status s1 = tally_cuda_reduce_async(ctx, t, d, n, sm, 2, NULL, dres);
                    CUDA_OK(cudaStreamEndCapture(st, &graph));
                    CHECK(s1 == TALLY_OK, "adaptive graph capture: %s", tally_last_error(ctx));
                    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
                    for (int rep = 0; rep < 8; rep++) {
                        const int k = (rep + cap_kind) % 4;
                        fill_kind(h, t, n, k);
                        CUDA_OK(cudaMemcpy(d, h.data(), n * es, cudaMemcpyHostToDevice));
                        CUDA_OK(cudaMemset(dres, 0xab, 2 * sizeof(tally_result)));
                        CUDA_OK(cudaGraphLaunch(exec, st));
                        CUDA_OK(cudaStreamSynchronize(st));
                        tally_result gr[2], cr[2];
                        CUDA_OK(cudaMemcpy(gr, dres, 2 * sizeof(tally_result), cudaMemcpyDeviceToHost));
                        tally_reduce_many(g_cpu, t, h.data(), n, sm, 2, NULL, cr);
                        for (int i = 0; i < 2; i++)
                            CHECK(same(gr[i], cr[i], false), "adaptive spec=%d graph (captured after %s) %s n=%llu replay %d (%s) op %s",
                                  mode, kname[cap_kind], tally_type_name(t), (unsigned long long)n, rep, kname[k],
                                  tally_op_name(sm[i]));
                    }
                    CUDA_OK(cudaGraphExecDestroy(exec));
                    CUDA_OK(cudaGraphDestroy(graph));
                    CUDA_OK(cudaFree(d));
                    CUDA_OK(cudaFree(dres));
                }
                g_gpu = saved;
                tally_destroy(ctx);
            }
        }
        tally_cuda_bench_set_knob("spec", old);
    }
}

/* Float scans must give the same bits run after run (the look-back order varies). */
static void test_scan_determinism()
{
    uint64_t n = 50u << 20;
    std::vector<unsigned char> h;
    fill(h, TALLY_F32, n, D_WIDE);
    float *d, *o;
    CUDA_OK(cudaMalloc(&d, n * 4));
    CUDA_OK(cudaMalloc(&o, n * 4));
    CUDA_OK(cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice));
    std::vector<float> a(n), b(n);
    tally_scan(g_gpu, TALLY_SUM, TALLY_F32, d, o, n, NULL);
    CUDA_OK(cudaMemcpy(a.data(), o, n * 4, cudaMemcpyDeviceToHost));
    int diff = 0;
    for (int rep = 0; rep < 5; rep++) {
        tally_scan(g_gpu, TALLY_SUM, TALLY_F32, d, o, n, NULL);
        CUDA_OK(cudaMemcpy(b.data(), o, n * 4, cudaMemcpyDeviceToHost));
        diff += memcmp(a.data(), b.data(), n * 4) != 0;
    }
    CHECK(diff == 0, "float scan not deterministic: %d of 5 reruns differ", diff);
    CUDA_OK(cudaFree(d));
    CUDA_OK(cudaFree(o));
}

/* Host pointers on a CUDA context: staged through device memory. */
static void test_host_pointers()
{
    uint64_t n = 123457;
    std::vector<unsigned char> h;
    fill(h, TALLY_F64, n, D_PRICES);
    tally_op ops[] = {TALLY_SUM, TALLY_MEAN, TALLY_VAR, TALLY_ARGMAX};
    tally_result gr[4], cr[4];
    tally_reduce_many(g_gpu, TALLY_F64, h.data(), n, ops, 4, NULL, gr);
    tally_reduce_many(g_cpu, TALLY_F64, h.data(), n, ops, 4, NULL, cr);
    for (int i = 0; i < 4; i++) CHECK(same(gr[i], cr[i], false), "host pointer reduce op %s", tally_op_name(ops[i]));
    std::vector<double> go(n), co(n);
    CHECK(tally_scan(g_gpu, TALLY_MAX, TALLY_F64, h.data(), go.data(), n, NULL) == TALLY_OK, "host scan");
    tally_scan(g_cpu, TALLY_MAX, TALLY_F64, h.data(), co.data(), n, NULL);
    CHECK(memcmp(go.data(), co.data(), n * 8) == 0, "host pointer scan differs");
}

/* Async results to device memory, graph capture and replay, concurrent streams. */
static void test_async_graph_streams()
{
    uint64_t n = 3000017;
    std::vector<unsigned char> h;
    fill(h, TALLY_I32, n, D_BITS);
    int32_t *d, *o;
    tally_result *dres;
    CUDA_OK(cudaMalloc(&d, n * 4));
    CUDA_OK(cudaMalloc(&o, n * 4));
    CUDA_OK(cudaMalloc(&dres, 8 * sizeof(tally_result)));
    CUDA_OK(cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice));
    tally_op ops[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX, TALLY_ARGMIN, TALLY_VAR};
    tally_result cr[5], gr[5];
    tally_reduce_many(g_cpu, TALLY_I32, h.data(), n, ops, 5, NULL, cr);

    CHECK(tally_cuda_reserve(g_gpu, TALLY_I32, n) == TALLY_OK, "reserve");
    cudaStream_t st = (cudaStream_t)tally_cuda_stream(g_gpu);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    tally_status s1 = tally_cuda_reduce_async(g_gpu, TALLY_I32, d, n, ops, 5, NULL, dres);
    tally_status s2 = tally_cuda_scan_async(g_gpu, TALLY_SUM, TALLY_I32, d, o, n, NULL);
    CUDA_OK(cudaStreamEndCapture(st, &graph));
    CHECK(s1 == TALLY_OK && s2 == TALLY_OK, "capture: %s / %s (%s)", tally_status_name(s1),
          tally_status_name(s2), tally_last_error(g_gpu));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    std::vector<int32_t> co(n), go(n);
    tally_scan(g_cpu, TALLY_SUM, TALLY_I32, h.data(), co.data(), n, NULL);
    for (int rep = 0; rep < 3; rep++) {
        CUDA_OK(cudaMemset(dres, 0xab, 8 * sizeof(tally_result)));
        CUDA_OK(cudaMemset(o, 0xcd, n * 4));
        CUDA_OK(cudaGraphLaunch(exec, st));
        CUDA_OK(cudaStreamSynchronize(st));
        CUDA_OK(cudaMemcpy(gr, dres, 5 * sizeof(tally_result), cudaMemcpyDeviceToHost));
        for (int i = 0; i < 5; i++) CHECK(same(gr[i], cr[i], false), "graph replay %d op %s", rep, tally_op_name(ops[i]));
        CUDA_OK(cudaMemcpy(go.data(), o, n * 4, cudaMemcpyDeviceToHost));
        CHECK(memcmp(go.data(), co.data(), n * 4) == 0, "graph replay %d scan differs", rep);
    }
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));

    /* two contexts, two user streams, interleaved work */
    tally_options opt;
    tally_options_init(&opt);
    opt.backend = TALLY_BACKEND_CUDA;
    tally_context *c2 = NULL;
    CHECK(tally_create(&c2, &opt) == TALLY_OK, "second CUDA context");
    cudaStream_t s_a, s_b;
    CUDA_OK(cudaStreamCreateWithFlags(&s_a, cudaStreamNonBlocking));
    CUDA_OK(cudaStreamCreateWithFlags(&s_b, cudaStreamNonBlocking));
    tally_cuda_set_stream(g_gpu, s_a);
    tally_cuda_set_stream(c2, s_b);
    int32_t *o2;
    tally_result *dres2;
    CUDA_OK(cudaMalloc(&o2, n * 4));
    CUDA_OK(cudaMalloc(&dres2, 8 * sizeof(tally_result)));
    for (int rep = 0; rep < 4; rep++) {
        tally_cuda_scan_async(g_gpu, TALLY_SUM, TALLY_I32, d, o, n, NULL);
        tally_cuda_scan_async(c2, TALLY_SUM, TALLY_I32, d, o2, n, NULL);
        tally_cuda_reduce_async(g_gpu, TALLY_I32, d, n, ops, 5, NULL, dres);
        tally_cuda_reduce_async(c2, TALLY_I32, d, n, ops, 5, NULL, dres2);
    }
    tally_cuda_synchronize(g_gpu);
    tally_cuda_synchronize(c2);
    CUDA_OK(cudaMemcpy(go.data(), o2, n * 4, cudaMemcpyDeviceToHost));
    CHECK(memcmp(go.data(), co.data(), n * 4) == 0, "stream B scan differs");
    CUDA_OK(cudaMemcpy(go.data(), o, n * 4, cudaMemcpyDeviceToHost));
    CHECK(memcmp(go.data(), co.data(), n * 4) == 0, "stream A scan differs");
    CUDA_OK(cudaMemcpy(gr, dres2, 5 * sizeof(tally_result), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 5; i++) CHECK(same(gr[i], cr[i], false), "stream B op %s", tally_op_name(ops[i]));
    tally_cuda_set_stream(g_gpu, NULL);
    tally_destroy(c2);
    CUDA_OK(cudaStreamDestroy(s_a));
    CUDA_OK(cudaStreamDestroy(s_b));
    CUDA_OK(cudaFree(o2));
    CUDA_OK(cudaFree(dres2));
    CUDA_OK(cudaFree(d));
    CUDA_OK(cudaFree(o));
    CUDA_OK(cudaFree(dres));
}

/* More than 2^31 elements: 64-bit counts and indices all the way. */
static void test_big()
{
    uint64_t n = (1ull << 31) + 4099;
    std::vector<unsigned char> h;
    fill(h, TALLY_I8, n, D_BITS);
    h[n - 5] = (unsigned char)-128; /* argmin near the end (first -128 may be earlier) */
    unsigned char *d;
    CUDA_OK(cudaMalloc(&d, n + 16));
    CUDA_OK(cudaMemcpy(d + 1, h.data(), n, cudaMemcpyHostToDevice));
    tally_op ops[] = {TALLY_SUM, TALLY_ARGMAX, TALLY_ARGMIN, TALLY_XOR, TALLY_COUNT};
    tally_result gr[5], cr[5];
    tally_reduce_many(g_gpu, TALLY_I8, d + 1, n, ops, 5, NULL, gr);
    tally_reduce_many(g_cpu, TALLY_I8, h.data(), n, ops, 5, NULL, cr);
    for (int i = 0; i < 5; i++) {
        bool ok = same(gr[i], cr[i], false);
        CHECK(ok, "big i8 op %s", tally_op_name(ops[i]));
        if (!ok) { print_result("cuda", gr[i]); print_result("cpu ", cr[i]); }
    }
    /* i8 sum scan in place over 2^31+ elements */
    std::vector<unsigned char> co(n);
    tally_scan(g_cpu, TALLY_SUM, TALLY_I8, h.data(), co.data(), n, NULL);
    CHECK(tally_scan(g_gpu, TALLY_SUM, TALLY_I8, d + 1, d + 1, n, NULL) == TALLY_OK, "big scan");
    std::vector<unsigned char> go(n);
    CUDA_OK(cudaMemcpy(go.data(), d + 1, n, cudaMemcpyDeviceToHost));
    CHECK(memcmp(go.data(), co.data(), n) == 0, "big i8 scan differs");
    CUDA_OK(cudaFree(d));
}

/* ---- tally_cuda.cuh: the device-side primitives ------------------------------------------- */
namespace tc = tally::cuda;
template <typename T> __global__ void prim_kernel(const T *in, T *out)
{
    __shared__ T sm[32];
    T x = in[threadIdx.x];
    int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    T r[6];
    r[0] = tc::warp_reduce<tc::Sum>(x);
    r[1] = tc::warp_reduce<tc::Min>(x);
    r[2] = tc::warp_reduce<tc::Max>(x);
    r[3] = tc::block_reduce<tc::Max>(x, sm);
    r[4] = tc::block_inclusive_scan<tc::Sum>(x, sm);
    r[5] = tc::block_exclusive_scan<tc::Min>(x, (T)100, sm);
    if constexpr (std::is_integral<T>::value) {
        T a = tc::warp_reduce<tc::And>(x), o = tc::warp_reduce<tc::Or>(x), xo = tc::warp_reduce<tc::Xor>(x);
        if (l == 7) { out[6 * 256 + w] = a; out[6 * 256 + 8 + w] = o; out[6 * 256 + 16 + w] = xo; }
    }
    for (int k = 0; k < 6; k++) out[k * 256 + threadIdx.x] = r[k];
}

template <typename T> static void test_prim_type(const char *name)
{
    std::vector<T> h(256), o(6 * 256 + 24);
    for (auto &v : h) v = std::is_floating_point<T>::value ? (T)((double)(rnd() % 2000) / 8.0 - 100.0) : (T)rnd();
    T *d, *dout;
    CUDA_OK(cudaMalloc(&d, 256 * sizeof(T)));
    CUDA_OK(cudaMalloc(&dout, o.size() * sizeof(T)));
    CUDA_OK(cudaMemcpy(d, h.data(), 256 * sizeof(T), cudaMemcpyHostToDevice));
    prim_kernel<T><<<1, 256>>>(d, dout);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpy(o.data(), dout, o.size() * sizeof(T), cudaMemcpyDeviceToHost));
    int bad = 0;
    typedef typename std::conditional<std::is_floating_point<T>::value, double, uint64_t>::type Acc;
    T bmax = h[0];
    for (int i = 0; i < 256; i++) bmax = h[i] > bmax ? h[i] : bmax;
    Acc run = 0;
    T emin = (T)100;
    for (int i = 0; i < 256; i++) {
        int w = i / 32;
        Acc s = 0;
        T mn = h[w * 32], mx = h[w * 32], an = h[w * 32], orr = 0, xo = 0;
        for (int j = w * 32; j < w * 32 + 32; j++) {
            s += (Acc)h[j];
            mn = h[j] < mn ? h[j] : mn;
            mx = h[j] > mx ? h[j] : mx;
            if constexpr (std::is_integral<T>::value) { an &= h[j]; orr |= h[j]; xo ^= h[j]; }
        }
        run += (Acc)h[i];
        bad += o[i] != (T)s;
        bad += o[256 + i] != mn;
        bad += o[512 + i] != mx;
        bad += o[768 + i] != bmax;
        bad += o[1024 + i] != (T)run;
        bad += o[1280 + i] != emin;
        emin = h[i] < emin ? h[i] : emin;
        if constexpr (std::is_integral<T>::value)
            if (i % 32 == 0) bad += (o[1536 + w] != an) + (o[1544 + w] != orr) + (o[1552 + w] != xo);
    }
    CHECK(bad == 0, "tally_cuda.cuh primitives on %s: %d wrong", name, bad);
    CUDA_OK(cudaFree(d));
    CUDA_OK(cudaFree(dout));
}

static void test_primitives()
{
    test_prim_type<int32_t>("i32");
    test_prim_type<uint32_t>("u32");
    test_prim_type<uint8_t>("u8");
    test_prim_type<int64_t>("i64");
    test_prim_type<float>("f32");
    test_prim_type<double>("f64");
}

/* 1 if the CUDA driver is in the process (the runtime loads it by this name). */
static bool driver_loaded()
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != nullptr;
}

/* An AUTO context before anything touched CUDA: host data runs on the CPU, and neither the
 * context nor the calls load the driver (skipped where something, e.g. compute-sanitizer, had
 * loaded it before main). */
static void test_auto_starts_nothing(bool driver_at_start)
{
    tally_context *a = nullptr;
    tally_options o;
    tally_options_init(&o);
    CHECK(tally_create(&a, &o) == TALLY_OK, "AUTO context: %s", tally_create_error());
    if (!a) return;
    std::vector<unsigned char> h;
    fill(h, TALLY_F32, 100003, D_PRICES);
    tally_op ops[] = {TALLY_SUM, TALLY_MAX, TALLY_VAR};
    tally_result ar[3], cr[3];
    tally_reduce_many(a, TALLY_F32, h.data(), 100003, ops, 3, NULL, ar);
    tally_reduce_many(g_cpu, TALLY_F32, h.data(), 100003, ops, 3, NULL, cr);
    for (int i = 0; i < 3; i++) CHECK(same(ar[i], cr[i], false), "AUTO host reduce op %s", tally_op_name(ops[i]));
    CHECK(tally_last_backend(a) == TALLY_BACKEND_CPU, "AUTO host data ran on %s",
          tally_backend_name(tally_last_backend(a)));
    if (!driver_at_start)
        CHECK(!driver_loaded(), "an AUTO context given host data loaded the CUDA driver");
    tally_destroy(a);
}

/* An AUTO context on the GPU machine: device and managed memory run on CUDA, small host and
 * pinned arrays on the CPU, and large host data wherever the rule says, always with the CPU
 * backend's bits. */
static void test_auto_routing()
{
    tally_context *a = nullptr;
    tally_options o;
    tally_options_init(&o);
    if (tally_create(&a, &o) != TALLY_OK) {
        CHECK(false, "AUTO context: %s", tally_create_error());
        return;
    }
    CHECK(tally_active_backend(a) == TALLY_BACKEND_CUDA, "AUTO context on a GPU machine says %s",
          tally_backend_name(tally_active_backend(a)));
    const uint64_t n = 1000003;
    std::vector<unsigned char> h;
    fill(h, TALLY_F64, n, D_PRICES);
    tally_op ops[] = {TALLY_SUM, TALLY_MIN, TALLY_ARGMAX, TALLY_MEAN, TALLY_VAR};
    tally_result ar[5], cr[5];
    tally_reduce_many(g_cpu, TALLY_F64, h.data(), n, ops, 5, NULL, cr);
    auto expect = [&](const char *what, const void *p, tally_backend_kind want) {
        tally_status st = tally_reduce_many(a, TALLY_F64, p, n, ops, 5, NULL, ar);
        CHECK(st == TALLY_OK, "AUTO %s: %s", what, tally_last_error(a));
        for (int i = 0; i < 5; i++) CHECK(same(ar[i], cr[i], false), "AUTO %s op %s", what, tally_op_name(ops[i]));
        CHECK(tally_last_backend(a) == want, "AUTO %s ran on %s, not %s", what,
              tally_backend_name(tally_last_backend(a)), tally_backend_name(want));
    };
    expect("small host array", h.data(), TALLY_BACKEND_CPU);
    double *d = nullptr, *m = nullptr, *pin = nullptr;
    CUDA_OK(cudaMalloc(&d, n * 8));
    CUDA_OK(cudaMemcpy(d, h.data(), n * 8, cudaMemcpyHostToDevice));
    expect("device pointer", d, TALLY_BACKEND_CUDA);
    expect("small host array after the GPU started", h.data(), TALLY_BACKEND_CPU);
    CUDA_OK(cudaMallocManaged(&m, n * 8));
    memcpy(m, h.data(), n * 8);
    expect("managed memory", m, TALLY_BACKEND_CUDA);
    CUDA_OK(cudaMallocHost(&pin, n * 8));
    memcpy(pin, h.data(), n * 8);
    expect("small pinned array", pin, TALLY_BACKEND_CPU);
    /* scans: to CUDA when either side is device memory */
    std::vector<double> co(n), ho(n);
    tally_scan(g_cpu, TALLY_MAX, TALLY_F64, h.data(), co.data(), n, NULL);
    CHECK(tally_scan(a, TALLY_MAX, TALLY_F64, h.data(), d, n, NULL) == TALLY_OK, "AUTO scan host->device");
    CHECK(tally_last_backend(a) == TALLY_BACKEND_CUDA, "AUTO scan into device memory ran on %s",
          tally_backend_name(tally_last_backend(a)));
    CUDA_OK(cudaMemcpy(ho.data(), d, n * 8, cudaMemcpyDeviceToHost));
    CHECK(memcmp(ho.data(), co.data(), n * 8) == 0, "AUTO scan host->device differs");
    CHECK(tally_scan(a, TALLY_SUM, TALLY_F64, h.data(), ho.data(), n, NULL) == TALLY_OK, "AUTO float sum scan");
    CHECK(tally_last_backend(a) == TALLY_BACKEND_CPU, "a float sum scan of host data ran on %s",
          tally_backend_name(tally_last_backend(a)));
    tally_scan(g_cpu, TALLY_SUM, TALLY_F64, h.data(), co.data(), n, NULL);
    CHECK(memcmp(ho.data(), co.data(), n * 8) == 0, "AUTO float sum scan differs from the CPU's");
    /* 256 MiB of host integers: past the size floor, wherever the rule puts them; same bits */
    const uint64_t nb = (256ull << 20) / 4;
    std::vector<int32_t> big(nb);
    for (uint64_t i = 0; i < nb; i++) big[i] = (int32_t)((i * 2654435761u) >> 7) - (1 << 24);
    tally_result br, bc;
    CHECK(tally_reduce(a, TALLY_SUM, TALLY_I32, big.data(), nb, NULL, &br) == TALLY_OK, "AUTO big host sum");
    tally_reduce(g_cpu, TALLY_SUM, TALLY_I32, big.data(), nb, NULL, &bc);
    CHECK(same(br, bc, false), "AUTO big host sum differs from the CPU's");
    printf("auto: 256 MiB of host i32 ran on %s; rule: %s\n", tally_backend_name(tally_last_backend(a)),
           tally_auto_rule(a));
    tally_destroy(a);
    CUDA_OK(cudaFree(d));
    CUDA_OK(cudaFree(m));
    CUDA_OK(cudaFreeHost(pin));
}

/* Host data through the CUDA backend's pinned staging (pageable arrays of several staging
 * pieces, odd sizes) and pinned arrays by DMA: reductions and host-to-host scans, bit for bit
 * the CPU's. */
static void test_host_staging()
{
    for (uint64_t n : {(uint64_t)(1u << 20) - 1, (uint64_t)(5u << 20) + 12345, (uint64_t)(17u << 20) + 3}) {
        std::vector<unsigned char> h;
        fill(h, TALLY_I32, n, D_SMALL);
        tally_op ops[] = {TALLY_SUM, TALLY_MAX, TALLY_ARGMIN};
        tally_result gr[3], cr[3];
        tally_reduce_many(g_cpu, TALLY_I32, h.data(), n, ops, 3, NULL, cr);
        std::vector<int32_t> co(n), go(n);
        tally_scan(g_cpu, TALLY_SUM, TALLY_I32, h.data(), co.data(), n, NULL);
        int32_t *pin = nullptr;
        CUDA_OK(cudaMallocHost(&pin, n * 4));
        memcpy(pin, h.data(), n * 4);
        const void *srcs[2] = {h.data(), pin};
        for (int k = 0; k < 2; k++) {
            const char *kind = k ? "pinned" : "pageable";
            CHECK(tally_reduce_many(g_gpu, TALLY_I32, srcs[k], n, ops, 3, NULL, gr) == TALLY_OK,
                  "%s reduce n=%llu: %s", kind, (unsigned long long)n, tally_last_error(g_gpu));
            for (int i = 0; i < 3; i++)
                CHECK(same(gr[i], cr[i], false), "%s reduce n=%llu op %s", kind, (unsigned long long)n,
                      tally_op_name(ops[i]));
            std::fill(go.begin(), go.end(), 0);
            CHECK(tally_scan(g_gpu, TALLY_SUM, TALLY_I32, srcs[k], go.data(), n, NULL) == TALLY_OK,
                  "%s scan n=%llu: %s", kind, (unsigned long long)n, tally_last_error(g_gpu));
            CHECK(memcmp(go.data(), co.data(), n * 4) == 0, "%s scan n=%llu differs", kind,
                  (unsigned long long)n);
        }
        CUDA_OK(cudaFreeHost(pin));
    }
}

int main(int argc, char **argv)
{
    bool quick = false, big = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        if (!strcmp(argv[i], "--big")) big = true;
        if (!strcmp(argv[i], "--version")) { printf("test_cuda (tally %s)\n", tally_version()); return 0; }
    }
    bool driver_at_start = driver_loaded();
    /* Without a GPU the library must still load and the CPU backend run. */
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
    test_auto_starts_nothing(driver_at_start);
    if (!tally_backend_available(TALLY_BACKEND_CUDA)) {
        tally_context *c = NULL;
        o.backend = TALLY_BACKEND_CUDA;
        tally_status st = tally_create(&c, &o);
        int one = 1;
        tally_result r;
        tally_status cs = tally_reduce(g_cpu, TALLY_SUM, TALLY_I32, &one, 1, NULL, &r);
        if (st != TALLY_ERR_BACKEND_UNAVAILABLE || c || cs != TALLY_OK || r.value.i64 != 1) {
            printf("FAIL: without a GPU, CUDA must report BACKEND_UNAVAILABLE and CPU must run "
                   "(got %s, cpu %s)\n", tally_status_name(st), tally_status_name(cs));
            return 1;
        }
        if (g_fail) {
            printf("%d passed, %d failed (without a GPU)\n", g_pass, g_fail);
            return 1;
        }
        printf("SKIP: no usable CUDA device here (%s); the library loaded and the CPU backend ran\n",
               tally_create_error());
        printf("0 passed, 0 failed, 1 skipped\n");
        return 77;
    }
    o.backend = TALLY_BACKEND_CUDA;
    if (tally_create(&g_gpu, &o) != TALLY_OK) {
        printf("FATAL: no CUDA context: %s\n", tally_create_error());
        return 1;
    }
    printf("device: %s\n", tally_device_description(g_gpu));
    test_reduce_matrix(quick);
    printf("reduce matrix: %d passed, %d failed\n", g_pass, g_fail);
    test_scan_matrix(quick);
    printf("+ scan matrix: %d passed, %d failed\n", g_pass, g_fail);
    test_host_pointers();
    test_host_staging();
    test_auto_routing();
    printf("+ host data and AUTO: %d passed, %d failed\n", g_pass, g_fail);
    test_primitives();
    test_async_graph_streams();
    test_sum_extremes(quick);
    test_knob_variants(quick);
    printf("+ knob variants: %d passed, %d failed\n", g_pass, g_fail);
    test_exact_ring_batches(quick);
    printf("+ exact sums' slow batches in the ring: %d passed, %d failed\n", g_pass, g_fail);
    test_spec_sum(quick);
    printf("+ speculative sums: %d passed, %d failed\n", g_pass, g_fail);
    test_spec_adaptive(quick);
    printf("+ adaptive speculative sums: %d passed, %d failed\n", g_pass, g_fail);
    if (!quick) test_scan_determinism();
    if (big) test_big();
    else g_skip++;
    tally_destroy(g_gpu);
    tally_destroy(g_cpu);
    tally_destroy(g_cpu1);
    if (g_dbuf) cudaFree(g_dbuf);
    printf("%d passed, %d failed, %d skipped\n", g_pass, g_fail, g_skip);
    return g_fail ? 1 : 0;
}
