/* CSV / TSV / whitespace text, parsed in parallel.
 *
 * The input is cut into blocks of ~512 KiB that end at record ends. Without quotes a record ends
 * at the next '\n'; when a block holds a '"', a sequential scan with the same quote rules as
 * the field parser (a quote opens a field only at its start, "" is an escaped quote) finds the
 * record end, so a quoted newline never splits a record. Worker threads parse blocks into one
 * typed column per selected field (int64 while every value is an integer, else double); the
 * calling thread hands the columns to the sink in input order. Line numbers are counted per
 * block and offset by the lines of the blocks before it. */
#define _GNU_SOURCE 1
#include "tally_io.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define TIO_DEFAULT_BLOCK ((size_t)512 << 10)   /* a block's column (~8 bytes per value) stays in L2 */
#define TIO_MAX_THREADS 256

typedef struct tio_col {
    int is_float;
    int scale;                 /* int64 column: values are v / 10^scale */
    size_t n, cap;
    uint64_t *v;               /* int64 or double bits, 8 bytes each */
} tio_col;

typedef struct tio_inval {
    uint64_t line;
    int field;
    int missing;
    const char *s;
    size_t len;
} tio_inval;

enum { TIO_BLK_FREE = 0, TIO_BLK_READY, TIO_BLK_BUSY, TIO_BLK_DONE };
enum { TIO_E_NONE = 0, TIO_E_NUMBER, TIO_E_QUOTE, TIO_E_MISSING, TIO_E_NUL, TIO_E_NOMEM };

typedef struct tio_block {
    int state;
    uint64_t seq;
    const char *p;             /* block text: into the mapping, or buf */
    size_t n;
    char *buf;
    size_t cap;
    uint64_t lines;            /* '\n' characters in the block */
    tio_col *cols;
    tio_inval *inv;
    size_t ninv, capinv;
    int err;
    uint64_t err_line;
    int err_field, err_nfields;
    const char *err_s;
    size_t err_len;
} tio_block;

struct tio_text_reader {
    tio_input *in;
    tio_text_options o;
    char delim;
    int ws;
    int nfields;
    size_t max_record;
    char **names;
    int *sel;
    int nsel;
    int *selpos;               /* file field -> index in sel, or -1; size maxsel + 1 */
    int maxsel;
    uint64_t start_line;       /* newlines before the data (header, blank lines) */
    uint64_t data_start;       /* mapped: where the data starts (after a BOM and the header), */
    uint64_t data_start_line;  /* and the newlines before it, whatever range o asks for */
    /* mapped input: data starts at data_pos; other input: carry holds unconsumed bytes */
    uint64_t data_pos;
    uint64_t consume_pos;      /* mapped: offset of the block being handed to the sink */
    char *carry;
    size_t carry_len, carry_cap;
    int eof;
    /* non-mapped: how far the carry has been searched for record ends (so that a long record is
     * searched once, not once per read), the quote state there and the last record end found */
    size_t scan_pos, scan_last;
    int scan_state;
    /* non-mapped: a NUL byte was read at carry offset nul_at (the text ends there) */
    int nul_seen;
    size_t nul_at;
    int nul_done;                   /* the block that ends the text at the NUL was taken */
    /* threads */
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    tio_block *blocks;
    int nblocks;
    int quit;
};

/* ---- record ends ---------------------------------------------------------------------------- */
enum { TIO_S_START, TIO_S_PLAIN, TIO_S_QUOTED, TIO_S_QUOTE_SEEN };

/* Offset just past the first record end at or after from (want_last 0), or past the last record
 * end (want_last 1); (size_t)-1 if none. p[0] starts a record. */
static size_t tio_record_end(const char *p, size_t n, char delim, int ws, size_t from,
                             int want_last)
{
    if (from >= n) return want_last ? (size_t)-1 : (size_t)-1;
    if (!want_last) {
        const char *nl = memchr(p + from, '\n', n - from);
        if (!nl) return (size_t)-1;
        if (ws || !memchr(p, '"', (size_t)(nl - p) + 1)) return (size_t)(nl - p) + 1;
    } else {
        if (ws || !memchr(p, '"', n)) {
            const char *nl = memrchr(p, '\n', n);
            return nl ? (size_t)(nl - p) + 1 : (size_t)-1;
        }
    }
    int st = TIO_S_START;
    size_t last = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        int end = 0;
        switch (st) {
        case TIO_S_START:
            if (c == '"') st = TIO_S_QUOTED;
            else if (c == '\n') end = 1;
            else if (c != delim) st = TIO_S_PLAIN;
            break;
        case TIO_S_PLAIN:
            if (c == delim) st = TIO_S_START;
            else if (c == '\n') end = 1;
            break;
        case TIO_S_QUOTED:
            if (c == '"') st = TIO_S_QUOTE_SEEN;
            break;
        default: /* TIO_S_QUOTE_SEEN */
            if (c == '"') st = TIO_S_QUOTED;
            else if (c == delim) st = TIO_S_START;
            else if (c == '\n') end = 1;
            else st = TIO_S_PLAIN;
            break;
        }
        if (end) {
            st = TIO_S_START;
            if (want_last) last = i + 1;
            else if (i >= from) return i + 1;
        }
    }
    return last;
}

/* Non-mapped input: the offset just past the last record end in the carry, or (size_t)-1.
 * Continues the quote-aware search where the previous call stopped. */
static size_t tio_carry_last_end(tio_text_reader *r)
{
    const char *p = r->carry;
    const size_t n = r->carry_len;
    size_t i = r->scan_pos;
    if (i >= n) return r->scan_last;
    int st = r->scan_state;
    const char delim = r->delim;
    if (r->ws || (st != TIO_S_QUOTED && !memchr(p + i, '"', n - i))) {
        /* no quote ahead and none open: every '\n' ends a record */
        const char *nl = memrchr(p + i, '\n', n - i);
        if (nl) r->scan_last = (size_t)(nl - p) + 1;
        char c = p[n - 1];
        r->scan_state = c == '\n' || c == delim ? TIO_S_START : TIO_S_PLAIN;
        r->scan_pos = n;
        return r->scan_last;
    }
    for (; i < n; i++) {
        char c = p[i];
        switch (st) {
        case TIO_S_START:
            if (c == '"') st = TIO_S_QUOTED;
            else if (c == '\n') r->scan_last = i + 1;
            else if (c != delim) st = TIO_S_PLAIN;
            break;
        case TIO_S_PLAIN:
            if (c == delim) st = TIO_S_START;
            else if (c == '\n') { r->scan_last = i + 1; st = TIO_S_START; }
            break;
        case TIO_S_QUOTED: {
            const char *q = memchr(p + i, '"', n - i);    /* skip the quoted text at once */
            if (!q) { i = n - 1; break; }
            i = (size_t)(q - p);
            st = TIO_S_QUOTE_SEEN;
            break;
        }
        default: /* TIO_S_QUOTE_SEEN */
            if (c == '"') st = TIO_S_QUOTED;
            else if (c == delim) st = TIO_S_START;
            else if (c == '\n') { r->scan_last = i + 1; st = TIO_S_START; }
            else st = TIO_S_PLAIN;
            break;
        }
    }
    r->scan_state = st;
    r->scan_pos = n;
    return r->scan_last;
}

