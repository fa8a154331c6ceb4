/* The byte encoding of partial states (the format is described in partial_codec.h). Every field
 * is written with shifts, never with memcpy of a struct or a native integer, so the bytes are
 * the same on any host. */
#include <stdio.h>
#include <string.h>
#include "core/partial_codec.h"
#include "core/types.h"

/* partial.h's TALLY_NEED_* bits <-> the format's TALLY_CODEC_T_* bits. */
static const struct { uint32_t need, wire; } need_map[] = {
    {TALLY_NEED_SUM, TALLY_CODEC_T_SUM},         {TALLY_NEED_SQ, TALLY_CODEC_T_SQ},
    {TALLY_NEED_PROD, TALLY_CODEC_T_PROD},       {TALLY_NEED_MIN, TALLY_CODEC_T_MIN},
    {TALLY_NEED_MAX, TALLY_CODEC_T_MAX},         {TALLY_NEED_FIRSTNAN, TALLY_CODEC_T_FIRSTNAN},
    {TALLY_NEED_BITS, TALLY_CODEC_T_BITS},       {TALLY_NEED_ARGMIN, TALLY_CODEC_T_ARGMIN},
    {TALLY_NEED_ARGMAX, TALLY_CODEC_T_ARGMAX},   {TALLY_NEED_NANS, TALLY_CODEC_T_NANS},
};
#define NEED_MAP_N (sizeof need_map / sizeof need_map[0])

static uint32_t need_to_wire(uint32_t need)
{
    uint32_t w = 0;
    for (size_t i = 0; i < NEED_MAP_N; i++)
        if (need & need_map[i].need) w |= need_map[i].wire;
    return w;
}

/* 0 when wire holds a bit the format does not define. */
static int wire_to_need(uint32_t wire, uint32_t *need)
{
    uint32_t n = 0, known = 0;
    for (size_t i = 0; i < NEED_MAP_N; i++) {
        known |= need_map[i].wire;
        if (wire & need_map[i].wire) n |= need_map[i].need;
    }
    *need = n;
    return (wire & ~known) == 0;
}

#define HEADER_BYTES 32
#define EXACT_HEAD 8

/* An exact sum as sign and magnitude, its nonzero digits lo .. lo+count-1. */
typedef struct exact_sm {
    uint32_t flags;
    int neg, lo, count;
    uint32_t d[TALLY_EXACT_CHUNKS];
} exact_sm;

static void exact_split(const tally_exact *e, exact_sm *s)
{
    tally_exact t = *e;
    tally_exact_normalize(&t);
    s->flags = t.flags;
    s->neg = t.chunk[TALLY_EXACT_CHUNKS - 1] < 0;
    if (s->neg) { /* -(sum c_i w_i) = sum (-c_i) w_i, normalised again: the magnitude */
        for (int i = 0; i < TALLY_EXACT_CHUNKS; i++) t.chunk[i] = -t.chunk[i];
        tally_exact_normalize(&t);
    }
    int lo = 0, hi = TALLY_EXACT_CHUNKS - 1;
    while (lo < TALLY_EXACT_CHUNKS && t.chunk[lo] == 0) lo++;
    while (hi >= lo && t.chunk[hi] == 0) hi--;
    s->lo = lo < TALLY_EXACT_CHUNKS ? lo : 0;
    s->count = hi >= lo ? hi - lo + 1 : 0;
    for (int i = 0; i < s->count; i++) s->d[i] = (uint32_t)t.chunk[lo + i];
}

/* The variable part of a state: its exact sums' digits. */
static size_t exact_size(const tally_exact *e)
{
    exact_sm s;
    exact_split(e, &s);
    return EXACT_HEAD + 4 * (size_t)s.count;
}

