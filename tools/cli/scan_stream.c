/* tally scan of a binary file into a regular OUT, streamed: the column is read, scanned and
 * written a chunk at a time, so that a column larger than memory can be scanned, and the output
 * leaves at about the speed of a file copy (docs/performance.md, bench/cli_scan.sh).
 *
 * Three threads work a few chunks apart: a reader brings chunk k+2 into memory, the caller
 * scans chunk k+1 with the library into a buffer of a ring of SS_NBUF, a writer write()s chunk
 * k from its buffer. The buffers are reused, so they stay in the caches and no page of theirs
 * is faulted in after the first round. From the input's mapping, the reader only maps the
 * chunk's pages (MADV_POPULATE_READ: no copy), the scan reads them there, and they are unmapped
 * once scanned (MADV_DONTNEED: the page cache keeps them, this process does not). A file that
 * is not mapped (the address space is too small for it), or whose bytes need converting (byte
 * order, bools), is pread() into the buffer instead and scanned in place. Either way the
 * process holds a few chunks of the column, never the whole.
 *
 * The bits are the one-call scan's. A chunk holds a whole number of the CPU scan's blocks (4096
 * elements, include/tally.h), and chunk k+1 is scanned as an inclusive scan carrying chunk k's
 * last output into its first block (tally_internal_scan, as libtally_mpi's ranks carry theirs):
 * in one call, that is that block's carry. An exclusive scan is its start value followed by
 * the inclusive scan, started from that value, of all but the last element (block b's outputs
 * are carry_b, then carry_b op the fold of the block's first elements, either way). The start
 * value comes from the library itself: a one-element exclusive scan with the user's options.
 * tests/cli/test_scan_stream.py holds the two paths to each other bit for bit.
 *
 * Used when there is one process (tally, not tally-mpi), the input is a regular file whose
 * column lies contiguous in it (cli_array_probe), the backend is AUTO or CPU (a GPU backend
 * takes no carry into an inclusive scan) and OUT is a regular file: written to a temporary file
 * and renamed at the end, so an error leaves no partial OUT. Everything else, and every
 * malformed input, takes the one-call path in scan.c, which also says what is wrong. */
#define _GNU_SOURCE 1
#include "cli.h"
#include "core/internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Bytes per chunk: a multiple of 4096 elements of every type (2^19 of 8 bytes), small enough
 * that the ring stays in the last-level cache, large enough that each library call spreads
 * over all threads. */
#define SS_CHUNK_BYTES ((size_t)4 << 20)
#define SS_NBUF 4

typedef struct ss_job {
    const cli_opts *o;
    tally_context *ctx;
    tio_input *in;
    const cli_array *a;
    tally_op op;
    uint64_t offset;           /* the column's first byte in the file */
    uint64_t n, chunk, nchunks;
    size_t es;
    uint8_t *buf[SS_NBUF];
    const uint8_t *src;        /* the column in the input's mapping, or NULL: pread */
    char *text;                /* --text: the writer's lines */
    uint64_t nread, nscanned, nwritten;   /* chunks through each stage */
    int failed;                /* a stage failed: the others stop */
    int read_errno;            /* the read failed: errno, or 0 when the file ended early */
    int read_failed, write_failed, write_errno;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    cli_outfile out;
    int exclusive;
    uint8_t start[8];          /* an exclusive scan's first output */
} ss_job;

static uint64_t ss_len(const ss_job *j, uint64_t k)
{
    uint64_t first = k * j->chunk;
    return j->n - first < j->chunk ? j->n - first : j->chunk;
}

/* Waits until *counter > k, or a stage failed (returns 0 then). */
static int ss_wait_past(ss_job *j, const uint64_t *counter, uint64_t k)
{
    pthread_mutex_lock(&j->mu);
    while (!j->failed && *counter <= k) pthread_cond_wait(&j->cv, &j->mu);
    int ok = !j->failed;
    pthread_mutex_unlock(&j->mu);
    return ok;
}

