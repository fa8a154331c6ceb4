/* The text reader: RFC 4180 quoting (quoted delimiters, "" escapes, quoted newlines), CRLF,
 * headers, blank lines, short records, errors with file:line:field, and the same values in the
 * same order for every block size and thread count, from memory and from a pipe. */
#define _GNU_SOURCE 1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tally_io.h"

#define MAXV 400000

typedef struct got {
    int nsel;
    double *v[4];
    int is_int[4];             /* 1 while every block of the field came as integers */
    size_t n[4];
    int ninvalid;
    uint64_t inv_line[64];
    int inv_field[64];
    char err[512];
    int rc;
    int nfields;
    char names[4][32];
} got;

static int on_values(void *user, int sel, int is_float, int scale, const void *vals, size_t n)
{
    got *g = user;
    for (size_t k = 0; k < n; k++) {
        double d = is_float ? ((const double *)vals)[k]
                            : tio_decimal_to_double(((const int64_t *)vals)[k], scale);
        if (g->n[sel] < MAXV) g->v[sel][g->n[sel]++] = d;
    }
    if (is_float || scale) g->is_int[sel] = 0;
    return 0;
}

static void on_invalid(void *user, uint64_t line, int field, const char *text, size_t len,
                       int missing)
{
    (void)text, (void)len, (void)missing;
    got *g = user;
    if (g->ninvalid < 64) {
        g->inv_line[g->ninvalid] = line;
        g->inv_field[g->ninvalid] = field;
    }
    g->ninvalid++;
}

typedef struct pipe_job {
    int fd;
    const char *data;
    size_t len;
} pipe_job;

static void *writer(void *arg)
{
    pipe_job *j = arg;
    size_t off = 0;
    while (off < j->len) {
        size_t m = j->len - off < 1000 ? j->len - off : 1000;   /* small writes: many reads */
        ssize_t w = write(j->fd, j->data + off, m);
        if (w <= 0) break;
        off += (size_t)w;
    }
    close(j->fd);
    return NULL;
}

/* Parses data with the options; fields (0-based) or NULL for all. use_pipe: through a pipe. */
static void run(const char *data, size_t len, const char *name, tio_text_options o,
                const int *fields, int nfields, int use_pipe, got *g)
{
    memset(g, 0, sizeof *g);
    for (int k = 0; k < 4; k++) {
        g->v[k] = malloc(MAXV * sizeof(double));
        g->is_int[k] = 1;
    }
    tio_input in;
    pthread_t th;
    pipe_job pj;
    if (use_pipe) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pj = (pipe_job){fds[1], data, len};
        pthread_create(&th, NULL, writer, &pj);
        memset(&in, 0, sizeof in);
        in.fd = fds[0];
        in.owns_fd = 1;
        in.name = strdup(name);
    } else {
        tio_input_memory(&in, data, len, name);
    }
    tio_text_reader *r;
    g->rc = tio_text_open(&r, &in, &o, g->err, sizeof g->err);
    if (g->rc == 0) {
        g->nfields = tio_text_field_count(r);
        for (int k = 0; k < g->nfields && k < 4; k++) {
            const char *nm = tio_text_field_name(r, k);
            snprintf(g->names[k], sizeof g->names[k], "%s", nm ? nm : "");
        }
        int all[4] = {0, 1, 2, 3};
        if (!fields) {
            fields = all;
            nfields = g->nfields < 4 ? g->nfields : 4;
        }
        g->nsel = nfields;
        tio_text_select(r, fields, nfields);
        tio_text_sink sink = {g, on_values, on_invalid, NULL};
        g->rc = tio_text_run(r, &sink, g->err, sizeof g->err);
        tio_text_close(r);
    }
    if (use_pipe) {
        /* drain, so the writer can finish even after an early error */
        char tmp[4096];
        while (read(in.fd, tmp, sizeof tmp) > 0) {}
        pthread_join(th, NULL);
    }
    tio_input_close(&in);
}

