/* AUTO contexts: one CPU backend state, one GPU backend state made when a call first needs it,
 * and every call sent to one of them (the rule: core/route.h, tally.h). The backends below see
 * the AUTO context as their ctx (for messages) and their own state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/route.h"
#include "core/partial.h"
#include "core/types.h"

typedef struct route_state {
    void *cpu;                  /* the CPU backend's state */
    const tally_backend *gpu;   /* NULL: no GPU backend built */
    const tally_backend *gpu_alt; /* the second choice (Vulkan where CUDA is built) or NULL */
    void *gpu_state;            /* NULL until a call needs the GPU */
    int gpu_failed;             /* it could not start: gpu_status, gpu_error say why */
    tally_status gpu_status;
    char gpu_error[512];
    tally_backend_kind last;    /* the backend of the last routed call */
    int threads;
    tally_route_model model;
    char rule[512];
} route_state;

/* ---- the model --------------------------------------------------------------------------- */
void tally_route_model_init(tally_route_model *m, int threads)
{
    if (threads < 1) threads = 1;
    m->cpu_rate[TALLY_ROUTE_REDUCE] = threads * TALLY_ROUTE_CPU_THREAD_RATE;
    m->cpu_rate[TALLY_ROUTE_SCAN] = threads * TALLY_ROUTE_CPU_THREAD_RATE_SCAN;
    m->gpu_rate[TALLY_ROUTE_REDUCE] = TALLY_ROUTE_GPU_RATE;
    m->gpu_rate[TALLY_ROUTE_SCAN] = TALLY_ROUTE_GPU_RATE_SCAN;
    m->gpu_start_s = TALLY_ROUTE_GPU_START_S;
}

int tally_route_host_to_gpu(const tally_route_model *m, int kind, uint64_t bytes, int gpu_started)
{
    if (bytes < TALLY_ROUTE_MIN_BYTES) return 0;
    double b = (double)bytes;
    double t_gpu = (gpu_started ? 0.0 : m->gpu_start_s) + b / m->gpu_rate[kind];
    double t_cpu = b / m->cpu_rate[kind];
    return t_gpu < TALLY_ROUTE_MARGIN * t_cpu;
}

