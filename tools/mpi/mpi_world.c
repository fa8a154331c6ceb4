/* tally-mpi's world: the tally command's hooks (tools/cli/cli.h, struct cli_world) over the
 * ranks of MPI_COMM_WORLD. Every rank runs the command on its share of the input; only rank 0
 * prints.
 *
 * Messages: rank 0 prints its own lines at once; another rank keeps its lines until the next
 * agreement, where rank 0 prints, in rank order, the lines of the ranks up to the first one that
 * failed (that rank's error last), and the others' are dropped: what one process would have
 * printed before stopping at the first error in the file. At most CLI_SKIPPED_SHOWN skipped
 * values are named in all.
 *
 * Text input: each rank takes an equal byte piece of the data; the quote state at each piece's
 * start comes from composing the state maps of the pieces before it (tio_text_state_map, one
 * pass per rank, one MPI_Allgather); each rank then reads from its first record start to the
 * next rank's, with the file's line numbers (the newline counts travel with the maps).
 *
 * The scan's output: one file, written by every rank at its offset (MPI-IO) into the temporary
 * file that rank 0 made with tally's own outfile code, renamed by rank 0 once every rank's write
 * succeeded (else removed); a device, a FIFO or standard output get the ranks' bytes in rank
 * order through rank 0. */
#include "mpi_world.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "decimal.h"
#include "tally_mpi.h"

static MPI_Comm g_comm;
static int g_rank, g_size;
static MPI_Op g_sum_op;        /* saturating sums of uint64 */

/* ---- messages ------------------------------------------------------------------------------ */
typedef struct msg_buf {
    char *p;                   /* entries: one kind byte, the line, '\n' */
    size_t n, cap;
} msg_buf;
static msg_buf g_msgs;
static int g_skipped_shown;    /* rank 0: skipped values named so far */
/* The most a rank keeps: its lines are few (errors, and at most 10 skipped values), and rank 0
 * gathers every rank's into one buffer with int offsets. A line past it is dropped. */
#define MSG_KEEP ((size_t)1 << 16)

static void print_line(cli_msg_kind kind, const char *line, size_t len)
{
    if (kind == CLI_MSG_SKIPPED && g_skipped_shown++ >= CLI_SKIPPED_SHOWN) return;
    fwrite(line, 1, len, stderr);
    fputc('\n', stderr);
}

static void mpi_say(cli_msg_kind kind, const char *line)
{
    size_t l = strlen(line);
    if (g_rank == 0) {
        print_line(kind, line, l);
        return;
    }
    if (g_msgs.n + l + 2 > MSG_KEEP) return;
    if (g_msgs.n + l + 2 > g_msgs.cap) {
        size_t nc = (g_msgs.n + l + 2) * 2;
        char *np = realloc(g_msgs.p, nc);
        if (!np) return;
        g_msgs.p = np;
        g_msgs.cap = nc;
    }
    g_msgs.p[g_msgs.n++] = (char)kind;
    memcpy(g_msgs.p + g_msgs.n, line, l);
    g_msgs.n += l;
    g_msgs.p[g_msgs.n++] = '\n';
}

/* Rank 0 prints the kept lines of ranks 1..upto (collective). */
static void flush_messages(int upto)
{
    int len = g_rank <= upto ? (int)g_msgs.n : 0;
    int *lens = NULL, *offs = NULL;
    char *all = NULL;
    if (g_rank == 0) {
        lens = calloc((size_t)g_size, sizeof *lens);
        offs = calloc((size_t)g_size, sizeof *offs);
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, g_comm);
    long long total = 0;
    if (g_rank == 0 && lens && offs) {
        for (int r = 0; r < g_size; r++) {
            offs[r] = (int)total;               /* at most MSG_KEEP a rank */
            total += lens[r];
        }
        all = malloc(total ? (size_t)total : 1);
    }
    MPI_Gatherv(g_msgs.p, len, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, g_comm);
    if (g_rank == 0 && all) {
        for (const char *p = all, *e = all + total; p < e;) {
            const char *nl = memchr(p + 1, '\n', (size_t)(e - p - 1));
            if (!nl) break;
            print_line((cli_msg_kind)p[0], p + 1, (size_t)(nl - p - 1));
            p = nl + 1;
        }
        fflush(stderr);
    }
    free(all);
    free(lens);
    free(offs);
    g_msgs.n = 0;
}

