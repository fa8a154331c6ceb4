/* Input: a regular file is memory-mapped whole (the page cache does the buffering, and files
 * larger than memory still work); a pipe, a terminal, a device, a socket, or a file whose size
 * the kernel reports as 0 (/proc, /sys) is read in pieces.
 *
 * A mapped file that is truncated while we read it would kill the process with SIGBUS at the
 * first page past the new end, in whichever thread touches it (the library's workers too). A
 * SIGBUS handler therefore maps zero pages over the rest of a mapping of ours and records that
 * the file changed; tio_input_changed reports it after the read, and the caller throws the
 * result away. Faults at other addresses get the default action, as before. */
#define _GNU_SOURCE 1
#include "tally_io.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the SIGBUS guard ----------------------------------------------------------------------- */
#define TIO_GUARD_SLOTS 16

typedef struct tio_guard_slot {
    uint8_t *volatile base;         /* NULL: free */
    volatile size_t len;
    volatile sig_atomic_t faulted;
} tio_guard_slot;

static tio_guard_slot tio_guard[TIO_GUARD_SLOTS];
static int tio_guard_installed;

static void tio_on_sigbus(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    uint8_t *a = si ? (uint8_t *)si->si_addr : NULL;
    for (int k = 0; a && k < TIO_GUARD_SLOTS; k++) {
        uint8_t *b = tio_guard[k].base;
        size_t len = tio_guard[k].len;
        if (!b || a < b || a >= b + len) continue;
        /* zero pages from the faulting page to the end of the mapping: later reads see zeros */
        long page = sysconf(_SC_PAGESIZE);
        uint8_t *from = b + ((size_t)(a - b) / (size_t)page) * (size_t)page;
        if (mmap(from, (size_t)(b + len - from), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                 -1, 0) != MAP_FAILED) {
            tio_guard[k].faulted = 1;
            return;
        }
        break;
    }
    signal(sig, SIG_DFL);               /* not ours (or the remap failed): die as before */
    raise(sig);
}

static void tio_guard_add(tio_input *in)
{
    if (!tio_guard_installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = tio_on_sigbus;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGBUS, &sa, NULL) == 0) tio_guard_installed = 1;
    }
    in->guard_slot = 0;
    for (int k = 0; k < TIO_GUARD_SLOTS; k++) {
        if (tio_guard[k].base) continue;
        tio_guard[k].len = (size_t)in->size;
        tio_guard[k].faulted = 0;
        tio_guard[k].base = (uint8_t *)in->data;
        in->guard_slot = k + 1;
        return;
    }
}

static void tio_guard_remove(tio_input *in)
{
    if (in->guard_slot <= 0) return;
    tio_guard[in->guard_slot - 1].base = NULL;
    in->guard_slot = 0;
}

/* ---- opening -------------------------------------------------------------------------------- */
static void tio_remember(tio_input *in, const struct stat *st)
{
    in->st_dev = (uint64_t)st->st_dev;
    in->st_ino = (uint64_t)st->st_ino;
    in->st_size = (uint64_t)st->st_size;
    in->st_mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    in->is_regular = S_ISREG(st->st_mode);
}

int tio_input_open(tio_input *in, const char *path, char *err, size_t errlen)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    if (!path || strcmp(path, "-") == 0) {
        in->name = strdup("<stdin>");
        in->fd = 0;
    } else {
        in->name = strdup(path);
        in->fd = open(path, O_RDONLY | O_CLOEXEC);   /* a FIFO waits for its writer, as cat does */
        if (in->fd < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            free(in->name);
            in->name = NULL;
            return -1;
        }
        in->owns_fd = 1;
    }
    if (!in->name) {
        snprintf(err, errlen, "out of memory");
        tio_input_close(in);
        return -1;
    }
    struct stat st;
    if (fstat(in->fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", in->name, strerror(errno));
        tio_input_close(in);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: %s", in->name, strerror(EISDIR));
        tio_input_close(in);
        return -1;
    }
    tio_remember(in, &st);
    /* Only a regular file with a size is mapped: /proc and /sys files say 0 and are read. */
    if (S_ISREG(st.st_mode) && st.st_size > 0 && lseek(in->fd, 0, SEEK_CUR) == 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, in->fd, 0);
        if (m != MAP_FAILED) {
            in->data = m;
            in->mapped = 1;
            in->size = (uint64_t)st.st_size;
            in->size_known = 1;
            tio_guard_add(in);
        }
    }
    return 0;
}

