/* The one list of element types and the one list of operations. Everything per type or per op
 * (names, sizes, result types, kernel tables, dispatch switches) is generated from these lists,
 * so a new type is one line here plus its kernels. */
#ifndef TALLY_CORE_TYPES_H
#define TALLY_CORE_TYPES_H

#include <stdint.h>
#include "tally.h"

/* X(ENUM, name, ctype, is_int, is_signed, wide_ctype)
 * wide_ctype: the reduce result type for min/max/and/or/xor (i64, u64 or double). */
#define TALLY_TYPES(X)                                  \
    X(I8,  i8,  int8_t,   1, 1, int64_t)                \
    X(U8,  u8,  uint8_t,  1, 0, uint64_t)               \
    X(I16, i16, int16_t,  1, 1, int64_t)                \
    X(U16, u16, uint16_t, 1, 0, uint64_t)               \
    X(I32, i32, int32_t,  1, 1, int64_t)                \
    X(U32, u32, uint32_t, 1, 0, uint64_t)               \
    X(I64, i64, int64_t,  1, 1, int64_t)                \
    X(U64, u64, uint64_t, 1, 0, uint64_t)               \
    X(F32, f32, float,    0, 1, double)                 \
    X(F64, f64, double,   0, 1, double)

/* Integer types only (for kernels that make sense on integers alone). */
#define TALLY_INT_TYPES(X)                              \
    X(I8,  i8,  int8_t,   1, 1, int64_t)                \
    X(U8,  u8,  uint8_t,  1, 0, uint64_t)               \
    X(I16, i16, int16_t,  1, 1, int64_t)                \
    X(U16, u16, uint16_t, 1, 0, uint64_t)               \
    X(I32, i32, int32_t,  1, 1, int64_t)                \
    X(U32, u32, uint32_t, 1, 0, uint64_t)               \
    X(I64, i64, int64_t,  1, 1, int64_t)                \
    X(U64, u64, uint64_t, 1, 0, uint64_t)

#define TALLY_FLOAT_TYPES(X)                            \
    X(F32, f32, float,    0, 1, double)                 \
    X(F64, f64, double,   0, 1, double)

/* X(ENUM, name, scan_ok, float_ok) */
#define TALLY_OPS(X)             \
    X(SUM,    sum,    1, 1)      \
    X(PROD,   prod,   1, 1)      \
    X(MIN,    min,    1, 1)      \
    X(MAX,    max,    1, 1)      \
    X(AND,    and,    1, 0)      \
    X(OR,     or,     1, 0)      \
    X(XOR,    xor,    1, 0)      \
    X(COUNT,  count,  0, 1)      \
    X(ARGMIN, argmin, 0, 1)      \
    X(ARGMAX, argmax, 0, 1)      \
    X(MEAN,   mean,   0, 1)      \
    X(VAR,    var,    0, 1)

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
} tally_op_info;

extern const tally_type_info tally_type_table[TALLY_TYPE_COUNT];
extern const tally_op_info tally_op_table[TALLY_OP_COUNT];

static inline int tally_type_valid(int t) { return t >= 0 && t < TALLY_TYPE_COUNT; }
static inline int tally_op_valid(int op) { return op >= 0 && op < TALLY_OP_COUNT; }
static inline int tally_type_is_float(tally_type t) { return t == TALLY_F32 || t == TALLY_F64; }
static inline int tally_type_is_signed_int(tally_type t)
{
    return t == TALLY_I8 || t == TALLY_I16 || t == TALLY_I32 || t == TALLY_I64;
}
/* The result type of min/max/and/or/xor/sum/prod for input type t. */
static inline tally_type tally_wide_type(tally_type t)
{
    return tally_type_is_float(t) ? TALLY_F64 : tally_type_is_signed_int(t) ? TALLY_I64 : TALLY_U64;
}

#endif
