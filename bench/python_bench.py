"""The speed table of the Python module (issue 22): tally against NumPy, math.fsum and, on a GPU,
PyTorch and the C library itself, each answer checked before it is timed, every ratio from the
same run.

    PYTHONPATH=build/python python3 bench/python_bench.py [--quick] [--gpu] [--lib build/libtally.so]

Rows (time: the median of several runs; 'ratio' is how many times faster tally is, or for the
per-call overhead tally's time over NumPy's):
  sum exact vs numpy.sum, f32 and f64, 2^26, every core        target >= 1.2
  sum vs math.fsum, f64 2^24                                    target >= 20
  cumsum vs numpy.cumsum, f32 and f64, 2^26                     target >= 5
  per-call overhead, sum of 1,000 f64 (tally / numpy)           target <= 1.5
  GPU (--gpu, torch with CUDA): tally.sum of a 2^28 f32 torch tensor vs tally_reduce through the
  C library (within 10%), vs torch.sum; tally.cumsum vs torch.cumsum; and proof that the tensor
  is read in place (the pointer handed to libtally is the tensor's; no copy).
"""
import argparse
import ctypes
import math
import os
import platform
import statistics
import sys
import time

import numpy as np

import tally


def timed(f, reps, sync=None):
    """Median and best seconds of one call of f over reps runs (after a warm-up)."""
    f()
    if sync:
        sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        if sync:
            sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), min(ts)


def per_call(f, number):
    """Seconds per call of a short call: the best of 5 batches of number calls."""
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


ROWS = []


def row(what, ours, base, basename, target, higher_is_better=True):
    ratio = base / ours if higher_is_better else ours / base
    ok = ratio >= target if higher_is_better else ratio <= target
    ROWS.append((what, ours, base, basename, ratio, ("%s %.2g" % (">=" if higher_is_better else "<=", target)), ok))
    print("  %-44s tally %9.3f ms  %-14s %9.3f ms  ratio %6.2f  %s" % (
        what, ours * 1e3, basename, base * 1e3, ratio, "ok" if ok else "MISSED"), flush=True)


def cpu(args):
    rng = np.random.default_rng(1)
    n = 1 << (22 if args.quick else 26)
    reps = 3 if args.quick else 7
    one = tally.Context(backend="cpu", threads=1)
    for dt in (np.float32, np.float64):
        x = rng.random(n).astype(dt) * 1000 - 500
        s = tally.sum(x)
        # checked before timing: the prefix against math.fsum, the whole against one thread
        # (the bits must not depend on the thread count) and against NumPy (close)
        k = 1 << 20
        assert tally.sum(x[:k]) == math.fsum(x[:k].astype(np.float64).tolist())
        assert tally.sum(x, ctx=one) == s
        assert abs(s - float(np.sum(x, dtype=np.float64))) <= 1e-9 * np.abs(x).sum()
        t, _ = timed(lambda: tally.sum(x), reps)
        b, _ = timed(lambda: np.sum(x), reps)
        row("sum exact vs numpy.sum, %s 2^%d" % (np.dtype(dt).name, n.bit_length() - 1), t, b,
            "numpy.sum", 1.2)
    nf = 1 << (20 if args.quick else 24)
    x = rng.random(nf) * 1000 - 500
    want = math.fsum(x)
    assert tally.sum(x) == want
    t, _ = timed(lambda: tally.sum(x), reps)
    b, _ = timed(lambda: math.fsum(x), 3)
    row("sum vs math.fsum, float64 2^%d" % (nf.bit_length() - 1), t, b, "math.fsum", 20)
    for dt in (np.float32, np.float64):
        x = (rng.random(n) * 2 - 1).astype(dt)
        c = tally.cumsum(x)
        ref = np.cumsum(x.astype(np.float64))
        assert np.allclose(c, ref, rtol=0, atol=1e-3 * max(1.0, float(np.abs(ref).max())))
        assert np.array_equal(tally.cumsum(x, ctx=one), c)
        out = np.empty_like(x)
        t, _ = timed(lambda: tally.cumsum(x, out=out), reps)
        b, _ = timed(lambda: np.cumsum(x, out=out), reps)
        row("cumsum vs numpy.cumsum, %s 2^%d" % (np.dtype(dt).name, n.bit_length() - 1), t, b,
            "numpy.cumsum", 5)
    small = rng.random(1000)
    assert tally.sum(small) == math.fsum(small.tolist())
    number = 2000 if args.quick else 20000
    t = per_call(lambda: tally.sum(small), number)
    b = per_call(lambda: np.sum(small), number)
    row("per-call overhead: sum of 1,000 float64", t, b, "numpy.sum", 1.5, higher_is_better=False)


