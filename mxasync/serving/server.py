"""``ModelServer``: predictors behind a TorchServe-compatible HTTP API, on the caller's event loop (aiohttp).

Inference API: ``GET /ping``, ``POST /predictions/{model}[/{version}]``. Management API:
``GET /models``, ``GET /models/{model}``, ``POST /models?url=PATH&model_name=NAME`` (register),
``PUT /models/{model}?batch_size=N&max_batch_delay=MS`` (change batching), ``DELETE
/models/{model}`` (unregister, after its queued requests are answered). ``GET /metrics``:
Prometheus. Errors answer TorchServe's JSON ``{"code", "type", "message"}``. Both APIs and
the metrics share one port (TorchServe uses three).

``stop()`` shuts down gracefully: the port closes, requests in flight are answered (up to
``shutdown_timeout`` seconds), then each model's queue drains and its batcher ends.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass

try:
    from aiohttp import web
except ImportError as e:  # pragma: no cover - the serve extra is missing
    raise ImportError("mxasync.serving.ModelServer needs aiohttp and prometheus_client: "
                      "pip install 'mxasync[serve]'") from e

from .errors import InvalidInput, ModelNotFound, ServingError
from .handlers import TensorHandler, parse_shape
from .metrics import CONTENT_TYPE_LATEST, UNKNOWN_MODEL, ServerMetrics
from .predictor import Predictor

__all__ = ["ModelServer"]

_log = logging.getLogger(__name__)
_STATUS_KIND = {400: "BadRequestException", 404: "ModelNotFoundException", 405: "MethodNotAllowedException",
                409: "ConflictStatusException", 413: "RequestEntityTooLargeException"}


@dataclass
class _Entry:
    predictor: Predictor
    handler: TensorHandler
    version: str
    url: str


def _error(status: int, message: str, kind: str | None = None) -> web.Response:
    kind = kind or _STATUS_KIND.get(status, "InternalServerException")
    return web.json_response({"code": status, "type": kind, "message": message}, status=status)


class ModelServer:
    """Serve named models over HTTP from the running event loop.

    ``models``: ``{name: Predictor or model}`` (a model is anything :class:`Predictor` takes;
    ``predictor_options`` are passed to the predictors made here). ``port=0`` picks a free port
    (read ``server.port`` after ``start()``). ``max_request_size``: larger bodies get 413.
    ``allow_register``: whether ``POST /models`` may load models from local paths.
    """

    def __init__(self, models=None, *, host: str = "127.0.0.1", port: int = 8080,
                 max_request_size: int = 4 * 1024 * 1024, shutdown_timeout: float = 30.0,
                 handler: TensorHandler | None = None, allow_register: bool = True, **predictor_options):
        self.host, self.port = host, port
        self.max_request_size = max_request_size
        self.shutdown_timeout = shutdown_timeout
        self.allow_register = allow_register
        self._handler = handler or TensorHandler()
        self._options = predictor_options
        self._models: dict[str, _Entry] = {}
        self.metrics = ServerMetrics(lambda: {n: e.predictor for n, e in self._models.items()})
        self._runner: web.AppRunner | None = None
        for name, model in (models or {}).items():
            self.register(name, model)

    # ---- models -----------------------------------------------------------------------------

    def register(self, name: str, model, *, version: str = "1.0", handler: TensorHandler | None = None,
                 **predictor_options) -> Predictor:
        """Serve ``model`` (a :class:`Predictor`, or what it takes) as ``name``; returns its predictor."""
        if name in self._models:
            raise ServingError(f"model {name!r} is already registered; unregister it first")
        if not name or "/" in name:
            raise ServingError(f"bad model name {name!r}: it must be non-empty and contain no '/'")
        if isinstance(model, Predictor):
            predictor, url = model, model.model.source
        else:
            predictor = Predictor(model, name=name, **{**self._options, **predictor_options})
            url = os.fspath(model) if isinstance(model, (str, os.PathLike)) else predictor.model.source
        self._models[name] = _Entry(predictor, handler or self._handler, str(version), url)
        return predictor

    async def unregister(self, name: str) -> None:
        """Stop serving ``name``: new requests get 404 at once; its queued requests are answered first."""
        entry = self._models.pop(name, None)
        if entry is None:
            raise ModelNotFound(f"Model not found: {name}")
        await entry.predictor.close(drain=True)

    @property
    def models(self) -> dict[str, Predictor]:
        return {name: e.predictor for name, e in self._models.items()}

    def _entry(self, name: str, version: str | None) -> _Entry:
        entry = self._models.get(name)
        if entry is None:
            raise ModelNotFound(f"Model not found: {name}")
        if version is not None and version != entry.version:
            raise ModelNotFound(f"Model version: {version} does not exist for model: {name}")
        return entry

    # ---- lifetime ---------------------------------------------------------------------------

    def app(self) -> web.Application:
        """The aiohttp application (to mount elsewhere, or run as you like)."""
        app = web.Application(client_max_size=self.max_request_size, middlewares=[self._errors])
        app.router.add_get("/ping", self._ping)
        app.router.add_post("/predictions/{model}", self._predict)
        app.router.add_post("/predictions/{model}/{version}", self._predict)
        app.router.add_get("/models", self._list)
        app.router.add_post("/models", self._register)
        for path in ("/models/{model}", "/models/{model}/{version}"):
            app.router.add_get(path, self._describe)
            app.router.add_put(path, self._configure)
            app.router.add_delete(path, self._unregister)
        app.router.add_get("/metrics", self._metrics)
        return app

    async def start(self) -> ModelServer:
        """Listen on ``host:port``; the predictors start with their first request."""
        if self._runner is not None:
            raise ServingError("the server is already started")
        runner = web.AppRunner(self.app(), handle_signals=False, handler_cancellation=True,
                               shutdown_timeout=self.shutdown_timeout, access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = runner.addresses[0][1]
        return self

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def stop(self) -> None:
        """Graceful shutdown: stop listening, answer the requests in flight, drain and close every predictor."""
        runner, self._runner = self._runner, None
        for entry in self._models.values():
            entry.predictor.flush()  # the requests in flight are answered now, not after max_delay
        if runner is not None:
            await runner.cleanup()
        await asyncio.gather(*(e.predictor.close(drain=True) for e in self._models.values()))

    async def __aenter__(self) -> ModelServer:
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    # ---- handlers ---------------------------------------------------------------------------

    @web.middleware
    async def _errors(self, request: web.Request, handler):
        try:
            return await handler(request)
        except ServingError as e:
            return _error(e.status, str(e), e.kind)
        except web.HTTPException as e:
            if e.status < 400:
                raise
            message = e.text if e.text and not e.text.startswith(f"{e.status}:") else e.reason
            return _error(e.status, message)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - a handler's bug answers 500 and the server goes on
            _log.exception("mxasync serve: %s %s failed", request.method, request.path)
            return _error(500, f"{type(e).__name__}: {e}")

    async def _ping(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "Healthy"})

    async def _body(self, request: web.Request) -> bytes:
        if request.content_length is not None and request.content_length > self.max_request_size:
            raise web.HTTPRequestEntityTooLarge(max_size=self.max_request_size, actual_size=request.content_length,
                                                text=f"request body of {request.content_length} bytes is over "
                                                     f"the limit of {self.max_request_size} bytes")
        try:
            return await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise web.HTTPRequestEntityTooLarge(max_size=self.max_request_size, actual_size=-1,
                                                text=f"request body over the limit of {self.max_request_size} "
                                                     "bytes") from None

    async def _predict(self, request: web.Request) -> web.Response:
        name, version = request.match_info["model"], request.match_info.get("version")
        loop = asyncio.get_running_loop()
        start = loop.time()
        label = name if name in self._models else UNKNOWN_MODEL
        try:
            entry = self._entry(name, version)
            body = await self._body(request)
            example = await entry.handler.preprocess(body, request.headers.get("Content-Type", ""), entry.predictor)
            output = await entry.predictor.predict(example)
            payload, content_type = entry.handler.postprocess(output, request.headers.get("Accept", ""))
        except (ServingError, web.HTTPException) as e:
            self.metrics.observe(label, e.status, None)
            raise
        except asyncio.CancelledError:
            raise
        except Exception:
            self.metrics.observe(label, 500, None)
            raise
        self.metrics.observe(label, 200, loop.time() - start)
        return web.Response(body=payload, content_type=content_type)

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=self.metrics.render(), headers={"Content-Type": CONTENT_TYPE_LATEST})

    def _describe_entry(self, name: str, e: _Entry) -> dict:
        p = e.predictor
        return {"modelName": name, "modelVersion": e.version, "modelUrl": e.url, "runtime": "python",
                "batchSize": p.max_batch_size, "maxBatchDelay": round(p.max_delay * 1000, 3),
                "maxQueue": p.max_queue, "responseTimeout": p.timeout, "queueDepth": p.queue_depth,
                "inputNames": p.model.data_names,
                "inputShapes": [None if s is None else list(s) for s in p.input_shapes],
                "context": str(p.model.ctx), "status": "CLOSED" if p.closed else "READY",
                "stats": {k: v for k, v in vars(p.stats).items() if k != "batch_sizes"}}

    async def _list(self, request: web.Request) -> web.Response:
        return web.json_response({"models": [{"modelName": n, "modelUrl": e.url} for n, e in self._models.items()]})

    async def _describe(self, request: web.Request) -> web.Response:
        name = request.match_info["model"]
        return web.json_response([self._describe_entry(name, self._entry(name, request.match_info.get("version")))])

    async def _register(self, request: web.Request) -> web.Response:
        if not self.allow_register:
            return _error(405, "this server does not register models over HTTP (allow_register=False)")
        q = request.query
        url = q.get("url")
        if not url:
            raise InvalidInput("POST /models needs url=PATH (a checkpoint prefix, a folder holding one, or an .onnx file)")
        name = q.get("model_name") or os.path.basename(url.rstrip("/")).removesuffix(".onnx")
        if name in self._models:
            return _error(409, f"Model {name} is already registered.")
        options = _batching_options(q)
        if "input_shape" in q:
            options["input_shape"] = parse_shape(q["input_shape"])
        predictor = await asyncio.to_thread(lambda: Predictor(url, name=name, **{**self._options, **options}))
        if all(s is not None and None not in s for s in predictor.input_shapes):
            await predictor.warmup()  # the graphs are built before the first request, as at start-up
        if name in self._models:  # registered meanwhile
            return _error(409, f"Model {name} is already registered.")
        self.register(name, predictor, version=q.get("model_version", "1.0"))
        self._models[name].url = url
        return web.json_response({"status": f'Model "{name}" Version: {q.get("model_version", "1.0")} '
                                            "registered with 1 initial workers"})

    async def _configure(self, request: web.Request) -> web.Response:
        name = request.match_info["model"]
        entry = self._entry(name, request.match_info.get("version"))
        options = _batching_options(request.query)
        if not options:
            raise InvalidInput("PUT /models/NAME takes batch_size, max_batch_delay (ms), max_queue or "
                               "response_timeout (s)")
        entry.predictor.configure(**options)
        return web.json_response({"status": f'Model "{name}" updated: '
                                            + ", ".join(f"{k}={v}" for k, v in options.items())})

    async def _unregister(self, request: web.Request) -> web.Response:
        name = request.match_info["model"]
        self._entry(name, request.match_info.get("version"))
        await self.unregister(name)
        return web.json_response({"status": f'Model "{name}" unregistered'})


def _batching_options(query) -> dict:
    """Predictor options from TorchServe's query names (``max_batch_delay`` in ms, ``response_timeout`` in s)."""
    out = {}
    try:
        if "batch_size" in query:
            out["max_batch_size"] = int(query["batch_size"])
        if "max_batch_delay" in query:
            out["max_delay"] = float(query["max_batch_delay"]) / 1000
        if "max_queue" in query:
            out["max_queue"] = int(query["max_queue"])
        if "response_timeout" in query:
            out["timeout"] = float(query["response_timeout"])
    except ValueError as e:
        raise InvalidInput(f"bad number in the query: {e}") from None
    for key in ("max_batch_size", "max_queue"):
        if key in out and out[key] < 1:
            raise InvalidInput(f"{key} must be at least 1, got {out[key]}")
    if out.get("max_delay", 0) < 0 or out.get("timeout", 1) <= 0:
        raise InvalidInput("max_batch_delay must be >= 0 and response_timeout > 0")
    return out
