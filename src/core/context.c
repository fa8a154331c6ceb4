/* Contexts: options resolution, the backend registry, error messages. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/backend.h"
#include "core/host.h"
#include "core/route.h"

static _Thread_local char create_error[512];

const char *tally_create_error(void) { return create_error; }

static tally_status create_fail(tally_status st, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static tally_status create_fail(tally_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(create_error, sizeof create_error, fmt, ap);
    va_end(ap);
    return st;
}

tally_status tally_set_error(tally_context *ctx, tally_status status, const char *fmt, ...)
{
    if (!ctx) return status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
    va_end(ap);
    return status;
}

const char *tally_last_error(const tally_context *ctx)
{
    return ctx ? ctx->error : "tally_last_error: ctx is NULL";
}

void tally_options_init(tally_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->backend = TALLY_BACKEND_AUTO;
    opts->isa = TALLY_ISA_AUTO;
}

/* The registry: one entry per backend kind; NULL where not built. */
static const tally_backend *backend_for(tally_backend_kind kind)
{
    switch (kind) {
    case TALLY_BACKEND_CPU: return &tally_cpu_backend;
    case TALLY_BACKEND_CUDA:
#ifdef TALLY_HAVE_CUDA
        return tally_cuda_backend_get();
#else
        return NULL;
#endif
    case TALLY_BACKEND_VULKAN:
#ifdef TALLY_HAVE_VULKAN
        return tally_vulkan_backend_get();
#else
        return NULL;
#endif
    default: return NULL;
    }
}

int tally_backend_available(tally_backend_kind kind)
{
    if (kind == TALLY_BACKEND_AUTO) return 1;
    const tally_backend *b = backend_for(kind);
    return b && b->available && b->available();
}

/* threads: 0 = all cores; isa: options, else TALLY_ISA, else the best. */
static tally_status resolve_cpu_options(tally_options *o)
{
    if (o->threads < 0)
        return create_fail(TALLY_ERR_INVALID_ARGUMENT,
                           "tally_create: threads = %d (must be >= 0; 0 means all cores)",
                           o->threads);
    if (o->threads == 0) o->threads = tally_host_core_count();
    if ((int)o->isa < TALLY_ISA_AUTO || (int)o->isa > TALLY_ISA_AVX512)
        return create_fail(TALLY_ERR_INVALID_ARGUMENT, "tally_create: isa = %d is not a tally_isa",
                           (int)o->isa);
    const char *src = "options.isa";
    if (o->isa == TALLY_ISA_AUTO) {
        const char *env = getenv("TALLY_ISA");
        if (env && *env) {
            src = "TALLY_ISA";
            if (!strcmp(env, "scalar")) o->isa = TALLY_ISA_SCALAR;
            else if (!strcmp(env, "avx2")) o->isa = TALLY_ISA_AVX2;
            else if (!strcmp(env, "avx512")) o->isa = TALLY_ISA_AVX512;
            else if (!strcmp(env, "auto")) o->isa = TALLY_ISA_AUTO;
            else
                return create_fail(TALLY_ERR_INVALID_ARGUMENT,
                                   "tally_create: TALLY_ISA=%s is not one of scalar, avx2, avx512",
                                   env);
        }
    }
    if (o->isa == TALLY_ISA_AUTO) o->isa = tally_host_isa();
    if (!tally_host_isa_supported(o->isa))
        return create_fail(TALLY_ERR_BACKEND_UNAVAILABLE,
                           "tally_create: %s asks for the %s path but this CPU supports at most %s",
                           src, tally_isa_name(o->isa), tally_isa_name(tally_host_isa()));
    return TALLY_OK;
}

static tally_status try_backend(tally_context *ctx, const tally_backend *b)
{
    ctx->backend = b;
    ctx->state = NULL;
    ctx->error[0] = 0;
    tally_status st = b->init(ctx, &ctx->opts, &ctx->state);
    if (st != TALLY_OK)
        create_fail(st, "tally_create: the %s backend failed to start: %s", b->name,
                    ctx->error[0] ? ctx->error : tally_status_string(st));
    ctx->error[0] = 0;
    return st;
}

/* AUTO makes a routing context over the CPU and gpu (core/route.h) when a GPU backend is built,
 * else a CPU context: host data always had the CPU, and nothing else can reach it. */
