/* Results on stdout: one value alone, a table (one row per field, one column per op), or JSON.
 *
 * Names are whatever bytes the header held. JSON gets valid UTF-8 always: '"', '\\' and control
 * characters escaped, and each byte that is not part of a valid UTF-8 sequence replaced by
 * U+FFFD. The table and messages show names with control bytes, backslashes and invalid bytes
 * escaped C-style (\n, \\, \xff), so one field stays one row. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_value_text(const cli_value *v, char *buf, size_t len)
{
    switch (v->kind) {
    case V_I64: snprintf(buf, len, "%lld", (long long)v->i); break;
    case V_U64: snprintf(buf, len, "%llu", (unsigned long long)v->u); break;
    case V_F64: tio_format_double(v->d, buf); break;
    case V_F32: tio_format_float((float)v->d, buf); break;
    default: snprintf(buf, len, "-"); break;
    }
}

/* Length of the valid UTF-8 sequence at s (NUL-terminated: a NUL is never a continuation
 * byte, so at most the 4 bytes up to it are read), or 0. */
static size_t cli_utf8_len(const unsigned char *s)
{
    return tio_utf8_len(s, strnlen((const char *)s, 4));
}

char *cli_escape_name(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(4 * n + 1), *o = out;
    if (!out) return NULL;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        size_t k = c >= 0x20 && c != 0x7f && c != '\\' ? cli_utf8_len(u + i) : 0;
        if (k) {
            memcpy(o, s + i, k);
            o += k;
            i += k;
            continue;
        }
        if (c == '\n') o += sprintf(o, "\\n");
        else if (c == '\t') o += sprintf(o, "\\t");
        else if (c == '\r') o += sprintf(o, "\\r");
        else if (c == '\\') o += sprintf(o, "\\\\");
        else o += sprintf(o, "\\x%02x", c);
        i++;
    }
    *o = '\0';
    return out;
}

/* Characters on screen (code points) of a UTF-8 string, for aligning the table. */
static int cli_width(const char *s)
{
    int w = 0;
    for (const unsigned char *u = (const unsigned char *)s; *u; u++) w += (*u & 0xc0) != 0x80;
    return w;
}

static void cli_json_string(FILE *f, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', f);
    while (*u) {
        unsigned c = *u;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else if (c < 0x80) fputc((int)c, f);
        else {
            size_t k = cli_utf8_len(u);
            if (k) fwrite(u, 1, k, f);
            else fputs("\\ufffd", f);
            u += k ? k : 1;
            continue;
        }
        u++;
    }
    fputc('"', f);
}

static void cli_print_json(const cli_opts *o, const cli_table *t)
{
    char buf[64];
    fputc('[', stdout);
    for (int f = 0; f < t->nfields; f++) {
        fputs(f ? ",\n {" : "{", stdout);
        fputs("\"field\": ", stdout);
        cli_json_string(stdout, t->names[f]);
        for (int k = 0; k < o->nops; k++) {
            const cli_value *v = cli_cell(t, f, k);
            fprintf(stdout, ", \"%s\": ", o->op_names[k]);
            if (v->status != TALLY_OK || v->kind == V_NONE) { fputs("null", stdout); continue; }
            cli_value_text(v, buf, sizeof buf);
            if ((v->kind == V_F64 || v->kind == V_F32) && !isfinite(v->d))
                fprintf(stdout, "\"%s\"", buf);
            else
                fputs(buf, stdout);
        }
        fputc('}', stdout);
    }
    fputs("]\n", stdout);
}

void cli_print(const cli_opts *o, const cli_table *t)
{
    char buf[64];
    if (o->json) {
        cli_print_json(o, t);
        return;
    }
    if (t->nfields == 1 && o->nops == 1) {
        const cli_value *v = cli_cell(t, 0, 0);
        if (v->status == TALLY_OK) {
            cli_value_text(v, buf, sizeof buf);
            printf("%s\n", buf);
        }
        return;
    }
    /* a table: one row per field, one column per op */
    char **shown = calloc((size_t)t->nfields, sizeof *shown);
    int *w = calloc((size_t)o->nops, sizeof *w);
    if (!shown || !w) {
        free(shown);
        free(w);
        cli_error("out of memory");
        return;
    }
    int w0 = 5;
    for (int f = 0; f < t->nfields; f++) {
        shown[f] = cli_escape_name(t->names[f]);
        int l = shown[f] ? cli_width(shown[f]) : 0;
        if (l > w0) w0 = l;
    }
    for (int k = 0; k < o->nops; k++) {
        w[k] = (int)strlen(o->op_names[k]);
        for (int f = 0; f < t->nfields; f++) {
            cli_value_text(cli_cell(t, f, k)->status != TALLY_OK ? &(cli_value){0} : cli_cell(t, f, k),
                           buf, sizeof buf);
            if ((int)strlen(buf) > w[k]) w[k] = (int)strlen(buf);
        }
    }
    printf("%-*s", w0, "field");
    for (int k = 0; k < o->nops; k++) printf("  %*s", w[k], o->op_names[k]);
    putchar('\n');
    for (int f = 0; f < t->nfields; f++) {
        const char *name = shown[f] ? shown[f] : "?";
        fputs(name, stdout);
        for (int pad = cli_width(name); pad < w0; pad++) putchar(' ');
        for (int k = 0; k < o->nops; k++) {
            const cli_value *v = cli_cell(t, f, k);
            cli_value_text(v->status != TALLY_OK ? &(cli_value){0} : v, buf, sizeof buf);
            printf("  %*s", w[k], buf);
        }
        putchar('\n');
        free(shown[f]);
    }
    free(shown);
    free(w);
}

int cli_report_failures(const cli_opts *o, const char *file, const cli_table *t)
{
    int bad = 0;
    for (int f = 0; f < t->nfields; f++) {
        char *name = NULL;
        for (int k = 0; k < o->nops; k++) {
            const cli_value *v = cli_cell(t, f, k);
            if (v->status == TALLY_OK) continue;
            bad = 1;
            if (!name) name = cli_escape_name(t->names[f]);
            char where[600];
            if (t->nfields > 1) snprintf(where, sizeof where, "%s: field %.400s", file, name ? name : "?");
            else snprintf(where, sizeof where, "%s", file);
            const char *op = o->op_names[k];
            switch (v->status) {
            case TALLY_ERR_EMPTY:
                cli_error("%s: %s of an empty input (no values)", where, op);
                break;
            case TALLY_ERR_OVERFLOW:
                cli_error("%s: %s: integer overflow: the exact result does not fit in 64 bits",
                          where, op);
                break;
            case TALLY_ERR_DOMAIN:
                cli_error("%s: %s needs at least 2 values", where, op);
                break;
            case TALLY_ERR_UNSUPPORTED:
                cli_error("%s: %s needs integer values", where, op);
                break;
            default:
                cli_error("%s: %s: %s", where, op, tally_status_string(v->status));
                break;
            }
        }
        free(name);
    }
    return bad;
}
