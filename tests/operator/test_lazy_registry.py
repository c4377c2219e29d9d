"""The registry loads an op family on the first use of one of its ops (issue 26), and listings still see every op."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import mxasync as mx
from mxasync.operator import registry
from mxasync.operator.base import OperatorProperty
from mxasync.operator.namespace import OpNamespace
from mxasync.tools import stubs

ROOT = Path(__file__).resolve().parents[2]

# what a fresh process does: the first mx.nd call inside a running event loop, then a symbol from JSON
_CHILD = r"""
import asyncio, json, sys
import mxasync as mx

def families():
    return sorted({m.split(".")[2] for m in sys.modules if m.startswith("mxasync.operator.") and m.count(".") >= 3})

async def main():
    x = mx.nd.ones((2, 3))
    total = float((await x.asnumpy_async()).sum())
    first = families()
    lazy_method = type(mx.nd.NDArray.__dict__["softmax"]).__name__
    soft = [round(float(v), 4) for v in x.softmax().asnumpy().ravel()]
    after_softmax = families()
    net = mx.sym.load_json(mx.sym.contrib.box_nms(mx.sym.Variable("a"), name="nms").tojson())
    return {"total": total, "first": first, "lazy_method": lazy_method, "softmax": soft,
            "after_softmax": after_softmax, "method_now": type(mx.nd.NDArray.__dict__["softmax"]).__name__,
            "nms_args": net.list_arguments(), "after_json": families()}

print(json.dumps(asyncio.run(main())))
"""


def test_first_use_in_a_running_loop_loads_only_the_family_it_needs():
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", _CHILD], capture_output=True, text=True, cwd=ROOT,
                         timeout=120, check=True, env=dict(os.environ, MXASYNC_PRELOAD="0"))
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["total"] == 6.0
    # mx.nd.ones needs the tensor family (and the sparse storage rules ndarray dispatches on), not the other ten
    assert set(got["first"]) <= {"tensor", "sparse", "kernels"}, got["first"]
    assert got["lazy_method"] == "_OnFirstUse" and got["method_now"] == "function"
    assert got["softmax"] == [0.3333] * 6
    assert "nn" in got["after_softmax"] and "contrib" not in got["after_softmax"]
    assert got["nms_args"] == ["a"] and "contrib" in got["after_json"]


def test_the_index_is_current():
    path = ROOT / "mxasync" / "operator" / "_op_index.py"
    assert path.read_text() == stubs.render_index(), f"{path} is stale: run python -m mxasync.tools.stubs"


def test_listings_see_every_op():
    every = set(registry.list_ops(include_aliases=True))
    assert registry.op_names() >= every
    public = {n for n in every if not n.startswith("_")}
    assert public <= set(dir(mx.nd)) and public <= set(dir(mx.sym))
    contrib = {n[len("_contrib_"):] for n in every if n.startswith("_contrib_")}
    assert contrib <= set(mx.nd.contrib.__all__) and contrib <= set(dir(mx.sym.contrib))
    assert {n for n in every if n.startswith("_linalg_")} == {"_linalg_" + n for n in mx.nd.linalg.__all__}
    assert set(mx.operator.get_all_registered_operators()) == every


def test_a_namespace_finds_ops_registered_after_it_was_made():
    ns: dict = {}
    ops = OpNamespace(ns, lambda op: ("made", op), prefix="_test_lazy_")
    assert ops.names() == set() and ops.get("late") is None

    @registry.register_op("_test_lazy_late")
    class _Late(OperatorProperty):
        pass

    assert ops.names() == {"late"} and ops.get("late") == ("made", "_test_lazy_late") and ns["late"][1] == "_test_lazy_late"


def test_facts_declared_before_their_op_attach_when_it_registers():
    seen = []
    registry.when_registered("_test_lazy_pending", lambda opdef: seen.append(opdef.name))
    assert seen == []

    @registry.register_op("_test_lazy_pending")
    class _Pending(OperatorProperty):
        pass

    assert seen == ["_test_lazy_pending"]
    registry.when_registered("_test_lazy_pending", lambda opdef: seen.append("again"))
    assert seen == ["_test_lazy_pending", "again"]


def test_an_unknown_name_still_suggests_close_ones():
    try:
        registry.get_op("Convolutoin")
    except mx.MXNetError as exc:
        assert "did you mean Convolution" in str(exc)
    else:
        raise AssertionError("no error")


# a fork holds the loading lock after the engine's and the pools' locks (runtime/engine/lifetime.py):
# so loading a family or building a param schema must never wait for either of those
_LOAD_WHILE_ENGINE_HELD = r"""
import sys, threading
import mxasync as mx
from mxasync.operator import registry
from mxasync.runtime.engine import lifetime

(mx.nd.ones((2,)) + 1).wait_to_read()          # the engine and a pool exist, as in a forking program
held = lifetime._fork_locks() + [mx.engine.get()._lock]
for lock in held:
    lock.acquire()
done = threading.Event()

def load():
    registry.load_all()
    for name in registry.list_ops():
        registry.get_op(name).param_cls.model_rebuild()
    done.set()

threading.Thread(target=load, daemon=True).start()
print("loaded" if done.wait(120) else "waited for the engine or a pool", flush=True)
sys.stdout.flush()
import os; os._exit(0)   # the held locks would keep the exit drain waiting
"""


def test_loading_every_family_waits_for_neither_the_engine_nor_a_storage_pool():
    out = subprocess.run([sys.executable, "-c", _LOAD_WHILE_ENGINE_HELD], capture_output=True, text=True,
                         timeout=180, cwd=ROOT, env=dict(os.environ, MXASYNC_PRELOAD="0"))
    assert "loaded" in out.stdout, out.stdout + out.stderr
