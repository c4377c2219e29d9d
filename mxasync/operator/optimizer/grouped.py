"""The frame of MXNet's fused update ops whose inputs come in groups per weight (``weight_i, grad_i,
mean_i, var_i[, weight32_i]``), optionally followed by trailing inputs (``rescale_grad``): the input
and output names, the shape and type rules (mean, var and weight32 are float32 in the mixed-precision
forms), the in-place options and the mutated inputs. ``_adamw_update`` and its three siblings
(``adamw.py``) and ``_multi_lamb_update`` / ``_multi_mp_lamb_update`` (``multi_lamb.py``) use it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..base import WRITE_INPLACE, WRITE_TO, Operator, OperatorProperty, assign
from ..registry import find_override

__all__ = ["GroupedUpdateProperty", "ListKernelOperator", "host_scalar", "write_result"]


def host_scalar(a) -> float:
    """The first element of a (numpy or cupy) array as a Python float."""
    return float(np.asarray(a.get() if hasattr(a, "get") else a).reshape(-1)[0])


def write_result(weight, out, req, value) -> None:
    """Store the new weight ``value`` into ``out`` per ``req`` (``out`` may be ``weight`` itself)."""
    if out is weight and (req == WRITE_TO or req == WRITE_INPLACE):
        weight[...] = value
    else:
        assign(out, req, value)


class ListKernelOperator(Operator):
    """Runs ``kernel(xp, params, in_data, req, out_data)`` over the op's whole input and output lists
    (the multi-tensor and grouped optimizer updates)."""

    __slots__ = ("params", "xp", "kernel")

    def __init__(self, params, xp, kernel):
        self.params, self.xp, self.kernel = params, xp, kernel

    def forward(self, op_ctx, in_data, req, out_data, aux):
        self.kernel(self.xp, self.params, in_data, req, out_data)


class GroupedUpdateProperty(OperatorProperty):
    """``names`` per weight, ``count`` weights (the param ``count_param``; 1 when None), then ``trailing``
    inputs of any shape; one output per weight, the weight's shape and dtype (``float_names`` are float32)."""

    names: ClassVar[tuple[str, ...]] = ("weight", "grad", "mean", "var")
    float_names: ClassVar[tuple[str, ...]] = ()
    mutated_names: ClassVar[tuple[str, ...]] = ("mean", "var")
    trailing: ClassVar[tuple[str, ...]] = ()
    count_param: ClassVar[str | None] = None
    per_weight_params: ClassVar[tuple[str, ...]] = ()
    max_count: ClassVar[int | None] = None
    kernel: ClassVar[Any] = None
    arguments = ("data",)

    @property
    def count(self) -> int:
        return getattr(self.params, self.count_param) if self.count_param else 1

    def list_arguments(self) -> list[str]:
        if not self.count_param:
            return list(self.names) + list(self.trailing)
        return [f"{n}_{i}" for i in range(self.count) for n in self.names] + list(self.trailing)

    def list_outputs(self) -> list[str]:
        n = self.count
        return ["output"] if n == 1 else [f"output{i}" for i in range(n)]

    def mutate_inputs(self) -> list[int]:
        per = len(self.names)
        own = [k for k, n in enumerate(self.names) if n in self.mutated_names]
        return [per * i + k for i in range(self.count) for k in own]

    def _check_counts(self, n_inputs: int) -> None:
        per, n = len(self.names), self.count
        want = per * n + len(self.trailing)
        if n_inputs != want:
            extra = f", then {', '.join(self.trailing)}" if self.trailing else ""
            hint = f"; pass {self.count_param}={(n_inputs - len(self.trailing)) // per}" if self.count_param else ""
            raise self.error(f"got {n_inputs} inputs but {self.count_param or 'the op'}={n} needs {want} "
                             f"({', '.join(self.names)} for each weight{extra}){hint}")
        if self.max_count is not None and n > self.max_count:
            raise self.error(f"{self.count_param}={n} but at most {self.max_count} tensors are allowed")
        for name in self.per_weight_params:
            got = len(getattr(self.params, name))
            if got != n:
                raise self.error(f"{name} has {got} values but {self.count_param}={n} needs one per weight")

    def infer_shape(self, in_shapes):
        self._check_counts(len(in_shapes))
        per, names = len(self.names), self.list_arguments()
        ins, outs = list(in_shapes), []
        for i in range(self.count):
            group = in_shapes[per * i: per * i + per]
            s = next((tuple(x) for x in group if x is not None), None)
            for k, x in enumerate(group):
                if x is not None and tuple(x) != s:
                    raise self.error(f"{names[per * i + k]} has shape {tuple(x)} but {names[per * i]} has {s}")
            ins[per * i: per * i + per] = [s] * per
            outs.append(s)
        for k in range(len(self.trailing)):
            j = per * self.count + k
            ins[j] = (1,) if in_shapes[j] is None else tuple(in_shapes[j])
        return ins, outs, []

    def infer_type(self, in_types):
        self._check_counts(len(in_types))
        per, ins, outs = len(self.names), list(in_types), []
        f32 = np.dtype(np.float32)
        for i in range(self.count):
            group = in_types[per * i: per * i + per]
            t = next((x for n, x in zip(self.names, group, strict=True) if x is not None and n not in self.float_names),
                     None)
            if t is None:
                t = next((x for x in group if x is not None), None)
            for k, name in enumerate(self.names):
                ins[per * i + k] = f32 if name in self.float_names else t
            outs.append(t)
        for k in range(len(self.trailing)):
            j = per * self.count + k
            ins[j] = f32 if in_types[j] is None else in_types[j]
        return ins, outs, []

    def forward_inplace_option(self, in_data, out_data):
        per = len(self.names)
        return [(in_data[per * i], out_data[i]) for i in range(min(self.count, len(out_data)))]

    def create_operator(self, ctx) -> Operator:
        from ...backends import get_backend

        backend = get_backend(ctx.device_type)
        return ListKernelOperator(self.params, backend.xp, find_override(self.op_name, backend, type(self).kernel))
