"""Op parameters: frozen pydantic models that accept MXNet's string forms.

Symbol JSON stores every attribute as a string ("(3, 3)", "True", "1",
"None"), so :class:`OpParam` turns strings into Python values before pydantic
validates them, and :meth:`OpParam.to_strings` writes them back the same way.

>>> class ConvLike(OpParam):
...     kernel: Shape
...     num_filter: int = Field(gt=0)
...     no_bias: bool = False
>>> p = parse_params("Conv", ConvLike, {"kernel": "(3, 3)", "num_filter": "8", "no_bias": "True"})
>>> p.kernel, p.num_filter, p.no_bias
((3, 3), 8, True)
>>> p.to_strings()["kernel"]
'(3, 3)'
>>> parse_params("Conv", ConvLike, {"kernel": 3, "num_filter": -2})
Traceback (most recent call last):
  ...
mxasync.base.MXAsyncError: Conv: num_filter=-2: Input should be greater than 0
"""

from __future__ import annotations

import ast
import types
import typing
from typing import Annotated, Any, ClassVar, Optional

import numpy as np
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from .._bfloat16 import canonical_dtype
from ..base import MXAsyncError
from ._loading import LOAD_LOCK

__all__ = ["OpParam", "NoParam", "Shape", "OutShape", "OptShape", "DType", "parse_params", "Field", "format_value"]


def _to_shape(v: Any) -> Any:
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    if isinstance(v, list):
        return tuple(v)
    return v


def _to_dtype(v: Any) -> Any:
    if v is None or isinstance(v, str):
        return v
    try:
        return canonical_dtype(v).name
    except TypeError:
        return v


#: a tuple of ints; an int ``3`` means ``(3,)`` as in MXNet's TShape parser
Shape = Annotated[tuple[int, ...], BeforeValidator(_to_shape)]


def _check_out_shape(v: tuple[int, ...]) -> tuple[int, ...]:
    for i, d in enumerate(v):
        if d < -1:
            raise ValueError(f"dimension {i} is {d}; a size must be >= 0 (or -1: unknown)")
    return v


#: the shape of an array an op creates (``_zeros``, the samplers): sizes >= 0, -1 for unknown (MXNet's rule)
OutShape = Annotated[tuple[int, ...], BeforeValidator(_to_shape), AfterValidator(_check_out_shape)]
OptShape = Annotated[Optional[tuple[Optional[int], ...]], BeforeValidator(_to_shape)]
#: a numpy dtype name ('float32'); numpy dtypes and types are accepted
DType = Annotated[str, BeforeValidator(_to_dtype)]


def _accepts_str(annotation: Any) -> bool:
    """Whether a field may legitimately hold a string (then strings are kept as strings)."""
    if annotation is str:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return any(isinstance(a, str) for a in typing.get_args(annotation))
    if origin is Annotated:
        return _accepts_str(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_accepts_str(a) for a in typing.get_args(annotation))
    return False


def _accepts_none(annotation: Any) -> bool:
    if annotation is None or annotation is type(None):
        return True
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _accepts_none(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_accepts_none(a) for a in typing.get_args(annotation))
    return False


def _parse_string(value: str, keep_str: bool) -> Any:
    s = value.strip()
    if s == "None":
        return None
    if keep_str:
        return value
    if s in ("True", "true"):
        return True
    if s in ("False", "false"):
        return False
    try:
        return ast.literal_eval(s)
    except (ValueError, SyntaxError):
        return value  # let pydantic report it


