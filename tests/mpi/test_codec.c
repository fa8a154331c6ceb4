/* The partial-state encoding (src/core/partial_codec.h), without MPI: round trips of states of
 * every type made by a CPU context (decode(encode(p)) gives the same results and re-encodes to
 * the same bytes), the version 1 layout at known offsets (so a change of format is a test
 * failure), truncated and corrupted encodings (an error or a valid state, never a crash: this
 * test runs under the sanitizers too), the index shift of tally_internal_partial_append, the
 * exact sums' canonical digits against a slow reference, and tally_partial_merge_encoded (the
 * cross-rank merge) against decoding, appending and encoding again: on states of real data, on
 * adversarial states (every digit set, the extreme exponents, NaN/inf flags, sums and products
 * at their limits, element counts near 2^64), and its refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/internal.h"
#include "../support/check.h"


static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

static int same_result(const tally_result *a, const tally_result *b)
{
    return a->status == b->status && a->type == b->type && a->value.u64 == b->value.u64 &&
           a->index == b->index;
}

static void fill(tally_type t, void *x, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        double f = ldexp((double)(r >> 11) * 0x1p-53 - 0.5, (int)(r % 120) - 60);
        if (r % 97 == 0) f = NAN;
        switch (t) {
        case TALLY_I8: ((int8_t *)x)[i] = (int8_t)r; break;
        case TALLY_U8: ((uint8_t *)x)[i] = (uint8_t)r; break;
        case TALLY_I16: ((int16_t *)x)[i] = (int16_t)r; break;
        case TALLY_U16: ((uint16_t *)x)[i] = (uint16_t)r; break;
        case TALLY_I32: ((int32_t *)x)[i] = (int32_t)r; break;
        case TALLY_U32: ((uint32_t *)x)[i] = (uint32_t)r; break;
        case TALLY_I64: ((int64_t *)x)[i] = (int64_t)r >> 20; break;
        case TALLY_U64: ((uint64_t *)x)[i] = r >> 20; break;
        case TALLY_F32: ((float *)x)[i] = (float)f; break;
        default: ((double *)x)[i] = f; break;
        }
    }
}

static void round_trips(tally_context *ctx)
{
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        tally_type ty = (tally_type)t;
        int fl = ty == TALLY_F32 || ty == TALLY_F64;
        tally_op ops[TALLY_OP_COUNT];
        size_t nops = 0;
        for (int op = 0; op < TALLY_OP_COUNT; op++)
            if (!(fl && op >= TALLY_AND && op <= TALLY_XOR)) ops[nops++] = (tally_op)op;
        for (int omit = 0; omit <= fl; omit++) {
            uint64_t n = rnd() % 20000;
            void *x = malloc(n * 8 + 8);
            fill(ty, x, n);
            tally_partial p, q;
            uint32_t need = tally_internal_ops_need(ty, ops, nops, omit) | TALLY_NEED_SQ;
            tally_internal_partial_init(&p, ty, need, omit);
            tally_status st = tally_internal_accumulate(ctx, x, n / 2, &p);
            st |= tally_internal_accumulate(ctx, (char *)x + n / 2 * tally_type_size(ty), n - n / 2, &p);
            CHECK(st == TALLY_OK, "accumulate %s", tally_type_name(ty));
            uint8_t a[TALLY_CODEC_MAX_BYTES], b[TALLY_CODEC_MAX_BYTES];
            size_t la = tally_partial_encode(&p, a, sizeof a);
            CHECK(la == tally_partial_encoded_size(&p) && la > 0, "encoded size %zu", la);
            CHECK(tally_partial_encode(&p, a, la - 1) == 0, "encode into too small a buffer");
            size_t used;
            char err[128];
            st = tally_partial_decode(a, la, &q, &used, err, sizeof err);
            CHECK(st == TALLY_OK && used == la, "decode %s: %s", tally_type_name(ty), err);
            size_t lb = tally_partial_encode(&q, b, sizeof b);
            CHECK(la == lb && memcmp(a, b, la) == 0, "re-encoding %s differs", tally_type_name(ty));
            for (size_t i = 0; i < nops; i++) {
                tally_result r1, r2;
                tally_internal_partial_result(&p, ops[i], 1, NULL, &r1);
                tally_internal_partial_result(&q, ops[i], 1, NULL, &r2);
                if (ops[i] == TALLY_PROD && fl) {
                    r1.value.f64 = tally_internal_partial_fprod(&p);
                    r2.value.f64 = tally_internal_partial_fprod(&q);
                }
                CHECK(same_result(&r1, &r2), "%s %s omit=%d: results differ after a round trip",
                      tally_op_name(ops[i]), tally_type_name(ty), omit);
            }
            /* every truncation is an error; every corruption is an error or a valid state */
            for (size_t k = 0; k < la; k++)
                CHECK(tally_partial_decode(a, k, &q, NULL, NULL, 0) != TALLY_OK, "truncated at %zu", k);
            for (int k = 0; k < 300; k++) {
                memcpy(b, a, la);
                b[rnd() % la] ^= (uint8_t)(1u << (rnd() % 8));
                if (tally_partial_decode(b, la, &q, NULL, NULL, 0) == TALLY_OK) {
                    tally_result r;
                    for (size_t i = 0; i < nops; i++) tally_internal_partial_result(&q, ops[i], 0, NULL, &r);
                }
            }
            free(x);
        }
    }
}

