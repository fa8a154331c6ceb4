/* The tally command's internals, shared by its files (tools/cli/), its test driver and its
 * fuzz target. Nothing here is public API.
 *
 *   options.c       the grammar: options, operations, conflicts (cli_parse_args)
 *   command.c       cli_main: the whole command, from argv to an exit status; --help
 *   fields.c        -f: field numbers, ranges and names against the input
 *   results.c       ops -> library calls (the plan), library results -> printable values
 *   decimal.c       exact sums of decimal text (scaled integers): mean and variance, rounded once
 *   text_reduce.c   reductions of text fields: streams per field, int64 until a value says other
 *   spool.c         a pipe's copy of integer values, bounded in memory, for replaying a field
 *   array.c         .npy and raw input: columns, byte order, bools, Fortran order; reductions
 *   scan.c          tally scan
 *   scan_stream.c   tally scan of a binary file into OUT, in chunks (a column larger than memory)
 *   outfile.c       writing OUT: a temporary file renamed at the end, or through a device/FIFO
 *   output.c        the table and JSON output, messages for failed results
 *   progress.c      the progress line on a terminal
 *   world.c         the one-process world (below) and where messages go
 *   info.c demo.c   tally info, tally demo
 *
 * tally-mpi (tools/mpi) runs the same code on every rank of an MPI job, in a world of its own. */
#ifndef TALLY_CLI_H
#define TALLY_CLI_H

#include <stddef.h>
#include <stdint.h>
#include "tally.h"
#include "tally_io.h"

typedef enum cli_cmd { CLI_REDUCE, CLI_SCAN, CLI_INFO, CLI_DEMO, CLI_HELP, CLI_VERSION } cli_cmd;

/* What the user can ask for; several map to one library op (var and svar differ by ddof). */
typedef enum cli_op {
    CLI_OP_COUNT, CLI_OP_SUM, CLI_OP_PROD, CLI_OP_MIN, CLI_OP_MAX, CLI_OP_MEAN, CLI_OP_VAR,
    CLI_OP_STD, CLI_OP_SVAR, CLI_OP_SSTD, CLI_OP_AND, CLI_OP_OR, CLI_OP_XOR, CLI_OP_ARGMIN,
    CLI_OP_ARGMAX
} cli_op;

#define CLI_MAX_OPS 64

typedef struct cli_opts {
    cli_cmd cmd;
    cli_op ops[CLI_MAX_OPS];
    const char *op_names[CLI_MAX_OPS]; /* as the user spelled them (pvar, sstdev, ...) */
    int nops;
    const char *file;                  /* NULL: standard input */
    /* text input */
    int header;
    char delim;                        /* 0: auto */
    int whitespace;
    const char *fields;                /* -f spec, resolved against the input later */
    /* raw binary */
    const char *dtype;
    /* engine */
    tally_backend_kind backend;
    int threads;                       /* 0: all cores */
    int omit_nan;
    int skip_invalid;
    /* output */
    int json;
    int progress;                      /* -1 auto (a terminal), 0 never, 1 always */
    int show_backend;                  /* 1: say on stderr which backend ran the calls */
    size_t block_size;                 /* text block size (0: the reader's default) */
    /* scan */
    cli_op scan_op;
    int exclusive;
    const char *init;
    const char *out;
    int text;
    unsigned given;                    /* CLI_GIVEN_* bits: which options appeared */
    char err[256];                     /* the usage error, when parsing fails */
} cli_opts;

/* Options that only make sense for text input; refused for .npy and --dtype input. */
enum {
    CLI_GIVEN_HEADER = 1u << 0, CLI_GIVEN_DELIM = 1u << 1, CLI_GIVEN_WHITESPACE = 1u << 2,
    CLI_GIVEN_SKIP_INVALID = 1u << 3, CLI_GIVEN_BLOCK_SIZE = 1u << 4
};

