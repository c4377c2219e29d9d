"""``simple_bind``, ``bind`` and ``reshape``: from a symbol (and maybe arrays) to an :class:`Executor`.

>>> import numpy as np
>>> import mxasync as mx
>>> from mxasync import symbol as sym
>>> x = sym.Variable("x")
>>> exe = (x * 2).simple_bind(mx.cpu(), x=(2,))
>>> exe.forward(is_train=True, x=np.array([1.0, 3.0]))[0].asnumpy()
array([2., 6.], dtype=float32)
>>> exe.backward(mx.nd.ones((2,))); exe.grad_dict["x"].asnumpy()
array([2., 2.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import MXAsyncError
from ..ndarray.ndarray import NDArray, zeros
from ..operator import OpReqType
from ..symbol._indexed import IndexedGraph
from ..symbol._infer import infer_shape, infer_type
from .executor import Executor
from .stypes import grad_stype, infer_stypes, var_stype

__all__ = ["simple_bind", "bind", "reshape", "parse_grad_req"]


def parse_grad_req(grad_req: Any, names: list[str]) -> list[str]:
    """One request per argument from a string, a list, or a dict (missing names: 'null')."""
    if isinstance(grad_req, (str, OpReqType)):
        return [grad_req] * len(names)
    if isinstance(grad_req, dict):
        unknown = set(grad_req) - set(names)
        if unknown:
            raise MXAsyncError(f"grad_req names {sorted(unknown)} that are not arguments {names}")
        return [grad_req.get(n, "null") for n in names]
    reqs = list(grad_req)
    if len(reqs) != len(names):
        raise MXAsyncError(f"grad_req has {len(reqs)} entries for {len(names)} arguments")
    return reqs


def _placements(sym, names: list[str], ctx, group2ctx: dict | None) -> list:
    """The context of each input: its ``ctx_group``'s in ``group2ctx`` (model parallelism), else ``ctx``."""
    if not group2ctx:
        return [ctx] * len(names)
    attrs = sym.attr_dict()
    return [group2ctx.get(attrs.get(n, {}).get("__ctx_group__"), ctx) for n in names]


def simple_bind(sym, ctx, grad_req: Any = "write", type_dict: dict | None = None, shared_exec=None,
                group2ctx: dict | None = None, stype_dict: dict | None = None, **shapes: Any) -> Executor:
    arg_names, aux_names = sym.list_arguments(), sym.list_auxiliary_states()
    g = IndexedGraph(sym)  # one graph and one inference serve the shapes here and the executor
    arg_shapes, _, aux_shapes = infer_shape(sym, (), shapes, partial=False, graph=g)
    if arg_shapes is None:
        partial, _, aux_p = sym.infer_shape_partial(**shapes)
        missing = [n for n, s in zip(arg_names + aux_names, partial + aux_p, strict=True) if s == ()]
        raise MXAsyncError(f"simple_bind: cannot infer the shapes of {missing} from {shapes}")
    if type_dict is None:
        attrs = sym.attr_dict()
        type_dict = {n: np.float32 for n in arg_names if "__dtype__" not in attrs.get(n, {})}
    arg_types, _, aux_types = infer_type(sym, (), type_dict, partial=True, graph=g)
    arg_types = [t or np.float32 for t in arg_types]
    aux_types = [t or np.float32 for t in aux_types]
    reqs = parse_grad_req(grad_req, arg_names)
    arg_ctx = _placements(sym, arg_names, ctx, group2ctx)
    arg_st, grad_st = _arg_stypes(sym, g, stype_dict or {})
    args = [zeros(s, c, t, stype=a) for s, t, c, a in zip(arg_shapes, arg_types, arg_ctx, arg_st, strict=True)]
    grads = [zeros(s, c, t, stype=gs) if OpReqType.parse(r) != OpReqType.NULL else None
             for s, t, r, c, gs in zip(arg_shapes, arg_types, reqs, arg_ctx, grad_st, strict=True)]
    aux = [zeros(s, c, t) for s, t, c in zip(aux_shapes, aux_types, _placements(sym, aux_names, ctx, group2ctx),
                                               strict=True)]
    return Executor(sym, ctx, args, grads, reqs, aux, shared_exec=shared_exec, graph=g)


