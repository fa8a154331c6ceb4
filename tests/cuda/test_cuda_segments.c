/* GPU tests of the CUDA backend's batched reduce (tally_reduce_segments, tally_reduce_rows):
 * every segment's results against the independent exact reference (tests/support/
 * exact_reference.h: big fixed-point integers, no code shared with the library) and against the
 * CPU backend's batch, bit for bit (float products within a tolerance: tally.h lets backends
 * order them differently). Segment lengths at every kernel boundary (0, 1, warp and block sizes
 * +-1, a batch +-1; rows at the short-segment kernel's lanes-per-segment steps and its
 * switch-over to the block kernel +-1), thousands of tiny segments (alone and among block-kernel
 * ones), random offsets, one huge segment among small
 * ones (the device-wide path) and rows, on random data and on the adversarial harness's
 * families; device, pageable and pinned host data. Plain C with its own checks; without a GPU
 * it exits 77 (ctest: Skipped).
 *
 *   test_cuda_segments           the full matrix
 *   test_cuda_segments --quick   fewer datasets, no long segments (for compute-sanitizer)
 *   test_cuda_segments --cpu     the harness without a GPU (a one-thread CPU context instead) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "tally.h"
#include "support/exact_reference.h"
#include "../support/check.h"
#include "adversarial/families.h"


#define CUDA_OK(call)                                                                          \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            printf("FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static tally_context *g_cpu, *g_gpu;
/* --cpu: the harness itself without a GPU: g_gpu is a one-thread CPU context and "device"
 * buffers are host memory (the CPU batch's other split against the threaded one and against
 * the reference) */
static int g_cpu_mode;
static int g_quick; /* --quick: fewer layouts, op sets and datasets (the sanitizers' run) */

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    if (g_cpu_mode) {
        p = malloc(bytes ? bytes : 1);
        if (!p) exit(1);
    } else {
        CUDA_OK(cudaMalloc(&p, bytes ? bytes : 1));
    }
    return p;
}
static void dev_free(void *p)
{
    if (g_cpu_mode) free(p);
    else CUDA_OK(cudaFree(p));
}
static void dev_put(void *d, const void *h, size_t bytes)
{
    if (g_cpu_mode) memcpy(d, h, bytes);
    else CUDA_OK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
}
#define TALLY_TEST_RNG_SEED 0x2545f4914f6cdd1dull
#include "../support/rng.h"

/* ---- data ------------------------------------------------------------------------------------ */
enum { D_BITS, D_SMALL, D_PRICES, D_WIDE, D_SPECIAL, D_TWOSCALE, D_ADV, D_COUNT };
static const char *dname[] = {"bits", "small", "prices", "wide", "special", "twoscale", "adversarial"};

/* n elements of type t into a (malloc'd by the caller for n elements). D_ADV: the adversarial
 * families' arrays (of this type), concatenated until n are filled. */
static void fill(void *a, tally_type t, uint64_t n, int d, uint64_t *adv_index)
{
    size_t es = tally_type_size(t);
    int fl = t_is_float(t);
    if (d == D_ADV) {
        adv_limits lim = {4096, 0, 1u << t};
        uint64_t done = 0;
        while (done < n) {
            adv_case c;
            if (adv_case_make(0x5e65e65eull, (*adv_index)++, &lim, &c) != 0) exit(1);
            uint64_t k = c.n < n - done ? c.n : n - done;
            memcpy((char *)a + done * es, adv_case_array(&c), (size_t)k * es);
            done += k;
            adv_case_free(&c);
        }
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        char *p = (char *)a + i * es;
        if (!fl) {
            uint64_t v = d == D_SMALL ? (uint64_t)((int64_t)(rnd() % 7) - 3) : rnd();
            memcpy(p, &v, es); /* little endian: the low bytes */
            continue;
        }
        double v;
        switch (d) {
        case D_SMALL: v = (double)((int)(rnd() % 7) - 3); break;
        case D_PRICES: v = floor(urand() * 100000.0) / 100.0 + 0.01; break;
        case D_WIDE: v = (rnd() & 1 ? -1.0 : 1.0) * (1.0 + urand()) * ldexp(1.0, (int)(rnd() % 120) - 60); break;
        case D_SPECIAL: {
            uint64_t r = rnd() % 64;
            v = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : r == 3 ? -0.0 : r == 4 ? 0.0 : urand() - 0.5;
            break;
        }
        case D_TWOSCALE: {
            int s = t == TALLY_F32 ? 40 : 25;
            v = (rnd() & 1 ? -1.0 : 1.0) * (1.0 + urand()) * ldexp(1.0, rnd() & 2 ? s : -s);
            break;
        }
        default: {
            uint64_t b = rnd();
            if (t == TALLY_F32) { uint32_t w = (uint32_t)b; memcpy(p, &w, 4); }
            else memcpy(p, &b, 8);
            continue;
        }
        }
        if (t == TALLY_F32) {
            float f = (float)v;
            memcpy(p, &f, 4);
        } else {
            memcpy(p, &v, 8);
        }
    }
}

