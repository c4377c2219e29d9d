"""Stress: SIGSTOP one rank of a 2-worker dist_sync Module.fit, N runs in a row; prints JSON.

    python benchmarks/kvstore_stall.py [--runs 10] [--timeout 20]

Each run launches ``tests/kvstore/dist/scripts/stall.py fit`` with
``MXASYNC_KVSTORE_TIMEOUT=--timeout``, waits until the chosen worker trains,
then a random 0.2-3 s later stops it with SIGSTOP from outside, and measures
how long the job takes to end after the stop.  The promise: every run ends, in
at most the timeout plus a few seconds, with the message naming the silent
worker.  ``mxasync launch --timeout`` (timeout + 60 s) is the backstop that
would report a hang (exit status 124).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "kvstore" / "dist")]

from test_dist import stop_rank_mid_job  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--timeout", type=float, default=20.0, help="MXASYNC_KVSTORE_TIMEOUT of the job")
    p.add_argument("--seed", type=int, default=0)
    opts = p.parse_args()
    rng = random.Random(opts.seed)
    runs = []
    for i in range(opts.runs):
        rank, delay = rng.choice([0, 1]), round(rng.uniform(0.2, 3.0), 2)
        rc, out, after = stop_rank_mid_job("stall.py", "fit", rank=rank, delay=delay, timeout=opts.timeout + 60,
                                           env={"MXASYNC_KVSTORE_TIMEOUT": f"{opts.timeout:g}"})
        named = f"no answer from worker {rank}" in out
        runs.append({"run": i, "stopped_rank": rank, "stopped_after_s": delay, "exit_status": rc,
                     "ended_after_stop_s": round(after, 2), "message_names_it": named})
        print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    ended = [r for r in runs if r["exit_status"] not in (0, 124)]
    worst = max((r["ended_after_stop_s"] for r in runs), default=float("nan"))
    print(json.dumps({"timeout_s": opts.timeout, "runs": len(runs), "ended": len(ended),
                      "hung": sum(r["exit_status"] == 124 for r in runs),
                      "message_names_the_stopped_rank": sum(r["message_names_it"] for r in runs),
                      "max_end_after_stop_s": worst, "max_over_timeout_s": round(worst - opts.timeout, 2),
                      "detail": runs}))


if __name__ == "__main__":
    main()
