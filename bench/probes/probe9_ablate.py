#!/usr/bin/env python3
# probe9_ablate.py OUT: writes OUT/VARIANT/cuda/reduce_kernel.cuh, edited copies of the reduce
# kernel header for probe9.sh (each edit removes or simplifies one part of the correctly rounded
# f64 sum; see probe9.sh for what each variant means). An edit that no longer applies stops it.
import sys,os
here=os.path.dirname(os.path.abspath(__file__))
# PROBE_SRC: another copy of the header to edit (an earlier state of the kernel, say)
src=open(os.environ.get('PROBE_SRC') or os.path.join(here,'../../src/cuda/reduce_kernel.cuh')).read()
out=sys.argv[1] if len(sys.argv)>1 else '/tmp/ablation'
def rep(s,a,b):
    assert a in s, a[:60]
    return s.replace(a,b)
NOSPILL=[("if constexpr (EXACT) spilled = __syncthreads_or(tid < TALLY_EXACT_CHUNKS && sacc[tid] != 0);","if constexpr (EXACT) spilled = false;")]
NOINIT=[("        for (int c = tid; c < TALLY_EXACT_CHUNKS + kThreads; c += kThreads) sacc[c] = 0;\n    }\n    if constexpr (RING) {","    }\n    if constexpr (RING) {"),
        ("    if constexpr (EXACT || RING) __syncthreads();","    if constexpr (RING) __syncthreads();")]
PLAINMERGE=[("""        h = two_sum(h, oh, e);
        l = two_sum(l, ol, f);
        l = two_sum(l, e, g);
        bad |= lane < off && (f != 0.0 || g != 0.0); /* lanes >= off hold sums nobody reads */""","""        h = h + oh;
        l = l + ol;
        (void)e; (void)f; (void)g;"""),
    ("                xcombine_quick(s.xh, s.xl, u.s.xh, u.s.xl, sacc);","                s.xh += u.s.xh;\n                s.xl += u.s.xl;")]
PLAINADD=[("""            if (__all_sync(__activemask(), fabs(a1_before) >= 34.0 * hi))
                add_all([](double a, double b, double &e) { return fast_two_sum(a, b, e); });
            else
                add_all([](double a, double b, double &e) { return two_sum(a, b, e); });""","""            add_all([](double a, double b, double &e) { e = 0.0; return a + b; });""")]
V={'nospill':NOSPILL,'noinit':NOSPILL+NOINIT,'plainmerge':PLAINMERGE,'plainadd':PLAINADD,'all':NOSPILL+NOINIT+PLAINMERGE+PLAINADD}
for name,edits in V.items():
    s=src
    for a,b in edits: s=rep(s,a,b)
    os.makedirs(os.path.join(out,name,'cuda'),exist_ok=True)
    open(os.path.join(out,name,'cuda','reduce_kernel.cuh'),'w').write(s)
NOSLOW=[("                slow_batch(vbase, vfirst, vend, sacc);\n","                (void)vbase; (void)vfirst; (void)vend;\n")]
NORESULT=[("""    if (!any) return 0.0;
    uint32_t f = s.xflags | TALLY_EXACT_F_ANY;""","""    if (!any) return 0.0;
    if (any) return s.xh + s.xl;
    uint32_t f = s.xflags | TALLY_EXACT_F_ANY;""")]
V2={'noslow':NOSLOW,'noresult':NORESULT,'all2':NOSPILL+NOINIT+PLAINMERGE+PLAINADD+NOSLOW+NORESULT}
for name,edits in V2.items():
    s=src
    for a,b in edits: s=rep(s,a,b)
    os.makedirs(os.path.join(out,name,'cuda'),exist_ok=True)
    open(os.path.join(out,name,'cuda','reduce_kernel.cuh'),'w').write(s)
TWOCOPY=[("""    if constexpr (EXACT && sizeof(T) >= 4) {
#pragma unroll 1
        for (int round = 0; round < 2; round++)
            if (merge_round(round)) return;
    } else {""","""    if constexpr (false) {
    } else {""")]
LB4=[("    if (Worker<T, M, OMIT>::EXACT) return M != TCU_MASK_SUM ? 2 : sizeof(T) == 4 && !OMIT ? 4 : 3;","    if (Worker<T, M, OMIT>::EXACT) return M != TCU_MASK_SUM ? 2 : 4;")]
NOBOOK=[('''                    const uint32_t key = mag_key_hi(v[u].v[k]);
                    lo = min(lo, key);
                    khi = max(khi, key + 1u);''',''''''),
    ('''            note_least_hi(lo);
            const double bound = fabs(a2_before) + 0x1p-48 * (fabs(a1_before) + 32.0 * hi);
            bool bad = !(bound < pow2((int)emin - 1023)) || !isfinite(ea.a1) || !isfinite(ea.a2);''','''            bool bad = !isfinite(ea.a1) || !isfinite(ea.a2);''')]
