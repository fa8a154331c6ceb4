/* Scans on the CPU. The data is cut into fixed blocks of TALLY_SCAN_BLOCK elements; block b's
 * outputs are carry_b op local(...), where local folds from the block start and carry_{b+1} =
 * carry_b op total_b. The boundaries do not depend on the thread count, so neither do float
 * results. Threads work in rounds: each takes its next share of blocks (state.h), computes
 * their totals (reading them into L2), meets the others at a barrier, folds the totals before
 * its blocks into its carry, and scans its blocks from L2. So memory is read about once and
 * written once, as by a copy. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/types.h"
#include "cpu/state.h"

/* The identity of op for type (float sum: -0.0, so that -0 op x keeps x's sign). */
static tally_carry identity(tally_op op, tally_type t)
{
    tally_carry c;
    memset(&c, 0, sizeof c);
    size_t bits = tally_type_size(t) * 8;
    int sgn = tally_type_is_signed_int(t);
    uint64_t ones = bits == 64 ? ~0ull : (1ull << bits) - 1;
    switch (op) {
    case TALLY_SUM:
        if (t == TALLY_F32) c.f32 = -0.0f;
        else if (t == TALLY_F64) c.f64 = -0.0;
        break;
    case TALLY_PROD:
        if (t == TALLY_F32) c.f32 = 1.0f;
        else if (t == TALLY_F64) c.f64 = 1.0;
        else c.u64 = 1; /* little-endian: the low bytes hold 1 for every width */
        break;
    case TALLY_MIN: /* the largest value */
        if (t == TALLY_F32) c.f32 = INFINITY;
        else if (t == TALLY_F64) c.f64 = INFINITY;
        else c.u64 = sgn ? ones >> 1 : ones;
        break;
    case TALLY_MAX: /* the smallest value */
        if (t == TALLY_F32) c.f32 = -INFINITY;
        else if (t == TALLY_F64) c.f64 = -INFINITY;
        else c.u64 = sgn ? (ones >> 1) + 1 : 0;
        break;
    case TALLY_AND: c.u64 = ones; break;
    default: break; /* or, xor: 0 */
    }
    return c;
}

static tally_carry from_init(tally_type t, const tally_scan_options *o)
{
    tally_carry c;
    memset(&c, 0, sizeof c);
    switch (t) {
#define X(E, name, C, is_int, sgn, W) \
    case TALLY_##E: c.name = (C)(is_int ? (sgn ? (C)o->init.i64 : (C)o->init.u64) : (C)o->init.f64); break;
        TALLY_TYPES(X)
#undef X
    }
    return c;
}

/* Float sum and product scans are a chain of dependent adds (multiplies) inside each block, by
 * definition. A thread that knows the carries of several blocks runs MULTI chains side by side,
 * which gives the same bits with MULTI times the instruction-level parallelism. Blocks lie
 * 16 KiB apart, so lane j runs SKEW*j elements behind lane 0: otherwise every access of every
 * lane would share its low 12 address bits (4K aliasing between the loads and the stores). */
#define MULTI 8
#define SKEW 64
/* lanes are blocks 16 KiB apart: strided vector code would be slower than scalar */
#if defined(__clang__)
#define TK_NOVEC /* clang has no per-function optimize attribute */
#else
#define TK_NOVEC __attribute__((optimize("no-tree-vectorize")))
#endif
#define B_ TALLY_SCAN_BLOCK
/* Visits (lane j, element i) in the skewed order: BODY0 where i may be 0 (the ramps), BODY where
 * i >= 1 (the steady state). Lanes are unrolled with constant j so the chains stay in
 * registers. */
#define MULTI_FOR(BODY0, BODY)                                                                 \
    do {                                                                                       \
        const int64_t ramp = SKEW * (MULTI - 1);                                               \
        for (int64_t t = 0; t <= ramp; t++)                                                    \
            for (int j = 0; j < MULTI; j++) {                                                  \
                int64_t i = t - SKEW * j;                                                      \
                if (i >= 0) { BODY0; }                                                         \
            }                                                                                  \
        for (int64_t t = ramp + 1; t < (int64_t)B_; t++) {                                     \
            _Pragma("GCC unroll 8")                                                            \
            for (int j = 0; j < MULTI; j++) {                                                  \
                int64_t i = t - SKEW * j;                                                      \
                BODY;                                                                          \
            }                                                                                  \
        }                                                                                      \
        for (int64_t t = B_; t < (int64_t)B_ + ramp; t++)                                      \
            for (int j = 0; j < MULTI; j++) {                                                  \
                int64_t i = t - SKEW * j;                                                      \
                if (i < (int64_t)B_) { BODY; }                                                 \
            }                                                                                  \
    } while (0)
