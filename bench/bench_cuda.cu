/* bench_cuda: tally's CUDA reductions and scans against CUB, in one run, on one GPU.
 *
 * For each case and size: the answer is checked first (ours against the CPU backend where the
 * data is small enough to copy, ours against CUB on the device everywhere), then both are timed
 * with CUDA events: a batch of launches back to back (about 10 ms, 10 to 1000 launches),
 * per-launch time = batch time / launches, median of 5 batches. Small inputs rotate through distinct buffers (>= 256 MB in all) so
 * that neither side is timed out of the L2 cache. A device-to-device memcpy measured in the same
 * run is the bandwidth yardstick (bytes read + written). Up to 2^22 the reductions are timed a
 * second way, every launch captured in a CUDA graph (rows "graph"): the GPU's cost per call
 * without the host's enqueue cost, which the stream rows include (a table of the host's µs per
 * enqueue follows the main one).
 *
 * Segmented sums (tally_reduce_rows against cub::DeviceSegmentedReduce::Sum, rows seg_sum_rows,
 * n = all the rows' elements) run first, 2^26 elements as rows of 2^5 .. 2^16 (the short-segment
 * kernel below 2^12, the block-per-segment one from there).
 *
 *   bench_cuda [--quick] [--min-log2 N] [--max-log2 N] [--filter NAME[,NAME...]] [--deadline SEC]
 *              [--kind price,wide,full] [--out FILE]
 * --deadline: start no new size after SEC seconds (the table of what ran is still printed).
 * --kind: the data kinds (price-like for every case; wide 2^-40..2^40 and the full range for the
 * float sums: exact (the default: adaptive, the speculative sum first, spec_sum.cuh, unless
 * the last sum of the type was narrow), plain, the pass always first (rows "spec=1"), the exact
 * kernel alone (rows "spec=0") and with the bins knob, rows "bins=1 spec=0", the pass's kernel
 * shapes (rows "spec=2 U=LxT"); in a -DTCU_RW=1 build also f32 "bins=4", f64 "bins=2"). The
 * float sums are timed after 100 calls, the adaptive choice's steady state; rows of kind "alt"
 * sum a price-like and a wide array in turn, its worst case (bench_alternate).
 * Prints the table (markdown) last, then the EXACT vs PLAIN table (the correctly rounded sums
 * against our plain sum of the same data); FILE gets a copy of both. */
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <string>
#include <vector>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cub/cub.cuh>
#include <cuda/functional>
#include "tally.h"
#include "tally_cuda.h"

/* The library's tuning knobs and its plain-sum yardstick (src/cuda/tuning.h) exist in a tuning
 * build (-DTALLY_TUNING=ON, as bench/gpu.sh builds it): there the variant rows (a knob in the
 * note) and the plain_sum rows run. Built against a default library, only the default rows
 * run, against CUB as ever. */
#include "cuda/tuning.h"
#ifdef TALLY_TUNING
static const bool kTuning = true;
#else
static const bool kTuning = false;
static int tally_cuda_bench_set_knob(const char *name, int value)
{
    (void)name;
    (void)value;
    return -1;
}
static tally_status tally_cuda_bench_plain_sum_async(tally_context *, tally_type, const void *, uint64_t,
                                                     tally_result *)
{
    return TALLY_ERR_UNSUPPORTED;
}
#endif

/* Runs fn with a tuning knob of the library set to v (a variant row), then restores it; not at
 * all without a tuning build. */
template <typename F> static void with_knob(const char *knob, int v, F fn)
{
    if (!kTuning) return;
    int old = tally_cuda_bench_set_knob(knob, v);
    if (old < 0) {
        printf("unknown knob %s\n", knob);
        return;
    }
    fn();
    tally_cuda_bench_set_knob(knob, old);
}

/* A knob's current value (the setter returns the old one; it is put back at once); the
 * default's without a tuning build. */
static int knob_value(const char *knob)
{
    if (!kTuning) {
#define X(ID, name, dflt, lo, hi)                                                                  \
    if (!strcmp(knob, #name)) return dflt;
        TCU_KNOBS(X)
#undef X
        return -1;
    }
    int v = tally_cuda_bench_set_knob(knob, 1);
    tally_cuda_bench_set_knob(knob, v);
    return v;
}

#define CK(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "FATAL %s:%d %s: %s\n", __FILE__, __LINE__, #call,                 \
                    cudaGetErrorString(e_));                                                   \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static tally_context *g_ctx, *g_cpu;
static cudaStream_t g_s;
static double g_copy_gbps;
static std::string g_table;
static int g_bad = 0;
static std::string g_host_table; /* host enqueue cost per call of the stream rows up to 2^22 */
static const char *g_filter = NULL; /* --filter: only cases whose name contains one of its
                                       * comma-separated words */
static bool wanted(const char *name)
{
    if (!g_filter) return true;
    for (const char *w = g_filter; *w;) {
        size_t len = strcspn(w, ",");
        if (len && std::string(name).find(std::string(w, len)) != std::string::npos) return true;
        w += len + (w[len] == ',');
    }
    return false;
}

/* ---- data ---------------------------------------------------------------------------------- */
__device__ __forceinline__ uint64_t mix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
    return x;
}
/* kind 0: price-like (cents in [0.01, 1000)); kind 1: wide exponents (2^-40 .. 2^40, both signs);
 * kind 2: the full range (every exponent the type has, both signs, below 2^991 for f64 and 2^101
 * for f32 so that sums stay finite) */
template <typename T> __global__ void gen(T *p, uint64_t n, int kind, uint64_t seed)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t h = mix(i * 0x9e3779b97f4a7c15ull + seed);
        double u = (double)(h >> 11) * (1.0 / 9007199254740992.0);
        if constexpr (std::is_floating_point<T>::value) {
            if (kind == 0) p[i] = (T)(floor(u * 99999.0) / 100.0 + 0.01);
            else if (kind == 1) p[i] = (T)(((h & 1) ? -1.0 : 1.0) * (1.0 + u) * ldexp(1.0, (int)((h >> 1) % 81) - 40));
            else if (sizeof(T) == 8) p[i] = (T)(((h & 1) ? -1.0 : 1.0) * (1.0 + u) * ldexp(1.0, (int)((h >> 1) % 1991) - 1000));
            else p[i] = (T)(((h & 1) ? -1.0 : 1.0) * (1.0 + u) * ldexp(1.0, (int)((h >> 1) % 227) - 126));
        } else {
            p[i] = (T)((int64_t)(h % 2001) - 1000);
        }
    }
}

template <typename T> struct MinMaxSum { T s, mn, mx; };
template <typename T> struct ToMMS {
    __device__ MinMaxSum<T> operator()(T x) const { return {x, x, x}; }
};
template <typename T> struct MMSOp {
    __device__ MinMaxSum<T> operator()(const MinMaxSum<T> &a, const MinMaxSum<T> &b) const
    {
        return {a.s + b.s, a.mn < b.mn ? a.mn : b.mn, a.mx > b.mx ? a.mx : b.mx};
    }
};

/* Count of elements where a and b differ (beyond rel. tolerance tol for floats). */
template <typename T> __global__ void count_diff(const T *a, const T *b, uint64_t n, double tol,
                                                 unsigned long long *bad)
{
    unsigned long long c = 0;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        double x = (double)a[i], y = (double)b[i];
        if (tol == 0.0) c += a[i] != b[i];
        else c += fabs(x - y) > tol * fmax(fmax(fabs(x), fabs(y)), 1.0);
    }
    if (c) atomicAdd(bad, c);
}

