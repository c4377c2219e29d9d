"""``mxasync train``: the command runs end to end, writes what it promises and learns."""

from __future__ import annotations

import json

import pytest

import mxasync as mx
from mxasync import cli
from mxasync.io.datasets import digits_split
from mxasync.module import Module
from mxasync.train.cli import parse_contexts
from mxasync.train.data import digits_data


def test_one_epoch_smoke(tmp_path, capsys):
    out = tmp_path / "run"
    rc = cli.main(["train", "--epochs", "1", "--out", str(out), "--profile", "--plot", str(out / "curves.png")])
    assert rc == 0
    captured = capsys.readouterr()
    assert "Epoch 1/1" in captured.err  # the live progress bar counts epochs as the printed lines do
    assert "epoch   1/1  train acc" in captured.out
    assert "final validation accuracy" in captured.out
    assert (out / "lenet-symbol.json").exists() and (out / "lenet-0001.params").exists()
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["epoch"] == 1
    assert set(rows[0]) >= {"train_accuracy", "train_cross_entropy", "val_accuracy", "val_cross_entropy", "seconds"}
    assert rows[0]["val_accuracy"] > 0.5
    trace = json.loads((out / "profile.json").read_text())
    names = {e["name"] for e in trace["traceEvents"] if e.get("ph") == "X"}
    # the executor runs each pass as bulk segments; the optimizer's updates are ops of their own
    assert any(n.endswith("sgd_mom_update") for n in names) and any(n.startswith("Bulk") for n in names), sorted(names)
    assert (out / "curves.png").exists() or "--plot skipped" in captured.out


def test_mlp_on_two_contexts_and_its_checkpoint_predicts(tmp_path, capsys):
    out = tmp_path / "mlp"
    assert cli.main(["train", "--network", "mlp", "--epochs", "2", "--ctx", "cpu:0,1", "--quiet",
                     "--out", str(out), "--batch-size", "32"]) == 0
    assert "ctx [cpu(0), cpu(1)]" in capsys.readouterr().out
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    mod = Module.load(str(out / "mlp"), 2)
    _, val, _ = digits_data(batch_size=50, max_shift=0)
    mod.bind(data_shapes=val.provide_data, for_training=False)
    probs = mod.predict(val).asnumpy()
    assert probs.shape == (359, 10)
    # the checkpoint holds the standardisation: raw [0, 1] pixels in, the logged accuracy out
    _, y = digits_split("val")
    assert abs(float((probs.argmax(1) == y).mean()) - rows[-1]["val_accuracy"]) < 1e-9


def test_bad_arguments():
    with pytest.raises(mx.MXNetError, match="expected cpu or gpu"):
        parse_contexts("tpu:0")
    with pytest.raises(SystemExit):
        cli.main(["train", "--network", "resnet"])


@pytest.mark.slow
def test_default_job_reaches_97_percent(tmp_path, capsys):
    assert cli.main(["train", "--quiet", "--out", str(tmp_path)]) == 0
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 15 and rows[-1]["val_accuracy"] >= 0.97


def test_plot_skips_cleanly_without_matplotlib(tmp_path, monkeypatch):
    from mxasync.train.report import plot_curves

    rows = [{"epoch": e, "train_accuracy": 0.5, "val_accuracy": 0.6, "train_cross_entropy": 1.0,
             "val_cross_entropy": 0.9} for e in (1, 2)]
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)  # import matplotlib -> ImportError
    assert plot_curves(rows, tmp_path / "c.png") is False
    assert not (tmp_path / "c.png").exists()


@pytest.mark.parametrize("args, message", [
    (["--epochs", "0"], "--epochs: must be at least 1, got 0"),
    (["--epochs", "two"], "--epochs: expected a whole number, got 'two'"),
    (["--ctx", "tpu:0"], "--ctx: expected cpu or gpu, got 'tpu'"),
    (["--out", "/proc/no-such-folder/run"], "--out: cannot create '/proc/no-such-folder/run'"),
])
def test_bad_arguments_end_with_one_usage_line(args, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["train", *args])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("usage: mxasync train") and message in err[-1] and "Traceback" not in "\n".join(err)


def test_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"mxasync {mx.__version__}"


def test_ctrl_c_ends_with_one_line(monkeypatch, capsys):
    import mxasync.train.cli as train_cli

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_cli, "main", interrupted)
    assert cli.main(["train"]) == 130
    assert capsys.readouterr().err.strip() == "mxasync train: interrupted"


@pytest.mark.parametrize("argv, message", [
    (["--lr", "nan"], "--lr: must be a finite number, got 'nan'"),
    (["--lr", "inf"], "--lr: must be a finite number"),
    (["--wd", "nan"], "--wd: must be a finite number"),
    (["--batch-size", "0"], "--batch-size: must be at least 1"),
    (["--batch-size", "100000000"], "--batch-size 100000000 is larger than the training set"),
])
def test_refuses_values_that_would_train_to_nan_or_blow_up(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        cli.main(["train", "--epochs", "1", "--quiet", "--out", str(tmp_path / "run"), *argv])
    assert info.value.code == 2
    assert message in capsys.readouterr().err
    assert not list((tmp_path / "run").glob("*.*"))  # no NaN checkpoint, no log


def test_plot_leaves_matplotlib_backend_alone(tmp_path):
    """The library draws on its own Agg canvas: the host program's matplotlib backend and pyplot stay as they were."""
    matplotlib = pytest.importorskip("matplotlib")
    import sys

    from mxasync.train.report import plot_curves

    rows = [{"epoch": e, "train_accuracy": 0.5, "val_accuracy": 0.6, "train_cross_entropy": 1.0,
             "val_cross_entropy": 0.9} for e in (1, 2)]
    backend, had_pyplot = matplotlib.get_backend(), "matplotlib.pyplot" in sys.modules
    assert plot_curves(rows, tmp_path / "c.png") is True
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert matplotlib.get_backend() == backend
    assert ("matplotlib.pyplot" in sys.modules) == had_pyplot
