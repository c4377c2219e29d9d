"""``ResizeIter``: give an iterator a fixed number of batches per epoch.

>>> import mxasync as mx
>>> from mxasync.io import NDArrayIter
>>> it = ResizeIter(NDArrayIter(mx.nd.ones((100, 10)), batch_size=25), 6)
>>> [b.data[0].shape for b in it][-1], it.cur
((25, 10), 6)
"""

from __future__ import annotations

from .base import BatchWrapperIter, DataBatch, DataIter

__all__ = ["ResizeIter"]


class ResizeIter(BatchWrapperIter):
    """Yield exactly ``size`` batches per epoch, restarting ``data_iter`` when it runs out.

    ``reset_internal=False`` lets the inner iterator continue where it stopped on ``reset``.
    """

    def __init__(self, data_iter: DataIter, size: int, reset_internal: bool = True):
        super().__init__()
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch: DataBatch | None = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        self._async_inline = data_iter._async_inline
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self) -> None:
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self) -> bool:
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True

