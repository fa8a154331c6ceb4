/* -f: which fields (text) or columns (arrays) to reduce: numbers from 1, ranges 2-4, header
 * names; comma-separated; each at most once. */
#include "cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int cli_push(int **sel, int *n, int *cap, int v)
{
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        int *ns = realloc(*sel, (size_t)nc * sizeof *ns);
        if (!ns) return -1;
        *sel = ns;
        *cap = nc;
    }
    (*sel)[(*n)++] = v;
    return 0;
}

static int cli_int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* A field number: 1 .. INT_MAX. */
static int cli_field_number(const char *s, const char *end, long *v)
{
    if (s == end || *s < '0' || *s > '9') return -1;
    long x = 0;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9') return -1;
        x = x * 10 + (*s - '0');
        if (x > INT_MAX) return -1;
    }
    *v = x;
    return 0;
}

int cli_select_fields(const cli_opts *o, int nfields, const char *const *names, int is_array,
                      int maxsel, int **out)
{
    int *sel = NULL, n = 0, cap = 0;
    const char *noun = is_array ? "column" : "field";
    *out = NULL;
    if (!o->fields) {
        int k = nfields > 0 ? nfields : 1;
        if (k > maxsel) {
            if (maxsel == 1)
                cli_usage_error("scan takes one %s, and the input has %d: pick one with -f", noun,
                                nfields);
            else
                cli_usage_error("the input has %d %ss: at most %d at once, picked with -f", nfields,
                                noun, maxsel);
            return -2;
        }
        for (int i = 0; i < k; i++)
            if (cli_push(&sel, &n, &cap, i)) goto nomem;
        *out = sel;
        return n;
    }
    const char *p = o->fields;
    for (;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        size_t len = (size_t)(end - p);
        if (len == 0) {
            cli_usage_error("bad field list '%s': an empty item", o->fields);
            goto fail;
        }
        const char *dash = memchr(p, '-', len);
        long a, b;
        int numeric = dash ? cli_field_number(p, dash, &a) == 0 && cli_field_number(dash + 1, end, &b) == 0
                           : cli_field_number(p, end, &a) == 0;
        if (!dash) b = a;
        if (numeric) {
            if (a < 1 || b < a) {
                cli_usage_error("bad %s number '%.*s' (%ss count from 1)", noun, (int)len, p, noun);
                goto fail;
            }
            if (nfields > 0 && b > nfields) {
                cli_usage_error("%s %ld: the input has only %d %s%s", noun, b, nfields, noun,
                                nfields == 1 ? "" : "s");
                goto fail;
            }
            if (b - a >= (long)maxsel || n + (b - a) >= maxsel) {
                cli_usage_error("too many %ss in '%s' (at most %d)", noun, o->fields, maxsel);
                goto fail;
            }
            for (long f = a; f <= b; f++)
                if (cli_push(&sel, &n, &cap, (int)(f - 1))) goto nomem;
        } else if (is_array) {
            cli_usage_error("-f '%.*s': the columns of an array are numbers (1, 2-4), not names",
                            (int)len, p);
            goto fail;
        } else {
            int found = -1;
            for (int i = 0; names && i < nfields; i++)
                if (names[i] && strlen(names[i]) == len && memcmp(names[i], p, len) == 0) {
                    found = i;
                    break;
                }
            if (found < 0) {
                if (!names && o->header && nfields == 0) {
                    cli_error("field '%.*s': the input is empty (no header line)", (int)len, p);
                    free(sel);
                    return -1;
                }
                if (!names) cli_usage_error("field '%.*s' is a name: names need -H/--header", (int)len, p);
                else cli_usage_error("no field named '%.*s'", (int)len, p);
                goto fail;
            }
            if (n >= maxsel) {
                cli_usage_error("too many %ss in '%s' (at most %d)", noun, o->fields, maxsel);
                goto fail;
            }
            if (cli_push(&sel, &n, &cap, found)) goto nomem;
        }
        if (!comma) break;
        p = comma + 1;
    }
    /* each at most once: sort a copy */
    int *sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) goto nomem;
    memcpy(sorted, sel, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cli_int_cmp);
    for (int i = 1; i < n; i++)
        if (sorted[i] == sorted[i - 1]) {
            cli_usage_error("%s %d is given twice in '%s'", noun, sorted[i] + 1, o->fields);
            free(sorted);
            goto fail;
        }
    free(sorted);
    *out = sel;
    return n;
nomem:
    cli_error("out of memory");
    free(sel);
    return -1;
fail:
    free(sel);
    return -2;
}
