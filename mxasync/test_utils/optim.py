"""Comparing two optimizers step for step (MXNet's ``compare_optimizer``)."""

from __future__ import annotations

import copy
from typing import Any

from .compare import assert_almost_equal
from .sampling import default_context, rand_ndarray


def compare_ndarray_tuple(t1: Any, t2: Any, rtol: float | None = None, atol: float | None = None) -> None:
    """Assert two optimizer states (an NDArray, a nested tuple of them, or None) agree."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2, strict=True):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def _uniform(shape: Any, dtype: Any):
    from .. import ndarray as nd

    return nd.random.uniform(shape=shape, ctx=default_context(), dtype=dtype)


def compare_optimizer(opt1: Any, opt2: Any, shape: Any, dtype: Any, w_stype: str = "default",
                      g_stype: str = "default", rtol: float = 1e-4, atol: float = 1e-5,
                      compare_states: bool = True, ntensors: int = 1) -> None:
    """Run one update of ``opt1`` and ``opt2`` on the same random weight and gradient and
    assert weights (and states) agree.

    A list of shapes tests a multi-tensor ``opt2`` (one call updating ``ntensors``
    weights) against ``opt1`` updating them one at a time.
    """
    for what, st in (("w_stype", w_stype), ("g_stype", g_stype)):
        if st not in ("default", "row_sparse", "csr"):
            raise ValueError(f"compare_optimizer: unknown {what} {st!r}")
    ctx = default_context()
    if not isinstance(shape, list):
        if ntensors != 1:
            raise ValueError(f"compare_optimizer: one shape needs ntensors=1, got {ntensors}")
        # opt2 gets the arrays in the given storage types, opt1 their dense copies (MXNet's layout)
        w2 = _uniform(shape, dtype) if w_stype == "default" else rand_ndarray(shape, w_stype, density=1, dtype=dtype)
        w1 = w2.copyto(ctx).tostype("default")
        g2 = _uniform(shape, dtype) if g_stype == "default" else rand_ndarray(shape, g_stype, dtype=dtype)
        g1 = g2.copyto(ctx).tostype("default")
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(_uniform(s, dtype) for s in shape)
    g1 = tuple(_uniform(s, dtype) for s in shape)
    w2 = copy.deepcopy(w1)
    g2 = copy.deepcopy(g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)
