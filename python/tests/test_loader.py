"""shardpack.Loader against the C++ loader, and its promises: zero copy, exact resume, ranks,
buffers never overwritten while Python holds them."""

import subprocess

import numpy as np
import pytest
import torch

import shardpack
from conftest import tool


def run_cpp(dataset, tmp_path, batch=8, seed=3, size=24, epoch=1, first=0, rank=0, world=1):
    out = tmp_path / f"cpp-{epoch}-{first}-{rank}"
    subprocess.run([tool("SHARDPACK_DUMP_BATCHES"), str(dataset), str(out), str(batch), str(seed), str(size),
                    str(epoch), str(first), str(rank), str(world)], check=True)
    images = np.frombuffer((out.parent / (out.name + ".bin")).read_bytes(), dtype=np.uint8)
    rows = [line.split() for line in (out.parent / (out.name + ".txt")).read_text().splitlines()]
    return images.reshape(-1, size, size, 3), np.array([int(r[0]) for r in rows]), np.array([int(r[1]) for r in rows])


def collect(loader):
    images, labels = [], []
    for x, y in loader:
        images.append(x.clone())
        labels.append(y.clone())
    return torch.cat(images), torch.cat(labels)


@pytest.mark.parametrize("fmt", ["wds", "lmdb"])
def test_tensors_and_labels_equal_the_cpp_loader(fmt, wds, lmdb_dataset, tmp_path):
    dataset = wds if fmt == "wds" else lmdb_dataset
    loader = shardpack.Loader(dataset, batch_size=8, seed=3, size=24, threads=2)
    loader.set_epoch(1)
    images, labels = collect(loader)
    cpp_images, _, cpp_labels = run_cpp(dataset, tmp_path)
    assert images.dtype == torch.uint8 and labels.dtype == torch.int64
    assert tuple(images.shape) == (60, 3, 24, 24)  # the layout a model takes (the C++ loader's bytes are NHWC)
    assert np.array_equal(images.permute(0, 2, 3, 1).numpy(), cpp_images)
    assert np.array_equal(labels.numpy(), cpp_labels)
    assert len(loader) == 8


def test_images_share_memory_with_the_cpp_buffer(wds):
    loader = shardpack.Loader(wds, batch_size=8, size=24, threads=2)
    buffers = set(loader.buffer_addresses())
    assert len(buffers) == 4  # prefetch 2 + 2
    seen = set()
    for images, _ in loader:
        assert images.data_ptr() in buffers
        seen.add(images.data_ptr())
    assert len(seen) >= 2


def test_every_array_states_its_row_major_strides(wds, raw):
    # Under numpy 2 the module's arrays once had strides of 0 (python/src/numpy_arrays.h): each batch
    # read as its first pixel repeated and its labels as one label. The strides expected here are
    # worked by hand from the shapes; the values against the C++ buffer (the test above) and PIL (test_dataset).
    loader = shardpack.Loader(wds, batch_size=8, size=24, threads=2, layout="NHWC")
    lease = next(iter(loader.batches()))
    images, labels, indices = lease.images(), lease.labels(), lease.indices()
    assert images.shape == (8, 24, 24, 3) and images.strides == (24 * 24 * 3, 24 * 3, 3, 1)
    assert labels.strides == (8,) and indices.strides == (8,) and lease.sources().strides == (8,)
    assert np.unique(images).size > 1 and np.unique(labels).size > 1  # not one value repeated
    sample = shardpack.open(raw)[0]
    h, w, _ = sample["npy"].shape
    assert sample["npy"].strides == (w * 3, 3, 1)


