"""Callbacks: Speedometer's log lines, ProgressBar's output, checkpoint and metric-logging callbacks."""

from __future__ import annotations

import importlib
import io
import logging
import sys
import types
from collections import namedtuple

import pytest

import mxasync as mx
from mxasync import callback, metric

Param = namedtuple("Param", "epoch nbatch eval_metric locals")


def _acc():
    acc = metric.Accuracy()
    acc.update([mx.nd.array([0, 1])], [mx.nd.array([[0.9, 0.1], [0.8, 0.2]])])
    return acc


def test_speedometer_logs_speed_and_metric(caplog):
    caplog.set_level(logging.INFO)
    acc = _acc()
    speed = callback.Speedometer(batch_size=16, frequent=2)
    for n in range(5):
        speed(Param(3, n, acc, None))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and lines[0].startswith("Epoch[3] Batch [0-2]\tSpeed: ")
    assert "samples/sec\taccuracy=0.500000" in lines[0] and "accuracy=nan" in lines[1]  # auto_reset cleared it
    caplog.clear()
    keep = callback.Speedometer(batch_size=16, frequent=2, auto_reset=False)
    for n in range(3):
        keep(Param(0, n, acc, None))
    keep(Param(1, 0, None, None))  # a new epoch restarts the clock: nothing logged
    keep(Param(1, 2, None, None))
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("Epoch[0] Batch [0-2]") and lines[1].startswith("Iter[1] Batch [2]")


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("use_tqdm", [True, False])
def test_progress_bar_output(use_tqdm):
    pytest.importorskip("tqdm") if use_tqdm else None
    out = _Terminal()
    bar = callback.ProgressBar(total=4, length=20, file=out, use_tqdm=use_tqdm)
    acc = _acc()
    for epoch in range(2):
        for n in range(4):
            bar(Param(epoch, n, acc, None))
    text = out.getvalue()
    assert "Epoch 0" in text and "Epoch 1" in text and "accuracy=0.5000" in text
    assert ("4/4" in text) if use_tqdm else ("100%" in text and "=" * 20 in text)
    assert bar._bar is None  # closed at each epoch's last batch


def test_progress_bar_unknown_total_and_close():
    out = io.StringIO()
    bar = callback.ProgressBar(file=out, use_tqdm=False, show_metric=False)
    bar(Param(0, 0, None, None))
    bar(Param(0, 1, None, None))
    bar.close()
    assert "Epoch 0 batch 2" in out.getvalue() and out.getvalue().endswith("\n")


@pytest.mark.parametrize("use_tqdm", [None, False])
def test_progress_bar_in_a_log_file_writes_one_line_per_epoch(use_tqdm):
    out = io.StringIO()  # not a terminal: no "\r" redraws, whatever bar would draw on a terminal
    bar = callback.ProgressBar(total=50, length=10, file=out, use_tqdm=use_tqdm)
    acc = _acc()
    for epoch in range(3):
        for n in range(50):
            bar(Param(epoch, n, acc, None))
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and len(lines) == 3
    assert lines[2] == "Epoch 2 [==========] 100% accuracy=0.5000"


def test_do_checkpoint_calls_model_save_checkpoint(monkeypatch):
    try:
        model = importlib.import_module("mxasync.model")
    except ImportError:  # the Module stack may not be there yet; stand in for it
        model = types.ModuleType("mxasync.model")
        monkeypatch.setitem(sys.modules, "mxasync.model", model)
        monkeypatch.setattr(mx, "model", model, raising=False)
    calls = []
    monkeypatch.setattr(model, "save_checkpoint", lambda *a: calls.append(a), raising=False)
    cb = callback.do_checkpoint("run/net", period=2)
    for epoch in range(4):
        cb(epoch, "sym", {"w": 1}, {"a": 2})
    assert calls == [("run/net", 2, "sym", {"w": 1}, {"a": 2}), ("run/net", 4, "sym", {"w": 1}, {"a": 2})]


def test_module_checkpoint_and_metric_logging(caplog):
    caplog.set_level(logging.INFO)
    saved = []
    mod = types.SimpleNamespace(save_checkpoint=lambda *a: saved.append(a))
    cb = callback.module_checkpoint(mod, "p", period=1, save_optimizer_states=True)
    cb(0)
    assert saved == [("p", 1, True)]
    acc = _acc()
    callback.log_train_metric(2, auto_reset=True)(Param(1, 4, acc, None))
    callback.LogValidationMetricsCallback()(Param(1, 0, _acc(), None))
    msgs = [r.getMessage() for r in caplog.records]
    assert msgs == ["Iter[1] Batch[4] Train-accuracy=0.500000", "Epoch[1] Validation-accuracy=0.500000"]
    assert acc.num_inst == 0


def test_progress_bar_counts_epochs_for_readers_and_rates_from_the_first_batch_end():
    import io

    pytest.importorskip("tqdm")

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    bar = mx.callback.ProgressBar(total=4, file=stream, use_tqdm=True, epochs=15)
    bar(mx.model.BatchEndParam(epoch=0, nbatch=0, eval_metric=None, locals=None))
    assert bar._bar.format_dict["initial"] == 1  # tqdm's rate leaves out the batch done before it opened
    bar.close()
    assert "Epoch 1/15" in stream.getvalue()
    plain = io.StringIO()
    text = mx.callback.ProgressBar(total=2, file=plain, use_tqdm=False)
    for k in range(2):
        text(mx.model.BatchEndParam(epoch=0, nbatch=k, eval_metric=None, locals=None))
    assert plain.getvalue().startswith("Epoch 0 [")  # MXNet's epoch index without epochs=
