/* The machine the library runs on (host.c). */
#ifndef TALLY_CORE_HOST_H
#define TALLY_CORE_HOST_H

#include "tally.h"

/* The best ISA path this CPU and OS support (cpuid + xgetbv), cached. */
tally_isa tally_host_isa(void);
/* 1 if this CPU can run isa (AUTO and SCALAR: always). */
int tally_host_isa_supported(tally_isa isa);
/* Cores this process may run on (sched_getaffinity), at least 1. */
int tally_host_core_count(void);

#endif
