"""``npop``: declare a NumPy-interface op (``_npi_*``) from one kernel written against ``xp``.

The NumPy interface (``mx.np``, ``mx.npx``) is a set of ops of the one registry, like any
other: pydantic params, a forward kernel and a gradient, shape and type inference. What is
particular to them is that a kernel is usually NumPy's own function called on ``xp``
(numpy on CPU, CuPy on GPU), so the shape and dtype rules are NumPy's: this helper infers
them by running the kernel on zero-stride stand-ins of the inputs (no memory is touched,
and the result is cached per param set, shapes and dtypes). Kernels that need more (a
random generator, an explicit shape rule) say so.

>>> from mxasync.operator import get_op
>>> prop = get_op("_npi_sum").prepare(axis=0)
>>> prop.infer_shape([(2, 3)])[1], prop.infer_type(["float32"])[1]
([(3,)], ['float32'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional, Union

import numpy as np
from pydantic import Field, create_model

from ...runtime.resource import ResourceRequest
from ..functional import FunctionalProperty, defop
from ..params import NoParam, OpParam

__all__ = ["npop", "Axis", "OptDType", "unbroadcast", "NumpyProperty"]

#: an axis param: None, an int or a tuple of ints
Axis = Optional[Union[int, tuple[int, ...]]]
#: a dtype param given as a name ('float32') or None
OptDType = Optional[str]

#: what each NumPy-interface param means (NumPy's own argument names, with NumPy's meaning; a few of
#: MXNet's and ours); the generated docstrings and tests/operator/test_op_docs.py read them
PARAM_DOCS: dict[str, str] = {
    "M": "the number of columns (None: N)", "N": "the number of rows",
    "UPLO": "which triangle is read: 'L' (lower) or 'U' (upper)",
    "a": "the distribution's shape parameter (or, for choice, the population size)",
    "a_max": "the upper bound (None: none)", "a_min": "the lower bound (None: none)",
    "array_params": "which distribution parameters are array inputs rather than scalar params",
    "atol": "the absolute tolerance", "axes": "the axes to work on (None: NumPy's default)",
    "axis": "the axis (or axes) to work along; None: every axis, or the flattened array",
    "axis1": "the first axis", "axis2": "the second axis", "b": "the distribution's second shape parameter",
    "base": "the base of the log space", "batch_shape": "the leading (batch) shape of the samples",
    "begin": "what goes before the differences: 'array' (an input), a number, or None",
    "bins": "the number of equal-width bins", "constant_values": "the value padded with in 'constant' mode",
    "ddof": "delta degrees of freedom: the divisor is N - ddof", "decimals": "the number of decimals to round to",
    "default_float": "the float dtype integer and boolean results take (float32, or float64 under set_np(dtype=True))",
    "descending": "sort in descending order", "destination": "where the moved axes go",
    "df": "the degrees of freedom", "dimensions": "the shape of the grid",
    "dtype": "the output data type (None: from the inputs, as MXNet 1.9)",
    "end": "what goes after the differences: 'array' (an input), a number, or None",
    "endpoint": "include ``stop`` as the last value", "equal_nan": "treat two NaNs as equal",
    "fill_value": "the value to fill with", "hermitian": "the input is Hermitian (symmetric)",
    "has_weights": "a weights input follows the data",
    "high": "the upper bound of the interval", "ind": "the number of leading axes that are the inverse's last",
    "indices": "the split points along the axis (when ``sections`` is 0)",
    "interpolation": "how a percentile between two values is computed (NumPy's method)",
    "k": "the diagonal offset (0: main; positive: above) or the number of rotations / the count to take",
    "keepdims": "keep the reduced axes as size-1 dimensions", "key": "the index, encoded as literals ('A': an index array input)",
    "kind": "which window function", "left": "the value below the first sample point (None: its value)",
    "loc": "the distribution's location (mean)", "low": "the lower bound of the interval",
    "mean": "the mean of the underlying normal distribution", "minlength": "the least length of the result", "mode": "NumPy's mode for this function",
    "msg": "the message of the ValueError raised when the condition fails", "n": "the number of repeats or trials",
    "nan": "the value NaNs become", "ndim": "the minimum number of dimensions",
    "neginf": "the value -inf becomes (None: the dtype's lowest)", "new_shape": "the shape of the result",
    "newshape": "the new shape (-1 infers one axis; npx.reshape also takes MXNet's codes -2 to -6)",
    "num": "the number of samples", "num_args": "the number of array inputs",
    "offset": "the diagonal offset", "optimize": "let einsum choose a contraction order",
    "ord": "the norm's order (NumPy's ``ord``)", "order": "the memory order ('C' only)",
    "pad_width": "the widths padded before and after each axis",
    "posinf": "the value +inf becomes (None: the dtype's largest)", "prob": "the probability of a 1",
    "pvals": "the probabilities of the categories (None: an input)", "q_scalar": "the percentile, when not an input",
    "range": "the lower and upper edges of the bins (None: the data's)", "rcond": "the cutoff for small singular values",
    "rcond_array": "``rcond`` is an array input", "repeats": "the number of repetitions",
    "replace": "sample with replacement", "reps": "the number of repetitions along each axis",
    "reverse": "match the codes from the right",
    "return_counts": "also return how often each unique value occurs",
    "return_index": "also return the indices of the first occurrences",
    "return_inverse": "also return the indices that rebuild the input", "right": "the value above the last sample point (None: its value)",
    "rtol": "the relative tolerance", "scalar": "the scalar operand (None: the op has two array inputs)",
    "scalar_is_int": "the scalar operand is a Python int (it keeps integer arithmetic)",
    "scalar_is_x": "the scalar takes the place of ``x`` (else of ``y``)",
    "reverse_scalar": "the scalar is the left operand",
    "scale": "the distribution's scale", "sections": "split into this many equal parts (0: use ``indices``)",
    "shape": "the output shape (or the distribution's shape parameter)", "shift": "the number of places to roll by",
    "sigma": "the standard deviation of the underlying normal distribution",
    "size": "the output shape of the samples (None: the parameters' broadcast shape)",
    "source": "the axes to move", "start": "the first value", "start_axis": "the first data axis the mask covers",
    "step": "the spacing between values", "stop": "the end of the interval", "subscripts": "the einsum subscripts",
    "transpose_a": "transpose the last two axes of the first input",
    "transpose_b": "transpose the last two axes of the second input",
    "value": "the fill value", "weighted": "there is a weights input",
}

_EVAL_CACHE: dict = {}
_EVAL_MAX = 8192


def unbroadcast(xp, grad, shape):
    """Sum ``grad`` down to ``shape`` (the gradient of a NumPy broadcast)."""
    shape = tuple(shape)
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, (g, s) in enumerate(zip(grad.shape, shape, strict=True)) if s == 1 and g != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad.reshape(shape)


def _stand_in(shape, dtype, kind):
    if kind == "simplex" and shape:
        return np.broadcast_to(np.full((), 1.0 / max(shape[-1], 1), dtype), shape)
    base = np.ones((), dtype) if kind in ("ones", "simplex") else np.zeros((), dtype)
    if kind == "eye" and len(shape) >= 2:
        eye = np.eye(shape[-2], shape[-1], dtype=dtype)
        return np.broadcast_to(eye, shape)
    return np.broadcast_to(base, shape)


class NumpyProperty(FunctionalProperty):
    """A :class:`FunctionalProperty` whose shapes and dtypes come from running its kernel on stand-ins."""

    stand_in: str = "zeros"
    random: bool = False
    last_shapes: tuple | None = None

    def _evaluate(self, shapes, types):
        key = (self, tuple(shapes), tuple(types))
        hit = _EVAL_CACHE.get(key)
        if hit is not None:
            return hit
        ins = [_stand_in(s, t, self.stand_in) for s, t in zip(shapes, types, strict=True)]
        try:
            with np.errstate(all="ignore"):
                if self.random:
                    res = self.fwd(np, self.params, np.random.default_rng(0), *ins)
                else:
                    res = self.fwd(np, self.params, *ins)
        except Exception as exc:  # noqa: BLE001 - reported with the op, the params and the shapes
            raise self.error(f"inputs of shapes {list(shapes)} and dtypes {[np.dtype(t).name for t in types]}: "
                             f"{type(exc).__name__}: {exc}") from None
        outs = res if isinstance(res, (tuple, list)) else (res,)
        outs = [np.asarray(o) for o in outs]
        hit = ([o.shape for o in outs], [o.dtype.name for o in outs])
        if len(_EVAL_CACHE) >= _EVAL_MAX:
            _EVAL_CACHE.clear()
        _EVAL_CACHE[key] = hit
        return hit

    def infer_shape(self, in_shapes):
        if self.shape_fn is not None:
            return super().infer_shape(in_shapes)
        if any(s is None for s in in_shapes):
            return list(in_shapes), [None] * self.num_outputs(), []
        self.last_shapes = tuple(tuple(s) for s in in_shapes)
        types = getattr(self, "_types_hint", None)
        if types is not None and len(types) == len(in_shapes):
            return list(in_shapes), self._evaluate(self.last_shapes, types)[0], []
        first = None
        for t in ("float32", "int64", "bool"):
            try:
                return list(in_shapes), self._evaluate(self.last_shapes, [t] * len(in_shapes))[0], []
            except Exception as exc:  # noqa: BLE001 - a kernel for integers or booleans only: try those
                first = first or exc
        raise first  # the float32 attempt's error: the bool one's named a dtype the caller never used

    def infer_type(self, in_types):
        if self.type_fn is not None:
            return super().infer_type(in_types)
        if any(t is None for t in in_types):
            return list(in_types), [None] * self.num_outputs(), []
        types = tuple(np.dtype(t).name for t in in_types)
        self._types_hint = types
        shapes = self.last_shapes
        if shapes is None or len(shapes) != len(in_types):
            shapes = tuple((1,) * 2 for _ in in_types)
        try:
            out_types = self._evaluate(shapes, types)[1]
        except Exception:  # noqa: BLE001 - shapes unknown here: the inputs' dtype
            out_types = [types[0] if types else "float32"] * self.num_outputs()
        return list(in_types), out_types, []

    def forward_resource(self):
        return [ResourceRequest.RANDOM] if self.random else list(self.fwd_res)


def _random_fwd(kernel):
    def fwd(xp, p, op_ctx, *ins):
        return kernel(xp, p, op_ctx.requested[0].get_random(), *ins)
    return fwd


def npop(name: str, kernel: Callable, *, params: dict[str, tuple[Any, Any]] | None = None,
         grad: Callable | None = None, arguments: tuple[str, ...] = ("a",), nout: int = 1,
         var_args: bool = False, deps: str = "og,in,out", shape: Callable | None = None,
         dtype: Callable | None = None, stand_in: str = "zeros", random: bool = False,
         aliases: tuple[str, ...] = (), doc: str = "", args: Callable | None = None,
         base: type[NumpyProperty] | None = None, shape_from_values: Callable | None = None) -> Any:
    """Register ``name`` as an op computing ``kernel(xp, p, *inputs)`` (``kernel(xp, p, rng,
    *inputs)`` with ``random=True``).

    ``params`` maps each param to ``(type, default)``; ``grad(xp, p, out_grads, inputs, outputs)``
    returns the input gradients (None: zero); ``var_args`` makes a variadic op (``num_args``).
    ``base`` is a :class:`NumpyProperty` subclass for what a kernel cannot say (outputs that
    depend on params); ``shape_from_values(prop, in_data)`` sizes the outputs of an op whose
    shapes depend on its input values (see ``OperatorProperty.shape_from_values``).
    """
    fields = dict(params or {})
    if var_args:
        fields["num_args"] = (int, 1)
    if fields:
        fields = {k: (t, Field(d, description=PARAM_DOCS.get(k))) for k, (t, d) in fields.items()}
        param_cls = create_model(name.strip("_") + "Param", __base__=OpParam, **fields)
        param_cls.__module__ = kernel.__module__
    else:
        param_cls = NoParam
    outputs = ("output",) if nout == 1 else tuple(f"output{i}" for i in range(nout))
    extra: dict[str, Any] = {"stand_in": stand_in, "random": random}
    if shape_from_values is not None:
        extra["shape_from_values"] = shape_from_values
    args_fn = (lambda p: [f"arg{i}" for i in range(p.num_args)]) if var_args else args
    fwd = kernel
    if random:
        # the stand-in evaluation calls the raw kernel; the operator gets the generator from op_ctx
        extra["random"] = True
    opdef = defop(name, fwd=fwd, bwd=grad, param=param_cls, arguments=arguments, outputs=outputs,
                  shape=shape, dtype=dtype, args=args_fn, deps=deps, aliases=aliases,
                  doc=doc or (kernel.__doc__ or f"The NumPy-interface op {name}."),
                  var_args="num_args" if var_args else None, base=base or NumpyProperty,
                  wants_ctx=random, **extra)
    if random:
        opdef.prop_cls.fwd = staticmethod(_random_fwd(kernel))
        opdef.prop_cls.raw_kernel = staticmethod(kernel)
        opdef.prop_cls._evaluate = _random_evaluate
    return opdef


def _random_evaluate(self, shapes, types):
    key = (self, tuple(shapes), tuple(types))
    hit = _EVAL_CACHE.get(key)
    if hit is not None:
        return hit
    ins = [_stand_in(s, t, "ones" if self.stand_in == "zeros" or len(s) < 2 else self.stand_in)
           for s, t in zip(shapes, types, strict=True)]
    try:
        with np.errstate(all="ignore"):
            res = self.raw_kernel(np, self.params, np.random.default_rng(0), *ins)
    except Exception as exc:  # noqa: BLE001
        raise self.error(f"inputs of shapes {list(shapes)}: {type(exc).__name__}: {exc}") from None
    outs = res if isinstance(res, (tuple, list)) else (res,)
    outs = [np.asarray(o) for o in outs]
    hit = ([o.shape for o in outs], [o.dtype.name for o in outs])
    _EVAL_CACHE[key] = hit
    return hit
