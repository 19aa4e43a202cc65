"""TFRecord files of tf.train.Example converted (issue 62, docs/formats/tfrecord.md): the files are
written here from the format's spec (length, masked CRC-32C of it, data, masked CRC-32C of the data;
the Example serialized by protobuf itself, through the `tfrecord` package's generated example_pb2),
checked first against the `tfrecord` package's own reader, then converted by the real command line.
The converted shards are read back with Python's tarfile: every sample's image bytes, label and other
features equal what the reference reader returns. Damaged records and files are reported, not lost.
"""

import gzip
import io
import json
import struct
import subprocess

import pytest

from conftest import tar_samples, tool

crc32c = pytest.importorskip("crc32c")
tfrecord_reader = pytest.importorskip("tfrecord.reader")
example_pb2 = pytest.importorskip("tfrecord.example_pb2")


def masked(data):
    crc = crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(record):
    """One record as TensorFlow's RecordWriter frames it."""
    length = struct.pack("<Q", len(record))
    return length + struct.pack("<I", masked(length)) + record + struct.pack("<I", masked(record))


def image_bytes(i):
    from PIL import Image

    im = Image.new("RGB", (40 + 3 * i, 30 + i % 5), (10 * i % 255, 80, 200 - i))
    out = io.BytesIO()
    im.save(out, "PNG" if i % 5 == 4 else "JPEG", quality=90)
    return out.getvalue()


def example(i, with_image=True):
    e = example_pb2.Example()
    f = e.features.feature
    if with_image:
        f["image/encoded"].bytes_list.value.append(image_bytes(i))
    f["image/class/label"].int64_list.value.append(1 + i % 4)  # TF's ImageNet counts from 1
    f["image/filename"].bytes_list.value.append(f"n0000{i % 4}_{i}.JPEG".encode())
    f["image/height"].int64_list.value.append(30 + i % 5)
    f["image/object/bbox/xmin"].float_list.value.extend([0.25, 0.5][: 1 + i % 2])
    if i % 3 == 0:
        f["image/raw_tag"].bytes_list.value.append(b"\xff\xfe" + bytes([i]))
    return e.SerializeToString()


def write(path, records, gzipped=False):
    data = b"".join(frame(r) for r in records)
    path.write_bytes(gzip.compress(data) if gzipped else data)


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Two files: one named as TF's ImageNet tools name them (no extension), one gzipped .tfrecord.gz."""
    root = tmp_path_factory.mktemp("tfrecord")
    folder = root / "in"
    folder.mkdir()
    write(folder / "train-00000-of-00002", [example(i) for i in range(12)])
    write(folder / "train-00001-of-00002.tfrecord.gz", [example(i) for i in range(12, 20)], gzipped=True)
    (folder / "README").write_text("not a record\n")
    return root


def reference(folder):
    """Every record, file after file by name, through the tfrecord package's reader."""
    out = []
    for path in sorted(p for p in folder.iterdir() if p.name != "README"):
        kind = "gzip" if path.name.endswith(".gz") else None
        out += list(tfrecord_reader.tfrecord_loader(str(path), None, compression_type=kind))
    return out


def expected_json(features):
    """What the json field holds: every feature but the image and the label, one value as itself.
    The reference reader gives a bytes feature as bytes, numbers as numpy arrays."""
    import base64

    def text(raw):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(raw).decode()}

    out = {}
    for name, value in features.items():
        if name in ("image/encoded", "image/class/label"):
            continue
        values = [text(value)] if isinstance(value, bytes) else value.tolist()
        out[name] = values[0] if len(values) == 1 else values
    return out


def test_the_writer_here_frames_what_the_reference_reader_reads(records):
    got = reference(records / "in")
    assert len(got) == 20
    assert [int(r["image/class/label"][0]) for r in got] == [1 + i % 4 for i in range(20)]
    assert [bytes(r["image/encoded"]) for r in got] == [image_bytes(i) for i in range(20)]


def test_convert_keeps_every_image_label_and_feature(records, tmp_path):
    out = tmp_path / "wds"
    r = subprocess.run([tool("SHARDPACK_CLI"), "convert", str(records / "in"), str(out), "--format", "wds",
                        "--samples-per-shard", "8", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["samples"] == 20 and result["skipped_files"] == []
    v = subprocess.run([tool("SHARDPACK_CLI"), "verify", str(out), "--decode"], capture_output=True, text=True)
    assert v.returncode == 0 and v.stdout.startswith("verify OK: 3 shards, 20 samples"), v.stdout + v.stderr
    ref = reference(records / "in")
    got = [sample for _, sample in sorted(tar_samples(out).items())]
    assert len(got) == len(ref) == 20
    for i, (sample, want) in enumerate(zip(got, ref)):
        image = sample.get("png" if i % 5 == 4 else "jpg")
        assert image == bytes(want["image/encoded"]), i
        assert int(sample["cls"]) == int(want["image/class/label"][0]), i
        assert json.loads(sample["json"]) == expected_json(want), i


def test_damaged_records_and_files_are_reported_by_file_and_record(records, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    good = [example(i) for i in range(6)]
    data = bytearray(b"".join(frame(r) for r in good))
    # Record 2's data: one byte flipped (its length still frames). Then a record without an image.
    start = sum(len(frame(r)) for r in good[:2]) + 12 + 40
    data[start] ^= 0x55
    (folder / "a.tfrecord").write_bytes(bytes(data) + frame(example(6, with_image=False)))
    # A file cut short inside its third record: the first two are converted.
    cut = b"".join(frame(r) for r in good[:3])
    (folder / "b.tfrecord").write_bytes(cut[:-20])
    out = tmp_path / "wds"
    r = subprocess.run([tool("SHARDPACK_CLI"), "convert", str(folder), str(out), "--json"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    a, b = str(folder / "a.tfrecord"), str(folder / "b.tfrecord")
    offset = sum(len(frame(r)) for r in good[:2])  # record 2 starts here in both files
    assert result["skipped_files"] == [
        {"path": f"{a}#2", "reason": f"{a}: record 2 at byte {offset}: its data's CRC-32C does not match"},
        {"path": f"{a}#6", "reason": "no image: the Example has no bytes feature image/encoded of one value (its "
                                     "features: image/class/label, image/filename, image/height, "
                                     "image/object/bbox/xmin, image/raw_tag)"},
        {"path": f"{b}#2", "reason": f"{b}: record 2 at byte {offset}: its "
                                     f"{len(good[2])} bytes of data run past the end of the file (cut short); its "
                                     "later records are lost"},
    ]
    assert result["samples"] == 5 + 2


def test_a_folder_without_records_is_refused_as_before(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "notes.txt").write_text("hello\n")
    r = subprocess.run([tool("SHARDPACK_CLI"), "convert", str(tmp_path / "in"), str(tmp_path / "out")],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr == (f"convert failed: {tmp_path / 'in'} holds neither a manifest.json nor .tar/.tar.gz shards; "
                        "nothing to convert\n")


def test_reading_tfrecord_files_in_place_says_to_convert_them(records):
    import shardpack

    folder = records / "in"
    want = (f"{folder}/manifest.json does not exist: {folder} holds TFRecord files (train-00000-of-00002), which "
            f"nothing indexes: convert them into a dataset first: shardpack convert {folder} OUT "
            "(docs/formats/tfrecord.md)")
    r = subprocess.run([tool("SHARDPACK_CLI"), "stat", str(folder)], capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr == f"stat failed: {want}\n"
    with pytest.raises(FileNotFoundError) as e:
        shardpack.Loader(str(folder), batch_size=2)
    assert str(e.value) == want
