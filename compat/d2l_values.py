"""Fixed inputs and weights through d2l's blocks and functions: outputs and gradients to compare.

Used by ``compat/d2l_check.py values`` (see there); each ``values_*`` function takes the ``d2l`` module
and returns named arrays. Parameters are set in definition order from per-parameter seeds, which
MXNet 1.9.1 and mxasync share, so the same script gives comparable numbers in both.
"""

from __future__ import annotations

import numpy as onp


def _R(seed: int, *shape, scale: float = 1.0):
    from mxnet import np

    return np.array(onp.random.RandomState(seed).uniform(-scale, scale, shape).astype("float32"))


def _ints(seed: int, high: int, *shape):
    from mxnet import np

    return np.array(onp.random.RandomState(seed).randint(0, high, shape).astype("int32"))


def _set_params(block, seed: int = 0, scale: float = 0.5):
    """Every parameter (in definition order, which MXNet and mxasync share) from its own seed."""
    for i, p in enumerate(block.collect_params().values()):
        p.set_data(_R(seed + i, *p.shape, scale=scale))
    return block


def _fwd_bwd(block, *args, grads=2):
    """The output and the gradients of the first ``grads`` parameters of ``sum(out * fixed weights)``."""
    from mxnet import autograd

    with autograd.record():
        y = block(*args)
        y = y[0] if isinstance(y, (tuple, list)) else y
        loss = (y * _R(100, *y.shape)).sum()
    loss.backward()
    params = [p for p in block.collect_params().values() if p.grad_req != "null"]
    return dict(y=y, **{f"g{i}": p.grad() for i, p in enumerate(params[:grads])})


def values_masked_softmax(d2l):
    from mxnet import autograd, np

    X = _R(1, 2, 3, 5)
    X.attach_grad()
    with autograd.record():
        y = d2l.masked_softmax(X, np.array([2, 3]))
        loss = (y * _R(2, 2, 3, 5)).sum()
    loss.backward()
    return dict(lens1=y, lens2=d2l.masked_softmax(X, np.array([[1, 3, 5], [2, 4, 0]])),
                none=d2l.masked_softmax(X, None), grad=X.grad)


def values_dot_product_attention(d2l):
    from mxnet import autograd, np

    att = d2l.DotProductAttention(dropout=0)
    att.initialize()
    q, k, v = _R(1, 2, 3, 4), _R(2, 2, 6, 4), _R(3, 2, 6, 5)
    for t in (q, k, v):
        t.attach_grad()
    with autograd.record():
        y = att(q, k, v, np.array([[2, 3, 6], [1, 4, 5]]))
        loss = (y * _R(4, *y.shape)).sum()
    loss.backward()
    return dict(y=y, weights=att.attention_weights, gq=q.grad, gk=k.grad, gv=v.grad)


def values_additive_attention(d2l):
    from mxnet import np

    att = d2l.AdditiveAttention(num_hiddens=8, dropout=0)
    att.initialize()
    q, k, v, lens = _R(1, 2, 3, 4), _R(2, 2, 6, 7), _R(3, 2, 6, 5), np.array([2, 6])
    att(q, k, v, lens)
    return _fwd_bwd(_set_params(att), q, k, v, lens, grads=3)


def values_multihead_attention(d2l):
    from mxnet import np

    mha = d2l.MultiHeadAttention(12, 3, 0)
    mha.initialize()
    q, kv = _R(1, 2, 4, 12), _R(2, 2, 6, 12)
    mha(q, kv, kv, np.array([3, 5]))
    out = _fwd_bwd(_set_params(mha), q, kv, kv, np.array([3, 5]), grads=4)
    out["y_lens2d"] = mha(q, kv, kv, np.array([[1, 2, 3, 4], [6, 5, 4, 3]]))
    return out


def values_transformer_encoder(d2l):
    from mxnet import np

    enc = d2l.TransformerEncoder(30, 12, 24, 3, 2, 0)
    tokens, lens = _ints(3, 30, 2, 7), np.array([3, 7])
    enc(tokens, lens)
    out = _fwd_bwd(_set_params(enc), tokens, lens)
    pe = d2l.PositionalEncoding(16, 0, max_len=50)
    pe.initialize()
    return dict(out, weights=enc.attention_weights[1], P=pe.P)


