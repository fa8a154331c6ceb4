/* The machine the library runs on: its cores, and its SIMD paths by run-time detection (cpuid
 * says what the CPU has, xgetbv what the OS saves on a context switch; AVX state needs both),
 * detected once and cached. The core resolves every context's options with these; the CPU
 * backend picks its kernels by the resolved ISA. */
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>
#include "core/host.h"

#if defined(TALLY_X86)
#include <cpuid.h>

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static tally_isa detect(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return TALLY_ISA_SCALAR;
    int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
    if (!osxsave || !avx || !fma) return TALLY_ISA_SCALAR;
    uint64_t xcr0 = xgetbv0();
    if ((xcr0 & 0x6) != 0x6) return TALLY_ISA_SCALAR; /* SSE + AVX state */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return TALLY_ISA_SCALAR;
    int avx2 = (b >> 5) & 1, bmi2 = (b >> 8) & 1;
    if (!avx2 || !bmi2) return TALLY_ISA_SCALAR;
    int f = (b >> 16) & 1, dq = (b >> 17) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1;
    if (f && dq && bw && vl && (xcr0 & 0xe0) == 0xe0) return TALLY_ISA_AVX512; /* opmask, ZMM */
    return TALLY_ISA_AVX2;
}
#else
static tally_isa detect(void) { return TALLY_ISA_SCALAR; }
#endif

tally_isa tally_host_isa(void)
{
    static int cached; /* 0: unknown; written with the same value by any racing caller */
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (!v) {
        v = (int)detect();
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return (tally_isa)v;
}

int tally_host_isa_supported(tally_isa isa)
{
    if (isa == TALLY_ISA_AUTO || isa == TALLY_ISA_SCALAR) return 1;
    if (isa != TALLY_ISA_AVX2 && isa != TALLY_ISA_AVX512) return 0;
    return (int)isa <= (int)tally_host_isa();
}

int tally_host_core_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
