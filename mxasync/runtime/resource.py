"""Resources the engine hands to ops: seeded random generators and temp space.

An op that samples or needs scratch memory asks for a :class:`ResourceRequest`
and lists the returned resource's ``var`` among the vars it *mutates*.  That
one rule gives both safety and reproducibility:

* ops sharing a temp-space buffer are serialized by its var;
* ops drawing from a generator run in push order, and ``mx.random.seed(n)`` is
  itself an op that mutates those vars, so "seed, then sample" repeats exactly
  however the engine schedules other work.

Per context there is one RANDOM generator, one PARALLEL_RANDOM set and a few
TEMP_SPACE buffers (``MXNET_CPU_TEMP_COPY``, default 4; ``MXNET_GPU_TEMP_COPY``,
default 1), handed out round-robin.

>>> import mxasync as mx
>>> from mxasync.runtime.resource import ResourceManager, ResourceRequest
>>> res = ResourceManager.get().request(mx.cpu(), ResourceRequest.RANDOM)
>>> eng = mx.engine.get(); draws = []
>>> def sample(rctx): draws.append(res.get_random().integers(0, 1 << 30))
>>> for _ in range(2):
...     mx.random.seed(42)
...     eng.push_sync(sample, mx.cpu(), mutate_vars=[res.var])
>>> eng.wait_for_all(); bool(draws[0] == draws[1])
True
"""

from __future__ import annotations

import enum
import itertools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..base import MXAsyncError, env_int
from .context import Context
from .engine import Engine
from .engine.threads import default_worker_threads

__all__ = ["ResourceRequest", "Resource", "ResourceManager", "register_resource_factory", "seed"]


class ResourceRequest(enum.IntEnum):
    RANDOM = 0
    TEMP_SPACE = 1
    PARALLEL_RANDOM = 2


def _numpy_generator(seed_seq: np.random.SeedSequence, ctx: Context) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed_seq))


def _numpy_space(nbytes: int, ctx: Context):
    return np.empty(nbytes, dtype=np.uint8)


# device type -> (make_generator(seed_seq, ctx), make_space(nbytes, ctx)); backends add theirs.
_FACTORIES: dict[str, tuple[Callable, Callable]] = {
    "cpu": (_numpy_generator, _numpy_space),
    "cpu_pinned": (_numpy_generator, _numpy_space),
    "cpu_shared": (_numpy_generator, _numpy_space),
}


def register_resource_factory(device_type: str, make_generator: Callable, make_space: Callable) -> None:
    """Let a backend supply generators and scratch buffers for its device type."""
    _FACTORIES[device_type] = (make_generator, make_space)


def _factories(ctx: Context) -> tuple[Callable, Callable]:
    try:
        return _FACTORIES[ctx.device_type]
    except KeyError:
        raise MXAsyncError(f"no resource factory for {ctx}: is its backend installed and loaded?") from None


class Resource:
    """One resource of one context, guarded by ``var``."""

    __slots__ = ("req", "ctx", "var", "_state", "_space")

    def __init__(self, req: ResourceRequest, ctx: Context, var, state: Any = None):
        self.req = req
        self.ctx = ctx
        self.var = var
        self._state = state
        self._space = None

    def get_random(self):
        """The generator (``numpy.random.Generator`` on CPU); only inside an op that mutates ``var``."""
        if self.req is not ResourceRequest.RANDOM:
            raise MXAsyncError(f"get_random() on a {self.req.name} resource")
        return self._state

    def get_parallel_random(self) -> list:
        """Independent generators, one per parallel worker."""
        if self.req is not ResourceRequest.PARALLEL_RANDOM:
            raise MXAsyncError(f"get_parallel_random() on a {self.req.name} resource")
        return self._state

    def get_space(self, shape, dtype="float32"):
        """A scratch array of ``shape``/``dtype`` on this context, valid until the op finishes.

        The buffer grows as needed and is reused by later ops that hold this resource.
        """
        if self.req is not ResourceRequest.TEMP_SPACE:
            raise MXAsyncError(f"get_space() on a {self.req.name} resource")
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        space = self._space
        if space is None or space.nbytes < nbytes:
            space = self._space = _factories(self.ctx)[1](max(nbytes, 1), self.ctx)
        return space[:nbytes].view(dtype).reshape(shape)

    def __repr__(self) -> str:
        return f"<Resource {self.req.name} on {self.ctx}>"


