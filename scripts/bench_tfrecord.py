"""Helpers of scripts/bench-tfrecord.sh.

  bench_tfrecord.py write TREE OUT_DIR FILES   the tree's images as TFRecord files of tf.train.Example
                                               (image/encoded, image/class/label, image/filename), as
                                               TF's ImageNet tools lay them out
  bench_tfrecord.py loop IN_DIR OUT_DIR        the baseline: what a user writes to move such files to
                                               WebDataset, the tfrecord package's reader into
                                               webdataset.ShardWriter (1,000 samples a shard)
"""

import json
import os
import struct
import sys

import crc32c


def masked(data):
    crc = crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def write(tree, out, files):
    from tfrecord import example_pb2

    classes = sorted(d for d in os.listdir(tree) if os.path.isdir(os.path.join(tree, d)))
    paths = [(c, os.path.join(tree, c, f)) for i, c in enumerate(classes) for f in sorted(os.listdir(os.path.join(tree, c)))]
    os.makedirs(out, exist_ok=True)
    per_file = (len(paths) + files - 1) // files
    for n in range(files):
        with open(os.path.join(out, f"train-{n:05d}-of-{files:05d}"), "wb") as f:
            for c, path in paths[n * per_file:(n + 1) * per_file]:
                e = example_pb2.Example()
                feature = e.features.feature
                feature["image/encoded"].bytes_list.value.append(open(path, "rb").read())
                feature["image/class/label"].int64_list.value.append(1 + classes.index(c))
                feature["image/filename"].bytes_list.value.append(os.path.basename(path).encode())
                record = e.SerializeToString()
                length = struct.pack("<Q", len(record))
                f.write(length + struct.pack("<I", masked(length)) + record + struct.pack("<I", masked(record)))


def loop(src, out):
    import tfrecord.reader
    import webdataset

    os.makedirs(out, exist_ok=True)
    n = 0
    with webdataset.ShardWriter(os.path.join(out, "shard-%06d.tar"), maxcount=1000, verbose=0) as sink:
        for name in sorted(os.listdir(src)):
            for r in tfrecord.reader.tfrecord_loader(os.path.join(src, name), None):
                sink.write({"__key__": f"{n:09d}", "jpg": r["image/encoded"],
                            "cls": str(int(r["image/class/label"][0])),
                            "json": json.dumps({"image/filename": r["image/filename"].decode()})})
                n += 1
    print(n)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        loop(sys.argv[2], sys.argv[3])
