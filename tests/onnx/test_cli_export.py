"""``mxasync export-onnx PREFIX EPOCH``: a checkpoint to an ONNX file, with clear errors."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import cli
from mxasync.train.networks import mlp


def _checkpoint(tmp_path):
    sym = mlp(hidden=(8,))
    shapes, _, _ = sym.infer_shape(data=(1, 1, 28, 28))
    rng = np.random.RandomState(9)
    arg = {n: mx.nd.array(rng.uniform(-0.3, 0.3, s)) for n, s in zip(sym.list_arguments(), shapes, strict=True)
           if n not in ("data", "softmax_label")}
    prefix = str(tmp_path / "mlp")
    mx.model.save_checkpoint(prefix, 3, sym, arg, {})
    return prefix, sym, arg


def test_export_checkpoint(tmp_path, capsys, ort_run, close):
    prefix, sym, arg = _checkpoint(tmp_path)
    assert cli.main(["export-onnx", prefix, "3", "--input-shape", "1,1,28,28", "--dynamic", "--opset", "17"]) == 0
    assert "wrote" in capsys.readouterr().out
    x = np.random.RandomState(10).uniform(0, 1, (2, 1, 28, 28)).astype(np.float32)
    want = sym.bind(mx.cpu(), args={**arg, "data": mx.nd.array(x), "softmax_label": mx.nd.zeros((2,))},
                    grad_req="null").forward()[0].asnumpy()
    close(ort_run(prefix + ".onnx", {"data": x})[0], want)


def test_export_errors(tmp_path, capsys, onnx_mod):
    prefix, _, _ = _checkpoint(tmp_path)
    with pytest.raises(SystemExit) as e:
        cli.main(["export-onnx", prefix, "4", "--input-shape", "1,1,28,28"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "no checkpoint file" in err and "mlp-0004.params" in err
    with pytest.raises(SystemExit):
        cli.main(["export-onnx", prefix, "3", "--input-shape", "1,a"])
    assert "not a shape" in capsys.readouterr().err
    assert cli.main(["export-onnx", prefix, "3", "--input-shape", "1,1,28,28", "--input-shape", "1,3"]) == 1
    assert "data inputs" in capsys.readouterr().err
