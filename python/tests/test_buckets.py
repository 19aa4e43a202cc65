"""Aspect-ratio buckets in `shardpack stat --buckets` (issue 41), against a reference written here from
the rules in docs/buckets.md, on the sizes PIL reads from the source images themselves, as shown
(ImageOps.exif_transpose: phone photos are stored sideways with an EXIF orientation)."""

import json
import math
import subprocess

import pytest

from conftest import tool


def kohya_buckets(area, step, min_side, max_side, max_ratio=0):
    """make_bucket_resolutions as docs/buckets.md states it, then the max-ratio filter."""
    blocks = (area[0] // step) * (area[1] // step)
    made = {(math.isqrt(blocks) * step,) * 2}
    for side in range(min_side, max_side + 1, step):
        other = min(max_side, blocks // (side // step) * step)
        made |= {(side, other), (other, side)}
    return [b for b in sorted(made) if not max_ratio or max(b) / min(b) <= max_ratio]


def nearest(buckets, w, h):
    distances = [abs(math.log(w / h) - math.log(bw / bh)) for bw, bh in buckets]
    return distances.index(min(distances))  # the first of equals


def cropped(bucket, w, h):
    scale = max(bucket[0] / w, bucket[1] / h)
    return 1 - bucket[0] * bucket[1] / (w * scale * h * scale)


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    """Images of 12 shapes from 5:1 to 1:4, in two classes, JPEG and PNG, and their packed dataset."""
    from PIL import Image

    root = tmp_path_factory.mktemp("shapes")
    sizes = [(500, 100), (400, 300), (300, 400), (120, 480), (256, 256), (640, 360), (360, 640), (333, 250),
             (90, 300), (700, 200), (210, 210), (480, 270)]
    for i, (w, h) in enumerate(sizes * 3):
        folder = root / "src" / f"c{i % 2}"
        folder.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (w, h), (i * 7 % 256, 90, 30)).save(folder / f"{i:03d}.{'png' if i % 5 == 0 else 'jpg'}")
    # Stored 600x200 (3:1), shown 200x600 (1:3): orientations 6 and 8 turn a quarter, 3 half a turn.
    for orientation in (6, 8, 3):
        exif = Image.Exif()
        exif[0x0112] = orientation
        Image.new("RGB", (600, 200), (10, 200, 30)).save(root / "src" / "c0" / f"turned{orientation}.jpg",
                                                         exif=exif.tobytes())
    subprocess.run([tool("SHARDPACK_CLI"), "pack", str(root / "src"), str(root / "wds"), "--quiet", "--no-sync",
                    "--samples-per-shard", "10"], check=True)
    subprocess.run([tool("SHARDPACK_CLI"), "pack", str(root / "src"), str(root / "lmdb"), "--quiet", "--no-sync",
                    "--format", "lmdb"], check=True)
    return root


@pytest.mark.parametrize("dataset", ["wds", "lmdb"])
@pytest.mark.parametrize("spec, buckets", [
    ("area=256x256,step=64,min=64,max=512", kohya_buckets((256, 256), 64, 64, 512)),
    ("area=256x256,step=32,min=96,max=512,max-ratio=2.5", kohya_buckets((256, 256), 32, 96, 512, 2.5)),
    ("512x512,640x384,384x640", [(512, 512), (640, 384), (384, 640)]),
])
def test_stat_counts_each_image_into_the_nearest_bucket(shapes, dataset, spec, buckets):
    from PIL import Image, ImageOps

    want = [[0, 0.0, 0, 0.0] for _ in buckets]  # samples, cropped share, enlarged, largest enlargement
    files = sorted(p for p in (shapes / "src").rglob("*") if p.is_file())
    for path in files:
        with Image.open(path) as im:
            w, h = ImageOps.exif_transpose(im).size
        b = nearest(buckets, w, h)
        want[b][0] += 1
        want[b][1] += cropped(buckets[b], w, h)
        scale = max(buckets[b][0] / w, buckets[b][1] / h)  # to cover the bucket
        if scale > 1:
            want[b][2] += 1
            want[b][3] = max(want[b][3], scale)
    r = subprocess.run([tool("SHARDPACK_CLI"), "stat", str(shapes / dataset), "--buckets", spec, "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert [(b["width"], b["height"]) for b in got["buckets"]] == buckets
    assert [b["samples"] for b in got["buckets"]] == [n for n, _, _, _ in want]
    assert [b["upscaled"] for b in got["buckets"]] == [n for _, _, n, _ in want]
    assert sum(n for _, _, n, _ in want) > 0  # some images are enlarged by these buckets
    for b, (_, _, _, largest) in zip(got["buckets"], want):
        assert b["max_upscale"] == pytest.approx(largest, abs=1e-12)
    assert sum(b["samples"] for b in got["buckets"]) == len(files) == 39 and got["unsized"] == 0
    for b, (n, share_sum, _, _) in zip(got["buckets"], want):
        assert b["cropped_share"] == pytest.approx(share_sum / n if n else 0, abs=1e-12)


def test_a_bad_bucket_spec_is_refused_in_the_cli_words(shapes):
    r = subprocess.run([tool("SHARDPACK_CLI"), "stat", str(shapes / "wds"), "--buckets", "640x480,0x10"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == "stat failed: --buckets: bucket 0x10 has a side of 0 pixels\n"


def test_pack_records_the_exif_orientation_the_image_is_shown_with(shapes):
    """The sample table of a shard with a turned JPEG is version 3, with each sample's orientation as
    PIL reads it from the file; the others stay version 1. The .json member and the LMDB record
    header carry it too."""
    import csv
    import tarfile

    import lmdb
    from PIL import Image

    def orientation_of(path):
        with Image.open(path) as im:
            return im.getexif().get(0x0112, 1)

    manifest = json.loads((shapes / "wds" / "manifest.json").read_text())
    versions, seen = [], {}
    for shard in manifest["shardlist"]:
        with open(shapes / "wds" / shard["sample_table"]["file"], newline="") as f:
            rows = list(csv.reader(f, delimiter="\t"))
        versions.append(rows[0][0])
        with tarfile.open(shapes / "wds" / shard["url"]) as tar:
            metas = {m.name.split(".")[0]: json.load(tar.extractfile(m)) for m in tar.getmembers()
                     if m.name.endswith(".json")}
        for row in rows[1:]:
            meta = metas[row[0]]
            orientation = int(row[10]) if rows[0][0].endswith("v3") else 1
            want = orientation_of(shapes / "src" / meta["path"])
            assert orientation == want == meta.get("orientation", 1), meta["path"]
            seen[meta["path"]] = orientation
    assert {p: o for p, o in seen.items() if o != 1} == {"c0/turned6.jpg": 6, "c0/turned8.jpg": 8, "c0/turned3.jpg": 3}
    assert "#shardpack-sample-table-v3" in versions and "#shardpack-sample-table-v1" in versions
    env = lmdb.open(str(shapes / "lmdb"), readonly=True, lock=False)
    with env.begin() as txn:
        headers = [json.loads(v[8:8 + int.from_bytes(v[4:8], "little")]) for k, v in txn.cursor() if k != b"__shardpack__"]
    assert {h["path"]: h["orientation"] for h in headers if "orientation" in h} == {
        "c0/turned6.jpg": 6, "c0/turned8.jpg": 8, "c0/turned3.jpg": 3}
