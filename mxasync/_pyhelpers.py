"""The pure-Python helpers of MXNet's ``mxnet.base`` (``mx.base`` re-exports them): class-level
properties, a metaclass shim, the docstring builders and the registry of error classes by name.

>>> from mxasync.base import classproperty, register_error, error_types
>>> class A:
...     @classproperty
...     def kind(cls):
...         return cls.__name__.lower()
>>> A.kind
'a'
>>> @register_error
... class MyError(RuntimeError):
...     pass
>>> error_types["MyError"] is MyError
True
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

__all__ = ["classproperty", "with_metaclass", "build_param_doc", "add_fileline_to_docstring", "register_error",
           "error_types"]

#: error class by name, as MXNet's FFI error handler finds them (``register_error`` fills it)
error_types: dict[str, type] = {}


class _ClassPropertyDescriptor:
    """A property read on the class (and its instances): ``fget`` gets the class."""

    def __init__(self, fget: classmethod | staticmethod, fset: classmethod | staticmethod | None = None) -> None:
        self.fget, self.fset = fget, fset

    def __get__(self, obj: Any, klass: type | None = None) -> Any:
        if klass is None:
            klass = type(obj)
        return self.fget.__get__(obj, klass)()

    def __set__(self, obj: Any, value: Any) -> None:
        if not self.fset:
            raise AttributeError("cannot set this class property: it has no setter")
        self.fset.__get__(obj, type(obj))(value)

    def setter(self, func: Any) -> _ClassPropertyDescriptor:
        self.fset = func if isinstance(func, (classmethod, staticmethod)) else classmethod(func)
        return self


def classproperty(func: Any) -> _ClassPropertyDescriptor:
    """A read-only property of the class: ``@classproperty def name(cls): ...``."""
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _ClassPropertyDescriptor(func)


def with_metaclass(meta: type, *bases: type) -> type:
    """A base class whose subclasses are made by ``meta`` (``class A(with_metaclass(M, B))``)."""

    class _Meta(type):
        def __new__(cls, name, _this_bases, namespace):
            return meta(name, bases, namespace)

        @classmethod
        def __prepare__(cls, name, _this_bases):
            return meta.__prepare__(name, bases)

    return type.__new__(_Meta, "temporary_class", (), {})


def build_param_doc(arg_names: list[str], arg_types: list[str], arg_descs: list[str], remove_dup: bool = True) -> str:
    """A NumPy-style ``Parameters`` section from parallel lists of names, types and descriptions
    (``num_args`` left out, repeated names once when ``remove_dup``)."""
    seen: set[str] = set()
    entries = []
    for key, type_info, desc in zip(arg_names, arg_types, arg_descs, strict=False):
        if key == "num_args" or (remove_dup and key in seen):
            continue
        seen.add(key)
        entries.append(f"{key} : {type_info}" + (f"\n    {desc}" if desc else ""))
    return "Parameters\n----------\n" + "\n".join(entries) + "\n"


def _add_fileline(obj: Any) -> None:
    if obj.__doc__ is None or "From:" in obj.__doc__:
        return
    try:
        fname = inspect.getsourcefile(obj)
        line = inspect.getsourcelines(obj)[-1]
    except (OSError, TypeError):
        return
    if fname is not None:
        obj.__doc__ += f"\n\nFrom:{fname}:{line}"


def add_fileline_to_docstring(module: Any, incursive: bool = True) -> None:
    """Append ``From:<file>:<line>`` to the docstring of each function (and, with ``incursive``, each
    method of each class) of ``module`` (a module or its name)."""
    if isinstance(module, str):
        module = sys.modules[module]
    for _, obj in inspect.getmembers(module):
        if inspect.isbuiltin(obj):
            continue
        if inspect.isfunction(obj):
            _add_fileline(obj)
        if inspect.ismethod(obj):
            _add_fileline(obj.__func__)
        if inspect.isclass(obj) and incursive:
            add_fileline_to_docstring(obj, False)


def register_error(func_name: Any = None, cls: type | None = None) -> Any:
    """Register an error class under a name (its own by default) in :data:`error_types`; used as
    ``@register_error``, ``@register_error("Name")`` or ``register_error("Name", cls)``."""
    if callable(func_name):
        cls, func_name = func_name, func_name.__name__

    def register(mycls: type) -> type:
        error_types[func_name if isinstance(func_name, str) else mycls.__name__] = mycls
        return mycls

    return register if cls is None else register(cls)


for _builtin in (ValueError, TypeError, AttributeError, IndexError, NotImplementedError):
    register_error(_builtin.__name__, _builtin)
