"""What each op parameter means, for the generated docstrings.

A field's own ``Field(description=...)`` wins; then a row for ``(op, field)`` (where one
name means different things in different ops); then the row for the field name, which
holds wherever the name is used in MXNet's op library. ``tests/operator`` checks that
every parameter of every registered op has a meaning.
"""

from __future__ import annotations

import types
import typing

__all__ = ["describe_field", "describe_input", "describe_type", "sentence"]

_AXIS = "the axis to work along (negative counts from the end)"
_OPT = "optimizer update: "

FIELD_DOCS: dict[str, str] = {
    # shapes, axes, dtypes, contexts
    "axis": _AXIS,
    "axes": "the axes to work on (empty: all)",
    "keepdims": "keep the reduced axes as size-1 dimensions",
    "exclude": "reduce over every axis except those in ``axis``",
    "shape": "the output shape",
    "dtype": "the output data type",
    "out_dtype": "the data type of the result",
    "ctx": "the context (device) the output is created on",
    "num_args": "the number of array inputs",
    "num_outputs": "the number of outputs to split into",
    "squeeze_axis": "drop the split axis when each part has length 1",
    "dim": "the axis to concatenate along",
    "dim1": "the first axis to swap",
    "dim2": "the second axis to swap",
    "axis1": "the first axis of the 2-D planes",
    "axis2": "the second axis of the 2-D planes",
    "begin": "the start index of each sliced axis (None: from the start)",
    "end": "the stop index of each sliced axis, exclusive (None: to the end)",
    "step": "the step of each sliced axis (None: 1)",
    "size": "the new length of each broadcast axis",
    "reps": "how many times to repeat along each axis",
    "repeats": "how many times to repeat each element",
    "reverse": "apply the special values of ``shape`` from right to left",
    "target_shape": "the output's spatial shape (overrides ``pad``)",
    "lhs_axes": "the axes of the input to broadcast",
    "rhs_axes": "the axes of the shape-giving input to broadcast to",
    "lhs_begin": "first axis of the input to reshape",
    "lhs_end": "end (exclusive) of the input's axes to reshape",
    "rhs_begin": "first axis of the shape-giving input to copy",
    "rhs_end": "end (exclusive) of the shape-giving input's axes to copy",
    "indices_or_sections": "split points along ``axis``, or the number of equal sections",
    "sections": "the number of equal sections (0: use ``indices``)",
    "indices": "the split points along ``axis``",
    "block_size": "the edge of the spatial blocks moved to or from the channel axis",
    "depth": "the length of the one-hot axis",
    "on_value": "the value at the index",
    "off_value": "the value everywhere else",
    # scalars and elementwise
    "scalar": "the scalar operand",
    "is_int": "the scalar is an integer (keeps integer results for integer arrays)",
    "a_min": "the lower clipping bound",
    "a_max": "the upper clipping bound",
    "ord": "the order of the norm (1 or 2)",
    "temperature": "divides the input before the softmax (None: 1)",
    "use_length": "take a second input with the valid length of each slice",
    "is_ascend": "sort in ascending order",
    "ret_typ": "what to return: 'value', 'indices', 'mask' or 'both'",
    # creation and sampling
    "start": "the first value",
    "stop": "the end of the range, exclusive (None: ``start`` is the end and the range starts at 0)",
    "repeat": "how many times each value is repeated",
    "infer_range": "infer ``stop`` from the output shape (symbolic use)",
    "N": "the number of rows",
    "M": "the number of columns (0: same as ``N``)",
    "low": "the lower bound of the range",
    "high": "the upper bound of the range (exclusive for integers)",
    "loc": "the mean of the distribution",
    "lam": "the rate (lambda) of the distribution",
    "mu": "the mean of the distribution",
    "get_prob": "also return the log-probability of each draw",
    # dense, convolution, pooling
    "num_hidden": "the number of output units",
    "flatten": "collapse all axes but the first of the input before the product",
    "no_bias": "leave out the bias term",
    "kernel": "the size of the window along each spatial axis",
    "stride": "the step of the window along each spatial axis (empty: 1)",
    "dilate": "the spacing of the kernel's taps along each spatial axis (empty: 1)",
    "pad": "the zero padding added on both sides of each spatial axis (empty: 0)",
    "adj": "extra size added to one side of each spatial axis of the output",
    "num_filter": "the number of output channels",
    "num_group": "split the channels into this many groups, each convolved separately",
    "workspace": "temporary workspace limit in MB (kept for MXNet compatibility)",
    "cudnn_tune": "cuDNN algorithm selection policy (GPU only)",
    "cudnn_off": "do not use cuDNN (GPU only)",
    "layout": "the axis order of the data, e.g. 'NCHW' (None: the default for its rank)",
    "pool_type": "'max', 'avg', 'sum' or 'lp' pooling",
    "global_pool": "pool over the whole spatial extent (``kernel`` ignored)",
    "pooling_convention": "the output size: 'valid' rounds down, 'full' rounds up, 'same' keeps input size / stride",
    "p_value": "the power of Lp pooling",
    "count_include_pad": "average pooling divides by the full window, padding included",
    "sample_type": "'nearest' or 'bilinear' upsampling",
    "multi_input_mode": "how several inputs are merged: 'concat' or 'sum'",
    "pad_width": "padding before and after each axis, as (before0, after0, before1, after1, ...)",
    "constant_value": "the value padded in 'constant' mode",
    # normalisation and activations
    "eps": "a small constant added to the variance for numerical stability",
    "fix_gamma": "fix the scale gamma at 1 (its gradient is zero)",
    "use_global_stats": "normalise with the moving statistics, also in training",
    "output_mean_var": "also output the batch mean and variance",
    "min_calib_range": "quantisation calibration minimum (kept for MXNet compatibility)",
    "max_calib_range": "quantisation calibration maximum (kept for MXNet compatibility)",
    "act_type": "the activation function",
    "slope": "the slope of the negative part (leaky) or the scale (elu)",
    "lower_bound": "the lower bound of the random slope ('rrelu')",
    "upper_bound": "the upper bound of the random slope ('rrelu')",
    "knorm": "the constant k of local response normalisation",
    "nsize": "the number of neighbouring channels normalised together",
    "input_dim": "the vocabulary size (rows of the weight)",
    "output_dim": "the embedding size (columns of the weight)",
    "sparse_grad": "compute a row-sparse gradient for the weight (dense here)",
    # losses and outputs
    "grad_scale": "multiplies the gradient",
    "normalization": "how the gradient is normalised: 'null', 'batch' or 'valid'",
    "valid_thresh": "elements at or below this are not counted as valid ('valid' normalisation)",
    "ignore_label": "the label value whose gradient is zero (with ``use_ignore``)",
    "multi_output": "softmax over axis 1 for each of the remaining positions",
    "use_ignore": "give no gradient to labels equal to ``ignore_label``",
    "preserve_shape": "softmax over the last axis, keeping the input's shape",
    "out_grad": "multiply the gradient by the incoming head gradient",
    "smooth_alpha": "label smoothing: the probability mass spread over the other classes",
    "use_sequence_length": "take a second input with the length of each sequence",
    # linear algebra and products
    "transpose_a": "use the transpose of the first matrix",
    "transpose_b": "use the transpose of the second matrix",
    "transpose": "use the transpose of the matrix",
    "rightside": "multiply or solve from the right (B·op(A) instead of op(A)·B)",
    "lower": "use the lower triangle (False: the upper)",
    "offset": "which diagonal: 0 the main one, >0 above it, <0 below it",
    "forward_stype": "the storage type of the output (dense only here)",
    # optimizer updates
    "lr": _OPT + "the learning rate",
    "wd": _OPT + "the weight decay (L2 penalty) coefficient",
    "rescale_grad": _OPT + "multiplies the gradient before anything else",
    "clip_gradient": _OPT + "clip the gradient to [-clip_gradient, clip_gradient] (negative: no clipping)",
    "lazy_update": _OPT + "update only the rows present in a sparse gradient (no effect on dense ones)",
    "momentum": _OPT + "the momentum coefficient",
    "epsilon": _OPT + "a small constant added to the denominator",
    "beta1": _OPT + "decay rate of the first moment estimate",
    "beta2": _OPT + "decay rate of the second moment estimate",
    "gamma1": _OPT + "decay rate of the squared-gradient average",
    "gamma2": _OPT + "the momentum of the update (centred RMSProp)",
    "clip_weights": _OPT + "clip the weights to [-clip_weights, clip_weights] (negative: no clipping)",
    "lrs": _OPT + "the learning rate of each weight",
    "wds": _OPT + "the weight decay of each weight",
    "num_weights": _OPT + "the number of weights updated together",
}

