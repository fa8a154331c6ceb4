/* The CPU backend: state, reductions (one fused pass over the data, split over the pool's
 * threads; a second pass for the variance) and the backend table. */
#include <float.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/types.h"
#include "cpu/batch.h"
#include "cpu/state.h"

/* ---- state ------------------------------------------------------------------------------- */
/* bytes of a scan piece near want: clamped, whole f64 blocks */
static uint64_t scan_piece_bytes(uint64_t want)
{
    if (want < TALLY_SCAN_PIECE_MIN) want = TALLY_SCAN_PIECE_MIN;
    if (want > TALLY_SCAN_PIECE_MAX) want = TALLY_SCAN_PIECE_MAX;
    return want & ~(uint64_t)(TALLY_SCAN_BLOCK * 8 - 1);
}

void tally_cpu_set_scan_piece(tally_context *ctx, uint64_t bytes)
{
    if (ctx && ctx->backend == &tally_cpu_backend)
        ((tally_cpu_state *)ctx->state)->scan_piece = scan_piece_bytes(bytes);
}

void tally_cpu_set_reduce_chunks(tally_context *ctx, uint64_t bytes, int interleave)
{
    if (ctx && ctx->backend == &tally_cpu_backend) {
        tally_cpu_state *st = ctx->state;
        st->chunk_bytes = bytes;
        st->interleave = interleave != 0;
    }
}

/* TALLY_CPU_TUNE: "name=bytes,..." for pf_dist, pf_bytes (a power of two), pf_min, chunk_min,
 * chunk_max, and the scans' scan_piece (bytes) and scan_pf (0: no prefetch of a thread's next
 * piece; 2: prefetch it early and publish its totals early, scan.c) and scan_keyed (1: float
 * min/max scans through the keyed kernels, the same bits) and scan_rtotal (0: float min/max
 * scans' block totals from order keys, folded by the totals kernel, as before; the same bits)
 * and scan_fkv (1: the fused float min/max scans test each vector for NaN, as before) (see
 * state.h); xpf_dist and
 * xpf_near: the exact kernels' prefetch distances, small_w32w (0: short f32 sums by the older
 * W32 method), small_spec (0: no speculative sum for short ones), spec_fast (0: the large sums'
 * speculative pass by TwoSum, SPEC, instead of SPECF) (process-wide, exact_kernels.h). */
static void tune_from_env(tally_cpu_state *st)
{
    const char *e = getenv("TALLY_CPU_TUNE");
    uint32_t xfar, xnear;
    int xset = 0;
    tally_exact_get_prefetch(&xfar, &xnear);
    while (e && *e) {
        char name[16];
        unsigned long long v;
        int used = 0;
        if (sscanf(e, "%15[a-z_]=%llu%n", name, &v, &used) == 2 && used > 0) {
            if (!strcmp(name, "pf_dist") && v <= (64u << 20)) st->pf_dist = v / 64 * 64;
            else if (!strcmp(name, "pf_bytes") && v >= 64 && v <= (1u << 20) && !(v & (v - 1)))
                st->pf_bytes = v;
            else if (!strcmp(name, "pf_min")) st->pf_min = v;
            else if (!strcmp(name, "chunk_min") && v >= 4096) st->chunk_min = v;
            else if (!strcmp(name, "chunk_max") && v >= 4096) st->chunk_max = v;
            else if (!strcmp(name, "scan_piece")) st->scan_piece = v; /* clamped below */
            else if (!strcmp(name, "scan_pf")) st->scan_pf = v > 2 ? 2 : (int)v;
            else if (!strcmp(name, "scan_keyed")) st->scan_keyed = v != 0;
            else if (!strcmp(name, "scan_rtotal")) st->scan_rtotal = v != 0;
            else if (!strcmp(name, "scan_fkv")) st->scan_fkv = v != 0;
            else if (!strcmp(name, "spec")) st->spec = v != 0;
            else if (!strcmp(name, "xpf_dist") && v <= (1u << 20)) xfar = (uint32_t)v / 64 * 64, xset = 1;
            else if (!strcmp(name, "xpf_near") && v <= (1u << 20)) xnear = (uint32_t)v / 64 * 64, xset = 1;
            else if (!strcmp(name, "small_w32w")) tally_exact_set_small_w32w(v != 0);
            else if (!strcmp(name, "small_spec")) tally_exact_set_small_spec(v != 0);
            else if (!strcmp(name, "spec_fast")) tally_exact_set_spec_fast(v != 0);
        }
        e = strchr(e, ',');
        if (e) e++;
    }
    if (st->chunk_max < st->chunk_min) st->chunk_max = st->chunk_min;
    if (xset) tally_exact_set_prefetch(xfar, xnear);
}

