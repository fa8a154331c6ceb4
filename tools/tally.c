/* tally: exact summaries and scans of numeric files.
 *
 *   tally [options] OPS [FILE]          reductions (sum,min,max,...) per field
 *   tally scan OP [options] [FILE] -o OUT
 *   tally info | demo | --help | --version
 *
 * Exit status: 0 success, 1 bad data (not a number, malformed .npy, overflow, empty input for
 * min/max/mean...), 2 usage errors. See docs/cli.md. */
#define _GNU_SOURCE 1
#include "cli.h"
#ifdef TALLY_HAVE_LAB
#include "lab.h"
#endif
#include "tally_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- messages ------------------------------------------------------------------------------- */
void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("tally: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* A reader's error: a bad value (run == 1) is printed as the issue spells it, located like a
 * compiler's message ("data.csv:3:2: 'x' is not a number"); I/O errors get the "tally: " prefix. */
static void cli_data_error(int run, const char *err)
{
    if (run == 1) fprintf(stderr, "%s\n", err);
    else cli_error("%s", err);
}

static double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- progress: only on a terminal, only after a second --------------------------------------- */
typedef struct cli_progress {
    int enabled;
    int shown;
    double t0, last;
    uint64_t total;            /* 0: unknown (a pipe) */
    const char *name;
} cli_progress;

static cli_progress g_progress;

static void cli_human(double bytes, char *buf, size_t len)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) { bytes /= 1024; u++; }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

static void cli_progress_start(const cli_opts *o, const char *name, uint64_t total)
{
    g_progress.enabled = o->progress == 1 || (o->progress == -1 && isatty(2));
    g_progress.shown = 0;
    g_progress.t0 = g_progress.last = cli_now();
    g_progress.total = total;
    g_progress.name = name;
}

static void cli_progress_update(uint64_t done)
{
    if (!g_progress.enabled) return;
    double t = cli_now();
    if (t - g_progress.t0 < 1.0 || t - g_progress.last < 0.25) return;
    g_progress.last = t;
    char a[32], b[32], r[32];
    cli_human((double)done, a, sizeof a);
    cli_human((double)done / (t - g_progress.t0), r, sizeof r);
    if (g_progress.total) {
        cli_human((double)g_progress.total, b, sizeof b);
        fprintf(stderr, "\r\033[Ktally: %s: %s of %s (%.0f%%), %s/s", g_progress.name, a, b,
                100.0 * (double)done / (double)g_progress.total, r);
    } else {
        fprintf(stderr, "\r\033[Ktally: %s: %s, %s/s", g_progress.name, a, r);
    }
    g_progress.shown = 1;
}

static void cli_progress_end(void)
{
    if (g_progress.shown) fputs("\r\033[K", stderr);
    g_progress.shown = 0;
    g_progress.enabled = 0;
}

/* ---- values and output ---------------------------------------------------------------------- */
enum { V_NONE, V_I64, V_U64, V_F64, V_F32 };

typedef struct cli_value {
    tally_status status;
    int kind;
    int64_t i;
    uint64_t u;
    double d;
} cli_value;

typedef struct cli_field {
    char name[128];
    int file_field;            /* 1-based field / column number */
    cli_value v[CLI_MAX_OPS];
} cli_field;

static void cli_value_text(const cli_value *v, char *buf, size_t len)
{
    switch (v->kind) {
    case V_I64: snprintf(buf, len, "%lld", (long long)v->i); break;
    case V_U64: snprintf(buf, len, "%llu", (unsigned long long)v->u); break;
    case V_F64: tio_format_double(v->d, buf); break;
    case V_F32: tio_format_float((float)v->d, buf); break;
    default: snprintf(buf, len, "-"); break;
    }
}

static void cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void cli_print(const cli_opts *o, const cli_field *fields, int nf)
{
    char buf[64];
    if (o->json) {
        fputc('[', stdout);
        for (int f = 0; f < nf; f++) {
            fputs(f ? ",\n {" : "{", stdout);
            fputs("\"field\": ", stdout);
            cli_json_string(stdout, fields[f].name);
            for (int k = 0; k < o->nops; k++) {
                const cli_value *v = &fields[f].v[k];
                fprintf(stdout, ", \"%s\": ", o->op_names[k]);
                if (v->status != TALLY_OK || v->kind == V_NONE) { fputs("null", stdout); continue; }
                cli_value_text(v, buf, sizeof buf);
                if ((v->kind == V_F64 || v->kind == V_F32) && !isfinite(v->d))
                    fprintf(stdout, "\"%s\"", buf);
                else
                    fputs(buf, stdout);
            }
            fputc('}', stdout);
        }
        fputs("]\n", stdout);
        return;
    }
    if (nf == 1 && o->nops == 1) {
        if (fields[0].v[0].status == TALLY_OK) {
            cli_value_text(&fields[0].v[0], buf, sizeof buf);
            printf("%s\n", buf);
        }
        return;
    }
    /* a table: one row per field, one column per op */
    int w0 = 5;
    for (int f = 0; f < nf; f++) {
        int l = (int)strlen(fields[f].name);
        if (l > w0) w0 = l;
    }
    int w[CLI_MAX_OPS];
    for (int k = 0; k < o->nops; k++) {
        w[k] = (int)strlen(o->op_names[k]);
        for (int f = 0; f < nf; f++) {
            const cli_value *v = &fields[f].v[k];
            if (v->status != TALLY_OK) snprintf(buf, sizeof buf, "-");
            else cli_value_text(v, buf, sizeof buf);
            if ((int)strlen(buf) > w[k]) w[k] = (int)strlen(buf);
        }
    }
    printf("%-*s", w0, "field");
    for (int k = 0; k < o->nops; k++) printf("  %*s", w[k], o->op_names[k]);
    putchar('\n');
    for (int f = 0; f < nf; f++) {
        printf("%-*s", w0, fields[f].name);
        for (int k = 0; k < o->nops; k++) {
            const cli_value *v = &fields[f].v[k];
            if (v->status != TALLY_OK) snprintf(buf, sizeof buf, "-");
            else cli_value_text(v, buf, sizeof buf);
            printf("  %*s", w[k], buf);
        }
        putchar('\n');
    }
}

/* Messages for the results that failed; returns 1 if any did. */
static int cli_report_failures(const cli_opts *o, const char *file, const cli_field *fields,
                               int nf)
{
    int bad = 0;
    for (int f = 0; f < nf; f++) {
        for (int k = 0; k < o->nops; k++) {
            const cli_value *v = &fields[f].v[k];
            if (v->status == TALLY_OK) continue;
            bad = 1;
            char where[300];
            if (nf > 1) snprintf(where, sizeof where, "%s: field %s", file, fields[f].name);
            else snprintf(where, sizeof where, "%s", file);
            const char *op = o->op_names[k];
            switch (v->status) {
            case TALLY_ERR_EMPTY:
                cli_error("%s: %s of an empty input (no values)", where, op);
                break;
            case TALLY_ERR_OVERFLOW:
                cli_error("%s: %s: integer overflow: the exact result does not fit in 64 bits",
                          where, op);
                break;
            case TALLY_ERR_DOMAIN:
                cli_error("%s: %s needs at least 2 values", where, op);
                break;
            case TALLY_ERR_UNSUPPORTED:
                cli_error("%s: %s needs integer values", where, op);
                break;
            default:
                cli_error("%s: %s: %s", where, op, tally_status_string(v->status));
                break;
            }
        }
    }
    return bad;
}

/* ---- ops -> library calls ------------------------------------------------------------------- */
/* Group 0 holds every library op with ddof 0; group 1 only TALLY_VAR with ddof 1 (svar, sstd). */
typedef struct cli_plan {
    tally_op ops[2][16];
    int n[2];
    int group[CLI_MAX_OPS], index[CLI_MAX_OPS];
    int sum_index, count_index;     /* in group 0, always there */
} cli_plan;

