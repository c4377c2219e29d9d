"""gluon.loss against numpy formulas: values (imperative, hybridized, symbolic), weights and numerical
gradients. One table drives the checks."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx
from mxasync import autograd
from mxasync.gluon import loss as gloss

RNG = np.random.RandomState(0)
N, C = 4, 5


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x, axis=-1):
    return np.log(_softmax(x, axis))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _mean_rest(x):
    return x.reshape(x.shape[0], -1).mean(axis=1)


def _cos(a, b):
    return (a * b).sum(-1) / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1), 1e-12)


P = RNG.uniform(-2, 2, (N, C))
Q = RNG.uniform(-2, 2, (N, C))
R = RNG.uniform(-2, 2, (N, C))
PROB = RNG.uniform(0.05, 0.95, (N, C))
BIN = RNG.randint(0, 2, (N, C)).astype(np.float64)
SIGN = 2 * BIN - 1
SPARSE = np.array([0, 3, 1, 4], dtype=np.float64)
DIST = _softmax(RNG.uniform(size=(N, C)))
POS = RNG.uniform(0.5, 3, (N, C))
COUNTS = RNG.randint(0, 5, (N, C)).astype(np.float64)
PAIR_LABEL = np.array([1, -1, 1, -1], dtype=np.float64)

# name, loss, inputs, numpy value, whether the first input has a gradient to check
CASES = [
    ("l1", gloss.L1Loss(), [P, Q], lambda p, q: _mean_rest(np.abs(q - p))),
    ("l1_weight", gloss.L1Loss(weight=0.5), [P, Q], lambda p, q: 0.5 * _mean_rest(np.abs(q - p))),
    ("l2", gloss.L2Loss(), [P, Q], lambda p, q: _mean_rest((q - p) ** 2) / 2),
    ("l2_label_reshaped", gloss.L2Loss(weight=2.0), [P[:, :1], Q[:, 0]], lambda p, q: (q - p[:, 0]) ** 2),
    ("softmax_ce", gloss.SoftmaxCELoss(), [P, SPARSE],
     lambda p, y: -_log_softmax(p)[np.arange(N), y.astype(int)]),
    ("softmax_ce_dense", gloss.SoftmaxCrossEntropyLoss(sparse_label=False), [P, DIST],
     lambda p, y: -(_log_softmax(p) * y).sum(-1)),
    ("softmax_ce_logits_axis0", gloss.SoftmaxCELoss(axis=0, from_logits=True, batch_axis=1),
     [P, np.array([1, 0, 3, 2, 2], dtype=np.float64)],
     lambda p, y: -p[y.astype(int), np.arange(C)]),
    ("sigmoid_bce", gloss.SigmoidBCELoss(), [P, BIN],
     lambda p, y: _mean_rest(-y * np.log(_sigmoid(p)) - (1 - y) * np.log(1 - _sigmoid(p)))),
    ("sigmoid_bce_from_sigmoid", gloss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=True), [PROB, BIN],
     lambda p, y: _mean_rest(-y * np.log(p + 1e-12) - (1 - y) * np.log(1 - p + 1e-12))),
    ("kldiv", gloss.KLDivLoss(), [_log_softmax(P), DIST], lambda p, y: (y * (np.log(y + 1e-12) - p)).sum(-1)),
    ("kldiv_from_scores", gloss.KLDivLoss(from_logits=False), [P, DIST],
     lambda p, y: (y * (np.log(y + 1e-12) - _log_softmax(p))).sum(-1)),
    ("huber", gloss.HuberLoss(rho=0.7), [P, Q],
     lambda p, q: _mean_rest(np.where(np.abs(q - p) > 0.7, np.abs(q - p) - 0.35, (q - p) ** 2 / 1.4))),
    ("hinge", gloss.HingeLoss(margin=1.5), [P, SIGN], lambda p, y: _mean_rest(np.maximum(0, 1.5 - p * y))),
    ("squared_hinge", gloss.SquaredHingeLoss(), [P, SIGN], lambda p, y: _mean_rest(np.maximum(0, 1 - p * y) ** 2)),
    ("logistic_signed", gloss.LogisticLoss(), [P, SIGN], lambda p, y: _mean_rest(np.log1p(np.exp(-p * y)))),
    ("logistic_binary", gloss.LogisticLoss(label_format="binary"), [P, BIN],
     lambda p, y: _mean_rest(np.log1p(np.exp(-p * (2 * y - 1))))),
    ("triplet", gloss.TripletLoss(margin=0.5), [P, Q, R],
     lambda p, q, r: np.maximum(0, ((q - p) ** 2 - (r - p) ** 2).sum(-1) + 0.5)),
    ("poisson_logits", gloss.PoissonNLLLoss(), [P, COUNTS], lambda p, t: np.array([(np.exp(p) - t * p).mean()])),
    ("poisson_full", gloss.PoissonNLLLoss(from_logits=False, compute_full=True), [POS, COUNTS + 1],
     lambda p, t: np.array([(p - t * np.log(p + 1e-8)
                             + (t * np.log(t) - t + 0.5 * np.log(2 * t * np.pi)) * (t > 1)).mean()])),
    ("cosine", gloss.CosineEmbeddingLoss(margin=0.1), [P, Q, PAIR_LABEL],
     lambda a, b, y: np.where(y == 1, 1 - _cos(a, b), np.maximum(0, _cos(a, b) - 0.1))[:, None]),
]
IDS = [c[0] for c in CASES]


def _nd(arrays):
    return [mx.nd.array(a, dtype="float64") for a in arrays]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_against_numpy(case):
    _, loss, inputs, formula = case
    out = loss(*_nd(inputs))
    np.testing.assert_allclose(out.asnumpy(), formula(*inputs), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_hybridized_and_symbolic_match(case):
    _, loss, inputs, formula = case
    want = formula(*inputs)
    hybrid = type(loss)(**_kwargs(loss))
    hybrid.hybridize()
    np.testing.assert_allclose(hybrid(*_nd(inputs)).asnumpy(), want, rtol=1e-5, atol=1e-6)
    names = [f"in{i}" for i in range(len(inputs))]
    sym = loss(*[mx.sym.var(n) for n in names])
    ex = sym.bind(mx.cpu(), dict(zip(names, _nd(inputs), strict=True)))
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), want, rtol=1e-5, atol=1e-6)


def _kwargs(loss):
    """Rebuild a loss with the same settings (the table holds instances)."""
    keep = {k[1:]: v for k, v in vars(loss).items() if k.startswith("_") and not k.startswith("__")}
    names = {"weight": "weight", "batch_axis": "batch_axis", "from_sigmoid": "from_sigmoid", "axis": "axis",
             "sparse_label": "sparse_label", "from_logits": "from_logits", "rho": "rho", "margin": "margin",
             "label_format": "label_format", "compute_full": "compute_full"}
    return {names[k]: v for k, v in keep.items() if k in names}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradient_of_the_prediction_numerically(case):
    _, loss, inputs, _ = case
    arrays = _nd(inputs)
    pred = arrays[0]
    pred.attach_grad()
    with autograd.record():
        out = loss(pred, *arrays[1:])
    out.backward()
    analytic = pred.grad.asnumpy()
    eps, base = 1e-6, np.asarray(inputs[0], dtype=np.float64)
    numeric = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        hi, lo = base.copy(), base.copy()
        hi[idx] += eps
        lo[idx] -= eps
        f = [loss(mx.nd.array(v, dtype="float64"), *arrays[1:]).asnumpy().sum() for v in (hi, lo)]
        numeric[idx] = (f[0] - f[1]) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-4, atol=1e-6)


def test_sample_weight_and_weight():
    p, q = _nd([P, Q])
    w = mx.nd.array(RNG.uniform(size=(N, 1)), dtype="float64")
    out = gloss.L2Loss(weight=3.0)(p, q, w).asnumpy()
    np.testing.assert_allclose(out, 1.5 * _mean_rest((Q - P) ** 2 * w.asnumpy()), rtol=1e-6)
    ce = gloss.SoftmaxCELoss()(p, mx.nd.array(SPARSE), w).asnumpy()
    np.testing.assert_allclose(ce, -_log_softmax(P)[np.arange(N), SPARSE.astype(int)] * w.asnumpy()[:, 0], rtol=1e-6)
    with pytest.raises(TypeError, match="weight must be a number"):
        gloss.L1Loss(weight=mx.nd.ones((1,)))(p, q)


def test_bce_pos_weight():
    pw = RNG.uniform(0, 3, (1, C))
    p, y = _nd([P, BIN])
    out = gloss.SigmoidBCELoss()(p, y, None, mx.nd.array(pw, dtype="float64")).asnumpy()
    want = (-BIN * np.log(_sigmoid(P)) * pw - (1 - BIN) * np.log(1 - _sigmoid(P))).mean(1)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    out = gloss.SigmoidBCELoss(from_sigmoid=True)(*_nd([PROB, BIN]), None, mx.nd.array(pw, dtype="float64"))
    out = out.asnumpy()
    want = (-BIN * np.log(PROB + 1e-12) * pw - (1 - BIN) * np.log(1 - PROB + 1e-12)).mean(1)
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_equivalences():
    label = BIN[:, :1]
    bce = gloss.SigmoidBCELoss(from_sigmoid=True)(mx.nd.array(PROB[:, :1]), mx.nd.array(label)).asnumpy()
    two = np.log(np.concatenate([1 - PROB[:, :1], PROB[:, :1]], axis=1) + 1e-8)
    ce = gloss.SoftmaxCELoss(from_logits=True)(mx.nd.array(two), mx.nd.array(label)).asnumpy()
    np.testing.assert_allclose(bce, ce, rtol=1e-4, atol=1e-6)
    a = gloss.LogisticLoss(label_format="binary")(mx.nd.array(P), mx.nd.array(BIN)).asnumpy()
    b = gloss.SigmoidBCELoss()(mx.nd.array(P), mx.nd.array(BIN)).asnumpy()
    np.testing.assert_allclose(a, b, rtol=1e-5)


def test_sdml_loss():
    x1 = RNG.uniform(-1, 1, (3, 4))
    x2 = x1 + RNG.uniform(-0.1, 0.1, (3, 4))
    out = gloss.SDMLLoss(smoothing_parameter=0.3)(mx.nd.array(x1, dtype="float64"), mx.nd.array(x2, dtype="float64"))
    d = ((x1[:, None, :] - x2[None, :, :]) ** 2).sum(-1)
    labels = np.eye(3) * 0.7 + (1 - np.eye(3)) * 0.15
    want = (labels * (np.log(labels + 1e-12) - _log_softmax(-d, axis=1))).sum(1)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)


def test_repr_and_bad_label_format():
    assert repr(gloss.L1Loss(weight=2.0)) == "L1Loss(batch_axis=0, w=2.0)"
    with pytest.raises(ValueError, match="label_format"):
        gloss.LogisticLoss(label_format="onehot")


def _ctc_numpy(logits, label, blank):
    """Negative log-likelihood of ``label`` under CTC, by the alpha recursion over (T, C) scores."""
    probs = _softmax(logits.astype(np.float64), axis=-1)
    ext = [blank]
    for c in label:
        ext += [c, blank]
    alpha = np.zeros(len(ext))
    alpha[0], alpha[1] = probs[0, blank], probs[0, ext[1]]
    for t in range(1, len(probs)):
        prev = alpha.copy()
        for s in range(len(ext)):
            a = prev[s] + (prev[s - 1] if s >= 1 else 0)
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                a += prev[s - 2]
            alpha[s] = a * probs[t, ext[s]]
    return -np.log(alpha[-1] + alpha[-2])


@pytest.mark.parametrize("layout, label_layout", [("NTC", "NT"), ("TNC", "TN"), ("TNC", "NT")])
def test_ctc_loss_against_numpy(layout, label_layout):
    rng = np.random.RandomState(3)
    logits = rng.uniform(-1, 1, (2, 6, 4))  # N, T, C; class 3 is the blank
    labels = np.array([[1, 0, -1], [2, 2, 1]], dtype=np.float64)
    want = [_ctc_numpy(logits[0], [1, 0], 3), _ctc_numpy(logits[1], [2, 2, 1], 3)]
    pred = logits if layout == "NTC" else logits.transpose(1, 0, 2)
    lab = labels if label_layout == "NT" else labels.T
    loss = gloss.CTCLoss(layout=layout, label_layout=label_layout)
    np.testing.assert_allclose(loss(mx.nd.array(pred), mx.nd.array(lab)).asnumpy(), want, rtol=1e-5)
    hybrid = gloss.CTCLoss(layout=layout, label_layout=label_layout)
    hybrid.hybridize()
    np.testing.assert_allclose(hybrid(mx.nd.array(pred), mx.nd.array(lab)).asnumpy(), want, rtol=1e-5)


def test_ctc_loss_lengths():
    rng = np.random.RandomState(4)
    logits = rng.uniform(-1, 1, (2, 7, 4))
    labels = np.array([[1, 2, 0], [2, 1, 0]], dtype=np.float64)  # lengths 2 and 3 given explicitly
    want = [_ctc_numpy(logits[0, :5], [1, 2], 3), _ctc_numpy(logits[1], [2, 1, 0], 3)]
    out = gloss.CTCLoss()(mx.nd.array(logits), mx.nd.array(labels), mx.nd.array([5, 7]), mx.nd.array([2, 3]))
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5)
    with pytest.raises(ValueError, match="layouts for pred"):
        gloss.CTCLoss(layout="NCT")


def test_integer_sample_weight_under_np_array_promotes_like_mxnet():
    # d2l's MaskedSoftmaxCELoss weighs the loss by npx.sequence_mask(np.ones_like(label)): an integer
    # mask when the labels are integers; MXNet 1.9.1 multiplies with NumPy's promotion under set_np
    rng = np.random.RandomState(0)
    pred = rng.uniform(-1, 1, (3, 4, 5)).astype(np.float32)
    label = rng.randint(0, 5, (3, 4))
    bits = rng.randint(0, 2, (4, 5))
    mask = (np.arange(4)[None, :] < np.array([4, 2, 0])[:, None]).astype(np.int64)[..., None]
    want = -np.take_along_axis(_log_softmax(pred), label[..., None], -1) * mask
    with mx.util.np_array(True):
        p = mx.np.array(pred)
        p.attach_grad()
        with autograd.record():
            loss = gloss.SoftmaxCELoss()(p, mx.np.array(label, dtype="int64"), mx.np.array(mask, dtype="int64"))
        loss.backward()
        bce = gloss.SigmoidBCELoss()(mx.np.array(pred[0]), mx.np.array(bits, dtype="int64"), None,
                                     mx.np.array(np.full((5,), 2.0, np.float32)))
    assert loss.dtype == np.float32
    np.testing.assert_allclose(loss.asnumpy(), want.mean(axis=(1, 2)), rtol=1e-5, atol=1e-6)
    onehot = np.eye(5, dtype=np.float32)[label]
    grad = (_softmax(pred) - onehot) * mask / 4  # d mean over the 4 steps of each sample
    np.testing.assert_allclose(p.grad.asnumpy(), grad, rtol=1e-5, atol=1e-6)
    z, x = bits.astype(np.float32), pred[0]
    want_bce = x - x * z + (1 + z) * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))
    np.testing.assert_allclose(bce.asnumpy(), want_bce.mean(axis=1), rtol=1e-5, atol=1e-6)
