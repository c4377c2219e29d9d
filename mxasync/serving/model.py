"""What a :class:`~mxasync.serving.Predictor` runs: a model loaded from a file or given as a Gluon block.

:func:`load_model` accepts

* a checkpoint prefix as :func:`mx.model.load_checkpoint <mxasync.model.load_checkpoint>` takes it
  (``prefix-symbol.json`` with ``prefix-NNNN.params``; the latest epoch is used), which is also
  what ``HybridBlock.export`` writes; a folder holding one such checkpoint (``mxasync train``'s
  output folder) or the path of the ``-symbol.json`` itself work too;
* an ``.onnx`` file (through ``mx.contrib.onnx.import_to_gluon``);
* a live Gluon ``HybridBlock`` (called as it is: hybridize it first for speed).

Every kind becomes a block called on a batch; a checkpoint's label inputs (``softmax_label``:
arguments without parameters whose names end in ``label``) get zeros, which inference ignores.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .. import ndarray as nd
from .. import symbol as sym_mod
from ..contrib.onnx import get_model_metadata, import_to_gluon
from ..gluon import HybridBlock, SymbolBlock
from ..model import load_checkpoint
from ..ndarray import NDArray
from ..runtime.context import Context, cpu
from .errors import ModelError, ServingError

__all__ = ["LoadedModel", "load_model", "latest_checkpoint"]

_EPOCH = re.compile(r"-(\d{4,})\.params$")


@dataclass
class LoadedModel:
    """A block with the names of its data inputs, what feeds its label inputs, and where it came from.

    ``input_shape``: the shape of one example of each data input as far as the file tells it
    (``None`` for a free dimension), or ``None`` when it does not.
    """

    block: HybridBlock
    data_names: list[str]
    source: str
    ctx: Context
    label_names: list[str] = field(default_factory=list)
    symbol: object = None
    input_shapes: list[tuple | None] | None = None
    _label_shapes: dict = field(default_factory=dict, repr=False)

    def forward(self, batch: Sequence[np.ndarray]) -> list[NDArray]:
        """Push the model on ``batch`` (one array per data input) and return its outputs, not yet computed."""
        arrays = [nd.array(b, ctx=self.ctx, dtype=b.dtype) for b in batch]
        arrays += [nd.zeros(shape, ctx=self.ctx) for shape in self._label_feed(batch)]
        out = self.block(*arrays)
        return list(out) if isinstance(out, (list, tuple)) else [out]

    def _label_feed(self, batch) -> list[tuple]:
        if not self.label_names:
            return []
        key = tuple(b.shape for b in batch)
        if key not in self._label_shapes:
            args, _, _ = self.symbol.infer_shape_partial(**dict(zip(self.data_names, key, strict=True)))
            known = dict(zip(self.symbol.list_arguments(), args, strict=True))
            shapes = []
            for name in self.label_names:
                shape = known.get(name)
                if not shape or 0 in shape:  # a label the graph does not shape: one value per example
                    shape = (key[0][0],)
                shapes.append(tuple(shape))
            self._label_shapes[key] = shapes
        return self._label_shapes[key]


def latest_checkpoint(prefix: str) -> int:
    """The highest epoch ``N`` with a ``prefix-NNNN.params`` file; ServingError naming the prefix when none."""
    epochs = [int(m.group(1)) for p in glob.glob(glob.escape(prefix) + "-*.params")
              if (m := _EPOCH.search(p)) and p == f"{prefix}-{m.group(1)}.params"]
    if not epochs:
        raise ServingError(f"no parameters for checkpoint {prefix!r}: expected {prefix}-NNNN.params beside "
                           f"{prefix}-symbol.json")
    return max(epochs)


def _checkpoint_prefix(path: str) -> str:
    if path.endswith("-symbol.json"):
        return path[: -len("-symbol.json")]
    if os.path.isdir(path):
        found = sorted(glob.glob(os.path.join(glob.escape(path), "*-symbol.json")))
        if len(found) != 1:
            what = "no" if not found else f"{len(found)}"
            raise ServingError(f"{path!r} is a folder with {what} checkpoints (*-symbol.json); name the prefix "
                               "instead, e.g. FOLDER/lenet")
        return found[0][: -len("-symbol.json")]
    if not os.path.exists(path + "-symbol.json"):
        raise ServingError(f"no model at {path!r}: expected a checkpoint prefix ({path}-symbol.json and "
                           f"{path}-NNNN.params), a folder holding one, or an .onnx file")
    return path


def _from_checkpoint(path: str, ctx: Context) -> LoadedModel:
    prefix = _checkpoint_prefix(path)
    epoch = latest_checkpoint(prefix)
    symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
    free = [n for n in symbol.list_arguments() if n not in arg_params]
    labels = [n for n in free if n.endswith("label")]
    data = [n for n in free if n not in labels]
    if not data:
        raise ServingError(f"checkpoint {prefix!r} has no data input: every argument has a parameter")
    block = SymbolBlock(symbol, [sym_mod.var(n) for n in data + labels])
    block.collect_params().load_dict({**arg_params, **aux_params}, ctx=ctx, ignore_extra=True)
    block.hybridize()
    return LoadedModel(block, data, f"{prefix}-{epoch:04d}.params", ctx, labels, symbol)


def _from_onnx(path: str, ctx: Context) -> LoadedModel:
    if not os.path.exists(path):
        raise ServingError(f"no ONNX file at {path!r}")
    block = import_to_gluon(path, ctx)
    block.hybridize()
    inputs = get_model_metadata(path)["input_tensor_data"]
    shapes = [tuple(d or None for d in shape[1:]) if len(shape) > 1 else None for _, shape, _ in inputs]
    return LoadedModel(block, [name for name, _, _ in inputs], path, ctx, input_shapes=shapes)


def load_model(model, ctx: Context | None = None) -> LoadedModel:
    """The model ``model`` names (a path or a ``HybridBlock``) as a :class:`LoadedModel` on ``ctx`` (cpu)."""
    ctx = cpu() if ctx is None else ctx
    if isinstance(model, LoadedModel):
        return model
    if isinstance(model, HybridBlock):
        return LoadedModel(model, ["data"], f"<{type(model).__name__}>", ctx)
    if not isinstance(model, (str, os.PathLike)):
        raise ServingError(f"cannot serve a {type(model).__name__}: give a checkpoint prefix, an .onnx file or a "
                           "Gluon HybridBlock")
    path = os.fspath(model)
    try:
        return _from_onnx(path, ctx) if path.lower().endswith(".onnx") else _from_checkpoint(path, ctx)
    except ServingError:
        raise
    except Exception as e:  # noqa: BLE001 - a broken file is reported with its path
        raise ModelError(f"cannot load the model at {path!r}: {type(e).__name__}: {e}") from e