static void cli_make_plan(const cli_opts *o, cli_plan *p)
{
    memset(p, 0, sizeof *p);
    for (int k = 0; k < o->nops; k++) {
        cli_op op = o->ops[k];
        int g = op == CLI_OP_SVAR || op == CLI_OP_SSTD;
        tally_op lop = cli_op_library(op);
        int idx = -1;
        for (int j = 0; j < p->n[g]; j++)
            if (p->ops[g][j] == lop) idx = j;
        if (idx < 0) {
            idx = p->n[g]++;
            p->ops[g][idx] = lop;
        }
        p->group[k] = g;
        p->index[k] = idx;
    }
    /* sum and count ride along: a decimal column's mean is its exact sum / count */
    p->sum_index = p->count_index = -1;
    for (int j = 0; j < p->n[0]; j++) {
        if (p->ops[0][j] == TALLY_SUM) p->sum_index = j;
        if (p->ops[0][j] == TALLY_COUNT) p->count_index = j;
    }
    if (p->sum_index < 0) { p->sum_index = p->n[0]; p->ops[0][p->n[0]++] = TALLY_SUM; }
    if (p->count_index < 0) { p->count_index = p->n[0]; p->ops[0][p->n[0]++] = TALLY_COUNT; }
}

static int cli_has_bitwise(const cli_opts *o)
{
    for (int k = 0; k < o->nops; k++)
        if (o->ops[k] == CLI_OP_AND || o->ops[k] == CLI_OP_OR || o->ops[k] == CLI_OP_XOR) return 1;
    return 0;
}

/* scale > 0: the results are of integers v standing for v / 10^scale (a decimal column). */
static void cli_fill_values(const cli_opts *o, const cli_plan *p, tally_result res[2][16],
                            tally_type input, int scale, cli_value *out)
{
    for (int k = 0; k < o->nops; k++) {
        const tally_result *r = &res[p->group[k]][p->index[k]];
        cli_value *v = &out[k];
        memset(v, 0, sizeof *v);
        v->status = r->status;
        if (r->status != TALLY_OK) continue;
        cli_op op = o->ops[k];
        if (op == CLI_OP_ARGMIN || op == CLI_OP_ARGMAX) {
            v->kind = V_U64;
            v->u = r->index;
            continue;
        }
        if (op == CLI_OP_COUNT) {
            v->kind = V_U64;
            v->u = r->type == TALLY_U64 ? r->value.u64 : r->type == TALLY_I64 ? (uint64_t)r->value.i64
                                                                              : (uint64_t)r->value.f64;
            continue;
        }
        switch (r->type) {
        case TALLY_I64: v->kind = V_I64; v->i = r->value.i64; break;
        case TALLY_U64: v->kind = V_U64; v->u = r->value.u64; break;
        default: v->kind = V_F64; v->d = r->value.f64; break;
        }
        if (scale > 0) {
            if (op == CLI_OP_SUM || op == CLI_OP_MIN || op == CLI_OP_MAX) {
                v->kind = V_F64;
                v->d = tio_decimal_to_double(r->value.i64, scale);
            } else if (op == CLI_OP_MEAN) {
                const tally_result *rs = &res[0][p->sum_index], *rc = &res[0][p->count_index];
                v->status = rs->status;
                v->d = tio_decimal_to_double(rs->value.i64, scale) / (double)rc->value.u64;
            } else if (op == CLI_OP_VAR || op == CLI_OP_SVAR || op == CLI_OP_STD ||
                       op == CLI_OP_SSTD) {
                double f = 1;
                for (int k = 0; k < scale; k++) f *= 10;
                v->d = v->d / (f * f);
            }
        }
        if (op == CLI_OP_STD || op == CLI_OP_SSTD) v->d = sqrt(v->d);
        if ((op == CLI_OP_MIN || op == CLI_OP_MAX) && input == TALLY_F32) v->kind = V_F32;
    }
}

/* ---- context -------------------------------------------------------------------------------- */
tally_context *cli_context(const cli_opts *o, tally_backend_kind kind, int device)
{
    tally_options to;
    tally_options_init(&to);
    to.backend = kind;
    to.threads = o->threads;
    to.device = device;
    tally_context *ctx = NULL;
    tally_status s = tally_create(&ctx, &to);
    if (s != TALLY_OK) {
        const char *d = tally_create_error();
        cli_error("cannot use backend %s: %s", tally_backend_name(kind),
                  d && *d ? d : tally_status_string(s));
        return NULL;
    }
    return ctx;
}

/* ---- field selection ------------------------------------------------------------------------ */
/* Resolves -f against nfields (0: unknown) and names (NULL without header). 0-based indexes
 * into sel; returns the count, or -1 after a usage message. */
static int cli_select_fields(const cli_opts *o, int nfields, const char *const *names, int *sel,
                             int maxsel)
{
    int n = 0;
    if (!o->fields) {
        int k = nfields > 0 ? nfields : 1;
        if (k > maxsel) {
            cli_error("the input has %d fields: pick at most %d with -f", nfields, maxsel);
            return -1;
        }
        for (int i = 0; i < k; i++) sel[n++] = i;
        return n;
    }
    const char *p = o->fields;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[256];
        if (len == 0 || len >= sizeof item) {
            cli_error("bad field list '%s'", o->fields);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        char *dash = strchr(item, '-');
        char *end;
        long a = strtol(item, &end, 10), b;
        int numeric = end != item && (*end == '\0' || (end == dash && dash[1]));
        if (numeric && dash) {
            b = strtol(dash + 1, &end, 10);
            numeric = *end == '\0';
        } else {
            b = a;
        }
        if (numeric) {
            if (a < 1 || b < a || b > 1000000) {
                cli_error("bad field number '%s' (fields count from 1)", item);
                return -1;
            }
            if (nfields > 0 && b > nfields) {
                cli_error("field %ld: the input has only %d field%s", b, nfields,
                          nfields == 1 ? "" : "s");
                return -1;
            }
            for (long f = a; f <= b; f++) {
                if (n == maxsel) { cli_error("too many fields"); return -1; }
                sel[n++] = (int)(f - 1);
            }
        } else {
            int found = -1;
            for (int i = 0; names && i < nfields; i++)
                if (names[i] && strcmp(names[i], item) == 0) { found = i; break; }
            if (found < 0) {
                if (!names && o->header && nfields == 0) {
                    cli_error("field '%s': the input is empty (no header line)", item);
                    return -2;
                }
                if (!names) cli_error("field '%s' is a name: names need -H/--header", item);
                else cli_error("no field named '%s'", item);
                return -1;
            }
            if (n == maxsel) { cli_error("too many fields"); return -1; }
            sel[n++] = found;
        }
        if (!comma) break;
        p = comma + 1;
    }
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (sel[a] == sel[b]) {
                cli_error("field %d is given twice in '%s'", sel[a] + 1, o->fields);
                return -1;
            }
    return n;
}

/* ---- text reductions: one stream per field, int64 until a non-integer shows up ---------------- */
/* A pipe's integer/decimal values are kept (to replay them if the field changes form): in memory
 * up to CLI_SPOOL_MEM bytes over all fields (at least 8 MiB per field), then in a temp file. */
#define CLI_SPOOL_MEM ((size_t)256 << 20)
static int g_spool_fields = 1;

typedef struct cli_acc {
    int float_mode;
    int scale;                 /* int64 mode: the values are v / 10^scale (0: integers) */
    tally_stream *s[2];
    int64_t *spool;            /* the int64 values so far, in case the field turns float */
    size_t spool_n, spool_cap;
    FILE *spill;
    uint64_t spilled;
} cli_acc;

