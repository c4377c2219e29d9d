"""``DataParallelExecutorGroup``: one executor per context, each fed a slice of every batch.

Slices follow the work load list (equal by default). Each executor holds its own copy
of the parameters; Module keeps them equal by pushing every gradient through a
KVStore (or updating each copy with the same summed gradient). Everything here only
pushes engine work: the executors of different contexts run side by side.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from ..base import MXAsyncError
from ..io.base import DataDesc
from ..ndarray import NDArray, concat
from ..ndarray import zeros as nd_zeros
from ..runtime.context import Context, cpu

__all__ = ["DataParallelExecutorGroup", "split_batch", "as_descs"]


def split_batch(batch_size: int, work_load_list: Sequence[float]) -> list[slice]:
    """Cut ``batch_size`` examples into one slice per worker, in proportion to the loads.

    >>> split_batch(10, [1, 1, 2])
    [slice(0, 2, None), slice(2, 5, None), slice(5, 10, None)]
    """
    loads = np.asarray(work_load_list, dtype=np.float64)
    if loads.ndim != 1 or (loads <= 0).any():
        raise MXAsyncError(f"work_load_list must be positive numbers, got {list(work_load_list)}")
    ends = np.round(np.cumsum(loads) / loads.sum() * batch_size).astype(int)
    starts = np.concatenate([[0], ends[:-1]])
    if (ends <= starts).any():
        raise MXAsyncError(f"a batch of {batch_size} cannot be split over {len(loads)} contexts with loads "
                           f"{list(work_load_list)}: some slices would be empty")
    return [slice(int(s), int(e)) for s, e in zip(starts, ends, strict=True)]


def as_descs(shapes) -> list[DataDesc]:
    """``DataDesc`` list from DataDescs or ``(name, shape)`` pairs (None -> [])."""
    return [s if isinstance(s, DataDesc) else DataDesc(*s) for s in (shapes or [])]


def _take(arr: NDArray, axis: int, sl: slice) -> NDArray:
    return arr[sl] if axis == 0 else arr[(slice(None),) * axis + (sl,)]


class DataParallelExecutorGroup:
    """The executors of a Module; ``param_arrays[i][k]`` is parameter ``i`` on context ``k``."""

    def __init__(self, symbol, contexts: Sequence[Context], workload: Sequence[float] | None, data_shapes,
                 label_shapes, param_names: Sequence[str], for_training: bool, inputs_need_grad: bool,
                 shared_group: DataParallelExecutorGroup | None = None, logger=logging,
                 fixed_param_names: Sequence[str] | None = None, grad_req="write",
                 state_names: Sequence[str] | None = None, group2ctxs=None):
        self.symbol = symbol
        self.contexts = list(contexts)
        self.group2ctxs = _group2ctxs_per_context(group2ctxs, len(self.contexts))
        self.workload = list(workload) if workload is not None else [1] * len(self.contexts)
        if len(self.workload) != len(self.contexts):
            raise MXAsyncError(f"work_load_list has {len(self.workload)} entries for {len(self.contexts)} contexts")
        self.param_names = list(param_names)
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        self.logger = logger
        self.execs: list = []
        self.data_shapes: list[DataDesc] = []
        self.label_shapes: list[DataDesc] = []
        self._grad_req_spec = grad_req
        # per context, the arrays of the arguments that are not parameters (inputs, labels, states), by name:
        # a group bound with ``shared_group`` shares its list and reuses the arrays of equal shape (MXNet's)
        self.shared_data_arrays: list[dict] = (shared_group.shared_data_arrays if shared_group is not None
                                               else [{} for _ in self.contexts])
        self.bind_exec(data_shapes, label_shapes, shared_group)

    # -- binding ------------------------------------------------------------------
    def _grad_reqs(self, data_names: list[str]) -> dict[str, str]:
        spec = self._grad_req_spec
        reqs = {}
        for name in self.arg_names:
            if not self.for_training:
                req = "null"
            elif name in self.param_names:
                req = "null" if name in self.fixed_param_names else (
                    spec.get(name, "null") if isinstance(spec, dict) else spec)
            elif name in data_names and self.inputs_need_grad:
                req = spec.get(name, "write") if isinstance(spec, dict) else spec
            else:
                req = "null"
            reqs[name] = req
        return reqs

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape: bool = False) -> None:
        """Bind (or, with ``reshape``, re-shape) one executor per context for these input shapes."""
        data_shapes, label_shapes = as_descs(data_shapes), as_descs(label_shapes)
        descs = data_shapes + label_shapes
        axes = [DataDesc.get_batch_axis(getattr(d, "layout", None)) for d in descs]
        batch_sizes = {d.shape[a] for d, a in zip(descs, axes, strict=True) if a >= 0}
        if len(batch_sizes) != 1:
            raise MXAsyncError(f"bind: the inputs disagree on the batch size: {descs}")
        self.batch_size = batch_sizes.pop()
        self.slices = split_batch(self.batch_size, self.workload)
        self.data_shapes, self.label_shapes = data_shapes, label_shapes
        self.data_names = [d.name for d in data_shapes]
        self.label_names = [d.name for d in label_shapes]
        self._axes = dict(zip([d.name for d in descs], axes, strict=True))
        reqs = self.grad_req = self._grad_reqs(self.data_names)  # MXNet's name: argument -> its grad_req
        type_dict = {d.name: np.dtype(getattr(d, "dtype", np.float32)) for d in descs}
        execs = []
        for k, ctx in enumerate(self.contexts):
            shapes = {}
            for d, a in zip(descs, axes, strict=True):
                shape = list(d.shape)
                if a >= 0:
                    shape[a] = self.slices[k].stop - self.slices[k].start
                shapes[d.name] = tuple(shape)
            if reshape:
                execs.append(self.execs[k].reshape(allow_up_sizing=True, **shapes))
            elif shared_group is not None:
                execs.append(self._bind_shared(k, shared_group, reqs, shapes))
            else:
                execs.append(self.symbol.simple_bind(ctx, grad_req=reqs, type_dict=type_dict,
                                                     group2ctx=self.group2ctxs[k], **shapes))
        self.execs = execs
        if not reshape:
            for k, e in enumerate(execs):
                for name, arr in zip(self.arg_names, e.arg_arrays, strict=True):
                    if name not in self.param_names:
                        self.shared_data_arrays[k].setdefault(name, arr)
        self._collect_arrays()

    def _bind_shared(self, k: int, shared: DataParallelExecutorGroup, reqs: dict, shapes: dict):
        """An executor that uses ``shared``'s parameter, gradient and aux arrays (``bind(shared_module=)``)."""
        theirs = shared.execs[k]
        ctx = self.contexts[k]
        arg_shapes, _, _ = self.symbol.infer_shape(**shapes)
        args, grads = [], []
        for name, shape in zip(self.arg_names, arg_shapes, strict=True):
            if name in self.param_names:
                args.append(theirs.arg_dict[name])
                grads.append(theirs.grad_dict.get(name))
            else:
                buf = self.shared_data_arrays[k].get(name)
                same = buf is not None and buf.shape == tuple(shape) and buf.context == ctx
                args.append(buf if same else nd_zeros(shape, ctx))
                grads.append(nd_zeros(shape, ctx) if reqs[name] != "null" else None)
        return self.symbol.bind(ctx, args, args_grad=grads, grad_req=[reqs[n] for n in self.arg_names],
                                aux_states=list(theirs.aux_arrays))

    def _collect_arrays(self) -> None:
        idx = {n: i for i, n in enumerate(self.arg_names)}
        self.param_arrays = [[e.arg_arrays[idx[n]] for e in self.execs] for n in self.param_names]
        self.grad_arrays = ([[e.grad_arrays[idx[n]] for e in self.execs] for n in self.param_names]
                            if self.for_training else [])
        self.aux_arrays = [[e.aux_arrays[i] for e in self.execs] for i in range(len(self.aux_names))]
        self.input_grad_arrays = ([[e.grad_arrays[idx[n]] for e in self.execs] for n in self.data_names]
                                  if self.inputs_need_grad else [])
        # per input name, each executor's array (looked up once: arg_dict rebuilds a dict per call)
        self._inputs = {n: [e.arg_arrays[idx[n]] for e in self.execs] for n in self.data_names + self.label_names}
        self._output_names = self.symbol.list_outputs()

    def reshape(self, data_shapes, label_shapes) -> None:
        """Re-bind for new input shapes, keeping parameters and memory."""
        if as_descs(data_shapes) == self.data_shapes and as_descs(label_shapes) == self.label_shapes:
            return
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    # -- parameters ----------------------------------------------------------------
    def set_params(self, arg_params: dict, aux_params: dict, allow_extra: bool = False) -> None:
        for e in self.execs:
            e.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params: dict, aux_params: dict) -> None:
        """Copy the parameters (averaged over contexts) into the CPU arrays of the two dicts."""
        for names, blocks, target in ((self.param_names, self.param_arrays, arg_params),
                                      (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks, strict=True):
                if len(block) == 1:
                    block[0].astype(target[name].dtype).copyto(target[name])
                    continue
                total = nd_zeros(block[0].shape, cpu(), np.float32)
                for w in block:
                    total += w.as_in_context(cpu()).astype(np.float32)
                (total / len(block)).astype(target[name].dtype).copyto(target[name])

    # -- running ----------------------------------------------------------------
    def _load(self, names: list[str], arrays: Sequence[NDArray]) -> None:
        if len(arrays) != len(names):
            raise MXAsyncError(f"forward: the batch has {len(arrays)} arrays for inputs {names}")
        for name, src in zip(names, arrays, strict=True):
            axis = self._axes[name]
            for k, dst in enumerate(self._inputs[name]):
                part = src if len(self.execs) == 1 or axis < 0 else _take(src, axis, self.slices[k])
                if part.shape != dst.shape:
                    raise MXAsyncError(f"forward: input {name!r} has shape {part.shape} on {self.contexts[k]}, "
                                       f"the executor was bound for {dst.shape}")
                part.copyto(dst)

    def forward(self, data_batch, is_train: bool | None = None) -> None:
        """Copy the batch's slices into the executors and run their forward passes."""
        self._load(self.data_names, data_batch.data)
        if is_train is None:
            is_train = self.for_training
        label = getattr(data_batch, "label", None)
        if self.label_names and label:
            self._load(self.label_names, label)
        for e in self.execs:
            e.forward(is_train=is_train)

    def backward(self, out_grads: Sequence[NDArray] | None = None) -> None:
        if not self.for_training:
            raise MXAsyncError("backward: the module was bound with for_training=False")
        for k, e in enumerate(self.execs):
            grads = None
            if out_grads is not None:
                grads = [g if len(self.execs) == 1 else _take(g, 0, self.slices[k]).copyto(self.contexts[k])
                         for g in out_grads]
            e.backward(out_grads=grads)

    def get_outputs(self, merge_multi_context: bool = True, begin: int = 0, end: int | None = None) -> list:
        n = len(self.execs[0].outputs)
        end = n if end is None else end
        outputs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        return _merge(outputs, self._output_axes()[begin:end]) if merge_multi_context else outputs

    def _output_axes(self) -> list[int]:
        """Each output's batch axis, from its node's ``__layout__`` attribute (MXNet's rule; 0 without one)."""
        axes = getattr(self, "_out_axes", None)
        if axes is None:
            internals = self.symbol.get_internals()
            axes = self._out_axes = [max(DataDesc.get_batch_axis(internals[n].attr("__layout__")), 0)
                                     for n in self.symbol.list_outputs()]
        return axes

    def get_states(self, merge_multi_context: bool = True) -> list:
        """The state inputs (``state_names``), per state: merged, or one array per executor."""
        states = [[e.arg_dict[n] for e in self.execs] for n in self.state_names]
        return _merge(states) if merge_multi_context else states

    def set_states(self, states=None, value=None) -> None:
        """Set the state inputs from ``states`` (per state, one array per executor) or to a scalar ``value``."""
        if (states is None) == (value is None):
            raise MXAsyncError("set_states: give exactly one of states and value")
        if value is not None:
            for n in self.state_names:
                for e in self.execs:
                    e.arg_dict[n][:] = value
            return
        if len(states) != len(self.state_names):
            raise MXAsyncError(f"set_states: {len(states)} states for state_names {self.state_names}")
        for n, parts in zip(self.state_names, states, strict=True):
            parts = parts if isinstance(parts, (list, tuple)) else [parts]
            for e, src in zip(self.execs, parts, strict=True):
                src.copyto(e.arg_dict[n])

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        if not self.inputs_need_grad:
            raise MXAsyncError("get_input_grads: bind with inputs_need_grad=True")
        return _merge(self.input_grad_arrays) if merge_multi_context else self.input_grad_arrays

    def update_metric(self, eval_metric, labels: Sequence[NDArray], pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` with each executor's outputs against its slice of ``labels``."""
        for k, e in enumerate(self.execs):
            if pre_sliced:
                part = labels[k]
            elif len(self.execs) == 1:
                part = labels
            else:
                part = [_take(lab, 0, self.slices[k]) for lab in labels]
            if hasattr(eval_metric, "update_dict"):
                eval_metric.update_dict(OrderedDict(zip(self.label_names, part, strict=False)),
                                        OrderedDict(zip(self._output_names, e.outputs, strict=True)))
            else:
                eval_metric.update(list(part), list(e.outputs))

    def install_monitor(self, mon) -> None:
        for e in self.execs:
            mon.install(e)


def _merge(per_output: list[list[NDArray]], axes: list[int] | None = None) -> list[NDArray]:
    """One array per output: the executors' parts concatenated on the batch axis (copied to the first)."""
    merged = []
    for k, parts in enumerate(per_output):
        if len(parts) == 1:
            merged.append(parts[0])
        else:
            ctx = parts[0].context
            merged.append(concat(*[p.as_in_context(ctx) for p in parts], dim=axes[k] if axes else 0))
    return merged


def _group2ctxs_per_context(group2ctxs, count: int) -> list:
    """MXNet's forms: one dict for every context (a list value gives one context per device), or a list of
    dicts, one per context."""
    if group2ctxs is None:
        return [None] * count
    if isinstance(group2ctxs, (list, tuple)):
        if len(group2ctxs) != count:
            raise MXAsyncError(f"group2ctxs has {len(group2ctxs)} entries for {count} contexts")
        return list(group2ctxs)
    out = []
    for k in range(count):
        mapping = {}
        for group, value in group2ctxs.items():
            if isinstance(value, (list, tuple)):
                value = list(value) * count if len(value) == 1 else value  # one context serves every device
                if len(value) != count:
                    raise MXAsyncError(f"group2ctxs[{group!r}] lists {len(value)} contexts for {count} devices")
                value = value[k]
            mapping[group] = value
        out.append(mapping)
    return out