/* The carry's first e bytes were taken as a block: the search state moves with the tail. */
static void tio_carry_taken(tio_text_reader *r, size_t e)
{
    r->scan_pos = r->scan_pos > e ? r->scan_pos - e : 0;
    r->scan_last = (size_t)-1;                 /* e was the last record end */
    if (r->nul_seen) r->nul_at -= e;
}

/* The text ends with the line of its first NUL byte, 4 KiB past the NUL at most (the same
 * wherever the bytes came from): the end of the text that holds nul in p[0..n). */
enum { TIO_NUL_LINE_MAX = 4096 };
static size_t tio_nul_text_end(const char *p, size_t n, const char *nul)
{
    size_t o = (size_t)(nul - p), m = n - o < TIO_NUL_LINE_MAX ? n - o : TIO_NUL_LINE_MAX;
    const char *nl = memchr(nul, '\n', m);
    return nl ? (size_t)(nl - p) + 1 : o + m;
}

/* ---- fields --------------------------------------------------------------------------------- */
typedef struct tio_field {
    const char *s;
    size_t len;
    int bad;                   /* quoted with junk after the closing quote, or with "" inside */
} tio_field;

enum { TIO_F_MORE = 0, TIO_F_END = 1, TIO_F_UNTERMINATED = -1 };

static inline int tio_is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* Reads the field at *pi; returns TIO_F_MORE when a delimiter follows, TIO_F_END at the end of
 * the record (the '\n' consumed) or of the text. *line counts the '\n' passed. */
static inline int tio_next_field(const tio_text_reader *r, const char *p, size_t n, size_t *pi,
                                 uint64_t *line, tio_field *f)
{
    size_t i = *pi;
    const char delim = r->delim;
    f->bad = 0;
    if (r->ws) {
        size_t s = i;
        while (i < n && p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n') i++;
        f->s = p + s;
        f->len = i - s;
        while (i < n && tio_is_blank(p[i])) i++;
        if (i >= n) { *pi = i; return TIO_F_END; }
        if (p[i] == '\n') { *pi = i + 1; (*line)++; return TIO_F_END; }
        *pi = i;
        return TIO_F_MORE;
    }
    if (i < n && p[i] == '"') {
        size_t s = ++i;
        for (;;) {
            if (i >= n) { f->s = p + s; f->len = i - s; *pi = i; return TIO_F_UNTERMINATED; }
            if (p[i] == '"') {
                if (i + 1 < n && p[i + 1] == '"') { f->bad = 1; i += 2; continue; }
                break;
            }
            if (p[i] == '\n') (*line)++;
            i++;
        }
        f->s = p + s;
        f->len = i - s;
        i++;                                   /* the closing quote */
        if (i < n && p[i] != delim && p[i] != '\n' &&
            !(p[i] == '\r' && (i + 1 == n || p[i + 1] == '\n'))) {
            f->bad = 1;                        /* junk after the closing quote */
            while (i < n && p[i] != delim && p[i] != '\n') i++;
            f->len = (size_t)(p + i - f->s);
        }
        if (i < n && p[i] == '\r' && (i + 1 == n || p[i + 1] == '\n')) i++;
    } else {
        size_t s = i;
        const char *q = p + i;
        const char *e = p + n;
        while (q < e && *q != delim && *q != '\n') q++;
        i = (size_t)(q - p);
        f->s = p + s;
        f->len = i - s;
        if (f->len && f->s[f->len - 1] == '\r' && (i == n || p[i] == '\n')) f->len--;
    }
    if (i >= n) { *pi = i; return TIO_F_END; }
    if (p[i] == '\n') { *pi = i + 1; (*line)++; return TIO_F_END; }
    *pi = i + 1;                               /* the delimiter */
    return TIO_F_MORE;
}

/* 1 if the line at p[i] is blank (only spaces, tabs, CR); *next gets the offset after it. */
static inline int tio_blank_line(const char *p, size_t n, size_t i, size_t *next)
{
    while (i < n && tio_is_blank(p[i])) i++;
    if (i >= n) { *next = n; return 1; }
    if (p[i] == '\n') { *next = i + 1; return 1; }
    return 0;
}

/* ---- parsing one block ---------------------------------------------------------------------- */

static const int64_t tio_pow10_i64[19] = {
    1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000, 10000000000,
    100000000000, 1000000000000, 10000000000000, 100000000000000, 1000000000000000,
    10000000000000000, 100000000000000000, 1000000000000000000};

/* The common field, fused with splitting: [+-]digits[.digits] with at most 18 digits and no
 * exponent, returned exactly as an integer and its count of decimals ("12.50" -> 1250, 2),
 * as tio_parse_number_scaled does. Returns TIO_NUM_INVALID when the text is anything else:
 * the caller then takes the general path. */
static inline tio_num_kind tio_fast_number(const char *p, const char *e, const char **stop,
                                           int64_t *iv, int *scale)
{
    const char *q = p;
    int neg = 0;
    if (q < e && (*q == '-' || *q == '+')) {
        neg = *q == '-';
        q++;
    }
    const char *d0 = q;
    uint64_t m = 0;
    while (q < e && (unsigned)(*q - '0') < 10) {
        m = m * 10 + (uint64_t)(*q - '0');
        q++;
    }
    size_t nint = (size_t)(q - d0), nfrac = 0;
    if (q < e && *q == '.') {
        q++;
        const char *f0 = q;
        while (q < e && (unsigned)(*q - '0') < 10) {
            m = m * 10 + (uint64_t)(*q - '0');
            q++;
        }
        nfrac = (size_t)(q - f0);
        if (nfrac == 0 || (neg && m == 0)) return TIO_NUM_INVALID;   /* "5.", "-0.0": general */
    }
    if (nint + nfrac == 0 || nint + nfrac > 18) return TIO_NUM_INVALID;
    if (q < e && (*q == 'e' || *q == 'E')) return TIO_NUM_INVALID;
    *iv = neg ? -(int64_t)m : (int64_t)m;
    *scale = (int)nfrac;
    *stop = q;
    return TIO_NUM_INT;
}

static int tio_col_push_slow(tio_col *c, int is_float, int scale, int64_t iv, double dv);

/* Appends one value: an exact decimal iv / 10^scale (is_float 0) or a double. */
static inline int tio_col_push(tio_col *c, int is_float, int scale, int64_t iv, double dv)
{
    if (c->n < c->cap && !is_float && !c->is_float && scale == c->scale) {
        c->v[c->n++] = (uint64_t)iv;
        return 0;
    }
    if (c->n < c->cap && is_float && c->is_float) {
        memcpy(&c->v[c->n++], &dv, 8);
        return 0;
    }
    return tio_col_push_slow(c, is_float, scale, iv, dv);
}

static void tio_col_to_float(tio_col *c)
{
    for (size_t k = 0; k < c->n; k++) {
        double d = tio_decimal_to_double((int64_t)c->v[k], c->scale);
        memcpy(&c->v[k], &d, 8);
    }
    c->is_float = 1;
}

/* a * 10^k without overflow, or 0 */
static int tio_scale_up(int64_t a, int k, int64_t *out)
{
    if (k == 0) { *out = a; return 1; }
    int64_t f = tio_pow10_i64[k];
    if (a > INT64_MAX / f || a < INT64_MIN / f) return 0;
    *out = a * f;
    return 1;
}

static int tio_col_push_slow(tio_col *c, int is_float, int scale, int64_t iv, double dv)
{
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 4096;
        uint64_t *nv = realloc(c->v, nc * sizeof *nv);
        if (!nv) return -1;
        c->v = nv;
        c->cap = nc;
    }
    if (c->n == 0 && !c->is_float) c->scale = is_float ? 0 : scale;
    if (!c->is_float && !is_float) {
        int64_t m = 0;
        if (scale <= c->scale) {                       /* 1.5 into a column of cents: 150 */
            if (tio_scale_up(iv, c->scale - scale, &m)) {
                c->v[c->n++] = (uint64_t)m;
                return 0;
            }
        } else {                                       /* more decimals: rescale the block */
            size_t k = 0;
            int up = scale - c->scale;
            for (; k < c->n; k++)
                if (!tio_scale_up((int64_t)c->v[k], up, &m)) break;
            if (k == c->n) {
                for (k = 0; k < c->n; k++) {
                    tio_scale_up((int64_t)c->v[k], up, &m);
                    c->v[k] = (uint64_t)m;
                }
                c->scale = scale;
                c->v[c->n++] = (uint64_t)iv;
                return 0;
            }
        }
        /* does not fit int64: the block turns float */
    }
    if (!c->is_float) tio_col_to_float(c);
    double d = is_float ? dv : tio_decimal_to_double(iv, scale);
    memcpy(&c->v[c->n++], &d, 8);
    return 0;
}

