"""Symbol JSON against files written by the real MXNet 1.9.1 (see tests/fixtures/mxnet)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mxasync.base import MXAsyncError
from mxasync.symbol._json_format import JsonGraph, JsonNode, dump_graph, load_graph

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet"
MX_PYTHON = Path(os.environ.get("MXASYNC_MXNET_PYTHON", "/work/venvs/mx191/bin/python"))
MXNET_WRITTEN = [
    "lenet-symbol.json",
    "lenet-symbol-legacy.upgraded.json",
    "hidden-keys-v08.upgraded.json",
    "wide-symbol.json",
    "foreach-symbol.json",
]


def _text(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


def test_lenet_structure() -> None:
    g = load_graph(_text("lenet-symbol.json"))
    assert len(g.nodes) == 31
    ops = [n.op for n in g.nodes if not n.is_variable]
    assert ops == [
        "Convolution", "BatchNorm", "Activation", "Pooling", "Convolution", "Activation", "Pooling", "Flatten",
        "FullyConnected", "Activation", "Dropout", "FullyConnected", "FullyConnected", "elemwise_add", "SoftmaxOutput",
    ]
    assert g.heads == [(30, 0, 0)] and g.nodes[30].name == "softmax"
    assert g.mxnet_version == 10901
    args = [g.nodes[i].name for i in g.arg_nodes]
    assert args[:3] == ["data", "conv1_weight", "conv1_bias"] and args[-1] == "softmax_label"
    bn = next(n for n in g.nodes if n.op == "BatchNorm")
    assert bn.attrs == {"fix_gamma": "False"}
    assert [e[2] for e in bn.inputs] == [0, 0, 0, 1, 1]  # aux states are read at version 1
    assert g.nodes[1].attrs == {"kernel": "(5, 5)", "num_filter": "4"}
    shapes = json.loads(_text("lenet-shapes.json"))
    assert set(shapes["arg_shapes"]) | set(shapes["aux_shapes"]) == set(args)  # arg_nodes holds aux too


@pytest.mark.parametrize("name", MXNET_WRITTEN)
def test_dump_is_byte_identical_to_mxnet(name: str) -> None:
    text = _text(name)
    g = load_graph(text)
    assert dump_graph(g) == text
    assert load_graph(dump_graph(g)) == g


def test_subgraphs() -> None:
    g = load_graph(_text("foreach-symbol.json"))
    loop = g.nodes[2]
    assert loop.op == "_foreach" and len(loop.subgraphs) == 1
    sub = loop.subgraphs[0]
    assert sub.attrs == {} and sub.heads == [(3, 0, 0), (2, 0, 0)]
    assert sub.nodes[0].attrs == {"__subgraph_name__": "foreach0"}


def test_escaped_strings_survive() -> None:
    g = load_graph(_text("wide-symbol.json"))
    assert g.nodes[0].attrs["note"] == 'tab\there "q" back\\slash\nnl \u00fc'
    assert len(g.nodes[12].inputs) == 12 and len(g.heads) == 12


def test_legacy_param_attr_pairs() -> None:
    legacy = load_graph(_text("lenet-symbol-legacy.json"))
    modern = load_graph(_text("lenet-symbol-legacy.upgraded.json"))
    assert legacy.node_row_ptr is None and legacy.mxnet_version == 10901
    legacy.node_row_ptr = modern.node_row_ptr
    assert legacy == modern
    # without node_row_ptr the output counts come from a callback (the op registry's job)
    legacy.node_row_ptr = None
    rp = modern.node_row_ptr
    counts = {n.name: rp[i + 1] - rp[i] for i, n in enumerate(modern.nodes)}
    assert dump_graph(legacy, num_outputs=lambda n: counts[n.name]) == _text("lenet-symbol-legacy.upgraded.json")


def test_legacy_hidden_keys() -> None:
    g = load_graph(_text("hidden-keys-v08.json"))
    assert g.nodes[0].attrs == {"__ctx_group__": "dev1", "__lr_mult__": "0.5", "foo": "bar"}
    assert g.nodes[3].attrs["__ctx_group__"] == "dev2"  # the plain key wins, as in MXNet
    assert dump_graph(g) == _text("hidden-keys-v08.upgraded.json")
    # a current file keeps such keys as they are
    cur = json.loads(_text("hidden-keys-v08.upgraded.json"))
    cur["nodes"][0]["attrs"] = {"ctx_group": "x"}
    assert load_graph(json.dumps(cur)).nodes[0].attrs == {"ctx_group": "x"}


def test_attrs_attr_param_precedence() -> None:
    base = {"nodes": [{"op": "null", "name": "v", "inputs": []}], "arg_nodes": [0], "heads": [[0, 0, 0]],
            "attrs": {"mxnet_version": ["int", 10901]}}
    src = {"attrs": {"a": "attrs", "b": "attrs"}, "attr": {"a": "attr", "c": "attr"}, "param": {"b": "p", "d": "p"}}

    def attrs(*keys: str) -> dict:
        g = copy.deepcopy(base)
        g["nodes"][0] = {"op": "null", "name": "v", **{k: src[k] for k in keys}, "inputs": []}
        return load_graph(g).nodes[0].attrs

    # observed with MXNet 1.9.1: the later of attrs/attr replaces the other; param fills gaps
    assert attrs("attrs", "attr", "param") == {"a": "attr", "b": "p", "c": "attr", "d": "p"}
    assert attrs("attr", "param", "attrs") == {"a": "attrs", "b": "attrs", "d": "p"}


def test_build_and_dump_by_hand() -> None:
    g = JsonGraph(
        nodes=[JsonNode("null", "x"), JsonNode("null", "w", {"__lr_mult__": "2"}),
               JsonNode("FullyConnected", "fc", {"num_hidden": "3", "no_bias": "True"}, [(0, 0, 0), (1, 0, 0)])],
        arg_nodes=[0, 1],
        heads=[(2, 0, 0)],
    )
    text = dump_graph(g)
    assert '"node_row_ptr": [0, 1, 2, 3]' in text
    assert load_graph(text) == JsonGraph(g.nodes, g.arg_nodes, g.heads, g.attrs, [0, 1, 2, 3])
    g.attrs = {}
    assert '"mxnet_version": ["int", 10901]' in dump_graph(g)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda g: g["nodes"][3]["inputs"].__setitem__(0, [9, 0, 0]), r"node 3 \('fc'\) input 0: refers to node 9"),
        (lambda g: g["nodes"][3]["inputs"].__setitem__(0, [4, 0, 0]), r"node 3 \('fc'\) input 0: .*dangling"),
        (lambda g: g["nodes"][4]["inputs"].__setitem__(0, [3, 1, 0]), r"output 1 of node 3 \('fc'\), which has 1"),
        (lambda g: g["nodes"][4]["inputs"].__setitem__(0, [3]), r"node 4 \('act'\) input 0: an entry must be"),
        (lambda g: g["nodes"][3].pop("op"), r"node 3 \('fc'\): missing key \"op\""),
        (lambda g: g["nodes"][3].pop("inputs"), r"node 3 \('fc'\): missing key \"inputs\""),
        (lambda g: g["nodes"][3].pop("name"), r"node 3: missing key \"name\""),
        (lambda g: g["nodes"][3]["attrs"].__setitem__("num_hidden", 3), r"node 3 \('fc'\): \"attrs\" must map"),
        (lambda g: g["nodes"][3].__setitem__("extra", 1), r"node 3 \('fc'\): unknown keys \['extra'\]"),
        (lambda g: g.pop("heads"), r"missing key \"heads\""),
        (lambda g: g.pop("arg_nodes"), r"missing key \"arg_nodes\""),
        (lambda g: g.__setitem__("heads", [[7, 0, 0]]), r"head 0: refers to node 7"),
        (lambda g: g.__setitem__("arg_nodes", [0, 3]), r"node 3 \('fc'\) is an operator"),
        (lambda g: g.__setitem__("node_row_ptr", [0, 1]), r"node_row_ptr \[0, 1\] does not fit 5 nodes"),
        (lambda g: g["nodes"][4].__setitem__("control_deps", [4]), r"node 4 \('act'\): control dependency"),
    ],
)
def test_malformed(mutate, message: str) -> None:
    g = json.loads(_text("hidden-keys-v08.upgraded.json"))
    mutate(g)
    with pytest.raises(MXAsyncError, match=message):
        load_graph(json.dumps(g))


def test_not_json() -> None:
    with pytest.raises(MXAsyncError, match="not valid JSON"):
        load_graph("{nodes: ")
    with pytest.raises(MXAsyncError, match="expected an object"):
        load_graph("[1, 2]")


def test_dump_validates() -> None:
    g = load_graph(_text("lenet-symbol.json"))
    g.heads = [(99, 0, 0)]
    with pytest.raises(MXAsyncError, match="head 0: refers to node 99"):
        dump_graph(g)


@pytest.mark.skipif(not MX_PYTHON.exists(), reason=f"no MXNet 1.9.1 at {MX_PYTHON} (set MXASYNC_MXNET_PYTHON to the python of a venv with mxnet==1.9.1, README: Test)")
def test_real_mxnet_loads_our_dump(tmp_path: Path) -> None:
    texts = {
        "lenet": dump_graph(load_graph(_text("lenet-symbol.json"))),
        "legacy": dump_graph(load_graph(_text("lenet-symbol-legacy.json"))),  # guessed node_row_ptr
        "hidden": dump_graph(load_graph(_text("hidden-keys-v08.json"))),
        "foreach": dump_graph(load_graph(_text("foreach-symbol.json"))),
    }
    for name, text in texts.items():
        (tmp_path / f"{name}.json").write_text(text, encoding="utf-8")
    script = (
        "import json, sys, mxnet as mx\n"
        "out = {}\n"
        "for p in sys.argv[1:]:\n"
        "    s = mx.sym.load_json(open(p, encoding='utf-8').read())\n"
        "    out[p] = [s.tojson(), s.list_arguments(), s.list_outputs()]\n"
        "print(json.dumps(out))\n"
    )
    paths = [str(tmp_path / f"{n}.json") for n in texts]
    res = subprocess.run([str(MX_PYTHON), "-c", script, *paths], capture_output=True, text=True, timeout=120,
                         check=True)
    got = json.loads(res.stdout.strip().splitlines()[-1])
    for name, text in texts.items():
        mx_json, args, outs = got[str(tmp_path / f"{name}.json")]
        if name == "legacy":  # MXNet recomputes node_row_ptr; everything else matches
            assert load_graph(mx_json).nodes == load_graph(text).nodes
        else:
            assert mx_json == text
        assert outs
    lenet_args = got[paths[0]][1]
    assert lenet_args[0] == "data" and lenet_args[-1] == "softmax_label"


def test_lenet_io_fixture_is_consistent() -> None:
    """The documented meaning of lenet-io.npz, checked where numpy alone can check it."""
    io = np.load(FIX / "lenet-io.npz")
    shapes = json.loads(_text("lenet-shapes.json"))
    for kind in ("arg", "out", "aux", "internal"):
        for name, shape in shapes[f"{kind}_shapes"].items():
            assert io[f"shape:{kind}:{name}"].tolist() == shape
    for name, shape in shapes["arg_shapes"].items():
        key = name if name in ("data", "softmax_label") else f"arg:{name}"
        assert io[key].shape == tuple(shape) and io[f"train:grad:{name}"].shape == tuple(shape)
    logits = io["infer:internal:add_output"]
    p = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(io["infer:out"], p / p.sum(1, keepdims=True), rtol=1e-5)
    for case in ("train", "head"):  # Dropout: output = input * mask, mask in {0, 1/(1-p)}
        mask = io[f"{case}:internal:drop_mask"]
        assert set(np.unique(mask)) <= {0.0, 2.0}
        np.testing.assert_allclose(io[f"{case}:internal:relu3_output"] * mask, io[f"{case}:internal:drop_output"])
    # SoftmaxOutput's gradient is p - onehot(label); the head case uses the stored head gradient
    onehot = np.eye(10, dtype=np.float32)[io["softmax_label"].astype(int)]
    np.testing.assert_allclose(io["train:grad:fc2_bias"], (io["train:out"] - onehot).sum(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(io["head:grad:fc_skip_bias"], io["head:head_grad"].sum(0), rtol=1e-5)
