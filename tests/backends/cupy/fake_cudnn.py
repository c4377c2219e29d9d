"""A fake cuDNN frontend: the graph API's calls recorded, the graphs run with numpy on the pointers given.

It reads each tensor back from its address, dims, strides and data type, so a wrong stride,
dim or pointer in the code under test gives a wrong number, not just a wrong call.  Its
convolution is an independent reference (one einsum per kernel offset), not the project's
im2col kernels.  Plans: ``workspaces[i]`` bytes each; running plan i sets ``last_time`` to
``times[i]``.
"""

from __future__ import annotations

import ctypes
import itertools
from types import SimpleNamespace

import numpy as np

_DTYPES = {"FLOAT": np.float32, "HALF": np.float16, "DOUBLE": np.float64}


class FakeTensor:
    _uids = itertools.count(1)

    def __init__(self, name="", dim=None, stride=None, data_type=None):
        self.name, self.dim, self.stride, self.data_type = name, dim, stride, data_type
        self.uid, self.output = next(self._uids), False

    def set_output(self, flag):
        self.output = flag

    def set_dim(self, dim):
        self.dim = list(dim)

    def set_stride(self, stride):
        self.stride = list(stride)

    def set_data_type(self, dt):
        self.data_type = dt

    def get_uid(self):
        return self.uid


def _view(ptr: int, tensor: FakeTensor) -> np.ndarray:
    dtype = np.dtype(_DTYPES[tensor.data_type])
    extent = 1 + sum((d - 1) * s for d, s in zip(tensor.dim, tensor.stride, strict=True))
    buf = (ctypes.c_char * (extent * dtype.itemsize)).from_address(ptr)
    flat = np.frombuffer(buf, dtype=dtype)
    return np.lib.stride_tricks.as_strided(flat, shape=tensor.dim, strides=[s * dtype.itemsize for s in tensor.stride])


def _windows(xpad, w_shape, out_sp, stride, dil):
    for off in np.ndindex(*w_shape[2:]):
        sl = tuple(slice(o * d, o * d + s * (n - 1) + 1, s) for o, d, s, n in zip(off, dil, stride, out_sp, strict=True))
        yield off, (slice(None), slice(None)) + sl


