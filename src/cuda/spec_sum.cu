/* The speculative f32/f64 sum's launcher (spec_sum.cuh), its own translation unit. */
#include <cstdlib>
#include <cstring>
#include "cuda/spec_sum.cuh"

/* The kernel's shape: U 16-byte loads in flight per thread, NT triples per thread (spec_sum.cuh,
 * spec_min_blocks), C: each block's vectors in one contiguous share instead of grid-stride.
 * The default is U = 4, NT = 2, grid-stride (on the H200 2-6% faster than U = 2 at 2^28, f32
 * and f64). A tuning build reads TALLY_CUDA_SPEC_UNROLL at every call, so that the benchmark and
 * the tests can set it between calls: "U" (two triples) or "UxNT", U one of 2, 4, 8 and NT one
 * of 1, 2 (e.g. "8x1": eight loads, one triple, as Vulkan's spec.comp), with a "c" after it for
 * the contiguous shares ("4c", "8x1c"; U of 4 or 8); anything else is the default. */
struct SpecShape {
    int u, nt;
    bool c;
};
/* the default shape (one of the instances below) */
constexpr int kSpecU = 4, kSpecNT = 2;
constexpr bool kSpecC = false;

static SpecShape spec_shape(void)
{
    SpecShape sh = {kSpecU, kSpecNT, kSpecC};
#ifdef TALLY_TUNING
    const char *e = getenv("TALLY_CUDA_SPEC_UNROLL");
    if (e && *e) {
        const int u = atoi(e);
        const char *x = strchr(e, 'x');
        const int nt = x ? atoi(x + 1) : 2;
        const bool c = strchr(e, 'c') != nullptr;
        if ((u == 2 || u == 4 || u == 8) && (nt == 1 || nt == 2) && !(c && u == 2)) sh = {u, nt, c};
    }
#endif
    return sh;
}

/* The ring (spec_sum.cuh, spec_ring_kernel) for large inputs, from TALLY_CUDA_SPEC_RING (read
 * once, every build): 1 (the default) one block per SM with six 32 KB stages, 2 two blocks per SM
 * with three, 0 off (the register loads); from TALLY_CUDA_SPEC_RING_MIN batches of 32 KB (default
 * 1024, i.e. 32 MiB, as the reduce's ring; the tests set 1 so that their sizes take it). On the
 * H200 at 2^28 it took f64 wide-range data from 520 to 463 µs (CUB's rounding sum: 467) and f32
 * from 257 to 238 (docs/performance.md, "CUDA: the speculative pass through a ring"). */
constexpr int kSpecRingDefault = 1;
struct SpecRing {
    int per_sm, stages;
    unsigned long long min_batches;
};
static SpecRing spec_ring(void)
{
    static const SpecRing r = [] {
        const char *e = getenv("TALLY_CUDA_SPEC_RING"), *m = getenv("TALLY_CUDA_SPEC_RING_MIN");
        const int mode = e && *e ? atoi(e) : kSpecRingDefault;
        const long long mb = m && *m ? atoll(m) : 1024;
        SpecRing x = {0, 0, mb > 0 ? (unsigned long long)mb : 1ull};
        if (mode == 1) x.per_sm = 1, x.stages = 6;
        if (mode == 2) x.per_sm = 2, x.stages = 3;
        return x;
    }();
    return r;
}

template <typename T>
static cudaError_t launch_spec(const tcu_reduce_params *p, const tcu_device *dev, cudaStream_t stream)
{
    const SpecRing r = spec_ring();
    const unsigned long long kRingBatch = (unsigned long long)tcu::kThreads * tcu::kRingU;
    if (r.per_sm > 0 && p->body_vec >= r.min_batches * kRingBatch) {
        bool launched = false;
        const cudaError_t e = tcu::launch_spec_ring_t<T>(p, dev, stream, r.per_sm, r.stages, &launched);
        if (launched || e != cudaSuccess) return e;
    }
#ifdef TALLY_TUNING
    const SpecShape sh = spec_shape();
    if (sh.c) {
        if (sh.u == 8) return sh.nt == 1 ? tcu::launch_spec_sum_t<T, 8, 1, true>(p, dev, stream)
                                         : tcu::launch_spec_sum_t<T, 8, 2, true>(p, dev, stream);
        return sh.nt == 1 ? tcu::launch_spec_sum_t<T, 4, 1, true>(p, dev, stream)
                          : tcu::launch_spec_sum_t<T, 4, 2, true>(p, dev, stream);
    }
    if (sh.nt == 1) {
        if (sh.u == 8) return tcu::launch_spec_sum_t<T, 8, 1, false>(p, dev, stream);
        if (sh.u == 4) return tcu::launch_spec_sum_t<T, 4, 1, false>(p, dev, stream);
        return tcu::launch_spec_sum_t<T, 2, 1, false>(p, dev, stream);
    }
    if (sh.u == 8) return tcu::launch_spec_sum_t<T, 8, 2, false>(p, dev, stream);
    if (sh.u == 2) return tcu::launch_spec_sum_t<T, 2, 2, false>(p, dev, stream);
#endif
    (void)spec_shape;
    return tcu::launch_spec_sum_t<T, kSpecU, kSpecNT, kSpecC>(p, dev, stream);
}

cudaError_t tcu_launch_spec_sum(tally_type type, const tcu_reduce_params *p, const tcu_device *dev,
                                cudaStream_t stream)
{
    switch (type) {
    case TALLY_F32: return launch_spec<float>(p, dev, stream);
    case TALLY_F64: return launch_spec<double>(p, dev, stream);
    default: return cudaErrorInvalidValue;
    }
}
