"""cuDNN kernels for the CuPy backend, through NVIDIA's cuDNN frontend (``nvidia-cudnn-frontend``).

:func:`install` puts them into a backend's override table (the plugin contract's one seam);
each returns ``NotImplemented`` where cuDNN does not apply, so the generic kernel runs.
"""

from __future__ import annotations

from .conv import PLANS, convolution_backward, convolution_forward
from .frontend import unavailable_reason, use

__all__ = ["install", "PLANS", "convolution_forward", "convolution_backward", "use", "unavailable_reason"]


def install(backend) -> None:
    """Register the cuDNN kernels as ``backend``'s overrides (cheap: the frontend loads on first use)."""
    backend.overrides["Convolution"] = convolution_forward
    backend.overrides["Convolution.backward"] = convolution_backward
