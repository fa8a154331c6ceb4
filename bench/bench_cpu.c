/* tally_bench_cpu: the CPU backend against the memory ceiling, on all cores.
 *
 *   tally_bench_cpu [-n ELEMENTS] [-r RUNS] [-t THREADS] [-q] [-S|-s] [-o RESULT.md]
 *
 * (-q: without the naive OpenMP row and the exact sums over wide and full-range data, which -x
 * covers; -S: the scan rows alone; -s: the i32 and f32 sum scans alone, f32 inclusive and
 * exclusive.) Every row: our time and GB/s next to a baseline measured in the same run over the
 * same bytes:
 *   - reductions (f32, i32, i64, f64: sum, min, max; f32 sum+min+max fused): a tuned read-only
 *     SIMD loop (OpenMP; threads take 1 MiB slices and sum them as 32-bit integers with four
 *     AVX-512 or AVX2 accumulators): the practical memory ceiling;
 *   - scans (i32, i64, f32, f64: inclusive sum and max; exclusive f32 sum): memcpy of the same
 *     bytes (one memcpy per thread), since a scan reads n and writes n elements as a copy does;
 *     the i32 and f32 inclusive sum scans also on a second context with the early totals
 *     (TALLY_CPU_TUNE scan_pf=2, rows "(early)"; none where TALLY_CPU_TUNE is set), and the f32
 *     and f64 max scans also with their former totals and NaN test (scan_rtotal=0,scan_fkv=1,
 *     rows "(before)"), and through the keyed kernels that the fused ones replaced (scan_keyed=1,
 *     rows "(keyed)");
 *     then a table of where each scan's time goes (the scan's own per-thread clocks, cpu.h);
 *   - the naive OpenMP `reduction(+:s)` float loop: its time and its f32 answer next to our
 *     correctly rounded one.
 * Each scan row's note gives its spread (each side's median over its best, the ratio of the
 * medians) and a second baseline measured in the same rounds: a copy with streaming stores in
 * 1 MiB slices ("stream copy"), which does not depend on glibc's choice of store kind.
 * Each answer is checked once against a reference computed independently here (exact integer
 * arithmetic), before anything is timed. Times are the best of RUNS runs after one warm-up; the
 * two sides of a row run in pairs (the baseline right before each run of ours), so that every
 * row's baseline is measured beside it and load from elsewhere hits both alike.
 * The data are price-like (5.00 .. 49.99) f32/f64 and integers 0..999 (i32); the last rows are
 * the correctly rounded sums over the other two data shapes of -x (below).
 *
 *   tally_bench_cpu -x 1,2,4,8,16 [-n ELEMENTS] [-r RUNS] [-o RESULT.md]
 *
 * The correctly rounded sums alone, for each thread count of the list: f32 and f64 over every
 * data shape (price-like; random sign with exponents over 2^-40..2^40; over the whole range of
 * the type), each row beside the read loop and a plain rounding SIMD sum of the same bytes, and
 * the small-array rows: one exact sum of 4,096 f32 / f64 against a plain SIMD loop over them (each
 * twice: as the library runs it, then "before", without the short sums' W32W and SPEC methods,
 * exact_impl.h; with TALLY_CPU_TUNE=small_w32w=0,small_spec=0 only the latter). Each
 * answer is checked against the superaccumulator fed element by element (core/exact_sum.h).
 * Each large row is followed by a "spec=0" row: the same sum on a context made with
 * TALLY_CPU_SPEC=0, i.e. the exact path without the speculative compensated sum in front
 * (src/cpu/reduce.c), before/after in one run (TALLY_BENCH_SPEC0=0: no such rows; with
 * TALLY_CPU_SPEC=0 in the environment every row is the exact path and none is added).
 * TALLY_BENCH_XPF="FAR,NEAR;...": the wide and full-range rows again per prefetch setting of the
 * exact kernels (bytes ahead into L2 and into L1, exact_kernels.h), labelled "xpf=FAR,NEAR", at
 * 2 threads and more. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <omp.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include "tally.h"
#include "core/exact_sum.h"
#include "cpu/cpu.h" /* tally_cpu_set_scan_profile */
#include "cpu/exact_kernels.h" /* tally_exact_set_prefetch (-x variants) */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int g_runs = 5;
static int g_scans_only; /* -S: the scan rows alone; -s (2): the i32 and f32 (incl., excl.) sum scans alone */
static int g_quick;      /* -q: no naive OpenMP row, no wide/full-range exact rows (see -x) */

/* Both sides of a row, in pairs: each run of ours right after one of the baseline, so that both
 * see the same machine (the baseline of a row is never from another moment of the run); after
 * one warm-up each, the best of g_runs runs of each side. The best, not the median: on a shared
 * machine other work only ever adds time (the baseline of one table moved by 20-30% between rows
 * with medians of 3), and the best run of each side is the one least disturbed by it. */
/* Rows that are quick (reductions on many cores: ~10 ms a run) get more runs, up to 4 x g_runs
 * while the row has taken under TP_ROW_S seconds: with 3 runs the best of a fast row still moved
 * from 0.86 to 0.95 of its baseline between two calls on a machine that other work disturbs, and
 * more runs of a 10 ms row cost little. Slow rows (one thread, scans) keep g_runs. */
#define TP_ROW_S 0.3
/* The spread of the last timepair (or timetrio): each side's median over its best, the ratio of
 * the medians, and (timetrio) the second baseline's best, so that a ratio decided by one
 * disturbed side shows as such in the row's note. */
static struct { double med_ours, med_base, t_base2; int runs; } g_tp;
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int k) {
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}
/* base2_fn (may be NULL): a second baseline, run in the same rounds (base, ours, base2) */
static void timetrio(void (*ours_fn)(void *), void *ours_arg, void (*base_fn)(void *),
                     void *base_arg, void (*base2_fn)(void *), void *base2_arg, double *t_ours,
                     double *t_base) {
    double to[256], tb[256], t2[256], b2 = 1e300, start = now();
    int r = 0;
    base_fn(base_arg);
    ours_fn(ours_arg);
    if (base2_fn) base2_fn(base2_arg);
    for (; r < 256 && (r < g_runs || (r < 4 * g_runs && now() - start < TP_ROW_S)); r++) {
        double t0 = now();
        base_fn(base_arg);
        double t1 = now();
        ours_fn(ours_arg);
        double tt = now();
        tb[r] = t1 - t0;
        to[r] = tt - t1;
        if (base2_fn) {
            base2_fn(base2_arg);
            t2[r] = now() - tt;
            if (t2[r] < b2) b2 = t2[r];
        }
    }
    double bo = 1e300, bb = 1e300;
    for (int i = 0; i < r; i++) {
        if (to[i] < bo) bo = to[i];
        if (tb[i] < bb) bb = tb[i];
    }
    *t_ours = bo;
    *t_base = bb;
    g_tp.med_ours = median(to, r);
    g_tp.med_base = median(tb, r);
    g_tp.t_base2 = base2_fn ? b2 : 0;
    g_tp.runs = r;
}
static void timepair(void (*ours_fn)(void *), void *ours_arg, void (*base_fn)(void *),
                     void *base_arg, double *t_ours, double *t_base) {
    timetrio(ours_fn, ours_arg, base_fn, base_arg, NULL, NULL, t_ours, t_base);
}
/* ", N runs: median +a% ours, +b% base, median ratio R" (+ ", stream copy R2" after timetrio) */
static void spread_note(char *note, size_t size, double t_ours, double t_base) {
    size_t l = strlen(note);
    if (l >= size) return;
    snprintf(note + l, size - l, "; %d runs, median +%.0f%% ours, +%.0f%% base, median ratio %.2f",
             g_tp.runs, 100 * (g_tp.med_ours / t_ours - 1), 100 * (g_tp.med_base / t_base - 1),
             g_tp.med_base / g_tp.med_ours);
    l = strlen(note);
    if (g_tp.t_base2 > 0 && l < size)
        snprintf(note + l, size - l, "; stream copy %.2f ms, ratio %.2f", g_tp.t_base2 * 1e3,
                 g_tp.t_base2 / t_ours);
}

