"""Table rows: the NumPy-interface ops (``mxasync/operator/numpy``), against NumPy itself.

Their results keep NumPy's shapes (0-d included: ``np_shape=True``). Ops with a zero
gradient (rounding, comparisons, integer results) say so; random samplers are checked by
their moments.
"""

from __future__ import annotations

import numpy as np
from cases import Case, away, distinct, integers, uniform

from mxasync.operator.numpy.elemwise import BINARY, COMPARE, UNARY, UNARY_BOOL, UNARY_INT, mx_promote

_S = [[(2, 3)], [(4,)]]
_POS = uniform(0.2, 1.5)
_UNIT = uniform(-0.8, 0.8)
_GT1 = uniform(1.2, 2.0)
_ZERO_GRAD = {"sign", "rint", "ceil", "floor", "trunc", "fix"}
_GEN = {"sqrt": _POS, "log": _POS, "log10": _POS, "log2": _POS, "log1p": _POS, "reciprocal": away(),
        "arcsin": _UNIT, "arccos": _UNIT, "arctanh": _UNIT, "arccosh": _GT1, "cbrt": away(), "abs": away(),
        "absolute": away(), "fabs": away(), "tan": _UNIT}


def _exact(fn):
    """Integer-only ops: compared exactly (and kept out of the float64 request checks)."""
    def check(outs, ins, p):
        np.testing.assert_array_equal(outs[0], fn(*ins))
    return check


def _unary_rows():
    rows = []
    for name, (fn, _) in UNARY.items():
        rows.append(Case(f"_npi_{name}", _S, ref=fn, gens=_GEN.get(name), np_shape=True,
                         grad="zero" if name in _ZERO_GRAD else True))
    for name, fn in {**UNARY_BOOL}.items():
        rows.append(Case(f"_npi_{name}", _S, ref=fn, np_shape=True, grad="zero"))
    for name, fn in UNARY_INT.items():
        rows.append(Case(f"_npi_{name}", _S, check=_exact(fn), gens=integers(-5, 5), dtypes=("int32",),
                         np_shape=True, grad=False))
    return rows


_BIN_GEN = {"true_divide": [uniform(), away(0.5, 1.5)], "mod": [uniform(0.1, 3), uniform(0.7, 1.3)],
            "fmod": [uniform(0.1, 3), uniform(0.7, 1.3)], "power": [_POS, uniform()],
            "float_power": [_POS, uniform()], "maximum": distinct(), "minimum": distinct(), "fmax": distinct(),
            "fmin": distinct(), "hypot": away(), "arctan2": away(), "copysign": away(),
            "ldexp": [uniform(), integers(-2, 3)]}
_INT_BIN = {"lcm", "gcd", "bitwise_and", "bitwise_or", "bitwise_xor"}


def _ldexp(a, b):
    return a * np.power(2.0, b)


def _cast(fn):
    def ref(a, b, **p):
        return fn(a, b).astype(mx_promote(a.dtype, b.dtype))
    return ref


def _binary_rows():
    rows = []
    for name, (fn, ga, gb) in BINARY.items():
        if name == "ldexp":  # float exponents: x * 2**e (NumPy's ufunc wants integer exponents)
            fn = _ldexp
        if name in _INT_BIN:
            rows.append(Case(f"_npi_{name}", [[(2, 3), (2, 3)]], check=_exact(fn), gens=integers(1, 9),
                             dtypes=("int32",), np_shape=True, grad=False))
            continue
        wrt = tuple(i for i, g in enumerate((ga, gb)) if g is not None)
        if name == "ldexp":
            wrt = (0,)
        rows.append(Case(f"_npi_{name}", [[(2, 3), (2, 3)], [(2, 3), (1, 3)]], ref=_cast(fn),
                         gens=_BIN_GEN.get(name), np_shape=True, wrt=wrt or None, grad=bool(wrt)))
        rows.append(Case(f"_npi_{name}", [[(2, 3)]], params=dict(scalar=0.75), name=f"_npi_{name}_scalar",
                         ref=lambda a, scalar, _f=fn, **p: _f(a, scalar).astype(a.dtype),
                         gens=(_BIN_GEN.get(name) or [None])[0] if isinstance(_BIN_GEN.get(name), list)
                         else _BIN_GEN.get(name), np_shape=True, grad=ga is not None and name != "ldexp"))
    for name, fn in COMPARE.items():
        rows.append(Case(f"_npi_{name}", [[(2, 3), (1, 3)]], ref=fn, np_shape=True, grad="zero"))
    return rows


