"""Fused RNN benchmark: LSTM and GRU language models, forward+backward, mxasync against MXNet 1.9.1; prints JSON.

Workloads (sequence length T=32, batch 64, layout TNC, float32, as issue 38's suite asks):

* ``lstm_lm`` / ``gru_lm``: token ids (T, N) -> Embedding(vocab 1000, 256) -> 2-layer
  ``gluon.rnn.LSTM`` / ``GRU`` (hidden 256) -> Dense(vocab, flatten=False) ->
  SoftmaxCrossEntropyLoss; hybridized; one step = ``autograd.record`` forward, ``backward``,
  a wait on the gradients (no optimizer: the fused op is what is measured).
* ``lstm_layer`` / ``gru_layer``: the bare 2-layer layer on (T, N, 256) data, loss = sum of
  the output; the fused op alone, forward+backward.
* ``lstm_infer``: the bare LSTM layer's inference forward (no reserve space is kept).

Each framework runs in its own child process (``--child mxasync|mxnet``; the MXNet child never
imports mxasync), alternately, ``--rounds`` times, every child with the same thread settings
(``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``, ``MXASYNC_BLAS_THREADS``
= ``--threads``).  Per workload: the median over rounds of wall ms per step and of the
process's CPU ms per step (``time.process_time``: every thread, whatever else the machine
runs), and mxasync's ratios to MXNet (below 1: mxasync is cheaper).

Usage: ``python benchmarks/rnn.py [--steps 20] [--rounds 3] [--threads 2] [--mxnet PY] [--out FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

T, BATCH, EMBED, HIDDEN, LAYERS, VOCAB = 32, 64, 256, 256, 2, 1000
WORKLOADS = ("lstm_lm", "gru_lm", "lstm_layer", "gru_layer", "lstm_infer")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _language_model(mx, mode: str):
    from_gluon = mx.gluon
    net = from_gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(from_gluon.nn.Embedding(VOCAB, EMBED))
        layer = from_gluon.rnn.LSTM if mode == "lstm" else from_gluon.rnn.GRU
        net.add(layer(HIDDEN, num_layers=LAYERS, input_size=EMBED))
        net.add(from_gluon.nn.Dense(VOCAB, flatten=False, in_units=HIDDEN))
    return net


def _step_fn(mx, name: str):
    """A zero-argument function running one step of workload ``name`` and waiting for its results."""
    import numpy as np

    rng = np.random.RandomState(0)
    mode = name.split("_")[0]
    if name.endswith("_lm"):
        net = _language_model(mx, mode)
        tokens = mx.nd.array(rng.randint(0, VOCAB, size=(T, BATCH)))
        labels = mx.nd.array(rng.randint(0, VOCAB, size=(T, BATCH)))
        loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
        x = tokens
    else:
        net = (mx.gluon.rnn.LSTM if mode == "lstm" else mx.gluon.rnn.GRU)(HIDDEN, num_layers=LAYERS,
                                                                          input_size=EMBED)
        x = mx.nd.array(rng.uniform(-1, 1, size=(T, BATCH, EMBED)))
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    params = list(net.collect_params().values())

    def infer():
        net(x).wait_to_read()

    def train():
        with mx.autograd.record():
            out = net(x)
            loss = loss_fn(out, labels) if name.endswith("_lm") else out.sum()
        loss.backward()
        for p in params:
            p.grad().wait_to_read()

    return infer if name.endswith("_infer") else train


def child(framework: str, steps: int) -> dict:
    """Per workload: wall and CPU ms per step over ``steps`` steps after two warm-up steps."""
    if framework == "mxnet":
        import mxnet as mx
    else:
        import mxasync as mx
    mx.random.seed(0)
    result = {}
    for name in WORKLOADS:
        step = _step_fn(mx, name)
        step()
        step()
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(steps):
            step()
        result[name] = {"wall_ms": (time.perf_counter() - t0) / steps * 1e3,
                        "cpu_ms": (time.process_time() - c0) / steps * 1e3}
    return result


def _run_child(python: str, framework: str, steps: int, threads: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "MXASYNC_BLAS_THREADS"):
        env[var] = str(threads)
    if framework == "mxasync":
        env["PYTHONPATH"] = REPO
    out = subprocess.run([python, os.path.abspath(__file__), "--child", framework, "--steps", str(steps)],
                         capture_output=True, text=True, env=env, timeout=1800, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", choices=("mxasync", "mxnet"), help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="the thread count every framework gets")
    ap.add_argument("--mxnet", default="/work/venvs/mx191/bin/python", help="a Python with MXNet 1.9.1 ('' to skip)")
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.steps)))
        return
    peers = {"mxasync": sys.executable}
    if args.mxnet and os.path.exists(args.mxnet):
        peers["mxnet"] = args.mxnet
    runs: dict = {fw: {w: {"wall_ms": [], "cpu_ms": []} for w in WORKLOADS} for fw in peers}
    for _ in range(args.rounds):
        for fw, python in peers.items():
            got = _run_child(python, fw, args.steps, args.threads)
            for w, res in got.items():
                for k, v in res.items():
                    runs[fw][w][k].append(v)
    table = {}
    for w in WORKLOADS:
        row = {fw: {k: round(statistics.median(v), 2) for k, v in runs[fw][w].items()} for fw in peers}
        if "mxnet" in peers:
            for k in ("wall_ms", "cpu_ms"):
                row[f"{k.split('_')[0]}_ratio"] = round(row["mxasync"][k] / row["mxnet"][k], 3)
        table[w] = row
    report = {"config": {"T": T, "batch": BATCH, "embed": EMBED, "hidden": HIDDEN, "layers": LAYERS,
                         "vocab": VOCAB, "threads": args.threads, "steps": args.steps, "rounds": args.rounds},
              "median": table, "rounds": runs}
    text = json.dumps(report, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
