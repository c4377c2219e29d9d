"""Operator interfaces: ``OpReqType``, ``OpContext``, ``assign``, ``Operator``, ``OperatorProperty``.

``OperatorProperty`` says what an op is (arguments, outputs, shape and type
rules, resources, backward dependencies, in-place options); ``Operator`` does
the work on the backend's raw arrays, writing into the given outputs as
``req`` says.  :func:`assign` is the one place that honours ``req``.

>>> import numpy as np
>>> out = np.ones(2)
>>> assign(out, OpReqType.ADD_TO, np.array([1.0, 2.0])); out
array([2., 3.])
>>> assign(out, OpReqType.NULL, 0.0); out
array([2., 3.])
>>> assign(out, OpReqType.WRITE_TO, 5.0); out
array([5., 5.])
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from .._bfloat16 import is_bfloat16
from ..backends.registry import generation as backend_generation
from ..base import MXAsyncError
from .params import NoParam, OpParam

__all__ = ["OpReqType", "OpContext", "assign", "Operator", "OperatorProperty", "NULL", "WRITE_TO",
           "WRITE_INPLACE", "ADD_TO"]


class OpReqType(enum.IntEnum):
    """How an op must store an output: skip it, overwrite it (also in place) or add to it."""

    NULL = 0
    WRITE_TO = 1
    WRITE_INPLACE = 2
    ADD_TO = 3

    @classmethod
    def parse(cls, value: Any) -> OpReqType:
        """From MXNet's grad_req strings: 'null', 'write', 'inplace', 'add'."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            return _REQ_NAMES[value.lower()]
        return cls(value)


NULL, WRITE_TO, WRITE_INPLACE, ADD_TO = OpReqType.NULL, OpReqType.WRITE_TO, OpReqType.WRITE_INPLACE, OpReqType.ADD_TO
_REQ_NAMES = {"null": NULL, "write": WRITE_TO, "write_to": WRITE_TO, "inplace": WRITE_INPLACE,
              "write_inplace": WRITE_INPLACE, "add": ADD_TO, "add_to": ADD_TO}


def assign(out: Any, req: OpReqType, value: Any) -> None:
    """Store ``value`` into ``out`` according to ``req`` (the rule every op follows)."""
    if req is NULL or req == 0:
        return
    if req is ADD_TO or req == 3:
        out += value
    elif value is not out:
        out[...] = value


class OpContext:
    """What an op gets at run time: training flag, the engine's ``RunContext``, requested resources."""

    __slots__ = ("is_train", "run_ctx", "requested")

    def __init__(self, is_train: bool = False, run_ctx: Any = None, requested: list | tuple = ()):
        self.is_train = is_train
        self.run_ctx = run_ctx
        self.requested = requested

    def __repr__(self) -> str:
        return f"OpContext(is_train={self.is_train}, run_ctx={self.run_ctx!r}, requested={self.requested!r})"


class Operator:
    """The implementation of an op on one context; holds no per-call state."""

    def forward(self, op_ctx: OpContext, in_data: list, req: list, out_data: list, aux: list) -> None:
        raise NotImplementedError

    def backward(self, op_ctx: OpContext, out_grad: list, in_data: list, out_data: list, req: list,
                 in_grad: list, aux: list) -> None:
        raise MXAsyncError(f"{type(self).__name__}: backward is not implemented")

    # an op whose property says ``asynchronous(is_train)`` runs through these instead: done when it
    # calls ``on_complete()`` (or ``on_complete(exc)``), from any thread; they must never block
    def forward_async(self, op_ctx: OpContext, in_data: list, req: list, out_data: list, aux: list,
                      on_complete: Callable) -> None:
        self.forward(op_ctx, in_data, req, out_data, aux)
        on_complete()

    def backward_async(self, op_ctx: OpContext, out_grad: list, in_data: list, out_data: list, req: list,
                       in_grad: list, aux: list, on_complete: Callable) -> None:
        self.backward(op_ctx, out_grad, in_data, out_data, req, in_grad, aux)
        on_complete()


class _Converters:
    """``OperatorProperty.onnx_export`` until a converter is attached to the op's class: the first look-up
    loads the converter modules (with every family), then finds the attached one or None."""

    def __get__(self, obj: Any, cls: type | None = None) -> Callable | None:
        from .registry import load_all

        load_all()
        for klass in (cls or type(obj)).__mro__:
            value = klass.__dict__.get("onnx_export")
            if value is not None and not isinstance(value, _Converters):
                return value.__get__(obj, cls) if hasattr(value, "__get__") else value
        return None


