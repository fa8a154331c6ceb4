/* tally-mpi: the tally command under mpirun -np N. Every rank opens the same file and runs the
 * command's own code (tools/cli) on its share of it, in the world of mpi_world.c: whole rows of
 * a .npy or raw array, or the records of a text file from its byte range; results come from
 * libtally_mpi, so they are tally's on one process, and rank 0 prints them. `scan` writes one
 * output file collectively, never a partial one. docs/mpi.md says what differs from tally. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "mpi_world.h"

static void help(void)
{
    printf("usage: mpirun -np N tally-mpi [options] OPS FILE\n"
           "       mpirun -np N tally-mpi scan OP [--exclusive [--init V]] [options] FILE -o OUT | --text\n"
           "\n"
           "The tally command over the ranks of an MPI job: every rank reads its share of FILE\n"
           "(whole rows of a .npy or raw array, whole records of CSV/TSV/whitespace text, quoted\n"
           "newlines respected) and rank 0 prints what tally prints on one process. The options,\n"
           "ops and output are tally's (tally --help). FILE must be a regular file that every\n"
           "rank can open (not standard input). Threads per rank (-j) default to the node's\n"
           "cores divided by the ranks on it. A scan writes one file (MPI-IO at each rank's\n"
           "offset into a temporary file renamed at the end), or the ranks' values in order to\n"
           "standard output, a device or a FIFO.\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const cli_world *w = tally_mpi_world(MPI_COMM_WORLD);
    static cli_opts o;
    int rc = cli_parse_args(argc, argv, &o);
    if (rc) {
        rc = cli_usage_error("%s", o.err);
    } else if (o.cmd == CLI_HELP || o.cmd == CLI_VERSION) {
        if (w->rank == 0) {
            if (o.cmd == CLI_HELP) help();
            else printf("tally-mpi %s (library %s)\n", TALLY_CLI_VERSION, tally_version());
            rc = fflush(stdout) != 0;
        }
    } else if (o.cmd != CLI_REDUCE && o.cmd != CLI_SCAN) {
        rc = cli_usage_error("tally-mpi runs reductions and scans (tally info and tally demo "
                             "run on one process)");
    } else if (!o.file || strcmp(o.file, "-") == 0) {
        rc = cli_usage_error("tally-mpi reads a file that every rank opens, not standard input");
    } else {
        o.progress = 0;        /* one progress line per rank would garble the terminal */
        if (o.threads == 0) {  /* the ranks on a node share its cores */
            MPI_Comm node;
            int local = 1;
            if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                    &node) == MPI_SUCCESS) {
                MPI_Comm_size(node, &local);
                MPI_Comm_free(&node);
            }
            long cores = sysconf(_SC_NPROCESSORS_ONLN);
            o.threads = cores / local > 0 ? (int)(cores / local) : 1;
        }
        rc = cli_run(&o, w);
    }
    rc = w->agree(w, rc);      /* every rank's lines out, and one exit status */
    tally_mpi_world_end();
    MPI_Finalize();
    return rc;
}