static int tio_add_invalid(tio_block *b, uint64_t line, int field, const char *s, size_t len,
                           int missing)
{
    if (b->ninv == b->capinv) {
        size_t nc = b->capinv ? b->capinv * 2 : 16;
        tio_inval *ni = realloc(b->inv, nc * sizeof *ni);
        if (!ni) return -1;
        b->inv = ni;
        b->capinv = nc;
    }
    b->inv[b->ninv++] = (tio_inval){line, field, missing, s, len};
    return 0;
}

static void tio_parse_block(const tio_text_reader *r, tio_block *b)
{
    const char *p = b->p;
    const size_t n = b->n;
    size_t i = 0;
    uint64_t line = 0;
    const int skip = r->o.skip_invalid;
    int has_quotes = r->ws ? 0 : -1;           /* -1: not looked yet */
    b->err = TIO_E_NONE;
    b->ninv = 0;
    for (int k = 0; k < r->nsel; k++) {
        b->cols[k].n = 0;
        b->cols[k].is_float = 0;
        b->cols[k].scale = 0;
    }
    /* one column of plain numbers, one per line: the common case gets its own loop */
    /* (a quoted or odd line falls through to the general path, one record at a time) */
    const int one_column = r->nsel == 1 && r->sel[0] == 0 &&
                           r->nfields == 1;
    const int one_field = !one_column && !r->ws && r->nsel == 1;
    /* A NUL byte is never text: the fast loops stop before the record that holds it, and the
     * general path reports it in whichever field it is, selected or not. */
    const char *const nulp = memchr(p, '\0', n);
    const size_t fast_end = nulp ? (size_t)(nulp - p) : n;
    while (i < n) {
        size_t next;
        if (one_column) {
            tio_col *c = &b->cols[0];
            /* the column's fields in locals: stores through v could alias them otherwise */
            uint64_t *v = c->v;
            size_t cn = c->n, cap = c->is_float ? 0 : c->cap;
            int cscale = c->scale;
            const char *q = p + i, *const e = p + fast_end;
            uint64_t lines = 0;
            while (q < e) {
                const char *stop;
                int64_t iv = 0;
                int scale = 0;
                tio_num_kind kind = tio_fast_number(q, e, &stop, &iv, &scale);
                if (kind == TIO_NUM_INVALID || stop >= e || *stop != '\n') break;
                if (cn < cap && scale == cscale) {
                    v[cn++] = (uint64_t)iv;
                } else {
                    c->n = cn;
                    if (tio_col_push_slow(c, 0, scale, iv, 0.0) != 0) goto nomem;
                    v = c->v;
                    cn = c->n;
                    cap = c->is_float ? 0 : c->cap;
                    cscale = c->scale;
                }
                lines++;
                q = stop + 1;
            }
            c->n = cn;
            line += lines;
            i = (size_t)(q - p);
            if (i >= n) break;
        } else if (one_field) {
            /* one field of several (-f price): skip to it, parse it, skip the rest of the line;
             * a quote, a short line or an odd value sends that line to the general path */
            tio_col *c = &b->cols[0];
            const char *q = p + i, *const e = p + fast_end;
            const char delim = r->delim;
            const int target = r->sel[0];
            uint64_t lines = 0;
            while (q < e) {
                const char *t = q;
                int f = 0;
                for (; f < target; f++) {
                    while (t < e && *t != delim && *t != '\n' && *t != '"') t++;
                    if (t >= e || *t != delim) break;
                    t++;
                }
                if (f < target) break;
                const char *stop;
                int64_t iv = 0;
                int scale = 0;
                if (tio_fast_number(t, e, &stop, &iv, &scale) == TIO_NUM_INVALID || stop >= e) break;
                const char *nl = stop;
                if (*nl == delim) {
                    while (nl < e && *nl != '\n' && *nl != '"') nl++;
                    if (nl >= e || *nl != '\n') break;
                } else if (*nl == '\r' && nl + 1 < e && nl[1] == '\n') {
                    nl++;
                } else if (*nl != '\n') {
                    break;
                }
                if (c->n < c->cap && !c->is_float && scale == c->scale) {
                    c->v[c->n++] = (uint64_t)iv;
                } else if (tio_col_push_slow(c, 0, scale, iv, 0.0) != 0) {
                    goto nomem;
                }
                lines++;
                q = nl + 1;
            }
            line += lines;
            i = (size_t)(q - p);
            if (i >= n) break;
        }
        if (tio_blank_line(p, n, i, &next)) {
            if (next <= n && next > 0 && p[next - 1] == '\n') line++;
            i = next;
            continue;
        }
        uint64_t rec_line = line;
        if (r->ws) while (i < n && tio_is_blank(p[i])) i++;
        int field = 0, got = 0, rc;
        for (;;) {
            tio_field f;
            const int want = field <= r->maxsel && r->selpos[field] >= 0;
            if (want && i < n && p[i] != '"') {
                const char *stop;
                int64_t iv = 0;
                int scale = 0;
                tio_num_kind kind = tio_fast_number(p + i, p + n, &stop, &iv, &scale);
                if (kind != TIO_NUM_INVALID) {
                    size_t j = (size_t)(stop - p);
                    int term;
                    if (r->ws)
                        term = j == n || p[j] == ' ' || p[j] == '\t' || p[j] == '\r' || p[j] == '\n';
                    else
                        term = j == n || p[j] == r->delim || p[j] == '\n' ||
                               (p[j] == '\r' && (j + 1 == n || p[j + 1] == '\n'));
                    if (term) {
                        if (tio_col_push(&b->cols[r->selpos[field]], 0, scale, iv, 0.0) != 0)
                            goto nomem;
                        got++;
                        if (r->ws) {
                            while (j < n && tio_is_blank(p[j])) j++;
                        } else if (j < n && p[j] == '\r') {
                            j++;
                        }
                        if (j >= n) {
                            i = j;
                            rc = TIO_F_END;
                        } else if (p[j] == '\n') {
                            i = j + 1;
                            line++;
                            rc = TIO_F_END;
                        } else {
                            i = r->ws ? j : j + 1;
                            rc = TIO_F_MORE;
                        }
                        goto field_done;
                    }
                }
            }
            size_t field_start = i;
            rc = tio_next_field(r, p, n, &i, &line, &f);
            if (nulp && (size_t)(nulp - p) >= field_start && (size_t)(nulp - p) < i + (i == n)) {
                b->err = TIO_E_NUL;
                b->err_line = rec_line;
                b->err_field = field + 1;
                b->err_s = f.s;
                /* a quoted field that runs on past the NUL's line (where a pipe's text ends) or
                 * to the block's end: its excerpt stops just after the NUL, the same however
                 * the text arrived */
                const int quoted = !r->ws && p[field_start] == '"';
                const int cut = quoted && (rc == TIO_F_UNTERMINATED ||
                                           f.s + f.len >= p + tio_nul_text_end(p, n, nulp));
                b->err_len = cut ? (size_t)(nulp + 1 - f.s) : f.len;
                b->lines = line;
                return;
            }
            if (rc == TIO_F_UNTERMINATED) {
                b->err = TIO_E_QUOTE;
                b->err_line = rec_line;
                b->err_field = field + 1;
                b->err_s = f.s;
                b->err_len = f.len;
                b->lines = line;
                return;
            }
            if (want) {
                int64_t iv = 0;
                double dv = 0;
                int scale = 0;
                tio_num_kind kind = f.bad ? TIO_NUM_INVALID
                                          : tio_parse_number_scaled(f.s, f.len, &iv, &scale, &dv);
                got++;
                if (kind == TIO_NUM_INVALID) {
                    if (!skip) {
                        b->err = TIO_E_NUMBER;
                        b->err_line = rec_line;
                        b->err_field = field + 1;
                        b->err_s = f.s;
                        b->err_len = f.len;
                        b->lines = line;
                        return;
                    }
                    if (tio_add_invalid(b, rec_line, field + 1, f.s, f.len, 0) != 0) goto nomem;
                } else if (tio_col_push(&b->cols[r->selpos[field]], kind == TIO_NUM_FLOAT, scale,
                                        iv, dv) != 0) {
                    goto nomem;
                }
            }
        field_done:
            if (rc == TIO_F_END) break;
            field++;
            if (has_quotes < 0) has_quotes = memchr(p, '"', n) != NULL;
            if (field > r->maxsel && !has_quotes) {    /* nothing more wanted on this line */
                const char *nl = memchr(p + i, '\n', n - i);
                if (nulp && nulp >= p + i && (!nl || nulp < nl)) {
                    const char *fs = p + i, *q = p + i;
                    for (; q < nulp; q++)
                        if (r->ws ? tio_is_blank(*q) : *q == r->delim) {
                            if (!r->ws || !tio_is_blank(q[1])) field++;
                            fs = q + 1;
                        }
                    const char *fe = nulp;
                    while (fe < p + n && *fe != '\n' && !(r->ws ? tio_is_blank(*fe) : *fe == r->delim))
                        fe++;
                    if (fe[-1] == '\r' && (fe == p + n || *fe == '\n')) fe--;   /* as tio_next_field */
                    b->err = TIO_E_NUL;
                    b->err_line = rec_line;
                    b->err_field = field + 1;
                    b->err_s = fs;
                    b->err_len = (size_t)(fe - fs);
                    b->lines = line;
                    return;
                }
                if (nl) {
                    i = (size_t)(nl - p) + 1;
                    line++;
                } else {
                    i = n;
                }
                break;
            }
        }
        if (got < r->nsel) {                   /* a short record: the fields past its end */
            for (int k = 0; k < r->nsel; k++) {
                if (r->sel[k] <= field) continue;
                if (!skip) {
                    b->err = TIO_E_MISSING;
                    b->err_line = rec_line;
                    b->err_field = r->sel[k] + 1;
                    b->err_nfields = field + 1;
                    b->err_s = "";
                    b->err_len = 0;
                    b->lines = line;
                    return;
                }
                if (tio_add_invalid(b, rec_line, r->sel[k] + 1, "", 0, 1) != 0) goto nomem;
            }
        }
    }
    b->lines = line;
    return;
nomem:
    b->err = TIO_E_NOMEM;
    b->lines = line;
}

