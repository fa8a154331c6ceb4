/* From the user's ops to library calls (the plan), and from library results to printable
 * values (the table). */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_make_plan(const cli_opts *o, int with_prod, cli_plan *p)
{
    memset(p, 0, sizeof *p);
    for (int k = 0; k < o->nops; k++) {
        cli_op op = o->ops[k];
        p->group[k] = p->index[k] = -1;
        if (op == CLI_OP_PROD && !with_prod) continue;
        int g = op == CLI_OP_SVAR || op == CLI_OP_SSTD;
        tally_op lop = cli_op_library(op);
        int idx = -1;
        for (int j = 0; j < p->n[g]; j++)
            if (p->ops[g][j] == lop) idx = j;
        if (idx < 0) {
            idx = p->n[g]++;
            p->ops[g][idx] = lop;
        }
        p->group[k] = g;
        p->index[k] = idx;
    }
}

void cli_fill_values(const cli_opts *o, const cli_plan *p, tally_result res[2][CLI_PLAN_MAX],
                     tally_type input, cli_value *out)
{
    for (int k = 0; k < o->nops; k++) {
        cli_value *v = &out[k];
        if (p->group[k] < 0) continue;             /* filled by the caller */
        const tally_result *r = &res[p->group[k]][p->index[k]];
        memset(v, 0, sizeof *v);
        v->status = r->status;
        if (r->status != TALLY_OK) continue;
        cli_op op = o->ops[k];
        if (op == CLI_OP_ARGMIN || op == CLI_OP_ARGMAX) {
            v->kind = V_U64;
            v->u = r->index;
            continue;
        }
        switch (r->type) {
        case TALLY_I64: v->kind = V_I64; v->i = r->value.i64; break;
        case TALLY_U64: v->kind = V_U64; v->u = r->value.u64; break;
        default: v->kind = V_F64; v->d = r->value.f64; break;
        }
        if (op == CLI_OP_STD || op == CLI_OP_SSTD) v->d = sqrt(v->d);
        if ((op == CLI_OP_MIN || op == CLI_OP_MAX) && input == TALLY_F32) v->kind = V_F32;
    }
}

int cli_table_init(cli_table *t, int nfields, int nops)
{
    t->nfields = nfields;
    t->nops = nops;
    t->names = calloc(nfields > 0 ? (size_t)nfields : 1, sizeof *t->names);
    t->v = calloc(nfields > 0 ? (size_t)nfields * (size_t)nops : 1, sizeof *t->v);
    if (!t->names || !t->v) {
        cli_table_free(t);
        return -1;
    }
    return 0;
}

void cli_table_free(cli_table *t)
{
    for (int f = 0; t->names && f < t->nfields; f++) free(t->names[f]);
    free(t->names);
    free(t->v);
    t->names = NULL;
    t->v = NULL;
}

int cli_table_name(cli_table *t, int f, const char *name, int number)
{
    char num[16];
    if (!name) {
        snprintf(num, sizeof num, "%d", number);
        name = num;
    }
    free(t->names[f]);
    t->names[f] = strdup(name);
    return t->names[f] ? 0 : -1;
}
