#!/usr/bin/env python3
"""Baseline (a) of scripts/device-bench.sh: PyTorch's DataLoader over an image folder, PIL decoding,
torchvision RandomResizedCrop(SIZE) + RandomHorizontalFlip, WORKERS workers, pin_memory, each batch
copied with .cuda(non_blocking=True): images/s delivered into GPU memory over SECONDS.

Usage: device_torch_baseline.py SRC SIZE BATCH WORKERS SECONDS   (prints "... images/s N")
"""
import sys
import time

import torch

from bench_torch_baseline import folder_dataset  # the same dataset as the CPU baseline


def main():
    src, size, batch, workers, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    loader = torch.utils.data.DataLoader(folder_dataset(src, size), batch_size=batch, shuffle=True, num_workers=workers,
                                         pin_memory=True, persistent_workers=True, prefetch_factor=4)
    n, start = 0, None
    while True:
        for images, labels in loader:
            images = images.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            if start is None:  # from the first batch on: worker start-up is not the steady state
                torch.cuda.synchronize()
                start = time.time()
                continue
            n += images.shape[0]
            if time.time() - start >= seconds:
                torch.cuda.synchronize()
                print(f"torch DataLoader {workers} workers: {n} images in {time.time() - start:.1f} s, images/s {n / (time.time() - start):.1f}")
                return


if __name__ == "__main__":
    main()
