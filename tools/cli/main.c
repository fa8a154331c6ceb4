/* main() of the installed tally command. `tally bench` and `tally explain` belong to the lab, a
 * program of its own (tally-lab, built with -DTALLY_BUILD_LAB=ON) that tally runs from its own
 * directory, so the command itself carries neither CUB nor the seed kernels. */
#define _GNU_SOURCE 1
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cli_run_lab(int argc, char **argv)
{
    char self[PATH_MAX], lab[PATH_MAX + 16];
    ssize_t l = readlink("/proc/self/exe", self, sizeof self - 1);
    if (l > 0) {
        self[l] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) *slash = '\0';
        snprintf(lab, sizeof lab, "%s/tally-lab", l > 0 && slash ? self : ".");
        if (access(lab, X_OK) == 0) {
            char **args = calloc((size_t)argc + 1, sizeof *args);
            if (!args) { cli_error("out of memory"); return 1; }
            args[0] = "tally-lab";
            for (int i = 1; i < argc; i++) args[i] = argv[i];
            execv(lab, args);
            cli_error("%s: %s", lab, strerror(errno));
            free(args);
            return 1;
        }
    }
    cli_error("`tally %s` is the lab, the program tally-lab, which was not found beside tally "
              "(%s): configure with -DTALLY_BUILD_LAB=ON, build it, and install it or run "
              "build/tools/tally", argv[1], l > 0 ? self : "?");
    return 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "bench") == 0 || strcmp(argv[1], "explain") == 0))
        return cli_run_lab(argc, argv);
    return cli_main(argc, argv);
}
