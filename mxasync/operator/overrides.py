"""The override contract: what a backend's kernel for an op receives (plugin API version 1).

A backend replaces an op's kernel through the one seam, ``Backend.overrides``
(``backend.override('relu')``) or :func:`~mxasync.operator.registry.register_override`;
:func:`~mxasync.operator.registry.find_override` looks both up.  For an op declared with
:func:`~mxasync.operator.functional.defop` (all but BatchNorm, RNN, Custom and the multi-tensor
SGD updates) the kernels are called as follows, whatever the op's own kernel takes:

* **forward** ``fwd(xp, params, *inputs, *aux)`` (``fwd(xp, params, op_ctx, *inputs, *aux)``
  for ops that draw random numbers: ``override_signature`` says which) returns the output,
  or a tuple of them.  ``out=`` is passed only to a kernel whose signature names an ``out``
  parameter: it is then the array the result goes to (write into it and return it to save a
  copy), or None when the op has no such array to offer (write-inplace, add-to, several
  outputs); returning a new array is always right.
* **backward** ``bwd(xp, params, out_grads, inputs, outputs)`` returns one gradient per
  input (None: zero).  Each list holds exactly what the op's gradient declares it keeps
  (``override_signature(...)['keeps']``); every other slot is None, because that memory may
  be gone or reused when backward runs.  A kernel whose signature names ``need`` and
  ``into`` also gets them: per input, whether a gradient is wanted, and the array to write
  it into (or None).
* Either kernel may return ``NotImplemented`` for a case it does not handle (a dtype, a
  layout, a parameter): the op's generic kernel then runs, with the same arguments.

>>> from mxasync.operator.overrides import override_signature
>>> sig = override_signature("relu")
>>> sig["forward"], sig["keeps"]
('fwd(xp, params, data) -> output', ('out_grads', 'outputs'))
>>> sig["backward"]
'bwd(xp, params, out_grads=[d_output], inputs=[None], outputs=[output]) -> [d_data]'
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from functools import cache
from typing import Any

__all__ = ["adapt_forward", "adapt_backward", "override_signature", "CONTRACT_VERSION"]

CONTRACT_VERSION = 1  # equals mxasync.backends.PLUGIN_API_VERSION (checked by the tests)


def _names(fn: Callable) -> tuple[set[str], bool]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: call it plainly
        return set(), False
    names = {p.name for p in params}
    return names, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _own_kernel(fn: Callable, generic: Callable | None) -> bool:
    """Whether ``fn`` is the op's own kernel with keywords bound (the numpy backend's registrations bind its
    runner): it is then called exactly as the generic one, and needs no adapting."""
    return isinstance(fn, functools.partial) and generic is not None and fn.func is generic and not fn.args


@cache
def adapt_forward(prop_cls: type, fn: Callable) -> Callable:
    """``fn`` called as the op's generic forward kernel is: ``out=`` only when ``fn`` takes it;
    ``NotImplemented`` from ``fn`` runs the generic kernel instead."""
    if _own_kernel(fn, prop_cls.fwd):
        return fn
    names, var_kw = _names(fn)
    pass_out = "out" in names or var_kw
    generic = prop_cls.fwd

    if prop_cls.fwd_out:
        def forward(xp, params, *args, out=None):
            res = fn(xp, params, *args, out=out) if pass_out else fn(xp, params, *args)
            return generic(xp, params, *args, out=out) if res is NotImplemented else res
    else:
        def forward(xp, params, *args):
            res = fn(xp, params, *args)
            return generic(xp, params, *args) if res is NotImplemented else res

    forward.__wrapped__ = fn
    return forward


@cache
def adapt_backward(prop_cls: type, fn: Callable) -> Callable:
    """``fn`` given only what the op keeps for backward (None elsewhere), ``need``/``into`` when it takes
    them; ``NotImplemented`` from ``fn`` runs the generic kernel instead."""
    if _own_kernel(fn, prop_cls.bwd):
        return fn
    deps = prop_cls.deps
    keep_og, keep_in, keep_out = "og" in deps, "in" in deps, "out" in deps
    names, var_kw = _names(fn)
    wants_into = var_kw or ("need" in names and "into" in names)
    generic = prop_cls.bwd

    def call(xp, params, og, ins, outs, need, into):
        m_og = list(og) if keep_og else [None] * len(og)
        m_ins = list(ins) if keep_in else [None] * len(ins)
        m_outs = list(outs) if keep_out else [None] * len(outs)
        if wants_into:
            return fn(xp, params, m_og, m_ins, m_outs, need, into)
        return fn(xp, params, m_og, m_ins, m_outs)

    if prop_cls.bwd_into:
        def backward(xp, params, og, ins, outs, need, into):
            res = call(xp, params, og, ins, outs, need, into)
            return generic(xp, params, og, ins, outs, need, into) if res is NotImplemented else res
    else:
        def backward(xp, params, og, ins, outs):
            res = call(xp, params, og, ins, outs, [True] * len(ins), [None] * len(ins))
            return generic(xp, params, og, ins, outs) if res is NotImplemented else res

    backward.__wrapped__ = fn
    return backward


def override_signature(op_name: str, **params: Any) -> dict[str, Any]:
    """How a backend's kernels for ``op_name`` are called (the contract above, spelled out for this op).

    ``params`` bind the op (its argument list may depend on them, e.g. ``no_bias``).
    Returns ``forward`` and ``backward`` (call shapes), ``keeps`` (what backward
    receives), ``out`` (whether a forward kernel taking ``out=`` gets an array to write),
    ``key`` and ``backward_key`` (the override table keys).
    """
    from .functional import FunctionalProperty
    from .registry import get_op

    opdef = get_op(op_name)
    prop = opdef.prepare(**params)
    if not isinstance(prop, FunctionalProperty):
        raise NotImplementedError(f"{opdef.name}: its kernels keep their own signature (see the op's module "
                                  f"{type(prop).__module__}); the functional contract covers defop ops")
    args = prop.list_arguments() + prop.list_auxiliary_states()
    outs = prop.list_outputs()
    keeps = tuple(k for k, flag in (("out_grads", "og"), ("inputs", "in"), ("outputs", "out"))
                  if flag in prop.deps)
    ctx = "op_ctx, " if prop.wants_ctx else ""
    result = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"

    def listed(names, kept):
        return "[" + ", ".join(n if kept else "None" for n in names) + "]"

    inputs = prop.list_arguments()
    backward = (f"bwd(xp, params, out_grads={listed(['d_' + o for o in outs], 'og' in prop.deps)}, "
                f"inputs={listed(inputs, 'in' in prop.deps)}, outputs={listed(outs, 'out' in prop.deps)}) "
                f"-> [{', '.join('d_' + n for n in inputs)}]")
    return {"key": opdef.name, "backward_key": opdef.name + ".backward",
            "forward": f"fwd(xp, params, {ctx}{', '.join(args)}) -> {result}",
            "backward": backward if prop.bwd is not None else None,
            "keeps": keeps, "out": bool(prop.fwd_out) and len(outs) == 1}
