/* libtally_mpi: reductions, scans and streams over an MPI communicator (include/tally_mpi.h).
 *
 * Reductions: each rank turns its slice into a partial state with its context
 * (tally_internal_accumulate), checks its arguments first, and puts both into one fixed-size
 * record (wire.h); one collective merges the records in rank order (an MPI user op, or our own
 * recursive doubling), so the agreement on errors and the reduction are one step. A failure on
 * any rank reaches every rank as the merged record's status; the failing rank's message then
 * follows with one MPI_Bcast from it, which every rank makes because every rank knows who
 * failed. Float products, which do not merge exactly, are gathered and multiplied in rank
 * order. The variance takes a second pass and a second collective, as tally_reduce does.
 *
 * Scans: each rank finds its slice's total (a reduction pass), the totals are gathered (with
 * each rank's status: the agreement), each rank folds the totals before it into its carry, and
 * scans its slice starting from that carry. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tally_mpi.h"
#include "core/internal.h"
#include "core/types.h"
#include "mpi/wire.h"

#define MSG_BYTES 512

/* ---- the algorithm choice -------------------------------------------------------------------- */
static tally_mpi_algo g_algo = TALLY_MPI_ALGO_AUTO;

tally_mpi_algo tally_mpi_set_algo(tally_mpi_algo algo)
{
    tally_mpi_algo old = g_algo;
    if ((int)algo >= TALLY_MPI_ALGO_AUTO && (int)algo <= TALLY_MPI_ALGO_TREE) g_algo = algo;
    return old;
}

static tally_mpi_algo algo_now(void)
{
    if (g_algo != TALLY_MPI_ALGO_AUTO) return g_algo;
    /* the environment is read once (a lookup costs about as much as a merge step); every
     * thread that races here stores the same value */
    static int env_algo = -1;
    if (env_algo < 0) {
        const char *e = getenv("TALLY_MPI_ALGO");
        env_algo = e && !strcmp(e, "op") ? TALLY_MPI_ALGO_OP : TALLY_MPI_ALGO_TREE;
    }
    return (tally_mpi_algo)env_algo; /* the tree by default: measured, docs/mpi.md */
}

/* ---- the MPI datatype and op over records ------------------------------------------------- */
static MPI_Datatype g_rec_type = MPI_DATATYPE_NULL;
static MPI_Op g_rec_op = MPI_OP_NULL;
static int g_keyval = MPI_KEYVAL_INVALID;

static void rec_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    /* MPI passes the lower ranks' records in `in` for a non-commutative op */
    uint8_t out[WIRE_BYTES];
    for (int i = 0; i < *len; i++) {
        uint8_t *io = (uint8_t *)inout + (size_t)i * WIRE_BYTES;
        size_t used = wire_merge((const uint8_t *)in + (size_t)i * WIRE_BYTES, io, out);
        memcpy(io, out, used);
        memset(io + used, 0, WIRE_BYTES - used);
    }
}

static int free_at_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm; (void)keyval; (void)attr; (void)extra;
    if (g_rec_op != MPI_OP_NULL) MPI_Op_free(&g_rec_op);
    if (g_rec_type != MPI_DATATYPE_NULL) MPI_Type_free(&g_rec_type);
    return MPI_SUCCESS;
}

static int ensure_types(void)
{
    if (g_rec_type != MPI_DATATYPE_NULL) return MPI_SUCCESS;
    int rc = MPI_Type_contiguous(WIRE_BYTES, MPI_BYTE, &g_rec_type);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&g_rec_type);
    if (rc == MPI_SUCCESS) rc = MPI_Op_create(rec_op, 0 /* not commutative */, &g_rec_op);
    /* freed by MPI_Finalize, which deletes MPI_COMM_SELF's attributes first */
    if (rc == MPI_SUCCESS && MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_at_finalize,
                                                    &g_keyval, NULL) == MPI_SUCCESS)
        MPI_Comm_set_attr(MPI_COMM_SELF, g_keyval, NULL);
    return rc;
}

/* ---- our own allreduce: recursive doubling, merging in rank order -------------------------- */
#define TAG_TREE 0x7a11