class ResourceManager:
    """Per-context resources; ``ResourceManager.get()`` is the process-wide one."""

    _instance: ResourceManager | None = None
    _instance_lock = threading.Lock()

    @classmethod
    def get(cls) -> ResourceManager:
        if cls._instance is None:
            with cls._instance_lock:
                if cls._instance is None:
                    cls._instance = ResourceManager()
        return cls._instance

    def __init__(self):
        self._lock = threading.Lock()
        self.global_seed = env_int(0, "MXASYNC_SEED")
        self._random: dict[Context, Resource] = {}
        self._parallel: dict[Context, Resource] = {}
        self._temp: dict[Context, list[Resource]] = {}
        self._temp_next: dict[Context, itertools.count] = {}

    @staticmethod
    def _seed_seq(seed: int, ctx: Context, stream: int) -> np.random.SeedSequence:
        # distinct, reproducible streams per (seed, device, purpose)
        return np.random.SeedSequence([int(seed) & 0xFFFFFFFFFFFFFFFF, ctx.device_typeid, ctx.device_id, stream])

    def _new_random(self, ctx: Context, seed: int) -> Resource:
        gen = _factories(ctx)[0](self._seed_seq(seed, ctx, 0), ctx)
        return Resource(ResourceRequest.RANDOM, ctx, self._new_var(f"random:{ctx}"), gen)

    def _make_parallel(self, seed: int, ctx: Context) -> list:
        make = _factories(ctx)[0]
        n = default_worker_threads()
        return [make(s, ctx) for s in self._seed_seq(seed, ctx, 1).spawn(n)]

    def request(self, ctx: Context, req: ResourceRequest) -> Resource:
        """The resource of kind ``req`` for ``ctx`` (created on first request)."""
        req = ResourceRequest(req)
        with self._lock:
            if req is ResourceRequest.RANDOM:
                res = self._random.get(ctx)
                if res is None:
                    res = self._random[ctx] = self._new_random(ctx, self.global_seed)
                return res
            if req is ResourceRequest.PARALLEL_RANDOM:
                res = self._parallel.get(ctx)
                if res is None:
                    gens = self._make_parallel(self.global_seed, ctx)
                    res = self._parallel[ctx] = Resource(req, ctx, self._new_var(f"parallel_random:{ctx}"), gens)
                return res
            pool = self._temp.get(ctx)
            if pool is None:
                n = max(1, env_int(1, "MXNET_GPU_TEMP_COPY") if ctx.device_type == "gpu"
                        else env_int(4, "MXNET_CPU_TEMP_COPY"))
                pool = self._temp[ctx] = [Resource(req, ctx, self._new_var(f"temp_space:{ctx}:{i}"))
                                          for i in range(n)]
                self._temp_next[ctx] = itertools.count()
            return pool[next(self._temp_next[ctx]) % len(pool)]

    @staticmethod
    def _new_var(name: str):
        return Engine.get().new_variable(name)

    def seed(self, seed: int, ctx: Context | str = "all") -> None:
        """Re-seed the generators of ``ctx`` (or of every context), ordered with the ops that sample.

        Contexts whose generators do not exist yet start from ``seed`` too.
        """
        if not isinstance(seed, (int, np.integer)):
            raise MXAsyncError(f"random.seed: seed must be an integer, got {seed!r}")
        seed = int(seed)
        eng = Engine.get()
        with self._lock:
            if ctx == "all":
                self.global_seed = seed
                targets = list(self._random.values()) + list(self._parallel.values())
            else:
                if not isinstance(ctx, Context):
                    raise MXAsyncError(f"random.seed: ctx must be a Context or 'all', got {ctx!r}")
                targets = [r for r in (self._random.get(ctx), self._parallel.get(ctx)) if r is not None]
                if not targets:  # first use of this context will be seeded with it
                    self._random[ctx] = self._new_random(ctx, seed)
        for res in targets:
            eng.push_sync(self._reseed_fn(res, seed), res.ctx, (), [res.var], name="random.seed", inline=True)

    def _reseed_fn(self, res: Resource, seed: int):
        def reseed(rctx) -> None:
            if res.req is ResourceRequest.RANDOM:
                res._state = _factories(res.ctx)[0](self._seed_seq(seed, res.ctx, 0), res.ctx)
            else:
                res._state = self._make_parallel(seed, res.ctx)

        return reseed


def seed(seed_state: int, ctx: Context | str = "all") -> None:
    """``mx.random.seed(n)``: seed every generator the engine hands out (see :class:`ResourceManager`)."""
    ResourceManager.get().seed(seed_state, ctx)
