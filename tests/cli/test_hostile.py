#!/usr/bin/python3
"""The tally command under hostile input (issue 19): each numbered defect (#1 .. #17) has its
check, and each class of input has a systematic test: every kind of file as input and as OUT,
memory bounds (peak RSS) of pipes with many fields and of endless inputs, every formatting path
against every kind of value and name, the option grammar's conflicting pairs.

usage: test_hostile.py TALLY GROUP [TALLY_TESTING|none]
groups: values files memory format grammar lab
TALLY_TESTING (tally-testing) lowers the command's limits; checks that need it skip without it.
"""
import json
import math
import os
import random
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from fractions import Fraction

try:
    import numpy as np
except ImportError:
    print("numpy is missing (Debian: python3-numpy): skipped")
    sys.exit(77)

TALLY = sys.argv[1]
GROUP = sys.argv[2]
TESTING = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != "none" else None
FAILURES = []
TMP = tempfile.mkdtemp(prefix="tally-hostile-")
ROOT = os.geteuid() == 0
with open(TALLY, "rb") as _fh:      # sanitizers keep freed memory: peak RSS says nothing then
    SANITIZED = b"__asan_init" in _fh.read() or b"__tsan_init" in open(TALLY, "rb").read()


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(args, stdin=None, limits=None, timeout=60):
    """Runs tally (or tally-testing with limits); returns (rc, stdout, stderr, peak RSS in KiB)."""
    cmd = [TESTING] + limits + ["--"] + args if limits is not None else [TALLY] + args
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = b"", b""
    try:
        out, err = p.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return -999, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), 0
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), 0


def run_rss(cmd, stdin_cmd=None, seconds=None, kill_kib=1 << 20):
    """Runs cmd (stdin from the shell command stdin_cmd); returns (rc, stdout, stderr, peak RSS
    in KiB). The peak is the process's VmHWM, read from /proc every few milliseconds (getrusage
    would count this Python's memory too: the child's maxrss starts from its parent's). With
    seconds, stops it after that long (an endless input); past kill_kib it is killed, so that a
    command without bounds cannot take the machine's memory."""
    feeder = subprocess.Popen(stdin_cmd, stdout=subprocess.PIPE, shell=True) if stdin_cmd else None
    p = subprocess.Popen(cmd, stdin=feeder.stdout if feeder else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if feeder:
        feeder.stdout.close()
    peak = [0]
    done = threading.Event()

    def watch():
        while not done.is_set():
            try:
                with open(f"/proc/{p.pid}/status") as st:
                    for line in st:
                        if line.startswith("VmHWM:"):
                            peak[0] = max(peak[0], int(line.split()[1]))
                            if peak[0] > kill_kib:
                                p.kill()
            except OSError:
                pass
            time.sleep(0.003)
    w = threading.Thread(target=watch)
    w.start()
    timer = None
    if seconds:
        timer = threading.Timer(seconds, lambda: p.send_signal(signal.SIGTERM))
        timer.start()
    out, err = p.communicate()
    done.set()
    w.join()
    if timer:
        timer.cancel()
    if feeder:
        feeder.kill()
        feeder.wait()
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), peak[0]


def path(name):
    return os.path.join(TMP, name)


def write(name, text, mode="w"):
    with open(path(name), mode) as f:
        f.write(text)
    return path(name)


def jrun(args, stdin=None, what=""):
    rc, out, err, _ = run(args + ["--json"], stdin)
    try:   # "-0" is a float here (Python would read an int and lose the sign)
        return rc, json.loads(out, parse_int=lambda t: -0.0 if t == "-0" else int(t)) if out else None, err
    except ValueError:
        check(False, f"{what} {args}: not JSON: {out!r}")
        return rc, None, err


def same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


def usage_error(rc, err):
    return rc == 2 and err.startswith("tally: ") and "usage: tally" in err


