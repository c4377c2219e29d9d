"""``mxasync launch``: run a training script on N worker ranks (and S server ranks) through mpirun.

MXNet's ``tools/launch.py`` role::

    mxasync launch -n 2 train.py --epochs 3                 # two workers on this machine
    mxasync launch -n 4 --num-servers 2 train_async.py      # dist_async: 4 workers, 2 servers
    mxasync launch -n 16 --hostfile hosts train.py          # a cluster (Open MPI hostfile)
    mxasync launch -n 16 --hostfile hosts --interface eth1 train.py   # MPI traffic on eth1 only

Workers run ``python script.py args``; servers run ``python -m
mxasync.kvstore.dist.server``; both share one MPI world (an MPMD job).  The
exit status is mpirun's: non-zero when any rank failed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys

from ..kvstore.dist.mpi import SERVER_MODULE

__all__ = ["build_command", "main"]

# variables every rank needs, on every host (mpirun forwards all of them only on the local one)
_EXPORT_PREFIXES = ("MXASYNC_", "MXNET_", "OMP_", "OPENBLAS_", "MKL_", "CUDA_")
_EXPORT_NAMES = ("PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "VIRTUAL_ENV")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mxasync launch", description="Run a script on MPI ranks (mpirun).")
    p.add_argument("-n", "--num-workers", type=int, required=True, help="number of worker ranks")
    p.add_argument("-s", "--num-servers", type=int, default=0, help="server ranks for dist_async (default 0)")
    p.add_argument("-H", "--hostfile", help="hostfile for mpirun (one host per line, 'host slots=N')")
    p.add_argument("--timeout", type=float, default=None, help="kill the job after this many seconds")
    p.add_argument("--mpirun", default=os.environ.get("MXASYNC_MPIRUN", "mpirun"), help="the mpirun to use")
    p.add_argument("--interface", metavar="IFACE",
                   help="carry MPI's TCP traffic (data and control) on this network interface or subnet only, "
                        "e.g. eth1 or 10.0.0.0/24 (Open MPI's btl_tcp_if_include and oob_tcp_if_include; "
                        "MPICH's -iface)")
    p.add_argument("--mpi-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for mpirun (repeatable), e.g. --mpi-arg=--mca=btl=self,vader")
    p.add_argument("-x", "--env", action="append", default=[], metavar="VAR",
                   help="also export this environment variable to every rank (repeatable)")
    p.add_argument("--python", default=sys.executable, help="the Python every rank runs")
    p.add_argument("--dry-run", action="store_true", help="print the mpirun command and exit")
    p.add_argument("script", help="the training script")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    return p


def _is_open_mpi(mpirun: str) -> bool:
    try:
        out = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return True
    return "open mpi" in out.lower() or "open-mpi" in out.lower() or "openrte" in out.lower()


def build_command(opts: argparse.Namespace, open_mpi: bool = True, env: dict | None = None) -> list[str]:
    """The mpirun command line for parsed ``opts``.

    >>> opts = _parser().parse_args(["-n", "2", "--num-servers", "1", "train.py", "--lr", "0.1"])
    >>> cmd = build_command(opts, env={"PATH": "/bin"})
    >>> " ".join(cmd[cmd.index("-n"):]).replace(opts.python, "python")
    '-n 2 python train.py --lr 0.1 : -n 1 python -m mxasync.kvstore.dist.server'
    >>> cmd = build_command(_parser().parse_args(["-n", "2", "--interface", "eth1", "t.py"]), env={})
    >>> " ".join(cmd[cmd.index("--mca"):cmd.index("-n")])
    '--mca btl_tcp_if_include eth1 --mca oob_tcp_if_include eth1'
    """
    env = os.environ if env is None else env
    total = opts.num_workers + opts.num_servers
    cmd = [opts.mpirun]
    if open_mpi:
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        if opts.hostfile is None and total > (os.cpu_count() or 1):
            cmd.append("--oversubscribe")  # more ranks than cores on this machine
        # MPI's default pins a rank to one core; the engine's worker threads need them all
        cmd += ["--bind-to", "none"]
    if opts.hostfile:
        cmd += ["--hostfile", opts.hostfile]
    if opts.interface:
        if open_mpi:  # the data path (TCP BTL) and the runtime's own control channel (OOB)
            cmd += ["--mca", "btl_tcp_if_include", opts.interface, "--mca", "oob_tcp_if_include", opts.interface]
        else:
            cmd += ["-iface", opts.interface]
    if open_mpi:
        names = [k for k in env if k in _EXPORT_NAMES or k.startswith(_EXPORT_PREFIXES)] + list(opts.env)
        for name in dict.fromkeys(names):
            cmd += ["-x", name]
    else:
        cmd.append("-genvall")  # MPICH's hydra: pass the whole environment
    cmd += list(opts.mpi_arg)
    cmd += ["-n", str(opts.num_workers), opts.python, opts.script, *opts.args]
    if opts.num_servers:
        cmd += [":", "-n", str(opts.num_servers), opts.python, "-m", SERVER_MODULE]
    return cmd


_PYTHON_NAME = re.compile(r"python[0-9.]*$")


def _python_first(opts: argparse.Namespace) -> argparse.Namespace:
    """``launch -n 2 python train.py ...`` (MXNet's launch.py takes a command): that Python runs the script.

    >>> o = _python_first(_parser().parse_args(["-n", "2", "python3", "t.py", "--lr", "1"]))
    >>> o.python, o.script, o.args
    ('python3', 't.py', ['--lr', '1'])
    """
    if _PYTHON_NAME.match(os.path.basename(opts.script)) and opts.args:
        opts.python, opts.script, opts.args = opts.script, opts.args[0], opts.args[1:]
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = _python_first(_parser().parse_args(argv))
    if opts.num_workers < 1 or opts.num_servers < 0:
        print("mxasync launch: -n must be >= 1 and --num-servers >= 0", file=sys.stderr)
        return 2
    if opts.hostfile is not None and not os.path.isfile(opts.hostfile):
        print(f"mxasync launch: -H/--hostfile: no such file: {opts.hostfile}", file=sys.stderr)
        return 2
    mpirun = shutil.which(opts.mpirun)
    if mpirun is None:
        print(f"mxasync launch: {opts.mpirun!r} not found; install an MPI runtime "
              "(apt-get install openmpi-bin) and mpi4py (pip install 'mxasync[dist]')", file=sys.stderr)
        return 127
    if not os.path.isfile(opts.script):
        print(f"mxasync launch: no such script: {opts.script}", file=sys.stderr)
        return 2
    cmd = build_command(opts, _is_open_mpi(mpirun))
    if opts.dry_run:
        print(" ".join(cmd))
        return 0
    return run(cmd, opts.timeout)


def run(cmd: list[str], timeout: float | None = None) -> int:
    """Run mpirun in its own process group; on timeout or Ctrl-C stop it and every rank it started."""
    proc = subprocess.Popen(cmd, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"mxasync launch: the job ran past --timeout {timeout:g} s; stopping it", file=sys.stderr, flush=True)
        _stop(proc)
        return 124
    except KeyboardInterrupt:
        _stop(proc)
        return 130


def _stop(proc: subprocess.Popen) -> None:
    # mpirun forwards SIGTERM to its ranks; the group kill catches anything left behind
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
