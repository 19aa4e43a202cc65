#!/usr/bin/env python3
"""ResNet-50 trained for real for SECONDS (bf16 autocast, channels_last, batch BATCH, SGD), fed by:
  synthetic   one fixed batch already on the GPU (the model's own rate: the ceiling)
  torch       PyTorch's DataLoader over the image folder DATA (PIL, RandomResizedCrop(224), flip,
              WORKERS workers, pin_memory, .cuda(non_blocking=True), normalised on the GPU)
  shardpack   shardpack.Loader over the WebDataset shards DATA, device="cuda", dtype="bfloat16"
              (decode and crop on WORKERS threads, pinned buffers, copy and normalise on the GPU)
For scripts/device-bench.sh. Each step is: take the next batch (the time spent there is time the
GPU waited for data, since the step before ended with a synchronize), then forward, backward,
optimizer step, synchronize. The first WARMUP steps are not counted (cuDNN's autotuning, workers
starting). Prints one line: "train MODE: N images in S s, images/s R, GPU waited for data W%".

Usage: device_train.py MODE DATA SECONDS BATCH WORKERS
"""
import itertools
import sys
import time

import torch
import torchvision

WARMUP = 15
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1) * 255
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1) * 255


def synthetic_batches(batch):
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=torch.bfloat16)
    y = torch.randint(0, 1000, (batch,), device="cuda")
    return itertools.repeat((x, y))


def torch_batches(src, batch, workers):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from bench_torch_baseline import folder_dataset  # the same dataset as the CPU baseline

    loader = torch.utils.data.DataLoader(folder_dataset(src, 224), batch_size=batch, shuffle=True, num_workers=workers,
                                         pin_memory=True, persistent_workers=True, prefetch_factor=4, drop_last=True)
    mean, std = MEAN.cuda(), STD.cuda()
    while True:
        for images, labels in loader:
            x = (images.cuda(non_blocking=True).float() - mean) / std
            yield x.to(torch.bfloat16), labels.cuda(non_blocking=True)


def shardpack_batches(path, batch, threads):
    import shardpack

    loader = shardpack.Loader(path, batch_size=batch, size=224, threads=threads, device="cuda", dtype="bfloat16",
                              drop_last=True)
    for epoch in itertools.count():
        loader.set_epoch(epoch)
        for images, labels in loader:
            yield images, labels.cuda(non_blocking=True)


def main():
    mode, data, seconds, batch, workers = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    batches = {"synthetic": lambda: synthetic_batches(batch), "torch": lambda: torch_batches(data, batch, workers),
               "shardpack": lambda: shardpack_batches(data, batch, workers)}[mode]()
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    images = waited = 0.0
    start = None
    for step in itertools.count():
        if step == WARMUP:
            images, waited, start = 0, 0.0, time.perf_counter()
        before = time.perf_counter()
        x, y = next(batches)
        waited += time.perf_counter() - before
        x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        images += x.shape[0]
        if start is not None and time.perf_counter() - start >= seconds:
            break
    elapsed = time.perf_counter() - start
    print(f"train {mode}: {images} images in {elapsed:.1f} s, images/s {images / elapsed:.1f}, "
          f"GPU waited for data {100 * waited / elapsed:.1f}%", flush=True)


if __name__ == "__main__":
    main()
