/* The Vulkan backend: instance and device set-up, pipelines (created once per context, on first
 * use), scratch buffers, and the host side of every dispatch. The shaders (src/vulkan/shaders)
 * compute partial records that the host turns into results with the core's own code
 * (core/partial.c, core/exact_sum.h), so results are the CPU backend's bit for bit.
 * The library never prints: validation-layer messages are counted and kept for
 * tally_vulkan_validation_messages. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/api_check.h"
#include "core/backend.h"
#include "core/partial.h"
#include "core/types.h"
#include "vulkan/vk_internal.h"

/* ---- SPIR-V modules (generated from the shaders by the build, one per shader and type) ---- */
/* X(shader enum suffix, file stem): shaders built for every type, and for the float types */
#define TVK_ALL_SHADERS(X) X(REDUCE, reduce) X(SCAN, scan) X(SCAN1, scan1)
#define TVK_FLOAT_SHADERS(X) X(FPROD, fprod) X(FSCAN, fscan) X(FPROD_DP, fprod_dp) X(FSCAN_DP, fscan_dp) \
    X(FSCAN1, fscan1) X(FSCAN1_DP, fscan1_dp) X(SPEC, spec) X(PROBE, probe) X(FSCAN1_CLK, fscan1_clk) \
    X(COPY, copy)
#define TVK_EXTERN(sh, name)                                                                    \
    extern const unsigned char tvk_spv_##sh##_##name[];                                         \
    extern const size_t tvk_spv_##sh##_##name##_size;
#define TVK_EXTERN_ALL(E, name, C, is_int, sgn, W)                                              \
    TVK_EXTERN(reduce, name) TVK_EXTERN(scan, name) TVK_EXTERN(scan1, name)
#define TVK_EXTERN_FLOAT(E, name, C, is_int, sgn, W)                                             \
    TVK_EXTERN(fprod, name) TVK_EXTERN(fscan, name) TVK_EXTERN(fprod_dp, name) TVK_EXTERN(fscan_dp, name) \
    TVK_EXTERN(fscan1, name) TVK_EXTERN(fscan1_dp, name) TVK_EXTERN(spec, name) TVK_EXTERN(probe, name) \
    TVK_EXTERN(fscan1_clk, name) TVK_EXTERN(copy, name)
TALLY_TYPES(TVK_EXTERN_ALL)
TALLY_FLOAT_TYPES(TVK_EXTERN_FLOAT)

static const unsigned char *spv_code(int shader, tally_type t, size_t *size)
{
    switch (shader) {
#define TVK_CASE_T(stem, E, name) case TALLY_##E: *size = tvk_spv_##stem##_##name##_size; return tvk_spv_##stem##_##name;
#define TVK_SHADER_ALL(SE, stem)                                                                \
    case TVK_SH_##SE:                                                                           \
        switch (t) {                                                                            \
            TALLY_TYPES(TVK_CASE_##stem)                                                        \
        }                                                                                       \
        break;
#define TVK_SHADER_FLOAT(SE, stem)                                                              \
    case TVK_SH_##SE:                                                                           \
        switch (t) {                                                                            \
            TALLY_FLOAT_TYPES(TVK_CASE_##stem)                                                  \
        default: break;                                                                         \
        }                                                                                       \
        break;
#define TVK_CASE_reduce(E, name, C, i, s, W) TVK_CASE_T(reduce, E, name)
#define TVK_CASE_scan(E, name, C, i, s, W) TVK_CASE_T(scan, E, name)
#define TVK_CASE_scan1(E, name, C, i, s, W) TVK_CASE_T(scan1, E, name)
#define TVK_CASE_fprod(E, name, C, i, s, W) TVK_CASE_T(fprod, E, name)
#define TVK_CASE_fscan(E, name, C, i, s, W) TVK_CASE_T(fscan, E, name)
#define TVK_CASE_fprod_dp(E, name, C, i, s, W) TVK_CASE_T(fprod_dp, E, name)
#define TVK_CASE_fscan_dp(E, name, C, i, s, W) TVK_CASE_T(fscan_dp, E, name)
#define TVK_CASE_spec(E, name, C, i, s, W) TVK_CASE_T(spec, E, name)
#define TVK_CASE_probe(E, name, C, i, s, W) TVK_CASE_T(probe, E, name)
#define TVK_CASE_fscan1(E, name, C, i, s, W) TVK_CASE_T(fscan1, E, name)
#define TVK_CASE_fscan1_dp(E, name, C, i, s, W) TVK_CASE_T(fscan1_dp, E, name)
#define TVK_CASE_fscan1_clk(E, name, C, i, s, W) TVK_CASE_T(fscan1_clk, E, name)
#define TVK_CASE_copy(E, name, C, i, s, W) TVK_CASE_T(copy, E, name)
        TVK_ALL_SHADERS(TVK_SHADER_ALL)
        TVK_FLOAT_SHADERS(TVK_SHADER_FLOAT)
    }
    *size = 0;
    return NULL;
}

/* ---- errors ---------------------------------------------------------------------------- */
static const char *vk_result_name(VkResult r)
{
    switch (r) {
#define R_(x) case x: return #x;
        R_(VK_NOT_READY) R_(VK_TIMEOUT) R_(VK_INCOMPLETE) R_(VK_ERROR_OUT_OF_HOST_MEMORY)
        R_(VK_ERROR_OUT_OF_DEVICE_MEMORY) R_(VK_ERROR_INITIALIZATION_FAILED)
        R_(VK_ERROR_DEVICE_LOST) R_(VK_ERROR_MEMORY_MAP_FAILED) R_(VK_ERROR_LAYER_NOT_PRESENT)
        R_(VK_ERROR_EXTENSION_NOT_PRESENT) R_(VK_ERROR_FEATURE_NOT_PRESENT)
        R_(VK_ERROR_INCOMPATIBLE_DRIVER) R_(VK_ERROR_TOO_MANY_OBJECTS)
        R_(VK_ERROR_FORMAT_NOT_SUPPORTED) R_(VK_ERROR_FRAGMENTED_POOL) R_(VK_ERROR_UNKNOWN)
        R_(VK_ERROR_OUT_OF_POOL_MEMORY)
#undef R_
    default: return "VkResult error";
    }
}

tally_status tvk_fail(tally_context *ctx, VkResult r, const char *fn, const char *what)
{
    tally_status st = (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
                          ? TALLY_ERR_OUT_OF_MEMORY
                          : TALLY_ERR_BACKEND_FAILURE;
    return tally_set_error(ctx, st, "%s: %s failed: %s (%d)", fn, what, vk_result_name(r), (int)r);
}

#define TVK_TRY(ctx, fn, call)                                                                  \
    do {                                                                                        \
        VkResult r_ = (call);                                                                   \
        if (r_ != VK_SUCCESS) return tvk_fail((ctx), r_, (fn), #call);                          \
    } while (0)

/* ---- devices ------------------------------------------------------------------------------ */
static VkBool32 VKAPI_PTR debug_cb(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                   const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)types;
    tvk_state *s = user;
    if (sev & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
               VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)) {
        pthread_mutex_lock(&s->dbg_lock);
        s->dbg_count++;
        snprintf(s->dbg_last, sizeof s->dbg_last, "%s", data && data->pMessage ? data->pMessage : "?");
        pthread_mutex_unlock(&s->dbg_lock);
    }
    return VK_FALSE;
}

static int want_validation(void)
{
    const char *v = getenv("TALLY_VULKAN_VALIDATION");
    return v && *v && strcmp(v, "0") != 0;
}

/* Whether the validation layer offers VK_EXT_validation_features (for synchronization
 * validation). */
static int layer_has_features(const tvk_instance_fns *f, const char *layer)
{
    uint32_t ne = 0;
    if (f->vkEnumerateInstanceExtensionProperties(layer, &ne, NULL) != VK_SUCCESS || ne == 0) return 0;
    VkExtensionProperties *ep = calloc(ne, sizeof *ep);
    int found = 0;
    if (ep && f->vkEnumerateInstanceExtensionProperties(layer, &ne, ep) == VK_SUCCESS)
        for (uint32_t i = 0; i < ne; i++) found |= !strcmp(ep[i].extensionName, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    free(ep);
    return found;
}

/* Creates an instance (with the validation layer when asked and present, and its
 * synchronization validation where it has it: a missing pipeline barrier between dispatches or
 * submissions is a message, even on a device whose scheduling would hide it). */
static VkResult make_instance(tvk_instance_fns *f, PFN_vkGetInstanceProcAddr gipa, int validation,
                              VkInstance *inst, int *have_dbg)
{
    tvk_load_instance_fns(f, gipa, VK_NULL_HANDLE);
    *have_dbg = 0;
    if (!f->vkCreateInstance) return VK_ERROR_INITIALIZATION_FAILED;
    uint32_t api = VK_API_VERSION_1_0;
    if (f->vkEnumerateInstanceVersion) f->vkEnumerateInstanceVersion(&api);
    if (api < VK_API_VERSION_1_1) return VK_ERROR_INCOMPATIBLE_DRIVER;
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "tally", 1, "tally", 1,
                             VK_API_VERSION_1_2};
    if (api < VK_API_VERSION_1_2) app.apiVersion = VK_API_VERSION_1_1;
    const char *layers[1] = {"VK_LAYER_KHRONOS_validation"};
    const char *exts[2] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
    VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT vf = {VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT, NULL, 1, &sync, 0, NULL};
    VkInstanceCreateInfo ci = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL};
    if (validation) {
        uint32_t nl = 0;
        f->vkEnumerateInstanceLayerProperties(&nl, NULL);
        VkLayerProperties *lp = calloc(nl ? nl : 1, sizeof *lp);
        int found = 0;
        if (lp && f->vkEnumerateInstanceLayerProperties(&nl, lp) == VK_SUCCESS)
            for (uint32_t i = 0; i < nl; i++) found |= !strcmp(lp[i].layerName, layers[0]);
        free(lp);
        if (found) {
            ci.enabledLayerCount = 1;
            ci.ppEnabledLayerNames = layers;
            ci.enabledExtensionCount = 1;
            ci.ppEnabledExtensionNames = exts;
            if (layer_has_features(f, layers[0])) {
                ci.enabledExtensionCount = 2;
                ci.pNext = &vf;
            }
            *have_dbg = 1;
        }
    }
    VkResult r = f->vkCreateInstance(&ci, NULL, inst);
    if (r != VK_SUCCESS) return r;
    tvk_load_instance_fns(f, gipa, *inst);
    return VK_SUCCESS;
}

/* What tally needs of a device; fills info. */
static void probe_device(const tvk_instance_fns *f, VkPhysicalDevice pd, tally_vulkan_device_info *info)
{
    memset(info, 0, sizeof *info);
    VkPhysicalDeviceProperties p;
    f->vkGetPhysicalDeviceProperties(pd, &p);
    snprintf(info->name, sizeof info->name, "%s", p.deviceName);
    info->api_version = p.apiVersion;
    info->vendor_id = p.vendorID;
    info->device_id = p.deviceID;
    info->device_type = (int)p.deviceType;
    VkPhysicalDeviceSubgroupProperties sg = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceFloatControlsProperties fc = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
    VkPhysicalDeviceDriverProperties dp = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sg};
    int v12 = p.apiVersion >= VK_API_VERSION_1_2;
    if (v12) {
        sg.pNext = &fc;
        fc.pNext = &dp;
    }
    if (f->vkGetPhysicalDeviceProperties2) f->vkGetPhysicalDeviceProperties2(pd, &p2);
    info->subgroup_size = sg.subgroupSize;
    info->subgroup_arithmetic = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                                (sg.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
    if (v12) {
        info->denorm_preserve32 = fc.shaderDenormPreserveFloat32;
        info->denorm_preserve64 = fc.shaderDenormPreserveFloat64;
        snprintf(info->driver, sizeof info->driver, "%s %s", dp.driverName, dp.driverInfo);
    } else {
        snprintf(info->driver, sizeof info->driver, "driver version %u", p.driverVersion);
    }
    VkPhysicalDeviceShaderAtomicInt64Features a64 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &a64};
    if (f->vkGetPhysicalDeviceFeatures2) f->vkGetPhysicalDeviceFeatures2(pd, &f2);
    else f->vkGetPhysicalDeviceFeatures(pd, &f2.features);
    info->int64 = f2.features.shaderInt64;
    info->float64 = f2.features.shaderFloat64;
    info->int64_shared_atomics = a64.shaderSharedInt64Atomics && a64.shaderBufferInt64Atomics;
    /* a test hook: pretend the device lacks 64-bit integers (the documented answer) */
    const char *pretend = getenv("TALLY_VULKAN_PRETEND_NO_INT64");
    if (pretend && *pretend && strcmp(pretend, "0") != 0) info->int64 = 0;
    info->usable = 1;
    if (p.apiVersion < VK_API_VERSION_1_1) {
        info->usable = 0;
        snprintf(info->why_not, sizeof info->why_not, "Vulkan %u.%u (tally needs 1.1)",
                 VK_API_VERSION_MAJOR(p.apiVersion), VK_API_VERSION_MINOR(p.apiVersion));
    } else if (!info->int64 || !info->int64_shared_atomics) {
        info->usable = 0;
        snprintf(info->why_not, sizeof info->why_not, "no %s%s%s (tally's shaders need 64-bit integers)",
                 info->int64 ? "" : "shaderInt64", !info->int64 && !info->int64_shared_atomics ? " and no " : "",
                 info->int64_shared_atomics ? "" : "shaderSharedInt64Atomics/shaderBufferInt64Atomics");
    } else if (!info->float64) {
        info->usable = 0;
        snprintf(info->why_not, sizeof info->why_not, "no shaderFloat64");
    }
}