static void done(got *g)
{
    for (int k = 0; k < 4; k++) free(g->v[k]);
}

static tio_text_options opts(int header, size_t block, int threads)
{
    tio_text_options o = {0};
    o.header = header;
    o.block_size = block;
    o.threads = threads;
    return o;
}

static void test_quoting(void **state)
{
    (void)state;
    const char *csv = "name,\"price, in $\",qty\r\n"
                      "\"apple, red\",1.5,3\r\n"
                      "\"say \"\"hi\"\"\",\"2.25\",4\r\n"
                      "\"multi\nline\",\"3\",\"5\"\r\n"
                      "\r\n"
                      "plain,4,6\n";
    got g;
    int f[2] = {1, 2};
    run(csv, strlen(csv), "q.csv", opts(1, 0, 1), f, 2, 0, &g);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.nfields, 3);
    assert_string_equal(g.names[1], "price, in $");
    assert_int_equal(g.n[0], 4);
    assert_true(g.v[0][0] == 1.5 && g.v[0][1] == 2.25 && g.v[0][2] == 3 && g.v[0][3] == 4);
    assert_true(g.v[1][0] == 3 && g.v[1][3] == 6);
    assert_true(g.is_int[1]);
    done(&g);
    /* the line of an error counts quoted newlines */
    const char *bad = "a,b\n\"x\ny\",1\n2,oops\n";
    int f2[1] = {1};
    run(bad, strlen(bad), "bad.csv", opts(1, 0, 1), f2, 1, 0, &g);
    assert_int_equal(g.rc, 1);
    assert_string_equal(g.err, "bad.csv:4:2: 'oops' is not a number");
    done(&g);
    const char *unterminated = "1,\"2\n3,4\n";
    run(unterminated, strlen(unterminated), "u.csv", opts(0, 0, 1), f2, 1, 0, &g);
    assert_int_not_equal(g.rc, 0);
    assert_non_null(strstr(g.err, "unterminated quoted field"));
    done(&g);
}

static void test_errors_and_skip(void **state)
{
    (void)state;
    const char *csv = "1,2\n3,x\n5\n7,8\n,9\n";
    got g;
    int f[1] = {1};
    run(csv, strlen(csv), "e.csv", opts(0, 0, 1), f, 1, 0, &g);
    assert_int_equal(g.rc, 1);
    assert_string_equal(g.err, "e.csv:2:2: 'x' is not a number");
    done(&g);
    tio_text_options o = opts(0, 0, 1);
    o.skip_invalid = 1;
    int f2[2] = {0, 1};
    run(csv, strlen(csv), "e.csv", o, f2, 2, 0, &g);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.ninvalid, 3);              /* x, the missing field, the empty field */
    assert_int_equal(g.inv_line[0], 2);
    assert_int_equal(g.inv_field[0], 2);
    assert_int_equal(g.inv_line[1], 3);
    assert_int_equal(g.inv_line[2], 5);
    assert_int_equal(g.inv_field[2], 1);
    assert_int_equal(g.n[0], 4);
    assert_int_equal(g.n[1], 3);
    done(&g);
    const char *short_rec = "1,2\n3\n";
    run(short_rec, strlen(short_rec), "s.csv", opts(0, 0, 1), f, 1, 0, &g);
    assert_int_equal(g.rc, 1);
    assert_string_equal(g.err, "s.csv:2:2: missing field (the line has 1 field)");
    done(&g);
}

