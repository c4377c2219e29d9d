"""MXNet's test_exc_handling cases on NDArrays, and nd.save/load against MXNet's files."""

from __future__ import annotations

import json
import os
import pathlib
import threading
import time

import numpy as np
import pytest

import mxasync as mx
from mxasync.ndarray._save_load import dumps
from mxasync.ndarray._serialization import dumps_arrays

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "mxnet"


def _imperative(exec_numpy: bool):
    a = mx.nd.random.normal(0, 1, (2, 2))
    b = mx.nd.random.normal(0, -1, (2, 2))  # fails when it runs, not here
    c = mx.nd.dot(a, b)
    if exec_numpy:
        c.asnumpy()


def test_exc_imperative():
    _imperative(exec_numpy=False)  # nothing raised until a sync point
    with pytest.raises(mx.MXNetError, match="scale"):
        _imperative(exec_numpy=True)
    mx.nd.waitall()


def test_exc_surfaces_once_and_second_waitall_is_clean():
    b = mx.nd.random.normal(0, -1, (2, 2))
    c = b + 1
    d = c * 2  # a chain of tainted arrays
    with pytest.raises(mx.MXNetError):
        mx.nd.waitall()
    mx.nd.waitall()
    d.asnumpy()  # the same failure does not raise again
    c.wait_to_read()


def test_exc_post_fail_new_work_runs():
    b = mx.nd.random.normal(0, -1, (2, 2))
    with pytest.raises(mx.MXNetError):
        b.asnumpy()
    x = mx.nd.ones((2, 2)) * 3
    assert x.asnumpy().sum() == 12


def test_exc_mutable_var_fail():
    a = mx.nd.ones((2, 2))
    mx.nd.random.normal(0, -1, (2, 2), out=a)  # the failing op writes a
    b = a + 1  # reads a tainted input
    with pytest.raises(mx.MXNetError):
        b.asnumpy()
    mx.nd.waitall()


def test_independent_arrays_are_not_tainted():
    ok = mx.nd.ones((3,)) + 1
    bad = mx.nd.random.normal(0, -1, (2,))
    np.testing.assert_array_equal(ok.asnumpy(), [2, 2, 2])
    with pytest.raises(mx.MXNetError):
        bad.asnumpy()


def test_shape_errors_are_eager():
    with pytest.raises(mx.MXNetError, match="shape"):
        mx.nd.elemwise_add(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)))
    with pytest.raises(mx.MXNetError, match="FullyConnected"):
        mx.nd.FullyConnected(mx.nd.ones((2, 5)), mx.nd.ones((3, 7)), mx.nd.ones((3,)), num_hidden=3)


# -- files --------------------------------------------------------------------
def _manifest():
    return json.loads((FIXTURES / "arrays-manifest.json").read_text())


def _expected():
    return np.load(FIXTURES / "arrays-expected.npz")


@pytest.mark.parametrize("name", ["list-dtypes.nd", "dict-params.params", "legacy-v1.nd", "legacy-v0.nd",
                                  "pinned.nd", "gpu-context.params"])
def test_load_files_written_by_mxnet(name):
    loaded = mx.nd.load(str(FIXTURES / name))
    expected = _expected()
    items = list(loaded.values()) if isinstance(loaded, dict) else loaded
    keys = sorted((k for k in expected.files if k.startswith(name + "#")), key=lambda k: int(k.split("#")[1]))
    assert len(items) == len(keys)
    for arr, key in zip(items, keys, strict=True):
        want = expected[key]
        got = arr.asnumpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.reshape(want.shape) if want.ndim == 0 else got, want)
        assert arr.context.device_type == "cpu"  # gpu and pinned arrays land on the CPU here


def test_save_matches_mxnet_bytes_and_round_trips(tmp_path):
    src = FIXTURES / "dict-params.params"
    loaded = mx.nd.load(str(src))
    out = tmp_path / "again.params"
    mx.nd.save(str(out), loaded)
    assert out.read_bytes() == src.read_bytes()
    again = mx.nd.load_frombuffer(out.read_bytes())
    assert list(again) == list(loaded)


