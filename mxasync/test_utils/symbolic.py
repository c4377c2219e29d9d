"""Checking a Symbol: forward and backward against expected values, and gradients against
central differences (MXNet 1.9's ``check_*`` helpers)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .compare import assert_almost_equal, get_tols
from .sampling import default_context

# Power-of-two steps lose no bits when added to an input (MXNet's choice).
_NUMERIC_EPS = {np.dtype(np.float16): 2.0 ** -6, np.dtype(np.float32): 2.0 ** -9, np.dtype(np.float64): 2.0 ** -14}


def _named(values: Any, names: list[str], what: str, fn: str) -> dict[str, np.ndarray]:
    """A list (in ``names`` order) or a dict of arrays as ``{name: numpy array}``."""
    if values is None:
        return {}
    if isinstance(values, dict):
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise ValueError(f"{fn}: unknown {what} {unknown}; the symbol has {names}")
        return {k: _np(v) for k, v in values.items()}
    values = list(values)
    if what == "output" and len(values) > len(names):
        values = values[:len(names)]  # MXNet's executor reads one head gradient per output and ignores the rest
    if len(values) != len(names):
        raise ValueError(f"{fn}: {len(values)} {what} values given for {len(names)} {what}s {names}")
    return {k: _np(v) for k, v in zip(names, values, strict=True)}


def _np(x: Any) -> Any:
    """A numpy array of ``x``; sparse NDArrays stay as they are (bound as given, as MXNet does)."""
    if getattr(x, "stype", "default") != "default":
        return x
    return x.asnumpy() if hasattr(x, "asnumpy") else np.asarray(x)


def _dense(x: Any) -> np.ndarray:
    return x.asnumpy() if hasattr(x, "asnumpy") else np.asarray(x)


def _nd(values: dict, ctx: Any, dtype: Any, stypes: Any = None) -> dict:
    """NDArrays of ``values`` (sparse ones kept, with ``dtype``); ``stypes`` casts some by name."""
    from .. import ndarray as nd

    out = {}
    for k, v in values.items():
        if getattr(v, "stype", "default") != "default":
            a = v.as_in_context(ctx)
            out[k] = a if dtype == "asnumpy" or np.dtype(a.dtype) == np.dtype(dtype) else a.astype(dtype)
        else:
            out[k] = nd.array(v, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype)
        if stypes and stypes.get(k, "default") != "default":
            out[k] = out[k].tostype(stypes[k])
    return out


def _arguments(sym: Any, location: Any, aux_states: Any, fn: str) -> tuple[dict, dict]:
    args = _named(location, sym.list_arguments(), "argument", fn)
    missing = [n for n in sym.list_arguments() if n not in args]
    if missing:
        raise ValueError(f"{fn}: location has no value for arguments {missing}")
    return args, _named(aux_states, sym.list_auxiliary_states(), "auxiliary state", fn)


def simple_forward(sym: Any, ctx: Any = None, is_train: bool = False, **inputs: Any):
    """Run ``sym`` once on numpy ``inputs``; one output gives a numpy array, several a list.

    >>> import mxasync as mx
    >>> x = mx.sym.Variable("x")
    >>> simple_forward(2 * x, x=np.array([1.0, 2.0]))
    array([2., 4.], dtype=float32)
    """
    ctx = ctx if ctx is not None else default_context()
    args, _ = _arguments(sym, {k: v for k, v in inputs.items()}, None, "simple_forward")
    exe = sym.bind(ctx, args=_nd(args, ctx, np.float32), grad_req="null")
    outs = [o.asnumpy() for o in exe.forward(is_train=is_train)]
    return outs[0] if len(outs) == 1 else outs


def numeric_grad(executor: Any, location: Any, aux_states: Any = None, eps: float = 1e-4,
                 use_forward_train: bool = True, dtype: Any = np.float32) -> dict[str, np.ndarray]:
    """Central differences of the sum of ``executor``'s outputs with respect to each array in
    ``location`` (a dict, or a list in the executor's argument order).

    >>> import mxasync as mx
    >>> x = mx.sym.Variable("x")
    >>> exe = (x * x).simple_bind(mx.cpu(), x=(2,))
    >>> g = numeric_grad(exe, {"x": np.array([1.0, 3.0])}, eps=2.0 ** -9)
    >>> np.round(g["x"], 2)
    array([2., 6.], dtype=float32)
    """
    location = _named(location, list(executor.arg_dict), "argument", "numeric_grad")
    for k, v in location.items():
        executor.arg_dict[k][:] = _dense(v).astype(dtype)
    for k, v in _named(aux_states, list(executor.aux_dict), "auxiliary state", "numeric_grad").items():
        executor.aux_dict[k][:] = _dense(v).astype(dtype)

    def total() -> float:
        outs = executor.forward(is_train=use_forward_train)
        return float(sum(o.asnumpy().astype(np.float64).sum() for o in outs))

    grads = {}
    for k, v in location.items():
        x = np.array(_dense(v), dtype=dtype)
        grad = np.zeros(x.shape, dtype=dtype)
        arr = executor.arg_dict[k]
        for i in range(x.size):
            old = x.flat[i]
            x.flat[i] = old + eps / 2
            arr[:] = x
            f_plus = total()
            x.flat[i] = old - eps / 2
            arr[:] = x
            f_minus = total()
            x.flat[i] = old
            grad.flat[i] = (f_plus - f_minus) / eps
        arr[:] = x
        grads[k] = grad
    return grads


def _grad_reqs(grad_req: Any, names: list[str], fn: str) -> dict[str, str]:
    if isinstance(grad_req, str):
        return {n: grad_req for n in names}
    if isinstance(grad_req, dict):
        unknown = sorted(set(grad_req) - set(names))
        if unknown:
            raise ValueError(f"{fn}: grad_req names unknown arguments {unknown}; the symbol has {names}")
        return {n: grad_req.get(n, "null") for n in names}
    reqs = list(grad_req)
    if len(reqs) != len(names):
        raise ValueError(f"{fn}: {len(reqs)} grad_req values for {len(names)} arguments {names}")
    return dict(zip(names, reqs, strict=True))


def check_numeric_gradient(sym: Any, location: Any, aux_states: Any = None, numeric_eps: float | None = None,
                           rtol: float | None = None, atol: float | None = None, grad_nodes: Any = None,
                           use_forward_train: bool = True, ctx: Any = None, grad_stype_dict: Any = None,
                           dtype: Any = np.float32) -> None:
    """Compare ``sym``'s gradients (from its executor) with central differences.

    The single output is multiplied by a random projection so every output element
    weighs differently. ``grad_nodes``: argument names (or ``{name: grad_req}``) to
    check; all arguments by default.

    >>> import mxasync as mx
    >>> x = mx.sym.Variable("x")
    >>> check_numeric_gradient(mx.sym.tanh(x), [np.array([0.1, -0.5, 0.7])], dtype=np.float64)
    >>> check_numeric_gradient(mx.sym.BlockGrad(x) * x, [np.array([1.0, 2.0])], dtype=np.float64)
    Traceback (most recent call last):
    ...
    AssertionError: ...
    """
    from .. import ndarray as nd
    from .. import symbol as msym

    fn = "check_numeric_gradient"
    ctx = ctx if ctx is not None else default_context()
    if len(sym.list_outputs()) != 1:
        raise ValueError(f"{fn}: the symbol must have one output, it has {sym.list_outputs()}")
    location, aux = _arguments(sym, location, aux_states, fn)
    names = sym.list_arguments()
    if grad_nodes is None:
        reqs = {n: "write" for n in names}
    elif isinstance(grad_nodes, dict):
        reqs = _grad_reqs(grad_nodes, names, fn)
    else:
        reqs = _grad_reqs({n: "write" for n in grad_nodes}, names, fn)

    _, out_shapes, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    proj_name = "__random_proj"
    proj = msym.Variable(proj_name)
    out = sym * proj
    location = dict(location)
    location[proj_name] = np.random.rand(*out_shapes[0]) + 0.1
    reqs[proj_name] = "null"

    args = _nd(location, ctx, dtype)
    orig = {k: np.random.normal(size=location[k].shape).astype(dtype) for k, r in reqs.items() if r != "null"}
    if grad_stype_dict:  # a sparse gradient buffer holds its (dense) start value only where it stores
        orig = {k: _nd({k: v}, ctx, dtype, grad_stype_dict)[k].asnumpy() for k, v in orig.items()}
    exe = out.bind(ctx, args=args, args_grad=_nd(orig, ctx, dtype, grad_stype_dict), grad_req=reqs,
                   aux_states=_nd(aux, ctx, dtype) or None)
    outs = exe.forward(is_train=True)
    exe.backward([nd.ones(outs[0].shape, ctx=ctx, dtype=outs[0].dtype)])
    sym_grads = {k: exe.grad_dict[k].asnumpy() for k in orig}

    eps = numeric_eps if numeric_eps is not None else _NUMERIC_EPS.get(np.dtype(dtype), 2.0 ** -9)
    fd_grads = numeric_grad(exe, {k: _dense(location[k]) for k in orig}, aux, eps=eps,
                            use_forward_train=use_forward_train, dtype=dtype)
    for name in orig:
        fd, got = fd_grads[name], sym_grads[name]
        if reqs[name] == "add":
            got = got - orig[name]
        r, a = get_tols(fd, got, rtol, atol)
        assert_almost_equal(fd, got, r, a, names=(f"NUMERICAL_{name}", f"BACKWARD_{name}"))


def check_symbolic_forward(sym: Any, location: Any, expected: Any, rtol: float | None = None,
                           atol: float | None = None, aux_states: Any = None, ctx: Any = None,
                           equal_nan: bool = False, dtype: Any = np.float32):
    """Run ``sym`` forward on ``location`` and compare with ``expected`` (a list in output
    order, or a dict by output name); returns the executor's outputs.

    >>> import mxasync as mx
    >>> x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    >>> outs = check_symbolic_forward(x * y, [np.array([1.0, 2.0]), np.array([3.0, 4.0])], [np.array([3.0, 8.0])])
    >>> outs[0].asnumpy()
    array([3., 8.], dtype=float32)
    """
    fn = "check_symbolic_forward"
    ctx = ctx if ctx is not None else default_context()
    location, aux = _arguments(sym, location, aux_states, fn)
    out_names = sym.list_outputs()
    expected = _named(expected, out_names, "output", fn)
    exe = sym.bind(ctx, args=_nd(location, ctx, dtype), grad_req="null", aux_states=_nd(aux, ctx, dtype) or None)
    outputs = exe.forward(is_train=False)
    for name, out in zip(out_names, outputs, strict=True):
        if name in expected:
            assert_almost_equal(expected[name], out.asnumpy(), rtol, atol,
                                names=(f"EXPECTED_{name}", f"FORWARD_{name}"), equal_nan=equal_nan)
    return outputs


def check_symbolic_backward(sym: Any, location: Any, out_grads: Any, expected: Any, rtol: float | None = None,
                            atol: float | None = None, aux_states: Any = None, grad_req: Any = "write",
                            ctx: Any = None, grad_stypes: Any = None, equal_nan: bool = False,
                            dtype: Any = np.float32) -> dict:
    """Run ``sym`` forward and backward with head gradients ``out_grads`` and compare the
    argument gradients with ``expected`` (a list in argument order, or a dict of some).

    With ``grad_req='add'`` the gradient buffers start random and the check is on what
    backward added. Returns the executor's ``grad_dict``.

    >>> import mxasync as mx
    >>> x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    >>> loc = {"x": np.array([1.0, 2.0]), "y": np.array([3.0, 4.0])}
    >>> g = check_symbolic_backward(x * y, loc, [np.ones(2)], {"x": np.array([3.0, 4.0])})
    >>> g["y"].asnumpy()
    array([1., 2.], dtype=float32)
    """

    fn = "check_symbolic_backward"
    ctx = ctx if ctx is not None else default_context()
    location, aux = _arguments(sym, location, aux_states, fn)
    names, out_names = sym.list_arguments(), sym.list_outputs()
    expected = _named(expected, names, "argument", fn)
    reqs = _grad_reqs(grad_req, names, fn)
    def grad_dtype(k):  # "asnumpy": each gradient takes its expected array's dtype (MXNet's rule)
        if dtype != "asnumpy":
            return dtype
        return expected[k].dtype if k in expected else location[k].dtype

    orig = {k: np.random.normal(size=location[k].shape).astype(grad_dtype(k)) for k, r in reqs.items() if r != "null"}
    grads = _nd(orig, ctx, dtype, grad_stypes)
    orig = {k: g.asnumpy() for k, g in grads.items()}
    exe = sym.bind(ctx, args=_nd(location, ctx, dtype), args_grad=grads, grad_req=reqs,
                   aux_states=_nd(aux, ctx, dtype) or None)
    exe.forward(is_train=True)
    if out_grads is not None:
        heads = _named(out_grads, out_names, "output", fn)
        out_grads = [_nd({n: heads[n]}, ctx, dtype)[n] if n in heads else None for n in out_names]
    exe.backward(out_grads)
    for name, want in expected.items():
        if reqs[name] == "null":
            continue
        got = exe.grad_dict[name].asnumpy()
        if reqs[name] == "add":
            got = got - orig[name]
        assert_almost_equal(want, got, rtol, atol, names=(f"EXPECTED_{name}", f"BACKWARD_{name}"),
                            equal_nan=equal_nan)
    return exe.grad_dict
