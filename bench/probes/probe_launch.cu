/* probe_launch: what does one small reduce launch cost on the GPU, and what in a kernel adds to
 * it? In CUDA graphs (no host enqueue cost) tally's one-launch reduce took ~2.2 µs at 2^10-2^12
 * int32 elements where CUB's one single-tile kernel took 1.2-1.5 µs (2026-11-29). Each variant
 * below sums 2^12 int32 (16 KB, one block of 256 threads) and writes one value; 1000 launches are
 * captured in a graph, rotating over 64 inputs (L2-resident, as in bench_cuda), and the replay is
 * timed: µs per launch, median of 5.
 *   plain     the sum, one block, thread 0 writes
 *   stack     + thread 0 calls a noinline function with a 1.8 KB local array (tally's reduce
 *               kernels had 112 B to 1.9 KB of stack: finalize and its State copy); also
 *               128 B and 2 KB
 *   pdl       + griddepcontrol.wait/launch_dependents, launched with the PDL attribute
 *   bigcode   + 1500 instructions of straight-line code run once (cold instruction fetches)
 *   ticket    + the partial written and an acq_rel atomic ticket (as if 1 of 1 blocks)
 *   empty     an empty kernel
 *   nvcc -O3 -std=c++17 -arch=sm_90 bench/probes/probe_launch.cu -o probe_launch */
#include "probe_graph.cuh"


enum { V_PLAIN = 0, V_STACK = 1, V_PDL = 2, V_BIGCODE = 4, V_TICKET = 8, V_STACK16 = 16, V_STACK256 = 32 };

/* W words (8 W bytes) on the stack: read back at an index known only at run time */
template <int W> __device__ __noinline__ void big_stack(long long *out, long long v)
{
    long long a[W];
    for (int i = 0; i < W; i++) a[i] = v * i;
    int k = (int)(v & (W / 2 - 1));
    *out = a[k] + a[k + W / 2 - 1];
}

template <int F>
__global__ void __launch_bounds__(256) k_sum(const int4 *in, int n4, long long *out, unsigned *ticket)
{
    __shared__ long long ws[8];
    if constexpr (F & V_PDL) {
        asm volatile("griddepcontrol.wait;" ::: "memory");
        asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    }
    long long s = 0;
    for (int i = threadIdx.x; i < n4; i += 256) {
        int4 v = __ldg(in + i);
        s += (long long)v.x + v.y + v.z + v.w;
    }
    if constexpr (F & V_BIGCODE) {
        unsigned x = (unsigned)s;
#pragma unroll
        for (int i = 0; i < 500; i++) x = x * 1664525u + (unsigned)i; /* ~3 instructions each */
        s += (x == 12345u);
    }
    for (int o = 16; o; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < 8 ? ws[threadIdx.x] : 0;
        for (int o = 4; o; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
        if (threadIdx.x == 0) {
            if constexpr (F & V_TICKET) {
                out[1] = s;
                unsigned t;
                asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(t) : "l"(ticket) : "memory");
                if (t == gridDim.x - 1) *ticket = 0;
            }
            if constexpr (F & V_STACK) big_stack<225>(out, s); /* 1.8 KB */
            else if constexpr (F & V_STACK16) big_stack<16>(out, s); /* 128 B */
            else if constexpr (F & V_STACK256) big_stack<256>(out, s); /* 2 KB */
            else out[0] = s;
        }
    }
}

__global__ void k_empty() {}

template <int F> static void launch_k(cudaStream_t st, const int4 *in, int n4, long long *out,
                                      unsigned *ticket)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(256);
    cfg.stream = st;
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = (F & V_PDL) ? 1 : 0;
    cudaLaunchKernelEx(&cfg, k_sum<F>, in, n4, out, ticket);
}

int main()
{
    const int n4 = 1024, rot = 64, reps = 1000; /* 2^12 int32 per launch */
    int4 *in;
    long long *out;
    unsigned *ticket;
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaMalloc(&in, (size_t)n4 * 16 * rot));
    CK(cudaMemset(in, 1, (size_t)n4 * 16 * rot));
    CK(cudaMalloc(&out, 64));
    CK(cudaMalloc(&ticket, 4));
    CK(cudaMemset(ticket, 0, 4));
    auto row = [&](const char *name, auto fn) {
        double us = graph_us(st, fn, reps);
        printf("%-28s %6.2f us per launch\n", name, us);
    };
    for (int round = 0; round < 2; round++) {
        printf("-- round %d\n", round);
        row("empty", [&](int) { k_empty<<<1, 256, 0, st>>>(); });
        row("plain", [&](int r) { launch_k<V_PLAIN>(st, in + (size_t)(r % rot) * n4, n4, out, ticket); });
        row("stack", [&](int r) { launch_k<V_STACK>(st, in + (size_t)(r % rot) * n4, n4, out, ticket); });
        row("pdl", [&](int r) { launch_k<V_PDL>(st, in + (size_t)(r % rot) * n4, n4, out, ticket); });
        row("bigcode", [&](int r) { launch_k<V_BIGCODE>(st, in + (size_t)(r % rot) * n4, n4, out, ticket); });
        row("ticket", [&](int r) { launch_k<V_TICKET>(st, in + (size_t)(r % rot) * n4, n4, out, ticket); });
        row("pdl+stack", [&](int r) { launch_k<V_PDL | V_STACK>(st, in + (size_t)(r % rot) * n4, n4, out, ticket); });
        row("pdl+bigcode", [&](int r) { launch_k<V_PDL | V_BIGCODE>(st, in + (size_t)(r % rot) * n4, n4, out, ticket); });
        row("stack 128 B", [&](int r) { launch_k<V_STACK16>(st, in + (size_t)(r % rot) * n4, n4, out, ticket); });
        row("stack 2 KB", [&](int r) { launch_k<V_STACK256>(st, in + (size_t)(r % rot) * n4, n4, out, ticket); });
        row("pdl+stack 128 B", [&](int r) { launch_k<V_PDL | V_STACK16>(st, in + (size_t)(r % rot) * n4, n4, out, ticket); });
        row("pdl+stack+bigcode+ticket", [&](int r) {
            launch_k<V_PDL | V_STACK | V_BIGCODE | V_TICKET>(st, in + (size_t)(r % rot) * n4, n4, out, ticket);
        });
    }
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(st));
    return 0;
}
