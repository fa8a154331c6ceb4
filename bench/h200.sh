#!/usr/bin/env bash
# Everything that needs the H200 machine, in one call, most important first, each step within a
# share of a wall-clock budget (H200_BUDGET seconds, default 540) so that the call ends in time:
#
#   build        one build (CUDA sm_90 with the tuning knobs, Vulkan when .gl/ is carried, the
#                GPU tests, the adversarial harness and the benchmarks); test_cuda by nvcc
#                (H200_TUNING=OFF: the shipped shapes only; H200_CUDA=OFF: no CUDA, for the
#                vulkan and cpu steps alone; VK_TEST_ENV="NAME=VALUE ...": set for test_vulkan)
#   cuda         test_cuda --quick, with compute-sanitizer memcheck and racecheck beside it
#   seg          the batched reduce (tally_reduce_segments/rows): test_cuda_segments (against the
#                exact reference and the CPU backend), memcheck and racecheck on its --quick run
#                beside it, then bench_cuda's seg_sum_rows rows (against CUB's
#                DeviceSegmentedReduce::Sum; table in seg-bench.md, printed in the summary)
#   adversarial  the adversarial harness on the CUDA backend, ADV_ARRAYS arrays (default 100000);
#                with the tuning knobs, its odd shards run the exact sums' bins (ADV_ODD_ENV, default
#                TALLY_CUDA_REDUCE_BINS=2 TALLY_CUDA_REDUCE_RING_MIN=1: every size through the ring
#                kernels, the only ones with bins, f64 in windows first; ADV_ODD_ENV= for none)
#   bench        bench_cuda: first the float sums alone at 2^28 (EXACT_ARGS), correctly rounded
#                against our plain sum for price-like, wide (2^-40..2^40) and full-range data, with
#                and without the bins (its EXACT vs PLAIN table is printed in the summary); then
#                host data to the GPU (1 GiB pinned/pageable/mmap'd, a few seconds) and tally
#                against CUB, 2^24 .. 2^30 (BENCH_ARGS=--min-log2 10 for all sizes)
#   vulkan       test_vulkan and the harness on the NVIDIA Vulkan driver, then bench_vulkan (its
#                reduce_sum_batch rows: 64 calls per command buffer; VK_BENCH_ARGS its sizes);
#                VK_PROBE=1 first times the one-pass f32 scan's phases by the shader clock
#                (bench/probe_fscan.c; VK_PROBE_LOG2 sizes);
#                VK_SHARES="reduce:50 scan:25 batch:20" adds the batch/segment tests, "big:60" the > 2^32-element
#                i8 reduce and scan (test_vulkan --big), "flookback:30" the one-pass float scan's
#                look-backs (whole segments; TALLY_TEST_FLOOKBACK_TILES), "flookkeep:30" the same with
#                16 A's kept (the fold's reads beyond KEEP; VK_FLOOK_TILES); then the one-pass scan's
#                look-back test (long chains, VK_SCAN_REPS stress runs; VK_LOOKBACK seconds, 0:
#                none); VK_LAB=1 builds tally-lab and runs seed 004's kernels on Vulkan (tally
#                bench --backend vulkan, lab-vulkan.txt); bench_cuda's reduce/scan rows at
#                2^22-2^30 in the same call (VK_CUDA seconds, 0: none; VK_CUDA_MIN_LOG2), joined with
#                bench_vulkan's in vulkan-vs-cuda.md and printed in the summary
#   specring     the speculative float sums through their ring: the harness, test_cuda --quick and
#                racecheck with it at every size, bench_cuda's float sums at 2^28 per TALLY_CUDA_SPEC_RING
#                (SPECRING_S)
#   python       the Python module for the machine's python (the torch venv): pytest with the GPU
#                tests, then bench/python_bench.py --gpu (carry .pyinc/ if that python has no
#                headers: any CPython >= 3.11's, e.g. cp -r /usr/include/python3.11/. .pyinc/ and
#                its pyconfig.h)
#   mpi          libtally_mpi (when the machine has Open MPI's headers): test_mpi at 4 and 16 ranks,
#                CUDA ranks sharing the GPU, the weak-scaling table (bench/mpi.sh without its build)
#   cpu          the CPU backend on the host's cores: the reductions/scans against a read loop and
#                memcpy (bench_cpu, 2^28 elements (CPU_N); best of CPU_R=5 runs, each run of ours
#                right after one of its baseline; its table is printed last), then the exact sums'
#                scaling table (bench_cpu -x at CPU_XT=1,2,4,8,16 threads), the short arrays'
#                one-pass sums (bench_exact -s, 1Ki..64Ki) and the candidate loops' cost on this
#                core (bench/probe_small.c; CPU_SMALL=0: neither); CPU_XN=16777216: the -x table
#                again in the L3 (cpu-exact-l3.md, with lscpu); TALLY_BENCH_XPF="FAR,NEAR;...": the
#                -x tables' wide and full-range rows again per exact-kernel prefetch setting
#   cpuscale     bench_cpu -q at 16, 8, 4, 2 and 1 threads (CPU_THREADS): the reductions and every scan
#                (i32 i64 f32 f64; sum, max; exclusive f32 sum), each row beside the read loop / memcpy
#                of the same run; 2^28 elements (CPU_N) from 4 threads, 2^27 (CPU_N_LOW, still 2-4x
#                the L3) at 1 and 2, as the summary's n row says; prints the ratios per thread count
#                (CPUSCALE_S, default 150 s, split so that every thread count gets its turn: the later
#                runs' needs CPUSCALE_NEED="60 30 12" s (1, 2, 4+ threads) are kept for them, and a
#                short budget is shared in proportion to them; best of CPUSCALE_R=3 runs; tables in
#                cpu-t<T>.md, a run stopped by its limit keeps its rows; the log has each run's seconds)
#   cpuperf      where the scans' time goes at 16, 4 and 1 threads (CPUPERF_THREADS): perf stat and
#                perf record of bench_cpu -s (the i32 and f32 sum scans, 2^27 elements (CPUPERF_N)),
#                perf from the PATH or .perf/
#                (Debian's linux-perf and its libraries, unpacked under /tmp, not over /: fetch with
#                mkdir -p .perf && cd .perf && apt-get download linux-perf libbabeltrace1 libdw1
#                libelf1 libnuma1 libopencsd1 libperl5.36 libpython3.11 libslang2 libunwind8
#                libglib2.0-0 libexpat1 libpcre2-8-0 libcap2, and carry .perf); files cpu-perf-t<T>.txt (CPUPERF_S, default 60 s)
#   cpusweep     the reductions' memory knobs at all cores (TALLY_CPU_TUNE, src/cpu/state.h): software
#                prefetch distance (0: none), prefetch burst (pf_bytes) and chunk sizes, one bench_cpu
#                run per setting (CPUSWEEP_S, default 150 s; CPU_TUNES overrides the list,
#                ';'-separated; tables in cpu-tune<i>.md)
#   scansweep    the scans' knobs at 2 and 4 threads (SCANSWEEP_THREADS): bench_cpu -s (i32 and f32
#                sum scans, 2^27 elements) per TALLY_CPU_TUNE setting: the piece size (scan_piece,
#                bytes; default a quarter of L2) and the next piece's prefetch (scan_pf=0: none);
#                SCANSWEEP_S, default 60 s; SCAN_TUNES overrides the list (';'-separated, '-' = default)
#   scanio       `tally scan sum` of a 4 GiB float32 .npy in /dev/shm into /dev/shm against `cp` of
#                it (bench/cli_scan.sh: output checked against the one-call scan first; ~30 s);
#                makes the build step build the tally command too
#
#   bash bench/h200.sh [step,step,...]        (default: all but cpu, in that order)
#
# Vulkan needs the loader and glslc from Debian (the driver's own ICD manifest names a library
# that needs a display): fetch them on a networked machine with
#   mkdir -p .gl && cd .gl && apt-get download libvulkan1 libvulkan-dev glslc libshaderc1
# and carry .gl with the call. Files under $OUT: h200.log and all.tgz (build.log, every step's log
# and table, logs.tgz), since the device tool brings back only a few files.
set -uo pipefail
cd "$(dirname "$0")/.."
steps=${1:-build,cuda,adversarial,bench,vulkan}
OUT=${OUT:-$PWD/gpu-out}
L=$OUT/logs                    # every step's log; packed into logs.tgz at the end
mkdir -p "$OUT" "$L"
B=${BUILD_DIR:-build-h200}
T0=$(date +%s)
BUDGET=${H200_BUDGET:-540}
export PATH=$PATH:/usr/local/cuda/bin
log() { echo "== [$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/h200.log"; }
want() { [[ ",$steps," == *",$1,"* ]]; }
# cap WANT RESERVE: seconds for a step, at most WANT; when WANT + RESERVE (the steps after it) no
# longer fit in what is left of the budget, the step gets its proportional part of what is left
# (a fixed reserve left the first steps 5 s when an earlier step ran long)
cap() {
  local rem=$(( BUDGET - ($(date +%s) - T0) )) s=$1
  [ $(( $1 + $2 )) -gt "$rem" ] && s=$(( $1 * rem / ($1 + $2) ))
  [ "$s" -lt 5 ] && s=5
  echo "$s"
}
# reap STEP: kill what an earlier step left running on the GPU. timeout stops compute-sanitizer, but
# the program it runs can survive it and keep the GPU busy, which slowed every later timing ~2.5x
reap() {
  local p
  p=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | tr -d ' ' | grep -E '^[0-9]+$')
  pkill -9 -f compute-sanitizer 2>/dev/null
  [ -z "$p" ] && return 0
  log "before $1: GPU processes still running, killed: $(nvidia-smi --query-compute-apps=pid,process_name \
    --format=csv,noheader 2>/dev/null | tr '\n' ';')"
  kill -9 $p 2>/dev/null; sleep 1
}
# a step's share (settable: CUDA_S, SEG_S, ADV_S, BENCH_S, PY_S, VK_S, MPI_S, CPU_S), and the shares of
# the requested steps among those named (what a step leaves for the steps after it)
W() {
  case $1 in
    cuda) echo "${CUDA_S:-90}" ;; seg) echo "${SEG_S:-120}" ;; adversarial) echo "${ADV_S:-120}" ;; bench) echo "${BENCH_S:-130}" ;;
    python) echo "${PY_S:-110}" ;; vulkan) echo "${VK_S:-130}" ;; mpi) echo "${MPI_S:-100}" ;;
    cpu) echo "${CPU_S:-150}" ;; scanio) echo "${SCANIO_S:-60}" ;;
    cpuscale) echo "${CPUSCALE_S:-150}" ;; cpusweep) echo "${CPUSWEEP_S:-150}" ;;
    cpuperf) echo "${CPUPERF_S:-60}" ;; scansweep) echo "${SCANSWEEP_S:-60}" ;; *) echo 0 ;;
  esac
}
rest() { local s=0 x; for x in "$@"; do want "$x" && s=$((s + $(W "$x"))); done; echo "$s"; }
log "$(date -u '+%Y-%m-%d %H:%M UTC'); steps $steps; budget ${BUDGET}s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tee -a "$OUT/h200.log"

