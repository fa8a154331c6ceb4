/* The one table of element types and the one table of operations. Everything per type or per op
 * (names, sizes, result types, identities, the ops' needs, kernel tables, dispatch switches, the
 * CUDA translation units, the tests' loops) is generated from these rows, so a new type is one
 * row here plus its kernels (docs/architecture.md has the recipe). Plain C, also read by the
 * CUDA code and by CMake (src/cuda/CMakeLists.txt parses the type rows). */
#ifndef TALLY_CORE_TYPES_H
#define TALLY_CORE_TYPES_H

#include <math.h>
#include <stdint.h>
#include "tally.h"

/* ---- types ---------------------------------------------------------------------------------
 * TALLY_TYPE_ROWS(F, ctx) calls F(ctx, <row>) for every row; TALLY_TYPES(X) calls X(<row>).
 * Row: (ENUM, name, ctype, is_int, is_signed, wide_ctype)
 * ENUM: TALLY_<ENUM> in tally.h (the ABI: numbered there, in this order); is_int, is_signed:
 * 1 or 0 (floats count as signed); wide_ctype: the reduce result type of sum, prod, min, max,
 * and, or, xor (int64_t, uint64_t or double). */
#define TALLY_TYPE_ROWS(TYPE, ctx)                                                                 \
    TYPE(ctx, I8,  i8,  int8_t,   1, 1, int64_t)                                                   \
    TYPE(ctx, U8,  u8,  uint8_t,  1, 0, uint64_t)                                                  \
    TYPE(ctx, I16, i16, int16_t,  1, 1, int64_t)                                                   \
    TYPE(ctx, U16, u16, uint16_t, 1, 0, uint64_t)                                                  \
    TYPE(ctx, I32, i32, int32_t,  1, 1, int64_t)                                                   \
    TYPE(ctx, U32, u32, uint32_t, 1, 0, uint64_t)                                                  \
    TYPE(ctx, I64, i64, int64_t,  1, 1, int64_t)                                                   \
    TYPE(ctx, U64, u64, uint64_t, 1, 0, uint64_t)                                                  \
    TYPE(ctx, F32, f32, float,    0, 1, double)                                                    \
    TYPE(ctx, F64, f64, double,   0, 1, double)

/* Every type, the integer types, the float types: X(ENUM, name, ctype, is_int, is_signed, wide). */
#define TALLY_TYPES(X) TALLY_TYPE_ROWS(TALLY_ROW_, X)
#define TALLY_INT_TYPES(X) TALLY_TYPE_ROWS(TALLY_ROW_IF_INT_, X)
#define TALLY_FLOAT_TYPES(X) TALLY_TYPE_ROWS(TALLY_ROW_IF_FLOAT_, X)

/* ---- operations ----------------------------------------------------------------------------
 * TALLY_OP_ROWS(F, ctx) calls F(ctx, <row>) for every row; TALLY_OPS(X) calls X(<row>).
 * Row: (ENUM, name, scan_ok, float_ok, result, needs, identity)
 * scan_ok: 1 for the ops that also scan (they are tally_op 0 .. TALLY_SCAN_OP_COUNT - 1);
 * float_ok: 0 for the bitwise ops (integers only); result: the reduce result's type, WIDE (the
 * input type's wide_ctype: i64, u64 or f64), U64 or F64; needs: what the op needs from the
 * data, TALLY_FEAT_* (a backend maps these onto its own kernels); identity: the scan identity
 * (TALLY_IDENTITY below), NONE for reduce-only ops. */
