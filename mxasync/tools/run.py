"""``mxasync run``: run an unmodified MXNet program on mxasync (``import mxnet`` gives mxasync).

::

    mxasync run train_mnist.py --epochs 3      # a script, with its arguments
    mxasync run -m gluoncv.some.module args    # a module, as python -m does
    mxasync run --numpy1-names old_script.py   # NumPy 2's removed names given back (np.float...), warning

The alias (:mod:`mxasync.mxnet_alias`) lives in this process only; nothing is
installed.  When a real MXNet is installed, ``run`` refuses (it would not be the one
your script gets elsewhere) and says where that MXNet is.
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import sys

from .. import mxnet_alias
from . import numpy1_names

__all__ = ["main"]

USAGE = "usage: mxasync run [--numpy1-names] SCRIPT [ARGS...] | mxasync run [--numpy1-names] -m MODULE [ARGS...]"


def _findable(module: str) -> bool:
    """Whether ``python -m module`` would find it (a module of the mxnet alias counts: it comes from mxasync)."""
    if module == "mxnet" or module.startswith("mxnet."):
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a missing parent package, an empty or relative name
        return False


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE + "\n\nRuns an MXNet 1.x program with 'import mxnet' answered by mxasync "
              f"(MXNet API {mxnet_alias.MXNET_API_VERSION}).\n--numpy1-names gives NumPy back the names "
              f"NumPy 2 removed (np.float, np.int, binary np.fromstring...) for this program, each use warning "
              f"(also: {numpy1_names.ENV}=1).")
        return 0 if argv else 2
    if argv[0] == "--numpy1-names":
        os.environ[numpy1_names.ENV] = "1"  # read by the alias at 'import mxnet'; worker processes inherit it
        argv = argv[1:]
        if not argv:
            print(f"mxasync run: --numpy1-names needs a script or -m MODULE\n{USAGE}", file=sys.stderr)
            return 2
    as_module = argv[0] == "-m"
    if as_module and len(argv) < 2:
        print(f"mxasync run: -m needs a module name\n{USAGE}", file=sys.stderr)
        return 2
    target, args = (argv[1], argv[2:]) if as_module else (argv[0], argv[1:])
    if not as_module and not os.path.isfile(target):
        print(f"mxasync run: no such script: {target}", file=sys.stderr)
        return 2
    if as_module and not _findable(target):
        print(f"mxasync run: no module named {target!r}", file=sys.stderr)
        return 2
    where = mxnet_alias.real_mxnet()
    if where:
        print(f"mxasync run: a real MXNet is installed ({where}); running on mxasync would shadow it. "
              "Uninstall it, or use another environment.", file=sys.stderr)
        return 2
    mxnet_alias.install()
    sys.argv = [target, *args]
    if not as_module:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    try:
        if as_module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None or isinstance(code, int):
            return int(code or 0)
        print(code, file=sys.stderr)
        return 1
    return 0
