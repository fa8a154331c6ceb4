/* Internals shared by the files of tools/lab: the variant tables, the exact reference, the
 * thread pool, input data and the SVG pictures. Nothing here is public API. */
#ifndef TALLY_LAB_INTERNAL_H
#define TALLY_LAB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a small thread pool: the caller is thread 0 ------------------------------------------- */
typedef void (*lab_task)(void *arg, int tid, int nthreads);
typedef struct lab_pool lab_pool;
lab_pool *lab_pool_create(int nthreads); /* nthreads <= 0: all online CPUs */
int lab_pool_size(const lab_pool *pool);
/* Runs task(arg, tid, n) on every thread of the pool and returns when all are done. */
void lab_pool_run(lab_pool *pool, lab_task task, void *arg);
void lab_pool_destroy(lab_pool *pool);
int lab_online_cpus(void);
/* [begin, end) of the part of n that thread tid of nthreads takes, 16-element aligned. */
void lab_split(uint64_t n, int tid, int nthreads, uint64_t *begin, uint64_t *end);

/* ---- the exact reference --------------------------------------------------------------------
 * A superaccumulator: every double is an integer multiple of 2^-1074, so the exact sum of any
 * number of doubles is an integer held in 32-bit digits (kept in int64 so carries can wait). */
#define LAB_ACC_DIGITS 70
typedef struct lab_exact {
    int64_t digit[LAB_ACC_DIGITS]; /* digit k weighs 2^(32k - 1074) */
    uint32_t pending;              /* adds since the last carry propagation */
    int nan, pos_inf, neg_inf;
} lab_exact;
void lab_exact_init(lab_exact *acc);
void lab_exact_add(lab_exact *acc, double x);
/* The exact sum rounded once to the nearest double (ties to even). */
double lab_exact_round(lab_exact *acc);

/* The reference of one input: what every reduce variant is checked against. */
typedef struct lab_reference {
    double sum;      /* correctly rounded exact sum */
    double sum_abs;  /* sum of |x| (rounded; used only for error bounds) */
    double min, max;
} lab_reference;
void lab_reference_compute(const float *x, uint64_t n, lab_reference *ref);

/* Unit roundoff of f32 and f64, and gamma_k = k u / (1 - k u) (Higham); +inf once k u >= 1. */
#define LAB_U32 (1.0 / 16777216.0)
#define LAB_U64 (1.0 / 9007199254740992.0)
double lab_gamma(double k, double u);

/* ---- input data -------------------------------------------------------------------------- */
typedef enum lab_data { LAB_DATA_PRICES = 0, LAB_DATA_SIGNED = 1 } lab_data;
/* prices: seed 001's prices, $5.00 to $50.00 in cents / 100, as f32;
 * signed: random sign and magnitude over 2^-20 .. 2^20. Deterministic for a seed. */
void lab_fill(float *x, uint64_t n, lab_data kind, uint64_t seed);
/* Seed 000's 256 hashed prices, generalised: cents = 500 + (i * 2654435761) mod 4500 (u32). */
uint32_t lab_hashed_cents(uint64_t i);
/* Seed 003's copies sold: (i * 7) mod 5. */
uint32_t lab_copies_sold(uint64_t i);
uint64_t lab_splitmix(uint64_t *state);

/* ---- variants -----------------------------------------------------------------------------
 * A backend table holds the variants that mean something on that backend. A variant's fn runs
 * once over in[0..n) (already loaded into the backend by load()) and leaves its answer in
 * out[3] (reduce: sum[, min, max]) or in the host array scan_out (scan) when `check` is set;
 * when check is 0 it may leave the answer on the device. It returns 0, or -1 with a message in
 * why (then the variant is reported as failed, not timed). */
typedef enum lab_kind {
    LAB_REDUCE = 0,       /* sum of f32 -> out[0] */
    LAB_REDUCE_SMM = 1,   /* sum, min, max of f32 in one pass -> out[0..2] */
    LAB_SCAN = 2,         /* inclusive sum scan f32 -> f32 */
    LAB_CEIL_READ = 3,    /* memory ceiling for reductions: reads n*4 bytes; not validated */
    LAB_CEIL_COPY = 4     /* memory ceiling for scans: reads and writes n*4 bytes */
} lab_kind;

/* How a variant's answer is judged against the exact reference. */
typedef enum lab_check {
    LAB_CHECK_EXACT = 0,   /* the correctly rounded sum, bit for bit (and min/max exactly) */
    LAB_CHECK_BOUND = 1,   /* within a worst-case error bound of its algorithm (bound()) */
    LAB_CHECK_NONE = 2     /* ceilings */
} lab_check;

typedef struct lab_variant {
    const char *name;      /* short, unique: "pairwise-f32" */
    lab_kind kind;
    lab_check check;
    const char *about;     /* one line: what it does */
    int (*fn)(void *bstate, uint64_t n, int check, double out[3], float *scan_out, char *why);
    /* LAB_CHECK_BOUND: the bound on |error| of element i (scan) or of the sum (i = n-1), as a
     * multiple of sum |x| over the elements it covers. n is the whole size. */
    double (*bound)(uint64_t i, uint64_t n);
    int expect_wrong;      /* 1: deliberately incorrect; validation must flag it */
    uint64_t max_n;        /* 0: any size; else larger sizes are skipped (too slow) */
} lab_variant;

