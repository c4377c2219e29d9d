"""``BaseModule``: the training loop (``fit``), evaluation (``score``, ``predict``) and parameter I/O.

A subclass provides the computation (``bind``, ``init_params``, ``init_optimizer``,
``forward``, ``backward``, ``update``, ``update_metric``, ``get_outputs``,
``get_params``); everything here is written against those, as in MXNet 1.9, so
the loop and its callbacks behave the same for every module type.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from ..base import MXAsyncError
from ..model import BatchEndParam
from ..ndarray import NDArray, concat
from ..ndarray import load as nd_load
from ..ndarray import save as nd_save

__all__ = ["BaseModule", "as_list", "as_metric", "DEFAULT_INIT", "resolve_initializer"]


class _DefaultInit:
    """Stands for ``mx.init.Uniform(0.01)``, MXNet's default, built when first needed."""

    def __repr__(self) -> str:
        return "Uniform(0.01)"


DEFAULT_INIT = _DefaultInit()


def resolve_initializer(initializer):
    if initializer is DEFAULT_INIT:
        from ..initializer import Uniform

        return Uniform(0.01)
    return initializer


def as_list(obj) -> list:
    """``obj`` as a list (None -> [], a single item -> [item])."""
    if obj is None:
        return []
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def as_metric(eval_metric):
    """A metric object from a name, a list of names or a metric (``mx.metric.create``)."""
    if isinstance(eval_metric, (str, list, tuple)) or callable(eval_metric) and not hasattr(eval_metric, "update"):
        from .. import metric

        return metric.create(eval_metric)
    return eval_metric


def _name_values(eval_metric) -> list[tuple[str, float]]:
    get = getattr(eval_metric, "get_global_name_value", None) or eval_metric.get_name_value
    return list(get())


