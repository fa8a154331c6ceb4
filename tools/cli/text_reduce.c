/* Reductions of text fields. Each selected field is summarised as its values arrive, in the
 * form they allow (docs/cli.md, "How a text field is summed"):
 *
 *   int mode:   integers, and plain decimals as integers m at the field's scale (m / 10^scale).
 *               The library's int64 streams give count, min, max, arg*, and/or/xor and the
 *               integer sum; decimal.c's exact sums give the decimal sum, mean and variance;
 *   float mode: after the first value that is not a plain decimal: f64 streams of every op.
 *
 * A product is reduced apart, so asking for it changes no other result: exact in int64 while
 * the field holds integers only, else the f64 product of the values as doubles.
 *
 * When a field changes form (a decimal with more places, a binary float) the library streams are
 * fed its values again in the new form: from a mapped file by a second reader up to the current
 * block, from a pipe from the spool (spool.c). The exact sums rescale by multiplication.
 *
 * Over several processes (tally-mpi), each reads its share of the file this way; then the
 * processes agree on each field's form (float if one of them is float, else the largest scale),
 * those behind read their share again in that form, and the streams and exact sums are combined.
 * A field's form depends only on its values (which are floats, the largest scale, whether every
 * value fits int64 at it), not on their order or split, so every split gives one process's
 * answer. */
#include "cli.h"
#include "decimal.h"
#include "spool.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Variances of floats past 2^511 would square to infinity in a stream: a second stream sees the
 * values times 2^-600 (exact for all but values below 2^-474, whose share of such a variance is
 * far below its rounding) and answers when the first does not. */
#define CLI_VAR_SHIFT 600

typedef struct cli_acc {
    int float_mode;
    int scale;                 /* int mode: the values are m / 10^scale */
    uint64_t n;                /* values fed so far */
    cli_stream *s[2];          /* the plan's ops, in the field's form */
    cli_stream *var_scaled[2];
    cli_decimal dec;           /* int mode: the exact sums */
    cli_stream *prod_int, *prod_f64;
    int prod_int_ok;           /* only integers so far: prod_int holds the product */
    cli_spool spool;           /* pipes: the int mode's values */
} cli_acc;

typedef struct cli_text_job {
    const cli_opts *o;
    const cli_world *w;
    tally_context *ctx;
    cli_plan plan_int, plan_float;
    int has_prod, has_var[2];
    tally_reduce_options ropts[2];
    cli_acc *acc;
    int nsel;
    const char *file;
    cli_table *table;
    double *conv;
    size_t conv_cap;
    uint64_t invalid;
    int failed;                /* an error already reported */
    tio_input *in;
    tio_text_reader *reader;
    tio_text_options topts;
    const int *file_fields;    /* 0-based file field of each selected field */
    cli_spools spools;
} cli_text_job;

void cli_text_options(const cli_opts *o, tio_text_options *to)
{
    memset(to, 0, sizeof *to);
    to->delim = o->delim;
    to->whitespace = o->whitespace;
    to->header = o->header;
    to->threads = o->threads;
    to->block_size = o->block_size;
    to->skip_invalid = o->skip_invalid;
    to->max_record = cli_limit.max_record;
}

tio_text_reader *cli_text_open(const cli_opts *o, const cli_world *w, tio_input *in, int maxsel,
                               int **sel, int *nsel, tio_text_options *to, int *status)
{
    cli_text_options(o, to);
    char err[512];
    tio_text_reader *r = NULL;
    *sel = NULL;
    *nsel = -1;
    int rc = 0;
    if (tio_text_open(&r, in, to, err, sizeof err) != 0) {
        cli_error("%s", err);
        r = NULL;
        rc = 1;
    }
    if ((rc = w->agree(w, rc)) == 0 && w->text_share) {
        /* this process's records: a reader of its byte range, the header read again */
        rc = w->text_share(w, r, in, to);
        tio_text_close(r);
        r = NULL;
        if (!rc && tio_text_open(&r, in, to, err, sizeof err) != 0) {
            cli_error("%s", err);
            r = NULL;
            rc = 1;
        }
        rc = w->agree(w, rc);
    }
    if (rc) {
        tio_text_close(r);
        *status = rc;
        return NULL;
    }
    int nf = tio_text_field_count(r);
    const char **names = NULL;
    if (o->header && nf > 0) {
        names = calloc((size_t)nf, sizeof *names);
        for (int i = 0; names && i < nf; i++) names[i] = tio_text_field_name(r, i);
    }
    *nsel = cli_select_fields(o, nf, names, 0, maxsel, sel);
    free(names);
    rc = *nsel == -1 ? 1 : *nsel < 0 ? 2 : 0;
    if (!rc && tio_text_select(r, *sel, *nsel) != 0) {
        cli_error("out of memory");
        rc = 1;
    }
    if ((rc = w->agree(w, rc)) != 0) {
        tio_text_close(r);
        free(*sel);
        *sel = NULL;
        *status = rc;
        return NULL;
    }
    return r;
}

