#!/usr/bin/env python3
"""The GPU's appetite: ResNet-50 training images/s on synthetic input, bf16 autocast, channels_last,
batch BATCH, SGD. For scripts/device-bench.sh: shardpack must feed at least this rate.

Usage: device_resnet50.py BATCH   (prints "resnet50 ... images/s N")
"""
import sys
import time

import torch
import torchvision


def main():
    batch = int(sys.argv[1])
    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(10):
        step()
    torch.cuda.synchronize()
    steps, start = 40, time.time()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    elapsed = time.time() - start
    print(f"resnet50 bf16 channels_last batch {batch}: {steps * batch} images in {elapsed:.1f} s, images/s {steps * batch / elapsed:.1f}")


if __name__ == "__main__":
    main()
