"""``LibSVMIter``: batches from LibSVM text files (``label idx:value idx:value ...``).

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "x.libsvm")
>>> _ = open(path, "w").write("1 0:1.5 3:2\\n0 1:1\\n2 2:3\\n")
>>> it = LibSVMIter(data_libsvm=path, data_shape=(4,), batch_size=2)
>>> [(b.data[0].stype, b.data[0].asnumpy()[0].tolist(), b.label[0].asnumpy().tolist(), b.pad) for b in it]
[('csr', [1.5, 0.0, 0.0, 2.0], [1.0, 0.0], 0), ('csr', [0.0, 0.0, 3.0, 0.0], [2.0, 1.0], 1)]

Batching follows ``CSVIter`` (MXNet's ``round_batch`` round robin, which MXNet 1.9.1 also uses
here). The data of a batch is a ``CSRNDArray`` (``stype='csr'``), as in MXNet; the file is held
as a SciPy csr matrix, never dense.  Where we differ: ``round_batch=False`` works (MXNet rejects
it for this iterator).
"""

from __future__ import annotations

import os

import numpy as np

from ..base import MXAsyncError
from ..ndarray.sparse import csr_matrix
from .base import DataIter, ignore_unknown_kwargs
from .csv_iter import CSVIter

__all__ = ["LibSVMIter", "read_libsvm"]


def read_libsvm(path: str | os.PathLike[str], width: int, dense: bool = True):
    """``(labels (n,), rows (n, width))`` float32 from a LibSVM file (0-based feature indices); the
    rows are dense, or a ``scipy.sparse.csr_matrix`` with ``dense=False``.

    A row's first token is its label; ``#`` starts a comment.
    """
    labels: list[float] = []
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    name = os.fspath(path)
    with open(path, "rb") as f:  # decoded line by line: a bad byte is named with its line
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise MXAsyncError(f"LibSVMIter: {name!r} line {lineno}: not UTF-8 text (byte {e.start}: "
                                   f"{raw[e.start:e.start + 1]!r}); is it a LibSVM file?") from None
            tokens = line.split("#", 1)[0].split()
            if not tokens:
                continue
            try:
                label = float(tokens[0])
                for tok in tokens[1:]:
                    idx, val = tok.split(":")
                    col = int(idx)
                    if not 0 <= col < width:
                        raise MXAsyncError(f"LibSVMIter: {name!r} line {lineno}: feature index {idx} but data_shape "
                                           f"allows 0..{width - 1}")
                    cols.append(col)
                    vals.append(float(val))
                    rows.append(len(labels))
                labels.append(label)
            except (ValueError, OverflowError):
                raise MXAsyncError(f"LibSVMIter: {name!r} line {lineno}: cannot parse {line.strip()[:60]!r}") from None
    col = np.asarray(cols, np.int64)
    if not dense:
        import scipy.sparse as sp

        m = sp.csr_matrix((np.asarray(vals, np.float32), (np.asarray(rows, np.int64), col)),
                          shape=(len(labels), width))
        m.sum_duplicates()
        return np.asarray(labels, np.float32), m
    out = np.zeros((len(labels), width), np.float32)
    out[np.asarray(rows, np.int64), col] = np.asarray(vals, np.float32)
    return np.asarray(labels, np.float32), out


class LibSVMIter(CSVIter):
    """Iterate over ``data_libsvm`` rows as ``(batch, *data_shape)`` float32 with their labels.

    Labels come from each row's first token, or, with ``label_libsvm``, from the features of
    that file's rows (``label_shape`` wide). ``num_parts``/``part_index`` take a contiguous
    share of the rows.
    """

    def __init__(self, data_libsvm: str | os.PathLike[str], data_shape, batch_size: int,
                 label_libsvm: str | os.PathLike[str] | None = None, label_shape=(1,), round_batch: bool = True,
                 num_parts: int = 1, part_index: int = 0, prefetch_buffer: int = 4, ctx=None,
                 data_name: str = "data", label_name: str = "softmax_label", **kwargs):
        DataIter.__init__(self, int(batch_size))
        ignore_unknown_kwargs("LibSVMIter", kwargs)
        if not 0 <= part_index < num_parts:
            raise MXAsyncError(f"LibSVMIter: part_index {part_index} is outside 0..{num_parts - 1}")
        self.dtype = np.dtype(np.float32)
        self.data_shape = tuple(int(s) for s in data_shape)
        self.label_shape = tuple(int(s) for s in label_shape)
        if len(self.data_shape) != 1:
            raise MXAsyncError(f"LibSVMIter: data_shape must be (num_features,), got {self.data_shape}")
        labels, data = read_libsvm(data_libsvm, int(np.prod(self.data_shape)), dense=False)
        if label_libsvm is None:
            label = labels.reshape(-1, *self.label_shape) if self.label_shape == (1,) else None
            if label is None:
                raise MXAsyncError(f"LibSVMIter: label_shape {self.label_shape} needs label_libsvm")
        else:
            label = read_libsvm(label_libsvm, int(np.prod(self.label_shape)))[1]
            label = label.reshape(-1, *self.label_shape)
        n = data.shape[0]
        if len(label) != n:
            raise MXAsyncError(f"LibSVMIter: {os.fspath(data_libsvm)!r} has {n} rows but label_libsvm has {len(label)}")
        lo, hi = n * part_index // num_parts, n * (part_index + 1) // num_parts
        self._setup(data[lo:hi], label[lo:hi], os.fspath(data_libsvm), round_batch, ctx, data_name, label_name)

    def _batch_data(self, index: np.ndarray):
        """One batch as a CSRNDArray: rows ``index`` of the file, then empty rows (padding)."""
        import scipy.sparse as sp

        rows = self._data[index]
        if rows.shape[0] < self.batch_size:
            rows = sp.vstack([rows, sp.csr_matrix((self.batch_size - rows.shape[0], rows.shape[1]),
                                                  dtype=np.float32)], format="csr")
        return csr_matrix(rows, ctx=self._ctx, dtype=np.float32)
