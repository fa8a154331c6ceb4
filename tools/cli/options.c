/* The command line's grammar. Options may come before or after the positional words;
 * "--name=value" and "--name value" both work, and "-fVALUE" for the short options with a value;
 * "--" ends the options; "-" is stdin. Every option may appear once. Which options go with which
 * command, and which pairs exclude each other, is in the tables below (docs/cli.md shows them). */
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
#define CLI_NOP_NAMES (sizeof cli_op_names / sizeof cli_op_names[0])

int cli_op_from_name(const char *name)
{
    for (size_t i = 0; i < CLI_NOP_NAMES; i++)
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

int cli_has_bitwise(const cli_opts *o)
{
    for (int k = 0; k < o->nops; k++)
        if (o->ops[k] == CLI_OP_AND || o->ops[k] == CLI_OP_OR || o->ops[k] == CLI_OP_XOR) return 1;
    return 0;
}

/* ---- the option table ----------------------------------------------------------------------- */
enum opt_id {
    OPT_HELP, OPT_VERSION, OPT_HEADER, OPT_WHITESPACE, OPT_DELIM, OPT_FIELD, OPT_DTYPE,
    OPT_BACKEND, OPT_THREADS, OPT_BLOCK_SIZE, OPT_OMIT_NAN, OPT_SKIP_INVALID, OPT_JSON,
    OPT_PROGRESS, OPT_NO_PROGRESS, OPT_EXCLUSIVE, OPT_INIT, OPT_OUTPUT, OPT_TEXT, OPT_SHOW_BACKEND, OPT_COUNT
};

/* Which commands an option goes with. */
enum { FOR_REDUCE = 1, FOR_SCAN = 2, FOR_INFO = 4 };

static const struct cli_option {
    const char *shrt, *lng, *alias;
    int value;                 /* 1: takes a value */
    int commands;              /* FOR_* */
} cli_options[OPT_COUNT] = {
    [OPT_HELP] = {"-h", "--help", NULL, 0, FOR_REDUCE | FOR_SCAN | FOR_INFO},
    [OPT_VERSION] = {"-V", "--version", NULL, 0, FOR_REDUCE | FOR_SCAN | FOR_INFO},
    [OPT_HEADER] = {"-H", "--header", NULL, 0, FOR_REDUCE | FOR_SCAN},
    [OPT_WHITESPACE] = {"-W", "--whitespace", NULL, 0, FOR_REDUCE | FOR_SCAN},
    [OPT_DELIM] = {"-t", "--delimiter", NULL, 1, FOR_REDUCE | FOR_SCAN},
    [OPT_FIELD] = {"-f", "--field", "--fields", 1, FOR_REDUCE | FOR_SCAN},
    [OPT_DTYPE] = {NULL, "--dtype", NULL, 1, FOR_REDUCE | FOR_SCAN},
    [OPT_BACKEND] = {NULL, "--backend", NULL, 1, FOR_REDUCE | FOR_SCAN | FOR_INFO},
    [OPT_THREADS] = {"-j", "--threads", NULL, 1, FOR_REDUCE | FOR_SCAN | FOR_INFO},
    [OPT_BLOCK_SIZE] = {NULL, "--block-size", NULL, 1, FOR_REDUCE | FOR_SCAN},
    [OPT_OMIT_NAN] = {NULL, "--omit-nan", NULL, 0, FOR_REDUCE},
    [OPT_SKIP_INVALID] = {NULL, "--skip-invalid", NULL, 0, FOR_REDUCE | FOR_SCAN},
    [OPT_JSON] = {NULL, "--json", NULL, 0, FOR_REDUCE},
    [OPT_PROGRESS] = {NULL, "--progress", NULL, 0, FOR_REDUCE | FOR_SCAN},
    [OPT_NO_PROGRESS] = {NULL, "--no-progress", NULL, 0, FOR_REDUCE | FOR_SCAN},
    [OPT_EXCLUSIVE] = {NULL, "--exclusive", NULL, 0, FOR_SCAN},
    [OPT_INIT] = {NULL, "--init", NULL, 1, FOR_SCAN},
    [OPT_OUTPUT] = {"-o", "--output", NULL, 1, FOR_SCAN},
    [OPT_TEXT] = {NULL, "--text", NULL, 0, FOR_SCAN},
    [OPT_SHOW_BACKEND] = {NULL, "--show-backend", NULL, 0, FOR_REDUCE | FOR_SCAN},
};

/* Pairs that exclude each other. */
static const struct { enum opt_id a, b; const char *why; } cli_conflicts[] = {
    {OPT_WHITESPACE, OPT_DELIM, "-W splits at runs of blanks, -t at one character"},
    {OPT_DTYPE, OPT_HEADER, "raw --dtype input has no header"},
    {OPT_DTYPE, OPT_DELIM, "raw --dtype input is not text"},
    {OPT_DTYPE, OPT_WHITESPACE, "raw --dtype input is not text"},
    {OPT_DTYPE, OPT_SKIP_INVALID, "raw --dtype input has no invalid values"},
    {OPT_DTYPE, OPT_BLOCK_SIZE, "raw --dtype input is not read in text blocks"},
    {OPT_PROGRESS, OPT_NO_PROGRESS, "pick one"},
};

static const char *cli_option_label(enum opt_id id, char *buf, size_t len)
{
    const struct cli_option *c = &cli_options[id];
    if (c->shrt) snprintf(buf, len, "%s/%s", c->shrt, c->lng);
    else snprintf(buf, len, "%s", c->lng);
    return buf;
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
        for (size_t i = 0; i < CLI_NOP_NAMES; i++)
            if (strcmp(cli_op_names[i].name, name) == 0) o->op_names[o->nops] = cli_op_names[i].name;
        o->nops++;
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}

/* -t: one character; the words tab, comma and space name one too. */
static int cli_parse_delim(cli_opts *o, const char *v)
{
    if (strcmp(v, "\\t") == 0 || strcmp(v, "tab") == 0) o->delim = '\t';
    else if (strcmp(v, "comma") == 0) o->delim = ',';
    else if (strcmp(v, "space") == 0) o->delim = ' ';
    else if (strlen(v) == 1 && v[0] != '"' && v[0] != '\n' && v[0] != '\r') o->delim = v[0];
    else return cli_usage(o, "bad delimiter '%.32s': one character, 'tab', 'comma' or 'space' "
                             "(-W for runs of blanks)", v);
    return 0;
}

static int cli_parse_backend(cli_opts *o, const char *v)
{
    for (int k = 0; k < TALLY_BACKEND_KIND_COUNT; k++) {
        const char *name = tally_backend_name((tally_backend_kind)k);
        if (name && strcmp(name, v) == 0) {
            o->backend = (tally_backend_kind)k;
            return 0;
        }
    }
    char list[128] = "";
    for (int k = 0; k < TALLY_BACKEND_KIND_COUNT; k++) {
        const char *name = tally_backend_name((tally_backend_kind)k);
        if (!name) continue;
        if (*list) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, name, sizeof list - strlen(list) - 1);
    }
    snprintf(o->err, sizeof o->err, "unknown backend '%.32s' (%s)", v, list);
    return 2;
}

