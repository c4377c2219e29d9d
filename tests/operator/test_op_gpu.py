"""The op table on the gpu context (CuPy), compared with the CPU results; skipped without a GPU."""

from __future__ import annotations

import numpy as np
import pytest
from harness import WRITE_TO, forward, prepare, requested, tol
from table import CASES

import mxasync as mx
from mxasync.operator import OpContext

pytestmark = pytest.mark.gpu


def _gpu_backend():
    try:
        from mxasync.backends import get_backend

        return get_backend("gpu")
    except Exception as exc:  # no cupy, no device
        pytest.skip(f"no GPU backend: {exc}")


PARAMS = [pytest.param(c, c.shapes[0], id=c.id) for c in CASES if c.check is None]


@pytest.mark.parametrize("case,shapes", PARAMS)
def test_forward_and_backward_match_cpu(case, shapes):
    backend = _gpu_backend()
    cp = backend.xp
    ctx = mx.gpu(0)
    dtype = "float32"
    rng = np.random.default_rng(0)
    inputs = case.inputs(rng, shapes, dtype)
    aux = case.aux(np.random.default_rng(1), shapes, dtype) if case.aux else []
    cpu_outs = forward(case.op, case.params, [x.copy() for x in inputs], [a.copy() for a in aux],
                       is_train=case.is_train)
    prop = prepare(case.op, case.params)
    g_in = [cp.asarray(x) for x in inputs]
    g_aux = [cp.asarray(a) for a in aux]
    g_out = [cp.empty(o.shape, dtype=o.dtype) for o in cpu_outs]
    stream = backend.device_hooks().stream(ctx, "compute")
    op_ctx = OpContext(case.is_train, mx.runtime.RunContext(ctx, stream), requested(prop, ctx, case.is_train))
    prop.forward_fn(ctx)(op_ctx, g_in, [WRITE_TO] * len(g_out), g_out, g_aux)
    stream.synchronize()
    for g, c in zip(g_out[: prop.num_visible_outputs()], cpu_outs, strict=False):
        np.testing.assert_allclose(cp.asnumpy(g), c, **tol(dtype), err_msg=case.id)