def _red(fn, **extra):
    def ref(a, **p):
        kw = {k: v for k, v in p.items() if k in ("axis", "keepdims", "ddof")}
        return np.asarray(fn(a, **kw, **extra))
    return ref


ROWS_REDUCE = [
    Case("_npi_sum", [[(2, 3, 4)]], params=dict(axis=(0, 2)), ref=_red(np.sum), np_shape=True),
    Case("_npi_sum", [[(2, 3)]], ref=_red(np.sum), np_shape=True, name="_npi_sum_all"),
    Case("_npi_mean", [[(2, 3)]], params=dict(axis=1, keepdims=True), ref=_red(np.mean), np_shape=True),
    Case("_npi_prod", [[(2, 3)]], params=dict(axis=0), ref=_red(np.prod), gens=_POS, np_shape=True),
    Case("_npi_max", [[(2, 3)]], params=dict(axis=1), ref=_red(np.max), gens=distinct(), np_shape=True),
    Case("_npi_min", [[(2, 3)]], ref=_red(np.min), gens=distinct(), np_shape=True),
    Case("_npi_var", [[(3, 4)]], params=dict(axis=0, ddof=1), ref=_red(np.var), np_shape=True),
    Case("_npi_std", [[(3, 4)]], params=dict(axis=1), ref=_red(np.std), np_shape=True),
    Case("_npi_argmax", [[(3, 4)]], params=dict(axis=1), ref=lambda a, **p: np.argmax(a, 1), gens=distinct(),
         np_shape=True, grad="zero"),
    Case("_npi_argmin", [[(3, 4)]], ref=lambda a, **p: np.asarray(np.argmin(a)), gens=distinct(), np_shape=True,
         grad="zero"),
    Case("_npi_any", [[(3, 4)]], params=dict(axis=0), ref=lambda a, **p: np.any(a > 0, 0) | True, gens=_POS,
         np_shape=True, grad="zero"),
    Case("_npi_all", [[(3, 4)]], ref=lambda a, **p: np.asarray(np.all(a)), gens=_POS, np_shape=True, grad="zero"),
    Case("_npi_cumsum", [[(3, 4)]], params=dict(axis=1), ref=lambda a, **p: np.cumsum(a, 1), np_shape=True),
]

