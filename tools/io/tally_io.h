/* tally_io: the readers behind the tally command (not part of libtally), one static library
 * with this one header, shared by `tally` and `tally-mpi`.
 *
 *   - tio_parse_number: one text field -> exact int64, or a correctly rounded double;
 *   - tio_npy_parse:    a .npy header (versions 1, 2, 3) -> dtype, shape, data offset;
 *   - tio_input:        a file or standard input, memory-mapped when it is a regular file with
 *                       a size; guarded against truncation while mapped (tio_input_changed);
 *   - tio_text_*:       CSV / TSV / whitespace text, split into blocks at record ends and parsed
 *                       on worker threads; values come back in input order, per field, typed.
 *                       A byte range of a mapped file (start, limit) can be read on its own:
 *                       one rank of an MPI job reads its share of one file.
 * Nothing here prints or exits: errors come back as a status and a message buffer. Mapping a
 * file installs a SIGBUS handler once (see tio_input_changed). */
#ifndef TALLY_IO_H
#define TALLY_IO_H

#include <stddef.h>
#include <stdint.h>
#include "tally.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- numbers --------------------------------------------------------------------------------- */
typedef enum tio_num_kind { TIO_NUM_INVALID = 0, TIO_NUM_INT = 1, TIO_NUM_FLOAT = 2 } tio_num_kind;

/* Parses s[0..len) (blanks and a trailing CR around it are ignored).
 *   [+-]digits that fit int64                         -> TIO_NUM_INT, *iv (exact);
 *   [+-](digits[.digits]|.digits)([eE][+-]digits)?,
 *   inf, infinity, nan (any case, optional sign)      -> TIO_NUM_FLOAT, *dv correctly rounded
 *                                                        (round to nearest even, like strtod);
 *   anything else (empty, hex, "1,5", "12abc")        -> TIO_NUM_INVALID.
 * An integer too large for int64 comes back as TIO_NUM_FLOAT. */
tio_num_kind tio_parse_number(const char *s, size_t len, int64_t *iv, double *dv);

/* Like tio_parse_number, but a plain decimal ([+-]digits.digits, no exponent, at most 18
 * significant digits and TIO_MAX_SCALE decimals, not -0.0) comes back exactly as TIO_NUM_INT:
 * *iv = the digits as an integer, *scale = the number of decimals ("12.50" -> 1250, 2).
 * Integers have scale 0. */
#define TIO_MAX_SCALE 18
tio_num_kind tio_parse_number_scaled(const char *s, size_t len, int64_t *iv, int *scale,
                                     double *dv);
/* m / 10^scale, correctly rounded. */
double tio_decimal_to_double(int64_t m, int scale);

/* Shortest text that reads back (strtod / strtof) to the same value, in plain notation for
 * decimal exponents -5..16 and scientific beyond: "0.1", "693720", "1e+300", "nan", "inf",
 * "-inf", "-0". buf needs 32 bytes. Returns buf. */
/* Length (1-4) of the valid UTF-8 sequence at s[0..n) (n >= 1), or 0: a bad lead or
 * continuation byte, a truncated, overlong or surrogate sequence, or past U+10FFFF. */
size_t tio_utf8_len(const unsigned char *s, size_t n);
char *tio_format_double(double v, char *buf);
char *tio_format_float(float v, char *buf);

/* ---- .npy headers ---------------------------------------------------------------------------- */
#define TIO_NPY_MAX_DIMS 32
typedef struct tio_npy_info {
    int major, minor;
    size_t data_offset;        /* where the array data starts */
    char descr[24];            /* as written, e.g. "<f8" */
    tally_type type;
    size_t elsize;
    int swap;                  /* 1: data is big-endian (bytes must be swapped on this host) */
    int is_bool;               /* '|b1': one byte each, any nonzero byte is true */
    int fortran_order;
    int ndim;
    uint64_t shape[TIO_NPY_MAX_DIMS];
    uint64_t count;            /* product of shape (1 for a 0-d array) */
} tio_npy_info;

typedef enum tio_npy_status {
    TIO_NPY_OK = 0,
    TIO_NPY_NOT_NPY = 1,       /* no magic */
    TIO_NPY_TRUNCATED = 2,     /* fewer bytes than the header needs */
    TIO_NPY_MALFORMED = 3,     /* bad version or header text */
    TIO_NPY_UNSUPPORTED = 4    /* a dtype tally has no type for (f2, c16, structured, ...) */
} tio_npy_status;

/* 1 if buf starts with the .npy magic. */
int tio_npy_is_npy(const void *buf, size_t len);
/* Parses the header in buf[0..len). On error, err gets a sentence (no file name). */
tio_npy_status tio_npy_parse(const void *buf, size_t len, tio_npy_info *info, char *err,
                             size_t errlen);
