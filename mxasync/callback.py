"""Training callbacks (``mx.callback``): MXNet 1.9's names, plus a live progress bar.

Batch-end callbacks receive a ``BatchEndParam`` (``epoch``, ``nbatch``,
``eval_metric``, ``locals``); epoch-end callbacks receive ``(epoch, symbol,
arg_params, aux_params)``.

>>> from collections import namedtuple
>>> from mxasync.callback import Speedometer
>>> Param = namedtuple("Param", "epoch nbatch eval_metric locals")
>>> speed = Speedometer(batch_size=32, frequent=2)
>>> for n in range(4):
...     speed(Param(0, n, None, None))
"""

from __future__ import annotations

import logging
import math
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["Speedometer", "ProgressBar", "do_checkpoint", "module_checkpoint", "log_train_metric",
           "LogValidationMetricsCallback"]


def do_checkpoint(prefix: str, period: int = 1) -> Callable:
    """An epoch-end callback that saves ``prefix-symbol.json`` and ``prefix-%04d.params`` every ``period`` epochs."""
    period = int(max(1, period))

    def _callback(iter_no: int, sym, arg: dict, aux: dict) -> None:
        if (iter_no + 1) % period == 0:
            from . import model  # model imports the training stack; only a fit that checkpoints needs it

            model.save_checkpoint(prefix, iter_no + 1, sym, arg, aux)

    return _callback


def module_checkpoint(mod, prefix: str, period: int = 1, save_optimizer_states: bool = False) -> Callable:
    """An epoch-end callback that calls ``mod.save_checkpoint`` every ``period`` epochs."""
    period = int(max(1, period))

    def _callback(iter_no: int, sym=None, arg=None, aux=None) -> None:
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)

    return _callback


def log_train_metric(period: int, auto_reset: bool = False) -> Callable:
    """A batch-end callback that logs the training metric every ``period`` batches."""

    def _callback(param) -> None:
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name, value)
            if auto_reset:
                param.eval_metric.reset_local()

    return _callback


class Speedometer:
    """Log samples/second (and the metric) every ``frequent`` batches, as MXNet's Speedometer does.

    With ``auto_reset`` the metric's local statistics are cleared after each
    report, so each line shows the last ``frequent`` batches only.
    """

    def __init__(self, batch_size: int, frequent: int = 50, auto_reset: bool = True) -> None:
        self.batch_size = batch_size
        self.frequent = frequent
        self.init = False
        self.tic = 0.0
        self.last_count = 0
        self.auto_reset = auto_reset

    def __call__(self, param) -> None:
        count = param.nbatch
        if self.last_count > count:  # a new epoch began: restart the clock
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        elapsed = time.time() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed > 0 else float("inf")
        if param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            first = count - self.frequent if self.auto_reset else 0
            if self.auto_reset:
                param.eval_metric.reset_local()
            msg = "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec" + "\t%s=%f" * len(name_value)
            logging.info(msg, param.epoch, first, count, speed, *sum(name_value, ()))
        else:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count, speed)
        self.tic = time.time()


class ProgressBar:
    """A live per-epoch progress bar with the running metric (tqdm; a plain text bar without it).

    ``ProgressBar(total)`` keeps MXNet's signature (``total`` batches per epoch,
    ``length`` characters of the text bar; tqdm sizes its own); ``file`` picks
    the stream (stderr by default). A bar
    finishes when the epoch's last batch arrives, or at :meth:`close`.

    Bars are labelled with MXNet's epoch index (``Epoch 0`` first, as its ``Speedometer``
    logs); given ``epochs`` (the run's number of epochs), with the count a reader expects
    (``Epoch 1/15`` first), as ``mxasync train`` shows it.  The rate tqdm shows counts from
    the first batch's end (the bar opens then), so it is never the first batch's alone.
    """

    def __init__(self, total: int | None = None, length: int = 80, file: TextIO | None = None,
                 show_metric: bool = True, use_tqdm: bool | None = None, epochs: int | None = None) -> None:
        self.total = total
        self.epochs = epochs
        self.bar_len = length
        self.file = file
        self.show_metric = show_metric
        self._tqdm = _load_tqdm() if use_tqdm is not False else None
        if use_tqdm and self._tqdm is None:
            raise ImportError("ProgressBar(use_tqdm=True) needs tqdm: pip install tqdm")
        self._bar: Any = None
        self._epoch: int | None = None
        self._last = -1
        self._line: tuple[int, str] = (0, "")

    def __call__(self, param) -> None:
        count = param.nbatch + 1  # batches done (nbatch counts from 0)
        if self._bar is not None and (param.epoch != self._epoch or param.nbatch <= self._last):
            self.close()
        self._last = param.nbatch
        if self._bar is None:
            self._epoch = param.epoch
            self._open(param.epoch, count)
        postfix = ""
        if self.show_metric and param.eval_metric is not None:
            postfix = " ".join(f"{n}={v:.4f}" for n, v in param.eval_metric.get_name_value())
        self._line = (count, postfix)
        if self._bar is not True:
            self._bar.n = count
            if postfix:
                self._bar.set_postfix_str(postfix, refresh=False)
            self._bar.refresh()
        elif _is_terminal(self._stream):
            self._stream.write("\r" + self._text(count, postfix))
            self._stream.flush()
        if self.total is not None and count >= self.total:
            self.close()

    @property
    def _stream(self) -> TextIO:
        return self.file or sys.stderr

    def _label(self) -> str:
        return f"Epoch {self._epoch + 1}/{self.epochs}" if self.epochs else f"Epoch {self._epoch}"

    def _open(self, epoch: int, count: int) -> None:
        # A terminal gets a live bar (tqdm's, sized to the terminal so the metric is not cut off, or the
        # text one); a log file or pipe gets one line per epoch, when it ends, instead of a wall of "\r".
        # tqdm's rate counts from here: ``initial`` leaves out the batches done before the bar opened
        # (their time is not the bar's), else the first rate is one batch over no time at all.
        if self._tqdm is not None and _is_terminal(self._stream):
            self._bar = self._tqdm(total=self.total, desc=self._label(), unit="batch", file=self.file,
                                   leave=True, disable=None, initial=count)
        else:
            self._bar = True

    def _text(self, count: int, postfix: str) -> str:
        if self.total:
            filled = int(round(self.bar_len * count / float(self.total)))
            percents = math.ceil(100.0 * count / float(self.total))
            line = f"{self._label()} [{'=' * filled}{'-' * (self.bar_len - filled)}] {percents}%"
        else:
            line = f"{self._label()} batch {count}"
        return f"{line} {postfix}".rstrip()

    def close(self) -> None:
        """Finish the current bar (called by itself at the end of an epoch of known length)."""
        if self._bar is None:
            return
        if self._bar is not True:
            self._bar.close()
        elif _is_terminal(self._stream):
            self._stream.write("\n")
        else:
            self._stream.write(self._text(*self._line) + "\n")
        self._stream.flush()
        self._bar = None


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _load_tqdm():
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


class LogValidationMetricsCallback:
    """An eval-end callback that logs each validation metric (MXNet's name and format)."""

    def __call__(self, param) -> None:
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
