"""The operator layer's one lock for what it builds on first use: op families and param models.

Op families import, and pydantic builds a param model's schema (and pydantic-core its own
state), in whichever thread first needs them, so a ``fork()`` can come while another thread
is halfway through one.  The child would then inherit a lock taken by a thread it does not
have (the import's module lock, pydantic's rebuild lock, a lock inside pydantic-core) and
wait for it forever: a ``multiprocessing`` child hung that way in about half the runs on
2 cores.  Importing families and validating params under this lock, which every fork takes
(:func:`~mxasync.runtime.engine.lifetime.hold_across_fork`), makes a fork wait for the one
in progress, so the child sees it whole or not begun.

Rule: never wait for the engine or a storage pool while holding it (loading an op family
pushes nothing and allocates nothing, ``tests/operator/test_lazy_registry.py`` checks it;
an engine array given as a param value is read before the lock is taken).
"""

from __future__ import annotations

import importlib
import sys
import threading
from types import ModuleType

from ..runtime.engine.lifetime import hold_across_fork

LOAD_LOCK = hold_across_fork(threading.RLock())  # reentrant: a family's import may load another's


def lazy_import(name: str) -> ModuleType:
    """``importlib.import_module(name)`` under :data:`LOAD_LOCK`: for a kernel's optional dependency
    (scipy.special, OpenCV) imported on first use, on whatever engine thread runs the kernel.
    Raises ImportError as the import does."""
    module = sys.modules.get(name)
    if module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False):
        return module
    with LOAD_LOCK:
        return importlib.import_module(name)
