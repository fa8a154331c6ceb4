/* tally: parallel reductions and prefix scans, exact where others round.
 *
 * One plain C API over several backends (CPU threads + SIMD, CUDA, ...).
 * Conventions:
 *   - every function that can fail returns a tally_status; TALLY_OK is 0;
 *   - a context (tally_context) owns its threads and GPU resources; create one per
 *     thread of yours, or guard it: a context is not safe for concurrent calls;
 *   - after a failure, tally_last_error(ctx) gives a sentence saying what and where;
 *   - the library never prints, never aborts and never calls exit().
 * Element counts are 64-bit everywhere.
 */
#ifndef TALLY_H
#define TALLY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(TALLY_SHARED_BUILD)
#define TALLY_API __declspec(dllexport)
#elif defined(__GNUC__)
#define TALLY_API __attribute__((visibility("default")))
#else
#define TALLY_API
#endif

#define TALLY_VERSION_MAJOR 0
#define TALLY_VERSION_MINOR 1
#define TALLY_VERSION_PATCH 0
/* "0.1.0": the version of the library actually loaded. */
TALLY_API const char *tally_version(void);

/* ---- status ---------------------------------------------------------------------------------
 * Values are stable: they never change meaning between versions. */
typedef enum tally_status {
    TALLY_OK = 0,
    TALLY_ERR_INVALID_ARGUMENT = 1,  /* a bad argument: NULL pointer with n > 0, bad option value */
    TALLY_ERR_UNKNOWN_OP = 2,        /* op is not a tally_op */
    TALLY_ERR_UNKNOWN_TYPE = 3,      /* type is not a tally_type */
    TALLY_ERR_UNSUPPORTED = 4,       /* op and type do not go together (xor of floats, argmin scan) */
    TALLY_ERR_OVERLAP = 5,           /* output overlaps input where only out == in is allowed */
    TALLY_ERR_EMPTY = 6,             /* min/max/argmin/argmax/mean/var of zero elements */
    TALLY_ERR_OVERFLOW = 7,          /* the exact integer result does not fit its result type */
    TALLY_ERR_OUT_OF_MEMORY = 8,     /* host or device allocation failed */
    TALLY_ERR_BACKEND_UNAVAILABLE = 9, /* backend not built, no device, no driver */
    TALLY_ERR_BACKEND_FAILURE = 10,  /* the backend failed at run time (a CUDA error, ...) */
    TALLY_ERR_DOMAIN = 11            /* variance with n <= ddof */
} tally_status;
#define TALLY_STATUS_COUNT 12

/* "TALLY_ERR_OVERFLOW"; "TALLY_UNKNOWN_STATUS" for a value outside the enum. Static strings. */
TALLY_API const char *tally_status_name(tally_status s);
/* "integer overflow: the exact result does not fit the result type". Static strings. */
TALLY_API const char *tally_status_string(tally_status s);

/* ---- element types and operations ------------------------------------------------------------ */
typedef enum tally_type {
    TALLY_I8 = 0, TALLY_U8 = 1, TALLY_I16 = 2, TALLY_U16 = 3, TALLY_I32 = 4,
    TALLY_U32 = 5, TALLY_I64 = 6, TALLY_U64 = 7, TALLY_F32 = 8, TALLY_F64 = 9
} tally_type;
#define TALLY_TYPE_COUNT 10

typedef enum tally_op {
    TALLY_SUM = 0,
    TALLY_PROD = 1,
    TALLY_MIN = 2,
    TALLY_MAX = 3,
    TALLY_AND = 4,    /* integers only */
    TALLY_OR = 5,     /* integers only */
    TALLY_XOR = 6,    /* integers only */
    TALLY_COUNT = 7,  /* number of elements (with omit_nan: of non-NaN elements); reduce only */
    TALLY_ARGMIN = 8, /* index of the first minimum; reduce only */
    TALLY_ARGMAX = 9, /* index of the first maximum; reduce only */
    TALLY_MEAN = 10,  /* reduce only */
    TALLY_VAR = 11    /* variance with ddof (0: population, 1: sample); reduce only */
} tally_op;
#define TALLY_OP_COUNT 12