/* ---- baselines -------------------------------------------------------------------------------- */
static volatile uint32_t g_sink;

#if defined(__x86_64__)
__attribute__((target("avx512f")))
static uint32_t read_avx512(const uint32_t *p, size_t words) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 64 <= words; i += 64) {
        a0 = _mm512_add_epi32(a0, _mm512_loadu_si512(p + i));
        a1 = _mm512_add_epi32(a1, _mm512_loadu_si512(p + i + 16));
        a2 = _mm512_add_epi32(a2, _mm512_loadu_si512(p + i + 32));
        a3 = _mm512_add_epi32(a3, _mm512_loadu_si512(p + i + 48));
    }
    uint32_t s = (uint32_t)_mm512_reduce_add_epi32(
        _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)));
    for (; i < words; i++) s += p[i];
    return s;
}
__attribute__((target("avx2")))
static uint32_t read_avx2(const uint32_t *p, size_t words) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 32 <= words; i += 32) {
        a0 = _mm256_add_epi32(a0, _mm256_loadu_si256((const __m256i *)(p + i)));
        a1 = _mm256_add_epi32(a1, _mm256_loadu_si256((const __m256i *)(p + i + 8)));
        a2 = _mm256_add_epi32(a2, _mm256_loadu_si256((const __m256i *)(p + i + 16)));
        a3 = _mm256_add_epi32(a3, _mm256_loadu_si256((const __m256i *)(p + i + 24)));
    }
    __m256i a = _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3));
    uint32_t l[8];
    _mm256_storeu_si256((__m256i *)l, a);
    uint32_t s = 0;
    for (int j = 0; j < 8; j++) s += l[j];
    for (; i < words; i++) s += p[i];
    return s;
}
#endif
static uint32_t read_plain(const uint32_t *p, size_t words) {
    uint32_t s = 0;
    for (size_t i = 0; i < words; i++) s += p[i];
    return s;
}
static uint32_t (*read_fn)(const uint32_t *, size_t) = read_plain;
static const char *read_name = "plain";

typedef struct { const void *p; size_t bytes; void *dst; } buf_arg;

/* The read loop's threads take 1 MiB slices dynamically, so a thread the OS delays (a shared
 * machine) does not hold the others up: the baseline stays at the ceiling under outside load. */
#define SLICE_BYTES (1u << 20)

static void base_read(void *a) {
    const buf_arg *b = a;
    const uint32_t *p = b->p;
    int64_t slices = (int64_t)((b->bytes + SLICE_BYTES - 1) / SLICE_BYTES);
    uint32_t total = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : total)
    for (int64_t s = 0; s < slices; s++) {
        size_t lo = (size_t)s * SLICE_BYTES, hi = lo + SLICE_BYTES < b->bytes ? lo + SLICE_BYTES : b->bytes;
        total += read_fn(p + lo / 4, (hi - lo) / 4);
    }
    g_sink = total;
}

/* One large memcpy per thread: glibc then uses non-temporal stores, the fastest copy there is. */
static void base_memcpy(void *a) {
    const buf_arg *b = a;
#pragma omp parallel
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        size_t lo = b->bytes * (size_t)t / (size_t)nt / 64 * 64;
        size_t hi = t + 1 == nt ? b->bytes : b->bytes * (size_t)(t + 1) / (size_t)nt / 64 * 64;
        memcpy((char *)b->dst + lo, (const char *)b->p + lo, hi - lo);
    }
}

/* A copy with streaming stores, as the scans write (1 MiB slices taken dynamically, as the read
 * loop's): the scans' second baseline, which does not depend on how glibc's memcpy chooses
 * between cached and non-temporal stores for a thread's share (a shared-cache-size threshold: on
 * a machine with a large L3 the per-thread share of the copy may fall on either side of it). */
#if defined(__x86_64__)
__attribute__((target("avx2")))
static void copy_stream_avx2(char *d, const char *p, size_t bytes) {
    size_t i = 0;
    for (; i + 64 <= bytes; i += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(p + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(p + i + 32));
        _mm256_stream_si256((__m256i *)(d + i), a);
        _mm256_stream_si256((__m256i *)(d + i + 32), b);
    }
    memcpy(d + i, p + i, bytes - i);
}
#endif
static void base_stream_copy(void *a) {
    const buf_arg *b = a;
    int64_t slices = (int64_t)((b->bytes + SLICE_BYTES - 1) / SLICE_BYTES);
    int avx2 = 0;
#if defined(__x86_64__)
    avx2 = __builtin_cpu_supports("avx2");
#endif
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t s = 0; s < slices; s++) {
        size_t lo = (size_t)s * SLICE_BYTES, hi = lo + SLICE_BYTES < b->bytes ? lo + SLICE_BYTES : b->bytes;
#if defined(__x86_64__)
        if (avx2 && !((uintptr_t)b->dst % 32)) {
            copy_stream_avx2((char *)b->dst + lo, (const char *)b->p + lo, hi - lo);
            continue;
        }
#endif
        (void)avx2;
        memcpy((char *)b->dst + lo, (const char *)b->p + lo, hi - lo);
    }
#if defined(__x86_64__)
    _mm_sfence();
#endif
}

typedef struct { const float *x; uint64_t n; float s; } naive_arg;
static void base_naive(void *a) {
    naive_arg *b = a;
    float s = 0;
    const float *x = b->x;
    int64_t n = (int64_t)b->n;
#pragma omp parallel for reduction(+ : s)
    for (int64_t i = 0; i < n; i++) s += x[i];
    b->s = s;
}

/* ---- ours ------------------------------------------------------------------------------------- */
typedef struct {
    tally_context *ctx;
    tally_type type;
    const void *x;
    void *out;
    uint64_t n;
    tally_op ops[3];
    size_t nops;
    tally_result res[3];
    int scan; /* 0: reduce; 1: inclusive scan; 2: exclusive scan (op ops[0]) */
} our_arg;

static void ours(void *a) {
    our_arg *o = a;
    tally_status s;
    if (o->scan) {
        tally_scan_options so = {0};
        so.exclusive = o->scan == 2;
        s = tally_scan(o->ctx, o->ops[0], o->type, o->x, o->out, o->n, &so);
    }
    else if (o->nops == 1) s = tally_reduce(o->ctx, o->ops[0], o->type, o->x, o->n, NULL, &o->res[0]);
    else s = tally_reduce_many(o->ctx, o->type, o->x, o->n, o->ops, o->nops, NULL, o->res);
    if (s != TALLY_OK) {
        fprintf(stderr, "tally_bench_cpu: %s failed: %s (%s)\n", o->scan ? "tally_scan" : "tally_reduce",
                tally_status_name(s), tally_last_error(o->ctx));
        exit(1);
    }
}


/* ---- scan answers ----------------------------------------------------------------------------- */
static uint64_t hash_bytes(const void *p, size_t bytes) {
    const uint64_t *w = p;
    uint64_t h = 0;
#pragma omp parallel for reduction(^ : h) num_threads(omp_get_num_procs())
    for (size_t i = 0; i < bytes / 8; i++) h ^= (w[i] + i) * 0x9E3779B97F4A7C15ull; /* any change shows */
    return h;
}

/* Checks every output of a scan of the bench's data (integers 0..999, prices 5.00..49.99): integer
 * sums and all maxima exactly; float sums within tally.h's bound of the exact prefix (computed in
 * fixed point: every input times 2^21 (f32) or 2^50 (f64) is an integer below 2^56, the prefix
 * in 128 bits), with room: 1e-2 (f32), 1e-9 (f64) relative. In parallel: each chunk's summary
 * first (its sum, fixed-point sum, maximum), then every chunk checked from the prefix of the
 * summaries before it. Writes the table's note. */
