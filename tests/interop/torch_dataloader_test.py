#!/usr/bin/env python3
"""PyTorch 2's own data loading around shardpack, as users write it:

- shardpack.open(...) (a map-style dataset) under torch.utils.data.DataLoader with num_workers 0 and
  2, pin_memory, persistent_workers: two epochs, each every sample once in order, the default
  collate's batches, len(loader) = ceil(samples / batch_size);
- shardpack.IterableDataset under DataLoader with num_workers 0 and 2: every sample once an epoch
  with its label, len(dataset) = the samples, len(loader) from it;
- torchdata's StatefulDataLoader over both: state_dict() after a few batches, saved with torch.save,
  and load_state_dict() in a new process: the batches after the resume are exactly an uninterrupted
  run's; over the IterableDataset through its own state (torchdata's Stateful protocol: no
  "naively fast-forwarding" of already-read samples).

usage: torch_dataloader_test.py SHARDPACK WORKDIR PYTHON_PACKAGE_DIR
"""

import collections
import math
import os
import subprocess
import sys

import numpy as np
from PIL import Image

from checks import Checks, fresh_folder

if __name__ == "__main__":
    shardpack_cli, work, python_dir = sys.argv[1:4]
    sys.path.insert(0, python_dir)
else:  # imported by the resuming process (RESUME), which put the package on its path
    work = os.environ["TORCH_TEST_WORK"]
import shardpack  # noqa: E402
import torch  # noqa: E402
from torchdata.stateful_dataloader import StatefulDataLoader  # noqa: E402

# The resume half of a StatefulDataLoader check, run in a process of its own: MODE STATE OUT.
RESUME = r"""
import sys, torch, warnings
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import torch_dataloader_test as t
mode, state_file, out = sys.argv[3:6]
loader = t.stateful(mode)
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    loader.load_state_dict(torch.load(state_file, weights_only=False))
    batches = [t.batch_ids(mode, b) for b in loader]
torch.save({"batches": batches, "warnings": [str(w.message) for w in seen]}, out)
"""

DATASET = os.path.join(work, "ds")
N = 23


def batch_ids(mode, batch):
    """A batch as comparable values: its keys (map-style) or its labels and image sums (iterable)."""
    if mode.startswith("map"):
        return list(batch["__key__"])
    images, labels = batch
    return [(int(label), int(image.sum())) for image, label in zip(images, labels)]


def stateful(mode):
    """The StatefulDataLoader of a check: "map-W" or "iterable-W" with W workers."""
    kind, workers = mode.split("-")
    if kind == "map":
        generator = torch.Generator()
        generator.manual_seed(11)
        return StatefulDataLoader(shardpack.open(DATASET), batch_size=3, shuffle=True, num_workers=int(workers),
                                  generator=generator)
    dataset = shardpack.IterableDataset(DATASET, size=16, shuffle=True, seed=4, chunk=4)
    return StatefulDataLoader(dataset, batch_size=3, num_workers=int(workers))


