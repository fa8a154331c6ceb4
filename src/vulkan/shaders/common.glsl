/* Shared by tally's compute shaders: the element type (from the build's -D flags, generated from
 * src/core/types.h's TALLY_TYPES list), loads of elements from 16-byte vectors, order keys, and
 * the exact-sum layout of src/core/exact_sum.h.
 *
 * Build flags: TSIZE (1, 2, 4, 8 bytes), TSIGNED (0/1), TFLOAT (0/1).
 * No float arithmetic is used here: the exact sums and the keys are integer code, so a device
 * that flushes subnormals or contracts multiply-adds cannot change them. */
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require

#ifndef TSIZE
#error "TSIZE (element bytes) must be defined by the build"
#endif

#define VPE (16 / TSIZE) /* elements per 16-byte vector */

/* exact_sum.h: value = sum chunk[i] * 2^(32 i - BIAS) */
#define X_CHUNKS 68
#define X_BIAS 1088
#define XF_NAN 1u
#define XF_PINF 2u
#define XF_NINF 4u
#define XF_ANY 8u
#define XF_NONNEGZERO 16u
/* not an exact_sum.h flag: some element needs the host's fallback (see the variance pass) */
#define XF_EDGE 0x80000000u

/* Element k (0 .. VPE-1) of a 16-byte vector, zero-extended to 64 bits. */
uint64_t elem_bits(uvec4 v, uint k)
{
#if TSIZE == 1
    return uint64_t((v[k >> 2] >> ((k & 3u) * 8u)) & 0xffu);
#elif TSIZE == 2
    return uint64_t((v[k >> 1] >> ((k & 1u) * 16u)) & 0xffffu);
#elif TSIZE == 4
    return uint64_t(v[k]);
#else
    return pack64(uvec2(v[2u * k], v[2u * k + 1u]));
#endif
}

/* The element's bits sign-extended (signed integers) to 64. */
int64_t elem_signed(uint64_t b)
{
#if TSIZE == 8
    return int64_t(b);
#else
    return (int64_t(b) << (64 - 8 * TSIZE)) >> (64 - 8 * TSIZE);
#endif
}

/* Order keys: unsigned numbers ordered like the values (src/core/partial.h). For f32 the key is
 * the 32-bit one (same order as the widened value's 64-bit key; the host converts). */
uint64_t elem_key(uint64_t b)
{
#if TFLOAT
#if TSIZE == 4
    uint u = uint(b);
    return uint64_t((u >> 31) != 0u ? ~u : (u | 0x80000000u));
#else
    return (b >> 63) != 0ul ? ~b : (b | 0x8000000000000000ul);
#endif
#elif TSIGNED
    return uint64_t(elem_signed(b)) ^ 0x8000000000000000ul;
#else
    return b;
#endif
}

bool elem_isnan(uint64_t b)
{
#if TFLOAT && TSIZE == 4
    return (uint(b) & 0x7fffffffu) > 0x7f800000u;
#elif TFLOAT
    return (b & 0x7ffffffffffffffful) > 0x7ff0000000000000ul;
#else
    return false;
#endif
}

/* f32 bits widened exactly to f64 bits, by integer code (no dependence on the device's handling
 * of subnormal floats). */
uint64_t f32_to_f64_bits(uint u)
{
    uint64_t s = uint64_t(u >> 31) << 63;
    uint e = (u >> 23) & 0xffu, m = u & 0x7fffffu;
    if (e == 0xffu) return s | 0x7ff0000000000000ul | (uint64_t(m) << 29);
    if (e == 0u) {
        if (m == 0u) return s;
        int msb = findMSB(m); /* value m * 2^-149, msb in 0..22 */
        uint64_t mm = (uint64_t(m) << (52 - msb)) & 0x000ffffffffffffful;
        return s | (uint64_t(msb - 149 + 1023) << 52) | mm;
    }
    return s | (uint64_t(e - 127u + 1023u) << 52) | (uint64_t(m) << 29);
}

/* The element as an f64 bit pattern: floats widened exactly, integers converted (rounded to
 * nearest, as C's (double) cast does). */
uint64_t elem_f64_bits(uint64_t b)
{
#if TFLOAT && TSIZE == 4
    return f32_to_f64_bits(uint(b));
#elif TFLOAT
    return b;
#elif TSIGNED
    return doubleBitsToUint64(double(elem_signed(b)));
#else
    return doubleBitsToUint64(double(b));
#endif
}
