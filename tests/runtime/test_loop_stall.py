"""The loop-stall probe: a 100 Hz ticker task on an event loop misses at most 2 ticks while a script's first
mx.nd calls and a training step run on the same loop (issue 35). ``import mxasync`` loads the registry and
the common ops (mxasync/loading.py), before the script's loop runs; the script never calls ``preload``.
With that off (``MXASYNC_PRELOAD=0``), the same first use stalls the loop for the whole import."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

PROBE = textwrap.dedent("""
    import asyncio, sys, time
    import mxasync as mx

    PERIOD = 0.01

    async def ticker(stop, ticks):
        while not stop.is_set():
            ticks.append(time.perf_counter())
            await asyncio.sleep(PERIOD)

    async def main():
        stop, ticks = asyncio.Event(), []
        task = asyncio.create_task(ticker(stop, ticks))
        await asyncio.sleep(5 * PERIOD)
        start = time.perf_counter()
        x = mx.nd.ones((64, 100))                          # the script's first mx.nd calls ...
        w = mx.nd.ones((10, 100)) * 0.01
        w.attach_grad()
        label = mx.nd.zeros((64,))
        with mx.autograd.record():                         # ... and a training step
            loss = mx.nd.softmax_cross_entropy(mx.nd.FullyConnected(x, w, num_hidden=10, no_bias=True), label)
        loss.backward()
        mx.nd.sgd_update(w, w.grad, lr=0.1, out=w)
        await w
        await asyncio.sleep(5 * PERIOD)
        stop.set()
        await task
        gaps = [b - a for a, b in zip(ticks, ticks[1:]) if b > start]
        print("missed", sum(max(0, round(g / PERIOD) - 1) for g in gaps))

    asyncio.run(main())
""")


def _missed(preload: str) -> int:
    env = dict(os.environ, MXASYNC_PRELOAD=preload)
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    return int(out.stdout.split()[-1])


def test_the_first_mx_nd_calls_and_a_training_step_leave_a_100_hz_ticker_running():
    # the best of up to three runs: another process hogging both cores can delay any ticker, ours or not
    runs = []
    for _ in range(3):
        runs.append(_missed("1"))
        if runs[-1] <= 2:
            break
    assert min(runs) <= 2, runs


def test_with_a_lazy_import_the_probe_sees_the_stall():
    assert _missed("0") >= 10  # the import of the registry on the loop: ~100 ticks on 2 cores
