/* .npy and raw binary input: the array as columns (a 2-d array has one per column, anything
 * else one), each handed to the library whole.
 *
 *   - byte order: big-endian data is swapped into a buffer;
 *   - bool (b1): any nonzero byte is true (1), as NumPy reads it;
 *   - 3-d and more: flattened in C order, as NumPy's ravel(), also when stored in Fortran order;
 *   - a pipe is read into memory (.npy: as much as the header says; raw: at most half of the
 *     machine's memory), a regular file is mapped. */
#define _GNU_SOURCE 1
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t cli_memory_cap(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return (size_t)1 << 34;
    return (size_t)pages * (size_t)page / 2;
}

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

/* A Fortran-order array of 3 or more dimensions, copied into C order. */
static uint8_t *cli_c_order(const uint8_t *src, const tio_npy_info *info)
{
    size_t es = info->elsize;
    uint8_t *dst = malloc(info->count ? info->count * es : 1);
    if (!dst || info->count == 0) return dst;
    int nd = info->ndim;
    uint64_t stride[TIO_NPY_MAX_DIMS], idx[TIO_NPY_MAX_DIMS] = {0};
    stride[0] = 1;
    for (int k = 1; k < nd; k++) stride[k] = stride[k - 1] * info->shape[k - 1];
    uint64_t off = 0;
    for (uint64_t i = 0; i < info->count; i++) {
        memcpy(dst + i * es, src + off * es, es);
        for (int k = nd - 1; k >= 0; k--) {           /* the last index runs fastest */
            off += stride[k];
            if (++idx[k] < info->shape[k]) break;
            off -= stride[k] * info->shape[k];
            idx[k] = 0;
        }
    }
    return dst;
}

/* A .npy from a pipe: the header, then as many bytes as it says (fewer: truncated). */
static int cli_read_npy_pipe(tio_input *in, uint8_t **buf, size_t *len)
{
    const uint8_t *p;
    size_t got = tio_input_peek(in, 12, &p);
    size_t hlen = got >= 10 ? (got >= 12 && p[6] >= 2 ? (size_t)p[8] | (size_t)p[9] << 8 |
                                                             (size_t)p[10] << 16 | (size_t)p[11] << 24
                                                       : (size_t)p[8] | (size_t)p[9] << 8) + 12
                            : got;
    if (hlen > ((size_t)1 << 24)) hlen = (size_t)1 << 24;
    got = tio_input_peek(in, hlen, &p);
    tio_npy_info info;
    size_t max = 0;
    if (tio_npy_parse(p, got, &info, NULL, 0) == TIO_NPY_OK) {
        if (info.count > (cli_memory_cap() - info.data_offset) / info.elsize) {
            errno = ENOMEM;
            return -1;
        }
        max = info.data_offset + info.count * info.elsize;
    }
    /* a malformed header is read whole up to the cap, then reported by the parser */
    uint8_t *b = NULL;
    size_t n = 0;
    if (max) {
        b = malloc(max ? max : 1);
        if (!b) return -1;
        while (n < max) {
            long long r = tio_input_read(in, b + n, max - n);
            if (r < 0) { free(b); return -1; }
            if (r == 0) break;
            n += (size_t)r;
        }
    } else if (tio_input_read_all(in, (size_t)1 << 24, &b, &n) != 0) {
        return -1;
    }
    *buf = b;
    *len = n;
    return 0;
}

