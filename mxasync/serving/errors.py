"""The errors a :class:`~mxasync.serving.Predictor` raises, each mapped to one HTTP status by the server.

>>> from mxasync.serving import QueueFull, ServingError
>>> issubclass(QueueFull, ServingError), QueueFull.status
(True, 503)
"""

from __future__ import annotations

from ..base import MXAsyncError

__all__ = ["ServingError", "InvalidInput", "QueueFull", "RequestTimeout", "PredictorClosed", "ModelError",
           "ModelNotFound"]


class ServingError(MXAsyncError):
    """Base of the serving errors; ``status`` is the HTTP status and ``kind`` TorchServe's error type."""

    status = 500
    kind = "InternalServerException"


class InvalidInput(ServingError):
    """A request the model cannot take: a body that does not decode, or an example of the wrong shape."""

    status = 400
    kind = "BadRequestException"


class QueueFull(ServingError):
    """The predictor's queue holds ``max_queue`` requests already: refused at once (back-pressure)."""

    status = 503
    kind = "ServiceUnavailableException"


class RequestTimeout(ServingError, TimeoutError):
    """The request was not answered within its timeout; its rows left the queue."""

    status = 408
    kind = "RequestTimeoutException"


class PredictorClosed(ServingError):
    """The predictor is closing or closed (the server is shutting down, or the model was unregistered)."""

    status = 503
    kind = "ServiceUnavailableException"


class ModelError(ServingError):
    """The model failed on a batch; every request of that batch gets this error."""

    status = 500
    kind = "InternalServerException"


class ModelNotFound(ServingError):
    """No model (or no such version of it) is registered under that name."""

    status = 404
    kind = "ModelNotFoundException"
