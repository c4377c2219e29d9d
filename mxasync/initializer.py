"""Parameter initializers (``mx.init`` / ``mx.initializer``), MXNet 1.9's classes and dispatch.

An initializer is called as ``init(InitDesc(name, attrs), arr)`` and fills the
NDArray in place through engine ops. The name picks the rule: ``*weight`` ->
``_init_weight`` (what the subclass defines), ``*bias``/``*beta`` -> 0,
``*gamma`` -> 1, ``*min`` -> 0, ``*max`` -> 1, and an ``__init__`` attribute
on the descriptor (``mx.sym.Variable(init=...)``) overrides all of them.
Unlike MXNet, the InitDesc path also knows BatchNorm's aux states
(``*moving_mean``/``*moving_inv_var``/``*moving_avg`` -> 0, ``*moving_var`` -> 1),
because our symbols do not attach MXNet's per-op ``__init__`` attributes to them.

>>> import mxasync as mx
>>> from mxasync import initializer as init
>>> w, b = mx.nd.empty((2, 3)), mx.nd.empty((2,))
>>> init.Constant(0.5)(init.InitDesc("fc_weight"), w); init.Constant(0.5)(init.InitDesc("fc_bias"), b)
>>> w.asnumpy()[0].tolist(), b.asnumpy().tolist()
([0.5, 0.5, 0.5], [0.0, 0.0])
"""

from __future__ import annotations

import json
import logging
import re
import warnings
from math import sqrt

import numpy as np

from . import ndarray as nd
from .ndarray import NDArray
from .registry import ClassRegistry

__all__ = ["InitDesc", "Initializer", "register", "alias", "create", "Load", "Mixed", "Zero", "One", "Constant",
           "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu", "Bilinear", "LSTMBias"]

_REGISTRY = ClassRegistry("initializer")
register = _REGISTRY.register
alias = _REGISTRY.alias


class InitDesc(str):
    """A parameter name carrying its attributes (``attrs``) and the global initializer (``global_init``)."""

    attrs: dict
    global_init: Initializer | None

    def __new__(cls, name: str, attrs: dict | None = None, global_init: Initializer | None = None) -> InitDesc:
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


def create(init, **kwargs) -> Initializer:
    """An initializer from an instance, a registered name, or a ``dumps()`` JSON string."""
    if isinstance(init, Initializer):
        return init
    if not isinstance(init, str):
        raise TypeError(f"create: expected an Initializer or a name, got {type(init).__name__}")
    if init.startswith("["):
        name, kwargs = json.loads(init)
    else:
        name = init
    return _REGISTRY.find(name)(**kwargs)


_BY_SUFFIX = (("weight", "_init_weight"), ("bias", "_init_bias"), ("gamma", "_init_gamma"), ("beta", "_init_beta"),
              ("min", "_init_zero"), ("max", "_init_one"), ("moving_mean", "_init_zero"), ("moving_var", "_init_one"),
              ("moving_inv_var", "_init_zero"), ("moving_avg", "_init_zero"))


