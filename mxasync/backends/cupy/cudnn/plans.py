"""Built cuDNN graphs, cached per (op, shapes, dtypes, layout, params), and how a plan is chosen.

Building a cuDNN graph (validate, lower, query heuristics, compile plans) costs
milliseconds; running one costs microseconds.  So a graph is built once per key and
kept in a bounded least-recently-used cache (``MXASYNC_CUDNN_PLAN_CACHE`` entries,
default 1024).  A key cuDNN does not support is cached too, as ``UNSUPPORTED``, so
the generic kernel takes it from then on without asking cuDNN again.

Which plan runs follows MXNet's ``MXNET_CUDNN_AUTOTUNE_DEFAULT`` (an op's
``cudnn_tune`` parameter overrides it for that op):

=====  ===================  =====================================================
value  ``cudnn_tune``       plan
=====  ===================  =====================================================
0      ``'off'``            cuDNN's heuristics choice, nothing timed
1      ``'limited_workspace'``  the fastest plan (each timed once per key) among
                            those within the op's ``workspace`` limit (MB); the default
2      ``'fastest'``        the fastest plan, whatever workspace it needs
=====  ===================  =====================================================

>>> import os
>>> autotune_mode(None, {}), autotune_mode("fastest", {}), autotune_mode(None, {"MXNET_CUDNN_AUTOTUNE_DEFAULT": "0"})
(<Autotune.LIMITED: 1>, <Autotune.FASTEST: 2>, <Autotune.HEURISTIC: 0>)
"""

from __future__ import annotations

import enum
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any

__all__ = ["Autotune", "autotune_mode", "Plan", "PlanCache", "UNSUPPORTED", "finalize"]


class Autotune(enum.IntEnum):
    HEURISTIC = 0
    LIMITED = 1
    FASTEST = 2


_TUNE_PARAM = {"off": Autotune.HEURISTIC, "limited_workspace": Autotune.LIMITED, "fastest": Autotune.FASTEST}


def autotune_mode(cudnn_tune: str | None, environ: Mapping[str, str] = os.environ) -> Autotune:
    """The op's ``cudnn_tune`` if set, else ``MXNET_CUDNN_AUTOTUNE_DEFAULT`` (MXNet's default: 1)."""
    if cudnn_tune is not None:
        return _TUNE_PARAM[cudnn_tune]
    raw = environ.get("MXNET_CUDNN_AUTOTUNE_DEFAULT", "1").strip()
    try:
        return Autotune(int(raw))
    except ValueError:
        raise ValueError(f"MXNET_CUDNN_AUTOTUNE_DEFAULT={raw!r}: expected 0, 1 or 2") from None


class Plan:
    """A built graph, its tensors by role, the plan index to run (None: the heuristics' choice), its workspace."""

    __slots__ = ("graph", "tensors", "index", "workspace_size")

    def __init__(self, graph: Any, tensors: dict[str, Any], index: int | None, workspace_size: int):
        self.graph = graph
        self.tensors = tensors
        self.index = index
        self.workspace_size = int(workspace_size)

    def execute(self, pack: dict[Any, int], workspace_ptr: int, handle: Any) -> None:
        if self.index is None:
            self.graph.execute(pack, workspace_ptr, handle=handle)
        else:
            self.graph.execute_plan_at_index(pack, workspace_ptr, self.index, handle=handle)


#: the cached verdict for a key cuDNN cannot run
UNSUPPORTED = object()


class PlanCache:
    """A bounded LRU map ``key -> Plan | UNSUPPORTED``; ``get_or_build`` builds each key once."""

    def __init__(self, capacity: int | None = None):
        if capacity is None:
            capacity = int(os.environ.get("MXASYNC_CUDNN_PLAN_CACHE", "1024"))
        self.capacity = max(1, capacity)
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.builds = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get_or_build(self, key: Hashable, build: Callable[[], Any]) -> Any:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return entry
            # built under the lock: two threads asking for one new key build it once
            entry = build()
            self.builds += 1
            self._entries[key] = entry
            if len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
            return entry

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def finalize(fe: Any, graph: Any, handle: Any, mode: Autotune, workspace_limit: int,
             time_plan: Callable[[int, int], float | None]) -> tuple[int | None, int]:
    """Validate and build ``graph``; returns (plan index or None for the heuristics' choice, workspace bytes).

    ``time_plan(index, workspace_bytes)`` runs plan ``index`` and returns its time (None when
    it failed); it is called only when autotuning.  Raises the frontend's error when cuDNN
    cannot run the graph.
    """
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([fe.heur_mode.A, fe.heur_mode.FALLBACK])
    if mode is Autotune.LIMITED:
        graph.deselect_workspace_greater_than(int(workspace_limit))
    graph.check_support()
    if mode is Autotune.HEURISTIC:
        graph.build_plans(fe.build_plan_policy.HEURISTICS_CHOICE)
        return None, graph.get_workspace_size()
    graph.build_plans(fe.build_plan_policy.ALL)
    best: tuple[float, int, int] | None = None
    for index in range(graph.get_execution_plan_count()):
        need = int(graph.get_workspace_size_plan_at_index(index))
        if mode is Autotune.LIMITED and need > workspace_limit:
            continue
        elapsed = time_plan(index, need)
        if elapsed is not None and (best is None or elapsed < best[0]):
            best = (elapsed, index, need)
    if best is None:  # nothing ran when timed: fall back on the heuristics' pick
        graph.build_plans(fe.build_plan_policy.HEURISTICS_CHOICE)
        return None, graph.get_workspace_size()
    return best[1], best[2]