def format_value(v: Any) -> str:
    """MXNet's string form of a param value: ``(3, 3)``, ``True``, ``None``, ``0.5``."""
    if isinstance(v, tuple):
        return "(" + ", ".join(format_value(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return str(v)


class OpParam(BaseModel):
    """Base class of every op's parameter model (frozen, unknown fields rejected)."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True, defer_build=True)
    # MXNet's positional order of the params when it differs from the fields' (inherited first)
    positional_order: ClassVar[tuple[str, ...]] = ()

    def __init__(self, /, **data: Any) -> None:
        for k, v in data.items():
            if not isinstance(v, _PLAIN) and hasattr(v, "wait_to_read"):
                # an engine array as a value (``clip(x, a_min=nd.array([0]))``) is read here: reading
                # it waits for the engine, which nothing may do under the loading lock
                data = {k: _read_array(v) for k, v in data.items()}
                break
        with LOAD_LOCK:  # pydantic builds the schema, and pydantic-core its own state, on first use
            super().__init__(**data)

    @classmethod
    def build_schema(cls) -> None:
        """Build the validation schema now; pydantic defers it to the first use (``mxasync.loading`` builds
        the common ops' off the event loop)."""
        with LOAD_LOCK:
            cls.model_rebuild()

    @classmethod
    def param_order(cls) -> list[str]:
        """The params in MXNet's positional order (``mx.nd.sum(x, 1)`` means ``axis=1``)."""
        first = [n for n in cls.positional_order if n in cls.model_fields]
        return first + [n for n in cls.model_fields if n not in first]

    @model_validator(mode="before")
    @classmethod
    def _mxnet_strings(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        keep = cls.__dict__.get("_keep_str")
        if keep is None:
            keep = {n: _accepts_str(f.annotation) for n, f in cls.model_fields.items()}
            cls._keep_str = keep
        out = {}
        for k, v in data.items():
            if isinstance(v, str):
                v = _parse_string(v, keep.get(k, False))
            out[k] = v
        return out

    @classmethod
    def none_is_a_value(cls, name: str) -> bool:
        """Whether ``name=None`` is a value the field takes (``sort(axis=None)`` flattens, ``slice_axis(end=None)``
        runs to the end), so a symbol keeps it as MXNet does (the string "None"): the field accepts None."""
        field = cls.model_fields.get(name)
        return field is not None and _accepts_none(field.annotation)

    def to_strings(self, only_set: bool = False) -> dict[str, str]:
        """The attributes as symbol JSON stores them (every field, or only those set explicitly)."""
        names = self.model_fields_set if only_set else type(self).model_fields
        return {n: format_value(getattr(self, n)) for n in names}


_PLAIN = (str, int, float, tuple, list, type(None))


def _read_array(v: Any) -> Any:
    if isinstance(v, _PLAIN) or not hasattr(v, "wait_to_read"):
        return v
    a = v.asnumpy()
    return a.item() if a.size == 1 else a.tolist()


class NoParam(OpParam):
    """For ops without parameters."""


def _explain(op: str, exc: ValidationError, kwargs: dict) -> MXAsyncError:
    parts = []
    for err in exc.errors():
        loc = err.get("loc") or ("?",)
        field = str(loc[0])
        if err.get("type") == "extra_forbidden":
            parts.append(f"unknown parameter {field}={kwargs.get(field)!r}")
        elif err.get("type") == "missing":
            parts.append(f"missing required parameter {field}")
        else:
            given = kwargs.get(field, err.get("input"))
            parts.append(f"{field}={given!r}: {err.get('msg')}")
    return MXAsyncError(f"{op}: " + _bounded(list(dict.fromkeys(parts))))


def _bounded(parts: list[str], n: int = 8) -> str:
    """The first ``n`` problems, each cut to 200 characters, and how many more: a message stays short
    whatever a file holds."""
    text = "; ".join(p if len(p) <= 200 else p[:197] + "..." for p in parts[:n])
    return text + (f"; and {len(parts) - n} more" if len(parts) > n else "")


_MANY_UNKNOWN = 64  # unknown keys beyond which validation stops at the names (pydantic would build one error each)


def parse_params(op: str, cls: type[OpParam], kwargs: dict) -> OpParam:
    """Validate ``kwargs`` for op ``op``; errors name the op, the field and the value."""
    if len(kwargs) > len(cls.model_fields) + _MANY_UNKNOWN:
        known = set(cls.model_fields) | {f.alias for f in cls.model_fields.values() if f.alias}
        unknown = [k for k in kwargs if k not in known]
        if len(unknown) > _MANY_UNKNOWN:
            raise MXAsyncError(f"{op}: " + _bounded([f"unknown parameter {k}={kwargs[k]!r}" for k in unknown[:8]])
                               + f" ... ({len(unknown)} unknown parameters in all)")
    try:
        return cls(**kwargs)
    except ValidationError as exc:
        raise _explain(op, exc, kwargs) from None
    except MXAsyncError:
        raise
    except (TypeError, ValueError) as exc:
        raise MXAsyncError(f"{op}: {exc}") from None