VK=OFF
if ls .gl/*.deb >/dev/null 2>&1; then
  if ! ldconfig -p | grep -q libvulkan.so.1 || ! command -v glslc >/dev/null; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
  fi
  mkdir -p /tmp/tally-icd
  echo '{"file_format_version":"1.0.1","ICD":{"library_path":"libEGL_nvidia.so.0","api_version":"1.4.312"}}' \
    >/tmp/tally-icd/nvidia_egl.json
  export VK_ICD_FILENAMES=/tmp/tally-icd/nvidia_egl.json VK_DRIVER_FILES=/tmp/tally-icd/nvidia_egl.json
  export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
  VK=ON
fi

PY=${PY:-$(command -v python3)}
PYARGS=(-DTALLY_PYTHON=OFF)
if want python; then
  inc=$($PY -c "import sysconfig, os; p = sysconfig.get_paths()['include']; print(p if os.path.exists(os.path.join(p, 'Python.h')) else '')" 2>/dev/null)
  PYARGS=(-DTALLY_PYTHON=ON -DPython3_EXECUTABLE="$PY")
  if [ -z "$inc" ]; then
    for d in /usr/include/python3.1[1-9] "$PWD/.pyinc"; do
      [ -f "$d/Python.h" ] && { PYARGS+=(-DTALLY_PYTHON_INCLUDE="$d"); break; }
    done
  fi
fi

# Only CPU steps asked for (cpu, cpuscale, cpusweep): a CPU-only build of the two benchmarks (~30 s)
cpu_only=1
for st in cuda seg adversarial bench specring vulkan python mpi scanio; do want $st && cpu_only=0; done
if want build && [ $cpu_only = 1 ]; then
  log "building in $B-cpu, CPU only ($(nproc) cores)"
  { cmake -S . -B "$B-cpu" -DCMAKE_BUILD_TYPE=Release -DTALLY_CUDA=OFF -DTALLY_VULKAN=OFF -DTALLY_MPI=OFF \
      -DTALLY_PYTHON=OFF -DTALLY_BUILD_CLI=OFF -DTALLY_BUILD_LAB=OFF -DTALLY_BUILD_TESTS=OFF -DTALLY_BUILD_BENCH=ON &&
    cmake --build "$B-cpu" -j"$(nproc)" --target tally_bench_cpu tally_bench_exact; } >"$L/build.log" 2>&1 ||
    { tail -30 "$L/build.log"; log "BUILD FAILED"; exit 1; }
  B=$B-cpu
  log "built"
elif want build; then
  j=$(nproc)
  log "building in $B ($j cores; CUDA ${H200_CUDA:-ON}, Vulkan $VK)"
  gen=""
  command -v ninja >/dev/null && gen="-G Ninja"
  # H200_CUDA=OFF: no CUDA at all (the vulkan and cpu steps only: no test_cuda, no bench_cuda, so
  # no CUDA or CUB rows beside Vulkan's; the build is ~a minute shorter)
  CUDA=${H200_CUDA:-ON}
  targets="tally_static tally_adversarial tally_bench_cpu tally_bench_exact"
  [ "$CUDA" = ON ] && targets="$targets tally_bench_cuda"
  [ $VK = ON ] && targets="$targets test_vulkan test_vulkan_spec tally_bench_vulkan probe_fscan"
  [ $VK = ON ] && [ "${VK_LAB:-0}" = 1 ] && targets="$targets tally-lab"   # the lab's Vulkan kernels
  want python && targets="$targets tally tally_python"
  want seg && targets="$targets test_cuda_segments"
  MPI=OFF; want mpi && MPI=ON
  CLI=OFF; want scanio && { CLI=ON; targets="$targets tally_cli"; }
  TUNING=${H200_TUNING:-ON}   # OFF: the shipped kernel shapes only (a shorter build; bench_cuda's knobs off)
  { cmake -S . -B "$B" $gen -DCMAKE_BUILD_TYPE=Release -DTALLY_CUDA=$CUDA -DTALLY_TUNING=$TUNING \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DTALLY_VULKAN=$VK -DTALLY_MPI=$MPI "${PYARGS[@]}" \
      -DTALLY_BUILD_CLI=$CLI -DTALLY_BUILD_LAB=OFF -DTALLY_BUILD_TESTS=ON -DTALLY_BUILD_BENCH=ON &&
    { [ $MPI = OFF ] || ! cmake --build "$B" --target help | grep -q tally_bench_mpi ||
        targets="$targets test_mpi test_mpi_cuda tally_bench_mpi"; } &&
    cmake --build "$B" -j"$j" --target $targets &&
    { [ "$CUDA" = OFF ] ||
      nvcc -O2 -std=c++17 -arch=sm_90 -Iinclude -Isrc $([ $TUNING = ON ] && echo -DTALLY_TUNING=1) tests/cuda/test_cuda.cu \
        "$B/libtally.a" -lpthread -ldl -lm -o "$B/test_cuda"; }; } >"$L/build.log" 2>&1 ||
    { tail -30 "$L/build.log"; log "BUILD FAILED"; exit 1; }
  log "built"
fi
ADV=$(find "$B" -name tally_adversarial -type f | head -1)
rc=0

if want cuda; then
  reap cuda
  c=$(cap "$(W cuda)" "$(rest seg adversarial bench python vulkan mpi cpu)")
  log "test_cuda --quick and memcheck on it, racecheck on the harness's exact sums, side by side (at most ${c}s)"
  ( timeout "$c" "$B/test_cuda" --quick >"$L/test_cuda.log" 2>&1; echo $? >"$B/t.rc" ) &
  p1=$!
  ( timeout "$c" compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test_cuda" --quick >"$L/memcheck.log" 2>&1; echo $? >"$B/m.rc" ) &
  p2=$!
  # (the speculative sum first at every size, TALLY_CUDA_SPEC=2: these families mostly decline
  # to the exact kernel, so both kernels are checked)
  ( TALLY_CUDA_SPEC=2 timeout "$c" compute-sanitizer --tool racecheck --error-exitcode 9 "$ADV" --backends cuda --arrays 40 \
      --max-n 65536 --families huge_tiny,partial_overflow,ties,cancel_wide >"$L/racecheck.log" 2>&1; echo $? >"$B/r.rc" ) &
  p3=$!
  # the same with the exact sums' bins (tuning builds: every size through the ring kernels; f64
  # and f32 in register windows first, then the shared bins)
  echo 0 >"$B/rb.rc"
  ( [ "${H200_TUNING:-ON}" = ON ] || exit 0
    TALLY_CUDA_REDUCE_BINS=2 TALLY_CUDA_REDUCE_RING_MIN=1 timeout "$c" compute-sanitizer --tool racecheck \
      --error-exitcode 9 "$ADV" --backends cuda --arrays 40 --max-n 65536 \
      --families huge_tiny,partial_overflow,cancel_wide,full_range,specials >"$L/racecheck-bins.log" 2>&1; echo $? >"$B/rb.rc" ) &
  p4=$!
  wait $p1 $p2 $p3 $p4
  for t in t:test_cuda m:memcheck r:racecheck rb:racecheck-bins; do
    [ -f "$L/${t#*:}.log" ] || continue
    r=$(cat "$B/${t%%:*}.rc"); [ "$r" = 0 ] || rc=1
    log "${t#*:} exit $r$([ "$r" = 124 ] && echo ' (timed out)'): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed' "$L/${t#*:}.log" | tail -1)"
  done
  grep -h FAIL "$L/test_cuda.log" | head -10
  grep -h '^auto:' "$L/test_cuda.log" | head -2
fi

if want seg; then
  reap seg
  c=$(cap "$(W seg)" "$(rest adversarial bench python vulkan mpi cpu)")
  S=$(find "$B" -name test_cuda_segments -type f | head -1)
  log "seg: test_cuda_segments, memcheck and racecheck on its --quick run beside it (at most $((c * 3 / 4))s)"
  ( timeout $((c * 3 / 4)) "$S" >"$L/test_cuda_segments.log" 2>&1; echo $? >"$B/st.rc" ) &
  p1=$!
  ( timeout $((c * 3 / 4)) compute-sanitizer --tool memcheck --error-exitcode 9 "$S" --quick \
      >"$L/seg-memcheck.log" 2>&1; echo $? >"$B/sm.rc" ) &
  p2=$!
  ( timeout $((c * 3 / 4)) compute-sanitizer --tool racecheck --error-exitcode 9 "$S" --quick \
      >"$L/seg-racecheck.log" 2>&1; echo $? >"$B/sr.rc" ) &
  p3=$!
  wait $p1 $p2 $p3
  for t in st:test_cuda_segments sm:seg-memcheck sr:seg-racecheck; do
    r=$(cat "$B/${t%%:*}.rc"); [ "$r" = 0 ] || rc=1
    log "seg: ${t#*:} exit $r$([ "$r" = 124 ] && echo ' (timed out)'): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed' "$L/${t#*:}.log" | tail -1)"
  done
  grep -h FAIL "$L/test_cuda_segments.log" | head -10
  c=$(cap $((c / 4)) "$(rest adversarial bench python vulkan mpi cpu)")
  log "seg: bench_cuda seg_sum_rows against CUB DeviceSegmentedReduce::Sum (at most ${c}s)"
  timeout "$c" "$B/bench/bench_cuda" --filter seg_sum_rows --min-log2 26 --max-log2 26 \
    --out "$OUT/seg-bench.md" >"$L/seg-bench.log" 2>&1 || rc=1
  log "seg: bench_cuda seg_sum_rows $(grep 'validation failures' "$L/seg-bench.log" | tail -1)"
fi

if want adversarial; then
  reap adversarial
  c=$(cap "$(W adversarial)" "$(rest bench python vulkan mpi cpu)")
  log "adversarial harness on CUDA (at most ${c}s)"
  odd_env="TALLY_CUDA_REDUCE_BINS=2 TALLY_CUDA_REDUCE_RING_MIN=1"
  [ "${H200_TUNING:-ON}" = ON ] || odd_env=""
  ADV_ODD_ENV=${ADV_ODD_ENV-$odd_env} ADV_BIN=$ADV OUT=$L bash tests/adversarial/run_gpu.sh "${ADV_ARRAYS:-100000}" "$(( c > 13 ? c - 10 : 3 ))" \
    --max-n "${ADV_MAX_N:-1048576}" >"$L/adversarial-summary.log" 2>&1 || rc=1
  tail -22 "$L/adversarial-summary.log"
  log "adversarial on CUDA: $(tail -1 "$L/adversarial-summary.log")"
fi

if want bench; then
  reap bench
  c=$(cap "$(W bench)" "$(rest python vulkan mpi cpu)")
  ce=$(( c / 3 ))
  log "bench_cuda: the float sums at 2^28, correctly rounded against plain (at most ${ce}s)"
  timeout "$ce" "$B/bench/bench_cuda" --deadline $((ce - 10)) --filter reduce_sum,plain_sum \
    ${EXACT_ARGS:---min-log2 28 --max-log2 28} --out "$OUT/bench-exact.md" >"$L/bench-exact.log" 2>&1 || rc=1
  log "bench_cuda (exact sums): $(grep 'validation failures' "$L/bench-exact.log" | tail -1)"
  c=$(cap $(( c - ce )) "$(rest python vulkan mpi cpu)")
  log "bench_cuda against CUB (at most ${c}s)"
  timeout "$c" "$B/bench/bench_cuda" --deadline $((c - 20)) ${BENCH_ARGS:---min-log2 24} \
    --out "$OUT/bench-cuda.md" >"$L/bench-cuda.log" 2>&1 || rc=1
  log "bench_cuda: $(grep 'validation failures' "$L/bench-cuda.log" | tail -1)"
  # host data to the GPU (1 GiB pinned, pageable, mmap'd), printed by bench_cuda first and last
  sed -n '/^Host data to the GPU/,/^auto rule/p' "$L/bench-cuda.log" | head -14
fi

if want specring; then
  # the speculative f32/f64 pass through its shared-memory ring (spec_sum.cuh, spec_ring_kernel; the
  # default from 32 MiB): the harness with the pass first at every size and the ring from one batch
  # (shards 2, 6, ...: one block per SM; odd shards: two), test_cuda --quick the same way and
  # racecheck on the ring, then bench_cuda's float sums at 2^28 per TALLY_CUDA_SPEC_RING (0: the
  # register loads, as before the ring)
  reap specring
  c=$(cap "${SPECRING_S:-150}" "$(rest python vulkan mpi cpu)")
  log "specring: the harness, test_cuda --quick and racecheck with the ring at every size (at most $((c * 2 / 3))s)"
  ( TALLY_CUDA_SPEC=2 TALLY_CUDA_SPEC_RING_MIN=1 timeout $((c * 2 / 3)) compute-sanitizer --tool racecheck --error-exitcode 9 \
      "$ADV" --backends cuda --arrays 30 --max-n 262144 --families wide40,prices,full_range \
      >"$L/specring-racecheck.log" 2>&1; echo $? >"$B/srr.rc" ) &
  p1=$!
  ( TALLY_CUDA_SPEC=2 TALLY_CUDA_SPEC_RING_MIN=1 timeout $((c * 2 / 3)) "$B/test_cuda" --quick >"$L/specring-test_cuda.log" 2>&1
    echo $? >"$B/srt.rc" ) &
  p2=$!
  ADV_JOBS=$(( $(nproc) > 4 ? $(nproc) - 3 : 2 )) ADV_SPEC_ENV="TALLY_CUDA_SPEC=2 TALLY_CUDA_SPEC_RING_MIN=1" \
    ADV_ODD_ENV="TALLY_CUDA_SPEC=2 TALLY_CUDA_SPEC_RING_MIN=1 TALLY_CUDA_SPEC_RING=2" ADV_BIN=$ADV OUT=$L/specadv \
    bash tests/adversarial/run_gpu.sh "${SPECRING_ARRAYS:-100000}" $(( c * 2 / 3 - 8 )) --max-n 4194304 \
    >"$L/specring-adversarial.log" 2>&1 || rc=1
  wait $p1 $p2
  r=$(cat "$B/srr.rc"); t=$(cat "$B/srt.rc"); [ "$r" = 0 ] && [ "$t" = 0 ] || rc=1
  tail -22 "$L/specring-adversarial.log"
  log "specring: harness $(tail -1 "$L/specring-adversarial.log"); test_cuda exit $t: $(grep -E 'passed' \
    "$L/specring-test_cuda.log" | tail -1); racecheck exit $r: $(grep -E 'RACECHECK SUMMARY' "$L/specring-racecheck.log" | tail -1)"
  grep -h FAIL "$L/specring-test_cuda.log" | head -5
  c=$(cap $(( c / 3 )) "$(rest python vulkan mpi cpu)")
  for ring in 1 0 2; do
    TALLY_CUDA_SPEC_RING=$ring timeout $(( c / 3 )) "$B/bench/bench_cuda" --deadline $(( c / 3 - 5 )) --filter reduce_sum,plain_sum \
      ${SPECRING_ARGS:---min-log2 28 --max-log2 28} --out "$OUT/specring-$ring.md" >"$L/specring-bench-$ring.log" 2>&1 || rc=1
    log "specring: bench_cuda TALLY_CUDA_SPEC_RING=$ring $(grep 'validation failures' "$L/specring-bench-$ring.log" | tail -1)"
    sed -n '/=== EXACT vs PLAIN/,$p' "$L/specring-bench-$ring.log" | grep -E "^\| f(32|64) " | cut -c1-150 |
      sed "s/^/ring=$ring /" | tee -a "$OUT/specring.md"
  done
fi

if want python; then
  reap python
  c=$(cap "$(W python)" "$(rest vulkan mpi cpu)")
  log "python: pytest (GPU tests included), then the speed table (at most ${c}s)"
  timeout "$((c * 2 / 3))" $PY python/tests/run_tests.py "$B/python" -x >"$L/python-tests.log" 2>&1
  r=$?; [ "$r" = 0 ] || rc=1
  log "python tests exit $r: $(grep -E 'passed|failed|error' "$L/python-tests.log" | tail -1)"
  PYTHONPATH="$B/python" timeout "$((c / 3))" $PY bench/python_bench.py --gpu --lib "$B/libtally.so" \
    --markdown "$OUT/python-bench.md" >"$L/python-bench.log" 2>&1 || rc=1
  log "python bench: $(tail -1 "$L/python-bench.log")"
fi

if want vulkan && [ $VK = ON ]; then
  reap vulkan
  # as ctest runs it: 64 KiB segments (so calls cross segment boundaries, where the scans' and
  # the reduce's cross-dispatch ordering shows) and float scans in shaders (no IEEE subnormals
  # here); the reduce matrix first, then the scans, each within its share
  export TALLY_VULKAN_SEGMENT_BYTES=65536 TALLY_VULKAN_FLOAT_SHADERS=1
  for part in ${VK_SHARES:-reduce:50 scan:25}; do   # VK_SHARES: "part:seconds ..." (none: no part)
    [ "$part" = none ] && continue
    c=$(cap "${part#*:}" "$(( $(rest mpi cpu) + 30 ))")
    log "test_vulkan --only ${part%%:*} on the NVIDIA driver (at most ${c}s)"
    # part "big": the > 2^32-element i8 reduce and in-place scan (--big), with whole segments;
    # part "flookback": the one-pass float scan's long look-backs, whole segments too
    # part "flookkeep": the same with 16 A's kept (the fold reads the rest again: its path
    # beyond KEEP, which only long walks take) over VK_FLOOK_TILES tiles (default 600)
    # (VK_TEST_ENV="NAME=VALUE ...": settings for every part, e.g. a shader variant under test)
    timeout "$c" env $(case "${part%%:*}" in big|flookback) echo -u TALLY_VULKAN_SEGMENT_BYTES;;
                         flookkeep) echo -u TALLY_VULKAN_SEGMENT_BYTES TALLY_VULKAN_FSCAN_KEEP=16 \
                           TALLY_TEST_FLOOKBACK_TILES=${VK_FLOOK_TILES:-600};; esac) ${VK_TEST_ENV:-} \
      "$B/tests/vulkan/test_vulkan" --only "$(echo "${part%%:*}" | sed s/flookkeep/flookback/)" \
      $([ "${part%%:*}" = big ] && echo --big) \
      >"$L/test_vulkan-${part%%:*}.log" 2>&1
    r=$?; [ "$r" = 0 ] || rc=1
    grep '^FAIL' "$L/test_vulkan-${part%%:*}.log" | head -5
    log "test_vulkan ${part%%:*} exit $r$([ "$r" = 124 ] && echo ' (timed out)'): $(grep -E 'passed' "$L/test_vulkan-${part%%:*}.log" | tail -1)"
  done
  # the speculative f32/f64 sums (spec.comp; =2, the default, set explicitly): answers, midpoint traps, declines (VK_SPEC_S seconds)
  if [ -x "$B/tests/vulkan/test_vulkan_spec" ] && [ "${VK_SPEC_S:-60}" -gt 0 ]; then
    TALLY_VULKAN_SPEC=2 timeout "${VK_SPEC_S:-60}" "$B/tests/vulkan/test_vulkan_spec" >"$L/test_vulkan-spec.log" 2>&1
    r=$?; [ "$r" = 0 ] || rc=1
    grep '^FAIL' "$L/test_vulkan-spec.log" | head -5
    log "test_vulkan_spec exit $r: $(grep -E '^(ordinary|midpoint|batches)' "$L/test_vulkan-spec.log" | tr '\n' ';') $(tail -1 "$L/test_vulkan-spec.log")"
    # again in spec.comp's other shapes (4 triples, the step written out, f32 vectors first, selects)
    TALLY_VULKAN_SPEC=2 TALLY_VULKAN_SPEC_T=4 TALLY_VULKAN_SPEC_STEP=1 TALLY_VULKAN_SPEC_Q4=1 TALLY_VULKAN_SPEC_SEL=1 \
      timeout "${VK_SPEC_S:-60}" "$B/tests/vulkan/test_vulkan_spec" >"$L/test_vulkan-spec-t4.log" 2>&1
    r=$?; [ "$r" = 0 ] || rc=1
    grep '^FAIL' "$L/test_vulkan-spec-t4.log" | head -5
    log "test_vulkan_spec (T=4, STEP, Q4, SEL) exit $r: $(tail -1 "$L/test_vulkan-spec-t4.log")"
  fi
  unset TALLY_VULKAN_SEGMENT_BYTES TALLY_VULKAN_FLOAT_SHADERS
  log "vulkan $(cat "$L"/test_vulkan-*.log 2>/dev/null | grep -m1 '^device:')"
  # the one-pass scan with whole segments (look-back chains of hundreds of tiles), a stress
  # repetition, then every wait turned into the fallback at once (its tile reductions on a GPU)
  lb=${VK_LOOKBACK:-30}
  if [ "$lb" -gt 0 ]; then
    for sp in default 0; do
      c=$(cap "$([ $sp = default ] && echo $((lb * 2 / 3)) || echo $((lb / 3)))" "$(( $(rest mpi cpu) + 30 ))")
      log "test_vulkan --only lookback, spins $sp (at most ${c}s)"
      env $([ $sp = 0 ] && echo TALLY_VULKAN_SCAN_SPINS=0) TALLY_TEST_SCAN_REPS=${VK_SCAN_REPS:-200} \
        TALLY_TEST_LOOKBACK_TILES=${VK_LOOKBACK_TILES:-400} timeout "$c" "$B/tests/vulkan/test_vulkan" --only lookback \
        >"$L/test_vulkan-lookback-$sp.log" 2>&1
      r=$?; [ "$r" = 0 ] || rc=1
      grep '^FAIL' "$L/test_vulkan-lookback-$sp.log" | head -5
      log "test_vulkan lookback (spins $sp) exit $r$([ "$r" = 124 ] && echo ' (timed out)'): $(grep -E '^  stress' "$L/test_vulkan-lookback-$sp.log" | tail -1); $(grep -E 'passed' "$L/test_vulkan-lookback-$sp.log" | tail -1)"
    done
  fi
  # AUTO's GPU: CUDA here; with CUDA hidden, the H200 through Vulkan (a real GPU)
  for cv in visible hidden; do
    a=$(env $([ $cv = hidden ] && echo CUDA_VISIBLE_DEVICES=) timeout 60 "$B/tests/vulkan/test_vulkan" --only auto 2>&1)
    r=$?; [ "$r" = 0 ] || rc=1
    log "AUTO with CUDA $cv: exit $r, $(echo "$a" | grep -E '^(auto:|FAIL)' | tr '\n' ' ')"
  done
  va=${VK_ADV:-35}
  if [ "$va" -gt 0 ]; then   # VK_ADV=0: no harness run (timeout 0 would mean no limit)
  log "the adversarial harness on Vulkan (at most ${va}s)"
  # VK_ADV_JOBS shards (run_gpu.sh; default 1), shards 2, 6, ... with the f32 tier off
  # (TALLY_VULKAN_SPEC=1: the exact fold); VK_ADV_ARRAYS arrays, VK_ADV_MAX_N elements at most.
  # Shards started on an empty pipeline cache each compile every pipeline at once (15 of them ran
  # 76 arrays in 40 s where one process ran 1,019 in 110 s), so with more than one shard a single
  # process first fills the cache file (TALLY_VULKAN_PIPELINE_CACHE), once as the even shards run
  # and once as the spec shards do (VK_ADV_WARM seconds each, default 20), and the shards load it
  export TALLY_VULKAN_PIPELINE_CACHE=${TALLY_VULKAN_PIPELINE_CACHE:-/tmp/tally-pcache}
  vj=${VK_ADV_JOBS:-1}
  if [ "$vj" -gt 1 ]; then
    for we in "" TALLY_VULKAN_SPEC=1; do
      tw=$(date +%s)
      # --seconds is checked between arrays and a first array compiles its pipelines: the timeout
      # leaves room for one, so that the process ends by itself and writes the cache
      env $we timeout $(( ${VK_ADV_WARM:-20} + 30 )) "$ADV" --backends vulkan --seed 7 --arrays 400 --max-n 65536 \
        --seconds "${VK_ADV_WARM:-20}" >"$L/adversarial-vulkan-warm.log" 2>&1
      log "pipeline cache warmed [${we:-default}]: exit $?, $(tail -1 "$L/adversarial-vulkan-warm.log"), $(( $(date +%s) - tw ))s"
      va=$(( va - $(date +%s) + tw ))
    done
  fi
  ta=$(date +%s)
  ADV_JOBS=$vj ADV_BACKENDS=vulkan ADV_ODD_ENV= ADV_SPEC_ENV=TALLY_VULKAN_SPEC=1 ADV_BIN=$ADV OUT=$L/vkadv \
    timeout "$va" bash tests/adversarial/run_gpu.sh "${VK_ADV_ARRAYS:-100000}" $((va - 10)) \
    --max-n "${VK_ADV_MAX_N:-1048576}" >"$L/adversarial-vulkan.log" 2>&1
  r=$?; [ "$r" = 0 ] || rc=1
  log "adversarial on Vulkan: $vj shards, $(( $(date +%s) - ta ))s"
  cp "$L/vkadv/adversarial.log" "$L/adversarial-vulkan-shards.log" 2>/dev/null
  grep '^FAIL' "$L/adversarial-vulkan.log" | head -5
  tail -20 "$L/adversarial-vulkan.log"
  log "adversarial on Vulkan exit $r: $(tail -1 "$L/adversarial-vulkan.log")"
  fi
  # VK_PROBE=1: where the one-pass f32 scan's time goes, by the shader clock (probe_fscan at
  # 2^VK_PROBE_LOG2, default 26: one segment), each table in probe-fscan-N-I.md
  # (VK_PROBE_ENVS: settings separated by ";", one run each, e.g.
  # "TALLY_VULKAN_FSCAN_CHAIN_PF=0;TALLY_VULKAN_FSCAN_BLOCKS=2"; default: one run as is)
  if [ "${VK_PROBE:-0}" = 1 ] && [ -x "$B/bench/probe_fscan" ]; then
    for lg in ${VK_PROBE_LOG2:-26}; do
      i=0
      IFS=';' read -ra pes <<<"${VK_PROBE_ENVS:- }"
      for pe in "${pes[@]}"; do
        i=$((i + 1))
        env $pe TALLY_VULKAN_FSCAN_PROBE=1 timeout 60 "$B/bench/probe_fscan" --log2 "$lg" --reps 5 \
          >"$OUT/probe-fscan-$lg-$i.md" 2>&1
        r=$?; [ "$r" = 0 ] || rc=1
        log "probe_fscan 2^$lg [$pe] exit $r: $(head -2 "$OUT/probe-fscan-$lg-$i.md" | tr '\n' ' ')"
      done
    done
  fi
  c=$(cap "${VK_BENCH:-45}" "$(rest mpi cpu)")
  [ "${VK_BENCH:-45}" = 0 ] && c=0   # VK_BENCH=0: no bench_vulkan (nor bench_cuda's rows beside it)
  if [ "$c" -gt 0 ]; then
  log "bench_vulkan (at most ${c}s)"
  # the SM clock during the run (nvidia-smi dmon, once a second): the GPU's clocks fall while it idles
  nvidia-smi dmon -s pc -d 1 >"$L/bench-vulkan-dmon.log" 2>&1 & dm=$!
  # each case is preceded by batched large reductions until the SM clock reads VK_CLOCK_MIN MHz
  # (at most VK_HEAT seconds); each row's note carries the clock before and after its timed runs
  TALLY_BENCH_CLOCK_CMD="nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits -i 0" \
  TALLY_BENCH_CLOCK_MIN=${VK_CLOCK_MIN:-1800} \
  timeout "$c" "$B/bench/tally_bench_vulkan" ${VK_BENCH_ARGS:---min-log2 10 --max-log2 30 --step 4} --min-time 0.02 \
    --warm "${VK_WARM:-0.05}" --heat "${VK_HEAT:-1.5}" --out "$OUT/bench-vulkan.md" >"$L/bench-vulkan.log" 2>&1 || rc=1
  kill $dm 2>/dev/null
  log "bench_vulkan: SM clock MHz during it (min/median/max of dmon's samples): $(awk '/^# *gpu/ {for (i = 2; i <= NF; i++) if ($i == "pclk") c = i - 1}
    $1 !~ /^#/ && c {print $c}' "$L/bench-vulkan-dmon.log" | sort -n | awk '{a[NR]=$1} END {if (NR) print a[1] "/" a[int((NR+1)/2)] "/" a[NR]}')"
  log "bench_vulkan: $(grep -c 'VALIDATION FAILED' "$L/bench-vulkan.log") validation failures"
  # our CUDA backend and CUB on the same ops and sizes, in the same call, joined by (op, type, n)
  vc=${VK_CUDA:-30}
  BC=$B/bench/bench_cuda
  if [ "$vc" -gt 0 ] && [ -x "$BC" ]; then
    c=$(cap "$vc" "$(rest mpi cpu)")
    log "bench_cuda reduce/scan rows at 2^22-2^30 beside Vulkan's (at most ${c}s)"
    timeout "$c" "$BC" --min-log2 ${VK_CUDA_MIN_LOG2:-22} --max-log2 30 --filter reduce_sum,reduce_max,scan_incl_sum,scan_excl_sum \
      --deadline $((c * 2 / 3)) --out "$L/bench-cuda-vk.md" >"$L/bench-cuda-vk.log" 2>&1
    awk -F'|' -f bench/vulkan_join.awk "$L/bench-cuda-vk.md" "$OUT/bench-vulkan.md" >"$OUT/vulkan-vs-cuda.md" 2>/dev/null
  fi
  fi
  if [ "${VK_LAB:-0}" = 1 ] && [ -x "$B/tools/tally-lab" ]; then   # seed 004's kernels on Vulkan
    log "tally bench --backend vulkan (at most 40s)"
    timeout 40 "$B/tools/tally-lab" bench --backend vulkan --sizes 2^16,2^20,2^24,2^26 --min-time 0.02 \
      >"$OUT/lab-vulkan.txt" 2>&1 || rc=1
    grep -E 'vk-|tally-vulkan' "$OUT/lab-vulkan.txt" | tail -7
  fi
fi

if want mpi; then
  reap mpi
  c=$(cap "$(W mpi)" "$(rest cpu)")
  if [ -x "$B/bench/tally_bench_mpi" ]; then
    log "mpi: tests at 4 and 16 ranks, CUDA ranks, weak scaling 1..16 ranks (at most ${c}s)"
    MPI_SKIP_BUILD=1 BUILD_DIR=$B OUT=$L/mpi MPI_RANKS="1 2 4 8 16" timeout "$c" bash bench/mpi.sh \
      >"$L/mpi.log" 2>&1 || rc=1
    cp "$L/mpi/mpi-table.md" "$OUT/mpi-table.md" 2>/dev/null
    grep -E "exit|failed" "$L/mpi/mpi.log" | sed 's/^/  /'
    log "mpi: table in mpi-table.md"
  else
    log "mpi: not built (no Open MPI headers on this machine?): skipped"
  fi
fi

if want scanio; then
  reap scanio
  c=$(cap "$(W scanio)" "$(rest cpu)")
  log "scanio: tally scan of a 4 GiB float32 .npy in /dev/shm against cp (at most ${c}s)"
  DIR=/dev/shm ONE_THREAD=0 timeout "$c" bash bench/cli_scan.sh "$B" "${SCANIO_MIB:-4096}" "${SCANIO_R:-3}" \
    >"$OUT/scanio.md" 2>"$L/scanio.log"
  r=$?; [ "$r" = 0 ] || rc=1
  log "scanio exit $r$([ "$r" = 124 ] && echo ' (timed out)'): $(grep -h 'FAILED' "$OUT/scanio.md" "$L/scanio.log" | head -3)"
fi

# partial_table MD LOG EXIT: a bench_cpu run stopped by its time limit writes no MD; keep the rows
# it printed (its log) as the table, marked partial, so that a slow run still reports what it did
partial_table() {
  [ -s "$1" ] && return
  grep -q '^|' "$2" 2>/dev/null || return
  { echo "# partial: bench_cpu exit $3$([ "$3" = 124 ] && echo ' (its time limit)'); the rows it printed"; echo
    grep -E '^tally_bench_cpu' "$2"; echo; grep '^|' "$2"; } >"$1"
}
if want cpu; then
  c=$(cap "$(W cpu)" "$(( $(rest cpuscale cpusweep cpuperf scansweep) + 5 ))")
  log "CPU: reductions and scans at all cores against the read loop and memcpy, then the exact sums' scaling (bench_cpu -x) (at most ${c}s)"
  c1=$((c * 2 / 5)); [ "${CPU_X:-1}" = 0 ] && c1=$c   # CPU_X=0: no thread-scaling table
  # best of CPU_R runs per row, each run of ours right after one of its baseline (bench_cpu.c)
  timeout "$c1" "$B/bench/tally_bench_cpu" -n "${CPU_N:-268435456}" -r "${CPU_R:-5}" -o "$OUT/cpu.md" >"$L/cpu.log" 2>&1
  r=$?; [ "$r" = 0 ] || rc=1
  partial_table "$OUT/cpu.md" "$L/cpu.log" "$r"
  log "cpu: bench_cpu exit $r$([ "$r" = 124 ] && echo ' (timed out)'), $(grep -c 'VALIDATION FAILED' "$L/cpu.log") validation failures"
  [ "${CPU_X:-1}" = 0 ] || timeout "$((c * 3 / 5))" "$B/bench/tally_bench_cpu" -x "${CPU_XT:-1,2,4,8,16}" -n "${CPU_N:-268435456}" -r 3 \
    -o "$OUT/cpu-exact.md" >"$L/cpu-exact.log" 2>&1
  r=$?; [ "$r" = 0 ] || rc=1
  [ "${CPU_X:-1}" = 0 ] || partial_table "$OUT/cpu-exact.md" "$L/cpu-exact.log" "$r"
  [ "${CPU_X:-1}" = 0 ] || log "cpu: bench_cpu -x exit $r$([ "$r" = 124 ] && echo ' (timed out)'), $(grep -c 'VALIDATION FAILED' "$L/cpu-exact.log") validation failures; tables in cpu.md and cpu-exact.md"
  # CPU_XN=ELEMENTS: the -x table again at a size that stays in the L3 (16777216: 64 MiB of f32), so
  # the exact sums' per-thread compute rate at each thread count shows without memory (cores
  # shared by two threads, or a lower all-core clock, slow it; memory does not)
  if [ -n "${CPU_XN:-}" ]; then
    lscpu 2>/dev/null | grep -E '^(Model name|Thread|Core|Socket|CPU\(s\)|L2|L3|CPU max MHz)' | sed 's/^/# /' >"$OUT/cpu-exact-l3.md"
    timeout 60 "$B/bench/tally_bench_cpu" -x "${CPU_XT:-1,2,4,8,16}" -n "$CPU_XN" -r 5 >>"$OUT/cpu-exact-l3.md" 2>&1
    log "cpu: bench_cpu -x -n $CPU_XN exit $?, table in cpu-exact-l3.md"
  fi
  # the exact kernels' per-core cost on this host (one thread; in cache, then from memory):
  # ns per element for price-like, 2^-40..2^40 and full-range f32/f64, the exact kernel (sum) and
  # the speculative sum with its decision (spec; fullfin: full range with f64 up to 2^991, whose
  # partial sums cannot overflow) (CPU_CORE=0: none, ~40 s)
  if [ "${CPU_CORE:-1}" != 0 ]; then
    for nn in 65536 16777216; do for d in price pm40 full fullfin; do for k in sum spec; do
      timeout 20 "$B/bench/tally_bench_exact" -i avx512 -d "$d" -k "$k" -n "$nn" -r "$([ $nn = 65536 ] && echo 20 || echo 3)" 2>&1 |
        grep -E '^\| (price|pm40|full|fullfin) ' | sed "s/^/| n=$nn /"
    done; done; done >"$OUT/cpu-core.md"
    log "cpu: per-core exact kernels (tally_bench_exact, n = 65536 then 2^24), table in cpu-core.md"
  fi
  # short arrays, one core: the one-pass sum against a plain AVX-512 loop at 1Ki..64Ki elements
  # (bench_exact -s), then what the candidate loops alone cost on this core (bench/probe_small.c,
  # built here with the host's cc); CPU_SMALL=0: none, ~20 s
  if [ "${CPU_SMALL:-1}" != 0 ]; then
    { for nn in 1024 4096 16384 65536; do
      timeout 15 "$B/bench/tally_bench_exact" -s -i avx512 -d price -r 15 -n "$nn" 2>&1 |
        grep -E '^\| price ' | sed "s/^/| n=$nn /"
    done
    for d in pm40 full; do # the wide data: SPEC
      timeout 20 "$B/bench/tally_bench_exact" -s -i avx512 -d "$d" -r 15 -n 4096 2>&1 |
        grep -E "^\| $d " | sed "s/^/| n=4096 /"
    done; } >"$OUT/cpu-small.md"
    { cc -O3 -march=native bench/probe_small.c -o "$B/probe_small" && timeout 30 "$B/probe_small" 1024 4096 16384; } \
      >"$OUT/cpu-probe.md" 2>&1
    log "cpu: short arrays (bench_exact -s, cpu-small.md) and the candidate loops (probe_small, cpu-probe.md)"
  fi
fi
# the reductions' rows of a bench_cpu table, as "label | op | ours GB/s | base GB/s | ratio"
cpurows() { grep -E '^\| (sum|min|max|sum\+min\+max|inclusive|exclusive)[ a-z0-9+().^-]* \|' "$2" | grep -E 'read loop|memcpy' | awk -F'|' -v l="$1" '{printf "| %s |%s|%s|%s|%s|\n", l, $2, $4, $7, $8}'; }
if want cpuscale; then
  c=$(cap "$(W cpuscale)" "$(( $(rest cpusweep cpuperf scansweep) + 5 ))")
  log "CPU: bench_cpu -q at ${CPU_THREADS:-16,8,4,2,1} threads (at most ${c}s)"
  ts=${CPU_THREADS:-16,8,4,2,1}   # most cores first: one thread takes longest (its references too)
  cs0=$(date +%s)
  # a run may use what is left but what the runs after it need (CPUSCALE_NEED="T1 T2 T4": seconds
  # for 1 thread, 2 threads, 4 or more; a 1-thread run at 2^27 is ~2^27 x 40 bytes of first touch,
  # the serial references and every row at one core's share of the bus: a minute), so that the
  # 1-thread run, last, keeps its share whatever the runs before it take; one stopped by its
  # limit keeps the rows it printed (partial_table); each run's seconds are in the log
  read -r nd1 nd2 nd4 <<<"${CPUSCALE_NEED:-60 30 12}"
  need() { local s=0 x; for x in "$@"; do if [ "$x" -le 1 ]; then s=$((s + nd1)); elif [ "$x" -le 2 ]; then s=$((s + nd2)); else s=$((s + nd4)); fi; done; echo $s; }
  set -- ${ts//,/ }
  while [ $# -gt 0 ]; do
    t=$1; shift
    # what is left but the later runs' needs; where that is less than this run's part of what is
    # left in proportion to the needs, that part (a short budget is shared, none is skipped)
    left=$(( c - ($(date +%s) - cs0) )); [ "$left" -lt 3 ] && { log "cpuscale: no time left for $t $*"; break; }
    lim=$(( left - $(need "$@") )); p=$(( left * $(need "$t") / $(need "$t" "$@") ))
    [ "$lim" -lt "$p" ] && lim=$p
    n=${CPU_N:-268435456}; [ "$t" -le 2 ] && n=${CPU_N_LOW:-134217728}
    echo "$n" >"$OUT/cpu-t$t.n"
    ts0=$(date +%s)
    timeout "$lim" "$B/bench/tally_bench_cpu" -q -t "$t" -n "$n" -r "${CPUSCALE_R:-3}" -o "$OUT/cpu-t$t.md" >"$L/cpu-t$t.log" 2>&1
    r=$?; [ "$r" = 0 ] || rc=1
    partial_table "$OUT/cpu-t$t.md" "$L/cpu-t$t.log" "$r"
    log "cpuscale: $t threads exit $r$([ "$r" = 124 ] && echo ' (timed out)') in $(( $(date +%s) - ts0 ))s of ${lim}s, $(grep -c '^| ' "$L/cpu-t$t.log") rows, $(grep -c 'VALIDATION FAILED' "$L/cpu-t$t.log") validation failures"
  done
fi
if want cpuperf; then
  c=$(cap "$(W cpuperf)" "$(( $(rest cpusweep scansweep) + 5 ))")
  PERF=$(command -v perf)
  # the machine's perf may be missing, or a wrapper without the kernel's tools: then the carried one
  if ! { [ -n "$PERF" ] && "$PERF" stat -e task-clock true >"$L/perf-check.log" 2>&1; } && ls .perf/*.deb >/dev/null 2>&1; then
    rm -rf /tmp/tally-perf && mkdir -p /tmp/tally-perf
    for f in .perf/*.deb; do dpkg -x "$f" /tmp/tally-perf; done
    PERF=/tmp/tally-perf/usr/bin/perf
    export LD_LIBRARY_PATH=/tmp/tally-perf/usr/lib/x86_64-linux-gnu:/tmp/tally-perf/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  fi
  log "CPU: perf of the i32/f32 sum scans at ${CPUPERF_THREADS:-16,4,1} threads with ${PERF:-no perf} (at most ${c}s)"
  if [ -n "$PERF" ] && "$PERF" stat -e task-clock true >"$L/perf-check.log" 2>&1; then
    cs2=$(date +%s)
    for t in $(echo "${CPUPERF_THREADS:-16,4,1}" | tr , ' '); do
      left=$(( c - ($(date +%s) - cs2) )); [ "$left" -lt 15 ] && break
      f=$OUT/cpu-perf-t$t.txt
      # -r CPUPERF_R: enough timed calls that the scans, not the data's set-up and checks, fill the profile
      pr=${CPUPERF_R:-5}
      { echo "## perf stat, bench_cpu -s -t $t -n ${CPUPERF_N:-134217728} -r $pr (i32 and f32 sum scans, their checks and memcpy included)"
        timeout $((left / 2)) "$PERF" stat -e task-clock,context-switches,cpu-migrations,cycles,instructions,cache-misses \
          "$B/bench/tally_bench_cpu" -s -t "$t" -n "${CPUPERF_N:-134217728}" -r "$pr" 2>&1
        echo "## perf record (cycles), the symbols above 0.5%"
        timeout $((left / 2)) "$PERF" record -q -F 499 -o /tmp/tally-perf.data \
          "$B/bench/tally_bench_cpu" -s -t "$t" -n "${CPUPERF_N:-134217728}" -r "$pr" >/dev/null 2>&1
        "$PERF" report -i /tmp/tally-perf.data --stdio --sort symbol --percent-limit 0.5 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40
      } >"$f" 2>&1
      log "cpuperf: $t threads done ($(grep -c . "$f") lines in ${f##*/})"
    done
  else
    log "cpuperf: no usable perf here ($(tail -1 "$L/perf-check.log" 2>/dev/null)); carry .perf (see the header)"
  fi
