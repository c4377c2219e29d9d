"""mxasync's ops that neither MXNet 1.9.1's lists nor MXNet 2.0's NumPy-interface lists name, each mapped to
the listed op it computes like; it takes that op's place (target, float32, widest or either type) in the
lists of each target dtype.  Kept by hand: ``tests/contrib/amp/test_lists.py`` fails on an op of the
registry that no list and no entry here classifies."""

from __future__ import annotations

__all__ = ["LIKE"]

LIKE = {
    # NumPy-interface forms of legacy ops
    "_npi_abs": "abs", "_npi_fabs": "abs", "_npi_positive": "_copy", "_npi_clip": "clip",
    "_npi_argsort": "argsort", "_npi_sort": "sort", "_npi_array_split": "split", "_npi_split": "split",
    "_npi_atleast": "Reshape", "_npi_ravel": "Reshape", "_npi_reshape": "Reshape", "_npi_resize": "Reshape",
    "_npi_expand_dims": "expand_dims", "_npi_swapaxes": "SwapAxis", "_npi_repeat": "repeat", "_npi_tile": "tile",
    "_npi_take": "take", "_npi_index": "take", "_npi_unravel_index": "_unravel_index",
    "_npi_boolean_mask_assign": "_contrib_boolean_mask", "_npi_set_index": "_slice_assign",
    "_npi_concatenate": "concat", "_npi_stack": "stack", "_npi_where_scalar": "where",
    "_npi_maximum": "broadcast_maximum", "_npi_minimum": "broadcast_minimum", "_npi_float_power": "_power",
    "_npi_deg2rad": "radians", "_npi_rad2deg": "degrees", "_npi_signbit": "sign", "_npi_invert": "logical_not",
    "_npi_isclose": "broadcast_equal", "_npi_histogram": "_histogram", "_npi_window": "_arange",
    "_npi_inner": "dot", "_npi_outer": "dot", "_npi_vdot": "dot", "_npx_batch_dot": "batch_dot",
    "_npx_shape_array": "shape_array", "_npi_shuffle": "_shuffle",
    "_npi_linalg_cholesky": "_linalg_potrf", "_npi_linalg_det": "_linalg_det", "_npi_linalg_slogdet": "_linalg_slogdet",
    "_npi_linalg_inv": "_linalg_inverse", "_npi_linalg_pinv": "_linalg_inverse",
    "_npi_linalg_tensorinv": "_linalg_inverse", "_npi_linalg_matrix_power": "_linalg_gemm2",
    "_npi_linalg_solve": "_linalg_trsm", "_npi_linalg_tensorsolve": "_linalg_trsm", "_npi_linalg_norm": "norm",
    "_npi_linalg_matrix_rank": "_linalg_gelqf", "_npi_linalg_qr": "_linalg_gelqf", "_npi_linalg_svd": "_linalg_gelqf",
    "_npi_linalg_eig": "_linalg_syevd", "_npi_linalg_eigh": "_linalg_syevd", "_npi_linalg_eigvals": "_linalg_syevd",
    "_npi_linalg_eigvalsh": "_linalg_syevd",
    "cumsum": "sum", "im2col": "Convolution_v1", "col2im": "Convolution_v1",
    # random sampling
    **{f"_npi_random_{d}": "_random_normal" for d in (
        "bernoulli", "beta", "chisquare", "choice", "exponential", "gamma", "gumbel", "logistic", "lognormal",
        "multinomial", "multivariate_normal", "normal", "pareto", "power", "randint", "rayleigh", "uniform",
        "weibull")},
    "_npx_random_normal_n": "_random_normal", "_npx_random_uniform_n": "_random_uniform",
    # optimizer updates and their helpers
    **{op: "sgd_mom_update" for op in (
        "nag_mom_update", "mp_nag_mom_update", "lamb_update_phase1", "lamb_update_phase2", "mp_lamb_update_phase1",
        "mp_lamb_update_phase2", "_multi_adamw_update", "_multi_mp_adamw_update", "_multi_lamb_update",
        "_multi_mp_lamb_update", "preloaded_multi_sgd_update", "preloaded_multi_sgd_mom_update",
        "preloaded_multi_mp_sgd_update", "preloaded_multi_mp_sgd_mom_update", "multi_lars", "multi_sum_sq",
        "reset_arrays")},
    # contrib ops
    "_contrib_BatchNormWithReLU": "BatchNorm", "_contrib_ModulatedDeformableConvolution": "_contrib_DeformableConvolution",
    "_contrib_RROIAlign": "_contrib_ROIAlign", "_contrib_allclose": "broadcast_equal",
    "_contrib_arange_like": "_arange", "_contrib_box_decode": "_contrib_box_nms", "_contrib_box_encode": "_contrib_box_nms",
    "_contrib_round_ste": "round", "_contrib_sign_ste": "sign",
    # INT8 ops MXNet 1.9.1's lists do not name (they compute on int8 / their own float ranges, like their kin)
    "_contrib_quantized_batch_norm": "_contrib_quantized_act",
    "_contrib_quantized_elemwise_mul": "_contrib_quantized_elemwise_add",
    "_contrib_quantized_embedding": "_contrib_quantized_fully_connected",
    "_contrib_calibrate_entropy": "_histogram",
    **{f"_contrib_interleaved_matmul_{k}": "batch_dot" for k in (
        "encdec_qk", "encdec_valatt", "selfatt_qk", "selfatt_valatt")},
}
