/* probe_exact: where the correctly rounded f64 sum's extra GPU time goes. In CUDA graphs
 * (bench_cuda, c19da34) it took 5.16 µs at 2^14 (4 blocks) against 2.92 for the plain f64 sum
 * with the same blocks, partials and ticket, and from 2^22 on it stays 5-7 µs behind the plain
 * sum (2^22 16.61 / 11.56, 2^26 128.30 / 121.73 µs). This launches the exact f64 sum and the
 * plain one (TCU_MASK_FASTSUM) through the library's launcher (launch_reduce_t: its grid, ring
 * and PDL; the knobs from the same environment variables), reps launches in a CUDA graph,
 * median of 5. Inputs: price-like values in one 1 GiB buffer, each launch on the next of up to
 * 64 slices (below 2^20 elements the slices are 2^20 apart and stay in L2; from 2^20 on they
 * cover the buffer, so the data comes from memory). Built against a modified copy of
 * reduce_kernel.cuh (-I before -Isrc), probe9.sh measures what each part costs.
 *   nvcc -O3 -std=c++17 -arch=sm_90 -fmad=false [-I/tmp/ablation] -Iinclude -Isrc \
 *        bench/probes/probe_exact.cu -o probe_exact
 *   [PROBE_ONLY=exact|plain|max] [PROBE_F32=1 [PROBE_SMM=1]] [PROBE_WIDE=1] [PROBE_STEP=k] probe_exact [LABEL [MIN_LOG2 MAX_LOG2]]
 * (sizes: default 12 20, at most 26, or 30 with PROBE_F32=1: the f32 sums, of the same values
 * rounded to f32 (repeated past 2^27), instead of the f64 ones, and no max; PROBE_WIDE=1: values of both signs from 2^-40 to
 * 2^41 instead of prices, whose long double sum is no exact reference) */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
#include "cuda/reduce_launch.cuh"
#include "probe_graph.cuh"
#include "probe_reduce.cuh"

/* The library's knobs (scan_dispatch.cu), read from the same environment variables; only the
 * reduce's are asked for here. */
int tcu_knob(int k)
{
    static const char *env[TCU_KNOB_COUNT] = {0, "TALLY_CUDA_REDUCE_WAVES", "TALLY_CUDA_REDUCE_MINB", 0, 0, 0,
                                              "TALLY_CUDA_PDL", "TALLY_CUDA_REDUCE_RING",
                                              "TALLY_CUDA_REDUCE_RING_MIN", "TALLY_CUDA_REDUCE_PACKED",
                                              "TALLY_CUDA_REDUCE_EXTREME"};
    static const int dflt[TCU_KNOB_COUNT] = {6, 1, 0, 0, 0, 4, 1, 1, 1024, 1, 1};
    if (k < 0 || k >= TCU_KNOB_COUNT) return 0;
    const char *e = env[k] ? getenv(env[k]) : NULL;
    return e && *e ? atoi(e) : dflt[k];
}