#define TALLY_OP_ROWS(OP, ctx)                                                                     \
    OP(ctx, SUM,    sum,    1, 1, WIDE, TALLY_FEAT_SUM,                         ZERO)              \
    OP(ctx, PROD,   prod,   1, 1, WIDE, TALLY_FEAT_PROD,                        ONE)               \
    OP(ctx, MIN,    min,    1, 1, WIDE, TALLY_FEAT_MIN,                         TOP)               \
    OP(ctx, MAX,    max,    1, 1, WIDE, TALLY_FEAT_MAX,                         BOTTOM)            \
    OP(ctx, AND,    and,    1, 0, WIDE, TALLY_FEAT_BITS,                        ONES)              \
    OP(ctx, OR,     or,     1, 0, WIDE, TALLY_FEAT_BITS,                        ZERO)              \
    OP(ctx, XOR,    xor,    1, 0, WIDE, TALLY_FEAT_BITS,                        ZERO)              \
    OP(ctx, COUNT,  count,  0, 1, U64,  TALLY_FEAT_COUNT,                       NONE)              \
    OP(ctx, ARGMIN, argmin, 0, 1, WIDE, TALLY_FEAT_MIN | TALLY_FEAT_ARGMIN,     NONE)              \
    OP(ctx, ARGMAX, argmax, 0, 1, WIDE, TALLY_FEAT_MAX | TALLY_FEAT_ARGMAX,     NONE)              \
    OP(ctx, MEAN,   mean,   0, 1, F64,  TALLY_FEAT_SUM | TALLY_FEAT_MEAN,       NONE)              \
    OP(ctx, VAR,    var,    0, 1, F64,  TALLY_FEAT_SUM | TALLY_FEAT_MEAN | TALLY_FEAT_VAR, NONE)

/* Every op, the scan ops: X(ENUM, name, scan_ok, float_ok, result, needs, identity). */
#define TALLY_OPS(X) TALLY_OP_ROWS(TALLY_ROW_, X)
#define TALLY_SCAN_OPS(X) TALLY_OP_ROWS(TALLY_ROW_IF_SCAN_, X)
#define TALLY_SCAN_OP_COUNT 7

/* What ops need from one pass over the data (the needs column). MEAN: the count of the values
 * summed (n, or the non-NaN ones with omit_nan); VAR: a second pass, the exact sum of squared
 * deviations from the mean (streams keep the sum of squares instead). */
enum {
    TALLY_FEAT_SUM = 1u << 0,
    TALLY_FEAT_PROD = 1u << 1,
    TALLY_FEAT_MIN = 1u << 2,
    TALLY_FEAT_MAX = 1u << 3,
    TALLY_FEAT_ARGMIN = 1u << 4,
    TALLY_FEAT_ARGMAX = 1u << 5,
    TALLY_FEAT_BITS = 1u << 6,
    TALLY_FEAT_COUNT = 1u << 7,
    TALLY_FEAT_MEAN = 1u << 8,
    TALLY_FEAT_VAR = 1u << 9
};

/* ---- identities ----------------------------------------------------------------------------
 * TALLY_IDENTITY(identity, C, is_int, is_signed): the identity column's value in type C as a
 * constant expression (C and C++, host and device). ZERO: 0, and -0.0 for floats (-0 + x is x
 * for every x, -0 included); ONE; TOP: the largest value (+inf); BOTTOM: the smallest (-inf);
 * ONES: every bit set (integers only); NONE: reduce-only ops, 0. */
#define TALLY_IDENTITY(identity, C, is_int, is_signed) TALLY_ID_##identity##_##is_int##is_signed(C)
#define TALLY_ID_ZERO_11(C) ((C)0)
#define TALLY_ID_ZERO_10(C) ((C)0)
#define TALLY_ID_ZERO_01(C) ((C)-0.0)
#define TALLY_ID_ONE_11(C) ((C)1)
#define TALLY_ID_ONE_10(C) ((C)1)
#define TALLY_ID_ONE_01(C) ((C)1)
#define TALLY_ID_TOP_11(C) ((C)((UINT64_C(1) << (8 * sizeof(C) - 1)) - 1))
#define TALLY_ID_TOP_10(C) ((C)UINT64_MAX)
#define TALLY_ID_TOP_01(C) ((C)INFINITY)
#define TALLY_ID_BOTTOM_11(C) ((C)(-(int64_t)((UINT64_C(1) << (8 * sizeof(C) - 1)) - 1) - 1))
#define TALLY_ID_BOTTOM_10(C) ((C)0)
#define TALLY_ID_BOTTOM_01(C) ((C)-INFINITY)
#define TALLY_ID_ONES_11(C) ((C)-1)
#define TALLY_ID_ONES_10(C) ((C)UINT64_MAX)
#define TALLY_ID_ONES_01(C) ((C)0) /* no bitwise op takes floats */
#define TALLY_ID_NONE_11(C) ((C)0)
#define TALLY_ID_NONE_10(C) ((C)0)
#define TALLY_ID_NONE_01(C) ((C)0)
/* The same with the type's columns as one parenthesised group: TALLY_IDENTITY_OF(ZERO,
 * (int8_t, 1, 1)); for op rows generated inside a type row (TALLY_OP_ROWS(F, (C, i, s))). */