/* ---- timing -------------------------------------------------------------------------------- */
struct Buf {
    char *base;
    size_t bytes;
};

/* Timing modes. Stream (the default): launches back to back on the stream, so each one also pays
 * its host-side enqueue; g_host_us gets the host's microseconds per enqueue of the last timing
 * (when the GPU is the slower side the launch queue fills and this approaches the GPU's time).
 * Graph (g_graph): the same launches captured once into a CUDA graph and the graph replayed, so
 * the host's enqueue cost drops out and what is left is the GPU's per-launch cost. */
static bool g_graph = false;
static double g_host_us = 0.0;

/* Median per-launch microseconds of fn(rotation index). */
template <typename F> static double time_us(F fn, int rotations, double expect_us)
{
    int reps = (int)std::min(1000.0, std::max(10.0, 10000.0 / std::max(expect_us, 1.0)));
    for (int i = 0; i < 3; i++) fn(i % rotations); /* warm up */
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    cudaGraphExec_t exec = nullptr;
    if (g_graph) {
        cudaGraph_t graph;
        CK(cudaStreamSynchronize(g_s));
        CK(cudaStreamBeginCapture(g_s, cudaStreamCaptureModeRelaxed));
        for (int r = 0; r < reps; r++) fn(r % rotations);
        CK(cudaStreamEndCapture(g_s, &graph));
        CK(cudaGraphInstantiate(&exec, graph, 0));
        CK(cudaGraphDestroy(graph));
        CK(cudaGraphLaunch(exec, g_s)); /* warm up: the graph's upload */
    }
    std::vector<double> t, host;
    for (int batch = 0; batch < 5; batch++) {
        struct timespec h0, h1;
        CK(cudaEventRecord(a, g_s));
        clock_gettime(CLOCK_MONOTONIC, &h0);
        if (exec) CK(cudaGraphLaunch(exec, g_s));
        else
            for (int r = 0; r < reps; r++) fn((batch * reps + r) % rotations);
        clock_gettime(CLOCK_MONOTONIC, &h1);
        CK(cudaEventRecord(b, g_s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000.0 / reps);
        host.push_back(((h1.tv_sec - h0.tv_sec) * 1e6 + (h1.tv_nsec - h0.tv_nsec) * 1e-3) / reps);
    }
    if (exec) CK(cudaGraphExecDestroy(exec));
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    std::sort(host.begin(), host.end());
    g_host_us = host[host.size() / 2];
    return t[t.size() / 2];
}

static void row(const char *op, const char *type, uint64_t n, double ours, double cub, double bytes,
                const char *note)
{
    char line[256];
    double pct = bytes / (ours * 1e-6) / 1e9 / g_copy_gbps * 100.0;
    if (cub > 0)
        snprintf(line, sizeof line, "| %-14s | %-4s | 2^%-2d | %10.2f | %10.2f | %6.2f | %6.1f | %s |\n", op, type,
                 (int)std::lround(std::log2((double)n)), ours, cub, cub / ours, pct, note);
    else
        snprintf(line, sizeof line, "| %-14s | %-4s | 2^%-2d | %10.2f | %10s | %6s | %6.1f | %s |\n", op, type,
                 (int)std::lround(std::log2((double)n)), ours, "-", "-", pct, note);
    g_table += line;
    fputs(line, stdout);
    fflush(stdout);
}

static int rotations_for(size_t bytes, size_t cap)
{
    size_t want = (256u << 20) / std::max(bytes, (size_t)1) + 1;
    size_t fit = cap / ((bytes + 255) / 256 * 256);
    return (int)std::max<size_t>(1, std::min<size_t>({want, fit, 64}));
}

template <typename T> static tally_type ttype();
template <> tally_type ttype<int32_t>() { return TALLY_I32; }
template <> tally_type ttype<float>() { return TALLY_F32; }
template <> tally_type ttype<double>() { return TALLY_F64; }

static bool same_f(double a, double b, double tol)
{
    if (a == b) return true;
    return std::fabs(a - b) <= tol * std::fmax(std::fabs(a), std::fabs(b));
}

/* ---- reductions ---------------------------------------------------------------------------- */
enum RCase { R_SUM, R_MAX, R_SMM, R_ARGMIN, R_PLAIN };

/* The float sums' timings (stream rows), for the closing table of the correctly rounded sum
 * against our plain sum of the same data and run (exact_table). */
struct SumTiming {
    std::string type, variant; /* variant: the row's note ("", "wide", "full bins=1", ...) */
    int kind, log2n;
    bool plain;
    double ours, cub;
};
static std::vector<SumTiming> g_sums;
static const char *kind_name(int kind)
{
    return kind == 0 ? "price" : kind == 1 ? "wide" : kind == 2 ? "full" : "alt";
}

template <typename T>
static void bench_reduce(RCase rc, const char *name, Buf &in, uint64_t n, int kind, const char *note,
                         tally_result *dres, void *cub_tmp, size_t cub_tmp_bytes, T *dout, int *didx)
{
    if (!wanted(name)) return;
    if (rc == R_PLAIN && !kTuning) return; /* the yardstick is a tuning build's */
    size_t bytes = n * sizeof(T);
    int rot = rotations_for(bytes, in.bytes);
    size_t stride = (bytes + 255) / 256 * 256;
    auto src = [&](int r) { return (const T *)(in.base + stride * (size_t)r); };
    tally_type tt = ttype<T>();
    tally_op ops1[1] = {rc == R_MAX ? TALLY_MAX : rc == R_ARGMIN ? TALLY_ARGMIN : TALLY_SUM};
    tally_op ops3[3] = {TALLY_SUM, TALLY_MIN, TALLY_MAX};
    const tally_op *ops = rc == R_SMM ? ops3 : ops1;
    size_t nops = rc == R_SMM ? 3 : 1;
    auto ours = [&](int r) {
        if (rc == R_PLAIN) tally_cuda_bench_plain_sum_async(g_ctx, tt, src(r), n, dres);
        else tally_cuda_reduce_async(g_ctx, tt, src(r), n, ops, nops, NULL, dres);
    };
    auto cub = [&](int r) {
        size_t tb = cub_tmp_bytes;
        switch (rc) {
        case R_SUM: case R_PLAIN: cub::DeviceReduce::Sum(cub_tmp, tb, src(r), dout, (int64_t)n, g_s); break;
        case R_MAX: cub::DeviceReduce::Max(cub_tmp, tb, src(r), dout, (int64_t)n, g_s); break;
        case R_ARGMIN: cub::DeviceReduce::ArgMin(cub_tmp, tb, src(r), dout, (int64_t *)didx, (int64_t)n, g_s); break;
        case R_SMM: {
            MinMaxSum<T> init = {T(0), std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest()};
            cub::DeviceReduce::TransformReduce(cub_tmp, tb, src(r), (MinMaxSum<T> *)dout, (int64_t)n,
                                               MMSOp<T>(), ToMMS<T>(), init, g_s);
            break;
        }
        }
    };
    /* validate: ours vs the CPU backend (bit for bit; plain sum: 1e-12) and vs CUB */
    ours(0);
    CK(cudaStreamSynchronize(g_s));
    tally_result r[3];
    CK(cudaMemcpy(r, dres, nops * sizeof(tally_result), cudaMemcpyDeviceToHost));
    bool ok = r[0].status == TALLY_OK;
    if (n <= (1u << 26)) {
        std::vector<T> h(n);
        CK(cudaMemcpy(h.data(), src(0), bytes, cudaMemcpyDeviceToHost));
        tally_result c[3];
        tally_reduce_many(g_cpu, tt, h.data(), n, ops, nops, NULL, c);
        for (size_t i = 0; i < nops; i++) {
            if (rc == R_PLAIN) ok &= same_f(r[i].value.f64, c[i].value.f64, 1e-12);
            else ok &= r[i].value.u64 == c[i].value.u64 && r[i].index == c[i].index && r[i].status == c[i].status;
        }
    }
    /* a variant of the exact sum (a knob in the note) gives the default's bits, at every size
     * (above 2^26 the CPU check is skipped) */
    static uint64_t ref_bits = 0, ref_n = 0;
    static tally_type ref_type = TALLY_I32;
    if (rc == R_SUM && std::is_floating_point<T>::value) {
        if (!strchr(note, '=')) {
            ref_bits = r[0].value.u64;
            ref_n = n;
            ref_type = tt;
        } else if (ref_n == n && ref_type == tt && r[0].value.u64 != ref_bits) {
            ok = false;
            double want;
            memcpy(&want, &ref_bits, sizeof want);
            printf("%s %s n=%llu (%s): %.17g, the default kernel's %.17g\n", name, tally_type_name(tt),
                   (unsigned long long)n, note, r[0].value.f64, want);
        }
    }
    cub(0);
    CK(cudaStreamSynchronize(g_s));
    {
        T cv[3];
        int64_t ci = -1;
        CK(cudaMemcpy(cv, dout, rc == R_SMM ? sizeof(MinMaxSum<T>) : sizeof(T), cudaMemcpyDeviceToHost));
        if (rc == R_ARGMIN) CK(cudaMemcpy(&ci, didx, sizeof ci, cudaMemcpyDeviceToHost));
        double tol = std::is_floating_point<T>::value ? (kind == 1 ? 1e-3 : 1e-5) : 0.0;
        if (kind == 2) {
            /* full-range data: CUB's rounding sum is no yardstick (it may overflow where the exact
             * sum does not); the answer was checked against the CPU backend above */
        } else if (rc == R_SMM) {
            ok &= same_f((double)cv[0], r[0].value.f64, tol); /* CUB's (rounded) sum */
        } else if (rc == R_ARGMIN) {
            ok &= (uint64_t)ci == r[0].index;
        } else {
            double ov = std::is_floating_point<T>::value ? r[0].value.f64 : (double)r[0].value.i64;
            ok &= same_f((double)cv[0], ov, tol);
        }
    }
    if (!ok) {
        g_bad++;
        printf("VALIDATION FAILED: %s %s n=%llu\n", name, tally_type_name(tt), (unsigned long long)n);
    }
    double expect = bytes / 3.5e6 + 5.0; /* µs at 3.5 TB/s, plus a launch */
    /* the float sums' steady state: the adaptive setting's choice (SPEC 3, cuda_backend.cu's
     * spec_plan) follows what the last sums of the type saw, and its probes thin out as the
     * calls go on, so up to 100 calls first (60 ms or so; at 2^28 a probe then lands in at
     * most one of the five batches) */
    if (rc == R_SUM && std::is_floating_point<T>::value) {
        const int prime = (int)std::min(100.0, std::max(20.0, 60000.0 / expect));
        for (int i = 0; i < prime; i++) ours(i % rot);
        CK(cudaStreamSynchronize(g_s));
    }
    double t_ours = time_us(ours, rot, expect);
    double h_ours = g_host_us;
    double t_cub = time_us(cub, rot, expect);
    double h_cub = g_host_us;
    row(name, tally_type_name(tt), n, t_ours, t_cub, (double)bytes, ok ? note : "INVALID");
    if (std::is_floating_point<T>::value && (rc == R_SUM || rc == R_PLAIN) && !g_graph && ok)
        g_sums.push_back({tally_type_name(tt), note, kind, (int)std::lround(std::log2((double)n)), rc == R_PLAIN,
                          t_ours, t_cub});
    if (!g_graph && !*note && n <= (1u << 22)) {
        char line[160];
        snprintf(line, sizeof line, "| %-14s | %-4s | 2^%-2d | %9.2f | %11.2f | %8.2f | %10.2f |\n", name,
                 tally_type_name(tt), (int)std::lround(std::log2((double)n)), h_ours, t_ours, h_cub, t_cub);
        g_host_table += line;
    }
}

/* The adaptive setting's worst case: a price-like array (pa) and a wide one (wa) summed in turn
 * on one context, so that each call's choice (cuda_backend.cu, spec_plan) follows the other
 * kind's sum: the default (spec=3) beside the pass always first (spec=1) and the exact kernel
 * alone (spec=0), and the plain sum in turn over the same two arrays as their yardstick (rows
 * of kind "alt" in the EXACT vs PLAIN table; CUB's sum in turn beside each). Each call is
 * waited for (in every row), so each choice follows the call just before it. Checked first:
 * every setting gives, call after call, the bits of the exact kernel alone on each array. A
 * tuning build's (the knobs and the plain sum). */
template <typename T>
static void bench_alternate(const T *pa, const T *wa, uint64_t n, tally_result *dres, void *cub_tmp,
                            size_t cub_tmp_bytes, T *dout)
{
    if (!kTuning || !wanted("reduce_sum")) return;
    const tally_type tt = ttype<T>();
    const tally_op op = TALLY_SUM;
    const T *src[2] = {pa, wa};
    const int log2n = (int)std::lround(std::log2((double)n));
    auto sum_bits = [&](int i) {
        tally_result r;
        tally_cuda_reduce_async(g_ctx, tt, src[i], n, &op, 1, NULL, dres);
        CK(cudaStreamSynchronize(g_s));
        CK(cudaMemcpy(&r, dres, sizeof r, cudaMemcpyDeviceToHost));
        return r.status == TALLY_OK ? r.value.u64 : ~0ull;
    };
    uint64_t want[2] = {0, 0};
    with_knob("spec", 0, [&] {
        want[0] = sum_bits(0);
        want[1] = sum_bits(1);
    });
    /* every call waited for before the next (all rows alike), so that each choice reads the
     * word the call before it wrote: the guess is wrong as often as it can be */
    auto cub = [&](int r) {
        size_t tb = cub_tmp_bytes;
        cub::DeviceReduce::Sum(cub_tmp, tb, src[r % 2], dout, (int64_t)n, g_s);
        cudaStreamSynchronize(g_s);
    };
    const double expect = n * sizeof(T) / 3.5e6 + 5.0;
    const double t_cub = time_us(cub, 2, expect);
    const double t_plain = time_us([&](int r) {
        tally_cuda_bench_plain_sum_async(g_ctx, tt, src[r % 2], n, dres);
        cudaStreamSynchronize(g_s);
    }, 2, expect);
    row("plain_sum", tally_type_name(tt), n, t_plain, t_cub, (double)(n * sizeof(T)), "alt");
    g_sums.push_back({tally_type_name(tt), "alt", 3, log2n, true, t_plain, t_cub});
    static const struct { int spec; const char *note; } settings[] = {
        {3, "alt"}, {1, "alt spec=1"}, {0, "alt spec=0"}};
    for (const auto &st : settings) {
        with_knob("spec", st.spec, [&] {
            bool ok = true;
            for (int i = 0; i < 6; i++) ok &= sum_bits(i % 2) == want[i % 2];
            if (!ok) {
                g_bad++;
                printf("VALIDATION FAILED: reduce_sum %s n=%llu (%s): not the exact kernel's bits\n",
                       tally_type_name(tt), (unsigned long long)n, st.note);
            }
            auto ours = [&](int r) {
                tally_cuda_reduce_async(g_ctx, tt, src[r % 2], n, &op, 1, NULL, dres);
                cudaStreamSynchronize(g_s);
            };
            for (int i = 0; i < 40; i++) ours(i);
            const double t = time_us(ours, 2, expect);
            row("reduce_sum", tally_type_name(tt), n, t, t_cub, (double)(n * sizeof(T)), ok ? st.note : "INVALID");
            if (ok) g_sums.push_back({tally_type_name(tt), st.note, 3, log2n, false, t, t_cub});
        });
    }
}

/* ---- segmented reductions ------------------------------------------------------------------
 * tally_reduce_rows (nrows rows of len elements, one call: the exact sum of every row, results
 * back in host memory) against cub::DeviceSegmentedReduce::Sum (plain sums in T, left in device
 * memory) over the same rows. Checked first: ours against the CPU backend's batch bit for bit,
 * and against CUB (integers equal; f32 within CUB's own rounding). Our time includes the copy of
 * the results to the host and the call's synchronisation, which CUB's does not. */
template <typename T>
static void bench_segments(Buf &in, uint64_t nrows, uint64_t len, void *cub_tmp, size_t cub_tmp_bytes,
                           int64_t *doff, T *dsum)
{
    if (!wanted("seg_sum_rows")) return;
    const tally_type tt = ttype<T>();
    const uint64_t n = nrows * len;
    if (n * sizeof(T) > in.bytes) return;
    char note[64];
    snprintf(note, sizeof note, "2^%d rows x 2^%d", (int)std::lround(std::log2((double)nrows)),
             (int)std::lround(std::log2((double)len)));
    const T *src = (const T *)in.base;
    const tally_op op = TALLY_SUM;
    std::vector<tally_result> ours(nrows), cpu(nrows);
    std::vector<int64_t> hoff(nrows + 1);
    for (uint64_t r = 0; r <= nrows; r++) hoff[r] = (int64_t)(r * len);
    CK(cudaMemcpyAsync(doff, hoff.data(), (nrows + 1) * sizeof(int64_t), cudaMemcpyHostToDevice, g_s));
    CK(cudaStreamSynchronize(g_s));
    auto run_ours = [&](int) {
        if (tally_reduce_rows(g_ctx, tt, src, nrows, len, len, &op, 1, NULL, ours.data()) != TALLY_OK) g_bad++;
    };
    auto run_cub = [&](int) {
        size_t tb = cub_tmp_bytes;
        cub::DeviceSegmentedReduce::Sum(cub_tmp, tb, src, dsum, (int)nrows, doff, doff + 1, g_s);
    };
    /* the answers first */
    bool ok = tally_reduce_rows(g_ctx, tt, src, nrows, len, len, &op, 1, NULL, ours.data()) == TALLY_OK;
    run_cub(0);
    std::vector<T> hin(n), hcub(nrows);
    CK(cudaMemcpyAsync(hin.data(), src, n * sizeof(T), cudaMemcpyDeviceToHost, g_s));
    CK(cudaMemcpyAsync(hcub.data(), dsum, nrows * sizeof(T), cudaMemcpyDeviceToHost, g_s));
    CK(cudaStreamSynchronize(g_s));
    ok &= tally_reduce_rows(g_cpu, tt, hin.data(), nrows, len, len, &op, 1, NULL, cpu.data()) == TALLY_OK;
    for (uint64_t r = 0; r < nrows && ok; r++) {
        ok &= ours[r].status == TALLY_OK && ours[r].value.u64 == cpu[r].value.u64;
        if (std::is_floating_point<T>::value) ok &= same_f(ours[r].value.f64, (double)hcub[r], 1e-4);
        else ok &= ours[r].value.i64 == (int64_t)hcub[r];
    }
    if (!ok) {
        g_bad++;
        printf("seg_sum_rows %s %s: INVALID (ours against the CPU backend or CUB)\n", tally_type_name(tt), note);
    }
    const double expect = (double)(n * sizeof(T)) / 3e6; /* µs at 3 TB/s */
    const double t_ours = time_us(run_ours, 1, expect);
    const double t_cub = time_us(run_cub, 1, expect);
    row("seg_sum_rows", tally_type_name(tt), n, t_ours, t_cub, (double)(n * sizeof(T)), ok ? note : "INVALID");
}

/* ---- scans --------------------------------------------------------------------------------- */
template <typename T>
static void bench_scan(int exclusive, int maxop, Buf &in, Buf &out, uint64_t n, void *cub_tmp,
                       size_t cub_tmp_bytes, unsigned long long *dbad, const char *note = "")
{
    if (!wanted(maxop ? "scan_incl_max" : exclusive ? "scan_excl_sum" : "scan_incl_sum")) return;
    size_t bytes = n * sizeof(T);
    int rot = rotations_for(bytes, std::min(in.bytes, out.bytes));
    size_t stride = (bytes + 255) / 256 * 256;
    auto src = [&](int r) { return (const T *)(in.base + stride * (size_t)r); };
    auto dst = [&](int r) { return (T *)(out.base + stride * (size_t)r); };
    tally_type tt = ttype<T>();
    tally_scan_options o;
    memset(&o, 0, sizeof o);
    o.exclusive = exclusive;
    tally_op op = maxop ? TALLY_MAX : TALLY_SUM;
    auto ours = [&](int r) { tally_cuda_scan_async(g_ctx, op, tt, src(r), dst(r), n, &o); };
    auto cub = [&](int r) {
        size_t tb = cub_tmp_bytes;
        if (maxop) cub::DeviceScan::InclusiveScan(cub_tmp, tb, src(r), dst(r), cuda::maximum<>{}, (int64_t)n, g_s);
        else if (exclusive) cub::DeviceScan::ExclusiveSum(cub_tmp, tb, src(r), dst(r), (int64_t)n, g_s);
        else cub::DeviceScan::InclusiveSum(cub_tmp, tb, src(r), dst(r), (int64_t)n, g_s);
    };
    /* validate: ours vs CUB on the device (floats within 1e-3 relative: different orders) */
    T *ref;
    CK(cudaMalloc(&ref, bytes));
    cub(0);
    CK(cudaMemcpyAsync(ref, dst(0), bytes, cudaMemcpyDeviceToDevice, g_s));
    ours(0);
    CK(cudaMemsetAsync(dbad, 0, 8, g_s));
    count_diff<T><<<1024, 256, 0, g_s>>>(dst(0), ref, n, std::is_floating_point<T>::value ? 1e-3 : 0.0, dbad);
    unsigned long long bad = 0;
    CK(cudaMemcpy(&bad, dbad, 8, cudaMemcpyDeviceToHost));
    CK(cudaFree(ref));
    if (bad) {
        g_bad++;
        printf("VALIDATION FAILED: scan %s n=%llu: %llu elements differ from CUB\n",
               tally_type_name(tt), (unsigned long long)n, bad);
    }
    double expect = 2.0 * bytes / 3.0e6 + 6.0;
    double t_ours = time_us(ours, rot, expect);
    double t_cub = time_us(cub, rot, expect);
    const char *name = maxop ? "scan_incl_max" : exclusive ? "scan_excl_sum" : "scan_incl_sum";
    row(name, tally_type_name(tt), n, t_ours, t_cub, 2.0 * bytes, bad ? "INVALID" : note);
}

/* ---- host data to the GPU ------------------------------------------------------------------
 * 1 GiB of host i32 to the GPU: the yardstick is a pinned cudaMemcpy of the same run; beside it
 * a pageable cudaMemcpy (the driver's own staging), and the CUDA backend's sum of pageable
 * (its pinned staging), mmap'd (a file in /dev/shm) and pinned host arrays (copy + kernel, the
 * answer checked against the CPU backend's first), and the CPU backend and an AUTO context on
 * the pageable array. Best of 3 of each; a few seconds in all. */
static double wall_s()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

template <typename F> static double best_s(F fn, int reps = 3)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = wall_s();
        fn();
        best = std::min(best, wall_s() - t0);
    }
    return best;
}

