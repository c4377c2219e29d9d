"""The fused ``RNN`` op's stack: layers and directions over the cell loops of ``kernels/rnn_cells.py``,
the reserve space a training forward keeps for backward, and the weight gradients as one GEMM over
all steps.

The reserve space (MXNet's ``reserve_space``, rnn-inl.h) is the op's last, hidden output: one flat
vector holding, per layer and direction, the gate activations (T, N, G*H), for LSTM the cell states
and their tanh (and the unprojected h with a projection, the clip mask with clipping), for GRU
``W_hn h + b_hn``; per layer the outputs (T, N, D*R); and last one flag, 1 after a training forward.
Backward reads it; where the flag is 0 (the forward ran in inference, or a call in inference got an
empty reserve) backward runs the forward once more into a scratch reserve, without dropout, as the
forward did.  An inference forward works in a scratch of one direction's parts and two layers' outputs.
Scratch (the input projection, the gradient buffers, an inference forward's parts) comes from the
op's temp space (MXNet's kTempSpace), so a call touches no fresh memory pages.

>>> from mxasync.operator.nn.rnn import RNNParam
>>> ReserveLayout(RNNParam(state_size=4, num_layers=2, mode="lstm"), 5, 3, 2).size()
961
"""

from __future__ import annotations

from typing import Any

from ...runtime.resource import ResourceRequest
from ..base import ADD_TO, NULL, assign
from ..kernels import rnn_cells as cells
from ..kernels._runner import PLAIN
from ..kernels.dropout import dropout

__all__ = ["GATES", "ReserveLayout", "has_dropout", "rnn_param_size", "param_slices", "rnn_forward", "rnn_backward", "width"]

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def width(p) -> int:
    """The features of the hidden state fed back and output: P with a projection, else H."""
    return p.projection_size or p.state_size


def _dirs(p) -> int:
    return 2 if p.bidirectional else 1


def rnn_param_size(mode: str, input_size: int, state_size: int, num_layers: int, bidirectional: bool,
                   projection_size: int | None = None) -> int:
    """The length of the flat ``parameters`` vector."""
    g, h, d = GATES[mode], state_size, 2 if bidirectional else 1
    r = projection_size or h
    size = 0
    for layer in range(num_layers):
        in_l = input_size if layer == 0 else d * r
        size += d * (g * h * (in_l + r) + 2 * g * h + (r * h if projection_size else 0))
    return size


def param_slices(p, input_size: int) -> list[list[tuple[int, tuple]]]:
    """Per (layer, direction): (offset, shape) of W_i2h, W_h2h, b_i2h, b_h2h (and W_h2r) in the flat vector."""
    g, h, d, r = GATES[p.mode], p.state_size, _dirs(p), width(p)
    out, off = [], 0
    for layer in range(p.num_layers):
        in_l = input_size if layer == 0 else d * r
        for _ in range(d):
            entry = []
            for shape in ((g * h, in_l), (g * h, r)) + (((r, h),) if p.projection_size else ()):
                entry.append((off, shape))
                off += shape[0] * shape[1]
            out.append(entry)
    for entry in out:
        for pos in (2, 3):
            entry.insert(pos, (off, (g * h,)))
            off += g * h
    return out


