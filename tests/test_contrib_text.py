"""mx.contrib.text (counting, Vocabulary, embeddings from local files) and gluon.contrib.data.text's
WikiText data sets; the expected values are MXNet 1.9.1's for the same inputs (run 2026-12-02)."""

import os

import numpy as np
import pytest

import mxasync as mx
from mxasync.contrib import text


@pytest.fixture
def vec_file(tmp_path):
    path = tmp_path / "vec.txt"
    path.write_text("a 1 2 3\nb 4 5 6\n<unk> 9 9 9\nc 7 8 9\n")
    return str(path)


def test_vocabulary_orders_by_frequency_then_token():
    counter = text.utils.count_tokens_from_str("a b b c c c d\n", " ", "\n")
    vocab = text.vocab.Vocabulary(counter, reserved_tokens=["<pad>"])
    assert vocab.idx_to_token == ["<unk>", "<pad>", "c", "b", "a", "d"]
    assert vocab.to_indices(["c", "zz"]) == [2, 0] and vocab.to_tokens([1, 2]) == ["<pad>", "c"]
    assert text.vocab.Vocabulary(counter, most_freq_count=2, min_freq=2).idx_to_token == ["<unk>", "c", "b"]
    with pytest.raises(ValueError, match="token index 9"):
        vocab.to_tokens(9)
    lower = text.utils.count_tokens_from_str(" Life is great ! \n life is good . \n", to_lower=True)
    assert lower == {"life": 2, "is": 2, "great": 1, "!": 1, "good": 1, ".": 1}


def test_custom_and_composite_embeddings(vec_file):
    counter = text.utils.count_tokens_from_str("a b b c c c d\n", " ", "\n")
    vocab = text.vocab.Vocabulary(counter, reserved_tokens=["<pad>"])
    emb = text.embedding.CustomEmbedding(vec_file, vocabulary=vocab)
    assert emb.idx_to_token == vocab.idx_to_token and emb.vec_len == 3
    np.testing.assert_array_equal(emb.idx_to_vec.asnumpy(), [[9, 9, 9], [9, 9, 9], [7, 8, 9], [4, 5, 6], [1, 2, 3],
                                                              [9, 9, 9]])
    plain = text.embedding.CustomEmbedding(vec_file)
    assert plain.idx_to_token == ["<unk>", "a", "b", "c"]
    both = text.embedding.CompositeEmbedding(vocab, [plain, plain])
    assert both.vec_len == 6 and both.get_vecs_by_tokens("b").asnumpy().tolist() == [4, 5, 6, 4, 5, 6]
    plain.update_token_vectors("a", mx.nd.array([0, 0, 1]))
    assert plain.get_vecs_by_tokens(["A"], lower_case_backup=True).asnumpy().tolist() == [[0, 0, 1]]
    with pytest.raises(ValueError, match="Token 'zz' is unknown"):
        plain.update_token_vectors("zz", mx.nd.array([0, 0, 1]))


def test_glove_reads_its_file_under_embedding_root(tmp_path):
    (tmp_path / "glove").mkdir()
    (tmp_path / "glove" / "glove.6B.50d.txt").write_text("x 1 1\ny 2 2\n")
    emb = text.embedding.create("glove", pretrained_file_name="glove.6B.50d.txt", embedding_root=str(tmp_path))
    assert type(emb).__name__ == "GloVe" and emb.idx_to_token == ["<unk>", "x", "y"]
    assert emb.get_vecs_by_tokens("y").asnumpy().tolist() == [2, 2]
    assert "glove.6B.50d.txt" in text.embedding.get_pretrained_file_names("glove")
    with pytest.raises(KeyError, match="glove.bogus.txt"):
        text.embedding.GloVe("glove.bogus.txt", embedding_root=str(tmp_path))


def test_wikitext_reads_local_token_files(tmp_path):
    (tmp_path / "wiki.train.tokens").write_text(" = Title = \n\n the cat sat on the mat \n the end \n")
    ds = mx.gluon.contrib.data.text.WikiText2(root=str(tmp_path), seq_len=3)
    assert len(ds) == 4 and ds.frequencies["the"] == 3
    assert ds.vocabulary.idx_to_token[:4] == ["<unk>", "<eos>", "the", "="]
    data, label = ds[0]
    assert data.asnumpy().tolist() == [3, 4, 3] and label.asnumpy().tolist() == [4, 3, 1]
    assert isinstance(ds.vocabulary, text.vocab.Vocabulary)
    with pytest.raises(FileNotFoundError, match=os.path.join(str(tmp_path), "wiki.test.tokens").replace("\\", "\\\\")):
        mx.gluon.contrib.data.text.WikiText103(root=str(tmp_path), segment="test")
