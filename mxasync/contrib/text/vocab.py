"""``mx.contrib.text.vocab``: indices of text tokens."""

from ...gluon.contrib.data._vocab import Vocabulary

__all__ = ["Vocabulary"]
