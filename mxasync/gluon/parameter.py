"""Gluon parameters: ``Parameter``, ``Constant`` and ``ParameterDict`` (MXNet 1.9's semantics and messages).

A :class:`Parameter` holds one copy of its value per context (``data(ctx)``)
and, unless ``grad_req='null'``, one gradient buffer per copy, marked as an
autograd variable so ``backward`` fills it.  Its shape may have unknown (0)
dimensions until the first forward pass infers them (deferred
initialization).

>>> import mxasync as mx
>>> p = mx.gluon.Parameter('w', shape=(2, 3))
>>> p.initialize(init=mx.init.One(), ctx=[mx.cpu(0), mx.cpu(1)])
>>> float(p.data(mx.cpu(1)).asnumpy().sum()), [str(c) for c in p.list_ctx()]
(6.0, ['cpu(0)', 'cpu(1)'])
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import autograd
from .. import initializer as _init
from .. import ndarray as nd
from .. import symbol as _sym
from ..ndarray.ndarray import NDArray
from ..runtime.context import Context, cpu, current_context
from ..util import is_np_array

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "ParameterDict", "tensor_types"]

tensor_types = (_sym.Symbol, NDArray)


class DeferredInitializationError(Exception):
    """A parameter's value was asked for before its deferred initialization ran."""


def _shape_known(shape) -> bool:
    return shape is not None and all(int(d) > 0 for d in shape)


