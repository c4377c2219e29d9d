"""``mx.contrib.text.utils``: counting tokens of a string."""

from ...gluon.contrib.data._vocab import count_tokens_from_str

__all__ = ["count_tokens_from_str"]