def test_list_and_dict_round_trip(tmp_path):
    arrays = [mx.nd.array(np.arange(6).reshape(2, 3), dtype=d) for d in ("float32", "float16", "int64", "uint8")]
    path = str(tmp_path / "list.nd")
    mx.nd.save(path, arrays)
    back = mx.nd.load(path)
    assert [b.dtype for b in back] == [a.dtype for a in arrays]
    mx.nd.save(path, {"a": arrays[0], "b": arrays[2]})
    assert sorted(mx.nd.load(path)) == ["a", "b"]
    mx.nd.save(path, arrays[0])
    assert len(mx.nd.load(path)) == 1


def test_runs_of_small_arrays_round_trip_as_separate_arrays(tmp_path):
    # nd.save writes, and nd.load reads, runs of small same-shape arrays as one block: the runs here
    # break on a shape, a dtype, a big array and a context, and every loaded array stays its own
    rng = np.random.default_rng(0)
    arrays = [mx.nd.array(rng.standard_normal(4)) for _ in range(700)]
    arrays[100] = mx.nd.array(rng.standard_normal(5))
    arrays[200] = mx.nd.array(rng.integers(0, 9, 4), dtype="int64")
    arrays[300] = mx.nd.array(rng.standard_normal((200, 100)))
    arrays[400] = mx.nd.array(rng.standard_normal(4), ctx=mx.cpu(1))
    arrays[500] = mx.nd.zeros((0, 4))
    path = str(tmp_path / "runs.params")
    mx.nd.save(path, {f"p{i}": a for i, a in enumerate(arrays)})
    back = mx.nd.load(path)
    for i, a in enumerate(arrays):
        got = back[f"p{i}"]
        assert (got.shape, got.dtype, got.context) == (a.shape, a.dtype, a.context)
        np.testing.assert_array_equal(got.asnumpy(), a.asnumpy())
    back["p1"] += 1
    np.testing.assert_array_equal(back["p0"].asnumpy(), arrays[0].asnumpy())  # its neighbours are untouched
    np.testing.assert_array_equal(back["p2"].asnumpy(), arrays[2].asnumpy())
    np.testing.assert_array_equal(back["p1"].asnumpy(), arrays[1].asnumpy() + 1)
    with open(path, "rb") as f:  # the stream reader ends a run where its window ends, too
        assert len(mx.nd.load(path)) == len(mx.nd.load_frombuffer(f.read())) == 700


def test_save_waits_for_writes_and_raises_their_error(tmp_path):
    path = str(tmp_path / "w.params")
    done = mx.nd.ones((3,))
    done += 1  # a write still pending, maybe: the file must hold its result
    mx.nd.save(path, [done])
    np.testing.assert_array_equal(mx.nd.load(path)[0].asnumpy(), [2, 2, 2])
    failed = mx.nd.random.normal(0, -1, (2, 2))  # its writer fails
    with pytest.raises(mx.base.MXNetError):
        mx.nd.save(path, {"a": failed})


def _held_write(x, value, go: threading.Event) -> threading.Thread:
    """Push an op that writes ``value`` into ``x`` once ``go`` is set (from a thread of its own: the
    naive engine runs it in there)."""

    def write(rctx):
        go.wait(60)
        x._data[...] = value

    t = threading.Thread(target=mx.engine.get().push_sync, args=(write, mx.cpu(), [], [x._chunk.var]),
                         kwargs={"name": "held_write", "inline": False})
    t.start()
    return t


def test_save_of_many_arrays_waits_for_each_pending_write(tmp_path):
    """Among many arrays with nothing pending, the few with a pending write are waited for: the writes
    are held until the save queued its wait, so a save that skipped one would write the old values."""
    path = str(tmp_path / "w.params")
    arrays = {f"a{i}": mx.nd.array([float(i)] * 3) for i in range(2000)}
    go = threading.Event()
    held = [_held_write(arrays[f"a{i}"], -1.0, go) for i in (3, 1000, 1999)]
    first = arrays["a3"]._chunk.var

    def release_once_waited():
        while not first._queue and not go.is_set():  # the save's wait for a3 queued behind the held write
            time.sleep(0.001)
        go.set()

    releaser = threading.Thread(target=release_once_waited)
    releaser.start()
    try:
        mx.nd.save(path, arrays)
    finally:
        go.set()
        releaser.join(60)
        for t in held:
            t.join(60)
    back = mx.nd.load(path)
    for i in range(2000):
        want = -1.0 if i in (3, 1000, 1999) else float(i)
        assert back[f"a{i}"].asnumpy().tolist() == [want] * 3, i


