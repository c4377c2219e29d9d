"""``Trainer``: applies an optimizer to a set of Parameters (MXNet 1.9's Gluon Trainer).

``step(batch_size)`` = ``allreduce_grads()`` (sum the gradients of the
contexts in the KVStore) + ``update()`` (run the optimizer with
``rescale_grad = 1/batch_size``).  One context and no 'dist' store means no
KVStore at all; several contexts sum gradients in the store and, with
``update_on_kvstore`` (decided as MXNet does), run the optimizer once in the
store.  Updates go to the optimizer as lists per context, so SGD uses the
fused ``multi_sgd_[mom_]update`` ops.

>>> import mxasync as mx
>>> p = mx.gluon.Parameter('w', shape=(2,)); p.initialize(mx.init.One())
>>> trainer = mx.gluon.Trainer([p], 'sgd', {'learning_rate': 0.5})
>>> with mx.autograd.record():
...     y = (p.data() * 3).sum()
>>> y.backward(); trainer.step(1)
>>> p.data().asnumpy().tolist()      # 1 - 0.5 * 3
[-0.5, -0.5]
"""

from __future__ import annotations

from .. import optimizer as opt
from ..atomic import write_file
from ..kvstore import KVStoreBase
from ..kvstore import create as kv_create
from ..kvstore.training import create_kvstore
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer"]