static int tree_allreduce(uint8_t *rec, MPI_Comm comm)
{
    int rank, size, rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (size == 1) return MPI_SUCCESS;
    /* Records stay encoded: a step sends this rank's record at its used length, receives the
     * partner's and merges the two encodings into a third buffer (wire_merge), which becomes
     * this rank's record; the three buffers rotate, nothing is copied or decoded between
     * steps. */
    uint8_t b1[WIRE_BYTES], b2[WIRE_BYTES];
    uint8_t *mine = rec, *theirs = b1, *spare = b2, *t;
    size_t len = wire_used(rec);
    int pof2 = 1;
    while (pof2 * 2 <= size) pof2 *= 2;
    int rem = size - pof2, newrank;
    /* The first 2*rem ranks fold in pairs, so that pof2 ranks remain, each covering a run of
     * consecutive ranks in order; then recursive doubling, where a rank's partner covers the
     * run just before or just after its own; then the folded ranks get the result. */
    if (rank < 2 * rem) {
        if (rank & 1) {
            rc = MPI_Send(mine, (int)len, MPI_BYTE, rank - 1, TAG_TREE, comm);
            if (rc != MPI_SUCCESS) return rc;
            newrank = -1;
        } else {
            rc = MPI_Recv(theirs, WIRE_BYTES, MPI_BYTE, rank + 1, TAG_TREE, comm, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) return rc;
            len = wire_merge(mine, theirs, spare);
            t = mine, mine = spare, spare = t;
            newrank = rank / 2;
        }
    } else {
        newrank = rank - rem;
    }
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int np = newrank ^ mask;
            int partner = np < rem ? np * 2 : np + rem;
            rc = MPI_Sendrecv(mine, (int)len, MPI_BYTE, partner, TAG_TREE, theirs, WIRE_BYTES,
                              MPI_BYTE, partner, TAG_TREE, comm, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) return rc;
            len = np < newrank ? wire_merge(theirs, mine, spare) : wire_merge(mine, theirs, spare);
            t = mine, mine = spare, spare = t;
        }
        if (mine != rec) memcpy(rec, mine, len);
    }
    if (rank < 2 * rem) {
        if (rank & 1) rc = MPI_Recv(rec, WIRE_BYTES, MPI_BYTE, rank - 1, TAG_TREE, comm, MPI_STATUS_IGNORE);
        else rc = MPI_Send(rec, (int)len, MPI_BYTE, rank + 1, TAG_TREE, comm);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* Merges every rank's record in rank order: onto every rank (root < 0) or onto root only. */
static int combine(uint8_t *rec, MPI_Comm comm, int root)
{
    int rc = ensure_types();
    if (rc != MPI_SUCCESS) return rc;
    if (algo_now() == TALLY_MPI_ALGO_TREE) return tree_allreduce(rec, comm);
    /* fixed-size records for MPI's op: the unused tail zeroed, so no byte sent is undefined */
    size_t used = wire_used(rec);
    memset(rec + used, 0, WIRE_BYTES - used);
    uint8_t out[WIRE_BYTES];
    if (root < 0) rc = MPI_Allreduce(rec, out, 1, g_rec_type, g_rec_op, comm);
    else rc = MPI_Reduce(rec, out, 1, g_rec_type, g_rec_op, root, comm);
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rc == MPI_SUCCESS && (root < 0 || rank == root)) memcpy(rec, out, WIRE_BYTES);
    return rc;
}

/* ---- failures ------------------------------------------------------------------------------- */
static tally_status mpi_fail(tally_context *ctx, const char *fn, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) strcpy(s, "unknown MPI error");
    return tally_internal_set_error(ctx, TALLY_ERR_BACKEND_FAILURE, "%s: MPI failed: %s", fn, s);
}

/* Every rank knows h (the agreed outcome) and learns the failing rank's message; each sets it
 * on its context ("<fn>: rank R of P: <message>") and returns the status. */
static tally_status agreed_failure(tally_context *ctx, const char *fn, MPI_Comm comm,
                                   const wire_head *h)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char msg[MSG_BYTES];
    memset(msg, 0, sizeof msg);
    if (h->flags & WIRE_F_MISMATCH) {
        snprintf(msg, sizeof msg, "its arguments (type, ops, options) differ from the ranks "
                                  "before it");
    } else {
        if ((int)h->fail_rank == rank)
            snprintf(msg, sizeof msg, "%s", ctx ? tally_last_error(ctx) : "ctx is NULL");
        MPI_Bcast(msg, MSG_BYTES, MPI_CHAR, (int)h->fail_rank, comm);
        msg[MSG_BYTES - 1] = 0;
    }
    tally_status st = (tally_status)h->status;
    tally_internal_set_error(ctx, st, "%s: rank %u of %d: %s", fn, h->fail_rank, size, msg);
    return st;
}

static void fill_status(tally_result *results, const tally_op *ops, size_t nops, tally_status st)
{
    if (!results) return;
    for (size_t i = 0; i < nops; i++) {
        memset(&results[i], 0, sizeof results[i]);
        results[i].op = ops ? ops[i] : TALLY_SUM;
        results[i].status = st;
    }
}

static uint64_t reduce_fingerprint(int kind, tally_type type, const tally_op *ops, size_t nops,
                                   const tally_reduce_options *opts)
{
    /* FNV-1a over 32-bit words (every rank runs the same build: only equality matters, and a
     * word-wise step is bijective in the word, so one differing argument always shows) */
    uint64_t h = WIRE_FNV_START;
    h = wire_fnv_word(h, (uint32_t)kind);
    h = wire_fnv_word(h, (uint32_t)type);
    h = wire_fnv_word(h, opts ? (uint32_t)(opts->omit_nan != 0) : 0);
    h = wire_fnv_word(h, opts ? (uint32_t)opts->ddof : 0);
    h = wire_fnv_word(h, (uint32_t)nops);
    for (size_t i = 0; ops && i < nops; i++) h = wire_fnv_word(h, (uint32_t)ops[i]);
    return h;
}