static std::string bench_host_link()
{
    const size_t bytes = (size_t)1 << 30, n = bytes / 4;
    int32_t *page = (int32_t *)malloc(bytes), *pin = nullptr;
    char *dev = nullptr;
    if (!page || cudaMallocHost(&pin, bytes) != cudaSuccess || cudaMalloc(&dev, bytes) != cudaSuccess) {
        free(page);
        if (pin) cudaFreeHost(pin);
        return "host link: skipped (no room for 1 GiB)\n";
    }
    for (size_t i = 0; i < n; i++) page[i] = (int32_t)((i * 2654435761u) >> 8) - (1 << 23);
    memcpy(pin, page, bytes);
    /* the file: written once, mapped, read once so its pages are in memory */
    int32_t *mapped = nullptr;
    char path[] = "/dev/shm/tally_bench_XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
        unlink(path);
        size_t off = 0;
        while (off < bytes) {
            ssize_t w = write(fd, (char *)page + off, bytes - off);
            if (w <= 0) break;
            off += (size_t)w;
        }
        if (off == bytes) {
            void *m = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
            if (m != MAP_FAILED) mapped = (int32_t *)m;
        }
        close(fd);
    }
    tally_result want, got;
    tally_reduce(g_cpu, TALLY_SUM, TALLY_I32, page, n, NULL, &want);
    tally_context *autoc = nullptr;
    tally_options o;
    tally_options_init(&o);
    tally_create(&autoc, &o);

    double t_pin = best_s([&] { cudaMemcpy(dev, pin, bytes, cudaMemcpyHostToDevice); });
    double t_page = best_s([&] { cudaMemcpy(dev, page, bytes, cudaMemcpyHostToDevice); });
    std::string out;
    char line[1024]; /* the header and the two memcpy rows in one: ~480 bytes; the auto rule ~400 */
    snprintf(line, sizeof line,
             "\nHost data to the GPU: 1 GiB of i32 (best of 3; x memcpy: over the pinned cudaMemcpy)\n\n"
             "| path                                  |  GB/s | x memcpy | backend |\n"
             "|---------------------------------------|-------|----------|---------|\n"
             "| cudaMemcpy, pinned (yardstick)        | %5.1f |   1.00   | cuda    |\n"
             "| cudaMemcpy, pageable                  | %5.1f |   %.2f   | cuda    |\n",
             bytes / t_pin / 1e9, bytes / t_page / 1e9, t_pin / t_page);
    out += line;
    auto sum_row = [&](const char *name, tally_context *c, const void *p) {
        if (!p) return;
        tally_status st = TALLY_OK;
        double t = best_s([&] { st = tally_reduce(c, TALLY_SUM, TALLY_I32, p, n, NULL, &got); });
        bool ok = st == TALLY_OK && got.value.i64 == want.value.i64;
        if (!ok) g_bad++;
        snprintf(line, sizeof line, "| %-37s | %5.1f |   %.2f   | %-7s |%s\n", name, bytes / t / 1e9,
                 t_pin / t, tally_backend_name(tally_last_backend(c)), ok ? "" : " WRONG ANSWER");
        out += line;
    };
    sum_row("tally sum, cuda, pageable (staged)", g_ctx, page);
    sum_row("tally sum, cuda, mmap'd /dev/shm file", g_ctx, mapped);
    sum_row("tally sum, cuda, pinned (DMA)", g_ctx, pin);
    sum_row("tally sum, cpu, pageable", g_cpu, page);
    if (autoc) sum_row("tally sum, auto, pageable", autoc, page);
    if (autoc) {
        snprintf(line, sizeof line, "\nauto rule: %s\n", tally_auto_rule(autoc));
        out += line;
    }
    tally_destroy(autoc);
    if (mapped) munmap(mapped, bytes);
    cudaFree(dev);
    cudaFreeHost(pin);
    free(page);
    return out;
}

