"""``CSVIter``: batches from CSV files of numbers, with MXNet's ``round_batch`` round robin.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "x.csv")
>>> _ = open(path, "w").write("1,2\\n3,4\\n5,6\\n")
>>> it = CSVIter(data_csv=path, data_shape=(2,), batch_size=2)
>>> [(b.data[0].asnumpy()[:, 0].tolist(), b.pad) for b in it]
[([1.0, 3.0], 0), ([5.0, 1.0], 1)]
>>> it.reset(); [b.data[0].asnumpy()[:, 0].tolist() for b in it]   # starts after the wrapped row
[[3.0, 5.0]]

With ``round_batch`` (the default) the last batch is completed with the first rows, and the
next epoch starts after them. Without it the padded slots are zeros (MXNet leaves them
undefined). The files are read once, at construction; ``prefetch_buffer`` is accepted and
ignored. Beyond MXNet 1.9 we also accept ``dtype='uint8'``.
"""

from __future__ import annotations

import os

import numpy as np

from ..base import MXAsyncError
from ..ndarray import NDArray
from ..ndarray import array as nd_array
from .base import DataBatch, DataDesc, DataIter, ignore_unknown_kwargs

__all__ = ["CSVIter"]

_DTYPES = {"float32": np.float32, "int32": np.int32, "int64": np.int64, "uint8": np.uint8}


def _read_csv(path: str | os.PathLike[str], shape: tuple[int, ...], dtype, what: str) -> np.ndarray:
    """Rows of ``path`` as an ``(n, *shape)`` array; a row of the wrong length raises naming the line."""
    rows: list[list[str]] = []
    width = int(np.prod(shape))
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            fields = line.rstrip(",").split(",")
            if len(fields) != width:
                raise MXAsyncError(f"CSVIter: {what} {os.fspath(path)!r} line {lineno} has {len(fields)} values "
                                   f"but {what}_shape {shape} needs {width}")
            rows.append(fields)
    if not rows:
        return np.zeros((0, *shape), dtype=dtype)
    text = np.array(rows, dtype=str)
    try:
        values = text.astype(np.float64)
    except ValueError as exc:
        raise MXAsyncError(f"CSVIter: {what} {os.fspath(path)!r}: {exc}") from None
    if np.issubdtype(dtype, np.integer):
        try:  # exact for large int64 values, which float64 would round
            values = text.astype(np.int64)
        except ValueError:
            values = np.trunc(values)  # "2.5" reads as 2, as MXNet's integer parser does
    return values.astype(dtype).reshape((len(rows), *shape))


class CSVIter(DataIter):
    """Iterate over the rows of ``data_csv`` (and ``label_csv``), reshaped to ``data_shape``.

    Without ``label_csv`` the labels are zeros of ``label_shape``.
    ``getdata()``/``getlabel()`` return one NDArray each, as MXNet's C++ iterators do.
    """

    def __init__(self, data_csv: str | os.PathLike[str], data_shape, batch_size: int,
                 label_csv: str | os.PathLike[str] | None = None, label_shape=(1,), round_batch: bool = True,
                 dtype: str | None = None, prefetch_buffer: int = 4, ctx=None,
                 data_name: str = "data", label_name: str = "softmax_label", **kwargs):
        super().__init__(int(batch_size))
        ignore_unknown_kwargs("CSVIter", kwargs)
        name = "float32" if dtype is None else np.dtype(dtype).name
        if name not in _DTYPES:
            raise MXAsyncError(f"CSVIter: dtype {name} is not supported; use one of {sorted(_DTYPES)}")
        self.dtype = np.dtype(_DTYPES[name])
        self.data_shape = tuple(int(s) for s in data_shape)
        self.label_shape = tuple(int(s) for s in label_shape)
        data = _read_csv(data_csv, self.data_shape, self.dtype, "data")
        label = None if label_csv is None else _read_csv(label_csv, self.label_shape, self.dtype, "label")
        self._setup(data, label, os.fspath(data_csv), round_batch, ctx, data_name, label_name)

    def _setup(self, data: np.ndarray, label: np.ndarray | None, source: str, round_batch: bool, ctx,
               data_name: str, label_name: str) -> None:
        """Batching state over in-memory ``data``/``label`` (shared with ``LibSVMIter``)."""
        kind = type(self).__name__
        self.round_batch = bool(round_batch)
        self._ctx = ctx
        self._data = data
        n = data.shape[0]
        if label is None:
            label = np.zeros((n, *self.label_shape), dtype=self.dtype)
        elif len(label) != n:
            raise MXAsyncError(f"{kind}: {source!r} has {n} rows but the label file has {len(label)}")
        self._label = label
        if n == 0:
            raise MXAsyncError(f"{kind}: {source!r} has no rows")
        if self.round_batch and n < self.batch_size:
            raise MXAsyncError(f"{kind}: round_batch needs at least batch_size={self.batch_size} rows, got {n}")
        self.num_data = n
        # MXNet shows a (batch,) label for label_shape (1,)
        self._label_out = (self.batch_size,) if self.label_shape == (1,) else (self.batch_size, *self.label_shape)
        self.provide_data = [DataDesc(data_name, (self.batch_size, *self.data_shape), self.dtype.type)]
        self.provide_label = [DataDesc(label_name, self._label_out, self.dtype.type)]
        self._start = 0      # where the epoch starts: after the rows the previous epoch wrapped over
        self._next_start = 0
        self._cursor = 0
        self._current: tuple[NDArray, NDArray, int, np.ndarray] | None = None

    def reset(self) -> None:
        self._start = self._next_start
        self._next_start = 0
        self._cursor = self._start
        self._current = None

    def iter_next(self) -> bool:
        n, bs = self.num_data, self.batch_size
        if self._cursor >= n:
            return False
        stop = self._cursor + bs
        index = np.arange(self._cursor, stop) % n if self.round_batch else np.arange(self._cursor, min(stop, n))
        pad = max(0, stop - n)
        label = np.zeros((bs, *self.label_shape), self.dtype)
        label[:len(index)] = self._label[index]
        if not self.round_batch:
            index = np.concatenate([index, np.zeros(pad, np.int64)])
        self._next_start = pad if self.round_batch else 0
        self._cursor = stop
        self._current = (self._batch_data(index),
                         nd_array(label.reshape(self._label_out), ctx=self._ctx, dtype=self.dtype),
                         pad, index.astype(np.uint64))
        return True

    def _batch_data(self, index: np.ndarray) -> NDArray:
        """The data of one batch: rows ``index``, zero rows after them (padding)."""
        data = np.zeros((self.batch_size, *self.data_shape), self.dtype)
        data[:len(index)] = self._data[index]
        return nd_array(data, ctx=self._ctx, dtype=self.dtype)

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        data, label, pad, index = self._current
        return DataBatch([data], [label], pad=pad, index=index,
                         provide_data=self.provide_data, provide_label=self.provide_label)

    def getdata(self) -> NDArray:
        return self._current[0]

    def getlabel(self) -> NDArray:
        return self._current[1]

    def getpad(self) -> int:
        return self._current[2]

    def getindex(self) -> np.ndarray:
        return self._current[3]