/* ---- reductions ------------------------------------------------------------------------------ */
enum { KIND_REDUCE = 1, KIND_STREAM = 2, KIND_SCAN = 3 };

static int has_op(const tally_op *ops, size_t nops, tally_op op)
{
    for (size_t i = 0; i < nops; i++)
        if (ops[i] == op) return 1;
    return 0;
}

/* The float product of the ranks' local products, left to right in rank order (root < 0: on
 * every rank; else on root). */
static int fold_products(double local, MPI_Comm comm, int root, double *out)
{
    int rank, size, rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    uint8_t mine[8], *all = malloc((size_t)size * 8);
    if (!all) return MPI_ERR_NO_MEM;
    uint64_t u;
    memcpy(&u, &local, 8);
    wire_put64(mine, u);
    if (root < 0) rc = MPI_Allgather(mine, 8, MPI_BYTE, all, 8, MPI_BYTE, comm);
    else rc = MPI_Gather(mine, 8, MPI_BYTE, all, 8, MPI_BYTE, root, comm);
    if (rc == MPI_SUCCESS && (root < 0 || rank == root)) {
        double p = 1.0;
        for (int r = 0; r < size; r++) {
            u = wire_get64(all + 8 * r);
            double v;
            memcpy(&v, &u, 8);
            p = r == 0 ? v : p * v;
        }
        *out = p;
    }
    free(all);
    return rc;
}

/* Root's outcome, shared with every rank by the rooted variant: the status (failing rank,
 * flags), whether the variance pass runs, and the mean it needs. */
typedef struct outcome {
    wire_head h;
    int var_go;
    double mean;
} outcome;

static int share_outcome(outcome *o, MPI_Comm comm, int root)
{
    uint8_t b[24];
    uint64_t u;
    memcpy(&u, &o->mean, 8);
    wire_put32(b, o->h.status);
    wire_put32(b + 4, o->h.fail_rank);
    wire_put32(b + 8, o->h.flags);
    wire_put32(b + 12, (uint32_t)o->var_go);
    wire_put64(b + 16, u);
    int rc = MPI_Bcast(b, 24, MPI_BYTE, root, comm);
    o->h.status = wire_get32(b);
    o->h.fail_rank = wire_get32(b + 4);
    o->h.flags = wire_get32(b + 8);
    o->var_go = (int)wire_get32(b + 12);
    u = wire_get64(b + 16);
    memcpy(&o->mean, &u, 8);
    return rc;
}

/* Merges a record of every rank onto every rank (root < 0) or root, and (rooted) shares root's
 * status. On a failure every rank returns the agreed status; on success here ranks get the
 * merged state in *g. */
static tally_status exchange(tally_context *ctx, const char *fn, MPI_Comm comm, int root,
                             uint8_t *rec, outcome *o, tally_partial *g, int here, int rank)
{
    int rc = combine(rec, comm, root);
    if (rc != MPI_SUCCESS) return mpi_fail(ctx, fn, rc);
    wire_read_head(rec, &o->h);
    if (here && o->h.status == TALLY_OK && wire_state(rec, g) != TALLY_OK) {
        /* cannot happen between ranks of one build; reported rather than trusted */
        o->h.status = TALLY_ERR_BACKEND_FAILURE;
        o->h.fail_rank = (uint32_t)rank;
        o->h.flags = 0;
        tally_internal_set_error(ctx, TALLY_ERR_BACKEND_FAILURE, "%s: a merged state did not "
                                 "decode", fn);
    }
    return TALLY_OK;
}

/* Everything after each rank has its local state (acc: its float product is the rank's own):
 * the merge, the agreement, the variance pass over data (data == NULL: the state holds x^2 sums,
 * as a stream's does), the results. root < 0: every rank gets the results; else root. */