typedef struct { uint64_t run; int64_t imax; double fmax; __int128 fix; } scan_state;

static void scan_range(tally_type ty, tally_op op, int excl, const void *x, const void *out, uint64_t lo,
                       uint64_t hi, scan_state *st, int verify, uint64_t *bad, double *worst) {
    int is_int = ty == TALLY_I32 || ty == TALLY_I64, f32 = ty == TALLY_F32;
    double up = f32 ? 0x1p21 : 0x1p50, down = f32 ? 0x1p-21 : 0x1p-50;
    for (uint64_t i = lo; i < hi; i++) {
        int64_t iv = 0;
        double fv = 0;
        if (is_int) iv = ty == TALLY_I32 ? ((const int32_t *)x)[i] : ((const int64_t *)x)[i];
        else fv = f32 ? (double)((const float *)x)[i] : ((const double *)x)[i];
        scan_state before = *st;
        if (op == TALLY_MAX) {
            if (iv > st->imax) st->imax = iv;
            if (fv > st->fmax) st->fmax = fv;
        } else if (is_int) {
            st->run += (uint64_t)iv;
        } else {
            st->fix += (int64_t)(fv * up);
        }
        if (!verify) continue;
        const scan_state *w = excl ? &before : st;
        int ok;
        if (is_int) {
            int64_t want = op == TALLY_MAX ? w->imax : (int64_t)w->run;
            ok = ty == TALLY_I32 ? ((const int32_t *)out)[i] == (int32_t)(uint32_t)want
                                 : ((const int64_t *)out)[i] == want;
        } else {
            double o = f32 ? (double)((const float *)out)[i] : ((const double *)out)[i];
            if (op == TALLY_MAX) {
                ok = o == w->fmax;
            } else if (excl && i == 0) {
                ok = o == 0;
            } else {
                double pre = ((double)(int64_t)(w->fix >> 64) * 0x1p64 + (double)(uint64_t)w->fix) * down;
                double e = fabs(o - pre) / pre;
                if (e > *worst) *worst = e;
                ok = e <= (f32 ? 1e-2 : 1e-9);
            }
        }
        if (!ok) {
            *bad = i;
            return;
        }
    }
}

static int check_scan(tally_type ty, tally_op op, int excl, const void *x, const void *out, uint64_t n,
                      char *note, size_t size) {
    enum { CH = 256 };
    static scan_state sum[CH], start[CH];
    uint64_t bad = n; /* the first wrong element */
    double worst = 0;
    const scan_state id = {0, INT64_MIN, -INFINITY, 0};
#pragma omp parallel for schedule(dynamic, 1) num_threads(omp_get_num_procs()) /* all cores, whatever -t */
    for (int c = 0; c < CH; c++) {
        sum[c] = id;
        scan_range(ty, op, excl, x, out, n * (uint64_t)c / CH, n * (uint64_t)(c + 1) / CH, &sum[c], 0, NULL, NULL);
    }
    start[0] = id;
    for (int c = 1; c < CH; c++) {
        start[c] = start[c - 1];
        start[c].run += sum[c - 1].run;
        start[c].fix += sum[c - 1].fix;
        if (sum[c - 1].imax > start[c].imax) start[c].imax = sum[c - 1].imax;
        if (sum[c - 1].fmax > start[c].fmax) start[c].fmax = sum[c - 1].fmax;
    }
#pragma omp parallel for schedule(dynamic, 1) reduction(min : bad) reduction(max : worst) num_threads(omp_get_num_procs())
    for (int c = 0; c < CH; c++) {
        scan_state st = start[c];
        uint64_t b = n;
        double w = 0;
        scan_range(ty, op, excl, x, out, n * (uint64_t)c / CH, n * (uint64_t)(c + 1) / CH, &st, 1, &b, &w);
        if (b < bad) bad = b;
        if (w > worst) worst = w;
    }
    int ok = bad == n;
    if ((ty == TALLY_F32 || ty == TALLY_F64) && op == TALLY_SUM)
        snprintf(note, size, "max rel. err %.1e (checked all)%s", worst, ok ? "" : " WRONG");
    else if (ok) snprintf(note, size, "checked all %" PRIu64, n);
    else snprintf(note, size, "element %" PRIu64 " WRONG", bad);
    return ok;
}

/* ---- table ------------------------------------------------------------------------------------ */
static char g_table[65536];
static size_t g_tlen;
/* where the scans' time goes (tally_cpu_set_scan_profile): shares of the threads' summed time */
static char g_ptable[4096];
static size_t g_plen;
static const char *g_phead =
    "| scan (phases, cpu.h)         | ms/call | thr   | pieces | wake% | totals% | lookbk% | scan+write% | tail% | waits | stolen |\n"
    "|------------------------------|--------:|------:|-------:|------:|--------:|--------:|------------:|------:|------:|-------:|\n";
static int g_fail;

static void row(const char *name, double bytes, double t_ours, const char *base, double t_base,
                const char *note) {
    char line[1024];
    snprintf(line, sizeof line, "| %-28s | %8.2f | %6.1f | %-20s | %8.2f | %6.1f | %5.2f | %s |\n",
             name, t_ours * 1e3, bytes / t_ours / 1e9, base, t_base * 1e3, bytes / t_base / 1e9,
             t_base / t_ours, note);
    fputs(line, stdout);
    fflush(stdout);
    g_tlen += (size_t)snprintf(g_table + g_tlen, sizeof g_table - g_tlen, "%s", line);
}

static void fail(const char *what) {
    fprintf(stderr, "tally_bench_cpu: VALIDATION FAILED: %s\n", what);
    g_fail = 1;
}

static const char *cpu_model(void) {
    static char model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return model;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ') c++;
                snprintf(model, sizeof model, "%s", c);
                model[strcspn(model, "\n")] = 0;
            }
            break;
        }
    }
    fclose(f);
    return model;
}

