"""MXNet's text token counting and indexing (``mx.contrib.text.utils`` and ``mx.contrib.text.vocab``),
kept here, below ``mx.contrib``, because ``gluon.contrib.data.text``'s data sets build vocabularies.

>>> counter = count_tokens_from_str(" Life is great ! \\n life is good . \\n", to_lower=True)
>>> vocab = Vocabulary(counter, reserved_tokens=["<pad>"])
>>> vocab.idx_to_token[:4], vocab.to_indices(["life", "unseen"])
(['<unk>', '<pad>', 'is', 'life'], [3, 0])
"""

from __future__ import annotations

import collections
import re
from collections.abc import Hashable
from typing import Any

__all__ = ["count_tokens_from_str", "Vocabulary", "UNKNOWN_IDX"]

#: the index of the unknown token in every vocabulary
UNKNOWN_IDX = 0


def count_tokens_from_str(source_str: str, token_delim: str = " ", seq_delim: str = "\n", to_lower: bool = False,
                          counter_to_update: collections.Counter | None = None) -> collections.Counter:
    """Count the tokens of ``source_str`` split at ``token_delim`` and ``seq_delim`` (regular expressions),
    into ``counter_to_update`` (updated and returned) or a new ``Counter``."""
    tokens = [t for t in re.split(token_delim + "|" + seq_delim, source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update


class Vocabulary:
    """Indices of text tokens: the unknown token is 0, the reserved tokens follow, then the keys of
    ``counter`` from the most frequent (ties in the keys' order), those seen at least ``min_freq`` times
    and at most ``most_freq_count`` of them."""

    def __init__(self, counter: collections.Counter | None = None, most_freq_count: int | None = None,
                 min_freq: int = 1, unknown_token: Hashable = "<unk>", reserved_tokens: list | None = None) -> None:
        if min_freq <= 0:
            raise ValueError(f"Vocabulary: min_freq must be positive, got {min_freq}")
        if reserved_tokens is not None:
            if unknown_token in reserved_tokens:
                raise ValueError(f"Vocabulary: reserved_tokens {reserved_tokens} contain the unknown token "
                                 f"{unknown_token!r}")
            if len(set(reserved_tokens)) != len(reserved_tokens):
                raise ValueError(f"Vocabulary: reserved_tokens {reserved_tokens} has duplicates")
        self._unknown_token = unknown_token
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        self._idx_to_token: list = [unknown_token] + list(reserved_tokens or [])
        self._token_to_idx: dict = {token: i for i, token in enumerate(self._idx_to_token)}
        if counter is not None:
            self._index_counter_keys(counter, most_freq_count, min_freq)

    def _index_counter_keys(self, counter: collections.Counter, most_freq_count: int | None, min_freq: int) -> None:
        if not isinstance(counter, collections.Counter):
            raise TypeError(f"Vocabulary: counter must be a collections.Counter, got {type(counter).__name__}")
        special = set(self._idx_to_token)
        by_freq = sorted(sorted(counter.items(), key=lambda kv: kv[0]), key=lambda kv: kv[1], reverse=True)
        cap = len(special) + (len(counter) if most_freq_count is None else most_freq_count)
        for token, freq in by_freq:
            if freq < min_freq or len(self._idx_to_token) == cap:
                break
            if token not in special:
                self._token_to_idx[token] = len(self._idx_to_token)
                self._idx_to_token.append(token)

    def __len__(self) -> int:
        return len(self._idx_to_token)

    @property
    def token_to_idx(self) -> dict:
        """Each token's index."""
        return self._token_to_idx

    @property
    def idx_to_token(self) -> list:
        """The tokens, by index."""
        return self._idx_to_token

    @property
    def unknown_token(self) -> Hashable:
        return self._unknown_token

    @property
    def reserved_tokens(self) -> list | None:
        return self._reserved_tokens

    def to_indices(self, tokens: Any) -> Any:
        """The index of a token (unknown ones: 0), or the list of indices of a list of tokens."""
        if not isinstance(tokens, list):
            return self._token_to_idx.get(tokens, UNKNOWN_IDX)
        return [self._token_to_idx.get(t, UNKNOWN_IDX) for t in tokens]

    def to_tokens(self, indices: Any) -> Any:
        """The token of an index, or the list of tokens of a list of indices."""
        single = not isinstance(indices, list)
        out = []
        for idx in [indices] if single else indices:
            if not isinstance(idx, int) or idx >= len(self._idx_to_token):
                raise ValueError(f"Vocabulary.to_tokens: token index {idx} is invalid "
                                 f"(the vocabulary has {len(self._idx_to_token)} tokens)")
            out.append(self._idx_to_token[idx])
        return out[0] if single else out