def test_the_layouts_are_views_or_the_transpose_of_one_buffer(wds):
    def first(layout):
        loader = shardpack.Loader(wds, batch_size=4, size=16, shuffle=False, transform="eval", layout=layout)
        buffers = set(loader.buffer_addresses())
        images = next(iter(loader))[0]
        return images.clone(), images.data_ptr() in buffers, images
    nhwc, nhwc_in_buffer, _ = first("NHWC")
    default, default_in_buffer, view = first("channels_last")
    nchw, _, _ = first("NCHW")
    assert tuple(nhwc.shape) == (4, 16, 16, 3) and tuple(default.shape) == tuple(nchw.shape) == (4, 3, 16, 16)
    assert torch.equal(nchw, nhwc.permute(0, 3, 1, 2)) and torch.equal(default, nchw)
    # The default is the loader's buffer itself (no copy), in the memory format Conv2d takes fastest.
    assert nhwc_in_buffer and default_in_buffer
    assert view.is_contiguous(memory_format=torch.channels_last)
    conv = torch.nn.Conv2d(3, 8, 3)
    assert tuple(conv(view.float()).shape) == (4, 8, 14, 14)  # model(images), no permute
    assert tuple(shardpack.Loader(wds, batch_size=4, size=16).__iter__().__next__()[0].shape) == (4, 3, 16, 16)


def test_resume_via_state_dict_equals_an_uninterrupted_run(wds):
    full = shardpack.Loader(wds, batch_size=8, seed=5, size=24, threads=2)
    full.set_epoch(2)
    expected = [(x.clone(), y.clone()) for x, y in full]
    first = shardpack.Loader(wds, batch_size=8, seed=5, size=24, threads=2)
    first.set_epoch(2)
    it = iter(first)
    head = [tuple(t.clone() for t in next(it)) for _ in range(3)]
    state = first.state_dict()
    assert state["epoch"] == 2 and state["batch"] == 3
    second = shardpack.Loader(wds, batch_size=8, seed=5, size=24, threads=2)
    second.load_state_dict(state)
    tail = [(x.clone(), y.clone()) for x, y in second]
    got = head + tail
    assert len(got) == len(expected) == 8
    for (a, b), (c, d) in zip(got, expected):
        assert torch.equal(a, c) and torch.equal(b, d)
    with pytest.raises(ValueError, match="state_dict has seed=5 but this loader has 6"):
        shardpack.Loader(wds, batch_size=8, seed=6, size=24).load_state_dict(state)


def test_a_state_from_the_earlier_order_is_refused_mid_epoch(wds):
    # A state written before the order of version 2 has no "order": mid-epoch under the global shuffle
    # its batch numbers name other samples now; at the epoch's start, or under the streaming shuffle
    # (whose order did not change), it resumes.
    loader = shardpack.Loader(wds, batch_size=8, seed=5, size=24)
    it = iter(loader)
    next(it)
    state = loader.state_dict()
    assert state["order"] == 2
    old = {k: v for k, v in state.items() if k != "order"}
    with pytest.raises(ValueError, match=r"state_dict is from batch 1 of epoch 0 under the epoch order of version 1 "
                       r"\(shardpack before 2026-12\).*start this epoch again with set_epoch\(0\)"):
        shardpack.Loader(wds, batch_size=8, seed=5, size=24).load_state_dict(old)
    shardpack.Loader(wds, batch_size=8, seed=5, size=24).load_state_dict(
        dict(old, batch=0, samples_done=0, epoch_samples_done=0))
    streaming = shardpack.Loader(wds, batch_size=8, seed=5, size=24, shuffle_buffer=16)
    next(iter(streaming))
    state = {k: v for k, v in streaming.state_dict().items() if k != "order"}
    shardpack.Loader(wds, batch_size=8, seed=5, size=24, shuffle_buffer=16).load_state_dict(state)


def test_two_ranks_cover_the_epoch_exactly_once(wds, tmp_path):
    indices, batches = [], []
    for rank in (0, 1):
        loader = shardpack.Loader(wds, batch_size=7, seed=1, size=16, rank=rank, world_size=2)
        loader.set_epoch(4)
        n = 0
        for lease in loader.batches():
            indices.extend(lease.indices().tolist())
            n += 1
        batches.append(n)
        assert n == len(loader)
    assert batches[0] == batches[1]
    assert sorted(indices) == list(range(60))


