/* A byte encoding of tally_partial (core/partial.h) for sending partial states between processes
 * (libtally_mpi) or storing them. It is versioned and independent of the host's byte order,
 * word size and struct layout: every field is written little-endian at a fixed width, in the
 * order below, and the decoder checks every field it reads.
 *
 * Version 1 (all integers little-endian; "u64" = 8 bytes, "i128" = 16 bytes two's complement):
 *
 *   offset  size  field
 *        0     4  magic "TLYP"
 *        4     1  version (1)
 *        5     1  element type (tally_type: 0 i8 .. 9 f64)
 *        6     1  omit_nan (0 or 1)
 *        7     1  0
 *        8     4  what the state tracks (TALLY_CODEC_T_* bits below; no others)
 *       12     4  0
 *       16     8  n: elements seen
 *       24     8  nans: NaN elements seen (<= n)
 *       32        the sections, in this order, each present when the bits say so:
 *     SUM, integer types (16)   the exact sum as i128 (signed types) or u128 (unsigned)
 *     SUM, float types (8-280)  the exact sum (superaccumulator, core/exact_sum.h) in sign and
 *                               magnitude: u32 flags (TALLY_EXACT_F_*), u8 sign (1: negative),
 *                               u8 lo, u8 count, u8 0, then count u32 digits: the magnitude's
 *                               base-2^32 digits lo .. lo+count-1 (the others are zero; lo +
 *                               count <= 68, count = 0 for zero); value = (-1)^sign * sum
 *                               digit[i] * 2^(32 i - 1088)
 *     SQ (8-280)                the exact sum of squares, as the float SUM section (any type)
 *     PROD, integer types (20)  i128 product (signed types; |p| <= 2^63) or u128 (unsigned;
 *                               p < 2^64), then u32 flags: bit 0 a zero was seen, bit 1 the
 *                               product overflowed (the value is then meaningless)
 *     PROD, float types (76)    f64 bits of the closed blocks' product, 8 f64 lanes of the open
 *                               block, u32 elements in the open block (< TALLY_PROD_BLOCK)
 *     MIN (16, MIN or ARGMIN)   u64 order key of the least non-NaN value, u64 index of its first
 *                               occurrence (relative to the first element the state covers)
 *                               with ARGMIN, else 2^64-1
 *     MAX (16, MAX or ARGMAX)   the same for the greatest
 *     FIRSTNAN (8)              u64 index of the first NaN, or 2^64-1
 *     BITS (24)                 u64 and, or, xor of the elements' 64-bit words (partial.h)
 *
 * Order keys (partial.h): integers as signed or unsigned 64-bit numbers mapped to an unsigned
 * order; floats as f64 bits mapped so that -inf < ... < -0 < +0 < ... < +inf. A state with no
 * non-NaN value has its MIN/MAX sections but their contents carry no meaning.
 * The float product of several states cannot be merged (partial.h): a decoded state keeps its
 * own block structure. */
#ifndef TALLY_CORE_PARTIAL_CODEC_H
#define TALLY_CORE_PARTIAL_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include "core/partial.h"

#define TALLY_CODEC_VERSION 1

/* What a state tracks (the format's own numbering of partial.h's TALLY_NEED_* bits). */
enum {
    TALLY_CODEC_T_SUM = 1u << 0,
    TALLY_CODEC_T_SQ = 1u << 1,
    TALLY_CODEC_T_PROD = 1u << 2,
    TALLY_CODEC_T_MIN = 1u << 3,
    TALLY_CODEC_T_MAX = 1u << 4,
    TALLY_CODEC_T_FIRSTNAN = 1u << 5,
    TALLY_CODEC_T_BITS = 1u << 6,
    TALLY_CODEC_T_ARGMIN = 1u << 7,  /* no section of its own: the MIN section's index */
    TALLY_CODEC_T_ARGMAX = 1u << 8,  /* likewise with MAX */
    TALLY_CODEC_T_NANS = 1u << 9     /* no section: NaNs are counted (the header's nans) */
};

/* The largest encoding of any state (a float state with every section). */
#define TALLY_CODEC_MAX_BYTES (32 + 280 + 280 + 76 + 16 + 16 + 8 + 24)
/* A state's encoding has a variable length (its exact sums' digits); this bounds it. */

/* Bytes tally_partial_encode writes for p (at most TALLY_CODEC_MAX_BYTES). */
TALLY_API size_t tally_partial_encoded_size(const tally_partial *p);
/* Writes p into buf[0..cap); returns the bytes written, or 0 when cap is too small. p is not
 * changed (its exact sums are normalised on a copy). */
TALLY_API size_t tally_partial_encode(const tally_partial *p, uint8_t *buf, size_t cap);
/* Reads an encoding from buf[0..len) into *p. Returns TALLY_OK, or TALLY_ERR_INVALID_ARGUMENT
 * with a sentence in err (when errlen > 0) for a wrong magic, version or size, an unknown
 * section, or a field out of its range. *used (may be NULL) gets the bytes read. */
TALLY_API tally_status tally_partial_decode(const uint8_t *buf, size_t len, tally_partial *p,
                                            size_t *used, char *err, size_t errlen);

/* out := the encoding of a's state followed by b's (b covers the elements right after a's), made
 * from the two encodings without decoding them: the bytes are those of encoding
 * tally_internal_partial_append of their decodings (the float product keeps a's, as there), at
 * a cost proportional to the encodings' lengths rather than to a tally_partial's size. Returns
 * the bytes written, or 0 when a or b is not an encoding that tally_partial_decode accepts, when
 * they differ in version, type, omit_nan or what they track, when cap is too small, or when the
 * merged state does not fit its fields (more than 2^64-1 elements, an integer sum beyond 128
 * bits, an exact sum of 2^1088 or more: no data reach these). out must not overlap a or b. */
TALLY_API size_t tally_partial_merge_encoded(const uint8_t *a, size_t alen, const uint8_t *b,
                                             size_t blen, uint8_t *out, size_t cap);

#endif
