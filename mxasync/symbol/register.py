"""``sym.<op>``: one function per registered op, and :func:`create`, which builds an op node.

Missing inputs become variables named ``<node>_<argument>`` that carry the
op's attributes (what MXNet does); aux states are marked mutated, which bumps
their variable's version.

>>> from mxasync import symbol as sym
>>> bn = sym.BatchNorm(sym.Variable("x"), name="bn")
>>> bn.list_arguments(), bn.list_auxiliary_states()
(['x', 'bn_gamma', 'bn_beta'], ['bn_moving_mean', 'bn_moving_var'])
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from .. import _seams
from ..base import MXAsyncError
from ..operator.registry import get_op
from ._naming import AttrScope, NameManager
from ._node import Node, hide_keys

__all__ = ["create", "make_function"]

# how MXNet initialises aux states it creates (its FSetInputVarAttrOnCompose of BatchNorm & co.)
_AMP = _seams.amp_casts
_AUX_INIT = {"moving_mean": '["zero", {}]', "moving_var": '["one", {}]', "moving_inv_var": '["one", {}]'}


def _plain(v: Any) -> Any:
    """NumPy scalars as Python numbers, inside tuples and lists too (NumPy 2 reprs them as ``np.int64(2)``)."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (tuple, list)):
        return type(v)(_plain(x) for x in v)
    return v


def _attr_string(v: Any) -> str:
    if isinstance(v, type) or isinstance(v, np.dtype):
        return np.dtype(v).name
    return str(_plain(v))


def create(op_name: str, args: list, kwargs: dict[str, Any], name: str | None = None,
           attr: dict | None = None, hint: str | None = None):
    """An op node applied to ``args`` (symbols, positional) and ``kwargs`` (symbol inputs by name and params)."""
    from .symbol import Symbol

    opdef = get_op(op_name)
    inputs_by_name = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
    # None leaves a param at its default, except where the param takes None as a value (sort's axis=None,
    # slice_axis's end=None), which MXNet keeps as the string "None" (and needs, where the param is required)
    attrs = {k: _attr_string(v) for k, v in kwargs.items()
             if k not in inputs_by_name and (v is not None or opdef.param_cls.none_is_a_value(k))}
    args = [a for a in args if a is not None]
    for a in args:
        if not isinstance(a, Symbol):
            raise MXAsyncError(f"{op_name}: positional inputs must be Symbols, got {type(a).__name__} "
                               "(give params by keyword)")
    if opdef.key_var_num_args and opdef.key_var_num_args not in attrs:
        attrs[opdef.key_var_num_args] = str(len(args))
    # lr_mult, wd_mult, ctx_group, ...: attributes kept as __lr_mult__ & co, never op params (MXNet's rule)
    attrs = hide_keys({**AttrScope.current().get(attr), **attrs})
    name = NameManager.current().get(name, hint or op_name.lower())
    node = Node(opdef, name, attrs)
    prop = node.prop  # validates the params, naming the node
    arg_names = prop.list_arguments()
    aux_names = prop.list_auxiliary_states()
    all_names = arg_names + aux_names
    if len(args) > len(all_names):
        raise MXAsyncError(f"{prop.label}: {len(args)} inputs given but it takes {len(all_names)} ({all_names})")
    given: list = list(args) + [None] * (len(all_names) - len(args))
    for key, value in inputs_by_name.items():
        if key not in all_names:
            raise MXAsyncError(f"{prop.label}: unknown input {key!r}; inputs are {all_names}")
        if given[all_names.index(key)] is not None:
            raise MXAsyncError(f"{prop.label}: input {key!r} given twice")
        given[all_names.index(key)] = value
    mutable = set(node.mutable_positions())
    for i, (arg, sym) in enumerate(zip(all_names, given, strict=True)):
        if sym is None:
            vattrs = dict(attrs)
            if i >= len(arg_names) and arg in _AUX_INIT:
                vattrs["__init__"] = _AUX_INIT[arg]
            entry = (Node(None, f"{name}_{arg}", vattrs), 0, 0)
        else:
            if len(sym._heads) != 1:
                raise MXAsyncError(f"{prop.label}: input {arg!r} is a group of {len(sym._heads)} outputs; "
                                   "it needs exactly one")
            entry = sym._heads[0]
        child = entry[0]
        if child.is_variable:
            var_init = prop.input_var_init.get(arg)  # the op's FSetInputVarAttrOnCompose
            if var_init is not None and "__init__" not in child.attrs:
                child.attrs["__init__"] = var_init
            if i in mutable:
                child.version += 1
            entry = (child, entry[1], child.version)
        node.inputs.append(entry)
    if _AMP.impl is not None:  # amp.init(): casts on the inputs by the op's precision (mxasync/contrib/amp)
        _AMP.impl.symbol_node(node)
    # a NumPy-interface symbol in (mx.sym.np._Symbol), its class out: legacy ops inside use_np blocks
    cls = type(args[0]) if args and type(args[0]) is not Symbol else Symbol
    return cls([(node, i, 0) for i in range(node.num_visible())])


def make_function(op_name: str):
    opdef = get_op(op_name)
    hint = op_name.lower()

    def fn(*args, name: str | None = None, attr: dict | None = None, out=None, **kwargs):
        # ``out=`` means nothing to a symbol; MXNet's generated functions accept and drop it
        return create(opdef.name, opdef.bind_positional(args, kwargs), kwargs, name=name, attr=attr, hint=hint)

    fn.__name__ = fn.__qualname__ = op_name
    fn.__doc__ = opdef.doc
    try:
        sig = opdef.signature
        P = inspect.Parameter
        extra = [P("name", P.KEYWORD_ONLY, default=None), P("attr", P.KEYWORD_ONLY, default=None),
                 P("out", P.KEYWORD_ONLY, default=None), P("kwargs", P.VAR_KEYWORD)]
        fn.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + extra)
    except (ValueError, TypeError):  # a signature is documentation only
        pass
    return fn
