"""Issue 25, item 5: a DataLoader worker process killed with kill -9 is detected and named (with its
signal), restarted, and its batches handed on; a batch that kills every worker it meets raises;
nothing hangs at exit and no process is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import pytest

from mxasync.gluon.data import DataLoader, Dataset
from mxasync.gluon.data._workers import WorkerDied

pytestmark = pytest.mark.fault


class Slow(Dataset):
    """Module level so worker processes can unpickle it; sample ``deadly`` kills its reader."""

    def __init__(self, n=16, deadly=-1):
        self.n, self.deadly = n, deadly

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.deadly:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.02)
        return np.full((2,), i, np.float32)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purpose
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


@pytest.fixture(autouse=True)
def _session_tmp(monkeypatch):
    # the forkserver's socket lives in multiprocessing's temp dir: keep it out of a per-test TMPDIR
    if os.path.isdir("/tmp"):
        monkeypatch.setattr(tempfile, "tempdir", "/tmp")


def test_a_killed_worker_is_named_restarted_and_its_batches_handed_on():
    loader = DataLoader(Slow(), batch_size=2, num_workers=2, thread_pool=False, prefetch=4, timeout=60)
    workers = loader._workers_holder[0]
    first = workers.pids()
    try:
        it = iter(loader)
        assert next(it).asnumpy()[:, 0].tolist() == [0, 1]
        os.kill(first[1], signal.SIGKILL)
        with pytest.warns(RuntimeWarning, match=r"DataLoader worker 1 \(pid \d+\) died from signal 9 \(SIGKILL\)"):
            rest = [b.asnumpy()[:, 0].tolist() for b in it]
        assert rest == [[2 * k, 2 * k + 1] for k in range(1, 8)]  # every batch, in order
        assert workers.pids()[0] == first[0] and workers.pids()[1] != first[1]
        again = [b.asnumpy()[:, 0].tolist() for b in loader]  # the next epoch runs on the new worker
        assert len(again) == 8
    finally:
        loader.close()
    for pid in first + workers.pids():
        assert not _alive(pid), f"worker pid {pid} left behind"


def test_a_batch_that_kills_its_workers_raises_naming_the_signal():
    loader = DataLoader(Slow(n=6, deadly=5), batch_size=2, num_workers=1, thread_pool=False, timeout=60)
    pids = loader._workers_holder[0].pids()
    try:
        with pytest.warns(RuntimeWarning, match="died from signal 9"):
            with pytest.raises(WorkerDied, match=r"DataLoader worker \d \(pid \d+\) died from signal 9 \(SIGKILL\) "
                                                 r"while reading samples \[4, 5\], twice"):
                list(loader)
    finally:
        loader.close()
    for pid in pids:
        assert not _alive(pid)


def test_the_interpreter_exits_after_a_worker_was_killed_and_leaves_nothing(tmp_path):
    script = tmp_path / "killed.py"
    script.write_text(textwrap.dedent(f"""
        import os, signal, sys, warnings
        sys.path.insert(0, {str(tmp_path)!r})
        from test_module import Slow
        from mxasync.gluon.data import DataLoader

        if __name__ == "__main__":
            warnings.simplefilter("ignore")
            loader = DataLoader(Slow(), batch_size=2, num_workers=2, thread_pool=False, timeout=60)
            it = iter(loader)
            next(it)
            pids = loader._workers_holder[0].pids()
            os.kill(pids[0], signal.SIGKILL)
            next(it)
            print("pids", *pids, *loader._workers_holder[0].pids(), flush=True)
            # no close(): the interpreter must still exit, promptly, taking every worker with it
    """))
    (tmp_path / "test_module.py").write_text(open(__file__).read())
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), os.getcwd()])))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pids = [int(p) for p in proc.stdout.split("pids", 1)[1].split()]
    for pid in pids:
        for _ in range(50):  # the exit handlers reap them; give a terminated child a moment to vanish
            if not _alive(pid):
                break
            time.sleep(0.1)
        assert not _alive(pid), f"worker pid {pid} outlived the interpreter"