static void test_delimiters(void **state)
{
    (void)state;
    got g;
    const char *tsv = "a\tb\n1\t2.5\n3\t4\n";
    run(tsv, strlen(tsv), "x.tsv", opts(1, 0, 1), NULL, 0, 0, &g);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.nfields, 2);
    assert_true(g.v[1][0] == 2.5 && g.v[1][1] == 4);
    done(&g);
    const char *ws = "  1   2.5\n\t3 4  \n\n   \n5 6\n";
    run(ws, strlen(ws), "x.txt", opts(0, 0, 1), NULL, 0, 0, &g);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.nfields, 2);
    assert_int_equal(g.n[0], 3);
    assert_true(g.v[0][2] == 5 && g.v[1][2] == 6 && g.v[1][0] == 2.5);
    done(&g);
    tio_text_options o = opts(0, 0, 1);
    o.delim = ';';
    const char *semi = "1;2\n3;4\n";
    run(semi, strlen(semi), "x", o, NULL, 0, 0, &g);
    assert_int_equal(g.rc, 0);
    assert_true(g.v[1][1] == 4);
    done(&g);
}

/* Many records with quotes, blank lines, CRLF and errors-free values: every block size and
 * thread count, memory and pipe, must give the same values in the same order. */
static void test_blocks_threads(void **state)
{
    (void)state;
    size_t cap = 8 << 20, len = 0;
    char *csv = malloc(cap);
    uint64_t x = 12345;
    int nrec = 60000;
    len += (size_t)sprintf(csv + len, "id,\"val\",note\n");
    for (int i = 0; i < nrec; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int kind = (int)((x >> 33) % 7);
        double v = (double)((x >> 20) % 100000) / 100.0;
        switch (kind) {
        case 0: len += (size_t)sprintf(csv + len, "%d,\"%.2f\",\"a\nb\"\n", i, v); break;
        case 1: len += (size_t)sprintf(csv + len, "%d,%.2f,\"x,\"\"y\"\"\"\r\n", i, v); break;
        case 2: len += (size_t)sprintf(csv + len, "%d,%.17g,plain\n\n", i, v * 1.1); break;
        default: len += (size_t)sprintf(csv + len, "%d,%.2f,\n", i, v); break;
        }
    }
    got ref;
    int f[2] = {0, 1};
    run(csv, len, "big.csv", opts(1, 1 << 30, 1), f, 2, 0, &ref);
    assert_int_equal(ref.rc, 0);
    assert_int_equal(ref.n[0], nrec);
    static const size_t blocks[] = {64, 100, 1000, 4096, 65536};
    static const int threads[] = {1, 2, 3, 8};
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            for (int use_pipe = 0; use_pipe < 2; use_pipe++) {
                got g;
                run(csv, len, "big.csv", opts(1, blocks[b], threads[t]), f, 2, use_pipe, &g);
                if (g.rc != 0) fail_msg("block %zu threads %d pipe %d: %s", blocks[b], threads[t], use_pipe, g.err);
                assert_int_equal(g.n[0], ref.n[0]);
                assert_int_equal(g.n[1], ref.n[1]);
                assert_memory_equal(g.v[0], ref.v[0], ref.n[0] * sizeof(double));
                assert_memory_equal(g.v[1], ref.v[1], ref.n[1] * sizeof(double));
                done(&g);
            }
        }
    }
    /* one field alone (the single-field fast path) gives the same column */
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        got g;
        int one[1] = {1};
        run(csv, len, "big.csv", opts(1, blocks[b], 2), one, 1, b & 1, &g);
        if (g.rc != 0) fail_msg("one field, block %zu: %s", blocks[b], g.err);
        assert_int_equal(g.n[0], ref.n[1]);
        assert_memory_equal(g.v[0], ref.v[1], ref.n[1] * sizeof(double));
        done(&g);
    }
    /* an error deep in the file: the same line number whatever the blocks */
    char *p = strstr(csv + len / 2, "\n4");
    assert_non_null(p);
    memcpy(p + 1, "zz", 2);
    uint64_t line = 1;
    int in_q = 0;
    for (char *c = csv; c <= p; c++) {
        if (*c == '"') in_q = !in_q;
        if (*c == '\n') line++;
    }
    (void)in_q;
    char expect[128];
    char first[16];
    sscanf(p + 1, "%15[^,]", first);
    snprintf(expect, sizeof expect, "big.csv:%llu:1: '%s' is not a number",
             (unsigned long long)line, first);
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        got g;
        run(csv, len, "big.csv", opts(1, blocks[b], 3), f, 2, b & 1, &g);
        assert_int_equal(g.rc, 1);
        assert_string_equal(g.err, expect);
        done(&g);
    }
    done(&ref);
    free(csv);
}

