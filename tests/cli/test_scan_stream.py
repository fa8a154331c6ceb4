#!/usr/bin/python3
"""tally scan of a binary file into OUT, streamed in chunks (tools/cli/scan_stream.c), against
the one-call scan (the same command writing to standard output: the whole column, one library
call) bit for bit, and against numpy for integers; and its memory: a column much larger than
the chunk ring is scanned in bounded memory, also under an address-space limit smaller than
the file, which the one-call path cannot meet.

usage: test_scan_stream.py TALLY GROUP TALLY_TESTING
groups: bits (every type, op, inclusive/exclusive/--init, sizes around chunk and block
        boundaries, layouts), memory (peak RSS, RLIMIT_AS)
TALLY_TEST_QUICK=1 (CI): in bits, the modes (inclusive, exclusive, exclusive --init) take turns
over each type and op's sizes instead of all running at every size: every mode still meets
every type, op and boundary class, with a third of the process pairs.
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

try:
    import numpy as np
except ImportError:
    print("numpy is missing (Debian: python3-numpy): skipped")
    sys.exit(77)

TALLY, GROUP, TESTING = sys.argv[1], sys.argv[2], sys.argv[3]
FAILURES = []
TMP = tempfile.mkdtemp(prefix="tally-scan-stream-")
BLOCK = 4096             # the CPU scan's block (include/tally.h); chunks hold whole blocks
CHUNK = 2 * BLOCK        # the chunk the bits group streams with (tally-testing --scan-chunk)
INTS = ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8"]
FLOATS = ["f4", "f8"]
QUICK = os.environ.get("TALLY_TEST_QUICK", "0") not in ("", "0")


CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def path(name):
    return os.path.join(TMP, name)


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def streamed(args, out, chunk=CHUNK):
    """The streamed path: a regular OUT (tally-testing: chunk elements per chunk)."""
    if os.path.exists(out):
        os.unlink(out)
    lim = ["--scan-chunk", str(chunk)] if chunk else []
    rc, _, err = run([TESTING] + lim + ["--", "scan"] + args + ["-o", out])
    with open(out, "rb") if rc == 0 else open(os.devnull, "rb") as f:
        return rc, f.read(), err


def one_call(args):
    """The one-call path: OUT is standard output (held whole, then written)."""
    return run([TALLY, "scan"] + args + ["-o", "-"])


def same_bits(got, ref, t, n):
    """Bit for bit, but any NaN equals any NaN: a float scan's NaN has no promised sign or
    payload (include/tally.h), and a chunk's carry and the one call's block carry may differ
    there when two NaNs meet."""
    if got == ref:
        return True
    if t not in FLOATS or len(got) != len(ref) or n == 0:
        return False
    es = np.dtype(t).itemsize
    if got[:-n * es] != ref[:-n * es]:
        return False
    a = np.frombuffer(got[-n * es:], dtype=t)
    b = np.frombuffer(ref[-n * es:], dtype=t)
    u = "u%d" % es
    return bool(np.all((a.view(u) == b.view(u)) | (np.isnan(a) & np.isnan(b))))


def values(t, n, rng, op):
    dt = np.dtype(t)
    if dt.kind == "f":
        if op == "prod":          # near 1, so that products stay finite and order matters
            a = 1 + rng.standard_normal(n) * 1e-3
        else:                     # many magnitudes: every rounding shows
            a = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 9, n)
        a = a.astype(dt)
        if n > 10:
            a[rng.integers(0, n, 3)] = [np.inf, -0.0, np.nan] if op != "sum" else [-0.0] * 3
        return a
    info = np.iinfo(dt)
    if op == "prod":
        return rng.integers(-3 if info.min < 0 else 0, 4, n).astype(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


def numpy_scan(a, op, exclusive, init):
    """Integers: the exact wrapped reference, independent of the library."""
    dt = a.dtype
    f = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum,
         "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    with np.errstate(over="ignore"):
        inc = f.accumulate(a, dtype=dt)
        if not exclusive:
            return inc
        info = np.iinfo(dt)
        ident = {"sum": 0, "prod": 1, "min": info.max, "max": info.min, "and": -1 if info.min < 0 else info.max,
                 "or": 0, "xor": 0}[op]
        start = np.array(init if init is not None else ident).astype(dt)
        out = np.empty_like(a)
        if len(a):
            out[0] = start
            out[1:] = f(start, f.accumulate(a[:-1], dtype=dt), dtype=dt)
        return out


def group_bits():
    rng = np.random.default_rng(23)
    big = 3 * CHUNK + 1
    for t in INTS + FLOATS:
        is_float = t in FLOATS
        ops = ["sum", "prod", "min", "max"] + ([] if is_float else ["and", "or", "xor"])
        for op in ops:
            # the order-sensitive scans get every size around a chunk and a block
            sizes = [1, BLOCK - 1, BLOCK + 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + BLOCK - 1, big] \
                if op in ("sum", "prod") else [CHUNK + 1, big]
            for si, n in enumerate(sizes):
                a = values(t, n, rng, op)
                f = path(f"in_{t}.npy")
                np.save(f, a)
                init = (-2.5 if is_float else 3) if n % 2 else None
                modes = [[], ["--exclusive"]] + ([["--exclusive", "--init", str(init)]] if init is not None else [])
                if QUICK:  # one mode per size, in turn (the turn moves with the op as well)
                    modes = [modes[(si + ops.index(op)) % len(modes)]]
                for m in modes:
                    args = [op] + m + [f]
                    rc1, ref, err1 = one_call(args)
                    rc2, got, err2 = streamed(args, path("out.npy"))
                    what = f"{t} {op} {' '.join(m) or 'inclusive'} n={n}"
                    check(rc1 == 0 and rc2 == 0, f"{what}: exit {rc1} {rc2} {err1!r} {err2!r}")
                    check(same_bits(got, ref, t, n), f"{what}: streamed != one call (bit for bit)")
                    if rc2 == 0 and not is_float:
                        exp = numpy_scan(a, op, "--exclusive" in m, init if "--init" in m else None)
                        check(np.array_equal(np.load(path("out.npy")), exp), f"{what}: != numpy")
    # the default chunk (4 MiB) on sizes around it, through the shipped command itself
    for t in ["f4", "f8", "i1"]:
        c = (4 << 20) // np.dtype(t).itemsize
        for n in [c - 1, c, c + 1, 2 * c + BLOCK + 3]:
            a = values(t, n, rng, "sum")
            np.save(path("d.npy"), a)
            for m in [[], ["--exclusive", "--init", "1"]]:
                rc1, ref, _ = one_call(["sum"] + m + [path("d.npy")])
                rc2, got, err = run([TALLY, "scan", "sum"] + m + [path("d.npy"), "-o", path("d_out.npy")])
                check(rc1 == 0 and rc2 == 0 and open(path("d_out.npy"), "rb").read() == ref,
                      f"default chunk {t} n={n} {m}: streamed != one call {err!r}")
    # layouts: big-endian, bool, a Fortran 2-d column, C-order n-d, raw --dtype, --text
    n = 3 * CHUNK + 5
    a = values("f8", n, rng, "sum")
    cases = [("be.npy", a.astype(">f8"), []), ("bool.npy", rng.integers(0, 2, n).astype(bool), []),
             ("fort.npy", np.asfortranarray(np.stack([a, -a, 2 * a], axis=1)), ["-f", "2"]),
             ("nd.npy", a[: n - n % 5].reshape(5, -1, 1), [])]
    for name, arr, extra in cases:
        np.save(path(name), arr)
        rc1, ref, e1 = one_call(["sum"] + extra + [path(name)])
        rc2, got, e2 = streamed(["sum"] + extra + [path(name)], path("out.npy"))
        check(rc1 == 0 and rc2 == 0 and got == ref, f"layout {name}: streamed != one call {e1!r} {e2!r}")
    a.astype("<f4").tofile(path("raw.f32"))
    rc1, ref, _ = one_call(["sum", "--dtype", "f32", path("raw.f32")])
    rc2, got, _ = streamed(["sum", "--dtype", "f32", path("raw.f32")], path("out.npy"))
    check(rc1 == 0 and rc2 == 0 and got == ref, "raw --dtype f32: streamed != one call")
    np.save(path("t.npy"), a)
    rc1, ref, _ = run([TALLY, "scan", "sum", "--exclusive", "--text", path("t.npy")])
    rc2, got, _ = streamed(["sum", "--exclusive", "--text", path("t.npy")], path("out.txt"))
    check(rc1 == 0 and rc2 == 0 and got == ref and got.count(b"\n") == n, "--text: streamed != one call")
    # errors before OUT is touched: an op the type has not, a bad --init
    keep = path("keep.npy")
    for args, code in ((["xor", path("t.npy")], 1), (["sum", "--exclusive", "--init", "x", path("in_i4.npy")], 2)):
        with open(keep, "wb") as fh:
            fh.write(b"old")
        rc, _, err = run([TALLY, "scan"] + args + ["-o", keep])
        check(rc == code and open(keep, "rb").read() == b"old", f"{args}: exit {rc}, OUT kept: {err!r}")
    # the test itself: a chunk that cuts the float scan's blocks must change the bits
    a = values("f4", 3 * CHUNK + 1, rng, "sum")
    np.save(path("cut.npy"), a)
    rc1, ref, _ = one_call(["sum", path("cut.npy")])
    rc2, got, _ = streamed(["sum", path("cut.npy")], path("out.npy"), chunk=BLOCK + 1000)
    check(rc1 == 0 and rc2 == 0 and got != ref, "a chunk of 5096 elements gave the same bits: the test sees nothing")


def peak_rss(cmd, limit_as=None):
    """Runs cmd; returns (rc, stderr, peak RSS in KiB: VmHWM read from /proc every 3 ms)."""
    pre = (lambda: resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))) if limit_as else None
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=pre)
    peak, done = [0], threading.Event()

    def watch():
        while not done.is_set():
            try:
                with open(f"/proc/{p.pid}/status") as st:
                    for line in st:
                        if line.startswith("VmHWM:"):
                            peak[0] = max(peak[0], int(line.split()[1]))
            except OSError:
                pass
            time.sleep(0.003)
    w = threading.Thread(target=watch)
    w.start()
    _, err = p.communicate()
    done.set()
    w.join()
    return p.returncode, err.decode("utf-8", "replace"), peak[0]


def group_memory():
    with open(TALLY, "rb") as fh:
        body = fh.read()
    if b"__asan_init" in body or b"__tsan_init" in body:
        print("a sanitizer keeps freed memory: peak RSS says nothing: skipped")
        sys.exit(77)
    # a tmpfs when it has room (the sparse input takes none), else the test's directory
    d = TMP
    if os.path.isdir("/dev/shm") and shutil.disk_usage("/dev/shm").free > (2 << 30):
        d = tempfile.mkdtemp(prefix="tally-scan-stream-", dir="/dev/shm")
    try:
        n = 48 << 20                          # 384 MiB of int64: zeros but for a few runs
        f = os.path.join(d, "big.npy")
        h = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }" % n
        h += " " * (63 - (10 + len(h)) % 64) + "\n"
        with open(f, "wb") as fh:
            fh.write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode())
            fh.truncate(10 + len(h) + 8 * n)
        rng = np.random.default_rng(5)
        spots = {0: 0, n // 3: 0, (4 << 20) // 8 - 2: 0, n - 1: 0}     # (a chunk is 4 MiB)
        mm = np.load(f, mmap_mode="r+")
        check(mm.shape == (n,), f"the sparse .npy: {mm.shape}")
        for s in spots:
            mm[s: s + 4] = rng.integers(-10**12, 10**12, len(mm[s: s + 4]))
        mm.flush()
        del mm
        out = os.path.join(d, "big_out.npy")
        rc, err, kib = peak_rss([TALLY, "-j", "2", "scan", "sum", f, "-o", out])
        check(rc == 0, f"384 MiB scan: exit {rc} {err!r}")
        check(kib < 64 << 10, f"384 MiB scan: peak RSS {kib} KiB (bounded by the chunk ring: < 64 MiB)")
        src, got = np.load(f, mmap_mode="r"), np.load(out, mmap_mode="r")
        ok, carry = got.shape == (n,), 0
        for lo in range(0, n, 1 << 22) if ok else []:
            exp = np.cumsum(src[lo: lo + (1 << 22)]) + carry
            ok = ok and np.array_equal(got[lo: lo + (1 << 22)], exp)
            carry = exp[-1]
        check(ok, "384 MiB scan: != numpy.cumsum")
        del src, got
        os.unlink(out)
        # an address space smaller than the file: the file cannot even be mapped, the column
        # cannot be held; the streamed scan reads it in chunks all the same
        limit = 256 << 20
        rc, err, kib = peak_rss([TALLY, "-j", "2", "scan", "sum", f, "-o", out], limit_as=limit)
        check(rc == 0 and os.path.getsize(out) == os.path.getsize(f),
              f"RLIMIT_AS 256 MiB < 384 MiB file: exit {rc} {err!r}")
        if rc == 0:
            got = np.load(out, mmap_mode="r")
            check(int(got[-1]) == int(np.load(f, mmap_mode="r").sum()), "RLIMIT_AS: the last prefix")
            del got
            os.unlink(out)
        rc, err, _ = peak_rss([TALLY, "-j", "2", "scan", "sum", f, "-o", "-"], limit_as=limit)
        check(rc != 0 and "memory" in err, f"the one-call path under the same limit should fail: {rc} {err!r}")
    finally:
        if d != TMP:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    try:
        {"bits": group_bits, "memory": group_memory}[GROUP]()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print(f"test_scan_stream {GROUP}: {CHECKS[0]} checks, "
          f"{'FAILED: ' + str(len(FAILURES)) if FAILURES else 'passed'}")
    sys.exit(1 if FAILURES else 0)
