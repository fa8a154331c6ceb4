"""Reductions against exact references (Python ints, math.fsum, fractions) and NumPy."""
import functools
import math

import numpy as np
import pytest

import tally
from conftest import (ALL_TYPES, FLOAT_TYPES, INT_TYPES, SIZES, exact_sum, exact_var,
                      is_signed, random_array, same_float)


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda d: np.dtype(d).name)
def test_every_reduction_on_random_data(dtype, ctx, rng):
    for n in SIZES:
        x = random_array(rng, dtype, n)
        vals = x.tolist()
        got = tally.sum(x, ctx=ctx)
        assert same_float(got, exact_sum(x)) if x.dtype.kind == "f" else got == exact_sum(x)
        assert type(got) is (float if x.dtype.kind == "f" else int)
        assert tally.count(x, ctx=ctx) == n
        if n == 0:
            for f in (tally.min, tally.max, tally.argmin, tally.argmax, tally.mean, tally.var):
                with pytest.raises(ValueError, match="empty"):
                    f(x, ctx=ctx)
            continue
        mn, mx = tally.min(x, ctx=ctx), tally.max(x, ctx=ctx)
        assert mn == min(vals) and mx == max(vals)
        assert tally.argmin(x, ctx=ctx) == int(np.argmin(x))
        assert tally.argmax(x, ctx=ctx) == int(np.argmax(x))
        assert tally.mean(x, ctx=ctx) == float(exact_sum(x)) / n  # the rounded sum, then / n
        if n <= 20000:
            assert tally.var(x, ctx=ctx) == exact_var(x, 0)
            if n > 1:
                assert tally.std(x, ddof=1, ctx=ctx) == math.sqrt(exact_var(x, 1))
        if x.dtype.kind in "iu":
            bits = np.iinfo(x.dtype).bits
            mask = (1 << bits) - 1
            for f, op, ident in ((tally.bitwise_and, lambda a, b: a & b, mask),
                                 (tally.bitwise_or, lambda a, b: a | b, 0),
                                 (tally.bitwise_xor, lambda a, b: a ^ b, 0)):
                want = functools.reduce(op, (v & mask for v in vals), ident)
                if is_signed(x.dtype) and want >> (bits - 1):
                    want -= 1 << bits
                assert f(x, ctx=ctx) == want


@pytest.mark.parametrize("dtype", INT_TYPES, ids=lambda d: np.dtype(d).name)
def test_integer_products_exact_or_overflow(dtype, ctx, rng):
    info = np.iinfo(dtype)
    lo, hi = (-1 << 63, (1 << 63) - 1) if is_signed(dtype) else (0, (1 << 64) - 1)
    for n in (0, 1, 5, 40, 70, 4097):
        x = rng.integers(max(info.min, -3), min(info.max, 3) + 1, size=n).astype(dtype)
        want = math.prod(int(v) for v in x.tolist())
        if lo <= want <= hi:
            assert tally.prod(x, ctx=ctx) == want
        else:
            with pytest.raises(OverflowError, match="overflow"):
                tally.prod(x, ctx=ctx)


def test_float_products_deterministic(rng):
    x = random_array(rng, np.float64, 100003, "prod")
    one = tally.prod(x, ctx=tally.Context(backend="cpu", threads=1))
    assert tally.prod(x, ctx=tally.Context(backend="cpu", threads=2)) == one
    assert tally.prod(x, ctx=tally.Context(backend="cpu", threads=3)) == one
    assert one == pytest.approx(math.prod(x.tolist()), rel=1e-10)
    assert type(tally.prod(x.astype(np.float32))) is float


def test_sums_exact_where_numpy_rounds():
    x = np.array([1e16, 1.0, -1e16, 1.0], dtype=np.float64)
    assert tally.sum(x) == 2.0 and np.sum(x) != 2.0
    y = np.array([1e8, 1, -1e8] * 1000, dtype=np.float32)
    assert tally.sum(y) == 1000.0
    big = np.full(300001, 2 ** 62, dtype=np.int64)
    with pytest.raises(OverflowError, match="does not fit"):
        tally.sum(big)  # NumPy wraps around
    big[::2] *= -1
    assert tally.sum(big) == -2 ** 62  # 150001 negatives, 150000 positives
    u = np.array([2 ** 64 - 1, 1], dtype=np.uint64)
    with pytest.raises(OverflowError):
        tally.sum(u)
    assert tally.sum(u[:1]) == 2 ** 64 - 1
    assert tally.sum(np.array([2 ** 31 - 1] * 5, dtype=np.int32)) == 5 * (2 ** 31 - 1)


