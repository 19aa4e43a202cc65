#!/usr/bin/env python3
"""Samples with several files (issue 16), packed to wds and read back by independent readers.

A generated tree of real JPEG images (encoded by Pillow) with UTF-8 captions (non-ASCII and empty
ones too), JSON annotations on some samples and PNG masks whose pixels encode their coordinates,
in nested folders (--layout samples) and beside the images of class folders (the imagenet
layout). Checked against Python's tarfile and the WebDataset grouping rule (key up to the first
dot of the base name), never against shardpack's own reader:
- every member of every sample byte for byte, in name order and adjacent; the metadata member;
- the manifest's field counts and stat's coverage line, computed here from the tree;
- the DALI index lists every member at its tar offset;
- output byte-identical with 1 and 2 threads; convert of the dataset keeps every member;
- bad inputs (a mask of another size, a non-UTF-8 caption, JSON that does not parse, a second
  image, a sample without an image) are skipped with a reason naming them;
- raw keeps txt and json fields in a JSON Lines side file (read back with json), and each mask as
  a uint8 array (read back with numpy) equal to the documented nearest-neighbour crop computed
  here from the source mask; a changed mask or caption fails verify.

Usage: fields_interop_test.py SHARDPACK WORKDIR
"""
import io
import json
import os
import random
import subprocess
import sys
import math
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks, fresh_folder  # noqa: E402

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

shardpack, work = sys.argv[1:3]
fresh_folder(work)
t = Checks("fields interop test")
check = t.check
rng = random.Random(16)


def jpeg(width, height):
    img = Image.new("RGB", (width, height))
    img.putdata([((x * 5) % 256, (y * 3) % 256, rng.randrange(256)) for y in range(height) for x in range(width)])
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=85)
    return buf.getvalue()


def mask(width, height):
    """A mask whose pixel at (x, y) is (x + 7 y) mod 256: a crop of it tells where it came from."""
    img = Image.new("L", (width, height))
    img.putdata([(x + 7 * y) % 256 for y in range(height) for x in range(width)])
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))


def run(*args):
    return subprocess.run([shardpack, *args], capture_output=True, text=True)


def read_shards(out):
    """Every sample of a wds dataset by the WebDataset rule: {key: {field: bytes}}, checking that a
    sample's members are adjacent and in name order."""
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    samples = {}
    for entry in manifest["shardlist"]:
        with tarfile.open(os.path.join(out, entry["url"])) as tf:
            previous = None
            for m in tf:
                base = os.path.basename(m.name)
                key = os.path.join(os.path.dirname(m.name), base.split(".")[0])
                field = base.split(".", 1)[1]
                if key != previous:
                    check(key not in samples, f"{entry['url']}: members of {key} are not adjacent")
                    samples[key], previous = {}, key
                else:
                    check(field > list(samples[key])[-1], f"{key}: {field} is not in name order")
                samples[key][field] = tf.extractfile(m).read()
    return manifest, samples


# --- the samples layout: nested folders, each sample a group of files ---------------------------
src = os.path.join(work, "src")
captions = ["a dog on a beach", "ein Hund am Strand — schön", "", "犬", "two\nlines"]
expected = {}  # relative image path -> {field: bytes}
for i in range(24):
    folder = f"part{i % 3}/{'deep/' if i % 4 == 0 else ''}"
    width, height = 24 + (i % 5) * 4, 20 + (i % 3) * 4
    fields = {"jpg": jpeg(width, height), "seg.png": mask(width, height)}
    if i % 6 != 5:  # some samples have no caption
        fields["txt"] = captions[i % len(captions)].encode("utf-8")
    if i % 2 == 0:  # annotations on half of them
        fields["json"] = json.dumps({"boxes": [[i, i, 8, 8]], "note": "ü"}, ensure_ascii=False).encode("utf-8")
    stem = f"{folder}{i:04d}"
    for field, data in fields.items():
        write(os.path.join(src, f"{stem}.{field}"), data)
    expected[stem] = fields
