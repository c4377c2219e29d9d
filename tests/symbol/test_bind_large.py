"""Binding scales to deep graphs: every bind pass is linear (or n log n), none recurses.

A 20,000-node chain must bind and run with the interpreter's recursion limit
unchanged (times are in benchmarks/executor.py, never asserted here).
"""

from __future__ import annotations

import sys

import numpy as np

import mxasync as mx
from mxasync.executor.memory import PlanOp, plan_memory


def test_20k_node_chain_binds_and_runs():
    limit = sys.getrecursionlimit()
    n = 20_000
    h = mx.sym.Variable("data")
    for i in range(n):
        h = mx.sym.Activation(h, act_type="relu", name=f"a{i}") if i % 2 else h * 1.0001
    exe = h.simple_bind(mx.cpu(), data=(2, 3))
    x = np.array([[-1.0, 0.5, 2.0], [3.0, -4.0, 1.0]], np.float32)
    out = exe.forward(is_train=True, data=x)[0].asnumpy()
    scale = np.float32(1.0001) ** (n // 2)
    np.testing.assert_allclose(out, np.maximum(x, 0) * scale, rtol=1e-3)
    exe.backward(mx.nd.ones((2, 3)))
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), (x > 0) * scale, rtol=1e-3)
    assert sys.getrecursionlimit() == limit
    assert len(exe._ops) == 2 * n


def test_planner_best_fit_is_unchanged_by_the_sorted_free_list():
    # free blocks of 100, 400 and 1600 bytes (freed in that order), then requests that must pick:
    # the smallest that fits within 16x, else the largest smaller one (grown), ties: freed first
    ops = [PlanOp([], [0]), PlanOp([], [1]), PlanOp([], [2]), PlanOp([0, 1, 2], [3]),
           PlanOp([], [4]), PlanOp([], [5]), PlanOp([], [6]), PlanOp([3, 4, 5, 6], [7])]
    nbytes = [100, 400, 1600, 8, 300, 1000, 5000, 8]
    plan = plan_memory(nbytes, ops, external=set(), persistent={7})
    assert plan.storage[4] == plan.storage[1]  # 300 -> the 400 block (smallest that fits)
    assert plan.storage[5] == plan.storage[2]  # 1000 -> the 1600 block
    assert plan.storage[6] == plan.storage[0] or plan.block_sizes[plan.storage[6]] == 5000
    assert plan.block_sizes[plan.storage[4]] == 400
