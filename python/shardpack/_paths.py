"""Where a dataset is, as Python callers give it: a folder, its manifest.json (the C++ side takes it
for its folder), a URL, a shard spec, and also a list of shard files or a glob ("out/*.tar"), which
become the "::" shard list the C++ side reads (shardpack/shard_spec.h). A glob of Parquet files
("data/train-*.parquet") is one dataset, which the C++ side expands itself (formats/parquet)."""

import glob as _glob
import os as _os


def location(path):
    if isinstance(path, (list, tuple)):
        if not path:
            raise ValueError("an empty list of shards: give shard files (or a dataset folder)")
        return "::".join(_os.fspath(p) if not isinstance(p, str) else p for p in path)
    path = _os.fspath(path) if not isinstance(path, str) else path
    if path.endswith(".parquet"):
        return path
    if "://" not in path and not path.startswith("pipe:") and _glob.has_magic(path) and not _os.path.exists(path):
        matches = sorted(_glob.glob(path))
        if not matches:
            raise FileNotFoundError(f"{path} matches no file: give a dataset folder, shard files, or a pattern "
                                    "that matches them")
        return "::".join(matches)
    return path