class OperatorProperty:
    """Describes an op; ``get_op(name).prepare(**kwargs)`` returns a cached instance bound to params.

    Subclasses set ``arguments``/``outputs``/``aux_states`` (class attributes used
    for signatures and docs) and override the methods whose default is wrong for them.
    """

    op_name: ClassVar[str] = "?"
    param_cls: ClassVar[type[OpParam]] = NoParam
    arguments: ClassVar[tuple[str, ...]] = ("data",)
    outputs: ClassVar[tuple[str, ...]] = ("output",)
    aux_states: ClassVar[tuple[str, ...]] = ()
    #: name of the param that counts a variable number of inputs (Concat's num_args), if any
    key_var_num_args: ClassVar[str | None] = None
    #: the inputs are whatever the instance's ``list_arguments()`` says (Custom: the Python operator's):
    #: the front ends take them by position (``*data``) or by those names
    variadic_inputs: ClassVar[bool] = False
    #: the param holding the node's subgraph, which MXNet's symbol JSON keeps in the node's
    #: ``subgraphs`` field (the fused ``_sg_mkldnn_*`` ops); the JSON reader and writer move it
    json_subgraph: ClassVar[str | None] = None

    # -- gradient traits (read by the executor's gradient pass and by autograd) -----------
    #: the gradient is zero by definition (MXNet's zero ops: comparisons, rounding, ``BlockGrad``):
    #: the gradient passes prune the node instead of running its backward
    zero_gradient: ClassVar[bool] = False
    #: the op has no gradient at all (``_histogram``, ``batch_take``): binding a graph that needs
    #: a gradient through it is an error
    non_differentiable: ClassVar[bool] = False
    #: the op is linear in its first input, the others being constants (indices, shapes): its
    #: backward is then differentiated, for higher-order gradients, by applying the op itself
    linear_input: ClassVar[bool] = False
    #: the declared backward kernel (``bwd`` of :func:`~mxasync.operator.functional.defop`) uses only
    #: the elementwise part of the array namespace, so autograd can run it on recorded NDArray ops
    xp_gradient: ClassVar[bool] = False
    #: what the autograd tape runs for a node of this op instead of its backward kernel (see
    #: ``autograd/tape.py``, ``TapeOp``): None for operators, whose kernels run; a hybridized
    #: block's graph node, an ``autograd.Function`` and the links of higher-order graphs set it
    tape_backward: ClassVar[Callable | None] = None
    #: ``tape_backward`` computes with recorded op calls, so its results can be differentiated again
    tape_backward_recorded: ClassVar[bool] = False
    #: ``fn(nd, prop, out_grads, inputs, outputs) -> input gradients | None``: the gradient as calls
    #: on NDArrays for ``create_graph`` (``nd.invoke(name, inputs, **params)`` runs an op); None for
    #: an input means zero, a None result means "not covered here" (the kernel runs instead)
    recorded_gradient: ClassVar[Callable | None] = None

    # -- storage types (set by :func:`~mxasync.operator.sparse.formats.register_sparse`) ------
    #: ``fn(xp, prop, op_ctx, inputs, out_stypes) -> outputs`` on csr / row_sparse values, or None
    sparse_forward: ClassVar[Callable | None] = None
    #: ``fn(xp, prop, op_ctx, out_grads, inputs, outputs, grad_stypes) -> input gradients``, or None
    sparse_backward: ClassVar[Callable | None] = None
    #: ``fn(prop, in_stypes, out_stypes) -> grad_stypes`` the sparse backward offers, or None
    sparse_backward_infer: ClassVar[Callable | None] = None
    #: dense inputs may give sparse outputs (``cast_storage``): imperative calls ask ``infer_storage_type``
    sparse_from_dense: ClassVar[bool] = False
    #: the forward kernel writes into the planned output (``fwd_out`` of
    #: :func:`~mxasync.operator.functional.defop`): True under WRITE_TO, "inplace" under WRITE_INPLACE too
    fwd_out: ClassVar[bool | str] = False

    #: on host backends, float16 arrays too go to the kernel as float32 copies, the results rounded back
    #: (operator/widen.py): the BLAS-bound ops (numpy's float16 matmul has no BLAS); bfloat16 always does
    float16_in_float32: ClassVar[bool] = False

    #: the forward kernel is a pure function of its arrays that never calls the engine: a small
    #: imperative call may run it at its push, under the engine's lock (``Engine.push_kernel``)
    pure_kernel: ClassVar[bool] = False

    # -- asynchronous ops (MXNet's ExecType::kAsync) ----------------------------------------
    #: the backward writes the aux states (MXNet's SyncBatchNorm updates its moving statistics
    #: there): the callers list their vars among the backward's writes, not its reads
    backward_writes_aux: ClassVar[bool] = False

    def asynchronous(self, is_train: bool) -> bool:
        """Whether a call (forward, and its backward) completes after its function returns.

        Then the callers push ``forward_async_fn`` / ``backward_async_fn`` with
        ``Engine.push_async``: the function gets a trailing ``on_complete`` and the op is done when
        it is called (``_contrib_SyncBatchNorm`` with ``ndev > 1`` in training waits so for the
        copies on the other devices without holding a thread). Default: never.
        """
        return False

    # -- shapes known only from values ---------------------------------------------------
    #: ``fn(prop, in_data) -> output shapes`` for an op whose output shape depends on its input
    #: values (``_contrib_boolean_mask``): an imperative call waits for its inputs and asks this
    #: (``in_data`` the backend arrays); its ``infer_shape`` leaves those dimensions unknown (None)
    shape_from_values: ClassVar[Callable | None] = None

    # -- export --------------------------------------------------------------------------
    #: ``fn(builder)`` converting one node to ONNX; the exporter passes its builder object
    #: (:class:`~mxasync.operator.onnx_protocol.OnnxBuilder`: the node's params, input/output
    #: names, shapes; ``add``/``const`` to write nodes), so this layer never imports onnx.
    #: None: the op cannot be exported.  The converters live in their own modules and attach themselves
    #: when every family loads (``registry.load_all``), which the first look-up here does.
    onnx_export: ClassVar[Callable | None] = _Converters()  # type: ignore[assignment]

    def __init__(self, params: OpParam, name: str | None = None):
        self.params = params
        self.name = name
        self._operators: dict = {}
        self._operators_gen = backend_generation()  # see _kernels()
        self._fwd_res: list | None = None

    # -- what the op is ---------------------------------------------------
    @property
    def label(self) -> str:
        """``FullyConnected(fc1)`` or ``FullyConnected``: how errors name this op."""
        return f"{self.op_name}({self.name})" if self.name else self.op_name

    def list_arguments(self) -> list[str]:
        return list(self.arguments)

    def list_outputs(self) -> list[str]:
        return list(self.outputs)

    def list_auxiliary_states(self) -> list[str]:
        return list(self.aux_states)

    def num_outputs(self) -> int:
        return len(self.list_outputs())

    def num_visible_outputs(self) -> int:
        return self.num_outputs()

    def mutate_inputs(self) -> list[int]:
        """Indices of inputs the op writes in place (optimizer states); the caller lists their vars as mutated."""
        return []

    def train_only_outputs(self) -> list[int]:
        """Indices of hidden outputs only a training forward writes, for its backward (MXNet's reserve
        space): an imperative call in inference allocates them empty, shape ``(0,)``, and the kernel
        leaves an empty one alone.  A bound graph allocates them whole."""
        return []

    def error(self, message: str) -> MXAsyncError:
        return MXAsyncError(f"{self.label}: {message}")

    def infer_shape(self, in_shapes: list) -> tuple[list, list, list]:
        """``(in_shapes, out_shapes, aux_shapes)``; unknown shapes are None.  Default: elementwise."""
        known = [s for s in in_shapes if s is not None]
        if not known:
            return list(in_shapes), [None] * self.num_outputs(), [None] * len(self.list_auxiliary_states())
        s0 = known[0]
        names = self.list_arguments()
        for i, s in enumerate(in_shapes):
            if s is not None and s != s0:
                raise self.error(f"{names[i] if i < len(names) else i} has shape {s} but {names[0]} has {s0}")
        return [s0] * len(in_shapes), [s0] * self.num_outputs(), [s0] * len(self.list_auxiliary_states())

    def infer_type(self, in_types: list) -> tuple[list, list, list]:
        """``(in_types, out_types, aux_types)``; default: every array has the first known dtype."""
        t0 = next((t for t in in_types if t is not None), None)
        if t0 is None:
            return list(in_types), [None] * self.num_outputs(), [None] * len(self.list_auxiliary_states())
        return [t0] * len(in_types), [t0] * self.num_outputs(), [t0] * len(self.list_auxiliary_states())

    def infer_storage_type(self, in_stypes: list) -> tuple[list, list, list]:
        """``(in_stypes, out_stypes, aux_stypes)``, each ``"default"`` (dense), ``"row_sparse"`` or
        ``"csr"`` (MXNet's FInferStorageType).  Default: dense everywhere; an op with sparse kernels
        overrides it, and a dense-only op given sparse inputs has them made dense first.
        """
        n_out, n_aux = self.num_outputs(), len(self.list_auxiliary_states())
        return ["default"] * len(in_stypes), ["default"] * n_out, ["default"] * n_aux

    def refine_partial_inputs(self, in_shapes: list, out_shapes: list) -> list | None:
        """Input shapes that the known output shapes imply, where the inputs' are partly unknown (MXNet's
        backward shape inference: FullyConnected's weight from its output), or None (nothing to add)."""
        return None

    #: per argument, the ``__init__`` attribute a Variable composed into it gets (MXNet's
    #: FSetInputVarAttrOnCompose: a PReLU's gamma starts at 0.25)
    input_var_init: ClassVar[dict[str, str]] = {}

    def forward_resource(self) -> list:
        return []

    def backward_resource(self) -> list:
        return []

    def resources(self, is_train: bool = False) -> list:
        """The resource requests of a forward call (cached; imperative fast path)."""
        res = self._fwd_res
        if res is None:
            res = self._fwd_res = list(self.forward_resource())
        return res

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        """The subset of ``out_grad + in_data + out_data`` backward reads (default: all)."""
        return list(out_grad) + list(in_data) + list(out_data)

    def forward_inplace_option(self, in_data: list, out_data: list) -> list[tuple]:
        return []

    def backward_inplace_option(self, out_grad: list, in_data: list, out_data: list, in_grad: list) -> list[tuple]:
        return []

    # -- how it runs -------------------------------------------------------
    def create_operator(self, ctx) -> Operator:
        raise NotImplementedError(f"{self.op_name}: create_operator")

    def _kernels(self) -> dict:
        """The operators and launch wrappers cached per context, dropped when the backend serving a
        device type may have changed (``mx.backends.use``): they hold that backend's kernels."""
        gen = backend_generation()
        if self._operators_gen != gen:
            self._operators = {}
            self._operators_gen = gen
        return self._operators

    def operator(self, ctx) -> Operator:
        """``create_operator(ctx)``, cached per context (and per serving backend)."""
        cache = self._kernels()
        op = cache.get(ctx)
        if op is None:
            op = cache[ctx] = self.create_operator(ctx)
        return op

    def _launched(self, kind: str, ctx, method: str):
        """``operator(ctx).<method>`` inside ``ctx``'s launch scope, cached per (kind, context)."""
        key = (kind, ctx)
        cache = self._kernels()
        fn = cache.get(key)
        if fn is None:
            fn = cache[key] = _launching(ctx, getattr(self.operator(ctx), method))
        return fn

    def forward_fn(self, ctx):
        """``fn(op_ctx, in_data, req, out_data, aux)`` running forward on ``ctx`` (cached; the fast path)."""
        return self._launched("fwd", ctx, "forward")

    def backward_fn(self, ctx):
        """``fn(op_ctx, out_grad, in_data, out_data, req, in_grad, aux)`` running backward on ``ctx``."""
        return self._launched("bwd", ctx, "backward")

    def forward_async_fn(self, ctx):
        """``fn(op_ctx, in_data, req, out_data, aux, on_complete)``: forward of an asynchronous call."""
        return self._launched("fwd_async", ctx, "forward_async")

    def backward_async_fn(self, ctx):
        """``fn(op_ctx, out_grad, in_data, out_data, req, in_grad, aux, on_complete)``: its backward."""
        return self._launched("bwd_async", ctx, "backward_async")

    def __repr__(self) -> str:
        return f"<{self.label} {self.params!r}>"


def placeholder(xp: Any, shape: tuple, dtype: Any) -> Any:
    """A read-only stand-in (NaN, or 0 for integers) for an array a backward does not read.

    The gradient passes hand these for the entries an op's ``declare_backward_dependency``
    leaves out, so a kernel that reads one anyway shows NaN instead of stale data.
    """
    dtype = np.dtype(dtype)
    fill = np.nan if dtype.kind in "fc" or is_bfloat16(dtype) else 0
    return xp.broadcast_to(xp.asarray(fill, dtype=dtype), shape)


def _launching(ctx, fn):
    """Wrap ``fn`` so asynchronous backends launch on the op's device and stream."""
    from ..backends import get_backend

    backend = get_backend(ctx.device_type)
    if not backend.asynchronous:
        return fn
    scope = backend.launch_scope

    def launched(op_ctx, *args):
        with scope(op_ctx.run_ctx):
            return fn(op_ctx, *args)

    return launched
