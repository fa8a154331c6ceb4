/* The mergeable state of every reduction: what one thread (or one stream) has seen of a piece
 * of the data. Partials of consecutive pieces merge in index order into the partial of their
 * concatenation, exactly (sums are exact integers or superaccumulators), so the final results
 * cannot depend on how the data was split. The one exception is the float product, which is
 * not associative: its fixed evaluation order is kept with per-block products (see
 * TALLY_PROD_BLOCK) and a lane state for a block that is still open. */
#ifndef TALLY_CORE_PARTIAL_H
#define TALLY_CORE_PARTIAL_H

#include <stdint.h>
#include <string.h>
#include "tally.h"
#include "core/exact_sum.h"

/* What a partial must track (a set of ops maps onto these). */
enum {
    TALLY_NEED_SUM = 1u << 0,    /* isum/usum (integers) or fsum (floats) */
    TALLY_NEED_PROD = 1u << 1,   /* iprod/uprod or fprod */
    TALLY_NEED_MIN = 1u << 2,    /* kmin */
    TALLY_NEED_MAX = 1u << 3,    /* kmax */
    TALLY_NEED_ARGMIN = 1u << 4, /* imin (+ kmin) */
    TALLY_NEED_ARGMAX = 1u << 5, /* imax (+ kmax) */
    TALLY_NEED_BITS = 1u << 6,   /* band/bor/bxor */
    TALLY_NEED_NANS = 1u << 7,   /* nans (floats) */
    TALLY_NEED_SQ = 1u << 8,     /* fsq: exact sum of x^2 (streaming variance) */
    TALLY_NEED_FIRSTNAN = 1u << 9 /* first_nan (argmin/argmax without omit_nan) */
};

/* Float products: the product of each block of TALLY_PROD_BLOCK elements (blocks counted from
 * the first element) is formed in 8 lanes (element j of the block goes to lane j % 8), the lanes
 * are multiplied in order 0..7, and the block products are multiplied left to right. */
#define TALLY_PROD_BLOCK 4096u
#define TALLY_PROD_LANES 8

#define TALLY_NO_INDEX UINT64_MAX

typedef struct tally_partial {
    uint32_t need;        /* TALLY_NEED_* */
    int omit_nan;
    tally_type type;
    uint64_t n;           /* elements seen */
    uint64_t nans;        /* NaN elements seen (with TALLY_NEED_NANS) */
    __int128 isum;                 /* signed integer sum */
    unsigned __int128 usum;        /* unsigned integer sum */
    __int128 iprod;                /* |iprod| <= 2^63 unless prod_ovf */
    unsigned __int128 uprod;       /* uprod <= 2^64-1 unless prod_ovf */
    int prod_zero, prod_ovf;
    double fprod;                  /* product of the closed blocks */
    double lanes[TALLY_PROD_LANES];/* the open block */
    uint32_t lane_pos;             /* elements in the open block */
    uint64_t kmin, kmax;           /* order keys (tally_key_*), valid when some non-NaN was seen */
    uint64_t imin, imax;           /* global index of the first kmin / kmax */
    uint64_t first_nan;            /* global index of the first NaN, or TALLY_NO_INDEX */
    uint64_t band, bor, bxor;      /* 64-bit words of elements; folded to the element width */
    tally_exact fsum;
    tally_exact fsq;
} tally_partial;

/* Order keys: unsigned 64-bit numbers ordered like the values (for floats: -inf < ... < -0 <
 * +0 < ... < +inf). NaN has no key: NaNs are counted aside. */
static inline uint64_t tally_key_from_i64(int64_t v) { return (uint64_t)v ^ (1ull << 63); }
static inline int64_t tally_key_to_i64(uint64_t k) { return (int64_t)(k ^ (1ull << 63)); }
static inline uint64_t tally_key_from_f64(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return (b >> 63) ? ~b : b | (1ull << 63);
}
static inline double tally_key_to_f64(uint64_t k)
{
    uint64_t b = (k >> 63) ? k & ~(1ull << 63) : ~k;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* The needs of a set of ops (for var in a one-shot reduce: sum + nans; the streaming variance
 * adds TALLY_NEED_SQ itself). */
uint32_t tally_ops_need(tally_type type, const tally_op *ops, size_t nops, int omit_nan);

/* Resets p to the state of zero elements. Only the members that need asks for are set. */
void tally_partial_init(tally_partial *p, tally_type type, uint32_t need, int omit_nan);

/* dst := dst followed by src (src covers the elements right after dst's). Float products are not
 * merged here (see TALLY_PROD_BLOCK). Indices in src must already be global. */
void tally_partial_merge(tally_partial *dst, const tally_partial *src);

/* Float product: feeds n elements of a (possibly open) block sequentially into p's lanes,
 * closing blocks as they fill. */
void tally_partial_prod_feed(tally_partial *p, const void *data, uint64_t n);
/* Float product: appends one closed block's product. */
static inline void tally_partial_prod_block(tally_partial *p, double block_product)
{
    p->fprod *= block_product;
}
/* The product of a block's lanes, in the fixed order. */
double tally_prod_lanes(const double *lanes);

/* Fills r for op from p. sqdev: the exact sum of squared deviations from the mean, for
 * TALLY_VAR after a second pass; NULL to derive the variance from p->fsq (streams).
 * Returns r->status. */
tally_status tally_partial_result(const tally_partial *p, tally_op op, int ddof,
                                  const tally_exact *sqdev, tally_result *r);

/* The mean p gives (for the variance pass); sets *status to EMPTY when there is nothing. */
double tally_partial_mean(const tally_partial *p, tally_status *status);

#endif
