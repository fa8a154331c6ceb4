/* Scans on a Vulkan device: scan1.comp (associative ops in one pass with a decoupled look-back,
 * where the device has Vulkan's memory model and subgroup shuffles) or scan.comp (reduce, then
 * scan, three dispatches: the fallback, TALLY_VULKAN_SCAN=3pass), and fscan.comp (float sums
 * and products in the CPU's fixed block order). Host pointers are copied to device buffers and
 * the output copied back. Float sum/product scans on a device without IEEE subnormals run in
 * the shaders too and are redone on the CPU when the shader flags an edge (see record_scan). */
#include <stdlib.h>
#include <string.h>
#include "core/api_check.h"
#include "core/types.h"
#include "vulkan/vk_internal.h"

#define SCAN_TB (TVK_WG * 16 * 2) /* scan.comp's tile bytes (WG * 16 * VPT) */
#define SCAN1_VPT 8               /* scan1.comp's 16-byte vectors per invocation (its VPT) */
#define SCAN1_SHIFT 4             /* scan1.comp's tile states: 2^4 8-byte words (a line) apart */
#define SCAN1_EPOCHS (1u << 30)   /* scan1's flag words hold (epoch << 2) | status */
#define FSCAN_BLOCK 4096u         /* the CPU's float scan block (TALLY_SCAN_BLOCK) */

typedef struct scan_pc {
    uint64_t n, start;
    uint32_t in_head, out_head, ntiles, tile0;
    uint32_t epoch, spins, flags, stats_at; /* scan1.comp only */
} scan_pc;

static uint64_t seg_elems(const tvk_state *s, size_t es) { return s->seg_bytes / es; }

/* Segment k of a call (per elements each): its bindings' windows in b[0] (input) and b[1]
 * (output), its count and heads in pc (zeroed otherwise); returns its first element.
 *
 * Segments run one after another, a barrier between them (the callers record it): where a
 * segment boundary falls inside a 4-byte word (an output offset that is not a multiple of 4),
 * both segments' tiles read, merge and write that word back, and without the barrier the later
 * segment's dispatch may run alongside the earlier one and lose bytes. In place, the next
 * segment's input binding also overlaps this one's output binding (offsets round down to the
 * device's alignment), which the validation layer counts as a hazard. Segments are at most
 * 2^30 bytes: one barrier per segment costs nothing. */
static uint64_t seg_window(const tvk_state *s, tvk_src in, VkBuffer out, VkDeviceSize out_off,
                           size_t es, uint64_t per, uint64_t n, uint64_t k, tvk_range b[4],
                           scan_pc *pc)
{
    uint64_t e0 = k * per, ne = n - e0 < per ? n - e0 : per;
    memset(pc, 0, sizeof *pc);
    memset(b, 0, 4 * sizeof *b);
    b[0] = tvk_window(s, in.buf, in.off + e0 * es, ne * es, &pc->in_head);
    b[1] = tvk_window(s, out, out_off + e0 * es, ne * es, &pc->out_head);
    pc->n = ne;
    return e0;
}

/* n elements of type from in to dst (offset 0), recorded: copy.comp segment by segment
 * (NVIDIA's vkCmdCopyBuffer moved 849 GB/s on the H200, a shader ~4 TB/s), or the driver's copy
 * where the input does not start on a 4-byte word or TALLY_VULKAN_COPY=driver. */
