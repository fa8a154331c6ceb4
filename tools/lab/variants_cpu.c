/* The CPU variants of `tally bench`: the loops people write (scalar, naive f32, pairwise, SIMD,
 * threads + SIMD), the textbook scans (Hillis-Steele, Blelloch) written over a buffer, tally's
 * own paths, the memory ceilings, and one deliberately incorrect variant. */
#include "lab_internal.h"
#include "tally.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct cpu_state {
    int threads;
    lab_pool *pool;
    tally_context *ctx_mt, *ctx_1t, *ctx_scalar;
    char ctx_error[3][160];
    const float *in;
    uint64_t n;
    float *scratch;
    uint64_t scratch_cap;
    char description[256];
} cpu_state;

/* Below this many elements a pool dispatch costs more than it saves. */
#define LAB_PARALLEL_MIN 65536

/* ---- vector loops (GCC/Clang vector extensions; AVX2 / AVX-512 clones picked at run time) ---- */
typedef float v8f __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
typedef uint32_t v16u __attribute__((vector_size(64)));

/* Four vector accumulators, then the lanes in a fixed tree order, then the tail. */
#define LAB_READ_BODY(T, V)                                                                  \
    enum { LANES = sizeof(V) / sizeof(T) };                                                  \
    V a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                                                \
    uint64_t i = 0;                                                                          \
    for (; i + 4 * LANES <= n; i += 4 * LANES) {                                             \
        V b0, b1, b2, b3;                                                                    \
        memcpy(&b0, p + i, sizeof(V)); memcpy(&b1, p + i + LANES, sizeof(V));                \
        memcpy(&b2, p + i + 2 * LANES, sizeof(V)); memcpy(&b3, p + i + 3 * LANES, sizeof(V)); \
        a0 += b0; a1 += b1; a2 += b2; a3 += b3;                                              \
    }                                                                                        \
    V a = (a0 + a1) + (a2 + a3);                                                             \
    for (int w = LANES / 2; w >= 1; w /= 2)                                                  \
        for (int l = 0; l < w; ++l) a[l] += a[l + w];                                        \
    T s = a[0];                                                                              \
    for (; i < n; ++i) s += p[i];                                                            \
    return s;

static uint32_t read_u32_generic(const uint32_t *p, uint64_t n) { LAB_READ_BODY(uint32_t, v8u) }
static float sum_f32_generic(const float *p, uint64_t n) { LAB_READ_BODY(float, v8f) }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2"))) static uint32_t read_u32_avx2(const uint32_t *p, uint64_t n)
{ LAB_READ_BODY(uint32_t, v8u) }
__attribute__((target("avx2"))) static float sum_f32_avx2(const float *p, uint64_t n)
{ LAB_READ_BODY(float, v8f) }
__attribute__((target("avx512f"))) static uint32_t read_u32_avx512(const uint32_t *p, uint64_t n)
{ LAB_READ_BODY(uint32_t, v16u) }
static int cpu_level(void) /* 0 generic, 1 AVX2, 2 AVX-512 */
{
    static int cached = -1;
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return cached;
}
static uint32_t read_u32(const uint32_t *p, uint64_t n)
{
    int level = cpu_level();
    return level == 2 ? read_u32_avx512(p, n) : level == 1 ? read_u32_avx2(p, n) : read_u32_generic(p, n);
}
/* The float loop stays 8 lanes wide on every path, so its answer is the same everywhere. */
static float sum_f32_simd(const float *p, uint64_t n)
{
    return cpu_level() >= 1 ? sum_f32_avx2(p, n) : sum_f32_generic(p, n);
}
#else
static uint32_t read_u32(const uint32_t *p, uint64_t n) { return read_u32_generic(p, n); }
static float sum_f32_simd(const float *p, uint64_t n) { return sum_f32_generic(p, n); }
#endif

/* ---- parallel helpers ---------------------------------------------------------------------- */
typedef struct par_job {
    const float *in;
    float *a, *b;
    uint64_t n, d, limit;
    double part[256];
    uint32_t upart[256];
} par_job;

static void task_read(void *arg, int tid, int nt)
{
    par_job *j = arg;
    uint64_t b, e;
    lab_split(j->n, tid, nt, &b, &e);
    j->upart[tid] = read_u32((const uint32_t *)j->in + b, e - b);
}

