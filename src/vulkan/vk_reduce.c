/* Reductions on a Vulkan device: reduce.comp's fold dispatches add each workgroup's share into
 * the call's accumulator (or a partial record per workgroup); the fold's last workgroup (where
 * every field travels by atomics) or a finish dispatch (one workgroup, after a pipeline
 * barrier) turns them into the call's record, and the host turns
 * that record into a tally_partial and then into results with core/partial.c, the code the CPU
 * backend uses. The variance takes a second pass (the exact sum of squared deviations from the
 * mean), the float product fprod.comp (lanes of fixed blocks, multiplied in order here). Data
 * larger than one binding's range is cut into segments, each its own fold dispatch; all of
 * them go to the one finish. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "core/partial.h"
#include "core/types.h"
#include "vulkan/vk_internal.h"

/* One segment of the input: elements [e0, e0 + ne). */
typedef struct seg_plan {
    uint64_t e0, ne;
    uint32_t nvec, groups, vec_per_wg;
} seg_plan;

static uint64_t seg_count(const tvk_state *s, size_t es, uint64_t n)
{
    uint64_t per = s->seg_bytes / es;
    return n ? (n + per - 1) / per : 0;
}

/* The fold's shape (docs/vulkan.md, "Reduction speed"): grid-stride (every workgroup sweeps
 * the whole segment together) over at most `groups` workgroups, or the contiguous share per
 * workgroup it replaced; `u8`: 8 vectors in flight per invocation, else 4. The defaults, or
 * TALLY_VULKAN_REDUCE_SHAPE=grid|share, TALLY_VULKAN_REDUCE_GROUPS=N, TALLY_VULKAN_REDUCE_U=4|8
 * (read once), or the benchmark hook below, which wins over both. */
#define TVK_N_GRID 4096u /* reduce.comp: the bulk loop is grid-stride */
#define TVK_N_U8 8192u   /* reduce.comp: 8 vectors in flight per invocation (else 4) */
#define TVK_N_BLOCK 16384u /* reduce.comp: grid-stride by blocks of UU x 256 vectors */
#define TVK_N_NOMM 32768u  /* reduce.comp: float min/max without the NaN-free batch path */
#define TVK_N_ONLY_FOLD 65536u  /* reduce.comp: the fold alone (its own pipeline) */
#define TVK_N_ONLY_FIN 131072u  /* reduce.comp: the finish alone */
#define TVK_N_ONEBIN 262144u    /* reduce.comp: f64 sums' batches in one bin (benchmarks) */
#define TVK_N_XOLD 524288u      /* reduce.comp: the exact sums' former batch paths (benchmarks) */
#define TVK_N_TICKET 1048576u   /* reduce.comp: the fold's last workgroup finishes the call */

typedef struct fold_shape {
    int grid, u8, block; /* block: grid-stride by blocks (grid is 1 then) */
    int nomm;            /* benchmarks: float min/max element by element */
    int joined;          /* fold and finish in one pipeline (pc.fin chooses), as before */
    int onebin;          /* benchmarks: f64 sums' batches in one bin of 7 exponent fields */
    int xold;            /* the exact f32/f64 sums' former batch paths (f32_batch, f64_batch)
                            instead of the speculative ones (f32_batch4, f64_batch3) */
    int findisp;         /* the finish dispatch even where the last fold workgroup could finish */
    uint32_t groups;
} fold_shape;

#define TVK_FOLD_GROUPS 2048u /* grid-stride workgroups per segment: a few waves on any GPU */

static pthread_once_t g_shape_once = PTHREAD_ONCE_INIT;
/* The defaults: the exact sums' integer batch paths (xold) and the finish dispatch (findisp). On
 * the H200 the speculative f32_batch4/f64_batch3 ran 1-3% slower (TALLY_VULKAN_REDUCE_EXACT=new)
 * and the last-workgroup finish no faster (TALLY_VULKAN_REDUCE_FINISH=ticket): both opt-in
 * (docs/vulkan.md). */
static fold_shape g_shape_env = {1, 1, 0, 0, 0, 0, 1, 1, TVK_FOLD_GROUPS};
static _Atomic int g_shape_hook; /* 0: none; else 1 + grid + 2 u8 + 4 block + 8 nomm + 16 joined + 32 onebin
                                    + 64 xold + 128 findisp, groups in g_hook_groups */
static _Atomic uint32_t g_hook_groups;

static void shape_from_env(void)
{
    const char *e = getenv("TALLY_VULKAN_REDUCE_SHAPE");
    if (e && !strcmp(e, "share")) g_shape_env.grid = 0;
    if (e && !strcmp(e, "block")) g_shape_env.block = 1;
    e = getenv("TALLY_VULKAN_REDUCE_SPLIT");
    if (e && atoi(e) == 0) g_shape_env.joined = 1;
    e = getenv("TALLY_VULKAN_REDUCE_U");
    if (e && atoi(e) == 4) g_shape_env.u8 = 0;
    e = getenv("TALLY_VULKAN_REDUCE_GROUPS");
    if (e && atoi(e) > 0) g_shape_env.groups = (uint32_t)atoi(e);
    e = getenv("TALLY_VULKAN_REDUCE_EXACT"); /* "new": the speculative batch paths */
    if (e && !strcmp(e, "new")) g_shape_env.xold = 0;
    e = getenv("TALLY_VULKAN_REDUCE_FINISH"); /* "ticket": the fold's last workgroup finishes */
    if (e && !strcmp(e, "ticket")) g_shape_env.findisp = 0;
}

static fold_shape shape_now(void)
{
    pthread_once(&g_shape_once, shape_from_env);
    int h = g_shape_hook;
    if (!h) return g_shape_env;
    fold_shape f = {(h - 1) & 1, ((h - 1) >> 1) & 1, ((h - 1) >> 2) & 1, ((h - 1) >> 3) & 1,
                    ((h - 1) >> 4) & 1, ((h - 1) >> 5) & 1, ((h - 1) >> 6) & 1, ((h - 1) >> 7) & 1,
                    g_hook_groups};
    return f;
}

/* Benchmarks: the fold's shape for every later call of the process (grid 1: grid-stride, 2:
 * grid-stride by blocks, 3: grid-stride without the float min/max batch path, 4: grid-stride
 * with the fold and the finish in one pipeline, 5: grid-stride with the f64 sums' batches in one
 * bin, 6: grid-stride with the exact sums' former batch paths, 7: grid-stride with the finish
 * dispatch, 0: a share per workgroup; u: 4 or 8; groups:
 * the grid-stride cap, 0: the default); grid < 0 goes back to the defaults. Returns 0. */
TALLY_API int tally_vulkan_bench_reduce_shape(int grid, int u, unsigned groups)
{
    g_hook_groups = groups ? groups : TVK_FOLD_GROUPS;
    g_shape_hook = grid < 0 ? 0 : 1 + (grid ? 1 : 0) + (u == 8 ? 2 : 0) + (grid == 2 ? 4 : 0) + (grid == 3 ? 8 : 0) + (grid == 4 ? 16 : 0) + (grid == 5 ? 32 : 0) + (grid == 6 ? 64 : 0) + (grid == 7 ? 128 : 0);
    return 0;
}

/* The shader's shape bits (reduce.comp's N_GRID, N_U8). */
static uint32_t shape_feat(fold_shape f)
{
    return (f.grid ? TVK_N_GRID : 0) | (f.u8 ? TVK_N_U8 : 0) | (f.grid && f.block ? TVK_N_BLOCK : 0) |
           (f.nomm ? TVK_N_NOMM : 0) | (f.onebin ? TVK_N_ONEBIN : 0) | (f.xold ? TVK_N_XOLD : 0);
}

/* Workgroups. Grid-stride: enough for UU vectors per invocation at least, at most
 * f.groups. A share per workgroup: four vectors per invocation at least; past 1024
 * workgroups, 16 vectors per invocation and up to TVK_MAX_WG. Either way at most
 * TVK_MAX_WG_PART when partial records travel (the finish dispatch's one workgroup merges
 * them). */