/* ---- one batch --------------------------------------------------------------------------------
 * A layout: segments by offsets (nseg + 1 of them), or rows (offsets NULL). */
typedef struct layout {
    const char *name;
    uint64_t *off;
    uint64_t nseg;
    uint64_t row_len, row_stride; /* rows, when off is NULL */
} layout;

static uint64_t lay_start(const layout *L, uint64_t s) { return L->off ? L->off[s] : s * L->row_stride; }
static uint64_t lay_len(const layout *L, uint64_t s) { return L->off ? L->off[s + 1] - L->off[s] : L->row_len; }
static uint64_t lay_end(const layout *L)
{
    if (L->off) return L->off[L->nseg];
    return L->nseg && L->row_len ? (L->nseg - 1) * L->row_stride + L->row_len : 0;
}

static tally_status run_batch(tally_context *ctx, tally_type t, const void *data, const layout *L,
                              const tally_op *ops, size_t nops, const tally_reduce_options *o,
                              tally_result *res)
{
    if (L->off) return tally_reduce_segments(ctx, t, data, L->off, L->nseg, ops, nops, o, res);
    return tally_reduce_rows(ctx, t, data, L->nseg, L->row_len, L->row_stride, ops, nops, o, res);
}

/* A float product's bits depend on its order (each backend has its own), and so can its overflow
 * or underflow: 1 when no order can leave the double range (the product of the segment's |x| > 1
 * and that of its |x| < 1 both stay inside it), so that every order must agree closely. */
static int prod_order_free(tally_type t, const void *data, uint64_t start, uint64_t len)
{
    double up = 0, down = 0;    /* log2 of the largest and the smallest partial product */
    for (uint64_t i = start; i < start + len; i++) {
        double x = t == TALLY_F32 ? ((const float *)data)[i] : ((const double *)data)[i];
        if (x == 0 || !isfinite(x)) continue;
        double l = log2(fabs(x));
        if (l > 0) up += l;
        else down += l;
    }
    return up < 1000 && down > -1000;
}

static void print_result(const char *who, const tally_result *r)
{
    char b[128];
    describe_result(b, sizeof b, r);
    printf("    %s: %s\n", who, b);
}

/* The batch on the GPU (gdata: the array where the GPU context reads it) against the CPU's
 * batch and, per segment, the exact reference (up to ref_max elements; SUM at any length; none
 * with ref_max = 0). */
static void check_batch(tally_type t, const void *hdata, const void *gdata, const layout *L,
                        const tally_op *ops, size_t nops, int omit, int ddof, uint64_t ref_max,
                        const char *what)
{
    size_t es = tally_type_size(t);
    uint64_t count = L->nseg * nops;
    tally_result *gr = malloc((count + 1) * sizeof *gr), *cr = malloc((count + 1) * sizeof *cr);
    if (!gr || !cr) exit(1);
    tally_reduce_options o = {omit, ddof};
    tally_status gs = run_batch(g_gpu, t, gdata, L, ops, nops, &o, gr);
    tally_status cs = run_batch(g_cpu, t, hdata, L, ops, nops, &o, cr);
    CHECK(gs == cs, "%s %s %s omit=%d: status cuda %s, cpu %s (%s)", tally_type_name(t), L->name,
          what, omit, tally_status_name(gs), tally_status_name(cs), tally_last_error(g_gpu));
    for (uint64_t k = 0; k < count; k++) {
        uint64_t s = k / nops;
        tally_op op = ops[k % nops];
        int loose = t_is_float(t) && op == TALLY_PROD;
        int ok = result_matches(&gr[k], &cr[k]);
        if (!ok && loose && gr[k].status == cr[k].status && gr[k].status == TALLY_OK) {
            /* float products: a fixed order per backend, not the same across backends; those
             * that no order takes out of range must agree closely */
            double c = cr[k].value.f64, g = gr[k].value.f64;
            int scaled = isfinite(c) && prod_order_free(t, hdata, lay_start(L, s), lay_len(L, s));
            ok = !scaled || fabs(g - c) <= 1e-6 * fabs(c);
        }
        CHECK(ok, "%s %s %s omit=%d ddof=%d: segment %llu (len %llu) %s: cuda != cpu",
              tally_type_name(t), L->name, what, omit, ddof, (unsigned long long)s,
              (unsigned long long)lay_len(L, s), tally_op_name(op));
        if (!ok && g_check_printed <= g_check_limit) {
            print_result("cuda", &gr[k]);
            print_result("cpu ", &cr[k]);
        }
        if (loose || ref_max == 0) continue;
        uint64_t len = lay_len(L, s);
        if (len > ref_max && op != TALLY_SUM) continue;
        tally_result want;
        ref_reduce(t, (const char *)hdata + lay_start(L, s) * es, len, op, omit, ddof, &want);
        int rok = result_matches(&gr[k], &want);
        CHECK(rok, "%s %s %s omit=%d ddof=%d: segment %llu (len %llu) %s: cuda != exact reference",
              tally_type_name(t), L->name, what, omit, ddof, (unsigned long long)s,
              (unsigned long long)len, tally_op_name(op));
        if (!rok && g_check_printed <= g_check_limit) {
            print_result("cuda", &gr[k]);
            print_result("ref ", &want);
        }
    }
    free(gr);
    free(cr);
}

