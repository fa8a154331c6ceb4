#!/usr/bin/env bash
# The tally command against its baselines, in one run on one machine:
#   1. a CSV column of 10^7 prices ($5.00..$49.99): `tally sum` vs GNU datamash `sum 1`
#      (target: >= 10x faster, with the exact sum);
#   2. a .npy of 2^26 f64 in the page cache: `tally sum big.npy` (whole process: start, mmap,
#      header, reduce, print) vs the library's in-memory tally_reduce over the same bytes
#      (tools/tally_bench_inmem; target: >= 0.8x its throughput).
# Each figure is the best of R runs. Writes bench/results/cli-<date>.md unless NO_WRITE=1.
#
# usage: bench/cli_bench.sh [BUILD_DIR=build] [N=10000000] [R=5]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build}
n=${2:-10000000}
reps=${3:-5}
tally="$build/tools/tally"
inmem="$build/tools/tally_bench_inmem"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
for x in "$tally" "$inmem"; do [ -x "$x" ] || { echo "missing $x (build first)" >&2; exit 1; }; done
command -v datamash >/dev/null || { echo "datamash not installed (apt-get install datamash)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs every command round-robin, $reps rounds, so that all of them see the same machine load;
# prints "best_seconds<TAB>last_stdout" per command, in order. Commands are shell strings; one
# starting with "@" times itself (its stdout's first word is the time to use).
best_all() {
  "$py" - "$reps" "$@" <<'PY'
import subprocess, sys, time
reps = int(sys.argv[1]); cmds = sys.argv[2:]
best = [1e9] * len(cmds); outs = [""] * len(cmds)
for _ in range(reps):
    for i, c in enumerate(cmds):
        self_timed = c.startswith("@")
        t = time.perf_counter()
        p = subprocess.run(c.lstrip("@"), shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
        t = time.perf_counter() - t
        outs[i] = p.stdout.decode().strip()
        best[i] = min(best[i], float(outs[i].split()[0]) if self_timed else t)
for b, o in zip(best, outs):
    print(f"{b:.4f}\t{o}")
PY
}

echo "generating $n prices and a 512 MiB .npy in $work ..." >&2
exact=$("$py" - "$n" "$work" <<'PY'
import sys, numpy as np
n, work = int(sys.argv[1]), sys.argv[2]
cents = np.random.default_rng(2026).integers(500, 5000, n)
with open(f"{work}/prices.csv", "w") as f:
    f.write("\n".join(f"{c // 100}.{c % 100:02d}" for c in cents.tolist()))
    f.write("\n")
np.save(f"{work}/big.npy", np.random.default_rng(1).random(2**26) * 100)
s = int(cents.sum())
print(f"{s // 100}.{s % 100:02d}")
PY
)
cat "$work/prices.csv" "$work/big.npy" > /dev/null   # into the page cache

{
  read -r t_dm out_dm
  read -r t_ty out_ty
  read -r t_ty1 out_ty1
  read -r t_np out_np
  read -r t_pipe out_pipe
  read -r t_lib lib_out
} < <(best_all "datamash sum 1 < '$work/prices.csv'" "'$tally' sum '$work/prices.csv'" \
               "'$tally' -j 1 sum '$work/prices.csv'" "'$tally' sum '$work/big.npy'" \
               "cat '$work/prices.csv' | '$tally' sum" "@'$inmem' '$work/big.npy' sum 3")
csv_bytes=$(stat -c %s "$work/prices.csv")
npy_bytes=$(stat -c %s "$work/big.npy")

ratio_csv=$("$py" -c "print(f'{$t_dm / $t_ty:.1f}')")
ratio_csv1=$("$py" -c "print(f'{$t_dm / $t_ty1:.1f}')")
ratio_npy=$("$py" -c "print(f'{$t_lib / $t_np:.2f}')")
exact_ok=$([ "$out_ty" = "$exact" ] && echo "yes" || echo "NO")
gbs() { "$py" -c "print(f'{$1 / $2 / 1e9:.2f}')"; }

machine="$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1), $(nproc) cores online, $(free -g | awk '/Mem:/{print $2}') GiB RAM, load $(cut -d' ' -f1-3 /proc/loadavg)"
date_iso=$(date -u +%Y-%m-%dT%H:%M:%SZ)
report=$(cat <<EOF
# tally command benchmark

- date: $date_iso
- machine: $machine
- command: \`bench/cli_bench.sh $build $n $reps\` (best of $reps rounds, the commands run round-robin so each sees the same load; wall time of the whole process)
- tally: $("$tally" --version), $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
- datamash: $(datamash --version | head -1)

## CSV: one column of $n prices (\$5.00..\$49.99), $(("$csv_bytes" / 1000000)) MB, page cache

| command | time (s) | MB/s | result | exact? |
|---|---:|---:|---|---|
| \`datamash sum 1 < prices.csv\` (baseline) | $t_dm | $("$py" -c "print(f'{$csv_bytes / $t_dm / 1e6:.0f}')") | $out_dm | |
| \`tally sum prices.csv\` (all cores) | $t_ty | $("$py" -c "print(f'{$csv_bytes / $t_ty / 1e6:.0f}')") | $out_ty | $exact_ok (exact: $exact) |
| \`tally -j 1 sum prices.csv\` (one thread) | $t_ty1 | $("$py" -c "print(f'{$csv_bytes / $t_ty1 / 1e6:.0f}')") | $out_ty1 | |
| \`cat prices.csv \| tally sum\` (a pipe: read, not mapped) | $t_pipe | $("$py" -c "print(f'{$csv_bytes / $t_pipe / 1e6:.0f}')") | $out_pipe | |

Speed-up over datamash: **${ratio_csv}x** (all cores), ${ratio_csv1}x (one thread). Target: >= 10x.

## .npy: 2^26 f64 (512 MiB), page cache

| what | time (s) | GB/s |
|---|---:|---:|
| library in memory: \`tally_reduce_many(sum)\` on a malloc'd copy (tools/tally_bench_inmem, best of 3 per round) | $t_lib | $(gbs "$npy_bytes" "$t_lib") |
| \`tally sum big.npy\` (whole process: start, mmap, reduce, print) | $t_np | $(gbs "$npy_bytes" "$t_np") |

Command over library throughput: **${ratio_npy}x**. Target: >= 0.8x. Result: $out_np
EOF
)
echo "$report"
if [ "${NO_WRITE:-0}" != 1 ]; then
  out="$root/bench/results/cli-$(date -u +%Y-%m-%d).md"
  mkdir -p "$root/bench/results"
  echo "$report" > "$out"
  echo "wrote $out" >&2
fi