static seg_plan plan_segment(const tvk_state *s, size_t es, VkDeviceSize off, uint64_t n, uint64_t k,
                             int part)
{
    seg_plan p;
    fold_shape f = shape_now();
    uint64_t per = s->seg_bytes / es;
    p.e0 = k * per;
    p.ne = n - p.e0 < per ? n - p.e0 : per;
    uint64_t byte0 = off + p.e0 * es;
    uint64_t head = byte0 & (s->align - 1);
    uint64_t nvec = (head + p.ne * es + 15) / 16;
    uint64_t g;
    if (f.grid) {
        uint64_t span = (uint64_t)TVK_WG * (f.u8 ? 8 : 4);
        g = (nvec + span - 1) / span;
        if (g > f.groups) g = f.groups;
        if (g < 1) g = 1;
    } else {
        g = (nvec + TVK_WG * 4 - 1) / (TVK_WG * 4);
        if (g < 1) g = 1;
        if (g > 1024) {
            uint64_t g16 = (nvec + TVK_WG * 16 - 1) / (TVK_WG * 16);
            g = g16 > 1024 ? g16 : 1024;
        }
    }
    uint64_t cap = part ? TVK_MAX_WG_PART : TVK_MAX_WG;
    if (g > cap) g = cap;
    if (f.grid) { /* the shader ignores the share; every workgroup sweeps the segment */
        p.nvec = (uint32_t)nvec;
        p.vec_per_wg = (uint32_t)nvec;
        p.groups = (uint32_t)g;
        return p;
    }
    uint64_t vpw = (nvec + g - 1) / g;
    p.nvec = (uint32_t)nvec;
    p.vec_per_wg = (uint32_t)vpw;
    p.groups = (uint32_t)((nvec + vpw - 1) / vpw);
    return p;
}

/* Partial records (rather than atomics alone) for these needs: integer products, and
 * argmin/argmax whose key and index do not pack into 64 bits. */
static int needs_part(tally_type type, uint64_t n, uint32_t feat)
{
    if ((feat & TALLY_NEED_PROD) && !tally_type_is_float(type)) return 1;
    if ((feat & (TALLY_NEED_ARGMIN | TALLY_NEED_ARGMAX)) && (tally_type_size(type) > 4 || n >= 0xffffffffull))
        return 1;
    return 0;
}

/* The accumulators: slots 0 .. TVK_MAX_BATCH-1, zero between calls (each call's finish
 * dispatch zeroes its slot). */
tally_status tvk_ensure_acc(tally_context *ctx, tvk_state *s, const char *fn)
{
    VkDeviceSize bytes = (VkDeviceSize)TVK_MAX_BATCH * TVK_ACC_STRIDE;
    if (!s->acc.buf || s->acc.size < bytes) s->acc_zeroed = 0;
    tally_status st = tvk_buf_ensure(ctx, s, &s->acc, bytes, 0, fn);
    if (st != TALLY_OK) return st;
    if (!s->acc_zeroed) {
        s->fd.vkCmdFillBuffer(s->cb, s->acc.buf, 0, bytes, 0);
        tvk_barrier(s);
        s->acc_zeroed = 1;
    }
    return TALLY_OK;
}

/* One reduce pass of one call, recorded: its fold dispatches now (record_folds), its finish
 * dispatch later (record_finish), so that calls batched into one command buffer share the
 * barrier between folds and finishes; none where the fold's last workgroup finishes. */
typedef struct pass_rec {
    VkPipeline pipe; /* the finish's; VK_NULL_HANDLE: the folds finish the call */
    tvk_range b[4];
    tvk_reduce_pc pc;
} pass_rec;

/* Partial records a pass over n elements at byte offset off writes (0: atomics only). */
static uint64_t pass_parts(const tvk_state *s, tally_type type, VkDeviceSize off, uint64_t n,
                           uint32_t feat)
{
    size_t es = tally_type_size(type);
    if (!needs_part(type, n, feat)) return 0;
    uint64_t nseg = seg_count(s, es, n), total = 0;
    for (uint64_t k = 0; k < nseg; k++) total += plan_segment(s, es, off, n, k, 1).groups;
    return total;
}

/* Dispatches (bindings) a pass over n elements takes: its folds and its finish. */
static uint64_t pass_binds(const tvk_state *s, tally_type type, uint64_t n)
{
    return seg_count(s, tally_type_size(type), n) + 1;
}

/* Records the fold dispatches of one pass over every segment: accumulator slot `slot`, record
 * slot `rec` of hostres, partial records from part_base (parts must hold them: pass_parts).
 * Where every field travels by atomics (no partial records), the fold's last workgroup, found
 * by a ticket counting every segment's workgroups, finishes the call (reduce.comp,
 * fold_ticket) and out->pipe is VK_NULL_HANDLE, with TALLY_VULKAN_REDUCE_FINISH=ticket; by default
 * the finish dispatch. */
