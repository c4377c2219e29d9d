"""Serving under load: ``mxasync serve`` (dynamic batching) against the plain per-request ASGI endpoint.

    python benchmarks/serve.py [--requests 400] [--concurrency 1,8,64] [--out serve.json]

Both servers run as their own processes on localhost with the same models: the digits LeNet
(``mxasync train``'s network and checkpoint format, 1x28x28) and a Gluon ResNet-18 v1 (10
classes, 3x32x32), both with fresh random weights (the cost does not depend on the values).

* ``mxasync serve lenet=... resnet18=...`` (batches of up to 32; ``--max-delay-ms`` 0, where a batch
  leaves as soon as a slot is free and grows only while earlier batches compute, and 2);
* the plain alternative a user would write: a bare ASGI app under uvicorn whose endpoint runs
  the model on its one example per request (``await net(x).asnumpy_async()``), no batching.

* with ``--mms /path/to/venv/bin/multi-model-server`` also MXNet Model Server 1.1 (Java front end,
  Python workers running MXNet 1.9.1 (a hybridized SymbolBlock) on the same checkpoints, ``serve_mms_handler.py``),
  with the same batching limits and one worker per core (MMS's default). Its venv:
  ``python -m venv V && V/bin/pip install mxnet==1.9.1 numpy==1.23.5 multi-model-server``; it
  needs a Java runtime (Debian's ``default-jre-headless``).

A bounded load generator (aiohttp) keeps ``c`` requests in flight until a fixed count has been
answered, for c in 1, 8, 64; each request posts one example as ``.npy``. It prints JSON (and
writes it to ``--out``): requests/s and p50/p99 latency per server, model and concurrency, with
the batch sizes mxasync served. Needs the serve extra (aiohttp, prometheus_client) and uvicorn.
Load generator and servers share the machine: on 2 cores the figures are of the whole system.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import io
import json
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODELS = {"lenet": (1, 28, 28), "resnet18": (3, 32, 32)}


def make_models(folder: Path) -> dict[str, str]:
    """The two checkpoints (symbol JSON + params), written into ``folder``."""
    import mxasync as mx
    from mxasync.gluon.model_zoo import vision
    from mxasync.train.networks import lenet

    mod = mx.mod.Module(lenet(mean=0.2, std=0.3), context=mx.cpu())
    mod.bind(data_shapes=[("data", (1, 1, 28, 28))], label_shapes=[("softmax_label", (1,))], for_training=False)
    mod.init_params(mx.init.Xavier(magnitude=2.34))
    mod.save_checkpoint(str(folder / "lenet"), 1)
    net = vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.nd.zeros((1, *MODELS["resnet18"])))
    net.export(str(folder / "resnet18"), epoch=1)
    return {"lenet": str(folder / "lenet"), "resnet18": str(folder / "resnet18")}


# ---- the plain alternative: one ASGI endpoint, the model per request ------------------------------

def plain_app(prefixes: dict[str, str]):
    import mxasync as mx

    nets = {}
    for name, prefix in prefixes.items():
        sym, args, aux = mx.model.load_checkpoint(prefix, 1)
        inputs = [n for n in sym.list_arguments() if n not in args]  # data (and LeNet's softmax_label)
        net = mx.gluon.SymbolBlock(sym, [mx.sym.var(n) for n in inputs])
        net.collect_params().load_dict({**args, **aux}, ctx=mx.cpu())
        net.hybridize()
        nets[name] = (net, len(inputs) > 1)

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        net, label = nets[scope["path"].rsplit("/", 1)[-1]]
        x = mx.nd.array(np.load(io.BytesIO(body))[None])
        out = net(x, mx.nd.zeros((1,))) if label else net(x)
        result = json.dumps((await out.asnumpy_async())[0].tolist()).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": result})

    return app


def run_plain_server(port: int, prefixes: dict[str, str]) -> None:
    import uvicorn

    app = plain_app(prefixes)
    print("ready", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


# ---- the load generator ---------------------------------------------------------------------------

async def load(url: str, body: bytes, count: int, concurrency: int) -> dict:
    import aiohttp

    latencies: list[float] = []
    issued = errors = 0

    async def worker(session):
        nonlocal issued, errors
        while issued < count:
            issued += 1
            t0 = time.perf_counter()
            async with session.post(url, data=body, headers={"Content-Type": "application/x-npy"}) as r:
                await r.read()
            if r.status != 200:
                errors += 1
                if errors > count // 10:
                    raise RuntimeError(f"{url}: HTTP {r.status} ({errors} errors)")
            latencies.append(time.perf_counter() - t0)

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        issued, count_ = 0, count
        count = 2 * concurrency  # warm-up: connections opened, graphs built, not counted
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        latencies.clear()
        issued, count, errors = 0, count_, 0
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        wall = time.perf_counter() - t0
    ms = np.array(latencies) * 1e3
    return {"errors": errors, "requests_per_s": round(count / wall, 1), "p50_ms": round(float(np.percentile(ms, 50)), 2),
            "p99_ms": round(float(np.percentile(ms, 99)), 2)}


def _free_port(below: int = 65536) -> int:
    rng = np.random.default_rng()
    while True:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", 0 if below == 65536 else int(rng.integers(20000, below))))
            except OSError:
                continue
            return s.getsockname()[1]


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))


def start_mxasync(prefixes: dict[str, str], delay_ms: float) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-m", "mxasync", "serve", *(f"{n}={p}" for n, p in prefixes.items()), "--port", "0",
           "--batch-size", "32", "--max-delay-ms", str(delay_ms), "--max-queue", "1024",
           *(a for n in prefixes for a in ("--shape", f"{n}={','.join(map(str, MODELS[n]))}"))]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=_env())
    line = proc.stdout.readline()
    match = re.search(r" on (http://\S+)", line)
    if not match:
        proc.kill()
        raise RuntimeError(f"mxasync serve did not start: {line!r}")
    return proc, match.group(1)


def start_plain(prefixes: dict[str, str]) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--plain-server", str(port), json.dumps(prefixes)],
                            stdout=subprocess.PIPE, text=True, env=_env())
    if proc.stdout.readline().strip() != "ready":
        proc.kill()
        raise RuntimeError("the plain ASGI server did not start")
    url = f"http://127.0.0.1:{port}"
    for _ in range(500):  # uvicorn binds after the models are loaded
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, url
        except OSError:
            time.sleep(0.02)
    proc.kill()
    raise RuntimeError("the plain ASGI server never listened")


def start_mms(prefixes: dict[str, str], mms: str, delay_ms: float, folder: Path) -> tuple[subprocess.Popen, str]:
    """MMS on free ports, each model archived with serve_mms_handler.py and registered with batching."""
    import shutil
    import urllib.request

    store = folder / "mms-store"
    store.mkdir()
    for name, prefix in prefixes.items():
        model_dir = folder / f"mms-{name}"
        model_dir.mkdir()
        for suffix in ("-symbol.json", "-0001.params"):
            shutil.copy(prefix + suffix, model_dir / (name + suffix))
        (model_dir / "shape.json").write_text(json.dumps(MODELS[name]))
        shutil.copy(Path(__file__).with_name("serve_mms_handler.py"), model_dir)
        subprocess.run([str(Path(mms).with_name("model-archiver")), "--model-name", name, "--model-path",
                        str(model_dir), "--handler", "serve_mms_handler:handle", "--export-path", str(store), "-f"],
                       check=True)
    port, mport = _free_port(32768), _free_port(32768)  # MMS refuses ports above 32767
    config = folder / "mms.properties"
    config.write_text(f"inference_address=http://127.0.0.1:{port}\nmanagement_address=http://127.0.0.1:{mport}\n"
                      f"model_store={store}\n")
    env = dict(os.environ, PATH=f"{Path(mms).parent}{os.pathsep}{os.environ['PATH']}")
    log = open(folder / "mms.log", "w")  # noqa: SIM115 - MMS's own log, for when it fails
    proc = subprocess.Popen([mms, "--start", "--foreground", "--mms-config", str(config), "--model-store", str(store)],
                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=folder)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(url + "/ping", timeout=1).read()  # noqa: S310 - localhost
            break
        except OSError:
            time.sleep(0.1)
    else:
        stop_mms(proc, mms)
        raise RuntimeError("MMS never answered /ping:\n" + (folder / "mms.log").read_text()[-3000:])
    workers = os.cpu_count() or 1
    for name in prefixes:
        req = urllib.request.Request(f"http://127.0.0.1:{mport}/models?url={name}.mar&batch_size=32"
                                     f"&max_batch_delay={max(int(delay_ms), 1)}&initial_workers={workers}"
                                     "&synchronous=true", method="POST")
        urllib.request.urlopen(req, timeout=300).read()  # noqa: S310 - localhost
    return proc, url


def stop_mms(proc: subprocess.Popen, mms: str) -> None:
    subprocess.run([mms, "--stop"], stdout=subprocess.DEVNULL, check=False)
    proc.wait(timeout=60)


def first_row(url: str, model: str, body: bytes) -> list:
    import urllib.request

    req = urllib.request.Request(f"{url}/predictions/{model}", data=body,
                                 headers={"Content-Type": "application/x-npy"})
    with urllib.request.urlopen(req, timeout=300) as r:  # noqa: S310 - localhost
        return json.load(r)


def _batch_sizes(url: str, model: str) -> dict:
    import urllib.request

    with urllib.request.urlopen(f"{url}/models/{model}") as r:  # noqa: S310 - localhost
        stats = json.load(r)[0]["stats"]
    return {"batches": stats["batches"], "mean_batch": round(stats["completed"] / max(stats["batches"], 1), 2)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=400, help="requests per server, model and concurrency")
    p.add_argument("--concurrency", default="1,8,64")
    p.add_argument("--models", default="lenet,resnet18")
    p.add_argument("--delays", default="0,2", help="mxasync serve's --max-delay-ms values to run, one server each")
    p.add_argument("--out", help="also write the JSON here")
    p.add_argument("--mms", help="the multi-model-server executable of a venv with MXNet 1.9.1: also load MMS")
    p.add_argument("--plain-server", nargs=2, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.plain_server:
        run_plain_server(int(args.plain_server[0]), json.loads(args.plain_server[1]))
        return
    load_at_start = os.getloadavg()
    levels = [int(c) for c in args.concurrency.split(",")]
    names = args.models.split(",")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        prefixes = {n: p for n, p in make_models(Path(tmp)).items() if n in names}
        rng = np.random.RandomState(0)
        bodies = {}
        for n in names:
            buf = io.BytesIO()
            np.save(buf, rng.uniform(0, 1, MODELS[n]).astype(np.float32))
            bodies[n] = buf.getvalue()
        servers = [(f"mxasync serve --max-delay-ms {d:g}", functools.partial(start_mxasync, delay_ms=d))
                   for d in map(float, args.delays.split(","))]
        servers.append(("plain ASGI (uvicorn), per request", start_plain))
        if args.mms:
            servers.append(("MMS 1.1.11 + MXNet 1.9.1 Gluon, batching (2 ms)",
                            functools.partial(start_mms, mms=args.mms, delay_ms=2, folder=Path(tmp))))
        running: dict[str, tuple[subprocess.Popen, str]] = {}
        try:  # every server up at once, then each load level on each in turn: the machine's load hits all alike
            for server, start in servers:
                running[server] = start(prefixes)
            agree = {}
            for n in names:
                rows = {server: first_row(url, n, bodies[n]) for server, (_, url) in running.items()}
                ref = rows[servers[0][0]]  # every server must give the same output
                agree.update({(s, n): bool(np.allclose(r, ref, rtol=1e-4, atol=1e-5)) for s, r in rows.items()})
            for n in names:
                for c in levels:
                    for server, (_, url) in running.items():
                        before = _batch_sizes(url, n) if server.startswith("mxasync") else None
                        row = {"server": server, "model": n, "concurrency": c, "requests": args.requests,
                               "output_agrees": agree[server, n],
                               **asyncio.run(load(f"{url}/predictions/{n}", bodies[n], args.requests, c))}
                        if before is not None:
                            batches = _batch_sizes(url, n)["batches"] - before["batches"]
                            row["mean_batch"] = round((args.requests + 2 * c) / max(batches, 1), 2)
                        results.append(row)
                        print(json.dumps(row), file=sys.stderr, flush=True)
        finally:
            for server, (proc, _) in running.items():
                if server.startswith("MMS"):
                    stop_mms(proc, args.mms)
                    failures = [line for line in (Path(tmp) / "mms.log").read_text().splitlines()
                                if "Error" in line or "Exception" in line]
                    print("\n".join(failures[-10:]), file=sys.stderr)
                else:
                    proc.terminate()
                    proc.communicate(timeout=60)
    report = {"benchmark": "serve", "date": time.strftime("%Y-%m-%d"), "machine": {
        "cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(), "loadavg_at_start": load_at_start,
        "loadavg_at_end": os.getloadavg()}, "results": results}
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