/* Parses a dtype string: tally's names (i16 u16 i32 u32 i64 u64 f32 f64), the words int8 uint8
 * ... float64, float, double, bool, or numpy's codes (i1 u1 i2 u2 i4 u4 f4 f8 b1, optionally
 * after a byte order <, >, |, =; "<i8" is numpy's int64). Returns 0 on success, -1 for an
 * unknown name, TIO_DTYPE_AMBIGUOUS for a bare "i8" or "u8" (tally's int8, numpy's int64). */
#define TIO_DTYPE_AMBIGUOUS (-2)
int tio_parse_dtype(const char *s, tally_type *type, int *swap, int *is_bool);
/* Writes a version 1.0 .npy header for a 1-d little-endian array of n elements into buf
 * (at least 128 bytes); returns its length (a multiple of 64). */
size_t tio_npy_write_header(char *buf, size_t buflen, tally_type type, uint64_t n);

/* ---- input ----------------------------------------------------------------------------------- */
typedef struct tio_input {
    char *name;                /* for messages: the path, or "<stdin>" */
    int fd;
    int owns_fd;
    int mapped;                /* 1: data/size are a read-only mapping of the whole file */
    const uint8_t *data;
    uint64_t size;             /* mapped: the file size; else 0 */
    int size_known;
    uint8_t *peek;             /* non-mapped: bytes read ahead (tio_input_peek), given back first */
    size_t peek_len, peek_pos;
    int from_memory;           /* tio_input_memory: data is the caller's */
    /* what open saw, for tio_input_changed */
    int is_regular;
    uint64_t st_dev, st_ino, st_size;
    int64_t st_mtime_ns;
    int guard_slot;            /* the SIGBUS guard's record of the mapping + 1, or 0 */
} tio_input;

/* path NULL or "-": standard input. A regular file with a nonzero size is mapped; anything else
 * (a pipe, a FIFO, a device, a /proc file whose size reads as 0) is read in pieces. A directory
 * is an error. Returns 0, or -1 with err = "<path>: <strerror>". */
int tio_input_open(tio_input *in, const char *path, char *err, size_t errlen);
/* Wraps a memory buffer (tests, fuzzers). */
void tio_input_memory(tio_input *in, const void *data, size_t len, const char *name);
/* 1 if a regular file changed since tio_input_open: its size or modification time differs, or
 * it was truncated under the mapping (the pages past the new end then read as zeros rather than
 * killing the process with SIGBUS). Call it after reading, before trusting what was read. */
int tio_input_changed(tio_input *in);
/* Reads up to n bytes (peeked bytes first); 0 at end, -1 on error (errno set). */
long long tio_input_read(tio_input *in, void *buf, size_t n);
/* Makes at least want bytes (fewer at end of input) visible at *p without consuming them. */
size_t tio_input_peek(tio_input *in, size_t want, const uint8_t **p);
/* Reads the rest of the input into a malloc'd buffer (for .npy/raw from a pipe); more than max
 * bytes (max > 0) fails with errno EFBIG. 0, or -1 with errno set. */
int tio_input_read_all(tio_input *in, size_t max, uint8_t **buf, size_t *len);
void tio_input_close(tio_input *in);

/* ---- text (CSV, TSV, whitespace) ------------------------------------------------------------- */
typedef struct tio_text_options {
    char delim;                /* 0: from the file name (.csv ',', .tsv/.tab '\t') or sniffed */
    int whitespace;            /* 1: fields are separated by runs of blanks (no quoting) */
    int header;                /* 1: the first record names the fields */
    int threads;               /* parsing threads; <= 0: one per core */
    size_t block_size;         /* bytes per parallel block; 0: default (512 KiB) */
    int skip_invalid;          /* 1: bad values are reported to the sink and skipped (a NUL byte
                                  is always an error: binary data is not text) */
    uint64_t start;            /* mapped input: begin at this byte offset, which must be a record
                                  start (see tio_text_record_start); the header (if any) is still
                                  read from offset 0 */
    uint64_t limit;            /* mapped input: stop at this byte offset (a record start); 0: none */
    uint64_t start_line;       /* with start: the newlines before it, so that messages give the
                                  file's line numbers (0: lines count from the start of the range) */
    size_t max_record;         /* other input: a record longer than this is an error (an endless
                                  line must not take all memory); 0: TIO_DEFAULT_MAX_RECORD */
} tio_text_options;

#define TIO_DEFAULT_MAX_RECORD ((size_t)256 << 20)

