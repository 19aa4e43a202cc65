"""Helpers of scripts/bench-mds.sh: the medium tree's JPEGs written by each format's own writer, and
the script a user would write to move each to WebDataset.

  bench_mds.py write mds|litdata|parquet TREE OUT_DIR
      mds: Streaming's MDSWriter (image: jpeg, the file's bytes; label: int; filename: str; its
      defaults: 64 MB shards, uncompressed). litdata: litdata.optimize (the same leaves; 64 MB
      chunks, uncompressed, 2 workers). parquet: the `datasets` library's to_parquet, as the Hub
      holds a dataset (Image and ClassLabel features, a filename column; data/train-0000N-of-0000M
      files of about 500 MB, row groups of 100 rows, `datasets`' defaults for images; snappy).
  bench_mds.py loop mds|litdata|parquet IN_DIR OUT_DIR
      the format's own reader (Streaming's MDSReader; litdata.StreamingDataset; pyarrow's
      ParquetFile.iter_batches) into webdataset.ShardWriter, 1,000 samples a shard, given its best:
      each JPEG's bytes are written as they are, never decoded and encoded again (MDSReader opens
      them with PIL and keeps the bytes; StreamingDataset is given LitData's own BytesSerializer
      for its jpeg leaves; pyarrow's rows hold the bytes).
  bench_mds.py first-batch FILES IMAGES_DIR OUT_DIR
      FILES Parquet files of 2 images each (written by pyarrow with the Hub's metadata), then the
      seconds from shardpack.Loader(OUT_DIR) to its first batch (64 images, crop 224), printed.
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


def write_parquet(tree, out):
    import datasets

    items = tree_items(tree)
    classes = sorted(d for d in os.listdir(tree) if os.path.isdir(os.path.join(tree, d)))
    features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=classes),
                                  "filename": datasets.Value("string")})
    total = sum(os.path.getsize(path) for path, _ in items)
    files = max(1, round(total / 500e6))
    os.makedirs(os.path.join(out, "data"))
    for i in range(files):  # a Dataset a file: one of 2 GB would pass the 32-bit offsets of a binary column
        part = items[i * len(items) // files:(i + 1) * len(items) // files]
        images = []
        for path, _ in part:
            with open(path, "rb") as f:
                images.append({"bytes": f.read(), "path": None})
        ds = datasets.Dataset.from_dict({"image": images, "label": [label for _, label in part],
                                         "filename": [os.path.basename(p) for p, _ in part]}, features=features)
        ds.to_parquet(os.path.join(out, "data", f"train-{i:05d}-of-{files:05d}.parquet"))


def write(fmt, tree, out):
    from PIL import Image

    if fmt == "parquet":
        write_parquet(tree, out)
        return
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
    if fmt == "parquet":
        import pyarrow.parquet as pq

        for root, _, files in sorted(os.walk(src)):
            for name in sorted(f for f in files if f.endswith(".parquet")):
                for batch in pq.ParquetFile(os.path.join(root, name)).iter_batches(batch_size=100):
                    for row in batch.to_pylist():
                        yield row["image"]["bytes"], row["label"], row["filename"]
        return
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


def first_batch(files, images_dir, out):
    """10,000 files as a Hub dataset of many small files, then the Loader's time to its first batch."""
    import time

    import datasets
    import pyarrow.parquet as pq

    files = int(files)
    jpegs = [os.path.join(root, f) for root, _, fs in sorted(os.walk(images_dir)) for f in sorted(fs)
             if f.lower().endswith((".jpeg", ".jpg"))]
    if not os.path.isdir(out):
        features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=["a", "b"])})
        two = [open(p, "rb").read() for p in jpegs[:2]]
        table = datasets.Dataset.from_dict({"image": [{"bytes": b, "path": None} for b in two], "label": [0, 1]},
                                           features=features).data.table
        os.makedirs(out + ".tmp/data", exist_ok=True)
        for i in range(files):
            pq.write_table(table, os.path.join(out + ".tmp", "data", f"train-{i:05d}-of-{files:05d}.parquet"))
        os.rename(out + ".tmp", out)
    import shardpack

    t0 = time.perf_counter()
    loader = shardpack.Loader(out, batch_size=64, size=224, seed=0)
    lease = next(iter(loader.batches()))
    assert len(lease.keys()) == 64
    print(f"{time.perf_counter() - t0:.2f}")


if __name__ == "__main__":
    {"write": write, "loop": loop, "first-batch": first_batch}[sys.argv[1]](*sys.argv[2:5])
