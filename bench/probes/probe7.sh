#!/usr/bin/env bash
# Probe 7: where does the GPU time of a small reduce go, ours against CUB's two kernels? In CUDA
# graphs (no host enqueue cost) CUB's pair beat our one launch by ~1 µs at 2^10-2^22 (i32 sum
# 2^16: 3.57 vs 2.43 µs per launch, 2026-11-29). ncu durations and stall reasons of every reduce
# kernel of the i32 sum's first launches (validation: ours, then CUB's), cold caches.
# BIN: bench_cuda's folder.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-build-gpu}
M='gpu__time_duration.sum,smsp__inst_executed.sum,launch__grid_size,regex:smsp__average_warps_issue_stalled_(no_instruction|barrier|long_scoreboard|wait|membar|lg_throttle|drain|sleeping)_per_issue_active\.ratio'
for l in ${SIZES:-10 16 20 22}; do
  echo "===== i32 sum 2^$l"
  timeout 100 ncu --clock-control none --kernel-name "regex:reduce_kernel|DeviceReduce" --launch-count 4 \
    --metrics "$M" "$BIN/bench_cuda" --filter reduce_sum --min-log2 "$l" --max-log2 "$l" --deadline 30 2>&1 |
    grep -E "reduce_kernel|DeviceReduce|gpu__time|inst_executed|grid_size|stalled" |
    sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//; s/ +/ /g; s/\(int\)//g' | cut -c1-150
done
