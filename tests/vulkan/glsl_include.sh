#!/usr/bin/env bash
# include/tally_subgroup.glsl: every function, and the example shader, compile to valid SPIR-V
# in the four ways (native subgroup arithmetic or the shuffle butterfly; with or without the
# 64-bit types), and the native build lowers to the seed's GroupNonUniform instructions.
#   glsl_include.sh GLSLC SOURCE_DIR
set -u
glslc=$1; src=$2; tmp=$(mktemp -d); fail=0; n=0
val=$(command -v spirv-val || true)
for shader in "$src/tests/vulkan/glsl_all_ops.comp" "$src/examples/vulkan/wave_reduce.comp"; do
  for v in "" "-DTALLY_SUBGROUP_NO_ARITHMETIC" "-DTALLY_GLSL_64" "-DTALLY_GLSL_64 -DTALLY_SUBGROUP_NO_ARITHMETIC"; do
    n=$((n + 1))
    if ! "$glslc" --target-env=vulkan1.1 -I"$src/include" $v "$shader" -o "$tmp/s.spv" 2>"$tmp/err"; then
      echo "FAIL: $(basename "$shader") $v:"; cat "$tmp/err"; fail=$((fail + 1)); continue
    fi
    if [ -n "$val" ] && ! "$val" --target-env vulkan1.1 "$tmp/s.spv"; then
      echo "FAIL: spirv-val $(basename "$shader") $v"; fail=$((fail + 1))
    fi
  done
done
# the example, native: one instruction per reduction (IAdd, UMax, BitwiseXor, BitwiseOr)
if command -v spirv-dis >/dev/null; then
  n=$((n + 1))
  "$glslc" --target-env=vulkan1.1 -I"$src/include" "$src/examples/vulkan/wave_reduce.comp" -o "$tmp/w.spv"
  for op in IAdd UMax BitwiseXor BitwiseOr; do
    spirv-dis "$tmp/w.spv" | grep -q "OpGroupNonUniform$op" || { echo "FAIL: no OpGroupNonUniform$op"; fail=$((fail + 1)); }
  done
fi
rm -rf "$tmp"
echo "$((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