static tally_status finish(tally_context *ctx, const char *fn, MPI_Comm comm, int root,
                           tally_status local_st, const tally_partial *acc, uint64_t fp,
                           const void *data, uint64_t n, const tally_op *ops, size_t nops,
                           const tally_reduce_options *opts, tally_result *results)
{
    int rank, rc;
    MPI_Comm_rank(comm, &rank);
    const int here = root < 0 || rank == root;
    const int ddof = opts ? opts->ddof : 0, omit_nan = opts ? opts->omit_nan : 0;
    const int want_var = data && ops && has_op(ops, nops, TALLY_VAR);
    uint8_t rec[WIRE_BYTES];
    tally_partial g;
    outcome o;
    memset(&o, 0, sizeof o);
    wire_make(rec, local_st, (uint32_t)rank, fp, acc);
    tally_status st = exchange(ctx, fn, comm, root, rec, &o, &g, here, rank);
    if (st != TALLY_OK) return st;
    if (here && o.h.status == TALLY_OK && want_var) {
        tally_status ms;
        o.mean = tally_internal_partial_mean(&g, &ms);
        uint64_t counted = omit_nan ? g.n - g.nans : g.n;
        o.var_go = ms == TALLY_OK && counted > (uint64_t)ddof;
    }
    if (root >= 0 && (rc = share_outcome(&o, comm, root)) != MPI_SUCCESS)
        return mpi_fail(ctx, fn, rc);
    if (o.h.status != TALLY_OK) {
        st = agreed_failure(ctx, fn, comm, &o.h);
        if (here) fill_status(results, ops, nops, st);
        return st;
    }
    /* From here every rank has valid arguments and the same type and ops. */
    double fprod = 0.0;
    const int fl = tally_type_is_float(acc->type);
    if (fl && has_op(ops, nops, TALLY_PROD) &&
        (rc = fold_products(tally_internal_partial_fprod(acc), comm, root, &fprod)) != MPI_SUCCESS)
        return mpi_fail(ctx, fn, rc);
    tally_exact sq;
    const tally_exact *sqp = NULL;
    if (o.var_go) {
        tally_partial s, gs;
        tally_internal_partial_init(&s, acc->type, TALLY_NEED_SQ, omit_nan);
        tally_status ls = tally_internal_sqdev(ctx, acc->type, data, n, o.mean, omit_nan, &s.fsq);
        s.n = n;
        wire_make(rec, ls, (uint32_t)rank, fp, &s);
        st = exchange(ctx, fn, comm, root, rec, &o, &gs, here, rank);
        if (st != TALLY_OK) return st;
        if (root >= 0 && (rc = share_outcome(&o, comm, root)) != MPI_SUCCESS)
            return mpi_fail(ctx, fn, rc);
        if (o.h.status != TALLY_OK) {
            st = agreed_failure(ctx, fn, comm, &o.h);
            if (here) fill_status(results, ops, nops, st);
            return st;
        }
        if (here) {
            sq = gs.fsq;
            sqp = &sq;
        }
    }
    /* The results are the same on every rank that has them; a rooted call's first failing
     * result reaches the other ranks with one more broadcast. */
    tally_status first = TALLY_OK;
    if (here) {
        for (size_t i = 0; i < nops; i++) {
            tally_status rs = tally_internal_partial_result(&g, ops[i], ddof, sqp, &results[i]);
            if (ops[i] == TALLY_PROD && fl) results[i].value.f64 = fprod;
            if (rs != TALLY_OK && first == TALLY_OK) {
                first = rs;
                tally_internal_set_error(ctx, rs, "%s: %s of %llu %s elements: %s", fn,
                                         tally_op_name(ops[i]), (unsigned long long)g.n,
                                         tally_type_name(acc->type), tally_status_string(rs));
            }
        }
    }
    if (root >= 0) {
        int s = (int)first;
        if ((rc = MPI_Bcast(&s, 1, MPI_INT, root, comm)) != MPI_SUCCESS) return mpi_fail(ctx, fn, rc);
        if (!here && s != TALLY_OK)
            tally_internal_set_error(ctx, (tally_status)s, "%s: a result on rank %d failed: %s",
                                     fn, root, tally_status_string((tally_status)s));
        first = (tally_status)s;
    }
    return first;
}

/* rooted: 0 for the allreduce form (root ignored). */
static tally_status reduce_impl(tally_context *ctx, MPI_Comm comm, int rooted, int root,
                                const char *fn, tally_type type, const void *data, uint64_t n,
                                const tally_op *ops, size_t nops, const tally_reduce_options *opts,
                                tally_result *results)
{
    int rank, size;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return tally_internal_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                                        "%s: comm is not a valid communicator", fn);
    tally_status st;
    int eff_root = rooted ? root : -1;
    if (!ctx) st = TALLY_ERR_INVALID_ARGUMENT;
    else if (rooted && (root < 0 || root >= size))
        st = tally_internal_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                                      "%s: root = %d is not a rank of comm (size %d)", fn, root,
                                      size);
    else if (!results && (!rooted || rank == root))
        st = tally_internal_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: results is NULL", fn);
    else st = tally_internal_check_reduce(ctx, fn, type, data, n, ops, nops, opts);
    /* A rank whose root is out of range still joins the collective (at root 0, which every
     * rank uses when they all got the same bad root) and reports its error there. */
    if (rooted && (root < 0 || root >= size)) eff_root = 0;
    tally_partial acc;
    int omit_nan = opts ? opts->omit_nan : 0;
    if (st == TALLY_OK) {
        tally_internal_partial_init(&acc, type, tally_internal_ops_need(type, ops, nops, omit_nan),
                                    omit_nan);
        st = tally_internal_accumulate(ctx, data, n, &acc);
    } else {
        tally_internal_partial_init(&acc, TALLY_U8, 0, 0);
    }
    uint64_t fp = reduce_fingerprint(KIND_REDUCE, type, ops, nops, opts);
    if (st != TALLY_OK && !tally_type_valid((int)type)) type = TALLY_U8;
    return finish(ctx, fn, comm, eff_root, st, &acc, fp, data, n, ops, nops, opts, results);
}