/* ---- open ----------------------------------------------------------------------------------- */
static int tio_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

/* The bytes of the not-yet-consumed input we can look at: the mapping, or carry. */
static void tio_view(const tio_text_reader *r, const char **p, size_t *n)
{
    if (r->in->mapped) {
        *p = (const char *)r->in->data + r->data_pos;
        *n = (size_t)(r->in->size - r->data_pos);
    } else {
        *p = r->carry;
        *n = r->carry_len;
    }
}

/* Non-mapped input: reads more into carry (past a NUL byte too: tio_fill_carry stops there).
 * Returns bytes read, 0 at end, -1 on error. */
static long long tio_read_carry(tio_text_reader *r, size_t want)
{
    if (r->eof) return 0;
    if (r->carry_cap - r->carry_len < want) {
        size_t nc = r->carry_cap ? r->carry_cap : 65536;
        while (nc - r->carry_len < want) nc *= 2;
        char *np = realloc(r->carry, nc);
        if (!np) { errno = ENOMEM; return -1; }
        r->carry = np;
        r->carry_cap = nc;
    }
    long long got = tio_input_read(r->in, r->carry + r->carry_len, r->carry_cap - r->carry_len);
    if (got < 0) return -1;
    if (got == 0) r->eof = 1;
    const char *z = got > 0 && !r->nul_seen ? memchr(r->carry + r->carry_len, '\0', (size_t)got) : NULL;
    if (z) {
        r->nul_seen = 1;
        r->nul_at = (size_t)(z - r->carry);
    }
    r->carry_len += (size_t)got;
    return got;
}

/* Non-mapped input: reads more into carry, up to the first NUL byte's read. */
static long long tio_fill_carry(tio_text_reader *r, size_t want)
{
    return r->nul_seen ? 0 : tio_read_carry(r, want);
}

/* Non-mapped input after a NUL byte: reads on until its line is whole (tio_nul_text_end). */
static int tio_read_nul_line(tio_text_reader *r)
{
    while (r->nul_seen && !r->eof && r->carry_len - r->nul_at < TIO_NUL_LINE_MAX &&
           !memchr(r->carry + r->nul_at, '\n', r->carry_len - r->nul_at))
        if (tio_read_carry(r, TIO_NUL_LINE_MAX) < 0) return -1;
    return 0;
}

