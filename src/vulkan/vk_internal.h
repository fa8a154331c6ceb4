/* The Vulkan backend's internal interface (vk_backend.c: devices, buffers, pipelines;
 * vk_reduce.c, vk_scan.c: the host side of the shaders). Not installed. */
#ifndef TALLY_VK_INTERNAL_H
#define TALLY_VK_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include "core/backend.h"
#include "core/exact_sum.h"
#include "tally_vulkan.h"
#include "vulkan/vk_loader.h"

#define TVK_WG 256            /* workgroup size of every shader */
#define TVK_MAX_SETS 1024     /* descriptor sets (dispatches) in one command buffer */
#define TVK_MAX_PIPES 4096
#define TVK_PC_BYTES 64       /* push constant bytes */
#define TVK_MAX_WG_PART 1024    /* workgroups of a call whose fields travel as partial records */
#define TVK_MAX_WG 8192         /* workgroups of a segment otherwise */
#define TVK_ACC_STRIDE 1024     /* bytes of one call's accumulator (reduce.comp's struct Acc) */
#define TVK_REC_STRIDE 1024     /* bytes of one call's record in hostres */
#define TVK_NBIND 5             /* storage-buffer bindings of every shader's set (most use 0-3) */
#define TVK_ACC_BYTES 640       /* reduce.comp's std430 struct Acc: its array stride */
#define TVK_SEG_GROUP 32768u    /* segments of one segmented dispatch (one workgroup each; the
                                   dispatch count every device takes is 65535) */
#define TVK_MAX_BATCH TALLY_VULKAN_MAX_BATCH      /* calls recorded into one command buffer (tally_vulkan_batch_*,
                                   tally_reduce_segments): accumulator and record slots */

/* shaders; _DP: the same source declaring IEEE subnormals (DenormPreserve), for devices that
 * support it */
enum { TVK_SH_REDUCE, TVK_SH_SCAN, TVK_SH_SCAN1, TVK_SH_FPROD, TVK_SH_FSCAN,
       TVK_SH_FPROD_DP, TVK_SH_FSCAN_DP, TVK_SH_FSCAN1, TVK_SH_FSCAN1_DP, TVK_SH_SPEC,
       TVK_SH_PROBE, TVK_SH_FSCAN1_CLK, TVK_SH_COPY, TVK_SH_COUNT };

/* reduce.comp's struct Partial (std430) */
typedef struct tvk_partial {
    uint64_t nans, sum_lo, sum_hi, kmin, kmax, imin, imax, first_nan, band, bor, bxor, pmag;
    uint32_t pflags, xflags, pad0, pad1;
    int64_t chunk[TALLY_EXACT_CHUNKS];
} tvk_partial;
#define TVK_XF_EDGE 0x80000000u
#define TVK_N_SQDEV 1024u     /* reduce.comp's feature bit of the variance pass */
#define TVK_N_PACK 2048u      /* reduce.comp: argmin/argmax key and index packed in 64 bits */

/* reduce.comp's push constants (fin: 1 in the finish dispatch, 0 in the fold dispatches) */
typedef struct tvk_reduce_pc {
    uint64_t n, gbase, mean_bits;
    uint32_t head, vec_per_wg, part0, nvec, total_wg, fin;
} tvk_reduce_pc;

typedef struct tvk_buf {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    void *map;           /* host buffers: mapped for the buffer's life */
} tvk_buf;

typedef struct tvk_range {
    VkBuffer buf;
    VkDeviceSize off, range;
} tvk_range;

typedef struct tvk_pipe {
    int shader;
    tally_type type;
    uint32_t spec[3];
    VkPipeline pipe;
} tvk_pipe;

/* Where the data of a call is: a device buffer and offset; host is the host copy when the call
 * came with a host pointer (NULL for tally_vulkan_*_buffer). */
typedef struct tvk_src {
    VkBuffer buf;
    VkDeviceSize off;
    const void *host;
} tvk_src;

/* benchmark buffer slots (tally_vulkan_bench_buffer): 0..3 for the data, 4 for bench_vulkan's
 * clock heater */
#define TVK_BENCH_SLOTS 5