fi
if want scansweep; then
  c=$(cap "$(W scansweep)" "$(( $(rest cpusweep) + 5 ))")
  IFS=';' read -r -a stunes <<<"${SCAN_TUNES:--;scan_piece=131072;scan_piece=2097152;scan_pf=0}"
  log "CPU: the scans' knobs at ${SCANSWEEP_THREADS:-2,4} threads, ${#stunes[@]} settings (at most ${c}s)"
  cs3=$(date +%s)
  for t in $(echo "${SCANSWEEP_THREADS:-2,4}" | tr , ' '); do
    for tu in "${stunes[@]}"; do
      left=$(( c - ($(date +%s) - cs3) )); [ "$left" -lt 8 ] && break 2
      tag=$(echo "$tu" | tr -c 'a-z0-9\n' '_')
      echo "$t thr, ${tu}" >"$OUT/cpu-scan-t$t-$tag.name"
      TALLY_CPU_TUNE="$([ "$tu" = - ] || echo "$tu")" timeout "$left" "$B/bench/tally_bench_cpu" -s -t "$t" -n 134217728 -r 3 \
        -o "$OUT/cpu-scan-t$t-$tag.md" >"$L/cpu-scan-t$t-$tag.log" 2>&1
      r=$?; [ "$r" = 0 ] || rc=1
      log "scansweep: $t threads [$tu] exit $r$([ "$r" = 124 ] && echo ' (timed out)')"
    done
  done
