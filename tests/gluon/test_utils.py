"""gluon.utils: split_data, split_and_load, clip_global_norm, check_sha1, download without network."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import mxasync as mx
from mxasync.gluon import utils


def test_split_data_even_and_uneven():
    x = mx.nd.arange(20).reshape((10, 2))
    parts = utils.split_data(x, 5)
    assert [p.shape for p in parts] == [(2, 2)] * 5
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]), x.asnumpy())
    with pytest.raises(ValueError, match="evenly split"):
        utils.split_data(x, 3)
    uneven = utils.split_data(x, 3, even_split=False)
    assert [p.shape[0] for p in uneven] == [4, 3, 3]
    cols = utils.split_data(mx.nd.ones((2, 6)), 3, batch_axis=1)
    assert [p.shape for p in cols] == [(2, 2)] * 3
    cols = utils.split_data(mx.nd.ones((2, 7)), 3, batch_axis=1, even_split=False)
    assert [p.shape[1] for p in cols] == [3, 2, 2]
    with pytest.raises(ValueError, match="Too many slices"):
        utils.split_data(mx.nd.ones((2, 2)), 3, even_split=False)


def test_split_and_load():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    parts = utils.split_and_load(np.arange(8).reshape((4, 2)), ctxs)
    assert [p.context for p in parts] == ctxs
    np.testing.assert_array_equal(parts[1].asnumpy(), [[4, 5], [6, 7]])
    one = utils.split_and_load(mx.nd.ones((3, 1)), [mx.cpu(2)])
    assert len(one) == 1 and one[0].context == mx.cpu(2)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_clip_global_norm():
    a = mx.nd.array([3.0, 0.0])
    b = mx.nd.array([[0.0, 4.0]], ctx=mx.cpu(1))
    norm = utils.clip_global_norm([a, b], 1.0)
    assert norm == pytest.approx(5.0)
    np.testing.assert_allclose(a.asnumpy(), [0.6, 0.0], rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), [[0.0, 0.8]], rtol=1e-6)
    c = mx.nd.array([0.3, 0.4])
    utils.clip_global_norm([c], 10.0)
    np.testing.assert_allclose(c.asnumpy(), [0.3, 0.4], rtol=1e-6)
    with pytest.warns(UserWarning, match="nan or inf"):
        utils.clip_global_norm([mx.nd.array([np.inf, 1.0])], 1.0)
    assert isinstance(utils.clip_global_norm([mx.nd.ones((2,))], 1.0, check_isfinite=False), mx.nd.NDArray)


def test_check_sha1(tmp_path):
    f = tmp_path / "f.bin"
    f.write_bytes(b"mxasync")
    assert utils.check_sha1(str(f), hashlib.sha1(b"mxasync").hexdigest())
    assert not utils.check_sha1(str(f), "0" * 40)


def test_download_existing_file_is_not_fetched(tmp_path):
    f = tmp_path / "model.params"
    f.write_bytes(b"data")
    assert utils.download("http://invalid.invalid/model.params", path=str(tmp_path)) == str(f)


def test_download_without_network_raises_clearly(tmp_path, monkeypatch):
    def refuse(url, verify):
        raise ConnectionError("network is unreachable")

    monkeypatch.setattr(utils, "_get", refuse)
    with pytest.raises(RuntimeError, match="failed to fetch http://invalid.invalid/x.bin"):
        utils.download("http://invalid.invalid/x.bin", path=str(tmp_path / "x.bin"), retries=1)
    assert not list(tmp_path.iterdir())


def test_download_writes_whole_file(tmp_path, monkeypatch):
    class Response:
        status_code = 200

        def iter_content(self, chunk_size):
            yield b"abc"
            yield b"def"

    monkeypatch.setattr(utils, "_get", lambda url, verify: Response())
    out = utils.download("http://example.invalid/d/file.txt", path=str(tmp_path),
                         sha1_hash=hashlib.sha1(b"abcdef").hexdigest())
    assert open(out, "rb").read() == b"abcdef"
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]