/* The fixed part; exact sums count their heads only. */
static size_t sizes(tally_type type, uint32_t wire)
{
    int fl = tally_type_is_float(type);
    size_t s = HEADER_BYTES;
    if (wire & TALLY_CODEC_T_SUM) s += fl ? EXACT_HEAD : 16;
    if (wire & TALLY_CODEC_T_SQ) s += EXACT_HEAD;
    if (wire & TALLY_CODEC_T_PROD) s += fl ? 8 + 8 * TALLY_PROD_LANES + 4 : 20;
    if (wire & (TALLY_CODEC_T_MIN | TALLY_CODEC_T_ARGMIN)) s += 16;
    if (wire & (TALLY_CODEC_T_MAX | TALLY_CODEC_T_ARGMAX)) s += 16;
    if (wire & TALLY_CODEC_T_FIRSTNAN) s += 8;
    if (wire & TALLY_CODEC_T_BITS) s += 24;
    return s;
}

size_t tally_partial_encoded_size(const tally_partial *p)
{
    uint32_t wire = need_to_wire(p->need);
    size_t s = sizes(p->type, wire);
    if ((wire & TALLY_CODEC_T_SUM) && tally_type_is_float(p->type)) s += exact_size(&p->fsum) - EXACT_HEAD;
    if (wire & TALLY_CODEC_T_SQ) s += exact_size(&p->fsq) - EXACT_HEAD;
    return s;
}

/* ---- writing ------------------------------------------------------------------------------- */
static uint8_t *put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i));
    return b + 4;
}
static uint8_t *put64(uint8_t *b, uint64_t v)
{
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
    return b + 8;
}
static uint8_t *put128(uint8_t *b, unsigned __int128 v)
{
    b = put64(b, (uint64_t)v);
    return put64(b, (uint64_t)(v >> 64));
}
static uint8_t *put_f64(uint8_t *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return put64(b, u);
}
static uint8_t *put_exact(uint8_t *b, const exact_sm *s)
{
    b = put32(b, s->flags);
    b[0] = (uint8_t)s->neg;
    b[1] = (uint8_t)s->lo;
    b[2] = (uint8_t)s->count;
    b[3] = 0;
    b += 4;
    for (int i = 0; i < s->count; i++) b = put32(b, s->d[i]);
    return b;
}

size_t tally_partial_encode(const tally_partial *p, uint8_t *buf, size_t cap)
{
    uint32_t wire = need_to_wire(p->need);
    int fl = tally_type_is_float(p->type), sgn = tally_type_is_signed_int(p->type);
    exact_sm es, eq;
    size_t size = sizes(p->type, wire);
    if ((wire & TALLY_CODEC_T_SUM) && fl) {
        exact_split(&p->fsum, &es);
        size += 4 * (size_t)es.count;
    }
    if (wire & TALLY_CODEC_T_SQ) {
        exact_split(&p->fsq, &eq);
        size += 4 * (size_t)eq.count;
    }
    if (cap < size) return 0;
    uint8_t *b = buf;
    memcpy(b, "TLYP", 4);
    b[4] = TALLY_CODEC_VERSION;
    b[5] = (uint8_t)p->type;
    b[6] = p->omit_nan ? 1 : 0;
    b[7] = 0;
    b = put32(b + 8, wire);
    b = put32(b, 0);
    b = put64(b, p->n);
    b = put64(b, p->nans);
    if (wire & TALLY_CODEC_T_SUM) {
        if (fl) b = put_exact(b, &es);
        else b = put128(b, sgn ? (unsigned __int128)p->isum : p->usum);
    }
    if (wire & TALLY_CODEC_T_SQ) b = put_exact(b, &eq);
    if (wire & TALLY_CODEC_T_PROD) {
        if (fl) {
            b = put_f64(b, p->fprod);
            for (int i = 0; i < TALLY_PROD_LANES; i++) b = put_f64(b, p->lanes[i]);
            b = put32(b, p->lane_pos);
        } else {
            b = put128(b, sgn ? (unsigned __int128)p->iprod : p->uprod);
            b = put32(b, (p->prod_zero ? 1u : 0u) | (p->prod_ovf ? 2u : 0u));
        }
    }
    if (wire & (TALLY_CODEC_T_MIN | TALLY_CODEC_T_ARGMIN)) {
        b = put64(b, p->kmin);
        b = put64(b, p->imin);
    }
    if (wire & (TALLY_CODEC_T_MAX | TALLY_CODEC_T_ARGMAX)) {
        b = put64(b, p->kmax);
        b = put64(b, p->imax);
    }
    if (wire & TALLY_CODEC_T_FIRSTNAN) b = put64(b, p->first_nan);
    if (wire & TALLY_CODEC_T_BITS) {
        b = put64(b, p->band);
        b = put64(b, p->bor);
        b = put64(b, p->bxor);
    }
    return (size_t)(b - buf);
}

