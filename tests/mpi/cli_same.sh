#!/usr/bin/env bash
# tally-mpi against tally on the same files: raw arrays of random bytes (every type, both byte
# orders; floats with NaN and inf among them), .npy files (1-d, 2-d C and Fortran order) when
# numpy is there, reductions and scans (npy and text output), and errors (exit status, no output
# file). Usage: cli_same.sh TALLY TALLY_MPI MPIEXEC [mpiexec flags...]
set -uo pipefail
T=$1; M=$2; shift 2; RUN=("$@")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
fail=0; checks=0
# RANKS: the rank counts to try (mpirun costs a second or so each on a busy 2-core machine)
RANKS="3"
same() { # what, then the common arguments
  local what=$1; shift
  checks=$((checks + 1))
  "$T" "$@" >"$W/one" 2>"$W/one.err"; local r1=$?
  for np in $RANKS; do
    "${RUN[@]}" -np $np "$M" "$@" >"$W/many" 2>"$W/many.err"; local r2=$?
    if [ $r1 != $r2 ] || ! cmp -s "$W/one" "$W/many"; then
      echo "DIFFERENT ($what, $np ranks): tally $* -> exit $r1; tally-mpi exit $r2"
      diff "$W/one" "$W/many" | head -5; head -3 "$W/many.err"; fail=$((fail + 1)); return
    fi
  done
}
OPS=sum,min,max,mean,var,svar,std,argmin,argmax,count
for t in i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 '>i4' '>f8'; do
  head -c $((8 * 7919)) /dev/urandom >"$W/raw"
  case $t in f*|'>f8') ops=$OPS,prod ;; *) ops=$OPS,and,or,xor ;; esac
  [ "$t" = i64 ] || [ "$t" = u64 ] && ops=min,max,argmin,argmax,count,and,or,xor
  same "raw $t" --dtype "$t" "$ops" "$W/raw"
  case $t in f*) same "raw $t omit-nan" --dtype "$t" --omit-nan "$ops" "$W/raw" ;; esac
done
RANKS="1 2 4 7"
same "raw f64 json" --dtype f64 --json sum,min,argmax "$W/raw"
same "raw i16 and" --dtype i16 sum,and,argmin "$W/raw"
RANKS="3"
head -c 0 /dev/null >"$W/empty"
same "empty raw" --dtype f64 count,sum,min "$W/empty"
if python3 -c 'import numpy' 2>/dev/null; then
  python3 - "$W" <<'PY'
import sys, numpy as np
w = sys.argv[1]; r = np.random.default_rng(7)
np.save(w + '/a.npy', r.standard_normal(100003) * 1e3)
np.save(w + '/b.npy', r.integers(-1000, 1000, size=(5001, 3)).astype('>i4'))
np.save(w + '/c.npy', np.asfortranarray(r.random((777, 2)).astype(np.float32)))
np.save(w + '/d.npy', np.array([], dtype=np.int16))
PY
  for f in a b c d; do same "npy $f" $OPS "$W/$f.npy"; done
  same "npy b json -f 1,3" --json -f 1,3 sum,max "$W/b.npy"
  for op in sum max; do
    checks=$((checks + 1))
    "$T" scan $op -f 2 "$W/b.npy" -o "$W/s1.npy" && "${RUN[@]}" -np 3 "$M" scan $op -f 2 "$W/b.npy" -o "$W/s2.npy" &&
      cmp -s "$W/s1.npy" "$W/s2.npy" || { echo "DIFFERENT: scan $op"; fail=$((fail + 1)); }
    checks=$((checks + 1))
    "$T" scan $op --exclusive --init 5 --text "$W/a.npy" -o "$W/s1.txt" &&
      "${RUN[@]}" -np 1 "$M" scan $op --exclusive --init 5 --text "$W/a.npy" -o "$W/s2.txt" &&
      cmp -s "$W/s1.txt" "$W/s2.txt" || { echo "DIFFERENT: text scan $op (1 rank)"; fail=$((fail + 1)); }
  done
else
  echo "numpy not found: .npy cases left out"
fi
# errors: the same exit status everywhere, no output file left behind
checks=$((checks + 1))
"${RUN[@]}" -np 3 "$M" sum "$W/missing" >/dev/null 2>&1; [ $? = 1 ] || { echo "missing file: wrong exit"; fail=$((fail + 1)); }
checks=$((checks + 1))
"${RUN[@]}" -np 3 "$M" scan argmin --dtype f64 "$W/raw" -o "$W/x.npy" >/dev/null 2>&1
[ $? = 2 ] && [ ! -e "$W/x.npy" ] || { echo "scan argmin: wrong exit or an output file"; fail=$((fail + 1)); }
checks=$((checks + 1))
"${RUN[@]}" -np 3 "$M" scan sum --dtype i32 --init 99999999999 "$W/raw" -o "$W/x.npy" >/dev/null 2>&1
[ $? = 2 ] && [ ! -e "$W/x.npy" ] && ! ls "$W"/x.npy.tmp* >/dev/null 2>&1 ||
  { echo "scan bad init: wrong exit or an output file"; fail=$((fail + 1)); }
echo "cli_same: $checks checks, $fail failed"
[ $fail = 0 ]
