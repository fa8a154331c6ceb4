/* `tally bench`: every variant of every available backend, validated against an exact reference
 * before it is timed, next to the memory ceilings measured in the same run. */
#include "lab.h"
#include "lab_internal.h"
#include "tally.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char bench_usage[] =
    "usage: tally bench [options]\n"
    "Runs the reduction and scan variants of every available backend on f32 data, checks each\n"
    "against an exact reference, then times it next to the measured memory ceilings.\n"
    "  --sizes LIST      element counts, e.g. 4096,1M,2^24 (default 2^12,2^16,2^20,2^24)\n"
    "  --full            sweep 2^10 .. 2^30 (capped by memory)\n"
    "  --max-size N      skip sizes above N\n"
    "  --family F        reduce, scan or all (default all)\n"
    "  --variants LIST   only variants whose names contain one of these words (ceilings stay)\n"
    "  --backend B       cpu, cuda, vulkan or all (default: all available; all takes Vulkan\n"
    "                    only on a GPU, not on a CPU emulation such as lavapipe)\n"
    "  --threads N       threads for the multi-threaded variants (default: all cores)\n"
    "  --data D          prices (seed 001's, default) or signed (mixed signs and magnitudes)\n"
    "  --seed S          random seed (default 1)\n"
    "  --min-time SEC    time each variant at least this long (default 0.1); the table shows\n"
    "                    the fastest call, JSON also the median\n"
    "  --validate-only   check every variant, time nothing\n"
    "  --strict          exit 1 on any WRONG, the deliberately incorrect variant's included\n"
    "  --json | --csv    machine-readable output on stdout instead of the table\n"
    "  --html FILE       also write a self-contained HTML page with plots and pictures\n"
    "  --list            list the variants and exit\n"
    "Exit status: 0 when every variant is correct and the deliberately incorrect one is caught,\n"
    "1 otherwise, 2 for a usage error.\n";

typedef struct bench_opts {
    uint64_t sizes[64];
    int nsizes;
    uint64_t max_size;
    int full;
    int family;            /* -1 all, else LAB_REDUCE or LAB_SCAN */
    char variants[512];
    const char *backend;
    int threads;
    lab_data data;
    uint64_t seed;
    double min_time;
    int validate_only;
    int strict;
    int json, csv, list;
    const char *html;
} bench_opts;

static const lab_backend *const all_backends[] = {
    &lab_cpu_backend,
#ifdef TALLY_LAB_CUDA
    &lab_cuda_backend,
#endif
#ifdef TALLY_LAB_VULKAN
    &lab_vulkan_backend,
#endif
};
#define NUM_BACKENDS (sizeof all_backends / sizeof all_backends[0])

const char *lab_verdict_name(lab_verdict v)
{
    switch (v) {
    case LAB_CORRECT: return "correct";
    case LAB_WRONG: return "WRONG";
    case LAB_WRONG_EXPECTED: return "WRONG (caught)";
    case LAB_NOT_CAUGHT: return "NOT CAUGHT";
    case LAB_FAILED: return "failed";
    case LAB_SKIPPED: return "skipped";
    case LAB_CEILING: return "ceiling";
    case LAB_UNBOUNDED: return "no bound";
    }
    return "?";
}

const char *lab_family_name(lab_kind k)
{
    switch (k) {
    case LAB_REDUCE: case LAB_REDUCE_SMM: return "reduce";
    case LAB_SCAN: return "scan";
    default: return "ceiling";
    }
}

