"""Which GluonCV model-zoo models construct and run on mxasync (a manual check; CI never runs it).

In an environment with mxasync, ``compat/mxnet-compat`` and the GluonCV wheel installed (see
docs/porting.md), from anywhere::

    python compat/gluon_zoo_check.py construct > construct.jsonl   # every model: build + initialize
    python compat/gluon_zoo_check.py forward resnet18_v1 1x3x224x224 ...  # forward, then hybridized

One JSON line per model: whether it built, the output shapes imperative and hybridized and their
largest difference, or the error with the file and line where it was raised.  Models are built
with ``pretrained=False`` and, where accepted, ``pretrained_base=False`` (no downloads).
"""

from __future__ import annotations

import json
import signal
import sys
import time
import traceback
import warnings


def _error(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{frames[-1].filename.split('site-packages/')[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {str(exc)[:300]} @ {where}"


def _build(name: str):
    from gluoncv import model_zoo

    try:
        return model_zoo.get_model(name, pretrained=False, pretrained_base=False)
    except TypeError as exc:
        if "pretrained_base" not in str(exc):
            raise
        return model_zoo.get_model(name, pretrained=False)


def _shapes(out) -> list:
    items = out if isinstance(out, (list, tuple)) else [out]
    return [s for a in items for s in (_shapes(a) if isinstance(a, (list, tuple)) else [list(a.shape)])]


def _first(out):
    while isinstance(out, (list, tuple)):
        out = out[0]
    return out


def construct(limit_s: int = 60) -> None:
    from gluoncv import model_zoo

    def _timeout(*_):
        raise TimeoutError(f"more than {limit_s} s")

    signal.signal(signal.SIGALRM, _timeout)
    for name in sorted(model_zoo.get_model_list()):
        row, start = {"model": name}, time.time()
        signal.alarm(limit_s)
        try:
            _build(name).initialize()
            row["initialized"] = True
        except Exception as exc:  # noqa: BLE001 - the report is the point
            row["error"] = _error(exc)
        finally:
            signal.alarm(0)
        row["s"] = round(time.time() - start, 2)
        print(json.dumps(row), flush=True)


def forward(name: str, shape: tuple[int, ...]) -> None:
    import mxnet as mx

    row, start = {"model": name, "input": list(shape)}, time.time()
    try:
        net = _build(name)
        net.initialize(mx.init.Xavier())
        x = mx.nd.random.uniform(shape=shape)
        out = net(x)
        row["imperative"] = _shapes(out)
        net.hybridize()
        again = net(x)
        row["hybridized"] = _shapes(again)
        row["max_diff"] = float(abs(_first(out) - _first(again)).max().asscalar())
    except Exception as exc:  # noqa: BLE001
        row["error"] = _error(exc)
    row["s"] = round(time.time() - start, 1)
    print(json.dumps(row), flush=True)


def main(argv: list[str]) -> None:
    warnings.simplefilter("ignore")
    if argv[:1] == ["construct"]:
        construct()
    elif argv[:1] == ["forward"] and len(argv) >= 3 and len(argv) % 2 == 1:
        for name, shape in zip(argv[1::2], argv[2::2], strict=True):
            forward(name, tuple(int(v) for v in shape.split("x")))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
