"""``mx.contrib.text.embedding``: token embeddings read from text files (``token v1 v2 ...`` a line).

``CustomEmbedding`` reads any such file; ``GloVe`` and ``FastText`` read their pre-trained files from
``embedding_root/glove`` / ``embedding_root/fasttext`` (``$MXNET_HOME/embeddings``, where MXNet keeps
them), and download them from MXNet's mirror only when missing. ``CompositeEmbedding`` concatenates
embeddings over a vocabulary. Index 0 is the unknown token: its vector is the file's when the file has
one, else ``init_unknown_vec(shape=vec_len)``.

>>> import collections, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "vec.txt")
>>> _ = open(path, "w").write("hello 1 2\\nworld 3 4\\n")
>>> emb = CustomEmbedding(path)
>>> emb.idx_to_token, emb.get_vecs_by_tokens(["world", "nope"]).asnumpy().tolist()
(['<unk>', 'hello', 'world'], [[3.0, 4.0], [0.0, 0.0]])
"""

from __future__ import annotations

import logging
import os
import tarfile
import warnings
import zipfile
from typing import Any

import numpy as np

from ... import ndarray as nd
from ... import numpy as _mx_np
from ... import numpy_extension as _mx_npx
from ... import registry
from ...base import data_dir
from ...gluon.contrib.data._vocab import UNKNOWN_IDX, Vocabulary
from ...gluon.utils import _get_repo_url, download
from ...util import is_np_array

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText", "CustomEmbedding",
           "CompositeEmbedding"]

_DEFAULT_ROOT = os.path.join(data_dir(), "embeddings")


