"""Storage: the per-context pooled allocator (MXNet's StorageManager).

``Storage.get(ctx).alloc(nbytes)`` returns a :class:`StorageHandle` whose
``buffer`` is raw device memory (a numpy ``uint8`` array on CPU, a CuPy
``MemoryPointer`` on GPU).  ``free(handle)`` puts the block back in the pool for
the next allocation of the same bucket; ``release_all()`` gives pooled blocks
back to the system.

Callers that free memory still used by pending ops must not call ``free``
directly: they push the free as an engine op (``Engine.delete_variable``), so
the block returns to the pool only after every op using it has finished.

Strategies (``MXNET_CPU_MEM_POOL_TYPE`` / ``MXNET_GPU_MEM_POOL_TYPE``, MXNet's names):

* ``Naive``: one free list per exact (64-byte aligned) size;
* ``Round``: sizes round up to a power of two below ``2**cutoff`` bytes and to
  a multiple of ``2**cutoff`` above it (``MXNET_*_MEM_POOL_ROUND_LINEAR_CUTOFF``,
  default 24), so near sizes share blocks;
* ``Unpooled``: every free returns memory at once.

On CPU the pool holds at most ``MXASYNC_CPU_POOL_MB`` MiB of free and parked blocks
(default 4096; a negative value: no cap): a block freed beyond the cap goes back to the
system after the blocks of the least recently used sizes, so a transient peak does not
stay reserved for good.  A size class goes *cold* when the pool has served
``2 * horizon + MXASYNC_CPU_POOL_COLD`` requests (default 32; negative: never) since it
was last asked for, ``horizon`` being a high quantile (~89%) of the reuse distances the
pool sees (about one training step's worth of requests; a size shared by chance between
shapes far apart does not count): its free and parked blocks go back to the system.
A loop over ever new shapes (sequence lengths 1..500) thus keeps about two steps' blocks,
not one set per shape.

On CPU, blocks under ``MXASYNC_CPU_POOL_MIN_BYTES`` (default 64 KiB) bypass the
pool: numpy's own small-block cache is faster than any Python free list, and
page faults, which the pool exists to avoid, only matter for large blocks.

*Parked* blocks: a dead array whose ops are still pending can ``park`` its block
with its var instead of pushing its free; the next op output of that exact size
takes it back (``take_parked``) and orders its writes after those ops.  A loop
like ``a = a + b`` on big arrays then cycles through a few blocks that stay in
cache, as numpy's own allocator does, instead of one block per op in flight.
A block is reused once ``MXASYNC_CPU_POOL_PARK_LAG`` newer ones of its size
wait (default: cores - 2), so that many outputs plus one can still be computed
at once; at most ``MXASYNC_CPU_POOL_PARK_DEPTH`` (4, or lag + 2) wait parked.

>>> import mxasync as mx
>>> from mxasync.runtime.storage import Storage
>>> st = Storage.get(mx.cpu(7))
>>> h = st.alloc(1 << 20)
>>> st.stats()["in_use"]
1048576
>>> st.free(h); st.stats()["pooled"], st.stats()["in_use"]
(1048576, 0)
>>> st.alloc(1 << 20).buffer.nbytes  # served from the pool
1048576
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque

from ..base import MXAsyncError, env_int, env_str
from .context import Context
from .engine.threads import cpu_count

__all__ = ["Storage", "StorageHandle", "CPUStorage", "GPUStorage", "register_storage", "has_registered_storage"]

_ALIGN = 64
DEFAULT_CPU_POOL_MB = 4096  # MXASYNC_CPU_POOL_MB: free host blocks the pool may keep (documented in docs/architecture.md)


class StorageHandle:
    """A block of device memory: ``buffer`` holds ``size`` usable bytes out of ``capacity``."""

    __slots__ = ("buffer", "size", "capacity", "ctx", "pooled", "freed")

    def __init__(self, buffer, size: int, capacity: int, ctx: Context, pooled: bool):
        self.buffer = buffer
        self.size = size
        self.capacity = capacity
        self.ctx = ctx
        self.pooled = pooled
        self.freed = False

    def __repr__(self) -> str:
        return f"<StorageHandle {self.size}B of {self.capacity}B on {self.ctx}{' freed' if self.freed else ''}>"


def _round_size(nbytes: int, strategy: str, cutoff_log2: int) -> int:
    if strategy == "round":
        cutoff = 1 << cutoff_log2
        if nbytes <= cutoff:
            return 1 << max(nbytes - 1, 1).bit_length()
        return -(-nbytes // cutoff) * cutoff
    return -(-nbytes // _ALIGN) * _ALIGN


class Storage:
    """Base class and per-context factory: ``Storage.get(ctx)``.

    A device with its own memory subclasses it (``alloc``, ``free``, ``release_all``,
    ``pooled_bytes``) and registers it with :func:`register_storage`; its backend's
    ``from_storage(handle, shape, dtype)`` then views each block as an array.  The rest
    (``min_pooled``, ``park``, ``take_parked``) has defaults that keep nothing back.
    """

    #: blocks under this many bytes bypass the pool (CPU: numpy's small-block cache); 0: none do
    min_pooled: int = 0

    _instances: dict[Context, Storage] = {}
    _instances_lock = threading.Lock()

    @classmethod
    def get(cls, ctx: Context) -> Storage:
        inst = cls._instances.get(ctx)
        if inst is None:
            with cls._instances_lock:
                inst = cls._instances.get(ctx)
                if inst is None:
                    factory = _FACTORIES.get(ctx.device_type, CPUStorage)
                    inst = factory(ctx)
                    cls._instances[ctx] = inst
        return inst

    @classmethod
    def all(cls) -> dict[Context, Storage]:
        return dict(cls._instances)

    def __init__(self, ctx: Context):
        self.ctx = ctx
        # re-entrant: a block freed from __del__ during a GC pass may re-enter on the same thread
        self._lock = threading.RLock()
        self.in_use = 0
        self.peak = 0
        self.num_allocs = 0
        self.num_pool_hits = 0

    def alloc(self, nbytes: int) -> StorageHandle:  # pragma: no cover - abstract
        """A block of at least ``nbytes``; a subclass calls :meth:`account_alloc` for the statistics."""
        raise NotImplementedError(f"{type(self).__name__}.alloc")

    def free(self, handle: StorageHandle) -> None:
        """Give ``handle``'s block back (the default: to the system, with its last reference)."""
        self.account_free(handle)

    def account_alloc(self, nbytes: int) -> None:
        """Count a block of ``nbytes`` handed out (``stats()``: in use, peak, allocations)."""
        with self._lock:
            self.num_allocs += 1
            self.in_use += nbytes
            if self.in_use > self.peak:
                self.peak = self.in_use

    def account_free(self, handle: StorageHandle) -> None:
        """Count ``handle`` as freed and drop its buffer; a block freed twice or on another context is refused."""
        self._release_handle(handle)

    def direct_free(self, handle: StorageHandle) -> None:
        """Return ``handle``'s memory to the system now, bypassing the pool."""
        self._release_handle(handle)

    def release_all(self) -> None:
        """Give pooled blocks back to the system (the default pools none)."""

    def pooled_bytes(self) -> int:
        """Bytes held for reuse (the default pools none)."""
        return 0

    def park(self, handle: StorageHandle, var) -> tuple | None:
        """Keep a dead array's block whose ops on ``var`` are pending; the default keeps none: the
        caller frees ``(handle, var)`` through the engine after those ops."""
        return handle, var

    def take_parked(self, nbytes: int) -> tuple | None:
        """A parked block of ``nbytes`` and its var, or None (the default parks none)."""
        return None

    def stats(self) -> dict:
        """``in_use`` (bytes handed out), ``pooled`` (held for reuse), ``peak`` in use, counts."""
        return {
            "ctx": str(self.ctx), "in_use": self.in_use, "pooled": self.pooled_bytes(), "peak": self.peak,
            "allocs": self.num_allocs, "pool_hits": self.num_pool_hits,
        }

    def _check_free(self, handle: StorageHandle) -> None:
        if handle.freed:
            raise MXAsyncError(f"Storage({self.ctx}): block {handle!r} freed twice")
        if handle.ctx != self.ctx:
            raise MXAsyncError(f"Storage({self.ctx}): block from {handle.ctx} freed here")

    def _release_handle(self, handle: StorageHandle) -> None:
        with self._lock:
            self._check_free(handle)
            handle.freed = True
            self.in_use -= handle.size
        handle.buffer = None


