"""``defop``: declare an op from kernels that return new arrays (most of the library uses it).

A forward kernel is ``fwd(xp, p, *inputs) -> array | tuple`` (``fwd(xp, p,
op_ctx, *inputs)`` with ``wants_ctx=True``); a backward kernel is ``bwd(xp, p,
out_grads, inputs, outputs) -> list`` of input gradients (None means zero).
The operator stores results with :func:`~mxasync.operator.base.assign`, so
every op honours ``req`` the same way.  Kernels declared with ``fwd_out`` take
``out=`` (the output array, or None) and may compute straight into it; with
``bwd_into`` the backward kernel gets ``need`` (per input: is a gradient
wanted) and ``into`` (per input: the array to write, or None) and may skip or
write straight into them.  A result that *is* its target is not copied.  A backend overrides the kernels under
the keys ``name`` and ``name + '.backward'``, called by the contract of :mod:`mxasync.operator.overrides`.

>>> import numpy as np
>>> from mxasync.operator.functional import defop
>>> prop = defop("_doc_twice", fwd=lambda xp, p, x: 2 * x,
...              bwd=lambda xp, p, og, ins, outs: [2 * og[0]], deps="og").prepare()
>>> import mxasync as mx
>>> from mxasync.operator import OpContext
>>> from mxasync.operator.base import WRITE_TO
>>> out = np.empty(2); prop.forward_fn(mx.cpu())(OpContext(), [np.ones(2)], [WRITE_TO], [out], []); out
array([2., 2.])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import ADD_TO, NULL, WRITE_INPLACE, WRITE_TO, Operator, OperatorProperty, assign
from .overrides import adapt_backward, adapt_forward
from .params import NoParam, OpParam
from .registry import OpDef, find_override, register_op

__all__ = ["defop", "FunctionalProperty", "FunctionalOperator"]


class FunctionalOperator(Operator):
    __slots__ = ("prop", "fwd", "bwd", "xp", "wants_ctx", "nout", "fwd_out", "bwd_into")

    def __init__(self, prop: FunctionalProperty, xp, fwd: Callable, bwd: Callable | None):
        self.prop = prop
        self.xp = xp
        self.fwd = fwd
        self.bwd = bwd
        self.wants_ctx = prop.wants_ctx
        self.nout = prop.num_outputs()
        self.fwd_out = prop.fwd_out if self.nout == 1 else False
        self.bwd_into = prop.bwd_into

    def forward(self, op_ctx, in_data, req, out_data, aux):
        mode = self.fwd_out
        if mode:
            r = req[0]
            out = out_data[0] if r == WRITE_TO or (r == WRITE_INPLACE and mode == "inplace") else None
            if self.wants_ctx:
                res = self.fwd(self.xp, self.prop.params, op_ctx, *in_data, *aux, out=out)
            else:
                res = self.fwd(self.xp, self.prop.params, *in_data, *aux, out=out)
            assign(out_data[0], r, res)
            return
        if self.wants_ctx:
            res = self.fwd(self.xp, self.prop.params, op_ctx, *in_data, *aux)
        else:
            res = self.fwd(self.xp, self.prop.params, *in_data, *aux)
        if self.nout == 1:
            if type(res) is list or type(res) is tuple:  # a multi-output kernel asked for one part (split)
                res = res[0]
            assign(out_data[0], req[0], res)
        else:
            for o, r, v in zip(out_data, req, res, strict=False):
                assign(o, r, v)

    def backward(self, op_ctx, out_grad, in_data, out_data, req, in_grad, aux):
        if self.bwd is None:
            raise self.prop.error("this op has no gradient")
        if all(r is NULL or r == 0 for r in req):
            return
        mode = self.bwd_into
        if mode:
            need = [r != NULL for r in req]
            into = [o if r == WRITE_TO or (r == WRITE_INPLACE and mode == "inplace") else None
                    for o, r in zip(in_grad, req, strict=False)]
            grads = self.bwd(self.xp, self.prop.params, out_grad, in_data, out_data, need, into)
        else:
            grads = self.bwd(self.xp, self.prop.params, out_grad, in_data, out_data)
        for g, r, o in zip(grads, req, in_grad, strict=False):
            if r == NULL:
                continue
            if g is None:
                if r != ADD_TO:
                    o[...] = 0
            else:
                assign(o, r, g)


class FunctionalProperty(OperatorProperty):
    """An :class:`OperatorProperty` whose behaviour comes from class attributes set by :func:`defop`."""

    pure_kernel = True  # defop kernels compute on their arrays (a custom op's Python code may call the engine)

    fwd: Callable = None
    bwd: Callable | None = None
    shape_fn: Callable | None = None
    type_fn: Callable | None = None
    args_fn: Callable | None = None
    deps: str = "og,in,out"
    fwd_res: tuple = ()
    bwd_res: tuple = ()
    inplace: bool = False
    wants_ctx: bool = False
    mutates: tuple[int, ...] = ()
    visible: int | None = None
    fwd_out: bool | str = False   # True: fwd takes out= under WRITE_TO; "inplace": also under WRITE_INPLACE
    bwd_into: bool | str = False  # True: bwd takes (need, into); "inplace": into also under WRITE_INPLACE

    def list_arguments(self) -> list[str]:
        return self.args_fn(self.params) if self.args_fn is not None else list(self.arguments)

    def num_visible_outputs(self) -> int:
        return self.visible if self.visible is not None else self.num_outputs()

    def mutate_inputs(self) -> list[int]:
        return list(self.mutates)

    def infer_shape(self, in_shapes):
        fn = self.shape_fn
        if fn is None:
            return super().infer_shape(in_shapes)
        res = fn(self, list(in_shapes))
        if isinstance(res, tuple):  # a full (in, out, aux) triple
            return res
        return list(in_shapes), res, []

    def infer_type(self, in_types):
        if self.type_fn is None:
            return super().infer_type(in_types)
        return self.type_fn(self, list(in_types))

    def forward_resource(self):
        return list(self.fwd_res)

    def backward_resource(self):
        return list(self.bwd_res)

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = []
        if "og" in self.deps:
            deps += out_grad
        if "in" in self.deps:
            deps += in_data
        if "out" in self.deps:
            deps += out_data
        return deps

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[0], out_data[0])] if self.inplace and in_data and out_data else []

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad):
        return [(out_grad[0], in_grad[0])] if self.inplace and "in" not in self.deps and out_grad else []

    def create_operator(self, ctx) -> Operator:
        from ..backends import get_backend

        backend = get_backend(ctx.device_type)
        cls = type(self)
        fwd = find_override(self.op_name, backend, None)
        bwd = find_override(self.op_name + ".backward", backend, None)
        # a backend's kernel is called by the plugin contract (mxasync/operator/overrides.py)
        fwd = cls.fwd if fwd is None else adapt_forward(cls, fwd)
        bwd = cls.bwd if bwd is None else adapt_backward(cls, bwd)
        return FunctionalOperator(self, backend.xp, fwd, bwd)


_FUNCTION_HOOKS = ("recorded_gradient", "onnx_export", "shape_from_values")


def _shape_key(fn):
    return fn


def defop(name: str, *, fwd: Callable, bwd: Callable | None = None, param: type[OpParam] = NoParam,
          arguments: tuple[str, ...] = ("data",), outputs: tuple[str, ...] = ("output",),
          aux: tuple[str, ...] = (), shape: Callable | None = None, dtype: Callable | None = None,
          args: Callable | None = None, deps: str = "og,in,out", aliases: tuple[str, ...] = (),
          doc: str = "", fwd_res: tuple = (), bwd_res: tuple = (), inplace: bool = False,
          wants_ctx: bool = False, mutates: tuple[int, ...] = (), visible: int | None = None,
          var_args: str | None = None, base: type[FunctionalProperty] = FunctionalProperty,
          fwd_out: bool | str = False, bwd_into: bool | str = False, **extra: Any) -> OpDef:
    """Declare and register an op from kernels.

    ``shape(prop, in_shapes)`` returns the output shapes or a full ``(in, out,
    aux)`` triple; ``dtype(prop, in_types)`` returns the triple; ``args(p)``
    lists the arguments when they depend on params; ``deps`` names what backward
    reads ("og", "in", "out"); ``mutates`` lists inputs written in place;
    ``fwd_out`` / ``bwd_into`` declare kernels that write into the planned
    arrays (see the module docstring; "inplace" when they stay right when the
    target is the very array they read, as elementwise kernels do).  Other
    keywords become class attributes: the per-op facts of
    :class:`~mxasync.operator.base.OperatorProperty` (``zero_gradient``,
    ``linear_input``, ``xp_gradient``, ``non_differentiable``,
    ``recorded_gradient``, ``onnx_export``) or a base class's own.
    """
    attrs = dict(fwd=staticmethod(fwd), bwd=staticmethod(bwd) if bwd else None,
                 shape_fn=staticmethod(shape) if shape else None, type_fn=staticmethod(dtype) if dtype else None,
                 args_fn=staticmethod(args) if args else None, deps=deps, fwd_res=tuple(fwd_res),
                 bwd_res=tuple(bwd_res), inplace=inplace, wants_ctx=wants_ctx, mutates=tuple(mutates),
                 visible=visible, arguments=tuple(arguments), outputs=tuple(outputs), aux_states=tuple(aux),
                 key_var_num_args=var_args, fwd_out=fwd_out, bwd_into=bwd_into, __doc__=doc or f"The {name} operator.", **extra)
    for hook in _FUNCTION_HOOKS:  # plain functions stored on the class, called as fn(..., prop, ...)
        if extra.get(hook) is not None and not isinstance(extra[hook], staticmethod):
            attrs[hook] = staticmethod(extra[hook])
    attrs["__module__"] = fwd.__module__
    cls = type(name.strip("_") + "Property", (base,), attrs)
    register_op(name, aliases=tuple(aliases), param=param, doc=doc)(cls)
    return cls.opdef
