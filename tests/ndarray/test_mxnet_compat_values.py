"""mx.nd expressions give what the real MXNet 1.9.1 gives: shape, dtype and values.

The expressions and MXNet's answers are in tests/fixtures/mxnet/nd_compat.json
(made by tests/fixtures/mxnet/make_nd_compat.py with MXNet 1.9.1).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

TABLE = json.loads((Path(__file__).parents[1] / "fixtures" / "mxnet" / "nd_compat.json").read_text())


def _compare(got, want, expr):
    if isinstance(want, list):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), expr
        for g, w in zip(got, want, strict=True):
            _compare(g, w, expr)
    elif "number" in want:
        assert float(got) == pytest.approx(want["number"]), expr
    elif "repr" in want:
        assert repr(got) == want["repr"], expr
    else:
        a = got.asnumpy()
        assert list(a.shape) == want["shape"], f"{expr}: shape {a.shape} != {want['shape']}"
        assert str(a.dtype) == want["dtype"], f"{expr}: dtype {a.dtype} != {want['dtype']}"
        np.testing.assert_allclose(a.ravel().astype(np.float64), want["values"], rtol=1e-6, err_msg=expr)


@pytest.mark.parametrize("expr", sorted(TABLE))
def test_same_as_mxnet(expr):
    _compare(eval(expr, {"mx": mx, "np": np}), TABLE[expr], expr)  # noqa: S307 - our own fixture