/* Device list of the process, probed once (a temporary instance). */
static pthread_once_t list_once = PTHREAD_ONCE_INIT;
static int list_count;
static tally_vulkan_device_info *list_info;
static const char *list_why = "";

static void probe_list(void)
{
    const char *why = NULL;
    PFN_vkGetInstanceProcAddr gipa = tvk_loader_open(&why);
    if (!gipa) {
        list_why = why;
        return;
    }
    tvk_instance_fns f;
    VkInstance inst;
    int dbg;
    VkResult r = make_instance(&f, gipa, 0, &inst, &dbg);
    if (r != VK_SUCCESS) {
        list_why = r == VK_ERROR_INCOMPATIBLE_DRIVER ? "the Vulkan loader or driver is older than 1.1"
                                                     : "vkCreateInstance failed (no Vulkan driver?)";
        return;
    }
    uint32_t n = 0;
    f.vkEnumeratePhysicalDevices(inst, &n, NULL);
    VkPhysicalDevice *pds = calloc(n ? n : 1, sizeof *pds);
    list_info = calloc(n ? n : 1, sizeof *list_info);
    if (pds && list_info && n && f.vkEnumeratePhysicalDevices(inst, &n, pds) >= 0) {
        for (uint32_t i = 0; i < n; i++) probe_device(&f, pds[i], &list_info[i]);
        list_count = (int)n;
    }
    if (!list_count) list_why = "no Vulkan physical device";
    free(pds);
    f.vkDestroyInstance(inst, NULL);
}

int tally_vulkan_device_count(const char **why)
{
    pthread_once(&list_once, probe_list);
    if (why) *why = list_count ? "" : list_why;
    return list_count;
}

tally_status tally_vulkan_get_device_info(int index, tally_vulkan_device_info *info)
{
    if (!info) return TALLY_ERR_INVALID_ARGUMENT;
    int n = tally_vulkan_device_count(NULL);
    if (n == 0) return TALLY_ERR_BACKEND_UNAVAILABLE;
    if (index < 0 || index >= n) return TALLY_ERR_INVALID_ARGUMENT;
    *info = list_info[index];
    return TALLY_OK;
}

static int vk_available(void)
{
    int n = tally_vulkan_device_count(NULL);
    for (int i = 0; i < n; i++)
        if (list_info[i].usable) return 1;
    return 0;
}

int tally_vulkan_auto_available(void)
{
    int n = tally_vulkan_device_count(NULL);
    for (int i = 0; i < n; i++)
        if (list_info[i].usable && list_info[i].device_type != VK_PHYSICAL_DEVICE_TYPE_CPU) return 1;
    return 0;
}

/* ---- buffers ------------------------------------------------------------------------------ */
static int find_memory(const tvk_state *s, uint32_t bits, VkMemoryPropertyFlags need,
                       VkMemoryPropertyFlags prefer)
{
    int best = -1;
    for (uint32_t i = 0; i < s->memprops.memoryTypeCount; i++) {
        VkMemoryPropertyFlags fl = s->memprops.memoryTypes[i].propertyFlags;
        if (!(bits & (1u << i)) || (fl & need) != need) continue;
        if ((fl & prefer) == prefer) return (int)i;
        if (best < 0) best = (int)i;
    }
    return best;
}

void tvk_buf_free(tvk_state *s, tvk_buf *b)
{
    if (b->map) s->fd.vkUnmapMemory(s->dev, b->mem);
    if (b->buf) s->fd.vkDestroyBuffer(s->dev, b->buf, NULL);
    if (b->mem) s->fd.vkFreeMemory(s->dev, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

/* Makes sure b holds at least size bytes (host: mapped, host-visible coherent memory; else
 * device-local). The old contents are lost when it grows. */
tally_status tvk_buf_ensure(tally_context *ctx, tvk_state *s, tvk_buf *b, VkDeviceSize size,
                            int host, const char *fn)
{
    if (size < 256) size = 256;
    if (b->buf && b->size >= size) return TALLY_OK;
    tvk_buf_free(s, b);
    size = (size + 65535) & ~(VkDeviceSize)65535;
    VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = size;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    TVK_TRY(ctx, fn, s->fd.vkCreateBuffer(s->dev, &bi, NULL, &b->buf));
    VkMemoryRequirements mr;
    s->fd.vkGetBufferMemoryRequirements(s->dev, b->buf, &mr);
    int mt = host ? find_memory(s, mr.memoryTypeBits,
                                VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
                  : find_memory(s, mr.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (mt < 0) {
        tvk_buf_free(s, b);
        return tally_set_error(ctx, TALLY_ERR_BACKEND_FAILURE, "%s: no suitable Vulkan memory type", fn);
    }
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, mr.size, (uint32_t)mt};
    /* a dedicated allocation (Vulkan 1.1) for big device buffers when asked: one of the
     * candidates for big buffers' read speed on NVIDIA (docs/vulkan.md) */
    VkMemoryDedicatedAllocateInfo dai = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO, NULL, VK_NULL_HANDLE, b->buf};
    if (!host && s->dedicated_min && size >= s->dedicated_min) ai.pNext = &dai;
    VkResult r = s->fd.vkAllocateMemory(s->dev, &ai, NULL, &b->mem);
    if (r != VK_SUCCESS) {
        tvk_buf_free(s, b);
        return tvk_fail(ctx, r, fn, "vkAllocateMemory");
    }
    r = s->fd.vkBindBufferMemory(s->dev, b->buf, b->mem, 0);
    if (r == VK_SUCCESS && host) r = s->fd.vkMapMemory(s->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map);
    if (r != VK_SUCCESS) {
        tvk_buf_free(s, b);
        return tvk_fail(ctx, r, fn, "vkBindBufferMemory/vkMapMemory");
    }
    b->size = size;
    return TALLY_OK;
}

/* ---- pipelines ---------------------------------------------------------------------------- */
/* TALLY_VULKAN_PIPELINE_STATS=1: the driver's statistics of a new pipeline on stderr, one line
 * (e.g. NVIDIA's register count, which sets how many workgroups an SM holds). */
static void print_pipeline_stats(tvk_state *s, VkPipeline pipe, int shader, tally_type t, const uint32_t spec[3])
{
    static const char *const names[] = {
#define TVK_SH_NAME(sh, name) #name,
        TVK_ALL_SHADERS(TVK_SH_NAME) TVK_FLOAT_SHADERS(TVK_SH_NAME)
#undef TVK_SH_NAME
    };
    VkPipelineInfoKHR pi = {VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, NULL, pipe};
    uint32_t ne = 0;
    if (s->get_exec_props(s->dev, &pi, &ne, NULL) != VK_SUCCESS || ne == 0) return;
    for (uint32_t e = 0; e < ne && e < 4; e++) {
        VkPipelineExecutableInfoKHR ei = {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, NULL, pipe, e};
        VkPipelineExecutableStatisticKHR st[32];
        uint32_t ns = 32;
        for (uint32_t k = 0; k < ns; k++) st[k] = (VkPipelineExecutableStatisticKHR){VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
        VkResult r = s->get_exec_stats(s->dev, &ei, &ns, st);
        if (r != VK_SUCCESS && r != VK_INCOMPLETE) continue;
        fprintf(stderr, "tally vulkan pipeline %s %s spec (%u, %u, %u):",
                shader >= 0 && (size_t)shader < sizeof names / sizeof names[0] ? names[shader] : "?",
                tally_type_name(t), spec[0], spec[1], spec[2]);
        for (uint32_t k = 0; k < ns; k++) {
            fprintf(stderr, " %s=", st[k].name);
            switch (st[k].format) {
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: fprintf(stderr, "%u", st[k].value.b32); break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: fprintf(stderr, "%lld", (long long)st[k].value.i64); break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: fprintf(stderr, "%llu", (unsigned long long)st[k].value.u64); break;
            default: fprintf(stderr, "%g", st[k].value.f64); break;
            }
            fputc(';', stderr);
        }
        fputc('\n', stderr);
    }
}

/* Milliseconds since t0 (TALLY_VULKAN_LOG_PIPELINES). */
static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

tally_status tvk_pipeline(tally_context *ctx, tvk_state *s, int shader, tally_type t,
                          uint32_t spec0, uint32_t spec1, uint32_t spec2, VkPipeline *out)
{
    static const char fn[] = "tally (Vulkan pipeline)";
    for (int i = 0; i < s->npipes; i++) {
        tvk_pipe *p = &s->pipes[i];
        if (p->shader == shader && p->type == t && p->spec[0] == spec0 && p->spec[1] == spec1 &&
            p->spec[2] == spec2) {
            *out = p->pipe;
            return TALLY_OK;
        }
    }
    if (s->npipes == TVK_MAX_PIPES)
        return tally_set_error(ctx, TALLY_ERR_BACKEND_FAILURE, "%s: too many pipelines", fn);
    VkShaderModule *mod = &s->modules[shader][t];
    if (!*mod) {
        size_t size;
        const unsigned char *code = spv_code(shader, t, &size);
        if (!code)
            return tally_set_error(ctx, TALLY_ERR_BACKEND_FAILURE, "%s: no shader %d for %s", fn,
                                   shader, tally_type_name(t));
        VkShaderModuleCreateInfo mi = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, size,
                                       (const uint32_t *)(const void *)code};
        struct timespec m0;
        clock_gettime(CLOCK_MONOTONIC, &m0);
        TVK_TRY(ctx, fn, s->fd.vkCreateShaderModule(s->dev, &mi, NULL, mod));
        if (s->log_pipes) /* (the validation layer checks the SPIR-V here) */
            fprintf(stderr, "tally vulkan: module: shader %d type %s (%zu bytes): %.1f ms\n", shader,
                    tally_type_name(t), size, ms_since(&m0));
    }
    uint32_t spec[3] = {spec0, spec1, spec2};
    VkSpecializationMapEntry me[3] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}};
    VkSpecializationInfo si = {3, me, sizeof spec, spec};
    VkComputePipelineCreateInfo ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = *mod;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = &si;
    ci.layout = s->layout;
    if (s->get_exec_stats) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    VkPipeline pipe;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    TVK_TRY(ctx, fn, s->fd.vkCreateComputePipelines(s->dev, s->pcache, 1, &ci, NULL, &pipe));
    s->pcache_new++;
    if (s->log_pipes) /* TALLY_VULKAN_LOG_PIPELINES: what a run compiles, and for how long */
        fprintf(stderr, "tally vulkan: pipeline %d: shader %d type %s spec %u %u %u: %.1f ms\n", s->npipes,
                shader, tally_type_name(t), spec0, spec1, spec2, ms_since(&t0));
    if (s->get_exec_stats) print_pipeline_stats(s, pipe, shader, t, spec);
    tvk_pipe *p = &s->pipes[s->npipes++];
    p->shader = shader;
    p->type = t;
    p->spec[0] = spec0;
    p->spec[1] = spec1;
    p->spec[2] = spec2;
    p->pipe = pipe;
    *out = pipe;
    return TALLY_OK;
}