def c_library(path):
    """tally_reduce of libtally.so through ctypes (a call costs ~1 us of Python on top)."""
    lib = ctypes.CDLL(path)

    class Result(ctypes.Structure):
        _fields_ = [("op", ctypes.c_int), ("type", ctypes.c_int), ("status", ctypes.c_int),
                    ("value", ctypes.c_double), ("index", ctypes.c_uint64)]

    class Options(ctypes.Structure):
        _fields_ = [("backend", ctypes.c_int), ("threads", ctypes.c_int), ("isa", ctypes.c_int),
                    ("device", ctypes.c_int)]

    lib.tally_reduce.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                 ctypes.c_uint64, ctypes.c_void_p, ctypes.POINTER(Result)]
    lib.tally_create.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(Options)]
    ctx = ctypes.c_void_p()
    if lib.tally_create(ctypes.byref(ctx), ctypes.byref(Options(2, 0, 0, 0))) != 0:
        raise RuntimeError("libtally: no CUDA context")
    res = Result()

    def reduce_f32_sum(ptr, n):
        st = lib.tally_reduce(ctx, 0, 8, ptr, n, None, ctypes.byref(res))  # TALLY_SUM, TALLY_F32
        if st != 0:
            raise RuntimeError("tally_reduce: status %d" % st)
        return res.value
    return reduce_f32_sum


def gpu(args):
    try:
        import torch
    except ImportError:
        print("  no torch: GPU rows skipped")
        return
    if not torch.cuda.is_available():
        print("  no CUDA device: GPU rows skipped")
        return
    dev = torch.device("cuda")
    n = 1 << (24 if args.quick else 28)
    reps = 20
    t = torch.rand(n, device=dev, dtype=torch.float32) * 1000 - 500
    sync = torch.cuda.synchronize
    s = tally.sum(t)
    info = tally._last_call()
    assert info["pointer"] == t.data_ptr() and info["device"] == t.device.index and not info["copied"]
    ctx_desc = tally.Context(backend="cuda").description
    print("  device: %s; tally read the tensor in place: pointer 0x%x == tensor.data_ptr(), "
          "copied=%s" % (ctx_desc, info["pointer"], info["copied"]))
    host = t.cpu().numpy()
    assert s == tally.sum(host), "GPU and CPU sums differ"
    tt, best = timed(lambda: tally.sum(t), reps)
    # a host copy of the tensor alone would take bytes / PCIe bandwidth (>= ~20 ms for 1 GiB):
    pcie_floor = n * 4 / 64e9
    print("  tally.sum 2^%d f32: %.3f ms (best %.3f); a PCIe copy would take >= %.1f ms"
          % (n.bit_length() - 1, tt * 1e3, best * 1e3, pcie_floor * 1e3))
    if args.lib and os.path.exists(args.lib):
        try:
            f = c_library(args.lib)
            assert f(t.data_ptr(), n) == s
            tc, _ = timed(lambda: f(t.data_ptr(), n), reps)
            row("GPU sum 2^%d f32: tally.sum vs C tally_reduce" % (n.bit_length() - 1), tt, tc,
                "C library", 1 / 1.10)
        except Exception as e:  # noqa: BLE001 - the other rows still count
            print("  the C library's row failed: %r" % (e,))
    else:
        print("  (no --lib: the C library's time is not measured)")
    ts, _ = timed(lambda: torch.sum(t).item(), reps)
    row("GPU sum 2^%d f32: tally.sum exact vs torch.sum" % (n.bit_length() - 1), tt, ts,
        "torch.sum", 0.9)
    c = tally.cumsum(t)
    assert c.device == t.device and c.dtype == t.dtype
    assert torch.allclose(c, torch.cumsum(t.double(), 0).float(), rtol=0, atol=1e-2 * float(c.abs().max()))
    out = torch.empty_like(t)
    tcs, _ = timed(lambda: tally.cumsum(t, out=out), reps, sync)
    bcs, _ = timed(lambda: torch.cumsum(t, 0, out=out), reps, sync)
    row("GPU cumsum 2^%d f32: tally vs torch.cumsum" % (n.bit_length() - 1), tcs, bcs,
        "torch.cumsum", 1.0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    p.add_argument("--gpu", action="store_true", help="the GPU rows (torch with CUDA)")
    p.add_argument("--no-cpu", action="store_true")
    p.add_argument("--lib", help="libtally.so, for the C library's GPU time")
    p.add_argument("--markdown", help="write the table here")
    args = p.parse_args()
    i = tally.info()
    print("tally %s on %s, %s; %d CPU threads, %s; NumPy %s; Python %s" % (
        i["version"], platform.node(), platform.processor() or platform.machine(),
        i["cpu_threads"], i["cpu_isa"], np.__version__, platform.python_version()))
    if not args.no_cpu:
        cpu(args)
    if args.gpu:
        gpu(args)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| what | tally ms | baseline | baseline ms | ratio | target | met |\n")
            f.write("|---|---:|---|---:|---:|---|---|\n")
            for what, ours, base, name, ratio, target, ok in ROWS:
                f.write("| %s | %.3f | %s | %.3f | %.2f | %s | %s |\n" % (
                    what, ours * 1e3, name, base * 1e3, ratio, target, "yes" if ok else "no"))
    print("\n%-46s %10s %10s %8s %8s" % ("what", "tally ms", "base ms", "ratio", "target"))
    for what, ours, base, name, ratio, target, ok in ROWS:
        print("%-46s %10.3f %10.3f %8.2f %8s%s" % (what, ours * 1e3, base * 1e3, ratio, target,
                                                  "" if ok else "  MISSED"))


if __name__ == "__main__":
    sys.exit(main())
