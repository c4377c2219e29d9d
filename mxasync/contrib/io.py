"""``mx.contrib.io``: :class:`DataLoaderIter`, a Gluon ``DataLoader`` as a Module ``DataIter``.

>>> import numpy as np
>>> import mxasync as mx
>>> data = mx.gluon.data.ArrayDataset(np.arange(10, dtype="float32").reshape(5, 2), np.arange(5))
>>> it = DataLoaderIter(mx.gluon.data.DataLoader(data, batch_size=2))
>>> [(b.data[0].shape, b.pad) for b in it]
[((2, 2), 0), ((2, 2), 0), ((2, 2), 1)]
"""

from __future__ import annotations

from ..io import DataDesc, DataIter
from ..ndarray import zeros

__all__ = ["DataLoaderIter"]


class DataLoaderIter(DataIter):
    """Batches of a ``gluon.data.DataLoader`` (``(data, label)`` pairs) as ``DataBatch``es.

    The batch size and shapes come from the loader's first batch; a shorter last batch is
    padded to that size (with zeros; MXNet leaves the padding uninitialised) and its ``pad``
    says by how many rows.  ``dtype`` casts data and label, as in MXNet.
    """

    def __init__(self, loader, data_name: str = "data", label_name: str = "softmax_label", dtype="float32"):
        super().__init__()
        self._loader = loader
        first_data, first_label = next(iter(loader))
        self.batch_size = first_data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, first_data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, first_label.shape, dtype)]
        self._current = None
        self._iter = iter(loader)

    def reset(self) -> None:
        self._iter = iter(self._loader)

    def iter_next(self) -> bool:
        self._current = next(self._iter, None)
        return self._current is not None

    def _padded(self, arr):
        arr = arr.astype(self.dtype)
        missing = self.batch_size - arr.shape[0]
        if missing <= 0:
            return [arr]
        out = zeros((self.batch_size, *arr.shape[1:]), ctx=arr.context, dtype=self.dtype)
        out[: arr.shape[0]] = arr
        return [out]

    def getdata(self):
        return self._padded(self._current[0])

    def getlabel(self):
        return self._padded(self._current[1])

    def getpad(self) -> int:
        return self.batch_size - self._current[0].shape[0]

    def getindex(self):
        return None