#define FLOAT_MULTI(name, C)                                                                   \
    static TK_NOVEC void multi_total_##name(int sum, const C *x, tally_carry *tot)             \
    {                                                                                          \
        C l[MULTI] = {0};                                                                      \
        if (sum)                                                                               \
            MULTI_FOR(C v = x[j * B_ + i]; l[j] = i ? l[j] + v : v,                            \
                      l[j] = l[j] + x[j * B_ + i]);                                            \
        else                                                                                   \
            MULTI_FOR(C v = x[j * B_ + i]; l[j] = i ? l[j] * v : v,                            \
                      l[j] = l[j] * x[j * B_ + i]);                                            \
        for (int j = 0; j < MULTI; j++) tot[j].name = sum ? (C)-0.0 + l[j] : (C)1.0 * l[j];    \
    }                                                                                          \
    /* o[j * ostride + i] for block j; cy[j]: carries in, out. o may be x (in place). */       \
    static TK_NOVEC void multi_scan_##name(int sum, int excl, const C *x, C *o,               \
                                           uint64_t ostride,                                   \
                                  tally_carry *cy)                                             \
    {                                                                                          \
        C l[MULTI] = {0}, c[MULTI];                                                            \
        for (int j = 0; j < MULTI; j++) c[j] = cy[j].name;                                     \
        if (sum && !excl)                                                                      \
            MULTI_FOR(C v = x[j * B_ + i]; l[j] = i ? l[j] + v : v;                            \
                      o[j * ostride + i] = c[j] + l[j],                                        \
                      l[j] = l[j] + x[j * B_ + i]; o[j * ostride + i] = c[j] + l[j]);          \
        else if (sum)                                                                          \
            MULTI_FOR(C v = x[j * B_ + i]; o[j * ostride + i] = i ? c[j] + l[j] : c[j];        \
                      l[j] = i ? l[j] + v : v,                                                 \
                      C v = x[j * B_ + i]; o[j * ostride + i] = c[j] + l[j]; l[j] = l[j] + v); \
        else if (!excl)                                                                        \
            MULTI_FOR(C v = x[j * B_ + i]; l[j] = i ? l[j] * v : v;                            \
                      o[j * ostride + i] = c[j] * l[j],                                        \
                      l[j] = l[j] * x[j * B_ + i]; o[j * ostride + i] = c[j] * l[j]);          \
        else                                                                                   \
            MULTI_FOR(C v = x[j * B_ + i]; o[j * ostride + i] = i ? c[j] * l[j] : c[j];        \
                      l[j] = i ? l[j] * v : v,                                                 \
                      C v = x[j * B_ + i]; o[j * ostride + i] = c[j] * l[j]; l[j] = l[j] * v); \
        for (int j = 0; j < MULTI; j++) cy[j].name = sum ? c[j] + l[j] : c[j] * l[j];          \
    }
FLOAT_MULTI(f32, float)
FLOAT_MULTI(f64, double)

typedef struct scan_job {
    tally_cpu_state *st;
    void (*kern)(const void *, void *, uint64_t, tally_carry *);
    void (*total)(const void *, uint64_t, tally_carry *);
    const char *in;
    char *out;
    uint64_t n, nblocks;
    size_t size;
    uint64_t per;        /* blocks per thread per round */
    int nt;              /* write through an L1 buffer with non-temporal stores */
    int multi;           /* float sum/prod: 0, else 1 + (type == f64) */
    int sum, excl;
    uint64_t nfull;      /* full blocks */
    char *mbuf;          /* nt && multi: MULTI blocks per thread */
    tally_carry start;   /* carry into block 0 */
    tally_carry ident;   /* op's identity: totals start from it */
} scan_job;

/* Scans one block into out (directly, or via buf and streaming stores). */
static inline void scan_block(const scan_job *j, uint64_t b, tally_carry *c, void *buf)
{
    uint64_t e = b * TALLY_SCAN_BLOCK, len = j->n - e < TALLY_SCAN_BLOCK ? j->n - e : TALLY_SCAN_BLOCK;
    if (j->nt) {
        j->kern(j->in + e * j->size, buf, len, c);
        j->st->k->stream_copy(j->out + e * j->size, buf, len * j->size);
    } else {
        j->kern(j->in + e * j->size, j->out + e * j->size, len, c);
    }
}