# Bad inputs: each is reported, with its reason, and nothing of it is packed.
write(os.path.join(src, "bad/0100.jpg"), jpeg(24, 20))
write(os.path.join(src, "bad/0100.seg.png"), mask(20, 20))  # not the image's size
write(os.path.join(src, "bad/0101.jpg"), jpeg(24, 20))
write(os.path.join(src, "bad/0101.txt"), b"caf\xe9")  # Latin-1, not UTF-8
write(os.path.join(src, "bad/0102.jpg"), jpeg(24, 20))
write(os.path.join(src, "bad/0102.json"), b'{"boxes": [1, 2')  # does not parse
write(os.path.join(src, "bad/0103.txt"), b"a caption without its image")
write(os.path.join(src, "bad/0104.jpg"), jpeg(24, 20))
write(os.path.join(src, "bad/0104.png"), jpeg(24, 20))  # a second image
want_skipped = {
    "bad/0100.jpg": "field seg.png is 20x20 pixels, its image 24x20; a mask must have its image's size",
    "bad/0101.jpg": "field txt is not valid UTF-8 text",
    "bad/0102.jpg": "field json is not valid JSON",
    "bad/0103.txt": "sample 'bad/0103' has no image (a .jpg, .jpeg, .png, .webp or .bmp file)",
    "bad/0104.png": "a second image of sample 'bad/0104'; a sample has one image (name a mask like 0104.seg.png)",
}
expected["bad/0104"] = {"jpg": open(os.path.join(src, "bad/0104.jpg"), "rb").read()}

out = os.path.join(work, "out")
r = run("pack", src, out, "--layout", "samples", "--samples-per-shard", "7", "--no-sync", "--threads", "2")
check(r.returncode == 0, f"pack --layout samples: {r.stderr}")
manifest, samples = read_shards(out)
check(manifest["samples"] == len(expected), f"{manifest['samples']} samples, not {len(expected)}")
check({s["path"]: s["reason"] for s in manifest["skipped"]} == want_skipped, f"skipped: {manifest['skipped']}")
for path, reason in want_skipped.items():
    check(f"skipped {path}: {reason}\n" in r.stderr, f"pack did not report {path}: {r.stderr!r}")

counts = {}
for fields in expected.values():
    for field in fields:
        if field != "jpg":
            counts[field] = counts.get(field, 0) + 1
check(manifest.get("fields") == counts, f"manifest fields {manifest.get('fields')} != {counts}")
check(sum(sum(s.get("fields", {}).values()) for s in manifest["shardlist"]) == sum(counts.values()),
      "the shards' field counts do not add up to the manifest's")

# Keys are the relative path with '/' as '_' (path keys are the samples layout's default).
by_path = {}
for key, members in samples.items():
    meta_field = "meta.json" if "meta.json" in members else "json"
    meta = json.loads(members[meta_field])
    stem = meta["path"].rsplit(".", 1)[0]
    check(key == stem.replace("/", "_"), f"key {key} of {meta['path']}")
    check(("json" in expected.get(stem, {})) == (meta_field == "meta.json"),
          f"{key}: metadata in .{meta_field} although its json field is {'json' in expected.get(stem, {})}")
    check("cls" not in members and meta["class"] is None, f"{key}: a samples-layout sample has no class")
    by_path[stem] = {f: d for f, d in members.items() if f != meta_field}
check(sorted(by_path) == sorted(expected), f"samples {sorted(by_path)} != {sorted(expected)}")
for stem, fields in expected.items():
    check(by_path.get(stem) == fields, f"{stem}: members differ from the source files")

# The DALI index names every member at its data offset.
for entry in manifest["shardlist"]:
    with tarfile.open(os.path.join(out, entry["url"])) as tf:
        tar_members = [(os.path.basename(m.name).split(".", 1)[1], m.offset_data, m.size) for m in tf]
    lines = open(os.path.join(out, entry["index"]["file"])).read().split("\n")[1:]
    indexed = []
    for line in filter(None, lines):
        parts = line.split()
        indexed += [(parts[k], int(parts[k + 1]), int(parts[k + 2])) for k in range(0, len(parts), 4)]
    check(indexed == tar_members, f"{entry['index']['file']} does not list every member of {entry['url']}")

r = run("stat", out)
share = lambda n: f"{100 * n / len(expected):.0f}%" if n == len(expected) else f"{100 * n / len(expected):.1f}%"
want = "fields       " + ", ".join(f"{f} {share(n)} ({n})" for f, n in sorted(counts.items()))
check(want in r.stdout.splitlines(), f"stat coverage: want {want!r} in {r.stdout!r}")
r = run("verify", out)
check(r.returncode == 0 and r.stdout.startswith("verify OK"), f"verify: {r.stdout} {r.stderr}")

