/* Shared by the scans of the associative ops (scan.comp: reduce-then-scan; scan1.comp: one pass
 * with decoupled look-back): the op's identity, order keys and combine, and the workgroup's
 * inclusive scan (left out where SCAN_OPS_NO_WG_SCAN is defined: scan1.comp has its own). The
 * including shader declares OP (tally_op, 0 sum .. 6 xor) and WG first.
 * Integer sums and products wrap modulo 2^bits (C's and CUB's rule) and every op here is
 * associative, so the tiles' grouping cannot change a bit. Float min/max follow tally.h: NaN
 * propagates (the first one), -0 < +0. */
const uint64_t ONES = TSIZE == 8 ? ~0ul : ((1ul << (8 * TSIZE)) - 1ul);

uint64_t identity()
{
    if (OP == 1u) return 1ul;
    if (OP == 4u) return ~0ul;
#if TFLOAT
    if (OP == 2u) return TSIZE == 4 ? 0x7f800000ul : 0x7ff0000000000000ul;  /* +inf */
    if (OP == 3u) return TSIZE == 4 ? 0xff800000ul : 0xfff0000000000000ul;  /* -inf */
#else
    if (OP == 2u) return TSIGNED != 0 ? ONES >> 1 : ONES;
    if (OP == 3u) return TSIGNED != 0 ? (ONES >> 1) + 1ul : 0ul;
#endif
    return 0ul;
}

/* Min/max order: NaN is the extreme (it propagates); ties keep the left operand. */
uint64_t okey(uint64_t x)
{
    if (TFLOAT != 0 && elem_isnan(x)) return OP == 2u ? 0ul : ~0ul;
    return elem_key(x);
}

uint64_t combine(uint64_t a, uint64_t b) /* a op b, a earlier */
{
    if (OP == 0u) return a + b;
    if (OP == 1u) return a * b;
    if (OP == 2u) return okey(b) < okey(a) ? b : a;
    if (OP == 3u) return okey(b) > okey(a) ? b : a;
    if (OP == 4u) return a & b;
    if (OP == 5u) return a | b;
    return a ^ b;
}

uint tid;

#ifndef SCAN_OPS_NO_WG_SCAN
shared uint64_t ss[WG], ss_alt[WG];

/* Inclusive scan of v over the workgroup (Hillis-Steele; left operands earlier); the result is
 * in ss[] afterwards (WG a power of 4: an even number of steps). The steps alternate between ss
 * and ss_alt, so that every value read from shared memory is used, and written back, before
 * the barrier that ends its step: no invocation ever overwrites what another read before a
 * barrier but used after it. (lavapipe, which runs a workgroup as coroutines switched at
 * barriers, gave such a read the value written after the barrier.) */
uint64_t wg_inclusive(uint64_t v)
{
    ss[tid] = v;
    barrier();
    uint step = 0u;
    for (uint d = 1u; d < WG; d <<= 1) {
        if ((step & 1u) == 0u) {
            if (tid >= d) v = combine(ss[tid - d], v);
            ss_alt[tid] = v;
        } else {
            if (tid >= d) v = combine(ss_alt[tid - d], v);
            ss[tid] = v;
        }
        barrier();
        step++;
    }
    return v;
}
#endif
