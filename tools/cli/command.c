/* cli_main: the tally command from argv to an exit status.
 *
 *   tally [options] OPS [FILE]          reductions (sum,min,max,...) per field
 *   tally scan OP [options] [FILE] -o OUT
 *   tally info | demo | --help | --version
 *
 * Exit status: 0 success, 1 bad data (not a number, malformed .npy, overflow, empty input for
 * min/max/mean..., a file that changed while read), 2 usage errors. See docs/cli.md. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cli_limits cli_limit = {CLI_SPOOL_MEMORY, 0, -1, NULL, 0};

int cli_input_changed(tio_input *in)
{
    if (!tio_input_changed(in)) return 0;
    cli_error("%s changed while being read", in->name);
    return 1;
}

tally_context *cli_context(const cli_opts *o, tally_backend_kind kind, int device)
{
    tally_options to;
    tally_options_init(&to);
    to.backend = kind;
    to.threads = o->threads;
    to.device = device;
    tally_context *ctx = NULL;
    tally_status s = tally_create(&ctx, &to);
    if (s != TALLY_OK) {
        const char *d = tally_create_error();
        cli_error("cannot use backend %s: %s", tally_backend_name(kind),
                  d && *d ? d : tally_status_string(s));
        return NULL;
    }
    return ctx;
}

static void cli_help(void)
{
    printf("usage: tally [options] OPS [FILE]\n"
           "       tally scan OP [--exclusive [--init V]] [options] [FILE] -o OUT | --text\n"
           "       tally info | demo | --help | --version\n"
           "       tally bench ... | tally explain ...   (the lab, when built: tally bench --help)\n"
           "\n"
           "OPS is a comma-separated list of: count sum prod min max mean var std svar sstd\n"
           "and or xor argmin argmax (var/std: population; svar/sstd: sample; datamash's pvar,\n"
           "pstdev, sstdev are accepted). Sums are exact: integers exactly, decimals exactly in\n"
           "decimal, floats correctly rounded. FILE is .npy (detected by its magic), CSV/TSV/\n"
           "whitespace text, or raw binary with --dtype; no FILE or '-' reads standard input.\n"
           "\n"
           "input (text):\n"
           "  -H, --header          the first line names the fields\n"
           "  -t, --delimiter C     one character, or tab, comma, space (default: from .csv/.tsv,\n"
           "                        else sniffed)\n"
           "  -W, --whitespace      fields separated by runs of blanks (not with -t)\n"
           "  -f, --field LIST      fields by number (1, 2-4) or header name, comma-separated;\n"
           "                        default: every field; several fields give one result each\n"
           "                        (.npy: column numbers)\n"
           "      --skip-invalid    warn about values that are not numbers, count them, go on\n"
           "      --block-size N    bytes per parallel text block (default 512 KiB)\n"
           "input (binary):\n"
           "      --dtype T         raw binary input of T: int8 uint8 i16 u16 i32 u32 i64 u64 f32\n"
           "                        f64 (or int16 ... float64, bool), or numpy's codes i1 u1 i2 u2\n"
           "                        i4 u4 f4 f8 b1 with a byte order: <i8 is int64, >f8 big-endian.\n"
           "                        A bare i8 or u8 is refused: int8 or <i8?\n"
           "engine:\n"
           "      --backend B       ");
    for (int k = 0; k < TALLY_BACKEND_KIND_COUNT; k++) {
        const char *name = tally_backend_name((tally_backend_kind)k);
        if (name) printf("%s%s", k ? ", " : "", name);
    }
    printf(" (see tally info)\n"
           "  -j, --threads N       threads for parsing and reducing (default: all cores)\n"
           "      --omit-nan        ignore NaN in every op (NumPy's nan* functions)\n"
           "      --show-backend    say on stderr which backend ran (auto: by where the data is;\n"
           "                        tally info prints the rule)\n"
           "output:\n"
           "      --json            a JSON list, one object per field\n"
           "      --progress, --no-progress   force the progress line on stderr (default: terminals)\n"
           "scan:\n"
           "      --exclusive       exclusive scan (out[0] = init, the op's identity by default)\n"
           "      --init V          the initial value of an exclusive scan\n"
           "  -o, --output OUT      write the scan as .npy (a regular OUT is written to\n"
           "                        OUT.tmp.*, then renamed; a device or FIFO is written as is)\n"
           "      --text            write the scan as text, one value per line (stdout without -o)\n"
           "\n"
           "exit status: 0 ok, 1 bad data or a failed op (empty input, overflow), 2 usage error\n");
}

int cli_refuse_text_options(const cli_opts *o, const char *what)
{
    static const struct { unsigned bit; const char *name; } text_only[] = {
        {CLI_GIVEN_HEADER, "-H/--header"},     {CLI_GIVEN_DELIM, "-t/--delimiter"},
        {CLI_GIVEN_WHITESPACE, "-W/--whitespace"}, {CLI_GIVEN_SKIP_INVALID, "--skip-invalid"},
        {CLI_GIVEN_BLOCK_SIZE, "--block-size"},
    };
    for (size_t k = 0; k < sizeof text_only / sizeof text_only[0]; k++)
        if (o->given & text_only[k].bit)
            return cli_usage_error("%s applies to text input, and %s", text_only[k].name, what);
    return 0;
}

int cli_run(const cli_opts *o, const cli_world *w)
{
    tio_input in;
    char err[512];
    int opened = tio_input_open(&in, o->file, err, sizeof err) == 0, rc = 0;
    if (!opened) {
        cli_error("%s", err);
        rc = 1;
    } else if (w->needs_mapped_input && !in.mapped) {
        /* every process maps its share; an empty regular file is not mapped, and has none */
        const uint8_t *p;
        if (!in.is_regular || tio_input_peek(&in, 1, &p) != 0) {
            cli_error("%s: not a regular file: every process reads its share of it", in.name);
            rc = 1;
        }
    }
    if ((rc = w->agree(w, rc)) != 0) {
        if (opened) tio_input_close(&in);
        return rc;
    }
    if (cli_limit.after_input_open) cli_limit.after_input_open(in.name);
    int binary = o->dtype != NULL;
    if (!binary) {
        const uint8_t *p;
        size_t got = tio_input_peek(&in, 6, &p);
        binary = tio_npy_is_npy(p, got);
        if (binary) rc = cli_refuse_text_options(o, "the input is .npy");
    }
    tally_context *ctx = NULL;
    if (!rc && !(ctx = cli_context(o, o->backend, 0))) rc = 1;
    if ((rc = w->agree(w, rc)) == 0) {
        if (o->cmd == CLI_SCAN) rc = cli_scan(o, w, ctx, &in, binary);
        else if (binary) rc = cli_reduce_array(o, w, ctx, &in);
        else rc = cli_reduce_text(o, w, ctx, &in);
        /* the backend of the last call (an AUTO context picks one per call by where the data
         * is: a file or pipe is in host memory) */
        if (o->show_backend && ctx)
            fprintf(stderr, "tally: backend %s\n", tally_backend_name(tally_last_backend(ctx)));
    }
    tally_destroy(ctx);
    tio_input_close(&in);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("writing the output: %s", strerror(errno));
        if (!rc) rc = 1;
    }
    return w->agree(w, rc);
}

int cli_main(int argc, char **argv)
{
    cli_opts o;
    int rc = cli_parse_args(argc, argv, &o);
    if (rc) return cli_usage_error("%s", o.err);
    switch (o.cmd) {
    case CLI_HELP: cli_help(); return fflush(stdout) != 0;
    case CLI_VERSION:
        printf("tally %s (library %s)\n", TALLY_CLI_VERSION, tally_version());
        return fflush(stdout) != 0;
    case CLI_INFO: return cli_info(&o);
    case CLI_DEMO: return cli_demo(&o);
    default: break;
    }
    return cli_run(&o, &cli_world_one);
}
