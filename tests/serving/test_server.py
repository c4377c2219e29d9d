"""The HTTP server against a real aiohttp client on localhost (an ephemeral port); every server is stopped."""

from __future__ import annotations

import asyncio
import io
import json

import numpy as np
import pytest
import pytest_asyncio

aiohttp = pytest.importorskip("aiohttp")
pytest.importorskip("prometheus_client")

import mxasync as mx  # noqa: E402
from mxasync.serving import ModelServer, Predictor  # noqa: E402

from .conftest import SHAPE, module_predict  # noqa: E402
from .test_predictor import LONG, _until  # noqa: E402

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def client():
    async with aiohttp.ClientSession() as session:
        yield session


@pytest_asyncio.fixture
async def served(checkpoint, block):
    """A server with the checkpoint ('mlp', batches of up to 8 within 50 ms) and the Gluon block ('dense')."""
    server = ModelServer({"mlp": Predictor(checkpoint[0], input_shape=SHAPE, max_batch_size=8, max_delay=0.05,
                                           name="mlp")},
                         port=0, max_request_size=64 * 1024)
    server.register("dense", block, max_delay=0.001)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def _post(client, url, **kw):
    async with client.post(url, **kw) as r:
        return r.status, await r.read(), r.headers.get("Content-Type", "")


async def test_outputs_equal_module_and_block_and_batch(served, client, checkpoint, block, examples):
    url = served.url + "/predictions/mlp"
    replies = await asyncio.gather(*(_post(client, url, json=x.tolist()) for x in examples[:8]))
    assert all(status == 200 for status, _, _ in replies)
    got = np.array([json.loads(body) for _, body, _ in replies], np.float32)
    np.testing.assert_allclose(got, module_predict(checkpoint[1], examples[:8]), rtol=1e-5, atol=1e-6)
    assert max(served.models["mlp"].stats.batch_sizes) > 1
    # .npy in, .npy out; the versioned route
    buf = io.BytesIO()
    np.save(buf, examples[9])
    status, body, ctype = await _post(client, url + "/1.0", data=buf.getvalue(),
                                      headers={"Content-Type": "application/x-npy", "Accept": "application/x-npy"})
    assert status == 200 and ctype == "application/x-npy"
    np.testing.assert_allclose(np.load(io.BytesIO(body)), module_predict(checkpoint[1], examples[9:10])[0],
                               rtol=1e-5, atol=1e-6)
    status, body, _ = await _post(client, served.url + "/predictions/dense", json={"data": examples[0].tolist()})
    np.testing.assert_allclose(json.loads(body), block(mx.nd.array(examples[:1])).asnumpy()[0], rtol=1e-5)


async def test_image_through_the_handler(served, client, checkpoint):
    PIL = pytest.importorskip("PIL.Image")
    pixels = np.random.RandomState(1).randint(0, 256, (16, 16), np.uint8)
    buf = io.BytesIO()
    PIL.fromarray(pixels).save(buf, format="PNG")
    status, body, _ = await _post(client, served.url + "/predictions/mlp", data=buf.getvalue(),
                                  headers={"Content-Type": "image/png"})
    assert status == 200
    want = mx.image.imresize(mx.nd.array(pixels[:, :, None], dtype=np.uint8), 8, 8).asnumpy()
    x = want.transpose(2, 0, 1)[None].astype(np.float32) / 255
    np.testing.assert_allclose(json.loads(body), module_predict(checkpoint[1], x)[0], rtol=1e-4, atol=1e-5)


async def test_bad_requests_leave_the_server_unharmed(served, client, examples):
    url = served.url + "/predictions/mlp"
    cases = [
        (dict(data=b"[1, 2"), 400, "not valid JSON"),
        (dict(json=[1, 2, 3]), 400, "shape (1, 8, 8)"),
        (dict(data=b""), 400, "empty request body"),
        (dict(data=b"\x93NUMPY garbage", headers={"Content-Type": "application/x-npy"}), 400, ".npy"),
        (dict(data=b"\x89PNG\r\n\x1a\nbroken"), 400, "image does not decode"),
        (dict(data=b"0" * (65 * 1024)), 413, "over the limit of 65536 bytes"),
    ]
    for kw, code, message in cases:
        status, body, _ = await _post(client, url, **kw)
        reply = json.loads(body)
        assert (status, reply["code"]) == (code, code) and message in reply["message"], (kw, body)

    async def chunks():  # no Content-Length: the limit applies while reading
        for _ in range(80):
            yield b"0" * 1024

    status, body, _ = await _post(client, url, data=chunks())
    assert status == 413 and "over the limit" in json.loads(body)["message"]
    status, body, _ = await _post(client, served.url + "/predictions/nope", json=[1])
    assert status == 404 and json.loads(body) == {"code": 404, "type": "ModelNotFoundException",
                                                  "message": "Model not found: nope"}
    status, body, _ = await _post(client, url + "/9.9", json=examples[0].tolist())
    assert status == 404 and "version: 9.9" in json.loads(body)["message"]
    async with client.get(served.url + "/ping") as r:
        assert r.status == 200 and await r.json() == {"status": "Healthy"}
    status, _, _ = await _post(client, url, json=examples[0].tolist())
    assert status == 200
    async with client.get(served.url + "/metrics") as r:
        metrics = await r.text()
    assert 'mxasync_serve_errors_total{code="400",model="mlp"} 5.0' in metrics
    assert 'mxasync_serve_errors_total{code="404",model="_unknown"} 1.0' in metrics
    assert 'mxasync_serve_request_latency_seconds_count{model="mlp"} 1.0' in metrics
    assert 'mxasync_serve_queue_depth{model="mlp"} 0.0' in metrics
    assert 'mxasync_serve_batch_size_count{model="mlp"} 1.0' in metrics