static uint64_t le64(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
    return v;
}

/* Version 1, byte for byte where it is easy to say: f64 {1.5, -2.25} with sum and min. */
static void layout(tally_context *ctx)
{
    double x[2] = {1.5, -2.25};
    tally_op ops[] = {TALLY_SUM, TALLY_MIN};
    tally_partial p;
    tally_internal_partial_init(&p, TALLY_F64, tally_internal_ops_need(TALLY_F64, ops, 2, 0), 0);
    tally_internal_accumulate(ctx, x, 2, &p);
    uint8_t b[TALLY_CODEC_MAX_BYTES];
    size_t l = tally_partial_encode(&p, b, sizeof b);
    CHECK(memcmp(b, "TLYP", 4) == 0 && b[4] == 1 && b[5] == TALLY_F64 && b[6] == 0 && b[7] == 0,
          "header bytes");
    CHECK(le64(b + 8) == (TALLY_CODEC_T_SUM | TALLY_CODEC_T_MIN | TALLY_CODEC_T_NANS), "tracked bits %llx",
          (unsigned long long)le64(b + 8));
    CHECK(le64(b + 16) == 2 && le64(b + 24) == 0, "n and nans");
    /* -0.75 = -3 * 2^-2: magnitude 3 * 2^1086 of the 2^-1088 unit: digit 33 = 3 << 30 */
    const uint8_t *s = b + 32;
    CHECK(s[0] == (8 | 16) && s[1] == 0 && s[2] == 0 && s[3] == 0, "exact flags (ANY|NONNEGZERO)");
    CHECK(s[4] == 1 && s[5] == 33 && s[6] == 1 && s[7] == 0, "sign %u lo %u count %u", s[4], s[5], s[6]);
    CHECK((le64(s + 8) & 0xffffffffull) == 0xC0000000ull, "digit");
    const uint8_t *m = s + 12;
    double v = -2.25;
    uint64_t bits;
    memcpy(&bits, &v, 8);
    CHECK(le64(m) == (bits >> 63 ? ~bits : bits | (1ull << 63)), "min key");
    CHECK(le64(m + 8) == UINT64_MAX, "min index (not tracked without argmin)");
    CHECK(l == 32 + 12 + 16, "length %zu", l);
}

