/* A pipe's copy of each field's integer values, kept to replay them should the field change
 * form (a decimal with more places, a binary float). All fields together hold at most `budget`
 * bytes in memory; beyond it a field's values go, in chunks, to one temporary file shared by all
 * fields, so memory stays bounded whatever the number of fields and values. */
#ifndef TALLY_CLI_SPOOL_H
#define TALLY_CLI_SPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct cli_spool {
    int64_t *mem;              /* the first values, in memory */
    size_t n, cap;
    int spilling;              /* once set, later values go to tail and the file */
    int64_t *tail;             /* values not yet written as a chunk */
    size_t tail_n;
    uint64_t *chunk;           /* file offsets of the field's chunks, in order */
    uint32_t *chunk_n;         /* values in each */
    size_t nchunks, chunks_cap;
} cli_spool;

typedef struct cli_spools {
    size_t budget;             /* bytes in memory over all fields */
    size_t used;
    size_t tail_cap;           /* values per chunk */
    int fd;                    /* the shared temporary file, or -1 */
    uint64_t end;
} cli_spools;

void cli_spools_init(cli_spools *s, size_t budget, int nfields);
void cli_spools_free(cli_spools *s);
/* Appends n values. 0, or -1 with errno. */
int cli_spool_add(cli_spools *s, cli_spool *sp, const int64_t *v, size_t n);
/* Calls fn on every value kept, in order, a piece at a time; stops at fn's first nonzero
 * return and returns it; -1 with errno on a read error. */
int cli_spool_replay(cli_spools *s, cli_spool *sp, int (*fn)(void *user, const int64_t *v, size_t n),
                     void *user);
/* Multiplies every value by 10^k (1 <= k <= 18) if all fit int64 (then returns 0); else
 * changes nothing and returns 1; -1 with errno on an I/O error. */
int cli_spool_rescale(cli_spools *s, cli_spool *sp, int k);
/* Forgets the field's values. */
void cli_spool_clear(cli_spools *s, cli_spool *sp);

#endif
