#!/bin/sh
# The page renders in headless Chromium and the screenshot is not blank.
lab=$1; work=$2; dir=$3
browser=
for b in chromium chromium-browser google-chrome; do
  command -v $b > /dev/null 2>&1 && { browser=$b; break; }
done
[ -n "$browser" ] || { echo "no chromium here: skipped"; exit 77; }
command -v python3 > /dev/null 2>&1 || { echo "no python3 here: skipped"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
rm -f "$work/shot.png"
"$lab" bench --sizes 4096,65536 --min-time 0.002 --html "$work/page.html" > /dev/null || exit 1
profile=$(mktemp -d)
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --screenshot="$work/shot.png" --window-size=1200,900 \
  "file://$work/page.html" > "$work/browser.log" 2>&1
rm -rf "$profile"
[ -s "$work/shot.png" ] || { echo "no screenshot"; cat "$work/browser.log"; exit 1; }
python3 "$dir/check_png.py" "$work/shot.png"
