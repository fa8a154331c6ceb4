/* The Vulkan backend's speculative compensated sum (spec.comp, vk_reduce.c's spec_sum): one-shot
 * f32/f64 SUM calls answered from a (s, c, D) triple when its bound decides the rounding, else
 * by the exact path. Checks, bit for bit against the CPU backend:
 *  - ordinary data (uniform, mixed signs over many binades, prices), sizes around the shader's
 *    shapes (the partial vectors at both ends, 256 x 4 vectors per workgroup step, the forced
 *    64 KiB dispatch segments) and host pointers at odd element offsets: the tier must answer
 *    most of these (its counters), or it is not being tested;
 *  - traps whose compensated sum V = s + c lies on a rounding midpoint while the true sum does
 *    not (1 + 2^-53 + tiny, the tiny term lost in c's rounding; f32: the tiny term a subnormal
 *    float), spread by zeros over the lanes and workgroups: the known answer is 1 + 2^-52 (or 1
 *    below the midpoint); only the bound E (D fed by every |c|) makes the tier decline these,
 *    so a tier that answered with E = 0, or without D, fails here;
 *  - what the tier must decline: NaN, infinities, f64 subnormals and values below 2^-970 or
 *    above 2^900, sums that cancel to zero, sums that overflow;
 *  - all of these again inside batches (tally_vulkan_batch_begin / _end), mixed with calls
 *    that take the exact pass: the tier answers and declines there too.
 * The one-lane traps run with 1, 2 and 4 triples per invocation (spec.comp's NT); the rest with
 * TALLY_VULKAN_SPEC_T's (ctest vulkan_spec_t4: 4).
 * With TALLY_VULKAN_VALIDATION=1 any validation message fails the run.
 *
 *   test_vulkan_spec [SEED]     exit 0 all equal, 1 a difference, 77 no device */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tally.h"
#include "tally_vulkan.h"

TALLY_API tally_status tally_vulkan_bench_buffer(tally_context *ctx, int slot, const void *data,
                                                 uint64_t bytes, VkBuffer *out);
TALLY_API void tally_vulkan_spec_counts(const tally_context *ctx, uint64_t *answered, uint64_t *declined);
TALLY_API uint32_t tally_vulkan_bench_spec_t(tally_context *ctx, uint32_t t);
TALLY_API uint32_t tally_vulkan_bench_spec_sf(tally_context *ctx, uint32_t sf);

