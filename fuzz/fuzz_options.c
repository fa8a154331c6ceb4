/* libFuzzer: the command's option parser. The input is argv, NUL-separated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[64];
    int argc = 0;
    argv[argc++] = "tally";
    char *p = buf;
    while (p < buf + size && argc < 63) {
        argv[argc++] = p;
        p += strlen(p) + 1;
    }
    argv[argc] = NULL;
    cli_opts o;
    int rc = cli_parse_args(argc, argv, &o);
    if (rc != 0 && rc != 2) abort();
    if (rc == 2 && o.err[0] == '\0') abort();          /* a usage error always says why */
    if (rc == 0 && o.cmd == CLI_REDUCE && (o.nops < 1 || o.nops > CLI_MAX_OPS)) abort();
    if (rc == 0 && o.cmd == CLI_SCAN && !cli_op_scannable(o.scan_op)) abort();
    free(buf);
    return 0;
}
