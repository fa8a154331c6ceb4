/* libtally_mpi's speed under mpirun -np P (weak scaling: every rank holds N f64; one core per
 * rank). Rows, every one timed the same way (a barrier, then the call on every rank; the time
 * is the slowest rank's, the best of R repetitions):
 *   plain     a plain local sum (8 independent vector accumulators) + MPI_Allreduce(MPI_SUM) of
 *             one double: the baseline, a rounding sum that depends on the rank count
 *   exact-op  tally_mpi_reduce_many(TALLY_SUM), exact, states merged by an MPI user op
 *   exact-tr  the same, states merged by our own recursive doubling
 *   step-op / step-tr   the cross-rank step alone: tally_mpi_reduce_many of an empty slice
 *   allred1   MPI_Allreduce(MPI_SUM) of one double (the latency the step is held against)
 * Before timing, every answer is checked: on integer-valued data (exact in f64 either way) all
 * three sums must agree bit for bit; on wide random data the two exact algorithms must agree.
 * Prints one table on rank 0: GB/s over the whole array, ratios against plain / allred1.
 *
 *   mpirun -np P bench_mpi [-n ELEMS_PER_RANK] [-r REPS] [--backend cpu|cuda] [--threads T]
 *          [--data int|wide]
 * With --backend cuda the data lives in device memory (the ranks share the GPUs round robin)
 * and the exact rows go through the CUDA context (staged through host memory, docs/mpi.md). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tally_mpi.h"
#if defined(TALLY_BENCH_CUDA)
#include <cuda_runtime.h>
#endif

static int g_rank, g_size;

typedef double v4d __attribute__((vector_size(32)));

/* The baseline's local sum: 8 vector accumulators (32 partial sums), then a fixed fold. */
__attribute__((target("avx2"), noinline)) static double plain_sum_avx2(const double *x, uint64_t n)
{
    v4d a[8];
    for (int j = 0; j < 8; j++) a[j] = (v4d){0, 0, 0, 0};
    uint64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int j = 0; j < 8; j++) {
            v4d v;
            memcpy(&v, x + i + 4 * j, sizeof v);
            a[j] += v;
        }
    double s = 0;
    for (int j = 0; j < 8; j++)
        for (int k = 0; k < 4; k++) s += a[j][k];
    for (; i < n; i++) s += x[i];
    return s;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

/* Best over reps of the slowest rank's time of fn. */
typedef void (*timed_fn)(void *);
static double time_it(int reps, timed_fn fn, void *arg)
{
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        fn(arg);
        double t = MPI_Wtime() - t0, worst;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (worst < best) best = worst;
    }
    return best;
}

typedef struct job {
    tally_context *ctx;
    const double *x;     /* host copy (the plain sum) */
    const double *dx;    /* what tally gets (device memory with --backend cuda) */
    uint64_t n;
    double out;
    tally_status st;
} job;

