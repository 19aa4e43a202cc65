#!/usr/bin/env python3
"""The real webdataset (1.0) and wids as judges of our WebDataset shards, both ways.

Ours, read by theirs: a tree of every field kind pack writes (class folders, one with a dot in its
name; JPEG, PNG and WebP images; txt, json, a seg.png mask, a depth.npy array, and without a label a
.cls of the sample's own), packed with path keys, and a dataset written by shardpack.Writer, are read
by webdataset.WebDataset (raw, and .decode()), webdataset.WebLoader with 2 workers, and
wids.ShardListDataset over our manifest and over wids's own index (widsindex create): sample for
sample, every member equal to what shardpack.open returns.

Theirs, read by ours: shards written by webdataset.ShardWriter (plain .tar, and .tar.gz through its
TarWriter's compression) with jpg, cls, txt, json, a .npy and a cls that holds no integer, given as a
folder, a brace spec and a .tar.gz spec, are read by shardpack.open (every member, as webdataset
reads it), Loader (every sample once, its label), stat (counts, classes, fields), verify (clean;
a cut shard is named) and convert (to wds, every member kept).

usage: webdataset_library_test.py SHARDPACK WORKDIR PYTHON_PACKAGE_DIR
"""

import collections
import gc
import glob
import io
import json
import os
import subprocess
import sys

import numpy as np
from PIL import Image

from checks import Checks, fresh_folder

shardpack_cli, work, python_dir = sys.argv[1:4]
sys.path.insert(0, python_dir)
import shardpack  # noqa: E402
import webdataset  # noqa: E402
import wids  # noqa: E402

fresh_folder(work)
checks = Checks("webdataset library test")
check = checks.check
rng = np.random.default_rng(7)


def run(*args):
    r = subprocess.run([shardpack_cli] + [str(a) for a in args], capture_output=True, text=True)
    return r


def image_bytes(pixels, fmt):
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format=fmt)
    return out.getvalue()


def npy_bytes(array):
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


# --- Ours, read by theirs ---------------------------------------------------------------------

def make_tree(root, labelled):
    """Samples with every kind of field; returns {relative path of the image: {field: bytes}}."""
    files = {}
    folders = ["cat", "dog.v2"] if labelled else ["part.a", "b"]
    for i in range(14):
        folder = os.path.join(root, folders[i % 2])
        os.makedirs(folder, exist_ok=True)
        h, w = 16 + i, 24
        ext, fmt = [("jpg", "JPEG"), ("png", "PNG"), ("webp", "WEBP")][i % 3]
        stem = os.path.join(folder, f"s{i:04d}")
        members = {ext: image_bytes(rng.integers(0, 256, (h, w, 3), dtype=np.uint8), fmt)}
        if i % 2 == 0:
            members["txt"] = f"a caption {i}, é".encode()
        if i % 3 == 0:
            members["json"] = json.dumps({"i": i, "boxes": [[1, 2, 3, 4]]}).encode()
        if i % 4 == 0:
            members["seg.png"] = image_bytes(rng.integers(0, 5, (h, w), dtype=np.uint8), "PNG")
        if i % 5 == 0:
            members["depth.npy"] = npy_bytes(rng.random((h, w)).astype(np.float32))
        if not labelled:
            members["cls"] = str(i % 3).encode()
        for name, data in members.items():
            with open(f"{stem}.{name}", "wb") as f:
                f.write(data)
        files[os.path.relpath(f"{stem}.{ext}", root)] = members
    return files


