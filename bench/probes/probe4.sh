#!/usr/bin/env bash
# Probe 4: ncu on tally's i32 sum kernel and the bare probe kernel of the same shape, 2^24.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/probe bench/probes/probe_stream.cu &
GPU_BUDGET=200 BENCH_ARGS="--filter reduce_sum --min-log2 24 --max-log2 24" bash bench/gpu.sh bench 2>&1 | grep -E "i32|built|FAIL|error" | head
wait
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section InstructionStats --section LaunchStats"
echo "===== tally reduce_kernel"
ncu --clock-control none --kernel-name regex:reduce_kernel --launch-skip 1 --launch-count 1 $S \
  build-gpu/bench_cuda --filter reduce_sum --min-log2 24 --max-log2 24 --deadline 60 2>&1 | grep -vE "^==PROF==|^\s*$|----" | grep -E "^\s+[A-Z].*[0-9]$|reduce_kernel" | head -70
echo "===== probe even8x (tail)"
ncu --clock-control none --kernel-name regex:even8x_kernel --launch-skip 1 --launch-count 1 $S \
  /tmp/probe --min-log2 24 --max-log2 24 2>&1 | grep -vE "^==PROF==|^\s*$|----" | grep -E "^\s+[A-Z].*[0-9]$|even8x" | head -70
cuobjdump -sass -fun '_ZN3tcu13reduce_kernelIiLj129ELb0EEEv17tcu_reduce_params' build-gpu/bench_cuda > $OUT/sass_lib.txt 2>&1 || true
[ -s $OUT/sass_lib.txt ] || cuobjdump -sass build-gpu/libtally.a 2>/dev/null | awk '/reduce_kernelIiLj129ELb0E/,/EXIT/' > $OUT/sass_lib.txt
wc -l $OUT/sass_lib.txt
