"""``mx.onnx.export_model``: a symbol and its parameters to an ONNX file, as MXNet 1.9.1's exporter.

The walk over the graph is :mod:`.write`; each op's converter comes from its registry entry
(``OperatorProperty.onnx_export``). Examples: docs/onnx.md.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np

from ..atomic import AtomicFile
from ..ndarray import NDArray
from ..ndarray import load as nd_load
from ..operator import get_op, list_ops
from ..symbol import Symbol
from ..symbol import load as sym_load
from ..symbol._indexed import IndexedGraph
from ..symbol._infer import infer_shape, infer_type

__all__ = ["export_model", "get_operator_support", "DEFAULT_OPSET", "OPSETS"]

log = logging.getLogger(__name__)
OPSETS = range(12, 18)
DEFAULT_OPSET = 13
_TWO_GB = 2 ** 31


def _onnx():
    try:
        import onnx
    except ImportError as e:  # an optional dependency: the 'onnx' extra
        raise ImportError("ONNX export and import need the onnx package: pip install 'mxasync[onnx]'") from e
    return onnx


def get_operator_support(opset_version: int | None = None) -> list[str]:
    """The registered ops that export to ONNX (every opset from 12 to 17 has them all)."""
    return sorted({get_op(n).name for n in list_ops() if get_op(n).prop_cls.onnx_export is not None})


def _load_params(params: Any) -> dict[str, np.ndarray]:
    if isinstance(params, (str, os.PathLike)):
        params = nd_load(os.fspath(params))
    elif isinstance(params, (list, tuple)):
        if len(params) != 2:
            raise ValueError("params as a list must be [arg_params, aux_params]")
        params = {**params[0], **params[1]}
    if not isinstance(params, dict):
        raise ValueError("Input sym and params should either be files or objects")
    out = {}
    for k, v in params.items():
        name = k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k
        out[name] = v.asnumpy() if isinstance(v, NDArray) else np.asarray(v)
    return out


def _to_external_data(model, location: str, path: str, threshold: int = 1024) -> None:
    """Move every initializer of ``threshold`` bytes or more to ``location`` (beside ``path``), written
    atomically; the tensors keep offset and length into it, as ``onnx.save_model(save_as_external_data=True)``
    would write them (onnx's writer appends to an existing file in place)."""
    from onnx.external_data_helper import set_external_data

    offset = 0
    with AtomicFile(os.path.join(os.path.dirname(os.path.abspath(path)), location)) as f:
        for t in model.graph.initializer:
            if t.HasField("raw_data") and len(t.raw_data) >= threshold:
                pad = -offset % 4096  # aligned, as onnx aligns tensors that share one file
                f.write(b"\0" * pad)
                offset += pad
                f.write(t.raw_data)
                set_external_data(t, location, offset, len(t.raw_data))
                offset += len(t.raw_data)
                t.ClearField("raw_data")


def export_model(sym, params, in_shapes=None, in_types=np.float32, onnx_file_path="model.onnx", verbose=False,
                 dynamic=False, dynamic_input_shapes=None, run_shape_inference=False, input_type=None,
                 input_shape=None, large_model=False, opset_version=None, keep_initializers_as_inputs=True):
    """Export ``sym`` (a Symbol or a ``-symbol.json`` path) with ``params`` (a dict, ``[arg, aux]`` or a
    ``.params`` path) to ``onnx_file_path``; returns the path.

    ``in_shapes``/``in_types`` describe the data inputs (the symbol's inputs that are not
    parameters, in ``list_inputs`` order, without the output layer's ``<name>_label``);
    ``dynamic=True`` leaves every input dimension free (or as ``dynamic_input_shapes`` says,
    None marking a free one); ``large_model=True`` (or a model over 2 GB) writes the tensors
    to ``<file>.data`` beside the model. ``opset_version`` is 12 to 17 (default 13).
    ``keep_initializers_as_inputs`` lists the initializers among the graph inputs as MXNet's
    exporter does (MXNet 1.9.1's importer needs it). ``input_type``/``input_shape`` are the
    old names of ``in_types``/``in_shapes``.
    """
    onnx = _onnx()
    from onnx import helper

    from .write import build_graph

    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset not in OPSETS:
        raise ValueError(f"opset_version must be in 12..17, got {opset}")
    if isinstance(sym, (str, os.PathLike)):
        sym = sym_load(os.fspath(sym))
    if not isinstance(sym, Symbol):
        raise ValueError("Input sym and params should either be files or objects")
    weights = _load_params(params)
    if in_shapes is None:
        raise ValueError("in_shapes is required: the shapes of the data inputs, e.g. [(1, 3, 224, 224)]")
    in_shapes = [tuple(s) for s in in_shapes]
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(in_shapes)
    if len(in_types) != len(in_shapes):
        raise ValueError("The lengths of in_types and in_shapes must equal")
    if not dynamic and dynamic_input_shapes is not None:
        raise ValueError("dynamic_input_shapes is given: set dynamic=True to use it")
    heads = sym._heads
    label = heads[-1][0].name + "_label"
    data_names = [n for n in sym.list_inputs() if n not in weights and n != label]  # MXNet's order
    if len(data_names) != len(in_shapes):
        raise ValueError(f"the symbol has {len(data_names)} data inputs {data_names} but in_shapes gives "
                         f"{len(in_shapes)} shapes")
    g = IndexedGraph(sym)
    inputs = set(sym.list_inputs())
    known_shapes = {**{n: v.shape for n, v in weights.items() if n in inputs},
                    **dict(zip(data_names, in_shapes, strict=True))}
    known_types = {**{n: v.dtype for n, v in weights.items() if n in inputs},
                   **{n: np.dtype(t) for n, t in zip(data_names, in_types, strict=True)}}
    infer_shape(sym, (), known_shapes, True, graph=g)
    infer_type(sym, (), known_types, True, graph=g)
    if dynamic:
        graph_in_shapes = [tuple(None for _ in s) for s in in_shapes] if dynamic_input_shapes is None \
            else [tuple(s) for s in dynamic_input_shapes]
        if len(graph_in_shapes) != len(in_shapes):
            raise ValueError("The length of dynamic_input_shapes must equal to the length of in_shapes.")
    else:
        graph_in_shapes = in_shapes
    graph = build_graph(g, weights, data_names, graph_in_shapes, label, opset, dynamic,
                        keep_initializers_as_inputs, verbose)
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="mxasync",
                              ir_version=helper.find_min_ir_version_for(opsets))
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001 - MXNet's rule: keep the export when ONNX's inference fails
            log.info("Shape inference failed, original export is kept.")
    size = sum(t.ByteSize() for t in model.graph.initializer)
    path = os.fspath(onnx_file_path)
    if size < _TWO_GB:
        onnx.checker.check_model(model)  # in memory, before anything is written
    if large_model or size >= _TWO_GB:
        _to_external_data(model, os.path.basename(path) + ".data", path)
    with AtomicFile(path) as f:  # the previous model stays whole until the new one is complete
        f.write(model.SerializeToString())
    if size >= _TWO_GB:
        onnx.checker.check_model(path)  # too big to check in memory
    log.info("Input shape of the model %s; exported ONNX file %s", in_shapes, path)
    return path
