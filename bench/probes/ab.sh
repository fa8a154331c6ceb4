#!/usr/bin/env bash
# A/B of two builds of bench_cuda on the GPU machine, interleaved (A B A B ...) so that drift
# shows up in both: bash bench/probes/ab.sh DIR_A DIR_B ROUNDS [bench_cuda args...]
# Each DIR holds bench_cuda (optionally .xz-compressed, as carried over); tables go to $OUT.
set -uo pipefail
A=$1 B=$2 R=$3
shift 3
OUT=${OUT:-/tmp/ab-out}
mkdir -p "$OUT" /tmp/ab
for d in A B; do
  src=${!d}
  mkdir -p /tmp/ab/$d
  if [ -f "$src/bench_cuda.xz" ]; then xz -dc "$src/bench_cuda.xz" >/tmp/ab/$d/bench_cuda; else cp "$src/bench_cuda" /tmp/ab/$d/; fi
  chmod +x /tmp/ab/$d/bench_cuda
done
for r in $(seq 1 "$R"); do
  for d in A B; do
    /tmp/ab/$d/bench_cuda "$@" --out "$OUT/$d$r.md" >"$OUT/bench-$d$r.log" 2>&1
    echo "$d round $r: rc=$? $(grep -c '^| ' "$OUT/$d$r.md") rows, $(grep 'validation failures' "$OUT/bench-$d$r.log")"
  done
done
