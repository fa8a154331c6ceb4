/* Where the one-pass float scan's time goes (fscan1.comp, issue 20): its clock variant
 * (TALLY_VULKAN_FSCAN_PROBE=1, VK_KHR_shader_clock) has each workgroup record the device clock
 * (ns) at its start, when its blocks' A's are ready, when its carry is known and at its end,
 * and the SM clock (cycles) of four phases: the loads and group prefixes, the L chains, the
 * look-back with its fold, and the outputs; plus the A's its fold took and its walk's steps.
 * This prints their distributions and what they imply: the workgroups resident at once, the
 * pace at which carries become known, and how long each phase holds a workgroup.
 *
 *   TALLY_VULKAN_FSCAN_PROBE=1 probe_fscan [--log2 N] [--reps R] [--type f32|f64] [--heat S]
 *
 * --heat S: the scan repeated for S seconds first, so that the GPU's clock has risen (its idle
 * clock gives other cycle counts).
 *
 * The scans are checked against the CPU backend (bit for bit) before anything is printed. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tally.h"
#include "tally_vulkan.h"

TALLY_API int tally_vulkan_bench_timing(tally_context *ctx, int on);
TALLY_API double tally_vulkan_bench_gpu_us(tally_context *ctx);
TALLY_API int tally_vulkan_bench_float_shaders(tally_context *ctx, int on);
TALLY_API tally_status tally_vulkan_bench_buffer(tally_context *ctx, int slot, const void *data,
                                                 uint64_t bytes, VkBuffer *out);
TALLY_API tally_status tally_vulkan_bench_read(tally_context *ctx, VkBuffer buf, uint64_t off,
                                               uint64_t bytes, void *dst);
TALLY_API uint64_t tally_vulkan_bench_fscan_probe(tally_context *ctx, uint64_t *out, uint64_t max_wg);

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* mean, 10th, 50th, 90th percentile and max of v[0..n) (sorts v) */
static void dist(const char *name, const char *unit, double *v, uint64_t n)
{
    double s = 0;
    for (uint64_t i = 0; i < n; i++) s += v[i];
    qsort(v, n, sizeof *v, cmp_d);
    printf("| %-34s | %-6s | %10.1f | %10.1f | %10.1f | %10.1f | %10.1f |\n", name, unit, s / n, v[n / 10],
           v[n / 2], v[n * 9 / 10], v[n - 1]);
}