tally_status tally_cpu_state_create(tally_context *ctx, int threads, tally_isa isa,
                                    tally_cpu_state **out)
{
    *out = NULL;
    if (threads < 1) threads = 1;
    tally_cpu_state *st = calloc(1, sizeof *st);
    if (!st) return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "cpu backend: out of memory");
    st->threads = threads;
    st->isa = isa;
    st->k = tally_cpu_kernels_for(isa);
    st->ek = tally_exact_kernels_for(isa);
    st->pf_dist = TALLY_CPU_PF_DIST;
    st->pf_bytes = TALLY_CPU_PF_BYTES;
    st->pf_min = TALLY_CPU_PF_MIN_BYTES;
    st->chunk_min = TALLY_CPU_CHUNK_MIN;
    st->chunk_max = TALLY_CPU_CHUNK_MAX;
    st->scan_pf = 1;
    st->scan_rtotal = 1;
    const char *spec = getenv("TALLY_CPU_SPEC");
    st->spec = !(spec && !strcmp(spec, "0"));
    tune_from_env(st);
    st->parts = aligned_alloc(64, TALLY_CPU_PART_STRIDE * (size_t)threads);
    st->sq = aligned_alloc(64, ((sizeof(tally_exact) * (size_t)threads + 63) / 64) * 64);
    st->spec_d = calloc((size_t)threads, sizeof(double));
    long l2 = 0;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    /* scan pieces: a quarter of L2, so that a piece read for its totals is still there when it
     * is scanned (and the next one can stream in meanwhile) */
    uint64_t piece = (l2 > 0 ? (uint64_t)l2 : 1u << 20) / 4;
#ifdef TALLY_TUNING
    const char *env = getenv("TALLY_CPU_SCAN_PIECE"); /* docs/tuning.md */
    if (env && *env) piece = strtoull(env, NULL, 10);
#endif
    if (st->scan_piece) piece = st->scan_piece; /* TALLY_CPU_TUNE's scan_piece */
    st->scan_piece = scan_piece_bytes(piece);
    if (!st->parts || !st->sq || !st->spec_d) {
        tally_cpu_state_destroy(st);
        return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "cpu backend: out of memory");
    }
    tally_status s = tally_pool_create(threads, &st->pool);
    if (s != TALLY_OK) {
        tally_cpu_state_destroy(st);
        return tally_set_error(ctx, s, "cpu backend: could not start %d threads", threads);
    }
    *out = st;
    return TALLY_OK;
}

void tally_cpu_state_destroy(tally_cpu_state *st)
{
    if (!st) return;
    tally_pool_destroy(st->pool);
    free(st->parts);
    free(st->sq);
    free(st->spec_d);
    free(st);
}

/* Threads for a piece of work of this many bytes: each gets at least SMALL_BYTES. */
static int threads_for(const tally_cpu_state *st, uint64_t bytes)
{
    uint64_t t = bytes / TALLY_CPU_SMALL_BYTES;
    if (t < 1) t = 1;
    return t < (uint64_t)st->threads ? (int)t : st->threads;
}

/* Bytes per chunk of a threaded pass over this many bytes: about 8 chunks per thread, between
 * TALLY_CPU_CHUNK_MIN and _MAX, but at least one per thread (mid sizes, from L2 or L3, still
 * use every thread). */
static uint64_t chunk_bytes(const tally_cpu_state *st, uint64_t bytes, int nth)
{
    if (st->chunk_bytes) return st->chunk_bytes; /* tests */
    uint64_t c = bytes / ((uint64_t)nth * 8);
    if (c < st->chunk_min) c = st->chunk_min;
    if (c > st->chunk_max) c = st->chunk_max;
    if (c > bytes / (uint64_t)nth) c = bytes / (uint64_t)nth;
    return c;
}

/* Elements per chunk for a pass over n elements of `size` bytes on nth threads: chunk_bytes
 * rounded to whole cache lines of elements (64 at least). */
static uint64_t chunk_elems(const tally_cpu_state *st, uint64_t n, uint64_t size, int nth)
{
    uint64_t c = (chunk_bytes(st, n * size, nth) / size + 63) / 64 * 64;
    return c < 64 ? 64 : c;
}