/* "i8" .. "f64"; NULL for a bad value. */
TALLY_API const char *tally_type_name(tally_type t);
/* Size in bytes of one element; 0 for a bad value. */
TALLY_API size_t tally_type_size(tally_type t);
/* "sum", "prod", "min", "max", "and", "or", "xor", "count", "argmin", "argmax", "mean", "var". */
TALLY_API const char *tally_op_name(tally_op op);

/* ---- backends and contexts ------------------------------------------------------------------- */
typedef enum tally_backend_kind {
    TALLY_BACKEND_AUTO = 0,   /* each call where its data is: the CPU, or a GPU (CUDA, else a
                                 real Vulkan GPU; the AUTO rule below) */
    TALLY_BACKEND_CPU = 1,    /* always available */
    TALLY_BACKEND_CUDA = 2,
    TALLY_BACKEND_VULKAN = 3  /* any Vulkan device, lavapipe included (docs/vulkan.md) */
} tally_backend_kind;
#define TALLY_BACKEND_KIND_COUNT 4

/* CPU SIMD paths. The environment variable TALLY_ISA=scalar|avx2|avx512 forces one for every
 * context (unless the options name one); asking for a path the CPU lacks fails at create time. */
typedef enum tally_isa {
    TALLY_ISA_AUTO = 0, TALLY_ISA_SCALAR = 1, TALLY_ISA_AVX2 = 2, TALLY_ISA_AVX512 = 3
} tally_isa;

/* Zero-initialised options are the defaults: fill with tally_options_init, then change fields. */
typedef struct tally_options {
    tally_backend_kind backend; /* default AUTO */
    int threads;                /* CPU worker threads including the caller; 0 = all cores */
    tally_isa isa;              /* CPU path; default AUTO (TALLY_ISA env var, else the best) */
    int device;                 /* GPU ordinal for GPU backends; default 0 */
} tally_options;

TALLY_API void tally_options_init(tally_options *opts);

typedef struct tally_context tally_context;

/* The AUTO rule. An AUTO context holds the CPU backend and, in a library built with CUDA, the
 * CUDA backend, started by the first call that needs it (creating an AUTO context starts no
 * GPU), and sends each call where its data lives:
 *   - device or managed memory goes to CUDA (a scan: when its input or output is such memory);
 *   - host memory (pageable, a mapped file, pinned or registered) goes to the CPU, unless the
 *     GPU is predicted faster for that size: from 64 MiB, for reductions without a float
 *     product and for scans other than float sum/product scans (whose bits could differ; batches,
 *     stream updates and carried scans of host data always stay on the CPU), when
 *     (time to start the GPU, 0 once started) + bytes / (GPU rate for host data) is below
 *     0.8 * bytes / (CPU rate). The rates start as estimates (per CPU thread; the host link)
 *     and become what this context measured for host data of 64 MiB or more on each path, so
 *     where a call runs may change with them; its result does not (every call that host data
 *     could send to the GPU gives the same bits on both).
 * Before the CUDA driver is loaded in the process no pointer can be device memory, so a
 * program that never uses a GPU never starts one through an AUTO context. The GPU is CUDA's
 * (device opts.device) where it is built and finds a device; otherwise the opts.device-th real
 * Vulkan GPU (integrated, discrete or virtual; never a CPU emulation such as lavapipe), which
 * takes host data by the same rule (a Vulkan context reaches device data only through
 * tally_vulkan.h's buffers). No GPU: every call goes to the CPU. */

/* Creates a context. opts may be NULL (defaults). On success *ctx owns its resources until
 * tally_destroy. On failure *ctx is NULL and the status says why (e.g. BACKEND_UNAVAILABLE when
 * CUDA is asked for on a machine without a usable GPU); tally_create_error() then returns the
 * detail message of the last failed create on this thread. */