int tio_text_open(tio_text_reader **out, tio_input *in, const tio_text_options *opts, char *err,
                  size_t errlen)
{
    *out = NULL;
    tio_text_reader *r = calloc(1, sizeof *r);
    if (!r) { snprintf(err, errlen, "%s: out of memory", in->name); return -1; }
    r->in = in;
    r->o = *opts;
    if (r->o.block_size == 0) r->o.block_size = TIO_DEFAULT_BLOCK;
    if (r->o.block_size < 64) r->o.block_size = 64;
    r->max_record = r->o.max_record ? r->o.max_record : TIO_DEFAULT_MAX_RECORD;
    r->scan_last = (size_t)-1;
    /* a UTF-8 byte order mark (spreadsheets write one) is not part of the first field */
    if (in->mapped) {
        if (in->size >= 3 && memcmp(in->data, "\xEF\xBB\xBF", 3) == 0) r->data_pos = 3;
    } else {
        while (r->carry_len < 3 && !r->eof && !r->nul_seen)
            if (tio_fill_carry(r, 65536) < 0) {
                snprintf(err, errlen, "%s: %s", in->name, strerror(errno));
                tio_text_close(r);
                return -1;
            }
        if (r->carry_len >= 3 && memcmp(r->carry, "\xEF\xBB\xBF", 3) == 0) {
            memmove(r->carry, r->carry + 3, r->carry_len - 3);
            r->carry_len -= 3;
            if (r->nul_seen) r->nul_at -= 3;   /* the NUL moved with the text (it is past the mark) */
        }
    }
    /* the first non-blank line, for sniffing the delimiter and reading the first record */
    const char *p;
    size_t n, i = 0;
    for (;;) {
        tio_view(r, &p, &n);
        size_t e = (size_t)-1;
        i = 0;
        while (i < n) {                        /* skip blank lines */
            size_t next;
            if (!tio_blank_line(p, n, i, &next)) break;
            i = next;
        }
        if (i < n) e = tio_record_end(p + i, n - i, r->o.delim ? r->o.delim : ',',
                                      r->o.whitespace, 0, 0);
        if (r->nul_seen && tio_read_nul_line(r) < 0) {
            snprintf(err, errlen, "%s: %s", in->name, strerror(errno));
            tio_text_close(r);
            return -1;
        }
        if (e != (size_t)-1 || in->mapped || r->eof || r->nul_seen) break;
        if (r->carry_len > r->max_record) {
            snprintf(err, errlen, "%s: a record longer than %zu bytes (is this text?)", in->name,
                     r->max_record);
            tio_text_close(r);
            return -1;
        }
        /* read as much again each time: a long first record is searched O(length) in all */
        size_t goal = r->carry_len + (r->carry_len > 65536 ? r->carry_len : 65536);
        while (r->carry_len < goal && !r->eof && !r->nul_seen) {
            if (tio_fill_carry(r, goal - r->carry_len) < 0) {
                snprintf(err, errlen, "%s: %s", in->name, strerror(errno));
                tio_text_close(r);
                return -1;
            }
        }
    }
    if (r->o.whitespace) {
        r->ws = 1;
        r->delim = ' ';
    } else if (r->o.delim) {
        r->delim = r->o.delim;
    } else if (tio_ends_with(in->name, ".csv")) {
        r->delim = ',';
    } else if (tio_ends_with(in->name, ".tsv") || tio_ends_with(in->name, ".tab")) {
        r->delim = '\t';
    } else {
        const char *nl = i < n ? memchr(p + i, '\n', n - i) : NULL;
        size_t ll = nl ? (size_t)(nl - (p + i)) : n - i;
        if (memchr(p + i, ',', ll)) r->delim = ',';
        else if (memchr(p + i, '\t', ll)) r->delim = '\t';
        else if (memchr(p + i, ';', ll)) r->delim = ';';
        else { r->ws = 1; r->delim = ' '; }
    }
    /* the first record: count its fields, keep the names when it is a header */
    if (i < n) {
        uint64_t line = 0;
        for (size_t k = 0; k < i; k++) line += p[k] == '\n';
        /* a NUL byte ends the text (its line, as a pipe's text ends there): a quoted field
         * still open there is left to the parser, which reports the NUL */
        const char *nul0 = memchr(p + i, '\0', n - i);
        if (nul0) n = tio_nul_text_end(p, n, nul0);
        size_t j = i;
        if (r->ws) while (j < n && tio_is_blank(p[j])) j++;
        int cap = 0;
        for (;;) {
            tio_field f;
            int rc = tio_next_field(r, p, n, &j, &line, &f);
            if (rc == TIO_F_UNTERMINATED && nul0) {
                if (!r->o.header) r->nfields++;    /* a header: its NUL is reported below */
                break;
            }
            if (rc == TIO_F_UNTERMINATED) {
                snprintf(err, errlen, "%s:%llu:%d: unterminated quoted field", in->name,
                         (unsigned long long)(line + 1), r->nfields + 1);
                tio_text_close(r);
                return -1;
            }
            if (r->o.header) {
                if (r->nfields == cap) {
                    cap = cap ? cap * 2 : 16;
                    char **nn = realloc(r->names, (size_t)cap * sizeof *nn);
                    if (!nn) { snprintf(err, errlen, "out of memory"); tio_text_close(r); return -1; }
                    r->names = nn;
                }
                /* unescape "" and trim blanks */
                char *name = malloc(f.len + 1);
                if (!name) { snprintf(err, errlen, "out of memory"); tio_text_close(r); return -1; }
                size_t m = 0;
                for (size_t k = 0; k < f.len; k++) {
                    if (f.s[k] == '"' && k + 1 < f.len && f.s[k + 1] == '"') k++;
                    name[m++] = f.s[k];
                }
                while (m && tio_is_blank(name[m - 1])) m--;
                name[m] = '\0';
                size_t lead = 0;
                while (name[lead] == ' ' || name[lead] == '\t') lead++;
                if (lead) memmove(name, name + lead, m - lead + 1);
                r->names[r->nfields] = name;
            }
            r->nfields++;
            if (rc == TIO_F_END) break;
        }
        const char *nul = memchr(p, '\0', j);
        if (r->o.header && nul) {
            uint64_t nl = 0;
            for (const char *q = p; q < nul; q++) nl += *q == '\n';
            snprintf(err, errlen, "%s:%llu: a NUL byte in the header (binary data is not text)",
                     in->name, (unsigned long long)(nl + 1));
            tio_text_close(r);
            return -1;
        }
        if (r->o.header) {
            r->start_line = line;
            if (in->mapped) {
                r->data_pos += (uint64_t)j;
            } else {
                memmove(r->carry, r->carry + j, r->carry_len - j);
                r->carry_len -= j;
                r->scan_pos = 0;
                r->scan_state = TIO_S_START;
                if (r->nul_seen) r->nul_at -= j;
            }
        }
    }
    r->data_start = r->data_pos;
    r->data_start_line = r->start_line;
    if (in->mapped && r->o.start > r->data_pos) {
        r->data_pos = r->o.start < in->size ? r->o.start : in->size;
        r->start_line = r->o.start_line;
    }
    *out = r;
    return 0;
}

