// The CUDA variants of `tally bench`: seed 004's five reduction kernels (N/2 multi-pass, naive
// accumulate, workgroup tree in two passes, warp reduce, warp reduce with 16-byte loads), the
// textbook GPU scans (Hillis-Steele, Blelloch, reduce-then-scan, decoupled look-back), tally's
// own CUDA paths, CUB, the memory ceilings, and one deliberately incorrect kernel. Each is
// validated by the bench before it is timed with CUDA events on one stream.
// Compiled only when TALLY_CUDA is ON.
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_internal.h"
#include "tally.h"
#include "tally_cuda.h"

#define LAB_CK(call)                                                                       \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            snprintf(why, LAB_WHY, "%s: %s", #call, cudaGetErrorString(e_));               \
            return -1;                                                                     \
        }                                                                                  \
    } while (0)

namespace {

const int kThreads = 256;                 // threads of most kernels
const int kScanItems = 16;                // items per thread in the tile scans
const int kTile = kThreads * kScanItems;  // 4096 elements per scan tile
const int kBlellochThreads = 512;         // Blelloch: 2 elements per thread, 1024 per tile
const int kWarpBlocksMax = 1024;

struct cuda_state {
    int device;
    int sms;
    cudaStream_t stream;
    cudaEvent_t ev0, ev1;
    tally_context *ctx;
    char ctx_error[160];
    float *d_in, *d_out, *d_tmp, *d_part, *d_res;
    unsigned long long *d_status;
    unsigned int *d_counter;
    tally_result *d_tres;
    void *d_cub;
    size_t cub_bytes;
    uint64_t cap;  // elements d_in, d_out and d_tmp hold
    uint64_t n;
    char desc[256];
};

int g_naive_threads = 1;  // threads of the naive-accumulate launch, for its error bound

unsigned ceil_log2(uint64_t v)
{
    unsigned k = 0;
    while (k < 64 && (UINT64_C(1) << k) < v) ++k;
    return k;
}

unsigned grid_for(uint64_t n, unsigned per_block, unsigned max_blocks)
{
    uint64_t b = (n + per_block - 1) / per_block;
    if (b < 1) b = 1;
    return (unsigned)(b < max_blocks ? b : max_blocks);
}

// ---- device helpers ---------------------------------------------------------------------------
__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_inclusive(float v)
{
    int lane = threadIdx.x & 31;
    for (int o = 1; o < 32; o <<= 1) {
        float y = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v += y;
    }
    return v;
}

// Inclusive scan of sh[0..kTile) in place by kThreads threads: each thread scans kScanItems
// consecutive elements, the thread totals are scanned with warp shuffles, and each thread adds
// the total of the threads before it. Returns the tile total to every thread.
__device__ float block_scan_shared(float *sh, float *warp_tot)
{
    int t = threadIdx.x, lane = t & 31, w = t >> 5;
    float *p = sh + t * kScanItems;
    float run = 0.0f;
    for (int k = 0; k < kScanItems; ++k) { run += p[k]; p[k] = run; }
    float incl = warp_inclusive(run);
    float excl = __shfl_up_sync(0xffffffffu, incl, 1);
    if (lane == 0) excl = 0.0f;
    if (lane == 31) warp_tot[w] = incl;
    __syncthreads();
    if (w == 0) {
        float v = lane < kThreads / 32 ? warp_tot[lane] : 0.0f;
        v = warp_inclusive(v);
        if (lane < kThreads / 32) warp_tot[lane] = v;
    }
    __syncthreads();
    float offset = (w > 0 ? warp_tot[w - 1] : 0.0f) + excl;
    if (t > 0)
        for (int k = 0; k < kScanItems; ++k) p[k] += offset;
    __syncthreads();
    return warp_tot[kThreads / 32 - 1];
}

__device__ void load_tile(const float *in, uint64_t n, uint64_t base, float *sh)
{
    for (int k = 0; k < kScanItems; ++k) {
        uint64_t i = base + (uint64_t)k * kThreads + threadIdx.x;
        sh[k * kThreads + threadIdx.x] = i < n ? in[i] : 0.0f;
    }
    __syncthreads();
}

__device__ void store_tile(float *out, uint64_t n, uint64_t base, const float *sh, float carry)
{
    for (int k = 0; k < kScanItems; ++k) {
        uint64_t i = base + (uint64_t)k * kThreads + threadIdx.x;
        if (i < n) out[i] = sh[k * kThreads + threadIdx.x] + carry;
    }
}

// ---- reduction kernels (seed 004) ----------------------------------------------------------------
// 0. N/2 multi-pass: a[i] += a[i + half] for i < m - half, one launch per halving.
__global__ void k_half(float *a, uint64_t m, uint64_t half)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m - half; i += stride)
        a[i] += a[i + half];
}

