/* The Vulkan variants of `tally bench --backend vulkan`: seed 004's reduction kernels as Vulkan
 * compute shaders (shaders/lab_reduce.comp: naive accumulate with atomics, workgroup tree,
 * subgroup reduce, subgroup reduce with vec4 loads, and the deliberately incorrect tree) beside
 * tally's own Vulkan reductions, on one device and queue: the lab makes a Vulkan tally context
 * and records its kernels on that context's device (tally_vulkan_get_handles). Each is
 * validated by the bench before it is timed with device timestamps. With
 * TALLY_VULKAN_VALIDATION=1 a validation message during a variant fails it.
 * Compiled only with TALLY_VULKAN (and a shader compiler). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "lab_internal.h"
#include "tally.h"
#include "tally_vulkan.h"

/* tally's benchmark hooks (src/vulkan/vk_backend.c): a device-local buffer owned by the
 * context, and timestamps around its submissions */
TALLY_API tally_status tally_vulkan_bench_buffer(tally_context *ctx, int slot, const void *data,
                                                 uint64_t bytes, VkBuffer *out);
TALLY_API int tally_vulkan_bench_timing(tally_context *ctx, int on);
TALLY_API double tally_vulkan_bench_gpu_us(tally_context *ctx);

extern const unsigned char lab_spv_reduce[];
extern const size_t lab_spv_reduce_size;

enum { M_NAIVE, M_TREE, M_TREE_BROKEN, M_SUBGROUP, M_SUBGROUP_VEC4, M_TREE_FINISH, M_SUBGROUP_FINISH, M_COUNT };
#define TREE_WGS 256u       /* seed 004 #2 / seed 001: 256 workgroups of 256 */
#define SUB_WGS_MAX 1024u   /* subgroup variants: one workgroup per 256 elements, at most 1024 */
#define PART_BYTES 16384u   /* partials (up to 4096 floats), then the result word */
#define RES_OFF 16384u

typedef struct vk_fns {
#define VK_FNS(X)                                                                                  \
    X(CreateBuffer) X(DestroyBuffer) X(GetBufferMemoryRequirements) X(AllocateMemory) X(FreeMemory) \
    X(BindBufferMemory) X(MapMemory) X(CreateShaderModule) X(DestroyShaderModule)                  \
    X(CreateDescriptorSetLayout) X(DestroyDescriptorSetLayout) X(CreatePipelineLayout)             \
    X(DestroyPipelineLayout) X(CreateComputePipelines) X(DestroyPipeline) X(CreateDescriptorPool)  \
    X(DestroyDescriptorPool) X(AllocateDescriptorSets) X(UpdateDescriptorSets) X(CreateCommandPool) \
    X(DestroyCommandPool) X(AllocateCommandBuffers) X(BeginCommandBuffer) X(EndCommandBuffer)       \
    X(ResetCommandBuffer) X(CmdBindPipeline) X(CmdBindDescriptorSets) X(CmdPushConstants)           \
    X(CmdDispatch) X(CmdPipelineBarrier) X(CmdFillBuffer) X(QueueSubmit) X(CreateFence)             \
    X(DestroyFence) X(WaitForFences) X(ResetFences) X(CmdWriteTimestamp) X(CreateQueryPool)         \
    X(DestroyQueryPool) X(CmdResetQueryPool) X(GetQueryPoolResults) X(DeviceWaitIdle)
#define VK_FIELD(n) PFN_vk##n n;
    VK_FNS(VK_FIELD)
} vk_fns;

typedef struct vk_state {
    tally_context *ctx;
    void *lib;
    vk_fns f;
    VkDevice dev;
    VkQueue queue;
    float ts_period;
    VkBuffer in, out;
    VkDeviceMemory out_mem;
    void *out_map;
    VkShaderModule mod;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkPipeline pipe[M_COUNT];
    VkDescriptorPool dpool;
    VkDescriptorSet set;
    VkCommandPool cpool;
    VkCommandBuffer cb;
    VkFence fence;
    VkQueryPool qpool;
    uint64_t n;
    int recording;         /* time_calls: fn records into the open command buffer only */
    uint64_t msgs;         /* validation messages seen so far */
    char desc[320];
} vk_state;