typedef struct lab_backend {
    const char *name;                     /* "cpu", "cuda" */
    int (*available)(void);
    /* threads: 0 = all cores. Returns 0, or -1 with why filled. */
    int (*open)(void **bstate, int threads, uint64_t max_n, char *why);
    void (*close)(void *bstate);
    /* Makes in[0..n) the input of the next fn calls (a GPU copies it to its memory); the
     * pointer stays valid until the next load. */
    int (*load)(void *bstate, const float *in, uint64_t n, char *why);
    const char *(*describe)(void *bstate); /* "AMD EPYC, 2 threads, avx2" */
    /* Optional (GPUs): runs v->fn reps times without checking and stores the device time of one
     * call (from device timestamps) in *seconds. NULL: the bench times calls on the host clock. */
    int (*time_calls)(void *bstate, const lab_variant *v, uint64_t n, uint64_t reps,
                      double *seconds, char *why);
    const lab_variant *variants;
    size_t count;
    /* Optional: 0 leaves the backend out of `--backend all` (it runs when named); NULL: in. */
    int (*in_all)(void);
} lab_backend;

#define LAB_WHY 256
extern const lab_backend lab_cpu_backend;
#ifdef TALLY_LAB_CUDA
extern const lab_backend lab_cuda_backend;
#endif
#ifdef TALLY_LAB_VULKAN
extern const lab_backend lab_vulkan_backend; /* in `all` only on a real GPU, not lavapipe */
#endif

/* Pairwise f32 summation as NumPy does it (blocks of 128, 8 accumulators); also used by explain. */
float lab_pairwise_f32(const float *x, uint64_t n);

/* ---- output helpers ------------------------------------------------------------------------- */
/* Opens path + ".tmp" for writing; lab_commit renames it onto path (or removes it on failure). */
FILE *lab_open_tmp(const char *path, char *tmpname, size_t tmpsize);
int lab_commit(FILE *f, const char *tmpname, const char *path, int ok);
void lab_xml_escape(FILE *f, const char *s);
/* "1,048,576" */
const char *lab_commas(uint64_t v, char *buf, size_t size);
/* Parses "1048576", "1M", "4Mi", "2^20", "1e6"; returns 0 on success. */
int lab_parse_size(const char *s, uint64_t *out);

/* ---- pictures (explain, and the HTML page) ---------------------------------------------------
 * Each writes one <svg> element (with xmlns, so it stands alone, nests, or sits inline in XHTML),
 * stores its height in *height, and returns 0, or -1 with a message in why. */
typedef enum lab_tree_ops { LAB_TREE_SUM = 1, LAB_TREE_MIN = 2, LAB_TREE_MAX = 4 } lab_tree_ops;
#define LAB_SVG_WIDTH 1000
/* Every level of a reduction tree over n of seed 000's hashed prices (cents, or dollars when
 * is_float); levels of more than 64 nodes are drawn as bars, the rest with their values. */
int lab_svg_tree(FILE *f, unsigned ops, uint64_t n, int is_float, double *height, char *why);
/* Seed 001's two-pass reduction: 256 workgroup partials as bars, then the second pass. */
int lab_svg_two_pass(FILE *f, uint64_t n, double *height, char *why);
/* Seed 003's scan: running totals over the inputs (and Hillis-Steele's steps for n <= 64). */
int lab_svg_scan(FILE *f, uint64_t n, double *height, char *why);
/* Seed 004's subgroup picture: a block's sum by warp shuffles (n <= 1024 elements). */
int lab_svg_warp(FILE *f, uint64_t n, double *height, char *why);
/* The accuracy picture of seed 001 for x[0..n): exact sum, tally's, the two-pass tree, pairwise
 * and the naive f32 running total, with their errors. label names the input. */
int lab_svg_accuracy(FILE *f, const float *x, uint64_t n, const char *label, double *height,
                     char *why);

/* ---- bench results (shared by the table, JSON, CSV and HTML writers) -------------------------- */
typedef enum lab_verdict {
    LAB_CORRECT = 0,        /* agrees with the exact reference (bit for bit, or within its bound) */
    LAB_WRONG = 1,          /* disagrees: a bug */
    LAB_WRONG_EXPECTED = 2, /* disagrees, and is meant to: the incorrect variant was caught */
    LAB_NOT_CAUGHT = 3,     /* the incorrect variant passed: validation is broken */
    LAB_FAILED = 4,         /* the variant returned an error */
    LAB_SKIPPED = 5,        /* too large for this variant */
    LAB_CEILING = 6,        /* a ceiling: timed, not validated */
    LAB_UNBOUNDED = 7       /* its algorithm guarantees nothing at this size (k u >= 1 for a
                               naive f32 total past 2^24 elements): the error is shown, not judged */
} lab_verdict;

typedef struct lab_row {
    const lab_backend *backend;
    const lab_variant *variant;
    uint64_t n;
    double seconds;        /* fastest call (what the table shows); < 0 if not timed */
    double median_seconds; /* median call */
    double gbps;          /* bytes moved / seconds / 1e9 (reduce: 4n; scan and copy: 8n) */
    double pct_ceiling;   /* of the ceiling of the same family and size; < 0 if unknown */
    lab_verdict verdict;
    double error;         /* max |error| / sum |x| (scan: of each prefix); NaN if not checked */
    char note[LAB_WHY];
} lab_row;

typedef struct lab_report {
    const char *command;
    char date[64];
    char load[96];        /* "load average 0.12 0.30 0.25 (start), 0.50 ... (end)": noise on a shared machine */
    const char *data_name;
    uint64_t seed;
    int nbackends;
    const lab_backend *backends[4];
    char descriptions[4][256];
    lab_row *rows;
    size_t nrows;
} lab_report;

const char *lab_verdict_name(lab_verdict v);
const char *lab_family_name(lab_kind k); /* "reduce", "scan" or "ceiling" */
/* The HTML page: machine, command, tables, throughput plots, the explain pictures, accuracy. */
int lab_write_html(const char *path, const lab_report *rep, char *why);

#ifdef __cplusplus
}
#endif
#endif
