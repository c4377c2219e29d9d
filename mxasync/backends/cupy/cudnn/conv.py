"""Convolution forward and both backward passes on cuDNN: the CuPy backend's overrides.

Registered through the plugin contract (``Backend.overrides``, docs/backend_plugins.md):
``Convolution`` is ``fwd(xp, params, op_ctx, data, weight, bias, out=)`` and
``Convolution.backward`` is ``bwd(xp, params, out_grads, inputs, outputs, need, into)``.
Either returns ``NotImplemented`` for a case cuDNN does not take (no frontend or library,
float64, a layout other than channels-first, ``cudnn_off=True``, a graph cuDNN refuses),
and the generic im2col kernel runs instead; the reason is logged once at debug level.

cuDNN's graph API wants 2-D or 3-D convolutions, so a 1-D one runs as 2-D with a unit
height.  Dims are always given N, C, spatial...; the strides say the memory layout.  The
bias is added by one broadcast kernel after the convolution, the bias gradient is one
reduction (both on the op's stream).
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from . import frontend
from .plans import UNSUPPORTED, Autotune, Plan, PlanCache, autotune_mode, finalize

__all__ = ["convolution_forward", "convolution_backward", "geometry", "packed_strides", "PLANS"]

#: every built convolution graph of this process
PLANS = PlanCache()


def packed_strides(dims: tuple[int, ...], channels_last: bool = False) -> tuple[int, ...]:
    """Element strides of a packed array whose dims are (N, C, *spatial).

    >>> packed_strides((2, 3, 4, 5)), packed_strides((2, 3, 4, 5), channels_last=True)
    ((60, 20, 5, 1), (60, 1, 15, 3))
    """
    order = (0, *range(2, len(dims)), 1) if channels_last else tuple(range(len(dims)))
    strides = [0] * len(dims)
    step = 1
    for axis in reversed(order):
        strides[axis] = step
        step *= dims[axis]
    return tuple(strides)


class Geometry(NamedTuple):
    x: tuple[int, ...]
    w: tuple[int, ...]
    y: tuple[int, ...]
    pad: tuple[int, ...]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]


def geometry(data_shape, weight_shape, kernel, stride=(), dilate=(), pad=()) -> Geometry:
    """Dims of data, weight and output as cuDNN takes them (1-D lifted to 2-D), and the conv's settings.

    >>> g = geometry((2, 4, 9), (6, 4, 3), (3,), (2,), (), (1,))
    >>> g.x, g.w, g.y, g.pad, g.stride, g.dilation
    ((2, 4, 1, 9), (6, 4, 1, 3), (2, 6, 1, 5), (0, 1), (1, 2), (1, 1))
    """
    nsp = len(kernel)
    stride = tuple(stride) or (1,) * nsp
    dilate = tuple(dilate) or (1,) * nsp
    pad = tuple(pad) or (0,) * nsp
    spatial = tuple((i + 2 * p - d * (k - 1) - 1) // s + 1
                    for i, k, s, d, p in zip(data_shape[2:], kernel, stride, dilate, pad, strict=True))
    x, w = tuple(data_shape), tuple(weight_shape)
    y = (x[0], w[0], *spatial)
    if nsp == 1:  # cuDNN's graph API has no 1-D convolution: a unit height makes it 2-D
        lift = lambda dims: (*dims[:2], 1, *dims[2:])  # noqa: E731
        x, w, y = lift(x), lift(w), lift(y)
        pad, stride, dilate = (0, *pad), (1, *stride), (1, *dilate)
    return Geometry(x, w, y, pad, stride, dilate)


def _refuse(params, dtype) -> str | None:
    """Why cuDNN does not run this call (None: it may)."""
    if params.cudnn_off:
        return "cudnn_off=True"
    if params.layout not in (None, "NCW", "NCHW", "NCDHW"):
        return f"layout {params.layout!r} (channels-first only)"
    if frontend.data_type_name(dtype) is None:
        return f"dtype {dtype}"
    if len(params.kernel) not in (1, 2, 3):
        return f"{len(params.kernel)}-D kernel"
    if frontend.load() is None:
        return frontend.unavailable_reason() or "cuDNN frontend unavailable"
    return None


def _tensor(g, name: str, dims, dtype_member):
    return g.tensor(name=name, dim=list(dims), stride=list(packed_strides(dims)), data_type=dtype_member)


def _build(fe, kind: str, geo: Geometry, dtype: str, handle) -> tuple[Any, dict[str, Any]]:
    """The graph of one pass: ``fprop`` (X, W -> Y), ``dgrad`` (DY, W -> DX) or ``wgrad`` (X, DY -> DW)."""
    io = getattr(fe.data_type, frontend.data_type_name(dtype))
    f32 = fe.data_type.FLOAT
    g = fe.pygraph(io_data_type=io, intermediate_data_type=f32, compute_data_type=f32, handle=handle)
    conv = dict(padding=list(geo.pad), stride=list(geo.stride), dilation=list(geo.dilation), compute_data_type=f32)
    if kind == "fprop":
        t = {"X": _tensor(g, "X", geo.x, io), "W": _tensor(g, "W", geo.w, io)}
        t["Y"] = result = g.conv_fprop(image=t["X"], weight=t["W"], **conv)
        dims = geo.y
    elif kind == "dgrad":
        t = {"DY": _tensor(g, "DY", geo.y, io), "W": _tensor(g, "W", geo.w, io)}
        t["DX"] = result = g.conv_dgrad(loss=t["DY"], filter=t["W"], **conv)
        dims = geo.x
    else:
        t = {"X": _tensor(g, "X", geo.x, io), "DY": _tensor(g, "DY", geo.y, io)}
        t["DW"] = result = g.conv_wgrad(image=t["X"], loss=t["DY"], **conv)
        dims = geo.w
    result.set_output(True)
    result.set_dim(list(dims))
    result.set_stride(list(packed_strides(dims)))
    result.set_data_type(io)
    return g, t


def time_plan(xp, run) -> float | None:
    """Seconds one run of ``run()`` takes on the current stream (a warm-up run first); None if it fails."""
    try:
        run()
        cuda = getattr(xp, "cuda", None)
        if cuda is None:  # a host namespace (tests): wall time
            start = time.perf_counter()
            run()
            return time.perf_counter() - start
        begin, end = cuda.Event(), cuda.Event()
        begin.record()
        run()
        end.record()
        end.synchronize()
        return cuda.get_elapsed_time(begin, end) / 1e3
    except Exception:
        return None


def _run(xp, params, kind: str, geo: Geometry, dtype, arrays: dict[str, Any]) -> bool:
    """Run pass ``kind`` on ``arrays`` (role -> array, the result's array included); False: not on cuDNN."""
    fe = frontend.load()
    device, stream = frontend.current_device_and_stream(xp)
    state = frontend.device_state(fe, device)
    mode = autotune_mode(params.cudnn_tune)
    limit = int(params.workspace) << 20
    key = (kind, device, geo, str(dtype), mode, limit if mode is Autotune.LIMITED else None)
    with state.lock:  # one handle per device: its stream binding and the tuning runs are not shared
        handle = state.bind(stream)
        pack = lambda t: {t[role]: frontend.pointer(a) for role, a in arrays.items()}  # noqa: E731

        def build():
            try:
                g, t = _build(fe, kind, geo, dtype, handle)

                def timed(index: int, need: int) -> float | None:
                    ws = state.workspace(xp, stream, need)
                    return time_plan(xp, lambda: g.execute_plan_at_index(pack(t), frontend.pointer(ws), index,
                                                                        handle=handle))

                index, need = finalize(fe, g, handle, mode, limit, timed)
                return Plan(g, t, index, need)
            except Exception as exc:  # cuDNN cannot run this graph: the generic kernel takes the key
                frontend.report_once(f"{kind}{geo}{dtype}", f"Convolution {kind} {geo} {dtype}: generic kernel "
                                                              f"({type(exc).__name__}: {exc})")
                return UNSUPPORTED

        plan = PLANS.get_or_build(key, build)
        if plan is UNSUPPORTED:
            return False
        ws = state.workspace(xp, stream, plan.workspace_size)
        plan.execute(pack(plan.tensors), frontend.pointer(ws), handle)
    return True


def _target(xp, into, shape, dtype):
    """``into`` when a kernel may write it directly (packed, same shape and dtype), else a new array."""
    if into is not None and tuple(into.shape) == tuple(shape) and into.dtype == dtype and into.flags.c_contiguous:
        return into
    return xp.empty(shape, dtype=dtype)


def _usable(params, *arrays) -> bool:
    reason = _refuse(params, arrays[0].dtype)
    if reason is None and not all(a.flags.c_contiguous for a in arrays):
        reason = "non-contiguous input"
    if reason is not None:
        frontend.report_once(f"conv:{reason}", f"Convolution runs its generic kernel: {reason}")
        return False
    return True


def _bias_axes(ndim: int) -> tuple[int, ...]:
    return (0, *range(2, ndim))


def convolution_forward(xp, params, op_ctx, data, weight, bias=None, out=None):
    """``Convolution`` on cuDNN (the contract's forward; ``NotImplemented`` hands it to the generic kernel)."""
    if not _usable(params, data, weight):
        return NotImplemented
    geo = geometry(data.shape, weight.shape, params.kernel, params.stride, params.dilate, params.pad)
    shape = (geo.y[0], geo.y[1], *geo.y[-len(params.kernel):])
    y = _target(xp, out, shape, data.dtype)
    if not _run(xp, params, "fprop", geo, data.dtype, {"X": data, "W": weight, "Y": y}):
        return NotImplemented
    if bias is not None and not params.no_bias:
        y += bias.reshape((1, -1) + (1,) * (y.ndim - 2))
    return y


def convolution_backward(xp, params, out_grads, inputs, outputs, need, into):
    """``Convolution.backward`` on cuDNN: data gradient by dgrad, weight gradient by wgrad, bias by a sum."""
    og, (data, weight) = out_grads[0], inputs[:2]
    if not _usable(params, og, data, weight):
        return NotImplemented
    need = list(need) + [False] * (3 - len(need))
    into = list(into) + [None] * (3 - len(into))
    geo = geometry(data.shape, weight.shape, params.kernel, params.stride, params.dilate, params.pad)
    grads: list[Any] = [None, None, None]
    if need[0]:
        gd = _target(xp, into[0], data.shape, data.dtype)
        if not _run(xp, params, "dgrad", geo, data.dtype, {"DY": og, "W": weight, "DX": gd}):
            return NotImplemented
        grads[0] = gd
    if need[1]:
        gw = _target(xp, into[1], weight.shape, weight.dtype)
        if not _run(xp, params, "wgrad", geo, data.dtype, {"X": data, "DY": og, "DW": gw}):
            return NotImplemented
        grads[1] = gw
    if need[2] and not params.no_bias:
        grads[2] = og.sum(axis=_bias_axes(og.ndim))
    return grads[:2] if params.no_bias else grads