class Initializer:
    """Base class; subclasses define ``_init_weight(name, arr)``."""

    def __init__(self, **kwargs) -> None:
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose: bool = False, print_func=None) -> Initializer:
        """Log a statistic of every array initialized (by default its RMS)."""
        self._verbose = verbose
        self._print_func = print_func or (lambda x: str(float(np.sqrt(np.mean(x.asnumpy() ** 2)))))
        return self

    def _verbose_print(self, desc, init, arr) -> None:
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self) -> str:
        """``'["name", {kwargs}]'``, what ``create`` and ``Variable(init=...)`` read back."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, desc, arr: NDArray) -> None:
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, method in _BY_SUFFIX:
            if desc.endswith(suffix):
                getattr(self, method)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name, arr) -> None:
        # MXNet's old init(str, arr) form: same rules plus upsampling/stn special cases
        warnings.warn("Calling initializer with init(str, NDArray) has been deprecated. "
                      "please use init(mx.init.InitDesc(...), NDArray) instead.", DeprecationWarning, stacklevel=3)
        if not isinstance(name, str):
            raise TypeError("name must be string")
        if not isinstance(arr, NDArray):
            raise TypeError("arr must be NDArray")
        if name.startswith("upsampling"):
            self._init_bilinear(name, arr)
        elif name.startswith("stn_loc") and name.endswith("weight"):
            self._init_zero(name, arr)
        elif name.startswith("stn_loc") and name.endswith("bias"):
            arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])
        else:
            self(InitDesc(name), arr)

    def _init_bilinear(self, _, arr) -> None:
        arr[:] = _bilinear(arr.shape)

    def _init_zero(self, _, arr) -> None:
        arr[:] = 0.0

    def _init_one(self, _, arr) -> None:
        arr[:] = 1.0

    _init_bias = _init_zero
    _init_beta = _init_zero
    _init_gamma = _init_one

    def _init_weight(self, name, arr) -> None:
        raise NotImplementedError("Must override it")

    def _init_default(self, name, _) -> None:
        raise ValueError(f"Unknown initialization pattern for {name}. Default initialization is now limited to "
                         '"weight", "bias", "gamma" (1.0), and "beta" (0.0). Please use '
                         "mx.sym.Variable(init=mx.init.*) to set initialization pattern")

    def __eq__(self, other) -> bool:
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__


def _bilinear(shape) -> np.ndarray:
    """The bilinear upsampling kernel over the last two axes of ``shape``."""
    f = np.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    x = np.arange(shape[3])
    y = np.arange(shape[2])
    kernel = np.outer(1 - np.abs(y / f - c), 1 - np.abs(x / f - c))
    return np.broadcast_to(kernel, shape).astype(np.float32)


class Load:
    """Initialize from saved arrays (a dict or a ``.params`` file; ``arg:``/``aux:`` prefixes dropped).

    Names not found go to ``default_init``; a shape mismatch is an error.
    """

    def __init__(self, param, default_init=None, verbose: bool = False) -> None:
        if isinstance(param, str):
            param = nd.load(param)
        if not isinstance(param, dict):
            raise TypeError(f"Load: param must be a dict or a file name, got {type(param).__name__}")
        self.param = {(k[4:] if k.startswith(("arg:", "aux:")) else k): v for k, v in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr: NDArray) -> None:
        if name in self.param:
            src = self.param[name]
            if tuple(arr.shape) != tuple(src.shape):
                raise ValueError(f"Parameter {name} cannot be initialized from loading. Shape mismatch, "
                                 f"target {tuple(arr.shape)} vs loaded {tuple(src.shape)}")
            arr[:] = src if isinstance(src, NDArray) else np.asarray(src)
            if self.verbose:
                logging.info("Initialized %s by loading", name)
            return
        if self.default_init is None:
            raise ValueError(f"Cannot Initialize {name}. Not found in loaded param and no default Initializer "
                             "is provided.")
        self.default_init(name, arr)
        if self.verbose:
            logging.info("Initialized %s by default", name)


class Mixed:
    """Pick the initializer of the first regex in ``patterns`` that matches the name (``re.match``)."""

    def __init__(self, patterns: list[str], initializers: list) -> None:
        if len(patterns) != len(initializers):
            raise ValueError(f"Mixed: {len(patterns)} patterns but {len(initializers)} initializers")
        self.map = list(zip([re.compile(p) for p in patterns], initializers, strict=True))

    def __call__(self, name, arr: NDArray) -> None:
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise ValueError(f"Parameter name {name} did not match any pattern. Consider add a \".*\" pattern at the "
                         "end with default Initializer.")


@register
@alias("zeros")
class Zero(Initializer):
    """Fill with 0."""

    def _init_weight(self, _, arr) -> None:
        arr[:] = 0


@register
@alias("ones")
class One(Initializer):
    """Fill with 1."""

    def _init_weight(self, _, arr) -> None:
        arr[:] = 1


@register
class Constant(Initializer):
    """Fill with ``value`` (a scalar or anything that broadcasts to the shape)."""

    def __init__(self, value) -> None:
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr) -> None:
        arr[:] = self.value

    def dumps(self) -> str:
        val = self._kwargs["value"]
        if not np.isscalar(val):
            self._kwargs["value"] = val.asnumpy().tolist() if isinstance(val, NDArray) else np.asarray(val).tolist()
        return json.dumps([type(self).__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """U(-scale, scale)."""

    def __init__(self, scale: float = 0.07) -> None:
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr) -> None:
        nd.random.uniform(-self.scale, self.scale, arr.shape, out=arr)


@register
class Normal(Initializer):
    """N(0, sigma**2)."""

    def __init__(self, sigma: float = 0.01) -> None:
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr) -> None:
        nd.random.normal(0, self.sigma, arr.shape, out=arr)


@register
class Orthogonal(Initializer):
    """A scaled orthogonal matrix from the SVD of a random one (Saxe et al. 2013)."""

    def __init__(self, scale: float = 1.414, rand_type: str = "uniform") -> None:
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr) -> None:
        nout, nin = arr.shape[0], int(np.prod(arr.shape[1:]))
        if self.rand_type == "uniform":
            tmp = nd.random.uniform(-1.0, 1.0, shape=(nout, nin)).asnumpy()
        elif self.rand_type == "normal":
            tmp = nd.random.normal(0.0, 1.0, shape=(nout, nin)).asnumpy()
        else:
            raise ValueError(f"Orthogonal: unknown rand_type {self.rand_type!r}")
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = self.scale * res.reshape(arr.shape)


@register
class Xavier(Initializer):
    """Glorot & Bengio: scale ``sqrt(magnitude / factor)`` with factor from fan_in, fan_out or their mean.

    ``rnd_type`` "uniform" draws U(-scale, scale), "gaussian" N(0, scale**2).
    """

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3) -> None:
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr) -> None:
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError(f"Xavier initializer cannot be applied to vector {name}. It requires at least 2D.")
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factors = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}
        if self.factor_type not in factors:
            raise ValueError("Incorrect factor type")
        scale = sqrt(self.magnitude / factors[self.factor_type])
        if self.rnd_type == "uniform":
            nd.random.uniform(-scale, scale, arr.shape, out=arr)
        elif self.rnd_type == "gaussian":
            nd.random.normal(0, scale, arr.shape, out=arr)
        else:
            raise ValueError("Unknown random type")


@register
class MSRAPrelu(Xavier):
    """He et al.'s initialization for PReLU nets: gaussian Xavier with magnitude ``2 / (1 + slope**2)``."""

    def __init__(self, factor_type: str = "avg", slope: float = 0.25) -> None:
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope**2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """Bilinear upsampling kernels (for Deconvolution weights)."""

    def _init_weight(self, _, arr) -> None:
        arr[:] = _bilinear(arr.shape)


