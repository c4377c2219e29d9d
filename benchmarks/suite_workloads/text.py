"""Text workloads: LSTM and GRU language models on the fused RNN layer, and an Embedding classifier.

Language model: embedding 64 -> fused 2-layer LSTM/GRU of 128 (layout TNC, zero initial state) ->
dense to the vocabulary (1000) -> softmax cross-entropy, T=32, batch 64; forward, backward, SGD.
Classifier: Embedding 20000x64 -> mean over the 64 tokens -> dense 5 -> softmax cross-entropy, batch 64.
"""

from __future__ import annotations

import numpy as np

from .common import Bench
from .train_small import gluon_trainer, torch_sgd_step

LM = {"vocab": 1000, "embed": 64, "hidden": 128, "layers": 2, "steps": 32, "batch": 64}
CLS = {"vocab": 20000, "embed": 64, "tokens": 64, "batch": 64, "classes": 5}


def _lm_batch():
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, LM["vocab"], (LM["steps"] + 1, LM["batch"])).astype(np.float32)
    return tokens[:-1], tokens[1:]  # (T, N) inputs and next-token labels


def _cls_batch():
    rng = np.random.default_rng(0)
    return (rng.integers(0, CLS["vocab"], (CLS["batch"], CLS["tokens"])).astype(np.float32),
            rng.integers(0, CLS["classes"], CLS["batch"]).astype(np.float32))


def _mx_lm(mx, cell: str):
    gluon = mx.gluon

    class LanguageModel(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.embed = gluon.nn.Embedding(LM["vocab"], LM["embed"])
                layer = gluon.rnn.LSTM if cell == "lstm" else gluon.rnn.GRU
                self.rnn = layer(LM["hidden"], num_layers=LM["layers"], layout="TNC", input_size=LM["embed"])
                self.decode = gluon.nn.Dense(LM["vocab"], flatten=False, in_units=LM["hidden"])

        def hybrid_forward(self, F, x):
            return self.decode(self.rnn(self.embed(x)))

    return LanguageModel()


def _mx_classifier(mx):
    gluon = mx.gluon

    class Classifier(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.embed = gluon.nn.Embedding(CLS["vocab"], CLS["embed"])
                self.out = gluon.nn.Dense(CLS["classes"], in_units=CLS["embed"])

        def hybrid_forward(self, F, x):
            return self.out(F.mean(self.embed(x), axis=1))

    return Classifier()


def build_mx(mx, name: str, cfg: dict) -> Bench:
    if name == "embedding_classifier":
        x, y = _cls_batch()
        make_step = gluon_trainer(mx, _mx_classifier(mx), CLS["batch"])
    else:
        x, y = _lm_batch()
        make_step = gluon_trainer(mx, _mx_lm(mx, name.split("_")[0]), LM["batch"])
    return Bench(make_step(mx.nd.array(x), mx.nd.array(y)))


# -- PyTorch --------------------------------------------------------------------------------------
def _torch_lm(torch, cell: str):
    nn = torch.nn

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(LM["vocab"], LM["embed"])
            self.rnn = (nn.LSTM if cell == "lstm" else nn.GRU)(LM["embed"], LM["hidden"], LM["layers"])
            self.decode = nn.Linear(LM["hidden"], LM["vocab"])

        def forward(self, x):
            # (T*N, vocab) rows, as the label is flattened: the same mean cross-entropy over all tokens
            return self.decode(self.rnn(self.embed(x))[0]).reshape(-1, LM["vocab"])

    return LanguageModel()


def _torch_classifier(torch):
    nn = torch.nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(CLS["vocab"], CLS["embed"])
            self.out = nn.Linear(CLS["embed"], CLS["classes"])

        def forward(self, x):
            return self.out(self.embed(x).mean(dim=1))

    return Classifier()


def build_torch(torch, name: str, cfg: dict) -> Bench:
    torch.manual_seed(0)
    if name == "embedding_classifier":
        x, y = _cls_batch()
        model, label = _torch_classifier(torch), torch.from_numpy(y).long()
    else:
        x, y = _lm_batch()
        model, label = _torch_lm(torch, name.split("_")[0]), torch.from_numpy(y).long().reshape(-1)
    return Bench(torch_sgd_step(torch, model, torch.from_numpy(x).long(), label))
