"""MosaicML Streaming's MDS datasets read in place and converted (issue 62, docs/formats/mds.md). The
datasets are written by Streaming's own MDSWriter (jpeg, pil, int, str and json columns; plain and
zstd-compressed shards; xxh64 and sha1 hashes) and read back by Streaming's own MDSReader: every
sample's image bytes (pixels for pil), label and other columns that shardpack gives, in place and
converted, equal what that reader returns. Damaged shards are reported naming the file.

Streaming's classes come through streaming_mds.py, which says why it does not `import streaming`.
"""

import io
import json
import subprocess

import numpy as np
import pytest

import streaming_mds as streaming_mds_module
from conftest import run_cli as run
from conftest import tar_samples

Image = pytest.importorskip("PIL.Image")
pytest.importorskip("zstd")


def streaming_mds():
    try:
        return streaming_mds_module.writer_and_reader()
    except ImportError as e:
        pytest.skip(str(e))


def picture(i):
    rng = np.random.default_rng(i)
    return Image.fromarray(rng.integers(0, 255, (20 + i % 7, 24 + i % 5, 3), dtype=np.uint8))


def write(folder, columns, count, compression=None, sample=None):
    MDSWriter, _ = streaming_mds()
    with MDSWriter(out=str(folder), columns=columns, compression=compression, hashes=["sha1", "xxh64"],
                   size_limit=12000) as w:
        for i in range(count):
            w.write(sample(i))


def jpeg_sample(i):
    return {"image": picture(i), "label": i % 4, "caption": f"picture {i} — ü", "meta": {"i": i, "odd": i % 2 == 1}}


JPEG_COLUMNS = {"image": "jpeg", "label": "int", "caption": "str", "meta": "json"}


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("mds")
    write(root / "plain", JPEG_COLUMNS, 40, sample=jpeg_sample)
    write(root / "zstd", JPEG_COLUMNS, 40, compression="zstd:7", sample=jpeg_sample)
    write(root / "pil", {"img": "pil", "y": "int32"}, 15,
          sample=lambda i: {"img": picture(i) if i % 3 else picture(i).convert("L"), "y": np.int32(i % 3)})
    return root


def reference(folder):
    """Every sample through Streaming's MDSReader, shard after shard as index.json lists them. A
    compressed shard is decompressed first, as StreamingDataset does before it reads one."""
    import zstd

    _, MDSReader = streaming_mds()
    index = json.loads((folder / "index.json").read_text())
    out = []
    for shard in index["shards"]:
        if shard["zip_data"]:
            raw = folder / shard["raw_data"]["basename"]
            raw.write_bytes(zstd.decompress((folder / shard["zip_data"]["basename"]).read_bytes()))
        reader = MDSReader.from_json(str(folder), None, shard)
        for i in range(shard["samples"]):
            out.append(reader.decode_sample(reader.get_sample_data(i)))
        if shard["zip_data"]:
            raw.unlink()
    return out


def image_bytes(image):
    """The bytes a jpeg column holds: MDSReader opens them with PIL from a BytesIO."""
    return image.fp.getvalue()


