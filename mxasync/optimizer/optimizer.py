"""The Optimizer base class, its registry, and the Updater that KVStore and Module drive.

Names and semantics follow MXNet 1.9's ``mx.optimizer``: learning rate from
``lr_scheduler(num_update)`` or ``learning_rate``; per-parameter multipliers by
index or by name (``param_idx2name``, or ``__lr_mult__``/``__wd_mult__`` attributes
of ``sym``); with names known, weight decay is 0 for parameters whose names end
in neither ``_weight`` nor ``_gamma``. Updates are pushed to the engine as
update ops (``mx.nd.sgd_update(..., out=weight)`` and friends), so they return at
once and run in order with the forward and backward passes around them.

>>> import mxasync as mx
>>> opt = mx.optimizer.create("sgd", learning_rate=0.5)
>>> updater = mx.optimizer.get_updater(opt)
>>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
>>> updater(0, g, w); w.asnumpy().tolist(), opt.num_update
([0.5, 0.5], 1)
"""

from __future__ import annotations

import math
import pickle
import warnings
from typing import Any

import numpy as np

from .._bfloat16 import bfloat16
from ..base import MXAsyncValueError
from ..ndarray import NDArray, zeros
from ..ndarray import abs as NDabs  # noqa: N812 - MXNet's name (mx.optimizer.NDabs)

__all__ = ["Optimizer", "register", "create", "Updater", "get_updater", "NDabs"]


def _finite(owner: object, name: str, value: Any) -> None:
    """Refuse a NaN/inf (or non-numeric) hyper-parameter: it would train silently to NaN weights."""
    if value is None:
        return
    try:
        ok = math.isfinite(float(value))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise MXAsyncValueError(f"{type(owner).__name__}: {name} must be a finite number, got {value!r}")



def keeps_master(dtype) -> bool:
    """Whether ``multi_precision`` keeps a float32 master copy of weights of ``dtype``: float16, as in MXNet
    1.9.1, and bfloat16 too (mxasync's extension: MXNet 1.9.1 checks for float16 only)."""
    return np.dtype(dtype) in _LOW_PRECISION


_LOW_PRECISION = (np.dtype(np.float16), bfloat16)

