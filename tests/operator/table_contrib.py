"""Table rows: softmax_cross_entropy, the small contrib ops and the AMP casts, against numpy references."""

from __future__ import annotations

import numpy as np
from cases import Case, integers, uniform


def _sce(data, label):
    x = data.astype(np.float64)
    logp = x - x.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    return np.array([-logp[np.arange(len(x)), label.astype(int)].sum()], data.dtype)


def _round_half_away(x):
    return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(x.dtype)


def _arange_like(d, start=0.0, step=1.0, repeat=1, axis=None):
    shape = d.shape if axis is None else (d.shape[axis],)
    return (start + step * (np.arange(int(np.prod(shape))) // repeat)).reshape(shape).astype(d.dtype)


def _index_array(d, axes=None):
    axes = range(d.ndim) if axes is None else axes
    return np.stack([np.indices(d.shape)[a] for a in axes], -1).astype(np.int64)


def _index_copy(old, idx, new):
    out = old.copy()
    out[idx.astype(int)] = new
    return out


def _distinct_rows(rng, shape, dtype):
    return rng.permutation(6)[: shape[0]].astype(dtype)


def _allclose_check(outs, inputs, params):
    a, b = inputs
    assert outs[0].shape == () and outs[0].dtype == np.uint8
    assert int(outs[0]) == int(np.allclose(b, a, rtol=params.get("rtol", 1e-5), atol=params.get("atol", 1e-8)))


CASES = [
    Case("softmax_cross_entropy", [((4, 5), (4,))], ref=_sce, gens=[uniform(-2, 2), integers(0, 5)], wrt=(0,)),
    Case("_contrib_quadratic", [((2, 3),)], ref=lambda x, a, b, c: a * x * x + b * x + c,
         params=dict(a=0.5, b=-2.0, c=1.5)),
    Case("_contrib_div_sqrt_dim", [((2, 3, 9),)], ref=lambda x: x / np.sqrt(9).astype(x.dtype)),
    Case("_contrib_gradientmultiplier", [((3, 2),)], ref=lambda x, scalar: x, params=dict(scalar=-0.5),
         grad=False),  # backward is scalar * out_grad, not the derivative: checked in test_contrib_ops.py
    Case("_contrib_round_ste", [((2, 4),)], ref=_round_half_away, gens=uniform(-3, 3), grad=False),
    Case("_contrib_sign_ste", [((2, 4),)], ref=lambda x: np.sign(x), grad=False),
    Case("_contrib_arange_like", [((2, 3),), ((3, 4),)], ref=_arange_like, params=dict(start=1.0, step=0.5,
                                                                                         repeat=2), grad="zero"),
    Case("_contrib_arange_like", [((2, 7),)], ref=_arange_like, params=dict(axis=-1), grad="zero",
         name="_contrib_arange_like_axis"),
    Case("_contrib_index_array", [((2, 3, 4),)], ref=_index_array, params=dict(axes=(2, 0)), grad="zero"),
    Case("_contrib_index_copy", [((6, 3), (2,), (2, 3))], ref=_index_copy,
         gens=[uniform(), _distinct_rows, uniform()], wrt=(0, 2)),
    Case("_contrib_allclose", [((2, 3), (2, 3))], check=_allclose_check),
]


def _amp_cast(x, dtype):
    return x.astype(dtype) if x.dtype in (np.float16, np.float32) else x


def _amp_multicast(*xs, num_outputs, cast_narrow=False):
    amp = [x.dtype for x in xs if x.dtype in (np.float16, np.float32)]
    t = (min if cast_narrow else max)(amp, key=lambda d: d.itemsize) if amp else None
    return tuple(x.astype(t) if x.dtype in (np.float16, np.float32) else x for x in xs)


CASES += [
    Case("amp_cast", [((2, 3),)], ref=_amp_cast, params=dict(dtype="float16"), inplace=False),
    Case("amp_multicast", [((3,), (2, 2))], ref=_amp_multicast, params=dict(num_outputs=2)),
]


# interleaved attention matmuls: references written with einsum on the (seq, batch, heads, part, d) view
def _heads(x, h, n):
    s, b, e = x.shape
    return x.reshape(s, b, h, n, e // (n * h))


def _qk(q, k):  # (s, b, h, d) x (t, b, h, d) -> (b*h, s, t)
    r = np.einsum("sbhd,tbhd->bhst", q, k) / np.sqrt(q.shape[-1])
    return r.reshape(-1, *r.shape[2:]).astype(q.dtype)


def _av(att, v):  # (b*h, s, t) x (t, b, h, d) -> (s, b, h*d)
    t, b, h, d = v.shape
    r = np.einsum("bhst,tbhd->sbhd", att.reshape(b, h, *att.shape[1:]), v)
    return r.reshape(r.shape[0], b, h * d).astype(v.dtype)


_H = 2
CASES += [
    Case("_contrib_interleaved_matmul_selfatt_qk", [((3, 2, 12),)], params=dict(heads=_H),
         ref=lambda x, heads: _qk(_heads(x, heads, 3)[:, :, :, 0], _heads(x, heads, 3)[:, :, :, 1])),
    Case("_contrib_interleaved_matmul_selfatt_valatt", [((3, 2, 12), (4, 3, 3))], params=dict(heads=_H),
         ref=lambda x, att, heads: _av(att, _heads(x, heads, 3)[:, :, :, 2])),
    Case("_contrib_interleaved_matmul_encdec_qk", [((3, 2, 4), (5, 2, 8))], params=dict(heads=_H),
         ref=lambda q, kv, heads: _qk(_heads(q, heads, 1)[:, :, :, 0], _heads(kv, heads, 2)[:, :, :, 0])),
    Case("_contrib_interleaved_matmul_encdec_valatt", [((5, 2, 8), (4, 3, 5))], params=dict(heads=_H),
         ref=lambda kv, att, heads: _av(att, _heads(kv, heads, 2)[:, :, :, 1])),
]


# -- boolean_mask, count_sketch, fft/ifft (contrib/boolean_mask.py, count_sketch.py, fft.py) ---------------------
def _mask01(rng, shape, dtype):
    m = rng.integers(0, 2, size=shape)
    m[0] = 1  # at least one row kept
    return m.astype(dtype)


def _count_sketch(x, h, s, out_dim, processing_batch_size=32):
    out = np.zeros(x.shape[:-1] + (out_dim,), x.dtype)
    for i in range(x.shape[-1]):
        out[..., int(h[0, i])] += s[0, i] * x[..., i]
    return out


def _signs(rng, shape, dtype):
    return rng.choice([-1.0, 1.0], size=shape).astype(dtype)


def _interleaved(z):
    out = np.empty(z.shape[:-1] + (2 * z.shape[-1],))
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


CASES += [
    Case("_contrib_boolean_mask", [((5, 3), (5,)), ((4, 2, 2), (4,))], ref=lambda d, i, axis=0: d[i != 0],
         gens=[uniform(), _mask01], wrt=(0,)),
    Case("_contrib_count_sketch", [((3, 5), (1, 5), (1, 5)), ((2, 2, 3, 4), (1, 4), (1, 4))], ref=_count_sketch,
         params=dict(out_dim=3), gens=[uniform(), integers(0, 3), _signs], wrt=(0,)),
    Case("_contrib_fft", [((3, 4),), ((2, 1, 2, 5),)], wrt=(0,),
         ref=lambda x, compute_size=128: _interleaved(np.fft.fft(x, axis=-1)).astype(x.dtype)),
    Case("_contrib_ifft", [((3, 8),), ((2, 2, 1, 6),)], wrt=(0,), params=dict(compute_size=2),
         ref=lambda x, compute_size: (np.fft.ifft(x[..., 0::2] + 1j * x[..., 1::2], axis=-1)
                                      * (x.shape[-1] // 2)).real.astype(x.dtype)),
]


# RROIAlign: values pinned against MXNet 1.9.1 in test_misc_ops.py; no gradient (as in MXNet)
CASES += [
    Case("_contrib_RROIAlign", [((1, 2, 5, 6), (2, 6))], check=lambda outs, inputs, params: None, grad=False,
         params=dict(pooled_size=(2, 2), spatial_scale=1.0),
         gens=[uniform(), lambda rng, shape, dtype: np.array([[0, 2.5, 2, 3, 2, 20], [0, 3, 3, 2, 4, -30]], dtype)]),
]


def _hawkesll(mu, alpha, beta, state, lags, marks, vl, max_time):
    """The log likelihood and end memory, one event at a time (an independent loop)."""
    n, k = mu.shape
    ll, mem = np.zeros(n), state.astype(np.float64).copy()
    for i in range(n):
        last, t = np.zeros(k), 0.0
        for j in range(int(vl[i])):
            c = int(marks[i, j])
            t += lags[i, j]
            d = t - last[c]
            ed = np.exp(-beta[c] * d)
            ll[i] += np.log(mu[i, c] + alpha[c] * beta[c] * mem[i, c] * ed) - mu[i, c] * d \
                - alpha[c] * mem[i, c] * (1 - ed)
            mem[i, c] = 1 + mem[i, c] * ed
            last[c] = t
        d = max_time[i] - last
        ed = np.exp(-beta * d)
        ll[i] -= (mu[i] * d + alpha * mem[i] * (1 - ed)).sum()
        mem[i] *= ed
    return ll.astype(mu.dtype), mem.astype(mu.dtype)


CASES += [
    Case("_contrib_hawkesll", [((3, 2), (2,), (2,), (3, 2), (3, 4), (3, 4), (3,), (3,))], ref=_hawkesll,
         gens=[uniform(0.5, 2), uniform(0.1, 0.5), uniform(0.5, 2), uniform(0, 1), uniform(0.1, 1), integers(0, 2),
               integers(0, 5), uniform(5, 6)], wrt=(0, 1, 2)),
]
