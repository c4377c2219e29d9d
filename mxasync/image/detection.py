"""``mx.image.detection``: MXNet's detection augmenters and ``ImageDetIter``.

A detection label is MXNet's packed form: ``[header_width, object_width, (extra header...), obj0..., obj1...]``
with each object ``[class, xmin, ymin, xmax, ymax, ...]`` in coordinates relative to the image (0..1).
Augmenters take and return ``(image, objects)`` where ``objects`` is the ``(n, object_width)`` array.
Random choices come from Python's ``random`` in MXNet's order, so seeding it reproduces MXNet's crops.
"""

from __future__ import annotations

import json
import logging
import random
import warnings
from math import sqrt

import numpy as np

from .. import ndarray as nd
from ..base import numeric_types
from ..io import DataBatch, DataDesc
from ..util import is_np_array
from .augmenter import Augmenter, CastAug
from .color import ColorJitterAug, ColorNormalizeAug, HueJitterAug, LightingAug, RandomGrayAug
from .crop import fixed_crop
from .geometry import ForceResizeAug, ResizeAug
from .iterator import ImageIter
from .resize import copyMakeBorder

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug", "DetRandomCropAug",
           "DetRandomPadAug", "CreateMultiRandCropAugmenter", "CreateDetAugmenter", "ImageDetIter"]

_LOG = logging.getLogger(__name__)


def _size_attempts(aug, height: int, width: int):
    """The random tries of a crop or pad augmenter ``aug`` on a ``height`` x ``width`` image: up to
    ``aug.max_attempts`` times an aspect ratio drawn from ``aug.aspect_ratio_range`` and, at that ratio, the
    heights (rounded) whose areas are ``aug.area_range``'s bounds, as ``(ratio, h, max_h)``. None when the
    augmenter is disabled or the image is empty; a ratio <= 0 is a try that yields nothing."""
    if not aug.enabled or height <= 0 or width <= 0:
        return
    min_area = aug.area_range[0] * height * width
    max_area = aug.area_range[1] * height * width
    for _ in range(aug.max_attempts):
        ratio = random.uniform(*aug.aspect_ratio_range)
        if ratio <= 0:
            continue
        yield ratio, int(round(sqrt(min_area / ratio))), int(round(sqrt(max_area / ratio)))


