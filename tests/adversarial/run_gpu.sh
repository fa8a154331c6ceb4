#!/usr/bin/env bash
# The adversarial harness on the GPU machine: builds tally_adversarial with CUDA (sm_90) unless
# ADV_BIN names one, then runs it on every core at once (one shard per process, each with its own
# CUDA context), ARRAYS arrays in all (default 100000) within SECONDS (default 240), and prints the
# families' and runners' totals and the first failures. ADV_ODD_ENV="VAR=value ...": the odd
# shards run with that environment (a tuning build's knobs, e.g. the exact sums' bins), so one
# run checks the default kernels and a variant on the same families. ADV_SPEC_ENV (default
# TALLY_CUDA_SPEC=2: the speculative f32/f64 sum first at every size, so its answers and its
# declines to the exact kernel are both exercised on every family; ADV_SPEC_ENV= for none): the
# shards 2, 6, 10, ... run with that environment instead. ADV_BACKENDS (default cuda): the
# harness's --backends, e.g. vulkan (then ADV_SPEC_ENV=TALLY_VULKAN_SPEC=2 puts the f32 sums
# through the Vulkan speculative tier on those shards).
#
#   bash tests/adversarial/run_gpu.sh [ARRAYS] [SECONDS] [extra harness options...]
set -uo pipefail
cd "$(dirname "$0")/../.."
ARRAYS=${1:-100000}
SECONDS_MAX=${2:-240}
shift 2 2>/dev/null || shift $#
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
B=${BUILD_DIR:-build-gpu}
BIN=${ADV_BIN:-}
if [ -z "$BIN" ]; then
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DTALLY_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DTALLY_BUILD_CLI=OFF -DTALLY_BUILD_BENCH=OFF >"$OUT/adv-build.log" 2>&1 &&
  cmake --build "$B" -j"$(nproc)" --target tally_adversarial >>"$OUT/adv-build.log" 2>&1 ||
    { tail -30 "$OUT/adv-build.log"; exit 1; }
  BIN=$(find "$B" -name tally_adversarial -type f -perm -u+x | head -1)
fi
SEED=${ADV_SEED:-$(( $(date +%s) * 2654435761 % 4294967296 ))}
J=${ADV_JOBS:-$(( $(nproc) > 2 ? $(nproc) - 1 : 1 ))}   # shards (processes); ADV_JOBS sets it
echo "adversarial on the GPU: $ARRAYS arrays, seed $SEED, $J shards, at most ${SECONDS_MAX}s"
[ -n "${ADV_ODD_ENV:-}" ] && echo "odd shards with: $ADV_ODD_ENV"
[ -n "${ADV_SPEC_ENV-TALLY_CUDA_SPEC=2}" ] && echo "shards 2, 6, 10, ... with: ${ADV_SPEC_ENV-TALLY_CUDA_SPEC=2}"
pids=()
for k in $(seq 0 $((J - 1))); do
  envs=()
  [ $((k % 2)) = 1 ] && [ "$J" -gt 1 ] && read -r -a envs <<<"${ADV_ODD_ENV:-}"
  [ $((k % 4)) = 2 ] && read -r -a envs <<<"${ADV_SPEC_ENV-TALLY_CUDA_SPEC=2}"
  env ${envs[@]+"${envs[@]}"} "$BIN" --backends "${ADV_BACKENDS:-cuda}" --seed "$SEED" --arrays "$ARRAYS" --seconds "$SECONDS_MAX" --shard "$k/$J" \
    --max-n 4194304 "$@" >"$OUT/adv-$k.log" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
if [ -n "${ADV_ODD_ENV:-}" ]; then # a failure on an odd shard names its environment
  for k in $(seq 1 2 $((J - 1))); do sed -i "s|^FAIL|FAIL [$ADV_ODD_ENV]|" "$OUT/adv-$k.log"; done
fi
if [ -n "${ADV_SPEC_ENV-TALLY_CUDA_SPEC=2}" ]; then # and on a speculative shard
  for k in $(seq 2 4 $((J - 1))); do sed -i "s|^FAIL|FAIL [${ADV_SPEC_ENV-TALLY_CUDA_SPEC=2}]|" "$OUT/adv-$k.log"; done
fi
cat "$OUT"/adv-*.log >"$OUT/adversarial.log"
rm -f "$OUT"/adv-[0-9]*.log
grep -h '^FAIL' "$OUT/adversarial.log" | head -40
awk '/^family /{f=1;next} /^runner /{f=0;r=1;next} NF==0{f=0;r=0}
     f&&NF==3{A[$1]+=$2;F[$1]+=$3} r&&NF==4{RA[$1]+=$2;RC[$1]+=$3;RF[$1]+=$4}
     /^adversarial: /{P+=$2;X+=$4}
     END{printf "%-18s %9s %9s\n","family","arrays","failed"; for(k in A) printf "%-18s %9d %9d\n",k,A[k],F[k];
         printf "%-18s %9s %10s %9s\n","runner","arrays","checks","failed"; for(k in RA) printf "%-18s %9d %10d %9d\n",k,RA[k],RC[k],RF[k];
         printf "adversarial (GPU, seed '"$SEED"'): %d passed, %d failed\n",P,X}' "$OUT/adversarial.log"
exit $rc
