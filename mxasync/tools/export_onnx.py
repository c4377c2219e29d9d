"""``mxasync export-onnx``: a checkpoint (``PREFIX-symbol.json`` + ``PREFIX-EPOCH.params``) to ONNX.

    mxasync export-onnx model 10 --input-shape 1,3,224,224 --dynamic -o model.onnx

Several data inputs take several ``--input-shape`` (and ``--input-type``) options, in the order
of the symbol's inputs. Exit status 0 on success, 1 when the export fails (the message says why),
2 for bad arguments or missing files.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

import numpy as np

__all__ = ["main"]


def _shape(text: str) -> tuple[int, ...]:
    """``1,3,224,224`` or ``1x3x224x224``: every part an integer (``1,x`` is no shape, not ``(1,)``)."""
    try:
        dims = tuple(int(d) for d in re.split(r"[,x]", text.strip()))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a shape like 1,3,224,224 (every dimension an "
                                         f"integer)") from None
    if not dims or any(d <= 0 for d in dims):
        raise argparse.ArgumentTypeError(f"{text!r} is not a shape of positive sizes like 1,3,224,224")
    return dims


def _dtype(text: str) -> np.dtype:
    try:
        return np.dtype(text)
    except TypeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a dtype (float32, float16, int32, ...)") from None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mxasync export-onnx", description="Export a checkpoint to ONNX.")
    p.add_argument("prefix", help="checkpoint prefix: PREFIX-symbol.json and PREFIX-EPOCH.params")
    p.add_argument("epoch", type=int, help="the epoch of the parameters file")
    p.add_argument("--input-shape", type=_shape, action="append", required=True, metavar="SHAPE",
                   help="shape of a data input, e.g. 1,3,224,224 (repeat for several inputs)")
    p.add_argument("--input-type", type=_dtype, action="append", metavar="DTYPE",
                   help="dtype of a data input (default float32; repeat for several inputs)")
    p.add_argument("-o", "--output", help="the ONNX file (default PREFIX.onnx)")
    p.add_argument("--opset", type=int, default=None, choices=range(12, 18), metavar="12..17",
                   help="ONNX opset version (default 13)")
    p.add_argument("--dynamic", action="store_true", help="leave every input dimension free (batch size...)")
    p.add_argument("--large-model", action="store_true", help="write the tensors to OUTPUT.data beside the model")
    p.add_argument("--verbose", action="store_true", help="log each converted node")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    sym_file, params_file = f"{args.prefix}-symbol.json", f"{args.prefix}-{args.epoch:04d}.params"
    for path in (sym_file, params_file):
        if not os.path.isfile(path):
            parser.error(f"no checkpoint file {path}")
    types = args.input_type or [np.dtype(np.float32)] * len(args.input_shape)
    if len(types) != len(args.input_shape):
        parser.error(f"{len(args.input_shape)} --input-shape but {len(types)} --input-type options")
    output = args.output or f"{args.prefix}.onnx"
    from ..base import MXAsyncError
    from ..onnx import export_model

    try:
        export_model(sym_file, params_file, args.input_shape, list(types), output, verbose=args.verbose,
                     dynamic=args.dynamic, large_model=args.large_model, opset_version=args.opset)
    except (MXAsyncError, ValueError, ImportError, OSError) as e:
        print(f"mxasync export-onnx: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
