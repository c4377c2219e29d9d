"""Table rows: the INT8 quantization ops, each against an independent numpy reference.

Inputs are int8 / uint8 / int32 whatever dtype the table asks for (the generators ignore it), so
each row runs once (float32) and is checked by ``check`` (exact integers, or one quantization
step where MXNet's float arithmetic decides the rounding).  MXNet's own outputs for the same ops
are compared bit for bit in ``tests/operator/quantization/test_quantized_ops.py``.
"""

from __future__ import annotations

import json

import numpy as np
from cases import Case

F32 = np.float32


def _i8(rng, shape, dtype):
    return rng.integers(-128, 128, size=shape).astype(np.int8)


def _u8(rng, shape, dtype):
    return rng.integers(0, 256, size=shape).astype(np.uint8)


def _i32(rng, shape, dtype):
    return rng.integers(-2 ** 20, 2 ** 20, size=shape).astype(np.int32)


def _f32(rng, shape, dtype):
    return rng.uniform(-1, 1, size=shape).astype(F32)


def _const(v):
    return lambda rng, shape, dtype: np.full(shape, v, F32)


def _pos(rng, shape, dtype):
    return rng.uniform(0.5, 1.5, size=shape).astype(F32)


def _steps_apart(got, want, step, n=1):
    assert np.abs(got.astype(np.float64) - want).max() <= n * step + 1e-6, (got, want)


def _check_quantize_v2(outs, inputs, params):
    x = inputs[0]
    r = np.abs(x).max()
    np.testing.assert_array_equal(outs[0], np.clip(np.rint(x * F32(127.5 / r)), -128, 127).astype(np.int8))
    assert outs[1][0] == -r and outs[2][0] == r


def _check_quantize(outs, inputs, params):
    x, lo, hi = inputs
    r = max(abs(lo[0]), abs(hi[0]))
    _steps_apart(outs[0], np.clip(x * 127 / r, -127, 127), 0.5)
    assert outs[0].dtype == np.int8 and outs[2][0] == r


def _check_dequantize(outs, inputs, params):
    q, lo, hi = inputs
    np.testing.assert_allclose(outs[0], q * (max(abs(lo[0]), abs(hi[0])) / 127.5), rtol=1e-6)


def _check_requantize(outs, inputs, params):
    q, lo, hi = inputs
    real = q * (max(abs(lo[0]), abs(hi[0])) / 2 ** 31)
    r = params["max_calib_range"]
    _steps_apart(outs[0], np.clip(real * 127 / r, -128, 127), 0.5)


def _conv_ref(x, w):
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    out = np.zeros((n, f, h - kh + 1, wd - kw + 1), np.int64)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,fc->nfhw", x[:, :, i:i + out.shape[2], j:j + out.shape[3]].astype(np.int64),
                             w[:, :, i, j].astype(np.int64))
    return out


def _mult_range(a_lo, a_hi, b_lo, b_hi, b_levels=127):
    return F32(F32(max(abs(a_lo), abs(a_hi)) / F32(127)) * F32(max(abs(b_lo), abs(b_hi)) / F32(b_levels))) * \
        F32(2 ** 31 - 1)


def _check_conv(outs, inputs, params):
    x, w, *ranges = inputs
    np.testing.assert_array_equal(outs[0], _conv_ref(x, w))
    assert outs[0].dtype == np.int32
    np.testing.assert_allclose(outs[2][0], _mult_range(*[r[0] for r in ranges]), rtol=1e-6)


def _check_fc(outs, inputs, params):
    x, w, *ranges = inputs
    np.testing.assert_array_equal(outs[0], x.astype(np.int64) @ w.astype(np.int64).T)
    np.testing.assert_allclose(outs[2][0], _mult_range(*[r[0] for r in ranges], b_levels=255), rtol=1e-6)


def _check_pool(outs, inputs, params):
    x = inputs[0].astype(np.int16)
    want = np.maximum.reduce([x[:, :, i::2, j::2] for i in range(2) for j in range(2)])
    np.testing.assert_array_equal(outs[0], want)
    assert outs[0].dtype == inputs[0].dtype


