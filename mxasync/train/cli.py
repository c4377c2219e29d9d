"""``mxasync train``: train a LeNet (or an MLP) on the bundled digits, with a live progress bar.

Per epoch it prints and appends to ``OUT/metrics.jsonl`` (a previous run's file is rotated to
``metrics.jsonl.1``, ``.2`` ..., never deleted) the training accuracy and
cross-entropy and the exact validation ones; at the end it writes a checkpoint
(``OUT/<network>-symbol.json`` and ``OUT/<network>-%04d.params``), with
``--profile`` a Chrome trace (``OUT/profile.json``) and with ``--plot`` the curves.

The recipe: inputs standardised inside the graph, random shifts of up to 2 pixels,
SGD with momentum 0.9 and a cosine learning-rate schedule, Xavier initialisation.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from ..base import MXAsyncError
from ..runtime.context import Context

__all__ = ["main", "parse_contexts", "build_parser"]


def parse_contexts(text: str) -> list[Context]:
    """``cpu``, ``cpu:0,1``, ``gpu:1`` or ``cpu(0),cpu(1)`` to a list of contexts.

    >>> parse_contexts("cpu:0,1"), parse_contexts("gpu"), parse_contexts("cpu(0),cpu(1)")
    ([cpu(0), cpu(1)], [gpu(0)], [cpu(0), cpu(1)])
    """
    text = text.strip().lower().replace(" ", "")
    if "(" in text:
        out = []
        for part in text.split("),"):
            kind, _, idx = part.rstrip(")").partition("(")
            out.append(Context(kind, int(idx or 0)))
        return out
    kind, _, ids = text.partition(":")
    if kind not in ("cpu", "gpu"):
        raise MXAsyncError(f"--ctx: expected cpu or gpu, got {kind!r}")
    return [Context(kind, int(i)) for i in (ids.split(",") if ids else ["0"])]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _contexts(text: str) -> list[Context]:
    try:
        return parse_contexts(text)
    except (MXAsyncError, ValueError) as err:
        # argparse prefixes "--ctx: " itself
        raise argparse.ArgumentTypeError(str(err).removeprefix("--ctx: ") if isinstance(err, MXAsyncError)
                                         else f"{text!r}: {err}")


def _writable_folder(text: str) -> Path:
    """The output folder: created now, so an unwritable path is a one-line usage error, not a traceback later."""
    path = Path(text)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise argparse.ArgumentTypeError(f"cannot create {text!r}: {err.strerror}")
    if not os.access(path, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text!r} is not writable")
    return path


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):  # a NaN rate trains silently to NaN weights
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


@contextlib.contextmanager
def _training_threads():
    """While this command trains: a 0.5 ms GIL switch interval, so a worker that finishes a
    kernel gets the GIL back promptly.

    The setting is process-wide, so the library never makes it (it would change the user's own
    threads); this command owns its process and restores it when it ends.
    ``MXASYNC_SWITCH_INTERVAL_US`` overrides the value.  BLAS threads need no setting: the
    engine's GEMMs run on its own BLAS (see ``mxasync.backends.numpy.blas``); only where that
    is missing (no ``scipy-openblas32`` wheel) does this command cap numpy's BLAS at one thread
    per call while it trains, as the engine's workers would otherwise share numpy's pool.
    """
    from ..backends.numpy import blas

    interval = float(os.environ.get("MXASYNC_SWITCH_INTERVAL_US") or 500) * 1e-6
    previous = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, previous))
    try:
        if blas.available():
            yield
        else:
            from threadpoolctl import threadpool_limits

            with threadpool_limits(limits=1, user_api="blas"):
                yield
    finally:
        sys.setswitchinterval(previous)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mxasync train", description=__doc__.split("\n\n")[0].replace("``", ""),
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--network", choices=["lenet", "mlp"], default="lenet", help="the network to train")
    p.add_argument("--epochs", type=_positive_int, default=15, help="passes over the training set")
    p.add_argument("--batch-size", type=_positive_int, default=64,
                   help="examples per batch (split over --ctx; at most the training set's size)")
    p.add_argument("--lr", type=_finite, default=0.05, help="initial learning rate (cosine decay to 1%%)")
    p.add_argument("--wd", type=_finite, default=1e-4, help="weight decay")
    p.add_argument("--ctx", type=_contexts, default="cpu", help="contexts: cpu, cpu:0,1 (data parallel), gpu:0")
    p.add_argument("--kvstore", default="local", help="KVStore type used with several contexts")
    p.add_argument("--shift", type=int, default=2, help="random shift augmentation, pixels (0: off)")
    p.add_argument("--seed", type=int, default=0, help="seeds initialisation, shuffling and augmentation")
    p.add_argument("--out", type=_writable_folder, default="mxasync-train", help="folder for the checkpoint, log and trace")
    p.add_argument("--profile", action="store_true", help="write a Chrome trace to OUT/profile.json")
    p.add_argument("--plot", metavar="PNG", help="draw train/validation curves (needs matplotlib)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _train(parser, args)
    except OSError as exc:  # a full disk, a folder removed mid-run: one line naming the file, no traceback
        print(f"mxasync train: {exc}", file=sys.stderr)
        return 1


def _train(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from .. import initializer, metric, profiler
    from .. import random as mx_random
    from ..callback import ProgressBar
    from ..io.datasets import digits_split
    from ..lr_scheduler import CosineScheduler
    from ..module import Module
    from .data import digits_data
    from .networks import get_network
    from .report import MetricsLog, evaluate, plot_curves, rotate

    n_train = len(digits_split("train")[1])
    if args.batch_size > n_train:  # one padded batch of mostly copies: refuse rather than allocate it
        parser.error(f"--batch-size {args.batch_size} is larger than the training set ({n_train} examples)")
    contexts, out = args.ctx, args.out
    np.random.seed(args.seed)
    mx_random.seed(args.seed)
    train, val, (mean, std) = digits_data(args.batch_size, max_shift=args.shift, seed=args.seed)
    net = get_network(args.network, mean=mean, std=std)
    batches = math.ceil(train.num_data / args.batch_size)
    print(f"mxasync train: {args.network} on digits 28x28 ({train.num_data} train / {val.num_data} val), "
          f"{args.epochs} epochs, batch {args.batch_size}, lr {args.lr}, ctx {contexts}", flush=True)

    mod = Module(net, context=contexts)
    log_path = out / "metrics.jsonl"
    kept = rotate(log_path)  # the previous runs' logs are kept, never deleted
    if kept:
        print(f"mxasync train: the previous {log_path.name} is kept as {kept.name}", flush=True)
    log = MetricsLog(log_path)
    train_metric = metric.create(["acc", "ce"])
    bar = None if args.quiet else ProgressBar(total=batches)
    clock = {"epoch": time.perf_counter()}

    def on_epoch_end(epoch, _sym, _arg, _aux):
        if bar is not None:
            bar.close()
        seconds = time.perf_counter() - clock["epoch"]
        tr = dict(train_metric.get_global_name_value())
        val_acc, val_ce, _ = evaluate(mod, val)
        log.append(epoch=epoch, train_accuracy=tr["accuracy"], train_cross_entropy=tr["cross-entropy"],
                   val_accuracy=val_acc, val_cross_entropy=val_ce, seconds=round(seconds, 3))
        print(f"epoch {epoch + 1:>3}/{args.epochs}  train acc {tr['accuracy']:.4f} ce {tr['cross-entropy']:.4f}"
              f"  |  val acc {val_acc:.4f} ce {val_ce:.4f}  |  {seconds:.2f} s", flush=True)
        clock["epoch"] = time.perf_counter()

    if args.profile:
        profiler.set_config(filename=str(out / "profile.json"))
        profiler.set_state("run")
    start = time.perf_counter()
    schedule = CosineScheduler(max_update=max(args.epochs * batches, 1), base_lr=args.lr, final_lr=args.lr * 0.01)
    with _training_threads():
        mod.fit(train, eval_metric=train_metric, num_epoch=args.epochs, kvstore=args.kvstore, optimizer="sgd",
                optimizer_params={"learning_rate": args.lr, "momentum": 0.9, "wd": args.wd,
                                  "lr_scheduler": schedule},
                initializer=initializer.Xavier(magnitude=2.34), batch_end_callback=bar,
                epoch_end_callback=on_epoch_end)
    elapsed = time.perf_counter() - start
    if args.profile:
        profiler.set_state("stop")
        profiler.dump()
    prefix = str(out / args.network)
    mod.save_checkpoint(prefix, args.epochs)
    final = log.rows[-1] if log.rows else {"val_accuracy": float("nan")}
    correct = round(final["val_accuracy"] * val.num_data)
    print(f"final validation accuracy {final['val_accuracy']:.4f} ({correct}/{val.num_data}) "
          f"after {args.epochs} epochs in {elapsed:.1f} s", flush=True)
    print(f"checkpoint: {prefix}-symbol.json, {prefix}-{args.epochs:04d}.params; log: {log_path}", flush=True)
    if args.profile:
        print(f"trace: {out / 'profile.json'} (open in https://ui.perfetto.dev or chrome://tracing)", flush=True)
    if args.plot:
        if plot_curves(log.rows, args.plot):
            print(f"curves: {args.plot}", flush=True)
        else:
            print("--plot skipped: matplotlib is not installed (pip install 'mxasync[plot]')", flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
