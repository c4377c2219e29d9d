"""Resident memory of a hybridized net trained over sequence lengths 1..N, mxasync and (when given)
MXNet: every length is a new input shape, so a pool that keeps each shape's blocks grows without end.

    python benchmarks/memory_seq_lengths.py [--lengths 500] [--mxnet /work/venvs/mx191/bin/python]

Each library runs in a fresh process; it prints JSON: per library the RSS growth over the run,
what is still held after the net and trainer are deleted, and (mxasync) what the CPU pool holds.
Issue 34: mxasync grew 4.5 GB and kept 4.3 GB before the pool released cold size classes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

_CHILD = r"""
import gc, json, sys, time
lib, n = sys.argv[1], int(sys.argv[2])
mx = __import__(lib)
from importlib import import_module
autograd, gluon = import_module(lib + ".autograd"), import_module(lib + ".gluon")

def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0

net = gluon.nn.HybridSequential()
net.add(gluon.nn.Dense(512, activation="relu", flatten=False), gluon.nn.Dense(64, flatten=False))
net.initialize(mx.init.Uniform(0.01))
net.hybridize()
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.001})
net(mx.nd.ones((8, 1, 64))).wait_to_read()
gc.collect(); mx.nd.waitall()
base, t0 = rss(), time.perf_counter()
for length in range(1, n + 1):
    x = mx.nd.ones((8, length, 64)) * 0.1
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(8)
    loss.wait_to_read()
mx.nd.waitall(); gc.collect()
out = {"grown_mb": round(rss() - base), "seconds": round(time.perf_counter() - t0, 1)}
del net, trainer, loss, x
for _ in range(2):
    gc.collect(); mx.nd.waitall()
out["kept_after_delete_mb"] = round(rss() - base)
if lib == "mxasync":
    from mxasync.runtime.storage import Storage
    out["pool_mb"] = round(Storage.get(mx.cpu()).pooled_bytes() / 2**20)
print(json.dumps(out))
"""


def _run(python: str, lib: str, n: int) -> dict:
    res = subprocess.run([python, "-c", _CHILD, lib, str(n)], capture_output=True, text=True, timeout=3600)
    if res.returncode != 0:
        return {"error": res.stderr.strip().splitlines()[-1:]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lengths", type=int, default=500)
    p.add_argument("--mxnet", help="a python with MXNet 1.9 installed, to compare")
    args = p.parse_args()
    out = {"lengths": args.lengths, "mxasync": _run(sys.executable, "mxasync", args.lengths)}
    if args.mxnet:
        out["mxnet"] = _run(args.mxnet, "mxnet", args.lengths)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
