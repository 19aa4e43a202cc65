// The shardpack command line: parses flags into option structs, makes one library call, prints the
// result or "<command> failed: <reason>". Exit status: 0 success, 1 failure (or problems found by
// verify), 2 usage error.
#include "tools/command_line.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <set>

#include "ground/printable.h"
#include "ground/shell_quote.h"
#include "ground/units.h"
#include "ops/pack/pack_partition.h"
#include "ops/pack/slurm_script.h"
#include "shardpack/convert.h"
#include "shardpack/doctor.h"
#include "shardpack/loader_bench.h"
#include "shardpack/pack.h"
#include "shardpack/stat.h"
#include "shardpack/verify.h"
#include "tools/mixture_flags.h"
#include "tools/report_command.h"
#include "tools/report_json.h"
#include "tools/usage_error.h"
#include "tools/view_commands.h"
#ifdef SHARDPACK_HAVE_CUDA
#include "ops/cuda/cuda_bench.h"
#include "ops/cuda/host_to_device_bench.h"
#endif
#include "tools/environment.h"
#include "tools/progress_printer.h"

namespace shardpack {
namespace {

// "1 shard", "3 shards".
std::string Count(uint64_t n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

// " txt 99.8% (998), seg.png 100% (1000)": how many samples have each field.
std::string FieldCoverage(const std::map<std::string, uint64_t>& fields, uint64_t samples) {
  std::string out;
  for (const auto& [name, n] : fields) {
    char share[32];
    double percent = samples ? 100.0 * double(n) / double(samples) : 0.0;
    if (n != samples && percent > 99.9) percent = 99.9;  // never "100.0%" for a field some samples lack
    std::snprintf(share, sizeof(share), n == samples ? "%.0f%%" : "%.1f%%", percent);
    out += std::string(out.empty() ? " " : ", ") + name + " " + share + " (" + std::to_string(n) + ")";
  }
  return out;
}

struct PackFlags {
  std::string src, out, format = "wds", compress = "none", shard_size = "512MB", max_sample_bytes = "256MiB", keys,
                        check = "header", crop, partition, layout = "imagenet", max_side_of = "long";
  uint32_t partitions = 0;
  bool max_side_given = false;           // an explicit --max-side 0 is refused (leaving it out means no bound)
  bool samples_per_shard_given = false;  // --partition cuts shards by count only then
  bool quiet = false, json = false, no_sync = false;
  PackOptions options;
};

// Fills f.options from the flags that are strings on the command line.
Status ParseOutputFlags(PackFlags& f) {
  SHARDPACK_RETURN_IF_ERROR(ParseDatasetFormat(f.format, &f.options.format));
  SHARDPACK_RETURN_IF_ERROR(ParseRawCompression(f.compress, &f.options.compress));
  SHARDPACK_RETURN_IF_ERROR(ParseByteSize(f.shard_size, &f.options.shard_size_bytes));
  SHARDPACK_RETURN_IF_ERROR(ParseByteSize(f.max_sample_bytes, &f.options.max_sample_bytes));
  f.options.max_side_of_short = f.max_side_of == "short";
  if (f.max_side_given && f.options.max_side == 0) {
    return Status::InvalidArgument("--max-side 0 is too small: give at least 16 pixels (or leave it out for no bound)");
  }
  if (!f.crop.empty()) {
    unsigned h = 0, w = 0;
    char x = 0, extra = 0;
    int n = std::sscanf(f.crop.c_str(), "%u%c%u%c", &h, &x, &w, &extra);
    if (n == 1) w = h;
    if (!(n == 1 || (n == 3 && x == 'x')) || h == 0 || w == 0) {
      return Status::InvalidArgument("--crop takes SIZE or HEIGHTxWIDTH, e.g. 224 or 224x192");
    }
    f.options.crop_height = h;
    f.options.crop_width = w;
  }
  f.options.layout = f.layout == "samples" ? SourceLayout::kSamples : SourceLayout::kImageNet;
  // Keys carry a sample's folder by default where folders are not classes.
  f.options.path_keys = f.keys == "path" || (f.keys.empty() && f.options.layout == SourceLayout::kSamples);
  f.options.decode_check = f.check == "decode";
  f.options.sync = !f.no_sync;
  if (!f.partition.empty()) {
    f.options.partition_by_count = f.samples_per_shard_given;
    SHARDPACK_RETURN_IF_ERROR(
        ResolvePartition(f.partition, f.partitions, ProcessEnvironment(), &f.options.partition, &f.options.partitions));
  }
  return Status::OK();
}

// Set by SIGINT and SIGTERM; the pack stops at the next sample, keeping its complete shards.
std::atomic<bool> interrupted{false};

void OnInterrupt(int) { interrupted.store(true); }

// A class folder without images keeps its label (so that labels follow the sorted folder names, and
// a class list stays the same when a class is empty for now), which shifts nothing but is easy to
// miss: torchvision's ImageFolder refuses such a tree. Said on the terminal, not only in --json.
void PrintEmptyClasses(const Manifest& m) {
  if (m.empty_classes.empty()) return;
  std::string names;
  for (size_t i = 0; i < m.empty_classes.size() && i < 10; ++i) {
    const std::string& name = m.empty_classes[i];
    const auto at = std::find(m.classes.begin(), m.classes.end(), name);
    names += (i == 0 ? "" : ", ") + name;
    if (at != m.classes.end()) names += " (label " + std::to_string(at - m.classes.begin()) + ")";
  }
  if (m.empty_classes.size() > 10) names += ", ... (all in manifest.json's empty_classes)";
  std::fprintf(stderr,
               "note: %s no image and still %s a label, so that labels follow the sorted folder names: %s. "
               "torchvision's ImageFolder refuses such a tree; to drop the label, remove the folder and pack again "
               "(the labels after it shift down)\n",
               m.empty_classes.size() == 1 ? "1 class folder holds"
                                           : (Count(m.empty_classes.size(), "class folder") + " hold").c_str(),
               m.empty_classes.size() == 1 ? "takes" : "take", names.c_str());
}

// pack, convert and append: one library call with progress and skip reports, then the summary.
int RunPack(PackFlags& f, const std::string& name) {
  const bool convert = name == "convert", append = name == "append";
  const char* command = name.c_str();
  Status s = ParseOutputFlags(f);
  if (!s.ok()) return Fail(command, s);
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  f.options.cancel = &interrupted;
  ProgressPrinter progress(!f.quiet && !f.json);
  f.options.on_progress = [&](const PackProgress& p) { progress.Update(p); };
  f.options.on_skip = [&](const SkippedFile& sf) {
    if (f.quiet || f.json) return;
    progress.Finish();
    std::fprintf(stderr, "skipped %s: %s\n", sf.path.c_str(), sf.reason.c_str());
  };
  PackResult result;
  s = convert  ? Convert(f.src, f.out, f.options, &result)
      : append ? Append(f.src, f.out, f.options, &result)
               : Pack(f.src, f.out, f.options, &result);
  progress.Finish();
  if (!s.ok()) {
    Fail(command, s);
    return s.code() == Status::Code::kAborted && interrupted.load() ? 130 : 1;
  }
  const Manifest& m = result.manifest;
  if (f.json) {
    std::cout << PackResultToJson(result, f.out).dump(2) << "\n";
    return 0;
  }
  if (append) {
    const uint64_t shards = m.shards.size();
    if (result.already_appended) {
      std::printf("%s's generation %llu is already this append of %s (finished): --resume did nothing\n", f.out.c_str(),
                  static_cast<unsigned long long>(m.generation), f.src.c_str());
      return 0;
    }
    if (result.already_complete) {
      std::printf("finished publishing an interrupted append: %s now holds %s in %s (generation %llu)\n", f.out.c_str(),
                  Count(m.samples, "sample").c_str(), Count(shards, "shard").c_str(),
                  static_cast<unsigned long long>(m.generation));
      return 0;
    }
    std::printf("appended to %s in %.2f s: it now holds %s in %s (%s), generation %llu; skipped %s%s\n", f.out.c_str(),
                result.seconds, Count(m.samples, "sample").c_str(), Count(shards, "shard").c_str(),
                FormatBytes(m.bytes).c_str(), static_cast<unsigned long long>(m.generation),
                Count(m.skipped.size(), "file").c_str(), m.skipped.empty() ? "" : " (listed in manifest.json)");
    PrintEmptyClasses(m);
    return 0;
  }
  if (result.already_complete) {
    std::printf("%s already holds this dataset, finished (%s in %s, %s): --resume did nothing\n", f.out.c_str(),
                Count(m.samples, "sample").c_str(), Count(m.shards.size(), "shard").c_str(),
                FormatBytes(m.bytes).c_str());
    return 0;
  }
  if (f.options.partitions > 1) {
    std::printf(
        "%s part %u of %u: %s into %s (%s) in %s in %.2f s; skipped %s; once every part is done: "
        "shardpack merge %s\n",
        convert ? "converted" : "packed", f.options.partition, f.options.partitions, Count(m.samples, "sample").c_str(),
        Count(m.shards.size(), "shard").c_str(), FormatBytes(m.bytes).c_str(), f.out.c_str(), result.seconds,
        Count(m.skipped.size(), "file").c_str(), f.out.c_str());
    return 0;
  }
  std::printf("%s %s into %s (%s) in %s in %.2f s (%.1f MB/s); skipped %s%s\n", convert ? "converted" : "packed",
              Count(m.samples, "sample").c_str(), Count(m.shards.size(), "shard").c_str(), FormatBytes(m.bytes).c_str(),
              f.out.c_str(), result.seconds, result.seconds > 0 ? result.bytes_read / 1e6 / result.seconds : 0.0,
              Count(m.skipped.size(), "file").c_str(), m.skipped.empty() ? "" : " (listed in manifest.json)");
  const std::map<std::string, uint64_t> fields = FieldCounts(m);
  if (!fields.empty()) std::printf("fields:%s\n", FieldCoverage(fields, m.samples).c_str());
  PrintEmptyClasses(m);
  if (result.reencoded > 0) {
    const std::string cmyk =
        result.cmyk_to_rgb == 0 ? "" : "; " + Count(result.cmyk_to_rgb, "CMYK JPEG") + " converted to RGB";
    // The flags that did it, as given.
    const PackOptions& o = f.options;
    std::string why = o.max_side > 0 ? "--max-side " + std::to_string(o.max_side) : "";
    if (o.lossless_as_jpeg) why += std::string(why.empty() ? "" : ", ") + "--lossless-as-jpeg";
    std::printf("re-encoded %s (%s)%s\n", Count(result.reencoded, "image").c_str(), why.c_str(), cmyk.c_str());
  }
  return 0;
}

void AddPackOptions(CLI::App* pack, PackFlags& pf);
void AddAppendOptions(CLI::App* append, PackFlags& af);

// slurm-script: the pack options are checked as pack would parse them, then passed through.
int RunSlurmScript(SlurmScriptOptions o) {
  if (const Status s = CheckSlurmScriptOptions(o); !s.ok()) return Fail("slurm-script", s);
  for (const std::string& arg : o.pack) {
    for (const char* own : {"--partition", "--partitions", "--resume", "--force", "--threads"}) {
      if (arg == own || arg.rfind(std::string(own) + "=", 0) == 0) {
        return Fail("slurm-script", Status::InvalidArgument(arg + " is the script's to set (each task packs its part "
                                                                  "with --partition slurm --resume and "
                                                                  "$SLURM_CPUS_PER_TASK threads)"));
      }
    }
  }
  CLI::App check("pack");
  PackFlags f;
  AddPackOptions(&check, f);
  std::vector<std::string> args = {o.src, o.out};
  args.insert(args.end(), o.pack.begin(), o.pack.end());
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    check.parse(args);
  } catch (const CLI::ParseError& e) {
    return Fail("slurm-script", Status::InvalidArgument(std::string("pack options: ") + e.what()));
  }
  const Status s = ParseOutputFlags(f);
  if (!s.ok()) return Fail("slurm-script", s);
  o.format = f.options.format;
  if (o.shardpack.empty()) {
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
    o.shardpack = n > 0 ? std::string(self, size_t(n)) : "shardpack";
  }
  std::string script;
  const Status made = SlurmPackScript(o, &script);
  if (!made.ok()) return Fail("slurm-script", made);
  std::fputs(script.c_str(), stdout);
  return 0;
}

int RunMerge(const std::string& out, bool json) {
  MergeResult result;
  MergeOptions options;
  const Status env = ApplyEnvironment(&options.remote);
  if (!env.ok()) return Fail("merge", env);
  const Status s = Merge(out, options, &result);
  if (!s.ok()) return Fail("merge", s);
  const Manifest& m = result.manifest;
  if (json) {
    std::cout << nlohmann::json{{"out", out},           {"parts", result.parts},
                                {"samples", m.samples}, {"shards", m.shards.size()},
                                {"bytes", m.bytes},     {"skipped", m.skipped.size()}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::printf("merged %s: %s in %s (%s), skipped %s; wrote %s\n", Count(result.parts, "part").c_str(),
              Count(m.samples, "sample").c_str(), Count(m.shards.size(), "shard").c_str(), FormatBytes(m.bytes).c_str(),
              Count(m.skipped.size(), "file").c_str(), JoinPath(out, kManifestFileName).c_str());
  return 0;
}

int RunVerify(const std::string& dir, VerifyOptions options, bool json) {
  VerifyReport report;
  ProgressPrinter progress(!json);
  options.on_shard = [&](uint64_t done, uint64_t total) { progress.UpdateShards("verify", done, total); };
  Status s = Verify(dir, options, &report);
  progress.Finish();
  if (!s.ok()) return Fail("verify", s);
  if (json) {
    std::cout << VerifyReportToJson(report).dump(2) << "\n";
    return report.clean() ? 0 : 1;
  }
  for (const VerifyProblem& p : report.problems) {
    std::string where = p.shard.empty() ? dir : p.shard;
    if (!p.key.empty()) where += ": sample " + p.key;
    std::printf("%s: %s\n", where.c_str(), p.what.c_str());
  }
  std::string decoded = options.decode ? ", " + std::to_string(report.images_decoded) + " images decoded" : "";
  if (!report.view_base.empty()) {
    std::printf("view of %s: %s selected; its base:\n", report.view_base.c_str(),
                Count(report.view_samples, "sample").c_str());
  }
  if (report.clean()) {
    std::printf("verify OK: %s, %s, %s checked%s\n", Count(report.shards, "shard").c_str(),
                Count(report.samples, "sample").c_str(), FormatBytes(report.bytes).c_str(), decoded.c_str());
    return 0;
  }
  // "2 problems in 1 file (3 shards checked)": read as "in 3 shards" it said every shard was bad.
  std::set<std::string> files;
  for (const VerifyProblem& p : report.problems) files.insert(p.shard.empty() ? kManifestFileName : p.shard);
  std::printf("verify FAILED: %s in %s (%s checked)\n", Count(report.problems.size(), "problem").c_str(),
              Count(files.size(), "file").c_str(), Count(report.shards, "shard").c_str());
  return 1;
}

void PrintPercentiles(const char* what, const DatasetStats::Percentiles& p, bool bytes) {
  auto v = [&](uint64_t x) { return bytes ? FormatBytes(x) : std::to_string(x); };
  std::printf("%-13s min %s  p50 %s  p90 %s  p99 %s  max %s\n", what, v(p.min).c_str(), v(p.p50).c_str(),
              v(p.p90).c_str(), v(p.p99).c_str(), v(p.max).c_str());
}

// The bucket histogram: the buckets that take samples, in the order given, with the share of their
// pixels the crop takes away.
void PrintBuckets(const DatasetStats& st, const std::string& spec) {
  uint64_t used = 0;
  for (const BucketCount& b : st.buckets) used += b.samples > 0 ? 1 : 0;
  std::printf("buckets      %s: %s of %zu take samples (sizes as shown, from the sample tables)\n", spec.c_str(),
              std::to_string(used).c_str(), st.buckets.size());
  const uint64_t sized = st.samples > st.unsized ? st.samples - st.unsized : 0;
  uint64_t upscaled = 0;
  double max_upscale = 0;
  for (const BucketCount& b : st.buckets) {
    if (b.samples == 0) continue;
    const std::string shape = std::to_string(b.bucket.width) + "x" + std::to_string(b.bucket.height);
    char enlarged[64] = "";
    if (b.upscaled > 0) {
      std::snprintf(enlarged, sizeof(enlarged), "; enlarges %llu (up to %.1fx)",
                    static_cast<unsigned long long>(b.upscaled), b.max_upscale);
    }
    std::printf("  %-11s %10llu  %5.1f%%  crops %4.1f%% of their pixels%s\n", shape.c_str(),
                static_cast<unsigned long long>(b.samples),
                100.0 * double(b.samples) / double(std::max<uint64_t>(1, sized)), 100 * b.cropped_share, enlarged);
    upscaled += b.upscaled;
    max_upscale = std::max(max_upscale, b.max_upscale);
  }
  // A bucket larger than its images only enlarges them (demo images of 500x375 into 1152x896): no
  // detail is added, and the model learns blur at that resolution.
  if (upscaled > 0) {
    std::printf(
        "  %s (%.1f%%) enlarged to cover their bucket, up to %.1fx: no detail is added; give smaller buckets (e.g. "
        "a rule with a smaller area=), or keep the larger images: shardpack subset DATASET LARGE --where 'width >= W "
        "and height >= H'\n",
        Count(upscaled, "image").c_str(), 100.0 * double(upscaled) / double(std::max<uint64_t>(1, sized)), max_upscale);
  }
  if (st.unsized > 0) {
    std::printf("  %s without a size in the sample table: in no bucket\n", Count(st.unsized, "sample").c_str());
  }
  if (st.bucket_left_out > 0) {
    std::printf(
        "  %s (%.1f%%) in no bucket under --bucket-no-upscale / --bucket-min-side: the loader leaves them "
        "out\n",
        Count(st.bucket_left_out, "sample").c_str(),
        100.0 * double(st.bucket_left_out) / double(std::max<uint64_t>(1, sized)));
  }
}

int RunStat(const std::string& dir, bool json, size_t top, const std::string& buckets, const BucketChoice& choice,
            int threads, ReportFlags& html) {
  DatasetStats st;
  StatOptions options;
  options.threads = threads;
  if (const Status env = ApplyEnvironment(&options.remote); !env.ok()) return Fail("stat", env);
  if (!buckets.empty()) {
    const Status parsed = ParseBuckets(buckets, "--buckets", &options.buckets);
    if (!parsed.ok()) return Fail("stat", parsed);
  }
  if (buckets.empty() && choice.any()) {
    return Fail("stat", Status::InvalidArgument(
                            "--bucket-no-upscale and --bucket-min-side choose among buckets: give --buckets too"));
  }
  options.bucket_choice = choice;
  ProgressPrinter progress(!json);
  options.on_shard = [&](uint64_t done, uint64_t total) { progress.UpdateShards("stat", done, total); };
  Status s = Stat(dir, options, &st);
  progress.Finish();
  if (!s.ok()) return Fail("stat", s);
  if (!html.output.empty()) {  // the page of `report`, from these figures (its stat part is this --json)
    html.dataset = dir;
    html.remote = options.remote;
    if (const Status page = WriteStatPage(html, st); !page.ok()) return Fail("stat", page);
  }
  if (json) {
    std::cout << DatasetStatsToJson(st).dump(2) << "\n";
    return 0;
  }
  // The folder's name (as the manifest records it: the same for a URL of it) and the generation
  // that append messages and loader states cite.
  std::printf("dataset      %s (%s, generation %llu)\n", Printable(st.name).c_str(),
              std::string(DatasetFormatName(st.format)).c_str(), static_cast<unsigned long long>(st.generation));
  if (!st.view_base.empty()) {
    std::printf("view of      %s: %s (%s) from %s (%s)\n", st.view_base.c_str(), Count(st.samples, "sample").c_str(),
                FormatBytes(st.sample_bytes_total).c_str(), Count(st.shards, "base shard").c_str(),
                FormatBytes(st.bytes).c_str());
    if (st.view_base_newer > 0) {
      std::printf(
          "             its base holds %s appended since this view was made, which it does not read: "
          "`shardpack refresh %s` takes those its rule takes (no sample changes sides)\n",
          Count(st.view_base_newer, "sample").c_str(), ShellWord(dir).c_str());
    }
  } else {
    std::printf("samples      %s in %s, %s; %s skipped at pack time\n", std::to_string(st.samples).c_str(),
                Count(st.shards, "shard").c_str(), FormatBytes(st.bytes).c_str(), Count(st.skipped, "input").c_str());
  }
  PrintPercentiles(st.sample_bytes_exact ? "sample size" : "sample size~", st.sample_bytes, true);
  PrintPercentiles("width", st.width, false);
  PrintPercentiles("height", st.height, false);
  if (st.reencoded > 0) {  // packed with a resolution bound: the sizes before it
    std::printf("re-encoded   %s at pack time (--max-side); before:\n", Count(st.reencoded, "image").c_str());
    PrintPercentiles("  width", st.original_width, false);
    PrintPercentiles("  height", st.original_height, false);
  }
  std::string formats;
  for (const auto& [name, n] : st.image_formats) formats += " " + name + " " + std::to_string(n);
  std::printf("formats     %s\n", formats.c_str());
  if (!st.fields.empty()) std::printf("fields      %s\n", FieldCoverage(st.fields, st.samples).c_str());
  if (!st.buckets.empty()) PrintBuckets(st, buckets);
  if (st.classes.empty()) {
    std::printf("classes      none (unlabelled)\n");
    return 0;
  }
  std::vector<ClassCount> sorted = st.classes;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const ClassCount& a, const ClassCount& b) { return a.samples > b.samples; });
  std::printf("classes      %zu\n", sorted.size());
  auto print_class = [](const ClassCount& c) {
    std::printf("  %8llu  %s (label %d)\n", static_cast<unsigned long long>(c.samples), c.name.c_str(), c.label);
  };
  if (sorted.size() <= 2 * top) {
    std::printf("per class:\n");
    for (const ClassCount& c : sorted) print_class(c);
    return 0;
  }
  std::printf("largest:\n");
  for (size_t i = 0; i < top; ++i) print_class(sorted[i]);
  std::printf("smallest:\n");
  for (size_t i = sorted.size() - top; i < sorted.size(); ++i) print_class(sorted[i]);
  return 0;
}

void AddOutputOptions(CLI::App* app, PackFlags& f);
void AddInputOptions(CLI::App* pack, PackFlags& pf);

// pack's own arguments and options, then the output options it shares with convert.
void AddPackOptions(CLI::App* pack, PackFlags& pf) {
  pack->add_option("SRC", pf.src, "Source folder: one sub-folder per class (ImageNet layout), or images directly")
      ->required();
  pack->add_option("OUT", pf.out,
                   "Output folder (created; must be empty unless --force), or s3://BUCKET/PREFIX: shards are "
                   "uploaded as they complete, the manifest last (docs/distributed.md)")
      ->required();
  AddInputOptions(pack, pf);
  AddOutputOptions(pack, pf);
}

// append: the dataset first, then what is added to it; the options are pack's, and must be those
// the dataset was packed with.
void AddAppendOptions(CLI::App* append, PackFlags& af) {
  append->add_option("OUT", af.out, "The dataset folder to add to (a wds or raw dataset shardpack packed)")->required();
  append->add_option("SRC", af.src, "Source folder of the new images, laid out as for pack")->required();
  AddInputOptions(append, af);
  AddOutputOptions(append, af);
}

// The options an append was given, by the names its manifest's "options" uses: the rest it takes
// from the dataset (PackOptions::append_given).
std::set<std::string> AppendOptionsGiven(const CLI::App& append) {
  static const std::pair<const char*, const char*> kFlagOption[] = {{"--format", "format"},
                                                                    {"--shard-size", "shard_size"},
                                                                    {"--samples-per-shard", "samples_per_shard"},
                                                                    {"--prefix", "prefix"},
                                                                    {"--shuffle", "shuffle"},
                                                                    {"--seed", "seed"},
                                                                    {"--key", "keys"},
                                                                    {"--layout", "layout"},
                                                                    {"--check", "check"},
                                                                    {"--resize", "resize"},
                                                                    {"--crop", "crop"},
                                                                    {"--keep-size", "keep_size"},
                                                                    {"--compress", "compress"},
                                                                    {"--chunk-samples", "chunk_samples"},
                                                                    {"--max-side", "max_side"},
                                                                    {"--max-side-of", "max_side"},
                                                                    {"--jpeg-quality", "max_side"},
                                                                    {"--jpeg-quality", "lossless_as_jpeg"},
                                                                    {"--lossless-as-jpeg", "lossless_as_jpeg"},
                                                                    {"--max-sample-bytes", "max_sample_bytes"},
                                                                    {"--max-pixels", "max_pixels"}};
  std::set<std::string> given;
  for (const auto& [flag, option] : kFlagOption) {
    if (append.count(flag) > 0) given.insert(option);
  }
  return given;
}

// How the source's files are found and ordered (pack, append).
void AddInputOptions(CLI::App* pack, PackFlags& pf) {
  pack->add_option("--list", pf.options.list_file,
                   "Pack the files listed in FILE instead of scanning SRC: lines 'relative_path<TAB>label' (label an "
                   "integer or a class name), or a table of samples with fields: .jsonl, .csv or .tsv with a header "
                   "(columns image, cls, and fields such as txt, json)");
  pack->add_flag("--shuffle", pf.options.shuffle, "Shuffle sample order once at pack time (for streaming readers)");
  pack->add_option("--seed", pf.options.seed, "Seed for --shuffle")->capture_default_str();
  pack->add_option("--key", pf.keys, "Sample keys: index (zero-padded sample number) or path (from the relative path)")
      ->check(CLI::IsMember({"index", "path"}))
      ->default_str("index; path with --layout samples");
  pack->add_option("--layout", pf.layout,
                   "How SRC's files form samples: imagenet (one folder per class; files sharing an image's name up to "
                   "the first dot, e.g. 0001.txt beside 0001.jpg, join its sample) or samples (no classes; in any "
                   "folder, files sharing a name up to the first dot form a sample: 0001.jpg, 0001.txt, "
                   "0001.seg.png)")
      ->check(CLI::IsMember({"imagenet", "samples"}))
      ->capture_default_str();
}

void AddOutputOptions(CLI::App* app, PackFlags& f) {
  app->add_option("--format", f.format,
                  "Output format: wds (WebDataset tar shards), lmdb (one LMDB environment) or raw (decoded pixels in "
                  ".npy shards)")
      ->capture_default_str();
  app->add_option("--shard-size", f.shard_size,
                  "Start a new shard before one would exceed this size (e.g. 512MB, 1GiB)")
      ->capture_default_str();
  app->add_option_function<uint64_t>(
         "--samples-per-shard",
         [&f](const uint64_t& n) {
           f.options.samples_per_shard = n;
           f.samples_per_shard_given = true;
         },
         "Start a new shard after this many samples (with --partition: parts are cut on multiples of it, and "
         "their shards equal a one-node pack's byte for byte)")
      ->default_str(std::to_string(f.options.samples_per_shard));
  app->add_option("--prefix", f.options.prefix, "Shard file name prefix: PREFIX-000000.tar, ...")
      ->capture_default_str();
  app->add_option("--threads", f.options.threads, "Reader threads (0 = all cores); output does not depend on it")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app->add_option("--check", f.check, "Input check: header (fast: format, size, truncation) or decode (full decode)")
      ->check(CLI::IsMember({"header", "decode"}))
      ->capture_default_str();
  app->add_option("--resize", f.options.resize,
                  "raw: resize the shorter side to this many pixels (default: the crop's longer side)");
  app->add_option("--crop", f.crop, "raw: centre-crop to SIZE or HEIGHTxWIDTH; every image then has that size");
  app->add_flag("--keep-size", f.options.keep_size,
                "raw: keep each image's own size (after --resize), with an offsets index");
  app->add_option("--compress", f.compress,
                  "raw: none, or zstd (chunks of --chunk-samples images, each one zstd frame)")
      ->check(CLI::IsMember({"none", "zstd"}))
      ->capture_default_str();
  app->add_option("--chunk-samples", f.options.chunk_samples,
                  "raw with --compress zstd: images per chunk (the unit of random access)")
      ->capture_default_str();
  app->add_option_function<uint32_t>(
      "--max-side",
      [&f](const uint32_t& n) {
        f.options.max_side = n;
        f.max_side_given = true;
      },
      "wds, lmdb: bound the resolution: an image whose side (--max-side-of) is over N pixels as shown is resized "
      "to N by area averaging and re-encoded (JPEG at --jpeg-quality, others as PNG); smaller images keep their "
      "bytes (docs/formats/resolution-bound.md)");
  app->add_option("--max-side-of", f.max_side_of, "With --max-side: which side is bounded, long or short")
      ->check(CLI::IsMember({"long", "short"}))
      ->capture_default_str();
  app->add_option("--jpeg-quality", f.options.jpeg_quality,
                  "With --max-side or --lossless-as-jpeg: the quality of re-encoded JPEGs (1-100; 4:2:0 chroma)")
      ->capture_default_str();
  app->add_flag("--lossless-as-jpeg", f.options.lossless_as_jpeg,
                "wds, lmdb: store PNG, WebP and BMP images as JPEG at --jpeg-quality, within --max-side or not "
                "(alpha composited on white); the member's extension follows");
  app->add_option("--max-sample-bytes", f.max_sample_bytes, "Skip larger input files")->capture_default_str();
  app->add_option("--max-pixels", f.options.max_pixels, "Skip images whose header declares more pixels")
      ->capture_default_str();
  app->add_flag("--strict", f.options.strict, "Fail on the first bad input instead of skipping and reporting it");
  app->add_flag("--force", f.options.force, "Replace the dataset in a non-empty OUT");
  app->add_flag("--resume", f.options.resume,
                "Continue a killed or interrupted run in OUT (same source and options): keep its complete shards, "
                "pack the rest");
  app->add_option("--partition", f.partition,
                  "Pack only part I of N (I/N, from 0) into OUT, where the other parts may be packing at once; "
                  "'slurm' takes this Slurm array task's, 'k8s' a Kubernetes Indexed Job's (with --partitions). "
                  "Then: shardpack merge OUT");
  app->add_option("--partitions", f.partitions,
                  "With --partition k8s: the number of parts (the Job's completions); with --partition slurm: the "
                  "number of parts, the array's task ids being the part numbers (so a task resubmitted alone keeps "
                  "its part)");
  app->add_flag("--no-sync", f.no_sync, "Do not fsync files before publishing them (faster, not crash-safe)");
  app->add_flag("-q,--quiet", f.quiet, "No progress and no per-file skip lines; only the summary");
  app->add_flag("--json", f.json, "Print the summary as JSON on stdout");
}

// `--device cuda` with `--dtype`: the CUDA feed (ops/cuda), when this build has it.
Status RunDeviceBench(const std::string& dataset, const BenchOptions& o, const std::string& device,
                      const std::string& dtype, BenchResult* r) {
  if (device == "cpu") return RunLoaderBench(dataset, o, r);
#ifdef SHARDPACK_HAVE_CUDA
  const DeviceDType t = dtype == "uint8"      ? DeviceDType::kUint8
                        : dtype == "float16"  ? DeviceDType::kFloat16
                        : dtype == "bfloat16" ? DeviceDType::kBFloat16
                                              : DeviceDType::kFloat32;
  return RunCudaBench(dataset, o, t, r);
#else
  (void)dtype;
  return Status::Unsupported("this shardpack was built without CUDA (no CUDA toolkit at build time)");
#endif
}

// "12,345": thousands separated, for tables a person reads.
std::string Grouped(double v) {
  std::string digits = std::to_string(static_cast<long long>(std::llround(v)));
  for (int i = int(digits.size()) - 3; i > 0; i -= 3) digits.insert(size_t(i), ",");
  return digits;
}

// The loader's words (Python's keywords) as bench's flags, for its errors and warnings.
const std::vector<std::pair<std::string, std::string>> kBenchFlagWords = {{"batch_size", "--batch"},
                                                                          {"prefetch", "--prefetch"},
                                                                          {"the image size", "--crop"},
                                                                          {"smaller buckets", "smaller --buckets"},
                                                                          {"bucket_no_upscale", "--bucket-no-upscale"},
                                                                          {"bucket_min_side", "--bucket-min-side"},
                                                                          {"buckets=\"sdxl\"", "--buckets sdxl"}};

int RunBench(const std::string& dataset, BenchOptions o, uint32_t crop, bool json, const std::string& device,
             const std::string& dtype, const std::string& cache_limit,
             const std::vector<std::pair<std::string, std::string>>& sources, const std::string& buckets,
             const std::string& bucket_tail) {
  o.loader.height = o.loader.width = crop;
  BenchResult r;
  Status s = cache_limit.empty() ? Status::OK() : ParseByteSize(cache_limit, &o.loader.remote.cache_limit);
  if (s.ok() && !buckets.empty()) s = ParseBuckets(buckets, "--buckets", &o.loader.buckets);
  if (s.ok()) s = ParseBucketTail(bucket_tail, "--bucket-tail", &o.loader.bucket_tail);
  if (s.ok() && dataset.empty() == sources.empty()) {
    s = Status::InvalidArgument("give a DATASET, or the sources of a mixture with --source LOCATION WEIGHT (repeated)");
  }
  if (s.ok() && !sources.empty()) s = MixtureFromFlags(sources, &o.mixture);
  if (s.ok() && !sources.empty() && device != "cpu") {
    s = Status::Unsupported("mixtures are read by the CPU loader only for now: use --device cpu");
  }
  if (s.ok()) s = RunDeviceBench(dataset, o, device, dtype, &r);
  if (!s.ok()) {
    return Fail("bench", InFlagWords(s, kBenchFlagWords));
  }
  for (const std::string& w : r.warnings) {
    std::fprintf(stderr, "warning: %s\n", InFlagWords(Status::InvalidArgument(w), kBenchFlagWords).message().c_str());
  }
  for (const std::string& line : r.skipped) std::fprintf(stderr, "%s\n", line.c_str());
  if (json) {
    std::cout << BenchResultToJson(r).dump(2) << "\n";
    return 0;
  }
  std::printf("%s in %.2f s: %.0f images/s, %.1f MB/s read%s\n", Count(r.images, "image").c_str(), r.seconds,
              r.images_per_second, r.bytes_per_second / 1e6,
              r.corrupt ? (", " + Count(r.corrupt, "corrupt sample") + " skipped").c_str() : "");
  if (!r.buckets.empty()) {
    std::printf("%.1f Mpixels/s out; per bucket (its batches' fill time, all threads):\n", r.pixels_per_second / 1e6);
    for (const BucketRate& b : r.buckets) {
      if (b.batches == 0) continue;
      const std::string shape = std::to_string(b.bucket.width) + "x" + std::to_string(b.bucket.height);
      std::printf("  %-11s %s in %s: %.0f images/s, %.1f Mpixels/s\n", shape.c_str(), Count(b.images, "image").c_str(),
                  (std::to_string(b.batches) + (b.batches == 1 ? " batch" : " batches")).c_str(), b.images_per_second,
                  b.pixels_per_second / 1e6);
    }
  }
  if (r.device == "cuda") {
    std::printf("into GPU memory; copy engine busy %.1f%% of the time\n", 100 * r.copy_busy_share);
  } else {
    std::printf("per stage (summed over threads): read %.2f s, decode+transform %.2f s; cores busy %.0f%%\n",
                r.read_seconds, r.decode_seconds, 100 * r.cores_busy);
  }
  const ShuffleQuality& q = r.shuffle_quality;
  std::printf(
      "shuffle quality (mean TV distance of a batch's histogram of %s from the epoch's, over the epoch's "
      "first %s; lower is better): this order %.3f, global shuffle %.3f",
      Count(q.shards, "shard").c_str(), (Grouped(double(q.batches)) + (q.batches == 1 ? " batch" : " batches")).c_str(),
      q.loader, q.global);
  for (const auto& [samples, value] : q.buffers)
    std::printf(", buffer of %s %.3f", Grouped(double(samples)).c_str(), value);
  std::printf("; ideal %.3f\n", q.ideal);
  if (o.consumer_rate > 0) {
    std::printf("consumer at %.0f images/s waited %.2f s (%.1f%% of the time): %s\n", o.consumer_rate,
                r.consumer_wait_seconds, 100 * r.consumer_wait_share,
                r.keeps_up     ? "the loader keeps up"
                : r.predecoded ? "the loader is the bottleneck: add threads (the images are stored decoded already: a "
                                 "smaller --crop, or faster storage)"
                               : "the loader is the bottleneck: add threads or pre-decode (--format raw)");
  }
  return 0;
}

int RunDoctor(const std::string& path, DoctorOptions o, bool json) {
  o.progress = [](const std::string& line) { std::fprintf(stderr, "doctor: %s ...\n", line.c_str()); };
#ifdef SHARDPACK_HAVE_CUDA
  o.host_to_device = MeasureHostToDevice;
#endif
  DoctorReport r;
  const Status s = RunDoctor(path, o, &r);
  if (!s.ok()) return Fail("doctor", s);
  if (json) {
    std::cout << DoctorReportToJson(r).dump(2) << "\n";
    return 0;
  }
  std::printf("shardpack doctor: %s (%s; %d threads of %llu cores)\n\n", r.path.c_str(),
              r.packed_input ? "packed dataset" : "image folder", r.threads, static_cast<unsigned long long>(r.cores));
  std::printf("%-15s %12s  %s\n", "layer", "images/s", "measured");
  for (const DoctorLayer& l : r.layers) {
    std::printf("%-15s %12s  %s\n", l.name.c_str(), l.measured ? Grouped(l.images_per_s).c_str() : "-",
                l.detail.c_str());
  }
  std::printf("%-15s %12s  %s threads over %s, batch %u (slowest stage: %s)\n\n", "loader",
              Grouped(r.loader_images_per_s).c_str(), std::to_string(r.threads).c_str(),
              r.packed_input ? "the dataset" : "the sample packed to wds", o.batch, r.loader_slowest_stage.c_str());
  if (!r.packed_input) {
    std::printf("storage: %s files listed in %.2f s (%s/s); sample %s files, %.1f MB; second pass %s files/s\n",
                Grouped(double(r.files_listed)).c_str(), r.list_seconds, Grouped(r.files_listed_per_s).c_str(),
                Grouped(double(r.sample_files)).c_str(), r.sample_bytes / 1e6, Grouped(r.reread_files_per_s).c_str());
    std::printf("page cache: held %.0f%% of the sample before reading it; %s\n", 100 * r.cached_share,
                r.cold ? "evicted first (--cold), as a real epoch over a large dataset reads"
                : r.page_cache_held
                    ? "the reads above came from memory: a real epoch over a dataset larger than memory reads slower "
                      "(--cold measures that)"
                    : "the reads above came mostly from the storage");
  }
  std::printf("packed: %s read front to back at %.1f MB/s (%s images/s); the page cache held %.0f%% of it%s\n",
              r.packed_input ? "the dataset's shards" : "the sample's shard (in the temporary folder)",
              r.packed_mb_per_s, Grouped(r.packed_images_per_s).c_str(), 100 * r.packed_cached_share,
              r.packed_cached_share >= 0.9 && !r.packed_input ? " (just written), so compare it with --cold" : "");
  if (r.decoded > 0) {
    const std::string over = o.buckets.empty() ? std::to_string(2 * o.crop) : "2x their bucket's";
    std::printf("images: median %ux%u (%.2f megapixels), p90 %.2f megapixels; %.0f%% have a shorter side over %s\n",
                r.median_width, r.median_height, r.median_megapixels, r.p90_megapixels, 100 * r.share_above_2x_crop,
                over.c_str());
  }
  std::printf("\nverdict: %s\n", r.verdict.c_str());
  for (const std::string& a : r.actions) std::printf("  - %s\n", a.c_str());
  return 0;
}

}  // namespace

int RunCommandLine(int argc, char** argv) {
  CLI::App app{"shardpack: packs image datasets into large sequential shards so the GPU never waits for data."};
  app.set_version_flag("--version", std::string("shardpack ") + SHARDPACK_VERSION);
  app.require_subcommand(1);

  PackFlags pf;
  CLI::App* pack = app.add_subcommand("pack", "Pack a directory tree of images (one folder per class) into shards.");
  AddPackOptions(pack, pf);

  PackFlags af;
  CLI::App* append = app.add_subcommand(
      "append",
      "Add the images of SRC to the dataset in OUT as new shards, without rewriting its own. The dataset's own pack "
      "options are used: the flags below are only needed to state them (each must equal the dataset's); "
      "docs/views.md.");
  AddAppendOptions(append, af);

  PackFlags cf;
  CLI::App* convert = app.add_subcommand(
      "convert",
      "Write an existing dataset (shardpack wds, lmdb or raw, WebDataset shards from any tool, MosaicML "
      "Streaming's MDS, LitData, Hugging Face Parquet, or TFRecord files of tf.train.Example) in another format.");
  convert
      ->add_option("IN", cf.src,
                   "Dataset folder, folder of .tar/.tar.gz shards, of TFRecord files (docs/formats/tfrecord.md), "
                   "an MDS or LitData folder, Parquet files (a folder, a file, or a quoted glob: "
                   "'hub/data/train-*.parquet'; docs/formats/parquet.md), or one shard or TFRecord file")
      ->required();
  convert
      ->add_option("OUT", cf.out,
                   "Output folder (created; must be empty unless --force), or s3://BUCKET/PREFIX: shards are "
                   "uploaded as they complete, the manifest last (docs/distributed.md)")
      ->required();
  AddOutputOptions(convert, cf);

  ViewFlags subset_flags, split_flags, refresh_flags;
  CLI::App* subset = AddSubsetCommand(app, subset_flags);
  CLI::App* split = AddSplitCommand(app, split_flags);
  CLI::App* refresh = AddRefreshCommand(app, refresh_flags);

  std::string verify_dir;
  VerifyOptions vo;
  bool verify_json = false;
  CLI::App* verify = app.add_subcommand("verify", "Check a packed dataset: structure, checksums, indexes, counts.");
  verify
      ->add_option("DATASET", verify_dir,
                   "Dataset folder (holding manifest.json), URL, or WebDataset shards of another tool (a folder of "
                   ".tar/.tar.gz shards, or a spec such as \"train-{000000..000127}.tar\")")
      ->required();
  verify->add_flag("--decode", vo.decode, "Also decode every image");
  verify->add_option("--threads", vo.threads, "Shards checked in parallel (0 = all cores)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  verify->add_flag("--json", verify_json, "Print the report as JSON on stdout");

  SlurmScriptOptions so;
  CLI::App* slurm = app.add_subcommand(
      "slurm-script",
      "Print a script that packs SRC into OUT as a Slurm job array (one part per task) and merges the parts "
      "after it: shardpack slurm-script SRC OUT --array N [pack options] > submit.sh; bash submit.sh");
  slurm->add_option("SRC", so.src, "Source folder, as for pack (a path every node sees)")->required();
  slurm->add_option("OUT", so.out, "Output folder, as for pack (on a file system every node shares)")->required();
  slurm->add_option("--array", so.tasks, "Array tasks: parts, packed at once on as many nodes as Slurm gives")
      ->required()
      ->check(CLI::Range(1, 100000));
  slurm->add_option("--cpus-per-task", so.cpus_per_task, "#SBATCH --cpus-per-task: each task's reader threads")
      ->capture_default_str();
  slurm->add_option("--time", so.time, "#SBATCH --time of each task")->capture_default_str();
  slurm->add_option("--mem-per-cpu", so.mem_per_cpu, "#SBATCH --mem-per-cpu")->capture_default_str();
  slurm->add_option("--slurm-partition", so.partition, "#SBATCH --partition (default: a commented line to fill in)");
  slurm->add_option("--shardpack", so.shardpack, "The shardpack binary the tasks run (default: this one)");
  slurm->allow_extras();

  std::string merge_dir;
  bool merge_json = false;
  CLI::App* merge = app.add_subcommand(
      "merge", "Write the manifest of a dataset packed in parts (pack --partition), once every part is done.");
  merge->add_option("OUT", merge_dir, "The folder (or s3://BUCKET/PREFIX) the parts packed into")->required();
  merge->add_flag("--json", merge_json, "Print the summary as JSON on stdout");

  std::string stat_dir;
  bool stat_json = false;
  size_t stat_top = 5;
  CLI::App* stat = app.add_subcommand("stat", "Summarise a packed dataset: sizes, formats, dimensions, classes.");
  stat->add_option("DATASET", stat_dir,
                   "Dataset folder (holding manifest.json), URL, or WebDataset shards of another tool (a folder of "
                   ".tar/.tar.gz shards, or a spec such as \"train-{000000..000127}.tar\")")
      ->required();
  stat->add_option("--top", stat_top, "How many largest and smallest classes to list")->capture_default_str();
  stat->add_flag("--json", stat_json, "Print everything as JSON on stdout");
  ReportFlags stat_html;  // --html: its output; the rest as stat was given
  stat->add_option("--html", stat_html.output,
                   "Also write the figures as a self-contained HTML page to this file (as `shardpack report`)");
  int stat_threads = 0;
  stat->add_option("--threads", stat_threads,
                   "Sample tables read in parallel (0 = all cores); the figures do not depend on it")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  std::string stat_buckets;
  BucketChoice stat_bucket_choice;
  stat->add_flag("--bucket-no-upscale", stat_bucket_choice.no_upscale,
                 "With --buckets: count each image into the nearest of the buckets it covers, never enlarged, as "
                 "bench and Loader(bucket_no_upscale=True) take them; those smaller than every bucket in none");
  stat->add_option("--bucket-min-side", stat_bucket_choice.min_side,
                   "With --buckets: count images whose shorter side is under N pixels in no bucket, as the loader's "
                   "bucket_min_side leaves them out");
  stat->add_option("--buckets", stat_buckets,
                   "Count the samples into aspect-ratio buckets: a preset (sdxl), a list (1024x1024,1152x896,...) "
                   "or a rule (area=1024x1024,step=64,min=512,max=2048[,max-ratio=R]); docs/buckets.md");

  std::string bench_dir;
  BenchOptions bo;
  uint32_t bench_crop = 224;
  bool bench_json = false;
  CLI::App* bench = app.add_subcommand("bench", "Run the training loader over a dataset and measure it.");
  bench->add_option(
      "DATASET", bench_dir,
      "Dataset folder (holding manifest.json), or WebDataset shards such as 'train-{000000..000127}.tar', "
      "or either at a URL (http://, https://, s3://)");
  std::vector<std::pair<std::string, std::string>> bench_sources;
  bench->add_option("--source", bench_sources,
                    "Instead of DATASET, a mixture: --source LOCATION WEIGHT, once per dataset (any location DATASET "
                    "takes); each epoch is the sum of the sources' sizes, shared by weight (docs/mixing.md)");
  bench->add_option("--epoch-size", bo.mixture.epoch_size,
                    "A mixture: samples per epoch (default: the sources' sizes)");
  bench->add_flag("--per-source-batches", bo.mixture.per_source_batches,
                  "A mixture: each batch from one source, sources in a seeded weighted order");
  bench->add_option("--threads", bo.loader.threads, "Decode threads (0 = all cores)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  bench->add_option("--batch", bo.loader.sampler.batch_size, "Images per batch")->capture_default_str();
  bench->add_option("--crop", bench_crop, "Output size: random-resized-crop to SIZE x SIZE plus flip")
      ->capture_default_str();
  bench->add_flag("--eval", bo.loader.eval, "Resize (to 256/224 of SIZE) + centre crop instead");
  std::string bench_buckets, bench_bucket_tail = "partial";
  bench->add_flag("--bucket-no-upscale", bo.loader.bucket_choice.no_upscale,
                  "With --buckets: each image to the nearest of the buckets it covers, never enlarged (kohya's "
                  "bucket_no_upscale); images smaller than every bucket are left out, and counted");
  bench->add_option("--bucket-min-side", bo.loader.bucket_choice.min_side,
                    "With --buckets: leave out images whose shorter side is under N pixels, and count them");
  bench->add_option("--buckets", bench_buckets,
                    "Aspect-ratio buckets instead of --crop (docs/buckets.md): sdxl, WxH,WxH,... or "
                    "area=WxH,step=S,min=A,max=B; prints images/s and pixels/s per bucket");
  bench
      ->add_option("--bucket-tail", bench_bucket_tail, "With --buckets: each bucket's last batch: partial, drop or pad")
      ->capture_default_str();
  bench->add_option("--epochs", bo.epochs, "Epochs to run")->capture_default_str();
  bench->add_option("--seconds", bo.seconds, "Run this long instead of --epochs");
  bench->add_option("--consumer-rate", bo.consumer_rate,
                    "Simulate a consumer (GPU) taking R images/s and report whether the loader keeps up");
  bench->add_option("--prefetch", bo.loader.prefetch, "Batches prepared ahead")->capture_default_str();
  bench->add_option("--fields", bo.loader.fields,
                    "Also deliver these fields of every sample (e.g. --fields txt), as a training job would");
  bench
      ->add_option("--shuffle-buffer", bo.loader.sampler.shuffle_buffer,
                   "Streaming shuffle: shards in random order through a buffer of N samples (0: global shuffle)")
      ->capture_default_str();
  bench->add_flag("--json", bench_json, "Print the figures as JSON (images/s under images_per_s)");
  std::string bench_cache_limit;
  bench->add_option("--cache-dir", bo.loader.remote.cache_dir,
                    "A dataset URL: the cache folder for its shards (default $SHARDPACK_CACHE; without one, "
                    "shards stream through memory with --shuffle-buffer, and the global shuffle reads each "
                    "sample by HTTP range requests). With --buckets, any dataset: where the node's table of "
                    "each sample's bucket is kept, made once and shared by the node's processes");
  bench->add_option("--cache-limit", bench_cache_limit,
                    "A dataset URL: bytes the cache may hold (e.g. 20G; default: no bound)");
  bench
      ->add_option("--prefetch-shards", bo.loader.remote.prefetch_shards,
                   "A dataset URL: shards downloaded ahead in the epoch's order (0: twice --downloads; streamed "
                   "without a cache, no more than fit in 1 GiB)")
      ->capture_default_str();
  bench->add_option("--downloads", bo.loader.remote.downloads, "A dataset URL: downloads at once")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  std::string bench_device = "cpu", bench_dtype = "float32";
  bench->add_option("--device", bench_device, "cpu, or cuda: batches into GPU memory through the CUDA feed")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  bench->add_option("--dtype", bench_dtype, "cuda: uint8 as decoded, or normalised NCHW float32, float16, bfloat16")
      ->check(CLI::IsMember({"uint8", "float32", "float16", "bfloat16"}))
      ->capture_default_str();

  ReportFlags report_flags;
  CLI::App* report = AddReportCommand(app, report_flags);

  std::string doctor_path;
  DoctorOptions dop;
  bool doctor_json = false;
  CLI::App* doctor = app.add_subcommand(
      "doctor",
      "Measure where a training input pipeline starves the GPU (storage, decode, transform, the loader) on a "
      "sample of PATH, and say what to do; reads a bounded sample, writes only into a temporary folder");
  doctor->add_option("PATH", doctor_path, "An image folder (as pack reads it) or a packed dataset folder")->required();
  doctor->add_option("--model-rate", dop.model_rate,
                     "Images/s the training step consumes (time a few steps on one fixed batch); without it the "
                     "verdict says how to measure it");
  doctor->add_option("--batch", dop.batch, "Images per batch for the loader stage")->capture_default_str();
  doctor->add_option("--crop", dop.crop, "Training crop: random-resized-crop to SIZE x SIZE plus flip")
      ->capture_default_str();
  std::string doctor_buckets;
  doctor->add_option(
      "--buckets", doctor_buckets,
      "Aspect-ratio buckets instead of --crop (docs/buckets.md): each stage cuts images to their bucket");
  doctor->add_option("--seconds", dop.seconds, "Time for all the measurements together")->capture_default_str();
  doctor->add_option("--threads", dop.threads, "Threads for the parallel reads and the loader (0 = all cores)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  doctor->add_option("--sample", dop.sample_files, "At most this many files are read")->capture_default_str();
  doctor->add_flag("--cold", dop.cold,
                   "Evict the sample's files from the page cache before reading them (posix_fadvise; no root "
                   "needed), as a real epoch reads");
  doctor->add_flag("--json", doctor_json, "Print every figure as JSON on stdout");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ReportUsageError(app, e, std::vector<std::string>(argv + 1, argv + argc));
  }
  // The environment's settings (SHARDPACK_CACHE, SHARDPACK_HTTP_*, AWS_*, ...) under the flags.
  for (RemoteOptions* r : {&pf.options.remote, &af.options.remote, &cf.options.remote, &vo.remote, &bo.loader.remote}) {
    const Status env = ApplyEnvironment(r);
    if (!env.ok())
      return Fail(app.get_subcommands().empty() ? "shardpack" : app.get_subcommands()[0]->get_name().c_str(), env);
  }
  if (dop.temp_parent.empty()) dop.temp_parent = TempParentFromEnvironment();
  if (pack->parsed()) return RunPack(pf, "pack");
  if (append->parsed()) {
    af.options.append_given = AppendOptionsGiven(*append);
    return RunPack(af, "append");
  }
  if (convert->parsed()) return RunPack(cf, "convert");
  if (subset->parsed()) return RunViewCommand(subset_flags, /*split=*/false);
  if (split->parsed()) return RunViewCommand(split_flags, /*split=*/true);
  if (refresh->parsed()) return RunRefreshCommand(refresh_flags);
  if (verify->parsed()) return RunVerify(verify_dir, vo, verify_json);
  if (merge->parsed()) return RunMerge(merge_dir, merge_json);
  if (slurm->parsed()) {
    so.pack = slurm->remaining();
    return RunSlurmScript(so);
  }
  if (stat->parsed()) {
    return RunStat(stat_dir, stat_json, stat_top, stat_buckets, stat_bucket_choice, stat_threads, stat_html);
  }
  if (report->parsed()) return RunReport(report_flags);
  if (doctor->parsed()) {
    if (!doctor_buckets.empty()) {
      const Status s = ParseBuckets(doctor_buckets, "--buckets", &dop.buckets);
      if (!s.ok()) return Fail("doctor", s);
    }
    return RunDoctor(doctor_path, dop, doctor_json);
  }
  if (bench->parsed()) {
    if (bo.loader.eval) bo.loader.eval_resize = static_cast<uint32_t>(bench_crop * 256 / 224);
    return RunBench(bench_dir, bo, bench_crop, bench_json, bench_device, bench_dtype, bench_cache_limit, bench_sources,
                    bench_buckets, bench_bucket_tail);
  }
  return 2;
}

}  // namespace shardpack
