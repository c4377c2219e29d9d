"""``mx.rnn``: MXNet 1.x's symbolic recurrent cells, the bucketing sentence iterator and RNN checkpoints."""

from ..base import numeric_types, string_types  # noqa: F401 - MXNet's mx.rnn carries them
from .checkpoint import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from .fused import FusedRNNCell
from .io import BucketSentenceIter, encode_sentences
from .rnn_cell import BaseRNNCell, GRUCell, LSTMCell, RNNCell, RNNParams
from .stack import BidirectionalCell, DropoutCell, ModifierCell, ResidualCell, SequentialRNNCell, ZoneoutCell

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell", "SequentialRNNCell",
           "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell", "BucketSentenceIter",
           "encode_sentences", "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]
