# Joins bench_cuda's table (first file: our CUDA backend and CUB, its rows without a note) with
# bench_vulkan's (second file) by (op, type, n): one row per Vulkan row, with the CUDA and CUB
# times of the same case and the ratios (> 1: Vulkan faster).
#   awk -F'|' -f bench/vulkan_join.awk bench-cuda.md bench-vulkan.md
  function tr(s) { gsub(/^ +| +$/, "", s); return s }
  FNR == NR { if (NF >= 9 && tr($9) == "" && tr($2) ~ /^(reduce|scan)_/) { k = tr($2) "|" tr($3) "|" tr($4); cu[k] = tr($5); cub[k] = tr($6) } next }
  NF >= 10 && tr($2) ~ /^(reduce|scan)_/ {
    k = tr($2) "|" tr($3) "|" tr($4); g = tr($5); c = tr($6)
    rows[++nr] = sprintf("| %-14s | %-4s | %-4s | %9s | %9s | %9s | %9s | %6s | %6s | %s |", tr($2), tr($3), tr($4), g, c,
      (k in cu) ? cu[k] : "-", (k in cub) ? cub[k] : "-",
      (k in cu) && g > 0 ? sprintf("%.2f", cu[k] / g) : "-", (k in cub) && g > 0 ? sprintf("%.2f", cub[k] / g) : "-", tr($10))
  }
  END {
    print "| op             | type | n    | Vulkan µs | call µs   | CUDA µs   | CUB µs    | CUDA/Vk | CUB/Vk | note |"
    print "|----------------|------|------|-----------|-----------|-----------|-----------|--------|--------|------|"
    for (i = 1; i <= nr; i++) print rows[i]
  }
