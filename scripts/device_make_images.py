#!/usr/bin/env python3
"""Writes N JPEGs in ImageNet layout (CLASSES folders) with PIL, on WORKERS processes: sizes around
500x375 and ~110 KB each, like ImageNet's training set. For scripts/device-bench.sh, which makes its
images on the device machine instead of carrying them.

Usage: device_make_images.py OUT N CLASSES WORKERS
"""
import os
import random
import sys
from multiprocessing import Pool

import numpy as np
from PIL import Image


def write(args):
    out, i, classes = args
    rng = np.random.default_rng(i)
    w, h = int(rng.integers(400, 600)), int(rng.integers(300, 450))
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * (i % 7 + 1) + y) % 256, (y * 2 + i) % 256, (x + y * (i % 5 + 1)) % 256], axis=-1)
    pixels = np.clip(base + rng.normal(0, 46, (h, w, 3)), 0, 255).astype(np.uint8)
    folder = os.path.join(out, f"n{i % classes:08d}")
    os.makedirs(folder, exist_ok=True)
    Image.fromarray(pixels).save(os.path.join(folder, f"img_{i:07d}.JPEG"), quality=90)


def main():
    out, n, classes, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    random.seed(0)
    with Pool(workers) as pool:
        pool.map(write, [(out, i, classes) for i in range(n)], chunksize=64)


if __name__ == "__main__":
    main()
