"""``mxasync.atomic``: every file is whole or absent, even under ``kill -9``; stale temporaries go."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mxasync as mx
from mxasync import atomic

# A child that trains a tiny Module, saves a full checkpoint (epoch 1), then saves epoch 1 again
# with a hook that blocks mid-save (where HOOK says) and tells the parent, which kills it with SIGKILL.
_CHILD = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    import mxasync as mx
    from mxasync.optimizer import optimizer as opt_mod

    prefix, hook = sys.argv[1], sys.argv[2]
    data = mx.sym.Variable("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=2, name="fc"), name="softmax")
    it = mx.io.NDArrayIter(np.ones((8, 3), np.float32), np.zeros(8, np.float32), batch_size=4)
    mod = mx.mod.Module(net)
    mod.fit(it, num_epoch=1, optimizer="adam")
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)

    def block(*a, **k):
        print("blocked", flush=True)
        time.sleep(600)

    if hook == "states":          # while the optimizer states are being produced
        opt_mod.Updater.get_states = block
    else:                          # inside the writer, after the bytes went to the temporary
        os.fsync = block
    for name in ("fc_weight",):
        mod._exec_group.execs[0].arg_dict[name][:] = 7.0
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    print("not killed", flush=True)
""")


def _run_and_kill(prefix: str, hook: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, prefix, hook], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "blocked", line
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL


def _check_epoch1_whole(prefix: str) -> None:
    sym, args, _ = mx.model.load_checkpoint(prefix, 1)
    assert sym.list_arguments() == ["data", "fc_weight", "fc_bias", "softmax_label"]
    assert args["fc_weight"].shape == (2, 3)
    with open(f"{prefix}-0001.states", "rb") as f:
        states = f.read()
    assert len(states) > 0
    mod = mx.mod.Module.load(prefix, 1, load_optimizer_states=True)
    mod.bind([("data", (4, 3))], [("softmax_label", (4,))])
    mod.init_optimizer(optimizer="adam")  # reads the states file: it must parse


@pytest.mark.parametrize("hook", ["states", "fsync"])
def test_kill9_mid_checkpoint_leaves_old_files_whole(tmp_path, hook):
    prefix = str(tmp_path / "net")
    _run_and_kill(prefix, hook)
    _check_epoch1_whole(prefix)
    np.testing.assert_array_less(mx.model.load_params(prefix, 1)[0]["fc_weight"].asnumpy(), 7.0)


def test_next_save_removes_temporaries_of_killed_saves(tmp_path):
    prefix = str(tmp_path / "net")
    _run_and_kill(prefix, "fsync")
    leftovers = sorted(n for n in os.listdir(tmp_path) if ".tmp-" in n)
    assert leftovers and all(n.startswith(".net-") for n in leftovers)  # named after their target
    # A live writer's temporary (ours) and another target's stay.
    mine = tmp_path / f"{atomic.temporary_prefix('net-symbol.json')}{atomic._host()}-{os.getpid()}-abcd"
    mine.write_bytes(b"in flight")
    other = tmp_path / (leftovers[0].replace(".net-", ".other-", 1))
    other.write_bytes(b"x")
    sym, args, aux = mx.model.load_checkpoint(prefix, 1)
    mx.model.save_checkpoint(prefix, 1, sym, args, aux)
    with open(f"{prefix}-0001.states", "rb") as f:
        atomic.write_file(f"{prefix}-0001.states", f.read())
    left = sorted(n for n in os.listdir(tmp_path) if ".tmp-" in n)
    assert left == sorted([mine.name, other.name])


def test_stale_temporary_of_dead_process_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    stale = tmp_path / f".w.params.tmp-{atomic._host()}-{pid}-00ff"
    stale.write_bytes(b"\0" * 100)
    mx.nd.save(str(tmp_path / "w.params"), [mx.nd.ones((2,))])
    assert sorted(os.listdir(tmp_path)) == ["w.params"]


def test_failed_save_names_the_target(tmp_path, monkeypatch):
    target = tmp_path / "missing" / "w.params"
    with pytest.raises(mx.MXNetError, match=str(target)) as info:
        mx.nd.save(str(target), [mx.nd.ones((2,))])
    assert isinstance(info.value, OSError) and info.value.errno == errno.ENOENT
    assert ".tmp-" not in str(info.value)

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    target = tmp_path / "w.params"
    with pytest.raises(OSError, match="cannot write .*w.params: No space left") as info:
        mx.nd.save(str(target), [mx.nd.ones((2,))])
    assert info.value.filename == str(target) and info.value.errno == errno.ENOSPC
    assert os.listdir(tmp_path) == ["missing"] or sorted(os.listdir(tmp_path)) == []


_UMASK_CHILD = textwrap.dedent("""
    import os, sys
    os.umask(0o077)
    import mxasync as mx
    prefix = sys.argv[1]
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    mx.model.save_checkpoint(prefix, 0, sym, {"fc_weight": mx.nd.ones((2, 3))}, {})
    sym.save(prefix + "-sym2.json")
    mx.profiler.set_config(filename=prefix + "-trace.json")
    mx.profiler.dump()
""")


def test_files_respect_the_umask(tmp_path):
    prefix = str(tmp_path / "net")
    subprocess.run([sys.executable, "-c", _UMASK_CHILD, prefix], check=True)
    modes = {n: (tmp_path / n).stat().st_mode & 0o777 for n in os.listdir(tmp_path)}
    assert modes == {"net-symbol.json": 0o600, "net-0000.params": 0o600, "net-sym2.json": 0o600,
                     "net-trace.json": 0o600}


def test_existing_mode_kept_and_special_files_written_in_place(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("old")
    os.chmod(path, 0o640)
    atomic.write_file(path, "new")
    assert path.read_text() == "new" and path.stat().st_mode & 0o777 == 0o640
    atomic.write_file(os.devnull, b"nothing")  # a device is never replaced by a regular file
    assert not os.path.isfile(os.devnull)


def test_error_in_block_keeps_old_file(tmp_path):
    path = tmp_path / "a.txt"
    atomic.write_file(path, "old")
    with pytest.raises(ZeroDivisionError), atomic.atomic_open(path, "w") as f:
        f.write("half")
        1 / 0  # noqa: B018
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["a.txt"]


def test_forked_child_does_not_publish(tmp_path):
    path = tmp_path / "a.bin"
    f = atomic.AtomicFile(path)
    f.write(b"parent")
    pid = os.fork()
    if pid == 0:  # the child's copy neither renames nor deletes
        f.commit()
        os._exit(0)
    os.waitpid(pid, 0)
    assert not path.exists()
    f.commit()
    assert path.read_bytes() == b"parent"


def test_test_utils_download_goes_through_the_writer(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"payload")
    out = tmp_path / "out"
    got = mx.test_utils.download(src.as_uri(), fname="data.bin", dirname=str(out))
    assert open(got, "rb").read() == b"payload" and os.listdir(out) == ["data.bin"]
    assert (out / "data.bin").stat().st_mode & 0o777 == 0o666 & ~atomic._umask()