@register
class LSTMBias(Initializer):
    """Zero bias except the forget gate's quarter, set to ``forget_bias``."""

    def __init__(self, forget_bias: float = 1.0) -> None:
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr) -> None:
        arr[:] = 0.0
        num_hidden = arr.shape[0] // 4
        arr[num_hidden:2 * num_hidden] = self.forget_bias


@register
class FusedRNN(Initializer):
    """Initialise a FusedRNNCell's flat parameter vector piece by piece: each gate's weight and bias with
    ``init`` (the global initializer when None), the LSTM forget-gate biases with ``forget_bias``."""

    def __init__(self, init, num_hidden: int, num_layers: int, mode: str, bidirectional: bool = False,
                 forget_bias: float = 1.0) -> None:
        if isinstance(init, str):
            init = create(init)
        super().__init__(init=init.dumps() if init is not None else None, num_hidden=num_hidden,
                         num_layers=num_layers, mode=mode, bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._num_hidden, self._num_layers, self._mode = num_hidden, num_layers, mode
        self._bidirectional, self._forget_bias = bidirectional, forget_bias

    def _init_weight(self, desc, arr) -> None:
        from .rnn.fused import FusedRNNCell  # the cell knows the layout; imported late (rnn builds on us)

        cell = FusedRNNCell(self._num_hidden, self._num_layers, self._mode, self._bidirectional,
                            forget_bias=self._forget_bias, prefix="")
        pieces = cell.unpack_weights({"parameters": arr})
        for name, piece in pieces.items():
            if self._mode == "lstm" and name.endswith("_f_bias"):
                piece[:] = self._forget_bias
            elif self._init is None:
                desc.global_init(InitDesc(name, global_init=desc.global_init), piece)
            else:
                self._init(InitDesc(name, global_init=desc.global_init), piece)
        arr[:] = cell.pack_weights(pieces)["parameters"]
