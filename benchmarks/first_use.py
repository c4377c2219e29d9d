"""The first ``mx.nd`` call of a fresh process, and how long it stalls a running event loop (issue 26).

    python benchmarks/first_use.py [--runs 9] [--tree PATH ...]

Each run is a fresh process (bytecode already compiled: one warm-up run per tree first) that,
inside ``asyncio.run``, does ``x = mx.nd.ones((2, 3)); await x.asnumpy_async()`` while a task
ticks every millisecond, then lists the whole registry (``dir(mx.nd)``, ``list_ops()``).  It
prints JSON per tree (``--tree``: a checkout whose ``mxasync`` to import, default this one):
the min and median over the runs of the import, the first call (wall and CPU seconds), the
longest gap between two ticks during the first call (the loop's stall), the op modules loaded
by it, and the CPU seconds of listing every op afterwards.  The machine's load makes the walls
noisy: compare the minima, measured by the same command.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

_CHILD = r"""
import asyncio, json, sys, time, warnings
warnings.simplefilter("ignore")
t0, c0 = time.perf_counter(), time.process_time()
import mxasync as mx
t1, c1 = time.perf_counter(), time.process_time()

async def main():
    gaps, stop = [], asyncio.Event()

    async def ticker():
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    gaps.clear()
    t, c = time.perf_counter(), time.process_time()
    x = mx.nd.ones((2, 3))
    await x.asnumpy_async()
    first = (time.perf_counter() - t, time.process_time() - c)
    await asyncio.sleep(0.002)
    stop.set()
    await task
    return first, max(gaps)

(first_wall, first_cpu), stall = asyncio.run(main())
modules = sum(1 for m in sys.modules if m.startswith("mxasync.operator.") and m.count(".") >= 3)
c = time.process_time()
from mxasync.operator.registry import list_ops
n = len(dir(mx.nd)) + len(list_ops(include_aliases=True))
everything = time.process_time() - c
print(json.dumps({"import_wall": t1 - t0, "import_cpu": c1 - c0, "first_wall": first_wall, "first_cpu": first_cpu,
                  "loop_stall": stall, "op_modules_after_first": modules,
                  "op_modules_all": sum(1 for m in sys.modules if m.startswith("mxasync.operator.")
                                        and m.count(".") >= 3),
                  "list_all_cpu": everything, "names_listed": n}))
"""


def _run(python: str, tree: str) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, PYTHONWARNINGS="ignore")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([python, "-c", _CHILD], capture_output=True, text=True, env=env, cwd=tree, check=True,
                         timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--tree", action="append", help="a checkout to measure (repeatable; default: this one)")
    args = p.parse_args()
    trees = args.tree or [str(Path(__file__).resolve().parents[1])]
    for tree in trees:
        _run(sys.executable, tree)  # writes the bytecode
    samples: dict[str, list[dict]] = {t: [] for t in trees}
    for _ in range(args.runs):
        for tree in trees:  # interleaved: a burst of load hits every tree alike
            samples[tree].append(_run(sys.executable, tree))
    result = {"runs": args.runs, "cpus": os.cpu_count(), "load_avg": [round(x, 2) for x in os.getloadavg()]}
    for tree, rows in samples.items():
        summary = {}
        for key in rows[0]:
            values = [r[key] for r in rows]
            if isinstance(values[0], float):
                summary[key] = {"min": round(min(values), 4), "median": round(statistics.median(values), 4)}
            else:
                summary[key] = values[0] if len(set(values)) == 1 else sorted(set(values))
        result[tree] = summary
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
