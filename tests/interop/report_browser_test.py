"""`shardpack report` in a real browser: headless Chromium (Debian's chromium-headless-shell) opens
the pages and the test reads their DOM back.

Reports of: a tree of ImageNet-like sizes (wds, verified); a dataset packed under --max-side
(histograms before and after it); a tree with an empty class, a thin one and inputs pack skips; the
same small dataset as wds, lmdb and raw and as a view; and a dataset at a URL, served by nginx on
127.0.0.1. For each: the page rendered (data-rendered="ok") with no console message at all; each
chart has one bar per bin of the JSON with its count and the axis labels; the summary figures
equal `stat --json`'s; the histograms equal a computation from PIL's sizes of the images and
tarfile's spans of the samples; the class lists, skipped inputs and thumbnails are the ones the
data has. Screenshots stay in WORK/screenshots (CI keeps them under build/).

usage: report_browser_test.py SHARDPACK MAKE_IMAGE_TREE WORK [--dataset WDS_FOLDER]

With --dataset, only that packed wds dataset is reported and checked as the first case above
(scripts/bench-report.sh --medium runs it on the benchmarks' medium tree).
"""

import base64
import html.parser
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tarfile

from PIL import Image

from checks import Checks, fresh_folder, pack_every_format, start_nginx, stop_process

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from log_histogram_reference import log_histogram  # noqa: E402

SHARDPACK, MAKE_TREE, WORK = sys.argv[1:4]
DATASET = sys.argv[5] if len(sys.argv) == 6 and sys.argv[4] == "--dataset" else None
CHROMIUM = shutil.which("chromium-headless-shell") or "/usr/lib/chromium/chromium-headless-shell"
checks = Checks("report_browser")
check = checks.check


def run(*args):
    return subprocess.run([SHARDPACK, *args], capture_output=True, text=True, timeout=300)


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, dict(attrs), parent, [], []

    def all(self):
        yield self
        for c in self.children:
            yield from c.all()

    def find(self, pred):
        return [n for n in self.all() if pred(n)]

    def content(self):
        return "".join(self.text) + "".join(c.content() for c in self.children)

    def classes(self):
        return self.attrs.get("class", "").split()


class DomParser(html.parser.HTMLParser):
    """The DOM Chromium dumped, as a tree (void elements closed at once)."""
    VOID = {"meta", "img", "br", "hr", "input", "link"}

    def __init__(self):
        super().__init__()
        self.root = Node("#root", {}, None)
        self.at = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.at)
        self.at.children.append(node)
        if tag not in self.VOID:
            self.at = node

    def handle_endtag(self, tag):
        n = self.at
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.at = n.parent

    def handle_data(self, data):
        self.at.text.append(data)


def render(page, name):
    """Opens `page` in headless Chromium: its DOM after the scripts ran, the console lines it logged,
    and a screenshot in WORK/screenshots/NAME.png."""
    base = [CHROMIUM, "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files", "--enable-logging=stderr",
            "--v=0", f"--user-data-dir={WORK}/chromium-profile"]
    url = "file://" + os.path.abspath(page)
    os.makedirs(f"{WORK}/screenshots", exist_ok=True)
    shot = f"{WORK}/screenshots/{name}.png"
    # One run does both: the screenshot, and the DOM on stdout.
    r = subprocess.run(base + [f"--screenshot={shot}", "--window-size=1200,2400", "--hide-scrollbars", "--dump-dom",
                               url], capture_output=True, text=True, timeout=120)
    console = [line for line in r.stderr.splitlines() if ":CONSOLE" in line]
    check(os.path.exists(shot) and Image.open(shot).size == (1200, 2400), f"{name}: no screenshot {shot}")
    parser = DomParser()
    parser.feed(r.stdout)
    return parser.root, console


def table_rows(dom, id_):
    """The text of each cell of each row of the table with id `id_`, its header row left out."""
    return [[td.content() for td in tr.find(lambda n: n.tag == "td")]
            for tr in dom.find(lambda n: n.tag == "tr" and n.parent.attrs.get("id") == id_)][1:]


def chart(dom, name):
    figs = dom.find(lambda n: n.tag == "figure" and n.attrs.get("data-chart") == name)
    return figs[0] if len(figs) == 1 else None