def values_seq2seq_encoder(d2l):
    from mxnet import autograd

    enc = d2l.Seq2SeqEncoder(20, 8, 16, 2)
    tokens = _ints(3, 20, 4, 9)
    enc(tokens)
    _set_params(enc)
    with autograd.record():
        out, state = enc(tokens)
        loss = (out * _R(5, *out.shape)).sum() + (state * _R(6, *state.shape)).sum()
    loss.backward()
    grads = [p.grad() for p in enc.collect_params().values()]
    return dict(out=out, state=state, g_embedding=grads[0], g_last=grads[-1])


def values_masked_softmax_ce(d2l):
    from mxnet import autograd, np

    pred = _R(1, 3, 4, 10)
    pred.attach_grad()
    with autograd.record():
        loss = d2l.MaskedSoftmaxCELoss()(pred, _ints(2, 10, 3, 4).astype("int64"), np.array([4, 2, 0]))
    loss.backward()
    return dict(loss=loss, grad=pred.grad)


def values_rnn_lm(d2l):
    from mxnet import autograd

    rnn = d2l.RNNScratch(num_inputs=10, num_hiddens=8)
    scratch = d2l.RNNLMScratch(rnn, vocab_size=10, lr=1)
    for i, p in enumerate((rnn.W_xh, rnn.W_hh, rnn.b_h, scratch.W_hq, scratch.b_q)):
        p[:] = _R(i + 1, *p.shape, scale=0.6)
    concise = d2l.RNNLM(d2l.RNN(num_hiddens=8), vocab_size=10, lr=1)
    X, Y = _ints(6, 10, 3, 5), _ints(7, 10, 3, 5)
    concise(X)
    _set_params(concise)
    out = {}
    for name, model in (("scratch", scratch), ("concise", concise)):
        with autograd.record():
            loss = model.loss(model(X), Y)
        loss.backward()
        out[f"{name}_loss"] = loss
        d2l.Trainer(max_epochs=1).clip_gradients(0.5, model)
        params = model.parameters()
        params = params if isinstance(params, list) else [p.data() for p in params.values()]
        out.update({f"{name}_clipped{i}": p.grad for i, p in enumerate(params[:3])})
    return out


def values_gru(d2l):
    from mxnet import autograd

    gru = d2l.GRU(8, 2)
    gru.initialize()
    X = _R(1, 5, 3, 4)
    gru(X)
    _set_params(gru)
    with autograd.record():
        o, H = gru(X)
        loss = (o * _R(2, *o.shape)).sum() + (H * _R(3, *H.shape)).sum()
    loss.backward()
    return dict(o=o, H=H, g0=list(gru.collect_params().values())[0].grad())


def values_convolutions(d2l):
    from mxnet import np

    lenet = d2l.LeNet()
    X = _R(1, 2, 1, 28, 28)
    lenet(X)
    out = {f"lenet_{k}": v for k, v in _fwd_bwd(_set_params(lenet, scale=0.2), X).items()}
    out["lenet_loss"] = lenet.loss(lenet(X), np.array([3, 4]))
    for name, block, X in (("residual", d2l.Residual(6, use_1x1conv=True, strides=2), _R(2, 2, 3, 8, 8)),
                           ("resnext", d2l.ResNeXtBlock(8, 2, 1, use_1x1conv=True, strides=2), _R(3, 2, 4, 8, 8))):
        block.initialize()
        block(X)  # training mode below: BatchNorm on the batch's statistics
        out.update({f"{name}_{k}": v for k, v in _fwd_bwd(_set_params(block, scale=0.3), X).items()})
    out["corr2d"] = d2l.corr2d(np.arange(9.0).reshape(3, 3), np.array([[0.0, 1.0], [2.0, 3.0]]))
    return out