static void run_plain(void *a)
{
    job *j = a;
    double s = plain_sum_avx2(j->x, j->n);
    MPI_Allreduce(&s, &j->out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static void run_exact(void *a)
{
    job *j = a;
    tally_op op = TALLY_SUM;
    tally_result r;
    j->st = tally_mpi_reduce_many(j->ctx, MPI_COMM_WORLD, TALLY_F64, j->dx, j->n, &op, 1, NULL, &r);
    j->out = r.value.f64;
}
static void run_allred1(void *a)
{
    job *j = a;
    double s = 1.0;
    MPI_Allreduce(&s, &j->out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
/* 100 calls per timing: the step is a few microseconds */
#define STEP_CALLS 100
static void run_step(void *a)
{
    job *j = a;
    tally_op op = TALLY_SUM;
    tally_result r;
    for (int i = 0; i < STEP_CALLS; i++)
        j->st = tally_mpi_reduce_many(j->ctx, MPI_COMM_WORLD, TALLY_F64, NULL, 0, &op, 1, NULL, &r);
}
static void run_allred1_many(void *a)
{
    for (int i = 0; i < STEP_CALLS; i++) run_allred1(a);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    uint64_t n = 1ull << 26;
    int reps = 5, threads = 1, wide = 0;
    tally_backend_kind backend = TALLY_BACKEND_CPU;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) n = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--data") && i + 1 < argc) wide = !strcmp(argv[++i], "wide");
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            backend = !strcmp(argv[++i], "cuda") ? TALLY_BACKEND_CUDA : TALLY_BACKEND_CPU;
        else {
            if (g_rank == 0) fprintf(stderr, "bench_mpi: unknown argument %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    tally_options o;
    tally_options_init(&o);
    o.backend = backend;
    o.threads = threads;
#if defined(TALLY_BENCH_CUDA)
    int ndev = 0;
    if (backend == TALLY_BACKEND_CUDA && cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0)
        o.device = g_rank % ndev;
#endif
    tally_context *ctx;
    if (tally_create(&ctx, &o) != TALLY_OK) {
        fprintf(stderr, "rank %d: tally_create: %s\n", g_rank, tally_create_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double *x = malloc(n * sizeof *x);
    if (!x) MPI_Abort(MPI_COMM_WORLD, 1);
    rng += (uint64_t)g_rank * 0x632be59bd9b4e019ull;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        /* int: integers below 2^20 (every sum exact in f64); wide: exponents over 2^-40..2^40 */
        x[i] = wide ? ldexp(1.0 + (double)(r >> 12) * 0x1p-52, (int)(r % 81) - 40) * ((r >> 11) & 1 ? -1 : 1)
                    : (double)(r >> 44);
    }
    const double *dx = x;
#if defined(TALLY_BENCH_CUDA)
    double *d = NULL;
    if (backend == TALLY_BACKEND_CUDA) {
        if (cudaMalloc((void **)&d, n * sizeof *d) != cudaSuccess ||
            cudaMemcpy(d, x, n * sizeof *d, cudaMemcpyHostToDevice) != cudaSuccess) {
            fprintf(stderr, "rank %d: cudaMalloc/cudaMemcpy failed\n", g_rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        dx = d;
    }
#endif
    job j = {ctx, x, dx, n, 0, TALLY_OK};
    /* ---- answers first ---- */
    run_plain(&j);
    double plain = j.out;
    tally_mpi_set_algo(TALLY_MPI_ALGO_OP);
    run_exact(&j);
    double eop = j.out;
    tally_status sop = j.st;
    tally_mpi_set_algo(TALLY_MPI_ALGO_TREE);
    run_exact(&j);
    double etr = j.out;
    int ok = sop == TALLY_OK && j.st == TALLY_OK && memcmp(&eop, &etr, 8) == 0 &&
             (wide || memcmp(&plain, &eop, 8) == 0);
    if (!ok) {
        if (g_rank == 0)
            fprintf(stderr, "bench_mpi: WRONG ANSWER: plain %.17g, exact-op %.17g (%s), exact-tree "
                    "%.17g (%s): %s\n", plain, eop, tally_status_name(sop), etr,
                    tally_status_name(j.st), tally_last_error(ctx));
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    /* ---- timings ---- */
    double t_plain = time_it(reps, run_plain, &j);
    tally_mpi_set_algo(TALLY_MPI_ALGO_OP);
    double t_op = time_it(reps, run_exact, &j);
    double s_op = time_it(reps, run_step, &j) / STEP_CALLS;
    tally_mpi_set_algo(TALLY_MPI_ALGO_TREE);
    double t_tr = time_it(reps, run_exact, &j);
    double s_tr = time_it(reps, run_step, &j) / STEP_CALLS;
    double t_a1 = time_it(reps, run_allred1_many, &j) / STEP_CALLS;
    if (g_rank == 0) {
        double bytes = (double)n * 8.0 * g_size;
        printf("# bench_mpi: %d ranks x %llu f64 (%s data), %s, %d thread(s) per rank, best of %d\n",
               g_size, (unsigned long long)n, wide ? "wide" : "integer",
               tally_backend_name(tally_active_backend(ctx)), threads, reps);
        printf("%5s %10s %10s %10s %8s %8s | %9s %9s %9s %7s %7s\n", "ranks", "plain GB/s",
               "op GB/s", "tree GB/s", "op/pl", "tree/pl", "allred1us", "step-op", "step-tr",
               "op/a1", "tr/a1");
        printf("%5d %10.2f %10.2f %10.2f %8.3f %8.3f | %9.2f %9.2f %9.2f %7.2f %7.2f\n", g_size,
               bytes / t_plain * 1e-9, bytes / t_op * 1e-9, bytes / t_tr * 1e-9, t_plain / t_op,
               t_plain / t_tr, t_a1 * 1e6, s_op * 1e6, s_tr * 1e6, s_op / t_a1, s_tr / t_a1);
    }
#if defined(TALLY_BENCH_CUDA)
    if (d) cudaFree(d);
#endif
    free(x);
    tally_destroy(ctx);
    MPI_Finalize();
    return 0;
}
