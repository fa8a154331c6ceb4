/* Option parsing for the tally command: options may come before or after the positional
 * words; "--name=value" and "--name value" both work; "--" ends the options; "-" is stdin. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *name; cli_op op; } cli_op_names[] = {
    {"count", CLI_OP_COUNT}, {"sum", CLI_OP_SUM},       {"prod", CLI_OP_PROD},
    {"min", CLI_OP_MIN},     {"max", CLI_OP_MAX},       {"mean", CLI_OP_MEAN},
    {"var", CLI_OP_VAR},     {"std", CLI_OP_STD},       {"svar", CLI_OP_SVAR},
    {"sstd", CLI_OP_SSTD},   {"and", CLI_OP_AND},       {"or", CLI_OP_OR},
    {"xor", CLI_OP_XOR},     {"argmin", CLI_OP_ARGMIN}, {"argmax", CLI_OP_ARGMAX},
    {"pvar", CLI_OP_VAR},    {"pstdev", CLI_OP_STD},    {"sstdev", CLI_OP_SSTD},
};

int cli_op_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof cli_op_names / sizeof cli_op_names[0]; i++)
        if (strcmp(name, cli_op_names[i].name) == 0) return (int)cli_op_names[i].op;
    return -1;
}

int cli_op_scannable(cli_op op)
{
    return op == CLI_OP_SUM || op == CLI_OP_PROD || op == CLI_OP_MIN || op == CLI_OP_MAX ||
           op == CLI_OP_AND || op == CLI_OP_OR || op == CLI_OP_XOR;
}

tally_op cli_op_library(cli_op op)
{
    switch (op) {
    case CLI_OP_COUNT: return TALLY_COUNT;
    case CLI_OP_SUM: return TALLY_SUM;
    case CLI_OP_PROD: return TALLY_PROD;
    case CLI_OP_MIN: return TALLY_MIN;
    case CLI_OP_MAX: return TALLY_MAX;
    case CLI_OP_MEAN: return TALLY_MEAN;
    case CLI_OP_AND: return TALLY_AND;
    case CLI_OP_OR: return TALLY_OR;
    case CLI_OP_XOR: return TALLY_XOR;
    case CLI_OP_ARGMIN: return TALLY_ARGMIN;
    case CLI_OP_ARGMAX: return TALLY_ARGMAX;
    default: return TALLY_VAR;
    }
}

static int cli_usage(cli_opts *o, const char *fmt, const char *arg)
{
    snprintf(o->err, sizeof o->err, fmt, arg);
    return 2;
}

static int cli_parse_int(const char *s, long long lo, long long hi, long long *v)
{
    char *end;
    if (!*s) return -1;
    long long x = strtoll(s, &end, 10);
    if (*end || x < lo || x > hi) return -1;
    *v = x;
    return 0;
}

/* The OPS word: "sum,min,max". */
static int cli_parse_ops(cli_opts *o, char *word)
{
    o->nops = 0;
    char *p = word;
    for (;;) {
        char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[32];
        if (len == 0 || len >= sizeof name) {
            snprintf(o->err, sizeof o->err, "unknown operation '%.*s' in '%.64s'",
                     (int)(len < 64 ? len : 64), p, word);
            return 2;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        int op = cli_op_from_name(name);
        if (op < 0) {
            snprintf(o->err, sizeof o->err,
                     "unknown operation '%s' (count sum prod min max mean var std svar sstd "
                     "and or xor argmin argmax pvar pstdev sstdev)", name);
            return 2;
        }
        if (o->nops == CLI_MAX_OPS) return cli_usage(o, "too many operations in '%.64s'", word);
        o->ops[o->nops] = (cli_op)op;
        for (size_t i = 0; i < sizeof cli_op_names / sizeof cli_op_names[0]; i++)
            if (strcmp(cli_op_names[i].name, name) == 0) o->op_names[o->nops] = cli_op_names[i].name;
        o->nops++;
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}

static int cli_parse_delim(cli_opts *o, const char *v)
{
    if (strcmp(v, "\\t") == 0 || strcmp(v, "tab") == 0 || strcmp(v, "\t") == 0) o->delim = '\t';
    else if (strcmp(v, "comma") == 0) o->delim = ',';
    else if (strcmp(v, "space") == 0 || strcmp(v, "whitespace") == 0) o->whitespace = 1;
    else if (strlen(v) == 1 && v[0] != '"' && v[0] != '\n' && v[0] != '\r') o->delim = v[0];
    else return cli_usage(o, "bad delimiter '%.32s': one character, 'tab' or 'space'", v);
    return 0;
}

int cli_parse_args(int argc, char **argv, cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->progress = -1;
    o->backend = TALLY_BACKEND_AUTO;
    char *pos[8];
    int npos = 0, only_positional = 0;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (only_positional || a[0] != '-' || strcmp(a, "-") == 0) {
            if (npos == 8) return cli_usage(o, "too many arguments near '%.64s'", a);
            pos[npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) { only_positional = 1; continue; }
        /* split --name=value */
        char name[40];
        const char *val = NULL;
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
        if (eq) {
            size_t l = (size_t)(eq - a);
            if (l >= sizeof name) return cli_usage(o, "unknown option '%.64s'", a);
            memcpy(name, a, l);
            name[l] = '\0';
            val = eq + 1;
        } else {
            if (strlen(a) >= sizeof name) return cli_usage(o, "unknown option '%.64s'", a);
            strcpy(name, a);
            /* -fVALUE, -t, */
            if (a[1] != '-' && a[2] != '\0' && strchr("ftjo", a[1])) {
                name[2] = '\0';
                val = a + 2;
            }
        }
#define FLAG(s, l) (strcmp(name, s) == 0 || strcmp(name, l) == 0)
#define NEED_VALUE()                                                                 \
    do {                                                                             \
        if (!val) {                                                                  \
            if (i + 1 >= argc) return cli_usage(o, "option %s needs a value", name); \
            val = argv[++i];                                                         \
        }                                                                            \
    } while (0)
#define NO_VALUE() \
    do { if (val) return cli_usage(o, "option %s takes no value", name); } while (0)
        if (FLAG("-h", "--help")) { NO_VALUE(); o->cmd = CLI_HELP; return 0; }
        else if (FLAG("-V", "--version")) { NO_VALUE(); o->cmd = CLI_VERSION; return 0; }
        else if (FLAG("-H", "--header")) { NO_VALUE(); o->header = 1; }
        else if (FLAG("-W", "--whitespace")) { NO_VALUE(); o->whitespace = 1; }
        else if (FLAG("-t", "--delimiter")) {
            NEED_VALUE();
            if (cli_parse_delim(o, val)) return 2;
        } else if (FLAG("-f", "--field") || strcmp(name, "--fields") == 0) {
            NEED_VALUE();
            if (!*val) return cli_usage(o, "option %s needs a field", name);
            o->fields = val;
        } else if (strcmp(name, "--dtype") == 0) {
            NEED_VALUE();
            o->dtype = val;
        } else if (strcmp(name, "--backend") == 0) {
            NEED_VALUE();
            if (strcmp(val, "auto") == 0) o->backend = TALLY_BACKEND_AUTO;
            else if (strcmp(val, "cpu") == 0) o->backend = TALLY_BACKEND_CPU;
            else if (strcmp(val, "cuda") == 0) o->backend = TALLY_BACKEND_CUDA;
            else if (strcmp(val, "vulkan") == 0) o->backend = TALLY_BACKEND_VULKAN;
            else return cli_usage(o, "unknown backend '%.32s' (auto, cpu, cuda, vulkan)", val);
        } else if (FLAG("-j", "--threads")) {
            long long v;
            NEED_VALUE();
            if (cli_parse_int(val, 0, 4096, &v)) return cli_usage(o, "bad thread count '%.32s'", val);
            o->threads = (int)v;
        } else if (strcmp(name, "--block-size") == 0) {
            long long v;
            NEED_VALUE();
            if (cli_parse_int(val, 64, (long long)1 << 40, &v))
                return cli_usage(o, "bad block size '%.32s'", val);
            o->block_size = (size_t)v;
        } else if (strcmp(name, "--omit-nan") == 0) { NO_VALUE(); o->omit_nan = 1; }
        else if (strcmp(name, "--skip-invalid") == 0) { NO_VALUE(); o->skip_invalid = 1; }
        else if (strcmp(name, "--json") == 0) { NO_VALUE(); o->json = 1; }
        else if (strcmp(name, "--progress") == 0) { NO_VALUE(); o->progress = 1; }
        else if (strcmp(name, "--no-progress") == 0) { NO_VALUE(); o->progress = 0; }
        else if (strcmp(name, "--exclusive") == 0) { NO_VALUE(); o->exclusive = 1; }
        else if (strcmp(name, "--text") == 0) { NO_VALUE(); o->text = 1; }
        else if (strcmp(name, "--init") == 0) { NEED_VALUE(); o->init = val; }
        else if (FLAG("-o", "--output")) { NEED_VALUE(); o->out = val; }
        else return cli_usage(o, "unknown option '%.64s' (see tally --help)", a);
#undef FLAG
#undef NEED_VALUE
#undef NO_VALUE
    }
    if (npos == 0) return cli_usage(o, "%s", "no operation given (try tally --help)");
    int k = 0;
    if (strcmp(pos[0], "info") == 0 || strcmp(pos[0], "demo") == 0 || strcmp(pos[0], "help") == 0 ||
        strcmp(pos[0], "version") == 0) {
        o->cmd = pos[0][0] == 'i' ? CLI_INFO : pos[0][0] == 'd' ? CLI_DEMO
                 : pos[0][0] == 'h' ? CLI_HELP : CLI_VERSION;
        if (npos > 1) return cli_usage(o, "unexpected argument '%.64s'", pos[1]);
        return 0;
    }
    if (strcmp(pos[0], "scan") == 0) {
        o->cmd = CLI_SCAN;
        if (npos < 2) return cli_usage(o, "%s", "scan needs an operation: tally scan OP [FILE] -o OUT");
        int op = cli_op_from_name(pos[1]);
        if (op < 0 || !cli_op_scannable((cli_op)op))
            return cli_usage(o, "cannot scan '%.32s' (sum prod min max and or xor)", pos[1]);
        o->scan_op = (cli_op)op;
        k = 2;
        if (!o->out && !o->text)
            return cli_usage(o, "%s", "scan needs -o OUT (or --text to print the values)");
    } else {
        o->cmd = CLI_REDUCE;
        if (cli_parse_ops(o, pos[0])) return 2;
        k = 1;
        if (o->exclusive || o->init || o->out || o->text)
            return cli_usage(o, "%s", "--exclusive, --init, -o and --text go with tally scan");
    }
    if (npos > k + 1) return cli_usage(o, "unexpected argument '%.64s'", pos[k + 1]);
    if (npos == k + 1) o->file = strcmp(pos[k], "-") == 0 ? NULL : pos[k];
    if (o->init && !o->exclusive) return cli_usage(o, "%s", "--init goes with --exclusive");
    if (o->dtype && (o->header || o->fields)) {
        /* -f picks columns of .npy 2-d arrays too, but raw input is one column */
        if (o->header) return cli_usage(o, "%s", "--header does not apply to raw --dtype input");
    }
    return 0;
}
