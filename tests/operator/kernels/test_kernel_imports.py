"""The kernels package re-exports nothing, so an op loads only the kernel modules it uses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import mxasync


def test_a_cold_convolution_loads_no_optimizer_kernels():
    code = ("import sys, mxasync as mx\n"
            "mx.nd.Convolution(mx.nd.ones((1, 1, 5, 5)), mx.nd.ones((2, 1, 3, 3)), kernel=(3, 3), num_filter=2,\n"
            "                  no_bias=True).asnumpy()\n"
            "print('mxasync.operator.kernels.conv.convolution' in sys.modules,\n"
            "      'mxasync.operator.kernels.optimizer' in sys.modules)\n")
    root = Path(mxasync.__file__).parent.parent  # this checkout's package, not an installed one
    # MXASYNC_PRELOAD=0: without it `import mxasync` loads the common ops' families (the optimizers
    # among them) so that an event loop's first calls never wait for an import
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240, check=True,
                         cwd=root, env=dict(os.environ, MXASYNC_PRELOAD="0"))
    assert out.stdout.split() == ["True", "False"]
