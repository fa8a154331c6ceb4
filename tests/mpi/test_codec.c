/* The partial-state encoding (src/core/partial_codec.h), without MPI: round trips of states of
 * every type made by a CPU context (decode(encode(p)) gives the same results and re-encodes to
 * the same bytes), the version 1 layout at known offsets (so a change of format is a test
 * failure), truncated and corrupted encodings (an error or a valid state, never a crash: this
 * test runs under the sanitizers too), and the index shift of tally_internal_partial_append. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/internal.h"

static int g_fail, g_checks;
#define CHECK(cond, ...)                                                                      \
    do {                                                                                      \
        g_checks++;                                                                           \
        if (!(cond) && g_fail++ < 20) {                                                       \
            fprintf(stderr, "test_codec:%d: ", __LINE__);                                     \
            fprintf(stderr, __VA_ARGS__);                                                     \
            fprintf(stderr, "\n");                                                            \
        }                                                                                     \
    } while (0)

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

int main(void)
{
    tally_options o;
    tally_options_init(&o);
    o.backend = TALLY_BACKEND_CPU;
    o.threads = 2;
    tally_context *ctx;
    if (tally_create(&ctx, &o) != TALLY_OK) return 1;
    round_trips(ctx);
    layout(ctx);
    append(ctx);
    tally_destroy(ctx);
    printf("test_codec: %d checks, %d failed\n", g_checks, g_fail);
    return g_fail ? 1 : 0;
}
