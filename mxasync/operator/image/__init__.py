"""Image ops (MXNet's src/operator/image): ``mx.nd.image.*`` / ``mx.sym.image.*``, the kernels behind
``gluon.data.vision.transforms``.

Images are ``(H, W, C)`` (or ``(N, H, W, C)``) before ``to_tensor`` and ``(C, H, W)`` (or
``(N, C, H, W)``) after it.
"""

from . import color, geometry, resize  # noqa: F401
