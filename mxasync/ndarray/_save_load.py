"""``mx.nd.save`` / ``load`` / ``load_frombuffer`` in MXNet's ``.params`` format.

Saving is a sync point (it waits for the arrays' pending writes) and writes the
file atomically.  A GPU array in a file loads on the CPU when no GPU can be used.

>>> import mxasync as mx, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "w.params")
>>> mx.nd.save(path, {"arg:w": mx.nd.ones((2,))})
>>> mx.nd.load(path)["arg:w"].asnumpy().tolist()
[1.0, 1.0]
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np

from ..base import MXAsyncError
from ..operator.sparse.formats import SparseValue
from ..runtime.context import BUILTIN_DEVICE_TYPES, Context, num_gpus
from ..runtime.engine import Engine
from ..runtime.storage import Storage, has_registered_storage
from ..util import is_np_shape
from ._chunk import Chunk, alloc_chunk
from ._serialization import ArrayRecord, ArrayTable, dumps_arrays, load_arrays, loads_arrays, save_arrays
from ._serialization.reader import AllocRows
from ._sparse_array import check_value, new_sparse
from .ndarray import NDArray, _xp, array

__all__ = ["save", "load", "load_frombuffer", "dumps"]

_engine = Engine.get
_DATA, _CTX, _VAR = attrgetter("_data"), attrgetter("_ctx"), attrgetter("_chunk.var")


def _saved_context(ctx: Context) -> tuple[int, int]:
    # a plugin's device type has a per-process id: its arrays are saved as cpu ones
    return (ctx.device_typeid if ctx.device_type in BUILTIN_DEVICE_TYPES else 1), ctx.device_id


def _saved_contexts(contexts: list[Context]) -> list[tuple[int, int]]:
    """Each array's saved context, worked out once per Context object (a save has one or two)."""
    if contexts and contexts.count(contexts[0]) == len(contexts):  # all equal (found by identity, mostly)
        return [_saved_context(contexts[0])] * len(contexts)
    ids = list(map(id, contexts))
    saved = {i: _saved_context(ctx) for i, ctx in dict(zip(ids, contexts, strict=True)).items()}
    return list(map(saved.__getitem__, ids))


def _arrays_and_names(data) -> tuple[list, list[str]]:
    if isinstance(data, NDArray):
        return [data], []
    if isinstance(data, dict):
        names = list(data)
        if not {str}.issuperset(map(type, names)):
            bad = next(k for k in names if not isinstance(k, str))
            raise MXAsyncError(f"save: dict keys must be str, got {bad!r}")
        arrays = list(data.values())
    elif isinstance(data, (list, tuple)):
        arrays, names = list(data), []
    else:
        raise MXAsyncError(f"save: data must be an NDArray, a list or a dict of NDArrays, got {type(data).__name__}")
    classes = set(map(type, arrays))
    if not all(issubclass(cls, NDArray) for cls in classes):
        at = next(i for i, x in enumerate(arrays) if not isinstance(x, NDArray))
        raise MXAsyncError(f"save: {_where(names, at)} must be an NDArray, got {type(arrays[at]).__name__}")
    return arrays, names


def _where(names: list[str], at: int) -> str:
    return f"data[{(names[at] if names else at)!r}]"


def _wait_for_writes(arrays: list, names: list[str]) -> None:
    """Wait for the arrays' pending writes, in one pass over their vars for the many with none.

    An array a failed op left unwritten raises that op's error, naming the array, whenever it is
    saved (MXNet raises at the first wait only, then writes whatever the memory holds)."""
    engine = _engine()
    variables = list(map(_VAR, arrays))
    for at in engine.unready(variables, for_write=False):
        var = variables[at]
        try:
            engine.wait_for_var(var, for_write=False)
        except MXAsyncError as e:
            if var.error is None:
                raise
            raise _unwritten(e, _where(names, at)) from e
        if var.error is not None:
            raise _unwritten(var.error, _where(names, at)) from var.error


def _unwritten(err: BaseException, where: str) -> MXAsyncError:
    message = f"save: {where} holds no data: the op that writes it failed: {err}"
    try:
        return type(err)(message) if isinstance(err, MXAsyncError) else MXAsyncError(message)
    except TypeError:  # an error class that takes other arguments
        return MXAsyncError(message)


def _host_value(x: NDArray):
    """What is written of an array not in host memory: a sparse one's stored values and index
    arrays (MXNet's sparse layout), or a copy of a device array's memory."""
    return x._host_value() if x.stype != "default" else x._to_host()


def _table(data) -> ArrayTable:
    """``data``'s arrays as the writer's checked table: host memory as it is (the save returns after
    writing it), one pass over all arrays per fact rather than a record per array."""
    arrays, names = _arrays_and_names(data)
    _wait_for_writes(arrays, names)
    hosts = list(map(_DATA, arrays))
    if not {np.ndarray}.issuperset(map(type, hosts)):  # sparse or device arrays among them
        hosts = [h if type(h) is np.ndarray else _host_value(x) for h, x in zip(hosts, arrays, strict=True)]
    return ArrayTable(hosts, _saved_contexts(list(map(_CTX, arrays))), names)