static tally_status record_folds(tally_context *ctx, tvk_state *s, const char *fn, tally_type type,
                                 tvk_src src, uint64_t n, uint32_t feat, int omit,
                                 uint64_t mean_bits, uint32_t slot, uint32_t rec,
                                 uint32_t part_base, pass_rec *out)
{
    size_t es = tally_type_size(type);
    int part = needs_part(type, n, feat);
    if ((feat & (TALLY_NEED_ARGMIN | TALLY_NEED_ARGMAX)) && !part) feat |= TVK_N_PACK;
    fold_shape f = shape_now();
    feat |= shape_feat(f);
    uint64_t nseg = seg_count(s, es, n), total = 0;
    for (uint64_t k = 0; k < nseg; k++) total += plan_segment(s, es, src.off, n, k, part).groups;
    int ticket = !part && !f.joined && !f.findisp;
    tally_status st;
    VkPipeline pipe;
    VkPipeline fin_pipe = VK_NULL_HANDLE;
    if (ticket) {
        if ((st = tvk_pipeline(ctx, s, TVK_SH_REDUCE, type, feat | TVK_N_ONLY_FOLD | TVK_N_TICKET, (uint32_t)omit,
                               0, &pipe)) != TALLY_OK)
            return st;
    } else if (f.joined) {
        if ((st = tvk_pipeline(ctx, s, TVK_SH_REDUCE, type, feat, (uint32_t)omit, (uint32_t)part, &pipe)) != TALLY_OK)
            return st;
        fin_pipe = pipe;
    } else if ((st = tvk_pipeline(ctx, s, TVK_SH_REDUCE, type, feat | TVK_N_ONLY_FOLD, (uint32_t)omit,
                                  (uint32_t)part, &pipe)) != TALLY_OK ||
               (st = tvk_pipeline(ctx, s, TVK_SH_REDUCE, type, feat | TVK_N_ONLY_FIN, (uint32_t)omit,
                                  (uint32_t)part, &fin_pipe)) != TALLY_OK)
        return st;
    uint32_t part0 = part_base;
    tvk_reduce_pc pc;
    tvk_range b[4] = {{0}};
    for (uint64_t k = 0; k < nseg; k++) {
        seg_plan p = plan_segment(s, es, src.off, n, k, part);
        memset(&pc, 0, sizeof pc);
        memset(b, 0, sizeof b);
        b[0] = tvk_window(s, src.buf, src.off + p.e0 * es, p.ne * es, &pc.head);
        b[1] = (tvk_range){s->hostres.buf, (VkDeviceSize)rec * TVK_REC_STRIDE, sizeof(tvk_partial)};
        if (part) b[2] = (tvk_range){s->parts.buf, 0, s->parts.size};
        b[3] = (tvk_range){s->acc.buf, (VkDeviceSize)slot * TVK_ACC_STRIDE, TVK_ACC_STRIDE};
        pc.n = p.ne;
        pc.gbase = p.e0;
        pc.mean_bits = mean_bits;
        pc.vec_per_wg = p.vec_per_wg;
        pc.part0 = part0;
        pc.nvec = p.nvec;
        pc.total_wg = (uint32_t)total;
        pc.fin = 0;
        if ((st = tvk_bind(ctx, s, pipe, b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
        s->fd.vkCmdDispatch(s->cb, p.groups, 1, 1);
        part0 += p.groups;
    }
    out->pipe = fin_pipe;
    memcpy(out->b, b, sizeof b);
    out->pc = pc;
    out->pc.part0 = part_base;
    out->pc.fin = 1;
    return TALLY_OK;
}

/* The finish: one workgroup reads what every fold workgroup of its call added or wrote. The
 * barrier before it (recorded by the caller: compute -> compute, shader writes -> shader reads
 * and writes) is what makes every atomic of the fold dispatches complete and visible to it; the
 * barrier after it (the caller's too) orders the record for the host and the accumulator's
 * zeroing before the next call. Bindings as the last segment's (the input binding is valid and
 * unread). */
static tally_status record_finish(tally_context *ctx, tvk_state *s, const char *fn, const pass_rec *r)
{
    if (r->pipe == VK_NULL_HANDLE) return TALLY_OK; /* the folds finished the call */
    tally_status st = tvk_bind(ctx, s, r->pipe, r->b, &r->pc, sizeof r->pc, fn);
    if (st != TALLY_OK) return st;
    s->fd.vkCmdDispatch(s->cb, 1, 1, 1);
    return TALLY_OK;
}

/* Records one reduce pass over every segment: its record lands in hostres at
 * slot * TVK_REC_STRIDE, through accumulator slot `slot`. */
static tally_status record_pass(tally_context *ctx, tvk_state *s, const char *fn, tally_type type,
                                tvk_src src, uint64_t n, uint32_t feat, int omit,
                                uint64_t mean_bits, uint32_t slot)
{
    uint64_t total = pass_parts(s, type, src.off, n, feat);
    tally_status st;
    if (total && (st = tvk_buf_ensure(ctx, s, &s->parts, total * sizeof(tvk_partial), 0, fn)) != TALLY_OK)
        return st;
    if ((st = tvk_ensure_acc(ctx, s, fn)) != TALLY_OK) return st;
    pass_rec r;
    if ((st = record_folds(ctx, s, fn, type, src, n, feat, omit, mean_bits, slot, slot, 0, &r)) != TALLY_OK)
        return st;
    if (s->timing && !s->split_written) { /* benchmarks: where the folds end */
        s->fd.vkCmdWriteTimestamp(s->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->qpool, 2);
        s->split_written = 1;
    }
    if (r.pipe != VK_NULL_HANDLE) {
        tvk_barrier(s);
        if ((st = record_finish(ctx, s, fn, &r)) != TALLY_OK) return st;
    }
    tvk_barrier(s);
    return TALLY_OK;
}

/* Records the float product's lanes (fprod.comp) into aux and their copy to hostres at
 * lanes_off; the edge flag follows the lanes. */
static tally_status record_fprod(tally_context *ctx, tvk_state *s, const char *fn, tally_type type,
                                 tvk_src src, uint64_t n, int omit, VkDeviceSize lanes_off,
                                 int preserve)
{
    size_t es = tally_type_size(type);
    uint64_t nblk = (n + TALLY_PROD_BLOCK - 1) / TALLY_PROD_BLOCK;
    VkDeviceSize lanes_bytes = nblk * TALLY_PROD_LANES * 8;
    VkDeviceSize flag_off = (lanes_bytes + s->align - 1) & ~(VkDeviceSize)(s->align - 1);
    tally_status st = tvk_buf_ensure(ctx, s, &s->aux, flag_off + 256, 0, fn);
    if (st != TALLY_OK) return st;
    VkPipeline pipe;
    st = tvk_pipeline(ctx, s, preserve ? TVK_SH_FPROD_DP : TVK_SH_FPROD, type, 0, (uint32_t)omit, 0, &pipe);
    if (st != TALLY_OK) return st;
    s->fd.vkCmdFillBuffer(s->cb, s->aux.buf, flag_off, 4, 0);
    tvk_barrier(s);
    uint64_t nseg = seg_count(s, es, n);
    for (uint64_t k = 0; k < nseg; k++) {
        seg_plan p = plan_segment(s, es, src.off, n, k, 0);
        struct { uint64_t n; uint32_t head, blk0; } pc;
        tvk_range b[4] = {{0}};
        b[0] = tvk_window(s, src.buf, src.off + p.e0 * es, p.ne * es, &pc.head);
        b[2] = (tvk_range){s->aux.buf, 0, lanes_bytes};
        b[3] = (tvk_range){s->aux.buf, flag_off, 4};
        pc.n = p.ne;
        pc.blk0 = (uint32_t)(p.e0 / TALLY_PROD_BLOCK);
        if ((st = tvk_bind(ctx, s, pipe, b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
        uint64_t threads = (p.ne + TALLY_PROD_BLOCK - 1) / TALLY_PROD_BLOCK * TALLY_PROD_LANES;
        s->fd.vkCmdDispatch(s->cb, (uint32_t)((threads + TVK_WG - 1) / TVK_WG), 1, 1);
    }
    tvk_barrier(s);
    VkBufferCopy c[2] = {{0, lanes_off, lanes_bytes}, {flag_off, lanes_off + lanes_bytes, 4}};
    s->fd.vkCmdCopyBuffer(s->cb, s->aux.buf, s->hostres.buf, 2, c);
    tvk_barrier(s);
    return TALLY_OK;
}

/* f32 order keys (32-bit) to the core's f64 keys. */
static uint64_t key32_to_key64(uint64_t k)
{
    uint32_t kk = (uint32_t)k;
    uint32_t b = (kk >> 31) ? kk & 0x7fffffffu : ~kk;
    float f;
    memcpy(&f, &b, 4);
    return tally_key_from_f64((double)f);
}

/* The merged record as the core's partial. */
static void to_partial(const tvk_partial *r, tally_type type, uint64_t n, uint32_t need, int omit,
                       tally_partial *p)
{
    tally_partial_init(p, type, need, omit);
    p->n = n;
    if (tally_type_is_float(type)) p->nans = r->nans;
    if (need & TALLY_NEED_SUM) {
        if (tally_type_is_float(type)) {
            for (int i = 0; i < TALLY_EXACT_CHUNKS; i++) p->fsum.chunk[i] = r->chunk[i];
            p->fsum.nadds = 1; /* the finish dispatch normalised the digits */
            p->fsum.flags = r->xflags & 31u;
        } else {
            unsigned __int128 v = ((unsigned __int128)r->sum_hi << 64) | r->sum_lo;
            if (tally_type_is_signed_int(type)) p->isum = (__int128)v;
            else p->usum = v;
        }
    }
    int f32 = type == TALLY_F32;
    p->kmin = f32 && r->imin != UINT64_MAX ? key32_to_key64(r->kmin) : r->kmin;
    p->kmax = f32 && r->imax != UINT64_MAX ? key32_to_key64(r->kmax) : r->kmax;
    p->imin = r->imin;
    p->imax = r->imax;
    p->first_nan = r->first_nan;
    p->band = r->band;
    p->bor = r->bor;
    p->bxor = r->bxor;
    if ((need & TALLY_NEED_PROD) && !tally_type_is_float(type)) {
        int sg = tally_type_is_signed_int(type);
        p->prod_zero = (r->pflags & 1u) != 0;
        p->prod_ovf = (r->pflags & 2u) != 0 || (sg && r->pmag > (1ull << 63));
        if (sg) p->iprod = (r->pflags & 4u) ? -(__int128)r->pmag : (__int128)r->pmag;
        else p->uprod = r->pmag;
    }
}

/* One op's result on the CPU backend (the fallbacks), from the host copy of the data or a
 * download of it. */
static tally_status cpu_result(tally_context *ctx, tvk_state *s, const char *fn, tally_type type,
                               tvk_src src, uint64_t n, tally_op op,
                               const tally_reduce_options *opts, tally_result *r)
{
    tally_context *cpu;
    tally_status st = tvk_cpu(ctx, s, &cpu);
    if (st != TALLY_OK) return st;
    const void *data = src.host;
    if (!data) {
        st = tvk_download(ctx, s, src.buf, src.off, n * tally_type_size(type), &data, fn);
        if (st != TALLY_OK) return st;
    }
    tally_reduce_many(cpu, type, data, n, &op, 1, opts, r);
    return TALLY_OK;
}

/* ---- the speculative compensated sum (spec.comp) ---------------------------------------------
 * One-shot f32/f64 SUM calls first run spec.comp: per invocation a triple (s, c, D) by the rules
 * of src/core/exact_sum.h's block "Speculative compensated sums", merged to one triple per
 * workgroup (fold dispatches, one per segment, records in s->parts) and to one for the call (a
 * finish dispatch of one workgroup, record 0 of hostres). The host adds that triple's s and c
 * exactly into a tally_exact V, bounds |true sum - V| by E = D * 2^-53 * 1.001 and answers when
 * tally_exact_round_within(V, E) decides the rounding: the answer is then the exact sum rounded
 * once, the bits of the exact path. Otherwise (an input the shader flagged, a non-finite value,
 * a zero or overflowing result, or a sum too close to a rounding boundary) the call runs the
 * exact path (reduce.comp) as if the tier did not exist. Why the device's float arithmetic
 * (flush-to-zero, contraction) cannot break the invariant: spec.comp's header. */
#define TVK_SPEC_GROUPS 2048u       /* fold workgroups per segment at most */
#define TVK_SPEC_MAX_N (1ull << 40) /* longer calls skip the tier (the bound's chain length) */

typedef struct tvk_spec_rec { /* spec.comp's struct Trip */
    uint64_t s, c, d, flag;
} tvk_spec_rec;

typedef struct tvk_spec_pc { /* spec.comp's push constants */
    uint64_t n;
    uint32_t head, rec0, nrec, fin;
} tvk_spec_pc;

static int spec_applies(const tvk_state *s, tally_type type, uint64_t n, const tally_op *ops, size_t nops)
{
    if (!s->spec || (type != TALLY_F32 && type != TALLY_F64) || n == 0 || n > TVK_SPEC_MAX_N || nops == 0)
        return 0;
    if (type == TALLY_F32 && s->spec < 2) return 0; /* TALLY_VULKAN_SPEC=1: f64 only */
    for (size_t i = 0; i < nops; i++)
        if (ops[i] != TALLY_SUM) return 0;
    return 1;
}

static int f64_bits_finite(uint64_t b) { return ((b >> 52) & 0x7ff) != 0x7ff; }

/* The host's half of the decision: 1 and *out when the record decides the rounding. */
static int spec_decide(const tvk_spec_rec *r, double *out)
{
    if (r->flag || !f64_bits_finite(r->s) || !f64_bits_finite(r->c) || !f64_bits_finite(r->d)) return 0;
    double sv, cv, dv;
    memcpy(&sv, &r->s, 8);
    memcpy(&cv, &r->c, 8);
    memcpy(&dv, &r->d, 8);
    if (dv < 0) return 0;
    tally_exact v;
    tally_exact_init(&v);
    tally_exact_add(&v, sv);
    tally_exact_add(&v, cv);
    return tally_exact_round_within(&v, tally_exact_spec_bound(dv), out);
}

/* Fold workgroups of a segment: a step of spec_u vectors per invocation at least, at most
 * TVK_SPEC_GROUPS. */
static uint32_t spec_groups(const tvk_state *s, seg_plan p)
{
    uint64_t per = (uint64_t)TVK_WG * s->spec_u, most = s->spec_groups ? s->spec_groups : TVK_SPEC_GROUPS;
    uint64_t g = ((uint64_t)p.nvec + per - 1) / per;
    return (uint32_t)(g < 1 ? 1 : g > most ? most : g);
}

/* Records of one call's tier: its fold workgroups over every segment. */
static uint64_t spec_nrec(const tvk_state *s, tally_type type, VkDeviceSize off, uint64_t n)
{
    size_t es = tally_type_size(type);
    uint64_t nseg = seg_count(s, es, n), nrec = 0;
    for (uint64_t k = 0; k < nseg; k++) nrec += spec_groups(s, plan_segment(s, es, off, n, k, 0));
    return nrec;
}

/* Records one call's fold dispatches: its records rec0 .. rec0 + spec_nrec - 1 of s->parts (which
 * holds nall). */
static tally_status spec_record_folds(tally_context *ctx, tvk_state *s, const char *fn, VkPipeline pipe,
                                      tally_type type, tvk_src src, uint64_t n, uint32_t rec0, uint64_t nall)
{
    size_t es = tally_type_size(type);
    uint64_t nseg = seg_count(s, es, n);
    tally_status st;
    for (uint64_t k = 0; k < nseg; k++) {
        seg_plan p = plan_segment(s, es, src.off, n, k, 0);
        tvk_spec_pc pc;
        memset(&pc, 0, sizeof pc);
        tvk_range b[4] = {{0}};
        b[0] = tvk_window(s, src.buf, src.off + p.e0 * es, p.ne * es, &pc.head);
        b[1] = (tvk_range){s->hostres.buf, 0, sizeof(tvk_spec_rec)};
        b[2] = (tvk_range){s->parts.buf, 0, nall * sizeof(tvk_spec_rec)};
        b[3] = (tvk_range){s->dummy.buf, 0, s->dummy.size};
        pc.n = p.ne;
        pc.rec0 = rec0;
        if ((st = tvk_bind(ctx, s, pipe, b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
        uint32_t groups = spec_groups(s, p);
        s->fd.vkCmdDispatch(s->cb, groups, 1, 1);
        rec0 += groups;
    }
    return TALLY_OK;
}

/* Records one call's finish: its nrec records from rec0 merged into one, written at byte out_off
 * of hostres. */
static tally_status spec_record_finish(tally_context *ctx, tvk_state *s, const char *fn, VkPipeline pipe,
                                       uint32_t rec0, uint32_t nrec, uint64_t nall, VkDeviceSize out_off)
{
    tvk_spec_pc pc;
    memset(&pc, 0, sizeof pc);
    tvk_range b[4] = {{0}};
    b[0] = (tvk_range){s->dummy.buf, 0, s->dummy.size};
    b[1] = (tvk_range){s->hostres.buf, out_off, sizeof(tvk_spec_rec)};
    b[2] = (tvk_range){s->parts.buf, 0, nall * sizeof(tvk_spec_rec)};
    b[3] = b[0];
    pc.rec0 = rec0;
    pc.nrec = nrec;
    pc.fin = 1;
    tally_status st = tvk_bind(ctx, s, pipe, b, &pc, sizeof pc, fn);
    if (st == TALLY_OK) s->fd.vkCmdDispatch(s->cb, 1, 1, 1);
    return st;
}

/* Reads the record at byte off of hostres and decides; counts the tier's answers. */
static int spec_read_decide(tvk_state *s, VkDeviceSize off, double *out)
{
    tvk_spec_rec r;
    memcpy(&r, (const char *)s->hostres.map + off, sizeof r);
    int answered = spec_decide(&r, out);
    if (answered) s->spec_answered++;
    else s->spec_declined++;
    return answered;
}

/* An answered call's results: every op is SUM, each gets the correctly rounded sum v. */
static void spec_results(const tally_op *ops, size_t nops, double v, tally_result *results)
{
    for (size_t i = 0; i < nops; i++) {
        results[i].op = ops[i];
        results[i].type = TALLY_F64;
        results[i].status = TALLY_OK;
        results[i].index = 0;
        results[i].value.f64 = v;
    }
}

/* Runs the tier on n elements at src (the command buffer begun by the caller when open, with
 * its upload). Returns TALLY_OK with *answered 1 and *out, or *answered 0 (the caller runs the
 * exact path in a new command buffer). */
static tally_status spec_sum(tally_context *ctx, tvk_state *s, const char *fn, tally_type type,
                             tvk_src src, uint64_t n, int open, int *answered, double *out)
{
    *answered = 0;
    uint64_t nrec = spec_nrec(s, type, src.off, n);
    tally_status st = tvk_buf_ensure(ctx, s, &s->parts, nrec * sizeof(tvk_spec_rec), 0, fn);
    if (st != TALLY_OK) return st;
    VkPipeline pipe;
    if ((st = tvk_pipeline(ctx, s, TVK_SH_SPEC, type, s->spec_u, s->spec_t, s->spec_sf & 7u, &pipe)) != TALLY_OK) return st;
    if (!open && (st = tvk_begin(ctx, s, fn)) != TALLY_OK) return st;
    if ((st = spec_record_folds(ctx, s, fn, pipe, type, src, n, 0, nrec)) != TALLY_OK) goto fail;
    if (s->timing && !s->split_written) {
        s->fd.vkCmdWriteTimestamp(s->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->qpool, 2);
        s->split_written = 1;
    }
    tvk_barrier(s); /* the folds' records before the finish reads them */
    if ((st = spec_record_finish(ctx, s, fn, pipe, 0, (uint32_t)nrec, nrec, 0)) != TALLY_OK) goto fail;
    tvk_barrier(s); /* the record before the host reads it */
    if ((st = tvk_submit_wait(ctx, s, fn)) != TALLY_OK) return st;
    *answered = spec_read_decide(s, 0, out);
    return TALLY_OK;
fail:
    s->fd.vkEndCommandBuffer(s->cb); /* abandoned: the next call resets it */
    return st;
}

/* A batch group's tier: the calls [i0, i1) with want[j] set (one-shot f32/f64 sums) run the
 * tier in one command buffer (the group's uploads first when open): every call's folds, one
 * barrier, every call's finish (call j's record in its slot j of hostres), one barrier, one
 * submission. Each call answered gets its results here and done[j] = 1; the others run the
 * group's exact pass afterwards, as without the tier. So a batch of sums costs one submission
 * when the tier answers them all, as the single call does. */
static tally_status spec_group(tally_context *ctx, tvk_state *s, const char *fn, const tvk_item *items,
                               uint64_t i0, uint64_t i1, const int *want, int *done, int open)
{
    uint32_t rec0[TVK_MAX_BATCH], nrec[TVK_MAX_BATCH];
    uint64_t nall = 0;
    for (uint64_t k = i0; k < i1; k++) {
        uint32_t j = (uint32_t)(k - i0);
        if (!want[j]) continue;
        rec0[j] = (uint32_t)nall;
        nrec[j] = (uint32_t)spec_nrec(s, items[k].type, items[k].src.off, items[k].n);
        nall += nrec[j];
    }
    tally_status st = tvk_buf_ensure(ctx, s, &s->parts, nall * sizeof(tvk_spec_rec), 0, fn);
    if (st != TALLY_OK) {
        if (open) s->fd.vkEndCommandBuffer(s->cb);
        return st;
    }
    if (!open && (st = tvk_begin(ctx, s, fn)) != TALLY_OK) return st;
    VkPipeline pipe[TVK_MAX_BATCH];
    for (uint64_t k = i0; k < i1 && st == TALLY_OK; k++) {
        uint32_t j = (uint32_t)(k - i0);
        if (!want[j]) continue;
        st = tvk_pipeline(ctx, s, TVK_SH_SPEC, items[k].type, s->spec_u, s->spec_t, s->spec_sf & 7u, &pipe[j]);
        if (st == TALLY_OK)
            st = spec_record_folds(ctx, s, fn, pipe[j], items[k].type, items[k].src, items[k].n, rec0[j], nall);
    }
    if (st == TALLY_OK) tvk_barrier(s);
    for (uint64_t k = i0; k < i1 && st == TALLY_OK; k++) {
        uint32_t j = (uint32_t)(k - i0);
        if (want[j])
            st = spec_record_finish(ctx, s, fn, pipe[j], rec0[j], nrec[j], nall, (VkDeviceSize)j * TVK_REC_STRIDE);
    }
    if (st != TALLY_OK) {
        s->fd.vkEndCommandBuffer(s->cb); /* abandoned: the next call resets it */
        return st;
    }
    tvk_barrier(s);
    if ((st = tvk_submit_wait(ctx, s, fn)) != TALLY_OK) return st;
    for (uint64_t k = i0; k < i1; k++) {
        uint32_t j = (uint32_t)(k - i0);
        double v;
        done[j] = want[j] && spec_read_decide(s, (VkDeviceSize)j * TVK_REC_STRIDE, &v);
        if (done[j]) spec_results(items[k].ops, items[k].nops, v, items[k].results);
    }
    return TALLY_OK;
}

/* Benchmarks and tests: the tier on or off for later calls (returns the previous setting), and
 * the calls it answered and declined since the context was made. */
TVK_BENCH_SETTER(tally_vulkan_bench_spec, int, spec)
/* spec.comp's shape for later calls (returns the previous value): independent triples per
 * invocation (1, 2, 4), 16-byte loads in flight (4, 8), fold workgroups per segment at most (0:
 * the default, 2048), the SF bits (spec.comp: 1 step written out, 2 f32 vectors summed first,
 * 4 selects for the f32 widening's branches) */
TVK_BENCH_SETTER(tally_vulkan_bench_spec_t, uint32_t, spec_t)
TVK_BENCH_SETTER(tally_vulkan_bench_spec_u, uint32_t, spec_u)
TVK_BENCH_SETTER(tally_vulkan_bench_spec_groups, uint32_t, spec_groups)
TVK_BENCH_SETTER(tally_vulkan_bench_spec_sf, uint32_t, spec_sf)

/* Benchmarks: probe.comp (bench_vulkan --probe-f32) over n f32 values at byte 0 of buf (n a
 * multiple of 4): mode, accumulators nch and loads in flight uu as the shader's header says, at
 * most `groups` workgroups per segment (0: 2048), a fold dispatch per segment and a finish, as
 * spec_sum records them. out[0], out[1]: the plain f64 sums the shader reports (s, c); *maxbits:
 * the largest bits (mode 0). Timestamps as every call's when timing is on. */
TALLY_API tally_status tally_vulkan_bench_probe(tally_context *ctx, VkBuffer buf, uint64_t n, uint32_t mode,
                                                uint32_t nch, uint32_t uu, uint32_t groups, double out[2],
                                                uint32_t *maxbits)
{
    static const char fn[] = "tally_vulkan_bench_probe";
    tvk_state *s = tvk_state_of(ctx);
    if (!s) return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: not a Vulkan context", fn);
    if (n == 0 || n % 4 || mode > 7 || (nch != 1 && nch != 2 && nch != 4 && nch != 8) || ((mode == 3 || mode == 7) && nch > 4) ||
        (uu != 4 && uu != 8) || (s->seg_bytes / 4) % 4)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: n %llu (a multiple of 4), mode %u (0-7), "
                               "nch %u (1, 2, 4, 8; modes 3, 7: at most 4), uu %u (4, 8)", fn,
                               (unsigned long long)n, mode, nch, uu);
    uint64_t nseg = seg_count(s, 4, n), nrec = 0;
    uint64_t most = groups ? groups : TVK_SPEC_GROUPS, span = (uint64_t)TVK_WG * uu;
    for (uint64_t k = 0; k < nseg; k++) {
        seg_plan p = plan_segment(s, 4, 0, n, k, 0);
        uint64_t g = (p.nvec + span - 1) / span;
        nrec += g < 1 ? 1 : g > most ? most : g;
    }
    tally_status st = tvk_buf_ensure(ctx, s, &s->parts, nrec * sizeof(tvk_spec_rec), 0, fn);
    if (st == TALLY_OK) st = tvk_buf_ensure(ctx, s, &s->hostres, sizeof(tvk_spec_rec), 1, fn);
    if (st != TALLY_OK) return st;
    VkPipeline pipe;
    if ((st = tvk_pipeline(ctx, s, TVK_SH_PROBE, TALLY_F32, mode, nch, uu, &pipe)) != TALLY_OK) return st;
    if ((st = tvk_begin(ctx, s, fn)) != TALLY_OK) return st;
    tvk_spec_pc pc;
    tvk_range b[4] = {{0}};
    uint32_t rec0 = 0;
    for (uint64_t k = 0; k < nseg; k++) {
        seg_plan p = plan_segment(s, 4, 0, n, k, 0);
        memset(&pc, 0, sizeof pc);
        b[0] = tvk_window(s, buf, p.e0 * 4, p.ne * 4, &pc.head);
        b[1] = (tvk_range){s->hostres.buf, 0, sizeof(tvk_spec_rec)};
        b[2] = (tvk_range){s->parts.buf, 0, nrec * sizeof(tvk_spec_rec)};
        b[3] = (tvk_range){s->dummy.buf, 0, s->dummy.size};
        pc.n = p.ne;
        pc.rec0 = rec0;
        if ((st = tvk_bind(ctx, s, pipe, b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
        uint64_t g = (p.nvec + span - 1) / span;
        g = g < 1 ? 1 : g > most ? most : g;
        s->fd.vkCmdDispatch(s->cb, (uint32_t)g, 1, 1);
        rec0 += (uint32_t)g;
    }
    if (s->timing && !s->split_written) {
        s->fd.vkCmdWriteTimestamp(s->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->qpool, 2);
        s->split_written = 1;
    }
    tvk_barrier(s);
    memset(&pc, 0, sizeof pc);
    pc.nrec = rec0;
    pc.fin = 1;
    if ((st = tvk_bind(ctx, s, pipe, b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
    s->fd.vkCmdDispatch(s->cb, 1, 1, 1);
    tvk_barrier(s);
    if ((st = tvk_submit_wait(ctx, s, fn)) != TALLY_OK) return st;
    tvk_spec_rec r;
    memcpy(&r, s->hostres.map, sizeof r);
    memcpy(&out[0], &r.s, 8);
    memcpy(&out[1], &r.c, 8);
    *maxbits = (uint32_t)r.flag;
    return TALLY_OK;
}
TALLY_API void tally_vulkan_spec_counts(const tally_context *ctx, uint64_t *answered, uint64_t *declined)
{
    tvk_state *s = tvk_state_of(ctx);
    *answered = s ? s->spec_answered : 0;
    *declined = s ? s->spec_declined : 0;
}

tally_status tvk_reduce(tally_context *ctx, tvk_state *s, const char *fn, tally_type type,
                        tvk_src src, uint64_t n, const tally_op *ops, size_t nops,
                        const tally_reduce_options *opts, tally_result *results)
{
    int fl = tally_type_is_float(type);
    int omit = opts->omit_nan ? 1 : 0;
    uint32_t need = tally_ops_need(type, ops, nops, omit);
    int want_var = 0;
    for (size_t i = 0; i < nops; i++) want_var |= ops[i] == TALLY_VAR;
    int fprod = fl && (need & TALLY_NEED_PROD) && n > 0;
    int prod_preserve = type == TALLY_F32 ? s->info.denorm_preserve64 : s->info.denorm_preserve64;
    int prod_dev = fprod && (prod_preserve || s->float_shaders);
    uint32_t feat = need & ~(uint32_t)(fl ? TALLY_NEED_PROD : 0);
    if (n == 0) feat = 0;
    uint64_t nblk = fprod ? (n + TALLY_PROD_BLOCK - 1) / TALLY_PROD_BLOCK : 0;
    const VkDeviceSize lanes_off = (VkDeviceSize)TVK_MAX_BATCH * TVK_REC_STRIDE;
    tally_status st = tvk_buf_ensure(ctx, s, &s->hostres, lanes_off + nblk * 64 + 64, 1, fn);
    if (st != TALLY_OK) return st;
    int open = s->open;
    s->open = 0;
    if (spec_applies(s, type, n, ops, nops)) {
        int answered;
        double v;
        if ((st = spec_sum(ctx, s, fn, type, src, n, open, &answered, &v)) != TALLY_OK) return st;
        if (answered) {
            spec_results(ops, nops, v, results);
            return TALLY_OK;
        }
        open = 0; /* declined: the exact path below, in a command buffer of its own */
    }
    if (feat || prod_dev) {
        if (!open && (st = tvk_begin(ctx, s, fn)) != TALLY_OK) return st;
        if (feat && (st = record_pass(ctx, s, fn, type, src, n, feat, omit, 0, 0)) != TALLY_OK) return st;
        if (prod_dev && (st = record_fprod(ctx, s, fn, type, src, n, omit, lanes_off, prod_preserve)) != TALLY_OK)
            return st;
        if ((st = tvk_submit_wait(ctx, s, fn)) != TALLY_OK) return st;
    } else if (open) { /* only the upload was recorded: nothing to do on the device */
        if ((st = tvk_submit_wait(ctx, s, fn)) != TALLY_OK) return st;
    }
    tvk_partial rec;
    if (feat) memcpy(&rec, s->hostres.map, sizeof rec);
    else {
        memset(&rec, 0, sizeof rec);
        rec.kmin = rec.imin = rec.imax = rec.first_nan = UINT64_MAX;
        rec.band = UINT64_MAX;
        rec.pmag = 1;
    }
    tally_partial p;
    to_partial(&rec, type, n, need, omit, &p);
    int prod_cpu = fprod && !prod_dev;
    if (prod_dev) {
        const uint64_t *lanes = (const uint64_t *)((const char *)s->hostres.map + lanes_off);
        uint32_t edge;
        memcpy(&edge, (const char *)s->hostres.map + lanes_off + nblk * 64, 4);
        if (edge) {
            prod_cpu = 1;
        } else {
            uint64_t full = n / TALLY_PROD_BLOCK;
            for (uint64_t b = 0; b < full; b++) {
                double l[TALLY_PROD_LANES];
                memcpy(l, lanes + b * TALLY_PROD_LANES, sizeof l);
                tally_partial_prod_block(&p, tally_prod_lanes(l));
            }
            if (n % TALLY_PROD_BLOCK) {
                memcpy(p.lanes, lanes + full * TALLY_PROD_LANES, sizeof p.lanes);
                p.lane_pos = (uint32_t)(n % TALLY_PROD_BLOCK);
            }
        }
    }
    /* the variance: the exact sum of squared deviations, a second pass */
    tally_exact sq;
    const tally_exact *sqp = NULL;
    int var_cpu = 0;
    if (want_var) {
        tally_status ms;
        double mean = tally_partial_mean(&p, &ms);
        uint64_t cnt = omit ? p.n - p.nans : p.n;
        if (ms == TALLY_OK && cnt > (uint64_t)opts->ddof) {
            uint64_t mb;
            memcpy(&mb, &mean, 8);
            if ((st = tvk_begin(ctx, s, fn)) != TALLY_OK) return st;
            uint32_t f2 = TVK_N_SQDEV | (fl ? TALLY_NEED_NANS : 0);
            if ((st = record_pass(ctx, s, fn, type, src, n, f2, omit, mb, 0)) != TALLY_OK) return st;
            if ((st = tvk_submit_wait(ctx, s, fn)) != TALLY_OK) return st;
            tvk_partial r2;
            memcpy(&r2, s->hostres.map, sizeof r2);
            if (r2.xflags & TVK_XF_EDGE) {
                var_cpu = 1;
            } else {
                tally_exact_init(&sq);
                for (int i = 0; i < TALLY_EXACT_CHUNKS; i++) sq.chunk[i] = r2.chunk[i];
                sq.nadds = 1; /* the finish dispatch normalised the digits */
                sq.flags = r2.xflags & 31u;
                sqp = &sq;
            }
        }
    }
    for (size_t i = 0; i < nops; i++) {
        if ((ops[i] == TALLY_PROD && prod_cpu) || (ops[i] == TALLY_VAR && var_cpu)) {
            st = cpu_result(ctx, s, fn, type, src, n, ops[i], opts, &results[i]);
            if (st != TALLY_OK) return st;
        } else {
            tally_partial_result(&p, ops[i], opts->ddof, sqp, &results[i]);
        }
    }
    return TALLY_OK;
}

/* ---- many calls in few submissions (tally_vulkan_batch_*, tally_reduce_segments) ----------- */
/* A group: items recorded into one command buffer, each with its own accumulator and record
 * slot, their partial records one after another. Every fold of the group is recorded, then one
 * barrier, then every finish, then one barrier: a group of tiny calls costs one submission and
 * two barriers, not one submission each. Variances take a second submission for the group
 * (the deviations need the means). Float products, which need fprod.comp's lane buffer of one
 * call, and the rare variance inputs the device cannot square exactly run on the CPU backend
 * (same bits). */
#define TVK_GROUP_PARTS 16384u /* partial records of one group (10 MiB) */

typedef struct item_plan {
    uint32_t need, feat;
    int omit, want_var, fprod;
} item_plan;

static item_plan plan_item(const tvk_item *it)
{
    item_plan q;
    int fl = tally_type_is_float(it->type);
    q.omit = it->opts->omit_nan ? 1 : 0;
    q.need = tally_ops_need(it->type, it->ops, it->nops, q.omit);
    q.want_var = 0;
    for (size_t i = 0; i < it->nops; i++) q.want_var |= it->ops[i] == TALLY_VAR;
    q.fprod = fl && (q.need & TALLY_NEED_PROD) && it->n > 0;
    q.feat = it->n ? q.need & ~(uint32_t)(fl ? TALLY_NEED_PROD : 0) : 0;
    return q;
}

/* The record of an item without a device pass (no elements): every field's identity. */
static void empty_record(tvk_partial *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->kmin = rec->imin = rec->imax = rec->first_nan = UINT64_MAX;
    rec->band = UINT64_MAX;
    rec->pmag = 1;
}

/* Records one pass (feat, means) for items [i0, i1) whose mask is set, folds then finishes,
 * submits and waits. The first pass of a group may find the command buffer begun (open). */
static tally_status group_pass(tally_context *ctx, tvk_state *s, const char *fn, const tvk_item *items,
                               uint64_t i0, uint64_t i1, const uint32_t *feat, const int *omit,
                               const uint64_t *mean_bits, int open)
{
    tally_status st;
    uint64_t parts = 0;
    for (uint64_t k = i0; k < i1; k++)
        if (feat[k - i0]) parts += pass_parts(s, items[k].type, items[k].src.off, items[k].n, feat[k - i0]);
    if (parts && (st = tvk_buf_ensure(ctx, s, &s->parts, parts * sizeof(tvk_partial), 0, fn)) != TALLY_OK)
        return st;
    if (!open && (st = tvk_begin(ctx, s, fn)) != TALLY_OK) return st;
    if ((st = tvk_ensure_acc(ctx, s, fn)) != TALLY_OK) return st;
    pass_rec *recs = malloc((size_t)(i1 - i0) * sizeof *recs);
    if (!recs) return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    uint64_t base = 0;
    int finishes = 0; /* finish dispatches to record */
    st = TALLY_OK;
    for (uint64_t k = i0; k < i1 && st == TALLY_OK; k++) {
        uint32_t j = (uint32_t)(k - i0);
        if (!feat[j]) continue;
        st = record_folds(ctx, s, fn, items[k].type, items[k].src, items[k].n, feat[j], omit[j],
                          mean_bits ? mean_bits[j] : 0, j, j, (uint32_t)base, &recs[j]);
        base += pass_parts(s, items[k].type, items[k].src.off, items[k].n, feat[j]);
        if (st == TALLY_OK && recs[j].pipe != VK_NULL_HANDLE) finishes = 1;
    }
    if (st == TALLY_OK && finishes) tvk_barrier(s);
    for (uint64_t k = i0; k < i1 && st == TALLY_OK; k++)
        if (feat[k - i0]) st = record_finish(ctx, s, fn, &recs[k - i0]);
    free(recs);
    if (st != TALLY_OK) {
        s->fd.vkEndCommandBuffer(s->cb); /* abandoned: the next call resets it */
        return st;
    }
    tvk_barrier(s);
    return tvk_submit_wait(ctx, s, fn);
}

tally_status tvk_reduce_list(tally_context *ctx, tvk_state *s, const char *fn, const tvk_item *items,
                             uint64_t nitems, int open)
{
    tally_status st = tvk_buf_ensure(ctx, s, &s->hostres, (VkDeviceSize)TVK_MAX_BATCH * TVK_REC_STRIDE + 64, 1, fn);
    if (st != TALLY_OK) return st;
    uint64_t budget = s->push_desc ? UINT64_MAX : TVK_MAX_SETS;
    uint32_t feat[TVK_MAX_BATCH], feat2[TVK_MAX_BATCH];
    int omit[TVK_MAX_BATCH], var_cpu[TVK_MAX_BATCH];
    uint64_t means[TVK_MAX_BATCH];
    item_plan plan[TVK_MAX_BATCH];
    tally_partial *p = malloc(TVK_MAX_BATCH * sizeof *p);
    tally_exact *sq = malloc(TVK_MAX_BATCH * sizeof *sq);
    if (!p || !sq) {
        free(p);
        free(sq);
        return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    uint64_t i0 = 0;
    while (i0 < nitems && st == TALLY_OK) {
        /* the group: up to TVK_MAX_BATCH items, within the descriptor sets and partial records */
        uint64_t i1 = i0, binds = 0, parts = 0;
        while (i1 < nitems && i1 - i0 < TVK_MAX_BATCH) {
            item_plan q = plan_item(&items[i1]);
            uint64_t b = q.feat ? pass_binds(s, items[i1].type, items[i1].n) : 0;
            uint64_t pp = q.feat ? pass_parts(s, items[i1].type, items[i1].src.off, items[i1].n, q.feat) : 0;
            if (i1 > i0 && (binds + b > budget || parts + pp > TVK_GROUP_PARTS)) break;
            if (b > budget) {
                free(p);
                free(sq);
                return tally_set_error(ctx, TALLY_ERR_BACKEND_FAILURE, "%s: too many dispatches in one call", fn);
            }
            plan[i1 - i0] = q;
            feat[i1 - i0] = q.feat;
            omit[i1 - i0] = q.omit;
            binds += b;
            parts += pp;
            i1++;
        }
        uint32_t ng = (uint32_t)(i1 - i0);
        /* the one-shot f32/f64 sums first take the speculative tier, together */
        int want[TVK_MAX_BATCH], done[TVK_MAX_BATCH], any_spec = 0;
        for (uint32_t j = 0; j < ng; j++) {
            const tvk_item *it = &items[i0 + j];
            want[j] = feat[j] && spec_applies(s, it->type, it->n, it->ops, it->nops);
            done[j] = 0;
            any_spec |= want[j];
        }
        if (any_spec) {
            if ((st = spec_group(ctx, s, fn, items, i0, i1, want, done, open)) != TALLY_OK) break;
            open = 0;
            for (uint32_t j = 0; j < ng; j++)
                if (done[j]) feat[j] = 0;
        }
        int any = 0;
        for (uint32_t j = 0; j < ng; j++) any |= feat[j] != 0;
        if (any) st = group_pass(ctx, s, fn, items, i0, i1, feat, omit, NULL, open);
        else if (open) st = tvk_submit_wait(ctx, s, fn); /* only an upload was recorded */
        open = 0;
        if (st != TALLY_OK) break;
        /* records to partials; the variances' means */
        int any_var = 0;
        for (uint32_t j = 0; j < ng; j++) {
            const tvk_item *it = &items[i0 + j];
            feat2[j] = 0;
            var_cpu[j] = 0;
            if (done[j]) continue; /* answered by the tier */
            tvk_partial rec;
            if (feat[j]) memcpy(&rec, (const char *)s->hostres.map + (size_t)j * TVK_REC_STRIDE, sizeof rec);
            else empty_record(&rec);
            to_partial(&rec, it->type, it->n, plan[j].need, plan[j].omit, &p[j]);
            if (plan[j].want_var) {
                tally_status ms;
                double mean = tally_partial_mean(&p[j], &ms);
                uint64_t cnt = plan[j].omit ? p[j].n - p[j].nans : p[j].n;
                if (ms == TALLY_OK && cnt > (uint64_t)it->opts->ddof) {
                    memcpy(&means[j], &mean, 8);
                    feat2[j] = TVK_N_SQDEV | (tally_type_is_float(it->type) ? TALLY_NEED_NANS : 0);
                    any_var = 1;
                }
            }
        }
        if (any_var && (st = group_pass(ctx, s, fn, items, i0, i1, feat2, omit, means, 0)) != TALLY_OK) break;
        for (uint32_t j = 0; j < ng && st == TALLY_OK; j++) {
            const tvk_item *it = &items[i0 + j];
            const tally_exact *sqp = NULL;
            if (done[j]) continue;
            if (feat2[j]) {
                tvk_partial r2;
                memcpy(&r2, (const char *)s->hostres.map + (size_t)j * TVK_REC_STRIDE, sizeof r2);
                if (r2.xflags & TVK_XF_EDGE) {
                    var_cpu[j] = 1;
                } else {
                    tally_exact_init(&sq[j]);
                    for (int i = 0; i < TALLY_EXACT_CHUNKS; i++) sq[j].chunk[i] = r2.chunk[i];
                    sq[j].nadds = 1; /* the finish dispatch normalised the digits */
                    sq[j].flags = r2.xflags & 31u;
                    sqp = &sq[j];
                }
            }
            for (size_t i = 0; i < it->nops && st == TALLY_OK; i++) {
                if ((it->ops[i] == TALLY_PROD && plan[j].fprod) || (it->ops[i] == TALLY_VAR && var_cpu[j]))
                    st = cpu_result(ctx, s, fn, it->type, it->src, it->n, it->ops[i], it->opts, &it->results[i]);
                else
                    tally_partial_result(&p[j], it->ops[i], it->opts->ddof, sqp, &it->results[i]);
            }
        }
        i0 = i1;
    }
    free(p);
    free(sq);
    return st;
}

/* ---- segmented dispatches (tally_reduce_segments' short segments) --------------------------
 * One fold dispatch of one workgroup per segment, a barrier, one finish dispatch of one
 * workgroup per segment, a barrier: each workgroup owns its segment's accumulator, record and
 * partial record (entry j of segacc, segres, parts), so no segment reads what another writes
 * and the barrier pair orders them all, as in a group of tvk_reduce_list. The segment table
 * (byte offset in dbuf, elements, mean for the variance pass) is its own binding, written by
 * the host before the submission. */
typedef struct seg_entry {
    uint64_t head, n, mean_bits, pad;
} seg_entry;

static tally_status short_pass(tally_context *ctx, tvk_state *s, const char *fn, const tvk_item *items,
                               uint64_t ng, uint64_t dbytes, uint32_t feat, int omit,
                               const uint64_t *means, int open)
{
    tally_type type = items[0].type;
    int part = needs_part(type, 1, feat);
    if ((feat & (TALLY_NEED_ARGMIN | TALLY_NEED_ARGMAX)) && !part) feat |= TVK_N_PACK;
    tally_status st;
    if (part && (st = tvk_buf_ensure(ctx, s, &s->parts, ng * sizeof(tvk_partial), 0, fn)) != TALLY_OK)
        return st;
    if (!open && (st = tvk_begin(ctx, s, fn)) != TALLY_OK) return st;
    VkDeviceSize accb = (VkDeviceSize)TVK_SEG_GROUP * TVK_ACC_BYTES;
    if (!s->segacc.buf || s->segacc.size < accb) s->segacc_zeroed = 0;
    if ((st = tvk_buf_ensure(ctx, s, &s->segacc, accb, 0, fn)) != TALLY_OK) goto fail;
    if (!s->segacc_zeroed) {
        s->fd.vkCmdFillBuffer(s->cb, s->segacc.buf, 0, accb, 0);
        tvk_barrier(s);
        s->segacc_zeroed = 1;
    }
    seg_entry *tab = (seg_entry *)s->segtab.map;
    for (uint64_t j = 0; j < ng; j++) {
        tab[j].head = items[j].src.off;
        tab[j].n = items[j].n;
        tab[j].mean_bits = means ? means[j] : 0;
        tab[j].pad = 0;
    }
    VkPipeline pipe;
    if ((st = tvk_pipeline(ctx, s, TVK_SH_REDUCE, type, feat, (uint32_t)omit, (uint32_t)part, &pipe)) != TALLY_OK)
        goto fail;
    tvk_range b[TVK_NBIND] = {{0}};
    uint32_t head;
    b[0] = tvk_window(s, s->dbuf.buf, 0, dbytes, &head);
    b[1] = (tvk_range){s->segres.buf, 0, ng * sizeof(tvk_partial)};
    if (part) b[2] = (tvk_range){s->parts.buf, 0, ng * sizeof(tvk_partial)};
    b[3] = (tvk_range){s->segacc.buf, 0, ng * TVK_ACC_BYTES};
    b[4] = (tvk_range){s->segtab.buf, 0, ng * sizeof(seg_entry)};
    tvk_reduce_pc pc;
    memset(&pc, 0, sizeof pc);
    pc.fin = 2;
    if ((st = tvk_bind5(ctx, s, pipe, b, &pc, sizeof pc, fn)) != TALLY_OK) goto fail;
    s->fd.vkCmdDispatch(s->cb, (uint32_t)ng, 1, 1);
    tvk_barrier(s);
    pc.fin = 3;
    if ((st = tvk_bind5(ctx, s, pipe, b, &pc, sizeof pc, fn)) != TALLY_OK) goto fail;
    s->fd.vkCmdDispatch(s->cb, (uint32_t)ng, 1, 1);
    tvk_barrier(s);
    return tvk_submit_wait(ctx, s, fn);
fail:
    s->fd.vkEndCommandBuffer(s->cb); /* abandoned: the next call resets it */
    return st;
}

tally_status tvk_reduce_short(tally_context *ctx, tvk_state *s, const char *fn, const tvk_item *items,
                              uint64_t nitems, uint64_t dbytes, int open)
{
    tally_status st = TALLY_OK;
    if (nitems == 0) return open ? tvk_submit_wait(ctx, s, fn) : TALLY_OK;
    uint64_t gmax = nitems < TVK_SEG_GROUP ? nitems : TVK_SEG_GROUP;
    if ((st = tvk_buf_ensure(ctx, s, &s->segtab, gmax * sizeof(seg_entry), 1, fn)) != TALLY_OK ||
        (st = tvk_buf_ensure(ctx, s, &s->segres, gmax * sizeof(tvk_partial), 1, fn)) != TALLY_OK) {
        if (open) s->fd.vkEndCommandBuffer(s->cb);
        return st;
    }
    item_plan q = plan_item(&items[0]); /* every item's but for n: same type, ops, options */
    q.fprod = tally_type_is_float(items[0].type) && (q.need & TALLY_NEED_PROD); /* items[0].n may be 0 */
    uint32_t feat = q.need & ~(uint32_t)(tally_type_is_float(items[0].type) ? TALLY_NEED_PROD : 0);
    tally_partial *p = malloc(gmax * sizeof *p);
    uint64_t *means = malloc(gmax * sizeof *means);
    uint32_t *var = malloc(gmax * sizeof *var); /* 0 none, 1 device pass, 2 CPU */
    if (!p || !means || !var) {
        free(p);
        free(means);
        free(var);
        if (open) s->fd.vkEndCommandBuffer(s->cb);
        return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    for (uint64_t i0 = 0; i0 < nitems && st == TALLY_OK; i0 += TVK_SEG_GROUP) {
        uint64_t ng = nitems - i0 < TVK_SEG_GROUP ? nitems - i0 : TVK_SEG_GROUP;
        const tvk_item *it = items + i0;
        if (feat) st = short_pass(ctx, s, fn, it, ng, dbytes, feat, q.omit, NULL, open);
        else if (open) st = tvk_submit_wait(ctx, s, fn);
        open = 0;
        if (st != TALLY_OK) break;
        int any_var = 0;
        for (uint64_t j = 0; j < ng; j++) {
            tvk_partial rec;
            if (feat && it[j].n) memcpy(&rec, (const tvk_partial *)s->segres.map + j, sizeof rec);
            else empty_record(&rec);
            to_partial(&rec, it[j].type, it[j].n, q.need, q.omit, &p[j]);
            var[j] = 0;
            means[j] = 0;
            if (q.want_var) {
                tally_status ms;
                double mean = tally_partial_mean(&p[j], &ms);
                uint64_t cnt = q.omit ? p[j].n - p[j].nans : p[j].n;
                if (ms == TALLY_OK && cnt > (uint64_t)it[j].opts->ddof) {
                    memcpy(&means[j], &mean, 8);
                    var[j] = 1;
                    any_var = 1;
                }
            }
        }
        if (any_var) {
            uint32_t f2 = TVK_N_SQDEV | (tally_type_is_float(it[0].type) ? TALLY_NEED_NANS : 0);
            /* segments without a variance pass run it too (their results are not read) */
            if ((st = short_pass(ctx, s, fn, it, ng, dbytes, f2, q.omit, means, 0)) != TALLY_OK) break;
        }
        for (uint64_t j = 0; j < ng && st == TALLY_OK; j++) {
            tally_exact sq;
            const tally_exact *sqp = NULL;
            if (var[j] == 1) {
                tvk_partial r2;
                memcpy(&r2, (const tvk_partial *)s->segres.map + j, sizeof r2);
                if (r2.xflags & TVK_XF_EDGE) {
                    var[j] = 2;
                } else {
                    tally_exact_init(&sq);
                    for (int i = 0; i < TALLY_EXACT_CHUNKS; i++) sq.chunk[i] = r2.chunk[i];
                    sq.nadds = 1; /* the finish dispatch normalised the digits */
                    sq.flags = r2.xflags & 31u;
                    sqp = &sq;
                }
            }
            for (size_t i = 0; i < it[j].nops && st == TALLY_OK; i++) {
                if ((it[j].ops[i] == TALLY_PROD && q.fprod && it[j].n) || (it[j].ops[i] == TALLY_VAR && var[j] == 2))
                    st = cpu_result(ctx, s, fn, it[j].type, it[j].src, it[j].n, it[j].ops[i], it[j].opts,
                                    &it[j].results[i]);
                else
                    tally_partial_result(&p[j], it[j].ops[i], it[j].opts->ddof, sqp, &it[j].results[i]);
            }
        }
    }
    free(p);
    free(means);
    free(var);
    return st;
}
