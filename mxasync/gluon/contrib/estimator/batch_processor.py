"""``BatchProcessor``: how the Estimator runs one batch (split across contexts, forward, loss, backward)."""

from __future__ import annotations

from .... import autograd
from ...utils import split_and_load

__all__ = ["BatchProcessor"]


class BatchProcessor:
    """Override ``fit_batch`` / ``evaluate_batch`` to customise a step; each returns
    ``(data, label, pred, loss)`` as lists with one entry per context."""

    def __init__(self) -> None:
        pass

    @staticmethod
    def _get_data_and_label(batch, ctx, batch_axis: int = 0):
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator, val_batch, batch_axis: int = 0):
        """Predict and compute the validation loss of one batch."""
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label, strict=True)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis: int = 0):
        """Forward, loss and backward of one training batch (the update is GradientUpdateHandler's)."""
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label, strict=True)]
        for value in loss:
            value.backward()
        return data, label, pred, loss
