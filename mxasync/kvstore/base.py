"""``KVStoreBase``: the key/value front end every store shares (key checks, grouping, optimizers).

A subclass stores the values and implements three steps on one key at a time:
``_init_key``, ``_push_key`` (reduce, then update or replace) and ``_pull_key``
(broadcast).  The public calls normalise their arguments here, so a distributed
store only overrides the steps (and ``rank``/``num_workers``/``barrier``).

Keys are ints or strs, not both in one store, as in MXNet.

>>> import mxasync as mx
>>> from mxasync import kvstore
>>> kv = kvstore.create("local")
>>> kv.init(3, mx.nd.zeros((2,)))
>>> kv.push(3, [mx.nd.ones((2,)), mx.nd.ones((2,))])   # a list of values is summed
>>> out = mx.nd.empty((2,)); kv.pull(3, out=out); out.asnumpy().tolist()
[2.0, 2.0]
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..atomic import write_file
from ..base import MXAsyncError
from ..ndarray.ndarray import NDArray

__all__ = ["KVStoreBase", "Key", "register", "create", "create_async"]

Key = int | str
Updater = Callable[[Any, NDArray, NDArray], None]

_REGISTRY: dict[str, type[KVStoreBase]] = {}


def register(*names: str):
    """Class decorator: ``mx.kv.create(name)`` builds this class (``name`` matched exactly)."""

    def deco(cls):
        for n in names:
            _REGISTRY[n] = cls
        return cls

    return deco


def create(name: str = "local") -> KVStoreBase:
    """A new store of type ``name`` ('local', 'device', MXNet's 'local_*' aliases, or a registered type).

    >>> create("device").type
    'device'
    """
    if not isinstance(name, str):
        raise MXAsyncError(f"kvstore.create: the type must be a str, got {type(name).__name__}")
    cls = _REGISTRY.get(name)
    if cls is None and name.startswith("dist"):
        _load_dist(name)
        cls = _REGISTRY.get(name)
    if cls is None:
        raise MXAsyncError(f"kvstore.create: unknown type {name!r}; known: {sorted(_REGISTRY)}")
    return cls(name)


async def create_async(name: str = "local") -> KVStoreBase:
    """``create`` for async code: a distributed store starts MPI in a worker thread, so the
    event loop runs on meanwhile."""
    import asyncio

    return await asyncio.to_thread(create, name)


def _load_dist(name: str = "dist_sync") -> None:
    """Import the distributed stores, a subpackage that registers its types when imported."""
    try:
        from . import dist  # noqa: F401
    except ImportError as exc:
        raise MXAsyncError(f"kvstore.create: {name!r} needs the distributed stores, which failed to "
                           f"import ({exc}); install them with pip install 'mxasync[dist]'") from exc


def _is_int_key(k) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, bool)


class KVStoreBase:
    """Shared front end; see the module docstring for the steps a subclass implements."""

    def __init__(self, kv_type: str):
        self._type = kv_type
        self._key_kind: type | None = None  # int or str, fixed by the first key seen
        self._updater: Updater | None = None
        self._optimizer = None

    # -- identity ------------------------------------------------------------------
    @property
    def type(self) -> str:
        return self._type

    @property
    def rank(self) -> int:
        return 0

    @property
    def num_workers(self) -> int:
        return 1

    def barrier(self) -> None:
        """Wait for every worker (a single process has nothing to wait for)."""

    async def barrier_async(self) -> None:
        """``barrier()`` for async code (the distributed stores wait without blocking the loop)."""
        self.barrier()

    def is_capable(self, capability: str) -> bool:
        return capability.lower() == "optimizer"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} type={self._type!r} rank={self.rank}/{self.num_workers}>"

    # -- argument handling ------------------------------------------------------------
    def _check_key(self, key, what: str) -> Key:
        if _is_int_key(key):
            kind, key = int, int(key)
        elif isinstance(key, str):
            kind = str
        else:
            raise MXAsyncError(f"kvstore.{what}: keys must be int or str, got {type(key).__name__} {key!r}")
        if self._key_kind is None:
            self._key_kind = kind
        elif kind is not self._key_kind:
            raise MXAsyncError(f"kvstore.{what}: key {key!r} is a {kind.__name__} but this store uses "
                               f"{self._key_kind.__name__} keys; int and str keys cannot be mixed")
        return key

    def _pairs(self, key, value, what: str, vname: str = "value") -> list[tuple[Key, list[NDArray]]]:
        """``(key, [arrays])`` per distinct key, in first-seen order; a key given twice gathers both."""
        if isinstance(key, (list, tuple)):
            keys = list(key)
            if not isinstance(value, (list, tuple)) or len(value) != len(keys):
                got = len(value) if isinstance(value, (list, tuple)) else type(value).__name__
                raise MXAsyncError(f"kvstore.{what}: {len(keys)} keys need a list of {len(keys)} {vname}s, got {got}")
            values = list(value)
        else:
            keys, values = [key], [value]
        grouped: dict[Key, list[NDArray]] = {}
        for k, v in zip(keys, values, strict=True):
            k = self._check_key(k, what)
            arrays = list(v) if isinstance(v, (list, tuple)) else [v]
            for a in arrays:
                if not isinstance(a, NDArray):
                    raise MXAsyncError(f"kvstore.{what}: the {vname} for key {k!r} must be an NDArray or a "
                                       f"list of them, got {type(a).__name__}")
            grouped.setdefault(k, []).extend(arrays)
        return list(grouped.items())

    # -- the public calls ----------------------------------------------------------
    def init(self, key, value) -> None:
        """Store initial values: one NDArray per key (a list of keys takes a list of values)."""
        for k, arrays in self._pairs(key, value, "init"):
            if len(arrays) != 1:
                raise MXAsyncError(f"kvstore.init: key {k!r} takes one value, got {len(arrays)}")
            self._init_key(k, arrays[0])

    def push(self, key, value, priority: int = 0) -> None:
        """Sum the values of each key, then update the stored value (with an updater) or replace it."""
        for k, arrays in self._pairs(key, value, "push"):
            self._require(k, "push")
            self._push_key(k, arrays, priority)

    def pull(self, key, out=None, priority: int = 0, ignore_sparse: bool = True) -> None:
        """Copy each key's stored value into every array of ``out``; sparse ``out`` arrays are skipped
        under ``ignore_sparse`` (MXNet's default: pull row_sparse values with :meth:`row_sparse_pull`)."""
        if out is None:
            raise MXAsyncError("kvstore.pull: out= is required")
        for k, arrays in self._pairs(key, out, "pull", "out"):
            self._require(k, "pull")
            if ignore_sparse:  # sparse out arrays are left alone (MXNet's ignore_sparse)
                arrays = [a for a in arrays if a.stype == "default"]
            if arrays:
                self._pull_key(k, arrays, priority)

    def row_sparse_pull(self, key, out=None, priority: int = 0, row_ids=None) -> None:
        """Pull the rows ``row_ids`` (an int NDArray, one per ``out``) of row_sparse keys into
        row_sparse ``out`` arrays: only those rows travel (MXNet's sparse models' pull)."""
        if out is None or row_ids is None:
            raise MXAsyncError("kvstore.row_sparse_pull: out= and row_ids= are required")
        pairs = self._pairs(key, out, "row_sparse_pull", "out")
        ids = [row_ids] if isinstance(row_ids, NDArray) else _flatten(row_ids)
        n_out = sum(len(a) for _, a in pairs)
        if len(ids) == 1 and n_out > 1:
            ids = ids * n_out
        if len(ids) != n_out:
            raise MXAsyncError(f"kvstore.row_sparse_pull: {len(ids)} row_ids for {n_out} out arrays")
        i = 0
        for k, arrays in pairs:
            self._require(k, "row_sparse_pull")
            for o in arrays:
                if o.stype != "row_sparse":
                    raise MXAsyncError(f"kvstore.row_sparse_pull: out for key {k!r} must be row_sparse, got "
                                       f"{o.stype}")
                self._row_sparse_pull_key(k, o, ids[i], priority)
                i += 1

    def pushpull(self, key, value, out=None, priority: int = 0) -> None:
        """``push`` then ``pull`` (into ``value`` itself when ``out`` is None)."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key, value, out, priority: int = 0) -> None:
        """``init`` the keys with ``value`` and ``pull`` them into ``out``."""
        self.init(key, value)
        self.pull(key, out, priority)

    def _require(self, key: Key, what: str) -> None:
        if not self._has_key(key):
            raise MXAsyncError(f"kvstore.{what}: key {key!r} was not initialised (call init first)")

    # -- updaters and optimizers ----------------------------------------------------
    def set_optimizer(self, optimizer) -> None:
        """Run ``optimizer`` on the stored values at each push (MXNet's update_on_kvstore)."""
        from ..optimizer import get_updater

        self._optimizer = optimizer
        self._set_updater(get_updater(optimizer))

    def _set_updater(self, updater: Updater | None) -> None:
        """``updater(key, merged, stored)`` updates ``stored`` in place from the pushed sum ``merged``."""
        if updater is not None and not callable(updater):
            raise MXAsyncError(f"kvstore.set_updater: updater must be callable, got {type(updater).__name__}")
        self._updater = updater

    set_updater = _set_updater

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Write the updater's states (and the optimizer when ``dump_optimizer``) to ``fname``."""
        updater = self._need_updater("save_optimizer_states")
        write_file(fname, _get_states(updater, dump_optimizer))

    def load_optimizer_states(self, fname: str) -> None:
        updater = self._need_updater("load_optimizer_states")
        with open(fname, "rb") as f:
            data = f.read()
        if not hasattr(updater, "set_states"):
            # a plain function keeps no states; unpickling the file here would run whatever it names
            raise MXAsyncError(f"kvstore.load_optimizer_states({fname!r}): the updater has no set_states "
                               "to load them with")
        try:
            updater.set_states(data)
        except MXAsyncError as exc:
            raise MXAsyncError(f"kvstore.load_optimizer_states({fname!r}): {exc}") from exc

    def _need_updater(self, what: str):
        if self._updater is None:
            raise MXAsyncError(f"kvstore.{what}: no optimizer is set (call set_optimizer first)")
        return self._updater

    # -- the steps a store implements --------------------------------------------
    def _has_key(self, key: Key) -> bool:
        raise NotImplementedError

    def _init_key(self, key: Key, value: NDArray) -> None:
        raise NotImplementedError

    def _push_key(self, key: Key, values: Sequence[NDArray], priority: int) -> None:
        raise NotImplementedError

    def _stored_stype(self, key: Key) -> str:
        return "default"

    def _row_sparse_pull_key(self, key: Key, out: NDArray, row_ids: NDArray, priority: int) -> None:
        raise MXAsyncError(f"{type(self).__name__} does not support row_sparse_pull")

    def _pull_key(self, key: Key, outs: Sequence[NDArray], priority: int) -> None:
        raise NotImplementedError


def _flatten(items) -> list:
    out = []
    for x in items:
        out.extend(_flatten(x) if isinstance(x, (list, tuple)) else [x])
    return out


def _get_states(updater, dump_optimizer: bool) -> bytes:
    if hasattr(updater, "get_states"):
        return updater.get_states(dump_optimizer)
    return pickle.dumps(getattr(updater, "states", {}))
