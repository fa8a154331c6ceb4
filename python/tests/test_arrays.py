"""Arrays of every kind: strides, layouts, byte orders, buffer providers, DLPack; contexts and
threads."""
import array
import mmap
import threading

import numpy as np
import pytest

import tally
from conftest import exact_sum, random_array


def test_strided_and_reordered_layouts(ctx, rng):
    base = random_array(rng, np.float64, 6 * 1000).reshape(6, 1000)
    views = [base[:, ::3], base[::-1], base.T, np.asfortranarray(base), base[2:5, 100:900:7],
             base[:, ::-2], base.reshape(6, 10, 100).transpose(2, 0, 1)]
    for v in views:
        c = np.ascontiguousarray(v)
        assert tally.sum(v, ctx=ctx) == exact_sum(c)
        assert tally.argmin(v, ctx=ctx) == np.argmin(v)  # C order of the view, as NumPy
        for axis in range(v.ndim):
            np.testing.assert_array_equal(tally.max(v, axis=axis, ctx=ctx), np.max(c, axis=axis))
        np.testing.assert_array_equal(tally.cummax(v, ctx=ctx), np.maximum.accumulate(c.ravel()))
    z = np.broadcast_to(np.float64(2.5), (1000, 3))  # stride 0
    assert tally.sum(z, ctx=ctx) == 7500.0
    info = tally._last_call()
    assert info["copied"] and info["device"] == -1
    x = np.arange(100.0)
    tally.sum(x, ctx=ctx)
    assert tally._last_call() == {"pointer": x.ctypes.data, "device": -1, "copied": False}


def test_byte_orders(ctx):
    for dt in (">i4", ">f8", ">u2", "<i8", "=f4"):
        x = np.arange(-50, 1000).astype(dt)
        assert tally.sum(x, ctx=ctx) == sum(range(-50, 1000)) or dt.endswith("u2")
        assert tally.max(x, ctx=ctx) == x.max()
        np.testing.assert_array_equal(tally.cumsum(x, ctx=ctx), np.cumsum(x.astype(x.dtype.newbyteorder("="))))


def test_buffer_providers(ctx, tmp_path):
    a = array.array("i", range(1000))
    assert tally.sum(a, ctx=ctx) == sum(range(1000))
    assert tally.sum(memoryview(a)[::2], ctx=ctx) == sum(range(0, 1000, 2))
    d = array.array("d", [0.1] * 10)
    assert tally.sum(d, ctx=ctx) == exact_sum(np.array(d))
    b = bytes(range(256))
    assert tally.sum(b, ctx=ctx) == sum(range(256))  # 'B': uint8
    assert tally.sum(memoryview(b).cast("b"), ctx=ctx) == sum(v - 256 if v > 127 else v for v in range(256))
    path = tmp_path / "x.bin"
    np.arange(1 << 16, dtype=np.int64).tofile(path)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert tally.sum(memoryview(m).cast("q"), ctx=ctx) == (1 << 16) * ((1 << 16) - 1) // 2
    mm = np.memmap(path, dtype=np.int64, mode="r")
    assert tally.max(mm, ctx=ctx) == (1 << 16) - 1
    # cumsum of a non-NumPy buffer: the result is a NumPy array
    r = tally.cumsum(array.array("h", [1, 2, 3]), ctx=ctx)
    assert isinstance(r, np.ndarray) and r.tolist() == [1, 3, 6] and r.dtype == np.int64