typedef struct tvk_state {
    tvk_instance_fns fi;
    tvk_device_fns fd;
    VkInstance inst;
    VkDebugUtilsMessengerEXT dbg;
    VkPhysicalDevice phys;
    VkDevice dev;
    VkQueue queue;
    uint32_t qfam;
    uint32_t timestamp_valid;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties memprops;
    tally_vulkan_device_info info;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkDescriptorPool dpool;
    VkCommandPool cpool;
    VkCommandBuffer cb;
    VkFence fence;
    VkPipelineCache pcache;
    VkShaderModule modules[TVK_SH_COUNT][TALLY_TYPE_COUNT];
    tvk_pipe pipes[TVK_MAX_PIPES];
    int npipes;
    int nsets;
    int open;                 /* a command buffer is being recorded by the caller */
    tvk_buf staging;          /* host-visible: uploads and downloads */
    tvk_buf dbuf, dbuf2;      /* device: host data copied in; scan output */
    tvk_buf parts;            /* device: reduce partials, scan tile states */
    tvk_buf hostres;          /* host-visible: results read back */
    tvk_buf aux;              /* device: product lanes, scan carries */
    tvk_buf acc;              /* device: reduce accumulators (zero between calls), scan state */
    tvk_buf segtab;           /* host-visible: reduce.comp's segment table (segmented mode) */
    tvk_buf segres;           /* host-visible: the segments' records */
    tvk_buf segacc;           /* device: the segments' accumulators (zero between calls) */
    int segacc_zeroed;
    tvk_buf dummy_ro;         /* device: bound at binding 4 by the shaders that never read it */
    uint64_t short_bytes;     /* tally_reduce_segments: segments of at most this many bytes run
                                 in segmented dispatches (TALLY_VULKAN_SHORT_BYTES; 0: never) */
    tvk_buf dummy;            /* device: bound where a shader has nothing to bind */
    tvk_buf sval, sflag;      /* device: scan1.comp's tile values and flags (flags zeroed when
                                 made; a call's epoch tells its states from earlier calls') */
    uint64_t scan_stats_at;   /* bench: byte offset of scan1's counters in sflag (0: none) */
    int fscan_probe;          /* bench: fscan1.comp's clock variant (VK_KHR_shader_clock enabled) */
    uint32_t fscan_probe_wg;  /* workgroups of the last probed call (sval: 8 words each) */
    uint64_t fscan_probe_at;  /* ... their first byte in sval (after f64's tile values) */
    uint32_t scan_epoch;      /* the last scan1 call's epoch (0: sflag must be cleared first) */
    int scan1;                /* scans of the associative ops in one pass (scan1.comp); else
                                 reduce-then-scan (scan.comp) */
    int scan1_able;           /* the device can run scan1.comp (its features are enabled) */
    uint32_t scan_spins;      /* scan1: look-back steps without progress before a fallback */
    uint32_t sm_count;        /* NVIDIA's SMs (VK_NV_shader_sm_builtins' property), else 0 */
    int scan_reverse;         /* tests: scan1's workgroups take the tiles in reverse order */
    uint32_t scan_lookback;   /* TALLY_VULKAN_SCAN_LOOKBACK: scan1's look-back by the device's
                                 default (0: sg on GPUs, wg on CPU devices), by subgroup 0 (1: "sg"),
                                 by every subgroup (2: "sg-all", tests), by the workgroup (3: "wg") */
    int scan_stats;           /* bench: TALLY_VULKAN_SCAN_STATS=1, scan1 counts its look-back steps */
    int acc_zeroed;           /* acc's reduce slots were cleared since it was (re)made */
    int push_desc;            /* VK_KHR_push_descriptor: descriptors pushed, no sets */
    /* TALLY_VULKAN_PIPELINE_STATS=1 (benchmarks; VK_KHR_pipeline_executable_properties): each new
     * pipeline's compiler statistics (registers, ...) printed on stderr */
    PFN_vkGetPipelineExecutablePropertiesKHR get_exec_props;
    PFN_vkGetPipelineExecutableStatisticsKHR get_exec_stats;
    int log_pipes; /* TALLY_VULKAN_LOG_PIPELINES: each pipeline created, and its time */
    PFN_vkCmdPushDescriptorSetKHR push_fn;
    VkDeviceSize align;       /* storage-buffer offset alignment (>= 16) */
    uint64_t seg_bytes;       /* bytes per dispatch segment (one binding's range) */
    int threads;              /* for the CPU fallback context */
    int float_shaders;        /* TALLY_VULKAN_FLOAT_SHADERS: float product/scan shaders even
                                 without denorm preservation (tests) */
    int float_scan;           /* TALLY_VULKAN_FLOAT_SCAN: float sum/product scans by default (0;
                                 vk_scan.c, fscan_on_device), on the CPU backend (1: "cpu"), in
                                 three passes (2: "3pass", fscan.comp) or in one (3: "1pass",
                                 fscan1.comp, where scan1_able) */
    int validation;
    int spec;                 /* one-shot f32/f64 sums try spec.comp's speculative compensated
                                 sum first (TALLY_VULKAN_SPEC=0: never) */
    uint32_t spec_u;          /* spec.comp: 16-byte loads in flight per invocation (8, or 4:
                                 TALLY_VULKAN_SPEC_U=4) */
    uint32_t spec_t;          /* spec.comp: independent triples per invocation (1, 2 or 4:
                                 TALLY_VULKAN_SPEC_T) */
    uint32_t spec_groups;     /* spec.comp: fold workgroups per segment at most (0: 2048;
                                 TALLY_VULKAN_SPEC_GROUPS) */
    uint32_t spec_sf;         /* spec.comp's SF bits (1: step written out, TALLY_VULKAN_SPEC_STEP;
                                 2: f32 vectors summed exactly first, TALLY_VULKAN_SPEC_Q4; 4: selects
                                 for the f32 widening's branches, TALLY_VULKAN_SPEC_SEL) */
    uint64_t spec_answered, spec_declined; /* bench/tests: calls the tier answered / declined */
    tally_context *cpu;       /* the CPU fallback */
    int timing;               /* benchmarks: timestamps around every submission */
    double poll_us;           /* poll a submission's fence this long before sleeping on it */
    int host_every;           /* every barrier also makes writes visible to the host (as before;
                                 TALLY_VULKAN_BARRIERS=host), not only the last one (vk_backend.c) */
    VkQueryPool qpool;
    double gpu_ns;            /* summed over the submissions since the last read */
    double split_ns;          /* the same, start to the end of the first reduce pass's folds */
    int split_written;        /* this command buffer wrote that timestamp (query 2) */
    tvk_buf bench[TVK_BENCH_SLOTS]; /* benchmarks: device-local buffers they asked for */
    VkDeviceSize dedicated_min; /* device-local buffers of at least this many bytes get a
                                   dedicated allocation (TALLY_VULKAN_DEDICATED_BYTES; 0: none) */
    char *pcache_file;        /* where the pipeline cache is kept between runs (NULL: nowhere) */
    int pcache_new;           /* pipelines made since the cache was loaded */
    /* tally_vulkan_batch_*: the calls recorded since batch_begin (run at batch_end); host
     * data copied into barena (16-byte aligned), ops into bops */
    int batch;
    struct tvk_bcall *bcalls;
    uint64_t nbcalls, capbcalls;
    tally_op *bops;
    uint64_t nbops, capbops;
    unsigned char *barena;
    uint64_t narena, caparena;
    pthread_mutex_t dbg_lock;
    uint64_t dbg_count;
    char dbg_last[512], dbg_copy[512];
    char desc[400];
} tvk_state;

