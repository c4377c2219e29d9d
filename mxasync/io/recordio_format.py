"""RecordIO's byte format (dmlc-core): how one record is split into parts and read back.

A part is two little-endian ``uint32`` words and a payload::

    0xced7230a  (cflag << 29) | length  payload... zero padding to 4 bytes

``cflag`` is 0 for a whole record; a payload that contains the magic word at a
4-byte aligned position is split there (the magic itself is dropped) into
parts flagged 1 (first), 2 (middle) and 3 (last), and the reader puts the
magic back between them.  The file classes live in :mod:`.recordio`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from ..base import MXAsyncError

__all__ = ["MAGIC", "MAGIC_BYTES", "PART_HEAD", "MAX_LEN", "encode_record", "decode_record"]

MAGIC = 0xCED7230A
MAGIC_BYTES = struct.pack("<I", MAGIC)
PART_HEAD = struct.Struct("<II")
MAX_LEN = (1 << 29) - 1


def encode_record(payload: bytes) -> bytes:
    """The exact bytes RecordIO stores for one record (parts, headers, padding).

    >>> encode_record(b"abc").hex()
    '0a23d7ce0300000061626300'
    """
    n = len(payload)
    if n > MAX_LEN:
        raise MXAsyncError(f"RecordIO records must be shorter than 2**29 bytes, got {n}")
    out: list[bytes] = []
    start = 0
    lower = n & ~3
    pos = payload.find(MAGIC_BYTES)
    while 0 <= pos < lower:
        if pos % 4:
            pos = payload.find(MAGIC_BYTES, pos + 1)
            continue
        out.append(PART_HEAD.pack(MAGIC, ((1 if start == 0 else 2) << 29) | (pos - start)))
        out.append(payload[start:pos])
        start = pos + 4
        pos = payload.find(MAGIC_BYTES, start)
    out.append(PART_HEAD.pack(MAGIC, ((3 if start else 0) << 29) | (n - start)))
    out.append(payload[start:])
    out.append(b"\0" * (-n % 4))
    return b"".join(out)


def decode_record(read: Callable[[int, int], bytes], offset: int, uri: str) -> tuple[bytes | None, int]:
    """Decode the record at ``offset``: ``(payload, next offset)``, or ``(None, offset)`` at end of file.

    ``read(pos, n)`` returns up to ``n`` bytes of the file at ``pos``.
    """
    chunks: list[bytes] = []
    if offset < 0:
        raise MXAsyncError(f"{uri}: no record at the negative byte offset {offset}")
    pos = offset
    while True:
        head = read(pos, 8)
        if not head:
            if chunks:
                raise MXAsyncError(f"{uri}: truncated RecordIO file: the record at byte offset {offset} "
                                   f"ends at byte offset {pos} without its last part")
            return None, pos
        if len(head) < 8:
            raise MXAsyncError(f"{uri}: truncated RecordIO file: {len(head)} of 8 header bytes at byte offset {pos}")
        magic, lrec = PART_HEAD.unpack(head)
        if magic != MAGIC:
            raise MXAsyncError(f"{uri}: corrupt RecordIO file: magic 0x{magic:08x} at byte offset {pos} "
                               f"(expected 0x{MAGIC:08x}): not a record boundary or not a RecordIO file")
        cflag, length = lrec >> 29, lrec & MAX_LEN
        if cflag > 3 or (cflag in (2, 3)) != bool(chunks):
            where = "continues a record" if cflag in (2, 3) else "starts a record"
            raise MXAsyncError(f"{uri}: corrupt RecordIO file: part flag {cflag} at byte offset {pos} "
                               f"{where} in the wrong place")
        padded = (length + 3) & ~3
        data = read(pos + 8, padded)
        if len(data) < padded:
            raise MXAsyncError(f"{uri}: truncated RecordIO file: the record part at byte offset {pos} needs "
                               f"{padded} payload bytes but only {len(data)} remain")
        chunks.append(data if padded == length else data[:length])
        pos += 8 + padded
        if cflag in (0, 3):
            break
        chunks.append(MAGIC_BYTES)
    return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), pos