def test_nan_inf_and_signed_zeros(ctx):
    nan, inf = math.nan, math.inf
    x = np.array([1.0, nan, -2.0, 3.0])
    assert math.isnan(tally.sum(x, ctx=ctx)) and math.isnan(tally.min(x, ctx=ctx))
    assert tally.argmin(x, ctx=ctx) == 1 == np.argmin(x) and tally.argmax(x, ctx=ctx) == 1
    assert tally.nansum(x, ctx=ctx) == 2.0 == np.nansum(x)
    assert tally.nanmin(x, ctx=ctx) == -2.0 and tally.nanmax(x, ctx=ctx) == 3.0
    assert tally.nanargmin(x, ctx=ctx) == 2 and tally.nanargmax(x, ctx=ctx) == 3
    assert tally.nanmean(x, ctx=ctx) == 2.0 / 3 and tally.nancount(x, ctx=ctx) == 3
    assert tally.nanvar(x, ctx=ctx) == pytest.approx(np.nanvar(x))
    assert tally.count(x, omit_nan=True, ctx=ctx) == 3
    assert tally.nanprod(x, ctx=ctx) == -6.0
    allnan = np.array([nan, nan])
    assert tally.nansum(allnan, ctx=ctx) == 0.0
    with pytest.raises(ValueError, match="empty"):
        tally.nanmin(allnan, ctx=ctx)
    with pytest.raises(ValueError):
        tally.nanargmax(allnan, ctx=ctx)
    assert math.isnan(tally.sum(np.array([inf, -inf]), ctx=ctx))
    assert tally.sum(np.array([inf, 1.0]), ctx=ctx) == inf
    assert tally.sum(np.array([1.7e308, 1.7e308]), ctx=ctx) == inf
    assert tally.sum(np.array([1.7e308, 1.7e308, -1.7e308]), ctx=ctx) == 1.7e308
    z = tally.sum(np.array([-0.0, -0.0]), ctx=ctx)
    assert z == 0 and math.copysign(1, z) == -1
    assert math.copysign(1, tally.sum(np.array([], dtype=np.float64), ctx=ctx)) == 1
    assert math.copysign(1, tally.min(np.array([0.0, -0.0]), ctx=ctx)) == -1
    assert math.copysign(1, tally.max(np.array([-0.0, 0.0]), ctx=ctx)) == 1
    # -0.0 < +0.0: the first least element of [+0.0, -0.0] is the second (NumPy: the first)
    assert tally.argmin(np.array([0.0, -0.0]), ctx=ctx) == 1
    assert tally.argmax(np.array([-0.0, 0.0]), ctx=ctx) == 1


def test_stubs_cover_the_module():
    import ast
    import os
    stub = os.path.join(os.path.dirname(tally.__file__), "__init__.pyi")
    tree = ast.parse(open(stub).read())
    names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    public = {n for n in dir(tally._tally) if not n.startswith("__")}
    assert public - names == set()
    assert set(tally.__all__) <= names
    for n in tally.__all__:
        assert getattr(tally, n).__doc__, n


def test_var_ddof_and_domain(ctx):
    x = np.array([1.0, 2.0, 4.0])
    # 14/9 rounded once: 1.5555555555555556 (NumPy's rounding steps give ...554)
    assert tally.var(x, ctx=ctx) == float(14 / 9) == exact_var(x, 0)
    assert tally.var(x, ctx=ctx) == pytest.approx(np.var(x), rel=1e-15)
    assert tally.var(x, ddof=1, ctx=ctx) == exact_var(x, 1) == 7 / 3
    assert tally.std(x, ddof=1, ctx=ctx) == math.sqrt(7 / 3)
    with pytest.raises(ValueError):
        tally.var(x, ddof=3, ctx=ctx)  # NumPy: warns, returns inf
    with pytest.raises(ValueError, match="ddof"):
        tally.var(x, ddof=-1, ctx=ctx)
    # a tiny variance on a huge mean: exact squares keep every digit
    y = np.array([1e9 + 1, 1e9 + 2, 1e9 + 3] * 1000)
    assert tally.var(y, ctx=ctx) == exact_var(y, 0)


def test_bool_arrays(ctx):
    b = np.array([True, False, True, True])
    assert tally.sum(b, ctx=ctx) == 3 and tally.min(b, ctx=ctx) is False
    assert tally.max(b, ctx=ctx) is True and tally.argmin(b, ctx=ctx) == 1
    assert tally.bitwise_and(b, ctx=ctx) == 0 and tally.bitwise_or(b, ctx=ctx) == 1
    m = np.array([[True, False], [True, True]])
    r = tally.sum(m, axis=0, ctx=ctx)
    assert r.dtype == np.int64 and r.tolist() == [2, 1]
    assert tally.min(m, axis=1, ctx=ctx).dtype == np.bool_


