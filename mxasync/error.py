"""``mx.error``: MXNet's structured error classes, registered by name (``mx.base.error_types``).

>>> from mxasync.error import InternalError, MXNetError
>>> issubclass(InternalError, MXNetError), "MXNet hint:" in str(InternalError("bad state"))
(True, True)
"""

from __future__ import annotations

from .base import MXNetError, register_error

__all__ = ["MXNetError", "register", "InternalError"]

register = register_error


@register_error
class InternalError(MXNetError):
    """An error inside the runtime itself (not the user's input); the message says to report it."""

    def __init__(self, msg: str) -> None:
        if "MXNet hint:" not in msg:
            msg += ("\nMXNet hint: You hit an internal error. Please open an issue "
                    "(https://github.com/apache/incubator-mxnet/issues) to report it.")
        super().__init__(msg)
