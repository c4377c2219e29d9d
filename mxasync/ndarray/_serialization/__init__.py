"""MXNet's binary NDArray list format (``mx.nd.save`` / ``mx.nd.load`` / ``.params``) on numpy arrays.

Byte-compatible both ways with MXNet 1.9.1. A file is::

    uint64 0x112, uint64 0 (reserved), uint64 count, count x array, uint64 nnames, nnames x (uint64 len, utf-8)

and one dense array (all little-endian)::

    uint32 magic (0xF993FAC9 = V2; 0xF993FACA = V3, written under numpy shape semantics)
    int32 storage type (0 dense, 1 row_sparse, 2 csr; a sparse one then has its storage shape:
                        int32 ndim, ndim x int64 dims, the shape of its stored values)
    uint32 ndim, ndim x int64 dims      (V2: ndim 0 is a "none" array and nothing follows;
                                         V3: ndim 0 is a scalar, ndim -1 is "none")
    int32 dev_type, int32 dev_id        (1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared)
    int32 type flag, raw C-order data
    (sparse: after the type flag, per aux array (row_sparse: indices; csr: indptr, indices)
     its int32 type flag and shape; then the stored values, then each aux array's data)

Loading also reads V1 arrays (magic 0xF993FAC8: no storage type) and the older layout
without a magic (the first word is ndim, then uint32 dims); in both, ndim 0 is a scalar.

Loaded arrays come back as :class:`ArrayRecord` ``(array, context)`` tuples, in a list, or
in a dict when the file has names (the order of the file is kept). Saving takes a list or
a dict whose values are numpy arrays, ``(array, (dev_type, dev_id))`` pairs or ``None``,
or an :class:`ArrayTable` (checked columns: what ``mx.nd.save`` passes).

>>> import numpy as np
>>> blob = dumps_arrays({"w": np.arange(3, dtype=np.float32)})
>>> blob[:8].hex(), len(blob)
('1201000000000000', 85)
>>> rec = loads_arrays(blob)["w"]
>>> rec.array.tolist(), rec.context
([0.0, 1.0, 2.0], (1, 0))
"""

from .format import (
                     DEV_TYPES,
                     LIST_MAGIC,
                     STORAGE_TYPES,
                     TYPE_FLAGS,
                     V1_MAGIC,
                     V2_MAGIC,
                     V3_MAGIC,
                     ArrayRecord,
                     ArrayTable,
                     type_flag_of,
)
from .reader import load_arrays, loads_arrays
from .writer import dumps_arrays, save_arrays

__all__ = [
    "ArrayRecord",
    "ArrayTable",
    "LIST_MAGIC",
    "V1_MAGIC",
    "V2_MAGIC",
    "V3_MAGIC",
    "DEV_TYPES",
    "STORAGE_TYPES",
    "TYPE_FLAGS",
    "type_flag_of",
    "dumps_arrays",
    "save_arrays",
    "loads_arrays",
    "load_arrays",
]