uint64_t tally_route_crossover(const tally_route_model *m, int kind, int gpu_started)
{
    /* bytes * (margin / cpu - 1 / gpu) > start */
    double gain = TALLY_ROUTE_MARGIN / m->cpu_rate[kind] - 1.0 / m->gpu_rate[kind];
    if (gain <= 0) return UINT64_MAX;
    double start = gpu_started ? 0.0 : m->gpu_start_s;
    double b = start / gain;
    if (b >= 1.8e19) return UINT64_MAX;
    uint64_t x = (uint64_t)b + 1;
    if (x < TALLY_ROUTE_MIN_BYTES) x = TALLY_ROUTE_MIN_BYTES;
    /* the first size the rule takes (the arithmetic above can be off by a rounding) */
    while (x < UINT64_MAX / 2 && !tally_route_host_to_gpu(m, kind, x, gpu_started)) x += x / 64 + 1;
    return x;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- the GPU state, made on first need ---------------------------------------------------- */
/* Before the GPU starts: where the first choice (CUDA) finds no device but the second (a real
 * Vulkan GPU) does, the second becomes the context's GPU backend. */
static void settle_gpu(route_state *rs)
{
    if (rs->gpu_state || rs->gpu_failed || !rs->gpu_alt) return;
    if (!rs->gpu->available() && rs->gpu_alt->available()) rs->gpu = rs->gpu_alt;
    rs->gpu_alt = NULL;
}

static tally_status gpu_ready(tally_context *ctx, route_state *rs)
{
    if (rs->gpu_state) return TALLY_OK;
    settle_gpu(rs);
    if (!rs->gpu)
        return tally_set_error(ctx, TALLY_ERR_BACKEND_UNAVAILABLE,
                               "auto: no GPU backend is built into this library");
    if (rs->gpu_failed) return tally_set_error(ctx, rs->gpu_status, "%s", rs->gpu_error);
    tally_status st;
    char saved[sizeof ctx->error];
    memcpy(saved, ctx->error, sizeof saved);
    ctx->error[0] = 0;
    if (!rs->gpu->available()) {
        st = tally_set_error(ctx, TALLY_ERR_BACKEND_UNAVAILABLE,
                             "auto: the %s backend cannot run here (no usable device)",
                             rs->gpu->name);
    } else {
        double t0 = now_s();
        st = rs->gpu->init(ctx, &ctx->opts, &rs->gpu_state);
        if (st == TALLY_OK) {
            rs->model.gpu_start_s = now_s() - t0;
            memcpy(ctx->error, saved, sizeof saved);
            return TALLY_OK;
        }
        rs->gpu_state = NULL;
        if (!ctx->error[0])
            tally_set_error(ctx, st, "auto: the %s backend failed to start: %s", rs->gpu->name,
                            tally_status_string(st));
    }
    rs->gpu_failed = 1;
    rs->gpu_status = st;
    snprintf(rs->gpu_error, sizeof rs->gpu_error, "%s", ctx->error);
    return st;
}

/* 1 if p is memory the GPU backend owns (decided without starting the GPU where it can be). */
static int gpu_owns(const route_state *rs, const void *p)
{
    return p && rs->gpu && rs->gpu->owns && rs->gpu->owns(p);
}

/* Where a call goes. owned: some pointer of the call is GPU memory; host_ok: host data may go to
 * the GPU (the op's bits are the same there); kind and bytes: for the model. */
typedef struct route_pick {
    int gpu;       /* 1: the GPU backend */
    int timed;     /* 1: host data on a measured path: the call's rate updates the model */
    int kind;
    uint64_t bytes;
    double t0;
} route_pick;

static tally_status pick(tally_context *ctx, route_state *rs, int owned, int host_ok, int kind,
                         uint64_t bytes, route_pick *p)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->bytes = bytes;
    if (owned) {
        tally_status st = gpu_ready(ctx, rs);
        if (st != TALLY_OK) return st;
        p->gpu = 1;
    } else if (host_ok && rs->gpu && !rs->gpu_failed &&
               tally_route_host_to_gpu(&rs->model, kind, bytes, rs->gpu_state != NULL)) {
        /* host data predicted faster on the GPU; if it cannot start, the CPU takes it */
        p->gpu = gpu_ready(ctx, rs) == TALLY_OK;
        if (!p->gpu) ctx->error[0] = 0;
    }
    rs->last = p->gpu ? rs->gpu->kind : TALLY_BACKEND_CPU;
    if (!owned && bytes >= TALLY_ROUTE_MIN_BYTES) {
        p->timed = 1;
        p->t0 = now_s();
    }
    return TALLY_OK;
}

/* A host-data call finished: its rate becomes the model's rate for its path. */
static tally_status measured(route_state *rs, const route_pick *p, tally_status st)
{
    if (!p->timed || st != TALLY_OK) return st;
    double dt = now_s() - p->t0;
    if (dt <= 0) return st;
    double rate = (double)p->bytes / dt;
    if (p->gpu) rs->model.gpu_rate[p->kind] = rate;
    else rs->model.cpu_rate[p->kind] = rate;
    return st;
}

static const tally_backend *chosen(const route_state *rs, const route_pick *p, void **state)
{
    *state = p->gpu ? rs->gpu_state : rs->cpu;
    return p->gpu ? rs->gpu : &tally_cpu_backend;
}

/* Float products (and float sum/product scans) may round differently on the GPU. */
static int reduce_same_bits(tally_type type, const tally_op *ops, size_t nops)
{
    if (!tally_type_is_float(type)) return 1;
    for (size_t i = 0; i < nops; i++)
        if (ops[i] == TALLY_PROD) return 0;
    return 1;
}

/* ---- the backend table's entries ---------------------------------------------------------- */
static tally_status route_init_with(tally_context *ctx, const tally_options *opts,
                                    const tally_backend *gpu, void **out)
{
    *out = NULL;
    route_state *rs = calloc(1, sizeof *rs);
    if (!rs) return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "tally_create: out of memory");
    tally_status st = tally_cpu_backend.init(ctx, opts, &rs->cpu);
    if (st != TALLY_OK) {
        free(rs);
        return st;
    }
    rs->gpu = gpu;
#if defined(TALLY_HAVE_CUDA) && defined(TALLY_HAVE_VULKAN)
    if (gpu && gpu == tally_cuda_backend_get()) rs->gpu_alt = tally_vulkan_auto_backend_get();
