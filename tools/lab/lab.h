/* tally lab: the `tally bench` and `tally explain` subcommands.
 *
 * Both take the subcommand's own argv (argv[0] is "bench" or "explain"), print to stdout/stderr,
 * and return the process exit status: 0 success, 1 a failure (a variant validated WRONG that was
 * not meant to, a file that could not be written), 2 a usage error. Neither calls exit().
 * Run `tally bench --help` / `tally explain --help` for the options. */
#ifndef TALLY_LAB_H
#define TALLY_LAB_H

#ifdef __cplusplus
extern "C" {
#endif

int tally_lab_bench_main(int argc, char **argv);
int tally_lab_explain_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