tally_status tvk_fail(tally_context *ctx, VkResult r, const char *fn, const char *what);
tally_status tvk_buf_ensure(tally_context *ctx, tvk_state *s, tvk_buf *b, VkDeviceSize size,
                            int host, const char *fn);
void tvk_buf_free(tvk_state *s, tvk_buf *b);
tally_status tvk_pipeline(tally_context *ctx, tvk_state *s, int shader, tally_type t,
                          uint32_t spec0, uint32_t spec1, uint32_t spec2, VkPipeline *out);
tally_status tvk_begin(tally_context *ctx, tvk_state *s, const char *fn);
tally_status tvk_submit_wait(tally_context *ctx, tvk_state *s, const char *fn);
void tvk_barrier(tvk_state *s);
tally_status tvk_bind(tally_context *ctx, tvk_state *s, VkPipeline pipe, const tvk_range b[4],
                      const void *pc, uint32_t pc_size, const char *fn);
/* The same with the fifth binding (reduce.comp's segment table). */
tally_status tvk_bind5(tally_context *ctx, tvk_state *s, VkPipeline pipe, const tvk_range b[TVK_NBIND],
                       const void *pc, uint32_t pc_size, const char *fn);
tvk_range tvk_window(const tvk_state *s, VkBuffer buf, VkDeviceSize off, VkDeviceSize bytes,
                     uint32_t *head);
