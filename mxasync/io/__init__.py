"""``mx.io``: data iterators, RecordIO, the image pipeline and small bundled datasets.

The image pipeline and ``ImageRecordIter`` load lazily on first use, so ``import mxasync.io``
stays light and never depends on the image codecs being importable.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import recordio
from .base import DataBatch, DataDesc, DataIter
from .csv_iter import CSVIter
from .libsvm_iter import LibSVMIter
from .mnist_iter import MNISTIter
from .ndarray_iter import NDArrayIter
from .prefetch import PrefetchingIter
from .resize_iter import ResizeIter

__all__ = [
    "DataDesc", "DataBatch", "DataIter", "NDArrayIter", "ResizeIter", "PrefetchingIter", "CSVIter",
    "MNISTIter", "LibSVMIter", "ImageRecordIter", "ImageRecordUInt8Iter", "ImageDetRecordIter", "recordio", "image",
    "datasets",
]

# name -> (module, attribute or None for the module itself), imported on first access
_LAZY = {
    "ImageRecordIter": (".image_record_iter", "ImageRecordIter"),
    "ImageRecordUInt8Iter": (".image_record_iter", "ImageRecordUInt8Iter"),
    "ImageDetRecordIter": (".image_det_record_iter", "ImageDetRecordIter"),
    "image": (".image", None),
    "datasets": (".datasets", None),
}


def __getattr__(name: str) -> Any:
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'mxasync.io' has no attribute {name!r}") from None
    module = importlib.import_module(module_name, __name__)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
