"""INT8 quantization ops (MXNet's src/operator/quantization and the quantized MKLDNN subgraph ops).

Quantized tensors travel with their float range: each op takes ``min_*`` / ``max_*`` inputs
(1-element float32 arrays) next to its int8 / uint8 / int32 data and returns the output's range
as two more outputs.  The arithmetic is MXNet 1.9.1's CPU (MKLDNN) build: float32 scales,
round half to even, saturation, int32 accumulation (see ``_scales.py`` and ``_int_gemm.py``).
"""

from . import (  # noqa: F401  (importing registers the ops)
    calibrate,
    conv,
    elemwise,
    fully_connected,
    layout,
    mkldnn_conv,
    mkldnn_fc,
    norm_embed,
    pooling,
    quantize,
)