fi
if want cpusweep; then
  c=$(cap "$(W cpusweep)" 5)
  IFS=';' read -r -a tunes <<<"${CPU_TUNES:-pf_dist=16384;pf_dist=0;pf_bytes=1024;pf_dist=65536,pf_bytes=1024;pf_dist=4096;pf_dist=0,chunk_min=1048576,chunk_max=4194304;chunk_min=65536,chunk_max=262144}"
  log "CPU: the reductions' knobs at all cores, ${#tunes[@]} settings (at most ${c}s)"
  i=0; cs1=$(date +%s)
  for tu in "${tunes[@]}"; do
    left=$(( c - ($(date +%s) - cs1) )); [ "$left" -lt 15 ] && break
    echo "$tu" >"$OUT/cpu-tune$i.name"
    TALLY_CPU_TUNE="$tu" timeout "$left" "$B/bench/tally_bench_cpu" -n "${CPU_N:-268435456}" -r 3 \
      -o "$OUT/cpu-tune$i.md" >"$L/cpu-tune$i.log" 2>&1
    r=$?; [ "$r" = 0 ] || rc=1
    log "cpusweep: [$tu] exit $r$([ "$r" = 124 ] && echo ' (timed out)')"
    i=$((i + 1))
  done
fi
log "done, exit $rc"
tar czf "$OUT/logs.tgz" -C "$L" . && rm -rf "$L"
echo "=== SUMMARY"
grep -E "exit|adversarial on|bench_|built|FAILED|steps|mpi|table" "$OUT/h200.log"
if want bench && [ -f "$OUT/bench-exact.md" ]; then
  echo "=== CUDA exact float sums at 2^28 against our plain sum (bench-exact.md; rows without a knob: the"
  echo "    default, spec=3: adaptive, the exact kernel alone after narrow data, else the speculative sum"
  echo "    first (spec_sum.cuh), the exact kernel where it declines; spec=1: the pass always first (before);"
  echo "    spec=0: the exact kernel alone (REDUCE_BINS=2, f64 in shared windows first); spec=2 U=LxT: the"
  echo "    pass's kernel shapes (L loads in flight, T triples; default 4x2); kind alt: price-like and wide"
  echo "    arrays in turn; bins=1 spec=0: f64 in integer digits only; bins=4 runs as 2 unless -DTCU_RW=1)"
  sed -n '/^=== EXACT vs PLAIN/,$p' "$OUT/bench-exact.md" | grep -E '^\| (type|f32|f64)' | grep -vE 'ring=' 
