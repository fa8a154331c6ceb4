/* A pipe's bounded copy of integer values (see spool.h). */
#define _GNU_SOURCE 1
#include "spool.h"
#include "decimal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_spools_init(cli_spools *s, size_t budget, int nfields)
{
    memset(s, 0, sizeof *s);
    s->budget = budget;
    s->fd = -1;
    /* a quarter of the budget for the chunks being filled, between 512 and 64 Ki values each */
    size_t t = budget / 4 / 8 / (size_t)(nfields > 0 ? nfields : 1);
    s->tail_cap = t < 512 ? 512 : t > 65536 ? 65536 : t;
}

void cli_spools_free(cli_spools *s)
{
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
}

static int cli_spool_file(cli_spools *s)
{
    if (s->fd >= 0) return 0;
    FILE *f = tmpfile();                 /* already unlinked: nothing is left behind */
    if (!f) return -1;
    s->fd = dup(fileno(f));
    fclose(f);
    return s->fd >= 0 ? 0 : -1;
}

static int cli_write_at(int fd, const void *p, size_t n, uint64_t off)
{
    const char *c = p;
    while (n) {
        ssize_t w = pwrite(fd, c, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

static int cli_read_at(int fd, void *p, size_t n, uint64_t off)
{
    char *c = p;
    while (n) {
        ssize_t r = pread(fd, c, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { if (r == 0) errno = EIO; return -1; }
        c += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

static int cli_spool_flush(cli_spools *s, cli_spool *sp)
{
    if (!sp->tail_n) return 0;
    if (cli_spool_file(s)) return -1;
    if (sp->nchunks == sp->chunks_cap) {
        size_t nc = sp->chunks_cap ? sp->chunks_cap * 2 : 64;
        uint64_t *c = realloc(sp->chunk, nc * sizeof *c);
        if (!c) return -1;
        sp->chunk = c;
        uint32_t *cn = realloc(sp->chunk_n, nc * sizeof *cn);
        if (!cn) return -1;
        sp->chunk_n = cn;
        sp->chunks_cap = nc;
    }
    if (cli_write_at(s->fd, sp->tail, sp->tail_n * 8, s->end)) return -1;
    sp->chunk[sp->nchunks] = s->end;
    sp->chunk_n[sp->nchunks++] = (uint32_t)sp->tail_n;
    s->end += sp->tail_n * 8;
    sp->tail_n = 0;
    return 0;
}

int cli_spool_add(cli_spools *s, cli_spool *sp, const int64_t *v, size_t n)
{
    if (!sp->spilling && sp->n + n > sp->cap) {
        size_t nc = sp->cap ? sp->cap : 4096;
        while (nc < sp->n + n) nc *= 2;
        if (s->used - sp->cap * 8 + nc * 8 <= s->budget / 4 * 3) {
            int64_t *m = realloc(sp->mem, nc * 8);
            if (!m) return -1;
            s->used += (nc - sp->cap) * 8;
            sp->mem = m;
            sp->cap = nc;
        } else {
            sp->spilling = 1;
        }
    }
    if (!sp->spilling) {
        memcpy(sp->mem + sp->n, v, n * 8);
        sp->n += n;
        return 0;
    }
    if (!sp->tail) {
        sp->tail = malloc(s->tail_cap * 8);
        if (!sp->tail) return -1;
    }
    while (n) {
        size_t m = s->tail_cap - sp->tail_n < n ? s->tail_cap - sp->tail_n : n;
        memcpy(sp->tail + sp->tail_n, v, m * 8);
        sp->tail_n += m;
        v += m;
        n -= m;
        if (sp->tail_n == s->tail_cap && cli_spool_flush(s, sp)) return -1;
    }
    return 0;
}

int cli_spool_replay(cli_spools *s, cli_spool *sp, int (*fn)(void *user, const int64_t *v, size_t n),
                     void *user)
{
    const size_t piece = 65536;
    for (size_t k = 0; k < sp->n; k += piece) {
        int r = fn(user, sp->mem + k, sp->n - k < piece ? sp->n - k : piece);
        if (r) return r;
    }
    if (sp->nchunks) {
        int64_t *buf = malloc(s->tail_cap * 8);
        if (!buf) return -1;
        for (size_t c = 0; c < sp->nchunks; c++) {
            if (cli_read_at(s->fd, buf, (size_t)sp->chunk_n[c] * 8, sp->chunk[c])) {
                free(buf);
                return -1;
            }
            int r = fn(user, buf, sp->chunk_n[c]);
            if (r) { free(buf); return r; }
        }
        free(buf);
    }
    return sp->tail_n ? fn(user, sp->tail, sp->tail_n) : 0;
}


typedef struct { int64_t f; int apply; } cli_scale_job;

static int cli_fits(void *user, const int64_t *v, size_t n)
{
    int64_t f = ((cli_scale_job *)user)->f;
    for (size_t i = 0; i < n; i++)
        if (v[i] > INT64_MAX / f || v[i] < INT64_MIN / f) return 1;
    return 0;
}

static void cli_times(int64_t *v, size_t n, int64_t f)
{
    for (size_t i = 0; i < n; i++) v[i] *= f;
}

int cli_spool_rescale(cli_spools *s, cli_spool *sp, int k)
{
    cli_scale_job job = {cli_pow10_i64[k], 0};
    int r = cli_spool_replay(s, sp, cli_fits, &job);
    if (r) return r;
    cli_times(sp->mem, sp->n, job.f);
    cli_times(sp->tail, sp->tail_n, job.f);
    if (sp->nchunks) {
        int64_t *buf = malloc(s->tail_cap * 8);
        if (!buf) return -1;
        for (size_t c = 0; c < sp->nchunks; c++) {
            size_t bytes = (size_t)sp->chunk_n[c] * 8;
            if (cli_read_at(s->fd, buf, bytes, sp->chunk[c])) { free(buf); return -1; }
            cli_times(buf, sp->chunk_n[c], job.f);
            if (cli_write_at(s->fd, buf, bytes, sp->chunk[c])) { free(buf); return -1; }
        }
        free(buf);
    }
    return 0;
}

void cli_spool_clear(cli_spools *s, cli_spool *sp)
{
    s->used -= sp->cap * 8;
    free(sp->mem);
    free(sp->tail);
    free(sp->chunk);
    free(sp->chunk_n);
    memset(sp, 0, sizeof *sp);
}
