/* libtally_mpi with CUDA contexts (ranks share the GPUs round robin): each rank's slice lives
 * in device memory; reductions, streams and scans through tally_mpi must give what the same
 * calls give on CPU contexts over host copies (bit for bit, except float sum/product scans, whose
 * per-element rounding is the CUDA backend's: checked to a relative 1e-12 there).
 * Exits 77 (skipped) on every rank when no rank has a usable GPU. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include "tally_mpi.h"
#include "../support/check.h"

static int g_rank, g_size;

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

static void *to_device(const void *h, size_t bytes)
{
    void *d = NULL;
    if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess) return NULL;
    if (bytes) cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
    return d;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_check_out = stderr;
    g_check_limit = 20;
    snprintf(g_check_prefix, sizeof g_check_prefix, "[rank %d/%d] ", g_rank, g_size);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess) ndev = 0;
    int have = ndev > 0 && tally_backend_available(TALLY_BACKEND_CUDA), all;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (g_rank == 0) printf("test_mpi_cuda: SKIPPED: no usable CUDA GPU on some rank\n");
        MPI_Finalize();
        return 77;
    }
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CUDA;
    o.device = g_rank % ndev;
    tally_context *gpu, *cpu;
    if (tally_create(&gpu, &o) != TALLY_OK) {
        fprintf(stderr, "rank %d: %s\n", g_rank, tally_create_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    o.backend = TALLY_BACKEND_CPU;
    o.threads = 2;
    tally_create(&cpu, &o);
    const tally_type types[] = {TALLY_I32, TALLY_U8, TALLY_I64, TALLY_F32, TALLY_F64};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        tally_type t = types[ti];
        size_t es = tally_type_size(t);
        int fl = t == TALLY_F32 || t == TALLY_F64;
        for (int rep = 0; rep < 3; rep++) {
            uint64_t n = rnd() % 300000 + (rep == 0 ? 0 : 5000000 * (uint64_t)rep); /* > 32 MiB: staging pieces */
            if (rnd() % 5 == 0) n = 0;
            char *h = malloc(n * es + 8);
            for (uint64_t i = 0; i < n; i++) {
                uint64_t r = rnd();
                switch (t) {
                case TALLY_I32: ((int32_t *)h)[i] = (int32_t)(r >> 40) - (1 << 23); break;
                case TALLY_U8: ((uint8_t *)h)[i] = (uint8_t)r; break;
                case TALLY_I64: ((int64_t *)h)[i] = (int64_t)(r >> 20) - (1ll << 43); break;
                case TALLY_F32: ((float *)h)[i] = (float)ldexp((double)(r >> 11) * 0x1p-53 - 0.5, (int)(r % 40) - 20); break;
                default: ((double *)h)[i] = ldexp((double)(r >> 11) * 0x1p-53 - 0.5, (int)(r % 200) - 100); break;
                }
            }
            void *d = to_device(h, n * es);
            tally_op ops[TALLY_OP_COUNT];
            size_t nops = 0;
            for (int op = 0; op < TALLY_OP_COUNT; op++)
                if (!(fl && op >= TALLY_AND && op <= TALLY_XOR) && op != TALLY_PROD) ops[nops++] = (tally_op)op;
            tally_result rg[TALLY_OP_COUNT], rc[TALLY_OP_COUNT];
            tally_status sg = tally_mpi_reduce_many(gpu, MPI_COMM_WORLD, t, d, n, ops, nops, NULL, rg);
            tally_status sc = tally_mpi_reduce_many(cpu, MPI_COMM_WORLD, t, h, n, ops, nops, NULL, rc);
            CHECK(sg == sc, "%s reduce status %s vs cpu %s: %s", tally_type_name(t),
                  tally_status_name(sg), tally_status_name(sc), tally_last_error(gpu));
            for (size_t i = 0; i < nops; i++)
                CHECK(rg[i].status == rc[i].status && rg[i].value.u64 == rc[i].value.u64 &&
                          rg[i].index == rc[i].index,
                      "%s %s: gpu %llx/%llu, cpu %llx/%llu", tally_op_name(ops[i]), tally_type_name(t),
                      (unsigned long long)rg[i].value.u64, (unsigned long long)rg[i].index,
                      (unsigned long long)rc[i].value.u64, (unsigned long long)rc[i].index);
            /* streams: two chunks of device memory */
            tally_mpi_stream *s;
            tally_mpi_stream_create(gpu, MPI_COMM_WORLD, t, ops, nops, NULL, &s);
            tally_mpi_stream_update(s, d, n / 2);
            tally_mpi_stream_update(s, (char *)d + n / 2 * es, n - n / 2);
            tally_result rs[TALLY_OP_COUNT];
            tally_mpi_stream_results(s, rs);
            tally_mpi_stream_destroy(s);
            for (size_t i = 0; i < nops; i++)
                if (ops[i] != TALLY_VAR)
                    CHECK(rs[i].status == rc[i].status && rs[i].value.u64 == rc[i].value.u64,
                          "stream %s %s", tally_op_name(ops[i]), tally_type_name(t));
            /* scans: sum and max, inclusive and exclusive */
            tally_op sops[] = {TALLY_SUM, TALLY_MAX};
            for (int k = 0; k < 4; k++) {
                tally_scan_options so;
                memset(&so, 0, sizeof so);
                so.exclusive = k & 1;
                tally_op op = sops[k >> 1];
                void *dout = to_device(h, n * es); /* any contents: overwritten */
                char *outg = malloc(n * es + 8), *outc = malloc(n * es + 8);
                tally_status a = tally_mpi_scan(gpu, MPI_COMM_WORLD, op, t, d, dout, n, &so);
                tally_status b = tally_mpi_scan(cpu, MPI_COMM_WORLD, op, t, h, outc, n, &so);
                CHECK(a == TALLY_OK && b == TALLY_OK, "scan %s %s: %s / %s: %s", tally_op_name(op),
                      tally_type_name(t), tally_status_name(a), tally_status_name(b),
                      tally_last_error(gpu));
                if (n) cudaMemcpy(outg, dout, n * es, cudaMemcpyDeviceToHost);
                /* Float sum scans are evaluated in another order on the GPU (tally.h): the two
                 * may differ by rounding, which any order bounds by a multiple of the unit
                 * roundoff times the sum of |x| up to the element (prior ranks' included), not
                 * of |y|, which cancellation can make tiny. */
                double abs_before = 0, abs_local = 0, abs_run = 0;
                if (fl && op == TALLY_SUM) {
                    for (uint64_t i = 0; i < n; i++)
                        abs_local += fabs(t == TALLY_F32 ? ((float *)h)[i] : ((double *)h)[i]);
                    MPI_Exscan(&abs_local, &abs_before, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                    if (g_rank == 0) abs_before = 0;
                }
                for (uint64_t i = 0; i < n; i++) {
                    int same;
                    if (fl && op == TALLY_SUM) {
                        double x = t == TALLY_F32 ? ((float *)outg)[i] : ((double *)outg)[i];
                        double y = t == TALLY_F32 ? ((float *)outc)[i] : ((double *)outc)[i];
                        abs_run += fabs(t == TALLY_F32 ? ((float *)h)[i] : ((double *)h)[i]);
                        same = fabs(x - y) <= (t == TALLY_F32 ? 0x1p-24 : 0x1p-53) * 4096.0 *
                                                  (abs_before + abs_run) + 1e-300;
                    } else {
                        same = memcmp(outg + i * es, outc + i * es, es) == 0;
                    }
                    if (!same) {
                        CHECK(0, "scan %s %s excl=%d: element %llu of %llu differs", tally_op_name(op),
                              tally_type_name(t), so.exclusive, (unsigned long long)i,
                              (unsigned long long)n);
                        break;
                    }
                }
                cudaFree(dout);
                free(outg);
                free(outc);
            }
            cudaFree(d);
            free(h);
        }
    }
    int fails;
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0) printf("test_mpi_cuda: %d ranks on %d GPU(s), %d failed\n", g_size, ndev, fails);
    tally_destroy(gpu);
    tally_destroy(cpu);
    MPI_Finalize();
    return fails ? 1 : 0;
}
