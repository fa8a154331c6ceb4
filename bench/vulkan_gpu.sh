#!/usr/bin/env bash
# The Vulkan backend on the H200 machine, in one call: the Vulkan loader and tools from .gl/
# (Debian's libvulkan1, libvulkan-dev, glslc and libshaderc1 packages, fetched on a networked
# machine with `cd .gl && apt-get download libvulkan1 libvulkan-dev glslc libshaderc1`), an ICD
# manifest naming libEGL_nvidia.so.0 (the driver's own names libGLX_nvidia.so.0, which fails
# without a display), a build with Vulkan and CUDA on, test_vulkan (with the > 2^32-element
# case), bench_vulkan at 2^10 .. 2^30, bench_cuda (our CUDA backend and CUB) on the same sizes
# in the same run, and last a table joining the two.
#
#   bash bench/vulkan_gpu.sh            (carry .gl; the device tool: carry=[".gl"])
#
# Files under $OUT (or ./gpu-out): vk.log build.log test.log bench-vulkan.md bench-cuda.md
# table.md. Every step has a share of a wall-clock budget (VK_BUDGET seconds, default 240,
# counted from the end of the build): the tests at most 90 s, the Vulkan bench until 70 s are
# left, bench_cuda until 10 s are left; the table is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
BUDGET=${VK_BUDGET:-240}
B=${BUILD_DIR:-build-vk}
log() { echo "== [$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/vk.log"; }
left() { echo $(( BUDGET - ($(date +%s) - T0) - $1 )); }

# the loader, headers and glslc (unpacked over /: they are plain Debian files)
if ! ldconfig -p | grep -q libvulkan.so.1 || ! command -v glslc >/dev/null; then
  ls .gl/*.deb >/dev/null 2>&1 || { log "no .gl/*.deb: fetch them (see the header) and carry .gl"; exit 1; }
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
mkdir -p /tmp/tally-icd
echo '{"file_format_version":"1.0.1","ICD":{"library_path":"libEGL_nvidia.so.0","api_version":"1.4.312"}}' \
  >/tmp/tally-icd/nvidia_egl.json
export VK_ICD_FILENAMES=/tmp/tally-icd/nvidia_egl.json VK_DRIVER_FILES=/tmp/tally-icd/nvidia_egl.json
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
log "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"

# build: the library (Vulkan + CUDA) with cmake; the programs with nvcc (the static library
# holds CUDA objects; cmocka, which the cmake tests need, may be missing here)
j=$(nproc)
log "building ($j cores)"
nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -Isrc -c bench/bench_cuda.cu -o /tmp/bench_cuda.o >"$OUT/build.log" 2>&1 &
pbc=$!
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DTALLY_CUDA=ON -DTALLY_VULKAN=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTALLY_BUILD_TESTS=OFF -DTALLY_BUILD_CLI=OFF \
  -DTALLY_BUILD_BENCH=OFF >>"$OUT/build.log" 2>&1 &&
  cmake --build "$B" -j"$j" --target tally_static >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; log "BUILD FAILED"; exit 1; }
for p in test_vulkan:tests/vulkan/test_vulkan.c bench_vulkan:bench/bench_vulkan.c; do
  name=${p%%:*}; src=${p#*:}
  gcc -O2 -std=gnu11 -Iinclude -Itests/vulkan -c "$src" -o "/tmp/$name.o" >>"$OUT/build.log" 2>&1 &&
    nvcc -arch=sm_90 "/tmp/$name.o" "$B/libtally.a" -lpthread -ldl -lm -o "$B/$name" >>"$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log"; log "BUILD FAILED ($name)"; exit 1; }
done
wait $pbc && nvcc -arch=sm_90 /tmp/bench_cuda.o "$B/libtally.a" -lpthread -ldl -lm -o "$B/bench_cuda" >>"$OUT/build.log" 2>&1 ||
  log "bench_cuda did not build (the table will lack the CUDA columns)"
log "built"
T0=$(date +%s) # the budget counts from here

rc=0
log "test_vulkan --big (validation layer off: not installed here)"
timeout 90 "$B/test_vulkan" --big >"$OUT/test.log" 2>&1
t=$?; [ "$t" = 0 ] || rc=1
grep -E '^(vulkan device|device:)' "$OUT/test.log" | tee -a "$OUT/vk.log"
grep -E '^FAIL' "$OUT/test.log" | head -10
log "test_vulkan exit $t: $(tail -1 "$OUT/test.log")"

log "bench_vulkan 2^10 .. 2^30"
timeout "$(left 70)" "$B/bench_vulkan" --min-log2 10 --max-log2 30 --step 2 --min-time 0.03 \
  --out "$OUT/bench-vulkan.md" >"$OUT/bench-vulkan.log" 2>&1
b=$?; [ "$b" = 0 ] || rc=1
log "bench_vulkan exit $b"
if [ -x "$B/bench_cuda" ]; then
  log "bench_cuda (our CUDA backend and CUB), the same ops and sizes"
  timeout "$(left 15)" "$B/bench_cuda" --min-log2 10 --max-log2 30 \
    --filter reduce_sum,reduce_max,scan_incl_sum,scan_excl_sum --deadline "$(left 40)" \
    --out "$OUT/bench-cuda.md" >"$OUT/bench-cuda.log" 2>&1
  log "bench_cuda exit $?"
fi
# the joined table: bench_cuda rows without a note (its defaults), by (op, type, n)
awk -F'|' -f bench/vulkan_join.awk "$OUT/bench-cuda.md" "$OUT/bench-vulkan.md" >"$OUT/table.md" 2>/dev/null ||
  cp "$OUT/bench-vulkan.md" "$OUT/table.md"
log "whole script $(( $(date +%s) - T0 ))s; Vulkan µs: GPU timestamps; call µs: one call's wall time (submit + wait);"
log "CUDA/Vk, CUB/Vk > 1: Vulkan faster"
echo "=== TABLE"
head -2 "$OUT/bench-vulkan.md"
cat "$OUT/table.md"
echo "=== SEGMENTS (tally_reduce_rows, host data; note: the call-per-segment path)"
grep -E '^\| segments_' "$OUT/bench-vulkan.md"
exit $rc
