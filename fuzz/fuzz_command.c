/* libFuzzer: the whole tally command (cli_main) over small files.
 *
 * Input: byte 0 picks how the data is given (bit 0: as a pipe on standard input instead of a
 * file; bit 1: the file is named .csv); byte 1 is the number of arguments (mod 12); then the
 * arguments, NUL-terminated; the rest is the data. An argument "@" becomes the data file's path,
 * "@o" a path for OUT (scans), "@l" a symlink to it; any other argument with a '/' is dropped, so
 * that the command never reads or writes outside its directory. Thread counts are dropped (the fuzzer would
 * start thousands of threads) and `demo` is not run (a fixed 16 MiB example).
 *
 * Checked: no crash, leak or undefined behaviour (the sanitizers); the exit status is 0, 1 or 2;
 * no temporary file is left beside OUT; the data file is never changed. It runs in a directory
 * of its own (relative OUT names land there). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "cli.h"

static char dir[64], data_path[96], out_path[96], link_path[96];

static void setup(void)
{
    if (dir[0]) return;
    snprintf(dir, sizeof dir, "/tmp/tally-fuzz-XXXXXX");
    if (!mkdtemp(dir)) abort();
    if (chdir(dir) != 0) abort();      /* relative names the fuzzer makes up land here */
    /* small limits: the fuzzer's inputs are small, and the limits' paths get exercised */
    cli_limit.spool_memory = 1 << 16;
    cli_limit.max_record = 1 << 16;
}

/* A temporary OUT is named OUT.tmp.XXXXXX (tools/cli/outfile.c). One left behind is a name of
 * that shape that the arguments did not name (the fuzzer may call OUT ".tmp.x" itself). */
static int left_behind(char **argv, int argc)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d))) {
        const char *t = strstr(e->d_name, ".tmp.");
        while (t && strstr(t + 1, ".tmp.")) t = strstr(t + 1, ".tmp.");
        if (!t || strlen(t + 5) != 6) continue;
        int named = 0;
        for (int k = 1; k < argc; k++) {
            size_t la = strlen(argv[k]), ln = strlen(e->d_name);    /* NAME, -oNAME, --out=NAME */
            if (la >= ln && strcmp(argv[k] + la - ln, e->d_name) == 0) named = 1;
        }
        if (named) {
            unlinkat(dirfd(d), e->d_name, 0);  /* asked for: gone before the next run looks */
        } else {
            fprintf(stderr, "left behind: %s/%s\n", dir, e->d_name);
            found = 1;
        }
    }
    closedir(d);
    return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size < 2 || size > 65536) return 0;
    int as_pipe = data[0] & 1, as_csv = data[0] & 2;
    int nargs = data[1] % 12;
    size_t pos = 2;
    char *argv[32];
    int argc = 0;
    argv[argc++] = "tally";
    char *copy = malloc(size + 1);
    memcpy(copy, data, size);
    copy[size] = '\0';
    snprintf(data_path, sizeof data_path, "%s/in%s", dir, as_csv ? ".csv" : ".txt");
    snprintf(out_path, sizeof out_path, "%s/out", dir);
    snprintf(link_path, sizeof link_path, "%s/link", dir);
    for (int k = 0; k < nargs && pos < size; k++) {
        char *a = copy + pos;
        size_t l = strnlen(a, size - pos);
        pos += l + 1;
        if (strchr(a, '/')) continue;       /* only our own paths: never write elsewhere */
        if (strcmp(a, "@") == 0) a = data_path;
        else if (strcmp(a, "@o") == 0) a = out_path;
        else if (strcmp(a, "@l") == 0) a = link_path;
        else if (strncmp(a, "-j", 2) == 0 || strncmp(a, "--threads", 9) == 0 ||
                 strcmp(a, "demo") == 0)
            continue;
        argv[argc++] = a;
    }
    argv[argc] = NULL;
    const uint8_t *body = pos < size ? data + pos : data;
    size_t blen = pos < size ? size - pos : 0;
    int fd = open(data_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, body, blen) != (ssize_t)blen) abort();
    close(fd);
    unlink(link_path);
    if (symlink(data_path, link_path) != 0) abort();
    int saved_stdin = -1;
    if (as_pipe) {
        int p[2];
        if (pipe(p) != 0) abort();
        if (blen && write(p[1], body, blen) != (ssize_t)blen) abort();   /* <= 64 KiB: fits */
        close(p[1]);
        saved_stdin = dup(0);
        dup2(p[0], 0);
        close(p[0]);
    }
    int rc = cli_main(argc, argv);
    if (as_pipe) {
        dup2(saved_stdin, 0);
        close(saved_stdin);
    }
    clearerr(stdout);
    if (rc < 0 || rc > 2) abort();
    if (left_behind(argv, argc)) abort();
    /* the input is never written (OUT may be the data file itself: then it is replaced) */
    struct stat st;
    if (stat(data_path, &st) == 0 && st.st_size != (off_t)blen && strcmp(argv[argc > 1 ? 1 : 0], "scan") != 0)
        abort();
    free(copy);
    return 0;
}