/* The fast field path and the general one agree with strtod on every number, one per line. */
static void test_numbers_one_per_line(void **state)
{
    (void)state;
    size_t cap = 16 << 20, len = 0;
    char *txt = malloc(cap);
    double *ref = malloc(MAXV * sizeof *ref);
    uint64_t x = 99;
    int n = 0;
    for (; n < 300000; n++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        char s[64];
        switch (n % 4) {
        case 0: snprintf(s, sizeof s, "%llu.%02llu", (unsigned long long)((x >> 30) % 100000), (unsigned long long)((x >> 10) % 100)); break;
        case 1: snprintf(s, sizeof s, "-%llu", (unsigned long long)(x >> 1)); break;
        case 2: { double d; uint64_t b = x & 0x7fefffffffffffffull; memcpy(&d, &b, 8); snprintf(s, sizeof s, "%.*g", (int)(1 + (x >> 60)), d); break; }
        default: snprintf(s, sizeof s, "%llu.%llu", (unsigned long long)(x >> 40), (unsigned long long)(x % 100000000000ull)); break;
        }
        ref[n] = strtod(s, NULL);
        len += (size_t)sprintf(txt + len, "%s\n", s);
    }
    got g;
    int f[1] = {0};
    run(txt, len, "n.txt", opts(0, 1 << 16, 2), f, 1, 0, &g);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.n[0], n);
    for (int i = 0; i < n; i++)
        if (memcmp(&g.v[0][i], &ref[i], 8) != 0) fail_msg("value %d differs from strtod", i);
    done(&g);
    free(ref);
    free(txt);
}

/* The single-field path on odd lines: quotes before and after, CRLF, short lines, blanks. */
static void test_one_field(void **state)
{
    (void)state;
    const char *csv = "a,b,c\n"
                      "x,1.5,y\n"
                      "\"q,\",2,\"z\nz\"\r\n"
                      "\n"
                      "w,3\r\n"
                      "v,4.25,\"u\"\"\"\n"
                      "t, 5 ,s\n"
                      "r,6";
    int one[1] = {1};
    for (int bs = 0; bs < 2; bs++) {
        got g;
        run(csv, strlen(csv), "o.csv", opts(1, bs ? 64 : 0, bs ? 2 : 1), one, 1, bs, &g);
        assert_int_equal(g.rc, 0);
        assert_int_equal(g.n[0], 6);
        double want[6] = {1.5, 2, 3, 4.25, 5, 6};
        assert_memory_equal(g.v[0], want, sizeof want);
        done(&g);
    }
    const char *bad = "a,b\n1,2\n3\n";
    got g;
    run(bad, strlen(bad), "s.csv", opts(1, 0, 1), one, 1, 0, &g);
    assert_int_equal(g.rc, 1);
    assert_string_equal(g.err, "s.csv:3:2: missing field (the line has 1 field)");
    done(&g);
}

static void test_empty(void **state)
{
    (void)state;
    got g;
    run("", 0, "empty.csv", opts(0, 0, 2), NULL, 0, 0, &g);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.nfields, 0);
    done(&g);
    run("a,b\n", 4, "h.csv", opts(1, 0, 2), NULL, 0, 1, &g);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.nfields, 2);
    assert_int_equal(g.n[0], 0);
    done(&g);
    run("\n\n7\n", 4, "b.txt", opts(0, 0, 1), NULL, 0, 1, &g);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.n[0], 1);
    done(&g);
}

