"""KVStore benchmarks; prints one JSON object.

    python benchmarks/kvstore.py [--quick]

* ``local``: push+pull of 10 keys x 1M float32 (4 values pushed per key, as
  from 4 devices) through the ``local`` store, against the same sums and copies
  written in numpy.
* ``dist_sync`` (2 workers, ``mxasync launch``): one round = push then pull of
  10 keys x 1M float32 on every worker, against a bare mpi4py Allreduce of the
  same 10 arrays in the same job (``bare_allreduce_ms``: in place, no copies), and
  against the data movement the round's semantics need in bare mpi4py
  (``bare_allreduce_and_copies_ms``: Allreduce from the pushed array into a
  second one, then a copy into the pull's output).  ``pushpull_in_place_ms``: the
  same round pulling into the pushed arrays (MXNet's ``update_on_kvstore=False``
  pattern), which sums in place and copies once into the store, against that
  data movement in bare mpi4py (``bare_in_place_and_copy_ms``).
* ``dist_async`` (2 workers + 1 server): the same round through the server rank,
  against the same bare mpi4py figures among the 2 workers.

Run as workers (``--worker sync|async``) it measures one job and prints its
JSON from worker 0; the parent starts those jobs and merges their output.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import mxasync as mx  # noqa: E402
from mxasync import kvstore  # noqa: E402

KEYS, SIZE = 10, 1 << 20


def _median_ms(fn, repeat: int) -> float:
    fn()  # warm-up: buffers, pools, learned op costs
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times) * 1e3)


def bench_local(repeat: int) -> dict:
    kv = kvstore.create("local")
    grads = [[mx.nd.ones((SIZE,)) for _ in range(4)] for _ in range(KEYS)]
    outs = [mx.nd.zeros((SIZE,)) for _ in range(KEYS)]
    for k in range(KEYS):
        kv.init(k, outs[k])

    def round_() -> None:
        for k in range(KEYS):
            kv.push(k, grads[k])
        for k in range(KEYS):
            kv.pull(k, out=outs[k])
        mx.nd.waitall()

    np_grads = [[g.asnumpy() for g in gs] for gs in grads]
    np_store = [np.zeros(SIZE, np.float32) for _ in range(KEYS)]
    np_outs = [np.zeros(SIZE, np.float32) for _ in range(KEYS)]

    def numpy_round() -> None:
        for k in range(KEYS):
            gs = np_grads[k]
            np.add(gs[0], gs[1], out=np_store[k])
            for g in gs[2:]:
                np_store[k] += g
        for k in range(KEYS):
            np_outs[k][...] = np_store[k]

    ms, np_ms = _median_ms(round_, repeat), _median_ms(numpy_round, repeat)
    return {"round_ms": round(ms, 2), "numpy_ms": round(np_ms, 2), "ratio": round(ms / np_ms, 2)}


def worker(kind: str, repeat: int) -> None:
    kv = kvstore.create("dist_sync" if kind == "sync" else "dist_async")
    grads = [mx.nd.ones((SIZE,)) * (kv.rank + 1) for _ in range(KEYS)]
    outs = [mx.nd.zeros((SIZE,)) for _ in range(KEYS)]
    for k in range(KEYS):
        kv.init(k, outs[k])
    kv.barrier()

    def round_() -> None:
        for k in range(KEYS):
            kv.push(k, grads[k], priority=-k)
        for k in range(KEYS):
            kv.pull(k, out=outs[k], priority=-k)
        for o in outs:
            o.wait_to_read()

    def pushpull_round() -> None:
        # MXNet's update_on_kvstore=False pattern: the sum comes back into the pushed gradients
        for k in range(KEYS):
            kv.push(k, grads[k], priority=-k)
        for k in range(KEYS):
            kv.pull(k, out=grads[k], priority=-k)
        for g in grads:
            g.wait_to_read()

    # the same bytes through bare mpi4py among the workers in this job, alternating with the
    # store's rounds so both see the same machine load (the comm thread is idle between rounds)
    comm = kv._comm
    bufs = [g.asnumpy() for g in grads]
    MPI = comm.MPI
    stored, pulled = [np.empty_like(b) for b in bufs], [np.empty_like(b) for b in bufs]

    def bare() -> None:
        for b in bufs:
            comm.group.Allreduce(MPI.IN_PLACE, b, op=MPI.SUM)

    def bare_copies() -> None:
        # the data movement push+pull needs: the pushed array unchanged, the sum in the store and in out
        for b, s, p in zip(bufs, stored, pulled, strict=True):
            comm.group.Allreduce(b, s, op=MPI.SUM)
            np.copyto(p, s)

    def bare_in_place_and_copy() -> None:
        # pushpull into the pushed arrays: sum in place, then the store's copy
        for b, s in zip(bufs, stored, strict=True):
            comm.group.Allreduce(MPI.IN_PLACE, b, op=MPI.SUM)
            np.copyto(s, b)

    runs = {"round": round_, "bare": bare, "bare_copies": bare_copies}
    if kind == "sync":
        runs.update(pushpull=pushpull_round, bare_in_place_copy=bare_in_place_and_copy)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat + 1):
        for name, fn in runs.items():
            kv.barrier()
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    ms = {name: float(np.median(t[1:]) * 1e3) for name, t in times.items()}
    result = {"workers": kv.num_workers, "round_ms": round(ms["round"], 2),
              "bare_allreduce_ms": round(ms["bare"], 2), "ratio": round(ms["round"] / ms["bare"], 2),
              "bare_allreduce_and_copies_ms": round(ms["bare_copies"], 2),
              "ratio_to_copies": round(ms["round"] / ms["bare_copies"], 2)}
    if kind == "sync":
        result.update(pushpull_in_place_ms=round(ms["pushpull"], 2),
                      pushpull_ratio=round(ms["pushpull"] / ms["bare"], 2),
                      bare_in_place_and_copy_ms=round(ms["bare_in_place_copy"], 2),
                      pushpull_ratio_to_copy=round(ms["pushpull"] / ms["bare_in_place_copy"], 2))
    kv.barrier()
    if kv.rank == 0:
        print("RESULT " + json.dumps(result), flush=True)


def launch_job(kind: str, repeat: int) -> dict:
    servers = ["--num-servers", "1"] if kind == "async" else []
    cmd = [sys.executable, "-c", "import sys; from mxasync.cli import main; sys.exit(main())", "launch",
           "-n", "2", *servers, "--timeout", "300", __file__, "--worker", kind, "--repeat", str(repeat)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=360)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": (proc.stdout + proc.stderr)[-2000:]}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--worker", choices=["sync", "async"])
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    repeat = 3 if args.quick else args.repeat
    if args.worker:
        worker(args.worker, repeat)
        return
    from mxasync.kvstore.dist import available

    result: dict = {"keys": KEYS, "values_per_key": SIZE, "dtype": "float32", "cpus": os.cpu_count(),
                    "local": bench_local(repeat)}
    if available():
        result["dist_sync"] = launch_job("sync", repeat)
        result["dist_async"] = launch_job("async", repeat)
    else:
        result["dist"] = "skipped: needs mpirun and mpi4py"
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
