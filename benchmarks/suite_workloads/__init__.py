"""The workloads of ``benchmarks/suite.py``, one module per family, each written once for the MXNet API
(run by mxasync and by MXNet 1.9.1 alike: the module gets the ``mx`` package as an argument and never
imports mxasync itself) and once for PyTorch.

A family module offers ``build_mx(mx, name, cfg)`` and ``build_torch(torch, name, cfg)``; both return a
:class:`~suite_workloads.common.Bench` (one step, synchronised, and the facts to record) or raise
:class:`~suite_workloads.common.NotApplicable`.  :data:`WORKLOADS` is the list the suite runs, in order.
"""

from __future__ import annotations

from .registry import WORKLOADS, Workload, by_name

__all__ = ["WORKLOADS", "Workload", "by_name"]