// 1. Naive accumulate: a grid-stride sum per thread, then one atomicAdd per thread.
__global__ void k_naive(const float *x, uint64_t n, float *res)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    float s = 0.0f;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) s += x[i];
    atomicAdd(res, s);
}

// 2. Workgroup tree, two passes (seed 001): grid-stride sums, a shared-memory tree, a partial per
// block. Broken = true is the deliberately incorrect variant: its tree stops one step early
// (stride > 1), so each block's partial misses the half of its sums that s[1] holds.
template <bool Broken>
__global__ void k_tree(const float *x, uint64_t n, float *partials)
{
    __shared__ float s[kThreads];
    uint64_t stride = (uint64_t)gridDim.x * kThreads;
    float acc = 0.0f;
    for (uint64_t i = (uint64_t)blockIdx.x * kThreads + threadIdx.x; i < n; i += stride) acc += x[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int st = kThreads / 2; st > (Broken ? 1 : 0); st >>= 1) {
        if ((int)threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = s[0];
}

// 3 and 4. Warp reduce (shuffles, then one warp over the warp sums), with scalar or 16-byte loads.
template <bool Vec4>
__global__ void k_warp(const float *x, uint64_t n, float *partials)
{
    __shared__ float wsum[32];
    uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    float acc = 0.0f;
    if (Vec4) {
        uint64_t n4 = n / 4;
        const float4 *x4 = reinterpret_cast<const float4 *>(x);
        for (uint64_t i = tid; i < n4; i += stride) {
            float4 v = x4[i];
            acc += (v.x + v.y) + (v.z + v.w);
        }
        for (uint64_t i = n4 * 4 + tid; i < n; i += stride) acc += x[i];
    } else {
        for (uint64_t i = tid; i < n; i += stride) acc += x[i];
    }
    acc = warp_sum(acc);
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (lane == 0) wsum[w] = acc;
    __syncthreads();
    if (w == 0) {
        acc = lane < (int)(blockDim.x >> 5) ? wsum[lane] : 0.0f;
        acc = warp_sum(acc);
        if (lane == 0) partials[blockIdx.x] = acc;
    }
}

// Read ceiling: 16-byte loads, integer adds (no float latency chain), one word per block.
__global__ void k_read(const uint4 *x, uint64_t n4, unsigned *out)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    unsigned acc = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        uint4 v = x[i];
        acc += (v.x ^ v.y) + (v.z ^ v.w);
    }
    acc += __shfl_down_sync(0xffffffffu, acc, 16);
    if (acc == 0x9e3779b9u) out[blockIdx.x] = acc;  // practically never: keeps the loads alive
}

// ---- scan kernels ---------------------------------------------------------------------------------
// Hillis-Steele over global memory: one launch per step, two buffers.
__global__ void k_hs_step(const float *src, float *dst, uint64_t n, uint64_t d)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = i >= d ? src[i] + src[i - d] : src[i];
}

