"""Forward + backward times of the NN kernels against the best plain-numpy formulation.

    python benchmarks/kernels.py [--repeat N] [--sweeps N] [--only NAME]

Prints JSON: for every workload, our kernel's forward/backward milliseconds (best of
``sweeps x repeat`` runs), the same for each hand-written numpy formulation of the same maths, and
the ratio of our total to the fastest of those. float32 throughout. Never asserts.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import time
import types
from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.kernels import batch_norm, fully_connected, pooling
from mxasync.operator.kernels.conv import convolution


def _as_the_numpy_backend_runs(module, *names):
    """The kernels as the numpy backend's overrides call them: with its runner."""
    return types.SimpleNamespace(**{n: functools.partial(getattr(module, n), run=NUMPY) for n in names})


k_batch_norm = _as_the_numpy_backend_runs(batch_norm, "batch_norm", "batch_norm_backward")
k_fully_connected = _as_the_numpy_backend_runs(fully_connected, "fully_connected", "fully_connected_backward")
k_pooling = _as_the_numpy_backend_runs(pooling, "pooling", "pooling_backward")
k_convolution = _as_the_numpy_backend_runs(convolution, "convolution", "convolution_backward")


def best_ms(candidates: dict[str, tuple[Callable, Callable]], repeat: int, sweeps: int = 3) -> dict[str, dict]:
    """Best forward/backward ms per candidate over ``sweeps`` rounds of ``repeat`` back-to-back runs.

    Back-to-back runs measure each candidate in its steady state (as in a training
    loop, after itself rather than after another candidate's memory traffic);
    sweeping over the candidates several times keeps a burst of load from another
    process from landing on one candidate only. The minimum approximates the
    undisturbed time.
    """
    best = {name: [float("inf"), float("inf")] for name in candidates}
    for _ in range(sweeps):
        for name, (fwd, bwd) in candidates.items():
            for i, fn in enumerate((fwd, bwd)):
                fn()  # warm-up: first-touch page faults, BLAS threads, caches
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    fn()
                    best[name][i] = min(best[name][i], time.perf_counter() - t0)
    return {
        name: {"forward_ms": 1e3 * f, "backward_ms": 1e3 * b, "total_ms": 1e3 * (f + b)}
        for name, (f, b) in best.items()
    }


# ------------------------------------------------------------------ plain-numpy formulations


def fc_numpy(x, w, b, dy):
    fwd = lambda: x @ w.T + b  # noqa: E731
    bwd = lambda: (dy @ w, dy.T @ x, dy.sum(0))  # noqa: E731
    return {"matmul": (fwd, bwd)}


def _windows(x, k, pad):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))) if pad else x
    return sliding_window_view(xp, (k, k), axis=(2, 3))  # (N, C, OH, OW, k, k), a view


def conv_numpy(x, w, b, dy, pad):
    """Stride-1 2-D convolution three ways; backward data as a full correlation with flipped weights."""
    k = w.shape[2]
    n, c, h, wd = x.shape
    f = w.shape[0]
    oh, ow = dy.shape[2:]
    w_flip = np.ascontiguousarray(w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3))  # (C, F, k, k)

    def fwd_tensordot():
        out = np.tensordot(_windows(x, k, pad), w, axes=([1, 4, 5], [1, 2, 3]))  # (N, OH, OW, F)
        return out.transpose(0, 3, 1, 2) + b.reshape(1, -1, 1, 1)

    def fwd_einsum():
        return np.einsum("ncijkl,fckl->nfij", _windows(x, k, pad), w, optimize=True) + b.reshape(1, -1, 1, 1)

    def fwd_im2col_matmul():
        cols = _windows(x, k, pad).transpose(0, 1, 4, 5, 2, 3).reshape(n, c * k * k, oh * ow)
        return (w.reshape(f, -1) @ cols).reshape(n, f, oh, ow) + b.reshape(1, -1, 1, 1)

    def bwd_tensordot():
        dw = np.tensordot(dy, _windows(x, k, pad), axes=([0, 2, 3], [0, 2, 3]))  # (F, C, k, k)
        dx = np.tensordot(_windows(dy, k, k - 1 - pad), w_flip, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)
        return dx, dw, dy.sum(axis=(0, 2, 3))

    def bwd_einsum():
        dw = np.einsum("nfij,ncijkl->fckl", dy, _windows(x, k, pad), optimize=True)
        dx = np.einsum("nfijkl,cfkl->ncij", _windows(dy, k, k - 1 - pad), w_flip, optimize=True)
        return dx, dw, dy.sum(axis=(0, 2, 3))

    def bwd_im2col_matmul():
        cols = _windows(x, k, pad).transpose(0, 1, 4, 5, 2, 3).reshape(n, c * k * k, oh * ow)
        dy3 = dy.reshape(n, f, oh * ow)
        dw = (dy3 @ cols.transpose(0, 2, 1)).sum(0).reshape(w.shape)
        dcols = _windows(dy, k, k - 1 - pad).transpose(0, 1, 4, 5, 2, 3).reshape(n, f * k * k, h * wd)
        dx = (w_flip.reshape(c, -1) @ dcols).reshape(x.shape)
        return dx, dw, dy.sum(axis=(0, 2, 3))

    def offset_cols():
        xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        cols = np.empty((n, c, k, k, oh, ow), x.dtype)
        for a in range(k):
            for e in range(k):
                cols[:, :, a, e] = xp[:, :, a : a + oh, e : e + ow]
        return cols.reshape(n, c * k * k, oh * ow)

    def fwd_offsets():
        return (w.reshape(f, -1) @ offset_cols()).reshape(n, f, oh, ow) + b.reshape(1, -1, 1, 1)

    def bwd_offsets():
        dy3 = dy.reshape(n, f, oh * ow)
        dw = (dy3 @ offset_cols().transpose(0, 2, 1)).sum(0).reshape(w.shape)
        dcols = (w.reshape(f, -1).T @ dy3).reshape(n, c, k, k, oh, ow)
        acc = np.zeros((n, c, h + 2 * pad, wd + 2 * pad), x.dtype)
        for a in range(k):
            for e in range(k):
                acc[:, :, a : a + oh, e : e + ow] += dcols[:, :, a, e]
        return acc[:, :, pad : pad + h, pad : pad + wd], dw, dy.sum(axis=(0, 2, 3))

    return {
        "offset-copy im2col+batched matmul, col2im": (fwd_offsets, bwd_offsets),
        "sliding_window+tensordot": (fwd_tensordot, bwd_tensordot),
        "sliding_window+einsum(optimize)": (fwd_einsum, bwd_einsum),
        "sliding_window im2col+matmul": (fwd_im2col_matmul, bwd_im2col_matmul),
    }


