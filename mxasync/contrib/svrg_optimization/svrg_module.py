"""``SVRGModule``: a Module trained with stochastic variance-reduced gradients.

Every ``update_freq`` epochs the full gradient of the data set at the current weights is taken (an
auxiliary module of the same symbol runs over the whole iterator); each batch's gradient is then
``g(w) - g(w_snapshot) + full_gradient``, where the auxiliary module, holding the snapshot weights,
gives ``g(w_snapshot)`` on the same batch. MXNet's algorithm and names.
"""

from __future__ import annotations

import logging
import time

from ... import ndarray as nd
from ...base import _as_list
from ...initializer import Uniform
from ...kvstore.training import create_kvstore
from ...metric import EvalMetric
from ...metric import create as create_metric
from ...model import BatchEndParam
from ...module import Module
from ...optimizer import create as create_optimizer
from ...runtime.context import cpu
from .svrg_optimizer import _SVRGOptimizer

__all__ = ["SVRGModule"]


class SVRGModule(Module):
    """A :class:`~mxasync.module.Module` whose ``fit`` takes SVRG steps; ``update_freq`` (a positive int)
    is how many epochs pass between full-gradient computations."""

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",), logger=logging, context=None,
                 work_load_list=None, fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None, update_freq=None) -> None:
        context = cpu() if context is None else context
        super().__init__(symbol, data_names=data_names, label_names=label_names, logger=logger, context=context,
                         work_load_list=work_load_list, fixed_param_names=fixed_param_names,
                         state_names=state_names, group2ctxs=group2ctxs, compression_params=compression_params)
        if not isinstance(update_freq, int) or isinstance(update_freq, bool):
            raise TypeError("update_freq in SVRGModule must be an integer to represent the frequency for "
                            f"calculating full gradients, got {update_freq!r}")
        if update_freq <= 0:
            raise ValueError("update_freq in SVRGModule must be a positive integer to represent the frequency "
                             f"for calculating full gradients, got {update_freq}")
        self.update_freq = update_freq
        self._mod_aux = Module(symbol, data_names, label_names, logger, context, work_load_list, fixed_param_names,
                               state_names, group2ctxs, compression_params)
        self._param_dict = None
        self._ctx_len = len(self._context)

    def reshape(self, data_shapes, label_shapes=None) -> None:
        super().reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def init_optimizer(self, kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),),
                       force_init=False) -> None:
        """Make the SVRG optimizer around ``optimizer`` and zero the full-gradient buffers."""
        self._param_dict = [{k: nd.zeros(v.shape, ctx=self._context[i]) for k, v in self.get_params()[0].items()}
                            for i in range(self._ctx_len)]
        svrg = self._create_optimizer(_SVRGOptimizer.__name__, optimizer, kvstore, optimizer_params)
        super().init_optimizer(kvstore=kvstore, optimizer=svrg, optimizer_params=optimizer_params,
                               force_init=force_init)
        if self._kvstore:
            group = self._exec_group
            for idx, arrays in enumerate(group.param_arrays):
                name = group.param_names[idx]
                self._kvstore.init(name + "_full", nd.zeros(self._arg_params[name].shape))
                if self._update_on_kvstore:
                    self._kvstore.pull(name + "_full", list(arrays), priority=-idx)

    def _create_optimizer(self, optimizer: str, default_opt, kvstore, optimizer_params):
        group = self._exec_group
        batch_size = group.batch_size
        kv, update_on_kvstore = create_kvstore(kvstore, self._ctx_len, self._arg_params)
        if kv is not None and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        if update_on_kvstore:
            idx2name = dict(enumerate(group.param_names))
        else:
            idx2name = {i * self._ctx_len + k: n for i, n in enumerate(group.param_names)
                        for k in range(self._ctx_len)}
        for key in self._param_dict[0]:
            idx2name[max(idx2name, default=-1) + 1] = key + "_full"
        params = dict(optimizer_params)
        params.setdefault("rescale_grad", 1.0 / batch_size)
        params["default_optimizer"] = default_opt
        params["param_idx2name"] = idx2name
        return create_optimizer(optimizer, **params)

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False, force_rebind=False,
             shared_module=None, grad_req="write") -> None:
        super().bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind, shared_module,
                     grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
                               shared_module, grad_req)

    def forward(self, data_batch, is_train=None) -> None:
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None) -> None:
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def update(self) -> None:
        """Replace each gradient by its SVRG form, then update as a Module does."""
        self._update_svrg_gradients()
        super().update()

    def update_full_grads(self, train_data) -> None:
        """The mean gradient over ``train_data`` at the current weights (the snapshot the auxiliary module
        now holds); padding of the last batch is discounted as MXNet does."""
        names = self._exec_group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        train_data.reset()
        nbatch = padding = 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for ctx in range(self._ctx_len):
                for index, name in enumerate(names):
                    grad = self._mod_aux._exec_group.grad_arrays[index][ctx]
                    self._param_dict[ctx][name] = nd.broadcast_add(self._param_dict[ctx][name], grad)
            padding = batch.pad
        true_num_batch = nbatch - padding / train_data.batch_size
        for name in names:
            grads = []
            for i in range(self._ctx_len):
                self._param_dict[i][name] /= true_num_batch
                grads.append(self._param_dict[i][name])
            if self._kvstore:
                self._accumulate_kvstore(name, grads)

    def _accumulate_kvstore(self, key: str, value: list) -> None:
        self._kvstore.push(key + "_full", value)
        self._kvstore.barrier()
        self._kvstore.pull(key + "_full", value)
        for i in range(self._ctx_len):
            self._param_dict[i][key] = value[i] / self._ctx_len

    @staticmethod
    def _svrg_grads_update_rule(g_curr_batch_curr_weight, g_curr_batch_special_weight, g_special_weight_all_batch):
        for index, grad in enumerate(g_curr_batch_curr_weight):
            grad -= g_curr_batch_special_weight[index]
            grad += g_special_weight_all_batch[index]
        return g_curr_batch_curr_weight

    def _update_svrg_gradients(self) -> None:
        group, aux_group = self._exec_group, self._mod_aux._exec_group
        for ctx in range(self._ctx_len):
            for index, name in enumerate(group.param_names):
                grad = group.grad_arrays[index][ctx]
                grad -= aux_group.grad_arrays[index][ctx]
                grad += self._param_dict[ctx][name]

    def prepare(self, data_batch, sparse_row_id_fn=None) -> None:
        super().prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None, batch_end_callback=None,
            kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=None, arg_params=None, aux_params=None, allow_missing=False,
            force_rebind=False, force_init=False, begin_epoch=0, num_epoch=None, validation_metric=None,
            monitor=None, sparse_row_id_fn=None) -> None:
        """Module.fit with a full-gradient pass every ``update_freq`` epochs (``initializer`` defaults to
        ``Uniform(0.01)``, as MXNet's)."""
        if num_epoch is None:
            raise ValueError("SVRGModule.fit: please specify number of epochs (num_epoch)")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label, for_training=True,
                  force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=Uniform(0.01) if initializer is None else initializer, arg_params=arg_params,
                         aux_params=aux_params, allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, EvalMetric):
            eval_metric = create_metric(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            eval_metric.reset()
            tic = time.time()
            if epoch % self.update_freq == 0:
                self.update_full_grads(train_data)
            train_data.reset()
            data_iter = iter(train_data)
            next_batch = next(data_iter)
            nbatch, end_of_batch, name_vals = 0, False, []
            while not end_of_batch:
                batch = next_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(batch)
                self.update()
                if isinstance(batch, list):
                    self.update_metric(eval_metric, [b.label for b in batch], pre_sliced=True)
                else:
                    self.update_metric(eval_metric, batch.label)
                try:
                    next_batch = next(data_iter)
                    self.prepare(next_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if monitor is not None:
                    monitor.toc_print()
                if end_of_batch:
                    name_vals = eval_metric.get_name_value()
                if batch_end_callback is not None:
                    params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric, locals=locals())
                    for callback in _as_list(batch_end_callback):
                        callback(params)
                nbatch += 1
            for name, val in name_vals:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            if epoch_end_callback is not None:
                for callback in _as_list(epoch_end_callback):
                    callback(epoch, self.symbol, arg_params, aux_params)
            if eval_data:
                res = self.score(eval_data, validation_metric, score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
