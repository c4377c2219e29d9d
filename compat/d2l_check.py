"""Which pieces of d2l.ai's MXNet library (``d2l/mxnet.py`` of the ``d2l`` wheel) run on mxasync.

A manual check; ``tests/compat/test_d2l_check.py`` runs it where d2l is installed (CI has no d2l).
In an environment with mxasync, ``compat/mxnet-compat`` and ``pip install --no-deps d2l==1.0.3`` plus
what ``d2l/mxnet.py`` imports (matplotlib, matplotlib-inline, IPython, pandas, requests), from anywhere::

    python compat/d2l_check.py run [piece ...]     # the chapters' training code on synthetic data
    python compat/d2l_check.py values out.npz      # fixed inputs and weights: outputs and gradients
    python compat/d2l_check.py compare ref.npz out.npz

``run`` prints one JSON line per piece (its metrics, or the error with the file and line where it was
raised). Nothing is downloaded: Fashion-MNIST-shaped idx files are written under a temporary
``MXNET_HOME``, and the text and translation data sets are subclasses of d2l's whose ``_download``
returns generated text. ``values`` runs under MXNet 1.9.1 as well (the same command in an environment
with the real MXNet and d2l), which is how ``tests/compat/fixtures_d2l/values_mx191.npz`` was made.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import random
import struct
import sys
import tempfile
import time
import traceback
import warnings

import numpy as onp


def _error(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{frames[-1].filename.split('site-packages/')[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {str(exc)[:300]} @ {where}"


def _fake_fashion_mnist(root: str, n_train: int = 512, n_test: int = 256) -> None:
    """Fashion-MNIST's four idx files: ten noisy prototype images, so the classes can be learnt."""
    rng = onp.random.RandomState(0)
    os.makedirs(root, exist_ok=True)
    protos = rng.randint(0, 256, size=(10, 28, 28))
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        y = rng.randint(0, 10, size=n).astype(onp.uint8)
        x = onp.clip(protos[y] + rng.randint(-60, 60, size=(n, 28, 28)), 0, 255).astype(onp.uint8)
        with gzip.open(os.path.join(root, f"{prefix}-images-idx3-ubyte.gz"), "wb") as f:
            f.write(struct.pack(">IIII", 0x803, n, 28, 28) + x.tobytes())
        with gzip.open(os.path.join(root, f"{prefix}-labels-idx1-ubyte.gz"), "wb") as f:
            f.write(struct.pack(">II", 0x801, n) + y.tobytes())


def _setup():
    """Imports d2l under NumPy semantics, as every chapter does (``npx.set_np()``)."""
    import matplotlib

    matplotlib.use("Agg")
    from mxnet import npx

    npx.set_np()
    from d2l import mxnet as d2l

    return d2l


def _quiet(model):
    model.board.display = False  # the ProgressBoard draws into a notebook
    return model


def _datasets(d2l):
    rng = random.Random(0)
    words = "the time machine traveller said and it was a very strange thing to see".split()
    text = " ".join(rng.choice(words) for _ in range(3000))

    class TimeMachine(d2l.TimeMachine):
        def _download(self):
            return text

    eng = "i you he she we they run go see eat".split()
    fra = "je tu il elle nous ils cours va vois mange".split()
    lines = []
    for _ in range(800):
        idx = [rng.randrange(10) for _ in range(rng.randint(1, 4))]
        lines.append(" ".join(eng[i] for i in idx) + " .\t" + " ".join(fra[i] for i in idx) + " .")

    class MTFraEng(d2l.MTFraEng):
        def _download(self):
            return "\n".join(lines)

    return TimeMachine, MTFraEng


# -- run: the chapters' training code -------------------------------------------------------------------

def _val_accuracy(model, data):
    X, y = next(iter(data.val_dataloader()))
    return float(model.accuracy(model(X), y))


def piece_linear_regression(d2l):
    from mxnet import autograd, np

    out = {}
    for name, model in (("scratch", d2l.LinearRegressionScratch(2, lr=0.03)), ("concise", d2l.LinearRegression(0.03))):
        data = d2l.SyntheticRegressionData(w=d2l.tensor([2, -3.4]), b=4.2)
        d2l.Trainer(max_epochs=3).fit(_quiet(model), data)
        w, b = (model.w, model.b) if name == "scratch" else model.get_w_b()
        out[f"{name}_w_err"] = float(abs(data.w - w.reshape(data.w.shape)).max())
        out[f"{name}_b_err"] = float(abs(data.b - b).max())
    features, labels = d2l.synthetic_data(np.array([2, -3.4]), 4.2, 1000)  # the utils of sec_utils
    w, b = np.random.normal(0, 0.01, (2, 1)), np.zeros(1)
    w.attach_grad()
    b.attach_grad()
    for _ in range(3):
        for X, y in d2l.load_array((features, labels), 10):
            with autograd.record():
                loss = d2l.squared_loss(d2l.linreg(X, w, b), y)
            loss.backward()
            d2l.sgd([w, b], 0.03, 10)
    out["sgd_loss"] = float(d2l.squared_loss(d2l.linreg(features, w, b), labels).mean())
    return out


