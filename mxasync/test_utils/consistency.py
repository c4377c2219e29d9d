"""``check_consistency``: the same symbol(s) on several contexts and dtypes must agree (MXNet 1.9's helper).

Each entry of ``ctx_list`` binds one executor (``ctx``, input shapes, optional
``type_dict``); all get the same random inputs, run forward in training mode and
backward with their own outputs as head gradients, and are compared with the most
precise one (float64 > float32 > float16), or with ``ground_truth``.

>>> import mxasync as mx
>>> x = mx.sym.Variable("x")
>>> ctx = {"ctx": mx.cpu(), "x": (2, 3)}
>>> gt = check_consistency([mx.sym.abs(x, name="a"), abs(x)], ctx_list=[ctx, ctx])
>>> sorted(gt)
['a_output', 'x', 'x_grad']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .compare import assert_almost_equal

__all__ = ["check_consistency"]

_DEFAULT_TOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-5,
                np.dtype(np.uint8): 0, np.dtype(np.int32): 0, np.dtype(np.int64): 0}
_PRECISION = {np.dtype(np.float16): 0, np.dtype(np.float32): 1, np.dtype(np.float64): 2}


def _bind(sym, spec: dict, grad_req):
    spec = dict(spec)
    ctx = spec.pop("ctx")
    type_dict = spec.pop("type_dict", {})
    return sym.simple_bind(ctx, grad_req=grad_req, type_dict=type_dict, **spec)


def check_consistency(sym: Any, ctx_list: list[dict], scale: float = 1.0, grad_req: Any = "write",
                      arg_params: dict | None = None, aux_params: dict | None = None, tol: Any = None,
                      raise_on_err: bool = True, ground_truth: dict | None = None, equal_nan: bool = False,
                      use_uniform: bool = False, rand_type: Any = np.float64) -> dict:
    """Run ``sym`` (one symbol, or one per entry of ``ctx_list``) everywhere; outputs and gradients must match.

    Returns the ground truth: ``{name: array}`` for the arguments and outputs and ``{name}_grad``
    for the gradients of the most precise executor.
    """
    if tol is None:
        tol = _DEFAULT_TOL
    elif isinstance(tol, (int, float)):
        tol = {dt: tol for dt in _DEFAULT_TOL}
    else:
        tol = {np.dtype(k): v for k, v in tol.items()}
    syms = list(sym) if isinstance(sym, (list, tuple)) else [sym] * len(ctx_list)
    if len(syms) != len(ctx_list):
        raise ValueError(f"check_consistency: {len(syms)} symbols for {len(ctx_list)} contexts")
    output_names = syms[0].list_outputs()
    arg_names = syms[0].list_arguments()
    exes = [_bind(s, spec, grad_req) for s, spec in zip(syms, ctx_list, strict=True)]
    for exe in exes:
        if exe.arg_dict.keys() != exes[0].arg_dict.keys():
            raise ValueError("check_consistency: the symbols do not take the same arguments")

    rng = np.random
    arg_params = dict(arg_params or {})
    aux_params = dict(aux_params or {})
    for name, arr in exes[0].arg_dict.items():
        if name not in arg_params:
            arg_params[name] = (rng.uniform(-scale, scale, arr.shape) if use_uniform
                                else rng.normal(size=arr.shape) * scale).astype(rand_type)
    for name, arr in exes[0].aux_dict.items():
        aux_params.setdefault(name, np.zeros(arr.shape))
    for exe in exes:
        for name, arr in exe.arg_dict.items():
            arr[:] = np.asarray(arg_params[name]).astype(arr.dtype)
        for name, arr in exe.aux_dict.items():
            arr[:] = np.asarray(aux_params[name]).astype(arr.dtype)

    for exe in exes:
        exe.forward(is_train=True)
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exes]
    best = max(range(len(exes)), key=lambda i: _PRECISION.get(dtypes[i], 1))
    gt = ground_truth
    if gt is None:
        gt = {**{n: a.asnumpy() for n, a in exes[best].arg_dict.items()},
              **{n: a.asnumpy() for n, a in exes[best].aux_dict.items()},
              **dict(zip(output_names, (o.asnumpy() for o in exes[best].outputs), strict=True))}
    for i, exe in enumerate(exes):
        if i == best and ground_truth is None:
            continue
        for name, out in zip(output_names, exe.outputs, strict=True):
            _compare(out.asnumpy(), gt[name], tol[dtypes[i]], f"output {name}", i, raise_on_err, equal_nan)

    if grad_req != "null":
        for exe in exes:
            exe.backward([o.copy() for o in exe.outputs])
        if ground_truth is None:
            gt.update({f"{n}_grad": g.asnumpy() for n, g in exes[best].grad_dict.items() if g is not None})
        for i, exe in enumerate(exes):
            if i == best and ground_truth is None:
                continue
            for name in arg_names:
                g = exe.grad_dict.get(name)
                if g is None or f"{name}_grad" not in gt:
                    continue
                _compare(g.asnumpy(), gt[f"{name}_grad"], tol[dtypes[i]], f"gradient of {name}", i, raise_on_err,
                         equal_nan)
    return gt


def _compare(got, want, tolerance, what, index, raise_on_err, equal_nan) -> None:
    try:
        assert_almost_equal(got, want, rtol=tolerance, atol=tolerance, names=(f"ctx_list[{index}]", "ground truth"),
                            equal_nan=equal_nan)
    except AssertionError as err:
        if raise_on_err:
            raise AssertionError(f"check_consistency: {what} differs: {err}") from None
        print(f"check_consistency: {what} differs: {err}")
