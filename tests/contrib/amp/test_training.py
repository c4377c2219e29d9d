"""A Gluon loop under AMP (``amp.init`` / ``init_trainer`` / ``scale_loss``, examples/amp_lenet.py) trains to
the float32 accuracy in bfloat16 and in float16: the small form (an MLP on the 8x8 digits, 5 epochs, from
the same initial weights); the LeNet run at 28x28 is reported in docs/amp.md."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mxasync.gluon import nn

_SPEC = importlib.util.spec_from_file_location("amp_lenet", Path(__file__).resolve().parents[3] / "examples"
                                               / "amp_lenet.py")
amp_lenet = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(amp_lenet)


def _mlp(size: int) -> nn.HybridSequential:
    net = nn.HybridSequential()
    net.add(nn.Dense(64, activation="relu"), nn.Dense(10))
    return net


def test_low_precision_training_reaches_the_float32_accuracy() -> None:
    acc = {p: amp_lenet.train(p, epochs=5, size=8, shift=0, network=_mlp)
           for p in ("float32", "bfloat16", "float16")}
    assert acc["float32"] > 0.9, acc
    for p in ("bfloat16", "float16"):
        assert abs(acc[p] - acc["float32"]) <= 0.01, acc