def piece_softmax_regression(d2l):
    from mxnet import np

    class SoftmaxRegressionScratch(d2l.Classifier):
        def __init__(self, num_inputs, num_outputs, lr, sigma=0.01):
            super().__init__()
            self.save_hyperparameters()
            self.W = np.random.normal(0, sigma, (num_inputs, num_outputs))
            self.b = np.zeros(num_outputs)
            self.W.attach_grad()
            self.b.attach_grad()

        def collect_params(self):
            return [self.W, self.b]

        def forward(self, X):
            X_exp = d2l.exp(d2l.matmul(X.reshape((-1, self.W.shape[0])), self.W) + self.b)
            return X_exp / X_exp.sum(1, keepdims=True)

        def loss(self, y_hat, y):
            return -d2l.log(y_hat[list(range(len(y_hat))), y]).mean()

    out = {}
    for name, model in (("scratch", SoftmaxRegressionScratch(784, 10, 0.1)),
                        ("concise", d2l.SoftmaxRegression(num_outputs=10, lr=0.1))):
        data = d2l.FashionMNIST(batch_size=256)
        data.num_workers = 0
        d2l.Trainer(max_epochs=2).fit(_quiet(model), data)
        out[f"{name}_val_acc"] = _val_accuracy(model, data)
    return out


def piece_mlp(d2l):
    from mxnet.gluon import nn

    class MLP(d2l.Classifier):
        def __init__(self, num_outputs, num_hiddens, lr):
            super().__init__()
            self.save_hyperparameters()
            self.net = nn.Sequential()
            self.net.add(nn.Dense(num_hiddens, activation="relu"), nn.Dense(num_outputs))
            self.net.initialize()

    data = d2l.FashionMNIST(batch_size=256)
    model = _quiet(MLP(10, 64, 0.1))
    d2l.Trainer(max_epochs=2).fit(model, data)  # num_workers=4: the DataLoader's worker threads
    return {"val_acc": _val_accuracy(model, data)}


def piece_lenet(d2l):
    model = _quiet(d2l.LeNet(lr=0.1))
    model.layer_summary((1, 1, 28, 28))
    data = d2l.FashionMNIST(batch_size=128)
    d2l.Trainer(max_epochs=1).fit(model, data)
    train_iter, test_iter = d2l.load_data_fashion_mnist(batch_size=64)
    d2l.train_ch6(model.net, train_iter, test_iter, 1, 0.9, d2l.try_gpu())
    return {"val_acc": _val_accuracy(model, data), "ch6_test_acc": d2l.evaluate_accuracy_gpu(model.net, test_iter)}


def piece_rnn(d2l):
    TimeMachine, _ = _datasets(d2l)
    data = TimeMachine(batch_size=32, num_steps=16, num_train=2000, num_val=500)
    vocab = len(data.vocab)
    out = {}
    for name, model in (("scratch", d2l.RNNLMScratch(d2l.RNNScratch(vocab, 32), vocab_size=vocab, lr=1)),
                        ("concise", d2l.RNNLM(d2l.RNN(num_hiddens=32), vocab_size=vocab, lr=1)),
                        ("gru", d2l.RNNLM(d2l.GRU(num_hiddens=16, num_layers=2), vocab_size=vocab, lr=2))):
        d2l.Trainer(max_epochs=2, gradient_clip_val=1, num_gpus=1).fit(_quiet(model), data)
        X, Y = next(iter(data.val_dataloader()))
        out[f"{name}_val_ppl"] = float(d2l.exp(model.loss(model(X), Y)))
        out[f"{name}_predict"] = model.predict("it has", 10, data.vocab, d2l.try_gpu())
    return out


def piece_seq2seq(d2l):
    from mxnet import init, np
    from mxnet.gluon import nn

    _, MTFraEng = _datasets(d2l)

    class Seq2SeqDecoder(d2l.Decoder):  # sec_seq2seq, with the masked loss added to Seq2Seq below
        def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, embed_size)
            self.rnn = d2l.GRU(num_hiddens, num_layers, dropout)
            self.dense = nn.Dense(vocab_size, flatten=False)
            self.initialize(init.Xavier())

        def init_state(self, enc_all_outputs, *args):
            return enc_all_outputs

        def forward(self, X, state):
            embs = self.embedding(d2l.transpose(X))
            enc_output, hidden_state = state
            context = np.tile(enc_output[-1], (embs.shape[0], 1, 1))
            outputs, hidden_state = self.rnn(d2l.concat((embs, context), -1), hidden_state)
            return d2l.swapaxes(self.dense(outputs), 0, 1), [enc_output, hidden_state]

    class Seq2Seq(d2l.Seq2Seq):
        def loss(self, Y_hat, Y):
            per_token = super(d2l.Seq2Seq, self).loss(Y_hat, Y, averaged=False)
            mask = d2l.astype(d2l.reshape(Y, -1) != self.tgt_pad, d2l.float32)
            return d2l.reduce_sum(per_token * mask) / d2l.reduce_sum(mask)

    data = MTFraEng(batch_size=64)
    encoder = d2l.Seq2SeqEncoder(len(data.src_vocab), 32, 32, 2, 0.2)
    decoder = Seq2SeqDecoder(len(data.tgt_vocab), 32, 32, 2, 0.2)
    model = _quiet(Seq2Seq(encoder, decoder, tgt_pad=data.tgt_vocab["<pad>"], lr=0.005))
    d2l.Trainer(max_epochs=3, gradient_clip_val=1).fit(model, data)
    engs, fras = ["i run .", "he go .", "we see ."], ["je cours .", "il va .", "nous vois ."]
    preds, _ = model.predict_step(data.build(engs, fras), d2l.try_gpu(), data.num_steps)
    bleu = []
    for fr, p in zip(fras, preds, strict=True):
        tokens = data.tgt_vocab.to_tokens(p)
        tokens = tokens[:tokens.index("<eos>")] if "<eos>" in tokens else tokens
        bleu.append(d2l.bleu(" ".join(tokens), fr, k=2))
    X, dec_X, X_len, Y = next(iter(data.val_dataloader()))
    return {"val_loss": float(model.loss(model(X, dec_X, X_len), Y)), "bleu": bleu}


