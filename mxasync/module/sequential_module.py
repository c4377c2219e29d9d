"""``SequentialModule``: modules chained, each one's outputs the next one's data (MXNet's)."""

from __future__ import annotations

import copy
import logging

from ..base import MXAsyncError
from .base_module import DEFAULT_INIT, BaseModule

__all__ = ["SequentialModule"]


class SequentialModule(BaseModule):
    """Modules run one after another. ``add(module, take_labels=True)`` gives that module the labels (and
    the metric), ``auto_wiring=True`` renames the previous outputs to its data names."""

    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"

    def __init__(self, logger=logging) -> None:
        super().__init__(logger=logger)
        self._modules: list = []
        self._metas: list[dict] = []
        self._label_shapes = None
        self._data_shapes = None
        self._meta_keys = {self.META_TAKE_LABELS, self.META_AUTO_WIRING}

    def add(self, module, **kwargs) -> SequentialModule:
        """Append ``module`` (returns self, so ``add`` calls chain)."""
        unknown = sorted(set(kwargs) - self._meta_keys)
        if unknown:
            raise MXAsyncError(f'SequentialModule.add: unknown meta "{unknown[0]}", a typo? '
                               f"(known: {sorted(self._meta_keys)})")
        self._modules.append(module)
        self._metas.append(kwargs)
        self.binded = self.params_initialized = self.optimizer_initialized = False
        return self

    def _need(self, what: str, params: bool = False, optimizer: bool = False) -> None:
        if not self.binded or (params and not self.params_initialized) or \
                (optimizer and not self.optimizer_initialized):
            state = "bind" if not self.binded else "init_params" if not self.params_initialized else "init_optimizer"
            raise MXAsyncError(f"SequentialModule.{what}: call {state} first")

    @property
    def data_names(self):
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        self._need("data_shapes")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        self._need("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        self._need("output_shapes")
        return self._modules[-1].output_shapes

    def get_params(self) -> tuple[dict, dict]:
        self._need("get_params", params=True)
        arg_params: dict = {}
        aux_params: dict = {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(self, initializer=DEFAULT_INIT, arg_params=None, aux_params=None, allow_missing=False,
                    force_init=False, allow_extra=False) -> None:
        """Initialize every module's parameters; two modules may not share a parameter name."""
        if self.params_initialized and not force_init:
            return
        self._need("init_params")
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                               allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
        seen_arg: dict = {}
        seen_aux: dict = {}
        for i, module in enumerate(self._modules):
            args, auxs = module.get_params()
            for seen, names in ((seen_arg, args), (seen_aux, auxs)):
                for name in names:
                    if name in seen:
                        j = seen[name]
                        raise MXAsyncError(f'Duplicated parameter names: name "{name}" in layer {i} '
                                           f"({type(self._modules[i]).__name__}) is already used in layer {j} "
                                           f"({type(self._modules[j]).__name__})")
                    seen[name] = i
        self.params_initialized = True

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False, force_rebind=False,
             shared_module=None, grad_req="write") -> None:
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise MXAsyncError("SequentialModule.bind: inputs_need_grad needs for_training")
        if shared_module is not None:
            raise MXAsyncError("SequentialModule.bind: shared_module is not supported")
        if not self._modules:
            raise MXAsyncError("Attempting to bind an empty SequentialModule")
        self.binded = True
        self._label_shapes = label_shapes
        shapes = data_shapes
        needs_label = False
        for i, (module, meta) in enumerate(zip(self._modules, self._metas, strict=True)):
            take = bool(meta.get(self.META_TAKE_LABELS))
            needs_label = needs_label or take
            if meta.get(self.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(shapes):
                    raise MXAsyncError(f"SequentialModule.bind: layer {i} takes {len(names)} data, the layer "
                                       f"before gives {len(shapes)}")
                shapes = [(new, d.shape if hasattr(d, "shape") else d[1]) for new, d in zip(names, shapes,
                                                                                             strict=True)]
            module.bind(data_shapes=shapes, label_shapes=label_shapes if take else None, for_training=for_training,
                        inputs_need_grad=bool(inputs_need_grad or (for_training and i > 0)),
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            shapes = module.output_shapes
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        if not needs_label:
            self._label_shapes = None

    def init_optimizer(self, kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),),
                       force_init=False) -> None:
        self._need("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params,
                                  force_init=force_init)
        self.optimizer_initialized = True

    def forward(self, data_batch, is_train=None) -> None:
        self._need("forward", params=True)
        batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            batch.data = module.get_outputs()
            if hasattr(batch, "provide_data"):
                names = [x[0] for x in module.output_shapes]
                batch.provide_data = [(name, x.shape) for name, x in zip(names, batch.data, strict=True)]

    def backward(self, out_grads=None) -> None:
        self._need("backward", params=True)
        for i in range(len(self._modules) - 1, -1, -1):
            self._modules[i].backward(out_grads=out_grads)
            if i == 0:
                break
            out_grads = self._modules[i].get_input_grads()

    def update(self) -> None:
        self._need("update", params=True, optimizer=True)
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True) -> list:
        self._need("get_outputs", params=True)
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True) -> list:
        self._need("get_input_grads", params=True)
        if not self.inputs_need_grad:
            raise MXAsyncError("SequentialModule.get_input_grads: bind with inputs_need_grad=True")
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False) -> None:
        self._need("update_metric", params=True)
        for meta, module in zip(self._metas, self._modules, strict=True):
            if meta.get(self.META_TAKE_LABELS):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon) -> None:
        self._need("install_monitor")
        for module in self._modules:
            module.install_monitor(mon)