# One thread gives the same bytes as two.
out1 = os.path.join(work, "out1")
r = run("pack", src, out1, "--layout", "samples", "--samples-per-shard", "7", "--no-sync", "--quiet", "--threads", "1")
for entry in manifest["shardlist"]:
    same = open(os.path.join(out, entry["url"]), "rb").read() == open(os.path.join(out1, entry["url"]), "rb").read()
    check(same, f"{entry['url']} differs between 1 and 2 threads")

# convert keeps every member of every sample (shardpack's own dataset, and as third-party shards).
for name, source in [("converted", out), ("converted-shards", os.path.join(out, "shard-000000.tar"))]:
    conv = os.path.join(work, name)
    r = run("convert", source, conv, "--no-sync", "--quiet")
    check(r.returncode == 0, f"convert {name}: {r.stderr}")
    _, again = read_shards(conv)
    for key, members in again.items():
        if name == "converted":
            check(members == samples.get(key), f"{name}: {key} changed")
        else:  # a third-party shard: its .json is its own, shardpack's metadata goes to .meta.json
            theirs = {f: d for f, d in samples.get(key, {}).items()}
            ours = {f: d for f, d in members.items() if f != "meta.json"}
            if "meta.json" in theirs:
                check(ours == {f: d for f, d in theirs.items() if f != "meta.json"}, f"{name}: {key} changed")
            else:  # shardpack's own .json metadata became a field of the sample
                check(ours == theirs, f"{name}: {key} changed")
    check(len(again) == (len(samples) if name == "converted" else 7), f"{name}: {len(again)} samples")

# --- a table of samples (--list): JSON Lines and CSV with inline captions and annotations -------
stems = sorted(k for k in expected if not k.startswith("bad/"))[:6]
rows = []
for n, stem in enumerate(stems):
    row = {"image": stem + ".jpg", "cls": n % 2, "txt": f"caption {n} — ü" if n != 2 else ""}
    if n % 3 == 0:
        row["json"] = {"boxes": [[n, 1, 2, 3]], "name": "ü"}
    rows.append(row)
listed = os.path.join(work, "samples.jsonl")
with open(listed, "w", encoding="utf-8") as f:
    for row in rows:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
