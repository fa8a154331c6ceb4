/* What the reduce probes share: the device scratch a reduce launch needs, laid out as the backend
 * lays it out (cuda_backend.cu: cuda_init, enqueue_reduce), and the launch parameters that stay
 * the same from launch to launch. Include after cuda/reduce_kernel.cuh and probe_graph.cuh. */
#ifndef TALLY_PROBE_REDUCE_CUH
#define TALLY_PROBE_REDUCE_CUH

#include <cstring>

struct ReduceScratch {
    void *partials;      /* TCU_MAX_BLOCKS * TCU_PARTIAL_BYTES */
    long long *xpartials; /* TCU_MAX_BLOCKS * TALLY_EXACT_CHUNKS */
    unsigned *counter;   /* the ticket; 8 bytes in the packed sum (0), at 16 the max word (0), at
                            24 the min word (~0) */
    tally_result *out;   /* 4 results */
};

static cudaError_t reduce_scratch(ReduceScratch *r)
{
    cudaError_t e;
    if ((e = cudaMalloc(&r->partials, (size_t)TCU_MAX_BLOCKS * TCU_PARTIAL_BYTES)) != cudaSuccess) return e;
    if ((e = cudaMalloc(&r->xpartials, (size_t)TCU_MAX_BLOCKS * TALLY_EXACT_CHUNKS * sizeof(long long))) != cudaSuccess)
        return e;
    if ((e = cudaMalloc(&r->counter, 32)) != cudaSuccess) return e;
    if ((e = cudaMemset(r->counter, 0, 24)) != cudaSuccess) return e;
    if ((e = cudaMemset((char *)r->counter + 24, 0xff, 8)) != cudaSuccess) return e;
    return cudaMalloc(&r->out, sizeof(tally_result) * 4);
}

/* One op over n elements whose body is body_vec 16-byte vectors (no head or tail), with PDL;
 * the caller sets data (and may change the rest) per launch. */
static tcu_reduce_params reduce_params(const ReduceScratch &r, unsigned long long n, unsigned long long body_vec,
                                       tally_op op)
{
    tcu_reduce_params p;
    memset(&p, 0, sizeof p);
    p.n = n;
    p.body_vec = body_vec;
    p.partials = r.partials;
    p.xpartials = r.xpartials;
    p.counter = r.counter;
    p.acc = (unsigned long long *)((char *)r.counter + 8);
    p.kmax_word = (unsigned long long *)((char *)r.counter + 16);
    p.kmin_word = (unsigned long long *)((char *)r.counter + 24);
    p.out = r.out;
    p.nops = 1;
    p.ops[0] = op;
    p.pdl = 1;
    return p;
}

#endif
