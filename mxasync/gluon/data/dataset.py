"""Datasets: indexable collections of samples (MXNet 1.9's ``gluon.data.Dataset`` family).

>>> ds = SimpleDataset(list(range(10)))
>>> [ds.transform(lambda x: x * 10)[i] for i in range(3)]
[0, 10, 20]
>>> len(ds.filter(lambda x: x % 2 == 0)), len(ds.shard(3, 0)), len(ds.take(4))
(5, 4, 4)
>>> ArrayDataset([1, 2], ['a', 'b'])[1]
(2, 'b')
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from ... import ndarray as nd
from ...io.recordio import MXIndexedRecordIO

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Abstract dataset: subclasses define ``__getitem__`` and ``__len__``."""

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def filter(self, fn: Callable) -> Dataset:
        """A dataset of the samples for which ``fn(sample)`` is true (evaluated once, now)."""
        from .sampler import FilterSampler
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards: int, index: int) -> Dataset:
        """The ``index``-th of ``num_shards`` contiguous parts; the first ``len % num_shards`` get one more."""
        if num_shards <= 0:
            raise ValueError(f"Dataset.shard: num_shards must be positive, got {num_shards}")
        if not 0 <= index < num_shards:
            raise ValueError(f"Dataset.shard: index {index} out of range for {num_shards} shards")
        from .sampler import SequentialSampler
        size, rest = divmod(len(self), num_shards)
        start = size * index + min(index, rest)
        return _SampledDataset(self, SequentialSampler(size + (index < rest), start))

    def take(self, count: int | None) -> Dataset:
        """The first ``count`` samples (all of them when ``count`` is None or too large)."""
        from .sampler import SequentialSampler
        if count is None or count > len(self):
            count = len(self)
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler) -> Dataset:
        """The samples at the indices ``sampler`` yields (a :class:`~.sampler.Sampler`)."""
        from .sampler import Sampler
        if not isinstance(sampler, Sampler):
            raise TypeError(f"Invalid sampler type: {type(sampler)}. Expected gluon.data.Sampler instead.")
        return _SampledDataset(self, sampler)

    def transform(self, fn: Callable, lazy: bool = True) -> Dataset:
        """Each sample passed through ``fn`` (a tuple sample is unpacked into arguments).

        ``lazy=False`` transforms every sample now (so a random ``fn`` is drawn once).
        """
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn: Callable, lazy: bool = True) -> Dataset:
        """Like :meth:`transform`, on the first element of each sample only (the data, not the label)."""
        return self.transform(_TransformFirstClosure(fn), lazy)

    def __iter__(self):
        # Python's old sequence protocol would also work; this one stops at len() for lists that grow
        for i in range(len(self)):
            yield self[i]


class SimpleDataset(Dataset):
    """Wrap anything with ``len()`` and ``[]`` (a list, a numpy array, an NDArray)."""

    def __init__(self, data):
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn: Callable):
        self._data = data
        self._fn = fn

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """A class, not a closure, so process workers can pickle it."""

    def __init__(self, fn: Callable):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Zip several equally long dataset-like objects: sample ``i`` is ``(a[i], b[i], ...)``.

    With one argument, sample ``i`` is ``a[i]`` itself. 1-D NDArrays are read as numpy arrays
    (MXNet does the same, so their samples are numpy scalars rather than 1-element arrays).
    """

    def __init__(self, *args):
        if not args:
            raise ValueError("ArrayDataset: needs at least 1 array")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise ValueError(f"ArrayDataset: all arrays must have the same length; array[0] has length "
                                 f"{self._length} while array[{i}] has {len(data)}.")
            if isinstance(data, nd.NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self) -> int:
        return self._length


class RecordFileDataset(Dataset):
    """The raw records (bytes) of a RecordIO ``.rec`` file, read through its ``.idx`` index."""

    def __init__(self, filename: str):
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        for path in (self.filename, self.idx_file):
            if not os.path.isfile(path):
                raise FileNotFoundError(f"RecordFileDataset: {path} does not exist")
        self._record = MXIndexedRecordIO(self.idx_file, self.filename, "r")
        self._lock = threading.Lock()

    def __getitem__(self, idx):
        with self._lock:  # thread workers share the file handle: seek and read as one step
            return self._record.read_idx(self._record.keys[idx])

    def __len__(self) -> int:
        return len(self._record.keys)

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_lock"]  # the record reader pickles itself (and reopens in the worker)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()