class BaseModule:
    """Shared behaviour of modules; see :class:`mxasync.module.Module` for the usual one."""

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    # -- high-level API ---------------------------------------------------------
    def forward_backward(self, data_batch) -> None:
        """A forward pass in training mode, then the backward pass."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def _check_ready(self, what: str, optimizer: bool = False) -> None:
        if not (self.binded and self.params_initialized):
            raise MXAsyncError(f"{what}: call bind() and init_params() first")
        if optimizer and not self.optimizer_initialized:
            raise MXAsyncError(f"{what}: call init_optimizer() first")

    def score(self, eval_data, eval_metric, num_batch: int | None = None, batch_end_callback=None,
              score_end_callback=None, reset: bool = True, epoch: int = 0, sparse_row_id_fn=None):
        """Run ``eval_data`` through the module and return ``eval_metric``'s ``[(name, value)]``.

        As in MXNet, padded examples of a last, padded batch count too.
        """
        self._check_ready("score")
        if reset:
            eval_data.reset()
        eval_metric = as_metric(eval_metric)
        eval_metric.reset()
        nbatch = 0
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            self.update_metric(eval_metric, batch.label)
            for cb in as_list(batch_end_callback):
                cb(BatchEndParam(epoch, nbatch, eval_metric, locals()))
        for cb in as_list(score_end_callback):
            cb(BatchEndParam(epoch, nbatch, eval_metric, locals()))
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch: int | None = None, reset: bool = True,
                     sparse_row_id_fn=None) -> Iterator[tuple[list[NDArray], int, Any]]:
        """Yield ``(outputs without the padding, batch number, batch)`` for each batch."""
        self._check_ready("iter_predict")
        if reset:
            eval_data.reset()
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            keep = batch.data[0].shape[0] - (batch.pad or 0)
            yield [out[:keep] for out in self.get_outputs()], nbatch, batch

    def predict(self, eval_data, num_batch: int | None = None, merge_batches: bool = True, reset: bool = True,
                always_output_list: bool = False, sparse_row_id_fn=None):
        """The outputs over ``eval_data`` (padding removed), concatenated over batches when ``merge_batches``."""
        if isinstance(eval_data, NDArray) or not hasattr(eval_data, "reset"):
            from ..io import NDArrayIter

            eval_data = NDArrayIter(eval_data, batch_size=self.data_shapes[0].shape[0])
        collected = [[out.copy() for out in outs]
                     for outs, _, _ in self.iter_predict(eval_data, num_batch, reset, sparse_row_id_fn)]
        if not collected:
            return []
        if not merge_batches:
            return collected
        n = len(collected[0])
        if any(len(c) != n for c in collected):
            raise MXAsyncError("predict: batches have different numbers of outputs; pass merge_batches=False")
        merged = [concat(*[c[i] for c in collected], dim=0) if len(collected) > 1 else collected[0][i]
                  for i in range(n)]
        return merged[0] if n == 1 and not always_output_list else merged

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None, batch_end_callback=None,
            kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=DEFAULT_INIT, arg_params=None, aux_params=None,
            allow_missing: bool = False, force_rebind: bool = False, force_init: bool = False, begin_epoch: int = 0,
            num_epoch: int | None = None, validation_metric=None, monitor=None, sparse_row_id_fn=None) -> None:
        """Train for ``num_epoch - begin_epoch`` epochs: bind, initialize, then per batch forward,
        backward and update, with MXNet 1.9.1's signature and callbacks.

        Parameters
        ----------
        train_data : DataIter
            The training batches (``reset()`` after each epoch).
        eval_data : DataIter, optional
            Scored with ``validation_metric`` after each epoch.
        eval_metric : str or EvalMetric, default 'acc'
            Updated with each training batch; logged at each epoch's end.
        epoch_end_callback, batch_end_callback : callable or list, optional
            ``epoch_end_callback(epoch, symbol, arg_params, aux_params)`` (``mx.callback.do_checkpoint``)
            and ``batch_end_callback(BatchEndParam)`` (``Speedometer``, ``ProgressBar``).
        kvstore : str or KVStore, default 'local'
            How gradients of several contexts are summed and where the optimizer runs.
        optimizer : str or Optimizer, default 'sgd'
        optimizer_params : dict or tuple of pairs, default ``(('learning_rate', 0.01),)``
            Arguments of ``mx.optimizer.create(optimizer, ...)``.
        eval_end_callback, eval_batch_end_callback : callable or list, optional
            Called after scoring ``eval_data``, and per batch of it.
        initializer : Initializer, default ``Uniform(0.01)``
            For the parameters ``arg_params`` / ``aux_params`` do not give.
        arg_params, aux_params : dict of str to NDArray, optional
            Starting values (a checkpoint's); ``allow_missing`` lets the initializer fill the rest.
        force_rebind, force_init : bool, default False
            Bind again, initialize again, even if done already.
        begin_epoch : int, default 0
            The first epoch's index (a resumed run's; callbacks see it).
        num_epoch : int
            Train up to (not including) this epoch index.
        validation_metric : str or EvalMetric, optional
            For ``eval_data``; ``eval_metric`` when not given.
        monitor : Monitor, optional
            Installed on the executors (``mx.mon.Monitor``).
        sparse_row_id_fn : callable, optional
            Accepted for MXNet's signature (row-sparse pulls do not apply to the local stores).

        >>> import mxasync as mx
        >>> from mxasync.io.datasets import digits_iter
        >>> data = mx.sym.Variable("data")
        >>> net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=10), name="softmax")
        >>> mod = mx.mod.Module(net)
        >>> mod.fit(digits_iter(64, "train", flat=True), num_epoch=2, optimizer_params={"learning_rate": 0.1})
        >>> mod.score(digits_iter(64, "val", flat=True), "acc")[0][1] > 0.8
        True
        """
        eval_metric, validation_metric = self._fit_setup(
            train_data, eval_metric, kvstore, optimizer, optimizer_params, initializer, arg_params, aux_params,
            allow_missing, force_rebind, force_init, num_epoch, validation_metric, monitor)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            batches = iter(train_data)
            batch = next(batches, None)
            while batch is not None:
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(batch)
                self.update()
                self.update_metric(eval_metric, batch.label)
                batch = next(batches, None)  # fetch (and prepare) the next batch while this one computes
                if batch is not None:
                    self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
                if monitor is not None:
                    monitor.toc_print()
                for cb in as_list(batch_end_callback):
                    cb(BatchEndParam(epoch, nbatch, eval_metric, locals()))
                nbatch += 1
            self._fit_epoch_end(epoch, tic, eval_metric, epoch_end_callback)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric, score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    async def fit_async(self, train_data, eval_data=None, **kwargs) -> None:
        """``fit`` for async programs: blocking steps run in worker threads, the event loop stays free.

        Takes ``fit``'s keyword arguments; cancelling the awaiting task stops after the current step.
        """
        from .fit_async import fit_async

        await fit_async(self, train_data, eval_data, **kwargs)

    def _fit_setup(self, train_data, eval_metric, kvstore, optimizer, optimizer_params, initializer, arg_params,
                   aux_params, allow_missing, force_rebind, force_init, num_epoch, validation_metric, monitor):
        """Bind, initialise parameters and optimizer; returns ``(train metric, validation metric)``."""
        if num_epoch is None:
            raise MXAsyncError("fit: please specify num_epoch")
        _check_label_names(self, train_data)
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label, for_training=True,
                  force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        return as_metric(eval_metric), validation_metric

    def _fit_epoch_end(self, epoch: int, tic: float, eval_metric, epoch_end_callback) -> None:
        for name, val in _name_values(eval_metric):
            self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
        self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
        # sync the contexts' copies (and the CPU copy that checkpoints read)
        arg_params, aux_params = self.get_params()
        self.set_params(arg_params, aux_params)
        for cb in as_list(epoch_end_callback):
            cb(epoch, self.symbol, arg_params, aux_params)

    # -- symbol and shapes ----------------------------------------------------------
    @property
    def symbol(self):
        return self._symbol

    @property
    def data_names(self) -> list[str]:
        raise NotImplementedError

    @property
    def output_names(self) -> list[str]:
        raise NotImplementedError

    @property
    def data_shapes(self):
        raise NotImplementedError

    @property
    def label_shapes(self):
        raise NotImplementedError

    @property
    def output_shapes(self):
        raise NotImplementedError

    # -- parameters -------------------------------------------------------------------
    def get_params(self) -> tuple[dict, dict]:
        raise NotImplementedError

    def init_params(self, initializer=None, arg_params=None, aux_params=None, allow_missing=False,
                    force_init=False, allow_extra=False) -> None:
        raise NotImplementedError

    def set_params(self, arg_params: dict, aux_params: dict, allow_missing: bool = False, force_init: bool = True,
                   allow_extra: bool = False) -> None:
        """Assign parameter values (``init_params`` with no initializer)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)

    def save_params(self, fname: str) -> None:
        """Save the parameters to ``fname`` with ``arg:``/``aux:`` keys (MXNet's .params layout)."""
        arg_params, aux_params = self.get_params()
        save_dict = {f"arg:{k}": v for k, v in arg_params.items()}
        save_dict.update({f"aux:{k}": v for k, v in aux_params.items()})
        nd_save(fname, save_dict)

    def load_params(self, fname: str) -> None:
        from ..model import _split_params

        arg_params, aux_params = _split_params(nd_load(fname), fname)
        self.set_params(arg_params, aux_params)

    # -- what a subclass implements ------------------------------------------------
    def prepare(self, data_batch, sparse_row_id_fn=None) -> None:
        """Get ready for ``data_batch`` (nothing to do for dense data)."""

    def install_monitor(self, mon) -> None:
        raise NotImplementedError

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False, force_rebind=False,
             shared_module=None, grad_req="write") -> None:
        raise NotImplementedError

    def init_optimizer(self, kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),),
                       force_init=False) -> None:
        raise NotImplementedError

    def forward(self, data_batch, is_train=None) -> None:
        raise NotImplementedError

    def backward(self, out_grads=None) -> None:
        raise NotImplementedError

    def update(self) -> None:
        raise NotImplementedError

    def update_metric(self, eval_metric, labels, pre_sliced=False) -> None:
        raise NotImplementedError

    def get_outputs(self, merge_multi_context=True) -> list:
        raise NotImplementedError

    def get_input_grads(self, merge_multi_context=True) -> list:
        raise NotImplementedError


def _check_label_names(module, data_iter) -> None:
    """fit: an iterator whose labels the module does not take would train on no label at all."""
    names = [d.name if hasattr(d, "name") else d[0] for d in (data_iter.provide_label or [])]
    wanted = list(getattr(module, "label_names", []) or [])
    if names and wanted and not set(names) & set(wanted):
        raise MXAsyncError(f"fit: the data iterator provides the label {', '.join(map(repr, names))} but the "
                           f"module's label input is {', '.join(map(repr, wanted))}; name the iterator's label "
                           f"{wanted[0]!r} (label_name=...) or create the module with label_names={names!r}")