@pytest.mark.parametrize("name", ["plain", "zstd"])
def test_convert_keeps_every_image_label_and_column(datasets, tmp_path, name):
    folder = datasets / name
    assert len(json.loads((folder / "index.json").read_text())["shards"]) >= 3  # several shards
    out = tmp_path / "wds"
    r = run("convert", folder, out, "--format", "wds", "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["samples"] == 40 and result["skipped_files"] == []
    v = run("verify", out, "--decode")
    assert v.returncode == 0 and "40 samples" in v.stdout and "40 images decoded" in v.stdout, v.stdout + v.stderr
    ref = reference(folder)
    got = tar_samples(out)
    assert sorted(got) == [f"{i:09d}" for i in range(40)]
    for i, want in enumerate(ref):
        sample = got[f"{i:09d}"]
        assert sample["jpg"] == image_bytes(want["image"]), i
        assert int(sample["cls"]) == want["label"], i
        assert json.loads(sample["json"]) == {"caption": want["caption"], "meta": want["meta"]}, i


@pytest.mark.parametrize("name", ["plain", "zstd"])
def test_stat_and_verify_read_it_in_place(datasets, name):
    folder = datasets / name
    r = run("verify", folder, "--decode", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    shards = len(json.loads((folder / "index.json").read_text())["shards"])
    assert (report["format"], report["shards"], report["samples"], report["images_decoded"]) == ("mds", shards, 40, 40)
    s = run("stat", folder, "--json")
    assert s.returncode == 0, s.stderr
    stats = json.loads(s.stdout)
    assert stats["format"] == "mds" and stats["samples"] == 40
    assert {c["label"]: c["samples"] for c in stats["classes"]} == {0: 10, 1: 10, 2: 10, 3: 10}
    widths = sorted(picture(i).size[0] for i in range(40))
    assert (stats["width"]["min"], stats["width"]["max"]) == (widths[0], widths[-1])


@pytest.mark.parametrize("name", ["plain", "zstd"])
def test_open_in_place_gives_what_streamings_reader_gives(datasets, name):
    import shardpack

    ds = shardpack.open(datasets / name)
    ref = reference(datasets / name)
    assert len(ds) == len(ref) == 40 and ds.format == "mds" and ds.classes == []
    for i in (0, 7, 13, 39, 20):  # out of order: shards are not read in sequence
        sample = ds[i]
        assert sample["__key__"] == f"{i:09d}"
        assert sample["jpg"] == image_bytes(ref[i]["image"])
        assert sample["cls"] == ref[i]["label"]
        assert json.loads(sample["json"]) == {"caption": ref[i]["caption"], "meta": ref[i]["meta"]}


def test_pil_columns_are_pixels_in_place_and_lossless_pngs_converted(datasets, tmp_path):
    import shardpack

    folder = datasets / "pil"
    ref = reference(folder)
    ds = shardpack.open(folder)
    out = tmp_path / "wds"
    assert run("convert", folder, out, "--format", "wds").returncode == 0
    got = tar_samples(out)
    stats = json.loads(run("stat", folder, "--json").stdout)  # sizes from each pil image's header
    heights = sorted(np.asarray(want["img"]).shape[0] for want in ref)
    assert (stats["height"]["min"], stats["height"]["max"]) == (heights[0], heights[-1])
    for i, want in enumerate(ref):
        pixels = np.asarray(want["img"].convert("RGB"))  # grey ("L") images repeated into RGB
        sample = ds[i]
        assert np.array_equal(sample["npy"], pixels), i
        assert sample["cls"] == int(want["y"]), i
        png = got[f"{i:09d}"]["png"]
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(png)).convert("RGB")), pixels), i
        assert int(got[f"{i:09d}"]["cls"]) == int(want["y"]), i


def epoch_pairs(path, epoch, **kwargs):
    import shardpack

    loader = shardpack.Loader(path, batch_size=6, size=16, seed=3, **kwargs)
    loader.set_epoch(epoch)
    return sorted((k, int(label)) for lease in loader.batches() for k, label in zip(lease.keys(), lease.labels()))


@pytest.mark.parametrize("name", ["plain", "zstd"])
def test_loader_in_place_gives_the_samples_of_the_converted_dataset(datasets, tmp_path, name):
    out = tmp_path / "wds"
    assert run("convert", datasets / name, out, "--format", "wds", "--samples-per-shard", "7").returncode == 0
    for epoch in (0, 1):
        in_place = epoch_pairs(datasets / name, epoch)
        assert in_place == epoch_pairs(out, epoch)
        assert in_place == sorted((f"{i:09d}", i % 4) for i in range(40))
    ranks = [epoch_pairs(datasets / name, 2, rank=r, world_size=2) for r in range(2)]
    assert sorted(ranks[0] + ranks[1]) == epoch_pairs(datasets / name, 2)


def damaged_copy(datasets, tmp_path, name):
    folder = tmp_path / name
    folder.mkdir()
    for f in (datasets / name).iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    return folder, json.loads((folder / "index.json").read_text())["shards"]