/* Parses argv (argv[0] is the program). Returns 0, or 2 for a usage error (o->err says what).
 * Never prints, never exits; keeps pointers into argv. */
int cli_parse_args(int argc, char **argv, cli_opts *o);
/* "sum" -> CLI_OP_SUM (aliases: pvar, pstdev, sstdev); -1 if unknown. */
int cli_op_from_name(const char *name);
/* 1 if the op has a scan (sum prod min max and or xor). */
int cli_op_scannable(cli_op op);
tally_op cli_op_library(cli_op op);
int cli_has_bitwise(const cli_opts *o);

/* ---- limits and test seams ------------------------------------------------------------------
 * The shipped command uses the defaults. tools/cli/testing.c (tally-testing, never installed)
 * changes them to reach the limits with small inputs; no environment variable is read. */
typedef struct cli_limits {
    size_t spool_memory;        /* a pipe's in-memory copy of values, all fields together */
    size_t max_record;          /* the longest record read from a pipe (0: the reader's) */
    long long write_limit;      /* >= 0: writing OUT fails with ENOSPC after this many bytes */
    /* called once the input is open (and mapped), before anything is read */
    void (*after_input_open)(const char *path);
    uint64_t scan_chunk;        /* elements per chunk of a streamed scan (0: 4 MiB of them) */
} cli_limits;
extern cli_limits cli_limit;
#define CLI_SPOOL_MEMORY ((size_t)256 << 20)

/* The whole command: argv in, exit status out (0 ok, 1 bad data, 2 usage). Prints results on
 * stdout and messages on stderr; never exits; leaves no signal handler or global state behind,
 * so a fuzzer can call it repeatedly. `tally bench` and `tally explain` are main.c's. */
int cli_main(int argc, char **argv);

/* ---- messages ------------------------------------------------------------------------------
 * Every message is one line on stderr, "PROGRAM: ...". A program may take the lines instead
 * (tally-mpi keeps another rank's lines until the ranks agree on who failed): cli_messages.say
 * gets each finished line without its newline. Set once, before anything runs. */
typedef enum cli_msg_kind {
    CLI_MSG_ERROR,             /* an error (the command fails) */
    CLI_MSG_WARNING,           /* a warning */
    CLI_MSG_SKIPPED            /* --skip-invalid: one skipped value (at most 10 are shown) */
} cli_msg_kind;
typedef struct cli_messages {
    const char *program;       /* "tally" */
    void (*say)(cli_msg_kind kind, const char *line);   /* NULL: stderr */
} cli_messages;
extern cli_messages cli_msg;
#define CLI_SKIPPED_SHOWN 10   /* skipped values named one by one; the rest are counted */

