#!/usr/bin/python3
"""Tests of the tally command: outputs against references computed independently (Python
integers, fractions.Fraction for exact float sums, numpy for dtypes and min/max/argmin), every
bad-input case with its exit status and message, JSON, scans and their temporary files.

usage: test_cli.py TALLY_BINARY GROUP [TALLY_TESTING]
(groups: basic text npy errors json scan stdin progress demo). TALLY_TESTING is the test build
(tally-testing), which can lower the command's limits; tests that need it skip without it.
"""
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
from fractions import Fraction

try:
    import numpy as np
except ImportError:  # ctest reports the test as skipped (SKIP_RETURN_CODE 77)
    print("numpy is missing (Debian: python3-numpy): skipped")
    sys.exit(77)

TALLY = sys.argv[1]
GROUP = sys.argv[2]
TESTING = sys.argv[3] if len(sys.argv) > 3 else None
FAILURES = []
TMP = tempfile.mkdtemp(prefix="tally-cli-test-")


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(args, stdin=None, limits=None):
    """Runs tally; with limits (tally-testing's options), the test build instead."""
    cmd = [TESTING] + limits + ["--"] + args if limits is not None else [TALLY] + args
    p = subprocess.run(cmd, input=stdin, capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def path(name):
    return os.path.join(TMP, name)


def write(name, text):
    with open(path(name), "w", newline="") as f:
        f.write(text)
    return path(name)


def jrun(args, stdin=None):
    rc, out, err = run(args + ["--json"], stdin)
    check(rc == 0, f"{args}: exit {rc}, stderr {err!r}")
    try:
        return json.loads(out)
    except ValueError:
        check(False, f"{args}: not JSON: {out!r}")
        return None


def exact_sum(values):
    """The exact sum of doubles, rounded once (float(Fraction) rounds correctly)."""
    return float(sum((Fraction(v) for v in values), Fraction(0)))


def same_float(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return str(a) == str(b)
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


def close(a, b, rel=1e-12):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


# ---- groups ---------------------------------------------------------------------------------------
def group_basic():
    # seed 000's prices, as a text column
    cents = [500 + ((l * 2654435761) % 2**32) % 4500 for l in range(256)]
    f = write("seed000.txt", "".join(f"{c}\n" for c in cents))
    rc, out, err = run(["sum", f])
    check((rc, out) == (0, "693720\n"), f"seed 000 sum: {rc} {out!r} {err!r}")
    r = jrun(["sum,min,max,count,mean,argmin,argmax", f])
    check(r == [{"field": "1", "sum": 693720, "min": 500, "max": 4999, "count": 256,
                 "mean": 693720 / 256, "argmin": cents.index(500), "argmax": cents.index(4999)}],
          f"seed 000 json: {r}")
    # the text table: a header row, one row per field
    rc, out, err = run(["sum,max", f])
    lines = out.splitlines()
    check(rc == 0 and lines[0].split() == ["field", "sum", "max"] and lines[1].split() == ["1", "693720", "4999"],
          f"table: {out!r}")
    # var/std/svar/sstd and the datamash names
    vals = [random.Random(5).randint(-1000, 1000) for _ in range(1001)]
    f = write("ints.txt", "\n".join(map(str, vals)) + "\n")
    r = jrun(["var,std,svar,sstd,pvar,pstdev,sstdev,and,or,xor", f])[0]
    a = np.array(vals, dtype=np.float64)
    check(close(r["var"], np.var(a)) and close(r["pvar"], np.var(a)), f"var {r['var']} vs {np.var(a)}")
    check(close(r["std"], np.std(a)) and close(r["pstdev"], np.std(a)), "std")
    check(close(r["svar"], np.var(a, ddof=1)), "svar")
    check(close(r["sstd"], np.std(a, ddof=1)) and close(r["sstdev"], np.std(a, ddof=1)), "sstd")
    x_and, x_or, x_xor = -1, 0, 0
    for v in vals:
        x_and &= v; x_or |= v; x_xor ^= v
    check((r["and"], r["or"], r["xor"]) == (x_and, x_or, x_xor), f"bitwise {r}")
    rc, out, err = run(["prod", f])
    check(rc == 1 and "overflow" in err, f"prod overflow: {rc} {err!r}")
    small = write("small.txt", "1\n2\n3\n4\n-5\n")
    r = jrun(["prod", small])
    check(r[0]["prod"] == -120, f"prod {r}")
    rc, out, err = run(["--version"])
    check(rc == 0 and out.startswith("tally "), "--version")
    rc, out, err = run(["--help"])
    check(rc == 0 and "usage: tally" in out and "scan" in out, "--help")
    rc, out, err = run(["info"])
    check(rc == 0 and "cpu" in out and "available" in out, f"info {out!r}")
    # threads and backends give the same bits
    rng = random.Random(7)
    fl = [rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-20, 20) for _ in range(50000)]
    f = write("floats.txt", "\n".join(repr(v) for v in fl) + "\n")
    ref = exact_sum(fl)
    for extra in (["-j", "1"], ["-j", "2"], ["-j", "3", "--block-size", "4096"], ["--backend", "cpu"]):
        r = jrun(["sum,min,max,mean"] + extra + [f])[0]
        check(same_float(r["sum"], ref), f"float sum {extra}: {r['sum']!r} vs {ref!r}")
        check(r["min"] == min(fl) and r["max"] == max(fl), f"min/max {extra}")
        check(same_float(r["mean"], ref / len(fl)), f"mean {extra}")


def group_text():
    # header names, quoting, several fields, one result each
    csv = ('id,"unit price",qty,note\r\n'
           '1,"5.25",3,"a, b"\r\n'
           '2,10.5,4,"say ""hi"""\r\n'
           '3,"0.25",5,"multi\nline"\r\n'
           '\r\n'
           '4,1e2,6,\r\n')
    f = write("q.csv", csv)
    r = jrun(["-H", "-f", "unit price,qty", "sum,max", f])
    check(r == [{"field": "unit price", "sum": 116.0, "max": 100.0},
                {"field": "qty", "sum": 18, "max": 6}], f"quoted csv: {r}")
    r = jrun(["-H", "-f", "2-3", "count", f])
    check([x["field"] for x in r] == ["unit price", "qty"], f"range: {r}")
    r = jrun(["--header", "--field=1", "sum", f])
    check(r == [{"field": "id", "sum": 10}], f"--field=1: {r}")
    # without -f: every field (note has text: error names the line and field)
    rc, out, err = run(["-H", "sum", f])
    check(rc == 1 and f"{f}:2:4: 'a, b' is not a number" in err, f"all fields: {err!r}")
    # long decimals whose scaled sum leaves 64 bits: still the exact decimal sum, rounded once
    for longd in (["0.123456789012345678"] * 100, ["0.123456789012345678"] * 100 + ["12345.6"],
                  ["0.999999999999999999"] * 10):
        f = write("longdec.txt", "\n".join(longd) + "\n")
        ref = float(sum(Fraction(v) for v in longd))
        r = jrun(["sum,count,max", f])[0]
        check(same_float(r["sum"], ref) and r["count"] == len(longd) and r["max"] == float(max(longd, key=float)),
              f"long decimals: {r} vs {ref}")
        rc, out, err = run(["sum", "--json"], stdin=("\n".join(longd) + "\n").encode())
        check(rc == 0 and same_float(json.loads(out)[0]["sum"], ref), f"long decimals on a pipe: {out!r} {err!r}")
    # a UTF-8 byte order mark, from a file and from a pipe
    f = write("bom.csv", "\ufeffprice,qty\n1.5,2\n")
    check(jrun(["-H", "-f", "price", "sum", f]) == [{"field": "price", "sum": 1.5}], "BOM + header")
    rc, out, err = run(["sum"], stdin="\ufeff7\n8\n".encode())
    check(out == "15\n", f"BOM on stdin: {out!r} {err!r}")
    # TSV by extension, whitespace, -t
    f = write("t.tsv", "a\tb\n1\t2.5\n3\t4\n")
    r = jrun(["-H", "sum", f])
    check(r == [{"field": "a", "sum": 4}, {"field": "b", "sum": 6.5}], f"tsv {r}")
    f = write("w.txt", "  1   2.5\n\t3 4  \n\n5 6\n")
    r = jrun(["sum", f])
    check(r == [{"field": "1", "sum": 9}, {"field": "2", "sum": 12.5}], f"whitespace {r}")
    f = write("semi.txt", "1;2\n3;4\n")
    r = jrun(["-t", ";", "-f", "2", "sum", f])
    check(r == [{"field": "2", "sum": 6}], f"-t ; {r}")
    f = write("pipes.txt", "1|2\n3|4\n")
    r = jrun(["-t|", "sum", f])
    check(r == [{"field": "1", "sum": 4}, {"field": "2", "sum": 6}], f"-t| {r}")
    # prices: exact decimal sums (10^5 random cents, several threads and block sizes)
    rng = random.Random(11)
    cents = [rng.randint(500, 4999) for _ in range(100000)]
    f = write("prices.csv", "price\n" + "".join(f"{c // 100}.{c % 100:02d}\n" for c in cents))
    ref = float(Fraction(sum(cents), 100))
    prices = np.array(cents, dtype=np.float64) / 100
    for extra in ([], ["-j", "1"], ["-j", "4", "--block-size", "777"]):
        r = jrun(["-H", "sum,mean,var,sstd,min,max"] + extra + [f])[0]
        check(same_float(r["sum"], ref), f"price sum {extra}: {r['sum']} vs {ref}")
        check(same_float(r["mean"], float(Fraction(sum(cents), 100 * len(cents)))), f"price mean {extra}")
        check(close(r["var"], np.var(prices)) and close(r["sstd"], np.std(prices, ddof=1)),
              f"price var {extra}: {r['var']} vs {np.var(prices)}")
        check(r["min"] == min(cents) / 100 and r["max"] == max(cents) / 100, f"price min/max {extra}")
    # integers beyond 2^53 stay exact
    big = [2**60 + rng.randint(0, 1000) for _ in range(7)]
    f = write("big.txt", "\n".join(map(str, big)) + "\n")
    r = jrun(["sum,min", f])[0]
    check(r["sum"] == sum(big) and r["min"] == min(big), f"big ints {r} vs {sum(big)}")
    # integers for 300k lines, then a decimal (the field rescales: exact decimal sum), then a
    # binary float (the field turns float: exact sum of the doubles)
    ints = [rng.randint(-10**6, 10**6) for _ in range(300000)]
    lines = [str(v) for v in ints] + ["0.1"] + [str(v) for v in ints[:1000]]
    f = write("switch.txt", "\n".join(lines) + "\n")
    ref = float(Fraction(sum(ints) + sum(ints[:1000])) + Fraction(1, 10))
    for extra in ([], ["--block-size", "10000", "-j", "3"]):
        r = jrun(["sum,count,min,max,mean"] + extra + [f])[0]
        check(same_float(r["sum"], ref) and r["count"] == 301001, f"int->decimal {extra}: {r} vs {ref}")
        check(r["min"] == min(ints) and r["max"] == max(ints), f"int->decimal min/max {extra}")
        check(same_float(r["mean"], float((Fraction(sum(ints) + sum(ints[:1000])) + Fraction(1, 10)) / 301001)),
              f"int->decimal mean {extra}")
    lines2 = lines + ["1.5e-3"] + ["12.345"] * 10
    f = write("switch2.txt", "\n".join(lines2) + "\n")
    ref = exact_sum([float(v) for v in lines2])
    for extra in ([], ["--block-size", "10000", "-j", "3"]):
        r = jrun(["sum,count"] + extra + [f])[0]
        check(same_float(r["sum"], ref) and r["count"] == 301012, f"int->float {extra}: {r} vs {ref}")
    # decimals with different numbers of places, big and small
    vals = ["1.5", "2.25", "-0.125", "100", "3.1", "0.000001", "123456789.123456789"]
    f = write("mixed.txt", "\n".join(vals) + "\n")
    exact = sum(Fraction(v) for v in vals)
    r = jrun(["sum,min,max,mean", f])[0]
    check(same_float(r["sum"], float(exact)), f"mixed decimals: {r['sum']} vs {float(exact)}")
    check(r["min"] == -0.125 and r["max"] == 123456789.123456789, f"mixed min/max {r}")
    check(same_float(r["mean"], float(exact / len(vals))), "mixed mean")
    # --skip-invalid: warns, counts, goes on
    f = write("bad.csv", "x\n1\nfoo\n2\n\n3,4\nbar\n")
    rc, out, err = run(["-H", "--skip-invalid", "sum", f])
    check(rc == 0 and out == "6\n", f"skip-invalid: {rc} {out!r}")
    check(f"{f}:3:1: 'foo' is not a number (skipped)" in err and "skipped 2 invalid values" in err,
          f"skip-invalid warnings: {err!r}")
    # --omit-nan
    f = write("nan.txt", "1\nnan\n2.5\n")
    r = jrun(["sum,min,max,count", f])[0]
    check(r["sum"] == "nan" and r["min"] == "nan", f"nan propagates {r}")
    r = jrun(["--omit-nan", "sum,min,max,count", f])[0]
    check(r == {"field": "1", "sum": 3.5, "min": 1, "max": 2.5, "count": 2}, f"omit-nan {r}")


NP_TYPES = ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"]


def np_values(t, n, rng):
    dt = np.dtype(t)
    if dt.kind == "f":
        return (rng.standard_normal(n) * 10.0 ** rng.integers(-5, 5, n)).astype(dt)
    info = np.iinfo(dt)
    lo, hi = max(info.min, -2**40), min(info.max, 2**40)
    return rng.integers(lo, hi, n, endpoint=True, dtype=np.int64 if dt.kind == "i" or dt.itemsize < 8 else np.uint64).astype(dt)


def group_npy():
    rng = np.random.default_rng(3)
    for t in NP_TYPES:
        for order in "<>":
            dt = np.dtype(order + t)
            a = np_values(t, 1001, rng).astype(dt)
            a[17] = a.min()  # a tie: argmin takes the first
            f = path(f"a_{t}_{'le' if order == '<' else 'be'}.npy")
            np.save(f, a)
            ops = "count,sum,min,max,argmin,argmax,mean"
            if dt.kind != "f":
                ops += ",and,or,xor"
            r = jrun([ops, f])[0]
            vals = a.astype(a.dtype.newbyteorder("=")).tolist()
            if dt.kind == "f":
                ref_sum = exact_sum([float(v) for v in vals])
                check(same_float(r["sum"], ref_sum), f"{dt} sum {r['sum']} vs {ref_sum}")
                check(same_float(r["mean"], ref_sum / len(vals)), f"{dt} mean")
                check(dt.type(r["min"]) == a.min() and dt.type(r["max"]) == a.max(), f"{dt} min/max")
            else:
                check(r["sum"] == sum(vals), f"{dt} sum {r['sum']} vs {sum(vals)}")
                check(r["min"] == min(vals) and r["max"] == max(vals), f"{dt} min/max")
                x_and, x_or, x_xor = -1, 0, 0
                for v in vals:
                    x_and &= v; x_or |= v; x_xor ^= v
                if dt.kind == "u":
                    x_and &= 2**64 - 1
                check((r["and"], r["or"], r["xor"]) == (x_and, x_or, x_xor), f"{dt} bitwise {r}")
            check(r["count"] == 1001, f"{dt} count")
            check(r["argmin"] == int(np.argmin(a)) and r["argmax"] == int(np.argmax(a)), f"{dt} argmin/argmax")
            # the same bytes as raw input
            raw = path(f"raw_{t}_{order == '<'}.bin")
            a.tofile(raw)
            r2 = jrun([ops, "--dtype", order + t if dt.itemsize > 1 else t, raw])[0]
            check(r2 == r, f"raw {dt}: {r2} vs {r}")
    # versions 2 and 3 of the format
    a = np.arange(1000, dtype="<f8") / 7
    for v in ((1, 0), (2, 0), (3, 0)):
        f = path(f"v{v[0]}.npy")
        with open(f, "wb") as fh:
            np.lib.format.write_array(fh, a, version=v)
        r = jrun(["sum", f])[0]
        check(same_float(r["sum"], exact_sum(a.tolist())), f"version {v}")
    # 2-d: one result per column, C and Fortran order
    m = rng.integers(-100, 100, (50, 3)).astype("<i4")
    for order, arr in (("C", m), ("F", np.asfortranarray(m))):
        f = path(f"m{order}.npy")
        np.save(f, arr)
        r = jrun(["sum,max", f])
        ref = [{"field": str(j + 1), "sum": int(m[:, j].sum()), "max": int(m[:, j].max())} for j in range(3)]
        check(r == ref, f"2-d {order}: {r} vs {ref}")
        r = jrun(["-f", "2", "sum", f])
        check(r == [ref[1] | {"max": None}] or r == [{"field": "2", "sum": ref[1]["sum"]}], f"2-d -f 2 {r}")
    # bool, 0-d, empty
    np.save(path("b.npy"), np.array([True, False, True, True]))
    check(jrun(["sum,count", path("b.npy")]) == [{"field": "1", "sum": 3, "count": 4}], "bool")
    t3 = np.arange(24, dtype="<i2").reshape(2, 3, 4)
    np.save(path("t3.npy"), t3)
    check(jrun(["sum,count", path("t3.npy")]) == [{"field": "1", "sum": 276, "count": 24}], "3-d flattened")
    np.save(path("s.npy"), np.float64(2.5))
    check(jrun(["sum", path("s.npy")]) == [{"field": "1", "sum": 2.5}], "0-d")
    np.save(path("e2.npy"), np.zeros((5, 0), "<i4"))
    check(jrun(["count", path("e2.npy")]) == [{"field": "1", "count": 0}], "(5, 0) array")
    np.save(path("e.npy"), np.zeros(0, "<f4"))
    check(jrun(["sum,count", path("e.npy")]) == [{"field": "1", "sum": 0, "count": 0}], "empty npy")
    # f32 min/max print as float32 shortest
    np.save(path("f32.npy"), np.array([0.1, 0.2], "<f4"))
    rc, out, err = run(["min", path("f32.npy")])
    check(out == "0.1\n", f"f32 min {out!r}")


def group_errors():
    f = write("bad.csv", "a,b\n1,2\n3,x y\n")
    rc, out, err = run(["-H", "sum", f])
    check(rc == 1 and err == f"{f}:3:2: 'x y' is not a number\n", f"not a number: {rc} {err!r}")
    rc, out, err = run(["sum", path("missing.csv")])
    check(rc == 1 and path("missing.csv") in err and "No such file" in err, f"missing: {err!r}")
    rc, out, err = run(["sum", TMP])
    check(rc == 1 and TMP in err and "directory" in err, f"directory: {err!r}")
    unreadable = write("secret.txt", "1\n")
    os.chmod(unreadable, 0)
    if os.geteuid() != 0:
        rc, out, err = run(["sum", unreadable])
        check(rc == 1 and "Permission denied" in err, f"unreadable: {err!r}")
    # .npy: truncated data, truncated header, malformed header, unsupported dtype
    a = np.arange(100, dtype="<f8")
    np.save(path("ok.npy"), a)
    data = open(path("ok.npy"), "rb").read()
    open(path("trunc.npy"), "wb").write(data[:-8])
    rc, out, err = run(["sum", path("trunc.npy")])
    check(rc == 1 and "trunc.npy" in err and "truncated" in err, f"truncated data: {err!r}")
    open(path("trunch.npy"), "wb").write(data[:40])
    rc, out, err = run(["sum", path("trunch.npy")])
    check(rc == 1 and "truncated" in err, f"truncated header: {err!r}")
    bad = bytearray(data)
    bad[10:20] = b"[garbage!]"
    open(path("malformed.npy"), "wb").write(bytes(bad))
    rc, out, err = run(["sum", path("malformed.npy")])
    check(rc == 1 and "malformed.npy" in err and "malformed" in err, f"malformed: {err!r}")
    for t in ("<f2", "<c16", "|S3"):
        f = path(f"unsup{t[1:]}.npy")
        np.save(f, np.zeros(3, dtype=t))
        rc, out, err = run(["sum", f])
        check(rc == 1 and f in err and "unsupported dtype" in err, f"unsupported {t}: {err!r}")
    # overflow of an exact integer sum
    f = write("ovf.txt", "\n".join([str(2**62)] * 4) + "\n")
    rc, out, err = run(["sum", f])
    check(rc == 1 and "overflow" in err and out == "", f"overflow: {rc} {out!r} {err!r}")
    np.save(path("ovf.npy"), np.array([2**62] * 4, "<i8"))
    rc, out, err = run(["sum", path("ovf.npy")])
    check(rc == 1 and "overflow" in err, f"npy overflow: {err!r}")
    # empty input: count and sum print 0; min, mean, argmin: a message, exit 1
    f = write("empty.txt", "")
    rc, out, err = run(["--json", "count,sum", f])
    check(rc == 0 and json.loads(out) == [{"field": "1", "count": 0, "sum": 0}], f"empty count,sum: {rc} {out!r}")
    for op in ("min", "max", "mean", "argmin", "var"):
        rc, out, err = run([op, f])
        check(rc == 1 and "empty" in err, f"empty {op}: {rc} {err!r}")
    f = write("hdr.csv", "a,b\n")
    rc, out, err = run(["-H", "-f", "b", "count,min", f])
    check(rc == 1 and "empty" in err, f"header only: {rc} {out!r} {err!r}")
    # usage errors: exit 2
    for args in (["bogus", f], ["sum", "--no-such-option", f], ["sum", "-t"], ["sum", "-j", "x", f],
                 [], ["scan", "mean", f, "-o", path("o.npy")], ["scan", "sum", f],
                 ["sum", "--backend", "quantum", f], ["sum", "-f", "name", write("n.txt", "1\n")],
                 ["-H", "-f", "nope", "sum", write("h2.csv", "a\n1\n")], ["sum", "-f", "0", f],
                 ["sum", "--dtype", "f16", write("r.bin", "12345678")], ["sum", f, "extra"],
                 ["-H", "-f", "a,1", "sum", write("h3.csv", "a,b\n1,2\n")]):
        rc, out, err = run(args)
        check(rc == 2 and err.startswith("tally: "), f"usage {args}: {rc} {err!r}")
    # raw input of a size that is not whole elements
    rc, out, err = run(["sum", "--dtype", "f8", write("r7.bin", "1234567")])
    check(rc == 1 and "r7.bin" in err, f"raw size: {err!r}")
    # xor of floats
    rc, out, err = run(["xor", path("ok.npy")])
    check(rc == 1 and "integer" in err, f"xor of floats: {err!r}")
    rc, out, err = run(["xor", write("fx.txt", "1.5\n2\n")])
    check(rc == 1 and "integer" in err, f"xor of text floats: {err!r}")
    # unterminated quote
    rc, out, err = run(["sum", write("uq.csv", '1\n"2\n3\n')])
    check(rc == 1 and "uq.csv:2:1: unterminated quoted field" in err, f"unterminated: {err!r}")
    # no progress line on a pipe
    rc, out, err = run(["sum", path("ok.npy")])
    check(err == "", f"stderr on a pipe: {err!r}")


def group_json():
    f = write("j.csv", "name,v\nx,9007199254740993\ny,1\n")
    rc, out, err = run(["-H", "-f", "v", "--json", "sum,min,max,mean"], stdin=b"")
    check(rc == 1, "json on empty stdin fails for min")
    rc, out, err = run(["-H", "-f", "v", "--json", "sum,min,max", f])
    check(rc == 0 and '"sum": 9007199254740994' in out, f"exact big ints in JSON: {out!r}")
    r = json.loads(out)
    check(r == [{"field": "v", "sum": 9007199254740994, "min": 1, "max": 9007199254740993}], f"{r}")
    # decimals are summed exactly in decimal; binary floats (an exponent) exactly in binary
    f = write("k.txt", "0.1\n0.2\n")
    rc, out, err = run(["--json", "sum,mean", f])
    check(out == '[{"field": "1", "sum": 0.3, "mean": 0.15}]\n', f"decimal sum: {out!r}")
    f = write("k2.txt", "0.1\n2e-1\n")
    rc, out, err = run(["--json", "sum,mean", f])
    check(out == '[{"field": "1", "sum": 0.30000000000000004, "mean": 0.15000000000000002}]\n', f"shortest floats: {out!r}")
    f = write("inf.txt", "inf\n1\n")
    r = jrun(["sum,min,max", f])
    check(r == [{"field": "1", "sum": "inf", "min": 1, "max": "inf"}], f"inf: {r}")
    f = write("ninf.txt", "-inf\ninf\n")
    r = jrun(["sum,min", f])
    check(r == [{"field": "1", "sum": "nan", "min": "-inf"}], f"nan/-inf: {r}")
    f = write("names.csv", 'a "q",b\\c\n1,2\n')
    r = jrun(["-H", "sum", f])
    check(r is not None and r[0]["field"] == 'a "q"' and r[1]["field"] == "b\\c", f"escaped names: {r}")
    # failed values are null in JSON
    rc, out, err = run(["--json", "count,min", write("e.txt", "")])
    check(rc == 1 and json.loads(out) == [{"field": "1", "count": 0, "min": None}], f"null: {out!r}")


def group_scan():
    rng = np.random.default_rng(9)
    for t in NP_TYPES:
        for order in "<>":
            dt = np.dtype(order + t)
            a = np_values(t, 500, rng).astype(dt)
            if dt.kind != "f":
                a = (a % 7).astype(dt)
            f = path(f"s_{t}{order == '<'}.npy")
            np.save(f, a)
            out = path(f"o_{t}{order == '<'}.npy")
            rc, o, err = run(["scan", "sum", f, "-o", out])
            check(rc == 0, f"scan {dt}: {err!r}")
            got = np.load(out)
            native = a.astype(a.dtype.newbyteorder("="))
            check(got.dtype == native.dtype, f"scan {dt} dtype {got.dtype}")
            if dt.kind == "f":
                # deterministic, close to a float64 running sum
                ref = np.cumsum(native.astype(np.float64))
                check(np.allclose(got.astype(np.float64), ref, rtol=1e-4 if t == "f4" else 1e-9, atol=1e-3), f"scan {dt} values")
            else:
                ref = np.cumsum(native, dtype=native.dtype)
                check(np.array_equal(got, ref), f"scan {dt} values")
            rc, o, err = run(["scan", "max", f, "-o", out])
            check(rc == 0 and np.array_equal(np.load(out), np.maximum.accumulate(native)), f"scan max {dt}")
    # exclusive with --init, text output
    f = write("c.txt", "".join(f"{(l * 7) % 5}\n" for l in range(256)))
    rc, out, err = run(["scan", "sum", "--text", f])
    vals = [int(x) for x in out.split()]
    check(rc == 0 and vals[:6] == [0, 2, 6, 7, 10, 10] and vals[-1] == 510, f"seed 003 scan: {vals[:6]} {vals[-1:]}")
    rc, out, err = run(["scan", "sum", "--exclusive", "--init", "100", "--text", f])
    vals = [int(x) for x in out.split()]
    check(rc == 0 and vals[:4] == [100, 100, 102, 106] and len(vals) == 256, f"exclusive: {vals[:4]}")
    out_npy = path("c.npy")
    rc, out, err = run(["scan", "sum", f, "-o", out_npy])
    got = np.load(out_npy)
    check(rc == 0 and got.dtype == np.int64 and got[-1] == 510, f"text -> npy i64: {got.dtype}")
    f2 = write("d.txt", "0.5\n0.25\n1\n")
    rc, out, err = run(["scan", "sum", f2, "-o", out_npy])
    check(rc == 0 and np.load(out_npy).tolist() == [0.5, 0.75, 1.75], "float text scan")
    # decimal prefix sums are exact, each rounded once
    f3 = write("dec.txt", "0.1\n0.2\n0.3\n1.25\n")
    rc, out, err = run(["scan", "sum", "--text", f3])
    check(out.split() == ["0.1", "0.3", "0.6", "1.85"], f"decimal scan {out!r}")
    rc, out, err = run(["scan", "sum", "--exclusive", "--init", "0.05", "--text", f3])
    check(out.split() == ["0.05", "0.15", "0.35", "0.65"], f"decimal exclusive scan {out!r}")
    rc, out, err = run(["scan", "prod", "--text", f2])
    check(out.split() == ["0.5", "0.125", "0.125"], f"prod scan {out!r}")
    # a failed scan leaves no file behind, and an existing OUT untouched
    keep = path("keep.npy")
    np.save(keep, np.arange(3))
    before = open(keep, "rb").read()
    rc, out, err = run(["scan", "sum", write("bad.txt", "1\nx\n"), "-o", keep])
    check(rc == 1 and open(keep, "rb").read() == before, "failed parse keeps OUT")
    big = path("big.npy")
    np.save(big, np.arange(100000, dtype="<i8"))
    rc, out, err = run(["scan", "sum", big, "-o", keep], limits=["--write-limit", "4096"])
    check(rc == 1 and "No space" in err, f"write failure: {rc} {err!r}")
    check(open(keep, "rb").read() == before, "write failure keeps OUT")
    left = [n for n in os.listdir(TMP) if ".tmp." in n]
    check(left == [], f"temporary files left: {left}")
    rc, out, err = run(["scan", "sum", big, "-o", path("nodir/x.npy")])
    check(rc == 1 and "nodir" in err, f"no such dir: {err!r}")
    rc, out, err = run(["scan", "xor", path("s_f8True.npy"), "-o", path("x.npy")])
    check(rc == 1 and not os.path.exists(path("x.npy")), f"xor scan of floats: {rc} {err!r}")
    m = np.arange(12, dtype="<i4").reshape(4, 3)
    np.save(path("m.npy"), m)
    rc, out, err = run(["scan", "sum", path("m.npy"), "-o", path("m_out.npy")])
    check(rc == 2, "scan of 3 columns needs -f")
    rc, out, err = run(["scan", "sum", "-f", "2", path("m.npy"), "--text"])
    check(out.split() == [str(x) for x in np.cumsum(m[:, 1])], f"scan -f 2: {out!r}")


def group_stdin():
    cents = [500 + ((l * 2654435761) % 2**32) % 4500 for l in range(256)]
    text = "".join(f"{c}\n" for c in cents).encode()
    rc, out, err = run(["sum,min,max", "--json"], stdin=text)
    check(json.loads(out) == [{"field": "1", "sum": 693720, "min": 500, "max": 4999}], f"stdin: {out!r}")
    rc, out, err = run(["sum", "-"], stdin=text)
    check(out == "693720\n", "'-' is stdin")
    rc, out, err = run(["-H", "-f", "p", "sum"], stdin=b"p,q\n1.5,2\n2.5,3\n")
    check(out == "4\n", f"stdin header {out!r}")
    # .npy and raw through a pipe
    a = np.arange(1000, dtype=">i4")
    np.save(path("p.npy"), a)
    data = open(path("p.npy"), "rb").read()
    rc, out, err = run(["sum"], stdin=data)
    check(out == f"{int(a.sum())}\n", f"npy on stdin: {out!r} {err!r}")
    rc, out, err = run(["sum", "--dtype", ">i4"], stdin=a.tobytes())
    check(out == f"{int(a.sum())}\n", f"raw on stdin: {out!r}")
    # a big pipe: integers, then a float late (the spool replays them)
    rng = random.Random(1)
    ints = [rng.randint(-10**9, 10**9) for _ in range(400000)]
    body = "\n".join(map(str, ints)) + "\n0.5\n"
    ref = exact_sum([float(v) for v in ints] + [0.5])
    rc, out, err = run(["sum,count", "--json", "-j", "2"], stdin=body.encode())
    r = json.loads(out)[0]
    check(same_float(r["sum"], float(Fraction(sum(ints)) + Fraction(1, 2))) and r["count"] == 400001,
          f"stdin int->decimal: {r} vs {ref}")
    body2 = body + "1e-7\n"
    rc, out, err = run(["sum,count", "--json", "-j", "2"], stdin=body2.encode())
    r = json.loads(out)[0]
    ref2 = exact_sum([float(v) for v in ints] + [0.5, 1e-7])
    check(same_float(r["sum"], ref2) and r["count"] == 400002, f"stdin int->float: {r} vs {ref2}")
    # the same through the spill file (a tiny in-memory spool)
    for body_, ref_, what in ((body, float(Fraction(sum(ints)) + Fraction(1, 2)), "decimal"),
                              (body2, ref2, "float")):
        rc, out, err = run(["sum,count,min", "--json", "--block-size", "100000"], stdin=body_.encode(),
                           limits=["--spool-memory", "65536"])
        r = json.loads(out)[0]
        check(same_float(r["sum"], ref_) and r["min"] == min(ints), f"spill {what}: {r} vs {ref_}")
    rc, out, err = run(["sum", "--json"], stdin=b"1\nx\n")
    check(rc == 1 and "<stdin>:2:1: 'x' is not a number" in err, f"stdin error name: {err!r}")
    check("\r" not in err, "no progress line on a pipe")


def progress_run(args, chunks, delay):
    """Runs tally with stderr on a terminal (a pty) and stdin fed slowly; returns stdout, stderr."""
    import pty, select, threading, time
    master, slave = pty.openpty()
    p = subprocess.Popen([TALLY] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)

    def feed():
        for c in chunks:
            p.stdin.write(c)
            p.stdin.flush()
            time.sleep(delay)
        p.stdin.close()

    t = threading.Thread(target=feed)
    t.start()
    err = b""
    while True:
        r, _, _ = select.select([master], [], [], 0.05)
        if r:
            try:
                got = os.read(master, 65536)
            except OSError:
                break
            if not got:
                break
            err += got
        elif p.poll() is not None:
            break
    out = p.stdout.read()
    p.wait()
    t.join()
    os.close(master)
    return out.decode(), err.decode("utf-8", "replace")


def group_progress():
    body = "".join(f"{i % 1000}.5\n" for i in range(200000)).encode()
    chunks = [body[i:i + 200000] for i in range(0, len(body), 200000)]
    out, err = progress_run(["sum", "-j", "1", "--block-size", "65536"], chunks, 0.25)
    check(out.strip() != "" and "tally: <stdin>: " in err and "/s" in err and "\x1b[K" in err,
          f"progress on a terminal: {out!r} {err[-200:]!r}")
    out, err = progress_run(["sum", "--no-progress"], chunks, 0.05)
    check(err == "", f"--no-progress: {err!r}")
    # a fast input shows nothing, even on a terminal
    out, err = progress_run(["sum"], [b"1\n2\n"], 0)
    check(out == "3\n" and err == "", f"fast input: {out!r} {err!r}")


def group_demo():
    rc, out, err = run(["demo"])
    check(rc == 0, f"demo exit {rc}: {err!r}")
    check("sum 693720  min 500  max 4999" in out, "demo seed 000")
    check("..., 510" in out, "demo seed 003")
    check("MISMATCH" not in out and out.count(" ok") >= 3, f"demo: {out!r}")
    check("naive f32 running total" in out and "pairwise" in out, "demo seed 001 rows")


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
