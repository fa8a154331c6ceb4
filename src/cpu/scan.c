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
 * next piece into L2 while it writes the current one (through L1 in 1 KiB chunks between the
 * prefetches). Float sum/prod scans do the same: their block kernels take chunks of whole
 * groups (tally.h's order), so they run as fast as the integer ones; their totals come 16 (f32)
 * or 8 (f64) blocks at a time where the ISA has a kernel for it (kernels.h, ftot16/ftot8), and
 * the look-back folds block totals with one op each (fold_total), as the integer ones do: the
 * threads' time outside scan+write is time their share of the bus sits idle. With a profile set
 * (cpu.h, tally_cpu_set_scan_profile) each thread clocks those phases. */
#include <float.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
    int early;           /* ... twice as fast, in the first half of the piece, and compute the
                            next piece's totals three quarters of the way through (SCAN_EARLY) */
    int assoc;           /* op associative on type (all but float sum/prod): blocks may be
                            scanned in chunks, the carry passed between them */
    /* float sum/prod: the kernel that scans a block in chunks of whole groups, the block's
     * local value passed between them */
    void (*fscan)(const void *, void *, uint64_t, const tally_carry *, tally_carry *, int);
    int excl;
    int fold;            /* how a block total folds into a carry: FOLD_* */
    void (*totm)(const void *, tally_carry *); /* totm_blocks blocks' totals at once, or NULL */
    uint64_t totm_blocks;
    tally_carry start;   /* carry into block 0 */
    tally_carry ident;   /* op's identity: totals start from it */
} scan_job;

/* Folding a block's total t into a carry c: c op t, which is what total(&t, 1, &c) computes
 * (for float sum/prod: identity op t = t exactly, then c op t), done directly for the float ops,
 * whose total kernels are a whole group's vector code: the look-back folds up to a piece's worth
 * of totals per piece between, and on many threads that cost was as much as a piece's totals. */
/* Float min/max: IEEE 754-2019 minimum/maximum as the scalar scans take them (kernels_body.h,
 * tk_fmin/tk_fmax): the carry's NaN sticks, then the total's (the first NaN of its block), -0 < +0.
 * That is what the min/max totals kernels compute for one element, but as a whole vector kernel
 * (lanes set up, reduced across) for one value. */
#define FOLD_FMINMAX(a, b, MAX)                                                                    \
    ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? ((MAX) ? (b) : (a))                      \
     : (b) < (a) ? ((MAX) ? (a) : (b)) : (signbit(a) != 0) == (MAX) ? (b) : (a))
enum { FOLD_KERNEL = 0, FOLD_SUM_F32, FOLD_SUM_F64, FOLD_PROD_F32, FOLD_PROD_F64, FOLD_MIN_F32,
       FOLD_MIN_F64, FOLD_MAX_F32, FOLD_MAX_F64 };
static inline void fold_total(const scan_job *j, const tally_carry *t, tally_carry *c)
{
    switch (j->fold) {
    case FOLD_SUM_F32: c->f32 = c->f32 + t->f32; break;
    case FOLD_SUM_F64: c->f64 = c->f64 + t->f64; break;
    case FOLD_PROD_F32: c->f32 = c->f32 * t->f32; break;
    case FOLD_PROD_F64: c->f64 = c->f64 * t->f64; break;
    case FOLD_MIN_F32: c->f32 = FOLD_FMINMAX(c->f32, t->f32, 0); break;
    case FOLD_MIN_F64: c->f64 = FOLD_FMINMAX(c->f64, t->f64, 0); break;
    case FOLD_MAX_F32: c->f32 = FOLD_FMINMAX(c->f32, t->f32, 1); break;
    case FOLD_MAX_F64: c->f64 = FOLD_FMINMAX(c->f64, t->f64, 1); break;
    default: j->total(t, 1, c);
    }
}

/* Prefetching: while a thread writes piece p it pulls its next piece into L2, a cache line
 * per line written (pf: the bytes of the next piece at the same offset, NULL for none), so
 * that its reads from memory overlap the writes as in a copy, rather than the thread reading
 * a whole piece and then writing a whole piece. PF_CHUNK: the bytes written between bursts. */
