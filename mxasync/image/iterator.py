"""``ImageIter``: batches of augmented images from a ``.rec`` file, a ``.lst`` + folder, or an ``imglist``.

MXNet 1.9's ``mx.image.ImageIter``, hooks included: ``next_sample`` gives
``(label, encoded bytes)``; each image goes through ``imdecode``,
``check_valid_image`` (a ``RuntimeError`` skips the image),
``augmentation_transform`` (the ``auglist``) and ``postprocess_data`` (HWC to
CHW) into an NCHW float32 batch. ``last_batch_handle``: ``'pad'`` fills the
last batch from the start of the data (``pad`` counts those), ``'discard'``
drops it, ``'roll_over'`` keeps it and completes it with the first images of
the next epoch.

>>> import os, tempfile
>>> import numpy as np
>>> from mxasync.io.image import codec
>>> root = tempfile.mkdtemp()
>>> for i in range(3):
...     _ = open(os.path.join(root, f"{i}.png"), "wb").write(codec.encode(np.full((6, 8, 3), i, np.uint8), ".png"))
>>> it = ImageIter(2, (3, 4, 4), imglist=[[float(i), f"{i}.png"] for i in range(3)], path_root=root)
>>> [(b.data[0].shape, b.label[0].asnumpy().tolist(), b.pad) for b in it]
[((2, 3, 4, 4), [0.0, 1.0], 0), ((2, 3, 4, 4), [2.0, 0.0], 1)]
"""

from __future__ import annotations

import logging
import os
import random
import warnings

import numpy as np

from ..base import MXAsyncError
from ..io.base import DataBatch, DataDesc, DataIter
from ..io.recordio import MXIndexedRecordIO, MXRecordIO, unpack
from ..ndarray import NDArray
from ..ndarray import transpose as nd_transpose
from ..ndarray import zeros as nd_zeros
from ._arrays import ImageError, as_nd, to_nd
from .augmenter import Augmenter
from .create import CreateAugmenter
from .decode import imdecode
from .imglist import from_imglist, read_lst

__all__ = ["ImageIter"]

_LOG = logging.getLogger(__name__)
_LABEL_DTYPES = ("int32", "float32", "int64", "float64")
_LAST_BATCH = ("pad", "discard", "roll_over")


