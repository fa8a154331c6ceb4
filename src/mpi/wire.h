/* libtally_mpi's messages between ranks: a record is a small header (the agreed status, who
 * failed, a fingerprint of the call's arguments) followed by an encoded partial state
 * (core/partial_codec.h). Records have one fixed size whatever the arguments, so that ranks
 * whose arguments disagree still exchange matching messages and learn of the disagreement
 * instead of hanging or truncating.
 *
 * Record layout (little-endian, like the partial encoding):
 *   0  u32 status (tally_status; 0 = OK)
 *   4  u32 the rank whose status it is (the lowest failing rank), or WIRE_NO_RANK
 *   8  u32 the first rank the record covers (records merge in rank order)
 *  12  u32 flags: WIRE_F_MISMATCH (the failing rank's arguments differ from a lower rank's)
 *  16  u64 fingerprint of the arguments every rank must agree on
 *  24  u32 bytes of the partial encoding that follows (0 after a failure)
 *  28  u32 0
 *  32  the partial encoding, then zeros up to WIRE_BYTES */
#ifndef TALLY_MPI_WIRE_H
#define TALLY_MPI_WIRE_H

#include <stdint.h>
#include "core/internal.h"

#define WIRE_HEADER 32
#define WIRE_BYTES (WIRE_HEADER + TALLY_CODEC_MAX_BYTES)
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

/* Fills rec (WIRE_BYTES) for this rank: status (OK: p is encoded; else p may be NULL). */
void wire_make(uint8_t *rec, tally_status status, uint32_t rank, uint64_t fingerprint,
               const tally_partial *p);

/* A record read into memory: the head, and the state when the status is OK. */
typedef struct wire_node {
    wire_head h;
    tally_partial p;
} wire_node;

/* Reads a record (a state that does not decode becomes a BACKEND_FAILURE of its first rank). */
void wire_node_read(const uint8_t *rec, wire_node *n);
/* Writes a record; returns the bytes used (the rest of WIRE_BYTES is zeros). */
size_t wire_node_write(const wire_node *n, uint8_t *rec);
/* a := a followed by b (a covers the ranks just before b's). */
void wire_node_merge(wire_node *a, const wire_node *b);

/* out := a followed by b, on records. out may be a or b. */
void wire_merge(const uint8_t *a, const uint8_t *b, uint8_t *out);

/* Decodes the state of an OK record. */
tally_status wire_state(const uint8_t *rec, tally_partial *p);

/* FNV-1a over bytes, continued from h (start with WIRE_FNV_START). */
#define WIRE_FNV_START 0xcbf29ce484222325ull
uint64_t wire_fnv(uint64_t h, const void *data, size_t len);

#endif
