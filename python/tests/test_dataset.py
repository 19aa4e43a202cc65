"""shardpack.open: random access returning WebDataset-style samples."""

import json
import subprocess
import tarfile

import numpy as np
import pytest

import shardpack
from conftest import tool


def test_samples_are_webdataset_style_dicts(wds, tree):
    ds = shardpack.open(wds)
    assert len(ds) == 60 and ds.format == "wds"
    assert ds.classes == sorted(p.name for p in (tree / "src").iterdir())
    manifest = json.loads((wds / "manifest.json").read_text())
    with tarfile.open(wds / manifest["shardlist"][0]["url"]) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    sample = ds[0]
    key = sample["__key__"]
    ext = "jpg" if "jpg" in sample else "png"
    assert sample[ext] == members[f"{key}.{ext}"]
    assert sample["cls"] == int(members[f"{key}.cls"])
    assert sample["json"] == json.loads(members[f"{key}.json"])
    source = (tree / "src" / sample["json"]["path"]).read_bytes()
    assert sample[ext] == source
    assert ds[-1]["__key__"] == ds[59]["__key__"]
    with pytest.raises(IndexError):
        ds[60]
    assert [s["__key__"] for s in ds][:3] == [ds[i]["__key__"] for i in range(3)]


def test_lmdb_and_raw_datasets(lmdb_dataset, raw, wds):
    a, b = shardpack.open(wds), shardpack.open(lmdb_dataset)
    assert [a[i]["__key__"] for i in range(60)] == [b[i]["__key__"] for i in range(60)]
    assert all(a[i].get("jpg", a[i].get("png")) == b[i].get("jpg", b[i].get("png")) for i in range(60))
    r = shardpack.open(raw)[3]
    assert r["npy"].shape == (32, 32, 3) and r["npy"].dtype == np.uint8


def test_shards_by_brace_range(wds):
    ds = shardpack.open(str(wds / "shard-{000000..000003}.tar"))
    assert len(ds) == 60
    assert ds[17]["__key__"] == shardpack.open(wds)[17]["__key__"]


def test_samples_carry_their_fields_in_every_format(tmp_path):
    """Samples with several files (issue 16): ds[i] gives each field under its name, byte for byte
    as Python's tarfile reads the wds member; raw gives its mask as the pixels numpy reads from the
    shard's mask array; wds's metadata moves to "meta.json" beside a sample's own json field, and
    lmdb gives the same metadata from its record header."""
    from PIL import Image

    src = tmp_path / "src"
    src.mkdir()
    for i in range(6):
        Image.fromarray(np.full((12, 16, 3), 40 * i, np.uint8), "RGB").save(src / f"{i:02d}.png")
        Image.fromarray(np.arange(12 * 16, dtype=np.uint8).reshape(12, 16) + i, "L").save(src / f"{i:02d}.seg.png")
        if i != 4:
            (src / f"{i:02d}.txt").write_text(f"caption {i} — ü", encoding="utf-8")
        if i % 2 == 0:
            (src / f"{i:02d}.json").write_text(json.dumps({"box": [i, i, 4, 4]}))
    for fmt, extra in [("wds", []), ("lmdb", []), ("raw", ["--keep-size"])]:
        subprocess.run([tool("SHARDPACK_CLI"), "pack", str(src), str(tmp_path / fmt), "--layout", "samples",
                        "--format", fmt, "--quiet", "--no-sync", "--samples-per-shard", "4", *extra], check=True)
    wds, lmdb, raw = (shardpack.open(tmp_path / f) for f in ("wds", "lmdb", "raw"))
    members = {}
    for shard in sorted((tmp_path / "wds").glob("*.tar")):
        with tarfile.open(shard) as tar:
            members.update({m.name: tar.extractfile(m).read() for m in tar.getmembers()})
    for i in range(6):
        key = wds[i]["__key__"]
        # A sample's own json is "<key>.json" where shardpack's metadata went to "<key>.meta.json".
        fields = ("txt", "json", "seg.png") if f"{key}.meta.json" in members else ("txt", "seg.png")
        want = {f: members[f"{key}.{f}"] for f in fields if f"{key}.{f}" in members}
        assert ("txt" in want) == (i != 4) and ("json" in want) == (i % 2 == 0)
        for ds in (wds, lmdb):
            sample = ds[i]
            assert {f: sample[f] for f in fields if f in sample} == want, (ds.format, i)
        meta = "meta.json" if "json" in want else "json"
        assert wds[i][meta]["path"] == f"{i:02d}.png" and wds[i][meta] == json.loads(members[f"{key}.{meta}"])
        assert lmdb[i][meta] == json.loads(members[f"{key}.{meta}"]), i  # the same metadata from its record
        sample = raw[i]
        assert {f: sample[f] for f in ("txt", "json") if f in sample} == {f: want[f] for f in ("txt", "json") if f in want}
        flat = np.load(tmp_path / "raw" / f"shard-{i // 4:06d}.seg.png.npy")
        offsets = np.load(tmp_path / "raw" / f"shard-{i // 4:06d}.offsets.npy")
        slot = flat[offsets[i % 4] // 3:offsets[i % 4 + 1] // 3].reshape(12, 16)
        assert sample["seg.png"].dtype == np.uint8 and np.array_equal(sample["seg.png"], slot)
        assert np.array_equal(slot, np.asarray(Image.open(src / f"{i:02d}.seg.png")))  # kept size: the mask itself
