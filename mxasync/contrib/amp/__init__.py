"""``mx.contrib.amp``: MXNet 1.9.1's automatic mixed precision (float16 and bfloat16); see docs/amp.md."""

from . import amp, lists
from .amp import *  # noqa: F403 - MXNet's package re-exports its amp module
from .amp import __all__ as _amp_all
from .loss_scaler import LossScaler

__all__ = ["amp", "lists", "LossScaler", *_amp_all]
