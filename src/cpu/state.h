/* The CPU backend's per-context state (shared by reduce.c and scan.c). */
#ifndef TALLY_CPU_STATE_H
#define TALLY_CPU_STATE_H

#include "core/backend.h"
#include "core/partial.h"
#include "cpu/cpu.h"
#include "cpu/exact_kernels.h"
#include "cpu/kernels.h"
#include "cpu/pool.h"

/* Inputs smaller than this run on the calling thread alone (no pool wake-up); larger ones give
 * each thread at least this much. */
#define TALLY_CPU_SMALL_BYTES (64u * 1024u)
/* Each thread works through its range in pieces of this size, so that the fused kernels of
 * one piece read it from L2 after its first read from memory. */
#define TALLY_CPU_PIECE_BYTES (64u * 1024u)
/* The threaded reductions hand the threads chunks of TALLY_CPU_CHUNK_MIN .. _MAX bytes from a
 * counter (reduce.c). From TALLY_CPU_PF_MIN_BYTES of input they read a chunk in sub-pieces of
 * TALLY_CPU_PF_BYTES, each preceded by software prefetches (into L2) of the bytes
 * TALLY_CPU_PF_DIST ahead: a core that does a few vector ops per cache line between its loads
 * otherwise keeps too few lines in flight for its share of a many-core memory bus
 * (docs/performance.md, "CPU: reductions on many cores"). */
#define TALLY_CPU_PF_MIN_BYTES (2u * 1024u * 1024u)
#define TALLY_CPU_PF_BYTES 1024u
#define TALLY_CPU_PF_DIST (16u * 1024u)
#define TALLY_CPU_CHUNK_MIN (256u * 1024u)
#define TALLY_CPU_CHUNK_MAX (1024u * 1024u)
/* Scans: the data is cut into pieces, taken round robin by the threads; a thread reads its
 * piece once from memory for the block totals and again from L2 for the scan, so memory sees one
 * read and one write, as from a copy. Pieces are whole f64 blocks (8 x 4096 x 8 bytes). */
#define TALLY_SCAN_PIECE_MIN (256u * 1024u / 8u)
#define TALLY_SCAN_PIECE_MAX (4u * 1024u * 1024u)
/* the least work per thread */
#define TALLY_SCAN_THREAD_MIN (256u * 1024u)
/* Scans whose output is at least this big write it with non-temporal stores. */
#define TALLY_SCAN_STREAM_BYTES (8u * 1024u * 1024u)

struct tally_cpu_state {
    int threads;
    tally_isa isa;
    const tally_cpu_kernels *k;
    const tally_exact_kernels *ek;
    tally_pool *pool;
    tally_partial *parts;   /* one per thread, TALLY_CPU_PART_STRIDE bytes apart */
    tally_exact *sq;        /* one per thread (variance pass) */
    uint64_t scan_piece;    /* scans: bytes per piece */
    struct tally_cpu_scan_prof *scan_prof; /* scans: where the time goes (cpu.h), or NULL */
    int scan_pf;            /* scans: prefetch a thread's next piece while writing (1), and its
                               totals early (2; scan.c), or not (0) (TALLY_CPU_TUNE) */
    int scan_keyed;         /* scans: float min/max through the keyed kernels (kernels.h kscan_mm;
                               TALLY_CPU_TUNE scan_keyed=1, to compare them with the fused ones) */
    int scan_rtotal;        /* scans: float min/max block totals from the raw bits and folded
                               directly (1, default), or from order keys and folded by the totals
                               kernel as before (0: TALLY_CPU_TUNE scan_rtotal=0, the same bits) */
    int scan_fkv;           /* scans: the fused float min/max kernels test each vector for NaN
                               (1: TALLY_CPU_TUNE scan_fkv=1, as before), or once a call where the
                               output is not the input (0, default); the same bits */
    uint64_t chunk_bytes;   /* reductions: bytes per chunk, 0: by size (tests only) */
    int interleave;         /* reductions: fixed round robin, merged last thread first (tests) */
    /* Reductions' memory knobs: the TALLY_CPU_* defaults above, unless TALLY_CPU_TUNE (read once
     * per context, for measuring on a new machine; a bad entry is ignored) sets them, e.g.
     * TALLY_CPU_TUNE="pf_dist=0,chunk_min=1048576,chunk_max=4194304" (pf_dist=0: no software
     * prefetch; pf_bytes: the sub-piece, i.e. the prefetches issued at once). Any value gives the
     * same result bits: only the chunking and prefetching change. */
    uint64_t pf_dist, pf_bytes, pf_min, chunk_min, chunk_max;
    /* One-shot f32/f64 sums above TALLY_CPU_SMALL_BYTES try the speculative compensated sum
     * first (reduce.c, spec_sum): 1 (default), or 0 (TALLY_CPU_SPEC=0 or TALLY_CPU_TUNE spec=0:
     * the exact path alone, for before/after measurements; the same result bits either way). */
    int spec;
    double *spec_d; /* one per thread: the speculative pass's D */
};

/* The partials of the threads lie in separate cache lines. */
#define TALLY_CPU_PART_STRIDE (((sizeof(tally_partial) + 63) / 64) * 64)
static inline tally_partial *tally_cpu_part(const tally_cpu_state *st, int tid)
{
    return (tally_partial *)((char *)st->parts + (size_t)tid * TALLY_CPU_PART_STRIDE);
}

tally_status tally_cpu_scan(tally_context *ctx, void *state, tally_op op, tally_type type,
                            const void *in, void *out, uint64_t n, const tally_scan_options *opts);

#endif
