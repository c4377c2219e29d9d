"""MXNet 1.9.1's AMP op lists (data: ``symbol_fp16``, ``symbol_bf16``) and :class:`OpLists`, the lists in
force for one target dtype, with op names resolved to this registry's canonical names."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...._bfloat16 import bfloat16
from . import symbol_bf16, symbol_fp16
from .equivalents import LIKE

__all__ = ["symbol_fp16", "symbol_bf16", "OpLists", "target_dtype_of", "lists_module", "listed_ops"]


def target_dtype_of(target_dtype) -> np.dtype:
    """float16 or bfloat16 as a numpy dtype (MXNet's structured bfloat16 too); AssertionError otherwise,
    as MXNet's ``amp.init`` / ``convert_symbol``."""
    try:
        dt = np.dtype(target_dtype)
    except TypeError:
        dt = None
    if dt is not None and dt == np.dtype([("bfloat16", np.uint16)]):
        dt = bfloat16
    assert dt in (np.dtype(np.float16), bfloat16), \
        f"AMP currently supports only float16 or bfloat16 as a target_dtype, got {target_dtype!r}"
    return dt


def lists_module(target_dtype):
    return symbol_fp16 if target_dtype_of(target_dtype) == np.float16 else symbol_bf16


def _with_likes(names: list) -> list:
    """``names`` and the ops of ``LIKE`` that compute like one of them."""
    listed = set(names)
    return names + [op for op, like in LIKE.items() if like in listed]


def listed_ops(target_dtype) -> set:
    """Every op name some list of ``target_dtype`` classifies (MXNet 1.9.1's, the NumPy-interface ones and
    the ``LIKE`` entries whose model op is listed)."""
    mod = lists_module(target_dtype)
    names = set()
    for key, value in vars(mod).items():
        if key.isupper() and isinstance(value, list):
            names.update(v[0] if isinstance(v, tuple) else v for v in value)
    return names | {op for op, like in LIKE.items() if like in names}


@dataclass(frozen=True)
class OpLists:
    """Which ops run in the target dtype, in float32, in the widest input type, or in float32 under a
    param condition.  An op is looked up by its registry name (an alias resolves to it): MXNet's lists
    name distinct ops that this registry merges (``Convolution_v1`` is ``Convolution`` here), and the
    list of the op's own name is the one that counts."""

    target_dtype: np.dtype
    target: frozenset
    fp32: frozenset
    widest: frozenset
    conditional: dict  # op -> {param: [values]}
    loss_outputs: frozenset
    fp32_params: dict  # op -> per-input flags: True where the input stays float32 (bfloat16 BatchNorm)

    @classmethod
    def make(cls, target_dtype, target_ops=None, fp32_ops=None, conditional_fp32_ops=None) -> OpLists:
        dt = target_dtype_of(target_dtype)
        mod = lists_module(dt)
        target = mod.FP16_FUNCS if dt == np.float16 else mod.BF16_FUNCS
        conditional: dict = {}
        for op, param, values in (conditional_fp32_ops if conditional_fp32_ops is not None
                                  else mod.CONDITIONAL_FP32_FUNCS):
            conditional.setdefault(op, {}).setdefault(param, []).extend(str(v) for v in values)
        fp32_params = getattr(mod, "BF16_USE_FP32_PARAMS", None) or {}
        # the NumPy-interface ops (MXNet 2.0's classification) and mxasync's own (``LIKE``) join the
        # defaults, not a list the caller gave
        targets = _with_likes([*target, *mod.NP_TARGET_FUNCS])
        fp32 = _with_likes([*mod.FP32_FUNCS, *mod.NP_FP32_FUNCS])
        return cls(dt, frozenset(target_ops if target_ops is not None else targets),
                   frozenset(fp32_ops if fp32_ops is not None else fp32),
                   frozenset(_with_likes([*mod.WIDEST_TYPE_CASTS, *mod.NP_WIDEST_TYPE_CASTS])), conditional,
                   frozenset(mod.LOSS_OUTPUT_FUNCTIONS),
                   {k: [bool(n) for n in v] for k, v in fp32_params.items()})

    def is_conditional_fp32(self, op: str, params: dict) -> bool:
        """Whether ``op`` with ``params`` (strings, as graph attributes) is one the conditional list sends to float32."""
        for param, values in self.conditional.get(op, {}).items():
            if param in params and str(params[param]) in values:
                return True
        return False
