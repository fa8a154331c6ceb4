#!/usr/bin/env bash
# tally scan's output speed (issue 23: within 1.5x of cp): `tally scan sum big.npy -o out.npy`
# against `cp big.npy copy.npy` in the same directory (DIR, default /dev/shm: a tmpfs), both
# reading n bytes and writing n. Before timing, the streamed output is checked against the
# one-call scan (the same command writing to standard output, which scans the whole column in
# memory with one library call) for a float32 file, and for an int32 file also against
# numpy.cumsum when numpy is there. Best of R rounds, the commands run round-robin so that
# they see the same load; the one-call path is timed once, during the check.
#
# usage: bench/cli_scan.sh [BUILD_DIR=build] [MIB=1024] [R=5]
#        env: DIR=/dev/shm, TALLY=path, PY=python, ONE_THREAD=0 (no `tally -j 1` row)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build}
mib=${2:-1024}
reps=${3:-5}
tally=${TALLY:-$build/tools/tally}
dir=${DIR:-/dev/shm}
py=""                           # a Python with numpy if there is one (for the int32 check)
for c in ${PY:-} python3 /usr/bin/python3; do
  command -v "$c" >/dev/null || continue
  [ -n "$py" ] || py=$(command -v "$c")
  "$c" -c "import numpy" 2>/dev/null && { py=$(command -v "$c"); break; }
done
[ -n "$py" ] || { echo "no python3" >&2; exit 1; }
[ -x "$tally" ] || { echo "missing $tally (build the command first)" >&2; exit 1; }
need=$(( mib * 3 + 64 ))
avail=$(( $(df -Pk "$dir" | awk 'NR==2{print $4}') / 1024 ))
[ "$avail" -ge "$need" ] || { echo "$dir has $avail MiB free; this needs $need" >&2; exit 1; }
work=$(mktemp -d "$dir/tally-cli-scan.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A .npy of MIB MiB of float32 (4 MiB of random values in [0, 100), repeated) and one of
# 16 MiB of random int32 (their scan wraps): plain Python, numpy not needed.
"$py" - "$mib" "$work" <<'PY'
import array, os, random, sys
mib, work = int(sys.argv[1]), sys.argv[2]
def npy(path, descr, n, blocks):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, n)
    h += " " * (63 - (10 + len(h)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode())
        for b in blocks:
            f.write(b)
rng = random.Random(2026)
blk = array.array("f", (rng.random() * 100 for _ in range(1 << 20))).tobytes()
npy(f"{work}/big.npy", "<f4", mib << 18, (blk for _ in range(mib // 4)))
ni = (1 << 22) + 12345                  # 4 chunks and a part of one
npy(f"{work}/ints.npy", "<i4", ni, [os.urandom(4 * ni)])
PY
bytes=$(( mib << 20 ))

# The checks: streamed == one call (bit for bit), for f32 and i32; i32 == numpy.cumsum.
same() {
  if command -v cmp >/dev/null; then cmp -s "$1" "$2"; else
    "$py" -c "import filecmp, sys; sys.exit(not filecmp.cmp(sys.argv[1], sys.argv[2], shallow=False))" "$1" "$2"
  fi
}
t0=$EPOCHREALTIME
"$tally" scan sum "$work/big.npy" -o - > "$work/ref.npy"
t_one=$("$py" -c "print($EPOCHREALTIME - $t0)")
"$tally" scan sum "$work/big.npy" -o "$work/out.npy"
same "$work/out.npy" "$work/ref.npy" || { echo "CHECK FAILED: f32 streamed scan != one-call scan" >&2; exit 1; }
rm -f "$work/ref.npy" "$work/out.npy"
"$tally" scan sum "$work/ints.npy" -o - > "$work/iref.npy"
"$tally" scan sum "$work/ints.npy" -o "$work/iout.npy"
same "$work/iout.npy" "$work/iref.npy" || { echo "CHECK FAILED: i32 streamed scan != one-call scan" >&2; exit 1; }
np_check=$("$py" - "$work" <<'PY' 2>/dev/null || echo "not checked (no numpy)"
import sys
import numpy as np
w = sys.argv[1]
ok = np.array_equal(np.load(f"{w}/iout.npy"), np.cumsum(np.load(f"{w}/ints.npy"), dtype=np.int32))
print("equal" if ok else "DIFFERENT")
PY
)
rm -f "$work/iref.npy" "$work/iout.npy" "$work/ints.npy"
[ "$np_check" != DIFFERENT ] || { echo "CHECK FAILED: i32 scan != numpy.cumsum" >&2; exit 1; }

read -r t_cp t_scan t_scan1 < <("$py" - "$reps" "$work" "$tally" "${ONE_THREAD:-1}" <<'PY'
import os, subprocess, sys, time
reps, w, tally, one_thread = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
cmds = [(["cp", f"{w}/big.npy", f"{w}/copy.npy"], f"{w}/copy.npy"),
        ([tally, "scan", "sum", f"{w}/big.npy", "-o", f"{w}/out.npy"], f"{w}/out.npy")]
if one_thread:
    cmds.append(([tally, "-j", "1", "scan", "sum", f"{w}/big.npy", "-o", f"{w}/out.npy"], f"{w}/out.npy"))
best = [1e9] * len(cmds)
for _ in range(reps):
    for i, (c, out) in enumerate(cmds):
        t = time.perf_counter()
        subprocess.run(c, check=True)
        best[i] = min(best[i], time.perf_counter() - t)
        os.unlink(out)
print(" ".join(f"{b:.4f}" for b in best))
PY
)
f() { "$py" -c "print(f'{$1:$2}')"; }
echo "tally scan output speed, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "file: $mib MiB float32 .npy in $dir ($(df -P "$dir" | awk 'NR==2{print $1}')); best of $reps rounds"
echo "checks: f32 and i32 streamed == one-call scan (bit for bit); i32 == numpy.cumsum: $np_check"
echo
echo "| command | time (s) | GB/s | / cp |"
echo "|---|---:|---:|---:|"
echo "| \`cp big.npy copy.npy\` | $t_cp | $(f "$bytes / $t_cp / 1e9" .2f) | 1.00 |"
echo "| \`tally scan sum big.npy -o out.npy\` | $t_scan | $(f "$bytes / $t_scan / 1e9" .2f) | **$(f "$t_scan / $t_cp" .2f)** |"
[ -z "${t_scan1:-}" ] ||
  echo "| \`tally -j 1 scan sum big.npy -o out.npy\` (one scan thread) | $t_scan1 | $(f "$bytes / $t_scan1 / 1e9" .2f) | $(f "$t_scan1 / $t_cp" .2f) |"
echo "| \`tally scan sum big.npy -o - > out.npy\` (one call, whole column in memory; once) | $(f "$t_one" .4f) | $(f "$bytes / $t_one / 1e9" .2f) | $(f "$t_one / $t_cp" .2f) |"
