#!/usr/bin/env python3
"""Checks the harness's exact reference against Python's own exact arithmetic.

tally_adversarial --emit-python N prints N small adversarial arrays with the reference's sum and
variance; this recomputes both with fractions.Fraction (exact rationals; float(Fraction) rounds
once, to nearest even) and fails on any difference, so that the reference the harness trusts is
itself checked by code that shares nothing with it.

    check_reference.py TALLY_ADVERSARIAL [N]
"""
import math
import subprocess
import sys
from fractions import Fraction


def parse(tok):
    if tok in ("nan", "inf", "-inf"):
        return float(tok)
    return float.fromhex(tok)


def to_float(q):
    try:
        return float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def exact_sum(xs):
    """tally.h's float sum: the exact sum rounded once, with its special cases."""
    nan = any(math.isnan(x) for x in xs)
    pinf = any(x == math.inf for x in xs)
    ninf = any(x == -math.inf for x in xs)
    if nan or (pinf and ninf):
        return math.nan
    if pinf:
        return math.inf
    if ninf:
        return -math.inf
    q = sum((Fraction(x) for x in xs), Fraction(0))
    if q == 0:
        return -0.0 if xs and all(x == 0 and math.copysign(1, x) < 0 for x in xs) else 0.0
    return to_float(q)


def variance(xs, ddof):
    n = len(xs)
    if n == 0:
        return "TALLY_ERR_EMPTY"
    if n <= ddof:
        return "TALLY_ERR_DOMAIN"
    mean = exact_sum(xs) / n
    devs = [x - mean for x in xs]  # each deviation rounded to a double
    if any(math.isnan(d) for d in devs):
        return math.nan
    if any(math.isinf(d) for d in devs):
        return math.inf
    # each square as tally.h defines it: hi = fl(d*d) plus lo = d*d - hi rounded once (fma),
    # which is d*d exactly unless d*d is below 2^-968
    q = Fraction(0)
    for d in devs:
        hi = d * d
        if math.isinf(hi):
            return math.inf
        exact = Fraction(d) ** 2
        q += Fraction(hi) + Fraction(to_float(exact - Fraction(hi)))
    return to_float(q) / (n - ddof)


def same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if math.isnan(a) and math.isnan(b):
        return True
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def main():
    exe = sys.argv[1]
    n = sys.argv[2] if len(sys.argv) > 2 else "3000"
    out = subprocess.run([exe, "--seed", "7", "--emit-python", n], check=True,
                         capture_output=True, text=True).stdout
    bad = checked = 0
    for line in out.splitlines():
        tok = line.split()
        ddof = int(tok[1])
        ref_sum = parse(tok[2])
        ref_var = tok[3] if tok[3].startswith("TALLY_") else parse(tok[3])
        xs = [parse(t) for t in tok[4:]]
        want_sum, want_var = exact_sum(xs), variance(xs, ddof)
        checked += 1
        if not same(ref_sum, want_sum) or not same(ref_var, want_var):
            bad += 1
            if bad <= 10:
                print(f"MISMATCH {tok[0]} n={len(xs)}: reference sum {ref_sum!r} var {ref_var!r}, "
                      f"fractions sum {want_sum!r} var {want_var!r}")
    print(f"reference: {checked - bad} passed, {bad} failed")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