ROWS_SHAPE = [
    Case("_npi_reshape", [[(2, 6)]], params=dict(newshape=(3, -1)), ref=lambda a, **p: a.reshape(3, 4), np_shape=True),
    Case("_npi_ravel", [[(2, 3)]], ref=np.ravel, np_shape=True),
    Case("_npi_squeeze", [[(2, 1, 3)]], ref=np.squeeze, np_shape=True),
    Case("_npi_expand_dims", [[(2, 3)]], params=dict(axis=1), ref=lambda a, axis: np.expand_dims(a, axis),
         np_shape=True),
    Case("_npi_broadcast_to", [[(1, 3)]], params=dict(shape=(2, 3)), ref=lambda a, shape: np.broadcast_to(a, shape),
         np_shape=True),
    Case("_npi_atleast", [[(3,)]], params=dict(ndim=2), ref=lambda a, ndim: np.atleast_2d(a), np_shape=True),
    Case("_npi_transpose", [[(2, 3, 4)]], params=dict(axes=(2, 0, 1)), ref=lambda a, axes: np.transpose(a, axes),
         np_shape=True),
    Case("_npi_swapaxes", [[(2, 3, 4)]], params=dict(axis1=0, axis2=2), ref=lambda a, **p: np.swapaxes(a, 0, 2),
         np_shape=True),
    Case("_npi_moveaxis", [[(2, 3, 4)]], params=dict(source=0, destination=2), ref=lambda a, **p: np.moveaxis(a, 0, 2),
         np_shape=True),
    Case("_npi_flip", [[(2, 3)]], params=dict(axis=1), ref=lambda a, axis: np.flip(a, axis), np_shape=True),
    Case("_npi_roll", [[(2, 3)]], params=dict(shift=1, axis=1), ref=lambda a, **p: np.roll(a, 1, 1), np_shape=True),
    Case("_npi_rot90", [[(2, 3)]], params=dict(k=1), ref=lambda a, **p: np.rot90(a), np_shape=True),
    Case("_npi_tile", [[(2, 3)]], params=dict(reps=(2, 1)), ref=lambda a, reps: np.tile(a, reps), np_shape=True),
    Case("_npi_repeat", [[(2, 3)]], params=dict(repeats=2, axis=1), ref=lambda a, **p: np.repeat(a, 2, 1),
         np_shape=True),
    Case("_npi_concatenate", [[(2, 3), (1, 3)]], params=dict(axis=0, num_args=2),
         ref=lambda *a, **p: np.concatenate(a, 0), np_shape=True),
    Case("_npi_stack", [[(2, 3), (2, 3)]], params=dict(axis=1, num_args=2), ref=lambda *a, **p: np.stack(a, 1),
         np_shape=True),
    Case("_npi_vstack", [[(3,), (3,)]], params=dict(num_args=2), ref=lambda *a, **p: np.vstack(a), np_shape=True),
    Case("_npi_hstack", [[(2, 3), (2, 1)]], params=dict(num_args=2), ref=lambda *a, **p: np.hstack(a), np_shape=True),
    Case("_npi_dstack", [[(2, 3), (2, 3)]], params=dict(num_args=2), ref=lambda *a, **p: np.dstack(a), np_shape=True),
    Case("_npi_column_stack", [[(3,), (3, 2)]], params=dict(num_args=2), ref=lambda *a, **p: np.column_stack(a),
         np_shape=True),
    Case("_npi_split", [[(4, 3)]], params=dict(sections=2, axis=0), ref=lambda a, **p: tuple(np.split(a, 2)),
         np_shape=True),
    Case("_npi_array_split", [[(5, 3)]], params=dict(sections=2, axis=0),
         ref=lambda a, **p: tuple(np.array_split(a, 2)), np_shape=True),
    Case("_npi_where", [[(2, 3), (2, 3), (1, 3)]], ref=lambda c, x, y: np.where(c, x, y), np_shape=True,
         gens=[integers(0, 2), uniform(), uniform()], wrt=(1, 2)),
    Case("_npi_where_scalar", [[(2, 3), (2, 3)]], params=dict(scalar=2.0), ref=lambda c, a, **p: np.where(c, a, 2.0),
         np_shape=True, wrt=(1,)),
    Case("_npi_clip", [[(2, 3)]], params=dict(a_min=-0.5, a_max=0.5), ref=lambda a, **p: np.clip(a, -0.5, 0.5),
         gens=uniform(-0.9, 0.9), np_shape=True),
    Case("_npi_diag", [[(3, 3)], [(3,)]], params=dict(k=0), ref=lambda a, k: np.diag(a, k), np_shape=True),
    Case("_npi_diagonal", [[(3, 4)]], params=dict(offset=1), ref=lambda a, **p: np.diagonal(a, 1).copy(),
         np_shape=True),
    Case("_npi_diagflat", [[(3,)]], params=dict(k=1), ref=lambda a, k: np.diagflat(a, k), np_shape=True),
    Case("_npi_tril", [[(3, 3)]], params=dict(k=0), ref=lambda a, k: np.tril(a, k), np_shape=True),
    Case("_npi_triu", [[(3, 3)]], params=dict(k=1), ref=lambda a, k: np.triu(a, k), np_shape=True),
    Case("_npi_take", [[(4, 3), (2,)]], params=dict(axis=0), gens=[uniform(), integers(0, 4)],
         ref=lambda a, i, **p: np.take(a, i.astype(int), axis=0), np_shape=True, wrt=(0,)),
    Case("_npi_pad", [[(2, 3)]], params=dict(pad_width=((1, 1), (0, 2))), ref=lambda a, **p: np.pad(a, ((1, 1), (0, 2))),
         np_shape=True),
    Case("_npi_index", [[(3, 4)]], params=dict(key=(("s", 1, None, None), 2), num_args=1),
         ref=lambda a, **p: a[1:, 2], np_shape=True),
    Case("_npi_set_index", [[(3, 4), (4,)]], params=dict(key=(1,), num_args=2),
         ref=lambda a, v, **p: np.concatenate([a[:1], v[None], a[2:]]), np_shape=True),
    Case("_npi_copy", [[(2, 3)]], ref=lambda a, **p: a.copy(), np_shape=True),
    Case("_npi_full_like", [[(2, 3)]], params=dict(fill_value=2.0), ref=lambda a, **p: np.full_like(a, 2.0),
         np_shape=True, grad="zero"),
    Case("_npx_reshape", [[(2, 3, 4)]], params=dict(newshape=(-2, -5)), ref=lambda a, **p: a.reshape(2, 12),
         np_shape=True),
    Case("_npx_shape_array", [[(2, 3)]], ref=lambda a: np.array(a.shape), np_shape=True, grad="zero"),
    Case("_npi_sort", [[(3, 4)]], params=dict(axis=1), ref=lambda a, **p: np.sort(a, 1), gens=distinct(),
         np_shape=True),
    Case("_npi_argsort", [[(3, 4)]], params=dict(axis=1), ref=lambda a, **p: np.argsort(a, 1), gens=distinct(),
         np_shape=True, grad="zero"),
    Case("_npi_diff", [[(3, 5)]], params=dict(n=2, axis=1), ref=lambda a, **p: np.diff(a, 2, 1), np_shape=True),
    Case("_npi_nan_to_num", [[(2, 3)]], ref=lambda a, **p: np.nan_to_num(a), np_shape=True),
    Case("_npi_polyval", [[(3,), (4,)]], ref=np.polyval, np_shape=True),
    Case("_npi_percentile", [[(3, 5)]], params=dict(q_scalar=30.0, axis=1), ref=lambda a, **p: np.percentile(a, 30, 1),
         np_shape=True, grad=False),
    Case("_npi_resize", [[(2, 3)]], params=dict(new_shape=(3, 3)), ref=lambda a, **p: np.resize(a, (3, 3)),
         np_shape=True, grad=False),
    Case("_npi_isclose", [[(2, 3), (2, 3)]], ref=lambda a, b, **p: np.isclose(a, b), np_shape=True, grad="zero"),
    Case("_npi_interp", [[(4,), (5,), (5,)]], gens=[uniform(0, 4), lambda r, s, d: np.arange(5.0).astype(d), uniform()],
         ref=lambda x, xq, fq, **p: np.interp(x, xq, fq), np_shape=True, grad=False),
    Case("_npi_histogram", [[(20,)]], params=dict(bins=4, range=(-1.0, 1.0)),
         ref=lambda a, **p: np.histogram(a, 4, (-1, 1)), np_shape=True, grad=False),
    Case("_npi_unravel_index", [[(3,)]], params=dict(shape=(2, 3)), gens=integers(0, 6),
         ref=lambda a, **p: np.stack(np.unravel_index(a.astype(int), (2, 3))).astype(a.dtype), np_shape=True,
         grad=False),
    Case("_npi_around", [[(2, 3)]], params=dict(decimals=1), ref=lambda a, **p: np.around(a, 1), np_shape=True,
         grad="zero"),
]

