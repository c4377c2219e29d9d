"""Table rows: deformable convolutions, their shapes and numeric gradients (offsets and masks included); values
against MXNet 1.9.1 and against plain convolution: test_deformable_conv.py."""

from __future__ import annotations

from cases import Case, uniform


def _offsets(rng, shape, dtype):  # sample points inside the image and away from pixel borders
    return rng.uniform(0.2, 0.8, shape).astype(dtype)


def _check_shape(outs, inputs, params):
    assert outs[0].shape == (1, 3, 4, 4)


CASES = [
    Case("_contrib_DeformableConvolution", [((1, 2, 4, 4), (1, 18, 4, 4), (3, 2, 3, 3), (3,))],
         check=_check_shape, params=dict(kernel=(3, 3), pad=(1, 1), num_filter=3),
         gens=[uniform(), _offsets, uniform(), uniform()]),
    Case("_contrib_ModulatedDeformableConvolution", [((1, 2, 4, 4), (1, 18, 4, 4), (1, 9, 4, 4), (3, 2, 3, 3),
                                                      (3,))],
         check=_check_shape, params=dict(kernel=(3, 3), pad=(1, 1), num_filter=3),
         gens=[uniform(), _offsets, uniform(0.2, 0.9), uniform(), uniform()]),
]
