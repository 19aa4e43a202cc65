#!/usr/bin/env python3
"""shardpack convert on WebDataset shards written by other tools: Python's tarfile in PAX, GNU and
ustar formats (as webdataset's TarWriter writes them), GNU tar --sort=name, gzip-compressed shards,
keys with folders, .cls/.json/.txt fields; and a clear error for a shard whose samples are not
adjacent.

Usage: convert_interop_test.py SHARDPACK MAKE_IMAGE_TREE WORKDIR
"""
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile

shardpack, make_tree, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
src, shards = os.path.join(work, "src"), os.path.join(work, "shards")
os.makedirs(shards)
subprocess.run([make_tree, src, "--classes", "2", "--images", "12", "--png-every", "3", "--small"], check=True)
images = sorted(os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def add(tf, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o444
    tf.addfile(info, io.BytesIO(data))


expected = {}  # original key -> (image bytes, label, caption)


def sample(i, key):
    path = images[i]
    data = open(path, "rb").read()
    ext = "png" if path.endswith(".png") else "jpg"
    label = i % 2
    caption = "image number %d" % i
    expected[key] = (data, label, caption)
    return [(key + ".cls", str(label).encode()), (key + "." + ext, data),
            (key + ".json", json.dumps({"i": i}).encode()), (key + ".txt", caption.encode())]


# 1. PAX headers (a key longer than 100 bytes forces them), keys with folders.
with tarfile.open(os.path.join(shards, "a-000000.tar"), "w", format=tarfile.PAX_FORMAT) as tf:
    for i, key in enumerate(["train/cat/img0", "train/dog/" + "x" * 120]):
        for name, data in sample(i, key):
            add(tf, name, data)
# 2. GNU format, gzip-compressed.
with tarfile.open(os.path.join(shards, "b-000000.tar.gz"), "w:gz", format=tarfile.GNU_FORMAT) as tf:
    for i in range(2, 5):
        for name, data in sample(i, "b/%04d" % i):
            add(tf, name, data)
# 3. ustar, as webdataset's TarWriter writes (a dot in a folder name, too).
with tarfile.open(os.path.join(shards, "c-000000.tar"), "w", format=tarfile.USTAR_FORMAT) as tf:
    for i in range(5, 8):
        for name, data in sample(i, "v1.2/c%04d" % i):
            add(tf, name, data)
# 4. GNU tar --sort=name over a folder of sample files, gzip-compressed and named .tgz.
staging = os.path.join(work, "staging")
for i in range(8, 12):
    for name, data in sample(i, "d/s%04d" % i):
        os.makedirs(os.path.dirname(os.path.join(staging, name)), exist_ok=True)
        open(os.path.join(staging, name), "wb").write(data)
subprocess.run(["tar", "--sort=name", "--format=gnu", "-czf", os.path.join(shards, "d-000000.tgz"), "-C", staging, "d"],
               check=True)

out = os.path.join(work, "out")
run = subprocess.run([shardpack, "convert", shards, out, "--quiet", "--no-sync"], capture_output=True, text=True)
check(run.returncode == 0, "convert exit %d: %s" % (run.returncode, run.stderr))
manifest = json.load(open(os.path.join(out, "manifest.json")))
check(manifest["samples"] == 12, "samples %d" % manifest["samples"])
check(manifest.get("fields") == {"json": 12, "txt": 12}, "field counts %r" % manifest.get("fields"))
seen = set()
for entry in manifest["shardlist"]:
    with tarfile.open(os.path.join(out, entry["url"])) as tf:
        members = {m.name: tf.extractfile(m).read() for m in tf}
    keys = sorted({n.split(".")[0] for n in members})
    for key in keys:
        check("/" not in key and "." not in key, "output key %r is not safe" % key)
        # The sample's own .json keeps its name, so shardpack's metadata is its .meta.json.
        meta = json.loads(members[key + ".meta.json"])
        original = meta["source"]["key"]
        data, label, caption = expected[original]
        image = members.get(key + ".jpg", members.get(key + ".png"))
        check(image == data, "%s: image bytes" % original)
        check(members[key + ".cls"] == str(label).encode(), "%s: label" % original)
        check(members[key + ".txt"] == caption.encode(), "%s: txt member byte for byte" % original)
        i = list(expected).index(original)
        check(members[key + ".json"] == json.dumps({"i": i}).encode(), "%s: json member byte for byte" % original)
        check(sorted(n[len(key):] for n in members if n.split(".")[0] == key) ==
              sorted([".cls", "." + ("png" if image.startswith(b"\x89PNG") else "jpg"), ".json", ".meta.json", ".txt"]),
              "%s: members" % original)
        seen.add(original)
check(seen == set(expected), "every sample once: %d of %d" % (len(seen), len(expected)))
check(subprocess.run([shardpack, "verify", out], capture_output=True).returncode == 0, "verify of converted output")

raw = os.path.join(work, "raw")
run = subprocess.run([shardpack, "convert", shards, raw, "--format", "raw", "--crop", "32", "--quiet", "--no-sync"],
                     capture_output=True, text=True)
check(run.returncode == 0, "convert to raw: %s" % run.stderr)
labels = []
for entry in json.load(open(os.path.join(raw, "manifest.json")))["shardlist"]:
    import numpy as np
    labels += list(np.load(os.path.join(raw, entry["url"][:-4] + ".labels.npy")))
check(labels == [expected[k][1] for k in expected], "raw labels in input order: %r" % labels)

# Members of one sample that are not adjacent: a clear error naming shard and member.
bad = os.path.join(work, "bad")
os.makedirs(bad)
with tarfile.open(os.path.join(bad, "bad.tar"), "w") as tf:
    add(tf, "k1.cls", b"1")
    add(tf, "k2.cls", b"2")
    add(tf, "k1.jpg", open(images[0], "rb").read())
run = subprocess.run([shardpack, "convert", bad, os.path.join(work, "bad-out"), "--quiet"], capture_output=True, text=True)
check(run.returncode == 1, "non-adjacent exit %d" % run.returncode)
want = ("convert failed: %s/bad.tar: member 'k1.jpg' belongs to sample 'k1', whose members are not adjacent; "
        "write shards with the members of a sample together (tar --sort=name, webdataset's TarWriter)\n") % bad
check(run.stderr == want, "non-adjacent message: %r" % run.stderr)
check(not os.path.exists(os.path.join(work, "bad-out", "manifest.json")), "no manifest after a failed convert")

for f in failures:
    print("FAIL:", f)
print("%d passed, %d failed" % (0 if failures else 1, 1 if failures else 0))
sys.exit(1 if failures else 0)
