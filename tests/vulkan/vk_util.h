/* Test helpers: the few Vulkan calls a test needs to make its own VkBuffers on a tally
 * context's device (through the loader, opened here as the library does). */
#ifndef TALLY_TEST_VK_UTIL_H
#define TALLY_TEST_VK_UTIL_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include "tally_vulkan.h"

typedef struct tvk_test_buf {
    VkBuffer buf;
    VkDeviceMemory mem;
    void *map;
    VkDeviceSize size;
} tvk_test_buf;

static struct {
    VkDevice dev;
    VkPhysicalDevice phys;
    PFN_vkCreateBuffer CreateBuffer;
    PFN_vkDestroyBuffer DestroyBuffer;
    PFN_vkGetBufferMemoryRequirements GetBufferMemoryRequirements;
    PFN_vkAllocateMemory AllocateMemory;
    PFN_vkFreeMemory FreeMemory;
    PFN_vkBindBufferMemory BindBufferMemory;
    PFN_vkMapMemory MapMemory;
    VkPhysicalDeviceMemoryProperties mp;
} tvk_t;

/* Loads what the helpers need for ctx's device; 0 on failure. */
static int tvk_test_init(tally_context *ctx)
{
    tally_vulkan_handles h;
    if (tally_vulkan_get_handles(ctx, &h) != TALLY_OK) return 0;
    const char *env = getenv("TALLY_VULKAN_LOADER");
    void *lib = dlopen(env && *env ? env : "libvulkan.so.1", RTLD_NOW);
    if (!lib) return 0;
    PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
    PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)gipa(h.instance, "vkGetDeviceProcAddr");
    PFN_vkGetPhysicalDeviceMemoryProperties gmp =
        (PFN_vkGetPhysicalDeviceMemoryProperties)gipa(h.instance, "vkGetPhysicalDeviceMemoryProperties");
    tvk_t.dev = h.device;
    tvk_t.phys = h.physical_device;
#define L_(n) tvk_t.n = (PFN_vk##n)gdpa(h.device, "vk" #n);
    L_(CreateBuffer) L_(DestroyBuffer) L_(GetBufferMemoryRequirements) L_(AllocateMemory)
    L_(FreeMemory) L_(BindBufferMemory) L_(MapMemory)
#undef L_
    gmp(h.physical_device, &tvk_t.mp);
    return tvk_t.CreateBuffer != NULL;
}

/* A host-visible, coherent storage buffer of size bytes, mapped. */
static int tvk_test_buf_make(tvk_test_buf *b, VkDeviceSize size)
{
    memset(b, 0, sizeof *b);
    VkBufferCreateInfo bi;
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bi.size = size;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (tvk_t.CreateBuffer(tvk_t.dev, &bi, NULL, &b->buf) != VK_SUCCESS) return 0;
    VkMemoryRequirements mr;
    tvk_t.GetBufferMemoryRequirements(tvk_t.dev, b->buf, &mr);
    uint32_t want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int mt = -1;
    for (uint32_t i = 0; i < tvk_t.mp.memoryTypeCount && mt < 0; i++)
        if ((mr.memoryTypeBits & (1u << i)) && (tvk_t.mp.memoryTypes[i].propertyFlags & want) == want) mt = (int)i;
    if (mt < 0) return 0;
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, mr.size, (uint32_t)mt};
    if (tvk_t.AllocateMemory(tvk_t.dev, &ai, NULL, &b->mem) != VK_SUCCESS) return 0;
    if (tvk_t.BindBufferMemory(tvk_t.dev, b->buf, b->mem, 0) != VK_SUCCESS) return 0;
    if (tvk_t.MapMemory(tvk_t.dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map) != VK_SUCCESS) return 0;
    b->size = size;
    return 1;
}

static void tvk_test_buf_free(tvk_test_buf *b)
{
    if (b->buf) tvk_t.DestroyBuffer(tvk_t.dev, b->buf, NULL);
    if (b->mem) tvk_t.FreeMemory(tvk_t.dev, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

#endif
