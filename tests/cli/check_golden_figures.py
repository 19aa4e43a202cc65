"""Checks the figures in the golden CLI files against an independent computation.

The expected files (tests/cli/cases/*.expected) were written by `run_case.sh --update`, that is by
shardpack itself. This script recomputes their figures without shardpack's code: the image tree
through PIL, the shards through Python's tarfile and os.stat, and the percentiles by the nearest-
rank rule written out below, and compares them with what the files say.

usage: check_golden_figures.py SHARDPACK MAKE_IMAGE_TREE CASES_DIR
"""

import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile

from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from log_histogram_reference import log_histogram  # noqa: E402


def nearest_rank(values, q):
    """The smallest value with at least q of all values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def summary(values):
    return {"min": min(values), "p50": nearest_rank(values, 0.5), "p90": nearest_rank(values, 0.9),
            "p99": nearest_rank(values, 0.99), "max": max(values), "mean": sum(values) / len(values)}


def kb(n):
    """shardpack prints sizes in decimal units with one decimal: 74752 -> '74.8 KB'."""
    return f"{n} B" if n < 1000 else f"{n / 1000:.1f} KB"


def stdout_of(cases, name):
    text = open(os.path.join(cases, name + ".expected")).read()
    return text.split("--- stdout\n", 1)[1].split("--- stderr\n", 1)[0]


def main():
    shardpack, make_tree, cases = sys.argv[1:4]
    failures = []

    def expect(what, got, want):
        if got != want:
            failures.append(f"{what}: the expected file says {got!r}, the independent computation {want!r}")

    with tempfile.TemporaryDirectory() as work:
        src = os.path.join(work, "src")
        # The tree every case starts from (run_case.sh).
        subprocess.run([make_tree, src, "--classes", "3", "--images", "12", "--png-every", "4", "--small"],
                       check=True, stdout=subprocess.DEVNULL)
        open(os.path.join(src, "n01440764", "notes.txt"), "w").write("not an image\n")

        # The source, through PIL: classes, formats, sizes, and what is no image.
        classes = sorted(os.listdir(src))
        per_class, formats, widths, heights, not_images, image_bytes = {}, {}, [], [], [], 0
        for c in classes:
            for f in sorted(os.listdir(os.path.join(src, c))):
                try:
                    with Image.open(os.path.join(src, c, f)) as im:
                        per_class[c] = per_class.get(c, 0) + 1
                        formats[im.format.lower()] = formats.get(im.format.lower(), 0) + 1
                        widths.append(im.width)
                        heights.append(im.height)
                    image_bytes += os.path.getsize(os.path.join(src, c, f))
                except OSError:
                    not_images.append(f"{c}/{f}")
        samples = sum(per_class.values())

        # The wds dataset of the pack case, through tarfile: each sample's span from its first
        # header to the end of its last member's padded data.
        out = os.path.join(work, "out")
        subprocess.run([shardpack, "pack", src, out, "--samples-per-shard", "5", "--no-sync", "--quiet"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shards = sorted(f for f in os.listdir(out) if f.endswith(".tar"))
        total = sum(os.path.getsize(os.path.join(out, f)) for f in shards)
        spans = []
        for shard in shards:
            with tarfile.open(os.path.join(out, shard)) as tar:
                groups = {}
                for m in tar.getmembers():
                    key = m.name.split(".", 1)[0]
                    end = m.offset_data + (m.size + 511) // 512 * 512
                    start = groups[key][0] if key in groups else m.offset
                    groups[key] = (start, end)
                spans += [end - start for start, end in groups.values()]

        expect("samples", len(spans), samples)
        expect("shards (12 samples, 5 a shard)", len(shards), math.ceil(samples / 5))

        stat = json.loads(stdout_of(cases, "stat_json"))
        expect("stat --json samples", stat["samples"], samples)
        expect("stat --json shards", stat["shards"], len(shards))
        expect("stat --json bytes", stat["bytes"], total)
        expect("stat --json skipped", stat["skipped"], len(not_images))
        expect("stat --json classes", [(c["label"], c["name"], c["samples"]) for c in stat["classes"]],
               [(i, c, per_class[c]) for i, c in enumerate(classes)])
        expect("stat --json image_formats", stat["image_formats"], formats)
        expect("stat --json width", stat["width"], summary(widths))
        expect("stat --json height", stat["height"], summary(heights))
        expect("stat --json sample_bytes", stat["sample_bytes"], summary(spans))
        expect("stat --json sample_bytes_total", stat["sample_bytes_total"], sum(spans))
        h = stat["histograms"]
        expect("stat --json width histogram", h["width"], log_histogram(widths, 4))
        expect("stat --json height histogram", h["height"], log_histogram(heights, 4))
        expect("stat --json aspect histogram", h["aspect"],
               log_histogram([w / ht for w, ht in zip(widths, heights)], 8))
        expect("stat --json sample_bytes histogram", h["sample_bytes"], log_histogram(spans, 4))
        shard_sizes = [os.path.getsize(os.path.join(out, f)) for f in shards]
        expect("stat --json shard_bytes histogram", h["shard_bytes"], log_histogram(shard_sizes, 4))
        shard_samples = [5] * (samples // 5) + ([samples % 5] if samples % 5 else [])
        expect("stat --json shard_samples histogram", h["shard_samples"], log_histogram(shard_samples, 4))
        # Odd: under half or over twice the median (the upper median of an even count) shard's bytes, then samples.
        med = sorted(shard_sizes)[len(shards) // 2]
        med_samples = sorted(shard_samples)[len(shards) // 2]
        # The last shard holds what was left when the others were full: only too large is odd for it.
        last = len(shards) - 1
        odd = [i for i in range(len(shards)) if (2 * shard_sizes[i] < med and i != last) or shard_sizes[i] > 2 * med
               or (2 * shard_samples[i] < med_samples and i != last) or shard_samples[i] > 2 * med_samples]
        expect("stat --json odd shards", [o["index"] for o in stat["odd_shards"]], odd)
        expect("stat --json skipped files", [f["path"] for f in stat["skipped_files"]], not_images)

        pack = json.loads(stdout_of(cases, "pack_json").replace('"seconds": T', '"seconds": 0'))
        expect("pack --json bytes_read (the images' sizes)", pack["bytes_read"], image_bytes)
        expect("pack --json bytes_written", pack["bytes_written"], total)
        expect("pack --json samples, shards, classes", (pack["samples"], pack["shards"], pack["classes"]),
               (samples, len(shards), len(classes)))
        expect("pack --json skipped files", [f["path"] for f in pack["skipped_files"]], not_images)

        expect("pack", stdout_of(cases, "pack").split(" in out")[0],
               f"packed {samples} samples into {len(shards)} shards ({kb(total)})")
        text = stdout_of(cases, "stat").splitlines()
        s = summary(spans)
        expect("stat samples line", text[1],
               f"samples      {samples} in {len(shards)} shards, {kb(total)}; {len(not_images)} input skipped at pack time")
        expect("stat size line", text[2], "sample size   " + "  ".join(
            f"{k} {kb(s[k])}" for k in ("min", "p50", "p90", "p99", "max")))
        w = summary(widths)
        expect("stat width line", text[3], "width         " + "  ".join(
            f"{k} {w[k]}" for k in ("min", "p50", "p90", "p99", "max")))
        # subset --classes of the first class: its images are the dataset's first samples, packed
        # 5 a shard, so they lie in the first ceil(n / 5) shards.
        fish = per_class["n01440764"]
        expect("subset --classes", stdout_of(cases, "subset_classes").strip(),
               f"view fish: {fish} of {samples} samples, from {math.ceil(fish / 5)} base shard"
               + ("" if math.ceil(fish / 5) == 1 else "s"))
        expect("verify --decode", stdout_of(cases, "verify_clean").strip(),
               f"verify OK: {len(shards)} shards, {samples} samples, {kb(total)} checked, {samples} images decoded")

        # The raw case: every sample 16 x 12 x 3 bytes after --resize 20 --crop 16x12.
        raw = os.path.join(work, "raw")
        subprocess.run([shardpack, "pack", src, raw, "--format", "raw", "--resize", "20", "--crop", "16x12",
                        "--compress", "zstd", "--chunk-samples", "4", "--no-sync", "--quiet"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        raw_bytes = sum(os.path.getsize(os.path.join(raw, f)) for f in os.listdir(raw) if f.endswith(".zst"))
        text = stdout_of(cases, "stat_raw").splitlines()
        expect("stat raw samples line", text[1],
               f"samples      {samples} in 1 shard, {kb(raw_bytes)}; {len(not_images)} input skipped at pack time")
        expect("stat raw size line", text[2], "sample size   " + "  ".join(
            f"{k} {kb(16 * 12 * 3)}" for k in ("min", "p50", "p90", "p99", "max")))

    for f in failures:
        print("FAIL:", f)
    print(f"golden figures: {len(failures)} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