/* ---- command recording ------------------------------------------------------------------- */
tally_status tvk_begin(tally_context *ctx, tvk_state *s, const char *fn)
{
    if (!s->push_desc) TVK_TRY(ctx, fn, s->fd.vkResetDescriptorPool(s->dev, s->dpool, 0));
    TVK_TRY(ctx, fn, s->fd.vkResetCommandBuffer(s->cb, 0));
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                   VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL};
    TVK_TRY(ctx, fn, s->fd.vkBeginCommandBuffer(s->cb, &bi));
    s->nsets = 0;
    if (s->timing) {
        s->fd.vkCmdResetQueryPool(s->cb, s->qpool, 0, 3);
        s->split_written = 0;
        s->fd.vkCmdWriteTimestamp(s->cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s->qpool, 0);
    }
    /* The previous submission's writes (a reduce's record and zeroed accumulator, a scan's
     * output) before this one's accesses: a fence orders the host after them, but only a
     * barrier (whose first scope holds every earlier submission on the queue) orders this
     * command buffer's shaders and copies after them. */
    tvk_barrier(s);
    return TALLY_OK;
}

tally_status tvk_submit_wait(tally_context *ctx, tvk_state *s, const char *fn)
{
    if (!s->host_every) {
        /* every write of the command buffer (a record, a copy into the host-visible buffer)
         * visible to the host once the fence is waited for: the only barrier with the host
         * in its second scope (tvk_barrier) */
        VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
                              VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                              VK_ACCESS_HOST_READ_BIT};
        s->fd.vkCmdPipelineBarrier(s->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                                   VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    }
    if (s->timing) s->fd.vkCmdWriteTimestamp(s->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->qpool, 1);
    TVK_TRY(ctx, fn, s->fd.vkEndCommandBuffer(s->cb));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &s->cb;
    TVK_TRY(ctx, fn, s->fd.vkQueueSubmit(s->queue, 1, &si, s->fence));
    if (s->poll_us > 0) {
        /* poll the fence for a while before sleeping in the driver (a sleeping wait's wake-up
         * can cost more than a small call's work); TALLY_VULKAN_POLL_US, benchmarks */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
            VkResult fr = s->fd.vkGetFenceStatus(s->dev, s->fence);
            if (fr != VK_NOT_READY) break;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if ((t1.tv_sec - t0.tv_sec) * 1000000.0 + (t1.tv_nsec - t0.tv_nsec) / 1000.0 > s->poll_us) break;
        }
    }
    TVK_TRY(ctx, fn, s->fd.vkWaitForFences(s->dev, 1, &s->fence, VK_TRUE, UINT64_MAX));
    TVK_TRY(ctx, fn, s->fd.vkResetFences(s->dev, 1, &s->fence));
    if (s->timing) {
        uint64_t ts[3];
        uint32_t nq = s->split_written ? 3 : 2;
        if (s->fd.vkGetQueryPoolResults(s->dev, s->qpool, 0, nq, sizeof ts, ts, 8,
                                        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS) {
            s->gpu_ns += (double)(ts[1] - ts[0]) * s->props.limits.timestampPeriod;
            if (nq == 3) s->split_ns += (double)(ts[2] - ts[0]) * s->props.limits.timestampPeriod;
        }
    }
    return TALLY_OK;
}

/* Shaders and copies after the barrier see what those before it wrote. The host is in its
 * second scope only with host_every (TALLY_VULKAN_BARRIERS=host, as before): a barrier toward
 * the host may make the driver write its caches back, and only the one tvk_submit_wait records
 * last needs to (the host reads nothing before the fence). */
void tvk_barrier(tvk_state *s)
{
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
                          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                              VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                              (s->host_every ? VK_ACCESS_HOST_READ_BIT : 0)};
    s->fd.vkCmdPipelineBarrier(s->cb,
                               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                                   (s->host_every ? VK_PIPELINE_STAGE_HOST_BIT : 0),
                               0, 1, &mb, 0, NULL, 0, NULL);
}

/* Binds pipe and a descriptor set of the four bindings, and pushes the constants. A binding
 * the call does not use (b[i].buf NULL) gets the placeholder buffer made with the context: a
 * descriptor must name a valid buffer (no nullDescriptor feature is asked for), and the scratch
 * partials buffer, which stood in before, does not exist until a reduce needs partial records. */
tally_status tvk_bind(tally_context *ctx, tvk_state *s, VkPipeline pipe, const tvk_range b[4],
                      const void *pc, uint32_t pc_size, const char *fn)
{
    /* binding 4 (reduce.comp's segment table, read only) gets a placeholder of its own: the
     * shared one stands in for bindings that shaders write, and a read of it here would race
     * with those writes in the eyes of synchronization validation */
    tvk_range b5[TVK_NBIND] = {b[0], b[1], b[2], b[3], {s->dummy_ro.buf, 0, VK_WHOLE_SIZE}};
    return tvk_bind5(ctx, s, pipe, b5, pc, pc_size, fn);
}

tally_status tvk_bind5(tally_context *ctx, tvk_state *s, VkPipeline pipe, const tvk_range b[TVK_NBIND],
                       const void *pc, uint32_t pc_size, const char *fn)
{
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (!s->push_desc) {
        VkDescriptorSetAllocateInfo ai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL,
                                          s->dpool, 1, &s->dsl};
        if (s->nsets >= TVK_MAX_SETS)
            return tally_set_error(ctx, TALLY_ERR_BACKEND_FAILURE, "%s: too many dispatches in one call", fn);
        TVK_TRY(ctx, fn, s->fd.vkAllocateDescriptorSets(s->dev, &ai, &set));
        s->nsets++;
    }
    VkDescriptorBufferInfo bi[TVK_NBIND];
    VkWriteDescriptorSet w[TVK_NBIND];
    for (int i = 0; i < TVK_NBIND; i++) {
        if (b[i].buf) {
            bi[i].buffer = b[i].buf;
            bi[i].offset = b[i].off;
            bi[i].range = b[i].range;
        } else {
            bi[i].buffer = s->dummy.buf;
            bi[i].offset = 0;
            bi[i].range = VK_WHOLE_SIZE;
        }
        w[i] = (VkWriteDescriptorSet){VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, (uint32_t)i, 0, 1,
                                      VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &bi[i], NULL};
    }
    s->fd.vkCmdBindPipeline(s->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    if (s->push_desc) {
        s->push_fn(s->cb, VK_PIPELINE_BIND_POINT_COMPUTE, s->layout, 0, TVK_NBIND, w);
    } else {
        s->fd.vkUpdateDescriptorSets(s->dev, TVK_NBIND, w, 0, NULL);
        s->fd.vkCmdBindDescriptorSets(s->cb, VK_PIPELINE_BIND_POINT_COMPUTE, s->layout, 0, 1, &set, 0, NULL);
    }
    if (pc_size) s->fd.vkCmdPushConstants(s->cb, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, pc_size, pc);
    return TALLY_OK;
}

/* A binding for bytes [off, off + bytes) of buf: the offset rounded down to the device's
 * alignment (and 16), the range up to whole 4-byte words; *head gets the bytes skipped. */
tvk_range tvk_window(const tvk_state *s, VkBuffer buf, VkDeviceSize off, VkDeviceSize bytes,
                     uint32_t *head)
{
    tvk_range r;
    VkDeviceSize a = off & ~(VkDeviceSize)(s->align - 1);
    *head = (uint32_t)(off - a);
    r.buf = buf;
    r.off = a;
    r.range = (*head + bytes + 3) & ~(VkDeviceSize)3;
    if (r.range == 0) r.range = 4;
    return r;
}

/* ---- context ------------------------------------------------------------------------------- */
/* ---- the pipeline cache kept between runs ---------------------------------------------------
 * The driver compiles each pipeline on first use (seconds for the scans' variants on NVIDIA);
 * the context's VkPipelineCache is filled from a file when it is made and written back when the
 * context ends, if it made pipelines. The file: TALLY_VULKAN_PIPELINE_CACHE (a directory; 0 or
 * off: none), else $XDG_CACHE_HOME/tally, else $HOME/.cache/tally; one file per device and driver
 * version (named by them and the cache UUID), replaced atomically (written aside, renamed), so
 * processes that end together leave one whole file. Its header is checked against the device
 * before the driver sees it; any failure just means an empty cache. */
