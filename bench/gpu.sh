#!/usr/bin/env bash
# One script for the GPU machine, in one call: build the CUDA backend (sm_90) and the tally command
# with its CUDA lab variants, run the GPU tests (once with the > 2^31-element cases), run
# compute-sanitizer memcheck and racecheck on the quick matrix, run `tally bench` on the GPU (the
# H200 report of issue 5), then time tally against CUB over 2^10 .. 2^30 elements and print that
# table last. Every step gets a share of a wall-clock budget (GPU_BUDGET seconds, default 500),
# so the whole script ends in time and the table is always printed.
#
#   bash bench/gpu.sh [all|test|bench|sanitize|lab|a,comma,list] [--quick]
#
# Files under $OUT (or ./gpu-out), at most 8: gpu.log build.log test.log sanitize.log
# lab-h200.md lab-h200.html bench.log bench-table.md.
# Binaries already built (GPU_BIN=dir holding test_cuda and bench_cuda) are used as they are;
# otherwise everything is built here with cmake (or nvcc alone if cmake is missing).
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
quick=${2:-}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
B=${BUILD_DIR:-build-gpu}
BIN=${GPU_BIN:-$B}
T0=$(date +%s)
BUDGET=${GPU_BUDGET:-500}
log() { echo "== [$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/gpu.log"; }
# cap WANT RESERVE: seconds for a step: at most WANT, leaving RESERVE for the steps after it
cap() {
  local left=$(( BUDGET - ($(date +%s) - T0) - $2 ))
  [ "$left" -gt "$1" ] && left=$1
  [ "$left" -lt 5 ] && left=5
  echo "$left"
}
want() { [ "$what" = all ] || [[ ",$what," == *",$1,"* ]]; }

log "$(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname); budget ${BUDGET}s"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tee -a "$OUT/gpu.log"
nproc | sed 's/^/cpus: /' | tee -a "$OUT/gpu.log"