/* append moves the second state's indices past the first's elements */
static void append(tally_context *ctx)
{
    double a[3] = {5, 1, 7}, b[4] = {NAN, 0.5, 9, 0.5};
    tally_op ops[] = {TALLY_ARGMIN, TALLY_ARGMAX};
    tally_partial p, q;
    uint32_t need = tally_internal_ops_need(TALLY_F64, ops, 2, 1);
    tally_internal_partial_init(&p, TALLY_F64, need, 1);
    tally_internal_partial_init(&q, TALLY_F64, need, 1);
    tally_internal_accumulate(ctx, a, 3, &p);
    tally_internal_accumulate(ctx, b, 4, &q);
    tally_internal_partial_append(&p, &q);
    tally_result r;
    tally_internal_partial_result(&p, TALLY_ARGMIN, 0, NULL, &r);
    CHECK(r.index == 4 && r.value.f64 == 0.5, "argmin index %llu", (unsigned long long)r.index);
    tally_internal_partial_result(&p, TALLY_ARGMAX, 0, NULL, &r);
    CHECK(r.index == 5 && r.value.f64 == 9, "argmax index %llu", (unsigned long long)r.index);
}

/* ---- exact sums' digits ------------------------------------------------------------------ */
/* The format's exact-sum section computed the slow way: the whole accumulator normalised
 * (exact_sum.h), the sign taken out by negating every chunk and normalising again, then the
 * nonzero digits. */
static size_t ref_exact_section(const tally_exact *e, uint8_t *b)
{
    tally_exact t = *e;
    tally_exact_normalize(&t);
    int neg = t.chunk[TALLY_EXACT_CHUNKS - 1] < 0;
    if (neg) {
        for (int i = 0; i < TALLY_EXACT_CHUNKS; i++) t.chunk[i] = -t.chunk[i];
        tally_exact_normalize(&t);
    }
    int lo = 0, hi = TALLY_EXACT_CHUNKS - 1;
    while (lo < TALLY_EXACT_CHUNKS && t.chunk[lo] == 0) lo++;
    while (hi >= lo && t.chunk[hi] == 0) hi--;
    int count = hi >= lo ? hi - lo + 1 : 0;
    if (!count) lo = 0;
    for (int i = 0; i < 4; i++) b[i] = (uint8_t)(t.flags >> (8 * i));
    b[4] = (uint8_t)neg;
    b[5] = (uint8_t)lo;
    b[6] = (uint8_t)count;
    b[7] = 0;
    for (int i = 0; i < count; i++)
        for (int k = 0; k < 4; k++) b[8 + 4 * i + k] = (uint8_t)((uint64_t)t.chunk[lo + i] >> (8 * k));
    return 8 + 4 * (size_t)count;
}

/* A random double over the whole range: subnormals, the largest binade, both signs. */
static double rnd_any_double(void)
{
    uint64_t r = rnd();
    switch (r % 8) {
    case 0: return ldexp((double)(r >> 12), -1074 - 0); /* subnormal or tiny */
    case 1: return -ldexp(1.0 + (double)(r >> 12) * 0x1p-52, 1023);
    case 2: return ldexp(1.0 + (double)(r >> 12) * 0x1p-52, 1023);
    default: return ldexp((double)(r >> 11) * 0x1p-53, (int)(r % 2098) - 1074) * ((r >> 3) & 1 ? -1 : 1);
    }
}

/* Random accumulators of the kinds an exact sum can be in: real adds (with cancellation), raw
 * chunks with deferred carries of either sign over a random span, every digit set (the largest
 * magnitude, either sign), carries that ripple across many digits, zero. |value| < 2^1088. */
