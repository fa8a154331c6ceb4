/* tally scan OP: one column in, its prefix scan out (.npy, or text with --text).
 *
 * A text column is collected whole: int64 while its values are integers (scanned as int64, which
 * wraps as C does), exact scaled integers while they are plain decimals and the op is sum, min or
 * max (each prefix then rounded once to float64), else float64. An exclusive scan of a decimal
 * column starts from the identity of the float64 it is written as (-inf for max, inf for min). */
#include "cli.h"
#include "decimal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


typedef struct cli_column {
    const char *file;
    uint64_t *v;               /* int64 or double bits */
    size_t n, cap;
    int is_float;
    int scale;                 /* int64 column: v / 10^scale */
    int keep_decimals;         /* a sum/min/max scan keeps decimals exact */
    uint64_t abs_sum;          /* sum of |v|: below 2^63, no prefix sum can overflow */
    uint64_t invalid;
    int failed;
} cli_column;

static void cli_column_to_float(cli_column *c)
{
    if (c->is_float) return;
    for (size_t k = 0; k < c->n; k++) {
        double d = tio_decimal_to_double((int64_t)c->v[k], c->scale);
        memcpy(&c->v[k], &d, 8);
    }
    c->is_float = 1;
}

static uint64_t cli_add_sat(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

static uint64_t cli_abs(int64_t x) { return x < 0 ? 0 - (uint64_t)x : (uint64_t)x; }

/* The values so far at a scale with more decimals, and the sum of their magnitudes with them
 * (so that the overflow bound below holds at the column's final scale, whatever the order in
 * which the decimals came). 0, or -1 if a value does not fit int64 (nothing changed). */
static int cli_column_rescale(cli_column *c, int scale)
{
    if (scale <= c->scale) return 0;
    if (!cli_rescale((const int64_t *)c->v, c->n, scale - c->scale, (int64_t *)c->v)) return -1;
    uint64_t f = (uint64_t)cli_pow10_i64[scale - c->scale];
    c->abs_sum = c->abs_sum > UINT64_MAX / f ? UINT64_MAX : c->abs_sum * f;
    c->scale = scale;
    return 0;
}

static int cli_column_values(void *user, int sel, int is_float, int scale, const void *vals,
                             size_t n)
{
    (void)sel;
    cli_column *c = user;
    if (c->n + n > c->cap) {
        size_t nc = c->cap ? c->cap : 65536;
        while (nc < c->n + n) nc *= 2;
        uint64_t *nv = realloc(c->v, nc * 8);
        if (!nv) { cli_error("%s: out of memory", c->file); c->failed = 1; return 1; }
        c->v = nv;
        c->cap = nc;
    }
    const int64_t *iv = vals;
    if (!is_float && !c->is_float && c->keep_decimals) {
        if (c->n == 0) c->scale = scale;
        if (scale > c->scale) {
            if (cli_column_rescale(c, scale) != 0) is_float = 2;
        }
        if (!is_float) {
            if (!cli_rescale(iv, n, c->scale - scale, (int64_t *)c->v + c->n)) {
                is_float = 2;
            } else {
                for (size_t k = 0; k < n; k++)            /* can a prefix overflow? */
                    c->abs_sum = cli_add_sat(c->abs_sum, cli_abs(((int64_t *)c->v)[c->n + k]));
                /* decimals must not wrap; plain integers wrap as C does (documented) */
                if (c->abs_sum > (uint64_t)INT64_MAX && (c->scale > 0 || scale > 0)) {
                    is_float = 2;
                } else {
                    c->n += n;
                    return 0;
                }
            }
        }
    }
    if (!is_float && !c->is_float && !c->keep_decimals && scale == 0) {
        memcpy(c->v + c->n, vals, n * 8);         /* integers (they may wrap, as C does) */
        c->n += n;
        return 0;
    }
    cli_column_to_float(c);
    for (size_t k = 0; k < n; k++) {
        double d = is_float == 1 ? ((const double *)vals)[k] : tio_decimal_to_double(iv[k], scale);
        memcpy(&c->v[c->n + k], &d, 8);
    }
    c->n += n;
    return 0;
}

static void cli_column_invalid(void *user, uint64_t line, int field, const char *text, size_t len,
                               int missing)
{
    cli_column *c = user;
    if (++c->invalid <= CLI_SKIPPED_SHOWN) cli_skipped(c->file, line, field, text, len, missing);
}

static void cli_column_progress(void *user, uint64_t done)
{
    (void)user;
    cli_progress_update(done);
}

int cli_scan_init(const cli_opts *o, tally_type t, tally_scan_options *so)
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
    return cli_usage_error("--init '%s' is not a %s value", o->init, tally_type_name(t));
}

