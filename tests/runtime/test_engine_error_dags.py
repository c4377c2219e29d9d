"""Random op graphs with failing ops, on both engine types: an op runs only when every var it
reads was written by an op that ran, and a wait on a var raises exactly when the var's writer
failed or was spoiled (docs/ndarray.md, "When an op fails").  Nothing is ever read unwritten."""

from __future__ import annotations

import asyncio
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mxasync as mx

CPU = mx.cpu()

# an op: (indices of earlier vars it reads, whether it fails, whether it runs on a worker)
_ops = st.lists(st.tuples(st.lists(st.integers(0, 1 << 16), max_size=3), st.booleans(), st.booleans()),
                min_size=1, max_size=24)


def _push_graph(engine, ops):
    """Push ``ops``, each writing a fresh var; returns the vars, their values and what must fail."""
    variables, values, spoiled = [], {}, []
    for k, (picks, fails, heavy) in enumerate(ops):
        reads = sorted({p % k for p in picks}) if k else []
        var = engine.new_variable(name=f"v{k}")

        def fn(rctx, k=k, reads=reads, fails=fails):
            for r in reads:
                assert r in values, f"op {k} read v{r}, which was never written"
            if fails:
                raise ValueError(f"op {k} fails")
            values[k] = 1 + sum(values[r] for r in reads)

        engine.push_sync(fn, CPU, [variables[r] for r in reads], [var], name=f"op{k}",
                         inline=None if heavy else True)
        variables.append(var)
        spoiled.append(fails or any(spoiled[r] for r in reads))
    return variables, values, spoiled


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_ops)
def test_blocking_waits_raise_exactly_on_spoiled_vars(engine, ops):
    variables, values, spoiled = _push_graph(engine, ops)
    for k in reversed(range(len(ops))):  # newest first: each wait finds its var's failure unreported
        if spoiled[k]:
            with pytest.raises(mx.MXNetError, match="fails"):
                engine.wait_for_var(variables[k])
            engine.wait_for_var(variables[k])  # once per var
        else:
            engine.wait_for_var(variables[k])
            assert k in values
    engine.wait_for_all()  # every failure was raised at a wait


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_ops)
def test_every_awaiter_raises_on_spoiled_vars(threaded, ops):
    engine = threaded

    async def main():
        variables, values, spoiled = _push_graph(engine, ops)

        async def wait(k):
            try:
                await engine.wait_for_var_async(variables[k])
            except mx.MXNetError:
                return "raised"
            return values.get(k, "unwritten")

        # several tasks per var, gathered: every await of a spoiled var raises, whatever the interleaving
        got = await asyncio.gather(*(wait(k) for k in range(len(ops)) for _ in range(2)))
        for n, outcome in enumerate(got):
            k = n // 2
            assert outcome == ("raised" if spoiled[k] else values[k]), (k, outcome)

    asyncio.run(main())
    try:
        engine.wait_for_all()
    except mx.MXNetError:
        pass  # a failure nobody awaited directly (only vars computed from it) is still pending here


def test_blocking_waits_from_threads_raise_on_each_derived_var(threaded):
    """One thread per derived var, all blocked before the failure lands: each raises."""
    engine = threaded
    gate = threading.Event()
    root = engine.new_variable()
    engine.push_sync(lambda rctx: gate.wait(10) and (_ for _ in ()).throw(ValueError("root fails")), CPU, [],
                     [root], name="root", inline=False)
    derived = []
    prev = root
    for k in range(4):
        v = engine.new_variable()
        engine.push_sync(lambda rctx: None, CPU, [prev], [v], name=f"d{k}")
        derived.append(v)
        prev = v
    outcome = {}

    def waiter(k):
        try:
            engine.wait_for_var(derived[k])
            outcome[k] = "data"
        except mx.MXNetError as exc:
            outcome[k] = "root fails" in str(exc)

    threads = [threading.Thread(target=waiter, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    gate.set()
    for t in threads:
        t.join(30)
    assert outcome == dict.fromkeys(range(4), True), outcome
    engine.wait_for_all()
