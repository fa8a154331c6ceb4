#!/usr/bin/env bash
# Instructions per value of the f64 bins' inner loops (bench/sass_bins.cu: digits, REDUCE_BINS=1,
# windows, =2, register windows, =3, the default), by class: SASS from cuobjdump when the toolkit
# has it, else PTX.
# Counts the whole kernel (one batch of 16 values per thread plus a few loop instructions), / 16.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/cuda/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-arch=sm_90 -O3 -Isrc -Iinclude -fmad=false -ftz=false)
if command -v cuobjdump >/dev/null; then
  nvcc "${flags[@]}" -cubin -o "$tmp/k.cubin" bench/sass_bins.cu
  cuobjdump -sass "$tmp/k.cubin" >"$tmp/k.txt"
  kind=SASS
else
  nvcc "${flags[@]}" -ptx -o "$tmp/k.txt" bench/sass_bins.cu
  kind="PTX (no cuobjdump)"
fi
python3 - "$tmp/k.txt" "$kind" <<'PY'
import re, sys
text, kind = open(sys.argv[1]).read(), sys.argv[2]
sass = kind == "SASS"
def body(name):
    if sass:
        i = text.index("Function : " + [n for n in re.findall(r"Function : (\S+)", text) if name in n][0])
        j = text.find("Function : ", i + 10)
        lines = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w*\s+)?([A-Z][A-Z0-9_.]*)", text[i:j if j > 0 else None])
        return [l for l in lines if l.split(".")[0] not in ("NOP", "BRA", "EXIT")]
    i = text.index(".entry " + [n for n in re.findall(r"\.entry (\S+?)\(", text) if name in n][0])
    b = text[i:text.index("\n}\n", i)]
    out = []
    for l in b.split("\n"):
        l = l.strip()
        if not l or l[0] in ".{}/$" or l.endswith(":") or l.startswith("mov.b64") or l.startswith("cvt.u32.u64") or l.startswith("cvt.u64.u32"):
            continue  # moves and 32/64-bit repacks: no instruction in SASS
        if l.startswith("@"): l = l.split(None, 1)[1]
        out.append(l.split()[0])
    return out
def cls(op):
    o = op.lower()
    if o.startswith(("lds", "sts", "ld.shared", "st.shared")): return "shared"
    if o.startswith(("ldg", "ld.global", "stg", "st.global", "ld.param", "ldc", "uldc")): return "global/const"
    if o.startswith(("dadd", "dfma", "dmul", "add.rn.f64", "sub.rn.f64", "add.f64", "sub.f64")): return "fp64"
    if o.startswith(("bra", "ret", "exit", "bar", "s2r", "s2ur", "cs2r")) or o[0] == "u":
        return "control/uniform"
    return "integer/other"
print(f"f64 bins, per value ({kind}; whole kernel / 16):")
print(f"{'kernel':14s} {'total':>6s} {'integer':>8s} {'fp64':>5s} {'shared':>7s} {'other':>6s}")
for name, label in (("bins_digits", "digits (=1)"), ("bins_windows", "windows (=2)"), ("bins_regw", "regwin (=3)")):
    ops = body(name)
    c = {}
    for o in ops: c[cls(o)] = c.get(cls(o), 0) + 1
    print(f"{label:14s} {len(ops)/16:6.1f} {c.get('integer/other',0)/16:8.1f} {c.get('fp64',0)/16:5.1f} {c.get('shared',0)/16:7.1f} "
          f"{(c.get('global/const',0)+c.get('control/uniform',0))/16:6.1f}")
PY
