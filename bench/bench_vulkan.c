/* bench_vulkan: tally's Vulkan reductions and scans, timed on data already on the device
 * (device-local VkBuffers), beside the CPU backend on the same data in the same run. Every case
 * is validated against the CPU backend (bit for bit) before it is timed.
 *
 * Two times per case: "GPU µs", from timestamps around the command buffer (the work itself,
 * best of the runs), and "call µs", the wall time of one tally_vulkan_*_buffer call (record,
 * submit, wait: what a caller pays; median). "reduce_sum_batch" rows (2^10-2^16, every even
 * power whatever --step): the sum, 64
 * calls recorded between tally_vulkan_batch_begin and _end (one command buffer, one wait), both
 * times divided by 64, with the one-submit-each call µs in the note. Integer scans run one pass
 * (note "one pass, 32 KiB tiles": scan1.comp's decoupled look-back) and, for i32, the three-pass
 * scan too ("three passes"), on the same buffers; at 2^22 and up the i32 one-pass scan's other
 * settings as well (state spacing, store kind, look-back, tiles, spins: TALLY_BENCH_VK_SCAN_VARS,
 * see the loop), each
 * one-pass row noting its look-back's counters from one more call (tiles, steps, steps without
 * progress, fallbacks: TALLY_VULKAN_SCAN_STATS). f32 and f64 sum scans run fscan1.comp (one
 * pass in the CPU's block order with an ordered look-back; on a device without IEEE subnormals
 * a flagged call is redone on the CPU), and, inclusive, the same in the group-per-invocation
 * layout (TALLY_VULKAN_FSCAN_QUAD=0; TALLY_BENCH_VK_FROW3="NAME=VALUE;..." sets other variables
 * instead, one inclusive row each), or with TALLY_BENCH_VK_FCPU=1 the same call on the CPU
 * backend (TALLY_VULKAN_FLOAT_SCAN=cpu: download, scan, upload). Reduce rows note where the fold dispatches end (GPU
 * µs from the start; the rest is the barrier, the one-workgroup finish and the record).
 * "reduce_sum_poll" rows (2^10-2^16): one call per submit with its fence polled (up to 1 ms)
 * before the driver's sleeping wait, against the default (sleep at once) in the note. On the H200 bench/vulkan_gpu.sh joins these rows
 * with bench_cuda's (our CUDA backend and CUB, same run, same machine).
 *
 * TALLY_BENCH_VK_TYPES=i32,f32,f64 (a comma list; unset: all) picks the types of the main loop's
 * rows (reductions and scans by size), to spend less device time on a question about one type.
 *
 * "segments" rows: tally_reduce_rows (host data: the upload is in the times) of 2^16 rows x
 * 2^10 and 2^10 rows x 2^16, i32 and f32 sums, short segments in one segmented dispatch (one
 * workgroup per segment), against the CPU backend and, in the note, the path of one call per
 * segment (256 to a command buffer); n is the total element count. --segments-only runs these
 * alone.
 *
 * Reduce fold shapes (docs/vulkan.md, "Reduction speed"): with TALLY_BENCH_VK_SHAPES set to a
 * comma-separated list of grid:U:G (grid-stride, U vectors in flight, at most G workgroups),
 * block:U:G (grid-stride by blocks: a workgroup's U loads side by side), nomm:U:G (grid:U:G
 * with float min/max element by element, as before their NaN-free batch path), joined:U:G
 * (grid:U:G with the fold and the finish in one pipeline, as before they were split), onebin:U:G
 * (grid:U:G with the f64 sums' batches in one int64 bin of 7 exponent fields, as before), xold:U:G
 * (grid:U:G with the exact f32/f64 sums' former batch paths, as before the speculative ones),
 * findisp:U:G (grid:U:G with the finish dispatch after a barrier, as before the fold's last
 * workgroup finished the call) or share:U (a contiguous share per workgroup, the former plan),
 * the reduce rows of 2^24 and up run once per shape, each validated, the shape in the note
 * ("shape grid:8:2048"); smaller sizes and the other rows use the default shape. A shape row
 * runs the opt-in speculative exact-sum paths and last-workgroup finish unless its shape names
 * the default's (xold: the default exact paths; findisp: the default finish).
 *
 *   bench_vulkan [--min-log2 K] [--max-log2 N] [--step S] [--min-time SECONDS] [--warm SECONDS]
 *                [--heat SECONDS] [--out FILE]
 *                [--segments-only] [--reduce-only] [--scan-only]
 *
 * --scan-only: the scan rows alone (i32, f32 and f64).
 * --probe-f32: first the f32 sums' per-element probes and spec.comp's shapes (probe_f32 below);
 * --probe-only: those alone.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tally.h"
#include "tally_vulkan.h"

/* the library's benchmark hooks (vk_backend.c) */
TALLY_API int tally_vulkan_bench_timing(tally_context *ctx, int on);
TALLY_API double tally_vulkan_bench_gpu_us(tally_context *ctx);
TALLY_API int tally_vulkan_bench_scan_one_pass(tally_context *ctx, int on);
TALLY_API double tally_vulkan_bench_fold_us(tally_context *ctx);
TALLY_API double tally_vulkan_bench_poll_us(tally_context *ctx, double us);
TALLY_API uint64_t tally_vulkan_bench_short_bytes(tally_context *ctx, uint64_t bytes);
TALLY_API tally_status tally_vulkan_bench_buffer(tally_context *ctx, int slot, const void *data,
                                                 uint64_t bytes, VkBuffer *out);
TALLY_API int tally_vulkan_bench_reduce_shape(int grid, int u, unsigned groups);
TALLY_API int tally_vulkan_bench_spec(tally_context *ctx, int on);
TALLY_API void tally_vulkan_spec_counts(const tally_context *ctx, uint64_t *answered, uint64_t *declined);
TALLY_API int tally_vulkan_bench_float_shaders(tally_context *ctx, int on);
TALLY_API int tally_vulkan_bench_float_scan(tally_context *ctx, int mode);
TALLY_API uint32_t tally_vulkan_bench_scan_spins(tally_context *ctx, uint32_t spins);
TALLY_API uint32_t tally_vulkan_bench_scan_lookback(tally_context *ctx, uint32_t sg);
TALLY_API int tally_vulkan_bench_scan_count(tally_context *ctx, int on);
TALLY_API tally_status tally_vulkan_bench_scan_stats(tally_context *ctx, uint32_t out[4]);
TALLY_API tally_status tally_vulkan_bench_read(tally_context *ctx, VkBuffer buf, uint64_t off,
                                               uint64_t bytes, void *dst);
TALLY_API void tally_vulkan_bench_free(tally_context *ctx, int slot);
TALLY_API uint64_t tally_vulkan_bench_dedicated(tally_context *ctx, uint64_t bytes);
TALLY_API tally_status tally_vulkan_bench_copy(tally_context *ctx, int src, uint64_t src_off, int dst,
                                               uint64_t dst_off, uint64_t bytes);
TALLY_API void tally_vulkan_bench_memory(tally_context *ctx, int slot, char *out, size_t cap);
TALLY_API uint32_t tally_vulkan_bench_spec_t(tally_context *ctx, uint32_t t);
TALLY_API uint32_t tally_vulkan_bench_spec_u(tally_context *ctx, uint32_t u);
TALLY_API uint32_t tally_vulkan_bench_spec_groups(tally_context *ctx, uint32_t groups);
TALLY_API uint32_t tally_vulkan_bench_spec_sf(tally_context *ctx, uint32_t sf);
TALLY_API tally_status tally_vulkan_bench_probe(tally_context *ctx, VkBuffer buf, uint64_t n, uint32_t mode,
                                                uint32_t nch, uint32_t uu, uint32_t groups, double out[2],
                                                uint32_t *maxbits);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static tally_context *g_vk, *g_cpu;
