"""What a workload builder returns, and how a step is timed (wall and CPU, worker processes included)."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# the suite's shared training settings: every framework gets the same optimizer
LR, MOMENTUM, WD = 0.05, 0.9, 1e-4


class NotApplicable(Exception):
    """The framework has no counterpart of this workload (the reason goes into the table)."""


@dataclass
class Bench:
    """One step of a workload, synchronised (it returns when the step's results exist)."""

    step: Callable[[], object]
    facts: dict = field(default_factory=dict)  # recorded with the figures (e.g. a reference cost)


def _clock_ticks() -> int:
    return os.sysconf("SC_CLK_TCK")


def _descendants_cpu(root: int) -> float:
    """CPU seconds (user + system) of the live descendants of ``root``, read from /proc."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    tick = _clock_ticks()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        parents[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    total, frontier = 0.0, {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier}
        total += sum(cpu[pid] for pid in frontier)
    return total


def cpu_seconds() -> float:
    """This process's CPU time (all threads), plus its worker processes' (live ones from /proc, ended
    ones through RUSAGE_CHILDREN), so a DataLoader's workers count wherever they run."""
    done = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + done.ru_utime + done.ru_stime + _descendants_cpu(os.getpid())


def measure(bench: Bench, steps: int) -> dict:
    """Wall and CPU milliseconds per step over ``steps`` steps."""
    c0, t0 = cpu_seconds(), time.perf_counter()
    for _ in range(steps):
        bench.step()
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    return {"wall_ms": wall / steps * 1e3, "cpu_ms": cpu / steps * 1e3}
