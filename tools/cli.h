/* The tally command: options and the op table, shared by the command and its fuzz target. */
#ifndef TALLY_CLI_H
#define TALLY_CLI_H

#include <stddef.h>
#include "tally.h"

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
    size_t block_size;                 /* text block size (tests use small ones) */
    /* scan */
    cli_op scan_op;
    int exclusive;
    const char *init;
    const char *out;
    int text;
    char err[256];                     /* the usage error, when parsing fails */
} cli_opts;

/* Parses argv (argv[0] is the program). Returns 0, or 2 for a usage error (o->err says what).
 * Never prints, never exits; keeps pointers into argv. */
int cli_parse_args(int argc, char **argv, cli_opts *o);

/* "sum" -> CLI_OP_SUM (aliases: pvar, pstdev, sstdev); -1 if unknown. */
int cli_op_from_name(const char *name);
/* 1 if the op has a scan (sum prod min max and or xor). */
int cli_op_scannable(cli_op op);
tally_op cli_op_library(cli_op op);

/* Shared by the command's files (tools/tally.c, tools/cli_demo.c). */
void cli_error(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* A context on backend kind (device: GPU ordinal), or NULL after a message. */
tally_context *cli_context(const cli_opts *o, tally_backend_kind kind, int device);
int cli_info(const cli_opts *o);
int cli_demo(const cli_opts *o);

#endif