class CPUStorage(Storage):
    """Pooled host memory in numpy ``uint8`` buffers."""

    def __init__(self, ctx: Context):
        super().__init__(ctx)
        self.strategy = env_str("Naive", "MXASYNC_CPU_MEM_POOL_TYPE", "MXNET_CPU_MEM_POOL_TYPE").lower()
        if self.strategy not in ("naive", "round", "unpooled"):
            raise MXAsyncError(f"MXNET_CPU_MEM_POOL_TYPE must be Naive, Round or Unpooled, got {self.strategy!r}")
        self.cutoff_log2 = env_int(24, "MXASYNC_CPU_MEM_POOL_ROUND_LINEAR_CUTOFF",
                                   "MXNET_CPU_MEM_POOL_ROUND_LINEAR_CUTOFF")
        self.min_pooled = env_int(64 << 10, "MXASYNC_CPU_POOL_MIN_BYTES")
        cap_mb = env_int(DEFAULT_CPU_POOL_MB, "MXASYNC_CPU_POOL_MB")
        self.cap = cap_mb << 20 if cap_mb >= 0 else None  # bytes of free and parked blocks the pool may hold
        self._free: dict[int, list] = defaultdict(list)
        self._pooled = 0
        self.park_lag = max(env_int(max(cpu_count() - 2, 0), "MXASYNC_CPU_POOL_PARK_LAG"), 0)
        self.park_depth = max(env_int(4, "MXASYNC_CPU_POOL_PARK_DEPTH"), self.park_lag + 2)
        self._parked: dict[int, deque] = {}  # size -> (handle, var of its pending ops), newest last
        cold = env_int(32, "MXASYNC_CPU_POOL_COLD")
        self.cold = cold if cold >= 0 else None  # requests a size may sit unused, beyond 2 * horizon
        self._tick = 0  # pooled requests served so far
        self._horizon = 0.0  # a high quantile of the reuse distances, in requests
        self._next_sweep = 0
        self._used: dict[int, int] = {}  # capacity -> tick of its last request (the warm size classes)
        self._ghosts: dict[int, int] = {}  # the same for size classes released cold, oldest first

    def set_strategy(self, strategy: str) -> None:
        """Switch strategy at run time (tests and benchmarks); pooled blocks are released."""
        strategy = strategy.lower()
        if strategy not in ("naive", "round", "unpooled"):
            raise MXAsyncError(f"Storage: strategy must be naive, round or unpooled, got {strategy!r}")
        self.release_all()
        self.strategy = strategy

    def alloc(self, nbytes: int) -> StorageHandle:
        import numpy as np

        nbytes = int(nbytes)
        if nbytes < 0:
            raise MXAsyncError(f"Storage({self.ctx}).alloc: negative size {nbytes}")
        if nbytes < self.min_pooled or self.strategy == "unpooled":
            buf = np.empty(nbytes, dtype=np.uint8)
            handle = StorageHandle(buf, nbytes, nbytes, self.ctx, False)
            with self._lock:
                self._account_alloc(nbytes)
            return handle
        capacity = _round_size(nbytes, self.strategy, self.cutoff_log2)
        with self._lock:
            self._request(capacity)
            free_list = self._free.get(capacity)
            buf = free_list.pop() if free_list else None
            if buf is not None:
                self._pooled -= capacity
                self.num_pool_hits += 1
            self._account_alloc(nbytes)
        if buf is None:
            try:
                buf = np.empty(capacity, dtype=np.uint8)
            except MemoryError:
                self.release_all()  # like MXNet: drop the pool and try once more
                buf = np.empty(capacity, dtype=np.uint8)
        return StorageHandle(buf, nbytes, capacity, self.ctx, True)

    def _account_alloc(self, nbytes: int) -> None:
        self.num_allocs += 1
        self.in_use += nbytes
        if self.in_use > self.peak:
            self.peak = self.in_use

    def free(self, handle: StorageHandle) -> None:
        """Put ``handle``'s block back in the pool (or release it when unpooled)."""
        if not handle.pooled or self.strategy == "unpooled":
            self._release_handle(handle)
            return
        with self._lock:
            self._check_free(handle)
            handle.freed = True
            self.in_use -= handle.size
            if self._warm(handle.capacity) and (self.cap is None or self._fits(handle.capacity)):
                self._free[handle.capacity].append(handle.buffer)
                self._pooled += handle.capacity
        handle.buffer = None  # a block the pool does not keep goes back to the system with its last reference

    def _fits(self, capacity: int, keep_parked: int | None = None) -> bool:
        """Make room for ``capacity`` more bytes under the cap, releasing the free blocks, then the
        parked blocks (but those of size ``keep_parked``), of the least recently used sizes; False
        when it cannot fit (caller holds the lock)."""
        cap = self.cap
        if capacity > cap:
            return False
        if self._pooled + capacity <= cap:
            return True
        for size in sorted(self._free, key=lambda c: self._used.get(c, -1)):
            blocks = self._free[size]
            while blocks and self._pooled + capacity > cap:
                blocks.pop(0)
                self._pooled -= size
            if not blocks:
                self._drop_free(size)
            if self._pooled + capacity <= cap:
                return True
        for size, parked in sorted(self._parked.items(), key=self._parked_tick):
            if size == keep_parked:
                continue
            while parked and self._pooled + capacity > cap:
                self._drop_parked_entry(parked.popleft())
            if not parked:
                self._drop_parked(size)
            if self._pooled + capacity <= cap:
                return True
        return False

    def _parked_tick(self, item: tuple) -> int:
        parked = item[1]
        return self._used.get(parked[0][0].capacity, -1) if parked else -1

    def _warm(self, capacity: int) -> bool:
        """Whether a block of ``capacity`` may be pooled: its size class was asked for recently."""
        return self.cold is None or capacity in self._used

    def _request(self, capacity: int) -> None:
        """Count one pooled request of ``capacity``; now and then (a quarter of the idle limit),
        release the size classes gone cold (lock held)."""
        self._tick += 1
        last = self._used.get(capacity)
        if last is None:
            last = self._ghosts.pop(capacity, None)  # a miss that a longer horizon would have served
        if last is not None:
            self._reused(last)
        self._used[capacity] = self._tick
        if self.cold is not None and self._tick >= self._next_sweep:
            self._release_cold()
            self._next_sweep = self._tick + max(int(2 * self._horizon + self.cold) >> 2, 4)

    def _reused(self, last: int) -> None:
        """Track a high quantile (a step up 8 times a step down: ~89%) of the reuse distances: a size class
        shared by chance between two shapes far apart must not keep every size warm."""
        d, h = self._tick - last, self._horizon
        if d > h:
            self._horizon = min(float(d), h + max(h / 8, 1.0))
        else:
            self._horizon = h - h / 64

    def _release_cold(self) -> None:
        oldest = self._tick - 2 * self._horizon - self.cold
        for capacity in [k for k, t in self._used.items() if t < oldest]:
            self._ghosts[capacity] = self._used.pop(capacity)
            self._pooled -= capacity * len(self._free.get(capacity, ()))
            self._drop_free(capacity)
        for size in [k for k, v in self._parked.items() if self._parked_tick((k, v)) < oldest]:
            for entry in self._parked[size]:
                self._drop_parked_entry(entry)
            self._drop_parked(size)
        if len(self._ghosts) > 4096:  # remember the most recent half
            for capacity in list(self._ghosts)[:2048]:
                del self._ghosts[capacity]

    def _drop_free(self, capacity: int) -> None:
        self._free.pop(capacity, None)

    def _drop_parked(self, size: int) -> None:
        self._parked.pop(size, None)

    def _drop_parked_entry(self, entry: tuple) -> None:
        """Release a parked block: its pending ops keep their own references to the memory, which
        goes back to the system when the last of them finishes (lock held)."""
        handle = entry[0]
        handle.freed = True
        handle.buffer = None
        self._pooled -= handle.capacity

    def park(self, handle: StorageHandle, var) -> tuple | None:
        """Keep the block of a dead array whose ops on ``var`` are still pending, for the next
        op output of the same size.  Returns the entry (``(handle, var)``) the caller must
        free through the engine instead: this one when parking is off, or the oldest parked
        one of the size when more than ``park_depth`` wait."""
        if not handle.pooled or self.strategy == "unpooled" or self.park_depth <= 0:
            return handle, var
        with self._lock:
            self._check_free(handle)
            self.in_use -= handle.size
            parked = self._parked.get(handle.size)
            if parked is None:
                parked = self._parked[handle.size] = deque()
            if not self._warm(handle.capacity) or (
                    self.cap is not None and not self._fits(handle.capacity, keep_parked=handle.size) and not parked):
                self.in_use += handle.size  # in use until its pushed free runs
                if not parked:
                    self._drop_parked(handle.size)
                return handle, var  # a cold size, or over the cap on its own: freed after its ops
            self._pooled += handle.capacity
            parked.append((handle, var))
            if len(parked) <= self.park_depth and (self.cap is None or self._pooled <= self.cap):
                return None
            old = parked.popleft()
            self.in_use += old[0].size  # in use again until its pushed free runs
            self._pooled -= old[0].capacity
            return old

    def take_parked(self, nbytes: int) -> tuple | None:
        """A parked block of exactly ``nbytes`` and its var (order writes after it), or None: the
        newest but ``park_lag`` (the warmest one that leaves ``park_lag`` outputs in flight)."""
        with self._lock:
            parked = self._parked.get(nbytes)
            lag = self.park_lag
            if not parked or len(parked) <= lag:
                return None
            handle, var = parked[-1 - lag]
            self._request(handle.capacity)
            if nbytes not in self._parked:  # just gone cold
                return None
            del parked[-1 - lag]
            self._pooled -= handle.capacity
            self.num_pool_hits += 1
            self._account_alloc(nbytes)
            return handle, var

    def release_all(self) -> None:
        with self._lock:
            self._free.clear()
            self._used.clear()
            self._ghosts.clear()
            self._parked.clear()  # pending ops hold their own references to the memory
            self._pooled = 0

    def pooled_bytes(self) -> int:
        return self._pooled


