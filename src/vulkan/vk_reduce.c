/* Reductions on a Vulkan device: reduce.comp's fold dispatches add each workgroup's share into
 * the call's accumulator (or a partial record per workgroup), its finish dispatch (one
 * workgroup, after a pipeline barrier) turns them into the call's record, and the host turns
 * that record into a tally_partial and then into results with core/partial.c, the code the CPU
 * backend uses. The variance takes a second pass (the exact sum of squared deviations from the
 * mean), the float product fprod.comp (lanes of fixed blocks, multiplied in order here). Data
 * larger than one binding's range is cut into segments, each its own fold dispatch; all of
 * them go to the one finish. */
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

/* Workgroups: four vectors per invocation at least; past 1024 workgroups, 16 vectors per
 * invocation and up to TVK_MAX_WG (many waves, so the last one's imbalance is small; each
 * workgroup's cost beyond its loads is a few atomics); at most TVK_MAX_WG_PART when partial
 * records travel (the finish dispatch's one workgroup merges them). */
static seg_plan plan_segment(const tvk_state *s, size_t es, VkDeviceSize off, uint64_t n, uint64_t k,
                             int part)
{
    seg_plan p;
    uint64_t per = s->seg_bytes / es;
    p.e0 = k * per;
    p.ne = n - p.e0 < per ? n - p.e0 : per;
    uint64_t byte0 = off + p.e0 * es;
    uint64_t head = byte0 & (s->align - 1);
    uint64_t nvec = (head + p.ne * es + 15) / 16;
    uint64_t g = (nvec + TVK_WG * 4 - 1) / (TVK_WG * 4);
    if (g < 1) g = 1;
    if (g > 1024) {
        uint64_t g16 = (nvec + TVK_WG * 16 - 1) / (TVK_WG * 16);
        g = g16 > 1024 ? g16 : 1024;
    }
    uint64_t cap = part ? TVK_MAX_WG_PART : TVK_MAX_WG;
    if (g > cap) g = cap;
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

/* Records one reduce pass over every segment: its record lands in hostres at
 * slot * TVK_REC_STRIDE, through accumulator slot `slot`. */
static tally_status record_pass(tally_context *ctx, tvk_state *s, const char *fn, tally_type type,
                                tvk_src src, uint64_t n, uint32_t feat, int omit,
                                uint64_t mean_bits, uint32_t slot)
{
    size_t es = tally_type_size(type);
    int part = needs_part(type, n, feat);
    if ((feat & (TALLY_NEED_ARGMIN | TALLY_NEED_ARGMAX)) && !part) feat |= TVK_N_PACK;
    uint64_t nseg = seg_count(s, es, n), total = 0;
    for (uint64_t k = 0; k < nseg; k++) total += plan_segment(s, es, src.off, n, k, part).groups;
    tally_status st;
    if (part && (st = tvk_buf_ensure(ctx, s, &s->parts, total * sizeof(tvk_partial), 0, fn)) != TALLY_OK)
        return st;
    if ((st = tvk_ensure_acc(ctx, s, fn)) != TALLY_OK) return st;
    VkPipeline pipe;
    if ((st = tvk_pipeline(ctx, s, TVK_SH_REDUCE, type, feat,
                           (uint32_t)omit, (uint32_t)part, &pipe)) != TALLY_OK)
        return st;
    uint32_t part0 = 0;
    tvk_reduce_pc pc;
    tvk_range b[4] = {{0}};
    for (uint64_t k = 0; k < nseg; k++) {
        seg_plan p = plan_segment(s, es, src.off, n, k, part);
        memset(&pc, 0, sizeof pc);
        memset(b, 0, sizeof b);
        b[0] = tvk_window(s, src.buf, src.off + p.e0 * es, p.ne * es, &pc.head);
        b[1] = (tvk_range){s->hostres.buf, (VkDeviceSize)slot * TVK_REC_STRIDE, sizeof(tvk_partial)};
        if (part) b[2] = (tvk_range){s->parts.buf, 0, total * sizeof(tvk_partial)};
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
    /* The finish: one workgroup reads what every fold workgroup added or wrote. The barrier
     * between them (compute -> compute, shader writes -> shader reads and writes) is what makes
     * every atomic of the fold dispatches complete and visible to it; the barrier after it
     * orders the record for the host and the accumulator's zeroing before the next call.
     * Bindings as the last segment's (the input binding is valid and unread). */
    tvk_barrier(s);
    pc.fin = 1;
    if ((st = tvk_bind(ctx, s, pipe, b, &pc, sizeof pc, fn)) != TALLY_OK) return st;
    s->fd.vkCmdDispatch(s->cb, 1, 1, 1);
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
