#!/bin/sh
# `tally bench --backend vulkan`: seed 004's kernels as Vulkan compute shaders beside tally's,
# validated at sizes around the workgroup and vec4 boundaries. The deliberately incorrect
# vk-broken-tree is flagged WRONG at every size and nothing else is; the validation layer stays
# quiet (a message fails the variant). Exit 77 without a Vulkan device or a lab built without it.
lab=$1; work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
"$lab" bench --list > "$work/list.txt" 2>&1
grep -q '^vulkan ' "$work/list.txt" || { echo "SKIP: the lab has no Vulkan variants"; exit 77; }
sizes=1,7,255,256,257,1000,1024,1025,4099,65537,262147
TALLY_VULKAN_VALIDATION=1 "$lab" bench --backend vulkan --validate-only --sizes $sizes --csv > "$work/out.csv" 2> "$work/err.txt"
rc=$?
if grep -q "not available" "$work/err.txt"; then echo "SKIP: $(cat "$work/err.txt")"; exit 77; fi
[ $rc -eq 0 ] || { echo "bench exited $rc"; cat "$work/err.txt" "$work/out.csv"; exit 1; }
wrong=$(awk -F, 'NR > 1 && ($10 ~ /WRONG/ || $10 ~ /NOT CAUGHT/ || $10 == "failed") { print $2 }' "$work/out.csv" | sort -u)
if [ "$wrong" != "vk-broken-tree" ]; then
    echo "expected only vk-broken-tree to be WRONG, got: $wrong"; cat "$work/out.csv"; exit 1
fi
caught=$(grep -c '^vulkan,vk-broken-tree,.*,WRONG (caught),' "$work/out.csv")
[ "$caught" -eq 11 ] || { echo "vk-broken-tree caught at $caught of 11 sizes"; cat "$work/out.csv"; exit 1; }
for v in vk-naive-atomic vk-workgroup-tree vk-subgroup vk-subgroup-vec4 tally-vulkan tally-vulkan-sum-min-max; do
    ok=$(grep -c "^vulkan,$v,.*,correct," "$work/out.csv")
    [ "$ok" -eq 11 ] || { echo "$v correct at $ok of 11 sizes"; cat "$work/out.csv"; exit 1; }
done
# timed too (device timestamps), and the table names the caught variant
TALLY_VULKAN_VALIDATION=1 "$lab" bench --backend vulkan --sizes 4096 --min-time 0.01 > "$work/table.txt" 2>&1 || { cat "$work/table.txt"; exit 1; }
grep -q 'vk-broken-tree .*WRONG (caught)' "$work/table.txt" || { cat "$work/table.txt"; exit 1; }
# (in whatever unit the table picks: a loaded machine gave 3.35 ms)
grep -Eq 'vk-subgroup-vec4 .* [0-9.]+ (ns|us|ms|s) ' "$work/table.txt" || { echo "no time for vk-subgroup-vec4"; cat "$work/table.txt"; exit 1; }
echo "vk-broken-tree caught at every size; every other Vulkan variant correct; no validation message"