def _check_act(outs, inputs, params):
    np.testing.assert_array_equal(outs[0], np.maximum(inputs[0], 0))
    assert outs[1][0] == inputs[1][0] and outs[2][0] == inputs[2][0]


def _check_flatten(outs, inputs, params):
    np.testing.assert_array_equal(outs[0], inputs[0].reshape(inputs[0].shape[0], -1))


def _check_concat(outs, inputs, params):
    a, b, a_lo, a_hi, b_lo, b_hi = inputs  # b's range is twice a's: a is halved
    np.testing.assert_array_equal(outs[0][:, 3:], b)
    _steps_apart(outs[0][:, :3], a / 2, 0.5)


def _check_add(outs, inputs, params):
    a, b, a_lo, a_hi, b_lo, b_hi = inputs
    real = a * (a_hi[0] / 127.5) + b * (b_hi[0] / 127.5)
    r = params["max_calib_range"]
    _steps_apart(outs[0], np.clip(real * 127.5 / r, -128, 127), 1)


def _check_mul(outs, inputs, params):
    a, b = inputs[:2]
    np.testing.assert_array_equal(outs[0], a.astype(np.int32) * b.astype(np.int32))


def _check_batch_norm(outs, inputs, params):
    q, gamma, beta, mean, var, lo, hi = inputs
    x = q * (hi[0] / 127.5)
    y = (x - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + params["eps"]) \
        * gamma.reshape(1, -1, 1, 1) + beta.reshape(1, -1, 1, 1)
    _steps_apart(outs[0], np.clip(y * 127.5 / params["max_calib_range"], -128, 127), 1)


def _check_embedding(outs, inputs, params):
    idx, w = inputs[:2]
    np.testing.assert_array_equal(outs[0], w[idx.astype(int)])


def _check_calibrate(outs, inputs, params):
    hist, edges = inputs
    assert outs[0][0] in edges and np.isfinite(outs[1][0])


def _subgraph(nodes: list[tuple[str, str, dict, list]], n_vars: int) -> str:
    """A subgraph JSON: ``n_vars`` variables, then (op, name, attrs, inputs) nodes; the last is the head."""
    js = [{"op": "null", "name": f"in{i}", "inputs": []} for i in range(n_vars)]
    js += [{"op": op, "name": name, "attrs": attrs, "inputs": [[i, 0, 0] for i in ins]} for op, name, attrs, ins in nodes]
    return json.dumps({"nodes": js, "arg_nodes": list(range(n_vars)), "heads": [[len(js) - 1, 0, 0]]})


_SG_CONV = _subgraph([("Convolution", "c", {"kernel": "(3, 3)", "num_filter": "4", "no_bias": "True"}, [0, 1]),
                      ("Activation", "a", {"act_type": "relu"}, [2])], 2)
_SG_FC = _subgraph([("FullyConnected", "f", {"num_hidden": "3"}, [0, 1, 2])], 3)


def _check_sg_conv(outs, inputs, params):
    x, w = inputs
    want = np.maximum(np.einsum("nchw->nchw", _conv_ref(x, w).astype(np.float64)), 0) if x.dtype != F32 else None
    ref = np.zeros(outs[0].shape)
    for i in range(3):
        for j in range(3):
            ref += np.einsum("nchw,fc->nfhw", x[:, :, i:i + ref.shape[2], j:j + ref.shape[3]].astype(np.float64),
                             w[:, :, i, j].astype(np.float64))
    np.testing.assert_allclose(outs[0], np.maximum(ref, 0) if want is None else want, rtol=1e-5, atol=1e-5)


def _check_sg_fc(outs, inputs, params):
    x, w, b = inputs
    np.testing.assert_allclose(outs[0], x.astype(np.float64) @ w.T + b, rtol=1e-5, atol=1e-5)


