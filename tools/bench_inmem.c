/* tally_bench_inmem FILE.npy [OP] [REPEATS]: reads a 1-d native .npy into memory (touched, so
 * no page faults are timed), then times tally_reduce_many of OP (default sum) and prints
 * "seconds bytes GB/s" for the best run. bench/cli_bench.sh compares `tally OP FILE.npy`
 * against it: the command's cost over the library's in-memory speed. */
#include "tally_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: tally_bench_inmem FILE.npy [sum|min|max] [REPEATS]\n");
        return 2;
    }
    tally_op op = TALLY_SUM;
    if (argc > 2 && strcmp(argv[2], "min") == 0) op = TALLY_MIN;
    if (argc > 2 && strcmp(argv[2], "max") == 0) op = TALLY_MAX;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    tio_input in;
    char err[256];
    if (tio_input_open(&in, argv[1], err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); return 1; }
    uint8_t *buf;
    size_t len;
    if (tio_input_read_all(&in, 0, &buf, &len) != 0) { perror(argv[1]); return 1; }
    tio_npy_info info;
    if (tio_npy_parse(buf, len, &info, err, sizeof err) != TIO_NPY_OK || info.swap) {
        fprintf(stderr, "%s: %s\n", argv[1], info.swap ? "big-endian" : err);
        return 1;
    }
    size_t bytes = info.count * info.elsize;
    void *data = aligned_alloc(64, (bytes + 63) / 64 * 64);
    memcpy(data, buf + info.data_offset, bytes);
    free(buf);
    tally_context *ctx;
    if (tally_create(&ctx, NULL) != TALLY_OK) { fprintf(stderr, "%s\n", tally_create_error()); return 1; }
    double best = 1e30;
    tally_result r;
    for (int k = 0; k < reps; k++) {
        double t = now();
        tally_reduce_many(ctx, info.type, data, info.count, &op, 1, NULL, &r);
        t = now() - t;
        if (t < best) best = t;
    }
    printf("%.6f %zu %.2f\n", best, bytes, (double)bytes / best / 1e9);
    tally_destroy(ctx);
    free(data);
    tio_input_close(&in);
    return 0;
}
