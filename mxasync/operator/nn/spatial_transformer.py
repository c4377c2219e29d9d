"""Spatial transformer networks (Jaderberg et al. 2015; MXNet's grid_generator.cc, bilinear_sampler.cc,
spatial_transformer.cc): ``GridGenerator`` makes a sampling grid, ``BilinearSampler`` reads an image at it,
``SpatialTransformer`` is both in one op.

Grids hold (x, y) in [-1, 1] (channel 0 x, channel 1 y; -1 is the first pixel's centre, 1 the
last's); samples outside the image read 0.

>>> import mxasync as mx
>>> mx.nd.GridGenerator(mx.nd.array([[1, 0, 0, 0, 1, 0]]), transform_type="affine", target_shape=(2, 3))[0, 0]
<BLANKLINE>
[[-1.  0.  1.]
 [-1.  0.  1.]]
<NDArray 2x3 @cpu(0)>
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["GridGeneratorParam", "BilinearSamplerParam", "SpatialTransformerParam"]


class GridGeneratorParam(OpParam):
    transform_type: Literal["affine", "warp"] = Field(description="'affine': data is (N, 6) affine matrices; "
                                                                  "'warp': data is an (N, 2, H, W) optical flow")
    target_shape: tuple[int, int] = Field((0, 0), description="the grid's (H, W) for 'affine'")


class BilinearSamplerParam(OpParam):
    cudnn_off: bool | None = None


class SpatialTransformerParam(OpParam):
    target_shape: tuple[int, int] = Field((0, 0), description="the output's (H, W)")
    transform_type: Literal["affine"] = Field(description="the transformation: 'affine' (N, 6) matrices")
    sampler_type: Literal["bilinear"] = Field(description="the sampler: 'bilinear'")
    cudnn_off: bool | None = None


# -- grids ---------------------------------------------------------------------------------------------------
def _base_grid(xp, h, w, dtype):
    """(3, H*W): the target pixels' normalised (x, y, 1)."""
    ys, xs = xp.meshgrid(xp.linspace(-1, 1, h, dtype=dtype), xp.linspace(-1, 1, w, dtype=dtype), indexing="ij")
    return xp.stack([xs.reshape(-1), ys.reshape(-1), xp.ones(h * w, dtype=dtype)])


def _affine_grid(xp, theta, shape):
    h, w = shape
    grid = theta.reshape(-1, 2, 3) @ _base_grid(xp, h, w, theta.dtype)  # (N, 2, H*W)
    return grid.reshape(theta.shape[0], 2, h, w)


def _warp_grid(xp, flow):
    n, _, h, w = flow.shape
    ys, xs = xp.meshgrid(xp.arange(h, dtype=flow.dtype), xp.arange(w, dtype=flow.dtype), indexing="ij")
    gx = (xs + flow[:, 0]) / max((w - 1) / 2, 1e-12) - 1
    gy = (ys + flow[:, 1]) / max((h - 1) / 2, 1e-12) - 1
    return xp.stack([gx, gy], axis=1)


class _GridGeneratorProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None], []
        p = self.params
        if p.transform_type == "affine":
            if len(d) != 2 or d[1] != 6:
                raise self.error(f"data has shape {tuple(d)} but transform_type='affine' needs (N, 6)")
            if min(p.target_shape) < 1:
                raise self.error(f"transform_type='affine' needs target_shape=(H, W), got {p.target_shape}")
            return [d], [(d[0], 2, *p.target_shape)], []
        if len(d) != 4 or d[1] != 2:
            raise self.error(f"data has shape {tuple(d)} but transform_type='warp' needs a flow (N, 2, H, W)")
        return [d], [tuple(d)], []


def _grid_generator(xp, p, data):
    return _affine_grid(xp, data, p.target_shape) if p.transform_type == "affine" else _warp_grid(xp, data)


def _grid_generator_bwd(xp, p, og, ins, outs):
    g = og[0]
    if p.transform_type == "affine":
        n, _, h, w = g.shape
        base = _base_grid(xp, h, w, g.dtype)  # (3, HW)
        return [(g.reshape(n, 2, h * w) @ base.T).reshape(n, 6)]
    n, _, h, w = g.shape
    return [xp.stack([g[:, 0] / max((w - 1) / 2, 1e-12), g[:, 1] / max((h - 1) / 2, 1e-12)], axis=1)]


defop("GridGenerator", param=GridGeneratorParam, base=_GridGeneratorProperty, deps="og",
      fwd=_grid_generator, bwd=_grid_generator_bwd,
      doc="A sampling grid (N, 2, H, W) of normalised (x, y): from affine matrices (N, 6) over target_shape, "
          "or from an optical flow (N, 2, H, W) in pixels.")