static int family_of(lab_kind k) /* LAB_REDUCE or LAB_SCAN: which table a variant sits in */
{
    return (k == LAB_SCAN || k == LAB_CEIL_COPY) ? LAB_SCAN : LAB_REDUCE;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int selected(const bench_opts *o, const lab_variant *v)
{
    if (o->family >= 0 && family_of(v->kind) != o->family) return 0;
    if (v->kind == LAB_CEIL_READ || v->kind == LAB_CEIL_COPY || !o->variants[0]) return 1;
    char list[512];
    snprintf(list, sizeof list, "%s", o->variants);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
        if (strstr(v->name, tok)) return 1;
    return 0;
}

/* ---- validation -------------------------------------------------------------------------- */
static lab_verdict judge(const lab_variant *v, uint64_t n, int wrong, int unbounded)
{
    if (unbounded && !wrong && !v->expect_wrong) return LAB_UNBOUNDED;
    /* With no elements there is nothing for the incorrect variant to get wrong. */
    if (v->expect_wrong) return wrong ? LAB_WRONG_EXPECTED : n == 0 ? LAB_CORRECT : LAB_NOT_CAUGHT;
    return wrong ? LAB_WRONG : LAB_CORRECT;
}

static lab_verdict check_reduce(const lab_variant *v, const lab_reference *ref, uint64_t n,
                                const double out[3], double *error, char *note)
{
    double err = fabs(out[0] - ref->sum);
    *error = ref->sum_abs > 0 ? err / ref->sum_abs : err;
    int wrong = 0, unbounded = 0;
    if (isnan(out[0]) != isnan(ref->sum)) wrong = 1;
    if (v->check == LAB_CHECK_EXACT) {
        if (memcmp(&out[0], &ref->sum, sizeof(double)) != 0 && !(out[0] == 0 && ref->sum == 0))
            wrong = 1;
        if (wrong) snprintf(note, LAB_WHY, "sum %.17g, exact %.17g", out[0], ref->sum);
        if (v->kind == LAB_REDUCE_SMM && n > 0 && (out[1] != ref->min || out[2] != ref->max)) {
            wrong = 1;
            snprintf(note, LAB_WHY, "min %.9g max %.9g, expected %.9g %.9g", out[1], out[2],
                     ref->min, ref->max);
        }
    } else {
        double allowed = n ? v->bound(n - 1, n) * ref->sum_abs + 2 * LAB_U64 * fabs(ref->sum) : 0;
        unbounded = isinf(allowed);
        if (!(err <= allowed) && !unbounded) wrong = 1;
        if (wrong)
            snprintf(note, LAB_WHY, "sum %.17g, exact %.17g, error %.3g > bound %.3g", out[0],
                     ref->sum, err, allowed);
    }
    return judge(v, n, wrong, unbounded);
}

/* Each prefix is compared with a double-double running sum (about 106 bits: exact enough for
 * bounds no tighter than an f32 rounding) against the variant's bound for that index. */
static lab_verdict check_scan(const lab_variant *v, const float *in, const float *out, uint64_t n,
                              double *error, char *note)
{
    double hi = 0, lo = 0, abs_sum = 0, worst = 0;
    int wrong = 0, unbounded = 0;
    for (uint64_t i = 0; i < n; ++i) {
        double x = in[i];
        double s = hi + x, bb = s - hi;
        double e = (hi - (s - bb)) + (x - bb);
        lo += e;
        hi = s + lo;
        lo = lo - (hi - s);
        abs_sum += fabs(x);
        double o = out[i];
        double err = fabs((o - hi) - lo);
        double denom = abs_sum * (1 + 1e-12);
        double rel = denom > 0 ? err / denom : err;
        if (rel > worst || isnan(rel)) worst = rel;
        double b = v->bound(i, n);
        if (isinf(b)) unbounded = 1;
        if (isnan(o) || (!isinf(b) && !(err <= b * denom + 2 * LAB_U64 * fabs(hi)))) {
            if (!wrong)
                snprintf(note, LAB_WHY, "out[%llu] = %.9g, exact %.12g, error %.3g > bound %.3g",
                         (unsigned long long)i, o, hi + lo, err, b * denom);
            wrong = 1;
        }
    }
    *error = worst;
    return judge(v, n, wrong, unbounded);
}

/* ---- timing ------------------------------------------------------------------------------- */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median and best time of one call. Calls are batched so one sample lasts at least ~100 us. */
static int time_variant(const lab_backend *be, const lab_variant *v, void *bs, uint64_t n,
                        float *scan_out, double first, double min_time, double *median,
                        double *best, char *why)
{
    double samples[256];
    int count = 0;
    uint64_t batch = first > 0 && first < 1e-4 ? (uint64_t)(1e-4 / first) + 1 : 1;
    double out[3];
    double start = now_s();
    while (count < 256) {
        double t;
        if (be->time_calls) {
            if (be->time_calls(bs, v, n, batch, &t, why)) return -1;
        } else {
            double t0 = now_s();
            for (uint64_t k = 0; k < batch; ++k)
                if (v->fn(bs, n, 0, out, scan_out, why)) return -1;
            t = (now_s() - t0) / (double)batch;
        }
        samples[count++] = t;
        double elapsed = now_s() - start;
        if (count >= 3 && elapsed >= min_time) break;
        if (count >= 1 && elapsed >= 5 * min_time && elapsed > 0.5) break; /* a slow variant */
    }
    qsort(samples, (size_t)count, sizeof samples[0], cmp_double);
    *median = samples[count / 2];
    *best = samples[0];
    return 0;
}

/* After every variant of one size: time the ceilings once more (keeping the faster run), then
 * express each variant as a share of the better ceiling of its family at that size. */
static void finish_size(const lab_backend *be, lab_row *rows, size_t count, void *bstate,
                        float *scan_out, double min_time)
{
    double ceiling[2] = { 0, 0 };
    for (size_t r = 0; r < count; ++r) {
        lab_row *row = &rows[r];
        const lab_variant *v = row->variant;
        int is_ceiling = v->kind == LAB_CEIL_READ || v->kind == LAB_CEIL_COPY;
        if (is_ceiling && row->seconds > 0) {
            double median, best;
            char why[LAB_WHY];
            if (!time_variant(be, v, bstate, row->n, scan_out, row->seconds, 3 * min_time, &median, &best, why) &&
                best < row->seconds) {
                row->seconds = best;
                row->median_seconds = median;
            }
        }
        double moved = (double)row->n * sizeof(float) * (family_of(v->kind) == LAB_SCAN ? 2 : 1);
        row->gbps = row->seconds > 0 ? moved / row->seconds / 1e9 : 0;
        int fam = family_of(v->kind) == LAB_SCAN;
        if (is_ceiling && row->gbps > ceiling[fam]) ceiling[fam] = row->gbps;
    }
    for (size_t r = 0; r < count; ++r) {
        int fam = family_of(rows[r].variant->kind) == LAB_SCAN;
        if (rows[r].seconds > 0 && ceiling[fam] > 0) rows[r].pct_ceiling = 100.0 * rows[r].gbps / ceiling[fam];
    }
}

/* ---- output ------------------------------------------------------------------------------- */
static const char *fmt_time(double s, char *buf, size_t size)
{
    if (s < 0) snprintf(buf, size, "-");
    else if (s < 1e-6) snprintf(buf, size, "%.1f ns", s * 1e9);
    else if (s < 1e-3) snprintf(buf, size, "%.2f us", s * 1e6);
    else if (s < 1) snprintf(buf, size, "%.2f ms", s * 1e3);
    else snprintf(buf, size, "%.3f s", s);
    return buf;
}

static const char *fmt_rate(double r, char *buf, size_t size)
{
    if (!(r > 0)) snprintf(buf, size, "-");
    else if (r >= 1e9) snprintf(buf, size, "%.2f G/s", r / 1e9);
    else if (r >= 1e6) snprintf(buf, size, "%.2f M/s", r / 1e6);
    else snprintf(buf, size, "%.2f K/s", r / 1e3);
    return buf;
}

static void print_table(FILE *f, const lab_report *rep)
{
    fprintf(f, "tally bench: f32 %s data (seed %llu); every variant is checked against an exact "
               "reference before it is timed;\ntimes are the fastest of repeated calls\n", rep->data_name, (unsigned long long)rep->seed);
    for (int b = 0; b < rep->nbackends; ++b) {
        fprintf(f, "\n%s: %s\n", rep->backends[b]->name, rep->descriptions[b]);
        for (int fam = LAB_REDUCE; fam <= LAB_SCAN; fam += LAB_SCAN - LAB_REDUCE) {
            int header = 0;
            uint64_t last_n = UINT64_MAX;
            for (size_t r = 0; r < rep->nrows; ++r) {
                const lab_row *row = &rep->rows[r];
                if (row->backend != rep->backends[b] || family_of(row->variant->kind) != fam) continue;
                if (!header) {
                    fprintf(f, "\n%-24s %14s %11s %12s %9s %7s  %-15s %s\n",
                            fam == LAB_SCAN ? "scan (inclusive)" : "reduce (sum)", "size", "time",
                            "elements/s", "GB/s", "% ceil", "check", "err/sum|x|");
                    header = 1;
                }
                if (row->n != last_n && last_n != UINT64_MAX) fputc('\n', f);
                last_n = row->n;
                char nb[32], tb[32], rb[32], gb[32], pb[32], eb[32];
                double rate = row->seconds > 0 ? (double)row->n / row->seconds : 0;
                snprintf(gb, sizeof gb, row->seconds > 0 ? "%.2f" : "-", row->gbps);
                snprintf(pb, sizeof pb, row->pct_ceiling >= 0 ? "%.1f" : "-", row->pct_ceiling);
                if (isnan(row->error)) snprintf(eb, sizeof eb, "-");
                else snprintf(eb, sizeof eb, "%.2e", row->error);
                fprintf(f, "  %-22s %14s %11s %12s %9s %7s  %-15s %s%s%s\n", row->variant->name,
                        lab_commas(row->n, nb, sizeof nb), fmt_time(row->seconds, tb, sizeof tb),
                        fmt_rate(rate, rb, sizeof rb), gb, pb, lab_verdict_name(row->verdict), eb,
                        row->note[0] ? "  " : "", row->note);
            }
        }
    }
    fprintf(f, "\n%% ceil: GB/s against the better of the one-core and all-core ceilings at the same size.\n"
               "check: exact variants must equal the correctly rounded sum bit for bit; the others must be\n"
               "within the worst-case error bound of their algorithm (\"no bound\": the algorithm guarantees\n"
               "nothing at that size, as an f32 running total past 2^24 elements); the deliberately incorrect\n"
               "variant of each backend (off-by-one, broken-tree, vk-broken-tree) must be caught.\n");
    if (rep->load[0]) fprintf(f, "%s.\n", rep->load);
}

static void json_num(FILE *f, double v)
{
    if (isnan(v) || isinf(v)) fputs("null", f);
    else fprintf(f, "%.9g", v);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void print_json(FILE *f, const lab_report *rep, int ok)
{
    fprintf(f, "{\n  \"tool\": \"tally bench\",\n  \"tally_version\": ");
    json_str(f, tally_version());
    fprintf(f, ",\n  \"date\": ");
    json_str(f, rep->date);
    fprintf(f, ",\n  \"command\": ");
    json_str(f, rep->command);
    fprintf(f, ",\n  \"load\": ");
    json_str(f, rep->load);
    fprintf(f, ",\n  \"element_type\": \"f32\",\n  \"data\": ");
    json_str(f, rep->data_name);
    fprintf(f, ",\n  \"seed\": %llu,\n  \"backends\": [", (unsigned long long)rep->seed);
    for (int b = 0; b < rep->nbackends; ++b) {
        fprintf(f, "%s\n    {\"name\": ", b ? "," : "");
        json_str(f, rep->backends[b]->name);
        fprintf(f, ", \"description\": ");
        json_str(f, rep->descriptions[b]);
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"results\": [");
    for (size_t r = 0; r < rep->nrows; ++r) {
        const lab_row *row = &rep->rows[r];
        fprintf(f, "%s\n    {\"backend\": ", r ? "," : "");
        json_str(f, row->backend->name);
        fprintf(f, ", \"variant\": ");
        json_str(f, row->variant->name);
        fprintf(f, ", \"family\": \"%s\", \"n\": %llu, \"seconds\": ", lab_family_name(row->variant->kind),
                (unsigned long long)row->n);
        json_num(f, row->seconds >= 0 ? row->seconds : NAN);
        fprintf(f, ", \"median_seconds\": ");
        json_num(f, row->seconds >= 0 ? row->median_seconds : NAN);
        fprintf(f, ", \"elements_per_s\": ");
        json_num(f, row->seconds > 0 ? (double)row->n / row->seconds : NAN);
        fprintf(f, ", \"gb_per_s\": ");
        json_num(f, row->seconds > 0 ? row->gbps : NAN);
        fprintf(f, ", \"pct_of_ceiling\": ");
        json_num(f, row->pct_ceiling >= 0 ? row->pct_ceiling : NAN);
        fprintf(f, ", \"status\": ");
        json_str(f, lab_verdict_name(row->verdict));
        fprintf(f, ", \"deliberately_incorrect\": %s, \"error\": ", row->variant->expect_wrong ? "true" : "false");
        json_num(f, row->error);
        fprintf(f, ", \"note\": ");
        json_str(f, row->note);
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"ok\": %s\n}\n", ok ? "true" : "false");
}

static void print_csv(FILE *f, const lab_report *rep)
{
    fprintf(f, "backend,variant,family,n,seconds,median_seconds,elements_per_s,gb_per_s,pct_of_ceiling,status,error\n");
    for (size_t r = 0; r < rep->nrows; ++r) {
        const lab_row *row = &rep->rows[r];
        fprintf(f, "%s,%s,%s,%llu,", row->backend->name, row->variant->name,
                lab_family_name(row->variant->kind), (unsigned long long)row->n);
        if (row->seconds >= 0)
            fprintf(f, "%.9g,%.9g,%.9g,%.6g,", row->seconds, row->median_seconds,
                    row->seconds > 0 ? (double)row->n / row->seconds : 0, row->gbps);
        else
            fputs(",,,,", f);
        if (row->pct_ceiling >= 0) fprintf(f, "%.2f", row->pct_ceiling);
        fprintf(f, ",%s,", lab_verdict_name(row->verdict));
        if (!isnan(row->error)) fprintf(f, "%.3g", row->error);
        fputc('\n', f);
    }
}

/* ---- options ------------------------------------------------------------------------------- */
static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "tally bench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(tally bench --help lists the options)\n");
    return 2;
}

