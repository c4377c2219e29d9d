"""``PythonModule`` / ``PythonLossModule``: modules computed in Python, without a symbol or parameters
(MXNet's; a ``PythonLossModule`` ends a :class:`~mxasync.module.SequentialModule` with a loss whose
gradient ``grad_func(scores, labels)`` gives)."""

from __future__ import annotations

import logging

from .. import ndarray as nd
from ..base import MXAsyncError
from .base_module import DEFAULT_INIT, BaseModule

__all__ = ["PythonModule", "PythonLossModule"]


def _name(desc) -> str:
    return desc.name if hasattr(desc, "name") else desc[0]


class PythonModule(BaseModule):
    """A module with no parameters whose outputs a subclass computes (``forward``, ``backward``,
    ``get_outputs``, ``get_input_grads``, ``_compute_output_shapes``)."""

    def __init__(self, data_names, label_names, output_names, logger=logging) -> None:
        super().__init__(logger=logger)
        self._data_names = list(data_names) if isinstance(data_names, tuple) else data_names
        self._label_names = list(label_names) if isinstance(label_names, tuple) else label_names
        self._output_names = output_names
        self._data_shapes = self._label_shapes = self._output_shapes = None

    @property
    def data_names(self):
        return self._data_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        return self._data_shapes

    @property
    def label_shapes(self):
        return self._label_shapes

    @property
    def output_shapes(self):
        return self._output_shapes

    def get_params(self) -> tuple[dict, dict]:
        return {}, {}

    def init_params(self, initializer=DEFAULT_INIT, arg_params=None, aux_params=None, allow_missing=False,
                    force_init=False, allow_extra=False) -> None:
        """Nothing to initialize."""
        self.params_initialized = True

    def update(self) -> None:
        """No parameters: nothing to update."""

    def update_metric(self, eval_metric, labels, pre_sliced=False) -> None:
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise RuntimeError("PythonModule does not support presliced labels")
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False, force_rebind=False,
             shared_module=None, grad_req="write") -> None:
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if grad_req != "write":
            raise MXAsyncError(f"{type(self).__name__}.bind: Python modules only take grad_req='write', "
                               f"got {grad_req!r}")
        names = [_name(d) for d in data_shapes]
        if names != list(self._data_names):
            raise MXAsyncError(f"{type(self).__name__}.bind: data {names} given, the module takes "
                               f"{list(self._data_names)}")
        if label_shapes is not None:
            labels = [_name(d) for d in label_shapes]
            if self._label_names is None or labels != list(self._label_names):
                raise MXAsyncError(f"{type(self).__name__}.bind: labels {labels} given, the module takes "
                                   f"{self._label_names}")
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._data_shapes, self._label_shapes = data_shapes, label_shapes
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        raise NotImplementedError(f"{type(self).__name__}._compute_output_shapes")

    def init_optimizer(self, kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),),
                       force_init=False) -> None:
        """No parameters: nothing to optimize."""
        self.optimizer_initialized = True


class PythonLossModule(PythonModule):
    """A loss as the last module: its output is its input (the scores); its input gradient is
    ``grad_func(scores, labels)`` (an NDArray, or anything ``nd.array`` takes)."""

    def __init__(self, name="pyloss", data_names=("data",), label_names=("softmax_label",), logger=logging,
                 grad_func=None) -> None:
        super().__init__(data_names, label_names, [name + "_output"], logger=logger)
        if len(data_names) != 1 or len(label_names) != 1:
            raise MXAsyncError(f"PythonLossModule takes one data and one label, got {list(data_names)} and "
                               f"{list(label_names)}")
        if grad_func is not None and not callable(grad_func):
            raise TypeError(f"PythonLossModule: grad_func must be callable, got {type(grad_func).__name__}")
        self._name = name
        self._scores = self._labels = self._scores_grad = None
        self._grad_func = grad_func

    def _compute_output_shapes(self):
        desc = self._data_shapes[0]
        return [(self._name + "_output", desc.shape if hasattr(desc, "shape") else desc[1])]

    def forward(self, data_batch, is_train=None) -> None:
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True) -> list:
        return [self._scores]

    def backward(self, out_grads=None) -> None:
        if out_grads is not None:
            raise MXAsyncError("PythonLossModule.backward: a loss module takes no out_grads")
        if not self.for_training:
            raise MXAsyncError("PythonLossModule.backward: the module was bound with for_training=False")
        self._backward_impl()

    def _backward_impl(self) -> None:
        if self._grad_func is None:
            raise NotImplementedError("PythonLossModule without grad_func: override _backward_impl")
        grad = self._grad_func(self._scores, self._labels)
        self._scores_grad = grad if isinstance(grad, nd.NDArray) else nd.array(grad)

    def get_input_grads(self, merge_multi_context=True) -> list:
        return [self._scores_grad]

    def install_monitor(self, mon) -> None:
        raise NotImplementedError("PythonLossModule.install_monitor")
