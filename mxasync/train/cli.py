"""``mxasync train``: train a LeNet (or an MLP) on the bundled digits, with a live progress bar.

Per epoch it prints and appends to ``OUT/metrics.jsonl`` (a previous run's file is rotated to
``metrics.jsonl.1``, ``.2`` ..., never deleted) the training accuracy and cross-entropy and
the exact validation ones, and writes a checkpoint (``OUT/<network>-symbol.json``,
``OUT/<network>-%04d.params`` and the optimizer's ``.states``; ``--resume`` continues from
the latest); at the end, with ``--profile``, a Chrome trace (``OUT/profile.json``) and with
``--plot`` the curves.

The recipe: inputs standardised inside the graph, random shifts of up to 2 pixels,
SGD with momentum 0.9 and a cosine learning-rate schedule, Xavier initialisation.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ..atomic import write_file
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


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")


def _positive_int(text: str) -> int:
    value = _whole(text)
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


def _positive(text: str) -> float:
    value = _finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def _non_negative(text: str) -> float:
    value = _finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def _natural(text: str) -> int:
    value = _whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _seed(text: str) -> int:
    value = _natural(text)
    if value >= 2**32:
        raise argparse.ArgumentTypeError(f"must be below 2**32, got {value}")
    return value


# the KVStore types mx.kv.create knows (the dist ones need an MPI launch: mxasync launch)
KVSTORES = ("local", "device", "local_update_cpu", "local_allreduce_cpu", "local_allreduce_device",
            "dist_sync", "dist_device_sync", "dist_sync_device", "dist_async", "dist_device_async")


def _kvstore(text: str) -> str:
    if text not in KVSTORES:
        raise argparse.ArgumentTypeError(f"unknown KVStore type {text!r}; expected one of {', '.join(KVSTORES)}")
    return text


# what matplotlib's savefig writes (Agg, PDF, PS, SVG, PGF backends), by file name suffix
PLOT_FORMATS = ("png", "pdf", "svg", "svgz", "jpg", "jpeg", "tif", "tiff", "webp", "eps", "ps", "pgf", "raw", "rgba")
MAX_SHIFT = 13  # pixels: half the 28-pixel digits' side moves a digit out of its image
MAX_LR = 10.0  # SGD with momentum diverges at once above this


def _plot_path(text: str) -> str:
    """``--plot``: checked before training, so a bad name is a usage error, not a failure at the end.

    A bare file name is resolved into OUT once ``--out`` is known (main()); the folder of one
    with a folder part must exist and be writable now.
    """
    path = Path(text)
    suffix = path.suffix.lower().lstrip(".")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file name such as curves.png")
    if suffix not in PLOT_FORMATS:
        raise argparse.ArgumentTypeError(f"cannot draw {text!r}: the file name must end in one of "
                                         f"{', '.join('.' + f for f in PLOT_FORMATS)}")
    if not os.path.dirname(text):
        return text
    folder = path.parent
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: the folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: the folder {str(folder)!r} is not writable")
    return text


def _shift(text: str) -> int:
    value = _natural(text)
    if value > MAX_SHIFT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SHIFT} pixels (the digits are 28x28), got {value}")
    return value


def _lr(text: str) -> float:
    value = _positive(text)
    if value > MAX_LR:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_LR:g} (training diverges at once), got {text}")
    return value


def _have_mpi4py() -> bool:
    return importlib.util.find_spec("mpi4py") is not None


def _check_devices(parser: argparse.ArgumentParser, contexts: list[Context]) -> None:
    """Each device type of ``--ctx`` has a backend (a gpu without CuPy is a usage error, not a traceback)."""
    from ..backends import get_backend

    for kind in sorted({c.device_type for c in contexts}):
        try:
            get_backend(kind)
        except MXAsyncError as err:
            hint = " (pip install 'mxasync[gpu]' on a machine with an NVIDIA GPU)" if kind == "gpu" else ""
            parser.error(f"--ctx {kind}: {err}{hint}")
    gpus = [c for c in contexts if c.device_type == "gpu"]
    if gpus:
        from ..runtime.context import num_gpus

        have = num_gpus()
        missing = [c for c in gpus if c.device_id >= have]
        if missing:
            parser.error(f"--ctx: {missing[0]} does not exist; this machine has {have} GPU(s)")


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


def latest_checkpoint(prefix: str) -> int:
    """The last epoch with both ``prefix-NNNN.params`` and its optimizer ``.states`` (0: none)."""
    found = [0]
    for path in Path(prefix).parent.glob(Path(prefix).name + "-*.params"):
        tail = path.stem.rsplit("-", 1)[-1]
        if tail.isdigit() and path.with_suffix(".states").is_file():
            found.append(int(tail))
    return max(found)


CONFIG = "config.json"  # OUT/config.json: the run's configuration (written at its start)
#: what a run's result depends on: --resume refuses to change any of them without --force
RECIPE = ("network", "batch_size", "lr", "wd", "shift", "seed")
NETWORKS = ("lenet", "mlp")


def _run_files(out: Path) -> list[Path]:
    """The files of a run in ``out``: its config, symbols, checkpoints and trace (not the metrics logs)."""
    found = [out / CONFIG] if (out / CONFIG).is_file() else []
    for net in NETWORKS:
        found += sorted(p for p in out.glob(f"{net}-*") if p.suffix in (".json", ".params", ".states"))
    return found


def _config(args: argparse.Namespace) -> dict:
    return {"network": args.network, "batch_size": args.batch_size, "lr": args.lr, "wd": args.wd,
            "shift": args.shift, "seed": args.seed, "epochs": args.epochs,
            "ctx": [str(c) for c in args.ctx], "kvstore": args.kvstore}


def _check_out(parser: argparse.ArgumentParser, args: argparse.Namespace, out: Path) -> None:
    """OUT holds one run: another run's files are refused unless --resume (the same recipe, or --force) or
    --overwrite (they are removed)."""
    if args.resume and args.overwrite:
        parser.error("--resume continues the run in OUT and --overwrite replaces it: give one of them")
    files = _run_files(out)
    if args.resume:
        saved = json.loads((out / CONFIG).read_text()) if (out / CONFIG).is_file() else {}
        changed = [k for k in RECIPE if k in saved and saved[k] != _config(args)[k]]
        if changed and not args.force:
            was = ", ".join(f"--{k.replace('_', '-')} {saved[k]}" for k in changed)
            now = ", ".join(f"--{k.replace('_', '-')} {_config(args)[k]}" for k in changed)
            parser.error(f"--resume: the run in {str(out)!r} was trained with {was}; this one asks {now} "
                         f"(give the same, or add --force to continue with the new values)")
        return
    if files and not args.overwrite:
        names = ", ".join(p.name for p in files[:4]) + (f" and {len(files) - 4} more" if len(files) > 4 else "")
        parser.error(f"--out {str(out)!r} holds another run ({names}): continue it with --resume, replace it with "
                     "--overwrite, or give another --out")
    for path in files:
        path.unlink()


def _drop_old_checkpoints(prefix: str, epoch: int, keep: int) -> None:
    """Remove the checkpoints of the epochs before the last ``keep`` (``epoch`` is the newest)."""
    for path in Path(prefix).parent.glob(Path(prefix).name + "-*.params"):
        tail = path.stem.rsplit("-", 1)[-1]
        if tail.isdigit() and int(tail) <= epoch - keep:
            path.unlink(missing_ok=True)
            path.with_suffix(".states").unlink(missing_ok=True)


def _read_rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mxasync train", description=__doc__.split("\n\n")[0].replace("``", ""),
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--network", choices=["lenet", "mlp"], default="lenet", help="the network to train")
    p.add_argument("--epochs", type=_positive_int, default=15, help="passes over the training set")
    p.add_argument("--batch-size", type=_positive_int, default=64,
                   help="examples per batch (split over --ctx; at most the training set's size)")
    p.add_argument("--lr", type=_lr, default=0.05, help="initial learning rate (cosine decay to 1%%)")
    p.add_argument("--wd", type=_non_negative, default=1e-4, help="weight decay")
    p.add_argument("--ctx", type=_contexts, default="cpu", help="contexts: cpu, cpu:0,1 (data parallel), gpu:0")
    p.add_argument("--kvstore", type=_kvstore, default="local", help="KVStore type used with several contexts")
    p.add_argument("--shift", type=_shift, default=2,
                   help=f"random shift augmentation, pixels (0: off; at most {MAX_SHIFT})")
    p.add_argument("--seed", type=_seed, default=0, help="seeds initialisation, shuffling and augmentation")
    p.add_argument("--out", type=_writable_folder, default="mxasync-train", help="folder for the checkpoint, log and trace")
    p.add_argument("--profile", action="store_true", help="write a Chrome trace to OUT/profile.json")
    p.add_argument("--plot", metavar="FILE", type=_plot_path,
                   help="draw train/validation curves into FILE (.png, .pdf, .svg ...; a bare file name goes into "
                        "OUT; needs matplotlib: pip install 'mxasync[plot]')")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--resume", action="store_true",
                   help="continue from the latest per-epoch checkpoint in OUT (weights, optimizer state, "
                        "learning-rate schedule) up to --epochs")
    p.add_argument("--overwrite", action="store_true",
                   help="start afresh in an OUT that holds another run (its checkpoints and config are removed; "
                        "its metrics log is kept as metrics.jsonl.1)")
    p.add_argument("--force", action="store_true",
                   help=f"with --resume: continue even if {', '.join('--' + k.replace('_', '-') for k in RECIPE)} "
                        f"differ from the run's {CONFIG}")
    p.add_argument("--keep", type=_positive_int, default=3, metavar="N",
                   help="checkpoints kept in OUT: the last N epochs' (older ones are removed as new ones are written)")
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
    _check_devices(parser, contexts)
    if args.kvstore.startswith("dist") and not _have_mpi4py():
        parser.error(f"--kvstore {args.kvstore}: the distributed stores run on MPI, and mpi4py is not installed "
                     "(pip install 'mxasync[dist]'; then start the ranks with mxasync launch, docs/distributed.md)")
    if args.plot and not os.path.dirname(args.plot):
        args.plot = str(out / args.plot)  # a bare file name: next to the run's other files
    if args.plot and importlib.util.find_spec("matplotlib") is None:  # said now, not after training
        print("--plot skipped: matplotlib is not installed (pip install 'mxasync[plot]')", flush=True)
        args.plot = None
    np.random.seed(args.seed)
    mx_random.seed(args.seed)
    train, val, (mean, std) = digits_data(args.batch_size, max_shift=args.shift, seed=args.seed)
    net = get_network(args.network, mean=mean, std=std)
    batches = math.ceil(train.num_data / args.batch_size)
    print(f"mxasync train: {args.network} on digits 28x28 ({train.num_data} train / {val.num_data} val), "
          f"{args.epochs} epochs, batch {args.batch_size}, lr {args.lr}, ctx {contexts}", flush=True)

    prefix = str(out / args.network)
    log_path = out / "metrics.jsonl"
    _check_out(parser, args, out)
    begin = latest_checkpoint(prefix) if args.resume else 0
    if args.resume and begin == 0:
        parser.error(f"--resume: no checkpoint of {args.network} in {str(out)!r} "
                     f"({prefix}-NNNN.params with its .states); train without --resume first")
    if begin >= args.epochs:
        print(f"mxasync train: {prefix}-{begin:04d}.params already has {begin} epochs (--epochs {args.epochs}); "
              "nothing to do", flush=True)
        return 0
    write_file(out / CONFIG, json.dumps(_config(args), indent=1) + "\n")  # what --resume checks
    rows = _read_rows(log_path)[:begin]  # a resumed run continues the log of the epochs it keeps
    kept = rotate(log_path)  # the previous runs' logs are kept, never deleted
    if kept:
        print(f"mxasync train: the previous {log_path.name} is kept as {kept.name}", flush=True)
    if begin:
        mod = Module.load(prefix, begin, load_optimizer_states=True, context=contexts)
        train.set_epoch(begin)  # the shifts and order the uninterrupted run has at this epoch
        log_path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        print(f"resuming from {prefix}-{begin:04d}.params: epochs {begin + 1} to {args.epochs}", flush=True)
    else:
        mod = Module(net, context=contexts)
    log = MetricsLog(log_path)
    train_metric = metric.create(["acc", "ce"])
    bar = None if args.quiet else ProgressBar(total=batches, epochs=args.epochs)
    clock = {"epoch": time.perf_counter()}

    def on_epoch_end(epoch, _sym, _arg, _aux):
        if bar is not None:
            bar.close()
        seconds = time.perf_counter() - clock["epoch"]
        tr = dict(train_metric.get_global_name_value())
        val_acc, val_ce, _ = evaluate(mod, val)
        log.append(epoch=epoch + 1, train_accuracy=tr["accuracy"], train_cross_entropy=tr["cross-entropy"],
                   val_accuracy=val_acc, val_cross_entropy=val_ce, seconds=round(seconds, 3))
        print(f"epoch {epoch + 1:>3}/{args.epochs}  train acc {tr['accuracy']:.4f} ce {tr['cross-entropy']:.4f}"
              f"  |  val acc {val_acc:.4f} ce {val_ce:.4f}  |  {seconds:.2f} s", flush=True)
        mod.save_checkpoint(prefix, epoch + 1, save_optimizer_states=True)  # what --resume continues from
        _drop_old_checkpoints(prefix, epoch + 1, args.keep)
        clock["epoch"] = time.perf_counter()

    if args.profile:
        profiler.set_config(filename=str(out / "profile.json"))
        profiler.set_state("run")
    start = time.perf_counter()
    schedule = CosineScheduler(max_update=max(args.epochs * batches, 1), base_lr=args.lr, final_lr=args.lr * 0.01)
    with _training_threads(), warnings.catch_warnings():
        # resumed weights are loaded on purpose: fit's "already initialized" notice says nothing here
        warnings.filterwarnings("ignore", message="Parameters already initialized")
        mod.fit(train, eval_metric=train_metric, num_epoch=args.epochs, begin_epoch=begin, kvstore=args.kvstore,
                optimizer="sgd", optimizer_params={"learning_rate": args.lr, "momentum": 0.9, "wd": args.wd,
                                                   "lr_scheduler": schedule, "begin_num_update": begin * batches},
                initializer=initializer.Xavier(magnitude=2.34), batch_end_callback=bar,
                epoch_end_callback=on_epoch_end)
    elapsed = time.perf_counter() - start
    if args.profile:
        profiler.set_state("stop")
        profiler.dump()
    final = log.rows[-1] if log.rows else {"val_accuracy": float("nan")}
    correct = round(final["val_accuracy"] * val.num_data)
    print(f"final validation accuracy {final['val_accuracy']:.4f} ({correct}/{val.num_data}) "
          f"after {args.epochs} epochs in {elapsed:.1f} s", flush=True)
    print(f"checkpoint: {prefix}-symbol.json, {prefix}-{args.epochs:04d}.params (the last {args.keep} epochs' "
          f"are kept); config: {out / CONFIG}; log: {log_path}", flush=True)
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