tally_status tally_mpi_reduce_many(tally_context *ctx, MPI_Comm comm, tally_type type,
                                   const void *local_data, uint64_t local_n, const tally_op *ops,
                                   size_t nops, const tally_reduce_options *opts,
                                   tally_result *results)
{
    return reduce_impl(ctx, comm, 0, 0, "tally_mpi_reduce_many", type, local_data, local_n, ops,
                       nops, opts, results);
}

tally_status tally_mpi_reduce_many_root(tally_context *ctx, MPI_Comm comm, int root,
                                        tally_type type, const void *local_data, uint64_t local_n,
                                        const tally_op *ops, size_t nops,
                                        const tally_reduce_options *opts, tally_result *results)
{
    return reduce_impl(ctx, comm, 1, root, "tally_mpi_reduce_many_root", type, local_data,
                       local_n, ops, nops, opts, results);
}

/* ---- streams ---------------------------------------------------------------------------------- */
struct tally_mpi_stream {
    tally_context *ctx;
    MPI_Comm comm;
    tally_type type;
    size_t nops;
    tally_op *ops;
    tally_reduce_options opts;
    tally_partial acc;
    tally_status err;   /* sticky: the first failure, reported collectively by results */
    uint64_t fp;
};

tally_status tally_mpi_stream_create(tally_context *ctx, MPI_Comm comm, tally_type type,
                                     const tally_op *ops, size_t nops,
                                     const tally_reduce_options *opts, tally_mpi_stream **stream)
{
    static const char fn[] = "tally_mpi_stream_create";
    if (!stream) return tally_internal_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: stream is NULL", fn);
    *stream = NULL;
    tally_mpi_stream *s = calloc(1, sizeof *s);
    if (!s) return tally_internal_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    s->ctx = ctx;
    s->comm = comm;
    s->type = type;
    if (opts) s->opts = *opts;
    s->fp = reduce_fingerprint(KIND_STREAM, type, ops, nops, opts);
    s->err = ctx ? tally_internal_check_reduce(ctx, fn, type, NULL, 0, ops, nops, opts)
                 : TALLY_ERR_INVALID_ARGUMENT;
    if (s->err == TALLY_OK) {
        s->ops = malloc(nops * sizeof *s->ops);
        if (!s->ops) {
            free(s);
            return tally_internal_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        }
        memcpy(s->ops, ops, nops * sizeof *s->ops);
        s->nops = nops;
        uint32_t need = tally_internal_ops_need(type, ops, nops, s->opts.omit_nan);
        if (has_op(ops, nops, TALLY_VAR)) need |= TALLY_NEED_SQ;
        tally_internal_partial_init(&s->acc, type, need, s->opts.omit_nan);
    } else {
        tally_internal_partial_init(&s->acc, TALLY_U8, 0, 0);
    }
    /* A stream with bad arguments is still made, so that its results call can tell the other
     * ranks (see tally_mpi.h). */
    *stream = s;
    return s->err;
}

tally_status tally_mpi_stream_update(tally_mpi_stream *s, const void *data, uint64_t n)
{
    static const char fn[] = "tally_mpi_stream_update";
    if (!s) return TALLY_ERR_INVALID_ARGUMENT;
    if (s->err != TALLY_OK) return s->err;
    tally_status st = tally_internal_check_reduce(s->ctx, fn, s->type, data, n, s->ops, s->nops,
                                                  &s->opts);
    if (st == TALLY_OK) st = tally_internal_accumulate(s->ctx, data, n, &s->acc);
    s->err = st;
    return st;
}

