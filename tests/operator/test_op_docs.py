"""Every op's generated docstring lists each parameter with its type, its default and what it means."""

from __future__ import annotations

import pytest

import mxasync as mx
from mxasync.operator import get_op, list_ops


def _undescribed() -> list[str]:
    missing = []
    for name in list_ops():
        op = get_op(name)
        doc = op.doc
        for fname in op.param_cls.model_fields:
            block = doc.split(f"\n{fname} : ", 1)
            if len(block) < 2:
                missing.append(f"{name}.{fname} (not listed)")
                continue
            head, _, rest = block[1].partition("\n")
            if ", required" not in head and ", default=" not in head:
                missing.append(f"{name}.{fname} (no default shown)")
            if not rest.startswith("    ") or len(rest.split("\n", 1)[0].strip()) < 4:
                missing.append(f"{name}.{fname} (no meaning)")
    return missing


def test_every_param_of_every_op_is_documented():
    missing = _undescribed()
    assert not missing, ("parameters without a documented meaning; give the field a Field(description=...) or "
                         "add a row to mxasync/operator/param_docs.py: " + ", ".join(missing))


@pytest.mark.parametrize("front", [mx.nd, mx.sym])
def test_front_ends_carry_the_generated_docstring(front):
    doc = front.Convolution.__doc__
    assert "kernel : tuple of int, required\n    The size of the window" in doc
    assert "cudnn_tune : {'off', 'limited_workspace', 'fastest'} or None, default=None" in doc


@pytest.mark.parametrize("op", ["Convolution", "Deconvolution", "FullyConnected", "BatchNorm", "Embedding",
                                "SoftmaxOutput", "sgd_mom_update", "broadcast_add", "where", "take"])
def test_every_input_of_the_common_ops_says_what_it_is(op):
    lines = get_op(op).doc.splitlines()
    inputs = [lines[i + 1].strip() for i, line in enumerate(lines) if line.endswith(": NDArray or Symbol")]
    assert inputs and all(text != "Input." for text in inputs), inputs
