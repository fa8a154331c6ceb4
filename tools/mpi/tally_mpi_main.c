/* tally-mpi: the tally command under mpirun -np N. Every rank maps the same file, takes its byte
 * range (whole rows of a .npy or raw array), reduces or scans it through libtally_mpi, and rank 0
 * prints what `tally` prints on one process; the answer is the same. `scan` writes one output
 * file collectively (MPI-IO into a temporary file that rank 0 renames once every rank's part is
 * written), never a partial one.
 *
 * Reused from the tally command: its option parser (tools/cli_options.c) and readers (tally_io).
 * Its output formatting and field selection are static in tools/tally.c today, so the few
 * functions that print live here, written to print exactly what tally prints (the tests diff the
 * two); they go when the command's output code becomes a library of its own.
 * Text input (CSV/TSV) is not read yet: it needs the per-field exact decimal typing of tally's
 * text reader agreed across ranks (docs/mpi.md). */
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "tally_io.h"
#include "tally_mpi.h"

static int g_rank, g_size;

/* Messages come from rank 0 only (every rank takes the same decisions). */
void cli_error(const char *fmt, ...)
{
    if (g_rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("tally-mpi: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Every rank's rc; the first nonzero one (in rank order) for all. */
static int agree(int rc)
{
    int all;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

/* ---- output, as tools/tally.c prints it ------------------------------------------------------- */
enum { V_NONE, V_I64, V_U64, V_F64, V_F32 };
typedef struct value {
    tally_status status;
    int kind;
    int64_t i;
    uint64_t u;
    double d;
} value;
typedef struct field {
    char name[32];
    value v[CLI_MAX_OPS];
} field;

static void value_text(const value *v, char *buf, size_t len)
{
    switch (v->kind) {
    case V_I64: snprintf(buf, len, "%lld", (long long)v->i); break;
    case V_U64: snprintf(buf, len, "%llu", (unsigned long long)v->u); break;
    case V_F64: tio_format_double(v->d, buf); break;
    case V_F32: tio_format_float((float)v->d, buf); break;
    default: snprintf(buf, len, "-"); break;
    }
}

static void print_fields(const cli_opts *o, const field *fields, int nf)
{
    char buf[64];
    if (o->json) {
        fputc('[', stdout);
        for (int f = 0; f < nf; f++) {
            fputs(f ? ",\n {" : "{", stdout);
            printf("\"field\": \"%s\"", fields[f].name); /* array columns: numbers */
            for (int k = 0; k < o->nops; k++) {
                const value *v = &fields[f].v[k];
                printf(", \"%s\": ", o->op_names[k]);
                if (v->status != TALLY_OK || v->kind == V_NONE) { fputs("null", stdout); continue; }
                value_text(v, buf, sizeof buf);
                if ((v->kind == V_F64 || v->kind == V_F32) && !isfinite(v->d)) printf("\"%s\"", buf);
                else fputs(buf, stdout);
            }
            fputc('}', stdout);
        }
        fputs("]\n", stdout);
        return;
    }
    if (nf == 1 && o->nops == 1) {
        if (fields[0].v[0].status == TALLY_OK) {
            value_text(&fields[0].v[0], buf, sizeof buf);
            printf("%s\n", buf);
        }
        return;
    }
    int w0 = 5, w[CLI_MAX_OPS];
    for (int f = 0; f < nf; f++)
        if ((int)strlen(fields[f].name) > w0) w0 = (int)strlen(fields[f].name);
    for (int k = 0; k < o->nops; k++) {
        w[k] = (int)strlen(o->op_names[k]);
        for (int f = 0; f < nf; f++) {
            const value *v = &fields[f].v[k];
            if (v->status != TALLY_OK) snprintf(buf, sizeof buf, "-");
            else value_text(v, buf, sizeof buf);
            if ((int)strlen(buf) > w[k]) w[k] = (int)strlen(buf);
        }
    }
    printf("%-*s", w0, "field");
    for (int k = 0; k < o->nops; k++) printf("  %*s", w[k], o->op_names[k]);
    putchar('\n');
    for (int f = 0; f < nf; f++) {
        printf("%-*s", w0, fields[f].name);
        for (int k = 0; k < o->nops; k++) {
            const value *v = &fields[f].v[k];
            if (v->status != TALLY_OK) snprintf(buf, sizeof buf, "-");
            else value_text(v, buf, sizeof buf);
            printf("  %*s", w[k], buf);
        }
        putchar('\n');
    }
}

static int report_failures(const cli_opts *o, const char *file, const field *fields, int nf)
{
    int bad = 0;
    for (int f = 0; f < nf; f++)
        for (int k = 0; k < o->nops; k++) {
            const value *v = &fields[f].v[k];
            if (v->status == TALLY_OK) continue;
            bad = 1;
            char where[300];
            if (nf > 1) snprintf(where, sizeof where, "%s: field %s", file, fields[f].name);
            else snprintf(where, sizeof where, "%s", file);
            const char *op = o->op_names[k];
            switch (v->status) {
            case TALLY_ERR_EMPTY: cli_error("%s: %s of an empty input (no values)", where, op); break;
            case TALLY_ERR_OVERFLOW:
                cli_error("%s: %s: integer overflow: the exact result does not fit in 64 bits", where, op);
                break;
            case TALLY_ERR_DOMAIN: cli_error("%s: %s needs at least 2 values", where, op); break;
            default: cli_error("%s: %s: %s", where, op, tally_status_string(v->status)); break;
            }
        }
    return bad;
}

/* Library ops: group 0 every op with ddof 0, group 1 the variance with ddof 1 (svar, sstd). */
typedef struct plan {
    tally_op ops[2][16];
    int n[2], group[CLI_MAX_OPS], index[CLI_MAX_OPS];
} plan;

static void make_plan(const cli_opts *o, plan *p)
{
    memset(p, 0, sizeof *p);
    for (int k = 0; k < o->nops; k++) {
        int g = o->ops[k] == CLI_OP_SVAR || o->ops[k] == CLI_OP_SSTD;
        tally_op lop = cli_op_library(o->ops[k]);
        int idx = -1;
        for (int j = 0; j < p->n[g]; j++)
            if (p->ops[g][j] == lop) idx = j;
        if (idx < 0) p->ops[g][idx = p->n[g]++] = lop;
        p->group[k] = g;
        p->index[k] = idx;
    }
}

static void fill_values(const cli_opts *o, const plan *p, tally_result res[2][16], tally_type input,
                        value *out)
{
    for (int k = 0; k < o->nops; k++) {
        const tally_result *r = &res[p->group[k]][p->index[k]];
        value *v = &out[k];
        memset(v, 0, sizeof *v);
        v->status = r->status;
        if (r->status != TALLY_OK) continue;
        cli_op op = o->ops[k];
        if (op == CLI_OP_ARGMIN || op == CLI_OP_ARGMAX || op == CLI_OP_COUNT) {
            v->kind = V_U64;
            v->u = op == CLI_OP_COUNT ? r->value.u64 : r->index;
            continue;
        }
        switch (r->type) {
        case TALLY_I64: v->kind = V_I64; v->i = r->value.i64; break;
        case TALLY_U64: v->kind = V_U64; v->u = r->value.u64; break;
        default: v->kind = V_F64; v->d = r->value.f64; break;
        }
        if (op == CLI_OP_STD || op == CLI_OP_SSTD) v->d = sqrt(v->d);
        if ((op == CLI_OP_MIN || op == CLI_OP_MAX) && input == TALLY_F32) v->kind = V_F32;
    }
}

/* ---- the array and this rank's rows ------------------------------------------------------------ */
typedef struct array {
    const uint8_t *data; /* first element */
    uint64_t n;          /* rows */
    int ncols, fortran, swap;
    tally_type type;
    size_t es;
} array;

/* 0, or an exit status after a message (rank 0's). */
static int open_array(const cli_opts *o, const tio_input *in, array *a)
{
    memset(a, 0, sizeof *a);
    const uint8_t *base = in->data;
    size_t len = (size_t)in->size;
    a->ncols = 1;
    if (o->dtype) {
        int is_bool;
        if (tio_parse_dtype(o->dtype, &a->type, &a->swap, &is_bool) != 0) {
            cli_error("unknown --dtype '%s' (i8 u8 i16 u16 i32 u32 i64 u64 f32 f64, or numpy's "
                      "<f8 >i4 ...)", o->dtype);
            return 2;
        }
        a->es = tally_type_size(a->type);
        if (len % a->es) {
            cli_error("%s: %zu bytes is not a whole number of %s elements (%zu bytes each)",
                      in->name, len, tally_type_name(a->type), a->es);
            return 1;
        }
        a->data = base;
        a->n = len / a->es;
        return 0;
    }
    tio_npy_info info;
    char err[256];
    if (tio_npy_parse(base, len, &info, err, sizeof err) != TIO_NPY_OK) {
        cli_error("%s: %s", in->name, err);
        return 1;
    }
    a->type = info.type;
    a->es = info.elsize;
    a->swap = info.swap;
    uint64_t need = info.count * info.elsize, have = len - info.data_offset;
    if (have < need) {
        cli_error("%s: truncated .npy data: the header says %llu elements (%llu bytes), the file "
                  "has %llu bytes of data", in->name, (unsigned long long)info.count,
                  (unsigned long long)need, (unsigned long long)have);
        return 1;
    }
    a->data = base + info.data_offset;
    a->n = info.count;
    if (info.ndim == 2) {
        if (info.shape[1] > 4096) {
            cli_error("%s: %llu columns: at most 4096 are supported", in->name,
                      (unsigned long long)info.shape[1]);
            return 1;
        }
        a->n = info.shape[1] ? info.shape[0] : 0;
        a->ncols = info.shape[1] ? (int)info.shape[1] : 1;
        a->fortran = info.fortran_order;
    }
    return 0;
}

/* Rows [lo, hi) of column c, native and aligned (malloc'd). */
static void *column_rows(const array *a, int c, uint64_t lo, uint64_t hi)
{
    uint64_t m = hi - lo;
    uint8_t *buf = malloc(m ? m * a->es : 1);
    if (!buf) return NULL;
    if (a->ncols == 1 || a->fortran) {
        memcpy(buf, a->data + ((a->fortran ? (uint64_t)c * a->n : 0) + lo) * a->es, m * a->es);
    } else {
        size_t stride = (size_t)a->ncols * a->es;
        for (uint64_t i = 0; i < m; i++)
            memcpy(buf + i * a->es, a->data + (lo + i) * stride + (size_t)c * a->es, a->es);
    }
    if (a->swap)
        for (uint64_t i = 0; i < m; i++) {
            uint8_t *e = buf + i * a->es;
            for (size_t x = 0; x < a->es / 2; x++) {
                uint8_t t = e[x];
                e[x] = e[a->es - 1 - x];
                e[a->es - 1 - x] = t;
            }
        }
    return buf;
}

/* -f for arrays: column numbers and ranges from 1 ("2", "1-3", "1,4"). */
static int select_columns(const cli_opts *o, int ncols, int *sel)
{
    if (!o->fields) {
        for (int i = 0; i < ncols; i++) sel[i] = i;
        return ncols;
    }
    int n = 0;
    const char *p = o->fields;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p) {
            cli_error("field '%s' is a name: arrays have numbered columns only", p);
            return -1;
        }
        if (*end == '-') {
            const char *q = end + 1;
            b = strtol(q, &end, 10);
            if (end == q) { cli_error("bad field list '%s'", o->fields); return -1; }
        }
        if (a < 1 || b < a || b > ncols) {
            cli_error("field %ld: the input has only %d field%s", b > ncols ? b : a, ncols,
                      ncols == 1 ? "" : "s");
            return -1;
        }
        for (long f = a; f <= b; f++) {
            for (int k = 0; k < n; k++)
                if (sel[k] == f - 1) {
                    cli_error("field %ld is given twice in '%s'", f, o->fields);
                    return -1;
                }
            sel[n++] = (int)(f - 1);
        }
        if (*end == ',') p = end + 1;
        else if (*end == 0) break;
        else { cli_error("bad field list '%s'", o->fields); return -1; }
    }
    return n;
}

static int reduce_array(const cli_opts *o, tally_context *ctx, const tio_input *in, const array *a)
{
    static int sel[4096];
    int nsel = select_columns(o, a->ncols, sel);
    if (nsel < 0) return 2;
    int is_float = a->type == TALLY_F32 || a->type == TALLY_F64;
    for (int k = 0; k < o->nops; k++)
        if (is_float && (o->ops[k] == CLI_OP_AND || o->ops[k] == CLI_OP_OR || o->ops[k] == CLI_OP_XOR)) {
            cli_error("%s: and, or and xor need integers, and the data is %s", in->name,
                      tally_type_name(a->type));
            return 1;
        }
    field *fields = calloc((size_t)nsel, sizeof *fields);
    plan p;
    make_plan(o, &p);
    tally_reduce_options ro[2] = {{o->omit_nan, 0}, {o->omit_nan, 1}};
    uint64_t lo = a->n * (uint64_t)g_rank / (uint64_t)g_size;
    uint64_t hi = a->n * (uint64_t)(g_rank + 1) / (uint64_t)g_size;
    int rc = 0;
    for (int k = 0; k < nsel && rc == 0; k++) {
        snprintf(fields[k].name, sizeof fields[k].name, "%d", sel[k] + 1);
        void *col = column_rows(a, sel[k], lo, hi);
        /* a rank out of memory still joins the collectives: its NULL is a bad argument there */
        tally_result res[2][16];
        memset(res, 0, sizeof res);
        for (int g = 0; g < 2 && rc == 0; g++) {
            if (!p.n[g]) continue;
            tally_status s = tally_mpi_reduce_many(ctx, MPI_COMM_WORLD, a->type, col, hi - lo,
                                                   p.ops[g], (size_t)p.n[g], &ro[g], res[g]);
            if (s != TALLY_OK && s != TALLY_ERR_EMPTY && s != TALLY_ERR_OVERFLOW &&
                s != TALLY_ERR_DOMAIN) {
                cli_error("%s: %s", in->name, tally_last_error(ctx));
                rc = 1;
            }
        }
        free(col);
        if (rc == 0) fill_values(o, &p, res, a->type, fields[k].v);
    }
    if (rc == 0 && g_rank == 0) {
        print_fields(o, fields, nsel);
        fflush(stdout);
        rc = report_failures(o, in->name, fields, nsel);
    }
    free(fields);
    return agree(rc);
}

/* ---- scans: one output file, written collectively --------------------------------------------- */
static int parse_init(const cli_opts *o, tally_type t, tally_scan_options *so)
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
        uint64_t max = t == TALLY_U64 ? UINT64_MAX : (UINT64_C(1) << (8 * tally_type_size(t))) - 1;
        if (*end || errno || end == o->init || u > max) goto bad;
        so->init.u64 = u;
        return 0;
    }
    if (k != TIO_NUM_INT) goto bad;
    int bits = 8 * (int)tally_type_size(t);
    if (bits < 64 && (iv < -(INT64_C(1) << (bits - 1)) || iv >= (INT64_C(1) << (bits - 1)))) goto bad;
    so->init.i64 = iv;
    return 0;
bad:
    cli_error("--init '%s' is not a %s value", o->init, tally_type_name(t));
    return 2;
}