def ours_equal_raw(name, ours, raw):
    """A raw webdataset sample (member bytes by extension) against shardpack.open's sample."""
    key = ours["__key__"]
    check(raw["__key__"] == key, f"{name}: key {raw['__key__']!r} != {key!r}")
    members = {k: v for k, v in raw.items() if not k.startswith("__")}
    expected = set(k for k in ours if k != "__key__") - ({"cls"} if isinstance(ours.get("cls"), int) and
                                                         ours["cls"] < 0 else set())
    check(set(members) == expected, f"{name}: {key}: members {sorted(members)} != {sorted(expected)}")
    for ext, data in members.items():
        want = ours.get(ext)
        if ext == "cls" and isinstance(want, int):
            check(int(data) == want, f"{name}: {key}: cls {data!r} != {want}")
        elif isinstance(want, dict):  # shardpack's metadata, parsed
            check(json.loads(data) == want, f"{name}: {key}: {ext} {data[:60]!r} != {want}")
        else:
            check(data == want, f"{name}: {key}: {ext} differs ({len(data)} bytes, ours {len(want or b'')})")


def ours_equal_decoded(name, ours, decoded):
    """A sample through webdataset's .decode() (txt to str, json and cls parsed, .npy loaded)."""
    key = ours["__key__"]
    for ext, value in decoded.items():
        if ext.startswith("__"):
            continue
        want = ours[ext]
        if ext.endswith("txt"):
            check(value == want.decode(), f"{name}: {key}: {ext} {value!r}")
        elif ext.endswith("json"):
            check(value == (want if isinstance(want, dict) else json.loads(want)), f"{name}: {key}: {ext} {value!r}")
        elif ext == "cls":
            check(value == (want if isinstance(want, int) else int(want)), f"{name}: {key}: cls {value!r}")
        elif ext.endswith("npy"):
            check(np.array_equal(value, np.load(io.BytesIO(want))), f"{name}: {key}: {ext} array differs")
        else:
            check(value == want, f"{name}: {key}: {ext} differs")


def judge_ours(name, out):
    ds = shardpack.open(out)
    ours = [ds[i] for i in range(len(ds))]
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    urls = [os.path.join(out, s["url"]) for s in manifest["shardlist"]]
    spec = os.path.join(out, "shard-{%06d..%06d}.tar" % (0, len(urls) - 1))
    raw = list(webdataset.WebDataset(spec, shardshuffle=False, empty_check=False))
    check(len(raw) == len(ours), f"{name}: webdataset read {len(raw)} samples, shardpack.open {len(ours)}")
    for o, r in zip(ours, raw):
        ours_equal_raw(f"{name} (WebDataset)", o, r)
    decoded = list(webdataset.WebDataset(spec, shardshuffle=False, empty_check=False).decode())
    for o, d in zip(ours, decoded):
        ours_equal_decoded(f"{name} (WebDataset.decode)", o, d)
    # WebLoader with 2 worker processes: each reads its shards (split_by_worker); every sample once.
    loader = webdataset.WebLoader(webdataset.WebDataset(urls, shardshuffle=False, empty_check=False),
                                  batch_size=None, num_workers=2)
    by_key = {o["__key__"]: o for o in ours}
    seen = collections.Counter()
    for r in loader:
        seen[r["__key__"]] += 1
        ours_equal_raw(f"{name} (WebLoader)", by_key[r["__key__"]], r)
    check(seen == collections.Counter(by_key.keys()), f"{name}: WebLoader saw {sum(seen.values())} samples, "
                                               f"{len(seen)} distinct, of {len(by_key)}")
    # wids, over our manifest (its shardlist is wids's index) and over the index widsindex makes.
    subprocess.run([os.path.join(os.path.dirname(sys.executable), "widsindex"), "create", "-o",
                    os.path.join(work, f"{name}-widsindex.json"), "-n", name] + urls,
                   check=True, capture_output=True, cwd=work)
    for index in (os.path.join(out, "manifest.json"), os.path.join(work, f"{name}-widsindex.json")):
        w = wids.ShardListDataset(index, transformations=[],
                                  cache_dir=os.path.join(work, f"wids-cache-{name}-{os.path.basename(index)}"))
        check(len(w) == len(ours), f"{name}: wids ({os.path.basename(index)}) has {len(w)} samples")
        for i, o in enumerate(ours):
            s = w[i]
            sample = {k.lstrip("."): (v.getvalue() if hasattr(v, "getvalue") else v) for k, v in s.items()
                      if k.startswith(".")}
            sample["__key__"] = s["__key__"]
            ours_equal_raw(f"{name} (wids, {os.path.basename(index)})", o, sample)
    print(f"{name}: {len(ours)} samples read alike by shardpack.open, WebDataset, WebLoader and wids; members "
          f"{sorted(collections.Counter(k for o in ours for k in o if k != '__key__').items())}")
    return ours


