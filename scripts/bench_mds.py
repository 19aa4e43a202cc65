"""Helpers of scripts/bench-mds.sh: the medium tree's JPEGs written by each format's own writer, and
the script a user would write to move each to WebDataset.

  bench_mds.py write mds|litdata TREE OUT_DIR
      mds: Streaming's MDSWriter (image: jpeg, the file's bytes; label: int; filename: str; its
      defaults: 64 MB shards, uncompressed). litdata: litdata.optimize (the same leaves; 64 MB
      chunks, uncompressed, 2 workers).
  bench_mds.py loop mds|litdata IN_DIR OUT_DIR
      the format's own reader (Streaming's MDSReader; litdata.StreamingDataset) into
      webdataset.ShardWriter, 1,000 samples a shard, given its best: each JPEG's bytes are written
      as they are, never decoded and encoded again (MDSReader opens them with PIL and keeps the
      bytes; StreamingDataset is given LitData's own BytesSerializer for its jpeg leaves).
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))
import streaming_mds  # noqa: E402


def tree_items(tree):
    classes = sorted(d for d in os.listdir(tree) if os.path.isdir(os.path.join(tree, d)))
    return [(os.path.join(tree, c, f), label) for label, c in enumerate(classes)
            for f in sorted(os.listdir(os.path.join(tree, c)))]


def litdata_item(entry):
    from PIL import Image

    path, label = entry
    return {"image": Image.open(path), "label": label, "filename": os.path.basename(path)}  # the file's bytes


def write(fmt, tree, out):
    from PIL import Image

    if fmt == "litdata":
        import litdata

        litdata.optimize(fn=litdata_item, inputs=tree_items(tree), output_dir=out, chunk_bytes="64MB", num_workers=2)
        return
    MDSWriter, _ = streaming_mds.writer_and_reader()
    with MDSWriter(out=out, columns={"image": "jpeg", "label": "int", "filename": "str"}) as w:
        for path, label in tree_items(tree):
            with Image.open(path) as image:  # MDSWriter copies the file's bytes
                w.write({"image": image, "label": label, "filename": os.path.basename(path)})


def samples(fmt, src):
    """(jpeg bytes, label, filename) through the format's own reader."""
    if fmt == "litdata":
        import litdata
        from litdata.streaming.serializers import BytesSerializer

        ds = litdata.StreamingDataset(src, serializers={"jpeg": BytesSerializer()})
        for i in range(len(ds)):
            s = ds[i]
            yield bytes(s["image"]), s["label"], s["filename"]
        return
    _, MDSReader = streaming_mds.writer_and_reader()
    for shard in json.load(open(os.path.join(src, "index.json")))["shards"]:
        reader = MDSReader.from_json(src, None, shard)
        for i in range(shard["samples"]):
            s = reader.decode_sample(reader.get_sample_data(i))
            yield s["image"].fp.getvalue(), s["label"], s["filename"]


def loop(fmt, src, out):
    import webdataset

    os.makedirs(out, exist_ok=True)
    n = 0
    with webdataset.ShardWriter(os.path.join(out, "shard-%06d.tar"), maxcount=1000, verbose=0) as sink:
        for jpeg, label, filename in samples(fmt, src):
            sink.write({"__key__": f"{n:09d}", "jpg": jpeg, "cls": str(label),
                        "json": json.dumps({"filename": filename})})
            n += 1
    print(n)


if __name__ == "__main__":
    {"write": write, "loop": loop}[sys.argv[1]](*sys.argv[2:5])