static int mpi_agree(const cli_world *w, int rc)
{
    (void)w;
    /* the first failing rank: minimum of (0 if failed, else 1), ties to the lowest rank */
    struct { int ok, rank; } mine = {rc == 0, g_rank}, first;
    MPI_Allreduce(&mine, &first, 1, MPI_2INT, MPI_MINLOC, g_comm);
    int failed = !first.ok;
    flush_messages(failed ? first.rank : g_size - 1);
    if (!failed) return 0;
    MPI_Bcast(&rc, 1, MPI_INT, first.rank, g_comm);
    return rc;
}

/* ---- small collectives --------------------------------------------------------------------- */
static void mpi_max(const cli_world *w, int64_t *v, int n)
{
    (void)w;
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_MAX, g_comm);
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

static void sum_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const uint64_t *a = in;
    uint64_t *b = inout;
    for (int i = 0; i < *len; i++) b[i] = add_sat(a[i], b[i]);
}

static void mpi_sum(const cli_world *w, uint64_t v, uint64_t *before, uint64_t *total)
{
    (void)w;
    uint64_t b = 0, t = 0;
    MPI_Exscan(&v, &b, 1, MPI_UINT64_T, g_sum_op, g_comm);
    MPI_Allreduce(&v, &t, 1, MPI_UINT64_T, g_sum_op, g_comm);
    if (before) *before = g_rank ? b : 0;      /* rank 0's Exscan result is undefined */
    if (total) *total = t;
}

static void mpi_rows(const cli_world *w, uint64_t n, uint64_t *lo, uint64_t *hi)
{
    (void)w;
    *lo = (uint64_t)((unsigned __int128)n * (unsigned)g_rank / (unsigned)g_size);
    *hi = (uint64_t)((unsigned __int128)n * (unsigned)(g_rank + 1) / (unsigned)g_size);
}

/* ---- text: each rank's records ------------------------------------------------------------- */
static int mpi_text_share(const cli_world *w, tio_text_reader *r, tio_input *in,
                          tio_text_options *to)
{
    (void)w;
    if (!in->mapped) return 0;                 /* an empty file: nothing to share */
    uint64_t hdr_lines, data = tio_text_data_start(r, &hdr_lines), size = in->size;
    uint64_t span = size > data ? size - data : 0;
    uint64_t from = data + (uint64_t)((unsigned __int128)span * (unsigned)g_rank / (unsigned)g_size);
    uint64_t to_ = data + (uint64_t)((unsigned __int128)span * (unsigned)(g_rank + 1) / (unsigned)g_size);
    unsigned char map[TIO_TS_COUNT];
    uint64_t mine[2] = {0, 0};                 /* newlines in the piece, its map (a byte a state) */
    tio_text_state_map(r, from, to_, map, &mine[0]);
    for (int s = 0; s < TIO_TS_COUNT; s++) mine[1] |= (uint64_t)map[s] << (8 * s);
    uint64_t *all = malloc((size_t)g_size * 2 * sizeof *all);
    int rc = w->agree(w, all == NULL);
    if (rc) {
        free(all);
        return rc;
    }
    MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, g_comm);
    /* the state at this piece's start: the pieces before it, in order */
    int state = TIO_TS_RECORD;
    uint64_t lines = hdr_lines;
    for (int k = 0; k < g_rank; k++) {
        state = (int)((all[2 * k + 1] >> (8 * state)) & 0xff);
        lines += all[2 * k];
    }
    uint64_t extra, start = tio_text_next_record(r, from, state, &extra);
    lines += extra;
    uint64_t starts_mine = start;
    MPI_Allgather(&starts_mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, g_comm);
    uint64_t end = g_rank + 1 < g_size ? all[g_rank + 1] : size;
    free(all);
    if (start >= end) {                        /* no record starts in this piece */
        to->start = to->limit = size;
        to->start_line = 0;
    } else {
        to->start = start;
        to->limit = end;
        to->start_line = lines;
    }
    return 0;
}

