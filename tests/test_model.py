"""``mx.model``: checkpoint files in MXNet's layout."""

from __future__ import annotations

import os

import numpy as np
import pytest

import mxasync as mx
from mxasync import model


def _net():
    h = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    return mx.sym.BatchNorm(h, name="bn")


def test_round_trip(tmp_path):
    prefix = str(tmp_path / "net")
    rng = np.random.default_rng(0)
    args = {"fc_weight": mx.nd.array(rng.standard_normal((3, 4))), "fc_bias": mx.nd.zeros((3,)),
            "bn_gamma": mx.nd.ones((3,)), "bn_beta": mx.nd.zeros((3,))}
    aux = {"bn_moving_mean": mx.nd.array([1, 2, 3]), "bn_moving_var": mx.nd.ones((3,), dtype=np.float64)}
    model.save_checkpoint(prefix, 12, _net(), args, aux)
    assert sorted(os.listdir(tmp_path)) == ["net-0012.params", "net-symbol.json"]  # no temporary files left
    sym, got_args, got_aux = model.load_checkpoint(prefix, 12)
    assert sym.tojson() == _net().tojson()
    assert sorted(got_args) == sorted(args) and sorted(got_aux) == sorted(aux)
    for src, dst in ((args, got_args), (aux, got_aux)):
        for name, value in src.items():
            assert dst[name].dtype == value.dtype
            np.testing.assert_array_equal(dst[name].asnumpy(), value.asnumpy())
    raw = mx.nd.load(prefix + "-0012.params")
    assert sorted(raw) == sorted([f"arg:{k}" for k in args] + [f"aux:{k}" for k in aux])
    assert model.load_params(prefix, 12)[1].keys() == aux.keys()


def test_params_only_and_overwrite(tmp_path):
    prefix = str(tmp_path / "w")
    model.save_checkpoint(prefix, 1, None, {"w": mx.nd.ones((2,))}, {})
    assert os.listdir(tmp_path) == ["w-0001.params"]
    model.save_checkpoint(prefix, 1, None, {"w": mx.nd.zeros((2,))}, {})
    assert model.load_params(prefix, 1)[0]["w"].asnumpy().tolist() == [0.0, 0.0]


def test_bad_files(tmp_path):
    mx.nd.save(str(tmp_path / "a-0001.params"), {"weight": mx.nd.ones((1,))})
    with pytest.raises(mx.MXNetError, match="neither an 'arg:' nor an 'aux:' prefix"):
        model.load_params(str(tmp_path / "a"), 1)
    mx.nd.save(str(tmp_path / "b-0001.params"), [mx.nd.ones((1,))])
    with pytest.raises(mx.MXNetError, match="unnamed list"):
        model.load_params(str(tmp_path / "b"), 1)
    with pytest.raises(FileNotFoundError):
        model.load_checkpoint(str(tmp_path / "missing"), 1)


def test_batch_end_param_fields():
    p = model.BatchEndParam(epoch=1, nbatch=2, eval_metric=None, locals={})
    assert (p.epoch, p.nbatch, p.eval_metric, p.locals) == (1, 2, None, {})
