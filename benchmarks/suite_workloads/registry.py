"""What the suite runs: each workload's family module, steps per measurement and the unit it reports.

Steps are fixed (the same for every framework) and sized so that the whole suite, three frameworks
times three rounds, stays under ten minutes on a 2-core machine.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Workload:
    name: str
    family: str  # module in this package holding build_mx / build_torch
    steps: int  # timed steps per measurement
    warmup: int  # untimed steps before the first measurement in a process
    about: str
    per: str = "step"  # what one reported figure is for: a step, a call, a batch
    per_step: int = 1  # how many of ``per`` one step holds (figures are divided by it)


WORKLOADS: tuple[Workload, ...] = (
    Workload("mlp_module", "train_small", 20, 2, "MLP 784-512-512-10, batch 128, Module, SGD momentum"),
    Workload("mlp_gluon", "train_small", 20, 2, "the same MLP as a hybridized Gluon net with Trainer"),
    Workload("lenet_module", "train_small", 8, 2, "LeNet (conv 20/50 5x5, fc 500), batch 64, 1x28x28, Module"),
    Workload("lenet_gluon", "train_small", 8, 2, "the same LeNet, hybridized Gluon"),
    Workload("resnet18_train", "convnets", 3, 1, "ResNet-18 v1 training, batch 8, 3x64x64, 10 classes"),
    Workload("resnet18_train_224", "convnets", 2, 1, "the same at 3x224x224 with 1000 classes"),
    Workload("mobilenet_infer", "convnets", 3, 1, "MobileNet v1 1.0 inference (BatchNorm after every conv), "
             "batch 8, 3x128x128"),
    Workload("lstm_lm", "text", 3, 1, "LSTM LM: embed 64, fused 2-layer LSTM 128, T=32, batch 64, vocab 1000"),
    Workload("gru_lm", "text", 3, 1, "the same LM with a fused 2-layer GRU"),
    Workload("embedding_classifier", "text", 20, 2, "Embedding 20000x64, mean over T=64, dense 5, "
             "softmax CE, batch 64"),
    Workload("sparse_linear", "sparse_linear", 20, 2, "csr (256 x 10^5, 50 nnz/row) dot weight (10^5 x 8), "
             "softmax CE, lazy SGD on the touched rows"),
    Workload("tiny_op", "tiny_op", 5, 1, "a + b on 10-element float32 arrays", per="call", per_step=1000),
    Workload("dataloader_workers", "data_pipeline", 2, 1, "DataLoader, 2 workers, 4096 samples of 3x32x32, "
             "batch 64, shuffled, default worker kind", per="batch", per_step=64),
    Workload("image_pipeline", "data_pipeline", 2, 1, "JPEG folder (512 images, 64x64): decode, random "
             "resized crop 56, flip, to tensor, normalize, batch 32", per="batch", per_step=16),
    Workload("nd_save", "serialization", 1, 0, "save a dict of 200000 float32 arrays of 4 elements"),
    Workload("nd_load", "serialization", 1, 0, "load that file back"),
)


def by_name(names: str | None) -> tuple[Workload, ...]:
    """The workloads named in a comma-separated list (all when ``names`` is empty), in suite order."""
    if not names:
        return WORKLOADS
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    known = {w.name for w in WORKLOADS}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise SystemExit(f"suite.py: --only names unknown workloads {unknown}; known: {sorted(known)}")
    return tuple(w for w in WORKLOADS if w.name in wanted)