TALLY_API tally_status tally_create(tally_context **ctx, const tally_options *opts);
TALLY_API const char *tally_create_error(void);
/* Frees everything the context holds. NULL is accepted and ignored. */
TALLY_API void tally_destroy(tally_context *ctx);

/* 1 if this build has the backend and it can run here (CPU: always), else 0. */
TALLY_API int tally_backend_available(tally_backend_kind kind);
/* "auto", "cpu", "cuda", "vulkan"; NULL for a bad value. */
TALLY_API const char *tally_backend_name(tally_backend_kind kind);
/* The backend this context runs on (never AUTO). For an AUTO context: the GPU backend its
 * device pointers run on (TALLY_BACKEND_CUDA) when the machine has a usable one (asking may
 * load the driver), else TALLY_BACKEND_CPU; host data may still run on the CPU
 * (tally_last_backend says where each call ran). */
TALLY_API tally_backend_kind tally_active_backend(const tally_context *ctx);
/* The backend that ran the context's last reduce, scan or stream update: on an AUTO context
 * the one the AUTO rule chose (TALLY_BACKEND_CPU before any call); else tally_active_backend. */
TALLY_API tally_backend_kind tally_last_backend(const tally_context *ctx);
/* The context's routing rule in one line, with this context's figures: for an AUTO context
 * where device and host memory go and from which size host data goes to the GPU, else the one
 * backend. A string owned by ctx, valid until the next call on it. */
TALLY_API const char *tally_auto_rule(const tally_context *ctx);
/* Threads a CPU context uses (including the caller). */
TALLY_API int tally_thread_count(const tally_context *ctx);
/* The CPU path this context uses ("scalar", "avx2", "avx512"). */
TALLY_API tally_isa tally_active_isa(const tally_context *ctx);
TALLY_API const char *tally_isa_name(tally_isa isa);
/* The best path this CPU supports. */
TALLY_API tally_isa tally_cpu_best_isa(void);
/* A short description of the device ("NVIDIA H200, 132 SMs, 139 GiB"), or "" for the CPU. */
TALLY_API const char *tally_device_description(const tally_context *ctx);

/* The detail message of the last failed call on this context ("" if none): it says what and
 * where ("tally_reduce: data is NULL but n = 5"). Valid until the next call on ctx. */
TALLY_API const char *tally_last_error(const tally_context *ctx);

/* ---- reductions ------------------------------------------------------------------------------ */
typedef struct tally_reduce_options {
    int omit_nan;   /* 0: NaN propagates in min/max/argmin/argmax/sum/mean (NumPy); 1: NaN is
                       skipped by every op (NumPy's nan* functions); count counts non-NaN values */
    int ddof;       /* for TALLY_VAR: divisor is n - ddof; 0 population (default), 1 sample */
} tally_reduce_options;

/* The value of one reduction. Result types:
 *   sum, prod:       i64 for signed integer input, u64 for unsigned, f64 for f32/f64;
 *   min, max:        the input value widened exactly: i64, u64 or f64;
 *   and, or, xor:    i64 for signed input, u64 for unsigned (the bit pattern, sign-extended);
 *   count:           u64;
 *   argmin, argmax:  index (u64) of the first extreme; value holds the extreme (as min/max);
 *   mean, var:       f64.
 * status is TALLY_OK, or why this one result failed (EMPTY, OVERFLOW, DOMAIN). */
typedef struct tally_result {
    tally_op op;
    tally_type type;     /* TALLY_I64, TALLY_U64 or TALLY_F64: which member of value is set */
    tally_status status;
    union {
        int64_t i64;
        uint64_t u64;
        double f64;
    } value;
    uint64_t index;      /* argmin/argmax only */
} tally_result;