def _arg_stypes(sym, g, stype_dict: dict) -> tuple[list, list]:
    """Arguments' storage types (``stype_dict``, else the variables' ``stype``) and their gradients'
    (row_sparse where the consuming op's sparse backward gives it, as MXNet infers at bind)."""
    names = sym.list_arguments()
    unknown = set(stype_dict) - set(names)
    if unknown:
        raise MXAsyncError(f"simple_bind: stype_dict names {sorted(unknown)} that are not arguments {names}")
    by_name = {g.nodes[n].name: n for n in g.arg_nodes}
    arg_st = [stype_dict.get(n) or var_stype(g.nodes[by_name[n]]) for n in names]
    if all(s == "default" for s in arg_st) and not any(
            nd.prop.sparse_backward_infer for nd in g.nodes if not nd.is_variable):
        return arg_st, ["default"] * len(names)
    stypes = infer_stypes(g, {by_name[n]: s for n, s in zip(names, arg_st, strict=True)})
    return arg_st, [grad_stype(g, stypes, by_name[n]) for n in names]


def _as_list(value: Any, names: list[str], what: str, allow_missing: bool) -> list:
    if value is None:
        return [None] * len(names)
    if isinstance(value, dict):  # names the symbol lacks are ignored, as MXNet does
        if not allow_missing and set(names) - set(value):
            raise MXAsyncError(f"bind: {what} misses {sorted(set(names) - set(value))}")
        return [value.get(n) for n in names]
    value = list(value)
    if len(value) != len(names):
        raise MXAsyncError(f"bind: {len(value)} {what} for {len(names)} names {names}")
    return value


def bind(sym, ctx, args, args_grad=None, grad_req: Any = "write", aux_states=None) -> Executor:
    arg_names, aux_names = sym.list_arguments(), sym.list_auxiliary_states()
    arrays = _as_list(args, arg_names, "args", allow_missing=False)
    grads = _as_list(args_grad, arg_names, "args_grad", allow_missing=True)
    aux = _as_list(aux_states, aux_names, "aux_states", allow_missing=False)
    for n, a in zip(arg_names + aux_names, arrays + aux, strict=True):
        if not isinstance(a, NDArray):
            raise MXAsyncError(f"bind: {n!r} must be an NDArray, got {type(a).__name__}")
    reqs = parse_grad_req(grad_req, arg_names)
    reqs = [r if g is not None else "null" for r, g in zip(reqs, grads, strict=True)]
    return Executor(sym, ctx, arrays, grads, reqs, aux)


def _resized(old: NDArray | None, shape: tuple, name: str, allow_up_sizing: bool) -> NDArray | None:
    if old is None or old.shape == tuple(shape):
        return old
    size = int(np.prod(shape, dtype=np.int64))
    if size <= old.size:  # a view of the old memory, as MXNet's reshape does
        flat = old._chunk.base.reshape(-1).view(old._data.dtype)
        return NDArray(old._chunk, flat[:size].reshape(shape))
    if not allow_up_sizing:
        raise MXAsyncError(f"reshape: {name!r} grows from {old.shape} to {tuple(shape)}; "
                           "pass allow_up_sizing=True")
    return zeros(shape, old.context, old.dtype)


def reshape(exe: Executor, partial_shaping: bool, allow_up_sizing: bool, shapes: dict) -> Executor:
    sym = exe._symbol
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    if arg_shapes is None:
        raise MXAsyncError(f"reshape: cannot infer every shape from {shapes}")
    names = sym.list_arguments()
    args, grads = [], []
    for n, s, a, g in zip(names, arg_shapes, exe.arg_arrays, exe.grad_arrays, strict=True):
        if a.shape != tuple(s) and n not in shapes and not partial_shaping:
            raise MXAsyncError(f"reshape: the shape of {n!r} changes from {a.shape} to {tuple(s)}; "
                               "pass its new shape or partial_shaping=True")
        args.append(_resized(a, s, n, allow_up_sizing))
        grads.append(_resized(g, s, n, allow_up_sizing))
    aux = [_resized(a, s, n, allow_up_sizing)
           for n, s, a in zip(sym.list_auxiliary_states(), aux_shapes, exe.aux_arrays, strict=True)]
    new = Executor(sym, exe._ctx, args, grads, exe._grad_reqs, aux, shared_exec=exe)
    new._monitor, new._monitor_all = exe._monitor, exe._monitor_all
    return new