class GPUStorage(Storage):
    """Device memory through CuPy's memory pool, which already pools per stream.

    We keep the pool CuPy owns (other CuPy code shares it) and add MXNet's
    statistics and ``release_all`` on top.
    """

    def __init__(self, ctx: Context):
        super().__init__(ctx)
        try:
            import cupy
        except ImportError as exc:
            raise MXAsyncError(f"{ctx}: CuPy is not installed (pip install 'mxasync[gpu]')") from exc
        self._cupy = cupy
        self._pool = cupy.get_default_memory_pool()

    def alloc(self, nbytes: int) -> StorageHandle:
        nbytes = int(nbytes)
        with self._cupy.cuda.Device(self.ctx.device_id):
            ptr = self._pool.malloc(nbytes)
        with self._lock:
            self.num_allocs += 1
            self.in_use += nbytes
            self.peak = max(self.peak, self.in_use)
        return StorageHandle(ptr, nbytes, nbytes, self.ctx, True)

    def free(self, handle: StorageHandle) -> None:
        # Dropping the MemoryPointer hands the block back to CuPy's pool.
        self._release_handle(handle)

    def release_all(self) -> None:
        self._pool.free_all_blocks()

    def pooled_bytes(self) -> int:
        return int(self._pool.total_bytes() - self._pool.used_bytes())


