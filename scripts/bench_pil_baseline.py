#!/usr/bin/env python3
"""Baseline for scripts/bench-pack.sh: what a typical Python pre-decode script does. PIL decodes each
image, converts it to RGB, resizes the shorter side to RESIZE (bilinear), centre-crops CROP x CROP,
and a pool of PROCESSES workers writes the pixels into one memory-mapped (N, CROP, CROP, 3) .npy.
Prints images per second.

With --draft, PIL's own reduced-size JPEG decode first (Image.draft: libjpeg's DCT scaling to the
smallest scale that keeps both sides at least RESIZE), the best a PIL script can do; the resize and
crop are then the same.

Usage: bench_pil_baseline.py SRC OUT.npy RESIZE CROP PROCESSES [LIMIT] [--draft]
"""
import multiprocessing
import os
import sys
import time

import numpy as np
from PIL import Image

args = [a for a in sys.argv[1:] if a != "--draft"]
draft = "--draft" in sys.argv[1:]
src, out, resize, crop, processes = args[0], args[1], int(args[2]), int(args[3]), int(args[4])
limit = int(args[5]) if len(args) > 5 else None


def transform(path):
    img = Image.open(path)
    if draft:
        img.draft("RGB", (resize, resize))
    img = img.convert("RGB")
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
