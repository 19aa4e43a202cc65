#!/usr/bin/python3
"""A few training steps of a small CNN on CPU, fed by shardpack.Loader: the drop-in replacement for a
torch DataLoader. Generates a small image tree with PIL, packs it with `python -m shardpack pack`,
then trains. Runs in CI (ctest train_example).

    PYTHONPATH=build/release/python /usr/bin/python3 scripts/train_example.py --steps 20

The change in a training script is two lines:

    # before
    dataset = torchvision.datasets.ImageFolder(root, T.Compose([T.RandomResizedCrop(224),
                                                                T.RandomHorizontalFlip(), T.ToTensor()]))
    loader = torch.utils.data.DataLoader(dataset, batch_size=256, shuffle=True, num_workers=16,
                                         pin_memory=True, drop_last=True)
    # after (once: shardpack pack root /data/packed)
    loader = shardpack.Loader("/data/packed", batch_size=256, size=224, threads=16,
                              pin_memory=True, drop_last=True)

and, since batches arrive as uint8, the scaling to [0, 1] moves after the copy to the device.
"""

import argparse
import math
import pathlib
import random
import subprocess
import sys
import time

import torch
import torch.nn as nn

import shardpack


def make_tree(root, classes=4, per_class=24, seed=0):
    """Small JPEGs whose colour depends on the class, so that the loss can fall in a few steps."""
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


class SmallCnn(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--work", default="build/train_example")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    work = pathlib.Path(args.work)
    src, packed = work / "src", work / "packed"
    if not src.exists():
        make_tree(src)
    if not (packed / "manifest.json").exists():
        subprocess.run([sys.executable, "-m", "shardpack", "pack", str(src), str(packed), "--quiet", "--force",
                        "--samples-per-shard", "32"], check=True)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = shardpack.Loader(packed, batch_size=16, size=32, threads=args.threads,
                              pin_memory=device.type == "cuda", drop_last=True, seed=0)
    classes = len(shardpack.open(packed).classes)
    model = SmallCnn(classes).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    mean = torch.tensor([0.485, 0.456, 0.406], device=device).view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device=device).view(1, 3, 1, 1) * 255

    step, epoch, start, losses = 0, 0, time.time(), []
    while step < args.steps:
        loader.set_epoch(epoch)
        for images, labels in loader:
            x = (images.to(device, non_blocking=True).float() - mean) / std
            y = labels.to(device, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            step += 1
            print(f"epoch {epoch} step {step}: loss {loss.item():.3f}")
            if step == args.steps:
                break
        epoch += 1
    stats = loader.stats()
    print(f"{step} steps in {time.time() - start:.1f} s; loader: {stats['images_per_s']:.0f} images/s, "
          f"training waited {100 * stats['consumer_wait_share']:.0f}% of the time for data")
    if not all(math.isfinite(v) for v in losses):
        print("loss is not finite", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