def test_damaged_shards_are_reported_by_file(datasets, tmp_path):
    import xxhash

    folder, shards = damaged_copy(datasets, tmp_path, "plain")
    # Shard 1: one byte of a sample flipped (its hashes no longer match); shard 2: cut short.
    one = folder / shards[1]["raw_data"]["basename"]
    data = bytearray(one.read_bytes())
    data[-10] ^= 0x40
    one.write_bytes(bytes(data))
    two = folder / shards[2]["raw_data"]["basename"]
    two.write_bytes(two.read_bytes()[:100])
    r = run("verify", folder, "--json")
    assert r.returncode == 1
    problems = {(p["shard"], p["problem"]) for p in json.loads(r.stdout)["problems"]}
    name1, name2 = one.name, two.name
    assert (name1, f"checksum mismatch: xxh64 of {name1} is {xxhash.xxh64(bytes(data)).hexdigest()}, index.json "
                   f"says {shards[1]['raw_data']['hashes']['xxh64']}") in problems
    size2 = shards[2]["raw_data"]["bytes"]
    assert (name2, f"{two} is 100 bytes, index.json says {size2} (cut short)") in problems
    # convert: the cut shard is skipped whole with one line; the flipped byte lies in an image, which
    # still parses as a sample (verify is what checks the hashes).
    out = tmp_path / "wds"
    c = run("convert", folder, out, "--json")
    assert c.returncode == 0, c.stderr
    result = json.loads(c.stdout)
    assert result["skipped_files"] == [
        {"path": str(two), "reason": f"{two} is 100 bytes, index.json says {size2} (cut short); its "
                                     f"{shards[2]['samples']} samples are skipped"}]
    assert result["samples"] == 40 - shards[2]["samples"]


def test_a_sample_whose_sizes_do_not_add_up_is_named(datasets, tmp_path):
    import shardpack

    folder, shards = damaged_copy(datasets, tmp_path, "plain")
    path = folder / shards[0]["raw_data"]["basename"]
    data = bytearray(path.read_bytes())
    n = int.from_bytes(data[:4], "little")
    begin = int.from_bytes(data[8:12], "little")  # sample 1's first byte: the size of its first column
    data[begin:begin + 4] = (10 ** 6).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    ds = shardpack.open(folder)
    with pytest.raises(RuntimeError) as e:
        ds[1]
    assert str(e.value) == (f"data loss: {path}#1: column caption of 1000000 bytes runs past the sample's end; run "
                            f"shardpack verify {folder}")
    r = run("verify", folder, "--json")
    assert r.returncode == 1
    import xxhash

    digest = shards[0]["raw_data"]["hashes"]["xxh64"]
    assert [(p["shard"], p["key"], p["problem"]) for p in json.loads(r.stdout)["problems"]] == [
        (path.name, "", f"checksum mismatch: xxh64 of {path.name} is {xxhash.xxh64(bytes(data)).hexdigest()}, "
                        f"index.json says {digest}"),
        (path.name, "000000001", "sample 1: column caption of 1000000 bytes runs past the sample's end")]
    assert n == shards[0]["samples"]


def test_what_is_not_read_is_refused_with_the_fix(datasets, tmp_path):
    r = run("pack", datasets / "plain", tmp_path / "out", "--format", "mds")
    assert r.returncode == 1
    assert r.stderr.endswith("shardpack reads 'mds' datasets (in place, and convert takes them) but does not write "
                             "them; use wds, lmdb or raw\n")
    write(tmp_path / "gz", JPEG_COLUMNS, 3, compression="gz", sample=jpeg_sample)
    r = run("stat", tmp_path / "gz")
    assert r.returncode == 1
    assert r.stderr == (f"stat failed: {tmp_path / 'gz' / 'index.json'}: shards[0] is compressed with gz, which "
                        "shardpack does not read (it reads zstd and uncompressed MDS shards): write the dataset "
                        "again with MDSWriter(compression='zstd') or none\n")
    write(tmp_path / "noimage", {"label": "int", "caption": "str"}, 2,
          sample=lambda i: {"label": i, "caption": "x"})
    r = run("convert", tmp_path / "noimage", tmp_path / "out2")
    assert r.returncode == 1
    assert r.stderr == (f"convert failed: {tmp_path / 'noimage' / 'index.json'} has no image column (its columns: "
                        "caption:str, label:int); shardpack takes the first jpeg, png or pil column, or a bytes "
                        "column named image, img, jpg, jpeg, png or webp\n")


def test_pack_of_an_mds_folder_converts_it(datasets, tmp_path):
    """`pack SRC OUT` with SRC an MDS folder: its samples, not its files as images."""
    out = tmp_path / "packed"
    r = run("pack", datasets / "zstd", out, "--format", "lmdb", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["samples"] == 40
    import shardpack

    ds, ref = shardpack.open(out), reference(datasets / "zstd")
    assert [ds[i]["jpg"] for i in range(40)] == [image_bytes(want["image"]) for want in ref]
    assert [ds[i]["__key__"] for i in range(40)] == [f"{i:09d}" for i in range(40)]