OP_FIELD_DOCS: dict[tuple[str, str], str] = {
    ("BatchNorm", "axis"): "the channel axis",
    ("BatchNorm", "momentum"): "the momentum of the moving mean and variance",
    ("SequenceMask", "axis"): "the sequence (time) axis: 0 or 1",
    ("SequenceMask", "value"): "the value written at masked positions",
    ("_full", "value"): "the value to fill with",
    ("LRN", "alpha"): "the variance scaling alpha",
    ("LRN", "beta"): "the power beta",
    ("_linalg_gemm", "alpha"): "scales the product",
    ("_linalg_gemm", "beta"): "scales the added matrix C",
    ("_linalg_gemm", "axis"): "the axis of the row dimension of the matrices",
    ("_linalg_gemm2", "alpha"): "scales the product",
    ("_linalg_gemm2", "axis"): "the axis of the row dimension of the matrices",
    ("_linalg_syrk", "alpha"): "scales the product",
    ("_linalg_trmm", "alpha"): "scales the product",
    ("_linalg_trsm", "alpha"): "scales the right-hand side",
    ("_random_gamma", "alpha"): "the shape of the gamma distribution",
    ("_random_gamma", "beta"): "the scale of the gamma distribution",
    ("_random_generalized_negative_binomial", "alpha"): "the dispersion of the distribution",
    ("_random_negative_binomial", "k"): "the number of failures before the experiment stops",
    ("_random_negative_binomial", "p"): "the success probability of each trial",
    ("_random_normal", "scale"): "the standard deviation of the distribution",
    ("UpSampling", "scale"): "the upsampling factor",
    ("UpSampling", "num_filter"): "the input's channels (bilinear upsampling weight)",
    ("UpSampling", "workspace"): "temporary workspace limit in MB (kept for MXNet compatibility)",
    ("_eye", "k"): "the diagonal of ones: 0 the main one, >0 above it, <0 below it",
    ("diag", "k"): "which diagonal: 0 the main one, >0 above it, <0 below it",
    ("topk", "k"): "how many elements to take (0 or less: all)",
    ("Dropout", "p"): "the fraction of the input dropped during training",
    ("Dropout", "mode"): "'training': drop only in training; 'always': also at inference",
    ("Dropout", "axes"): "the axes along which one mask value is shared",
    ("L2Normalization", "mode"): "normalise each 'instance', each 'channel' or each 'spatial' position",
    ("Pad", "mode"): "'constant', 'edge' or 'reflect' padding",
    ("SoftmaxActivation", "mode"): "'instance': softmax over all but the first axis; 'channel': over axis 1",
    ("pick", "mode"): "out-of-range indices: 'clip' to the range or 'wrap' around",
    ("take", "mode"): "out-of-range indices: 'clip', 'wrap' or 'raise'",
    ("pick", "axis"): "the axis to pick along (None: flattened input)",
    ("Reshape", "shape"): "the target shape; 0 copies a dimension, -1 infers one, -2, -3, -4 as in MXNet",
    ("Reshape", "target_shape"): "deprecated (MXNet's old form): the target shape, a single 0 inferred",
    ("Reshape", "keep_highest"): "deprecated, with ``target_shape``: keep the input's first dimension",
    ("slice_like", "axes"): "the axes to slice (empty: all)",
    ("transpose", "axes"): "the new order of the axes (empty: reversed)",
    ("_arange", "step"): "the spacing between values",
    ("broadcast_axis", "axis"): "the axes (of length 1) to broadcast",
    ("expand_dims", "axis"): "the position of the new axis",
}


