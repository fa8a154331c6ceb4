/* tally info: the version, every backend the library knows (tally_backend_name) and whether it
 * can run here, the CPU's SIMD path and thread count, and each backend's devices. */
#include "cli.h"

#include <stdio.h>
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
    tally_destroy(ctx);
    return ctx ? 0 : 1;
}
