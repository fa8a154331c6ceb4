/* probe_exact: where the correctly rounded f64 sum's extra GPU time goes at small sizes. In
 * CUDA graphs (bench_cuda, c19da34) it took 5.16 µs at 2^14 (4 blocks) against 2.92 for the plain
 * f64 sum with the same blocks, partials and ticket. This launches tally's own reduce kernel for
 * the exact f64 sum and for the plain one (TCU_MASK_FASTSUM) as the library does (PDL, its grid),
 * 1000 launches in a CUDA graph over 64 L2-resident inputs of price-like values, median of 5.
 * Built against a modified copy of reduce_kernel.cuh (-I before -Isrc), probe9.sh measures what
 * each part costs.
 *   nvcc -O3 -std=c++17 -arch=sm_90 -fmad=false [-I/tmp/ablation] -Iinclude -Isrc \
 *        bench/probes/probe_exact.cu -o probe_exact */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
#include "cuda/reduce_kernel.cuh"
#include "probe_graph.cuh"


int main(int argc, char **argv)
{
    const char *label = argc > 1 ? argv[1] : "as built";
    const int rot = 64, reps = 1000;
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    void *partials;
    long long *xpartials;
    unsigned *counter;
    tally_result *out;
    CK(cudaMalloc(&partials, (size_t)TCU_MAX_BLOCKS * TCU_PARTIAL_BYTES));
    CK(cudaMalloc(&xpartials, (size_t)TCU_MAX_BLOCKS * TALLY_EXACT_CHUNKS * sizeof(long long)));
    CK(cudaMalloc(&counter, 32));
    CK(cudaMemset(counter, 0, 24));
    CK(cudaMemset((char *)counter + 24, 0xff, 8));
    CK(cudaMalloc(&out, sizeof(tally_result) * 4));
    const int maxlg = 20;
    std::vector<double> h((size_t)rot << maxlg);
    for (size_t i = 0; i < h.size(); i++) /* cents from 0.01 to 1000.00, as bench_cuda's prices */
        h[i] = (double)((i * 2654435761u) % 100000u + 1u) / 100.0;
    double *in;
    CK(cudaMalloc(&in, h.size() * sizeof(double)));
    CK(cudaMemcpy(in, h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice));
    for (int exact : {1, 0})
    for (int lg = 12; lg <= maxlg; lg += 2) {
        const unsigned long long n = 1ull << lg;
        tcu_reduce_params p;
        memset(&p, 0, sizeof p);
        p.n = n;
        p.body_vec = n / 2;
        p.partials = partials;
        p.xpartials = xpartials;
        p.counter = counter;
        p.acc = (unsigned long long *)((char *)counter + 8);
        p.kmax_word = (unsigned long long *)((char *)counter + 16);
        p.kmin_word = (unsigned long long *)((char *)counter + 24);
        p.out = out;
        p.nops = 1;
        p.ops[0] = TALLY_SUM;
        p.pdl = 1;
        /* the library's grid (launch_reduce_t): batches of 256 x 8 vectors */
        unsigned long long nb = (p.body_vec + 2047) / 2048;
        unsigned long long minb = (nb <= 2 || nb >= 512) ? 2 : 1;
        unsigned grid = (unsigned)((nb + minb - 1) / minb);
        auto launch = [&](int r) {
            tcu_reduce_params q = p;
            q.data = in + ((size_t)(r % rot) << maxlg);
            if (exact) tcu::launch_kernel(tcu::reduce_kernel<double, TCU_MASK_SUM, false, false>, grid, 0, st, true, q);
            else tcu::launch_kernel(tcu::reduce_kernel<double, TCU_MASK_FASTSUM, false, false>, grid, 0, st, true, q);
        };
        launch(5);
        CK(cudaStreamSynchronize(st));
        CK(cudaGetLastError());
        tally_result res;
        CK(cudaMemcpy(&res, out, sizeof res, cudaMemcpyDeviceToHost));
        long double want = 0;
        for (unsigned long long i = 0; i < n; i++) want += h[((size_t)5 << maxlg) + i];
        const double us = graph_us(st, launch, reps);
        if (us < 0) {
            printf("FATAL: the launches could not be captured in a graph\n");
            return 1;
        }
        double rel = std::fabs((double)((long double)res.value.f64 - want) / (double)want);
        printf("%-12s %s f64 sum 2^%-2d grid %4u: %6.2f us per launch  (rel. error %.1e)\n", label,
               exact ? "exact" : "plain", lg, grid, us, rel);
    }
    CK(cudaGetLastError());
    return 0;
}
