"""Scans: integer cumsum/cumprod exact (Python ints) or OverflowError; float scans against the
block-wise definition of tally.h written out with NumPy; min/max scans against NumPy."""
import itertools
import math

import numpy as np
import pytest

import tally
from conftest import ALL_TYPES, FLOAT_TYPES, INT_TYPES, SIZES, is_signed, random_array

BLOCK = 4096


def _local(xb, op):
    """The local values of one block in tally.h's order: groups of 16; in each, p[k] = p[k-s]
    op p[k] for s = 1, 2, 4 where k mod 8 >= s, then p[k] = p[7] op p[k] for k >= 8; the
    block's local values are p in its first group and L op p after, L being the previous
    group's last local value (NumPy's accumulate is such a left fold). A partial group is
    padded with the identity, which changes no value."""
    f = np.add if op == "sum" else np.multiply
    n = xb.size
    p = np.full(-(-n // 16) * 16, -0.0 if op == "sum" else 1.0, dtype=xb.dtype)
    p[:n] = xb
    p = p.reshape(-1, 16)
    k = np.arange(16)
    for s in (1, 2, 4):
        m = (k & 7) >= s
        q = p.copy()
        q[:, m] = f(p[:, k[m] - s], p[:, m])
        p = q
    p[:, 8:] = f(p[:, 7:8], p[:, 8:])
    run = f.accumulate(p[:, 15])  # L after each group
    p[1:] = f(run[:-1, None], p[1:])
    return p.reshape(-1)[:n]


def _scan_from(x, op, carry, out, shift):
    """tally.h's CPU float sum/prod scan written out: fixed blocks of 4096; out[i] = carry op
    (the block's local value at i, _local); the next block's carry is the block's last
    output. The first carry: -0.0 for an inclusive sum, 1 for a product, the initial value for
    an exclusive scan, whose outputs sit one place to the right (shift 1)."""
    combine = np.add if op == "sum" else np.multiply
    # blocks are counted over the output positions of the input elements they hold
    for b in range(0, x.size, BLOCK):
        local = _local(x[b:b + BLOCK], op)
        res = combine(carry, local)
        out[b + shift:b + shift + local.size] = res
        carry = res[-1]
    return out


@pytest.mark.parametrize("dtype", INT_TYPES + [np.bool_], ids=lambda d: np.dtype(d).name)
def test_integer_cumsum_exact(dtype, ctx, rng):
    for n in SIZES:
        x = random_array(rng, dtype, n) if dtype is not np.bool_ else rng.random(n) < 0.5
        got = tally.cumsum(x, ctx=ctx)
        want_dtype = np.uint64 if np.dtype(dtype).kind == "u" else np.int64
        assert got.dtype == want_dtype and got.dtype == np.cumsum(x).dtype
        assert got.tolist() == list(itertools.accumulate(int(v) for v in x.tolist()))
        ex = tally.cumsum(x, exclusive=True, initial=5, ctx=ctx)
        assert ex.tolist() == list(itertools.accumulate([5] + [int(v) for v in x.tolist()[:-1]]))[:n]


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32])
def test_integer_scans_overflow(dtype, ctx):
    info = np.iinfo(dtype)
    hi = (1 << 63) - 1 if is_signed(dtype) else (1 << 64) - 1
    x = np.zeros(10000, dtype=dtype)
    x[:] = 1
    x[7000] = info.max
    if np.dtype(dtype).itemsize == 8:
        with pytest.raises(OverflowError, match="running value 7000"):
            tally.cumsum(x, ctx=ctx)
        x[7001] = -1 if is_signed(dtype) else 0
        with pytest.raises(OverflowError, match="running value 7000"):
            tally.cumsum(x, ctx=ctx)  # back in range afterwards: still an overflow at 7000
        x[0] = -1 if is_signed(dtype) else 0  # now it fits exactly
        x[1:7000] = 0 if not is_signed(dtype) else x[1:7000]
    else:
        got = tally.cumsum(x, ctx=ctx)  # int32 input: int64 sums, no overflow
        assert int(got[-1]) == 9999 + info.max
    with pytest.raises(OverflowError, match="initial"):
        tally.cumsum(np.ones(3, dtype=dtype), exclusive=True, initial=hi + 1, ctx=ctx)
    p = np.full(70, 2, dtype=dtype)
    with pytest.raises(OverflowError, match="running value %d " % (62 if is_signed(dtype) else 63)):
        tally.cumprod(p, ctx=ctx)
    q = np.array([3, -2, 5, 0, 7], dtype=np.int64)
    assert tally.cumprod(q, ctx=ctx).tolist() == [3, -6, -30, 0, 0]
    assert tally.cumprod(q, exclusive=True, initial=2, ctx=ctx).tolist() == [2, 6, -12, -60, 0]
    rows = np.ones((3, 4), dtype=np.int64)
    rows[2, 2] = 2 ** 63 - 1
    with pytest.raises(OverflowError, match="of row 2"):
        tally.cumsum(rows, axis=1, ctx=ctx)