fi
if want seg && [ -f "$OUT/seg-bench.md" ]; then
  echo "=== segmented exact sums (tally_reduce_rows, results to the host) against CUB DeviceSegmentedReduce::Sum (plain); CUB/ours > 1: ours faster"
  grep -E '^\| (op|seg_sum_rows)' "$OUT/seg-bench.md"
fi
if want mpi && [ -f "$OUT/mpi-table.md" ]; then
  echo "=== MPI (bench_mpi; rows: ranks 1 2 4 8 16, then 16 on wide data, then 4 CUDA ranks): tree/pl = exact sum's"
  echo "    throughput / MPI_Allreduce of a plain sum (target >= 0.9); tr/a1 = cross-rank step / MPI_Allreduce of one double (target <= 2 at 16)"
  grep -E '^ *(ranks|[0-9]+ )' "$OUT/mpi-table.md"
fi
if want cpu && [ -f "$OUT/cpu.md" ]; then
  echo "=== CPU at all cores: ours against the read loop (or memcpy) of the same run; ratio = base time / ours"
  echo "    (best of ${CPU_R:-5} runs, each run of ours right after one of its baseline; cpu.md)"
  grep -E '^tally_bench_cpu|^# partial' "$OUT/cpu.md"
  grep -E '^\| (op / type|.*\| (read loop|memcpy|omp reduction))' "$OUT/cpu.md" | cut -d'|' -f2,4,5,7,8
  echo "=== where each scan's time goes at all cores (the scan's own clocks, shares of the threads' summed time)"
  grep -E '^\| scan \(phases' -A 12 "$OUT/cpu.md" | grep '^|'