static tally_status record_copy(tally_context *ctx, tvk_state *s, const char *fn, tally_type type,
                                tvk_src in, VkBuffer dst, uint64_t n)
{
    size_t es = tally_type_size(type);
    const char *ce = getenv("TALLY_VULKAN_COPY");
    if ((in.off & 3) || (ce && !strcmp(ce, "driver"))) {
        VkBufferCopy c = {in.off, 0, n * es};
        s->fd.vkCmdCopyBuffer(s->cb, in.buf, dst, 1, &c);
        return TALLY_OK;
    }
    VkPipeline p;
    tally_status st = tvk_pipeline(ctx, s, TVK_SH_COPY, type, 0, 0, 0, &p);
    if (st != TALLY_OK) return st;
    uint64_t per = seg_elems(s, es), nseg = (n + per - 1) / per;
    for (uint64_t k = 0; k < nseg; k++) {
        scan_pc pc;
        tvk_range b[4];
        seg_window(s, in, dst, 0, es, per, n, k, b, &pc);
        if ((st = tvk_bind(ctx, s, p, b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
        uint64_t groups = (pc.n * (es / 4) + 4 * 256 - 1) / (4 * 256);
        s->fd.vkCmdDispatch(s->cb, (uint32_t)(groups < 4096 ? (groups ? groups : 1) : 4096), 1, 1);
    }
    return TALLY_OK;
}

/* Tiles of te elements over every segment (each segment's first tile starts at its output
 * window's aligned base). */
static uint64_t count_tiles(const tvk_state *s, VkDeviceSize out_off, size_t es, uint64_t per,
                            uint64_t n, uint64_t te)
{
    uint64_t total = 0;
    for (uint64_t e0 = 0; e0 < n; e0 += per) {
        uint64_t ne = n - e0 < per ? n - e0 : per;
        uint64_t hs = ((out_off + e0 * es) & (s->align - 1)) / es;
        total += (hs + ne + te - 1) / te;
    }
    return total;
}

/* scan.comp over every segment. */
static tally_status record_assoc(tally_context *ctx, tvk_state *s, const char *fn, tally_op op,
                                 tally_type type, tvk_src in, VkBuffer out, VkDeviceSize out_off,
                                 uint64_t n, const tally_scan_options *opts)
{
    size_t es = tally_type_size(type);
    uint64_t per = seg_elems(s, es), nseg = (n + per - 1) / per;
    uint64_t te = SCAN_TB / es, total = count_tiles(s, out_off, es, per, n, te);
    if (total > 0xffffffffull)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: n = %llu is too large", fn,
                               (unsigned long long)n);
    tally_status st = tvk_buf_ensure(ctx, s, &s->aux, total * 8 + 64, 0, fn);
    if (st != TALLY_OK) return st;
    VkPipeline p0, p1, p2;
    uint32_t ex = opts->exclusive ? 1 : 0;
    if ((st = tvk_pipeline(ctx, s, TVK_SH_SCAN, type, (uint32_t)op, 0, ex, &p0)) != TALLY_OK ||
        (st = tvk_pipeline(ctx, s, TVK_SH_SCAN, type, (uint32_t)op, 1, ex, &p1)) != TALLY_OK ||
        (st = tvk_pipeline(ctx, s, TVK_SH_SCAN, type, (uint32_t)op, 2, ex, &p2)) != TALLY_OK)
        return st;
    for (int mode = 0; mode < 3; mode += 2) {
        uint32_t tile0 = 0;
        for (uint64_t k = 0; k < nseg; k++) {
            /* (the output binding is declared in every mode: in place, mode 0 meets the
             * segment overlap too) */
            if (k > 0) tvk_barrier(s);
            scan_pc pc;
            tvk_range b[4];
            seg_window(s, in, out, out_off, es, per, n, k, b, &pc);
            b[2] = (tvk_range){s->aux.buf, 0, total * 8};
            /* the output binding covers whole tiles' words that exist in the buffer: the
             * shader writes only words holding output bytes */
            pc.tile0 = tile0;
            uint32_t nt = (uint32_t)((pc.out_head / es + pc.n + te - 1) / te);
            if ((st = tvk_bind(ctx, s, mode == 0 ? p0 : p2, b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
            s->fd.vkCmdDispatch(s->cb, nt, 1, 1);
            tile0 += nt;
        }
        tvk_barrier(s);
        if (mode == 0) {
            scan_pc pc;
            memset(&pc, 0, sizeof pc);
            pc.start = tally_scan_start_bits(op, type, opts);
            pc.ntiles = (uint32_t)total;
            tvk_range b[4] = {{0}};
            b[2] = (tvk_range){s->aux.buf, 0, total * 8};
            if ((st = tvk_bind(ctx, s, p1, b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
            s->fd.vkCmdDispatch(s->cb, 1, 1, 1);
            tvk_barrier(s);
        }
    }
    return TALLY_OK;
}

/* scan1.comp's vectors per invocation: SCAN1_VPT, or TALLY_VULKAN_SCAN_VPT (1, 2, 4, 8 or 16;
 * tuning and tests). */
static uint32_t scan1_vpt(void)
{
    const char *e = getenv("TALLY_VULKAN_SCAN_VPT");
    uint32_t v = e && *e ? (uint32_t)strtoul(e, NULL, 10) : SCAN1_VPT;
    return v == 1 || v == 2 || v == 4 || v == 8 || v == 16 ? v : SCAN1_VPT;
}

/* scan1.comp's look-back: by subgroup 0 alone, no workgroup barrier per step (the default on
 * GPUs, as in the CUDA backend), or by the whole workgroup, three barriers a step (the default
 * on CPU devices). lavapipe drops the stores of a SIMD group that ran a loop the workgroup's
 * other SIMD groups did not (or ran for fewer steps) before a barrier: with the subgroup
 * look-back that leaves outputs unwritten, on one lavapipe thread too, where no two workgroups
 * ever run at once (docs/vulkan.md, "Scans"). TALLY_VULKAN_SCAN_LOOKBACK chooses (s->scan_lookback:
 * 0 unset, 1 sg, 2 sg-all: every subgroup takes it, the same code in every SIMD group, 3 wg). */
static uint32_t scan1_sg_lookback(const tvk_state *s)
{
    if (s->scan_lookback == 0) return s->info.device_type != VK_PHYSICAL_DEVICE_TYPE_CPU;
    return s->scan_lookback == 1 || s->scan_lookback == 2;
}

/* log2 of the 8-byte words per tile state (scan1.comp's sidx): SCAN1_SHIFT (4: a 128-byte line
 * per tile), or TALLY_VULKAN_SCAN_SHIFT = 0 .. 6 (tuning; 0 packs 16 states per line). */
static uint32_t scan1_shift(void)
{
    const char *e = getenv("TALLY_VULKAN_SCAN_SHIFT");
    uint32_t v = e && *e ? (uint32_t)strtoul(e, NULL, 10) : SCAN1_SHIFT;
    return v <= 6 ? v : SCAN1_SHIFT;
}

/* Out of place, plain output stores (scan1.comp's APART); TALLY_VULKAN_SCAN_STORES=coherent keeps
 * the in-place kind (coherent stores after a release fence) everywhere (tuning, tests). */
static int scan1_apart(VkBuffer in, VkBuffer out)
{
    const char *e = getenv("TALLY_VULKAN_SCAN_STORES");
    if (e && !strcmp(e, "coherent")) return 0;
    return in != out;
}

/* scan1.comp over every segment: one dispatch per segment, a barrier between them (the next
 * segment's tiles look back into this one's, and words at a boundary are merged by both).
 * Tile states: one 64-bit word per tile in sflag (flag << 32 | 32-bit value), 2^shift words
 * apart, 64-bit values in sval; sflag is zeroed when it is new, when the epochs wrap, and after
 * a call that kept its look-back counters there (their words may be a later call's states). */
/* The one-pass scans' tile states (sflag, `bytes` of them) and this call's epoch: the flag words
 * hold (epoch << 2) | status and no word holds epoch 0, so every call's epoch is new until the
 * counter wraps; a new buffer, a wrap, or benchmark counters left by the previous call (which may
 * lie anywhere) clear the states first. */
static tally_status scan_states(tally_context *ctx, tvk_state *s, const char *fn, VkDeviceSize bytes,
                                uint32_t *epoch)
{
    VkBuffer old = s->sflag.buf;
    tally_status st = tvk_buf_ensure(ctx, s, &s->sflag, bytes, 0, fn);
    if (st != TALLY_OK) return st;
    if (s->sflag.buf != old) s->scan_epoch = 0; /* a new buffer holds anything */
    if (s->scan_epoch == 0 || s->scan_epoch + 1 >= SCAN1_EPOCHS || s->scan_stats_at != 0) {
        s->fd.vkCmdFillBuffer(s->cb, s->sflag.buf, 0, VK_WHOLE_SIZE, 0);
        tvk_barrier(s);
        s->scan_epoch = 0;
    }
    *epoch = ++s->scan_epoch;
    s->scan_stats_at = 0;
    return TALLY_OK;
}

static tally_status record_assoc1(tally_context *ctx, tvk_state *s, const char *fn, tally_op op,
                                  tally_type type, tvk_src in, VkBuffer out, VkDeviceSize out_off,
                                  uint64_t n, const tally_scan_options *opts)
{
    size_t es = tally_type_size(type);
    uint32_t vpt = scan1_vpt();
    uint64_t te = (uint64_t)TVK_WG * 16 * vpt / es;
    /* a dispatch's tiles fit in one dimension of workgroups */
    uint64_t per = seg_elems(s, es), maxwg = s->props.limits.maxComputeWorkGroupCount[0];
    if (per > (maxwg - 1) * te) per = (maxwg - 1) * te;
    /* lavapipe (llvmpipe) ends every loop of a shader invocation once the invocation has run
     * 65,535 loop iterations in all (LP_MAX_TGSI_LOOP_ITERATIONS, shared by every loop), so a
     * look-back longer than that budget would leave its loop early with a partial prefix. A
     * look-back walks only its own dispatch's tiles (earlier dispatches' tiles all hold their
     * prefix), and costs per tile at most spins + 2 steps of its loop plus one fallback's loops
     * (scan1.comp's tile_reduce: the subgroups' totals, <= TVK_WG iterations, and the shuffle
     * rows, <= 16 vectors x 7 steps, plus a vector's word loop: < 160), while the rest of the
     * shader loops at most ~1,000 times; so on a CPU device a dispatch takes at most as many
     * tiles as keep that within 60,000 iterations. */
    uint32_t sg = scan1_sg_lookback(s);
    if (s->info.device_type == VK_PHYSICAL_DEVICE_TYPE_CPU) {
        /* (the subgroup look-back's fallback: one lane folds up to the whole tile's vectors) */
        uint64_t fb = sg ? (uint64_t)TVK_WG * vpt : TVK_WG;
        uint64_t cap = 59000u / ((uint64_t)s->scan_spins + 2u + fb + 160u);
        const char *ce = getenv("TALLY_VULKAN_SCAN_CAP"); /* tests: fewer tiles per dispatch */
        if (ce && *ce && strtoull(ce, NULL, 10) > 0 && strtoull(ce, NULL, 10) < cap) cap = strtoull(ce, NULL, 10);
        if (cap < 1) cap = 1;
        if (per > cap * te) per = cap * te;
    }
    uint64_t nseg = (n + per - 1) / per, total = count_tiles(s, out_off, es, per, n, te);
    if (total >= 0xffffffffull / 2)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: n = %llu is too large", fn,
                               (unsigned long long)n);
    /* the states' words, 2^shift per tile (indices stay below 2^31) */
    uint32_t shift = scan1_shift();
    while (shift > 0 && (total << (shift > 1 ? shift : 1)) >= 0x7fffffffull) shift--;
    uint64_t swords = total << shift, vwords = total << (shift > 1 ? shift : 1);
    tally_status st = tvk_buf_ensure(ctx, s, &s->sval, vwords * 8, 0, fn);
    if (st != TALLY_OK) return st;
    /* benchmarks (TALLY_VULKAN_SCAN_STATS=1): four counters after the states, zeroed per call
     * (tally_vulkan_bench_scan_stats reads them) */
    int stats = s->scan_stats;
    const VkDeviceSize flag_bytes = swords * 8 + (stats ? 16 : 0);
    uint32_t epoch;
    if ((st = scan_states(ctx, s, fn, flag_bytes, &epoch)) != TALLY_OK) return st;
    if (stats) {
        s->fd.vkCmdFillBuffer(s->cb, s->sflag.buf, swords * 8, 16, 0);
        tvk_barrier(s);
        s->scan_stats_at = swords * 8;
    }
    VkPipeline p;
    uint32_t apart = (uint32_t)scan1_apart(in.buf, out);
    if ((st = tvk_pipeline(ctx, s, TVK_SH_SCAN1, type, (uint32_t)op, vpt,
                           (opts->exclusive ? 1u : 0u) | (sg << 1) | (apart << 2), &p)) != TALLY_OK)
        return st;
    const char *one = getenv("TALLY_VULKAN_SCAN_ONE_LANE"); /* tests: no shuffles */
    uint32_t flags = (s->scan_reverse ? 1u : 0u) | (one && *one && strcmp(one, "0") ? 2u : 0u) |
                     (s->scan_lookback == 2 ? 8u : 0u) | /* sg-all: every subgroup looks back */
                     (shift << 8);
    uint32_t tile0 = 0;
    for (uint64_t k = 0; k < nseg; k++) {
        if (k > 0) tvk_barrier(s);
        scan_pc pc;
        tvk_range b[4];
        seg_window(s, in, out, out_off, es, per, n, k, b, &pc);
        b[2] = (tvk_range){s->sval.buf, 0, vwords * 8};
        b[3] = (tvk_range){s->sflag.buf, 0, flag_bytes};
        pc.stats_at = stats ? (uint32_t)(swords * 2) : 0;
        pc.start = tally_scan_start_bits(op, type, opts);
        pc.tile0 = tile0;
        pc.ntiles = (uint32_t)((pc.out_head / es + pc.n + te - 1) / te);
        pc.epoch = epoch;
        pc.spins = s->scan_spins;
        pc.flags = flags;
        if ((st = tvk_bind(ctx, s, p, b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
        s->fd.vkCmdDispatch(s->cb, pc.ntiles, 1, 1);
        tile0 += pc.ntiles;
    }
    tvk_barrier(s);
    return TALLY_OK;
}

/* fscan.comp over every segment; the edge flag lands in hostres[0..3]. */
static tally_status record_fscan(tally_context *ctx, tvk_state *s, const char *fn, tally_op op,
                                 tally_type type, tvk_src in, VkBuffer out, VkDeviceSize out_off,
                                 uint64_t n, const tally_scan_options *opts, int preserve)
{
    size_t es = tally_type_size(type);
    uint64_t per = seg_elems(s, es), nseg = (n + per - 1) / per;
    uint64_t nblk = (n + FSCAN_BLOCK - 1) / FSCAN_BLOCK;
    VkDeviceSize flag_off = (nblk * 8 + s->align - 1) & ~(VkDeviceSize)(s->align - 1);
    tally_status st = tvk_buf_ensure(ctx, s, &s->aux, flag_off + 64, 0, fn);
    if (st != TALLY_OK) return st;
    if ((st = tvk_buf_ensure(ctx, s, &s->hostres, 1024, 1, fn)) != TALLY_OK) return st;
    VkPipeline p[3];
    uint32_t ex = opts->exclusive ? 1 : 0, o = op == TALLY_SUM ? 0 : 1;
    for (uint32_t m = 0; m < 3; m++)
        if ((st = tvk_pipeline(ctx, s, preserve ? TVK_SH_FSCAN_DP : TVK_SH_FSCAN, type, o, m, ex, &p[m])) != TALLY_OK)
            return st;
    s->fd.vkCmdFillBuffer(s->cb, s->aux.buf, flag_off, 4, 0);
    tvk_barrier(s);
    /* tests: a flushing device emulated (fscan.comp's op2; the shader without DenormPreserve) */
    const char *ftz = getenv("TALLY_VULKAN_EMULATE_FTZ");
    uint32_t flags = !preserve && ftz && *ftz && strcmp(ftz, "0") ? 4u : 0u;
    /* CPU devices: the serial chains in every invocation (fscan.comp); TALLY_VULKAN_FSCAN_CHAIN
     * = one or all chooses (tests) */
    const char *ch = getenv("TALLY_VULKAN_FSCAN_CHAIN");
    if (ch && *ch ? !strcmp(ch, "all") : s->info.device_type == VK_PHYSICAL_DEVICE_TYPE_CPU) flags |= 8u;
    uint64_t maxwg = s->props.limits.maxComputeWorkGroupCount[0];
    const char *mw = getenv("TALLY_VULKAN_FSCAN_GROUPS"); /* tests: fewer workgroups than blocks */
    if (mw && *mw && strtoull(mw, NULL, 10) > 0 && strtoull(mw, NULL, 10) < maxwg)
        maxwg = strtoull(mw, NULL, 10);
    for (int mode = 0; mode < 3; mode += 2) {
        for (uint64_t k = 0; k < nseg; k++) {
            /* (elements here are whole words, but in place the segments' bindings overlap) */
            if (k > 0) tvk_barrier(s);
            scan_pc pc;
            tvk_range b[4];
            uint64_t e0 = seg_window(s, in, out, out_off, es, per, n, k, b, &pc);
            b[2] = (tvk_range){s->aux.buf, 0, nblk * 8};
            b[3] = (tvk_range){s->aux.buf, flag_off, 4};
            pc.tile0 = (uint32_t)(e0 / FSCAN_BLOCK);
            pc.flags = flags;
            uint64_t nb = (pc.n + FSCAN_BLOCK - 1) / FSCAN_BLOCK;
            if ((st = tvk_bind(ctx, s, p[mode], b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
            /* a workgroup per block (the shader strides over any beyond the dispatch) */
            s->fd.vkCmdDispatch(s->cb, (uint32_t)(nb < maxwg ? nb : maxwg), 1, 1);
        }
        tvk_barrier(s);
        if (mode == 0) {
            scan_pc pc;
            memset(&pc, 0, sizeof pc);
            pc.start = tally_scan_start_bits(op, type, opts);
            pc.ntiles = (uint32_t)nblk;
            pc.flags = flags;
            tvk_range b[4] = {{0}};
            b[2] = (tvk_range){s->aux.buf, 0, nblk * 8};
            b[3] = (tvk_range){s->aux.buf, flag_off, 4};
            if ((st = tvk_bind(ctx, s, p[1], b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
            s->fd.vkCmdDispatch(s->cb, 1, 1, 1);
            tvk_barrier(s);
        }
    }
    VkBufferCopy c = {flag_off, 0, 4};
    s->fd.vkCmdCopyBuffer(s->cb, s->aux.buf, s->hostres.buf, 1, &c);
    tvk_barrier(s);
    return TALLY_OK;
}

/* fscan1.comp's quad layout: the default (on the H200 11-20% faster than a group per invocation,
 * docs/vulkan.md "Scans"); TALLY_VULKAN_FSCAN_QUAD=0, read per call, for the group-per-invocation
 * layout (tests, benchmarks) */
static int fscan_quad(void)
{
    const char *e = getenv("TALLY_VULKAN_FSCAN_QUAD");
    return !(e && *e && !strcmp(e, "0"));
}

/* fscan1.comp's shared memory in bytes for 2^lnb blocks per workgroup of es-byte elements, with
 * or without STAGE and REGB (its declarations: tots and ls, the look-back's windows, kept and cs,
 * the fold's two starts, win_first, stg) */
static uint64_t fscan1_shared(size_t es, uint32_t lnb, int stage, int regb)
{
    uint64_t nb = 1u << lnb, keep = stage ? 256 : es == 4 ? 1024 : 512;
    uint64_t staged = stage ? (nb - (regb ? 1 : 0)) * 4 * 256 * 16 * (es / 4) : 0;
    return 2 * (nb + 2) * 256 * es + 2 * 256 * 4 + 2 * 256 * es + 2 * keep * es + 2 * es + 12 +
           staged + 16;
}

/* fscan1.comp over every segment (one dispatch each, a tile per 4096-element block, up to 4
 * tiles per workgroup, one tile
 * numbering over the segments, a barrier between them: a segment's first tiles look back into
 * the previous segment's, which all hold P); the edge flag lands in hostres[0..3]. The input
 * must not overlap the output (the fallback reads other tiles' input while their owners write
 * their outputs): the callers copy an in-place input first. Tile states: scan1's sflag buffer
 * and epoch counter (fscan1.comp's top comment), the 64-bit values in sval. */
static tally_status record_fscan1(tally_context *ctx, tvk_state *s, const char *fn, tally_op op,
                                  tally_type type, tvk_src in, VkBuffer out, VkDeviceSize out_off,
                                  uint64_t n, const tally_scan_options *opts, int preserve)
{
    size_t es = tally_type_size(type);
    uint64_t per = seg_elems(s, es) / FSCAN_BLOCK * FSCAN_BLOCK;
    uint64_t maxwg = s->props.limits.maxComputeWorkGroupCount[0];
    if (per > (maxwg - 1) * FSCAN_BLOCK) per = (maxwg - 1) * FSCAN_BLOCK;
    if (s->info.device_type == VK_PHYSICAL_DEVICE_TYPE_CPU) {
        /* lavapipe ends an invocation's loops after 65,535 iterations in all (record_assoc1):
         * a look-back costs per silent predecessor at most spins + 1 steps and a fallback's
         * L chain (16 iterations), so a dispatch takes at most as many tiles as keep that
         * within 59,000 */
        uint64_t cap = 59000u / ((uint64_t)s->scan_spins + 24u);
        const char *ce = getenv("TALLY_VULKAN_SCAN_CAP"); /* tests: fewer tiles per dispatch */
        if (ce && *ce && strtoull(ce, NULL, 10) > 0 && strtoull(ce, NULL, 10) < cap) cap = strtoull(ce, NULL, 10);
        if (cap < 1) cap = 1;
        if (per > cap * FSCAN_BLOCK) per = cap * FSCAN_BLOCK;
    }
    uint64_t nseg = (n + per - 1) / per, total = (n + FSCAN_BLOCK - 1) / FSCAN_BLOCK;
    uint32_t shift = scan1_shift();
    if (shift < 1) shift = 1; /* (the A and P words of a tile) */
    while (shift > 1 && (total << shift) >= 0x7fffffffull / 2) shift--;
    if ((total << shift) >= 0x7fffffffull / 2)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: n = %llu is too large", fn,
                               (unsigned long long)n);
    uint64_t swords = total << shift;
    /* bench/probe_fscan.c (the clock variant): 8 words of times per workgroup in sval, after
     * the f64 tiles' values (fscan1.comp's end) */
    int probe = s->fscan_probe && !preserve;
    uint64_t vbytes = probe ? total * 80 : total * 16;
    tally_status st = tvk_buf_ensure(ctx, s, &s->sval, vbytes, 0, fn);
    if (st != TALLY_OK) return st;
    if ((st = tvk_buf_ensure(ctx, s, &s->hostres, 1024, 1, fn)) != TALLY_OK) return st;
    const VkDeviceSize flag_bytes = swords * 8 + 16; /* the states, then the edge flag word */
    uint32_t epoch;
    if ((st = scan_states(ctx, s, fn, flag_bytes, &epoch)) != TALLY_OK) return st;
    /* the edge word's high half stays 0: no call reads it as a state */
    s->fd.vkCmdFillBuffer(s->cb, s->sflag.buf, swords * 8, 8, 0);
    tvk_barrier(s);
    VkPipeline p;
    uint32_t ex = opts->exclusive ? 1 : 0, o = op == TALLY_SUM ? 0 : 1;
    const char *ftz = getenv("TALLY_VULKAN_EMULATE_FTZ"); /* tests: fscan_ops.glsl's op2 */
    uint32_t emu = !preserve && ftz && *ftz && strcmp(ftz, "0") ? 1u : 0u; /* (a specialization) */
    /* blocks per workgroup, log2: 4 for f32, 2 for f64 (the shader's NBMAX, its shared memory);
     * TALLY_VULKAN_FSCAN_BLOCKS=1|2|4 (bench, tests) for fewer */
    uint32_t lnb = es == 4 ? 2 : 1;
    const char *nbe = getenv("TALLY_VULKAN_FSCAN_BLOCKS");
    if (nbe && *nbe) {
        unsigned long v = strtoul(nbe, NULL, 10);
        uint32_t l = v >= 4 ? 2 : v >= 2 ? 1 : 0;
        if (l < lnb) lnb = l;
    }
    /* whole blocks' L chains with their totals read ahead (fscan1.comp's CHAIN_PF): f64 only by
     * default (H200, the quad layout: f32 with it takes 78 registers, without it 62, and scans
     * 7-9% faster; f64 takes 106 against 97, 2 workgroups per SM either way, and is 1-2% faster
     * with it); TALLY_VULKAN_FSCAN_CHAIN_PF=0|1 for either */
    const char *pfe = getenv("TALLY_VULKAN_FSCAN_CHAIN_PF");
    uint32_t pf = pfe && *pfe ? (strcmp(pfe, "0") ? 8u : 0u) : es == 8 ? 8u : 0u;
    /* the quad layout (coalesced loads and stores, a group over 4 lanes; the shader keeps the
     * group-per-invocation layout where its subgroups are not full or have fewer than 4 lanes):
     * the default, TALLY_VULKAN_FSCAN_QUAD=0 for the other layout (fscan_quad) */
    uint32_t qd = fscan_quad() ? 16u : 0u;
    const char *sq = getenv("TALLY_VULKAN_FSCAN_SEQ"); /* bench: the first loads block by block */
    if (sq && *sq && strcmp(sq, "0")) qd |= 32u;
    /* whole blocks without the partial groups' bounds: the default (H200, f32 inclusive 2^26
     * 266.1 against 324.4 us, 2^30 3,883.7 against 4,769.2; f64 7-8% faster);
     * TALLY_VULKAN_FSCAN_FULL=0 to measure without */
    const char *fu = getenv("TALLY_VULKAN_FSCAN_FULL");
    if (!(fu && !strcmp(fu, "0"))) qd |= 512u;
    /* the quad layout's prefixes kept for the outputs (fscan1.comp's STAGE: no second read of
     * the input), f32 by default: 2 blocks per workgroup, the first in registers and the second
     * in shared memory (REGB; H200, f32 inclusive 2^26 234.5 against 256.5 us without STAGE and
     * 280.9 with both blocks in shared memory, whose 47 KiB leave ~2 workgroups per SM).
     * TALLY_VULKAN_FSCAN_STAGE=0 for none (f64's default: a block in registers takes 128 of
     * them, 12,369 against 10,550 us at 2^30), =1 for every block in shared memory, =hybrid
     * for REGB; as many blocks per workgroup as fit the device's shared memory */
    const char *sge = getenv("TALLY_VULKAN_FSCAN_STAGE");
    int stage = sge && *sge ? strcmp(sge, "0") != 0 : es == 4;
    if ((qd & 16u) && stage) {
        uint64_t lim = s->props.limits.maxComputeSharedMemorySize;
        int regb = !(sge && *sge) || !strcmp(sge, "hybrid");
        uint32_t l = regb && lnb > 1 ? 1 : lnb;
        while (l > 0 && fscan1_shared(es, l, 1, regb) > lim) l--;
        if (fscan1_shared(es, l, 1, regb) <= lim) {
            lnb = l;
            qd |= 1024u | (regb ? 4096u : 0u);
        }
    }
    /* the sums' look-back fold without its steps' results (fscan1.comp's LEAN: a read and an
     * add per A in the lone invocation, not a read, an add and a store), the default;
     * TALLY_VULKAN_FSCAN_FOLD=0 for the stores */
    const char *fo = getenv("TALLY_VULKAN_FSCAN_FOLD");
    if (!(fo && !strcmp(fo, "0"))) qd |= 65536u;
    /* A's and P's published by the invocations that compute them (fscan1.comp's EPUB), GPUs;
     * TALLY_VULKAN_FSCAN_EPUB=0 for tid 0 after a barrier */
    const char *ep = getenv("TALLY_VULKAN_FSCAN_EPUB");
    if (!(ep && !strcmp(ep, "0"))) qd |= 131072u;
    if ((st = tvk_pipeline(ctx, s, preserve ? TVK_SH_FSCAN1_DP : probe ? TVK_SH_FSCAN1_CLK : TVK_SH_FSCAN1, type, o,
                           emu | (lnb << 1) | pf | qd, ex, &p)) != TALLY_OK)
        return st;
    uint32_t flags = (s->scan_reverse ? 1u : 0u) | (shift << 8);
    /* the L chain and fold in every invocation (all), and there the sums' fold the GPUs' lean
     * one with its P's (fold1, tests: lavapipe loses the stores after a loop that one invocation
     * runs alone, so it runs that code in every invocation) */
    const char *ch = getenv("TALLY_VULKAN_FSCAN_CHAIN");
    if (ch && *ch ? !strcmp(ch, "all") : s->info.device_type == VK_PHYSICAL_DEVICE_TYPE_CPU) flags |= 8u;
    if (ch && !strcmp(ch, "fold1")) flags |= 8u | 128u;
    const char *kp = getenv("TALLY_VULKAN_FSCAN_KEEP"); /* tests: "16", the fold reads A's again */
    if (kp && !strcmp(kp, "16")) flags |= 32u;
    /* every look-back step reads 256 states, the first too (walks on the H200 pass ~110 A's:
     * 1.6 steps instead of 2.6; f32 inclusive 2^28 871 against 908 us, f64 2,488 against 2,657);
     * TALLY_VULKAN_FSCAN_WIDE0=0: 32 at the first step and after a stall (less polling) */
    const char *w0 = getenv("TALLY_VULKAN_FSCAN_WIDE0");
    if (!(w0 && !strcmp(w0, "0"))) flags |= 64u;
    /* the input of the workgroup PD ahead read into L2 while the L chains run (fscan1.comp's
     * prefetch_input), where the device says its SMs (NVIDIA): PD = 2 workgroups per SM for f32
     * (3 resident per SM) and 3/4 of one for f64 (2 resident). H200, same call (13), f32
     * inclusive 2^26 / 2^28 / 2^30 210.6 / 767.7 / 3,062.1 us against 221.5 / 818.4 / 3,255.7
     * without; f64 at PD 100 582.7 / 2,278.0 / 9,136.6 against 623.7 / 2,445.5 / 9,925.4 (at
     * PD 264 f64 was 12% slower: call 12). docs/performance.md "Vulkan: the next workgroups'
     * inputs into L2"; TALLY_VULKAN_FSCAN_PREFETCH=PD (0: none) */
    const char *pfd = getenv("TALLY_VULKAN_FSCAN_PREFETCH");
    uint32_t pdist = pfd && *pfd ? (uint32_t)strtoul(pfd, NULL, 10) : es == 4 ? 2u * s->sm_count : 3u * s->sm_count / 4u;
    if (pdist > 4095u) pdist = 4095u;
    flags |= pdist << 16;
    for (uint64_t k = 0; k < nseg; k++) {
        if (k > 0) tvk_barrier(s);
        scan_pc pc;
        tvk_range b[4];
        uint64_t e0 = seg_window(s, in, out, out_off, es, per, n, k, b, &pc);
        b[2] = (tvk_range){s->sval.buf, 0, vbytes};
        b[3] = (tvk_range){s->sflag.buf, 0, flag_bytes};
        pc.start = tally_scan_start_bits(op, type, opts);
        pc.tile0 = (uint32_t)(e0 / FSCAN_BLOCK);
        pc.ntiles = (uint32_t)((pc.n + FSCAN_BLOCK - 1) / FSCAN_BLOCK);
        pc.epoch = epoch;
        pc.spins = s->scan_spins;
        pc.flags = flags;
        pc.stats_at = (uint32_t)(swords * 2);
        if ((st = tvk_bind(ctx, s, p, b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
        s->fd.vkCmdDispatch(s->cb, (pc.ntiles + (1u << lnb) - 1) >> lnb, 1, 1);
        if (probe) { /* (the last segment's) */
            s->fscan_probe_wg = (pc.ntiles + (1u << lnb) - 1) >> lnb;
            s->fscan_probe_at = es == 8 ? ((uint64_t)pc.tile0 + pc.ntiles) * 16 : 0;
        }
    }
    tvk_barrier(s);
    VkBufferCopy c = {swords * 8, 0, 4};
    s->fd.vkCmdCopyBuffer(s->cb, s->sflag.buf, s->hostres.buf, 1, &c);
    tvk_barrier(s);
    return TALLY_OK;
}

/* The one-pass float scan (fscan1.comp) for a call that runs in the shaders (see fscan_on_device). */
static int fscan_one_pass(const tvk_state *s)
{
    if (!s->scan1_able || s->float_scan == 1 || s->float_scan == 2) return 0;
    return s->float_scan == 3 || s->info.device_type != VK_PHYSICAL_DEVICE_TYPE_CPU || s->float_shaders;
}

/* Float sums/products: in shaders (1), or on the CPU (0: a device without IEEE subnormals,
 * unless TALLY_VULKAN_FLOAT_SHADERS=1).
 *
 * On a device without IEEE subnormals (*preserve = 0: the driver may flush subnormal operands
 * and results to zero, NVIDIA's does), when asked for, the shader built without
 * TVK_DENORM_PRESERVE runs, and a call whose edge flag is set is redone on the CPU backend.
 * That gives the CPU's bits on every call, because every place where flushing could change a
 * bit raises the flag (fscan_ops.glsl: op_raw is the only float arithmetic of fscan.comp and
 * fscan1.comp, everything else moves bits; each element is noted where it is loaded, the start
 * value too, and for products each result by op_check, so every operand of every product is
 * noted):
 *   - sums: any element or start value that is nonzero and below 2^-102 (f32) or 2^-969 (f64)
 *     in magnitude. Without one, every value is a multiple of q = 2^(emin + 1) and every sum
 *     the scan computes is one too, never subnormal, so no flush ever acts (the argument is
 *     at fscan_ops.glsl's edge flag). Data with such small values runs on the CPU backend;
 *   - products: any noted subnormal, and a zero product of two nonzero operands (an IEEE
 *     product may round to zero too: the flag is then only a needless CPU redo); its
 *     comparisons meet only normal numbers or zeros (a subnormal operand is already noted),
 *     which every device compares exactly.
 * The bits of a value are read as bits (no flush touches a move), and the bound's comparison
 * is on integers. Infinities and NaNs are neither: the same with or without flushing. The ops
 * are `precise` (no contraction or reassociation), so the device performs the CPU's operations
 * in the CPU's order (tally.h's fixed float scan order), and without a flag each one is IEEE's. */
static int fscan_on_device(const tvk_state *s, tally_op op, tally_type type, int *preserve)
{
    *preserve = type == TALLY_F32 ? s->info.denorm_preserve32 : s->info.denorm_preserve64;
    (void)op;
    /* TALLY_VULKAN_FLOAT_SCAN=cpu: the CPU backend; =3pass: fscan.comp anywhere; =1pass:
     * fscan1.comp where the device has Vulkan's memory model (scan1_able). By default fscan1.comp
     * there on GPUs, and on CPU devices only with TALLY_VULKAN_FLOAT_SHADERS=1 (tests: lavapipe
     * runs it far slower than the CPU backend, 2^16 f32 ~245 ms against ~55 us, each invocation
     * there running the block's chain); otherwise fscan.comp where the device keeps subnormals
     * or TALLY_VULKAN_FLOAT_SHADERS=1 asks (its three passes ran 3x slower than the CPU backend
     * on the H200: 2^26 f32, 31.6 ms against 10.4), else the CPU backend. */
    if (s->float_scan == 1) return 0;
    if (s->float_scan == 2 || fscan_one_pass(s)) return 1;
    return *preserve || s->float_shaders;
}

static int is_fchain(tally_op op, tally_type type)
{
    return tally_type_is_float(type) && (op == TALLY_SUM || op == TALLY_PROD);
}

/* Records the scan of in to (out, out_off); *edge_possible says whether the host must check
 * the edge flag in hostres afterwards. */
static tally_status record_scan(tally_context *ctx, tvk_state *s, const char *fn, tally_op op,
                                tally_type type, tvk_src in, VkBuffer out, VkDeviceSize out_off,
                                uint64_t n, const tally_scan_options *opts, int *edge_possible)
{
    *edge_possible = 0;
    if (is_fchain(op, type)) {
        int preserve;
        fscan_on_device(s, op, type, &preserve);
        *edge_possible = !preserve;
        if (fscan_one_pass(s)) return record_fscan1(ctx, s, fn, op, type, in, out, out_off, n, opts, preserve);
        return record_fscan(ctx, s, fn, op, type, in, out, out_off, n, opts, preserve);
    }
    if (s->scan1) return record_assoc1(ctx, s, fn, op, type, in, out, out_off, n, opts);
    return record_assoc(ctx, s, fn, op, type, in, out, out_off, n, opts);
}

tally_status tvk_scan_host(tally_context *ctx, tvk_state *s, tally_op op, tally_type type,
                           const void *in, void *out, uint64_t n, const tally_scan_options *opts)
{
    static const char fn[] = "tally_scan";
    if (n == 0) return TALLY_OK;
    size_t es = tally_type_size(type);
    uint64_t bytes = n * es;
    int preserve;
    if (is_fchain(op, type) && !fscan_on_device(s, op, type, &preserve)) {
        tally_context *cpu;
        tally_status st = tvk_cpu(ctx, s, &cpu);
        if (st != TALLY_OK) return st;
        st = tally_scan(cpu, op, type, in, out, n, opts);
        if (st != TALLY_OK) tally_set_error(ctx, st, "%s", tally_last_error(cpu));
        return st;
    }
    tally_status st = tvk_begin(ctx, s, fn);
    if (st != TALLY_OK) return st;
    if ((st = tvk_upload(ctx, s, in, bytes, fn)) != TALLY_OK) return st;
    /* scan in place in the device copy (the one-pass float scan: into dbuf2, its input must
     * stay), then copy it back */
    tvk_src src = {s->dbuf.buf, 0, in};
    VkBuffer dst = s->dbuf.buf;
    if (is_fchain(op, type) && fscan_one_pass(s)) {
        if ((st = tvk_buf_ensure(ctx, s, &s->dbuf2, bytes, 0, fn)) != TALLY_OK) return st;
        dst = s->dbuf2.buf;
    }
    int edge_possible;
    if ((st = record_scan(ctx, s, fn, op, type, src, dst, 0, n, opts, &edge_possible)) != TALLY_OK)
        return st;
    VkBufferCopy c = {0, 0, bytes};
    s->fd.vkCmdCopyBuffer(s->cb, dst, s->staging.buf, 1, &c);
    tvk_barrier(s);
    if ((st = tvk_submit_wait(ctx, s, fn)) != TALLY_OK) return st;
    uint32_t edge = 0;
    if (edge_possible) memcpy(&edge, s->hostres.map, 4);
    if (edge) {
        tally_context *cpu;
        if ((st = tvk_cpu(ctx, s, &cpu)) != TALLY_OK) return st;
        return tally_scan(cpu, op, type, in, out, n, opts);
    }
    memcpy(out, s->staging.map, bytes);
    return TALLY_OK;
}

/* The CPU's scan of device data: download, scan, upload. */
static tally_status cpu_scan_buffers(tally_context *ctx, tvk_state *s, const char *fn, tally_op op,
                                     tally_type type, VkBuffer in, VkDeviceSize in_off, VkBuffer out,
                                     VkDeviceSize out_off, uint64_t n, const tally_scan_options *opts)
{
    size_t bytes = (size_t)n * tally_type_size(type);
    const void *view;
    tally_status st = tvk_download(ctx, s, in, in_off, bytes, &view, fn);
    if (st != TALLY_OK) return st;
    tally_context *cpu;
    if ((st = tvk_cpu(ctx, s, &cpu)) != TALLY_OK) return st;
    /* in place in the staging buffer, then up to out */
    if ((st = tally_scan(cpu, op, type, view, (void *)view, n, opts)) != TALLY_OK) return st;
    if ((st = tvk_begin(ctx, s, fn)) != TALLY_OK) return st;
    VkBufferCopy c = {0, out_off, bytes};
    s->fd.vkCmdCopyBuffer(s->cb, s->staging.buf, out, 1, &c);
    tvk_barrier(s);
    return tvk_submit_wait(ctx, s, fn);
}

tally_status tvk_scan(tally_context *ctx, tvk_state *s, const char *fn, tally_op op,
                      tally_type type, tvk_src in, VkBuffer out, VkDeviceSize out_off, uint64_t n,
                      const tally_scan_options *opts)
{
    if (n == 0) return TALLY_OK;
    size_t es = tally_type_size(type);
    int preserve;
    if (is_fchain(op, type) && !fscan_on_device(s, op, type, &preserve))
        return cpu_scan_buffers(ctx, s, fn, op, type, in.buf, in.off, out, out_off, n, opts);
    tally_status st = tvk_begin(ctx, s, fn);
    if (st != TALLY_OK) return st;
    tvk_src src = in;
    /* in place, a copy of the input: the one-pass float scan reads other tiles' input while they
     * are written, and after an edge the CPU redoes the call from the input */
    int in_place = in.buf == out && in.off == out_off;
    int keep = is_fchain(op, type) && in_place && (!preserve || fscan_one_pass(s));
    if (keep) {
        if ((st = tvk_buf_ensure(ctx, s, &s->dbuf2, n * es, 0, fn)) != TALLY_OK) return st;
        if ((st = record_copy(ctx, s, fn, type, in, s->dbuf2.buf, n)) != TALLY_OK) return st;
        tvk_barrier(s);
        src.buf = s->dbuf2.buf;
        src.off = 0;
    }
    int edge_possible;
    if ((st = record_scan(ctx, s, fn, op, type, src, out, out_off, n, opts, &edge_possible)) != TALLY_OK)
        return st;
    if ((st = tvk_submit_wait(ctx, s, fn)) != TALLY_OK) return st;
    uint32_t edge = 0;
    if (edge_possible) memcpy(&edge, s->hostres.map, 4);
    if (edge)
        return keep ? cpu_scan_buffers(ctx, s, fn, op, type, s->dbuf2.buf, 0, out, out_off, n, opts)
                    : cpu_scan_buffers(ctx, s, fn, op, type, in.buf, in.off, out, out_off, n, opts);
    return TALLY_OK;
}

tally_status tally_vulkan_scan_buffer(tally_context *ctx, tally_op op, tally_type type, VkBuffer in,
                                      VkDeviceSize in_offset, VkBuffer out, VkDeviceSize out_offset,
                                      uint64_t n, const tally_scan_options *opts)
{
    static const char fn[] = "tally_vulkan_scan_buffer";
    tvk_state *s = tvk_state_of(ctx);
    tally_status st;
    if (!s) {
        if (ctx) tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: the context is not a Vulkan context", fn);
        return TALLY_ERR_INVALID_ARGUMENT;
    }
    if (s->batch)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: a batch is open on this context (tally_vulkan_batch_begin); scans "
                               "cannot be batched: end the batch first", fn);
    if ((int)op < 0 || (int)op > TALLY_XOR)
        return tally_set_error(ctx, TALLY_ERR_UNSUPPORTED,
                               "%s: op = %d is not a scan op (sum, prod, min, max, and, or, xor)", fn, (int)op);
    if ((st = tally_check_type(ctx, fn, type)) != TALLY_OK) return st;
    if (tally_type_is_float(type) && op >= TALLY_AND)
        return tally_set_error(ctx, TALLY_ERR_UNSUPPORTED, "%s: bitwise scans need an integer type", fn);
    if (opts && opts->has_init && !opts->exclusive)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: opts->has_init = 1 needs opts->exclusive = 1", fn);
    size_t es = tally_type_size(type);
    if (in_offset % es || out_offset % es)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: in_offset = %llu / out_offset = %llu are not multiples of the "
                               "%zu-byte %s elements", fn, (unsigned long long)in_offset,
                               (unsigned long long)out_offset, es, tally_type_name(type));
    if (n && (in == VK_NULL_HANDLE || out == VK_NULL_HANDLE))
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: a buffer is VK_NULL_HANDLE but n = %llu",
                               fn, (unsigned long long)n);
    if (n && in == out && in_offset != out_offset) {
        /* ranges that share a 4-byte word overlap: the shaders write whole words */
        uint64_t bytes = n * es;
        uint64_t a0 = in_offset & ~3ull, a1 = (in_offset + bytes + 3) & ~3ull;
        uint64_t b0 = out_offset & ~3ull, b1 = (out_offset + bytes + 3) & ~3ull;
        if (a0 < b1 && b0 < a1)
            return tally_set_error(ctx, TALLY_ERR_OVERLAP,
                                   "%s: out [%llu, +%llu) overlaps in [%llu, +%llu) in the same buffer "
                                   "(ranges sharing a 4-byte word count); only in place is allowed",
                                   fn, (unsigned long long)out_offset, (unsigned long long)bytes,
                                   (unsigned long long)in_offset, (unsigned long long)bytes);
    }
    tally_scan_options defaults;
    memset(&defaults, 0, sizeof defaults);
    tvk_src src = {in, in_offset, NULL};
    return tvk_scan(ctx, s, fn, op, type, src, out, out_offset, n, opts ? opts : &defaults);
}

/* Benchmarks: the counters of the last one-pass scan run with TALLY_VULKAN_SCAN_STATS=1 (tiles
 * that looked back, look-back steps, steps without progress, fallbacks); 0 when there are none
 * (out zeroed), else the status of the read. */
TALLY_API tally_status tally_vulkan_bench_scan_stats(tally_context *ctx, uint32_t out[4])
{
    memset(out, 0, 4 * sizeof out[0]);
    tvk_state *s = tvk_state_of(ctx);
    if (!s || !s->scan_stats_at) return TALLY_OK;
    const void *view;
    tally_status st = tvk_download(ctx, s, s->sflag.buf, s->scan_stats_at, 16, &view,
                                   "tally_vulkan_bench_scan_stats");
    if (st == TALLY_OK) memcpy(out, view, 16);
    return st;
}

/* Benchmarks (bench/probe_fscan.c): the times fscan1.comp's clock variant wrote in the last
 * float sum scan with TALLY_VULKAN_FSCAN_PROBE=1, 8 words per workgroup of its last segment (see the
 * shader's end), at most max_wg of them into out; returns the workgroups written (0: none). */
TALLY_API uint64_t tally_vulkan_bench_fscan_probe(tally_context *ctx, uint64_t *out, uint64_t max_wg)
{
    tvk_state *s = tvk_state_of(ctx);
    if (!s || !s->fscan_probe || !s->fscan_probe_wg) return 0;
    uint64_t w = s->fscan_probe_wg < max_wg ? s->fscan_probe_wg : max_wg;
    const void *view;
    if (tvk_download(ctx, s, s->sval.buf, s->fscan_probe_at, w * 64, &view, "tally_vulkan_bench_fscan_probe") !=
        TALLY_OK)
        return 0;
    memcpy(out, view, w * 64);
    return w;
}

/* Benchmarks: float sum/product scans in the shaders even on a device without IEEE subnormals
 * (on: 1), as TALLY_VULKAN_FLOAT_SHADERS=1 does for a new context (products too); returns the
 * previous setting. */
TVK_BENCH_SETTER(tally_vulkan_bench_float_shaders, int, float_shaders)

/* Benchmarks: float sum/product scans by the device's default (0), on the CPU backend (1), in
 * three passes (2) or in one pass (3), as TALLY_VULKAN_FLOAT_SCAN (unset, cpu, 3pass, 1pass)
 * does for a new context; returns the previous setting. */
TVK_BENCH_SETTER(tally_vulkan_bench_float_scan, int, float_scan)

/* Benchmarks: the one-pass scan's look-back steps without progress before a fallback (what
 * TALLY_VULKAN_SCAN_SPINS sets for a new context); returns the previous value. */
TVK_BENCH_SETTER(tally_vulkan_bench_scan_spins, uint32_t, scan_spins)

/* Benchmarks: the one-pass scan's look-back (0: the device's default, 1: subgroup 0's, 3: the
 * workgroup's; what TALLY_VULKAN_SCAN_LOOKBACK sets for a new context); returns the previous
 * setting. */
TVK_BENCH_SETTER(tally_vulkan_bench_scan_lookback, uint32_t, scan_lookback)

/* Benchmarks: the one-pass scan counts its look-back steps (on: 1; what TALLY_VULKAN_SCAN_STATS
 * sets for a new context; tally_vulkan_bench_scan_stats reads them); returns the previous setting. */
TVK_BENCH_SETTER(tally_vulkan_bench_scan_count, int, scan_stats)