#endif
    rs->last = TALLY_BACKEND_CPU;
    rs->threads = opts->threads;
    tally_route_model_init(&rs->model, opts->threads);
    *out = rs;
    return TALLY_OK;
}

static tally_status route_init(tally_context *ctx, const tally_options *opts, void **out)
{
    return route_init_with(ctx, opts, tally_route_gpu_backend(), out);
}

static void route_fini(void *state)
{
    route_state *rs = state;
    if (!rs) return;
    if (rs->gpu_state) rs->gpu->fini(rs->gpu_state);
    tally_cpu_backend.fini(rs->cpu);
    free(rs);
}

static int route_available(void) { return 1; }

static tally_status route_reduce(tally_context *ctx, void *state, tally_type type,
                                 const void *data, uint64_t n, const tally_op *ops, size_t nops,
                                 const tally_reduce_options *opts, tally_result *results)
{
    route_state *rs = state;
    route_pick p;
    tally_status st = pick(ctx, rs, n > 0 && gpu_owns(rs, data), reduce_same_bits(type, ops, nops),
                           TALLY_ROUTE_REDUCE, n * tally_type_size(type), &p);
    if (st != TALLY_OK) return st;
    void *bs;
    const tally_backend *b = chosen(rs, &p, &bs);
    return measured(rs, &p, b->reduce(ctx, bs, type, data, n, ops, nops, opts, results));
}

static tally_status route_scan(tally_context *ctx, void *state, tally_op op, tally_type type,
                               const void *in, void *out, uint64_t n,
                               const tally_scan_options *opts)
{
    route_state *rs = state;
    int owned = n > 0 && (gpu_owns(rs, in) || gpu_owns(rs, out));
    /* a carry into an inclusive scan (libtally_mpi's) is the CPU's alone */
    int carry = opts->has_init && !opts->exclusive;
    if (owned && carry)
        return tally_set_error(ctx, TALLY_ERR_UNSUPPORTED,
                               "tally_mpi_scan: the %s backend takes no carry into an inclusive "
                               "scan", rs->gpu->name);
    int same_bits = !(tally_type_is_float(type) && (op == TALLY_SUM || op == TALLY_PROD));
    route_pick p;
    tally_status st = pick(ctx, rs, owned, same_bits && !carry, TALLY_ROUTE_SCAN,
                           n * tally_type_size(type), &p);
    if (st != TALLY_OK) return st;
    void *bs;
    const tally_backend *b = chosen(rs, &p, &bs);
    return measured(rs, &p, b->scan(ctx, bs, op, type, in, out, n, opts));
}

static const char *route_describe(void *state)
{
    route_state *rs = state;
    if (!rs->gpu_state) {
        if (!rs->gpu || rs->gpu_failed || !rs->gpu->available()) return "";
        /* the description of the device this context's device pointers run on */
        tally_context tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.backend = &tally_route_backend;
        tmp.state = rs;
        tally_options_init(&tmp.opts);
        tmp.opts.threads = rs->threads;
        if (gpu_ready(&tmp, rs) != TALLY_OK) return "";
    }
    return rs->gpu->describe ? rs->gpu->describe(rs->gpu_state) : "";
}

static tally_status route_copy(tally_context *ctx, void *state, void *dst, const void *src,
                               uint64_t bytes)
{
    route_state *rs = state;
    if (bytes == 0) return TALLY_OK;
    if (!gpu_owns(rs, dst) && !gpu_owns(rs, src)) {
        memcpy(dst, src, (size_t)bytes);
        return TALLY_OK;
    }
    tally_status st = gpu_ready(ctx, rs);
    if (st != TALLY_OK) return st;
    if (!rs->gpu->copy) {
        memcpy(dst, src, (size_t)bytes);
        return TALLY_OK;
    }
    return rs->gpu->copy(ctx, rs->gpu_state, dst, src, bytes);
}