#define TALLY_IDENTITY_OF(identity, type_cols) TALLY_IDENTITY_OF_(identity, TALLY_UNPACK_ type_cols)
#define TALLY_IDENTITY_OF_(...) TALLY_IDENTITY(__VA_ARGS__)

/* ---- row filters (implementation) --------------------------------------------------------- */
#define TALLY_ROW_(X, ...) X(__VA_ARGS__)
#define TALLY_ROW_IF_INT_(X, E, name, C, is_int, ...)                                              \
    TALLY_KEEP_IF_##is_int(X(E, name, C, is_int, __VA_ARGS__))
#define TALLY_ROW_IF_FLOAT_(X, E, name, C, is_int, ...)                                            \
    TALLY_KEEP_IF_NOT_##is_int(X(E, name, C, is_int, __VA_ARGS__))
#define TALLY_ROW_IF_SCAN_(X, E, name, scan_ok, ...)                                               \
    TALLY_KEEP_IF_##scan_ok(X(E, name, scan_ok, __VA_ARGS__))
#define TALLY_KEEP_IF_1(...) __VA_ARGS__
#define TALLY_KEEP_IF_0(...)
#define TALLY_KEEP_IF_NOT_1(...)
#define TALLY_KEEP_IF_NOT_0(...) __VA_ARGS__
#define TALLY_UNPACK_(...) __VA_ARGS__

/* ---- tables and helpers (status.c) -------------------------------------------------------- */
#ifdef __cplusplus
extern "C" {
#endif

typedef struct tally_type_info {
    const char *name;
    uint8_t size;
    uint8_t is_int;
    uint8_t is_signed;
} tally_type_info;

typedef struct tally_op_info {
    const char *name;
    uint8_t scan_ok;
    uint8_t float_ok;
    uint32_t needs; /* TALLY_FEAT_* */
} tally_op_info;

extern const tally_type_info tally_type_table[TALLY_TYPE_COUNT];
extern const tally_op_info tally_op_table[TALLY_OP_COUNT];

static inline int tally_type_valid(int t) { return t >= 0 && t < TALLY_TYPE_COUNT; }
static inline int tally_op_valid(int op) { return op >= 0 && op < TALLY_OP_COUNT; }
static inline int tally_type_is_float(tally_type t) { return !tally_type_table[t].is_int; }
static inline int tally_type_is_signed_int(tally_type t)
{
    return tally_type_table[t].is_int && tally_type_table[t].is_signed;
}
/* The result type of min/max/and/or/xor/sum/prod for input type t (the wide column). */
static inline tally_type tally_wide_type(tally_type t)
{
    return tally_type_is_float(t) ? TALLY_F64 : tally_type_is_signed_int(t) ? TALLY_I64 : TALLY_U64;
}
/* The type of op's reduce result for input type t (the result column). */
tally_type tally_result_type(tally_op op, tally_type t);
/* The union of the needs of ops[0 .. nops - 1] (valid ops). */
uint32_t tally_ops_needs(const tally_op *ops, size_t nops);
/* The scan identity of op (a scan op) for type t, as the element's bits in the low bytes. */
uint64_t tally_scan_identity_bits(tally_op op, tally_type t);
/* Where a scan starts, as the element's bits: the initial value converted to the type
 * (has_init: an exclusive scan's init, or, from inside the library, the carry of the data
 * before an inclusive scan's piece), +0.0 for an exclusive float sum without one (so that
 * out[0] is +0), else the identity. The same on every backend. */
uint64_t tally_scan_start_bits(tally_op op, tally_type t, const tally_scan_options *opts);

#ifdef __cplusplus
}
#endif
#endif
