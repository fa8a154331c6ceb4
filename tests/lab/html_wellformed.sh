#!/bin/sh
# The HTML page is one self-contained, well-formed (XHTML) file: no scripts, no external links.
lab=$1; work=$2
command -v xmllint > /dev/null 2>&1 || { echo "xmllint not found (Debian: libxml2-utils)"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
"$lab" bench --sizes 1024,65536,300000 --min-time 0.002 --html "$work/page.html" > "$work/table.txt" || { cat "$work/table.txt"; exit 1; }
xmllint --noout "$work/page.html" || exit 1
grep -q '<script' "$work/page.html" && { echo "the page has a script"; exit 1; }
grep -Eq '(src|href)="(https?:)?//' "$work/page.html" && { echo "the page links outside"; exit 1; }
svgs=$(grep -c '<svg xmlns' "$work/page.html")
[ "$svgs" -ge 8 ] || { echo "only $svgs pictures in the page"; exit 1; }
for v in read-ceiling copy-ceiling naive-f32 pairwise-f32 tally hillis-steele blelloch off-by-one; do
  grep -q ">$v<" "$work/page.html" || { echo "variant $v missing from the page"; exit 1; }
done
echo "page well-formed with $svgs pictures"