// Blelloch within a tile of 2 * kBlellochThreads elements in shared memory (up-sweep, clear the
// root, down-sweep), made inclusive by adding each input; the tile's total goes to tile_sums.
__global__ void k_blelloch_tile(const float *in, float *out, uint64_t n, float *tile_sums)
{
    __shared__ float s[2 * kBlellochThreads];
    const int m = 2 * kBlellochThreads;
    int t = threadIdx.x;
    uint64_t base = (uint64_t)blockIdx.x * m;
    float x0 = base + 2 * t < n ? in[base + 2 * t] : 0.0f;
    float x1 = base + 2 * t + 1 < n ? in[base + 2 * t + 1] : 0.0f;
    s[2 * t] = x0;
    s[2 * t + 1] = x1;
    int offset = 1;
    for (int d = m >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
            s[bi] += s[ai];
        }
        offset <<= 1;
    }
    __syncthreads();
    if (t == 0) {
        if (tile_sums) tile_sums[blockIdx.x] = s[m - 1];
        s[m - 1] = 0.0f;
    }
    for (int d = 1; d < m; d <<= 1) {
        offset >>= 1;
        __syncthreads();
        if (t < d) {
            int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
            float tmp = s[ai];
            s[ai] = s[bi];
            s[bi] += tmp;
        }
    }
    __syncthreads();
    if (base + 2 * t < n) out[base + 2 * t] = s[2 * t] + x0;
    if (base + 2 * t + 1 < n) out[base + 2 * t + 1] = s[2 * t + 1] + x1;
}

// Adds the inclusive total of the tiles before to every element of a tile (tile > 0).
__global__ void k_add_tile_offsets(float *out, uint64_t n, const float *scanned_sums, int tile_elems)
{
    uint64_t tile = blockIdx.x;
    if (tile == 0) return;
    float off = scanned_sums[tile - 1];
    uint64_t base = tile * (uint64_t)tile_elems;
    for (int k = threadIdx.x; k < tile_elems; k += blockDim.x)
        if (base + k < n) out[base + k] += off;
}

// Reduce-then-scan, pass 1: one total per tile of kTile elements.
__global__ void k_rts_reduce(const float *in, uint64_t n, float *tile_sums)
{
    __shared__ float wsum[kThreads / 32];
    uint64_t base = (uint64_t)blockIdx.x * kTile;
    float acc = 0.0f;
    for (int k = 0; k < kScanItems; ++k) {
        uint64_t i = base + (uint64_t)k * kThreads + threadIdx.x;
        if (i < n) acc += in[i];
    }
    acc = warp_sum(acc);
    if ((threadIdx.x & 31) == 0) wsum[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < kThreads / 32 ? wsum[threadIdx.x] : 0.0f;
        acc = warp_sum(acc);
        if (threadIdx.x == 0) tile_sums[blockIdx.x] = acc;
    }
}

// Reduce-then-scan, pass 3: scan each tile again, starting from the scanned totals before it.
__global__ void k_rts_scan(const float *in, float *out, uint64_t n, const float *scanned_sums)
{
    __shared__ float sh[kTile];
    __shared__ float warp_tot[kThreads / 32];
    uint64_t base = (uint64_t)blockIdx.x * kTile;
    load_tile(in, n, base, sh);
    block_scan_shared(sh, warp_tot);
    store_tile(out, n, base, sh, blockIdx.x > 0 ? scanned_sums[blockIdx.x - 1] : 0.0f);
}

// Decoupled look-back (single pass). Tiles are numbered in the order blocks start (an atomic
// counter), so a tile only waits for tiles whose blocks are already running. A tile's status is
// one 64-bit word: the float's bits above, a flag below (1: aggregate, 2: inclusive prefix).
__device__ __forceinline__ unsigned long long pack_status(float v, unsigned flag)
{
    return ((unsigned long long)__float_as_uint(v) << 32) | flag;
}

__global__ void k_lookback(const float *in, float *out, uint64_t n, unsigned long long *status,
                           unsigned *counter)
{
    __shared__ float sh[kTile];
    __shared__ float warp_tot[kThreads / 32];
    __shared__ unsigned s_tile;
    __shared__ float s_prefix;
    if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u);
    __syncthreads();
    unsigned tile = s_tile;
    uint64_t base = (uint64_t)tile * kTile;
    load_tile(in, n, base, sh);
    float total = block_scan_shared(sh, warp_tot);
    if (threadIdx.x == 0) {
        float prefix = 0.0f;
        if (tile == 0) {
            atomicExch(&status[0], pack_status(total, 2));
        } else {
            atomicExch(&status[tile], pack_status(total, 1));
            long j = (long)tile - 1;
            for (;;) {
                unsigned long long w = *(volatile unsigned long long *)&status[j];
                unsigned flag = (unsigned)(w & 3);
                if (flag == 0) continue;  // the predecessor has not published yet
                prefix = __uint_as_float((unsigned)(w >> 32)) + prefix;
                if (flag == 2) break;
                --j;
            }
            atomicExch(&status[tile], pack_status(prefix + total, 2));
        }
        s_prefix = prefix;
    }
    __syncthreads();
    store_tile(out, n, base, sh, s_prefix);
}