static void rnd_exact(tally_exact *e)
{
    tally_exact_init(e);
    e->flags = (uint32_t)(rnd() % 32);
    int kind = (int)(rnd() % 7);
    if (kind == 0) {
        int k = (int)(rnd() % 40);
        for (int i = 0; i < k; i++) {
            double v = rnd_any_double();
            tally_exact_add_finite_(e, v);
            if (rnd() % 3 == 0) tally_exact_add_finite_(e, -v);
        }
    } else if (kind == 1 || kind == 2) {
        int lo = (int)(rnd() % TALLY_EXACT_CHUNKS), hi = lo + (int)(rnd() % (TALLY_EXACT_CHUNKS - lo));
        for (int i = lo; i <= hi; i++) {
            int64_t v = (int64_t)(rnd() >> 3);                       /* < 2^61 */
            if (i == TALLY_EXACT_CHUNKS - 1) v >>= 32;               /* keeps |value| < 2^1088 */
            e->chunk[i] = rnd() & 1 ? -v : v;
        }
        e->nadds = 1u << 29;
    } else if (kind == 3) {
        int64_t d = rnd() & 1 ? -(int64_t)0xffffffff : 0xffffffff;
        for (int i = 0; i < TALLY_EXACT_CHUNKS; i++) e->chunk[i] = d;
    } else if (kind == 4) {
        int lo = (int)(rnd() % (TALLY_EXACT_CHUNKS - 1));
        e->chunk[lo] = (int64_t)1 << 32;
        for (int i = lo + 1; i < TALLY_EXACT_CHUNKS - 1; i++) e->chunk[i] = 0xffffffff;
        if (rnd() & 1) e->chunk[TALLY_EXACT_CHUNKS - 1] = -1;
        e->nadds = 1;
    } else if (kind == 5) {
        e->chunk[rnd() % 3] = rnd() & 1 ? 1 : -1;                                  /* 2^-1088 */
        e->chunk[TALLY_EXACT_CHUNKS - 1 - rnd() % 3] = (int64_t)(rnd() % 0xffffffff);
    }
}

static void exact_digits(void)
{
    for (int k = 0; k < 20000; k++) {
        tally_partial p;
        tally_internal_partial_init(&p, TALLY_F64, TALLY_NEED_SUM, 0);
        rnd_exact(&p.fsum);
        uint8_t b[TALLY_CODEC_MAX_BYTES], r[TALLY_CODEC_MAX_BYTES];
        size_t l = tally_partial_encode(&p, b, sizeof b);
        size_t lr = ref_exact_section(&p.fsum, r);
        CHECK(l == 32 + lr && memcmp(b + 32, r, lr) == 0, "exact digits differ from the reference "
              "(case %d: sign %u/%u lo %u/%u count %u/%u)", k, b[36], r[4], b[37], r[5], b[38], r[6]);
        tally_partial q;
        CHECK(tally_partial_decode(b, l, &q, NULL, NULL, 0) == TALLY_OK, "decode of case %d", k);
        tally_exact_normalize(&q.fsum);
        tally_exact t = p.fsum;
        tally_exact_normalize(&t);
        CHECK(memcmp(q.fsum.chunk, t.chunk, sizeof t.chunk) == 0, "value changed by a round trip");
    }
}

/* ---- merging encodings ---------------------------------------------------------------------- */
/* The merge as the library defines it: decode both, append, encode. 0 when either does not
 * decode. */
static size_t ref_merge(const uint8_t *a, size_t la, const uint8_t *b, size_t lb, uint8_t *out)
{
    tally_partial p, q;
    if (tally_partial_decode(a, la, &p, NULL, NULL, 0) != TALLY_OK ||
        tally_partial_decode(b, lb, &q, NULL, NULL, 0) != TALLY_OK)
        return 0;
    tally_internal_partial_append(&p, &q);
    return tally_partial_encode(&p, out, TALLY_CODEC_MAX_BYTES);
}

/* Whether x + y reaches 2^1088 in magnitude: after normalising, the value is
 * top * 2^1056 + rest with 0 <= rest < 2^1056. */
static int exact_overflows(const tally_exact *x, const tally_exact *y)
{
    tally_exact t = *x;
    tally_exact_merge(&t, y);
    tally_exact_normalize(&t);
    int64_t top = t.chunk[TALLY_EXACT_CHUNKS - 1], lim = (int64_t)1 << 32;
    int rest = 0;
    for (int i = 0; i < TALLY_EXACT_CHUNKS - 1; i++) rest |= t.chunk[i] != 0;
    return top >= lim || top < -lim || (top == -lim && !rest);
}

/* Whether the merge of two decodable states must be refused: a field that cannot hold the
 * merged value. */
