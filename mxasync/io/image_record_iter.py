"""``ImageRecordIter``: NDArray batches from an image RecordIO file (``mx.io.ImageRecordIter``).

The work (partitioning, shuffling, decoding and augmenting in ``preprocess_threads``
workers, ``prefetch_buffer`` batches ahead, ``round_batch``) is done by the numpy
:class:`~mxasync.io.image.RecordImagePipeline`; this class gives it MXNet's iterator face:
``mean_r/g/b/a``, ``std_r/g/b/a`` and ``scale`` keywords, ``data_name``/``label_name``,
``provide_data``/``provide_label``, one NDArray from ``getdata()``/``getlabel()``.

>>> import os, tempfile
>>> import numpy as np
>>> from mxasync.io.recordio import MXRecordIO, IRHeader, pack_img
>>> path = os.path.join(tempfile.mkdtemp(), "tiny.rec")
>>> with MXRecordIO(path, "w") as w:
...     for i in range(3):
...         w.write(pack_img(IRHeader(0, float(i), i, 0), np.full((6, 8, 3), 50, np.uint8), img_fmt=".png"))
>>> with ImageRecordIter(path_imgrec=path, data_shape=(3, 4, 4), batch_size=2, scale=1 / 50) as it:
...     [(b.data[0].shape, b.label[0].asnumpy().tolist(), b.pad) for b in it]
[((2, 3, 4, 4), [0.0, 1.0], 0), ((2, 3, 4, 4), [2.0, 0.0], 1)]
"""

from __future__ import annotations

import inspect
import os
from typing import Any

import numpy as np

from ..base import MXAsyncError
from ..ndarray import NDArray
from ..ndarray import array as nd_array
from ..ndarray._chunk import Chunk
from ..runtime.context import Context, current_context
from .base import DataBatch, DataDesc, DataIter, ignore_unknown_kwargs

__all__ = ["ImageRecordIter", "ImageRecordUInt8Iter"]

# MXNet options that change nothing here (logging, C++ threading details)
_IGNORED = {"verbose", "shuffle_chunk_size", "shuffle_chunk_seed"}


def _pipeline_options(pipeline) -> set[str]:
    """The keywords the image pipeline takes: its own and its augmenter's (where its ``**aug_kwargs`` go)."""
    from .image.augment import ImageAugmenter

    names: set[str] = set()
    for fn in (pipeline.__init__, ImageAugmenter.__init__):
        names |= {n for n, p in inspect.signature(fn).parameters.items()
                  if p.kind is p.KEYWORD_ONLY or p.kind is p.POSITIONAL_OR_KEYWORD}
    return names - {"self", "size"}