class DLPackOnly:
    """Exposes an array through DLPack alone (as a PyTorch CPU tensor or a JAX array does)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@pytest.mark.skipif(not hasattr(np.ndarray, "__dlpack__"), reason="NumPy without DLPack")
def test_dlpack(ctx, rng):
    x = random_array(rng, np.float32, 10001)
    assert tally.sum(DLPackOnly(x), ctx=ctx) == exact_sum(x)
    assert tally._last_call()["pointer"] == x.ctypes.data and not tally._last_call()["copied"]
    m = np.arange(24, dtype=np.int16).reshape(4, 6)[:, 1::2]
    np.testing.assert_array_equal(tally.sum(DLPackOnly(m), axis=0, ctx=ctx), m.sum(axis=0))
    np.testing.assert_array_equal(tally.cumsum(DLPackOnly(m), axis=1, ctx=ctx), np.cumsum(m, axis=1))


class FakeCudaArray:
    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (1 << 40, False),
                                "version": 3, "strides": None, "stream": None}


def test_gpu_array_needs_cuda_context():
    with pytest.raises((ValueError, RuntimeError), match="CUDA"):
        tally.sum(FakeCudaArray(), ctx=tally.Context(backend="cpu"))
    if not tally.info()["backends"]["cuda"]:
        with pytest.raises(RuntimeError, match="cuda"):
            tally.sum(FakeCudaArray())  # the default CUDA context cannot start here


def test_contexts():
    c = tally.Context(backend="cpu", threads=2, isa="scalar")
    assert (c.backend, c.threads, c.isa, c.device, c.description) == ("cpu", 2, "scalar", None, "")
    assert "threads=2" in repr(c)
    x = np.arange(1000, dtype=np.float32)
    with c:
        assert tally.sum(x) == 499500.0
        with tally.Context(backend="cpu", threads=1) as d:
            assert d.threads == 1 and tally.sum(x) == 499500.0
    with pytest.raises(ValueError, match="backend"):
        tally.Context(backend="tpu")
    with pytest.raises(ValueError, match="threads"):
        tally.Context(backend="cpu", threads=-1)
    if not tally.info()["backends"]["cuda"]:
        with pytest.raises(RuntimeError, match="cuda backend"):
            tally.Context(backend="cuda")
    if not tally.info()["backends"]["vulkan"]:
        with pytest.raises(RuntimeError, match="vulkan"):
            tally.Context(backend="vulkan")
    i = tally.info()
    assert i["version"] == tally.__version__ and i["backends"]["cpu"] is True
    assert i["cpu_isa"] in ("scalar", "avx2", "avx512") and i["cpu_threads"] >= 1


def test_threads_share_a_context_and_have_their_own(rng):
    """Several Python threads: on one shared Context (calls take turns) and on their own
    defaults; every result exact."""
    shared = tally.Context(backend="cpu", threads=2)
    arrays = [random_array(rng, np.float64, 200000 + k) for k in range(4)]
    want = [exact_sum(a) for a in arrays]
    errors = []

    def work(k):
        try:
            for _ in range(5):
                assert tally.sum(arrays[k], ctx=shared) == want[k]
                assert tally.sum(arrays[k]) == want[k]
                assert tally.cumsum(arrays[k])[-1] == tally.cumsum(arrays[k], ctx=shared)[-1]
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_fork_children_get_new_contexts():
    """A child of os.fork() (multiprocessing's default on Linux) has none of the parent's worker
    threads: its calls must run on new contexts, not hang on the old ones."""
    import multiprocessing as mp
    import os
    x = np.arange(1 << 20, dtype=np.float64)
    shared = tally.Context(backend="cpu", threads=2)
    assert tally.sum(x) == tally.sum(x, ctx=shared)  # the parent's contexts have threads now
    pid = os.fork()
    if pid == 0:  # the child: exit code 0 when all is well
        try:
            ok = tally.sum(x) == (1 << 20) * ((1 << 20) - 1) / 2
            try:
                tally.sum(x, ctx=shared)
                ok = False
            except RuntimeError as e:
                ok = ok and "os.fork()" in str(e)
            ok = ok and tally.sum(x, ctx=tally.Context(backend="cpu", threads=2)) == tally.sum(x)
        finally:
            os._exit(0 if ok else 1)
    for _ in range(600):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        import time
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        pytest.fail("the forked child hung")
    assert os.waitstatus_to_exitcode(status) == 0