static int vk_available(void) { return tally_backend_available(TALLY_BACKEND_VULKAN); }

/* In `--backend all`: only a real GPU (a CPU emulation such as lavapipe when asked by name). */
static int vk_in_all(void)
{
    int n = tally_vulkan_device_count(NULL);
    for (int i = 0; i < n; i++) {
        tally_vulkan_device_info info;
        if (tally_vulkan_get_device_info(i, &info) == TALLY_OK && info.usable && info.device_type != 4) return 1;
    }
    return 0;
}

static void barrier(vk_state *s)
{
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
                          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                              VK_ACCESS_HOST_READ_BIT};
    s->f.CmdPipelineBarrier(s->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                                VK_PIPELINE_STAGE_HOST_BIT,
                            0, 1, &mb, 0, NULL, 0, NULL);
}

#define VK_CK(call, what)                                                                         \
    do {                                                                                          \
        VkResult r_ = (call);                                                                     \
        if (r_ != VK_SUCCESS) {                                                                   \
            snprintf(why, LAB_WHY, "%s failed (VkResult %d)", what, (int)r_);                     \
            return -1;                                                                            \
        }                                                                                         \
    } while (0)

static int begin(vk_state *s, char *why)
{
    VK_CK(s->f.ResetCommandBuffer(s->cb, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                   VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL};
    VK_CK(s->f.BeginCommandBuffer(s->cb, &bi), "vkBeginCommandBuffer");
    barrier(s); /* the previous submission's writes before this one's */
    return 0;
}

static int submit_wait(vk_state *s, char *why)
{
    VK_CK(s->f.EndCommandBuffer(s->cb), "vkEndCommandBuffer");
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &s->cb;
    VK_CK(s->f.QueueSubmit(s->queue, 1, &si, s->fence), "vkQueueSubmit");
    VK_CK(s->f.WaitForFences(s->dev, 1, &s->fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    VK_CK(s->f.ResetFences(s->dev, 1, &s->fence), "vkResetFences");
    return 0;
}

/* Fails the variant if the validation layer spoke since the last check. */
static int validation_quiet(vk_state *s, char *why)
{
    const char *last = "";
    uint64_t m = tally_vulkan_validation_messages(s->ctx, &last);
    if (m == s->msgs) return 0;
    s->msgs = m;
    snprintf(why, LAB_WHY, "Vulkan validation: %.200s", last);
    return -1;
}

static void dispatch(vk_state *s, int mode, uint32_t groups, uint32_t n)
{
    s->f.CmdBindPipeline(s->cb, VK_PIPELINE_BIND_POINT_COMPUTE, s->pipe[mode]);
    s->f.CmdPushConstants(s->cb, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &n);
    s->f.CmdDispatch(s->cb, groups, 1, 1);
}

static uint32_t sub_groups(uint64_t n)
{
    uint64_t g = (n + 255) / 256;
    if (g < 1) g = 1;
    return (uint32_t)(g < SUB_WGS_MAX ? g : SUB_WGS_MAX);
}

/* Records one variant (mode: its first pass) and, unless recording for time_calls, runs it and
 * reads the sum. */
static int run_kernel(void *bs, int mode, uint64_t n, double out[3], char *why)
{
    vk_state *s = bs;
    if (n > UINT32_MAX) {
        snprintf(why, LAB_WHY, "the seed's kernels index with 32 bits (n < 2^32)");
        return -1;
    }
    if (!s->recording && begin(s, why)) return -1;
    s->f.CmdBindDescriptorSets(s->cb, VK_PIPELINE_BIND_POINT_COMPUTE, s->layout, 0, 1, &s->set, 0, NULL);
    if (mode == M_NAIVE) {
        s->f.CmdFillBuffer(s->cb, s->out, RES_OFF, 4, 0);
        barrier(s);
        dispatch(s, M_NAIVE, TREE_WGS, (uint32_t)n);
    } else if (mode == M_TREE || mode == M_TREE_BROKEN) {
        dispatch(s, mode, TREE_WGS, (uint32_t)n);
        barrier(s);
        dispatch(s, M_TREE_FINISH, 1, TREE_WGS);
    } else {
        uint32_t g = sub_groups(mode == M_SUBGROUP_VEC4 ? (n + 3) / 4 : n);
        dispatch(s, mode, g, (uint32_t)n);
        barrier(s);
        dispatch(s, M_SUBGROUP_FINISH, 1, g);
    }
    barrier(s);
    if (s->recording) return 0;
    if (submit_wait(s, why)) return -1;
    float r;
    memcpy(&r, (const char *)s->out_map + RES_OFF, 4);
    out[0] = r;
    return validation_quiet(s, why);
}

static int v_naive(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{ (void)check; (void)so; return run_kernel(bs, M_NAIVE, n, out, why); }
static int v_tree(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{ (void)check; (void)so; return run_kernel(bs, M_TREE, n, out, why); }
static int v_tree_broken(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{ (void)check; (void)so; return run_kernel(bs, M_TREE_BROKEN, n, out, why); }
static int v_subgroup(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{ (void)check; (void)so; return run_kernel(bs, M_SUBGROUP, n, out, why); }
static int v_subgroup_vec4(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{ (void)check; (void)so; return run_kernel(bs, M_SUBGROUP_VEC4, n, out, why); }

static int tally_sum(vk_state *s, uint64_t n, const tally_op *ops, size_t nops, double out[3], char *why)
{
    tally_result r[3];
    tally_status st = tally_vulkan_reduce_buffer(s->ctx, TALLY_F32, s->in, 0, n, ops, nops, NULL, r);
    if (st != TALLY_OK && !(n == 0 && st == TALLY_ERR_EMPTY)) {
        snprintf(why, LAB_WHY, "%s", tally_last_error(s->ctx));
        return -1;
    }
    for (size_t i = 0; i < nops; i++) out[i] = r[i].status == TALLY_OK ? r[i].value.f64 : 0.0;
    return validation_quiet(s, why);
}
static int v_tally(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so;
    static const tally_op ops[1] = {TALLY_SUM};
    return tally_sum(bs, n, ops, 1, out, why);
}
static int v_tally_smm(void *bs, uint64_t n, int check, double out[3], float *so, char *why)
{
    (void)check; (void)so;
    static const tally_op ops[3] = {TALLY_SUM, TALLY_MIN, TALLY_MAX};
    return tally_sum(bs, n, ops, 3, out, why);
}

/* Error bounds (multiples of sum |x|): the longest chain of roundings of each kernel. */
static double b_naive(uint64_t i, uint64_t n)
{ (void)i; return lab_gamma((double)(n / (TREE_WGS * 256)) + TREE_WGS * 256 + 2.0, LAB_U32); }
static double b_tree(uint64_t i, uint64_t n)
{ (void)i; return lab_gamma((double)(n / (TREE_WGS * 256)) + 24.0, LAB_U32); }
/* subgroupAdd's order is the device's: up to a subgroup's size (128) in a chain, twice per pass */
static double b_subgroup(uint64_t i, uint64_t n)
{ (void)i; return lab_gamma((double)(n / ((uint64_t)sub_groups(n) * 256)) + 4.0 + 4.0 * 128 + 8.0, LAB_U32); }

static const lab_variant vk_variants[] = {
    { "vk-naive-atomic", LAB_REDUCE, LAB_CHECK_BOUND,
      "seed 004 #1: grid-stride sum per invocation, one float atomic add each (compare-and-swap)", v_naive, b_naive, 0, 0 },
    { "vk-workgroup-tree", LAB_REDUCE, LAB_CHECK_BOUND,
      "seed 004 #2: 256 workgroups x 256, shared-memory tree, then one workgroup over the partials", v_tree, b_tree, 0, 0 },
    { "vk-subgroup", LAB_REDUCE, LAB_CHECK_BOUND,
      "seed 004 #3: subgroupAdd, then subgroupAdd over the subgroup sums; two dispatches", v_subgroup, b_subgroup, 0, 0 },
    { "vk-subgroup-vec4", LAB_REDUCE, LAB_CHECK_BOUND,
      "seed 004 #4: subgroup reduce with 16-byte (vec4) loads", v_subgroup_vec4, b_subgroup, 0, 0 },
    { "tally-vulkan", LAB_REDUCE, LAB_CHECK_EXACT,
      "tally_vulkan_reduce_buffer sum: correctly rounded", v_tally, NULL, 0, 0 },
    { "tally-vulkan-sum-min-max", LAB_REDUCE_SMM, LAB_CHECK_EXACT,
      "tally_vulkan_reduce_buffer sum,min,max fused", v_tally_smm, NULL, 0, 0 },
    { "vk-broken-tree", LAB_REDUCE, LAB_CHECK_BOUND,
      "deliberately incorrect: workgroup tree whose loads skip the last element of each block of 1024", v_tree_broken, b_tree, 1, 0 },
};

static void vk_close(void *bs)
{
    vk_state *s = bs;
    if (!s) return;
    if (s->dev && s->f.DeviceWaitIdle) {
        s->f.DeviceWaitIdle(s->dev);
        for (int m = 0; m < M_COUNT; m++)
            if (s->pipe[m]) s->f.DestroyPipeline(s->dev, s->pipe[m], NULL);
        if (s->qpool) s->f.DestroyQueryPool(s->dev, s->qpool, NULL);
        if (s->fence) s->f.DestroyFence(s->dev, s->fence, NULL);
        if (s->cpool) s->f.DestroyCommandPool(s->dev, s->cpool, NULL);
        if (s->dpool) s->f.DestroyDescriptorPool(s->dev, s->dpool, NULL);
        if (s->layout) s->f.DestroyPipelineLayout(s->dev, s->layout, NULL);
        if (s->dsl) s->f.DestroyDescriptorSetLayout(s->dev, s->dsl, NULL);
        if (s->mod) s->f.DestroyShaderModule(s->dev, s->mod, NULL);
        if (s->out) s->f.DestroyBuffer(s->dev, s->out, NULL);
        if (s->out_mem) s->f.FreeMemory(s->dev, s->out_mem, NULL);
    }
    tally_destroy(s->ctx);
    if (s->lib) dlclose(s->lib);
    free(s);
}

static int open_in(vk_state *s, char *why)
{
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_VULKAN;
    if (tally_create(&s->ctx, &o) != TALLY_OK) {
        snprintf(why, LAB_WHY, "%s", tally_create_error());
        return -1;
    }
    tally_vulkan_handles h;
    tally_vulkan_get_handles(s->ctx, &h);
    s->dev = h.device;
    s->queue = h.queue;
    const char *env = getenv("TALLY_VULKAN_LOADER");
    s->lib = dlopen(env && *env ? env : "libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!s->lib) {
        snprintf(why, LAB_WHY, "cannot open the Vulkan loader");
        return -1;
    }
    PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)dlsym(s->lib, "vkGetInstanceProcAddr");
    PFN_vkGetDeviceProcAddr gdpa = gipa ? (PFN_vkGetDeviceProcAddr)gipa(h.instance, "vkGetDeviceProcAddr") : NULL;
    PFN_vkGetPhysicalDeviceProperties gpp =
        gipa ? (PFN_vkGetPhysicalDeviceProperties)gipa(h.instance, "vkGetPhysicalDeviceProperties") : NULL;
    PFN_vkGetPhysicalDeviceMemoryProperties gmp =
        gipa ? (PFN_vkGetPhysicalDeviceMemoryProperties)gipa(h.instance, "vkGetPhysicalDeviceMemoryProperties") : NULL;
    if (!gdpa || !gpp || !gmp) {
        snprintf(why, LAB_WHY, "the Vulkan loader lacks vkGetDeviceProcAddr");
        return -1;
    }
#define VK_LOAD(n)                                                                                \
    if (!(s->f.n = (PFN_vk##n)gdpa(s->dev, "vk" #n))) {                                           \
        snprintf(why, LAB_WHY, "no vk" #n);                                                       \
        return -1;                                                                                \
    }
    VK_FNS(VK_LOAD)
    VkPhysicalDeviceProperties props;
    gpp(h.physical_device, &props);
    s->ts_period = props.limits.timestampPeriod;
    VkPhysicalDeviceMemoryProperties mp;
    gmp(h.physical_device, &mp);
    /* the partials and the result: host-visible, coherent */
    VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = PART_BYTES + 256;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VK_CK(s->f.CreateBuffer(s->dev, &bi, NULL, &s->out), "vkCreateBuffer");
    VkMemoryRequirements mr;
    s->f.GetBufferMemoryRequirements(s->dev, s->out, &mr);
    uint32_t want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, mt = UINT32_MAX;
    for (uint32_t i = 0; i < mp.memoryTypeCount && mt == UINT32_MAX; i++)
        if ((mr.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) mt = i;
    if (mt == UINT32_MAX) {
        snprintf(why, LAB_WHY, "no host-visible memory");
        return -1;
    }
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, mr.size, mt};
    VK_CK(s->f.AllocateMemory(s->dev, &ai, NULL, &s->out_mem), "vkAllocateMemory");
    VK_CK(s->f.BindBufferMemory(s->dev, s->out, s->out_mem, 0), "vkBindBufferMemory");
    VK_CK(s->f.MapMemory(s->dev, s->out_mem, 0, VK_WHOLE_SIZE, 0, &s->out_map), "vkMapMemory");
    /* the kernels: one module, a pipeline per mode */
    VkShaderModuleCreateInfo mi = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, lab_spv_reduce_size,
                                   (const uint32_t *)(const void *)lab_spv_reduce};
    VK_CK(s->f.CreateShaderModule(s->dev, &mi, NULL, &s->mod), "vkCreateShaderModule");
    VkDescriptorSetLayoutBinding lb[3];
    for (uint32_t i = 0; i < 3; i++)
        lb[i] = (VkDescriptorSetLayoutBinding){i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo dli = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, 3, lb};
    VK_CK(s->f.CreateDescriptorSetLayout(s->dev, &dli, NULL, &s->dsl), "vkCreateDescriptorSetLayout");
    VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
    VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1, &s->dsl, 1, &pcr};
    VK_CK(s->f.CreatePipelineLayout(s->dev, &pli, NULL, &s->layout), "vkCreatePipelineLayout");
    for (uint32_t m = 0; m < M_COUNT; m++) {
        VkSpecializationMapEntry me = {0, 0, 4};
        VkSpecializationInfo si = {1, &me, 4, &m};
        VkComputePipelineCreateInfo ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        ci.stage.module = s->mod;
        ci.stage.pName = "main";
        ci.stage.pSpecializationInfo = &si;
        ci.layout = s->layout;
        VK_CK(s->f.CreateComputePipelines(s->dev, VK_NULL_HANDLE, 1, &ci, NULL, &s->pipe[m]), "vkCreateComputePipelines");
    }
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3};
    VkDescriptorPoolCreateInfo dpi = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0, 1, 1, &ps};
    VK_CK(s->f.CreateDescriptorPool(s->dev, &dpi, NULL, &s->dpool), "vkCreateDescriptorPool");
    VkDescriptorSetAllocateInfo dai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, s->dpool, 1, &s->dsl};
    VK_CK(s->f.AllocateDescriptorSets(s->dev, &dai, &s->set), "vkAllocateDescriptorSets");
    VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
                                   VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, h.queue_family};
    VK_CK(s->f.CreateCommandPool(s->dev, &cpi, NULL, &s->cpool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, s->cpool,
                                       VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    VK_CK(s->f.AllocateCommandBuffers(s->dev, &cai, &s->cb), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK_CK(s->f.CreateFence(s->dev, &fi, NULL, &s->fence), "vkCreateFence");
    VkQueryPoolCreateInfo qi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, NULL, 0, VK_QUERY_TYPE_TIMESTAMP, 2, 0};
    VK_CK(s->f.CreateQueryPool(s->dev, &qi, NULL, &s->qpool), "vkCreateQueryPool");
    tally_vulkan_bench_timing(s->ctx, 1);
    snprintf(s->desc, sizeof s->desc, "%.240s; device timestamps", tally_device_description(s->ctx));
    s->msgs = tally_vulkan_validation_messages(s->ctx, NULL);
    return 0;
}

static int vk_open(void **bstate, int threads, uint64_t max_n, char *why)
{
    (void)threads;
    (void)max_n;
    vk_state *s = calloc(1, sizeof *s);
    *bstate = NULL;
    if (!s) {
        snprintf(why, LAB_WHY, "out of memory");
        return -1;
    }
    if (open_in(s, why)) {
        vk_close(s);
        return -1;
    }
    *bstate = s;
    return 0;
}

static int vk_load(void *bs, const float *in, uint64_t n, char *why)
{
    vk_state *s = bs;
    uint64_t bytes = (n ? n : 1) * 4;
    if (tally_vulkan_bench_buffer(s->ctx, 0, n ? in : NULL, bytes, &s->in) != TALLY_OK) {
        snprintf(why, LAB_WHY, "%s", tally_last_error(s->ctx));
        return -1;
    }
    s->n = n;
    VkDescriptorBufferInfo bi[3] = {{s->in, 0, VK_WHOLE_SIZE}, {s->out, 0, PART_BYTES}, {s->out, RES_OFF, 4}};
    VkWriteDescriptorSet w[3];
    for (uint32_t i = 0; i < 3; i++)
        w[i] = (VkWriteDescriptorSet){VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, s->set, i, 0, 1,
                                      VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &bi[i], NULL};
    s->f.UpdateDescriptorSets(s->dev, 3, w, 0, NULL);
    return 0;
}

static const char *vk_describe(void *bs) { return ((vk_state *)bs)->desc; }

/* reps calls in one command buffer between two timestamps (tally's own calls: the GPU time of
 * their submissions, from tally's timestamps). */
static int vk_time_calls(void *bs, const lab_variant *v, uint64_t n, uint64_t reps, double *seconds, char *why)
{
    vk_state *s = bs;
    double out[3];
    if (v->fn == v_tally || v->fn == v_tally_smm) {
        tally_vulkan_bench_gpu_us(s->ctx);
        for (uint64_t k = 0; k < reps; k++)
            if (v->fn(bs, n, 0, out, NULL, why)) return -1;
        *seconds = tally_vulkan_bench_gpu_us(s->ctx) * 1e-6 / (double)reps;
        return 0;
    }
    if (begin(s, why)) return -1;
    s->f.CmdResetQueryPool(s->cb, s->qpool, 0, 2);
    s->f.CmdWriteTimestamp(s->cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s->qpool, 0);
    s->recording = 1;
    int rc = 0;
    for (uint64_t k = 0; k < reps && !rc; k++) rc = v->fn(bs, n, 0, out, NULL, why);
    s->recording = 0;
    s->f.CmdWriteTimestamp(s->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->qpool, 1);
    if (rc || submit_wait(s, why)) return -1;
    uint64_t ts[2];
    VK_CK(s->f.GetQueryPoolResults(s->dev, s->qpool, 0, 2, sizeof ts, ts, 8,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT), "vkGetQueryPoolResults");
    *seconds = (double)(ts[1] - ts[0]) * s->ts_period * 1e-9 / (double)reps;
    return validation_quiet(s, why);
}

const lab_backend lab_vulkan_backend = {
    "vulkan", vk_available, vk_open, vk_close, vk_load, vk_describe, vk_time_calls,
    vk_variants, sizeof vk_variants / sizeof vk_variants[0], vk_in_all,
};