typedef struct cli_text_job {
    const cli_opts *o;
    tally_context *ctx;
    cli_plan plan;
    tally_reduce_options ropts[2];
    cli_acc *acc;
    int nsel;
    const char *file;
    cli_field *fields;
    double *conv;
    size_t conv_cap;
    uint64_t invalid;
    int failed;                /* an error already reported */
    int no_decimals;           /* prod asked: decimals are summed as doubles */
    tio_input *in;
    tio_text_reader *reader;
    tio_text_options topts;
    const int *file_fields;    /* 0-based file field of each selected field */
    /* scan */
    int scan;
    uint64_t *col;
    size_t col_n, col_cap;
    int col_float;
    int col_scale;             /* int64 column: v / 10^col_scale */
    int scan_decimals;         /* a sum/min/max scan keeps decimals exact */
    uint64_t col_abs;          /* sum of |v|: below 2^63, no prefix sum can overflow */
} cli_text_job;

static int cli_acc_create(cli_text_job *j, cli_acc *a, tally_type type)
{
    for (int g = 0; g < 2; g++) {
        if (!j->plan.n[g]) continue;
        tally_status s = tally_stream_create(j->ctx, type, j->plan.ops[g], (size_t)j->plan.n[g],
                                             &j->ropts[g], &a->s[g]);
        if (s != TALLY_OK) {
            cli_error("%s: %s", j->file, tally_last_error(j->ctx));
            return -1;
        }
    }
    return 0;
}

static int cli_acc_update(cli_text_job *j, cli_acc *a, const void *v, size_t n)
{
    for (int g = 0; g < 2; g++) {
        if (!a->s[g]) continue;
        tally_status s = tally_stream_update(a->s[g], v, n);
        if (s != TALLY_OK) {
            cli_error("%s: %s", j->file, tally_last_error(j->ctx));
            return -1;
        }
    }
    return 0;
}

static double *cli_conv(cli_text_job *j, size_t n)
{
    if (j->conv_cap < n) {
        free(j->conv);
        j->conv = malloc(n * sizeof *j->conv);
        j->conv_cap = j->conv ? n : 0;
    }
    return j->conv;
}

static size_t cli_spool_max(void)
{
    /* tests set TALLY_TEST_SPOOL_VALUES to reach the spill file with small inputs */
    static size_t max = 0;
    if (!max) {
        const char *e = getenv("TALLY_TEST_SPOOL_VALUES");
        size_t per_field = CLI_SPOOL_MEM / (size_t)g_spool_fields;
        if (per_field < ((size_t)8 << 20)) per_field = (size_t)8 << 20;
        max = e && atoll(e) > 0 ? (size_t)atoll(e) : per_field / 8;
    }
    return max;
}

static int cli_spool_add(cli_acc *a, const int64_t *v, size_t n)
{
    if (a->spool_n + n > a->spool_cap && a->spool_n + n <= cli_spool_max()) {
        size_t nc = a->spool_cap ? a->spool_cap : 65536;
        while (nc < a->spool_n + n) nc *= 2;
        int64_t *ns = realloc(a->spool, nc * 8);
        if (!ns) return -1;
        a->spool = ns;
        a->spool_cap = nc;
    }
    if (a->spool_n + n <= a->spool_cap) {
        memcpy(a->spool + a->spool_n, v, n * 8);
        a->spool_n += n;
        return 0;
    }
    if (!a->spill) {
        a->spill = tmpfile();
        if (!a->spill) return -1;
    }
    if (fwrite(v, 8, n, a->spill) != n) return -1;
    a->spilled += n;
    return 0;
}

static int cli_rescale(const int64_t *v, size_t n, int k, int64_t *out);

/* ---- replaying a field's values so far, in a new form ----
 * A mapped file is simply read again up to the current block (a second reader with a limit);
 * a pipe's values were kept (the spool). */
typedef struct cli_replay {
    cli_text_job *j;
    cli_acc *a;
    int to_float;
    int scale;                 /* target scale when !to_float */
    int overflow;
} cli_replay;

static int cli_replay_values(void *user, int sel, int is_float, int scale, const void *vals,
                             size_t n)
{
    (void)sel;
    cli_replay *rp = user;
    cli_text_job *j = rp->j;
    if (rp->to_float) {
        const void *v = vals;
        if (!is_float) {
            double *d = cli_conv(j, n);
            if (!d) return 1;
            for (size_t k = 0; k < n; k++) d[k] = tio_decimal_to_double(((const int64_t *)vals)[k], scale);
            v = d;
        }
        return cli_acc_update(j, rp->a, v, n) != 0;
    }
    int64_t *d = (int64_t *)cli_conv(j, n);
    if (is_float || scale > rp->scale || !d || !cli_rescale(vals, n, rp->scale - scale, d)) {
        rp->overflow = 1;
        return 1;
    }
    return cli_acc_update(j, rp->a, d, n) != 0;
}

/* New streams for the field (float, or int64 at new_scale), fed with the values so far read
 * again from the mapped file. 0 ok, 1 a value does not fit the new scale, -1 error. */
static int cli_replay_mapped(cli_text_job *j, cli_acc *a, int sel, int to_float, int new_scale)
{
    for (int g = 0; g < 2; g++) {
        tally_stream_destroy(a->s[g]);
        a->s[g] = NULL;
    }
    if (cli_acc_create(j, a, to_float ? TALLY_F64 : TALLY_I64) != 0) return -1;
    uint64_t limit = tio_text_position(j->reader);
    if (limit == 0) return 0;
    tio_text_options o2 = j->topts;
    o2.limit = limit;
    tio_text_reader *r2;
    char err[512];
    if (tio_text_open(&r2, j->in, &o2, err, sizeof err) != 0) {
        cli_error("%s", err);
        return -1;
    }
    tio_text_select(r2, &j->file_fields[sel], 1);
    cli_replay rp = {j, a, to_float, new_scale, 0};
    tio_text_sink sink = {&rp, cli_replay_values, NULL, NULL};
    int rc = tio_text_run(r2, &sink, err, sizeof err);
    tio_text_close(r2);
    if (rc == 2 && rp.overflow) return 1;
    if (rc != 0) {
        cli_error("%s", rc == 2 ? "reading the input again failed" : err);
        return -1;
    }
    return 0;
}

/* The field's first non-integer: replay its integers as doubles into new float streams. */
static int cli_acc_to_float(cli_text_job *j, cli_acc *a, int sel)
{
    if (cli_has_bitwise(j->o)) {
        cli_error("%s: field %s: and, or and xor need integers, and the field has other numbers",
                  j->file, j->fields[sel].name);
        return -1;
    }
    if (j->in->mapped) {
        if (cli_replay_mapped(j, a, sel, 1, 0) != 0) return -1;
        a->float_mode = 1;
        return 0;
    }
    for (int g = 0; g < 2; g++) {
        tally_stream_destroy(a->s[g]);
        a->s[g] = NULL;
    }
    if (cli_acc_create(j, a, TALLY_F64) != 0) return -1;
    a->float_mode = 1;
    const size_t chunk = 1 << 16;
    double *d = cli_conv(j, chunk);
    if (!d) return -1;
    for (size_t k = 0; k < a->spool_n; k += chunk) {
        size_t m = a->spool_n - k < chunk ? a->spool_n - k : chunk;
        for (size_t t = 0; t < m; t++) d[t] = tio_decimal_to_double(a->spool[k + t], a->scale);
        if (cli_acc_update(j, a, d, m) != 0) return -1;
    }
    if (a->spill) {
        rewind(a->spill);
        int64_t tmp[4096];
        size_t m;
        while ((m = fread(tmp, 8, 4096, a->spill)) > 0) {
            for (size_t t = 0; t < m; t++) d[t] = tio_decimal_to_double(tmp[t], a->scale);
            if (cli_acc_update(j, a, d, m) != 0) return -1;
        }
        fclose(a->spill);
        a->spill = NULL;
    }
    free(a->spool);
    a->spool = NULL;
    a->spool_n = a->spool_cap = 0;
    return 0;
}

