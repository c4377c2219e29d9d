"""``ParameterDict``: an ordered, prefixed name -> Parameter map (MXNet 1.9's, with its file I/O).

>>> import mxasync as mx
>>> pd = ParameterDict('net_')
>>> w = pd.get('w', shape=(2,))
>>> w.name, pd.get('w') is w
('net_w', True)
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import initializer as _init
from .. import ndarray as nd
from ..ndarray._save_load import load_any
from ..ndarray.ndarray import NDArray
from .parameter import Constant, Parameter, _brief_print_list

__all__ = ["ParameterDict"]


class ParameterDict:
    """An ordered name -> :class:`Parameter` map with a name ``prefix``; may look names up in ``shared``."""

    def __init__(self, prefix: str = "", shared: ParameterDict | None = None):
        self._prefix = prefix
        self._params: OrderedDict = OrderedDict()
        self._shared = shared

    def __repr__(self) -> str:
        name = f"{self._prefix} " if self._prefix else ""
        body = "\n".join(f"  {v}" for v in self.values())
        return f"{name}(\n{body}\n)"

    def __getitem__(self, key) -> Parameter:
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __contains__(self, key) -> bool:
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self) -> str:
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name: str, **kwargs) -> Parameter:
        """The parameter ``prefix + name``, created with ``kwargs`` when new (shared ones are reused)."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            existing = getattr(param, k, None)
            if existing is None:
                setattr(param, k, v)
                continue
            if k == "shape" and v is not None and len(v) == len(existing):
                merged = []
                for d1, d2 in zip(v, existing, strict=True):
                    if d1 != d2 and d1 > 0 and d2 > 0:
                        break
                    merged.append(d2 if d1 in (0, -1) else d1)
                else:
                    param._shape = tuple(merged)
                    continue
            elif k == "dtype" and np.dtype(v) == np.dtype(existing):
                continue
            if v is not None and v != existing:
                raise AssertionError(f"Cannot retrieve Parameter '{name}' because desired attribute does not match "
                                     f"with stored for attribute '{k}': desired '{v}' vs stored '{existing}'.")
        return param

    def get_constant(self, name: str, value=None) -> Constant:
        """The constant ``prefix + name``, created from ``value`` when new."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{name}'. Please specify value if you want to create a new "
                               "constant.")
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise AssertionError(f"Parameter '{name}' already exists but it is not a constant.")
            if isinstance(value, NDArray):
                value = value.asnumpy()
            if param.shape != np.shape(value) or not (param.value.asnumpy() == value).all():
                raise AssertionError(f"Constant '{name}' already exists but it's value doesn't match new value")
        return param

    def update(self, other) -> None:
        """Add ``other``'s parameters (a name already here must be the same Parameter)."""
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise AssertionError(f"Cannot update self with other because they have different Parameters with "
                                     f"the same name '{k}'")
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False) -> None:
        """Initialize every parameter (``init`` is the default for those without their own)."""
        if init is None:
            init = _init.Uniform()
        if verbose:
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self) -> None:
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx) -> None:
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self) -> list:
        out: list = []
        for p in self.values():
            out += [c for c in p.list_ctx() if c not in out]
        return out

    def setattr(self, name: str, value) -> None:
        """Set attribute ``name`` (e.g. ``grad_req``, ``lr_mult``) of every parameter."""
        for p in self.values():
            setattr(p, name, value)

    def save(self, filename: str, strip_prefix: str = "") -> None:
        """Save the values (averaged over contexts) under their names minus ``strip_prefix``."""
        arg_dict = {}
        for param in self.values():
            weight = param._reduce()
            if not param.name.startswith(strip_prefix):
                raise ValueError(f"Prefix '{strip_prefix}' is to be striped before saving, but Parameter's name "
                                 f"'{param.name}' does not start with '{strip_prefix}'. this may be due to your "
                                 "Block shares parameters from other Blocks or you forgot to use 'with "
                                 "name_scope()' when creating child blocks.")
            arg_dict[param.name[len(strip_prefix):]] = weight
        nd.save(filename, arg_dict)

    def load(self, filename: str, ctx=None, allow_missing=False, ignore_extra=False, restore_prefix="",
             cast_dtype=False, dtype_source="current") -> None:
        """Load values saved by :meth:`save` (or by ``Module``/``export``: ``arg:``/``aux:`` keys)."""
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise AssertionError(f"restore_prefix is '{restore_prefix}' but Parameters name '{name}' does "
                                         "not start with 'restore_prefix'")
        self.load_dict(load_any(filename), ctx, allow_missing, ignore_extra, restore_prefix, filename, cast_dtype,
                       dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False, restore_prefix="",
                  filename=None, cast_dtype=False, dtype_source="current") -> None:
        lprefix = len(restore_prefix)
        items = param_dict.items() if isinstance(param_dict, dict) else param_dict
        loaded = [(k[4:] if k.startswith(("arg:", "aux:")) else k, v) for k, v in items]
        arg_dict = {restore_prefix + k: v for k, v in loaded}
        where = f"file '{filename}'" if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise AssertionError(f"Parameter '{name[lprefix:]}' is missing in {where}, which contains "
                                         f"parameters: {_brief_print_list(arg_dict.keys())}. Please make sure "
                                         "source and target networks have the same prefix.")
        for name, value in arg_dict.items():
            if name not in self._params:
                if not ignore_extra:
                    raise AssertionError(f"Parameter '{name[lprefix:]}' loaded from {where} is not present in "
                                         f"ParameterDict, choices are: {_brief_print_list(self._params.keys())}. "
                                         "Set ignore_extra to True to ignore. Please make sure source and target "
                                         "networks have the same prefix.")
                continue
            self[name]._load_init(value, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)