# ---- wrong answers (#1-#7) ------------------------------------------------------------------------
def group_values():
    # 1: an exclusive min/max scan of a decimal column starts at float64's identity
    for op, first in (("max", "-inf"), ("min", "inf")):
        rc, out, err, _ = run(["scan", op, "--exclusive", "--text"], stdin=b"1.5\n2.25\n")
        check(out.split() == [first, "1.5"], f"#1 decimal exclusive {op} scan: {out!r} {err!r}")
        rc, out, err, _ = run(["scan", op, "--exclusive", "--text"], stdin=b"1.5\n2.5e0\n")
        check(out.split() == [first, "1.5"], f"#1 float exclusive {op} scan: {out!r}")
        rc, out, err, _ = run(["scan", op, "--exclusive", "--init", "7.25", "--text"], stdin=b"1.5\n2.25\n")
        check(out.split()[0] == "7.25", f"#1 with --init: {out!r}")
    # 2: a decimal mean is the exact sum / count, rounded once
    for vals, ref in ((["0.1", "0.2", "0.3"], "0.2"), (["1.1", "2.2", "3.3"], "2.2")):
        rc, out, err, _ = run(["mean"], stdin=("\n".join(vals) + "\n").encode())
        check(out == ref + "\n", f"#2 mean of {vals}: {out!r}")
    rng = random.Random(2)
    for trial in range(20):
        places = rng.randint(0, 6)
        vals = [f"{rng.randint(-10**8, 10**8) / 10**places:.{places}f}" for _ in range(rng.randint(1, 300))]
        fr = [Fraction(v) for v in vals]
        n = len(fr)
        mean = sum(fr) / n
        var = sum((x - mean) ** 2 for x in fr) / n
        r = jrun(["sum,mean,var,std,svar"], ("\n".join(vals) + "\n").encode())[1]
        if not r:
            continue
        r = r[0]
        check(same(r["sum"], float(sum(fr))) and same(r["mean"], float(mean)), f"#2 exact sum/mean {trial}: {r}")
        check(same(r["var"], float(var)), f"#2/#4 exact decimal var {trial}: {r['var']} vs {float(var)}")
        check(same(r["std"], math.sqrt(float(var))), f"#4 std {trial}")
        if n > 1:
            check(same(r["svar"], float(sum((x - mean) ** 2 for x in fr) / (n - 1))), f"#4 svar {trial}")
    # 3: asking for prod changes no other result; prod of decimals = prod of their doubles
    cols = {"dec": ["0.1", "0.2", "0.35", "-1.5"], "dec2": ["0.1", "0.2"], "int": ["3", "-4", "5"],
            "flt": ["0.1", "2e-1", "3"]}
    for name, vals in cols.items():
        body = ("\n".join(vals) + "\n").encode()
        alone = {op: jrun([op], body)[1][0][op] for op in ("sum", "mean", "var", "min", "max", "count")}
        together = jrun(["sum,prod,mean,var,min,max,count"], body)[1][0]
        for op, v in alone.items():
            check(same(together[op], v), f"#3 {name}: {op} with prod {together[op]} alone {v}")
        np.save(path("prod.npy"), np.array([float(v) for v in vals]) if name != "int"
                else np.array([int(v) for v in vals], dtype="<i8"))
        ref = jrun(["prod", path("prod.npy")])[1][0]["prod"]
        check(same(together["prod"], ref), f"#3 {name}: prod {together['prod']} vs .npy {ref}")
    # 4: text variance does not overflow where the .npy's does not
    for vals in (["1e154", "2e154"], ["1e200", "1e200"], ["-1e300", "1e300", "0.5"], ["1.5e308", "1.7e308"]):
        np.save(path("v.npy"), np.array([float(v) for v in vals]))
        ref = jrun(["var,svar,std", path("v.npy")])[1][0]
        got = jrun(["var,svar,std"], ("\n".join(vals) + "\n").encode())[1][0]
        for op in ("var", "svar", "std"):
            ok = same(got[op], ref[op]) or (isinstance(got[op], float) and isinstance(ref[op], float)
                                             and abs(got[op] - ref[op]) <= 1e-15 * abs(ref[op]))
            check(ok, f"#4 {op} of {vals}: text {got[op]} .npy {ref[op]}")
    # 5: a Fortran-order array of 3 and 4 dimensions is flattened in C order, as NumPy does
    rng2 = np.random.default_rng(5)
    for shape in ((2, 3, 4), (3, 1, 5, 2), (2, 2, 2)):
        a = rng2.permutation(int(np.prod(shape))).reshape(shape).astype("<i4")
        for order, arr in (("C", a), ("F", np.asfortranarray(a))):
            np.save(path("nd.npy"), arr)
            r = jrun(["argmax,argmin,sum", path("nd.npy")])[1][0]
            check(r["argmax"] == int(np.argmax(arr)) and r["argmin"] == int(np.argmin(arr)),
                  f"#5 {shape} {order}: {r} vs {np.argmax(arr)}")
            rc, out, err, _ = run(["scan", "sum", "--text", path("nd.npy")])
            check(out.split() == [str(v) for v in np.cumsum(arr.ravel())], f"#5 scan {shape} {order}")
    # 6: --dtype i8 is ambiguous (tally's int8, numpy's int64): refused; the spelled-out names work
    raw = write("i8.bin", b"\x01\x00\x00\x00\x00\x00\x00\x80", "wb")
    for dt in ("i8", "u8"):
        rc, out, err, _ = run(["sum", "--dtype", dt, raw])
        check(usage_error(rc, err) and "ambiguous" in err, f"#6 --dtype {dt}: {rc} {err!r}")
    for dt, ref in (("int8", 1 - 128), ("i1", 1 - 128), ("<i8", 1 - 2**63), ("int64", 1 - 2**63),
                    ("uint8", 129), ("<u8", 2**63 + 1)):
        rc, out, err, _ = run(["sum", "--dtype", dt, raw])
        check(rc == 0 and out == f"{ref}\n", f"#6 --dtype {dt}: {out!r} {err!r}")
    rc, out, err, _ = run(["--help"])
    check("int8" in out and "<i8 is int64" in out, "#6 --help spells int8 and <i8 out")
    # 7: bool bytes other than 0 and 1 are true, counted once
    f = path("b.npy")
    np.save(f, np.frombuffer(bytes([1, 2, 255, 0, 7]), dtype=np.bool_))
    r = jrun(["sum,max,min,count", f])[1]
    check(r == [{"field": "1", "sum": 4, "max": 1, "min": 0, "count": 5}], f"#7 bool: {r}")
    rc, out, err, _ = run(["scan", "sum", "--text", f])
    check(out.split() == ["1", "2", "3", "3", "4"], f"#7 bool scan: {out!r}")


