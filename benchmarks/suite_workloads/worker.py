"""One framework's side of ``benchmarks/suite.py``: ``python worker.py mxasync|mxnet|torch THREADS``.

It answers requests, one JSON line each on stdin (``{"workload": ..., "steps": ..., "warmup": ...,
"data_dir": ...}``), with one JSON line of figures on its original stdout; anything the frameworks print
goes to stderr.  The last workload built is kept, so later rounds time the same objects again.
Nothing of mxasync is imported unless the framework asked for is mxasync.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback

FRAMEWORKS = ("mxasync", "mxnet", "torch")


def _import_path() -> None:
    # this folder's modules must not shadow anything, nor benchmarks/'s (io.py, image.py): last on the path
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.path.append(os.path.dirname(here))


def _framework(which: str, threads: int):
    """The framework package and a record of its versions and thread settings."""
    if which == "torch":
        import torch

        torch.set_num_threads(threads)
        return torch, {"version": torch.__version__, "intra_op_threads": torch.get_num_threads(),
                       "inter_op_threads": torch.get_num_interop_threads()}
    mx = importlib.import_module("mxasync" if which == "mxasync" else "mxnet")
    facts = {"version": getattr(mx, "__version__", "?")}
    if which == "mxasync":
        from mxasync.backends.numpy import blas
        from mxasync.runtime.engine import threads as engine_threads

        facts["engine_cpu_workers"] = engine_threads.default_worker_threads()
        facts["engine_blas_threads"] = blas.threads()
    else:
        facts["engine_cpu_workers"] = int(os.environ.get("MXNET_CPU_WORKER_NTHREADS", "1"))
        facts["omp_threads"] = int(os.environ.get("OMP_NUM_THREADS", "0")) or None
    return mx, facts


def _build(which: str, fw, request: dict):
    from suite_workloads import common

    family = importlib.import_module(f"suite_workloads.{request['family']}")
    builder = family.build_torch if which == "torch" else family.build_mx
    try:
        return builder(fw, request["workload"], request), None
    except common.NotApplicable as exc:
        return None, str(exc)


def serve(which: str, threads: int) -> None:
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # the frameworks' own prints (C level too) must not mix with the replies
    sys.stdout = sys.stderr
    _import_path()
    from suite_workloads import common

    fw, facts = _framework(which, threads)
    reply.write(json.dumps({"ready": which, "facts": facts, "python": sys.executable}) + "\n")
    current, bench, skipped = None, None, None
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["workload"] != current:
                bench, skipped, current = None, None, None  # free the last workload before building
                bench, skipped = _build(which, fw, request)
                current = request["workload"]
                for _ in range(request["warmup"] if bench else 0):
                    bench.step()
            out = ({"not_applicable": skipped} if bench is None
                   else {**common.measure(bench, request["steps"]), "facts": bench.facts})
        except Exception as exc:  # the suite goes on; the table says what failed
            traceback.print_exc()
            out, current = {"error": f"{type(exc).__name__}: {exc}"[:300]}, None
        reply.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in FRAMEWORKS:
        raise SystemExit(f"usage: worker.py {'|'.join(FRAMEWORKS)} THREADS")
    serve(sys.argv[1], int(sys.argv[2]))