static double g_min_time = 0.2;
static double g_warm = 0.1; /* seconds each case runs untimed first (--warm) */
/* The steady clock (docs/vulkan.md, "Clocks"): NVIDIA's driver keeps the GPU at its idle SM clock
 * under submit-and-wait calls and raises it only under sustained load. With --heat S, each case is
 * preceded by up to S seconds of batched large reductions (the heater, slot 4) until the SM
 * clock read by TALLY_BENCH_CLOCK_CMD (a command printing the clock in MHz, e.g. nvidia-smi's
 * query) reaches TALLY_BENCH_CLOCK_MIN (without a command: all S seconds). The clock read before
 * and after each case's timed runs goes into its row's note ("sm 1980/1980 MHz"). */
static double g_heat;
static const char *g_clock_cmd;
static int g_clock_min;
static char g_clock_note[48];
static FILE *g_out;
static int g_fail;
static int g_fs0; /* float scans in shaders by default (TALLY_VULKAN_FLOAT_SHADERS) */
static int g_fsc0; /* the float scans' mode (TALLY_VULKAN_FLOAT_SCAN: 0 default, 1 cpu, 2 3pass, 3 1pass) */

static void row(const char *op, tally_type t, uint64_t n, double gpu, double call, double cpu,
                double bytes, const char *note)
{
    char nn[32];
    int l = (int)round(log2((double)n));
    if ((1ull << l) == n) snprintf(nn, sizeof nn, "2^%d", l);
    else snprintf(nn, sizeof nn, "%llu", (unsigned long long)n);
    char line[640];
    snprintf(line, sizeof line, "| %-14s | %-4s | %-4s | %10.2f | %10.2f | %8.1f | %10.2f | %6.2f | %s%s%s |\n",
             op, tally_type_name(t), nn, gpu, call, bytes / (gpu * 1e3), cpu, cpu / gpu, note,
             g_clock_note[0] && note[0] ? "; " : "", g_clock_note);
    g_clock_note[0] = 0;
    fputs(line, stdout);
    fflush(stdout);
    if (g_out) {
        fputs(line, g_out);
        fflush(g_out);
    }
}

/* The SM clock in MHz from TALLY_BENCH_CLOCK_CMD (-1: no command or no number). */
static int sm_clock(void)
{
    if (!g_clock_cmd) return -1;
    FILE *p = popen(g_clock_cmd, "r");
    if (!p) return -1;
    int mhz = -1;
    if (fscanf(p, "%d", &mhz) != 1) mhz = -1;
    pclose(p);
    return mhz;
}

/* The heater: 64 i32 sums of 2^26 elements (256 MiB) in one command buffer, about 4 ms of
 * full-bandwidth reads on an H200, repeated until the clock is up or g_heat seconds are spent. */
#define HEAT_CALLS 64
static void heat(void)
{
    static VkBuffer hb;
    static int failed;
    if (g_heat <= 0 || failed) return;
    const uint64_t hn = 1ull << 26;
    if (!hb && tally_vulkan_bench_buffer(g_vk, 4, NULL, hn * 4, &hb) != TALLY_OK) {
        printf("heater: no buffer (%s); cases run without it\n", tally_last_error(g_vk));
        failed = 1;
        return;
    }
    tally_result r[HEAT_CALLS];
    tally_op op = TALLY_SUM;
    double start = now(), asked = start;
    while (now() - start < g_heat) {
        if (g_clock_cmd && g_clock_min > 0 && now() - asked >= 0.1) {
            if (sm_clock() >= g_clock_min) break;
            asked = now();
        }
        /* the heater's data is whatever the allocation held: its sums are not read */
        tally_vulkan_batch_begin(g_vk);
        for (int j = 0; j < HEAT_CALLS; j++) tally_vulkan_reduce_buffer(g_vk, TALLY_U32, hb, 0, hn, &op, 1, NULL, &r[j]);
        tally_vulkan_batch_end(g_vk);
    }
}

/* A reduce's GPU µs up to the end of its fold dispatches, in timeit's best run (0: none). */
static double g_fold;

/* Runs fn until min_time has passed (at least 3 times): best GPU µs, median call µs. */
typedef tally_status (*case_fn)(void *arg);
static void timeit(case_fn fn, void *arg, double *gpu, double *call)
{
    double t[4096];
    int k = 0;
    /* warm up first: between submissions the GPU idles and its clocks fall back (at 2^26 an idle
     * start measured a reduce 2.7x and a scan 4.4x slower than the same shader right after other
     * GPU work), so each case runs alone for g_warm seconds before it is timed */
    heat();
    for (double w = now(); now() - w < g_warm;) fn(arg);
    int mhz0 = sm_clock();
    double best = INFINITY, start = now();
    tally_vulkan_bench_gpu_us(g_vk);
    tally_vulkan_bench_fold_us(g_vk);
    g_fold = 0;
    while (k < 4096 && (k < 3 || now() - start < g_min_time)) {
        double a = now();
        fn(arg);
        t[k++] = (now() - a) * 1e6;
        double g = tally_vulkan_bench_gpu_us(g_vk), f = tally_vulkan_bench_fold_us(g_vk);
        if (g > 0 && g < best) {
            best = g;
            g_fold = f;
        }
    }
    int mhz1 = sm_clock();
    if (mhz0 >= 0 || mhz1 >= 0) snprintf(g_clock_note, sizeof g_clock_note, "sm %d/%d MHz", mhz0, mhz1);
    qsort(t, (size_t)k, sizeof t[0], cmp_d);
    *call = t[k / 2];
    *gpu = isfinite(best) ? best : *call;
}
static double time_cpu(case_fn fn, void *arg)
{
    double best = INFINITY, start = now();
    int k = 0;
    while (k < 3 || (now() - start < g_min_time && k < 1000)) {
        double a = now();
        fn(arg);
        double d = (now() - a) * 1e6;
        if (d < best) best = d;
        k++;
    }
    return best;
}

typedef struct rcase {
    tally_context *ctx;
    tally_type t;
    VkBuffer buf;
    uint64_t off; /* bytes into buf */
    const void *host;
    uint64_t n;
    tally_op op;
    tally_scan_options so;
    VkBuffer out;
    void *hout;
    tally_result r;
} rcase;

static tally_status run_reduce(void *a)
{
    rcase *c = a;
    if (c->ctx == g_cpu) return tally_reduce(g_cpu, c->op, c->t, c->host, c->n, NULL, &c->r);
    return tally_vulkan_reduce_buffer(g_vk, c->t, c->buf, c->off, c->n, &c->op, 1, NULL, &c->r);
}
static tally_status run_scan(void *a)
{
    rcase *c = a;
    if (c->ctx == g_cpu) return tally_scan(g_cpu, c->op, c->t, c->host, c->hout, c->n, &c->so);
    return tally_vulkan_scan_buffer(g_vk, c->op, c->t, c->buf, 0, c->out, 0, c->n, &c->so);
}

/* Batched calls: BATCH_CALLS reductions of the case recorded between tally_vulkan_batch_begin
 * and _end, one command buffer and one wait for all of them. */
#define BATCH_CALLS 64
typedef struct bcase {
    rcase *c;
    int calls; /* (0: BATCH_CALLS) */
    tally_result r[BATCH_CALLS];
} bcase;
static tally_status run_batch(void *a)
{
    bcase *b = a;
    int calls = b->calls ? b->calls : BATCH_CALLS;
    tally_status st = tally_vulkan_batch_begin(g_vk);
    for (int j = 0; j < calls && st == TALLY_OK; j++)
        st = tally_vulkan_reduce_buffer(g_vk, b->c->t, b->c->buf, 0, b->c->n, &b->c->op, 1, NULL, &b->r[j]);
    tally_status se = tally_vulkan_batch_end(g_vk);
    return st != TALLY_OK ? st : se;
}

/* Large reductions back to back: BATCH_BIG calls of case c in one command buffer, per call, the
 * way bench_cuda times our CUDA backend and CUB (launches back to back on a stream, per launch),
 * where a row of one submit each also holds the command buffer's start and drain. Validated
 * against want (the CPU backend's record) first; the row's note names it. 0 rows when
 * TALLY_BENCH_VK_BATCH_BIG=0. */