/* This rank's values as text lines (tally's --text format). */
static char *format_text(tally_type t, const void *v, uint64_t n, size_t *len)
{
    size_t cap = 1 << 16, l = 0;
    char *buf = malloc(cap);
    for (uint64_t i = 0; buf && i < n; i++) {
        char tmp[48];
        switch (t) {
        case TALLY_I8: snprintf(tmp, sizeof tmp, "%d", ((const int8_t *)v)[i]); break;
        case TALLY_U8: snprintf(tmp, sizeof tmp, "%u", ((const uint8_t *)v)[i]); break;
        case TALLY_I16: snprintf(tmp, sizeof tmp, "%d", ((const int16_t *)v)[i]); break;
        case TALLY_U16: snprintf(tmp, sizeof tmp, "%u", ((const uint16_t *)v)[i]); break;
        case TALLY_I32: snprintf(tmp, sizeof tmp, "%d", ((const int32_t *)v)[i]); break;
        case TALLY_U32: snprintf(tmp, sizeof tmp, "%u", ((const uint32_t *)v)[i]); break;
        case TALLY_I64: snprintf(tmp, sizeof tmp, "%lld", (long long)((const int64_t *)v)[i]); break;
        case TALLY_U64: snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)((const uint64_t *)v)[i]); break;
        case TALLY_F32: tio_format_float(((const float *)v)[i], tmp); break;
        default: tio_format_double(((const double *)v)[i], tmp); break;
        }
        size_t k = strlen(tmp);
        if (l + k + 1 > cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); return NULL; }
            buf = nb;
        }
        memcpy(buf + l, tmp, k);
        buf[l + k] = '\n';
        l += k + 1;
    }
    *len = l;
    return buf;
}