def check_chart(dom, what, name, counts, x_label, y_label):
    fig = chart(dom, name)
    if fig is None:
        check(False, f"{what}: no chart {name}")
        return
    bars = fig.find(lambda n: n.tag == "rect" and "bar" in n.classes())
    check([int(b.attrs["data-count"]) for b in bars] == counts,
          f"{what}: chart {name} has bars {[b.attrs.get('data-count') for b in bars]}, the JSON {counts}")
    labels = {c: [n.content() for n in fig.find(lambda n: n.tag == "text" and "axis-label" in n.classes()
                                                and c in n.classes())] for c in ("x", "y")}
    check(labels == {"x": [x_label], "y": [y_label]}, f"{what}: chart {name} axis labels {labels}")
    ticks = ["".join(n.text) for n in fig.find(lambda n: n.tag == "text" and "tick" in n.classes() and "x" in n.classes())]
    check(all(a != b for a, b in zip(ticks, ticks[1:])), f"{what}: chart {name} repeats an x tick: {ticks}")
    return fig


def short(name):
    """A class name as a tick: at most 18 characters, a longer one cut to 17 and an ellipsis."""
    return name if len(name) <= 18 else name[:17] + "\u2026"


def check_page(what, page, stat, has_verify=False):
    """The page at `page` against `stat` (stat --json of the same dataset); returns its DOM."""
    dom, console = render(page, what)
    body = dom.find(lambda n: n.tag == "body")[0]
    check(body.attrs.get("data-rendered") == "ok", f"{what}: not rendered: {body.attrs}")
    check(console == [], f"{what}: console messages {console}")
    data = json.loads(dom.find(lambda n: n.attrs.get("id") == "report-data")[0].content())
    check(data["stat"] == stat, f"{what}: the page's stat differs from stat --json")
    figures = {n.attrs["data-figure"]: n for n in dom.find(lambda n: n.tag == "tr" and "data-figure" in n.attrs)}
    # A view's bytes are its samples'; the base shards it reads are a row of their own.
    own_bytes = stat["sample_bytes_total"] if "view" in stat else stat["bytes"]
    if "view" in stat:
        cell = figures["base_bytes"].find(lambda n: n.tag == "td")[0] if "base_bytes" in figures else None
        check(cell is not None and cell.attrs.get("data-value") == str(stat["bytes"]), f"{what}: base_bytes row")
    for key, want in [("samples", stat["samples"]), ("shards", stat["shards"]), ("bytes", own_bytes),
                      ("skipped", stat["skipped"]), ("classes", len(stat["classes"])),
                      ("unlabelled", stat["unlabelled"]), ("reencoded", stat["reencoded"])]:
        cell = figures[key].find(lambda n: n.tag == "td")[0] if key in figures else None
        check(cell is not None and cell.attrs.get("data-value") == str(want), f"{what}: summary {key} != {want}")
        if key != "bytes" and cell is not None:
            check(cell.content().replace(",", "") == str(want), f"{what}: summary {key} shows {cell.content()!r}")
    h = stat["histograms"]
    for name, x in [("width", "width (pixels, as shown)"), ("height", "height (pixels, as shown)"),
                    ("aspect", "aspect ratio (width / height)"), ("sample_bytes", "bytes per sample (in its shard)")]:
        check_chart(dom, what, name, h[name]["counts"], x, "samples")
    check_chart(dom, what, "shard_bytes", h["shard_bytes"]["counts"], "bytes per shard", "shards")
    check_chart(dom, what, "shard_samples", h["shard_samples"]["counts"], "samples per shard", "shards")
    if stat["classes"]:
        ranked = sorted(stat["classes"], key=lambda c: (-c["samples"], c["label"]))
        named = len(ranked) <= 40
        fig = check_chart(dom, what, "classes", [c["samples"] for c in ranked],
                          "classes, most samples first" if named else "classes, most samples first (rank)", "samples")
        if fig is not None and named:
            # Each bar named: the tick's own text, and the whole name in its <title>.
            ticks = [("".join(n.text), [t.content() for t in n.children if t.tag == "title"])
                     for n in fig.find(lambda n: n.tag == "text" and "tick" in n.classes() and "x" in n.classes())]
            check(ticks == [(short(c["name"]), [c["name"]]) for c in ranked], f"{what}: class ticks {ticks[:5]}")
        rows = table_rows(dom, "largest-classes")
        check(rows == [[c["name"], str(c["label"]), f"{c['samples']:,}"] for c in ranked[:10]],
              f"{what}: largest classes {rows}")
    before = chart(dom, "original_width") is not None
    check(before == (stat["reencoded"] > 0), f"{what}: before-pack charts shown: {before}")
    result = dom.find(lambda n: n.attrs.get("id") == "verify-result")[0].content()
    check(result.startswith("verify OK: ") if has_verify else result.startswith("not verified"),
          f"{what}: verify line {result!r}")
    return dom, data


