#include "tools/report_page.h"

namespace shardpack {
namespace {

// The page around the data. Its script reads the JSON in #report-data and builds every table and
// chart with DOM calls (textContent, never innerHTML: names in a dataset are not markup). When it
// is done, <body> gets data-rendered="ok" and data-render-ms (the drawing time), which the browser
// test and scripts/bench-report.sh read; a failure is shown on the page and logged to the console.
constexpr const char* kHead = R"PAGE(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>shardpack report</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #1d232a; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #d8dde3; }
table { border-collapse: collapse; margin: 6px 0; } th, td { text-align: left; padding: 2px 10px 2px 0; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.charts { display: flex; flex-wrap: wrap; gap: 12px 24px; }
figure.chart { margin: 0; overflow-x: auto; max-width: 100%; } figure.chart figcaption { color: #5a6570; font-size: 12px; }
div.source { border-top: 3px solid #3b7dd8; margin-top: 32px; }
rect.bar { fill: #3b7dd8; } rect.bar.odd { fill: #d8623b; } rect.bar.thin { fill: #d8a23b; }
line.axis { stroke: #5a6570; } line.model-rate { stroke: #c03030; stroke-dasharray: 6 3; stroke-width: 2; }
text { font: 11px system-ui, sans-serif; fill: #333; } text.axis-label { font-size: 12px; fill: #1d232a; }
.ok { color: #1e7d32; font-weight: 600; } .bad { color: #b3261e; font-weight: 600; } .note { color: #5a6570; }
section.thumbnails div.grid { display: flex; flex-wrap: wrap; gap: 8px; }
figure.thumb { margin: 0; width: 112px; font-size: 11px; overflow-wrap: break-word; }
figure.thumb img { display: block; border: 1px solid #d8dde3; }
</style>
</head>
<body>
<main id="report"><noscript>This report draws itself with the script inside this file: open it in a browser with scripts allowed.</noscript></main>
<script type="application/json" id="report-data">)PAGE";

constexpr const char* kScript = R"PAGE(</script>
<script>
"use strict";
(function () {
  const started = performance.now();
  const SVG = "http://www.w3.org/2000/svg";
  const main = document.getElementById("report");

  // Where sections go, and the prefix of every id: a mixture draws each source in a box of its
  // own ("s0-", "s1-", ...), so that ids stay unique.
  let root = main, prefix = "";
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, k === "id" ? prefix + attrs[k] : attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svgEl(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // 1234567 -> "1,234,567": integers as the CLI groups them.
  function group(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  // Decimal units, one decimal, as the CLI prints sizes.
  function bytes(n) {
    const units = ["B", "KB", "MB", "GB", "TB", "PB"];
    let u = 0, v = Number(n);
    while (v >= 1000 && u < units.length - 1) { v /= 1000; ++u; }
    return u === 0 ? v + " B" : v.toFixed(1) + " " + units[u];
  }
  function threeDigits(v) { return String(Number(Number(v).toPrecision(3))); }
  // An axis tick: 410000000 -> "410M", so that large counts fit beside the axis.
  function compact(v) {
    for (const [unit, size] of [["B", 1e9], ["M", 1e6], ["k", 1e3]]) {
      if (Math.abs(v) >= size) return threeDigits(v / size) + unit;
    }
    return threeDigits(v);
  }
  // A section: its id prefixed (in a mixture), its class the bare id, which the CSS matches.
  function section(id, title) {
    const s = el("section", {id: id, "class": id});
    s.appendChild(el("h2", {}, title));
    root.appendChild(s);
    return s;
  }
  function maxOf(values) { let m = 0; for (const v of values) if (v > m) m = v; return m; }

  // A bar chart: one rect.bar per entry of `bars` ({value, tip, cls}), x ticks at bar boundaries
  // (`ticks`: [{at, text, tip}], `at` in bars; opts.slanted: turned, for names), the axis labels as
  // text.axis-label.x / .y, and an optional horizontal line (`line`: {value, text}). opts.log: a
  // logarithmic y axis (rates that differ 50-fold: a linear one draws the slower as a sliver), ticks
  // at powers of ten; opts.labels: each bar's value written above it (text.value).
  function barChart(parent, name, bars, xLabel, yLabel, opts) {
    opts = opts || {};
    const n = bars.length;
    const W = Math.max(opts.width || 520, Math.min(6000, n * 3 + 90));
    const left = 70, right = 36, top = 18, bottom = opts.slanted ? 110 : 64, H = 186 + bottom;
    const plotW = W - left - right, plotH = H - top - bottom;
    const top_value = Math.max(1, maxOf(bars.map(b => b.value)), opts.line ? opts.line.value : 0);
    // Log scale: from the power of ten at or below the smallest positive value to the one above the
    // largest.
    const positive = bars.map(b => b.value).concat(opts.line ? [opts.line.value] : []).filter(v => v > 0);
    const lo = opts.log ? Math.pow(10, Math.floor(Math.log10(Math.min(...positive, top_value)))) : 0;
    const ceiling = opts.log ? Math.pow(10, Math.ceil(Math.log10(top_value))) : top_value;
    const hi = opts.log && ceiling <= lo ? lo * 10 : ceiling;
    const heightOf = v => opts.log ? (v <= lo ? 0 : Math.log10(v / lo) / Math.log10(hi / lo) * plotH)
                                   : v / top_value * plotH;
    const fig = el("figure", {"class": "chart", "data-chart": name, "data-scale": opts.log ? "log" : "linear"});
    const svg = svgEl("svg", {width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img"});
    svg.appendChild(svgEl("line", {"class": "axis", x1: left, y1: top + plotH, x2: left + plotW, y2: top + plotH}));
    svg.appendChild(svgEl("line", {"class": "axis", x1: left, y1: top, x2: left, y2: top + plotH}));
    const yTicks = [];
    if (opts.log) for (let v = lo; v <= hi * 1.0001; v *= 10) yTicks.push(v);
    else for (const f of [0, 0.5, 1]) yTicks.push(f * top_value);
    for (const v of yTicks) {
      const y = top + plotH - heightOf(v);
      svg.appendChild(svgEl("text", {"class": "tick y", x: left - 6, y: y + 4, "text-anchor": "end"},
                            compact(v)));
    }
    const step = n > 0 ? plotW / n : 0;
    bars.forEach((b, i) => {
      const h = heightOf(b.value);
      const r = svgEl("rect", {"class": "bar" + (b.cls ? " " + b.cls : ""), x: left + i * step + (step > 3 ? 1 : 0),
                               y: top + plotH - h, width: Math.max(0.5, step > 3 ? step - 2 : step), height: h,
                               "data-count": b.value});
      r.appendChild(svgEl("title", {}, b.tip));
      svg.appendChild(r);
      if (opts.labels) {
        svg.appendChild(svgEl("text", {"class": "value", x: left + (i + 0.5) * step, y: top + plotH - h - 4,
                                       "text-anchor": "middle"}, group(Math.round(b.value))));
      }
    });
    for (const t of opts.ticks || []) {
      const x = left + t.at * step, y = top + plotH + 14;
      const attrs = opts.slanted ? {"class": "tick x", x: x, y: y, "text-anchor": "end",
                                    transform: "rotate(-40 " + x + " " + y + ")"}
                                 : {"class": "tick x", x: x, y: y, "text-anchor": "middle"};
      const text = svgEl("text", attrs, t.text);
      if (t.tip) text.appendChild(svgEl("title", {}, t.tip));
      svg.appendChild(text);
    }
    if (opts.line) {
      const y = top + plotH - heightOf(opts.line.value);
      svg.appendChild(svgEl("line", {"class": "model-rate", x1: left, y1: y, x2: left + plotW, y2: y,
                                     "data-value": opts.line.value}));
      svg.appendChild(svgEl("text", {x: left + plotW, y: y - 4, "text-anchor": "end"}, opts.line.text));
    }
    svg.appendChild(svgEl("text", {"class": "axis-label x", x: left + plotW / 2, y: H - 8, "text-anchor": "middle"},
                          xLabel));
    svg.appendChild(svgEl("text", {"class": "axis-label y", x: 14, y: top + plotH / 2, "text-anchor": "middle",
                                   transform: "rotate(-90 14 " + (top + plotH / 2) + ")"}, yLabel));
    fig.appendChild(svg);
    if (opts.caption) fig.appendChild(el("figcaption", {}, opts.caption));
    parent.appendChild(fig);
    return fig;
  }

  // A LogHistogram of stat --json (docs/report.md): a bar a bin, ticks at about 8 of its edges.
  function histogram(parent, name, h, xLabel, yLabel, format) {
    const n = h.counts.length;
    const bars = h.counts.map((c, k) => ({value: c,
      tip: format(h.edges[k]) + " to " + format(h.edges[k + 1]) + ": " + group(c)}));
    const ticks = [];
    const every = Math.max(1, Math.ceil(n / 8));
    // Edges that print alike (1.2 and 1.4 pixels both "1") give one tick, not "1 1 2 3".
    for (let k = 0; k <= n; k += every) {
      const text = format(h.edges[k]);
      if (!ticks.length || ticks[ticks.length - 1].text !== text) ticks.push({at: k, text: text});
    }
    const caption = h.zero > 0 ? group(h.zero) + " without a recorded value (not drawn)" : "";
    return barChart(parent, name, bars, xLabel, yLabel, {ticks: ticks, caption: caption});
  }

  function table(parent, id, head, rows) {
    const t = el("table", {id: id});
    const hr = el("tr");
    for (const h of head) hr.appendChild(el("th", {}, h));
    t.appendChild(hr);
    for (const row of rows) {
      const tr = el("tr");
      for (const cell of row) {
        const numeric = typeof cell === "number";
        tr.appendChild(el("td", numeric ? {"class": "n", "data-value": cell} : {}, numeric ? group(cell) : cell));
      }
      t.appendChild(tr);
    }
    parent.appendChild(t);
    return t;
  }
  // At most `limit` rows drawn, with a line saying how many more the dataset has.
  function capped(parent, rows, limit, total, what) {
    if (total > Math.min(limit, rows.length)) {
      parent.appendChild(el("p", {"class": "note"}, "showing " + group(Math.min(limit, rows.length)) + " of " +
                                 group(total) + " " + what + " (all of them: shardpack stat --json)"));
    }
    return rows.slice(0, limit);
  }

  function drawSummary(data) {
    const s = data.stat;
    root.appendChild(el(prefix ? "h2" : "h1", {id: "title"}, (prefix ? "source: " : "shardpack report: ") + s.name));
    root.appendChild(el("p", {"class": "note", id: "location"},
                        data.report.dataset + " (" + s.format + "), by " + data.report.tool));
    const sec = section("summary-section", "Summary");
    // [figure, label, text, value]: value (data-value) is the number stat --json gives, text as shown.
    const rows = [["format", "format", s.format, null], ["samples", "samples", group(s.samples), s.samples],
                  ["shards", "shards", group(s.shards), s.shards], ["bytes", "bytes", bytes(s.bytes), s.bytes],
                  ["skipped", "skipped at pack time", group(s.skipped), s.skipped],
                  ["classes", "classes", group(s.classes.length), s.classes.length],
                  ["unlabelled", "unlabelled samples", group(s.unlabelled), s.unlabelled],
                  ["reencoded", "re-encoded at pack time (--max-side)", group(s.reencoded), s.reencoded]];
    if (s.view) {
      // A view's own bytes are its samples'; the base shards it reads hold the others' too.
      rows.splice(1, 0, ["view", "view of", s.view.base, null]);
      const at = rows.findIndex(r => r[0] === "bytes");
      rows.splice(at, 1, ["bytes", "bytes of its samples", bytes(s.sample_bytes_total), s.sample_bytes_total],
                  ["base_bytes", "bytes of the base shards it reads", bytes(s.bytes), s.bytes]);
    }
    const t = el("table", {id: "summary"});
    for (const [figure, label, text, value] of rows) {
      const tr = el("tr", {"data-figure": figure});
      tr.appendChild(el("th", {}, label));
      tr.appendChild(el("td", value === null ? {} : {"class": "n", "data-value": value}, text));
      t.appendChild(tr);
    }
    sec.appendChild(t);
    const p = [];
    for (const [label, key, isBytes] of [["width", "width", false], ["height", "height", false],
                                         ["sample size", "sample_bytes", true]]) {
      const q = s[key];
      const f = v => isBytes ? bytes(v) : group(v);
      p.push([label, f(q.min), f(q.p50), f(q.p90), f(q.p99), f(q.max)]);
    }
    table(sec, "percentiles", ["", "min", "p50", "p90", "p99", "max"], p);
    table(sec, "image-formats", ["image format", "samples"],
          Object.keys(s.image_formats).map(k => [k, s.image_formats[k]]));
  }

  function drawSizes(data) {
    const s = data.stat, h = s.histograms;
    const sec = section("sizes", "Image sizes");
    const charts = el("div", {"class": "charts"});
    sec.appendChild(charts);
    const px = v => group(Math.round(v));
    histogram(charts, "width", h.width, "width (pixels, as shown)", "samples", px);
    histogram(charts, "height", h.height, "height (pixels, as shown)", "samples", px);
    histogram(charts, "aspect", h.aspect, "aspect ratio (width / height)", "samples", threeDigits);
    histogram(charts, "sample_bytes", h.sample_bytes, "bytes per sample (in its shard)", "samples", bytes);
    if (s.reencoded > 0) {
      sec.appendChild(el("p", {"class": "note"}, group(s.reencoded) +
                          " images were re-encoded at pack time (--max-side); their sizes before it:"));
      const before = el("div", {"class": "charts"});
      sec.appendChild(before);
      histogram(before, "original_width", h.original_width, "width before pack (pixels)", "samples", px);
      histogram(before, "original_height", h.original_height, "height before pack (pixels)", "samples", px);
    }
  }

  function drawClasses(data) {
    const s = data.stat;
    const sec = section("classes", "Classes");
    if (s.classes.length === 0) {
      sec.appendChild(el("p", {}, "none: the dataset is unlabelled"));
      return;
    }
    const sorted = s.classes.slice().sort((a, b) => b.samples - a.samples || a.label - b.label);
    const counts = s.classes.map(c => c.samples).filter(n => n > 0).sort((a, b) => a - b);
    const median = counts.length ? counts[Math.floor(counts.length / 2)] : 0;
    const thin = sorted.filter(c => c.samples > 0 && 5 * c.samples < median);
    const empty = sorted.filter(c => c.samples === 0);
    const bars = sorted.map(c => ({value: c.samples, cls: c.samples === 0 || 5 * c.samples < median ? "thin" : "",
                                   tip: c.name + " (label " + c.label + "): " + group(c.samples)}));
    // Up to 40 classes, each bar named (a long name shortened, whole in its tooltip); more, by rank.
    const short = name => name.length > 18 ? name.slice(0, 17) + "\u2026" : name;
    const named = sorted.length <= 40;
    const ticks = named ? sorted.map((c, i) => ({at: i + 0.5, text: short(c.name), tip: c.name})) :
                  [{at: 0.5, text: "1"}, {at: sorted.length - 0.5, text: group(sorted.length)}];
    barChart(sec, "classes", bars, named ? "classes, most samples first" : "classes, most samples first (rank)",
             "samples", {ticks: ticks, slanted: named,
             caption: "median class " + group(median) + " samples; thin: under a fifth of it"});
    const few = Math.min(10, sorted.length);
    const rows = cs => cs.map(c => [c.name, String(c.label), c.samples]);
    sec.appendChild(el("h3", {}, "Largest classes (" + few + ")"));
    table(sec, "largest-classes", ["class", "label", "samples"], rows(sorted.slice(0, few)));
    if (sorted.length > few) {
      sec.appendChild(el("h3", {}, "Smallest classes (" + few + ")"));
      table(sec, "smallest-classes", ["class", "label", "samples"], rows(sorted.slice(-few).reverse()));
    }
    sec.appendChild(el("p", {}, "largest: " + sorted[0].name + " (" + group(sorted[0].samples) + "); smallest: " +
                                sorted[sorted.length - 1].name + " (" + group(sorted[sorted.length - 1].samples) + ")"));
    const list = (id, title, classes) => {
      sec.appendChild(el("h3", {}, title + " (" + group(classes.length) + ")"));
      const ul = el("ul", {id: id});
      for (const c of classes.slice(0, 200)) ul.appendChild(el("li", {"data-samples": c.samples}, c.name));
      if (classes.length > 200) ul.appendChild(el("li", {"class": "note"}, "and " + group(classes.length - 200) + " more"));
      sec.appendChild(ul);
    };
    list("empty-classes", "Empty classes", empty);
    list("thin-classes", "Thin classes", thin);
  }

  function drawShards(data) {
    const s = data.stat, h = s.histograms;
    const sec = section("shards", "Shards");
    const charts = el("div", {"class": "charts"});
    sec.appendChild(charts);
    histogram(charts, "shard_bytes", h.shard_bytes, "bytes per shard", "shards", bytes);
    histogram(charts, "shard_samples", h.shard_samples, "samples per shard", "shards", v => group(Math.round(v)));
    sec.appendChild(el("h3", {}, "Odd shards (" + group(s.odd_shard_count) + "): under half or over twice the median"));
    const rows = capped(sec, s.odd_shards, 200, s.odd_shard_count, "odd shards");
    table(sec, "odd-shards", ["shard", "file", "samples", "bytes", "why"],
          rows.map(o => [o.index, o.file, o.samples, o.bytes, o.why]));
    if (Object.keys(s.fields).length > 0 || !s.view) {
      sec.appendChild(el("h3", {}, "Fields besides the image"));
      const names = Object.keys(s.fields);
      if (names.length === 0) sec.appendChild(el("p", {id: "no-fields"}, "none"));
      else table(sec, "fields", ["field", "samples", "share"],
                 names.map(k => [k, s.fields[k], (100 * s.fields[k] / Math.max(1, s.samples)).toFixed(1) + "%"]));
    }
  }

  function drawSkipped(data) {
    const s = data.stat;
    const sec = section("skipped", "Inputs skipped at pack time (" + group(s.skipped) + ")");
    if (s.view) { sec.appendChild(el("p", {}, "a view: its base's pack skipped them (see the base's report)")); return; }
    const rows = capped(sec, s.skipped_files, 200, s.skipped, "skipped inputs");
    table(sec, "skipped-files", ["input", "reason"], rows.map(f => [f.path, f.reason]));
  }

  function drawVerify(data) {
    const sec = section("verify", "Verify");
    const v = data.verify;
    if (!v) {
      sec.appendChild(el("p", {id: "verify-result", "class": "note"},
                         "not verified in this report: shardpack report --verify (or shardpack verify) checks it"));
      return;
    }
    sec.appendChild(el("p", {id: "verify-result", "class": v.ok ? "ok" : "bad"},
                       (v.ok ? "verify OK: " : "verify FAILED: ") + group(v.shards) + " shards, " + group(v.samples) +
                       " samples, " + bytes(v.bytes) + " checked" +
                       (v.images_decoded ? ", " + group(v.images_decoded) + " images decoded" : "")));
    const rows = capped(sec, v.problems, 200, v.problems.length, "problems");
    if (rows.length) table(sec, "verify-problems", ["shard", "key", "problem"], rows.map(p => [p.shard, p.key, p.problem]));
  }

  function drawDoctor(data) {
    const d = data.doctor;
    if (!d) return;
    const sec = section("doctor", "Doctor: where the input pipeline loses time");
    const layers = d.layers.filter(l => l.measured);
    const bars = layers.map(l => ({value: l.images_per_s, tip: l.name + ": " + group(Math.round(l.images_per_s)) +
                                   " images/s (" + l.detail + ")"}));
    bars.push({value: d.loader.images_per_s, tip: "loader: " + group(Math.round(d.loader.images_per_s)) + " images/s"});
    const names = layers.map(l => l.name).concat(["loader"]);
    // Log scale with each bar's rate written: storage at 42,600 images/s beside a loader at 814 is
    // a sliver on a linear axis.
    const opts = {ticks: names.map((n, i) => ({at: i + 0.5, text: n})), width: 520, log: true, labels: true};
    if (d.model_rate > 0) opts.line = {value: d.model_rate, text: "model: " + group(Math.round(d.model_rate)) + " images/s"};
    barChart(sec, "doctor", bars, "stage", "images/s", opts);
    sec.appendChild(el("p", {id: "doctor-verdict"}, "verdict: " + d.verdict));
    const ul = el("ul", {id: "doctor-actions"});
    for (const a of d.actions) ul.appendChild(el("li", {}, a));
    sec.appendChild(ul);
  }

  function drawThumbnails(data) {
    const sec = section("thumbnails", "Samples (" + data.thumbnails.length + ", seed " + data.report.thumbnail_seed + ")");
    const grid = el("div", {"class": "grid"});
    const classes = data.stat.classes;
    for (const t of data.thumbnails) {
      const fig = el("figure", {"class": "thumb", "data-index": t.index});
      if (t.jpeg_base64) {
        fig.appendChild(el("img", {src: "data:image/jpeg;base64," + t.jpeg_base64, width: data.report.thumbnail_side,
                                   height: data.report.thumbnail_side, alt: t.key}));
      }
      const cls = t.label >= 0 && t.label < classes.length ? classes[t.label].name : "unlabelled";
      fig.appendChild(el("figcaption", {}, t.key + " · " + cls + " · " + t.width + "x" + t.height +
                                           (t.error ? " · " + t.error : "")));
      grid.appendChild(fig);
    }
    sec.appendChild(grid);
  }

  function drawDataset(data) {
    drawSummary(data);
    drawSizes(data);
    drawClasses(data);
    drawShards(data);
    drawSkipped(data);
    drawVerify(data);
    drawDoctor(data);
    drawThumbnails(data);
  }

  // A mixture: its sources with their quotas of an epoch, then each source's report in a box.
  function drawMixture(data) {
    const m = data.report.mixture;
    main.appendChild(el("h1", {id: "title"}, "shardpack report: a mixture of " + m.sources.length + " datasets"));
    main.appendChild(el("p", {"class": "note"}, "by " + data.report.tool + "; an epoch of " + group(m.epoch_size) +
                                                " samples (docs/mixing.md)"));
    table(main, "mixture", ["source", "dataset", "weight", "samples", "quota of an epoch"],
          m.sources.map((s, i) => [String(i + 1), s.dataset, String(s.weight), s.samples, s.quota]));
    for (const w of m.warnings) main.appendChild(el("p", {"class": "bad"}, w));
    data.sources.forEach((source, i) => {
      const box = el("div", {"class": "source", "data-source": i});
      main.appendChild(box);
      root = box;
      prefix = "s" + i + "-";
      drawDataset(source);
    });
  }

  try {
    const data = JSON.parse(document.getElementById("report-data").textContent);
    main.textContent = "";
    if (data.sources) drawMixture(data); else drawDataset(data);
    document.body.setAttribute("data-rendered", "ok");
  } catch (e) {
    root = main;
    prefix = "";
    main.appendChild(el("p", {"class": "bad", id: "render-error"}, "this report could not be drawn: " + e));
    document.body.setAttribute("data-rendered", "failed");
    console.error("shardpack report: " + e);
  }
  document.body.setAttribute("data-render-ms", (performance.now() - started).toFixed(1));
})();
</script>
</body>
</html>
)PAGE";

}  // namespace

std::string ReportPage(const nlohmann::json& report) {
  // ensure_ascii: the data is plain ASCII whatever the names hold; bytes that are not UTF-8 are
  // replaced (U+FFFD) rather than failing the whole report.
  const std::string json = report.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  std::string page = kHead;
  page.reserve(page.size() + json.size() + 32768);
  for (char c : json) {
    if (c == '<') {
      page += "\\u003c";  // only inside strings: JSON's own syntax has no "<"
    } else {
      page += c;
    }
  }
  page += kScript;
  return page;
}

}  // namespace shardpack