/* ---- the library over the ranks ------------------------------------------------------------ */
static tally_status mpi_reduce_many(const cli_world *w, tally_context *ctx, tally_type type,
                                    const void *data, uint64_t n, const tally_op *ops,
                                    size_t nops, const tally_reduce_options *opts,
                                    tally_result *results)
{
    (void)w;
    return tally_mpi_reduce_many(ctx, g_comm, type, data, n, ops, nops, opts, results);
}

static tally_status mpi_scan(const cli_world *w, tally_context *ctx, tally_op op, tally_type type,
                             const void *in, void *out, uint64_t n, const tally_scan_options *opts)
{
    uint64_t total;
    w->sum(w, n, NULL, &total);
    if (total == 0) return TALLY_OK;           /* as tally: nothing to scan, nothing checked */
    return tally_mpi_scan(ctx, g_comm, op, type, in, out, n, opts);
}

static tally_status mpi_stream_create(const cli_world *w, tally_context *ctx, tally_type type,
                                      const tally_op *ops, size_t nops,
                                      const tally_reduce_options *opts, cli_stream **s)
{
    (void)w;
    return tally_mpi_stream_create(ctx, g_comm, type, ops, nops, opts, (tally_mpi_stream **)s);
}

static tally_status mpi_stream_update(cli_stream *s, const void *data, uint64_t n)
{
    return tally_mpi_stream_update((tally_mpi_stream *)s, data, n);
}

static tally_status mpi_stream_results(cli_stream *s, tally_result *results)
{
    return tally_mpi_stream_results((tally_mpi_stream *)s, results);
}

static void mpi_stream_destroy(cli_stream *s) { tally_mpi_stream_destroy((tally_mpi_stream *)s); }

/* Exact decimal sums as 11 unsigned 64-bit words (MPI converts them between hosts):
 * the sum's two halves, the six limbs of the sum of squares, n, scale, broken. */
#define DEC_WORDS (2 + CLI_BIG_LIMBS + 3)

static void dec_put(const cli_decimal *d, uint64_t *w)
{
    w[0] = (uint64_t)(unsigned __int128)d->sum;
    w[1] = (uint64_t)((unsigned __int128)d->sum >> 64);
    for (int k = 0; k < CLI_BIG_LIMBS; k++) w[2 + k] = d->sq.w[k];
    w[2 + CLI_BIG_LIMBS] = d->n;
    w[3 + CLI_BIG_LIMBS] = (uint64_t)d->scale;
    w[4 + CLI_BIG_LIMBS] = (uint64_t)d->broken;
}

static void dec_get(const uint64_t *w, cli_decimal *d)
{
    d->sum = (__int128)((unsigned __int128)w[1] << 64 | w[0]);
    for (int k = 0; k < CLI_BIG_LIMBS; k++) d->sq.w[k] = w[2 + k];
    d->n = w[2 + CLI_BIG_LIMBS];
    d->scale = (int)w[3 + CLI_BIG_LIMBS];
    d->broken = (int)w[4 + CLI_BIG_LIMBS];
}

static void dec_merge_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++) {
        cli_decimal a, b;
        dec_get((const uint64_t *)inout + (size_t)i * DEC_WORDS, &a);
        dec_get((const uint64_t *)in + (size_t)i * DEC_WORDS, &b);
        cli_decimal_merge(&a, &b);
        dec_put(&a, (uint64_t *)inout + (size_t)i * DEC_WORDS);
    }
}

static int mpi_decimal_sums(const cli_world *w, struct cli_decimal *d, int n)
{
    uint64_t *words = malloc((size_t)(n ? n : 1) * DEC_WORDS * sizeof *words);
    if (!words) cli_error("out of memory");
    int rc = w->agree(w, !words);
    if (rc) {
        free(words);
        return rc;
    }
    for (int k = 0; k < n; k++) dec_put(&d[k], words + (size_t)k * DEC_WORDS);
    MPI_Datatype t;
    MPI_Op op;
    MPI_Type_contiguous(DEC_WORDS, MPI_UINT64_T, &t);
    MPI_Type_commit(&t);
    MPI_Op_create(dec_merge_op, 1, &op);
    MPI_Allreduce(MPI_IN_PLACE, words, n, t, op, g_comm);
    for (int k = 0; k < n; k++) dec_get(words + (size_t)k * DEC_WORDS, &d[k]);
    MPI_Op_free(&op);
    MPI_Type_free(&t);
    free(words);
    return 0;
}