void tio_input_memory(tio_input *in, const void *data, size_t len, const char *name)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    in->name = strdup(name ? name : "<memory>");
    in->data = len ? data : (const uint8_t *)"";
    in->size = len;
    in->size_known = 1;
    in->mapped = 1;
    in->from_memory = 1;
}

int tio_input_changed(tio_input *in)
{
    if (in->guard_slot > 0 && tio_guard[in->guard_slot - 1].faulted) return 1;
    if (!in->is_regular || in->fd < 0) return 0;
    struct stat st;
    if (fstat(in->fd, &st) != 0) return 1;
    int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return (uint64_t)st.st_size != in->st_size || mtime != in->st_mtime_ns;
}

/* ---- reading -------------------------------------------------------------------------------- */
long long tio_input_read(tio_input *in, void *buf, size_t n)
{
    if (in->peek_pos < in->peek_len) {
        size_t k = in->peek_len - in->peek_pos;
        if (k > n) k = n;
        memcpy(buf, in->peek + in->peek_pos, k);
        in->peek_pos += k;
        return (long long)k;
    }
    if (in->fd < 0) return 0;
    for (;;) {
        ssize_t r = read(in->fd, buf, n);
        if (r < 0 && errno == EINTR) continue;
        return r;
    }
}

size_t tio_input_peek(tio_input *in, size_t want, const uint8_t **p)
{
    if (in->mapped) {
        *p = in->data;
        return in->size < want ? (size_t)in->size : want;
    }
    /* keep unconsumed peeked bytes at the front */
    if (in->peek_pos > 0) {
        memmove(in->peek, in->peek + in->peek_pos, in->peek_len - in->peek_pos);
        in->peek_len -= in->peek_pos;
        in->peek_pos = 0;
    }
    if (in->peek_len < want) {
        uint8_t *np = realloc(in->peek, want);
        if (!np) {
            *p = in->peek;
            return in->peek_len;
        }
        in->peek = np;
        while (in->peek_len < want && in->fd >= 0) {
            ssize_t r = read(in->fd, in->peek + in->peek_len, want - in->peek_len);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            in->peek_len += (size_t)r;
        }
    }
    *p = in->peek;
    return in->peek_len < want ? in->peek_len : want;
}

int tio_input_read_all(tio_input *in, size_t max, uint8_t **buf, size_t *len)
{
    size_t cap = 1 << 20, n = 0;
    uint8_t *b = malloc(cap);
    if (!b) return -1;
    for (;;) {
        if (n == cap) {
            if (max && cap >= max) {
                free(b);
                errno = EFBIG;
                return -1;
            }
            size_t nc = max && cap * 2 > max ? max : cap * 2;
            uint8_t *nb = realloc(b, nc);
            if (!nb) {
                free(b);
                errno = ENOMEM;
                return -1;
            }
            b = nb;
            cap = nc;
        }
        long long r = tio_input_read(in, b + n, cap - n);
        if (r < 0) {
            int e = errno;
            free(b);
            errno = e;
            return -1;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    *buf = b;
    *len = n;
    return 0;
}

void tio_input_close(tio_input *in)
{
    tio_guard_remove(in);
    if (in->mapped && !in->from_memory && in->size > 0) munmap((void *)in->data, (size_t)in->size);
    if (in->owns_fd && in->fd >= 0) close(in->fd);
    free(in->peek);
    free(in->name);
    memset(in, 0, sizeof *in);
    in->fd = -1;
}
