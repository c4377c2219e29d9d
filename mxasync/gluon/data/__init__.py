"""``mx.gluon.data``: datasets, samplers and the DataLoader (MXNet 1.9's names). See docs/gluon_data.md."""

from . import vision
from .dataloader import DataLoader, default_batchify_fn, default_mp_batchify_fn
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from .sampler import BatchSampler, FilterSampler, IntervalSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset", "Sampler", "SequentialSampler",
           "RandomSampler", "FilterSampler", "BatchSampler", "IntervalSampler", "DataLoader",
           "default_batchify_fn", "default_mp_batchify_fn", "vision"]
