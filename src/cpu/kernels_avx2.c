/* The AVX2 path: the kernel body vectorised for AVX2 (compiled with -mavx2, see CMakeLists.txt;
 * called only after run-time detection). */
#define TALLY_KTABLE tally_cpu_kernels_avx2
#define TALLY_KNAME "avx2"
#include "cpu/kernels_body.h"
