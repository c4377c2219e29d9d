"""Data for recurrent models: ``encode_sentences`` and the bucketing ``BucketSentenceIter`` (MXNet's mx.rnn.io).

>>> from mxasync.rnn import encode_sentences
>>> encode_sentences([["a", "b"], ["b", "c"]], invalid_label=-1, start_label=0)
([[0, 1], [1, 2]], {'\\n': -1, 'a': 0, 'b': 1, 'c': 2})
"""

from __future__ import annotations

import bisect
import logging
import random

import numpy as np

from .. import ndarray
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter"]


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key="\n", start_label=0,
                     unknown_token=None):
    """Token lists to index lists; a new vocabulary is built (or ``vocab`` extended) as words appear.

    With a given ``vocab`` an unknown word is an error unless ``unknown_token`` names its stand-in.
    """
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    # new words continue after the vocabulary's indices (MXNet restarts at start_label and can give a new
    # word the index of an existing one)
    idx = start_label if new_vocab else max([start_label, *(i + 1 for i in vocab.values())])
    encoded = []
    for sentence in sentences:
        coded = []
        for word in sentence:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise KeyError(f"encode_sentences: unknown token {word!r} (pass unknown_token= to map it)")
                if idx == invalid_label:
                    idx += 1
                if unknown_token:
                    word = unknown_token
                vocab[word] = idx
                idx += 1
            coded.append(vocab[word])
        encoded.append(coded)
    return encoded, vocab


class BucketSentenceIter(DataIter):
    """Batches of equal-length sentences: each goes to the smallest bucket that holds it, padded with
    ``invalid_label``; the label of each step is the next token. ``batch.bucket_key`` is the bucket's
    length, for BucketingModule. ``layout`` 'NT' (batch major) or 'TN' (time major)."""

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1, data_name="data",
                 label_name="softmax_label", dtype="float32", layout="NT"):
        super().__init__(batch_size)
        if not buckets:
            counts = np.bincount([len(s) for s in sentences])
            buckets = [length for length, n in enumerate(counts) if n >= batch_size]
        buckets = sorted(buckets)
        rows: list[list[np.ndarray]] = [[] for _ in buckets]
        discarded = 0
        for sentence in sentences:
            b = bisect.bisect_left(buckets, len(sentence))
            if b == len(buckets):
                discarded += 1
                continue
            row = np.full((buckets[b],), invalid_label, dtype=dtype)
            row[:len(sentence)] = sentence
            rows[b].append(row)
        if discarded:
            logging.warning("BucketSentenceIter: discarded %d sentences longer than the largest bucket (%d)",
                            discarded, buckets[-1] if buckets else 0)
        kept = [(length, np.asarray(r, dtype=dtype)) for length, r in zip(buckets, rows, strict=True) if r]
        if not kept:
            raise ValueError(f"BucketSentenceIter: no bucket of {buckets} holds any of the {len(sentences)} "
                             f"sentences")
        self.buckets = [length for length, _ in kept]
        self.data = [r for _, r in kept]
        self.batch_size, self.data_name, self.label_name = batch_size, data_name, label_name
        self.dtype, self.invalid_label, self.layout = dtype, invalid_label, layout
        self.major_axis = layout.find("N")
        if self.major_axis not in (0, 1) or sorted(layout) != ["N", "T"]:
            raise ValueError(f"BucketSentenceIter: layout must be 'NT' (batch major) or 'TN' (time major), "
                             f"got {layout!r}")
        self.default_bucket_key = max(self.buckets)
        self.provide_data = [self._desc(data_name, self.default_bucket_key)]
        self.provide_label = [self._desc(label_name, self.default_bucket_key)]
        self.idx = [(i, j) for i, rows_i in enumerate(self.data)
                    for j in range(0, len(rows_i) - batch_size + 1, batch_size)]
        self.curr_idx = 0
        self.nddata: list = []
        self.ndlabel: list = []
        self.reset()

    def _desc(self, name, length):
        shape = (self.batch_size, length) if self.major_axis == 0 else (length, self.batch_size)
        return DataDesc(name=name, shape=shape, layout=self.layout)

    def reset(self):
        """Reshuffle the batches and the sentences within each bucket."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for rows in self.data:
            np.random.shuffle(rows)
        self.nddata, self.ndlabel = [], []
        for rows in self.data:
            label = np.empty_like(rows)
            label[:, :-1] = rows[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(rows, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self):
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        length = self.buckets[i]
        return DataBatch([data], [label], pad=0, bucket_key=length,
                         provide_data=[self._desc(self.data_name, length)],
                         provide_label=[self._desc(self.label_name, length)])
