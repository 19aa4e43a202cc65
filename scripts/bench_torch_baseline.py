#!/usr/bin/env python3
"""Baseline for scripts/bench-read.sh: PyTorch's DataLoader over an image folder, PIL decoding,
torchvision's RandomResizedCrop(SIZE) + RandomHorizontalFlip, batches of BATCH, WORKERS worker
processes; the same transform `shardpack bench --crop SIZE` runs. Where torchvision does not import
(requirements.txt: not beside torch's CPU build), the same transform written with PIL and numpy,
torchvision's algorithm (RandomResizedCrop.get_params: 10 draws, then the centre crop), is used
and said so on stderr. Prints images per second over
LIMIT images (the first in sorted order), timed as bench-read.sh times shardpack: from opening the
dataset (listing the folder, the DataLoader and its worker processes) to the last batch.

Usage: bench_torch_baseline.py SRC SIZE BATCH WORKERS LIMIT
"""
import os
import sys
import time

import math
import random

import numpy as np
import torch
from PIL import Image

try:
    import torchvision.transforms as T
except (ImportError, RuntimeError) as e:  # RuntimeError: a torchvision built for another torch
    T = None
    print(f"bench_torch_baseline: torchvision does not import ({e}); the PIL transform instead", file=sys.stderr)


def pil_random_resized_crop(size, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
    """RandomResizedCrop(size) + RandomHorizontalFlip + PILToTensor as torchvision does them."""

    def transform(image):
        width, height = image.size
        area = width * height
        box = None
        for _ in range(10):
            target = area * random.uniform(*scale)
            aspect = math.exp(random.uniform(math.log(ratio[0]), math.log(ratio[1])))
            w, h = int(round(math.sqrt(target * aspect))), int(round(math.sqrt(target / aspect)))
            if 0 < w <= width and 0 < h <= height:
                top, left = random.randint(0, height - h), random.randint(0, width - w)
                box = (left, top, left + w, top + h)
                break
        if box is None:  # the centre crop, its ratio clamped to the range
            if width / height < ratio[0]:
                w, h = width, int(round(width / ratio[0]))
            elif width / height > ratio[1]:
                w, h = int(round(height * ratio[1])), height
            else:
                w, h = width, height
            top, left = (height - h) // 2, (width - w) // 2
            box = (left, top, left + w, top + h)
        out = image.resize((size, size), Image.BILINEAR, box=box)
        if random.random() < 0.5:
            out = out.transpose(Image.FLIP_LEFT_RIGHT)
        return torch.from_numpy(np.asarray(out).transpose(2, 0, 1).copy())

    return transform


def train_transform(size):
    """RandomResizedCrop(size) + RandomHorizontalFlip + PILToTensor: torchvision's where torchvision
    imports beside this torch, else pil_random_resized_crop (the same draws and calls)."""
    if T is not None:
        return T.Compose([T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.PILToTensor()])
    return pil_random_resized_crop(size)


def folder_dataset(src, size, limit=None):
    """The image folder as torchvision users load it: PIL decode, RandomResizedCrop(size),
    RandomHorizontalFlip, uint8 CHW tensors; the first `limit` images in sorted order."""
    classes = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    items = sorted((os.path.join(src, c, f), i) for i, c in enumerate(classes) for f in os.listdir(os.path.join(src, c)))
    items = items[:limit] if limit else items
    transform = train_transform(size)

    class Folder(torch.utils.data.Dataset):
        def __len__(self):
            return len(items)

        def __getitem__(self, i):
            path, label = items[i]
            return transform(Image.open(path).convert("RGB")), label

    return Folder()


def main():
    src, size, batch, workers, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    torch.set_num_threads(1)
    start = time.time()
    loader = torch.utils.data.DataLoader(folder_dataset(src, size, limit), batch_size=batch, shuffle=True,
                                         num_workers=workers)
    n = sum(images.shape[0] for images, _ in loader)
    elapsed = time.time() - start
    print("%d %.3f %.1f" % (n, elapsed, n / elapsed))


if __name__ == "__main__":
    main()