static int must_refuse(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
    tally_partial p, q;
    tally_partial_decode(a, la, &p, NULL, NULL, 0);
    tally_partial_decode(b, lb, &q, NULL, NULL, 0);
    if (p.type != q.type || p.need != q.need || p.omit_nan != q.omit_nan) return 1;
    if (p.n + q.n < p.n) return 1;
    int fl = p.type == TALLY_F32 || p.type == TALLY_F64;
    if (p.need & TALLY_NEED_SUM) {
        if (fl) {
            if (exact_overflows(&p.fsum, &q.fsum)) return 1;
        } else if (p.type == TALLY_I8 || p.type == TALLY_I16 || p.type == TALLY_I32 ||
                   p.type == TALLY_I64) {
            __int128 s;
            if (__builtin_add_overflow(p.isum, q.isum, &s)) return 1;
        } else {
            unsigned __int128 s;
            if (__builtin_add_overflow(p.usum, q.usum, &s)) return 1;
        }
    }
    if ((p.need & TALLY_NEED_SQ) && exact_overflows(&p.fsq, &q.fsq)) return 1;
    return 0;
}

static int g_merged, g_refused;

/* merge_encoded(a, b) against the reference, and its refusals against must_refuse. */
static void check_merge(const uint8_t *a, size_t la, const uint8_t *b, size_t lb, const char *what)
{
    uint8_t m[TALLY_CODEC_MAX_BYTES], r[TALLY_CODEC_MAX_BYTES];
    size_t lm = tally_partial_merge_encoded(a, la, b, lb, m, sizeof m);
    tally_partial p;
    int valid = tally_partial_decode(a, la, &p, NULL, NULL, 0) == TALLY_OK &&
                tally_partial_decode(b, lb, &p, NULL, NULL, 0) == TALLY_OK;
    if (!valid) {
        CHECK(lm == 0, "%s: merged a state the decoder refuses", what);
        return;
    }
    if (must_refuse(a, la, b, lb)) {
        g_refused++;
        CHECK(lm == 0, "%s: merged states whose merge does not fit", what);
        return;
    }
    g_merged++;
    size_t lr = ref_merge(a, la, b, lb, r);
    CHECK(lm == lr && lm > 0 && memcmp(m, r, lm) == 0, "%s: merged bytes (%zu) differ from "
          "decode+append+encode (%zu)", what, lm, lr);
    if (lm > 1) /* a buffer one byte too small: refused, not overrun */
        CHECK(tally_partial_merge_encoded(a, la, b, lb, m, lm - 1) == 0, "%s: cap too small", what);
}

/* States of real data: every type, every op alone and all together, omit_nan, random cuts
 * (empty pieces too); the merge must also give the whole array's results. */
