"""Bucketed batches from shardpack.Loader (issue 41), against a reference written here from the rules
docs/buckets.md states: each image's bucket from PIL's size of its source file as shown, the walk that
fills buckets in the epoch's order, the tail rules, the rank rounds and elastic resume. The epoch's
order itself comes from the same loader without buckets (world size 1: its batches, one after another,
are the order), whose shuffles are tested elsewhere. Pixels against PIL's resize of the same box."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import tool
from test_buckets import nearest

BUCKETS = [(64, 64), (96, 48), (48, 96), (80, 64), (64, 80), (112, 48)]
SPEC = ",".join(f"{w}x{h}" for w, h in BUCKETS)


def smooth_image(w, h, seed):
    """A picture with detail at every scale a bucket keeps, and none finer than a JPEG keeps."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    r = 128 + 100 * np.sin(x / (7 + seed % 5)) * np.cos(y / 11)
    g = 255 * x / max(w - 1, 1)
    b = 128 + 120 * np.sin((x + y) / (13 + seed % 3))
    return np.clip(np.stack([r, g, b], -1), 0, 255).astype(np.uint8)


def make_tree(root, count, seed, turned=()):
    """`count` JPEGs of many shapes in 3 classes; those in `turned` stored sideways with EXIF orientation 6."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    for i in range(count):
        w, h = int(rng.integers(40, 200)), int(rng.integers(40, 200))
        folder = root / f"c{i % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        image = Image.fromarray(smooth_image(w, h, i))
        if i in turned:  # stored turned a quarter back: shown as w x h
            exif = Image.Exif()
            exif[0x0112] = 6
            image.transpose(Image.Transpose.ROTATE_90).save(folder / f"{seed}-{i:03d}.jpg", quality=95,
                                                            exif=exif.tobytes())
        else:
            image.save(folder / f"{seed}-{i:03d}.jpg", quality=95)


def pack(src, out, *extra):
    subprocess.run([tool("SHARDPACK_CLI"), "pack", str(src), str(out), "--quiet", "--no-sync", *extra], check=True)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("bucketed")
    make_tree(root / "a", 90, 1, turned={3, 10, 17})
    make_tree(root / "b", 40, 2)
    pack(root / "a", root / "wds", "--samples-per-shard", "16")
    pack(root / "a", root / "lmdb", "--format", "lmdb")
    pack(root / "b", root / "small", "--samples-per-shard", "8")
    return root


def shown_sizes(dataset):
    """[(width, height) as shown] of every sample, read by PIL from the stored image bytes."""
    import io

    from PIL import Image, ImageOps

    import shardpack

    sizes = []
    for sample in shardpack.open(str(dataset)):
        with Image.open(io.BytesIO(sample["jpg"])) as im:
            sizes.append(ImageOps.exif_transpose(im).size)
    return sizes


def stored_sizes(dataset):
    """[(width, height) as stored] of every sample, before any EXIF orientation."""
    import io

    from PIL import Image

    import shardpack

    return [Image.open(io.BytesIO(sample["jpg"])).size for sample in shardpack.open(str(dataset))]


def epoch_order(epoch, **kwargs):
    """The epoch's order: the same loader without buckets, on one rank, its batches one after another."""
    import shardpack

    kwargs = dict(kwargs, world_size=1, rank=0, transform="eval", size=8)
    loader = shardpack.Loader(**kwargs)
    loader.set_epoch(epoch)
    return [int(i) for b in loader.batches() for i in b.indices()]


def reference_batches(order, bucket_of, batch_size, tail):
    """docs/buckets.md, rules 2 and 3: the epoch's global batches as (bucket, [indices])."""
    open_batches = {k: [] for k in range(len(BUCKETS))}
    first = {k: [] for k in range(len(BUCKETS))}
    out = []
    for i in order:
        k = bucket_of[i]
        if k is None:  # in no bucket (bucket_no_upscale, bucket_min_side): left out
            continue
        if len(first[k]) < batch_size:
            first[k].append(i)
        open_batches[k].append(i)
        if len(open_batches[k]) == batch_size:
            out.append((k, open_batches[k]))
            open_batches[k] = []
    for k in range(len(BUCKETS)):
        if not open_batches[k] or tail == "drop":
            continue
        batch = open_batches[k]
        if tail == "pad":
            batch = batch + [first[k][j % len(first[k])] for j in range(batch_size - len(batch))]
        out.append((k, batch))
    return out


def rank_share(batches, tail, rank, world, start=0):
    """Rule 4: rank `rank`'s batches from global batch `start` on."""
    rest = len(batches) - start
    rounds = rest // world if tail == "drop" else math.ceil(rest / world)
    return [batches[(start + r * world + rank) % len(batches)] for r in range(rounds)]


def loader_batches(loader, epoch=None, limit=None):
    """(bucket, [indices], shape) of each batch the loader hands out."""
    if epoch is not None:
        loader.set_epoch(epoch)
    out = []
    for b in loader.batches():
        out.append((b.bucket, [int(i) for i in b.indices()], b.images().shape))
        if limit is not None and len(out) == limit:
            break
    return out


def expected(batches):
    return [(k, idx, (len(idx), BUCKETS[k][1], BUCKETS[k][0], 3)) for k, idx in batches]


