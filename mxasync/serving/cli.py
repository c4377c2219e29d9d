"""``mxasync serve [NAME=PATH ...] [--host H] [--port N]``: serve models over HTTP (see docs/serving.md).

With no model named it serves the digits LeNet that ``mxasync train`` leaves in ``./mxasync-train``.
SIGINT and SIGTERM shut down gracefully: the port closes, requests in flight are answered.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import signal
import sys

from ..runtime.context import Context
from .errors import ServingError
from .handlers import parse_shape

DEFAULT_FOLDER = "mxasync-train"  # mxasync train's default --out
DIGITS_SHAPE = (1, 28, 28)


def _model_arg(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep:
        name, path = os.path.basename(text.rstrip("/")).removesuffix(".onnx"), text
    if not name or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH, got {text!r}")
    return name, path


def _shape_arg(text: str) -> tuple[str, tuple]:
    name, sep, shape = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected NAME=1,28,28, got {text!r}")
    try:
        return name, parse_shape(shape)
    except ServingError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _ctx_arg(text: str) -> Context:
    kind, _, idx = text.partition(":")
    if kind not in ("cpu", "gpu") or (idx and not idx.isdigit()):
        raise argparse.ArgumentTypeError(f"expected cpu, cpu:N or gpu:N, got {text!r}")
    return Context(kind, int(idx or 0))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mxasync serve", description=(
        "Serve models with dynamic batching behind a TorchServe-compatible HTTP API "
        "(POST /predictions/NAME, GET /ping, /models, /metrics). PATH: a checkpoint prefix "
        "(PREFIX-symbol.json + PREFIX-NNNN.params, latest epoch), a folder holding one, or an .onnx file. "
        f"Without models: the digits model of 'mxasync train' in ./{DEFAULT_FOLDER}."))
    p.add_argument("models", nargs="*", type=_model_arg, metavar="NAME=PATH", help="models to serve")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    p.add_argument("--batch-size", type=int, default=8, help="largest batch (default 8)")
    p.add_argument("--max-delay-ms", type=float, default=5.0, help="longest wait to fill a batch (default 5 ms)")
    p.add_argument("--max-queue", type=int, default=256, help="requests waiting per model before 503 (default 256)")
    p.add_argument("--timeout", type=float, default=None, help="per-request timeout in seconds (default none)")
    p.add_argument("--max-request-mb", type=float, default=4.0, help="largest request body (default 4 MiB)")
    p.add_argument("--shape", type=_shape_arg, action="append", default=[], metavar="NAME=1,28,28",
                   help="one example's input shape for model NAME (checks requests, enables warm-up)")
    p.add_argument("--ctx", type=_ctx_arg, default=Context("cpu", 0), help="device: cpu or gpu:N")
    p.add_argument("--no-register", action="store_true", help="refuse POST /models (loading over HTTP)")
    return p


def _default_models() -> list[tuple[str, str]] | None:
    for network in ("lenet", "mlp"):
        if os.path.exists(os.path.join(DEFAULT_FOLDER, f"{network}-symbol.json")):
            return [("digits", os.path.join(DEFAULT_FOLDER, network))]
    return None


async def _serve(args, models: list[tuple[str, str]], shapes: dict) -> int:
    from .server import ModelServer  # the serve extra; main() checked it is there

    server = ModelServer(host=args.host, port=args.port, max_request_size=int(args.max_request_mb * 2**20),
                         allow_register=not args.no_register, ctx=args.ctx, max_batch_size=args.batch_size,
                         max_delay=args.max_delay_ms / 1000, max_queue=args.max_queue, timeout=args.timeout)
    for name, path in models:
        predictor = server.register(name, path, input_shape=shapes.get(name))
        if all(s is not None and None not in s for s in predictor.input_shapes):
            await predictor.warmup()
    try:
        await server.start()
    except OSError as e:
        print(f"mxasync serve: cannot listen on {args.host}:{args.port}: {e.strerror or e}", file=sys.stderr)
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    names = ", ".join(f"{n} ({p})" for n, p in models)
    print(f"mxasync serve: {names} on {server.url} (POST {server.url}/predictions/NAME; Ctrl-C stops)", flush=True)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        print("mxasync serve: shutting down, answering the requests in flight", flush=True)
        await server.stop()
    print("mxasync serve: stopped", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    models, shapes = list(args.models), dict(args.shape)
    if not models:
        models = _default_models()
        if models is None:
            print(f"mxasync serve: no model named and no trained digits model in ./{DEFAULT_FOLDER}.\n"
                  "Run 'mxasync train' first (it writes one there), or name models: "
                  "mxasync serve NAME=PREFIX [NAME=model.onnx ...]", file=sys.stderr)
            return 2
        shapes.setdefault("digits", DIGITS_SHAPE)
    if len({n for n, _ in models}) != len(models):
        parser.error("two models have the same NAME")
    unknown = set(shapes) - {n for n, _ in models}
    if unknown:
        parser.error(f"--shape names models that are not served: {sorted(unknown)}")
    missing = [m for m in ("aiohttp", "prometheus_client") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"mxasync serve needs {' and '.join(missing)}: pip install 'mxasync[serve]'", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_serve(args, models, shapes))
    except ServingError as e:
        print(f"mxasync serve: {e}", file=sys.stderr)
        return 1
