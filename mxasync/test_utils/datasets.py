"""MXNet's data helpers of ``mx.test_utils``: ``get_mnist``, ``get_mnist_ubyte``, ``get_mnist_iterator``, ``get_cifar10``.

MXNet's ``get_mnist`` reads the four ``.gz`` files from the working directory (downloading them there
when missing); the others use ``./data``.  Here the files are looked up first where MXNet's function
looks (the working directory for ``get_mnist``, ``./data`` for the others), then in ``./data`` and under
``$MXNET_HOME/datasets`` (``~/.mxnet``, where Gluon's data sets live), and downloaded from MXNet's mirror
(to where MXNet puts them) only when missing; offline, the error names the files and the folders.
"""

from __future__ import annotations

import bz2
import gzip
import os
import shutil
import struct
import zipfile

import numpy as np

from ..base import MXAsyncError
from ..io import DataIter

__all__ = ["get_mnist", "get_mnist_ubyte", "get_mnist_pkl", "get_mnist_iterator", "get_cifar10", "DataUnavailableError",
           "get_zip_data", "get_bz2_data", "DummyIter"]

_MNIST = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
_MNIST_URL = "http://data.mxnet.io/data/mnist/"
_MNIST_ZIP = "http://data.mxnet.io/mxnet/data/mnist.zip"
_CIFAR = ("train.rec", "test.rec", "train.lst", "test.lst")
_CIFAR_ZIP = "http://data.mxnet.io/mxnet/data/cifar10.zip"


class DataUnavailableError(MXAsyncError, FileNotFoundError):
    """A data set is neither on disk nor downloadable (offline)."""


def _home() -> str:
    return os.path.expanduser(os.environ.get("MXNET_HOME") or os.path.join("~", ".mxnet"))


def _mnist_dirs() -> list[str]:
    return ["data", os.path.join(_home(), "datasets", "mnist")]


def _find(name: str, dirs: list[str]) -> str | None:
    for d in dirs:
        for candidate in (name, name + ".gz"):
            path = os.path.join(d, candidate)
            if os.path.isfile(path):
                return path
    return None


def _unavailable(what: str, names, dirs, url: str, err: Exception) -> DataUnavailableError:
    return DataUnavailableError(
        f"{what}: {', '.join(names)} not found in {' or '.join(repr(d) for d in dirs)}, and the download from "
        f"{url} failed ({type(err).__name__}: {err}). Put the files in one of those folders.")


def _download(url: str, dirname: str) -> str:
    from .env import download

    return download(url, dirname=dirname, retries=2)


def get_mnist_ubyte() -> str:
    """The folder holding MNIST's four uncompressed idx files (``data`` unless found elsewhere)."""
    dirs = _mnist_dirs()
    found = {n: _find(n, dirs) for n in _MNIST}
    if all(p is not None and not p.endswith(".gz") for p in found.values()):
        folders = {os.path.dirname(p) for p in found.values()}
        if len(folders) == 1:
            return folders.pop()
    if all(p is not None for p in found.values()):  # some compressed: unpack into ./data
        os.makedirs("data", exist_ok=True)
        for name, path in found.items():
            target = os.path.join("data", name)
            if os.path.abspath(path) != os.path.abspath(target):
                opener = gzip.open if path.endswith(".gz") else open
                with opener(path, "rb") as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        return "data"
    try:
        with zipfile.ZipFile(_download(_MNIST_ZIP, "data")) as zf:
            zf.extractall("data")
    except Exception as err:  # noqa: BLE001 - offline or a bad archive: say what is missing and where
        raise _unavailable("get_mnist_ubyte", [n for n, p in found.items() if p is None], dirs, _MNIST_ZIP, err) from err
    return "data"


def _read_idx(path: str) -> np.ndarray:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        magic = struct.unpack(">I", f.read(4))[0]
        ndim = magic & 0xFF
        dims = struct.unpack(">" + "I" * ndim, f.read(4 * ndim))
        return np.frombuffer(f.read(), dtype=np.uint8).reshape(dims)