static void merge_real(tally_context *ctx)
{
    for (int t = 0; t < TALLY_TYPE_COUNT; t++) {
        tally_type ty = (tally_type)t;
        int fl = ty == TALLY_F32 || ty == TALLY_F64;
        for (int set = -1; set < TALLY_OP_COUNT; set++) {
            tally_op ops[TALLY_OP_COUNT];
            size_t nops = 0;
            for (int op = 0; op < TALLY_OP_COUNT; op++)
                if ((set < 0 || op == set) && !(fl && op >= TALLY_AND && op <= TALLY_XOR))
                    ops[nops++] = (tally_op)op;
            if (!nops) continue;
            for (int omit = 0; omit <= fl; omit++) {
                uint64_t n = rnd() % 3 == 0 ? rnd() % 5 : rnd() % 9000;
                uint64_t cut = rnd() % 4 == 0 ? (rnd() & 1 ? 0 : n) : rnd() % (n + 1);
                char *x = malloc(n * 8 + 8);
                fill(ty, x, n);
                if (fl && n) { /* infinities of both signs now and then: the sums' flags */
                    if (rnd() % 3 == 0) ((ty == TALLY_F64) ? (void)(((double *)x)[rnd() % n] = INFINITY)
                                                           : (void)(((float *)x)[rnd() % n] = INFINITY));
                    if (rnd() % 3 == 0) ((ty == TALLY_F64) ? (void)(((double *)x)[rnd() % n] = -INFINITY)
                                                           : (void)(((float *)x)[rnd() % n] = -INFINITY));
                }
                uint32_t need = tally_internal_ops_need(ty, ops, nops, omit);
                if (rnd() & 1) need |= TALLY_NEED_SQ;
                tally_partial p, q, w;
                tally_internal_partial_init(&p, ty, need, omit);
                tally_internal_partial_init(&q, ty, need, omit);
                tally_internal_partial_init(&w, ty, need, omit);
                size_t es = tally_type_size(ty);
                tally_status st = tally_internal_accumulate(ctx, x, cut, &p);
                st |= tally_internal_accumulate(ctx, x + cut * es, n - cut, &q);
                st |= tally_internal_accumulate(ctx, x, n, &w);
                CHECK(st == TALLY_OK, "accumulate");
                uint8_t a[TALLY_CODEC_MAX_BYTES], b[TALLY_CODEC_MAX_BYTES], m[TALLY_CODEC_MAX_BYTES];
                size_t la = tally_partial_encode(&p, a, sizeof a), lb = tally_partial_encode(&q, b, sizeof b);
                char what[96];
                snprintf(what, sizeof what, "%s ops %d omit %d n %llu cut %llu", tally_type_name(ty),
                         set, omit, (unsigned long long)n, (unsigned long long)cut);
                check_merge(a, la, b, lb, what);
                size_t lm = tally_partial_merge_encoded(a, la, b, lb, m, sizeof m);
                tally_partial g;
                CHECK(lm && tally_partial_decode(m, lm, &g, NULL, NULL, 0) == TALLY_OK, "%s: decode", what);
                for (size_t i = 0; i < nops; i++) {
                    if (ops[i] == TALLY_PROD && fl) continue; /* per-piece products: partial.h */
                    tally_result r1, r2;
                    tally_internal_partial_result(&w, ops[i], 1, NULL, &r1);
                    tally_internal_partial_result(&g, ops[i], 1, NULL, &r2);
                    if (ops[i] == TALLY_VAR && !(need & TALLY_NEED_SQ)) continue;
                    CHECK(same_result(&r1, &r2) || (r1.value.f64 != r1.value.f64 && r2.value.f64 != r2.value.f64 && r1.status == r2.status),
                          "%s: %s of the merged state differs from the whole array's", what,
                          tally_op_name(ops[i]));
                }
                free(x);
            }
        }
    }
}

static uint64_t rnd_count(void)
{
    switch (rnd() % 10) {
    case 0: return 0;
    case 1: return UINT64_MAX - rnd() % 4;           /* near 2^64: merges overflow the count */
    case 2: return (uint64_t)1 << 63;
    default: return rnd() % 100000;
    }
}

static unsigned __int128 rnd_i128(int sgn)
{
    unsigned __int128 v = ((unsigned __int128)rnd() << 64) | rnd();
    const unsigned __int128 max_i128 = ~(unsigned __int128)0 >> 1;
    switch (rnd() % 5) {
    case 0: return (sgn ? max_i128 : ~(unsigned __int128)0) - rnd() % 3;  /* near the top */
    case 1: return sgn ? max_i128 + 1 + rnd() % 3 : 0;                    /* near the bottom */
    case 2: return v >> (rnd() % 128);
    default: return sgn && (rnd() & 1) ? (unsigned __int128)(-(__int128)(v >> 70)) : v >> 70;
    }
}

/* Random states of one type and set of tracked fields, with every field anywhere in its range
 * (encode writes what it is given; the decoder must accept it). */