/* "0.52 0.61 0.70": the load averages, to tell a quiet machine from a busy one */
static void loadavg(char *buf, size_t size) {
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return;
    double a, b, c;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, size, "%.2f %.2f %.2f", a, b, c);
    fclose(f);
}

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t rnd(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

/* ---- the exact-sum scaling table (-x) --------------------------------------------------------- */
/* A plain rounding SIMD sum (the naive loop a user would write with intrinsics): per thread four
 * float or double accumulators over 1 MiB slices. The answer is not exact; only its speed counts. */
#if defined(__x86_64__)
__attribute__((target("avx512f"))) static double plain_avx512(const void *p, size_t bytes, int f64) {
    const char *c = p;
    size_t i = 0;
    double s = 0;
    if (f64) {
        __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
        for (; i + 256 <= bytes; i += 256) {
            a0 = _mm512_add_pd(a0, _mm512_loadu_pd((const double *)(c + i)));
            a1 = _mm512_add_pd(a1, _mm512_loadu_pd((const double *)(c + i + 64)));
            a2 = _mm512_add_pd(a2, _mm512_loadu_pd((const double *)(c + i + 128)));
            a3 = _mm512_add_pd(a3, _mm512_loadu_pd((const double *)(c + i + 192)));
        }
        s = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3)));
        for (; i + 8 <= bytes; i += 8) s += *(const double *)(c + i);
    } else {
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; i + 256 <= bytes; i += 256) {
            a0 = _mm512_add_ps(a0, _mm512_loadu_ps((const float *)(c + i)));
            a1 = _mm512_add_ps(a1, _mm512_loadu_ps((const float *)(c + i + 64)));
            a2 = _mm512_add_ps(a2, _mm512_loadu_ps((const float *)(c + i + 128)));
            a3 = _mm512_add_ps(a3, _mm512_loadu_ps((const float *)(c + i + 192)));
        }
        s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
        for (; i + 4 <= bytes; i += 4) s += *(const float *)(c + i);
    }
    return s;
}
__attribute__((target("avx2"))) static double plain_avx2(const void *p, size_t bytes, int f64) {
    const char *c = p;
    size_t i = 0;
    double s = 0, l[4];
    float lf[8];
    if (f64) {
        __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
        for (; i + 128 <= bytes; i += 128) {
            a0 = _mm256_add_pd(a0, _mm256_loadu_pd((const double *)(c + i)));
            a1 = _mm256_add_pd(a1, _mm256_loadu_pd((const double *)(c + i + 32)));
            a2 = _mm256_add_pd(a2, _mm256_loadu_pd((const double *)(c + i + 64)));
            a3 = _mm256_add_pd(a3, _mm256_loadu_pd((const double *)(c + i + 96)));
        }
        _mm256_storeu_pd(l, _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
        s = l[0] + l[1] + l[2] + l[3];
        for (; i + 8 <= bytes; i += 8) s += *(const double *)(c + i);
    } else {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; i + 128 <= bytes; i += 128) {
            a0 = _mm256_add_ps(a0, _mm256_loadu_ps((const float *)(c + i)));
            a1 = _mm256_add_ps(a1, _mm256_loadu_ps((const float *)(c + i + 32)));
            a2 = _mm256_add_ps(a2, _mm256_loadu_ps((const float *)(c + i + 64)));
            a3 = _mm256_add_ps(a3, _mm256_loadu_ps((const float *)(c + i + 96)));
        }
        _mm256_storeu_ps(lf, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
        for (int j = 0; j < 8; j++) s += lf[j];
        for (; i + 4 <= bytes; i += 4) s += *(const float *)(c + i);
    }
    return s;
}
#endif
static double plain_scalar(const void *p, size_t bytes, int f64) {
    double s = 0;
    if (f64)
        for (size_t i = 0; i < bytes / 8; i++) s += ((const double *)p)[i];
    else
        for (size_t i = 0; i < bytes / 4; i++) s += ((const float *)p)[i];
    return s;
}
static double (*plain_fn)(const void *, size_t, int) = plain_scalar;
static volatile double g_dsink;

typedef struct { const void *p; size_t bytes; int f64; } plain_arg;
static void base_plain(void *a) {
    const plain_arg *b = a;
    int64_t slices = (int64_t)((b->bytes + SLICE_BYTES - 1) / SLICE_BYTES);
    double total = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : total)
    for (int64_t s = 0; s < slices; s++) {
        size_t lo = (size_t)s * SLICE_BYTES, hi = lo + SLICE_BYTES < b->bytes ? lo + SLICE_BYTES : b->bytes;
        total += plain_fn((const char *)b->p + lo, hi - lo, b->f64);
    }
    g_dsink = total;
}

/* deterministic data from the index: price, exponents over 2^-40..2^40, or the whole range */
static uint64_t mix64(uint64_t h) {
    h ^= h >> 31;
    h *= 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return h;
}
static void fill_shape(int shape, float *xf, double *xd, uint64_t n) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < (int64_t)n; i++) {
        uint64_t h = mix64((uint64_t)i * 2 + 1), g = mix64(h);
        double sg = (h >> 63) ? -1.0 : 1.0, u = 1.0 + (double)(g >> 11) * 0x1p-53;
        if (shape == 0) {
            xf[i] = (float)(500 + (int)(h % 4500)) / 100.0f;
            xd[i] = (double)(500 + (int)(g % 4500)) / 100.0;
        } else if (shape == 1) {
            xf[i] = (float)(sg * ldexp(u, (int)(h % 80) - 40));
            xd[i] = sg * ldexp(u, (int)(g % 80) - 40);
        } else {
            xf[i] = (float)(sg * ldexp(u, (int)(h % 253) - 126));
            xd[i] = sg * ldexp(u, (int)(g % 2013) - 1022); /* up to 2^991: the sum stays finite */
        }
    }
}
/* the exact sum, rounded once, from the superaccumulator fed element by element */
static double exact_reference(const void *x, uint64_t n, int f64) {
    tally_exact total;
    tally_exact_init(&total);
#pragma omp parallel
    {
        tally_exact a;
        tally_exact_init(&a);
#pragma omp for schedule(static)
        for (int64_t i = 0; i < (int64_t)n; i++)
            tally_exact_add(&a, f64 ? ((const double *)x)[i] : (double)((const float *)x)[i]);
#pragma omp critical
        tally_exact_merge(&total, &a);
    }
    return tally_exact_round(&total);
}

typedef struct { tally_context *ctx; const void *x; double *out; int reps, f64; } small_arg;
static void small_ours(void *a) {
    small_arg *s = a;
    tally_result r;
    for (int i = 0; i < s->reps; i++) {
        if (tally_reduce(s->ctx, TALLY_SUM, s->f64 ? TALLY_F64 : TALLY_F32, s->x, 4096, NULL, &r) != TALLY_OK) exit(1);
        *s->out += r.value.f64;
    }
}
static void small_plain(void *a) {
    small_arg *s = a;
    for (int i = 0; i < s->reps; i++) *s->out += plain_fn(s->x, 4096 * (s->f64 ? 8 : 4), s->f64);
}

static int exact_table(const char *tlist, uint64_t n, const char *outpath, int argc, char **argv) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) { read_fn = read_avx512; read_name = "AVX-512"; plain_fn = plain_avx512; }
    else if (__builtin_cpu_supports("avx2")) { read_fn = read_avx2; read_name = "AVX2"; plain_fn = plain_avx2; }
