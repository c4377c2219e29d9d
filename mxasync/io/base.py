"""The data-iterator protocol: ``DataDesc``, ``DataBatch`` and ``DataIter`` (MXNet 1.x names).

>>> desc = DataDesc("data", (32, 3, 28, 28))
>>> desc
DataDesc[data,(32, 3, 28, 28),<class 'numpy.float32'>,NCHW]
>>> desc == ("data", (32, 3, 28, 28)), DataDesc.get_batch_axis("TNC")
(True, 1)
"""

from __future__ import annotations

import warnings
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.to_thread
import numpy as np

__all__ = ["DataDesc", "DataBatch", "DataIter", "ignore_unknown_kwargs"]


def ignore_unknown_kwargs(iterator: str, kwargs: dict[str, Any], known=()) -> dict[str, Any]:
    """The ``kwargs`` an iterator takes; the others are dropped with one warning naming them.

    MXNet's C++ iterators parse their arguments allowing unknown keys, so scripts pass
    options one iterator ignores (``MNISTIter(input_shape=...)``): they run here too.
    """
    unknown = sorted(set(kwargs) - set(known))
    if unknown:
        warnings.warn(f"{iterator}: ignoring {', '.join(f'{k}={kwargs[k]!r}' for k in unknown)} "
                      "(not options of this iterator; MXNet ignores them too)", UserWarning, stacklevel=3)
    return {k: v for k, v in kwargs.items() if k in known}


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name and shape of one input (a 2-tuple, as in MXNet), plus ``dtype`` and ``layout``."""

    dtype: Any
    layout: str

    def __new__(cls, name: str, shape: Sequence[int], dtype: Any = np.float32, layout: str = "NCHW"):
        ret = super().__new__(cls, name, tuple(shape))
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self) -> str:
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    def __getnewargs__(self):
        return (self.name, self.shape, self.dtype, self.layout)

    @staticmethod
    def get_batch_axis(layout: str | None) -> int:
        """The axis of ``layout`` that holds the batch ('N'); 0 without a layout, -1 if there is no 'N'."""
        return 0 if layout is None else layout.find("N")

    @staticmethod
    def get_list(shapes, types=None) -> list[DataDesc]:
        """``DataDesc`` list from ``[(name, shape)]`` and optional ``[(name, dtype)]``."""
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        type_of = dict(types)
        return [DataDesc(name, shape, type_of[name]) for name, shape in shapes]


class DataBatch:
    """One batch: lists of NDArrays ``data`` and ``label``, ``pad`` examples at the end, ``index``.

    >>> import mxasync as mx
    >>> print(DataBatch([mx.nd.zeros((2, 3))], [mx.nd.zeros((2,))], pad=0))
    DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]
    """

    def __init__(self, data, label=None, pad: int | None = None, index=None, bucket_key=None,
                 provide_data: list[DataDesc] | None = None, provide_label: list[DataDesc] | None = None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError(f"DataBatch: data must be a list of NDArrays, got {type(data).__name__}")
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError(f"DataBatch: label must be a list of NDArrays, got {type(label).__name__}")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self) -> str:
        data_shapes = [d.shape for d in self.data]
        label_shapes = [lab.shape for lab in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """Base class of the iterators: ``reset``/``next``/``iter_next``/``get*``, ``for`` and ``async for``.

    Subclasses implement ``iter_next`` plus ``getdata``/``getlabel``/``getpad`` (or override
    ``next``).  ``async for`` runs ``next`` in a worker thread so the event loop keeps running
    while a batch is read; iterators whose ``next`` never blocks set ``_async_inline = True``.
    """

    #: True when ``next`` only pushes engine work and never blocks, so ``async for`` calls it inline.
    _async_inline = False

    def __init__(self, batch_size: int = 0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self) -> None:
        """Go back to the start of the data."""

    def next(self) -> DataBatch:
        """The next batch; raises ``StopIteration`` at the end of the epoch."""
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(), index=self.getindex())
        raise StopIteration

    def __next__(self) -> DataBatch:
        return self.next()

    def iter_next(self) -> bool:
        """Move to the next batch; False at the end."""
        return False

    def getdata(self):
        """The data of the current batch (a list of NDArrays)."""
        return None

    def getlabel(self):
        """The labels of the current batch (a list of NDArrays)."""
        return None

    def getindex(self):
        """The example indices of the current batch, or None."""
        return None

    def getpad(self) -> int:
        """How many examples at the end of the current batch are padding."""
        return 0

    # -- async face ------------------------------------------------------------
    def __aiter__(self):
        return self

    async def __anext__(self) -> DataBatch:
        if self._async_inline:
            batch = _next_or_none(self)
        else:
            batch = await anyio.to_thread.run_sync(_next_or_none, self)
        if batch is None:
            raise StopAsyncIteration
        return batch

    async def next_async(self) -> DataBatch:
        """Awaitable :meth:`next`; raises ``StopAsyncIteration`` at the end of the epoch."""
        return await self.__anext__()

    async def reset_async(self) -> None:
        """Awaitable :meth:`reset` (run in a worker thread: a reset may wait for a prefetcher)."""
        if self._async_inline:
            self.reset()
        else:
            await anyio.to_thread.run_sync(self.reset)


class BatchWrapperIter(DataIter):
    """An iterator whose ``iter_next`` fetches a whole ``DataBatch`` into ``current_batch``
    (from another iterator or a background loader); the getters read that batch."""

    current_batch: DataBatch | None = None

    def next(self) -> DataBatch:
        if self.iter_next():
            return self.current_batch
        raise StopIteration

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self) -> int:
        return self.current_batch.pad


def _next_or_none(it: DataIter) -> DataBatch | None:
    # StopIteration must not cross a coroutine boundary (it turns into RuntimeError there)
    try:
        return it.next()
    except StopIteration:
        return None
