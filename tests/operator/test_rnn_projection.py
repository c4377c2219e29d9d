"""The fused RNN op's LSTMP (``projection_size``) against MXNet 1.9.1's forward values (fixtures by
fixtures_lstmp/make_fixtures.py; MXNet has no CPU gradient for it, the op table checks ours
numerically), and the checks of the LSTM-only options."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mxasync as mx

REF = np.load(Path(__file__).parent / "fixtures_lstmp" / "mxnet_ref.npz")
CASES = sorted({k.split("/")[0] for k in REF.files})


@pytest.mark.parametrize("case", CASES)
def test_lstmp_matches_mxnet(case):
    params = json.loads(str(REF[f"{case}/spec"]))
    outs = mx.nd.RNN(*[mx.nd.array(REF[f"{case}/in{i}"]) for i in range(4)], **params)
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), REF[f"{case}/out{i}"], rtol=1e-4, atol=1e-5, err_msg=f"{case} out{i}")


def test_cell_clipping_bounds_the_cell_state():
    x, c0 = mx.nd.ones((5, 2, 3)) * 3, mx.nd.ones((1, 2, 4)) * 5
    w = mx.nd.ones((4 * 4 * (3 + 4) + 32,)) * 0.5
    _, _, c = mx.nd.RNN(x, w, mx.nd.zeros((1, 2, 4)), c0, state_size=4, num_layers=1, mode="lstm",
                        state_outputs=True, lstm_state_clip_min=-0.5, lstm_state_clip_max=0.75)
    assert np.allclose(c.asnumpy(), 0.75)


@pytest.mark.parametrize("params,match", [
    (dict(mode="gru", projection_size=2), "need mode='lstm'"),
    (dict(mode="lstm", projection_size=5), "larger than state_size"),
    (dict(mode="lstm", lstm_state_clip_min=0.0), "must be given together"),
    (dict(mode="lstm", lstm_state_clip_min=1.0, lstm_state_clip_max=0.0), "is below"),
])
def test_lstm_options_are_checked(params, match):
    s = mx.sym.RNN(mx.sym.var("x"), mx.sym.var("w"), mx.sym.var("h"), mx.sym.var("c"), state_size=4, num_layers=1,
                   **params) if params["mode"] == "lstm" else mx.sym.RNN(mx.sym.var("x"), mx.sym.var("w"),
                                                                         mx.sym.var("h"), state_size=4, num_layers=1,
                                                                         **params)
    with pytest.raises(mx.base.MXNetError, match=match):
        s.infer_shape(x=(2, 1, 3))
