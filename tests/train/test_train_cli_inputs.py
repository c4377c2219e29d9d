"""Bad command-line inputs end in one usage line (never a traceback, never a silent run), and --resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mxasync import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("argv, message", [
    (["--ctx", "gpu:0"], "--ctx gpu: no backend available for device type 'gpu'"),
    (["--kvstore", "bogus"], "--kvstore: unknown KVStore type 'bogus'"),
    (["--lr", "-1"], "--lr: must be greater than 0, got -1"),
    (["--lr", "0"], "--lr: must be greater than 0"),
    (["--seed", "-1"], "--seed: must be 0 or more, got -1"),
    (["--seed", str(2**32)], "--seed: must be below 2**32"),
    (["--shift", "-3"], "--shift: must be 0 or more, got -3"),
    (["--wd", "-5"], "--wd: must be 0 or more, got -5"),
    (["--plot", "/no/such/folder/curves.png"], "--plot: cannot write '/no/such/folder/curves.png'"),
    (["--plot", "x.jpgx"], "--plot: cannot draw 'x.jpgx': the file name must end in one of .png, .pdf"),
    (["--shift", "100"], "--shift: must be at most 13 pixels (the digits are 28x28), got 100"),
    (["--lr", "1e9"], "--lr: must be at most 10 (training diverges at once), got 1e9"),
])
def test_train_refuses_bad_inputs_before_training(tmp_path, capsys, argv, message):
    if argv[:2] == ["--ctx", "gpu:0"]:
        from mxasync.runtime.context import num_gpus

        if num_gpus():
            pytest.skip("this machine has a GPU")
    with pytest.raises(SystemExit) as info:
        cli.main(["train", "--epochs", "1", "--quiet", "--out", str(tmp_path / "run"), *argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.rstrip("\n").splitlines()[-1].startswith("mxasync train: error: ")  # it ends in one usage line
    assert not list((tmp_path / "run").glob("*.*"))  # nothing trained, nothing written


def test_a_distributed_kvstore_without_mpi4py_is_a_usage_error(tmp_path, capsys, monkeypatch):
    from mxasync.train import cli as train_cli

    monkeypatch.setattr(train_cli, "_have_mpi4py", lambda: False)
    with pytest.raises(SystemExit) as info:
        cli.main(["train", "--epochs", "1", "--quiet", "--out", str(tmp_path / "run"), "--kvstore", "dist_sync"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    assert err.splitlines()[-1].startswith("mxasync train: error: --kvstore dist_sync: the distributed stores run on "
                                           "MPI, and mpi4py is not installed (pip install 'mxasync[dist]'")


def test_run_and_launch_on_a_missing_module_or_hostfile_say_so_in_one_line(tmp_path, capsys):
    assert cli.main(["run", "-m", "no_such_module_35"]) == 2
    assert capsys.readouterr().err == "mxasync run: no module named 'no_such_module_35'\n"
    assert cli.main(["run", "-m", "no_such_package_35.sub"]) == 2
    assert capsys.readouterr().err == "mxasync run: no module named 'no_such_package_35.sub'\n"
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    assert cli.main(["launch", "-n", "2", "-H", str(tmp_path / "hosts"), "--mpirun", sys.executable, str(script)]) == 2
    assert capsys.readouterr().err == f"mxasync launch: -H/--hostfile: no such file: {tmp_path / 'hosts'}\n"


def test_a_closed_pipe_ends_the_command_quietly():
    """mxasync --help | head -1: the reader is gone before the help is written; no BrokenPipeError traceback."""
    proc = subprocess.Popen([sys.executable, "-m", "mxasync", "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    proc.stdout.close()  # before the interpreter has even started: every write of the help meets a closed pipe
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 141 and err == "", err


def test_im2rec_and_launch_on_missing_paths(tmp_path, capsys):
    assert cli.main(["im2rec", "--list", str(tmp_path / "data"), str(tmp_path / "missing")]) == 1
    err = capsys.readouterr().err
    assert f"the image root '{tmp_path / 'missing'}' is not a folder" in err and "Traceback" not in err
    (tmp_path / "images").mkdir()
    with pytest.raises(SystemExit) as info:
        cli.main(["im2rec", "--resize", "-5", str(tmp_path / "data"), str(tmp_path / "images")])
    assert info.value.code == 2 and "--resize must be at least 0, got -5" in capsys.readouterr().err
    assert cli.main(["launch", "-n", "1", "--mpirun", sys.executable, str(tmp_path / "nope.py")]) == 2
    assert "no such script" in capsys.readouterr().err


def test_python_dash_m_mxasync():
    res = subprocess.run([sys.executable, "-m", "mxasync", "--help"], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0 and "usage: mxasync <command>" in res.stdout and "run" in res.stdout


def test_resume_continues_from_the_per_epoch_checkpoints(tmp_path, capsys):
    out = tmp_path / "run"
    base = ["train", "--network", "mlp", "--quiet", "--out", str(out), "--batch-size", "128"]
    assert cli.main([*base, "--epochs", "1"]) == 0
    assert (out / "mlp-0001.params").is_file() and (out / "mlp-0001.states").is_file()
    capsys.readouterr()
    assert cli.main([*base, "--epochs", "2", "--resume"]) == 0
    text = capsys.readouterr().out
    assert f"resuming from {out / 'mlp'}-0001.params: epochs 2 to 2" in text and "epoch   2/2" in text
    assert "epoch   1/2" not in text
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in rows] == [1, 2] and (out / "mlp-0002.params").is_file()
    assert cli.main([*base, "--epochs", "2", "--resume"]) == 0
    assert "nothing to do" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        cli.main(["train", "--quiet", "--out", str(tmp_path / "empty"), "--resume"])
    assert info.value.code == 2 and "--resume: no checkpoint of lenet" in capsys.readouterr().err


def test_a_resumed_run_sees_the_batches_of_an_uninterrupted_one(tmp_path, capsys):
    # an uninterrupted 2-epoch run, and the same run as it stood when stopped after epoch 1, then resumed
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    base = ["train", "--network", "mlp", "--quiet", "--batch-size", "256", "--epochs", "2", "--seed", "7"]
    assert cli.main([*base, "--out", str(whole)]) == 0
    cut.mkdir()
    for name in ("mlp-symbol.json", "mlp-0001.params", "mlp-0001.states"):
        (cut / name).write_bytes((whole / name).read_bytes())
    rows = (whole / "metrics.jsonl").read_text().splitlines()
    (cut / "metrics.jsonl").write_text(rows[0] + "\n")
    capsys.readouterr()
    assert cli.main([*base, "--out", str(cut), "--resume"]) == 0
    assert "epochs 2 to 2" in capsys.readouterr().out

    def metrics(folder):
        return [{k: v for k, v in json.loads(line).items() if k != "seconds"}
                for line in (folder / "metrics.jsonl").read_text().splitlines()]

    # the same batches give the same counts; a loss summed in floats may differ in its last bits
    # (the full CI run once saw val_cross_entropy 0.51617465 against 0.51617467)
    got, want = metrics(cut), metrics(whole)
    assert [{k: v for k, v in row.items() if "entropy" not in k} for row in got] == \
        [{k: v for k, v in row.items() if "entropy" not in k} for row in want]
    for g, w in zip(got, want, strict=True):
        for k in (k for k in w if "entropy" in k):
            assert g[k] == pytest.approx(w[k], rel=1e-6), k


def test_save_checkpoint_logs_where_it_saved(tmp_path, caplog):
    import logging

    import mxasync as mx

    x = mx.sym.Variable("x")
    with caplog.at_level(logging.INFO):
        mx.model.save_checkpoint(str(tmp_path / "m"), 3, x * 2, {"w": mx.nd.ones((1,))}, {})
    assert f'Saved checkpoint to "{tmp_path / "m"}-0003.params"' in caplog.text


def test_out_holds_one_run_its_config_and_its_last_checkpoints(tmp_path, capsys):
    out = tmp_path / "run"
    base = ["train", "--network", "mlp", "--quiet", "--out", str(out), "--batch-size", "256"]
    assert cli.main([*base, "--epochs", "3", "--keep", "2"]) == 0
    assert sorted(p.name for p in out.glob("mlp-*")) == ["mlp-0002.params", "mlp-0002.states", "mlp-0003.params",
                                                         "mlp-0003.states", "mlp-symbol.json"]
    config = json.loads((out / "config.json").read_text())
    assert config["lr"] == 0.05 and config["network"] == "mlp" and config["epochs"] == 3
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:  # a new run into the folder of another: refused
        cli.main([*base, "--epochs", "1"])
    err = capsys.readouterr().err.splitlines()[-1]
    assert info.value.code == 2 and err.startswith(f"mxasync train: error: --out '{out}' holds another run (")
    assert "continue it with --resume, replace it with --overwrite" in err
    with pytest.raises(SystemExit) as info:  # a resume that changes the recipe: refused without --force
        cli.main([*base, "--epochs", "4", "--resume", "--lr", "0.1"])
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.endswith(f"--resume: the run in '{out}' was trained with --lr 0.05; this one asks --lr 0.1 "
                        "(give the same, or add --force to continue with the new values)")
    assert cli.main([*base, "--epochs", "4", "--resume", "--lr", "0.1", "--force", "--keep", "2"]) == 0
    assert json.loads((out / "config.json").read_text())["lr"] == 0.1
    assert sorted(p.name for p in out.glob("mlp-*.params")) == ["mlp-0003.params", "mlp-0004.params"]
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in rows] == [1, 2, 3, 4]  # as the checkpoints and the printed lines count
    assert cli.main([*base, "--epochs", "1", "--overwrite", "--plot", "c.png"]) == 0  # afresh: the old run's files go
    assert (out / "c.png").is_file() or "--plot skipped" in capsys.readouterr().out  # a bare name: into OUT
    assert not (tmp_path / "c.png").exists() and not os.path.exists("c.png")
    assert sorted(p.name for p in out.glob("mlp-*.params")) == ["mlp-0001.params"]
    assert (out / "metrics.jsonl.1").is_file() and json.loads((out / "config.json").read_text())["lr"] == 0.05
