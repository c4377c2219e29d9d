"""Reading optimizer ``.states`` files (ours and MXNet 1.x's) without running what they name.

A ``.states`` file is a pickle, as in MXNet: the updater's states (NDArrays in
nested tuples, lists and dicts keyed by parameter index) and, from
``Trainer.save_states`` or ``dump_optimizer=True``, the optimizer with its
learning-rate scheduler.  Plain ``pickle.loads`` would call whatever the file
names, so a file from someone else could run code (``os.system`` ...) the
moment it is loaded.  :func:`loads` admits only what optimizer states are made
of and refuses anything else, naming it, before calling it:

* containers and numbers (the pickle opcodes themselves, no global needed), and
  ``bytearray``, ``set``, ``frozenset``, ``complex``, ``slice``, ``OrderedDict``;
* numpy arrays, dtypes and scalars (``_reconstruct``, ``ndarray``, ``dtype``, ``scalar``);
* NDArrays: ours (``mxasync.ndarray.ndarray._rebuild`` / ``NDArray``) and MXNet's
  (``mxnet.ndarray.ndarray.NDArray``, rebuilt from its raw bytes) and contexts;
* optimizer classes (subclasses of :class:`~.optimizer.Optimizer`) and learning-rate
  schedulers (subclasses of :class:`~mxasync.lr_scheduler.LRScheduler`) from modules
  already imported (nothing is imported on a file's behalf), and MXNet's of the same
  name (``mxnet.optimizer.optimizer.SGD`` loads as ours).  Their state is restored
  into a plain attribute dict; a user-defined optimizer that the running program
  has imported and registered loads as well.

This is a guard against a file that was tampered with, not a sandbox for arbitrary
pickles: see the trust model in ``docs/files.md``.
"""

from __future__ import annotations

import io
import math
import pickle
import sys
from collections import OrderedDict
from typing import Any

import numpy as np

try:
    from numpy._core import multiarray as _multiarray
except ImportError:  # numpy 1
    from numpy.core import multiarray as _multiarray

from ..base import MXAsyncError
from ..lr_scheduler import LRScheduler
from ..ndarray.ndarray import NDArray, _rebuild
from ..runtime.context import Context
from .optimizer import Optimizer

__all__ = ["loads", "check_optimizer", "UnsafeStatesError"]

# hyper-parameters a loaded optimizer / scheduler must hold as finite numbers (the constructors check
# them; unpickling restores attributes without calling them)
_OPTIMIZER_NUMBERS = ("lr", "wd", "momentum", "rescale_grad", "clip_gradient", "beta1", "beta2", "epsilon",
                      "gamma1", "gamma2", "rho", "lamda1", "beta", "eta", "centered_momentum")
_SCHEDULER_NUMBERS = ("base_lr", "factor", "final_lr", "warmup_begin_lr", "warmup_final_lr", "stop_factor_lr",
                      "pwr")


class UnsafeStatesError(MXAsyncError):
    """A ``.states`` file names something that optimizer states are never made of."""


def _blank_ndarray(*_args) -> NDArray:
    """MXNet's NDArray pickles as ``NDArray(None)`` then ``__setstate__({'handle': raw bytes})``."""
    return NDArray.__new__(NDArray)


_FIXED: dict[tuple[str, str], Any] = {
    ("builtins", "bytearray"): bytearray,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "complex"): complex,
    ("builtins", "slice"): slice,
    ("collections", "OrderedDict"): OrderedDict,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("mxasync.ndarray.ndarray", "_rebuild"): _rebuild,
    ("mxasync.ndarray.ndarray", "NDArray"): _blank_ndarray,
    ("mxnet.ndarray.ndarray", "NDArray"): _blank_ndarray,
    ("mxasync.runtime.context", "Context"): Context,
    ("mxnet.context", "Context"): Context,
}
for _module in ("numpy.core.multiarray", "numpy._core.multiarray"):  # numpy 1 and 2 write either
    _FIXED[(_module, "_reconstruct")] = _multiarray._reconstruct
    _FIXED[(_module, "scalar")] = _multiarray.scalar


def _class(module: str, name: str) -> Any:
    """An optimizer or scheduler class the file names, or None."""
    if module.startswith("mxnet.optimizer"):  # MXNet's optimizer of that name: ours
        return Optimizer.opt_registry.get(name.lower())
    if module == "mxnet.lr_scheduler":
        module = "mxasync.lr_scheduler"
    mod = sys.modules.get(module)  # only modules the program imported itself: no import on the file's behalf
    obj = getattr(mod, name, None) if mod is not None and "." not in name else None
    if isinstance(obj, type) and (issubclass(obj, Optimizer) or issubclass(obj, LRScheduler)):
        return obj
    return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, source: str):
        super().__init__(io.BytesIO(data))
        self.source = source

    def find_class(self, module: str, name: str) -> Any:
        obj = _FIXED.get((module, name))
        if obj is None:
            obj = _class(module, name)
        if obj is None:
            raise UnsafeStatesError(
                f"{self.source}: refusing to load {module}.{name}: an optimizer states file may only hold "
                "arrays, numbers, containers, optimizers and learning-rate schedulers, and loading anything "
                "else would run code the file chose (see the trust model in docs/files.md)")
        return obj


def loads(data: bytes, source: str = "optimizer states") -> Any:
    """Unpickle optimizer states ``data`` admitting only what states are made of (see the module docstring).

    >>> import pickle
    >>> loads(pickle.dumps({0: (1.5, [2])}))
    {0: (1.5, [2])}
    >>> loads(pickle.dumps(print), "x.states")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mxasync.optimizer.states_file.UnsafeStatesError: x.states: refusing to load builtins.print: ...
    """
    try:
        return _Unpickler(bytes(data), source).load()
    except UnsafeStatesError:
        raise
    except Exception as exc:  # noqa: BLE001 - a truncated or foreign file: say which
        raise MXAsyncError(f"{source}: not an optimizer states file ({type(exc).__name__}: {exc})") from exc


def _bad_number(value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return False
    if not isinstance(value, (int, float, np.integer, np.floating)):
        return True  # a string, an array ...: not a hyper-parameter
    return not math.isfinite(float(value))


def check_optimizer(opt: Any, source: str = "optimizer states") -> None:
    """Refuse a loaded optimizer whose learning rate, weight decay, momentum ... (or its scheduler's)
    is NaN, infinite or not a number: it would train silently to NaN weights.

    >>> from mxasync.optimizer import SGD
    >>> opt = SGD(learning_rate=0.1)
    >>> opt.lr = float("nan")
    >>> check_optimizer(opt, "net.states")
    Traceback (most recent call last):
    ...
    mxasync.base.MXAsyncError: net.states: the optimizer SGD in it has lr = nan; a learning rate, weight decay, momentum ... must be a finite number
    """
    owners = [("the optimizer", opt)]
    sched = getattr(opt, "lr_scheduler", None)
    if sched is not None:
        owners.append(("its learning-rate scheduler", sched))
    for label, owner in owners:
        names = _OPTIMIZER_NUMBERS if owner is opt else _SCHEDULER_NUMBERS
        values = [(n, owner.__dict__[n]) for n in names if n in owner.__dict__]
        for attr in ("lr_mult", "wd_mult"):
            mults = owner.__dict__.get(attr)
            if isinstance(mults, dict):
                values += [(f"{attr}[{k!r}]", v) for k, v in mults.items()]
        for name, value in values:
            if _bad_number(value):
                raise MXAsyncError(f"{source}: {label} {type(owner).__name__} in it has {name} = {value!r}; a "
                                   f"learning rate, weight decay, momentum ... must be a finite number")
