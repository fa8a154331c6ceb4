"""GPU arrays (PyTorch CUDA tensors; CuPy when installed) on the CUDA backend: read in place (the
pointer handed to libtally is the tensor's own, nothing copied), results equal to the CPU's bit
for bit where tally.h promises it. Skipped without torch, a GPU or a CUDA build of tally."""
import math

import numpy as np
import pytest

import tally
from conftest import exact_sum, random_array

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device for torch", allow_module_level=True)
if not tally.info()["backends"]["cuda"]:
    pytest.skip("this tally has no usable CUDA backend", allow_module_level=True)

DEV = torch.device("cuda", 0)


def on_gpu(x):
    return torch.from_numpy(np.ascontiguousarray(x)).to(DEV)


def assert_read_in_place(t):
    info = tally._last_call()
    assert info == {"pointer": t.data_ptr(), "device": t.device.index, "copied": False}, info


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int16])
def test_reductions_in_place_equal_cpu(dtype):
    rng = np.random.default_rng(5)
    for n in (0, 1, 1000, 4097, 1 << 20, (1 << 22) + 3):
        x = random_array(rng, dtype, n)
        t = on_gpu(x)
        got = tally.sum(t)
        assert_read_in_place(t)
        assert got == tally.sum(x) == exact_sum(x) or (math.isnan(got) and math.isnan(exact_sum(x)))
        if n == 0:
            with pytest.raises(ValueError, match="empty"):
                tally.min(t)
            continue
        r = tally.reduce(t, "sum,min,max,argmin,argmax,mean,var,count")
        assert r == tally.reduce(x, "sum,min,max,argmin,argmax,mean,var,count")


def test_axis_and_scans_on_gpu():
    rng = np.random.default_rng(6)
    x = random_array(rng, np.float32, 64 * 1000).reshape(64, 1000)
    t = on_gpu(x)
    np.testing.assert_array_equal(tally.sum(t, axis=1), tally.sum(x, axis=1))
    np.testing.assert_array_equal(tally.argmax(t, axis=-1), np.argmax(x, axis=1))
    with pytest.raises(ValueError, match="contiguous|last axis"):
        tally.sum(t, axis=0)  # would need a copy on the GPU
    with pytest.raises(ValueError, match="contiguous"):
        tally.sum(t[:, ::2])
    v = on_gpu(random_array(rng, np.float32, (1 << 20) + 5))
    c = tally.cumsum(v)
    assert isinstance(c, torch.Tensor) and c.device == v.device and c.dtype == v.dtype
    ref = torch.cumsum(v.double(), 0)
    assert torch.allclose(c.double(), ref, rtol=0, atol=1e-3 * float(ref.abs().max()) + 1e-3)
    m = tally.cummax(v)
    assert torch.equal(m, torch.cummax(v, 0).values)
    out = torch.empty_like(v)
    assert tally.cummin(v, out=out) is out and torch.equal(out, torch.cummin(v, 0).values)
    with pytest.raises(TypeError, match="integer"):
        tally.cumsum(on_gpu(np.arange(10, dtype=np.int32)))


def test_dlpack_only_gpu_array():
    class DLPackOnly:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    t = on_gpu(np.arange(100000, dtype=np.float64))
    assert tally.sum(DLPackOnly(t)) == 100000 * 99999 / 2
    assert tally._last_call()["pointer"] == t.data_ptr()


def test_contexts_and_host_arrays_on_cuda():
    c = tally.Context(backend="cuda", device=0)
    assert c.backend == "cuda" and c.device == 0 and c.description
    x = np.arange(1 << 16, dtype=np.float32)
    assert tally.sum(x, ctx=c) == tally.sum(x)  # host data on a CUDA context: copied by libtally
    t = on_gpu(x)
    with pytest.raises(ValueError, match="CUDA device 0 but the context runs on cpu"):
        tally.sum(t, ctx=tally.Context(backend="cpu"))
    with c:
        assert tally.sum(t) == tally.sum(x)


def test_cupy_arrays():
    cp = pytest.importorskip("cupy")
    x = cp.arange(1 << 20, dtype=cp.float32)
    assert tally.sum(x) == float((1 << 20) * ((1 << 20) - 1) // 2)
    assert tally._last_call()["pointer"] == x.data.ptr
    s = cp.cuda.Stream(non_blocking=True)
    with s:  # __cuda_array_interface__ v3 names this stream: tally runs on it
        y = cp.full(1 << 20, 2, dtype=cp.int32)
        assert tally.sum(y) == 2 << 20
    c = tally.cumsum(cp.ones(1 << 20, dtype=cp.float32))  # every running sum exact in f32
    assert isinstance(c, cp.ndarray) and bool((c == cp.arange(1, (1 << 20) + 1)).all())
