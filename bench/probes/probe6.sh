#!/usr/bin/env bash
# Probe 6: what is left of the correctly rounded sums' fixed cost after 786dc1f? ncu stall
# reasons (per issued instruction) of the exact kernels against the plain f64-accumulating ones:
# f32 at 2^16 (8 blocks, one batch each), f64 at 2^20 (256 blocks, one batch each), f32 at 2^26
# through the default ring. BIN: bench_cuda's folder. Prediction: if cold instruction fetches
# still cost, the exact kernels show more "no_instruction" stalls per issue than the plain ones;
# if the merge does, "barrier" and "wait"/"math" stalls.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-build-gpu}
M='gpu__time_duration.sum,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,regex:smsp__average_warps_issue_stalled_(no_instruction|barrier|long_scoreboard|wait|math_pipe_throttle|short_scoreboard|branch_resolving|membar|lg_throttle|mio_throttle)_per_issue_active\.ratio'
prof() { # label filter kernel-regex log2 [ring]
  echo "===== $1 2^$4 ring=${5:-default}"
  TALLY_CUDA_REDUCE_RING=${5:-1} timeout 100 ncu --clock-control none --kernel-name-base mangled --kernel-name "regex:$3" \
    --launch-skip 3 --launch-count 1 --metrics "$M" "$BIN/bench_cuda" --filter "$2" --min-log2 "$4" --max-log2 "$4" \
    --deadline 60 2>&1 | grep -E "gpu__time|inst_executed|dram__|stalled" | sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//; s/ +/ /g'
}
prof "exact f32" reduce_sum 'reduce_kernelIfLj129ELb0ELb0' 16
prof "plain f32" plain_sum 'reduce_kernelIfLj640ELb0ELb0' 16
prof "exact f64" reduce_sum 'reduce_kernelIdLj129ELb0ELb0' 20
prof "plain f64" plain_sum 'reduce_kernelIdLj640ELb0ELb0' 20
prof "exact f32" reduce_sum 'reduce_kernelIfLj129ELb0ELb1' 26
prof "plain f32" plain_sum 'reduce_kernelIfLj640ELb0ELb1' 26
