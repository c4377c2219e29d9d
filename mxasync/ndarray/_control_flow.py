"""``mx.nd.contrib.foreach`` / ``while_loop`` / ``cond``: MXNet's control flow run imperatively.

On NDArrays these are Python loops over the user's functions, so autograd records each
step as it runs; ``mx.sym.contrib`` builds the same loops as graph nodes (``_foreach``,
``_while_loop``, ``_cond``) that hybridized blocks run.

>>> import mxasync as mx
>>> outs, states = foreach(lambda x, s: (x + s[0], [s[0] * 2]), mx.nd.array([1, 2, 3]), [mx.nd.array([1])])
>>> outs.asnumpy().tolist(), states[0].asnumpy().tolist()
([[2.0], [4.0], [7.0]], [8.0])
>>> outs, (i, s) = while_loop(lambda i, s: i <= 3, lambda i, s: (s, (i + 1, s + i)),
...                           [mx.nd.array([1]), mx.nd.array([0])], max_iterations=5)
>>> outs.asnumpy().ravel().tolist(), float(s.asscalar())
([0.0, 1.0, 3.0, 0.0, 0.0], 6.0)
"""

from __future__ import annotations

from ..base import _as_list
from ._creation import zeros
from .ndarray import NDArray
from .register import make_function

stack = make_function("stack")
concat = make_function("Concat")

__all__ = ["foreach", "while_loop", "cond", "flatten_nested", "regroup_nested"]


def flatten_nested(args, kind: type, inout_str: str):
    """Nested lists of ``kind`` -> a flat list and a format to rebuild them (MXNet's encoding)."""
    if isinstance(args, kind):
        return [args], 0
    if not isinstance(args, (list, tuple)):
        raise AssertionError(f"{inout_str} must be (nested) list of {kind.__name__}, but got {args} of type "
                             f"{type(args)}")
    flat, fmts = [], []
    for item in args:
        arg, fmt = flatten_nested(item, kind, inout_str)
        flat.extend(arg)
        fmts.append(fmt)
    return flat, fmts


def regroup_nested(args, fmt):
    """The inverse of :func:`flatten_nested`: ``(rebuilt, rest)``."""
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        return args[:fmt], args[fmt:]
    ret = []
    for f in fmt:
        res, args = regroup_nested(args, f)
        ret.append(res)
    return ret, args


def _check(flat, what):
    if not all(isinstance(x, NDArray) for x in flat):
        raise AssertionError(f"{what} should be an NDArray or a nested list of NDArrays")


def foreach(body, data, init_states):
    """``out, states = body(data[i], states)`` for each ``i`` along axis 0; returns the outputs
    stacked along a new axis 0 and the last states (each in the format ``body`` gave)."""
    flat_data, _ = flatten_nested(data, NDArray, "foreach input")
    _check(flat_data, "data")
    _check(flatten_nested(init_states, NDArray, "foreach states")[0], "init_states")
    single = isinstance(data, NDArray)
    steps = data.shape[0] if single else data[0].shape[0]
    states, outputs, out_fmt = init_states, [], None
    for i in range(steps):
        eles = data[i] if single else [d[i] for d in data]
        outs, states = body(eles, states)
        outs, out_fmt = flatten_nested(outs, NDArray, "foreach output")
        outputs.append(outs)
    stacked = [stack(*items, axis=0) for items in zip(*outputs, strict=True)]
    if out_fmt is None:
        return [], states
    return regroup_nested(stacked, out_fmt)[0], states


def _scalar(x, kind, name):
    if isinstance(x, NDArray):
        if x.size != 1:
            raise ValueError(f"{name} should be a scalar (an NDArray of one element), got shape {x.shape}")
        x = x.asscalar()
    try:
        return kind(x)
    except (TypeError, ValueError) as e:
        raise ValueError(f"Cannot convert {name} to python {kind.__name__}") from e


def while_loop(cond, func, loop_vars, max_iterations=None):
    """While ``cond(*loop_vars)`` holds (at most ``max_iterations`` times): ``out, loop_vars =
    func(*loop_vars)``. Returns the step outputs stacked along axis 0 and padded with zeros to
    ``max_iterations`` rows, and the final loop variables."""
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = _scalar(max_iterations, int, "max_iteration")
    single = isinstance(loop_vars, NDArray)
    loop_vars = _as_list(loop_vars) if single else list(loop_vars)
    if not loop_vars:
        raise ValueError("loop_vars should contain at least one element")
    steps, outputs, out_fmt = 0, [], None
    while steps < max_iterations and _scalar(cond(*loop_vars), bool, "Return value of cond"):
        step_out, new_vars = func(*loop_vars)
        step_out = [] if step_out is None else list(step_out) if isinstance(step_out, tuple) else step_out
        new_vars = [] if new_vars is None else list(new_vars) if isinstance(new_vars, tuple) else new_vars
        new_vars = _as_list(new_vars)
        if len(new_vars) != len(loop_vars):
            raise ValueError("The length of loop_vars should be consistent during the loop")
        loop_vars = new_vars
        step_out, out_fmt = flatten_nested(step_out, NDArray, "while output")
        if outputs and len(step_out) != len(outputs[0]):
            raise ValueError("Number of elements in step_output should be the same in each step")
        outputs.append(step_out)
        steps += 1
    stacked = []
    for items in zip(*outputs, strict=True):
        items = [x.expand_dims(0) for x in items]
        if steps != max_iterations:
            items.append(zeros((max_iterations - steps,) + items[0].shape[1:], ctx=items[0].context,
                               dtype=items[0].dtype))
        stacked.append(concat(*items, dim=0))
    if out_fmt is not None:
        stacked, _ = regroup_nested(stacked, out_fmt)
    return stacked, (loop_vars[0] if single else loop_vars)


def cond(pred, then_func, else_func):
    """``then_func()`` if ``pred`` (a one-element NDArray or a Python value) is true, else ``else_func()``."""
    return then_func() if _scalar(pred, bool, "pred") else else_func()