def tar_samples(folder):
    """Every sample of a wds dataset in order, through tarfile: (key, image bytes, span bytes)."""
    out = []
    for shard in sorted(f for f in os.listdir(folder) if f.endswith(".tar")):
        with tarfile.open(os.path.join(folder, shard)) as tar:
            groups = {}
            for m in tar.getmembers():
                key, ext = m.name.split(".", 1)
                end = m.offset_data + (m.size + 511) // 512 * 512
                g = groups.setdefault(key, {"start": m.offset, "end": end, "image": None})
                g["end"] = end
                if ext in ("jpg", "jpeg", "png", "webp", "bmp"):
                    g["image"] = tar.extractfile(m).read()
            out += [(k, g["image"], g["end"] - g["start"]) for k, g in groups.items()]
    return out


def check_histograms(what, stat, images, spans):
    sizes = [Image.open(io.BytesIO(b)).size for b in images]
    h = stat["histograms"]
    check(h["width"] == log_histogram([w for w, _ in sizes], 4), f"{what}: width histogram")
    check(h["height"] == log_histogram([ht for _, ht in sizes], 4), f"{what}: height histogram")
    check(h["aspect"] == log_histogram([w / ht for w, ht in sizes], 8), f"{what}: aspect histogram")
    check(h["sample_bytes"] == log_histogram(spans, 4), f"{what}: sample_bytes histogram")