#define PF_CHUNK 1024u
typedef struct pf_range {
    const char *p;  /* the next piece's bytes at the offset of the block being written */
    uint64_t left;  /* how many of the next piece's bytes remain from p */
    unsigned rate;  /* bytes prefetched per byte written */
} pf_range;

static inline void prefetch_bytes(pf_range *pf, uint64_t bytes)
{
    if (!pf || !pf->left) return;
    bytes *= pf->rate;
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
    } else if (j->nt && j->fscan) {
        /* the same in chunks of whole groups, the block's local value passed between them */
        const uint64_t ch = PF_CHUNK / j->size;
        tally_carry l = j->ident;
        for (uint64_t i = 0; i < len; i += ch) {
            uint64_t m = len - i < ch ? len - i : ch;
            j->fscan(j->in + (e + i) * j->size, buf, m, c, &l, j->excl);
            j->st->k->stream_copy(j->out + (e + i) * j->size, buf, m * j->size);
            prefetch_bytes(pf, m * j->size);
        }
        fold_total(j, &l, c); /* c op the block's last local value */
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

/* The block totals of piece p into tot[]. */
static void total_piece(const scan_job *j, uint64_t p, tally_carry *tot)
{
    const uint64_t B = TALLY_SCAN_BLOCK;
    uint64_t b0 = p * j->pblocks, nb = piece_blocks(j, p);
    for (uint64_t k = 0; k < nb; k++) {
        uint64_t e = (b0 + k) * B, len = j->n - e < B ? j->n - e : B;
        const uint64_t m = j->totm_blocks;
        if (j->totm && k + m <= nb && (b0 + k + m) * B <= j->n) { /* m whole blocks at once */
            j->totm(j->in + e * j->size, tot + k);
            k += m - 1;
            continue;
        }
        tot[k] = j->ident;
        j->total(j->in + e * j->size, len, &tot[k]);
    }
}

/* Scans blocks k0..k1-1 of piece p from carry c (c: the carry out afterwards). */
static void scan_piece(const scan_job *j, uint64_t p, uint64_t k0, uint64_t k1, tally_carry *c,
                       char *buf, pf_range *pf)
{
    uint64_t b0 = p * j->pblocks;
    for (uint64_t k = k0; k < k1; k++) scan_block(j, b0 + k, c, buf, pf);
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
    double t0;             /* profiling (st->scan_prof): the call's start, ns */
    double (*prof)[8];     /* per thread: wake, totals, look-back, scan, end time, pieces,
                              waits, stolen */
} scan_shared;

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

#define STEAL_SPINS 1000

/* pf: the bytes of piece pn (none past the last). */
static void next_range(const scan_job *j, uint64_t pn, pf_range *pf)
{
    pf->p = NULL;
    pf->left = 0;
    pf->rate = 1;
    if (pn >= j->npieces) return;
    uint64_t e = pn * j->pblocks * TALLY_SCAN_BLOCK;
    pf->p = j->in + e * j->size;
    pf->left = (j->n - e < j->pblocks * TALLY_SCAN_BLOCK ? j->n - e : j->pblocks * TALLY_SCAN_BLOCK) * j->size;
}

/* Publishes piece p's totals tot, looks back for its carry in (returned) and publishes its
 * carry out. steal: room for the totals of late pieces. */
static tally_carry look_back(scan_shared *sh, uint64_t p, const tally_carry *tot,
                             tally_carry *steal, int nth, double *prof)
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
        if (prof && s == PIECE_NONE) prof[6] += 1;
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
            total_piece(j, q, t);
            if (prof) prof[7] += 1;
            between[nbetween++] = t;
        }
    }
    /* fold the totals between, oldest first: block by block, as the definition says */
    for (int i = nbetween - 1; i >= 0; i--) {
        uint64_t nb = piece_blocks(j, p - 1 - (uint64_t)i);
        for (uint64_t k = 0; k < nb; k++) fold_total(j, &between[i][k], &c);
    }
    tally_carry out = c;
    uint64_t nb = piece_blocks(j, p);
    for (uint64_t k = 0; k < nb; k++) fold_total(j, &tot[k], &out);
    sh->rec[p].incl = out;
    atomic_store_explicit(&sh->rec[p].state, PIECE_INCL, memory_order_release);
    return c;
}

