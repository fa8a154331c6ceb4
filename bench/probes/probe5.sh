#!/usr/bin/env bash
# Probe 5: where does the correctly rounded sum's fixed cost go? ncu on the exact f32 sum kernel
# (mask 129) and the plain f64-accumulating one (mask 640: the same loads, no exactness) at 2^16
# (8 blocks) and 2^26, loads into registers (TALLY_CUDA_REDUCE_RING=0). BIN: bench_cuda's folder;
# BIN_OLD (optional): a second build to compare against. Prediction: if cold instruction fetches
# of the exact kernel's large code are the cost, its "No Instruction" stalls dominate and shrink
# with the smaller code.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
BIN=${BIN:-build-gpu}
S="--section SpeedOfLight --section WarpStateStats --section InstructionStats"
prof() { # label bin filter regex log2
  echo "===== $1: $3 2^$5"
  TALLY_CUDA_REDUCE_RING=0 timeout 120 ncu --clock-control none --kernel-name-base mangled --kernel-name "regex:$4" \
    --launch-skip 3 --launch-count 1 $S "$2/bench_cuda" --filter "$3" --min-log2 "$5" --max-log2 "$5" --deadline 60 2>&1 |
    grep -vE "^==PROF==|^\s*$|----" | grep -E "Duration|Elapsed Cycles|Executed Ipc A|Warp Cycles Per Issued|Executed Instructions  |No Instruction|stall|Memory Throughput|^\s+[A-Z][a-z]+ [A-Z].*(Stall|Instruction).*[0-9]$" | head -14
}
for lg in 16 26; do
  prof new "$BIN" reduce_sum 'reduce_kernelIfLj129ELb0ELb0' $lg
  [ -n "${BIN_OLD:-}" ] && prof old "$BIN_OLD" reduce_sum 'reduce_kernelIfLj129ELb0ELb0' $lg
  prof new "$BIN" plain_sum 'reduce_kernelIfLj640ELb0ELb0' $lg
done
TALLY_CUDA_REDUCE_RING=0 timeout 120 ncu --clock-control none --kernel-name-base mangled --kernel-name "regex:reduce_kernelIfLj129ELb0ELb0" \
  --launch-skip 3 --launch-count 1 --section WarpStateStats --section SourceCounters --page source --print-source sass --csv \
  "$BIN/bench_cuda" --filter reduce_sum --min-log2 16 --max-log2 16 --deadline 60 > "$OUT/exact_sass_16.csv" 2>&1
echo "sass: $(wc -l < "$OUT/exact_sass_16.csv") lines"
