"""bfloat16 as a real dtype (ml_dtypes'): creation, casts, ops computed in float32, autograd, and
``.params`` files in MXNet's format (type flag 12) against a file written by MXNet 1.9.1."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd
from mxasync._bfloat16 import MXNET_BFLOAT16, bfloat16

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "amp"
RTOL = 2e-2  # bfloat16 keeps 8 significant bits: one rounding of the result is 2**-8 relative


def _bf(a) -> np.ndarray:
    """``a`` rounded to bfloat16, as float32 (the values a bfloat16 array holds)."""
    return np.asarray(a, np.float32).astype(bfloat16).astype(np.float32)


def test_creation_and_casts() -> None:
    x = mx.nd.array([1.0, 1.00390625, -3.3e38], dtype="bfloat16")
    assert x.dtype is bfloat16.type and x.asnumpy().dtype == bfloat16
    assert x.astype("float32").asnumpy().tolist() == [1.0, 1.0, _bf(-3.3e38)[()]]
    assert mx.nd.array([2.5], dtype=MXNET_BFLOAT16).dtype is bfloat16.type  # MXNet's spelling of the type
    assert mx.nd.ones((2,)).astype(MXNET_BFLOAT16).dtype is bfloat16.type
    assert mx.nd.Cast(x[:2], dtype="float16").dtype is np.float16
    assert mx.nd.zeros((2, 3), dtype="bfloat16").asnumpy().tolist() == [[0.0] * 3] * 2


def test_reductions_accumulate_in_float32() -> None:
    # ml_dtypes alone sums in bfloat16 (1000 ones make 256); the kernels here run in float32
    assert mx.nd.ones((1000,), dtype="bfloat16").sum().asscalar() == 1000.0
    assert mx.nd.ones((1000,), dtype="bfloat16").mean().asscalar() == 1.0


_RNG = np.random.default_rng(0)
_X4 = _bf(_RNG.standard_normal((2, 3, 6, 6)))
_W4 = _bf(_RNG.standard_normal((4, 3, 3, 3)) * 0.3)
_X2 = _bf(_RNG.standard_normal((5, 7)))
_W2 = _bf(_RNG.standard_normal((3, 7)))
_G = _bf(_RNG.random(3) + 0.5)

#: name -> (op call on arrays of the given dtype); each is checked in bfloat16 against float32 on the same values
CASES = {
    "FullyConnected": lambda a, dt: mx.nd.FullyConnected(a(_X2, dt), a(_W2, dt), a(_G, dt), num_hidden=3),
    "Convolution": lambda a, dt: mx.nd.Convolution(a(_X4, dt), a(_W4, dt), no_bias=True, kernel=(3, 3),
                                                  num_filter=4, pad=(1, 1)),
    "Activation": lambda a, dt: mx.nd.Activation(a(_X2, dt), act_type="tanh"),
    "relu": lambda a, dt: mx.nd.relu(a(_X2, dt)),
    "BatchNorm": lambda a, dt: mx.nd.BatchNorm(a(_X4, dt), a(_G, dt), a(_G, dt), a(_G * 0, "float32"),
                                               a(_G, "float32"), fix_gamma=False, use_global_stats=True),
    "Pooling_max": lambda a, dt: mx.nd.Pooling(a(_X4, dt), kernel=(2, 2), stride=(2, 2), pool_type="max"),
    "Pooling_avg": lambda a, dt: mx.nd.Pooling(a(_X4, dt), kernel=(3, 3), pool_type="avg", global_pool=True),
    "softmax": lambda a, dt: mx.nd.softmax(a(_X2, dt), axis=-1),
    "exp": lambda a, dt: mx.nd.exp(a(_X2, dt)),
    "multiply": lambda a, dt: a(_X2, dt) * a(_X2[::-1], dt),
    "broadcast_add": lambda a, dt: mx.nd.broadcast_add(a(_X2, dt), a(_X2[:1], dt)),
    "div_scalar": lambda a, dt: a(_X2, dt) / 3,
    "dot": lambda a, dt: mx.nd.dot(a(_X2, dt), a(_W2, dt), transpose_b=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_float32(name: str) -> None:
    def arr(v, dt):
        return mx.nd.array(v, dtype=dt)

    got = CASES[name](arr, "bfloat16")
    want = CASES[name](arr, "float32").asnumpy()
    assert got.dtype is bfloat16.type, name
    # one bfloat16 rounding of each result (every kernel computes in float32 and rounds once)
    np.testing.assert_array_equal(got.asnumpy().astype(np.float32), _bf(want), err_msg=name)


def test_gradient_in_bfloat16() -> None:
    grads = {}
    for dt in ("bfloat16", "float32"):
        x, w = mx.nd.array(_X2, dtype=dt), mx.nd.array(_W2, dtype=dt)
        w.attach_grad()
        with autograd.record():
            y = mx.nd.FullyConnected(x, w, no_bias=True, num_hidden=3)
            loss = (mx.nd.tanh(y) * y).sum()
        loss.backward()
        grads[dt] = w.grad.asnumpy().astype(np.float32)
        assert w.grad.dtype is np.dtype(dt).type
    np.testing.assert_allclose(grads["bfloat16"], grads["float32"], rtol=5 * RTOL, atol=5 * RTOL)


def test_params_written_by_mxnet_load() -> None:
    loaded = mx.nd.load(str(FIX / "bf16.params"))
    want = json.loads((FIX / "bf16_values.json").read_text())
    assert loaded["w_bf16"].dtype is bfloat16.type and loaded["b_f32"].dtype is np.float32
    np.testing.assert_array_equal(loaded["w_bf16"].astype("float32").asnumpy(), np.array(want["w_bf16"], np.float32))


def test_params_we_write_are_mxnets_bytes(tmp_path: Path) -> None:
    # saving what MXNet wrote gives MXNet's file byte for byte: flag 12 and the same 16 bits per value
    loaded = mx.nd.load(str(FIX / "bf16.params"))
    out = tmp_path / "again.params"
    mx.nd.save(str(out), {"w_bf16": loaded["w_bf16"], "b_f32": loaded["b_f32"]})
    assert out.read_bytes() == (FIX / "bf16.params").read_bytes()


def test_gluon_cast_and_save(tmp_path: Path) -> None:
    net = mx.gluon.nn.Dense(3, in_units=7)
    net.initialize()
    net.cast("bfloat16")
    y = net(mx.nd.array(_X2, dtype="bfloat16"))
    assert y.dtype is bfloat16.type and y.shape == (5, 3)
    net.save_parameters(str(tmp_path / "d.params"))
    back = mx.nd.load(str(tmp_path / "d.params"))
    assert {v.dtype for v in back.values()} == {bfloat16.type}


def test_bfloat16_off_the_host_names_the_op() -> None:
    from mxasync.operator.widen import widens

    class _Ctx:
        device_type = "gpu"

    class _Prop:
        label, float16_in_float32 = "FullyConnected", True

    try:
        mx.backends.get_backend("gpu")
    except Exception:
        pytest.skip("no gpu backend registered")
    with pytest.raises(mx.MXNetError, match="FullyConnected: bfloat16 is not supported"):
        widens(_Prop(), _Ctx(), [np.dtype("bfloat16")])


def test_inputs_an_op_writes_are_written_back() -> None:
    # sgd_mom_update writes its momentum input; reset_arrays zeroes its inputs in place
    w, g = mx.nd.ones((3,), dtype="bfloat16"), mx.nd.ones((3,), dtype="bfloat16")
    mom = mx.nd.zeros((3,), dtype="bfloat16")
    mx.nd.sgd_mom_update(w, g, mom, lr=0.5, momentum=0.9, out=w)
    assert mom.asnumpy().astype(np.float32).tolist() == [-0.5] * 3
    assert w.asnumpy().astype(np.float32).tolist() == [0.5] * 3
    a = mx.nd.ones((2,), dtype="bfloat16")
    mx.nd.reset_arrays(a, num_arrays=1)
    assert a.asnumpy().astype(np.float32).tolist() == [0.0, 0.0]