def bucket_table(*datasets):
    """Each sample's bucket, source after source, from PIL's sizes."""
    return [nearest(BUCKETS, w, h) for d in datasets for w, h in shown_sizes(d)]


@pytest.mark.parametrize("world", [1, 2, 3])
@pytest.mark.parametrize("tail", ["partial", "drop", "pad"])
@pytest.mark.parametrize("shuffle", ["global", "streaming"])
def test_batches_follow_the_documented_rules_on_every_rank(data, world, tail, shuffle):
    import shardpack

    bucket_of = bucket_table(data / "wds")
    options = dict(path=str(data / "wds"), batch_size=4, seed=7, shuffle_buffer=20 if shuffle == "streaming" else 0)
    for epoch in range(3):
        batches = reference_batches(epoch_order(epoch, **options), bucket_of, 4, tail)
        for rank in range(world):
            loader = shardpack.Loader(**options, buckets=SPEC, bucket_tail=tail, world_size=world, rank=rank)
            want = expected(rank_share(batches, tail, rank, world))
            assert len(loader) == len(want)
            assert loader_batches(loader, epoch) == want, (epoch, rank)
    if tail == "partial":  # every sample once an epoch, over the ranks, before the completed round
        assert sorted(i for _, idx in batches for i in idx) == list(range(len(bucket_of)))


def choose(w, h, no_upscale, min_side):
    """docs/buckets.md's bucket_no_upscale and bucket_min_side, written out: None for no bucket."""
    if min(w, h) < min_side:
        return None
    if not no_upscale:
        return nearest(BUCKETS, w, h)
    fits = [i for i, (bw, bh) in enumerate(BUCKETS) if bw <= w and bh <= h]
    if not fits:
        return None
    return min(fits, key=lambda i: (abs(math.log(w / h) - math.log(BUCKETS[i][0] / BUCKETS[i][1])), i))