/* Early totals (j->early): a thread prefetches its next piece twice as fast as it writes, so it
 * is in L2 half way through the current one, and computes and publishes its totals three quarters
 * of the way through, rather than after the whole piece: the threads looking back past that piece
 * (the ones that took the pieces after it) find its totals a quarter piece earlier, instead of
 * waiting for them or computing them again from memory when the piece's thread runs late. The
 * same totals, folded in the same order: the same bits. */
static void scan_thread(void *arg, int tid, int nth)
{
    scan_shared *sh = arg;
    const scan_job *j = sh->j;
    _Alignas(64) char buf[TALLY_SCAN_BLOCK * 8];
    tally_carry *steal = sh->steal + (size_t)tid * (size_t)nth * j->pblocks;
    double *prof = sh->prof ? sh->prof[tid] : NULL, t = prof ? now_ns() : 0, t1, t2;
    if (prof) prof[0] += t - sh->t0;
    uint64_t p = atomic_fetch_add_explicit(&sh->next, 1, memory_order_relaxed);
    int have_tot = 0; /* p's totals computed and published while the previous piece was scanned */
    while (p < j->npieces) {
        tally_carry *tot = sh->tot + p * j->pblocks;
        if (!have_tot) total_piece(j, p, tot);
        if (prof) t1 = now_ns();
        tally_carry c = look_back(sh, p, tot, steal, nth, prof);
        if (prof) t2 = now_ns();
        /* take the next piece now, to prefetch it while writing this one */
        uint64_t pn = atomic_fetch_add_explicit(&sh->next, 1, memory_order_relaxed);
        pf_range pf;
        next_range(j, pn, &pf);
        pf_range *pfp = j->pf && pf.left ? &pf : NULL;
        uint64_t nb = piece_blocks(j, p);
        double te = 0; /* the early totals' time */
        have_tot = 0;
        if (pfp && j->early) {
            uint64_t h = (3 * nb + 3) / 4;
            pf.rate = 2;
            scan_piece(j, p, 0, h, &c, buf, pfp);
            double ta = prof ? now_ns() : 0;
            total_piece(j, pn, sh->tot + pn * j->pblocks);
            atomic_store_explicit(&sh->rec[pn].state, PIECE_TOT, memory_order_release);
            have_tot = 1;
            if (prof) te = now_ns() - ta;
            scan_piece(j, p, h, nb, &c, buf, pfp);
        } else {
            scan_piece(j, p, 0, nb, &c, buf, pfp);
        }
        if (prof) {
            double t3 = now_ns();
            prof[1] += t1 - t + te;
            prof[2] += t2 - t1;
            prof[3] += t3 - t2 - te;
            prof[5] += 1;
            t = t3;
        }
        p = pn;
    }
    if (j->nt) j->st->k->stream_fence();
    if (prof) prof[4] = now_ns();
}