/* ---- the fused pass over one piece ------------------------------------------------------- */
/* Adds x[0..n-1] (global indices gbase..) into p: every need except the float product. */
static void piece(const tally_cpu_state *st, tally_partial *p, const char *x, uint64_t n,
                  uint64_t gbase)
{
    const tally_cpu_kernels *k = st->k;
    const tally_type t = p->type;
    const uint32_t need = p->need;
    const size_t size = tally_type_table[t].size;
    const int fl = tally_type_is_float(t);
    /* A float sum (or mean) with min, max and/or the NaN count: one pass, the extremes and NaNs
     * come out of the exact sum's loop (exact_kernels.h). Argmin/argmax take the min/max kernels
     * below. */
    const int fused = fl && (need & TALLY_NEED_SUM) &&
                      (need & (TALLY_NEED_MIN | TALLY_NEED_MAX | TALLY_NEED_NANS)) &&
                      !(need & (TALLY_NEED_ARGMIN | TALLY_NEED_ARGMAX | TALLY_NEED_FIRSTNAN));
    if (fused) {
        tally_xminmax mm;
        tally_xminmax_init(&mm);
        if (t == TALLY_F32) st->ek->sum_minmax_f32((const float *)x, n, p->omit_nan, &p->fsum, &mm);
        else st->ek->sum_minmax_f64((const double *)x, n, p->omit_nan, &p->fsum, &mm);
        if (mm.min <= mm.max) { /* some non-NaN element */
            int had = p->n > p->nans;
            uint64_t kmin = tally_key_from_f64(mm.min), kmax = tally_key_from_f64(mm.max);
            if ((need & TALLY_NEED_MIN) && (!had || kmin < p->kmin)) p->kmin = kmin;
            if ((need & TALLY_NEED_MAX) && (!had || kmax > p->kmax)) p->kmax = kmax;
        }
        p->nans += mm.nans;
    } else if (need & TALLY_NEED_SUM) {
        if (t == TALLY_F32) st->ek->sum_f32((const float *)x, n, p->omit_nan, &p->fsum);
        else if (t == TALLY_F64) st->ek->sum_f64((const double *)x, n, p->omit_nan, &p->fsum);
        else k->isum[t](x, n, tally_type_is_signed_int(t) ? (void *)&p->isum : (void *)&p->usum);
    }
    if (need & TALLY_NEED_SQ) {
        if (t == TALLY_F32) st->ek->sqdev_f32((const float *)x, n, 0.0, p->omit_nan, &p->fsq);
        else if (t == TALLY_F64) st->ek->sqdev_f64((const double *)x, n, 0.0, p->omit_nan, &p->fsq);
        else {
            double buf[512];
            for (uint64_t i = 0; i < n; i += 512) {
                uint64_t m = n - i < 512 ? n - i : 512;
                k->to_f64[t](x + i * size, m, buf);
                st->ek->sqdev_f64(buf, m, 0.0, 0, &p->fsq);
            }
        }
    }
    if (!fused && (need & (TALLY_NEED_MIN | TALLY_NEED_MAX | TALLY_NEED_NANS))) {
        tally_minmax mm = {UINT64_MAX, 0, 0};
        k->minmax[t](x, n, &mm);
        int had = p->n > p->nans;
        if (mm.nans < n) {
            if ((need & (TALLY_NEED_MIN | TALLY_NEED_ARGMIN)) && (!had || mm.kmin < p->kmin)) {
                p->kmin = mm.kmin;
                if (need & TALLY_NEED_ARGMIN) p->imin = gbase + k->find_key[t](x, n, mm.kmin);
            }
            if ((need & (TALLY_NEED_MAX | TALLY_NEED_ARGMAX)) && (!had || mm.kmax > p->kmax)) {
                p->kmax = mm.kmax;
                if (need & TALLY_NEED_ARGMAX) p->imax = gbase + k->find_key[t](x, n, mm.kmax);
            }
        }
        if (fl && (need & TALLY_NEED_FIRSTNAN) && mm.nans && p->first_nan == TALLY_NO_INDEX)
            p->first_nan = gbase + k->find_nan[t](x, n);
        p->nans += mm.nans;
    }
    if (need & TALLY_NEED_BITS) {
        uint64_t bytes = n * size, words = bytes / 8, rem = bytes % 8;
        uint64_t acc[3] = {p->band, p->bor, p->bxor};
        k->bits(x, words, acc);
        if (rem) {
            uint64_t wa = ~(uint64_t)0, wo = 0; /* identity bytes pad the last word */
            memcpy(&wa, x + words * 8, rem);
            memcpy(&wo, x + words * 8, rem);
            acc[0] &= wa;
            acc[1] |= wo;
            acc[2] ^= wo;
        }
        p->band = acc[0];
        p->bor = acc[1];
        p->bxor = acc[2];
    }
    if ((need & TALLY_NEED_PROD) && !fl) {
        tally_iprod_acc a = {p->iprod, p->uprod, p->prod_zero, p->prod_ovf};
        k->iprod[t](x, n, &a);
        p->iprod = a.s;
        p->uprod = a.u;
        p->prod_zero = a.zero;
        p->prod_ovf = a.ovf;
    }
    p->n += n;
}

