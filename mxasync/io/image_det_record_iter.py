"""``ImageDetRecordIter``: detection batches from an image RecordIO file (``mx.io.ImageDetRecordIter``).

Each record's label is MXNet's packed detection label (``[header_width, object_width, ..., objects]``).
A batch's label row is MXNet's: ``[C, H, W, n]`` (the output image's shape and the record label's length),
the ``n`` label values, then ``label_pad_value`` up to ``4 + label_pad_width`` values (``label_pad_width``
-1: the longest label of the file). Images are decoded (RGB), resized to ``data_shape`` (``resize_mode``
``'force'``), optionally mirrored with their boxes (``rand_mirror_prob``), normalised as
``(x - mean) * scale / std``. ``round_batch`` completes the last batch from the file's start, as MXNet does.

MXNet's random crop / pad / colour options (``rand_crop_prob``, ``rand_pad_prob``, ``min_crop_scales``...)
are not implemented: given, they are ignored with one warning naming them (docs/porting.md).
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from ..base import MXAsyncError
from ..ndarray import array as nd_array
from .base import DataBatch, DataDesc, DataIter, ignore_unknown_kwargs
from .image.codec import decode, resize
from .recordio import MXRecordIO
from .recordio_pack import unpack

__all__ = ["ImageDetRecordIter"]

# MXNet's detection-augmentation options that this iterator does not implement
_AUGMENT = {"rand_crop_prob", "min_crop_scales", "max_crop_scales", "min_crop_aspect_ratios",
            "max_crop_aspect_ratios", "min_crop_overlaps", "max_crop_overlaps", "min_crop_sample_coverages",
            "max_crop_sample_coverages", "min_crop_object_coverages", "max_crop_object_coverages",
            "num_crop_sampler", "crop_emit_mode", "emit_overlap_thresh", "max_crop_trials", "rand_pad_prob",
            "max_pad_scale", "max_random_hue", "random_hue_prob", "max_random_saturation", "random_saturation_prob",
            "max_random_illumination", "random_illumination_prob", "max_random_contrast", "random_contrast_prob",
            "fill_value", "inter_method"}
_KNOWN = {"path_imglist", "label_width", "label_pad_width", "label_pad_value", "shuffle", "seed", "round_batch",
          "mean_r", "mean_g", "mean_b", "mean_a", "std_r", "std_g", "std_b", "std_a", "scale", "data_name",
          "label_name", "rand_mirror_prob", "resize_mode", "num_parts", "part_index", "preprocess_threads",
          "prefetch_buffer", "verbose", "dtype", "resize"}


class ImageDetRecordIter(DataIter):
    """Iterate over a detection ``.rec`` file: ``data`` ``(batch, C, H, W)`` float32, ``label``
    ``(batch, 4 + label_pad_width)``."""

    def __init__(self, path_imgrec: str | os.PathLike[str], data_shape, batch_size: int, **kwargs: Any) -> None:
        given_augment = sorted(k for k in kwargs if k in _AUGMENT)
        if given_augment:
            warnings.warn(f"ImageDetRecordIter: {', '.join(given_augment)} are not implemented here and are "
                          "ignored: images are not cropped, padded or colour-jittered (use mx.image.ImageDetIter "
                          "for detection augmentation)", UserWarning, stacklevel=2)
        opts = ignore_unknown_kwargs("ImageDetRecordIter", {k: v for k, v in kwargs.items() if k not in _AUGMENT},
                                     _KNOWN)
        super().__init__(int(batch_size))
        self.data_shape = tuple(int(d) for d in data_shape)
        if len(self.data_shape) != 3 or self.data_shape[0] not in (1, 3):
            raise MXAsyncError(f"ImageDetRecordIter: data_shape must be (1 or 3, height, width), got {data_shape}")
        if opts.get("resize_mode", "force") != "force":
            raise MXAsyncError(f"ImageDetRecordIter: resize_mode={opts['resize_mode']!r} is not provided here "
                               "(only 'force')")
        self.path_imgrec = os.fspath(path_imgrec)
        self._records = self._read(self.path_imgrec, opts.get("path_imglist"))
        num_parts, part = int(opts.get("num_parts", 1)), int(opts.get("part_index", 0))
        if num_parts > 1:
            n = len(self._records) // num_parts
            self._records = self._records[part * n:(part + 1) * n]
        if not self._records:
            raise MXAsyncError(f"ImageDetRecordIter: no records in {self.path_imgrec}")
        longest = max(len(label) for label, _ in self._records)
        pad_width = int(opts.get("label_pad_width", -1))
        if pad_width <= 0:
            pad_width = longest
        elif pad_width < longest:
            raise MXAsyncError(f"ImageDetRecordIter: label_pad_width={pad_width} is shorter than the longest label "
                               f"({longest} values) of {self.path_imgrec}")
        self.label_pad_width, self.label_pad_value = pad_width, float(opts.get("label_pad_value", -1))
        c = self.data_shape[0]
        self._mean = np.array([opts.get(f"mean_{k}", 0.0) for k in "rgba"[:c]], np.float32)
        self._std = np.array([opts.get(f"std_{k}", 1.0) for k in "rgba"[:c]], np.float32)
        self._scale = float(opts.get("scale", 1.0))
        self._mirror = float(opts.get("rand_mirror_prob", 0.0))
        self._shuffle = bool(opts.get("shuffle", False))
        self._round = bool(opts.get("round_batch", True))
        self._rng = np.random.RandomState(int(opts.get("seed", 0)))
        self.provide_data = [DataDesc(opts.get("data_name", "data"), (self.batch_size, *self.data_shape))]
        self.provide_label = [DataDesc(opts.get("label_name", "softmax_label"), (self.batch_size, 4 + pad_width))]
        self._order = np.arange(len(self._records))
        self._cursor = 0
        self._batch: DataBatch | None = None
        self.reset()

    @staticmethod
    def _read_lst(path_imglist) -> dict[int, np.ndarray]:
        """``{record id: label values}`` of an im2rec ``.lst`` (index, labels..., path; tab-separated)."""
        labels = {}
        with open(path_imglist, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                fields = line.strip().split("\t")
                if fields == [""]:
                    continue
                if len(fields) < 3:
                    raise MXAsyncError(f"ImageDetRecordIter: {path_imglist}:{number}: expected index, labels and "
                                       f"a path separated by tabs: {line!r}")
                labels[int(float(fields[0]))] = np.array([float(v) for v in fields[1:-1]], np.float32)
        return labels

    @classmethod
    def _read(cls, path: str, path_imglist) -> list[tuple[np.ndarray, bytes]]:
        relabel = cls._read_lst(path_imglist) if path_imglist else None
        out = []
        with MXRecordIO(path, "r") as rec:
            while True:
                record = rec.read()
                if record is None:
                    break
                header, img = unpack(record)
                label = np.atleast_1d(np.asarray(header.label, np.float32))
                if relabel is not None:
                    if header.id not in relabel:
                        raise MXAsyncError(f"ImageDetRecordIter: record id {header.id} of {path} is not in "
                                           f"path_imglist {path_imglist}")
                    label = np.asarray(relabel[header.id], np.float32).ravel()
                out.append((label, img))
        return out

    def reset(self) -> None:
        if self._shuffle:
            self._rng.shuffle(self._order)
        self._cursor = 0

    def _sample(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        label, buf = self._records[self._order[index]]
        c, h, w = self.data_shape
        img = decode(buf, 1 if c == 3 else 0)
        img = resize(img, (w, h), 1).astype(np.float32).reshape(h, w, c)
        label = label.copy()
        if self._mirror > 0 and self._rng.rand() < self._mirror:
            img = img[:, ::-1]
            header, width = int(label[0]), int(label[1])
            objs = label[header:].reshape(-1, width)
            xmin = objs[:, 1].copy()
            objs[:, 1], objs[:, 3] = 1.0 - objs[:, 3], 1.0 - xmin
            label[header:] = objs.ravel()
        img = (img - self._mean) * self._scale / self._std
        row = np.full(4 + self.label_pad_width, self.label_pad_value, np.float32)
        row[:4] = (c, h, w, label.size)
        row[4:4 + label.size] = label
        return np.ascontiguousarray(img.transpose(2, 0, 1)), row

    def iter_next(self) -> bool:
        n = len(self._records)
        if self._cursor >= n:
            return False
        data = np.zeros((self.batch_size, *self.data_shape), np.float32)
        label = np.full(self.provide_label[0].shape, self.label_pad_value, np.float32)
        filled = 0
        while filled < self.batch_size and self._cursor < n:
            data[filled], label[filled] = self._sample(self._cursor)
            filled += 1
            self._cursor += 1
        pad = self.batch_size - filled
        if pad and self._round:
            for k in range(pad):  # complete the batch from the start, as MXNet's round_batch does
                data[filled + k], label[filled + k] = self._sample(k % n)
        self._batch = DataBatch([nd_array(data)], [nd_array(label)], pad=pad, provide_data=self.provide_data,
                                provide_label=self.provide_label)
        return True

    def next(self) -> DataBatch:
        if not self.iter_next():
            raise StopIteration
        return self._batch

    def getdata(self):
        return self._batch.data

    def getlabel(self):
        return self._batch.label

    def getpad(self) -> int:
        return self._batch.pad