int tio_text_field_count(const tio_text_reader *r) { return r->nfields; }

const char *tio_text_field_name(const tio_text_reader *r, int i)
{
    return r->names && i >= 0 && i < r->nfields ? r->names[i] : NULL;
}

char tio_text_delimiter(const tio_text_reader *r) { return r->delim; }

uint64_t tio_text_position(const tio_text_reader *r) { return r->consume_pos; }

uint64_t tio_text_record_start(const tio_input *in, uint64_t off)
{
    if (off == 0 || !in->mapped) return 0;
    if (off >= in->size) return in->size;
    const char *p = (const char *)in->data;
    if (p[off - 1] == '\n') return off;
    const char *nl = memchr(p + off, '\n', (size_t)(in->size - off));
    return nl ? (uint64_t)(nl - p) + 1 : in->size;
}

/* ---- splitting a mapped input among readers ---------------------------------------------------
 * The quote state machine of tio_record_end, with the start of a record told apart from the
 * start of another field (both read the next byte alike). Byte classes: other, delimiter, quote,
 * newline. In whitespace mode there is no quoting: a quote is any other byte. */
enum { TIO_C_OTHER, TIO_C_DELIM, TIO_C_QUOTE, TIO_C_NEWLINE };
static const unsigned char tio_ts_next[TIO_TS_COUNT][4] = {
    /*                 other         delim         quote              newline */
    [TIO_TS_RECORD] = {TIO_TS_PLAIN, TIO_TS_FIELD, TIO_TS_QUOTED,     TIO_TS_RECORD},
    [TIO_TS_FIELD] = {TIO_TS_PLAIN, TIO_TS_FIELD, TIO_TS_QUOTED,     TIO_TS_RECORD},
    [TIO_TS_PLAIN] = {TIO_TS_PLAIN, TIO_TS_FIELD, TIO_TS_PLAIN,      TIO_TS_RECORD},
    [TIO_TS_QUOTED] = {TIO_TS_QUOTED, TIO_TS_QUOTED, TIO_TS_QUOTE_SEEN, TIO_TS_QUOTED},
    [TIO_TS_QUOTE_SEEN] = {TIO_TS_PLAIN, TIO_TS_FIELD, TIO_TS_QUOTED,  TIO_TS_RECORD},
};

static void tio_ts_classes(const tio_text_reader *r, unsigned char cls[256])
{
    memset(cls, TIO_C_OTHER, 256);
    if (!r->ws) {
        cls[(unsigned char)r->delim] = TIO_C_DELIM;
        cls['"'] = TIO_C_QUOTE;
    }
    cls['\n'] = TIO_C_NEWLINE;
}

static uint64_t tio_count_newlines(const char *p, size_t n)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++) c += p[i] == '\n';   /* vectorised */
    return c;
}

/* The state after a run of bytes without quotes, the last being c, from any state but inside
 * quotes (which such a run does not leave): only the last byte counts. */
static unsigned char tio_ts_after(const unsigned char cls[256], char c)
{
    unsigned char k = cls[(unsigned char)c];
    return k == TIO_C_NEWLINE ? TIO_TS_RECORD : k == TIO_C_DELIM ? TIO_TS_FIELD : TIO_TS_PLAIN;
}

uint64_t tio_text_data_start(const tio_text_reader *r, uint64_t *lines_before)
{
    if (lines_before) *lines_before = r->data_start_line;
    return r->in->mapped ? r->data_start : 0;
}

void tio_text_state_map(const tio_text_reader *r, uint64_t from, uint64_t to,
                        unsigned char map[TIO_TS_COUNT], uint64_t *newlines)
{
    for (int s = 0; s < TIO_TS_COUNT; s++) map[s] = (unsigned char)s;
    if (newlines) *newlines = 0;
    if (!r->in->mapped) return;
    if (to > r->in->size) to = r->in->size;
    if (from >= to) return;
    unsigned char cls[256];
    tio_ts_classes(r, cls);
    const char *p = (const char *)r->in->data + from;
    const size_t n = (size_t)(to - from);
    if (newlines) *newlines = tio_count_newlines(p, n);
    /* Only quotes move a lane between inside and outside quotes; between two quotes a lane
     * outside quotes ends in the state the last byte gives. So the five lanes step from quote
     * to quote (memchr), not byte by byte. Whitespace mode has no quotes. */
    size_t pos = 0;
    for (;;) {
        const char *q = r->ws ? NULL : memchr(p + pos, '"', n - pos);
        size_t stop = q ? (size_t)(q - p) : n;
        if (stop > pos) {
            unsigned char after = tio_ts_after(cls, p[stop - 1]);
            for (int s = 0; s < TIO_TS_COUNT; s++)
                if (map[s] != TIO_TS_QUOTED) map[s] = after;
        }
        if (!q) break;
        for (int s = 0; s < TIO_TS_COUNT; s++) map[s] = tio_ts_next[map[s]][TIO_C_QUOTE];
        pos = stop + 1;
    }
}

uint64_t tio_text_next_record(const tio_text_reader *r, uint64_t off, int state,
                              uint64_t *newlines)
{
    if (newlines) *newlines = 0;
    if (!r->in->mapped) return 0;
    const uint64_t size = r->in->size;
    if (off >= size) return size;
    if (state == TIO_TS_RECORD) return off;
    unsigned char cls[256];
    tio_ts_classes(r, cls);
    const char *p = (const char *)r->in->data;
    uint64_t lines = 0;
    for (uint64_t i = off; i < size; i++) {
        if (state == TIO_TS_QUOTED) {          /* skip the quoted text at once */
            const char *qt = memchr(p + i, '"', (size_t)(size - i));
            uint64_t stop = qt ? (uint64_t)(qt - p) : size;
            lines += tio_count_newlines(p + i, (size_t)(stop - i));
            if (!qt) break;
            i = stop;
        }
        unsigned char c = cls[(unsigned char)p[i]];
        state = tio_ts_next[state][c];
        if (c == TIO_C_NEWLINE) {
            lines++;
            if (state == TIO_TS_RECORD) {
                if (newlines) *newlines = lines;
                return i + 1;
            }
        }
    }
    if (newlines) *newlines = lines;
    return size;
}

int tio_text_select(tio_text_reader *r, const int *fields, int nfields)
{
    free(r->sel);
    free(r->selpos);
    r->sel = NULL;
    r->selpos = NULL;
    r->nsel = 0;
    r->maxsel = -1;
    if (nfields <= 0) return 0;
    r->sel = malloc((size_t)nfields * sizeof *r->sel);
    int mx = 0;
    for (int k = 0; k < nfields; k++) {
        if (fields[k] < 0) return -1;
        if (fields[k] > mx) mx = fields[k];
    }
    r->selpos = malloc(((size_t)mx + 1) * sizeof *r->selpos);
    if (!r->sel || !r->selpos) return -1;
    for (int k = 0; k <= mx; k++) r->selpos[k] = -1;
    for (int k = 0; k < nfields; k++) {
        r->sel[k] = fields[k];
        if (r->selpos[fields[k]] < 0) r->selpos[fields[k]] = k;
    }
    r->nsel = nfields;
    r->maxsel = mx;
    return 0;
}