def _brief_print_list(lst, limit: int = 7) -> str:
    lst = list(lst)
    if len(lst) > limit:
        return _brief_print_list(lst[:limit // 2], limit) + ", ..., " + _brief_print_list(lst[-limit // 2:], limit)
    return ", ".join(f"'{s}'" for s in lst)


class Parameter:
    """A weight of a Block: its value on each context, its gradient and how the trainer treats it."""

    def __init__(self, name, grad_req="write", shape=None, dtype=np.float32, lr_mult=1.0, wd_mult=1.0, init=None,
                 allow_deferred_init=False, differentiable=True, stype="default", grad_stype="default"):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = tuple(shape) if shape is not None else None
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        for what, st in (("stype", stype), ("grad_stype", grad_stype)):
            if st not in ("default", "row_sparse", "csr"):
                raise ValueError(f"Invalid {what} '{st}' for Parameter '{name}'; valid: 'default', 'row_sparse', "
                                 "'csr'")
        # mxasync stores every array dense; the storage types only steer the trainer's choices, as in MXNet
        self._stype = stype
        self._grad_stype = grad_stype

    def __repr__(self) -> str:
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    # -- attributes -------------------------------------------------------------------
    @property
    def grad_req(self) -> str:
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req) -> None:
        if req not in ("write", "add", "null"):
            raise ValueError(f"grad_req must be one of 'write', 'add', or 'null', but got '{req}'")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            self._data = [i.detach() for i in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        return self._dtype

    @dtype.setter
    def dtype(self, dtype) -> None:
        self.cast(dtype)

    @property
    def shape(self):
        return self._shape

    @shape.setter
    def shape(self, new_shape) -> None:
        if new_shape is None:
            return
        new_shape = tuple(int(d) for d in new_shape)
        if self._shape is None:
            self._shape = new_shape
            return
        ok = len(self._shape) == len(new_shape) and all(
            i == j or j in (0, -1) for i, j in zip(new_shape, self._shape, strict=True))
        if not ok:
            raise AssertionError(f"Expected shape {new_shape} is incompatible with given shape {self._shape}.")
        self._shape = new_shape

    @property
    def stype(self) -> str:
        return self._stype

    def _set_trainer(self, trainer) -> None:
        """Remember the trainer (a sparse parameter may belong to one trainer only, as in MXNet)."""
        if self._stype != "default" and self._trainer and trainer and self._trainer is not trainer:
            raise RuntimeError(f"Failed to set the trainer for Parameter '{self.name}' because it was already set. "
                               f"More than one trainers for a {self._stype} Parameter is not supported.")
        self._trainer = trainer

    # -- access -------------------------------------------------------------------------
    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            idx = self._ctx_map.get(ctx)
            if idx is not None:
                return arr_list[idx]
            raise RuntimeError(f"Parameter '{self.name}' was not initialized on context {ctx}. "
                               f"It was only initialized on {self._ctx_list}.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization was deferred. "
                "Actual initialization happens during the first forward pass. Please pass one batch of data "
                "through the network before accessing Parameters. You can also avoid deferred initialization "
                "by specifying in_units, num_features, etc., for network layers.")
        raise RuntimeError(f"Parameter '{self.name}' has not been initialized. Note that you should initialize "
                           "parameters and create Trainer with Block.collect_params() instead of Block.params "
                           "because the later does not include Parameters of nested child Blocks")

    def _check_dense(self, what: str) -> None:
        if self._stype != "default":
            raise RuntimeError(f"Cannot return a copy of Parameter '{self.name}' via {what} because its storage "
                               f"type is {self._stype}. Please use row_sparse_data() instead.")

    def data(self, ctx=None) -> NDArray:
        """This parameter's value on ``ctx`` (the only context when it has one)."""
        self._check_dense("data()")
        arr = self._check_and_get(self._data, ctx)
        return arr.as_np_ndarray() if is_np_array() else arr

    def list_data(self) -> list:
        """The values on every context, in :meth:`list_ctx` order."""
        self._check_dense("list_data()")
        return self._check_and_get(self._data, list)

    def row_sparse_data(self, row_id) -> NDArray:
        """The value on ``row_id``'s context holding (at least) the rows ``row_id``: with a trainer,
        those rows are pulled from its kvstore first (MXNet's ``row_sparse_pull``)."""
        if self._stype != "row_sparse":
            raise RuntimeError(f"Cannot return a copy of Parameter {self.name} via row_sparse_data() because its "
                               f"storage type is {self._stype}. Please use data() instead.")
        out = self._check_and_get(self._data, row_id.context)
        if self._trainer is not None:
            self._trainer._row_sparse_pull(self, out, row_id)
        return out

    def list_row_sparse_data(self, row_id) -> list:
        """The values on every context, each holding the rows ``row_id`` (see :meth:`row_sparse_data`)."""
        if self._stype != "row_sparse":
            raise RuntimeError(f"Cannot return copies of Parameter '{self.name}' on all contexts via "
                               f"list_row_sparse_data() because its storage type is {self._stype}. Please use "
                               "data() instead.")
        outs = self._check_and_get(self._data, list)
        if self._trainer is not None:
            self._trainer._row_sparse_pull(self, outs, row_id, full_idx=False)
        return outs

    def grad(self, ctx=None) -> NDArray:
        """The gradient buffer on ``ctx``."""
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because grad_req='null'")
        arr = self._check_and_get(self._grad, ctx)
        return arr.as_np_ndarray() if is_np_array() and arr is not None else arr

    def list_grad(self) -> list:
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because grad_req='null'")
        return self._check_and_get(self._grad, list)

    def list_ctx(self) -> list:
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
        return self._ctx_list

    # -- initialization -----------------------------------------------------------------
    def initialize(self, init=None, ctx=None, default_init=None, force_reinit=False) -> None:
        """Create the value on each of ``ctx`` with ``init`` (or the parameter's own, or ``default_init``).

        With an unknown shape and ``allow_deferred_init`` the work waits for the first forward pass.
        """
        if default_init is None:
            default_init = _init.Uniform()
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set force_reinit=True to "
                          "re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        ctx = _ctx_list(ctx)
        if init is None:
            init = default_init if self.init is None else self.init
        if not _shape_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError(f"Cannot initialize Parameter '{self.name}' because it has invalid shape: "
                             f"{self.shape}.")
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self) -> None:
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not _shape_known(self.shape):
            raise AssertionError(f"Cannot initialize Parameter '{self.name}' because it has invalid shape: "
                                 f"{self.shape}. Please specify in_units, in_channels, etc for `Block`s.")
        with autograd.pause():
            if data is None:
                data = nd.zeros(self.shape, ctx=cpu(), dtype=self.dtype)
                if is_np_array():  # MXNet hands initializers an mx.np array then (d2l's custom ones use np ops)
                    data = data.as_np_ndarray()
                _init.create(default_init)(_init.InitDesc(self.name, {"__init__": init}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data: NDArray, ctx_list: list) -> None:
        self._ctx_list = list(ctx_list)
        self._ctx_map = {c: i for i, c in reversed(list(enumerate(self._ctx_list)))}
        with autograd.pause():
            self._data = [data.astype(self.dtype).copyto(c) if np.dtype(data.dtype) != np.dtype(self.dtype)
                          else data.copyto(c) for c in self._ctx_list]
            if self._stype != "default":
                self._data = [d.tostype(self._stype) for d in self._data]
        self._init_grad()

    def _init_grad(self) -> None:
        if self.grad_req == "null":
            self._grad = None
            return
        self._grad = [nd.zeros(d.shape, ctx=d.context, dtype=d.dtype, stype=self._grad_stype) for d in self._data]
        autograd.mark_variables(self._data, self._grad, self.grad_req)

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source="current") -> None:
        """Initialize (or overwrite) from a loaded array."""
        if self.shape:
            unknown_ok = all(j in (0, -1) or i == j for i, j in zip(data.shape, self.shape, strict=False))
            if len(data.shape) != len(self.shape) or not unknown_ok:
                raise AssertionError(f"Failed loading Parameter '{self.name}' from saved params: shape incompatible "
                                     f"expected {self.shape} vs saved {data.shape}")
            self.shape = tuple(i if i not in (0, -1) else j for i, j in zip(self.shape, data.shape, strict=True))
        else:
            self._shape = tuple(data.shape)
        if self.dtype is not None and np.dtype(self.dtype) != np.dtype(data.dtype):
            if not cast_dtype:
                raise AssertionError(f"Failed loading Parameter '{self.name}' from saved params: dtype incompatible "
                                     f"expected {np.dtype(self.dtype)} vs saved {np.dtype(data.dtype)}. Set "
                                     "cast_dtype=True to cast the dtype of saved params.")
            if dtype_source == "saved":
                self._dtype = data.dtype
            else:
                data = data.astype(self.dtype, copy=False)
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                if ctx is not None and set(ctx) != set(self._deferred_init[1]):
                    raise AssertionError(f"Failed to load Parameter '{self.name}' on {ctx} because it was previous "
                                         f"initialized on {self.list_ctx()}.")
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, ctx)
        else:
            if ctx is not None and set(ctx) != set(self.list_ctx()):
                raise AssertionError(f"Failed to load Parameter '{self.name}' on {ctx} because it was previous "
                                     f"initialized on {self.list_ctx()}.")
            self.set_data(data)
        self._deferred_init = ()

    def _reduce(self) -> NDArray:
        """The value averaged over the contexts, on the CPU (what ``save`` writes)."""
        block = self.list_data() if self._stype == "default" else self._check_and_get(self._data, list)
        if len(block) == 1:
            return block[0].copyto(cpu())
        with autograd.pause():
            return nd.add_n(*(w.copyto(cpu()) for w in block)) / len(block)

    def set_data(self, data) -> None:
        """Write ``data`` into the value on every context."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise AssertionError(f"Parameter '{self.name}' has not been initialized")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        if trainer is not None and trainer._kv_initialized and trainer._update_on_kvstore \
                and self not in trainer._params_to_init:
            trainer._reset_kvstore()
        with autograd.pause():
            for arr in self._check_and_get(self._data, list):
                arr[:] = data

    def reset_ctx(self, ctx) -> None:
        """Move the value (averaged over the old contexts) to the new contexts."""
        ctx = _ctx_list(ctx)
        if self._data:
            data = self._reduce()
            self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError(f"Cannot reset context for Parameter '{self.name}' because it has not been "
                             "initialized.")

    def zero_grad(self) -> None:
        """Set the gradient buffers to 0 (for ``grad_req='add'``)."""
        if self._grad is None:
            return
        for g in self._grad:
            g[:] = 0

    def var(self) -> _sym.Symbol:
        """The Symbol variable standing for this parameter in hybridized graphs."""
        if self._var is None:
            self._var = _sym.var(self.name, shape=self.shape, dtype=self.dtype, lr_mult=self.lr_mult,
                                 wd_mult=self.wd_mult, init=self.init,
                                 stype=None if self._stype == "default" else self._stype)
        return self._var

    def cast(self, dtype) -> None:
        """Cast the value and gradient to ``dtype``."""
        self._dtype = dtype
        self._var = None
        if self._data is None:
            return
        with autograd.pause():
            self._data = [i.astype(dtype) for i in self._data]
            if self._grad is None:
                return
            self._grad = [i.astype(dtype) for i in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)


def _ctx_list(ctx) -> list:
    if ctx is None:
        return [current_context()]
    if isinstance(ctx, Context):
        return [ctx]
    return list(ctx)


class Constant(Parameter):
    """A parameter that never changes (``grad_req='null'``), initialized to ``value``."""

    def __init__(self, name, value):
        if not isinstance(value, NDArray):
            value = nd.array(value)
        self.value = value
        value_np = value.asnumpy()

        class _Init(_init.Initializer):
            def _init_weight(self, _, arr):
                arr[:] = value_np

            def dumps(self):
                return f'["constant", {{"value": {value_np.tolist()}}}]'

        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype, init=_Init())

    def __repr__(self) -> str:
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self) -> str:
        return "null"

    @grad_req.setter
    def grad_req(self, req) -> None:
        if req != "null":
            warnings.warn(f"Constant parameter \"{self.name}\" does not support grad_req other than \"null\", "
                          f"and new value \"{req}\" is ignored.", stacklevel=2)
        self._grad_req = "null"


from .parameter_dict import ParameterDict  # noqa: E402  (ParameterDict builds on Parameter)
