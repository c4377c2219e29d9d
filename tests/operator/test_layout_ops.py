"""The ops of ``ops_like.py``, ``ops_layout.py`` and ``ops_misc.py`` against the real MXNet 1.9.1.

``fixtures_layout/mxnet_ref.npz`` holds outputs and autograd gradients recorded from
MXNet (``fixtures_layout/make_fixtures.py``); the other tests pin shapes, errors and
the front ends.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from harness import backward, forward, prepare
from mxnet_cases import load_cases, numbered

import mxasync as mx
from mxasync.base import MXAsyncError
from mxasync.operator import get_op

FIXTURE = Path(__file__).parent / "fixtures_layout" / "mxnet_ref.npz"
RTOL, ATOL = 1e-5, 1e-6  # float32 layout ops are exact; softmin within rounding


CASES = load_cases(FIXTURE)


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_mxnet(case):
    a = CASES[case]
    spec = a["spec"]
    inputs, heads = numbered(a, "in"), numbered(a, "head")
    outs = forward(spec["op"], spec["params"], [x.copy() for x in inputs])
    expected = numbered(a, "out")
    assert len(outs) == len(expected), case
    for o, e in zip(outs, expected, strict=True):
        assert o.shape == e.shape and o.dtype == e.dtype, f"{case}: {o.shape} {o.dtype} != {e.shape} {e.dtype}"
        np.testing.assert_allclose(o, e, rtol=RTOL, atol=ATOL, err_msg=case)
    if not spec["grads"]:
        return
    grads = backward(spec["op"], spec["params"], inputs, outs, heads)
    for i in spec["grads"]:
        np.testing.assert_allclose(grads[i], a[f"grad{i}"], rtol=RTOL, atol=ATOL, err_msg=f"{case}: grad {i}")


@pytest.mark.parametrize("op,params,shapes,msg", [
    ("SwapAxis", dict(dim1=5), [(2, 3, 4)], r"SwapAxis: dim1=5 is out of range for a 3-D input of shape \(2, 3, 4\)"),
    ("swapaxes", dict(dim2=-4), [(2, 3, 4)], r"SwapAxis: dim2=-4 is out of range"),
    ("reverse", dict(axis=3), [(2, 3, 4)], r"reverse: axis=\(3,\) is out of range for a 3-D input"),
    ("Pad", dict(mode="edge", pad_width=(0, 0, 1, 1, 1, 1)), [(2, 3, 4)],
     r"Pad: data has shape \(2, 3, 4\); Pad supports only 4-D and 5-D inputs"),
    ("Pad", dict(mode="constant", pad_width=(0, 0, 0, 0, 1, 2)), [(1, 2, 3, 4)],
     r"Pad: pad_width=\(0, 0, 0, 0, 1, 2\) has 6 values but the 4-D data of shape \(1, 2, 3, 4\) needs 8"),
    ("pad", dict(mode="constant", pad_width=(0, 0, 1, 0, 1, 1, 1, 1)), [(1, 2, 3, 4)],
     r"Pad: pad_width=\(0, 0, 1, 0, 1, 1, 1, 1\): the first two axes"),
    ("Pad", dict(mode="reflect", pad_width=(0, 0, 0, 0, 3, 0, 0, 0)), [(1, 2, 3, 4)],
     r"Pad: mode='reflect' needs widths smaller than the input.*axis 2 of size 3"),
    ("Pad", dict(mode="wrap", pad_width=(0,) * 8), None, r"Pad: mode='wrap'"),
    ("depth_to_space", dict(block_size=3), [(2, 8, 2, 3)],
     r"depth_to_space: block_size=3: the 8 channels of data \(2, 8, 2, 3\) are not a multiple of block_size\^2=9"),
    ("depth_to_space", dict(block_size=2), [(4, 2, 2)], r"depth_to_space: data has shape \(4, 2, 2\); it needs a 4-D"),
    ("space_to_depth", dict(block_size=3), [(1, 2, 4, 6)],
     r"space_to_depth: block_size=3 does not divide the height 4 and width 6 of data \(1, 2, 4, 6\)"),
    ("space_to_depth", dict(block_size=0), None, r"space_to_depth: block_size=0"),
    ("broadcast_like", {}, [(3,), (2, 3)], r"broadcast_like: lhs of shape \(3,\) cannot be broadcast to rhs's "
                                           r"shape \(2, 3\)"),
    ("broadcast_like", dict(lhs_axes=(0,), rhs_axes=(0, 1)), [(1, 3, 1), (2, 4)],
     r"broadcast_like: lhs_axes=\(0,\) and rhs_axes=\(0, 1\) must be non-empty and of the same length"),
    ("broadcast_like", dict(lhs_axes=(5,), rhs_axes=(0,)), [(1, 3, 1), (2, 4)],
     r"broadcast_like: lhs_axes=\(5,\): axis 5 is out of range for a 3-D input of shape \(1, 3, 1\)"),
    ("broadcast_like", dict(lhs_axes=(0,), rhs_axes=(0,)), [(2, 3, 1), (5, 4)],
     r"broadcast_like: axis 0 of lhs \(2, 3, 1\) has size 2 and cannot be broadcast to 5"),
    ("reshape_like", {}, [(2, 3, 4), (6, 5)],
     r"reshape_like: cannot reshape lhs of shape \(2, 3, 4\) \(24 elements\) to \(6, 5\) \(30 elements\)"),
    ("reshape_like", dict(lhs_begin=-4), [(2, 3, 4), (2, 3, 4)],
     r"reshape_like: lhs_begin=-4 is out of range for the 3-D lhs of shape \(2, 3, 4\)"),
    ("reshape_like", dict(rhs_end=3), [(2, 3, 4), (6, 4)], r"reshape_like: rhs_end=3 is out of range for the 2-D rhs"),
    ("reshape_like", dict(lhs_begin=2, lhs_end=1), [(2, 3, 4), (6, 4)],
     r"reshape_like: lhs_begin=2, lhs_end=1 select no axes"),
    ("slice_like", {}, [(2, 3, 4), (1, 2)], r"slice_like: without axes, data \(2, 3, 4\) and shape_like \(1, 2\)"),
    ("slice_like", dict(axes=(2,)), [(2, 3, 4), (1, 2)],
     r"slice_like: axes=\(2,\): axis 2 is out of range for shape_like of shape \(1, 2\)"),
    ("slice_like", {}, [(2, 3, 4), (3, 2, 3)],
     r"slice_like: axis 0 of shape_like \(3, 2, 3\) has size 3, larger than 2 in data"),
    ("softmin", dict(axis=2), [(2, 3)], r"softmin: axis=2 is out of range for a 2-D input of shape \(2, 3\)"),
    ("softmin", dict(use_length=True), [(2, 3)], r"softmin: use_length=True is not supported"),
    ("argmax_channel", {}, [(3,)], r"argmax_channel: data has shape \(3,\); it needs at least 2 dimensions"),
    ("split_v2", dict(indices_or_sections=4), [(6, 4)],
     r"_split_v2: 4 sections do not divide axis 0 of size 6 of data \(6, 4\) equally"),
    ("split_v2", dict(indices_or_sections=(2, 8)), [(6, 4)],
     r"_split_v2: split boundaries \(2, 8\) must be sorted and within \[0, 6\].*part 1 would be \[2:8\]"),
    ("split_v2", dict(indices_or_sections=(3, 2)), [(6, 4)], r"part 1 would be \[3:2\]"),
    ("split_v2", dict(indices_or_sections=2, axis=1, squeeze_axis=True), [(6, 4)],
     r"_split_v2: squeeze_axis=True needs parts of size 1 along axis 1 of data \(6, 4\), part \[0:2\] has size 2"),
    ("_split_v2", dict(indices=(2, 4), axis=0), [(6, 4)], r"_split_v2: indices=\(2, 4\) must start at 0"),
    ("_split_v2", dict(indices=(0, 2), axis=5), [(6, 4)], r"_split_v2: axis=5 is out of range for a 2-D input"),
    ("_split_v2", {}, None, r"_split_v2: needs indices_or_sections"),
    ("split_v2", dict(indices_or_sections=2, sections=2), None, r"cannot be combined with"),
    ("_slice_assign", dict(begin=(1,), end=(3,)), [(4, 6), (2,)],
     r"_slice_assign: rhs has shape \(2,\) but begin=\(1,\), end=\(3,\), step=\(\) select \(2, 6\) from lhs of "
     r"shape \(4, 6\)"),
    ("_slice_assign", dict(begin=(1, 0, 0), end=(3, 1, 1)), [(4, 6), (2, 6)],
     r"_slice_assign: begin=\(1, 0, 0\) has more axes than the 2-D input of shape \(4, 6\)"),
    ("_slice_assign_scalar", dict(begin=(1, 0), end=(3, 6), step=(1, 0)), [(4, 6)],
     r"_slice_assign_scalar: step=\(1, 0\): a step cannot be 0"),
])
def test_errors_name_the_op_the_argument_and_the_shapes(op, params, shapes, msg):
    with pytest.raises(MXAsyncError, match=msg):
        prop = prepare(op, params)
        prop.list_outputs()
        prop.infer_shape(shapes)


def test_softmin_rejects_integers_and_sets_dtype():
    with pytest.raises(MXAsyncError, match="softmin: data has dtype int32; softmin needs a floating-point input"):
        prepare("softmin", {}).infer_type([np.dtype("int32")])
    assert prepare("softmin", dict(dtype="float64")).infer_type([np.float32])[1] == ["float64"]
    with pytest.raises(MXAsyncError, match="softmin: dtype='int8'"):
        prepare("softmin", dict(dtype="int8"))


def test_like_ops_keep_lhs_dtype_and_leave_rhs_dtype_free():
    for op in ("broadcast_like", "reshape_like", "slice_like"):
        assert prepare(op, {}).infer_type([np.float32, np.int32]) == ([np.float32, np.int32], [np.float32], [])


def test_names_and_aliases():
    for name, canon in [("flip", "reverse"), ("swapaxes", "SwapAxis"), ("pad", "Pad"), ("split_v2", "_split_v2"),
                        ("_crop_assign", "_slice_assign"), ("_crop_assign_scalar", "_slice_assign_scalar")]:
        assert get_op(name).name == canon
    for name in ("broadcast_like", "reshape_like", "slice_like", "reverse", "flip", "SwapAxis", "swapaxes", "Pad",
                 "pad", "softmin", "argmax_channel", "depth_to_space", "space_to_depth", "split_v2", "_split_v2",
                 "_slice_assign", "_slice_assign_scalar", "_crop_assign", "_crop_assign_scalar"):
        nd, sym = (mx.nd._internal, mx.sym._internal) if name.startswith("_") else (mx.nd, mx.sym)  # as MXNet
        assert callable(getattr(nd, name)) and callable(getattr(sym, name)), name
    assert get_op("slice_like").list_arguments() == ["data", "shape_like"]
    assert get_op("broadcast_like").list_arguments() == ["lhs", "rhs"]
    assert get_op("_slice_assign").list_arguments() == ["lhs", "rhs"]
    for extra in ("slice_assign", "slice_assign_scalar"):  # MXNet 1.9.1 has them only as _slice_assign*
        assert not hasattr(mx.nd, extra) and not hasattr(mx.sym, extra)


def test_nd_front_end():
    x = mx.nd.array(np.arange(24, dtype=np.float32).reshape(6, 4))
    parts = mx.nd.split_v2(x, indices_or_sections=(2, 3))
    assert [p.shape for p in parts] == [(2, 4), (1, 4), (3, 4)]
    np.testing.assert_array_equal(parts[1].asnumpy(), [[8, 9, 10, 11]])
    one = mx.nd.split_v2(x, indices_or_sections=1)  # one output: an NDArray, as MXNet
    assert isinstance(one, mx.nd.NDArray) and one.shape == (6, 4)
    np.testing.assert_array_equal(one.asnumpy(), x.asnumpy())
    y = mx.nd._internal._slice_assign(x, mx.nd.zeros((2, 4)), begin=(1,), end=(3,))
    assert y.asnumpy()[1:3].sum() == 0 and x.asnumpy()[1:3].sum() > 0  # a new array; x is unchanged
    np.testing.assert_array_equal(mx.nd.flip(x, axis=0).asnumpy(), x.asnumpy()[::-1])
    assert mx.nd.argmax_channel(x).asnumpy().tolist() == [3] * 6


def test_positional_params_follow_mxnets_python_order():
    x = mx.nd.array(np.arange(24, dtype=np.float32).reshape(6, 4))
    assert [p.shape for p in mx.nd.split_v2(x, 2, 1)] == [(6, 2), (6, 2)]  # (ary, indices_or_sections, axis)
    assert [p.shape for p in mx.nd.split_v2(x, (1, 3))] == [(1, 4), (2, 4), (3, 4)]
    z = mx.nd._internal._slice_assign_scalar(x, 5, (1,), (2,))  # (data, scalar, begin, end)
    np.testing.assert_array_equal(z.asnumpy()[1], [5, 5, 5, 5])
    assert mx.nd.pad(x.reshape((1, 1, 6, 4)), "edge", (0, 0, 0, 0, 1, 1, 1, 1)).shape == (1, 1, 8, 6)


def test_symbol_shapes_outputs_and_json_strings():
    d = mx.sym.Variable("d")
    s = mx.sym.split_v2(d, indices_or_sections=3, axis=1, name="s")
    assert s.list_outputs() == ["s_output0", "s_output1", "s_output2"]
    _, outs, _ = s.infer_shape(d=(2, 6))
    assert outs == [(2, 2)] * 3
    like = mx.sym.reshape_like(d, mx.sym.Variable("r"), lhs_begin=0, lhs_end=1, rhs_begin=0, rhs_end=2)
    assert like.infer_shape(d=(30, 7), r=(15, 2, 4))[1] == [(15, 2, 7)]
    p = mx.sym.Pad(d, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 2))
    assert p.infer_shape(d=(1, 2, 3, 4))[1] == [(1, 2, 5, 8)]
    raw = get_op("_split_v2").prepare(indices="(0, 1, 4)", axis="1", squeeze_axis="False", sections="0")
    assert raw.infer_shape([(2, 6, 3)])[1] == [(2, 1, 3), (2, 3, 3), (2, 2, 3)]
    assert get_op("reverse").prepare(axis="1").params.axis == (1,)
