"""``gluon.contrib.data.text``: the WikiText language-modelling data sets, read from local files.

Each segment (``train``, ``validation``, ``test``) is MXNet's ``wiki.<segment>.tokens`` file under
``root``: its lines split at whitespace, each non-empty line ended by ``<eos>``, the tokens numbered by a
:class:`~mxasync.contrib.text.vocab.Vocabulary` (built from the file's counts with ``<eos>`` reserved,
unless one is given), then cut into samples of ``seq_len`` tokens whose label is the next token. As the
vision data sets here, nothing is downloaded: a missing file is an error naming where to put it.
"""

from __future__ import annotations

import os

import numpy as np

from .... import ndarray as nd
from ....base import data_dir
from ...data.dataset import Dataset
from ._vocab import Vocabulary, count_tokens_from_str

__all__ = ["WikiText2", "WikiText103"]

EOS_TOKEN = "<eos>"
_FILES = {"train": "wiki.train.tokens", "validation": "wiki.valid.tokens", "test": "wiki.test.tokens"}


class _WikiText(Dataset):
    def __init__(self, root: str, segment: str, vocab: Vocabulary | None, seq_len: int) -> None:
        if segment not in _FILES:
            raise ValueError(f"{type(self).__name__}: segment must be one of {sorted(_FILES)}, got {segment!r}")
        self._root = os.path.expanduser(root)
        self._segment, self._seq_len = segment, int(seq_len)
        self._vocab, self._counter = vocab, None
        path = os.path.join(self._root, _FILES[segment])
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"{type(self).__name__}: {path} is missing; mxasync does not download data sets. Put the "
                f"{self._archive} archive's {_FILES[segment]!r} in {self._root}")
        with open(path, encoding="utf8") as f:
            content = f.read()
        if self._counter is None:
            self._counter = count_tokens_from_str(content)
        if self._vocab is None:
            self._vocab = Vocabulary(counter=self._counter, reserved_tokens=[EOS_TOKEN])
        lines = [line.split() + [EOS_TOKEN] for line in content.splitlines() if line.strip()]
        ids = np.array(self._vocab.to_indices([t for line in lines for t in line]), dtype=np.int32)
        n = (len(ids) - 1) // self._seq_len * self._seq_len
        self._data = nd.array(ids[:-1][:n], dtype=np.int32).reshape((-1, self._seq_len))
        self._label = nd.array(ids[1:][:n], dtype=np.int32).reshape((-1, self._seq_len))

    @property
    def vocabulary(self) -> Vocabulary:
        """The token indices (given, or built from this segment's counts)."""
        return self._vocab

    @property
    def frequencies(self):
        """This segment's token counts (a ``collections.Counter``)."""
        return self._counter

    def __getitem__(self, idx):
        return self._data[idx], self._label[idx]

    def __len__(self) -> int:
        return len(self._label)


class WikiText2(_WikiText):
    """WikiText-2 (``wikitext-2-v1.zip``'s token files in ``root``)."""

    _archive = "wikitext-2-v1.zip"

    def __init__(self, root: str = os.path.join(data_dir(), "datasets", "wikitext-2"), segment: str = "train",
                 vocab: Vocabulary | None = None, seq_len: int = 35) -> None:
        super().__init__(root, segment, vocab, seq_len)


class WikiText103(_WikiText):
    """WikiText-103 (``wikitext-103-v1.zip``'s token files in ``root``)."""

    _archive = "wikitext-103-v1.zip"

    def __init__(self, root: str = os.path.join(data_dir(), "datasets", "wikitext-103"), segment: str = "train",
                 vocab: Vocabulary | None = None, seq_len: int = 35) -> None:
        super().__init__(root, segment, vocab, seq_len)
