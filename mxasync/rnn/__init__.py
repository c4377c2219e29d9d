"""``mx.rnn``: MXNet 1.x's symbolic recurrent cells, the bucketing sentence iterator and RNN checkpoints."""

from .checkpoint import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from .io import BucketSentenceIter, encode_sentences
from .rnn_cell import (
    BaseRNNCell,
    BidirectionalCell,
    DropoutCell,
    FusedRNNCell,
    GRUCell,
    LSTMCell,
    ModifierCell,
    ResidualCell,
    RNNCell,
    RNNParams,
    SequentialRNNCell,
    ZoneoutCell,
)

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell", "SequentialRNNCell",
           "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell", "BucketSentenceIter",
           "encode_sentences", "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]
