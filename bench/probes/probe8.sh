#!/usr/bin/env bash
# Probe 8: the reduce's launch shapes at middle sizes, one binary, the knobs through the
# environment: for each setting in CONFIGS (space-separated; each a comma-joined list of
# VAR=VALUE, or "-" for the defaults), rows of FILTER (default reduce_sum,reduce_max) at
# 2^MINL-2^MAXL (default 18-24), stream and graph, each line prefixed by its setting.
# First use (2026-11-29): the shared-memory ring from fewer batches (TALLY_CUDA_REDUCE_RING_MIN
# 128-512 against the default 1024). Second: more blocks (TALLY_CUDA_REDUCE_MINB) now that the
# one-word combines need no partials.
# BIN: bench_cuda's folder.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-build-gpu}
CONFIGS=${CONFIGS:-"- TALLY_CUDA_REDUCE_RING_MIN=512 TALLY_CUDA_REDUCE_RING_MIN=256 TALLY_CUDA_REDUCE_RING_MIN=128 TALLY_CUDA_REDUCE_RING_MIN=256,TALLY_CUDA_REDUCE_RING=3"}
for c in $CONFIGS; do
  echo "===== $c"
  envs=()
  [ "$c" != "-" ] && IFS=, read -ra envs <<<"$c"
  env "${envs[@]}" timeout 120 "$BIN/bench_cuda" \
    --filter "${FILTER:-reduce_sum,reduce_max}" --min-log2 "${MINL:-18}" --max-log2 "${MAXL:-24}" --deadline 90 2>&1 |
    sed -n '/=== TABLE/,$p' | grep -E '^\| (reduce|plain)|validation' | sed "s/^/$c /"
done