/* Every op set a kernel specialises (and duplicates, spread back by the host) on one layout. */
static void check_layout(tally_type t, const void *hdata, const void *gdata, const layout *L,
                         uint64_t ref_max, const char *what)
{
    tally_op all[TALLY_OP_COUNT];
    size_t nall = 0;
    for (int op = 0; op < TALLY_OP_COUNT; op++) {
        if (t_is_float(t) && (op == TALLY_AND || op == TALLY_OR || op == TALLY_XOR)) continue;
        all[nall++] = (tally_op)op;
    }
    static const tally_op singles[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX, TALLY_ARGMIN,
                                       TALLY_ARGMAX, TALLY_MEAN, TALLY_VAR, TALLY_COUNT};
    static const tally_op smm[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX};
    static const tally_op amc[] = {TALLY_ARGMIN, TALLY_MIN, TALLY_COUNT};
    static const tally_op dup[] = {TALLY_SUM, TALLY_MAX, TALLY_SUM, TALLY_VAR, TALLY_MAX};
    /* the reference for every op once (the all-ops set); the other sets against the CPU */
    for (int omit = 0; omit <= t_is_float(t); omit++) {
        check_batch(t, hdata, gdata, L, all, nall, omit, 0, ref_max, what);
        check_batch(t, hdata, gdata, L, dup, 5, omit, 1, 0, what);
        for (size_t i = 0; i < sizeof singles / sizeof singles[0]; i++) {
            if (g_quick && singles[i] != TALLY_SUM && singles[i] != TALLY_VAR) continue;
            check_batch(t, hdata, gdata, L, &singles[i], 1, omit, 1, 0, what);
        }
        if (g_quick) continue;
        check_batch(t, hdata, gdata, L, smm, 3, omit, 0, 0, what);
        check_batch(t, hdata, gdata, L, amc, 3, omit, 0, 0, what);
    }
}

/* ---- layouts ------------------------------------------------------------------------------- */
static layout from_lengths(const char *name, uint64_t first, const uint64_t *len, uint64_t nseg)
{
    layout L = {name, malloc((nseg + 1) * sizeof(uint64_t)), nseg, 0, 0};
    if (!L.off) exit(1);
    L.off[0] = first;
    for (uint64_t s = 0; s < nseg; s++) L.off[s + 1] = L.off[s] + len[s];
    return L;
}

/* Rows of each length at the short-segment kernel's boundaries (segments_kernel.cuh,
 * segments_short_kernel; segments.cu picks its lanes per segment from the mean length: 4 up to
 * 32 elements, 8 up to 64, 16 up to 128, else 32) and at its switch-over to the block kernel
 * (TCU_SEG_SHORT_MAX = 4096), with odd strides (unaligned rows) every other length. */
static const uint64_t short_rows[] = {0, 1, 2, 31, 32, 33, 64, 65, 128, 129, 4095, 4096, 4097};
#define NSHORT_ROWS (sizeof short_rows / sizeof short_rows[0])

