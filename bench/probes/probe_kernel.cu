/* probe_kernel: tally's own reduce kernel (reduce_kernel.cuh, i32 sum) launched as the library
 * launches it (PDL, the library's grid), 1000 launches captured in a CUDA graph, rotating over
 * 64 inputs (L2-resident at these sizes, as in bench_cuda): GPU µs per launch, median of 5.
 * Both ways of combining the blocks: partials and a ticket, and the one-atomic packed sum.
 * Built against a modified copy of reduce_kernel.cuh (-I before -Isrc) it measures what a part
 * of the kernel costs (the ablations of the 2026-11-29 notes).
 *   nvcc -O3 -std=c++17 -arch=sm_90 -fmad=false [-I/tmp/ablation] -Iinclude -Isrc \
 *        bench/probes/probe_kernel.cu -o probe_kernel */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
#include "cuda/reduce_launch.cuh"
#include "probe_graph.cuh"
#include "probe_reduce.cuh"


int main()
{
    const int rot = 64, reps = 1000;
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    ReduceScratch sc;
    CK(reduce_scratch(&sc));
    tally_result *out = sc.out;
    auto kern = tcu::reduce_kernel<int, TCU_MASK_SUM, false, false>;
    for (int packed : {0, 1})
    for (int lg : {10, 12, 14, 16, 18, 20, 22}) {
        const unsigned long long n = 1ull << lg;
        int *in;
        CK(cudaMalloc(&in, n * 4 * rot));
        std::vector<int> h(n * rot);
        for (size_t i = 0; i < h.size(); i++) h[i] = (int)(i * 2654435761u % 2001) - 1000;
        CK(cudaMemcpy(in, h.data(), n * 4 * rot, cudaMemcpyHostToDevice));
        tcu_reduce_params p = reduce_params(sc, n, n / 4, TALLY_SUM);
        /* the library's grid (launch_reduce_t): batches of 256 x 8 vectors; <= 2 batches: one
         * block; from 512 batches: 2 per block; else one per block (fewer than resident) */
        unsigned long long nb = (p.body_vec + 2047) / 2048;
        unsigned long long minb = (nb <= 2 || nb >= 512) ? 2 : 1;
        unsigned grid = (unsigned)((nb + minb - 1) / minb);
        /* the launcher's rule (set_combine): the sum field's bits for this grid; these inputs'
         * block sums are far below its bound */
        int cbits = 1;
        while ((1ull << cbits) < grid) cbits++;
        p.packed = packed && grid > 1 ? 64 - cbits : 0;
        auto launch = [&](int r) {
            tcu_reduce_params q = p;
            q.data = in + n * (size_t)(r % rot);
            tcu::launch_kernel(kern, grid, 0, st, true, q);
        };
        /* check one result */
        launch(5);
        CK(cudaStreamSynchronize(st));
        tally_result res;
        CK(cudaMemcpy(&res, out, sizeof res, cudaMemcpyDeviceToHost));
        long long want = 0;
        for (unsigned long long i = 0; i < n; i++) want += h[5 * n + i];
        const double us = graph_us(st, launch, reps);
        if (us < 0) {
            printf("FATAL: the launches could not be captured in a graph\n");
            return 1;
        }
        printf("i32 sum 2^%-2d grid %4u packed %d: %6.2f us per launch  (result %s)\n", lg, grid, p.packed, us,
               res.value.i64 == want ? "right" : "WRONG");
        cudaFree(in);
    }
    CK(cudaGetLastError());
    return 0;
}
