/* Records between ranks (wire.h): make, merge in rank order, read. */
#include <string.h>
#include "mpi/wire.h"

void wire_put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i));
}
void wire_put64(uint8_t *b, uint64_t v)
{
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
}
uint32_t wire_get32(const uint8_t *b)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)b[i] << (8 * i);
    return v;
}
uint64_t wire_get64(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
    return v;
}

void wire_read_head(const uint8_t *rec, wire_head *h)
{
    h->status = wire_get32(rec);
    h->fail_rank = wire_get32(rec + 4);
    h->first_rank = wire_get32(rec + 8);
    h->flags = wire_get32(rec + 12);
    h->fingerprint = wire_get64(rec + 16);
    h->len = wire_get32(rec + 24);
}

void wire_write_head(uint8_t *rec, const wire_head *h)
{
    wire_put32(rec, h->status);
    wire_put32(rec + 4, h->fail_rank);
    wire_put32(rec + 8, h->first_rank);
    wire_put32(rec + 12, h->flags);
    wire_put64(rec + 16, h->fingerprint);
    wire_put32(rec + 24, h->len);
    wire_put32(rec + 28, 0);
}

void wire_make(uint8_t *rec, tally_status status, uint32_t rank, uint64_t fingerprint,
               const tally_partial *p)
{
    wire_head h = {(uint32_t)status, status ? rank : WIRE_NO_RANK, rank, 0, fingerprint, 0};
    memset(rec + WIRE_HEADER, 0, WIRE_BYTES - WIRE_HEADER);
    if (status == TALLY_OK) h.len = (uint32_t)tally_partial_encode(p, rec + WIRE_HEADER,
                                                                   WIRE_BYTES - WIRE_HEADER);
    wire_write_head(rec, &h);
}

tally_status wire_state(const uint8_t *rec, tally_partial *p)
{
    return tally_partial_decode(rec + WIRE_HEADER, wire_get32(rec + 24), p, NULL, NULL, 0);
}

void wire_node_read(const uint8_t *rec, wire_node *n)
{
    wire_read_head(rec, &n->h);
    if (n->h.status == TALLY_OK && wire_state(rec, &n->p) != TALLY_OK) {
        /* cannot happen between ranks of one build; reported rather than trusted */
        n->h.status = TALLY_ERR_BACKEND_FAILURE;
        n->h.fail_rank = n->h.first_rank;
        n->h.flags = 0;
    }
}

size_t wire_node_write(const wire_node *n, uint8_t *rec)
{
    wire_head h = n->h;
    h.len = 0;
    if (h.status == TALLY_OK)
        h.len = (uint32_t)tally_partial_encode(&n->p, rec + WIRE_HEADER, WIRE_BYTES - WIRE_HEADER);
    wire_write_head(rec, &h);
    memset(rec + WIRE_HEADER + h.len, 0, WIRE_BYTES - WIRE_HEADER - h.len);
    return WIRE_HEADER + h.len;
}

void wire_node_merge(wire_node *a, const wire_node *b)
{
    if (a->h.status) return; /* the lower failure stands */
    if (b->h.status) {
        uint32_t first = a->h.first_rank;
        a->h = b->h;
        a->h.first_rank = first;
    } else if (a->h.fingerprint != b->h.fingerprint) {
        a->h.status = TALLY_ERR_INVALID_ARGUMENT;
        a->h.fail_rank = b->h.first_rank;
        a->h.flags = WIRE_F_MISMATCH;
    } else {
        tally_internal_partial_append(&a->p, &b->p);
    }
}

void wire_merge(const uint8_t *a, const uint8_t *b, uint8_t *out)
{
    wire_node na, nb;
    wire_node_read(a, &na);
    wire_node_read(b, &nb);
    wire_node_merge(&na, &nb);
    wire_node_write(&na, out);
}

uint64_t wire_fnv(uint64_t h, const void *data, size_t len)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
