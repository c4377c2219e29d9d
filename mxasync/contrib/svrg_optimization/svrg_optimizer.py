"""The optimizer of :class:`~mxasync.contrib.svrg_optimization.SVRGModule`: parameters whose name holds
``full`` (the stored full gradients, ``<name>_full``) are assigned, the others updated by the wrapped
optimizer."""

from __future__ import annotations

from typing import Any

from ... import optimizer as opt

__all__ = ["_SVRGOptimizer", "_AssignmentOptimizer"]

# the params of Optimizer itself: what the SVRG optimizer keeps; all of them also go to the wrapped one
_BASE_PARAMS = ("rescale_grad", "param_idx2name", "wd", "clip_gradient", "learning_rate", "lr_scheduler", "sym",
                "begin_num_update", "multi_precision", "param_dict")


@opt.register
class _AssignmentOptimizer(opt.Optimizer):
    """``weight[:] = grad``."""

    def update(self, index, weight, grad, state) -> None:
        weight[:] = grad


@opt.register
class _SVRGOptimizer(opt.Optimizer):
    """Dispatches each index to the assignment optimizer (``..._full`` keys) or to ``default_optimizer``
    (a name, made with the same keyword arguments, or an Optimizer)."""

    def __init__(self, default_optimizer: Any, **kwargs: Any) -> None:
        super().__init__(**{k: v for k, v in kwargs.items() if k in _BASE_PARAMS})
        self.default_opt = opt.create(default_optimizer, **kwargs) if isinstance(default_optimizer, str) \
            else default_optimizer
        self.aux_opt = opt.create(_AssignmentOptimizer.__name__)

    def _name_of(self, index) -> str:
        if index in self.idx2name.values():
            return index
        if index not in self.idx2name:
            raise KeyError(f"_SVRGOptimizer: index {index!r} has no parameter name (param_idx2name has "
                           f"{sorted(self.idx2name)[:8]}...)")
        return self.idx2name[index]

    def _for(self, index) -> opt.Optimizer:
        return self.aux_opt if "full" in self._name_of(index) else self.default_opt

    def update(self, index, weight, grad, state) -> None:
        self._for(index).update(index, weight, grad, state)

    def create_state(self, index, weight):
        return self._for(index).create_state(index, weight)