static const int64_t cli_pow10_i64[19] = {
    1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000, 10000000000,
    100000000000, 1000000000000, 10000000000000, 100000000000000, 1000000000000000,
    10000000000000000, 100000000000000000, 1000000000000000000};

/* v * 10^k into out[]; 0 if one does not fit int64 */
static int cli_rescale(const int64_t *v, size_t n, int k, int64_t *out)
{
    const int64_t f = cli_pow10_i64[k];
    for (size_t i = 0; i < n; i++) {
        if (v[i] > INT64_MAX / f || v[i] < INT64_MIN / f) return 0;
        out[i] = v[i] * f;
    }
    return 1;
}

/* More decimals than the field had: its integers so far are replayed times 10^up into new
 * streams. 0 when they fit, 1 when they do not (the caller turns the field float), -1 error. */
static int cli_acc_rescale(cli_text_job *j, cli_acc *a, int sel, int new_scale)
{
    if (j->in->mapped) {
        int r = cli_replay_mapped(j, a, sel, 0, new_scale);
        if (r == 0) a->scale = new_scale;
        return r;
    }
    int up = new_scale - a->scale;
    int64_t *tmp = malloc(4096 * sizeof *tmp);
    if (!tmp) return -1;
    /* check first: every value must fit */
    for (size_t k = 0; k < a->spool_n; k += 4096) {
        size_t m = a->spool_n - k < 4096 ? a->spool_n - k : 4096;
        if (!cli_rescale(a->spool + k, m, up, tmp)) { free(tmp); return 1; }
    }
    if (a->spill) {
        rewind(a->spill);
        size_t m;
        int64_t in[4096];
        while ((m = fread(in, 8, 4096, a->spill)) > 0)
            if (!cli_rescale(in, m, up, tmp)) { free(tmp); fseek(a->spill, 0, SEEK_END); return 1; }
    }
    for (int g = 0; g < 2; g++) {
        tally_stream_destroy(a->s[g]);
        a->s[g] = NULL;
    }
    if (cli_acc_create(j, a, TALLY_I64) != 0) { free(tmp); return -1; }
    for (size_t k = 0; k < a->spool_n; k += 4096) {
        size_t m = a->spool_n - k < 4096 ? a->spool_n - k : 4096;
        cli_rescale(a->spool + k, m, up, a->spool + k);
        if (cli_acc_update(j, a, a->spool + k, m) != 0) { free(tmp); return -1; }
    }
    if (a->spill) {
        /* rewrite the spill file scaled */
        FILE *ns = tmpfile();
        if (!ns) { free(tmp); return -1; }
        rewind(a->spill);
        size_t m;
        int64_t in[4096];
        while ((m = fread(in, 8, 4096, a->spill)) > 0) {
            cli_rescale(in, m, up, tmp);
            if (cli_acc_update(j, a, tmp, m) != 0 || fwrite(tmp, 8, m, ns) != m) {
                fclose(ns);
                free(tmp);
                return -1;
            }
        }
        fclose(a->spill);
        a->spill = ns;
    }
    free(tmp);
    a->scale = new_scale;
    return 0;
}

static int cli_text_values(void *user, int sel, int is_float, int scale, const void *vals,
                           size_t n)
{
    cli_text_job *j = user;
    if (j->scan) {                             /* collect the column, as doubles or integers */
        if (j->col_n + n > j->col_cap) {
            size_t nc = j->col_cap ? j->col_cap : 65536;
            while (nc < j->col_n + n) nc *= 2;
            uint64_t *nv = realloc(j->col, nc * 8);
            if (!nv) { cli_error("%s: out of memory", j->file); j->failed = 1; return 1; }
            j->col = nv;
            j->col_cap = nc;
        }
        /* integers and decimals stay exact (int64 at the column's scale) while they fit */
        const int64_t *iv = vals;
        if (!is_float && !j->col_float && j->scan_decimals) {
            if (j->col_n == 0) j->col_scale = scale;
            if (scale > j->col_scale) {
                if (cli_rescale((const int64_t *)j->col, j->col_n, scale - j->col_scale,
                                (int64_t *)j->col))
                    j->col_scale = scale;
                else
                    is_float = 2;
            }
            if (!is_float) {
                if (!cli_rescale(iv, n, j->col_scale - scale, (int64_t *)j->col + j->col_n)) {
                    is_float = 2;
                } else {
                    for (size_t k = 0; k < n; k++) {          /* can a prefix overflow? */
                        int64_t x = ((int64_t *)j->col)[j->col_n + k];
                        uint64_t ax = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
                        j->col_abs = j->col_abs + ax < j->col_abs ? UINT64_MAX : j->col_abs + ax;
                    }
                    /* decimals must not wrap; plain integers wrap as C does (documented) */
                    if (j->col_abs > (uint64_t)INT64_MAX && (j->col_scale > 0 || scale > 0))
                        is_float = 2;
                    else {
                        j->col_n += n;
                        return 0;
                    }
                }
            }
        }
        if (!is_float && !j->col_float && !j->scan_decimals && scale == 0) {
            memcpy(j->col + j->col_n, vals, n * 8);    /* integers (they may wrap, as C does) */
            j->col_n += n;
            return 0;
        }
        if (!j->col_float) {
            for (size_t k = 0; k < j->col_n; k++) {
                double d = tio_decimal_to_double((int64_t)j->col[k], j->col_scale);
                memcpy(&j->col[k], &d, 8);
            }
            j->col_float = 1;
        }
        for (size_t k = 0; k < n; k++) {
            double d = is_float == 1 ? ((const double *)vals)[k] : tio_decimal_to_double(iv[k], scale);
            memcpy(&j->col[j->col_n + k], &d, 8);
        }
        j->col_n += n;
        return 0;
    }
    cli_acc *a = &j->acc[sel];
    if (!is_float && scale > 0 && j->no_decimals) is_float = 2;   /* as doubles, below */
    if (!a->float_mode && !is_float && scale > 0 && cli_has_bitwise(j->o)) is_float = 2;
    if (!a->float_mode && !is_float && scale != a->scale) {
        if (scale > a->scale) {
            int r = j->in->mapped || a->spool_n || a->spill ? cli_acc_rescale(j, a, sel, scale) : 0;
            if (r < 0) { cli_error("%s: out of memory", j->file); j->failed = 1; return 1; }
            if (r == 0) a->scale = scale;
            else is_float = 2;
        }
        if (!is_float && scale < a->scale) {                     /* 1.5 in a cents column */
            int64_t *d = (int64_t *)cli_conv(j, n);
            if (!d) { cli_error("%s: out of memory", j->file); j->failed = 1; return 1; }
            if (cli_rescale(vals, n, a->scale - scale, d)) {
                vals = d;
                scale = a->scale;
            } else {
                is_float = 2;
            }
        }
    }
    if (!a->float_mode && is_float) {
        if (cli_acc_to_float(j, a, sel) != 0) { j->failed = 1; return 1; }
    }
    if (a->float_mode) {
        const void *v = vals;
        if (is_float != 1) {
            double *d = cli_conv(j, n);
            if (!d) { cli_error("%s: out of memory", j->file); j->failed = 1; return 1; }
            for (size_t k = 0; k < n; k++)
                d[k] = tio_decimal_to_double(((const int64_t *)vals)[k], scale);
            v = d;
        }
        if (cli_acc_update(j, a, v, n) != 0) { j->failed = 1; return 1; }
        return 0;
    }
    if (cli_acc_update(j, a, vals, n) != 0 || (!j->in->mapped && cli_spool_add(a, vals, n) != 0)) {
        j->failed = 1;
        return 1;
    }
    return 0;
}

