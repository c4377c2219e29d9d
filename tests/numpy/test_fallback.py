"""``mx.np``'s fallbacks to official NumPy (MXNet 1.9.1's ``mx.np.fallback``): results as NumPy's,
arrays back as ``mx.np.ndarray`` on the input's context, scalars as NumPy gives them."""

from __future__ import annotations

import numpy as onp
import pytest

import mxasync as mx
from mxasync import autograd, np

#: every name MXNet 1.9.1's mx.np has by falling back (its fallback list, io.genfromtxt, set_printoptions)
MXNET_191 = (
    "apply_along_axis apply_over_axes argpartition array_equiv choose compress corrcoef correlate cov digitize "
    "divmod extract frexp genfromtxt heaviside histogram2d histogram_bin_edges histogramdd i0 in1d intersect1d "
    "isin ix_ lexsort min_scalar_type modf msort nanargmax nanargmin nancumprod nancumsum nanmax nanmedian nanmin "
    "nanpercentile nanprod nanquantile nanstd nansum nanvar packbits partition piecewise poly polyadd polydiv "
    "polyfit polyint polymul polysub ptp real roots searchsorted select set_printoptions setdiff1d setxor1d "
    "spacing take_along_axis trapz trim_zeros union1d unpackbits unwrap vander fallback fallback_linalg"
).split()

X = onp.array([[3.0, onp.nan, 1.0], [0.5, 2.0, onp.nan]], dtype=onp.float32)
V = onp.array([4.0, 1.0, 3.0, 2.0], dtype=onp.float32)

#: name -> (args as NumPy arrays, kwargs, NumPy's reference function)
CASES = {
    "nanmax": ((X,), {"axis": 1}, onp.nanmax),
    "nanargmin": ((X,), {}, onp.nanargmin),
    "nancumsum": ((X,), {"axis": 0}, onp.nancumsum),
    "nanmedian": ((X,), {}, onp.nanmedian),
    "nanpercentile": ((X, 30.0), {"axis": 1}, onp.nanpercentile),
    "nanstd": ((X,), {}, onp.nanstd),
    "ptp": ((V,), {}, onp.ptp),
    "partition": ((V, 2), {}, onp.partition),
    "argpartition": ((V, 1), {}, onp.argpartition),
    "searchsorted": ((onp.sort(V), onp.array([2.5, 0.0])), {}, onp.searchsorted),
    "digitize": ((V, onp.array([1.5, 3.5])), {}, onp.digitize),
    "cov": ((onp.stack([V, V[::-1]]),), {}, onp.cov),
    "corrcoef": ((V, V ** 2), {}, onp.corrcoef),
    "correlate": ((V, V[:2]), {"mode": "full"}, onp.correlate),
    "take_along_axis": ((V, onp.argsort(V)), {"axis": 0}, onp.take_along_axis),
    "compress": ((onp.array([True, False, True, True]), V), {}, onp.compress),
    "lexsort": (((V, V[::-1]),), {}, onp.lexsort),
    "polyfit": ((V, 2 * V + 1, 1), {}, onp.polyfit),
    "polymul": ((V[:2], V[2:]), {}, onp.polymul),
    "vander": ((V[:3],), {"N": 3}, onp.vander),
    "union1d": ((V, V + 1), {}, onp.union1d),
    "isin": ((V, onp.array([1.0, 4.0])), {}, onp.isin),
    "heaviside": ((V - 2, 0.5), {}, onp.heaviside),
    "spacing": ((V,), {}, onp.spacing),
    "unwrap": ((V * 2,), {}, onp.unwrap),
    "trim_zeros": ((onp.array([0.0, 1.0, 0.0]),), {}, onp.trim_zeros),
    "packbits": ((onp.array([1, 0, 1], dtype=onp.uint8),), {}, onp.packbits),
    "msort": ((X[:, [0, 2]],), {}, lambda a: onp.sort(a, axis=0)),
    "trapz": ((V,), {"dx": 0.5}, lambda y, dx: onp.trapezoid(y, dx=dx)),
    "in1d": ((X, V), {}, lambda a, b: onp.isin(a, b).ravel()),
}


def _mx(v):
    if isinstance(v, onp.ndarray):
        return np.array(v, dtype=v.dtype)
    if isinstance(v, tuple):
        return tuple(_mx(x) for x in v)
    return v


def test_every_mxnet_fallback_name_is_there():
    names = set(dir(np))
    assert [n for n in MXNET_191 if n not in names] == []
    assert {"cond", "lstsq", "fallback_linalg"} <= set(dir(np.linalg))
    assert np.fallback.__all__ and all(callable(getattr(np.fallback, n)) for n in np.fallback.__all__)
    assert not {"mirr", "npv", "pmt", "ppmt", "pv", "rate"} & set(dir(np))  # NumPy removed them
    assert not hasattr(mx.sym.np, "nanmax")  # MXNet's mx.sym.np has no fallbacks


@pytest.mark.parametrize("name", sorted(CASES))
def test_fallback_matches_numpy(name):
    args, kwargs, ref = CASES[name]
    got = getattr(np, name)(*_mx(args), **kwargs)
    want = ref(*args, **kwargs)
    if isinstance(want, onp.ndarray):
        assert isinstance(got, np.ndarray), type(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    else:  # NumPy scalars stay NumPy scalars, as MXNet gives them
        assert type(got) is type(want) and got == want


def test_results_keep_the_context_and_tuples():
    a = np.array([1.5, -2.25], ctx=mx.cpu(1))
    frac, whole = np.modf(a)
    assert isinstance(frac, np.ndarray) and frac.ctx == whole.ctx == mx.cpu(1)
    assert whole.tolist() == [1.0, -2.0]
    q, r = np.linalg.qr(np.array([[1.0, 2.0], [3.0, 4.0]]))
    onp.testing.assert_allclose((q @ r).asnumpy(), [[1.0, 2.0], [3.0, 4.0]], rtol=1e-5)
    edges = np.histogram2d(np.array([0.0, 1.0]), np.array([0.0, 2.0]), bins=2)
    assert len(edges) == 3 and all(isinstance(e, np.ndarray) for e in edges)
    assert np.array_equiv(np.array([1.0, 2.0]), np.array([[1.0, 2.0]])) is True
    assert np.min_scalar_type(10) == onp.uint8


def test_out_receives_the_result():
    out = np.zeros((2,))
    res = np.nanmax(np.array(X), axis=1, out=out)
    assert res is out and out.tolist() == [3.0, 2.0]


def test_recording_refuses_a_fallback():
    a = np.array(V)
    a.attach_grad()
    with autograd.record(), pytest.raises(ValueError, match="Falling back to NumPy operator nanmax"):
        np.nanmax(a)


def test_without_mx_arrays_numpy_answers():
    assert type(np.nanmax([1.0, 2.0])) is onp.float64
    assert isinstance(np.poly([1.0, 2.0]), onp.ndarray)


def test_genfromtxt_and_set_printoptions(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("1,2\n3,4\n")
    got = np.genfromtxt(str(path), delimiter=",", ctx=mx.cpu(1))
    assert isinstance(got, np.ndarray) and got.ctx == mx.cpu(1) and got.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(NotImplementedError, match="precision and threshold"):
        np.set_printoptions(linewidth=10)
    saved = onp.get_printoptions()
    try:
        np.set_printoptions(precision=2)
        assert onp.get_printoptions()["precision"] == 2
    finally:
        onp.set_printoptions(**saved)