fi
if want vulkan && [ -s "$OUT/vulkan-vs-cuda.md" ]; then
  echo "=== Vulkan against our CUDA backend and CUB in the same call (GPU timestamps; ratio = their time / Vulkan's,"
  echo "    > 1: Vulkan faster; targets: CUDA/Vk >= 0.9 for the reductions, CUB/Vk >= 1.0 for the sum scans)"
  grep -E '^\| (op|reduce_(sum|max) |scan_)' "$OUT/vulkan-vs-cuda.md" | grep -E '^\| op|2\^(22|26|30)'
fi
if want vulkan && grep -q '^| probe_f32' "$OUT/bench-vulkan.md" 2>/dev/null; then
  echo "=== the f32 sums' per-element probes (bench_vulkan --probe-f32; x(a) = GPU time / probe (a)'s, the f32 max's work)"
  grep -E '^\| probe_f32' "$OUT/bench-vulkan.md" | cut -d'|' -f3-5,7,10
  echo "=== spec.comp's shapes (the speculative f32/f64 sums) against our CUDA backend's correctly rounded sum"
  grep -E 'spec shape' "$OUT/vulkan-vs-cuda.md" 2>/dev/null | cut -d'|' -f3-5,7,9,11
fi
if want vulkan && [ -s "$OUT/bench-vulkan.md" ]; then
  echo "=== Vulkan per-call cost, i32 sum (call µs = record + submit + wait): batch = 64 calls per command"
  echo "    buffer, per call; poll = one submit, its fence polled before the driver's wait; the note has the default"
  grep -E '^\| reduce_sum_(batch|poll) *\| i32' "$OUT/bench-vulkan.md" | cut -d'|' -f2-6,10