/* ---- the scan's output --------------------------------------------------------------------- */
/* Rank 0 writes hdr, then every rank's bytes in rank order (a device, a FIFO, standard output).
 * Every rank takes part until the end, whatever fails. 0 or -1 (errno) on rank 0. */
static int write_through_rank0(cli_outfile *f, const char *hdr, size_t hl, const char *bytes,
                               uint64_t len)
{
    static char buf[1 << 20];
    const uint64_t piece = sizeof buf;
    int bad = 0, err = 0;
    if (g_rank == 0) {
        if (cli_out_write(f, hdr, hl) != 0 || cli_out_write(f, bytes, len) != 0) bad = 1, err = errno;
        for (int r = 1; r < g_size; r++) {
            uint64_t n;
            MPI_Recv(&n, 1, MPI_UINT64_T, r, 0, g_comm, MPI_STATUS_IGNORE);
            for (uint64_t got = 0; got < n;) {
                int m = (int)(n - got < piece ? n - got : piece);
                MPI_Recv(buf, m, MPI_CHAR, r, 1, g_comm, MPI_STATUS_IGNORE);
                if (!bad && cli_out_write(f, buf, (size_t)m) != 0) bad = 1, err = errno;
                got += (uint64_t)m;
            }
        }
    } else {
        MPI_Send(&len, 1, MPI_UINT64_T, 0, 0, g_comm);
        for (uint64_t sent = 0; sent < len;) {
            int m = (int)(len - sent < piece ? len - sent : piece);
            MPI_Send(bytes + sent, m, MPI_CHAR, 0, 1, g_comm);
            sent += (uint64_t)m;
        }
    }
    errno = err;
    return bad ? -1 : 0;
}

/* Every rank writes its bytes at its offset of the temporary file rank 0 made. 0, or an MPI
 * error code (this rank's). */
