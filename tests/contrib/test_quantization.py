"""``mx.contrib.quantization``: our flow on the float nets of tests/fixtures/quantization gives the
graph MXNet 1.9.1's ``quantize_net`` wrote (same fused nodes, names and attributes), its
thresholds and its outputs."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import mxasync as mx
from mxasync.contrib import quantization as q

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "quantization"


def _fp32(net):
    return mx.gluon.SymbolBlock.imports(str(FIXTURES / f"{net}-fp32-symbol.json"), ["data"],
                                        str(FIXTURES / f"{net}-fp32-0000.params"))


def _nodes(path):
    return {n["name"]: n for n in json.loads(pathlib.Path(path).read_text())["nodes"] if n["op"] != "null"}


def _assert_close_to_mxnet(out, want):
    """Our thresholds come from our float layers, equal to MXNet's to float32 rounding; where that
    rounding moves an int8 value by one step, the change carries to the output: nearly every value
    is MXNet's exactly, the rest within a few percent of the output's scale."""
    assert np.mean(out == want) > 0.8
    np.testing.assert_allclose(out, want, atol=0.05 * np.abs(want).max())


def _quantize(net, calib, tmp_path):
    with np.load(FIXTURES / f"{net}-io.npz") as d:
        x, want = d["calib"], d[calib]
    data = mx.nd.array(x)
    qnet = q.quantize_net(_fp32(net), quantized_dtype="auto", calib_mode=calib,
                          calib_data=mx.io.NDArrayIter(data, batch_size=4), num_calib_examples=8, ctx=mx.cpu())
    qnet.export(str(tmp_path / "q"), 0)
    return qnet(data).asnumpy(), want, _nodes(tmp_path / "q-symbol.json")


@pytest.mark.parametrize("net", ["resnet", "mobilenet"])
def test_naive_calibration_gives_mxnets_graph_and_outputs(net, tmp_path):
    out, want, ours = _quantize(net, "naive", tmp_path)
    theirs = _nodes(FIXTURES / f"{net}-naive-symbol.json")
    assert set(ours) == set(theirs)
    for name, node in theirs.items():
        assert ours[name]["op"] == node["op"], name
        mine = ours[name].get("attrs", {})
        for key, value in node.get("attrs", {}).items():
            if key.endswith("calib_range"):  # ours come from our float layers: equal to float32 rounding
                np.testing.assert_allclose(float(mine[key]), float(value), rtol=1e-5, atol=1e-6, err_msg=name)
            else:
                assert mine.get(key) == value, f"{name}: {key}"
        if node.get("subgraphs"):
            ops = [(n["op"], n.get("attrs")) for n in node["subgraphs"][0]["nodes"]]
            assert [(n["op"], n.get("attrs")) for n in ours[name]["subgraphs"][0]["nodes"]] == ops
    _assert_close_to_mxnet(out, want)


@pytest.mark.slow
def test_entropy_calibration_gives_mxnets_thresholds(tmp_path):
    out, want, ours = _quantize("resnet", "entropy", tmp_path)
    for name, node in _nodes(FIXTURES / "resnet-entropy-symbol.json").items():
        for key in ("min_calib_range", "max_calib_range"):
            if key in node.get("attrs", {}):
                np.testing.assert_allclose(float(ours[name]["attrs"][key]), float(node["attrs"][key]), rtol=1e-5,
                                           atol=1e-6, err_msg=name)
    _assert_close_to_mxnet(out, want)


def test_entropy_threshold_of_a_recorded_histogram():
    collector = q.LayerHistogramCollector(num_bins=1001, include_layer=["x"])
    rng = np.random.default_rng(0)
    for _ in range(3):
        collector.collect("x", mx.nd.array(np.maximum(rng.standard_normal(5000), 0) * 2))
    (lo, hi), = q.optimal_thresholds(collector.hist_dict, "auto").values()
    assert lo == 0 and 2 < hi < collector.hist_dict["x"][4]  # clips the tail, below the largest value


def test_quantize_model_mkldnn_with_excluded_layer_and_no_calibration():
    sym, args, aux = mx.model.load_checkpoint(str(FIXTURES / "resnet-fp32"), 0)
    fused_name = "sg_mkldnn_conv_bn_act_1"
    qsym, qargs, qaux = q.quantize_model_mkldnn(sym, args, aux, ctx=mx.cpu(), calib_mode="none",
                                                excluded_sym_names=[fused_name], quantized_dtype="int8")
    nodes = json.loads(qsym.tojson())["nodes"]
    ops = {n["name"]: n["op"] for n in nodes}
    assert ops[fused_name] == "_sg_mkldnn_conv" and f"quantized_{fused_name}" not in ops
    assert "_contrib_requantize" in ops.values()  # uncalibrated: int32 results requantized at run time
    with np.load(FIXTURES / "resnet-io.npz") as d:
        x, fp32 = d["calib"], d["fp32"]
    exe = qsym.bind(mx.cpu(), {**qargs, "data": mx.nd.array(x)}, aux_states=qaux, grad_req="null")
    out = exe.forward()[0].asnumpy()
    assert np.abs(out - fp32).max() < 0.1 * np.abs(fp32).max()


def test_calibration_data_from_a_dataloader():
    with np.load(FIXTURES / "resnet-io.npz") as d:
        x, want = d["calib"], d["naive"]
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.zeros(len(x))), batch_size=4)
    qnet = q.quantize_net_v2(_fp32("resnet"), calib_mode="naive", calib_data=loader, ctx=mx.cpu())
    _assert_close_to_mxnet(qnet(mx.nd.array(x)).asnumpy(), want)


def test_bad_arguments_name_what_is_wrong():
    sym, args, aux = mx.model.load_checkpoint(str(FIXTURES / "resnet-fp32"), 0)
    with pytest.raises(ValueError, match="quantized_dtype"):
        q.quantize_model(sym, args, aux, quantized_dtype="int4", calib_mode="none")
    with pytest.raises(ValueError, match="calib_data"):
        q.quantize_model(sym, args, aux, calib_mode="naive")


def test_channel_wise_granularity_gives_mxnets_outputs():
    with np.load(FIXTURES / "resnet-io.npz") as d:
        x, want = d["calib"], d["naive_channel_wise"]
    qnet = q.quantize_net_v2(_fp32("resnet"), quantize_granularity="channel-wise", calib_mode="naive",
                             calib_data=mx.io.NDArrayIter(mx.nd.array(x), batch_size=4), ctx=mx.cpu())
    _assert_close_to_mxnet(qnet(mx.nd.array(x)).asnumpy(), want)


def test_quantize_model_without_fusion_uses_the_plain_quantized_ops():
    sym, args, aux = mx.model.load_checkpoint(str(FIXTURES / "resnet-fp32"), 0)
    with np.load(FIXTURES / "resnet-io.npz") as d:
        x, fp32 = d["calib"], d["fp32"]
    calib = mx.io.NDArrayIter(mx.nd.array(x), batch_size=4)
    qsym, qargs, qaux = q.quantize_model(sym, args, aux, ctx=mx.cpu(), calib_mode="naive", calib_data=calib,
                                         quantized_dtype="int8", label_names=None)
    ops = {n["op"] for n in json.loads(qsym.tojson())["nodes"]}
    assert {"_contrib_quantized_conv", "_contrib_quantized_fully_connected", "_contrib_requantize"} <= ops
    exe = qsym.bind(mx.cpu(), {**qargs, "data": mx.nd.array(x)}, aux_states=qaux, grad_req="null")
    out = exe.forward()[0].asnumpy()
    assert np.abs(out - fp32).max() < 0.1 * np.abs(fp32).max()
