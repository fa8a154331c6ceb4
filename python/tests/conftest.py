"""Shared helpers: exact references written without tally (Python ints, fractions, math.fsum)."""
import math
import os
import sys
from fractions import Fraction

import numpy as np
import pytest

import tally

INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
FLOAT_TYPES = [np.float32, np.float64]
ALL_TYPES = INT_TYPES + FLOAT_TYPES
# sizes around the SIMD widths, the 4096-element blocks and the 64 KiB thread pieces
SIZES = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 255, 257, 1000, 4095, 4096, 4097,
         8193, 16385, 65537, 131073]


def is_signed(dt):
    return np.issubdtype(dt, np.signedinteger)


def random_array(rng, dtype, n, kind="random"):
    """Random values of dtype: integers over varied magnitudes (64-bit ones below 2^50 so that
    sums fit), floats over many binades with exact cancellations and signed zeros."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        bits = min(info.bits, 50)
        mags = rng.integers(0, bits, size=n)
        vals = rng.integers(0, 2 ** 50, size=n, dtype=np.int64) >> (50 - np.maximum(mags, 1))
        if dtype.kind == "i":
            vals = np.where(rng.random(n) < 0.5, -vals, vals)
            vals = np.clip(vals, info.min, info.max)
        return vals.astype(dtype)
    if dtype == np.bool_:
        return rng.random(n) < 0.5
    if kind == "prod":
        return (1 + (rng.random(n) - 0.5) * 2 ** -10).astype(dtype)
    exps = rng.integers(-40, 40, size=n)
    x = (1 + rng.random(n)) * np.ldexp(1.0, exps)
    x = np.where(rng.random(n) < 0.5, -x, x)
    x = x.astype(dtype)
    if n > 4:
        cancel = rng.random(n) < 0.06
        idx = np.nonzero(cancel[1:])[0] + 1
        x[idx] = -x[idx - 1]
        x[rng.integers(0, n, size=2)] = -0.0
    return x


def exact_sum(x):
    """The exact sum: a Python int for integers, the correctly rounded float for floats."""
    if x.dtype.kind in "iub":
        return sum(int(v) for v in x.ravel().tolist())
    v = x.astype(np.float64).ravel()
    if np.isnan(v).any() or (np.isinf(v).any() and (v == np.inf).any() and (v == -np.inf).any()):
        return math.nan
    if np.isinf(v).any():
        return float(v[np.isinf(v)][0])
    if v.size and (v == 0).all() and np.signbit(v).all():
        return -0.0
    return math.fsum(v.tolist())


def exact_var(x, ddof, omit_nan=False):
    """tally's variance, written out: the mean m = fl(fsum / n); each deviation rounded to
    float64 once; the squares and their sum exact (fractions); one division by n - ddof."""
    v = x.astype(np.float64).ravel()
    if omit_nan:
        v = v[~np.isnan(v)]
    n = v.size
    m = math.fsum(v.tolist()) / n
    s = sum((Fraction(float(d)) ** 2 for d in (v - m).tolist()), Fraction(0))
    return float(s) / (n - ddof)  # float(Fraction) rounds correctly: fl(fl(s) / (n - ddof))


def same_float(a, b):
    """Equal bits: NaN equals NaN, -0.0 differs from +0.0."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


@pytest.fixture(params=[1, 3], ids=lambda t: "threads%d" % t)
def ctx(request):
    return tally.Context(backend="cpu", threads=request.param)


@pytest.fixture
def rng():
    return np.random.default_rng(int(os.environ.get("TALLY_TEST_SEED", "20261201")))
