"""``gluon.rnn``: recurrent layers on the fused RNN op (RNN, LSTM, GRU)."""

from .rnn_layer import GRU, LSTM, RNN

__all__ = ["RNN", "LSTM", "GRU"]
