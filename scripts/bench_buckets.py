#!/usr/bin/env python3
"""Bucketed loading (issue 41): pixels per second out of three loaders over the same images, one
epoch each, taking turns for RUNS rounds (these machines are shared and noisy: compare within a round):

  buckets   shardpack.Loader(DATASET, buckets=SPEC): every batch one bucket, each image scaled to cover
            it and cut (random offset, flip), decoded at the coarsest DCT scale that covers it;
  square    shardpack.Loader(DATASET, size=S): the same images cropped square (random-resized-crop,
            torchvision's scale=(0.08, 1)) at S x S, S^2 the mean area of the buckets' batches: the
            same output pixels per image, from a crop of about half the image on average;
  whole     the same with scale=(1, 1), ratio=(1, 1): the largest centred square, about as much of
            each image as a bucket's cut takes (the like-for-like decode);
  python    the kohya-ss / diffusers way: a batch sampler that groups the images by bucket (from
            PIL's header sizes, read at start), a torch Dataset that opens each image with PIL,
            applies its EXIF orientation, resizes it to cover the bucket and cuts it at a random
            offset, flips it, and a DataLoader with WORKERS worker processes.

Each is timed from opening the dataset to the last batch. Prints one line per run and the medians
with the ratios buckets/square and buckets/python.

Usage: bench_buckets.py DATASET SRC SPEC BATCH WORKERS RUNS
  DATASET: SRC packed by shardpack (wds); SPEC: a bucket list "WxH,..." (presets and rules too).
"""
import math
import os
import random
import statistics
import sys
import time

import numpy
import torch
from PIL import Image, ImageOps

import shardpack


def buckets_of(spec):
    """The bucket list, read back from the loader itself for presets and rules."""
    if "=" not in spec and spec != "sdxl":
        return [tuple(int(v) for v in part.split("x")) for part in spec.split(",")]
    raise SystemExit("bench_buckets: give the buckets as a list WxH,... (what the python baseline needs)")


def nearest(buckets, w, h):
    distances = [abs(math.log(w / h) - math.log(bw / bh)) for bw, bh in buckets]
    return distances.index(min(distances))


def shardpack_buckets(dataset, spec, batch):
    pixels = 0
    for images, _ in shardpack.Loader(dataset, batch_size=batch, buckets=spec, seed=1):
        pixels += images.numel() // 3
    return pixels


def shardpack_square(dataset, size, batch, **crop):
    pixels = 0
    for images, _ in shardpack.Loader(dataset, batch_size=batch, size=size, seed=1, **crop):
        pixels += images.numel() // 3
    return pixels


class BucketFolder(torch.utils.data.Dataset):
    """Each image resized to cover its bucket and cut at a random offset, as kohya-ss's trainers do."""

    def __init__(self, items, buckets):
        self.items, self.buckets = items, buckets

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, bucket = self.items[i]
        bw, bh = self.buckets[bucket]
        with Image.open(path) as opened:
            image = ImageOps.exif_transpose(opened).convert("RGB")
        w, h = image.size
        scale = max(bw / w, bh / h)
        image = image.resize((max(bw, round(w * scale)), max(bh, round(h * scale))), Image.BILINEAR)
        x, y = random.randint(0, image.width - bw), random.randint(0, image.height - bh)
        image = image.crop((x, y, x + bw, y + bh))
        if random.random() < 0.5:
            image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        return torch.from_numpy(numpy.array(image)).permute(2, 0, 1)


def square_rows_share(src, draws=20):
    """The share of an image's stored rows that the square loader's decode reads on average: its
    random-resized-crop box (torchvision's draw: scale U(0.08, 1), log-uniform ratio 3/4 to 4/3, 10
    tries, else the centre), drawn on the image as shown, ends at some stored row of H, and a JPEG
    decode stops there (a JPEG stored sideways too: its box is decoded where it lies as stored).
    Entropy decoding, most of a JPEG decode's time, follows the rows read, and a bucket's cut needs
    every row: so this share is about the most that buckets / square can reach."""
    rng = random.Random(1)
    total = count = 0
    for root, _, files in os.walk(src):
        for f in files:
            with Image.open(os.path.join(root, f)) as im:
                (w, h), orientation = im.size, im.getexif().get(0x0112, 1)
            shown = (h, w) if orientation in (5, 6, 7, 8) else (w, h)
            for _ in range(draws):
                total += stored_end(random_resized_crop_box(rng, *shown), orientation, h) / h
                count += 1
    return total / count