size_t cli_value_line(tally_type t, const void *v, uint64_t i, char *buf)
{
    /* v need not be aligned (a streamed scan's start value sits in a byte buffer): copied */
    union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
            int64_t i64; uint64_t u64; float f32; double f64; } e;
    size_t es = tally_type_size(t);
    memcpy(&e, (const char *)v + i * es, es);
    switch (t) {
    case TALLY_I8: snprintf(buf, 40, "%d", e.i8); break;
    case TALLY_U8: snprintf(buf, 40, "%u", e.u8); break;
    case TALLY_I16: snprintf(buf, 40, "%d", e.i16); break;
    case TALLY_U16: snprintf(buf, 40, "%u", e.u16); break;
    case TALLY_I32: snprintf(buf, 40, "%d", e.i32); break;
    case TALLY_U32: snprintf(buf, 40, "%u", e.u32); break;
    case TALLY_I64: snprintf(buf, 40, "%lld", (long long)e.i64); break;
    case TALLY_U64: snprintf(buf, 40, "%llu", (unsigned long long)e.u64); break;
    case TALLY_F32: tio_format_float(e.f32, buf); break;
    default: tio_format_double(e.f64, buf); break;
    }
    size_t l = strlen(buf);
    buf[l] = '\n';
    return l + 1;
}

char *cli_value_lines(tally_type t, const void *v, uint64_t n, size_t *len)
{
    size_t cap = 1 << 16, l = 0;
    char *buf = malloc(cap);
    for (uint64_t i = 0; buf && i < n; i++) {
        if (l + 48 > cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); return NULL; }
            buf = nb;
        }
        l += cli_value_line(t, v, i, buf + l);
    }
    *len = l;
    return buf;
}

/* Writes n scanned values of type t (text: one per line; else .npy) to f. */
static int cli_write_values(cli_outfile *f, int text, tally_type t, const void *v, uint64_t n)
{
    if (!text) {
        char hdr[256];
        size_t hl = tio_npy_write_header(hdr, sizeof hdr, t, n);
        if (cli_out_write(f, hdr, hl) != 0) return -1;
        return cli_out_write(f, v, n * tally_type_size(t));
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 64);
    if (!buf) return -1;
    for (uint64_t i = 0; i < n; i++) {
        len += cli_value_line(t, v, i, buf + len);
        if (len >= cap) {
            if (cli_out_write(f, buf, len) != 0) { free(buf); return -1; }
            len = 0;
        }
    }
    int r = cli_out_write(f, buf, len);
    free(buf);
    return r;
}

int cli_write_values_one(const cli_opts *o, tally_type type, const void *v, uint64_t n)
{
    cli_outfile f;
    if (!o->out || strcmp(o->out, "-") == 0) {
        if (!o->text && isatty(1))
            return cli_usage_error("not writing .npy data to a terminal (use --text, or -o FILE)");
        fflush(stdout);
        f.name = "standard output";
        f.fd = 1;
        f.direct = 1;
        f.target = NULL;
        if (cli_write_values(&f, o->text, type, v, n) != 0) {
            cli_error("writing the output: %s", strerror(errno));
            return 1;
        }
        return 0;
    }
    if (cli_out_open(&f, o->out)) return 1;
    int wr = cli_write_values(&f, o->text, type, v, n);
    if (wr != 0) cli_error("%s: %s", o->out, strerror(errno ? errno : EIO));
    return cli_out_finish(&f, wr == 0);
}

/* This process's share of the column to scan, from a text input (collective): 0, or an exit
 * status after a message. */
static int cli_scan_text(const cli_opts *o, const cli_world *w, tio_input *in, cli_column *c)
{
    int *sel, nsel, status = 0;
    tio_text_options to;
    tio_text_reader *r = cli_text_open(o, w, in, 1, &sel, &nsel, &to, &status);
    if (!r) return status;
    free(sel);
    c->file = in->name;
    c->keep_decimals = o->scan_op == CLI_OP_SUM || o->scan_op == CLI_OP_MIN || o->scan_op == CLI_OP_MAX;
    tio_text_sink sink = {c, cli_column_values, cli_column_invalid, cli_column_progress};
    char err[512];
    cli_progress_start(o, in->name, in->size_known ? in->size : 0);
    int run = tio_text_run(r, &sink, err, sizeof err);
    cli_progress_end();
    tio_text_close(r);
    int rc = 0;
    if (cli_input_changed(in)) {
        rc = 1;
    } else if (run != 0) {
        if (!c->failed) cli_data_error(run, err);
        rc = 1;
    }
    if ((rc = w->agree(w, rc)) != 0) return rc;
    uint64_t invalid;
    w->sum(w, c->invalid, NULL, &invalid);
    if (w->rank == 0) cli_skipped_total(in->name, invalid);
    return 0;
}

/* The column's form, the same on every process (collective): float64 when a value anywhere is
 * not a plain decimal, or does not fit int64 at the largest scale, or when decimals could
 * overflow a prefix (the sum of magnitudes passes 2^63 - 1); else int64 at the largest scale.
 * On one process this is what cli_column_values decided already. */
static void cli_column_agree(const cli_world *w, cli_column *c)
{
    int64_t form[2] = {c->is_float, c->is_float ? 0 : c->scale};
    w->max(w, form, 2);
    int64_t go_float = form[0] || cli_column_rescale(c, (int)form[1]) != 0;
    uint64_t magnitude;
    w->sum(w, c->is_float ? 0 : c->abs_sum, NULL, &magnitude);
    w->max(w, &go_float, 1);
    if (go_float || (form[1] > 0 && magnitude > (uint64_t)INT64_MAX)) cli_column_to_float(c);
}

