"""The optimizer kernels run block by block (and split over the kernel threads, each range block by block)
give the bits of one whole-array run, at sizes below, at and across block boundaries: a block skipped or
done twice would change the result."""

from __future__ import annotations

import numpy as np
import pytest

from mxasync.backends.numpy import parallel
from mxasync.backends.numpy.kernels import blocked as _blocked
from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.base import WRITE_INPLACE, WRITE_TO
from mxasync.operator.kernels import optimizer as k_optimizer
from mxasync.operator.optimizer.multi_sgd import MultiSGDMomParam, MultiSGDParam, update_groups

KERNELS = {  # name: (states, extra params)
    "sgd_update": (0, {}),
    "sgd_mom_update": (1, dict(momentum=0.9)),
    "nag_mom_update": (1, dict(momentum=0.85)),
    "adam_update": (2, dict(beta1=0.8, beta2=0.95, epsilon=1e-6)),
    "rmsprop_update": (1, dict(gamma1=0.9, epsilon=1e-6, clip_weights=0.9)),
    "rmspropalex_update": (3, dict(gamma1=0.9, gamma2=0.8, epsilon=1e-6)),
    "adagrad_update": (1, dict(epsilon=1e-7)),
}
BLOCK_BYTES = _blocked.BLOCK_BYTES  # the library's, before any test patches it
PARAMS = {"plain": dict(lr=0.1), "wd-clip": dict(lr=0.05, wd=0.01, rescale_grad=0.5, clip_gradient=0.6)}


def _sizes(dtype) -> list[int]:
    b = _blocked.block_size(dtype)
    return [1, b - 1, b, b + 1, 3 * b + 7]


def _arrays(name: str, n: int, dtype, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    w, g = rng.standard_normal(n).astype(dtype), (3 * rng.standard_normal(n)).astype(dtype)
    states = [np.abs(rng.standard_normal(n)).astype(dtype) for _ in range(KERNELS[name][0])]
    if name == "rmspropalex_update":  # keep n - g^2 positive
        states[0] += 1
        states[1] *= 0.1
    return [w, g, *states]


def _mode(monkeypatch, mode: str) -> None:
    """'whole': one call over the whole arrays; 'blocked': one thread; 'split': blocked ranges on 3 threads."""
    monkeypatch.setattr(parallel, "CHECK_LOAD", False)
    monkeypatch.setattr(parallel, "_NTHREADS", 3 if mode == "split" else 1)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 1 if mode == "split" else 1 << 40)
    monkeypatch.setattr(_blocked, "BLOCK_BYTES", 1 << 50 if mode == "whole" else BLOCK_BYTES)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("params", sorted(PARAMS))
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_blocked_kernel_is_bit_identical_to_whole_array(monkeypatch, name, params, dtype):
    kwargs = dict(PARAMS[params], **KERNELS[name][1])
    for n in _sizes(dtype):
        results = {}
        for mode in ("whole", "blocked", "split"):
            _mode(monkeypatch, mode)
            arrays = _arrays(name, n, dtype)
            getattr(k_optimizer, name)(np, *arrays, run=NUMPY, **kwargs)
            results[mode] = arrays
        before = _arrays(name, n, dtype)
        assert not np.array_equal(results["whole"][0], before[0])  # the update did something
        np.testing.assert_array_equal(results["whole"][1], before[1])  # the gradient is left alone
        for mode in ("blocked", "split"):
            for i, (a, b) in enumerate(zip(results[mode], results["whole"], strict=True)):
                np.testing.assert_array_equal(a, b, err_msg=f"{name} n={n} {mode}: array {i}")


def test_blocks_cover_every_element_once(monkeypatch):
    _mode(monkeypatch, "blocked")
    b = _blocked.block_size(np.float64)
    sizes = []

    def add_one(view, tmp):
        sizes.append(view.size)
        tmp[...] = 1
        view += tmp

    for n in _sizes(np.float64):
        x = np.zeros(n)
        sizes.clear()
        _blocked.blocked(add_one, x, scratch=1)
        np.testing.assert_array_equal(x, 1.0)
        assert len(sizes) == -(-n // b) and sum(sizes) == n


def test_small_or_strided_arrays_take_one_direct_call(monkeypatch):
    _mode(monkeypatch, "blocked")
    calls = []
    small = np.ones((3, 4), np.float32)
    strided = np.ones((4 * _blocked.block_size(np.float32), 2), np.float32)[:, 0]
    for w in (small, strided):
        _blocked.blocked(lambda w, tmp: calls.append((w, tmp.shape)), w, scratch=1)
    assert [c[0] is w for c, w in zip(calls, (small, strided), strict=True)] == [True, True]
    assert [c[1] for c in calls] == [small.shape, strided.shape]


def _group_run(monkeypatch, mode, mom, mp, sizes, in_place):
    _mode(monkeypatch, mode)
    rng = np.random.default_rng(1)
    low = np.float16 if mp else np.float32
    ins, outs = [], []
    for n in sizes:
        w = rng.standard_normal(n).astype(low)
        group = [w, (3 * rng.standard_normal(n)).astype(low)]
        if mom:
            group.append(rng.standard_normal(n).astype(np.float32))
        if mp:
            group.append(w.astype(np.float32))
        ins += group
        outs.append(w if in_place else np.zeros_like(w))
    k = len(sizes)
    cls = MultiSGDMomParam if mom else MultiSGDParam
    p = cls(lrs=[0.1 * (i + 1) for i in range(k)], wds=[0.0, 1e-3, 0.01, 0.1][:k], rescale_grad=0.5,
            clip_gradient=0.8 if mp else -1.0, num_weights=k, **(dict(momentum=0.9) if mom else {}))
    req = [WRITE_INPLACE if in_place else WRITE_TO] * k
    update_groups(np, p, ins, req, outs, 2 + mom + mp, mom, mp, p.lrs, p.wds, NUMPY)
    return ins, outs


@pytest.mark.parametrize("mom", [False, True])
@pytest.mark.parametrize("mp", [False, True])
def test_fused_multi_sgd_blocked_matches_whole_array(monkeypatch, mom, mp):
    b = _blocked.block_size(np.float32)
    sizes = [1, b - 1, b + 1, 3 * b + 7]
    ins, outs = _group_run(monkeypatch, "whole", mom, mp, sizes, in_place=True)
    for mode, in_place in (("blocked", True), ("split", True), ("blocked", False)):
        ins2, outs2 = _group_run(monkeypatch, mode, mom, mp, sizes, in_place)
        for i, (a, c) in enumerate(zip(outs2, outs, strict=True)):
            np.testing.assert_array_equal(a, c, err_msg=f"{mode} in_place={in_place}: output {i}")
        per = 2 + mom + mp
        for i, (a, c) in enumerate(zip(ins2, ins, strict=True)):
            if i % per == 0 and not in_place:
                continue  # the weight is left alone when its output is another array
            np.testing.assert_array_equal(a, c, err_msg=f"{mode} in_place={in_place}: input {i}")
