/* Input: a regular file is memory-mapped whole (the page cache does the buffering, and files
 * larger than memory still work); a pipe, a terminal or a socket is read in pieces. */
#include "tally_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int tio_input_open(tio_input *in, const char *path, char *err, size_t errlen)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    if (!path || strcmp(path, "-") == 0) {
        in->name = strdup("<stdin>");
        in->fd = 0;
    } else {
        in->name = strdup(path);
        in->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            free(in->name);
            in->name = NULL;
            return -1;
        }
        in->owns_fd = 1;
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
    if (S_ISREG(st.st_mode)) {
        in->size = (uint64_t)st.st_size;
        in->size_known = 1;
        off_t pos = lseek(in->fd, 0, SEEK_CUR);
        if (pos == 0 && st.st_size > 0) {
            void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, in->fd, 0);
            if (m != MAP_FAILED) {
                in->data = m;
                in->mapped = 1;
            }
        } else if (pos == 0) {
            in->mapped = 1;        /* an empty file: nothing to map */
            in->data = (const uint8_t *)"";
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

int tio_input_read_all(tio_input *in, uint8_t **buf, size_t *len)
{
    size_t cap = 1 << 20, n = 0;
    uint8_t *b = malloc(cap);
    if (!b) return -1;
    for (;;) {
        if (n == cap) {
            uint8_t *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                errno = ENOMEM;
                return -1;
            }
            b = nb;
            cap *= 2;
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
    if (in->mapped && !in->from_memory && in->size > 0) munmap((void *)in->data, (size_t)in->size);
    if (in->owns_fd && in->fd >= 0) close(in->fd);
    free(in->peek);
    free(in->name);
    memset(in, 0, sizeof *in);
    in->fd = -1;
}