/* Semantics (the same on every backend, bit for bit where stated):
 *   - integer sums are exact; a sum that does not fit i64/u64 gives TALLY_ERR_OVERFLOW;
 *     integer products likewise (exact or OVERFLOW);
 *   - float sums (f32 and f64 input) are correctly rounded: the exact sum rounded once to f64,
 *     so the bits never depend on thread count, SIMD path or backend; a NaN input gives NaN;
 *     +inf and -inf together give NaN; a finite sum beyond the f64 range gives +-inf;
 *   - float products are computed in f64 in a fixed order (deterministic, not correctly rounded);
 *   - float min/max follow IEEE 754-2019 minimum/maximum: NaN propagates, -0 < +0;
 *     with omit_nan, minimumNumber/maximumNumber; all NaN with omit_nan gives EMPTY;
 *   - argmin/argmax: the first occurrence; a NaN counts as the extreme unless omit_nan;
 *   - mean = correctly rounded sum / n; var = (exact sum of squared deviations from the mean,
 *     each deviation d rounded to f64, each square taken as the two doubles fl(d*d) and
 *     fl(d*d - fl(d*d)), which is d*d exactly unless d*d < 2^-968) / (n - ddof); both the
 *     same bits on every backend;
 *   - empty input: sum 0, prod 1, count 0, and all ones, or/xor 0; min, max, argmin, argmax,
 *     mean, var give TALLY_ERR_EMPTY.
 * data is a host pointer for the CPU backend; for CUDA and AUTO, a device or host pointer
 * (see tally_cuda.h and the AUTO rule). */

/* One reduction. Returns result->status (also stored there). */
TALLY_API tally_status tally_reduce(tally_context *ctx, tally_op op, tally_type type,
                                    const void *data, uint64_t n,
                                    const tally_reduce_options *opts /* NULL = defaults */,
                                    tally_result *result);

/* Several reductions fused in one pass over the data (two passes if var is asked).
 * results[i] gets ops[i]. Returns TALLY_OK if every result is OK, else the first failing
 * result's status (argument errors fail the whole call and fill every result's status). */
TALLY_API tally_status tally_reduce_many(tally_context *ctx, tally_type type, const void *data,
                                         uint64_t n, const tally_op *ops, size_t nops,
                                         const tally_reduce_options *opts,
                                         tally_result *results);

/* ---- batched (segmented) reductions ----------------------------------------------------------
 * Many independent reductions in one call, as CUB's segmented reduce: the rows of a matrix, or
 * segments of one array given by offsets. Each segment gets ops[0..nops-1] with exactly the
 * semantics of tally_reduce_many over that segment alone (empty segments included: sum 0, min
 * EMPTY, ...), the same bits. results holds nseg * nops entries, filled by the call:
 * results[s * nops + i] is ops[i] of segment s; argmin/argmax indices count from the segment's
 * first element. Returns TALLY_OK if every result is OK, else the status of the first failing
 * result in that order (tally_last_error names its segment); argument errors fail the whole
 * call. data is as in tally_reduce (host pointer on the CPU; on CUDA, device or host memory);
 * offsets is always host memory, read during the call only. nseg = 0 is a valid no-op. */

/* Segment s is the elements offsets[s] .. offsets[s+1]-1 of data: offsets has nseg + 1
 * nondecreasing entries (offsets[0] need not be 0; data must hold offsets[nseg] elements). */
TALLY_API tally_status tally_reduce_segments(tally_context *ctx, tally_type type, const void *data,
                                             const uint64_t *offsets, uint64_t nseg,
                                             const tally_op *ops, size_t nops,
                                             const tally_reduce_options *opts,
                                             tally_result *results);

/* Row r is the row_len elements starting row_stride elements after row r-1's start (a
 * C-contiguous matrix: row_stride = row_len; rows may also overlap or repeat). */
TALLY_API tally_status tally_reduce_rows(tally_context *ctx, tally_type type, const void *data,
                                         uint64_t nrows, uint64_t row_len, uint64_t row_stride,
                                         const tally_op *ops, size_t nops,
                                         const tally_reduce_options *opts, tally_result *results);

