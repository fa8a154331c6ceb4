/* Scans on the CPU. The data is cut into fixed blocks of TALLY_SCAN_BLOCK elements; block b's
 * outputs are carry_b op local(...), where local folds from the block start and carry_{b+1} =
 * carry_b op total_b. The boundaries do not depend on the thread count, so neither do float
 * results. Blocks are grouped in pieces (a fraction of L2) which the threads take round robin:
 * a thread computes its piece's block totals (reading it from memory into L2) and publishes
 * them, folds the totals of the pieces since its previous one (the other threads', computed
 * meanwhile) into its carry, and scans the piece from L2. So memory is read once and written
 * once, as by a copy, and no thread waits at a barrier for all the others.
 * A thread that read a whole piece and then wrote a whole piece would leave memory's reads and
 * writes idle in turns (about 0.8 of a copy's speed), so on large outputs it prefetches its
 * next piece into L2 while it writes the current one (associative scans through L1 in 1 KiB
 * chunks between the prefetches); f32 sum/prod scans, whose arithmetic takes longer, work one
 * piece behind instead: one pass computes a piece's totals, writes the previous piece out and
 * prefetches the next (scan_thread_fused). Both run at about a copy's speed. */
#include <float.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "core/types.h"
#include "cpu/state.h"

/* A scan carry from an element's bits (types.h: tally_scan_identity_bits, _start_bits). */
static tally_carry carry_of_bits(uint64_t bits)
{
    tally_carry c;
    memset(&c, 0, sizeof c);
    memcpy(&c, &bits, sizeof bits); /* little-endian: the element is in the low bytes */
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
    uint64_t pblocks;    /* blocks per piece */
    uint64_t npieces;
    int nt;              /* write through an L1 buffer with non-temporal stores */
    int pf;              /* prefetch each thread's next piece while it writes one */
    int assoc;           /* op associative on type (all but float sum/prod): blocks may be
                            scanned in chunks, the carry passed between them */
    int multi;           /* float sum/prod: 0, else 1 + (type == f64) */
    int sum, excl;
    uint64_t nfull;      /* full blocks */
    char *mbuf;          /* nt && multi: MULTI blocks per thread */
    char *lbuf;          /* two-pass f32 (carry_f32): a piece of local folds per thread */
    tally_carry start;   /* carry into block 0 */
    tally_carry ident;   /* op's identity: totals start from it */
} scan_job;

/* Prefetching: while a thread writes piece p it pulls its next piece into L2, a cache line
 * per line written (pf: the bytes of the next piece at the same offset, NULL for none), so
 * that its reads from memory overlap the writes as in a copy, rather than the thread reading
 * a whole piece and then writing a whole piece. PF_CHUNK: the bytes written between bursts. */
#define PF_CHUNK 1024u
typedef struct pf_range {
    const char *p;  /* the next piece's bytes at the offset of the block being written */
    uint64_t left;  /* how many of the next piece's bytes remain from p */
} pf_range;

static inline void prefetch_bytes(pf_range *pf, uint64_t bytes)
{
    if (!pf || !pf->left) return;
    if (bytes > pf->left) bytes = pf->left;
    for (uint64_t o = 0; o < bytes; o += 64) __builtin_prefetch(pf->p + o, 0, 2); /* into L2 */
    pf->p += bytes;
    pf->left -= bytes;
}

/* Copies an L1 buffer out with streaming stores, prefetching as many bytes of pf. */
static inline void stream_out(const scan_job *j, char *dst, const char *src, uint64_t bytes,
                              pf_range *pf)
{
    if (!pf) {
        j->st->k->stream_copy(dst, src, bytes);
        return;
    }
    for (uint64_t o = 0; o < bytes; o += PF_CHUNK) {
        uint64_t len = bytes - o < PF_CHUNK ? bytes - o : PF_CHUNK;
        j->st->k->stream_copy(dst + o, src + o, len);
        prefetch_bytes(pf, len);
    }
}

/* Scans one block into out (directly, or via buf and streaming stores). */
static inline void scan_block(const scan_job *j, uint64_t b, tally_carry *c, void *buf,
                              pf_range *pf)
{
    uint64_t e = b * TALLY_SCAN_BLOCK, len = j->n - e < TALLY_SCAN_BLOCK ? j->n - e : TALLY_SCAN_BLOCK;
    if (j->nt && j->assoc) {
        /* in chunks, through L1: a whole block's streaming stores at once would leave the
         * loads idle while they drain. op is associative, so the chunks' carries give the
         * same values. */
        const uint64_t ch = PF_CHUNK / j->size;
        for (uint64_t i = 0; i < len; i += ch) {
            uint64_t m = len - i < ch ? len - i : ch;
            j->kern(j->in + (e + i) * j->size, buf, m, c);
            j->st->k->stream_copy(j->out + (e + i) * j->size, buf, m * j->size);
            prefetch_bytes(pf, m * j->size);
        }
    } else if (j->nt) {
        j->kern(j->in + e * j->size, buf, len, c);
        stream_out(j, j->out + e * j->size, buf, len * j->size, pf);
    } else {
        j->kern(j->in + e * j->size, j->out + e * j->size, len, c);
        prefetch_bytes(pf, len * j->size);
    }
}