/* The correctly rounded sum against our plain (rounding, fixed-order f64) sum of the same data
 * in the same run, per type, data kind and size: plain/exact is the issue's ratio (targets:
 * price >= 0.98, wide 2^-40..2^40 >= 0.9, full range >= 0.8), CUB/exact the one against CUB's
 * (rounding) sum. Variant rows (a knob in the note, e.g. bins=1) against the same plain row. */
static std::string exact_table()
{
    std::string t = "\n=== EXACT vs PLAIN: correctly rounded sum against our plain sum (same data, same run; "
                    "targets plain/exact: price >= 0.98, wide >= 0.9, full >= 0.8)\n\n"
                    "| type | kind  | n    | variant          | exact µs   | plain µs   | plain/exact | CUB/exact |\n"
                    "|------|-------|------|------------------|------------|------------|-------------|-----------|\n";
    char line[256];
    for (const SumTiming &e : g_sums) {
        if (e.plain) continue;
        const SumTiming *pl = nullptr; /* the plain row of the same data: no knob in its note */
        for (const SumTiming &q : g_sums)
            if (q.plain && q.type == e.type && q.kind == e.kind && q.log2n == e.log2n &&
                q.variant.find('=') == std::string::npos)
                pl = &q;
        std::string v = e.variant;
        const std::string k = kind_name(e.kind);
        if (v.compare(0, k.size(), k) == 0) v = v.substr(k.size());
        while (!v.empty() && v[0] == ' ') v = v.substr(1);
        if (v.empty()) v = "default";
        if (pl)
            snprintf(line, sizeof line, "| %-4s | %-5s | 2^%-2d | %-16s | %10.2f | %10.2f | %11.2f | %9.2f |\n",
                     e.type.c_str(), k.c_str(), e.log2n, v.c_str(), e.ours, pl->ours, pl->ours / e.ours,
                     e.cub / e.ours);
        else
            snprintf(line, sizeof line, "| %-4s | %-5s | 2^%-2d | %-16s | %10.2f | %10s | %11s | %9.2f |\n",
                     e.type.c_str(), k.c_str(), e.log2n, v.c_str(), e.ours, "-", "-", e.cub / e.ours);
        t += line;
    }
    return t;
}