static tally_status route_segments(tally_context *ctx, void *state, tally_type type,
                                   const void *data, const uint64_t *offsets, uint64_t nseg,
                                   uint64_t row_len, uint64_t row_stride, const tally_op *ops,
                                   size_t nops, const tally_reduce_options *opts,
                                   tally_result *results)
{
    route_state *rs = state;
    uint64_t total = offsets ? offsets[nseg] - offsets[0] : nseg * row_len;
    route_pick p;
    /* the batch goes one way: by its first element, the same allocation as the rest */
    const void *first = offsets ? (const char *)data + offsets[0] * tally_type_size(type) : data;
    tally_status st = pick(ctx, rs, total > 0 && gpu_owns(rs, first), 0, TALLY_ROUTE_REDUCE,
                           total * tally_type_size(type), &p);
    if (st != TALLY_OK) return st;
    void *bs;
    const tally_backend *b = chosen(rs, &p, &bs);
    if (b->reduce_segments)
        return measured(rs, &p, b->reduce_segments(ctx, bs, type, data, offsets, nseg, row_len,
                                                   row_stride, ops, nops, opts, results));
    const size_t size = tally_type_size(type);
    for (uint64_t s = 0; s < nseg && st == TALLY_OK; s++) {
        uint64_t len = offsets ? offsets[s + 1] - offsets[s] : row_len;
        uint64_t start = offsets ? offsets[s] : s * row_stride;
        const char *x = len ? (const char *)data + start * size : (const char *)data;
        st = b->reduce(ctx, bs, type, x, len, ops, nops, opts, &results[s * nops]);
    }
    return st;
}

/* Device data for the CPU's partial states: copied to host memory in pieces. */
#define ROUTE_STAGE_BYTES ((uint64_t)32 << 20)

/* A host buffer for device data the CPU path reads in pieces: *per elements of size bytes (at
 * most n). NULL with *st set when memory runs out. */
static void *stage_buffer(tally_context *ctx, size_t size, uint64_t n, uint64_t *per,
                          tally_status *st)
{
    *per = ROUTE_STAGE_BYTES / size;
    if (*per > n) *per = n;
    void *buf = malloc((size_t)(*per * size));
    if (!buf)
        *st = tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY,
                              "auto: out of memory for a %llu-byte staging buffer",
                              (unsigned long long)(*per * size));
    return buf;
}

static tally_status route_accumulate(tally_context *ctx, void *state, const void *data, uint64_t n,
                                     uint64_t base, tally_partial *acc)
{
    route_state *rs = state;
    size_t size = tally_type_size(acc->type);
    route_pick p;
    tally_status st = pick(ctx, rs, n > 0 && gpu_owns(rs, data), 0, TALLY_ROUTE_REDUCE, n * size, &p);
    if (st != TALLY_OK) return st;
    if (!p.gpu || rs->gpu->accumulate) {
        void *bs;
        const tally_backend *b = chosen(rs, &p, &bs);
        return measured(rs, &p, b->accumulate(ctx, bs, data, n, base, acc));
    }
    uint64_t per;
    void *buf = stage_buffer(ctx, size, n, &per, &st);
    if (!buf) return st;
    for (uint64_t i = 0; i < n && st == TALLY_OK; i += per) {
        uint64_t m = n - i < per ? n - i : per;
        st = route_copy(ctx, rs, buf, (const char *)data + i * size, m * size);
        if (st == TALLY_OK) st = tally_cpu_backend.accumulate(ctx, rs->cpu, buf, m, base + i, acc);
    }
    free(buf);
    return st;
}

static tally_status route_sqdev(tally_context *ctx, void *state, tally_type type, const void *data,
                                uint64_t n, double mean, int omit_nan, tally_exact *out)
{
    route_state *rs = state;
    size_t size = tally_type_size(type);
    route_pick p;
    tally_status st = pick(ctx, rs, n > 0 && gpu_owns(rs, data), 0, TALLY_ROUTE_REDUCE, n * size, &p);
    if (st != TALLY_OK) return st;
    if (!p.gpu || rs->gpu->sqdev) {
        void *bs;
        const tally_backend *b = chosen(rs, &p, &bs);
        return b->sqdev(ctx, bs, type, data, n, mean, omit_nan, out);
    }
    tally_exact_init(out);
    uint64_t per;
    void *buf = stage_buffer(ctx, size, n, &per, &st);
    if (!buf) return st;
    for (uint64_t i = 0; i < n && st == TALLY_OK; i += per) {
        uint64_t m = n - i < per ? n - i : per;
        st = route_copy(ctx, rs, buf, (const char *)data + i * size, m * size);
        tally_exact e;
        if (st == TALLY_OK) st = tally_cpu_backend.sqdev(ctx, rs->cpu, type, buf, m, mean, omit_nan, &e);
        if (st == TALLY_OK) tally_exact_merge(out, &e);
    }
    free(buf);
    return st;
}

