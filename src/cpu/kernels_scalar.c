/* The scalar reference path: the kernel body compiled without vectorisation (see
 * CMakeLists.txt), always built and always usable. */
#define TALLY_KTABLE tally_cpu_kernels_scalar
#define TALLY_KNAME "scalar"
#define TALLY_KSCALAR 1
#include "cpu/kernels_body.h"

const tally_cpu_kernels *tally_cpu_kernels_for(tally_isa isa)
{
#if defined(TALLY_X86)
    if (isa == TALLY_ISA_AVX512) return &tally_cpu_kernels_avx512;
    if (isa == TALLY_ISA_AVX2) return &tally_cpu_kernels_avx2;
#else
    (void)isa;
#endif
    return &tally_cpu_kernels_scalar;
}