#endif
    float *xf = aligned_alloc(64, (n * 4 + 63) / 64 * 64);
    double *xd = aligned_alloc(64, (n * 8 + 63) / 64 * 64);
    if (!xf || !xd) {
        fprintf(stderr, "tally_bench_cpu: out of memory for n = %" PRIu64 "\n", n);
        return 1;
    }
    int threads[64], nt = 0;
    for (const char *c = tlist; *c && nt < 64;) {
        threads[nt++] = atoi(c);
        while (*c && *c != ',') c++;
        if (*c == ',') c++;
    }
    static const char *shapes[] = {"price", "2^-40..2^40", "full range"};
    char load_start[64], load_end[64];
    loadavg(load_start, sizeof load_start);
    printf("tally_bench_cpu -x: n = %" PRIu64 " (2^%.2f), read loop %s, best of %d runs; GB/s of input\n",
           n, log2((double)n), read_name, g_runs);
    const char *head =
        "| threads | data | type | exact ms | GB/s | read loop GB/s | ratio | plain sum GB/s | ratio | answer |\n"
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---|\n";
    fputs(head, stdout);
    g_tlen = 0;
    g_tlen += (size_t)snprintf(g_table, sizeof g_table, "%s", head);
    char line[512];
    for (int shape = 0; shape < 3; shape++) {
        fill_shape(shape, xf, xd, n);
        double want[2] = {exact_reference(xf, n, 0), exact_reference(xd, n, 1)};
        for (int ti = 0; ti < nt; ti++) {
            tally_options opt;
            tally_options_init(&opt);
            opt.backend = TALLY_BACKEND_CPU;
            opt.threads = threads[ti];
            tally_context *ctx;
            if (tally_create(&ctx, &opt) != TALLY_OK) {
                fprintf(stderr, "tally_bench_cpu: tally_create: %s\n", tally_create_error());
                return 1;
            }
            /* ctx0: the same without the speculative sum, unless the process has it off anyway */
            tally_context *ctx0 = NULL;
            const char *spec_env = getenv("TALLY_CPU_SPEC");
            if (!(spec_env && !strcmp(spec_env, "0"))) {
                char *keep = spec_env ? strdup(spec_env) : NULL;
                setenv("TALLY_CPU_SPEC", "0", 1);
                if (tally_create(&ctx0, &opt) != TALLY_OK) ctx0 = NULL;
                if (keep) setenv("TALLY_CPU_SPEC", keep, 1);
                else unsetenv("TALLY_CPU_SPEC");
                free(keep);
            }
            int nth = tally_thread_count(ctx);
            omp_set_num_threads(nth);
            for (int f64 = 0; f64 <= 1; f64++) {
                our_arg o = {ctx, f64 ? TALLY_F64 : TALLY_F32, f64 ? (const void *)xd : (const void *)xf,
                             NULL, n, {TALLY_SUM}, 1, {{0}}, 0};
                ours(&o); /* validate first */
                int ok = memcmp(&o.res[0].value.f64, &want[f64], 8) == 0;
                if (!ok) fail("exact sum");
                buf_arg b = {o.x, n * (f64 ? 8 : 4), NULL};
                plain_arg pa = {o.x, n * (f64 ? 8 : 4), f64};
                double t, tb, tp, t2;
                timepair(ours, &o, base_read, &b, &t, &tb);
                timepair(ours, &o, base_plain, &pa, &t2, &tp);
                if (t2 < t) t = t2;
                double bytes = (double)b.bytes;
                snprintf(line, sizeof line, "| %d | %s | %s | %.2f | %.1f | %.1f | %.2f | %.1f | %.2f | %.17g%s |\n",
                         nth, shapes[shape], f64 ? "f64" : "f32", t * 1e3, bytes / t / 1e9, bytes / tb / 1e9,
                         tb / t, bytes / tp / 1e9, tp / t, o.res[0].value.f64, ok ? "" : " WRONG");
                fputs(line, stdout);
                fflush(stdout);
                g_tlen += (size_t)snprintf(g_table + g_tlen, sizeof g_table - g_tlen, "%s", line);
                /* the same sum on a context without the speculative pass (TALLY_CPU_SPEC=0 when
                 * it is made, src/cpu/state.h): the exact path alone, before/after in one run
                 * (TALLY_BENCH_SPEC0=0: not) */
                const char *s0 = getenv("TALLY_BENCH_SPEC0");
                if (ctx0 && !(s0 && !strcmp(s0, "0"))) {
                    our_arg o0 = o;
                    o0.ctx = ctx0;
                    ours(&o0);
                    int ok0 = memcmp(&o0.res[0].value.f64, &want[f64], 8) == 0;
                    if (!ok0) fail("exact sum (spec=0)");
                    double u, ub, up, u2;
                    timepair(ours, &o0, base_read, &b, &u, &ub);
                    timepair(ours, &o0, base_plain, &pa, &u2, &up);
                    if (u2 < u) u = u2;
                    snprintf(line, sizeof line, "| %d | %s spec=0 | %s | %.2f | %.1f | %.1f | %.2f | %.1f | %.2f | %.17g%s |\n",
                             nth, shapes[shape], f64 ? "f64" : "f32", u * 1e3, bytes / u / 1e9, bytes / ub / 1e9,
                             ub / u, bytes / up / 1e9, up / u, o0.res[0].value.f64, ok0 ? "" : " WRONG");
                    fputs(line, stdout);
                    fflush(stdout);
                    g_tlen += (size_t)snprintf(g_table + g_tlen, sizeof g_table - g_tlen, "%s", line);
                }
                /* TALLY_BENCH_XPF="FAR,NEAR;FAR,NEAR;...": the wide and full-range rows again with
                 * the exact kernels' prefetch distances set so (exact_kernels.h), each beside its
                 * own read loop, at 2 threads and more (what they are for); the rows above use the
                 * defaults */
                const char *xv = getenv("TALLY_BENCH_XPF");
                uint32_t far0, near0;
                tally_exact_get_prefetch(&far0, &near0);
                for (const char *c = nth > 1 ? xv : NULL; shape > 0 && c && *c;) {
                    unsigned long far = far0, near = near0;
                    if (sscanf(c, "%lu,%lu", &far, &near) < 1) break;
                    tally_exact_set_prefetch((uint32_t)far / 64 * 64, (uint32_t)near / 64 * 64);
                    ours(&o);
                    int vok = memcmp(&o.res[0].value.f64, &want[f64], 8) == 0;
                    if (!vok) fail("exact sum (prefetch variant)");
                    timepair(ours, &o, base_read, &b, &t, &tb);
                    char label[96];
                    snprintf(label, sizeof label, "%s xpf=%lu,%lu", shapes[shape], far / 64 * 64, near / 64 * 64);
                    snprintf(line, sizeof line, "| %d | %s | %s | %.2f | %.1f | %.1f | %.2f | | | %.17g%s |\n",
                             nth, label, f64 ? "f64" : "f32", t * 1e3, bytes / t / 1e9, bytes / tb / 1e9,
                             tb / t, o.res[0].value.f64, vok ? "" : " WRONG");
                    fputs(line, stdout);
                    fflush(stdout);
                    g_tlen += (size_t)snprintf(g_table + g_tlen, sizeof g_table - g_tlen, "%s", line);
                    tally_exact_set_prefetch(far0, near0);
                    c = strchr(c, ';');
                    if (c) c++;
                }
            }
            tally_destroy(ctx);
            if (ctx0) tally_destroy(ctx0);
        }
    }
    /* small arrays: one call on 4,096 floats (in cache), against a plain SIMD loop over them */
    const char *shead = "\n| threads | 4,096 elements | type | exact ns/call | plain SIMD loop ns | ratio (<= 2 wanted) |\n"
                        "|---:|---|---|---:|---:|---:|\n";
    fputs(shead, stdout);
    g_tlen += (size_t)snprintf(g_table + g_tlen, sizeof g_table - g_tlen, "%s", shead);
    for (int shape = 0; shape < 3; shape++) {
        fill_shape(shape, xf, xd, 4096);
        for (int f64 = 0; f64 <= 1; f64++)
        for (int ti = 0; ti < nt; ti++) {
            const void *xs = f64 ? (const void *)xd : (const void *)xf;
            double want = exact_reference(xs, 4096, f64);
            tally_options opt;
            tally_options_init(&opt);
            opt.backend = TALLY_BACKEND_CPU;
            opt.threads = threads[ti];
            tally_context *ctx;
            if (tally_create(&ctx, &opt) != TALLY_OK) return 1;
            tally_result r;
            tally_reduce(ctx, TALLY_SUM, f64 ? TALLY_F64 : TALLY_F32, xs, 4096, NULL, &r);
            int ok = memcmp(&r.value.f64, &want, 8) == 0;
            if (!ok) fail("exact sum of 4096");
            double out = 0;
            small_arg so = {ctx, xs, &out, 2000, f64}, sp = {ctx, xs, &out, 2000, f64};
            double t, tb;
            timepair(small_ours, &so, small_plain, &sp, &t, &tb);
            snprintf(line, sizeof line, "| %d | %s | %s | %.0f | %.0f | %.2f%s |\n", tally_thread_count(ctx),
                     shapes[shape], f64 ? "f64" : "f32", t / so.reps * 1e9, tb / sp.reps * 1e9, t / tb,
                     ok ? "" : " WRONG");
            fputs(line, stdout);
            g_tlen += (size_t)snprintf(g_table + g_tlen, sizeof g_table - g_tlen, "%s", line);
            const int w32w = tally_exact_get_small_w32w(), spec = tally_exact_get_small_spec();
            if (w32w || spec) { /* the same call without W32W and SPEC (the short sums before) */
                tally_exact_set_small_w32w(0);
                tally_exact_set_small_spec(0);
                tally_reduce(ctx, TALLY_SUM, f64 ? TALLY_F64 : TALLY_F32, xs, 4096, NULL, &r);
                ok = memcmp(&r.value.f64, &want, 8) == 0;
                if (!ok) fail("exact sum of 4096 (before)");
                timepair(small_ours, &so, small_plain, &sp, &t, &tb);
                tally_exact_set_small_w32w(w32w);
                tally_exact_set_small_spec(spec);
                snprintf(line, sizeof line, "| %d | %s | %s before (no W32W, SPEC) | %.0f | %.0f | %.2f%s |\n",
                         tally_thread_count(ctx), shapes[shape], f64 ? "f64" : "f32", t / so.reps * 1e9,
                         tb / sp.reps * 1e9, t / tb, ok ? "" : " WRONG");
                fputs(line, stdout);
                g_tlen += (size_t)snprintf(g_table + g_tlen, sizeof g_table - g_tlen, "%s", line);
            }
            tally_destroy(ctx);
        }
    }
    loadavg(load_end, sizeof load_end);
    printf("load average (1, 5, 15 min): %s at the start, %s at the end\n", load_start, load_end);
    if (outpath) {
        FILE *f = fopen(outpath, "w");
        if (!f) {
            perror(outpath);
            return 1;
        }
        time_t tt = time(NULL);
        char date[64];
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&tt));
        fprintf(f, "# CPU benchmark: correctly rounded sums, %s\n\n", date);
        fprintf(f, "- machine: %s, %ld cores online\n- tally %s; read loop %s; plain sum: rounding SIMD adds\n",
                cpu_model(), sysconf(_SC_NPROCESSORS_ONLN), tally_version(), read_name);
        fprintf(f, "- command: `");
        for (int i = 0; i < argc; i++) fprintf(f, "%s%s", i ? " " : "", argv[i]);
        fprintf(f, "`\n- n = %" PRIu64 "; best of %d runs (up to 4x that while a row is under 0.3 s) after one warm-up, each beside a run of its baseline; every answer checked before timing\n"
                   "- load average: %s at the start, %s at the end\n"
                   "- ratio = baseline time / our time (1.00 = as fast); small arrays: our time / the loop's\n\n",
                n, g_runs, load_start, load_end);
        fputs(g_table, f);
        fclose(f);
    }
    free(xf);
    free(xd);
    return g_fail;
}