r = run("pack", src, os.path.join(work, "listed"), "--list", listed, "--key", "path", "--no-sync", "--quiet")
check(r.returncode == 0, f"pack --list samples.jsonl: {r.stderr}")
_, from_list = read_shards(os.path.join(work, "listed"))
for n, (stem, row) in enumerate(zip(stems, rows)):
    got = from_list.get(stem.replace("/", "_"), {})
    check(got.get("jpg") == expected[stem]["jpg"], f"list {stem}: image bytes")
    check(got.get("cls") == str(n % 2).encode(), f"list {stem}: label {got.get('cls')}")
    check(got.get("txt") == row["txt"].encode("utf-8"), f"list {stem}: caption {got.get('txt')!r}")
    if "json" in row:  # the annotations as compact JSON text; shardpack's metadata in .meta.json
        want_json = json.dumps(row["json"], separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()
        check(got.get("json") == want_json, f"list {stem}: annotations {got.get('json')!r} != {want_json!r}")
        check(json.loads(got.get("meta.json", b"{}")).get("path") == stem + ".jpg", f"list {stem}: metadata")
    else:  # no annotations: .json is shardpack's metadata, as without fields
        check(json.loads(got.get("json", b"{}")).get("path") == stem + ".jpg" and "meta.json" not in got,
              f"list {stem}: metadata")
    check("seg.png" not in got, f"list {stem}: a list names its fields; files beside the image do not join")
bad_csv = os.path.join(work, "bad.csv")
with open(bad_csv, "wb") as f:
    f.write(b"image,txt\n" + stems[0].encode() + b".jpg,fine\n,a caption without its image\n")
r = run("pack", src, os.path.join(work, "bad-csv"), "--list", bad_csv, "--no-sync", "--quiet")
check(r.returncode == 1 and r.stderr == f"pack failed: {bad_csv} line 3: no image path in column 'image'\n",
      f"a CSV row without a path: {r.stderr!r}")
check(not os.path.exists(os.path.join(work, "bad-csv", "manifest.json")), "a failed list left a manifest")
latin = os.path.join(work, "latin.csv")
with open(latin, "wb") as f:
    f.write(b"image,txt\n" + stems[0].encode() + b".jpg,caf\xe9\n" + stems[1].encode() + b".jpg,ok\n")
r = run("pack", src, os.path.join(work, "latin"), "--list", latin, "--no-sync")
check(r.returncode == 0 and f"skipped {stems[0]}.jpg: field txt is not valid UTF-8 text\n" in r.stderr,
      f"a non-UTF-8 caption in a CSV: {r.returncode} {r.stderr!r}")

# --- the imagenet layout: captions beside the images of class folders ---------------------------
inet = os.path.join(work, "imagenet")
for c, cls in enumerate(["cat", "dog"]):
    for i in range(3):
        write(os.path.join(inet, cls, f"{i:04d}.jpg"), jpeg(16, 16))
        write(os.path.join(inet, cls, f"{i:04d}.txt"), f"{cls} {i}")
r = run("pack", inet, os.path.join(work, "inet-wds"), "--no-sync", "--quiet")
_, inet_samples = read_shards(os.path.join(work, "inet-wds"))
check(sorted(m["txt"] for m in inet_samples.values()) == sorted(f"{c} {i}".encode() for c in ["cat", "dog"]
                                                                    for i in range(3)), "imagenet captions")
check(all(m["cls"] in (b"0", b"1") and json.loads(m["json"])["class"] in ("cat", "dog") for m in inet_samples.values()),
      "imagenet labels")
for m in inet_samples.values():
    check(m["txt"].decode().split()[0] == json.loads(m["json"])["class"], "a caption travels with its own image")

# LMDB keeps fields in SPR2 records (docs/formats/lmdb.md), read here with python3-lmdb and struct.
import lmdb  # noqa: E402
import struct  # noqa: E402

r = run("pack", inet, os.path.join(work, "inet-lmdb"), "--format", "lmdb", "--no-sync", "--quiet")
check(r.returncode == 0, f"pack lmdb: {r.stderr}")
env = lmdb.open(os.path.join(work, "inet-lmdb"), readonly=True, lock=False)
records = 0
with env.begin() as txn:
    for key, value in txn.cursor():
        if key == b"__shardpack__":
            continue
        records += 1
        check(value[:4] == b"SPR2", f"lmdb {key}: magic {value[:4]!r}")
        (n,) = struct.unpack_from("<I", value, 4)
        header = json.loads(value[8:8 + n])
        rest = value[8 + n:]
        image = rest[:header["image_size"]]
        check(image == open(os.path.join(inet, header["path"]), "rb").read(), f"lmdb {key}: image bytes")
        check([f["name"] for f in header["fields"]] == ["txt"], f"lmdb {key}: fields {header['fields']}")
        caption = rest[header["image_size"]:header["image_size"] + header["fields"][0]["size"]]
        want = open(os.path.join(inet, header["path"].rsplit(".", 1)[0] + ".txt"), "rb").read()
        check(caption == want and len(rest) == header["image_size"] + len(want), f"lmdb {key}: caption {caption!r}")
check(records == 6, f"lmdb records: {records}")
r = run("verify", os.path.join(work, "inet-lmdb"))
check(r.returncode == 0, f"verify lmdb: {r.stdout} {r.stderr}")
# wds -> lmdb -> wds keeps every member.
r1 = run("convert", os.path.join(work, "inet-lmdb"), os.path.join(work, "inet-back"), "--no-sync", "--quiet")
check(r1.returncode == 0, f"convert lmdb to wds: {r1.stderr}")
_, back = read_shards(os.path.join(work, "inet-back"))
check(back == inet_samples, "wds -> lmdb -> wds changed a sample")

# Raw keeps text fields in a JSON Lines file beside each shard, read here with json alone, and each
# mask as a uint8 array beside the pixels, read with numpy and checked against the documented rule
# (docs/formats/raw.md), computed here by hand from the source mask.
raw = os.path.join(work, "raw")
r = run("pack", src, raw, "--layout", "samples", "--format", "raw", "--crop", "16", "--samples-per-shard", "7",
        "--no-sync")
check(r.returncode == 0, f"pack raw: {r.stderr}")
raw_manifest = json.load(open(os.path.join(raw, "manifest.json")))
check({s["path"]: s["reason"] for s in raw_manifest["skipped"]} == want_skipped,
      f"raw skipped: {raw_manifest['skipped']}")
check(raw_manifest.get("fields") == counts, f"raw fields {raw_manifest.get('fields')} != {counts}")


def raw_mask_reference(mask_png, crop):
    """The crop x crop mask pack --crop stores: shorter side resized to `crop`, the longer to
    round(long * crop / short), the centre crop of that, each output pixel the source pixel under
    its centre (docs/formats/raw.md)."""
    img = Image.open(io.BytesIO(mask_png))
    w, h = img.size
    nw = crop if w <= h else max(1, (w * crop + h // 2) // h)
    nh = max(1, (h * crop + w // 2) // w) if w <= h else crop
    fx, fy = w / nw, h / nh
    x0, y0, bw, bh = (nw - crop) // 2 * fx, (nh - crop) // 2 * fy, crop * fx, crop * fy
    xs = [min(max(int(math.floor(x0 + (i + 0.5) * (bw / crop))), 0), w - 1) for i in range(crop)]
    ys = [min(max(int(math.floor(y0 + (i + 0.5) * (bh / crop))), 0), h - 1) for i in range(crop)]
    px = img.load()
    return np.array([[px[x, y] for x in xs] for y in ys], dtype=np.uint8)


raw_fields, raw_masks = {}, {}
for shard in sorted(f for f in os.listdir(raw) if f.endswith(".npy") and f.count(".") == 1):
    stem = os.path.join(raw, shard[:-4])
    keys = open(stem + ".keys.txt", encoding="utf-8").read().splitlines()
    lines = open(stem + ".fields.jsonl", encoding="utf-8").read().splitlines() if os.path.exists(
        stem + ".fields.jsonl") else ["{}"] * len(keys)
    check(len(lines) == len(keys), f"{shard}: {len(lines)} field lines for {len(keys)} keys")
    masks = np.load(stem + ".seg.png.npy", mmap_mode="r")
    present = np.load(stem + ".seg.png.present.npy")
    check(masks.shape == (len(keys), 16, 16) and masks.dtype == np.uint8, f"{shard}: masks {masks.shape}")
    check(present.shape == (len(keys),) and set(present.tolist()) <= {0, 1}, f"{shard}: presence {present}")
    for n, (key, line) in enumerate(zip(keys, lines)):
        raw_fields[key] = {name: value.encode("utf-8") for name, value in json.loads(line).items()}
        if present[n]:
            raw_masks[key] = np.array(masks[n])
        else:
            check(not masks[n].any(), f"{shard}: {key} has no mask, but its slot is not zeros")
want_raw = {stem.replace("/", "_"): {k: v for k, v in f.items() if k in ("txt", "json")} for stem, f in expected.items()}
check(raw_fields == want_raw, "raw: the text fields read back with json differ from the files packed")
want_masks = {stem.replace("/", "_"): f["seg.png"] for stem, f in expected.items() if "seg.png" in f}
check(sorted(raw_masks) == sorted(want_masks), f"raw: masks of {sorted(raw_masks)}, not {sorted(want_masks)}")
for key, png in want_masks.items():
    got, want = raw_masks.get(key), raw_mask_reference(png, 16)
    check(got is not None and np.array_equal(got, want), f"raw: mask of {key} is not its documented crop")
r = run("verify", raw)
check(r.returncode == 0, f"verify raw: {r.stdout} {r.stderr}")
first = os.path.join(raw, "shard-000000.fields.jsonl")
text = open(first, encoding="utf-8").read()
open(first, "w", encoding="utf-8").write(text.replace("dog", "cat", 1))
r = run("verify", raw)
check(r.returncode != 0 and "shard-000000.fields.jsonl" in r.stdout + r.stderr, f"verify of a changed caption: {r.stdout}")
open(first, "w", encoding="utf-8").write(text)
masks_file = os.path.join(raw, "shard-000001.seg.png.npy")
data = bytearray(open(masks_file, "rb").read())
data[200] ^= 1
open(masks_file, "wb").write(bytes(data))
r = run("verify", raw)
check(r.returncode != 0 and "shard-000001.seg.png.npy: checksum mismatch (file changed since pack)" in r.stdout
      and "shard-000000" not in r.stdout, f"verify of a changed mask: {r.stdout}")
# Cut short by a byte: its size no longer fits the shard's images (numpy counts them, from the
# presence flags), besides the checksum.
images = np.load(os.path.join(raw, "shard-000001.seg.png.present.npy")).shape[0]
open(masks_file, "wb").write(bytes(data[:-1]))
r = run("verify", raw)
check(r.returncode != 0 and f"shard-000001.seg.png.npy: not the uint8 mask array of this shard's {images} images"
      in r.stdout and "shard-000000" not in r.stdout, f"verify of a truncated mask array: {r.stdout}")

sys.exit(t.finish())