static int parse_sizes(const char *list, bench_opts *o)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    o->nsizes = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (o->nsizes == 64 || lab_parse_size(tok, &o->sizes[o->nsizes])) return -1;
        o->nsizes++;
    }
    return o->nsizes ? 0 : -1;
}

static int parse_args(int argc, char **argv, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->family = -1;
    o->seed = 1;
    o->min_time = 0.1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE() do { if (!val) return bad_usage("%s needs a value", a); ++i; } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(bench_usage, stdout); return -1; }
        else if (!strcmp(a, "--sizes")) { NEED_VALUE(); if (parse_sizes(val, o)) return bad_usage("bad --sizes list '%s'", val); }
        else if (!strcmp(a, "--full")) o->full = 1;
        else if (!strcmp(a, "--max-size")) { NEED_VALUE(); if (lab_parse_size(val, &o->max_size)) return bad_usage("bad --max-size '%s'", val); }
        else if (!strcmp(a, "--family")) {
            NEED_VALUE();
            if (!strcmp(val, "reduce")) o->family = LAB_REDUCE;
            else if (!strcmp(val, "scan")) o->family = LAB_SCAN;
            else if (!strcmp(val, "all")) o->family = -1;
            else return bad_usage("--family is reduce, scan or all, not '%s'", val);
        }
        else if (!strcmp(a, "--variants")) { NEED_VALUE(); snprintf(o->variants, sizeof o->variants, "%s", val); }
        else if (!strcmp(a, "--backend")) {
            NEED_VALUE();
            if (strcmp(val, "cpu") && strcmp(val, "cuda") && strcmp(val, "vulkan") && strcmp(val, "all"))
                return bad_usage("--backend is cpu, cuda, vulkan or all, not '%s'", val);
            o->backend = val;
        }
        else if (!strcmp(a, "--threads")) {
            NEED_VALUE();
            char *end;
            long t = strtol(val, &end, 10);
            if (*end || t < 0 || t > 256) return bad_usage("bad --threads '%s' (0 .. 256)", val);
            o->threads = (int)t;
        }
        else if (!strcmp(a, "--data")) {
            NEED_VALUE();
            if (!strcmp(val, "prices")) o->data = LAB_DATA_PRICES;
            else if (!strcmp(val, "signed")) o->data = LAB_DATA_SIGNED;
            else return bad_usage("--data is prices or signed, not '%s'", val);
        }
        else if (!strcmp(a, "--seed")) {
            NEED_VALUE();
            char *end;
            o->seed = strtoull(val, &end, 10);
            if (*end || !*val) return bad_usage("bad --seed '%s'", val);
        }
        else if (!strcmp(a, "--min-time")) {
            NEED_VALUE();
            char *end;
            o->min_time = strtod(val, &end);
            if (*end || !(o->min_time >= 0 && o->min_time <= 60)) return bad_usage("bad --min-time '%s'", val);
        }
        else if (!strcmp(a, "--validate-only")) o->validate_only = 1;
        else if (!strcmp(a, "--strict")) o->strict = 1;
        else if (!strcmp(a, "--json")) o->json = 1;
        else if (!strcmp(a, "--csv")) o->csv = 1;
        else if (!strcmp(a, "--html")) { NEED_VALUE(); o->html = val; }
        else if (!strcmp(a, "--list")) o->list = 1;
        else return bad_usage("unknown option '%s'", a);
