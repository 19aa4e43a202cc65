"""Helpers of scripts/bench-mds.sh.

  bench_mds.py write TREE OUT_DIR   the tree's JPEGs as an MDS dataset, written by Streaming's own
                                    MDSWriter (image: jpeg, the file's bytes; label: int; filename:
                                    str; 64 MB shards, uncompressed: MDSWriter's defaults)
  bench_mds.py loop IN_DIR OUT_DIR  the baseline: what a user writes to move an MDS dataset to
                                    WebDataset, Streaming's MDSReader into webdataset.ShardWriter
                                    (1,000 samples a shard). Given its best: each JPEG's bytes are
                                    written as they are (MDSReader opens them with PIL; they are not
                                    encoded again, which webdataset would do to a PIL image)
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))
import streaming_mds  # noqa: E402


def write(tree, out):
    from PIL import Image

    MDSWriter, _ = streaming_mds.writer_and_reader()
    classes = sorted(d for d in os.listdir(tree) if os.path.isdir(os.path.join(tree, d)))
    columns = {"image": "jpeg", "label": "int", "filename": "str"}
    with MDSWriter(out=out, columns=columns) as w:
        for label, c in enumerate(classes):
            for f in sorted(os.listdir(os.path.join(tree, c))):
                with Image.open(os.path.join(tree, c, f)) as image:  # MDSWriter copies the file's bytes
                    w.write({"image": image, "label": label, "filename": f})


def loop(src, out):
    import webdataset

    _, MDSReader = streaming_mds.writer_and_reader()
    index = json.load(open(os.path.join(src, "index.json")))
    os.makedirs(out, exist_ok=True)
    n = 0
    with webdataset.ShardWriter(os.path.join(out, "shard-%06d.tar"), maxcount=1000, verbose=0) as sink:
        for shard in index["shards"]:
            reader = MDSReader.from_json(src, None, shard)
            for i in range(shard["samples"]):
                sample = reader.decode_sample(reader.get_sample_data(i))
                sink.write({"__key__": f"{n:09d}", "jpg": sample["image"].fp.getvalue(), "cls": str(sample["label"]),
                            "json": json.dumps({"filename": sample["filename"]})})
                n += 1
    print(n)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    else:
        loop(sys.argv[2], sys.argv[3])
