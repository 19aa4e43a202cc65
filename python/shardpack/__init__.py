"""shardpack: packed image datasets for training, read at GPU speed.

    import shardpack
    loader = shardpack.Loader("/data/imagenet-wds", batch_size=256, size=224, threads=8)
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for images, labels in loader:        # uint8 tensors, images NHWC (layout="NCHW" for NCHW)
            ...

    ds = shardpack.open("/data/imagenet-wds")  # random access: ds[i] -> {"__key__", "jpg", "cls", ...}

    with shardpack.Writer("/data/out-wds", classes=["cat", "dog"]) as writer:  # datasets from code
        writer.write(jpeg_bytes, label="dog", fields={"txt": "a dog on a sofa"})

The work happens in the C++ library (shardpack._shardpack); batches are handed over without a copy.
"""

from ._shardpack import __version__
from .dataset import Dataset, open  # noqa: A001 (shardpack.open, like webdataset's)
from .loader import Loader
from .writer import Writer, pack

__all__ = ["Dataset", "IterableDataset", "Loader", "Writer", "open", "pack", "__version__"]


def __getattr__(name):
    # torch is imported only by those who use the IterableDataset.
    if name == "IterableDataset":
        from .data import IterableDataset

        return IterableDataset
    raise AttributeError(f"module 'shardpack' has no attribute {name!r}")
