"""Parquet datasets read in place and converted (issue 62, docs/formats/parquet.md). The files are
written by the `datasets` library itself (an Image column and a ClassLabel, its Hub layout
data/train-0000N-of-00002.parquet, row groups of 10 rows) and by pyarrow directly (no Hugging Face
metadata; a binary image column and an integer label; zstd and snappy; row groups of 1,000 rows,
dictionary and plain encodings) and read back by pyarrow's own reader: every sample's image bytes,
label and other columns that shardpack gives, in place and converted, equal what pyarrow returns,
and the class names are the ClassLabel's. Damaged files are reported naming the file and row group.
"""

import io
import json

import numpy as np
import pytest

from conftest import run_cli as run
from conftest import tar_samples

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
hf = pytest.importorskip("datasets")
Image = pytest.importorskip("PIL.Image")

NAMES = ["cat", "dog", "eel"]
COUNT = 36


def jpeg(i):
    rng = np.random.default_rng(200 + i)
    b = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, (16 + i % 5, 20 + i % 3, 3), dtype=np.uint8)).save(b, "JPEG", quality=85)
    return b.getvalue()


def hub_dataset(count):
    features = hf.Features({"image": hf.Image(), "label": hf.ClassLabel(names=NAMES), "caption": hf.Value("string")})
    return hf.Dataset.from_dict(
        {"image": [{"bytes": jpeg(i), "path": f"{i}.jpg"} for i in range(count)], "label": [i % 3 for i in range(count)],
         "caption": [f"photo {i} — ü" for i in range(count)]}, features=features)


def plain_table(count, first=0):
    return pa.table({"image": pa.array([jpeg(first + i) for i in range(count)], pa.binary()),
                     "target": pa.array([(first + i) % 4 for i in range(count)], pa.int32()),
                     "score": pa.array([(first + i) / 8 for i in range(count)], pa.float64()),
                     "source": pa.array(["a" if i % 2 else "b" for i in range(count)], pa.string())})


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("parquet")
    ds = hub_dataset(COUNT)
    (root / "hub" / "data").mkdir(parents=True)
    for i in range(2):
        ds.shard(2, i, contiguous=True).to_parquet(root / "hub" / "data" / f"train-{i:05d}-of-00002.parquet",
                                                   batch_size=10)
    for codec in ("zstd", "snappy"):
        (root / codec).mkdir()
        pq.write_table(plain_table(COUNT), root / codec / "part-0.parquet", row_group_size=1000, compression=codec,
                       use_dictionary=["source"])
    return root


def reference(location):
    """Every row as pyarrow reads the files, in file order: (image bytes, label, other columns)."""
    rows = []
    for path in sorted(location.rglob("*.parquet")) if location.is_dir() else [location]:
        table = pq.read_table(path)
        for row in table.to_pylist():
            image = row.pop("image")
            image = image["bytes"] if isinstance(image, dict) else image
            label = row.pop("label", None)
            label = row.pop("target", label)
            rows.append((image, label, row))
    return rows


def row_groups(location):
    return sum(pq.ParquetFile(p).num_row_groups for p in sorted(location.rglob("*.parquet")))


