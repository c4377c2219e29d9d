"""The one op registry: names, aliases, params, docs, signatures, backend overrides.

>>> from mxasync.operator import get_op
>>> op = get_op("_plus")            # an MXNet alias
>>> op.name, "broadcast_add" in get_op("broadcast_add").names
('elemwise_add', True)
>>> p = get_op("Convolution").prepare(kernel="(3, 3)", num_filter="8")
>>> p is get_op("Convolution").prepare(kernel="(3, 3)", num_filter="8")   # cached
True
>>> op.list_arguments()
['lhs', 'rhs']
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

from pydantic_core import PydanticUndefined

from ..base import MXAsyncError
from ._loading import LOAD_LOCK
from .base import OperatorProperty
from .param_docs import describe_field, describe_input, describe_type, sentence
from .params import NoParam, OpParam, format_value, parse_params

__all__ = ["OpDef", "register_op", "get_op", "list_ops", "op_names", "load_all", "when_registered",
           "register_override", "find_override"]

_OPS: dict[str, OpDef] = {}
_CANON: dict[str, OpDef] = {}
_OVERRIDES: dict[tuple[str, str], Callable] = {}
_PENDING: dict[str, list[Callable[[OpDef], None]]] = {}
_CACHE_MAX = 4096
_lock = threading.Lock()
_IGNORED_WARNED: set[tuple[str, str]] = set()   # (op, keyword) pairs already warned about


class OpDef:
    """A registered op.  ``prepare(**kwargs)`` gives the (cached) :class:`OperatorProperty` for those params."""

    def __init__(self, name: str, prop_cls: type[OperatorProperty], aliases: tuple[str, ...], doc: str):
        self.name = name
        self.prop_cls = prop_cls
        self.param_cls: type[OpParam] = prop_cls.param_cls
        self.aliases = aliases
        self.names = (name,) + aliases
        self.description = inspect.cleandoc(doc or prop_cls.__doc__ or "")
        self.key_var_num_args = prop_cls.key_var_num_args
        self.variadic_inputs = bool(prop_cls.key_var_num_args or prop_cls.variadic_inputs)
        self.module = _defining_module()  # the module whose import registers this op (the lazy index's value)
        self._cache: dict = {}
        self._default: OperatorProperty | None = None
        self._signature: inspect.Signature | None = None
        self._docstring: str | None = None

    # -- params -----------------------------------------------------------
    def parse_params(self, kwargs: dict, name: str | None = None) -> OpParam:
        label = f"{self.name}({name})" if name else self.name
        if kwargs and not self.param_cls.model_fields:
            # MXNet's ops without a parameter struct keep any attribute and ignore it
            # (``broadcast_maximum(a, b, axis=1)`` runs there): ignore it too, warning once per (op, keyword)
            _warn_ignored(self.name, kwargs)
            kwargs = {}
        return parse_params(label, self.param_cls, kwargs)

    def prepare(self, **kwargs: Any) -> OperatorProperty:
        """The property bound to these params; the same kwargs give the same object without re-validating.

        ``name=`` (a node name, used in error messages) may be passed too.
        """
        if not kwargs:
            prop = self._default
            if prop is None:
                prop = self._default = self._make({}, None)
            return prop
        try:
            key = tuple(kwargs.items())
            return self._cache[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable value (a list): key on its repr
            key = repr(sorted(kwargs.items(), key=lambda kv: kv[0]))
            prop = self._cache.get(key)
            if prop is not None:
                return prop
        kw = dict(kwargs)
        name = kw.pop("name", None)
        prop = self._make(kw, name)
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[key] = prop
        return prop

    def _make(self, kw: dict, name: str | None) -> OperatorProperty:
        return self.prop_cls(self.parse_params(kw, name), name)

    # -- introspection ------------------------------------------------------
    def list_arguments(self, **kwargs: Any) -> list[str]:
        return self.prepare(**kwargs).list_arguments() if kwargs or not self._required() else list(self.prop_cls.arguments)

    def list_outputs(self, **kwargs: Any) -> list[str]:
        return self.prepare(**kwargs).list_outputs() if kwargs or not self._required() else list(self.prop_cls.outputs)

    def list_auxiliary_states(self, **kwargs: Any) -> list[str]:
        return (self.prepare(**kwargs).list_auxiliary_states() if kwargs or not self._required()
                else list(self.prop_cls.aux_states))

    def _required(self) -> list[str]:
        return [n for n, f in self.param_cls.model_fields.items() if f.is_required()]

    def bind_positional(self, args: tuple, kwargs: dict) -> list:
        """MXNet's calling convention for the generated ``mx.nd``/``mx.sym`` functions: the op's
        inputs (aux states included), then its params, positionally in MXNet's order.  Returns
        the positional inputs; positional params are moved into ``kwargs``.

        >>> kw = {}
        >>> get_op("clip").bind_positional(("x", 2, 5), kw), kw
        (['x'], {'a_min': 2, 'a_max': 5})
        """
        if self.variadic_inputs:
            return list(args)
        slots = len(self.prop_cls.arguments) + len(getattr(self.prop_cls, "aux_states", ()))
        if len(args) <= slots:
            return list(args)
        order = self.param_cls.param_order()
        extra = args[slots:]
        if len(extra) > len(order):
            raise MXAsyncError(f"{self.name}: takes at most {slots} inputs and {len(order)} params "
                               f"positionally ({len(args)} positional arguments given)")
        for pname, value in zip(order, extra, strict=False):
            if pname in kwargs:
                raise MXAsyncError(f"{self.name}: got {pname!r} both by position and by keyword")
            kwargs[pname] = value
        return list(args[:slots])

    @property
    def signature(self) -> inspect.Signature:
        """A Python signature for generated front-end functions: inputs (aux states last), then params
        (MXNet's order)."""
        if self._signature is None:
            P = inspect.Parameter
            params = []
            if self.variadic_inputs:
                params.append(P("data", P.VAR_POSITIONAL))
            else:
                inputs = list(self.prop_cls.arguments) + list(getattr(self.prop_cls, "aux_states", ()))
                params += [P(a, P.POSITIONAL_OR_KEYWORD, default=None) for a in inputs]
            kind = P.KEYWORD_ONLY if self.variadic_inputs else P.POSITIONAL_OR_KEYWORD
            for fname in self.param_cls.param_order():
                if fname == self.key_var_num_args:
                    continue
                field = self.param_cls.model_fields[fname]
                default = None if field.is_required() else field.default  # required: see the docstring
                if default is PydanticUndefined:
                    default = None
                params.append(P(fname, kind, default=default))
            self._signature = inspect.Signature(params)
        return self._signature

    @property
    def doc(self) -> str:
        """The generated docstring: description, inputs, params with types and defaults."""
        if self._docstring is None:
            lines = [self.description or self.name, ""]
            if self.aliases:
                lines += [f"Aliases: {', '.join(self.aliases)}", ""]
            lines += ["Parameters", "----------"]
            args = ["*data"] if self.variadic_inputs else list(self.prop_cls.arguments)
            for a in args:
                lines.append(f"{a} : NDArray or Symbol")
                lines.append(f"    {sentence(describe_input(self.name, a.lstrip('*')))}")
            for fname, field in self.param_cls.model_fields.items():
                req = "required" if field.is_required() else f"default={format_value(field.default)}"
                lines.append(f"{fname} : {describe_type(field.annotation)}, {req}")
                meaning = describe_field(self.name, fname, field)
                if meaning:
                    lines.append(f"    {sentence(meaning)}")
            self._docstring = "\n".join(lines)
        return self._docstring

    def __repr__(self) -> str:
        return f"<OpDef {self.name}>"


def _warn_ignored(op: str, kwargs: dict) -> None:
    """One warning per call naming the new keys (at most five, then a count): a symbol file with 10^6
    unknown attributes gives one bounded line, not 10^6 warnings."""
    with _lock:
        new = [k for k in kwargs if (op, k) not in _IGNORED_WARNED]
        if not new:
            return
        if len(_IGNORED_WARNED) < 100_000:
            _IGNORED_WARNED.update((op, k) for k in new[:1000])
    shown = ", ".join(f"{k}={kwargs[k]!r}"[:100] for k in new[:5])
    more = f" and {len(new) - 5} more" if len(new) > 5 else ""
    verb = "is" if len(new) == 1 else "are"
    warnings.warn(f"{op}: the op takes no parameters; {shown}{more} {verb} ignored (as MXNet does)",
                  UserWarning, stacklevel=4)


def register_op(name: str, *, aliases: tuple[str, ...] | list[str] = (), param: type[OpParam] | None = None,
                doc: str | None = None) -> Callable[[type[OperatorProperty]], type[OperatorProperty]]:
    """Class decorator: register an :class:`OperatorProperty` subclass as op ``name``."""

    def deco(cls: type[OperatorProperty]) -> type[OperatorProperty]:
        cls.op_name = name
        if param is not None:
            cls.param_cls = param
        elif "param_cls" not in cls.__dict__ and cls.param_cls is None:
            cls.param_cls = NoParam
        opdef = OpDef(name, cls, tuple(aliases), doc or "")
        with _lock:
            for n in opdef.names:
                if n in _OPS and _OPS[n].prop_cls.__module__ != cls.__module__:
                    raise MXAsyncError(f"register_op: {n!r} is already registered by {_OPS[n].prop_cls.__module__}")
                _OPS[n] = opdef
            _CANON[name] = opdef
            pending = [fn for n in opdef.names for fn in _PENDING.pop(n, ())]
        cls.opdef = opdef
        for fn in pending:
            fn(opdef)
        return cls

    return deco


def _defining_module() -> str:
    """The module being imported when an op registers (the innermost ``<module>`` frame)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_name != "<module>":
        frame = frame.f_back
    return frame.f_globals.get("__name__", "") if frame is not None else ""


# -- lazy loading ------------------------------------------------------------------------------------
# The op families load on first use of one of their ops: ``get_op(name)`` imports the module that
# ``_op_index.OPS`` names for ``name`` (mx.nd.ones loads the tensor family, not the other ten);
# listing every op loads every family.  The index is generated (``python -m mxasync.tools.stubs``)
# and tests/operator/test_lazy_registry.py fails while it is stale; a name it lacks loads them all.

_loaded_all = False


def _index() -> dict[str, str]:
    from ._op_index import OPS

    return OPS


def load_all() -> None:
    """Import every op family (and their ONNX converters): what listing the whole registry needs."""
    global _loaded_all
    if not _loaded_all:
        with LOAD_LOCK:
            importlib.import_module(f"{__package__}.library")
        _loaded_all = True


def _load(name: str) -> OpDef | None:
    with LOAD_LOCK:
        module = _index().get(name)
        if module is not None:
            importlib.import_module(module)
    opdef = _OPS.get(name)
    if opdef is not None:
        return opdef
    load_all()  # a stale index, or an op that is not MXNet's: look everywhere
    return _OPS.get(name)


def when_registered(name: str, fn: Callable[[OpDef], None]) -> None:
    """Call ``fn(opdef)`` for op ``name`` now if it is registered, else when it registers.

    For facts about an op declared apart from it (sparse storage rules): declaring them loads
    nothing, and the op's family still loads only when the op is used.
    """
    with _lock:
        opdef = _OPS.get(name)
        if opdef is None:
            _PENDING.setdefault(name, []).append(fn)
            return
    fn(opdef)


def get_op(name: str) -> OpDef:
    """The op registered under ``name`` (or an alias of it); its family loads on first use."""
    try:
        return _OPS[name]
    except KeyError:
        pass
    opdef = _load(name)
    if opdef is not None:
        return opdef
    close = difflib.get_close_matches(name, list(_OPS), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise MXAsyncError(f"unknown operator {name!r}{hint}") from None


def list_ops(include_aliases: bool = False) -> list[str]:
    """Sorted names of the registered ops (canonical names, or every name); loads every family."""
    load_all()
    return sorted(_OPS if include_aliases else _CANON)


_names: tuple[int, frozenset[str]] = (-1, frozenset())


def op_names() -> frozenset[str]:
    """Every op name and alias, without loading a family: the index's names and those registered so far.

    What ``mx.nd``/``mx.sym`` list (``dir``, ``__all__``) and resolve on first use.
    """
    global _names
    count, names = _names
    if count != len(_OPS):
        names = frozenset(_index()) | frozenset(_OPS)
        _names = (len(_OPS), names)
    return names


def register_override(op_name: str, backend: str, kernel: Callable | None = None):
    """Declare a backend-specific kernel for ``op_name`` (usable as a decorator).

    The key ``"Op"`` replaces the forward kernel, ``"Op.backward"`` the backward one;
    kernels have the signature of the op's generic kernel.
    """

    def deco(fn: Callable) -> Callable:
        _OVERRIDES[(op_name, backend)] = fn
        return fn

    return deco(kernel) if kernel is not None else deco


def find_override(op_name: str, backend, generic: Callable | None) -> Callable | None:
    """The kernel to use for ``op_name`` on ``backend``: the backend's own table first, then declared overrides."""
    fn = backend.overrides.get(op_name)
    if fn is None:
        fn = _OVERRIDES.get((op_name, backend.name), generic)
    return fn