def piece_attention(d2l):
    from mxnet import autograd, np

    X, valid_lens = np.ones((2, 10)), np.array([3, 2])
    enc = d2l.TransformerEncoder(200, 24, 48, 8, 2, 0.5)
    with autograd.record():
        loss = enc(X, valid_lens).sum()
    loss.backward()
    mha = d2l.MultiHeadAttention(100, 5, 0.5)
    mha.initialize()
    att = d2l.AdditiveAttention(num_hiddens=8, dropout=0.1)
    att.initialize()
    keys, values = np.ones((2, 10, 2)), np.arange(40).reshape(1, 10, 4).repeat(2, axis=0)
    return {"encoder": list(enc(X, valid_lens).shape), "weights": list(enc.attention_weights[0].shape),
            "mha": list(mha(np.ones((2, 4, 100)), np.ones((2, 6, 100)), np.ones((2, 6, 100)), valid_lens).shape),
            "additive": list(att(np.random.normal(0, 1, (2, 1, 20)), keys, values, valid_lens).shape)}


PIECES = {name[len("piece_"):]: fn for name, fn in globals().items() if name.startswith("piece_")}


def run(names: list[str]) -> None:
    home = tempfile.mkdtemp(prefix="d2l_check_")
    os.environ["MXNET_HOME"] = home  # where gluon.data.vision.FashionMNIST looks
    _fake_fashion_mnist(os.path.join(home, "datasets", "fashion-mnist"))
    cwd = os.getcwd()
    os.chdir(home)  # d2l's DataModule root is ../data
    try:
        d2l = _setup()
        for name in names or list(PIECES):
            row, start = {"piece": name}, time.time()
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # the chapters' own prints and plots
                    row.update(PIECES[name](d2l))
                row["ok"] = True
            except Exception as exc:  # noqa: BLE001 - the report is the point
                row["error"] = _error(exc)
            row["s"] = round(time.time() - start, 2)
            print(json.dumps(row), flush=True)
    finally:
        os.chdir(cwd)


# -- values: fixed inputs and weights -------------------------------------------------------------------

def values(path: str) -> None:
    from d2l_values import VALUES  # compat/d2l_values.py, beside this script

    d2l, out = _setup(), {}
    for name, fn in VALUES.items():
        try:
            for key, val in fn(d2l).items():
                out[f"{name}.{key}"] = onp.asarray(val.asnumpy() if hasattr(val, "asnumpy") else val)
        except Exception as exc:  # noqa: BLE001
            print(json.dumps({"values": name, "error": _error(exc)}), flush=True)
    onp.savez_compressed(path, **out)


def compare(ref_path: str, got_path: str, rtol: float = 1e-4, atol: float = 1e-5) -> list[str]:
    """The keys whose arrays differ (missing, other shape or dtype, or values beyond the tolerance)."""
    ref, got = onp.load(ref_path), onp.load(got_path)
    bad = []
    for key in sorted(set(ref.files) | set(got.files)):
        if key not in ref.files or key not in got.files:
            bad.append(f"{key}: only in {'reference' if key in ref.files else 'result'}")
            continue
        want, have = ref[key], got[key]
        if want.shape != have.shape or want.dtype != have.dtype:
            bad.append(f"{key}: {have.dtype}{list(have.shape)}, reference {want.dtype}{list(want.shape)}")
        elif not onp.allclose(have.astype(float), want.astype(float), rtol=rtol, atol=atol * max(1.0, abs(want).max())):
            bad.append(f"{key}: largest difference {abs(have.astype(float) - want).max():.3g}")
    return bad


def main(argv: list[str]) -> None:
    warnings.simplefilter("ignore")
    if argv[:1] == ["run"]:
        run(argv[1:])
    elif argv[:1] == ["values"] and len(argv) == 2:
        values(argv[1])
    elif argv[:1] == ["compare"] and len(argv) == 3:
        bad = compare(argv[1], argv[2])
        print("\n".join(bad) or "same")
        sys.exit(1 if bad else 0)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
