"""Every registered op: forward vs numpy, numerical gradient, and every OpReqType."""

from __future__ import annotations

import numpy as np
import pytest
from harness import ADD_TO, GRAD_TOL, NULL, WRITE_INPLACE, WRITE_TO, backward, forward, numeric_grad, prepare, tol
from table import CASES

from mxasync.operator import get_op, list_ops

PARAMS = [pytest.param(c, shapes, id=f"{c.id}-{i}") for c in CASES for i, shapes in enumerate(c.shapes)]


def _inputs(case, shapes, dtype, seed=0):
    return case.inputs(np.random.default_rng(seed), shapes, dtype)


def _aux(case, shapes, dtype):
    return case.aux(np.random.default_rng(1), shapes, dtype) if case.aux else []


def _expected(case, inputs, aux):
    res = case.ref(*[x.copy() for x in inputs], *[a.copy() for a in aux], **case.params)
    return list(res) if isinstance(res, (tuple, list)) else [res]


def _check(case, outs, inputs, aux, dtype, exp):
    if case.check is not None:
        case.check(outs, inputs, case.params)
        return
    prop = prepare(case.op, case.params)
    for o, e in zip(outs[: prop.num_visible_outputs()], exp, strict=False):
        want = np.shape(e) if case.np_shape else (np.shape(e) or (1,))  # MXNet 1.x: a scalar result is (1,)
        assert o.shape == want, f"{case.id}: shape {o.shape} != {want}"
        np.testing.assert_allclose(o, e, **tol(dtype), err_msg=case.id)


def test_every_registered_op_has_a_table_entry():
    covered = {get_op(c.op).name for c in CASES}
    # ops registered by doctests and tests themselves are named _doc_* / _test_*
    missing = sorted(n for n in set(list_ops()) - covered if not n.startswith(("_doc_", "_test_")))
    assert not missing, f"ops without a row in tests/operator/table*.py: {missing}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case,shapes", PARAMS)
def test_forward(case, shapes, dtype):
    if dtype not in case.dtypes:
        pytest.skip(f"{case.op} does not take {dtype}")
    inputs = _inputs(case, shapes, dtype)
    aux = _aux(case, shapes, dtype)
    exp = None if case.check else _expected(case, inputs, aux)  # before forward: update ops mutate inputs
    outs = forward(case.op, case.params, [x.copy() for x in inputs], [a.copy() for a in aux], is_train=case.is_train)
    _check(case, outs, inputs, aux, dtype, exp)


@pytest.mark.parametrize("case,shapes", PARAMS)
def test_req(case, shapes):
    """ADD_TO adds, NULL leaves the output alone, in-place gives the same result."""
    if case.check is not None:
        pytest.skip("random op: checked by its own test")
    dtype = "float64"
    inputs = _inputs(case, shapes, dtype)
    aux = _aux(case, shapes, dtype)
    base = forward(case.op, case.params, [x.copy() for x in inputs], [a.copy() for a in aux], is_train=case.is_train)
    prop = prepare(case.op, case.params)
    n = prop.num_visible_outputs()
    init = [np.full(o.shape, 0.25, o.dtype) for o in base]
    added = forward(case.op, case.params, [x.copy() for x in inputs], [a.copy() for a in aux], req=ADD_TO,
                    outs=[i.copy() for i in init], is_train=case.is_train)
    for a, b, i in zip(added[:n], base[:n], init, strict=False):
        np.testing.assert_allclose(a, b + i, rtol=1e-12, atol=1e-12, err_msg=f"{case.id}: ADD_TO")
    kept = forward(case.op, case.params, [x.copy() for x in inputs], [a.copy() for a in aux], req=NULL,
                   outs=[i.copy() for i in init], is_train=case.is_train)
    for k, i in zip(kept, init, strict=False):
        np.testing.assert_array_equal(k, i, err_msg=f"{case.id}: NULL")
    pairs = prop.forward_inplace_option(list(range(len(inputs))), list(range(len(base))))
    if pairs and case.inplace:
        xs = [x.copy() for x in inputs]
        i, o = pairs[0]
        if xs[i].shape == base[o].shape and xs[i].dtype == base[o].dtype:
            outs = [b.copy() for b in base]
            outs[o] = xs[i]
            forward(case.op, case.params, xs, [a.copy() for a in aux], req=WRITE_INPLACE, outs=outs,
                    is_train=case.is_train)
            np.testing.assert_allclose(outs[o], base[o], rtol=1e-12, err_msg=f"{case.id}: in place")


@pytest.mark.parametrize("case,shapes", PARAMS)
def test_gradient(case, shapes):
    if not case.grad or case.check is not None:
        pytest.skip("no gradient to check")
    if "float64" not in case.dtypes:
        pytest.skip("float32-only op: gradient checked in float32 elsewhere")
    dtype = "float64"
    inputs = _inputs(case, shapes, dtype)
    aux = _aux(case, shapes, dtype)
    outs = forward(case.op, case.params, [x.copy() for x in inputs], [a.copy() for a in aux], is_train=True)
    rng = np.random.default_rng(7)
    prop = prepare(case.op, case.params)
    n = prop.num_visible_outputs()
    head = [rng.uniform(0.5, 1.5, o.shape) if k < n else np.zeros(o.shape) for k, o in enumerate(outs)]
    wrt = case.wrt if case.wrt is not None else tuple(range(len(inputs)))
    grads = backward(case.op, case.params, inputs, outs, head, aux, req=[WRITE_TO if i in wrt else NULL
                                                                        for i in range(len(inputs))])
    if case.grad == "zero":
        for i in wrt:
            np.testing.assert_array_equal(grads[i], 0, err_msg=f"{case.id}: grad of input {i}")
        return
    num = numeric_grad(case.op, case.params, inputs, head, aux, wrt=wrt)
    for i in wrt:
        np.testing.assert_allclose(grads[i], num[i], **GRAD_TOL, err_msg=f"{case.id}: grad of input {i}")
    # ADD_TO on the gradient adds to what is there
    init = [np.full(x.shape, 0.5) for x in inputs]
    added = backward(case.op, case.params, inputs, outs, head, aux, req=[ADD_TO if i in wrt else NULL
                                                                        for i in range(len(inputs))],
                     grads=[g.copy() for g in init])
    for i in wrt:
        np.testing.assert_allclose(added[i], grads[i] + 0.5, rtol=1e-10, atol=1e-12, err_msg=f"{case.id}: grad ADD_TO")
