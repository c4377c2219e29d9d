"""gluon.contrib: containers, pixel shuffles, convolutional and projected recurrent cells, samplers."""

import numpy as np
import pytest

import mxasync as mx
from mxasync import gluon
from mxasync.gluon import contrib


def _pixel_shuffle_reference(x, factors):
    n, c = x.shape[:2]
    k = len(factors)
    spatial = x.shape[2:]
    out_c = c // int(np.prod(factors))
    y = x.reshape((n, out_c) + tuple(factors) + spatial)
    # (N, C, f1..fk, S1..Sk) -> (N, C, S1, f1, ..., Sk, fk)
    axes = (0, 1) + tuple(a for i in range(k) for a in (2 + k + i, 2 + i))
    return y.transpose(axes).reshape((n, out_c) + tuple(s * f for s, f in zip(spatial, factors, strict=True)))


@pytest.mark.parametrize("layer, factors, shape", [
    (contrib.nn.PixelShuffle1D(3), (3,), (2, 6, 4)),
    (contrib.nn.PixelShuffle2D((2, 3)), (2, 3), (1, 12, 2, 3)),
    (contrib.nn.PixelShuffle3D((2, 1, 2)), (2, 1, 2), (1, 8, 2, 3, 2)),
])
def test_pixel_shuffle_matches_numpy(layer, factors, shape):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    expected = _pixel_shuffle_reference(x, factors)
    np.testing.assert_array_equal(layer(mx.nd.array(x)).asnumpy(), expected)
    layer.hybridize()
    np.testing.assert_array_equal(layer(mx.nd.array(x)).asnumpy(), expected)


def test_concurrent_concatenates_children():
    for cls in (contrib.nn.Concurrent, contrib.nn.HybridConcurrent):
        net = cls(axis=1)
        net.add(gluon.nn.Dense(3, in_units=2), gluon.nn.Dense(4, in_units=2), contrib.nn.Identity())
        net.initialize()
        x = mx.nd.ones((5, 2))
        out = net(x)
        assert out.shape == (5, 9)
        np.testing.assert_array_equal(out.asnumpy()[:, 7:], x.asnumpy())
    net = contrib.nn.HybridConcurrent(axis=1)
    net.add(gluon.nn.Dense(3, in_units=2), contrib.nn.Identity())
    assert len(net(mx.sym.var("data")).list_arguments()) == 3  # data, weight, bias


def test_sync_batch_norm_on_one_device_is_batch_norm():
    x = mx.nd.random.normal(shape=(4, 3, 5))
    sbn, bn = contrib.nn.SyncBatchNorm(in_channels=3), gluon.nn.BatchNorm(in_channels=3)
    sbn.initialize()
    bn.initialize()
    with mx.autograd.record():
        a, b = sbn(x), bn(x)
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    # MXNet's SyncBatchNorm updates its moving statistics in backward (BatchNorm in forward)
    np.testing.assert_array_equal(sbn.running_mean.data().asnumpy(), np.zeros(3, np.float32))
    mx.autograd.backward([a, b])
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(sbn, name).data().asnumpy(), getattr(bn, name).data().asnumpy(),
                                   rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("cls, n_states", [(contrib.rnn.Conv2DRNNCell, 1), (contrib.rnn.Conv2DLSTMCell, 2),
                                           (contrib.rnn.Conv2DGRUCell, 1)])
def test_conv_cells_shapes_and_hybridize(cls, n_states):
    cell = cls((3, 6, 6), 4, i2h_kernel=3, h2h_kernel=3, i2h_pad=1)
    cell.initialize()
    x = mx.nd.random.normal(shape=(2, 3, 3, 6, 6))
    out, states = cell.unroll(3, x, merge_outputs=True)
    assert out.shape == (2, 3, 4, 6, 6) and len(states) == n_states
    cell.hybridize()
    out2, _ = cell.unroll(3, x, merge_outputs=True)
    np.testing.assert_allclose(out2.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError):
        cls((3, 6, 6), 4, i2h_kernel=3, h2h_kernel=2)


