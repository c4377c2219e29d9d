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
import sys

import numpy as np

from ..base import MXAsyncError
from ..ndarray import invoke as _invoke_module
from ..ndarray.ndarray import NDArray, zeros
from ..operator import OpReqType
from . import state

__all__ = ["Entry", "Node", "mark_variables", "attach_grad", "record_op", "check_out"]

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
    if stype not in (None, "default"):
        raise MXAsyncError(f"attach_grad: only dense gradients (stype='default'), got stype={stype!r}")
    mark_variables([arr], [zeros(arr.shape, arr.context, arr.dtype)], grad_req)


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


def _in_graph_error(what: str) -> MXAsyncError:
    return MXAsyncError(f"{what}: assigning to an NDArray that is already in a computational graph while "
                        "recording would make its gradients wrong; call backward first to clear the graph, "
                        "write outside autograd.record(), or write into a detach()ed copy")


def check_out(prop, out) -> None:
    """The in-place guard of ``out=`` while recording (MXNet raises the same error)."""
    for o in out if isinstance(out, (list, tuple)) else (out,):
        if isinstance(o, NDArray) and o._ag is not None:
            raise _in_graph_error(prop.label)


def check_write(arr: NDArray, what: str) -> None:
    """The in-place guard of ``x[...] = v`` and ``copyto(x)``."""
    if arr._ag is not None and state.is_recording():
        raise _in_graph_error(what)


def check_inplace(value, what: str) -> None:
    """Writing an array that is in the graph into another one in place (``x[i] = y``, ``x += y``)
    while recording: MXNet records no such op and refuses it with this message."""
    if isinstance(value, NDArray) and value._ag is not None and state.is_recording():
        raise MXAsyncError(f"{what}: Inplace operations (+=, -=, x[:]=, etc) are not supported when recording "
                           "with autograd; write out-of-place (z = x + y) or outside autograd.record()")


# -- views of recorded arrays become ops, so their gradients flow ----------
def reshape(arr: NDArray, shape: tuple) -> NDArray:
    return _invoke_module.invoke("Reshape", [arr], shape=tuple(shape))


def _is_advanced(key) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, (list, tuple, np.ndarray)) for k in keys)


def _advanced(arr: NDArray, key) -> NDArray:
    """Advanced (and mixed) indexing of a recorded array as ``take`` from the flattened array.

    numpy indexes an ``arange`` of the flat positions with the very key, which gives both the
    result's shape and the positions each element comes from, whatever mix of ints, slices,
    None and index arrays the key holds; ``take``'s gradient scatters back (adding repeats).
    """
    if any(getattr(k, "dtype", np.dtype(np.int64)).kind not in "iub"
           for k in (key if isinstance(key, tuple) else (key,)) if isinstance(k, np.ndarray)):
        raise MXAsyncError(f"autograd: only integer index arrays are differentiable, got {key!r}")
    try:
        pos = np.arange(arr.size, dtype=np.int64).reshape(arr.shape)[key]
    except IndexError as err:
        raise MXAsyncError(f"autograd: index {key!r} for an array of shape {arr.shape}: {err}") from None
    indices = _invoke_module._empty(pos.shape or (1,), np.int64, arr.context)
    indices[:] = pos.reshape(pos.shape or (1,))
    flat = reshape(arr, (-1,)) if arr.ndim != 1 else arr
    return _invoke_module.invoke("take", [flat, indices], axis=0, mode="clip")


def getitem(arr: NDArray, key) -> NDArray:
    """Indexing of a recorded array as differentiable ops: basic indexing (ints, slices, None,
    Ellipsis) as ``slice`` + ``Reshape``, advanced indexing as ``take`` (see :func:`_advanced`)."""
    if _is_advanced(key):
        return _advanced(arr, key)
    keys = key if isinstance(key, tuple) else (key,)
    if any(k is None for k in keys):
        # new axes (None) only add size-1 dimensions: index without them, then reshape to numpy's shape
        shape = np.broadcast_to(np.empty((), dtype=np.bool_), arr.shape)[keys].shape or (1,)
        stripped = tuple(k for k in keys if k is not None)
        return reshape(getitem(arr, stripped if stripped else slice(None)), shape)
    if sum(k is Ellipsis for k in keys) > 1:
        raise MXAsyncError(f"autograd: an index can have only one Ellipsis, got {key!r}")
    if Ellipsis in keys:
        i = keys.index(Ellipsis)
        keys = keys[:i] + (slice(None),) * (arr.ndim - len(keys) + 1) + keys[i + 1:]
    if len(keys) > arr.ndim:
        raise MXAsyncError(f"autograd: too many indices {key!r} for an array of shape {arr.shape}")
    begin, end, step, shape = [], [], [], []
    for d, k in enumerate(keys):
        n = arr.shape[d]
        if isinstance(k, slice):
            b, e, s = k.indices(n)
            begin.append(b)
            end.append(e if e >= 0 else None)
            step.append(s)
            shape.append(len(range(b, e, s)))
        else:
            k = int(k)
            if not -n <= k < n:
                raise MXAsyncError(f"index {k} is out of bounds for axis {d} with size {n}")
            k %= n
            begin.append(k)
            end.append(k + 1)
            step.append(1)
    shape += list(arr.shape[len(keys):])
    out = _invoke_module.invoke("slice", [arr], begin=tuple(begin), end=tuple(end), step=tuple(step))
    shape = tuple(shape) or (1,)
    return out if out.shape == shape else reshape(out, shape)


def astype(arr: NDArray, dtype) -> NDArray:
    return _invoke_module.invoke("Cast", [arr], dtype=np.dtype(dtype).name)


def copy(arr: NDArray) -> NDArray:
    return _invoke_module.invoke("_copy", [arr])


_invoke_module._record_hook = sys.modules[__name__]  # invoke() calls record_op/check_out through it