class Optimizer:
    """Base class of every optimizer (``mx.optimizer.Optimizer``).

    Subclasses implement :meth:`create_state` and :meth:`update`; register
    them with :func:`register` to make ``create("name")`` find them.
    """

    opt_registry: dict[str, type[Optimizer]] = {}

    def __init__(self, rescale_grad: float = 1.0, param_idx2name: dict | None = None, wd: float = 0.0,
                 clip_gradient: float | None = None, learning_rate: float | None = None, lr_scheduler=None,
                 sym=None, begin_num_update: int = 0, multi_precision: bool = False,
                 param_dict: dict | None = None) -> None:
        for name, value in (("learning_rate", learning_rate), ("wd", wd), ("rescale_grad", rescale_grad),
                            ("lr_scheduler.base_lr", getattr(lr_scheduler, "base_lr", None))):
            _finite(self, name, value)
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None and lr_scheduler.base_lr != learning_rate:
            # MXNet's rule: an explicit learning_rate wins over the scheduler's base_lr
            warnings.warn("learning rate from ``lr_scheduler`` has been overwritten by ``learning_rate`` "
                          "in optimizer.", UserWarning, stacklevel=2)
            lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult: dict = {}
        self.wd_mult: dict = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts: dict[int, dict] = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError("param_idx2name should be a dict of param indexes to names, "
                            f"got {type(param_idx2name).__name__}")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict or {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry -------------------------------------------------------------
    @staticmethod
    def register(klass: type[Optimizer]) -> type[Optimizer]:
        """Register ``klass`` under its lower-cased class name (a decorator)."""
        if not isinstance(klass, type):
            raise TypeError(f"register expects a class, got {klass!r}")
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn(f"New optimizer {klass.__module__}.{klass.__name__} is overriding existing optimizer "
                          f"{old.__module__}.{old.__name__}", stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> Optimizer:
        """An instance of the optimizer registered as ``name`` (case-insensitive)."""
        klass = Optimizer.opt_registry.get(name.lower())
        if klass is None:
            raise ValueError(f"Cannot find optimizer {name}; registered: {sorted(Optimizer.opt_registry)}")
        return klass(**kwargs)

    # -- learning rate ----------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        return self._scheduled_lr() if self.lr_scheduler is not None else self.lr

    def set_learning_rate(self, lr: float) -> None:
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of the optimizer "
                              "only when the LRScheduler of the optimizer is undefined.")
        _finite(self, "learning_rate", lr)
        self.lr = lr

    def set_lr_scale(self, args_lrscale) -> None:
        raise DeprecationWarning("set_lr_scale is deprecated: use set_lr_mult")

    def set_lr_mult(self, args_lr_mult: dict) -> None:
        """Per-parameter learning-rate multipliers, keyed by name or index."""
        self.lr_mult = self._sym_mults("__lr_mult__")
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: dict) -> None:
        """Per-parameter weight-decay multipliers; names not ending in _weight/_gamma default to 0."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if not n.endswith(("_weight", "_gamma"))}
        self.wd_mult.update(self._sym_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _sym_mults(self, key: str) -> dict:
        if not self.sym_info:
            return {}
        attr, arg_names = self.sym_info
        return {n: float(attr[n][key]) for n in arg_names if n in attr and key in attr[n]}

    def _set_current_context(self, device_id: int) -> None:
        # one update count per device: data-parallel updaters count each device on its own
        self._index_update_count = self._all_index_update_counts.setdefault(device_id, {})

    def _update_count(self, index) -> None:
        for idx in index if isinstance(index, (list, tuple)) else [index]:
            count = self._index_update_count.get(idx, self.begin_num_update) + 1
            self._index_update_count[idx] = count
            self.num_update = max(count, self.num_update)

    def _get_lrs(self, indices) -> list[float]:
        lr = self._scheduled_lr() if self.lr_scheduler is not None else self.lr
        return [lr * self._mult(i, self.lr_mult, "lr_mult") for i in indices]

    def _scheduled_lr(self) -> float:
        """The scheduler's rate for this update, refused when it is NaN or infinite (MXNet's update
        ops reject it at that step; a NaN rate would otherwise train silently to NaN weights)."""
        lr = self.lr_scheduler(self.num_update)
        try:
            ok = math.isfinite(float(lr))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise MXAsyncValueError(f"{type(self).__name__}: the learning rate from "
                                    f"{type(self.lr_scheduler).__name__} at update {self.num_update} is {lr!r}; "
                                    "it must be a finite number (check the scheduler's arguments)")
        return lr

    def _get_lr(self, index) -> float:
        return self._get_lrs([index])[0]

    def _get_wds(self, indices) -> list[float]:
        return [self.wd * self._mult(i, self.wd_mult, "wd_mult") for i in indices]

    def _get_wd(self, index) -> float:
        return self._get_wds([index])[0]

    def _mult(self, index, table: dict, attr: str) -> float:
        if index in self.param_dict:
            return getattr(self.param_dict[index], attr)
        if index in table:
            return table[index]
        if index in self.idx2name:
            return table.get(self.idx2name[index], 1.0)
        return 1.0

    def _common_kwargs(self) -> dict:
        """``rescale_grad`` and, when set, ``clip_gradient`` for the update ops (MXNet treats 0 as unset)."""
        kwargs = {"rescale_grad": self.rescale_grad}
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        return kwargs

    # -- states and updates -------------------------------------------------------
    def create_state(self, index, weight: NDArray):
        """The auxiliary state of ``weight`` (None when the optimizer keeps none)."""
        return None

    def create_state_multi_precision(self, index, weight: NDArray):
        """``(float32 master copy, state)`` for float16 (and bfloat16) weights under ``multi_precision``."""
        if self.multi_precision and keeps_master(weight.dtype):
            master = weight.astype(np.float32)
            return (master, self.create_state(index, master))
        if keeps_master(weight.dtype):
            warnings.warn(f"Accumulating with {np.dtype(weight.dtype).name} in optimizer can lead to poor accuracy or "
                          "slow convergence. "
                          "Consider using multi_precision=True option of the optimizer", stacklevel=2)
        return self.create_state(index, weight)

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        raise NotImplementedError(f"{type(self).__name__}.update")

    def update_multi_precision(self, index, weight: NDArray, grad: NDArray, state) -> None:
        """Update in float32 on the master copy, then cast back into the float16 (bfloat16) weight."""
        if self.multi_precision and keeps_master(weight.dtype):
            master, inner = state
            self.update(index, master, grad.astype(np.float32), inner)
            master.copyto(weight)  # the copy casts; ordered after the update by the engine
        else:
            self.update(index, weight, grad, state)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("param_dict", None)  # gluon Parameters do not pickle; MXNet drops them too
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__ = state
        self.param_dict = {}


register = Optimizer.register
create = Optimizer.create_optimizer


def _as_list(x) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def zeros_like_state(weight: NDArray) -> NDArray:
    """A zero state array shaped, typed and placed like ``weight``."""
    return zeros(weight.shape, weight.context, dtype=weight.dtype)


class Updater:
    """Applies an optimizer to ``(index, grad, weight)``, creating each index's state on first use.

    KVStore calls it with a key, the pushed gradient and the stored weight; Module
    calls it with lists (one per context). Lists go to the optimizer in groups of
    up to ``optimizer.aggregate_num`` weights of one dtype, as in MXNet, so SGD
    updates each group with one fused op; with ``aggregate_num`` 0 each weight
    is updated on its own.
    ``get_states``/``set_states`` pickle the states (and optionally the
    optimizer) like MXNet's, so ``save_optimizer_states`` files round-trip.
    """

    def __init__(self, optimizer: Optimizer) -> None:
        self.optimizer = optimizer
        self.states: dict = {}
        self.states_synced: dict = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight) -> None:
        indices, grads, weights = _as_list(index), _as_list(grad), _as_list(weight)
        if not len(indices) == len(grads) == len(weights):
            raise ValueError(f"Updater: got {len(indices)} indices, {len(grads)} gradients and {len(weights)} "
                             "weights; they must pair up")
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                idx = indices[i] = idx.decode()
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx], weights[i].context)
                self.states_synced[idx] = True
        size = self.optimizer.aggregate_num
        if size <= 0 or not isinstance(index, (list, tuple)):
            for idx, w, g in zip(indices, weights, grads, strict=True):
                self.optimizer.update_multi_precision(idx, w, g, self.states[idx])
            return
        by_dtype: dict = {}
        for k, w in enumerate(weights):
            by_dtype.setdefault(w.dtype, []).append(k)
        for ks in by_dtype.values():
            for lo in range(0, len(ks), size):
                part = ks[lo:lo + size]
                idx = [indices[k] for k in part]
                self.optimizer.update_multi_precision(idx, [weights[k] for k in part], [grads[k] for k in part],
                                                      [self.states[i] for i in idx])

    def sync_state_context(self, state, context):
        """Move a (possibly nested) state to ``context`` (after loading states saved elsewhere)."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states: bytes, source: str = "optimizer states") -> None:
        """Load states pickled by :meth:`get_states` (ours or MXNet's, with or without the optimizer).

        Only what optimizer states are made of is unpickled (:mod:`.states_file`); a file naming
        anything else is refused with :class:`~.states_file.UnsafeStatesError` (``source`` names it)."""
        from .states_file import check_optimizer, loads

        loaded = loads(states, source)
        if isinstance(loaded, tuple) and len(loaded) == 2:
            check_optimizer(loaded[1], source)
            self.states, self.optimizer = loaded
        else:
            self.states = loaded
        self.states_synced = dict.fromkeys(self.states, False)

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """The states pickled; with ``dump_optimizer`` the optimizer too."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer: Optimizer) -> Updater:
    """An :class:`Updater` for ``optimizer`` (``mx.optimizer.get_updater``)."""
    return Updater(optimizer)
