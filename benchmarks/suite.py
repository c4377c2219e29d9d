"""The CPU speed suite (issue 38): fixed workloads on mxasync, MXNet 1.9.1 and PyTorch, side by side.

Each framework runs in its own Python (a worker process, ``benchmarks/suite_workloads/worker.py``),
found by ``MXASYNC_MXNET_PYTHON`` (default /work/venvs/mx191/bin/python) and ``MXASYNC_TORCH_PYTHON``
(default /work/venvs/torch/bin/python); mxasync runs under this Python with this checkout on its path.
Every worker gets the same thread count (``--threads``, default: the cores): OMP/MKL/OpenBLAS variables
in its environment and ``torch.set_num_threads`` in PyTorch's; mxasync's engine keeps its own settings,
recorded with the figures.  ``OMP_WAIT_POLICY=PASSIVE`` (``--omp-wait-policy``) keeps MXNet's and
PyTorch's OpenMP threads from spinning between parallel regions: on a loaded machine those spins
are billed as CPU time (MXNet's MLP step measured 8.5 to 118 ms CPU with the default policy).  For each workload the frameworks take turns, round after round, so every
round sees the same machine; the figures are medians over rounds of wall and CPU time (the process's,
all threads, its worker processes included) per step, per call or per batch, and the ratios are
mxasync over MXNet and over PyTorch (below 1: mxasync costs less).

On a shared machine compare CPU time: wall time swings with the other jobs.

Usage: ``python benchmarks/suite.py [--only NAME[,NAME]] [--rounds 3] [--threads N] [--json PATH]``
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(HERE)  # last: benchmarks/io.py must not shadow the standard io

from suite_workloads import WORKLOADS, Workload, by_name  # noqa: E402
from suite_workloads.data_pipeline import write_jpeg_folder  # noqa: E402

PYTHONS = {"mxasync": ("MXASYNC_PYTHON", sys.executable),
           "mxnet": ("MXASYNC_MXNET_PYTHON", "/work/venvs/mx191/bin/python"),
           "torch": ("MXASYNC_TORCH_PYTHON", "/work/venvs/torch/bin/python")}
PEERS = ("mxnet", "torch")


class Worker:
    """One framework's worker process: sends a request, waits (with a limit) for its one-line answer."""

    def __init__(self, framework: str, python: str, threads: int, omp_wait: str, log_dir: str):
        self.framework, self.python, self.threads, self.omp_wait = framework, python, threads, omp_wait
        self.log_path = os.path.join(log_dir, f"{framework}.log")
        self.proc: subprocess.Popen | None = None
        self.facts: dict = {}

    def _env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[var] = str(self.threads)
        if self.omp_wait:  # OpenMP threads spinning on a loaded machine would bill their waits as work
            env["OMP_WAIT_POLICY"] = self.omp_wait
        if self.framework == "mxasync":
            env["PYTHONPATH"] = os.path.dirname(HERE)  # this checkout's mxasync
        return env

    def start(self, timeout: float) -> None:
        script = os.path.join(HERE, "suite_workloads", "worker.py")
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen([self.python, script, self.framework, str(self.threads)], env=self._env(),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
        hello = self._answer(timeout)
        if "ready" not in hello:
            raise RuntimeError(f"{self.framework} worker did not start: {hello} (see {self.log_path})")
        self.facts = {**hello["facts"], "python": hello["python"]}

    def _answer(self, timeout: float) -> dict:
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        ready = sel.select(timeout)
        sel.close()
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.stop()
            return {"error": "timed out" if not ready else f"worker ended (see {self.log_path})"}
        return json.loads(line)

    def ask(self, request: dict, timeout: float) -> dict:
        if self.proc is None:
            try:
                self.start(timeout)
            except (OSError, RuntimeError) as exc:
                return {"error": str(exc)}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self._answer(timeout)

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.stdin.close()
                try:
                    self.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None


def _encode_jpeg(path: str, rgb) -> None:
    try:
        import cv2

        cv2.imwrite(path, rgb[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, 90])
    except ImportError:
        from PIL import Image

        Image.fromarray(rgb).save(path, quality=90)


def _summarise(w: Workload, runs: list[dict]) -> dict:
    """Medians (in the workload's unit) over the rounds that gave figures, or why there are none."""
    good = [r for r in runs if "cpu_ms" in r]
    if not good:
        return {"missing": next((r.get("not_applicable") or r.get("error") for r in runs), "not run")}
    scale = (1e3 if w.per == "call" else 1.0) / w.per_step  # per call: microseconds
    out = {key: round(statistics.median(r[key] for r in good) * scale, 3) for key in ("cpu_ms", "wall_ms")}
    out["rounds"] = {key: [round(r[key] * scale, 3) for r in good] for key in ("cpu_ms", "wall_ms")}
    if good[-1].get("facts"):
        out["facts"] = good[-1]["facts"]
    return out


def _ratios(by_fw: dict) -> dict:
    ours = by_fw.get("mxasync", {})
    out = {}
    for peer in PEERS:
        theirs = by_fw.get(peer, {})
        for key in ("cpu_ms", "wall_ms"):
            if key in ours and theirs.get(key):
                out[f"{key.split('_')[0]}_vs_{peer}"] = round(ours[key] / theirs[key], 3)
    return out


def run_suite(workloads, frameworks: list[str], rounds: int, threads: int, omp_wait: str, timeout: float) -> dict:
    # files in memory where there is a tmpfs: a disk's writeback of other jobs' files is no part of a save
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    data_dir = tempfile.mkdtemp(prefix="mxasync-suite-", dir=shm)
    workers = {fw: Worker(fw, _python(fw), threads, omp_wait, data_dir) for fw in frameworks}
    results = {}
    try:
        if any(w.name == "image_pipeline" for w in workloads):
            write_jpeg_folder(data_dir, _encode_jpeg)
        for w in workloads:
            request = {"workload": w.name, "family": w.family, "steps": w.steps, "warmup": w.warmup,
                       "per_step": w.per_step, "data_dir": data_dir}
            runs: dict[str, list[dict]] = {fw: [] for fw in frameworks}
            for _ in range(rounds):
                for fw in frameworks:
                    runs[fw].append(workers[fw].ask(request, timeout))
            by_fw = {fw: _summarise(w, r) for fw, r in runs.items()}
            results[w.name] = {"about": w.about, "unit": _unit(w), "steps": w.steps, "per_step": w.per_step,
                               "frameworks": by_fw, "ratios": _ratios(by_fw)}
            print(_row(w.name, results[w.name], frameworks), file=sys.stderr, flush=True)
    finally:
        for worker in workers.values():
            worker.stop()
        logs = {fw: open(wk.log_path).read()[-2000:] for fw, wk in workers.items() if os.path.exists(wk.log_path)}
        shutil.rmtree(data_dir, ignore_errors=True)
    return {"workloads": results, "frameworks": {fw: wk.facts or {"python": wk.python} for fw, wk in workers.items()},
            "worker_log_tails": {fw: t for fw, t in logs.items() if "Traceback" in t}}


def _python(fw: str) -> str:
    var, default = PYTHONS[fw]
    return os.environ.get(var, default)


def _unit(w: Workload) -> str:
    return "us/call" if w.per == "call" else f"ms/{w.per}"


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.3g}" if value < 100 else f"{value:.0f}"


