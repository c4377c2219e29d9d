"""``mx.sym.random``: symbolic samplers with MXNet 1.9's signatures.

Scalar parameters give ``_random_<dist>`` nodes of ``shape``; Symbol parameters give
``_sample_<dist>`` nodes (``shape`` draws per parameter element); ``*_like`` take the shape
and dtype of ``data``.

>>> import mxasync as mx
>>> s = mx.sym.random.uniform(low=-1, high=1, shape=(2, 3))
>>> s.infer_shape()[1]
[(2, 3)]
"""

from __future__ import annotations

from typing import Any

from ..base import MXAsyncError
from ..operator.namespace import OpNamespace as _OpNamespace
from .register import create
from .register import make_function as _make_op_function
from .symbol import Symbol

__all__ = ["uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson", "negative_binomial",
           "generalized_negative_binomial", "multinomial", "shuffle", "uniform_like", "normal_like",
           "exponential_like", "gamma_like", "poisson_like", "negative_binomial_like",
           "generalized_negative_binomial_like"]


def _options(shape, dtype, ctx, kwargs: dict) -> dict:
    opts = dict(kwargs)
    if shape is not None:
        opts["shape"] = (shape,) if isinstance(shape, int) else tuple(shape)
    if dtype is not None:
        opts["dtype"] = dtype
    if ctx is not None:
        opts["ctx"] = str(ctx)
    return opts


def _sampler(dist: str, params: tuple[tuple[str, float], ...], sample_args: tuple[str, ...] | None = None):
    names = tuple(n for n, _ in params)

    def sample(*args: Any, shape=None, dtype=None, ctx=None, name=None, attr=None, **kwargs):
        values = [d for _, d in params]
        for i, a in enumerate(args[:len(names)]):
            values[i] = a
        extra = args[len(names):]  # MXNet's order goes on with shape, then dtype
        if len(extra) > 2:
            raise MXAsyncError(f"sym.random.{dist}: takes {', '.join(names)}, shape and dtype positionally, "
                               f"got {len(args)} positional arguments")
        if extra:
            shape = extra[0] if shape is None else shape
        if len(extra) > 1:
            dtype = extra[1] if dtype is None else dtype
        for i, n in enumerate(names):
            if n in kwargs:
                values[i] = kwargs.pop(n)
        if any(isinstance(v, Symbol) for v in values):
            if not all(isinstance(v, Symbol) for v in values):
                raise MXAsyncError(f"sym.random.{dist}: give every parameter as a Symbol or none "
                                   f"({', '.join(names)})")
            opts = _options(shape, dtype, None, kwargs)
            return create(f"_sample_{dist}", list(values), opts, name=name, attr=attr)
        # MXNet composes an op without inputs dropping the Symbols it is given (test_random passes data=)
        opts = _options(shape, dtype, ctx, {k: v for k, v in kwargs.items() if not isinstance(v, Symbol)})
        opts.update({n: float(v) for n, v in zip(names, values, strict=True)})
        return create(f"_random_{dist}", [], opts, name=name, attr=attr)

    sample.__name__ = sample.__qualname__ = dist
    sample.__doc__ = (f"Samples from the {dist.replace('_', ' ')} distribution ({', '.join(names)}): "
                      "scalars give ``shape`` draws, Symbols ``shape`` draws per element.")
    return sample


def _like(dist: str, params: tuple[tuple[str, float], ...]):
    names = tuple(n for n, _ in params)

    def sample(data: Symbol | None = None, *args: Any, name=None, attr=None, **kwargs):
        if not isinstance(data, Symbol):
            raise MXAsyncError(f"sym.random.{dist}_like: data must be a Symbol, got {type(data).__name__}")
        opts = {n: float(kwargs.pop(n, args[i] if i < len(args) else d)) for i, (n, d) in enumerate(params)}
        opts.update(kwargs)
        return create(f"_random_{dist}_like", [data], opts, name=name, attr=attr)

    sample.__name__ = sample.__qualname__ = f"{dist}_like"
    sample.__doc__ = (f"Samples from the {dist.replace('_', ' ')} distribution ({', '.join(names)}) with the "
                      "shape and dtype of ``data``.")
    return sample