// ---- host side --------------------------------------------------------------------------------------
int finish(cuda_state *s, int check, double out[3], float *scan_out, const float *d_src, bool scan, char *why)
{
    LAB_CK(cudaGetLastError());
    if (!check) return 0;
    if (scan) {
        if (s->n) LAB_CK(cudaMemcpyAsync(scan_out, d_src, s->n * sizeof(float), cudaMemcpyDeviceToHost, s->stream));
    } else {
        float r = 0.0f;
        LAB_CK(cudaMemcpyAsync(&r, d_src, sizeof(float), cudaMemcpyDeviceToHost, s->stream));
        LAB_CK(cudaStreamSynchronize(s->stream));
        out[0] = r;
    }
    LAB_CK(cudaStreamSynchronize(s->stream));
    return 0;
}

int v_n2(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    if (n == 0) { LAB_CK(cudaMemsetAsync(s->d_tmp, 0, sizeof(float), s->stream)); return finish(s, check, out, so, s->d_tmp, false, why); }
    LAB_CK(cudaMemcpyAsync(s->d_tmp, s->d_in, n * sizeof(float), cudaMemcpyDeviceToDevice, s->stream));
    for (uint64_t m = n; m > 1;) {
        uint64_t half = (m + 1) / 2;
        k_half<<<grid_for(m - half, kThreads, 65535), kThreads, 0, s->stream>>>(s->d_tmp, m, half);
        m = half;
    }
    return finish(s, check, out, so, s->d_tmp, false, why);
}

int v_naive(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    LAB_CK(cudaMemsetAsync(s->d_res, 0, sizeof(float), s->stream));
    k_naive<<<s->sms * 4, kThreads, 0, s->stream>>>(s->d_in, n, s->d_res);
    return finish(s, check, out, so, s->d_res, false, why);
}

template <bool Broken>
int v_tree(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    k_tree<Broken><<<256, kThreads, 0, s->stream>>>(s->d_in, n, s->d_part);
    k_tree<Broken><<<1, kThreads, 0, s->stream>>>(s->d_part, 256, s->d_res);
    return finish(s, check, out, so, s->d_res, false, why);
}

template <bool Vec4>
int v_warp(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    unsigned blocks = grid_for(n, kThreads * 8, kWarpBlocksMax);
    k_warp<Vec4><<<blocks, kThreads, 0, s->stream>>>(s->d_in, n, s->d_part);
    k_warp<false><<<1, 1024, 0, s->stream>>>(s->d_part, blocks, s->d_res);
    return finish(s, check, out, so, s->d_res, false, why);
}

int v_cub_reduce(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    size_t bytes = s->cub_bytes;
    LAB_CK(cub::DeviceReduce::Sum(s->d_cub, bytes, s->d_in, s->d_res, (int)n, s->stream));
    return finish(s, check, out, so, s->d_res, false, why);
}

int tally_fail(cuda_state *s, tally_status st, char *why)
{
    if (!s->ctx) snprintf(why, LAB_WHY, "no CUDA context: %s", s->ctx_error);
    else snprintf(why, LAB_WHY, "%s: %s", tally_status_name(st), tally_last_error(s->ctx));
    return -1;
}

int tally_reduce_ops(cuda_state *s, uint64_t n, int check, double out[3], size_t nops, char *why)
{
    static const tally_op ops[3] = { TALLY_SUM, TALLY_MIN, TALLY_MAX };
    if (!s->ctx) return tally_fail(s, TALLY_OK, why);
    tally_status st;
    if (check) {
        tally_result r[3];
        st = tally_reduce_many(s->ctx, TALLY_F32, s->d_in, n, ops, nops, NULL, r);
        if (st != TALLY_OK && !(n == 0 && st == TALLY_ERR_EMPTY)) return tally_fail(s, st, why);
        for (size_t k = 0; k < nops; ++k) out[k] = r[k].status == TALLY_OK ? r[k].value.f64 : NAN;
        return 0;
    }
    st = tally_cuda_reduce_async(s->ctx, TALLY_F32, s->d_in, n, ops, nops, NULL, s->d_tres);
    return st == TALLY_OK ? 0 : tally_fail(s, st, why);
}

