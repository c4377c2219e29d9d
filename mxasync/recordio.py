"""``mx.recordio``: MXNet's RecordIO files (see :mod:`mxasync.io.recordio`)."""

from .io.recordio import IRHeader, MXIndexedRecordIO, MXRecordIO, pack, pack_img, unpack, unpack_img

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img", "unpack_img"]
