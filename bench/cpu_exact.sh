#!/bin/sh
# The correctly rounded sums on a many-core host; no GPU needed (builds with -DTALLY_CUDA=OFF).
# Prints (1) the per-core kernels in cache, AVX-512 (tally_bench_exact: ns/element, the method
# mix per distribution) and (2) the scaling table (tally_bench_cpu -x: for each thread count,
# f32 and f64 over price-like data, exponents over 2^-40..2^40 and the whole range, beside the
# read loop and a plain SIMD sum of the same bytes; then 4,096-float sums against a plain loop).
# Every answer is checked before timing. About 2-3 minutes on 16 cores at n = 2^28.
#   sh bench/cpu_exact.sh [RESULT_DIR]        (THREADS=1,2,4,8,16 N=268435456 by default)
set -e
B=${BUILD:-build-cpuexact}
R=${1:-.}
cmake -S . -B "$B" -DTALLY_CUDA=OFF -DTALLY_BUILD_TESTS=OFF -DTALLY_BUILD_CLI=OFF \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$B" -j"$(nproc)" --target tally_bench_exact tally_bench_cpu >/dev/null
grep -m1 "model name" /proc/cpuinfo
"$B"/bench/tally_bench_exact -n 16384 -r 5 -i avx512 -k sum
"$B"/bench/tally_bench_exact -n 16384 -r 5 -i avx512 -k sum+min+max -d price
"$B"/bench/tally_bench_exact -n 16384 -r 5 -i avx512 -k sqdev -d price
"$B"/bench/tally_bench_cpu -x "${THREADS:-1,2,4,8,16}" -n "${N:-268435456}" -r 5 -o "$R/cpu-exact.md"
