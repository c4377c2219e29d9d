"""Run by test_derived_errors.py in a fresh interpreter (one per engine type): rounds of a failing
op and arrays computed from it, through NDArray ops, a hybridized block, a bound executor, a
sparse op and a kvstore pull, awaited from several tasks and waited on from the main thread.

Prints one JSON object: per family, how many waits raised and how many returned data.
"""

from __future__ import annotations

import asyncio
import json
import sys

import mxasync as mx
from mxasync import gluon


def failing(shape, out=None):
    """An op that fails in its kernel, on the engine (a negative scale)."""
    return mx.nd.random.normal(0, -1, shape=shape, out=out)


def nd_family(state):
    c = failing((4, 4))
    d = c + 1
    e = mx.nd.exp(d) * 2
    return [c, d, e, e, d]


def block_family(state):
    if "net" not in state:
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(3, in_units=4), gluon.nn.Dense(2, in_units=3))
        net.initialize()
        net.hybridize()
        state["net"] = net
    y = state["net"](failing((2, 4)))
    return [y, y * 2, y]


def executor_family(state):
    if "exe" not in state:
        data = mx.sym.Variable("data")
        out = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
        state["exe"] = out.simple_bind(mx.cpu(), data=(2, 4))
    exe = state["exe"]
    failing((2, 4), out=exe.arg_dict["data"])
    exe.forward(is_train=False)
    o = exe.outputs[0]
    return [o, o + 1, o]


def sparse_family(state):
    c = failing((4, 4))
    s = c.tostype("csr")
    t = mx.nd.sparse.dot(s, mx.nd.ones((4, 2)))
    return [s, t, t]


def kvstore_family(state):
    if "kv" not in state:
        kv = mx.kv.create("local")
        kv.init(3, mx.nd.zeros((2, 3)))
        state["kv"] = kv
    kv = state["kv"]
    kv.push(3, failing((2, 3)))
    out = mx.nd.zeros((2, 3))
    kv.pull(3, out=out)
    return [out, out, out + 1]


FAMILIES = {"nd": nd_family, "hybridized block": block_family, "bound executor": executor_family,
            "sparse op": sparse_family, "kvstore pull": kvstore_family}


async def _await(x):
    try:
        await x.asnumpy_async() if x.stype == "default" else await x
    except mx.MXNetError as exc:
        return "failed" in str(exc) or "scale" in str(exc)
    return "data"


def run(rounds: int) -> dict:
    report = {}
    for name, family in FAMILIES.items():
        state: dict = {}
        raised = data = 0
        for k in range(rounds):
            arrays = family(state)
            if k % 2 == 0:  # awaited from one task per array (some arrays twice), gathered
                outcome = asyncio.run(_gather(arrays))
            else:  # blocking waits, one per distinct array
                outcome = []
                for x in {id(a): a for a in arrays}.values():
                    try:
                        x.wait_to_read()
                        outcome.append("data")
                    except mx.MXNetError:
                        outcome.append(True)
            raised += sum(1 for o in outcome if o is True)
            data += sum(1 for o in outcome if o == "data")
        mx.nd.waitall()
        report[name] = {"raised": raised, "data": data}
    return report


async def _gather(arrays):
    return await asyncio.gather(*(_await(x) for x in arrays))


if __name__ == "__main__":
    print(json.dumps({"engine": mx.engine.get().type, "report": run(int(sys.argv[1]))}))
