"""Data loading: a DataLoader with two workers over arrays, and a JPEG decode + augment pipeline.

``dataloader_workers``: 4096 samples of 3x32x32 float32 with an integer label, shuffled, batch 64,
``num_workers=2`` and each framework's default worker kind (MXNet and PyTorch: processes; mxasync:
threads); one step is one epoch, its CPU time includes the workers'.
``image_pipeline``: the JPEG folder written by the suite (``cfg['data_dir']/jpeg``, two class folders),
decoded, randomly resized-cropped to 56x56 (area 0.08-1, aspect 3/4-4/3), flipped at random, made a
float CHW tensor in [0, 1] and normalized; batch 32, in the main process; one step is one epoch.
"""

from __future__ import annotations

import os

import numpy as np

from .common import Bench, NotApplicable

LOADER = {"samples": 4096, "shape": (3, 32, 32), "batch": 64, "workers": 2}
IMAGES = {"count": 512, "size": 64, "crop": 56, "batch": 32,
          "mean": (0.485, 0.456, 0.406), "std": (0.229, 0.224, 0.225)}


def write_jpeg_folder(root: str, encode) -> str:
    """The image set: ``IMAGES['count']`` smooth random colour images in two class folders, written with
    ``encode(path, uint8 HWC RGB array)``; returns the folder."""
    folder = os.path.join(root, "jpeg")
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:IMAGES["size"], 0:IMAGES["size"]] / IMAGES["size"]
    for i in range(IMAGES["count"]):
        os.makedirs(os.path.join(folder, f"class{i % 2}"), exist_ok=True)
        a, b, c = rng.random(3) * 6
        img = np.stack([np.sin(a * xx + b * yy), np.cos(b * xx - c * yy), np.sin(c * (xx + yy))], axis=-1)
        img = ((img + 1) * 127.5 + rng.normal(0, 8, img.shape)).clip(0, 255).astype(np.uint8)
        encode(os.path.join(folder, f"class{i % 2}", f"{i:04d}.jpg"), img)
    return folder


def _loader_arrays():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((LOADER["samples"],) + LOADER["shape"]).astype(np.float32),
            rng.integers(0, 10, LOADER["samples"]).astype(np.float32))


def build_mx(mx, name: str, cfg: dict) -> Bench:
    data = mx.gluon.data
    if name == "dataloader_workers":
        loader = data.DataLoader(data.ArrayDataset(*_loader_arrays()), batch_size=LOADER["batch"], shuffle=True,
                                 num_workers=LOADER["workers"])
    else:
        t = data.vision.transforms
        augment = t.Compose([t.RandomResizedCrop(IMAGES["crop"]), t.RandomFlipLeftRight(), t.ToTensor(),
                             t.Normalize(IMAGES["mean"], IMAGES["std"])])
        images = data.vision.ImageFolderDataset(os.path.join(cfg["data_dir"], "jpeg")).transform_first(augment)
        loader = data.DataLoader(images, batch_size=IMAGES["batch"], shuffle=True)

    def step():
        for x, _ in loader:
            x.wait_to_read()

    return Bench(step)


# -- PyTorch --------------------------------------------------------------------------------------
def _decoder():
    """A JPEG decoder in PyTorch's Python (torchvision is not installed there): OpenCV or Pillow."""
    try:
        import cv2

        return lambda path: cv2.cvtColor(cv2.imread(path), cv2.COLOR_BGR2RGB)
    except ImportError:
        pass
    try:
        from PIL import Image

        return lambda path: np.asarray(Image.open(path).convert("RGB"))
    except ImportError:
        raise NotApplicable("no JPEG decoder in PyTorch's Python (no torchvision, OpenCV or Pillow)") from None


def _torch_image_dataset(torch, folder: str):
    decode, f = _decoder(), torch.nn.functional
    files = sorted((os.path.join(d, n), int(d[-1])) for d, _, names in os.walk(folder) for n in names)
    mean = torch.tensor(IMAGES["mean"]).reshape(3, 1, 1)
    std = torch.tensor(IMAGES["std"]).reshape(3, 1, 1)
    gen = torch.Generator().manual_seed(0)

    def crop_box(h: int, w: int):
        for _ in range(10):  # the usual RandomResizedCrop draw: area 8-100 %, aspect 3/4-4/3
            area = h * w * float(torch.empty(1).uniform_(0.08, 1.0, generator=gen))
            ratio = float(torch.exp(torch.empty(1).uniform_(np.log(3 / 4), np.log(4 / 3), generator=gen)))
            cw, ch = int(round((area * ratio) ** 0.5)), int(round((area / ratio) ** 0.5))
            if 0 < cw <= w and 0 < ch <= h:
                return (int(torch.randint(0, h - ch + 1, (1,), generator=gen)),
                        int(torch.randint(0, w - cw + 1, (1,), generator=gen)), ch, cw)
        return 0, 0, h, w

    class Images(torch.utils.data.Dataset):
        def __len__(self):
            return len(files)

        def __getitem__(self, i):
            img = torch.from_numpy(decode(files[i][0])).permute(2, 0, 1)  # CHW uint8
            top, left, ch, cw = crop_box(img.shape[1], img.shape[2])
            x = img[:, top:top + ch, left:left + cw].float().unsqueeze(0)
            x = f.interpolate(x, size=(IMAGES["crop"], IMAGES["crop"]), mode="bilinear", align_corners=False)[0]
            if float(torch.rand(1, generator=gen)) < 0.5:
                x = x.flip(2)
            return (x / 255.0 - mean) / std, files[i][1]

    return Images()


def build_torch(torch, name: str, cfg: dict) -> Bench:
    data = torch.utils.data
    if name == "dataloader_workers":
        x, y = _loader_arrays()
        loader = data.DataLoader(data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
                                 batch_size=LOADER["batch"], shuffle=True, num_workers=LOADER["workers"])
    else:
        loader = data.DataLoader(_torch_image_dataset(torch, os.path.join(cfg["data_dir"], "jpeg")),
                                 batch_size=IMAGES["batch"], shuffle=True)

    def step():
        for _ in loader:
            pass

    return Bench(step)