def save(fname, data) -> None:
    """Save an NDArray, a list or a str->NDArray dict to ``fname`` (atomically); under NumPy-shape
    mode (``npx.set_np()``) in MXNet's V3 format, which keeps 0-d and zero-size shapes."""
    save_arrays(fname, _table(data), np_shape=is_np_shape())


def dumps(data) -> bytes:
    return dumps_arrays(_table(data), np_shape=is_np_shape())


def _context(saved: tuple[int, int]) -> Context:
    dev_type, dev_id = saved
    ctx = Context(dev_type if dev_type in Context.devtype2str else 1, dev_id)
    if ctx.device_type == "gpu" and dev_id >= num_gpus():
        ctx = Context("cpu", 0)  # saved on a GPU we do not have: load on the CPU, like MXNet
    elif ctx.device_type in ("cpu_pinned", "cpu_shared"):
        ctx = Context("cpu", 0)
    return ctx


def _to_ndarray(rec: ArrayRecord, made: dict[int, NDArray], contexts: dict | None = None,
                source: str = "load_frombuffer", key=0):
    if rec.array is None:
        return None
    if isinstance(rec.array, SparseValue):  # loaded on the CPU (sparse arrays are host SciPy data here)
        v = rec.array
        # a file may come from anyone: its indices reach SciPy's native code, so check them all first
        what = f"{source}: array {key!r} ({v.stype})"
        check_value(v.stype, v.shape, v.data, v.indices, v.indptr, what=what)
        return new_sparse(v.stype, v.shape, v.data.dtype, Context("cpu", 0), v)
    if contexts is None:
        contexts = {}
    ctx = contexts.get(rec.context)
    if ctx is None:
        ctx = contexts[rec.context] = _context(rec.context)
    held = made.get(id(rec.array))
    if held is not None and (held._ctx is ctx or held._ctx == ctx):
        return held  # the file's bytes were read straight into it: no copy
    return array(rec.array, ctx=ctx, dtype=rec.array.dtype if rec.array.dtype != np.bool_ else np.bool_)


def _convert(loaded, made: dict[int, NDArray] | None = None, source: str = "load_frombuffer",
             home: Context | None = None):
    made = made or {}
    # one Context per (device type, id) of the file, not one per array; ``home`` is the one ``made``'s use
    contexts: dict = {} if home is None else {(home.device_typeid, home.device_id): home}
    if isinstance(loaded, dict):
        return {k: _to_ndarray(v, made, contexts, source, k) for k, v in loaded.items()}
    return [_to_ndarray(v, made, contexts, source, i) for i, v in enumerate(loaded)]


def load(fname):
    """Load a file written by ``mx.nd.save`` (ours or MXNet's): a list, or a dict when named.

    The file is read as a stream: its header is checked before any large read, and each
    array's bytes go straight into the NDArray's memory (peak memory near the data's size).
    As in MXNet, a file saved in NumPy-shape mode loads only in that mode, and one saved
    outside it only outside it (an MXNetError names the array otherwise).
    """
    return load_any(fname, np_shape=is_np_shape())


def load_any(fname, np_shape: bool | None = None):
    """:func:`load` that reads files of either shape semantics when ``np_shape`` is None (what Gluon's
    parameter loading and ``npx.load`` use; MXNet's Gluon retries in the other mode instead)."""
    made: dict[int, NDArray] = {}
    cpu0 = Context("cpu", 0)
    xp = _xp(cpu0)

    def alloc(shape, dtype):  # the file's shapes are checked already: no user-shape checks per array
        chunk = alloc_chunk(shape, dtype, cpu0, xp)
        out = NDArray(chunk, chunk.base)
        made[id(chunk.base)] = out
        return chunk.base

    return _convert(load_arrays(fname, alloc, np_shape=np_shape, alloc_rows=_small_rows(made, cpu0, xp)),
                    made, str(fname), cpu0)


def _small_rows(made: dict[int, NDArray], ctx: Context, xp):
    """``alloc_rows`` for the reader: a run of small arrays of one shape loads into the rows of one
    block, each row an NDArray of its own (its own var); only where such arrays would not come from
    the memory pool anyway (a block stays alive while one of its arrays does: it is under 64 KiB)."""
    if xp is not np or has_registered_storage(ctx.device_type):
        return None

    def alloc_rows(count: int, shape: tuple, dtype):
        block = np.empty((count,) + tuple(shape), dtype)
        rows = list(block)
        for row in rows:
            made[id(row)] = NDArray(Chunk(row, ctx), row)
        return block, rows

    return AllocRows(alloc_rows, max_bytes=Storage.get(ctx).min_pooled - 1)


def load_frombuffer(buf):
    """Like :func:`load`, from the bytes of such a file."""
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise MXAsyncError(f"load_frombuffer: expected bytes, got {type(buf).__name__}")
    return _convert(loads_arrays(buf, np_shape=is_np_shape()))
