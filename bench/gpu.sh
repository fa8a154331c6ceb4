#!/usr/bin/env bash
# One script for the GPU machine: build the CUDA backend (sm_90), run the GPU tests, run
# compute-sanitizer memcheck and racecheck on moderate sizes, then time tally against CUB over
# 2^10 .. 2^30 elements and print the table last. Results also go to $OUT (or ./gpu-out).
#
#   bash bench/gpu.sh [all|test|bench|sanitize] [--quick]
#
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
log() { echo "== $*" | tee -a "$OUT/gpu.log"; }

log "$(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tee -a "$OUT/gpu.log"

build() {
  if [ -x "$BIN/test_cuda" ] && [ -x "$BIN/bench_cuda" ] && "$BIN/test_cuda" --version >/dev/null 2>&1; then
    log "using prebuilt binaries in $BIN"
    return 0
  fi
  BIN=$B
  local gen=""
  command -v ninja >/dev/null && gen="-G Ninja"
  if command -v cmake >/dev/null; then
    log "cmake build in $B"
    cmake -S . -B "$B" $gen -DCMAKE_BUILD_TYPE=Release -DTALLY_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DTALLY_BUILD_TESTS=OFF -DTALLY_BUILD_CLI=OFF \
      -DTALLY_BUILD_BENCH=OFF >"$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; return 1; }
    cmake --build "$B" -j"$(nproc)" --target tally_static >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; return 1; }
  else
    log "no cmake: building with nvcc alone"
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
  log "building test_cuda and bench_cuda"
  nvcc -O2 -std=c++17 -arch=sm_90 -Iinclude tests/cuda/test_cuda.cu "$B/libtally.a" -lpthread -ldl -lm -o "$B/test_cuda" &&
  nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude bench/bench_cuda.cu "$B/libtally.a" -lpthread -ldl -lm -o "$B/bench_cuda"
}

build || { log "BUILD FAILED"; exit 1; }

rc=0
if [ "$what" = all ] || [ "$what" = test ]; then
  log "GPU tests"
  timeout "${TEST_TIMEOUT:-400}" "$BIN/test_cuda" $quick 2>&1 | tee "$OUT/test.log" | tail -60
  t=${PIPESTATUS[0]}; [ "$t" = 0 ] || rc=1
  log "test_cuda exit $t: $(tail -1 "$OUT/test.log")"
fi
if [ "$what" = all ] || [ "$what" = sanitize ]; then
  if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
      log "compute-sanitizer --tool $tool (quick matrix)"
      timeout "${SAN_TIMEOUT:-200}" compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/test_cuda" --quick > "$OUT/sanitize-$tool.log" 2>&1
      s=$?; [ "$s" = 0 ] || rc=1
      log "$tool exit $s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed' "$OUT/sanitize-$tool.log" | tail -2 | tr '\n' ' ')"
    done
  else
    log "compute-sanitizer not found"
  fi
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
  log "benchmark vs CUB"
  timeout "${BENCH_TIMEOUT:-500}" "$BIN/bench_cuda" $quick ${BENCH_ARGS:-} --out "$OUT/bench-table.md" > "$OUT/bench.log" 2>&1
  b=$?; [ "$b" = 0 ] || rc=1
  log "bench exit $b"
  sed -n '/=== TABLE/,$p' "$OUT/bench.log"
fi
exit $rc