static void task_copy(void *arg, int tid, int nt)
{
    par_job *j = arg;
    uint64_t b, e;
    lab_split(j->n, tid, nt, &b, &e);
    memcpy(j->a + b, j->in + b, (e - b) * sizeof(float));
}

static void task_sum_simd(void *arg, int tid, int nt)
{
    par_job *j = arg;
    uint64_t b, e;
    lab_split(j->n, tid, nt, &b, &e);
    j->part[tid] = sum_f32_simd(j->in + b, e - b);
}

static int pool_threads(cpu_state *s, uint64_t n)
{
    return n < LAB_PARALLEL_MIN ? 1 : lab_pool_size(s->pool);
}

static void run_par(cpu_state *s, uint64_t n, lab_task task, par_job *j)
{
    if (pool_threads(s, n) == 1) task(j, 0, 1);
    else lab_pool_run(s->pool, task, j);
}

/* ---- bounds (multiples of sum |x|) ---------------------------------------------------------- */
static unsigned ceil_log2(uint64_t v)
{
    unsigned k = 0;
    while (k < 64 && (UINT64_C(1) << k) < v) ++k;
    return k;
}
static double bound_seq_f64(uint64_t i, uint64_t n) { (void)n; return lab_gamma((double)i + 1, LAB_U64); }
static double bound_seq_f32(uint64_t i, uint64_t n) { (void)n; return lab_gamma((double)i + 2, LAB_U32); }
static double bound_pairwise(uint64_t i, uint64_t n) { (void)i; return lab_gamma(32.0 + ceil_log2(n + 1), LAB_U32); }
static double bound_simd_f32(uint64_t i, uint64_t n) { (void)i; return lab_gamma((double)(n / 32) + 48, LAB_U32); }
static double bound_hillis(uint64_t i, uint64_t n) { (void)n; return lab_gamma(ceil_log2(i + 1) + 1.0, LAB_U32); }
/* tally's scans are blocked (src/cpu/scan.c: blocks of 4096 today): element i is a chain of block
 * carries plus a chain inside its block. For any block size from 256 to 65536 that is at most
 * i / 256 + 65536 roundings; the any-order bound i + 1 is tighter below that. */
static double bound_tally_scan(uint64_t i, uint64_t n)
{
    double any = bound_seq_f32(i, n), blocked = lab_gamma((double)(i / 256) + 65538.0, LAB_U32);
    return any < blocked ? any : blocked;
}
static double bound_blelloch(uint64_t i, uint64_t n) { (void)i; return lab_gamma(2.0 * ceil_log2(n) + 4, LAB_U32); }

/* ---- reductions ---------------------------------------------------------------------------- */
static int v_scalar(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so; (void)why;
    const float *x = ((cpu_state *)st)->in;
    double s = 0.0;
    for (uint64_t i = 0; i < n; ++i) s += x[i];
    out[0] = s;
    return 0;
}

static int v_naive_f32(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so; (void)why;
    const float *x = ((cpu_state *)st)->in;
    float s = 0.0f;
    for (uint64_t i = 0; i < n; ++i) s += x[i];
    out[0] = s;
    return 0;
}

static int v_pairwise(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so; (void)why;
    out[0] = lab_pairwise_f32(((cpu_state *)st)->in, n);
    return 0;
}

static int v_simd_f32(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so; (void)why;
    out[0] = sum_f32_simd(((cpu_state *)st)->in, n);
    return 0;
}

static int v_threads_simd_f32(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so; (void)why;
    cpu_state *s = st;
    par_job j = { .in = s->in, .n = n };
    run_par(s, n, task_sum_simd, &j);
    float total = 0.0f;
    for (int t = 0; t < pool_threads(s, n); ++t) total += (float)j.part[t];
    out[0] = total;
    return 0;
}

/* Deliberately incorrect: the inner loop stops one short, so the last element of every block of
 * 1024 is dropped. It claims double accuracy, so validation must call it WRONG. */