/* ---- the threaded pass -------------------------------------------------------------------- */
/* Work is handed out in chunks of whole blocks (TALLY_PROD_BLOCK elements) from a shared
 * counter, as a read loop's threads take their slices: a core that gets less of the memory
 * bus than the others, or starts late, takes fewer chunks instead of holding the rest up. A
 * thread's chunks come in increasing order, so its own partial is that of the concatenation of
 * its chunks; the partials of different threads interleave and are merged by merge_unordered. */
typedef struct acc_job {
    const tally_cpu_state *st;
    const char *x;
    uint64_t n, base;   /* elements; global index of x[0] */
    uint64_t head;      /* elements before the first float-product block boundary */
    uint64_t nblocks;   /* blocks of TALLY_PROD_BLOCK after head (the last may be partial) */
    uint64_t nfull;     /* full blocks (float products are taken of these) */
    uint64_t cblk;      /* blocks per chunk */
    uint64_t nchunks;
    uint64_t gblk;      /* blocks per call of piece() */
    int pf;             /* software prefetch ahead of the kernels (see TALLY_CPU_PF_BYTES) */
    double *bprod;      /* [nfull] or NULL */
    tally_partial *acc; /* single-threaded: straight into the caller's partial */
    const tally_partial *proto;
    int interleave;     /* tests: fixed round robin (tally_cpu_set_reduce_chunks) */
    _Alignas(64) _Atomic uint64_t next; /* the next chunk to take */
} acc_job;

/* The chunk a thread works on after the k it has taken (in increasing order, as the partial of a
 * thread must be that of its chunks in index order). */
static uint64_t take_chunk(acc_job *j, int tid, int nth, uint64_t k)
{
    if (nth == 1) return k;
    if (j->interleave) return (uint64_t)tid + k * (uint64_t)nth;
    return atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
}

/* The elements of chunk c: [*lo, *hi) (relative to x) */
static void chunk_range(const acc_job *j, uint64_t c, uint64_t *lo, uint64_t *hi)
{
    uint64_t b = c * j->cblk, be = b + j->cblk < j->nblocks ? b + j->cblk : j->nblocks;
    *lo = j->head + b * TALLY_PROD_BLOCK;
    *hi = j->head + be * TALLY_PROD_BLOCK;
    if (*hi > j->n) *hi = j->n;
}

/* Adds chunk [lo, hi) into p, in calls of gblk blocks; with pf, in sub-pieces of
 * TALLY_CPU_PF_BYTES each preceded by prefetches of the bytes TALLY_CPU_PF_DIST ahead, which
 * run on into [nlo, nhi) (the thread's next chunk) near the end. */
static void acc_chunk(const acc_job *j, tally_partial *p, uint64_t lo, uint64_t hi, uint64_t nlo,
                      uint64_t nhi)
{
    const tally_cpu_state *st = j->st;
    const size_t size = tally_type_size(p->type);
    const uint64_t step = j->gblk * TALLY_PROD_BLOCK;
    for (uint64_t e = lo; e < hi;) {
        uint64_t ee = hi - e > step ? e + step : hi; /* e stays on a block boundary */
        if (!j->pf) {
            piece(st, p, j->x + e * size, ee - e, j->base + e);
        } else {
            const uint64_t sub = st->pf_bytes / size;
            for (uint64_t s = e; s < ee; s += sub) {
                uint64_t se = s + sub < ee ? s + sub : ee;
                /* the bytes PF_DIST ahead, in this chunk or the next one */
                uint64_t a = s * size + st->pf_dist, len = st->pf_bytes;
                const char *q = NULL;
                if (a < hi * size) q = j->x + a;
                else if (nhi > nlo && a - hi * size < (nhi - nlo) * size)
                    q = j->x + nlo * size + (a - hi * size);
                if (q)
                    for (uint64_t o = 0; o < len; o += 64) __builtin_prefetch(q + o, 0, 2);
                piece(st, p, j->x + s * size, se - s, j->base + s);
            }
        }
        if (j->bprod) {
            uint64_t b0 = (e - j->head) / TALLY_PROD_BLOCK, b1 = (ee - j->head + TALLY_PROD_BLOCK - 1) / TALLY_PROD_BLOCK;
            for (uint64_t bb = b0; bb < b1 && bb < j->nfull; bb++)
                j->bprod[bb] = st->k->fprod_block[p->type](
                    j->x + (j->head + bb * TALLY_PROD_BLOCK) * size, TALLY_PROD_BLOCK,
                    p->omit_nan);
        }
        e = ee;
    }
}