/* For splitting a mapped file among readers (MPI ranks): the first offset >= off that starts a
 * record, i.e. follows a '\n', or size. Quotes are not seen here: with quoted newlines in the
 * data, split on known record starts instead. */
uint64_t tio_text_record_start(const tio_input *in, uint64_t off);

/* ---- splitting a mapped text input among readers (MPI ranks), quotes respected ----------------
 * A '\n' inside a quoted field ends no record, and whether an offset is inside quotes depends on
 * everything before it. So readers split a file in two steps: each takes an equal piece
 * [from, to) of the data and maps every state its piece may start in to the state it ends in
 * (tio_text_state_map: one pass, independent of the other pieces); composing the maps of the
 * pieces before its own, in order, gives each reader the true state at its from (the data starts
 * in TIO_TS_RECORD), and tio_text_next_record then finds its first record start. The states are
 * those of the reader's field parser, with the start of a record told apart from the start of
 * another field. Whitespace mode has no quoting: every '\n' ends a record. */
typedef struct tio_text_reader tio_text_reader;

typedef enum tio_text_state {
    TIO_TS_RECORD,             /* a record starts here */
    TIO_TS_FIELD,              /* another field of the record starts here */
    TIO_TS_PLAIN,              /* inside an unquoted field */
    TIO_TS_QUOTED,             /* inside a quoted field */
    TIO_TS_QUOTE_SEEN,         /* just after a quote inside a quoted field ("" or the end) */
    TIO_TS_COUNT
} tio_text_state;
/* Where the data starts in a mapped input (after a byte order mark and the header, if any;
 * whatever start the options gave), and the newlines before it. 0 for other input. */
uint64_t tio_text_data_start(const tio_text_reader *r, uint64_t *lines_before);
/* The state after reading [from, to) of the mapped input, for each state at from: map[s]; and
 * the newlines in [from, to) (newlines may be NULL). */
void tio_text_state_map(const tio_text_reader *r, uint64_t from, uint64_t to,
                        unsigned char map[TIO_TS_COUNT], uint64_t *newlines);
/* The first record start at or after off, the state at off being state (the input's size if no
 * record starts there), and the newlines in between. */
uint64_t tio_text_next_record(const tio_text_reader *r, uint64_t off, int state,
                              uint64_t *newlines);

typedef struct tio_text_sink {
    void *user;
    /* In input order, on the calling thread: n more values of selected field sel, either as
     * int64 decimals (is_float 0: value = vals[i] / 10^scale exactly; scale 0 for integers) or
     * as doubles (is_float 1). Every block of a field may come in a different form. Nonzero
     * stops the run. */
    int (*values)(void *user, int sel, int is_float, int scale, const void *vals, size_t n);
    /* With skip_invalid, in input order: a bad value at line (1-based) and field (1-based);
     * text is the field as written (missing: the record had too few fields). */
    void (*invalid)(void *user, uint64_t line, int field, const char *text, size_t len,
                    int missing);
    /* Bytes of input consumed so far (called after each block). May be NULL. */
    void (*progress)(void *user, uint64_t bytes_done);
} tio_text_sink;

/* Reads the first record (names with header, or just the field count). 0 or -1 (+err). */
int tio_text_open(tio_text_reader **r, tio_input *in, const tio_text_options *opts, char *err,
                  size_t errlen);
/* Fields in the first record (0 for an input without records). */
int tio_text_field_count(const tio_text_reader *r);
/* Name of field i (0-based) from the header, or NULL without header. */
const char *tio_text_field_name(const tio_text_reader *r, int i);
/* The delimiter in use (' ' for whitespace mode). */
char tio_text_delimiter(const tio_text_reader *r);
/* Mapped input, during a sink call: the byte offset where the block being handed over starts
 * (every value before it has been handed over already); after a successful run: the end of the
 * input. A second reader with limit set to it reads those values again. */
uint64_t tio_text_position(const tio_text_reader *r);
/* Which fields to read, 0-based, in output order (sink's sel indexes this list). */
int tio_text_select(tio_text_reader *r, const int *fields, int nfields);
/* Parses everything. Returns 0; 1 for a data error (err: "FILE:LINE:FIELD: 'x' is not a
 * number" or another message naming file and line; the text is shown with control bytes,
 * backslashes and bytes that are not UTF-8 escaped as \n \t \\ \xHH, and cut after 100 bytes); 2 when the
 * sink stopped; -1 for an I/O or memory error (err says which). With start > 0, line numbers
 * count from the start of the range. */
int tio_text_run(tio_text_reader *r, const tio_text_sink *sink, char *err, size_t errlen);
void tio_text_close(tio_text_reader *r);

#ifdef __cplusplus
}
#endif
#endif