def random_resized_crop_box(rng, w, h):
    """torchvision's RandomResizedCrop box (x, y, width, height) on a w x h image."""
    for _ in range(10):
        area = w * h * rng.uniform(0.08, 1.0)
        ratio = math.exp(rng.uniform(math.log(3 / 4), math.log(4 / 3)))
        cw, ch = round(math.sqrt(area * ratio)), round(math.sqrt(area / ratio))
        if 0 < cw <= w and 0 < ch <= h:
            return rng.randint(0, w - cw), rng.randint(0, h - ch), cw, ch
    # torchvision's fallback: the whole image, narrowed to the ratio range, centred.
    cw, ch = (w, round(w / (3 / 4))) if w / h < 3 / 4 else (min(w, round(h * 4 / 3)), h)
    return (w - cw) // 2, (h - ch) // 2, cw, ch


def stored_end(box, orientation, stored_h):
    """The stored row after the last one a box on the image as shown needs (EXIF orientations: 3 and 4
    show the stored top at the bottom, 6 and 7 on the right, 5 and 8 on the left)."""
    x, y, cw, ch = box
    if orientation in (3, 4):
        return stored_h - y
    if orientation in (6, 7):
        return stored_h - x
    if orientation in (5, 8):
        return x + cw
    return y + ch


def python_buckets(src, buckets, batch, workers):
    paths = sorted(os.path.join(root, f) for root, _, files in os.walk(src) for f in files)
    items = []
    for path in paths:
        with Image.open(path) as im:  # (the header only: as shown, a quarter turn swaps the sides)
            w, h = im.size[::-1] if im.getexif().get(0x0112, 1) in (5, 6, 7, 8) else im.size
        items.append((path, nearest(buckets, w, h)))
    groups = {}
    for i, (_, k) in enumerate(items):
        groups.setdefault(k, []).append(i)
    batches = []
    for indices in groups.values():
        random.shuffle(indices)
        batches += [indices[j:j + batch] for j in range(0, len(indices), batch)]
    random.shuffle(batches)
    loader = torch.utils.data.DataLoader(BucketFolder(items, buckets), batch_sampler=batches, num_workers=workers)
    return sum(images.numel() // 3 for images in loader)


def main():
    if len(sys.argv) != 7:
        raise SystemExit(__doc__)
    dataset, src, spec = sys.argv[1:4]
    batch, workers, runs = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    torch.set_num_threads(1)
    buckets = buckets_of(spec)
    # The square side whose area is the bucketed epoch's mean area per image.
    area = count = 0
    for b in shardpack.Loader(dataset, batch_size=batch, buckets=spec, transform="eval", seed=1).batches():
        area += b.count * b.images().shape[1] * b.images().shape[2]
        count += b.count
    side = round(math.sqrt(area / count))
    print(f"buckets {spec}; square side {side} (the buckets' mean area); batch {batch}; python workers {workers}")
    results = {"buckets": [], "square": [], "whole": [], "python": []}
    for run in range(runs):
        for name in results:
            start = time.perf_counter()
            if name == "buckets":
                pixels = shardpack_buckets(dataset, spec, batch)
            elif name == "square":
                pixels = shardpack_square(dataset, side, batch)
            elif name == "whole":
                pixels = shardpack_square(dataset, side, batch, scale=(1.0, 1.0), ratio=(1.0, 1.0))
            else:
                pixels = python_buckets(src, buckets, batch, workers)
            elapsed = time.perf_counter() - start
            results[name].append(pixels / elapsed)
            print(f"run {run + 1} {name:8s} {pixels / 1e6:8.1f} Mpixels {elapsed:7.2f} s {pixels / elapsed / 1e6:8.2f} "
                  "Mpixels/s", flush=True)
    med = {name: statistics.median(v) for name, v in results.items()}
    print("medians (Mpixels/s): " + ", ".join(f"{n} {v / 1e6:.2f}" for n, v in med.items()))
    print(f"buckets / square {med['buckets'] / med['square']:.3f}; buckets / whole {med['buckets'] / med['whole']:.3f}; "
          f"buckets / python {med['buckets'] / med['python']:.2f}")
    print(f"the square loader's decode reads {square_rows_share(src):.3f} of an image's rows on average (its crop's "
          "end), a bucket's all of them: about the most buckets / square can reach while entropy decoding dominates")


if __name__ == "__main__":
    main()
