"""``NDArrayIter``: batches over in-memory arrays, with MXNet's exact ``last_batch_handle`` rules.

>>> import numpy as np
>>> it = NDArrayIter(np.arange(10).reshape(5, 2), np.arange(5), batch_size=2)
>>> [(b.data[0].shape, b.pad) for b in it]
[((2, 2), 0), ((2, 2), 0), ((2, 2), 1)]
>>> it.provide_label
[DataDesc[softmax_label,(2,),<class 'numpy.float32'>,NCHW]]

Where we differ from MXNet 1.9 on purpose: shuffling keeps an NDArray's dtype (MXNet
casts shuffled data to float32), and a source with fewer examples than the first data
source raises at once (MXNet fails at the batch that runs past it). A longer one is read
up to the first source's count, as in MXNet.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..base import MXAsyncError
from ..ndarray import NDArray, concat, take
from ..ndarray import array as nd_array
from ..ndarray.sparse import csr_matrix
from .base import DataBatch, DataDesc, DataIter

__all__ = ["NDArrayIter"]

_HANDLES = ("pad", "discard", "roll_over")


def _init_data(data, allow_empty: bool, default_name: str) -> list[tuple[str, NDArray]]:
    """Array, list or dict of arrays -> sorted ``[(name, NDArray)]`` (MXNet's naming and order)."""
    if data is None:
        if not allow_empty:
            raise MXAsyncError("NDArrayIter: data must not be None")
        data = []
    if isinstance(data, (np.ndarray, NDArray)) or type(data).__module__.startswith("scipy.sparse"):
        data = [data]
    if isinstance(data, list):
        if not data and not allow_empty:
            raise MXAsyncError("NDArrayIter: data must not be an empty list")
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict((f"_{i}_{default_name}", d) for i, d in enumerate(data))
    if not isinstance(data, dict):
        raise TypeError("NDArrayIter: input must be an NDArray, a numpy.ndarray, a list of them or a dict "
                        f"of them, got {type(data).__name__}")
    out = []
    for name, value in data.items():
        if not isinstance(value, NDArray) and type(value).__module__.startswith("scipy.sparse"):
            value = csr_matrix(value, dtype=np.float32)  # a SciPy matrix iterates as csr batches (MXNet's)
        if not isinstance(value, NDArray):
            try:
                value = nd_array(np.asarray(value), dtype=np.float32)  # MXNet's default dtype for host data
            except (TypeError, ValueError) as exc:
                raise TypeError(f"NDArrayIter: invalid type {type(value).__name__} for {name!r}: {exc}") from None
        out.append((name, value))
    # MXNet sorts by name, so '_10_data' comes before '_1_data'; kept for compatibility
    return sorted(out, key=lambda kv: kv[0])


class NDArrayIter(DataIter):
    """Iterate over arrays in batches (``mx.io.NDArrayIter``).

    ``last_batch_handle``: 'pad' fills the last batch from the start of the data (``pad`` says
    how many), 'discard' drops it, 'roll_over' keeps it and prepends it to the first batch of
    the next epoch (whose ``pad`` is then the number of rolled-over examples).
    ``shuffle`` reshuffles on every ``reset`` with numpy's global RNG, as MXNet does.
    """

    _async_inline = True  # next() only pushes copies to the engine

    def __init__(self, data, label=None, batch_size: int = 1, shuffle: bool = False,
                 last_batch_handle: str = "pad", data_name: str = "data",
                 label_name: str = "softmax_label", layout: str = "NCHW"):
        super().__init__(batch_size)
        if last_batch_handle not in _HANDLES:
            raise MXAsyncError(f"NDArrayIter: last_batch_handle must be one of {_HANDLES}, got {last_batch_handle!r}")
        if int(batch_size) < 1:
            raise MXAsyncError(f"NDArrayIter: batch_size must be positive, got {batch_size}")
        self._axis = layout.find("N")
        if self._axis < 0:
            raise MXAsyncError(f"NDArrayIter: layout {layout!r} has no batch axis 'N'")
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        self.layout = layout
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        if any(a.stype == "csr" for _, a in self.data + self.label) and last_batch_handle != "discard":
            raise NotImplementedError("`NDArrayIter` only supports ``CSRNDArray`` with `last_batch_handle` set to "
                                      "`discard`.")
        self.num_data = self.data[0][1].shape[self._axis]
        for name, arr in self.data + self.label:
            if arr.ndim <= self._axis or arr.shape[self._axis] < self.num_data:
                raise MXAsyncError(f"NDArrayIter: {name!r} has shape {arr.shape} but {self.data[0][0]!r} has "
                                   f"{self.num_data} examples along axis {self._axis}")
        self.idx = np.arange(self.num_data)
        self._order: np.ndarray | None = None  # source position of each shuffled example; None: identity
        self.data_list = [a for _, a in self.data] + [a for _, a in self.label]
        self.num_source = len(self.data_list)
        self._cache_data: list[NDArray] | None = None
        self._cache_label: list[NDArray] | None = None
        self.cursor = -self.batch_size
        self.reset()

    # -- descriptions -------------------------------------------------------------
    def _descs(self, sources) -> list[DataDesc]:
        ax = self._axis
        return [DataDesc(name, arr.shape[:ax] + (self.batch_size,) + arr.shape[ax + 1:], arr.dtype,
                         layout=self.layout) for name, arr in sources]

    @property
    def provide_data(self) -> list[DataDesc]:
        return self._descs(self.data)

    @property
    def provide_label(self) -> list[DataDesc]:
        return self._descs(self.label)

    # -- cursor ---------------------------------------------------------------------
    def _shuffle_data(self) -> None:
        np.random.shuffle(self.idx)  # same RNG draws as MXNet, so a seeded run matches it
        self._order = self.idx.copy() if self._order is None else self._order[self.idx]

    def hard_reset(self) -> None:
        """Reset and forget any rolled-over examples."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self) -> None:
        if self.shuffle:
            self._shuffle_data()
        bs, n = self.batch_size, self.num_data
        if self.last_batch_handle == "roll_over" and n - bs < self.cursor < n:
            # a negative cursor marks how many cached examples open the next epoch
            self.cursor = self.cursor - n - bs
        else:
            self.cursor = -bs

    def iter_next(self) -> bool:
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        short = self.last_batch_handle != "pad" and self.cursor + self.batch_size > self.num_data
        if short and self.last_batch_handle == "discard":
            raise StopIteration  # nothing to keep: skip the copies
        data, label = self.getdata(), self.getlabel()
        if short:
            self._cache_data, self._cache_label = data, label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    # -- batches ----------------------------------------------------------------------
    def _take(self, sources, positions) -> list[NDArray]:
        """Copy examples ``positions`` (a slice or an index array over the shuffled order) of each source."""
        ax = self._axis
        if self._order is not None:
            positions = self._order[positions]
        elif isinstance(positions, np.ndarray) and positions.size and \
                np.array_equal(positions, np.arange(positions[0], positions[0] + positions.size)):
            positions = slice(int(positions[0]), int(positions[0]) + positions.size)
        if isinstance(positions, slice):
            lead = (slice(None),) * ax
            return [arr[lead + (positions,)].copy() for _, arr in sources]
        index: dict = {}  # one index array per context, shared by the sources there
        out = []
        for _, arr in sources:  # one gather op per source (``take`` is ~2x faster than fancy indexing)
            if arr.stype == "csr":  # rows of a csr source, picked on the host (SciPy), stay csr
                out.append(csr_matrix(arr.asscipy()[np.asarray(positions)], ctx=arr.context, dtype=arr.dtype))
                continue
            if arr.context not in index:
                index[arr.context] = nd_array(positions, ctx=arr.context, dtype=np.int64)
            out.append(take(arr, index[arr.context], axis=ax))
        return out

    def _batchify(self, sources, which: str) -> list[NDArray]:
        bs, n, cur = self.batch_size, self.num_data, self.cursor
        if cur >= n:
            raise MXAsyncError("NDArrayIter: the epoch is over; call reset()")
        if self.last_batch_handle == "roll_over" and -bs < cur < 0:
            cached = getattr(self, f"_cache_{which}")
            if cached is None:
                raise MXAsyncError("NDArrayIter: roll_over has no cached examples for this epoch; "
                                   "call hard_reset()")
            if cur + bs > n:
                raise MXAsyncError(f"NDArrayIter: roll_over needs batch_size ({bs}) <= the number of examples ({n})")
            setattr(self, f"_cache_{which}", None)
            head = self._take(sources, slice(0, cur + bs))
            return [concat(c, h, dim=self._axis) for c, h in zip(cached, head, strict=True)]
        if self.last_batch_handle == "pad" and cur + bs > n:
            # MXNet tiles the data from the start as often as needed
            pos = np.concatenate([np.arange(cur, n), np.resize(np.arange(n), cur + bs - n)])
            return self._take(sources, pos)
        return self._take(sources, slice(cur, min(cur + bs, n)))

    def getdata(self) -> list[NDArray]:
        return self._batchify(self.data, "data")

    def getlabel(self) -> list[NDArray]:
        return self._batchify(self.label, "label")

    def getpad(self) -> int:
        bs, n, cur = self.batch_size, self.num_data, self.cursor
        if self.last_batch_handle == "pad" and cur + bs > n:
            return cur + bs - n
        if self.last_batch_handle == "roll_over" and -bs < cur < 0:
            return -cur
        return 0
