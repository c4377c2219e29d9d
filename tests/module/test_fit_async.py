"""``await Module.fit_async(...)`` trains while the caller's event loop keeps running."""

from __future__ import annotations

import anyio
import numpy as np

import mxasync as mx
from mxasync import initializer
from mxasync.io.datasets import digits_iter
from mxasync.module import Module


def _lenet_small():
    s = mx.sym
    h = s.Convolution(s.Variable("data"), kernel=(3, 3), num_filter=8, name="conv1")
    h = s.Pooling(s.Activation(h, act_type="relu"), kernel=(2, 2), stride=(2, 2), pool_type="max")
    h = s.FullyConnected(s.Flatten(h), num_hidden=32, name="fc1")
    h = s.FullyConnected(s.Activation(h, act_type="relu"), num_hidden=10, name="fc2")
    return s.SoftmaxOutput(h, name="softmax")


def test_fit_async_leaves_the_loop_responsive():
    """Between two batches the caller's loop runs its other tasks: a task woken at each batch's end
    runs before the next batch ends. A fit that held the loop (a step run on it, or no real
    suspension between steps) starves that task until fit returns, so it would see few batch ends.
    A count of wake-ups, not a time: it holds however loaded the machine is."""
    batches: list[int] = []
    seen: list[int] = []  # how many batches had ended each time the watcher ran
    state: dict = {"event": None, "done": False}

    def batch_end(p):
        batches.append(p.nbatch)
        state["event"].set()

    async def watcher():
        while True:
            state["event"] = anyio.Event()
            await state["event"].wait()
            if state["done"]:
                return
            seen.append(len(batches))

    async def train():
        np.random.seed(0)
        mod = Module(_lenet_small())
        await mod.fit_async(digits_iter(32, "train", size=16), eval_data=digits_iter(32, "val", size=16),
                            num_epoch=3, initializer=initializer.Xavier(),
                            optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
                            batch_end_callback=batch_end)
        state["acc"] = mod.score(digits_iter(32, "val", size=16), "acc")[0][1]
        state["done"] = True
        state["event"].set()

    async def main():
        async with anyio.create_task_group() as tg:
            tg.start_soon(watcher)
            await anyio.sleep(0)  # the watcher waits on its first event before training starts
            tg.start_soon(train)

    anyio.run(main)
    assert state["acc"] > 0.8
    assert len(batches) == 3 * 45
    # the watcher ran after every batch and before the next one ended
    assert seen == list(range(1, 3 * 45 + 1))


def test_fit_async_can_be_cancelled():
    """Cancelled mid-step (at varying points), the module and the engine stay usable: nothing hangs."""

    async def main(timeout):
        mod = Module(_lenet_small())
        with anyio.move_on_after(timeout):
            await mod.fit_async(digits_iter(32, "train", size=16), num_epoch=50)
        return mod

    for timeout in (0.05, 0.08, 0.11, 0.14, 0.17, 0.2):
        mod = anyio.run(main, timeout)
        mod.forward(mx.io.DataBatch([mx.nd.zeros((32, 1, 16, 16))], [mx.nd.zeros((32,))]), is_train=False)
        assert mod.get_outputs()[0].asnumpy().shape == (32, 10)
