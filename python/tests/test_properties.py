"""Property tests (hypothesis, when installed): sums of any finite doubles are correctly rounded
(math.fsum), integer sums are exact or raise OverflowError exactly when the true sum leaves the
result type, on every thread count."""
import math
from fractions import Fraction

import numpy as np
import pytest

import tally

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

# no example database: the tests write nothing into the source tree
settings.register_profile("tally", database=None)
settings.load_profile("tally")
CTXS = [tally.Context(backend="cpu", threads=t) for t in (1, 2, 3)]
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=300, deadline=None)
@given(st.lists(finite, max_size=300), st.integers(0, 2))
def test_float_sum_is_fsum(values, k):
    exact = sum((Fraction(v) for v in values), Fraction(0))
    try:
        want = float(exact)  # int / int division: correctly rounded
    except OverflowError:  # the exact sum is beyond float64: tally gives +-inf
        want = None
    got = tally.sum(np.array(values, dtype=np.float64), ctx=CTXS[k])
    if want is None:
        assert math.isinf(got)
    elif want == 0:
        assert got == 0
    else:
        assert got == want
    assert tally.mean(np.array(values or [0.0]), ctx=CTXS[k]) == (
        got / len(values) if values else 0.0) or want is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-2 ** 63, 2 ** 63 - 1), max_size=200), st.integers(0, 2))
def test_int64_sum_exact_or_overflow(values, k):
    x = np.array(values, dtype=np.int64)
    s = sum(values)
    if -2 ** 63 <= s < 2 ** 63:
        assert tally.sum(x, ctx=CTXS[k]) == s
    else:
        with pytest.raises(OverflowError):
            tally.sum(x, ctx=CTXS[k])
    prefix, fits = 0, True
    for v in values:
        prefix += v
        fits = fits and -2 ** 63 <= prefix < 2 ** 63
    if fits:
        assert tally.cumsum(x, ctx=CTXS[k]).tolist() == list(np.cumsum(x).tolist())
    else:
        with pytest.raises(OverflowError):
            tally.cumsum(x, ctx=CTXS[k])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(width=32), min_size=1, max_size=200))
def test_float32_min_max_argmin_like_numpy(values):
    # -0.0 < +0.0 in tally (IEEE minimum/maximum) while NumPy takes the first zero: zeros here
    # are +0.0 (test_nan_inf_and_signed_zeros covers the signed ones)
    x = np.array([v if v != 0 else 0.0 for v in values], dtype=np.float32)
    assert np.array_equal(np.array([tally.min(x)]), np.array([x.min()]).astype(np.float64), equal_nan=True)
    assert tally.argmax(x) == np.argmax(x) and tally.argmin(x) == np.argmin(x)