tally_status tally_mpi_stream_results(tally_mpi_stream *s, tally_result *results)
{
    static const char fn[] = "tally_mpi_stream_results";
    if (!s) return TALLY_ERR_INVALID_ARGUMENT;
    tally_status st = s->err;
    if (st == TALLY_OK && !results)
        st = tally_internal_set_error(s->ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: results is NULL", fn);
    return finish(s->ctx, fn, s->comm, -1, st, &s->acc, s->fp, NULL, 0, s->ops, s->nops,
                  &s->opts, st == TALLY_OK ? results : NULL);
}

void tally_mpi_stream_destroy(tally_mpi_stream *s)
{
    if (!s) return;
    free(s->ops);
    free(s);
}

/* ---- scans ------------------------------------------------------------------------------------ */
/* One element value: integers sign- or zero-extended to 64 bits, floats as double (f32 values
 * exactly). */
typedef union sval {
    int64_t i;
    uint64_t u;
    double f;
} sval;

/* v reduced modulo 2^bits and extended again like the type. */
static sval wrap(tally_type t, uint64_t v)
{
    sval r;
    unsigned bits = (unsigned)tally_type_size(t) * 8;
    if (bits < 64) {
        v &= (1ull << bits) - 1;
        if (tally_type_is_signed_int(t) && (v >> (bits - 1)) & 1) v |= ~((1ull << bits) - 1);
    }
    r.u = v;
    return r;
}

static double ieee_min(double a, double b)
{
    if (a != a) return a;
    if (b != b) return b;
    if (a < b) return a;
    if (b < a) return b;
    return signbit(a) ? a : b;
}
static double ieee_max(double a, double b)
{
    if (a != a) return a;
    if (b != b) return b;
    if (a > b) return a;
    if (b > a) return b;
    return signbit(a) ? b : a;
}

/* a op b with tally_scan's element semantics (f32 results rounded to f32). */
static sval scombine(tally_op op, tally_type t, sval a, sval b)
{
    sval r;
    if (tally_type_is_float(t)) {
        switch (op) {
        case TALLY_SUM: r.f = a.f + b.f; break;
        case TALLY_PROD: r.f = a.f * b.f; break;
        case TALLY_MIN: r.f = ieee_min(a.f, b.f); break;
        default: r.f = ieee_max(a.f, b.f); break;
        }
        if (t == TALLY_F32) r.f = (double)(float)r.f;
        return r;
    }
    int sgn = tally_type_is_signed_int(t);
    switch (op) {
    case TALLY_SUM: return wrap(t, a.u + b.u);
    case TALLY_PROD: return wrap(t, a.u * b.u);
    case TALLY_MIN: return sgn ? (a.i < b.i ? a : b) : (a.u < b.u ? a : b);
    case TALLY_MAX: return sgn ? (a.i > b.i ? a : b) : (a.u > b.u ? a : b);
    case TALLY_AND: r.u = a.u & b.u; return r;
    case TALLY_OR: r.u = a.u | b.u; return r;
    default: r.u = a.u ^ b.u; return r;
    }
}

static sval sval_load(tally_type t, const void *p)
{
    sval v;
    switch (t) {
#define X(E, name, C, is_int, sgn, W)                                      \
    case TALLY_##E: {                                                      \
        C x;                                                               \
        memcpy(&x, p, sizeof x);                                           \
        if (!is_int) v.f = (double)x;                                      \
        else if (sgn) v.i = (int64_t)x;                                    \
        else v.u = (uint64_t)x;                                            \
        break;                                                             \
    }
        TALLY_TYPES(X)
#undef X
    default: v.u = 0;
    }
    return v;
}

static void sval_store(tally_type t, void *p, sval v)
{
    switch (t) {
#define X(E, name, C, is_int, sgn, W)                                      \
    case TALLY_##E: {                                                      \
        C x = !is_int ? (C)v.f : sgn ? (C)v.i : (C)v.u;                    \
        memcpy(p, &x, sizeof x);                                           \
        break;                                                             \
    }
        TALLY_TYPES(X)
#undef X
    default: break;
    }
}

/* The exclusive scan's start (init converted to the type, or the CPU's identity/start). */
static sval scan_start(tally_op op, tally_type t, const tally_scan_options *o)
{
    sval v;
    int fl = tally_type_is_float(t);
    if (o && o->has_init) {
        if (fl) v.f = t == TALLY_F32 ? (double)(float)o->init.f64 : o->init.f64;
        else v = wrap(t, tally_type_is_signed_int(t) ? (uint64_t)o->init.i64 : o->init.u64);
        return v;
    }
    unsigned bits = (unsigned)tally_type_size(t) * 8;
    int sgn = tally_type_is_signed_int(t);
    uint64_t ones = bits == 64 ? ~0ull : (1ull << bits) - 1;
    switch (op) {
    case TALLY_SUM: if (fl) v.f = 0.0; else v.u = 0; break;  /* an exclusive float sum starts at +0 */
    case TALLY_PROD: if (fl) v.f = 1.0; else v.u = 1; break;
    case TALLY_MIN:
        if (fl) v.f = INFINITY;
        else v = sgn ? wrap(t, ones >> 1) : wrap(t, ones);
        break;
    case TALLY_MAX:
        if (fl) v.f = -INFINITY;
        else v = sgn ? wrap(t, (ones >> 1) + 1) : wrap(t, 0);
        break;
    case TALLY_AND: v = wrap(t, ones); break;
    default: v.u = 0; break;
    }
    return v;
}

/* Calls fn on the n elements at data in host memory: in place on a CPU context, else in pieces
 * copied to host memory (and, with write_back, copied back after fn). */
