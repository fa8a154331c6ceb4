/* tally-testing: the tally command with its limits turned down, for tests (never installed).
 *
 *   tally-testing [--spool-memory BYTES] [--max-record BYTES] [--write-limit BYTES]
 *                 [--change-input truncate|grow] [--scan-chunk ELEMENTS] -- TALLY-ARGS...
 *
 * --spool-memory and --max-record lower the memory a pipe may take, so that the limits are
 * reached with small inputs; --write-limit makes writing OUT fail with ENOSPC after that many
 * bytes (a full disk); --change-input truncates the input file to a tenth, or appends a line to
 * it, right after tally opened (and mapped) it, as another process might; --scan-chunk sets the
 * elements per chunk of a streamed scan (scan_stream.c), so that small inputs cross many chunk
 * boundaries (a multiple of 4096 keeps the one-call scan's bits; any other value is there to
 * show that the tests catch the difference). */
#include "cli.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *change;

static void change_input(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return;
    if (strcmp(change, "truncate") == 0) {
        if (truncate(path, st.st_size / 10) != 0) perror("tally-testing: truncate");
    } else {
        int fd = open(path, O_WRONLY | O_APPEND);
        if (fd < 0 || write(fd, "1\n", 2) != 2) perror("tally-testing: append");
        if (fd >= 0) close(fd);
    }
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (i + 1 >= argc) break;
        const char *v = argv[++i];
        if (strcmp(argv[i - 1], "--spool-memory") == 0) cli_limit.spool_memory = strtoull(v, NULL, 10);
        else if (strcmp(argv[i - 1], "--max-record") == 0) cli_limit.max_record = strtoull(v, NULL, 10);
        else if (strcmp(argv[i - 1], "--write-limit") == 0) cli_limit.write_limit = atoll(v);
        else if (strcmp(argv[i - 1], "--scan-chunk") == 0) cli_limit.scan_chunk = strtoull(v, NULL, 10);
        else if (strcmp(argv[i - 1], "--change-input") == 0) {
            change = v;
            cli_limit.after_input_open = change_input;
        } else break;
    }
    if (i >= argc || strcmp(argv[i], "--") != 0) {
        fprintf(stderr, "usage: tally-testing [--spool-memory N] [--max-record N] [--write-limit N] "
                        "[--change-input truncate|grow] [--scan-chunk N] -- TALLY-ARGS...\n");
        return 2;
    }
    argv[i] = "tally";
    return cli_main(argc - i, argv + i);
}
