#!/usr/bin/env bash
# One script for the GPU machine, in one call: build the library twice (the default build, and
# the tuning build of docs/tuning.md) with the GPU test and the benchmark, run the GPU tests on
# both (the knob variants run in the tuning build; once with the > 2^31-element cases),
# compute-sanitizer memcheck and racecheck on the quick matrix, then time tally against CUB over
# 2^10 .. 2^30 elements (bench_cuda, tuning build: its variant rows need the knobs) and print
# that table last. Every step gets a share of a wall-clock budget (GPU_BUDGET seconds, default
# 500), so the whole script ends in time and the table is always printed.
#
#   bash bench/gpu.sh [all|build|test|sanitize|bench|lab|a,comma,list] [--quick]
#
# all = build,test,sanitize,bench. lab: `bench` of the tally lab program, if one was built.
# Files under $OUT (or ./gpu-out): gpu.log build.log test.log test-default.log sanitize.log
# bench.log bench-table.md (and lab-h200.md lab-h200.html with lab).
# GPU_DEFAULT=0: the tuning build alone (its tests cover the default knobs too; saves a build).
# GPU_BIN=dir: binaries built before (test_cuda, test_cuda_default, bench_cuda in dir, e.g. by
# `bash bench/gpu.sh build` on another machine) are used as they are.
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
quick=${2:-}
[ "$what" = all ] && what=build,test,sanitize,bench
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
B=${BUILD_DIR:-build-gpu}      # the tuning build; the default build is $B-default
BIN=${GPU_BIN:-$B/bin}
T0=$(date +%s)
BUDGET=${GPU_BUDGET:-500}
export PATH=$PATH:/usr/local/cuda/bin
log() { echo "== [$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/gpu.log"; }
# cap WANT RESERVE: seconds for a step: at most WANT, leaving RESERVE for the steps after it
cap() {
  local left=$(( BUDGET - ($(date +%s) - T0) - $2 ))
  [ "$left" -gt "$1" ] && left=$1
  [ "$left" -lt 5 ] && left=5
  echo "$left"
}
want() { [[ ",$what," == *",$1,"* ]]; }

log "$(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname); budget ${BUDGET}s; steps $what"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tee -a "$OUT/gpu.log"
nproc | sed 's/^/cpus: /' | tee -a "$OUT/gpu.log"

