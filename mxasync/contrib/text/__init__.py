"""``mx.contrib.text``: token counting (``utils``), vocabularies (``vocab``) and token embeddings
(``embedding``) loaded from local files."""

from . import embedding, utils, vocab

__all__ = ["embedding", "utils", "vocab"]
