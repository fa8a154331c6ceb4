/* tally-lab: the lab's subcommands without the rest of the tally command, for tests. */
#include "lab.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: tally-lab bench [options]    (tally-lab bench --help)\n"
                "       tally-lab explain OP [options] (tally-lab explain --help)\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "bench")) return tally_lab_bench_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "explain")) return tally_lab_explain_main(argc - 1, argv + 1);
    fprintf(stderr, "tally-lab: unknown command '%s' (bench or explain)\n", argv[1]);
    return 2;
}
