"""shardpack.open: random access to the samples of a packed dataset."""

import numbers as _numbers

from . import _paths
from . import _shardpack


class Dataset:
    """ds[i] is sample i as a WebDataset-style dict: "__key__", "cls" (the label, -1 if none), the
    image bytes under their extension ("jpg", "png", "webp", "bmp") or, for raw datasets, the
    decoded pixels as an (H, W, 3) uint8 array under "npy"; each of the sample's fields under its
    name as the file's bytes ("txt", "json", "seg.png"; a mask that a raw dataset keeps as pixels
    as an (H, W) uint8 array); and shardpack's metadata, parsed, under "json" (under "meta.json"
    when the sample has a "json" field of its own)."""

    def __init__(self, path):
        self._impl = _shardpack.Dataset(_paths.location(path))

    def __len__(self):
        """The number of samples."""
        return len(self._impl)

    def __getitem__(self, index):
        """Sample `index` (negative counts from the end); a slice gives a list of samples, as a
        list's slice would."""
        n = len(self._impl)
        if isinstance(index, slice):
            return [self._impl.read(i) for i in range(*index.indices(n))]
        if isinstance(index, bool) or not isinstance(index, _numbers.Integral):
            raise TypeError(f"dataset indices must be integers or slices, not {type(index).__name__}")
        index = int(index)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"sample {index} is out of range for a dataset of {n} samples")
        return self._impl.read(index)

    def __iter__(self):
        """Every sample in the dataset's order (read one by one: for batches, use Loader)."""
        for i in range(len(self)):
            yield self._impl.read(i)

    @property
    def format(self):
        """The dataset's format: "wds", "lmdb" or "raw"; "mds", "litdata" or "parquet" for another tool's
        dataset read in place."""
        return self._impl.format

    @property
    def classes(self):
        """The class names: label i is classes[i] (empty for an unlabelled dataset)."""
        return self._impl.classes


def open(path):  # noqa: A001
    """Opens a dataset folder (any format; or its manifest.json), Parquet files (a folder, a file, or
    a glob: "hub/data/train-*.parquet"), or WebDataset shards: a spec ("train-{000000..000127}.tar"),
    a list of shard files, or a glob ("out/*.tar")."""
    return Dataset(path)