fi
if want scanio && [ -f "$OUT/scanio.md" ]; then
  echo "=== tally scan to /dev/shm against cp of the same file (target: <= 1.5x cp)"
  grep -E '^(checks|\|)' "$OUT/scanio.md"
fi
if want cpu && [ -f "$OUT/cpu-exact.md" ]; then
  echo "=== CPU correctly rounded sums at 1 and 16 threads (bench_cpu -x; every thread count in cpu-exact.md);"
  echo "    rows 'spec=0': the same sum with TALLY_CPU_SPEC=0 (the exact path alone), before/after in this run"
  grep -E '^\| (threads|1|8|16) \|' "$OUT/cpu-exact.md"
fi
if want cpu && [ -s "$OUT/cpu-exact-l3.md" ]; then
  echo "=== CPU correctly rounded sums in the L3 (bench_cpu -x -n \$CPU_XN; the host's lscpu first): per-thread compute"
  grep -E '^(# |\| (threads|[0-9]+) \| [^|]*(2\^|full))' "$OUT/cpu-exact-l3.md"
fi
if want cpu && [ -s "$OUT/cpu-small.md" ]; then
  echo "=== CPU short arrays, one core (bench_exact -s): TSC ticks per call, plain AVX-512 loop | one pass (ratio, <= 2 wanted) | general path | one pass without W32W and SPEC (before)"
  cut -d'|' -f2,4,6,7,8,10 "$OUT/cpu-small.md"
  echo "=== the candidate loops alone on this core (bench/probe_small.c): ticks per call (ratio to the plain loop)"
  grep '^|' "$OUT/cpu-probe.md"