int main(int argc, char **argv)
{
    int lg = 26, reps = 3, f64 = 0;
    double heat = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--log2") && i + 1 < argc) lg = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--heat") && i + 1 < argc) heat = atof(argv[++i]);
        else if (!strcmp(argv[i], "--type") && i + 1 < argc && (!strcmp(argv[i + 1], "f32") || !strcmp(argv[i + 1], "f64")))
            f64 = !strcmp(argv[++i], "f64");
        else {
            fprintf(stderr, "usage: TALLY_VULKAN_FSCAN_PROBE=1 %s [--log2 N] [--reps R] [--type f32|f64] [--heat S]\n", argv[0]);
            return 2;
        }
    }
    if (lg < 12 || lg > 30 || reps < 1) {
        fprintf(stderr, "probe_fscan: --log2 must be 12..30 and --reps at least 1\n");
        return 2;
    }
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_VULKAN;
    tally_context *vk, *cpu;
    if (tally_create(&vk, &o) != TALLY_OK) {
        printf("SKIP: no Vulkan context: %s\n", tally_create_error());
        return 77;
    }
    o.backend = TALLY_BACKEND_CPU;
    if (tally_create(&cpu, &o) != TALLY_OK) return 1;
    tally_vulkan_bench_float_shaders(vk, 1);
    uint64_t n = 1ull << lg;
    size_t es = f64 ? 8 : 4;
    tally_type ty = f64 ? TALLY_F64 : TALLY_F32;
    void *x = malloc(n * es), *want = malloc(n * es), *got = malloc(n * es);
    uint64_t maxwg = n / 4096 + 1;
    uint64_t *rec = malloc(maxwg * 64);
    if (!x || !want || !got || !rec) {
        fprintf(stderr, "probe_fscan: out of memory for 2^%d floats\n", lg);
        return 1;
    }
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (uint64_t i = 0; i < n; i++) { /* price-like: cents between 1 and 1000 */
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        double v = (double)(100 + r % 99900) / 100.0;
        if (f64) ((double *)x)[i] = v;
        else ((float *)x)[i] = (float)v;
    }
    VkBuffer in, out;
    if (tally_vulkan_bench_buffer(vk, 0, x, n * es, &in) != TALLY_OK ||
        tally_vulkan_bench_buffer(vk, 1, NULL, n * es, &out) != TALLY_OK) {
        fprintf(stderr, "probe_fscan: buffers: %s\n", tally_last_error(vk));
        return 1;
    }
    tally_scan_options so;
    memset(&so, 0, sizeof so); /* inclusive, no start value */
    if (tally_scan(cpu, TALLY_SUM, ty, x, want, n, &so) != TALLY_OK) return 1;
    int timing = tally_vulkan_bench_timing(vk, 1);
    struct timespec h0, h1;
    clock_gettime(CLOCK_MONOTONIC, &h0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &h1);
        if ((double)(h1.tv_sec - h0.tv_sec) + 1e-9 * (double)(h1.tv_nsec - h0.tv_nsec) >= heat) break;
        if (tally_vulkan_scan_buffer(vk, TALLY_SUM, ty, in, 0, out, 0, n, &so) != TALLY_OK) break;
    }
    double best = 1e30;
    uint64_t w = 0;
    for (int k = 0; k < reps; k++) {
        if (tally_vulkan_scan_buffer(vk, TALLY_SUM, ty, in, 0, out, 0, n, &so) != TALLY_OK) {
            fprintf(stderr, "probe_fscan: scan: %s\n", tally_last_error(vk));
            return 1;
        }
        double us = timing ? tally_vulkan_bench_gpu_us(vk) : 0;
        if (us < best || !w) { /* keep the fastest run's records */
            best = us;
            w = tally_vulkan_bench_fscan_probe(vk, rec, maxwg);
        }
    }
    if (tally_vulkan_bench_read(vk, out, 0, n * es, got) != TALLY_OK || memcmp(got, want, n * es)) {
        printf("VALIDATION FAILED: the scan differs from the CPU backend's\n");
        return 1;
    }
    if (!w) {
        printf("SKIP: no probe records (TALLY_VULKAN_FSCAN_PROBE=1 and VK_KHR_shader_clock's device and "
               "subgroup clocks needed)\n");
        return 77;
    }
    /* blocks per workgroup (4 by default, TALLY_VULKAN_FSCAN_BLOCKS for fewer): the one that
     * gives w workgroups; none when the call took several dispatches (segments), as the records
     * are then the last dispatch's only */
    uint64_t blocks = n / 4096, bpw = 0;
    for (uint64_t b = 4; b >= 1 && !bpw; b /= 2)
        if ((blocks + b - 1) / b == w) bpw = b;
    if (!bpw) {
        fprintf(stderr, "probe_fscan: 2^%d elements took several dispatches (segments): the records hold "
                "only the last one's %llu workgroups; use a smaller --log2 (26 fits on the H200)\n",
                lg, (unsigned long long)w);
        return 2;
    }
    /* rec[8 i + ...]: 0 start, 1 A's ready, 2 carry known, 3 end (device clock); 4 loads and
     * prefixes, 5 L chains, 6 look-back and fold (SM cycles, low 32 bits; the fold alone, from
     * the walk's finding its P, in the high 32); 7: outputs' cycles (low 32 bits),
     * the A's folded (bits 32-55), the walk's steps (56-63, capped at 255) */
    double *v = malloc(w * sizeof *v);
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (uint64_t i = 0; i < w; i++) {
        if (rec[8 * i] < t0) t0 = rec[8 * i];
        if (rec[8 * i + 3] > t1) t1 = rec[8 * i + 3];
    }
    double span = (double)(t1 - t0), life = 0;
    for (uint64_t i = 0; i < w; i++) life += (double)(rec[8 * i + 3] - rec[8 * i]);
    printf("probe_fscan: 2^%d %s sum scan, %llu workgroups (%llu blocks each), fastest of %d: %.1f µs by the "
           "timestamps, %.1f µs from the first start to the last end by the device clock\n",
           lg, f64 ? "f64" : "f32", (unsigned long long)w, (unsigned long long)bpw, reps, best, span / 1e3);
    printf("workgroups resident on average (sum of lifetimes / span): %.1f\n\n", life / span);
    printf("| per workgroup                      | unit   |       mean |        p10 |        p50 |        p90 |        max |\n");
    printf("|---|---|---:|---:|---:|---:|---:|\n");
