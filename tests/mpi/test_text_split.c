/* Splitting a text file among readers (what tally-mpi's ranks do), without MPI: random CSV, TSV
 * and whitespace text full of quoted fields (delimiters, "" escapes and newlines inside quotes,
 * junk after a closing quote, stray quotes inside unquoted fields), CRLF, blank lines, headers,
 * a byte order mark, bad values and unterminated quotes, cut into 1..8 equal byte pieces at
 * every kind of offset. For each split:
 *   - every piece's start found by tio_text_state_map + composition + tio_text_next_record is
 *     the first record start at or after the cut, by a sequential reference parser written here
 *     independently of the reader (records as RFC 4180 reads them);
 *   - the newline counts give each piece the file's line numbers;
 *   - readers of the pieces' byte ranges hand over exactly the values (bit for bit, in order),
 *     the skipped values (line, field) and the first error (the same message, file line
 *     numbers included) as one reader of the whole file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tally_io.h"
#include "../support/check.h"


static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

/* ---- random text -------------------------------------------------------------------------- */
typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const char *s)
{
    size_t l = strlen(s);
    if (b->n + l + 1 > b->cap) {
        b->cap = (b->n + l + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, l + 1);
    b->n += l;
}

static void field(buf *b, char delim, int ws, int bad)
{
    static const char *nums[] = {"1", "-27", "3.25", "0.5", "1e3", "nan", "12345678901", "-0.125"};
    char tmp[64];
    unsigned k = (unsigned)(rnd() % (ws ? 4 : 12));
    if (k < 4 || (!bad && k >= 8)) {
        put(b, nums[rnd() % 8]);
        return;
    }
    switch (k) {
    case 4: snprintf(tmp, sizeof tmp, "\"%s\"", nums[rnd() % 8]); put(b, tmp); break;
    case 5: /* quoted text with the delimiter, escaped quotes and newlines: never a number */
        put(b, "\"a");
        for (int i = 0, m = (int)(rnd() % 6); i < m; i++) {
            static const char *bits[] = {"\n", "\"\"", "x", "\r\n", "\n\n", ""};
            put(b, bits[rnd() % 6]);
            if (rnd() % 3 == 0) { tmp[0] = delim; tmp[1] = 0; put(b, tmp); }
        }
        put(b, "\"");
        break;
    case 6: put(b, "\"7\"z"); break;                   /* junk after the closing quote */
    case 7: put(b, "ab\"c"); break;                    /* a stray quote: literal */
    case 8: put(b, ""); break;                         /* empty */
    case 9: put(b, "x y"); break;
    case 10: put(b, "\"\n\""); break;
    default: put(b, "\"\""); break;
    }
}

/* A random text: nfields per record (some records short or long when bad). */
static void make_text(buf *b, char delim, int ws, int header, int bad, int nfields, int records)
{
    b->n = 0;
    put(b, "");
    char d[2] = {delim, 0};
    if (rnd() % 8 == 0) put(b, "\xEF\xBB\xBF");
    if (rnd() % 4 == 0) put(b, "\n \n");
    if (header) {
        for (int f = 0; f < nfields; f++) {
            if (f) put(b, d);
            put(b, ws ? "h" : rnd() % 2 ? "\"h,\n\"\"x\"" : "h");
        }
        put(b, "\n");
    }
    for (int r = 0; r < records; r++) {
        int nf = nfields;
        if (bad && rnd() % 40 == 0) nf = 1 + (int)(rnd() % (unsigned)(nfields + 1));
        if (ws && rnd() % 5 == 0) put(b, "  ");
        for (int f = 0; f < nf; f++) {
            if (f) put(b, ws ? (rnd() % 3 ? " " : " \t ") : d);
            field(b, delim, ws, bad);
        }
        put(b, rnd() % 6 == 0 ? "\r\n" : "\n");
        if (rnd() % 15 == 0) put(b, rnd() % 2 ? "\n" : "  \r\n");
    }
    if (rnd() % 3 == 0 && b->n && b->p[b->n - 1] == '\n') b->p[--b->n] = 0;   /* no final newline */
    if (bad && !ws && rnd() % 6 == 0) put(b, "\"unterminated\n1\n");
}

/* ---- the reference: record starts by a sequential RFC 4180 reading -------------------------- */
/* is_start[i] = 1 when a record starts at offset i (from `from`, the data start) */
static void reference_starts(const char *p, size_t n, size_t from, char delim, int ws,
                             unsigned char *is_start)
{
    memset(is_start, 0, n + 1);
    size_t i = from;
    is_start[i] = 1;
    while (i < n) {
        /* one record: fields until a newline outside quotes */
        for (;;) {
            if (!ws && i < n && p[i] == '"') {             /* a quoted field */
                i++;
                for (;;) {
                    if (i >= n) break;
                    if (p[i] == '"') {
                        if (i + 1 < n && p[i + 1] == '"') { i += 2; continue; }
                        i++;
                        break;
                    }
                    i++;
                }
            }
            /* the rest of the field (unquoted text, or junk after a closing quote) */
            while (i < n && p[i] != '\n' && (ws || p[i] != delim)) i++;
            if (i >= n) break;
            if (p[i] == '\n') { i++; break; }
            i++;                                           /* the delimiter */
        }
        is_start[i] = 1;
    }
}

/* ---- reading whole or in pieces ----------------------------------------------------------- */
typedef struct got {
    double *v[4];
    size_t n[4], cap[4];
    uint64_t *inv;             /* line << 8 | field */
    size_t ninv, capinv;
} got;

static int on_values(void *user, int sel, int is_float, int scale, const void *vals, size_t n)
{
    got *g = user;
    if (g->n[sel] + n > g->cap[sel]) {
        g->cap[sel] = (g->n[sel] + n) * 2;
        g->v[sel] = realloc(g->v[sel], g->cap[sel] * sizeof(double));
    }
    for (size_t k = 0; k < n; k++)
        g->v[sel][g->n[sel]++] = is_float ? ((const double *)vals)[k]
                                          : tio_decimal_to_double(((const int64_t *)vals)[k], scale);
    return 0;
}

static void on_invalid(void *user, uint64_t line, int field, const char *text, size_t len,
                       int missing)
{
    (void)text, (void)len, (void)missing;
    got *g = user;
    if (g->ninv == g->capinv) {
        g->capinv = g->capinv ? 2 * g->capinv : 64;
        g->inv = realloc(g->inv, g->capinv * sizeof *g->inv);
    }
    g->inv[g->ninv++] = line << 8 | (uint64_t)field;
}

static void got_free(got *g)
{
    for (int k = 0; k < 4; k++) free(g->v[k]);
    free(g->inv);
    memset(g, 0, sizeof *g);
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Reads [start, limit) (limit 0: to the end) into g; returns tio_text_run's value (err set). */
static int read_range(tio_input *in, tio_text_options o, uint64_t start, uint64_t limit,
                      uint64_t start_line, int nsel, got *g, char *err, size_t errlen)
{
    o.start = start;
    o.limit = limit;
    o.start_line = start_line;
    tio_text_reader *r;
    if (tio_text_open(&r, in, &o, err, errlen) != 0) return -9;
    int sel[4] = {0, 1, 2, 3};
    int nf = tio_text_field_count(r);
    if (nsel > nf) nsel = nf;
    tio_text_select(r, sel, nsel);
    tio_text_sink sink = {g, on_values, on_invalid, NULL};
    int rc = tio_text_run(r, &sink, err, errlen);
    tio_text_close(r);
    return rc;
}

static void one_case(const char *name, buf *b, tio_text_options o, int nsel)
{
    tio_input in;
    tio_input_memory(&in, b->p, b->n, name);
    char err[512], err2[512];
    got whole = {0};
    tio_text_reader *r;
    if (tio_text_open(&r, &in, &o, err, sizeof err) != 0) {   /* a bad header: nothing to split */
        tio_input_close(&in);
        return;
    }
    uint64_t hdr_lines, data = tio_text_data_start(r, &hdr_lines);
    char delim = tio_text_delimiter(r);
    int ws = o.whitespace || (!o.delim && delim == ' ');
    unsigned char *is_start = malloc(b->n + 1);
    reference_starts(b->p, b->n, (size_t)data, delim, ws, is_start);
    int rc_whole = read_range(&in, o, 0, 0, 0, nsel, &whole, err, sizeof err);
    for (int pieces = 1; pieces <= 8; pieces++) {
        uint64_t size = b->n, cut[9], start[9], lines[9];
        unsigned char map[8][TIO_TS_COUNT];
        uint64_t nl[8];
        for (int k = 0; k <= pieces; k++) cut[k] = data + (size - data) * (uint64_t)k / (uint64_t)pieces;
        for (int k = 0; k < pieces; k++) tio_text_state_map(r, cut[k], cut[k + 1], map[k], &nl[k]);
        uint64_t before = hdr_lines;   /* newlines before cut[k] */
        int state = TIO_TS_RECORD;
        for (int k = 0; k < pieces; k++) {
            uint64_t extra;
            start[k] = tio_text_next_record(r, cut[k], state, &extra);
            lines[k] = before + extra;
            uint64_t want = cut[k];
            while (want < size && !is_start[want]) want++;
            CHECK(start[k] == want, "%s, %d pieces: piece %d starts at %llu, the reference at %llu "
                  "(cut %llu)", name, pieces, k, (unsigned long long)start[k],
                  (unsigned long long)want, (unsigned long long)cut[k]);
            uint64_t count = 0;
            for (uint64_t i = 0; i < start[k] && i < size; i++) count += b->p[i] == '\n';
            CHECK(start[k] >= size || lines[k] == count, "%s, %d pieces: piece %d: %llu newlines "
                  "before its start, counted %llu", name, pieces, k,
                  (unsigned long long)lines[k], (unsigned long long)count);
            before += nl[k];
            state = map[k][state];
        }
        start[pieces] = size;
        /* read each piece's records: together they are the whole file */
        got parts = {0};
        int rc = 0;
        for (int k = 0; k < pieces && rc == 0; k++) {
            uint64_t s = start[k], e = start[k + 1];
            if (s >= e) continue;                  /* an empty piece */
            rc = read_range(&in, o, s, e, lines[k], nsel, &parts, err2, sizeof err2);
        }
        CHECK(rc == rc_whole, "%s, %d pieces: run %d, whole %d", name, pieces, rc, rc_whole);
        if (rc != 0 && rc == rc_whole)
            CHECK(strcmp(err, err2) == 0, "%s, %d pieces: '%s' against '%s'", name, pieces, err2, err);
        if (rc == 0 && rc_whole == 0) {
            for (int f = 0; f < nsel; f++) {
                int same = parts.n[f] == whole.n[f];
                for (size_t i = 0; same && i < parts.n[f]; i++)
                    same = same_bits(parts.v[f][i], whole.v[f][i]);
                CHECK(same, "%s, %d pieces: field %d: %zu values, whole %zu", name, pieces, f,
                      parts.n[f], whole.n[f]);
            }
            CHECK(parts.ninv == whole.ninv && (!parts.ninv ||
                  !memcmp(parts.inv, whole.inv, parts.ninv * sizeof *parts.inv)),
                  "%s, %d pieces: %zu skipped values, whole %zu", name, pieces, parts.ninv, whole.ninv);
        }
        got_free(&parts);
    }
    got_free(&whole);
    free(is_start);
    tio_text_close(r);
    tio_input_close(&in);
}

int main(void)
{
    g_check_out = stderr;
    g_check_limit = 20;
    buf b = {0};
    char name[64];
    for (int it = 0; it < 400; it++) {
        int kind = it % 4;                 /* csv, tsv, whitespace, sniffed csv */
        char delim = kind == 1 ? '\t' : ',';
        int ws = kind == 2;
        int header = (int)(rnd() % 2), bad = it % 3 == 0, nfields = 1 + (int)(rnd() % 3);
        make_text(&b, delim, ws, header, bad, nfields, 1 + (int)(rnd() % 60));
        tio_text_options o;
        memset(&o, 0, sizeof o);
        o.delim = kind == 0 ? ',' : kind == 1 ? '\t' : 0;
        o.whitespace = ws;
        o.header = header;
        o.threads = 1 + (int)(rnd() % 2);
        o.block_size = 64 + (size_t)(rnd() % 200);
        o.skip_invalid = !bad || rnd() % 2;
        snprintf(name, sizeof name, "case%d.%s", it, kind == 1 ? "tsv" : kind == 2 ? "txt" : "csv");
        one_case(name, &b, o, nfields);
    }
    free(b.p);
    printf("test_text_split: %d checks, %d failed\n", g_pass + g_fail, g_fail);
    return g_fail != 0;
}