#define BATCH_BIG 8
static void batch_big_row(const char *name, rcase *c, const tally_result *want, double one_call_gpu, double cpu,
                          double bytes, const char *shape, const char *what)
{
    const char *e = getenv("TALLY_BENCH_VK_BATCH_BIG");
    if (e && !strcmp(e, "0")) return;
    static bcase b;
    memset(&b, 0, sizeof b);
    b.c = c;
    b.calls = BATCH_BIG;
    int ok = run_batch(&b) == TALLY_OK;
    for (int j = 0; j < BATCH_BIG && ok; j++) ok = b.r[j].status == TALLY_OK && b.r[j].value.u64 == want->value.u64;
    if (!ok) {
        printf("VALIDATION FAILED: batched %s %s n=%llu (%s)\n", name, tally_type_name(c->t),
               (unsigned long long)c->n, tally_last_error(g_vk));
        g_fail++;
        return;
    }
    double bgpu, bcall;
    uint64_t a0, d0, a1, d1;
    tally_vulkan_spec_counts(g_vk, &a0, &d0);
    timeit(run_batch, &b, &bgpu, &bcall);
    tally_vulkan_spec_counts(g_vk, &a1, &d1);
    char note[240], tier[64] = "";
    if (a1 + d1 > a0 + d0) /* the correctly rounded sums: the batch's speculative tier */
        snprintf(tier, sizeof tier, "tier answered %llu, declined %llu; ", (unsigned long long)(a1 - a0),
                 (unsigned long long)(d1 - d0));
    snprintf(note, sizeof note, "%s%s%s%d calls back to back in one command buffer, per call (one submit: %.1f µs)",
             shape, what, tier, BATCH_BIG, one_call_gpu);
    row(name, c->t, c->n, bgpu / BATCH_BIG, bcall / BATCH_BIG, cpu, bytes, note);
}

/* tally_reduce_rows: the sum of every row */
typedef struct scase {
    tally_context *ctx;
    tally_type t;
    const void *host;
    uint64_t rows, len;
    tally_result *r;
} scase;
static tally_status run_rows(void *a)
{
    scase *c = a;
    tally_op op = TALLY_SUM;
    return tally_reduce_rows(c->ctx, c->t, c->host, c->rows, c->len, c->len, &op, 1, NULL, c->r);
}

static void fill(void *p, tally_type t, uint64_t n)
{
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        switch (t) {
        case TALLY_I32: ((int32_t *)p)[i] = (int32_t)(x % 2001) - 1000; break;
        /* prices: 0.01 .. 1000.00 */
        case TALLY_F32: ((float *)p)[i] = (float)((double)(x % 100000) / 100.0 + 0.01); break;
        case TALLY_F64: ((double *)p)[i] = (double)(x % 100000) / 100.0 + 0.01; break;
        default: break;
        }
    }
}

/* ---- big buffers (docs/vulkan.md: buffers of 2 GiB and more read at half speed on the H200) --
 * The i32 sum of P = 2^k elements (1 GiB at k = 28) read from: its own buffer of P * 4 bytes; the
 * first and the last quarter of a buffer four times as large; that whole buffer (4P elements,
 * four copies: 4x the sum); the same in a dedicated allocation; and the whole buffer with the
 * block shape. Device copies of the P * 4 bytes between the buffers are timed too (a read and a
 * write each, by the driver's copy, not our shader). Every sum is checked against the CPU's.
 * Rows "bigbuf_sum" / "bigbuf_copy"; the note says which buffer. */
static tally_status run_copy_case(void *a);
typedef struct ccase {
    int src, dst;
    uint64_t src_off, dst_off, bytes;
} ccase;
static tally_status run_copy_case(void *a)
{
    ccase *c = a;
    return tally_vulkan_bench_copy(g_vk, c->src, c->src_off, c->dst, c->dst_off, c->bytes);
}
static int big_probe(int k)
{
    uint64_t n = 1ull << k, bytes = n * 4;
    int32_t *h = malloc(bytes);
    if (!h) return 1;
    fill(h, TALLY_I32, n);
    tally_result ref;
    tally_reduce(g_cpu, TALLY_SUM, TALLY_I32, h, n, NULL, &ref);
    char mem[2048];
    VkBuffer one, four;
    for (int sl = 0; sl < 4; sl++) tally_vulkan_bench_free(g_vk, sl);
    if (tally_vulkan_bench_buffer(g_vk, 0, h, bytes, &one) != TALLY_OK ||
        tally_vulkan_bench_buffer(g_vk, 1, NULL, bytes, &four) != TALLY_OK) { /* 1: a copy target */
        printf("big buffers: %s\n", tally_last_error(g_vk));
        free(h);
        return 1;
    }
    tally_vulkan_bench_memory(g_vk, 0, mem, sizeof mem);
    printf("%s", mem);
    int fails = 0;
    for (int ded = 0; ded < 2; ded++) {
        int slot = 2 + ded;
        uint64_t old = tally_vulkan_bench_dedicated(g_vk, ded ? bytes : 0);
        tally_status st = tally_vulkan_bench_buffer(g_vk, slot, NULL, 4 * bytes, &four);
        tally_vulkan_bench_dedicated(g_vk, old);
        if (st != TALLY_OK) {
            printf("big buffers: %s\n", tally_last_error(g_vk));
            break;
        }
        tally_vulkan_bench_memory(g_vk, slot, mem, sizeof mem);
        printf("%s%s", ded ? "(dedicated) " : "", strstr(mem, "buffer slot") ? strstr(mem, "buffer slot") : "");
        const char *alloc = ded ? "dedicated" : "one";
        char note[160];
        double gpu, call;
        if (!ded) {
            ccase cc = {0, 1, 0, 0, bytes};
            timeit(run_copy_case, &cc, &gpu, &call);
            snprintf(note, sizeof note, "copy between two buffers of %llu MiB (read + write)",
                     (unsigned long long)(bytes >> 20));
            row("bigbuf_copy", TALLY_I32, n, gpu, call, 0, 2.0 * bytes, note);
            rcase c;
            memset(&c, 0, sizeof c);
            c.t = TALLY_I32, c.buf = one, c.n = n, c.op = TALLY_SUM;
            run_reduce(&c);
            if (c.r.status != TALLY_OK || c.r.value.i64 != ref.value.i64) {
                printf("VALIDATION FAILED: bigbuf_sum, its own buffer (%s)\n", tally_last_error(g_vk));
                fails++;
                g_fail++;
            } else {
                timeit(run_reduce, &c, &gpu, &call);
                snprintf(note, sizeof note, "its own buffer of %llu MiB", (unsigned long long)(bytes >> 20));
                row("bigbuf_sum", TALLY_I32, n, gpu, call, 0, (double)bytes, note);
            }
        }
        for (int q = 0; q < 4; q++) {
            ccase cc = {0, slot, 0, (uint64_t)q * bytes, bytes};
            if (q == 0 || q == 3) {
                timeit(run_copy_case, &cc, &gpu, &call);
                snprintf(note, sizeof note, "copy into quarter %d of a %s allocation of %llu MiB", q, alloc,
                         (unsigned long long)(4 * bytes >> 20));
                row("bigbuf_copy", TALLY_I32, n, gpu, call, 0, 2.0 * bytes, note);
            } else if (run_copy_case(&cc) != TALLY_OK) {
                printf("big buffers: copy failed (%s)\n", tally_last_error(g_vk));
                fails++;
            }
        }
        for (int v = 0; v < 4; v++) {
            /* 0: quarter 0; 1: quarter 3; 2: the whole buffer; 3: the whole, block shape */
            if (v == 3) tally_vulkan_bench_reduce_shape(2, 8, 0);
            rcase c;
            memset(&c, 0, sizeof c);
            c.t = TALLY_I32, c.buf = four, c.op = TALLY_SUM;
            c.off = v == 1 ? 3 * bytes : 0;
            c.n = v >= 2 ? 4 * n : n;
            int64_t want = v >= 2 ? 4 * ref.value.i64 : ref.value.i64;
            run_reduce(&c);
            int ok = c.r.status == TALLY_OK && c.r.value.i64 == want;
            if (!ok) {
                printf("VALIDATION FAILED: bigbuf_sum %s v%d (%s)\n", alloc, v, tally_last_error(g_vk));
                fails++;
                g_fail++;
            } else {
                timeit(run_reduce, &c, &gpu, &call);
                static const char *const what[] = {"quarter 0 of", "quarter 3 of", "all of", "all of"};
                snprintf(note, sizeof note, "%s a %s allocation of %llu MiB%s", what[v], alloc,
                         (unsigned long long)(4 * bytes >> 20), v == 3 ? ", shape block:8:2048" : "");
                row("bigbuf_sum", TALLY_I32, c.n, gpu, call, 0, (double)c.n * 4, note);
            }
            if (v == 3) tally_vulkan_bench_reduce_shape(-1, 0, 0);
        }
        tally_vulkan_bench_free(g_vk, slot);
    }
    for (int sl = 0; sl < 4; sl++) tally_vulkan_bench_free(g_vk, sl);
    free(h);
    return fails;
}

