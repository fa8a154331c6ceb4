#!/usr/bin/env bash
# tally-mpi against tally on the same files: the same standard output (results, tables, JSON),
# the same messages on stderr (tally-mpi's name for tally's; mpirun's own banners left out), the
# same exit status, and for scans the same output file, or none at all when tally writes none.
#   - raw arrays of random bytes (every type, both byte orders; floats with NaN and inf), .npy
#     files (1-d, 2-d C and Fortran order) when numpy is there;
#   - text (cli_text_files.py): CSV, TSV and whitespace files whose quoted fields hold newlines
#     and fake records across the ranks' byte boundaries, headers, fields that change form on
#     one rank only (more decimals, integers then decimals, a float, an int64 overflow at the
#     new scale), NaN and infinities, squares that overflow, skipped values (more than 10, so
#     the cap on named skips counts across ranks), every kind of bad input (the first error in
#     the file, with its line), and text scans;
#   the main text cases on 1, 2, 3, 4 and 7 ranks, the others each on one rank count, taken in
#   turn from 2, 3, 4, 7 (each mpirun costs about half a second on a busy 2-core machine).
# Usage: cli_same.sh TALLY TALLY_MPI MPIEXEC [mpiexec flags...]
set -uo pipefail
T=$1; M=$2; shift 2; RUN=("$@")
# a hang (a collective one rank skipped) fails its check instead of the whole test's time limit
command -v timeout >/dev/null && RUN=(timeout 120 "${RUN[@]}")
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
fail=0; checks=0
ALL="1 2 3 4 7"
RANKS="3"

# stderr as tally would print it: the command's own lines (its name first, a usage line, or a
# reader's FILE:LINE:FIELD message), not mpirun's notices; tally-mpi's name made tally's
norm() {
  grep -a -E '^(tally(-mpi)?: |usage: |[^ ]+:[0-9]+:[0-9]+: )' "$1" |
    sed -e 's/^tally-mpi: /tally: /' -e 's/^usage: tally-mpi /usage: tally /' \
        -e 's/(tally-mpi --help/(tally --help/'
}

# RANKS for the next check: one rank count, in turn
TURN=0
turn() { local c=(2 3 4 7); RANKS=${c[$((TURN % 4))]}; TURN=$((TURN + 1)); }

differ() { # what np: report a difference
  echo "DIFFERENT ($1, $2 ranks): $3"
  fail=$((fail + 1))
}

# same WHAT ARGS...: tally and tally-mpi on RANKS ranks give the same stdout, stderr, status
same() {
  local what=$1; shift
  checks=$((checks + 1))
  (cd "$W" && "$T" "$@" >one 2>one.err); local r1=$?
  norm "$W/one.err" >"$W/one.msg"
  for np in $RANKS; do
    (cd "$W" && "${RUN[@]}" -np $np "$M" "$@" >many 2>many.err); local r2=$?
    norm "$W/many.err" >"$W/many.msg"
    if [ $r1 != $r2 ] || ! cmp -s "$W/one" "$W/many" || ! cmp -s "$W/one.msg" "$W/many.msg"; then
      differ "$what" $np "tally $* -> exit $r1, tally-mpi exit $r2"
      diff "$W/one" "$W/many" | head -6; diff "$W/one.msg" "$W/many.msg" | head -6
      return
    fi
  done
}

