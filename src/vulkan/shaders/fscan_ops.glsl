/* Shared by the float sum/product scans in the CPU's block order (fscan.comp: three passes;
 * fscan1.comp: one pass with an ordered look-back): the element type FT, the one float operation
 * op2 (with the edge flag of a device without IEEE subnormals), a group's log-step prefix, and
 * the group loads and stores. The including shader declares OP, the push constants pc (n,
 * in_head, out_head, flags) and the bindings inw/inv (input) and outw/outv (output) first. */
/* (the edge checks on the element's own width: 32-bit words for f32) */
#if TSIZE == 4
#define FT float
#define TO_BITS(x) uint64_t(floatBitsToUint(x))
#define FROM_BITS(b) uintBitsToFloat(uint(b))
#define EB uint
#define E_BITS(x) floatBitsToUint(x)
#define E_FROM(b) uintBitsToFloat(b)
#define EXP_MASK 0x7f800000u
#define SIGN_BIT 0x80000000u
#else
#define FT double
#define TO_BITS(x) doubleBitsToUint64(x)
#define FROM_BITS(b) uint64BitsToDouble(b)
#define EB uint64_t
#define E_BITS(x) doubleBitsToUint64(x)
#define E_FROM(b) uint64BitsToDouble(b)
#define EXP_MASK 0x7ff0000000000000ul
#define SIGN_BIT 0x8000000000000000ul
#endif

/* The edge flag of a call (without TVK_DENORM_PRESERVE; vk_scan.c, fscan_on_device): set
 * whenever a flushing device could give other bits than IEEE's. Kept cheap, as every element
 * meets ~5 operations: sub_min, the least (bits << 1) - 1 over every value noted (unsigned: a
 * zero wraps to the top, so zeros never count), flags the call when some noted value is
 * nonzero and below LIMIT in magnitude. Every value that enters is noted (edge_note: each
 * element loaded, the start value); products also note each result (op_check).
 * (edge_note on the elements: group_prefix or quad_prefix, checked, right after their load.)
 *   - Sums: LIMIT = 2^(emin + p) = 2^-102 (f32) or 2^-969 (f64), p the precision (24, 53),
 *     2^emin the smallest normal. The entering values alone decide: when each is zero or at
 *     least LIMIT in magnitude, it is a multiple of q = 2^(emin + 1) (its ulp is at least q),
 *     and so is every sum the scan computes, in any order: an exact sum of multiples of q is
 *     one; rounded where its magnitude is at least 2^(emin + p), it lands on a multiple of its
 *     ulp, itself a multiple of q; below that it is k q with |k| < 2^(p - 1), a normal float
 *     already (|k q| >= q > 2^emin), not rounded at all. So no operand or result is ever
 *     subnormal, a device that flushes (before or after rounding) never acts, and every sum is
 *     IEEE's. (The results need no note: the sums' op_check is empty. Before the thirteenth
 *     session it noted each one, two integer instructions per operation for nothing.) Data
 *     with values this small runs on the CPU backend: rare.
 *   - Products: LIMIT = the smallest normal (the subnormals); each result is noted, and a zero
 *     product of nonzero operands sets `bad` (a product underflows from operands of any
 *     size), so every operand of every product is noted, as an element, the start or an
 *     earlier result. */
bool bad = false;
#if TSIZE == 4
uint sub_min = 0xffffffffu;
#define SUB_LIMIT 0x00ffffffu /* (smallest normal's bits << 1) - 1 */
#define SUM_LIMIT 0x18ffffffu /* (2^-102's bits << 1) - 1 */
#else
uint64_t sub_min = 0xfffffffffffffffful;
#define SUB_LIMIT 0x001ffffffffffffful
#define SUM_LIMIT 0x06bffffffffffffful /* (2^-969's bits << 1) - 1 */
#endif

void edge_note(FT x) { sub_min = min(sub_min, (E_BITS(x) << 1) - EB(1)); }
bool edge_seen() { return bad || sub_min < (OP == 0u ? EB(SUM_LIMIT) : EB(SUB_LIMIT)); }

bool subnormal(EB b) { return (b & EXP_MASK) == EB(0) && (b << 1) != EB(0); }

/* Tests (TALLY_VULKAN_EMULATE_FTZ=1, without TVK_DENORM_PRESERVE; FTZ_EMU, which the shader
 * defines): the arithmetic reads subnormal operands as zero and flushes subnormal results to
 * zero (sign kept), as a device without subnormals may do, while the edge checks stay the ones
 * every device runs, so that lavapipe (which keeps subnormals though it does not promise to)
 * shows whether those checks flag every operation a flush changes: a flagged call is redone on
 * the CPU, so the results must stay the CPU's bits. */
FT flushed(FT x)
{
    EB b = E_BITS(x);
    return subnormal(b) ? E_FROM(b & SIGN_BIT) : x;
}

/* One operation without its edge check (a chain that one invocation runs checks its steps
 * afterwards, all invocations at once: op_check), and with it (op2). */
