"""Operator benchmarks: prints JSON.

Each NN op runs forward+backward through the operator layer (prepare, the
cached operator, assign into preallocated outputs) and is compared with the
best plain-numpy formulation of the same computation, in the same run.  The
imperative fast path (prepare + infer_shape + infer_type + forward of
``elemwise_add`` on tiny arrays) is timed per call.

    python benchmarks/ops.py [--quick]
"""

from __future__ import annotations

import json
import sys
import time
import timeit

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import mxasync as mx
from mxasync.operator import OpContext, get_op
from mxasync.operator.base import WRITE_TO

CTX = mx.cpu()


def best(fn, repeat=5, number=1):
    fn()  # warm up
    return min(timeit.repeat(fn, repeat=repeat, number=number)) / number


def op_step(name, params, inputs, aux=(), is_train=True):
    prop = get_op(name).prepare(**params)
    _, oshapes, _ = prop.infer_shape([x.shape for x in inputs])
    outs = [np.empty(s, inputs[0].dtype) for s in oshapes]
    grads = [np.empty_like(x) for x in inputs]
    heads = [np.ones(s, inputs[0].dtype) for s in oshapes]
    fwd, bwd = prop.forward_fn(CTX), prop.backward_fn(CTX)
    oc = OpContext(is_train, None, [])
    req_o, req_i = [WRITE_TO] * len(outs), [WRITE_TO] * len(inputs)

    def step():
        fwd(oc, inputs, req_o, outs, list(aux))
        bwd(oc, heads, inputs, outs, req_i, grads, list(aux))

    return step


def np_fc(x, w, b):
    def step():
        y = x @ w.T
        y += b
        g = np.ones_like(y)
        return g @ w, g.T @ x, g.sum(0)

    return step


def np_conv(x, w, b, pad):
    def step():
        xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))) if pad else x
        win = sliding_window_view(xp, w.shape[2:], axis=(2, 3))  # N C H W kh kw
        y = np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)
        y += b.reshape(1, -1, 1, 1)
        g = np.ones_like(y)
        gw = np.tensordot(g, win, axes=([0, 2, 3], [0, 2, 3]))
        cols = np.tensordot(g, w, axes=([1], [0]))  # N H W C kh kw
        gx = np.zeros_like(xp)
        kh, kw = w.shape[2:]
        for i in range(kh):
            for j in range(kw):
                gx[:, :, i:i + y.shape[2], j:j + y.shape[3]] += cols[..., i, j].transpose(0, 3, 1, 2)
        return gw, gx, g.sum((0, 2, 3))

    return step


def np_pool(x, k):
    def step():
        n, c, h, w = x.shape
        v = x.reshape(n, c, h // k, k, w // k, k)
        y = v.max(axis=(3, 5))
        mask = v == y[:, :, :, None, :, None]
        return y, (mask * np.ones_like(y)[:, :, :, None, :, None]).reshape(x.shape)

    return step


def np_bn(x, gamma, beta, eps=1e-3):
    def step():
        axes = (0, 2, 3)
        mean = x.mean(axes, keepdims=True)
        d = x - mean
        var = (d * d).mean(axes, keepdims=True)
        inv = 1 / np.sqrt(var + eps)
        xhat = d * inv
        y = xhat * gamma.reshape(1, -1, 1, 1) + beta.reshape(1, -1, 1, 1)
        g = np.ones_like(y)
        m = x.shape[0] * x.shape[2] * x.shape[3]
        gb = g.sum(axes)
        gg = (g * xhat).sum(axes)
        gx = gamma.reshape(1, -1, 1, 1) * inv / m * (m * g - gb.reshape(1, -1, 1, 1) - xhat * gg.reshape(1, -1, 1, 1))
        return y, gx

    return step


def fast_path(n=200_000):
    a = np.ones((2, 3), np.float32)
    b = np.ones((2, 3), np.float32)
    c = np.empty_like(a)
    op = get_op("elemwise_add")
    oc, req = OpContext(), [WRITE_TO]

    def step():
        p = op.prepare()
        p.infer_shape([a.shape, b.shape])
        p.infer_type([a.dtype, b.dtype])
        p.forward_fn(CTX)(oc, [a, b], req, [c], [])

    step()
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    total = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    for _ in range(n):
        np.add(a, b, out=c)
    raw = (time.perf_counter() - t0) / n
    return {"op_layer_us": round(total * 1e6, 3), "numpy_add_us": round(raw * 1e6, 3),
            "overhead_us": round((total - raw) * 1e6, 3)}


def main(quick: bool = False) -> dict:
    rng = np.random.default_rng(0)
    f32 = np.float32
    r = lambda *s: rng.standard_normal(s).astype(f32)  # noqa: E731
    bs = 16 if quick else 64
    cases = {}
    x, w, b = r(bs, 784), r(512, 784), r(512)
    cases["FullyConnected 784->512"] = (op_step("FullyConnected", dict(num_hidden=512), [x, w, b]), np_fc(x, w, b))
    x, w, b = r(bs, 1, 28, 28), r(20, 1, 5, 5), r(20)
    cases["Convolution LeNet 1x28x28 k5 f20"] = (
        op_step("Convolution", dict(kernel=(5, 5), num_filter=20), [x, w, b]), np_conv(x, w, b, 0))
    n = 2 if quick else 8
    x, w, b = r(n, 64, 56, 56), r(64, 64, 3, 3), r(64)
    cases["Convolution ResNet 64x56x56 k3 f64 pad1"] = (
        op_step("Convolution", dict(kernel=(3, 3), num_filter=64, pad=(1, 1)), [x, w, b]), np_conv(x, w, b, 1))
    x = r(n, 64, 56, 56)
    cases["Pooling max 2x2/2 64x56x56"] = (op_step("Pooling", dict(kernel=(2, 2), stride=(2, 2)), [x]), np_pool(x, 2))
    g, be = np.ones(64, f32), np.zeros(64, f32)
    aux = [np.zeros(64, f32), np.ones(64, f32)]
    cases["BatchNorm 64x56x56 train"] = (op_step("BatchNorm", dict(fix_gamma=False), [x, g, be], aux),
                                         np_bn(x, g, be))
    results = {}
    for name, (ours, plain) in cases.items():
        t_ours = best(ours, repeat=3 if quick else 5)
        t_np = best(plain, repeat=3 if quick else 5)
        results[name] = {"mxasync_ms": round(t_ours * 1e3, 3), "numpy_ms": round(t_np * 1e3, 3),
                         "ratio": round(t_ours / t_np, 3)}
    return {"device": "cpu", "fwd_bwd": results, "imperative_fast_path": fast_path(20_000 if quick else 200_000)}


if __name__ == "__main__":
    print(json.dumps(main("--quick" in sys.argv), indent=2))