static void cli_text_invalid(void *user, uint64_t line, int field, const char *text, size_t len,
                             int missing)
{
    cli_text_job *j = user;
    j->invalid++;
    if (j->invalid > 10) return;
    if (missing)
        fprintf(stderr, "tally: warning: %s:%llu:%d: missing field (skipped)\n", j->file,
                (unsigned long long)line, field);
    else
        fprintf(stderr, "tally: warning: %s:%llu:%d: '%.*s' is not a number (skipped)\n", j->file,
                (unsigned long long)line, field, (int)(len > 100 ? 100 : len), text);
}

static void cli_text_progress(void *user, uint64_t done)
{
    (void)user;
    cli_progress_update(done);
}

/* Opens the text reader and resolves the fields. Returns the reader or NULL (message printed). */
static tio_text_reader *cli_text_open(const cli_opts *o, tio_input *in, int *sel, int *nsel,
                                      int maxsel, int *status)
{
    tio_text_options to = {0};
    to.delim = o->delim;
    to.whitespace = o->whitespace;
    to.header = o->header;
    to.threads = o->threads;
    to.block_size = o->block_size;
    to.skip_invalid = o->skip_invalid;
    char err[512];
    tio_text_reader *r;
    if (tio_text_open(&r, in, &to, err, sizeof err) != 0) {
        cli_error("%s", err);
        *status = 1;
        return NULL;
    }
    int nf = tio_text_field_count(r);
    const char **names = NULL;
    if (o->header && nf > 0) {
        names = calloc((size_t)nf, sizeof *names);
        for (int i = 0; names && i < nf; i++) names[i] = tio_text_field_name(r, i);
    }
    *nsel = cli_select_fields(o, nf, names, sel, maxsel);
    free(names);
    if (*nsel < 0) {
        tio_text_close(r);
        *status = *nsel == -2 ? 1 : 2;
        return NULL;
    }
    tio_text_select(r, sel, *nsel);
    return r;
}

static void cli_field_name(cli_field *f, const tio_text_reader *r, int idx)
{
    const char *nm = r ? tio_text_field_name(r, idx) : NULL;
    if (nm) snprintf(f->name, sizeof f->name, "%s", nm);
    else snprintf(f->name, sizeof f->name, "%d", idx + 1);
    f->file_field = idx + 1;
}

static int cli_reduce_text(const cli_opts *o, tally_context *ctx, tio_input *in)
{
    static int sel[4096];
    int nsel, status = 0;
    tio_text_reader *r = cli_text_open(o, in, sel, &nsel, 4096, &status);
    if (!r) return status;
    cli_text_job j;
    memset(&j, 0, sizeof j);
    j.o = o;
    j.ctx = ctx;
    j.file = in->name;
    j.nsel = nsel;
    j.in = in;
    j.reader = r;
    g_spool_fields = nsel > 0 ? nsel : 1;
    j.file_fields = sel;
    j.topts.delim = o->delim;
    j.topts.whitespace = o->whitespace;
    j.topts.header = o->header;
    j.topts.threads = o->threads;
    j.topts.block_size = o->block_size;
    j.topts.skip_invalid = o->skip_invalid;
    cli_make_plan(o, &j.plan);
    j.ropts[0].omit_nan = j.ropts[1].omit_nan = o->omit_nan;
    j.ropts[1].ddof = 1;
    for (int k = 0; k < o->nops; k++)
        if (o->ops[k] == CLI_OP_PROD) j.no_decimals = 1;
    j.acc = calloc((size_t)nsel, sizeof *j.acc);
    j.fields = calloc((size_t)nsel, sizeof *j.fields);
    int rc = 1;
    if (!j.acc || !j.fields) { cli_error("out of memory"); goto done; }
    for (int k = 0; k < nsel; k++) {
        cli_field_name(&j.fields[k], r, sel[k]);
        if (cli_acc_create(&j, &j.acc[k], TALLY_I64) != 0) goto done;
    }
    tio_text_sink sink = {&j, cli_text_values, cli_text_invalid, cli_text_progress};
    char err[512];
    cli_progress_start(o, in->name, in->size_known ? in->size : 0);
    int run = tio_text_run(r, &sink, err, sizeof err);
    cli_progress_end();
    if (run != 0) {
        if (!j.failed) cli_data_error(run, err);
        goto done;
    }
    if (j.invalid)
        fprintf(stderr, "tally: warning: %s: skipped %llu invalid value%s\n", in->name,
                (unsigned long long)j.invalid, j.invalid == 1 ? "" : "s");
    for (int k = 0; k < nsel; k++) {
        tally_result res[2][16];
        memset(res, 0, sizeof res);
        for (int g = 0; g < 2; g++)
            if (j.acc[k].s[g]) tally_stream_results(j.acc[k].s[g], res[g]);
        int overflow = 0;
        for (int g = 0; g < 2; g++)
            for (int q = 0; q < j.plan.n[g]; q++) overflow |= res[g][q].status == TALLY_ERR_OVERFLOW;
        if (overflow && !j.acc[k].float_mode && j.acc[k].scale > 0) {
            /* decimals too many or too long for 64-bit scaled sums: the exact sum of their
             * doubles instead (integers that overflow stay an error) */
            if (cli_acc_to_float(&j, &j.acc[k], k) != 0) goto done;
            memset(res, 0, sizeof res);
            for (int g = 0; g < 2; g++)
                if (j.acc[k].s[g]) tally_stream_results(j.acc[k].s[g], res[g]);
        }
        cli_fill_values(o, &j.plan, res, j.acc[k].float_mode ? TALLY_F64 : TALLY_I64,
                        j.acc[k].float_mode ? 0 : j.acc[k].scale, j.fields[k].v);
    }
    cli_print(o, j.fields, nsel);
    rc = cli_report_failures(o, in->name, j.fields, nsel);
done:
    for (int k = 0; j.acc && k < nsel; k++) {
        tally_stream_destroy(j.acc[k].s[0]);
        tally_stream_destroy(j.acc[k].s[1]);
        free(j.acc[k].spool);
        if (j.acc[k].spill) fclose(j.acc[k].spill);
    }
    free(j.acc);
    free(j.fields);
    free(j.conv);
    tio_text_close(r);
    return rc;
}

/* ---- binary input (.npy, raw) --------------------------------------------------------------- */
typedef struct cli_array {
    const uint8_t *data;       /* first element */
    uint64_t n;                /* elements per column */
    int ncols;
    int fortran;               /* 1: columns are contiguous */
    tally_type type;
    size_t elsize;
    int swap;
    uint8_t *owned;            /* a buffer we read (pipe input) */
} cli_array;

static void cli_swap(void *dst, const void *src, uint64_t n, size_t elsize)
{
    if (elsize == 2) {
        const uint16_t *s = src; uint16_t *d = dst;
        for (uint64_t i = 0; i < n; i++) d[i] = __builtin_bswap16(s[i]);
    } else if (elsize == 4) {
        const uint32_t *s = src; uint32_t *d = dst;
        for (uint64_t i = 0; i < n; i++) d[i] = __builtin_bswap32(s[i]);
    } else if (elsize == 8) {
        const uint64_t *s = src; uint64_t *d = dst;
        for (uint64_t i = 0; i < n; i++) d[i] = __builtin_bswap64(s[i]);
    } else if (dst != src) {
        memmove(dst, src, n * elsize);
    }
}

