"""``mxnet-compat``: makes ``import mxnet`` give mxasync in every interpreter of this environment.

Installing this package is the opt-in (``pip install ./compat/mxnet-compat``); uninstalling
it is the way back.  Its ``.pth`` file calls :func:`activate` at start-up, which only
appends a finder to ``sys.meta_path`` (mxasync itself loads on the first ``import mxnet``).
A real MXNet installed in the same environment is never shadowed: the finder comes last,
so the real one is imported, and ``python -m mxnet_compat`` says which one you get.
"""

from __future__ import annotations


def activate() -> None:
    try:
        from mxasync import mxnet_alias
    except ImportError:  # mxasync was uninstalled: leave 'import mxnet' alone
        return
    mxnet_alias.install()


def main() -> int:
    from mxasync import mxnet_alias

    where = mxnet_alias.real_mxnet()
    if where:
        print(f"import mxnet gives the real MXNet at {where} (mxnet-compat never shadows it)")
    else:
        print(f"import mxnet gives mxasync (MXNet API {mxnet_alias.MXNET_API_VERSION})"
              + ("" if mxnet_alias.installed() else "; the alias is not active in this interpreter"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
