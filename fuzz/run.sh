#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time: fuzz/run.sh BUILD_DIR [SECONDS_EACH=20]
# Seeds come from fuzz/corpus/<target>/; new inputs go to a scratch copy. Exits non-zero when a
# target crashes (the reproducer is left in BUILD_DIR/fuzz/artifacts/).
set -uo pipefail
build=${1:?usage: fuzz/run.sh BUILD_DIR [SECONDS]}
secs=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
art="$build/fuzz/artifacts"
mkdir -p "$art"
status=0
for t in number npy_header csv options command; do
  bin="$build/fuzz/fuzz_$t"
  if [ ! -x "$bin" ]; then echo "fuzz_$t: not built" >&2; status=1; continue; fi
  work=$(mktemp -d)
  [ -d "$here/corpus/$t" ] && cp "$here/corpus/$t"/* "$work"/ 2>/dev/null
  echo "== fuzz_$t (${secs}s)"
  extra=""
  [ "$t" = command ] && extra="-close_fd_mask=3"    # the command's own output and messages
  if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 $extra \
       -artifact_prefix="$art/fuzz_$t-" -print_final_stats=1 "$work" >"$work.log" 2>&1; then
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$work.log" | tail -2
  else
    echo "fuzz_$t FAILED:"; tail -40 "$work.log"; status=1
  fi
  rm -rf "$work" "$work.log"
done
exit $status