/* ---- reading ------------------------------------------------------------------------------- */
static uint32_t get32(const uint8_t *b)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)b[i] << (8 * i);
    return v;
}
static uint64_t get64(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
    return v;
}
static unsigned __int128 get128(const uint8_t *b)
{
    return (unsigned __int128)get64(b) | ((unsigned __int128)get64(b + 8) << 64);
}
static double get_f64(const uint8_t *b)
{
    uint64_t u = get64(b);
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static tally_status bad(char *err, size_t errlen, const char *what)
{
    if (errlen) snprintf(err, errlen, "partial state: %s", what);
    return TALLY_ERR_INVALID_ARGUMENT;
}

/* Reads an exact sum at b (avail bytes); returns its length, 0 when malformed. */
static size_t get_exact(const uint8_t *b, size_t avail, tally_exact *e)
{
    if (avail < EXACT_HEAD) return 0;
    uint32_t flags = get32(b);
    unsigned neg = b[4], lo = b[5], count = b[6];
    size_t len = EXACT_HEAD + 4 * (size_t)count;
    if (flags >= 32u || neg > 1 || b[7] != 0 || lo + count > TALLY_EXACT_CHUNKS || avail < len)
        return 0;
    tally_exact_init(e);
    e->flags = flags;
    for (unsigned i = 0; i < count; i++) {
        int64_t d = (int64_t)get32(b + EXACT_HEAD + 4 * i);
        e->chunk[lo + i] = neg ? -d : d;
    }
    /* every |digit| < 2^32: exact_sum.h's invariant holds with no adds counted */
    return len;
}

#define NEED(k)                                                                               \
    do {                                                                                      \
        if ((size_t)(end - b) < (size_t)(k)) return bad(err, errlen, "shorter than its sections"); \
    } while (0)

tally_status tally_partial_decode(const uint8_t *buf, size_t len, tally_partial *p, size_t *used,
                                  char *err, size_t errlen)
{
    if (used) *used = 0;
    if (!buf || len < HEADER_BYTES) return bad(err, errlen, "shorter than its 32-byte header");
    if (memcmp(buf, "TLYP", 4) != 0) return bad(err, errlen, "no TLYP magic");
    if (buf[4] != TALLY_CODEC_VERSION) {
        if (errlen)
            snprintf(err, errlen, "partial state: version %u (this library reads version %d)",
                     buf[4], TALLY_CODEC_VERSION);
        return TALLY_ERR_INVALID_ARGUMENT;
    }
    if (!tally_type_valid(buf[5])) return bad(err, errlen, "unknown element type");
    if (buf[6] > 1 || buf[7] != 0) return bad(err, errlen, "bad option byte");
    uint32_t wire = get32(buf + 8), need;
    if (!wire_to_need(wire, &need) || get32(buf + 12) != 0)
        return bad(err, errlen, "unknown bits in what the state tracks");
    tally_type type = (tally_type)buf[5];
    int fl = tally_type_is_float(type), sgn = tally_type_is_signed_int(type);
    if (!fl && (wire & (TALLY_CODEC_T_NANS | TALLY_CODEC_T_FIRSTNAN)))
        return bad(err, errlen, "NaN fields on an integer type");
    tally_partial_init(p, type, need, buf[6]);
    const uint8_t *b = buf + 16, *end = buf + len;
    p->n = get64(b);
    p->nans = get64(b + 8);
    b += 16;
    if (p->nans > p->n || (!fl && p->nans)) return bad(err, errlen, "more NaNs than elements");
    if (wire & TALLY_CODEC_T_SUM) {
        if (fl) {
            size_t l = get_exact(b, (size_t)(end - b), &p->fsum);
            if (!l) return bad(err, errlen, "malformed exact sum");
            b += l;
        } else {
            NEED(16);
            unsigned __int128 v = get128(b);
            if (sgn) p->isum = (__int128)v;
            else p->usum = v;
            b += 16;
        }
    }
    if (wire & TALLY_CODEC_T_SQ) {
        size_t l = get_exact(b, (size_t)(end - b), &p->fsq);
        if (!l) return bad(err, errlen, "malformed exact sum of squares");
        b += l;
    }
    if (wire & TALLY_CODEC_T_PROD) {
        if (fl) {
            NEED(8 + 8 * TALLY_PROD_LANES + 4);
            p->fprod = get_f64(b);
            for (int i = 0; i < TALLY_PROD_LANES; i++) p->lanes[i] = get_f64(b + 8 + 8 * i);
            p->lane_pos = get32(b + 8 + 8 * TALLY_PROD_LANES);
            if (p->lane_pos >= TALLY_PROD_BLOCK) return bad(err, errlen, "open product block too long");
            b += 8 + 8 * TALLY_PROD_LANES + 4;
        } else {
            NEED(20);
            unsigned __int128 v = get128(b);
            uint32_t f = get32(b + 16);
            if (f > 3) return bad(err, errlen, "unknown product flags");
            p->prod_zero = f & 1;
            p->prod_ovf = (f >> 1) & 1;
            if (sgn) {
                __int128 sv = (__int128)v, cap = (__int128)1 << 63;
                if (sv > cap || sv < -cap) return bad(err, errlen, "integer product out of range");
                p->iprod = sv;
            } else {
                if (v > UINT64_MAX) return bad(err, errlen, "integer product out of range");
                p->uprod = v;
            }
            b += 20;
        }
    }
    if (wire & (TALLY_CODEC_T_MIN | TALLY_CODEC_T_ARGMIN)) {
        NEED(16);
        p->kmin = get64(b);
        p->imin = get64(b + 8);
        b += 16;
    }
    if (wire & (TALLY_CODEC_T_MAX | TALLY_CODEC_T_ARGMAX)) {
        NEED(16);
        p->kmax = get64(b);
        p->imax = get64(b + 8);
        b += 16;
    }
    if (wire & TALLY_CODEC_T_FIRSTNAN) {
        NEED(8);
        p->first_nan = get64(b);
        b += 8;
    }
    if (wire & TALLY_CODEC_T_BITS) {
        NEED(24);
        p->band = get64(b);
        p->bor = get64(b + 8);
        p->bxor = get64(b + 16);
        b += 24;
    }
    /* Indices must fall inside the elements the state covers. */
    int has_val = p->n > p->nans;
    if (has_val && (((wire & TALLY_CODEC_T_ARGMIN) && p->imin >= p->n) ||
                    ((wire & TALLY_CODEC_T_ARGMAX) && p->imax >= p->n)))
        return bad(err, errlen, "argmin/argmax index beyond the elements");
    if ((wire & TALLY_CODEC_T_FIRSTNAN) &&
        (p->nans ? p->first_nan >= p->n : p->first_nan != TALLY_NO_INDEX))
        return bad(err, errlen, "first NaN index does not match the NaN count");
    if (used) *used = (size_t)(b - buf);
    return TALLY_OK;
}
