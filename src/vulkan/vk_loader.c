/* The Vulkan loader, opened with dlopen on first use (see vk_loader.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include "vulkan/vk_loader.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static PFN_vkGetInstanceProcAddr gipa;
static const char *open_error;
static char open_error_buf[256];

static void open_loader(void)
{
    const char *env = getenv("TALLY_VULKAN_LOADER");
    const char *name = env && *env ? env : "libvulkan.so.1";
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h && !(env && *env)) h = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        /* a copy: dlerror's string is overwritten by the next dl call */
        int i = 0;
        const char *pre = "the Vulkan loader could not be opened: ";
        for (const char *p = pre; *p && i < (int)sizeof open_error_buf - 1; p++) open_error_buf[i++] = *p;
        for (const char *p = e ? e : name; *p && i < (int)sizeof open_error_buf - 1; p++)
            open_error_buf[i++] = *p;
        open_error_buf[i] = 0;
        open_error = open_error_buf;
        return;
    }
    gipa = (PFN_vkGetInstanceProcAddr)dlsym(h, "vkGetInstanceProcAddr");
    if (!gipa) open_error = "the Vulkan loader has no vkGetInstanceProcAddr";
    /* the handle stays open for the life of the process (Vulkan objects may outlive contexts
     * of other threads; unloading would be unsafe) */
}

PFN_vkGetInstanceProcAddr tvk_loader_open(const char **why)
{
    pthread_once(&once, open_loader);
    if (!gipa && why) *why = open_error;
    return gipa;
}

void tvk_load_instance_fns(tvk_instance_fns *f, PFN_vkGetInstanceProcAddr g, VkInstance inst)
{
    f->vkGetInstanceProcAddr = g;
#define TVK_G(name) f->name = (PFN_##name)g(VK_NULL_HANDLE, #name);
    TVK_GLOBAL_FNS(TVK_G)
#undef TVK_G
    if (inst == VK_NULL_HANDLE) return;
#define TVK_I(name) f->name = (PFN_##name)g(inst, #name);
    TVK_INSTANCE_FNS(TVK_I)
#undef TVK_I
    f->vkCreateDebugUtilsMessengerEXT =
        (PFN_vkCreateDebugUtilsMessengerEXT)g(inst, "vkCreateDebugUtilsMessengerEXT");
    f->vkDestroyDebugUtilsMessengerEXT =
        (PFN_vkDestroyDebugUtilsMessengerEXT)g(inst, "vkDestroyDebugUtilsMessengerEXT");
}

int tvk_load_device_fns(tvk_device_fns *f, const tvk_instance_fns *fi, VkDevice dev)
{
    int ok = 1;
#define TVK_D(name)                                                                            \
    f->name = (PFN_##name)fi->vkGetDeviceProcAddr(dev, #name);                                 \
    if (!f->name) ok = 0;
    TVK_DEVICE_FNS(TVK_D)
#undef TVK_D
    return ok;
}