#define TVK_PCACHE_MAX (64u << 20) /* larger caches are neither read nor written */

static char *pcache_path(const VkPhysicalDeviceProperties *p)
{
    const char *env = getenv("TALLY_VULKAN_PIPELINE_CACHE");
    char dir[4096];
    if (env && (!strcmp(env, "0") || !strcmp(env, "off") || !*env)) return NULL;
    if (env) snprintf(dir, sizeof dir, "%s", env);
    else if (getenv("XDG_CACHE_HOME") && *getenv("XDG_CACHE_HOME"))
        snprintf(dir, sizeof dir, "%s/tally", getenv("XDG_CACHE_HOME"));
    else if (getenv("HOME") && *getenv("HOME")) snprintf(dir, sizeof dir, "%s/.cache/tally", getenv("HOME"));
    else return NULL;
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned i = 0; i < VK_UUID_SIZE; i++) snprintf(uuid + 2 * i, 3, "%02x", p->pipelineCacheUUID[i]);
    size_t len = strlen(dir) + 128;
    char *path = malloc(len);
    if (path) snprintf(path, len, "%s/vk-pipelines-%08x-%08x-%08x-%s.bin", dir, p->vendorID, p->deviceID,
                       p->driverVersion, uuid);
    return path;
}

/* The file's bytes if its header is this device's (caller frees), else NULL. */
static void *pcache_load(const char *path, const VkPhysicalDeviceProperties *p, size_t *size)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) return NULL;
    unsigned char *data = NULL;
    long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (len >= 32 && (unsigned long)len <= TVK_PCACHE_MAX && fseek(f, 0, SEEK_SET) == 0 &&
        (data = malloc((size_t)len)) && fread(data, 1, (size_t)len, f) == (size_t)len) {
        uint32_t h[4];
        memcpy(h, data, sizeof h); /* header length, version (1: VK_PIPELINE_CACHE_HEADER_VERSION_ONE), vendor, device */
        if (h[0] < 32 || h[1] != 1u || h[2] != p->vendorID || h[3] != p->deviceID ||
            memcmp(data + 16, p->pipelineCacheUUID, VK_UUID_SIZE) != 0) {
            free(data);
            data = NULL;
        }
    } else {
        free(data);
        data = NULL;
    }
    fclose(f);
    *size = data ? (size_t)len : 0;
    return data;
}

static void pcache_save(tvk_state *s)
{
    if (!s->pcache_file || !s->pcache || !s->pcache_new) return;
    size_t size = 0;
    if (s->fd.vkGetPipelineCacheData(s->dev, s->pcache, &size, NULL) != VK_SUCCESS || !size ||
        size > TVK_PCACHE_MAX)
        return;
    void *data = malloc(size);
    if (!data) return;
    if (s->fd.vkGetPipelineCacheData(s->dev, s->pcache, &size, data) == VK_SUCCESS) {
        /* the directory (and its parent, for the default under ~/.cache) */
        char *dir = strdup(s->pcache_file), *slash = dir ? strrchr(dir, '/') : NULL;
        if (slash) {
            *slash = 0;
            char *up = strrchr(dir, '/');
            if (up && up != dir) {
                *up = 0;
                mkdir(dir, 0700);
                *up = '/';
            }
            mkdir(dir, 0700);
        }
        free(dir);
        size_t len = strlen(s->pcache_file) + 32;
        char *tmp = malloc(len);
        if (tmp) {
            snprintf(tmp, len, "%s.%ld.tmp", s->pcache_file, (long)getpid());
            FILE *f = fopen(tmp, "wb");
            int ok = f && fwrite(data, 1, size, f) == size;
            if (f && fclose(f) != 0) ok = 0;
            if (!ok || rename(tmp, s->pcache_file) != 0) remove(tmp);
            free(tmp);
        }
    }
    free(data);
}

static void free_state(tvk_state *s)
{
    if (!s) return;
    if (s->dev) {
        s->fd.vkDeviceWaitIdle(s->dev);
        pcache_save(s);
        for (int i = 0; i < s->npipes; i++) s->fd.vkDestroyPipeline(s->dev, s->pipes[i].pipe, NULL);
        for (int sh = 0; sh < TVK_SH_COUNT; sh++)
            for (int t = 0; t < TALLY_TYPE_COUNT; t++)
                if (s->modules[sh][t]) s->fd.vkDestroyShaderModule(s->dev, s->modules[sh][t], NULL);
        tvk_buf *bufs[] = {&s->staging, &s->dbuf, &s->dbuf2, &s->parts, &s->hostres, &s->aux, &s->acc, &s->dummy, &s->sval, &s->sflag,
                           &s->segtab, &s->segres, &s->segacc, &s->dummy_ro};
        if (s->qpool) s->fd.vkDestroyQueryPool(s->dev, s->qpool, NULL);
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tvk_buf_free(s, bufs[i]);
        for (int i = 0; i < TVK_BENCH_SLOTS; i++) tvk_buf_free(s, &s->bench[i]);
        if (s->fence) s->fd.vkDestroyFence(s->dev, s->fence, NULL);
        if (s->cpool) s->fd.vkDestroyCommandPool(s->dev, s->cpool, NULL);
        if (s->dpool) s->fd.vkDestroyDescriptorPool(s->dev, s->dpool, NULL);
        if (s->layout) s->fd.vkDestroyPipelineLayout(s->dev, s->layout, NULL);
        if (s->dsl) s->fd.vkDestroyDescriptorSetLayout(s->dev, s->dsl, NULL);
        if (s->pcache) s->fd.vkDestroyPipelineCache(s->dev, s->pcache, NULL);
        s->fd.vkDestroyDevice(s->dev, NULL);
    }
    if (s->inst) {
        if (s->dbg && s->fi.vkDestroyDebugUtilsMessengerEXT)
            s->fi.vkDestroyDebugUtilsMessengerEXT(s->inst, s->dbg, NULL);
        s->fi.vkDestroyInstance(s->inst, NULL);
    }
    if (s->cpu) tally_destroy(s->cpu);
    free(s->pcache_file);
    free(s->bcalls);
    free(s->bops);
    free(s->barena);
    pthread_mutex_destroy(&s->dbg_lock);
    free(s);
}

static tally_status vk_init(tally_context *ctx, const tally_options *opts, void **out)
{
    static const char fn[] = "tally_create";
    *out = NULL;
    const char *why = NULL;
    PFN_vkGetInstanceProcAddr gipa = tvk_loader_open(&why);
    if (!gipa) return tally_set_error(ctx, TALLY_ERR_BACKEND_UNAVAILABLE, "%s: %s", fn, why);
    int ndev = tally_vulkan_device_count(&why);
    if (ndev == 0) return tally_set_error(ctx, TALLY_ERR_BACKEND_UNAVAILABLE, "%s: %s", fn, why);
    /* AUTO: the opts->device-th real GPU (CPU-emulated devices are never picked) */
    int idx = -1;
    if (opts->backend == TALLY_BACKEND_AUTO) {
        int k = 0;
        for (int i = 0; i < ndev; i++)
            if (list_info[i].usable && list_info[i].device_type != VK_PHYSICAL_DEVICE_TYPE_CPU &&
                k++ == opts->device) idx = i;
        if (idx < 0)
            return tally_set_error(ctx, TALLY_ERR_BACKEND_UNAVAILABLE, "%s: no usable Vulkan GPU", fn);
    } else {
        if (opts->device >= ndev)
            return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                                   "%s: device = %d but this machine has %d Vulkan device(s)", fn,
                                   opts->device, ndev);
        idx = opts->device;
        if (!list_info[idx].usable)
            return tally_set_error(ctx, TALLY_ERR_BACKEND_UNAVAILABLE,
                                   "%s: Vulkan device %d (%s) cannot run tally: %s", fn, idx,
                                   list_info[idx].name, list_info[idx].why_not);
    }
    tvk_state *s = calloc(1, sizeof *s);
    if (!s) return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    pthread_mutex_init(&s->dbg_lock, NULL);
    s->info = list_info[idx];
    s->threads = opts->threads;
    tally_status st = TALLY_OK;