static void ss_advance(ss_job *j, uint64_t *counter, int failed)
{
    pthread_mutex_lock(&j->mu);
    if (failed) j->failed = 1;
    else (*counter)++;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

/* The pages of [p, p + len): all that it touches (out), or those that end inside it (!out:
 * a page that it shares with the next chunk is left to that chunk). */
static void ss_pages(const uint8_t *p, size_t len, int out, uint8_t **lo, size_t *n)
{
    const uintptr_t pg = 4096;
    uintptr_t a = (uintptr_t)p & ~(pg - 1), b = (uintptr_t)p + len;
    b = out ? (b + pg - 1) & ~(pg - 1) : b & ~(pg - 1);
    *lo = (uint8_t *)a;
    *n = b > a ? b - a : 0;
}

/* Maps chunk k's pages of the input (src): no copy, and the scan takes no page fault. */
static void ss_populate(const ss_job *j, uint64_t k, uint64_t m)
{
    uint8_t *lo;
    size_t len;
    ss_pages(j->src + k * j->chunk * j->es, (size_t)(m * j->es), 1, &lo, &len);
#ifdef MADV_POPULATE_READ
    if (madvise(lo, len, MADV_POPULATE_READ) == 0) return;
#endif
    volatile uint8_t sink = 0;                 /* an older kernel: touch each page */
    for (size_t i = 0; i < len; i += 4096) sink ^= lo[i];
    (void)sink;
}

/* Reads chunk k into its buffer, made native: 0, or -1 (read_errno: errno, 0 when short). */
static int ss_pread(ss_job *j, uint64_t k, uint64_t m)
{
    uint8_t *b = j->buf[k % SS_NBUF];
    size_t want = (size_t)(m * j->es);
    uint64_t off = j->offset + k * j->chunk * j->es;
    while (want) {
        ssize_t r = pread(j->in->fd, b, want, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            j->read_errno = r == 0 ? 0 : errno;
            return -1;
        }
        b += r;
        want -= (size_t)r;
        off += (uint64_t)r;
    }
    cli_array_native(j->a, j->buf[k % SS_NBUF], m);
    return 0;
}

static void *ss_reader(void *arg)
{
    ss_job *j = arg;
    for (uint64_t k = 0; k < j->nchunks; k++) {
        /* at most SS_NBUF chunks ahead: of the scan (mapped pages), of the writer (buffers) */
        if (k >= SS_NBUF && !ss_wait_past(j, j->src ? &j->nscanned : &j->nwritten, k - SS_NBUF))
            break;
        uint64_t m = ss_len(j, k);
        if (j->src) {
            ss_populate(j, k, m);
        } else if (ss_pread(j, k, m) != 0) {
            j->read_failed = 1;
            ss_advance(j, &j->nread, 1);
            break;
        }
        ss_advance(j, &j->nread, 0);
    }
    return NULL;
}

/* n values of type t as text lines, through text (SS_TEXT_BYTES + 64 bytes). */
#define SS_TEXT_BYTES ((size_t)1 << 20)
static int ss_write_text(cli_outfile *f, char *text, tally_type t, const void *v, uint64_t n)
{
    size_t len = 0;
    for (uint64_t i = 0; i < n; i++) {
        len += cli_value_line(t, v, i, text + len);
        if (len >= SS_TEXT_BYTES) {
            if (cli_out_write(f, text, len) != 0) return -1;
            len = 0;
        }
    }
    return cli_out_write(f, text, len);
}

static int ss_write_values(ss_job *j, const void *v, uint64_t m)
{
    if (j->o->text) return ss_write_text(&j->out, j->text, j->a->type, v, m);
    return cli_out_write(&j->out, v, (size_t)(m * j->es));
}

static void *ss_writer(void *arg)
{
    ss_job *j = arg;
    for (uint64_t k = 0; k < j->nchunks; k++) {
        if (!ss_wait_past(j, &j->nscanned, k)) break;
        uint64_t m = ss_len(j, k);
        int r = 0;
        if (k == 0 && j->exclusive) r = ss_write_values(j, j->start, 1);
        /* exclusive: the inclusive scan's last element is nobody's output */
        if (r == 0) r = ss_write_values(j, j->buf[k % SS_NBUF], m - (j->exclusive && k + 1 == j->nchunks));
        if (r != 0) {
            j->write_errno = errno;
            j->write_failed = 1;
        }
        ss_advance(j, &j->nwritten, r != 0);
        if (r != 0) break;
    }
    return NULL;
}

/* An element's value (bits of type t) as a scan's init, which tally_scan converts back to t
 * exactly (an f32 goes through double). */
static void ss_init_from(tally_type t, const void *bits, tally_scan_options *so)
{
    /* bits may lie anywhere in a chunk or a header buffer: copied, never loaded in place */
    union { int8_t i8; int16_t i16; int32_t i32; int64_t i64; uint8_t u8; uint16_t u16;
            uint32_t u32; uint64_t u64; float f32; double f64; } v;
    memcpy(&v, bits, tally_type_size(t));
    switch (t) {
    case TALLY_I8: so->init.i64 = v.i8; break;
    case TALLY_I16: so->init.i64 = v.i16; break;
    case TALLY_I32: so->init.i64 = v.i32; break;
    case TALLY_I64: so->init.i64 = v.i64; break;
    case TALLY_U8: so->init.u64 = v.u8; break;
    case TALLY_U16: so->init.u64 = v.u16; break;
    case TALLY_U32: so->init.u64 = v.u32; break;
    case TALLY_U64: so->init.u64 = v.u64; break;
    case TALLY_F32: so->init.f64 = v.f32; break;
    default: so->init.f64 = v.f64; break;
    }
    so->has_init = 1;
}

/* Scans chunk after chunk as the reader brings them (the caller's thread). 0, or -1. */
static int ss_scan_all(ss_job *j)
{
    tally_scan_options so;
    memset(&so, 0, sizeof so);
    if (j->exclusive) ss_init_from(j->a->type, j->start, &so);
    for (uint64_t k = 0; k < j->nchunks; k++) {
        if (!ss_wait_past(j, &j->nread, k)) return -1;
        /* from the mapping, the buffer is free once the writer is done with chunk k - SS_NBUF
         * (a chunk that was read went into a free buffer) */
        if (j->src && k >= SS_NBUF && !ss_wait_past(j, &j->nwritten, k - SS_NBUF)) return -1;
        uint64_t m = ss_len(j, k);
        uint8_t *b = j->buf[k % SS_NBUF];
        const uint8_t *in = j->src ? j->src + k * j->chunk * j->es : b;
        tally_status s = tally_internal_scan(j->ctx, j->op, j->a->type, in, b, m, &so);
        if (j->src) {                          /* scanned: its pages leave this process */
            uint8_t *lo;
            size_t len;
            ss_pages(in, (size_t)(m * j->es), 0, &lo, &len);
            if (len) madvise(lo, len, MADV_DONTNEED);
        }
        if (s != TALLY_OK) {
            cli_error("%s: %s", j->in->name, tally_last_error(j->ctx));
            ss_advance(j, &j->nscanned, 1);
            return -1;
        }
        ss_init_from(j->a->type, b + (m - 1) * j->es, &so);  /* the next chunk's carry */
        ss_advance(j, &j->nscanned, 0);
        cli_progress_update((k * j->chunk + m) * j->es);
    }
    return 0;
}

/* The context the chunks are scanned on: the CPU backend with -j threads, or by default all
 * cores but two, which the reader and the writer take (a call returns when all its threads
 * have checked in, so a thread that waits for a core delays every chunk). NULL if it cannot
 * be made. */
static tally_context *ss_context(const cli_opts *o)
{
    int threads = o->threads;
    if (threads <= 0) {
        cpu_set_t set;
        long cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                                 : sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 3 ? (int)cores - 2 : 1;
    }
    tally_options to;
    tally_options_init(&to);
    to.backend = TALLY_BACKEND_CPU;
    to.threads = threads;
    tally_context *c = NULL;
    return tally_create(&c, &to) == TALLY_OK ? c : NULL;
}

int cli_scan_streamed(const cli_opts *o, tally_context *ctx, tio_input *in)
{
    if (o->backend != TALLY_BACKEND_AUTO && o->backend != TALLY_BACKEND_CPU) return -1;
    if (!cli_out_replaces(o->out)) return -1;
    cli_array a;
    uint64_t offset;
    if (cli_array_probe(o, in, &a, &offset) != 0) return -1;
    int *sel = NULL, nsel = cli_select_fields(o, a.ncols, NULL, 1, 1, &sel);
    if (nsel < 0) return nsel == -1 ? 1 : 2;
    int col = sel[0];
    free(sel);
    if (a.n == 0) return -1;                   /* nothing to carry: the one-call path */
    tally_scan_options user;
    memset(&user, 0, sizeof user);
    user.exclusive = o->exclusive;
    int rc = cli_scan_init(o, a.type, &user);
    if (rc) return rc;

    ss_job j;
    memset(&j, 0, sizeof j);
    j.o = o;
    j.ctx = ctx;
    j.in = in;
    j.a = &a;
    j.op = cli_op_library(o->scan_op);
    j.es = a.elsize;
    j.n = a.n;
    j.offset = offset + (uint64_t)col * a.n * a.elsize;   /* a Fortran column (else col 0) */
    j.chunk = cli_limit.scan_chunk ? cli_limit.scan_chunk : SS_CHUNK_BYTES / a.elsize;
    j.nchunks = (a.n + j.chunk - 1) / j.chunk;
    j.exclusive = o->exclusive;
    if (in->mapped && !a.swap && !a.is_bool && j.offset % a.elsize == 0)
        j.src = in->data + j.offset;

    /* The op, type and options are checked (and an exclusive scan's start value found) by the
     * library on one element, before OUT is touched. */
    uint8_t zero[8] = {0}, first[8] = {0};
    tally_status s = tally_scan(ctx, j.op, a.type, zero, first, 1, &user);
    if (s != TALLY_OK) {
        if (s == TALLY_ERR_UNSUPPORTED)
            cli_error("%s: cannot scan %s over %s values", in->name, tally_op_name(j.op),
                      tally_type_name(a.type));
        else
            cli_error("%s: %s", in->name, tally_last_error(ctx));
        return 1;
    }
    memcpy(j.start, first, sizeof first);
    tally_context *own = ss_context(o);
    if (own) j.ctx = own;

    size_t bytes = (j.chunk * a.elsize + 4095) / 4096 * 4096;
    int nomem = o->text && !(j.text = malloc(SS_TEXT_BYTES + 64));
    for (int k = 0; k < SS_NBUF; k++) nomem |= !(j.buf[k] = aligned_alloc(4096, bytes));
    if (nomem) {
        cli_error("%s: out of memory", in->name);
        rc = 1;
        goto done;
    }
    if (cli_out_open(&j.out, o->out)) {
        rc = 1;
        goto done;
    }
    if (!o->text) {
        char hdr[256];
        size_t hl = tio_npy_write_header(hdr, sizeof hdr, a.type, a.n);
        if (cli_out_write(&j.out, hdr, hl) != 0) {
            j.write_failed = 1;
            j.write_errno = errno;
        }
    }
    if (!j.write_failed) {
        pthread_mutex_init(&j.mu, NULL);
        pthread_cond_init(&j.cv, NULL);
        pthread_t reader, writer;
        int have_reader = pthread_create(&reader, NULL, ss_reader, &j) == 0;
        int have_writer = have_reader && pthread_create(&writer, NULL, ss_writer, &j) == 0;
        int scanned = -1;
        if (have_writer) {
            cli_progress_start(o, in->name, a.n * a.elsize);
            scanned = ss_scan_all(&j);
            cli_progress_end();
        } else {
            cli_error("cannot start a thread: %s", strerror(errno));
            ss_advance(&j, &j.nread, 1);
        }
        if (have_reader) pthread_join(reader, NULL);
        if (have_writer) pthread_join(writer, NULL);
        pthread_cond_destroy(&j.cv);
        pthread_mutex_destroy(&j.mu);
        if (scanned != 0 || j.failed) rc = 1;
    }
    /* the first failure in the data's order: the input, then the output */
    if (j.read_failed) {
        if (j.read_errno) cli_error("%s: %s", in->name, strerror(j.read_errno));
        else if (!cli_input_changed(in)) cli_error("%s changed while being read", in->name);
    } else if (j.write_failed) {
        cli_error("%s: %s", o->out, strerror(j.write_errno ? j.write_errno : EIO));
    } else if (rc == 0 && cli_input_changed(in)) {
        rc = 1;
    }
    if (j.read_failed || j.write_failed) rc = 1;
    rc = cli_out_finish(&j.out, rc == 0);
done:
    for (int k = 0; k < SS_NBUF; k++) free(j.buf[k]);
    free(j.text);
    tally_destroy(own);
    return rc;
}
