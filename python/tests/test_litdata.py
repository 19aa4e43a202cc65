"""LitData's optimized datasets read in place and converted (issue 62, docs/formats/litdata.md). The
datasets are written by `litdata.optimize` itself (dict items of a JPEG, a PIL image, an int label, a
str and a float; uncompressed, zstd at the "batch" level, LitData's default, and at the "chunk"
level) and read back by `litdata.StreamingDataset` (its JPEG leaves as bytes, through its own
BytesSerializer: its JPEG decoder needs torchvision, which this environment lacks): every sample's
image bytes, pixels, label and other leaves that shardpack gives, in place and converted, equal
what LitData returns.
"""

import io
import json
import subprocess

import numpy as np
import pytest

from conftest import run_cli as run
from conftest import tar_samples

litdata = pytest.importorskip("litdata")
Image = pytest.importorskip("PIL.Image")

COUNT = 30


def picture(i):
    rng = np.random.default_rng(100 + i)
    return Image.fromarray(rng.integers(0, 255, (18 + i % 6, 22 + i % 4, 3), dtype=np.uint8))


class Items:
    """What a user's `fn` returns: a dict per input, the JPEG opened from its file (LitData keeps the
    file's bytes), the pixels as a PIL image (LitData keeps them raw)."""

    def __init__(self, folder):
        self.folder = folder

    def __call__(self, i):
        path = self.folder / f"{i}.jpg"
        picture(i).save(path, quality=90)
        return {"image": Image.open(path), "label": i % 5, "caption": f"photo {i} ü", "score": i / 4,
                "pixels": picture(i).convert("L") if i % 4 == 0 else picture(i)}


def optimize(root, name, **kwargs):
    images = root / f"{name}-images"
    images.mkdir()
    litdata.optimize(fn=Items(images), inputs=list(range(COUNT)), output_dir=str(root / name), chunk_bytes="16KB",
                     num_workers=1, **kwargs)
    return root / name


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("litdata")
    return {"plain": optimize(root, "plain"), "batch": optimize(root, "batch", compression="zstd"),
            "chunk": optimize(root, "chunk", compression="zstd", compression_level="chunk")}


def reference(folder):
    from litdata.streaming.serializers import BytesSerializer

    ds = litdata.StreamingDataset(str(folder), serializers={"jpeg": BytesSerializer()})
    return [ds[i] for i in range(len(ds))]


def test_the_datasets_are_what_litdata_writes(datasets):
    """And shardpack reads them as written (LitData's reader, used by the tests below, decompresses a
    "chunk"-level chunk into a .bin file beside it and later removes the .zstd.bin)."""
    assert sorted(p.name for p in datasets["chunk"].glob("*.bin"))[0].endswith(".zstd.bin")
    for folder in datasets.values():
        r = run("verify", folder, "--decode", "--json")
        assert r.returncode == 0, r.stdout + r.stderr
        assert (json.loads(r.stdout)["samples"], json.loads(r.stdout)["images_decoded"]) == (COUNT, COUNT)
    index = json.loads((datasets["batch"] / "index.json").read_text())
    assert index["config"]["compression_level"] == "batch" and len(index["chunks"]) >= 3
    assert (datasets["batch"] / index["chunks"][0]["filename"]).read_bytes()[:6] == b"LDFZ01"
    index = json.loads((datasets["chunk"] / "index.json").read_text())
    assert index["config"]["compression_level"] in (None, "chunk")
    assert index["config"]["data_format"] == ["jpeg", "int", "str", "float", "pil"]


