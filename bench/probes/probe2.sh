#!/usr/bin/env bash
# Probe 2 (one device call): where does tally's reduce lose time against a bare kernel of the
# same shape, and where does the scan lose it? Builds via bench/gpu.sh, then ncu.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
GPU_BUDGET=200 BENCH_ARGS="--filter reduce_sum --min-log2 18 --max-log2 26" bash bench/gpu.sh bench 2>&1 | grep -E "i32|built|FAIL|error" | head -40
B=build-gpu/bench_cuda
M=gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
echo "== ncu: reduce_kernel at 2^24 and 2^20 (i32 sum)"
for lg in 20 24; do
  ncu --clock-control none --kernel-name regex:reduce_kernel --launch-count 2 --metrics $M \
    $B --filter reduce_sum --min-log2 $lg --max-log2 $lg --deadline 60 2>&1 | grep -E "reduce_kernel|duration|grid_size|registers|warps_active|dram__" | head -14
done
echo "== ncu: scan_kernel at 2^26 (i32 incl sum): stall reasons"
ncu --clock-control none --kernel-name regex:scan_kernel --launch-count 1 --section WarpStateStats --section Occupancy --section SpeedOfLight --section LaunchStats \
  $B --filter scan_incl_sum --min-log2 26 --max-log2 26 --deadline 60 2>&1 | grep -vE "^==PROF==|^\s*$" | sed -n '/scan_kernel/,$p' | head -90
