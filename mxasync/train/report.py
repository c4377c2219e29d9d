"""What ``mxasync train`` reports: exact validation accuracy, the JSON-lines log and the curves plot."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np

from ..atomic import write_file

__all__ = ["evaluate", "MetricsLog", "plot_curves", "rotate", "KEEP_LOGS"]

KEEP_LOGS = 9  # rotated logs kept beside the current one (``metrics.jsonl.1`` newest ... ``.9`` oldest)


def rotate(path: str | Path, keep: int = KEEP_LOGS) -> Path | None:
    """Move an existing ``path`` to ``path.1`` (``.1`` to ``.2`` ..., the oldest beyond ``keep`` goes)
    so a new run starts a fresh log without losing the last ones; returns where it went, or None.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "m.jsonl"
    >>> _ = p.write_text("old\\n"); rotate(p).name, p.exists()
    ('m.jsonl.1', False)
    """
    path = Path(path)
    if not path.exists():
        return None
    for k in range(keep - 1, 0, -1):
        older = path.with_name(f"{path.name}.{k}")
        if older.exists():
            os.replace(older, path.with_name(f"{path.name}.{k + 1}"))
    target = path.with_name(f"{path.name}.1")
    os.replace(path, target)
    return target


def evaluate(mod, data) -> tuple[float, float, int]:
    """``(accuracy, cross-entropy, examples)`` over ``data``, padding excluded (unlike ``Module.score``)."""
    correct, loss, count = 0, 0.0, 0
    for outputs, _, batch in mod.iter_predict(data):
        keep = outputs[0].shape[0]
        prob = outputs[0].asnumpy()
        label = batch.label[0].asnumpy()[:keep].astype(np.int64)
        correct += int((prob.argmax(axis=1) == label).sum())
        loss += float(-np.log(np.maximum(prob[np.arange(keep), label], 1e-12)).sum())
        count += keep
    return correct / max(count, 1), loss / max(count, 1), count


class MetricsLog:
    """Appends one JSON object per epoch to a ``.jsonl`` file and keeps the rows for the plot.

    >>> import tempfile, os
    >>> log = MetricsLog(os.path.join(tempfile.mkdtemp(), "m.jsonl"))
    >>> log.append(epoch=1, train_accuracy=0.5)
    >>> open(log.path).read()
    '{"epoch": 1, "train_accuracy": 0.5}\\n'
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.rows: list[dict] = []
        self._text: str | None = None

    def append(self, **row) -> None:
        # Rewritten whole (atomically) each time: a killed run never leaves half a line.
        if self._text is None:
            self._text = self.path.read_text() if self.path.is_file() else ""
        self.rows.append(row)
        self._text += json.dumps(row) + "\n"
        write_file(self.path, self._text)


def plot_curves(rows: list[dict], path: str | Path) -> bool:
    """Draw train/val accuracy and loss per epoch into ``path``; False when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401  (first: a blocked matplotlib counts as missing, whatever is cached)

        # a Figure with its own Agg canvas: pyplot and matplotlib.use() would change the process's backend
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return False
    epochs = [r["epoch"] for r in rows]  # 1 for the first epoch, as the checkpoints count
    fig = Figure(figsize=(10, 4))
    FigureCanvasAgg(fig)
    acc_ax, loss_ax = fig.subplots(1, 2)
    for ax, key, title in ((acc_ax, "accuracy", "accuracy"), (loss_ax, "cross_entropy", "cross-entropy")):
        ax.plot(epochs, [r[f"train_{key}"] for r in rows], marker="o", label="train")
        ax.plot(epochs, [r[f"val_{key}"] for r in rows], marker="o", label="validation")
        ax.set_xlabel("epoch")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, dpi=100, format=Path(path).suffix[1:].lower() or "png")
    write_file(path, buf.getvalue())
    return True