static int write_at_offsets(const char *tmp, const char *hdr, size_t hl, const char *bytes,
                            uint64_t len, uint64_t before)
{
    MPI_File fh;
    int e = MPI_File_open(g_comm, tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    int opened = e == MPI_SUCCESS, all_opened;
    MPI_Allreduce(&opened, &all_opened, 1, MPI_INT, MPI_MIN, g_comm);
    if (!all_opened) {
        if (opened) MPI_File_close(&fh);
        return opened ? MPI_ERR_FILE : e;
    }
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    int werr = MPI_SUCCESS;
    if (g_rank == 0 && hl)
        werr = MPI_File_write_at(fh, 0, hdr, (int)hl, MPI_BYTE, MPI_STATUS_IGNORE);
    /* in pieces below 2^31 bytes (MPI counts are ints), the same number of calls on every rank */
    const uint64_t piece = (uint64_t)1 << 30;
    uint64_t pieces = (len + piece - 1) / piece, most;
    MPI_Allreduce(&pieces, &most, 1, MPI_UINT64_T, MPI_MAX, g_comm);
    for (uint64_t k = 0, done = 0; k < most; k++) {
        uint64_t l = len - done < piece ? len - done : piece;
        MPI_Status st;
        int e2 = MPI_File_write_at_all(fh, (MPI_Offset)(hl + before + done), bytes + done, (int)l,
                                       MPI_BYTE, &st);
        int wrote = 0;
        if (e2 == MPI_SUCCESS) MPI_Get_count(&st, MPI_BYTE, &wrote);
        if (e2 == MPI_SUCCESS && (uint64_t)wrote != l) e2 = MPI_ERR_IO;
        if (e2 != MPI_SUCCESS && werr == MPI_SUCCESS) werr = e2;
        done += l;
    }
    e = MPI_File_close(&fh);
    return werr != MPI_SUCCESS ? werr : e;
}

static int mpi_write_values(const cli_world *w, const cli_opts *o, tally_type type, const void *v,
                            uint64_t n)
{
    /* this rank's bytes */
    size_t len = (size_t)n * tally_type_size(type);
    char *text = NULL;
    const char *bytes = v;
    if (o->text) {
        text = cli_value_lines(type, v, n, &len);
        if (!text) cli_error("out of memory formatting the output");
        bytes = text;
    }
    int rc = w->agree(w, o->text && !text);
    if (rc) {
        free(text);
        return rc;
    }
    uint64_t before, count;
    w->sum(w, n, NULL, &count);
    w->sum(w, len, &before, NULL);
    char hdr[256];
    size_t hl = o->text ? 0 : tio_npy_write_header(hdr, sizeof hdr, type, count);
    /* where to: rank 0 opens OUT as tally does (a temporary file beside it, or OUT itself) */
    cli_outfile f;
    memset(&f, 0, sizeof f);
    int to_stdout = !o->out || strcmp(o->out, "-") == 0;
    if (g_rank == 0) {
        if (to_stdout && !o->text && isatty(1)) {
            rc = cli_usage_error("not writing .npy data to a terminal (use --text, or -o FILE)");
        } else if (to_stdout) {
            fflush(stdout);
            f.name = "standard output";
            f.fd = 1;
            f.direct = 1;
        } else {
            rc = cli_out_open(&f, o->out);
        }
    }
    if ((rc = w->agree(w, rc)) != 0) {
        free(text);
        return rc;
    }
    char tmp[4096] = "";
    int direct = f.direct;
    if (g_rank == 0 && !direct) snprintf(tmp, sizeof tmp, "%s", cli_out_temp(&f));
    MPI_Bcast(&direct, 1, MPI_INT, 0, g_comm);
    int bad = 0;
    if (direct) {
        bad = write_through_rank0(&f, hdr, hl, bytes, len) != 0;
        if (bad) cli_error("%s: %s", to_stdout ? "writing the output" : o->out, strerror(errno ? errno : EIO));
    } else {
        MPI_Bcast(tmp, sizeof tmp, MPI_CHAR, 0, g_comm);
        int e = write_at_offsets(tmp, hdr, hl, bytes, len, before);
        if (e != MPI_SUCCESS) {
            char what[MPI_MAX_ERROR_STRING];
            int wl = 0;
            MPI_Error_string(e, what, &wl);
            cli_error("%s: writing rank %d's part: %s", o->out, g_rank, what);
            bad = 1;
        }
    }
    free(text);
    rc = w->agree(w, bad);
    /* rank 0: rename the whole file into place, or remove it */
    if (g_rank == 0 && !to_stdout) {
        int fin = cli_out_finish(&f, rc == 0);
        if (!rc) rc = fin;
    }
    return w->agree(w, rc);
}

/* ---- the world ----------------------------------------------------------------------------- */
static cli_world g_world;

const cli_world *tally_mpi_world(MPI_Comm comm)
{
    g_comm = comm;
    MPI_Comm_rank(comm, &g_rank);
    MPI_Comm_size(comm, &g_size);
    cli_world w = {
        .rank = g_rank,
        .size = g_size,
        .needs_mapped_input = 1,
        .agree = mpi_agree,
        .max = mpi_max,
        .sum = mpi_sum,
        .rows = mpi_rows,
        .text_share = mpi_text_share,
        .reduce_many = mpi_reduce_many,
        .scan = mpi_scan,
        .stream_create = mpi_stream_create,
        .stream_update = mpi_stream_update,
        .stream_results = mpi_stream_results,
        .stream_destroy = mpi_stream_destroy,
        .decimal_sums = mpi_decimal_sums,
        .write_values = mpi_write_values,
    };
    g_world = w;
    MPI_Op_create(sum_op, 1, &g_sum_op);
    cli_msg.program = "tally-mpi";
    cli_msg.say = mpi_say;
    return &g_world;
}

void tally_mpi_world_end(void)
{
    MPI_Op_free(&g_sum_op);
    free(g_msgs.p);
    memset(&g_msgs, 0, sizeof g_msgs);
}