class ImageIter(DataIter):
    """Iterate over images in NCHW float32 batches with ``CreateAugmenter``'s augmenters (or ``aug_list``).

    Sources: ``path_imgrec`` (``.rec``; ``path_imgidx`` is needed to shuffle or partition it;
    with ``path_imglist`` too, labels come from the list by record key), ``path_imglist``
    (``.lst``, images under ``path_root``), or ``imglist`` (``[[label(s), path], ...]``).
    ``shuffle`` permutes the images each epoch with Python's ``random``. ``num_parts`` /
    ``part_index`` take ``N // num_parts`` consecutive images per part (MXNet's rule: the
    ``N % num_parts`` last ones are in no part). Extra keywords go to ``CreateAugmenter``.
    """

    def __init__(self, batch_size: int, data_shape, label_width: int = 1, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle: bool = False, part_index: int = 0, num_parts: int = 1,
                 aug_list: list[Augmenter] | None = None, imglist: list | None = None, data_name: str = "data",
                 label_name: str = "softmax_label", dtype: str = "float32", last_batch_handle: str = "pad",
                 **kwargs) -> None:
        super().__init__(batch_size)
        self._check_args(batch_size, label_width, path_imgrec, path_imglist, imglist, part_index, num_parts, dtype,
                         last_batch_handle)
        self.imgrec: MXRecordIO | None = None
        self.imgidx: list | None = None
        if path_imgrec:
            if path_imgidx:
                self.imgrec = MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = MXRecordIO(path_imgrec, "r")
        imgkeys: list = []
        if path_imglist:
            self.imglist, imgkeys = read_lst(path_imglist, dtype)
        elif isinstance(imglist, list):
            self.imglist, imgkeys = from_imglist(imglist, dtype)
        else:
            self.imglist = None
        self.path_root = path_root
        self.check_data_shape(data_shape)
        data_shape = tuple(int(d) for d in data_shape)
        self.provide_data = [DataDesc(data_name, (batch_size, *data_shape))]
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_label = [DataDesc(label_name, label_shape)]
        self.batch_size = int(batch_size)
        self.data_shape = data_shape
        self.label_width = int(label_width)
        self.shuffle = shuffle
        self.seq = self._sequence(imgkeys, shuffle, part_index, num_parts, path_imgrec)
        if aug_list is None:
            self.auglist = self._create_augmenter(data_shape, kwargs)
        else:
            if kwargs:
                warnings.warn(f"ImageIter: aug_list is given, so the augmenter keywords {sorted(kwargs)} are ignored",
                              stacklevel=2)
            self.auglist = aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data: NDArray | None = None
        self._cache_label: np.ndarray | None = None
        self._cache_idx: int | None = None
        self._batch: DataBatch | None = None
        self._where = ""
        self.reset()

    # -- construction helpers ----------------------------------------------------
    @staticmethod
    def _check_args(batch_size, label_width, path_imgrec, path_imglist, imglist, part_index, num_parts, dtype,
                    last_batch_handle) -> None:
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise ImageError("ImageIter: give path_imgrec (a .rec file), path_imglist (a .lst file) or imglist "
                             "(a list of [label, path])")
        if isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
            raise ImageError(f"ImageIter: batch_size must be an integer >= 1, got {batch_size!r}")
        if isinstance(label_width, bool) or int(label_width) != label_width or label_width < 1:
            raise ImageError(f"ImageIter: label_width must be an integer >= 1, got {label_width!r}")
        if dtype not in _LABEL_DTYPES:
            raise ImageError(f"ImageIter: dtype must be one of {list(_LABEL_DTYPES)}, got {dtype!r}")
        if last_batch_handle not in _LAST_BATCH:
            raise ImageError(f"ImageIter: last_batch_handle must be one of {list(_LAST_BATCH)}, "
                             f"got {last_batch_handle!r}")
        if not (isinstance(num_parts, int) and num_parts >= 1 and isinstance(part_index, int)
                and 0 <= part_index < num_parts):
            raise ImageError(f"ImageIter: need 0 <= part_index < num_parts, got part_index={part_index!r}, "
                             f"num_parts={num_parts!r}")

    def _sequence(self, imgkeys: list, shuffle: bool, part_index: int, num_parts: int, path_imgrec) -> list | None:
        """The keys read in order (None: read the .rec file front to back), this partition's only."""
        if self.imgrec is None:
            seq = imgkeys
        elif shuffle or num_parts > 1 or self.imgidx is not None:
            if self.imgidx is None:
                raise ImageError(f"ImageIter: shuffle=True or num_parts > 1 with path_imgrec={path_imgrec!r} "
                                 "needs path_imgidx (the .idx file written with the .rec)")
            seq = self.imgidx
        else:
            return None
        if num_parts > 1:
            size = len(seq) // num_parts
            if size == 0:
                raise ImageError(f"ImageIter: num_parts={num_parts} is more than the {len(seq)} images")
            seq = seq[part_index * size:(part_index + 1) * size]
        return list(seq)

    @staticmethod
    def _create_augmenter(data_shape: tuple, kwargs: dict) -> list[Augmenter]:
        try:
            return CreateAugmenter(data_shape, **kwargs)
        except TypeError as e:
            raise TypeError(f"ImageIter: extra keyword arguments go to CreateAugmenter, which says: {e}") from None

    # -- epochs ---------------------------------------------------------------------
    def reset(self) -> None:
        """Start a new epoch (reshuffling with ``shuffle``); a rolled-over partial batch is kept."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self) -> None:
        """Start a new epoch and drop any rolled-over partial batch."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache_data = self._cache_label = self._cache_idx = None

    # -- samples ----------------------------------------------------------------------
    def next_sample(self):
        """``(label, encoded image bytes)`` of the next image; ``StopIteration`` at the end."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is None:
            record = self.imgrec.read()
            if record is None:
                if self.last_batch_handle != "discard":
                    self.imgrec.reset()
                raise StopIteration
            self._where = f"record {self.cur} of {self.imgrec.uri!r}"
            self.cur += 1
            header, img = unpack(record)
            return header.label, img
        if self.cur >= self.num_image:
            if self.last_batch_handle != "discard":
                self.cur = 0
            raise StopIteration
        key = self.seq[self.cur]
        self.cur += 1
        if self.imgrec is not None:
            self._where = f"index: {key}"
            header, img = unpack(self.imgrec.read_idx(key))
            return (header.label if self.imglist is None else self.imglist[key][0]), img
        label, fname = self.imglist[key]
        self._where = f"filename: {fname}"
        return label, self.read_image(fname)

    def read_image(self, fname: str) -> bytes:
        """The bytes of the image file ``fname`` under ``path_root``."""
        path = os.path.join(self.path_root or "", fname)
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as e:
            raise MXAsyncError(f"ImageIter: cannot read image {path!r} (path_root={self.path_root!r}): "
                               f"{e.strerror or e}") from None

    def imdecode(self, s) -> NDArray:
        """Decode one image (``mx.image.imdecode``); a broken one raises naming the file or record."""
        try:
            return imdecode(s)
        except Exception as e:  # noqa: BLE001 -- re-raised with the image's name
            raise MXAsyncError(f"ImageIter: broken image {self._where or '(unknown)'}: {e}") from None

    def check_data_shape(self, data_shape) -> None:
        """``data_shape`` must be ``(3, height, width)``."""
        if not isinstance(data_shape, (tuple, list)) or len(data_shape) != 3:
            raise ImageError(f"ImageIter: data_shape should have length 3, with dimensions CxHxW; got {data_shape!r}")
        if data_shape[0] != 3:
            raise ImageError(f"ImageIter: this iterator expects inputs to have 3 channels; got data_shape {data_shape!r}")
        if min(data_shape[1:]) < 1:
            raise ImageError(f"ImageIter: data_shape height and width must be >= 1; got {data_shape!r}")

    def check_valid_image(self, data) -> None:
        """Raise ``RuntimeError`` (the image is then skipped) when ``data`` is not an HxWxC image."""
        if len(data.shape) != 3 or 0 in data.shape:
            raise MXAsyncError(f"ImageIter: data shape is wrong: {tuple(data.shape)}")

    def augmentation_transform(self, data: NDArray) -> NDArray:
        """Run the augmenters of ``auglist`` in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum: NDArray) -> NDArray:
        """HxWxC to CxHxW."""
        return nd_transpose(as_nd(datum), axes=(2, 0, 1))

    # -- batches ----------------------------------------------------------------------
    def _put_label(self, batch_label: np.ndarray, i: int, label) -> None:
        values = np.asarray(label.asnumpy() if isinstance(label, NDArray) else label, np.float32).ravel()
        if values.size != self.label_width:
            raise ImageError(f"ImageIter: an image ({self._where or 'unknown'}) has {values.size} label(s) but "
                             f"label_width is {self.label_width}")
        batch_label[i] = values if self.label_width > 1 else values[0]

    def _batchify(self, batch_data: NDArray, batch_label: np.ndarray, start: int = 0) -> int:
        """Fill slots ``start..`` of the batch; returns how many slots are filled."""
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                except RuntimeError as e:
                    _LOG.debug("Invalid image, skipping: %s", e)
                    continue
                chw = self.postprocess_data(self.augmentation_transform(data))
                if tuple(chw.shape) != self.data_shape:
                    raise ImageError(f"ImageIter: the augmenters made an image of shape {tuple(chw.shape)} "
                                     f"(after HWC->CHW) from {self._where or 'an image'}, but data_shape is "
                                     f"{self.data_shape}; aug_list must end with a crop or resize to that size")
                batch_data[i] = chw
                self._put_label(batch_label, i, label)
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self) -> DataBatch:
        """The next batch: ``data`` NCHW float32, ``label`` float32, ``pad``."""
        rolled = self._cache_data is not None
        if rolled:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data = nd_zeros((self.batch_size, *self.data_shape))
            batch_label = np.zeros(self.provide_label[0].shape, np.float32)
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and not rolled:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, i
                raise StopIteration
            filled = self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:  # roll_over: the batch is this epoch's first, completed from its start; it holds no padding
                self._cache_data = self._cache_label = self._cache_idx = None
                pad = self.batch_size - filled
        self._batch = DataBatch([batch_data], [to_nd(batch_label)], pad=pad, provide_data=self.provide_data,
                                provide_label=self.provide_label)
        return self._batch

    def iter_next(self) -> bool:
        try:
            self.next()
        except StopIteration:
            return False
        return True

    def _current(self) -> DataBatch:
        if self._batch is None:
            raise MXAsyncError("ImageIter: no current batch; call next() or iter_next() first")
        return self._batch

    def getdata(self):
        return self._current().data

    def getlabel(self):
        return self._current().label

    def getpad(self) -> int:
        return self._current().pad

    def getindex(self):
        return None
