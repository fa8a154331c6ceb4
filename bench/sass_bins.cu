/* The f64 bins' inner loops alone, for counting instructions per value (bench/sass_bins.sh):
 * digits (tbins_add_f64, REDUCE_BINS=1), windows (tbins_f64w_off256 + tbins_add_f64w_at, =2) and
 * register windows (tbins_rw_add, =3, the default), each over one batch of 16 values per thread
 * as bins_batch_out or Worker::rw_batch runs it (8 vectors of two doubles loaded first; the range
 * checks once per batch). Never launched. */
#include "cuda/exact_bins.h"

extern __shared__ __align__(16) unsigned char sass_smem[];
struct SassV2 { double v[2]; };

__global__ void __launch_bounds__(256, 1) bins_digits(const SassV2 *in, int nb, long long *out)
{
    int64_t *col = (int64_t *)sass_smem + threadIdx.x;
    for (int b = 0; b < nb; b++) {
        SassV2 x[8];
#pragma unroll
        for (int u = 0; u < 8; u++) x[u] = in[b * 2048 + u * 256 + threadIdx.x];
#pragma unroll
        for (int u = 0; u < 8; u++)
#pragma unroll
            for (int k = 0; k < 2; k++) tbins_add_f64(col, 256, (uint64_t)__double_as_longlong(x[u].v[k]));
    }
    out[threadIdx.x] = col[0];
}

__global__ void __launch_bounds__(256, 1) bins_windows(const SassV2 *in, int nb, long long *out, uint32_t base_off)
{
    char *cb = (char *)((int64_t *)sass_smem + threadIdx.x);
    int strays = 0;
    for (int b = 0; b < nb; b++) {
        SassV2 x[8];
#pragma unroll
        for (int u = 0; u < 8; u++) x[u] = in[b * 2048 + u * 256 + threadIdx.x];
        uint32_t rel[8][2], relmax = 0;
#pragma unroll
        for (int u = 0; u < 8; u++)
#pragma unroll
            for (int k = 0; k < 2; k++) {
                rel[u][k] = tbins_f64w_off256((uint32_t)__double2hiint(x[u].v[k])) - base_off;
                relmax = max(relmax, rel[u][k]);
            }
        if (relmax < (uint32_t)TBINS_F64W_WINDOWS * 2048u) {
#pragma unroll
            for (int u = 0; u < 8; u++)
#pragma unroll
                for (int k = 0; k < 2; k++)
                    tbins_add_f64w_at(cb, rel[u][k], (uint32_t)TBINS_F64W_WINDOWS * 2048u,
                                      (uint32_t)__double2hiint(x[u].v[k]), (uint32_t)__double2loint(x[u].v[k]));
        } else {
            strays++;
        }
    }
    out[threadIdx.x] = *(long long *)cb + strays;
}

__global__ void __launch_bounds__(256, 1) bins_regw(const SassV2 *in, int nb, double *out, uint32_t f)
{
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    const double s0 = __longlong_as_double((long long)tbins_rw_sigma_bits(f, 0));
    const double s1 = __longlong_as_double((long long)tbins_rw_sigma_bits(f, 1));
    const double s2 = __longlong_as_double((long long)tbins_rw_sigma_bits(f, 2));
    int strays = 0;
    for (int b = 0; b < nb; b++) {
        SassV2 x[8];
#pragma unroll
        for (int u = 0; u < 8; u++) x[u] = in[b * 2048 + u * 256 + threadIdx.x];
        uint32_t amin = 0xffffffffu, amax = 0u;
#pragma unroll
        for (int u = 0; u < 8; u++)
#pragma unroll
            for (int k = 0; k < 2; k++) {
                const uint32_t a = (uint32_t)__double2hiint(x[u].v[k]) & 0x7fffffffu;
                amin = min(amin, a);
                amax = max(amax, a);
            }
        if (tbins_rw_accepts(f, amin, amax)) {
#pragma unroll
            for (int u = 0; u < 8; u++)
#pragma unroll
                for (int k = 0; k < 2; k++) tbins_rw_add(&a0, &a1, &a2, &a3, s0, s1, s2, x[u].v[k]);
        } else {
            strays++;
        }
    }
    out[threadIdx.x] = a0 + a1 + a2 + a3 + strays;
}