async def test_back_pressure_and_timeout(checkpoint, client, examples):
    p = Predictor(checkpoint[0], input_shape=SHAPE, max_batch_size=100, max_delay=LONG, max_queue=2)
    async with ModelServer({"mlp": p}, port=0) as server:
        url = server.url + "/predictions/mlp"
        waiting = [asyncio.ensure_future(_post(client, url, json=x.tolist())) for x in examples[:2]]
        await _until(lambda: p.queue_depth == 2, "two requests queued")
        status, body, _ = await _post(client, url, json=examples[2].tolist())
        assert status == 503 and "queue is full" in json.loads(body)["message"]
        async with client.put(server.url + "/models/mlp?max_batch_delay=0") as r:  # let them go
            assert r.status == 200
        assert [s for s, _, _ in await asyncio.gather(*waiting)] == [200, 200]
        async with client.put(server.url + "/models/mlp?max_batch_delay=60000&response_timeout=0.05") as r:
            assert r.status == 200
        status, body, _ = await _post(client, url, json=examples[3].tolist())
        assert status == 408 and json.loads(body)["type"] == "RequestTimeoutException"
        assert p.queue_depth == 0


async def test_client_gone_drops_its_rows(checkpoint, client, examples):
    p = Predictor(checkpoint[0], input_shape=SHAPE, max_batch_size=100, max_delay=LONG)
    async with ModelServer({"mlp": p}, port=0) as server:
        url = server.url + "/predictions/mlp"
        gone = asyncio.ensure_future(_post(client, url, json=examples[0].tolist()))
        stays = asyncio.ensure_future(_post(client, url, json=examples[1].tolist()))
        await _until(lambda: p.queue_depth == 2, "two requests queued")
        gone.cancel()  # the client hangs up: aiohttp cancels its handler, which cancels the prediction
        await _until(lambda: p.queue_depth == 1, "the hung-up request left the queue")
        p.configure(max_delay=0.0)
        status, body, _ = await stays
        assert status == 200
        np.testing.assert_allclose(json.loads(body), module_predict(checkpoint[1], examples[1:2])[0], rtol=1e-5,
                                   atol=1e-6)
    assert p.stats.batch_sizes == {1: 1} and p.stats.cancelled == 1


async def test_management_api(served, client, checkpoint, tmp_path, examples):
    async with client.get(served.url + "/models") as r:
        assert sorted(m["modelName"] for m in (await r.json())["models"]) == ["dense", "mlp"]
    async with client.post(served.url + f"/models?url={checkpoint[0]}&model_name=second&batch_size=4"
                                        "&max_batch_delay=1&input_shape=1,8,8") as r:
        assert r.status == 200 and "registered" in (await r.json())["status"]
    async with client.post(served.url + f"/models?url={checkpoint[0]}&model_name=second") as r:
        assert r.status == 409
    async with client.post(served.url + f"/models?url={tmp_path}/none&model_name=third") as r:
        assert r.status == 500 and "no model at" in (await r.json())["message"]
    async with client.get(served.url + "/models/second") as r:
        (info,) = await r.json()
    assert (info["batchSize"], info["maxBatchDelay"], info["inputShapes"]) == (4, 1.0, [[1, 8, 8]])
    status, body, _ = await _post(client, served.url + "/predictions/second", json=examples[0].tolist())
    np.testing.assert_allclose(json.loads(body), module_predict(checkpoint[1], examples[:1])[0], rtol=1e-5, atol=1e-6)
    async with client.put(served.url + "/models/second?batch_size=0") as r:
        assert r.status == 400
    async with client.delete(served.url + "/models/second") as r:
        assert r.status == 200
    status, _, _ = await _post(client, served.url + "/predictions/second", json=examples[0].tolist())
    assert status == 404
    async with client.delete(served.url + "/models/second") as r:
        assert r.status == 404


async def test_stop_drains_requests_in_flight(gated, block, client, examples):
    net, gate = gated
    gate.hold()
    p = Predictor(net, max_batch_size=2, max_delay=LONG, max_inflight=1)
    server = await ModelServer({"gated": p}, port=0).start()
    url = server.url + "/predictions/gated"
    replies = [asyncio.ensure_future(_post(client, url, json=x.tolist())) for x in examples[:5]]
    await _until(lambda: p.batches_in_flight == 1 and p.queue_depth == 3, "one batch computing, three queued")
    stopping = asyncio.ensure_future(server.stop())
    await asyncio.sleep(0.05)
    assert not stopping.done()
    gate.release()
    await stopping
    replies = await asyncio.gather(*replies)
    assert [s for s, _, _ in replies] == [200] * 5
    got = np.array([json.loads(b) for _, b, _ in replies], np.float32)
    np.testing.assert_allclose(got, block(mx.nd.array(examples[:5])).asnumpy(), rtol=1e-5)
    with pytest.raises(aiohttp.ClientConnectionError):
        await _post(client, url, json=examples[0].tolist())
