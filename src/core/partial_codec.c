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

/* The canonical form of e's value: its digits normalised (carries propagated), the sign taken
 * out, the zero digits at both ends dropped. Works on the span of nonzero chunks only (real
 * sums use a handful of the 68), like tally_exact_round: the carries go up from the lowest
 * nonzero chunk and die out a few chunks above the highest, where only the top chunk can end
 * up negative (the value's sign). */
static void exact_split(const tally_exact *e, exact_sm *s)
{
    const int N = TALLY_EXACT_CHUNKS;
    const int64_t *c = e->chunk;
    s->flags = e->flags;
    s->neg = 0;
    s->lo = 0;
    s->count = 0;
    int lo = 0, hi = N - 1;
    while (lo < N && c[lo] == 0) lo++;
    if (lo == N) return;
    while (c[hi] == 0) hi--;
    int64_t d[TALLY_EXACT_CHUNKS];
    int64_t carry = 0;
    int i = lo;
    for (; i < N - 1; i++) {
        if (i > hi && carry == 0) break;
        int64_t v = c[i] + carry; /* |v| < 2^63: digits are bounded by the add budget */
        uint64_t low = (uint64_t)v & 0xffffffffu;
        carry = (v - (int64_t)low) / ((int64_t)1 << 32); /* exact division: floor(v / 2^32) */
        d[i] = (int64_t)low;
    }
    int top = i - 1;
    if (i == N - 1) {
        d[N - 1] = c[N - 1] + carry;
        top = N - 1;
    }
    if (top >= lo && d[top] < 0) { /* -(sum d_i w_i) = sum (-d_i) w_i, normalised again: the magnitude */
        s->neg = 1;
        carry = 0;
        for (i = lo; i < top; i++) {
            int64_t v = -d[i] + carry;
            uint64_t low = (uint64_t)v & 0xffffffffu;
            carry = (v - (int64_t)low) / ((int64_t)1 << 32);
            d[i] = (int64_t)low;
        }
        d[top] = -d[top] + carry;
    }
    while (lo <= top && d[lo] == 0) lo++;
    while (top >= lo && d[top] == 0) top--;
    if (top < lo) {
        s->neg = 0; /* the chunks cancelled exactly */
        return;
    }
    s->lo = lo;
    s->count = top - lo + 1;
    for (i = 0; i < s->count; i++) s->d[i] = (uint32_t)d[lo + i];
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

/* A checked encoding: its header's values and where each section starts (NULL: absent). Both
 * the decoder and the merge of encodings read through it, so they accept exactly the same
 * encodings. */
typedef struct view {
    uint32_t wire, need;
    tally_type type;
    int fl, sgn;
    uint64_t n, nans;
    const uint8_t *sum, *sq, *prod, *min, *max, *firstnan, *bits;
    size_t used;
} view;

#define PROD_F_BYTES (8 + 8 * TALLY_PROD_LANES + 4)

/* The length of an exact sum's section at b (avail bytes), 0 when malformed. */
static size_t exact_len(const uint8_t *b, size_t avail)
{
    if (avail < EXACT_HEAD) return 0;
    uint32_t flags = get32(b);
    unsigned neg = b[4], lo = b[5], count = b[6];
    size_t len = EXACT_HEAD + 4 * (size_t)count;
    if (flags >= 32u || neg > 1 || b[7] != 0 || lo + count > TALLY_EXACT_CHUNKS || avail < len)
        return 0;
    return len;
}

#define NEED(k)                                                                               \
    do {                                                                                      \
        if ((size_t)(end - b) < (size_t)(k)) return bad(err, errlen, "shorter than its sections"); \
    } while (0)

static tally_status parse(const uint8_t *buf, size_t len, view *v, char *err, size_t errlen)
{
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
    uint32_t wire = get32(buf + 8);
    if (!wire_to_need(wire, &v->need) || get32(buf + 12) != 0)
        return bad(err, errlen, "unknown bits in what the state tracks");
    v->wire = wire;
    v->type = (tally_type)buf[5];
    v->fl = tally_type_is_float(v->type);
    v->sgn = tally_type_is_signed_int(v->type);
    if (!v->fl && (wire & (TALLY_CODEC_T_NANS | TALLY_CODEC_T_FIRSTNAN)))
        return bad(err, errlen, "NaN fields on an integer type");
    v->n = get64(buf + 16);
    v->nans = get64(buf + 24);
    if (v->nans > v->n || (!v->fl && v->nans)) return bad(err, errlen, "more NaNs than elements");
    const uint8_t *b = buf + HEADER_BYTES, *end = buf + len;
    v->sum = v->sq = v->prod = v->min = v->max = v->firstnan = v->bits = NULL;
    if (wire & TALLY_CODEC_T_SUM) {
        v->sum = b;
        if (v->fl) {
            size_t l = exact_len(b, (size_t)(end - b));
            if (!l) return bad(err, errlen, "malformed exact sum");
            b += l;
        } else {
            NEED(16);
            b += 16;
        }
    }
    if (wire & TALLY_CODEC_T_SQ) {
        v->sq = b;
        size_t l = exact_len(b, (size_t)(end - b));
        if (!l) return bad(err, errlen, "malformed exact sum of squares");
        b += l;
    }
    if (wire & TALLY_CODEC_T_PROD) {
        v->prod = b;
        if (v->fl) {
            NEED(PROD_F_BYTES);
            if (get32(b + 8 + 8 * TALLY_PROD_LANES) >= TALLY_PROD_BLOCK)
                return bad(err, errlen, "open product block too long");
            b += PROD_F_BYTES;
        } else {
            NEED(20);
            unsigned __int128 u = get128(b);
            if (get32(b + 16) > 3) return bad(err, errlen, "unknown product flags");
            if (v->sgn) {
                __int128 sv = (__int128)u, cap = (__int128)1 << 63;
                if (sv > cap || sv < -cap) return bad(err, errlen, "integer product out of range");
            } else if (u > UINT64_MAX) {
                return bad(err, errlen, "integer product out of range");
            }
            b += 20;
        }
    }
    if (wire & (TALLY_CODEC_T_MIN | TALLY_CODEC_T_ARGMIN)) {
        NEED(16);
        v->min = b;
        b += 16;
    }
    if (wire & (TALLY_CODEC_T_MAX | TALLY_CODEC_T_ARGMAX)) {
        NEED(16);
        v->max = b;
        b += 16;
    }
    if (wire & TALLY_CODEC_T_FIRSTNAN) {
        NEED(8);
        v->firstnan = b;
        b += 8;
    }
    if (wire & TALLY_CODEC_T_BITS) {
        NEED(24);
        v->bits = b;
        b += 24;
    }
    /* Indices must fall inside the elements the state covers. */
    int has_val = v->n > v->nans;
    if (has_val && (((wire & TALLY_CODEC_T_ARGMIN) && get64(v->min + 8) >= v->n) ||
                    ((wire & TALLY_CODEC_T_ARGMAX) && get64(v->max + 8) >= v->n)))
        return bad(err, errlen, "argmin/argmax index beyond the elements");
    if (v->firstnan) {
        uint64_t f = get64(v->firstnan);
        if (v->nans ? f >= v->n : f != TALLY_NO_INDEX)
            return bad(err, errlen, "first NaN index does not match the NaN count");
    }
    v->used = (size_t)(b - buf);
    return TALLY_OK;
}

/* An exact sum's section (checked by exact_len) into e. */
static void get_exact(const uint8_t *b, tally_exact *e)
{
    unsigned neg = b[4], lo = b[5], count = b[6];
    e->flags = get32(b); /* the chunks are zero: tally_partial_init made e */
    for (unsigned i = 0; i < count; i++) {
        int64_t d = (int64_t)get32(b + EXACT_HEAD + 4 * i);
        e->chunk[lo + i] = neg ? -d : d;
    }
    /* every |digit| < 2^32: exact_sum.h's invariant holds with no adds counted */
}

tally_status tally_partial_decode(const uint8_t *buf, size_t len, tally_partial *p, size_t *used,
                                  char *err, size_t errlen)
{
    if (used) *used = 0;
    view v;
    tally_status st = parse(buf, len, &v, err, errlen);
    if (st != TALLY_OK) return st;
    tally_partial_init(p, v.type, v.need, buf[6]);
    p->n = v.n;
    p->nans = v.nans;
    if (v.sum) {
        if (v.fl) get_exact(v.sum, &p->fsum);
        else if (v.sgn) p->isum = (__int128)get128(v.sum);
        else p->usum = get128(v.sum);
    }
    if (v.sq) get_exact(v.sq, &p->fsq);
    if (v.prod) {
        const uint8_t *b = v.prod;
        if (v.fl) {
            p->fprod = get_f64(b);
            for (int i = 0; i < TALLY_PROD_LANES; i++) p->lanes[i] = get_f64(b + 8 + 8 * i);
            p->lane_pos = get32(b + 8 + 8 * TALLY_PROD_LANES);
        } else {
            uint32_t f = get32(b + 16);
            p->prod_zero = f & 1;
            p->prod_ovf = (f >> 1) & 1;
            if (v.sgn) p->iprod = (__int128)get128(b);
            else p->uprod = get128(b);
        }
    }
    if (v.min) {
        p->kmin = get64(v.min);
        p->imin = get64(v.min + 8);
    }
    if (v.max) {
        p->kmax = get64(v.max);
        p->imax = get64(v.max + 8);
    }
    if (v.firstnan) p->first_nan = get64(v.firstnan);
    if (v.bits) {
        p->band = get64(v.bits);
        p->bor = get64(v.bits + 8);
        p->bxor = get64(v.bits + 16);
    }
    if (used) *used = v.used;
    return TALLY_OK;
}

/* ---- merging encodings ---------------------------------------------------------------------- */
/* The sum of two exact sums' sections: digits t[first .. first+count) are the magnitude's
 * digits lo .. lo+count-1. */
typedef struct exact_win {
    uint32_t flags;
    int neg, lo, count, first;
    uint32_t t[TALLY_EXACT_CHUNKS + 1];
} exact_win;

/* r := x + y for two exact sums' sections (checked by exact_len): sign and magnitude arithmetic
 * over the digits they use, the result trimmed to its nonzero digits (zero: sign 0, lo 0,
 * count 0), as exact_split writes it. Returns 0 when the magnitude reaches 2^1088, which the
 * 68 digits cannot hold (no data reach it: an exact sum of fewer than 2^64 doubles is below
 * 2^1088). */
static int exact_add_sections(const uint8_t *x, const uint8_t *y, exact_win *r)
{
    const int xlo = x[5], xhi = x[5] + x[6], ylo = y[5], yhi = y[5] + y[6];
    r->flags = get32(x) | get32(y);
    int lo = xlo < ylo ? xlo : ylo, hi = xhi > yhi ? xhi : yhi;
    if (x[6] == 0) lo = ylo, hi = yhi;
    if (y[6] == 0) lo = x[6] ? xlo : 0, hi = x[6] ? xhi : 0;
    /* digits lo .. hi-1 of the result go to t[i - lo]; one more for a carry */
    uint32_t *t = r->t;
#define XD(i) ((i) >= xlo && (i) < xhi ? get32(x + EXACT_HEAD + 4 * ((i) - xlo)) : 0u)
#define YD(i) ((i) >= ylo && (i) < yhi ? get32(y + EXACT_HEAD + 4 * ((i) - ylo)) : 0u)
    int neg;
    if (x[4] == y[4]) {
        uint64_t carry = 0;
        for (int i = lo; i < hi; i++) {
            uint64_t s = (uint64_t)XD(i) + YD(i) + carry;
            t[i - lo] = (uint32_t)s;
            carry = s >> 32;
        }
        if (carry) {
            if (hi == TALLY_EXACT_CHUNKS) return 0;
            t[hi++ - lo] = (uint32_t)carry;
        }
        neg = x[4];
    } else {
        /* the larger magnitude minus the smaller, with the larger's sign */
        int cmp = 0;
        for (int i = hi - 1; i >= lo && !cmp; i--) {
            uint32_t a = XD(i), b = YD(i);
            cmp = a > b ? 1 : a < b ? -1 : 0;
        }
        const uint8_t *big = cmp >= 0 ? x : y;
        int64_t borrow = 0;
        for (int i = lo; i < hi; i++) {
            int64_t s = cmp >= 0 ? (int64_t)XD(i) - YD(i) : (int64_t)YD(i) - XD(i);
            s -= borrow;
            borrow = s < 0;
            t[i - lo] = (uint32_t)(s + (borrow << 32));
        }
        neg = big[4];
    }
#undef XD
#undef YD
    int a = 0, z = hi - lo - 1;
    while (a <= z && t[a] == 0) a++;
    while (z >= a && t[z] == 0) z--;
    r->first = a;
    if (a > z) {
        r->neg = r->lo = r->count = 0;
        return 1;
    }
    r->neg = neg;
    r->lo = lo + a;
    r->count = z - a + 1;
    return 1;
}

static uint8_t *put_exact_win(uint8_t *b, const exact_win *r)
{
    b = put32(b, r->flags);
    b[0] = (uint8_t)r->neg;
    b[1] = (uint8_t)r->lo;
    b[2] = (uint8_t)r->count;
    b[3] = 0;
    b += 4;
    for (int i = 0; i < r->count; i++) b = put32(b, r->t[r->first + i]);
    return b;
}

/* The index of an element of the second state, counted from the first state's start. */
static uint64_t shifted(uint64_t i, uint64_t by)
{
    return i == TALLY_NO_INDEX ? i : i + by;
}

size_t tally_partial_merge_encoded(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                                   uint8_t *out, size_t cap)
{
    view x, y;
    if (parse(a, alen, &x, NULL, 0) != TALLY_OK || parse(b, blen, &y, NULL, 0) != TALLY_OK)
        return 0;
    /* version, type, omit_nan and what the states track: the same */
    if (memcmp(a + 4, b + 4, 12) != 0) return 0;
    const uint64_t n = x.n + y.n;
    if (n < x.n) return 0;
    exact_win es, eq;
    size_t size = sizes(x.type, x.wire);
    if (x.sum && x.fl) {
        if (!exact_add_sections(x.sum, y.sum, &es)) return 0;
        size += 4 * (size_t)es.count;
    }
    if (x.sq) {
        if (!exact_add_sections(x.sq, y.sq, &eq)) return 0;
        size += 4 * (size_t)eq.count;
    }
    if (cap < size) return 0;
    uint8_t *o = out;
    memcpy(o, a, 16);
    o = put64(o + 16, n);
    o = put64(o, x.nans + y.nans);
    if (x.sum) {
        if (x.fl) {
            o = put_exact_win(o, &es);
        } else {
            unsigned __int128 u = get128(x.sum), v = get128(y.sum), s = u + v;
            if (x.sgn) { /* two's complement: overflow when both signs differ from the sum's */
                if ((((u ^ s) & (v ^ s)) >> 127) != 0) return 0;
            } else if (s < u) {
                return 0;
            }
            o = put128(o, s);
        }
    }
    if (x.sq) o = put_exact_win(o, &eq);
    if (x.prod) {
        if (x.fl) {
            /* float products do not merge (partial.h): the first state's stays */
            memcpy(o, x.prod, PROD_F_BYTES);
            o += PROD_F_BYTES;
        } else {
            uint32_t f = get32(x.prod + 16) | get32(y.prod + 16);
            unsigned __int128 u = get128(x.prod), v = get128(y.prod);
            if (!(f & 2)) {
                if (x.sgn) { /* both |.| <= 2^63: the product fits; beyond 2^63 it overflowed */
                    __int128 r = (__int128)u * (__int128)v, lim = (__int128)1 << 63;
                    if (r > lim || r < -lim) f |= 2;
                    else u = (unsigned __int128)r;
                } else { /* both < 2^64: the product fits */
                    unsigned __int128 r = u * v;
                    if (r > UINT64_MAX) f |= 2;
                    else u = r;
                }
            }
            o = put128(o, u);
            o = put32(o, f);
        }
    }
    const int xval = x.n > x.nans, yval = y.n > y.nans;
    if (x.min) {
        const uint8_t *src = x.min;
        uint64_t i = get64(x.min + 8);
        if (yval && (!xval || get64(y.min) < get64(x.min))) {
            src = y.min;
            i = shifted(get64(y.min + 8), x.n);
        }
        o = put64(o, get64(src));
        o = put64(o, i);
    }
    if (x.max) {
        const uint8_t *src = x.max;
        uint64_t i = get64(x.max + 8);
        if (yval && (!xval || get64(y.max) > get64(x.max))) {
            src = y.max;
            i = shifted(get64(y.max + 8), x.n);
        }
        o = put64(o, get64(src));
        o = put64(o, i);
    }
    if (x.firstnan) {
        uint64_t f = get64(x.firstnan);
        o = put64(o, f != TALLY_NO_INDEX ? f : shifted(get64(y.firstnan), x.n));
    }
    if (x.bits) {
        o = put64(o, get64(x.bits) & get64(y.bits));
        o = put64(o, get64(x.bits + 8) | get64(y.bits + 8));
        o = put64(o, get64(x.bits + 16) ^ get64(y.bits + 16));
    }
    return (size_t)(o - out);
}