void cli_say(cli_msg_kind kind, const char *line);
void cli_error(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void cli_warning(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* A value skipped with --skip-invalid, or a missing field; text is the field as written. */
void cli_skipped(const char *file, uint64_t line, int field, const char *text, size_t len,
                 int missing);
/* "skipped N invalid values", after the run. */
void cli_skipped_total(const char *file, uint64_t n);
/* A usage error: the sentence, then the usage line; returns 2. */
int cli_usage_error(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* A reader's error (tio_text_run's return value run): a bad value (run == 1) is printed as the
 * reader spells it ("data.csv:3:2: 'x' is not a number"); other errors get the "tally: " prefix. */
void cli_data_error(int run, const char *err);
/* Reports "FILE changed while being read" and returns 1 if the input changed under us. */
int cli_input_changed(tio_input *in);

/* ---- the processes: one (tally), or the ranks of an MPI job (tally-mpi) ---------------------
 * The command runs the same code on every process, each on its share of the input; a world
 * supplies what differs. tally runs in cli_world_one (world.c: one process, the library's own
 * calls); tally-mpi in a world over MPI (tools/mpi). A hook marked collective is called by every
 * process in the same order whatever happened on it before: a process that failed says so
 * through agree and never skips a collective, so no process waits for one that left. */
typedef struct cli_stream cli_stream;          /* a tally_stream, or a tally_mpi_stream */
struct cli_decimal;
typedef struct cli_world cli_world;
struct cli_world {
    int rank, size;            /* this process is rank of size (tally: 0 of 1); rank 0 prints */
    int needs_mapped_input;    /* every process reads its share of one mapped file */
    /* collective: every process's status in, the first nonzero one in rank order out (0 if
     * none), the same on every process. Data errors are found in file order, so this is the
     * error that comes first in the input, as one process would report it. */
    int (*agree)(const cli_world *w, int rc);
    /* collective: v[0..n) becomes the element-wise maximum over the processes */
    void (*max)(const cli_world *w, int64_t *v, int n);
    /* collective: *before = the sum of v over the processes before this one, *total over all
     * (either may be NULL; both saturate at UINT64_MAX) */
    void (*sum)(const cli_world *w, uint64_t v, uint64_t *before, uint64_t *total);
    /* this process's share of n rows: [*lo, *hi) */
    void (*rows)(const cli_world *w, uint64_t n, uint64_t *lo, uint64_t *hi);
    /* collective (may be NULL: the whole input): this process's byte range of the mapped text
     * input that r reads (its header read): sets to->start, to->limit, to->start_line.
     * 0, or 1 after a message. */
    int (*text_share)(const cli_world *w, tio_text_reader *r, tio_input *in,
                      tio_text_options *to);
    /* collective: tally_reduce_many over the concatenation of the processes' slices */
    tally_status (*reduce_many)(const cli_world *w, tally_context *ctx, tally_type type,
                                const void *data, uint64_t n, const tally_op *ops, size_t nops,
                                const tally_reduce_options *opts, tally_result *results);
    /* collective: tally_scan over the concatenation, each process writing its slice */
    tally_status (*scan)(const cli_world *w, tally_context *ctx, tally_op op, tally_type type,
                         const void *in, void *out, uint64_t n, const tally_scan_options *opts);
    /* streams over the concatenation: create, update and destroy are local, results collective */
    tally_status (*stream_create)(const cli_world *w, tally_context *ctx, tally_type type,
                                  const tally_op *ops, size_t nops,
                                  const tally_reduce_options *opts, cli_stream **s);
    tally_status (*stream_update)(cli_stream *s, const void *data, uint64_t n);
    tally_status (*stream_results)(cli_stream *s, tally_result *results);
    void (*stream_destroy)(cli_stream *s);
    /* collective: d[0..n) become the exact sums over the processes (each field at one scale).
     * 0, or 1 after a message (the same on every process) */
    int (*decimal_sums)(const cli_world *w, struct cli_decimal *d, int n);
    /* collective: writes the scan (the processes' values, concatenated) as o asks: .npy or text,
     * to OUT or standard output, never a partial OUT. 0, or an exit status after a message. */
    int (*write_values)(const cli_world *w, const cli_opts *o, tally_type type, const void *v,
                        uint64_t n);
};
extern const cli_world cli_world_one;

/* From an open input to an exit status: reduce or scan it in world w (collective). */
int cli_run(const cli_opts *o, const cli_world *w);
/* For text options given with binary input: a usage error (2), else 0. */
int cli_refuse_text_options(const cli_opts *o, const char *what);

/* A context on backend kind (device: GPU ordinal), or NULL after a message. */
tally_context *cli_context(const cli_opts *o, tally_backend_kind kind, int device);
int cli_info(const cli_opts *o);
int cli_demo(const cli_opts *o);

/* ---- fields -------------------------------------------------------------------------------- */
/* Resolves -f against nfields (0: unknown) and names (NULL: the input has no names; is_array:
 * the input is an array, whose fields are column numbers). On success returns the count and
 * *sel (malloc'd, 0-based); with more than maxsel fields selected, an error. Returns -2 after a
 * usage message, -1 after a data message (an empty input with a header). */
int cli_select_fields(const cli_opts *o, int nfields, const char *const *names, int is_array,
                      int maxsel, int **sel);

/* ---- results ------------------------------------------------------------------------------- */
enum { V_NONE, V_I64, V_U64, V_F64, V_F32 };

typedef struct cli_value {
    tally_status status;
    int kind;
    int64_t i;
    uint64_t u;
    double d;
} cli_value;

/* Results of every op for every field: row-major, nfields x nops. */
typedef struct cli_table {
    int nfields, nops;
    char **names;              /* the field names as read (any bytes), or its number */
    cli_value *v;
} cli_table;

int cli_table_init(cli_table *t, int nfields, int nops);
void cli_table_free(cli_table *t);
/* Sets field f's name (copied); NULL: its 1-based number. 0, or -1 out of memory. */
int cli_table_name(cli_table *t, int f, const char *name, int number);
static inline cli_value *cli_cell(const cli_table *t, int f, int k) { return &t->v[(size_t)f * t->nops + k]; }

/* Group 0 holds every library op with ddof 0; group 1 only TALLY_VAR with ddof 1 (svar, sstd). */
#define CLI_PLAN_MAX 16
typedef struct cli_plan {
    tally_op ops[2][CLI_PLAN_MAX];
    int n[2];
    int group[CLI_MAX_OPS], index[CLI_MAX_OPS];
} cli_plan;
/* The library ops behind o's ops; with_prod 0 leaves prod out (text fields reduce it apart). */
void cli_make_plan(const cli_opts *o, int with_prod, cli_plan *p);
/* Library results -> values of o's ops; input is the data's type (f32 min/max print as f32). */
void cli_fill_values(const cli_opts *o, const cli_plan *p, tally_result res[2][CLI_PLAN_MAX],
                     tally_type input, cli_value *out);

/* ---- output -------------------------------------------------------------------------------- */
/* The results on stdout: one value, a table, or JSON. */
void cli_print(const cli_opts *o, const cli_table *t);
/* Messages for the results that failed; returns 1 if any did. */
int cli_report_failures(const cli_opts *o, const char *file, const cli_table *t);
/* A value's text (buf >= 64 bytes): integers in full, floats shortest round-trip, "-" if none. */
void cli_value_text(const cli_value *v, char *buf, size_t len);
/* A name for messages and the table: control bytes, backslashes and invalid UTF-8 escaped. */
char *cli_escape_name(const char *s);

/* ---- inputs (collective in w) ---------------------------------------------------------------- */
int cli_reduce_text(const cli_opts *o, const cli_world *w, tally_context *ctx, tio_input *in);
int cli_reduce_array(const cli_opts *o, const cli_world *w, tally_context *ctx, tio_input *in);
int cli_scan(const cli_opts *o, const cli_world *w, tally_context *ctx, tio_input *in, int binary);
/* --init as the scan options' init for type t (so->has_init set when given): 0, or 2 after a
 * usage message. */
int cli_scan_init(const cli_opts *o, tally_type t, tally_scan_options *so);
/* tally scan of a binary regular file into a regular OUT, in chunks (scan_stream.c), in one
 * process: an exit status, or -1 (nothing printed, nothing read) when the input, OUT or the
 * backend is not one it streams, for the one-call path. */
int cli_scan_streamed(const cli_opts *o, tally_context *ctx, tio_input *in);

/* A loaded .npy or raw input, as columns. */
typedef struct cli_array {
    const uint8_t *data;       /* first element */
    uint64_t n;                /* elements per column */
    int ncols;
    int fortran;               /* 1: columns are contiguous */
    tally_type type;
    size_t elsize;
    int swap;                  /* bytes must be swapped */
    int is_bool;               /* bytes: any nonzero byte is 1 */
    uint8_t *owned;            /* a buffer we filled (pipe input, C order of a Fortran nd array) */
} cli_array;
/* Loads the binary input. 0, or an exit status after a message. */
int cli_array_open(const cli_opts *o, tio_input *in, cli_array *a);
/* Rows [lo, hi) of column c, native, aligned and contiguous: a copy, or the data itself when it
 * already is that; *owned gets the buffer to free. NULL when out of memory. */
const void *cli_array_rows(const cli_array *a, int c, uint64_t lo, uint64_t hi, void **owned);
void cli_array_free(cli_array *a);
/* The layout of a regular file's binary input, read with pread (no data is read, the file
 * offset does not move, nothing is printed): 0 when every column is contiguous in the file
 * (1-d, C-order n-d, one column, or a Fortran 2-d array) and the file holds all of it, with
 * *offset where the data starts and a->data NULL; -1 for anything else (cli_array_open then
 * says what is wrong, or reads it whole). */
int cli_array_probe(const cli_opts *o, tio_input *in, cli_array *a, uint64_t *offset);
/* m elements of a's column as read from the file, made native in place (byte order, bools). */
void cli_array_native(const cli_array *a, void *buf, uint64_t m);

/* Opens the text reader on in, on this process's share of it (w->text_share), and resolves -f;
 * maxsel is the most fields the caller takes; *to gets the reader's options. Collective.
 * Returns the reader, or NULL with *status the exit status (message printed). */
tio_text_reader *cli_text_open(const cli_opts *o, const cli_world *w, tio_input *in, int maxsel,
                               int **sel, int *nsel, tio_text_options *to, int *status);
/* The reader options that the command's options ask for. */
void cli_text_options(const cli_opts *o, tio_text_options *to);

/* ---- writing OUT --------------------------------------------------------------------------- */
typedef struct cli_outfile {
    const char *name;          /* as given, for messages */
    int fd;
    int direct;                /* 1: writing OUT itself (a device, a FIFO); 0: a temporary file */
    char *target;              /* the file renamed over (OUT, or the end of its symlinks) */
} cli_outfile;
/* Opens OUT for writing: a temporary file beside the regular file OUT (or the file its
 * symlinks lead to) with OUT's mode, or OUT itself when it is a device or a FIFO. 0, or 1 after
 * a message. */
int cli_out_open(cli_outfile *f, const char *out);
/* 1 if cli_out_open would write OUT through a temporary file renamed at the end (OUT, or the
 * end of its symlinks, is a regular file or does not exist yet); 0 for standard output ("-" or
 * NULL), a device, a FIFO, a directory, or a path that cannot be followed. */
int cli_out_replaces(const char *out);
/* Writes all of p (honouring cli_limit.write_limit). 0, or -1 with errno. */
int cli_out_write(cli_outfile *f, const void *p, size_t n);
/* ok: close and rename into place (0, or 1 after a message); !ok: discard (returns 1). */
int cli_out_finish(cli_outfile *f, int ok);
/* The temporary file being written (NULL when writing OUT itself). */
const char *cli_out_temp(const cli_outfile *f);

/* ---- values as text (tally scan --text) ----------------------------------------------------- */
/* Value i of v (type t) and a newline into buf (at least 48 bytes); returns the length. */
size_t cli_value_line(tally_type t, const void *v, uint64_t i, char *buf);
/* Lines for n values: a malloc'd buffer, its length in *len; NULL when out of memory. */
char *cli_value_lines(tally_type t, const void *v, uint64_t n, size_t *len);
/* The scan's output as o asks, in one process (cli_world_one's write_values). */
int cli_write_values_one(const cli_opts *o, tally_type type, const void *v, uint64_t n);

/* ---- progress ------------------------------------------------------------------------------ */
void cli_progress_start(const cli_opts *o, const char *name, uint64_t total);
void cli_progress_update(uint64_t done);
void cli_progress_end(void);
/* Reads a mapped file's pages with a progress line first, when someone watches a terminal. */
void cli_prefault(const cli_opts *o, tio_input *in);

#endif
