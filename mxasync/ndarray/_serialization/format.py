"""The format's constants: magics, device, storage and dtype ids, and the record an array loads as."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple, Union

import numpy as np

from mxasync._bfloat16 import bfloat16
from mxasync.base import MXAsyncError
from mxasync.operator.sparse.formats import SparseValue

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA

#: MXNet's Context::DeviceType ids.
DEV_TYPES: dict[int, str] = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
#: MXNet's NDArrayStorageType ids.
STORAGE_TYPES: dict[int, str] = {-1: "undefined", 0: "default", 1: "row_sparse", 2: "csr"}
STYPE_IDS = {"row_sparse": 1, "csr": 2}
#: mshadow type flags MXNet 1.9.1 can load (12: bfloat16, ml_dtypes' type: the same 16 bits as MXNet's).
TYPE_FLAGS: dict[int, np.dtype] = {
    0: np.dtype("float32"),
    1: np.dtype("float64"),
    2: np.dtype("float16"),
    3: np.dtype("uint8"),
    4: np.dtype("int32"),
    5: np.dtype("int8"),
    6: np.dtype("int64"),
    7: np.dtype("bool"),
    12: bfloat16,
}
_FLAG_OF = {dt: flag for flag, dt in TYPE_FLAGS.items()}
BFLOAT16_FLAG = 12
MAX_LEGACY_NDIM = 32  # a pre-V1 first word larger than this is not an ndim but a bad magic

Context = tuple[int, int]
CPU: Context = (1, 0)


class ArrayRecord(NamedTuple):
    """One stored array: ``array`` is None for MXNet's "none" arrays; ``context`` is (dev_type, dev_id)."""

    array: np.ndarray | None
    context: Context = CPU


class ArrayTable(NamedTuple):
    """Arrays to write, already checked (what ``mx.nd.save`` hands the writer: it checks an NDArray
    dict or list as a whole, not array by array): ``arrays`` are numpy arrays, SparseValues or None
    ("none" arrays), ``contexts`` their valid ``(dev_type, dev_id)`` pairs, ``names`` the names of a
    dict (empty for a list)."""

    arrays: list
    contexts: list[Context]
    names: list[str]


SaveItem = Union[np.ndarray, SparseValue, ArrayRecord, tuple, None]
SaveData = Union[Mapping[str, SaveItem], Iterable[SaveItem], ArrayTable]
Loaded = Union[list[ArrayRecord], dict[str, ArrayRecord]]


def type_flag_of(dtype: Any) -> int:
    """The mshadow type flag of a numpy dtype, or MXAsyncError when MXNet 1.9 has none for it."""
    flag = _FLAG_OF.get(dtype)  # a native-order dtype (what arrays to save nearly always have): no conversion
    if flag is not None:
        return flag
    dt = np.dtype(dtype).newbyteorder("=")
    try:
        return _FLAG_OF[dt]
    except KeyError:
        supported = ", ".join(str(d) for d in TYPE_FLAGS.values())
        raise MXAsyncError(f"dtype {dt} cannot be saved in MXNet's NDArray format (supported: {supported})") from None

