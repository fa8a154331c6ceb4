/* tally info: the version, every backend the library knows (tally_backend_name) and whether it
 * can run here, the CPU's SIMD path and thread count, and each backend's devices. */
#include "cli.h"

#include <stdio.h>
#ifdef TALLY_CLI_VULKAN
#include "tally_vulkan.h"
#endif
#include <unistd.h>

/* The devices of one GPU backend; returns how many were listed. */
static int cli_info_devices(tally_backend_kind kind)
{
    int n = 0;
    for (int d = 0; d < 16; d++) {
        tally_context *g = NULL;
        tally_options go;
        tally_options_init(&go);
        go.backend = kind;
        go.device = d;
        if (tally_create(&g, &go) != TALLY_OK) break;
        printf("gpu %d (%s): %s\n", d, tally_backend_name(kind), tally_device_description(g));
        tally_destroy(g);
        n++;
    }
    return n;
}

int cli_info(const cli_opts *o)
{
    printf("tally %s (library %s)\n", TALLY_CLI_VERSION, tally_version());
    tally_context *ctx = cli_context(o, o->backend, 0);
    printf("backends:\n");
    for (int k = TALLY_BACKEND_AUTO + 1; k < TALLY_BACKEND_KIND_COUNT; k++) {
        tally_backend_kind kind = (tally_backend_kind)k;
        if (!tally_backend_name(kind)) continue;
        int av = tally_backend_available(kind);
        int active = ctx && tally_active_backend(ctx) == kind;
        printf("  %-7s %s%s\n", tally_backend_name(kind), av ? "available" : "not available",
               active ? (o->backend == TALLY_BACKEND_AUTO ? ", active (auto)" : ", active") : "");
    }
    /* where an AUTO context sends each call (core/route.c), with this machine's figures */
    if (ctx && o->backend == TALLY_BACKEND_AUTO) printf("auto: %s\n", tally_auto_rule(ctx));
    printf("cpu: best ISA %s", tally_isa_name(tally_cpu_best_isa()));
    tally_context *cpu = NULL;
    tally_options to;
    tally_options_init(&to);
    to.backend = TALLY_BACKEND_CPU;
    to.threads = o->threads;
    if (tally_create(&cpu, &to) == TALLY_OK) {
        printf(", using %s, %d thread%s", tally_isa_name(tally_active_isa(cpu)),
               tally_thread_count(cpu), tally_thread_count(cpu) == 1 ? "" : "s");
        tally_destroy(cpu);
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    printf(" (%ld core%s online)\n", ncpu, ncpu == 1 ? "" : "s");
    int gpus = 0;
    for (int k = TALLY_BACKEND_CPU + 1; k < TALLY_BACKEND_KIND_COUNT; k++)
        if (tally_backend_name((tally_backend_kind)k) && tally_backend_available((tally_backend_kind)k))
            gpus += cli_info_devices((tally_backend_kind)k);
    if (!gpus) printf("gpus: none seen\n");
#ifdef TALLY_CLI_VULKAN
    /* every Vulkan device, usable by tally or not (lavapipe included: AUTO never picks it) */
    const char *vwhy = "";
    int nvk = tally_vulkan_device_count(&vwhy);
    if (!nvk) printf("vulkan: no device (%s)\n", vwhy);
    for (int d = 0; d < nvk; d++) {
        tally_vulkan_device_info vi;
        if (tally_vulkan_get_device_info(d, &vi) != TALLY_OK) continue;
        static const char *kinds[] = {"other", "integrated GPU", "discrete GPU", "virtual GPU", "CPU"};
        printf("vulkan %d: %s (%s; Vulkan %u.%u; driver %s; subgroup %u%s; int64 %s, float64 %s, "
               "denormals %s)%s%s\n", d, vi.name,
               vi.device_type >= 0 && vi.device_type <= 4 ? kinds[vi.device_type] : "other",
               VK_API_VERSION_MAJOR(vi.api_version), VK_API_VERSION_MINOR(vi.api_version), vi.driver,
               vi.subgroup_size, vi.subgroup_arithmetic ? " with arithmetic" : "",
               vi.int64 ? (vi.int64_shared_atomics ? "yes" : "yes (no shared atomics)") : "no",
               vi.float64 ? "yes" : "no", vi.denorm_preserve32 && vi.denorm_preserve64 ? "kept" : "not promised",
               vi.usable ? "" : "; not usable: ", vi.usable ? "" : vi.why_not);
    }
#endif
    tally_destroy(ctx);
    return ctx ? 0 : 1;
}
