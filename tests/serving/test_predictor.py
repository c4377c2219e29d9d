"""The library face: ``await Predictor.predict(x)`` with dynamic batching, back-pressure, timeouts, cancellation."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import mxasync as mx
from mxasync.serving import (
    InvalidInput,
    ModelError,
    Predictor,
    PredictorClosed,
    QueueFull,
    RequestTimeout,
    ServingError,
    latest_checkpoint,
)

from .conftest import SHAPE, module_predict

pytestmark = pytest.mark.asyncio
LONG = 60.0  # a max_delay no test waits for: batches leave when full, configured or closed


async def _until(condition, what: str):
    """Yield to the loop until ``condition()`` holds (bounded, never a timed assert on the outcome)."""
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"never happened: {what}")


async def test_checkpoint_outputs_equal_module_predict_and_batch(checkpoint, examples):
    prefix, mod = checkpoint
    assert latest_checkpoint(prefix) == 2
    async with Predictor(prefix, input_shape=SHAPE, max_batch_size=12, max_delay=LONG) as p:
        rows = await asyncio.gather(*(p.predict(x) for x in examples))
    np.testing.assert_allclose(np.stack(rows), module_predict(mod, examples), rtol=1e-5, atol=1e-6)
    assert p.stats.batch_sizes == {12: 1} and p.stats.completed == 12 and p.queue_depth == 0


async def test_live_and_exported_block_equal_block_outputs(block, examples, tmp_path):
    want = block(mx.nd.array(examples)).asnumpy()
    block.export(str(tmp_path / "net"), epoch=3)
    for model in (block, str(tmp_path / "net"), str(tmp_path)):  # live, a prefix, a folder holding one
        async with Predictor(model, max_batch_size=4, max_delay=0.001) as p:
            rows = await asyncio.gather(*(p.predict(mx.nd.array(x)) for x in examples))
        np.testing.assert_allclose(np.stack(rows), want, rtol=1e-5, atol=1e-6)
        assert max(p.stats.batch_sizes) > 1


async def test_onnx_model(checkpoint, examples, tmp_path):
    pytest.importorskip("onnx")
    prefix, mod = checkpoint
    path = mx.onnx.export_model(f"{prefix}-symbol.json", f"{prefix}-0002.params", [(1, *SHAPE)], np.float32,
                                str(tmp_path / "mlp.onnx"), dynamic=True)
    async with Predictor(path, max_batch_size=6, max_delay=LONG) as p:
        rows = await asyncio.gather(*(p.predict(x) for x in examples))
    np.testing.assert_allclose(np.stack(rows), module_predict(mod, examples), rtol=1e-5, atol=1e-6)
    assert p.stats.batch_sizes == {6: 2}


async def test_per_shape_buckets(block):
    # a Dense on a flattened input takes 64 features: two shapes with 64 elements batch apart
    async with Predictor(block, max_batch_size=3, max_delay=LONG) as p:
        a, b = np.ones((1, 8, 8), np.float32), np.ones((4, 16), np.float32)
        rows = await asyncio.gather(*(p.predict(x) for x in (a, b, a, b, a, b)))
    assert p.stats.batch_sizes == {3: 2}
    np.testing.assert_allclose(rows[0], rows[1], rtol=1e-6)


async def test_full_queue_refuses_at_once(checkpoint, examples):
    p = Predictor(checkpoint[0], input_shape=SHAPE, max_batch_size=100, max_delay=LONG, max_queue=3)
    waiting = [asyncio.ensure_future(p.predict(x)) for x in examples[:3]]
    await _until(lambda: p.queue_depth == 3, "three requests queued")
    with pytest.raises(QueueFull, match="queue is full"):
        await p.predict(examples[3])
    assert p.stats.rejected == 1
    await p.close()  # drains: the queued three are answered
    assert all(r.shape == (4,) for r in await asyncio.gather(*waiting))
    with pytest.raises(PredictorClosed):
        await p.predict(examples[0])


async def test_timeout_takes_the_request_out(checkpoint, examples):
    prefix, mod = checkpoint
    async with Predictor(prefix, input_shape=SHAPE, max_batch_size=100, max_delay=LONG) as p:
        with pytest.raises(RequestTimeout, match="no answer within"):
            await p.predict(examples[0], timeout=0.05)
        assert p.queue_depth == 0 and p.stats.timed_out == 1
        p.configure(max_delay=0.0)
        row = await p.predict(examples[1], timeout=30)
    np.testing.assert_allclose(row, module_predict(mod, examples[1:2])[0], rtol=1e-5, atol=1e-6)
    assert p.stats.batch_sizes == {1: 1}  # the timed-out row never ran


async def test_cancelled_task_drops_out_of_its_batch(checkpoint, examples):
    prefix, mod = checkpoint
    async with Predictor(prefix, input_shape=SHAPE, max_batch_size=100, max_delay=LONG) as p:
        tasks = [asyncio.ensure_future(p.predict(x)) for x in examples[:3]]
        await _until(lambda: p.queue_depth == 3, "three requests queued")
        tasks[1].cancel()
        await asyncio.sleep(0)
        assert p.queue_depth == 2
        p.configure(max_delay=0.0)  # let the batch go
        done = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(done[1], asyncio.CancelledError)
    want = module_predict(mod, examples[:3])
    np.testing.assert_allclose(done[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(done[2], want[2], rtol=1e-5, atol=1e-6)
    assert p.stats.batch_sizes == {2: 1} and p.stats.cancelled == 1


async def test_cancel_while_its_batch_runs_disturbs_nothing(gated, block, examples):
    net, gate = gated
    gate.hold()
    async with Predictor(net, max_batch_size=4, max_delay=LONG) as p:
        tasks = [asyncio.ensure_future(p.predict(x)) for x in examples[:4]]
        await _until(lambda: p.batches_in_flight == 1, "the batch is computing")
        tasks[0].cancel()
        await asyncio.sleep(0)
        gate.release()
        done = await asyncio.gather(*tasks, return_exceptions=True)
        assert isinstance(done[0], asyncio.CancelledError)
        np.testing.assert_allclose(np.stack(done[1:]), block(mx.nd.array(examples[1:4])).asnumpy(), rtol=1e-5)
        p.configure(max_delay=0.0)
        assert (await p.predict(examples[5])).shape == (5,)
    assert p.stats.batch_sizes == {4: 1, 1: 1} and p.stats.cancelled == 1 and p.stats.completed == 4


async def test_close_drains_queued_and_running_batches(gated, block, examples):
    net, gate = gated
    gate.hold()
    p = Predictor(net, max_batch_size=2, max_delay=LONG, max_inflight=1)
    tasks = [asyncio.ensure_future(p.predict(x)) for x in examples[:5]]
    await _until(lambda: p.batches_in_flight == 1 and p.queue_depth == 3, "one batch running, three queued")
    closing = asyncio.ensure_future(p.close())
    await asyncio.sleep(0)
    with pytest.raises(PredictorClosed):
        await p.predict(examples[0])
    gate.release()
    await closing
    rows = await asyncio.gather(*tasks)
    np.testing.assert_allclose(np.stack(rows), block(mx.nd.array(examples[:5])).asnumpy(), rtol=1e-5)
    assert p.stats.batch_sizes == {2: 2, 1: 1}


async def test_bad_examples_and_model_errors(checkpoint, block):
    async with Predictor(checkpoint[0], input_shape=SHAPE, max_delay=0) as p:
        with pytest.raises(InvalidInput, match=r"shape \(1, 8, 8\) for input 'data', got \(3,\)"):
            await p.predict([1, 2, 3])
        with pytest.raises(InvalidInput, match="not an array of numbers"):
            await p.predict([[1, "x"]])
        assert (await p.predict(np.zeros(64))).shape == (4,)  # as many elements: reshaped
    async with Predictor(block, max_delay=0) as p:  # no input shape: the model itself refuses
        with pytest.raises(ModelError, match="failed on a batch of 1"):
            await p.predict(np.zeros((3, 3), np.float32))
        assert (await p.predict(np.zeros((1, 8, 8), np.float32))).shape == (5,)  # and goes on


async def test_warmup_and_configure(checkpoint):
    p = Predictor(checkpoint[0], input_shape=SHAPE, max_batch_size=4)
    await p.warmup()
    with pytest.raises(ValueError, match="max_batch_size"):
        p.configure(max_batch_size=0)
    p.configure(max_batch_size=2, max_delay=0.5)
    assert (p.max_batch_size, p.max_delay) == (2, 0.5)
    await p.close()
    with pytest.raises(ServingError, match="warm-up needs the input shape"):
        await Predictor(checkpoint[0]).warmup()


async def test_missing_model_is_named(tmp_path):
    with pytest.raises(ServingError, match="no model at"):
        Predictor(str(tmp_path / "nothing"))
    (tmp_path / "x-symbol.json").write_text("{}")
    with pytest.raises(ServingError, match="no parameters for checkpoint"):
        Predictor(str(tmp_path / "x"))


async def test_models_on_two_contexts_in_one_loop(checkpoint, examples):
    prefix, mod = checkpoint
    want = module_predict(mod, examples)
    async with Predictor(prefix, ctx=mx.cpu(0), max_delay=0) as a, Predictor(prefix, ctx=mx.cpu(1), max_delay=0) as b:
        assert a.model.ctx != b.model.ctx
        rows = await asyncio.gather(*(p.predict(x) for x in examples for p in (a, b)))
    np.testing.assert_allclose(np.stack(rows[0::2]), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.stack(rows[1::2]), want, rtol=1e-5, atol=1e-6)