static int v_off_by_one(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so; (void)why;
    const float *x = ((cpu_state *)st)->in;
    double total = 0.0;
    for (uint64_t b = 0; b < n; b += 1024) {
        uint64_t e = b + 1024 < n ? b + 1024 : n;
        double s = 0.0;
        for (uint64_t i = b; i < e - 1; ++i) s += x[i];  /* the bug: should be i < e */
        total += s;
    }
    out[0] = total;
    return 0;
}

static int tally_fail(cpu_state *s, tally_context *ctx, int which, tally_status st, char *why)
{
    if (!ctx) snprintf(why, LAB_WHY, "no context: %s", s->ctx_error[which]);
    else snprintf(why, LAB_WHY, "%s: %s", tally_status_name(st), tally_last_error(ctx));
    return -1;
}

static int tally_sum(cpu_state *s, tally_context *ctx, int which, uint64_t n, double out[3], char *why)
{
    if (!ctx) return tally_fail(s, ctx, which, TALLY_OK, why);
    tally_result r;
    tally_status st = tally_reduce(ctx, TALLY_SUM, TALLY_F32, s->in, n, NULL, &r);
    if (st != TALLY_OK) return tally_fail(s, ctx, which, st, why);
    out[0] = r.value.f64;
    return 0;
}

static int v_tally_mt(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{ (void)check; (void)so; cpu_state *s = st; return tally_sum(s, s->ctx_mt, 0, n, out, why); }
static int v_tally_1t(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{ (void)check; (void)so; cpu_state *s = st; return tally_sum(s, s->ctx_1t, 1, n, out, why); }
static int v_tally_scalar(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{ (void)check; (void)so; cpu_state *s = st; return tally_sum(s, s->ctx_scalar, 2, n, out, why); }

static int v_tally_smm(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so;
    cpu_state *s = st;
    if (!s->ctx_mt) return tally_fail(s, NULL, 0, TALLY_OK, why);
    static const tally_op ops[3] = { TALLY_SUM, TALLY_MIN, TALLY_MAX };
    tally_result r[3];
    tally_status stt = tally_reduce_many(s->ctx_mt, TALLY_F32, s->in, n, ops, 3, NULL, r);
    if (stt != TALLY_OK && !(n == 0 && stt == TALLY_ERR_EMPTY))
        return tally_fail(s, s->ctx_mt, 0, stt, why);
    for (int k = 0; k < 3; ++k) out[k] = r[k].status == TALLY_OK ? r[k].value.f64 : NAN;
    return 0;
}

/* ---- ceilings ------------------------------------------------------------------------------ */
static int v_read_ceiling(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so; (void)why;
    cpu_state *s = st;
    par_job j = { .in = s->in, .n = n };
    run_par(s, n, task_read, &j);
    uint32_t t = 0;
    for (int k = 0; k < pool_threads(s, n); ++k) t += j.upart[k];
    out[0] = t; /* used, so the loop is not optimised away */
    return 0;
}

static int v_read_ceiling_1t(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so; (void)why;
    out[0] = read_u32((const uint32_t *)((cpu_state *)st)->in, n);
    return 0;
}

static int v_copy_ceiling_1t(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)out; (void)why;
    memcpy(so, ((cpu_state *)st)->in, n * sizeof(float));
    return 0;
}

static int v_copy_ceiling(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)out; (void)why;
    cpu_state *s = st;
    par_job j = { .in = s->in, .a = so, .n = n };
    run_par(s, n, task_copy, &j);
    return 0;
}

/* ---- scans --------------------------------------------------------------------------------- */
static int v_seq_scan(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)out; (void)why;
    const float *x = ((cpu_state *)st)->in;
    float s = 0.0f;
    for (uint64_t i = 0; i < n; ++i) { s += x[i]; so[i] = s; }
    return 0;
}

static void task_hillis_step(void *arg, int tid, int nt)
{
    par_job *j = arg;  /* one step: b[i] = a[i] + a[i - d] (a is read only, b written) */
    uint64_t b, e;
    lab_split(j->n, tid, nt, &b, &e);
    const float *src = j->in;
    float *dst = j->b;
    uint64_t d = j->d;
    uint64_t split = d < b ? b : (d > e ? e : d); /* below d there is nothing to the left */
    for (uint64_t i = b; i < split; ++i) dst[i] = src[i];
    for (uint64_t i = split; i < e; ++i) dst[i] = src[i] + src[i - d];
}