int v_tally(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{ (void)so; return tally_reduce_ops((cuda_state *)bs, n, check, out, 1, why); }
int v_tally_smm(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{ (void)so; return tally_reduce_ops((cuda_state *)bs, n, check, out, 3, why); }

int v_read_ceiling(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so;
    cuda_state *s = (cuda_state *)bs;
    k_read<<<s->sms * 8, kThreads, 0, s->stream>>>(reinterpret_cast<const uint4 *>(s->d_in), n / 4,
                                                  reinterpret_cast<unsigned *>(s->d_part));
    LAB_CK(cudaGetLastError());
    out[0] = 0;
    return 0;
}

int v_copy_ceiling(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so; (void)out;
    cuda_state *s = (cuda_state *)bs;
    if (n) LAB_CK(cudaMemcpyAsync(s->d_out, s->d_in, n * sizeof(float), cudaMemcpyDeviceToDevice, s->stream));
    return 0;
}

int v_hillis(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    unsigned steps = ceil_log2(n);
    if (n && steps == 0)
        LAB_CK(cudaMemcpyAsync(s->d_out, s->d_in, sizeof(float), cudaMemcpyDeviceToDevice, s->stream));
    float *x = (steps & 1) ? s->d_out : s->d_tmp, *y = (steps & 1) ? s->d_tmp : s->d_out;
    const float *src = s->d_in;
    float *dst = x;
    for (unsigned k = 0; k < steps; ++k) {
        k_hs_step<<<grid_for(n, kThreads, 65535), kThreads, 0, s->stream>>>(src, dst, n, UINT64_C(1) << k);
        src = dst;
        dst = dst == x ? y : x;
    }
    return finish(s, check, out, so, s->d_out, true, why);
}

// Scans n elements in place or not; scratch holds the tile sums of every level.
void blelloch_scan(cuda_state *s, const float *in, float *out, uint64_t n, float *scratch)
{
    const int m = 2 * kBlellochThreads;
    uint64_t tiles = (n + m - 1) / m;
    if (tiles <= 1) {
        if (n) k_blelloch_tile<<<1, kBlellochThreads, 0, s->stream>>>(in, out, n, nullptr);
        return;
    }
    float *sums = scratch;
    k_blelloch_tile<<<(unsigned)tiles, kBlellochThreads, 0, s->stream>>>(in, out, n, sums);
    blelloch_scan(s, sums, sums, tiles, scratch + tiles);
    k_add_tile_offsets<<<(unsigned)tiles, kBlellochThreads, 0, s->stream>>>(out, n, sums, m);
}

int v_blelloch(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    blelloch_scan(s, s->d_in, s->d_out, n, s->d_tmp);
    return finish(s, check, out, so, s->d_out, true, why);
}

int v_rts(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    uint64_t tiles = (n + kTile - 1) / kTile;
    if (tiles) {
        k_rts_reduce<<<(unsigned)tiles, kThreads, 0, s->stream>>>(s->d_in, n, s->d_tmp);
        blelloch_scan(s, s->d_tmp, s->d_tmp, tiles, s->d_tmp + tiles);
        k_rts_scan<<<(unsigned)tiles, kThreads, 0, s->stream>>>(s->d_in, s->d_out, n, s->d_tmp);
    }
    return finish(s, check, out, so, s->d_out, true, why);
}

int v_lookback(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    uint64_t tiles = (n + kTile - 1) / kTile;
    if (tiles) {
        LAB_CK(cudaMemsetAsync(s->d_status, 0, tiles * sizeof(unsigned long long), s->stream));
        LAB_CK(cudaMemsetAsync(s->d_counter, 0, sizeof(unsigned), s->stream));
        k_lookback<<<(unsigned)tiles, kThreads, 0, s->stream>>>(s->d_in, s->d_out, n, s->d_status, s->d_counter);
    }
    return finish(s, check, out, so, s->d_out, true, why);
}

int v_tally_scan(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    if (!s->ctx) return tally_fail(s, TALLY_OK, why);
    tally_status st = tally_cuda_scan_async(s->ctx, TALLY_SUM, TALLY_F32, s->d_in, s->d_out, n, NULL);
    if (st != TALLY_OK) return tally_fail(s, st, why);
    return finish(s, check, out, so, s->d_out, true, why);
}

int v_cub_scan(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    size_t bytes = s->cub_bytes;
    LAB_CK(cub::DeviceScan::InclusiveSum(s->d_cub, bytes, s->d_in, s->d_out, (int)n, s->stream));
    return finish(s, check, out, so, s->d_out, true, why);
}

// ---- error bounds (multiples of sum |x|; see variants_cpu.c) ---------------------------------------
double b_tree_pairwise(uint64_t i, uint64_t n) { (void)i; return lab_gamma(ceil_log2(n) + 2.0, LAB_U32); }
double b_naive(uint64_t i, uint64_t n) { (void)i; return lab_gamma((double)(n / (uint64_t)g_naive_threads) + g_naive_threads + 2.0, LAB_U32); }
double b_tree2(uint64_t i, uint64_t n) { (void)i; return lab_gamma((double)(n / 65536) + 24.0, LAB_U32); }
double b_warp(uint64_t i, uint64_t n) { (void)i; return lab_gamma((double)(n / (256 * 1024)) + 56.0, LAB_U32); }
double b_cub(uint64_t i, uint64_t n) { (void)i; return lab_gamma((double)(n / 256) + 64.0, LAB_U32); }
double b_hillis(uint64_t i, uint64_t n) { (void)n; return lab_gamma(ceil_log2(i + 1) + 1.0, LAB_U32); }
double b_tile_scans(uint64_t i, uint64_t n) { (void)i; return lab_gamma(6.0 * ceil_log2(n + 1) + 3.0 * kScanItems + 16, LAB_U32); }
double b_lookback(uint64_t i, uint64_t n) { (void)n; return lab_gamma((double)(i / kTile) + 2.0 * kScanItems + 40, LAB_U32); }
// tally's and CUB's scans: a chain of tile carries plus a chain inside a tile (of 256 to 65536
// elements), or any order at all, whichever bound is tighter.
double b_any(uint64_t i, uint64_t n)
{
    (void)n;
    double any = lab_gamma((double)i + 2, LAB_U32), blocked = lab_gamma((double)(i / 256) + 65538.0, LAB_U32);
    return any < blocked ? any : blocked;
}

const uint64_t kCubMax = 0x7FFFFFFF;

const lab_variant cuda_variants[] = {
    { "gpu-read-ceiling", LAB_CEIL_READ, LAB_CHECK_NONE,
      "read ceiling: 16-byte loads on every SM, integer adds", v_read_ceiling, NULL, 0, 0 },
    { "n2-multipass", LAB_REDUCE, LAB_CHECK_BOUND,
      "seed 004 #0: N/2 multi-pass, a[i] += a[i + n/2], one launch per halving (on a copy)", v_n2, b_tree_pairwise, 0, 0 },
    { "naive-accumulate", LAB_REDUCE, LAB_CHECK_BOUND,
      "seed 004 #1: grid-stride sum per thread, one float atomicAdd each", v_naive, b_naive, 0, 0 },
    { "workgroup-tree-2pass", LAB_REDUCE, LAB_CHECK_BOUND,
      "seed 004 #2 / seed 001: 256 blocks x 256, shared-memory tree, then one block over the partials",
      v_tree<false>, b_tree2, 0, 0 },
    { "warp-reduce", LAB_REDUCE, LAB_CHECK_BOUND,
      "seed 004 #3: warp shuffles, then one warp over the warp sums; two launches", v_warp<false>, b_warp, 0, 0 },
    { "warp-vec4", LAB_REDUCE, LAB_CHECK_BOUND,
      "seed 004 #4: warp reduce with 16-byte (float4) loads", v_warp<true>, b_warp, 0, 0 },
    { "tally-gpu", LAB_REDUCE, LAB_CHECK_EXACT,
      "tally_reduce sum on the CUDA backend: correctly rounded", v_tally, NULL, 0, 0 },
    { "tally-gpu-sum-min-max", LAB_REDUCE_SMM, LAB_CHECK_EXACT,
      "tally_reduce_many sum,min,max fused, CUDA backend", v_tally_smm, NULL, 0, 0 },
    { "cub-reduce", LAB_REDUCE, LAB_CHECK_BOUND,
      "CUB DeviceReduce::Sum (float accumulation)", v_cub_reduce, b_cub, 0, kCubMax },
    { "broken-tree", LAB_REDUCE, LAB_CHECK_BOUND,
      "deliberately incorrect: workgroup tree that stops at stride 2, dropping s[1]", v_tree<true>, b_tree2, 1, 0 },
    { "gpu-copy-ceiling", LAB_CEIL_COPY, LAB_CHECK_NONE,
      "copy ceiling: cudaMemcpyAsync device to device", v_copy_ceiling, NULL, 0, 0 },
    { "hillis-steele-gpu", LAB_SCAN, LAB_CHECK_BOUND,
      "Hillis-Steele over global memory: one launch per step, two buffers", v_hillis, b_hillis, 0, UINT64_C(1) << 28 },
    { "blelloch-gpu", LAB_SCAN, LAB_CHECK_BOUND,
      "Blelloch in shared memory per 1024-element tile, tile sums scanned recursively, then added",
      v_blelloch, b_tile_scans, 0, 0 },
    { "reduce-then-scan", LAB_SCAN, LAB_CHECK_BOUND,
      "tile totals, a scan of the totals, then each tile scanned from its offset (reads n twice)",
      v_rts, b_tile_scans, 0, 0 },
    { "decoupled-lookback", LAB_SCAN, LAB_CHECK_BOUND,
      "single pass: each tile publishes its aggregate and looks back for its prefix", v_lookback, b_lookback, 0, 0 },
    { "tally-gpu-scan", LAB_SCAN, LAB_CHECK_BOUND,
      "tally_scan inclusive sum on the CUDA backend", v_tally_scan, b_any, 0, 0 },
    { "cub-scan", LAB_SCAN, LAB_CHECK_BOUND,
      "CUB DeviceScan::InclusiveSum", v_cub_scan, b_any, 0, kCubMax },
};

int cuda_available(void)
{
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

void free_buffers(cuda_state *s)
{
    cudaFree(s->d_in); cudaFree(s->d_out); cudaFree(s->d_tmp); cudaFree(s->d_status); cudaFree(s->d_cub);
    s->d_in = s->d_out = s->d_tmp = nullptr;
    s->d_status = nullptr;
    s->d_cub = nullptr;
    s->cap = 0;
    s->cub_bytes = 0;
}

void cuda_close(void *bs)
{
    cuda_state *s = (cuda_state *)bs;
    if (!s) return;
    tally_destroy(s->ctx);
    free_buffers(s);
    cudaFree(s->d_part); cudaFree(s->d_res); cudaFree(s->d_counter); cudaFree(s->d_tres);
    if (s->ev0) cudaEventDestroy(s->ev0);
    if (s->ev1) cudaEventDestroy(s->ev1);
    if (s->stream) cudaStreamDestroy(s->stream);
    free(s);
}

int cuda_open(void **bstate, int threads, uint64_t max_n, char *why)
{
    (void)threads; (void)max_n;
    cuda_state *s = (cuda_state *)calloc(1, sizeof *s);
    if (!s) { snprintf(why, LAB_WHY, "out of memory"); return -1; }
    *bstate = s;
    s->device = 0;
    cudaDeviceProp prop;
    if (cudaSetDevice(0) != cudaSuccess || cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        snprintf(why, LAB_WHY, "no usable CUDA device");
        cuda_close(s);
        *bstate = nullptr;
        return -1;
    }
    s->sms = prop.multiProcessorCount;
    g_naive_threads = s->sms * 4 * kThreads;
    int rt = 0;
    cudaRuntimeGetVersion(&rt);
    snprintf(s->desc, sizeof s->desc, "%.120s, %d SMs, %.0f GiB, CUDA runtime %d.%d; device timestamps", prop.name,
             s->sms, (double)prop.totalGlobalMem / 1073741824.0, rt / 1000, (rt % 1000) / 10);
    if (cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreate(&s->ev0) != cudaSuccess || cudaEventCreate(&s->ev1) != cudaSuccess ||
        cudaMalloc(&s->d_part, sizeof(float) * 4096) != cudaSuccess ||
        cudaMalloc(&s->d_res, sizeof(float) * 4) != cudaSuccess ||
        cudaMalloc(&s->d_counter, sizeof(unsigned)) != cudaSuccess ||
        cudaMalloc(&s->d_tres, sizeof(tally_result) * 4) != cudaSuccess) {
        snprintf(why, LAB_WHY, "CUDA setup failed: %s", cudaGetErrorString(cudaGetLastError()));
        cuda_close(s);
        *bstate = nullptr;
        return -1;
    }
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CUDA;
    o.device = 0;
    tally_status st = tally_create(&s->ctx, &o);
    if (st != TALLY_OK) {
        snprintf(s->ctx_error, sizeof s->ctx_error, "%s: %s", tally_status_name(st), tally_create_error());
        s->ctx = nullptr;
    } else {
        tally_cuda_set_stream(s->ctx, s->stream);  // one stream: the events time tally's work too
    }
    return 0;
}

int cuda_load(void *bs, const float *in, uint64_t n, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    if (n > s->cap || !s->d_in) {
        free_buffers(s);
        uint64_t elems = n ? n : 1;
        uint64_t tmp = elems + elems / 256 + 4096;  // n for Hillis-Steele and N/2, plus tile sums
        uint64_t tiles = elems / kTile + 2;
        LAB_CK(cudaMalloc(&s->d_in, elems * sizeof(float)));
        LAB_CK(cudaMalloc(&s->d_out, elems * sizeof(float)));
        LAB_CK(cudaMalloc(&s->d_tmp, tmp * sizeof(float)));
        LAB_CK(cudaMalloc(&s->d_status, tiles * sizeof(unsigned long long)));
        s->cap = n;
        int cn = (int)(n < kCubMax ? n : kCubMax);
        size_t rb = 0, sb = 0;
        LAB_CK(cub::DeviceReduce::Sum(nullptr, rb, s->d_in, s->d_res, cn, s->stream));
        LAB_CK(cub::DeviceScan::InclusiveSum(nullptr, sb, s->d_in, s->d_out, cn, s->stream));
        s->cub_bytes = rb > sb ? rb : sb;
        LAB_CK(cudaMalloc(&s->d_cub, s->cub_bytes ? s->cub_bytes : 1));
        if (s->ctx && tally_cuda_reserve(s->ctx, TALLY_F32, elems) != TALLY_OK) {
            snprintf(why, LAB_WHY, "tally_cuda_reserve: %s", tally_last_error(s->ctx));
            return -1;
        }
    }
    s->n = n;
    if (n) LAB_CK(cudaMemcpy(s->d_in, in, n * sizeof(float), cudaMemcpyHostToDevice));
    return 0;
}

const char *cuda_describe(void *bs) { return ((cuda_state *)bs)->desc; }

int cuda_time_calls(void *bs, const lab_variant *v, uint64_t n, uint64_t reps, double *seconds, char *why)
{
    cuda_state *s = (cuda_state *)bs;
    double out[3];
    LAB_CK(cudaEventRecord(s->ev0, s->stream));
    for (uint64_t k = 0; k < reps; ++k)
        if (v->fn(bs, n, 0, out, nullptr, why)) return -1;
    LAB_CK(cudaEventRecord(s->ev1, s->stream));
    LAB_CK(cudaEventSynchronize(s->ev1));
    float ms = 0;
    LAB_CK(cudaEventElapsedTime(&ms, s->ev0, s->ev1));
    *seconds = ms * 1e-3 / (double)reps;
    return 0;
}

}  // namespace

extern "C" const lab_backend lab_cuda_backend = {
    "cuda", cuda_available, cuda_open, cuda_close, cuda_load, cuda_describe, cuda_time_calls,
    cuda_variants, sizeof cuda_variants / sizeof cuda_variants[0], nullptr,
};