#define TVK_INIT(call)                                                                          \
    do {                                                                                        \
        VkResult r_ = (call);                                                                   \
        if (r_ != VK_SUCCESS) {                                                                 \
            st = tvk_fail(ctx, r_, fn, #call);                                                  \
            free_state(s);                                                                      \
            return st;                                                                          \
        }                                                                                       \
    } while (0)
    int have_dbg = 0;
    TVK_INIT(make_instance(&s->fi, gipa, want_validation(), &s->inst, &have_dbg));
    if (have_dbg && s->fi.vkCreateDebugUtilsMessengerEXT) {
        VkDebugUtilsMessengerCreateInfoEXT di = {VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
        di.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                             VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        di.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
        di.pfnUserCallback = debug_cb;
        di.pUserData = s;
        TVK_INIT(s->fi.vkCreateDebugUtilsMessengerEXT(s->inst, &di, NULL, &s->dbg));
        s->validation = 1;
    }
    uint32_t n = 0;
    s->fi.vkEnumeratePhysicalDevices(s->inst, &n, NULL);
    VkPhysicalDevice pds[64];
    if (n > 64) n = 64;
    TVK_INIT(s->fi.vkEnumeratePhysicalDevices(s->inst, &n, pds) >= 0 ? VK_SUCCESS : VK_ERROR_INITIALIZATION_FAILED);
    if ((uint32_t)idx >= n) {
        free_state(s);
        return tally_set_error(ctx, TALLY_ERR_BACKEND_UNAVAILABLE, "%s: the Vulkan device list changed", fn);
    }
    s->phys = pds[idx];
    s->fi.vkGetPhysicalDeviceProperties(s->phys, &s->props);
    s->fi.vkGetPhysicalDeviceMemoryProperties(s->phys, &s->memprops);
    /* a queue family with compute */
    uint32_t nq = 0;
    s->fi.vkGetPhysicalDeviceQueueFamilyProperties(s->phys, &nq, NULL);
    VkQueueFamilyProperties qp[32];
    if (nq > 32) nq = 32;
    s->fi.vkGetPhysicalDeviceQueueFamilyProperties(s->phys, &nq, qp);
    int qf = -1;
    for (uint32_t i = 0; i < nq && qf < 0; i++) /* a compute-only queue first, else any */
        if ((qp[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(qp[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) qf = (int)i;
    for (uint32_t i = 0; i < nq && qf < 0; i++)
        if (qp[i].queueFlags & VK_QUEUE_COMPUTE_BIT) qf = (int)i;
    if (qf < 0) {
        free_state(s);
        return tally_set_error(ctx, TALLY_ERR_BACKEND_UNAVAILABLE, "%s: %s has no compute queue", fn, s->info.name);
    }
    s->qfam = (uint32_t)qf;
    s->timestamp_valid = qp[qf].timestampValidBits;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qi = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, s->qfam, 1, &prio};
    VkPhysicalDeviceShaderAtomicInt64Features a64 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES};
    a64.shaderSharedInt64Atomics = VK_TRUE;
    a64.shaderBufferInt64Atomics = VK_TRUE;
    /* optional: pushed descriptors (no descriptor sets to allocate per dispatch) */
    const char *exts[3];
    uint32_t next = 0;
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pexf = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    {
        uint32_t ne = 0;
        int has_clock = 0, has_pexec = 0, has_smb = 0;
        s->fi.vkEnumerateDeviceExtensionProperties(s->phys, NULL, &ne, NULL);
        VkExtensionProperties *ep = calloc(ne ? ne : 1, sizeof *ep);
        if (ep && s->fi.vkEnumerateDeviceExtensionProperties(s->phys, NULL, &ne, ep) == VK_SUCCESS)
            for (uint32_t i = 0; i < ne; i++) {
                if (!strcmp(ep[i].extensionName, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME)) s->push_desc = 1;
                if (!strcmp(ep[i].extensionName, VK_KHR_SHADER_CLOCK_EXTENSION_NAME)) has_clock = 1;
                if (!strcmp(ep[i].extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) has_pexec = 1;
                if (!strcmp(ep[i].extensionName, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) has_smb = 1;
            }
        free(ep);
        /* NVIDIA's SM count (a property only: the extension is not enabled), for the float scan's
         * prefetch distance (vk_scan.c, record_fscan1) */
        if (has_smb && s->fi.vkGetPhysicalDeviceProperties2) {
            VkPhysicalDeviceShaderSMBuiltinsPropertiesNV smp = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
            VkPhysicalDeviceProperties2 smp2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &smp};
            s->fi.vkGetPhysicalDeviceProperties2(s->phys, &smp2);
            s->sm_count = smp.shaderSMCount;
        }
        const char *pd = getenv("TALLY_VULKAN_NO_PUSH_DESCRIPTORS"); /* tests: descriptor sets */
        if (pd && *pd && strcmp(pd, "0")) s->push_desc = 0;
        if (s->push_desc) exts[next++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
        /* bench/probe_fscan.c: the one-pass float scan's clock variant (TALLY_VULKAN_FSCAN_PROBE=1) */
        const char *fp = getenv("TALLY_VULKAN_FSCAN_PROBE");
        s->fscan_probe = has_clock && fp && *fp && strcmp(fp, "0") && s->fi.vkGetPhysicalDeviceFeatures2;
        if (s->fscan_probe) {
            VkPhysicalDeviceShaderClockFeaturesKHR q = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
            VkPhysicalDeviceFeatures2 q2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &q};
            s->fi.vkGetPhysicalDeviceFeatures2(s->phys, &q2);
            s->fscan_probe = q.shaderSubgroupClock && q.shaderDeviceClock;
        }
        if (s->fscan_probe) exts[next++] = VK_KHR_SHADER_CLOCK_EXTENSION_NAME;
        /* benchmarks: the compiler's statistics of each pipeline (TALLY_VULKAN_PIPELINE_STATS=1) */
        const char *ps = getenv("TALLY_VULKAN_PIPELINE_STATS");
        if (has_pexec && ps && *ps && strcmp(ps, "0") && s->fi.vkGetPhysicalDeviceFeatures2) {
            VkPhysicalDeviceFeatures2 q2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &pexf};
            s->fi.vkGetPhysicalDeviceFeatures2(s->phys, &q2);
            pexf.pNext = NULL;
            if (pexf.pipelineExecutableInfo) exts[next++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
        }
    }
    /* optional: Vulkan's memory model at device scope (Vulkan 1.2), which the one-pass scan's
     * look-back (scan1.comp) is written in; without it scans are reduce-then-scan */
    VkPhysicalDeviceVulkanMemoryModelFeatures vmm = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
    {
        uint32_t iapi = VK_API_VERSION_1_0;
        if (s->fi.vkEnumerateInstanceVersion) s->fi.vkEnumerateInstanceVersion(&iapi);
        if (iapi >= VK_API_VERSION_1_2 && s->info.api_version >= VK_API_VERSION_1_2 &&
            s->fi.vkGetPhysicalDeviceFeatures2) {
            VkPhysicalDeviceFeatures2 q = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &vmm};
            s->fi.vkGetPhysicalDeviceFeatures2(s->phys, &q);
        }
        /* scan1.comp's shared memory: its tile's words, the workgroup scan, the look-back */
        /* and subgroup shuffles in compute shaders (its rows' scans) */
        VkPhysicalDeviceSubgroupProperties sgp = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
        VkPhysicalDeviceProperties2 sgp2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sgp};
        if (s->fi.vkGetPhysicalDeviceProperties2) s->fi.vkGetPhysicalDeviceProperties2(s->phys, &sgp2);
        VkSubgroupFeatureFlags need = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT |
                                      VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT;
        s->scan1 = vmm.vulkanMemoryModel && vmm.vulkanMemoryModelDeviceScope &&
                   (sgp.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                   (sgp.supportedOperations & need) == need &&
                   s->props.limits.maxComputeSharedMemorySize >= 16384;
        vmm.pNext = NULL;
        vmm.vulkanMemoryModelAvailabilityVisibilityChains = VK_FALSE;
        if (s->scan1) a64.pNext = &vmm;
        s->scan1_able = s->scan1;
        const char *sc = getenv("TALLY_VULKAN_SCAN"); /* "3pass": reduce-then-scan anyway */
        if (sc && !strcmp(sc, "3pass")) s->scan1 = 0;
        const char *sp = getenv("TALLY_VULKAN_SCAN_SPINS"); /* tests: 0 = fall back at once */
        s->scan_spins = sp && *sp ? (uint32_t)strtoul(sp, NULL, 10) : 32;
        const char *rv = getenv("TALLY_VULKAN_SCAN_REVERSE"); /* tests: tiles in reverse order */
        s->scan_reverse = rv && *rv && strcmp(rv, "0") != 0;
        const char *lb = getenv("TALLY_VULKAN_SCAN_LOOKBACK"); /* vk_scan.c: scan1_sg_lookback */
        s->scan_lookback = !lb ? 0 : !strcmp(lb, "sg") ? 1 : !strcmp(lb, "sg-all") ? 2 : !strcmp(lb, "wg") ? 3 : 0;
        const char *ss = getenv("TALLY_VULKAN_SCAN_STATS"); /* bench: look-back counters */
        s->scan_stats = ss && *ss && strcmp(ss, "0") != 0;
    }
    VkPhysicalDeviceShaderClockFeaturesKHR clk = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
    clk.shaderSubgroupClock = VK_TRUE;
    clk.shaderDeviceClock = VK_TRUE;
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &a64};
    if (s->fscan_probe) { /* VK_KHR_shader_clock's features, enabled for the probe only */
        clk.pNext = f2.pNext;
        f2.pNext = &clk;
    }
    if (pexf.pipelineExecutableInfo) { /* (asked for above) */
        pexf.pNext = f2.pNext;
        f2.pNext = &pexf;
    }
    f2.features.shaderInt64 = VK_TRUE;
    f2.features.shaderFloat64 = VK_TRUE;
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2, 0, 1, &qi};
    dci.enabledExtensionCount = next;
    dci.ppEnabledExtensionNames = next ? exts : NULL;
    TVK_INIT(s->fi.vkCreateDevice(s->phys, &dci, NULL, &s->dev));
    if (!tvk_load_device_fns(&s->fd, &s->fi, s->dev)) {
        s->fd.vkDestroyDevice = (PFN_vkDestroyDevice)s->fi.vkGetDeviceProcAddr(s->dev, "vkDestroyDevice");
        if (s->fd.vkDestroyDevice) s->fd.vkDestroyDevice(s->dev, NULL);
        s->dev = VK_NULL_HANDLE;
        free_state(s);
        return tally_set_error(ctx, TALLY_ERR_BACKEND_FAILURE, "%s: the Vulkan device lacks core functions", fn);
    }
    s->fd.vkGetDeviceQueue(s->dev, s->qfam, 0, &s->queue);
    if (pexf.pipelineExecutableInfo) {
        s->get_exec_props = (PFN_vkGetPipelineExecutablePropertiesKHR)s->fi.vkGetDeviceProcAddr(
            s->dev, "vkGetPipelineExecutablePropertiesKHR");
        s->get_exec_stats = (PFN_vkGetPipelineExecutableStatisticsKHR)s->fi.vkGetDeviceProcAddr(
            s->dev, "vkGetPipelineExecutableStatisticsKHR");
        if (!s->get_exec_props || !s->get_exec_stats) s->get_exec_props = NULL, s->get_exec_stats = NULL;
    }
    if (s->push_desc) {
        s->push_fn = (PFN_vkCmdPushDescriptorSetKHR)s->fi.vkGetDeviceProcAddr(s->dev, "vkCmdPushDescriptorSetKHR");
        if (!s->push_fn) s->push_desc = 0;
    }

    VkDescriptorSetLayoutBinding lb[TVK_NBIND];
    for (uint32_t i = 0; i < TVK_NBIND; i++)
        lb[i] = (VkDescriptorSetLayoutBinding){i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo dli = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL,
                                           s->push_desc ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0,
                                           TVK_NBIND, lb};
    TVK_INIT(s->fd.vkCreateDescriptorSetLayout(s->dev, &dli, NULL, &s->dsl));
    VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, TVK_PC_BYTES};
    VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1, &s->dsl, 1, &pcr};
    TVK_INIT(s->fd.vkCreatePipelineLayout(s->dev, &pli, NULL, &s->layout));
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, TVK_NBIND * TVK_MAX_SETS};
    VkDescriptorPoolCreateInfo dpi = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0, TVK_MAX_SETS, 1, &ps};
    TVK_INIT(s->fd.vkCreateDescriptorPool(s->dev, &dpi, NULL, &s->dpool));
    VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
                                   VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, s->qfam};
    TVK_INIT(s->fd.vkCreateCommandPool(s->dev, &cpi, NULL, &s->cpool));
    VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, s->cpool,
                                       VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    TVK_INIT(s->fd.vkAllocateCommandBuffers(s->dev, &cai, &s->cb));
    VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    TVK_INIT(s->fd.vkCreateFence(s->dev, &fi, NULL, &s->fence));
    VkPipelineCacheCreateInfo pci = {VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    s->pcache_file = pcache_path(&s->props);
    size_t pcache_size = 0;
    void *pcache_data = pcache_load(s->pcache_file, &s->props, &pcache_size);
    pci.initialDataSize = pcache_size;
    pci.pInitialData = pcache_data;
    VkResult pcres = s->fd.vkCreatePipelineCache(s->dev, &pci, NULL, &s->pcache);
    if (pcres != VK_SUCCESS && pcache_data) { /* data the driver refuses: start empty */
        pci.initialDataSize = 0;
        pci.pInitialData = NULL;
        pcres = s->fd.vkCreatePipelineCache(s->dev, &pci, NULL, &s->pcache);
    }
    free(pcache_data);
    TVK_INIT(pcres);
    /* big device buffers in dedicated allocations (a knob for measuring; 0: never) */
    const char *dedenv = getenv("TALLY_VULKAN_DEDICATED_BYTES");
    s->dedicated_min = dedenv && *dedenv ? strtoull(dedenv, NULL, 10) : 0;
#undef TVK_INIT
    s->align = s->props.limits.minStorageBufferOffsetAlignment;
    if (s->align < 16) s->align = 16;
    /* segments: one binding's range at most, whole float-product blocks, at most 2^30 bytes */
    uint64_t seg = s->props.limits.maxStorageBufferRange;
    if (seg > (1ull << 30)) seg = 1ull << 30;
    seg -= 512; /* room for the alignment head and the rounding */
    seg &= ~(uint64_t)(TALLY_PROD_BLOCK * 8 - 1);
    if (seg < TALLY_PROD_BLOCK * 8) {
        free_state(s);
        return tally_set_error(ctx, TALLY_ERR_BACKEND_UNAVAILABLE,
                               "%s: %s's maxStorageBufferRange (%u) is too small", fn, s->info.name,
                               s->props.limits.maxStorageBufferRange);
    }
    /* a testing knob: small segments, so that the tests cross segment boundaries */
    const char *segenv = getenv("TALLY_VULKAN_SEGMENT_BYTES");
    if (segenv && *segenv) {
        uint64_t want = strtoull(segenv, NULL, 10) & ~(uint64_t)(TALLY_PROD_BLOCK * 8 - 1);
        if (want >= TALLY_PROD_BLOCK * 8 && want < seg) seg = want;
    }
    s->seg_bytes = seg;
    /* tally_reduce_segments: one workgroup per segment up to 256 KiB (a workgroup's share of a
     * single reduction is 64 KiB to 1 MiB); TALLY_VULKAN_SHORT_BYTES moves the line (0: every
     * segment a call of its own, the path long segments take) */
    const char *shenv = getenv("TALLY_VULKAN_SHORT_BYTES");
    s->short_bytes = shenv && *shenv ? strtoull(shenv, NULL, 10) : 256u * 1024u;
    if (tvk_buf_ensure(ctx, s, &s->dummy, 256, 0, fn) != TALLY_OK ||
        tvk_buf_ensure(ctx, s, &s->dummy_ro, 256, 0, fn) != TALLY_OK) {
        free_state(s);
        return TALLY_ERR_OUT_OF_MEMORY;
    }
    s->float_shaders = getenv("TALLY_VULKAN_FLOAT_SHADERS") && atoi(getenv("TALLY_VULKAN_FLOAT_SHADERS")) > 0;
    /* the speculative sums (vk_reduce.c, spec_sum): f32 and f64 by default (2); TALLY_VULKAN_SPEC=0
     * never, =1 f64 only. Four 16-byte loads in flight per invocation (TALLY_VULKAN_SPEC_U=8: eight,
     * the former default): on the H200 the f32 tier took 274 us at 2^28 with four against 500
     * with eight, and the f64 tier 492 against 512 (docs/vulkan.md, the fourth round) */
    s->spec = getenv("TALLY_VULKAN_SPEC") ? atoi(getenv("TALLY_VULKAN_SPEC")) : 2;
    s->spec_u = getenv("TALLY_VULKAN_SPEC_U") && atoi(getenv("TALLY_VULKAN_SPEC_U")) == 8 ? 8 : 4;
    /* spec.comp's independent triples per invocation (1, 2 or 4) and fold workgroups per segment
     * at most (TALLY_VULKAN_SPEC_T, TALLY_VULKAN_SPEC_GROUPS: for measuring; vk_reduce.c) */
    const char *stenv = getenv("TALLY_VULKAN_SPEC_T");
    int nt = stenv && *stenv ? atoi(stenv) : 0;
    s->spec_t = nt == 2 || nt == 4 ? (uint32_t)nt : 1u;
    const char *sgenv = getenv("TALLY_VULKAN_SPEC_GROUPS");
    long sg = sgenv && *sgenv ? atol(sgenv) : 0;
    s->spec_groups = sg >= 1 && sg <= 65535 ? (uint32_t)sg : 0u;
    /* spec.comp's SF bits: 1 the bulk step written out (TALLY_VULKAN_SPEC_STEP=1), 2 f32 vectors
     * summed exactly first (TALLY_VULKAN_SPEC_Q4=1), 4 selects for the f32 widening's branches
     * (TALLY_VULKAN_SPEC_SEL=1) */
    s->spec_sf = (getenv("TALLY_VULKAN_SPEC_STEP") && atoi(getenv("TALLY_VULKAN_SPEC_STEP")) > 0 ? 1u : 0u) |
                 (getenv("TALLY_VULKAN_SPEC_Q4") && atoi(getenv("TALLY_VULKAN_SPEC_Q4")) > 0 ? 2u : 0u) |
                 (getenv("TALLY_VULKAN_SPEC_SEL") && atoi(getenv("TALLY_VULKAN_SPEC_SEL")) > 0 ? 4u : 0u);
    const char *fsc = getenv("TALLY_VULKAN_FLOAT_SCAN"); /* vk_scan.c: fscan_on_device */
    s->float_scan = !fsc ? 0 : !strcmp(fsc, "cpu") ? 1 : !strcmp(fsc, "3pass") ? 2 : !strcmp(fsc, "1pass") ? 3 : 0;
    s->poll_us = getenv("TALLY_VULKAN_POLL_US") ? atof(getenv("TALLY_VULKAN_POLL_US")) : 0;
    s->log_pipes = getenv("TALLY_VULKAN_LOG_PIPELINES") != NULL;
    s->host_every = getenv("TALLY_VULKAN_BARRIERS") && !strcmp(getenv("TALLY_VULKAN_BARRIERS"), "host");
    uint32_t v = s->info.api_version;
    snprintf(s->desc, sizeof s->desc, "%s (Vulkan %u.%u, %s, subgroup %u)", s->info.name,
             VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), s->info.driver, s->info.subgroup_size);
    *out = s;
    return TALLY_OK;
}