static int scan_array(const cli_opts *o, tally_context *ctx, const tio_input *in, const array *a)
{
    int sel[4096];
    int nsel = select_columns(o, a->ncols, sel);
    if (nsel < 0) return 2;
    if (nsel != 1) {
        cli_error("scan takes one field; pick one with -f");
        return 2;
    }
    if (!o->out || !strcmp(o->out, "-")) {
        cli_error("tally-mpi scan writes a file: give -o OUT");
        return 2;
    }
    tally_scan_options so;
    memset(&so, 0, sizeof so);
    so.exclusive = o->exclusive;
    int rc = parse_init(o, a->type, &so);
    if (rc) return rc;
    uint64_t lo = a->n * (uint64_t)g_rank / (uint64_t)g_size;
    uint64_t hi = a->n * (uint64_t)(g_rank + 1) / (uint64_t)g_size, m = hi - lo;
    void *col = column_rows(a, sel[0], lo, hi);
    tally_status s = tally_mpi_scan(ctx, MPI_COMM_WORLD, cli_op_library(o->scan_op), a->type, col,
                                    col, m, &so);
    if (s != TALLY_OK) {
        if (s == TALLY_ERR_UNSUPPORTED)
            cli_error("%s: cannot scan %s over %s values", in->name,
                      tally_op_name(cli_op_library(o->scan_op)), tally_type_name(a->type));
        else cli_error("%s: %s", in->name, tally_last_error(ctx));
        free(col);
        return 1;
    }
    /* this rank's bytes and where they go: after the .npy header, or after the text before it */
    char hdr[256];
    size_t hl = o->text ? 0 : tio_npy_write_header(hdr, sizeof hdr, a->type, a->n);
    size_t len = m * a->es;
    char *bytes = col;
    if (o->text) {
        bytes = format_text(a->type, col, m, &len);
        free(col);
        col = bytes;
    }
    long long mine = bytes ? (long long)len : -1, before = 0, bad;
    MPI_Allreduce(&mine, &bad, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (bad < 0) {
        cli_error("out of memory formatting the output");
        free(col);
        return 1;
    }
    MPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0) before = 0;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", o->out, (int)getpid());
    MPI_Bcast(tmp, sizeof tmp, MPI_CHAR, 0, MPI_COMM_WORLD); /* rank 0's name for every rank */
    MPI_File f;
    int err = MPI_File_open(MPI_COMM_WORLD, tmp, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_EXCL,
                            MPI_INFO_NULL, &f);
    if (err != MPI_SUCCESS) {
        cli_error("%s: cannot create a temporary file", o->out);
        free(col);
        return 1;
    }
    MPI_File_set_errhandler(f, MPI_ERRORS_RETURN);
    int werr = MPI_SUCCESS;
    if (g_rank == 0 && hl) werr = MPI_File_write_at(f, 0, hdr, (int)hl, MPI_BYTE, MPI_STATUS_IGNORE);
    /* in pieces below 2^31 bytes (MPI counts are ints) */
    const size_t piece = (size_t)1 << 30;
    size_t done = 0;
    long long pieces = (long long)((len + piece - 1) / piece), most;
    MPI_Allreduce(&pieces, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    for (long long k = 0; k < most; k++) {
        size_t l = len - done < piece ? len - done : piece;
        int e = MPI_File_write_at_all(f, (MPI_Offset)(hl + (size_t)before + done), bytes + done,
                                      (int)l, MPI_BYTE, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS) werr = e;
        done += l;
    }
    int e = MPI_File_close(&f);
    if (e != MPI_SUCCESS) werr = e;
    free(col);
    rc = agree(werr != MPI_SUCCESS);
    if (g_rank == 0) {
        if (rc) {
            cli_error("%s: writing the output failed", o->out);
            unlink(tmp);
        } else if (rename(tmp, o->out) != 0) {
            cli_error("%s: %s", o->out, strerror(errno));
            unlink(tmp);
            rc = 1;
        }
    }
    return agree(rc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    static cli_opts o;
    int rc = cli_parse_args(argc, argv, &o);
    if (rc) {
        cli_error("%s", o.err);
        MPI_Finalize();
        return rc;
    }
    if (o.cmd == CLI_HELP || o.cmd == CLI_VERSION) {
        if (g_rank == 0)
            printf(o.cmd == CLI_VERSION ? "tally-mpi %s (libtally %s)\n"
                                        : "tally-mpi %s: the tally command over MPI ranks\n"
                                          "  mpirun -np N tally-mpi [options] OPS FILE\n"
                                          "  mpirun -np N tally-mpi scan OP [--exclusive [--init V]] FILE -o OUT\n"
                                          "Options and output as tally's (tally --help); FILE is "
                                          ".npy or raw (--dtype).\n",
                   TALLY_CLI_VERSION, tally_version());
        MPI_Finalize();
        return 0;
    }
    if (o.cmd != CLI_REDUCE && o.cmd != CLI_SCAN) {
        cli_error("only reductions and scans run under MPI (use tally for info and demo)");
        MPI_Finalize();
        return 2;
    }
    if (!o.file || !strcmp(o.file, "-")) {
        cli_error("tally-mpi reads a file that every rank can open (not standard input)");
        MPI_Finalize();
        return 2;
    }
    tio_input in;
    char err[512];
    rc = agree(tio_input_open(&in, o.file, err, sizeof err) != 0 || !in.mapped);
    if (rc) {
        cli_error("%s", err[0] ? err : "cannot map the input");
        MPI_Finalize();
        return 1;
    }
    int binary = o.dtype || tio_npy_is_npy(in.data, (size_t)in.size);
    if (!binary) {
        cli_error("%s: text input is not supported by tally-mpi yet (.npy or --dtype raw only)",
                  in.name);
        tio_input_close(&in);
        MPI_Finalize();
        return 2;
    }
    /* one core per rank by default: the ranks on a node share its cores */
    MPI_Comm node;
    int local = 1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &local);
        MPI_Comm_free(&node);
    }
    tally_options to;
    tally_options_init(&to);
    to.backend = o.backend;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    to.threads = o.threads ? o.threads : (int)(cores / local > 0 ? cores / local : 1);
    tally_context *ctx = NULL;
    rc = agree(tally_create(&ctx, &to) != TALLY_OK);
    if (rc) {
        cli_error("cannot start the %s backend on every rank: %s", tally_backend_name(o.backend),
                  tally_create_error());
    } else {
        array a;
        rc = agree(open_array(&o, &in, &a));
        if (rc == 0) rc = o.cmd == CLI_SCAN ? scan_array(&o, ctx, &in, &a) : reduce_array(&o, ctx, &in, &a);
    }
    tally_destroy(ctx);
    tio_input_close(&in);
    MPI_Finalize();
    return rc;
}