ROWS_INIT = [
    Case("_npi_full", [[]], params=dict(shape=(2, 3), value=1.5, dtype="float32"),
         ref=lambda **p: np.full((2, 3), 1.5, "float32"), np_shape=True, grad=False),
    Case("_npi_arange", [[]], params=dict(start=1.0, stop=7.0, step=2.0),
         ref=lambda **p: np.arange(1.0, 7.0, 2.0, dtype="float32"), np_shape=True, grad=False),
    Case("_npi_eye", [[]], params=dict(N=3, M=4, k=1), ref=lambda **p: np.eye(3, 4, 1, dtype="float32"),
         np_shape=True, grad=False),
    Case("_npi_linspace", [[]], params=dict(start=0.0, stop=1.0, num=5),
         ref=lambda **p: np.linspace(0, 1, 5, dtype="float32"), np_shape=True, grad=False),
    Case("_npi_logspace", [[]], params=dict(start=0.0, stop=2.0, num=3),
         ref=lambda **p: np.logspace(0, 2, 3).astype("float32"), np_shape=True, grad=False),
    Case("_npi_indices", [[]], params=dict(dimensions=(2, 3)), ref=lambda **p: np.indices((2, 3)), np_shape=True,
         grad=False),
    Case("_npi_window", [[]], params=dict(kind="hamming", M=5), ref=lambda **p: np.hamming(5).astype("float32"),
         np_shape=True, grad=False),
]


