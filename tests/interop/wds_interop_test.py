#!/usr/bin/env python3
"""Reads shardpack's WebDataset output with independent readers: Python's tarfile, GNU tar, the
WebDataset grouping rule, the wids shard-list rule and DALI's index rule, and compares every
image byte for byte and every label with the source tree.

Usage: wds_interop_test.py SHARDPACK MAKE_IMAGE_TREE WORKDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

shardpack, make_tree, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
src, out, extracted = (os.path.join(work, d) for d in ("src", "out", "extracted"))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


subprocess.run([make_tree, src, "--classes", "4", "--images", "60", "--png-every", "5", "--small"], check=True)
# Bad inputs that must be skipped and listed, not packed.
open(os.path.join(src, "n01440764", "zero.jpg"), "wb").close()
with open(os.path.join(src, "n01440764", "readme.txt"), "w") as f:
    f.write("not an image\n")
subprocess.run([shardpack, "pack", src, out, "--samples-per-shard", "16", "--shuffle", "--seed", "3", "--quiet",
                "--no-sync"], check=True)

manifest = json.load(open(os.path.join(out, "manifest.json")))
classes = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
check(manifest["classes"] == classes, "manifest classes %r != %r" % (manifest["classes"], classes))
check(manifest["wids_version"] == 1, "wids_version")
check(sorted(s["path"] for s in manifest["skipped"]) == ["n01440764/readme.txt", "n01440764/zero.jpg"],
      "skipped list %r" % manifest["skipped"])

# The WebDataset rule: key and extension split at the first dot of the base name.
split = re.compile(r"^((?:.*/|)[^.]+)[.]([^/]*)$")
seen_paths = []
for entry in manifest["shardlist"]:
    shard = os.path.join(out, entry["url"])
    check(not os.path.isabs(entry["url"]) and os.path.exists(shard), "url %s" % entry["url"])
    samples = []  # (key, {ext: bytes}, [(ext, offset_data, size, name)])
    with tarfile.open(shard) as tf:
        for m in tf:
            check(m.type == tarfile.REGTYPE, "%s: not a regular file" % m.name)
            check(not m.pax_headers, "%s: has PAX headers" % m.name)
            check(len(m.name.encode()) <= 100, "%s: name longer than 100 bytes" % m.name)
            key, ext = split.match(m.name).groups()
            data = tf.extractfile(m).read()
            if not samples or samples[-1][0] != key:
                check(all(s[0] != key for s in samples), "%s: members not adjacent" % key)
                samples.append((key, {}, []))
            samples[-1][1][ext] = data
            samples[-1][2].append((ext, m.offset_data, m.size, m.name))
    with open(shard, "rb") as f:
        header = f.read(512)
    check(header[257:265] == b"ustar\x0000", "%s: not a POSIX ustar header" % entry["url"])
    check(entry["nsamples"] == len(samples), "%s: nsamples %d != %d" % (entry["url"], entry["nsamples"], len(samples)))

    # DALI's index: "v1.2 N", then per sample "ext offset size name" per member, offsets of the data.
    idx_lines = open(os.path.join(out, entry["url"][:-4] + ".idx")).read().splitlines()
    check(idx_lines[0] == "v1.2 %d" % len(samples), "%s: idx header %r" % (entry["url"], idx_lines[0]))
    for line, (_, _, members) in zip(idx_lines[1:], samples):
        expected = " ".join("%s %d %d %s" % m for m in members)
        check(line == expected, "idx line %r != %r" % (line, expected))

    for key, fields, _ in samples:
        check("." not in key, "key %s has a dot" % key)
        meta = json.loads(fields["json"])
        image_ext = [e for e in fields if e in ("jpg", "png", "webp", "bmp")]
        check(len(image_ext) == 1, "%s: image members %r" % (key, image_ext))
        source = open(os.path.join(src, meta["path"]), "rb").read()
        check(fields[image_ext[0]] == source, "%s: image bytes differ from %s" % (key, meta["path"]))
        check(int(fields["cls"]) == classes.index(meta["path"].split("/")[0]), "%s: label" % key)
        check(meta["class"] == meta["path"].split("/")[0], "%s: class name" % key)
        seen_paths.append(meta["path"])

    # GNU tar lists and extracts the shard without a word on stderr, with the same bytes.
    listing = subprocess.run(["tar", "-tvf", shard], capture_output=True, text=True)
    check(listing.returncode == 0 and listing.stderr == "", "GNU tar -t: %r" % listing.stderr)
    os.makedirs(extracted, exist_ok=True)
    x = subprocess.run(["tar", "-xf", shard, "-C", extracted], capture_output=True, text=True)
    check(x.returncode == 0 and x.stderr == "", "GNU tar -x: %r" % x.stderr)
    for key, fields, _ in samples:
        for ext, data in fields.items():
            check(open(os.path.join(extracted, key + "." + ext), "rb").read() == data, "GNU tar bytes %s.%s" % (key, ext))

images = sorted(os.path.relpath(os.path.join(d, f), src) for d, _, fs in os.walk(src) for f in fs
                if not f.endswith((".txt",)) and f != "zero.jpg")
check(sorted(seen_paths) == images, "every source image exactly once: %d packed, %d in source" % (len(seen_paths), len(images)))
check(seen_paths != sorted(seen_paths), "--shuffle left the sorted order")
check(manifest["samples"] == len(images), "manifest samples %d" % manifest["samples"])

for f in failures:
    print("FAIL:", f)
print("%d passed, %d failed" % (1 if not failures else 0, 1 if failures else 0))
sys.exit(1 if failures else 0)