# What an op's array input is, by name (then by op where one name means different things): the
# "Parameters" section of the generated docstrings lists these before the params.
INPUT_DOCS: dict[str, str] = {
    "data": "the input array", "a": "the input array", "x": "the input array", "A": "the first matrix",
    "B": "the second matrix", "b": "the second input",
    "lhs": "the left operand (broadcast against rhs where the op broadcasts)", "rhs": "the right operand",
    "input1": "the first input", "input2": "the second input", "data1": "the first input", "data2": "the second input",
    "weight": "the weight", "bias": "the bias", "gamma": "the scale, one per channel",
    "beta": "the shift, one per channel", "label": "the labels", "indices": "the indices to pick or gather",
    "index": "the indices", "grad": "the gradient of the weight", "mom": "the momentum state, updated in place",
    "mean": "the running or first-moment state", "var": "the running or second-moment state",
    "weight32": "the float32 master copy of a float16 weight, updated in place",
    "sequence_length": "the length of each sequence in the batch (used with use_sequence_length)",
    "condition": "where true, take the first input; elsewhere the second", "mask": "the mask",
    "state": "the initial hidden state", "state_cell": "the initial cell state (LSTM)",
    "parameters": "every weight and bias of the layers, packed in one array", "rois": "the regions of interest",
    "sample": "the points at which to evaluate the distribution", "low": "the lower bounds", "high": "the upper bounds",
    "mu": "the means", "sigma": "the standard deviations", "alpha": "the first shape parameter",
    "lam": "the rates", "moving_mean": "the running mean (an auxiliary state)",
    "moving_var": "the running variance (an auxiliary state)", "history": "the accumulated squared gradients",
}
OP_INPUT_DOCS: dict[tuple[str, str], str] = {
    ("Convolution", "data"): "the input, (N, C, *spatial) in the layout given (NCHW for 2-D)",
    ("Convolution", "weight"): "the filters, (num_filter, C / num_group, *kernel)",
    ("Convolution", "bias"): "one value per output channel, (num_filter,); left out with no_bias",
    ("Deconvolution", "data"): "the input, (N, C, *spatial)",
    ("Deconvolution", "weight"): "the filters, (C, num_filter / num_group, *kernel)",
    ("Deconvolution", "bias"): "one value per output channel, (num_filter,); left out with no_bias",
    ("FullyConnected", "data"): "the input, (N, ...): flattened to (N, K) unless flatten=False",
    ("FullyConnected", "weight"): "(num_hidden, K)",
    ("FullyConnected", "bias"): "(num_hidden,); left out with no_bias",
    ("Embedding", "data"): "the indices to look up, any shape", ("Embedding", "weight"): "(input_dim, output_dim)",
    ("BatchNorm", "data"): "the input; normalised along axis (1: channels)",
    ("SoftmaxOutput", "label"): "the class of each example (or its probabilities with a soft label)",
    ("RNN", "data"): "the input, (seq_len, N, input_size) in TNC layout",
    ("where", "x"): "the values where condition is true", ("where", "y"): "the values where condition is false",
}