def test_save_refuses_an_array_a_failed_op_left_unwritten(tmp_path):
    """The error names the array, the file is left as it was, and a second save refuses it too (after
    the first wait raised the op's error, MXNet would write whatever the memory holds)."""
    path = tmp_path / "w.params"
    arrays = {f"a{i}": mx.nd.array([float(i)]) for i in range(1000)}
    mx.nd.save(str(path), arrays)
    before = path.read_bytes()
    arrays["a500"] = mx.nd.random.normal(0, -1, (1,))  # its writer fails
    for _ in range(2):
        with pytest.raises(mx.MXNetError, match=r"data\['a500'\] holds no data.*scale"):
            mx.nd.save(str(path), arrays)
    with pytest.raises(mx.MXNetError, match=r"data\[2\] holds no data"):
        mx.nd.save(str(path), [arrays["a0"], arrays["a1"], arrays["a500"]])
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["w.params"]


def test_save_of_interleaved_arrays_writes_their_host_values(tmp_path):
    """Shapes, dtypes, contexts, views and sizes interleaved array by array: the same bytes as the
    numpy-level writer given the arrays' values one by one."""
    rng = np.random.default_rng(0)
    base = mx.nd.array(rng.standard_normal((6, 6)))
    arrays = []
    for i in range(300):
        shape = [(8, 4), (8,), (2, 3, 1)][i % 3]
        dtype = ["float32", "float16", "int64", "bool", "bfloat16"][i % 5]
        arrays.append(mx.nd.array(rng.standard_normal(shape), dtype=dtype, ctx=mx.cpu(i % 2)))
    arrays[7], arrays[8], arrays[9] = base[1:3], mx.nd.zeros((0, 4)), mx.nd.ones((40000,))  # a view; 160 kB
    data = {f"p{i}\u00e9": a for i, a in enumerate(arrays)}
    want = dumps_arrays({k: (a.asnumpy(), (1, a.context.device_id)) for k, a in data.items()})
    assert dumps(data) == want
    mx.nd.save(str(tmp_path / "x.params"), data)
    assert (tmp_path / "x.params").read_bytes() == want


def test_truncated_and_corrupt_buffers_raise(tmp_path):
    blob = (FIXTURES / "list-dtypes.nd").read_bytes()
    for cut in (3, 16, 40, len(blob) // 2, len(blob) - 1):
        with pytest.raises(mx.MXNetError):
            mx.nd.load_frombuffer(blob[:cut])
    with pytest.raises(mx.MXNetError, match="magic"):
        mx.nd.load_frombuffer(b"\x00" * 64)
    assert all(a.stype == "row_sparse" for a in mx.nd.load(str(FIXTURES / "row-sparse.nd")))


def test_failed_save_leaves_no_partial_file(tmp_path):
    path = tmp_path / "w.params"
    mx.nd.save(str(path), {"w": mx.nd.ones((2,))})
    before = path.read_bytes()
    with pytest.raises(mx.MXNetError):
        mx.nd.save(str(path), {"w": "not an array"})
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["w.params"]


def test_random_seed_repeats_and_shuffle_permutes():
    mx.random.seed(5)
    a = mx.nd.random.uniform(-1, 1, (50,)).asnumpy()
    n = mx.nd.random.normal(2, 3, (1000,)).asnumpy()
    r = mx.nd.random.randint(0, 7, (100,)).asnumpy()
    mx.random.seed(5)
    np.testing.assert_array_equal(a, mx.nd.random.uniform(-1, 1, (50,)).asnumpy())
    np.testing.assert_array_equal(n, mx.nd.random.normal(2, 3, (1000,)).asnumpy())
    np.testing.assert_array_equal(r, mx.nd.random.randint(0, 7, (100,)).asnumpy())
    assert a.min() >= -1 and a.max() < 1 and abs(n.mean() - 2) < 0.3 and r.dtype == np.int32
    x = mx.nd.arange(20).reshape((10, 2))
    s = mx.nd.random.shuffle(x).asnumpy()
    assert sorted(map(tuple, s)) == sorted(map(tuple, x.asnumpy())) and not np.array_equal(s, x.asnumpy())