/* Loads the binary input. 0, or an exit status after a message. */
static int cli_open_binary(const cli_opts *o, tio_input *in, cli_array *a)
{
    memset(a, 0, sizeof *a);
    const uint8_t *base;
    size_t len;
    if (in->mapped) {
        base = in->data;
        len = (size_t)in->size;
    } else {
        if (tio_input_read_all(in, &a->owned, &len) != 0) {
            cli_error("%s: %s", in->name, strerror(errno));
            return 1;
        }
        base = a->owned;
    }
    if (o->dtype) {
        int is_bool;
        if (tio_parse_dtype(o->dtype, &a->type, &a->swap, &is_bool) != 0) {
            cli_error("unknown --dtype '%s' (i8 u8 i16 u16 i32 u32 i64 u64 f32 f64, or numpy's "
                      "<f8 >i4 ...)", o->dtype);
            return 2;
        }
        a->elsize = tally_type_size(a->type);
        if (len % a->elsize) {
            cli_error("%s: %zu bytes is not a whole number of %s elements (%zu bytes each)",
                      in->name, len, tally_type_name(a->type), a->elsize);
            return 1;
        }
        a->data = base;
        a->n = len / a->elsize;
        a->ncols = 1;
        return 0;
    }
    tio_npy_info info;
    char err[256];
    tio_npy_status st = tio_npy_parse(base, len, &info, err, sizeof err);
    if (st != TIO_NPY_OK) {
        cli_error("%s: %s", in->name, err);
        return 1;
    }
    a->type = info.type;
    a->elsize = info.elsize;
    a->swap = info.swap;
    uint64_t need = info.count * info.elsize;
    uint64_t have = len - info.data_offset;
    if (have < need) {
        cli_error("%s: truncated .npy data: the header says %llu elements (%llu bytes), the file "
                  "has %llu bytes of data", in->name, (unsigned long long)info.count,
                  (unsigned long long)need, (unsigned long long)have);
        return 1;
    }
    a->data = base + info.data_offset;
    if (info.ndim == 2) {
        a->n = info.shape[0];
        a->ncols = (int)(info.shape[1] > 4096 ? 0 : info.shape[1]);
        if (info.shape[1] > 4096) {
            cli_error("%s: %llu columns: at most 4096 are supported", in->name,
                      (unsigned long long)info.shape[1]);
            return 1;
        }
        a->fortran = info.fortran_order;
        if (a->ncols == 0) {                   /* (rows, 0): no values at all */
            a->ncols = 1;
            a->n = 0;
        }
    } else {
        a->n = info.count;      /* 0-d: one element; 3-d and up: flattened */
        a->ncols = 1;
    }
    return 0;
}

/* A native, aligned, contiguous copy of column c (or the data itself when it already is one).
 * *owned gets the buffer to free. */
static const void *cli_column(const cli_array *a, int c, void **owned)
{
    *owned = NULL;
    const uint8_t *src = a->data;
    int contiguous = a->ncols == 1 || a->fortran;
    if (a->fortran) src += (uint64_t)c * a->n * a->elsize;
    if (contiguous && !a->swap && ((uintptr_t)src % a->elsize) == 0) return src;
    void *buf = malloc(a->n ? a->n * a->elsize : 1);
    if (!buf) return NULL;
    if (contiguous) {
        memcpy(buf, src, a->n * a->elsize);
    } else {
        uint8_t *d = buf;
        size_t stride = (size_t)a->ncols * a->elsize;
        for (uint64_t i = 0; i < a->n; i++)
            memcpy(d + i * a->elsize, src + i * stride + (size_t)c * a->elsize, a->elsize);
    }
    if (a->swap) cli_swap(buf, buf, a->n, a->elsize);
    *owned = buf;
    return buf;
}

/* Pages of a mapped file not yet in memory are read here, with a progress line, before the
 * library runs (which then works at memory speed). Only when someone watches a terminal. */
static void cli_prefault(const cli_opts *o, tio_input *in)
{
    if (!in->mapped || in->size < ((uint64_t)64 << 20)) return;
    if (!(o->progress == 1 || (o->progress == -1 && isatty(2)))) return;
    long page = sysconf(_SC_PAGESIZE);
    size_t pages = (size_t)((in->size + (uint64_t)page - 1) / (uint64_t)page);
    unsigned char *vec = malloc(pages);
    if (!vec) return;
    size_t resident = 0;
    if (mincore((void *)in->data, (size_t)in->size, vec) == 0)
        for (size_t i = 0; i < pages; i++) resident += vec[i] & 1;
    free(vec);
    if (resident > pages / 10 * 9) return;
    cli_progress_start(o, in->name, in->size);
    const size_t chunk = (size_t)64 << 20;
    volatile uint8_t sink = 0;
    for (uint64_t off = 0; off < in->size; off += chunk) {
        size_t m = in->size - off < chunk ? (size_t)(in->size - off) : chunk;
        madvise((void *)(in->data + off), m, MADV_WILLNEED);
        for (size_t k = 0; k < m; k += (size_t)page) sink ^= in->data[off + k];
        cli_progress_update(off + m);
    }
    (void)sink;
    cli_progress_end();
}

static int cli_reduce_binary(const cli_opts *o, tally_context *ctx, tio_input *in)
{
    cli_array a;
    int rc = cli_open_binary(o, in, &a);
    if (rc) { free(a.owned); return rc; }
    static int sel[4096];
    int nsel = cli_select_fields(o, a.ncols, NULL, sel, 4096);   /* arrays: numbers, no names */
    if (nsel < 0) { free(a.owned); return nsel == -2 ? 1 : 2; }
    cli_field *fields = calloc((size_t)nsel, sizeof *fields);
    if (!fields) { free(a.owned); cli_error("out of memory"); return 1; }
    cli_plan plan;
    cli_make_plan(o, &plan);
    tally_reduce_options ro[2] = {{o->omit_nan, 0}, {o->omit_nan, 1}};
    int is_float = a.type == TALLY_F32 || a.type == TALLY_F64;
    cli_prefault(o, in);
    rc = 0;
    for (int k = 0; k < nsel; k++) {
        snprintf(fields[k].name, sizeof fields[k].name, "%d", sel[k] + 1);
        fields[k].file_field = sel[k] + 1;
        if (is_float && cli_has_bitwise(o)) {
            cli_error("%s: and, or and xor need integers, and the data is %s", in->name,
                      tally_type_name(a.type));
            rc = 1;
            break;
        }
        void *owned;
        const void *col = cli_column(&a, sel[k], &owned);
        if (!col) { cli_error("%s: out of memory", in->name); rc = 1; break; }
        tally_result res[2][16];
        memset(res, 0, sizeof res);
        for (int g = 0; g < 2 && rc == 0; g++) {
            if (!plan.n[g]) continue;
            tally_status s = tally_reduce_many(ctx, a.type, col, a.n, plan.ops[g],
                                               (size_t)plan.n[g], &ro[g], res[g]);
            if (s != TALLY_OK && s != TALLY_ERR_EMPTY && s != TALLY_ERR_OVERFLOW &&
                s != TALLY_ERR_DOMAIN) {
                cli_error("%s: %s", in->name, tally_last_error(ctx));
                rc = 1;
            }
        }
        free(owned);
        if (rc) break;
        cli_fill_values(o, &plan, res, a.type, 0, fields[k].v);
    }
    if (rc == 0) {
        cli_print(o, fields, nsel);
        rc = cli_report_failures(o, in->name, fields, nsel);
    }
    free(fields);
    free(a.owned);
    return rc;
}

/* ---- scans ---------------------------------------------------------------------------------- */
static char g_tmp_path[PATH_MAX];