# -- bilinear sampling ---------------------------------------------------------------------------------------
def _corners(xp, data, grid):
    """The four neighbours of every sample: their (y, x) indices, weights, and whether they are inside."""
    h, w = data.shape[2], data.shape[3]
    x = (grid[:, 0] + 1) * (w - 1) / 2  # (N, Ho, Wo)
    y = (grid[:, 1] + 1) * (h - 1) / 2
    x0, y0 = xp.floor(x), xp.floor(y)
    fx, fy = x - x0, y - y0
    out = []
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            yi, xi = (y0 + dy).astype("int64"), (x0 + dx).astype("int64")
            inside = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
            out.append((xp.clip(yi, 0, h - 1), xp.clip(xi, 0, w - 1), wy * wx, inside, dy, dx))
    return out, fx, fy


def _gather(xp, data, yi, xi):
    n = data.shape[0]
    b = xp.arange(n).reshape(n, 1, 1)
    return data[b, :, yi, xi].transpose(0, 3, 1, 2)  # (N, C, Ho, Wo)


def _bilinear_sample(xp, data, grid):
    corners, _, _ = _corners(xp, data, grid)
    out = xp.zeros(data.shape[:2] + grid.shape[2:], dtype=data.dtype)
    for yi, xi, wgt, inside, _, _ in corners:
        out += _gather(xp, data, yi, xi) * (wgt * inside)[:, None]
    return out


def _bilinear_sample_bwd(xp, data, grid, og):
    n, c, h, w = data.shape
    corners, fx, fy = _corners(xp, data, grid)
    g_data = xp.zeros_like(data)
    g_x = xp.zeros(grid.shape[:1] + grid.shape[2:], dtype=data.dtype)
    g_y = xp.zeros_like(g_x)
    b = xp.broadcast_to(xp.arange(n).reshape(n, 1, 1), g_x.shape)
    for yi, xi, wgt, inside, dy, dx in corners:
        # data: scatter each output gradient back to its neighbours (NHWC view so add.at indexes one pixel)
        contrib = (og * (wgt * inside)[:, None]).transpose(0, 2, 3, 1)  # (N, Ho, Wo, C)
        view = g_data.transpose(0, 2, 3, 1)
        xp.add.at(view, (b, yi, xi), contrib)
        # grid: d(weight)/d(x, y) times the neighbour's value
        value = (_gather(xp, data, yi, xi) * og).sum(axis=1) * inside
        wx = fx if dx else 1 - fx
        wy = fy if dy else 1 - fy
        g_x += value * wy * (1 if dx else -1)
        g_y += value * wx * (1 if dy else -1)
    g_grid = xp.stack([g_x * (w - 1) / 2, g_y * (h - 1) / 2], axis=1)
    return g_data, g_grid


class _BilinearSamplerProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d, g = in_shapes
        if d is None or g is None:
            return list(in_shapes), [None], []
        if len(d) != 4 or len(g) != 4 or g[1] != 2 or g[0] != d[0]:
            raise self.error(f"data has shape {tuple(d)} and grid {tuple(g)}; they must be (N, C, H, W) and "
                             f"(N, 2, Ho, Wo)")
        return [d, g], [(d[0], d[1], g[2], g[3])], []


defop("BilinearSampler", param=BilinearSamplerParam, base=_BilinearSamplerProperty, arguments=("data", "grid"),
      deps="og,in", fwd=lambda xp, p, data, grid: _bilinear_sample(xp, data, grid),
      bwd=lambda xp, p, og, ins, outs: list(_bilinear_sample_bwd(xp, ins[0], ins[1], og[0])),
      doc="Sample (N, C, H, W) data at a grid (N, 2, Ho, Wo) of normalised (x, y) with bilinear interpolation; "
          "points outside the image read 0.")


# -- both in one ---------------------------------------------------------------------------------------------
class _SpatialTransformerProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d, loc = in_shapes
        if d is None:
            return list(in_shapes), [None], []
        if len(d) != 4:
            raise self.error(f"data has shape {tuple(d)}; it must be (N, C, H, W)")
        if loc is not None and tuple(loc) != (d[0], 6):
            raise self.error(f"loc has shape {tuple(loc)} but data {tuple(d)} needs ({d[0]}, 6)")
        if min(self.params.target_shape) < 1:
            raise self.error(f"needs target_shape=(H, W), got {self.params.target_shape}")
        return [d, (d[0], 6)], [(d[0], d[1], *self.params.target_shape)], []


def _spatial_transformer_bwd(xp, p, og, ins, outs):
    data, loc = ins
    grid = _affine_grid(xp, loc, p.target_shape)
    g_data, g_grid = _bilinear_sample_bwd(xp, data, grid, og[0])
    n, _, h, w = g_grid.shape
    g_loc = (g_grid.reshape(n, 2, h * w) @ _base_grid(xp, h, w, g_grid.dtype).T).reshape(n, 6)
    return [g_data, g_loc]


defop("SpatialTransformer", param=SpatialTransformerParam, base=_SpatialTransformerProperty,
      arguments=("data", "loc"), deps="og,in",
      fwd=lambda xp, p, data, loc: _bilinear_sample(xp, data, _affine_grid(xp, loc, p.target_shape)),
      bwd=_spatial_transformer_bwd,
      doc="Warp (N, C, H, W) data by per-sample affine matrices loc (N, 6) onto target_shape, sampling "
          "bilinearly (GridGenerator + BilinearSampler).")