static layout make_layout(int which, int quick)
{
    if (which >= 11) {
        const int i = which - 11;
        layout L = {"rows-short", NULL, quick ? 9 : 67, short_rows[i], short_rows[i] + (uint64_t)(i & 1)};
        return L;
    }
    static const uint64_t bounds[] = {0,    1,    31,   32,   33,   255,  256,  257, 0,
                                      4095, 4096, 4097, 2047, 2048, 2049, 8191, 8192, 8193,
                                      16385, 7,   65537, 1,   3};
    uint64_t lens[5000];
    uint64_t n;
    switch (which) {
    case 0: return from_lengths("boundaries", 3, bounds, sizeof bounds / sizeof bounds[0]);
    case 1: /* many tiny segments */
        n = quick ? 200 : 5000;
        for (uint64_t s = 0; s < n; s++) lens[s] = rnd() % 4;
        return from_lengths("tiny", 1, lens, n);
    case 2: /* random lengths from a random start */
        n = quick ? 40 : 300;
        for (uint64_t s = 0; s < n; s++) lens[s] = rnd() % 3 == 0 ? rnd() % 40 : rnd() % 6000;
        return from_lengths("random", rnd() % 5, lens, n);
    case 3: { /* one huge segment among small ones: the device-wide path */
        uint64_t h[] = {5, ((uint64_t)1 << 22) + 3, 0, 1000, 77};
        return from_lengths("huge", 2, h, 5);
    }
    case 4: { /* short and long segments in one call (long: 2^19 >= the 2^18 threshold) */
        n = 40;
        for (uint64_t s = 0; s < n; s++) lens[s] = (s == 7 || s == 30) ? ((uint64_t)1 << 19) + s : rnd() % 3000;
        return from_lengths("mixed", 0, lens, n);
    }
    case 5: { layout L = {"rows", NULL, quick ? 65 : 257, 1000, 1003}; return L; }
    case 6: { layout L = {"rows-overlap", NULL, 100, 4097, 1000}; return L; }
    case 7: { layout L = {"rows-long", NULL, 3, 300001, 300005}; return L; }
    case 8: { layout L = {"rows-empty", NULL, 9, 0, 5}; return L; }
    case 9: { /* tiny segments (the short kernel, 4 lanes each) among block-kernel ones */
        n = quick ? 100 : 1000;
        for (uint64_t s = 0; s < n; s++) lens[s] = s % 97 == 5 ? 4096 + rnd() % 300 : rnd() % 40;
        return from_lengths("tiny-mixed", 7, lens, n);
    }
    default: { /* 10 */
        uint64_t z[] = {0, 0, 0};
        return from_lengths("all-empty", 4, z, 3);
    }
    }
}
#define NLAYOUTS (11 + (int)NSHORT_ROWS)

static void test_matrix(int quick)
{
    uint64_t adv_index = 0;
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        size_t es = tally_type_size((tally_type)t);
        printf("  %s ... (%d passed, %d failed so far)\n", tally_type_name((tally_type)t), g_pass, g_fail);
        fflush(stdout);
        for (int li = 0; li < NLAYOUTS; li++) {
            /* --quick (the sanitizers' run): the block-per-segment kernel's layouts only */
            if (quick && (li == 3 || li == 4 || li == 7)) continue;
            layout L = make_layout(li, quick);
            uint64_t end = lay_end(&L);
            int big = end > (1u << 20);
            void *h = malloc((size_t)(end + 1) * es);
            void *d = dev_alloc((size_t)(end + 1) * es);
            int dsets[D_COUNT], nd = 0;
            if (t_is_float((tally_type)t)) {
                int f[] = {D_BITS, D_PRICES, D_WIDE, D_SPECIAL, D_TWOSCALE, D_SMALL, D_ADV};
                for (int i = 0; i < 7; i++) dsets[nd++] = f[i];
            } else {
                int f[] = {D_BITS, D_SMALL, D_ADV};
                for (int i = 0; i < 3; i++) dsets[nd++] = f[i];
            }
            if (quick) { /* the exact sums' slow batches and spills; NaN and inf */
                nd = 0;
                if (t_is_float((tally_type)t)) dsets[nd++] = D_SPECIAL;
                dsets[nd++] = t_is_float((tally_type)t) ? D_TWOSCALE : D_BITS;
            } else if (li >= 11) { /* rows-short: plain, special and spilling data */
                nd = 0;
                if (t_is_float((tally_type)t)) {
                    dsets[nd++] = D_PRICES;
                    dsets[nd++] = D_SPECIAL;
                    dsets[nd++] = D_TWOSCALE;
                } else {
                    dsets[nd++] = D_BITS;
                    dsets[nd++] = D_SMALL;
                }
            } else if (big) {
                nd = t_is_float((tally_type)t) ? 3 : 2;
                dsets[nd - 1] = D_ADV;
            }
            for (int di = 0; di < nd; di++) {
                fill(h, (tally_type)t, end, dsets[di], &adv_index);
                dev_put(d, h, (size_t)end * es);
                char what[64];
                snprintf(what, sizeof what, "%s device", dname[dsets[di]]);
                check_layout((tally_type)t, h, d, &L, end > (1u << 18) ? 70000 : UINT64_MAX, what);
                if (li == 2 && di < 2 && !g_cpu_mode) { /* host data: pageable, then pinned */
                    snprintf(what, sizeof what, "%s pageable", dname[dsets[di]]);
                    check_layout((tally_type)t, h, h, &L, UINT64_MAX, what);
                    void *p;
                    CUDA_OK(cudaMallocHost(&p, (size_t)(end + 1) * es));
                    memcpy(p, h, (size_t)end * es);
                    snprintf(what, sizeof what, "%s pinned", dname[dsets[di]]);
                    check_layout((tally_type)t, h, p, &L, UINT64_MAX, what);
                    CUDA_OK(cudaFreeHost(p));
                }
            }
            dev_free(d);
            free(h);
            free(L.off);
        }
    }
}

