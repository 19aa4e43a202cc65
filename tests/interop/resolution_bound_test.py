#!/usr/bin/env python3
"""pack --max-side against independent references: PIL decodes every re-encoded image at the size
computed here by hand from the documented rule; its pixels are as close to a float area-average of
the original (numpy) as PIL's own pipeline gets (draft, BOX resize, save at the same quality), less
0.5 dB; images within the bound are byte-identical to their sources; an EXIF-rotated input comes
out upright without an orientation tag; an ICC profile survives, a grey JPEG stays grey and a CMYK one
becomes RGB of PIL's colours, counted in pack's summary; a mask is resized with its image by nearest neighbour (only
the source's class ids) and a caption is untouched; 1 and 2 threads give identical shards; lmdb stores what wds
stores; convert bounds as pack does; verify --decode checks the bound; the metadata and the sample tables keep the original
size, and stat summarises it; bad options and a corrupt large image are refused or
skipped with the exact messages.

Usage: resolution_bound_test.py SHARDPACK MAKE_IMAGE_TREE WORKDIR
"""
import glob
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tarfile

import lmdb
import numpy as np
from PIL import Image

shardpack, make_tree, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
src = os.path.join(work, "src")
failures = []
BOUND, QUALITY = 256, 90


def check(cond, what):
    if not cond:
        failures.append(what)


def run(*args):
    return subprocess.run([shardpack, *args], capture_output=True, text=True)


# The tree: large camera-like JPEGs (and PNGs) in two classes, small ones within the bound beside
# them, and an upright-when-shown JPEG stored sideways (EXIF orientation 6).
subprocess.run([make_tree, os.path.join(work, "large"), "--classes", "2", "--images", "8", "--scale", "3",
                "--png-every", "4"], check=True, stdout=subprocess.DEVNULL)
subprocess.run([make_tree, os.path.join(work, "small"), "--classes", "2", "--images", "4", "--small", "--seed", "9"],
               check=True, stdout=subprocess.DEVNULL)
shutil.copytree(os.path.join(work, "large"), src)
for cls in os.listdir(os.path.join(work, "small")):
    for f in os.listdir(os.path.join(work, "small", cls)):
        shutil.copy(os.path.join(work, "small", cls, f), os.path.join(src, cls, "small_" + f))
cls0 = sorted(os.listdir(src))[0]
stored = np.zeros((600, 1200, 3), np.uint8)  # as stored: 1200 wide, red left half, blue right half
stored[:, :600] = (220, 30, 30)
stored[:, 600:] = (30, 30, 220)
exif = Image.Exif()
exif[274] = 6  # shown rotated 90 degrees clockwise: 600 wide, red on top
Image.fromarray(stored).save(os.path.join(src, cls0, "rotated.jpg"), quality=95, exif=exif)
# Colour: a JPEG with an ICC profile, a grey one and a CMYK one, all above the bound.
from PIL import ImageCms  # noqa: E402

icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
gradient = np.tile(np.linspace(0, 255, 900).astype(np.uint8), (700, 1))
Image.fromarray(np.stack([gradient, gradient[::-1], gradient // 2], axis=2)).save(
    os.path.join(src, cls0, "icc.jpg"), quality=92, icc_profile=icc)
Image.fromarray(gradient, "L").save(os.path.join(src, cls0, "grey.jpg"), quality=92)
# (A CMYK JPEG carries a CMYK profile; any profile shows whether it is carried onto the RGB output.)
Image.new("CMYK", (800, 500), (0, 200, 200, 0)).save(os.path.join(src, cls0, "cmyk.jpg"), quality=95,
                                                      icc_profile=icc)
# A mask (class ids 0, 3, 7 in bands) and a caption beside the first large JPEG.
masked = sorted(f for f in os.listdir(os.path.join(src, cls0)) if f.endswith(".JPEG"))[0]
masked_stem = os.path.join(src, cls0, masked.split(".")[0])
mw, mh = Image.open(os.path.join(src, cls0, masked)).size
mask = np.zeros((mh, mw), np.uint8)
mask[:, mw // 3:2 * mw // 3] = 3
mask[mh // 2:, 2 * mw // 3:] = 7
Image.fromarray(mask, "L").save(masked_stem + ".seg.png")
open(masked_stem + ".txt", "w").write("a caption that stays as it is")


def shown_size(path):
    im = Image.open(path)
    w, h = im.size
    return (h, w) if im.getexif().get(274, 1) >= 5 else (w, h)


def expected_size(w, h, bound=BOUND):
    """The documented rule: the longer side becomes the bound, the other round(other x bound / side),
    halves up, at least 1; within the bound, unchanged."""
    side, other = max(w, h), min(w, h)
    if side <= bound:
        return w, h
    rest = max(1, (2 * other * bound + side) // (2 * side))
    return (bound, rest) if w >= h else (rest, bound)


def area_reference(rgb, size):
    """Exact area averaging in float: each output pixel the mean of the input area it covers."""
    def weights(n_in, n_out):
        scale = n_in / n_out
        m = np.zeros((n_out, n_in))
        for i in range(n_out):
            lo, hi = i * scale, (i + 1) * scale
            for j in range(int(np.floor(lo)), min(n_in, int(np.ceil(hi)))):
                m[i, j] = min(hi, j + 1) - max(lo, j)
        return m / scale
    wy, wx = weights(rgb.shape[0], size[1]), weights(rgb.shape[1], size[0])
    x = rgb.astype(np.float64)
    return np.stack([wy @ x[:, :, c] @ wx.T for c in range(3)], axis=2)


def psnr(a, reference):
    mse = np.mean((a.astype(np.float64) - reference) ** 2)
    return 10 * np.log10(255.0 ** 2 / mse)


def members(out):
    """{key: {extension: bytes}} of every shard of a wds dataset, read with tarfile."""
    samples = {}
    for name in sorted(os.listdir(out)):
        if name.endswith(".tar"):
            with tarfile.open(os.path.join(out, name)) as t:
                for m in t.getmembers():
                    key, ext = m.name.split(".", 1)
                    samples.setdefault(key, {})[ext] = t.extractfile(m).read()
    return samples


def shards(out):
    return {n: open(os.path.join(out, n), "rb").read() for n in sorted(os.listdir(out)) if n.endswith(".tar")}


wds = os.path.join(work, "wds")
r = run("pack", src, wds, "--max-side", str(BOUND), "--no-sync", "--json", "--threads", "2", "--samples-per-shard", "5")
check(r.returncode == 0, f"pack --max-side: {r.stderr}")
summary = json.loads(r.stdout) if r.returncode == 0 else {}
check(summary.get("reencoded") == 12 and summary.get("cmyk_to_rgb") == 1,
      f"pack's counts: reencoded {summary.get('reencoded')}, cmyk_to_rgb {summary.get('cmyk_to_rgb')}")
samples = members(wds)
check(len(samples) == 16, f"16 samples packed, not {len(samples)}")
resized = 0
masks_checked = False
for key, files in samples.items():
    meta = json.loads(files["json"])
    path = os.path.join(src, meta["path"])
    image_ext = "png" if "png" in files else "jpg"
    data = files[image_ext]
    w, h = shown_size(path)
    want = expected_size(w, h)
    got = Image.open(io.BytesIO(data))
    check(got.size == want, f"{meta['path']}: stored {got.size}, expected {want} (shown {w}x{h})")
    check((meta["width"], meta["height"]) == want, f"{meta['path']}: metadata size {meta['width']}x{meta['height']}")
    if want == (w, h):
        check(data == open(path, "rb").read(), f"{meta['path']}: within the bound but not byte-identical")
        check("original_width" not in meta, f"{meta['path']}: original size recorded for an unchanged image")
        continue
    resized += 1
    original = Image.open(path)
    check((meta["original_width"], meta["original_height"]) == (w, h),
          f"{meta['path']}: original size {meta.get('original_width')}x{meta.get('original_height')}")
    check(got.format == original.format, f"{meta['path']}: re-encoded as {got.format}, was {original.format}")
    check(got.getexif().get(274) is None, f"{meta['path']}: the re-encoded file keeps an orientation tag")
    if "seg.png" in files:  # the mask: the image's new size, nearest neighbour (only the source's ids)
        seg = Image.open(io.BytesIO(files["seg.png"]))
        ids = set(np.unique(np.asarray(seg)).tolist())
        check(seg.size == want and seg.mode == "L" and ids == {0, 3, 7}, f"mask: {seg.size} {seg.mode} ids {ids}")
        check(files["txt"] == b"a caption that stays as it is", f"caption: {files['txt']!r}")
        masks_checked = True
    name = os.path.basename(meta["path"])
    if name in ("icc.jpg", "grey.jpg", "cmyk.jpg"):
        if name == "icc.jpg":
            check(got.info.get("icc_profile") == icc, "icc.jpg: the ICC profile did not survive")
        if name == "grey.jpg":
            check(got.mode == "L", f"grey.jpg: re-encoded as {got.mode}, not grey")
        if name == "cmyk.jpg":
            mean = np.asarray(got.convert("RGB")).reshape(-1, 3).mean(axis=0)
            want_rgb = np.asarray(original.convert("RGB")).reshape(-1, 3).mean(axis=0)
            check(got.mode == "RGB" and np.abs(mean - want_rgb).max() < 8,
                  f"cmyk.jpg: {got.mode}, mean colour {mean} against PIL's conversion {want_rgb}")
            # Its profile describes CMYK values: on RGB pixels it is wrong (PIL: "cannot build
            # transform"), so it is dropped with the conversion.
            check("icc_profile" not in got.info, "cmyk.jpg: the RGB output still carries the CMYK profile")
        continue
    if meta["path"].endswith("rotated.jpg"):
        pixels = np.asarray(got.convert("RGB")).astype(int)
        top, bottom = pixels[: want[1] // 2 - 4].mean(axis=(0, 1)), pixels[want[1] // 2 + 4:].mean(axis=(0, 1))
        check(top[0] > 180 and top[2] < 80 and bottom[2] > 180 and bottom[0] < 80,
              f"rotated.jpg is not upright: top {top}, bottom {bottom}")
        continue
    # Quality: our pixels against an exact float area average of the full decode, beside PIL's own
    # pipeline (draft at a reduced DCT scale, BOX resize, save at the same quality).
    reference = area_reference(np.asarray(original.convert("RGB")), want)
    ours = psnr(np.asarray(got.convert("RGB")), reference)
    pil = Image.open(path)
    pil.draft("RGB", want)
    pil = pil.convert("RGB").resize(want, Image.BOX)
    buffer = io.BytesIO()
    pil.save(buffer, format="JPEG" if original.format == "JPEG" else "PNG", quality=QUALITY)
    theirs = psnr(np.asarray(Image.open(buffer).convert("RGB")), reference)
    check(ours >= theirs - 0.5, f"{meta['path']}: PSNR {ours:.2f} dB against PIL's {theirs:.2f} dB")
    print(f"{meta['path']}: {w}x{h} -> {want[0]}x{want[1]}, PSNR {ours:.2f} dB (PIL's pipeline {theirs:.2f} dB)")
check(resized == 12, f"12 images above the bound re-encoded, not {resized}")
check(masks_checked, "the sample with a mask was not found")

# The sample tables (version 2) list each image's size before and after, and stat summarises them.
rows = []
for name in sorted(os.listdir(wds)):
    if name.endswith(".samples.tsv"):
        lines = open(os.path.join(wds, name)).read().splitlines()
        check(lines[0].split("\t")[0] == "#shardpack-sample-table-v2" and lines[0].split("\t")[-2:] ==
              ["original_width", "original_height"], f"{name}: header {lines[0]!r}")
        rows += [line.split("\t") for line in lines[1:]]
by_key = {row[0]: row for row in rows}
originals = []
for key, files in samples.items():
    meta = json.loads(files["json"])
    row = by_key[key]
    want = [str(meta.get("original_width", 0)), str(meta.get("original_height", 0))]
    check(row[8:10] == want and row[6:8] == [str(meta["width"]), str(meta["height"])], f"{key}: table row {row}")
    originals.append(meta.get("original_width", meta["width"]))
r = run("stat", "--json", wds)
stats = json.loads(r.stdout) if r.returncode == 0 else {}
check(stats.get("reencoded") == 12 and stats.get("original_width", {}).get("max") == max(originals) and
      stats.get("width", {}).get("max") == BOUND, f"stat: {r.stdout[:400]} {r.stderr}")
# verify --decode checks every stored image against the bound the manifest records.
r = run("verify", "--decode", wds)
check(r.returncode == 0 and "16 images decoded" in r.stdout, f"verify --decode: {r.stdout} {r.stderr}")
# The manifest records the bound; 1 and 2 threads give the same shards.
options = json.load(open(os.path.join(wds, "manifest.json")))["options"]
check(options.get("max_side") == {"side": BOUND, "of": "long", "filter": "area", "jpeg_quality": QUALITY},
      f"manifest options: {options.get('max_side')}")
one = os.path.join(work, "wds-1")
run("pack", src, one, "--max-side", str(BOUND), "--no-sync", "--quiet", "--threads", "1", "--samples-per-shard", "5")
check(shards(one) == shards(wds), "1 and 2 threads give different shards")
# --max-side-of short: the shorter side is bounded.
short = os.path.join(work, "short")
run("pack", src, short, "--max-side", "100", "--max-side-of", "short", "--no-sync", "--quiet")
for key, files in members(short).items():
    meta = json.loads(files["json"])
    w, h = shown_size(os.path.join(src, meta["path"]))
    side, other = min(w, h), max(w, h)
    want_other = max(1, (2 * other * 100 + side) // (2 * side)) if side > 100 else other
    got = sorted(Image.open(io.BytesIO(files["png" if "png" in files else "jpg"])).size)
    check(got == sorted([min(side, 100), want_other]), f"--max-side-of short, {meta['path']}: {got}")

# lmdb stores the same images as wds.
lmdb_out = os.path.join(work, "lmdb")
run("pack", src, lmdb_out, "--format", "lmdb", "--max-side", str(BOUND), "--no-sync", "--quiet")
r = run("verify", "--decode", lmdb_out)
check(r.returncode == 0 and "16 images decoded" in r.stdout, f"verify --decode of lmdb: {r.stdout} {r.stderr}")
env = lmdb.open(lmdb_out, readonly=True, lock=False)
by_path = {json.loads(f["json"])["path"]: f.get("jpg", f.get("png")) for f in samples.values()}
with env.begin() as txn:
    for i in range(16):
        record = txn.get(b"%09d" % i)
        (n,) = struct.unpack_from("<I", record, 4)
        header = json.loads(record[8:8 + n])
        image = record[8 + n:8 + n + header.get("image_size", len(record))]  # SPR2: the fields follow
        check(image == by_path[header["path"]], f"lmdb {header['path']}: other bytes than wds")
env.close()

# convert takes the bound too: the bounded wds dataset into lmdb at 128.
converted = os.path.join(work, "converted")
r = run("convert", wds, converted, "--format", "lmdb", "--max-side", "128", "--no-sync", "--quiet")
stats = json.loads(run("stat", "--json", converted).stdout or "{}")
check(r.returncode == 0 and stats.get("width", {}).get("max") == 128 and stats.get("height", {}).get("max") == 128,
      f"convert --max-side 128: {r.stderr} {stats.get('width')} {stats.get('height')}")

# Bad options, with the exact messages; raw refuses the bound.
for args, message in (
        (["--max-side", "0"], "pack failed: --max-side 0 is too small: give at least 16 pixels "
                              "(or leave it out for no bound)\n"),
        (["--max-side", "15"], "pack failed: --max-side 15 is too small: give at least 16 pixels "
                               "(or leave it out for no bound)\n"),
        (["--max-side", "64", "--jpeg-quality", "0"], "pack failed: --jpeg-quality 0 is not in 1-100\n"),
        (["--max-side", "64", "--jpeg-quality", "101"], "pack failed: --jpeg-quality 101 is not in "
                                                        "1-100\n"),
        (["--max-side", "64", "--format", "raw", "--crop", "32"],
         "pack failed: --max-side re-encodes the images of --format wds and lmdb; raw stores pixels, "
         "sized by --resize and --crop\n"),
        (["--lossless-as-jpeg", "--format", "raw", "--crop", "32"],
         "pack failed: --lossless-as-jpeg re-encodes the images of --format wds and lmdb; raw stores pixels, "
         "sized by --resize and --crop\n")):
    r = run("pack", src, os.path.join(work, "refused"), "--no-sync", "--quiet", *args)
    check(r.returncode != 0 and r.stderr == message and not os.path.exists(os.path.join(work, "refused")),
          f"{args}: {r.returncode} {r.stderr!r}")

# --lossless-as-jpeg: PNGs (within the bound or not) stored as JPEG members, alpha on white; JPEGs
# within the bound keep their bytes.
lossless = os.path.join(work, "lossless-src")
os.makedirs(os.path.join(lossless, "c"))
rgba = np.zeros((40, 60, 4), np.uint8)
rgba[:, :30] = (10, 200, 10, 255)  # opaque green left half, fully transparent right half
Image.fromarray(rgba, "RGBA").save(os.path.join(lossless, "c", "alpha.png"))
small_jpeg = sorted(glob.glob(os.path.join(work, "small", "*", "*.JPEG")))[0]
shutil.copy(small_jpeg, os.path.join(lossless, "c", "photo.JPEG"))
r = run("pack", lossless, os.path.join(work, "lossless"), "--lossless-as-jpeg", "--no-sync", "--quiet")
check(r.returncode == 0, f"--lossless-as-jpeg: {r.stderr}")
for key, files in members(os.path.join(work, "lossless")).items():
    meta = json.loads(files["json"])
    check("png" not in files and "jpg" in files, f"--lossless-as-jpeg {meta['path']}: members {sorted(files)}")
    if meta["path"].endswith("photo.JPEG"):
        check(files["jpg"] == open(os.path.join(lossless, meta["path"]), "rb").read(), "a JPEG was re-encoded")
        continue
    pixels = np.asarray(Image.open(io.BytesIO(files["jpg"])).convert("RGB")).astype(int)
    left, right = pixels[:, 2:26].mean(axis=(0, 1)), pixels[:, 34:58].mean(axis=(0, 1))
    check(meta["format"] == "jpeg" and abs(left - (10, 200, 10)).max() < 12 and right.min() > 243,
          f"alpha.png as JPEG: left {left}, right {right} (transparent must come out white)")

# A large JPEG whose entropy-coded data ends early (its header and end marker intact) is skipped and
# reported; one declaring more than --max-pixels is refused before any decode, as without a bound.
bad = os.path.join(work, "bad-src")
shutil.copytree(os.path.join(work, "large"), bad)
victim = os.path.join(bad, cls0, sorted(f for f in os.listdir(os.path.join(bad, cls0)) if f.endswith(".JPEG"))[0])
data = bytearray(open(victim, "rb").read())
del data[len(data) // 2:len(data) // 2 + 4000]  # the image data ends early
open(victim, "wb").write(bytes(data))
r = run("pack", bad, os.path.join(work, "bad"), "--max-side", str(BOUND), "--no-sync", "--json")
report = json.loads(r.stdout) if r.returncode == 0 else {}
skipped = report.get("skipped_files", [])
rel = os.path.relpath(victim, bad)
check(r.returncode == 0 and [s["path"] for s in skipped] == [rel] and "JPEG data" in skipped[0]["reason"],
      f"damaged large JPEG: {r.returncode} {skipped} {r.stderr}")
r = run("pack", src, os.path.join(work, "pixels"), "--max-side", str(BOUND), "--no-sync", "--json",
        "--max-pixels", "1000000")
report = json.loads(r.stdout) if r.returncode in (0, 1) and r.stdout else {}
skipped = report.get("skipped_files", [])
reasons = {s["reason"].split("declares ")[0] for s in skipped}
check(len(skipped) == 8 and reasons == {"image "},
      f"--max-pixels with --max-side: {r.returncode} {skipped} {r.stderr}")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print(f"resolution bound test: {resized} images re-encoded, every check passed")