static uint64_t g_s;
static uint64_t next(void)
{
    uint64_t z = (g_s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return next() % n; }
static double unif(void) { return (double)(next() >> 11) * 0x1p-53; }

static tally_context *g_cpu, *g_vk;
static int g_fails, g_checks;

/* SUM of n elements at d on both backends; want: the known answer (NAN: none) */
static void check(const char *what, int f32, const void *d, uint64_t n, double want)
{
    tally_type ty = f32 ? TALLY_F32 : TALLY_F64;
    tally_result a, b;
    tally_reduce(g_cpu, TALLY_SUM, ty, d, n, NULL, &a);
    tally_reduce(g_vk, TALLY_SUM, ty, d, n, NULL, &b);
    g_checks++;
    int bad = a.status != b.status || (a.status == TALLY_OK && memcmp(&a.value, &b.value, 8) != 0);
    if (!isnan(want) && memcmp(&a.value.f64, &want, 8) != 0) bad = 1;
    if (bad) {
        if (g_fails < 20)
            printf("FAIL: %s %s n=%llu: cpu %a (status %d), vulkan %a (status %d), known %a\n", what,
                   f32 ? "f32" : "f64", (unsigned long long)n, a.value.f64, (int)a.status, b.value.f64,
                   (int)b.status, want);
        g_fails++;
    }
}

static void put(int f32, void *d, uint64_t i, double v)
{
    if (f32) ((float *)d)[i] = (float)v;
    else ((double *)d)[i] = v;
}

/* ---- batches: the tier inside tally_vulkan_batch_begin / _end (vk_reduce.c, spec_group) ----
 * Calls of every family above (ordinary data the tier answers, midpoint traps and special values
 * it must decline), SUM alone or with other ops (which take the exact pass), host pointers, in
 * batches of 1 to 300 calls (a batch of more than TALLY_VULKAN_MAX_BATCH calls runs in several
 * groups): each result bit for bit the CPU's. */
typedef struct bcall {
    int f32, nops;
    uint64_t n;
    double *d; /* the data (f32: as floats) */
    tally_op ops[3];
    tally_result r[3];
} bcall;

/* A family's data into c->d: 0-3 ordinary, 4 a midpoint trap, 5 a special value */
static void batch_fill(bcall *c, int fam)
{
    uint64_t n = c->n;
    memset(c->d, 0, n * 8);
    if (fam == 4 && n >= 3) {
        double tiny = c->f32 ? 0x1p-149 : 0x1p-150;
        double terms[3] = {1.0, 0x1p-53, (next() & 1) ? -tiny : tiny};
        for (int k = 0; k < 3; k++) put(c->f32, c->d, (uint64_t)k * (n / 3), terms[k]);
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        double v = fam == 0 ? unif()
                 : fam == 1 ? ldexp(unif() + 0.5, (int)below(c->f32 ? 80 : 400) - (c->f32 ? 40 : 200)) * ((next() & 1) ? 1 : -1)
                 : fam == 2 ? (double)below(10000000) / 100.0
                            : unif() - 0.5;
        put(c->f32, c->d, i, v);
    }
    if (fam == 5) {
        int k = (int)below(4);
        put(c->f32, c->d, below(n), k == 0 ? NAN : k == 1 ? INFINITY : k == 2 ? (c->f32 ? 0x1p-140 : 0x1p-1070) : (c->f32 ? 0x1p127 : 0x1p950));
    }
}

static void test_batches(void)
{
    enum { MAXC = 300 };
    bcall *c = calloc(MAXC, sizeof *c);
    uint64_t a0, d0, a1, d1;
    tally_vulkan_spec_counts(g_vk, &a0, &d0);
    int ncalls = 0, fails0 = g_fails;
    for (int rep = 0; rep < 14; rep++) {
        int nc = rep == 0 ? 1 : rep == 13 ? MAXC : 1 + (int)below(40);
        for (int i = 0; i < nc; i++) {
            c[i].f32 = (int)(next() & 1);
            c[i].n = i % 7 == 3 ? 1 + below(300000) : 1 + below(5000);
            c[i].d = malloc(c[i].n * 8 + 8);
            batch_fill(&c[i], (int)below(6));
            /* mostly SUM alone (the tier); some SUM with MIN and MEAN, some MAX (the exact pass) */
            int w = (int)below(8);
            c[i].ops[0] = w == 7 ? TALLY_MAX : TALLY_SUM;
            c[i].ops[1] = TALLY_MIN;
            c[i].ops[2] = TALLY_MEAN;
            c[i].nops = w == 6 ? 3 : 1;
        }
        if (tally_vulkan_batch_begin(g_vk) != TALLY_OK) {
            printf("FAIL: batch_begin: %s\n", tally_last_error(g_vk));
            g_fails++;
            break;
        }
        for (int i = 0; i < nc; i++)
            tally_reduce_many(g_vk, c[i].f32 ? TALLY_F32 : TALLY_F64, c[i].d, c[i].n, c[i].ops, (size_t)c[i].nops, NULL, c[i].r);
        tally_vulkan_batch_end(g_vk); /* (its status is the first failing result's: checked below) */
        for (int i = 0; i < nc; i++) {
            tally_result want[3];
            tally_reduce_many(g_cpu, c[i].f32 ? TALLY_F32 : TALLY_F64, c[i].d, c[i].n, c[i].ops, (size_t)c[i].nops, NULL, want);
            for (int k = 0; k < c[i].nops; k++) {
                g_checks++;
                if (want[k].status != c[i].r[k].status ||
                    (want[k].status == TALLY_OK && memcmp(&want[k].value, &c[i].r[k].value, 8) != 0)) {
                    if (g_fails < 20)
                        printf("FAIL: batch %d call %d (%s n=%llu op %s): cpu %a (status %d), vulkan %a (status %d)\n", rep, i,
                               c[i].f32 ? "f32" : "f64", (unsigned long long)c[i].n, tally_op_name(c[i].ops[k]),
                               want[k].value.f64, (int)want[k].status, c[i].r[k].value.f64, (int)c[i].r[k].status);
                    g_fails++;
                }
            }
            free(c[i].d);
        }
        ncalls += nc;
    }
    tally_vulkan_spec_counts(g_vk, &a1, &d1);
    printf("batches: %d calls, the tier answered %llu, declined %llu, %d failed\n", ncalls,
           (unsigned long long)(a1 - a0), (unsigned long long)(d1 - d0), g_fails - fails0);
    /* the tier must have run inside the batches, both ways (about 5/8 of the calls are SUM
     * alone; of those a third are traps or special values) */
    if (a1 - a0 < (uint64_t)ncalls / 4 || d1 - d0 < (uint64_t)ncalls / 20) {
        printf("FAIL: the tier answered or declined too few batched calls\n");
        g_fails++;
    }
    free(c);
}

int main(int argc, char **argv)
{
    g_s = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x5bec;
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    if (tally_create(&g_cpu, &o) != TALLY_OK) {
        printf("the CPU backend: %s\n", tally_last_error(NULL));
        return 1;
    }
    o.backend = TALLY_BACKEND_VULKAN;
    if (tally_create(&g_vk, &o) != TALLY_OK) {
        printf("SKIP: no Vulkan device (%s)\n", tally_last_error(NULL));
        tally_destroy(g_cpu);
        return 77;
    }
    const uint64_t maxn = 600000;
    unsigned char *buf = malloc(maxn * 8 + 64);
    if (!buf) return 1;
    uint64_t a0, d0, a1, d1;

    /* ordinary data: the tier must answer */
    tally_vulkan_spec_counts(g_vk, &a0, &d0);
    static const uint64_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 255, 256, 257, 1023, 1024, 1025,
                                     4095, 4096, 4097, 16383, 16384, 16385, 16388, 32767, 32769, 65537,
                                     1u << 18, 300001, 600000};
    int nord = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int f32 = 0; f32 < 2; f32++) {
            for (int kind = 0; kind < 5; kind++) {
                uint64_t n = sizes[si], off = below(4); /* element offset: the head moves */
                if (off * (f32 ? 4 : 8) + n * 8 > maxn * 8) off = 0;
                void *d = buf + off * (f32 ? 4 : 8);
                for (uint64_t i = 0; i < n; i++) {
                    double v = kind == 0 ? unif()
                             : kind == 1 ? ldexp(unif() + 0.5, (int)below(f32 ? 80 : 400) - (f32 ? 40 : 200)) * ((next() & 1) ? 1 : -1)
                             : kind == 2 ? (double)below(10000000) / 100.0
                                         : unif() - 0.5;
                    if (kind == 3 && below(8) == 0) v = (next() & 1) ? -0.0 : 0.0;
                    /* f32 subnormals among them: the shader's widening by conversion */
                    if (kind == 3 && f32 && below(8) == 0) v = ldexp((double)(1 + below((1u << 23) - 1)), -149) * ((next() & 1) ? 1 : -1);
                    /* tiny values: f32 subnormals and the least normals (a sum whose rounding
                     * sees every bit of their widening); f64 just above the tier's 2^-970 */
                    if (kind == 4)
                        v = f32 ? ldexp((double)(1 + below((1u << 24) - 1)), -149 - (int)below(4)) * ((next() & 1) ? 1 : -1)
                                : ldexp(unif() + 0.5, -969 + (int)below(20)) * ((next() & 1) ? 1 : -1);
                    if (kind == 4 && below(4) == 0) v = (next() & 1) ? -0.0 : 0.0;
                    put(f32, d, i, v);
                }
                check(kind == 4 ? "tiny" : kind == 0 ? "uniform" : kind == 1 ? "mixed" : kind == 2 ? "prices" : "zeros, f32 subnormals", f32, d, n, NAN);
                nord++;
            }
        }
    }
    tally_vulkan_spec_counts(g_vk, &a1, &d1);
    printf("ordinary data: %d calls, the tier answered %llu, declined %llu\n", nord,
           (unsigned long long)(a1 - a0), (unsigned long long)(d1 - d0));
    if (a1 - a0 < (uint64_t)nord * 9 / 10) {
        printf("FAIL: the tier answered fewer than 90%% of the ordinary calls\n");
        g_fails++;
    }

    /* midpoint traps: known answers */
    tally_vulkan_spec_counts(g_vk, &a0, &d0);
    int ntrap = 0;
    for (int rep = 0; rep < 120; rep++) {
        int f32 = rep & 1, below_mid = (rep >> 1) % 3 == 2, neg = (rep >> 1) % 5 == 3;
        uint64_t n = rep < 40 ? 3 + below(40) : rep < 80 ? 3 + below(5000) : 3 + below(maxn - 3);
        memset(buf, 0, n * 8);
        double tiny = f32 ? 0x1p-149 : 0x1p-150;
        if (!f32 && below(2)) tiny = 0x1p-90;
        double terms[3] = {1.0, 0x1p-53, below_mid ? -tiny : tiny};
        /* distinct random places: the three terms in any lanes, workgroups, orders */
        uint64_t p[3];
        for (int k = 0; k < 3; k++) {
            int again;
            do {
                p[k] = below(n);
                again = 0;
                for (int j = 0; j < k; j++) again |= p[j] == p[k];
            } while (again);
            put(f32, buf, p[k], neg ? -terms[k] : terms[k]);
        }
        double want = below_mid ? 1.0 : 1.0 + 0x1p-52;
        check(below_mid ? "trap below the midpoint" : "trap above the midpoint", f32, buf, n, neg ? -want : want);
        ntrap++;
    }
    tally_vulkan_spec_counts(g_vk, &a1, &d1);
    printf("midpoint traps: %d calls, the tier answered %llu, declined %llu\n", ntrap,
           (unsigned long long)(a1 - a0), (unsigned long long)(d1 - d0));

    /* data in a VkBuffer at element offsets 0..7 (the shader's head: partial vectors at both
     * ends, word-by-word edge elements) */
    int nbuf = 0;
    for (int f32 = 0; f32 < 2; f32++) {
        size_t es = f32 ? 4 : 8;
        uint64_t tot = 70000;
        for (uint64_t i = 0; i < tot; i++) put(f32, buf, i, ldexp(unif() + 0.5, (int)below(60) - 30) * ((next() & 1) ? 1 : -1));
        VkBuffer vb;
        if (tally_vulkan_bench_buffer(g_vk, 0, buf, tot * es, &vb) != TALLY_OK) {
            printf("FAIL: a device buffer: %s\n", tally_last_error(g_vk));
            g_fails++;
            break;
        }
        static const uint64_t bn[] = {1, 2, 3, 5, 8, 13, 17, 33, 1000, 4097, 65536 / 8 + 3, 69000 - 7};
        for (uint64_t off = 0; off < 8; off++) {
            for (size_t k = 0; k < sizeof bn / sizeof bn[0]; k++) {
                uint64_t n = bn[k];
                tally_op op = TALLY_SUM;
                tally_result a, b;
                tally_reduce(g_cpu, TALLY_SUM, f32 ? TALLY_F32 : TALLY_F64, buf + off * es, n, NULL, &a);
                tally_status st = tally_vulkan_reduce_buffer(g_vk, f32 ? TALLY_F32 : TALLY_F64, vb, off * es, n, &op, 1, NULL, &b);
                g_checks++;
                nbuf++;
                if (st != TALLY_OK || a.status != b.status || memcmp(&a.value, &b.value, 8) != 0) {
                    printf("FAIL: VkBuffer %s offset %llu n=%llu: cpu %a, vulkan %a (status %d)\n", f32 ? "f32" : "f64",
                           (unsigned long long)off, (unsigned long long)n, a.value.f64, b.value.f64, (int)st);
                    g_fails++;
                }
            }
        }
    }
    printf("VkBuffer offsets: %d calls\n", nbuf);

    /* a trap inside one triple of one invocation, whose compensated sum lies BELOW the midpoint
     * 1 + 2^-53 while the true sum lies above: one workgroup (1536 vectors from offset 0, fewer
     * than one step of the bulk loop, so invocation 0 adds vectors 0, 256, ..., 1280 in that
     * order, element e of each into its triple e % NT: TALLY_VULKAN_SPEC_T, set here to 1, 2 and
     * 4 in turn), element e of those six vectors holds 1, 2^-53, -2^-106 (c = 2^-53 - 2^-106
     * exactly), then three terms t just under half an ulp of c (each lost in c's rounding; 3t >
     * 2^-106), every other element zero. The answer is 1 + 2^-52; V rounds to 1. Only the bound
     * on c's roundings (D fed by |c|) declines it: a tier with D left out of any triple answers
     * 1. */
    for (uint32_t nt = 1; nt <= 4; nt *= 2) {
        uint32_t nt0 = tally_vulkan_bench_spec_t(g_vk, nt);
        for (int f32 = 0; f32 < 2; f32++) {
            for (int sg = 1; sg >= -1; sg -= 2) {
                uint64_t vpe = f32 ? 4 : 2, n = 1536 * vpe;
                for (uint64_t e = 0; e < vpe; e++) {
                    memset(buf, 0, n * 8);
                    double tt = (1 - 0x1p-10) * 0x1p-107;
                    const double lane[6] = {1.0, 0x1p-53, -0x1p-106, tt, tt, tt};
                    for (int k = 0; k < 6; k++) put(f32, buf, (uint64_t)k * 256 * vpe + e, sg * lane[k]);
                    check("one-lane trap", f32, buf, n, sg * (1.0 + 0x1p-52));
                }
            }
        }
        tally_vulkan_bench_spec_t(g_vk, nt0);
    }

    /* the exact vector sums (spec.comp's SF bit 2, TALLY_VULKAN_SPEC_Q4), set here on and off: a
     * vector (1 + 2^-23, 2^-30 + 2^-53, 0, 0) spans 30 exponent fields, beyond the 27 that keep
     * its f64 sum exact (1 + 2^-23 + 2^-30 + 2^-53 needs 54 bits), and a later 2^-60 lifts the
     * true sum above the midpoint: the answer is 1 + 2^-23 + 2^-30 + 2^-52. A vector path that
     * took the 30-field vector rounds its sum to even (losing 2^-53) and answers the midpoint's
     * lower neighbour. Then vectors at exactly 27 fields, which the path takes, with the same
     * lift: (1 + 2^-23, 2^-27 + 2^-50) is exact, the answer 1 + 2^-23 + 2^-27 + 2^-50 rounded. */
    for (uint32_t sf = 0; sf <= 2; sf += 2) {
        uint32_t sf0 = tally_vulkan_bench_spec_sf(g_vk, sf);
        for (int sg = 1; sg >= -1; sg -= 2) {
            for (int span = 27; span <= 30; span += 3) {
                for (uint64_t n = 8; n <= 40000; n = n * 7 + 5) {
                    memset(buf, 0, n * 4);
                    uint64_t v0 = 4 * below(n / 4 - 1), v1 = v0 + 4 + 4 * below((n - v0 - 4) / 4);
                    put(1, buf, v0, sg * (1 + 0x1p-23));
                    put(1, buf, v0 + 1, sg * ldexp(1 + 0x1p-23, -span));
                    put(1, buf, v1, sg * 0x1p-60);
                    double want = (1 + 0x1p-23) + ldexp(1 + 0x1p-23, -span); /* exact: 54 bits at most */
                    if (span == 30) want = 1 + 0x1p-23 + 0x1p-30 + 0x1p-52; /* the midpoint, lifted */
                    check("vector-sum edge", 1, buf, n, sg * want);
                }
            }
        }
        tally_vulkan_bench_spec_sf(g_vk, sf0);
    }

    /* what the tier must decline */
    tally_vulkan_spec_counts(g_vk, &a0, &d0);
    int ndec = 0;
    for (int rep = 0; rep < 160; rep++) {
        int f32 = rep & 1, kind = (rep >> 1) % 8;
        uint64_t n = rep < 80 ? 1 + below(64) : 1 + below(200000);
        for (uint64_t i = 0; i < n; i++) put(f32, buf, i, unif() - 0.25);
        uint64_t p = below(n);
        switch (kind) {
        case 0: put(f32, buf, p, NAN); break;
        case 1: put(f32, buf, p, (next() & 1) ? INFINITY : -INFINITY); break;
        case 2: /* both infinities */
            put(f32, buf, p, INFINITY);
            put(f32, buf, below(n), -INFINITY);
            break;
        case 3: put(f32, buf, p, f32 ? 0x1p-140 : 0x1p-1070); break; /* subnormal */
        case 4: put(f32, buf, p, f32 ? 0x1p-126 : 0x1p-1000); break; /* tiny normal */
        case 5: put(f32, buf, p, f32 ? 0x1p127 : 0x1p950); break;    /* huge */
        case 6: /* cancels to zero: +-x pairs */
            for (uint64_t i = 0; i + 1 < n; i += 2) put(f32, buf, i + 1, -(f32 ? ((float *)buf)[i] : ((double *)buf)[i]));
            if (n & 1) put(f32, buf, n - 1, 0.0);
            break;
        default: /* overflows */
            for (uint64_t i = 0; i < n; i++) put(f32, buf, i, f32 ? 0x1.fffffep127 : 0x1.fffffffffffffp1023);
            put(f32, buf, 0, f32 ? 0x1.fffffep127 : 0x1.fffffffffffffp1023);
            break;
        }
        if (kind == 7 && n == 1) continue;
        check("special", f32, buf, n, NAN);
        ndec++;
    }
    tally_vulkan_spec_counts(g_vk, &a1, &d1);
    printf("special values: %d calls, the tier answered %llu, declined %llu\n", ndec,
           (unsigned long long)(a1 - a0), (unsigned long long)(d1 - d0));

    test_batches();

    const char *last = "";
    uint64_t msgs = tally_vulkan_validation_messages(g_vk, &last);
    const char *val = getenv("TALLY_VULKAN_VALIDATION");
    if (val && *val && strcmp(val, "0")) {
        printf("validation layer: %llu messages%s%s\n", (unsigned long long)msgs, msgs ? "; the last: " : "",
               msgs ? last : "");
        if (msgs) g_fails++;
    }
    printf("test_vulkan_spec: %d checks, %d failed\n", g_checks, g_fails);
    free(buf);
    tally_destroy(g_vk);
    tally_destroy(g_cpu);
    return g_fails ? 1 : 0;
}
