#!/bin/sh
# Every picture of tally explain is well-formed XML, small and large sizes alike.
lab=$1; work=$2
command -v xmllint > /dev/null 2>&1 || { echo "xmllint not found (Debian: libxml2-utils)"; exit 77; }
mkdir -p "$work" || exit 1
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
check all --n 40
echo "$i pictures well-formed"
