/* tally_mpi: tally's reductions and scans over one array spread across the ranks of an MPI
 * communicator, with the same bits as one process.
 *
 * Each rank holds a slice of the array (local_data, local_n elements; any split, empty slices
 * included); the global array is the concatenation of the slices in rank order. Each rank
 * reduces its slice with its own tally context (CPU or CUDA; device pointers work on a CUDA
 * context), and only exact partial states cross ranks, so:
 *   - every reduction equals tally_reduce_many over the concatenated array on one process, bit
 *     for bit, for any number of ranks and any split, except the float product, which is the
 *     product of the ranks' own products (tally_reduce's product of each slice) taken left to
 *     right in rank order: deterministic for a fixed rank count and split, not independent of
 *     them;
 *   - argmin/argmax give the global index of the first extreme;
 *   - var is two passes, as tally_reduce: the exact global mean first, then the exact sum of
 *     squared deviations from it, so it also equals the one-process result bit for bit.
 *
 * Collective calls: every rank of comm must make the same call (same type, ops, options,
 * op/exclusive/init for scans), each with its own slice and context. They return the same
 * status on every rank: a bad argument on one rank (or a mismatch between ranks, or a failure
 * of one rank's backend) makes every rank return that rank's status, and every rank's
 * tally_last_error(ctx) then names the rank and its message ("rank 3 of 4: ..."); no rank hangs
 * in a later collective. A rank whose ctx is NULL cannot report: its peers still get
 * TALLY_ERR_INVALID_ARGUMENT. The library never prints, never aborts, and never changes comm's
 * error handler; an MPI failure comes back as TALLY_ERR_BACKEND_FAILURE (with Open MPI's default
 * handler, MPI aborts first).
 *
 * Thread safety: as MPI's (MPI_THREAD_FUNNELED is enough when one thread calls tally_mpi); a
 * context must not be used by two calls at once.
 */
#ifndef TALLY_MPI_H
#define TALLY_MPI_H

#include <mpi.h>
#include "tally.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every rank gets the results (like MPI_Allreduce). results[i] gets ops[i]; returns TALLY_OK if
 * every result is OK, else the first failing result's status, as tally_reduce_many, the same on
 * every rank. */
TALLY_API tally_status tally_mpi_reduce_many(tally_context *ctx, MPI_Comm comm, tally_type type,
                                             const void *local_data, uint64_t local_n,
                                             const tally_op *ops, size_t nops,
                                             const tally_reduce_options *opts,
                                             tally_result *results);

/* Only rank root gets the results (like MPI_Reduce); results may be NULL on other ranks. Every
 * rank returns the same status (the root's results' status included). */
TALLY_API tally_status tally_mpi_reduce_many_root(tally_context *ctx, MPI_Comm comm, int root,
                                                  tally_type type, const void *local_data,
                                                  uint64_t local_n, const tally_op *ops,
                                                  size_t nops, const tally_reduce_options *opts,
                                                  tally_result *results);

/* A global scan over the concatenation: each rank's out[0..local_n) gets its slice of the scan
 * of the whole array. out == in is allowed. opts as in tally_scan (the init of an exclusive
 * scan applies at the global start, on the first rank; rank 0's slice is exactly tally_scan's
 * output for it).
 * Integer, min/max and bitwise scans equal tally_scan over the concatenation bit for bit.
 * Float sum and product scans are deterministic for a fixed rank count and split (and backend
 * on each rank), not independent of them: each rank's slice is scanned by tally_scan's rule
 * starting from a carry: for sums, the exact sum of everything before the slice (and init)
 * rounded once to the element type; for products, the ranks' products multiplied left to right.
 * Nothing is written to out on any rank when any rank's arguments are bad. */
TALLY_API tally_status tally_mpi_scan(tally_context *ctx, MPI_Comm comm, tally_op op,
                                      tally_type type, const void *in, void *out,
                                      uint64_t local_n, const tally_scan_options *opts);

/* Streams: each rank feeds its slice in chunks (tally_mpi_stream_update, local, any number of
 * calls), then tally_mpi_stream_results (collective) combines every rank's state. Results are
 * as tally_mpi_reduce_many over the concatenation of each rank's chunks, in rank order, except
 * var, which comes from exact sums of x and x^2 as in tally_stream (tally.h). Updates take
 * whatever the context's calls take (device pointers on CUDA). */
typedef struct tally_mpi_stream tally_mpi_stream;

/* Local (no communication). The stream keeps ctx and comm (not owned) until destroyed. */
TALLY_API tally_status tally_mpi_stream_create(tally_context *ctx, MPI_Comm comm, tally_type type,
                                               const tally_op *ops, size_t nops,
                                               const tally_reduce_options *opts,
                                               tally_mpi_stream **stream);
TALLY_API tally_status tally_mpi_stream_update(tally_mpi_stream *stream, const void *data,
                                               uint64_t n);
/* Collective over the stream's comm; every rank gets the results. The streams go on. */
TALLY_API tally_status tally_mpi_stream_results(tally_mpi_stream *stream, tally_result *results);
TALLY_API void tally_mpi_stream_destroy(tally_mpi_stream *stream); /* NULL is ignored */

/* How partial states cross ranks (both give the same bits; the speed differs):
 *   TALLY_MPI_ALGO_AUTO: the faster on measurements (docs/mpi.md); the environment variable
 *                        TALLY_MPI_ALGO=op|tree overrides it;
 *   TALLY_MPI_ALGO_OP:   MPI_Allreduce / MPI_Reduce with a user-defined op over the encoded
 *                        state (a contiguous MPI_BYTE datatype);
 *   TALLY_MPI_ALGO_TREE: recursive doubling of our own over MPI_Sendrecv. */
typedef enum tally_mpi_algo {
    TALLY_MPI_ALGO_AUTO = 0, TALLY_MPI_ALGO_OP = 1, TALLY_MPI_ALGO_TREE = 2
} tally_mpi_algo;
/* Sets the algorithm for this process's later calls; returns the previous setting. */
TALLY_API tally_mpi_algo tally_mpi_set_algo(tally_mpi_algo algo);

#ifdef __cplusplus
}
#endif
#endif /* TALLY_MPI_H */
