"""The tape: what ``record()`` keeps of each op call, and the arrays' autograd entries.

Every NDArray has an ``_ag`` slot, None for an array autograd does not know.
:func:`mark_variables` (``attach_grad``) gives an array an :class:`Entry`
holding its gradient buffer and ``grad_req``; a recorded op call gives each
of its outputs (hidden ones too, e.g. Dropout's mask) an :class:`Entry`
pointing at its :class:`Node`.  A node keeps the op, its input, output and
aux arrays and its training flag, which is all backward needs.  An op call is
recorded only when one of its inputs has an entry, so constants cost nothing.

>>> import mxasync as mx
>>> x = mx.nd.array([1.0, 2.0]); x.attach_grad()
>>> with mx.autograd.record():
...     y = x * 2 + 1
>>> y._ag.node.prop.op_name, y._ag.node.inputs[0]._ag.node.prop.op_name
('_plus_scalar', '_mul_scalar')
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import ClassVar, Protocol

from ..base import MXAsyncError
from ..ndarray import _recording as state
from ..ndarray.ndarray import NDArray, zeros
from ..operator import OpReqType

__all__ = ["TapeOp", "Entry", "Node", "mark_variables", "attach_grad", "record_op"]


class TapeOp(Protocol):
    """What a node's ``prop`` is to the tape and the backward pass: an ``OperatorProperty``, or
    one of the stand-ins for what is not one op (a hybridized block's graph node, an
    ``autograd.Function``, the links of a higher-order graph).

    ``tape_backward(node, out_grads, want, train_mode) -> input gradients`` (None: no gradient)
    replaces the op's backward kernel when set; ``out_grads`` holds one summed array or None per
    output, ``want`` one flag per input.  ``tape_backward_recorded`` says its computation is
    recorded op calls (differentiable again with ``create_graph``); otherwise a ``create_graph``
    pass links its results to the graph as non-differentiable.  Every other fact the pass reads
    (``zero_gradient``, ``linear_input``, the sparse kernels, ``declare_backward_dependency``...)
    is an ``OperatorProperty`` declaration (docs/operators.md, "Facts an op declares").
    """

    op_name: str
    label: str
    zero_gradient: bool
    tape_backward: ClassVar[Callable | None]
    tape_backward_recorded: ClassVar[bool]

_seq = itertools.count()


class Node:
    """One recorded op call; ``seq`` orders nodes by recording time (a valid topological order)."""

    __slots__ = ("prop", "ctx", "inputs", "in_ag", "aux", "outputs", "is_train", "seq", "freed")

    def __init__(self, prop, ctx, inputs, in_ag, aux, outputs, is_train):
        self.prop, self.ctx, self.is_train = prop, ctx, is_train
        self.inputs, self.in_ag, self.aux, self.outputs = list(inputs), in_ag, list(aux), list(outputs)
        self.seq = next(_seq)
        self.freed = False

    def free(self) -> None:
        """Drop the arrays (backward without ``retain_graph``); the node stays to explain the error."""
        self.freed = True
        self.inputs = self.in_ag = self.aux = self.outputs = None

    def __repr__(self) -> str:
        return f"<Node {self.prop.label} #{self.seq}{' freed' if self.freed else ''}>"


class Entry:
    """An array's place in autograd: output ``index`` of ``node``, or a variable (``node`` None)."""

    __slots__ = ("node", "index", "grad", "req", "fresh")

    def __init__(self, node: Node | None = None, index: int = 0, grad=None, req=OpReqType.NULL):
        self.node, self.index, self.grad, self.req = node, index, grad, req
        self.fresh = False  # a backward wrote the gradient since the last optimizer step (gluon's stale check)


def _req(value) -> OpReqType:
    try:
        req = OpReqType.parse(value)
    except (KeyError, ValueError):
        raise MXAsyncError(f"autograd: grad_req must be 'write', 'add' or 'null', got {value!r}") from None
    return OpReqType.WRITE_TO if req == OpReqType.WRITE_INPLACE else req


def mark_variables(variables, gradients, grad_reqs="write") -> None:
    """Make ``variables`` autograd variables whose gradients go to ``gradients`` (MXNet's mark_variables)."""
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    variables, gradients = list(variables), list(gradients)
    if len(variables) != len(gradients):
        raise MXAsyncError(f"mark_variables: {len(variables)} variables but {len(gradients)} gradients")
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, (str, int)) else list(grad_reqs)
    if len(reqs) != len(variables):
        raise MXAsyncError(f"mark_variables: {len(variables)} variables but {len(reqs)} grad_reqs")
    for v, g, r in zip(variables, gradients, reqs, strict=True):
        if not isinstance(v, NDArray) or not isinstance(g, NDArray):
            raise MXAsyncError("mark_variables: variables and gradients must be NDArrays")
        if g.shape != v.shape:
            raise MXAsyncError(f"mark_variables: gradient of shape {g.shape} for a variable of shape {v.shape}")
        v._ag = Entry(None, 0, g, _req(r))


def attach_grad(arr: NDArray, grad_req="write", stype=None) -> None:
    """``arr.attach_grad()``: a zero gradient buffer and ``grad_req``; cuts ``arr`` from any recorded graph."""
    if stype not in (None, "default", "row_sparse", "csr"):
        raise MXAsyncError(f"attach_grad: unknown storage type {stype!r}; valid: 'default', 'row_sparse', 'csr'")
    stype = arr.stype if stype is None else stype  # MXNet: the gradient takes the array's storage type
    mark_variables([arr], [zeros(arr.shape, arr.context, arr.dtype, stype=stype)], grad_req)


def record_op(prop, ctx, args, aux, outputs, is_train) -> None:
    """Append a node for an op call made while recording, if one of its inputs is in a graph."""
    in_ag = [x._ag for x in args]
    for k, e in enumerate(in_ag):
        if e is not None and e.node is not None and e.node.freed:
            # an output of a graph a backward has freed is a constant now (MXNet clears its entry)
            in_ag[k] = None
    for e in in_ag:
        if e is not None:
            break
    else:
        return
    node = Node(prop, ctx, args, in_ag, aux, outputs, is_train)
    for k, o in enumerate(outputs):
        o._ag = Entry(node, k)
    state.current_tape().append(node)