/* What a piece publishes: its block totals (state TOT), then the carry out of it (INCL). */
enum { PIECE_NONE = 0, PIECE_TOT = 1, PIECE_INCL = 2 };
typedef struct piece_rec {
    _Atomic uint64_t state;
    tally_carry incl;    /* the carry into the next piece, once state is INCL */
} piece_rec;

static inline uint64_t piece_blocks(const scan_job *j, uint64_t p)
{
    uint64_t b0 = p * j->pblocks;
    return j->nblocks - b0 < j->pblocks ? j->nblocks - b0 : j->pblocks;
}

/* The block totals of piece p into tot[]. With lbuf (two-pass f32), groups of MULTI blocks are
 * scanned with identity carries into lbuf (their totals are the last local folds) and
 * scan_piece only adds the carries. */
static void total_piece(const scan_job *j, uint64_t p, tally_carry *tot, float *lbuf)
{
    const uint64_t B = TALLY_SCAN_BLOCK;
    uint64_t b0 = p * j->pblocks, nb = piece_blocks(j, p);
    for (uint64_t k = 0; k < nb; k++) {
        uint64_t e = (b0 + k) * B, len = j->n - e < B ? j->n - e : B;
        if (j->multi && k + MULTI <= nb && b0 + k + MULTI <= j->nfull) {
            if (lbuf) {
                for (int q = 0; q < MULTI; q++) tot[k + (uint64_t)q] = j->ident;
                j->st->k->multi_scan_f32(j->sum, 0, (const float *)(j->in + e * j->size),
                                         lbuf + k * B, B, &tot[k]);
            } else if (j->multi == 1 && j->st->k->multi_total_f32)
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
}

/* Scans piece p from carry c (c: the carry out afterwards); tot: its block totals. */
static void scan_piece(const scan_job *j, uint64_t p, const tally_carry *tot, tally_carry *c,
                       char *buf, char *mbuf, const float *lbuf, pf_range *pf)
{
    const uint64_t B = TALLY_SCAN_BLOCK;
    uint64_t b0 = p * j->pblocks, nb = piece_blocks(j, p);
    for (uint64_t k = 0; k < nb; k++) {
        if (lbuf && k + MULTI <= nb && b0 + k + MULTI <= j->nfull) {
            for (uint64_t q = k; q < k + MULTI; q++) {
                float *o = (float *)(j->out + (b0 + q) * B * j->size);
                const float *l = lbuf + q * B;
                if (!pf) {
                    j->st->k->carry_f32(j->sum, j->excl, l, o, B, c->f32, j->nt);
                } else { /* in chunks, prefetching between them: out[i] depends on l[i]
                            (inclusive) or l[i-1] (exclusive), so the same bits */
                    const uint64_t ch = PF_CHUNK / 4;
                    for (uint64_t i = 0; i < B; i += ch) {
                        uint64_t len = B - i < ch ? B - i : ch;
                        if (i == 0 || !j->excl)
                            j->st->k->carry_f32(j->sum, j->excl, l + i, o + i, len, c->f32, j->nt);
                        else
                            j->st->k->carry_f32(j->sum, 0, l + i - 1, o + i, len, c->f32, j->nt);
                        prefetch_bytes(pf, len * 4);
                    }
                }
                j->total(&tot[q], 1, c);
            }
            k += MULTI - 1;
            continue;
        }
        if (j->multi && k + MULTI <= nb && b0 + k + MULTI <= j->nfull) {
            tally_carry cs[MULTI];
            for (int q = 0; q < MULTI; q++) {
                cs[q] = *c;
                j->total(&tot[k + (uint64_t)q], 1, c);
            }
            uint64_t e = (b0 + k) * B;
            char *o = j->nt ? mbuf : j->out + e * j->size;
            if (j->multi == 1 && j->st->k->multi_scan_f32)
                j->st->k->multi_scan_f32(j->sum, j->excl, (const float *)(j->in + e * j->size),
                                         (float *)o, B, cs);
            else if (j->multi == 1)
                multi_scan_f32(j->sum, j->excl, (const float *)(j->in + e * j->size), (float *)o, B, cs);
            else
                multi_scan_f64(j->sum, j->excl, (const double *)(j->in + e * j->size), (double *)o, B, cs);
            if (j->nt) stream_out(j, j->out + e * j->size, o, MULTI * B * j->size, pf);
            else prefetch_bytes(pf, MULTI * B * j->size);
            *c = cs[MULTI - 1]; /* equals the fold of the totals, by construction */
            k += MULTI - 1;
            continue;
        }
        scan_block(j, b0 + k, c, buf, pf);
    }
}

/* Threads take pieces in order from a counter. For piece p a thread computes the block totals
 * (reading the piece from memory into L2) and publishes them; then it looks back for its carry:
 * the nearest earlier piece that has published its carry out (INCL), folded with the totals of
 * the pieces between (TOT: taken by threads still working on them). It publishes its own carry
 * out and scans the piece from L2. A thread never waits for another to scan; if an earlier piece
 * has no totals yet (its thread was just descheduled, say, on a busy machine) the thread waits a
 * little, then computes them itself: the same bits, so nothing depends on who did. */
typedef struct scan_shared {
    scan_job *j;
    piece_rec *rec;        /* npieces */
    tally_carry *tot;      /* npieces x pblocks */
    tally_carry *steal;    /* threads x threads x pblocks */
    _Atomic uint64_t next; /* the next piece to take */
} scan_shared;

#define STEAL_SPINS 1000

/* pf: the bytes of piece pn (none past the last). */
static void next_range(const scan_job *j, uint64_t pn, pf_range *pf)
{
    pf->p = NULL;
    pf->left = 0;
    if (pn >= j->npieces) return;
    uint64_t e = pn * j->pblocks * TALLY_SCAN_BLOCK;
    pf->p = j->in + e * j->size;
    pf->left = (j->n - e < j->pblocks * TALLY_SCAN_BLOCK ? j->n - e : j->pblocks * TALLY_SCAN_BLOCK) * j->size;
}

/* Publishes piece p's totals tot, looks back for its carry in (returned) and publishes its
 * carry out. steal: room for the totals of late pieces. */
static tally_carry look_back(scan_shared *sh, uint64_t p, const tally_carry *tot,
                             tally_carry *steal, int nth)
{
    const scan_job *j = sh->j;
    atomic_store_explicit(&sh->rec[p].state, PIECE_TOT, memory_order_release);
    /* look back: pieces q+1 .. p-1 contribute their totals, q its carry out */
    const tally_carry *between[64];
    int nbetween = 0, nstolen = 0;
    tally_carry c = j->start;
    uint64_t q = p;
    while (q > 0) {
        q--;
        uint64_t s = atomic_load_explicit(&sh->rec[q].state, memory_order_acquire);
        for (int i = 0; s == PIECE_NONE && i < STEAL_SPINS; i++) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            s = atomic_load_explicit(&sh->rec[q].state, memory_order_acquire);
        }
        if (s == PIECE_INCL) {
            c = sh->rec[q].incl;
            break;
        }
        if (nbetween == 64) { /* too far back (not with sane thread counts): wait for it */
            while (atomic_load_explicit(&sh->rec[q].state, memory_order_acquire) != PIECE_INCL)
                sched_yield();
            c = sh->rec[q].incl;
            break;
        }
        if (s == PIECE_TOT) {
            between[nbetween++] = sh->tot + q * j->pblocks;
        } else { /* its thread is late: compute them here (not in place: it may be
                    writing the piece by the time this thread reads it) */
            tally_carry *t = nstolen < nth && j->in != j->out
                                 ? steal + (size_t)nstolen++ * j->pblocks : NULL;
            if (!t) { /* wait for the totals instead */
                while (atomic_load_explicit(&sh->rec[q].state, memory_order_acquire) == PIECE_NONE)
                    sched_yield();
                q++; /* and look at q again */
                continue;
            }
            total_piece(j, q, t, NULL);
            between[nbetween++] = t;
        }
    }
    /* fold the totals between, oldest first: block by block, as the definition says */
    for (int i = nbetween - 1; i >= 0; i--) {
        uint64_t nb = piece_blocks(j, p - 1 - (uint64_t)i);
        for (uint64_t k = 0; k < nb; k++) j->total(&between[i][k], 1, &c);
    }
    tally_carry out = c;
    uint64_t nb = piece_blocks(j, p);
    for (uint64_t k = 0; k < nb; k++) j->total(&tot[k], 1, &out);
    sh->rec[p].incl = out;
    atomic_store_explicit(&sh->rec[p].state, PIECE_INCL, memory_order_release);
    return c;
}

static void scan_thread(void *arg, int tid, int nth)
{
    scan_shared *sh = arg;
    const scan_job *j = sh->j;
    _Alignas(64) char buf[TALLY_SCAN_BLOCK * 8];
    char *mbuf = j->mbuf ? j->mbuf + (size_t)tid * MULTI * TALLY_SCAN_BLOCK * j->size : NULL;
    float *lbuf = j->lbuf ? (float *)(j->lbuf + (size_t)tid * j->pblocks * TALLY_SCAN_BLOCK * 4) : NULL;
    tally_carry *steal = sh->steal + (size_t)tid * (size_t)nth * j->pblocks;
    uint64_t p = atomic_fetch_add_explicit(&sh->next, 1, memory_order_relaxed);
    while (p < j->npieces) {
        tally_carry *tot = sh->tot + p * j->pblocks;
        total_piece(j, p, tot, lbuf);
        tally_carry c = look_back(sh, p, tot, steal, nth);
        /* take the next piece now, to prefetch it while writing this one */
        uint64_t pn = atomic_fetch_add_explicit(&sh->next, 1, memory_order_relaxed);
        pf_range pf;
        next_range(j, pn, &pf);
        scan_piece(j, p, tot, &c, buf, mbuf, lbuf, j->pf && pf.left ? &pf : NULL);
        p = pn;
    }
    if (j->nt) j->st->k->stream_fence();
}

/* Float (f32) sum/prod scans of large outputs, where the multi-block kernels' arithmetic
 * would otherwise leave memory idle: a piece is one group of MULTI blocks, and a thread works
 * one piece behind. In one pass over the tiles (multi_fused_f32) it computes the totals of its
 * piece p (prefetched into L2 before), scans its previous piece q (still in L2, its carry
 * known) out with streaming stores, and prefetches its next piece: reads from cache, writes
 * to memory and reads from memory all at once, as in a copy. Then it publishes p's totals and
 * looks back for p's carry. The same kernels' bits, so the same results. */
static int piece_full(const scan_job *j, uint64_t p)
{
    return piece_blocks(j, p) == MULTI && (p + 1) * MULTI <= j->nfull;
}

static void scan_thread_fused(void *arg, int tid, int nth)
{
    scan_shared *sh = arg;
    const scan_job *j = sh->j;
    const uint64_t B = TALLY_SCAN_BLOCK, none = j->npieces;
    _Alignas(64) char buf[TALLY_SCAN_BLOCK * 8];
    tally_carry *steal = sh->steal + (size_t)tid * (size_t)nth * j->pblocks;
    uint64_t q = none; /* the piece scanned in this round (the previous one) */
    tally_carry cq;    /* its carry in */
    memset(&cq, 0, sizeof cq);
    int first = 1;
    uint64_t p = atomic_fetch_add_explicit(&sh->next, 1, memory_order_relaxed);
    for (;;) {
        uint64_t pn = none;
        pf_range pf = {NULL, 0};
        /* the next piece, to prefetch: taken at once except after a thread's first piece (so
         * that the threads start on consecutive pieces) */
        if (!first && p < none) {
            pn = atomic_fetch_add_explicit(&sh->next, 1, memory_order_relaxed);
            next_range(j, pn, &pf);
        }
        tally_carry *tot = p < none ? sh->tot + p * j->pblocks : NULL;
        int pfull = p < none && piece_full(j, p), qfull = q < none && piece_full(j, q);
        tally_carry cs[MULTI];
        if (qfull) { /* the carries into q's blocks */
            const tally_carry *tq = sh->tot + q * j->pblocks;
            tally_carry c = cq;
            for (int k = 0; k < MULTI; k++) {
                cs[k] = c;
                j->total(&tq[k], 1, &c);
            }
        }
        if (pfull)
            for (int k = 0; k < MULTI; k++) tot[k] = j->ident;
        if (pfull || qfull)
            j->st->k->multi_fused_f32(j->sum, j->excl,
                                      pfull ? (const float *)(j->in + p * MULTI * B * 4) : NULL, tot,
                                      qfull ? (const float *)(j->in + q * MULTI * B * 4) : NULL,
                                      qfull ? (float *)(j->out + q * MULTI * B * 4) : NULL, B, cs,
                                      j->nt, pf.p, pf.left);
        if (q < none && !qfull) /* the last, partial piece */
            scan_piece(j, q, sh->tot + q * j->pblocks, &cq, buf, NULL, NULL, NULL);
        if (p >= none) break;
        if (!pfull) total_piece(j, p, tot, NULL);
        cq = look_back(sh, p, tot, steal, nth);
        q = p;
        if (first) {
            pn = atomic_fetch_add_explicit(&sh->next, 1, memory_order_relaxed);
            first = 0;
        }
        p = pn < none ? pn : none;
    }
    if (j->nt) j->st->k->stream_fence();
}

tally_status tally_cpu_scan(tally_context *ctx, void *state, tally_op op, tally_type type,
                            const void *in, void *out, uint64_t n, const tally_scan_options *opts)
{
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
    j.ident = carry_of_bits(tally_scan_identity_bits(op, type));
    /* has_init with an inclusive scan: only from inside the library (tally_scan refuses it),
     * as the carry of the data before this piece (libtally_mpi's ranks) */
    j.start = carry_of_bits(tally_scan_start_bits(op, type, opts));
    j.pblocks = st->scan_piece / (TALLY_SCAN_BLOCK * j.size);
    if (j.pblocks < 1) j.pblocks = 1;
    /* Outputs much larger than the caches go around them, as a large memcpy does. */
    j.nt = in != out && n * j.size >= TALLY_SCAN_STREAM_BYTES;
    /* large f32 sum/prod scans: one piece per group of MULTI blocks (scan_thread_fused) */
    int fused = j.nt && type == TALLY_F32 && (op == TALLY_SUM || op == TALLY_PROD) &&
                st->k->multi_fused_f32 && j.nblocks >= MULTI;
    if (fused) j.pblocks = MULTI;
    j.npieces = (j.nblocks + j.pblocks - 1) / j.pblocks;
    uint64_t tmin = TALLY_SCAN_THREAD_MIN < 2 * st->scan_piece ? TALLY_SCAN_THREAD_MIN : 2 * st->scan_piece;
    uint64_t t = n * j.size / tmin;
    int nth = t < 1 ? 1 : t < (uint64_t)st->threads ? (int)t : st->threads;
    if ((uint64_t)nth > j.npieces) nth = (int)j.npieces;
    j.pf = n * j.size >= TALLY_SCAN_STREAM_BYTES;
    j.assoc = !(tally_type_is_float(type) && (op == TALLY_SUM || op == TALLY_PROD));
    /* Float sum/prod: whenever there are blocks enough, the pieces (even on one thread) let
     * MULTI blocks' chains run side by side. */
    int multi = tally_type_is_float(type) && (op == TALLY_SUM || op == TALLY_PROD) &&
                j.pblocks >= MULTI && j.nblocks >= MULTI;
    if (nth == 1 && !multi) {
        _Alignas(64) char buf[TALLY_SCAN_BLOCK * 8];
        tally_carry c = j.start;
        for (uint64_t b = 0; b < j.nblocks; b++) scan_block(&j, b, &c, buf, NULL);
        if (j.nt) st->k->stream_fence();
        return TALLY_OK;
    }
    if (multi) {
        j.multi = type == TALLY_F32 ? 1 : 2;
        j.sum = op == TALLY_SUM;
        j.excl = opts->exclusive;
        j.nfull = n / TALLY_SCAN_BLOCK;
        if (!fused && j.multi == 1 && st->k->multi_scan_f32 && st->k->carry_f32) {
            /* two passes over each group of MULTI blocks: local folds into an L2 buffer while
             * the piece streams in, then carries added on the way out */
            j.lbuf = aligned_alloc(64, (size_t)nth * j.pblocks * TALLY_SCAN_BLOCK * 4);
        }
        if (j.nt && !j.lbuf && !fused) {
            j.mbuf = aligned_alloc(64, (size_t)nth * MULTI * TALLY_SCAN_BLOCK * j.size);
            if (!j.mbuf) j.nt = 0;
        }
    }
    scan_shared sh;
    sh.j = &j;
    atomic_init(&sh.next, 0);
    size_t nrec = (size_t)j.npieces * sizeof(piece_rec);
    size_t ntot = ((size_t)j.npieces + (size_t)nth * (size_t)nth) * j.pblocks * sizeof(tally_carry);
    char *mem = calloc(1, nrec + ntot);
    if (!mem) {
        free(j.mbuf);
        free(j.lbuf);
        return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY,
                               "tally_scan: out of memory for %llu piece totals",
                               (unsigned long long)j.npieces);
    }
    sh.rec = (piece_rec *)mem;
    sh.tot = (tally_carry *)(mem + nrec);
    sh.steal = sh.tot + j.npieces * j.pblocks;
    tally_pool_run(st->pool, nth, fused ? scan_thread_fused : scan_thread, &sh);
    free(mem);
    free(j.mbuf);
    free(j.lbuf);
    return TALLY_OK;
}