static void acc_thread(void *arg, int tid, int nth)
{
    acc_job *j = arg;
    const tally_cpu_state *st = j->st;
    tally_partial *p = nth == 1 ? j->acc : tally_cpu_part(st, tid);
    if (nth > 1) {
        tally_partial_init(p, j->proto->type, j->proto->need, j->proto->omit_nan);
        p->n = 0;
    }
    if (tid == 0 && j->head) piece(st, p, j->x, j->head, j->base);
    /* The next chunk is taken before this one is read, so that its first bytes can be
     * prefetched near the end of this one. */
    uint64_t k = 0, c = take_chunk(j, tid, nth, k++);
    uint64_t cn = c < j->nchunks ? take_chunk(j, tid, nth, k++) : j->nchunks;
    while (c < j->nchunks) {
        uint64_t lo, hi, nlo = 0, nhi = 0;
        chunk_range(j, c, &lo, &hi);
        if (cn < j->nchunks) chunk_range(j, cn, &nlo, &nhi);
        acc_chunk(j, p, lo, hi, nlo, nhi);
        c = cn;
        if (c < j->nchunks) cn = take_chunk(j, tid, nth, k++);
    }
}

/* dst := dst merged with src, where src's elements may come before, between or after dst's
 * (the threads' chunks interleave): what depends on order takes the lowest global index (the
 * first minimum, maximum, NaN). Everything else merges the same in any order: the sums are exact
 * (128-bit integers, superaccumulators), the integer product's zero and overflow flags are ORs
 * and its capped magnitude only grows, and/or/xor and the counts commute; float products are not
 * merged here (their block products are stored by block index). tests/core/test_chunks.c
 * breaks any order dependence on purpose (tally_cpu_set_reduce_chunks). */
static void merge_unordered(tally_partial *dst, const tally_partial *src)
{
    const int dval = dst->n > dst->nans, sval = src->n > src->nans;
    const uint64_t kmin = dst->kmin, kmax = dst->kmax, imin = dst->imin, imax = dst->imax;
    const uint64_t fnan = dst->first_nan;
    tally_partial_merge(dst, src);
    if (dval && sval && src->kmin == kmin && src->imin < imin) dst->imin = src->imin;
    if (dval && sval && src->kmax == kmax && src->imax < imax) dst->imax = src->imax;
    if (fnan != TALLY_NO_INDEX && src->first_nan < fnan) dst->first_nan = src->first_nan;
}

tally_status tally_cpu_accumulate(tally_context *ctx, tally_cpu_state *st, const void *data,
                                  uint64_t n, uint64_t base, tally_partial *acc)
{
    if (n == 0) return TALLY_OK;
    const tally_type t = acc->type;
    const size_t size = tally_type_table[t].size;
    const int fprod = (acc->need & TALLY_NEED_PROD) && tally_type_is_float(t);
    if (!fprod && n * size < TALLY_CPU_SMALL_BYTES) { /* the small-input path: one piece, here */
        piece(st, acc, data, n, base);
        return TALLY_OK;
    }
    acc_job job, *j = &job;
    memset(j, 0, sizeof *j);
    j->st = st;
    j->x = data;
    j->n = n;
    j->base = base;
    j->acc = acc;
    j->proto = acc;
    if (fprod) {
        /* Close the open block first (streams), then whole blocks in parallel. */
        uint64_t open = acc->lane_pos ? TALLY_PROD_BLOCK - acc->lane_pos : 0;
        j->head = open < n ? open : n;
        tally_partial_prod_feed(acc, data, j->head);
        j->nfull = (n - j->head) / TALLY_PROD_BLOCK;
    }
    j->nblocks = (n - j->head + TALLY_PROD_BLOCK - 1) / TALLY_PROD_BLOCK;
    /* blocks per call of piece() (sizes are powers of two). A float sum whose piece is read by
     * one exact kernel (fused extremes / NaN count included) takes calls 16x larger: nothing
     * rereads them, each call has a fixed cost (exact_kernels.h), and the exact kernels
     * prefetch for themselves. */
    const int exact_only =
        tally_type_is_float(t) &&
        !(acc->need & ~(uint32_t)(TALLY_NEED_SUM | TALLY_NEED_MIN | TALLY_NEED_MAX | TALLY_NEED_NANS)) &&
        (acc->need & TALLY_NEED_SUM);
    j->gblk = (TALLY_CPU_PIECE_BYTES / TALLY_PROD_BLOCK) >> __builtin_ctzll(size);
    if (exact_only) j->gblk *= 16;
    if (j->gblk < 1) j->gblk = 1;
    j->pf = !exact_only && st->pf_dist && n * size >= st->pf_min;
    double bstack[64];
    if (fprod && j->nfull) {
        j->bprod = j->nfull <= 64 ? bstack : malloc(j->nfull * sizeof(double));
        if (!j->bprod)
            return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY,
                                   "cpu backend: out of memory for %llu block products",
                                   (unsigned long long)j->nfull);
    }
    int nth = threads_for(st, n * size);
    if ((uint64_t)nth > j->nblocks) nth = j->nblocks ? (int)j->nblocks : 1;
    j->cblk = chunk_bytes(st, n * size, nth) / (TALLY_PROD_BLOCK * size);
    if (j->cblk < 1) j->cblk = 1;
    if (nth == 1) j->cblk = j->nblocks ? j->nblocks : 1;
    j->nchunks = (j->nblocks + j->cblk - 1) / j->cblk;
    atomic_init(&j->next, 0);
    if (nth == 1) {
        acc_thread(j, 0, 1);
    } else {
        j->interleave = st->interleave;
        tally_pool_run(st->pool, nth, acc_thread, j);
        for (int i = 0; i < nth; i++)
            merge_unordered(acc, tally_cpu_part(st, j->interleave ? nth - 1 - i : i));
    }
    if (fprod) {
        for (uint64_t b = 0; b < j->nfull; b++) tally_partial_prod_block(acc, j->bprod[b]);
        uint64_t done = j->head + j->nfull * TALLY_PROD_BLOCK;
        tally_partial_prod_feed(acc, (const char *)data + done * size, n - done);
        if (j->bprod != bstack) free(j->bprod);
    }
    return TALLY_OK;
}

