/* tally_vulkan.h: what a Vulkan context offers beyond tally.h.
 *
 * A Vulkan context (tally_create with TALLY_BACKEND_VULKAN; AUTO picks it when there is no CUDA
 * GPU but a Vulkan GPU, never a CPU-emulated device such as lavapipe) runs tally's reductions
 * and scans as compute shaders on the Vulkan physical device options.device indexes (in the
 * order vkEnumeratePhysicalDevices gives, the order of tally_vulkan_get_device_info).
 *   - tally_reduce / tally_reduce_many / tally_scan take host pointers: the data is copied
 *     through device memory. tally_vulkan_reduce_buffer / tally_vulkan_scan_buffer take data
 *     already in a VkBuffer of the context's device (see tally_vulkan_get_handles).
 *   - Results are the CPU backend's, bit for bit: integer sums exact (OVERFLOW when they do not
 *     fit), float sums correctly rounded, products, float scans (their fixed block order, see
 *     tally.h) and the variance included. Where a device cannot promise IEEE subnormals (no
 *     shaderDenormPreserveFloat32/64, lavapipe for one), float products and float sum/product
 *     scans run on the host's CPU backend instead, and so do the rare variance inputs that
 *     need it (differences from the mean below 2^-463 or above 2^510); the results are the
 *     same, the speed is the CPU's.
 *   - The device needs Vulkan 1.1, shaderInt64, shaderSharedInt64Atomics and
 *     shaderBufferInt64Atomics (64-bit integers in shaders, 64-bit atomics in shared and buffer
 *     memory: every desktop GPU and lavapipe). Devices
 *     without them are listed with usable = 0 and the reason, and tally_create on them fails
 *     with TALLY_ERR_BACKEND_UNAVAILABLE saying which feature is missing.
 *   - The loader (libvulkan.so.1) is opened at run time: a machine without it still loads
 *     libtally, and TALLY_BACKEND_VULKAN is then unavailable with the reason.
 * Environment: TALLY_VULKAN_VALIDATION=1 turns on the Khronos validation layer for contexts
 * created afterwards (messages are counted, never printed: tally_vulkan_validation_messages);
 * TALLY_VULKAN_LOADER=path opens another loader library.
 * A context holds one queue, one command buffer and its scratch buffers: calls on one context
 * run one after the other and return when the work is done. The functions below fail with
 * TALLY_ERR_INVALID_ARGUMENT on a context that is not a Vulkan one. */
#ifndef TALLY_VULKAN_H
#define TALLY_VULKAN_H

#include <vulkan/vulkan.h>
#include "tally.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tally_vulkan_device_info {
    char name[256];            /* "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)" */
    char driver[256];          /* driver name and info ("NVIDIA 570.124.06", "llvmpipe Mesa 22.3.6") */
    uint32_t api_version;      /* VK_API_VERSION_MAJOR/MINOR/PATCH decode it */
    uint32_t vendor_id, device_id;
    int device_type;           /* VkPhysicalDeviceType: 1 integrated, 2 discrete, 3 virtual, 4 CPU */
    uint32_t subgroup_size;
    int subgroup_arithmetic;   /* subgroupAdd & co. in compute shaders */
    int int64;                 /* shaderInt64 */
    int int64_shared_atomics;  /* shaderSharedInt64Atomics */
    int float64;               /* shaderFloat64 */
    int denorm_preserve32, denorm_preserve64; /* shaderDenormPreserveFloat32 / 64 */
    int usable;                /* tally can run on it */
    char why_not[160];         /* when usable is 0: what is missing */
} tally_vulkan_device_info;

/* The number of Vulkan physical devices on this machine (0 without a loader or a device);
 * *why (may be NULL) gets a static sentence when it is 0. */
TALLY_API int tally_vulkan_device_count(const char **why);
/* Fills *info for device index (0 .. count-1). TALLY_ERR_INVALID_ARGUMENT for a bad index,
 * BACKEND_UNAVAILABLE without a loader. */
TALLY_API tally_status tally_vulkan_get_device_info(int index, tally_vulkan_device_info *info);

/* The Vulkan objects a Vulkan context runs on (owned by the context: do not destroy them). Make
 * your VkBuffers on this device, with VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, to hand them to the
 * functions below. queue is the one tally submits to (externally synchronised by Vulkan's
 * rules: do not submit to it from another thread during a tally call). */