class ImageRecordIter(DataIter):
    """Iterate over an image ``.rec`` file in NCHW batches (RGB channel order, float32 or uint8).

    Keywords follow MXNet 1.9: ``path_imgrec``, ``data_shape`` ``(C, H, W)``, ``batch_size``,
    ``path_imgidx``, ``path_imglist`` (labels by record id from an im2rec ``.lst``),
    ``label_width``, ``shuffle``, ``seed``, ``num_parts``, ``part_index``,
    ``preprocess_threads``, ``prefetch_buffer``, ``round_batch``, ``seed_aug``, ``dtype``,
    ``mean_r/g/b/a``, ``std_r/g/b/a``, ``scale``, ``mean_img`` (replaces ``mean_r/g/b/a``, as in
    MXNet) and the augmenters (``resize``, ``rand_crop``, ``random_resized_crop``, ``rand_mirror``,
    ``max_rotate_angle``, ``rotate``, ``max_shear_ratio``, ``min/max_random_scale``,
    ``min/max_aspect_ratio``, ``min/max_crop_size``, ``min/max_img_size``, ``brightness``,
    ``contrast``, ``saturation``, ``pca_noise``, ``random_h/s/l``, ``pad``, ``fill_value``,
    ``inter_method``). A bad record raises at ``next()``.
    """

    def __init__(self, path_imgrec: str | os.PathLike[str], data_shape, batch_size: int, *,
                 path_imgidx: str | os.PathLike[str] | None = None, label_width: int = 1,
                 dtype: str = "float32", mean_r: float = 0.0, mean_g: float = 0.0, mean_b: float = 0.0,
                 mean_a: float = 0.0, std_r: float = 1.0, std_g: float = 1.0, std_b: float = 1.0,
                 std_a: float = 1.0, scale: float = 1.0, data_name: str = "data",
                 label_name: str = "softmax_label", ctx=None, **kwargs: Any):
        super().__init__(int(batch_size))
        from .image import RecordImagePipeline  # imported here: the codecs load only when images are used

        for key in _IGNORED & set(kwargs):
            kwargs.pop(key)
        kwargs = ignore_unknown_kwargs(type(self).__name__, kwargs, _pipeline_options(RecordImagePipeline))
        if path_imgidx == "":  # MXNet's default: no index file
            path_imgidx = None
        channels = int(data_shape[0]) if len(data_shape) else 0
        means = [mean_r, mean_g, mean_b, mean_a][:channels]  # gray images use mean_r/std_r, as in MXNet
        stds = [std_r, std_g, std_b, std_a][:channels]
        normalize = any(m != 0 for m in means) or any(s != 1 for s in stds)
        self._pipe = RecordImagePipeline(
            path_imgrec, data_shape, int(batch_size), path_imgidx=path_imgidx, label_width=label_width,
            dtype=str(np.dtype(dtype)), mean=means if normalize else None,
            std=stds if normalize else None, scale=scale, **kwargs)
        self._ctx = Context(ctx, 0) if isinstance(ctx, str) else ctx  # MXNet's iterator param is 'cpu' / 'gpu'
        self.dtype = np.dtype(dtype)
        self.data_shape = self._pipe.data_shape
        self.label_width = int(label_width)
        label_shape = (self.batch_size,) if self.label_width == 1 else (self.batch_size, self.label_width)
        self.provide_data = [DataDesc(data_name, (self.batch_size, *self.data_shape), self.dtype.type)]
        self.provide_label = [DataDesc(label_name, label_shape, np.float32)]
        self._current: tuple[NDArray, NDArray, int] | None = None

    @property
    def num_records(self) -> int:
        """Records in this partition."""
        return self._pipe.num_records

    def reset(self) -> None:
        self._pipe.reset()
        self._current = None

    def iter_next(self) -> bool:
        try:
            data, label, pad = self._pipe.next()
        except StopIteration:
            return False
        self._current = (self._wrap(data), self._wrap(label), pad)
        return True

    def _wrap(self, arr: np.ndarray) -> NDArray:
        """An NDArray around a fresh batch from the pipeline: no copy on the CPU (the pipeline
        never touches an array again once it handed it out, and a new chunk has no pending ops)."""
        ctx = self._ctx if isinstance(self._ctx, Context) else current_context() if self._ctx is None else None
        if ctx is not None and ctx.device_type == "cpu" and arr.flags.c_contiguous:
            return NDArray(Chunk(arr, ctx), arr)
        return nd_array(arr, ctx=self._ctx, dtype=arr.dtype)

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        data, label, pad = self._current
        return DataBatch([data], [label], pad=pad, index=None,
                         provide_data=self.provide_data, provide_label=self.provide_label)

    def _batch(self) -> tuple[NDArray, NDArray, int]:
        if self._current is None:
            raise MXAsyncError("ImageRecordIter: no current batch; call iter_next() first")
        return self._current

    def getdata(self) -> NDArray:
        return self._batch()[0]

    def getlabel(self) -> NDArray:
        return self._batch()[1]

    def getpad(self) -> int:
        return self._batch()[2]

    def close(self) -> None:
        """Stop the decoding threads and close the file."""
        self._pipe.close()

    def __enter__(self) -> ImageRecordIter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ImageRecordUInt8Iter(**kwargs: Any) -> ImageRecordIter:  # noqa: N802 -- MXNet's name
    """``ImageRecordIter`` with ``dtype='uint8'`` (raw pixels, no normalisation)."""
    return ImageRecordIter(**{**kwargs, "dtype": "uint8"})