int main(int argc, char **argv)
{
    const char *label = argc > 1 ? argv[1] : "as built";
    const int lo = argc > 3 ? atoi(argv[2]) : 12, hi = argc > 3 ? atoi(argv[3]) : 20;
    const bool f32 = getenv("PROBE_F32") && atoi(getenv("PROBE_F32"));
    /* PROBE_SMM=1 (with PROBE_F32): the exact kind runs the fused sum+min+max kernel (the sum is
     * the one result asked for) */
    const bool smm = getenv("PROBE_SMM") && atoi(getenv("PROBE_SMM"));
    const int most = f32 ? 30 : 26;
    if (lo < 10 || hi > most || lo > hi) {
        printf("probe_exact: sizes 2^10 .. 2^%d (asked 2^%d .. 2^%d)\n", most, lo, hi);
        return 2;
    }
    int sm = 0;
    CK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, 0));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    ReduceScratch sc;
    CK(reduce_scratch(&sc));
    tally_result *out = sc.out;
    const size_t total = (size_t)1 << 27;
    std::vector<double> h(total);
    const bool wide = getenv("PROBE_WIDE") && atoi(getenv("PROBE_WIDE"));
    for (size_t i = 0; i < h.size(); i++) /* cents from 0.01 to 1000.00, as bench_cuda's prices */
        h[i] = (double)((i * 2654435761u) % 100000u + 1u) / 100.0;
    if (wide) /* or both signs, 2^-40 .. 2^41, as bench_cuda's wide data */
        for (size_t i = 0; i < h.size(); i++)
            h[i] = std::ldexp(((i * 40503u) & 1 ? -1.0 : 1.0) * (1.0 + (double)((i * 2654435761u) % 1000u) / 1000.0),
                              (int)((i * 7919u) % 81u) - 40);
    std::vector<float> hf(f32 ? total : 0);
    for (size_t i = 0; i < hf.size(); i++) hf[i] = (float)h[i];
    double *in;
    float *inf = NULL;
    CK(cudaMalloc(&in, h.size() * sizeof(double)));
    CK(cudaMemcpy(in, h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice));
    /* f32: the values repeated up to 2^hi elements when that is more than 2^27 */
    const size_t ftotal = f32 ? std::max(total, (size_t)1 << hi) : 0;
    if (f32) {
        CK(cudaMalloc(&inf, ftotal * sizeof(float)));
        for (size_t at = 0; at < ftotal; at += total)
            CK(cudaMemcpy(inf + at, hf.data(), hf.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    const int step = getenv("PROBE_STEP") ? std::max(1, atoi(getenv("PROBE_STEP"))) : 2; /* sizes 2^lo, 2^(lo + step), ... */
    const char *only = getenv("PROBE_ONLY"); /* "exact" or "plain": that kernel alone (for ncu) */
    /* kinds: 1 the exact sum, 0 the plain sum, 2 the max */
    for (int exact : {1, 0, 2})
    for (int lg = lo; lg <= hi; lg += step) {
        const char *kind = exact == 1 ? "exact" : exact == 0 ? "plain" : "max  ";
        if (only && strncmp(only, kind, strlen(only))) continue;
        if (f32 && exact == 2) continue;
        const unsigned long long n = 1ull << lg;
        const size_t stride = n > ((size_t)1 << 20) ? n : (size_t)1 << 20;
        const int rot = (int)std::min<size_t>(64, (f32 ? ftotal : total) / stride);
        tcu_reduce_params p = reduce_params(sc, n, f32 ? n / 4 : n / 2, exact == 2 ? TALLY_MAX : TALLY_SUM);
        p.pdl = tcu_knob(TCU_KNOB_PDL);
        bool failed = false;
        auto launch = [&](int r) {
            tcu_reduce_params q = p;
            q.data = in + (size_t)(r % rot) * stride;
            if (f32) {
                q.data = inf + (size_t)(r % rot) * stride;
                cudaError_t e = exact == 1 ? (smm ? tcu::launch_reduce_t<float, TCU_MASK_SMM, false>(&q, sm, st)
                                                  : tcu::launch_reduce_t<float, TCU_MASK_SUM, false>(&q, sm, st))
                                           : tcu::launch_reduce_t<float, TCU_MASK_FASTSUM, false>(&q, sm, st);
                failed |= e != cudaSuccess;
                return;
            }
            cudaError_t e = exact == 1 ? tcu::launch_reduce_t<double, TCU_MASK_SUM, false>(&q, sm, st)
                            : exact == 0 ? tcu::launch_reduce_t<double, TCU_MASK_FASTSUM, false>(&q, sm, st)
                                         : tcu::launch_reduce_t<double, TCU_MASK_MAX, false>(&q, sm, st);
            failed |= e != cudaSuccess;
        };
        const int check = 1 % rot;
        launch(check);
        CK(cudaStreamSynchronize(st));
        CK(cudaGetLastError());
        if (failed) {
            printf("FATAL: a launch failed\n");
            return 1;
        }
        tally_result res;
        CK(cudaMemcpy(&res, out, sizeof res, cudaMemcpyDeviceToHost));
        long double want = 0;
        for (unsigned long long i = 0; i < n; i++)
            want = exact == 2 ? std::max(want, (long double)h[(size_t)check * stride + i])
                   : f32      ? want + hf[((size_t)check * stride + i) % total]
                              : want + h[(size_t)check * stride + i];
        const int reps = lg <= 20 ? 1000 : lg <= 24 ? 200 : lg <= 26 ? 40 : 10;
        const double us = graph_us(st, launch, reps);
        if (us < 0 || failed) {
            printf("FATAL: the launches could not be captured in a graph\n");
            return 1;
        }
        double rel = std::fabs((double)((long double)res.value.f64 - want) / (double)want);
        printf("%-12s %s %s sum 2^%-2d: %8.2f us per launch  (rel. error %.1e)\n", label, kind, f32 ? "f32" : "f64", lg, us,
               rel);
#ifdef TCU_TIMELINE
        { /* one more launch, its blocks' stamps: µs from the first block's start */
            void *tl;
            CK(cudaGetSymbolAddress(&tl, tcu::tl_stamp));
            const long long most = 0x7fffffffffffffffll;
            CK(cudaMemcpyToSymbol(tcu::tl_gap, &most, sizeof most));
            launch(check); /* two back to back: the second's blocks start after the first's result */
            launch(check);
            CK(cudaStreamSynchronize(st));
            long long gap = 0;
            CK(cudaMemcpyFromSymbol(&gap, tcu::tl_gap, sizeof gap));
            CK(cudaMemset(tl, 0, sizeof(unsigned long long) * 16 * 4096)); /* then one launch's stamps alone */
            launch(check);
            CK(cudaStreamSynchronize(st));
            static unsigned long long ts[16][4096];
            CK(cudaStreamSynchronize(st));
            static unsigned smid[4096];
            CK(cudaMemcpyFromSymbol(ts, tcu::tl_stamp, sizeof ts));
            CK(cudaMemcpyFromSymbol(smid, tcu::tl_sm, sizeof smid));
            const unsigned long long nb = (p.body_vec + 2047) / 2048;
            unsigned grid = 0;
            for (unsigned b = 0; b < 4096; b++)
                if (ts[0][b]) grid = b + 1;
            unsigned long long t0 = ~0ull, last = 0;
            for (unsigned b = 0; b < grid; b++) {
                t0 = std::min(t0, ts[0][b]);
                if (ts[3][b]) last = ts[3][b];
            }
            auto stat = [&](int k, const char *what) {
                std::vector<double> v;
                for (unsigned b = 0; b < grid; b++)
                    if (ts[k][b]) v.push_back((ts[k][b] - t0) / 1000.0);
                std::sort(v.begin(), v.end());
                if (v.empty()) return;
                printf("   %-26s min %8.2f  p10 %8.2f  median %8.2f  p90 %8.2f  max %8.2f\n", what, v[0],
                       v[v.size() / 10], v[v.size() / 2], v[v.size() * 9 / 10], v.back());
            };
            printf("   timeline, %u blocks, %llu batches (%.2f per block):\n", grid, nb, (double)nb / grid);
            stat(0, "start (after the PDL wait)");
            stat(1, "whole batches done");
            stat(2, "ticket");
            printf("   last block's result at %.2f us; the next launch's first block started %.2f us after "
                   "the previous result\n", last ? (last - t0) / 1000.0 : -1.0, gap / 1000.0);
            { /* round 0 of the last block (stamp 4 set) and of the block to take the ticket before it */
                auto at = [&](int k, unsigned b) { return ts[k][b] ? (ts[k][b] - t0) / 1000.0 : -1.0; };
                unsigned lb = 0, prev = grid;
                for (unsigned b = 0; b < grid; b++)
                    if (ts[4][b]) lb = b;
                for (unsigned b = 0; b < grid; b++)
                    if (b != lb && (prev == grid || ts[2][b] > ts[2][prev])) prev = b;
                for (unsigned b : {lb, prev}) {
                    if (b >= grid || !ts[8][b]) continue;
                    printf("   %s, round 0: batches %.2f, flush %.2f, warp merge %.2f, barrier %.2f, block merge %.2f "
                           "(last block: round 1's), spill check %.2f, ticket %.2f us\n",
                           b == lb ? "last block" : "the one before", at(1, b), at(8, b), at(9, b), at(10, b), at(6, b),
                           at(11, b), at(2, b));
                }
                if (ts[12][lb])
                    printf("   last block, round 1: warp merge %.2f, barrier %.2f, spill check %.2f us\n", at(12, lb),
                           at(13, lb), at(14, lb));
            }
            for (unsigned b = 0; b < grid; b++)
                if (ts[4][b]) /* the last block: its steps */
                    printf("   last block: ticket %.2f, knows it is last %.2f, partials merged by each thread %.2f, "
                           "block merge %.2f, results begin %.2f, end %.2f us\n", (ts[2][b] - t0) / 1000.0,
                           (ts[4][b] - t0) / 1000.0, (ts[5][b] - t0) / 1000.0, (ts[6][b] - t0) / 1000.0,
                           (ts[7][b] - t0) / 1000.0, (ts[3][b] - t0) / 1000.0);
            /* per SM: when its last block passed the ticket, against its batches */
            std::vector<double> smend(1024, 0.0);
            std::vector<int> smb(1024, 0);
            for (unsigned b = 0; b < grid; b++) {
                unsigned sm = smid[b] & 1023;
                smend[sm] = std::max(smend[sm], (ts[2][b] - t0) / 1000.0);
                smb[sm] += (int)(nb * (b + 1) / grid - nb * b / grid);
            }
            int lo = 1 << 30, hi = 0;
            double elo = 1e30, ehi = 0;
            for (int i = 0; i < 1024; i++)
                if (smb[i]) {
                    lo = std::min(lo, smb[i]);
                    hi = std::max(hi, smb[i]);
                    elo = std::min(elo, smend[i]);
                    ehi = std::max(ehi, smend[i]);
                }
            printf("   per SM: batches %d .. %d, done at %.2f .. %.2f us\n", lo, hi, elo, ehi);
        }
#endif
    }
    CK(cudaGetLastError());
    return 0;
}
