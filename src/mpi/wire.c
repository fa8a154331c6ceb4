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
    h->status = rec[0];
    h->flags = rec[1];
    h->len = (uint32_t)rec[2] | (uint32_t)rec[3] << 8;
    h->fail_rank = wire_get32(rec + 4);
    h->first_rank = wire_get32(rec + 8);
    h->fingerprint = wire_get64(rec + 12);
}

void wire_write_head(uint8_t *rec, const wire_head *h)
{
    rec[0] = (uint8_t)h->status;  /* tally_status: 0 .. 11 */
    rec[1] = (uint8_t)h->flags;
    rec[2] = (uint8_t)h->len;     /* at most TALLY_CODEC_MAX_BYTES */
    rec[3] = (uint8_t)(h->len >> 8);
    wire_put32(rec + 4, h->fail_rank);
    wire_put32(rec + 8, h->first_rank);
    wire_put64(rec + 12, h->fingerprint);
}

size_t wire_make(uint8_t *rec, tally_status status, uint32_t rank, uint64_t fingerprint,
                 const tally_partial *p)
{
    wire_head h = {(uint32_t)status, status ? rank : WIRE_NO_RANK, rank, 0, fingerprint, 0};
    if (status == TALLY_OK) h.len = (uint32_t)tally_partial_encode(p, rec + WIRE_HEADER,
                                                                   WIRE_BYTES - WIRE_HEADER);
    wire_write_head(rec, &h);
    return WIRE_HEADER + h.len;
}

size_t wire_used(const uint8_t *rec)
{
    uint32_t len = (uint32_t)rec[2] | (uint32_t)rec[3] << 8;
    return WIRE_HEADER + (len <= WIRE_BYTES - WIRE_HEADER ? len : 0);
}

tally_status wire_state(const uint8_t *rec, tally_partial *p)
{
    return tally_partial_decode(rec + WIRE_HEADER, wire_used(rec) - WIRE_HEADER, p, NULL, NULL, 0);
}

size_t wire_merge(const uint8_t *a, const uint8_t *b, uint8_t *out)
{
    wire_head ha, hb, h;
    wire_read_head(a, &ha);
    wire_read_head(b, &hb);
    h = ha;
    h.len = 0;
    if (ha.status) {
        /* the lower failure stands */
    } else if (hb.status) {
        h = hb;
        h.first_rank = ha.first_rank;
        h.len = 0;
    } else if (ha.fingerprint != hb.fingerprint) {
        h.status = TALLY_ERR_INVALID_ARGUMENT;
        h.fail_rank = hb.first_rank;
        h.flags = WIRE_F_MISMATCH;
    } else {
        size_t la = wire_used(a) - WIRE_HEADER, lb = wire_used(b) - WIRE_HEADER;
        h.len = (uint32_t)tally_partial_merge_encoded(a + WIRE_HEADER, la, b + WIRE_HEADER, lb,
                                                      out + WIRE_HEADER, WIRE_BYTES - WIRE_HEADER);
        if (h.len == 0) {
            /* cannot happen between ranks of one build; reported rather than trusted */
            tally_partial p;
            int a_bad = tally_partial_decode(a + WIRE_HEADER, la, &p, NULL, NULL, 0) != TALLY_OK;
            h.status = TALLY_ERR_BACKEND_FAILURE;
            h.fail_rank = a_bad ? ha.first_rank : hb.first_rank;
            h.flags = 0;
        }
    }
    wire_write_head(out, &h);
    return WIRE_HEADER + h.len;
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