FT op_raw(FT a, FT b)
{
#if !TVK_DENORM_PRESERVE
    precise FT r;
    if (FTZ_EMU) r = flushed(OP == 0u ? flushed(a) + flushed(b) : flushed(a) * flushed(b));
    else r = OP == 0u ? a + b : a * b;
#else
    precise FT r = OP == 0u ? a + b : a * b;
#endif
    return r;
}

void op_check(FT a, FT b, FT r)
{
#if !TVK_DENORM_PRESERVE
    if (OP != 0u) { /* (sums: nothing to check, above) */
        edge_note(r);
        /* a product flushed to zero (the operands are normal or zero here, or noted already) */
        if (r == FT(0) && a != FT(0) && b != FT(0)) bad = true;
    }
#endif
}

FT op2(FT a, FT b)
{
    FT r = op_raw(a, b);
    op_check(a, b, r);
    return r;
}

/* The group's prefix (m elements, m <= 16; checked: the elements' and the operations' edge
 * checks, which a prefix computed again from the same elements can skip): p[k] = p[k-s] op p[k] for s = 1, 2, 4 where
 * k mod 8 >= s (each half of 8 on its own; k descending, so p[k-s] is the step's input), then
 * p[k] = p[7] op p[k] for k >= 8. */
void group_prefix(inout FT p[16], uint m, bool checked)
{
#if !TVK_DENORM_PRESERVE
    if (checked) [[unroll]] for (uint k = 0u; k < 16u; k++) edge_note(p[k]); /* the elements */
#endif
    [[unroll]] for (uint s = 1u; s < 8u; s *= 2u)
        [[unroll]] for (int k = 15; k >= 0; k--)
            if (uint(k) < m && (uint(k) & 7u) >= s)
                p[k] = checked ? op2(p[uint(k) - s], p[k]) : op_raw(p[uint(k) - s], p[k]);
    [[unroll]] for (uint k = 8u; k < 16u; k++)
        if (k < m) p[k] = checked ? op2(p[7], p[k]) : op_raw(p[7], p[k]);
}

FT load(uint64_t i);
void store(uint64_t i, FT v);

/* Group (of 16) gi of the segment, m of its elements, into p; vector loads where the group is
 * whole and the input 16-byte aligned. */
void load_group(uint64_t gi, uint m, out FT p[16])
{
    uint64_t e = gi * 16ul;
    if (m == 16u && (pc.in_head & 15u) == 0u) {
        uint64_t v0 = (uint64_t(pc.in_head) + e * uint64_t(TSIZE)) >> 4;
#if TSIZE == 4
        [[unroll]] for (uint q = 0u; q < 4u; q++) {
            uvec4 v = inv[uint(v0) + q];
            [[unroll]] for (uint c = 0u; c < 4u; c++) p[4u * q + c] = uintBitsToFloat(v[c]);
        }
#else
        [[unroll]] for (uint q = 0u; q < 8u; q++) {
            uvec4 v = inv[uint(v0) + q];
            p[2u * q] = uint64BitsToDouble(pack64(v.xy));
            p[2u * q + 1u] = uint64BitsToDouble(pack64(v.zw));
        }
#endif
    } else {
        [[unroll]] for (uint k = 0u; k < 16u; k++) p[k] = k < m ? load(e + uint64_t(k)) : FT(0);
    }
}

void store_group(uint64_t gi, uint m, FT o[16])
{
    uint64_t e = gi * 16ul;
    if (m == 16u && (pc.out_head & 15u) == 0u) {
        uint64_t v0 = (uint64_t(pc.out_head) + e * uint64_t(TSIZE)) >> 4;
#if TSIZE == 4
        [[unroll]] for (uint q = 0u; q < 4u; q++)
            outv[uint(v0) + q] = uvec4(floatBitsToUint(o[4u * q]), floatBitsToUint(o[4u * q + 1u]),
                                       floatBitsToUint(o[4u * q + 2u]), floatBitsToUint(o[4u * q + 3u]));
#else
        [[unroll]] for (uint q = 0u; q < 8u; q++)
            outv[uint(v0) + q] = uvec4(unpack32(doubleBitsToUint64(o[2u * q])),
                                       unpack32(doubleBitsToUint64(o[2u * q + 1u])));
#endif
    } else {
        [[unroll]] for (uint k = 0u; k < 16u; k++)
            if (k < m) store(e + uint64_t(k), o[k]);
    }
}

FT load(uint64_t i)
{
    uint w = uint((uint64_t(pc.in_head) + i * uint64_t(TSIZE)) >> 2);
#if TSIZE == 4
    return uintBitsToFloat(inw[w]);
#else
    return uint64BitsToDouble(pack64(uvec2(inw[w], inw[w + 1u])));
#endif
}

void store(uint64_t i, FT v)
{
    uint w = uint((uint64_t(pc.out_head) + i * uint64_t(TSIZE)) >> 2);
#if TSIZE == 4
    outw[w] = floatBitsToUint(v);
#else
    uvec2 u = unpack32(doubleBitsToUint64(v));
    outw[w] = u.x;
    outw[w + 1u] = u.y;
#endif
}