for labelled in (True, False):
    name = "imagenet" if labelled else "samples"
    tree = os.path.join(work, f"tree-{name}")
    files = make_tree(tree, labelled)
    out = os.path.join(work, f"ours-{name}")
    r = run("pack", tree, out, "--samples-per-shard", 5, "--key", "path", "--no-sync", "--quiet",
            *([] if labelled else ["--layout", "samples"]))
    check(r.returncode == 0, f"pack {name}: {r.stderr}")
    ours = judge_ours(name, out)
    # Every file of the tree is in its sample, byte for byte (the keys: path keys, dots made '_').
    for o in ours:
        path = o["json" if "meta.json" not in o else "meta.json"]["path"]
        for field, data in files[path].items():
            got = o.get(field)
            if field == "cls":
                check(got == data, f"{name}: {o['__key__']}: its own cls {got!r} != {data!r}")
            else:
                check(got == data, f"{name}: {o['__key__']}: {field} is not the file's bytes")

# A dataset written from code by shardpack.Writer.
written = os.path.join(work, "written")
with shardpack.Writer(written, format="wds", classes=["noise", "stripes"], samples_per_shard=4) as writer:
    for i in range(9):
        pixels = rng.integers(0, 256, size=(20, 28, 3), dtype=np.uint8)
        writer.write(pixels, label=i % 2, fields={"txt": f"sample {i}", "json": {"i": i}})
judge_ours("written", written)

# --- Theirs, read by ours ---------------------------------------------------------------------

theirs = {}  # key -> members as written
for i in range(13):
    sample = {"__key__": f"item{i:03d}", "jpg": image_bytes(rng.integers(0, 256, (18, 22, 3), dtype=np.uint8), "JPEG"),
              "txt": f"caption {i}", "json": {"i": i}}
    sample["cls"] = i % 4 if i != 5 else "tabby"  # one class that is no number: kept as it is
    if i % 3 == 0:
        sample["depth.npy"] = rng.random((4, 5)).astype(np.float32)
    theirs[sample["__key__"]] = sample
folders = {}
for kind, pattern in (("plain", "shard-%06d.tar"), ("gz", "shard-%06d.tar.gz")):
    folder = fresh_folder(os.path.join(work, f"theirs-{kind}"))
    with webdataset.ShardWriter(os.path.join(folder, pattern), maxcount=5, verbose=0) as sink:
        for sample in theirs.values():
            sink.write(dict(sample))
    folders[kind] = folder
shard_names = sorted(os.listdir(folders["plain"]))
check(len(shard_names) == 3, f"ShardWriter wrote {shard_names}")
with open(os.path.join(folders["gz"], sorted(os.listdir(folders["gz"]))[0]), "rb") as f:
    check(f.read(2) == b"\x1f\x8b", "the .tar.gz shards are gzip streams")
locations = {
    "a folder of .tar": folders["plain"],
    "a brace spec": os.path.join(folders["plain"], "shard-{000000..000002}.tar"),
    "a folder of .tar.gz": folders["gz"],
    "a .tar.gz brace spec": os.path.join(folders["gz"], "shard-{000000..000002}.tar.gz"),
}
reference = {s["__key__"]: s for s in webdataset.WebDataset(
    os.path.join(folders["plain"], "shard-{000000..000002}.tar"), shardshuffle=False, empty_check=False)}