/* ---- streams -------------------------------------------------------------------------------- */
static int cli_stream_new(cli_text_job *j, tally_type type, const tally_op *ops, int nops,
                          const tally_reduce_options *ro, cli_stream **s)
{
    if (!nops) return 0;
    if (j->w->stream_create(j->w, j->ctx, type, ops, (size_t)nops, ro, s) == TALLY_OK) return 0;
    cli_error("%s: %s", j->file, tally_last_error(j->ctx));
    return -1;
}

static void cli_acc_drop_streams(cli_text_job *j, cli_acc *a)
{
    for (int g = 0; g < 2; g++) {
        j->w->stream_destroy(a->s[g]);
        j->w->stream_destroy(a->var_scaled[g]);
        a->s[g] = a->var_scaled[g] = NULL;
    }
}

/* New library streams for the field's form. */
static int cli_acc_streams(cli_text_job *j, cli_acc *a, int to_float)
{
    cli_acc_drop_streams(j, a);
    const cli_plan *p = to_float ? &j->plan_float : &j->plan_int;
    tally_type t = to_float ? TALLY_F64 : TALLY_I64;
    static const tally_op var = TALLY_VAR;
    for (int g = 0; g < 2; g++) {
        if (cli_stream_new(j, t, p->ops[g], p->n[g], &j->ropts[g], &a->s[g])) return -1;
        if (to_float && j->has_var[g] &&
            cli_stream_new(j, TALLY_F64, &var, 1, &j->ropts[g], &a->var_scaled[g]))
            return -1;
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

static int cli_feed(cli_text_job *j, cli_stream *s, const void *v, size_t n)
{
    if (!s || j->w->stream_update(s, v, n) == TALLY_OK) return 0;
    cli_error("%s: %s", j->file, tally_last_error(j->ctx));
    return -1;
}

/* Feeds the library streams n values in the field's form (int64 at its scale, or doubles). */
static int cli_acc_update(cli_text_job *j, cli_acc *a, const void *v, size_t n)
{
    for (int g = 0; g < 2; g++)
        if (cli_feed(j, a->s[g], v, n)) return -1;
    if (a->float_mode && (a->var_scaled[0] || a->var_scaled[1])) {
        double *d = malloc(n * sizeof *d);
        if (!d) return -1;
        for (size_t k = 0; k < n; k++) d[k] = ldexp(((const double *)v)[k], -CLI_VAR_SHIFT);
        int r = cli_feed(j, a->var_scaled[0], d, n) || cli_feed(j, a->var_scaled[1], d, n);
        free(d);
        if (r) return -1;
    }
    return 0;
}

/* ---- replaying a field's values so far, in a new form --------------------------------------- */

typedef struct cli_replay {
    cli_text_job *j;
    cli_acc *a;
    int to_float;
    int scale;                 /* the values' scale (spool), or the target scale (file) */
    int overflow;
} cli_replay;

/* A mapped file read again: values in whatever form each block had. */
static int cli_replay_block(void *user, int sel, int is_float, int scale, const void *vals,
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

/* The spool's values (at the field's old scale), as doubles or at the new scale. */
static int cli_replay_spooled(void *user, const int64_t *v, size_t n)
{
    cli_replay *rp = user;
    double *d = cli_conv(rp->j, n);
    if (!d) return -1;
    if (rp->to_float) {
        for (size_t k = 0; k < n; k++) d[k] = tio_decimal_to_double(v[k], rp->scale);
        return cli_acc_update(rp->j, rp->a, d, n) ? -1 : 0;
    }
    return cli_acc_update(rp->j, rp->a, v, n) ? -1 : 0;
}

/* New streams for field sel (float, or int64 at new_scale), fed the values so far.
 * 0 ok, 1 a value does not fit the new scale (nothing changed), -1 error (reported). */
static int cli_acc_replay(cli_text_job *j, cli_acc *a, int sel, int to_float, int new_scale)
{
    if (a->n == 0) return cli_acc_streams(j, a, to_float);
    if (!j->in->mapped) {
        if (!to_float) {
            int r = cli_spool_rescale(&j->spools, &a->spool, new_scale - a->scale);
            if (r) {
                if (r < 0) cli_error("%s: the temporary copy of the input: %s", j->file, strerror(errno));
                return r;
            }
        }
        if (cli_acc_streams(j, a, to_float)) return -1;
        int saved = a->float_mode;
        a->float_mode = to_float;
        cli_replay rp = {j, a, to_float, a->scale, 0};
        int r = cli_spool_replay(&j->spools, &a->spool, cli_replay_spooled, &rp);
        a->float_mode = saved;
        if (r) {
            if (errno) cli_error("%s: the temporary copy of the input: %s", j->file, strerror(errno));
            return -1;
        }
        if (to_float) cli_spool_clear(&j->spools, &a->spool);
        return 0;
    }
    uint64_t limit = tio_text_position(j->reader);
    tio_text_options o2 = j->topts;
    o2.limit = limit;
    tio_text_reader *r2;
    char err[512];
    if (tio_text_open(&r2, j->in, &o2, err, sizeof err) != 0) {
        cli_error("%s", err);
        return -1;
    }
    tio_text_select(r2, &j->file_fields[sel], 1);
    /* keep the old streams until the new ones have every value: a rescale may not fit */
    cli_stream *old[2] = {a->s[0], a->s[1]}, *old_scaled[2] = {a->var_scaled[0], a->var_scaled[1]};
    a->s[0] = a->s[1] = a->var_scaled[0] = a->var_scaled[1] = NULL;
    int rc = cli_acc_streams(j, a, to_float);
    int saved = a->float_mode;
    a->float_mode = to_float;
    cli_replay rp = {j, a, to_float, new_scale, 0};
    if (rc == 0) {
        tio_text_sink sink = {&rp, cli_replay_block, NULL, NULL};
        rc = tio_text_run(r2, &sink, err, sizeof err);
        if (rc != 0 && !(rc == 2 && rp.overflow))
            cli_error("%s", rc == 2 ? "reading the input again failed" : err);
    }
    tio_text_close(r2);
    a->float_mode = saved;
    if (rc == 0) {
        for (int g = 0; g < 2; g++) {
            j->w->stream_destroy(old[g]);
            j->w->stream_destroy(old_scaled[g]);
        }
        return 0;
    }
    cli_acc_drop_streams(j, a);
    for (int g = 0; g < 2; g++) {
        a->s[g] = old[g];
        a->var_scaled[g] = old_scaled[g];
    }
    return rc == 2 && rp.overflow ? 1 : -1;
}

/* The field's first value that is not a plain decimal (or a decimal that does not fit). */
static int cli_acc_to_float(cli_text_job *j, cli_acc *a, int sel)
{
    if (cli_has_bitwise(j->o)) {
        char *name = cli_escape_name(j->table->names[sel]);
        cli_error("%s: field %s: and, or and xor need integers, and the field has other numbers",
                  j->file, name ? name : "?");
        free(name);
        return -1;
    }
    if (cli_acc_replay(j, a, sel, 1, 0) != 0) return -1;
    a->float_mode = 1;
    return 0;
}

/* ---- the sink ------------------------------------------------------------------------------- */
static int cli_prod_update(cli_text_job *j, cli_acc *a, int is_float, int scale, const void *vals,
                           size_t n)
{
    if (is_float || scale > 0) a->prod_int_ok = 0;
    else if (a->prod_int_ok && cli_feed(j, a->prod_int, vals, n)) return -1;
    const void *d = vals;
    if (!is_float) {
        double *c = cli_conv(j, n);
        if (!c) return -1;
        for (size_t k = 0; k < n; k++) c[k] = tio_decimal_to_double(((const int64_t *)vals)[k], scale);
        d = c;
    }
    return cli_feed(j, a->prod_f64, d, n);
}

static int cli_text_fail(cli_text_job *j, const char *what)
{
    if (what) cli_error("%s: %s", j->file, what);
    j->failed = 1;
    return 1;
}

static int cli_text_values(void *user, int sel, int is_float, int scale, const void *vals,
                           size_t n)
{
    cli_text_job *j = user;
    cli_acc *a = &j->acc[sel];
    if (j->has_prod && cli_prod_update(j, a, is_float, scale, vals, n)) return cli_text_fail(j, NULL);
    if (!a->float_mode && !is_float && scale > 0 && cli_has_bitwise(j->o)) is_float = 2;
    if (!a->float_mode && !is_float && scale > a->scale) {       /* more decimals: rescale */
        int r = cli_acc_replay(j, a, sel, 0, scale);
        if (r < 0) return cli_text_fail(j, NULL);
        if (r == 0) {
            a->scale = scale;
            if (cli_decimal_rescale(&a->dec, scale)) is_float = 2;
        } else {
            is_float = 2;
        }
    }
    if (!a->float_mode && !is_float && scale < a->scale) {       /* 1.5 in a column of cents */
        int64_t *d = (int64_t *)cli_conv(j, n);
        if (!d) return cli_text_fail(j, "out of memory");
        if (cli_rescale(vals, n, a->scale - scale, d)) {
            vals = d;
            scale = a->scale;
        } else {
            is_float = 2;
        }
    }
    if (!a->float_mode && is_float && cli_acc_to_float(j, a, sel) != 0) return cli_text_fail(j, NULL);
    if (a->float_mode) {
        const void *v = vals;
        if (is_float != 1) {
            double *d = cli_conv(j, n);
            if (!d) return cli_text_fail(j, "out of memory");
            for (size_t k = 0; k < n; k++)
                d[k] = tio_decimal_to_double(((const int64_t *)vals)[k], scale);
            v = d;
        }
        if (cli_acc_update(j, a, v, n)) return cli_text_fail(j, NULL);
        a->n += n;
        return 0;
    }
    if (cli_acc_update(j, a, vals, n)) return cli_text_fail(j, NULL);
    if (cli_decimal_add(&a->dec, vals, n)) return cli_text_fail(j, "too many values for exact sums");
    if (!j->in->mapped && cli_spool_add(&j->spools, &a->spool, vals, n))
        return cli_text_fail(j, strerror(errno));
    a->n += n;
    return 0;
}

static void cli_text_invalid(void *user, uint64_t line, int field, const char *text, size_t len,
                             int missing)
{
    cli_text_job *j = user;
    if (++j->invalid <= CLI_SKIPPED_SHOWN) cli_skipped(j->file, line, field, text, len, missing);
}

static void cli_text_progress(void *user, uint64_t done)
{
    (void)user;
    cli_progress_update(done);
}

/* ---- forms agreed, results ----------------------------------------------------------------- */
/* Every process's fields in one form (collective): float where a process is float, else int64
 * at the largest scale; where a process's values do not fit that scale it goes float, and a
 * second round takes the others there too. The integer product stays exact only where every
 * process saw integers alone. On one process nothing changes. 0, or 1 after a message. */
static int cli_text_agree_forms(cli_text_job *j)
{
    const cli_world *w = j->w;
    const int n = j->nsel;
    int64_t *form = malloc(((size_t)3 * (size_t)n + 1) * sizeof *form);
    if (!form) cli_error("out of memory");
    int rc = w->agree(w, !form);
    int64_t overflowed = 0;
    for (int round = 0; !rc; round++) {
        for (int k = 0; k < n; k++) {
            const cli_acc *a = &j->acc[k];
            form[3 * k] = a->float_mode;
            form[3 * k + 1] = a->float_mode ? 0 : a->scale;
            form[3 * k + 2] = !a->prod_int_ok;
        }
        form[3 * n] = overflowed;
        w->max(w, form, 3 * n + 1);
        if (round > 0 && !form[3 * n]) break;
        overflowed = 0;
        for (int k = 0; k < n && !rc; k++) {
            cli_acc *a = &j->acc[k];
            if (form[3 * k + 2]) a->prod_int_ok = 0;
            if (a->float_mode) continue;
            int r = 0;
            if (!form[3 * k] && form[3 * k + 1] > a->scale) {   /* more decimals elsewhere */
                r = cli_acc_replay(j, a, k, 0, (int)form[3 * k + 1]);
                if (r == 0) {
                    a->scale = (int)form[3 * k + 1];
                    if (cli_decimal_rescale(&a->dec, a->scale)) r = 1;
                }
                if (r < 0) rc = 1;
                if (r == 1) overflowed = 1;
            }
            if (!rc && (form[3 * k] || r == 1) && cli_acc_to_float(j, a, k) != 0) rc = 1;
        }
        rc = w->agree(w, rc);
    }
    free(form);
    return rc;
}

/* The exact sums of the int-mode fields over every process (collective). */
static int cli_text_sum_decimals(cli_text_job *j)
{
    cli_decimal *d = malloc((size_t)(j->nsel ? j->nsel : 1) * sizeof *d);
    if (!d) cli_error("out of memory");
    int rc = j->w->agree(j->w, !d);
    if (rc) return rc;
    for (int k = 0; k < j->nsel; k++) d[k] = j->acc[k].dec;
    rc = j->w->decimal_sums(j->w, d, j->nsel);
    for (int k = 0; k < j->nsel && !rc; k++) {
        j->acc[k].dec = d[k];
        if (!j->acc[k].float_mode && d[k].broken) rc = cli_text_fail(j, "too many values for exact sums");
    }
    free(d);
    return rc;
}

/* Field a's results (collective: the streams' results are). */
static void cli_acc_results(cli_text_job *j, cli_acc *a, cli_value *out)
{
    const cli_opts *o = j->o;
    tally_result res[2][CLI_PLAN_MAX];
    memset(res, 0, sizeof res);
    for (int g = 0; g < 2; g++)
        if (a->s[g]) j->w->stream_results(a->s[g], res[g]);
    const cli_plan *p = a->float_mode ? &j->plan_float : &j->plan_int;
    cli_fill_values(o, p, res, TALLY_F64, out);
    for (int k = 0; k < o->nops; k++) {
        cli_value *v = &out[k];
        cli_op op = o->ops[k];
        int ddof = op == CLI_OP_SVAR || op == CLI_OP_SSTD;
        int is_var = op == CLI_OP_VAR || op == CLI_OP_STD || op == CLI_OP_SVAR || op == CLI_OP_SSTD;
        if (op == CLI_OP_PROD) {
            tally_result r;
            j->w->stream_results(a->prod_int_ok ? a->prod_int : a->prod_f64, &r);
            memset(v, 0, sizeof *v);
            v->status = r.status;
            if (r.type == TALLY_I64) { v->kind = V_I64; v->i = r.value.i64; }
            else { v->kind = V_F64; v->d = r.value.f64; }
            continue;
        }
        if (a->float_mode) {
            if (is_var && v->status == TALLY_OK && !isfinite(v->d) && a->var_scaled[ddof]) {
                tally_result r;
                j->w->stream_results(a->var_scaled[ddof], &r);
                if (r.status == TALLY_OK && isfinite(r.value.f64)) {
                    double var = ldexp(r.value.f64, 2 * CLI_VAR_SHIFT);
                    v->d = op == CLI_OP_STD || op == CLI_OP_SSTD ? sqrt(var) : var;
                }
            }
            continue;
        }
        /* int mode: decimals print as doubles of the exact value; moments from exact sums */
        if (op == CLI_OP_MEAN || is_var) {
            memset(v, 0, sizeof *v);
            v->kind = V_F64;
            if (a->dec.n == 0) v->status = TALLY_ERR_EMPTY;
            else if (is_var && a->dec.n <= (uint64_t)ddof) v->status = TALLY_ERR_DOMAIN;
            else if (op == CLI_OP_MEAN) v->d = cli_decimal_mean(&a->dec);
            else {
                v->d = cli_decimal_var(&a->dec, ddof);
                if (op == CLI_OP_STD || op == CLI_OP_SSTD) v->d = sqrt(v->d);
            }
            continue;
        }
        if (a->scale == 0) continue;
        if (op == CLI_OP_SUM) {                /* exact: the int64 sum may have overflowed */
            memset(v, 0, sizeof *v);
            v->kind = V_F64;
            v->d = cli_decimal_sum(&a->dec);
        } else if ((op == CLI_OP_MIN || op == CLI_OP_MAX) && v->status == TALLY_OK) {
            v->kind = V_F64;
            v->d = tio_decimal_to_double(v->i, a->scale);
        }
    }
}

int cli_reduce_text(const cli_opts *o, const cli_world *w, tally_context *ctx, tio_input *in)
{
    int *sel = NULL, nsel, status = 0;
    cli_text_job j;
    memset(&j, 0, sizeof j);
    tio_text_reader *r = cli_text_open(o, w, in, 4096, &sel, &nsel, &j.topts, &status);
    if (!r) return status;
    cli_table table = {0};
    j.o = o;
    j.w = w;
    j.ctx = ctx;
    j.file = in->name;
    j.nsel = nsel;
    j.in = in;
    j.reader = r;
    j.file_fields = sel;
    j.table = &table;
    cli_spools_init(&j.spools, cli_limit.spool_memory, nsel);
    /* int mode: mean and variance come from the exact sums */
    cli_opts no_moments = *o;
    for (int k = 0; k < o->nops; k++) {
        cli_op op = o->ops[k];
        if (op == CLI_OP_MEAN || op == CLI_OP_VAR || op == CLI_OP_STD || op == CLI_OP_SVAR ||
            op == CLI_OP_SSTD)
            no_moments.ops[k] = CLI_OP_COUNT;
        if (op == CLI_OP_PROD) j.has_prod = 1;
        if (op == CLI_OP_VAR || op == CLI_OP_STD) j.has_var[0] = 1;
        if (op == CLI_OP_SVAR || op == CLI_OP_SSTD) j.has_var[1] = 1;
    }
    cli_make_plan(&no_moments, 0, &j.plan_int);
    for (int k = 0; k < o->nops; k++)
        if (no_moments.ops[k] != o->ops[k]) j.plan_int.group[k] = -1;
    cli_make_plan(o, 0, &j.plan_float);
    j.ropts[0].omit_nan = j.ropts[1].omit_nan = o->omit_nan;
    j.ropts[1].ddof = 1;
    j.acc = calloc((size_t)nsel, sizeof *j.acc);
    int rc = 1;
    static const tally_op prod = TALLY_PROD;
    if (!j.acc || cli_table_init(&table, nsel, o->nops)) {
        cli_error("out of memory");
        goto setup_done;
    }
    for (int k = 0; k < nsel; k++) {
        if (cli_table_name(&table, k, tio_text_field_name(r, sel[k]), sel[k] + 1)) {
            cli_error("out of memory");
            goto setup_done;
        }
        cli_decimal_init(&j.acc[k].dec);
        j.acc[k].prod_int_ok = 1;
        if (cli_acc_streams(&j, &j.acc[k], 0)) goto setup_done;
        if (j.has_prod && (cli_stream_new(&j, TALLY_I64, &prod, 1, NULL, &j.acc[k].prod_int) ||
                           cli_stream_new(&j, TALLY_F64, &prod, 1, NULL, &j.acc[k].prod_f64)))
            goto setup_done;
    }
    rc = 0;
setup_done:
    if ((rc = w->agree(w, rc)) != 0) goto done;
    tio_text_sink sink = {&j, cli_text_values, cli_text_invalid, cli_text_progress};
    char err[512];
    cli_progress_start(o, in->name, in->size_known ? in->size : 0);
    int run = tio_text_run(r, &sink, err, sizeof err);
    cli_progress_end();
    if (cli_input_changed(in)) {
        rc = 1;
    } else if (run != 0) {
        if (!j.failed) cli_data_error(run, err);
        rc = 1;
    }
    if ((rc = w->agree(w, rc)) != 0) goto done;
    if ((rc = cli_text_agree_forms(&j)) != 0 || (rc = cli_text_sum_decimals(&j)) != 0) goto done;
    uint64_t invalid;
    w->sum(w, j.invalid, NULL, &invalid);
    if (w->rank == 0) cli_skipped_total(in->name, invalid);
    for (int k = 0; k < nsel; k++) cli_acc_results(&j, &j.acc[k], cli_cell(&table, k, 0));
    if (w->rank == 0) cli_print(o, &table);
    rc = cli_report_failures(o, in->name, &table);
done:
    for (int k = 0; j.acc && k < nsel; k++) {
        cli_acc_drop_streams(&j, &j.acc[k]);
        w->stream_destroy(j.acc[k].prod_int);
        w->stream_destroy(j.acc[k].prod_f64);
        cli_spool_clear(&j.spools, &j.acc[k].spool);
    }
    cli_spools_free(&j.spools);
    free(j.acc);
    cli_table_free(&table);
    free(j.conv);
    free(sel);
    tio_text_close(r);
    return rc;
}
