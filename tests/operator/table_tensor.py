"""Table rows: tensor ops (``mxasync/operator/tensor/``): creation, ordering, special functions, Cast,
``pick``/``diag`` and the array attributes."""

from __future__ import annotations

import math

import numpy as np
from cases import Case, distinct, integers, uniform


def _vec(f):
    return lambda x: np.vectorize(f, otypes=[np.float64])(x.astype(np.float64)).astype(x.dtype)


def _erfinv_scalar(y):
    lo, hi = -6.0, 6.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return 0.5 * (lo + hi)


def _order(x, axis, ascend):
    xl = x.reshape(-1) if axis is None else np.moveaxis(x, axis, -1)
    idx = np.argsort(xl if ascend else -xl, axis=-1, kind="stable")
    return xl, idx


def _back(y, axis):
    return y if axis is None else np.moveaxis(y, -1, axis)


def _topk(x, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    xl, idx = _order(x, axis, is_ascend)
    idx = idx[..., : (k if k >= 1 else xl.shape[-1])]
    val = np.take_along_axis(xl, idx, -1)
    if ret_typ == "mask":
        m = np.zeros_like(xl)
        np.put_along_axis(m, idx, 1, -1)
        return _back(m, axis).reshape(x.shape)
    if ret_typ == "value":
        return _back(val, axis)
    if ret_typ == "indices":
        return _back(idx, axis).astype(dtype)
    return _back(val, axis), _back(idx, axis).astype(dtype)


def _sort(x, axis=-1, is_ascend=True):
    xl, idx = _order(x, axis, is_ascend)
    return _back(np.take_along_axis(xl, idx, -1), axis)


def _argsort(x, axis=-1, is_ascend=True, dtype="float32"):
    return _back(_order(x, axis, is_ascend)[1], axis).astype(dtype)


def _pick(x, i, axis=-1, keepdims=False, mode="clip"):
    n = x.shape[axis]
    i = i.astype(int).reshape(np.delete(x.shape, axis % x.ndim))
    i = np.mod(i, n) if mode == "wrap" else np.clip(i, 0, n - 1)
    out = np.take_along_axis(x, np.expand_dims(i, axis), axis)
    return out if keepdims else np.squeeze(out, axis)


def _arange(start, stop=None, step=1.0, repeat=1, dtype="float32"):
    lo, hi = (0.0, start) if stop is None else (start, stop)
    return np.repeat(np.arange(lo, hi, step), repeat).astype(dtype)


def _diag(x, k=0, axis1=0, axis2=1):
    return np.diag(x, k) if x.ndim == 1 else np.diagonal(x, k, axis1, axis2)


X = [((2, 3, 4),)]
NOIN = dict(grad=False)
CASES = [
    Case("Cast", [((2, 3),)], ref=lambda x, dtype: x.astype(dtype), params=dict(dtype="float64")),
    Case("Cast", [((2, 3),)], ref=lambda x, dtype: x.astype(dtype), params=dict(dtype="int32"),
         gens=uniform(-5, 5), grad=False, name="Cast-int32"),
    Case("pick", [((2, 4), (2,))], ref=_pick, params=dict(axis=1), gens=[uniform(), integers(-1, 6)], wrt=(0,)),
    Case("pick", [((2, 4), (2,))], ref=_pick, params=dict(axis=1, mode="wrap"), gens=[uniform(), integers(-5, 9)],
         wrt=(0,), name="pick-wrap"),
    Case("pick", [((3, 2, 2), (1, 2, 2))], ref=_pick, params=dict(axis=0, keepdims=True),
         gens=[uniform(), integers(0, 3)], wrt=(0,), name="pick-keepdims-axis0"),
    *[Case("topk", X, ref=_topk, params=params, gens=distinct(), grad="zero" if rt in ("indices", "mask") else True,
           name=f"topk-{params}")
      for rt in ("value", "indices", "mask", "both")
      for params in (dict(k=2, ret_typ=rt), dict(k=2, axis=1, ret_typ=rt, is_ascend=True))],
    Case("topk", X, ref=_topk, params=dict(k=3, axis=None, ret_typ="both"), gens=distinct(), name="topk-flat"),
    Case("topk", X, ref=_topk, params=dict(k=0, axis=0, ret_typ="value"), gens=distinct(), name="topk-all"),
    Case("sort", X, ref=_sort, gens=distinct()),
    Case("sort", X, ref=_sort, params=dict(axis=1, is_ascend=False), gens=distinct(), name="sort-desc-1"),
    Case("sort", X, ref=_sort, params=dict(axis=None), gens=distinct(), name="sort-flat"),
    Case("argsort", X, ref=_argsort, gens=distinct(), grad="zero"),
    Case("argsort", X, ref=_argsort, params=dict(axis=0, is_ascend=False, dtype="int32"), gens=distinct(),
         grad="zero", name="argsort-desc-0"),
    Case("erf", [((2, 5),)], ref=_vec(math.erf), gens=uniform(-3, 3)),
    Case("erfinv", [((2, 5),)], ref=_vec(_erfinv_scalar), gens=uniform(-0.95, 0.95)),
    Case("gamma", [((2, 5),)], ref=_vec(math.gamma), gens=uniform(0.2, 4.5)),
    Case("gamma", [((2, 3),)], ref=_vec(math.gamma), gens=uniform(-2.9, -2.1), name="gamma-negative"),
    Case("gammaln", [((2, 5),)], ref=_vec(math.lgamma), gens=uniform(0.2, 6.0)),
    Case("gammaln", [((2, 3),)], ref=_vec(math.lgamma), gens=uniform(-1.9, -1.1), name="gammaln-negative"),
    Case("_zeros", [()], ref=lambda shape: np.zeros(shape), params=dict(shape=(2, 3)), **NOIN),
    Case("_ones", [()], ref=lambda shape, dtype: np.ones(shape), params=dict(shape=(4,), dtype="int32"), **NOIN),
    Case("_zeros_without_dtype", [()], ref=lambda shape, dtype: np.zeros(shape, np.float32),
         params=dict(shape=(2, 3), dtype=-1), **NOIN),
    Case("_zeros_without_dtype", [()], ref=lambda shape, dtype: np.zeros(shape, np.int32),
         params=dict(shape=(3,), dtype="4"), name="_zeros_without_dtype-int32", **NOIN),
    Case("_onehot_encode", [((3,), (3, 4))], ref=lambda i, o: np.eye(4, dtype=o.dtype)[i.astype(int)],
         gens=[integers(0, 4), uniform()], **NOIN),
    Case("_full", [()], ref=lambda shape, value: np.full(shape, value), params=dict(shape=(2, 2), value=3.5), **NOIN),
    Case("_arange", [()], ref=_arange, params=dict(start=2, stop=7, step=2, repeat=2), **NOIN),
    Case("_histogram", [((30,),)], ref=lambda x, bin_cnt, range: (np.histogram(x, bin_cnt, range)[0],
                                                                 np.linspace(*range, bin_cnt + 1).astype(x.dtype)),
         params=dict(bin_cnt=4, range=(-0.5, 0.5)), **NOIN),
    Case("_linspace", [()], ref=lambda start, stop, num, endpoint=True: np.linspace(start, stop, num, endpoint=endpoint)
         .astype(np.float32), params=dict(start=-1.0, stop=2.0, num=7, endpoint=False), **NOIN),
    Case("_arange", [()], ref=_arange, params=dict(start=5), name="_arange-nostop", **NOIN),
    Case("_arange", [()], ref=_arange, params=dict(start=1, stop=2, step=0.3), name="_arange-float", **NOIN),
    Case("_eye", [()], ref=lambda N, M, k: np.eye(N, M, k), params=dict(N=3, M=4, k=1), **NOIN),
    Case("_identity_with_attr_like_rhs", [((2, 3), (2, 3))], ref=lambda lhs, rhs: lhs),
    Case("shape_array", X, ref=lambda x: np.array(x.shape), grad="zero"),
    Case("size_array", X, ref=lambda x: np.array([x.size]), grad="zero"),
    Case("diag", [((3,),)], ref=_diag, params=dict(k=1)),
    Case("diag", [((3, 4),)], ref=_diag, params=dict(k=-1), name="diag-2d"),
    Case("diag", X, ref=_diag, params=dict(k=1, axis1=1, axis2=2), name="diag-3d"),
]