const tally_backend tally_route_backend = {
    .kind = TALLY_BACKEND_AUTO,
    .name = "auto",
    .available = route_available,
    .init = route_init,
    .fini = route_fini,
    .reduce = route_reduce,
    .scan = route_scan,
    .describe = route_describe,
    .copy = route_copy,
    .reduce_segments = route_segments,
    .accumulate = route_accumulate,
    .sqdev = route_sqdev,
};

/* ---- what the rest of the library asks -------------------------------------------------- */
/* AUTO's GPU: CUDA where it is built (a real Vulkan GPU second, see settle_gpu), else a real
 * Vulkan GPU; a CPU-emulated Vulkan device (lavapipe) never. */
const tally_backend *tally_route_gpu_backend(void)
{
#if defined(TALLY_HAVE_CUDA)
    return tally_cuda_backend_get();
#elif defined(TALLY_HAVE_VULKAN)
    return tally_vulkan_auto_backend_get();
#else
    return NULL;
#endif
}

int tally_route_is(const tally_context *ctx)
{
    return ctx && ctx->backend == &tally_route_backend;
}

tally_backend_kind tally_route_active(const tally_context *ctx)
{
    route_state *rs = ctx->state;
    settle_gpu(rs);
    if (rs->gpu && (rs->gpu_state || (!rs->gpu_failed && rs->gpu->available())))
        return rs->gpu->kind;
    return TALLY_BACKEND_CPU;
}

tally_backend_kind tally_route_last(const tally_context *ctx)
{
    return ((const route_state *)ctx->state)->last;
}

void *tally_route_backend_state(tally_context *ctx, const tally_backend *b)
{
    if (!tally_route_is(ctx)) return NULL;
    route_state *rs = ctx->state;
    if (!b || b != rs->gpu) return NULL;
    return gpu_ready(ctx, rs) == TALLY_OK ? rs->gpu_state : NULL;
}

static void size_text(char *buf, size_t len, uint64_t bytes)
{
    if (bytes >= ((uint64_t)1 << 30)) snprintf(buf, len, "%.1f GiB", (double)bytes / (1 << 30));
    else snprintf(buf, len, "%.0f MiB", (double)bytes / (1 << 20));
}

const char *tally_route_rule(const tally_context *ctx)
{
    route_state *rs = ctx->state;
    if (!rs->gpu) {
        snprintf(rs->rule, sizeof rs->rule, "every call -> cpu (no GPU backend built)");
        return rs->rule;
    }
    settle_gpu(rs);
    const char *g = rs->gpu->name;
    int started = rs->gpu_state != NULL;
    if (!started && !rs->gpu_failed && !rs->gpu->available()) {
        snprintf(rs->rule, sizeof rs->rule, "every call -> cpu (%d thread%s; the %s backend "
                 "cannot run here, so device pointers are refused)", rs->threads,
                 rs->threads == 1 ? "" : "s", g);
        return rs->rule;
    }
    char part[2][96];
    for (int k = 0; k < 2; k++) {
        uint64_t x = tally_route_crossover(&rs->model, k, started);
        if (x == UINT64_MAX) {
            snprintf(part[k], sizeof part[k], "never (the cpu is predicted faster at any size)");
        } else {
            char s[32];
            size_text(s, sizeof s, x);
            snprintf(part[k], sizeof part[k], "from %s up", s);
        }
    }
    snprintf(rs->rule, sizeof rs->rule,
             "device memory -> %s; host memory -> cpu (%d thread%s), or -> %s when predicted "
             "faster: reductions %s, scans %s (float products and float sum/prod scans of host "
             "data stay on the cpu)%s",
             g, rs->threads, rs->threads == 1 ? "" : "s", g, part[0], part[1],
             rs->gpu_failed ? "; the GPU could not start, so host data stays on the cpu" : "");
    return rs->rule;
}

tally_route_model *tally_route_model_of(tally_context *ctx)
{
    return tally_route_is(ctx) ? &((route_state *)ctx->state)->model : NULL;
}

tally_status tally_route_init_with(tally_context *ctx, const tally_options *opts,
                                   const tally_backend *gpu, void **out)
{
    return route_init_with(ctx, opts, gpu, out);
}
