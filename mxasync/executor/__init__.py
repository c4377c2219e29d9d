"""Executors: bound symbols that run forward and backward on the engine (``simple_bind``/``bind``)."""

from types import SimpleNamespace

from .. import _seams
from . import control_flow  # noqa: F401  (installs the runner of _foreach, _while_loop, _cond)
from .bind import bind, simple_bind
from .cached_op import CachedOp
from .executor import Executor

__all__ = ["Executor", "bind", "simple_bind", "CachedOp"]

# what the layers below call up through (mxasync/_seams.py): Symbol.bind/simple_bind and mx.nd.CachedOp
_seams.executor.install(SimpleNamespace(bind=bind, simple_bind=simple_bind, CachedOp=CachedOp))
