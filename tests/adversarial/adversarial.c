/* tally_adversarial: the adversarial differential harness.
 *
 * Draws arrays from the families of families.h (each a function of the run's seed and its
 * index), computes every reduction's result with the independent exact reference
 * (tests/support/exact_reference.h: big fixed-point integers, no code shared with the library),
 * and checks every backend built here against it bit for bit: the CPU backend (default context,
 * and a random ISA path x thread count per array), the CUDA backend (device pointers, host
 * pointers, the asynchronous entry point) when a GPU is there, through tally_reduce,
 * tally_reduce_many (fused sets, the variance's two passes) and streams of random chunks.
 * Since every backend is held to the same exact answer, they are also checked against each other.
 *
 *   tally_adversarial [--seed S] [--arrays N] [--seconds T] [--max-n N] [--backends cpu,cuda,vulkan]
 *                     [--families a,b] [--types f32,f64,..] [--only I] [--shard K/N]
 *                     [--emit-python N]
 *
 * It prints the seed first; a failure prints its array's index and the command that reruns that
 * array alone (--seed S --only I). The last line is "adversarial: P passed, F failed" (arrays);
 * the exit status is 1 when anything failed, 77 when a backend asked for is not there. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tally.h"
#include "families.h"
#include "adv_cuda.h"
#include "../support/exact_reference.h"

enum mem_kind { MEM_HOST, MEM_DEVICE, MEM_ASYNC };

typedef struct runner {
    char name[40];
    tally_context *ctx;
    int cuda;          /* a CUDA context */
    enum mem_kind mem; /* how the array reaches it */
    int sampled;       /* 1: one of the sampled runners (one of them per array), 0: every array */
    uint64_t arrays, checks, fails;
} runner;

#define MAX_RUNNERS 16
static runner runners[MAX_RUNNERS];
static int nrunners;

static struct {
    uint64_t seed;
    uint64_t arrays;
    double seconds;
    int only_set;
    uint64_t only;
    int want_cpu, want_cuda, want_vulkan;
    int verbose;
    uint64_t emit_python;
    uint64_t shard, shards; /* this process takes the indices equal to shard mod shards */
    adv_limits lim;
} opt;

static uint64_t family_arrays[ADV_FAMILY_COUNT], family_fails[ADV_FAMILY_COUNT];

/* The current array's reference results, computed once per op. */
static tally_result ref_cache[TALLY_OP_COUNT];
static int ref_known[TALLY_OP_COUNT];
static const tally_result *reference(const adv_case *c, tally_op op)
{
    if (!ref_known[op]) {
        ref_reduce(c->type, adv_case_array(c), c->n, op, c->omit_nan, c->ddof, &ref_cache[op]);
        ref_known[op] = 1;
    }
    return &ref_cache[op];
}
static uint64_t printed_failures;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tally_adversarial [--seed S] [--arrays N] [--seconds T] [--max-n N]\n"
            "                         [--backends cpu,cuda,vulkan] [--families NAME,..] [--types T,..]\n"
            "                         [--only I] [--shard K/N] [--verbose] [--emit-python N]\n");
}

static uint64_t parse_u64(const char *opt_name, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end) {
        fprintf(stderr, "tally_adversarial: %s: not a number: '%s'\n", opt_name, s);
        usage(stderr);
        exit(2);
    }
    return v;
}

static uint32_t parse_set(const char *opt_name, const char *list, int count, const char *(*name)(int))
{
    uint32_t set = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int found = -1;
        for (int i = 0; i < count; i++)
            if (name(i) && strcmp(name(i), tok) == 0) found = i;
        if (found < 0) {
            fprintf(stderr, "tally_adversarial: %s: unknown name '%s'; one of:", opt_name, tok);
            for (int i = 0; i < count; i++)
                if (name(i)) fprintf(stderr, " %s", name(i));
            fprintf(stderr, "\n");
            exit(2);
        }
        set |= 1u << found;
    }
    return set;
}
static const char *family_name_i(int i) { return adv_family_name((adv_family)i); }
static const char *type_name_i(int i) { return tally_type_name((tally_type)i); }