def two_steps_on_four_ranks(wds):
    """Epoch 1 on 4 ranks, batch 3, stopped after 2 steps: (the sample indices read, each rank's state)."""
    seen, states = [], []
    for rank in range(4):
        loader = shardpack.Loader(wds, batch_size=3, seed=9, size=16, rank=rank, world_size=4)
        loader.set_epoch(1)
        batches = loader.batches()
        for _ in range(2):
            seen.extend(next(batches).indices().tolist())
        states.append(loader.state_dict())
        batches.close()
    return seen, states


def test_elastic_resume_on_other_ranks_sees_every_sample_once(wds):
    # A run on 4 ranks (batch 3) stops after 2 steps; its state resumes on 2 ranks (batch 6, the same
    # global batch) and on 8 ranks (batch 2, another): every sample of the epoch exactly once.
    seen, states = two_steps_on_four_ranks(wds)
    assert {s["epoch_samples_done"] for s in states} == {24} and len(set(seen)) == 24
    for world, batch in ((2, 6), (8, 2)):
        rest, counts = [], []
        for rank in range(world):
            loader = shardpack.Loader(wds, batch_size=batch, seed=9, size=16, rank=rank, world_size=world)
            loader.load_state_dict(states[rank % 4])
            n = 0
            for lease in loader.batches():
                rest.extend(lease.indices().tolist())
                n += 1
            counts.append(n)
        assert sorted(seen + rest) == list(range(60)), (world, batch)
        assert len(set(counts)) == 1, counts
    other = dict(states[0], num_workers=2, worker=0)
    with pytest.raises(ValueError, match="needs one worker per rank"):
        shardpack.Loader(wds, batch_size=6, seed=9, size=16, world_size=2).load_state_dict(other)


def test_a_state_taken_right_after_loading_one_says_where_the_loaded_state_was(wds):
    # 4 ranks x 2 batches of 3 (24 samples of the epoch); resumed on 2 ranks, whose state is taken
    # before they read a batch (a job that restarts and checkpoints at once) and resumed on 3 ranks:
    # the 36 samples left, each once, exactly as from the first state.
    seen, states = two_steps_on_four_ranks(wds)
    again = []
    for rank in range(2):
        loader = shardpack.Loader(wds, batch_size=6, seed=9, size=16, rank=rank, world_size=2)
        loader.load_state_dict(states[rank])
        again.append(loader.state_dict())
    assert [s["epoch_samples_done"] for s in again] == [24, 24]
    rest = []
    for rank in range(3):
        loader = shardpack.Loader(wds, batch_size=4, seed=9, size=16, rank=rank, world_size=3)
        loader.load_state_dict(again[rank % 2])
        for lease in loader.batches():
            rest.extend(lease.indices().tolist())
    assert sorted(seen + rest) == list(range(60))


def test_a_batch_held_by_python_is_never_overwritten(wds):
    loader = shardpack.Loader(wds, batch_size=4, size=16, prefetch=1, threads=2)
    it = iter(loader)
    kept_images, kept_labels = next(it)
    copy = kept_images.clone()
    for _ in it:
        pass
    loader.set_epoch(1)
    for _ in loader:  # a whole second epoch through the remaining buffers
        pass
    assert torch.equal(kept_images, copy)
    # Holding every buffer is an error, not a hang.
    held = []
    with pytest.raises(ValueError, match="batch buffers are still held by the consumer"):
        for images, _ in loader:
            held.append(images)
    del held, kept_images, kept_labels
    assert sum(1 for _ in loader) == len(loader)  # released: iteration works again


