"""``amp.convert_symbol`` / ``convert_model`` / ``convert_hybrid_block`` against graphs MXNet 1.9.1 converted
(tests/fixtures/amp/make_fixtures.py): the same nodes, the same casts at the same places, the same
``__dtype__`` on the inputs, the same parameter dtypes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx
from mxasync.contrib import amp

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "amp"
EXCLUDED = {"resnet18": ["resnetv10_stage1_conv0_fwd", "resnetv10_dense0_fwd"],
            "lstm_lm": ["pred", "lstm_l0_t1_i2h"]}
CASES = {"fp16": {"target_dtype": "float16"}, "bf16": {"target_dtype": "bfloat16"},
         "fp16-optional": {"target_dtype": "float16", "cast_optional_params": True},
         "bf16-optional": {"target_dtype": "bfloat16", "cast_optional_params": True},
         "fp16-excluded": {"target_dtype": "float16"}}


def _graph(doc: dict) -> list[tuple]:
    """The nodes as (op, name, attrs, input names), sorted.  A cast is named by its source entry and its
    target (MXNet names it ``<node>_<output name>_amp_cast_<dtype>``; output names of ops without
    declared ones are their index there, so only the source and the dtype are compared)."""
    nodes = doc["nodes"]

    def name(i: int, out: int = 0) -> str:
        n = nodes[i]
        if n["op"] == "amp_cast":
            return f"cast({name(*n['inputs'][0][:2])}->{n['attrs']['dtype']})"
        if n["op"] == "amp_multicast":
            return f"multicast({','.join(name(*e[:2]) for e in n['inputs'])})[{out}]"
        return n["name"] if out == 0 else f"{n['name']}[{out}]"

    return sorted((n["op"], name(i), json.dumps(n.get("attrs", {}), sort_keys=True),
                   tuple(name(*e[:2]) for e in n["inputs"])) for i, n in enumerate(nodes))


@pytest.mark.parametrize("model", ["resnet18", "lstm_lm"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_convert_symbol_matches_mxnet(model: str, case: str) -> None:
    sym = mx.sym.load(str(FIX / f"{model}-fp32-symbol.json"))
    before = sym.tojson()
    kwargs = dict(CASES[case])
    if case.endswith("excluded"):
        kwargs["excluded_sym_names"] = EXCLUDED[model]
    got = json.loads(amp.convert_symbol(sym, **kwargs).tojson(remove_amp_cast=False))
    want = json.loads((FIX / f"{model}-{case}-symbol.json").read_text())
    assert _graph(got) == _graph(want)
    assert sym.tojson() == before, "the input graph must be left as it was"


@pytest.mark.parametrize("target", ["float16", "bfloat16"])
def test_convert_model_casts_params_as_mxnet(target: str) -> None:
    sym = mx.sym.load(str(FIX / "resnet18-fp32-symbol.json"))
    shapes, _, aux_shapes = sym.infer_shape(data=(1, 3, 32, 32))
    args = {n: mx.nd.ones(s) * 0.01 for n, s in zip(sym.list_arguments(), shapes, strict=True) if n != "data"}
    auxs = {n: mx.nd.ones(s) for n, s in zip(sym.list_auxiliary_states(), aux_shapes, strict=True)}
    converted, args, auxs = amp.convert_model(sym, args, auxs, target_dtype=target, cast_optional_params=True)
    want = json.loads((FIX / f"resnet18-{target}-model-dtypes.json").read_text())
    assert {k: np.dtype(v.dtype).name for k, v in {**args, **auxs}.items()} == want
    out = converted.bind(mx.cpu(), {"data": mx.nd.ones((1, 3, 32, 32)), **args}, aux_states=auxs).forward()[0]
    assert out.dtype == np.float32 and out.shape == (1, 1000)


def test_convert_hybrid_block_matches_mxnet_and_runs() -> None:
    net = mx.gluon.model_zoo.vision.resnet18_v1(pretrained=False)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=(1, 3, 32, 32))
    want_out = net(x)
    block = amp.convert_hybrid_block(net, target_dtype="float16", cast_optional_params=True)
    names = {k.split("_", 1)[1] if k.startswith("resnetv1") else k: np.dtype(p.dtype).name
             for k, p in block.collect_params().items()}
    want = json.loads((FIX / "resnet18-hybrid-block-dtypes.json").read_text())
    assert names == {k.split("_", 1)[1]: v for k, v in want.items()}
    got = block(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.asnumpy(), want_out.asnumpy(), rtol=5e-2, atol=5e-2)


def test_list_functions_are_mxnets_lists() -> None:
    assert amp.list_lp16_ops("float16") == ["Convolution", "Deconvolution", "FullyConnected", "RNN"]
    assert amp.list_lp16_ops("bfloat16") == ["Convolution", "FullyConnected"]
    assert ("Activation", "act_type", ["softrelu"]) in amp.list_conditional_fp32_ops("float16")
    assert "elemwise_add" in amp.list_widest_type_cast("float16")
    assert amp.list_lp16_use_fp32_params("float16") is None
    assert amp.list_lp16_use_fp32_params("bfloat16")["BatchNorm"][0] == ""
    assert "SoftmaxOutput" in amp.list_loss_output_functions("bfloat16")


def test_convert_symbol_checks_lists_as_mxnet() -> None:
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2)
    with pytest.raises(AssertionError, match="Ops cannot be in two or more lists"):
        amp.convert_symbol(sym, target_dtype_ops=["FullyConnected"], fp32_ops=["FullyConnected"])
    with pytest.raises(AssertionError, match="not_an_op"):
        amp.convert_symbol(sym, target_dtype_ops=["not_an_op"])
    with pytest.raises(AssertionError):
        amp.convert_symbol(sym, target_dtype="float64")


def test_tojson_removes_casts_by_default_as_mxnet() -> None:
    sym = mx.sym.load(str(FIX / "resnet18-fp32-symbol.json"))
    converted = amp.convert_symbol(sym, target_dtype="float16")
    stripped = json.loads(converted.tojson())
    kept = json.loads(converted.tojson(remove_amp_cast=False))
    # MXNet 1.9.1 writes only the output cast by default (its RemoveAmpCast rewires consumers, not heads)
    assert [n["name"] for n in stripped["nodes"] if n["op"] == "amp_cast"] == \
        ["resnetv10_dense0_fwd_output_amp_cast_float32"]
    assert sum(n["op"] == "amp_cast" for n in kept["nodes"]) == 24
    assert "amp_cast" in converted.tojson(remove_amp_cast=False)  # the graph itself keeps its casts


def test_convert_bucketing_module() -> None:
    def sym_gen(key):
        fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4, name="fc")
        return mx.sym.SoftmaxOutput(fc, name="softmax"), ("data",), ("softmax_label",)

    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=5)
    mod.bind(data_shapes=[("data", (2, 5))], label_shapes=[("softmax_label", (2,))])
    mod.init_params()
    low = amp.convert_bucketing_module(mod, target_dtype="float16", cast_optional_params=True)
    assert list(low._buckets) == [5]
    assert {k: np.dtype(v.dtype).name for k, v in low._curr_module._arg_params.items()} == \
        {"fc_weight": "float16", "fc_bias": "float16"}
    assert "amp_cast" in low._buckets[5]._symbol.tojson(remove_amp_cast=False)