def test_lstmp_cell_projects_the_state():
    cell = contrib.rnn.LSTMPCell(8, 3, input_size=4)
    cell.initialize()
    x = mx.nd.random.normal(shape=(2, 4))
    r0, c0 = mx.nd.random.normal(shape=(2, 3)), mx.nd.random.normal(shape=(2, 8))
    out, (r, c) = cell(x, [r0, c0])
    p = {k.split("_", 1)[1]: v.data().asnumpy() for k, v in cell.collect_params().items()}
    gates = x.asnumpy() @ p["i2h_weight"].T + p["i2h_bias"] + r0.asnumpy() @ p["h2h_weight"].T + p["h2h_bias"]
    i, f, g, o = np.split(gates, 4, axis=1)
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    c_ref = sig(f) * c0.asnumpy() + sig(i) * np.tanh(g)
    r_ref = (sig(o) * np.tanh(c_ref)) @ p["h2r_weight"].T
    np.testing.assert_allclose(c.asnumpy(), c_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.asnumpy(), r_ref, rtol=1e-5, atol=1e-5)


def test_variational_dropout_shares_the_mask_over_time():
    cell = contrib.rnn.VariationalDropoutCell(gluon.rnn.DropoutCell(0.0), drop_inputs=0.5)
    x = mx.nd.ones((4, 5, 30))
    with mx.autograd.record():
        out, _ = cell.unroll(5, x, merge_outputs=True)
    kept = out.asnumpy() != 0
    assert 0 < kept.mean() < 1
    assert (kept == kept[:, :1, :]).all()  # the same mask at every step


def test_interval_sampler():
    assert list(contrib.data.IntervalSampler(10, 3)) == [0, 3, 6, 9, 1, 4, 7, 2, 5, 8]
    assert list(contrib.data.IntervalSampler(10, 3, rollover=False)) == [0, 3, 6, 9]


def test_deformable_convolution_layer_starts_as_plain_convolution():
    from mxasync.gluon.contrib.cnn import DeformableConvolution

    layer = DeformableConvolution(4, kernel_size=3, padding=1, in_channels=2)
    layer.initialize()
    x = mx.nd.random.normal(shape=(2, 2, 5, 6))
    expected = mx.nd.Convolution(x, layer.deformable_conv_weight.data(), layer.deformable_conv_bias.data(),
                                 kernel=(3, 3), pad=(1, 1), num_filter=4)
    np.testing.assert_allclose(layer(x).asnumpy(), expected.asnumpy(), rtol=1e-5, atol=1e-5)
    assert sorted(layer.collect_params()) == [f"{layer.prefix}{n}" for n in (
        "deformable_conv_bias", "deformable_conv_weight", "offset_bias", "offset_weight")]


def test_modulated_deformable_convolution_layer():
    # gluoncv's CenterNet *_dcnv2 models build it; at the zero start (offsets 0, mask 2 * sigmoid(0) = 1) it is a
    # plain convolution, and the op sees the offsets and the mask that the offset convolution predicts
    from mxasync.gluon.contrib.cnn import ModulatedDeformableConvolution

    layer = ModulatedDeformableConvolution(4, kernel_size=3, padding=1, in_channels=2, num_deformable_group=1)
    layer.initialize()
    assert layer.offset_weight.shape == (27, 2, 3, 3) and layer.prefix.startswith("modulated_deformable_conv")
    x = mx.nd.random.normal(shape=(2, 2, 5, 6))
    weight, bias = layer.deformable_conv_weight.data(), layer.deformable_conv_bias.data()
    expected = mx.nd.Convolution(x, weight, bias, kernel=(3, 3), pad=(1, 1), num_filter=4)
    np.testing.assert_allclose(layer(x).asnumpy(), expected.asnumpy(), rtol=1e-5, atol=1e-5)
    layer.offset_weight.set_data(mx.nd.random.uniform(-0.2, 0.2, shape=(27, 2, 3, 3)))
    offset = mx.nd.Convolution(x, layer.offset_weight.data(), layer.offset_bias.data(), kernel=(3, 3), pad=(1, 1),
                               num_filter=27)
    mask = mx.nd.sigmoid(offset[:, 18:]) * 2
    direct = mx.nd.contrib.ModulatedDeformableConvolution(x, offset[:, :18], mask, weight, bias, kernel=(3, 3),
                                                          pad=(1, 1), num_filter=4)
    layer.hybridize()
    np.testing.assert_allclose(layer(x).asnumpy(), direct.asnumpy(), rtol=1e-5, atol=1e-5)
