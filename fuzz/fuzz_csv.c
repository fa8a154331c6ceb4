/* libFuzzer: the text reader. The first bytes pick the options; the rest is the text. The same
 * text parsed in one block on one thread and in tiny blocks on two threads (from memory or
 * through a pipe) must give the same values, the same invalid values and the same error. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "tally_io.h"

typedef struct result {
    uint64_t hash[8];          /* values of each selected field, in order */
    uint64_t ihash;            /* invalid values, in order (interleaving with values may differ) */
    size_t nvalues, ninvalid;
    int rc;
    char err[512];
} result;

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

static int on_values(void *user, int sel, int is_float, int scale, const void *vals, size_t n)
{
    result *r = user;
    for (size_t k = 0; k < n; k++) {
        uint64_t bits;
        memcpy(&bits, (const char *)vals + 8 * k, 8);
        if (!is_float) {          /* a block may be decimal or float: compare the values */
            double d = tio_decimal_to_double((int64_t)bits, scale);
            memcpy(&bits, &d, 8);
        }
        r->hash[sel] = mix(r->hash[sel], bits);
    }
    r->nvalues += n;
    return 0;
}

static void on_invalid(void *user, uint64_t line, int field, const char *text, size_t len,
                       int missing)
{
    result *r = user;
    r->ninvalid++;
    r->ihash = mix(mix(mix(r->ihash, line), (uint64_t)field), (uint64_t)missing);
    for (size_t k = 0; k < len; k++) r->ihash = mix(r->ihash, (unsigned char)text[k]);
}

typedef struct pipe_job {
    int fd;
    const uint8_t *data;
    size_t len;
} pipe_job;

static void *writer(void *arg)
{
    pipe_job *j = arg;
    size_t off = 0;
    while (off < j->len) {
        size_t m = j->len - off < 777 ? j->len - off : 777;   /* odd-sized writes */
        ssize_t w = write(j->fd, j->data + off, m);
        if (w <= 0) break;
        off += (size_t)w;
    }
    close(j->fd);
    return NULL;
}

static int one_field;

static void parse(const uint8_t *text, size_t len, tio_text_options o, int use_pipe, result *r)
{
    memset(r, 0, sizeof *r);
    tio_input in;
    pthread_t th;
    pipe_job pj;
    if (use_pipe) {
        int fds[2];
        if (pipe(fds) != 0) abort();
        pj = (pipe_job){fds[1], text, len};
        pthread_create(&th, NULL, writer, &pj);
        memset(&in, 0, sizeof in);
        in.fd = fds[0];
        in.owns_fd = 1;
        in.name = strdup("fuzz.csv");
    } else {
        tio_input_memory(&in, text, len, "fuzz.csv");
    }
    tio_text_reader *rd;
    r->rc = tio_text_open(&rd, &in, &o, r->err, sizeof r->err);
    if (r->rc == 0) {
        int nf = tio_text_field_count(rd);
        int sel[8];
        int ns = nf < 8 ? nf : 8;
        for (int i = 0; i < ns; i++) sel[i] = (i * 3) % (nf ? nf : 1);
        if (ns == 0) { sel[0] = 0; ns = 1; }
        if (one_field && nf > 1) { sel[0] = nf - 1; ns = 1; }   /* the single-field path */
        tio_text_select(rd, sel, ns);
        tio_text_sink sink = {r, on_values, on_invalid, NULL};
        r->rc = tio_text_run(rd, &sink, r->err, sizeof r->err);
        tio_text_close(rd);
    }
    if (use_pipe) {
        char tmp[4096];
        while (read(in.fd, tmp, sizeof tmp) > 0) {}
        pthread_join(th, NULL);
    }
    tio_input_close(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 1 << 16) return 0;
    tio_text_options o = {0};
    static const char delims[] = {0, ',', '\t', ';', '|', ' '};
    o.delim = delims[data[0] % 6];
    o.whitespace = (data[0] >> 3) & 1;
    o.header = (data[0] >> 4) & 1;
    o.skip_invalid = (data[0] >> 5) & 1;
    size_t small = 64 + data[1] % 32;
    one_field = (data[1] >> 5) & 1;
    result a, b;
    o.threads = 1;
    o.block_size = 1 << 20;
    parse(data + 2, size - 2, o, 0, &a);
    o.threads = 2;
    o.block_size = small;
    parse(data + 2, size - 2, o, (data[1] >> 6) & 1, &b);   /* from memory or a pipe */
    /* after an error, blocks already handed over differ; the error itself must not */
    int same = a.rc == b.rc && strcmp(a.err, b.err) == 0;
    if (same && a.rc == 0)
        same = memcmp(a.hash, b.hash, sizeof a.hash) == 0 && a.ihash == b.ihash && a.nvalues == b.nvalues &&
               a.ninvalid == b.ninvalid;
    if (!same) {
        fprintf(stderr, "differ: rc %d/%d values %zu/%zu invalid %zu/%zu err '%s' / '%s'\n", a.rc,
                b.rc, a.nvalues, b.nvalues, a.ninvalid, b.ninvalid, a.err, b.err);
        abort();
    }
    return 0;
}
