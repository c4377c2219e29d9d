"""Issue 34, item 5: a DataLoader worker process that hangs (here: stops itself with SIGSTOP) is killed
and replaced once its batch misses ``timeout``; the batch goes to the new worker and the epoch goes on
(main kept the stopped worker, so this epoch and every later one timed out)."""

from __future__ import annotations

import os
import signal
import tempfile

import numpy as np
import pytest

from mxasync.gluon.data import DataLoader, Dataset

pytestmark = pytest.mark.fault


class StopsOnce(Dataset):
    """Module level so worker processes can unpickle it: the first reader of sample ``stop_at`` stops
    itself (SIGSTOP); later readers find the marker file and go on."""

    def __init__(self, marker: str, n: int = 8, stop_at: int = 4):
        self.marker, self.n, self.stop_at = marker, n, stop_at

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.stop_at and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os.kill(os.getpid(), signal.SIGSTOP)
        return np.full((2,), i, np.float32)


@pytest.fixture(autouse=True)
def _session_tmp(monkeypatch):
    # the forkserver's socket lives in multiprocessing's temp dir: keep it out of a per-test TMPDIR
    if os.path.isdir("/tmp"):
        monkeypatch.setattr(tempfile, "tempdir", "/tmp")


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] == "Z"
    except OSError:
        return True


def test_a_stopped_worker_is_replaced_and_the_epoch_goes_on(tmp_path):
    marker = tmp_path / "stopped"
    marker.touch()  # a first epoch without the stop: the workers are up (starting them takes seconds here)
    loader = DataLoader(StopsOnce(str(marker)), batch_size=2, num_workers=2, thread_pool=False, prefetch=2,
                        timeout=30)
    workers = loader._workers_holder[0]
    first = workers.pids()
    try:
        want = [[2 * k, 2 * k + 1] for k in range(4)]
        assert [b.asnumpy()[:, 0].tolist() for b in loader] == want
        marker.unlink()
        loader._timeout = 3  # long enough for a new worker to start on a busy machine
        with pytest.warns(RuntimeWarning, match=r"DataLoader worker \d \(pid \d+\) did not deliver a batch within "
                                                 r"timeout=3 s \(hung or stopped\) and was killed; it was restarted"):
            got = [b.asnumpy()[:, 0].tolist() for b in loader]
        assert got == want  # every batch, in order
        assert len(set(workers.pids()) - set(first)) == 1
        assert sum(_gone(p) for p in first) == 1  # the stopped one was killed (and reaped)
        again = [b.asnumpy()[:, 0].tolist() for b in loader]  # the next epoch needs no timeout
        assert again == got
    finally:
        loader.close()
