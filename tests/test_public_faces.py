"""``mx.nd`` / ``mx.sym`` list MXNet 1.9.1's public names, not names of our own: ops are reached under
MXNet's namespaces (``mx.nd.image.crop``, ``mx.nd.random.uniform_like``, ``mx.nd._internal._slice_assign``,
``mx.nd.sparse.adagrad_update``), and implementation modules do not show as public attributes."""

import json
from pathlib import Path

import pytest

import mxasync as mx
from mxasync.operator.functional import defop
from mxasync.operator.registry import list_ops

FACES_FILE = Path(__file__).parent / "fixtures" / "mxnet" / "public_faces.json"

# names the public faces carried that MXNet 1.9.1's do not (dir() there, 2026-11-27)
NOT_IN_MXNET = [
    "image_crop", "image_to_tensor", "image_normalize", "image_resize", "image_flip_left_right",
    "image_random_flip_top_bottom", "image_random_brightness", "image_random_color_jitter", "image_adjust_lighting",
    "image_random_lighting", "randint", "random_uniform_like", "random_normal_like", "random_gamma_like",
    "slice_assign", "slice_assign_scalar", "adagrad_update", "control_flow", "sparse_array", "sparse_retain",
]


@pytest.mark.parametrize("face", ["nd", "sym"])
def test_no_names_mxnet_lacks(face):
    ns = getattr(mx, face)
    assert [n for n in NOT_IN_MXNET if n in dir(ns)] == []
    if face == "nd":
        assert "hypot" not in dir(mx.nd)  # MXNet's mx.nd has broadcast_hypot only (mx.sym.hypot exists)
    else:
        assert "hypot" in dir(mx.sym) and not {"AttrScope", "NameManager", "Prefix"} & set(dir(mx.sym))


def test_ops_stay_reachable_under_mxnets_namespaces():
    x = mx.nd.ones((4, 4, 3))
    assert mx.nd.image.crop(x, x=0, y=0, width=2, height=2).shape == (2, 2, 3)
    assert mx.nd.random.uniform_like(x).shape == x.shape and mx.nd.random.randint(0, 5, shape=(2,)).shape == (2,)
    assert mx.nd.random_randint(0, 5, shape=(2,)).shape == (2,)
    assert mx.nd._internal._slice_assign_scalar(mx.nd.zeros((3,)), 1.0, (1,), (2,)).asnumpy().tolist() == [0, 1, 0]
    w, h = mx.nd.ones((2,)), mx.nd.zeros((2,))
    mx.nd.sparse.adagrad_update(w, mx.nd.ones((2,)), h, out=w, lr=0.5, epsilon=0.0)
    assert w.asnumpy().tolist() == [0.5, 0.5] and h.asnumpy().tolist() == [1.0, 1.0]
    assert mx.nd.broadcast_hypot(mx.nd.array([3.0]), mx.nd.array([4.0])).asnumpy().tolist() == [5.0]
    assert callable(mx.nd.contrib.foreach) and callable(mx.sym.contrib.while_loop)
    assert mx.name.NameManager and mx.AttrScope


def test_internal_listing_leaves_out_ops_tests_register():
    if "_test_public_faces_op" not in list_ops():
        defop("_test_public_faces_op", fwd=lambda xp, p, x: x * 2, bwd=lambda xp, p, og, ins, outs: [og[0] * 2],
              deps="og")
    for internal in (mx.nd._internal, mx.sym._internal):
        assert not [n for n in internal.__all__ if n.startswith(("_test_", "_doc_"))]
        assert callable(internal._test_public_faces_op)  # registered late, still found by name
    assert "_slice_assign" in mx.sym._internal.__all__ and "_crop_assign" in mx.nd._internal.__all__


# What our faces show beyond MXNet 1.9.1's dir() on purpose (each documented where it lives).
OUR_EXTRAS = {
    "nd": {"waitall_async"},  # the async twin of waitall (docs/async.md)
    "nd.random": {"seed"} | {f"pdf_{d}" for d in ("dirichlet", "exponential", "gamma", "generalized_negative_binomial",
                                                   "negative_binomial", "normal", "poisson", "uniform")},
    "sym.random": {f"pdf_{d}" for d in ("dirichlet", "exponential", "gamma", "generalized_negative_binomial",
                                        "negative_binomial", "normal", "poisson", "uniform")},
}


@pytest.mark.parametrize("face", sorted(json.loads(FACES_FILE.read_text(encoding="utf-8"))))
def test_faces_show_no_name_mxnet_lacks(face):
    """Against MXNet 1.9.1's own dir() (tests/fixtures/mxnet/make_public_faces.py): an op given a public
    alias MXNet lacks, or a helper a module imports, shows up here."""
    theirs = set(json.loads(FACES_FILE.read_text(encoding="utf-8"))[face])
    ns = mx
    for part in face.split("."):
        ns = getattr(ns, part)
    ours = {n for n in dir(ns) if not n.startswith("_")}
    assert sorted(ours - theirs - OUR_EXTRAS.get(face, set())) == []


@pytest.mark.parametrize("face,package", [("nd", "ndarray"), ("sym", "symbol")])
def test_implementation_modules_are_private(face, package):
    """A submodule shows in dir(mx.nd) once anything imports it: only MXNet's own may be public."""
    import pkgutil

    theirs = set(json.loads(FACES_FILE.read_text(encoding="utf-8"))[face])
    pkg = __import__(f"mxasync.{package}", fromlist=["_"])
    public = {m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")}
    assert sorted(public - theirs) == []