@pytest.mark.parametrize("name", ["hub", "zstd", "snappy"])
def test_convert_keeps_every_image_label_and_column(folders, tmp_path, name):
    out = tmp_path / "wds"
    r = run("convert", folders / name, out, "--format", "wds", "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["samples"] == COUNT and result["skipped_files"] == []
    v = run("verify", out, "--decode")
    assert v.returncode == 0 and f"{COUNT} samples" in v.stdout and f"{COUNT} images decoded" in v.stdout, v.stdout
    got = tar_samples(out)
    assert sorted(got) == [f"{i:09d}" for i in range(COUNT)]
    for i, (image, label, fields) in enumerate(reference(folders / name)):
        sample = got[f"{i:09d}"]
        assert sample["jpg"] == image, i
        assert int(sample["cls"]) == label, i
        assert json.loads(sample["json"]) == fields, i
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["classes"] == (NAMES if name == "hub" else [])


@pytest.mark.parametrize("name", ["hub", "zstd"])
def test_stat_and_verify_read_it_in_place(folders, name):
    r = run("verify", folders / name, "--decode", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    shards = row_groups(folders / name)
    assert shards == (4 if name == "hub" else 1)  # 18 rows a file in groups of 10; one group of 36
    assert (report["format"], report["shards"], report["samples"], report["images_decoded"]) == (
        "parquet", shards, COUNT, COUNT)
    s = run("stat", folders / name, "--json")
    assert s.returncode == 0, s.stderr
    stats = json.loads(s.stdout)
    assert stats["format"] == "parquet" and stats["samples"] == COUNT
    ref = reference(folders / name)
    counts = {}
    for _, label, _ in ref:
        counts[label] = counts.get(label, 0) + 1
    assert {c["label"]: c["samples"] for c in stats["classes"]} == counts
    if name == "hub":
        assert {c["label"]: c["name"] for c in stats["classes"]} == dict(enumerate(NAMES))
    heights = sorted(Image.open(io.BytesIO(image)).size[1] for image, _, _ in ref)
    assert (stats["height"]["min"], stats["height"]["max"]) == (heights[0], heights[-1])


@pytest.mark.parametrize("name", ["hub", "snappy"])
def test_open_in_place_gives_what_pyarrow_gives(folders, name):
    import shardpack

    ds = shardpack.open(folders / name)
    ref = reference(folders / name)
    assert len(ds) == len(ref) == COUNT and ds.format == "parquet"
    assert ds.classes == (NAMES if name == "hub" else [])
    for i in (0, 27, 13, 35, 19, 9):  # out of order: row groups are not read in sequence
        sample = ds[i]
        assert sample["__key__"] == f"{i:09d}"
        assert sample["jpg"] == ref[i][0]
        assert sample["cls"] == ref[i][1]
        assert json.loads(sample["json"]) == ref[i][2]


@pytest.mark.parametrize("dictionary", [False, True])
def test_rows_are_read_from_their_own_pages(tmp_path, dictionary):
    """Files with a page index (as `datasets` writes them): a row's image is read from its page alone,
    the dictionary page first when there is one. Pages of 3 rows here, snappy, checksums written."""
    import shardpack

    folder = tmp_path / "paged"
    folder.mkdir()
    path = folder / "a.parquet"
    pq.write_table(plain_table(40), path, row_group_size=20, compression="snappy", use_dictionary=dictionary,
                   data_page_size=1, write_batch_size=3, write_page_index=True, write_page_checksum=True)
    chunk = pq.ParquetFile(path).metadata.row_group(1).column(0)
    assert chunk.has_offset_index and chunk.has_dictionary_page == dictionary
    ref = reference(folder)
    ds = shardpack.open(folder)
    for i in (33, 0, 21, 7, 39, 14, 20, 19):
        assert (ds[i]["jpg"], ds[i]["cls"], json.loads(ds[i]["json"])) == ref[i], i
    if dictionary:
        return
    # A flipped byte in row 13's page: that row fails, naming it; the rows of other pages read (an
    # image and a label alone: a row's other columns are read with its whole row group).
    pq.write_table(plain_table(40).select(["image", "target"]), path, row_group_size=20, compression="snappy",
                   use_dictionary=False, data_page_size=1, write_batch_size=3, write_page_index=True,
                   write_page_checksum=True)
    data = bytearray(path.read_bytes())
    at = bytes(data).find(jpeg(13)[-60:-20])
    assert at > 0
    data[at] ^= 0x10
    path.write_bytes(bytes(data))
    ds = shardpack.open(folder)
    with pytest.raises(RuntimeError) as e:
        ds[13]
    assert str(e.value).startswith(f"data loss: {path} (row group 0, row 13): "), str(e.value)
    assert "CRC" in str(e.value) and str(e.value).endswith(f"; run shardpack verify {folder}")
    assert [ds[i]["jpg"] for i in (11, 15, 39)] == [ref[i][0] for i in (11, 15, 39)]  # rows 12-14 share a page


def epoch_pairs(path, epoch, **kwargs):
    import shardpack

    loader = shardpack.Loader(path, batch_size=5, size=16, seed=3, **kwargs)
    loader.set_epoch(epoch)
    return sorted((k, int(label)) for lease in loader.batches() for k, label in zip(lease.keys(), lease.labels()))


def test_loader_in_place_gives_the_samples_of_the_converted_dataset(folders, tmp_path):
    hub = folders / "hub"
    out = tmp_path / "wds"
    assert run("convert", hub, out, "--format", "wds", "--samples-per-shard", "7").returncode == 0
    for epoch in (0, 1):
        in_place = epoch_pairs(hub, epoch)
        assert in_place == epoch_pairs(out, epoch)
        assert in_place == sorted((f"{i:09d}", i % 3) for i in range(COUNT))
    ranks = [epoch_pairs(hub, 2, rank=r, world_size=2) for r in range(2)]
    assert sorted(ranks[0] + ranks[1]) == epoch_pairs(hub, 2)


def test_a_folder_of_several_splits_is_refused_and_a_glob_takes_one(folders, tmp_path):
    root = tmp_path / "splits"
    (root / "data").mkdir(parents=True)
    for f in (folders / "hub" / "data").iterdir():
        (root / "data" / f.name).write_bytes(f.read_bytes())
    hub_dataset(6).to_parquet(root / "data" / "test-00000-of-00001.parquet")
    r = run("stat", root)
    assert r.returncode == 1
    assert r.stderr == (f"stat failed: {root} holds the splits test (1 files), train (2 files) of a Hugging Face "
                        f"dataset; read one at a time, e.g. '{root}/data/test-*.parquet'\n")
    for split, count in (("train", COUNT), ("test", 6)):
        s = run("stat", f"{root}/data/{split}-*.parquet", "--json")
        assert s.returncode == 0, s.stderr
        assert json.loads(s.stdout)["samples"] == count
    one = root / "data" / "test-00000-of-00001.parquet"
    out = tmp_path / "one"
    c = run("convert", one, out, "--json")
    assert c.returncode == 0, c.stderr
    assert [sample["jpg"] for _, sample in sorted(tar_samples(out).items())] == [jpeg(i) for i in range(6)]
    v = run("verify", f"{root}/data/train-*.parquet", "--json")
    assert v.returncode == 0 and json.loads(v.stdout)["samples"] == COUNT, v.stdout + v.stderr
    import shardpack

    ds = shardpack.open(f"{root}/data/test-*.parquet")  # not taken for a list of tar shards
    assert len(ds) == 6 and ds.classes == NAMES and ds[5]["jpg"] == jpeg(5)


def test_damaged_files_are_reported_by_file_and_row_group(folders, tmp_path):
    folder = tmp_path / "damaged"
    folder.mkdir()
    table = plain_table(20)
    # Page checksums written: a flipped byte in a page of images is found by them.
    pq.write_table(table, folder / "a.parquet", row_group_size=10, compression="none", write_page_checksum=True)
    path = folder / "a.parquet"
    data = bytearray(path.read_bytes())
    at = bytes(data).find(jpeg(12)[-60:-20])  # inside row group 1's images (their coded data), stored as they are
    assert at > 0
    data[at] ^= 0x10
    path.write_bytes(bytes(data))
    r = run("verify", folder, "--json")
    assert r.returncode == 1
    problems = json.loads(r.stdout)["problems"]
    assert [(p["shard"], p["key"]) for p in problems] == [("a.parquet (row group 1)", "")]
    assert problems[0]["problem"].startswith(f"{path} (row group 1): ")
    assert "CRC" in problems[0]["problem"], problems[0]["problem"]
    out = tmp_path / "wds"
    c = run("convert", folder, out, "--json")
    assert c.returncode == 0, c.stderr
    result = json.loads(c.stdout)
    assert result["samples"] == 10
    [skipped] = result["skipped_files"]
    assert skipped["path"] == f"{path} (row group 1)"
    assert skipped["reason"].endswith("; its 10 samples are skipped")
    # A file cut short: its footer is gone, and the dataset is refused naming it.
    (folder / "b.parquet").write_bytes((folders / "zstd" / "part-0.parquet").read_bytes()[:5000])
    r = run("stat", folder)
    assert r.returncode == 1
    assert r.stderr == (f"stat failed: {folder / 'b.parquet'}: Invalid: Parquet magic bytes not found in footer. "
                        "Either the file is corrupted or this is not a parquet file.\n")  # Arrow's words after ours


def test_a_null_image_and_a_label_outside_the_classes_are_named(tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    ds = hub_dataset(4)
    table = ds.data.table
    images = table.column("image").to_pylist()
    images[1] = None
    images[3] = {"bytes": b"", "path": "3.jpg"}
    labels = [0, 1, 7, 2]
    table = table.set_column(0, "image", pa.array(images, table.schema.field("image").type))
    table = table.set_column(1, "label", pa.array(labels, pa.int64()))
    pq.write_table(table.replace_schema_metadata(ds.data.table.schema.metadata), folder / "train.parquet")
    r = run("verify", folder, "--json")
    assert r.returncode == 1
    assert [(p["shard"], p["key"], p["problem"]) for p in json.loads(r.stdout)["problems"]] == [
        ("train.parquet (row group 0)", "000000001", "row 1: its image is null"),
        ("train.parquet (row group 0)", "000000002", "row 2: its label 7 is not one of the 3 class names (0 to 2)"),
        ("train.parquet (row group 0)", "000000003", "row 3: its image is empty (0 bytes)")]
    c = run("convert", folder, tmp_path / "out", "--json")
    assert c.returncode == 0, c.stderr
    assert json.loads(c.stdout)["skipped_files"] == [
        {"path": f"{folder / 'train.parquet'} (row group 0, row 1)", "reason": "its image is null"},
        {"path": f"{folder / 'train.parquet'} (row group 0, row 2)",
         "reason": "its label 7 is not one of the 3 class names (0 to 2)"},
        {"path": f"{folder / 'train.parquet'} (row group 0, row 3)", "reason": "its image is empty (0 bytes)"}]
    import shardpack

    ds = shardpack.open(folder)
    assert ds[0]["jpg"] == jpeg(0)
    for i, why in ((1, "its image is null"), (3, "its image is empty (0 bytes)")):
        with pytest.raises(RuntimeError) as e:
            ds[i]
        assert str(e.value) == (f"data loss: {folder / 'train.parquet'} (row group 0, row {i}): {why}; run shardpack "
                                f"verify {folder}")
    # The loader, told to skip damaged samples, leaves them out and names them (not an OpenCV error).
    with pytest.warns(UserWarning, match="its image is empty"):
        keys = [k for lease in shardpack.Loader(folder, batch_size=4, size=8, skip_corrupt=True, seed=0).batches()
                for k in lease.keys()]
    assert sorted(keys) == ["000000000"]


def test_what_is_not_read_is_refused_with_the_fix(folders, tmp_path):
    r = run("convert", folders / "zstd", tmp_path / "out", "--format", "parquet")
    assert r.returncode == 1
    assert r.stderr.endswith("shardpack reads 'parquet' datasets (in place, and convert takes them) but does not "
                             "write them; use wds, lmdb or raw\n")
    folder = tmp_path / "noimage"
    folder.mkdir()
    pq.write_table(pa.table({"text": ["a", "b"], "label": [0, 1]}), folder / "x.parquet")
    r = run("convert", folder, tmp_path / "out2")
    assert r.returncode == 1
    assert r.stderr == (f"convert failed: {folder / 'x.parquet'} has no image column (its columns: text: string\\n"
                        "label: int64); shardpack takes a Hugging Face Image column, a struct<bytes: binary, ...> "
                        "column, or a binary column named image, img, jpg, jpeg, png or webp\n")
    other = tmp_path / "mixed"
    other.mkdir()
    pq.write_table(plain_table(2), other / "a.parquet")
    pq.write_table(plain_table(2).drop_columns(["score"]), other / "b.parquet")
    r = run("stat", other)
    assert r.returncode == 1
    assert r.stderr == (f"stat failed: {other / 'b.parquet'} has other columns (image (binary), label target "
                        f"(integer), fields: source) than {other / 'a.parquet'} (image (binary), label target "
                        "(integer), fields: score source): a dataset's files must share one layout\n")


def test_pack_of_a_parquet_folder_converts_it(folders, tmp_path):
    """`pack SRC OUT` with SRC a folder of Parquet files: its rows, not its files as images."""
    import shardpack

    out = tmp_path / "packed"
    r = run("pack", folders / "hub", out, "--format", "lmdb", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["samples"] == COUNT
    ds = shardpack.open(out)
    assert [ds[i]["jpg"] for i in range(COUNT)] == [image for image, _, _ in reference(folders / "hub")]
    assert ds.classes == NAMES
