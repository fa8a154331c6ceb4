/* The AVX-512 path: the kernel body vectorised for AVX-512 (F/BW/DQ/VL, see CMakeLists.txt;
 * called only after run-time detection). */
#define TALLY_KTABLE tally_cpu_kernels_avx512
#define TALLY_KNAME "avx512"
#include "cpu/kernels_body.h"
