#!/usr/bin/env python3
"""Train a small Flax (NNX) classifier from a shardpack dataset: what a JAX user writes, two ways,
with Orbax checkpoints that hold the data iterator's state beside the model's. It runs in CI, on the
CPU, on a small dataset it writes itself (docs/jax.md):

  --pipeline native (default): shardpack.grain.Loader, shardpack's C++ decode, crop and batching;
      batches are jax.Array (N, H, W, 3) uint8 over the loader's own buffers, no copy.
  --pipeline grain: Grain's own pipeline over shardpack.grain.DataSource, decoding and cropping
      with PIL in Python: grain.MapDataset.source(...).shuffle(...).repeat().random_map(...).batch(...).

Either iterator is a grain.DatasetIterator: Orbax saves it with grain.checkpoint.CheckpointSave, and
a run that is stopped (--stop-after simulates a preemption) and started again with the same
--checkpoint folder continues with exactly the batches, and ends with exactly the weights, of a run
that was not.

    PYTHONPATH=build/release/python build/venv/bin/python examples/training/train_flax.py --steps 12
    ... --steps 12 --checkpoint build/flax-ckpt --stop-after 5    # preempted after 5 steps
    ... --steps 12 --checkpoint build/flax-ckpt                   # resumes at step 6

On your data: shardpack pack /data/train /data/train-wds (once), then --data /data/train-wds.
"""

import argparse
import hashlib
import io
import pathlib
import sys

import grain
import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp
from flax import nnx
from PIL import Image

import shardpack
import shardpack.grain


def write_dataset(out, classes=4, per_class=24, seed=0):
    """Small JPEGs whose colour depends on the class, so that the loss falls in a few steps."""
    rng = np.random.default_rng(seed)
    with shardpack.Writer(out, classes=[f"class_{c}" for c in range(classes)], pixels="jpeg", force=True) as writer:
        for i in range(per_class):
            for c in range(classes):
                h, w = (int(v) for v in rng.integers(48, 96, size=2))
                base = np.array([(c * 67 + 40 * k) % 256 for k in range(3)])
                image = np.clip(base + rng.integers(-40, 40, size=(h, w, 3)), 0, 255).astype(np.uint8)
                writer.write(image, label=f"class_{c}")


class RandomCrop(grain.transforms.RandomMap):
    """Grain's way: decode with PIL, a random square crop of at least half the shorter side, resized,
    flipped half the time; a record becomes {"image", "label"} for .batch() to stack."""

    def __init__(self, size):
        self.size = size

    def random_map(self, record, rng):
        image = Image.open(io.BytesIO(record["jpg"])).convert("RGB")
        side = int(rng.integers(min(image.size) // 2, min(image.size) + 1))
        x, y = int(rng.integers(0, image.width - side + 1)), int(rng.integers(0, image.height - side + 1))
        image = image.resize((self.size, self.size), Image.BILINEAR, box=(x, y, x + side, y + side))
        if rng.random() < 0.5:
            image = image.transpose(Image.FLIP_LEFT_RIGHT)
        return {"image": np.asarray(image), "label": np.int32(record["cls"])}


def data_iterator(args):
    if args.pipeline == "native":
        loader = shardpack.grain.Loader(args.data, batch_size=args.batch_size, size=args.size, threads=args.threads,
                                        drop_last=True, seed=0)
        return iter(loader)
    source = shardpack.grain.DataSource(args.data)
    dataset = (grain.MapDataset.source(source).shuffle(seed=0).repeat().random_map(RandomCrop(args.size), seed=0)
               .batch(args.batch_size, drop_remainder=True))
    return iter(dataset.to_iter_dataset(grain.ReadOptions(num_threads=args.threads)))


class SmallCnn(nnx.Module):
    def __init__(self, classes, rngs):
        self.conv1 = nnx.Conv(3, 16, (3, 3), rngs=rngs)
        self.conv2 = nnx.Conv(16, 32, (3, 3), rngs=rngs)
        self.head = nnx.Linear(32, classes, rngs=rngs)

    def __call__(self, x):  # x: (N, H, W, 3), as the loader gives it and nnx.Conv takes it
        x = nnx.max_pool(nnx.relu(self.conv1(x)), (2, 2), (2, 2))
        return self.head(nnx.relu(self.conv2(x)).mean(axis=(1, 2)))


MEAN = jnp.array([0.485, 0.456, 0.406]) * 255
STD = jnp.array([0.229, 0.224, 0.225]) * 255


@nnx.jit
def train_step(model, optimizer, images, labels):
    def loss_fn(model):
        x = (images.astype(jnp.float32) - MEAN) / STD  # uint8 in, scaled inside the step
        return optax.softmax_cross_entropy_with_integer_labels(model(x), labels).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="a packed dataset (default: write a small one under --work)")
    parser.add_argument("--work", default="build/train_flax")
    parser.add_argument("--pipeline", choices=("native", "grain"), default="native")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2, help="decode threads (both pipelines)")
    parser.add_argument("--checkpoint", type=pathlib.Path, help="an Orbax folder: saved every --save-every steps, "
                        "resumed from")
    parser.add_argument("--save-every", type=int, default=4)
    parser.add_argument("--stop-after", type=int, help="stop after this many steps of this run (a preemption)")
    args = parser.parse_args()

    if args.data is None:
        args.data = pathlib.Path(args.work) / "dataset"
        if not (args.data / "manifest.json").exists():
            write_dataset(args.data)

    batches = data_iterator(args)
    model = SmallCnn(len(shardpack.open(args.data).classes), nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.sgd(0.05, momentum=0.9), wrt=nnx.Param)

    manager, step = None, 0
    if args.checkpoint is not None:
        manager = ocp.CheckpointManager(args.checkpoint.resolve(), item_names=("model", "data"),
                                        options=ocp.CheckpointManagerOptions(max_to_keep=2))
        if manager.latest_step() is not None:
            step = manager.latest_step()
            restored = manager.restore(step, args=ocp.args.Composite(
                model=ocp.args.StandardRestore(nnx.state((model, optimizer))),
                data=grain.checkpoint.CheckpointRestore(batches)))
            nnx.update((model, optimizer), restored["model"])
            print(f"resumed from {args.checkpoint} at step {step}")

    def checkpoint():
        if manager is not None and manager.latest_step() != step:
            manager.save(step, args=ocp.args.Composite(model=ocp.args.StandardSave(nnx.state((model, optimizer))),
                                                       data=grain.checkpoint.CheckpointSave(batches)))

    this_run = 0
    while step < args.steps and this_run != args.stop_after:
        batch = next(batches)
        loss = train_step(model, optimizer, batch["image"], batch["label"])
        step, this_run = step + 1, this_run + 1
        print(f"step {step}: {len(batch['label'])} images, loss {float(loss):.4f}")
        if not np.isfinite(float(loss)):
            print("the loss is not finite", file=sys.stderr)
            return 1
        if step % args.save_every == 0:
            checkpoint()
    checkpoint()
    if manager is not None:
        manager.wait_until_finished()
        manager.close()
    weights = hashlib.sha256(b"".join(np.asarray(leaf).tobytes() for leaf in jax.tree.leaves(nnx.state(model))))
    print(f"weights sha256 {weights.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