static void rnd_state(tally_partial *p, tally_type ty, uint32_t need, int omit)
{
    int fl = ty == TALLY_F32 || ty == TALLY_F64;
    int sgn = ty == TALLY_I8 || ty == TALLY_I16 || ty == TALLY_I32 || ty == TALLY_I64;
    tally_internal_partial_init(p, ty, need, omit);
    p->n = rnd_count();
    p->nans = fl && p->n ? (rnd() % 3 == 0 ? p->n : rnd() % 2 ? rnd() % (p->n + (p->n < UINT64_MAX)) : 0) : 0;
    if (p->nans > p->n) p->nans = p->n;
    if (fl) rnd_exact(&p->fsum);
    else if (sgn) p->isum = (__int128)rnd_i128(1);
    else p->usum = rnd_i128(0);
    rnd_exact(&p->fsq);
    const __int128 cap = (__int128)1 << 63;
    switch (rnd() % 4) {
    case 0: p->iprod = cap; p->uprod = UINT64_MAX; break;
    case 1: p->iprod = -cap; p->uprod = 0; break;
    case 2: p->iprod = (int64_t)rnd() >> (rnd() % 64); p->uprod = rnd() >> (rnd() % 64); break;
    default: p->iprod = (int64_t)(rnd() % 5) - 2; p->uprod = rnd() % 3; break;
    }
    p->prod_zero = (int)(rnd() & 1);
    p->prod_ovf = rnd() % 4 == 0;
    p->fprod = rnd_any_double();
    for (int i = 0; i < TALLY_PROD_LANES; i++) p->lanes[i] = rnd_any_double();
    p->lane_pos = (uint32_t)(rnd() % TALLY_PROD_BLOCK);
    uint64_t keys[] = {0, UINT64_MAX, 1ull << 63, rnd(), rnd() % 4};
    p->kmin = keys[rnd() % 5];
    p->kmax = keys[rnd() % 5];
    int has_val = p->n > p->nans;
    p->imin = (need & TALLY_NEED_ARGMIN) && has_val ? rnd() % p->n : TALLY_NO_INDEX;
    p->imax = (need & TALLY_NEED_ARGMAX) && has_val ? (rnd() & 1 ? p->n - 1 : rnd() % p->n) : TALLY_NO_INDEX;
    p->first_nan = p->nans ? (rnd() & 1 ? p->n - 1 : rnd() % p->n) : TALLY_NO_INDEX;
    p->band = rnd();
    p->bor = rnd();
    p->bxor = rnd();
}

static void merge_adversarial(void)
{
    static const uint32_t needs[] = {
        TALLY_NEED_SUM, TALLY_NEED_SUM | TALLY_NEED_NANS, TALLY_NEED_SQ | TALLY_NEED_SUM,
        TALLY_NEED_PROD, TALLY_NEED_MIN | TALLY_NEED_MAX | TALLY_NEED_NANS,
        TALLY_NEED_ARGMIN | TALLY_NEED_ARGMAX | TALLY_NEED_FIRSTNAN | TALLY_NEED_NANS,
        TALLY_NEED_MIN | TALLY_NEED_ARGMAX, TALLY_NEED_BITS,
        TALLY_NEED_SUM | TALLY_NEED_PROD | TALLY_NEED_MIN | TALLY_NEED_MAX | TALLY_NEED_ARGMIN |
            TALLY_NEED_ARGMAX | TALLY_NEED_BITS | TALLY_NEED_NANS | TALLY_NEED_SQ |
            TALLY_NEED_FIRSTNAN};
    for (int k = 0; k < 60000; k++) {
        tally_type ty = (tally_type)(rnd() % TALLY_TYPE_COUNT);
        int fl = ty == TALLY_F32 || ty == TALLY_F64;
        uint32_t need = needs[rnd() % (sizeof needs / sizeof needs[0])];
        if (!fl) need &= ~(uint32_t)(TALLY_NEED_NANS | TALLY_NEED_FIRSTNAN);
        if (fl) need &= ~(uint32_t)TALLY_NEED_BITS;
        if (!need) need = TALLY_NEED_SUM;
        int omit = fl && (rnd() & 1);
        tally_partial p, q;
        rnd_state(&p, ty, need, omit);
        rnd_state(&q, ty, need, omit);
        if (rnd() % 8 == 0) q = p; /* a state merged with itself: x + x, equal keys */
        if (rnd() % 8 == 0) { /* cancellation: q's sums are p's negated */
            for (int i = 0; i < TALLY_EXACT_CHUNKS; i++) {
                q.fsum.chunk[i] = -p.fsum.chunk[i];
                q.fsq.chunk[i] = -p.fsq.chunk[i];
            }
            q.isum = (__int128)(0 - (unsigned __int128)p.isum); /* wraps at -2^127 */
        }
        uint8_t a[TALLY_CODEC_MAX_BYTES], b[TALLY_CODEC_MAX_BYTES];
        size_t la = tally_partial_encode(&p, a, sizeof a), lb = tally_partial_encode(&q, b, sizeof b);
        tally_partial d;
        CHECK(tally_partial_decode(a, la, &d, NULL, NULL, 0) == TALLY_OK &&
              tally_partial_decode(b, lb, &d, NULL, NULL, 0) == TALLY_OK, "random state %d does not decode", k);
        char what[64];
        snprintf(what, sizeof what, "adversarial %d (%s, need %#x)", k, tally_type_name(ty), need);
        check_merge(a, la, b, lb, what);
        if (k % 10 == 0) { /* corrupted or truncated: refused exactly when the decoder refuses */
            uint8_t c[TALLY_CODEC_MAX_BYTES];
            memcpy(c, b, lb);
            c[rnd() % lb] ^= (uint8_t)(1u << (rnd() % 8));
            check_merge(a, la, c, lb, what);
            check_merge(c, lb, a, la, what);
            size_t cut = rnd() % lb;
            check_merge(a, la, b, cut, what);
            check_merge(b, cut, a, la, what);
        }
    }
}

