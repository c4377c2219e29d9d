"""``BucketingModule``: one Module per bucket (sequence length, ...), all sharing one set of parameters.

``sym_gen(bucket_key)`` returns ``(symbol, data_names, label_names)``. The default bucket is
bound first and owns the parameters and the optimizer; every other bucket is bound on
first use with the default one as its ``shared_module``, so its executors use the same
weight arrays. ``forward`` switches to the batch's ``bucket_key`` (MXNet 1.x semantics).
"""

from __future__ import annotations

import logging

import numpy as np

from .. import ndarray as nd
from .. import symbol as sym
from ..base import MXAsyncError
from ..model import load_params
from ..runtime.context import cpu
from ..symbol._naming import NameManager
from .base_module import DEFAULT_INIT, BaseModule
from .module import Module, _check_names

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """Modules per bucket key sharing the default bucket's parameters and optimizer."""

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=None, work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise MXAsyncError("BucketingModule: default_bucket_key is required")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, _ = self._call_sym_gen(default_bucket_key)
        self._fixed_param_names = list(fixed_param_names or [])
        self._state_names = list(state_names or [])
        _check_names(symbol, list(data_names or []), "data")
        _check_names(symbol, self._state_names, "state")
        _check_names(symbol, self._fixed_param_names, "fixed_param")
        self._module_kwargs = dict(logger=logger, context=cpu() if context is None else context,
                                   work_load_list=work_load_list, fixed_param_names=self._fixed_param_names,
                                   state_names=self._state_names, group2ctxs=group2ctxs,
                                   compression_params=compression_params)
        self._buckets: dict = {}
        self._curr_module: Module | None = None
        self._curr_bucket_key = None
        self._monitor = None
        self._grad_req = None

    def _call_sym_gen(self, bucket_key):
        with NameManager():  # each bucket's graph gets the same auto-names (embedding0, ...), as in MXNet
            return self._sym_gen(bucket_key)

    def _new_module(self, bucket_key) -> Module:
        symbol, data_names, label_names = self._call_sym_gen(bucket_key)
        return Module(symbol, data_names, label_names, **self._module_kwargs)

    def _reset_bind(self) -> None:
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    # -- what the current bucket has ---------------------------------------------------------
    def _need_bound(self, what: str) -> Module:
        if not self.binded or self._curr_module is None:
            raise MXAsyncError(f"BucketingModule.{what}: call bind() first")
        return self._curr_module

    @property
    def data_names(self):
        if self.binded:
            return self._curr_module.data_names
        return list(self._call_sym_gen(self._default_bucket_key)[1])

    @property
    def output_names(self):
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        return self._need_bound("data_shapes").data_shapes

    @property
    def label_shapes(self):
        return self._need_bound("label_shapes").label_shapes

    @property
    def output_shapes(self):
        return self._need_bound("output_shapes").output_shapes

    @property
    def symbol(self):
        return self._need_bound("symbol").symbol

    # -- parameters ---------------------------------------------------------------------------
    def get_params(self):
        if not self.params_initialized or self._curr_module is None:
            raise MXAsyncError("BucketingModule.get_params: call bind() and init_params() first")
        if not self._curr_module.binded:  # loaded, not bound yet: the parameters as read from the file
            return self._curr_module._arg_params, self._curr_module._aux_params
        params = self._curr_module.get_params()  # the buckets share one set of arrays
        self._params_dirty = False
        return params

    @property
    def _params_dirty(self) -> bool:
        return any(getattr(m, "_params_dirty", False) for m in self._buckets.values())

    @_params_dirty.setter
    def _params_dirty(self, value: bool) -> None:
        for m in self._buckets.values():
            m._params_dirty = value

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True, allow_extra=False):
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            self.logger.warning("Parameters already initialized and force_init=False. set_params call ignored.")
            return
        self._need_bound("set_params").set_params(arg_params, aux_params, allow_missing=allow_missing,
                                                  force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def init_params(self, initializer=DEFAULT_INIT, arg_params=None, aux_params=None, allow_missing=False,
                    force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        self._need_bound("init_params").init_params(
            initializer=initializer, arg_params=arg_params, aux_params=aux_params, allow_missing=allow_missing,
            force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        self._check_ready("BucketingModule.get_states")
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        self._check_ready("BucketingModule.set_states")
        self._curr_module.set_states(states, value)

    # -- binding and buckets ----------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False, force_rebind=False,
             shared_module=None, grad_req="write"):
        """Bind the default bucket; the others bind on first use (:meth:`switch_bucket`)."""
        params = self.get_params() if self.params_initialized else None
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise MXAsyncError("BucketingModule.bind: shared_module is not supported")
        self.for_training, self.inputs_need_grad, self._grad_req = for_training, inputs_need_grad, grad_req
        self.binded = True
        module = self._buckets.get(self._default_bucket_key) or self._new_module(self._default_bucket_key)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind=False,
                    shared_module=None, grad_req=grad_req)
        self._curr_module, self._curr_bucket_key = module, self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if params is not None:
            self.set_params(*params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None) -> None:
        """Make ``bucket_key`` current, binding its Module on the default bucket's parameters if new."""
        if not self.binded:
            raise MXAsyncError("BucketingModule.switch_bucket: call bind() first")
        module = self._buckets.get(bucket_key)
        if module is None:
            module = self._buckets[bucket_key] = self._new_module(bucket_key)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
        if not module.binded:
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=self._buckets[self._default_bucket_key], grad_req=self._grad_req)
        self._curr_module, self._curr_bucket_key = module, bucket_key

    def init_optimizer(self, kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),),
                       force_init=False):
        self._check_ready("BucketingModule.init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params, force_init=force_init)
        for module in self._buckets.values():
            if module is not self._curr_module:
                module.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    def prepare(self, data_batch, sparse_row_id_fn=None) -> None:
        self._check_ready("BucketingModule.prepare")
        key = self._curr_bucket_key
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data, data_batch.provide_label)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(key, None, None)

    # -- running ------------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None) -> None:
        self._check_ready("BucketingModule.forward")
        key = getattr(data_batch, "bucket_key", None)
        key = self._default_bucket_key if key is None else key
        self.switch_bucket(key, data_batch.provide_data, data_batch.provide_label)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None) -> None:
        self._check_ready("BucketingModule.backward")
        self._curr_module.backward(out_grads=out_grads)

    def update(self) -> None:
        self._check_ready("BucketingModule.update", optimizer=True)
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        self._check_ready("BucketingModule.get_outputs")
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._check_ready("BucketingModule.get_input_grads")
        if not self.inputs_need_grad:
            raise MXAsyncError("BucketingModule.get_input_grads: bind with inputs_need_grad=True")
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False) -> None:
        self._check_ready("BucketingModule.update_metric")
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon) -> None:
        if not self.binded:
            raise MXAsyncError("BucketingModule.install_monitor: call bind() first")
        self._monitor = mon
        for module in self._buckets.values():
            module.install_monitor(mon)

    # -- files ----------------------------------------------------------------------------------
    def save_checkpoint(self, prefix: str, epoch: int, remove_amp_cast: bool = False) -> None:
        """``prefix-%04d.params``, one ``prefix-<key>-symbol.json`` per bucket and ``prefix.buckets``."""
        if not self._buckets:
            raise MXAsyncError("BucketingModule.save_checkpoint: an empty BucketingModule cannot be saved")
        self.save_params(f"{prefix}-{epoch:04d}.params")
        for key in self._buckets:
            self._call_sym_gen(key)[0].save(f"{prefix}-{key}-symbol.json", remove_amp_cast=remove_amp_cast)
        nd.save(f"{prefix}.buckets", nd.array(np.array(list(self._buckets), dtype=np.int32), dtype=np.int32))

    @staticmethod
    def load(prefix: str, epoch: int, sym_gen=None, default_bucket_key=None, **kwargs) -> BucketingModule:
        """A BucketingModule from :meth:`save_checkpoint`'s files (``sym_gen`` and the default key as saved)."""
        if sym_gen is None or default_bucket_key is None:
            raise MXAsyncError("BucketingModule.load: sym_gen and default_bucket_key are required")
        keys = [int(k) for k in nd.load(f"{prefix}.buckets")[0].asnumpy().astype("int32")]
        symbols = {key: sym.load(f"{prefix}-{key}-symbol.json") for key in keys}
        if default_bucket_key not in symbols:
            raise MXAsyncError(f"BucketingModule.load: {prefix}.buckets has no bucket {default_bucket_key!r}")
        arg_params, aux_params = load_params(prefix, epoch)
        return BucketingModule._with_buckets(symbols, sym_gen, default_bucket_key, arg_params, aux_params, kwargs,
                                             per_key_names=True)

    @staticmethod
    def load_dict(sym_dict=None, sym_gen=None, default_bucket_key=None, arg_params=None, aux_params=None,
                  **kwargs) -> BucketingModule:
        """A BucketingModule from ``{bucket_key: symbol}`` and shared params (MXNet's; AMP's
        ``convert_bucketing_module`` builds its result so)."""
        for value, what in ((sym_dict, "sym_dict"), (arg_params, "arg_params"), (aux_params, "aux_params"),
                            (default_bucket_key, "default_bucket_key")):
            if value is None:
                raise MXAsyncError(f"BucketingModule.load_dict: {what} is required")
        return BucketingModule._with_buckets(sym_dict, sym_gen, default_bucket_key, arg_params, aux_params, kwargs,
                                             per_key_names=False)

    @staticmethod
    def _with_buckets(symbols: dict, sym_gen, default_bucket_key, arg_params, aux_params, kwargs,
                      per_key_names: bool) -> BucketingModule:
        """A module whose buckets run ``symbols``, the default bucket holding the params.  Data and label
        names come from ``sym_gen`` per key (``load``) or from the default key (``load_dict``, as MXNet)."""
        module = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key, symbol in symbols.items():
            _, data_names, label_names = sym_gen(key if per_key_names else default_bucket_key)
            module._buckets[key] = Module(symbol, data_names, label_names, **module._module_kwargs)
            if key == default_bucket_key:
                module._curr_module = module._buckets[key]
        if module._curr_module is None:
            raise MXAsyncError(f"BucketingModule: no bucket {default_bucket_key!r} among {list(symbols)}")
        module._curr_module._arg_params, module._curr_module._aux_params = arg_params, aux_params
        module._curr_module.params_initialized = True
        module.params_initialized = True
        return module
