#!/bin/sh
# The deliberately incorrect variant is flagged WRONG at every size, and nothing else is.
lab=$1; work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
sizes=1,7,1000,1024,1025,65537
"$lab" bench --validate-only --sizes $sizes --csv > "$work/out.csv"
rc=$?
[ $rc -eq 0 ] || { echo "bench exited $rc"; cat "$work/out.csv"; exit 1; }
wrong=$(awk -F, 'NR > 1 && ($10 ~ /WRONG/ || $10 ~ /NOT CAUGHT/ || $10 == "failed") { print $2 }' "$work/out.csv" | sort -u)
if [ "$wrong" != "off-by-one" ]; then
    echo "expected only off-by-one to be WRONG, got: $wrong"; cat "$work/out.csv"; exit 1
fi
caught=$(grep -c '^cpu,off-by-one,.*,WRONG (caught),' "$work/out.csv")
[ "$caught" -eq 6 ] || { echo "off-by-one caught at $caught of 6 sizes"; cat "$work/out.csv"; exit 1; }
# The human table says so too.
"$lab" bench --validate-only --sizes 4096 --family reduce > "$work/table.txt" || exit 1
grep -q 'off-by-one .*WRONG (caught)' "$work/table.txt" || { cat "$work/table.txt"; exit 1; }
# The exit status follows the verdicts: --strict fails on the caught variant, and passes when it
# is left out.
"$lab" bench --validate-only --sizes 4096 --family reduce --strict > "$work/strict.txt"
[ $? -eq 1 ] || { echo "--strict did not fail on the caught variant"; exit 1; }
"$lab" bench --validate-only --sizes 4096 --family reduce --variants tally,pairwise --strict > "$work/strict2.txt"
[ $? -eq 0 ] || { echo "--strict failed without the incorrect variant"; cat "$work/strict2.txt"; exit 1; }
grep -q "^  off-by-one " "$work/strict2.txt" && { echo "--variants did not leave off-by-one out"; exit 1; }
echo "off-by-one caught at every size; every other variant correct"
