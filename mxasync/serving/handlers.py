"""Request bodies to examples, outputs to response bodies: the handler a model is served with.

:class:`TensorHandler` (the default) takes

* JSON (``application/json``): the example as nested lists, or an object mapping the model's
  input names to them (``{"data": [...]}``);
* a NumPy ``.npy`` file (``application/x-npy``, or any body starting with NumPy's magic);
* an image (``image/*``, or a body starting with a JPEG or PNG signature): decoded with
  ``mx.image.imdecode``, resized to the model's input height and width, gray or colour after its
  channel count, channels first, scaled by ``image_scale`` (default 1/255: pixels in [0, 1]).

It answers JSON (the output row as nested lists; a list of them for several outputs), or
``.npy`` when the request's ``Accept`` header asks for ``application/x-npy``. Subclass it and
override :meth:`~TensorHandler.preprocess` / :meth:`~TensorHandler.postprocess` for other formats.
"""

from __future__ import annotations

import io
import json

import numpy as np

from .. import image as mx_image
from .errors import InvalidInput
from .predictor import Predictor

__all__ = ["TensorHandler", "NPY_TYPE", "parse_shape"]

NPY_TYPE = "application/x-npy"
_IMAGE_MAGIC = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n")
_MAX_IMAGE_PIXELS = 4096 * 4096


class TensorHandler:
    """The default handler (see the module's docstring).

    >>> TensorHandler().postprocess(np.array([0.5, 2.0], np.float32), "*/*")
    (b'[0.5, 2.0]', 'application/json')
    """

    def __init__(self, image_scale: float = 1 / 255):
        self.image_scale = image_scale

    async def preprocess(self, body: bytes, content_type: str, predictor: Predictor):
        """The example ``predictor.predict`` takes, from a request body; :class:`InvalidInput` when it cannot."""
        kind = (content_type or "").split(";")[0].strip().lower()
        if not body:
            raise InvalidInput("empty request body: send the example as JSON, .npy or an image")
        if kind == NPY_TYPE or body.startswith(b"\x93NUMPY"):
            return self._npy(body)
        if kind.startswith("image/") or body.startswith(_IMAGE_MAGIC):
            return await self._image(body, predictor)
        return self._json(body, predictor)

    def _json(self, body: bytes, predictor: Predictor):
        try:
            value = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InvalidInput(f"the request body is not valid JSON ({e}); send nested lists of numbers, "
                               "a .npy file (Content-Type: application/x-npy) or an image") from None
        if isinstance(value, dict) and len(predictor.model.data_names) == 1 and len(value) == 1:
            value = next(iter(value.values()))
        if not isinstance(value, (list, dict, int, float)):
            raise InvalidInput(f"JSON body: expected nested lists of numbers, got a {type(value).__name__}")
        return value

    @staticmethod
    def _npy(body: bytes) -> np.ndarray:
        try:
            return np.load(io.BytesIO(body), allow_pickle=False)
        except (ValueError, EOFError, OSError) as e:
            raise InvalidInput(f"the body is not a readable .npy array ({e})") from None

    async def _image(self, body: bytes, predictor: Predictor) -> np.ndarray:
        shape = predictor.input_shapes[0]
        gray = shape is not None and len(shape) == 3 and shape[0] == 1
        try:
            img = mx_image.imdecode(body, flag=0 if gray else 1, max_pixels=_MAX_IMAGE_PIXELS)
            if shape is not None and len(shape) == 3 and None not in shape[1:]:
                img = mx_image.imresize(img, shape[2], shape[1])
            pixels = await img.asnumpy_async()
        except Exception as e:  # noqa: BLE001 - a broken image is the client's
            raise InvalidInput(f"the image does not decode: {e}") from None
        return pixels.transpose(2, 0, 1).astype(np.float32) * np.float32(self.image_scale)

    def postprocess(self, output, accept: str) -> tuple[bytes, str]:
        """The response body and its content type for ``output`` (an array or a tuple of arrays)."""
        if NPY_TYPE in (accept or ""):
            buf = io.BytesIO()
            if isinstance(output, tuple):
                np.savez(buf, *output)
            else:
                np.save(buf, output, allow_pickle=False)
            return buf.getvalue(), NPY_TYPE
        value = [o.tolist() for o in output] if isinstance(output, tuple) else output.tolist()
        return json.dumps(value).encode(), "application/json"


def parse_shape(text: str) -> tuple:
    """``"1,28,28"`` -> ``(1, 28, 28)``; ``?``, ``-1`` or an empty field is a free dimension (``None``).

    >>> parse_shape("3,?,?")
    (3, None, None)
    """
    try:
        return tuple(None if d.strip() in ("", "?", "-1") else int(d) for d in text.split(","))
    except ValueError:
        raise InvalidInput(f"input_shape: expected comma-separated sizes such as 1,28,28, got {text!r}") from None