void tally_cpu_set_scan_profile(tally_context *ctx, tally_cpu_scan_prof *prof)
{
    if (ctx && ctx->backend == &tally_cpu_backend) ((tally_cpu_state *)ctx->state)->scan_prof = prof;
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
    if (st->scan_keyed && (op == TALLY_MIN || op == TALLY_MAX) && st->k->ktotal_mm[0][type]) {
        j.kern = st->k->kscan_mm[opts->exclusive != 0][op == TALLY_MAX][type];
        j.total = st->k->ktotal_mm[op == TALLY_MAX][type];
    }
    if (tally_type_is_float(type) && (op == TALLY_MIN || op == TALLY_MAX)) {
        if (st->scan_rtotal) {
            j.fold = type == TALLY_F32 ? (op == TALLY_MIN ? FOLD_MIN_F32 : FOLD_MAX_F32)
                                       : (op == TALLY_MIN ? FOLD_MIN_F64 : FOLD_MAX_F64);
        } else if (!st->scan_keyed && st->k->fktotal_mm[0][type]) { /* the totals before */
            j.total = st->k->fktotal_mm[op == TALLY_MAX][type];
        }
    }
    if (st->scan_fkv && !st->scan_keyed && (op == TALLY_MIN || op == TALLY_MAX) &&
        st->k->fkscanv_mm[0][0][type])
        j.kern = st->k->fkscanv_mm[opts->exclusive != 0][op == TALLY_MAX][type];
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
    j.npieces = (j.nblocks + j.pblocks - 1) / j.pblocks;
    uint64_t tmin = TALLY_SCAN_THREAD_MIN < 2 * st->scan_piece ? TALLY_SCAN_THREAD_MIN : 2 * st->scan_piece;
    uint64_t t = n * j.size / tmin;
    int nth = t < 1 ? 1 : t < (uint64_t)st->threads ? (int)t : st->threads;
    if ((uint64_t)nth > j.npieces) nth = (int)j.npieces;
    j.pf = st->scan_pf && n * j.size >= TALLY_SCAN_STREAM_BYTES;
    j.early = j.pf && st->scan_pf == 2;
    j.assoc = !(tally_type_is_float(type) && (op == TALLY_SUM || op == TALLY_PROD));
    if (!j.assoc) {
        j.fscan = st->k->fscan[op == TALLY_PROD][type];
        j.fold = type == TALLY_F32 ? (op == TALLY_SUM ? FOLD_SUM_F32 : FOLD_PROD_F32)
               : type == TALLY_F64 ? (op == TALLY_SUM ? FOLD_SUM_F64 : FOLD_PROD_F64)
                                   : FOLD_KERNEL;
        if (type == TALLY_F32 && st->k->ftot16[op == TALLY_PROD]) {
            j.totm = st->k->ftot16[op == TALLY_PROD];
            j.totm_blocks = 16;
        } else if (st->k->ftot8[op == TALLY_PROD][type]) {
            j.totm = st->k->ftot8[op == TALLY_PROD][type];
            j.totm_blocks = 8;
        }
    }
    j.excl = opts->exclusive;
    tally_cpu_scan_prof *prof = st->scan_prof;
    double t0 = prof ? now_ns() : 0;
    if (nth == 1) {
        _Alignas(64) char buf[TALLY_SCAN_BLOCK * 8];
        tally_carry c = j.start;
        for (uint64_t b = 0; b < j.nblocks; b++) scan_block(&j, b, &c, buf, NULL);
        if (j.nt) st->k->stream_fence();
        if (prof) {
            prof->calls++;
            prof->thread_calls++;
            prof->pieces += j.npieces;
            prof->scan_ns += now_ns() - t0;
        }
        return TALLY_OK;
    }
    scan_shared sh;
    sh.j = &j;
    atomic_init(&sh.next, 0);
    size_t nrec = (size_t)j.npieces * sizeof(piece_rec);
    size_t ntot = ((size_t)j.npieces + (size_t)nth * (size_t)nth) * j.pblocks * sizeof(tally_carry);
    size_t nprof = prof ? (size_t)nth * sizeof(double[8]) : 0;
    char *mem = calloc(1, nrec + ntot + nprof);
    if (!mem) {
        return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY,
                               "tally_scan: out of memory for %llu piece totals",
                               (unsigned long long)j.npieces);
    }
    sh.rec = (piece_rec *)mem;
    sh.tot = (tally_carry *)(mem + nrec);
    sh.steal = sh.tot + j.npieces * j.pblocks;
    sh.prof = prof ? (double(*)[8])(mem + nrec + ntot) : NULL;
    sh.t0 = t0;
    tally_pool_run(st->pool, nth, scan_thread, &sh);
    if (prof) {
        double t1 = now_ns();
        prof->calls++;
        prof->thread_calls += (uint64_t)nth;
        for (int t = 0; t < nth; t++) {
            prof->wake_ns += sh.prof[t][0];
            prof->totals_ns += sh.prof[t][1];
            prof->lookback_ns += sh.prof[t][2];
            prof->scan_ns += sh.prof[t][3];
            prof->tail_ns += t1 - sh.prof[t][4];
            prof->pieces += (uint64_t)sh.prof[t][5];
            prof->waits += (uint64_t)sh.prof[t][6];
            prof->stolen += (uint64_t)sh.prof[t][7];
        }
    }
    free(mem);
    return TALLY_OK;
}