@pytest.mark.parametrize("dtype", FLOAT_TYPES, ids=lambda d: np.dtype(d).name)
def test_float_scans_blockwise(dtype, ctx, rng):
    for n in SIZES:
        x = random_array(rng, dtype, n)
        got = tally.cumsum(x, ctx=ctx)
        assert got.dtype == dtype
        want = _scan_from(x, "sum", dtype(-0.0), np.empty_like(x), 0)
        np.testing.assert_array_equal(got, want)
        assert np.allclose(got, np.cumsum(x.astype(np.float64)), rtol=0,
                           atol=float(np.abs(x.astype(np.float64)).sum()) * 1e-5)
        ex = tally.cumsum(x, exclusive=True, initial=1.5, ctx=ctx)
        if n:
            wex = np.empty_like(x)
            wex[0] = dtype(1.5)
            _scan_from(x[:-1], "sum", dtype(1.5), wex, 1)
            np.testing.assert_array_equal(ex, wex)
        p = random_array(rng, dtype, n, "prod")
        np.testing.assert_array_equal(tally.cumprod(p, ctx=ctx),
                                      _scan_from(p, "prod", dtype(1.0), np.empty_like(p), 0))


@pytest.mark.parametrize("dtype", ALL_TYPES + [np.bool_], ids=lambda d: np.dtype(d).name)
def test_min_max_scans(dtype, ctx, rng):
    for n in (0, 1, 17, 4097, 70001):
        x = random_array(rng, dtype, n) if dtype is not np.bool_ else rng.random(n) < 0.3
        if np.dtype(dtype).kind == "f" and n > 10:
            x[n // 2] = np.nan
        for f, ref in ((tally.cummin, np.minimum.accumulate), (tally.cummax, np.maximum.accumulate)):
            got = f(x, ctx=ctx)
            assert got.dtype == x.dtype
            np.testing.assert_array_equal(got, ref(x))


def test_scan_axis_strides_and_out(ctx, rng):
    x = random_array(rng, np.float64, 6 * 7 * 5).reshape(6, 7, 5)
    for axis in (0, 1, 2, -1):
        got = tally.cumsum(x, axis=axis, ctx=ctx)
        assert got.shape == x.shape
        want = np.apply_along_axis(lambda r: _scan_from(r, "sum", -0.0, np.empty_like(r), 0), axis, x)
        np.testing.assert_array_equal(got, want)  # rows in tally.h's order
    flat = x.reshape(-1)
    np.testing.assert_array_equal(tally.cumsum(x, ctx=ctx),
                                  _scan_from(flat, "sum", -0.0, np.empty_like(flat), 0))  # C order
    i = np.arange(30, dtype=np.int16).reshape(5, 6)[:, ::2]
    np.testing.assert_array_equal(tally.cumsum(i, axis=0, ctx=ctx), np.cumsum(i, axis=0))
    np.testing.assert_array_equal(tally.cummax(i.T, axis=1, ctx=ctx), np.maximum.accumulate(i.T, axis=1))
    # out=: written in place, any strides, also a itself
    out = np.empty((5, 6), dtype=np.int64)
    r = tally.cumsum(np.arange(30).reshape(5, 6), axis=1, out=out, ctx=ctx)
    assert r is out and out[4, 5] == sum(range(24, 30))
    big = np.zeros((5, 12), dtype=np.int64)
    tally.cumsum(np.arange(30).reshape(5, 6), axis=1, out=big[:, ::2], ctx=ctx)
    assert big[:, ::2].tolist() == np.cumsum(np.arange(30).reshape(5, 6), axis=1).tolist()
    assert (big[:, 1::2] == 0).all()
    a = rng.random(10000)
    want = tally.cumsum(a.copy(), ctx=ctx)
    assert tally.cumsum(a, out=a, ctx=ctx) is a and np.array_equal(a, want)
    b = np.arange(10, dtype=np.int64)
    tally.cumsum(b, out=b, ctx=ctx)  # in place with the overflow check (reads a copy)
    assert b.tolist() == list(itertools.accumulate(range(10)))
    c = np.arange(10, dtype=np.int64)
    tally.cumsum(c[:-1], out=c[1:], ctx=ctx)  # overlapping, shifted: reads a copy
    assert c.tolist() == [0, 0, 1, 3, 6, 10, 15, 21, 28, 36]
    with pytest.raises(ValueError, match="out must be"):
        tally.cumsum(np.arange(4, dtype=np.int32), out=np.empty(4, dtype=np.int32))
    with pytest.raises(ValueError, match="read-only"):
        ro = np.empty(4)
        ro.flags.writeable = False
        tally.cumsum(np.ones(4), out=ro)
    with pytest.raises(ValueError, match="exclusive"):
        tally.cumsum(np.ones(4), initial=1.0)
