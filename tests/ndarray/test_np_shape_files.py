"""Files saved in one shape semantics and loaded in the other: MXNet 1.9.1 refuses both ways."""

import pytest

import mxasync as mx


def test_files_load_only_in_the_shape_semantics_they_were_saved_in(tmp_path):
    v2, v3 = str(tmp_path / "v2"), str(tmp_path / "v3")
    mx.nd.save(v2, [mx.nd.ones((2, 0))])
    with mx.np_shape(True):
        mx.nd.save(v3, [mx.nd.ones((2, 0)), mx.nd.array(5.0)])
        with pytest.raises(mx.MXNetError, match="not saved in np shape semantics"):
            mx.nd.load(v2)
        loaded = mx.nd.load(v3)
        assert [a.shape for a in loaded] == [(2, 0), ()]
    with pytest.raises(mx.MXNetError, match="saved in np shape semantics, must be loaded"):
        mx.nd.load(v3)
    with open(v3, "rb") as f:
        with pytest.raises(mx.MXNetError, match="saved in np shape semantics"):
            mx.nd.load_frombuffer(f.read())
    assert mx.nd.load(v2)[0].shape == (2, 0)
    # npx.load reads both kinds (its arrays are mx.np arrays either way)
    assert [a.shape for a in mx.npx.load(v3)] == [(2, 0), ()]
    assert mx.npx.load(v2)[0].shape == (2, 0)