#define DIST(name, unit, expr)                                     \
    do {                                                            \
        for (uint64_t i = 0; i < w; i++) v[i] = (double)(expr);      \
        dist(name, unit, v, w);                                     \
    } while (0)
    const uint64_t *q = rec;
    DIST("lifetime (start to end)", "ns", q[8 * i + 3] - q[8 * i]);
    DIST("start to A's ready", "ns", q[8 * i + 1] - q[8 * i]);
    DIST("A's ready to carry known", "ns", q[8 * i + 2] - q[8 * i + 1]);
    DIST("carry known to end (outputs)", "ns", q[8 * i + 3] - q[8 * i + 2]);
    DIST("loads and prefixes", "cycles", q[8 * i + 4]);
    DIST("L chains (and their checks)", "cycles", q[8 * i + 5]);
    DIST("look-back and fold", "cycles", q[8 * i + 6] & 0xffffffffu);
    DIST("  of which the walk", "cycles", (q[8 * i + 6] & 0xffffffffu) - (q[8 * i + 6] >> 32));
    DIST("  of which the fold", "cycles", q[8 * i + 6] >> 32);
    DIST("outputs", "cycles", q[8 * i + 7] & 0xffffffffu);
    DIST("A's folded (walk distance)", "tiles", (q[8 * i + 7] >> 32) & 0xffffffu);
    DIST("walk steps", "steps", q[8 * i + 7] >> 56);
    /* the pace: when consecutive workgroups started and learned their carries (device clock) */
    DIST("start - previous workgroup's", "ns", i ? (double)q[8 * i] - (double)q[8 * (i - 1)] : 0);
    DIST("carry known - previous's", "ns", i ? (double)q[8 * i + 2] - (double)q[8 * (i - 1) + 2] : 0);
    DIST("start, from the first start", "µs", (q[8 * i] - t0) / 1e3);
    printf("\nThe middle workgroups' timeline (device clock, µs from the first start):\n");
    printf("| wg | start | A's ready | carry known | end | folded | steps |\n|---:|---:|---:|---:|---:|---:|---:|\n");
    for (uint64_t i = w / 2; i < w / 2 + 12 && i < w; i++)
        printf("| %llu | %.2f | %.2f | %.2f | %.2f | %llu | %llu |\n", (unsigned long long)i, (q[8 * i] - t0) / 1e3,
               (q[8 * i + 1] - t0) / 1e3, (q[8 * i + 2] - t0) / 1e3, (q[8 * i + 3] - t0) / 1e3,
               (unsigned long long)((q[8 * i + 7] >> 32) & 0xffffffu), (unsigned long long)(q[8 * i + 7] >> 56));
    free(v);
    free(rec);
    free(x);
    free(want);
    free(got);
    tally_destroy(vk);
    tally_destroy(cpu);
    return 0;
}