static int cli_find_option(const char *name)
{
    for (int id = 0; id < OPT_COUNT; id++) {
        const struct cli_option *c = &cli_options[id];
        if ((c->shrt && strcmp(name, c->shrt) == 0) || strcmp(name, c->lng) == 0 ||
            (c->alias && strcmp(name, c->alias) == 0))
            return id;
    }
    return -1;
}

static int cli_set_option(cli_opts *o, int id, const char *name, const char *val)
{
    long long v;
    switch ((enum opt_id)id) {
    case OPT_HELP: o->cmd = CLI_HELP; break;
    case OPT_VERSION: o->cmd = CLI_VERSION; break;
    case OPT_HEADER: o->header = 1; o->given |= CLI_GIVEN_HEADER; break;
    case OPT_WHITESPACE: o->whitespace = 1; o->given |= CLI_GIVEN_WHITESPACE; break;
    case OPT_DELIM: o->given |= CLI_GIVEN_DELIM; return cli_parse_delim(o, val);
    case OPT_FIELD:
        if (!*val) return cli_usage(o, "option %s needs a field", name);
        o->fields = val;
        break;
    case OPT_DTYPE: o->dtype = val; break;
    case OPT_BACKEND: return cli_parse_backend(o, val);
    case OPT_THREADS:
        if (cli_parse_int(val, 0, 4096, &v)) return cli_usage(o, "bad thread count '%.32s'", val);
        o->threads = (int)v;
        break;
    case OPT_BLOCK_SIZE:
        if (cli_parse_int(val, 64, (long long)1 << 40, &v))
            return cli_usage(o, "bad block size '%.32s' (64 bytes or more)", val);
        o->block_size = (size_t)v;
        o->given |= CLI_GIVEN_BLOCK_SIZE;
        break;
    case OPT_OMIT_NAN: o->omit_nan = 1; break;
    case OPT_SKIP_INVALID: o->skip_invalid = 1; o->given |= CLI_GIVEN_SKIP_INVALID; break;
    case OPT_JSON: o->json = 1; break;
    case OPT_PROGRESS: o->progress = 1; break;
    case OPT_NO_PROGRESS: o->progress = 0; break;
    case OPT_EXCLUSIVE: o->exclusive = 1; break;
    case OPT_INIT: o->init = val; break;
    case OPT_OUTPUT: o->out = val; break;
    case OPT_TEXT: o->text = 1; break;
    case OPT_SHOW_BACKEND: o->show_backend = 1; break;
    default: break;
    }
    return 0;
}