/* ---- streaming reductions --------------------------------------------------------------------
 * For data that arrives in pieces (a file larger than memory, a pipe): feed chunks in order,
 * read the results at any time. Sums stay exact across chunks, so the results equal one
 * tally_reduce_many over the concatenation, bit for bit, for every op except TALLY_VAR: a
 * stream cannot be read twice, so its variance comes from exact sums of x and x^2
 * (x^2 split exactly into two doubles), which is as accurate unless the variance is tiny
 * against the squared mean (relative error ~1e-16 * mean^2 / var). Indices of argmin/argmax
 * count from the first element of the first chunk. */
typedef struct tally_stream tally_stream;

TALLY_API tally_status tally_stream_create(tally_context *ctx, tally_type type,
                                           const tally_op *ops, size_t nops,
                                           const tally_reduce_options *opts,
                                           tally_stream **stream);
/* Adds n more elements (read during the call only). */
TALLY_API tally_status tally_stream_update(tally_stream *stream, const void *data, uint64_t n);
/* Fills results[0..nops-1] for everything fed so far; the stream can go on afterwards.
 * Returns like tally_reduce_many. */
TALLY_API tally_status tally_stream_results(const tally_stream *stream, tally_result *results);
/* Elements fed so far. */
TALLY_API uint64_t tally_stream_count(const tally_stream *stream);
TALLY_API void tally_stream_destroy(tally_stream *stream); /* NULL is ignored */

/* ---- scans ----------------------------------------------------------------------------------- */
typedef struct tally_scan_options {
    int exclusive;   /* 0: inclusive (out[i] = x0 op .. op xi); 1: exclusive (out[0] = init,
                        out[i] = init op x0 op .. op x(i-1)) */
    int has_init;    /* exclusive only: 1 to use init below; 0 uses the op's identity */
    union {
        int64_t i64; /* for signed integer types (converted to the element type) */
        uint64_t u64;/* for unsigned integer types */
        double f64;  /* for float types */
    } init;
} tally_scan_options;

/* Scan of sum, prod, min, max, and, or, xor over n elements of type, written in the input type
 * to out (n elements). out == in is allowed; any other overlap gives TALLY_ERR_OVERLAP.
 * Integer sum/prod scans wrap modulo 2^bits, as C and CUB do. Float scans are deterministic
 * run to run and independent of the thread count (but for the sign and payload of a NaN output,
 * which follow the hardware where two NaNs meet), and min/max scans follow the reduce
 * semantics (NaN propagates). On the CPU (every SIMD path alike, and the Vulkan backend) a float
 * sum/prod scan is evaluated in this fixed order, in the element's type:
 *   - blocks of 4096 elements; out[i] = carry op l[i] (inclusive), or out[b] = carry at the
 *     block start b and out[i] = carry op l[i-1] after it (exclusive); the next block's carry
 *     is carry op l[last] (for an inclusive scan, the block's last output);
 *   - a block's local values l: in groups of 16 elements from the block start, a fixed prefix
 *     p = x; for s = 1, 2, 4: p[k] = p[k-s] op p[k] where k mod 8 >= s (each half of 8 on its
 *     own); then p[k] = p[7] op p[k] for k >= 8. In the block's first group l = p, in each
 *     later one l[k] = L op p[k], L being the previous group's last l.
 * An exclusive scan without init starts from +0.0 (sum), an inclusive one from -0.0, so that
 * out[0] = x[0] exactly. Error bound (no overflow): each input meets at most
 * d(i) = 260 + floor(i / 4096) roundings on its way into out[i], so out[i] of a sum scan is
 * within gamma(d(i)) * S of the exact sum of what it covers (the init, if any, and x[0] .. x[i],
 * or .. x[i-1] when exclusive), S being the sum of their magnitudes; gamma(d) = d*u / (1 - d*u),
 * u = 2^-24 (f32) or 2^-53 (f64). A product scan's relative error is at most gamma(i + 1) (one
 * rounding per multiplication, in any order), barring underflow. */
TALLY_API tally_status tally_scan(tally_context *ctx, tally_op op, tally_type type,
                                  const void *in, void *out, uint64_t n,
                                  const tally_scan_options *opts /* NULL = inclusive */);

#ifdef __cplusplus
}
#endif
#endif /* TALLY_H */
