#!/usr/bin/python3
"""Baseline for scripts/bench-pack.sh: what a typical Python pre-decode script does. PIL decodes each
image, converts it to RGB, resizes the shorter side to RESIZE (bilinear), centre-crops CROP x CROP,
and a pool of PROCESSES workers writes the pixels into one memory-mapped (N, CROP, CROP, 3) .npy.
Prints images per second.

Usage: bench_pil_baseline.py SRC OUT.npy RESIZE CROP PROCESSES [LIMIT]
"""
import multiprocessing
import os
import sys
import time

import numpy as np
from PIL import Image

src, out, resize, crop, processes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
limit = int(sys.argv[6]) if len(sys.argv) > 6 else None


def transform(path):
    img = Image.open(path).convert("RGB")
    w, h = img.size
    size = (resize, round(h * resize / w)) if w <= h else (round(w * resize / h), resize)
    img = img.resize(size, Image.BILINEAR)
    left, top = (img.width - crop) // 2, (img.height - crop) // 2
    return np.asarray(img.crop((left, top, left + crop, top + crop)))


def work(args):
    start, paths = args
    pixels = np.load(out, mmap_mode="r+")
    for i, p in enumerate(paths):
        pixels[start + i] = transform(p)
    pixels.flush()
    return len(paths)


if __name__ == "__main__":
    paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs if not f.startswith("."))
    paths = paths[:limit] if limit else paths
    t0 = time.time()
    np.lib.format.open_memmap(out, mode="w+", dtype=np.uint8, shape=(len(paths), crop, crop, 3)).flush()
    chunks = [(i, paths[i:i + 64]) for i in range(0, len(paths), 64)]
    with multiprocessing.Pool(processes) as pool:
        done = sum(pool.imap_unordered(work, chunks))
    elapsed = time.time() - t0
    print("%d %.3f %.1f" % (done, elapsed, done / elapsed))