typedef struct tally_vulkan_handles {
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
} tally_vulkan_handles;
TALLY_API tally_status tally_vulkan_get_handles(const tally_context *ctx, tally_vulkan_handles *h);

/* tally_reduce_many over n elements of type stored in buffer from byte offset (a multiple of the
 * element size; any alignment beyond that). The buffer must hold offset + n * size bytes
 * rounded up to a multiple of 4, have STORAGE_BUFFER usage, and its contents must be visible
 * to the device (your writes finished: a fence waited or a queue idle). Returns when done. */
TALLY_API tally_status tally_vulkan_reduce_buffer(tally_context *ctx, tally_type type,
                                                  VkBuffer buffer, VkDeviceSize offset,
                                                  uint64_t n, const tally_op *ops, size_t nops,
                                                  const tally_reduce_options *opts,
                                                  tally_result *results);

/* tally_scan from (in, in_offset) to (out, out_offset), n elements; in place when the buffer
 * and offset are equal; other overlaps of the same buffer give TALLY_ERR_OVERLAP. Same buffer
 * rules as above; out needs STORAGE_BUFFER usage too. Returns when the output is written. */
TALLY_API tally_status tally_vulkan_scan_buffer(tally_context *ctx, tally_op op, tally_type type,
                                                VkBuffer in, VkDeviceSize in_offset,
                                                VkBuffer out, VkDeviceSize out_offset,
                                                uint64_t n, const tally_scan_options *opts);

/* Batches: many small reductions in one command buffer, one submission and one wait for all
 * (a call's cost at 2^10-2^16 elements is mostly the submission and the wait).
 * tally_vulkan_batch_begin opens a batch on ctx. Until tally_vulkan_batch_end, tally_reduce,
 * tally_reduce_many and tally_vulkan_reduce_buffer on ctx are recorded, not run: each checks
 * its arguments (an argument error fails that call alone, which is not recorded, and the batch
 * stays open) and returns TALLY_OK with its results set to zero values and status TALLY_OK as
 * placeholders. tally_vulkan_batch_end runs every recorded call, TALLY_VULKAN_MAX_BATCH to a
 * command buffer, and writes every call's results.
 * Ownership and lifetime: host data (tally_reduce, tally_reduce_many) is copied during the
 * call and may be reused at once; ops and opts are copied too. A VkBuffer is read during
 * tally_vulkan_batch_end, not during the call: its contents must be ready then, and the buffer
 * must live until batch_end returns. The results pointer of each call is kept: it must stay
 * valid (and not be read for values) until batch_end returns.
 * Errors: batch_end returns TALLY_OK if every result of every call is OK, else the status of the
 * first failing result in call order (tally_last_error names the call: "call 3 of the batch");
 * every call's results are written either way, each with its own status, as tally_reduce_many
 * would fill them. A device failure during batch_end sets every recorded result's status to it
 * and returns it. The batch is closed when batch_end returns, whatever it returns.
 * Inside a batch: scans (tally_scan, tally_vulkan_scan_buffer) fail with
 * TALLY_ERR_INVALID_ARGUMENT (they write memory the batched calls may read); tally_reduce_segments
 * and tally_reduce_rows run at once (they do not join the batch). Float products and the rare
 * variance inputs that run on the CPU backend (see above) do so at batch_end, after reading the
 * data back for VkBuffer calls. Limits: none on the number of calls (host memory for the call
 * list and the host data copies); a second begin before end, or end without begin, is
 * TALLY_ERR_INVALID_ARGUMENT. Destroying a context with an open batch drops it (no results are
 * written). */
#define TALLY_VULKAN_MAX_BATCH 256
TALLY_API tally_status tally_vulkan_batch_begin(tally_context *ctx);
TALLY_API tally_status tally_vulkan_batch_end(tally_context *ctx);

/* With TALLY_VULKAN_VALIDATION=1: the number of validation messages of severity warning or error
 * reported on this context so far (0 otherwise); *last (may be NULL) gets the last one's text
 * ("" if none), valid until the next call on ctx. */
TALLY_API uint64_t tally_vulkan_validation_messages(const tally_context *ctx, const char **last);

#ifdef __cplusplus
}
#endif
#endif /* TALLY_VULKAN_H */