/* ---- run ------------------------------------------------------------------------------------ */
/* Fills b with the next block; 0 at end of input, 1 done, -1 on a read error. */
static int tio_next_block(tio_text_reader *r, tio_block *b)
{
    const size_t B = r->o.block_size;
    if (r->in->mapped) {
        uint64_t size = r->in->size;
        if (r->o.limit && r->o.limit < size) size = r->o.limit;
        if (r->data_pos >= size) return 0;
        const char *p = (const char *)r->in->data + r->data_pos;
        size_t n = (size_t)(size - r->data_pos);
        size_t e = n;
        if (n > B) {
            e = tio_record_end(p, n, r->delim, r->ws, B, 0);
            if (e == (size_t)-1) e = n;
        }
        b->p = p;
        b->n = e;
        r->data_pos += e;
        return 1;
    }
    /* read until the carry holds a block's worth and a record end, or the input ends */
    if (r->nul_done) return 0;                 /* the block with the NUL byte went already */
    for (;;) {
        if (r->carry_len >= B || r->eof || r->nul_seen) {
            size_t e;
            if (r->nul_seen) {
                /* the text ends at a NUL byte: nothing after what was read is read; the block
                 * ends with the NUL's line (if it ended), and the parser reports it */
                /* the NUL's line is read on to its end: the error's excerpt must not depend on
                 * where a read happened to end */
                if (tio_read_nul_line(r) < 0) return -1;
                e = tio_nul_text_end(r->carry, r->carry_len, r->carry + r->nul_at);
                r->eof = 1;
                r->nul_done = 1;
            } else {
                e = r->eof ? r->carry_len : tio_carry_last_end(r);
            }
            if (e == (size_t)-1 && r->carry_len > r->max_record) {
                errno = E2BIG;                 /* an endless record: the caller says so */
                return -1;
            }
            if (e != (size_t)-1) {
                if (e == 0) return 0;
                /* the carry becomes the block; the block's old buffer takes the tail */
                size_t tail = r->carry_len - e;
                if (b->cap < tail || !b->buf) {
                    char *nb = realloc(b->buf, tail ? tail : 1);
                    if (!nb) { errno = ENOMEM; return -1; }
                    b->buf = nb;
                    b->cap = tail ? tail : 1;
                }
                memcpy(b->buf, r->carry + e, tail);
                tio_carry_taken(r, e);
                char *blk = r->carry;
                size_t blk_cap = r->carry_cap;
                r->carry = b->buf;
                r->carry_cap = b->cap;
                r->carry_len = tail;
                b->buf = blk;
                b->cap = blk_cap;
                b->p = b->buf;
                b->n = e;
                return 1;
            }
        }
        size_t want = r->carry_len >= B ? r->carry_len : B - r->carry_len;
        if (tio_fill_carry(r, want) < 0) return -1;
    }
}

static void tio_read_error(const tio_text_reader *r, char *err, size_t errlen)
{
    if (errno == E2BIG)
        snprintf(err, errlen, "%s: a record longer than %zu bytes (is this text?)", r->in->name,
                 r->max_record);
    else
        snprintf(err, errlen, "%s: %s", r->in->name, strerror(errno));
}