def pool_numpy(x, dy, k, s, pad):
    """Max pooling: window max on a strided view; backward by argmax + scatter, or by mask."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf) if pad else x
    oh, ow = dy.shape[2:]

    def win():
        return sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::s, ::s][:, :, :oh, :ow]

    def fwd():
        return win().max(axis=(4, 5))

    def bwd_argmax_addat():
        arg = win().reshape(*dy.shape, k * k).argmax(-1)
        n, c = dy.shape[:2]
        ii, jj = np.meshgrid(np.arange(oh) * s, np.arange(ow) * s, indexing="ij")
        rows, cols = ii + arg // k, jj + arg % k
        g = np.zeros(xp.shape, dy.dtype)
        nn, cc = np.meshgrid(np.arange(n), np.arange(c), indexing="ij")
        np.add.at(g, (nn[..., None, None], cc[..., None, None], rows, cols), dy)
        return g[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]]

    def bwd_mask():
        out = fwd()
        g = np.zeros(xp.shape, dy.dtype)
        for a in range(k):
            for b in range(k):
                sl = (slice(None), slice(None), slice(a, a + s * (oh - 1) + 1, s), slice(b, b + s * (ow - 1) + 1, s))
                g[sl] += dy * (xp[sl] == out)
        return g[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]]

    def offsets():
        return [
            (slice(None), slice(None), slice(a, a + s * (oh - 1) + 1, s), slice(b, b + s * (ow - 1) + 1, s))
            for a in range(k)
            for b in range(k)
        ]

    def fwd_offsets():
        out = xp[offsets()[0]].copy()
        for sl in offsets()[1:]:
            np.maximum(out, xp[sl], out=out)
        return out

    def bwd_offsets_argmax():
        sls = offsets()
        arg = np.stack([xp[sl] for sl in sls]).argmax(axis=0)
        g = np.zeros(xp.shape, dy.dtype)
        for i, sl in enumerate(sls):
            g[sl] += dy * (arg == i)
        return g[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]]

    return {
        "offset-loop max + stacked argmax": (fwd_offsets, bwd_offsets_argmax),
        "sliding_window max + argmax/add.at": (fwd, bwd_argmax_addat),
        "sliding_window max + mask": (fwd, bwd_mask),
    }


def bn_numpy(x, g, b, dy, eps=1e-3):
    axes = (0, 2, 3)
    sh = (1, -1, 1, 1)

    def fwd():
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        return (x - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) * g.reshape(sh) + b.reshape(sh)

    def bwd():
        m = x.size // x.shape[1]
        mean = x.mean(axis=axes)
        invstd = 1 / np.sqrt(x.var(axis=axes) + eps)
        xhat = (x - mean.reshape(sh)) * invstd.reshape(sh)
        dbeta, dgamma = dy.sum(axis=axes), (dy * xhat).sum(axis=axes)
        dx = (g * invstd).reshape(sh) / m * (m * dy - dbeta.reshape(sh) - xhat * dgamma.reshape(sh))
        return dx, dgamma, dbeta

    return {"textbook": (fwd, bwd)}


# ------------------------------------------------------------------ workloads


def workloads(rng):
    r = lambda *s: rng.standard_normal(s, dtype=np.float32)  # noqa: E731

    x, w, b, dy = r(128, 784), r(512, 784), r(512), r(128, 512)
    yield (
        "FullyConnected 128x784->512",
        (lambda: k_fully_connected.fully_connected(np, x, w, b, 512), lambda: k_fully_connected.fully_connected_backward(np, dy, x, w, 512)),
        fc_numpy(x, w, b, dy),
    )

    for name, (n, c, h, f, k, pad) in {
        "Convolution LeNet 64x1x28x28, 20 5x5": (64, 1, 28, 20, 5, 0),
        "Convolution ResNet 32x64x56x56, 64 3x3 pad 1": (32, 64, 56, 64, 3, 1),
    }.items():
        x, w, b = r(n, c, h, h), r(f, c, k, k) * 0.1, r(f)
        o = h + 2 * pad - k + 1
        dy = r(n, f, o, o)
        kw = dict(kernel=(k, k), pad=(pad, pad), num_filter=f)
        yield (
            name,
            (
                lambda x=x, w=w, b=b, kw=kw: k_convolution.convolution(np, x, w, b, **kw),
                lambda x=x, w=w, dy=dy, kw=kw: k_convolution.convolution_backward(np, dy, x, w, **kw),
            ),
            conv_numpy(x, w, b, dy, pad),
        )

    for name, (shape, k, s, pad) in {
        "Pooling max LeNet 64x20x24x24, 2x2 s2": ((64, 20, 24, 24), 2, 2, 0),
        "Pooling max ResNet 32x64x56x56, 3x3 s2 pad 1": ((32, 64, 56, 56), 3, 2, 1),
    }.items():
        x = r(*shape)
        kw = dict(kernel=(k, k), stride=(s, s), pad=(pad, pad), pool_type="max")
        dy = r(*k_pooling.pooling(np, x, **kw).shape)
        yield (
            name,
            (lambda x=x, kw=kw: k_pooling.pooling(np, x, **kw), lambda x=x, dy=dy, kw=kw: k_pooling.pooling_backward(np, dy, x, **kw)),
            pool_numpy(x, dy, k, s, pad),
        )

    for name, shape in {
        "BatchNorm LeNet 64x20x24x24": (64, 20, 24, 24),
        "BatchNorm ResNet 32x64x56x56": (32, 64, 56, 56),
    }.items():
        x, dy = r(*shape), r(*shape)
        c = shape[1]
        g, b, mm, mv = r(c) + 2, r(c), np.zeros(c, np.float32), np.ones(c, np.float32)
        _, mean, invstd = k_batch_norm.batch_norm(np, x, g, b, mm, mv, fix_gamma=False)
        yield (
            name,
            (
                lambda x=x, g=g, b=b, mm=mm, mv=mv: k_batch_norm.batch_norm(np, x, g, b, mm, mv, fix_gamma=False),
                # backward recomputes nothing from the forward but mean/invstd, which it is handed
                lambda x=x, g=g, dy=dy, mean=mean, invstd=invstd: k_batch_norm.batch_norm_backward(
                    np, dy, x, g, mean, invstd, fix_gamma=False
                ),
            ),
            bn_numpy(x, g, b, dy),
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="back-to-back runs per candidate and sweep")
    ap.add_argument("--sweeps", type=int, default=3, help="rounds over all candidates")
    ap.add_argument("--only", default="", help="run workloads whose name contains this")
    args = ap.parse_args()
    results = {}
    for name, (fwd, bwd), alternatives in workloads(np.random.default_rng(0)):
        if args.only not in name:
            continue
        times = best_ms({"mxasync": (fwd, bwd), **alternatives}, args.repeat, args.sweeps)
        ours = times.pop("mxasync")
        numpy_runs = times
        best = min(numpy_runs, key=lambda a: numpy_runs[a]["total_ms"])
        results[name] = {
            "mxasync": {k: round(v, 2) for k, v in ours.items()},
            "numpy": {a: {k: round(v, 2) for k, v in t.items()} for a, t in numpy_runs.items()},
            "best_numpy": best,
            "ratio_total_vs_best_numpy": round(ours["total_ms"] / numpy_runs[best]["total_ms"], 3),
        }
    info = {
        "numpy": np.__version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "dtype": "float32",
        "repeat": args.repeat,
        "sweeps": args.sweeps,
        "timing": "best of sweeps x repeat back-to-back runs, milliseconds",
    }
    print(json.dumps({"machine": info, "results": results}, indent=2))


if __name__ == "__main__":
    main()
