"""The NumPy-interface training examples reach MXNet 1.9.1's figures from the same start.

The expected lines were printed by MXNet 1.9.1 running the same scripts
(``/work/venvs/mx191/bin/python examples/numpy_{mlp,cnn}.py --framework mxnet --epochs 5``).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MXNET_5_EPOCHS = {
    "numpy_mlp.py": "epoch  5  loss 0.4185  test accuracy 0.9111",
    "numpy_cnn.py": "epoch  5  loss 0.4338  test accuracy 0.8333",
}


@pytest.mark.parametrize("script", sorted(MXNET_5_EPOCHS))
def test_example_matches_mxnet(script):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, str(ROOT / "examples" / script), "--epochs", "5"], capture_output=True,
                         text=True, timeout=120, env=env, check=True)
    assert MXNET_5_EPOCHS[script] in out.stdout.splitlines(), out.stdout
