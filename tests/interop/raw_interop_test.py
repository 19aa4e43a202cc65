#!/usr/bin/env python3
"""Reads a shardpack raw dataset with numpy alone, as docs/formats/raw.md says, and compares every
image with an independent decode + resize + centre crop of its source by PIL.

Tolerance (stated in docs/formats/raw.md): mean absolute difference per image at most 5 levels
(of 255), and at most 1% of values differing by more than 24 levels. shardpack decodes JPEG at a
reduced DCT scale and shrinks with area averaging; PIL decodes fully and shrinks with its
antialiasing bilinear filter, so values differ slightly but never structurally.

Usage: raw_interop_test.py SHARDPACK MAKE_IMAGE_TREE WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image

shardpack, make_tree, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
src, out, ks = (os.path.join(work, d) for d in ("src", "out", "keep"))
subprocess.run([make_tree, src, "--classes", "3", "--images", "24", "--png-every", "4", "--noise", "8"], check=True)
subprocess.run([shardpack, "pack", src, out, "--format", "raw", "--resize", "72", "--crop", "64x56",
                "--samples-per-shard", "10", "--quiet", "--no-sync"], check=True)
subprocess.run([shardpack, "pack", src, ks, "--format", "raw", "--keep-size", "--resize", "48", "--quiet", "--no-sync"],
               check=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def reference(path, resize, crop=None):
    img = Image.open(path).convert("RGB")
    w, h = img.size
    if w <= h:
        size = (resize, (h * resize + w // 2) // w)
    else:
        size = ((w * resize + h // 2) // h, resize)
    img = img.resize(size, Image.BILINEAR)
    a = np.asarray(img)
    if crop:
        ch, cw = crop
        top, left = (a.shape[0] - ch) // 2, (a.shape[1] - cw) // 2
        a = a[top:top + ch, left:left + cw]
    return a


def close_enough(a, b, what):
    d = np.abs(a.astype(np.int16) - b.astype(np.int16))
    check(a.shape == b.shape, "%s: shape %s != %s" % (what, a.shape, b.shape))
    if a.shape == b.shape:
        print("%-45s mean %.2f  >24 %.4f" % (what, d.mean(), (d > 24).mean())) if os.environ.get("SHOW") else None
    check(d.mean() <= 5.0 and (d > 24).mean() <= 0.01,
              "%s: mean diff %.2f, share > 24: %.4f" % (what, d.mean(), (d > 24).mean()))


classes = sorted(os.listdir(src))
manifest = json.load(open(os.path.join(out, "manifest.json")))
check(manifest["format"] == "raw" and manifest["samples"] == 24, "manifest")
seen = 0
for entry in manifest["shardlist"]:
    stem = os.path.join(out, entry["url"][:-4])
    pixels = np.load(os.path.join(out, entry["url"]), mmap_mode="r")          # (N, H, W, 3) uint8
    labels = np.load(stem + ".labels.npy")
    keys = open(stem + ".keys.txt").read().split("\n")[:-1]
    check(pixels.shape == (entry["nsamples"], 64, 56, 3) and pixels.dtype == np.uint8, "shape %s" % (pixels.shape,))
    check(isinstance(pixels, np.memmap), "memory-mapped")
    check(len(labels) == len(keys) == entry["nsamples"], "labels and keys")
    table = [l.split("\t") for l in open(stem + ".samples.tsv").read().splitlines()[1:]]
    for i, key in enumerate(keys):
        # Sample i is the (seen + i)-th source file in sorted order (no shuffle).
        index = seen + i
        files = sorted(os.path.join(c, f) for c in classes for f in os.listdir(os.path.join(src, c)))
        path = files[index]
        check(key == "%09d" % index, "key %s" % key)
        check(labels[i] == classes.index(path.split("/")[0]), "label of %s" % key)
        close_enough(pixels[i], reference(os.path.join(src, path), 72, (64, 56)), path)
        check(table[i][0] == key, "sample table key")
    seen += entry["nsamples"]
check(seen == 24, "every sample once")

# --keep-size: a 1-D pixel array with offsets and shapes.
entry = json.load(open(os.path.join(ks, "manifest.json")))["shardlist"][0]
stem = os.path.join(ks, entry["url"][:-4])
flat = np.load(os.path.join(ks, entry["url"]), mmap_mode="r")
offsets, shapes = np.load(stem + ".offsets.npy"), np.load(stem + ".shapes.npy")
files = sorted(os.path.join(c, f) for c in classes for f in os.listdir(os.path.join(src, c)))
for i, path in enumerate(files):
    image = flat[offsets[i]:offsets[i + 1]].reshape(shapes[i])
    close_enough(image, reference(os.path.join(src, path), 48), "keep-size " + path)

# --compress zstd: each chunk is one zstd frame; decompressed, the chunks are the plain shard's pixels.
import zstandard
zs = os.path.join(work, "zstd")
subprocess.run([shardpack, "pack", src, zs, "--format", "raw", "--resize", "72", "--crop", "64x56",
                "--samples-per-shard", "10", "--compress", "zstd", "--chunk-samples", "4", "--quiet", "--no-sync"],
               check=True)
for entry in json.load(open(os.path.join(zs, "manifest.json")))["shardlist"]:
    stem = entry["url"][:-4]
    data = open(os.path.join(zs, entry["url"]), "rb").read()
    chunks = np.load(os.path.join(zs, stem + ".chunks.npy"))
    pixels = b"".join(zstandard.ZstdDecompressor().decompress(data[chunks[c]:chunks[c + 1]])
                      for c in range(len(chunks) - 1))
    plain = np.load(os.path.join(out, stem + ".npy"))
    check(pixels == plain.tobytes(), "%s: decompressed chunks equal the plain shard" % entry["url"])

for f in failures:
    print("FAIL:", f)
print("%d passed, %d failed" % (0 if failures else 1, 1 if failures else 0))
sys.exit(1 if failures else 0)