int cli_array_open(const cli_opts *o, tio_input *in, cli_array *a)
{
    memset(a, 0, sizeof *a);
    const uint8_t *base;
    size_t len;
    if (o->dtype) {
        int is_bool, st = tio_parse_dtype(o->dtype, &a->type, &a->swap, &is_bool);
        if (st == TIO_DTYPE_AMBIGUOUS)
            return cli_usage_error("--dtype %s is ambiguous: tally's %s is 8-bit, numpy's 64-bit; "
                                   "write %s (or %c1) or %s (or <%s)", o->dtype, o->dtype,
                                   o->dtype[0] == 'i' ? "int8" : "uint8", o->dtype[0],
                                   o->dtype[0] == 'i' ? "int64" : "uint64", o->dtype);
        if (st != 0)
            return cli_usage_error("unknown --dtype '%s' (int8 uint8 i16 u16 i32 u32 i64 u64 f32 "
                                   "f64, bool, or numpy's <i4 >f8 ...)", o->dtype);
        a->is_bool = is_bool;
    }
    if (in->mapped) {
        base = in->data;
        len = (size_t)in->size;
    } else {
        int r = o->dtype ? tio_input_read_all(in, cli_memory_cap(), &a->owned, &len)
                         : cli_read_npy_pipe(in, &a->owned, &len);
        if (r != 0) {
            if ((errno == EFBIG || errno == ENOMEM) && in->is_regular)   /* mmap failed */
                cli_error("%s: cannot be mapped, and is more than fits in memory: %s", in->name,
                          strerror(errno));
            else if (errno == EFBIG || errno == ENOMEM)
                cli_error("%s: more binary data than fits in memory (%zu MiB): a pipe is read "
                          "whole; give a file instead", in->name, cli_memory_cap() >> 20);
            else
                cli_error("%s: %s", in->name, strerror(errno));
            return 1;
        }
        base = a->owned;
    }
    if (o->dtype) {
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
    a->is_bool = info.is_bool;
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
        if (info.shape[1] > (uint64_t)1 << 30) {
            cli_error("%s: %llu columns: at most 2^30", in->name, (unsigned long long)info.shape[1]);
            return 1;
        }
        a->ncols = (int)info.shape[1];
        a->fortran = info.fortran_order;
        if (a->ncols == 0) {                   /* (rows, 0): no values at all */
            a->ncols = 1;
            a->n = 0;
        }
    } else {
        a->n = info.count;                     /* 0-d: one element; 3-d and up: flattened */
        a->ncols = 1;
        if (info.ndim > 2 && info.fortran_order) {
            uint8_t *c = cli_c_order(a->data, &info);
            if (!c) { cli_error("%s: out of memory", in->name); return 1; }
            free(a->owned);
            a->owned = c;
            a->data = c;
        }
    }
    return 0;
}

