"""softmax / log_softmax, SoftmaxOutput and the regression outputs."""

from __future__ import annotations

import numpy as np
import pytest

from mxasync.operator.kernels import output as k_output
from mxasync.operator.kernels import softmax as k_softmax

SM_CASES = [((3, 5), -1, None), ((2, 3, 4), 1, 2.5), ((2, 3, 4), 0, 0.5), ((4,), 0, None)]


def softmax_reference(x, axis, t):
    z = x / (t or 1.0)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,axis,temperature", SM_CASES)
def test_softmax_forward(shape, axis, temperature, dtype, rng, check):
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    ref = softmax_reference(x.astype(np.float64), axis, temperature)
    check.close(k_softmax.softmax(np, x, axis, temperature), ref, dtype)
    check.close(k_softmax.log_softmax(np, x, axis, temperature), np.log(ref), dtype)
    assert k_softmax.softmax(np, x, axis, temperature, dtype=np.float16).dtype == np.float16


@pytest.mark.parametrize("shape,axis,temperature", SM_CASES)
def test_softmax_backward(shape, axis, temperature, rng, check):
    x = rng.standard_normal(shape) * 3
    head = rng.standard_normal(shape)
    for fwd, bwd in ((k_softmax.softmax, k_softmax.softmax_backward), (k_softmax.log_softmax, k_softmax.log_softmax_backward)):
        out = fwd(np, x, axis, temperature)
        grad = bwd(np, head, out, axis, temperature)
        check.grad(lambda v, fwd=fwd: fwd(np, v, axis, temperature), x, head, grad, fwd.__name__)


def test_softmax_is_stable_for_large_inputs():
    out = k_softmax.softmax(np, np.array([1000.0, 1000.0, -1000.0]))
    np.testing.assert_allclose(out, [0.5, 0.5, 0.0])


# ------------------------------------------------------------ SoftmaxOutput


def _ce_loss_grad(x, label, axis):
    """Gradient of sum(-log softmax(x)[label]) by central differences (the closed form's source)."""
    lab = np.expand_dims(label.astype(int), axis)

    def loss(v):
        return -np.take_along_axis(np.log(softmax_reference(v, axis, None)), lab, axis).sum()

    return _numgrad_scalar(loss, x.copy())


def _numgrad_scalar(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        up = f(x)
        x[i] = old - eps
        g[i] = (up - f(x)) / (2 * eps)
        x[i] = old
    return g


@pytest.mark.parametrize("layout", ["plain", "multi", "preserve"])
def test_softmax_output_gradient_is_cross_entropy_gradient(layout, rng, check):
    if layout == "plain":
        x, label, axis, kw = rng.standard_normal((4, 5)), rng.integers(0, 5, 4), 1, {}
    elif layout == "multi":
        x, label, axis, kw = rng.standard_normal((2, 3, 4)), rng.integers(0, 3, (2, 4)), 1, dict(multi_output=True)
    else:
        x, label, axis, kw = rng.standard_normal((2, 3, 4)), rng.integers(0, 4, (2, 3)), 2, dict(preserve_shape=True)
    out = k_output.softmax_output(np, x, **kw)
    check.close(out, softmax_reference(x, axis, None))
    grad = k_output.softmax_output_backward(np, out, label.astype(np.float64), **kw)
    expected = _ce_loss_grad(x, label, axis)
    if layout == "multi":
        expected = expected / 4  # MXNet averages over the spatial positions
    check.close(grad, expected, np.float32)


@pytest.mark.parametrize(
    "params,scale_rows",
    [
        (dict(), [1, 1, 1, 1]),
        (dict(grad_scale=2.0, normalization="batch"), [0.5] * 4),
        (dict(normalization="valid", use_ignore=True, ignore_label=2), [1 / 3, 0, 1 / 3, 1 / 3]),
        (dict(normalization="valid", ignore_label=2), [1 / 3] * 4),  # counts skip 2 even without use_ignore
        (dict(normalization="batch", use_ignore=True, ignore_label=2), [0.25, 0, 0.25, 0.25]),
    ],
)
def test_softmax_output_normalization(params, scale_rows, rng, check):
    x = rng.standard_normal((4, 3))
    label = np.array([0.0, 2.0, 1.0, 1.7])  # labels are truncated to int like MXNet
    out = k_output.softmax_output(np, x)
    onehot = np.eye(3)[label.astype(int)]
    grad = k_output.softmax_output_backward(np, out, label, **params)
    check.close(grad, (out - onehot) * np.array(scale_rows)[:, None])


def test_softmax_output_smoothing_probability_labels_and_out_grad(rng, check):
    x = rng.standard_normal((3, 4))
    out = k_output.softmax_output(np, x)
    label = np.array([0.0, 3.0, 9.0])  # 9 is out of range: nothing is subtracted
    smooth = np.where(np.eye(4)[[0, 3, 0]] > 0, 0.7, 0.1)
    smooth[2] = 0.1
    check.close(k_output.softmax_output_backward(np, out, label, smooth_alpha=0.3), out - smooth)
    probs = rng.random((3, 4))
    check.close(k_output.softmax_output_backward(np, out, probs, grad_scale=0.5, normalization="batch"), (out - probs) * 0.5)
    head = rng.standard_normal((3, 4))
    plain = k_output.softmax_output_backward(np, out, label)
    check.close(k_output.softmax_output_backward(np, out, label, out_grad=True, ograd=head), plain * head)


def test_softmax_output_flattens_and_reads_first_labels(rng, check):
    x = rng.standard_normal((2, 3, 4))
    out = k_output.softmax_output(np, x)
    check.close(out.reshape(2, 12), softmax_reference(x.reshape(2, 12), 1, None))
    grad = k_output.softmax_output_backward(np, out, np.array([[5.0, 11.0, 0.0], [1.0, 2.0, 3.0]]), normalization="batch")
    expected = (out.reshape(2, 12) - np.eye(12)[[5, 11]]) / 6  # 'batch' divides by the label count
    check.close(grad.reshape(2, 12), expected)


@pytest.mark.parametrize("kind", ["linear", "logistic", "mae"])
@pytest.mark.parametrize("shape", [(3, 4), (5,), (2, 3, 2)])
def test_regression_outputs(kind, shape, rng, check):
    x, label = rng.standard_normal(shape), rng.standard_normal(shape)
    fwd = getattr(k_output, f"{kind}_regression_output")
    bwd = getattr(k_output, f"{kind}_regression_output_backward")
    out = fwd(np, x)
    check.close(out, 1 / (1 + np.exp(-x)) if kind == "logistic" else x)
    per_sample = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    diff = out - label
    expected = (np.sign(diff) if kind == "mae" else diff) * 1.5 / per_sample
    check.close(bwd(np, out, label, grad_scale=1.5), expected)
    if kind != "mae":  # linear/logistic are the gradients of squared error / cross entropy w.r.t. data
        loss = (
            (lambda v: 0.5 * ((v - label) ** 2).sum())
            if kind == "linear"
            else (lambda v: -(label * np.log(fwd(np, v)) + (1 - label) * np.log(1 - fwd(np, v))).sum())
        )
        check.close(bwd(np, out, label), _numgrad_scalar(loss, x.copy()) / per_sample, np.float32)
