"""``MNISTIter``: batches from MNIST's idx-ubyte files (optionally gzipped), as in MXNet.

Pixels are scaled by 1/256 (MXNet's factor), data is ``(batch, 1, rows, cols)`` or, with
``flat``, ``(batch, rows*cols)``; labels are float32 ``(batch,)``. The examples of this
part (``num_parts``/``part_index``: contiguous, as in MXNet) are shuffled once at
construction with ``seed``; every epoch then has the same order and only full batches.
Unlike MXNet (which reports zeros) ``index`` holds the examples' positions in the file.
"""

from __future__ import annotations

import gzip
import logging
import os
import struct

import numpy as np

from ..base import MXAsyncError
from ..ndarray import NDArray
from ..ndarray import array as nd_array
from .base import DataBatch, DataDesc, DataIter, ignore_unknown_kwargs

__all__ = ["MNISTIter", "read_idx"]

_log = logging.getLogger(__name__)
_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
              0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def read_idx(path: str | os.PathLike[str]) -> np.ndarray:
    """Read an idx file (``train-images-idx3-ubyte`` and friends; gzip detected by its magic bytes).

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "l.idx")
    >>> _ = open(p, "wb").write(bytes([0, 0, 8, 1, 0, 0, 0, 3, 7, 8, 9]))
    >>> read_idx(p).tolist()
    [7, 8, 9]
    """
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    name = os.fspath(path)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise MXAsyncError(f"MNISTIter: {name!r} is not an idx file (magic {raw[:4].hex()})")
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise MXAsyncError(f"MNISTIter: {name!r} is truncated in its header")
    shape = struct.unpack(f">{ndim}I", raw[4:header])
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    need = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - header < need:
        raise MXAsyncError(f"MNISTIter: {name!r} holds {len(raw) - header} bytes of data but shape {shape} "
                           f"needs {need}")
    return np.frombuffer(raw, dtype=dtype, count=int(np.prod(shape)), offset=header).reshape(shape)


class MNISTIter(DataIter):
    """Iterate over MNIST (``image``/``label`` idx files) in full batches.

    ``getdata()``/``getlabel()`` return one NDArray each, as MXNet's C++ iterators do.
    """

    def __init__(self, image: str | os.PathLike[str] = "./train-images-idx3-ubyte",
                 label: str | os.PathLike[str] = "./train-labels-idx1-ubyte", batch_size: int = 128,
                 shuffle: bool = True, flat: bool = False, seed: int = 0, silent: bool = False,
                 num_parts: int = 1, part_index: int = 0, prefetch_buffer: int = 4, ctx=None, dtype=None,
                 data_shape=None, data_name: str = "data", label_name: str = "softmax_label", **kwargs):
        super().__init__(int(batch_size))
        ignore_unknown_kwargs("MNISTIter", kwargs)
        if not 0 <= part_index < num_parts:
            raise MXAsyncError(f"MNISTIter: part_index {part_index} is outside 0..{num_parts - 1}")
        images = read_idx(image)
        labels = read_idx(label)
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise MXAsyncError(f"MNISTIter: images {images.shape} and labels {labels.shape} do not match "
                               "(want (n, rows, cols) and (n,))")
        n = len(images)
        begin, end = n * part_index // num_parts, n * (part_index + 1) // num_parts
        order = np.arange(begin, end)
        if shuffle:
            order = order[np.random.default_rng(seed).permutation(len(order))]
        rows, cols = images.shape[1:]
        shape = (rows * cols,) if flat else (1, rows, cols)
        if data_shape is not None and int(np.prod(data_shape)) != rows * cols:
            raise MXAsyncError(f"MNISTIter: data_shape {tuple(data_shape)} does not hold {rows}x{cols} images")
        self._images = images  # a read-only view of the file's bytes; batches are gathered from it
        self._labels = labels
        self._order = order
        self._shape = shape
        self._ctx = ctx
        self.flat = flat
        self.num_data = len(order)
        if self.num_data < self.batch_size:
            raise MXAsyncError(f"MNISTIter: part {part_index} has {self.num_data} images, fewer than "
                               f"batch_size={self.batch_size}")
        self.provide_data = [DataDesc(data_name, (self.batch_size, *shape), np.float32)]
        self.provide_label = [DataDesc(label_name, (self.batch_size,), np.float32)]
        self._cursor = 0
        self._current: tuple[NDArray, NDArray, np.ndarray] | None = None
        if not silent:
            _log.info("MNISTIter: load %d images, shuffle=%d, shape=%s", self.num_data, int(shuffle),
                      (self.batch_size, *shape))

    def reset(self) -> None:
        self._cursor = 0
        self._current = None

    def iter_next(self) -> bool:
        bs = self.batch_size
        if self._cursor + bs > self.num_data:
            return False  # only full batches
        index = self._order[self._cursor:self._cursor + bs]
        self._cursor += bs
        data = self._images[index].astype(np.float32)
        data *= np.float32(1.0 / 256.0)
        self._current = (nd_array(data.reshape((bs, *self._shape)), ctx=self._ctx),
                         nd_array(self._labels[index].astype(np.float32), ctx=self._ctx),
                         index.astype(np.uint64))
        return True

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        data, label, index = self._current
        return DataBatch([data], [label], pad=0, index=index,
                         provide_data=self.provide_data, provide_label=self.provide_label)

    def getdata(self) -> NDArray:
        return self._current[0]

    def getlabel(self) -> NDArray:
        return self._current[1]

    def getpad(self) -> int:
        return 0

    def getindex(self) -> np.ndarray:
        return self._current[2]
