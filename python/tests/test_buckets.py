"""Aspect-ratio buckets in `shardpack stat --buckets` (issue 41), against a reference written here from
the rules in docs/buckets.md, on the sizes PIL reads from the source images themselves."""

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
    subprocess.run([tool("SHARDPACK_CLI"), "pack", str(root / "src"), str(root / "wds"), "--quiet", "--no-sync",
                    "--samples-per-shard", "10"], check=True)
    return root


@pytest.mark.parametrize("spec, buckets", [
    ("area=256x256,step=64,min=64,max=512", kohya_buckets((256, 256), 64, 64, 512)),
    ("area=256x256,step=32,min=96,max=512,max-ratio=2.5", kohya_buckets((256, 256), 32, 96, 512, 2.5)),
    ("512x512,640x384,384x640", [(512, 512), (640, 384), (384, 640)]),
])
def test_stat_counts_each_image_into_the_nearest_bucket(shapes, spec, buckets):
    from PIL import Image

    want = [[0, 0.0] for _ in buckets]
    files = sorted(p for p in (shapes / "src").rglob("*") if p.is_file())
    for path in files:
        with Image.open(path) as im:
            w, h = im.size
        b = nearest(buckets, w, h)
        want[b][0] += 1
        want[b][1] += cropped(buckets[b], w, h)
    r = subprocess.run([tool("SHARDPACK_CLI"), "stat", str(shapes / "wds"), "--buckets", spec, "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert [(b["width"], b["height"]) for b in got["buckets"]] == buckets
    assert [b["samples"] for b in got["buckets"]] == [n for n, _ in want]
    assert sum(b["samples"] for b in got["buckets"]) == len(files) == 36 and got["unsized"] == 0
    for b, (n, share_sum) in zip(got["buckets"], want):
        assert b["cropped_share"] == pytest.approx(share_sum / n if n else 0, abs=1e-12)


def test_a_bad_bucket_spec_is_refused_in_the_cli_words(shapes):
    r = subprocess.run([tool("SHARDPACK_CLI"), "stat", str(shapes / "wds"), "--buckets", "640x480,0x10"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == "stat failed: --buckets: bucket 0x10 has a side of 0 pixels\n"
