"""Fused SGD updates of several weights in one op: multi_sgd_update, multi_sgd_mom_update (MXNet 1.9's).

Inputs are interleaved per weight: ``weight_0, grad_0[, mom_0], weight_1, ...``;
``num_weights`` counts the weights and ``lrs``/``wds`` hold one learning rate
and weight decay each. Output ``i`` is the new ``weight_i`` (pass
``out=weights`` to update in place, as the optimizer does); the momentum
inputs are updated in place and listed by ``mutate_inputs()``, so the engine
orders them like the weights. Per weight the math is MXNet's:

* ``multi_sgd_update``: ``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)``
* ``multi_sgd_mom_update``: ``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad)``;
  ``weight += mom``

``clip_gradient < 0`` turns clipping off. One op updates all the weights, so the
optimizer pays one engine push per group of weights instead of one per weight.

>>> import numpy as np, mxasync as mx
>>> w0, g0, m0 = mx.nd.ones((2,)), mx.nd.ones((2,)), mx.nd.zeros((2,))
>>> w1, g1, m1 = mx.nd.ones((3,)), mx.nd.ones((3,)), mx.nd.zeros((3,))
>>> _ = mx.nd.multi_sgd_mom_update(w0, g0, m0, w1, g1, m1, lrs=(0.1, 0.2), wds=(0.0, 0.0), momentum=0.9,
...                                num_weights=2, out=[w0, w1])
>>> w0.asnumpy(), m1.asnumpy()
(array([0.9, 0.9], dtype=float32), array([-0.2, -0.2, -0.2], dtype=float32))
>>> from mxasync.operator import get_op
>>> get_op("multi_sgd_mom_update").prepare(lrs=(0.1, 0.1), wds=(0, 0), num_weights=2).mutate_inputs()
[2, 5]
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import BeforeValidator

from ..base import WRITE_INPLACE, WRITE_TO, Operator, OperatorProperty, assign
from ..kernels import optimizer as _k
from ..kernels._runner import PLAIN
from ..numpy_overrides import register_numpy
from ..params import Field, OpParam
from ..registry import find_override, register_op
from .grouped import ListKernelOperator

__all__ = ["MultiSGDParam", "MultiSGDMomParam", "MultiSGDProperty", "MultiSGDMomProperty"]


def _to_floats(v: Any) -> Any:
    if isinstance(v, (int, float, np.integer, np.floating)):
        return (float(v),)
    if isinstance(v, (list, np.ndarray)):
        return tuple(float(x) for x in v)
    return v


#: a tuple of floats; a number ``0.1`` means ``(0.1,)``
Floats = Annotated[tuple[float, ...], BeforeValidator(_to_floats)]


class MultiSGDParam(OpParam):
    lrs: Floats
    wds: Floats
    rescale_grad: float = 1.0
    clip_gradient: float = -1.0
    num_weights: int = Field(default=1, ge=1)


class MultiSGDMomParam(MultiSGDParam):
    momentum: float = 0.0


def update_groups(xp, p, in_data: list, req: list, out_data: list, per: int, mom: bool, mp: bool, lrs, wds,
                  run=PLAIN) -> None:
    """One SGD (momentum) step per group ``weight, grad[, mom][, weight32]`` (the single-weight kernels, run
    block by block on the weight itself when its output is the weight); with ``mp`` on the float32 master
    ``weight32`` (updated in place), the output being it cast to the weight's dtype."""
    momentum, rescale, clip = getattr(p, "momentum", 0.0), p.rescale_grad, p.clip_gradient
    for i in range(p.num_weights):
        group = in_data[per * i: per * i + per]
        w, g, o, r = group[0], group[1], out_data[i], req[i]
        in_place = o is w and (r == WRITE_TO or r == WRITE_INPLACE)
        target = group[-1] if mp else w if in_place else w.copy()
        if mom:
            _k.sgd_mom_update(xp, target, g, group[2], lrs[i], momentum, wds[i], rescale, clip, run=run)
        else:
            _k.sgd_update(xp, target, g, lrs[i], wds[i], rescale, clip, run=run)
        if target is not o:
            assign(o, r, target.astype(w.dtype) if mp else target)


def multi_sgd_update(xp, p: MultiSGDParam, in_data: list, req: list, out_data: list, run=PLAIN) -> None:
    """The generic kernel: each weight updated in place when its output is the weight itself."""
    update_groups(xp, p, in_data, req, out_data, 2, False, False, p.lrs, p.wds, run)


