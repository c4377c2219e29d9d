"""Image IO without NDArray: codecs, numpy augmenters and the record-image pipeline."""

from . import augment, codec
from .augment import ImageAugmenter, normalize_batch
from .codec import decode, encode, resize
from .pipeline import RecordBatch, RecordImagePipeline

__all__ = [
    "augment", "codec", "decode", "encode", "resize", "ImageAugmenter", "normalize_batch",
    "RecordBatch", "RecordImagePipeline",
]