int main(int argc, char **argv) {
    /* OpenMP threads that spin after a parallel region would steal the cores from tally's own
     * threads (and the other way round): make them sleep. libgomp reads this at load time, so
     * set it and start again. */
    if (!getenv("OMP_WAIT_POLICY")) {
        setenv("OMP_WAIT_POLICY", "passive", 1);
        execv("/proc/self/exe", argv);
    }
    uint64_t n = 1ull << 28;
    int threads = 0;
    const char *outpath = NULL, *xlist = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) n = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-x") && i + 1 < argc) xlist = argv[++i];
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) g_runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-o") && i + 1 < argc) outpath = argv[++i];
        else if (!strcmp(argv[i], "-S")) g_scans_only = 1;
        else if (!strcmp(argv[i], "-s")) g_scans_only = 2;
        else if (!strcmp(argv[i], "-q")) g_quick = 1;
        else {
            fprintf(stderr, "usage: %s [-n ELEMENTS] [-r RUNS] [-t THREADS] [-q] [-S|-s] [-o RESULT.md]\n"
                            "       %s -x THREADS,THREADS,... [-n ELEMENTS] [-r RUNS] [-o RESULT.md]\n",
                    argv[0], argv[0]);
            return 2;
        }
    }
    if (g_runs < 1) g_runs = 1;
    if (g_runs > 63) g_runs = 63;
    if (n < 1) n = 1;
    if (xlist) return exact_table(xlist, n < 4096 ? 4096 : n, outpath, argc, argv);

    tally_options opt;
    tally_options_init(&opt);
    opt.backend = TALLY_BACKEND_CPU;
    opt.threads = threads;
    tally_context *ctx;
    if (tally_create(&ctx, &opt) != TALLY_OK) {
        fprintf(stderr, "tally_bench_cpu: tally_create: %s\n", tally_create_error());
        return 1;
    }
    int nth = tally_thread_count(ctx);
    omp_set_num_threads(nth);
    /* a second context whose scans publish their totals early (scan_pf=2), for the A/B rows;
     * none where TALLY_CPU_TUNE is set (the caller is measuring a setting of its own) */
    tally_context *ctx_early = NULL, *ctx_keyed = NULL, *ctx_rt0 = NULL;
    if (!getenv("TALLY_CPU_TUNE")) {
        setenv("TALLY_CPU_TUNE", "scan_pf=2", 1);
        if (tally_create(&ctx_early, &opt) != TALLY_OK) ctx_early = NULL;
        /* and one whose float max scans go through the keyed kernels (a key buffer per chunk),
         * for the "(keyed)" rows beside the fused ones */
        setenv("TALLY_CPU_TUNE", "scan_keyed=1", 1);
        if (tally_create(&ctx_keyed, &opt) != TALLY_OK) ctx_keyed = NULL;
        /* and one with the float min/max scans' former path (block totals from order keys,
         * folded by the totals kernel; a NaN test every vector), rows "(before)" */
        setenv("TALLY_CPU_TUNE", "scan_rtotal=0,scan_fkv=1", 1);
        if (tally_create(&ctx_rt0, &opt) != TALLY_OK) ctx_rt0 = NULL;
        unsetenv("TALLY_CPU_TUNE");
    }
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) { read_fn = read_avx512; read_name = "AVX-512"; }
    else if (__builtin_cpu_supports("avx2")) { read_fn = read_avx2; read_name = "AVX2"; }