static void vk_fini(void *state) { free_state(state); }

static const char *vk_describe(void *state) { return state ? ((tvk_state *)state)->desc : ""; }

/* The CPU backend beside this context, for the fallbacks (made on first use). */
tally_status tvk_cpu(tally_context *ctx, tvk_state *s, tally_context **cpu)
{
    if (!s->cpu) {
        tally_options o;
        tally_options_init(&o);
        o.backend = TALLY_BACKEND_CPU;
        o.threads = s->threads;
        tally_status st = tally_create(&s->cpu, &o);
        if (st != TALLY_OK)
            return tally_set_error(ctx, st, "tally (Vulkan): the CPU fallback could not start: %s",
                                   tally_create_error());
    }
    *cpu = s->cpu;
    return TALLY_OK;
}

/* ---- host data --------------------------------------------------------------------------- */
/* Copies host data into the device buffer dbuf (through the staging buffer); records the copy
 * in the open command buffer. */
tally_status tvk_upload(tally_context *ctx, tvk_state *s, const void *data, uint64_t bytes,
                        const char *fn)
{
    tally_status st = tvk_buf_ensure(ctx, s, &s->staging, bytes, 1, fn);
    if (st != TALLY_OK) return st;
    st = tvk_buf_ensure(ctx, s, &s->dbuf, bytes, 0, fn);
    if (st != TALLY_OK) return st;
    if (bytes) {
        memcpy(s->staging.map, data, bytes);
        VkBufferCopy c = {0, 0, bytes};
        s->fd.vkCmdCopyBuffer(s->cb, s->staging.buf, s->dbuf.buf, 1, &c);
        tvk_barrier(s);
    }
    return TALLY_OK;
}

/* A host view of bytes [off, off + bytes) of a device buffer (copied into the staging buffer;
 * waits). */
tally_status tvk_download(tally_context *ctx, tvk_state *s, VkBuffer buf, VkDeviceSize off,
                          uint64_t bytes, const void **view, const char *fn)
{
    tally_status st = tvk_buf_ensure(ctx, s, &s->staging, bytes, 1, fn);
    if (st != TALLY_OK) return st;
    if ((st = tvk_begin(ctx, s, fn)) != TALLY_OK) return st;
    if (bytes) {
        VkBufferCopy c = {off, 0, bytes};
        s->fd.vkCmdCopyBuffer(s->cb, buf, s->staging.buf, 1, &c);
        tvk_barrier(s);
    }
    if ((st = tvk_submit_wait(ctx, s, fn)) != TALLY_OK) return st;
    *view = s->staging.map;
    return TALLY_OK;
}

/* ---- batches (tally_vulkan_batch_*) ------------------------------------------------------ */
/* A call recorded in a batch: its data (a VkBuffer, or host data copied into barena at
 * host_off), its ops (bops from ops_at), its options, where its results go. */
typedef struct tvk_bcall {
    tally_type type;
    VkBuffer buf;
    VkDeviceSize off;
    uint64_t host_off; /* UINT64_MAX: data in buf */
    uint64_t n;
    uint64_t ops_at;
    size_t nops;
    tally_reduce_options opts;
    tally_result *results;
} tvk_bcall;

static int grow(void **p, uint64_t *cap, uint64_t need, size_t elem)
{
    if (need <= *cap) return 1;
    uint64_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    if (c > SIZE_MAX / elem) return 0;
    void *q = realloc(*p, (size_t)(c * elem));
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

/* Records a reduce call in the open batch (host data copied now); its results are written by
 * tally_vulkan_batch_end; until then they read TALLY_OK with zero values. */
static tally_status batch_add(tally_context *ctx, tvk_state *s, const char *fn, tally_type type,
                              VkBuffer buf, VkDeviceSize off, const void *host, uint64_t n,
                              const tally_op *ops, size_t nops, const tally_reduce_options *opts,
                              tally_result *results)
{
    uint64_t bytes = n * tally_type_size(type);
    uint64_t at = (s->narena + 15) & ~(uint64_t)15;
    if (!grow((void **)&s->bcalls, &s->capbcalls, s->nbcalls + 1, sizeof *s->bcalls) ||
        !grow((void **)&s->bops, &s->capbops, s->nbops + nops, sizeof *s->bops) ||
        (host && n && !grow((void **)&s->barena, &s->caparena, at + bytes, 1)))
        return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory recording call %llu of the batch",
                               fn, (unsigned long long)s->nbcalls);
    tvk_bcall *c = &s->bcalls[s->nbcalls++];
    c->type = type;
    c->buf = buf;
    c->off = off;
    c->host_off = UINT64_MAX;
    if (host) {
        c->host_off = at;
        if (n) memcpy(s->barena + at, host, bytes);
        s->narena = at + bytes;
    }
    c->n = n;
    c->ops_at = s->nbops;
    c->nops = nops;
    memcpy(s->bops + s->nbops, ops, nops * sizeof *ops);
    s->nbops += nops;
    c->opts = *opts;
    c->results = results;
    for (size_t i = 0; i < nops; i++) {
        memset(&results[i], 0, sizeof results[i]);
        results[i].op = ops[i];
        results[i].status = TALLY_OK;
    }
    return TALLY_OK;
}