class Trainer:
    """Updates ``params`` with ``optimizer`` (a name and ``optimizer_params``, or an Optimizer)."""

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device", compression_params=None,
                 update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[k] for k in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise ValueError(f"First argument must be a list or dict of Parameters, got {type(params)}.")
        self._params = []
        self._contains_sparse_weight = False
        self._contains_sparse_grad = False
        self._param2idx = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError(f"First argument must be a list or dict of Parameters, got list of {type(param)}.")
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
            if param._stype != "default":
                self._contains_sparse_weight = True
            if param._grad_stype != "default":
                self._contains_sparse_grad = True
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params or {})
        self._scale = self._optimizer.rescale_grad
        #: set by mx.contrib.amp.init_trainer: a LossScaler whose has_overflow(params) skips a step
        self._amp_loss_scaler = None
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = []
        self._reset_kvstore()

    def _check_contexts(self) -> list:
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise AssertionError(f"All Parameters must be initialized on the same set of contexts, but Parameter "
                                     f"{param.name} is initialized on {ctx} while previous Parameters are "
                                     f"initialized on {contexts}.")
            contexts = ctx
        return contexts or []

    def _init_optimizer(self, optimizer, optimizer_params: dict) -> None:
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise AssertionError("optimizer_params must be None if optimizer is an instance of Optimizer "
                                     "instead of str")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    # -- the KVStore -------------------------------------------------------------------------------
    def _init_params(self) -> None:
        """Put the parameters into the store (those still awaiting deferred init wait for a later step)."""
        if not self._kv_initialized:
            raise AssertionError("Cannot initialize parameters in KVStore when KVStore is not initialized.")
        pending = []
        if self._kvstore:
            for param in self._params_to_init:
                if param._deferred_init:
                    pending.append(param)
                    continue
                arrays = param._check_and_get(param._data, list)
                idx = self._param2idx[param.name]
                if param._stype != "default":
                    self._kvstore.init(idx, arrays[0])
                else:
                    self._kvstore.broadcast(idx, arrays[0], arrays)
        self._params_to_init = pending

    def _reset_kvstore(self) -> None:
        if self._kvstore and "dist" in self._kvstore.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_kvstore(self) -> None:
        config = self._kvstore_params
        arg_arrays = {p.name: p._check_and_get(p._data, list)[0] for p in self._params if p._data is not None}
        if self._contains_sparse_weight:
            # MXNet keeps sparse weights on the store ('local' at least) and updates them there
            kv = config["kvstore"]
            kvstore = kv if isinstance(kv, KVStoreBase) else kv_create(kv if isinstance(kv, str) else "local")
            update_on_kvstore = True
            self._distributed = "dist" in kvstore.type
            if config["update_on_kvstore"] is False:
                raise ValueError("Cannot set update_on_kvstore=False when sparse weights are present.")
        elif self._contains_sparse_grad:
            kvstore, _ = create_kvstore(config["kvstore"], len(self._contexts), arg_arrays)
            self._distributed = "dist" in kvstore.type if kvstore else False
            update_on_kvstore = self._distributed
            if config["update_on_kvstore"] is not None:
                if config["update_on_kvstore"] is False and self._distributed:
                    raise ValueError("Cannot set update_on_kvstore=False on dist kvstore when sparse gradients "
                                     "are present.")
                update_on_kvstore = config["update_on_kvstore"]
        else:
            kvstore, update_on_kvstore = create_kvstore(config["kvstore"], len(self._contexts), arg_arrays)
            self._distributed = "dist" in kvstore.type if kvstore else False
            if self._distributed and "async" in kvstore.type:
                update_on_kvstore = True
                if config["update_on_kvstore"] is False:
                    raise ValueError("Please set update_on_kvstore=True when training in async mode.")
            if config["update_on_kvstore"] is not None:
                update_on_kvstore = config["update_on_kvstore"]
            if update_on_kvstore and not kvstore.is_capable("optimizer"):
                if config["update_on_kvstore"]:
                    raise ValueError(f"Please set update_on_kvstore=False when training with {type(kvstore)}")
                update_on_kvstore = False
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore = kvstore
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    def _ready(self) -> None:
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    def _row_sparse_pull(self, parameter, out, row_id, full_idx: bool = False) -> None:
        """Pull the rows ``row_id`` of a row_sparse parameter from the kvstore into ``out`` (one array or
        one per context); every row with ``full_idx``."""
        self._ready()
        if not self._kvstore:
            return
        idx = self._param2idx[parameter.name]
        if full_idx and not isinstance(out, list):
            from ..ndarray import arange

            row_id = arange(0, parameter.shape[0], dtype="int64", ctx=row_id.context)
        self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    # -- learning rate ------------------------------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        return self._optimizer.learning_rate

    @property
    def optimizer(self) -> opt.Optimizer:
        return self._optimizer

    def set_learning_rate(self, lr: float) -> None:
        """Set the optimizer's learning rate (not allowed with an lr_scheduler, as in MXNet)."""
        self._optimizer.set_learning_rate(lr)

    # -- steps -----------------------------------------------------------------------------------------
    def _check_and_rescale_grad(self, scale: float) -> None:
        if self._update_on_kvstore and self._distributed and self._kv_initialized \
                and self._optimizer.rescale_grad != scale:
            raise UserWarning("Possible change in the `batch_size` from previous `step` detected. Optimizer "
                              "gradient normalizing factor will not change w.r.t new batch_size when "
                              "update_on_kvstore=True and when distributed kvstore is used.")
        self._optimizer.rescale_grad = scale

    def step(self, batch_size, ignore_stale_grad: bool = False) -> None:
        """One update: gradients summed over contexts, then scaled by ``1/batch_size`` and applied."""
        self._check_and_rescale_grad(self._scale / batch_size)
        self._ready()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self) -> None:
        """Sum each parameter's gradients over the contexts (before a manual :meth:`update`)."""
        self._ready()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError("allreduce_grads() when parameters are updated on kvstore is not supported. Try "
                                 "setting `update_on_kvstore` to False when creating trainer.")
        self._allreduce_grads()

    def _allreduce_grads(self) -> None:
        if not self._kvstore:
            return
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            grads = param.list_grad()
            if grads[0].stype != "default":  # sparse gradients: push, then pull them explicitly (MXNet's way)
                self._kvstore.push(i, grads, priority=-i)
                if param._stype == "default":
                    target = param._check_and_get(param._data, list) if self._update_on_kvstore else grads
                    self._kvstore.pull(i, target, priority=-i, ignore_sparse=bool(self._distributed))
                continue
            if self._update_on_kvstore:
                self._kvstore.pushpull(i, grads, out=param._check_and_get(param._data, list), priority=-i)
            else:
                self._kvstore.pushpull(i, grads, priority=-i)

    def update(self, batch_size, ignore_stale_grad: bool = False) -> None:
        """Apply the optimizer (after :meth:`allreduce_grads`)."""
        self._ready()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError("update() when parameters are updated on kvstore is not supported. Try setting "
                                 "`update_on_kvstore` to False when creating trainer.")
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad: bool = False) -> None:
        if self._amp_loss_scaler is not None and self._amp_loss_scaler.has_overflow(self._params):
            return  # AMP: gradients with inf/NaN, the step is skipped (the scaler halved the loss scale)
        updates = [[] for _ in self._updaters]
        on_kv = bool(self._kvstore and self._update_on_kvstore)
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            data = param._check_and_get(param._data, list)
            if not ignore_stale_grad:
                for arr in data:
                    if not arr._fresh_grad:
                        raise UserWarning(
                            f"Gradient of Parameter `{param.name}` on context {arr.context} has not been updated by "
                            "backward since last `step`. This could mean a bug in your model that made it only use "
                            "a subset of the Parameters (Blocks) for this iteration. If you are intentionally only "
                            "using a subset, call step with ignore_stale_grad=True to suppress this warning and "
                            "skip updating of Parameters with stale gradient")
            if on_kv:
                for arr in data:
                    _set_fresh(arr, False)
                continue
            for upd, arr, grad in zip(updates, data, param.list_grad(), strict=True):
                if not ignore_stale_grad or arr._fresh_grad:
                    upd.append((i, grad, arr))
                    _set_fresh(arr, False)
        if on_kv:
            return
        for updater, upd in zip(self._updaters, updates, strict=True):
            if upd:
                idx, grads, weights = zip(*upd, strict=True)
                updater(list(idx), list(grads), list(weights))

    # -- states ------------------------------------------------------------------------------------------
    def save_states(self, fname: str) -> None:
        """Save the optimizer's states (momenta, ...) and the optimizer itself."""
        self._ready()
        if self._update_on_kvstore:
            if self._params_to_init:
                raise AssertionError("Cannot save trainer states when some parameters are not yet initialized in "
                                     "kvstore.")
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
            return
        write_file(fname, self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname: str) -> None:
        """Load states written by :meth:`save_states` (the parameters' lr_mult/wd_mult stay current)."""
        self._ready()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            with open(fname, "rb") as f:
                states = f.read()
            for updater in self._updaters:
                updater.set_states(states, fname)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))


def _set_fresh(arr, value: bool) -> None:
    if arr.grad is not None:  # an autograd variable (its flag is NDArray._fresh_grad)
        arr._fresh_grad = value
