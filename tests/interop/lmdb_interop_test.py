#!/usr/bin/python3
"""Reads a shardpack LMDB dataset with Debian's python3-lmdb exactly as docs/formats/lmdb.md says,
without shardpack, and compares every record with the source tree.

Usage: lmdb_interop_test.py SHARDPACK MAKE_IMAGE_TREE WORKDIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import lmdb

shardpack, make_tree, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
src, out = os.path.join(work, "src"), os.path.join(work, "out")
subprocess.run([make_tree, src, "--classes", "3", "--images", "40", "--png-every", "4", "--small"], check=True)
subprocess.run([shardpack, "pack", src, out, "--format", "lmdb", "--shuffle", "--seed", "5", "--quiet", "--no-sync"],
               check=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


# --- the snippet from docs/formats/lmdb.md ---
env = lmdb.open(out, readonly=True, lock=False)
with env.begin() as txn:
    meta = json.loads(txn.get(b"__shardpack__"))
    record = txn.get(b"000000007")
    assert record[:4] == b"SPR1"
    (header_len,) = struct.unpack_from("<I", record, 4)
    header = json.loads(record[8:8 + header_len])
    image = record[8 + header_len:]
# ---

classes = sorted(os.listdir(src))
check(meta["samples"] == 40 and meta["classes"] == classes, "metadata %r" % {k: meta[k] for k in ("samples", "classes")})
check(meta == {k: v for k, v in json.load(open(os.path.join(out, "manifest.json"))).items() if k in meta and k != "shardlist"},
      "metadata record agrees with manifest.json")
seen = []
with env.begin() as txn:
    keys = [k for k, _ in txn.cursor()]
    check(keys == [b"%09d" % i for i in range(40)] + [b"__shardpack__"], "keys in sample order")
    for i in range(40):
        record = txn.get(b"%09d" % i)
        (n,) = struct.unpack_from("<I", record, 4)
        header = json.loads(record[8:8 + n])
        image = record[8 + n:]
        check(image == open(os.path.join(src, header["path"]), "rb").read(), "%d: image bytes" % i)
        check(header["label"] == classes.index(header["path"].split("/")[0]), "%d: label" % i)
        check(header["class"] == header["path"].split("/")[0], "%d: class" % i)
        check(header["format"] == ("png" if header["path"].endswith(".png") else "jpeg"), "%d: format" % i)
        seen.append(header["path"])
check(sorted(seen) == sorted(os.path.join(c, f) for c in classes for f in os.listdir(os.path.join(src, c))),
      "every source image exactly once")
check(seen != sorted(seen), "--shuffle changed the order")

for f in failures:
    print("FAIL:", f)
print("%d passed, %d failed" % (0 if failures else 1, 1 if failures else 0))
sys.exit(1 if failures else 0)