def test_stats_say_whether_the_loader_keeps_up(wds):
    loader = shardpack.Loader(wds, batch_size=8, size=24, threads=2)
    n = sum(x.shape[0] for x, _ in loader)
    s = loader.stats()
    assert n == 60 and s["images"] == 60 and s["batches"] == 8 and s["corrupt"] == 0
    assert s["bytes_read"] > 0 and s["images_per_s"] > 0 and 0 <= s["consumer_wait_share"] <= 1


def test_pin_memory_without_cuda_warns_and_works(wds):
    if torch.cuda.is_available():
        loader = shardpack.Loader(wds, batch_size=8, size=24, pin_memory=True)
        images, _ = next(iter(loader))
        assert images.is_pinned()
    else:
        with pytest.warns(UserWarning, match="CUDA is not available"):
            loader = shardpack.Loader(wds, batch_size=8, size=24, pin_memory=True)
        assert sum(1 for _ in loader) == 8


def test_raw_shards_of_the_output_size_pass_through(raw, tmp_path):
    loader = shardpack.Loader(raw, batch_size=10, size=32, transform="eval", shuffle=False, layout="NHWC")
    images, labels = next(iter(loader))
    first = shardpack.open(raw)[0]
    assert np.array_equal(images[0].numpy(), first["npy"])
    assert labels[0].item() == first["cls"]


def test_bad_options_and_paths_raise(wds, tmp_path):
    with pytest.raises(ValueError, match="transform must be one of"):
        shardpack.Loader(wds, transform="random")
    with pytest.raises(FileNotFoundError, match=f"^dataset folder {tmp_path}/nothing does not exist$"):
        shardpack.Loader(tmp_path / "nothing")
    with pytest.raises(FileNotFoundError, match=f"^{tmp_path}/manifest.json does not exist: .* is not a packed dataset"):
        shardpack.Loader(tmp_path)
    with pytest.raises(ValueError, match="rank 2 is not below world size 2"):
        shardpack.Loader(wds, rank=2, world_size=2)


def test_cuda_device(wds):
    import shardpack._shardpack as native

    if not native.has_cuda:
        with pytest.raises(RuntimeError, match="built without CUDA"):
            shardpack.Loader(wds, device="cuda")
        return
    available, why = native.cuda_device_available()
    if not available or not torch.cuda.is_available():
        with pytest.raises(Exception, match="no usable CUDA device"):
            shardpack.Loader(wds, device="cuda")
        return
    # On a GPU machine: the CUDA tensors equal the CPU loader's batches normalised on the CPU.
    cpu = shardpack.Loader(wds, batch_size=8, seed=4, size=24)
    gpu = shardpack.Loader(wds, batch_size=8, seed=4, size=24, device="cuda", dtype="float32")
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1) * 255
    for (x, y), (gx, gy) in zip(cpu, gpu):
        assert gx.is_cuda and gx.dtype == torch.float32 and tuple(gx.shape) == (x.shape[0], 3, 24, 24)
        expected = (x.float() - mean) / std  # the CPU batch is (N, 3, H, W) already (channels_last)
        assert torch.allclose(gx.cpu(), expected, atol=1e-4)
        assert torch.equal(gy, y)


