"""Python operators (MXNet's ``mx.operator.CustomOp`` / ``CustomOpProp`` / ``register``) as the ``Custom`` op.

``@register("name")`` records a :class:`CustomOpProp` subclass; ``mx.nd.Custom(x, op_type="name")``
and ``mx.sym.Custom(data=x, op_type="name")`` run it as an engine op like every other op.
Its forward and backward get NDArrays sharing the op's buffers; what they push (NDArray
ops, ``self.assign``) finishes before the op does. They run on a thread of their own
(MXNet's custom-op workers), so they may wait on arrays, which engine workers may not.

>>> import mxasync as mx
>>> class Twice(CustomOp):
...     def forward(self, is_train, req, in_data, out_data, aux):
...         self.assign(out_data[0], req[0], in_data[0] * 2)
...     def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
...         self.assign(in_grad[0], req[0], out_grad[0] * 2)
>>> @register("twice_doc")
... class TwiceProp(CustomOpProp):
...     def create_operator(self, ctx, shapes, dtypes):
...         return Twice()
>>> mx.nd.Custom(mx.nd.array([1, 2]), op_type="twice_doc").asnumpy()
array([2., 4.], dtype=float32)
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from pydantic import ConfigDict, Field, model_validator

from .. import _seams
from ..base import MXAsyncError
from .base import Operator, OperatorProperty
from .params import OpParam
from .registry import register_op

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators"]

_REGISTRY: dict[str, type] = {}
_lock = threading.Lock()
_REQ = {0: "null", 1: "write", 2: "inplace", 3: "add"}
_POOL: ThreadPoolExecutor | None = None


class CustomOp:
    """Base class of a Python operator's computation; override ``forward`` and ``backward``."""

    def forward(self, is_train, req, in_data, out_data, aux):
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        raise NotImplementedError(f"{type(self).__name__}.backward")

    def assign(self, dst, req, src):
        """Store ``src`` into ``dst`` as ``req`` says: 'null' skips, 'write'/'inplace' copy, 'add' adds."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] = dst + src
        else:
            raise MXAsyncError(f"CustomOp.assign: unknown req {req!r}")


class CustomOpProp:
    """Base class of a Python operator's description: arguments, outputs, shapes, types, dependencies."""

    def __init__(self, need_top_grad: bool = True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """``(in_shapes, out_shapes, aux_shapes)``; default: every output has the first input's shape."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """``(in_types, out_types, aux_types)``; default: everything has the first input's type."""
        t = in_type[0]
        return in_type, [t] * len(self.list_outputs()), [t] * len(self.list_auxiliary_states())

    def infer_storage_type(self, in_stype):
        return in_stype, ["default"] * len(self.list_outputs()), ["default"] * len(self.list_auxiliary_states())

    def list_outputs(self):
        return ["output"]

    def list_arguments(self):
        return ["data"]

    def list_auxiliary_states(self):
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """What backward reads: the output gradients (when ``need_top_grad``), the inputs and outputs."""
        deps = list(out_grad) if self.need_top_grad_ else []
        return deps + list(in_data) + list(out_data)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return CustomOp()


def register(reg_name: str):
    """Class decorator: register a :class:`CustomOpProp` subclass as ``op_type=reg_name``."""

    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise MXAsyncError(f"register({reg_name!r}): {prop_cls!r} is not a CustomOpProp subclass")
        with _lock:
            _REGISTRY[reg_name] = prop_cls
        return prop_cls

    return do_register


def get_all_registered_operators() -> list[str]:
    """The names of every op of the registry (MXNet's function of the same name)."""
    from .registry import list_ops

    return list_ops(include_aliases=True)


class CustomParam(OpParam):
    """``op_type`` and whatever else the Python operator takes (kept as strings, as MXNet passes them)."""

    model_config = ConfigDict(frozen=True, extra="allow")
    op_type: str = Field(description="The name the Python operator was registered under (mx.operator.register).")

    @model_validator(mode="before")
    @classmethod
    def _mxnet_strings(cls, data: Any) -> Any:  # overrides OpParam's: every value stays a string
        if isinstance(data, dict):
            return {k: (v if k == "op_type" or isinstance(v, str) else str(v)) for k, v in data.items()}
        return data

    def to_strings(self, only_set: bool = False) -> dict[str, str]:
        return {"op_type": self.op_type, **{k: str(v) for k, v in (self.model_extra or {}).items()}}


def _shape(s) -> bool:
    return s is not None and 0 not in s


@register_op("Custom", param=CustomParam,
             doc="A Python operator registered with ``mx.operator.register(op_type)``; other keyword arguments "
                 "go to its CustomOpProp as strings.")
class CustomProperty(OperatorProperty):
    arguments = ("data",)
    variadic_inputs = True  # the Python operator's list_arguments(), by position or by name

    def __init__(self, params: CustomParam, name: str | None = None):
        super().__init__(params, name)
        prop_cls = _REGISTRY.get(params.op_type)
        if prop_cls is None:
            raise MXAsyncError(f"Custom: op_type {params.op_type!r} is not registered (mx.operator.register); "
                               f"registered: {sorted(_REGISTRY)}")
        self.user = prop_cls(**{k: str(v) for k, v in (params.model_extra or {}).items()})
        self.arguments = tuple(self.user.list_arguments())  # this instance's inputs (the class says "data")

    @property
    def label(self) -> str:
        return f"Custom[{self.params.op_type}]({self.name})" if self.name else f"Custom[{self.params.op_type}]"

    def asynchronous(self, is_train: bool) -> bool:
        return True  # see _CustomOperator.forward_async

    def list_arguments(self):
        return list(self.user.list_arguments())

    def list_outputs(self):
        return list(self.user.list_outputs())

    def list_auxiliary_states(self):
        return list(self.user.list_auxiliary_states())

    def infer_shape(self, in_shapes):
        naux, nout = len(self.list_auxiliary_states()), self.num_outputs()
        unknown = (list(in_shapes), [None] * nout, [None] * naux)
        if not in_shapes or not _shape(in_shapes[0]):
            return unknown
        # as in MXNet, unknown inputs come as [] (most rules derive everything from the first input)
        try:
            res = self.user.infer_shape([list(s) if _shape(s) else [] for s in in_shapes])
        except Exception:  # noqa: BLE001 - a user rule that needs every input: try again when they are known
            if all(_shape(s) for s in in_shapes):
                raise
            return unknown
        ins, outs = res[0], res[1]
        aux = res[2] if len(res) > 2 else []
        def conv(shapes):
            return [tuple(int(d) for d in s) if len(s) else None for s in shapes]

        return conv(ins), conv(outs), conv(aux)

    def infer_type(self, in_types):
        first = next((t for t in in_types if t is not None), None)
        if first is None:
            return list(in_types), [None] * self.num_outputs(), [None] * len(self.list_auxiliary_states())
        res = self.user.infer_type([np.dtype(t if t is not None else first).type for t in in_types])
        conv = [[np.dtype(t) for t in part] for part in res]
        return conv[0], conv[1], conv[2] if len(conv) > 2 else []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return list(self.user.declare_backward_dependency(out_grad, in_data, out_data))

    def create_operator(self, ctx) -> Operator:
        return _CustomOperator(self, ctx)


class _CustomOperator(Operator):
    def __init__(self, prop: CustomProperty, ctx):
        self.prop, self.ctx = prop, ctx
        self._ops: dict = {}

    def _user_op(self, in_data):
        key = tuple((a.shape, a.dtype.str) for a in in_data)
        op = self._ops.get(key)
        if op is None:
            op = self._ops[key] = self.prop.user.create_operator(
                self.ctx, [list(a.shape) for a in in_data], [a.dtype.type for a in in_data])
        return op

    def forward(self, op_ctx, in_data, req, out_data, aux, on_complete=None):
        op = self._user_op(in_data)
        _run(self.prop.params.op_type, self.ctx, lambda w: op.forward(
            is_train=op_ctx.is_train, req=[_REQ[int(r)] for r in req], in_data=w(in_data), out_data=w(out_data),
            aux=w(aux)), written=(out_data, aux), on_complete=on_complete)

    def backward(self, op_ctx, out_grad, in_data, out_data, req, in_grad, aux, on_complete=None):
        op = self._user_op(in_data)
        _run(f"_backward_{self.prop.params.op_type}", self.ctx, lambda w: op.backward(
            req=[_REQ[int(r)] for r in req], out_grad=w(out_grad), in_data=w(in_data), out_data=w(out_data),
            in_grad=w(in_grad), aux=w(aux)), written=(in_grad, aux), on_complete=on_complete)

    # MXNet runs Custom as ExecType::kAsync: the engine's thread is not held while the Python code (which
    # pushes ops of its own) runs on a custom-op thread; the op completes when that code has finished
    forward_async = forward
    backward_async = backward


def _run(scope_name: str, ctx, call, written, on_complete=None) -> None:
    """Run the user's code on a custom-op thread over NDArrays sharing the buffers; wait for what it pushed.

    The ops it pushes are profiled in the op's scope (``MyOp::_zeros``), its own time as ``MyOp::pure_python``.
    """
    from ..runtime.profiler import CUSTOM_OP_DOMAIN, current, scope

    wrap = _seams.wrap_array.get()  # the NDArray layer's, installed from above
    wrapped: dict[int, Any] = {}

    def w(arrays):
        out = []
        for a in arrays:
            nd = wrapped.get(id(a))
            if nd is None:
                nd = wrapped[id(a)] = wrap(a, ctx)
            out.append(nd)
        return out

    def body():
        t0 = time.perf_counter()
        with scope(scope_name):
            call(w)
            for arrays in written:
                for nd in w(arrays):
                    nd.wait_to_read()
        current().record_range(CUSTOM_OP_DOMAIN, f"{scope_name}::pure_python", t0, time.perf_counter())

    global _POOL
    if _POOL is None:
        with _lock:
            if _POOL is None:
                _POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mxasync-custom-op")
    if on_complete is None:
        _POOL.submit(body).result()
        return

    def done(fut) -> None:
        exc = fut.exception()
        if exc is None:
            on_complete()
        else:
            on_complete(exc)

    _POOL.submit(body).add_done_callback(done)