static void batch_clear(tvk_state *s)
{
    s->batch = 0;
    s->nbcalls = s->nbops = s->narena = 0;
}

tally_status tally_vulkan_batch_begin(tally_context *ctx)
{
    static const char fn[] = "tally_vulkan_batch_begin";
    tvk_state *s = tvk_state_of(ctx);
    if (!s) {
        if (ctx) tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: the context is not a Vulkan context", fn);
        return TALLY_ERR_INVALID_ARGUMENT;
    }
    if (s->batch)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: a batch is already open on this context", fn);
    batch_clear(s);
    s->batch = 1;
    return TALLY_OK;
}

tally_status tally_vulkan_batch_end(tally_context *ctx)
{
    static const char fn[] = "tally_vulkan_batch_end";
    tvk_state *s = tvk_state_of(ctx);
    if (!s) {
        if (ctx) tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: the context is not a Vulkan context", fn);
        return TALLY_ERR_INVALID_ARGUMENT;
    }
    if (!s->batch)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: no batch is open (tally_vulkan_batch_begin)", fn);
    s->batch = 0;
    uint64_t nc = s->nbcalls;
    if (nc == 0) return TALLY_OK;
    tvk_item *items = malloc((size_t)nc * sizeof *items);
    tally_status st = TALLY_OK;
    int open = 0;
    if (!items) st = tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    if (st == TALLY_OK && s->narena) { /* every host call's data in one upload */
        if ((st = tvk_begin(ctx, s, fn)) == TALLY_OK && (st = tvk_upload(ctx, s, s->barena, s->narena, fn)) == TALLY_OK)
            open = 1;
    }
    if (st == TALLY_OK) {
        for (uint64_t k = 0; k < nc; k++) {
            tvk_bcall *c = &s->bcalls[k];
            tvk_item *it = &items[k];
            it->type = c->type;
            if (c->host_off != UINT64_MAX)
                it->src = (tvk_src){s->dbuf.buf, c->host_off, s->barena + c->host_off};
            else
                it->src = (tvk_src){c->buf, c->off, NULL};
            it->n = c->n;
            it->ops = s->bops + c->ops_at;
            it->nops = c->nops;
            it->opts = &c->opts;
            it->results = c->results;
        }
        st = tvk_reduce_list(ctx, s, fn, items, nc, open);
    }
    free(items);
    tally_status first = TALLY_OK;
    for (uint64_t k = 0; k < nc; k++) {
        tvk_bcall *c = &s->bcalls[k];
        const tally_op *ops = s->bops + c->ops_at;
        for (size_t i = 0; i < c->nops; i++) {
            if (st != TALLY_OK) { /* a device failure (its message set): no result stands */
                memset(&c->results[i], 0, sizeof c->results[i]);
                c->results[i].op = ops[i];
                c->results[i].status = st;
            } else if (c->results[i].status != TALLY_OK && first == TALLY_OK) {
                first = tally_set_error(ctx, c->results[i].status,
                                        "%s: %s of call %llu of the batch (%llu %s elements): %s", fn,
                                        tally_op_name(ops[i]), (unsigned long long)k, (unsigned long long)c->n,
                                        tally_type_name(c->type), tally_status_string(c->results[i].status));
            }
        }
    }
    batch_clear(s);
    return st != TALLY_OK ? st : first;
}

/* ---- the backend table ------------------------------------------------------------------- */
static tally_status vk_reduce_host(tally_context *ctx, void *state, tally_type type,
                                   const void *data, uint64_t n, const tally_op *ops, size_t nops,
                                   const tally_reduce_options *opts, tally_result *results)
{
    static const char fn[] = "tally_reduce";
    tvk_state *s = state;
    if (s->batch) return batch_add(ctx, s, fn, type, VK_NULL_HANDLE, 0, data, n, ops, nops, opts, results);
    uint64_t bytes = n * tally_type_size(type);
    tvk_src src = {VK_NULL_HANDLE, 0, data};
    if (n) {
        tally_status st = tvk_begin(ctx, s, fn);
        if (st != TALLY_OK) return st;
        st = tvk_upload(ctx, s, data, bytes, fn);
        if (st != TALLY_OK) return st;
        src.buf = s->dbuf.buf;
        s->open = 1; /* the upload is recorded: tvk_reduce goes on in this command buffer */
    }
    tally_status st = tvk_reduce(ctx, s, fn, type, src, n, ops, nops, opts, results);
    s->open = 0;
    return st;
}

static tally_status vk_scan_host(tally_context *ctx, void *state, tally_op op, tally_type type,
                                 const void *in, void *out, uint64_t n, const tally_scan_options *opts)
{
    tvk_state *s = state;
    if (s->batch)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "tally_scan: a batch is open on this context (tally_vulkan_batch_begin); "
                               "scans cannot be batched: end the batch first");
    return tvk_scan_host(ctx, state, op, type, in, out, n, opts);
}

/* tally_reduce_segments / tally_reduce_rows: the segments' data uploaded once (rows packed one
 * after another when that is smaller than their span), then every segment is a call of
 * tvk_reduce_list: up to TVK_MAX_BATCH segments per command buffer, each with its own
 * accumulator and record, one submission per group. */
#define TVK_SEG_CHUNK 4096u
static tally_status vk_reduce_segments(tally_context *ctx, void *state, tally_type type,
                                       const void *data, const uint64_t *offsets, uint64_t nseg,
                                       uint64_t row_len, uint64_t row_stride, const tally_op *ops,
                                       size_t nops, const tally_reduce_options *opts,
                                       tally_result *results)
{
    static const char fn[] = "tally_reduce_segments";
    tvk_state *s = state;
    size_t es = tally_type_size(type);
    const char *base = data;
    uint64_t span, first;
    int packed = 0;
    if (offsets) {
        first = offsets[0];
        span = offsets[nseg] - offsets[0];
    } else {
        first = 0;
        span = row_len ? (nseg - 1) * row_stride + row_len : 0;
        if (row_len && nseg * row_len < span) { /* rows apart: packed is smaller */
            packed = 1;
            span = nseg * row_len;
        }
    }
    uint64_t bytes = span * es;
    tally_status st = TALLY_OK;
    int open = 0;
    if (bytes) {
        if ((st = tvk_buf_ensure(ctx, s, &s->staging, bytes, 1, fn)) != TALLY_OK ||
            (st = tvk_buf_ensure(ctx, s, &s->dbuf, bytes, 0, fn)) != TALLY_OK)
            return st;
        if (packed) {
            for (uint64_t r = 0; r < nseg; r++)
                memcpy((char *)s->staging.map + r * row_len * es, base + r * row_stride * es, row_len * es);
        } else {
            memcpy(s->staging.map, base + first * es, bytes);
        }
        if ((st = tvk_begin(ctx, s, fn)) != TALLY_OK) return st;
        VkBufferCopy c = {0, 0, bytes};
        s->fd.vkCmdCopyBuffer(s->cb, s->staging.buf, s->dbuf.buf, 1, &c);
        tvk_barrier(s);
        open = 1;
    }
    tvk_item *items = malloc((size_t)(nseg < TVK_SEG_CHUNK ? nseg : TVK_SEG_CHUNK) * sizeof *items);
    if (!items) {
        if (open) s->fd.vkEndCommandBuffer(s->cb);
        return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    /* short segments (and empty ones) first, all in segmented dispatches, when the data fits
     * one binding; the long ones as calls of tvk_reduce_list */
    int segmented = bytes > 0 && bytes <= s->seg_bytes && s->short_bytes > 0;
    for (int pass = segmented ? 0 : 1; pass < 2 && st == TALLY_OK; pass++)
    for (uint64_t k0 = 0; k0 < nseg && st == TALLY_OK; k0 += TVK_SEG_CHUNK) {
        uint64_t k1 = nseg - k0 < TVK_SEG_CHUNK ? nseg : k0 + TVK_SEG_CHUNK;
        uint64_t m = 0;
        for (uint64_t k = k0; k < k1; k++) {
            tvk_item *it = &items[m];
            uint64_t start, n, dev; /* start: element index in data; dev: in dbuf */
            if (offsets) {
                start = offsets[k];
                n = offsets[k + 1] - offsets[k];
                dev = start - first;
            } else {
                start = k * row_stride;
                n = row_len;
                dev = packed ? k * row_len : start;
            }
            it->type = type;
            it->src = (tvk_src){s->dbuf.buf, dev * es, n ? base + start * es : base};
            it->n = n;
            it->ops = ops;
            it->nops = nops;
            it->opts = opts;
            it->results = results + k * nops;
            int is_short = segmented && n * es <= s->short_bytes;
            if (is_short == (pass == 0)) m++;
        }
        if (pass == 0) {
            st = tvk_reduce_short(ctx, s, fn, items, m, bytes, open);
            open = 0;
        } else if (m > 0 || open) {
            st = tvk_reduce_list(ctx, s, fn, items, m, open);
            open = 0;
        }
    }
    free(items);
    return st;
}

/* The backend's entries; its two faces below differ only in which devices make it available. */
#define TVK_BACKEND_ENTRIES                                                                     \
    .kind = TALLY_BACKEND_VULKAN, .name = "vulkan", .init = vk_init, .fini = vk_fini,           \
    .reduce = vk_reduce_host, .scan = vk_scan_host, .describe = vk_describe,                     \
    .reduce_segments = vk_reduce_segments

static const tally_backend vulkan_backend = {TVK_BACKEND_ENTRIES, .available = vk_available};

const tally_backend *tally_vulkan_backend_get(void) { return &vulkan_backend; }

/* The same backend as AUTO contexts see it (core/route.c): usable only where a real GPU is, so
 * that AUTO never sends work to a CPU emulation (lavapipe); vk_init picks that GPU for AUTO. */
static const tally_backend vulkan_auto_backend = {TVK_BACKEND_ENTRIES,
                                                  .available = tally_vulkan_auto_available};

const tally_backend *tally_vulkan_auto_backend_get(void) { return &vulkan_auto_backend; }

/* ---- tally_vulkan.h ------------------------------------------------------------------------ */
tvk_state *tvk_state_of(const tally_context *ctx)
{
    if (!ctx || ctx->backend != &vulkan_backend) return NULL;
    return ctx->state;
}

tally_status tally_vulkan_get_handles(const tally_context *ctx, tally_vulkan_handles *h)
{
    tvk_state *s = tvk_state_of(ctx);
    if (!s || !h) return TALLY_ERR_INVALID_ARGUMENT;
    h->instance = s->inst;
    h->physical_device = s->phys;
    h->device = s->dev;
    h->queue = s->queue;
    h->queue_family = s->qfam;
    return TALLY_OK;
}

uint64_t tally_vulkan_validation_messages(const tally_context *ctx, const char **last)
{
    tvk_state *s = tvk_state_of(ctx);
    if (last) *last = "";
    if (!s) return 0;
    pthread_mutex_lock(&s->dbg_lock);
    uint64_t c = s->dbg_count;
    if (last) {
        memcpy(s->dbg_copy, s->dbg_last, sizeof s->dbg_copy);
        *last = s->dbg_copy;
    }
    pthread_mutex_unlock(&s->dbg_lock);
    return c;
}

tally_status tally_vulkan_reduce_buffer(tally_context *ctx, tally_type type, VkBuffer buffer,
                                        VkDeviceSize offset, uint64_t n, const tally_op *ops,
                                        size_t nops, const tally_reduce_options *opts,
                                        tally_result *results)
{
    static const char fn[] = "tally_vulkan_reduce_buffer";
    tvk_state *s = tvk_state_of(ctx);
    tally_status st;
    if (!s) {
        if (ctx) tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: the context is not a Vulkan context", fn);
        return TALLY_ERR_INVALID_ARGUMENT;
    }
    if (!results) return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: results is NULL", fn);
    if (!ops || nops == 0)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: ops is NULL or nops is 0", fn);
    if ((st = tally_check_type(ctx, fn, type)) != TALLY_OK ||
        (st = tally_check_reduce_ops(ctx, fn, type, ops, nops, opts)) != TALLY_OK)
        return st;
    if (n && buffer == VK_NULL_HANDLE)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT, "%s: buffer is VK_NULL_HANDLE but n = %llu",
                               fn, (unsigned long long)n);
    if (offset % tally_type_size(type))
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: offset = %llu is not a multiple of the %zu-byte %s elements", fn,
                               (unsigned long long)offset, tally_type_size(type), tally_type_name(type));
    tally_reduce_options defaults = {0, 0};
    if (s->batch)
        return batch_add(ctx, s, fn, type, buffer, offset, NULL, n, ops, nops, opts ? opts : &defaults, results);
    tvk_src src = {buffer, offset, NULL};
    st = tvk_reduce(ctx, s, fn, type, src, n, ops, nops, opts ? opts : &defaults, results);
    if (st != TALLY_OK) return st;
    for (size_t i = 0; i < nops; i++)
        if (results[i].status != TALLY_OK)
            return tally_set_error(ctx, results[i].status, "%s: %s of %llu %s elements: %s", fn,
                                   tally_op_name(ops[i]), (unsigned long long)n, tally_type_name(type),
                                   tally_status_string(results[i].status));
    return TALLY_OK;
}