static tally_status create_with(tally_context **out, const tally_options *opts,
                                const tally_backend *auto_gpu)
{
    create_error[0] = 0;
    if (!out) return create_fail(TALLY_ERR_INVALID_ARGUMENT, "tally_create: ctx is NULL");
    *out = NULL;
    tally_options o;
    if (opts) o = *opts;
    else tally_options_init(&o);
    if ((int)o.backend < 0 || (int)o.backend >= TALLY_BACKEND_KIND_COUNT)
        return create_fail(TALLY_ERR_INVALID_ARGUMENT,
                           "tally_create: backend = %d is not a tally_backend_kind", (int)o.backend);
    if (o.device < 0)
        return create_fail(TALLY_ERR_INVALID_ARGUMENT, "tally_create: device = %d (must be >= 0)",
                           o.device);
    tally_status st = resolve_cpu_options(&o);
    if (st != TALLY_OK) return st;

    tally_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return create_fail(TALLY_ERR_OUT_OF_MEMORY, "tally_create: out of memory");
    ctx->opts = o;

    if (o.backend == TALLY_BACKEND_AUTO) {
        if (auto_gpu) {
            /* nothing of the GPU starts here: the first call that needs it starts it */
            ctx->backend = &tally_route_backend;
            st = tally_route_init_with(ctx, &ctx->opts, auto_gpu, &ctx->state);
            if (st != TALLY_OK)
                create_fail(st, "tally_create: %s", ctx->error[0] ? ctx->error : tally_status_string(st));
            ctx->error[0] = 0;
        } else {
            st = try_backend(ctx, &tally_cpu_backend);
        }
    } else {
        const tally_backend *b = backend_for(o.backend);
        if (!b || !b->available) {
            free(ctx);
            return create_fail(TALLY_ERR_BACKEND_UNAVAILABLE,
                               "tally_create: the %s backend is not built into this library",
                               tally_backend_name(o.backend));
        }
        /* built but not usable here: its init says why (no loader, no device, a feature) */
        st = try_backend(ctx, b);
        if (st == TALLY_OK && !b->available()) { /* (an init that cannot tell) */
            b->fini(ctx->state);
            st = create_fail(TALLY_ERR_BACKEND_UNAVAILABLE,
                             "tally_create: the %s backend is not usable on this machine",
                             tally_backend_name(o.backend));
        }
    }
    if (st != TALLY_OK) {
        free(ctx);
        return st;
    }
    ctx->opts.backend = ctx->backend->kind;
    create_error[0] = 0;
    *out = ctx;
    return TALLY_OK;
}

tally_status tally_create(tally_context **out, const tally_options *opts)
{
    return create_with(out, opts, tally_route_gpu_backend());
}

tally_status tally_route_create_with(tally_context **out, const tally_options *opts,
                                     const tally_backend *gpu)
{
    tally_options o;
    if (opts) o = *opts;
    else tally_options_init(&o);
    o.backend = TALLY_BACKEND_AUTO;
    return create_with(out, &o, gpu);
}

void tally_destroy(tally_context *ctx)
{
    if (!ctx) return;
    if (ctx->backend && ctx->backend->fini) ctx->backend->fini(ctx->state);
    free(ctx);
}

tally_backend_kind tally_active_backend(const tally_context *ctx)
{
    if (!ctx) return TALLY_BACKEND_CPU;
    return tally_route_is(ctx) ? tally_route_active(ctx) : ctx->backend->kind;
}

tally_backend_kind tally_last_backend(const tally_context *ctx)
{
    if (!ctx) return TALLY_BACKEND_CPU;
    return tally_route_is(ctx) ? tally_route_last(ctx) : ctx->backend->kind;
}

const char *tally_auto_rule(const tally_context *ctx)
{
    if (!ctx) return "";
    if (tally_route_is(ctx)) return tally_route_rule(ctx);
    return ctx->backend->kind == TALLY_BACKEND_CPU ? "every call -> cpu"
           : ctx->backend->kind == TALLY_BACKEND_CUDA
               ? "every call -> cuda (host data is copied to the GPU)"
               : "every call -> vulkan (host data is copied to the GPU)";
}

int tally_thread_count(const tally_context *ctx) { return ctx ? ctx->opts.threads : 0; }

tally_isa tally_active_isa(const tally_context *ctx)
{
    return ctx ? ctx->opts.isa : TALLY_ISA_AUTO;
}

tally_isa tally_cpu_best_isa(void) { return tally_host_isa(); }

const char *tally_device_description(const tally_context *ctx)
{
    if (!ctx || !ctx->backend->describe) return "";
    const char *d = ctx->backend->describe(ctx->state);
    return d ? d : "";
}