/* ---- runners ------------------------------------------------------------------------------- */
static void add_runner(const char *name, tally_context *ctx, int cuda, enum mem_kind mem, int sampled)
{
    runner *r = &runners[nrunners++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->ctx = ctx;
    r->cuda = cuda;
    r->mem = mem;
    r->sampled = sampled;
}

static int open_runners(void)
{
    tally_options o;
    if (opt.want_cpu) {
        tally_context *ctx;
        tally_options_init(&o);
        o.backend = TALLY_BACKEND_CPU;
        if (tally_create(&ctx, &o) != TALLY_OK) {
            fprintf(stderr, "tally_adversarial: CPU context: %s\n", tally_create_error());
            return -1;
        }
        add_runner("cpu", ctx, 0, MEM_HOST, 0);
        static const int threads[] = {1, 2, 3};
        for (int isa = TALLY_ISA_SCALAR; isa <= (int)tally_cpu_best_isa(); isa++)
            for (int k = 0; k < 3 && nrunners < MAX_RUNNERS - 3; k++) {
                tally_options_init(&o);
                o.backend = TALLY_BACKEND_CPU;
                o.isa = (tally_isa)isa;
                o.threads = threads[k];
                if (tally_create(&ctx, &o) != TALLY_OK) continue;
                char name[40];
                snprintf(name, sizeof name, "cpu/%s/t%d", tally_isa_name((tally_isa)isa), threads[k]);
                add_runner(name, ctx, 0, MEM_HOST, 1);
            }
    }
    if (opt.want_cuda) {
        tally_context *ctx;
        tally_options_init(&o);
        o.backend = TALLY_BACKEND_CUDA;
        tally_status s = tally_create(&ctx, &o);
        if (s != TALLY_OK || !adv_cuda_built()) {
            printf("tally_adversarial: the CUDA backend is not usable here (%s): CUDA skipped\n",
                   s != TALLY_OK ? tally_create_error() : "built without the harness's CUDA side");
            if (s == TALLY_OK) tally_destroy(ctx);
            if (!opt.want_cpu) return 77;
        } else {
            add_runner("cuda/device", ctx, 1, MEM_DEVICE, 0);
            add_runner("cuda/async", ctx, 1, MEM_ASYNC, 0);
            add_runner("cuda/host", ctx, 1, MEM_HOST, 0);
        }
    }
    if (opt.want_vulkan) {
        tally_context *ctx;
        tally_options_init(&o);
        o.backend = TALLY_BACKEND_VULKAN;
        if (tally_create(&ctx, &o) != TALLY_OK) {
            printf("tally_adversarial: the Vulkan backend is not usable here (%s): Vulkan skipped\n",
                   tally_create_error());
            if (!opt.want_cpu && !opt.want_cuda) return 77;
        } else {
            add_runner("vulkan/host", ctx, 0, MEM_HOST, 0);
        }
    }
    return nrunners ? 0 : 77;
}

/* ---- the checks ------------------------------------------------------------------------------ */
static const tally_op float_many[] = {TALLY_SUM, TALLY_MIN, TALLY_MAX, TALLY_ARGMIN,
                                      TALLY_ARGMAX, TALLY_MEAN, TALLY_COUNT};
static const tally_op int_many[] = {TALLY_SUM, TALLY_PROD, TALLY_MIN, TALLY_MAX, TALLY_AND,
                                    TALLY_OR, TALLY_XOR, TALLY_ARGMIN, TALLY_ARGMAX, TALLY_MEAN,
                                    TALLY_COUNT};
static const tally_op var_set[] = {TALLY_SUM, TALLY_MEAN, TALLY_VAR};

static void describe_case(char *buf, size_t len, uint64_t index, const adv_case *c)
{
    snprintf(buf, len, "#%" PRIu64 " %s %s n=%" PRIu64 " offset=%u omit_nan=%d ddof=%d", index,
             adv_family_name(c->family), tally_type_name(c->type), c->n, c->offset, c->omit_nan,
             c->ddof);
}

/* Compares got[i] with the reference for ops[i]; returns the number of mismatches. */
static int compare(runner *r, const char *call, uint64_t index, const adv_case *c,
                   const tally_op *ops, size_t nops, const tally_result *got,
                   const tally_reduce_options *ro)
{
    int bad = 0;
    for (size_t i = 0; i < nops; i++) {
        (void)ro;
        const tally_result want = *reference(c, ops[i]);
        r->checks++;
        if (result_matches(&got[i], &want)) {
            if (opt.verbose) {
                char w[128];
                describe_result(w, sizeof w, &want);
                printf("  ok   %-12s %-14s %-7s %s\n", r->name, call, tally_op_name(ops[i]), w);
            }
            continue;
        }
        bad++;
        r->fails++;
        if (printed_failures++ < 40 || opt.verbose) {
            char d[160], g[128], w[128];
            describe_case(d, sizeof d, index, c);
            describe_result(g, sizeof g, &got[i]);
            describe_result(w, sizeof w, &want);
            printf("FAIL %s: %s %s %s: got %s, want %s\n", d, r->name, call, tally_op_name(ops[i]), g, w);
        }
    }
    return bad;
}

/* One runner over one array: reduce, the fused set, the variance, a stream of chunks. Returns
 * the number of mismatches. */
static int run_one(runner *r, uint64_t index, const adv_case *c, adv_rng *rng)
{
    const int fl = c->type == TALLY_F32 || c->type == TALLY_F64;
    const tally_op *many = fl ? float_many : int_many;
    const size_t nmany = fl ? sizeof float_many / sizeof *float_many : sizeof int_many / sizeof *int_many;
    const size_t es = tally_type_size(c->type);
    tally_reduce_options ro = {c->omit_nan, c->ddof};
    tally_result res[16];
    int bad = 0;

    const void *data = adv_case_array(c);
    if (r->mem != MEM_HOST) {
        const char *d = adv_cuda_upload(c->data, (size_t)(c->n + c->offset) * es);
        if (!d) {
            printf("FAIL #%" PRIu64 ": %s: could not copy %" PRIu64 " elements to the GPU\n", index, r->name, c->n);
            r->fails++;
            return 1;
        }
        data = d + (size_t)c->offset * es;
    }
    if (r->mem == MEM_ASYNC) {
        tally_op sum = TALLY_SUM;
        memset(res, 0, sizeof res);
        adv_cuda_reduce_async(r->ctx, c->type, data, c->n, &sum, 1, &ro, res);
        bad += compare(r, "async", index, c, &sum, 1, res, &ro);
        memset(res, 0, sizeof res);
        adv_cuda_reduce_async(r->ctx, c->type, data, c->n, many, nmany, &ro, res);
        bad += compare(r, "async_many", index, c, many, nmany, res, &ro);
        return bad;
    }
    memset(res, 0, sizeof res);
    tally_reduce(r->ctx, TALLY_SUM, c->type, data, c->n, &ro, &res[0]);
    tally_op sum = TALLY_SUM;
    bad += compare(r, "reduce", index, c, &sum, 1, res, &ro);

    memset(res, 0, sizeof res);
    tally_reduce_many(r->ctx, c->type, data, c->n, many, nmany, &ro, res);
    bad += compare(r, "reduce_many", index, c, many, nmany, res, &ro);

    memset(res, 0, sizeof res);
    tally_reduce_many(r->ctx, c->type, data, c->n, var_set, 3, &ro, res);
    bad += compare(r, "var", index, c, var_set, 3, res, &ro);

    if (r->mem == MEM_HOST) { /* streams take host chunks */
        tally_stream *st = NULL;
        if (tally_stream_create(r->ctx, c->type, many, nmany, &ro, &st) != TALLY_OK) {
            printf("FAIL #%" PRIu64 ": %s: tally_stream_create: %s\n", index, r->name, tally_last_error(r->ctx));
            r->fails++;
            return bad + 1;
        }
        const char *a = adv_case_array(c);
        uint64_t done = 0;
        while (done < c->n) {
            uint64_t k = 1 + adv_below(rng, adv_below(rng, 2) ? 64 : c->n - done);
            if (k > c->n - done) k = c->n - done;
            tally_stream_update(st, a + (size_t)done * es, k);
            done += k;
        }
        memset(res, 0, sizeof res);
        tally_stream_results(st, res);
        tally_stream_destroy(st);
        bad += compare(r, "stream", index, c, many, nmany, res, &ro);
    }
    return bad;
}

/* ---- the reference's own check: small arrays and their sums for Python's fractions -------- */
static void print_double(double v)
{
    if (isnan(v)) printf("nan");
    else if (isinf(v)) printf(v > 0 ? "inf" : "-inf");
    else printf("%a", v);
}
static int emit_python(void)
{
    adv_limits lim = opt.lim;
    lim.max_n = 64;
    lim.types = (1u << TALLY_F32) | (1u << TALLY_F64);
    for (uint64_t i = 0; i < opt.emit_python; i++) {
        adv_case c;
        if (adv_case_make(opt.seed, i, &lim, &c) != 0) return 1;
        tally_result s, v;
        ref_reduce(c.type, adv_case_array(&c), c.n, TALLY_SUM, 0, 0, &s);
        ref_reduce(c.type, adv_case_array(&c), c.n, TALLY_VAR, 0, c.ddof, &v);
        printf("%s %d ", tally_type_name(c.type), c.ddof);
        print_double(s.value.f64);
        printf(" ");
        if (v.status == TALLY_OK) print_double(v.value.f64);
        else printf("%s", tally_status_name(v.status));
        for (uint64_t k = 0; k < c.n; k++) {
            printf(" ");
            print_double(get_f(c.type, adv_case_array(&c), k));
        }
        printf("\n");
        adv_case_free(&c);
    }
    return 0;
}

int main(int argc, char **argv)
{
    opt.seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)clock();
    opt.arrays = 2000;
    opt.lim.max_n = 1u << 20;
    opt.want_cpu = opt.want_cuda = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { usage(stdout); return 0; }
        else if (strcmp(a, "--verbose") == 0) { opt.verbose = 1; takes = 0; }
        else if (!v) { fprintf(stderr, "tally_adversarial: %s needs a value\n", a); usage(stderr); return 2; }
        else if (strcmp(a, "--seed") == 0) opt.seed = parse_u64(a, v);
        else if (strcmp(a, "--arrays") == 0) opt.arrays = parse_u64(a, v);
        else if (strcmp(a, "--seconds") == 0) opt.seconds = (double)parse_u64(a, v);
        else if (strcmp(a, "--max-n") == 0) opt.lim.max_n = parse_u64(a, v);
        else if (strcmp(a, "--shard") == 0) {
            char *slash = strchr(v, '/');
            if (!slash) { fprintf(stderr, "tally_adversarial: --shard: expected K/N, got '%s'\n", v); return 2; }
            *slash = 0;
            opt.shard = parse_u64(a, v);
            opt.shards = parse_u64(a, slash + 1);
            if (!opt.shards || opt.shard >= opt.shards) { fprintf(stderr, "tally_adversarial: --shard: need K < N\n"); return 2; }
        }
        else if (strcmp(a, "--only") == 0) { opt.only = parse_u64(a, v); opt.only_set = 1; }
        else if (strcmp(a, "--emit-python") == 0) opt.emit_python = parse_u64(a, v);
        else if (strcmp(a, "--families") == 0) opt.lim.families = parse_set(a, v, ADV_FAMILY_COUNT, family_name_i);
        else if (strcmp(a, "--types") == 0) opt.lim.types = parse_set(a, v, TALLY_TYPE_COUNT, type_name_i);
        else if (strcmp(a, "--backends") == 0) {
            opt.want_cpu = strstr(v, "cpu") != NULL;
            opt.want_cuda = strstr(v, "cuda") != NULL;
            opt.want_vulkan = strstr(v, "vulkan") != NULL;
            if (!opt.want_cpu && !opt.want_cuda && !opt.want_vulkan) {
                fprintf(stderr, "tally_adversarial: --backends: expected cpu, cuda and/or vulkan, got '%s'\n", v);
                return 2;
            }
        } else { fprintf(stderr, "tally_adversarial: unknown option '%s'\n", a); usage(stderr); return 2; }
        i += takes;
    }
    if (opt.lim.max_n < 4) opt.lim.max_n = 4;
    if (opt.emit_python) return emit_python();

    int st = open_runners();
    if (st) return st == 77 ? 77 : 1;
    printf("tally_adversarial: seed 0x%016" PRIx64 " (rerun with --seed 0x%016" PRIx64 "); runners:",
           opt.seed, opt.seed);
    for (int i = 0; i < nrunners; i++) printf(" %s", runners[i].name);
    printf("\n");
    fflush(stdout);

    const double t0 = now();
    uint64_t passed = 0, failed = 0, first_fail = UINT64_MAX;
    uint64_t begin = opt.only_set ? opt.only : 0, end = opt.only_set ? opt.only + 1 : opt.arrays;
    int nsampled = 0;
    for (int i = 0; i < nrunners; i++) nsampled += runners[i].sampled;
    for (uint64_t idx = begin; idx < end; idx++) {
        if (opt.seconds > 0 && now() - t0 > opt.seconds) break;
        if (opt.shards && idx % opt.shards != opt.shard) continue;
        adv_case c;
        if (adv_case_make(opt.seed, idx, &opt.lim, &c) != 0) {
            fprintf(stderr, "tally_adversarial: out of memory for array #%" PRIu64 "\n", idx);
            return 1;
        }
        memset(ref_known, 0, sizeof ref_known);
        if (opt.verbose) {
            char d[160];
            describe_case(d, sizeof d, idx, &c);
            printf("%s\n", d);
        }
        adv_rng rng = {c.seed ^ 0x5bd1e995u};
        int pick = nsampled ? (int)adv_below(&rng, (uint64_t)nsampled) : -1, k = 0, bad = 0;
        for (int i = 0; i < nrunners; i++) {
            runner *r = &runners[i];
            if (r->sampled && k++ != pick) continue;
            r->arrays++;
            bad += run_one(r, idx, &c, &rng);
        }
        family_arrays[c.family]++;
        if (bad) {
            failed++;
            family_fails[c.family]++;
            if (first_fail == UINT64_MAX) first_fail = idx;
        } else {
            passed++;
        }
        adv_case_free(&c);
    }
    double secs = now() - t0;

    printf("\n%-18s %9s %9s\n", "family", "arrays", "failed");
    for (int f = 0; f < ADV_FAMILY_COUNT; f++)
        if (family_arrays[f])
            printf("%-18s %9" PRIu64 " %9" PRIu64 "\n", adv_family_name((adv_family)f), family_arrays[f], family_fails[f]);
    printf("\n%-18s %9s %10s %9s\n", "runner", "arrays", "checks", "failed");
    for (int i = 0; i < nrunners; i++)
        printf("%-18s %9" PRIu64 " %10" PRIu64 " %9" PRIu64 "\n", runners[i].name, runners[i].arrays,
               runners[i].checks, runners[i].fails);
    printf("\n%" PRIu64 " arrays in %.1f s, seed 0x%016" PRIx64 "\n", passed + failed, secs, opt.seed);
    if (failed)
        printf("reproduce the first failure: %s --seed 0x%016" PRIx64 " --only %" PRIu64 " --verbose\n",
               argv[0], opt.seed, first_fail);
    printf("adversarial: %" PRIu64 " passed, %" PRIu64 " failed\n", passed, failed);
    for (int i = 0; i < nrunners; i++) {
        int shared = 0;
        for (int j = 0; j < i; j++) shared |= runners[j].ctx == runners[i].ctx;
        if (!shared) tally_destroy(runners[i].ctx);
    }
    adv_cuda_release();
    return failed ? 1 : 0;
}
