"""Image datasets (MXNet 1.9's ``gluon.data.vision``): MNIST, FashionMNIST, CIFAR10/100 read from files
you already have, ImageFolderDataset and ImageRecordDataset.

Nothing is downloaded: the readers look for MXNet's file names under ``root`` (default
``$MXNET_HOME/datasets/<name>``, ``~/.mxnet`` without ``MXNET_HOME``) and name the missing file.
"""

from __future__ import annotations

import gzip
import os
import struct
import warnings

import numpy as np

from .... import image
from .... import ndarray as nd
from ....base import data_dir
from ....io.recordio import unpack
from ....util import is_np_array
from ..dataset import Dataset, RecordFileDataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset", "ImageFolderDataset"]


def _default_root(name: str) -> str:
    return os.path.join(data_dir(), "datasets", name)


class _DownloadedDataset(Dataset):
    """Samples ``(data[i], label[i])`` read once from files under ``root``, passed through ``transform``."""

    def __init__(self, root: str, transform):
        self._transform = transform
        self._root = os.path.expanduser(root)
        self._data = None
        self._label = None
        self._get_data()

    def _need(self, filename: str) -> str:
        path = os.path.join(self._root, filename)
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"{type(self).__name__}: {path} is missing; mxasync does not download data sets. Put MXNet's "
                f"file {filename!r} (from the data set's site or MXNet's mirror) in {self._root}")
        return path

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self) -> int:
        return len(self._label)

    def _get_data(self) -> None:
        raise NotImplementedError


def _read_idx_gz(path: str, ndim: int) -> np.ndarray:
    with gzip.open(path, "rb") as fin:
        header = fin.read(4 + 4 * ndim)
        if len(header) < 4 + 4 * ndim:
            raise ValueError(f"{path}: truncated idx header")
        magic, *dims = struct.unpack(">I" + "I" * ndim, header)
        if magic != 0x800 + ndim:
            raise ValueError(f"{path}: not an idx{ndim}-ubyte file (magic {magic:#x})")
        raw = fin.read()
    count = int(np.prod(dims))
    if len(raw) < count:
        raise ValueError(f"{path}: holds {len(raw)} bytes of data, its header promises {dims}")
    return np.frombuffer(raw[:count], dtype=np.uint8).reshape(dims)


def _arrays(data: np.ndarray, label: np.ndarray):
    """The images as an NDArray and the labels as numpy, as MXNet keeps them; under ``npx.set_np()``
    both are ``mx.np`` arrays (MXNet's ``array_fn``), so samples and batches are ``mx.np`` arrays."""
    images = nd.array(data, dtype=data.dtype)
    if not is_np_array():
        return images, label
    return images.as_np_ndarray(), nd.array(label, dtype=label.dtype).as_np_ndarray()


class MNIST(_DownloadedDataset):
    """MNIST handwritten digits: samples ``(image uint8 NDArray (28, 28, 1), label int32)``.

    Reads ``train-images-idx3-ubyte.gz``/``train-labels-idx1-ubyte.gz`` (or ``t10k-*`` with
    ``train=False``) from ``root``.
    """

    _namespace = "mnist"
    _files = {True: ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
              False: ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}

    def __init__(self, root: str | None = None, train: bool = True, transform=None):
        self._train = train
        super().__init__(root if root is not None else _default_root(self._namespace), transform)

    def _get_data(self) -> None:
        data_name, label_name = self._files[bool(self._train)]
        label = _read_idx_gz(self._need(label_name), 1).astype(np.int32)
        data = _read_idx_gz(self._need(data_name), 3)
        if data.shape[0] != label.shape[0]:
            raise ValueError(f"{type(self).__name__}: {data_name} holds {data.shape[0]} images but {label_name} "
                             f"{label.shape[0]} labels")
        data = data.reshape(len(label), 28, 28, 1)
        self._data, self._label = _arrays(data, label)


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, MNIST's file names and formats (default root ``.../fashion-mnist``)."""

    _namespace = "fashion-mnist"


class CIFAR10(_DownloadedDataset):
    """CIFAR-10: samples ``(image uint8 NDArray (32, 32, 3), label int32)`` from the binary version's
    ``data_batch_1.bin`` ... ``data_batch_5.bin`` (or ``test_batch.bin``) under ``root``."""

    _namespace = "cifar10"
    _label_bytes = 1
    _train_files = [f"data_batch_{i}.bin" for i in range(1, 6)]
    _test_files = ["test_batch.bin"]

    def __init__(self, root: str | None = None, train: bool = True, transform=None):
        self._train = train
        super().__init__(root if root is not None else _default_root(self._namespace), transform)

    def _label_column(self) -> int:
        return 0

    def _read_batch(self, path: str) -> tuple[np.ndarray, np.ndarray]:
        row = 3072 + self._label_bytes
        raw = np.fromfile(path, dtype=np.uint8)
        if raw.size % row:
            raise ValueError(f"{type(self).__name__}: {path} is {raw.size} bytes, not a multiple of the "
                             f"{row}-byte record")
        raw = raw.reshape(-1, row)
        images = raw[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return images, raw[:, self._label_column()].astype(np.int32)

    def _get_data(self) -> None:
        names = self._train_files if self._train else self._test_files
        paths = [self._need(name) for name in names]
        data, label = zip(*(self._read_batch(p) for p in paths), strict=False)
        self._data, self._label = _arrays(np.concatenate(data), np.concatenate(label))


class CIFAR100(CIFAR10):
    """CIFAR-100 from ``train.bin``/``test.bin``; ``fine_label`` picks the 100 classes over the 20
    coarse ones."""

    _namespace = "cifar100"
    _label_bytes = 2
    _train_files = ["train.bin"]
    _test_files = ["test.bin"]

    def __init__(self, root: str | None = None, fine_label: bool = False, train: bool = True, transform=None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _label_column(self) -> int:
        return 1 if self._fine_label else 0


class ImageRecordDataset(RecordFileDataset):
    """Images in a RecordIO file (``im2rec``'s): samples ``(image HxWxC uint8 NDArray, label)``.

    ``flag=0`` decodes to one grey channel, ``1`` to RGB.
    """

    def __init__(self, filename: str, flag: int = 1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        header, img = unpack(super().__getitem__(idx))
        img = image.imdecode(img, self._flag)
        if self._transform is not None:
            return self._transform(img, header.label)
        return img, header.label


class ImageFolderDataset(Dataset):
    """Images in ``root/<class name>/<file>``: samples ``(image NDArray, class index)``.

    ``synsets`` lists the class folder names (sorted; label ``i`` is ``synsets[i]``), ``items`` the
    ``(path, label)`` pairs. Only ``.jpg``, ``.jpeg`` and ``.png`` files are read; others are
    skipped with a warning.
    """

    def __init__(self, root: str, flag: int = 1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = [".jpg", ".jpeg", ".png"]
        self._list_images(self._root)

    def _list_images(self, root: str) -> None:
        self.synsets: list[str] = []
        self.items: list[tuple[str, int]] = []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"Ignoring {filename} of type {ext}. Only support {', '.join(self._exts)}",
                                  stacklevel=3)
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        path, label = self.items[idx]
        img = image.imread(path, self._flag)
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self) -> int:
        return len(self.items)