_UNIFORM = (("low", 0.0), ("high", 1.0))
_NORMAL = (("loc", 0.0), ("scale", 1.0))
_EXPONENTIAL = (("lam", 1.0),)
_GAMMA = (("alpha", 1.0), ("beta", 1.0))
_POISSON = (("lam", 1.0),)
_NEG_BINOMIAL = (("k", 1.0), ("p", 1.0))
_GEN_NEG_BINOMIAL = (("mu", 1.0), ("alpha", 1.0))

uniform = _sampler("uniform", _UNIFORM)
normal = _sampler("normal", _NORMAL)
_exponential_lam = _sampler("exponential", _EXPONENTIAL)


def exponential(scale=1.0, shape=None, dtype=None, **kwargs):
    """Samples from the exponential distribution of mean ``scale`` (MXNet's front end: the op takes
    ``lam = 1 / scale``); a Symbol ``scale`` gives ``shape`` samples per element."""
    lam = kwargs.pop("lam", None)
    return _exponential_lam(1.0 / scale if lam is None else lam, shape=shape, dtype=dtype, **kwargs)
gamma = _sampler("gamma", _GAMMA)
poisson = _sampler("poisson", _POISSON)
negative_binomial = _sampler("negative_binomial", _NEG_BINOMIAL)
generalized_negative_binomial = _sampler("generalized_negative_binomial", _GEN_NEG_BINOMIAL)
uniform_like = _like("uniform", _UNIFORM)
normal_like = _like("normal", _NORMAL)
exponential_like = _like("exponential", _EXPONENTIAL)
gamma_like = _like("gamma", _GAMMA)
poisson_like = _like("poisson", _POISSON)
negative_binomial_like = _like("negative_binomial", _NEG_BINOMIAL)
generalized_negative_binomial_like = _like("generalized_negative_binomial", _GEN_NEG_BINOMIAL)


def randn(*shape: int, loc=0.0, scale=1.0, dtype=None, ctx=None, name=None, attr=None, **kwargs):
    """N(loc, scale**2) samples of the given ``shape`` (``randn(2, 3)``; none: the graph gives it, as in MXNet)."""
    return normal(loc, scale, shape=shape, dtype=dtype, ctx=ctx, name=name, attr=attr, **kwargs)


def randint(low: int, high: int, shape=None, dtype=None, ctx=None, name=None, attr=None, **kwargs):
    """Integers drawn uniformly from ``[low, high)``."""
    opts = _options(shape, dtype, ctx, kwargs)
    opts.update(low=int(low), high=int(high))
    return create("_random_randint", [], opts, name=name, attr=attr)


def multinomial(data: Symbol, shape=None, get_prob: bool = False, dtype="int32", name=None, attr=None, **kwargs):
    """Category indices drawn from the probabilities in the last axis of ``data``."""
    opts = _options(shape, dtype, None, kwargs)
    opts["get_prob"] = get_prob
    return create("_sample_multinomial", [data], opts, name=name, attr=attr)


def shuffle(data: Symbol, name=None, attr=None, **kwargs):
    """``data`` with its first axis randomly permuted."""
    return create("_shuffle", [data], kwargs, name=name, attr=attr)

# The densities: MXNet 1.9.1 names them only mx.sym.random_pdf_<dist>; mx.sym.random.pdf_<dist> is the same op,
# made on first use (its op family loads then; operator/namespace.py).
_pdfs = _OpNamespace(globals(), _make_op_function, "_random_pdf_", shown_as="pdf_")
__all__ += sorted(_pdfs.names())

__getattr__, __dir__ = _pdfs.module_hooks(__name__)
