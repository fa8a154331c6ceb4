#!/usr/bin/env python3
# probe9_ablate.py OUT: writes OUT/VARIANT/cuda/reduce_kernel.cuh, edited copies of the reduce
# kernel header for probe9.sh (each edit removes or simplifies one part of the correctly rounded
# f64 sum; see probe9.sh for what each variant means). An edit that no longer applies stops it.
import sys,os
here=os.path.dirname(os.path.abspath(__file__))
src=open(os.path.join(here,'../../src/cuda/reduce_kernel.cuh')).read()
out=sys.argv[1] if len(sys.argv)>1 else '/tmp/ablation'
def rep(s,a,b):
    assert a in s, a[:60]
    return s.replace(a,b)
NOSPILL=[("if constexpr (EXACT) spilled = __syncthreads_or(tid < TALLY_EXACT_CHUNKS && sacc[tid] != 0);","if constexpr (EXACT) spilled = false;")]
NOINIT=[("        for (int c = tid; c < TALLY_EXACT_CHUNKS; c += kThreads) sacc[c] = 0;\n    }\n    if constexpr (RING) {","    }\n    if constexpr (RING) {"),
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
NOSLOW=[("                slow_batch(vdata, vfirst, vend, sacc);\n","                (void)vdata; (void)vfirst; (void)vend;\n")]
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
LB4=[("    if (Worker<T, M, OMIT>::EXACT) return M != TCU_MASK_SUM ? 2 : sizeof(T) == 4 && !OMIT && !RING ? 4 : 3;","    if (Worker<T, M, OMIT>::EXACT) return M != TCU_MASK_SUM ? 2 : 4;")]
V3={'twocopy':TWOCOPY,'lb4':LB4,'all3':NOSPILL+NOINIT+PLAINMERGE+PLAINADD+NOSLOW+NORESULT+TWOCOPY}
for name,edits in V3.items():
    s=src
    for a,b in edits: s=rep(s,a,b)
    os.makedirs(os.path.join(out,name,'cuda'),exist_ok=True)
    open(os.path.join(out,name,'cuda','reduce_kernel.cuh'),'w').write(s)