def ref_fprop(x, w, pad, stride, dil):
    n, c = x.shape[:2]
    f, cg = w.shape[:2]
    g = c // cg
    out_sp = [(i + 2 * p - d * (k - 1) - 1) // s + 1 for i, k, s, d, p in zip(x.shape[2:], w.shape[2:], stride, dil, pad, strict=True)]
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    y = np.zeros((n, g, f // g, *out_sp))
    wg = w.astype(np.float64).reshape(g, f // g, cg, *w.shape[2:])
    for off, sl in _windows(xp, w.shape, out_sp, stride, dil):
        patch = xp[sl].reshape(n, g, cg, *out_sp)
        y += np.einsum("ngc...,gfc->ngf...", patch, wg[(Ellipsis, *off)])
    return y.reshape(n, f, *out_sp)


def ref_dgrad(dy, w, x_shape, pad, stride, dil):
    n, c = x_shape[:2]
    f, cg = w.shape[:2]
    g = c // cg
    out_sp = dy.shape[2:]
    dxp = np.zeros((n, c, *[i + 2 * p for i, p in zip(x_shape[2:], pad, strict=True)]))
    wg = w.astype(np.float64).reshape(g, f // g, cg, *w.shape[2:])
    dyg = dy.astype(np.float64).reshape(n, g, f // g, *out_sp)
    for off, sl in _windows(dxp, w.shape, out_sp, stride, dil):
        dxp[sl] += np.einsum("ngf...,gfc->ngc...", dyg, wg[(Ellipsis, *off)]).reshape(n, c, *out_sp)
    crop = (slice(None), slice(None)) + tuple(slice(p, p + i) for p, i in zip(pad, x_shape[2:], strict=True))
    return dxp[crop]


def ref_wgrad(x, dy, w_shape, pad, stride, dil):
    n, c = x.shape[:2]
    f, cg = w_shape[:2]
    g = c // cg
    out_sp = dy.shape[2:]
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    dyg = dy.astype(np.float64).reshape(n, g, f // g, *out_sp)
    dw = np.zeros((g, f // g, cg, *w_shape[2:]))
    for off, sl in _windows(xp, w_shape, out_sp, stride, dil):
        patch = xp[sl].reshape(n, g, cg, *out_sp)
        dw[(Ellipsis, *off)] = np.einsum("ngcs,ngfs->gfc", patch.reshape(n, g, cg, -1), dyg.reshape(n, g, f // g, -1))
    return dw.reshape(w_shape)


class FakeGraph:
    def __init__(self, fe, **kw):
        self.fe, self.kw, self.steps, self.op, self.limit, self.policy = fe, kw, [], None, None, None
        fe.graphs.append(self)

    def tensor(self, **kw):
        return FakeTensor(**kw)

    def _conv(self, kind, ins, padding, stride, dilation, compute_data_type):
        self.op = (kind, ins, list(padding), list(stride), list(dilation))
        out = FakeTensor(name=kind + "_out")
        self.out = out
        return out

    def conv_fprop(self, image, weight, padding, stride, dilation, compute_data_type):
        return self._conv("fprop", (image, weight), padding, stride, dilation, compute_data_type)

    def conv_dgrad(self, loss, filter, padding, stride, dilation, compute_data_type):  # noqa: A002
        return self._conv("dgrad", (loss, filter), padding, stride, dilation, compute_data_type)

    def conv_wgrad(self, image, loss, padding, stride, dilation, compute_data_type):
        return self._conv("wgrad", (image, loss), padding, stride, dilation, compute_data_type)

    def validate(self):
        self.steps.append("validate")

    def build_operation_graph(self):
        self.steps.append("build_operation_graph")

    def create_execution_plans(self, modes):
        self.steps.append(("create_execution_plans", tuple(modes)))

    def check_support(self):
        self.steps.append("check_support")
        if self.fe.unsupported(self):
            raise self.fe.cudnnGraphNotSupportedError("fake: not supported")

    def deselect_workspace_greater_than(self, n):
        self.limit = n

    def build_plans(self, policy):
        self.policy = policy
        self.steps.append(("build_plans", policy))

    def _plans(self):
        return [i for i, w in enumerate(self.fe.workspaces) if self.limit is None or w <= self.limit]

    def get_execution_plan_count(self):
        return len(self._plans())

    def get_workspace_size_plan_at_index(self, i):
        return self.fe.workspaces[self._plans()[i]]

    def get_workspace_size(self):
        return self.fe.workspaces[self.fe.heuristic_choice]

    def execute(self, pack, workspace, handle=None):
        self._run(pack, self.fe.heuristic_choice, workspace, handle)

    def execute_plan_at_index(self, pack, workspace, index, handle=None):
        self._run(pack, self._plans()[index], workspace, handle)

    def _run(self, pack, plan, workspace, handle):
        assert handle in self.fe.handles and isinstance(workspace, int)
        kind, ins, pad, stride, dil = self.op
        arrays = {t.uid: _view(ptr, t) for t, ptr in pack.items()}
        a, b = (arrays[t.uid] for t in ins)
        out = _view(pack[self.out], self.out)
        if kind == "fprop":
            res = ref_fprop(a, b, pad, stride, dil)
        elif kind == "dgrad":
            res = ref_dgrad(a, b, self.out.dim, pad, stride, dil)
        else:
            res = ref_wgrad(a, b, self.out.dim, pad, stride, dil)
        out[...] = res
        self.fe.executed.append((kind, plan))
        self.fe.last_time = self.fe.times[plan]


class FakeFrontend:
    """Stands in for the ``cudnn`` module (``frontend.use(FakeFrontend())``)."""

    data_type = SimpleNamespace(FLOAT="FLOAT", HALF="HALF", BFLOAT16="BFLOAT16", DOUBLE="DOUBLE")
    heur_mode = SimpleNamespace(A="A", B="B", FALLBACK="FALLBACK")
    build_plan_policy = SimpleNamespace(HEURISTICS_CHOICE="HEURISTICS_CHOICE", ALL="ALL")

    class cudnnGraphNotSupportedError(RuntimeError):  # noqa: N801 (the frontend's name)
        pass

    def __init__(self, workspaces=(0, 8 << 20, 4 << 30), times=(3.0, 1.0, 0.5), heuristic_choice=0,
                 unsupported=lambda graph: False):
        self.workspaces, self.times, self.heuristic_choice = list(workspaces), list(times), heuristic_choice
        self.unsupported = unsupported
        self.graphs, self.executed, self.handles, self.streams = [], [], [], []
        self.last_time = None

    def create_handle(self):
        h = object()
        self.handles.append(h)
        return h

    def set_stream(self, handle, stream):
        self.streams.append(stream)

    def pygraph(self, **kw):
        return FakeGraph(self, **kw)
