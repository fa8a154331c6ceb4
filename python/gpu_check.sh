#!/usr/bin/env bash
# The Python module on the GPU machine, in one call: builds libtally with CUDA (sm_90) and the
# module for that machine's Python (the venv with torch), runs the Python tests (the GPU ones
# among them: torch CUDA tensors read in place, CuPy arrays, the batched reduce on the CUDA
# backend), then prints the speed table of issue 22 (CPU rows on that machine's cores, and the
# GPU rows: tally.sum of a 2^28 f32 tensor against the C library and torch.sum, tally.cumsum
# against torch.cumsum) last.
#
#   bash python/gpu_check.sh            (PY=python to use another interpreter)
#
# The module uses CPython's stable ABI (3.11+): when the interpreter has no headers of its own,
# any CPython >= 3.11 headers do; the script looks in /usr/include/python3.1x and in .pyinc/
# (carry a copy of this machine's: mkdir -p .pyinc && cp -r /usr/include/python3.11/. .pyinc/ &&
# cp /usr/include/x86_64-linux-gnu/python3.11/pyconfig.h .pyinc/).
# Files under $OUT (or ./gpu-out): python-gpu.log, python-bench.md.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
B=${BUILD_DIR:-build-pygpu}
PY=${PY:-$(command -v python3)}
LOG=$OUT/python-gpu.log
T0=$(date +%s)
log() { echo "== [$(( $(date +%s) - T0 ))s] $*" | tee -a "$LOG"; }
export PATH=/usr/local/cuda/bin:$PATH

log "$(date -u '+%Y-%m-%d %H:%M UTC'); python: $PY ($($PY -c 'import sys; print(sys.version.split()[0])'))"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$LOG"
$PY -c "import torch, numpy; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'numpy', numpy.__version__)" 2>&1 | tee -a "$LOG"

inc=$($PY -c "import sysconfig, os; p = sysconfig.get_paths()['include']; print(p if os.path.exists(os.path.join(p, 'Python.h')) else '')")
extra=()
if [ -z "$inc" ]; then
  for d in /usr/include/python3.1[1-9] "$PWD/.pyinc"; do
    if [ -f "$d/Python.h" ]; then extra=(-DTALLY_PYTHON_INCLUDE="$d"); break; fi
  done
  if [ ${#extra[@]} -eq 0 ]; then
    log "no Python.h for $PY: carry CPython >= 3.11 headers in .pyinc (see the top of this script)"
    exit 1
  fi
  log "using the headers in ${extra[0]#*=} (stable ABI)"
fi

log "build (CUDA, sm_90)"
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DTALLY_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DTALLY_BUILD_TESTS=OFF -DTALLY_BUILD_CLI=OFF -DTALLY_BUILD_BENCH=OFF \
  -DPython3_EXECUTABLE="$PY" "${extra[@]}" >"$OUT/python-build.log" 2>&1 &&
cmake --build "$B" -j"$(nproc)" --target tally tally_python >>"$OUT/python-build.log" 2>&1 ||
  { tail -40 "$OUT/python-build.log"; exit 1; }
rm -f "$OUT/python-build.log"
$PY -c "import sys; sys.path.insert(0, '$B/python'); import tally; print(tally.info())" 2>&1 | tee -a "$LOG"

log "tests (pytest; GPU tests in test_gpu.py)"
$PY python/tests/run_tests.py "$B/python" -x 2>&1 | tee -a "$LOG" | tail -25
rc=${PIPESTATUS[0]}

log "speed table"
PYTHONPATH="$B/python" $PY bench/python_bench.py --gpu --lib "$B/libtally.so" \
  --markdown "$OUT/python-bench.md" 2>&1 | tee -a "$LOG"
log "done (tests exit $rc)"
exit $rc