#undef NEED_VALUE
    }
    if (o->json && o->csv) return bad_usage("%s", "--json and --csv go to stdout: pick one");
    if (!o->nsizes) {
        if (o->full) {
            for (int k = 10; k <= 30; ++k) o->sizes[o->nsizes++] = UINT64_C(1) << k;
        } else {
            static const int def[] = { 12, 16, 20, 24 };
            for (int k = 0; k < 4; ++k) o->sizes[o->nsizes++] = UINT64_C(1) << def[k];
        }
    }
    return 0;
}

static uint64_t memory_cap(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return UINT64_MAX;
    /* input + output + a power-of-two scratch buffer: ~12 bytes an element; use half of RAM. */
    return (uint64_t)pages * (uint64_t)page / 2 / 12;
}

static void read_loadavg(char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return;
    double a = 0, b = 0, c = 0;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, size, "%.2f %.2f %.2f", a, b, c);
    fclose(f);
}

static void join_command(int argc, char **argv, char *buf, size_t size)
{
    size_t o = (size_t)snprintf(buf, size, "tally");
    for (int i = 0; i < argc && o + 2 < size; ++i)
        o += (size_t)snprintf(buf + o, size - o, " %s", argv[i]);
}

int tally_lab_bench_main(int argc, char **argv)
{
    bench_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc > 0) return rc;
    if (rc < 0) return 0; /* --help */

    if (o.list) {
        for (size_t b = 0; b < NUM_BACKENDS; ++b)
            for (size_t k = 0; k < all_backends[b]->count; ++k) {
                const lab_variant *v = &all_backends[b]->variants[k];
                printf("%-5s %-8s %-22s %s\n", all_backends[b]->name, lab_family_name(v->kind), v->name, v->about);
            }
        return 0;
    }

    char command[1024];
    join_command(argc, argv, command, sizeof command);
    lab_report rep;
    memset(&rep, 0, sizeof rep);
    rep.command = command;
    rep.data_name = o.data == LAB_DATA_PRICES ? "prices" : "signed";
    rep.seed = o.seed;
    time_t t = time(NULL);
    struct tm tmv;
    gmtime_r(&t, &tmv);
    strftime(rep.date, sizeof rep.date, "%Y-%m-%d %H:%M:%S UTC", &tmv);

    char load_start[32];
    read_loadavg(load_start, sizeof load_start);
    void *states[4] = { 0 };
    for (size_t b = 0; b < NUM_BACKENDS; ++b) {
        const lab_backend *be = all_backends[b];
        int named = o.backend && !strcmp(o.backend, be->name);
        int wanted = named || ((!o.backend || !strcmp(o.backend, "all")) && (!be->in_all || be->in_all()));
        if (!wanted) continue;
        if (!be->available()) {
            if (o.backend && !strcmp(o.backend, be->name)) {
                fprintf(stderr, "tally bench: the %s backend is not available here\n", be->name);
                for (int k = 0; k < rep.nbackends; ++k) rep.backends[k]->close(states[k]);
                return 1;
            }
            continue;
        }
        char why[LAB_WHY] = "";
        if (be->open(&states[rep.nbackends], o.threads, 0, why)) {
            fprintf(stderr, "tally bench: cannot open the %s backend: %s\n", be->name, why);
            continue;
        }
        rep.backends[rep.nbackends] = be;
        snprintf(rep.descriptions[rep.nbackends], sizeof rep.descriptions[0], "%s",
                 be->describe(states[rep.nbackends]));
        rep.nbackends++;
    }
    if (!rep.nbackends) {
        fprintf(stderr, "tally bench: no backend to run (asked for '%s')\n", o.backend ? o.backend : "all");
        return 1;
    }

    size_t cap_rows = 0;
    for (int b = 0; b < rep.nbackends; ++b) cap_rows += rep.backends[b]->count * (size_t)o.nsizes;
    rep.rows = calloc(cap_rows ? cap_rows : 1, sizeof *rep.rows);
    if (!rep.rows) {
        fprintf(stderr, "tally bench: out of memory\n");
        for (int k = 0; k < rep.nbackends; ++k) rep.backends[k]->close(states[k]);
        return 1;
    }

    uint64_t cap = memory_cap();
    int progress = isatty(2);
    int ok = 1;
    for (int si = 0; si < o.nsizes; ++si) {
        uint64_t n = o.sizes[si];
        if ((o.max_size && n > o.max_size) || n > cap) {
            fprintf(stderr, "tally bench: skipping n = %llu (over %s)\n", (unsigned long long)n,
                    n > cap ? "half the memory" : "--max-size");
            continue;
        }
        size_t bytes = (size_t)((n ? n : 1) * sizeof(float) + 63) & ~(size_t)63;
        float *in = aligned_alloc(64, bytes), *out = aligned_alloc(64, bytes);
        if (!in || !out) {
            free(in); free(out);
            fprintf(stderr, "tally bench: out of memory for n = %llu\n", (unsigned long long)n);
            ok = 0;
            continue;
        }
        lab_fill(in, n, o.data, o.seed + n);
        memset(out, 0, n * sizeof(float));
        lab_reference ref;
        lab_reference_compute(in, n, &ref);

        for (int b = 0; b < rep.nbackends; ++b) {
            const lab_backend *be = rep.backends[b];
            char why[LAB_WHY] = "";
            if (be->load(states[b], in, n, why)) {
                fprintf(stderr, "tally bench: %s: cannot load n = %llu: %s\n", be->name, (unsigned long long)n, why);
                ok = 0;
                continue;
            }
            size_t first_row = rep.nrows;
            for (size_t k = 0; k < be->count; ++k) {
                const lab_variant *v = &be->variants[k];
                if (!selected(&o, v)) continue;
                lab_row *row = &rep.rows[rep.nrows++];
                row->backend = be;
                row->variant = v;
                row->n = n;
                row->seconds = -1;
                row->pct_ceiling = -1;
                row->error = NAN;
                if (progress) fprintf(stderr, "\r%-60s\r  %s %s n=%llu ...", "", be->name, v->name, (unsigned long long)n);
                if (v->max_n && n > v->max_n) {
                    row->verdict = LAB_SKIPPED;
                    snprintf(row->note, sizeof row->note, "over %llu elements (too slow)", (unsigned long long)v->max_n);
                    continue;
                }
                int is_ceiling = v->kind == LAB_CEIL_READ || v->kind == LAB_CEIL_COPY;
                double res[3] = { NAN, NAN, NAN };
                if (v->kind == LAB_SCAN) memset(out, 0xFF, n * sizeof(float)); /* NaN: no stale answers */
                double t0 = now_s();
                if (v->fn(states[b], n, 1, res, out, row->note)) {
                    row->verdict = LAB_FAILED;
                    ok = 0;
                    continue;
                }
                double first = now_s() - t0;
                if (is_ceiling) row->verdict = LAB_CEILING;
                else if (v->kind == LAB_SCAN) row->verdict = check_scan(v, in, out, n, &row->error, row->note);
                else row->verdict = check_reduce(v, &ref, n, res, &row->error, row->note);
                if (row->verdict == LAB_WRONG || row->verdict == LAB_NOT_CAUGHT) ok = 0;
                if (o.strict && row->verdict == LAB_WRONG_EXPECTED) ok = 0;
                if (o.validate_only || n == 0) continue;
                /* Ceilings get longer, so a busy moment does not lower the bar. */
                if (time_variant(be, v, states[b], n, out, first, is_ceiling ? 3 * o.min_time : o.min_time,
                                 &row->median_seconds, &row->seconds, row->note)) {
                    row->verdict = LAB_FAILED;
                    ok = 0;
                    continue;
                }
            }
            if (!o.validate_only && n > 0)
                finish_size(be, &rep.rows[first_row], rep.nrows - first_row, states[b], out, o.min_time);
        }
        free(in);
        free(out);
    }
    if (progress) fprintf(stderr, "\r%-60s\r", "");
    char load_end[32];
    read_loadavg(load_end, sizeof load_end);
    if (load_start[0])
        snprintf(rep.load, sizeof rep.load, "load average %s at the start, %s at the end", load_start, load_end);

    if (o.json) print_json(stdout, &rep, ok);
    else if (o.csv) print_csv(stdout, &rep);
    else print_table(stdout, &rep);
    fflush(stdout);

    if (o.html) {
        char why[LAB_WHY] = "";
        if (lab_write_html(o.html, &rep, why)) {
            fprintf(stderr, "tally bench: cannot write %s: %s\n", o.html, why);
            ok = 0;
        }
    }
    for (int b = 0; b < rep.nbackends; ++b) rep.backends[b]->close(states[b]);
    free(rep.rows);
    return ok ? 0 : 1;
}
