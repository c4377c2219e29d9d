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

import numpy as _np

from ..base import MXAsyncError
from ..operator.namespace import OpNamespace as _OpNamespace
from ..runtime.context import current_context
from ..runtime.engine import Engine
from ..runtime.resource import (
    ResourceManager,
    ResourceRequest,
    seed,  # noqa: F401 - mx.nd.random.seed is mx.random.seed
)
from ._invoke import invoke
from .ndarray import NDArray, _empty
from .register import make_function as _make_op_function

__all__ = ["uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson", "negative_binomial",
           "generalized_negative_binomial", "multinomial", "shuffle", "seed", "uniform_like", "normal_like",
           "exponential_like", "gamma_like", "poisson_like", "negative_binomial_like",
           "generalized_negative_binomial_like"]


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape or (1,))


def _sample(op, ctx, out, shape, dtype, **params):
    ctx = ctx or (out.context if out is not None else current_context())
    return invoke(op, [], out=out, ctx=ctx, shape=_shape(out.shape if out is not None else shape),
                  dtype=dtype, **params)


def _per_element(op, params, shape, dtype, out):
    """MXNet's rule: NDArray parameters draw ``shape`` samples per element (the ``_sample_*`` ops)."""
    arrays = [p for p in params if isinstance(p, NDArray)]
    if len(arrays) != len(params):
        raise MXAsyncError(f"random: {op}: give every distribution parameter as an NDArray or none, got "
                           f"{[type(p).__name__ for p in params]}")
    shape = () if shape is None or shape == (1,) and out is None else _shape(shape)
    kwargs = {"shape": shape}
    if dtype is not None:
        kwargs["dtype"] = dtype
    return invoke(op, list(params), out=out, **kwargs)


def _any_array(*params) -> bool:
    return any(isinstance(p, NDArray) for p in params)


def uniform(low=0.0, high=1.0, shape=(1,), dtype=None, ctx=None, out=None, **kwargs) -> NDArray:
    """Samples from U[low, high); NDArray ``low``/``high`` give ``shape`` samples per element."""
    if _any_array(low, high):
        return _per_element("_sample_uniform", (low, high), shape, dtype, out)
    return _sample("_random_uniform", ctx, out, shape, dtype or "float32", low=float(low), high=float(high))


def normal(loc=0.0, scale=1.0, shape=(1,), dtype=None, ctx=None, out=None, **kwargs) -> NDArray:
    """Samples from N(loc, scale**2); a negative scale fails when the op runs, as in MXNet."""
    if _any_array(loc, scale):
        return _per_element("_sample_normal", (loc, scale), shape, dtype, out)
    return _sample("_random_normal", ctx, out, shape, dtype or "float32", loc=float(loc), scale=float(scale))


def randn(*shape, loc=0.0, scale=1.0, dtype=None, ctx=None, out=None, **kwargs) -> NDArray:
    """Samples from N(loc, scale**2) of the given ``shape`` (``randn(2, 3)``)."""
    return normal(loc, scale, shape or (1,), dtype, ctx, out)


def _distribution(name: str, params: tuple[str, ...], defaults: tuple[float, ...]):
    def sample(*args, shape=(1,), dtype=None, ctx=None, out=None, **kwargs):
        values = list(defaults)
        for i, a in enumerate(args[:len(params)]):
            values[i] = a
        for i, p in enumerate(params):
            if p in kwargs:
                values[i] = kwargs.pop(p)
        if _any_array(*values):
            return _per_element(f"_sample_{name}", tuple(values), shape, dtype, out)
        return _sample(f"_random_{name}", ctx, out, shape, dtype or "float32",
                       **{p: float(v) for p, v in zip(params, values, strict=True)})

    sample.__name__ = sample.__qualname__ = name
    sample.__doc__ = (f"Samples from the {name.replace('_', ' ')} distribution ({', '.join(params)}); NDArray "
                      "parameters give ``shape`` samples per element.")
    return sample


_exponential_lam = _distribution("exponential", ("lam",), (1.0,))


