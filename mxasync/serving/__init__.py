"""``mxasync.serving``: serve models from an asyncio event loop.

:class:`Predictor` batches ``await predictor.predict(x)`` calls dynamically inside any asyncio
program; :class:`ModelServer` (needs ``pip install 'mxasync[serve]'``: aiohttp, prometheus_client)
puts predictors behind a TorchServe-compatible HTTP API, and ``mxasync serve`` runs one.
See ``docs/serving.md``.
"""

from typing import TYPE_CHECKING

from .errors import (
    InvalidInput,
    ModelError,
    ModelNotFound,
    PredictorClosed,
    QueueFull,
    RequestTimeout,
    ServingError,
)
from .model import LoadedModel, latest_checkpoint, load_model
from .predictor import Predictor, PredictorStats

__all__ = ["Predictor", "PredictorStats", "LoadedModel", "load_model", "latest_checkpoint", "ModelServer",
           "TensorHandler", "ServingError", "InvalidInput", "QueueFull", "RequestTimeout", "PredictorClosed",
           "ModelError", "ModelNotFound"]

if TYPE_CHECKING:  # loaded on first use below: they need the serve extra
    from .handlers import TensorHandler
    from .server import ModelServer

_SERVER_NAMES = {"ModelServer": "server", "TensorHandler": "handlers"}


def __getattr__(name: str):
    # the HTTP side needs aiohttp and prometheus_client (the 'serve' extra); the Predictor does not
    if name in _SERVER_NAMES:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_SERVER_NAMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