fi
if want cpu && [ -s "$OUT/cpu-core.md" ]; then
  echo "=== CPU exact kernels, one core (tally_bench_exact; n = 65536 in cache, then 2^24 from memory): kernel (sum: exact,"
  echo "    spec: speculative + decision), ns/elem, GB/s, read GB/s, ratio, methods (spec: answered or declined)"
  cut -d'|' -f2,3,4,5,7,8,9,10,11 "$OUT/cpu-core.md"
fi
if want cpuscale && ls "$OUT"/cpu-t[0-9]*.md >/dev/null 2>&1; then
  echo "=== CPU by thread count: ratio to the read loop (reductions) or memcpy (scans) of the same run (ours / its GB/s);"
  echo "    bench_cpu -q -t T, best of ${CPUSCALE_R:-3} runs, each run of ours right after one of its baseline; tables in cpu-t<T>.md"
  files=$(ls "$OUT"/cpu-t[0-9]*.md | sort -V)
  printf '| op |'; for f in $files; do t=${f##*/cpu-t}; printf ' %s thr |' "${t%.md}"; done; echo
  printf '| n (elements) |'; for f in $files; do printf ' %s |' "$(cat "${f%.md}.n" 2>/dev/null)"; done; echo
  cols=$(for f in $files; do t=${f##*/cpu-t}; printf '%s ' "${t%.md}"; done)
  # a cell per (op, thread count), "-" where that run has no such row (a run stopped early)
  for f in $files; do t=${f##*/cpu-t}; cpurows "${t%.md}" "$f"; done | awk -F'|' -v cols="$cols" '
    { op = $3; gsub(/^ +| +$/, "", op); t = $2; gsub(/ /, "", t)
      if (!(op in seen)) { seen[op] = 1; order[++n] = op }
      cell[op, t] = sprintf(" %.2f (%.1f / %.1f) |", $6, $4, $5) }
    END { nc = split(cols, c, " ")
          for (i = 1; i <= n; i++) { printf "| %s |", order[i]
            for (k = 1; k <= nc; k++) printf "%s", ((order[i], c[k]) in cell) ? cell[order[i], c[k]] : " - |"
            print "" } }'
fi
if want cpuperf && ls "$OUT"/cpu-perf-t*.txt >/dev/null 2>&1; then
  echo "=== where the scans' time goes (perf record of bench_cpu -s: scan kernels, memcpy baseline, the checks; cpu-perf-t<T>.txt)"
  for f in $(ls "$OUT"/cpu-perf-t*.txt | sort -V); do
    echo "-- ${f##*/}"; grep -E 'task-clock|instructions|cycles' "$f" | head -3; grep -E '^ +[0-9.]+%' "$f" | head -8
  done
fi
if want cpuscale && ls "$OUT"/cpu-t[0-9]*.md >/dev/null 2>&1; then
  echo "=== where the scans' time goes by thread count (the scan's own clocks; shares of the threads' summed time)"
  for f in $(ls "$OUT"/cpu-t[0-9]*.md | sort -V); do
    t=${f##*/cpu-t}; echo "-- ${t%.md} threads"; grep -E '^\| (scan \(phases|inclusive sum scan [if]32|exclusive sum scan f32)' "$f" | grep -v 'memcpy'
  done
fi
if want scansweep && ls "$OUT"/cpu-scan-t*.md >/dev/null 2>&1; then
  echo "=== the scans' knobs (TALLY_CPU_TUNE; '-' = the defaults): ratio to memcpy of the same run (ours GB/s)"
  for f in $(ls "$OUT"/cpu-scan-t*.md | sort -V); do
    grep -E '^\| inclusive sum scan' "$f" | grep memcpy | awk -F'|' -v l="$(cat "${f%.md}.name")" '{printf "| %s |%s| %s (%s) |\n", l, $2, $8, $4}'
  done
fi
if want cpusweep && ls "$OUT"/cpu-tune*.md >/dev/null 2>&1; then
  echo "=== CPU reductions at all cores by TALLY_CPU_TUNE (pf_dist=16384 is the shipped default)"
  for f in $(ls "$OUT"/cpu-tune*.md | sort -V); do cpurows "$(cat "${f%.md}.name")" "$f" | grep -E 'min|max|sum i32|scan'; done
fi
# The device tool brings back only a few files: everything but h200.log goes into all.tgz
(cd "$OUT" && tar czf /tmp/tally-all.tgz --exclude=./h200.log . &&
  find . -mindepth 1 -maxdepth 1 ! -name h200.log -exec rm -rf {} + && mv /tmp/tally-all.tgz all.tgz)
exit $rc
