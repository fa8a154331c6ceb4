/* Scans on a Vulkan device (placeholder: the CPU backend). */
#include <string.h>
#include "vulkan/vk_internal.h"

tally_status tvk_scan_host(tally_context *ctx, tvk_state *s, tally_op op, tally_type type,
                           const void *in, void *out, uint64_t n, const tally_scan_options *opts)
{
    tally_context *cpu;
    tally_status st = tvk_cpu(ctx, s, &cpu);
    if (st != TALLY_OK) return st;
    return tally_scan(cpu, op, type, in, out, n, opts);
}

tally_status tvk_scan(tally_context *ctx, tvk_state *s, const char *fn, tally_op op,
                      tally_type type, tvk_src in, VkBuffer out, VkDeviceSize out_off, uint64_t n,
                      const tally_scan_options *opts)
{
    (void)s; (void)op; (void)type; (void)in; (void)out; (void)out_off; (void)n; (void)opts;
    return tally_set_error(ctx, TALLY_ERR_UNSUPPORTED, "%s: not yet", fn);
}