/* ---- variance: the second pass ------------------------------------------------------------ */
/* Chunks from a counter, as in the first pass; the threads' exact sums merge in any order. */
typedef struct sq_job {
    const tally_cpu_state *st;
    tally_type type;
    const char *x;
    uint64_t n;
    double mean;
    int omit_nan;
    uint64_t chunk;   /* elements per chunk */
    uint64_t nchunks;
    _Alignas(64) _Atomic uint64_t next; /* the next chunk to take */
} sq_job;

static void sq_thread(void *arg, int tid, int nth)
{
    sq_job *j = arg;
    const tally_cpu_state *st = j->st;
    size_t size = tally_type_size(j->type);
    tally_exact *e = &st->sq[tid];
    tally_exact_init(e);
    uint64_t c = nth == 1 ? 0 : atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
    while (c < j->nchunks) {
        uint64_t lo = c * j->chunk, n = j->n - lo < j->chunk ? j->n - lo : j->chunk;
        const char *x = j->x + lo * size;
        if (j->type == TALLY_F32) st->ek->sqdev_f32((const float *)x, n, j->mean, j->omit_nan, e);
        else if (j->type == TALLY_F64) st->ek->sqdev_f64((const double *)x, n, j->mean, j->omit_nan, e);
        else {
            double buf[512];
            for (uint64_t i = 0; i < n; i += 512) {
                uint64_t m = n - i < 512 ? n - i : 512;
                st->k->to_f64[j->type](x + i * size, m, buf);
                st->ek->sqdev_f64(buf, m, j->mean, 0, e);
            }
        }
        c = nth == 1 ? c + 1 : atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
    }
}

void tally_cpu_sqdev(tally_cpu_state *st, tally_type type, const void *data, uint64_t n,
                     double mean, int omit_nan, tally_exact *out)
{
    tally_exact_init(out);
    if (n == 0) return;
    const uint64_t size = tally_type_size(type);
    sq_job job, *j = &job;
    memset(j, 0, sizeof *j);
    j->st = st;
    j->type = type;
    j->x = data;
    j->n = n;
    j->mean = mean;
    j->omit_nan = omit_nan;
    int nth = threads_for(st, n * size);
    j->chunk = chunk_elems(st, n, size, nth);
    if (nth == 1) j->chunk = n;
    j->nchunks = (n + j->chunk - 1) / j->chunk;
    atomic_init(&j->next, 0);
    if (nth == 1) sq_thread(j, 0, 1);
    else tally_pool_run(st->pool, nth, sq_thread, j);
    *out = st->sq[0];
    for (int i = 1; i < nth; i++) tally_exact_merge(out, &st->sq[i]);
}

/* ---- the speculative sum -------------------------------------------------------------------- */
/* One float sum of a large array: first the speculative compensated sum (core/exact_sum.h,
 * "Speculative compensated sums"; the kernels: SPEC in exact_impl.h), one pass split over the
 * threads as the exact pass is. Each thread's kernel calls add their lanes' s and c exactly into
 * the thread's tally_exact and their D into its spec_d; the threads' accumulators merge exactly
 * (integer adds: any order), their D add up (more adds of D's chain, covered by the bound), and
 * tally_exact_round_within(V, tally_exact_spec_bound(D)) answers only when the bound decides the
 * rounding, i.e. with the exact sum rounded once: the exact path's bits. Else (an inf / NaN, an
 * overflow, a sum within E of a rounding boundary, a result of 0 or +-inf) it declines and the
 * caller runs the exact path: a decline costs this one pass. */
static _Atomic uint64_t spec_answered, spec_declined;