int cli_parse_args(int argc, char **argv, cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->progress = -1;
    o->backend = TALLY_BACKEND_AUTO;
    char *pos[8];
    int npos = 0, only_positional = 0, help = 0;
    int seen[OPT_COUNT] = {0};
    char label[48], label2[48];
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (only_positional || a[0] != '-' || strcmp(a, "-") == 0) {
            if (npos == 8) return cli_usage(o, "too many arguments near '%.64s'", a);
            pos[npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) { only_positional = 1; continue; }
        /* split --name=value and -fVALUE */
        char name[40];
        const char *val = NULL;
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
        size_t l = eq ? (size_t)(eq - a) : strlen(a);
        if (!eq && a[1] != '-' && a[2] != '\0') l = 2;
        if (l >= sizeof name) return cli_usage(o, "unknown option '%.64s' (see tally --help)", a);
        memcpy(name, a, l);
        name[l] = '\0';
        int id = cli_find_option(name);
        if (id < 0) return cli_usage(o, "unknown option '%.64s' (see tally --help)", a);
        const struct cli_option *c = &cli_options[id];
        if (eq) val = eq + 1;
        else if (l < strlen(a)) {
            if (!c->value) return cli_usage(o, "unknown option '%.64s' (see tally --help)", a);
            val = a + l;
        }
        if (c->value && !val) {
            if (i + 1 >= argc) return cli_usage(o, "option %s needs a value", name);
            val = argv[++i];
        }
        if (!c->value && val) return cli_usage(o, "option %s takes no value", name);
        if (seen[id]++)
            return cli_usage(o, "option %s is given twice", cli_option_label(id, label, sizeof label));
        if (id == OPT_HELP) help = 1;
        if (cli_set_option(o, id, name, val)) return 2;
    }
    if (help) { o->cmd = CLI_HELP; return 0; }
    if (seen[OPT_VERSION]) { o->cmd = CLI_VERSION; return 0; }
    if (npos == 0) return cli_usage(o, "%s", "no operation given (try tally --help)");
    int k = 0, command;
    if (strcmp(pos[0], "info") == 0 || strcmp(pos[0], "demo") == 0 || strcmp(pos[0], "help") == 0 ||
        strcmp(pos[0], "version") == 0) {
        o->cmd = pos[0][0] == 'i' ? CLI_INFO : pos[0][0] == 'd' ? CLI_DEMO
                 : pos[0][0] == 'h' ? CLI_HELP : CLI_VERSION;
        if (npos > 1) return cli_usage(o, "unexpected argument '%.64s'", pos[1]);
        command = FOR_INFO;
    } else if (strcmp(pos[0], "scan") == 0) {
        o->cmd = CLI_SCAN;
        if (npos < 2) return cli_usage(o, "%s", "scan needs an operation: tally scan OP [FILE] -o OUT");
        int op = cli_op_from_name(pos[1]);
        if (op < 0 || !cli_op_scannable((cli_op)op))
            return cli_usage(o, "cannot scan '%.32s' (sum prod min max and or xor)", pos[1]);
        o->scan_op = (cli_op)op;
        k = 2;
        command = FOR_SCAN;
    } else {
        o->cmd = CLI_REDUCE;
        if (cli_parse_ops(o, pos[0])) return 2;
        k = 1;
        command = FOR_REDUCE;
    }
    /* options that do not go with the command */
    for (int id = 0; id < OPT_COUNT; id++) {
        if (!seen[id] || (cli_options[id].commands & command)) continue;
        const char *what = command == FOR_SCAN   ? "tally scan"
                           : command == FOR_INFO ? "this command"
                                                 : "reductions";
        if (cli_options[id].commands == FOR_SCAN)
            snprintf(o->err, sizeof o->err, "%s goes with tally scan",
                     cli_option_label(id, label, sizeof label));
        else
            snprintf(o->err, sizeof o->err, "%s does not apply to %s",
                     cli_option_label(id, label, sizeof label), what);
        return 2;
    }
    for (size_t c = 0; c < sizeof cli_conflicts / sizeof cli_conflicts[0]; c++) {
        if (!seen[cli_conflicts[c].a] || !seen[cli_conflicts[c].b]) continue;
        snprintf(o->err, sizeof o->err, "%s and %s do not go together (%s)",
                 cli_option_label(cli_conflicts[c].a, label, sizeof label),
                 cli_option_label(cli_conflicts[c].b, label2, sizeof label2), cli_conflicts[c].why);
        return 2;
    }
    if (command == FOR_INFO) return 0;
    if (npos > k + 1) return cli_usage(o, "unexpected argument '%.64s'", pos[k + 1]);
    if (npos == k + 1) o->file = strcmp(pos[k], "-") == 0 ? NULL : pos[k];
    if (o->cmd == CLI_SCAN && !o->out && !o->text)
        return cli_usage(o, "%s", "scan needs -o OUT (or --text to print the values)");
    if (o->init && !o->exclusive) return cli_usage(o, "%s", "--init goes with --exclusive");
    return 0;
}