def get_mnist() -> dict[str, np.ndarray]:
    """MNIST as numpy arrays: ``train_data``/``test_data`` float32 ``(N, 1, 28, 28)`` in [0, 1], int8 labels.

    The files are read from the working directory first, as MXNet's ``get_mnist`` does, then ``./data``
    and ``$MXNET_HOME/datasets/mnist``; a missing one is downloaded into the working directory."""
    dirs = [os.curdir, *_mnist_dirs()]
    paths = {n: _find(n, dirs) for n in _MNIST}
    for name, path in paths.items():
        if path is None:
            url = _MNIST_URL + name + ".gz"
            try:
                paths[name] = _download(url, os.curdir)
            except Exception as err:  # noqa: BLE001
                raise _unavailable("get_mnist", [n for n, p in paths.items() if p is None], dirs, url, err) from err
    out = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        labels = _read_idx(paths[f"{prefix}-labels-idx1-ubyte"]).astype(np.int8)
        images = _read_idx(paths[f"{prefix}-images-idx3-ubyte"])
        out[f"{split}_data"] = images.reshape(len(labels), 1, 28, 28).astype(np.float32) / 255
        out[f"{split}_label"] = labels
    return out


_MNIST_PKL_URL = "http://deeplearning.net/data/mnist/mnist.pkl.gz"


def get_mnist_pkl() -> str:
    """``data/mnist.pkl.gz`` (MNIST pickled as three ``(images, labels)`` pairs), downloaded there when missing
    (MXNet's function, which returns nothing; the path is returned here)."""
    target = os.path.join("data", "mnist.pkl.gz")
    if not os.path.isfile(target):
        os.makedirs("data", exist_ok=True)
        try:
            _download(_MNIST_PKL_URL, "data")
        except Exception as err:  # noqa: BLE001 - offline: say what is missing and where
            raise _unavailable("get_mnist_pkl", ["mnist.pkl.gz"], ["data"], _MNIST_PKL_URL, err) from err
    return target


def get_cifar10() -> str:
    """The folder holding CIFAR-10's ``train.rec``/``test.rec``/``.lst`` (``data/cifar`` as in MXNet)."""
    dirs = [os.path.join("data", "cifar"), os.path.join(_home(), "datasets", "cifar10")]
    for d in dirs:
        if all(os.path.isfile(os.path.join(d, n)) for n in _CIFAR):
            return d
    try:
        with zipfile.ZipFile(_download(_CIFAR_ZIP, "data")) as zf:
            zf.extractall("data")
    except Exception as err:  # noqa: BLE001
        raise _unavailable("get_cifar10", _CIFAR, dirs, _CIFAR_ZIP, err) from err
    return dirs[0]


def get_mnist_iterator(batch_size: int, input_shape, num_parts: int = 1, part_index: int = 0):
    """``(train, val)`` ``MNISTIter``s; ``input_shape`` of 3 dims gives images, else flat rows (MXNet's rule)."""
    from ..io import MNISTIter

    folder = get_mnist_ubyte()
    flat = len(input_shape) != 3
    common = {"batch_size": batch_size, "flat": flat, "num_parts": num_parts, "part_index": part_index}
    train = MNISTIter(image=os.path.join(folder, _MNIST[0]), label=os.path.join(folder, _MNIST[1]),
                      shuffle=True, **common)
    val = MNISTIter(image=os.path.join(folder, _MNIST[2]), label=os.path.join(folder, _MNIST[3]), **common)
    return train, val


def get_zip_data(data_dir: str, url: str, data_origin_name: str) -> None:
    """Download ``url`` as ``data_dir/data_origin_name`` and extract it into ``data_dir``, unless that file
    is there already (MXNet's helper)."""
    from .env import download

    path = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(path):
        download(url, fname=data_origin_name, dirname=data_dir)
        with zipfile.ZipFile(path) as z:
            z.extractall(path=data_dir)


def get_bz2_data(data_dir: str, data_name: str, url: str, data_origin_name: str) -> None:
    """Download ``url`` as ``data_dir/data_origin_name`` and decompress it into ``data_dir/data_name``,
    unless that file is there already (MXNet's helper)."""
    from .env import download

    target = os.path.join(data_dir, data_name)
    if not os.path.exists(target):
        download(url, fname=data_origin_name, dirname=data_dir)
        with bz2.BZ2File(os.path.join(data_dir, data_origin_name), "rb") as src, open(target, "wb") as out:
            shutil.copyfileobj(src, out)


class DummyIter(DataIter):
    """Always the first batch of ``real_iter`` (never StopIteration): MXNet's iterator for speed tests."""

    def __init__(self, real_iter) -> None:
        super().__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        return self.the_batch