def _count(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


class ReserveLayout:
    """Where each part of the reserve space lies in the flat vector (see the module docstring)."""

    def __init__(self, p, steps: int, batch: int, input_size: int):
        self.p, self.steps, self.batch = p, steps, batch
        h = p.state_size
        per_step = lambda features: (steps, features, batch)  # noqa: E731 (feature-major steps: kernels/rnn_cells.py)
        parts = {"gates": per_step(GATES[p.mode] * h), "ht": per_step(width(p))}
        if p.mode == "lstm":
            parts.update(c=per_step(h), tc=per_step(h))
            if p.projection_size:
                parts["hp"] = per_step(h)
            if p.lstm_state_clip_min is not None:
                parts["clip_mask"] = per_step(h)
        elif p.mode == "gru":
            parts["hn"] = per_step(h)
        self.parts = parts
        self.part_size = sum(_count(s) for s in parts.values())
        self.y_shape = (steps, batch, _dirs(p) * width(p))
        self.cells = p.num_layers * _dirs(p)

    def size(self, shared: bool = False) -> int:
        """Elements of the reserve (with its flag); ``shared``: of an inference scratch (one direction's
        parts, two layers' outputs)."""
        if shared:
            return self.part_size + min(2, self.p.num_layers) * _count(self.y_shape)
        return self.cells * self.part_size + self.p.num_layers * _count(self.y_shape) + 1

    def views(self, flat, shared: bool = False) -> tuple[list[dict], list]:
        """Per (layer, direction) a dict of part views, and per layer the outputs (T, N, D*R)."""
        off, cells = 0, []
        for _ in range(self.cells):
            part_off = 0 if shared else off
            views = {}
            for name, shape in self.parts.items():
                views[name] = flat[part_off:part_off + _count(shape)].reshape(shape)
                part_off += _count(shape)
            cells.append(views)
            off = part_off
        y_size, ys = _count(self.y_shape), []
        for layer in range(self.p.num_layers):
            start = off + (layer % 2 if shared else layer) * y_size
            ys.append(flat[start:start + y_size].reshape(self.y_shape))
        return cells, ys


def _to_cell_order(xp, w, hidden: int):
    """LSTM gate blocks (rows of a weight, parts of a bias) from MXNet's i, f, g, o to the cells' o, i, f, g."""
    return xp.concatenate([w[k * hidden:(k + 1) * hidden] for k in cells.LSTM_ORDER])


def _store_mxnet_order(dst, src, hidden: int, lstm: bool) -> None:
    """Write gradient ``src`` (gate blocks in the cells' order) into ``dst`` in MXNet's order."""
    if not lstm:
        dst[...] = src
        return
    for j, k in enumerate(cells.LSTM_ORDER):
        dst[k * hidden:(k + 1) * hidden] = src[j * hidden:(j + 1) * hidden]


def _forward_weights(xp, p, wx, wh, bx, bh):
    """``(wx, wh, bias, b_hn)`` as the cells take them: LSTM gates reordered, the rows of sigmoid
    gates halved (the cells compute a sigmoid as ``0.5 * tanh(z / 2) + 0.5``), GRU's b_hn apart."""
    h = p.state_size
    if p.mode == "lstm":
        wx, wh, bias = (_to_cell_order(xp, a, h) for a in (wx, wh, bx + bh))
        for a in (wx, wh, bias):
            a[:3 * h] *= 0.5
        return wx, wh, bias, None
    if p.mode == "gru":
        wx, wh, bias = wx.copy(), wh.copy(), bx.copy()
        bias[:2 * h] += bh[:2 * h]
        for a in (wx, wh, bias):
            a[:2 * h] *= 0.5
        return wx, wh, bias, bh[2 * h:]
    return wx, wh, bx + bh, None


def _unpack(params_vec, p, input_size: int) -> list[list]:
    """Per (layer, direction): [W_i2h, W_h2h, b_i2h, b_h2h, W_h2r or None] as views of the flat vector."""
    layers = []
    for entry in param_slices(p, input_size):
        arrays = [params_vec[o:o + _count(s)].reshape(s) for o, s in entry]
        layers.append(arrays + [None] * (5 - len(arrays)))
    return layers


def _clip(p):
    lo = p.lstm_state_clip_min
    return None if lo is None else (lo, p.lstm_state_clip_max, p.lstm_state_clip_nan)


def _run_cell(xp, p, x, weights, st: dict, h0, c0, reverse: bool, run) -> None:
    """One direction of one layer: the input projections of every step as one batched GEMM onto the
    biases (``W_i2h @ x[t].T`` for all t: 10 ms where one (G*H, T*N) GEMM and the copy into the
    per-step blocks take 13, at 1024x256, T=32, N=64), the cell loop, then the hidden states into
    the layer's output (T, N, D*R)."""
    wx, wh, bx, bh, whr = weights
    wx, wh, bias, bhn = _forward_weights(xp, p, wx, wh, bx, bh)
    gates = st["gates"]
    gates[...] = bias[None, :, None]
    cells.gemm_add(xp, run, wx, x.transpose(0, 2, 1), gates)
    if p.mode == "lstm":
        cells.lstm_forward(xp, st, wh, h0.T, c0.T, reverse, whr, _clip(p), run=run)
    elif p.mode == "gru":
        cells.gru_forward(xp, st, wh, bhn, h0.T, reverse, run=run)
    else:
        cells.plain_forward(xp, gates, st["ht"], wh, h0.T, reverse, p.mode, run=run)
    st["y"][...] = st["ht"].transpose(0, 2, 1)


def _direction(p, cell: dict, ys, layer: int, d: int) -> dict:
    r = width(p)
    return dict(cell, y=ys[layer][:, :, d * r:(d + 1) * r])


_ALIGN = 16  # elements: scratch arrays start 64 bytes apart


def _temp_space(xp, op_ctx, size: int, dtype):
    """``size`` elements of the op's temp space (MXNet's kTempSpace: a pooled buffer, so a call touches no
    fresh pages), or a new array for a call that got none."""
    for res in op_ctx.requested:
        if res.req is ResourceRequest.TEMP_SPACE:
            return res.get_space((size,), dtype)
    return xp.empty(size, dtype=dtype)


def _scratch(xp, op_ctx, dtype, shapes: dict) -> dict:
    """Named scratch arrays of ``shapes``, carved one after another from the op's temp space."""
    sizes = {name: -(-_count(shape) // _ALIGN) * _ALIGN for name, shape in shapes.items()}
    flat = _temp_space(xp, op_ctx, sum(sizes.values()), dtype)
    arrays, off = {}, 0
    for name, shape in shapes.items():
        arrays[name] = flat[off:off + _count(shape)].reshape(shape)
        off += sizes[name]
    return arrays


def _forward_scratch(p, layout, keep: bool, masks: bool) -> dict:
    """The forward's scratch: the masked layer input, and the parts of an inference forward (one
    direction's, two layers' outputs) that a training one keeps."""
    shapes = {}
    if masks:
        shapes["x"] = layout.y_shape
    if not keep:
        shapes["reserve"] = (layout.size(shared=True),)
    return shapes


def _stack_forward(xp, p, data, params_vec, h0, c0, masks, cell_views, ys, space: dict, run, finals=None) -> None:
    """Run every layer and direction into the reserve views; ``finals(k, st, reverse)`` after each
    direction (the final states are read there: an inference scratch is reused by the next one)."""
    dirs = _dirs(p)
    weights = _unpack(params_vec, p, data.shape[2])
    x = data
    for layer in range(p.num_layers):
        if layer > 0:
            x = ys[layer - 1] if masks is None else xp.multiply(ys[layer - 1], masks[layer - 1], out=space["x"])
        for d in range(dirs):
            k = layer * dirs + d
            st = _direction(p, cell_views[k], ys, layer, d)
            _run_cell(xp, p, x, weights[k], st, h0[k], c0[k] if c0 is not None else None, d == 1, run)
            if finals is not None:
                finals(k, st, d == 1)


def has_dropout(p) -> bool:
    """Whether the op drops out between layers in training (and so has the hidden masks output)."""
    return p.p > 0 and p.num_layers > 1


def _make_masks(xp, p, op_ctx, out):
    """The dropout masks between layers of a training forward, drawn into ``out``."""
    rng = next(r for r in op_ctx.requested if r.req is ResourceRequest.RANDOM).get_random()
    out[...] = dropout(xp, xp.ones(out.shape, dtype=out.dtype), p.p, rng=rng)[1]
    return out


def rnn_forward(xp: Any, p, op_ctx, in_data: list, req: list, out_data: list, run=PLAIN) -> None:
    """The op's forward: outputs (and final states) per ``req``; a training forward fills the reserve
    (``out_data[-1]``; an empty one, as an inference call gets, is left alone)."""
    data, params_vec, h0 = in_data[0], in_data[1], in_data[2]
    c0 = in_data[3] if p.mode == "lstm" else None
    layout = ReserveLayout(p, data.shape[0], data.shape[1], data.shape[2])
    reserve = out_data[-1]
    keep = op_ctx.is_train and reserve.size > 0
    masks = _make_masks(xp, p, op_ctx, out_data[-2]) if keep and has_dropout(p) else None
    space = _scratch(xp, op_ctx, data.dtype, _forward_scratch(p, layout, keep, masks is not None))
    cell_views, ys = layout.views(reserve if keep else space["reserve"], shared=not keep)
    hy = xp.empty(h0.shape, dtype=h0.dtype) if p.state_outputs else None
    cy = xp.empty(c0.shape, dtype=c0.dtype) if p.state_outputs and c0 is not None else None

    def finals(k, st, reverse):
        last = 0 if reverse else -1
        if hy is not None:
            hy[k] = st["y"][last]
        if cy is not None:
            cy[k] = st["c"][last].T

    _stack_forward(xp, p, data, params_vec, h0, c0, masks, cell_views, ys, space, run, finals)
    assign(out_data[0], req[0], ys[-1])
    if hy is not None:
        assign(out_data[1], req[1], hy)
    if cy is not None:
        assign(out_data[2], req[2], cy)
    if reserve.size > 0:
        reserve[-1] = 1 if keep else 0


def _reserve_for_backward(xp, p, in_data, out_data, run) -> tuple[list, list, Any]:
    """The reserve views and masks backward reads: the forward's own, or (flag 0) a forward run again."""
    data = in_data[0]
    layout = ReserveLayout(p, data.shape[0], data.shape[1], data.shape[2])
    reserve = out_data[-1]
    if reserve.size > 0 and float(reserve[-1]) == 1:
        cell_views, ys = layout.views(reserve)
        return cell_views, ys, out_data[-2] if has_dropout(p) else None
    flat = xp.empty(layout.size(), dtype=data.dtype)  # an inference forward ran: again, without dropout
    cell_views, ys = layout.views(flat)
    c0 = in_data[3] if p.mode == "lstm" else None
    _stack_forward(xp, p, data, in_data[1], in_data[2], c0, None, cell_views, ys, {}, run)
    return cell_views, ys, None


def _backward_weights(xp, p, wx, wh):
    """``(wx, wh)`` with LSTM's gate rows in the cells' order (unscaled: gradients are of the true gates)."""
    if p.mode == "lstm":
        return _to_cell_order(xp, wx, p.state_size), _to_cell_order(xp, wh, p.state_size)
    return wx, wh


def _h_prev_product(xp, run, dgates_h, y, h0, reverse: bool, out) -> None:
    """``out = sum_t dgates_h[:, t] @ h_prev[t]``, h_prev the state each step started from: the outputs
    shifted by one step (two GEMMs over views, nothing copied) and ``h0`` for the first step."""
    steps, batch = y.shape[0], y.shape[1]
    flat = dgates_h.reshape(dgates_h.shape[0], -1)
    shifted, first = (flat[:, batch:], 0) if not reverse else (flat[:, :-batch], steps - 1)
    prev = y[:-1] if not reverse else y[1:]
    run.matmul(xp, shifted, prev.reshape(-1, y.shape[2]), out=out)
    cells.gemm_add(xp, run, dgates_h[:, first], h0, out)


def _cell_backward(xp, p, st, weights, h0, c0, dy, dh, dc, bufs, reverse: bool, run):
    """BPTT of one direction: the cells fill the per-step buffers (``steps_*``), which then go
    feature-major over all steps (``bufs['dgates']`` (G*H, T, N), GRU's ``dgates_h``, LSTMP's ``g_r``)
    for the weight GEMMs; returns the gradients of h0 and c0 (None without a cell state)."""
    wh, whr = weights
    dy_steps = bufs["steps_dy"]
    dy_steps[...] = dy.transpose(0, 2, 1)
    dh = dh.T if dh is not None else None
    dgates = bufs["steps_dgates"]
    dc0 = None
    if p.mode == "lstm":
        dh0, dc0 = cells.lstm_backward(xp, st, wh, c0.T, dy_steps, dh, dc.T if dc is not None else None,
                                       dgates, reverse, whr, bufs.get("steps_g_r"), run=run)
        dc0 = dc0.T
    elif p.mode == "gru":
        dh0 = cells.gru_backward(xp, st, wh, h0.T, dy_steps, dh, dgates, bufs["steps_dgates_h"], reverse, run=run)
    else:
        dh0 = cells.plain_backward(xp, st["ht"], wh, dy_steps, dh, dgates, reverse, p.mode, run=run)
    for name in ("dgates", "dgates_h", "g_r"):
        if name in bufs:
            bufs[name][...] = bufs["steps_" + name].transpose(1, 0, 2)
    return dh0.T, dc0


def _weight_grads(xp, p, slices, d_params, x, st, bufs, h0, reverse: bool, run) -> None:
    """The gradients of one direction's weights and biases, each one GEMM (or sum) over all steps,
    written into ``d_params`` in MXNet's layout."""
    h, lstm = p.state_size, p.mode == "lstm"
    dgates = bufs["dgates"]
    dgates_h = bufs.get("dgates_h", dgates)
    flat = dgates.reshape(dgates.shape[0], -1)
    views = [d_params[o:o + _count(s)].reshape(s) for o, s in slices]
    mm = run.matmul
    _store_mxnet_order(views[0], mm(xp, flat, x.reshape(-1, x.shape[2])), h, lstm)
    dwh = xp.empty(views[1].shape, dtype=dgates.dtype)
    _h_prev_product(xp, run, dgates_h, st["y"], h0, reverse, dwh)
    _store_mxnet_order(views[1], dwh, h, lstm)
    bias = flat.sum(axis=1)
    _store_mxnet_order(views[2], bias, h, lstm)
    _store_mxnet_order(views[3], bias if dgates_h is dgates else dgates_h.reshape(flat.shape).sum(axis=1), h, lstm)
    if p.projection_size:
        g_r, hp = bufs["g_r"], st["hp"]  # sum_t g_r[t] @ hp[t].T with hp feature-major over all steps
        views[4][...] = mm(xp, g_r.reshape(g_r.shape[0], -1), hp.transpose(1, 0, 2).reshape(h, -1).T)


def _backward_scratch(p, layout, input_size: int) -> dict:
    """The backward's scratch: the gradient buffers one direction fills, reused by every direction, per
    step (``steps_*``, (T, features, N)) and feature-major over all steps ((features, T, N)); two
    layers' input gradients; the masked layer input."""
    steps, batch = layout.steps, layout.batch
    gh = GATES[p.mode] * p.state_size
    features = {"dgates": gh}
    if p.mode == "gru":
        features["dgates_h"] = gh
    if p.projection_size:
        features["g_r"] = p.projection_size
    shapes = {"steps_dy": (steps, width(p), batch)}
    for name, n in features.items():
        shapes[name] = (n, steps, batch)
        shapes["steps_" + name] = (steps, n, batch)
    widest = max(input_size, layout.y_shape[2]) if p.num_layers > 1 else input_size
    shapes.update(dx0=(steps * batch * widest,), dx1=(steps * batch * widest,))
    if has_dropout(p):
        shapes["x"] = layout.y_shape
    return shapes


def rnn_backward(xp: Any, p, op_ctx, out_grad: list, in_data: list, out_data: list, req: list, in_grad: list,
                 run=PLAIN) -> None:
    """The op's backward from the reserve space; writes the input gradients per ``req``."""
    if all(r == NULL for r in req):
        return
    data, params_vec, h0 = in_data[0], in_data[1], in_data[2]
    c0 = in_data[3] if p.mode == "lstm" else None
    steps, batch, _ = data.shape
    layout = ReserveLayout(p, steps, batch, data.shape[2])
    cell_views, ys, masks = _reserve_for_backward(xp, p, in_data, out_data, run)
    dirs, r = _dirs(p), width(p)
    dhy = out_grad[1] if p.state_outputs else None
    dcy = out_grad[2] if p.state_outputs and c0 is not None else None
    weights = _unpack(params_vec, p, data.shape[2])
    slices = param_slices(p, data.shape[2])
    want_params = req[1] != NULL
    d_params = in_grad[1] if req[1] != ADD_TO and want_params else xp.empty_like(params_vec)
    dh0 = xp.empty_like(h0)
    dc0 = xp.empty_like(c0) if c0 is not None else None
    bufs = _scratch(xp, op_ctx, data.dtype, _backward_scratch(p, layout, data.shape[2]))
    dy = out_grad[0]
    for layer in range(p.num_layers - 1, -1, -1):
        x = data if layer == 0 else (ys[layer - 1] if masks is None else
                                     xp.multiply(ys[layer - 1], masks[layer - 1], out=bufs["x"]))
        want_dx = layer > 0 or req[0] != NULL
        dx = bufs[f"dx{layer % 2}"][:x.size].reshape(x.shape) if want_dx else None
        for d in range(dirs):
            k = layer * dirs + d
            st = _direction(p, cell_views[k], ys, layer, d)
            wx, wh = _backward_weights(xp, p, weights[k][0], weights[k][1])
            dh = dhy[k] if dhy is not None else None
            dc = dcy[k] if dcy is not None else None
            dh0[k], dc_k = _cell_backward(xp, p, st, (wh, weights[k][4]), h0[k], c0[k] if c0 is not None else None,
                                          dy[:, :, d * r:(d + 1) * r], dh, dc, bufs, d == 1, run)
            if dc0 is not None:
                dc0[k] = dc_k
            if want_params:
                _weight_grads(xp, p, slices[k], d_params, x, st, bufs, h0[k], d == 1, run)
            if want_dx:  # dx = sum over directions of dgates.T @ W_i2h
                flat, dx2 = bufs["dgates"].reshape(bufs["dgates"].shape[0], -1), dx.reshape(-1, dx.shape[2])
                if d == 0:
                    run.matmul(xp, flat.T, wx, out=dx2)
                else:
                    cells.gemm_add(xp, run, flat.T, wx, dx2)
        if layer > 0 and masks is not None:
            xp.multiply(dx, masks[layer - 1], out=dx)
        dy = dx
    if req[0] != NULL:
        assign(in_grad[0], req[0], dy)
    if want_params and d_params is not in_grad[1]:
        assign(in_grad[1], req[1], d_params)
    assign(in_grad[2], req[2], dh0)
    if dc0 is not None:
        assign(in_grad[3], req[3], dc0)
