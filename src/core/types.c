/* The type and op tables of types.h, and what is derived from them at run time. */
#include <string.h>
#include "core/types.h"

const tally_type_info tally_type_table[TALLY_TYPE_COUNT] = {
#define X(E, name, C, is_int, is_signed, W)                                                      \
    [TALLY_##E] = {#name, (uint8_t)sizeof(C), is_int, is_signed},
    TALLY_TYPES(X)
#undef X
};

const tally_op_info tally_op_table[TALLY_OP_COUNT] = {
#define X(E, name, scan_ok, float_ok, result, needs, identity)                                   \
    [TALLY_##E] = {#name, scan_ok, float_ok, needs},
    TALLY_OPS(X)
#undef X
};

/* the scan ops are the first ones */
#define X(E, name, scan_ok, float_ok, result, needs, identity) +1
_Static_assert(0 TALLY_SCAN_OPS(X) == TALLY_SCAN_OP_COUNT, "TALLY_SCAN_OP_COUNT");
#undef X
#define X(E, name, scan_ok, float_ok, result, needs, identity)                                   \
    _Static_assert(!scan_ok || TALLY_##E < TALLY_SCAN_OP_COUNT, "scan ops come first");
TALLY_OPS(X)
#undef X

tally_type tally_result_type(tally_op op, tally_type t)
{
#define RESULT_WIDE tally_wide_type(t)
#define RESULT_U64 TALLY_U64
#define RESULT_F64 TALLY_F64
    switch (op) {
#define X(E, name, scan_ok, float_ok, result, needs, identity)                                   \
    case TALLY_##E: return RESULT_##result;
        TALLY_OPS(X)
#undef X
    }
    return tally_wide_type(t);
}

uint32_t tally_ops_needs(const tally_op *ops, size_t nops)
{
    uint32_t needs = 0;
    for (size_t i = 0; i < nops; i++) needs |= tally_op_table[ops[i]].needs;
    return needs;
}

/* One function per type: the identities of the scan ops in that type (an op row generated
 * inside a type row, with the type's columns as its context). */
#define IDENTITY_CASE(type_cols, E, name, scan_ok, float_ok, result, needs, identity)          \
    case TALLY_##E: {                                                                        \
        const TYPE_OF_(type_cols) v = TALLY_IDENTITY_OF(identity, type_cols);  \
        memcpy(&bits, &v, sizeof v);                                                         \
        break;                                                                               \
    }
#define TYPE_OF_(type_cols) FIRST_COL_ type_cols
#define FIRST_COL_(C, ...) C
#define X(E, name, C, is_int, is_signed, W)                                                      \
    static uint64_t identity_bits_##name(tally_op op)                                            \
    {                                                                                            \
        uint64_t bits = 0;                                                                       \
        switch (op) {                                                                            \
            TALLY_OP_ROWS(IDENTITY_CASE, (C, is_int, is_signed))                                 \
        }                                                                                        \
        return bits;                                                                             \
    }
TALLY_TYPES(X)
#undef X

uint64_t tally_scan_identity_bits(tally_op op, tally_type t)
{
    switch (t) {
#define X(E, name, C, is_int, is_signed, W) case TALLY_##E: return identity_bits_##name(op);
        TALLY_TYPES(X)
#undef X
    }
    return 0;
}

uint64_t tally_scan_start_bits(tally_op op, tally_type t, const tally_scan_options *opts)
{
    uint64_t bits = 0;
    if (opts && opts->has_init) { /* inclusive: only from inside the library (libtally_mpi) */
        switch (t) {
#define X(E, name, C, is_int, is_signed, W)                                                      \
    case TALLY_##E: {                                                                            \
        const C v = is_int ? (is_signed ? (C)opts->init.i64 : (C)opts->init.u64)               \
                           : (C)opts->init.f64;                                                  \
        memcpy(&bits, &v, sizeof v);                                                             \
        break;                                                                                   \
    }
            TALLY_TYPES(X)
#undef X
        }
        return bits;
    }
    if (opts && opts->exclusive && op == TALLY_SUM && tally_type_is_float(t)) return 0; /* +0 */
    return tally_scan_identity_bits(op, t);
}