def exponential(scale=1.0, shape=(1,), dtype=None, ctx=None, out=None, **kwargs) -> NDArray:
    """Samples from the exponential distribution of mean ``scale`` (MXNet's front end: the op takes
    ``lam = 1 / scale``); an NDArray ``scale`` gives ``shape`` samples per element."""
    lam = kwargs.pop("lam", None)
    return _exponential_lam(1.0 / scale if lam is None else lam, shape=shape, dtype=dtype, ctx=ctx, out=out)
gamma = _distribution("gamma", ("alpha", "beta"), (1.0, 1.0))
poisson = _distribution("poisson", ("lam",), (1.0,))
negative_binomial = _distribution("negative_binomial", ("k", "p"), (1.0, 1.0))
generalized_negative_binomial = _distribution("generalized_negative_binomial", ("mu", "alpha"), (1.0, 1.0))


def multinomial(data: NDArray, shape=(), get_prob: bool = False, out=None, dtype="int32", **kwargs):
    """Category indices drawn from the probabilities in the last axis of ``data``."""
    return invoke("_sample_multinomial", [data], out=out, shape=_shape(shape) if shape else (),
                  get_prob=get_prob, dtype=dtype)


def randint(low, high, shape=(1,), dtype=None, ctx=None, out=None, **kwargs) -> NDArray:
    """Integers in [low, high)."""
    if high <= low:
        raise MXAsyncError(f"random.randint: high ({high}) must be greater than low ({low})")
    return _sample("_random_randint", ctx, out, shape, dtype or "int32", low=int(low), high=int(high))


def shuffle(data: NDArray, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """A copy of ``data`` with its first axis shuffled (``mx.nd.random.shuffle``; ``name`` is MXNet's, unused)."""
    if not isinstance(data, NDArray):
        raise MXAsyncError(f"random.shuffle: data must be an NDArray, got {type(data).__name__}")
    ctx = data.context
    res = ResourceManager.get().request(ctx, ResourceRequest.RANDOM)
    result = out if out is not None else _empty(data.shape, data.dtype, ctx)
    src, dst = data._data, result._data

    def run(rctx):
        perm = res.get_random().permutation(src.shape[0]) if src.ndim else _np.zeros(0, _np.int64)
        if isinstance(src, _np.ndarray):
            dst[...] = src[perm]
        else:  # device arrays take a device index
            import cupy

            dst[...] = src[cupy.asarray(perm)]

    reads = [] if data._chunk is result._chunk else [data._chunk.var]
    Engine.get().push_sync(run, ctx, reads, [result._chunk.var, res.var], name="_shuffle")
    return result


def _like(dist: str, params: tuple[tuple[str, float], ...]):
    def sample(data: NDArray, *args, out: NDArray | None = None, **kwargs) -> NDArray:
        if not isinstance(data, NDArray):
            raise MXAsyncError(f"random.{dist}_like: data must be an NDArray, got {type(data).__name__}")
        values = {n: float(kwargs.pop(n, args[i] if i < len(args) else d)) for i, (n, d) in enumerate(params)}
        return invoke(f"_random_{dist}_like", [data], out=out, **values)

    sample.__name__ = sample.__qualname__ = f"{dist}_like"
    sample.__doc__ = (f"Samples from the {dist.replace('_', ' ')} distribution with the shape and dtype of "
                      "``data``.")
    return sample


uniform_like = _like("uniform", (("low", 0.0), ("high", 1.0)))
normal_like = _like("normal", (("loc", 0.0), ("scale", 1.0)))
exponential_like = _like("exponential", (("lam", 1.0),))
gamma_like = _like("gamma", (("alpha", 1.0), ("beta", 1.0)))
poisson_like = _like("poisson", (("lam", 1.0),))
negative_binomial_like = _like("negative_binomial", (("k", 1.0), ("p", 1.0)))
generalized_negative_binomial_like = _like("generalized_negative_binomial", (("mu", 1.0), ("alpha", 1.0)))

# The densities: MXNet 1.9.1 names them only mx.nd.random_pdf_<dist>; mx.nd.random.pdf_<dist> is the same op,
# made on first use (its op family loads then; operator/namespace.py).
_pdfs = _OpNamespace(globals(), _make_op_function, "_random_pdf_", shown_as="pdf_")
__all__ += sorted(_pdfs.names())

__getattr__, __dir__ = _pdfs.module_hooks(__name__)