@pytest.mark.parametrize("no_upscale, min_side", [(True, 0), (False, 60), (True, 70)])
def test_bucket_no_upscale_and_min_side_leave_out_and_count_what_no_bucket_takes(data, no_upscale, min_side):
    import shardpack

    sizes = shown_sizes(data / "wds")
    bucket_of = [choose(w, h, no_upscale, min_side) for w, h in sizes]
    left_out = sum(k is None for k in bucket_of)
    assert 0 < left_out < len(sizes)
    # Never enlarged under bucket_no_upscale: each image covers its bucket.
    assert not no_upscale or all(BUCKETS[k][0] <= w and BUCKETS[k][1] <= h
                                 for (w, h), k in zip(sizes, bucket_of) if k is not None)
    options = dict(path=str(data / "wds"), batch_size=4, seed=7)
    kwargs = dict(buckets=SPEC, bucket_no_upscale=no_upscale, bucket_min_side=min_side)
    why = ", or ".join(([] if not no_upscale else
                        ["smaller than every bucket, and bucket_no_upscale does not enlarge them"]) +
                       ([] if not min_side else [f"a shorter side under bucket_min_side {min_side}"]))
    with pytest.warns(UserWarning) as caught:
        loader = shardpack.Loader(**options, **kwargs)
    assert [str(w.message) for w in caught] == [
        f"{data / 'wds'}: {left_out} of {len(sizes)} samples are in no bucket ({why}) and are left out of every epoch"]
    assert loader.bucket_left_out == left_out
    for epoch in range(2):
        want = expected(reference_batches(epoch_order(epoch, **options), bucket_of, 4, "partial"))
        assert len(loader) == len(want)
        assert loader_batches(loader, epoch) == want, epoch
    # stat counts the same, and says how many no bucket takes.
    flags = ["--bucket-no-upscale"] * no_upscale + ["--bucket-min-side", str(min_side)] * bool(min_side)
    r = subprocess.run([tool("SHARDPACK_CLI"), "stat", str(data / "wds"), "--buckets", SPEC, "--json", *flags],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert [b["samples"] for b in got["buckets"]] == [bucket_of.count(k) for k in range(len(BUCKETS))]
    assert got["bucket_left_out"] == left_out
    if no_upscale:
        assert all(b["upscaled"] == 0 for b in got["buckets"])
    # bench takes them as flags, and says so in its words.
    r = subprocess.run([tool("SHARDPACK_CLI"), "bench", str(data / "wds"), "--buckets", SPEC, "--batch", "4",
                        "--epochs", "1", *flags], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    flag_why = why.replace("bucket_no_upscale", "--bucket-no-upscale").replace("bucket_min_side", "--bucket-min-side")
    assert r.stderr.splitlines()[0] == (f"warning: {data / 'wds'}: {left_out} of {len(sizes)} samples are in no "
                                        f"bucket ({flag_why}) and are left out of every epoch")


@pytest.mark.parametrize("world", [1, 2])
def test_a_view_is_bucketed_by_the_samples_it_selects(data, tmp_path, world):
    """A view (shardpack subset: about half the samples, from every shard, the turned ones among
    them) reads its samples' sizes from its base's tables, the selected ones in its order: the
    batches follow the reference over the view's own samples."""
    import shardpack

    view = tmp_path / "half"
    subprocess.run([tool("SHARDPACK_CLI"), "subset", str(data / "wds"), str(view), "--fraction", "0.5", "--seed", "5"],
                   check=True, stdout=subprocess.DEVNULL)
    bucket_of = bucket_table(view)
    assert 30 < len(bucket_of) < 60 and len(set(bucket_of)) > 2
    assert any(a != b for a, b in zip(shown_sizes(view), stored_sizes(view)))  # a turned image is selected
    options = dict(path=str(view), batch_size=4, seed=2)
    for epoch in range(2):
        batches = reference_batches(epoch_order(epoch, **options), bucket_of, 4, "partial")
        for rank in range(world):
            loader = shardpack.Loader(**options, buckets=SPEC, world_size=world, rank=rank)
            want = expected(rank_share(batches, "partial", rank, world))
            assert loader_batches(loader, epoch) == want, (epoch, rank)


@pytest.mark.parametrize("world", [1, 2, 3])
def test_a_mixture_is_bucketed_over_its_plan(data, world):
    import shardpack

    bucket_of = bucket_table(data / "wds", data / "small")
    sources = [(str(data / "wds"), 0.6), (str(data / "small"), 0.4)]
    options = dict(sources=sources, epoch_size=100, batch_size=4, seed=3)
    for epoch in range(3):
        batches = reference_batches(epoch_order(epoch, **options), bucket_of, 4, "partial")
        for rank in range(world):
            loader = shardpack.Loader(**options, buckets=BUCKETS, world_size=world, rank=rank)
            loader.set_epoch(epoch)
            want = expected(rank_share(batches, "partial", rank, world))
            assert len(loader) == len(want)
            assert loader_batches(loader) == want, (epoch, rank)


@pytest.mark.parametrize("tail", ["partial", "pad"])
def test_resume_mid_epoch_gives_the_rest_of_the_same_epoch(data, tail):
    import shardpack

    options = dict(path=str(data / "lmdb"), batch_size=3, seed=11, buckets=SPEC, bucket_tail=tail, world_size=2,
                   rank=1)
    whole = loader_batches(shardpack.Loader(**options), epoch=1)
    first = shardpack.Loader(**options)
    first.set_epoch(1)
    taken = loader_batches(first, limit=5)
    state = first.state_dict()
    resumed = shardpack.Loader(**options)
    resumed.load_state_dict(state)
    resumed.set_epoch(1)
    assert taken + loader_batches(resumed) == whole


def test_elastic_resume_shares_the_global_batches_left_among_the_new_ranks(data):
    import shardpack

    bucket_of = bucket_table(data / "wds")
    options = dict(path=str(data / "wds"), batch_size=4, seed=5, buckets=SPEC)
    batches = reference_batches(epoch_order(2, path=options["path"], batch_size=4, seed=5), bucket_of, 4, "partial")
    states = []
    for rank in range(2):  # two ranks take 3 batches each
        loader = shardpack.Loader(**options, world_size=2, rank=rank)
        loader.set_epoch(2)
        loader_batches(loader, limit=3)
        states.append(loader.state_dict())
    assert states[0]["epoch_batches_done"] == 6
    got = []
    for rank in range(3):  # three ranks go on from global batch 6
        loader = shardpack.Loader(**options, world_size=3, rank=rank)
        loader.load_state_dict(states[0])
        loader.set_epoch(2)
        mine = loader_batches(loader)
        assert mine == expected(rank_share(batches, "partial", rank, 3, start=6))
        got += [i for _, idx, _ in mine for i in idx]
    # Exactly once over both runs, but for the batches that complete the last round again.
    repeats = 3 * math.ceil((len(batches) - 6) / 3) - (len(batches) - 6)
    done = [i for _, idx in batches[:6] for i in idx]
    assert sorted(done + got) == sorted(list(range(len(bucket_of))) + [i for _, idx in batches[:repeats] for i in idx])


def reference_crop(jpeg, bucket):
    """docs/buckets.md's crop in evaluation, by PIL in floating point: the image as shown, scaled to cover
    the bucket, its centre cut to the bucket."""
    import io

    from PIL import Image, ImageOps

    with Image.open(io.BytesIO(jpeg)) as im:
        shown = ImageOps.exif_transpose(im).convert("RGB")
    w, h = shown.size
    bw, bh = bucket
    scale = max(bw / w, bh / h)
    cw, ch = min(w, bw / scale), min(h, bh / scale)  # (one of them is the whole side, up to rounding)
    box = ((w - cw) / 2, (h - ch) / 2, (w + cw) / 2, (h + ch) / 2)
    planes = [Image.fromarray(np.asarray(shown, np.float32)[:, :, c], mode="F").resize(bucket, Image.BILINEAR, box=box)
              for c in range(3)]
    return np.stack([np.asarray(p) for p in planes], -1)


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 10 * math.log10(255 ** 2 / mse) if mse > 0 else math.inf


@pytest.mark.parametrize("dataset", ["wds", "lmdb"])
def test_each_image_is_its_bucket_cut_from_the_cover_scaled_image(data, dataset):
    import shardpack

    ds = shardpack.open(str(data / dataset))
    loader = shardpack.Loader(str(data / dataset), batch_size=5, buckets=SPEC, transform="eval", seed=2)
    worst, seen = math.inf, 0
    for batch in loader.batches():
        images = batch.images()
        for image, index in zip(images, batch.indices()):
            want = reference_crop(ds[int(index)]["jpg"], BUCKETS[batch.bucket])
            worst = min(worst, psnr(image, want))
            seen += 1
    assert seen == len(ds)
    print(f"worst PSNR {worst:.2f} dB over {seen} images")
    assert worst >= 30, worst


def test_training_crops_keep_the_whole_side_that_fits(tmp_path):
    """An image wider than its bucket keeps all its rows, whatever random offset the crop takes along
    its width: a red band at the top and a blue one at the bottom are always in the crop's edge rows."""
    from PIL import Image

    import shardpack

    for i in range(24):
        pixels = np.full((90, 240, 3), 128, np.uint8)  # 8:3, wider than every bucket
        pixels[:6] = (255, 0, 0)
        pixels[-6:] = (0, 0, 255)
        (tmp_path / "src" / "c").mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels).save(tmp_path / "src" / "c" / f"{i:02d}.png")
    pack(tmp_path / "src", tmp_path / "ds")
    loader = shardpack.Loader(str(tmp_path / "ds"), batch_size=8, buckets=SPEC, seed=4)
    for batch in loader.batches():
        assert BUCKETS[batch.bucket] == (112, 48)  # the widest
        images = batch.images().astype(int)
        assert np.abs(images[:, 0] - (255, 0, 0)).max() <= 2
        assert np.abs(images[:, -1] - (0, 0, 255)).max() <= 2
        assert np.abs(images[:, 24] - 128).max() <= 2


def test_bad_bucket_options_are_refused_in_pythons_words(data, tmp_path, monkeypatch):
    import shardpack

    ds = str(data / "wds")
    cases = [
        (dict(buckets=[]), ValueError,
         "buckets: no buckets given (a preset: sdxl; a list: 1024x1024,1152x896,...; or a rule: "
         "area=1024x1024,step=64,min=512,max=2048)"),
        (dict(buckets=[(0, 64)]), ValueError, "buckets: bucket 0x64 has a side of 0 pixels"),
        (dict(buckets="sdlx"), ValueError,
         "buckets: 'sdlx' is not a preset (a preset: sdxl; a list: 1024x1024,1152x896,...; or a rule: "
         "area=1024x1024,step=64,min=512,max=2048)"),
        (dict(buckets=[64]), TypeError, "buckets: each bucket is a (width, height) pair of ints, not 64"),
        (dict(buckets=SPEC, size=256), ValueError,
         "size=256 is not used with buckets: each batch has its bucket's size (batch.width, batch.height; "
         "bucket_sizes); leave size out"),
        (dict(patch=16, max_side=64, tokens_per_batch=64, size=64), ValueError,
         "size=64 is not used with a token budget: each image keeps its aspect ratio, up to max_side; leave size "
         "out"),
        (dict(buckets=SPEC, bucket_tail="last"), ValueError, "bucket_tail takes drop, partial or pad, not 'last'"),
        (dict(bucket_no_upscale=True), ValueError,
         "bucket_no_upscale and bucket_min_side choose among buckets: give buckets too (e.g. buckets=\"sdxl\")"),
        (dict(buckets=SPEC, bucket_min_side=100000), ValueError,
         f"{ds}: every one of its 90 samples is in no bucket (a shorter side under bucket_min_side 100000): give "
         "smaller buckets, or leave bucket_no_upscale and bucket_min_side out"),
        (dict(bucket_tail="drop"), ValueError,
         "bucket_tail='drop' without buckets: it says what becomes of each bucket's last batch; give buckets= too, "
         "or drop_last= for batches without buckets"),
        (dict(buckets=SPEC, drop_last=True), ValueError,
         "drop_last with buckets: each bucket has a last batch, and bucket_tail says what becomes of them "
         "(bucket_tail=drop leaves them out)"),
        (dict(buckets=SPEC, batch_size=64, bucket_tail="drop"), ValueError,
         "no bucket holds a whole batch of 64 images, and bucket_tail=drop leaves out the smaller ones: every epoch "
         "would be empty. Use a smaller batch size, fewer buckets, or bucket_tail=partial or pad"),
        (dict(buckets=SPEC, device="cuda"), ValueError,
         "buckets and token budgets are read by the CPU loader only for now (their batches differ in shape): use "
         "device='cpu' with "
         "pin_memory=True and move the tensors with .to('cuda', non_blocking=True)"),
    ]
    for kwargs, error, message in cases:
        with pytest.raises(error) as e:
            shardpack.Loader(ds, **kwargs)
        assert str(e.value) == message, kwargs
    shards = sorted(str(p) for p in (data / "wds").glob("*.tar"))
    with pytest.raises(ValueError) as e:
        shardpack.Loader(shards[:2], buckets=SPEC)
    assert str(e.value) == (f"buckets and token budgets need each image's size from the sample tables a dataset's "
                            f"manifest lists, and {shards[0]}::{shards[1]} are shards without a manifest; `shardpack "
                            "convert FOLDER NEW --format wds`, FOLDER holding these shards, writes a dataset that has "
                            "them")
    # A URL is read as without buckets (tests/interop: the same batches over HTTP and S3); one that
    # nothing answers fails as it does without them, naming what it asked for.
    monkeypatch.setenv("SHARDPACK_HTTP_ATTEMPTS", "1")
    with pytest.raises(OSError) as e:
        shardpack.Loader("http://127.0.0.1:9/ds", buckets=SPEC)
    assert str(e.value) == ("cannot GET http://127.0.0.1:9/ds/manifest.json: Couldn't connect to server (gave up after "
                            "1 attempt)")
    with pytest.raises(ValueError) as e:
        shardpack.Loader(sources=[ds, str(data / "small")], per_source_batches=True, buckets=SPEC)
    assert str(e.value) == ("per_source_batches with buckets or a token budget: a batch is made from every source; make "
                            "each batch from one source without them, or group without per_source_batches")


def test_bench_reports_each_bucket_it_made(data):
    import json

    bucket_of = bucket_table(data / "wds")
    r = subprocess.run([tool("SHARDPACK_CLI"), "bench", str(data / "wds"), "--buckets", SPEC, "--batch", "4", "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    sizes = [bucket_of.count(k) for k in range(len(BUCKETS))]
    assert [(b["width"], b["height"], b["images"], b["batches"]) for b in got["buckets"]] == [
        (w, h, n, math.ceil(n / 4)) for (w, h), n in zip(BUCKETS, sizes)]
    assert got["pixels"] == sum(n * w * h for (w, h), n in zip(BUCKETS, sizes))
    for b in got["buckets"]:
        if b["images"]:
            assert b["fill_seconds"] > 0
            assert b["pixels_per_s"] == pytest.approx(b["images_per_s"] * b["width"] * b["height"])
    text = subprocess.run([tool("SHARDPACK_CLI"), "bench", str(data / "wds"), "--buckets", SPEC, "--batch", "4"],
                          capture_output=True, text=True, check=True).stdout
    lines = [line.split()[0] for line in text.splitlines() if line.startswith("  ")]
    assert lines == [f"{w}x{h}" for (w, h), n in zip(BUCKETS, sizes) if n]


# --- native resolution under a token budget ---

def patched_size(w, h, max_side, patch):
    """docs/buckets.md: never enlarged, the longer side at most max_side (the shorter scaled in whole
    numbers, rounded down), each side then rounded down to a multiple of patch, at least one."""
    longer = max(w, h)
    target = min(longer, max_side)
    return tuple(max(patch, side * target // longer // patch * patch) for side in (w, h))


def reference_packing(order, tokens, budget, open_most=8):
    """docs/buckets.md's first-fit over at most 8 open batches, oldest first."""
    open_batches, out = [], []
    for i in order:
        fit = next((b for b in open_batches if b[0] + tokens[i] <= budget), None)
        if fit is None:
            fit = [0, []]
            open_batches.append(fit)
        fit[0] += tokens[i]
        fit[1].append(i)
        if fit[0] == budget:
            open_batches.remove(fit)
            out.append(fit[1])
        elif len(open_batches) > open_most:
            out.append(open_batches.pop(0)[1])
    return out + [b[1] for b in open_batches]


def patched_batches(loader, epoch=None, limit=None):
    if epoch is not None:
        loader.set_epoch(epoch)
    out = []
    for patches, labels, sizes, offsets, *asked in loader:  # then sources (a mixture), fields
        out.append(([tuple(s) for s in sizes.tolist()], offsets.tolist(), tuple(patches.shape)))
        if limit is not None and len(out) == limit:
            break
    return out


@pytest.mark.parametrize("world", [1, 2, 3])
def test_budget_batches_follow_the_documented_packing(data, world):
    import shardpack

    patch, max_side, budget = 16, 128, 160
    sizes = [patched_size(w, h, max_side, patch) for w, h in shown_sizes(data / "wds")]
    tokens = [(w // patch) * (h // patch) for w, h in sizes]
    options = dict(path=str(data / "wds"), seed=9, batch_size=4)
    for epoch in range(3):
        batches = reference_packing(epoch_order(epoch, **options), tokens, budget)
        assert sorted(i for b in batches for i in b) == list(range(len(tokens)))
        for rank in range(world):
            loader = shardpack.Loader(**options, world_size=world, rank=rank, patch=patch, max_side=max_side,
                                      tokens_per_batch=budget)
            want = []
            for _, idx in rank_share([(0, b) for b in batches], "partial", rank, world):
                offsets = [0]
                for i in idx:
                    offsets.append(offsets[-1] + tokens[i])
                assert offsets[-1] <= budget
                want.append(([(sizes[i][1], sizes[i][0]) for i in idx], offsets, (offsets[-1], patch, patch, 3)))
            assert len(loader) == len(want)
            assert patched_batches(loader, epoch) == want, (epoch, rank)


def test_budget_patches_are_the_image_resized_to_its_patched_size(data):
    import shardpack

    patch, max_side = 16, 96
    ds = shardpack.open(str(data / "wds"))
    loader = shardpack.Loader(str(data / "wds"), patch=patch, max_side=max_side, tokens_per_batch=100,
                              transform="eval", seed=3)
    worst, seen = math.inf, 0
    for batch in loader.batches():
        patches = batch.images()
        for index, (h, w), start in zip(batch.indices(), batch.sizes(), batch.token_offsets()):
            grid = patches[start:start + (h // patch) * (w // patch)]
            image = grid.reshape(h // patch, w // patch, patch, patch, 3).transpose(0, 2, 1, 3, 4).reshape(h, w, 3)
            worst = min(worst, psnr(image, reference_crop(ds[int(index)]["jpg"], (int(w), int(h)))))
            seen += 1
    print(f"worst PSNR {worst:.2f} dB over {seen} images")
    assert seen == len(ds)
    assert worst >= 30, worst


def test_budget_resume_mid_epoch_gives_the_rest_of_the_same_epoch(data):
    import shardpack

    options = dict(path=str(data / "lmdb"), seed=4, patch=16, max_side=128, tokens_per_batch=200, world_size=2,
                   rank=0)
    whole = patched_batches(shardpack.Loader(**options), epoch=2)
    first = shardpack.Loader(**options)
    first.set_epoch(2)
    taken = patched_batches(first, limit=3)
    resumed = shardpack.Loader(**options)
    resumed.load_state_dict(first.state_dict())
    resumed.set_epoch(2)
    assert taken + patched_batches(resumed) == whole


def test_bad_budgets_are_refused_with_the_way_out(data):
    import shardpack

    ds = str(data / "wds")
    cases = [
        (dict(patch=16, max_side=100, tokens_per_batch=100),
         "patch 16 does not divide max_side 100: give a max_side that is a multiple of the patch size, such as 96"),
        (dict(patch=16, max_side=128, tokens_per_batch=63),
         "tokens_per_batch 63 is smaller than one image of max_side 128 (64 patches of 16): raise tokens_per_batch "
         "to at least 64, or lower max_side"),
        (dict(patch=16, tokens_per_batch=64),
         "a token budget takes patch, max_side and tokens_per_batch together: give max_side too"),
        (dict(patch=16, max_side=128, tokens_per_batch=64, buckets=SPEC),
         "buckets and a token budget (patch) are two ways to make batches: give one"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as e:
            shardpack.Loader(ds, **kwargs)
        assert str(e.value) == message, kwargs


def test_a_conv_patch_embedding_equals_the_linear_one_on_the_patches(data):
    """docs/buckets.md: Conv2d(3, D, P, stride=P) on an image = its patches, flattened, times the conv's
    weight permuted to (D, P, P, 3) and flattened."""
    import torch

    import shardpack

    patch = 16
    loader = shardpack.Loader(str(data / "wds"), patch=patch, max_side=96, tokens_per_batch=100, seed=1)
    patches, _, sizes, offsets = next(iter(loader))
    conv = torch.nn.Conv2d(3, 8, patch, stride=patch, bias=False).double()
    linear = patches.flatten(1).double() @ conv.weight.permute(0, 2, 3, 1).reshape(8, -1).T
    for (h, w), start, end in zip(sizes.tolist(), offsets[:-1].tolist(), offsets[1:].tolist()):
        grid = patches[start:end].reshape(h // patch, w // patch, patch, patch, 3)
        image = grid.permute(0, 2, 1, 3, 4).reshape(h, w, 3).permute(2, 0, 1).double()
        by_conv = conv(image[None])[0].permute(1, 2, 0).reshape(-1, 8)
        assert torch.allclose(by_conv, linear[start:end])


def test_shards_of_another_tool_work_once_converted_as_the_message_says(data, tmp_path):
    """The refusal of shards without sample tables names a command: it works."""
    import io
    import tarfile

    import shardpack

    ds = shardpack.open(str(data / "wds"))
    with tarfile.open(tmp_path / "web-000000.tar", "w") as tar:  # as webdataset's writers make them
        for i in range(12):
            for name, data_bytes in ((f"s{i:03d}.jpg", ds[i]["jpg"]), (f"s{i:03d}.cls", b"%d" % ds[i]["cls"])):
                info = tarfile.TarInfo(name)
                info.size = len(data_bytes)
                tar.addfile(info, io.BytesIO(data_bytes))
    shard = str(tmp_path / "web-000000.tar")
    with pytest.raises(ValueError) as e:
        shardpack.Loader([shard], buckets=SPEC)
    # Of a "::" list, convert (which takes one shard or a folder) is not offered: it failed.
    with pytest.raises(ValueError) as listed:
        shardpack.Loader(f"{shard}::{shard}", buckets=SPEC)
    assert str(listed.value).endswith(f"and {shard}::{shard} are shards without a manifest; `shardpack convert "
                                      "FOLDER NEW --format wds`, FOLDER holding these shards, writes a dataset that "
                                      "has them")
    command = str(e.value).split("`")[1].replace("NEW", str(tmp_path / "converted")).split()
    assert command[:2] == ["shardpack", "convert"]
    subprocess.run([tool("SHARDPACK_CLI")] + command[1:], check=True, capture_output=True)
    bucket_of = bucket_table(tmp_path / "converted")  # from PIL
    loader = shardpack.Loader(str(tmp_path / "converted"), buckets=SPEC, batch_size=4, shuffle=False)
    seen = []
    for batch in loader.batches():
        assert all(bucket_of[int(i)] == batch.bucket for i in batch.indices())
        seen += [int(i) for i in batch.indices()]
    assert sorted(seen) == list(range(12))


def test_a_mixture_is_packed_to_the_budget_over_its_plan_and_resumes_elastically(data):
    import shardpack

    patch, max_side, budget = 16, 128, 160
    sizes = [patched_size(w, h, max_side, patch) for d in ("wds", "small") for w, h in shown_sizes(data / d)]
    tokens = [(w // patch) * (h // patch) for w, h in sizes]
    options = dict(sources=[(str(data / "wds"), 0.5), (str(data / "small"), 0.5)], epoch_size=110, seed=6,
                   batch_size=4)
    budgeted = dict(patch=patch, max_side=max_side, tokens_per_batch=budget)
    for epoch in range(2):
        batches = [(0, b) for b in reference_packing(epoch_order(epoch, **options), tokens, budget)]
        for rank in range(2):
            loader = shardpack.Loader(**options, **budgeted, world_size=2, rank=rank)
            got = [offsets for _, offsets, _ in patched_batches(loader, epoch)]
            want = []
            for _, idx in rank_share(batches, "partial", rank, 2):
                want.append([0])
                for i in idx:
                    want[-1].append(want[-1][-1] + tokens[i])
            assert got == want, (epoch, rank)
    # Elastic: two ranks take 2 batches each of epoch 1 (`batches`, the loop's last); three go on from 4.
    first = shardpack.Loader(**options, **budgeted, world_size=2, rank=0)
    first.set_epoch(1)
    patched_batches(first, limit=2)
    state = first.state_dict()
    assert state["epoch_batches_done"] == 4
    for rank in range(3):
        loader = shardpack.Loader(**options, **budgeted, world_size=3, rank=rank)
        loader.load_state_dict(state)
        loader.set_epoch(1)
        got = [[int(i) for i in b.indices()] for b in loader.batches()]
        assert got == [idx for _, idx in rank_share(batches, "partial", rank, 3, start=4)]


def test_doctor_measures_the_bucket_crops(data):
    import json

    r = subprocess.run([tool("SHARDPACK_CLI"), "doctor", str(data / "wds"), "--buckets", SPEC, "--seconds", "3",
                        "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "decode: each image's bucket crop only (shardpack's decode), 1 thread" in r.stderr
    assert "transform: each image's bucket crop and flip, 1 thread" in r.stderr
    report = json.loads(r.stdout)
    assert report["loader"]["images_per_s"] > 0
    bad = subprocess.run([tool("SHARDPACK_CLI"), "doctor", str(data / "wds"), "--buckets", "sdlx"],
                         capture_output=True, text=True)
    assert bad.returncode != 0
    assert bad.stderr.startswith("doctor failed: --buckets: 'sdlx' is not a preset")


NODE_RANK = """
import json, sys
import shardpack
path, cache, rank, world, spec = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
loader = shardpack.Loader(path, batch_size=4, seed=7, buckets=spec, cache_dir=cache, world_size=world, rank=rank)
epochs = []
for epoch in range(2):
    loader.set_epoch(epoch)
    epochs.append([(b.bucket, [int(i) for i in b.indices()], list(b.images().shape)) for b in loader.batches()])
print(json.dumps({"origin": loader.sample_groups_origin, "epochs": epochs}))
"""


def run_node(dataset, cache, world):
    """`world` ranks started at once, as real processes on this node, each opening the loader with
    buckets over one cache folder: what each said."""
    procs = [subprocess.Popen([sys.executable, "-c", NODE_RANK, str(dataset), str(cache), str(rank), str(world),
                               SPEC], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for rank in range(world)]
    said = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
            said.append(json.loads(out))
    finally:
        for p in procs:
            p.kill()
    return said


def test_the_ranks_of_a_node_read_the_sample_tables_once_and_share_the_table(data, tmp_path):
    """Eight ranks with a cache folder: one process reads every sample table and writes the node's
    table; the other seven map it. Every rank's batches are still the documented ones."""
    bucket_of = bucket_table(data / "wds")
    options = dict(path=str(data / "wds"), batch_size=4, seed=7)
    world = 8
    first = run_node(data / "wds", tmp_path / "cache", world)
    assert sorted(s["origin"] for s in first) == ["made"] + ["mapped"] * (world - 1)
    tables = list((tmp_path / "cache" / "sample-groups").glob("*.groups"))
    assert len(tables) == 1
    assert tables[0].read_bytes()[:len(bucket_of)] == bytes(bucket_of)  # a byte a sample, PIL's buckets
    again = run_node(data / "wds", tmp_path / "cache", world)
    assert [s["origin"] for s in again] == ["mapped"] * world
    for epoch in range(2):
        batches = reference_batches(epoch_order(epoch, **options), bucket_of, 4, "partial")
        for rank in range(world):
            want = [[k, idx, list(shape)] for k, idx, shape in expected(rank_share(batches, "partial", rank, world))]
            assert first[rank]["epochs"][epoch] == want, (epoch, rank)
            assert again[rank]["epochs"][epoch] == want, (epoch, rank)


def test_a_node_table_that_was_tampered_with_is_made_again_and_said(data, tmp_path):
    import shardpack

    options = dict(batch_size=4, seed=7, buckets=SPEC, cache_dir=str(tmp_path / "cache"))
    made = shardpack.Loader(str(data / "wds"), **options)
    assert made.sample_groups_origin == "made"
    want = loader_batches(made, 0)
    del made
    table = next((tmp_path / "cache" / "sample-groups").glob("*.groups"))
    spoilt = bytearray(table.read_bytes())
    spoilt[0] = (spoilt[0] + 1) % len(BUCKETS)  # another bucket the loader has: only the checksum tells
    table.write_bytes(bytes(spoilt))
    with pytest.warns(UserWarning, match=r"the node's table of sample groups .*\.groups does not match its "
                                         r"trailer \(changed, cut short, or for another dataset\): made again"):
        again = shardpack.Loader(str(data / "wds"), **options)
    assert again.sample_groups_origin == "made"
    assert loader_batches(again, 0) == want


def test_a_budget_reads_the_same_through_the_node_table(data, tmp_path):
    import shardpack

    options = dict(seed=9, batch_size=4, patch=16, max_side=128, tokens_per_batch=160)
    own = shardpack.Loader(str(data / "wds"), **options)
    assert own.sample_groups_origin == "read"
    want = patched_batches(own, 1)
    for origin in ("made", "mapped"):
        loader = shardpack.Loader(str(data / "wds"), **options, cache_dir=str(tmp_path / "cache"))
        assert loader.sample_groups_origin == origin
        assert patched_batches(loader, 1) == want
    # Another budget rule is another table: never the grids of the first.
    other = shardpack.Loader(str(data / "wds"), **dict(options, max_side=96), cache_dir=str(tmp_path / "cache"))
    assert other.sample_groups_origin == "made"
    assert len(list((tmp_path / "cache" / "sample-groups").glob("*.groups"))) == 2


@pytest.fixture(scope="module")
def captioned(tmp_path_factory):
    """Two datasets whose every image has a caption naming its dataset and class: "a c1 007"."""
    from PIL import Image

    root = tmp_path_factory.mktemp("captioned")
    for name, count in (("a", 30), ("b", 20)):
        rng = np.random.default_rng(len(name) + count)
        for i in range(count):
            folder = root / f"src-{name}" / f"c{i % 3}"
            folder.mkdir(parents=True, exist_ok=True)
            w, h = int(rng.integers(40, 160)), int(rng.integers(40, 160))
            Image.fromarray(smooth_image(w, h, i)).save(folder / f"{i:03d}.jpg", quality=90)
            (folder / f"{i:03d}.txt").write_text(f"{name} c{i % 3} {i:03d}")
        pack(root / f"src-{name}", root / name, "--samples-per-shard", "8")
    return root


@pytest.mark.parametrize("shape", ["size", "buckets", "budget"])
@pytest.mark.parametrize("fields", [False, True])
@pytest.mark.parametrize("mixture", [False, True])
def test_every_way_of_making_batches_yields_the_fields_and_sources_asked_for(captioned, shape, fields, mixture):
    """A token budget dropped the captions and the sources array (its branch yielded before adding
    them). Every combination yields, after the images and labels (and a budget's sizes and offsets),
    the sources with a mixture, then the fields: one entry per image, each the image's own (its
    caption names the dataset the sources entry gives, and the class its label gives)."""
    import shardpack

    names = ["a", "b"] if mixture else ["a"]
    where = dict(sources=[(str(captioned / n), 0.5) for n in names]) if mixture else dict(path=str(captioned / "a"))
    made = {"size": dict(size=32, batch_size=4), "buckets": dict(buckets=[(64, 64), (96, 48), (48, 96)], batch_size=4),
            "budget": dict(patch=16, max_side=96, tokens_per_batch=80)}[shape]
    loader = shardpack.Loader(**where, **made, seed=3, **(dict(fields=("txt",)) if fields else {}))
    seen = 0
    for batch in loader:
        base = 4 if shape == "budget" else 2
        assert len(batch) == base + mixture + fields, (shape, fields, mixture, len(batch))
        labels = batch[1].tolist()
        count = len(batch[3]) - 1 if shape == "budget" else batch[0].shape[0]
        assert len(labels) == count
        sources = batch[base].tolist() if mixture else [0] * count
        assert len(sources) == count
        if fields:
            captions = batch[-1]["txt"]
            assert len(captions) == count
            for caption, label, source in zip(captions, labels, sources):
                dataset, cls, _ = caption.split()
                assert (dataset, cls) == (names[source], f"c{label}"), (caption, label, source)
        seen += count
    assert seen >= 30


def test_bucket_sizes_map_each_batch_to_its_width_and_height(data):
    """batch.bucket indexes loader.bucket_sizes (a preset's name in any case gives its list), and each
    batch's width and height are its bucket's, as its images' shape says."""
    import shardpack

    loader = shardpack.Loader(str(data / "wds"), batch_size=4, buckets=SPEC, seed=3)
    assert loader.bucket_sizes == BUCKETS
    seen = 0
    for batch in loader.batches():
        assert loader.bucket_sizes[batch.bucket] == (batch.width, batch.height)
        assert batch.images().shape[1:3] == (batch.height, batch.width)
        seen += 1
    assert seen > 0
    assert shardpack.Loader(str(data / "wds"), batch_size=4, buckets="SDXL").bucket_sizes == \
        shardpack.Loader(str(data / "wds"), batch_size=4, buckets="sdxl").bucket_sizes
    assert shardpack.Loader(str(data / "wds"), batch_size=4).bucket_sizes == []
