/* Where messages go, and the world of one process (tally): every collective is the library's own
 * call or nothing at all. tally-mpi's world is in tools/mpi. */
#include "cli.h"
#include "decimal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages ------------------------------------------------------------------------------ */
cli_messages cli_msg = {"tally", NULL};

void cli_say(cli_msg_kind kind, const char *line)
{
    if (cli_msg.say) {
        cli_msg.say(kind, line);
        return;
    }
    fputs(line, stderr);
    fputc('\n', stderr);
}

static void cli_vsay(cli_msg_kind kind, const char *prefix, const char *fmt, va_list ap)
{
    char small[1024], *line = small;
    va_list again;
    va_copy(again, ap);
    int k = snprintf(small, sizeof small, "%s: %s", cli_msg.program, prefix);
    int m = vsnprintf(small + k, sizeof small - (size_t)k, fmt, ap);
    if (m >= 0 && (size_t)(k + m) >= sizeof small) {        /* a long path: the whole line */
        char *big = malloc((size_t)(k + m) + 1);
        if (big) {
            memcpy(big, small, (size_t)k);
            vsnprintf(big + k, (size_t)m + 1, fmt, again);
            line = big;
        }
    }
    va_end(again);
    cli_say(kind, line);
    if (line != small) free(line);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vsay(CLI_MSG_ERROR, "", fmt, ap);
    va_end(ap);
}

void cli_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vsay(CLI_MSG_WARNING, "warning: ", fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vsay(CLI_MSG_ERROR, "", fmt, ap);
    va_end(ap);
    char line[256];
    snprintf(line, sizeof line, "usage: %s [options] OPS [FILE]   (%s --help for more)",
             cli_msg.program, cli_msg.program);
    cli_say(CLI_MSG_ERROR, line);
    return 2;
}

void cli_data_error(int run, const char *err)
{
    if (run == 1) cli_say(CLI_MSG_ERROR, err);
    else cli_error("%s", err);
}

void cli_skipped(const char *file, uint64_t line, int field, const char *text, size_t len,
                 int missing)
{
    char msg[1024];
    if (missing) {
        snprintf(msg, sizeof msg, "%s: warning: %s:%llu:%d: missing field (skipped)",
                 cli_msg.program, file, (unsigned long long)line, field);
        cli_say(CLI_MSG_SKIPPED, msg);
        return;
    }
    char *copy = malloc(len + 1);
    char *shown = NULL;
    if (copy) {
        memcpy(copy, text, len);
        copy[len] = '\0';
        for (size_t k = 0; k < len; k++)
            if (!copy[k]) copy[k] = ' ';        /* NUL bytes end the text before this */
        if (len > 100) memcpy(copy + 97, "...", 4);
        shown = cli_escape_name(copy);
    }
    snprintf(msg, sizeof msg, "%s: warning: %s:%llu:%d: '%s' is not a number (skipped)",
             cli_msg.program, file, (unsigned long long)line, field, shown ? shown : "?");
    cli_say(CLI_MSG_SKIPPED, msg);
    free(shown);
    free(copy);
}

void cli_skipped_total(const char *file, uint64_t n)
{
    if (n)
        cli_warning("%s: skipped %llu invalid value%s", file, (unsigned long long)n,
                    n == 1 ? "" : "s");
}

/* ---- one process --------------------------------------------------------------------------- */
static int one_agree(const cli_world *w, int rc)
{
    (void)w;
    return rc;
}

static void one_max(const cli_world *w, int64_t *v, int n) { (void)w, (void)v, (void)n; }

static void one_sum(const cli_world *w, uint64_t v, uint64_t *before, uint64_t *total)
{
    (void)w;
    if (before) *before = 0;
    if (total) *total = v;
}

static void one_rows(const cli_world *w, uint64_t n, uint64_t *lo, uint64_t *hi)
{
    (void)w;
    *lo = 0;
    *hi = n;
}

static tally_status one_reduce_many(const cli_world *w, tally_context *ctx, tally_type type,
                                    const void *data, uint64_t n, const tally_op *ops,
                                    size_t nops, const tally_reduce_options *opts,
                                    tally_result *results)
{
    (void)w;
    return tally_reduce_many(ctx, type, data, n, ops, nops, opts, results);
}

static tally_status one_scan(const cli_world *w, tally_context *ctx, tally_op op, tally_type type,
                             const void *in, void *out, uint64_t n, const tally_scan_options *opts)
{
    (void)w;
    return n ? tally_scan(ctx, op, type, in, out, n, opts) : TALLY_OK;
}

static tally_status one_stream_create(const cli_world *w, tally_context *ctx, tally_type type,
                                      const tally_op *ops, size_t nops,
                                      const tally_reduce_options *opts, cli_stream **s)
{
    (void)w;
    return tally_stream_create(ctx, type, ops, nops, opts, (tally_stream **)s);
}

static tally_status one_stream_update(cli_stream *s, const void *data, uint64_t n)
{
    return tally_stream_update((tally_stream *)s, data, n);
}

static tally_status one_stream_results(cli_stream *s, tally_result *results)
{
    return tally_stream_results((tally_stream *)s, results);
}

static void one_stream_destroy(cli_stream *s) { tally_stream_destroy((tally_stream *)s); }

static int one_decimal_sums(const cli_world *w, struct cli_decimal *d, int n)
{
    (void)w, (void)d, (void)n;
    return 0;
}

static int one_write_values(const cli_world *w, const cli_opts *o, tally_type type, const void *v,
                            uint64_t n)
{
    (void)w;
    return cli_write_values_one(o, type, v, n);
}

const cli_world cli_world_one = {
    .rank = 0,
    .size = 1,
    .needs_mapped_input = 0,
    .agree = one_agree,
    .max = one_max,
    .sum = one_sum,
    .rows = one_rows,
    .text_share = NULL,
    .reduce_many = one_reduce_many,
    .scan = one_scan,
    .stream_create = one_stream_create,
    .stream_update = one_stream_update,
    .stream_results = one_stream_results,
    .stream_destroy = one_stream_destroy,
    .decimal_sums = one_decimal_sums,
    .write_values = one_write_values,
};
