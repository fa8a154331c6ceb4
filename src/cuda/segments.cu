/* The CUDA backend's batched reduce (core/backend.h's reduce_segments: tally_reduce_segments
 * and tally_reduce_rows). The core has checked the arguments (offsets nondecreasing, data
 * valid for the span); here:
 *  - data may be device, managed or host memory (host memory is staged into device memory,
 *    the span from the first segment's start to the last one's end); offsets are always host
 *    memory (the core reads them to check them) and are copied to the device;
 *  - segments shorter than TCU_SEG_SHORT_MAX run in one launch of the short-segment kernel (a
 *    group of lanes each; no float product asked for: segments_kernel.cuh), the others below
 *    seg_long_min in one launch of the block-per-segment kernel (two launches each with a
 *    variance), each longer one on the device-wide reduce (enqueue_reduce: many blocks, one
 *    launch each), so that one huge segment among small ones is not left to one block;
 *  - every result lands in device scratch, then comes back to the host in one copy.
 * Both paths reduce a segment with the same per-element, merge and result code as
 * tally_reduce, so each segment's results are those of tally_reduce over it alone. */
#include <cstdlib>
#include <cstring>
#include "cuda/host.h"
#include "cuda/segments.h"

namespace tcu_host {

/* The length from which a segment runs on the device-wide reduce: at least TCU_SEG_LONG_MIN,
 * and at least a 2 * SMs'th of all the elements (while the other segments keep every SM busy,
 * one block on a long segment is no slower), and never TCU_SEG_LONG_CAP or more. */
static uint64_t seg_long_min(uint64_t total, int sm_count)
{
    uint64_t share = total / (2 * (uint64_t)(sm_count > 0 ? sm_count : 1));
    uint64_t m = share > TCU_SEG_LONG_MIN ? share : TCU_SEG_LONG_MIN;
    return m < TCU_SEG_LONG_CAP ? m : TCU_SEG_LONG_CAP;
}

/* The short kernel's lanes per segment for segments of mean length mean_len: about 8 elements
 * per lane, at least 4 lanes (segments_short_kernel's superaccumulators are per group of 4),
 * at most a warp. */
static int seg_short_lanes(uint64_t mean_len)
{
    int lanes = 4;
    while (lanes < 32 && (uint64_t)lanes * 8 < mean_len) lanes *= 2;
    return lanes;
}

/* The batch's device scratch, grown (never shrunk) to bytes. */
static tally_status ensure_seg_scratch(tally_context *ctx, State *s, size_t bytes, const char *fn)
{
    if (s->seg_scratch_bytes >= bytes) return TALLY_OK;
    TCU_TRY(ctx, fn, cudaStreamSynchronize(s->stream)); /* earlier work may still use it */
    cudaFree(s->seg_scratch);
    s->seg_scratch = nullptr;
    s->seg_scratch_bytes = 0;
    bytes += bytes / 4; /* grow in steps */
    cudaError_t err = cudaMalloc(&s->seg_scratch, bytes);
    if (err != cudaSuccess) return cuda_fail(ctx, err, fn, "cudaMalloc (scratch for a batch)");
    s->seg_scratch_bytes = bytes;
    return TALLY_OK;
}

tally_status cuda_reduce_segments(tally_context *ctx, void *state, tally_type type,
                                  const void *data, const uint64_t *offsets, uint64_t nseg,
                                  uint64_t row_len, uint64_t row_stride, const tally_op *ops,
                                  size_t nops, const tally_reduce_options *opts,
                                  tally_result *results)
{
    const char *fn = offsets ? "tally_reduce_segments" : "tally_reduce_rows";
    State *s = (State *)state;
    DeviceGuard g(s->device);
    const size_t es = tally_type_size(type);
    auto seg_start = [&](uint64_t k) { return offsets ? offsets[k] : k * row_stride; };
    auto seg_len = [&](uint64_t k) { return offsets ? offsets[k + 1] - offsets[k] : row_len; };

    /* the elements the batch reads: [first, first + span) (the core checked they exist) */
    const uint64_t first = offsets ? offsets[0] : 0;
    const uint64_t span = offsets ? offsets[nseg] - offsets[0]
                                  : (row_len ? (nseg - 1) * row_stride + row_len : 0);
    /* elements summed (rows may overlap): for the long-segment threshold only, saturated */
    uint64_t total = span;
    if (!offsets && __builtin_mul_overflow(nseg, row_len, &total)) total = UINT64_MAX;
    const uint64_t long_min = seg_long_min(total, s->dev.sm_count);

    /* each distinct op once (as cuda_reduce), spread back at the end */
    tally_op uniq[TALLY_OP_COUNT];
    const size_t nu = unique_ops(ops, nops, uniq);
    int has_var;
    const unsigned mask = ops_mask(uniq, nu, &has_var);

    /* The short kernel's segments: below TCU_SEG_SHORT_MAX, unless a float product is asked
     * for (its bits depend on the order of the multiplies: the block kernel keeps tally_reduce's
     * one-block order; segments_kernel.cuh). */
    bool float_prod = false;
    for (size_t i = 0; i < nu; i++) float_prod |= uniq[i] == TALLY_PROD && tally_type_is_float(type);
    uint64_t short_max = float_prod ? 0 : TCU_SEG_SHORT_MAX;
    if (short_max > long_min) short_max = long_min;

    /* scratch: the results (nu per segment), the means (with a variance), the offsets */
    uint64_t nshort = 0, ntiny = 0, tiny_elems = 0; /* below long_min; below short_max */
    for (uint64_t k = 0; k < nseg; k++) {
        const uint64_t len = seg_len(k);
        nshort += len < long_min;
        if (len < short_max) {
            ntiny++;
            tiny_elems += len;
        }
    }
    const bool need_offsets = offsets && nshort > 0;
    size_t res_bytes, aux_bytes = 0, off_bytes = 0, bytes;
    if (__builtin_mul_overflow((size_t)nseg, nu * sizeof(tally_result), &res_bytes) ||
        (has_var && __builtin_mul_overflow((size_t)nseg, sizeof(tcu_aux), &aux_bytes)) ||
        (need_offsets && __builtin_mul_overflow((size_t)nseg + 1, sizeof(uint64_t), &off_bytes)) ||
        __builtin_add_overflow(res_bytes, aux_bytes, &bytes) ||
        __builtin_add_overflow(bytes, off_bytes, &bytes))
        return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY,
                               "%s: %llu segments need more device scratch than memory can hold",
                               fn, (unsigned long long)nseg);
    tally_status st = ensure_seg_scratch(ctx, s, bytes, fn);
    if (st != TALLY_OK) return st;
    tally_result *d_res = (tally_result *)s->seg_scratch;
    tcu_aux *d_aux = has_var ? (tcu_aux *)((char *)s->seg_scratch + res_bytes) : nullptr;
    uint64_t *d_off = need_offsets ? (uint64_t *)((char *)s->seg_scratch + res_bytes + aux_bytes)
                                   : nullptr;