_ONCE = ("float32",)
_R = dict(dtypes=_ONCE, grad=False)
CASES = [
    Case("_contrib_quantize_v2", [((2, 3, 4),)], gens=[_f32], check=_check_quantize_v2, **_R),
    Case("_contrib_quantize", [((3, 5), (1,), (1,))], gens=[_f32, _const(-1.0), _const(1.0)],
         params=dict(out_type="int8"), check=_check_quantize, **_R),
    Case("_contrib_dequantize", [((3, 5), (1,), (1,))], gens=[_i8, _const(-2.0), _const(2.0)],
         check=_check_dequantize, **_R),
    Case("_contrib_requantize", [((3, 5), (1,), (1,))], gens=[_i32, _const(-40.0), _const(40.0)],
         params=dict(min_calib_range=-0.01, max_calib_range=0.01), check=_check_requantize, **_R),
    Case("_contrib_quantized_conv", [((2, 3, 6, 6), (4, 3, 3, 3), (1,), (1,), (1,), (1,))],
         gens=[_u8, _i8, _const(0.0), _const(2.0), _const(-1.0), _const(1.0)],
         params=dict(kernel=(3, 3), num_filter=4, no_bias=True), check=_check_conv, **_R),
    Case("_contrib_quantized_fully_connected", [((2, 6), (3, 6), (1,), (1,), (1,), (1,))],
         gens=[_u8, _i8, _const(0.0), _const(2.0), _const(-1.0), _const(1.0)],
         params=dict(num_hidden=3, no_bias=True), check=_check_fc, **_R),
    Case("_contrib_quantized_pooling", [((2, 3, 6, 6), (1,), (1,))], gens=[_i8, _const(-1.0), _const(1.0)],
         params=dict(kernel=(2, 2), stride=(2, 2), pool_type="max"), check=_check_pool, **_R),
    Case("_contrib_quantized_act", [((3, 5), (1,), (1,))], gens=[_i8, _const(-1.0), _const(1.0)],
         params=dict(act_type="relu"), check=_check_act, **_R),
    Case("_contrib_quantized_flatten", [((2, 3, 2), (1,), (1,))], gens=[_i8, _const(-1.0), _const(1.0)],
         check=_check_flatten, **_R),
    Case("_contrib_quantized_concat", [((2, 3), (2, 2), (1,), (1,), (1,), (1,))],
         gens=[_i8, _i8, _const(-1.0), _const(1.0), _const(-2.0), _const(2.0)],
         params=dict(num_args=2, dim=1), check=_check_concat, **_R),
    Case("_contrib_quantized_elemwise_add", [((3, 4), (3, 4), (1,), (1,), (1,), (1,))],
         gens=[_i8, _i8, _const(-1.0), _const(1.0), _const(-2.0), _const(2.0)],
         params=dict(min_calib_range=-3.0, max_calib_range=3.0), check=_check_add, **_R),
    Case("_contrib_quantized_elemwise_mul", [((3, 4), (3, 4), (1,), (1,), (1,), (1,))],
         gens=[_i8, _i8, _const(-1.0), _const(1.0), _const(-2.0), _const(2.0)], check=_check_mul, **_R),
    Case("_contrib_quantized_batch_norm", [((2, 3, 4, 4), (3,), (3,), (3,), (3,), (1,), (1,))],
         gens=[_i8, _pos, _f32, _f32, _pos, _const(-1.0), _const(1.0)],
         params=dict(eps=1e-3, min_calib_range=-4.0, max_calib_range=4.0), check=_check_batch_norm, **_R),
    Case("_contrib_quantized_embedding", [((2, 2), (4, 5), (1,), (1,))],
         gens=[lambda rng, s, d: rng.integers(0, 4, s).astype(F32), _i8, _const(-1.0), _const(1.0)],
         params=dict(input_dim=4, output_dim=5), check=_check_embedding, **_R),
    Case("_contrib_calibrate_entropy", [((301,), (302,))],
         gens=[lambda rng, s, d: np.histogram(rng.normal(size=2000), bins=s[0], range=(-4, 4))[0].astype(F32),
               lambda rng, s, d: np.linspace(-4, 4, s[0]).astype(F32)],
         check=_check_calibrate, **_R),
    Case("_sg_mkldnn_conv", [((2, 3, 6, 6), (4, 3, 3, 3))], gens=[_f32, _f32],
         params=dict(with_act=True, subgraph=_SG_CONV), check=_check_sg_conv, **_R),
    Case("_sg_mkldnn_fully_connected", [((2, 6), (3, 6), (3,))], gens=[_f32, _f32, _f32],
         params=dict(subgraph=_SG_FC), check=_check_sg_fc, **_R),
]
