/* What the probes share: CK (a failed CUDA call ends main with 1) and graph_us (1000-odd launches
 * captured once in a CUDA graph and replayed: GPU µs per launch, median of 5 replays, the host's
 * enqueue cost left out). Included from the probe's own folder: each probe still builds with one
 * nvcc line. */
#ifndef TALLY_PROBE_GRAPH_CUH
#define TALLY_PROBE_GRAPH_CUH

#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define CK(x)                                                                                    \
    do {                                                                                         \
        cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                 \
            printf("FATAL %s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));              \
            return 1;                                                                            \
        }                                                                                        \
    } while (0)

/* launch(r) for r < reps, captured on st, then replayed once to warm up and 5 times timed.
 * Returns -1 if the capture or its instantiation failed. */
template <typename L> static double graph_us(cudaStream_t st, L launch, int reps)
{
    cudaGraph_t g;
    cudaGraphExec_t ge;
    if (cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed) != cudaSuccess) return -1;
    for (int r = 0; r < reps; r++) launch(r);
    if (cudaStreamEndCapture(st, &g) != cudaSuccess) return -1;
    if (cudaGraphInstantiate(&ge, g, 0) != cudaSuccess) {
        cudaGraphDestroy(g);
        return -1;
    }
    cudaGraphLaunch(ge, st);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<double> t;
    for (int i = 0; i < 5; i++) {
        cudaEventRecord(a, st);
        cudaGraphLaunch(ge, st);
        cudaEventRecord(b, st);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms * 1000.0 / reps);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    std::sort(t.begin(), t.end());
    return t[2];
}

#endif