class DetAugmenter:
    """Base class of detection augmenters: ``aug(src, label) -> (src, label)``."""

    def __init__(self, **kwargs) -> None:
        self._kwargs = kwargs
        for k, v in self._kwargs.items():
            if isinstance(v, nd.NDArray):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self):
        """``[name, params]`` as JSON."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src, label):
        raise NotImplementedError("Must override implementation.")


class DetBorrowAug(DetAugmenter):
    """An image-only :class:`~mxasync.image.Augmenter` applied to the image; the label passes through."""

    def __init__(self, augmenter: Augmenter) -> None:
        if not isinstance(augmenter, Augmenter):
            raise TypeError(f"Borrowing from invalid Augmenter {augmenter!r}")
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        return [type(self).__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """One of ``aug_list`` at random, or none with probability ``skip_prob``."""

    def __init__(self, aug_list, skip_prob: float = 0) -> None:
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise ValueError(f"Allow DetAugmenter in list only, got {aug!r}")
        if not aug_list:
            skip_prob = 1
        self.aug_list = list(aug_list)
        self.skip_prob = skip_prob

    def dumps(self):
        return [type(self).__name__.lower(), [x.dumps() for x in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return src, label
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """Flip image and boxes left-right with probability ``p``."""

    def __init__(self, p: float) -> None:
        super().__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
            self._flip_label(label)
        return src, label

    @staticmethod
    def _flip_label(label: np.ndarray) -> None:
        tmp = 1.0 - label[:, 1]
        label[:, 1] = 1.0 - label[:, 3]
        label[:, 3] = tmp


def _areas(boxes: np.ndarray) -> np.ndarray:
    return np.maximum(0, boxes[:, 3] - boxes[:, 1]) * np.maximum(0, boxes[:, 2] - boxes[:, 0])


def _as_range(value, what: str, owner: str) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(value)
    if not isinstance(value, numeric_types):
        raise TypeError(f"{owner}: {what} must be a number or a (min, max) pair, got {value!r}")
    logging.info("Using fixed %s: %s in %s", what, value, owner)
    return value, value


class DetRandomCropAug(DetAugmenter):
    """A random crop keeping at least ``min_object_covered`` of each object it cuts; objects covered less
    than ``min_eject_coverage`` are dropped (SSD's sampler)."""

    def __init__(self, min_object_covered: float = 0.1, aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 1.0),
                 min_eject_coverage: float = 0.3, max_attempts: int = 50) -> None:
        aspect_ratio_range = _as_range(aspect_ratio_range, "aspect ratio", "DetRandomCropAug")
        area_range = _as_range(area_range, "area range", "DetRandomCropAug")
        super().__init__(min_object_covered=min_object_covered, aspect_ratio_range=aspect_ratio_range,
                         area_range=area_range, min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.enabled = False
        if area_range[1] <= 0 or area_range[0] > area_range[1]:
            warnings.warn(f"Skip DetRandomCropAug due to invalid area_range: {area_range}", stacklevel=2)
        elif aspect_ratio_range[0] > aspect_ratio_range[1] or aspect_ratio_range[0] <= 0:
            warnings.warn(f"Skip DetRandomCropAug due to invalid aspect_ratio_range: {aspect_ratio_range}",
                          stacklevel=2)
        else:
            self.enabled = True

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return src, label

    @staticmethod
    def _intersect(boxes: np.ndarray, xmin, ymin, xmax, ymax) -> np.ndarray:
        left, right = np.maximum(boxes[:, 0], xmin), np.minimum(boxes[:, 2], xmax)
        top, bot = np.maximum(boxes[:, 1], ymin), np.minimum(boxes[:, 3], ymax)
        out = boxes.copy()
        out[:, 0], out[:, 1], out[:, 2], out[:, 3] = left, top, right, bot
        out[np.logical_or(left >= right, top >= bot), :] = 0
        return out

    def _check_satisfy_constraints(self, label, xmin, ymin, xmax, ymax, width, height) -> bool:
        if (xmax - xmin) * (ymax - ymin) < 2:
            return False
        x1, y1, x2, y2 = xmin / width, ymin / height, xmax / width, ymax / height
        object_areas = _areas(label[:, 1:])
        valid = np.where(object_areas * width * height > 2)[0]
        if valid.size < 1:
            return False
        coverages = _areas(self._intersect(label[valid, 1:], x1, y1, x2, y2)) / object_areas[valid]
        coverages = coverages[coverages > 0]
        return coverages.size > 0 and np.amin(coverages) > self.min_object_covered

    def _update_labels(self, label, crop_box, height, width):
        xmin, ymin = crop_box[0] / width, crop_box[1] / height
        w, h = crop_box[2] / width, crop_box[3] / height
        out = label.copy()
        out[:, (1, 3)] -= xmin
        out[:, (2, 4)] -= ymin
        out[:, (1, 3)] /= w
        out[:, (2, 4)] /= h
        out[:, 1:5] = np.minimum(1, np.maximum(0, out[:, 1:5]))
        coverage = _areas(out[:, 1:]) * w * h / _areas(label[:, 1:])
        valid = np.logical_and(np.logical_and(out[:, 3] > out[:, 1], out[:, 4] > out[:, 2]),
                               coverage > self.min_eject_coverage)
        valid = np.where(valid)[0]
        return None if valid.size < 1 else out[valid, :]

    def _random_crop_proposal(self, label, height, width):
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for ratio, h, max_h in _size_attempts(self, height, width):
            if round(max_h * ratio) > width:
                max_h = int((width + 0.4999999) / ratio)  # find the largest h that keeps w <= width
            max_h = min(max_h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            area = w * h
            if area < min_area:
                h += 1
                w = int(round(h * ratio))
                area = w * h
            if area > max_area:
                h -= 1
                w = int(round(h * ratio))
                area = w * h
            if not (min_area <= area <= max_area and 0 <= w <= width and 0 <= h <= height):
                continue
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._check_satisfy_constraints(label, x, y, x + w, y + h, width, height):
                new_label = self._update_labels(label, (x, y, w, h), height, width)
                if new_label is not None:
                    return x, y, w, h, new_label
        return ()


class DetRandomPadAug(DetAugmenter):
    """Place the image at random on a larger canvas filled with ``pad_val`` (SSD's zoom-out)."""

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0), max_attempts: int = 50,
                 pad_val=(128, 128, 128)) -> None:
        if not isinstance(pad_val, (list, tuple)) and not isinstance(pad_val, numeric_types):
            raise TypeError(f"DetRandomPadAug: pad_val must be a number or a tuple, got {pad_val!r}")
        aspect_ratio_range = _as_range(aspect_ratio_range, "aspect ratio", "DetRandomPadAug")
        area_range = _as_range(area_range, "area range", "DetRandomPadAug")
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range, max_attempts=max_attempts,
                         pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts
        self.enabled = False
        if area_range[1] <= 1.0 or area_range[0] > area_range[1]:
            warnings.warn(f"Skip DetRandomPadAug due to invalid parameters: {area_range}", stacklevel=2)
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warnings.warn(f"Skip DetRandomPadAug due to invalid aspect_ratio_range: {aspect_ratio_range}",
                          stacklevel=2)
        else:
            self.enabled = True

    def __call__(self, src, label):
        height, width, _ = src.shape
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            values = self.pad_val if isinstance(self.pad_val, (list, tuple)) else (self.pad_val,) * 3
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, 16, values=values)
        return src, label

    @staticmethod
    def _update_labels(label, pad_box, height, width):
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + pad_box[0]) / pad_box[2]
        out[:, (2, 4)] = (out[:, (2, 4)] * height + pad_box[1]) / pad_box[3]
        return out

    def _random_pad_proposal(self, label, height, width):
        for ratio, h, max_h in _size_attempts(self, height, width):
            if round(h * ratio) < width:
                h = int((width + 0.499999) / ratio)
            h = max(h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            if h - height < 2 or w - width < 2:
                continue  # marginal padding is not helpful
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            return x, y, w, h, self._update_labels(label, (x, y, w, h), height, width)
        return ()


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),  # noqa: N802
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50, skip_prob=0):
    """A :class:`DetRandomSelectAug` over one :class:`DetRandomCropAug` per set of parameters (each parameter
    a value, or a list with one value per crop)."""
    params = [min_object_covered, aspect_ratio_range, area_range, min_eject_coverage, max_attempts]
    lists = [p if isinstance(p, list) else [p] for p in params]
    num = max(len(p) for p in lists)
    for k, p in enumerate(lists):
        if len(p) != num:
            if len(p) != 1:
                raise ValueError(f"CreateMultiRandCropAugmenter: parameter lists must have one or {num} values, "
                                 f"got {p!r}")
            lists[k] = p * num
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar, min_eject_coverage=mec,
                             max_attempts=ma) for moc, arr, ar, mec, ma in zip(*lists, strict=True)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0, rand_mirror=False,  # noqa: N802
                       mean=None, std=None, brightness=0, contrast=0, saturation=0, pca_noise=0, hue=0,
                       inter_method=2, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                       area_range=(0.05, 3.0), min_eject_coverage=0.3, max_attempts=50, pad_val=(127, 127, 127)):
    """MXNet's standard detection augmenter list (resize, random crops and pad, mirror, force-resize to
    ``data_shape``, cast, colour jitter, PCA noise, gray, normalize)."""
    auglist: list = []
    if resize > 0:
        auglist.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(min_object_covered, aspect_ratio_range, area_range,
                                                    min_eject_coverage, max_attempts, skip_prob=(1 - rand_crop)))
    if rand_mirror > 0:
        auglist.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:
        pad_aug = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts, pad_val)
        auglist.append(DetRandomSelectAug([pad_aug], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    auglist.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        auglist.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        auglist.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        eigval = np.array([55.46, 4.794, 1.148])
        eigvec = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])
        auglist.append(DetBorrowAug(LightingAug(pca_noise, eigval, eigvec)))
    if rand_gray > 0:
        auglist.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    if mean is True:
        mean = np.array([123.68, 116.28, 103.53])
    elif mean is not None and not (isinstance(mean, np.ndarray) and mean.shape[0] in (1, 3)):
        raise ValueError(f"CreateDetAugmenter: mean must be True or a numpy array of 1 or 3 values, got {mean!r}")
    if std is True:
        std = np.array([58.395, 57.12, 57.375])
    elif std is not None and not (isinstance(std, np.ndarray) and std.shape[0] in (1, 3)):
        raise ValueError(f"CreateDetAugmenter: std must be True or a numpy array of 1 or 3 values, got {std!r}")
    if mean is not None or std is not None:
        auglist.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return auglist


