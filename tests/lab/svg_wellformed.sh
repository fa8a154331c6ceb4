#!/bin/sh
# Every picture of tally explain is well-formed XML, small and large sizes alike.
lab=$1; work=$2
command -v xmllint > /dev/null 2>&1 || { echo "xmllint not found (Debian: libxml2-utils)"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
printf '1.5 2.25\n-3e2, 4\n1e-3\n' > "$work/numbers.txt"
i=0
check() { i=$((i + 1)); f="$work/p$i.svg"
  "$lab" explain "$@" --svg "$f" || { echo "explain $* failed"; exit 1; }
  xmllint --noout "$f" || { echo "explain $* is not well-formed"; exit 1; }
  grep -q '<svg xmlns="http://www.w3.org/2000/svg"' "$f" || { echo "explain $*: no svg root"; exit 1; }; }
for n in 1 2 3 5 16 32 64 65 100 1000 65539; do
  check sum,min,max --n $n
done
check sum --n 300 --type f32
check min --n 48
check max --n 1000
check tree --n 256
check scan
check scan --n 1
check scan --n 64
check scan --n 65
check scan --n 100000
check two-pass
check two-pass --n 1000
check two-pass --n 300000
check accuracy --n 100000
check accuracy --input "$work/numbers.txt"
check warp
check warp --n 1
check warp --n 100
check warp --n 1024
check all --n 40
# A .npy input, where the tally command's readers are built in (written by hand: no numpy needed).
if command -v python3 > /dev/null 2>&1; then
  python3 -c '
import struct, sys
h = "{\x27descr\x27: \x27<f4\x27, \x27fortran_order\x27: False, \x27shape\x27: (3,), }"
h += " " * (64 - (10 + len(h) + 1) % 64) + "\n"
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + struct.pack("<3f", 1.5, 2.25, 3.0))
' "$work/numbers.npy"
  f="$work/npy.svg"
  if "$lab" explain accuracy --input "$work/numbers.npy" --svg "$f" 2> "$work/npy.err"; then
    xmllint --noout "$f" || exit 1
    grep -q '>6.75<' "$f" || { echo "the .npy sum is not 6.75"; exit 1; }
  elif ! grep -q 'is not a number' "$work/npy.err"; then
    cat "$work/npy.err"; exit 1   # without the readers .npy reads as text and fails cleanly
  fi
fi
echo "$i pictures well-formed"
