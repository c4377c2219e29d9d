"""ONNX export of the contrib resizing ops, run through ONNX Runtime against our own forward."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx

D = mx.sym.Variable("data")
CASES = {
    "adaptive-global": (lambda: mx.sym.contrib.AdaptiveAvgPooling2D(D, output_size=1), (2, 3, 6, 8)),
    "adaptive-windows": (lambda: mx.sym.contrib.AdaptiveAvgPooling2D(D, output_size=(3, 2)), (2, 3, 6, 8)),
    "bilinear-corners": (lambda: mx.sym.contrib.BilinearResize2D(D, height=11, width=5), (1, 2, 6, 8)),
    "bilinear-half-pixel": (lambda: mx.sym.contrib.BilinearResize2D(D, height=3, width=17, align_corners=False),
                            (1, 2, 6, 8)),
}


@pytest.mark.parametrize("opset", [12, 17])
@pytest.mark.parametrize("case", sorted(CASES))
def test_export_matches_forward(case, opset, tmp_path, ort_run, close, onnx_mod):
    make, shape = CASES[case]
    sym = make()
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    want = sym.bind(mx.cpu(), {"data": mx.nd.array(x)}).forward()[0].asnumpy()
    path = mx.onnx.export_model(sym, {}, [shape], np.float32, str(tmp_path / "m.onnx"), opset_version=opset)
    close(ort_run(path, {"data": x})[0], want, tol=1e-5)


def test_unequal_adaptive_windows_are_refused(tmp_path, onnx_mod):
    sym = mx.sym.contrib.AdaptiveAvgPooling2D(D, output_size=(4, 3))
    with pytest.raises(mx.MXNetError, match="unequal size"):
        mx.onnx.export_model(sym, {}, [(1, 1, 6, 8)], np.float32, str(tmp_path / "m.onnx"))