static int ensure_scratch(cpu_state *s, uint64_t need, char *why)
{
    if (s->scratch_cap >= need) return 0;
    free(s->scratch);
    s->scratch = aligned_alloc(64, ((need * sizeof(float)) + 63) & ~(size_t)63);
    s->scratch_cap = s->scratch ? need : 0;
    if (!s->scratch) { snprintf(why, LAB_WHY, "out of memory for a %llu-element scratch buffer", (unsigned long long)need); return -1; }
    return 0;
}

/* Hillis and Steele (1986): log2(n) steps; at step d every element adds the one d places to its
 * left. Two buffers, because everyone must read before anyone overwrites. */
static int v_hillis_steele(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)out;
    cpu_state *s = st;
    if (n == 0) return 0;
    if (ensure_scratch(s, n, why)) return -1;
    unsigned steps = ceil_log2(n);
    if (steps == 0) { so[0] = s->in[0]; return 0; }
    float *x = (steps & 1) ? so : s->scratch, *y = (steps & 1) ? s->scratch : so;
    par_job j = { .in = s->in, .b = x, .n = n, .d = 1 };
    for (unsigned k = 0; k < steps; ++k) {
        run_par(s, n, task_hillis_step, &j);
        j.in = j.b;
        j.b = (j.b == x) ? y : x;
        j.d <<= 1;
    }
    return 0;
}

static void task_upsweep(void *arg, int tid, int nt)
{
    par_job *j = arg;  /* pairs k: a[2d(k+1)-1] += a[2d(k+1)-1-d] */
    uint64_t b, e, d = j->d, count = j->n;
    lab_split(count, tid, nt, &b, &e);
    float *a = j->a;
    for (uint64_t k = b; k < e; ++k) { uint64_t i = 2 * d * (k + 1) - 1; a[i] += a[i - d]; }
}

static void task_downsweep(void *arg, int tid, int nt)
{
    par_job *j = arg;
    uint64_t b, e, d = j->d, count = j->n;
    lab_split(count, tid, nt, &b, &e);
    float *a = j->a;
    for (uint64_t k = b; k < e; ++k) {
        uint64_t i = 2 * d * (k + 1) - 1;
        float t = a[i - d];
        a[i - d] = a[i];
        a[i] += t;
    }
}

static void task_blelloch_io(void *arg, int tid, int nt)
{
    par_job *j = arg;  /* d == 0: copy in and pad; d == 1: out = exclusive + in */
    uint64_t b, e;
    lab_split(j->n, tid, nt, &b, &e);
    if (j->d == 0) {
        for (uint64_t i = b; i < e; ++i) j->a[i] = i < j->limit ? j->in[i] : 0.0f;
    } else {
        for (uint64_t i = b; i < e; ++i) j->b[i] = j->a[i] + j->in[i];
    }
}

/* Blelloch (1990): an up-sweep builds a tree of partial sums in place, the root is cleared, and a
 * down-sweep pushes prefixes back down: about 2n additions in 2 log2(n) steps. The buffer is
 * padded with zeros to a power of two; the exclusive result plus the input gives the inclusive. */
static int v_blelloch(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)out;
    cpu_state *s = st;
    if (n == 0) return 0;
    uint64_t m = UINT64_C(1) << ceil_log2(n);
    if (ensure_scratch(s, m, why)) return -1;
    float *a = s->scratch;
    par_job io = { .in = s->in, .a = a, .n = m, .d = 0, .limit = n }; /* copy, pad with zeros */
    run_par(s, m, task_blelloch_io, &io);
    par_job j = { .a = a };
    for (uint64_t d = 1; d < m; d <<= 1) {
        j.d = d;
        j.n = m / (2 * d);
        run_par(s, j.n * 16, task_upsweep, &j);
    }
    a[m - 1] = 0.0f;
    for (uint64_t d = m / 2; d >= 1; d >>= 1) {
        j.d = d;
        j.n = m / (2 * d);
        run_par(s, j.n * 16, task_downsweep, &j);
    }
    par_job fin = { .in = s->in, .a = a, .b = so, .n = n, .d = 1 };
    run_par(s, n, task_blelloch_io, &fin);
    return 0;
}

