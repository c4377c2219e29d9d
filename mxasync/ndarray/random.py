"""``mx.nd.random``: samplers ordered on the engine, so ``mx.random.seed(n)`` then sampling repeats.

Every sampler draws from its context's RANDOM resource and lists that
resource's var among its writes: draws happen in push order whatever else runs.

>>> import mxasync as mx
>>> mx.random.seed(1); a = mx.nd.random.uniform(shape=(3,)).asnumpy()
>>> mx.random.seed(1); b = mx.nd.random.uniform(shape=(3,)).asnumpy()
>>> bool((a == b).all())
True
"""

from __future__ import annotations

import numpy as np

from ..base import MXAsyncError
from ..runtime.context import current_context
from ..runtime.engine import Engine
from ..runtime.resource import (
    ResourceManager,
    ResourceRequest,
    seed,  # noqa: F401 - mx.nd.random.seed is mx.random.seed
)
from .invoke import invoke
from .ndarray import NDArray, _empty

__all__ = ["uniform", "normal", "randint", "shuffle", "seed"]


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape or (1,))


def _sample(op, ctx, out, shape, dtype, **params):
    ctx = ctx or (out.context if out is not None else current_context())
    return invoke(op, [], out=out, ctx=ctx, shape=_shape(out.shape if out is not None else shape),
                  dtype=dtype, **params)


def uniform(low=0.0, high=1.0, shape=(1,), dtype=None, ctx=None, out=None, **kwargs) -> NDArray:
    """Samples from U[low, high)."""
    return _sample("_random_uniform", ctx, out, shape, dtype or "float32", low=float(low), high=float(high))


def normal(loc=0.0, scale=1.0, shape=(1,), dtype=None, ctx=None, out=None, **kwargs) -> NDArray:
    """Samples from N(loc, scale**2); a negative scale fails when the op runs, as in MXNet."""
    return _sample("_random_normal", ctx, out, shape, dtype or "float32", loc=float(loc), scale=float(scale))


def randint(low, high, shape=(1,), dtype=None, ctx=None, out=None, **kwargs) -> NDArray:
    """Integers in [low, high)."""
    if high <= low:
        raise MXAsyncError(f"random.randint: high ({high}) must be greater than low ({low})")
    return _sample("_random_randint", ctx, out, shape, dtype or "int32", low=int(low), high=int(high))


def shuffle(data: NDArray, out: NDArray | None = None) -> NDArray:
    """A copy of ``data`` with its first axis shuffled (``mx.nd.random.shuffle``)."""
    if not isinstance(data, NDArray):
        raise MXAsyncError(f"random.shuffle: data must be an NDArray, got {type(data).__name__}")
    ctx = data.context
    res = ResourceManager.get().request(ctx, ResourceRequest.RANDOM)
    result = out if out is not None else _empty(data.shape, data.dtype, ctx)
    src, dst = data._data, result._data

    def run(rctx):
        perm = res.get_random().permutation(src.shape[0]) if src.ndim else np.zeros(0, np.int64)
        if isinstance(src, np.ndarray):
            dst[...] = src[perm]
        else:  # device arrays take a device index
            import cupy

            dst[...] = src[cupy.asarray(perm)]

    reads = [] if data._chunk is result._chunk else [data._chunk.var]
    Engine.get().push_sync(run, ctx, reads, [result._chunk.var, res.var], name="_shuffle")
    return result