def values_anchor_boxes(d2l):
    from mxnet import np

    gt = np.array([[0, 0.1, 0.08, 0.52, 0.92], [1, 0.55, 0.2, 0.9, 0.88]])
    anchors = np.array([[0, 0.1, 0.2, 0.3], [0.15, 0.2, 0.4, 0.4], [0.63, 0.05, 0.88, 0.98],
                        [0.66, 0.45, 0.8, 0.8], [0.57, 0.3, 0.92, 0.9]])
    offsets, mask, labels = d2l.multibox_target(np.expand_dims(anchors, axis=0), np.expand_dims(gt, axis=0))
    boxes = np.array([[0.1, 0.08, 0.52, 0.92], [0.08, 0.2, 0.56, 0.95], [0.15, 0.3, 0.62, 0.91],
                      [0.55, 0.2, 0.9, 0.88]])
    cls_probs = np.array([[0] * 4, [0.9, 0.8, 0.7, 0.1], [0.1, 0.2, 0.3, 0.9]])
    detections = d2l.multibox_detection(np.expand_dims(cls_probs, axis=0), np.zeros((1, 16)),
                                        np.expand_dims(boxes, axis=0), nms_threshold=0.5)
    return dict(prior=d2l.multibox_prior(np.zeros((1, 3, 4, 5)), sizes=[0.75, 0.5, 0.25], ratios=[1, 2, 0.5]),
                iou=d2l.box_iou(anchors, gt[:, 1:]), offsets=offsets, mask=mask, labels=labels,
                detections=detections, corners=d2l.box_center_to_corner(d2l.box_corner_to_center(anchors)))


def values_bert(d2l):
    from mxnet import np

    enc = d2l.BERTEncoder(30, 12, 24, 3, 2, 0, 64)
    enc.initialize()
    tokens = _ints(3, 30, 2, 8)
    segments = np.array([[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 1, 1]])
    enc(tokens, segments, None)
    encoded = _set_params(enc)(tokens, segments, np.array([8, 6]))
    mlm, nsp, positions = d2l.MaskLM(30, 12), d2l.NextSentencePred(), np.array([[1, 5, 2], [6, 1, 5]])
    mlm.initialize()
    nsp.initialize()
    mlm(encoded, positions)
    nsp(encoded.reshape(2, -1))
    return dict(encoded=encoded, mlm=_set_params(mlm, seed=50)(encoded, positions),
                nsp=_set_params(nsp, seed=60)(encoded.reshape(2, -1)))


def values_utilities(d2l):
    from mxnet import np, npx

    y_hat, y = _R(1, 6, 4), np.array([0, 1, 2, 3, 0, 1])
    vocab = d2l.Vocab(["a", "b", "a", "c"], reserved_tokens=["<pad>"])
    return dict(accuracy=d2l.accuracy(y_hat, y), accuracy_float=d2l.accuracy(y_hat, y.astype("float32")),
                one_hot=npx.one_hot(np.array([[1, 2], [0, 3]]).T, 4), tile=np.tile(_R(1, 2, 3), (2, 1, 1)),
                repeat=np.array([[1, 2], [3, 4]]).repeat(2, axis=0), vocab=onp.array(vocab[["a", "c", "zz"]]),
                sequence_mask=npx.sequence_mask(_R(1, 3, 4), np.array([1, 3, 2]), True, value=-1e6, axis=1),
                sequence_mask_axis0=npx.sequence_mask(_R(2, 4, 3, 2), np.array([1, 3, 2]), True),
                batch_dot=npx.batch_dot(_R(1, 2, 3, 4), _R(2, 2, 5, 4), transpose_b=True),
                bleu=d2l.bleu("a b c d", "a b c e", 2), size=d2l.size(_R(1, 3, 4)),
                evaluate_loss=d2l.evaluate_loss(lambda X: X[:, :1] * 2, d2l.load_array(
                    (_R(1, 20, 3), _R(2, 20, 1)), 5, is_train=False), d2l.squared_loss))


def values_custom_init_and_multistep(d2l):
    from mxnet import init, np
    from mxnet.gluon import nn

    class MyInit(init.Initializer):  # builders-guide/init-param, with fixed values instead of uniform ones
        def _init_weight(self, name, data):
            data[:] = np.array(onp.linspace(-10, 10, data.size).reshape(data.shape))
            data *= np.abs(data) >= 5

    net = nn.Dense(4, in_units=6)
    net.initialize(MyInit())
    lin = nn.Dense(1, in_units=4)
    lin.initialize(init.Constant(0.25))
    preds = d2l.zeros(10)  # recurrent-neural-networks/sequence: each prediction feeds the next
    preds[:] = np.arange(10.0)
    for i in range(4, 10):
        preds[i] = lin(d2l.reshape(preds[i - 4:i], (1, -1)))
    return dict(weight=net.weight.data(), multistep=preds)


VALUES = {name[len("values_"):]: fn for name, fn in globals().items() if name.startswith("values_")}