void tally_cpu_spec_counts(uint64_t out[2], int reset)
{
    out[0] = reset ? atomic_exchange(&spec_answered, 0) : atomic_load(&spec_answered);
    out[1] = reset ? atomic_exchange(&spec_declined, 0) : atomic_load(&spec_declined);
}

typedef struct spec_job {
    const tally_cpu_state *st;
    tally_type type;
    const char *x;
    uint64_t n;
    uint64_t chunk;   /* elements per chunk */
    uint64_t nchunks;
    _Alignas(64) _Atomic uint64_t next; /* the next chunk to take */
    _Alignas(64) _Atomic int doomed;    /* some thread saw a NaN / inf: the pass will decline */
} spec_job;

/* The k-th chunk of thread tid: from the counter, or round robin (tests: see
 * tally_cpu_set_reduce_chunks) */
static uint64_t spec_take(spec_job *j, int tid, int nth, uint64_t k)
{
    if (nth == 1) return k;
    if (j->st->interleave) return (uint64_t)tid + k * (uint64_t)nth;
    return atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
}

static void spec_thread(void *arg, int tid, int nth)
{
    spec_job *j = arg;
    const tally_cpu_state *st = j->st;
    const size_t size = tally_type_size(j->type);
    tally_exact *e = &st->sq[tid];
    double D = 0.0;
    tally_exact_init(e);
    uint64_t k = 0, c = spec_take(j, tid, nth, k++);
    while (c < j->nchunks) {
        uint64_t lo = c * j->chunk, n = j->n - lo < j->chunk ? j->n - lo : j->chunk;
        const char *x = j->x + lo * size;
        if (j->type == TALLY_F32) st->ek->spec_sum_f32((const float *)x, n, e, &D);
        else st->ek->spec_sum_f64((const double *)x, n, e, &D);
        /* A NaN or inf (an input, or an overflow) in a lane's s, c or D stays there: the pass
         * is bound to decline, so every thread stops at its next chunk and a decline on such
         * data costs about a chunk per thread, not a pass. */
        if ((e->flags & (TALLY_EXACT_F_NAN | TALLY_EXACT_F_PINF | TALLY_EXACT_F_NINF)) || !(D <= DBL_MAX))
            atomic_store_explicit(&j->doomed, 1, memory_order_relaxed);
        if (atomic_load_explicit(&j->doomed, memory_order_relaxed)) {
            e->flags |= TALLY_EXACT_F_NAN; /* declines */
            break;
        }
        c = spec_take(j, tid, nth, k++);
    }
    st->spec_d[tid] = D;
}

/* Whether f32 data look like W32's (exact_impl.h): the nonzero ones among the first 64 span at
 * most 26 bits from the lowest set bit to the highest, all finite. Such sums skip the speculative
 * pass: the exact kernels add them by W32 at ~0.1 ns per element and core, below the pass's
 * ~0.25 (docs/performance.md). A guess from a sample only picks the faster path: both give the
 * same bits. */
static int looks_w32(const float *x, uint64_t n)
{
    int lo = INT32_MAX, hi = INT32_MIN;
    for (uint64_t i = 0; i < n && i < 64; i++) {
        uint32_t b;
        memcpy(&b, &x[i], 4);
        const int e = (int)((b >> 23) & 0xff);
        uint32_t m = b & 0x7fffff;
        if (e == 0xff) return 0;
        if (e) m |= 0x800000;
        if (!m) continue;
        const int base = (e ? e : 1) - 150; /* |x| = m * 2^base */
        const int l = base + __builtin_ctz(m), h = base + 31 - __builtin_clz(m);
        if (l < lo) lo = l;
        if (h > hi) hi = h;
    }
    return hi >= lo && hi - lo <= 26;
}

/* 1 with the correctly rounded sum of the n f32 / f64 elements in *out, or 0 (declined). */
static int spec_sum(tally_cpu_state *st, tally_type type, const void *data, uint64_t n, double *out)
{
    const uint64_t size = tally_type_size(type);
    spec_job job, *j = &job;
    memset(j, 0, sizeof *j);
    j->st = st;
    j->type = type;
    j->x = data;
    j->n = n;
    int nth = threads_for(st, n * size);
    j->chunk = chunk_elems(st, n, size, nth);
    j->nchunks = (n + j->chunk - 1) / j->chunk;
    atomic_init(&j->next, 0);
    atomic_init(&j->doomed, 0);
    if (nth == 1) spec_thread(j, 0, 1);
    else tally_pool_run(st->pool, nth, spec_thread, j);
    tally_exact V = st->sq[0];
    double D = st->spec_d[0];
    for (int i = 1; i < nth; i++) {
        tally_exact_merge(&V, &st->sq[i]);
        D += st->spec_d[i];
    }
    const int ok = tally_exact_round_within(&V, tally_exact_spec_bound(D), out);
    atomic_fetch_add_explicit(ok ? &spec_answered : &spec_declined, 1, memory_order_relaxed);
    return ok;
}

