"""``mx.nd.<op>``: one function per registered op, generated from the registry.

Each function takes the op's inputs (positionally or by argument name), its
params (by keyword, or positionally after the inputs in MXNet's order, so
``mx.nd.sum(x, 1)`` is ``axis=1``), and ``out=``; its signature and docstring
come from the op's declaration.
"""

from __future__ import annotations

import inspect

from ..base import MXAsyncError
from ..operator.registry import get_op
from ._invoke import invoke
from .ndarray import NDArray

__all__ = ["make_function"]


def _named_inputs(opdef, inputs: list, kwargs: dict) -> list:
    """``inputs`` and the arrays given by name in ``kwargs`` (taken out of it), in the order of the op's
    ``list_arguments()`` for the params left in ``kwargs`` (Custom: the Python operator's arguments)."""
    named = {k: kwargs.pop(k) for k in [k for k, v in kwargs.items() if isinstance(v, NDArray)]}
    if not named:
        return inputs
    prop = opdef.prepare(**kwargs)
    names = list(prop.list_arguments()) + list(prop.list_auxiliary_states())
    unknown = sorted(set(named) - set(names))
    if unknown:
        raise MXAsyncError(f"{prop.label}: unknown input {unknown[0]!r}; inputs are {names}")
    out = list(inputs)
    for n in names[len(inputs):]:
        if n not in named:
            break
        out.append(named.pop(n))
    if named:
        raise MXAsyncError(f"{prop.label}: input {sorted(named)[0]!r} given by name after a missing input "
                           f"(inputs are {names}; {len(out)} given before it)")
    return out


def make_function(op_name: str):
    opdef = get_op(op_name)
    arg_names = list(opdef.prop_cls.arguments) + list(getattr(opdef.prop_cls, "aux_states", ()))
    variadic = opdef.key_var_num_args

    def fn(*args, out=None, name=None, **kwargs):
        inputs = opdef.bind_positional(args, kwargs)
        if opdef.variadic_inputs and not variadic:
            inputs = _named_inputs(opdef, inputs, kwargs)
        elif not variadic:
            for a in arg_names[len(inputs):]:
                if a in kwargs:
                    inputs.append(kwargs.pop(a))
        elif variadic not in kwargs:
            kwargs[variadic] = len(inputs)
        if name is not None:  # errors then say e.g. "FullyConnected(fc1): ..."
            kwargs["name"] = name
        return invoke(op_name, inputs, out=out, **kwargs)

    fn.__name__ = op_name
    fn.__qualname__ = op_name
    fn.__doc__ = opdef.doc
    try:
        sig = opdef.signature
        P = inspect.Parameter
        extra = [P("out", P.KEYWORD_ONLY, default=None), P("name", P.KEYWORD_ONLY, default=None),
                 P("kwargs", P.VAR_KEYWORD)]
        fn.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + extra)
    except Exception:  # noqa: BLE001 - a signature is documentation only
        pass
    return fn