tally_status tvk_cpu(tally_context *ctx, tvk_state *s, tally_context **cpu);
tally_status tvk_upload(tally_context *ctx, tvk_state *s, const void *data, uint64_t bytes,
                        const char *fn);
tally_status tvk_download(tally_context *ctx, tvk_state *s, VkBuffer buf, VkDeviceSize off,
                          uint64_t bytes, const void **view, const char *fn);
tvk_state *tvk_state_of(const tally_context *ctx);
/* A benchmark hook (bench/bench_vulkan.c declares them) that sets one setting of a context's
 * Vulkan state and returns the previous value (0 for a context without one). */
#define TVK_BENCH_SETTER(fname, T, field)                                                        \
    TALLY_API T fname(tally_context *ctx, T value)                                               \
    {                                                                                            \
        tvk_state *s = tvk_state_of(ctx);                                                        \
        if (!s) return 0;                                                                        \
        T old = (T)s->field;                                                                     \
        s->field = value;                                                                        \
        return old;                                                                              \
    }

/* The reduce accumulators, zero between calls; cleared in the open command buffer when
 * (re)made. */
tally_status tvk_ensure_acc(tally_context *ctx, tvk_state *s, const char *fn);

/* vk_reduce.c: reduce n elements at src (with s->open, the command buffer is already begun
 * and holds the upload). */
tally_status tvk_reduce(tally_context *ctx, tvk_state *s, const char *fn, tally_type type,
                        tvk_src src, uint64_t n, const tally_op *ops, size_t nops,
                        const tally_reduce_options *opts, tally_result *results);
/* One reduce call of a list: results (nops of them) are written by tvk_reduce_list. */
typedef struct tvk_item {
    tally_type type;
    tvk_src src;
    uint64_t n;
    const tally_op *ops;
    size_t nops;
    const tally_reduce_options *opts;
    tally_result *results;
} tvk_item;
/* Runs the items, TVK_MAX_BATCH (or fewer) to a command buffer: results as tvk_reduce's. With
 * open, the command buffer is already begun and holds the upload of the host items' data. */
tally_status tvk_reduce_list(tally_context *ctx, tvk_state *s, const char *fn, const tvk_item *items,
                             uint64_t nitems, int open);
/* Runs short items in segmented dispatches: reduce.comp with one workgroup per item, up to
 * TVK_SEG_GROUP items per fold dispatch and one finish dispatch for them all. The items share
 * type, ops and options, and their data lies in one binding's range of s->dbuf (src.off:
 * their byte offsets). Results as tvk_reduce_list's. With open, the command buffer is already
 * begun and holds the upload. */
tally_status tvk_reduce_short(tally_context *ctx, tvk_state *s, const char *fn, const tvk_item *items,
                              uint64_t nitems, uint64_t dbytes, int open);

/* vk_scan.c */
tally_status tvk_scan(tally_context *ctx, tvk_state *s, const char *fn, tally_op op,
                      tally_type type, tvk_src in, VkBuffer out, VkDeviceSize out_off, uint64_t n,
                      const tally_scan_options *opts);
tally_status tvk_scan_host(tally_context *ctx, tvk_state *s, tally_op op, tally_type type,
                           const void *in, void *out, uint64_t n, const tally_scan_options *opts);

#endif