TALLY_EXE=""
CLI_BG=0
build() {
  if [ -x "$BIN/test_cuda" ] && [ -x "$BIN/bench_cuda" ] && "$BIN/test_cuda" --version >/dev/null 2>&1; then
    mkdir -p "$B" # the steps' exit codes and logs go there
    log "using prebuilt binaries in $BIN"
    [ -x "$BIN/tools/tally" ] && TALLY_EXE=$BIN/tools/tally
    return 0
  fi
  BIN=$B
  mkdir -p "$B"
  local j
  j=$(nproc)
  # the two test programs need only the headers to compile: start them now, link later
  log "compiling test_cuda and bench_cuda (in the background)"
  nvcc -O2 -std=c++17 -arch=sm_90 -Iinclude -c tests/cuda/test_cuda.cu -o "$B/test_cuda.o" >"$B/nvcc-test.log" 2>&1 &
  local pt=$!
  nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -c bench/bench_cuda.cu -o "$B/bench_cuda.o" >"$B/nvcc-bench.log" 2>&1 &
  local pb=$!
  local gen=""
  command -v ninja >/dev/null && gen="-G Ninja"
  if command -v cmake >/dev/null; then
    log "cmake build in $B (library and the tally command with its CUDA lab)"
    cmake -S . -B "$B" $gen -DCMAKE_BUILD_TYPE=Release -DTALLY_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DTALLY_BUILD_TESTS=OFF -DTALLY_BUILD_CLI=ON \
      -DTALLY_BUILD_BENCH=OFF >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; return 1; }
    cmake --build "$B" -j"$j" --target tally_static >>"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; return 1; }
    # the command is optional for the rest (tests and bench): built in the background
    rm -f "$B/cli-build.rc"
    (cmake --build "$B" -j"$j" --target tally_cli >"$B/cli-build.log" 2>&1; echo $? >"$B/cli-build.rc") &
    CLI_BG=1
  else
    log "no cmake: building with nvcc alone (no tally command)"
    mkdir -p "$B/obj"
    for f in src/core/*.c src/cpu/*.c; do
      extra=""
      case $f in *_avx2.c) extra="-mavx2 -mfma -mbmi2";; *_avx512.c) extra="-mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma -mbmi2";; esac
      gcc -O3 -std=gnu11 -fPIC -ffp-contract=off -DTALLY_X86=1 -DTALLY_HAVE_CUDA=1 $extra -Iinclude -Isrc -c "$f" -o "$B/obj/$(basename "$f").o" &
    done
    for f in src/cuda/*.cu; do
      nvcc -O3 -std=c++17 -arch=sm_90 -fmad=false -Iinclude -Isrc -c "$f" -o "$B/obj/$(basename "$f").o" &
    done
    wait
    ar rcs "$B/libtally.a" "$B"/obj/*.o
  fi
  wait $pt; wait $pb
  [ -f "$B/test_cuda.o" ] || { cat "$B/nvcc-test.log" | tee -a "$OUT/build.log" | tail -30; return 1; }
  [ -f "$B/bench_cuda.o" ] || { cat "$B/nvcc-bench.log" | tee -a "$OUT/build.log" | tail -30; return 1; }
  log "linking test_cuda and bench_cuda"
  nvcc -arch=sm_90 "$B/test_cuda.o" "$B/libtally.a" -lpthread -ldl -lm -o "$B/test_cuda" >>"$OUT/build.log" 2>&1 &&
  nvcc -arch=sm_90 "$B/bench_cuda.o" "$B/libtally.a" -lpthread -ldl -lm -o "$B/bench_cuda" >>"$OUT/build.log" 2>&1
}

build || { log "BUILD FAILED"; exit 1; }
log "built"

rc=0
# Tests, memcheck and racecheck check answers only: they run side by side (one GPU, time-sliced),
# within one share of the budget; the timed steps (lab, bench) run alone afterwards.
# the timed steps' reserve: only those asked for (the lab about 150 s, the sweep about 100 s)
reserve=0
want lab && reserve=$((reserve + 150))
want bench && reserve=$((reserve + 100))
# (at most CHECK_CAP seconds, default 160: racecheck on the quick matrix needs about that much)
c_cap=$(cap "${CHECK_CAP:-160}" $reserve)
pids=()
if want test; then
  big="--big"; [ -n "$quick" ] && big=""   # the > 2^31-element cases, once
  log "GPU tests: test_cuda $quick $big (at most ${c_cap}s)"
  ( timeout "$c_cap" "$BIN/test_cuda" $quick $big >"$OUT/test.log" 2>&1; echo $? >"$B/test.rc" ) &
  pids+=($!)
fi
san=0
if want sanitize; then
  if command -v compute-sanitizer >/dev/null; then
    san=1
    for tool in memcheck racecheck; do
      log "compute-sanitizer --tool $tool test_cuda --quick (at most ${c_cap}s)"
      ( timeout "$c_cap" compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/test_cuda" --quick >"$B/sanitize-$tool.log" 2>&1
        echo $? >"$B/sanitize-$tool.rc" ) &
      pids+=($!)
    done
  else
    log "compute-sanitizer not found"
  fi
fi
for p in "${pids[@]}"; do wait "$p"; done
if want test; then
  t=$(cat "$B/test.rc" 2>/dev/null || echo 1); [ "$t" = 0 ] || rc=1
  grep -E 'FAIL' "$OUT/test.log" | head -20
  log "test_cuda exit $t$([ "$t" = 124 ] && echo ' (timed out)'): $(tail -1 "$OUT/test.log")"
fi
if [ "$san" = 1 ]; then
  : >"$OUT/sanitize.log"
  for tool in memcheck racecheck; do
    s=$(cat "$B/sanitize-$tool.rc" 2>/dev/null || echo 1); [ "$s" = 0 ] || rc=1
    { echo "===== $tool (exit $s)"; cat "$B/sanitize-$tool.log"; } >>"$OUT/sanitize.log"
    log "$tool exit $s$([ "$s" = 124 ] && echo ' (timed out)'): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed' "$B/sanitize-$tool.log" | tail -2 | tr '\n' ' ')"
  done
fi
if want lab; then
  if [ -z "$TALLY_EXE" ] && [ "$CLI_BG" = 1 ]; then
    # the tally command was built in the background
    for _ in $(seq 1 150); do [ -f "$B/cli-build.rc" ] && break; sleep 1; done
    if [ "$(cat "$B/cli-build.rc" 2>/dev/null)" = 0 ]; then
      TALLY_EXE=$(find "$B" -name tally -type f -perm -u+x | head -1)
    else
      log "the tally command did not build:"; tail -20 "$B/cli-build.log" 2>/dev/null | tee -a "$OUT/gpu.log"
      rc=1
    fi
  fi
  if [ -n "$TALLY_EXE" ]; then
    l_cap=$(cap 100 150)
    log "tally bench --backend cuda (the H200 lab report; at most ${l_cap}s)"
    timeout "$l_cap" "$TALLY_EXE" bench --backend cuda --sizes 2^12,2^16,2^20,2^24,2^26,2^28 \
      --min-time 0.02 --html "$OUT/lab-h200.html" >"$OUT/lab-h200.md" 2>>"$OUT/gpu.log"
    l=$?; [ "$l" = 0 ] || rc=1
    log "tally bench exit $l$([ "$l" = 124 ] && echo ' (timed out)')"
    tail -40 "$OUT/lab-h200.md"
  fi
fi
if want bench; then
  b_cap=$(cap 400 6)
  log "benchmark vs CUB (at most ${b_cap}s; stops starting new sizes after $((b_cap - 25))s)"
  timeout "$b_cap" "$BIN/bench_cuda" $quick --deadline $((b_cap - 25)) ${BENCH_ARGS:-} --out "$OUT/bench-table.md" > "$OUT/bench.log" 2>&1
  b=$?; [ "$b" = 0 ] || rc=1
  log "bench exit $b; whole script $(( $(date +%s) - T0 ))s"
  if grep -q '=== TABLE' "$OUT/bench.log"; then
    sed -n '/=== TABLE/,$p' "$OUT/bench.log"
  else
    grep -E '^(device|\|)' "$OUT/bench.log"
  fi
fi
exit $rc