def _spd(rng, shape, dtype):
    x = rng.uniform(-1, 1, size=shape)
    return (x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _well(rng, shape, dtype):
    return (rng.uniform(-1, 1, size=shape) + 3 * np.eye(shape[-1])).astype(dtype)


ROWS_PRODUCTS = [
    Case("_npi_dot", [[(2, 3), (3, 4)], [(2, 3, 4), (4,)], [(3,), (3,)]], ref=np.dot, np_shape=True),
    Case("_npi_matmul", [[(2, 2, 3), (3, 4)], [(3,), (2, 3, 4)]], ref=np.matmul, np_shape=True),
    Case("_npi_tensordot", [[(2, 3, 4), (3, 4, 5)]], params=dict(axes=2),
         ref=lambda a, b, axes: np.tensordot(a, b, axes), np_shape=True),
    Case("_npi_inner", [[(2, 3), (4, 3)]], ref=np.inner, np_shape=True),
    Case("_npi_outer", [[(2,), (3,)]], ref=np.outer, np_shape=True),
    Case("_npi_vdot", [[(2, 3), (2, 3)]], ref=lambda a, b: np.asarray(np.vdot(a, b)), np_shape=True),
    Case("_npi_kron", [[(2, 2), (2, 3)]], ref=np.kron, np_shape=True),
    Case("_npi_einsum", [[(2, 3), (3, 4)]], params=dict(subscripts="ij,jk->ik", num_args=2),
         ref=lambda a, b, **p: np.einsum("ij,jk->ik", a, b), np_shape=True),
    # operands broadcast through '...' or along a size-1 labelled axis: each gradient is summed back
    # to its operand's shape (as MXNet 1.9.1 does); a repeated index puts it on the diagonal
    *(Case("_npi_einsum", [shapes], params=dict(subscripts=subs, num_args=len(shapes)), name=f"_npi_einsum_{k}",
           ref=lambda *ops, _s=subs, **p: np.einsum(_s, *ops), np_shape=True, dtypes=("float64",))
      for k, (subs, shapes) in enumerate([("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),
                                          ("ij,ij->i", [(1, 4), (2, 4)]), ("...,...", [(), (2, 3)]),
                                          ("i...,j->ij...", [(2, 1, 3), (4,)]), ("ii,i->i", [(3, 3), (1,)])])),
    Case("_npi_linalg_inv", [[(2, 3, 3)]], gens=_well, ref=np.linalg.inv, np_shape=True),
    Case("_npi_linalg_det", [[(2, 3, 3)]], gens=_well, ref=np.linalg.det, np_shape=True),
    Case("_npi_linalg_slogdet", [[(3, 3)]], gens=_well, ref=lambda a: tuple(np.asarray(v) for v in
                                                                             np.linalg.slogdet(a)),
         np_shape=True),
    Case("_npi_linalg_solve", [[(3, 3), (3, 2)]], gens=[_well, uniform()], ref=np.linalg.solve, np_shape=True),
    Case("_npi_linalg_cholesky", [[(3, 3)]], gens=_spd, ref=np.linalg.cholesky, np_shape=True, grad=False),
    Case("_npi_linalg_norm", [[(3, 4)]], ref=lambda a, **p: np.asarray(np.linalg.norm(a)), np_shape=True),
    Case("_npi_linalg_pinv", [[(3, 2)]], ref=lambda a, **p: np.linalg.pinv(a), np_shape=True),
    Case("_npi_linalg_svd", [[(3, 2)]], check=lambda outs, ins, p: np.testing.assert_allclose(
        outs[0] * outs[1][None] @ outs[2], ins[0], atol=1e-4), np_shape=True),
    Case("_npi_linalg_eigh", [[(3, 3)]], gens=_spd, check=lambda outs, ins, p: np.testing.assert_allclose(
        outs[0], np.linalg.eigvalsh(ins[0]), rtol=1e-4), np_shape=True),
    Case("_npi_linalg_eigvalsh", [[(3, 3)]], gens=_spd, ref=lambda a, **p: np.linalg.eigvalsh(a), np_shape=True,
         grad=False),
    Case("_npi_linalg_eig", [[(3, 3)]], gens=_spd, check=lambda outs, ins, p: np.testing.assert_allclose(
        np.sort(outs[0]), np.linalg.eigvalsh(ins[0]), rtol=1e-4), np_shape=True),
    Case("_npi_linalg_eigvals", [[(3, 3)]], gens=_spd, check=lambda outs, ins, p: np.testing.assert_allclose(
        np.sort(outs[0]), np.linalg.eigvalsh(ins[0]), rtol=1e-4), np_shape=True),
    Case("_npi_linalg_tensorinv", [[(4, 2, 2)]], params=dict(ind=1),
         gens=lambda r, s, d: _well(r, (4, 4), d).reshape(s), ref=lambda a, **p: np.linalg.tensorinv(a, 1),
         np_shape=True),
    Case("_npi_linalg_tensorsolve", [[(2, 2, 4), (2, 2)]],
         gens=[lambda r, s, d: _well(r, (4, 4), d).reshape(s), uniform()],
         ref=lambda a, b, **p: np.linalg.tensorsolve(a, b), np_shape=True),
    Case("_npi_linalg_tensorsolve", [[(2, 3, 6), (6,)]], params=dict(axes=(0, 1)), name="_npi_linalg_tensorsolve_axes",
         gens=[lambda r, s, d: np.ascontiguousarray(_well(r, (6, 6), d).reshape(6, 2, 3).transpose(1, 2, 0)),
               uniform()],
         ref=lambda a, b, **p: np.linalg.tensorsolve(a, b, axes=(0, 1)), np_shape=True),
    # equal ranks: x takes all of a's axes, as in NumPy and MXNet 1.9.1 (a (1, 1, 1) x, not a 0-d one)
    Case("_npi_linalg_tensorsolve", [[(1, 1, 1), (1, 1, 1)], [(1, 1, 1), ()]], name="_npi_linalg_tensorsolve_1x1",
         gens=[_POS, uniform()], ref=lambda a, b, **p: np.linalg.tensorsolve(a, b), np_shape=True),
    Case("_npi_linalg_qr", [[(3, 3)]], gens=_well, check=lambda outs, ins, p: np.testing.assert_allclose(
        outs[0] @ outs[1], ins[0], atol=1e-4), np_shape=True),
    Case("_npi_linalg_matrix_rank", [[(3, 3)]], gens=_well, ref=lambda a: np.asarray(np.linalg.matrix_rank(a)),
         np_shape=True, grad=False),
    Case("_npi_linalg_matrix_power", [[(3, 3)]], params=dict(n=3), ref=lambda a, n: np.linalg.matrix_power(a, 3),
         np_shape=True, grad=False),
]


def _moments(mean, tol=0.1):
    def check(outs, ins, p):
        assert abs(float(np.mean(outs[0])) - mean) < tol, (np.mean(outs[0]), mean)
    return check


_N = (4000,)
ROWS_RANDOM = [
    Case("_npi_random_uniform", [[]], params=dict(low=1.0, high=3.0, size=_N), check=_moments(2.0), np_shape=True),
    Case("_npi_random_normal", [[]], params=dict(loc=-1.0, scale=0.5, size=_N), check=_moments(-1.0), np_shape=True),
    Case("_npi_random_lognormal", [[]], params=dict(sigma=0.25, size=_N), check=_moments(np.exp(0.03125)),
         np_shape=True),
    Case("_npi_random_logistic", [[]], params=dict(loc=1.0, size=_N), check=_moments(1.0), np_shape=True),
    Case("_npi_random_gumbel", [[]], params=dict(size=_N), check=_moments(0.5772), np_shape=True),
    Case("_npi_random_exponential", [[]], params=dict(scale=2.0, size=_N), check=_moments(2.0, 0.2), np_shape=True),
    Case("_npi_random_weibull", [[]], params=dict(a=1.0, size=_N), check=_moments(1.0), np_shape=True),
    Case("_npi_random_pareto", [[]], params=dict(a=3.0, size=_N), check=_moments(0.5), np_shape=True),
    Case("_npi_random_power", [[]], params=dict(a=1.0, size=_N), check=_moments(0.5), np_shape=True),
    Case("_npi_random_rayleigh", [[]], params=dict(scale=1.0, size=_N), check=_moments(1.2533), np_shape=True),
    Case("_npi_random_gamma", [[]], params=dict(shape=2.0, scale=1.0, size=_N), check=_moments(2.0, 0.2),
         np_shape=True),
    Case("_npi_random_beta", [[]], params=dict(a=2.0, b=2.0, size=_N), check=_moments(0.5), np_shape=True),
    Case("_npi_random_chisquare", [[]], params=dict(df=2.0, size=_N), check=_moments(2.0, 0.2), np_shape=True),
    Case("_npi_random_randint", [[]], params=dict(low=0, high=10, size=_N), check=_moments(4.5, 0.3),
         np_shape=True),
    Case("_npi_random_choice", [[]], params=dict(a=10, size=_N), check=_moments(4.5, 0.3), np_shape=True),
    Case("_npi_random_multinomial", [[]], params=dict(n=10, pvals=(0.5, 0.5), size=(500,)),
         check=_moments(5.0, 0.5), np_shape=True),
    Case("_npi_random_bernoulli", [[]], params=dict(prob=0.25, size=_N), check=_moments(0.25, 0.05),
         np_shape=True),
    Case("_npi_random_multivariate_normal", [[(2,), (2, 2)]], params=dict(size=(3000,)),
         gens=[lambda r, s, d: np.ones(s, d), lambda r, s, d: np.eye(2).astype(d)], check=_moments(1.0),
         np_shape=True),
    Case("_npi_shuffle", [[(50,)]], check=lambda outs, ins, p: np.testing.assert_allclose(np.sort(outs[0]),
                                                                                         np.sort(ins[0])),
         np_shape=True),
]

def _mask_ref(a, m, **p):
    r = a.copy()
    r[m.astype(bool)] = p["scalar"]
    return r


def _true_only(outs, ins, p):
    assert bool(outs[0]) and outs[0].shape == ()


def _unique_ref(a, **p):
    res = np.unique(a, return_index=p["return_index"], return_inverse=p["return_inverse"],
                    return_counts=p["return_counts"], axis=p["axis"])
    return tuple([res[0]] + [r.astype(np.int64) for r in res[1:]])


ROWS_EXTRA = [
    # output shapes from the values (value_shaped.py; more in test_value_shaped_ops.py), zero gradients
    Case("_npi_unique", [[(4, 3)], [(6,)]], params=dict(return_index=True, return_inverse=True, return_counts=True,
                                                         axis=None), gens=integers(0, 4), ref=_unique_ref,
         np_shape=True, grad="zero"),
    Case("_npi_unique", [[(4, 3)]], params=dict(return_index=False, return_inverse=False, return_counts=True, axis=0),
         name="_npi_unique_axis", gens=integers(0, 2), ref=_unique_ref, np_shape=True, grad="zero"),
    Case("_npx_nonzero", [[(4, 3)], [(5,)], [()]], gens=integers(0, 2),
         ref=lambda a, **p: np.argwhere(np.atleast_1d(a)).astype(np.int64), np_shape=True, grad="zero"),
    Case("_npi_bincount", [[(7,), (7,)]], params=dict(minlength=3, has_weights=True), gens=integers(0, 5),
         dtypes=("int32",), check=_exact(lambda a, w: np.bincount(a, w, 3).astype(np.int32)), np_shape=True),
    Case("_npi_average", [[(3, 4), (4,)]], params=dict(axis=1, weighted=True), gens=[uniform(), _POS],
         ref=lambda a, w, **p: (np.average(a, axis=1, weights=w), np.full(3, w.sum())), np_shape=True,
         wrt=(0, 1)),
    Case("_npi_average", [[(2, 3, 4), (4,)]], params=dict(axis=-1, weighted=True), gens=[uniform(), _POS],
         name="_npi_average_neg_axis", ref=lambda a, w, **p: (np.average(a, axis=-1, weights=w), np.full((2, 3), w.sum())),
         np_shape=True, wrt=(0, 1)),
    # unweighted, the sum of the weights is a 0-d count (as in MXNet 1.9.1), whatever the axes
    Case("_npi_average", [[(4, 5, 6)]], params=dict(axis=(0, 2)), name="_npi_average_unweighted",
         ref=lambda a, **p: (np.average(a, axis=(0, 2)), np.asarray(24.0)), np_shape=True),
    Case("_npi_ediff1d", [[(5,), (2,)]], params=dict(begin="array", end="1.5"),
         ref=lambda a, b, **p: np.ediff1d(a, to_begin=b, to_end=1.5), np_shape=True),
    Case("_npi_diag_indices_from", [[(3, 3)]], ref=lambda a: np.stack(np.diag_indices_from(a)), np_shape=True,
         grad=False),
    Case("_npi_boolean_mask_assign", [[(3, 4), (3, 4)]], params=dict(scalar=2.0), gens=[uniform(), integers(0, 2)],
         ref=_mask_ref, np_shape=True, grad=False),
    Case("_npx_batch_dot", [[(2, 3, 4), (2, 5, 4)]], params=dict(transpose_b=True),
         ref=lambda a, b, **p: a @ np.swapaxes(b, -1, -2), np_shape=True),
    Case("_npx_constraint_check", [[(2, 3)]], gens=_POS, check=_true_only, np_shape=True),
    Case("_npx_random_uniform_n", [[(2,), (2,)]], params=dict(batch_shape=(3000,)),
         gens=[lambda r, s, d: np.zeros(s, d), lambda r, s, d: np.full(s, 2.0, d)], check=_moments(1.0),
         np_shape=True),
    Case("_npx_random_normal_n", [[(2,), (2,)]], params=dict(batch_shape=(3000,)),
         gens=[lambda r, s, d: np.ones(s, d), lambda r, s, d: np.full(s, 0.5, d)], check=_moments(1.0),
         np_shape=True),
]

CASES = [*_unary_rows(), *_binary_rows(), *ROWS_REDUCE, *ROWS_SHAPE, *ROWS_INIT, *ROWS_PRODUCTS, *ROWS_RANDOM, *ROWS_EXTRA]