/* ---- the f32 sums' per-element probes (--probe-f32; docs/vulkan.md, "The f32 sums' pace") -----
 * probe.comp's modes over the bench's f32 prices, each row "probe_f32" with its mode in the note
 * and its GPU time over probe (a)'s (the f32 max's work, same reads) as "x(a)"; then the
 * library's own f32 and f64 sums (the speculative tier, TALLY_VULKAN_SPEC=2 for the rows) in
 * spec.comp's shapes, "reduce_sum" rows (so that vulkan_join.awk puts our CUDA backend's time
 * beside them) noting "spec shape t4 u8 g2048 step q4 sel": triples per invocation, loads in
 * flight, workgroups at most, the step written out, f32 vectors summed exactly first, selects
 * for the widening's branches (spec.comp's NT, UU, SF). The default shape first; each validated
 * bit for bit against the CPU (correctly rounded sums), its ratios to (a) and to the default
 * shape in the note. Sizes: TALLY_BENCH_VK_PROBE_LOG2 (a comma list; default 26,28, or the
 * largest size when --max-log2 is below 26). */
typedef struct pcase {
    VkBuffer buf;
    uint64_t n;
    uint32_t mode, nch, uu, groups;
    double out[2];
    uint32_t mx;
} pcase;
static tally_status run_probe(void *a)
{
    pcase *p = a;
    return tally_vulkan_bench_probe(g_vk, p->buf, p->n, p->mode, p->nch, p->uu, p->groups, p->out, &p->mx);
}
static int probe_f32(int l)
{
    uint64_t n = 1ull << l;
    float *h = malloc(n * 4);
    if (!h) return 1;
    fill(h, TALLY_F32, n);
    uint32_t mref = 0;
    double dref = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &h[i], 4);
        if (u > mref) mref = u;
        dref += h[i];
    }
    VkBuffer in;
    if (tally_vulkan_bench_buffer(g_vk, 0, h, n * 4, &in) != TALLY_OK) {
        printf("probe: device buffer of 2^%d f32 failed: %s\n", l, tally_last_error(g_vk));
        free(h);
        return 1;
    }
    static const struct { const char *tag, *what; uint32_t mode, nch, uu; } pr[] = {
        {"a", "f32 max (umax of the bits): the baseline", 0, 1, 8},
        {"a4", "f32 max, 4 loads in flight", 0, 1, 4},
        {"b", "OpFConvert f32->f64 + 1 f64 add chain", 1, 1, 8},
        {"c4", "OpFConvert + 4 f64 add chains", 1, 4, 8},
        {"c8", "OpFConvert + 8 f64 add chains", 1, 8, 8},
        {"d1", "integer widening (spec.comp's) + 1 f64 add chain", 2, 1, 8},
        {"d4", "integer widening + 4 f64 add chains", 2, 4, 8},
        {"e1", "spec triple, 1 per invocation (spec.comp today)", 3, 1, 8},
        {"e2", "spec triple, 2 per invocation", 3, 2, 8},
        {"e4", "spec triple, 4 per invocation", 3, 4, 8},
        {"e1u4", "spec triple, 1 per invocation, 4 loads in flight", 3, 1, 4},
        {"e2u4", "spec triple, 2 per invocation, 4 loads in flight", 3, 2, 4},
        {"e4u4", "spec triple, 4 per invocation, 4 loads in flight", 3, 4, 4},
        {"d1s", "integer widening, zero test as a select + 1 f64 add chain", 6, 1, 8},
        {"e1s", "spec triple, 1 per invocation, widening's zero test as a select", 7, 1, 8},
        {"e4s", "spec triple, 4 per invocation, widening's zero test as a select", 7, 4, 8},
        {"f8", "integer widening + 8 independent f64 adds per element (FP64 issue alone)", 4, 8, 8},
        {"g1", "f32 adds, 1 chain (no 64-bit value)", 5, 1, 8},
        {"g4", "f32 adds, 4 chains", 5, 4, 8},
    };
    int fails = 0;
    double base = 0;
    char note[240];
    for (size_t i = 0; i < sizeof pr / sizeof pr[0]; i++) {
        pcase c = {in, n, pr[i].mode, pr[i].nch, pr[i].uu, 0, {0, 0}, 0};
        tally_status st = run_probe(&c);
        double got = c.out[0] + c.out[1];
        double tol = pr[i].mode == 5 ? 1e-3 : 1e-9;
        int ok = st == TALLY_OK && (pr[i].mode == 0 ? c.mx == mref : fabs(got - dref) <= tol * fabs(dref));
        if (!ok) {
            printf("VALIDATION FAILED: probe_f32 %s 2^%d: %s (max %08x want %08x, sum %.17g want %.17g)\n", pr[i].tag,
                   l, st == TALLY_OK ? "wrong answer" : tally_last_error(g_vk), c.mx, mref, got, dref);
            g_fail++;
            fails++;
            continue;
        }
        double gpu, call;
        timeit(run_probe, &c, &gpu, &call);
        if (i == 0) base = gpu;
        snprintf(note, sizeof note, "(%s) %s; x(a) %.2f", pr[i].tag, pr[i].what, base > 0 ? gpu / base : 0.0);
        row("probe_f32", TALLY_F32, n, gpu, call, 0, (double)n * 4, note);
    }
    /* the library's sums in spec.comp's shapes: "t u g" */
    static const struct { uint32_t t, u, g, sf; } shp[] = {
        {1, 4, 0, 0}, {1, 8, 0, 0}, {2, 8, 0, 0}, {4, 8, 0, 0}, {2, 4, 0, 0}, {4, 4, 0, 0}, {4, 8, 1056, 0},
        {4, 8, 4096, 0}, {1, 8, 0, 1}, {4, 8, 0, 1}, {1, 8, 0, 2}, {2, 8, 0, 2}, {2, 4, 0, 2}, {4, 8, 0, 3},
        {1, 8, 0, 4}, {4, 8, 0, 5}, {2, 8, 0, 6}, {4, 8, 0, 7}, {2, 4, 0, 7},
    };
    const tally_type st2[] = {TALLY_F32, TALLY_F64};
    for (int ti = 0; ti < 2; ti++) {
        tally_type t = st2[ti];
        uint64_t bytes = n * tally_type_size(t);
        void *d = h;
        double *h64 = NULL;
        if (t == TALLY_F64) {
            h64 = malloc(bytes);
            if (!h64) break;
            fill(h64, t, n);
            d = h64;
            if (tally_vulkan_bench_buffer(g_vk, 0, d, bytes, &in) != TALLY_OK) {
                printf("probe: device buffer of 2^%d f64 failed: %s\n", l, tally_last_error(g_vk));
                free(h64);
                break;
            }
        }
        rcase cc;
        memset(&cc, 0, sizeof cc);
        cc.ctx = g_cpu, cc.t = t, cc.host = d, cc.n = n, cc.op = TALLY_SUM;
        run_reduce(&cc);
        int was = tally_vulkan_bench_spec(g_vk, 2);
        uint32_t t0 = tally_vulkan_bench_spec_t(g_vk, 1), u0 = tally_vulkan_bench_spec_u(g_vk, 8),
                 g0 = tally_vulkan_bench_spec_groups(g_vk, 0), sf0 = tally_vulkan_bench_spec_sf(g_vk, 0);
        double def = 0;
        for (size_t k = 0; k < sizeof shp / sizeof shp[0]; k++) {
            tally_vulkan_bench_spec_t(g_vk, shp[k].t);
            tally_vulkan_bench_spec_u(g_vk, shp[k].u);
            tally_vulkan_bench_spec_groups(g_vk, shp[k].g);
            if (t == TALLY_F64 && (shp[k].sf & 6u)) continue; /* (q4, sel: f32 alone) */
            tally_vulkan_bench_spec_sf(g_vk, shp[k].sf);
            rcase c = cc;
            c.ctx = g_vk, c.buf = in;
            uint64_t a0, d0, a1, d1;
            tally_vulkan_spec_counts(g_vk, &a0, &d0);
            run_reduce(&c);
            tally_vulkan_spec_counts(g_vk, &a1, &d1);
            if (c.r.status != TALLY_OK || c.r.value.u64 != cc.r.value.u64 || a1 != a0 + 1) {
                printf("VALIDATION FAILED: spec %s 2^%d t%u u%u g%u sf%u (%s; answered %llu)\n", tally_type_name(t),
                       l, shp[k].t, shp[k].u, shp[k].g, shp[k].sf, tally_last_error(g_vk), (unsigned long long)(a1 - a0));
                g_fail++;
                fails++;
                continue;
            }
            double gpu, call;
            tally_vulkan_spec_counts(g_vk, &a0, &d0);
            timeit(run_reduce, &c, &gpu, &call);
            tally_vulkan_spec_counts(g_vk, &a1, &d1);
            if (k == 0) def = gpu;
            snprintf(note, sizeof note, "spec shape t%u u%u g%u%s%s%s (answered %llu, declined %llu); "
                     "x(a) %.2f; default/this %.2f", shp[k].t, shp[k].u, shp[k].g ? shp[k].g : 2048u,
                     shp[k].sf & 1u ? " step" : "", shp[k].sf & 2u ? (shp[k].sf & 4u ? " q4 sel" : " q4") : shp[k].sf & 4u ? " sel" : "",
                     k == 0 ? " (the default shape)" : "", (unsigned long long)(a1 - a0),
                     (unsigned long long)(d1 - d0), base > 0 ? gpu / base : 0.0, def > 0 ? def / gpu : 0.0);
            row("reduce_sum", t, n, gpu, call, 0, (double)bytes, note);
        }
        tally_vulkan_bench_spec_t(g_vk, t0);
        tally_vulkan_bench_spec_u(g_vk, u0);
        tally_vulkan_bench_spec_groups(g_vk, g0);
        tally_vulkan_bench_spec_sf(g_vk, sf0);
        tally_vulkan_bench_spec(g_vk, was);
        free(h64);
    }
    tally_vulkan_bench_free(g_vk, 0);
    free(h);
    return fails;
}

