"""The opt-in ``mxnet`` import alias: unmodified MXNet programs and libraries run on mxasync.

Libraries built on MXNet (GluonCV, GluonNLP, ...) ``import mxnet`` themselves; changing
the import is not open to their users.  :func:`install` puts a finder at the **end** of
``sys.meta_path`` that answers ``import mxnet`` and ``import mxnet.X`` with ``mxasync``
and ``mxasync.X`` (the same module objects: classes, registries and contexts are shared),
so a real MXNet found on ``sys.path`` always wins: the alias never shadows one.

Three ways to turn it on, none of them implicit:

* ``mxasync run script.py [args]`` runs a script with the alias (and refuses to when a
  real MXNet is installed, naming where);
* the ``mxnet-compat`` package (``compat/mxnet-compat`` in the repository) installs a
  ``.pth`` hook that, at interpreter start-up, only appends a finder which calls
  :func:`install` on the first ``import mxnet`` (mxasync is not imported before);
* ``import mxasync.mxnet_alias; mxasync.mxnet_alias.install()`` in a program.

With ``MXASYNC_NUMPY1_NAMES=1`` (``mxasync run --numpy1-names``), importing ``mxnet`` through the alias
also gives NumPy back the names NumPy 2 removed (``np.float``, binary ``np.fromstring``...), each use
warning (:mod:`mxasync.tools.numpy1_names`); ``import mxasync`` never does.

Under the alias ``mxnet`` is a thin module over ``mxasync`` whose ``__version__`` is the
MXNet API version mxasync implements (:data:`MXNET_API_VERSION`), as libraries check it
(GluonCV 0.10 wants ``>=1.4,<2.0``); ``mxasync.__version__`` stays mxasync's own.

>>> from mxasync import mxnet_alias
>>> mxnet_alias.MXNET_API_VERSION, mxnet_alias.installed()
('1.9.1', False)
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types

__all__ = ["MXNET_API_VERSION", "install", "uninstall", "installed", "real_mxnet", "AliasFinder"]

#: The MXNet Python API version mxasync implements (``mxnet.__version__`` under the alias).
MXNET_API_VERSION = "1.9.1"
#: Set to 1, ``import mxnet`` through the alias gives NumPy back NumPy 1's removed names (``mxasync run
#: --numpy1-names``); the same name as :data:`mxasync.tools.numpy1_names.ENV`.
NUMPY1_NAMES_ENV = "MXASYNC_NUMPY1_NAMES"


class _MxnetModule(types.ModuleType):
    """``mxnet``: every attribute is ``mxasync``'s, except ``__version__``."""

    def __getattr__(self, name: str):
        return getattr(importlib.import_module("mxasync"), name)

    def __dir__(self):
        return sorted(set(dir(importlib.import_module("mxasync"))) | {"__version__"})


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        if self.target == "mxasync":
            module = _MxnetModule("mxnet", "mxnet: the mxasync alias (mxasync.mxnet_alias)")
            module.__version__ = MXNET_API_VERSION
            module.__path__ = []  # a package whose submodules only this finder gives
            module.__mxasync_alias__ = True
            if os.environ.get(NUMPY1_NAMES_ENV, "").strip().lower() in ("1", "true", "yes", "on"):
                # NumPy 1's removed names for legacy scripts (loaded only when asked: this module is imported
                # at every interpreter start where mxnet-compat is installed)
                importlib.import_module("mxasync.tools.numpy1_names").enable()
            return module
        return None

    def exec_module(self, module) -> None:
        if self.target != "mxasync":
            # the import system returns whatever sys.modules holds for the name after exec_module:
            # the mxasync module itself, so 'mxnet.gluon' and 'mxasync.gluon' are one module
            sys.modules[module.__name__] = importlib.import_module(self.target)


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``mxnet`` as mxasync when nothing before it on ``sys.meta_path`` did (``top``, last on the
    path), and ``mxnet.X`` as ``mxasync.X`` once ``mxnet`` is the alias (first on the path, before the
    path finder could load a second copy of ``mxasync/X`` under the name ``mxnet.X``)."""

    def __init__(self, top: bool):
        self.top = top

    def find_spec(self, fullname, path=None, target=None):
        if self.top != (fullname == "mxnet") or not fullname.startswith("mxnet"):
            return None
        if not self.top and (not fullname.startswith("mxnet.")
                             or not getattr(sys.modules.get("mxnet"), "__mxasync_alias__", False)):
            return None  # not ours, or a real mxnet was imported: its submodules are its own
        target_name = "mxasync" + fullname[len("mxnet"):]
        if target_name != "mxasync" and importlib.util.find_spec(target_name) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(target_name), is_package=True)


_FINDER = AliasFinder(top=True)
_SUB_FINDER = AliasFinder(top=False)


def real_mxnet() -> str | None:
    """Where a real MXNet would be imported from (None: none is installed)."""
    if getattr(sys.modules.get("mxnet"), "__mxasync_alias__", False):
        return None
    was = _FINDER in sys.meta_path
    if was:
        sys.meta_path.remove(_FINDER)
    try:
        spec = importlib.util.find_spec("mxnet")
    except (ImportError, ValueError):
        spec = None
    finally:
        if was:
            sys.meta_path.append(_FINDER)
    if spec is None:
        return None
    return spec.origin or ", ".join(spec.submodule_search_locations or []) or "?"


def installed() -> bool:
    return _FINDER in sys.meta_path


def install() -> None:
    """Answer ``import mxnet`` with mxasync from now on in this process (a real MXNet still wins)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
    if _SUB_FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _SUB_FINDER)


def uninstall() -> None:
    """Remove the finders and forget the ``mxnet`` modules they gave."""
    for finder in (_FINDER, _SUB_FINDER):
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
    if getattr(sys.modules.get("mxnet"), "__mxasync_alias__", False):
        for name in [k for k in sys.modules if k == "mxnet" or k.startswith("mxnet.")]:
            del sys.modules[name]
