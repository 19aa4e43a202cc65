#include "tools/report_command.h"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "shardpack/mixture.h"
#include "shardpack/stat.h"
#include "shardpack/thumbnails.h"
#include "shardpack/verify.h"
#include "tools/environment.h"
#include "tools/mixture_flags.h"
#include "tools/progress_printer.h"
#include "tools/report_json.h"
#include "tools/report_page.h"
#include "tools/usage_error.h"

#ifdef SHARDPACK_HAVE_CUDA
#include "ops/cuda/host_to_device_bench.h"
#endif

namespace shardpack {
namespace {

constexpr uint32_t kThumbnailSide = 96;

// base64 (RFC 4648, with padding) of the thumbnails' JPEGs, for their data: URIs.
std::string Base64(const std::string& bytes) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t b0 = uint8_t(bytes[i]);
    const uint32_t b1 = i + 1 < bytes.size() ? uint8_t(bytes[i + 1]) : 0;
    const uint32_t b2 = i + 2 < bytes.size() ? uint8_t(bytes[i + 2]) : 0;
    const uint32_t v = (b0 << 16) | (b1 << 8) | b2;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

nlohmann::json ThumbnailsToJson(const std::vector<Thumbnail>& thumbnails) {
  nlohmann::json out = nlohmann::json::array();
  for (const Thumbnail& t : thumbnails) {
    nlohmann::json j = {{"index", t.index}, {"key", t.key},       {"label", t.label},
                        {"width", t.width}, {"height", t.height}, {"jpeg_base64", Base64(t.jpeg)}};
    if (!t.error.empty()) j["error"] = t.error;
    out.push_back(j);
  }
  return out;
}

// Everything the page shows, each part as its own command's --json gives it.
// `stats_done`: the stat figures when the caller has them (stat --html), else nullptr.
Status BuildReport(ReportFlags& f, const DatasetStats* stats_done, nlohmann::json* report) {
  ProgressPrinter progress(true);  // on stderr, so that --json's stdout stays clean
  DatasetStats stats;
  Status s;
  if (stats_done == nullptr) {
    StatOptions so;
    so.remote = f.remote;
    so.threads = f.threads;
    so.on_shard = [&](uint64_t done, uint64_t total) { progress.UpdateShards("stat", done, total); };
    s = Stat(f.dataset, so, &stats);
    progress.Finish();
    SHARDPACK_RETURN_IF_ERROR(s);
    stats_done = &stats;
  }
  *report = {{"report",
              {{"tool", std::string("shardpack ") + SHARDPACK_VERSION},
               {"dataset", f.dataset},
               {"thumbnail_seed", f.seed},
               {"thumbnail_side", kThumbnailSide}}},
             {"stat", DatasetStatsToJson(*stats_done)},
             {"verify", nullptr},
             {"doctor", nullptr}};
  if (f.verify) {
    VerifyOptions vo;
    vo.remote = f.remote;
    vo.decode = f.decode;
    vo.threads = f.threads;
    vo.on_shard = [&](uint64_t done, uint64_t total) { progress.UpdateShards("verify", done, total); };
    VerifyReport vr;
    s = Verify(f.dataset, vo, &vr);
    progress.Finish();
    SHARDPACK_RETURN_IF_ERROR(s);
    (*report)["verify"] = VerifyReportToJson(vr);
  }
  if (f.doctor) {
    DoctorOptions o = f.doctor_options;
    o.progress = [](const std::string& line) { std::fprintf(stderr, "doctor: %s ...\n", line.c_str()); };
#ifdef SHARDPACK_HAVE_CUDA
    o.host_to_device = MeasureHostToDevice;
#endif
    DoctorReport dr;
    SHARDPACK_RETURN_IF_ERROR(RunDoctor(f.dataset, o, &dr));
    (*report)["doctor"] = DoctorReportToJson(dr);
    (*report)["doctor"]["model_rate"] = o.model_rate;
  }
  ThumbnailOptions to;
  to.remote = f.remote;
  to.count = f.thumbnails;
  to.seed = f.seed;
  to.side = kThumbnailSide;
  std::vector<Thumbnail> thumbnails;
  SHARDPACK_RETURN_IF_ERROR(MakeThumbnails(f.dataset, to, &thumbnails));
  (*report)["thumbnails"] = ThumbnailsToJson(thumbnails);
  return Status::OK();
}

// A mixture's report: each source's, as BuildReport makes it, after the mixture's own table (each
// source's weight, samples and quota of an epoch, by the rules of shardpack/mixture.h).
Status BuildMixtureReport(ReportFlags& f, nlohmann::json* report) {
  Mixture mixture;
  SHARDPACK_RETURN_IF_ERROR(MixtureFromFlags(f.sources, &mixture));
  nlohmann::json sources = nlohmann::json::array();
  std::vector<uint64_t> sizes;
  for (size_t i = 0; i < mixture.sources.size(); ++i) {
    ReportFlags one = f;
    one.sources.clear();
    one.dataset = mixture.sources[i].location;
    nlohmann::json j;
    const Status s = BuildReport(one, nullptr, &j);
    if (!s.ok()) return s.WithPrefix(MixtureSourceName(mixture, i) + ": ");
    sizes.push_back(j["stat"]["samples"].get<uint64_t>());
    sources.push_back(std::move(j));
  }
  MixturePlan plan;
  SHARDPACK_RETURN_IF_ERROR(
      MixturePlan::Create(mixture, sizes, std::vector<std::vector<uint64_t>>(sizes.size()), SamplerOptions(), &plan));
  nlohmann::json table = nlohmann::json::array();
  for (size_t i = 0; i < mixture.sources.size(); ++i) {
    table.push_back({{"dataset", mixture.sources[i].location},
                     {"weight", mixture.sources[i].weight},
                     {"samples", sizes[i]},
                     {"quota", plan.quotas()[i]}});
  }
  *report = {{"report",
              {{"tool", std::string("shardpack ") + SHARDPACK_VERSION},
               {"mixture", {{"sources", table}, {"epoch_size", plan.epoch_size()}, {"warnings", plan.warnings()}}}}},
             {"sources", sources}};
  return Status::OK();
}

Status WritePage(const std::string& path, const nlohmann::json& report, size_t* bytes) {
  const std::string page = ReportPage(report);
  *bytes = page.size();
  return WriteFileAtomically(Env::Default(), path, page);
}

}  // namespace

Status WriteStatPage(ReportFlags& f, const DatasetStats& stats) {
  nlohmann::json report;
  SHARDPACK_RETURN_IF_ERROR(BuildReport(f, &stats, &report));
  size_t bytes = 0;
  return WritePage(f.output, report, &bytes);
}

CLI::App* AddReportCommand(CLI::App& app, ReportFlags& f) {
  CLI::App* c = app.add_subcommand(
      "report",
      "Write one self-contained HTML page about a dataset: size histograms, classes, shards, skipped inputs, "
      "thumbnails; with --verify and --doctor their results too (docs/report.md).");
  c->add_option("DATASET", f.dataset, "Dataset folder, view or URL");
  c->add_option("--source", f.sources,
                "Instead of DATASET, a mixture: --source LOCATION WEIGHT, once per dataset; each source is "
                "reported after a table of their quotas of an epoch (docs/mixing.md)");
  c->add_option("-o,--output", f.output,
                "The page to write (default report.html; one that exists is kept unless --force)");
  c->add_flag("--force", f.force, "Replace the page if it exists (atomically)");
  c->add_flag("--json", f.json, "Print the report's figures as JSON on stdout (the page is drawn from the same JSON)");
  c->add_flag("--verify", f.verify, "Also verify the dataset (reads every shard) and show the result");
  c->add_flag("--decode", f.decode, "With --verify: also decode every image");
  c->add_flag("--doctor", f.doctor, "Also run doctor on the dataset and show its stages against --model-rate");
  c->add_option("--model-rate", f.doctor_options.model_rate, "With --doctor: images/s the training step consumes");
  c->add_option("--doctor-seconds", f.doctor_options.seconds, "With --doctor: time for its measurements")
      ->capture_default_str();
  c->add_option("--thumbnails", f.thumbnails, "How many sample images to show (0: none)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  c->add_option("--seed", f.seed, "Which samples the thumbnails show")->capture_default_str();
  c->add_option("--threads", f.threads, "Sample tables read in parallel (0 = all cores)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  return c;
}

int RunReport(ReportFlags& f) {
  if (const Status env = ApplyEnvironment(&f.remote); !env.ok()) return Fail("report", env);
  if (f.decode && !f.verify) {
    return Fail("report", Status::InvalidArgument("--decode belongs to --verify: give both, or neither"));
  }
  if (f.dataset.empty() == f.sources.empty()) {
    return Fail("report", Status::InvalidArgument(
                              "give a DATASET, or the sources of a mixture with --source LOCATION WEIGHT (repeated)"));
  }
  const std::string page_path = !f.output.empty() ? f.output : f.json ? "" : "report.html";
  // An earlier report (of another dataset, or before a change) is not replaced unasked; said before
  // the work (a --verify or --doctor takes minutes).
  if (!page_path.empty() && !f.force && Env::Default()->FileExists(page_path)) {
    return Fail("report",
                Status::InvalidArgument(page_path + " exists: give --force to replace it, or -o another file"));
  }
  nlohmann::json report;
  const Status built = f.sources.empty() ? BuildReport(f, nullptr, &report) : BuildMixtureReport(f, &report);
  if (!built.ok()) return Fail("report", built);
  if (f.json) std::cout << report.dump(2) << "\n";
  if (!page_path.empty()) {
    size_t bytes = 0;
    if (const Status s = WritePage(page_path, report, &bytes); !s.ok()) return Fail("report", s);
    if (!f.json) {
      const std::string what =
          f.sources.empty() ? f.dataset : "a mixture of " + std::to_string(f.sources.size()) + " datasets";
      std::printf("report %s: %s, %zu bytes\n", page_path.c_str(), what.c_str(), bytes);
    }
  }
  bool problems = false;  // --verify found some, in the dataset or in a source
  for (const nlohmann::json& one : f.sources.empty() ? nlohmann::json::array({report}) : report["sources"]) {
    problems = problems || (one["verify"].is_object() && !one["verify"]["ok"].get<bool>());
  }
  return problems ? 1 : 0;
}

}  // namespace shardpack