static void cli_on_signal(int sig)
{
    if (g_tmp_path[0]) unlink(g_tmp_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Creates OUT.tmp.XXXXXX next to OUT; returns its fd or -1 (message printed). */
static int cli_tmp_create(const char *out)
{
    if (strlen(out) + 12 >= sizeof g_tmp_path) {
        cli_error("%s: name too long", out);
        return -1;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s.tmp.XXXXXX", out);
    signal(SIGINT, cli_on_signal);
    signal(SIGTERM, cli_on_signal);
    signal(SIGHUP, cli_on_signal);
    int fd = mkstemp(path);
    if (fd < 0) {
        cli_error("%s: cannot create a temporary file: %s", out, strerror(errno));
        return -1;
    }
    memcpy(g_tmp_path, path, sizeof path);
    mode_t mask = umask(0);                    /* mkstemp made it 0600: give OUT the usual mode */
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    return fd;
}

static void cli_tmp_discard(void)
{
    if (g_tmp_path[0]) unlink(g_tmp_path);
    g_tmp_path[0] = '\0';
}

static int cli_tmp_commit(const char *out)
{
    if (rename(g_tmp_path, out) != 0) {
        cli_error("%s: %s", out, strerror(errno));
        cli_tmp_discard();
        return 1;
    }
    g_tmp_path[0] = '\0';
    return 0;
}

/* Tests set TALLY_TEST_WRITE_LIMIT=N to make writing fail after N bytes (a full disk). */
static long long g_write_limit = -1;

static int cli_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        size_t m = n > ((size_t)1 << 30) ? (size_t)1 << 30 : n;
        if (g_write_limit >= 0) {
            if (g_write_limit == 0) { errno = ENOSPC; return -1; }
            if ((long long)m > g_write_limit) m = (size_t)g_write_limit;
            g_write_limit -= (long long)m;
        }
        ssize_t w = write(fd, c, m);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes n scanned values of type t (text: one per line; else .npy) to fd. */
static int cli_write_values(int fd, int text, tally_type t, const void *v, uint64_t n)
{
    if (!text) {
        char hdr[256];
        size_t hl = tio_npy_write_header(hdr, sizeof hdr, t, n);
        if (cli_write_all(fd, hdr, hl) != 0) return -1;
        return cli_write_all(fd, v, n * tally_type_size(t));
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 64);
    if (!buf) return -1;
    for (uint64_t i = 0; i < n; i++) {
        char tmp[40];
        switch (t) {
        case TALLY_I8: snprintf(tmp, sizeof tmp, "%d", ((const int8_t *)v)[i]); break;
        case TALLY_U8: snprintf(tmp, sizeof tmp, "%u", ((const uint8_t *)v)[i]); break;
        case TALLY_I16: snprintf(tmp, sizeof tmp, "%d", ((const int16_t *)v)[i]); break;
        case TALLY_U16: snprintf(tmp, sizeof tmp, "%u", ((const uint16_t *)v)[i]); break;
        case TALLY_I32: snprintf(tmp, sizeof tmp, "%d", ((const int32_t *)v)[i]); break;
        case TALLY_U32: snprintf(tmp, sizeof tmp, "%u", ((const uint32_t *)v)[i]); break;
        case TALLY_I64: snprintf(tmp, sizeof tmp, "%lld", (long long)((const int64_t *)v)[i]); break;
        case TALLY_U64:
            snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)((const uint64_t *)v)[i]);
            break;
        case TALLY_F32: tio_format_float(((const float *)v)[i], tmp); break;
        default: tio_format_double(((const double *)v)[i], tmp); break;
        }
        size_t l = strlen(tmp);
        memcpy(buf + len, tmp, l);
        buf[len + l] = '\n';
        len += l + 1;
        if (len >= cap) {
            if (cli_write_all(fd, buf, len) != 0) { free(buf); return -1; }
            len = 0;
        }
    }
    int r = cli_write_all(fd, buf, len);
    free(buf);
    return r;
}

static int cli_parse_init(const cli_opts *o, tally_type t, tally_scan_options *so)
{
    if (!o->init) return 0;
    int64_t iv;
    double dv;
    tio_num_kind k = tio_parse_number(o->init, strlen(o->init), &iv, &dv);
    so->has_init = 1;
    if (t == TALLY_F32 || t == TALLY_F64) {
        if (k == TIO_NUM_INVALID) goto bad;
        so->init.f64 = k == TIO_NUM_INT ? (double)iv : dv;
        return 0;
    }
    if (t == TALLY_U8 || t == TALLY_U16 || t == TALLY_U32 || t == TALLY_U64) {
        char *end;
        errno = 0;
        if (o->init[0] == '-') goto bad;
        unsigned long long u = strtoull(o->init, &end, 10);
        if (*end || errno || end == o->init) goto bad;
        uint64_t max = t == TALLY_U64 ? UINT64_MAX : (UINT64_C(1) << (8 * tally_type_size(t))) - 1;
        if (u > max) goto bad;
        so->init.u64 = u;
        return 0;
    }
    if (k != TIO_NUM_INT) goto bad;
    {
        int bits = 8 * (int)tally_type_size(t);
        if (bits < 64 && (iv < -(INT64_C(1) << (bits - 1)) || iv >= (INT64_C(1) << (bits - 1))))
            goto bad;
    }
    so->init.i64 = iv;
    return 0;
bad:
    cli_error("--init '%s' is not a %s value", o->init, tally_type_name(t));
    return 2;
}

static int cli_scan(const cli_opts *o, tally_context *ctx, tio_input *in, int binary)
{
    void *owned = NULL;
    void *vals = NULL;
    tally_type type;
    uint64_t n;
    int scan_scale = 0;                        /* a decimal text column: int64 / 10^scale */
    cli_array a;
    memset(&a, 0, sizeof a);
    int rc;
    cli_text_job j;
    memset(&j, 0, sizeof j);
    if (binary) {
        rc = cli_open_binary(o, in, &a);
        if (rc) { free(a.owned); return rc; }
        int sel[2], nsel = cli_select_fields(o, a.ncols, NULL, sel, 2);
        if (nsel < 0) { free(a.owned); return 2; }
        if (nsel != 1) {
            cli_error("scan takes one column; pick one with -f");
            free(a.owned);
            return 2;
        }
        const void *col = cli_column(&a, sel[0], &owned);
        if (!col) { cli_error("%s: out of memory", in->name); free(a.owned); return 1; }
        type = a.type;
        n = a.n;
        if (!owned) {                          /* scan into a copy, never into the input */
            owned = malloc(n ? n * a.elsize : 1);
            if (!owned) { cli_error("%s: out of memory", in->name); free(a.owned); return 1; }
            memcpy(owned, col, n * a.elsize);
        }
        vals = owned;
    } else {
        int sel[2], nsel, status = 0;
        tio_text_reader *r = cli_text_open(o, in, sel, &nsel, 2, &status);
        if (!r) return status;
        if (nsel != 1) {
            cli_error("scan takes one field; pick one with -f");
            tio_text_close(r);
            return 2;
        }
        j.o = o;
        j.file = in->name;
        j.scan = 1;
        j.scan_decimals = o->scan_op == CLI_OP_SUM || o->scan_op == CLI_OP_MIN ||
                          o->scan_op == CLI_OP_MAX;
        tio_text_sink sink = {&j, cli_text_values, cli_text_invalid, cli_text_progress};
        char err[512];
        cli_progress_start(o, in->name, in->size_known ? in->size : 0);
        int run = tio_text_run(r, &sink, err, sizeof err);
        cli_progress_end();
        tio_text_close(r);
        if (run != 0) {
            if (!j.failed) cli_data_error(run, err);
            free(j.col);
            return 1;
        }
        if (j.invalid)
            fprintf(stderr, "tally: warning: %s: skipped %llu invalid value%s\n", in->name,
                    (unsigned long long)j.invalid, j.invalid == 1 ? "" : "s");
        type = j.col_float ? TALLY_F64 : TALLY_I64;
        n = j.col_n;
        vals = j.col;
        owned = j.col;
        scan_scale = j.col_float ? 0 : j.col_scale;
    }
    tally_scan_options so;
    memset(&so, 0, sizeof so);
    so.exclusive = o->exclusive;
    rc = cli_parse_init(o, scan_scale ? TALLY_F64 : type, &so);
    if (rc) goto done;
    if (scan_scale && so.has_init) {
        /* the initial value joins the decimal column exactly, or the column goes float */
        int64_t m;
        int sc;
        double dv;
        tio_num_kind k = tio_parse_number_scaled(o->init, strlen(o->init), &m, &sc, &dv);
        int64_t scaled;
        if (k == TIO_NUM_INT && sc <= scan_scale &&
            cli_rescale(&m, 1, scan_scale - sc, &scaled)) {
            so.init.i64 = scaled;
        } else {
            for (uint64_t i = 0; i < n; i++) {
                double d = tio_decimal_to_double(((int64_t *)vals)[i], scan_scale);
                memcpy((char *)vals + 8 * i, &d, 8);
            }
            scan_scale = 0;
            type = TALLY_F64;
        }
    }
    if (n) {
        tally_status s = tally_scan(ctx, cli_op_library(o->scan_op), type, vals, vals, n, &so);
        if (s != TALLY_OK) {
            if (s == TALLY_ERR_UNSUPPORTED)
                cli_error("%s: cannot scan %s over %s values", in->name,
                          tally_op_name(cli_op_library(o->scan_op)), tally_type_name(type));
            else
                cli_error("%s: %s", in->name, tally_last_error(ctx));
            rc = 1;
            goto done;
        }
    }
    if (scan_scale) {                          /* exact decimal prefixes, rounded once each */
        for (uint64_t i = 0; i < n; i++) {
            double d = tio_decimal_to_double(((int64_t *)vals)[i], scan_scale);
            memcpy((char *)vals + 8 * i, &d, 8);
        }
        type = TALLY_F64;
    }
    if (!o->out || strcmp(o->out, "-") == 0) {
        if (!o->text && isatty(1)) {
            cli_error("not writing .npy data to a terminal (use --text, or -o FILE)");
            rc = 2;
            goto done;
        }
        fflush(stdout);
        rc = cli_write_values(1, o->text, type, vals, n) != 0 ? 1 : 0;
        if (rc) cli_error("writing the output: %s", strerror(errno));
        goto done;
    }
    const char *limit = getenv("TALLY_TEST_WRITE_LIMIT");
    if (limit) g_write_limit = atoll(limit);
    int fd = cli_tmp_create(o->out);
    if (fd < 0) { rc = 1; goto done; }
    int wr = cli_write_values(fd, o->text, type, vals, n);
    int werr = errno;
    if (close(fd) != 0 && wr == 0) {
        wr = -1;
        werr = errno;
    }
    if (wr != 0) {
        cli_error("%s: %s", o->out, strerror(werr ? werr : EIO));
        cli_tmp_discard();
        rc = 1;
        goto done;
    }
    rc = cli_tmp_commit(o->out);
done:
    free(owned);
    free(a.owned);
    return rc;
}

/* ---- main ----------------------------------------------------------------------------------- */
static const char *cli_help_text =
    "usage: tally [options] OPS [FILE]\n"
    "       tally scan OP [--exclusive [--init V]] [options] [FILE] -o OUT | --text\n"
    "       tally info | demo | --help | --version\n"
    "       tally bench [--full] [--json|--csv] [--html FILE]   (tally bench --help)\n"
    "       tally explain OP [--n N] --svg FILE   (tally explain --help)\n"
    "\n"
    "OPS is a comma-separated list of: count sum prod min max mean var std svar sstd\n"
    "and or xor argmin argmax (var/std: population; svar/sstd: sample; datamash's pvar,\n"
    "pstdev, sstdev are accepted). Sums are exact: integers exactly, floats correctly rounded.\n"
    "FILE is .npy (detected by its magic), CSV/TSV/whitespace text, or raw binary with --dtype;\n"
    "no FILE or '-' reads standard input.\n"
    "\n"
    "input:\n"
    "  -H, --header          the first line names the fields\n"
    "  -t, --delimiter C     field delimiter (default: from .csv/.tsv, else sniffed)\n"
    "  -W, --whitespace      fields separated by runs of blanks\n"
    "  -f, --field LIST      fields by number (1, 2-4) or header name, comma-separated;\n"
    "                        default: every field; several fields give one result each\n"
    "      --dtype T         raw binary input of T: i8 u8 i16 u16 i32 u32 i64 u64 f32 f64\n"
    "                        (prefix > for big-endian, as in numpy's >f8)\n"
    "      --skip-invalid    warn about values that are not numbers, count them, go on\n"
    "      --omit-nan        ignore NaN in every op (NumPy's nan* functions)\n"
    "engine:\n"
    "      --backend B       auto, cpu, cuda, vulkan (see tally info)\n"
    "  -j, --threads N       threads for parsing and reducing (default: all cores)\n"
    "output:\n"
    "      --json            a JSON list, one object per field\n"
    "      --progress, --no-progress   force the progress line on stderr (default: terminals)\n"
    "scan:\n"
    "      --exclusive       exclusive scan (out[0] = init, the op's identity by default)\n"
    "      --init V          the initial value of an exclusive scan\n"
    "  -o, --output OUT      write the scan as .npy (written to OUT.tmp.*, then renamed)\n"
    "      --text            write the scan as text, one value per line (stdout without -o)\n"
    "\n"
    "exit status: 0 ok, 1 bad data or a failed op (empty input, overflow), 2 usage error\n";

int main(int argc, char **argv)
{
#ifdef TALLY_HAVE_LAB
    /* tally bench / tally explain live in tools/lab with their own options. */
    if (argc >= 2 && strcmp(argv[1], "bench") == 0)
        return tally_lab_bench_main(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "explain") == 0)
        return tally_lab_explain_main(argc - 1, argv + 1);
#endif
    cli_opts o;
    int rc = cli_parse_args(argc, argv, &o);
    if (rc) {
        cli_error("%s", o.err);
        fprintf(stderr, "usage: tally [options] OPS [FILE]   (tally --help for more)\n");
        return 2;
    }
    switch (o.cmd) {
    case CLI_HELP: fputs(cli_help_text, stdout); return 0;
    case CLI_VERSION: printf("tally %s (library %s)\n", TALLY_CLI_VERSION, tally_version()); return 0;
    case CLI_INFO: return cli_info(&o);
    case CLI_DEMO: return cli_demo(&o);
    default: break;
    }
    tio_input in;
    char err[512];
    if (tio_input_open(&in, o.file, err, sizeof err) != 0) {
        cli_error("%s", err);
        return 1;
    }
    int binary = o.dtype != NULL;
    if (!binary) {
        const uint8_t *p;
        size_t got = tio_input_peek(&in, 6, &p);
        binary = tio_npy_is_npy(p, got);
    }
    tally_context *ctx = cli_context(&o, o.backend, 0);
    if (!ctx) {
        tio_input_close(&in);
        return 1;
    }
    if (o.cmd == CLI_SCAN) rc = cli_scan(&o, ctx, &in, binary);
    else if (binary) rc = cli_reduce_binary(&o, ctx, &in);
    else rc = cli_reduce_text(&o, ctx, &in);
    tally_destroy(ctx);
    tio_input_close(&in);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("writing the output: %s", strerror(errno));
        if (!rc) rc = 1;
    }
    return rc;
}
