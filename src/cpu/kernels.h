/* The CPU kernel table: one per ISA path, all generated from one body (kernels_body.h) compiled
 * three times (kernels_scalar.c, kernels_avx2.c, kernels_avx512.c). Every kernel is
 * single-threaded and works on a contiguous piece; the driver (reduce.c, scan.c) splits the data
 * and merges the pieces. Indexed by tally_type; entries that make no sense for a type are NULL. */
#ifndef TALLY_CPU_KERNELS_H
#define TALLY_CPU_KERNELS_H

#include <stdint.h>
#include "tally.h"
#include "core/types.h"

/* The extremes of a piece as order keys (core/partial.h), and its NaN count. */
typedef struct tally_minmax {
    uint64_t kmin, kmax; /* UINT64_MAX / 0 when the piece has no non-NaN value */
    uint64_t nans;
} tally_minmax;

/* Exact integer product state (core/partial.h's caps). */
typedef struct tally_iprod_acc {
    __int128 s;          /* signed types */
    unsigned __int128 u; /* unsigned types */
    int zero, ovf;
} tally_iprod_acc;

/* Scan carries: one element of the type, stored in 8 bytes. */
typedef union tally_carry {
#define TK_CARRY_MEMBER(E, name, C, is_int, is_signed, W) C name;
    TALLY_TYPES(TK_CARRY_MEMBER)
#undef TK_CARRY_MEMBER
    uint64_t bits; /* 8 bytes whatever the types */
} tally_carry;

/* Scans work in fixed blocks of this many elements (see scan.c): the float results depend on
 * these boundaries, never on the thread count. */
#define TALLY_SCAN_BLOCK 4096u

typedef struct tally_cpu_kernels {
    const char *name;
    /* Integer sum: adds the piece exactly into *acc (__int128 for signed types, unsigned
     * __int128 for unsigned ones). */
    void (*isum[TALLY_TYPE_COUNT])(const void *x, uint64_t n, void *acc);
    /* Extremes and NaN count of a piece. */
    void (*minmax[TALLY_TYPE_COUNT])(const void *x, uint64_t n, tally_minmax *mm);
    /* Index of the first element whose order key is key; n if none. */
    uint64_t (*find_key[TALLY_TYPE_COUNT])(const void *x, uint64_t n, uint64_t key);
    /* Index of the first NaN; n if none (float types). */
    uint64_t (*find_nan[TALLY_TYPE_COUNT])(const void *x, uint64_t n);
    /* and/or/xor of nwords 8-byte words (any alignment) into acc[0..2]. */
    void (*bits)(const void *x, uint64_t nwords, uint64_t *acc);
    /* Integer product, sequential with the overflow cap. */
    void (*iprod[TALLY_TYPE_COUNT])(const void *x, uint64_t n, tally_iprod_acc *acc);
    /* Float product of one block (n <= TALLY_PROD_BLOCK elements from a block start). */
    double (*fprod_block[TALLY_TYPE_COUNT])(const void *x, uint64_t n, int omit_nan);
    /* out[i] = (double)x[i] (integer types; for the variance pass). */
    void (*to_f64[TALLY_TYPE_COUNT])(const void *x, uint64_t n, double *out);
    /* Scans of one block with a carry: inclusive out[i] = c op local(x[0..i]); exclusive
     * out[0] = c, out[i] = c op local(x[0..i-1]); afterwards *carry = c op local(x[0..n-1]).
     * local is the fold from the block start, in tally.h's order for float sum/prod (the
     * only ops whose results depend on it). */
    void (*scan_incl[TALLY_SCAN_OP_COUNT][TALLY_TYPE_COUNT])(const void *in, void *out, uint64_t n,
                                                        tally_carry *carry);
    void (*scan_excl[TALLY_SCAN_OP_COUNT][TALLY_TYPE_COUNT])(const void *in, void *out, uint64_t n,
                                                        tally_carry *carry);
    /* Copies bytes from an L1-resident buffer to memory with non-temporal stores where the ISA
     * has them (no read-for-ownership of dst), then stream_fence() before the data is handed
     * to another thread. */
    void (*stream_copy)(void *dst, const void *src, uint64_t bytes);
    void (*stream_fence)(void);
    /* Float sum [0] and product [1] scans in tally.h's order, of n elements of one block from a
     * group boundary (a multiple of 16 elements from the block start): c is the block's carry;
     * *local the block's local value before the first element (the op's identity at the block
     * start), afterwards that of the last element. out NULL: only *local. So a block may be
     * scanned in chunks of whole groups with the same bits. */
    void (*fscan[2][TALLY_TYPE_COUNT])(const void *in, void *out, uint64_t n, const tally_carry *c,
                                       tally_carry *local, int excl);
    /* *carry = *carry op local(x[0..n-1]): what the scan of the block leaves in its carry. */
    void (*scan_total[TALLY_SCAN_OP_COUNT][TALLY_TYPE_COUNT])(const void *in, uint64_t n,
                                                         tally_carry *carry);
    /* Float min [0] / max [1] scans through a key buffer (a chunk keyed, the integer scan, keyed
     * back: a pass more through L1), [exclusive][max][type] and their totals [max][type]: the same
     * bits as scan_incl/_excl/_total, whose fused kernels they preceded; kept where the ISA has
     * the fused ones (else NULL), for comparing the two in one run (TALLY_CPU_TUNE scan_keyed=1). */
    void (*kscan_mm[2][2][TALLY_TYPE_COUNT])(const void *in, void *out, uint64_t n,
                                             tally_carry *carry);
    void (*ktotal_mm[2][TALLY_TYPE_COUNT])(const void *in, uint64_t n, tally_carry *carry);
    /* The fused kernels' totals from order keys (a key and two extremes a vector), which the
     * totals from the raw bits (three extremes, no key; kernels_simd.h frtotal) replaced in
     * scan_total where the ISA has the ops: the same bits, kept (else NULL) for comparing the two
     * in one run (TALLY_CPU_TUNE scan_rtotal=0). */
    void (*fktotal_mm[2][TALLY_TYPE_COUNT])(const void *in, uint64_t n, tally_carry *carry);
    /* The fused min/max scans [exclusive][max][type] with a NaN test and branch every vector, as
     * before scan_incl/_excl's took the test once a call where the output is not the input: the
     * same bits, kept (else NULL) for comparing the two in one run (TALLY_CPU_TUNE scan_fkv=1). */
    void (*fkscanv_mm[2][2][TALLY_TYPE_COUNT])(const void *in, void *out, uint64_t n,
                                               tally_carry *carry);
    /* f32 sum [0] and product [1], where the ISA does it faster than scan_total block by block
     * (else NULL): tot[k] = the total of block k (identity as its carry) for 16 whole blocks
     * from in, TALLY_SCAN_BLOCK elements apart. The same bits as scan_total. */
    void (*ftot16[2])(const void *in, tally_carry *tot);
    /* The same for 8 whole blocks, [op][type] (f32, f64), where the ISA does it faster; NULL
     * elsewhere. */
    void (*ftot8[2][TALLY_TYPE_COUNT])(const void *in, tally_carry *tot);
} tally_cpu_kernels;

extern const tally_cpu_kernels tally_cpu_kernels_scalar;
#if defined(TALLY_X86)
extern const tally_cpu_kernels tally_cpu_kernels_avx2;
extern const tally_cpu_kernels tally_cpu_kernels_avx512;
#endif

const tally_cpu_kernels *tally_cpu_kernels_for(tally_isa isa);

#endif