#endif

    /* data, first touched by the threads that will read it */
    int32_t *xi = aligned_alloc(64, (n * 4 + 63) / 64 * 64);
    float *xf = aligned_alloc(64, (n * 4 + 63) / 64 * 64);
    double *xd = aligned_alloc(64, (n * 8 + 63) / 64 * 64);
    int64_t *xl = aligned_alloc(64, (n * 8 + 63) / 64 * 64);
    void *out = aligned_alloc(64, (n * 8 + 63) / 64 * 64);
    void *cpy = aligned_alloc(64, (n * 8 + 63) / 64 * 64);
    if (!xi || !xf || !xd || !xl || !out || !cpy) {
        fprintf(stderr, "tally_bench_cpu: out of memory for n = %" PRIu64 "\n", n);
        return 1;
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < (int64_t)n; i++) {
        uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 32;
        int cents = 500 + (int)(h % 4500);
        xi[i] = (int32_t)(h >> 40) % 1000;
        xf[i] = (float)cents / 100.0f;
        xd[i] = (double)cents / 100.0;
        xl[i] = xi[i];
        ((int64_t *)out)[i] = 0;
        ((int64_t *)cpy)[i] = 0;
    }
    (void)rnd;

    /* ---- references (exact, computed once) ---- */
    int64_t ri_sum = 0;
    int32_t ri_min = INT32_MAX, ri_max = INT32_MIN;
    float rf_min = INFINITY, rf_max = -INFINITY;
    double rd_min = INFINITY, rd_max = -INFINITY;
    int64_t rf_fix = 0;       /* f32 values in [4, 64) are multiples of 2^-21 */
    __int128 rd_fix = 0;      /* f64 values in [4, 64) are multiples of 2^-50 */
    for (uint64_t i = 0; i < (g_scans_only ? 0 : n); i++) { /* the scans check themselves */
        ri_sum += xi[i];
        if (xi[i] < ri_min) ri_min = xi[i];
        if (xi[i] > ri_max) ri_max = xi[i];
        if (xf[i] < rf_min) rf_min = xf[i];
        if (xf[i] > rf_max) rf_max = xf[i];
        if (xd[i] < rd_min) rd_min = xd[i];
        if (xd[i] > rd_max) rd_max = xd[i];
        rf_fix += (int64_t)ldexp((double)xf[i], 21); /* exact: an integer below 2^27 */
        rd_fix += (__int128)ldexp(xd[i], 50);          /* exact: an integer below 2^56 */
    }
    /* int64 / __int128 -> double rounds to nearest-even; the power-of-two scaling is exact */
    double rf_sum = ldexp((double)rf_fix, -21);
    double rd_sum = ldexp((double)rd_fix, -50);

    printf("tally_bench_cpu: n = %" PRIu64 " (2^%.2f), %d threads, isa %s, read loop %s, best of %d runs (up to 4x that while a row is under 0.3 s; baseline right before each)\n",
           n, log2((double)n), nth, tally_isa_name(tally_active_isa(ctx)), read_name, g_runs);
    char head[512];
    snprintf(head, sizeof head,
             "| %-28s | %8s | %6s | %-20s | %8s | %6s | %5s | %s |\n"
             "|------------------------------|---------:|-------:|----------------------|---------:|-------:|------:|------|\n",
             "op / type", "ours ms", "GB/s", "baseline", "base ms", "GB/s", "ratio", "answer");
    fputs(head, stdout);

    char load_start[64], load_end[64];
    loadavg(load_start, sizeof load_start);
    buf_arg b4 = {xf, n * 4, cpy}, b8 = {xd, n * 8, NULL}, bi = {xi, n * 4, cpy}, bl = {xl, n * 8, NULL};
    char note[512];

    struct { const char *name; tally_type type; tally_op op; } singles[] = {
        {"sum f32 (correctly rounded)", TALLY_F32, TALLY_SUM},
        {"min f32", TALLY_F32, TALLY_MIN},
        {"max f32", TALLY_F32, TALLY_MAX},
        {"sum i32", TALLY_I32, TALLY_SUM},
        {"min i32", TALLY_I32, TALLY_MIN},
        {"max i32", TALLY_I32, TALLY_MAX},
        {"sum i64", TALLY_I64, TALLY_SUM},
        {"min i64", TALLY_I64, TALLY_MIN},
        {"max i64", TALLY_I64, TALLY_MAX},
        {"sum f64 (correctly rounded)", TALLY_F64, TALLY_SUM},
        {"min f64", TALLY_F64, TALLY_MIN},
        {"max f64", TALLY_F64, TALLY_MAX},
    };
    for (size_t s = 0; !g_scans_only && s < sizeof singles / sizeof singles[0]; s++) {
        our_arg o = {ctx, singles[s].type, NULL, NULL, n, {singles[s].op}, 1, {{0}}, 0};
        o.x = singles[s].type == TALLY_F32 ? (const void *)xf
            : singles[s].type == TALLY_F64 ? (const void *)xd
            : singles[s].type == TALLY_I64 ? (const void *)xl : (const void *)xi;
        int wide = singles[s].type == TALLY_F64 || singles[s].type == TALLY_I64;
        ours(&o); /* validate first */
        const tally_result *r = &o.res[0];
        int ok;
        if (singles[s].type == TALLY_I32 || singles[s].type == TALLY_I64) { /* xl[i] = xi[i] */
            int64_t want = singles[s].op == TALLY_SUM ? ri_sum : singles[s].op == TALLY_MIN ? ri_min : ri_max;
            ok = r->value.i64 == want;
            snprintf(note, sizeof note, "%" PRId64 "%s", r->value.i64, ok ? "" : " WRONG");
        } else {
            double want = singles[s].type == TALLY_F64
                              ? (singles[s].op == TALLY_SUM ? rd_sum : singles[s].op == TALLY_MIN ? rd_min : rd_max)
                        : singles[s].op == TALLY_SUM ? rf_sum
                        : singles[s].op == TALLY_MIN ? (double)rf_min : (double)rf_max;
            ok = memcmp(&r->value.f64, &want, 8) == 0;
            snprintf(note, sizeof note, "%.17g%s", r->value.f64, ok ? " (exact)" : " WRONG");
            if (singles[s].op != TALLY_SUM) snprintf(note, sizeof note, "%.9g%s", r->value.f64, ok ? "" : " WRONG");
        }
        if (!ok) fail(singles[s].name);
        double t, tb;
        timepair(ours, &o, base_read,
                 singles[s].type == TALLY_F64 ? &b8 : singles[s].type == TALLY_I64 ? &bl
                 : singles[s].type == TALLY_F32 ? &b4 : &bi, &t, &tb);
        double bytes = (double)n * (wide ? 8 : 4);
        row(singles[s].name, bytes, t, wide ? "read loop 8n bytes" : "read loop 4n bytes", tb, note);
    }
    if (!g_scans_only) {
        our_arg o = {ctx, TALLY_F32, xf, NULL, n, {TALLY_SUM, TALLY_MIN, TALLY_MAX}, 3, {{0}}, 0};
        ours(&o);
        int ok = o.res[0].value.f64 == rf_sum && o.res[1].value.f64 == rf_min && o.res[2].value.f64 == rf_max;
        if (!ok) fail("fused sum+min+max f32");
        snprintf(note, sizeof note, "%.17g, %.4g, %.4g%s", o.res[0].value.f64, o.res[1].value.f64,
                 o.res[2].value.f64, ok ? "" : " WRONG");
        double t, tb;
        timepair(ours, &o, base_read, &b4, &t, &tb);
        row("sum+min+max f32 (fused)", (double)n * 4, t, "read loop 4n bytes", tb, note);
    }
    /* scans: out of place, against memcpy of the same bytes into another buffer; every type,
     * sum and max (and the exclusive float sum), each answer checked in full first */
    {
        /* early 1: on the context with the early totals (TALLY_CPU_TUNE scan_pf=2, scan.c); 2: on
         * the one with the keyed float min/max scans (scan_keyed=1); each beside the same scan on
         * the default one */
        struct { const char *name; tally_type type; tally_op op; int excl, early; } scans[] = {
            {"inclusive sum scan i32", TALLY_I32, TALLY_SUM, 0, 0},
            {"inclusive sum scan i32 (early)", TALLY_I32, TALLY_SUM, 0, 1},
            {"inclusive sum scan f32", TALLY_F32, TALLY_SUM, 0, 0},
            {"inclusive sum scan f32 (early)", TALLY_F32, TALLY_SUM, 0, 1},
            {"exclusive sum scan f32", TALLY_F32, TALLY_SUM, 1, 0}, /* beside its inclusive twin */
            {"inclusive sum scan i64", TALLY_I64, TALLY_SUM, 0, 0},
            {"inclusive sum scan f64", TALLY_F64, TALLY_SUM, 0, 0},
            {"inclusive max scan i32", TALLY_I32, TALLY_MAX, 0, 0},
            {"inclusive max scan f32", TALLY_F32, TALLY_MAX, 0, 0},
            {"inclusive max scan f32 (keyed)", TALLY_F32, TALLY_MAX, 0, 2},
            {"inclusive max scan f32 (before)", TALLY_F32, TALLY_MAX, 0, 3},
            {"inclusive max scan i64", TALLY_I64, TALLY_MAX, 0, 0},
            {"inclusive max scan f64", TALLY_F64, TALLY_MAX, 0, 0},
            {"inclusive max scan f64 (keyed)", TALLY_F64, TALLY_MAX, 0, 2},
            {"inclusive max scan f64 (before)", TALLY_F64, TALLY_MAX, 0, 3},
        };
        for (size_t s = 0; s < (g_scans_only == 2 ? 5 : sizeof scans / sizeof scans[0]); s++) {
            if (scans[s].early == 1 && (!ctx_early || nth < 2)) continue; /* 1 thread: no pieces */
            if (scans[s].early == 2 && !ctx_keyed) continue;
            if (scans[s].early == 3 && !ctx_rt0) continue;
            tally_context *sctx = scans[s].early == 1 ? ctx_early : scans[s].early == 2 ? ctx_keyed
                                : scans[s].early == 3 ? ctx_rt0 : ctx;
            tally_type ty = scans[s].type;
            size_t es = ty == TALLY_I64 || ty == TALLY_F64 ? 8 : 4;
            const void *x = ty == TALLY_I32 ? (const void *)xi : ty == TALLY_I64 ? (const void *)xl
                          : ty == TALLY_F32 ? (const void *)xf : (const void *)xd;
            our_arg o = {sctx, ty, x, out, n, {scans[s].op}, 1, {{0}}, 1 + scans[s].excl};
            ours(&o);
            int ok = check_scan(ty, scans[s].op, scans[s].excl, x, out, n, note, sizeof note);
            if (ok && (ty == TALLY_F32 || ty == TALLY_F64) && scans[s].op == TALLY_SUM) {
                /* deterministic: a second run gives the same bits */
                uint64_t h1 = hash_bytes(out, n * es);
                ours(&o);
                ok = hash_bytes(out, n * es) == h1;
                if (!ok) snprintf(note, sizeof note, "a second run differs WRONG");
                else strncat(note, ", stable", sizeof note - strlen(note) - 1);
            }
            if (!ok) fail(scans[s].name);
            buf_arg bc = {x, n * es, cpy};
            double t, tb;
            timetrio(ours, &o, base_memcpy, &bc, base_stream_copy, &bc, &t, &tb);
            spread_note(note, sizeof note, t, tb);
            row(scans[s].name, (double)n * (double)es, t, es == 8 ? "memcpy 8n bytes" : "memcpy 4n bytes", tb, note);
            /* where the time goes: the same calls again, with the scan's per-thread clocks on */
            tally_cpu_scan_prof pr;
            memset(&pr, 0, sizeof pr);
            tally_cpu_set_scan_profile(sctx, &pr);
            double p0 = now();
            for (int r = 0; r < g_runs; r++) ours(&o);
            double pt = (now() - p0) / g_runs;
            tally_cpu_set_scan_profile(sctx, NULL);
            double all = pr.wake_ns + pr.totals_ns + pr.lookback_ns + pr.scan_ns + pr.tail_ns;
            if (all <= 0) all = 1;
            g_plen += (size_t)snprintf(g_ptable + g_plen, sizeof g_ptable - g_plen,
                                       "| %-28s | %7.2f | %5.1f | %6.0f | %5.1f | %6.1f | %6.1f | %6.1f | %5.1f | %5.1f | %6.1f |\n",
                                       scans[s].name, pt * 1e3, (double)pr.thread_calls / (double)pr.calls,
                                       (double)pr.pieces / (double)pr.calls, 100 * pr.wake_ns / all,
                                       100 * pr.totals_ns / all, 100 * pr.lookback_ns / all, 100 * pr.scan_ns / all,
                                       100 * pr.tail_ns / all, (double)pr.waits / (double)pr.calls,
                                       (double)pr.stolen / (double)pr.calls);
        }
        printf("\n%s%s", g_phead, g_ptable);
    }
    /* the naive OpenMP float reduction: fast and wrong */
    if (!g_quick && !g_scans_only) {
        our_arg o = {ctx, TALLY_F32, xf, NULL, n, {TALLY_SUM}, 1, {{0}}, 0};
        naive_arg na = {xf, n, 0};
        double t_naive, t_ours;
        timepair(ours, &o, base_naive, &na, &t_ours, &t_naive);
        snprintf(note, sizeof note, "naive f32 %.9g vs exact %.17g (rel. err %.1e)", (double)na.s,
                 o.res[0].value.f64, fabs((double)na.s - o.res[0].value.f64) / o.res[0].value.f64);
        row("sum f32 vs OpenMP reduction", (double)n * 4, t_ours, "omp reduction(+:s)", t_naive, note);
    }
    /* the correctly rounded sums over the other data shapes of -x (price-like ones are above) */
    for (int shape = 1; !g_quick && !g_scans_only && shape <= 2; shape++) {
        fill_shape(shape, xf, xd, n);
        for (int f64 = 0; f64 <= 1; f64++) {
            const void *x = f64 ? (const void *)xd : (const void *)xf;
            double want = exact_reference(x, n, f64);
            our_arg o = {ctx, f64 ? TALLY_F64 : TALLY_F32, x, NULL, n, {TALLY_SUM}, 1, {{0}}, 0};
            ours(&o); /* validate first */
            int ok = memcmp(&o.res[0].value.f64, &want, 8) == 0;
            char name[64];
            snprintf(name, sizeof name, "sum %s %s (c.r.)", f64 ? "f64" : "f32",
                     shape == 1 ? "2^-40..2^40" : "full range");
            if (!ok) fail(name);
            snprintf(note, sizeof note, "%.17g%s", o.res[0].value.f64, ok ? " (exact)" : " WRONG");
            double t, tb;
            timepair(ours, &o, base_read, f64 ? &b8 : &b4, &t, &tb);
            row(name, (double)n * (f64 ? 8 : 4), t, f64 ? "read loop 8n bytes" : "read loop 4n bytes", tb, note);
        }
    }

    loadavg(load_end, sizeof load_end);
    printf("load average (1, 5, 15 min): %s at the start, %s at the end\n", load_start, load_end);
    if (outpath) {
        FILE *f = fopen(outpath, "w");
        if (!f) {
            perror(outpath);
            return 1;
        }
        time_t tt = time(NULL);
        char date[64];
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&tt));
        fprintf(f, "# CPU benchmark, %s\n\n", date);
        fprintf(f, "- machine: %s, %ld cores online (lscpu), %d threads used\n", cpu_model(),
                sysconf(_SC_NPROCESSORS_ONLN), nth);
        fprintf(f, "- tally %s, ISA path %s; baselines compiled -O3, read loop %s\n", tally_version(),
                tally_isa_name(tally_active_isa(ctx)), read_name);
        fprintf(f, "- command: `");
        for (int i = 0; i < argc; i++) fprintf(f, "%s%s", i ? " " : "", argv[i]);
        fprintf(f, "`\n- n = %" PRIu64 " elements; best of %d runs (up to 4x that while a row is under 0.3 s) after one warm-up, each run of ours right after one of its baseline\n  (read loop or memcpy of the same bytes); every answer checked before timing\n",
                n, g_runs);
        fprintf(f, "- load average (1, 5, 15 min): %s at the start, %s at the end (other work on the machine\n"
                   "  shares its cores and memory bandwidth; both columns of a row were measured together)\n",
                load_start, load_end);
        fprintf(f, "- ratio = baseline time / our time (1.00 = as fast as the baseline)\n\n");
        fputs(head, f);
        fputs(g_table, f);
        if (g_plen) {
            fprintf(f, "\nWhere the scans' time goes: each thread's clock in the scan's phases, as shares of the\n"
                       "threads' summed time (wake: call start to a thread's first piece; totals: the block totals,\n"
                       "reading the piece; lookbk: waiting for and folding the carries before; scan+write: scanning\n"
                       "the piece from L2 with streaming stores and the next piece's prefetch; tail: a thread's\n"
                       "last piece to the call's end; waits, stolen: per call, look-backs that found a piece\n"
                       "without its totals and waited, and pieces whose totals a look-back computed itself).\n"
                       "One thread: no totals pass, all of it is scan+write.\n\n");
            fputs(g_phead, f);
            fputs(g_ptable, f);
        }
        fclose(f);
    }
    tally_destroy(ctx);
    if (ctx_early) tally_destroy(ctx_early);
    if (ctx_keyed) tally_destroy(ctx_keyed);
    if (ctx_rt0) tally_destroy(ctx_rt0);
    free(xi);
    free(xf);
    free(xd);
    free(xl);
    free(out);
    free(cpy);
    return g_fail;
}