def describe_input(op_name: str, arg: str) -> str:
    """The meaning of array input ``arg`` of op ``op_name`` (``Input.`` when nothing says more)."""
    return OP_INPUT_DOCS.get((op_name, arg)) or INPUT_DOCS.get(arg) or "input"


def describe_field(op_name: str, field_name: str, field) -> str | None:
    """The meaning of ``field_name`` in op ``op_name``, or None when nothing says."""
    return field.description or OP_FIELD_DOCS.get((op_name, field_name)) or FIELD_DOCS.get(field_name)


def describe_type(annotation) -> str:
    """A reader's name for a field's type: ``int or None``, ``tuple of int``, ``{'max', 'avg'}``.

    >>> import typing
    >>> describe_type(typing.Optional[int]), describe_type(tuple[int, ...]), describe_type(typing.Literal["a", "b"])
    ('int or None', 'tuple of int', "{'a', 'b'}")
    """
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return "{" + ", ".join(repr(a) for a in args) + "}"
    if origin is typing.Annotated:
        return describe_type(args[0])
    if origin in (typing.Union, types.UnionType):
        names = [describe_type(a) for a in args if a is not type(None)]
        names = [n.removesuffix(" or None") for n in names]
        return " or ".join(dict.fromkeys(names + (["None"] if type(None) in args else [])))
    if origin is tuple:
        inner = [describe_type(a) for a in args if a is not Ellipsis]
        return f"tuple of {inner[0]}" if inner and (Ellipsis in args or len(set(inner)) == 1) else "tuple"
    if origin in (list, typing.List):  # noqa: UP006 - both spellings occur in annotations
        return f"list of {describe_type(args[0])}" if args else "list"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def sentence(text: str) -> str:
    """``text`` as a sentence: a capital first letter (unless the word is a name like cuDNN) and a full stop."""
    first = text.split(" ", 1)[0]
    if first.islower():
        text = text[0].upper() + text[1:]
    return text if text.endswith(".") else text + "."
