#!/usr/bin/python3
"""Baseline for scripts/bench-read.sh: PyTorch's DataLoader over an image folder, PIL decoding,
torchvision's RandomResizedCrop(SIZE) + RandomHorizontalFlip, batches of BATCH, WORKERS worker
processes; the same transform `shardpack bench --crop SIZE` runs. Prints images per second over
LIMIT images (the first in sorted order), timed as bench-read.sh times shardpack: from opening the
dataset (listing the folder, the DataLoader and its worker processes) to the last batch.

Usage: bench_torch_baseline.py SRC SIZE BATCH WORKERS LIMIT
"""
import os
import sys
import time

import torch
import torchvision.transforms as T
from PIL import Image


def folder_dataset(src, size, limit=None):
    """The image folder as torchvision users load it: PIL decode, RandomResizedCrop(size),
    RandomHorizontalFlip, uint8 CHW tensors; the first `limit` images in sorted order."""
    classes = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    items = sorted((os.path.join(src, c, f), i) for i, c in enumerate(classes) for f in os.listdir(os.path.join(src, c)))
    items = items[:limit] if limit else items
    transform = T.Compose([T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.PILToTensor()])

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