/* ---- the backend entry points --------------------------------------------------------------- */
static int cpu_available(void) { return 1; }

static tally_status cpu_init(tally_context *ctx, const tally_options *opts, void **state)
{
    return tally_cpu_state_create(ctx, opts->threads, opts->isa, (tally_cpu_state **)state);
}

static void cpu_fini(void *state) { tally_cpu_state_destroy(state); }

static tally_status cpu_accumulate(tally_context *ctx, void *state, const void *data, uint64_t n,
                                   uint64_t base, struct tally_partial *acc)
{
    return tally_cpu_accumulate(ctx, state, data, n, base, acc);
}

static tally_status cpu_sqdev(tally_context *ctx, void *state, tally_type type, const void *data,
                              uint64_t n, double mean, int omit_nan, tally_exact *out)
{
    (void)ctx;
    tally_cpu_sqdev(state, type, data, n, mean, omit_nan, out);
    return TALLY_OK;
}

static tally_status cpu_reduce(tally_context *ctx, void *state, tally_type type, const void *data,
                               uint64_t n, const tally_op *ops, size_t nops,
                               const tally_reduce_options *opts, tally_result *results)
{
    tally_cpu_state *st = state;
    /* One float sum of a short array: the one-pass path (SMALL in exact_impl.h) when it can
     * vouch for its result, without the partial's setup and the superaccumulator's rounding.
     * Its result is the correctly rounded sum, as the general path's: the same bits. */
    if (nops == 1 && ops[0] == TALLY_SUM && n > 0 && n * tally_type_table[type].size <= TALLY_CPU_SMALL_BYTES) {
        double v;
        int ok = 0;
        if (type == TALLY_F32 && st->ek->small_sum_f32) ok = st->ek->small_sum_f32(data, n, &v);
        else if (type == TALLY_F64 && st->ek->small_sum_f64) ok = st->ek->small_sum_f64(data, n, &v);
        if (ok) {
            results[0].op = TALLY_SUM;
            results[0].type = TALLY_F64;
            results[0].status = TALLY_OK;
            results[0].index = 0;
            results[0].value.f64 = v;
            return TALLY_OK;
        }
    }
    /* A large one: the speculative sum first (above), the exact path if it declines (f32 data
     * that look like W32's go straight to the exact path, which is faster on them). With
     * omit_nan too: a NaN makes it decline. n < 2^40 keeps D's chains within the bound's k. */
    if (st->spec && nops == 1 && ops[0] == TALLY_SUM && (type == TALLY_F32 || type == TALLY_F64) &&
        n * tally_type_table[type].size > TALLY_CPU_SMALL_BYTES && n < ((uint64_t)1 << 40) &&
        !(type == TALLY_F32 && looks_w32(data, n))) {
        double v;
        if (spec_sum(st, type, data, n, &v)) {
            results[0].op = TALLY_SUM;
            results[0].type = TALLY_F64;
            results[0].status = TALLY_OK;
            results[0].index = 0;
            results[0].value.f64 = v;
            return TALLY_OK;
        }
    }
    tally_partial p;
    tally_partial_init(&p, type, tally_ops_need(type, ops, nops, opts->omit_nan), opts->omit_nan);
    tally_status s = tally_cpu_accumulate(ctx, st, data, n, 0, &p);
    if (s != TALLY_OK) return s;
    int want_var = 0;
    for (size_t i = 0; i < nops; i++) want_var |= ops[i] == TALLY_VAR;
    tally_exact sq;
    const tally_exact *sqp = NULL;
    if (want_var) {
        tally_status ms;
        double mean = tally_partial_mean(&p, &ms);
        uint64_t cnt = opts->omit_nan ? p.n - p.nans : p.n;
        if (ms == TALLY_OK && cnt > (uint64_t)opts->ddof) {
            tally_cpu_sqdev(st, type, data, n, mean, opts->omit_nan, &sq);
            sqp = &sq;
        }
    }
    for (size_t i = 0; i < nops; i++)
        tally_partial_result(&p, ops[i], opts->ddof, sqp, &results[i]);
    return TALLY_OK;
}

const tally_backend tally_cpu_backend = {
    .kind = TALLY_BACKEND_CPU,
    .name = "cpu",
    .available = cpu_available,
    .init = cpu_init,
    .fini = cpu_fini,
    .reduce = cpu_reduce,
    .scan = tally_cpu_scan,
    .describe = NULL,
    .reduce_segments = tally_cpu_reduce_segments,
    .accumulate = cpu_accumulate,
    .sqdev = cpu_sqdev,
};