# same_scan WHAT ARGS...: as same, for a scan written to -o OUT: the same file, or none
same_scan() {
  local what=$1; shift
  checks=$((checks + 1))
  rm -f "$W"/s1 "$W"/s2
  (cd "$W" && "$T" "$@" -o s1 >one 2>one.err); local r1=$?
  norm "$W/one.err" >"$W/one.msg"
  for np in $RANKS; do
    rm -f "$W"/s2
    (cd "$W" && "${RUN[@]}" -np $np "$M" "$@" -o s2 >many 2>many.err); local r2=$?
    norm "$W/many.err" | sed 's/\bs2\b/s1/g' >"$W/many.msg"
    local left; left=$(ls "$W" | grep '\.tmp\.' || true)
    if [ $r1 != $r2 ] || ! cmp -s "$W/one.msg" "$W/many.msg" || [ -n "$left" ] ||
       { [ -e "$W/s1" ] && ! cmp -s "$W/s1" "$W/s2"; } || { [ ! -e "$W/s1" ] && [ -e "$W/s2" ]; }; then
      differ "$what" $np "tally $* -> exit $r1, tally-mpi exit $r2${left:+, left behind: $left}"
      diff "$W/one.msg" "$W/many.msg" | head -6
      [ -e "$W/s1" ] && [ -e "$W/s2" ] && cmp "$W/s1" "$W/s2" | head -2
      rm -f "$W"/*.tmp.*
      return
    fi
  done
}

# ---- arrays ---------------------------------------------------------------------------------
OPS=sum,min,max,mean,var,svar,std,argmin,argmax,count
for t in i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 '>i4' '>f8'; do
  head -c $((8 * 7919)) /dev/urandom >"$W/raw"
  case $t in f*|'>f8') ops=$OPS,prod ;; *) ops=$OPS,and,or,xor ;; esac
  [ "$t" = i64 ] || [ "$t" = u64 ] && ops=min,max,argmin,argmax,count,and,or,xor
  same "raw $t" --dtype "$t" "$ops" raw
  case $t in f64|'>f8') same "raw $t omit-nan" --dtype "$t" --omit-nan "$ops" raw ;; esac
done
RANKS="1 2 4 7"
same "raw f64 json" --dtype f64 --json sum,min,argmax raw
same "raw i16 and" --dtype i16 sum,and,argmin raw
RANKS="3"
: >"$W/empty"
same "empty raw" --dtype f64 count,sum,min empty
same "empty text" count,sum,min empty
if $PY -c 'import numpy' 2>/dev/null; then
  $PY - "$W" <<'PY'
import sys, numpy as np
w = sys.argv[1]; r = np.random.default_rng(7)
np.save(w + '/a.npy', r.standard_normal(100003) * 1e3)
np.save(w + '/b.npy', r.integers(-1000, 1000, size=(5001, 3)).astype('>i4'))
np.save(w + '/c.npy', np.asfortranarray(r.random((777, 2)).astype(np.float32)))
np.save(w + '/d.npy', np.array([], dtype=np.int16))
PY
  for f in a b c d; do same "npy $f" $OPS $f.npy; done
  same "npy b json -f 1,3" --json -f 1,3 sum,max b.npy
  for op in sum max; do same_scan "scan $op" scan $op -f 2 b.npy; done
  RANKS=1
  same_scan "text scan of floats" scan sum --exclusive --init 5 --text a.npy
  RANKS=3
  same "npy -H" -H sum b.npy
else
  echo "numpy not found: .npy cases left out"
fi
same_scan "scan argmin" scan argmin --dtype f64 raw
same_scan "scan bad init" scan sum --dtype i32 --init 99999999999 raw
same "missing file" sum missing

# ---- text -----------------------------------------------------------------------------------
$PY "$HERE/cli_text_files.py" "$W" || { echo "cli_text_files.py failed"; exit 1; }
NUM=id,price,mixed,big,sci,fl,huge,flag
MOM=count,sum,min,max,mean,var,std,svar,sstd,argmin,argmax
RANKS=$ALL
same "csv: every form change, quoted newlines" -H -f $NUM $MOM q.csv
same "skipped values" -H --skip-invalid sum,count,mean skip.csv
same_scan "scan sum of decimals, more places late" scan sum -H -f price --text q.csv
turn; same "csv: integers" -H -f id,flag,sci and,or,xor,prod,sum,count q.csv
turn; same "tsv: json, omit-nan, small blocks" -H -f 1,3-9 --json --omit-nan --block-size 700 $MOM t.tsv
turn; same "whitespace" -W sum,mean,var,min,max,argmax w.txt
turn; same "csv by number, -t" -t , -H -f 3,5 sum,min q.csv
turn; same "header only" -H count,min hdr.csv
turn; same "csv: threads" -j 2 -H -f price,mixed sum,var q.csv
for f in value quote short nul; do turn; same "bad $f" -H -f v,w sum,max bad_$f.csv; done
turn; same "bad: and of a decimal" -H -f v,w sum,and bad_bitwise.csv
turn; same "no such field" -H -f nosuch sum q.csv
# scans of text: exact decimals and integers, min/max of floats (float sums are the ranks' own
# rounding on more than one rank, docs/mpi.md)
turn; same_scan "scan min exclusive of decimals" scan min --exclusive -H -f mixed q.csv
turn; same_scan "scan max of floats" scan max -H -f fl --text q.csv
turn; same_scan "scan sum exclusive init" scan sum --exclusive --init 0.5 -H -f mixed --text q.csv
turn; same_scan "scan prod of integers" scan prod -H -f flag q.csv
turn; same_scan "scan of decimals past int64" scan sum -H -f big --text q.csv
turn; same_scan "scan skipping" scan sum --skip-invalid -H -f b --text skip.csv
turn; same_scan "scan of a bad file" scan sum -H -f v bad_value.csv
# standard output and devices get the ranks' values in rank order through rank 0
turn; same "scan to standard output" scan sum -H -f price --text q.csv
[ -w /dev/full ] && { turn; same "scan to a full device" scan max -H -f fl q.csv -o /dev/full; }
# an existing OUT survives a failed scan untouched
checks=$((checks + 1))
echo keep >"$W/keep"
"${RUN[@]}" -np 3 "$M" scan sum -H -f v "$W/bad_value.csv" -o "$W/keep" >/dev/null 2>&1
[ $? = 1 ] && [ "$(cat "$W/keep")" = keep ] && ! ls "$W" | grep -q '\.tmp\.' ||
  { echo "a failed scan changed OUT or left a temporary file"; fail=$((fail + 1)); }
echo "cli_same: $checks checks, $fail failed"
[ $fail = 0 ]