int main(int argc, char **argv)
{
    int lo = 10, hi = 24, step = 2;
    const char *outp = NULL;
    int seg_only = 0, reduce_only = 0, scan_only = 0, probe = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--min-log2") && i + 1 < argc) lo = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-log2") && i + 1 < argc) hi = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--step") && i + 1 < argc) step = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) g_min_time = atof(argv[++i]);
        else if (!strcmp(argv[i], "--warm") && i + 1 < argc) g_warm = atof(argv[++i]);
        else if (!strcmp(argv[i], "--heat") && i + 1 < argc) g_heat = atof(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) outp = argv[++i];
        else if (!strcmp(argv[i], "--segments-only")) seg_only = 1;
        else if (!strcmp(argv[i], "--reduce-only")) reduce_only = 1;
        else if (!strcmp(argv[i], "--scan-only")) scan_only = 1;
        else if (!strcmp(argv[i], "--probe-f32")) probe = probe ? probe : 1;
        else if (!strcmp(argv[i], "--probe-only")) probe = 2;
        else {
            fprintf(stderr, "usage: %s [--min-log2 K] [--max-log2 N] [--step S] [--min-time S] [--warm S] [--heat S] [--out FILE] [--segments-only] [--reduce-only] [--scan-only] [--probe-f32] [--probe-only]\n", argv[0]);
            return 2;
        }
    }
    g_clock_cmd = getenv("TALLY_BENCH_CLOCK_CMD");
    if (g_clock_cmd && !*g_clock_cmd) g_clock_cmd = NULL;
    const char *cmin = getenv("TALLY_BENCH_CLOCK_MIN");
    g_clock_min = cmin ? atoi(cmin) : 0;
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_VULKAN;
    if (tally_create(&g_vk, &o) != TALLY_OK) {
        printf("SKIP: no Vulkan context: %s\n", tally_create_error());
        return 77;
    }
    o.backend = TALLY_BACKEND_CPU;
    if (tally_create(&g_cpu, &o) != TALLY_OK) return 1;
    /* the fold shapes to compare (TALLY_BENCH_VK_SHAPES); none: the default alone */
    enum { MAX_SHAPES = 8 };
    int sh_grid[MAX_SHAPES], sh_u[MAX_SHAPES];
    unsigned sh_g[MAX_SHAPES];
    int nshapes = 0;
    const char *shenv = getenv("TALLY_BENCH_VK_SHAPES");
    for (const char *q = shenv; q && *q && nshapes < MAX_SHAPES;) {
        int grid = !strncmp(q, "grid", 4) ? 1 : !strncmp(q, "block", 5) ? 2 : !strncmp(q, "nomm", 4) ? 3 : !strncmp(q, "joined", 6) ? 4 : !strncmp(q, "onebin", 6) ? 5 : !strncmp(q, "xold", 4) ? 6 : !strncmp(q, "findisp", 7) ? 7 : 0,
            u = 8;
        unsigned g = 0;
        if (!grid && strncmp(q, "share", 5)) {
            fprintf(stderr, "TALLY_BENCH_VK_SHAPES: '%s' is not grid:U:G, block:U:G, nomm:U:G, joined:U:G, onebin:U:G, xold:U:G, findisp:U:G or share:U\n", q);
            return 2;
        }
        const char *c = strchr(q, ':'), *end = strchr(q, ',');
        if (c && (!end || c < end)) {
            u = atoi(c + 1);
            const char *c2 = strchr(c + 1, ':');
            if (c2 && (!end || c2 < end)) g = (unsigned)atoi(c2 + 1);
        }
        if (u != 4 && u != 8) u = 8;
        sh_grid[nshapes] = grid, sh_u[nshapes] = u, sh_g[nshapes] = g;
        nshapes++;
        q = end ? end + 1 : NULL;
    }
    int ts = tally_vulkan_bench_timing(g_vk, 1);
    int one_pass = tally_vulkan_bench_scan_one_pass(g_vk, 1);
    g_fs0 = tally_vulkan_bench_float_shaders(g_vk, 0); /* (TALLY_VULKAN_FLOAT_SHADERS) */
    tally_vulkan_bench_float_shaders(g_vk, g_fs0);
    g_fsc0 = tally_vulkan_bench_float_scan(g_vk, 0);
    tally_vulkan_bench_float_scan(g_vk, g_fsc0);
    tally_vulkan_device_info info;
    tally_vulkan_get_device_info(o.device, &info);
    /* float scans: on a device without IEEE subnormals a call that meets a subnormal, or
     * underflows, is redone on the CPU (this data has none) */
    int f32_flagged = !(info.denorm_preserve32 && info.denorm_preserve64);
    if (outp) g_out = fopen(outp, "w");
    char head[1024];
    snprintf(head, sizeof head,
             "device: %s; CPU baseline: %d threads (%s); GPU µs from %s; heater %.2f s per case%s%s\n\n"
             "| op             | type | n    |   GPU µs   |  call µs   |   GB/s   |   CPU µs   | CPU/GPU | note |\n"
             "|----------------|------|------|------------|------------|----------|------------|--------|------|\n",
             tally_device_description(g_vk), tally_thread_count(g_cpu), tally_isa_name(tally_active_isa(g_cpu)),
             ts ? "timestamps" : "wall time (no timestamps)", g_heat, g_clock_cmd ? ", clock from: " : "",
             g_clock_cmd ? g_clock_cmd : "");
    fputs(head, stdout);
    if (g_out) fputs(head, g_out);
    /* big buffers first (TALLY_BENCH_VK_BIG=k: parts of 2^k elements; by default 2^28 when the
     * sizes reach 2^30; 0: none) */
    const char *bigenv = getenv("TALLY_BENCH_VK_BIG");
    int bigk = bigenv && *bigenv ? atoi(bigenv) : (hi >= 30 && !seg_only ? 28 : 0);
    if (bigk > 0 && bigk <= 30) big_probe(bigk);
    if (probe) {
        const char *pl = getenv("TALLY_BENCH_VK_PROBE_LOG2");
        char dflt[16];
        snprintf(dflt, sizeof dflt, "%s", hi >= 28 ? "26,28" : hi >= 26 ? "26" : "");
        if (!dflt[0]) snprintf(dflt, sizeof dflt, "%d", hi);
        for (const char *q = pl && *pl ? pl : dflt; q && *q;) {
            int l = atoi(q);
            if (l >= 4 && l <= 30) probe_f32(l);
            q = strchr(q, ',');
            if (q) q++;
        }
        if (probe == 2) {
            printf("validation failures: %d\n", g_fail);
            if (g_out) fclose(g_out);
            tally_destroy(g_vk);
            tally_destroy(g_cpu);
            return g_fail ? 1 : 0;
        }
    }
    const tally_type types[] = {TALLY_I32, TALLY_F32, TALLY_F64};
    size_t maxbytes = ((size_t)1 << hi) * 8;
    void *h = malloc(maxbytes), *ho = malloc(maxbytes), *hv = malloc(maxbytes);
    if (!h || !ho || !hv) {
        printf("out of host memory for 2^%d elements\n", hi);
        return 1;
    }
    /* segmented reductions: 2^16 x 2^10 and 2^10 x 2^16 (2^26 elements: 256 MiB of host
     * memory at most) */
    if (!reduce_only && !scan_only) {
        const uint64_t shapes[2][2] = {{1u << 16, 1u << 10}, {1u << 10, 1u << 16}};
        void *sh = malloc(((size_t)1 << 26) * 4);
        tally_result *r1 = malloc(((size_t)1 << 16) * sizeof *r1), *r2 = malloc(((size_t)1 << 16) * sizeof *r2);
        for (int si = 0; si < 2 && sh && r1 && r2; si++) {
            for (size_t ti = 0; ti < 2; ti++) {
                tally_type t = types[ti];
                uint64_t rows = shapes[si][0], len = shapes[si][1], n = rows * len;
                fill(sh, t, n);
                scase g = {g_vk, t, sh, rows, len, r1}, c = {g_cpu, t, sh, rows, len, r2};
                tally_status gs = run_rows(&g), cs = run_rows(&c);
                int ok = gs == TALLY_OK && cs == TALLY_OK;
                for (uint64_t k = 0; k < rows && ok; k++) ok = r1[k].status == TALLY_OK && r1[k].value.u64 == r2[k].value.u64;
                uint64_t old = tally_vulkan_bench_short_bytes(g_vk, 0); /* one call per segment */
                gs = run_rows(&g);
                for (uint64_t k = 0; k < rows && ok; k++) ok = gs == TALLY_OK && r1[k].value.u64 == r2[k].value.u64;
                double ogpu, ocall, omin = g_min_time;
                g_min_time = 0; /* three runs: thousands of submissions each */
                if (ok) timeit(run_rows, &g, &ogpu, &ocall);
                g_min_time = omin;
                tally_vulkan_bench_short_bytes(g_vk, old);
                if (!ok) {
                    printf("VALIDATION FAILED: segments %s %llu x %llu (%s)\n", tally_type_name(t),
                           (unsigned long long)rows, (unsigned long long)len, tally_last_error(g_vk));
                    g_fail++;
                    continue;
                }
                double gpu, call;
                timeit(run_rows, &g, &gpu, &call);
                double cpu = time_cpu(run_rows, &c);
                char note[160];
                snprintf(note, sizeof note, "2^%d rows x 2^%d, host data; one call per segment: GPU %.0f µs, call %.0f µs",
                         si ? 10 : 16, si ? 16 : 10, ogpu, ocall);
                row("segments_sum", t, n, gpu, call, cpu, (double)n * 4, note);
            }
        }
        free(sh);
        free(r1);
        free(r2);
        if (seg_only) goto done;
    }
    /* first (a time limit must not cut them): batched small calls, 2^10 .. 2^16 whatever the step, the sum recorded BATCH_CALLS times
     * into one command buffer, per call, beside one submit per call */
    for (int l = 10; l <= 16; l += 2) {
        if (l < lo || l > hi || reduce_only || scan_only) continue;
        uint64_t n = 1ull << l;
        for (size_t ti = 0; ti < 2; ti++) {
            tally_type t = types[ti];
            size_t bytes = n * tally_type_size(t);
            fill(h, t, n);
            VkBuffer in;
            if (tally_vulkan_bench_buffer(g_vk, 0, h, bytes, &in) != TALLY_OK) {
                printf("device buffers of %zu bytes failed: %s\n", bytes, tally_last_error(g_vk));
                return 1;
            }
            rcase c;
            memset(&c, 0, sizeof c);
            c.ctx = g_vk, c.t = t, c.buf = in, c.host = h, c.n = n, c.op = TALLY_SUM;
            rcase cc = c;
            cc.ctx = g_cpu;
            run_reduce(&cc);
            static bcase b;
            b.c = &c;
            run_batch(&b);
            int ok = 1;
            for (int j = 0; j < BATCH_CALLS; j++) ok &= b.r[j].status == TALLY_OK && b.r[j].value.u64 == cc.r.value.u64;
            if (!ok) {
                printf("VALIDATION FAILED: batched reduce_sum %s n=%llu (%s)\n", tally_type_name(t),
                       (unsigned long long)n, tally_last_error(g_vk));
                g_fail++;
                continue;
            }
            double gpu, call, bgpu, bcall, pgpu, pcall;
            timeit(run_reduce, &c, &gpu, &call);
            timeit(run_batch, &b, &bgpu, &bcall);
            double old_poll = tally_vulkan_bench_poll_us(g_vk, 1000);
            timeit(run_reduce, &c, &pgpu, &pcall);
            tally_vulkan_bench_poll_us(g_vk, old_poll);
            double cpu = time_cpu(run_reduce, &cc);
            char note[128];
            snprintf(note, sizeof note, "per call, %d calls per command buffer (one submit each: %.1f µs)",
                     BATCH_CALLS, call);
            row("reduce_sum_batch", t, n, bgpu / BATCH_CALLS, bcall / BATCH_CALLS, cpu, (double)bytes, note);
            snprintf(note, sizeof note, "one submit, the fence polled up to 1 ms before the driver's wait "
                     "(sleeping at once: %.1f µs)", call);
            row("reduce_sum_poll", t, n, pgpu, pcall, cpu, (double)bytes, note);
        }
    }
    for (int l = lo; l <= hi; l += step) {
        uint64_t n = 1ull << l;
        for (size_t ti = 0; ti < 3u; ti++) {
            tally_type t = types[ti];
            /* TALLY_BENCH_VK_TYPES: a comma list of the types to run (i32, f32, f64; unset: all) */
            const char *tl = getenv("TALLY_BENCH_VK_TYPES"), *tn = t == TALLY_I32 ? "i32" : t == TALLY_F32 ? "f32" : "f64";
            if (tl && *tl && !strstr(tl, tn)) continue;
            size_t bytes = n * tally_type_size(t);
            fill(h, t, n);
            VkBuffer in, out;
            if (tally_vulkan_bench_buffer(g_vk, 0, h, bytes, &in) != TALLY_OK ||
                tally_vulkan_bench_buffer(g_vk, 1, NULL, bytes, &out) != TALLY_OK) {
                printf("device buffers of %zu bytes failed: %s\n", bytes, tally_last_error(g_vk));
                return 1;
            }
            const tally_op rops[] = {TALLY_SUM, TALLY_MAX};
            const char *rnames[] = {"reduce_sum", "reduce_max"};
            int nsh = l >= 24 && nshapes ? nshapes : 1;
            double cpu_us[2] = {-1, -1};
            for (int k = 0; k < (scan_only ? 0 : 2 * nsh); k++) {
                char shape[48] = "";
                if (nsh > 1 || (l >= 24 && nshapes)) {
                    int j = k / 2;
                    tally_vulkan_bench_reduce_shape(sh_grid[j], sh_u[j], sh_g[j]);
                    static const char *const gname[] = {"share", "grid", "block", "nomm", "joined", "onebin", "xold", "findisp"};
                    if (sh_grid[j]) snprintf(shape, sizeof shape, "shape %s:%d:%u; ", gname[sh_grid[j]],
                                             sh_u[j], sh_g[j] ? sh_g[j] : 2048u);
                    else snprintf(shape, sizeof shape, "shape share:%d; ", sh_u[j]);
                }
                rcase c;
                memset(&c, 0, sizeof c);
                c.ctx = g_vk, c.t = t, c.buf = in, c.host = h, c.n = n, c.op = rops[k % 2];
                rcase cc = c;
                cc.ctx = g_cpu;
                run_reduce(&c);
                run_reduce(&cc);
                if (c.r.status != TALLY_OK || c.r.value.u64 != cc.r.value.u64) {
                    printf("VALIDATION FAILED: %s %s n=%llu %s(%s)\n", rnames[k % 2], tally_type_name(t),
                           (unsigned long long)n, shape, tally_last_error(g_vk));
                    g_fail++;
                    continue;
                }
                double gpu, call;
                uint64_t ans0 = 0, dec0 = 0, ans1 = 0, dec1 = 0;
                /* f32's tier is on by default (TALLY_VULKAN_SPEC=2); where the environment set 1
                 * (f64 only), its row times it all the same */
                int f32tier = 0;
                if (t == TALLY_F32 && k % 2 == 0) {
                    const int old = tally_vulkan_bench_spec(g_vk, 2);
                    if (old != 1) tally_vulkan_bench_spec(g_vk, old); /* set explicitly: as set */
                    f32tier = old == 1;
                }
                tally_vulkan_spec_counts(g_vk, &ans0, &dec0);
                timeit(run_reduce, &c, &gpu, &call);
                if (cpu_us[k % 2] < 0) cpu_us[k % 2] = time_cpu(run_reduce, &cc); /* once per op */
                double cpu = cpu_us[k % 2];
                char note[200];
                int fsum = t != TALLY_I32 && k % 2 == 0;
                int big = l >= 24 && k < 2; /* (the first shape's rows) */
                if (!fsum) {
                    snprintf(note, sizeof note, "%sfolds end at %.1f µs", shape, g_fold);
                    row(rnames[k % 2], t, n, gpu, call, cpu, (double)bytes, note);
                    if (big) batch_big_row(rnames[k % 2], &c, &cc.r, gpu, cpu, (double)bytes, shape, "");
                    continue;
                }
                /* the correctly rounded sum: the speculative tier (spec.comp, TALLY_VULKAN_SPEC)
                 * as configured, then the exact path alone (the tier off), same data, same run;
                 * each note: which, the tier's answered/declined calls while timed, and the
                 * exact path's time over this row's (> 1: the tier is faster) */
                tally_vulkan_spec_counts(g_vk, &ans1, &dec1);
                int was = tally_vulkan_bench_spec(g_vk, 0);
                rcase ce = c;
                run_reduce(&ce);
                double egpu = -1, ecall = -1;
                if (ce.r.status != TALLY_OK || ce.r.value.u64 != cc.r.value.u64) {
                    printf("VALIDATION FAILED: %s %s n=%llu exact path (%s)\n", rnames[k % 2], tally_type_name(t),
                           (unsigned long long)n, tally_last_error(g_vk));
                    g_fail++;
                } else {
                    timeit(run_reduce, &ce, &egpu, &ecall);
                }
                double efold = g_fold;
                tally_vulkan_bench_spec(g_vk, f32tier ? 1 : was);
                snprintf(note, sizeof note, "%scorrectly rounded; %s (answered %llu, declined %llu); exact/this %.2f",
                         shape, !was ? "exact path (TALLY_VULKAN_SPEC=0)" : f32tier ? "speculative tier (f32: off in this run, TALLY_VULKAN_SPEC=1)" : "speculative tier",
                         (unsigned long long)(ans1 - ans0), (unsigned long long)(dec1 - dec0),
                         egpu > 0 && gpu > 0 ? egpu / gpu : 0.0);
                row(rnames[k % 2], t, n, gpu, call, cpu, (double)bytes, note);
                if (big)
                    batch_big_row(rnames[k % 2], &c, &cc.r, gpu, cpu, (double)bytes, shape,
                                  "correctly rounded; ");
                if (egpu > 0) {
                    snprintf(note, sizeof note, "%scorrectly rounded; exact path (tier off); folds end at %.1f µs",
                             shape, efold);
                    row(rnames[k % 2], t, n, egpu, ecall, cpu, (double)bytes, note);
                }
            }
            tally_vulkan_bench_reduce_shape(-1, 0, 0);
            if (reduce_only) continue;
            /* integer scans: the one-pass scan (the default where the device has Vulkan's
             * memory model), then for i32 the three-pass reduce-then-scan it replaced; i32 at
             * 2^22 and up also the one-pass scan's variants, inclusive only, each one setting
             * away from the default (TALLY_BENCH_VK_SCAN_VARS: a comma list of their names
             * chooses; unset: all): the tile states packed 16 to a cache line (shift0) or 4
             * (shift2) instead of one per line (TALLY_VULKAN_SCAN_SHIFT); coherent output stores
             * after a release fence, as in place (TALLY_VULKAN_SCAN_STORES); the workgroup's
             * look-back, three barriers a step (wg; TALLY_VULKAN_SCAN_LOOKBACK: subgroup 0's is
             * the GPUs' default, and lavapipe's is wg already); 16 and 64 KiB tiles
             * (TALLY_VULKAN_SCAN_VPT 4 and 16; 8 by default); 4096 steps without progress before
             * a fallback (TALLY_VULKAN_SCAN_SPINS; 32); and "old", the default before these
             * knobs (shift 0, coherent stores, the workgroup's look-back). The look-back and the
             * spins are a context's settings, read when it is made, so they are set here through
             * their hooks (hook 1: spins, 2: look-back); the variables' values from the caller's
             * environment are restored after each such row. */
            static const struct { const char *name, *env[2], *val[2], *note; int hook; uint32_t hv; } vars[] = {
                {"shift0", {"TALLY_VULKAN_SCAN_SHIFT"}, {"0"}, "states 16 to a line", 0, 0},
                {"shift2", {"TALLY_VULKAN_SCAN_SHIFT"}, {"2"}, "states 4 to a line", 0, 0},
                {"coherent", {"TALLY_VULKAN_SCAN_STORES"}, {"coherent"}, "coherent stores", 0, 0},
                {"wg", {NULL}, {NULL}, "workgroup look-back", 2, 3},
                {"vpt4", {"TALLY_VULKAN_SCAN_VPT"}, {"4"}, "16 KiB tiles", 0, 0},
                {"vpt16", {"TALLY_VULKAN_SCAN_VPT"}, {"16"}, "64 KiB tiles", 0, 0},
                {"spins4096", {NULL}, {NULL}, "spins 4096", 1, 4096},
                {"old", {"TALLY_VULKAN_SCAN_SHIFT", "TALLY_VULKAN_SCAN_STORES"}, {"0", "coherent"},
                 "the old default: states 16 to a line, coherent stores, workgroup look-back", 2, 3},
            };
            int nvars = (int)(sizeof vars / sizeof vars[0]);
            /* floats: the one-pass float scan (fscan1.comp, the default), then inclusive on the
             * CPU backend (TALLY_VULKAN_FLOAT_SCAN=cpu) */
            int isf = t != TALLY_I32;
            int passes = (t == TALLY_I32 && one_pass) || (isf && g_fsc0 == 0) ? 2 : 1;
            int nvar = t == TALLY_I32 && one_pass && l >= 22 ? nvars : 0;
            const char *want = getenv("TALLY_BENCH_VK_SCAN_VARS");
            /* floats' further rows, inclusive: one per item of TALLY_BENCH_VK_FROW3 (below) */
            const char *r3list = getenv("TALLY_BENCH_VK_FROW3");
            if (!r3list || !*r3list) r3list = "TALLY_VULKAN_FSCAN_QUAD=0";
            int nr3 = 1;
            for (const char *q = r3list; *q; q++) nr3 += *q == ';';
            const char *fce0 = getenv("TALLY_BENCH_VK_FCPU");
            if (fce0 && *fce0 && strcmp(fce0, "0")) nr3 = 1;
            int nex = isf ? (passes == 2 ? 2 + nr3 : 2) : 2 * passes + nvar;
            for (int ex = 0; ex < nex; ex++) {
                int three = !isf && ((ex >= 2 && ex < 4) || !one_pass);
                int vi = !isf && ex >= 4 ? ex - 4 : -1; /* the integer rows' named variants */
                if (vi >= 0 && want && *want) {
                    /* the name as a whole item of the comma list */
                    size_t len = strlen(vars[vi].name);
                    const char *q = want;
                    int hit = 0;
                    while (!hit && (q = strstr(q, vars[vi].name)) != NULL) {
                        hit = (q == want || q[-1] == ',') && (q[len] == ',' || q[len] == '\0');
                        q += len;
                    }
                    if (!hit) continue;
                }
                int excl = vi < 0 && (ex & 1) && !(isf && ex >= 2); /* (floats' further rows: inclusive) */
                /* floats' further rows: the one pass with other settings (TALLY_BENCH_VK_FROW3, the
                 * group-per-invocation layout by default), or with TALLY_BENCH_VK_FCPU=1 the CPU
                 * backend */
                const char *fce = getenv("TALLY_BENCH_VK_FCPU");
                int fone = isf && ex >= 2 && g_fsc0 == 0 && !(fce && *fce && strcmp(fce, "0"));
                int fcpu = isf && ((ex >= 2 && !fone) || g_fsc0 == 1);
                /* the further rows' settings: TALLY_BENCH_VK_FROW3="NAME=VALUE;NAME=VALUE..." (one
                 * inclusive row each), by default the group-per-invocation layout
                 * (TALLY_VULKAN_FSCAN_QUAD=0; the quad layout is the default) */
                char fblk[64] = "", r3name[64] = "TALLY_VULKAN_FSCAN_QUAD", r3val[64] = "0";
                int r3had = 0;
                if (fone) {
                    /* item ex - 2 of the list: NAME=VALUE */
                    const char *r3 = r3list;
                    for (int k = 0; k < ex - 2 && r3; k++) {
                        r3 = strchr(r3, ';');
                        if (r3) r3++;
                    }
                    const char *eq = r3 ? strchr(r3, '=') : NULL;
                    const char *end = r3 ? strchr(r3, ';') : NULL;
                    if (!end && r3) end = r3 + strlen(r3);
                    if (eq && eq > r3 && eq < end && (size_t)(eq - r3) < sizeof r3name) {
                        snprintf(r3name, sizeof r3name, "%.*s", (int)(eq - r3), r3);
                        snprintf(r3val, sizeof r3val, "%.*s", (int)(end - eq - 1), eq + 1);
                    }
                    const char *old = getenv(r3name); /* (restored after the row) */
                    if (old) snprintf(fblk, sizeof fblk, "%s", old), r3had = 1;
                    setenv(r3name, r3val, 1);
                }
                int f3 = isf && ex < 2 && g_fsc0 == 2;
                char saved[2][64] = {"", ""};
                int had[2] = {0, 0};
                uint32_t hook0 = 0;
                if (vi >= 0 && vars[vi].hook == 1) hook0 = tally_vulkan_bench_scan_spins(g_vk, vars[vi].hv);
                if (vi >= 0 && vars[vi].hook == 2) hook0 = tally_vulkan_bench_scan_lookback(g_vk, vars[vi].hv);
                for (int e = 0; vi >= 0 && e < 2 && vars[vi].env[e]; e++) {
                    const char *old = getenv(vars[vi].env[e]);
                    if (old) snprintf(saved[e], sizeof saved[e], "%s", old), had[e] = 1;
                    setenv(vars[vi].env[e], vars[vi].val[e], 1);
                }
                tally_vulkan_bench_scan_one_pass(g_vk, !three);
                /* (floats: the one pass unless TALLY_VULKAN_FLOAT_SCAN chose another path) */
                int fmode = !isf ? g_fsc0 : ex >= 2 && !fone ? 1 : g_fsc0 == 0 ? 3 : g_fsc0;
                tally_vulkan_bench_float_scan(g_vk, fmode);
                rcase c;
                memset(&c, 0, sizeof c);
                c.ctx = g_vk, c.t = t, c.buf = in, c.host = h, c.n = n, c.op = TALLY_SUM;
                c.so.exclusive = excl;
                c.out = out;
                c.hout = ho;
                rcase cc = c;
                cc.ctx = g_cpu;
                char note[192], r3note[160];
                if (isf)
                    snprintf(note, sizeof note, "%s", fcpu ? "float scan on the CPU backend (TALLY_VULKAN_FLOAT_SCAN=cpu)"
                             : f3 ? "three passes, CPU's block order (TALLY_VULKAN_FLOAT_SCAN=3pass)"
                             : fone ? (snprintf(r3note, sizeof r3note, "one pass, %s=%s%s", r3name, r3val,
                                                strcmp(r3name, "TALLY_VULKAN_FSCAN_QUAD") ? ""
                                                : strcmp(r3val, "0") ? " (the quad layout)"
                                                : " (a group per invocation)"), r3note)
                             : f32_flagged ? "one pass, CPU's block order, ordered look-back; FTZ device: edges flagged"
                                           : "one pass, CPU's block order, ordered look-back");
                else if (three)
                    snprintf(note, sizeof note, "three passes");
                else
                    snprintf(note, sizeof note, "one pass, %s%s", vi >= 0 ? "variant: " : "32 KiB tiles (default)",
                             vi >= 0 ? vars[vi].note : "");
                run_scan(&c);
                run_scan(&cc);
                tally_vulkan_bench_read(g_vk, out, 0, bytes, hv);
                int bad = memcmp(hv, ho, bytes) != 0;
                if (bad) {
                    printf("VALIDATION FAILED: scan %s %s n=%llu (%s)\n", excl ? "excl" : "incl",
                           tally_type_name(t), (unsigned long long)n, note);
                    g_fail++;
                } else {
                    double gpu, call;
                    timeit(run_scan, &c, &gpu, &call);
                    double cpu = time_cpu(run_scan, &cc);
                    if (!three && !isf) {
                        /* one more (untimed) call with the look-back's counters on */
                        uint32_t k4[4];
                        int count0 = tally_vulkan_bench_scan_count(g_vk, 1);
                        run_scan(&c);
                        tally_vulkan_bench_scan_count(g_vk, count0);
                        if (tally_vulkan_bench_scan_stats(g_vk, k4) == TALLY_OK && k4[0]) {
                            size_t len = strlen(note);
                            snprintf(note + len, sizeof note - len,
                                     "; look-back: %u tiles, %u steps, %u idle, %u fallbacks", k4[0], k4[1],
                                     k4[2], k4[3]);
                        }
                    }
                    row(excl ? "scan_excl_sum" : "scan_incl_sum", t, n, gpu, call, cpu, 2.0 * bytes, note);
                }
                if (vi >= 0 && vars[vi].hook == 1) tally_vulkan_bench_scan_spins(g_vk, hook0);
                if (vi >= 0 && vars[vi].hook == 2) tally_vulkan_bench_scan_lookback(g_vk, hook0);
                for (int e = 0; vi >= 0 && e < 2 && vars[vi].env[e]; e++) {
                    if (had[e]) setenv(vars[vi].env[e], saved[e], 1);
                    else unsetenv(vars[vi].env[e]);
                }
                if (fone && r3had) setenv(r3name, fblk, 1);
                else if (fone) unsetenv(r3name);
                tally_vulkan_bench_float_scan(g_vk, g_fsc0);
            }
            tally_vulkan_bench_scan_one_pass(g_vk, one_pass);
        }
    }
done:
    printf("validation failures: %d\n", g_fail);
    if (g_out) fclose(g_out);
    free(h);
    free(ho);
    free(hv);
    tally_destroy(g_vk);
    tally_destroy(g_cpu);
    return g_fail ? 1 : 0;
}