# ---- files (#8, #9, #10 and the class: every kind of file as input and as OUT) ------------------
def make_fifo_writer(name, data):
    p = path(name)
    os.mkfifo(p)

    def feed():
        with open(p, "wb") as f:
            f.write(data)
    t = threading.Thread(target=feed)
    t.start()
    return p, t


def group_files():
    # input: regular, empty, /proc (size 0), FIFO, char devices, symlink, directory
    f = write("in.txt", "1\n2\n3.5\n")
    rc, out, err, _ = run(["sum", f])
    check(out == "6.5\n", f"regular input: {out!r}")
    rc, out, err, _ = run(["count,sum", write("empty.txt", "")])
    check(rc == 0 and out.split()[-2:] == ["0", "0"], f"empty input: {out!r}")
    with open("/proc/sys/kernel/pid_max") as fh:
        pid_max = fh.read().strip()
    rc, out, err, _ = run(["sum", "/proc/sys/kernel/pid_max"])
    check(rc == 0 and out == pid_max + "\n", f"#9 /proc/sys/kernel/pid_max: {rc} {out!r} {err!r}")
    rc, out, err, _ = run(["sum", "/proc/version"])
    check(rc == 1 and "/proc/version:1:1:" in err and "is not a number" in err, f"#9 /proc/version: {rc} {err!r}")
    p, t = make_fifo_writer("fifo_in", b"4\n5\n")
    rc, out, err, _ = run(["sum", p])
    t.join()
    check(out == "9\n", f"FIFO input: {out!r} {err!r}")
    rc, out, err, _ = run(["count", "/dev/null"])
    check(rc == 0 and out == "0\n", f"/dev/null input: {out!r}")
    rc, out, err, _ = run_rss([TALLY, "sum", "/dev/zero"], seconds=20)
    check(rc == 1 and "/dev/zero:1:1: '\\x00" in err and "is not a number" in err, f"#13 /dev/zero: {rc} {err!r}")
    os.symlink(f, path("link.txt"))
    rc, out, err, _ = run(["sum", path("link.txt")])
    check(out == "6.5\n", f"symlink input: {out!r}")
    rc, out, err, _ = run(["sum", TMP])
    check(rc == 1 and "directory" in err, f"directory input: {err!r}")
    np.save(path("in.npy"), np.arange(10, dtype="<i4"))
    p, t = make_fifo_writer("fifo_npy", open(path("in.npy"), "rb").read())
    rc, out, err, _ = run(["sum", p])
    t.join()
    check(out == "45\n", f".npy through a FIFO: {out!r} {err!r}")
    # #10: a file that shrinks or grows while it is read: a message, exit 1, no output
    if TESTING:
        big = path("shrink.txt")
        for kind, body in (("text", "".join(f"{i}.25\n" for i in range(300000))), ("npy", None)):
            for change in ("truncate", "grow"):
                if body is None:
                    np.save(big + ".npy", np.arange(2_000_000, dtype="<f8"))
                    name = big + ".npy"
                else:
                    name = write("shrink.txt", body)
                for op in (["sum"], ["scan", "sum", "-o", path("scan_out.npy")]):
                    if os.path.exists(path("scan_out.npy")):
                        os.unlink(path("scan_out.npy"))
                    rc, out, err, _ = run(op + [name], limits=["--change-input", change])
                    check(rc == 1 and out == "" and "changed while being read" in err,
                          f"#10 {kind} {change} {op[0]}: {rc} {out!r} {err!r}")
                    check(not os.path.exists(path("scan_out.npy")), f"#10 {kind} {change}: no OUT left")
                    if body is None:
                        np.save(big + ".npy", np.arange(2_000_000, dtype="<f8"))
                    else:
                        write("shrink.txt", body)
    # OUT: a character device is written through, not replaced (#8)
    src = write("s.txt", "1\n2\n")
    if ROOT:
        dev = path("null_dev")
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        rc, out, err, _ = run(["scan", "sum", src, "-o", dev])
        check(rc == 0 and stat.S_ISCHR(os.stat(dev).st_mode), f"#8 device OUT stays a device: {rc} {err!r}")
        check([n for n in os.listdir(TMP) if ".tmp." in n] == [], "#8 no temporary files beside a device")
    # OUT: a FIFO is written through
    fifo = path("out_fifo")
    os.mkfifo(fifo)
    got = []

    def read_fifo():             # gives up after 10 s: a tally that replaced the FIFO never writes
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        data, t0 = b"", time.time()
        while time.time() - t0 < 10:
            try:
                b = os.read(fd, 65536)
            except BlockingIOError:
                b = None
            if b:
                data += b
            elif b == b"" and data:
                break
            else:
                time.sleep(0.01)
        os.close(fd)
        got.append(data)
    t = threading.Thread(target=read_fifo)
    t.start()
    time.sleep(0.05)
    rc, out, err, _ = run(["scan", "sum", "--text", src, "-o", fifo], timeout=20)
    t.join()
    check(rc == 0 and got == [b"1\n3\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode), f"#8 FIFO OUT: {got} {err!r}")
    # OUT: a symlink's target is replaced, the link stays; a dangling link creates its target
    target = write("target.txt", "old\n")
    os.symlink("target.txt", path("out_link"))
    rc, out, err, _ = run(["scan", "sum", "--text", src, "-o", path("out_link")])
    check(rc == 0 and os.path.islink(path("out_link")) and open(target).read() == "1\n3\n",
          f"#8 symlink OUT: {rc} {err!r} {open(target).read()!r}")
    os.symlink("sub/new.txt", path("dangling"))
    os.mkdir(path("sub"))
    rc, out, err, _ = run(["scan", "sum", "--text", src, "-o", path("dangling")])
    check(rc == 0 and os.path.islink(path("dangling")) and open(path("sub/new.txt")).read() == "1\n3\n",
          f"dangling symlink OUT: {rc} {err!r}")
    # OUT: the mode of an existing file is kept; a new file gets 0666 & ~umask
    keep = write("mode600.txt", "x\n")
    os.chmod(keep, 0o600)
    rc, out, err, _ = run(["scan", "sum", "--text", src, "-o", keep])
    check(rc == 0 and stat.S_IMODE(os.stat(keep).st_mode) == 0o600, f"#8 mode kept: {oct(os.stat(keep).st_mode)}")
    os.chmod(keep, 0o640)
    rc, out, err, _ = run(["scan", "sum", "--text", src, "-o", keep])
    check(stat.S_IMODE(os.stat(keep).st_mode) == 0o640, "#8 mode 640 kept")
    mask = os.umask(0o022)
    os.umask(mask)
    rc, out, err, _ = run(["scan", "sum", "--text", src, "-o", path("new.txt")])
    check(stat.S_IMODE(os.stat(path("new.txt")).st_mode) == 0o666 & ~mask, "new OUT mode")
    # OUT: a directory, a /proc file, a missing directory: errors, nothing changed
    rc, out, err, _ = run(["scan", "sum", "--text", src, "-o", path("sub")])
    check(rc == 1 and "directory" in err and os.path.isdir(path("sub")), f"directory OUT: {rc} {err!r}")
    before = open("/proc/sys/kernel/pid_max").read()
    rc, out, err, _ = run(["scan", "sum", "--text", src, "-o", "/proc/sys/kernel/pid_max"])
    check(rc == 1 and open("/proc/sys/kernel/pid_max").read() == before, f"/proc OUT refused: {rc} {err!r}")
    rc, out, err, _ = run(["scan", "sum", "--text", src, "-o", path("no/such/x.txt")])
    check(rc == 1 and "no/such" in err, f"missing dir OUT: {err!r}")
    # OUT is the input: the old bytes are read, the new ones replace them
    same_file = write("same.txt", "1\n2\n3\n")
    rc, out, err, _ = run(["scan", "sum", "--text", same_file, "-o", same_file])
    check(rc == 0 and open(same_file).read() == "1\n3\n6\n", f"OUT = input: {open(same_file).read()!r}")
    # OUT on a full disk: nothing left behind, an existing OUT untouched
    if TESTING:
        keep2 = write("keep2.txt", "keep\n")
        rc, out, err, _ = run(["scan", "sum", "--text", path("in.npy"), "-o", keep2],
                              limits=["--write-limit", "3"])
        check(rc == 1 and "No space" in err and open(keep2).read() == "keep\n", f"full disk: {rc} {err!r}")
    check([n for n in os.listdir(TMP) if ".tmp." in n] == [], "no temporary files left")


# ---- memory and time (#11, #12, #13) -------------------------------------------------------------
def group_memory():
    # 11: a long quoted field through a pipe is read in linear time (36 MB took 6 s before)
    big = b'1,"' + b"ab\n" * 12_000_000 + b'"\n2,x\n'
    f = write("longquote.csv", big, "wb")
    t0 = time.time()
    rc, out, err, _ = run(["-f", "1", "sum", f])
    t_file = time.time() - t0
    t0 = time.time()
    rc2, out2, err2, _ = run(["-f", "1", "sum", "-t", ","], stdin=big, timeout=120)
    t_pipe = time.time() - t0
    check(out == "3\n" and out2 == "3\n", f"#11 quoted field: {out!r} {out2!r} {err2!r}")
    check(t_pipe < 3 * t_file + 2.0, f"#11 36 MB quoted field: pipe {t_pipe:.2f}s vs file {t_file:.2f}s")
    # 12: a pipe with many fields keeps at most the spool budget in memory
    if TESTING:
        nf, lines = 300, 20000
        gen = (f"python3 -c \"import sys\nrow=','.join(str(i) for i in range({nf}))+'\\n'\n"
               f"sys.stdout.write(row*{lines}); sys.stdout.write(','.join(['0.5']*{nf})+'\\n')\"")
        budget = 8 << 20
        rc, out, err, rss = run_rss([TESTING, "--spool-memory", str(budget), "--", "-j", "2", "sum", "--json"], gen)
        r = json.loads(out) if rc == 0 else None
        check(r is not None and len(r) == nf and r[7]["sum"] == 7 * lines + 0.5, f"#12 sums: {rc} {err[-300:]!r}")
        _, _, _, rss0 = run_rss([TESTING, "--", "-j", "2", "sum"], "printf '1\\n'")
        values = nf * lines * 8 >> 10
        print(f"#12 {nf} fields x {lines} lines ({values >> 10} MiB of values): peak RSS {rss >> 10} MiB "
              f"(budget {budget >> 20} MiB, baseline {rss0 >> 10} MiB)")
        check(SANITIZED or rss < rss0 + (budget >> 10) + 24 * 1024, f"#12 peak RSS {rss} KiB over budget")
    # 13: endless inputs: /dev/zero, an endless line, an endless stream of numbers
    _, _, _, rss0 = run_rss([TALLY, "sum"], "printf '1\\n'")
    rc, out, err, rss = run_rss([TALLY, "sum", "/dev/zero"], seconds=20)
    check(rc == 1 and "NUL" in err and (SANITIZED or rss < rss0 + 16 * 1024), f"#13 /dev/zero: {rc} {err!r} {rss} KiB")
    rc, out, err, rss = run_rss([TALLY, "sum", "--dtype", "uint8", "-"], "head -c 100000 /dev/zero")
    check(rc == 0 and out == "0\n", f"raw zeros: {out!r} {err!r}")
    if TESTING:
        rc, out, err, rss = run_rss([TESTING, "--max-record", str(4 << 20), "--", "sum"], "yes 1 | tr -d '\\n'")
        check(rc == 1 and "a record longer than" in err and (SANITIZED or rss < rss0 + 32 * 1024),
              f"#13 endless line: {rc} {err!r} {rss} KiB")
    if TESTING:
        rc, out, err, rss = run_rss([TESTING, "--spool-memory", str(16 << 20), "--", "-j", "2", "sum"],
                                    "yes 12345", seconds=4)
        print(f"#13 endless numbers: peak RSS {rss >> 10} MiB after 4 s (spool budget 16 MiB)")
        check(SANITIZED or rss < rss0 + 48 * 1024, f"#13 endless numbers: peak RSS {rss} KiB")
    lab = os.path.join(os.path.dirname(TALLY), "tally-lab")
    if os.path.exists(lab):
        rc, out, err, _ = run_rss([TALLY, "explain", "accuracy", "--input", "/dev/zero", "--svg", path("x.svg")],
                                  seconds=20)
        check(rc == 1 and "not a number" in err and not os.path.exists(path("x.svg")),
              f"#13 explain --input /dev/zero: {rc} {err!r}")


# ---- formatting (#14, #15 and the class: every kind of value and name, text and JSON) ------------
def group_format():
    # names: invalid UTF-8, long multi-byte, quotes, backslashes, control characters, empty
    names = ["a\udcff", "é" * 200, 'say "hi"', "back\\slash", "tab\there", "new\nline", "", "∑x", "x" * 300]
    header = ",".join('"' + n.replace('"', '""') + '"' for n in names)
    raw = header.encode("utf-8", "surrogateescape") + b"\n" + b",".join(b"1" for _ in names) + b"\n"
    f = write("names.csv", raw, "wb")
    rc, out, err, _ = run(["-H", "--json", "sum", f])
    try:
        r = json.loads(out.encode("utf-8", "surrogateescape").decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        r = None
        check(False, f"#14 JSON is not valid UTF-8 JSON: {e} {out[:200]!r}")
    if r:
        want = [n.replace("\udcff", "\ufffd") for n in names]
        check([x["field"] for x in r] == want, f"#14 names in JSON: {[x['field'] for x in r]!r}")
    rc, out, err, _ = run(["-H", "sum,max", f])
    lines = out.splitlines()
    check(rc == 0 and len(lines) == len(names) + 1, f"#14 table: one row per field: {len(lines)}")
    check("new\\nline" in out and "tab\\there" in out and "a\\xff" in out and "é" * 200 in out,
          f"#14 table names escaped: {out[:300]!r}")
    widths = {len(l.split("  ")[0]) for l in lines[1:]}
    # values: integers at the edges, floats of every kind, f32, failures
    cases = [
        ("i64", np.array([-2**63, 2**63 - 1], dtype="<i8"), "min,max", [-2**63, 2**63 - 1]),
        ("u64", np.array([2**64 - 1, 0], dtype="<u8"), "max,min", [2**64 - 1, 0]),
        ("f64", np.array([0.1, -0.0, 5e-324, 1.7976931348623157e308], dtype="<f8"), "max,min",
         [1.7976931348623157e308, -0.0]),
        ("neg0", np.array([-0.0, -0.0]), "sum,max", [-0.0, -0.0]),
        ("nan", np.array([1.0, np.nan]), "sum,min", ["nan", "nan"]),
        ("inf", np.array([np.inf, 1.0, -5.0]), "sum,max,min", ["inf", "inf", -5.0]),
        ("f32", np.array([0.1, 3.4028235e38], dtype="<f4"), "min,max", [0.1, 3.4028235e38]),
        ("sub", np.array([5e-324, 1e-310]), "min,max", [5e-324, 1e-310]),
    ]
    for name, a, ops, want in cases:
        np.save(path(f"{name}.npy"), a)
        rc, r, err = jrun([ops, path(f"{name}.npy")], what=name)
        got = [r[0][op] for op in ops.split(",")] if r else None
        ok = got is not None and len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
        check(ok, f"JSON {name}: {got} vs {want}")
        rc, out, err, _ = run([ops, path(f"{name}.npy")])
        cells = out.splitlines()[1].split()[1:] if rc == 0 else []
        txt = [str(w) if isinstance(w, int) else w if isinstance(w, str) else None for w in want]
        for c, w, g in zip(cells, want, got or want):
            if isinstance(w, str):
                check(c == w, f"text {name}: {c} vs {w}")
            elif isinstance(w, int):
                check(c == str(w), f"text {name}: {c} vs {w}")
            else:
                check(float(c) == w and (name != "f32" or np.float32(c) == np.float32(w)), f"text {name}: {c} vs {w}")
        if name == "f32":
            check(cells == ["0.1", "3.4028235e+38"], f"f32 shortest: {cells}")
    # failures are null in JSON, '-' in the table, with a message
    rc, out, err, _ = run(["--json", "count,min,svar", write("one.txt", "5\n")])
    check(rc == 1 and json.loads(out) == [{"field": "1", "count": 1, "min": 5, "svar": None}] and "svar" in err,
          f"null: {out!r} {err!r}")
    rc, out, err, _ = run(["count,svar", write("one.txt", "5\n")])
    check(rc == 1 and out.splitlines()[1].split() == ["1", "1", "-"], f"'-' in the table: {out!r}")
    # 15: a 2-d .npy with more than 4096 columns
    np.save(path("wide.npy"), np.arange(2 * 5000, dtype="<i4").reshape(2, 5000))
    rc, r, err = jrun(["-f", "1,4999-5000", "sum", path("wide.npy")])
    check(r == [{"field": "1", "sum": 5000}, {"field": "4999", "sum": 4998 + 9998}, {"field": "5000", "sum": 4999 + 9999}],
          f"#15 wide .npy: {r} {err!r}")
    rc, r, err = jrun(["sum", path("wide.npy")])
    check(r is not None and len(r) == 5000, "#15 every column of a wide .npy")
    # messages: a NUL in a quoted field is shown escaped, the whole text
    f = write("nul.csv", b'1,"ab\x00cd"\n', "wb")
    rc, out, err, _ = run(["-f", "2", "sum", f])
    check(rc == 1 and "'ab\\x00cd'" in err, f"#16 NUL in a message: {err!r}")
    # the same message from a file and a pipe: a quoted field running past the NUL's line is
    # shown up to the NUL; a NUL after a byte order mark read from a pipe (it crashed)
    for text, shown in ((b'1\n"ab\x00cd\nef"\n', "'ab\\x00'"), (b'1\n"ab\x00cd\n', "'ab\\x00'"),
                        (b'1\r\n2,x\x00y\r\n', "'x\\x00y'"), (b'\xef\xbb\xbf5,\x00\n', "'\\x00'")):
        f = write("nul2.csv", text, "wb")
        rc1, _, e1, _ = run(["sum", f])
        rc2, _, e2, _ = run(["sum", "-t", ","], stdin=text)
        e2 = e2.replace("<stdin>", f)
        check(rc1 == 1 and rc2 == 1 and shown in e1 and e1 == e2, f"NUL message, file vs pipe: {text!r}: {e1!r} / {e2!r}")


# ---- the option grammar (#16, #17) ---------------------------------------------------------------
def group_grammar():
    f = write("three.csv", "1,2,3\n4,5,6\n")
    npy = path("m.npy")
    np.save(npy, np.arange(6, dtype="<i4").reshape(3, 2))
    # 16: messages
    rc, out, err, _ = run(["scan", "sum", "--text", f])
    check(usage_error(rc, err) and "scan takes one field" in err and "3" in err and "at most 2" not in err,
          f"#16 scan of 3 fields: {err!r}")
    wide = write("wide.csv", ",".join("1" for _ in range(1_200_000)) + "\n")
    rc, out, err, _ = run(["-f", "1000001", "sum", wide])
    check(rc == 0 and out == "1\n", f"#16 -f 1000001: {rc} {out!r} {err!r}")
    rc, out, err, _ = run(["-f", "a", "sum", npy])
    check(usage_error(rc, err) and "column" in err and "header" not in err, f"#16 -f a on .npy: {err!r}")
    for spec in ("0", "a", "2-1", "1,,2", "4"):
        rc, out, err, _ = run(["-f", spec, "sum", f])
        check(usage_error(rc, err), f"#16 -f {spec!r} prints a usage line: {rc} {err!r}")
    # 17: -t space is one space; -W is runs of blanks (tabs too)
    body = b"1 2\n3 4\n"
    rc, r, err = jrun(["-t", "space", "sum"], body)
    check(r == [{"field": "1", "sum": 4}, {"field": "2", "sum": 6}], f"#17 -t space: {r}")
    rc, out, err, _ = run(["-t", "space", "sum"], stdin=b"1  2\n")
    check(rc == 1 and "<stdin>:1:2: '' is not a number" in err, f"#17 -t space: two spaces make an empty field: {err!r}")
    rc, r, err = jrun(["-W", "sum"], b"1 \t 2\n")
    check(r == [{"field": "1", "sum": 1}, {"field": "2", "sum": 2}], f"-W: {r}")
    # the grammar table: every conflicting pair refused with a usage line
    conflicts = [
        (["-W", "-t", ","], f), (["--dtype", "f8", "-H"], f), (["--dtype", "f8", "-t", ","], f),
        (["--dtype", "f8", "-W"], f), (["--dtype", "f8", "--skip-invalid"], f),
        (["--dtype", "f8", "--block-size", "4096"], f), (["--progress", "--no-progress"], f),
        (["-H"], npy), (["-t", ","], npy), (["-W"], npy), (["--skip-invalid"], npy),
        (["--block-size", "4096"], npy),
    ]
    for extra, inp in conflicts:
        rc, out, err, _ = run(["sum"] + extra + [inp])
        check(usage_error(rc, err) and out == "", f"#17 conflict {extra} on {os.path.basename(inp)}: {rc} {err!r}")
    # options that belong to another command
    for args in (["sum", "--exclusive", f], ["sum", "--init", "1", f], ["sum", "-o", "x", f],
                 ["sum", "--text", f], ["scan", "sum", "--json", "--text", f],
                 ["scan", "sum", "--omit-nan", "--text", f], ["info", "-f", "1"], ["demo", "--json"],
                 ["scan", "sum", "--init", "1", "--text", f]):
        rc, out, err, _ = run(args)
        check(usage_error(rc, err), f"grammar {args}: {rc} {err!r}")
    # every option given twice is refused
    twice = [["-H", "-H"], ["-f", "1", "-f", "2"], ["-t", ",", "-t", ","], ["--dtype", "f8", "--dtype", "f8"],
             ["-j", "1", "-j", "2"], ["--json", "--json"], ["--backend", "cpu", "--backend", "cpu"],
             ["--omit-nan", "--omit-nan"], ["-f1", "--field=2"]]
    for extra in twice:
        rc, out, err, _ = run(["sum"] + extra + [f])
        check(usage_error(rc, err) and "twice" in err, f"#17 repeated {extra}: {rc} {err!r}")
    # the same options in every accepted spelling work
    for args in (["--field=2", "sum", f], ["-f2", "sum", f], ["sum", f, "-f", "2"], ["--delimiter=,", "-f", "2", "sum", f],
                 ["-t,", "-f", "2", "sum", f], ["sum", "-f", "2", "--", f]):
        rc, out, err, _ = run(args)
        check(rc == 0 and out == "7\n", f"spelling {args}: {rc} {out!r} {err!r}")
    # backends come from the library's list
    rc, out, err, _ = run(["sum", "--backend", "nope", f])
    check(usage_error(rc, err) and "auto" in err and "cpu" in err, f"backend list: {err!r}")


# ---- the lab, outside the command ------------------------------------------------------------------
def group_lab():
    here = os.path.dirname(os.path.abspath(TALLY))
    rc, out, err, _ = run(["explain", "tree", "--n", "8", "--svg", path("t.svg")])
    if os.path.exists(os.path.join(here, "tally-lab")):
        check(rc == 0 and os.path.exists(path("t.svg")), f"tally explain runs the lab: {rc} {err!r}")
    alone = path("alone")
    os.mkdir(alone)
    shutil.copy(TALLY, os.path.join(alone, "tally"))
    p = subprocess.run([os.path.join(alone, "tally"), "bench"], capture_output=True, text=True)
    check(p.returncode == 1 and "tally-lab" in p.stderr and "TALLY_BUILD_LAB" in p.stderr,
          f"tally bench without the lab: {p.returncode} {p.stderr!r}")
    nm = shutil.which("nm")
    if nm:
        syms = subprocess.run([nm, "-C", TALLY], capture_output=True, text=True).stdout
        check("lab_" not in syms and "cub::" not in syms and "variants_" not in syms,
              "the tally binary carries no lab code")
    with open(TALLY, "rb") as fh:
        check(b"TALLY_TEST_" not in fh.read(), "the tally binary reads no TALLY_TEST_* variable")


GROUPS = {name[6:]: fn for name, fn in globals().items() if name.startswith("group_")}

if __name__ == "__main__":
    try:
        GROUPS[GROUP]()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed in group {GROUP}")
        sys.exit(1)
    print(f"group {GROUP}: all checks passed")
