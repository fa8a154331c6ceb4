/* The Vulkan loader, opened at run time (dlopen of libvulkan.so.1), so that libtally loads and
 * runs on machines without it. Every Vulkan function the backend calls comes from the tables
 * below; nothing links against libvulkan. Not installed. */
#ifndef TALLY_VK_LOADER_H
#define TALLY_VK_LOADER_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

/* X(name): functions reached through vkGetInstanceProcAddr(NULL, ...) */
#define TVK_GLOBAL_FNS(X)                                                                       \
    X(vkCreateInstance)                                                                         \
    X(vkEnumerateInstanceVersion)                                                               \
    X(vkEnumerateInstanceLayerProperties)                                                       \
    X(vkEnumerateInstanceExtensionProperties)

#define TVK_INSTANCE_FNS(X)                                                                     \
    X(vkDestroyInstance)                                                                        \
    X(vkEnumeratePhysicalDevices)                                                               \
    X(vkGetPhysicalDeviceProperties)                                                            \
    X(vkGetPhysicalDeviceProperties2)                                                           \
    X(vkGetPhysicalDeviceFeatures)                                                              \
    X(vkGetPhysicalDeviceFeatures2)                                                             \
    X(vkGetPhysicalDeviceQueueFamilyProperties)                                                 \
    X(vkGetPhysicalDeviceMemoryProperties)                                                      \
    X(vkEnumerateDeviceExtensionProperties)                                                     \
    X(vkCreateDevice)                                                                           \
    X(vkGetDeviceProcAddr)

#define TVK_DEVICE_FNS(X)                                                                       \
    X(vkDestroyDevice)                                                                          \
    X(vkGetDeviceQueue)                                                                         \
    X(vkDeviceWaitIdle)                                                                         \
    X(vkCreateBuffer)                                                                           \
    X(vkDestroyBuffer)                                                                          \
    X(vkGetBufferMemoryRequirements)                                                            \
    X(vkAllocateMemory)                                                                         \
    X(vkFreeMemory)                                                                             \
    X(vkBindBufferMemory)                                                                       \
    X(vkMapMemory)                                                                              \
    X(vkUnmapMemory)                                                                            \
    X(vkInvalidateMappedMemoryRanges)                                                           \
    X(vkFlushMappedMemoryRanges)                                                                \
    X(vkCreateShaderModule)                                                                     \
    X(vkDestroyShaderModule)                                                                    \
    X(vkCreateDescriptorSetLayout)                                                              \
    X(vkDestroyDescriptorSetLayout)                                                             \
    X(vkCreatePipelineLayout)                                                                   \
    X(vkDestroyPipelineLayout)                                                                  \
    X(vkCreateComputePipelines)                                                                 \
    X(vkDestroyPipeline)                                                                        \
    X(vkCreatePipelineCache)                                                                    \
    X(vkDestroyPipelineCache)                                                                   \
    X(vkGetPipelineCacheData)                                                                   \
    X(vkCreateDescriptorPool)                                                                   \
    X(vkDestroyDescriptorPool)                                                                  \
    X(vkResetDescriptorPool)                                                                    \
    X(vkAllocateDescriptorSets)                                                                 \
    X(vkUpdateDescriptorSets)                                                                   \
    X(vkCreateCommandPool)                                                                      \
    X(vkDestroyCommandPool)                                                                     \
    X(vkAllocateCommandBuffers)                                                                 \
    X(vkFreeCommandBuffers)                                                                     \
    X(vkResetCommandBuffer)                                                                     \
    X(vkBeginCommandBuffer)                                                                     \
    X(vkEndCommandBuffer)                                                                       \
    X(vkCmdBindPipeline)                                                                        \
    X(vkCmdBindDescriptorSets)                                                                  \
    X(vkCmdPushConstants)                                                                       \
    X(vkCmdDispatch)                                                                            \
    X(vkCmdPipelineBarrier)                                                                     \
    X(vkCmdCopyBuffer)                                                                          \
    X(vkCmdFillBuffer)                                                                          \
    X(vkCmdWriteTimestamp)                                                                      \
    X(vkCmdResetQueryPool)                                                                      \
    X(vkCreateQueryPool)                                                                        \
    X(vkDestroyQueryPool)                                                                       \
    X(vkGetQueryPoolResults)                                                                    \
    X(vkQueueSubmit)                                                                            \
    X(vkQueueWaitIdle)                                                                          \
    X(vkCreateFence)                                                                            \
    X(vkDestroyFence)                                                                           \
    X(vkWaitForFences)                                                                          \
    X(vkGetFenceStatus)                                                                         \
    X(vkResetFences)

#define TVK_DECL(name) PFN_##name name;
typedef struct tvk_instance_fns {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
    TVK_GLOBAL_FNS(TVK_DECL)
    TVK_INSTANCE_FNS(TVK_DECL)
    PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT;   /* NULL without layers */
    PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT;
} tvk_instance_fns;
typedef struct tvk_device_fns {
    TVK_DEVICE_FNS(TVK_DECL)
} tvk_device_fns;
#undef TVK_DECL

/* Opens the loader once per process (thread-safe). Returns vkGetInstanceProcAddr, or NULL with
 * *why set to a static sentence ("libvulkan.so.1 not found: ..."). TALLY_VULKAN_LOADER names
 * another library path. */
PFN_vkGetInstanceProcAddr tvk_loader_open(const char **why);

/* Fills the global and instance tables (instance may be VK_NULL_HANDLE for the globals only). */
void tvk_load_instance_fns(tvk_instance_fns *f, PFN_vkGetInstanceProcAddr gipa, VkInstance inst);
/* Fills the device table; returns 0 if some function is missing. */
int tvk_load_device_fns(tvk_device_fns *f, const tvk_instance_fns *fi, VkDevice dev);

#endif