def _row(name: str, res: dict, frameworks: list[str]) -> str:
    fws, ratios = res["frameworks"], res["ratios"]
    cpu = [_fmt(fws[fw].get("cpu_ms")) for fw in frameworks]
    wall = [_fmt(fws[fw].get("wall_ms")) for fw in frameworks]
    rat = [_fmt(ratios.get(f"cpu_vs_{p}")) for p in PEERS]
    return f"| {name} | {res['unit']} | " + " | ".join(cpu + rat + wall) + " |"


def table(report: dict) -> str:
    frameworks = list(report["frameworks"])
    head = ([f"{fw} CPU" for fw in frameworks] + [f"CPU ratio vs {p}" for p in PEERS]
            + [f"{fw} wall" for fw in frameworks])
    lines = ["| workload | unit | " + " | ".join(head) + " |", "|" + "---|" * (len(head) + 2)]
    lines += [_row(name, res, frameworks) for name, res in report["workloads"].items()]
    notes = [f"- {name}, {fw}: {r['missing']}" for name, res in report["workloads"].items()
             for fw, r in res["frameworks"].items() if "missing" in r]
    tiny = report["workloads"].get("tiny_op", {}).get("frameworks", {}).get("mxasync", {}).get("facts", {})
    if "numpy_us_per_call" in tiny:
        notes.append(f"- tiny_op reference: NumPy's own a + b costs {tiny['numpy_us_per_call']} us CPU per call")
    return "\n".join(lines + ([""] + notes if notes else []))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated workload names (default: all): "
                    + ", ".join(w.name for w in WORKLOADS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="threads for every framework")
    ap.add_argument("--omp-wait-policy", default="PASSIVE",
                    help="OMP_WAIT_POLICY of every worker ('' leaves each framework's default)")
    ap.add_argument("--frameworks", default="mxasync,mxnet,torch")
    ap.add_argument("--timeout", type=float, default=300, help="seconds one measurement may take")
    ap.add_argument("--json", default="", help="write the figures here")
    args = ap.parse_args()
    frameworks = [fw for fw in args.frameworks.split(",") if fw]
    absent = [fw for fw in frameworks if not os.path.exists(_python(fw))]
    frameworks = [fw for fw in frameworks if fw not in absent]
    started, commit = datetime.datetime.now(datetime.timezone.utc), _commit()  # the code the workers import
    report = run_suite(by_name(args.only), frameworks, max(1, args.rounds), args.threads,
                       args.omp_wait_policy, args.timeout)
    report.update({"date": started.isoformat(timespec="seconds"), "command": " ".join(["python"] + sys.argv),
                   "rounds": args.rounds, "threads": args.threads,
                   "omp_wait_policy": args.omp_wait_policy, "absent_frameworks": absent,
                   "machine": {"cpu_count": os.cpu_count(), "processor": _cpu_model(), "python": platform.python_version(),
                               "load_average_after": os.getloadavg()},
                   "seconds": round((datetime.datetime.now(datetime.timezone.utc) - started).total_seconds(), 1),
                   # what the run cost the machine, all workers together: its length on a quiet machine
                   "worker_cpu_seconds": round(sum(_children_cpu()), 1), "mxasync_commit": commit})
    print(table(report))
    print(f"\n{report['seconds']} s ({report['worker_cpu_seconds']} CPU-s in the workers); threads {args.threads}; "
          f"load average after {report['machine']['load_average_after']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


def _children_cpu() -> tuple[float, float]:
    done = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done.ru_utime, done.ru_stime


def _commit() -> str:
    """This checkout's commit, marked ``+dirty`` when its files differ from it."""
    root = os.path.dirname(HERE)
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor()


if __name__ == "__main__":
    main()