@pytest.mark.parametrize("name", ["plain", "batch", "chunk"])
def test_convert_and_open_give_what_litdata_reads(datasets, tmp_path, name):
    import shardpack

    folder = datasets[name]
    ref = reference(folder)
    assert len(ref) == COUNT
    out = tmp_path / "wds"
    r = run("convert", folder, out, "--format", "wds", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["samples"] == COUNT
    v = run("verify", out, "--decode")
    assert v.returncode == 0, v.stdout + v.stderr
    got = tar_samples(out)
    ds = shardpack.open(folder)
    assert len(ds) == COUNT and ds.format == "litdata"
    for i, want in enumerate(ref):
        key = f"{i:09d}"
        assert got[key]["jpg"] == bytes(want["image"]), i
        assert int(got[key]["cls"]) == want["label"], i
        fields = json.loads(got[key]["json"])
        assert fields["caption"] == want["caption"] and fields["score"] == want["score"], i
        sample = ds[i]
        assert sample["__key__"] == key and sample["jpg"] == bytes(want["image"]) and sample["cls"] == want["label"]
        assert json.loads(sample["json"])["caption"] == want["caption"]
        # The pil leaf is a field here (the jpeg leaf is the image): its pixels, exactly, with its mode.
        pixels = fields["pixels"]
        assert pixels["mds_encoding"] == "pil"
    r = run("verify", folder, "--decode", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["samples"] == COUNT, r.stdout


def pil_item(i):
    return {"img": picture(i) if i % 3 else picture(i).convert("L"), "y": i % 2}


def test_a_pil_leaf_as_the_image_is_its_pixels(tmp_path):
    import shardpack

    litdata.optimize(fn=pil_item, inputs=list(range(9)), output_dir=str(tmp_path / "pil"), chunk_bytes="8KB",
                     num_workers=1)
    ref = litdata.StreamingDataset(str(tmp_path / "pil"))
    ds = shardpack.open(tmp_path / "pil")
    for i in range(9):
        want = ref[i]
        assert np.array_equal(ds[i]["npy"], np.asarray(want["img"].convert("RGB"))), i
        assert ds[i]["cls"] == want["y"]


def test_loader_in_place_gives_the_samples_of_the_converted_dataset(datasets, tmp_path):
    import shardpack

    out = tmp_path / "wds"
    assert run("convert", datasets["batch"], out, "--format", "wds", "--samples-per-shard", "7").returncode == 0

    def pairs(path, epoch):
        loader = shardpack.Loader(path, batch_size=4, size=16, seed=5)
        loader.set_epoch(epoch)
        return sorted((k, int(y)) for lease in loader.batches() for k, y in zip(lease.keys(), lease.labels()))

    for epoch in (0, 1):
        assert pairs(datasets["batch"], epoch) == pairs(out, epoch) == sorted((f"{i:09d}", i % 5) for i in range(COUNT))


def test_damaged_and_unread_chunks_are_named(datasets, tmp_path):
    folder = tmp_path / "batch"
    folder.mkdir()
    for f in datasets["batch"].iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    chunks = json.loads((folder / "index.json").read_text())["chunks"]
    first = folder / chunks[0]["filename"]
    data = bytearray(first.read_bytes())
    data[-5] ^= 0xFF  # inside the last zstd frame
    first.write_bytes(bytes(data))
    r = run("verify", folder, "--json")
    assert r.returncode == 1
    problems = json.loads(r.stdout)["problems"]
    assert [p["shard"] for p in problems] == [first.name]
    assert problems[0]["problem"].startswith(f"{first}: its LitData zstd framing is damaged: frame ")
    c = run("convert", folder, tmp_path / "out", "--json")
    assert c.returncode == 0, c.stderr
    result = json.loads(c.stdout)
    assert [s["path"] for s in result["skipped_files"]] == [str(first)]
    assert result["samples"] == COUNT - chunks[0]["chunk_size"]
    index = json.loads((folder / "index.json").read_text())
    index["config"]["encryption"] = {"algorithm": "fernet", "level": "chunk"}
    (folder / "index.json").write_text(json.dumps(index))
    r = run("stat", folder)
    assert r.returncode == 1
    assert r.stderr == (f"stat failed: {folder / 'index.json'}: its chunks are encrypted; decrypt the dataset with "
                        "litdata first\n")
