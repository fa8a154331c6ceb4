/* libtally_mpi's messages between ranks: a record is a small header (the agreed status, who
 * failed, a fingerprint of the call's arguments) followed by an encoded partial state
 * (core/partial_codec.h). Records have one fixed size whatever the arguments, so that ranks
 * whose arguments disagree still exchange matching messages and learn of the disagreement
 * instead of hanging or truncating.
 *
 * Record layout (little-endian, like the partial encoding; small, since the tree's steps are
 * latency-bound and a message's latency grows with its cache lines):
 *   0  u8  status (tally_status; 0 = OK)
 *   1  u8  flags: WIRE_F_MISMATCH (the failing rank's arguments differ from a lower rank's)
 *   2  u16 bytes of the partial encoding that follows (0 after a failure)
 *   4  u32 the rank whose status it is (the lowest failing rank), or WIRE_NO_RANK
 *   8  u32 the first rank the record covers (records merge in rank order)
 *  12  u64 fingerprint of the arguments every rank must agree on
 *  20  the partial encoding; a record sent through MPI's op is padded with zeros to WIRE_BYTES */
#ifndef TALLY_MPI_WIRE_H
#define TALLY_MPI_WIRE_H

#include <stdint.h>
#include "core/internal.h"

#define WIRE_HEADER 20
#define WIRE_BYTES (WIRE_HEADER + TALLY_CODEC_MAX_BYTES)
_Static_assert(TALLY_CODEC_MAX_BYTES < 65536 && TALLY_ERR_DOMAIN < 256, "a record header field is too narrow");
#define WIRE_NO_RANK 0xffffffffu
#define WIRE_F_MISMATCH 1u

typedef struct wire_head {
    uint32_t status, fail_rank, first_rank, flags;
    uint64_t fingerprint;
    uint32_t len;
} wire_head;

void wire_put32(uint8_t *b, uint32_t v);
void wire_put64(uint8_t *b, uint64_t v);
uint32_t wire_get32(const uint8_t *b);
uint64_t wire_get64(const uint8_t *b);

void wire_read_head(const uint8_t *rec, wire_head *h);
void wire_write_head(uint8_t *rec, const wire_head *h);

/* Writes this rank's record into rec (WIRE_BYTES): status (OK: p is encoded; else p may be
 * NULL). Returns the bytes used; the rest of rec is left as it was. */
size_t wire_make(uint8_t *rec, tally_status status, uint32_t rank, uint64_t fingerprint,
                 const tally_partial *p);

/* The bytes a record uses (its header's length field, bounded by WIRE_BYTES). */
size_t wire_used(const uint8_t *rec);

/* out := a followed by b (a covers the ranks just before b's), on records, without decoding
 * their states (tally_partial_merge_encoded): the lower failure stands; a fingerprint that
 * differs from a's makes b's first rank fail with WIRE_F_MISMATCH; states that do not merge
 * (cannot happen between ranks of one build) become a BACKEND_FAILURE of the first rank whose
 * state is malformed, else of b's first rank. out must not overlap a or b. Returns the bytes
 * used in out. */
size_t wire_merge(const uint8_t *a, const uint8_t *b, uint8_t *out);

/* Decodes the state of an OK record. */
tally_status wire_state(const uint8_t *rec, tally_partial *p);

/* FNV-1a over bytes, continued from h (start with WIRE_FNV_START). */
#define WIRE_FNV_START 0xcbf29ce484222325ull
uint64_t wire_fnv(uint64_t h, const void *data, size_t len);
/* One FNV-1a step over a 32-bit word. */
static inline uint64_t wire_fnv_word(uint64_t h, uint32_t w)
{
    return (h ^ w) * 0x100000001b3ull;
}

#endif