class _TokenEmbedding(Vocabulary):
    """A vocabulary whose tokens each have a vector (``idx_to_vec``, one row a token)."""

    #: the pre-trained files a named embedding knows (``get_pretrained_file_names``)
    pretrained_file_names: tuple[str, ...] = ()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._vec_len: int | None = None
        self._idx_to_vec = None

    # -- files ---------------------------------------------------------------------------------
    @classmethod
    def _get_download_file_name(cls, pretrained_file_name: str) -> str:
        return pretrained_file_name

    @classmethod
    def _get_pretrained_file(cls, embedding_root: str, pretrained_file_name: str) -> str:
        folder = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        path = os.path.join(folder, pretrained_file_name)
        if os.path.isfile(path):
            return path
        archive = cls._get_download_file_name(pretrained_file_name)
        url = f"{_get_repo_url()}gluon/embeddings/{cls.__name__.lower()}/{archive}"
        try:
            got = download(url, os.path.join(folder, archive))
        except Exception as err:  # noqa: BLE001 - offline: say which file is missing and where it goes
            raise FileNotFoundError(f"{cls.__name__}: {path} is missing and the download from {url} failed "
                                    f"({type(err).__name__}: {err}); put the file there") from err
        if got.endswith(".zip"):
            with zipfile.ZipFile(got) as zf:
                zf.extractall(folder)
        elif got.endswith(".gz"):
            with tarfile.open(got, "r:gz") as tar:
                tar.extractall(path=folder, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        return path

    def _load_embedding(self, path: str, elem_delim: str, init_unknown_vec, encoding: str = "utf8") -> None:
        path = os.path.expanduser(path)
        if not os.path.isfile(path):
            raise ValueError(f"{type(self).__name__}: pretrained_file_path {path!r} is not a file")
        logging.info("Loading pre-trained token embedding vectors from %s", path)
        rows: list[list[float]] = []
        seen = set()
        unknown_vec = None
        vec_len = None
        with open(path, encoding=encoding) as f:
            for line_num, line in enumerate(f, 1):
                elems = line.rstrip().split(elem_delim)
                if len(elems) < 2:
                    raise ValueError(f"{type(self).__name__}: line {line_num} of {path} is not "
                                     "'token value value ...'")
                token, values = elems[0], [float(v) for v in elems[1:]]
                if token == self.unknown_token and unknown_vec is None:
                    unknown_vec = values
                    seen.add(token)
                elif token in seen:
                    warnings.warn(f"line {line_num} of {path}: a second vector for token {token!r} is skipped",
                                  stacklevel=3)
                elif len(values) == 1:
                    warnings.warn(f"line {line_num} of {path}: token {token!r} with a 1-value vector is likely "
                                  "a header and is skipped", stacklevel=3)
                else:
                    if vec_len is None:
                        vec_len = len(values)
                    elif len(values) != vec_len:
                        raise ValueError(f"{type(self).__name__}: line {line_num} of {path}: token {token!r} "
                                         f"has {len(values)} values, the tokens before it {vec_len}")
                    rows.append(values)
                    self._token_to_idx[token] = len(self._idx_to_token)
                    self._idx_to_token.append(token)
                    seen.add(token)
        if vec_len is None:
            vec_len = len(unknown_vec) if unknown_vec is not None else 0
        table = np.zeros((len(self._idx_to_token), vec_len), dtype=np.float32)
        if rows:
            table[len(self._idx_to_token) - len(rows):] = np.asarray(rows, dtype=np.float32)
        if unknown_vec is not None:
            table[UNKNOWN_IDX] = unknown_vec
        else:
            init = init_unknown_vec(shape=vec_len)
            table[UNKNOWN_IDX] = init.asnumpy() if hasattr(init, "asnumpy") else np.asarray(init)
        self._vec_len = vec_len
        self._idx_to_vec = _array(table)

    def _index_tokens_from_vocabulary(self, vocabulary: Vocabulary) -> None:
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = None if vocabulary.reserved_tokens is None else list(vocabulary.reserved_tokens)

    def _set_idx_to_vec_by_embeddings(self, token_embeddings: list, vocab_len: int, vocab_idx_to_token: list) -> None:
        parts = []
        for embed in token_embeddings:
            block = np.empty((vocab_len, embed.vec_len), dtype=np.float32)
            block[0] = embed.idx_to_vec[0].asnumpy()
            if vocab_len > 1:
                block[1:] = embed.get_vecs_by_tokens(list(vocab_idx_to_token[1:])).asnumpy()
            parts.append(block)
        table = np.concatenate(parts, axis=1) if parts else np.zeros((vocab_len, 0), np.float32)
        self._vec_len = table.shape[1]
        self._idx_to_vec = _array(table)

    def _build_embedding_for_vocabulary(self, vocabulary: Vocabulary | None) -> None:
        if vocabulary is not None:
            if not isinstance(vocabulary, Vocabulary):
                raise TypeError(f"{type(self).__name__}: vocabulary must be a Vocabulary, "
                                f"got {type(vocabulary).__name__}")
            self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
            self._index_tokens_from_vocabulary(vocabulary)

    # -- vectors -------------------------------------------------------------------------------
    @property
    def vec_len(self) -> int | None:
        """The length of each token's vector."""
        return self._vec_len

    @property
    def idx_to_vec(self):
        """The vectors (an NDArray, ``mx.np`` in NumPy mode), one row a token index."""
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens: Any, lower_case_backup: bool = False):
        """The vector of a token (1-D) or of a list of tokens (2-D); unknown tokens get index 0's (with
        ``lower_case_backup``, a token not found is looked up in lower case first)."""
        single = not isinstance(tokens, list)
        tokens = [tokens] if single else tokens
        if lower_case_backup:
            idx = [self._token_to_idx[t] if t in self._token_to_idx else self._token_to_idx.get(t.lower(), UNKNOWN_IDX)
                   for t in tokens]
        else:
            idx = [self._token_to_idx.get(t, UNKNOWN_IDX) for t in tokens]
        rows, dim = self._idx_to_vec.shape
        if is_np_array():
            vecs = _mx_npx.embedding(_mx_np.array(idx), self._idx_to_vec, rows, dim)
        else:
            vecs = nd.Embedding(nd.array(idx), self._idx_to_vec, input_dim=rows, output_dim=dim)
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens: Any, new_vectors) -> None:
        """Set the vectors of known ``tokens`` (the unknown token only when named) to ``new_vectors``."""
        if self._idx_to_vec is None:
            raise ValueError(f"{type(self).__name__}: idx_to_vec is not set")
        if not isinstance(tokens, list):
            tokens = [tokens]
        if not isinstance(new_vectors, nd.NDArray) or new_vectors.ndim not in (1, 2):
            raise ValueError("update_token_vectors: new_vectors must be a 1-D or 2-D NDArray")
        if new_vectors.ndim == 1:
            if len(tokens) != 1:
                raise ValueError("update_token_vectors: new_vectors must be 2-D for several tokens")
            new_vectors = new_vectors.reshape((1, -1))
        if tuple(new_vectors.shape) != (len(tokens), self.vec_len):
            raise ValueError(f"update_token_vectors: new_vectors has shape {tuple(new_vectors.shape)}, "
                             f"{(len(tokens), self.vec_len)} expected ({len(tokens)} tokens, vec_len {self.vec_len})")
        indices = []
        for token in tokens:
            if token not in self._token_to_idx:
                raise ValueError(f"Token {token!r} is unknown. To update the vector of the unknown token, name "
                                 f"it explicitly as the unknown token {self._idx_to_token[UNKNOWN_IDX]!r}")
            indices.append(self._token_to_idx[token])
        table = self._idx_to_vec.asnumpy()
        table[indices] = new_vectors.asnumpy()
        self._idx_to_vec = _array(table)

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name: str) -> None:
        if cls.pretrained_file_names and pretrained_file_name not in cls.pretrained_file_names \
                and not cls._known_pattern(pretrained_file_name):
            raise KeyError(f"Cannot find pretrained file {pretrained_file_name} for token embedding "
                           f"{cls.__name__.lower()}. Valid pretrained files: {', '.join(cls.pretrained_file_names)}")

    @classmethod
    def _known_pattern(cls, name: str) -> bool:
        return False