    /* the data where the kernels read it: in place, or staged */
    const char *h_first = (const char *)data + (size_t)first * es;
    const void *d = h_first;
    const size_t span_bytes = (size_t)span * es;
    if (span > 0 && !read_in_place(h_first, span_bytes, &d)) {
        st = ensure_staging(ctx, s, span_bytes, fn);
        if (st == TALLY_OK) st = stage_h2d(ctx, s, s->staging, h_first, span_bytes, fn);
        if (st != TALLY_OK) return st;
        d = s->staging;
    }
    if (span > 0 && (uintptr_t)d % es)
        return tally_set_error(ctx, TALLY_ERR_INVALID_ARGUMENT,
                               "%s: data = %p is not aligned to its %zu-byte elements (the CUDA "
                               "backend needs element-aligned pointers)", fn, data, es);
    if (need_offsets) {
        st = stage_h2d(ctx, s, d_off, offsets, off_bytes, fn);
        if (st != TALLY_OK) return st;
    }

    if (nshort > 0) {
        tcu_seg_params p;
        memset(&p, 0, sizeof p);
        p.r.data = d;
        p.r.out = d_res;
        p.r.aux = d_aux;
        p.r.nops = (int)nu;
        p.r.omit_nan = opts && opts->omit_nan ? 1 : 0;
        p.r.ddof = opts ? opts->ddof : 0;
        for (size_t i = 0; i < nu; i++) p.r.ops[i] = (uint8_t)uniq[i];
        p.offsets = d_off;
        p.first = first;
        p.nseg = nseg;
        p.row_len = row_len;
        p.row_stride = row_stride;
        p.long_min = long_min;
        p.short_max = short_max;
        /* the short kernel, then the block kernel, each only when it has segments */
        const int lanes = ntiny ? seg_short_lanes(tiny_elems / ntiny) : 0;
        for (int pass = 0; pass <= has_var; pass++) {
            p.r.pass2 = pass;
            const unsigned m = pass ? TCU_MASK_SQDEV : mask;
            for (int kernel = 0; kernel < 2; kernel++) {
                if (kernel == 0 ? ntiny == 0 : ntiny == nshort) continue;
                p.lanes = kernel == 0 ? lanes : 0;
                cudaError_t err = tcu_launch_segments(type, m, p.r.omit_nan, &p, &s->dev, s->stream);
                if (err != cudaSuccess)
                    return cuda_fail(ctx, err, fn, pass ? "the segmented variance kernel launch"
                                                        : "the segmented reduce kernel launch");
            }
        }
    }
    /* the long segments, one device-wide reduce each, after the kernels above on the stream */
    for (uint64_t k = 0; k < nseg && nshort < nseg; k++) {
        const uint64_t len = seg_len(k);
        if (len < long_min) continue;
        const char *x = (const char *)d + (size_t)(seg_start(k) - first) * es;
        st = enqueue_reduce(ctx, s, fn, type, x, len, uniq, nu, opts, d_res + k * nu);
        if (st != TALLY_OK) return st;
    }

    /* the results back, straight into results when every op is distinct */
    tally_result *host_res = results;
    if (nu != nops) {
        host_res = (tally_result *)malloc(res_bytes);
        if (!host_res) return tally_set_error(ctx, TALLY_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    st = stage_d2h(ctx, s, host_res, d_res, res_bytes, fn);
    if (st == TALLY_OK && nu != nops) {
        for (uint64_t k = 0; k < nseg; k++)
            for (size_t i = 0; i < nops; i++) {
                size_t j = 0;
                while (uniq[j] != ops[i]) j++;
                results[k * nops + i] = host_res[k * nu + j];
            }
    }
    if (host_res != results) free(host_res);
    return st;
}

} // namespace tcu_host
