/* Static names and messages: status codes, types, ops, backends, ISA paths (the type and op
 * tables themselves: types.c). */
#include "tally.h"
#include "core/types.h"

const char *tally_version(void)
{
#define TALLY_STR2(x) #x
#define TALLY_STR(x) TALLY_STR2(x)
    return TALLY_STR(TALLY_VERSION_MAJOR) "." TALLY_STR(TALLY_VERSION_MINOR) "." TALLY_STR(
        TALLY_VERSION_PATCH);
}

/* X(ENUM, message) */
#define TALLY_STATUSES(X)                                                                     \
    X(TALLY_OK, "success")                                                                    \
    X(TALLY_ERR_INVALID_ARGUMENT, "invalid argument")                                         \
    X(TALLY_ERR_UNKNOWN_OP, "unknown operation")                                              \
    X(TALLY_ERR_UNKNOWN_TYPE, "unknown element type")                                         \
    X(TALLY_ERR_UNSUPPORTED, "operation not supported for this type or call")                 \
    X(TALLY_ERR_OVERLAP, "output overlaps input (only out == in is allowed)")                 \
    X(TALLY_ERR_EMPTY, "empty input: the result is undefined for zero elements")              \
    X(TALLY_ERR_OVERFLOW, "integer overflow: the exact result does not fit the result type")  \
    X(TALLY_ERR_OUT_OF_MEMORY, "out of memory")                                               \
    X(TALLY_ERR_BACKEND_UNAVAILABLE, "backend unavailable (not built, no device or no driver)") \
    X(TALLY_ERR_BACKEND_FAILURE, "backend failure at run time")                               \
    X(TALLY_ERR_DOMAIN, "domain error: variance needs more elements than ddof")

static const char *const status_names[TALLY_STATUS_COUNT] = {
#define X(E, msg) [E] = #E,
    TALLY_STATUSES(X)
#undef X
};
static const char *const status_strings[TALLY_STATUS_COUNT] = {
#define X(E, msg) [E] = msg,
    TALLY_STATUSES(X)
#undef X
};

const char *tally_status_name(tally_status s)
{
    if ((int)s < 0 || (int)s >= TALLY_STATUS_COUNT) return "TALLY_UNKNOWN_STATUS";
    return status_names[s];
}

const char *tally_status_string(tally_status s)
{
    if ((int)s < 0 || (int)s >= TALLY_STATUS_COUNT) return "unknown status code";
    return status_strings[s];
}

const char *tally_type_name(tally_type t)
{
    return tally_type_valid((int)t) ? tally_type_table[t].name : NULL;
}

size_t tally_type_size(tally_type t)
{
    return tally_type_valid((int)t) ? tally_type_table[t].size : 0;
}

const char *tally_op_name(tally_op op)
{
    return tally_op_valid((int)op) ? tally_op_table[op].name : NULL;
}

const char *tally_backend_name(tally_backend_kind kind)
{
    static const char *const names[TALLY_BACKEND_KIND_COUNT] = {"auto", "cpu", "cuda", "vulkan"};
    if ((int)kind < 0 || (int)kind >= TALLY_BACKEND_KIND_COUNT) return NULL;
    return names[kind];
}

const char *tally_isa_name(tally_isa isa)
{
    switch (isa) {
    case TALLY_ISA_AUTO: return "auto";
    case TALLY_ISA_SCALAR: return "scalar";
    case TALLY_ISA_AVX2: return "avx2";
    case TALLY_ISA_AVX512: return "avx512";
    }
    return NULL;
}
