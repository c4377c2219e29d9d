"""``Module``: a symbol bound to one or more contexts, with parameters, an optimizer and a KVStore.

>>> import numpy as np, mxasync as mx
>>> from mxasync.module import Module
>>> net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc"),
...                            name="softmax")
>>> mod = Module(net, context=mx.cpu())
>>> mod.bind(data_shapes=[("data", (4, 3))], label_shapes=[("softmax_label", (4,))])
>>> mod.set_params({"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))}, {})
>>> mod.forward(mx.io.DataBatch([mx.nd.ones((4, 3))], [mx.nd.zeros((4,))]), is_train=False)
>>> mod.get_outputs()[0].asnumpy()[0].tolist(), mod.output_shapes
([0.5, 0.5], [('softmax_output', (4, 2))])
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence

from ..atomic import write_file
from ..base import MXAsyncError, MXAsyncKeyError
from ..io.base import DataDesc
from ..kvstore.training import create_kvstore
from ..model import load_checkpoint
from ..model import write_checkpoint as _save_checkpoint
from ..ndarray import zeros
from ..runtime.context import Context, cpu
from .base_module import DEFAULT_INIT, BaseModule, resolve_initializer
from .executor_group import DataParallelExecutorGroup, as_descs
from .param_update import initialize_kvstore, update_params, update_params_on_kvstore

__all__ = ["Module"]


def _init_desc(name: str, attrs: dict | None):
    from ..initializer import InitDesc

    return InitDesc(name, attrs)


def _check_names(symbol, names: Sequence[str], kind: str) -> None:
    args = symbol.list_arguments()
    for name in names:
        if name not in args:
            candidates = [a for a in args if not a.endswith(("_weight", "_bias", "_gamma", "_beta"))]
            raise MXAsyncError(f"Module: {kind} name {name!r} is not an argument of the symbol; "
                               f"inputs it may mean: {candidates}")


def _rebatched(desc: DataDesc, batch: int) -> DataDesc:
    axis = DataDesc.get_batch_axis(desc.layout)
    shape = list(desc.shape)
    if axis >= 0 and len(shape) > axis:
        shape[axis] = batch
    return DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout)


class Module(BaseModule):
    """MXNet's Module; ``context`` may be a list of contexts for data parallelism."""

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",), logger=logging,
                 context: Context | Sequence[Context] | None = None, work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        context = cpu() if context is None else context
        self._context = [context] if isinstance(context, Context) else list(context)
        self._work_load_list = list(work_load_list) if work_load_list is not None else [1] * len(self._context)
        if len(self._work_load_list) != len(self._context):
            raise MXAsyncError(f"Module: work_load_list has {len(self._work_load_list)} entries for "
                               f"{len(self._context)} contexts")
        self._symbol = symbol
        self._group2ctxs = group2ctxs
        self._data_names = list(data_names or [])
        self._label_names = [n for n in (label_names or []) if n in symbol.list_arguments()]
        self._state_names = list(state_names or [])
        self._fixed_param_names = list(fixed_param_names or [])
        _check_names(symbol, self._data_names, "data")
        _check_names(symbol, self._state_names, "state")
        _check_names(symbol, self._fixed_param_names, "fixed_param")
        inputs = set(self._data_names + self._label_names + self._state_names)
        self._param_names = [n for n in symbol.list_arguments() if n not in inputs]
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._arg_params: dict | None = None
        self._aux_params: dict | None = None
        self._params_dirty = False
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = False
        self._updater = None
        self._preload_opt_states: str | None = None
        self._exec_group: DataParallelExecutorGroup | None = None
        self._data_shapes: list[DataDesc] = []
        self._label_shapes: list[DataDesc] = []

    # -- checkpoints ---------------------------------------------------------------
    @staticmethod
    def load(prefix: str, epoch: int, load_optimizer_states: bool = False, **kwargs) -> Module:
        """A Module from ``prefix-symbol.json`` and ``prefix-%04d.params`` (``kwargs`` go to ``Module``)."""
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params, mod._aux_params = args, auxs
        mod._loaded_from = f"{prefix}-{int(epoch):04d}.params"
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = f"{prefix}-{int(epoch):04d}.states"
        return mod

    def save_checkpoint(self, prefix: str, epoch: int, save_optimizer_states: bool = False,
                        remove_amp_cast: bool = True) -> None:
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` (and ``.states``) in MXNet's layout."""
        arg_params, aux_params = self.get_params()
        _save_checkpoint(prefix, epoch, self._symbol, arg_params, aux_params, remove_amp_cast)
        if save_optimizer_states:
            self.save_optimizer_states(f"{prefix}-{int(epoch):04d}.states")
        self.logger.info('Saved checkpoint to "%s-%04d.params"', prefix, epoch)

    # -- names and shapes -------------------------------------------------------------
    @property
    def data_names(self) -> list[str]:
        return self._data_names

    @property
    def label_names(self) -> list[str]:
        return self._label_names

    @property
    def output_names(self) -> list[str]:
        return self._output_names

    @property
    def data_shapes(self) -> list[DataDesc]:
        self._need("data_shapes", bound=True)
        return self._data_shapes

    @property
    def label_shapes(self) -> list[DataDesc]:
        self._need("label_shapes", bound=True)
        return self._label_shapes

    @property
    def output_shapes(self) -> list[tuple[str, tuple]]:
        self._need("output_shapes", bound=True)
        shapes = {d.name: d.shape for d in self._data_shapes + self._label_shapes}
        _, out_shapes, _ = self._symbol.infer_shape(**shapes)
        return list(zip(self._output_names, [tuple(s) for s in out_shapes], strict=True))

    def _need(self, what: str, bound: bool = False, params: bool = False, optimizer: bool = False) -> None:
        if bound and not self.binded:
            raise MXAsyncError(f"Module.{what}: call bind() first")
        if params and not self.params_initialized:
            raise MXAsyncError(f"Module.{what}: call init_params() (or set_params) first")
        if optimizer and not self.optimizer_initialized:
            raise MXAsyncError(f"Module.{what}: call init_optimizer() first")

    # -- parameters -------------------------------------------------------------------
    def get_params(self) -> tuple[dict, dict]:
        """``(arg_params, aux_params)``: CPU copies, synced from the contexts when an update made them stale."""
        self._need("get_params", bound=True, params=True)
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer=DEFAULT_INIT, arg_params=None, aux_params=None, allow_missing=False,
                    force_init=False, allow_extra=False) -> None:
        """Fill parameters from ``arg_params``/``aux_params``, the rest with ``initializer`` (sorted by name)."""
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. init_params call ignored.",
                          stacklevel=2)
            return
        self._need("init_params", bound=True)
        group = self._exec_group
        for names, blocks, params in ((group.param_names, group.param_arrays, self._arg_params),
                                      (group.aux_names, group.aux_arrays, self._aux_params)):
            for name, block in zip(names, blocks, strict=True):
                if name not in params:  # e.g. absent from the checkpoint Module.load read: give it a home
                    params[name] = zeros(block[0].shape, cpu(), block[0].dtype, stype=block[0].stype)
        initializer = resolve_initializer(initializer)
        attrs = self._symbol.attr_dict()

        def fill(name, arr, given):
            if given is not None and name in given:
                src = given[name]
                if src is not arr:
                    src.astype(arr.dtype).copyto(arr) if src.dtype != arr.dtype else src.copyto(arr)
                return
            if given is not None and not allow_missing:
                raise MXAsyncError(f"init_params: {name!r} is not in the given parameters (pass allow_missing=True "
                                   "to initialise it instead)")
            if initializer is not None:
                initializer(_init_desc(name, attrs.get(name)), arr)

        for name, arr in sorted(self._arg_params.items()):
            fill(name, arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            fill(name, arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True, allow_extra=False) -> None:
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. set_params call ignored.",
                          stacklevel=2)
            return
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def _sync_params_from_devices(self) -> None:
        group = self._exec_group
        missing = [n for n in group.param_names if n not in self._arg_params]
        missing += [n for n in group.aux_names if n not in self._aux_params]
        if missing:
            source = getattr(self, "_loaded_from", None)
            where = f" loaded by Module.load from {source}" if source else ""
            raise MXAsyncKeyError(
                f"Module: parameter(s) {', '.join(map(repr, missing))} of the symbol have no value in the "
                f"parameters{where}; pass them to set_params or call init_params(force_init=True, allow_missing=True)")
        group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    # -- binding ----------------------------------------------------------------------
    def _parse_shapes(self, data_shapes, label_shapes) -> tuple[list[DataDesc], list[DataDesc]]:
        data = {d.name: d for d in as_descs(data_shapes)}
        if sorted(data) != sorted(self._data_names):
            raise MXAsyncError(f"Module.bind: data shapes name {sorted(data)} but the module's data names are "
                               f"{self._data_names}")
        labels = {d.name: d for d in as_descs(label_shapes)}
        unknown = set(labels) - set(self._label_names)
        missing = [n for n in self._label_names if n not in labels]
        if unknown and missing:
            # MXNet warns here too; its forward then fails with a bare KeyError (fit raises, see _check_labels)
            warnings.warn(f"Module.bind: label shapes name {sorted(unknown)} but the module's label names are "
                          f"{self._label_names}", stacklevel=3)
        elif unknown:
            self.logger.debug("Module: ignoring label inputs %s the symbol does not take", sorted(unknown))
        return ([data[n] for n in self._data_names], [labels[n] for n in self._label_names if n in labels])

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False, force_rebind=False,
             shared_module=None, grad_req="write") -> None:
        """Bind one executor per context for these input shapes (DataDescs or ``(name, shape)`` pairs)."""
        if force_rebind:
            self._exec_group, self.binded = None, False
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise MXAsyncError("Module.bind: inputs_need_grad=True needs for_training=True")
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._grad_req = grad_req  # MXNet keeps it; BucketingModule binds its other buckets with it
        self._data_shapes, self._label_shapes = self._parse_shapes(data_shapes, label_shapes)
        shared_group = None
        if shared_module is not None:
            if not (shared_module.binded and shared_module.params_initialized):
                raise MXAsyncError("Module.bind: shared_module must be bound with initialised parameters")
            shared_group = shared_module._exec_group
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes, self._label_shapes,
            self._param_names, for_training, inputs_need_grad, shared_group, logger=self.logger,
            fixed_param_names=self._fixed_param_names, grad_req=grad_req, state_names=self._state_names,
            group2ctxs=self._group2ctxs)
        self.binded = True
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params, self._aux_params = shared_module._arg_params, shared_module._aux_params
        elif self.params_initialized:
            self._exec_group.set_params(self._arg_params, self._aux_params)  # rebinding keeps the values
        else:
            group = self._exec_group
            self._arg_params = {n: zeros(b[0].shape, cpu(), b[0].dtype, stype=b[0].stype)  # MXNet keeps the stype
                                for n, b in zip(self._param_names, group.param_arrays, strict=True)}
            self._aux_params = {n: zeros(b[0].shape, cpu(), b[0].dtype)
                                for n, b in zip(self._aux_names, group.aux_arrays, strict=True)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)

    def reshape(self, data_shapes, label_shapes=None) -> None:
        """New input shapes (e.g. a smaller last batch); parameters are kept."""
        self._need("reshape", bound=True)
        self._data_shapes, self._label_shapes = self._parse_shapes(data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # -- optimizer ------------------------------------------------------------------
    def init_optimizer(self, kvstore="local", optimizer="sgd", optimizer_params=(("learning_rate", 0.01),),
                       force_init=False) -> None:
        """Create the optimizer (rescale_grad = 1/batch size unless given) and the KVStore."""
        from .. import optimizer as opt

        self._need("init_optimizer", bound=True, params=True)
        if self.optimizer_initialized and not force_init:
            warnings.warn("optimizer already initialized, ignoring...", stacklevel=2)
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kv, update_on_kvstore = create_kvstore(kvstore, len(self._context), self._arg_params)
        group = self._exec_group
        batch_size = group.batch_size
        if kv is not None and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        n = len(self._context)
        if update_on_kvstore:
            idx2name = dict(enumerate(group.param_names))
        else:
            idx2name = {i * n + k: name for i, name in enumerate(group.param_names) for k in range(n)}
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault("rescale_grad", 1.0 / batch_size)
            optimizer = opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name, **params)
        else:
            if getattr(optimizer, "rescale_grad", None) != 1.0 / batch_size:
                self.logger.warning("Optimizer created manually outside Module but rescale_grad is not "
                                    "normalized to 1.0/batch_size/num_workers (%s vs. %s). Is this intended?",
                                    getattr(optimizer, "rescale_grad", None), 1.0 / batch_size)
            if not getattr(optimizer, "idx2name", None):
                optimizer.idx2name = idx2name.copy()
        self._optimizer, self._kvstore, self._update_on_kvstore = optimizer, kv, update_on_kvstore
        self._updater = None
        if kv is not None:
            if update_on_kvstore:
                kv.set_optimizer(optimizer)
            initialize_kvstore(kv, group.param_arrays, self._arg_params, group.param_names, update_on_kvstore)
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module: Module) -> None:
        """Use ``shared_module``'s optimizer, store and updater."""
        if not shared_module.optimizer_initialized:
            raise MXAsyncError("Module.borrow_optimizer: the shared module has no optimizer yet")
        self._optimizer, self._kvstore = shared_module._optimizer, shared_module._kvstore
        self._update_on_kvstore, self._updater = shared_module._update_on_kvstore, shared_module._updater
        self.optimizer_initialized = True

    def save_optimizer_states(self, fname: str) -> None:
        self._need("save_optimizer_states", optimizer=True)
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            write_file(fname, self._updater.get_states())

    def load_optimizer_states(self, fname: str) -> None:
        self._need("load_optimizer_states", optimizer=True)
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            with open(fname, "rb") as f:
                self._updater.set_states(f.read(), fname)

    # -- computation ----------------------------------------------------------------
    def forward(self, data_batch, is_train=None) -> None:
        """Run the batch; a batch of another shape re-shapes the executors first (MXNet's rule)."""
        self._need("forward", bound=True, params=True)
        new_shapes = [tuple(a.shape) for a in data_batch.data]
        if new_shapes != [d.shape for d in self._data_shapes]:
            data = getattr(data_batch, "provide_data", None) or [
                DataDesc(d.name, s, d.dtype, d.layout) for d, s in zip(self._data_shapes, new_shapes, strict=True)]
            labels = getattr(data_batch, "provide_label", None)
            batch_labels = getattr(data_batch, "label", None)  # a namedtuple('Batch', ['data']) has none
            if not labels and batch_labels:
                labels = [DataDesc(d.name, tuple(a.shape), d.dtype, d.layout)
                          for d, a in zip(self._label_shapes, batch_labels, strict=False)]
            if not labels:  # no labels in this batch (predict): keep them, at the new batch size
                labels = [_rebatched(d, data[0].shape[DataDesc.get_batch_axis(data[0].layout)])
                          for d in self._label_shapes]
            self.reshape(data, labels)
        self._exec_group.forward(data_batch, is_train)

    def backward(self, out_grads=None) -> None:
        self._need("backward", bound=True, params=True)
        self._exec_group.backward(out_grads=out_grads)

    def update(self) -> None:
        """Apply the optimizer to every parameter with the gradients of the last backward pass."""
        self._need("update", bound=True, params=True, optimizer=True)
        self._params_dirty = True
        group = self._exec_group
        if self._update_on_kvstore:
            update_params_on_kvstore(group.param_arrays, group.grad_arrays, self._kvstore, group.param_names)
        else:
            update_params(group.param_arrays, group.grad_arrays, self._updater, len(self._context),
                          self._kvstore, group.param_names)

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        self._need("get_outputs", bound=True, params=True)
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        self._need("get_input_grads", bound=True, params=True)
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced: bool = False) -> None:
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def get_states(self, merge_multi_context=True) -> list:
        """The current values of the state inputs (``state_names``), as MXNet's Module."""
        self._need("get_states", bound=True, params=True)
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None) -> None:
        """Set the state inputs: ``states`` (per state, one array per context) or a scalar ``value``."""
        self._need("set_states", bound=True, params=True)
        self._exec_group.set_states(states, value)

    def install_monitor(self, mon) -> None:
        self._need("install_monitor", bound=True)
        self._exec_group.install_monitor(mon)