static void *tio_worker(void *arg)
{
    tio_text_reader *r = arg;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        tio_block *pick = NULL;
        for (int k = 0; k < r->nblocks; k++) {
            tio_block *b = &r->blocks[k];
            if (b->state == TIO_BLK_READY && (!pick || b->seq < pick->seq)) pick = b;
        }
        if (!pick) {
            if (r->quit) break;
            pthread_cond_wait(&r->work_cv, &r->mu);
            continue;
        }
        pick->state = TIO_BLK_BUSY;
        pthread_mutex_unlock(&r->mu);
        tio_parse_block(r, pick);
        pthread_mutex_lock(&r->mu);
        pick->state = TIO_BLK_DONE;
        pthread_cond_broadcast(&r->done_cv);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

size_t tio_utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t k;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) { k = 2; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { k = 3; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { k = 4; min = 0x10000; }
    else return 0;
    if (n < k) return 0;
    unsigned cp = c & (0x7f >> k);
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return k;
}

/* The field as it appears in messages: the first 100 bytes, with control bytes, backslashes and
 * bytes that are not UTF-8 escaped (a NUL must not cut the message short). */
static void tio_format_text(char *dst, size_t dstlen, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t show = len > 100 ? 100 : len, o = 0;
    for (size_t i = 0; i < show && o + 8 < dstlen;) {
        unsigned c = u[i];
        size_t k = c >= 0x20 && c != 0x7f && c != '\\' ? tio_utf8_len(u + i, len - i) : 0;
        if (k) {
            memcpy(dst + o, s + i, k);
            o += k;
            i += k;
            continue;
        }
        if (c == '\n') o += (size_t)snprintf(dst + o, dstlen - o, "\\n");
        else if (c == '\t') o += (size_t)snprintf(dst + o, dstlen - o, "\\t");
        else if (c == '\r') o += (size_t)snprintf(dst + o, dstlen - o, "\\r");
        else if (c == '\\') o += (size_t)snprintf(dst + o, dstlen - o, "\\\\");
        else o += (size_t)snprintf(dst + o, dstlen - o, "\\x%02x", c);
        i++;
    }
    if (show < len && o + 4 <= dstlen) o += (size_t)snprintf(dst + o, dstlen - o, "...");
    dst[o < dstlen ? o : dstlen - 1] = '\0';
}

/* Hands one parsed block to the sink. 0, or the run's return value. */
static int tio_consume(tio_text_reader *r, tio_block *b, uint64_t first_line,
                       const tio_text_sink *sink, char *err, size_t errlen)
{
    char text[512];
    if (r->in->mapped) r->consume_pos = (uint64_t)(b->p - (const char *)r->in->data);
    /* the skipped values first: a block stops at its first fatal error, so all came before it */
    if (sink->invalid)
        for (size_t k = 0; k < b->ninv; k++)
            sink->invalid(sink->user, first_line + b->inv[k].line, b->inv[k].field, b->inv[k].s,
                          b->inv[k].len, b->inv[k].missing);
    switch (b->err) {
    case TIO_E_NUMBER:
        tio_format_text(text, sizeof text, b->err_s, b->err_len);
        snprintf(err, errlen, "%s:%llu:%d: '%s' is not a number", r->in->name,
                 (unsigned long long)(first_line + b->err_line), b->err_field, text);
        return 1;
    case TIO_E_QUOTE:
        snprintf(err, errlen, "%s:%llu:%d: unterminated quoted field", r->in->name,
                 (unsigned long long)(first_line + b->err_line), b->err_field);
        return 1;
    case TIO_E_MISSING:
        snprintf(err, errlen, "%s:%llu:%d: missing field (the line has %d field%s)", r->in->name,
                 (unsigned long long)(first_line + b->err_line), b->err_field, b->err_nfields,
                 b->err_nfields == 1 ? "" : "s");
        return 1;
    case TIO_E_NUL:
        tio_format_text(text, sizeof text, b->err_s, b->err_len);
        snprintf(err, errlen, "%s:%llu:%d: '%s' is not a number (a NUL byte: binary data is not "
                 "text)", r->in->name, (unsigned long long)(first_line + b->err_line),
                 b->err_field, text);
        return 1;
    case TIO_E_NOMEM:
        snprintf(err, errlen, "%s: out of memory", r->in->name);
        return -1;
    default:
        break;
    }
    for (int k = 0; k < r->nsel; k++) {
        tio_col *c = &b->cols[k];
        if (c->n && sink->values && sink->values(sink->user, k, c->is_float, c->scale, c->v, c->n) != 0)
            return 2;
    }
    return 0;
}

static int tio_run_serial(tio_text_reader *r, const tio_text_sink *sink, uint64_t line,
                          uint64_t done_bytes, char *err, size_t errlen)
{
    tio_block *b = &r->blocks[0];
    for (;;) {
        int got = tio_next_block(r, b);
        if (got < 0) { tio_read_error(r, err, errlen); return -1; }
        if (got == 0) break;
        tio_parse_block(r, b);
        int ret = tio_consume(r, b, line, sink, err, errlen);
        if (ret) return ret;
        line += b->lines;
        done_bytes += b->n;
        if (sink->progress) sink->progress(sink->user, done_bytes);
    }
    return 0;
}

static int tio_text_run_(tio_text_reader *r, const tio_text_sink *sink, char *err, size_t errlen)
{
    int threads = r->o.threads;
    if (threads <= 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        threads = nc > 0 ? (int)nc : 1;
    }
    if (threads > TIO_MAX_THREADS) threads = TIO_MAX_THREADS;
    /* a small input is not worth threads */
    if (r->in->mapped && r->in->size <= r->o.block_size) threads = 1;
    int nblocks = threads == 1 ? 1 : 2 * threads;
    r->blocks = calloc((size_t)nblocks, sizeof *r->blocks);
    if (!r->blocks) { snprintf(err, errlen, "%s: out of memory", r->in->name); return -1; }
    r->nblocks = nblocks;
    for (int k = 0; k < nblocks; k++) {
        r->blocks[k].cols = calloc((size_t)(r->nsel ? r->nsel : 1), sizeof(tio_col));
        if (!r->blocks[k].cols) { snprintf(err, errlen, "%s: out of memory", r->in->name); return -1; }
    }
    uint64_t line = r->start_line + 1, done_bytes = r->data_pos;
    int ret = 0;
    if (threads == 1) return tio_run_serial(r, sink, line, done_bytes, err, errlen);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->work_cv, NULL);
    pthread_cond_init(&r->done_cv, NULL);
    pthread_t tids[TIO_MAX_THREADS];
    int started = 0;
    /* threads - 1 workers: the calling thread parses too while it waits for the next block */
    for (; started < threads - 1; started++)
        if (pthread_create(&tids[started], NULL, tio_worker, r) != 0) break;
    if (started == 0) {
        pthread_cond_destroy(&r->done_cv);
        pthread_cond_destroy(&r->work_cv);
        pthread_mutex_destroy(&r->mu);
        return tio_run_serial(r, sink, line, done_bytes, err, errlen);
    }
    uint64_t prod = 0, cons = 0;
    int input_done = 0;
    for (;;) {
        while (!input_done && prod - cons < (uint64_t)nblocks) {
            tio_block *b = &r->blocks[prod % (uint64_t)nblocks];
            int got = tio_next_block(r, b);
            if (got < 0) {
                tio_read_error(r, err, errlen);
                ret = -1;
                input_done = 1;
                break;
            }
            if (got == 0) { input_done = 1; break; }
            pthread_mutex_lock(&r->mu);
            b->seq = prod;
            b->state = TIO_BLK_READY;
            pthread_cond_broadcast(&r->work_cv);
            pthread_mutex_unlock(&r->mu);
            prod++;
        }
        if (ret || cons == prod) break;
        tio_block *b = &r->blocks[cons % (uint64_t)nblocks];
        pthread_mutex_lock(&r->mu);
        while (b->state != TIO_BLK_DONE) {
            /* the block we need first, if no worker took it yet, else any waiting block */
            tio_block *pick = b->state == TIO_BLK_READY ? b : NULL;
            for (int k = 0; !pick && k < nblocks; k++)
                if (r->blocks[k].state == TIO_BLK_READY &&
                    (!pick || r->blocks[k].seq < pick->seq))
                    pick = &r->blocks[k];
            if (!pick) {
                pthread_cond_wait(&r->done_cv, &r->mu);
                continue;
            }
            pick->state = TIO_BLK_BUSY;
            pthread_mutex_unlock(&r->mu);
            tio_parse_block(r, pick);
            pthread_mutex_lock(&r->mu);
            pick->state = TIO_BLK_DONE;
        }
        pthread_mutex_unlock(&r->mu);
        ret = tio_consume(r, b, line, sink, err, errlen);
        line += b->lines;
        done_bytes += b->n;
        pthread_mutex_lock(&r->mu);
        b->state = TIO_BLK_FREE;
        pthread_mutex_unlock(&r->mu);
        cons++;
        if (ret) break;
        if (sink->progress) sink->progress(sink->user, done_bytes);
    }
    /* stop: let running blocks finish, drop the ones not started */
    pthread_mutex_lock(&r->mu);
    for (int k = 0; k < nblocks; k++)
        if (r->blocks[k].state == TIO_BLK_READY) r->blocks[k].state = TIO_BLK_FREE;
    r->quit = 1;
    pthread_cond_broadcast(&r->work_cv);
    pthread_mutex_unlock(&r->mu);
    for (int k = 0; k < started; k++) pthread_join(tids[k], NULL);
    pthread_cond_destroy(&r->done_cv);
    pthread_cond_destroy(&r->work_cv);
    pthread_mutex_destroy(&r->mu);
    return ret;
}

int tio_text_run(tio_text_reader *r, const tio_text_sink *sink, char *err, size_t errlen)
{
    int ret = tio_text_run_(r, sink, err, errlen);
    if (ret == 0 && r->in->mapped)        /* everything has been handed over */
        r->consume_pos = r->o.limit && r->o.limit < r->in->size ? r->o.limit : r->in->size;
    return ret;
}

void tio_text_close(tio_text_reader *r)
{
    if (!r) return;
    for (int k = 0; k < r->nfields && r->names; k++) free(r->names[k]);
    free(r->names);
    free(r->sel);
    free(r->selpos);
    free(r->carry);
    if (r->blocks) {
        for (int k = 0; k < r->nblocks; k++) {
            for (int c = 0; c < (r->nsel ? r->nsel : 1); c++) free(r->blocks[k].cols[c].v);
            free(r->blocks[k].cols);
            free(r->blocks[k].buf);
            free(r->blocks[k].inv);
        }
        free(r->blocks);
    }
    free(r);
}
