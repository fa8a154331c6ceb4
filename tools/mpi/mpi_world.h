/* tally-mpi's world (mpi_world.c): the tally command's hooks over the ranks of an MPI
 * communicator. Not public API. */
#ifndef TALLY_MPI_WORLD_H
#define TALLY_MPI_WORLD_H

#include <mpi.h>
#include "cli.h"

/* The world of comm's ranks (MPI is initialised); it also takes the command's messages
 * (cli_msg). One world per process, until tally_mpi_world_end. */
const cli_world *tally_mpi_world(MPI_Comm comm);
void tally_mpi_world_end(void);

#endif
