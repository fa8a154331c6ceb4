#!/bin/sh
# Usage errors exit 2 with a message; nothing half-written is left behind.
lab=$1; work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
expect() { want=$1; shift; "$@" > "$work/out" 2> "$work/err"; got=$?
  if [ $got -ne $want ]; then echo "expected exit $want, got $got: $*"; cat "$work/err"; fail=1; fi; }
expect 2 "$lab" bench --bogus
expect 2 "$lab" bench --json --csv
expect 2 "$lab" bench --sizes 12x
expect 2 "$lab" bench --threads -1
expect 2 "$lab" bench --family nope
expect 2 "$lab" explain
expect 2 "$lab" explain sum
expect 2 "$lab" explain nope --svg "$work/x.svg"
expect 2 "$lab" explain sum --n 1z --svg "$work/x.svg"
expect 2 "$lab" explain scan --input foo --svg "$work/x.svg"
expect 1 "$lab" explain warp --n 1025 --svg "$work/x.svg"
expect 1 "$lab" explain sum --n 0 --svg "$work/x.svg"
expect 1 "$lab" explain sum --svg "$work/no/such/dir/x.svg"
expect 0 "$lab" bench --help
expect 0 "$lab" explain --help
expect 0 "$lab" bench --list
[ -e "$work/x.svg" ] && { echo "a failed explain left $work/x.svg"; fail=1; }
ls "$work" | grep -q tmp && { echo "temporary files left behind"; fail=1; }
exit $fail