/* A NUL byte is an error wherever it is, from memory and from a pipe, even with skip_invalid,
 * and the message shows it escaped; an endless record from a pipe stops at max_record. */
static void test_nul_and_long_records(void **state)
{
    (void)state;
    static const char text[] = "1,2\n3,\"a\0b\"\n5,6\n";
    for (int pipe_mode = 0; pipe_mode < 2; pipe_mode++) {
        for (int skip = 0; skip < 2; skip++) {
            got g;
            tio_text_options o = opts(0, 64, 2);
            o.skip_invalid = skip;
            int first = 0;
            run(text, sizeof text - 1, "nul.csv", o, &first, 1, pipe_mode, &g);
            assert_int_equal(g.rc, 1);
            if (!strstr(g.err, "nul.csv:2:2: 'a\\x00b' is not a number"))
                fail_msg("pipe %d skip %d: %s", pipe_mode, skip, g.err);
            done(&g);
        }
    }
    /* a NUL in the first three bytes of a pipe (where a byte order mark is looked for) */
    for (int pipe_mode = 0; pipe_mode < 2; pipe_mode++) {
        got g0;
        run("\x0e\0", 2, "nul2.txt", opts(0, 0, 1), NULL, 0, pipe_mode, &g0);
        assert_int_equal(g0.rc, 1);
        done(&g0);
    }
    size_t len = 1 << 20;
    char *big = malloc(len);
    memset(big, '7', len);
    got g;
    tio_text_options o = opts(0, 0, 2);
    o.max_record = 1 << 16;
    run(big, len, "long.txt", o, NULL, 0, 1, &g);
    assert_int_equal(g.rc, -1);
    assert_non_null(strstr(g.err, "a record longer than 65536 bytes"));
    done(&g);
    free(big);
}

/* Readers of byte ranges that start at record starts see every value once, in order. */
static void test_ranges(void **state)
{
    (void)state;
    char *text = malloc(1 << 20);
    size_t len = (size_t)sprintf(text, "v\n");
    double want = 0;
    for (int i = 0; i < 50000; i++) {
        len += (size_t)sprintf(text + len, "%d\n", i * 7 % 1000);
        want += i * 7 % 1000;
    }
    tio_input in;
    tio_input_memory(&in, text, len, "ranges.txt");
    uint64_t cut[5] = {0, 0, 0, 0, len};
    for (int k = 1; k < 4; k++) cut[k] = tio_text_record_start(&in, len * (uint64_t)k / 4 + 3);
    double sum = 0;
    size_t count = 0;
    for (int k = 0; k < 4; k++) {
        tio_text_options o = opts(1, 4096, 2);
        o.start = cut[k];
        o.limit = cut[k + 1];
        tio_text_reader *r;
        char err[256];
        assert_int_equal(tio_text_open(&r, &in, &o, err, sizeof err), 0);
        int f = 0;
        tio_text_select(r, &f, 1);
        got g;
        memset(&g, 0, sizeof g);
        g.v[0] = malloc(MAXV * sizeof(double));
        g.is_int[0] = 1;
        tio_text_sink sink = {&g, on_values, NULL, NULL};
        assert_int_equal(tio_text_run(r, &sink, err, sizeof err), 0);
        for (size_t i = 0; i < g.n[0]; i++) sum += g.v[0][i];
        count += g.n[0];
        free(g.v[0]);
        tio_text_close(r);
    }
    assert_int_equal(count, 50000);
    assert_true(sum == want);
    tio_input_close(&in);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quoting),          cmocka_unit_test(test_errors_and_skip),
        cmocka_unit_test(test_delimiters),       cmocka_unit_test(test_blocks_threads),
        cmocka_unit_test(test_numbers_one_per_line), cmocka_unit_test(test_one_field),
        cmocka_unit_test(test_empty),            cmocka_unit_test(test_nul_and_long_records),
        cmocka_unit_test(test_ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
