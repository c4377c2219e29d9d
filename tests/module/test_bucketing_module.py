"""BucketingModule: one Module per bucket sharing the default bucket's parameters; training on
BucketSentenceIter with mx.rnn cells; checkpoints with one symbol file per bucket."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx

VOCAB, HIDDEN = 12, 8


def _sym_gen(seq_len):
    data, label = mx.sym.Variable("data"), mx.sym.Variable("softmax_label")
    embed = mx.sym.Embedding(data=data, input_dim=VOCAB, output_dim=6)  # auto-named: embedding0 in every bucket
    cell = mx.rnn.LSTMCell(HIDDEN, prefix="lstm_")
    outputs, _ = cell.unroll(seq_len, inputs=embed, merge_outputs=True)
    pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, HIDDEN)), num_hidden=VOCAB, name="pred")
    return mx.sym.SoftmaxOutput(pred, mx.sym.Reshape(label, shape=(-1,)), name="softmax"), ("data",), \
        ("softmax_label",)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    # a learnable language: each sentence counts up from a random start
    sentences = [[(s + i) % (VOCAB - 1) + 1 for i in range(n)] for s, n in
                 zip(rng.integers(0, VOCAB, 120), rng.choice([3, 5], 120), strict=True)]
    return mx.rnn.BucketSentenceIter(sentences, batch_size=8, buckets=[3, 5], invalid_label=0)


def test_buckets_share_parameters_and_training_lowers_perplexity():
    it = _data()
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=it.default_bucket_key)
    metric = mx.metric.Perplexity(ignore_label=0)
    mod.fit(it, eval_metric=metric, num_epoch=1, optimizer="adam", optimizer_params={"learning_rate": 0.02},
            initializer=mx.init.Xavier())
    first = metric.get()[1]
    mod.fit(it, eval_metric=metric, num_epoch=6, begin_epoch=1, optimizer="adam",
            optimizer_params={"learning_rate": 0.02})
    assert metric.get()[1] < 0.5 * first
    assert set(mod._buckets) == {3, 5}
    w3 = mod._buckets[3]._exec_group.execs[0].arg_dict["lstm_i2h_weight"]
    w5 = mod._buckets[5]._exec_group.execs[0].arg_dict["lstm_i2h_weight"]
    np.testing.assert_array_equal(w3.asnumpy(), w5.asnumpy())
    assert mod.symbol.list_arguments()[1] == "embedding0_weight"


def test_checkpoint_round_trip(tmp_path):
    it = _data(1)
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=it.default_bucket_key)
    mod.fit(it, num_epoch=1, initializer=mx.init.Xavier())
    prefix = str(tmp_path / "lm")
    mod.save_checkpoint(prefix, 1)
    assert (tmp_path / "lm-3-symbol.json").exists() and (tmp_path / "lm-5-symbol.json").exists()
    loaded = mx.mod.BucketingModule.load(prefix, 1, sym_gen=_sym_gen, default_bucket_key=it.default_bucket_key)
    loaded.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    for name, value in mod.get_params()[0].items():
        np.testing.assert_array_equal(loaded.get_params()[0][name].asnumpy(), value.asnumpy())


def test_grad_req_add_reaches_every_bucket_and_errors_are_clear():
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=5)
    with pytest.raises(mx.MXNetError, match="BucketingModule.forward: call bind"):
        mod.forward(mx.io.DataBatch([mx.nd.zeros((2, 5))], bucket_key=5))
    mod.bind(data_shapes=[("data", (2, 5))], label_shapes=[("softmax_label", (2, 5))], grad_req="add")
    mod.init_params()
    mod.forward_backward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.ones((2, 3))], bucket_key=3,
                                         provide_data=[mx.io.DataDesc("data", (2, 3))],
                                         provide_label=[mx.io.DataDesc("softmax_label", (2, 3))]))
    assert mod._curr_module._grad_req == "add" and mod._curr_bucket_key == 3
    with pytest.raises(mx.MXNetError, match="default_bucket_key is required"):
        mx.mod.BucketingModule(_sym_gen)