V3={'twocopy':TWOCOPY,'lb4':LB4,'all3':NOSPILL+NOINIT+PLAINMERGE+PLAINADD+NOSLOW+NORESULT+TWOCOPY,'nobook':NOBOOK,'all4':NOSPILL+NOINIT+PLAINMERGE+PLAINADD+NOSLOW+NORESULT+NOBOOK}
for name,edits in V3.items():
    s=src
    for a,b in edits: s=rep(s,a,b)
    os.makedirs(os.path.join(out,name,'cuda'),exist_ok=True)
    open(os.path.join(out,name,'cuda','reduce_kernel.cuh'),'w').write(s)

# timeline: %globaltimer stamps per block (thread 0) into tl_stamp, for probe_exact's
# TCU_TIMELINE report: 0 after the PDL wait, 1 after the whole batches, 2 at the ticket, 3 the
# last block's result; the last block also 4 once it knows it is last, 5 with the partials
# read and merged by each thread, 6 with the block's merge done (before the spill check), 7
# before its results; round 0 (every block): 8 after the flush, 9 after the warp merge, 10
# after the barrier before the block merge, 11 after the spill check (12, 13, 14: the same in
# round 1); tl_sm: the block's SM. tl_gap: the least time from the previous launch's result to
# a block's start (after its PDL wait), over the blocks of the launches since it was reset.
TL=[("""template <typename T, unsigned M, bool OMIT, bool RING>
__global__ void""","""#define TCU_TIMELINE 1
__device__ unsigned long long tl_stamp[16][4096];
__device__ unsigned tl_sm[4096];
__device__ unsigned long long tl_end;
__device__ long long tl_gap;
__device__ __forceinline__ void tl_mark(int k)
{
    if (threadIdx.x == 0) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        tl_stamp[k][blockIdx.x] = t;
        if (k == 0) {
            unsigned sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            tl_sm[blockIdx.x] = sm;
            atomicMin(&tl_gap, (long long)(t - *(volatile unsigned long long *)&tl_end));
        }
        if (k == 3) tl_end = t;
    }
}
template <typename T, unsigned M, bool OMIT, bool RING>
__global__ void"""),
    ("""    pdl_wait();
""","""    pdl_wait();
    tl_mark(0);
"""),
    ("""    if (v < ve) { /* the last, partial batch (the last block only) */""","""    tl_mark(1);
    if (v < ve) { /* the last, partial batch (the last block only) */"""),
    ("""                write_results(p, s, xr);
""","""                write_results(p, s, xr);
                tl_mark(3);
"""),
    ("""        if (!am_last) return true;
""","""        if (!am_last) return true;
        tl_mark(4);
"""),
    ("""        return false;
    };""","""        tl_mark(5);
        return false;
    };"""),
    ("""        if constexpr (EXACT) spilled = __syncthreads_or(tid < TALLY_EXACT_CHUNKS && sacc[tid] != 0);
        if constexpr (packable""","""        tl_mark(6);
        if constexpr (EXACT) spilled = __syncthreads_or(tid < TALLY_EXACT_CHUNKS && sacc[tid] != 0);
        tl_mark(round ? 14 : 11);
        if constexpr (packable"""),
    ("""    w.flush(sacc);
""","""    w.flush(sacc);
    tl_mark(8);
"""),
    ("""        warp_merge<32>(s, sacc);
""","""        warp_merge<32>(s, sacc);
        tl_mark(round ? 12 : 9);
"""),
    ("""            __syncthreads();
            if (warp == 0) {
                S t;""","""            __syncthreads();
            tl_mark(round ? 13 : 10);
            if (warp == 0) {
                S t;"""),
    ("""        if (round == 1 || grid == 1) {
            if constexpr (EXACT) {""","""        if (round == 1 || grid == 1) {
            tl_mark(7);
            if constexpr (EXACT) {"""),
    ("""        if (tid == 0) {
            unsigned int t;
            asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(t) : "l"(p.counter) : "memory");""","""        tl_mark(2);
        if (tid == 0) {
            unsigned int t;
            asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(t) : "l"(p.counter) : "memory");""")]
for name,edits in {'timeline':TL,'tlnospill':TL+NOSPILL,'tlplainmerge':TL+PLAINMERGE}.items():
    s2=src
    for a,b in edits: s2=rep(s2,a,b)
    os.makedirs(os.path.join(out,name,'cuda'),exist_ok=True)
    open(os.path.join(out,name,'cuda','reduce_kernel.cuh'),'w').write(s2)
