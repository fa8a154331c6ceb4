/* The progress line: on stderr, only when it is a terminal (or --progress), only after a
 * second, at most four times a second; erased at the end. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef struct cli_progress {
    int enabled;
    int shown;
    double t0, last;
    uint64_t total;            /* 0: unknown (a pipe) */
    const char *name;
} cli_progress;

static cli_progress g_progress;

static double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void cli_human(double bytes, char *buf, size_t len)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) { bytes /= 1024; u++; }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

static int cli_progress_wanted(const cli_opts *o)
{
    return o->progress == 1 || (o->progress == -1 && isatty(2));
}

void cli_progress_start(const cli_opts *o, const char *name, uint64_t total)
{
    g_progress.enabled = cli_progress_wanted(o);
    g_progress.shown = 0;
    g_progress.t0 = g_progress.last = cli_now();
    g_progress.total = total;
    g_progress.name = name;
}

void cli_progress_update(uint64_t done)
{
    if (!g_progress.enabled) return;
    double t = cli_now();
    if (t - g_progress.t0 < 1.0 || t - g_progress.last < 0.25) return;
    g_progress.last = t;
    char a[32], b[32], r[32];
    cli_human((double)done, a, sizeof a);
    cli_human((double)done / (t - g_progress.t0), r, sizeof r);
    if (g_progress.total) {
        cli_human((double)g_progress.total, b, sizeof b);
        fprintf(stderr, "\r\033[Ktally: %s: %s of %s (%.0f%%), %s/s", g_progress.name, a, b,
                100.0 * (double)done / (double)g_progress.total, r);
    } else {
        fprintf(stderr, "\r\033[Ktally: %s: %s, %s/s", g_progress.name, a, r);
    }
    g_progress.shown = 1;
}

void cli_progress_end(void)
{
    if (g_progress.shown) fputs("\r\033[K", stderr);
    g_progress.shown = 0;
    g_progress.enabled = 0;
}

/* Pages of a mapped file not yet in memory are read here, with a progress line, before the
 * library runs (which then works at memory speed). Only when someone watches a terminal. */
void cli_prefault(const cli_opts *o, tio_input *in)
{
    if (!in->mapped || in->size < ((uint64_t)64 << 20) || !cli_progress_wanted(o)) return;
    long page = sysconf(_SC_PAGESIZE);
    size_t pages = (size_t)((in->size + (uint64_t)page - 1) / (uint64_t)page);
    unsigned char *vec = malloc(pages);
    if (!vec) return;
    size_t resident = 0;
    if (mincore((void *)in->data, (size_t)in->size, vec) == 0)
        for (size_t i = 0; i < pages; i++) resident += vec[i] & 1;
    free(vec);
    if (resident > pages / 10 * 9) return;
    cli_progress_start(o, in->name, in->size);
    const size_t chunk = (size_t)64 << 20;
    volatile uint8_t sink = 0;
    for (uint64_t off = 0; off < in->size; off += chunk) {
        size_t m = in->size - off < chunk ? (size_t)(in->size - off) : chunk;
        madvise((void *)(in->data + off), m, MADV_WILLNEED);
        for (size_t k = 0; k < m; k += (size_t)page) sink ^= in->data[off + k];
        cli_progress_update(off + m);
    }
    (void)sink;
    cli_progress_end();
}