static int tally_scan_with(cpu_state *s, tally_context *ctx, int which, uint64_t n, float *so, char *why)
{
    if (!ctx) return tally_fail(s, ctx, which, TALLY_OK, why);
    tally_status st = tally_scan(ctx, TALLY_SUM, TALLY_F32, s->in, so, n, NULL);
    if (st != TALLY_OK) return tally_fail(s, ctx, which, st, why);
    return 0;
}
static int v_tally_scan_mt(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{ (void)check; (void)out; cpu_state *s = st; return tally_scan_with(s, s->ctx_mt, 0, n, so, why); }
static int v_tally_scan_1t(void *st, uint64_t n, int check, double out[3], float *so, char *why)
{ (void)check; (void)out; cpu_state *s = st; return tally_scan_with(s, s->ctx_1t, 1, n, so, why); }

/* ---- the table ------------------------------------------------------------------------------ */
static const lab_variant cpu_variants[] = {
    { "read-ceiling-1t", LAB_CEIL_READ, LAB_CHECK_NONE,
      "read ceiling of one core: u32 vector adds, 4 accumulators (AVX-512 where present)", v_read_ceiling_1t, NULL, 0, 0 },
    { "read-ceiling", LAB_CEIL_READ, LAB_CHECK_NONE,
      "read ceiling: the same loop on all threads; % ceil is against the better of the two", v_read_ceiling, NULL, 0, 0 },
    { "scalar-f64", LAB_REDUCE, LAB_CHECK_BOUND,
      "one thread, one double accumulator, in order", v_scalar, bound_seq_f64, 0, 0 },
    { "naive-f32", LAB_REDUCE, LAB_CHECK_BOUND,
      "one thread, a float32 running total (seed 001's naive shader)", v_naive_f32, bound_seq_f32, 0, 0 },
    { "pairwise-f32", LAB_REDUCE, LAB_CHECK_BOUND,
      "NumPy-style pairwise: blocks of 128 with 8 accumulators, halves recursively", v_pairwise, bound_pairwise, 0, 0 },
    { "simd-f32", LAB_REDUCE, LAB_CHECK_BOUND,
      "one thread, 4 x 8 float32 vector accumulators (what -ffast-math gives)", v_simd_f32, bound_simd_f32, 0, 0 },
    { "threads-simd-f32", LAB_REDUCE, LAB_CHECK_BOUND,
      "all threads, each with 4 x 8 float32 vector accumulators", v_threads_simd_f32, bound_simd_f32, 0, 0 },
    { "tally-scalar-1t", LAB_REDUCE, LAB_CHECK_EXACT,
      "tally_reduce sum, 1 thread, scalar path: correctly rounded", v_tally_scalar, NULL, 0, 0 },
    { "tally-simd-1t", LAB_REDUCE, LAB_CHECK_EXACT,
      "tally_reduce sum, 1 thread, best SIMD path: correctly rounded", v_tally_1t, NULL, 0, 0 },
    { "tally", LAB_REDUCE, LAB_CHECK_EXACT,
      "tally_reduce sum, all threads + SIMD: correctly rounded (exact)", v_tally_mt, NULL, 0, 0 },
    { "tally-sum-min-max", LAB_REDUCE_SMM, LAB_CHECK_EXACT,
      "tally_reduce_many sum,min,max fused in one pass (seed 000), all threads", v_tally_smm, NULL, 0, 0 },
    { "off-by-one", LAB_REDUCE, LAB_CHECK_BOUND,
      "deliberately incorrect: drops the last element of each block of 1024", v_off_by_one, bound_seq_f64, 1, 0 },
    { "copy-ceiling-1t", LAB_CEIL_COPY, LAB_CHECK_NONE,
      "copy ceiling of one core: memcpy (reads n, writes n)", v_copy_ceiling_1t, NULL, 0, 0 },
    { "copy-ceiling", LAB_CEIL_COPY, LAB_CHECK_NONE,
      "copy ceiling: memcpy on all threads; % ceil is against the better of the two", v_copy_ceiling, NULL, 0, 0 },
    { "seq-scan-f32", LAB_SCAN, LAB_CHECK_BOUND,
      "one thread, float32 running total written at every index", v_seq_scan, bound_seq_f32, 0, 0 },
    { "hillis-steele", LAB_SCAN, LAB_CHECK_BOUND,
      "Hillis-Steele: log2 n parallel steps over two buffers, ~n log2 n adds", v_hillis_steele, bound_hillis, 0,
      UINT64_C(1) << 27 },
    { "blelloch", LAB_SCAN, LAB_CHECK_BOUND,
      "Blelloch: up-sweep + down-sweep in place on a power-of-two buffer, ~2n adds", v_blelloch, bound_blelloch, 0,
      UINT64_C(1) << 29 },
    { "tally-scan-1t", LAB_SCAN, LAB_CHECK_BOUND,
      "tally_scan inclusive sum, 1 thread", v_tally_scan_1t, bound_tally_scan, 0, 0 },
    { "tally-scan", LAB_SCAN, LAB_CHECK_BOUND,
      "tally_scan inclusive sum, all threads", v_tally_scan_mt, bound_tally_scan, 0, 0 },
};

/* ---- backend hooks ------------------------------------------------------------------------- */
static int cpu_available(void) { return 1; }

static tally_context *make_ctx(int threads, tally_isa isa, char *err, size_t errsize)
{
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    o.threads = threads;
    o.isa = isa;
    tally_context *ctx = NULL;
    tally_status st = tally_create(&ctx, &o);
    if (st != TALLY_OK) {
        const char *detail = tally_create_error();
        snprintf(err, errsize, "%s%s%s", tally_status_name(st), detail && *detail ? ": " : "",
                 detail ? detail : "");
        return NULL;
    }
    return ctx;
}

static void cpu_close(void *bstate)
{
    cpu_state *s = bstate;
    if (!s) return;
    tally_destroy(s->ctx_mt);
    tally_destroy(s->ctx_1t);
    tally_destroy(s->ctx_scalar);
    lab_pool_destroy(s->pool);
    free(s->scratch);
    free(s);
}

static void cpu_model(char *buf, size_t size)
{
    snprintf(buf, size, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c += 1 + strspn(c + 1, " \t");
                c[strcspn(c, "\n")] = '\0';
                snprintf(buf, size, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

static int cpu_open(void **bstate, int threads, uint64_t max_n, char *why)
{
    (void)max_n;
    cpu_state *s = calloc(1, sizeof *s);
    if (!s) { snprintf(why, LAB_WHY, "out of memory"); return -1; }
    s->threads = threads > 0 ? threads : lab_online_cpus();
    if (s->threads > 256) s->threads = 256;
    s->pool = lab_pool_create(s->threads);
    if (!s->pool) { free(s); snprintf(why, LAB_WHY, "cannot start threads"); return -1; }
    s->ctx_mt = make_ctx(threads, TALLY_ISA_AUTO, s->ctx_error[0], sizeof s->ctx_error[0]);
    s->ctx_1t = make_ctx(1, TALLY_ISA_AUTO, s->ctx_error[1], sizeof s->ctx_error[1]);
    s->ctx_scalar = make_ctx(1, TALLY_ISA_SCALAR, s->ctx_error[2], sizeof s->ctx_error[2]);
    char model[160];
    cpu_model(model, sizeof model);
    snprintf(s->description, sizeof s->description, "%s, %d threads, tally %s path%s", model,
             s->ctx_mt ? tally_thread_count(s->ctx_mt) : s->threads,
             s->ctx_1t ? tally_isa_name(tally_active_isa(s->ctx_1t)) : "?",
             s->ctx_mt ? "" : " (tally context failed)");
    *bstate = s;
    return 0;
}

static int cpu_load(void *bstate, const float *in, uint64_t n, char *why)
{
    (void)why;
    cpu_state *s = bstate;
    s->in = in;
    s->n = n;
    return 0;
}

static const char *cpu_describe(void *bstate) { return ((cpu_state *)bstate)->description; }

const lab_backend lab_cpu_backend = {
    "cpu", cpu_available, cpu_open, cpu_close, cpu_load, cpu_describe, NULL,
    cpu_variants, sizeof cpu_variants / sizeof cpu_variants[0], NULL,
};