# Without cmake: the library with gcc and nvcc alone, the per-type CUDA translation units
# generated from the type table's rows as src/cuda/CMakeLists.txt does.
build_nvcc() {
  local dir=$1 def=$2 row name ctype kind f
  mkdir -p "$dir/obj" "$dir/gen" "$dir/bench"
  for row in $(sed -n 's/^ *TYPE(ctx, *[A-Z0-9]*, *\([a-z0-9]*\), *\([A-Za-z0-9_]*\),.*/\1:\2/p' src/core/types.h); do
    name=${row%%:*}; ctype=${row#*:}
    for kind in reduce scan; do
      sed "s/@TALLY_TYPE_NAME@/$name/g; s/@TALLY_TYPE_CTYPE@/$ctype/g" "src/cuda/${kind}_type.cu.in" >"$dir/gen/${kind}_$name.cu"
    done
  done
  for f in src/core/*.c src/cpu/*.c; do
    local extra=""
    case $f in
      *kernels_avx2.c) extra="-O3 -mavx2 -mfma -mbmi2";;
      *kernels_avx512.c) extra="-O3 -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma -mbmi2";;
      *_avx2.c) extra="-mavx2 -mfma -mbmi2";;
      *_avx512.c) extra="-mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma -mbmi2";;
      *kernels_scalar.c) extra="-fno-tree-vectorize";;
    esac
    echo "gcc -O2 -std=gnu11 -fPIC -ffp-contract=off -DTALLY_X86=1 -DTALLY_HAVE_CUDA=1 $def $extra -Iinclude -Isrc -c $f -o $dir/obj/$(basename "$f").o"
  done >"$dir/jobs"
  for f in src/cuda/*.cu "$dir"/gen/*.cu; do
    echo "nvcc -O3 -std=c++17 -arch=sm_90 -fmad=false -ftz=false -prec-div=true -prec-sqrt=true $def -Iinclude -Isrc -c $f -o $dir/obj/$(basename "$f").o"
  done >>"$dir/jobs"
  xargs -P "$(nproc)" -I{} sh -c '{}' <"$dir/jobs" || return 1
  ar rcs "$dir/libtally.a" "$dir"/obj/*.o || return 1
  if [ -n "$def" ]; then
    nvcc -O3 -std=c++17 -arch=sm_90 $def -Iinclude -Isrc bench/bench_cuda.cu "$dir/libtally.a" \
      -lpthread -ldl -lm -o "$dir/bench/bench_cuda" || return 1
  fi
}

# test_cuda is a plain program (no cmocka): compiled here against the library's headers.
# build_one DIR TUNING: the library and the benchmark by cmake (or nvcc alone), test_cuda by nvcc.
build_one() {
  local dir=$1 tuning=$2 j def=""
  j=$(nproc)
  [ "$tuning" = ON ] && def=-DTALLY_TUNING=1
  if ! command -v cmake >/dev/null; then
    build_nvcc "$dir" "$def" >"$dir.log" 2>&1 || return 1
    nvcc -O2 -std=c++17 -arch=sm_90 -Iinclude -Isrc $def tests/cuda/test_cuda.cu "$dir/libtally.a" \
      -lpthread -ldl -lm -o "$dir/test_cuda" >>"$dir.log" 2>&1
    return
  fi
  local gen=""
  command -v ninja >/dev/null && gen="-G Ninja"
  cmake -S . -B "$dir" $gen -DCMAKE_BUILD_TYPE=Release -DTALLY_CUDA=ON -DTALLY_TUNING="$tuning" \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DTALLY_BUILD_TESTS=OFF -DTALLY_BUILD_CLI=OFF \
    -DTALLY_BUILD_BENCH=ON >"$dir.log" 2>&1 || return 1
  local targets=tally_static
  [ "$tuning" = ON ] && targets="tally_static tally_bench_cuda"
  cmake --build "$dir" -j"$j" --target $targets >>"$dir.log" 2>&1 || return 1
  nvcc -O2 -std=c++17 -arch=sm_90 -Iinclude -Isrc $def tests/cuda/test_cuda.cu "$dir/libtally.a" \
    -lpthread -ldl -lm -o "$dir/test_cuda" >>"$dir.log" 2>&1
}

build() {
  mkdir -p "$B" "$BIN"
  log "building the tuning and the default library, test_cuda and bench_cuda"
  build_one "$B" ON & local pt=$!
  local pd=""
  if [ "${GPU_DEFAULT:-1}" != 0 ]; then build_one "$B-default" OFF & pd=$!; fi
  local ok=0
  wait $pt || { log "tuning build failed:"; tail -30 "$B.log" | tee -a "$OUT/gpu.log"; ok=1; }
  if [ -n "$pd" ]; then
    wait $pd || { log "default build failed:"; tail -30 "$B-default.log" | tee -a "$OUT/gpu.log"; ok=1; }
  fi
  cat "$B.log" "$B-default.log" >"$OUT/build.log" 2>/dev/null
  [ $ok = 0 ] || return 1
  cp "$B/test_cuda" "$BIN/test_cuda" && cp "$B/bench/bench_cuda" "$BIN/bench_cuda" || return 1
  if [ -n "$pd" ]; then
    cp "$B-default/test_cuda" "$BIN/test_cuda_default" || return 1
    log "libtally.a: $(du -b "$B-default/libtally.a" | cut -f1) bytes (default build), $(du -b "$B/libtally.a" | cut -f1) (tuning)"
  fi
}

if want build; then
  build || { log "BUILD FAILED"; exit 1; }
  log "built"
fi
if want test || want sanitize || want bench; then
  for b in test_cuda bench_cuda; do
    [ -x "$BIN/$b" ] || { log "missing $BIN/$b (run the build step)"; exit 1; }
  done
fi

rc=0
# Tests, memcheck and racecheck check answers only: they run side by side (one GPU, time-sliced),
# within one share of the budget; the timed steps run alone afterwards.
reserve=0
want lab && reserve=$((reserve + 150))
want bench && reserve=$((reserve + 100))
# (at most CHECK_CAP seconds, default 160: racecheck on the quick matrix needs about that much)
c_cap=$(cap "${CHECK_CAP:-160}" $reserve)
pids=()
mkdir -p "$B"
if want test; then
  big="--big"; [ -n "$quick" ] && big=""   # the > 2^31-element cases, once
  log "GPU tests: test_cuda (tuning build) $quick $big, test_cuda_default --quick (at most ${c_cap}s)"
  ( timeout "$c_cap" "$BIN/test_cuda" $quick $big >"$OUT/test.log" 2>&1; echo $? >"$B/test.rc" ) &
  pids+=($!)
  tests="test"
  if [ -x "$BIN/test_cuda_default" ]; then
    tests="test test-default"
    ( timeout "$c_cap" "$BIN/test_cuda_default" --quick >"$OUT/test-default.log" 2>&1; echo $? >"$B/test-default.rc" ) &
    pids+=($!)
  fi
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
  for t in $tests; do
    r=$(cat "$B/$t.rc" 2>/dev/null || echo 1); [ "$r" = 0 ] || rc=1
    grep -E 'FAIL' "$OUT/$t.log" | head -20
    log "$t exit $r$([ "$r" = 124 ] && echo ' (timed out)'): $(tail -1 "$OUT/$t.log")"
  done
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
  # the lab (tools/): whichever program of a CUDA build of the command offers `bench`
  LAB=${LAB_EXE:-$(find "$B" "$B-default" -type f -perm -u+x \( -name 'tally-lab' -o -name 'tally_lab' -o -name tally \) 2>/dev/null | head -1)}
  if [ -n "$LAB" ]; then
    l_cap=$(cap 100 150)
    log "$LAB bench --backend cuda (at most ${l_cap}s)"
    timeout "$l_cap" "$LAB" bench --backend cuda --sizes 2^12,2^16,2^20,2^24,2^26,2^28 \
      --min-time 0.02 --html "$OUT/lab-h200.html" >"$OUT/lab-h200.md" 2>>"$OUT/gpu.log"
    l=$?; [ "$l" = 0 ] || rc=1
    log "lab bench exit $l$([ "$l" = 124 ] && echo ' (timed out)')"
    tail -40 "$OUT/lab-h200.md"
  else
    log "lab: no lab program built (build the command with CUDA, or set LAB_EXE)"
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