# device type -> Storage class (or factory of ctx); host memory (CPUStorage) for the others
_FACTORIES: dict = {"gpu": GPUStorage}
_REGISTERED: set[str] = set()  # device types whose backend registered its storage (register_storage)


def register_storage(device_type: str, factory) -> None:
    """The storage hook of a device type: ``factory(ctx)`` gives its :class:`Storage` (host memory by default).

    A backend plugin whose device holds its own memory registers it in ``Backend.start()``;
    every array of the device type then comes from ``Storage.get(ctx).alloc(nbytes)``, viewed
    as an array by the backend's ``from_storage(handle, shape, dtype)``, and its block goes
    back through ``free(handle)`` once the ops using it have finished.
    """
    if not callable(factory):
        raise MXAsyncError(f"register_storage({device_type!r}, factory): factory must be a Storage class or a "
                           f"callable of ctx, got {factory!r}")
    with Storage._instances_lock:
        if _FACTORIES.get(device_type) is not factory:  # another storage: the next Storage.get builds it
            for ctx in [c for c in Storage._instances if c.device_type == device_type]:
                del Storage._instances[ctx]
        _FACTORIES[device_type] = factory
        _REGISTERED.add(device_type)


def has_registered_storage(device_type: str) -> bool:
    """Whether a backend registered the storage of ``device_type`` (its arrays then come from it)."""
    return device_type in _REGISTERED