class ImageDetIter(ImageIter):
    """Batches of images and their objects: ``label`` is ``(batch, max objects, object width)``, rows past an
    image's objects -1. Labels are MXNet's packed detection labels (record headers or ``.lst`` fields);
    extra keywords go to :func:`CreateDetAugmenter`."""

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None, path_root=None,
                 path_imgidx=None, shuffle=False, part_index=0, num_parts=1, aug_list=None, imglist=None,
                 data_name="data", label_name="label", last_batch_handle="pad", **kwargs) -> None:
        super().__init__(batch_size=batch_size, data_shape=data_shape, path_imgrec=path_imgrec,
                         path_imglist=path_imglist, path_root=path_root, path_imgidx=path_imgidx, shuffle=shuffle,
                         part_index=part_index, num_parts=num_parts, aug_list=[], imglist=imglist,
                         data_name=data_name, label_name=label_name, last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        label_shape = self._estimate_label_shape()
        self.provide_label = [DataDesc(label_name, (self.batch_size, label_shape[0], label_shape[1]))]
        self.label_shape = label_shape

    @staticmethod
    def _check_valid_label(label) -> None:
        if len(label.shape) != 2 or label.shape[1] < 5:
            raise RuntimeError(f"Label with shape (1+, 5+) required, {label} received.")
        valid = np.where(np.logical_and(label[:, 0] >= 0, label[:, 3] > label[:, 1], label[:, 4] > label[:, 2]))[0]
        if valid.size < 1:
            raise RuntimeError("Invalid label occurs.")

    def _estimate_label_shape(self) -> tuple[int, int]:
        max_count, width = 0, 5
        self.reset()
        try:
            while True:
                label, _ = self.next_sample()
                label = self._parse_label(label)
                max_count, width = max(max_count, label.shape[0]), label.shape[1]
        except StopIteration:
            pass
        self.reset()
        return max_count, width

    @staticmethod
    def _parse_label(label) -> np.ndarray:
        raw = (label.asnumpy() if isinstance(label, nd.NDArray) else np.asarray(label)).ravel()
        if raw.size < 7:
            raise RuntimeError(f"Label shape is invalid: {raw.shape}")
        header_width, obj_width = int(raw[0]), int(raw[1])
        if (raw.size - header_width) % obj_width != 0:
            raise RuntimeError(f"Label shape {raw.shape} inconsistent with annotation width {obj_width}.")
        out = np.reshape(raw[header_width:], (-1, obj_width))
        valid = np.where(np.logical_and(out[:, 3] > out[:, 1], out[:, 4] > out[:, 2]))[0]
        if valid.size < 1:
            raise RuntimeError("Encounter sample with no valid label.")
        return out[valid, :]

    def reshape(self, data_shape=None, label_shape=None) -> None:
        """Change the data shape and/or the label shape (more objects only)."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [DataDesc(self.provide_data[0].name, (self.batch_size, *data_shape))]
            self.data_shape = tuple(data_shape)
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [DataDesc(self.provide_label[0].name, (self.batch_size, *label_shape))]
            self.label_shape = tuple(label_shape)

    def check_label_shape(self, label_shape) -> None:
        if len(label_shape) != 2:
            raise ValueError("label_shape should have length 2")
        if label_shape[0] < self.label_shape[0]:
            raise ValueError(f"Attempts to reduce label count from {self.label_shape[0]} to {label_shape[0]}, "
                             "not allowed.")
        if label_shape[1] != self.provide_label[0].shape[2]:
            raise ValueError(f"label_shape object width inconsistent: {self.provide_label[0].shape[2]} vs "
                             f"{label_shape[1]}.")

    def augmentation_transform(self, data, label):  # noqa: D102 - MXNet's (data, label) form
        for aug in self.auglist:
            data, label = aug(data, label)
        return data, label

    def _batchify(self, batch_data, batch_label, start: int = 0) -> int:
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                    label = self._parse_label(label)
                    data, label = self.augmentation_transform(data, label)
                    self._check_valid_label(label)
                except RuntimeError as e:
                    _LOG.debug("Invalid image, skipping: %s", e)
                    continue
                batch_data[i] = self.postprocess_data(data)
                n = label.shape[0]
                batch_label[i, :n] = label
                batch_label[i, n:] = -1
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self) -> DataBatch:
        """The next batch: ``data`` NCHW float32, ``label`` ``(batch, objects, width)`` padded with -1."""
        rolled = self._cache_data is not None
        if rolled:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data = nd.zeros((self.batch_size, *self.data_shape))
            batch_label = np.full(self.provide_label[0].shape, -1, np.float32)
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and not rolled:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        if is_np_array():
            data, label = batch_data.as_np_ndarray(), nd.array(batch_label).as_np_ndarray()
        else:
            data, label = batch_data, nd.array(batch_label)
        self._batch = DataBatch([data], [label], pad=pad, provide_data=self.provide_data,
                                provide_label=self.provide_label)
        return self._batch

    def sync_label_shape(self, it, verbose: bool = False):
        """Give this iterator and ``it`` (another ImageDetIter) the same label shape, the larger one."""
        if not isinstance(it, ImageDetIter):
            raise TypeError(f"Synchronize with invalid iterator {it!r}.")
        train, val = self.label_shape, it.label_shape
        if train[1] != val[1]:
            raise ValueError(f"object width mismatch: {train[1]} vs {val[1]}")
        max_count = max(train[0], val[0])
        if max_count > train[0]:
            self.reshape(None, (max_count, train[1]))
        if max_count > val[0]:
            it.reshape(None, (max_count, val[1]))
        if verbose and max_count > min(train[0], val[0]):
            logging.info("Resized label_shape to (%d, %d).", max_count, train[1])
        return it
