"""``mxnet-compat``: makes ``import mxnet`` give mxasync in every interpreter of this environment.

Installing this package is the opt-in (``pip install ./compat/mxnet-compat``, or offline
``pip install --no-build-isolation ./compat/mxnet-compat``); uninstalling it is the way back.
Its ``.pth`` file calls :func:`activate` at start-up, which only appends a small finder to
``sys.meta_path``: nothing of mxasync is imported (or even looked for) until the first
``import mxnet``, so an interpreter that never imports mxnet pays nothing, and a broken
mxasync cannot print anything at start-up. That first ``import mxnet`` loads mxasync's alias
(:mod:`mxasync.mxnet_alias`) and hands the import to it; if mxasync fails to load, that import
raises one ``ImportError`` saying so. A real MXNet installed in the same environment is never
shadowed: the finder comes last, so the real one is imported, and ``python -m mxnet_compat``
says which one you get.
"""

from __future__ import annotations

import importlib.abc
import sys


class LazyAliasFinder(importlib.abc.MetaPathFinder):
    """Last on ``sys.meta_path``: answers the first ``import mxnet`` nothing else answered by loading
    mxasync's alias and letting it answer (then steps aside)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "mxnet":
            return None
        try:
            from mxasync import mxnet_alias
        except ModuleNotFoundError as e:
            if e.name == "mxasync":  # mxasync was uninstalled: 'import mxnet' finds nothing, as without us
                return None
            raise ImportError(f"import mxnet: mxnet-compat could not load mxasync ({type(e).__name__}: {e}); "
                              "'pip uninstall mxnet-compat' turns the alias off") from e
        except Exception as e:  # noqa: BLE001 - a broken mxasync: one clear ImportError at the import that needs it
            raise ImportError(f"import mxnet: mxnet-compat could not load mxasync ({type(e).__name__}: {e}); "
                              "'pip uninstall mxnet-compat' turns the alias off") from e
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        mxnet_alias.install()
        return mxnet_alias.AliasFinder(top=True).find_spec(fullname, path, target)


def activate() -> None:
    """What the ``.pth`` file runs at start-up: append the finder (once); import nothing."""
    if not any(isinstance(f, LazyAliasFinder) for f in sys.meta_path):
        sys.meta_path.append(LazyAliasFinder())


def main() -> int:
    from mxasync import mxnet_alias

    lazy = [f for f in sys.meta_path if isinstance(f, LazyAliasFinder)]
    for f in lazy:  # out of the way while looking for a real MXNet
        sys.meta_path.remove(f)
    try:
        where = mxnet_alias.real_mxnet()
    finally:
        sys.meta_path.extend(lazy)
    if where:
        print(f"import mxnet gives the real MXNet at {where} (mxnet-compat never shadows it)")
    else:
        active = mxnet_alias.installed() or bool(lazy)
        print(f"import mxnet gives mxasync (MXNet API {mxnet_alias.MXNET_API_VERSION})"
              + ("" if active else "; the alias is not active in this interpreter"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