/* ---- benchmark hooks (not in tally_vulkan.h; bench/bench_vulkan.c declares them) ------------ */
/* Timestamps around every submission of this context from now on (on = 1); 0 if the queue has
 * none. */
TALLY_API int tally_vulkan_bench_timing(tally_context *ctx, int on)
{
    tvk_state *s = tvk_state_of(ctx);
    if (!s || !s->timestamp_valid) return 0;
    if (on && !s->qpool) {
        VkQueryPoolCreateInfo qi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, NULL, 0, VK_QUERY_TYPE_TIMESTAMP, 3, 0};
        if (s->fd.vkCreateQueryPool(s->dev, &qi, NULL, &s->qpool) != VK_SUCCESS) return 0;
    }
    s->timing = on;
    s->gpu_ns = 0;
    s->split_ns = 0;
    return 1;
}
/* Scans of the associative ops in one pass (on = 1: scan1.comp, where the device allows it) or
 * reduce-then-scan (0); returns whether one pass is on afterwards. */
TALLY_API int tally_vulkan_bench_scan_one_pass(tally_context *ctx, int on)
{
    tvk_state *s = tvk_state_of(ctx);
    if (!s) return 0;
    if (!on) s->scan1 = 0;
    else if (s->scan1_able) s->scan1 = 1;
    return s->scan1;
}
/* GPU microseconds from a submission's start to the end of its first reduce pass's fold
 * dispatches (before the barrier and the finish dispatch), summed since the last read (timing
 * on): with tally_vulkan_bench_gpu_us, where a reduce's time goes. */
TALLY_API double tally_vulkan_bench_fold_us(tally_context *ctx)
{
    tvk_state *s = tvk_state_of(ctx);
    if (!s) return 0;
    double us = s->split_ns / 1e3;
    s->split_ns = 0;
    return us;
}
/* Poll a submission's fence for up to us microseconds before the driver's sleeping wait (0:
 * sleep at once, the default); returns the previous setting. */
TVK_BENCH_SETTER(tally_vulkan_bench_poll_us, double, poll_us)
/* Segments of at most this many bytes take the segmented dispatch (0: none); the old value. */
TVK_BENCH_SETTER(tally_vulkan_bench_short_bytes, uint64_t, short_bytes)
/* GPU microseconds of the submissions since the last read (timing on). */
TALLY_API double tally_vulkan_bench_gpu_us(tally_context *ctx)
{
    tvk_state *s = tvk_state_of(ctx);
    if (!s) return 0;
    double us = s->gpu_ns / 1e3;
    s->gpu_ns = 0;
    return us;
}
/* A device-local buffer (slot 0..TVK_BENCH_SLOTS-1, owned by the context) holding bytes of data (NULL: left
 * as is), for benchmarks. */
TALLY_API tally_status tally_vulkan_bench_buffer(tally_context *ctx, int slot, const void *data,
                                                 uint64_t bytes, VkBuffer *out)
{
    static const char fn[] = "tally_vulkan_bench_buffer";
    tvk_state *s = tvk_state_of(ctx);
    if (!s || slot < 0 || slot >= TVK_BENCH_SLOTS) return TALLY_ERR_INVALID_ARGUMENT;
    tally_status st = tvk_buf_ensure(ctx, s, &s->bench[slot], bytes, 0, fn);
    if (st != TALLY_OK) return st;
    if (data) {
        for (uint64_t o = 0; o < bytes; o += 1ull << 30) {
            uint64_t len = bytes - o < (1ull << 30) ? bytes - o : 1ull << 30;
            if ((st = tvk_buf_ensure(ctx, s, &s->staging, len, 1, fn)) != TALLY_OK) return st;
            memcpy(s->staging.map, (const char *)data + o, len);
            if ((st = tvk_begin(ctx, s, fn)) != TALLY_OK) return st;
            VkBufferCopy c = {0, o, len};
            s->fd.vkCmdCopyBuffer(s->cb, s->staging.buf, s->bench[slot].buf, 1, &c);
            tvk_barrier(s);
            if ((st = tvk_submit_wait(ctx, s, fn)) != TALLY_OK) return st;
        }
    }
    *out = s->bench[slot].buf;
    return TALLY_OK;
}
/* Frees a benchmark buffer (slot 0..TVK_BENCH_SLOTS-1), so that the next tally_vulkan_bench_buffer makes it
 * at the size it asks for. */
TALLY_API void tally_vulkan_bench_free(tally_context *ctx, int slot)
{
    tvk_state *s = tvk_state_of(ctx);
    if (!s || slot < 0 || slot >= TVK_BENCH_SLOTS) return;
    s->fd.vkDeviceWaitIdle(s->dev);
    tvk_buf_free(s, &s->bench[slot]);
}
/* Device-local buffers of at least bytes bytes made from now on get a dedicated allocation (0:
 * none); returns the old setting. */
TVK_BENCH_SETTER(tally_vulkan_bench_dedicated, uint64_t, dedicated_min)
/* One device copy between benchmark buffers, in a submission of its own (timed like the
 * reductions when timing is on). */
TALLY_API tally_status tally_vulkan_bench_copy(tally_context *ctx, int src, uint64_t src_off, int dst,
                                               uint64_t dst_off, uint64_t bytes)
{
    static const char fn[] = "tally_vulkan_bench_copy";
    tvk_state *s = tvk_state_of(ctx);
    if (!s || src < 0 || src >= TVK_BENCH_SLOTS || dst < 0 || dst >= TVK_BENCH_SLOTS || !s->bench[src].buf || !s->bench[dst].buf ||
        src_off + bytes > s->bench[src].size || dst_off + bytes > s->bench[dst].size)
        return TALLY_ERR_INVALID_ARGUMENT;
    tally_status st = tvk_begin(ctx, s, fn);
    if (st != TALLY_OK) return st;
    VkBufferCopy c = {src_off, dst_off, bytes};
    s->fd.vkCmdCopyBuffer(s->cb, s->bench[src].buf, s->bench[dst].buf, 1, &c);
    tvk_barrier(s);
    return tvk_submit_wait(ctx, s, fn);
}
/* The device's memory types and heaps, and the type, size and binding limits of benchmark
 * buffer `slot` (-1: none), as text (always NUL-terminated). */
TALLY_API void tally_vulkan_bench_memory(tally_context *ctx, int slot, char *out, size_t cap)
{
    tvk_state *s = tvk_state_of(ctx);
    if (!cap) return;
    out[0] = 0;
    if (!s) return;
    size_t k = 0;
#define TVK_PUT(...) (k += (size_t)snprintf(out + k, k < cap ? cap - k : 0, __VA_ARGS__), k = k < cap ? k : cap - 1)
    const VkPhysicalDeviceMemoryProperties *m = &s->memprops;
    for (uint32_t i = 0; i < m->memoryHeapCount; i++)
        TVK_PUT("heap %u: %.1f GiB flags 0x%x\n", i, (double)m->memoryHeaps[i].size / (1u << 30),
                (unsigned)m->memoryHeaps[i].flags);
    for (uint32_t i = 0; i < m->memoryTypeCount; i++)
        TVK_PUT("type %u: heap %u flags 0x%x\n", i, m->memoryTypes[i].heapIndex, (unsigned)m->memoryTypes[i].propertyFlags);
    TVK_PUT("maxStorageBufferRange %u, dispatch segment %llu bytes, dedicated from %llu bytes\n",
            s->props.limits.maxStorageBufferRange, (unsigned long long)s->seg_bytes,
            (unsigned long long)s->dedicated_min);
    if (slot >= 0 && slot < TVK_BENCH_SLOTS && s->bench[slot].buf) {
        VkMemoryRequirements mr;
        s->fd.vkGetBufferMemoryRequirements(s->dev, s->bench[slot].buf, &mr);
        int mt = find_memory(s, mr.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        TVK_PUT("buffer slot %d: %llu bytes, alignment %llu, allowed types 0x%x, type %d\n", slot,
                (unsigned long long)s->bench[slot].size, (unsigned long long)mr.alignment,
                (unsigned)mr.memoryTypeBits, mt);
    }
#undef TVK_PUT
}
/* Copies bytes [off, off + bytes) of buf to host memory dst. */
TALLY_API tally_status tally_vulkan_bench_read(tally_context *ctx, VkBuffer buf, uint64_t off,
                                               uint64_t bytes, void *dst)
{
    tvk_state *s = tvk_state_of(ctx);
    if (!s) return TALLY_ERR_INVALID_ARGUMENT;
    for (uint64_t o = 0; o < bytes; o += 1ull << 30) {
        uint64_t len = bytes - o < (1ull << 30) ? bytes - o : 1ull << 30;
        const void *view;
        tally_status st = tvk_download(ctx, s, buf, off + o, len, &view, "tally_vulkan_bench_read");
        if (st != TALLY_OK) return st;
        memcpy((char *)dst + o, view, len);
    }
    return TALLY_OK;
}
