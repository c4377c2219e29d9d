"""The other fused SGD forms of MXNet 1.9: multi_mp_sgd_update, multi_mp_sgd_mom_update and the
``preloaded_multi_*`` ops (learning rates and weight decays given as arrays).

Inputs per weight, interleaved as in ``multi_sgd_update``:

* ``multi_mp_sgd_update``: ``weight_i, grad_i, weight32_i``; ``multi_mp_sgd_mom_update`` adds
  ``mom_i`` before ``weight32_i``. The step runs on the float32 master weight ``weight32_i`` (updated
  in place, like ``mom_i``) with the gradient cast to float32; output ``i`` is it cast to the weight's
  dtype.
* ``preloaded_multi_sgd_update`` / ``_mom_`` / ``_mp_`` / ``_mp_sgd_mom_``: the same groups, then two
  last inputs ``lrs`` and ``wds`` of shape ``(num_weights,)`` instead of the ``lrs``/``wds`` params.

>>> import mxasync as mx
>>> w, g = mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,), dtype="float16")
>>> w32 = w.astype("float32")
>>> out = mx.nd.multi_mp_sgd_update(w, g, w32, lrs=(0.5,), wds=(0.0,), num_weights=1)
>>> out.asnumpy(), w32.asnumpy()
(array([0.5, 0.5], dtype=float16), array([0.5, 0.5], dtype=float32))
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..kernels._runner import PLAIN
from ..numpy_overrides import register_numpy
from ..params import Field, OpParam
from ..registry import register_op
from .multi_sgd import MultiSGDMomParam, MultiSGDParam, _MultiUpdateProperty, update_groups

__all__ = ["PreloadedMultiSGDParam", "PreloadedMultiSGDMomParam"]


class PreloadedMultiSGDParam(OpParam):
    rescale_grad: float = 1.0
    clip_gradient: float = -1.0
    num_weights: int = Field(default=1, ge=1)


class PreloadedMultiSGDMomParam(PreloadedMultiSGDParam):
    momentum: float = 0.0


def _host(a) -> list[float]:
    return [float(v) for v in np.asarray(a.get() if hasattr(a, "get") else a).reshape(-1)]


class _FormProperty(_MultiUpdateProperty):
    """Groups of ``names`` per weight (mp: weight32 last), then ``lrs, wds`` arrays when preloaded."""

    mom: ClassVar[bool] = False
    mp: ClassVar[bool] = False
    preloaded: ClassVar[bool] = False

    def list_arguments(self) -> list[str]:
        return super().list_arguments() + (["lrs", "wds"] if self.preloaded else [])

    def mutate_inputs(self) -> list[int]:
        own = [k for k, n in enumerate(self.names) if n in ("mom", "weight32")]
        return [self.per * i + k for i in range(self.params.num_weights) for k in own]

    def _check_counts(self, n_inputs: int) -> None:
        if not self.preloaded:
            return super()._check_counts(n_inputs)
        p, per = self.params, self.per
        if n_inputs != per * p.num_weights + 2:
            raise self.error(f"got {n_inputs} inputs but num_weights={p.num_weights} needs "
                             f"{per * p.num_weights + 2} ({', '.join(self.names)} for each weight, then lrs and wds)")

    def infer_shape(self, in_shapes):
        if not self.preloaded:
            return super().infer_shape(in_shapes)
        self._check_counts(len(in_shapes))
        n = self.params.num_weights
        ins, outs, _ = self._groups_shape(in_shapes[:-2])
        for name, s in zip(("lrs", "wds"), in_shapes[-2:], strict=True):
            if s is not None and tuple(s) != (n,):
                raise self.error(f"{name} has shape {tuple(s)}; it must be ({n},), one value per weight")
        return ins + [(n,), (n,)], outs, []

    def infer_type(self, in_types):
        self._check_counts(len(in_types))
        per, ins, outs = self.per, list(in_types), []
        f32 = np.dtype(np.float32)
        for i in range(self.params.num_weights):
            group = in_types[per * i: per * i + per]
            t = next((x for x in group[:2] if x is not None), None)
            for k, name in enumerate(self.names):
                # mp: the momentum and the master weight are float32 whatever the weight is
                ins[per * i + k] = f32 if self.mp and name in ("mom", "weight32") else t
            outs.append(t)
        if self.preloaded:
            ins[-2:] = [f32 if x is None else x for x in in_types[-2:]]
        return ins, outs, []

    @classmethod
    def kernel(cls, xp, p, in_data, req, out_data, run=PLAIN):
        if cls.preloaded:
            lrs, wds = _host(in_data[-2]), _host(in_data[-1])
            in_data = in_data[:-2]
        else:
            lrs, wds = p.lrs, p.wds
        update_groups(xp, p, in_data, req, out_data, cls.per, cls.mom, cls.mp, lrs, wds, run)


_FORMS = {
    # name: (param, names per weight, momentum, mixed precision, preloaded)
    "multi_mp_sgd_update": (MultiSGDParam, ("weight", "grad", "weight32"), False, True, False),
    "multi_mp_sgd_mom_update": (MultiSGDMomParam, ("weight", "grad", "mom", "weight32"), True, True, False),
    "preloaded_multi_sgd_update": (PreloadedMultiSGDParam, ("weight", "grad"), False, False, True),
    "preloaded_multi_sgd_mom_update": (PreloadedMultiSGDMomParam, ("weight", "grad", "mom"), True, False, True),
    "preloaded_multi_mp_sgd_update": (PreloadedMultiSGDParam, ("weight", "grad", "weight32"), False, True, True),
    "preloaded_multi_mp_sgd_mom_update": (PreloadedMultiSGDMomParam, ("weight", "grad", "mom", "weight32"), True,
                                          True, True),
}

for _name, (_param, _names, _mom, _mp, _pre) in _FORMS.items():
    _doc = (f"Fused SGD{' with momentum' if _mom else ''} over ``num_weights`` weights (inputs "
            f"{', '.join(n + '_i' for n in _names)}{', then lrs and wds arrays' if _pre else ''})"
            f"{' on the float32 master weights weight32_i (updated in place)' if _mp else ''}: "
            + ("``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad)``; ``weight += mom``."
               if _mom else "``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)``."))
    _cls = type(_name.title().replace("_", "") + "Property", (_FormProperty,),
                dict(per=len(_names), names=_names, mom=_mom, mp=_mp, preloaded=_pre, __module__=__name__))
    register_op(_name, param=_param, doc=_doc)(_cls)
    register_numpy(_name, _cls.kernel)
