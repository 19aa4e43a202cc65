#!/usr/bin/env python3
"""Baseline for scripts/bench-resize.sh: bounding the resolution of a JPEG tree the way img2dataset
does it, with its best settings. A pool of PROCESSES workers (imap, in order, chunks of 8) reads each
image, lets PIL decode it at a reduced DCT scale (Image.draft, to the smallest scale that still
covers the target), converts it to RGB, turns it upright (EXIF), resizes it with BOX (area
averaging) so its longer side is MAX_SIDE (images within the bound keep their bytes), and saves it
as JPEG at QUALITY (4:2:0). The parent writes every sample into tar shards of 10,000 as img2dataset
does (tarfile, the image and its class). Prints images per second, open to last shard closed.

Usage: bench_pil_resize.py SRC OUTDIR MAX_SIDE QUALITY PROCESSES
"""
import io
import multiprocessing
import os
import sys
import tarfile
import time

from PIL import Image, ImageOps

src, out, max_side, quality, processes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])


def bound(item):
    index, path, label = item
    data = open(path, "rb").read()
    img = Image.open(io.BytesIO(data))
    w, h = img.size
    if img.getexif().get(274, 1) >= 5:
        w, h = h, w
    side, other = max(w, h), min(w, h)
    if side > max_side:
        rest = max(1, (2 * other * max_side + side) // (2 * side))
        size = (max_side, rest) if w >= h else (rest, max_side)
        img.draft("RGB", size if img.getexif().get(274, 1) < 5 else (size[1], size[0]))
        img = ImageOps.exif_transpose(img.convert("RGB")).resize(size, Image.BOX)
        buffer = io.BytesIO()
        img.save(buffer, format="JPEG", quality=quality)
        data = buffer.getvalue()
    return index, data, label


def main():
    classes = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    items = []
    for label, cls in enumerate(classes):
        for name in sorted(os.listdir(os.path.join(src, cls))):
            items.append((len(items), os.path.join(src, cls, name), label))
    os.makedirs(out, exist_ok=True)
    start = time.perf_counter()
    tar = None
    with multiprocessing.Pool(processes) as pool:
        for index, data, label in pool.imap(bound, items, chunksize=8):
            if index % 10000 == 0:
                if tar is not None:
                    tar.close()
                tar = tarfile.open(os.path.join(out, f"shard-{index // 10000:06d}.tar"), "w")
            for ext, payload in (("jpg", data), ("cls", str(label).encode())):
                info = tarfile.TarInfo(f"{index:09d}.{ext}")
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))
    tar.close()
    seconds = time.perf_counter() - start
    print(f"{len(items) / seconds:.2f}")


if __name__ == "__main__":
    main()