/* States that differ in type, tracked fields or omit_nan do not merge. */
static void merge_refusals(tally_context *ctx)
{
    double x[3] = {1, 2, 3};
    tally_op sum = TALLY_SUM, mn = TALLY_MIN;
    tally_partial p[4];
    tally_internal_partial_init(&p[0], TALLY_F64, tally_internal_ops_need(TALLY_F64, &sum, 1, 0), 0);
    tally_internal_partial_init(&p[1], TALLY_F64, tally_internal_ops_need(TALLY_F64, &mn, 1, 0), 0);
    tally_internal_partial_init(&p[2], TALLY_F64, tally_internal_ops_need(TALLY_F64, &sum, 1, 1), 1);
    tally_internal_partial_init(&p[3], TALLY_I64, tally_internal_ops_need(TALLY_I64, &sum, 1, 0), 0);
    uint8_t e[4][TALLY_CODEC_MAX_BYTES], m[TALLY_CODEC_MAX_BYTES];
    size_t l[4];
    for (int i = 0; i < 4; i++) {
        tally_internal_accumulate(ctx, x, i < 3 ? 3 : 0, &p[i]);
        l[i] = tally_partial_encode(&p[i], e[i], sizeof e[i]);
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            CHECK((tally_partial_merge_encoded(e[i], l[i], e[j], l[j], m, sizeof m) != 0) == (i == j),
                  "states %d and %d: merged %s", i, j, i == j ? "nothing" : "across a difference");
    CHECK(tally_partial_merge_encoded(NULL, 0, e[0], l[0], m, sizeof m) == 0, "NULL state");
}

int main(void)
{
    g_check_out = stderr;
    g_check_limit = 20;
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    o.threads = 2;
    tally_context *ctx;
    if (tally_create(&ctx, &o) != TALLY_OK) return 1;
    round_trips(ctx);
    layout(ctx);
    append(ctx);
    exact_digits();
    merge_real(ctx);
    merge_adversarial();
    merge_refusals(ctx);
    tally_destroy(ctx);
    printf("test_codec: merges checked %d, refused as out of range %d\n", g_merged, g_refused);
    printf("test_codec: %d checks, %d failed\n", g_pass + g_fail, g_fail);
    return g_fail ? 1 : 0;
}
