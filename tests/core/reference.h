/* The core tests' view of the exact references (tests/support/exact_reference.h): cmocka
 * assertions over them, and the test data. */
#ifndef TALLY_TEST_REFERENCE_H
#define TALLY_TEST_REFERENCE_H

#include "common.h"

#define assert_result(got, want, ...)                                                         \
    do {                                                                                      \
        if (!result_matches((got), (want))) {                                                 \
            char g_[128], w_[128];                                                            \
            describe_result(g_, sizeof g_, (got));                                            \
            describe_result(w_, sizeof w_, (want));                                           \
            print_error("%s: got %s, want %s: ", tally_op_name((want)->op), g_, w_);          \
            print_error(__VA_ARGS__);                                                         \
            print_error("\n");                                                                \
            fail();                                                                           \
        }                                                                                     \
    } while (0)

/* ---- test data ---------------------------------------------------------------------------- */
enum data_kind { DATA_RANDOM, DATA_PROD, DATA_SPECIAL };

/* Fills x with n elements of type t. RANDOM: integers over varied magnitudes (64-bit ones kept
 * below 2^49 so sums fit), floats over 80 binades with exact cancellations and signed zeros;
 * PROD: values whose products stay in range; SPECIAL: floats with NaN, inf, -0. */
static inline void fill(tally_type t, void *x, uint64_t n, enum data_kind kind)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        if (t_is_float(t)) {
            double v;
            if (kind == DATA_PROD) {
                v = 1.0 + ((double)(int64_t)(r >> 40) - (double)(1 << 23)) * 0x1p-44;
            } else {
                v = (1.0 + rnd_unit()) * ldexp(1.0, (int)(r % 80) - 40);
                if (r & (1ull << 40)) v = -v;
                if ((r >> 41) % 16 == 0 && i > 0) v = -get_f(t, x, i - 1); /* cancellation */
                if ((r >> 45) % 64 == 0) v = (r >> 51) & 1 ? -0.0 : 0.0;
                if (kind == DATA_SPECIAL) {
                    uint64_t s = (r >> 52) % 97;
                    if (s == 0) v = NAN;
                    else if (s == 1) v = INFINITY;
                    else if (s == 2) v = -INFINITY;
                    else if (s < 8) v = (r >> 58) & 1 ? -0.0 : 0.0;
                }
            }
            if (t == TALLY_F32) ((float *)x)[i] = (float)v;
            else ((double *)x)[i] = v;
        } else {
            int64_t v;
            if (kind == DATA_PROD) {
                uint64_t s = (r >> 32) % 4096;
                v = s == 0 ? 2 : s == 1 ? 3 : (r & 1) ? 1 : -1;
                if (!t_is_signed(t)) v = v < 0 ? 1 : v;
            } else {
                v = (int64_t)(r >> ((r >> 58) % 64)); /* varied magnitudes */
                if (tally_type_size(t) == 8) v >>= 15;
                if (t_is_signed(t) && (r & 1)) v = -v;
            }
            switch (t) {
            case TALLY_I8: ((int8_t *)x)[i] = (int8_t)v; break;
            case TALLY_U8: ((uint8_t *)x)[i] = (uint8_t)v; break;
            case TALLY_I16: ((int16_t *)x)[i] = (int16_t)v; break;
            case TALLY_U16: ((uint16_t *)x)[i] = (uint16_t)v; break;
            case TALLY_I32: ((int32_t *)x)[i] = (int32_t)v; break;
            case TALLY_U32: ((uint32_t *)x)[i] = (uint32_t)v; break;
            case TALLY_I64: ((int64_t *)x)[i] = v; break;
            case TALLY_U64: ((uint64_t *)x)[i] = (uint64_t)v; break;
            default: break;
            }
        }
    }
}

#endif