static void scan_thread(void *arg, int tid, int nth)
{
    scan_job *j = arg;
    _Alignas(64) char buf[TALLY_SCAN_BLOCK * 8];
    const uint64_t B = TALLY_SCAN_BLOCK, R = j->per * (uint64_t)nth;
    tally_carry rc = j->start; /* carry into the round: every thread keeps the same copy */
    for (uint64_t r = 0; r * R < j->nblocks; r++) {
        tally_carry *tot = j->st->totals + (r & 1) * R;
        uint64_t b0 = r * R;
        uint64_t rb = j->nblocks - b0 < R ? j->nblocks - b0 : R; /* blocks in this round */
        uint64_t my_lo = (uint64_t)tid * j->per, my_hi = my_lo + j->per;
        if (my_hi > rb) my_hi = rb;
        for (uint64_t k = my_lo; k < my_hi; k++) {
            uint64_t e = (b0 + k) * B, len = j->n - e < B ? j->n - e : B;
            if (j->multi && k + MULTI <= my_hi && b0 + k + MULTI <= j->nfull) {
                if (j->multi == 1 && j->st->k->multi_total_f32)
                    j->st->k->multi_total_f32(j->sum, (const float *)(j->in + e * j->size), &tot[k]);
                else if (j->multi == 1)
                    multi_total_f32(j->sum, (const float *)(j->in + e * j->size), &tot[k]);
                else multi_total_f64(j->sum, (const double *)(j->in + e * j->size), &tot[k]);
                k += MULTI - 1;
                continue;
            }
            tot[k] = j->ident;
            j->total(j->in + e * j->size, len, &tot[k]);
        }
        tally_pool_barrier(j->st->pool, nth);
        tally_carry c = rc;
        for (uint64_t k = 0; k < my_lo && k < rb; k++) j->total(&tot[k], 1, &c);
        for (uint64_t k = my_lo; k < my_hi; k++) {
            if (j->multi && k + MULTI <= my_hi && b0 + k + MULTI <= j->nfull) {
                tally_carry cs[MULTI];
                for (int q = 0; q < MULTI; q++) {
                    cs[q] = c;
                    j->total(&tot[k + (uint64_t)q], 1, &c);
                }
                uint64_t e = (b0 + k) * B;
                char *o = j->nt ? j->mbuf + (size_t)tid * MULTI * B * j->size : j->out + e * j->size;
                uint64_t os = B;
                if (j->multi == 1 && j->st->k->multi_scan_f32)
                    j->st->k->multi_scan_f32(j->sum, j->excl, (const float *)(j->in + e * j->size),
                                             (float *)o, os, cs);
                else if (j->multi == 1)
                    multi_scan_f32(j->sum, j->excl, (const float *)(j->in + e * j->size), (float *)o, os, cs);
                else
                    multi_scan_f64(j->sum, j->excl, (const double *)(j->in + e * j->size), (double *)o, os, cs);
                if (j->nt) j->st->k->stream_copy(j->out + e * j->size, o, MULTI * B * j->size);
                c = cs[MULTI - 1]; /* equals the fold of the totals, by construction */
                k += MULTI - 1;
                continue;
            }
            scan_block(j, b0 + k, &c, buf);
        }
        for (uint64_t k = 0; k < rb; k++) j->total(&tot[k], 1, &rc);
    }
    if (j->nt) j->st->k->stream_fence();
}

tally_status tally_cpu_scan(tally_context *ctx, void *state, tally_op op, tally_type type,
                            const void *in, void *out, uint64_t n, const tally_scan_options *opts)
{
    (void)ctx;
    tally_cpu_state *st = state;
    if (n == 0) return TALLY_OK;
    scan_job j;
    memset(&j, 0, sizeof j);
    j.st = st;
    j.kern = opts->exclusive ? st->k->scan_excl[op][type] : st->k->scan_incl[op][type];
    j.total = st->k->scan_total[op][type];
    j.in = in;
    j.out = out;
    j.n = n;
    j.size = tally_type_size(type);
    j.nblocks = (n + TALLY_SCAN_BLOCK - 1) / TALLY_SCAN_BLOCK;
    j.ident = identity(op, type);
    if (opts->exclusive && opts->has_init) j.start = from_init(type, opts);
    else if (opts->exclusive && op == TALLY_SUM && tally_type_is_float(type)) memset(&j.start, 0, sizeof j.start); /* +0 */
    else j.start = j.ident;
    uint64_t t = n * j.size / TALLY_SCAN_ROUND_MIN;
    int nth = t < 1 ? 1 : t < (uint64_t)st->threads ? (int)t : st->threads;
    /* blocks per thread per round: a round's worth, or the whole input split evenly */
    uint64_t per_max = st->scan_round / (TALLY_SCAN_BLOCK * j.size);
    j.per = (j.nblocks + (uint64_t)nth - 1) / (uint64_t)nth;
    if (j.per > per_max) j.per = per_max;
    if (j.per < 1) j.per = 1;
    /* Outputs much larger than the caches go around them, as a large memcpy does. */
    j.nt = in != out && n * j.size >= TALLY_SCAN_STREAM_BYTES;
    /* Float sum/prod: whenever there are blocks enough, the rounds (even on one thread) let
     * MULTI blocks' chains run side by side. */
    int multi = tally_type_is_float(type) && (op == TALLY_SUM || op == TALLY_PROD) &&
                j.per >= MULTI && j.nblocks >= MULTI;
    if (nth == 1 && !multi) {
        _Alignas(64) char buf[TALLY_SCAN_BLOCK * 8];
        tally_carry c = j.start;
        for (uint64_t b = 0; b < j.nblocks; b++) scan_block(&j, b, &c, buf);
        if (j.nt) st->k->stream_fence();
        return TALLY_OK;
    }
    if (multi) {
        j.multi = type == TALLY_F32 ? 1 : 2;
        j.sum = op == TALLY_SUM;
        j.excl = opts->exclusive;
        j.nfull = n / TALLY_SCAN_BLOCK;
        if (j.nt) {
            j.mbuf = aligned_alloc(64, (size_t)nth * MULTI * TALLY_SCAN_BLOCK * j.size);
            if (!j.mbuf) j.nt = 0;
        }
    }
    tally_pool_run(st->pool, nth, scan_thread, &j);
    free(j.mbuf);
    return TALLY_OK;
}