typedef void (*host_fn)(void *user, void *x, uint64_t n);
static tally_status on_host(tally_context *ctx, tally_type t, void *data, uint64_t n, int write_back,
                            host_fn fn, void *user)
{
    if (n == 0) return TALLY_OK;
    if (tally_active_backend(ctx) == TALLY_BACKEND_CPU) {
        fn(user, data, n);
        return TALLY_OK;
    }
    size_t size = tally_type_size(t);
    uint64_t per = TALLY_INTERNAL_STAGE_BYTES / size;
    if (per > n) per = n;
    void *buf = malloc((size_t)(per * size));
    if (!buf)
        return tally_internal_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY,
                                        "tally_mpi_scan: out of memory for a staging buffer");
    tally_status st = TALLY_OK;
    for (uint64_t i = 0; i < n && st == TALLY_OK; i += per) {
        uint64_t m = n - i < per ? n - i : per;
        char *p = (char *)data + i * size;
        st = tally_internal_copy(ctx, buf, p, m * size);
        if (st != TALLY_OK) break;
        fn(user, buf, m);
        if (write_back) st = tally_internal_copy(ctx, p, buf, m * size);
    }
    free(buf);
    return st;
}

typedef struct prod_job {
    tally_type t;
    sval acc;
} prod_job;

static void wrapped_prod(void *user, void *x, uint64_t n)
{
    prod_job *j = user;
    size_t size = tally_type_size(j->t);
    for (uint64_t i = 0; i < n; i++)
        j->acc = scombine(TALLY_PROD, j->t, j->acc, sval_load(j->t, (char *)x + i * size));
}

typedef struct fix_job {
    tally_op op;
    tally_type t;
    sval carry;
} fix_job;

static void fix_up(void *user, void *x, uint64_t n)
{
    fix_job *j = user;
    size_t size = tally_type_size(j->t);
    for (uint64_t i = 0; i < n; i++) {
        char *p = (char *)x + i * size;
        sval_store(j->t, p, scombine(j->op, j->t, j->carry, sval_load(j->t, p)));
    }
}

/* What a rank tells the others: status, its count, its slice's total (the exact sum of a float
 * sum scan, else one value); fixed size. */
#define SREC_HEAD 48
#define SREC_BYTES (SREC_HEAD + 32 + 280)

static tally_status slice_total(tally_context *ctx, tally_op op, tally_type t, const void *in,
                                uint64_t n, sval *v, tally_partial *sum)
{
    if (op == TALLY_PROD && !tally_type_is_float(t)) {
        prod_job j = {t, {.u = 1}};
        tally_status st = on_host(ctx, t, (void *)in, n, 0, wrapped_prod, &j);
        if (st == TALLY_OK) *v = j.acc;
        return st;
    }
    tally_partial p;
    tally_internal_partial_init(&p, t, tally_internal_ops_need(t, &op, 1, 0), 0);
    tally_status st = tally_internal_accumulate(ctx, in, n, &p);
    if (st != TALLY_OK) return st;
    if (op == TALLY_SUM) {
        if (tally_type_is_float(t)) *sum = p;
        else *v = wrap(t, tally_type_is_signed_int(t) ? (uint64_t)p.isum : (uint64_t)p.usum);
        return TALLY_OK;
    }
    tally_result r;
    tally_internal_partial_result(&p, op, 0, NULL, &r); /* n > 0: min/max are OK */
    if (tally_type_is_float(t)) v->f = r.value.f64;
    else v->u = r.value.u64;
    return TALLY_OK;
}

/* Agreement after each rank's local work: the lowest failing rank's status and message. */
static tally_status agree_after(tally_context *ctx, const char *fn, MPI_Comm comm, tally_status st)
{
    int rank, size, rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int mine[2] = {st != TALLY_OK ? rank : size, (int)st}, low[2];
    /* MPI_MINLOC over (rank, status) pairs: the lowest failing rank and its status */
    rc = MPI_Allreduce(mine, low, 1, MPI_2INT, MPI_MINLOC, comm);
    if (rc != MPI_SUCCESS) return mpi_fail(ctx, fn, rc);
    if (low[0] == size) return TALLY_OK;
    wire_head h = {(uint32_t)low[1], (uint32_t)low[0], 0, 0, 0, 0};
    return agreed_failure(ctx, fn, comm, &h);
}

