"""``mx.gluon.utils``: split a batch over contexts, clip gradients by global norm, fetch files.

>>> import mxasync as mx
>>> x = mx.nd.arange(12).reshape((6, 2))
>>> [s.shape for s in split_data(x, 3)]
[(2, 2), (2, 2), (2, 2)]
>>> [s.context for s in split_and_load(x, [mx.cpu(0), mx.cpu(1)])]
[cpu(0), cpu(1)]
"""

from __future__ import annotations

import hashlib
import os
import warnings

import numpy as np

from .. import ndarray as nd
from ..atomic import AtomicFile
from ..ndarray.ndarray import NDArray
from .block import HookHandle
from .parameter import _brief_print_list

__all__ = ["split_data", "split_and_load", "clip_global_norm", "check_sha1", "download", "HookHandle",
           "shape_is_known", "_brief_print_list", "replace_file"]


def replace_file(src: str, dst: str) -> None:
    """Move ``src`` over ``dst`` in one step (``os.replace``: atomic on one file system), as MXNet's."""
    os.replace(src, dst)


def split_data(data: NDArray, num_slice: int, batch_axis: int = 0, even_split: bool = True) -> list:
    """Split ``data`` into ``num_slice`` parts along ``batch_axis`` (views when the axis is 0)."""
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(f"data with shape {data.shape} cannot be evenly split into {num_slice} slices along axis "
                         f"{batch_axis}. Use a batch size that's multiple of {num_slice} or set even_split=False to "
                         "allow uneven partitioning of data.")
    if size < num_slice:
        raise ValueError(f"Too many slices for data with shape {data.shape}. Arguments are num_slice={num_slice} "
                         f"and batch_axis={batch_axis}.")
    n_each, extras = divmod(size, num_slice)
    bounds = np.cumsum([0] + [n_each + 1] * extras + [n_each] * (num_slice - extras)).tolist()
    if batch_axis == 0:
        return [data[bounds[i]:bounds[i + 1]] for i in range(num_slice)]
    if even_split:
        out = nd.split(data, num_outputs=num_slice, axis=batch_axis)
        return out if isinstance(out, list) else [out]
    return [nd.slice_axis(data, axis=batch_axis, begin=bounds[i], end=bounds[i + 1]) for i in range(num_slice)]


def split_and_load(data, ctx_list: list, batch_axis: int = 0, even_split: bool = True) -> list:
    """Split ``data`` along ``batch_axis`` and put one part on each context of ``ctx_list``."""
    if not isinstance(data, NDArray):
        data = nd.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(c) for s, c in zip(slices, ctx_list, strict=True)]


def clip_global_norm(arrays: list, max_norm: float, check_isfinite: bool = True):
    """Scale ``arrays`` in place so that their joint 2-norm is at most ``max_norm``; returns that norm."""
    if not arrays:
        raise AssertionError("clip_global_norm: no arrays given")
    ctx = arrays[0].context

    def sq_norm(a):
        x = a.reshape((-1,))
        return nd.dot(x, x)

    total = nd.sqrt(nd.add_n(*[sq_norm(a).as_in_context(ctx) for a in arrays]))
    if check_isfinite and not np.isfinite(total.asscalar()):
        warnings.warn(UserWarning("nan or inf is detected. Clipping results will be undefined."), stacklevel=2)
    scale = max_norm / (total + 1e-8)
    scale = nd.min(nd.concat(scale, nd.ones(1, ctx=ctx), dim=0))
    for a in arrays:
        a *= scale.as_in_context(a.context)
    return total.asscalar() if check_isfinite else total


def check_sha1(filename: str, sha1_hash: str) -> bool:
    """Whether the SHA-1 of the file's content is ``sha1_hash``."""
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            sha1.update(chunk)
    return sha1.hexdigest() == sha1_hash


class _UrllibResponse:
    """Enough of ``requests.Response`` for :func:`download` when requests is not installed."""

    def __init__(self, url: str, verify: bool):
        import ssl
        import urllib.request

        context = None if verify else ssl._create_unverified_context()
        self._resp = urllib.request.urlopen(url, context=context, timeout=60)  # noqa: S310 - user-given URL
        self.status_code = self._resp.status

    def iter_content(self, chunk_size: int = 1024):
        while True:
            chunk = self._resp.read(chunk_size)
            if not chunk:
                return
            yield chunk


def _get(url: str, verify: bool):
    try:
        import requests
    except ImportError:
        return _UrllibResponse(url, verify)
    return requests.get(url, stream=True, verify=verify)


def download(url: str, path: str | None = None, overwrite: bool = False, sha1_hash: str | None = None,
             retries: int = 5, verify_ssl: bool = True) -> str:
    """Download ``url`` to ``path`` (a file or a folder); returns the file name.

    The file is written under a unique temporary name and moved into place, so
    processes downloading the same file at once leave one whole copy.  Without
    network every attempt fails and the last error is raised, naming the URL.
    """
    if path is None:
        fname = url.split("/")[-1]
        if not fname:
            raise AssertionError("Can't construct file-name from this URL. Please set the `path` option manually.")
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, url.split("/")[-1]) if os.path.isdir(path) else path
    if retries < 0:
        raise AssertionError(f"Number of retries should be at least 0, currently it's {retries}")
    if not verify_ssl:
        warnings.warn("Unverified HTTPS request is being made (verify_ssl=False). Adding certificate verification "
                      "is strongly advised.", stacklevel=2)
    if not (overwrite or not os.path.exists(fname) or (sha1_hash and not check_sha1(fname, sha1_hash))):
        return fname
    dirname = os.path.dirname(os.path.abspath(os.path.expanduser(fname)))
    os.makedirs(dirname, exist_ok=True)
    while retries + 1 > 0:
        try:
            print(f"Downloading {fname} from {url}...")
            r = _get(url, verify_ssl)
            if r.status_code != 200:
                raise RuntimeError(f"Failed downloading url {url}")
            f = AtomicFile(fname)  # the project's one writer: whole or nothing, even under kill -9
            try:
                for chunk in r.iter_content(chunk_size=1024):
                    if chunk:
                        f.write(chunk)
            except BaseException:
                f.discard()
                raise
            if not os.path.exists(fname) or (sha1_hash and not check_sha1(fname, sha1_hash)):
                f.commit()
            else:
                f.discard()
                warnings.warn(f"File {fname} exists in file system so the downloaded file is deleted", stacklevel=2)
            if sha1_hash and not check_sha1(fname, sha1_hash):
                raise UserWarning(f"File {fname} is downloaded but the content hash does not match. The repo may be "
                                  "outdated or download may be incomplete. If the \"repo_url\" is overridden, "
                                  "consider switching to the default repo.")
            break
        except Exception as e:
            retries -= 1
            if retries <= 0:
                raise RuntimeError(f"download: failed to fetch {url} into {fname}: {e!r} (is the network "
                                   "reachable?)") from e
            print(f"download failed due to {e!r}, retrying, {retries} attempt{'s' if retries > 1 else ''} left")
    return fname


def _get_repo_url() -> str:
    """The base URL of the model/data repository (``MXNET_GLUON_REPO`` overrides MXNet's S3 bucket)."""
    repo = os.environ.get("MXNET_GLUON_REPO", "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/")
    return repo if repo.endswith("/") else repo + "/"


def _get_repo_file_url(namespace: str, filename: str) -> str:
    return f"{_get_repo_url()}{namespace}/{filename}"


def shape_is_known(shape) -> bool:
    """Whether every dimension of ``shape`` is known (MXNet marks unknown ones 0 or -1)."""
    if shape is None:
        return False
    return all(int(d) > 0 for d in shape)