def multi_sgd_mom_update(xp, p: MultiSGDMomParam, in_data: list, req: list, out_data: list, run=PLAIN) -> None:
    """The generic kernel: moms always in place; each weight in place when its output is the weight."""
    update_groups(xp, p, in_data, req, out_data, 3, True, False, p.lrs, p.wds, run)


class _MultiUpdateProperty(OperatorProperty):
    """``per`` inputs per weight (weight, grad[, mom]); one output per weight."""

    per: ClassVar[int] = 2
    names: ClassVar[tuple[str, ...]] = ("weight", "grad")
    kernel: ClassVar[Any] = None
    arguments = ("data",)
    key_var_num_args = "num_weights"

    def list_arguments(self) -> list[str]:
        return [f"{n}_{i}" for i in range(self.params.num_weights) for n in self.names]

    def list_outputs(self) -> list[str]:
        n = self.params.num_weights
        return ["output"] if n == 1 else [f"output{i}" for i in range(n)]

    def mutate_inputs(self) -> list[int]:
        return [self.per * i + 2 for i in range(self.params.num_weights)] if self.per == 3 else []

    def _check_counts(self, n_inputs: int) -> None:
        p, per = self.params, self.per
        if n_inputs != per * p.num_weights:
            raise self.error(f"got {n_inputs} inputs but num_weights={p.num_weights} needs {per * p.num_weights} "
                             f"({', '.join(self.names)} for each weight); pass num_weights={n_inputs // per} "
                             "explicitly")
        for name in ("lrs", "wds"):
            if len(getattr(p, name)) != p.num_weights:
                raise self.error(f"{name} has {len(getattr(p, name))} values but num_weights={p.num_weights} "
                                 "needs one per weight")

    def infer_shape(self, in_shapes):
        self._check_counts(len(in_shapes))
        return self._groups_shape(in_shapes)

    def _groups_shape(self, shapes):
        """Every input of a weight's group has the weight's shape; one output of it per weight."""
        per, names = self.per, self.list_arguments()
        ins, outs = list(shapes), []
        for i in range(self.params.num_weights):
            group = shapes[per * i: per * i + per]
            s = next((tuple(x) for x in group if x is not None), None)
            for k, x in enumerate(group):
                if x is not None and tuple(x) != s:
                    raise self.error(f"{names[per * i + k]} has shape {tuple(x)} but {names[per * i]} has {s}")
            ins[per * i: per * i + per] = [s] * per
            outs.append(s)
        return ins, outs, []

    def infer_type(self, in_types):
        self._check_counts(len(in_types))
        per, ins, outs = self.per, list(in_types), []
        for i in range(self.params.num_weights):
            t = next((x for x in in_types[per * i: per * i + per] if x is not None), None)
            ins[per * i: per * i + per] = [t] * per
            outs.append(t)
        return ins, outs, []

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[self.per * i], out_data[i]) for i in range(min(self.params.num_weights, len(out_data)))]

    def create_operator(self, ctx) -> Operator:
        from ...backends import get_backend

        backend = get_backend(ctx.device_type)
        return ListKernelOperator(self.params, backend.xp, find_override(self.op_name, backend, type(self).kernel))


_DOC_SGD = ("Fused SGD over ``num_weights`` weights (inputs ``weight_i, grad_i``): "
            "``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)`` with ``lrs[i]``, ``wds[i]``.")
_DOC_MOM = ("Fused SGD with momentum over ``num_weights`` weights (inputs ``weight_i, grad_i, mom_i``): "
            "``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad)``; ``weight += mom``; "
            "``mom`` is updated in place.")


@register_op("multi_sgd_update", param=MultiSGDParam, doc=_DOC_SGD)
class MultiSGDProperty(_MultiUpdateProperty):
    kernel = staticmethod(multi_sgd_update)


@register_op("multi_sgd_mom_update", param=MultiSGDMomParam, doc=_DOC_MOM)
class MultiSGDMomProperty(_MultiUpdateProperty):
    per = 3
    names = ("weight", "grad", "mom")
    kernel = staticmethod(multi_sgd_mom_update)


register_numpy("multi_sgd_update", multi_sgd_update)
register_numpy("multi_sgd_mom_update", multi_sgd_mom_update)