def test_reduce_fused(ctx, rng):
    x = random_array(rng, np.float32, 100001)
    r = tally.reduce(x, "sum,min,max,argmax,mean,var,std,count", ctx=ctx)
    assert list(r) == ["sum", "min", "max", "argmax", "mean", "var", "std", "count"]
    assert r["sum"] == exact_sum(x) and r["min"] == x.min() and r["max"] == x.max()
    assert r["argmax"] == np.argmax(x) and r["count"] == x.size
    assert r["var"] == tally.var(x, ctx=ctx) and r["std"] == math.sqrt(r["var"])
    i = np.arange(10, dtype=np.int16)
    assert tally.reduce(i, ["and", "or", "xor", "prod"], ctx=ctx) == {
        "and": 0, "or": 15, "xor": 1, "prod": 0}
    r = tally.reduce(np.array([1.0, np.nan, 3.0]), "sum,min", omit_nan=True, ddof=0, ctx=ctx)
    assert r == {"sum": 4.0, "min": 1.0}
    with pytest.raises(ValueError, match="unknown op"):
        tally.reduce(x, "sum,median")
    with pytest.raises(TypeError, match="bitwise"):
        tally.reduce(x, "sum,xor")
    with pytest.raises(ValueError, match="empty"):
        tally.reduce(x[:0], "sum,min")


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_axis_against_rows(dtype, ctx, rng):
    for shape in [(3, 5), (1000, 7), (7, 1000), (1, 1), (0, 4), (4, 0), (2, 3, 4), (5, 70000)]:
        n = int(np.prod(shape))
        x = random_array(rng, dtype, n).reshape(shape)
        for axis in range(-len(shape), len(shape)):
            moved = np.moveaxis(x, axis, -1)
            rows = moved.reshape(int(np.prod(moved.shape[:-1])), shape[axis])
            outshape = moved.shape[:-1]
            got = tally.sum(x, axis=axis, ctx=ctx)
            assert got.shape == outshape
            assert got.dtype == np.sum(x.astype(np.float64) if x.dtype.kind == "f" else x,
                                       axis=axis).dtype
            # exact row sums (no NaN or inf here: math.fsum and Python ints suffice)
            if x.dtype.kind == "f":
                want = [math.fsum(r) for r in rows.astype(np.float64).tolist()]
            else:
                want = [sum(r) for r in rows.tolist()]
            assert [float(v) if x.dtype.kind == "f" else int(v) for v in got.ravel()] == want
            if shape[axis] == 0:
                if rows.shape[0] > 0:
                    with pytest.raises(ValueError, match="segment 0"):
                        tally.min(x, axis=axis, ctx=ctx)
                continue
            mn = tally.min(x, axis=axis, ctx=ctx)
            assert mn.dtype == x.dtype and np.array_equal(mn, np.min(x, axis=axis))
            am = tally.argmax(x, axis=axis, ctx=ctx)
            assert am.dtype == np.int64 and np.array_equal(am, np.argmax(x, axis=axis))
            if x.dtype.kind == "f" and x.size <= 8000 and shape[axis] > 1 and axis in (-1, 1):
                v = tally.var(x, axis=axis, ddof=1, ctx=ctx)
                assert v.ravel().tolist() == [exact_var(r, 1) for r in rows]
            r = tally.reduce(x, "mean,count", axis=axis, ctx=ctx)
            assert np.array_equal(r["count"], np.full(outshape, shape[axis]))
            assert r["mean"].ravel().tolist() == [float(w) / shape[axis] for w in want]


def test_axis_errors_and_1d(ctx):
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError, match="out of bounds"):
        tally.sum(x, axis=2)
    with pytest.raises(TypeError, match="axis"):
        tally.sum(x, axis=(0, 1))
    assert tally.sum(np.arange(5), axis=0) == 10 and tally.sum(np.arange(5), axis=-1) == 10
    with pytest.raises(OverflowError, match="segment 1"):
        tally.sum(np.array([[1, 2], [2 ** 63 - 1, 1]], dtype=np.int64), axis=1)
    with pytest.raises(ValueError, match="out of bounds"):
        tally.sum(np.float64(3.0), axis=0)
    assert tally.sum(np.float64(3.0)) == 3.0  # 0-d


def test_type_and_argument_errors():
    with pytest.raises(TypeError, match="float16|not supported"):
        tally.sum(np.ones(3, dtype=np.float16))
    with pytest.raises(TypeError, match="not supported"):
        tally.sum(np.ones(3, dtype=np.complex128))
    with pytest.raises(TypeError, match="expected an array"):
        tally.sum([1, 2, 3])
    with pytest.raises(TypeError, match="bitwise"):
        tally.bitwise_xor(np.ones(3))
    with pytest.raises(TypeError, match="unexpected keyword"):
        tally.sum(np.ones(3), dtype=np.float64)
    with pytest.raises(TypeError, match="multiple values"):
        tally.sum(np.ones(3), None, axis=0)
    with pytest.raises(TypeError, match="missing required"):
        tally.sum()
    with pytest.raises(TypeError, match="tally.Context"):
        tally.sum(np.ones(3), ctx="cpu")
    assert tally.sum(a=np.ones(3)) == 3.0