/* Integer overflow is an error of its segment only; the call returns the first one's status
 * and names its segment. */
static void test_overflow(void)
{
    int64_t h[] = {1, 2, INT64_MAX / 2 + 1, INT64_MAX / 2 + 1, 5, INT64_MIN, -1, 3};
    uint64_t off[] = {0, 2, 4, 5, 7, 8};
    void *d = dev_alloc(sizeof h);
    dev_put(d, h, sizeof h);
    layout L = {"overflow", off, 5, 0, 0};
    tally_op ops[] = {TALLY_SUM, TALLY_MEAN, TALLY_MAX};
    check_batch(TALLY_I64, h, d, &L, ops, 3, 0, 0, UINT64_MAX, "edge");
    tally_result r[15];
    tally_status st = tally_reduce_segments(g_gpu, TALLY_I64, d, off, 5, ops, 3, NULL, r);
    CHECK(st == TALLY_ERR_OVERFLOW && r[3].status == TALLY_ERR_OVERFLOW && r[0].status == TALLY_OK &&
              r[0].value.i64 == 3 && r[12].status == TALLY_OK &&
              r[9].status == TALLY_ERR_OVERFLOW && strstr(tally_last_error(g_gpu), "segment 1"),
          "overflow per segment: %s, %s", tally_status_name(st), tally_last_error(g_gpu));
    /* nseg = 0 is a no-op */
    CHECK(tally_reduce_segments(g_gpu, TALLY_I64, d, off, 0, ops, 3, NULL, r) == TALLY_OK, "nseg = 0");
    dev_free(d);
}

int main(int argc, char **argv)
{
    int quick = 0;
    g_check_limit = 60;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = g_quick = 1;
        else if (!strcmp(argv[i], "--cpu")) g_cpu_mode = 1;
    }
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    if (tally_create(&g_cpu, &o) != TALLY_OK) {
        printf("FATAL: no CPU context: %s\n", tally_create_error());
        return 1;
    }
    if (g_cpu_mode) {
        o.threads = 1;
        if (tally_create(&g_gpu, &o) != TALLY_OK) return 1;
        printf("--cpu: a one-thread CPU context stands in for the GPU\n");
    } else if (!tally_backend_available(TALLY_BACKEND_CUDA)) {
        printf("SKIP: no usable CUDA device here; the segmented reduce needs one\n");
        printf("0 passed, 0 failed, 1 skipped\n");
        tally_destroy(g_cpu);
        return 77;
    } else {
        o.backend = TALLY_BACKEND_CUDA;
        if (tally_create(&g_gpu, &o) != TALLY_OK) {
            printf("FATAL: no CUDA context: %s\n", tally_create_error());
            return 1;
        }
    }
    printf("device: %s\n", tally_device_description(g_gpu));
    test_overflow();
    test_matrix(quick);
    tally_destroy(g_gpu);
    tally_destroy(g_cpu);
    printf("%d passed, %d failed, 0 skipped\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
