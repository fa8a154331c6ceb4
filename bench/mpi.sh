#!/usr/bin/env bash
# libtally_mpi on the 16-core GPU host, in one call: build (CUDA on when nvcc is there), run the
# MPI tests (CPU ranks, then CUDA ranks sharing the GPU), then the weak-scaling table: 1..16 ranks,
# 2^26 f64 per rank, one core each; the exact sum against MPI_Allreduce(MPI_SUM) of a plain local
# sum, and the exact sum's cross-rank step against MPI_Allreduce of one double. Table last.
#
#   bash bench/mpi.sh [--quick]       (--quick: 2^24 per rank, ranks 1 4 16)
#   TALLY_MPI_CARRIED=1 bash bench/mpi.sh ...   (use .mpi/root even where mpirun exists)
#
# Open MPI: the system's mpirun if there is one, else the packages unpacked in .mpi/root
# (bench/mpi_fetch.sh makes that folder on a machine with network; carry it). Files under $OUT
# (default ./mpi-out): mpi.log build.log test.log bench.log mpi-table.md.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/mpi-out}
mkdir -p "$OUT"
B=${BUILD_DIR:-build-mpi}
N=$((1 << 26)); RANKS=${MPI_RANKS:-"1 2 4 8 12 16"}
[ "${1:-}" = --quick ] && { N=$((1 << 24)); RANKS="1 4 16"; }
T0=$(date +%s)
log() { echo "== [$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/mpi.log"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log "$(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cpus"

# ---- Open MPI ----
MPIRUN=$(command -v mpirun || true)
[ -n "${TALLY_MPI_CARRIED:-}" ] && MPIRUN=""   # use .mpi/root even where mpirun exists (testing)
CMAKE_MPI=()
if [ -z "$MPIRUN" ]; then
  R=$PWD/.mpi/root
  if [ ! -x "$R/usr/bin/orterun" ]; then
    log "no mpirun on PATH and no .mpi/root: run bench/mpi_fetch.sh on a machine with network and carry .mpi"
    exit 1
  fi
  export OPAL_PREFIX=$R/usr
  export PATH=$R/usr/bin:$PATH
  export LD_LIBRARY_PATH=$R/usr/lib/x86_64-linux-gnu:$R/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  MPIRUN=$R/usr/bin/orterun
  # Debian's names are alternatives (symlinks dpkg -x does not make): call the wrappers directly
  ln -sf opal_wrapper "$R/usr/bin/mpicc" 2>/dev/null
  CMAKE_MPI=(-DMPI_C_COMPILER="$R/usr/bin/mpicc" -DMPIEXEC_EXECUTABLE="$MPIRUN")
  missing=$(for f in "$MPIRUN" "$R"/usr/lib/x86_64-linux-gnu/libmpi.so.40 \
              "$R"/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so; do
              ldd "$f" 2>/dev/null | grep "not found"; done | sort -u)
  [ -n "$missing" ] && log "libraries still missing (add their packages to bench/mpi_fetch.sh): $missing"
  log "Open MPI from .mpi/root"
else
  log "Open MPI: $MPIRUN"
fi
"$MPIRUN" --version 2>&1 | head -1 | tee -a "$OUT/mpi.log"
MPIFLAGS=(--oversubscribe --bind-to core --map-by core)

# ---- build ----
CUDA=OFF
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] && CUDA=ON
export PATH=$PATH:/usr/local/cuda/bin
if [ -z "${MPI_SKIP_BUILD:-}" ]; then   # bench/h200.sh builds these targets in its one build
  log "building in $B (CUDA $CUDA)"
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DTALLY_CUDA=$CUDA -DTALLY_BUILD_CLI=OFF \
    "${CMAKE_MPI[@]}" >"$OUT/build.log" 2>&1 &&
  cmake --build "$B" -j"$(nproc)" --target test_mpi tally_bench_mpi \
    $([ $CUDA = ON ] && echo test_mpi_cuda) >>"$OUT/build.log" 2>&1
fi
[ -x "$B/bench/tally_bench_mpi" ] || { log "build failed: tail of build.log"; tail -30 "$OUT/build.log"; exit 1; }

# ---- tests ----
log "test_mpi with 4 and 16 ranks"
for np in 4 16; do
  timeout 300 "$MPIRUN" -np $np "${MPIFLAGS[@]}" "$B/tests/mpi/test_mpi" >>"$OUT/test.log" 2>&1
  log "test_mpi $np ranks: exit $? ($(tail -1 "$OUT/test.log"))"
done
if [ -x "$B/tests/mpi/test_mpi_cuda" ]; then
  timeout 300 "$MPIRUN" -np 4 "${MPIFLAGS[@]}" "$B/tests/mpi/test_mpi_cuda" >>"$OUT/test.log" 2>&1
  log "test_mpi_cuda 4 ranks sharing the GPU: exit $? ($(tail -1 "$OUT/test.log"))"
fi

# ---- weak scaling ----
log "weak scaling: $N f64 per rank, ranks $RANKS"
: >"$OUT/bench.log"
for np in $RANKS; do
  timeout 300 "$MPIRUN" -np $np "${MPIFLAGS[@]}" "$B/bench/tally_bench_mpi" -n $N -r 7 >>"$OUT/bench.log" 2>&1 ||
    log "bench_mpi $np ranks failed"
done
timeout 300 "$MPIRUN" -np 16 "${MPIFLAGS[@]}" "$B/bench/tally_bench_mpi" -n $N -r 7 --data wide >>"$OUT/bench.log" 2>&1
if [ $CUDA = ON ]; then
  log "CUDA ranks sharing the GPU (staged through host memory)"
  timeout 300 "$MPIRUN" -np 4 "${MPIFLAGS[@]}" "$B/bench/tally_bench_mpi" -n $((1 << 24)) -r 3 --backend cuda >>"$OUT/bench.log" 2>&1
fi
{
  echo "# libtally_mpi weak scaling, $(date -u '+%Y-%m-%d'), $(hostname), $(nproc) cpus"
  echo '```'
  grep -m1 "^ranks" "$OUT/bench.log"
  grep -E "^ *[0-9]+ " "$OUT/bench.log"
  echo '```'
  grep "^# bench_mpi" "$OUT/bench.log" | sort -u
} >"$OUT/mpi-table.md"
log "done"
cat "$OUT/mpi-table.md"
