#!/usr/bin/env bash
# Probe 9: what each part of the correctly rounded f64 sum costs at small sizes: probe_exact.cu
# built as is (base) and once per edited copy of reduce_kernel.cuh (probe9_ablate.py):
#   nospill    no block-wide check of the superaccumulator after each merge round
#   noinit     that, and no zeroing of the superaccumulator (and its barrier) at the start
#   plainmerge the warp, block and partials merges by plain f64 adds (not exact)
#   plainadd   the elements added by plain f64 adds (no two-sum; not exact)
#   all        the four together
#   noslow     no call to the element-by-element path when a batch fails its proof
#   noresult   the result as xh + xl, without the flags' cases
#   all2       all, noslow and noresult together
#   twocopy    the merge code twice, inline for each round (as the other kernels have it)
#   lb4        launch bounds of 4 blocks per SM (64 registers: it spills)
#   all3       all2 and twocopy together
#   nobook     f64 batches without the proof's bookkeeping (least and greatest magnitude, bound)
#   all4       all2 and nobook together: no exact part left
# Price-like data never spills nor fails a proof, so nospill, noinit, noslow and noresult give
# the same sums; the others lose exactness (their relative error is printed). Each binary also
# times the plain f64 sum's kernel with the same grid, for reference.
#   bash bench/probes/probe9.sh build   (here: nvcc, writes DIR)
#   bash bench/probes/probe9.sh [MIN_LOG2 MAX_LOG2]  (the GPU machine: runs what DIR holds;
#                                                     VARIANTS picks some, RINGS the ring knobs)
set -uo pipefail
cd "$(dirname "$0")/../.."
DIR=${DIR:-.gpubin/E}
VARIANTS=${VARIANTS:-nospill noinit plainmerge plainadd all noslow noresult all2 twocopy lb4 all3 nobook all4}
if [ "${1:-}" = build ]; then
  mkdir -p "$DIR"
  python3 bench/probes/probe9_ablate.py /tmp/probe9-ablation || exit 1
  F="-O3 -std=c++17 -arch=sm_90 -fmad=false"
  nvcc $F -Iinclude -Isrc bench/probes/probe_exact.cu -o "$DIR/pe_base" || exit 1
  for v in $VARIANTS; do
    nvcc $F -I/tmp/probe9-ablation/$v -Iinclude -Isrc bench/probes/probe_exact.cu -o "$DIR/pe_$v" 2>/dev/null || exit 1
  done
  exit 0
fi
for r in ${RINGS:-1}; do
  for v in base $VARIANTS; do
    [ -x "$DIR/pe_$v" ] && TALLY_CUDA_REDUCE_RING=$r timeout 120 "$DIR/pe_$v" "$v ring=$r" "$@"
  done
done
