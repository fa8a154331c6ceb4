/* Writing OUT (tally scan -o OUT).
 *
 *   - a regular file, or a name that does not exist yet: written to OUT.tmp.XXXXXX beside it and
 *     renamed over OUT at the end, so OUT is either the old file or the whole new one; on an
 *     error or SIGINT/SIGTERM/SIGHUP the temporary file is removed. An existing OUT keeps its
 *     mode (and, when we may, its owner); a new one gets 0666 less the umask;
 *   - a symbolic link: followed, and the file it leads to is replaced (the link stays a link);
 *   - a device, a FIFO or a socket (/dev/null, /dev/stdout, a named pipe): written in place, as
 *     the shell's > would; there is nothing to rename;
 *   - a directory: an error. */
#define _GNU_SOURCE 1
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char cli_tmp_path[PATH_MAX + 32];       /* for the signal handler */
static struct sigaction cli_old_action[3];
static const int cli_signals[3] = {SIGINT, SIGTERM, SIGHUP};

static void cli_on_signal(int sig)
{
    if (cli_tmp_path[0]) unlink(cli_tmp_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void cli_signals_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cli_on_signal;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < 3; k++) sigaction(cli_signals[k], &sa, &cli_old_action[k]);
}

static void cli_signals_restore(void)
{
    for (int k = 0; k < 3; k++) sigaction(cli_signals[k], &cli_old_action[k], NULL);
}

/* The file that writing to path would write: path itself, or where its symlinks lead.
 * malloc'd; NULL with errno (ELOOP after 40 links). */
static char *cli_follow_links(const char *path)
{
    char *p = strdup(path);
    for (int hops = 0; p && hops < 40; hops++) {
        struct stat st;
        if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode)) return p;
        char link[PATH_MAX];
        ssize_t l = readlink(p, link, sizeof link - 1);
        if (l < 0) { free(p); return NULL; }
        link[l] = '\0';
        char *next;
        const char *slash = strrchr(p, '/');
        if (link[0] == '/' || !slash) {
            next = strdup(link);
        } else {                               /* relative to the link's directory */
            size_t dl = (size_t)(slash - p) + 1;
            next = malloc(dl + (size_t)l + 1);
            if (next) {
                memcpy(next, p, dl);
                memcpy(next + dl, link, (size_t)l + 1);
            }
        }
        free(p);
        p = next;
    }
    if (p) {
        free(p);
        errno = ELOOP;
    }
    return NULL;
}

int cli_out_replaces(const char *out)
{
    if (!out || strcmp(out, "-") == 0) return 0;
    char *target = cli_follow_links(out);
    if (!target) return 0;
    struct stat st;
    int r = stat(target, &st) != 0 ? errno == ENOENT : S_ISREG(st.st_mode);
    free(target);
    return r;
}

int cli_out_open(cli_outfile *f, const char *out)
{
    memset(f, 0, sizeof *f);
    f->name = out;
    f->fd = -1;
    f->target = cli_follow_links(out);
    if (!f->target) {
        cli_error("%s: %s", out, strerror(errno));
        return 1;
    }
    struct stat st;
    int exists = stat(f->target, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        cli_error("%s: %s", out, strerror(EISDIR));
        free(f->target);
        return 1;
    }
    if (exists && !S_ISREG(st.st_mode)) {     /* a device, a FIFO, a socket: write it as it is */
        f->fd = open(f->target, O_WRONLY | O_CLOEXEC);
        if (f->fd < 0) {
            cli_error("%s: %s", out, strerror(errno));
            free(f->target);
            return 1;
        }
        f->direct = 1;
        return 0;
    }
    if (strlen(f->target) + 12 >= sizeof cli_tmp_path) {
        cli_error("%s: %s", out, strerror(ENAMETOOLONG));
        free(f->target);
        return 1;
    }
    char path[sizeof cli_tmp_path];
    snprintf(path, sizeof path, "%s.tmp.XXXXXX", f->target);
    cli_signals_catch();
    f->fd = mkostemp(path, O_CLOEXEC);
    if (f->fd < 0) {
        cli_error("%s: cannot create a temporary file beside it: %s", out, strerror(errno));
        cli_signals_restore();
        free(f->target);
        return 1;
    }
    memcpy(cli_tmp_path, path, sizeof path);
    if (exists) {                              /* OUT keeps its owner and mode */
        if (fchown(f->fd, st.st_uid, st.st_gid) != 0) { /* not ours to give away: keep ours */ }
        fchmod(f->fd, st.st_mode & 07777);
    } else {                                   /* mkstemp made it 0600: the usual mode instead */
        mode_t mask = umask(0);
        umask(mask);
        fchmod(f->fd, 0666 & ~mask);
    }
    return 0;
}

int cli_out_write(cli_outfile *f, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        size_t m = n > ((size_t)1 << 30) ? (size_t)1 << 30 : n;
        if (cli_limit.write_limit >= 0) {      /* tally-testing: a disk that fills up */
            if (cli_limit.write_limit == 0) { errno = ENOSPC; return -1; }
            if ((long long)m > cli_limit.write_limit) m = (size_t)cli_limit.write_limit;
            cli_limit.write_limit -= (long long)m;
        }
        ssize_t w = write(f->fd, c, m);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

const char *cli_out_temp(const cli_outfile *f) { return f->direct ? NULL : cli_tmp_path; }

int cli_out_finish(cli_outfile *f, int ok)
{
    int rc = ok ? 0 : 1;
    if (f->fd >= 0 && f->fd != 1 && close(f->fd) != 0 && rc == 0) {
        cli_error("%s: %s", f->name, strerror(errno));
        rc = 1;
    }
    f->fd = -1;
    if (!f->direct) {
        if (rc == 0 && rename(cli_tmp_path, f->target) != 0) {
            cli_error("%s: %s", f->name, strerror(errno));
            rc = 1;
        }
        if (rc) unlink(cli_tmp_path);
        cli_tmp_path[0] = '\0';
        cli_signals_restore();
    }
    free(f->target);
    f->target = NULL;
    return rc;
}
