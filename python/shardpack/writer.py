"""Writing datasets from code: shardpack.Writer and shardpack.pack() (docs/writer.md).

    with shardpack.Writer("/data/pets-wds", format="wds", classes=["cat", "dog"]) as writer:
        for jpeg_bytes, name, caption in samples():
            writer.write(jpeg_bytes, label=name, fields={"txt": caption})

The dataset is the one `shardpack pack` writes (the same pipeline, checks and manifest). write()
only copies the sample into a bounded queue; checking, encoding pixels, hashing and writing run on
C++ threads without the GIL, and write() blocks while the queue is full.
"""

import json as _json
import numbers as _numbers
import warnings

from . import _shardpack

__all__ = ["Writer", "pack"]


def _field_bytes(name, value):
    """A field's bytes: bytes as they are, str as UTF-8, a dict or list as JSON, a 2-D uint8 array (a
    mask) as PNG."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (dict, list)):
        return _json.dumps(value).encode("utf-8")
    if hasattr(value, "__array_interface__"):
        return _shardpack._encode_mask_png(_uint8_array(value, f"field {name!r}", dims=(2,)))
    raise TypeError(f"field {name!r}: give bytes, str, a dict or list (JSON), or a 2-D uint8 array (a mask), "
                    f"not {type(value).__name__}")


_IMAGE_EXTENSIONS = ("jpg", "jpeg", "png", "webp", "bmp")
_WEBDATASET_NAMES = {"maxcount": "samples_per_shard", "maxsize": "shard_size"}


def _from_torch(value, what):
    """A torch tensor as a numpy array in the layout write() takes: an image (C, H, W) as torchvision
    reads it becomes (H, W, C); a float image is refused (its scale is a guess)."""
    if type(value).__module__.split(".")[0] != "torch":
        return value
    import torch

    if value.dtype != torch.uint8:
        raise ValueError(f"{what}: give a uint8 tensor, not {value.dtype} (a float image in [0, 1] as ToTensor "
                         "makes: (t * 255).round().to(torch.uint8))")
    array = value.detach().cpu().numpy()
    if array.ndim == 3 and array.shape[0] in (1, 3) and array.shape[2] not in (1, 3):
        array = array.transpose(1, 2, 0)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    return array


def _label_value(label):
    """A torch or numpy scalar as the Python number it holds."""
    if type(label).__module__.split(".")[0] == "torch" and getattr(label, "ndim", None) == 0:
        return label.item()
    return label


def _from_webdataset_dict(sample):
    """(image, key, label, fields) from a sample as webdataset's writers take it: {"__key__": ...,
    "jpg": ..., "cls": ..., "txt": ...}."""
    images = [name for name in sample if name in _IMAGE_EXTENSIONS]
    if len(images) != 1:
        raise ValueError(f"a sample dict needs one image under one of {', '.join(_IMAGE_EXTENSIONS)}; this one has "
                         f"{images or 'none'} (keys: {', '.join(map(str, sample))})")
    label = sample.get("cls")
    if isinstance(label, (bytes, str)):  # webdataset stores "cls" as its text
        text = label.decode("ascii", "replace") if isinstance(label, bytes) else label
        if not text.strip().lstrip("-").isdigit():
            raise ValueError(f"cls={label!r}: a sample's class is its integer label (or a name from classes, "
                             "given as label=)")
        label = int(text)
    fields = {name: value for name, value in sample.items()
              if name not in ("__key__", "__url__", "__local_path__", "cls") and name != images[0]}
    return sample[images[0]], sample.get("__key__"), label, fields


def _uint8_array(value, what, dims):
    import numpy as np

    array = np.asarray(value)
    if array.dtype != np.uint8 or array.ndim not in dims or (array.ndim == 3 and array.shape[2] != 3):
        raise ValueError(f"{what}: give a uint8 array of shape (height, width" + (", 3)" if 3 in dims else ")") +
                         f", not {array.dtype} of shape {array.shape}")
    return np.ascontiguousarray(array)


class Writer:
    """Writes a dataset sample by sample, as `shardpack pack` would have packed it.

    Writer(out, format="wds", *, classes=None, pixels="png", queue_samples=256, queue_bytes=64 MiB,
           part=0, parts=1, append=False, on_error="warn", **pack_options)

    out: a folder, or s3://bucket/prefix (credentials from the environment, as for the CLI).
    format: "wds", "lmdb" or "raw".
    classes: the class list; a sample's label may then be a name from it (as pack derives classes
        from folders). Without it labels are integers, or none.
    pixels: how wds and lmdb store images given as pixels: "png" (lossless) or "jpeg" (at
        jpeg_quality, default 90, 4:2:0). raw stores pixels as they are (its resize and crop apply).
    queue_samples, queue_bytes: write() blocks while this many samples or bytes wait, until half
        of them are taken (the bytes bound memory).
    part, parts: one of several writers (processes) writing one dataset; `shardpack merge OUT`
        joins the parts once all are closed. Index keys are then "wPPPPP-NNNNNNNNN".
    append: add the samples to the dataset in out as new shards after its own, as `shardpack
        append` does (docs/views.md): the pack options must be those it was packed with, its
        classes keep their labels and `classes` adds new ones after them.
    on_error: what becomes of a sample with bad data (an image that does not decode, a caption that
        is not UTF-8, a mask of another size): "warn" (skipped, listed in the summary, and a
        warning each, naming it, at close), "skip" (skipped and listed, no warning), or "raise"
        (the writer stops: a later write() or close() raises naming the sample; strict=True).
    pack_options: as `shardpack pack` takes them: prefix, shard_size (bytes), samples_per_shard,
        threads, strict, check ("header" or "decode"), max_sample_bytes, max_pixels, resize, crop,
        keep_size, compress, chunk_samples, max_side, max_side_of, jpeg_quality, lossless_as_jpeg,
        sync, force (replace the dataset in out).

    As a context manager it closes at the end of the block, or aborts when the block raises: then
    no manifest is written and the dataset does not look complete. One writer may be shared by
    threads (samples are written in the order the write() calls enter). A writer does not resume:
    a writer that stopped is run again from the start.
    """

    def __init__(self, out, format="wds", **options):
        # webdataset's ShardWriter names: maxcount= (samples a shard), maxsize= (bytes a shard).
        for theirs, ours in _WEBDATASET_NAMES.items():
            if theirs in options:
                if ours in options:
                    raise TypeError(f"give {ours}= or webdataset's {theirs}=, not both")
                options[ours] = options.pop(theirs)
        on_error = options.pop("on_error", "warn")
        if on_error not in ("warn", "skip", "raise"):
            raise ValueError(f"on_error={on_error!r}: give \"warn\", \"skip\" or \"raise\"")
        if on_error == "raise":
            if options.get("strict") is False:
                raise TypeError("on_error=\"raise\" and strict=False say opposite things: give one")
            options["strict"] = True
        self._on_error = on_error
        self.out = str(out)
        self._writer = _shardpack._Writer(self.out, dict(options, format=format))
        self.summary = None

    def write(self, image, *, key=None, label=None, fields=None, path=None):
        """Queues one sample.

        image: encoded bytes (JPEG, PNG, WebP, BMP; stored untouched), a uint8 array of shape
            (height, width, 3) RGB or (height, width) grey, or a PIL.Image.
        key: the sample's key (no '.' or '/'); None: the running index, as pack's keys. Give a key
            to every sample or to none. The writer remembers each key's 64-bit hash to refuse a
            repeat: about 40 bytes a keyed sample (4 GB at 100M); write larger datasets with index
            keys or in parts (merge checks keys across parts).
        label: an int, or a class name from `classes`; None: unlabelled.
        fields: {"txt": "a caption", "json": {...}, "seg.png": mask, ...}: each stored as a member
            of the sample (see _field_bytes for the types).
        path: recorded as the sample's source path (pack records the file's path there).

        Raises ValueError at once for a sample wrong as given (a bad key, an unknown class). A
        sample with bad data (an image that does not decode, a caption that is not UTF-8, a mask of
        another size) is skipped and listed in the summary, or with strict=True raised by a later
        write() or by close(), naming the sample.
        """
        if isinstance(image, dict):  # webdataset's form: write({"__key__": ..., "jpg": ..., "cls": ...})
            if key is not None or label is not None or fields is not None:
                raise TypeError("give a sample dict alone (its __key__, cls and fields inside it), or image= with "
                                "key=, label= and fields=")
            image, key, label, fields = _from_webdataset_dict(image)
        image = _from_torch(image, "image")
        label = _label_value(label)
        class_name = ""
        if isinstance(label, str):
            class_name, label = label, -1
        elif label is None:
            label = -1
        elif isinstance(label, bool) or not isinstance(label, _numbers.Integral):
            raise TypeError(f"label must be an int or a class name, not {type(label).__name__}")
        else:
            label = int(label)  # numpy's and torch's integers too
            if not -2**31 <= label < 2**31:
                raise ValueError(f"label {label} does not fit the 32-bit labels a dataset stores (-1 for none, "
                                 "else 0 up to the number of classes - 1)")
        items = [(str(n), _field_bytes(n, _from_torch(v, f"field {n!r}"))) for n, v in (fields or {}).items()]
        key = "" if key is None else str(key)
        path = "" if path is None else str(path)
        if isinstance(image, (bytes, bytearray, memoryview)):
            self._writer.write_bytes(bytes(image), key, label, class_name, path, items)
            return
        if hasattr(image, "mode") and hasattr(image, "convert"):  # a PIL.Image
            image = image.convert("RGB")
        if not hasattr(image, "__array_interface__"):
            raise TypeError(f"image: give encoded bytes, a uint8 array or a PIL.Image, not {type(image).__name__}")
        array = _uint8_array(image, "image", dims=(2, 3))
        if array.ndim == 2:
            import numpy as np

            array = np.repeat(array[:, :, None], 3, axis=2)
        self._writer.write_pixels(array, key, label, class_name, path, items)

    @property
    def written(self):
        """Samples written so far (accepted by write())."""
        return self._writer.written

    def close(self):
        """Writes what is queued, finishes the last shard, publishes the manifest; returns the summary
        (as `shardpack pack --json` prints it: samples, skipped, skipped_files, shards, ...)."""
        if self.summary is None:
            self.summary = self._writer.close()
            if self._on_error == "warn":
                for skip in self.summary.get("skipped_files", []):
                    warnings.warn(f"{self.out}: skipped {skip['path']}: {skip['reason']}", stacklevel=2)
        return self.summary

    def abort(self):
        """Stops without a manifest (the dataset does not look complete)."""
        self._writer.abort()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False


def pack(src, out, *, progress=None, **options):
    """Runs `shardpack pack SRC OUT` in this process and returns its summary as a dict (what
    `shardpack pack --json` prints).

    progress: None; True (a line on stderr about every 100 ms); or a callable given a dict
        (files_done, files_total, samples_packed, files_skipped, bytes_read, elapsed_seconds).
    options: as the CLI's, with underscores: format="wds", list=, layout=, shard_size= (bytes),
        samples_per_shard=, prefix=, threads=, shuffle=, seed=, keys="index"|"path", strict=,
        check=, resize=, crop=, keep_size=, compress=, max_side=, jpeg_quality=, sync=, force=,
        resume=, ...
    Raises ValueError (bad options, a missing SRC) or RuntimeError, with the CLI's message.
    """
    if progress is True:
        import sys

        def progress(p):
            total = f"/{p['files_total']}" if p["files_total"] else ""
            sys.stderr.write(f"\rpacked {p['files_done']}{total} files ({p['files_skipped']} skipped), "
                             f"{p['elapsed_seconds']:.1f} s")
            sys.stderr.flush()

        try:
            return _shardpack._pack(str(src), str(out), progress, **options)
        finally:
            sys.stderr.write("\n")
    return _shardpack._pack(str(src), str(out), progress or None, **options)