/* Reads n bytes at off with pread (the file offset does not move): 0, or -1 (short: errno 0). */
static int cli_pread_all(int fd, void *buf, size_t n, uint64_t off)
{
    uint8_t *b = buf;
    while (n) {
        ssize_t r = pread(fd, b, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = 0;
            return -1;
        }
        b += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

int cli_array_probe(const cli_opts *o, tio_input *in, cli_array *a, uint64_t *offset)
{
    memset(a, 0, sizeof *a);
    if (!in->is_regular || in->fd < 0 || in->from_memory) return -1;
    if (o->dtype) {
        int is_bool;
        if (tio_parse_dtype(o->dtype, &a->type, &a->swap, &is_bool) != 0) return -1;
        a->is_bool = is_bool;
        a->elsize = tally_type_size(a->type);
        if (in->st_size % a->elsize) return -1;
        a->n = in->st_size / a->elsize;
        a->ncols = 1;
        *offset = 0;
        return 0;
    }
    uint8_t head[12];
    if (in->st_size < sizeof head || cli_pread_all(in->fd, head, sizeof head, 0) != 0) return -1;
    size_t hlen = (head[6] >= 2 ? (size_t)head[8] | (size_t)head[9] << 8 | (size_t)head[10] << 16 |
                                      (size_t)head[11] << 24
                                : (size_t)head[8] | (size_t)head[9] << 8) + 12;
    if (hlen > ((size_t)1 << 24) || hlen > in->st_size) return -1;
    uint8_t *h = malloc(hlen);
    tio_npy_info info;
    int ok = h && cli_pread_all(in->fd, h, hlen, 0) == 0 &&
             tio_npy_parse(h, hlen, &info, NULL, 0) == TIO_NPY_OK;
    free(h);
    if (!ok || info.count > (in->st_size - info.data_offset) / info.elsize) return -1;
    a->type = info.type;
    a->elsize = info.elsize;
    a->swap = info.swap;
    a->is_bool = info.is_bool;
    if (info.ndim == 2) {
        if (info.shape[1] == 0 || info.shape[1] > (uint64_t)1 << 30) return -1;
        a->n = info.shape[0];
        a->ncols = (int)info.shape[1];
        a->fortran = info.fortran_order;
        if (a->ncols > 1 && !a->fortran) return -1;  /* a column with a stride */
    } else {
        if (info.ndim > 2 && info.fortran_order) return -1;  /* to be reordered */
        a->n = info.count;
        a->ncols = 1;
    }
    *offset = info.data_offset;
    return 0;
}

void cli_array_native(const cli_array *a, void *buf, uint64_t m)
{
    if (a->swap) cli_swap(buf, buf, m, a->elsize);
    if (a->is_bool) {
        uint8_t *b = buf;
        for (uint64_t i = 0; i < m; i++) b[i] = b[i] != 0;
    }
}

void cli_array_free(cli_array *a)
{
    free(a->owned);
    a->owned = NULL;
}

const void *cli_array_rows(const cli_array *a, int c, uint64_t lo, uint64_t hi, void **owned)
{
    *owned = NULL;
    const uint64_t m = hi - lo;
    const uint8_t *src = a->data;
    int contiguous = a->ncols == 1 || a->fortran;
    if (a->fortran) src += (uint64_t)c * a->n * a->elsize;
    if (contiguous) src += lo * a->elsize;
    if (contiguous && !a->swap && !a->is_bool && ((uintptr_t)src % a->elsize) == 0) return src;
    void *buf = malloc(m ? m * a->elsize : 1);
    if (!buf) return NULL;
    if (contiguous) {
        memcpy(buf, src, m * a->elsize);
    } else {
        uint8_t *d = buf;
        size_t stride = (size_t)a->ncols * a->elsize;
        for (uint64_t i = 0; i < m; i++)
            memcpy(d + i * a->elsize, src + (lo + i) * stride + (size_t)c * a->elsize, a->elsize);
    }
    if (a->swap) cli_swap(buf, buf, m, a->elsize);
    if (a->is_bool) {
        uint8_t *b = buf;
        for (uint64_t i = 0; i < m; i++) b[i] = b[i] != 0;
    }
    *owned = buf;
    return buf;
}

int cli_reduce_array(const cli_opts *o, const cli_world *w, tally_context *ctx, tio_input *in)
{
    cli_array a;
    int rc = w->agree(w, cli_array_open(o, in, &a));
    if (rc) { cli_array_free(&a); return rc; }
    int *sel = NULL;
    int nsel = cli_select_fields(o, a.ncols, NULL, 1, 1 << 30, &sel);
    cli_table table = {0};
    if (nsel >= 0 && cli_table_init(&table, nsel, o->nops)) {
        cli_error("out of memory");
        nsel = -1;
    }
    if ((rc = w->agree(w, nsel == -1 ? 1 : nsel < 0 ? 2 : 0)) != 0) {
        cli_table_free(&table);
        free(sel);
        cli_array_free(&a);
        return rc;
    }
    cli_plan plan;
    cli_make_plan(o, 1, &plan);
    tally_reduce_options ro[2] = {{o->omit_nan, 0}, {o->omit_nan, 1}};
    int is_float = a.type == TALLY_F32 || a.type == TALLY_F64;
    if (is_float && cli_has_bitwise(o)) {
        cli_error("%s: and, or and xor need integers, and the data is %s", in->name,
                  tally_type_name(a.type));
        rc = 1;
    }
    if (!rc) cli_prefault(o, in);
    uint64_t lo, hi;
    w->rows(w, a.n, &lo, &hi);
    for (int k = 0; k < nsel && !rc; k++) {
        void *owned = NULL;
        const void *col = NULL;
        if (cli_table_name(&table, k, NULL, sel[k] + 1)) cli_error("out of memory");
        else if (!(col = cli_array_rows(&a, sel[k], lo, hi, &owned))) cli_error("%s: out of memory", in->name);
        if ((rc = w->agree(w, !col)) != 0) break;
        tally_result res[2][CLI_PLAN_MAX];
        memset(res, 0, sizeof res);
        for (int g = 0; g < 2 && rc == 0; g++) {
            if (!plan.n[g]) continue;
            tally_status s = w->reduce_many(w, ctx, a.type, col, hi - lo, plan.ops[g],
                                            (size_t)plan.n[g], &ro[g], res[g]);
            if (s != TALLY_OK && s != TALLY_ERR_EMPTY && s != TALLY_ERR_OVERFLOW &&
                s != TALLY_ERR_DOMAIN) {
                cli_error("%s: %s", in->name, tally_last_error(ctx));
                rc = 1;
            }
        }
        free(owned);
        if (!rc) cli_fill_values(o, &plan, res, a.type, cli_cell(&table, k, 0));
    }
    if (!rc && cli_input_changed(in)) rc = 1;
    if (!(rc = w->agree(w, rc))) {
        if (w->rank == 0) cli_print(o, &table);
        rc = cli_report_failures(o, in->name, &table);
    }
    cli_table_free(&table);
    free(sel);
    cli_array_free(&a);
    return rc;
}
