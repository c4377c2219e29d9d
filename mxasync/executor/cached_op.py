"""``mx.nd.CachedOp``: a Symbol turned into a callable taking NDArrays (MXNet 1.9's imperative CachedOp).

``op = mx.nd.CachedOp(sym)`` then ``op(*inputs)`` runs the graph with the inputs in
``sym.list_inputs()`` order and returns its output (a list when it has several);
``out=`` writes the results into given arrays.  Under ``autograd.record()`` a call is
one node of the tape, so gradients flow to the inputs.  It runs on the same
:class:`~mxasync.executor.cached_graph.CachedGraph` as gluon's hybridized blocks:
one executor bound per input signature.  Inputs are copied into the executor's
arrays at each call (so writing them between calls is seen by the next one), except
auxiliary states, which are bound as they are so that their updates (BatchNorm's
moving statistics) land in the caller's arrays, as in MXNet.

>>> import mxasync as mx
>>> x, w = mx.sym.var("x"), mx.sym.var("w")
>>> op = mx.nd.CachedOp(mx.sym.dot(x, w) + 1)
>>> op(mx.nd.array([[1.0, 2.0]]), mx.nd.array([[3.0], [4.0]])).asnumpy().tolist()
[[12.0]]
"""

from __future__ import annotations

from ..base import MXAsyncError
from ..ndarray.ndarray import NDArray
from .cached_graph import CachedGraph

__all__ = ["CachedOp"]


class CachedOp:
    """``CachedOp(sym, flags=())``: call with the inputs of ``sym`` (positional, in
    ``sym.list_inputs()`` order) and optionally ``out=``.  ``flags`` (MXNet's
    ``static_alloc``, ``static_shape``, ...) are accepted; executors are always cached."""

    is_np_sym = False

    def __init__(self, sym, flags=()) -> None:
        from ..symbol import Symbol

        if not isinstance(sym, Symbol):
            raise MXAsyncError(f"CachedOp: sym must be a Symbol, got {type(sym).__name__}")
        try:
            flags = dict(flags)
        except (TypeError, ValueError):
            raise MXAsyncError(f"CachedOp: flags must be (name, value) pairs, got {flags!r}") from None
        self._graph = CachedGraph(sym, flags)
        aux = set(sym.list_auxiliary_states())
        self._is_data = [name not in aux for name in sym.list_inputs()]
        self._num_outputs = len(sym.list_outputs())

    def __call__(self, *args, **kwargs):
        out = kwargs.pop("out", None)
        if kwargs:
            raise TypeError("CachedOp.__call__ got unexpected keyword argument(s): " + ", ".join(kwargs))
        if out is not None:
            targets = [out] if isinstance(out, NDArray) else list(out)
            if len(targets) != self._num_outputs:
                raise MXAsyncError(f"CachedOp: out= has {len(targets)} arrays for a graph of "
                                   f"{self._num_outputs} outputs")
        outs = self._graph(list(args), self._is_data)
        if out is None:
            return outs[0] if len(outs) == 1 else outs
        for k, (o, t) in enumerate(zip(outs, targets, strict=True)):
            if not isinstance(t, NDArray) or t.shape != o.shape:
                raise MXAsyncError(f"CachedOp: out[{k}] must be an NDArray of shape {o.shape}, "
                                   f"got {getattr(t, 'shape', type(t).__name__)}")
            o.copyto(t)
        return out

    def __repr__(self) -> str:
        return f"<CachedOp {self._graph._input_names} -> {self._num_outputs} output(s)>"
