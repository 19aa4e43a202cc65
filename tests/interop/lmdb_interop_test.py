#!/usr/bin/env python3
"""Reads a shardpack LMDB dataset with py-lmdb (PyPI) through the reader in docs/formats/lmdb.md
(extracted from the Markdown), without shardpack, and compares every record with the source tree.

Usage: lmdb_interop_test.py SHARDPACK MAKE_IMAGE_TREE WORKDIR
"""
import json
import os
import shutil
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


# The reader of docs/formats/lmdb.md, taken from the Markdown itself, run as it stands in WORKDIR
# (it opens "out"); its read_record then reads every record below.
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "scripts"))
from doc_blocks import code_marked  # noqa: E402

doc = {}
os.chdir(work)
exec(code_marked(os.path.join(root, "docs", "formats", "lmdb.md"), "lmdb"), doc)
# The reader's own environment: py-lmdb (3.0) refuses a second lmdb.open of one folder in a process.
meta, read_record, env = doc["meta"], doc["read_record"], doc["env"]

classes = sorted(os.listdir(src))
check(meta["samples"] == 40 and meta["classes"] == classes, "metadata %r" % {k: meta[k] for k in ("samples", "classes")})
check(meta == {k: v for k, v in json.load(open(os.path.join(out, "manifest.json"))).items() if k in meta and k != "shardlist"},
      "metadata record agrees with manifest.json")
seen = []
with env.begin() as txn:
    keys = [k for k, _ in txn.cursor()]
    check(keys == [b"%09d" % i for i in range(40)] + [b"__shardpack__"], "keys in sample order")
    for i in range(40):
        header, image, fields = read_record(txn.get(b"%09d" % i))
        check(fields == {}, "%d: no fields in a tree of images alone" % i)
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