def test_fields_arrive_with_their_own_images_over_two_ranks(tmp_path):
    """Captions and annotations (issue 16): a caption names its image, so every caption must arrive
    beside the image whose key it names; str and parsed JSON in Python, None where absent."""
    from PIL import Image

    src = tmp_path / "src"
    expected = {}
    for i in range(30):
        folder = src / f"part{i % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (20 + i % 4, 16), (i * 8, 0, 0)).save(folder / f"{i:03d}.jpg", quality=90)
        key = f"part{i % 3}_{i:03d}"
        caption = None if i % 7 == 6 else f"picture {key} — ü"
        if caption is not None:
            (folder / f"{i:03d}.txt").write_text(caption, encoding="utf-8")
        annotation = {"i": i} if i % 2 == 0 else None
        if annotation is not None:
            (folder / f"{i:03d}.json").write_text('{"i": %d}' % i)
        expected[key] = (caption, annotation)
    out = tmp_path / "out"
    subprocess.run([tool("SHARDPACK_CLI"), "pack", str(src), str(out), "--layout", "samples", "--quiet", "--no-sync",
                    "--samples-per-shard", "8"], check=True)
    seen = {}
    for rank in range(2):
        loader = shardpack.Loader(out, batch_size=4, size=8, seed=9, rank=rank, world_size=2, fields=("txt", "json"))
        loader.set_epoch(1)
        for lease in loader.batches():
            txts, jsons = lease.fields()
            assert len(txts) == len(jsons) == lease.count
            for key, txt, js in zip(lease.keys(), txts, jsons):
                seen[key] = (None if txt is None else txt.decode("utf-8"), js)
    assert set(seen) == set(expected)
    for key, (caption, annotation) in expected.items():
        assert seen[key][0] == caption, key
        assert seen[key][1] == (None if annotation is None else ('{"i": %d}' % annotation["i"]).encode()), key
    # The decoded form iteration yields: str, parsed JSON, None.
    loader = shardpack.Loader(out, batch_size=30, size=8, shuffle=False, fields=("txt", "json"))
    (_, _, fields), = list(loader)
    got = dict(zip([k for lease in loader.batches() for k in lease.keys()], zip(fields["txt"], fields["json"])))
    assert got == expected
    with pytest.raises(TypeError, match="sequence of names"):
        shardpack.Loader(out, fields="txt")


@pytest.mark.parametrize("fmt", ["wds", "lmdb", "raw"])
def test_masks_get_their_images_crop_and_flip(fmt, tmp_path):
    """Segmentation masks (issue 16): Pillow writes images whose red is x and green is y, and masks
    (mode L) holding x for even samples and y for odd ones. Bilinear resizing keeps a ramp a ramp,
    so the mask cropped by nearest neighbour must match the image's red (or green) to one level,
    pixel for pixel, whatever crop and flip the sample drew; and with captions alongside."""
    from PIL import Image

    src = tmp_path / "src"
    src.mkdir()
    for i in range(10):
        w, h = 50 + 19 * i, 40 + 13 * i
        x, y = np.meshgrid(np.arange(w, dtype=np.uint8), np.arange(h, dtype=np.uint8))
        rgb = np.stack([x, y, np.full_like(x, i)], axis=-1)
        Image.fromarray(rgb, "RGB").save(src / f"{i:02d}.png")
        Image.fromarray(x if i % 2 == 0 else y, "L").save(src / f"{i:02d}.seg.png")
        (src / f"{i:02d}.txt").write_text(f"sample {i}")
    out = tmp_path / fmt
    keep_size = ["--keep-size"] if fmt == "raw" else []  # raw: masks kept as pixels, at full size
    subprocess.run([tool("SHARDPACK_CLI"), "pack", str(src), str(out), "--layout", "samples", "--format", fmt,
                    "--quiet", "--no-sync", "--samples-per-shard", "4", *keep_size], check=True)
    flips = set()
    for epoch in range(4):
        loader = shardpack.Loader(out, batch_size=4, size=(20, 28), seed=1, mask="seg.png", fields=("txt",),
                                  layout="NHWC")
        loader.set_epoch(epoch)
        for images, labels, masks, fields in loader:
            assert masks.dtype == torch.uint8 and tuple(masks.shape) == tuple(images.shape[:3])
            for image, mask, caption in zip(images.numpy(), masks.numpy(), fields["txt"]):
                i = int(image[0, 0, 2])
                assert caption == f"sample {i}"
                reference = image[:, :, i % 2].astype(int)
                assert np.abs(mask.astype(int) - reference).max() <= 1, (epoch, i)
                if i % 2 == 0:
                    flips.add(bool(mask[0, 0] > mask[0, -1]))
    assert flips == {True, False}
    with pytest.raises(ValueError, match="CPU loader only"):
        shardpack.Loader(out, device="cuda", mask="seg.png")
