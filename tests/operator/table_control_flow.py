"""Table rows: the control-flow ops (_foreach, _while_loop, _cond) with subgraphs traced by mx.sym.contrib,
against numpy loops."""

from __future__ import annotations

import numpy as np
from cases import Case, uniform

import mxasync as mx
from mxasync.symbol._node import op_params


def _node_params(sym, inputs):
    node = sym._heads[0][0]
    names = [e[0].name for e in node.inputs]
    assert names == inputs, f"{node.op.name} inputs {names}, table expects {inputs}"
    return op_params(node.attrs)


def _foreach_params():
    outs, states = mx.sym.contrib.foreach(lambda x, s: (x * s[0], [s[0] + x * x]), mx.sym.var("d"),
                                          [mx.sym.var("s")])
    return _node_params(outs, ["d", "s"])


def _foreach_ref(d, s, **_):
    outs = []
    for x in d:
        outs.append(x * s)
        s = s + x * x
    return np.stack(outs), s


def _while_params():
    outs, _ = mx.sym.contrib.while_loop(lambda i, s: i < 2.5, lambda i, s: (s * 2, (i + 1, s * s + 0.5)),
                                        [mx.sym.var("i"), mx.sym.var("s")], max_iterations=4)
    return _node_params(outs, ["i", "s"])


def _while_ref(i, s, **_):
    rows = []
    while i.ravel()[0] < 2.5 and len(rows) < 4:
        rows.append(s * 2)
        i, s = i + 1, s * s + 0.5
    rows += [np.zeros_like(s)] * (4 - len(rows))
    return np.stack(rows), i, s


def _cond_params():
    q, x, p = mx.sym.var("q"), mx.sym.var("x"), mx.sym.var("p")
    out = mx.sym.contrib.cond(q, lambda: x * 2 + p, lambda: x * x)
    return _node_params(out, ["q", "x", "p"])


def _cond_ref(q, x, p, **_):
    return x * 2 + p if q.ravel()[0] != 0 else x * x  # any nonzero predicate is true


def _zeros(rng, shape, dtype):
    return np.zeros(shape, dtype)


CASES = [
    Case("_foreach", [((3, 2), (2,))], ref=_foreach_ref, params=_foreach_params(), inplace=False),
    Case("_while_loop", [((1,), (2,))], ref=_while_ref, params=_while_params(), gens=[_zeros, uniform(0.2, 0.9)],
         wrt=(1,), inplace=False),
    Case("_cond", [((1,), (3,), (3,))], ref=_cond_ref, params=_cond_params(),
         gens=[uniform(-1.0, -0.5), uniform(), uniform()], wrt=(1, 2), inplace=False, name="_cond-then"),
    Case("_cond", [((1,), (3,), (3,))], ref=_cond_ref, params=_cond_params(),
         gens=[_zeros, uniform(), uniform()], wrt=(1, 2), inplace=False, name="_cond-else"),
]