def main():
    fresh_folder(work)
    checks = Checks("torch dataloader test")
    check = checks.check
    rng = np.random.default_rng(3)
    tree = os.path.join(work, "tree")
    for i in range(N):
        folder = os.path.join(tree, ["ant", "bee", "cow"][i % 3])
        os.makedirs(folder, exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (20 + i, 30, 3), dtype=np.uint8)).save(
            os.path.join(folder, f"{i:03d}.jpg"), quality=90)
    r = subprocess.run([shardpack_cli, "pack", tree, DATASET, "--samples-per-shard", "5", "--no-sync", "--quiet"],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"pack: {r.stderr}")
    ds = shardpack.open(DATASET)
    keys = [ds[i]["__key__"] for i in range(len(ds))]
    label_of = {ds[i]["__key__"]: ds[i]["cls"] for i in range(len(ds))}
    check(len(ds) == N, f"{len(ds)} samples")

    # A map-style dataset: the default collate, workers, pinned memory, persistent workers.
    for workers in (0, 2):
        loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=workers, pin_memory=True,
                                             persistent_workers=workers > 0)
        check(len(loader) == math.ceil(N / 4), f"map, {workers} workers: len(loader) {len(loader)}")
        for epoch in range(2):
            seen, labels = [], []
            for batch in loader:
                check(isinstance(batch["cls"], torch.Tensor) and batch["cls"].dtype == torch.int64,
                      f"map, {workers} workers: cls collated as {type(batch['cls'])}")
                seen += batch["__key__"]
                labels += batch["cls"].tolist()
            check(seen == keys, f"map, {workers} workers, epoch {epoch}: keys {seen[:5]}...")
            check(labels == [label_of[k] for k in keys], f"map, {workers} workers, epoch {epoch}: labels")

    # The IterableDataset: each worker its share, every sample once an epoch.
    dataset = shardpack.IterableDataset(DATASET, size=16, shuffle=True, seed=2, chunk=4, return_keys=True)
    check(hasattr(dataset, "__len__") and len(dataset) == N, "len(IterableDataset): " +
          (str(len(dataset)) if hasattr(dataset, "__len__") else "none"))
    for workers in (0, 2):
        loader = torch.utils.data.DataLoader(dataset, batch_size=4, num_workers=workers, pin_memory=True,
                                             persistent_workers=workers > 0)
        check(len(loader) == math.ceil(N / 4), f"iterable, {workers} workers: len(loader) {len(loader)}")
        orders = []
        for epoch in range(2):
            dataset.set_epoch(epoch)
            seen = []
            for images, labels, batch_keys in loader:
                check(images.shape[1:] == (3, 16, 16) and images.dtype == torch.uint8,
                      f"iterable: images {tuple(images.shape)} {images.dtype}")
                for label, key in zip(labels.tolist(), batch_keys):
                    check(label == label_of[key], f"iterable: {key} labelled {label}, not {label_of[key]}")
                seen += list(batch_keys)
            check(collections.Counter(seen) == collections.Counter(keys),
                  f"iterable, {workers} workers, epoch {epoch}: {len(seen)} samples, {len(set(seen))} distinct")
            orders.append(seen)
        if workers == 0:
            check(orders[0] != orders[1], "iterable: set_epoch gives each epoch its own order")

    # StatefulDataLoader: a checkpoint mid-epoch, resumed in a new process.
    for mode in ("map-0", "map-2", "iterable-0", "iterable-2"):
        uninterrupted = [batch_ids(mode, b) for b in stateful(mode)]
        loader = stateful(mode)
        it = iter(loader)
        first = [batch_ids(mode, next(it)) for _ in range(3)]
        state_file, out = os.path.join(work, f"state-{mode}.pt"), os.path.join(work, f"resumed-{mode}.pt")
        torch.save(loader.state_dict(), state_file)
        del it, loader
        here = os.path.dirname(os.path.abspath(__file__))
        r = subprocess.run([sys.executable, "-c", RESUME, python_dir, here, mode, state_file, out],
                           capture_output=True, text=True, env=dict(os.environ, TORCH_TEST_WORK=work))
        check(r.returncode == 0, f"{mode}: the resuming process failed: {r.stderr[-2000:]}")
        if r.returncode != 0:
            continue
        resumed = torch.load(out, weights_only=False)
        check(first + resumed["batches"] == uninterrupted,
              f"{mode}: resumed batches differ:\n  {first + resumed['batches']}\n  {uninterrupted}")
        naive = [w for w in resumed["warnings"] if "fast-forward" in w]
        check(not (mode.startswith("iterable") and naive), f"{mode}: resumed by fast-forwarding: {naive}")
        print(f"StatefulDataLoader {mode}: {len(first)} batches, checkpoint, {len(resumed['batches'])} more in a new "
              f"process = the uninterrupted {len(uninterrupted)}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