check(len(reference) == len(theirs), f"webdataset reads {len(reference)} of its own samples")
for what, location in locations.items():
    try:
        ds = shardpack.open(location)
        got = {ds[i]["__key__"]: ds[i] for i in range(len(ds))}
    except Exception as e:  # noqa: BLE001 (the failure is what the check reports)
        check(False, f"shardpack.open({what}): {type(e).__name__}: {e}")
        continue
    check(sorted(got) == sorted(reference), f"shardpack.open({what}) keys {sorted(got)}")
    for key, raw in reference.items():
        o = got.get(key, {})
        members = {k: v for k, v in raw.items() if not k.startswith("__")}
        for ext, data in members.items():
            want = int(data) if ext == "cls" and data.isdigit() else data
            check(o.get(ext) == want, f"shardpack.open({what}): {key}: {ext} {o.get(ext)!r:.60} != {want!r:.60}")
        extra = set(o) - set(members) - {"__key__"}
        check(not extra, f"shardpack.open({what}): {key}: members webdataset does not see: {sorted(extra)}")
    labels = collections.Counter()
    try:
        for images, batch_labels in shardpack.Loader(location, batch_size=4, size=16, shuffle=True, seed=1):
            labels.update(int(x) for x in batch_labels)
    except Exception as e:  # noqa: BLE001
        check(False, f"shardpack.Loader({what}): {type(e).__name__}: {e}")
    want_labels = collections.Counter(s["cls"] if isinstance(s["cls"], int) else -1 for s in theirs.values())
    check(labels == want_labels, f"Loader({what}): labels {dict(labels)} != {dict(want_labels)}")
    r = run("stat", location, "--json")
    check(r.returncode == 0, f"stat {what}: {r.stderr.strip()}")
    if r.returncode == 0:
        st = json.loads(r.stdout)
        check(st["samples"] == 13 and st["shards"] == 3, f"stat {what}: {st['samples']} samples, {st['shards']} shards")
        classes = {c["name"]: c["samples"] for c in st["classes"]}
        want_classes = collections.Counter(str(s["cls"]) for s in theirs.values() if isinstance(s["cls"], int))
        check(classes == want_classes, f"stat {what}: classes {classes} != {dict(want_classes)}")
        check(st["fields"] == {"cls": 1, "depth.npy": 5, "json": 13, "txt": 13}, f"stat {what}: fields {st['fields']}")
    r = run("verify", location, "--decode")
    check(r.returncode == 0 and "verify OK: 3 shards, 13 samples" in r.stdout, f"verify {what}: {r.stdout}{r.stderr}")

# convert keeps every member of their shards.
converted = os.path.join(work, "theirs-converted")
r = run("convert", folders["gz"], converted, "--format", "wds", "--no-sync", "--quiet")
check(r.returncode == 0, f"convert: {r.stderr}")
if r.returncode == 0:
    ds = shardpack.open(converted)
    check(len(ds) == 13, f"convert: {len(ds)} samples")
    for i in range(len(ds)):
        o = ds[i]
        raw = reference.get(o["__key__"], {})
        for ext, data in raw.items():
            if ext.startswith("__"):
                continue
            want = int(data) if ext == "cls" and data.isdigit() else data
            check(o.get(ext) == want, f"convert: {o['__key__']}: {ext} {o.get(ext)!r:.60} != {want!r:.60}")

# A cut shard: verify names it, and says what is wrong.
cut = fresh_folder(os.path.join(work, "theirs-cut"))
for name in shard_names:
    data = open(os.path.join(folders["plain"], name), "rb").read()
    with open(os.path.join(cut, name), "wb") as f:
        f.write(data if name != shard_names[1] else data[:len(data) // 2])
r = run("verify", cut)
check(r.returncode != 0 and f"{shard_names[1]}: member" in r.stdout and "the shard is cut short" in r.stdout,
      f"verify of a cut shard: {r.stdout}{r.stderr}")
print("verify of a cut shard:", (r.stdout + r.stderr).strip().splitlines()[-1])
# The readers of .tar.gz shards decompressed them into folders of their own, gone with the readers.
del ds, got, images, batch_labels  # (the last batch's tensors keep their loader, and its reader)
gc.collect()
left = glob.glob("/tmp/shardpack-unpacked-%d-*" % os.getpid())
check(not left, f"the decompressed copies are not removed with their readers: {left}")
sys.exit(checks.finish())
