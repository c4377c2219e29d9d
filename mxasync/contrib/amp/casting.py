"""What ``amp.init()`` does to op calls: casts inserted before each imperative call and on each new graph
node's inputs, by the op lists (MXNet's ``_wrap_symbol_functions``).

MXNet replaces the generated functions of ``mx.nd`` / ``mx.sym``; here the one place every call
passes through holds the hook (``mxasync._seams.amp_casts``, read by ``ndarray/_invoke.py`` and
``symbol/register.py``), so ``mx.nd``, ``mx.sym``, ``mx.np`` / ``mx.npx``, the NDArray operators
(``a + b``) and hybridized Gluon blocks are all covered, and :func:`uninstall` undoes it entirely.

The rules, per op (canonical name):

* target-precision ops (``FullyConnected``, ``Convolution``...): every input becomes the target dtype
  (bfloat16 BatchNorm keeps its parameters in float32: ``BF16_USE_FP32_PARAMS``);
* float32 ops, and conditional ones whose param matches (``Activation(act_type='softrelu')``): every
  input becomes float32;
* widest-type ops (``elemwise_add``, ``concat``...): arrays in the target dtype become float32 when any
  input is float32; graph nodes get one ``amp_multicast`` over their inputs;
* loss outputs (``SoftmaxOutput``...): imperative calls get ``grad_scale`` times the loss scale.

Only float16, bfloat16 and float32 arrays are cast (``amp_cast``'s own rule), on every device: MXNet
casts float16 only on GPUs and bfloat16 only on CPUs, since those were the pairs it had kernels for.
"""

from __future__ import annotations

import logging

import numpy as np

from ... import _seams
from ...ndarray._invoke import invoke
from ...ndarray.ndarray import NDArray
from ...operator.tensor.amp_cast import AMP_TYPES
from ...symbol.register import create
from ...symbol.symbol import Symbol
from .lists import OpLists

__all__ = ["AmpCasts", "install", "uninstall", "installed"]

_F32 = np.dtype(np.float32)


def _cast_array(x, dtype: np.dtype):
    if isinstance(x, NDArray) and x.dtype != dtype and np.dtype(x.dtype) in AMP_TYPES:
        return invoke("amp_cast", [x], dtype=dtype.name)
    return x


class AmpCasts:
    """The hook object: ``ndarray_inputs`` before an imperative call, ``symbol_node`` on a new graph node."""

    def __init__(self, lists: OpLists, loss_scaler):
        self.lists = lists
        self.loss_scaler = loss_scaler

    def _cast_to(self, op: str, attrs: dict):
        """The dtype every input of ``op`` is cast to, or None (widest-type ops and the rest)."""
        lists = self.lists
        if op in lists.target:
            return lists.target_dtype
        if op in lists.fp32 or lists.is_conditional_fp32(op, attrs):
            return _F32
        return None

    def ndarray_inputs(self, opdef, inputs: list, params: dict):
        op, lists = opdef.name, self.lists
        dtype = self._cast_to(op, params)
        if dtype is not None:
            keep = lists.fp32_params.get(op, ()) if dtype == lists.target_dtype else ()
            # inputs the op writes (optimizer states) are never cast: the op must write the array itself
            written = set(opdef.prepare(**{k: v for k, v in params.items() if k != "ctx"}).mutate_inputs()) \
                if inputs else ()
            inputs = [x if (i < len(keep) and keep[i]) or i in written else _cast_array(x, dtype)
                      for i, x in enumerate(inputs)]
        elif op in lists.widest and any(isinstance(x, NDArray) and x.dtype == _F32 for x in inputs):
            inputs = [_cast_array(x, _F32) if isinstance(x, NDArray) and x.dtype == lists.target_dtype else x
                      for x in inputs]
        if op in lists.loss_outputs:
            params = {**params, "grad_scale": float(params.get("grad_scale", 1.0)) * self.loss_scaler.loss_scale}
        return inputs, params

    def symbol_node(self, node) -> None:
        op, lists = node.op.name, self.lists
        dtype = self._cast_to(op, node.attrs)
        if dtype is not None:
            written = set(node.mutable_positions())  # aux states (MXNet's rule) and inputs written in place
            keep = lists.fp32_params.get(op, ()) if dtype == lists.target_dtype else ()
            node.inputs = [e if i in written or (i < len(keep) and keep[i]) else
                           create("amp_cast", [Symbol([e])], {"dtype": dtype.name})._heads[0]
                           for i, e in enumerate(node.inputs)]
        elif op in lists.widest and node.inputs:
            cast = create("amp_multicast", [Symbol([e]) for e in node.inputs], {"num_outputs": len(node.inputs)})
            node.inputs = list(cast._heads)
        if op in lists.loss_outputs:
            logging.warning("%s does not support dynamic loss scaling in symbolic and hybridized execution.", op)


def install(casts: AmpCasts) -> None:
    _seams.amp_casts.install(casts)


def uninstall() -> None:
    _seams.amp_casts.install(None)


def installed() -> AmpCasts | None:
    return _seams.amp_casts.impl