def _array(table: np.ndarray):
    return _mx_np.array(table) if is_np_array() else nd.array(table)


_register = registry.get_register_func(_TokenEmbedding, "token embedding")
_create = registry.get_create_func(_TokenEmbedding, "token embedding")


def register(embedding_cls: type) -> type:
    """Register a token embedding class (a decorator) under its lower-cased name, for :func:`create`."""
    return _register(embedding_cls)


def create(embedding_name: str, **kwargs: Any) -> _TokenEmbedding:
    """An instance of the registered embedding ``embedding_name`` (case-insensitive), made with ``kwargs``."""
    return _create(embedding_name, **kwargs)


def get_pretrained_file_names(embedding_name: str | None = None):
    """The pre-trained file names of ``embedding_name``, or a dict of them for every registered embedding."""
    reg = registry.get_registry(_TokenEmbedding)
    if embedding_name is not None:
        if embedding_name not in reg:
            raise KeyError(f"Cannot find embedding_name {embedding_name}. Use "
                           "get_pretrained_file_names(embedding_name=None).keys() to get all the valid names.")
        return list(reg[embedding_name].pretrained_file_names)
    return {name: list(cls.pretrained_file_names) for name, cls in reg.items()}


@register
class GloVe(_TokenEmbedding):
    """The GloVe word vectors (https://nlp.stanford.edu/projects/glove/), read from ``embedding_root/glove``."""

    pretrained_file_names = ("glove.42B.300d.txt", "glove.6B.50d.txt", "glove.6B.100d.txt", "glove.6B.200d.txt",
                             "glove.6B.300d.txt", "glove.840B.300d.txt", "glove.twitter.27B.25d.txt",
                             "glove.twitter.27B.50d.txt", "glove.twitter.27B.100d.txt", "glove.twitter.27B.200d.txt")

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name: str) -> str:
        return ".".join(pretrained_file_name.split(".")[:2]) + ".zip"  # glove.6B.50d.txt is in glove.6B.zip

    def __init__(self, pretrained_file_name: str = "glove.840B.300d.txt", embedding_root: str = _DEFAULT_ROOT,
                 init_unknown_vec=nd.zeros, vocabulary: Vocabulary | None = None, **kwargs: Any) -> None:
        GloVe._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        self._load_embedding(GloVe._get_pretrained_file(embedding_root, pretrained_file_name), " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


@register
class FastText(_TokenEmbedding):
    """The fastText word vectors (https://fasttext.cc/), read from ``embedding_root/fasttext``: MXNet's
    ``wiki.<language>.vec`` files and the English crawl/news ones."""

    pretrained_file_names = ("wiki.simple.vec", "wiki.en.vec", "crawl-300d-2M.vec", "wiki-news-300d-1M.vec",
                             "wiki-news-300d-1M-subword.vec")

    @classmethod
    def _known_pattern(cls, name: str) -> bool:
        return name.startswith("wiki.") and name.endswith((".vec", ".npz"))

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name: str) -> str:
        return ".".join(pretrained_file_name.split(".")[:-1]) + ".zip"

    def __init__(self, pretrained_file_name: str = "wiki.simple.vec", embedding_root: str = _DEFAULT_ROOT,
                 init_unknown_vec=nd.zeros, vocabulary: Vocabulary | None = None, **kwargs: Any) -> None:
        FastText._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        self._load_embedding(FastText._get_pretrained_file(embedding_root, pretrained_file_name), " ",
                             init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


class CustomEmbedding(_TokenEmbedding):
    """Vectors read from a file of ``token<elem_delim>v1<elem_delim>v2...`` lines."""

    def __init__(self, pretrained_file_path: str, elem_delim: str = " ", encoding: str = "utf8",
                 init_unknown_vec=nd.zeros, vocabulary: Vocabulary | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of ``vocabulary``, each with the concatenated vectors of ``token_embeddings``."""

    def __init__(self, vocabulary: Vocabulary, token_embeddings) -> None:
        if not isinstance(vocabulary, Vocabulary):
            raise TypeError(f"CompositeEmbedding: vocabulary must be a Vocabulary, got {type(vocabulary).__name__}")
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        for embed in token_embeddings:
            if not isinstance(embed, _TokenEmbedding):
                raise TypeError(f"CompositeEmbedding: token_embeddings must be token embeddings, "
                                f"got {type(embed).__name__}")
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)
