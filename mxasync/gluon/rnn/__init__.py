"""``gluon.rnn``: recurrent cells (one step at a time, ``unroll`` over a sequence) and the fused layers."""

from .rnn_cell import (
    GRUCell,
    HybridRecurrentCell,
    HybridSequentialRNNCell,
    LSTMCell,
    RecurrentCell,
    RNNCell,
    SequentialRNNCell,
)
from .rnn_layer import GRU, LSTM, RNN
from .rnn_modifiers import BidirectionalCell, DropoutCell, ModifierCell, ResidualCell, ZoneoutCell

__all__ = ["RNN", "LSTM", "GRU", "RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell",
           "ResidualCell", "BidirectionalCell"]
