"""What MXNet 1.9.1's example programs rely on: mx.test_utils data helpers, contrib.io.DataLoaderIter,
iterators that ignore unknown keywords, ImageRecordIter(path_imgidx=''), requests, the profiler's trace
at exit and the checkpoint log line."""

from __future__ import annotations

import gzip
import json
import os
import struct
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx
from mxasync.test_utils import datasets as tu_datasets

ROOT = Path(__file__).resolve().parents[1]


def _write_idx(path: Path, array: np.ndarray) -> None:
    header = struct.pack(">I", 0x800 + array.ndim) + struct.pack(">" + "I" * array.ndim, *array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture
def mnist_home(tmp_path, monkeypatch):
    """Six fake MNIST images per split under $MXNET_HOME/datasets/mnist (Gluon's place); cwd is empty."""
    home, work = tmp_path / "home", tmp_path / "work"
    folder = home / "datasets" / "mnist"
    folder.mkdir(parents=True)
    work.mkdir()
    rs = np.random.RandomState(0)
    for prefix in ("train", "t10k"):
        _write_idx(folder / f"{prefix}-images-idx3-ubyte.gz", rs.randint(0, 256, (6, 28, 28)))
        _write_idx(folder / f"{prefix}-labels-idx1-ubyte.gz", np.arange(6) % 10)
    monkeypatch.setenv("MXNET_HOME", str(home))
    monkeypatch.chdir(work)
    return folder


def test_get_mnist_reads_mxnet_home(mnist_home):
    data = mx.test_utils.get_mnist()
    assert data["train_data"].shape == (6, 1, 28, 28) and data["train_data"].dtype == np.float32
    assert data["train_data"].max() <= 1.0 and data["test_label"].tolist() == [0, 1, 2, 3, 4, 5]
    train, val = mx.test_utils.get_mnist_iterator(batch_size=3, input_shape=(784,))
    batch = next(iter(train))
    assert batch.data[0].shape == (3, 784) and len(list(val)) == 2


def test_data_helpers_fail_clearly_offline(tmp_path, monkeypatch):
    def offline(url, dirname):
        raise OSError("Name or service not known")

    monkeypatch.setattr(tu_datasets, "_download", offline)
    monkeypatch.setenv("MXNET_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    for fn, what in ((mx.test_utils.get_mnist, "train-images-idx3-ubyte"),
                     (lambda: mx.test_utils.get_mnist_iterator(8, (1, 28, 28)), "t10k-labels-idx1-ubyte"),
                     (mx.test_utils.get_cifar10, "train.rec")):
        with pytest.raises(mx.test_utils.DataUnavailableError,
                           match=f"{what}.*not found in '(\\.|data)('|/cifar').*Name or service"):
            fn()
    with pytest.raises(mx.test_utils.DataUnavailableError, match="mnist.pkl.gz not found in 'data'"):
        mx.test_utils.get_mnist_pkl()


def test_get_mnist_reads_the_working_directory_first(mnist_home, monkeypatch):
    """MXNet's get_mnist reads (and downloads into) the working directory: files there come first."""
    def offline(url, dirname):
        raise OSError("offline")

    monkeypatch.setattr(tu_datasets, "_download", offline)
    for prefix in ("train", "t10k"):
        _write_idx(Path(f"{prefix}-images-idx3-ubyte.gz"), np.full((2, 28, 28), 255))
        _write_idx(Path(f"{prefix}-labels-idx1-ubyte.gz"), np.array([7, 8]))
    data = mx.test_utils.get_mnist()
    assert data["train_label"].tolist() == [7, 8] and data["test_data"].shape == (2, 1, 28, 28)
    assert data["train_data"].min() == 1.0
    Path("data").mkdir()
    Path("data", "mnist.pkl.gz").write_bytes(b"x")
    assert mx.test_utils.get_mnist_pkl() == os.path.join("data", "mnist.pkl.gz")


def test_get_cifar10_finds_the_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "cifar").mkdir(parents=True)
    for name in ("train.rec", "test.rec", "train.lst", "test.lst"):
        (tmp_path / "data" / "cifar" / name).write_bytes(b"")
    assert mx.test_utils.get_cifar10() == os.path.join("data", "cifar")


def test_dataloader_iter_feeds_a_module():
    x = np.random.RandomState(0).rand(10, 4).astype("float32")
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.arange(10) % 2), batch_size=4)
    it = mx.contrib.io.DataLoaderIter(loader)
    assert it.provide_data[0].shape == (4, 4) and it.provide_label[0].shape == (4,)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 2]
    np.testing.assert_array_equal(batches[2].data[0].asnumpy()[:2], x[8:])
    it.reset()
    assert len(list(it)) == 3


def test_iterators_ignore_what_mxnet_ignores_with_one_warning(mnist_home):
    folder = mx.test_utils.get_mnist_ubyte()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        it = mx.io.MNISTIter(image=os.path.join(folder, "train-images-idx3-ubyte"),
                             label=os.path.join(folder, "train-labels-idx1-ubyte"), batch_size=2,
                             input_shape=(1, 28, 28), verbose=False)
    mine = [w for w in caught if "MNISTIter" in str(w.message)]
    assert len(mine) == 1 and "input_shape=(1, 28, 28)" in str(mine[0].message) and "verbose" in str(mine[0].message)
    assert next(iter(it)).data[0].shape == (2, 1, 28, 28)


def test_image_record_iter_takes_an_empty_path_imgidx(tmp_path):
    from mxasync.recordio import IRHeader, MXRecordIO, pack_img

    path = tmp_path / "img.rec"
    with MXRecordIO(str(path), "w") as w:
        for i in range(4):
            w.write(pack_img(IRHeader(0, float(i), i, 0), np.full((6, 6, 3), 10 * i, np.uint8), img_fmt=".png"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        it = mx.io.ImageRecordIter(path_imgrec=str(path), path_imgidx="", data_shape=(3, 6, 6), batch_size=2,
                                   not_an_option=1)
    assert [b.label[0].asnumpy().tolist() for b in it] == [[0.0, 1.0], [2.0, 3.0]]
    assert any("not_an_option=1" in str(w.message) for w in caught)


@pytest.mark.parametrize("package", ["requests", "graphviz"])
def test_mxnets_dependencies_are_ours(package):
    """MXNet 1.9.1's wheel depends on requests and graphviz (mx.viz.plot_network works after a plain install)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert any(d.split(">")[0].split("=")[0].strip() == package for d in deps)


def test_plot_network_draws_with_the_installed_graphviz():
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc")
    dot = mx.viz.plot_network(net, shape={"data": (2, 3)})
    assert "fc" in dot.source and "FullyConnected" in dot.source


def test_profiler_trace_written_at_exit_as_mxnet_does(tmp_path):
    code = ("import mxasync as mx; mx.profiler.set_config(filename='{f}'); {run}"
            "(mx.nd.ones((3,)) * 2).wait_to_read()")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name, run in (("started.json", "mx.profiler.set_state('run'); "), ("never.json", "")):
        res = subprocess.run([sys.executable, "-c", code.format(f=name, run=run)], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr[-2000:]
    trace = json.loads((tmp_path / "started.json").read_text())
    assert any(e.get("ph") == "X" for e in trace["traceEvents"])
    assert not (tmp_path / "never.json").exists()  # never started: no trace, as in MXNet