static void cli_decimals_to_double(uint64_t *v, uint64_t n, int scale)
{
    for (uint64_t i = 0; i < n; i++) {
        double d = tio_decimal_to_double((int64_t)v[i], scale);
        memcpy(&v[i], &d, 8);
    }
}

/* This process's share of the binary input's column (a copy to scan in place), its type and
 * count: 0, or an exit status after a message (collective). */
static int cli_scan_array(const cli_opts *o, const cli_world *w, tio_input *in, void **vals,
                          tally_type *type, uint64_t *n)
{
    cli_array a;
    int rc = w->agree(w, cli_array_open(o, in, &a));
    if (rc) { cli_array_free(&a); return rc; }
    int *sel = NULL, nsel = cli_select_fields(o, a.ncols, NULL, 1, 1, &sel);
    if ((rc = w->agree(w, nsel == -1 ? 1 : nsel < 0 ? 2 : 0)) != 0) {
        cli_array_free(&a);
        return rc;
    }
    uint64_t lo, hi;
    w->rows(w, a.n, &lo, &hi);
    void *owned;
    const void *col = cli_array_rows(&a, sel[0], lo, hi, &owned);
    free(sel);
    if (col && !owned) {                       /* scan into a copy, never into the input */
        owned = malloc(hi > lo ? (hi - lo) * a.elsize : 1);
        if (owned) memcpy(owned, col, (hi - lo) * a.elsize);
    }
    if (!owned) cli_error("%s: out of memory", in->name);
    if ((rc = w->agree(w, !owned)) != 0) {
        free(owned);
        cli_array_free(&a);
        return rc;
    }
    *vals = owned;
    *type = a.type;
    *n = hi - lo;
    cli_array_free(&a);
    return 0;
}

int cli_scan(const cli_opts *o, const cli_world *w, tally_context *ctx, tio_input *in, int binary)
{
    void *vals = NULL;
    tally_type type;
    uint64_t n;
    int scale = 0;                             /* a decimal text column: int64 / 10^scale */
    cli_column c;
    memset(&c, 0, sizeof c);
    int rc;
    if (binary && w == &cli_world_one) {
        rc = cli_scan_streamed(o, ctx, in);
        if (rc >= 0) return rc;
    }
    if (binary) {
        rc = cli_scan_array(o, w, in, &vals, &type, &n);
        if (rc) return rc;
    } else {
        rc = cli_scan_text(o, w, in, &c);
        if (rc) { free(c.v); return rc; }
        cli_column_agree(w, &c);
        type = c.is_float ? TALLY_F64 : TALLY_I64;
        n = c.n;
        vals = c.v;
        scale = c.is_float ? 0 : c.scale;
    }
    tally_scan_options so;
    memset(&so, 0, sizeof so);
    so.exclusive = o->exclusive;
    rc = cli_scan_init(o, scale ? TALLY_F64 : type, &so);
    if (rc) goto done;
    if (scale && so.has_init) {
        /* the initial value joins the decimal column exactly, or the column goes float */
        int64_t m, scaled;
        int sc;
        double dv;
        tio_num_kind k = tio_parse_number_scaled(o->init, strlen(o->init), &m, &sc, &dv);
        if (k == TIO_NUM_INT && sc <= scale && cli_rescale(&m, 1, scale - sc, &scaled)) {
            so.init.i64 = scaled;
        } else {
            cli_decimals_to_double(vals, n, scale);
            scale = 0;
            type = TALLY_F64;
        }
    }
    tally_status s = w->scan(w, ctx, cli_op_library(o->scan_op), type, vals, vals, n, &so);
    if (s != TALLY_OK) {
        if (s == TALLY_ERR_UNSUPPORTED)
            cli_error("%s: cannot scan %s over %s values", in->name,
                      tally_op_name(cli_op_library(o->scan_op)), tally_type_name(type));
        else
            cli_error("%s: %s", in->name, tally_last_error(ctx));
        rc = 1;
        goto done;
    }
    uint64_t before;                           /* values on the processes before this one */
    w->sum(w, n, &before, NULL);
    if (scale) {                               /* exact decimal prefixes, rounded once each */
        cli_decimals_to_double(vals, n, scale);
        type = TALLY_F64;
        /* the exclusive scan started from int64's identity: float64's is the infinity */
        if (n && before == 0 && o->exclusive && !so.has_init &&
            (o->scan_op == CLI_OP_MIN || o->scan_op == CLI_OP_MAX))
            ((double *)vals)[0] = o->scan_op == CLI_OP_MAX ? -INFINITY : INFINITY;
    }
    if ((rc = w->agree(w, binary && cli_input_changed(in))) != 0) goto done;
    rc = w->write_values(w, o, type, vals, n);
done:
    free(vals);
    return w->agree(w, rc);
}