tally_status tally_mpi_scan(tally_context *ctx, MPI_Comm comm, tally_op op, tally_type type,
                            const void *in, void *out, uint64_t n, const tally_scan_options *opts)
{
    static const char fn[] = "tally_mpi_scan";
    int rank, size, rc;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return tally_internal_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                                        "%s: comm is not a valid communicator", fn);
    tally_scan_options o;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    tally_status st = ctx ? tally_internal_check_scan(ctx, fn, op, type, in, out, n, opts)
                          : TALLY_ERR_INVALID_ARGUMENT;
    const int fsum = st == TALLY_OK && op == TALLY_SUM && tally_type_is_float(type);
    sval total = {.u = 0};
    tally_partial sum;
    memset(&sum, 0, sizeof sum);
    if (fsum) tally_internal_partial_init(&sum, type, TALLY_NEED_SUM, 0);
    /* the last rank's total is nobody's carry */
    if (st == TALLY_OK && rank < size - 1) st = slice_total(ctx, op, type, in, n, &total, &sum);

    /* every rank's record to every rank: the agreement and the totals in one collective */
    uint8_t mine[SREC_BYTES];
    memset(mine, 0, sizeof mine);
    uint8_t fpb[32];
    uint64_t fp = WIRE_FNV_START;
    wire_put32(fpb, KIND_SCAN);
    wire_put32(fpb + 4, (uint32_t)op);
    wire_put32(fpb + 8, (uint32_t)type);
    wire_put32(fpb + 12, (uint32_t)(o.exclusive != 0));
    wire_put32(fpb + 16, (uint32_t)(o.has_init != 0));
    wire_put64(fpb + 20, o.has_init ? o.init.u64 : 0);
    fp = wire_fnv(fp, fpb, 28);
    wire_put32(mine, (uint32_t)st);
    wire_put64(mine + 8, fp);
    wire_put64(mine + 16, n);
    wire_put64(mine + 24, total.u);
    if (fsum && st == TALLY_OK)
        wire_put32(mine + 36, (uint32_t)tally_partial_encode(&sum, mine + SREC_HEAD,
                                                             SREC_BYTES - SREC_HEAD));
    uint8_t *all = malloc((size_t)size * SREC_BYTES);
    if (!all) {
        /* cannot join the gather without its buffer: fail this rank alone, loudly */
        return tally_internal_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    rc = MPI_Allgather(mine, SREC_BYTES, MPI_BYTE, all, SREC_BYTES, MPI_BYTE, comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        return mpi_fail(ctx, fn, rc);
    }
    wire_head h = {0, WIRE_NO_RANK, 0, 0, 0, 0};
    for (int r = 0; r < size && !h.status; r++) {
        const uint8_t *rec = all + (size_t)r * SREC_BYTES;
        if (wire_get32(rec)) {
            h.status = wire_get32(rec);
            h.fail_rank = (uint32_t)r;
        } else if (wire_get64(rec + 8) != wire_get64(all + 8) && !wire_get32(all)) {
            h.status = TALLY_ERR_INVALID_ARGUMENT;
            h.fail_rank = (uint32_t)r;
            h.flags = WIRE_F_MISMATCH;
        }
    }
    if (h.status) {
        free(all);
        return agreed_failure(ctx, fn, comm, &h);
    }
    /* The carry: everything before this rank, folded in rank order. */
    int carry = 0;
    sval c = scan_start(op, type, &o);
    if (o.exclusive) carry = rank > 0;
    tally_exact e;
    tally_exact_init(&e);
    if (fsum && o.exclusive) tally_exact_add(&e, c.f);
    for (int r = 0; r < rank && st == TALLY_OK; r++) {
        const uint8_t *rec = all + (size_t)r * SREC_BYTES;
        if (wire_get64(rec + 16) == 0) continue; /* an empty slice changes nothing */
        if (fsum) {
            tally_partial p;
            if (tally_partial_decode(rec + SREC_HEAD, wire_get32(rec + 36), &p, NULL, NULL, 0) != TALLY_OK)
                st = tally_internal_set_error(ctx, TALLY_ERR_BACKEND_FAILURE,
                                              "%s: rank %d's total did not decode", fn, r);
            else tally_exact_merge(&e, &p.fsum);
        } else {
            sval v = {.u = wire_get64(rec + 24)};
            /* float products fold in f64 (rounded to f32 once, at the end) */
            if (op == TALLY_PROD && tally_type_is_float(type)) c.f = carry ? c.f * v.f : v.f;
            else c = carry ? scombine(op, type, c, v) : v;
        }
        carry = 1;
    }
    free(all);
    if (fsum && carry) c.f = tally_exact_round(&e);
    if (type == TALLY_F32) c.f = (double)(float)c.f;
    if (st == TALLY_OK && n > 0) {
        tally_scan_options so = o;
        if (rank > 0) {
            so.has_init = carry;
            if (tally_type_is_float(type)) so.init.f64 = c.f;
            else if (tally_type_is_signed_int(type)) so.init.i64 = c.i;
            else so.init.u64 = c.u;
        }
        st = tally_internal_scan(ctx, op, type, in, out, n, &so);
        if (st == TALLY_ERR_UNSUPPORTED) {
            /* a backend without a carry into inclusive scans: scan, then apply the carry */
            so.has_init = 0;
            st = tally_internal_scan(ctx, op, type, in, out, n, &so);
            fix_job j = {op, type, c};
            if (st == TALLY_OK) st = on_host(ctx, type, out, n, 1, fix_up, &j);
        }
    }
    return agree_after(ctx, fn, comm, st);
}