def check_thumbnails(what, dom, data, samples):
    """Each thumbnail: the sample at its index (tarfile's order), its centre square as PIL cuts it."""
    imgs = dom.find(lambda n: n.tag == "img" and n.attrs.get("src", "").startswith("data:image/jpeg;base64,"))
    check(len(imgs) == min(24, len(samples)) == len(data["thumbnails"]), f"{what}: {len(imgs)} thumbnails")
    indices = [t["index"] for t in data["thumbnails"]]
    check(indices == sorted(set(indices)) and all(0 <= i < len(samples) for i in indices), f"{what}: {indices}")
    for t, img in zip(data["thumbnails"], imgs):
        key, image, _ = samples[t["index"]]
        check(t["key"] == key and img.attrs.get("alt") == key, f"{what}: thumbnail {t['index']} is {t['key']}, not {key}")
        thumb = Image.open(io.BytesIO(base64.b64decode(img.attrs["src"].split(",", 1)[1]))).convert("RGB")
        src = Image.open(io.BytesIO(image)).convert("RGB")
        check(thumb.size == (96, 96) and (t["width"], t["height"]) == src.size, f"{what}: thumbnail sizes")
        s = 96 / min(src.size)
        w, h = max(96, round(src.width * s)), max(96, round(src.height * s))
        ref = src.resize((w, h), Image.BILINEAR).crop(((w - 96) // 2, (h - 96) // 2, (w - 96) // 2 + 96,
                                                       (h - 96) // 2 + 96))
        diff = sum(abs(a - b) for p, q in zip(thumb.getdata(), ref.getdata()) for a, b in zip(p, q)) / (96 * 96 * 3)
        check(diff < 16, f"{what}: thumbnail of {key} differs from PIL's centre square by {diff:.1f} a channel")


def stat_json(location):
    r = run("stat", location, "--json")
    check(r.returncode == 0, f"stat {location}: {r.stderr}")
    return json.loads(r.stdout) if r.returncode == 0 else {}


def report(location, page, *flags):
    r = run("report", location, "-o", page, *flags)
    check(r.returncode == 0 and r.stdout.startswith(f"report {page}: "), f"report {location}: {r.stdout} {r.stderr}")


def packed_wds(out, page):
    """A wds dataset's report, verified, against stat --json, PIL and tarfile; returns (stat, dom, data)."""
    stat = stat_json(out)
    report(out, page, "--verify")
    dom, data = check_page(os.path.basename(page)[:-5], page, stat, has_verify=True)
    samples = tar_samples(out)
    check_histograms(out, stat, [s[1] for s in samples], [s[2] for s in samples])
    check(stat["sample_bytes_total"] == sum(s[2] for s in samples), f"{out}: sample_bytes_total")
    check_thumbnails(out, dom, data, samples)
    return stat, dom, data


def tree_and_pack(src, out, tree_args, pack_args):
    """make_image_tree SRC with `tree_args`, then pack it into OUT with `pack_args`."""
    subprocess.run([MAKE_TREE, src, *tree_args], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([SHARDPACK, "pack", src, out, "--no-sync", "--quiet", *pack_args], check=True,
                   stdout=subprocess.DEVNULL)


def medium_tree():
    """ImageNet-like sizes, 10 classes, verified; report --json equals the page's data."""
    src, out, page = f"{WORK}/medium-src", f"{WORK}/medium", f"{WORK}/medium.html"
    tree_and_pack(src, out, ["--classes", "10", "--images", "200", "--png-every", "10"], ["--samples-per-shard", "30"])
    stat, dom, data = packed_wds(out, page)
    r = run("report", out, "--json", "--verify")
    check(r.returncode == 0 and json.loads(r.stdout) == data, "medium: report --json is not the page's data")
    # 200 samples in shards of 30: six of 30 and one of 20. Odd: under half or over twice the median
    # (upper median) shard's bytes, or else samples.
    counts = [30] * 6 + [20]
    check(stat["histograms"]["shard_samples"] == log_histogram(counts, 4), "medium: shard_samples")
    sizes = [os.path.getsize(f"{out}/shard-{i:06d}.tar") for i in range(7)]
    check(stat["histograms"]["shard_bytes"] == log_histogram(sizes, 4), "medium: shard_bytes")
    med, med_n = sorted(sizes)[3], sorted(counts)[3]
    # The last shard holds what was left: only too large is odd for it.
    odd = [i for i in range(7) if (2 * sizes[i] < med and i != 6) or sizes[i] > 2 * med
           or (2 * counts[i] < med_n and i != 6) or counts[i] > 2 * med_n]
    check([o["index"] for o in stat["odd_shards"]] == odd and stat["odd_shard_count"] == len(odd),
          f"medium: odd shards {stat['odd_shards']}, computed {odd}")
    rows = table_rows(dom, "odd-shards")
    check([r[1] for r in rows] == [f"shard-{i:06d}.tar" for i in odd], f"medium: odd shard rows {rows}")
    # stat --html writes the same page (without verify) and prints what stat prints.
    r = run("stat", out, "--html", f"{WORK}/medium-stat.html")
    check(r.returncode == 0 and r.stdout == run("stat", out).stdout, f"stat --html: {r.stderr}")
    check_page("medium-stat", f"{WORK}/medium-stat.html", stat)


def bounded():
    src, out, page = f"{WORK}/bounded-src", f"{WORK}/bounded", f"{WORK}/bounded.html"
    tree_and_pack(src, out, ["--classes", "2", "--images", "20", "--png-every", "0"], ["--max-side", "128"])
    stat = stat_json(out)
    report(out, page)
    dom, _ = check_page("bounded", page, stat)
    # An existing page is kept unless --force.
    before = open(page, "rb").read()
    r = run("report", out, "-o", page)
    check(r.returncode == 1 and r.stderr == f"report failed: {page} exists: give --force to replace it, or -o another "
          "file\n" and open(page, "rb").read() == before, f"report over an existing page: {r.returncode} {r.stderr!r}")
    r = run("report", out, "-o", page, "--force")
    check(r.returncode == 0 and r.stdout.startswith(f"report {page}: "), f"report --force: {r.stderr!r}")
    originals = [Image.open(os.path.join(src, c, f)).size for c in sorted(os.listdir(src))
                 for f in sorted(os.listdir(os.path.join(src, c)))]
    h = stat["histograms"]
    check(stat["reencoded"] == 20, f"bounded: {stat['reencoded']} re-encoded")
    check(h["original_width"] == log_histogram([w for w, _ in originals], 4), "bounded: original_width")
    check(h["original_height"] == log_histogram([ht for _, ht in originals], 4), "bounded: original_height")
    check_chart(dom, "bounded", "original_width", h["original_width"]["counts"], "width before pack (pixels)",
                "samples")
    samples = tar_samples(out)
    check_histograms("bounded", stat, [s[1] for s in samples], [s[2] for s in samples])
    check(max(max(Image.open(io.BytesIO(s[1])).size) for s in samples) <= 128, "bounded: a side over 128")


def empty_thin_skipped():
    src, out, page = f"{WORK}/odd-src", f"{WORK}/odd", f"{WORK}/odd.html"
    subprocess.run([MAKE_TREE, src, "--classes", "3", "--images", "30", "--small"], check=True,
                   stdout=subprocess.DEVNULL)
    classes = sorted(os.listdir(src))
    # classes[2] keeps one image (thin: under a fifth of the median, 10); a fourth class is empty.
    for f in sorted(os.listdir(os.path.join(src, classes[2])))[1:]:
        os.remove(os.path.join(src, classes[2], f))
    os.makedirs(os.path.join(src, "zz_empty"))
    victim = sorted(os.listdir(os.path.join(src, classes[0])))[0]
    data = open(os.path.join(src, classes[0], victim), "rb").read()
    open(os.path.join(src, classes[0], victim), "wb").write(data[: len(data) // 2])  # truncated JPEG
    open(os.path.join(src, classes[1], "notes.txt"), "w").write("not an image <script>alert(1)</script>\n")
    subprocess.run([SHARDPACK, "pack", src, out, "--no-sync", "--quiet"], check=True, capture_output=True)
    stat = stat_json(out)
    report(out, page)
    dom, _ = check_page("empty-thin-skipped", page, stat)
    items = lambda id_: [li.content() for li in dom.find(lambda n: n.tag == "li" and n.parent.attrs.get("id") == id_)]
    check(items("empty-classes") == ["zz_empty"], f"empty classes listed: {items('empty-classes')}")
    check(items("thin-classes") == [classes[2]], f"thin classes listed: {items('thin-classes')}")
    rows = table_rows(dom, "skipped-files")
    check(sorted(r[0] for r in rows) == sorted([f"{classes[0]}/{victim}", f"{classes[1]}/notes.txt"]),
          f"skipped rows {rows}")
    check(rows == [[f["path"], f["reason"]] for f in stat["skipped_files"]] and all(r[1] for r in rows),
          f"skipped reasons {rows}")
    check(stat["skipped"] == 2, f"skipped count {stat['skipped']}")
    check(dom.find(lambda n: n.tag == "script" and "alert" in n.content()) == [], "a name became markup")


def formats_views_and_url():
    serve = fresh_folder(f"{WORK}/serve")
    pack_every_format(SHARDPACK, MAKE_TREE, WORK, serve)
    for name in ("wds", "lmdb", "raw"):
        stat = stat_json(f"{serve}/{name}")
        report(f"{serve}/{name}", f"{WORK}/{name}.html")
        dom, data = check_page(f"format-{name}", f"{WORK}/{name}.html", stat)
        check(len(data["thumbnails"]) == 14 and all(t["jpeg_base64"] and "error" not in t for t in data["thumbnails"]),
              f"{name}: thumbnails {[t.get('error') for t in data['thumbnails']]}")
    # A shard gone: the report still comes, its samples' thumbnails replaced by the reason.
    damaged = f"{WORK}/damaged"
    shutil.copytree(f"{serve}/wds", damaged)
    os.remove(f"{damaged}/shard-000001.tar")
    report(damaged, f"{WORK}/damaged.html")
    dom, data = check_page("damaged", f"{WORK}/damaged.html", stat_json(damaged))
    captions = [n.content() for n in dom.find(lambda n: n.tag == "figcaption" and n.parent.tag == "figure"
                                              and "thumb" in n.parent.classes())]
    lost = [c for c in captions if "not read: " in c and "shard-000001.tar" in c]
    imgs = dom.find(lambda n: n.tag == "img")
    check(len(captions) == 14 and len(lost) == 5 and len(imgs) == 9, f"damaged: {len(imgs)} images, {lost}")
    # --doctor: its stages as bars (each measured layer, then the loader) against the model's rate.
    report(f"{serve}/wds", f"{WORK}/doctor.html", "--doctor", "--doctor-seconds", "3", "--model-rate", "5000")
    dom, data = check_page("doctor", f"{WORK}/doctor.html", stat_json(f"{serve}/wds"))
    d = data["doctor"]
    layers = [round(l["images_per_s"], 6) for l in d["layers"] if l["measured"]] + [round(d["loader"]["images_per_s"], 6)]
    fig = chart(dom, "doctor")
    bars = fig.find(lambda n: n.tag == "rect" and "bar" in n.classes()) if fig else []
    check([round(float(b.attrs["data-count"]), 6) for b in bars] == layers and len(layers) >= 2,
          f"doctor: bars {[b.attrs['data-count'] for b in bars]}, the JSON {layers}")
    # A log scale (storage tens of times the loader's rate drew it a sliver), each bar's rate written.
    values = ["".join(n.text) for n in fig.find(lambda n: n.tag == "text" and "value" in n.classes())] if fig else []
    check(fig is not None and fig.attrs.get("data-scale") == "log" and values == [f"{round(v):,}" for v in layers],
          f"doctor: scale {fig.attrs.get('data-scale') if fig else None}, value labels {values}, the JSON {layers}")
    line = fig.find(lambda n: n.tag == "line" and "model-rate" in n.classes()) if fig else []
    check(len(line) == 1 and line[0].attrs["data-value"] == "5000" and d["model_rate"] == 5000,
          "doctor: no model-rate line at 5000")
    verdict = dom.find(lambda n: n.attrs.get("id") == "doctor-verdict")
    check(len(verdict) == 1 and verdict[0].content() == "verdict: " + d["verdict"] and d["verdict"],
          f"doctor: verdict {[v.content() for v in verdict]}")
    r = run("subset", f"{serve}/wds", f"{serve}/view", "--classes", sorted(os.listdir(f"{WORK}/src"))[0])
    check(r.returncode == 0, f"subset: {r.stderr}")
    stat = stat_json(f"{serve}/view")
    report(f"{serve}/view", f"{WORK}/view.html")
    dom, data = check_page("view", f"{WORK}/view.html", stat)
    # Its bytes: the spans (tarfile) of the base's samples of that class, not the base shards' sizes.
    first_class_keys = set()
    for shard in sorted(f for f in os.listdir(f"{serve}/wds") if f.endswith(".tar")):
        with tarfile.open(f"{serve}/wds/{shard}") as tar:
            for m in tar.getmembers():
                if m.name.endswith(".cls") and tar.extractfile(m).read().strip() == b"0":
                    first_class_keys.add(m.name.split(".", 1)[0])
    spans = {k: span for k, _, span in tar_samples(f"{serve}/wds")}
    check(stat["sample_bytes_total"] == sum(spans[k] for k in first_class_keys) and first_class_keys
          and stat["sample_bytes_total"] < stat["bytes"], f"view: sample_bytes_total {stat['sample_bytes_total']}")
    view_row = dom.find(lambda n: n.tag == "tr" and n.attrs.get("data-figure") == "view")
    check(len(view_row) == 1 and view_row[0].find(lambda n: n.tag == "td")[0].content() == stat["view"]["base"],
          "view: no 'view of' row")
    mixture(serve)
    nginx, base = start_nginx(WORK, serve)
    try:
        local = stat_json(f"{serve}/wds")
        report(f"{base}/wds", f"{WORK}/url.html")
        stat = stat_json(f"{base}/wds")
        check(stat == local, "stat of the URL differs from the folder's")
        dom, data = check_page("url", f"{WORK}/url.html", stat)
        check(data["report"]["dataset"] == f"{base}/wds", "url: the page names another dataset")
        check_thumbnails("url", dom, data, tar_samples(f"{serve}/wds"))
        # Only the manifest, the sample tables and the shards holding the thumbnails' samples.
        requested = {line.split('"')[1].split()[1] for line in open(f"{WORK}/access.log") if '"' in line}
        allowed = {"/wds/manifest.json"} | {f"/wds/{f}" for f in os.listdir(f"{serve}/wds")}
        check(requested <= allowed, f"url: requests beyond the dataset's files {requested - allowed}")
    finally:
        stop_process(nginx)


def quotas(sizes, weights):
    """docs/mixing.md's quotas without epoch_size: the sum of the sizes shared by weight, rounded
    down, the rest one each to the largest remainders (ties: the earlier source)."""
    rest, total = sum(sizes), sum(weights)
    exact = [rest * w / total for w in weights]
    q = [math.floor(x) for x in exact]
    for i in sorted(range(len(q)), key=lambda i: (-(exact[i] - q[i]), i))[: rest - sum(q)]:
        q[i] += 1
    return q


def mixture(serve):
    """report --source A W --source B W: the sources' table with their quotas, then each source's
    report in its own box, its figures those of the source's stat --json."""
    sources = [(f"{serve}/wds", 2), (f"{serve}/view", 1)]
    flags = [x for loc, w in sources for x in ("--source", loc, str(w))]
    report_args = ["report", *flags, "-o", f"{WORK}/mixture.html"]
    r = run(*report_args)
    check(r.returncode == 0 and r.stdout.startswith(f"report {WORK}/mixture.html: a mixture of 2 datasets, "),
          f"report of a mixture: {r.stdout} {r.stderr}")
    dom, console = render(f"{WORK}/mixture.html", "mixture")
    check(dom.find(lambda n: n.tag == "body")[0].attrs.get("data-rendered") == "ok" and console == [],
          f"mixture: not rendered cleanly: {console}")
    stats = [stat_json(loc) for loc, _ in sources]
    want = quotas([st["samples"] for st in stats], [w for _, w in sources])
    rows = table_rows(dom, "mixture")
    check(rows == [[str(i + 1), loc, str(w), str(st["samples"]), str(q)]
                   for i, ((loc, w), st, q) in enumerate(zip(sources, stats, want))], f"mixture table {rows}")
    for i, st in enumerate(stats):
        box = dom.find(lambda n: n.tag == "div" and n.attrs.get("data-source") == str(i))
        if len(box) != 1:
            check(False, f"mixture: no box for source {i}")
            continue
        check_chart(box[0], f"mixture source {i}", "width", st["histograms"]["width"]["counts"],
                    "width (pixels, as shown)", "samples")
        summary = box[0].find(lambda n: n.attrs.get("id") == f"s{i}-summary")
        check(len(summary) == 1, f"mixture: source {i} has no s{i}-summary")
        # The thumbnails' grid rule matches each source's section (an id rule matched only "thumbnails").
        grid = box[0].find(lambda n: n.tag == "div" and "grid" in n.classes() and n.parent.tag == "section"
                           and "thumbnails" in n.parent.classes() and n.parent.attrs.get("id") == f"s{i}-thumbnails")
        check(len(grid) == 1, f"mixture: source {i} has no section.thumbnails div.grid")
    style = "".join(n.content() for n in dom.find(lambda n: n.tag == "style"))
    check("section.thumbnails div.grid {" in style and "#thumbnails" not in style, "mixture: the grid rule")
    r = run("report", f"{serve}/wds", *flags)
    check(r.returncode == 1 and r.stderr == "report failed: give a DATASET, or the sources of a mixture with "
          "--source LOCATION WEIGHT (repeated)\n", f"report DATASET --source: {r.stderr!r}")


def main():
    if not os.path.exists(CHROMIUM):
        print("report_browser: chromium-headless-shell is not installed (scripts/install-deps.sh installs it)")
        return 1
    fresh_folder(WORK)
    if DATASET:
        packed_wds(DATASET, f"{WORK}/{os.path.basename(DATASET.rstrip('/'))}.html")
        return checks.finish()
    medium_tree()
    bounded()
    empty_thin_skipped()
    formats_views_and_url()
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
