#!/usr/bin/env python3
"""Train an image classifier from a packed dataset: the training script a PyTorch user already has,
with shardpack.Loader in place of torch's DataLoader. It runs in CI, on the CPU, on a small image
tree it generates (with one corrupt JPEG in it, as scraped datasets have), and shows the four things
a real run needs:

  1. model(images) on the loader's batches as they come: (N, 3, H, W) uint8 in torch.channels_last
     memory format, the layout a Conv2d takes, so no permute; scale to [0, 1] after the copy to
     the device (uint8 crosses the bus, 4x fewer bytes than float32).
  2. A corrupt image does not stop training: the loader leaves it out of its batch (that batch is
     one smaller, which cross-entropy takes as it is), warns once, and counts it.
  3. num_workers as you write it today: --num-workers N becomes the loader's decode threads
     (threads=N; it starts no processes). --dataloader keeps torch's DataLoader with N worker
     processes over shardpack.IterableDataset instead (slower: a copy per sample).
  4. Exact resume: the checkpoint holds the loader's state_dict beside the model's and the
     optimizer's, written atomically; rerunning with the same --checkpoint continues with exactly
     the batches an uninterrupted run would have seen (--stop-after simulates a preemption).

    PYTHONPATH=build/release/python build/venv/bin/python examples/training/train_classifier.py --steps 20
    ... --steps 20 --checkpoint build/ckpt.pt --stop-after 8    # preempted after 8 steps
    ... --steps 20 --checkpoint build/ckpt.pt                   # resumes at step 9

On your data: shardpack pack /data/train /data/train-wds (once), then --data /data/train-wds.
"""

import argparse
import os
import pathlib
import random
import subprocess
import sys
import time

import torch
import torch.nn as nn

import shardpack


def make_tree(root, classes=4, per_class=24, seed=0):
    """Small JPEGs whose colour depends on the class, so that the loss falls in a few steps; and one
    whose compressed data is damaged (its headers intact, so pack keeps it, as it would a file
    damaged in a download)."""
    from PIL import Image

    rng = random.Random(seed)
    for c in range(classes):
        folder = root / f"class_{c}"
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(per_class):
            w, h = rng.randint(48, 96), rng.randint(48, 96)
            base = [(c * 67 + 40 * k) % 256 for k in range(3)]
            img = Image.new("RGB", (w, h), tuple(base))
            px = img.load()
            for _ in range(w * h // 8):
                x, y = rng.randrange(w), rng.randrange(h)
                px[x, y] = tuple(min(255, max(0, v + rng.randint(-40, 40))) for v in base)
            img.save(folder / f"img_{i}.jpg", quality=85)
    good = (root / "class_0" / "img_0.jpg").read_bytes()
    damaged = bytearray(good)
    damaged[len(good) // 2:len(good) // 2 + 64] = b"\xff" * 64
    (root / "class_0" / "img_damaged.jpg").write_bytes(bytes(damaged))


class SmallCnn(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def save_checkpoint(path, **state):
    """Written beside and renamed over: a run killed while saving leaves the previous checkpoint."""
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="a packed dataset (default: generate and pack a small tree under --work)")
    parser.add_argument("--work", default="build/train_classifier")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--num-workers", "-j", type=int, default=2)
    parser.add_argument("--dataloader", action="store_true",
                        help="torch's DataLoader with --num-workers processes over shardpack.IterableDataset")
    parser.add_argument("--checkpoint", type=pathlib.Path, help="saved every --save-every steps; resumed from")
    parser.add_argument("--save-every", type=int, default=4)
    parser.add_argument("--stop-after", type=int, help="stop after this many steps of this run (a preemption)")
    args = parser.parse_args()
    if args.dataloader and args.checkpoint is not None:
        parser.error("--checkpoint needs shardpack.Loader: torch's DataLoader has no state_dict to resume exactly "
                     "from (leave out --dataloader)")

    if args.data is None:
        work = pathlib.Path(args.work)
        src, args.data = work / "src", work / "packed"
        if not src.exists():
            make_tree(src)
        if not (args.data / "manifest.json").exists():
            subprocess.run([sys.executable, "-m", "shardpack", "pack", str(src), str(args.data), "--quiet", "--force",
                            "--samples-per-shard", "32"], check=True)

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        # Exact resume gives the same batches; the same weights as well take cuDNN's deterministic
        # kernels (its fastest ones add in an order that varies from run to run).
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    if args.dataloader:
        dataset = shardpack.IterableDataset(args.data, size=args.size, seed=0)
        loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, num_workers=args.num_workers,
                                             pin_memory=device.type == "cuda", drop_last=True)
    else:
        loader = shardpack.Loader(args.data, batch_size=args.batch_size, size=args.size, threads=args.num_workers,
                                  pin_memory=device.type == "cuda", drop_last=True, seed=0)
    classes = len(shardpack.open(args.data).classes)
    model = SmallCnn(classes).to(device, memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    mean = torch.tensor([0.485, 0.456, 0.406], device=device).view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device=device).view(1, 3, 1, 1) * 255

    step, start_epoch = 0, 0
    if args.checkpoint is not None and args.checkpoint.exists():
        state = torch.load(args.checkpoint)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step, start_epoch = state["step"], state["loader"]["epoch"]
        loader.load_state_dict(state["loader"])  # mid-epoch: the next batch is the one after the last trained
        print(f"resumed from {args.checkpoint} at step {step} (epoch {start_epoch}, batch {state['loader']['batch']})")

    def checkpoint():
        if args.checkpoint is not None:
            save_checkpoint(args.checkpoint, model=model.state_dict(), optimizer=optimizer.state_dict(),
                            loader=loader.state_dict(), step=step)

    began, this_run = time.time(), 0
    epoch = start_epoch
    while step < args.steps:
        if hasattr(loader, "set_epoch"):
            loader.set_epoch(epoch)  # after a resume, the resumed epoch's set_epoch keeps its position
        else:
            dataset.set_epoch(epoch)
        for images, labels in loader:
            x = (images.to(device, non_blocking=True).float() - mean) / std  # (N, 3, H, W): no permute
            y = labels.to(device, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step, this_run = step + 1, this_run + 1
            print(f"epoch {epoch} step {step}: {len(labels)} images, loss {loss.item():.4f}")
            if not torch.isfinite(loss):
                print("the loss is not finite", file=sys.stderr)
                return 1
            if step % args.save_every == 0 or step == args.steps:
                checkpoint()
            if step == args.steps or this_run == args.stop_after:
                break
        if step == args.steps or this_run == args.stop_after:
            break
        epoch += 1
    if not args.dataloader:
        stats = loader.stats()
        print(f"{this_run} steps in {time.time() - began:.2f} s; loader: {stats['images_per_s']:.0f} images/s, "
              f"training waited {100 * stats['consumer_wait_share']:.0f}% of the time for data; "
              f"{stats['corrupt']} corrupt image(s) left out this epoch")
    checkpoint()
    return 0


if __name__ == "__main__":
    sys.exit(main())