int main(int argc, char **argv)
{
    int max_log2 = 30, min_log2 = 10;
    double deadline_s = 0.0;
    struct timespec ts0;
    clock_gettime(CLOCK_MONOTONIC, &ts0);
    auto elapsed = [&] {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)(t.tv_sec - ts0.tv_sec) + 1e-9 * (double)(t.tv_nsec - ts0.tv_nsec);
    };
    bool quick = false;
    const char *outfile = NULL;
    /* --kind price,wide,full: the data kinds to run (all by default; wide and full time only the
     * float sums: exact, plain, and the exact one with the bins knob on) */
    const char *kinds = "price,wide,full";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--max-log2") && i + 1 < argc) max_log2 = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) outfile = argv[++i];
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc) g_filter = argv[++i];
        else if (!strcmp(argv[i], "--min-log2") && i + 1 < argc) min_log2 = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--deadline") && i + 1 < argc) deadline_s = atof(argv[++i]);
        else if (!strcmp(argv[i], "--kind") && i + 1 < argc) kinds = argv[++i];
    }
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CUDA;
    if (tally_create(&g_ctx, &o) != TALLY_OK) {
        printf("SKIP: no CUDA context: %s\n", tally_create_error());
        return 77;
    }
    o.backend = TALLY_BACKEND_CPU;
    if (tally_create(&g_cpu, &o) != TALLY_OK) return 1;
    g_s = (cudaStream_t)tally_cuda_stream(g_ctx);
    uint64_t nmax = 1ull << max_log2;
    Buf in, out;
    in.bytes = out.bytes = nmax * 8 + (64u << 20);
    CK(cudaMalloc(&in.base, in.bytes));
    CK(cudaMalloc(&out.base, out.bytes));
    CK(tally_cuda_reserve(g_ctx, TALLY_I32, nmax) == TALLY_OK ? cudaSuccess : cudaErrorUnknown);
    CK(tally_cuda_reserve(g_ctx, TALLY_F64, nmax) == TALLY_OK ? cudaSuccess : cudaErrorUnknown);
    tally_result *dres;
    CK(cudaMalloc(&dres, 8 * sizeof(tally_result)));
    double *dout;
    int *didx;
    unsigned long long *dbad;
    CK(cudaMalloc(&dout, 64));
    CK(cudaMalloc(&didx, 64));
    CK(cudaMalloc(&dbad, 8));
    size_t cub_tmp_bytes = 256u << 20;
    void *cub_tmp;
    CK(cudaMalloc(&cub_tmp, cub_tmp_bytes));

    /* the yardstick: a large device-to-device copy, bytes read + written */
    {
        size_t cb = std::min<size_t>(in.bytes, 4ull << 30) / 2;
        auto cp = [&](int) { cudaMemcpyAsync(out.base, in.base, cb, cudaMemcpyDeviceToDevice, g_s); };
        double us = time_us(cp, 1, cb / 2e3);
        g_copy_gbps = 2.0 * cb / (us * 1e-6) / 1e9;
    }
    char head[1024];
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int kw = knob_value("scan_wide"), kwv = knob_value("reduce_waves"), kmb = knob_value("reduce_minb"),
              ksh = knob_value("scan_shift"), kpdl = knob_value("pdl"), kring = knob_value("reduce_ring"),
              kringmin = knob_value("reduce_ring_min"), kpk = knob_value("reduce_packed"),
              kext = knob_value("reduce_extreme"), kspec = knob_value("spec");
    snprintf(head, sizeof head,
             "device: %s (%d SMs); memcpy D2D: %.1f GB/s (read+write); defaults: scan_wide=%d (6: auto) "
             "scan_shift=%d reduce_waves=%d reduce_minb=%d (0: auto) pdl=%d reduce_ring=%d "
             "reduce_ring_min=%d reduce_packed=%d reduce_extreme=%d spec=%d (rows with a knob in the note are variants)\n\n"
             "| op             | type | n    |   ours µs  |   CUB µs   | CUB/ours | %%copy | note |\n"
             "|----------------|------|------|------------|------------|--------|--------|------|\n",
             prop.name, prop.multiProcessorCount, g_copy_gbps, kw, ksh, kwv, kmb, kpdl, kring, kringmin, kpk, kext, kspec);
    fputs(head, stdout);
    g_table = head;
    /* first, so that a deadline never cuts it: a few seconds */
    std::string link_table = wanted("host_link") ? bench_host_link() : "";
    fputs(link_table.c_str(), stdout);
    /* segmented sums (rows), also before any deadline: 2^26 elements as 2^(26 - k) rows of 2^k,
     * k = 5, 7, 10, 11 (the short-segment kernel: 4, 16 and 32 lanes per row), 12, 13 and 16
     * (the block-per-segment kernel; its switch-over is at 2^12, TCU_SEG_SHORT_MAX) */
    if (wanted("seg_sum_rows")) {
        static const int row_log2[] = {10, 16, 5, 7, 11, 12, 13};
        const uint64_t most_rows = 1ull << (26 - 5);
        int64_t *doff;
        CK(cudaMalloc(&doff, (most_rows + 1) * sizeof(int64_t)));
        void *dseg;
        CK(cudaMalloc(&dseg, most_rows * sizeof(double)));
        gen<int32_t><<<2048, 256, 0, g_s>>>((int32_t *)in.base, in.bytes / 4, 0, 1);
        for (int k : row_log2)
            bench_segments<int32_t>(in, 1ull << (26 - k), 1ull << k, cub_tmp, cub_tmp_bytes, doff, (int32_t *)dseg);
        gen<float><<<2048, 256, 0, g_s>>>((float *)in.base, in.bytes / 4, 0, 2);
        for (int k : row_log2)
            bench_segments<float>(in, 1ull << (26 - k), 1ull << k, cub_tmp, cub_tmp_bytes, doff, (float *)dseg);
        CK(cudaFree(doff));
        CK(cudaFree(dseg));
    }

    /* small sizes once more with every launch in a CUDA graph (ours and CUB alike): the GPU's
     * per-launch cost without the host's enqueue cost (rows "graph") */
    auto graph_rows = [&](auto rows) {
        g_graph = true;
        rows();
        g_graph = false;
    };
    /* the exact kernels' ring shapes side by side (2^24-2^28): without the ring, one, two and
     * three blocks per SM; rows(note) times the kernels */
    auto ring_rows = [&](int kind, auto rows) {
        for (int ring : {0, 2, 3, 4}) {
            with_knob("reduce_ring", ring, [&] {
                with_knob("spec", 0, [&] { /* the exact kernel's shapes: no speculative sum first */
                    char note[32];
                    snprintf(note, sizeof note, "%sring=%d spec=0", kind ? "wide " : "", ring);
                    rows(note);
                });
            });
        }
    };
    std::vector<int> logs;
    for (int l = min_log2; l <= max_log2; l += 2) logs.push_back(l);
    if (quick) logs = {14, 20, 26};
    for (int kind = 0; kind < 3; kind++) {
        /* kind 0: price-like data for every case; kinds 1 (wide) and 2 (full range): the exact
         * and the plain sums only */
        const char *kname = kind_name(kind);
        if (!strstr(kinds, kname)) continue;
        for (int l : logs) {
            uint64_t n = 1ull << l;
            if (deadline_s > 0 && elapsed() > deadline_s) {
                char msg[160];
                snprintf(msg, sizeof msg, "(deadline: %.0f s passed; stopped before %s 2^%d)\n",
                         deadline_s, kname, l);
                fputs(msg, stdout);
                g_table += msg;
                break;
            }
            const char *note = kind ? kname : "";
            /* the inclusive sum scan with each tile shape forced (the default picks 4 or 5) */
            auto scan_shapes = [&](auto zero) {
                using T = decltype(zero);
                for (int sh : {3, 4, 5})
                    with_knob("scan_wide", sh, [&] {
                        char knob_note[32];
                        snprintf(knob_note, sizeof knob_note, "scan_wide=%d", sh);
                        bench_scan<T>(0, 0, in, out, n, cub_tmp, cub_tmp_bytes, dbad, knob_note);
                    });
            };
            gen<int32_t><<<2048, 256, 0, g_s>>>((int32_t *)in.base, in.bytes / 4, kind, 1);
            if (kind == 0) {
                bench_reduce<int32_t>(R_SUM, "reduce_sum", in, n, kind, note, dres, cub_tmp, cub_tmp_bytes, (int32_t *)dout, didx);
                bench_reduce<int32_t>(R_MAX, "reduce_max", in, n, kind, note, dres, cub_tmp, cub_tmp_bytes, (int32_t *)dout, didx);
                bench_scan<int32_t>(0, 0, in, out, n, cub_tmp, cub_tmp_bytes, dbad);
                bench_scan<int32_t>(1, 0, in, out, n, cub_tmp, cub_tmp_bytes, dbad);
                bench_scan<int32_t>(0, 1, in, out, n, cub_tmp, cub_tmp_bytes, dbad);
                /* variants: launches without PDL; the reduce without its shared-memory ring (loads
                 * into registers, 4 blocks per SM) and with the two-blocks-per-SM ring; the scan's
                 * 32 KB tiles at 4 blocks per SM, and the 64 KB ones in registers (4) and staged in
                 * shared memory (5), each forced at every size (the default picks 4 or 5) */
                if (l >= 16 && l <= 28) {
                    with_knob("pdl", 0, [&] {
                        bench_reduce<int32_t>(R_SUM, "reduce_sum", in, n, kind, "pdl=0", dres, cub_tmp, cub_tmp_bytes, (int32_t *)dout, didx);
                        bench_scan<int32_t>(0, 0, in, out, n, cub_tmp, cub_tmp_bytes, dbad, "pdl=0");
                    });
                }
                if (l >= 22 && l <= 28) {
                    with_knob("reduce_ring", 0, [&] {
                        bench_reduce<int32_t>(R_SUM, "reduce_sum", in, n, kind, "ring=0", dres, cub_tmp, cub_tmp_bytes, (int32_t *)dout, didx);
                    });
                    with_knob("reduce_ring", 3, [&] { /* two blocks per SM */
                        bench_reduce<int32_t>(R_SUM, "reduce_sum", in, n, kind, "ring=3", dres, cub_tmp, cub_tmp_bytes, (int32_t *)dout, didx);
                    });
                }
                if (l >= 20) scan_shapes((int32_t)0);
                if (l <= 22) graph_rows([&] {
                    bench_reduce<int32_t>(R_SUM, "reduce_sum", in, n, kind, "graph", dres, cub_tmp, cub_tmp_bytes, (int32_t *)dout, didx);
                    bench_reduce<int32_t>(R_MAX, "reduce_max", in, n, kind, "graph", dres, cub_tmp, cub_tmp_bytes, (int32_t *)dout, didx);
                    with_knob("pdl", 0, [&] {
                        bench_reduce<int32_t>(R_SUM, "reduce_sum", in, n, kind, "graph pdl=0", dres, cub_tmp, cub_tmp_bytes, (int32_t *)dout, didx);
                    });
                    if (l >= 16) { /* partials and a ticket instead of the one-word combines */
                        with_knob("reduce_packed", 0, [&] {
                            bench_reduce<int32_t>(R_SUM, "reduce_sum", in, n, kind, "graph packed=0", dres, cub_tmp, cub_tmp_bytes, (int32_t *)dout, didx);
                        });
                        with_knob("reduce_extreme", 0, [&] {
                            bench_reduce<int32_t>(R_MAX, "reduce_max", in, n, kind, "graph extreme=0", dres, cub_tmp, cub_tmp_bytes, (int32_t *)dout, didx);
                        });
                    }
                });
                if (l >= 16 && l <= 22)
                    with_knob("reduce_packed", 0, [&] {
                        bench_reduce<int32_t>(R_SUM, "reduce_sum", in, n, kind, "packed=0", dres, cub_tmp, cub_tmp_bytes, (int32_t *)dout, didx);
                    });
            }
            gen<float><<<2048, 256, 0, g_s>>>((float *)in.base, in.bytes / 4, kind, 2);
            bench_reduce<float>(R_SUM, "reduce_sum", in, n, kind, note, dres, cub_tmp, cub_tmp_bytes, (float *)dout, didx);
            bench_reduce<float>(R_PLAIN, "plain_sum", in, n, kind, note, dres, cub_tmp, cub_tmp_bytes, (float *)dout, didx);
            /* the settings of the speculative pass (spec_sum.cuh) beside the default (adaptive,
             * spec=3): spec=1 the pass always first from 4 MiB (the former default), spec=0 the
             * exact kernel alone (as the bins rows below), and below 4 MiB spec=2 (the pass at
             * every size); then from 2^26 the pass at every size (spec=2, there spec=1's path)
             * with each of a tuning build's kernel shapes, U=LxT: L 16-byte loads in flight, T
             * triples per thread, c: contiguous shares per block instead of grid-stride
             * (TALLY_CUDA_SPEC_UNROLL, read at every call; the default 4x2) */
            auto spec_rows = [&](auto zero) {
                using T = decltype(zero);
                auto one = [&](int spec, const char *unroll, const char *what) {
                    char vnote[48];
                    snprintf(vnote, sizeof vnote, "%s%s%s", note, *note ? " " : "", what);
                    with_knob("spec", spec, [&] {
                        if (unroll) setenv("TALLY_CUDA_SPEC_UNROLL", unroll, 1);
                        bench_reduce<T>(R_SUM, "reduce_sum", in, n, kind, vnote, dres, cub_tmp, cub_tmp_bytes, (T *)dout, didx);
                        if (unroll) unsetenv("TALLY_CUDA_SPEC_UNROLL");
                    });
                };
                one(1, nullptr, "spec=1");
                one(0, nullptr, "spec=0");
                if (n * sizeof(T) < (4u << 20)) one(2, nullptr, "spec=2");
                if (l < 26) return; /* the shapes at the large sizes only */
                for (const char *u : {"2", "8", "4x1", "8x1", "4c", "8c", "8x1c"}) {
                    char what[24];
                    snprintf(what, sizeof what, "spec=2 U=%s", u);
                    one(2, u, what);
                }
            };
            spec_rows(0.0f);
            char bins_note[32];
            snprintf(bins_note, sizeof bins_note, "%s%sbins=1 spec=0", note, *note ? " " : "");
            with_knob("reduce_bins", 1, [&] {
                with_knob("spec", 0, [&] {
                    bench_reduce<float>(R_SUM, "reduce_sum", in, n, kind, bins_note, dres, cub_tmp, cub_tmp_bytes, (float *)dout, didx);
                });
            });
#if defined(TCU_RW) && TCU_RW /* the register windows exist only in a -DTCU_RW=1 build; else bins=4 is the default */
            char bins4_note[32]; /* f32 register windows first */
            snprintf(bins4_note, sizeof bins4_note, "%s%sbins=4", note, *note ? " " : "");
            with_knob("reduce_bins", 4, [&] {
                bench_reduce<float>(R_SUM, "reduce_sum", in, n, kind, bins4_note, dres, cub_tmp, cub_tmp_bytes, (float *)dout, didx);
            });
#endif
            if (kind == 0) {
                bench_reduce<float>(R_MAX, "reduce_max", in, n, kind, note, dres, cub_tmp, cub_tmp_bytes, (float *)dout, didx);
                bench_reduce<float>(R_SMM, "sum_min_max", in, n, kind, note, dres, cub_tmp, cub_tmp_bytes, (float *)dout, didx);
                bench_reduce<float>(R_ARGMIN, "argmin", in, n, kind, note, dres, cub_tmp, cub_tmp_bytes, (float *)dout, didx);
                bench_scan<float>(0, 0, in, out, n, cub_tmp, cub_tmp_bytes, dbad);
                bench_scan<float>(1, 0, in, out, n, cub_tmp, cub_tmp_bytes, dbad);
                if (l >= 20) scan_shapes(0.0f);
                if (l <= 22) graph_rows([&] {
                    bench_reduce<float>(R_SUM, "reduce_sum", in, n, kind, "graph", dres, cub_tmp, cub_tmp_bytes, (float *)dout, didx);
                    bench_reduce<float>(R_PLAIN, "plain_sum", in, n, kind, "graph", dres, cub_tmp, cub_tmp_bytes, (float *)dout, didx);
                    bench_reduce<float>(R_MAX, "reduce_max", in, n, kind, "graph", dres, cub_tmp, cub_tmp_bytes, (float *)dout, didx);
                });
            }
            if (kind < 2 && l >= 24 && l <= 28) ring_rows(kind, [&](const char *rnote) {
                bench_reduce<float>(R_SUM, "reduce_sum", in, n, kind, rnote, dres, cub_tmp, cub_tmp_bytes, (float *)dout, didx);
                if (kind == 0)
                    bench_reduce<float>(R_SMM, "sum_min_max", in, n, kind, rnote, dres, cub_tmp, cub_tmp_bytes, (float *)dout, didx);
            });
            if (l <= 30) {
                gen<double><<<2048, 256, 0, g_s>>>((double *)in.base, in.bytes / 8, kind, 3);
                bench_reduce<double>(R_SUM, "reduce_sum", in, n, kind, note, dres, cub_tmp, cub_tmp_bytes, (double *)dout, didx);
                bench_reduce<double>(R_PLAIN, "plain_sum", in, n, kind, note, dres, cub_tmp, cub_tmp_bytes, (double *)dout, didx);
                spec_rows(0.0);
                with_knob("reduce_bins", 1, [&] {
                    with_knob("spec", 0, [&] {
                        bench_reduce<double>(R_SUM, "reduce_sum", in, n, kind, bins_note, dres, cub_tmp, cub_tmp_bytes, (double *)dout, didx);
                    });
                });
#if defined(TCU_RW) && TCU_RW /* beside the register windows (REDUCE_BINS=3); else bins=2 is the default */
                char bins2_note[32]; /* f64 windows in shared memory, without the register windows */
                snprintf(bins2_note, sizeof bins2_note, "%s%sbins=2", note, *note ? " " : "");
                with_knob("reduce_bins", 2, [&] {
                    bench_reduce<double>(R_SUM, "reduce_sum", in, n, kind, bins2_note, dres, cub_tmp, cub_tmp_bytes, (double *)dout, didx);
                });
#endif
                if (kind == 0) {
                    bench_reduce<double>(R_MAX, "reduce_max", in, n, kind, note, dres, cub_tmp, cub_tmp_bytes, (double *)dout, didx);
                    /* (f64 sum scans: CUB's figure for the Vulkan backend's f64 rows to meet) */
                    bench_scan<double>(0, 0, in, out, n, cub_tmp, cub_tmp_bytes, dbad);
                    bench_scan<double>(1, 0, in, out, n, cub_tmp, cub_tmp_bytes, dbad);
                }
                if (kind == 0 && l <= 22) graph_rows([&] {
                    bench_reduce<double>(R_SUM, "reduce_sum", in, n, kind, "graph", dres, cub_tmp, cub_tmp_bytes, (double *)dout, didx);
                    bench_reduce<double>(R_PLAIN, "plain_sum", in, n, kind, "graph", dres, cub_tmp, cub_tmp_bytes, (double *)dout, didx);
                    bench_reduce<double>(R_MAX, "reduce_max", in, n, kind, "graph", dres, cub_tmp, cub_tmp_bytes, (double *)dout, didx);
                });
                if (kind < 2 && l >= 24 && l <= 28) ring_rows(kind, [&](const char *rnote) {
                    bench_reduce<double>(R_SUM, "reduce_sum", in, n, kind, rnote, dres, cub_tmp, cub_tmp_bytes, (double *)dout, didx);
                });
            }
        }
    }
    /* the adaptive setting's worst case (bench_alternate) at 2^28, or the largest size run */
    {
        const int al = std::min(max_log2, 28);
        const uint64_t n = 1ull << al;
        if (al >= min_log2 && (deadline_s <= 0 || elapsed() < deadline_s) && strstr(kinds, "price") &&
            strstr(kinds, "wide")) {
            gen<float><<<2048, 256, 0, g_s>>>((float *)in.base, n, 0, 2);
            gen<float><<<2048, 256, 0, g_s>>>((float *)out.base, n, 1, 2);
            bench_alternate<float>((const float *)in.base, (const float *)out.base, n, dres, cub_tmp, cub_tmp_bytes, (float *)dout);
            gen<double><<<2048, 256, 0, g_s>>>((double *)in.base, n, 0, 3);
            gen<double><<<2048, 256, 0, g_s>>>((double *)out.base, n, 1, 3);
            bench_alternate<double>((const double *)in.base, (const double *)out.base, n, dres, cub_tmp, cub_tmp_bytes, (double *)dout);
        }
    }
    printf("\n\n=== TABLE (CUB/ours > 1: ours faster; %%copy: our bytes/s over the D2D memcpy's) ===\n");
    fputs(g_table.c_str(), stdout);
    const std::string xtable = exact_table();
    fputs(xtable.c_str(), stdout);
    printf("validation failures: %d\n", g_bad);
    const char *host_head =
        "\nHost cost of one enqueue (stream rows up to 2^22): µs per call while launching back to back\n"
        "(when it nears the GPU time the host is what limits the stream rows)\n\n"
        "| op             | type | n    | ours host | ours stream | CUB host | CUB stream |\n"
        "|----------------|------|------|-----------|-------------|----------|------------|\n";
    if (!g_host_table.empty()) printf("%s%s", host_head, g_host_table.c_str());
    fputs(link_table.c_str(), stdout);
    if (outfile) {
        FILE *f = fopen(outfile, "w");
        if (f) {
            fputs(g_table.c_str(), f);
            fputs(xtable.c_str(), f);
            if (!g_host_table.empty()) fprintf(f, "%s%s", host_head, g_host_table.c_str());
            fputs(link_table.c_str(), f);
            fprintf(f, "validation failures: %d\n", g_bad);
            fclose(f);
        }
    }
    tally_destroy(g_ctx);
    tally_destroy(g_cpu);
    return g_bad ? 1 : 0;
}
