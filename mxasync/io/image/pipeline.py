"""A numpy-level image RecordIO pipeline: the engine-free core of ``mx.io.ImageRecordIter``.

``RecordImagePipeline`` reads an image ``.rec`` file (as written by ``im2rec``
or MXNet), decodes and augments records on a thread pool, and yields
``RecordBatch(data, label, pad)`` with ``data`` NCHW (RGB channels) and
``label`` of shape ``(batch,)`` or ``(batch, label_width)``.

>>> import os, tempfile
>>> import numpy as np
>>> from mxasync.io.recordio import MXRecordIO, IRHeader, pack_img
>>> path = os.path.join(tempfile.mkdtemp(), "tiny.rec")
>>> with MXRecordIO(path, "w") as w:
...     for i in range(5):
...         w.write(pack_img(IRHeader(0, float(i), i, 0), np.full((6, 8, 3), 40 * i, np.uint8), img_fmt=".png"))
>>> with RecordImagePipeline(path, data_shape=(3, 4, 4), batch_size=2, preprocess_threads=1) as pipe:
...     for data, label, pad in pipe:
...         print(data.shape, label.tolist(), pad)
(2, 3, 4, 4) [0.0, 1.0] 0
(2, 3, 4, 4) [2.0, 3.0] 0
(2, 3, 4, 4) [4.0, 0.0] 1

Semantics follow MXNet 1.9: partitions (``num_parts``/``part_index``) are
contiguous runs of records, disjoint and complete; ``shuffle`` permutes a
partition anew each epoch (seeded by ``seed``); with ``round_batch`` the last
batch is completed with the first records of the next epoch, which then starts
after them (MXNet's round robin), and ``pad`` counts those records. Without
``round_batch`` the missing slots are zeros and ``pad`` counts them (MXNet
leaves them undefined and reports ``pad=0``). Augmentation of a record is a
pure function of ``(seed_aug, epoch, record number)``, so results do not depend
on thread scheduling; ``seed_aug=None`` draws a fresh seed per pipeline.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np

from ...base import MXAsyncError
from ..recordio import MXIndexedRecordIO, RecordReader, unpack
from .augment import ImageAugmenter, per_channel
from .codec import _lib, decode
from .sources import load_imglist, load_mean_img, save_mean_img

__all__ = ["RecordBatch", "RecordImagePipeline", "write_chw"]

_MEAN_PASS = 2**63  # the pass number whose augmentation the mean image is computed over


class RecordBatch(NamedTuple):
    """One batch: ``data`` NCHW, ``label`` ``(N,)`` or ``(N, label_width)`` float32, ``pad`` padded slots."""

    data: np.ndarray
    label: np.ndarray
    pad: int


class _Planned(NamedTuple):
    records: list[int]      # indices into the partition's record list
    passes: list[int]       # the pass (epoch) each record belongs to
    pad: int
    carry: tuple[np.ndarray, int, int] | None  # (order, cursor, pass) where the next epoch resumes


class RecordImagePipeline:
    """Decode + augment an image RecordIO file into numpy batches on a thread pool.

    Parameters mirror ``mx.io.ImageRecordIter``: ``path_imgrec``, ``data_shape``
    ``(C, H, W)`` with C in 1 (gray), 3 (RGB) or 4 (RGBA), ``batch_size``,
    ``path_imgidx`` (optional; without it record offsets are found by a scan of
    the part headers), ``path_imglist`` (an im2rec ``.lst`` whose labels, found by
    record id, replace the records' own), ``label_width``, ``shuffle``, ``seed``, ``num_parts``,
    ``part_index``, ``preprocess_threads`` (0 decodes on the calling thread),
    ``prefetch_buffer`` (batches queued ahead), ``round_batch``, ``seed_aug``,
    ``dtype`` (``'float32'`` or ``'uint8'``), ``mean``/``std``/``scale``
    (per-channel, ``(x - mean) * scale / std``; float32 only), ``mean_img``
    (an ``mx.nd.save`` file of a (C, H, W) mean image that replaces ``mean``;
    computed over one pass of the partition and saved when the file does not
    exist, as MXNet does: see ``_compute_mean``) and the ``ImageAugmenter`` options as keywords (``resize``,
    ``rand_crop``, ``random_resized_crop``, ``rand_mirror``, ``brightness``, ...).
    """

    def __init__(self, path_imgrec: str | os.PathLike[str], data_shape: Sequence[int], batch_size: int, *,
                 path_imgidx: str | os.PathLike[str] | None = None, label_width: int = 1, shuffle: bool = False,
                 seed: int = 0, num_parts: int = 1, part_index: int = 0, preprocess_threads: int = 4,
                 prefetch_buffer: int = 4, round_batch: bool = True, seed_aug: int | None = None,
                 dtype: str = "float32", mean: Sequence[float] | None = None, std: Sequence[float] | None = None,
                 scale: float = 1.0, path_imglist: str | os.PathLike[str] | None = None,
                 mean_img: str | os.PathLike[str] | None = None, **aug_kwargs: Any) -> None:
        self.path_imgrec = os.fspath(path_imgrec)
        self.data_shape = self._check_shape(data_shape)
        self._check_args(batch_size, label_width, num_parts, part_index, preprocess_threads, dtype)
        self.batch_size = int(batch_size)
        self.label_width = int(label_width)
        self.shuffle, self.seed, self.round_batch = bool(shuffle), int(seed) % (1 << 64), bool(round_batch)
        self.num_parts, self.part_index = int(num_parts), int(part_index)
        self.dtype = np.dtype(dtype)
        mean_img = os.fspath(mean_img) if mean_img else None
        if self.dtype == np.uint8 and (mean is not None or std is not None or scale != 1.0 or mean_img):
            raise MXAsyncError("RecordImagePipeline: mean/std/scale/mean_img need dtype='float32' "
                               "(uint8 output is raw pixels)")
        self.mean, self.std, self.scale, self.mean_img = mean, std, float(scale), mean_img
        channels, height, width = self.data_shape
        factor = np.float32(self.scale) / per_channel(std, 1.0, channels, "std", "RecordImagePipeline")
        self._mul = factor if (factor != 1).any() else None
        sub = per_channel(mean, 0.0, channels, "mean", "RecordImagePipeline")
        self._sub: np.ndarray | None = sub if sub.any() else None
        self.labels = None if path_imglist is None else load_imglist(path_imglist, self.label_width)
        self.path_imglist = None if path_imglist is None else os.fspath(path_imglist)
        try:
            self.augmenter = ImageAugmenter(size=(width, height), **aug_kwargs)
        except TypeError as e:
            raise MXAsyncError(f"RecordImagePipeline: {e}") from None
        fresh = np.random.SeedSequence().entropy
        self.seed_aug = int(fresh if seed_aug is None else seed_aug) % (1 << 64)
        self._flag = {1: 0, 3: 1, 4: -1}[channels]
        self._reader = RecordReader(self.path_imgrec)
        all_offsets = self._load_offsets(path_imgidx)
        n = len(all_offsets)
        lo, hi = n * self.part_index // self.num_parts, n * (self.part_index + 1) // self.num_parts
        self.first_record = lo
        self.offsets: list[int] = all_offsets[lo:hi]
        self._threads = int(preprocess_threads)
        self._prefetch = max(1, int(prefetch_buffer))
        self._pool: ThreadPoolExecutor | None = None
        self._queue: deque[tuple[_Planned, list[Future[None]] | None, np.ndarray, np.ndarray]] = deque()
        self._pass = 0
        self._order = self._pass_order(0)
        self._cursor = 0
        self._carry: tuple[np.ndarray, int, int] | None = None
        if mean_img is not None:
            if not os.path.exists(mean_img):
                save_mean_img(mean_img, self._compute_mean())
            self._sub = load_mean_img(mean_img, self.data_shape)

    # ----- set-up -------------------------------------------------------------------------------------
    @staticmethod
    def _check_shape(data_shape: Sequence[int]) -> tuple[int, int, int]:
        shape = tuple(int(s) for s in data_shape)
        if len(shape) != 3 or shape[0] not in (1, 3, 4) or min(shape) <= 0:
            raise MXAsyncError(f"RecordImagePipeline: data_shape must be (channels, height, width) with channels "
                               f"1, 3 or 4 and positive sizes, got {tuple(data_shape)}")
        return shape  # type: ignore[return-value]

    @staticmethod
    def _check_args(batch_size: int, label_width: int, num_parts: int, part_index: int, threads: int,
                    dtype: str) -> None:
        problems = []
        if batch_size <= 0:
            problems.append(f"batch_size must be > 0, got {batch_size}")
        if label_width <= 0:
            problems.append(f"label_width must be > 0, got {label_width}")
        if num_parts <= 0 or not 0 <= part_index < num_parts:
            problems.append(f"need 0 <= part_index < num_parts, got part_index={part_index}, num_parts={num_parts}")
        if threads < 0:
            problems.append(f"preprocess_threads must be >= 0, got {threads}")
        if str(dtype) not in ("float32", "uint8"):
            problems.append(f"dtype must be 'float32' or 'uint8', got {dtype!r}")
        if problems:
            raise MXAsyncError("RecordImagePipeline: " + "; ".join(problems))

    def _load_offsets(self, path_imgidx: str | os.PathLike[str] | None) -> list[int]:
        if path_imgidx is None:
            return self._reader.offsets()
        index = MXIndexedRecordIO(path_imgidx, self.path_imgrec, "r")
        try:
            return sorted(set(index.idx.values()))
        finally:
            index.close()

    @property
    def num_records(self) -> int:
        """Records in this partition."""
        return len(self.offsets)

    def _pass_order(self, pass_no: int) -> np.ndarray:
        n = len(self.offsets)
        if not self.shuffle:
            return np.arange(n)
        return np.random.default_rng([self.seed, self.part_index, pass_no]).permutation(n)

    # ----- planning (consumer thread only, so it is deterministic) -------------------------------------
    def _plan(self) -> _Planned | None:
        n, size = len(self._order), self.batch_size
        if self._cursor >= n:
            return None
        take = self._order[self._cursor:self._cursor + size].tolist()
        passes = [self._pass] * len(take)
        self._cursor += len(take)
        pad = size - len(take)
        carry = None
        if pad and self.round_batch:
            missing, pass_no, order, cursor = pad, self._pass, self._order, 0
            while missing:  # loops more than once only when the partition is smaller than a batch
                pass_no += 1
                order = self._pass_order(pass_no)
                more = order[:missing].tolist()
                take += more
                passes += [pass_no] * len(more)
                cursor, missing = len(more), missing - len(more)
            carry = (order, cursor, pass_no)
            self._pass = pass_no
        return _Planned(take, passes, pad, carry)

    def _fill(self) -> None:
        while len(self._queue) < self._prefetch:
            planned = self._plan()
            if planned is None:
                return
            channels, height, width = self.data_shape
            data = np.empty((self.batch_size, channels, height, width), self.dtype)
            lshape = (self.batch_size,) if self.label_width == 1 else (self.batch_size, self.label_width)
            label = np.empty(lshape, np.float32)
            filled = len(planned.records)
            data[filled:] = 0
            label[filled:] = 0
            jobs = list(zip(planned.records, planned.passes, strict=True))
            if self._threads == 0:
                self._queue.append((planned, None, data, label))
                continue
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="mxasync-imgrec")
            futures = [self._pool.submit(self._load, data, label, slot, rec, pass_no)
                       for slot, (rec, pass_no) in enumerate(jobs)]
            self._queue.append((planned, futures, data, label))

    # ----- per-record work (worker threads) ------------------------------------------------------------
    def _record(self, rec: int, pass_no: int) -> tuple[np.ndarray | float, np.ndarray]:
        """The labels and the augmented HxWxC image of partition record ``rec`` in pass ``pass_no``."""
        header, payload = unpack(self._reader.read_at(self.offsets[rec]))
        if self.labels is not None:
            try:
                labels: np.ndarray | float = self.labels[int(header.id)]
            except KeyError:
                raise MXAsyncError(f"its id {header.id} is not in path_imglist {self.path_imglist}") from None
        elif header.flag == 0:
            if self.label_width != 1:
                raise MXAsyncError(f"it has a scalar label but label_width is {self.label_width}")
            labels = header.label
        else:
            if header.flag != self.label_width:
                raise MXAsyncError(f"it has {header.flag} labels but label_width is {self.label_width}")
            labels = header.label
        img = decode(payload, self._flag)
        if self._flag == -1:
            img = _to_rgba(img)
        rng = np.random.default_rng([self.seed_aug, pass_no, self.first_record + rec])
        return labels, self.augmenter(img, rng)

    def _load(self, data: np.ndarray, label: np.ndarray, slot: int, rec: int, pass_no: int) -> None:
        try:
            labels, out = self._record(rec, pass_no)
            label[slot] = labels if self.label_width > 1 or np.ndim(labels) == 0 else labels[0]
            dst = data[slot]
            if self.dtype == np.uint8 and out.dtype != np.uint8:
                out = np.clip(np.rint(out), 0, 255)
            write_chw(dst, out)
            if self._sub is not None:  # normalised here, in cache and in parallel, not per batch afterwards
                dst -= self._sub
            if self._mul is not None:
                dst *= self._mul
        except Exception as e:  # noqa: BLE001 -- re-raised with the record's position
            msg = str(e) if isinstance(e, MXAsyncError) else f"{type(e).__name__}: {e}"
            raise MXAsyncError(f"{self.path_imgrec}: record {self.first_record + rec} at byte offset "
                               f"{self.offsets[rec]}: {msg}") from e

    def _compute_mean(self) -> np.ndarray:
        """The mean output image over one pass of the partition (for a missing ``mean_img`` file).

        As in MXNet, that is the mean of the images normalised by ``mean``/``std``/``scale``
        (the plain pixel mean with the defaults), although the file is then subtracted from
        the raw pixels.
        """
        total = np.zeros(self.data_shape, np.float64)
        chunk = max(1, self.batch_size)
        pool = ThreadPoolExecutor(self._threads) if self._threads > 1 else None
        try:
            for start in range(0, len(self.offsets), chunk):
                recs = range(start, min(start + chunk, len(self.offsets)))
                data = np.empty((len(recs), *self.data_shape), np.float32)
                label = np.empty((len(recs), self.label_width), np.float32)
                jobs = [(data, label[:, 0] if self.label_width == 1 else label, slot, rec, _MEAN_PASS)
                        for slot, rec in enumerate(recs)]
                if pool is None:
                    for job in jobs:
                        self._load(*job)
                else:
                    list(pool.map(lambda job: self._load(*job), jobs))
                total += data.sum(axis=0, dtype=np.float64)
        finally:
            if pool is not None:
                pool.shutdown()
        return (total / max(1, len(self.offsets))).astype(np.float32)

    # ----- iteration -----------------------------------------------------------------------------------
    def __iter__(self) -> RecordImagePipeline:
        return self

    def __next__(self) -> RecordBatch:
        self._fill()
        if not self._queue:
            raise StopIteration
        planned, futures, data, label = self._queue.popleft()
        try:
            if futures is None:
                for slot, (rec, pass_no) in enumerate(zip(planned.records, planned.passes, strict=True)):
                    self._load(data, label, slot, rec, pass_no)
            else:
                for fut in futures:
                    fut.result()
        except MXAsyncError:
            self._drop_queue()
            raise
        self._fill()  # keep the workers busy while the caller uses this batch
        if planned.carry is not None:
            self._carry = planned.carry
        return RecordBatch(data, label, planned.pad)

    def next(self) -> RecordBatch:
        """MXNet's spelling of ``next(pipe)``."""
        return self.__next__()

    def _drop_queue(self) -> None:
        for _, futures, _, _ in self._queue:
            for fut in futures or ():
                fut.cancel()
        self._queue.clear()

    def reset(self) -> None:
        """Start the next epoch (after a round-robin batch it resumes where that batch stopped)."""
        self._drop_queue()
        if self._carry is not None:
            self._order, self._cursor, self._pass = self._carry
            self._carry = None
        elif self._cursor > 0:
            self._pass += 1
            self._order, self._cursor = self._pass_order(self._pass), 0

    def close(self) -> None:
        """Stop the worker threads and close the file."""
        self._drop_queue()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._reader.close()

    def __enter__(self) -> RecordImagePipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
        except Exception:  # noqa: BLE001
            pass


def write_chw(dst: np.ndarray, img: np.ndarray) -> None:
    """Copy an HxWxC image into the CxHxW ``dst`` (a slot of a batch), converting the dtype.

    numpy's strided transposing cast is the slow part of batching (~50-90 us for 200x200x3,
    worst for mirrored views); with OpenCV a uint8 image is flipped/copied contiguous, split
    into planes and each plane cast with a contiguous copy, about twice as fast.
    """
    cv2 = _lib("opencv")
    if cv2 is None or img.dtype != np.uint8 or not 1 < img.shape[2] <= 4:
        dst[...] = img.transpose(2, 0, 1)
        return
    if img.strides[1] < 0:  # a mirrored view: OpenCV flips it into a contiguous copy quickly
        img = cv2.flip(np.ascontiguousarray(img[:, ::-1]), 1)
    for c, plane in enumerate(cv2.split(np.ascontiguousarray(img))):
        dst[c] = plane


def _to_rgba(img: np.ndarray) -> np.ndarray:
    if img.ndim == 2:
        img = np.repeat(img[:, :, None], 3, axis=2)
    if img.shape[2] == 3:
        alpha = np.full(img.shape[:2] + (1,), 255, np.uint8)
        img = np.concatenate([img, alpha], axis=2)
    return img
