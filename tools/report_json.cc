#include "tools/report_json.h"

namespace shardpack {
namespace {

nlohmann::json PercentilesToJson(const DatasetStats::Percentiles& p) {
  return {{"min", p.min}, {"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"max", p.max}, {"mean", p.mean}};
}

// A LogHistogram with its bins' edges spelled out (counts.size() + 1 of them), so that a reader (the
// report page) needs no rule to draw it.
nlohmann::json HistogramToJson(const LogHistogram& h) {
  nlohmann::json edges = nlohmann::json::array();
  for (size_t k = 0; k <= h.counts.size(); ++k) edges.push_back(h.lower_edge(k));
  return {{"steps_per_octave", h.steps_per_octave},
          {"first", h.first},
          {"edges", edges},
          {"counts", h.counts},
          {"zero", h.zero}};
}

}  // namespace

nlohmann::json PackResultToJson(const PackResult& r, const std::string& out) {
  const Manifest& m = r.manifest;
  nlohmann::json skipped = nlohmann::json::array();
  for (const SkippedFile& f : m.skipped) skipped.push_back({{"path", f.path}, {"reason", f.reason}});
  return {{"output", out},
          {"format", std::string(DatasetFormatName(m.format))},
          {"samples", m.samples},
          {"skipped", m.skipped.size()},
          {"shards", m.shards.size()},
          {"bytes_written", m.bytes},
          {"bytes_read", r.bytes_read},
          {"seconds", r.seconds},
          {"already_complete", r.already_complete},
          {"classes", m.classes.size()},
          {"empty_classes", m.empty_classes},
          {"skipped_files", skipped},
          {"reencoded", r.reencoded},
          {"cmyk_to_rgb", r.cmyk_to_rgb}};
}

nlohmann::json VerifyReportToJson(const VerifyReport& r) {
  nlohmann::json problems = nlohmann::json::array();
  for (const VerifyProblem& p : r.problems) {
    problems.push_back({{"shard", p.shard}, {"key", p.key}, {"problem", p.what}});
  }
  nlohmann::json j = {{"ok", r.clean()},     {"format", std::string(DatasetFormatName(r.format))},
                      {"shards", r.shards},  {"samples", r.samples},
                      {"bytes", r.bytes},    {"images_decoded", r.images_decoded},
                      {"problems", problems}};
  if (!r.view_base.empty()) j["view"] = {{"base", r.view_base}, {"samples", r.view_samples}};
  return j;
}

nlohmann::json DatasetStatsToJson(const DatasetStats& s) {
  nlohmann::json classes = nlohmann::json::array();
  for (const ClassCount& c : s.classes) {
    classes.push_back({{"name", c.name}, {"label", c.label}, {"samples", c.samples}});
  }
  nlohmann::json result = {{"name", s.name},
                           {"generation", s.generation},
                           {"format", std::string(DatasetFormatName(s.format))},
                           {"samples", s.samples},
                           {"shards", s.shards},
                           {"bytes", s.bytes},
                           {"sample_bytes_total", s.sample_bytes_total},
                           {"skipped", s.skipped},
                           {"sample_bytes", PercentilesToJson(s.sample_bytes)},
                           {"width", PercentilesToJson(s.width)},
                           {"height", PercentilesToJson(s.height)},
                           {"reencoded", s.reencoded},
                           {"original_width", PercentilesToJson(s.original_width)},
                           {"original_height", PercentilesToJson(s.original_height)},
                           {"image_formats", s.image_formats},
                           {"fields", s.fields},
                           {"classes", classes},
                           {"unlabelled", s.unlabelled}};
  if (!s.view_base.empty()) result["view"] = {{"base", s.view_base}, {"base_newer_samples", s.view_base_newer}};
  result["histograms"] = {{"width", HistogramToJson(s.width_histogram)},
                          {"height", HistogramToJson(s.height_histogram)},
                          {"aspect", HistogramToJson(s.aspect_histogram)},
                          {"sample_bytes", HistogramToJson(s.sample_bytes_histogram)},
                          {"original_width", HistogramToJson(s.original_width_histogram)},
                          {"original_height", HistogramToJson(s.original_height_histogram)},
                          {"shard_bytes", HistogramToJson(s.shard_bytes_histogram)},
                          {"shard_samples", HistogramToJson(s.shard_samples_histogram)}};
  nlohmann::json odd = nlohmann::json::array();
  for (const OddShard& o : s.odd_shards) {
    odd.push_back({{"index", o.index}, {"file", o.name}, {"samples", o.samples}, {"bytes", o.bytes}, {"why", o.why}});
  }
  result["odd_shards"] = odd;
  result["odd_shard_count"] = s.odd_shard_count;
  nlohmann::json skipped = nlohmann::json::array();
  for (const SkippedFile& f : s.skipped_files) skipped.push_back({{"path", f.path}, {"reason", f.reason}});
  result["skipped_files"] = skipped;
  if (!s.buckets.empty()) {
    nlohmann::json buckets = nlohmann::json::array();
    for (const BucketCount& b : s.buckets) {
      buckets.push_back({{"width", b.bucket.width},
                         {"height", b.bucket.height},
                         {"samples", b.samples},
                         {"cropped_share", b.cropped_share},
                         {"upscaled", b.upscaled},
                         {"max_upscale", b.max_upscale}});
    }
    result["buckets"] = buckets;
    result["unsized"] = s.unsized;
    result["bucket_left_out"] = s.bucket_left_out;
  }
  return result;
}

nlohmann::json ShuffleQualityToJson(const ShuffleQuality& q) {
  nlohmann::json buffers = nlohmann::json::object();
  for (const auto& [samples, value] : q.buffers) buffers[std::to_string(samples)] = value;
  return {{"statistic", "mean total-variation distance of a batch's shard histogram from the epoch's"},
          {"shards", q.shards},
          {"batches", q.batches},
          {"loader", q.loader},
          {"global", q.global},
          {"buffers", buffers},
          {"ideal", q.ideal}};
}

nlohmann::json BenchResultToJson(const BenchResult& r) {
  nlohmann::json buckets = nlohmann::json::array();
  for (const BucketRate& b : r.buckets) {
    buckets.push_back({{"width", b.bucket.width},
                       {"height", b.bucket.height},
                       {"batches", b.batches},
                       {"images", b.images},
                       {"fill_seconds", b.fill_seconds},
                       {"images_per_s", b.images_per_second},
                       {"pixels_per_s", b.pixels_per_second}});
  }
  return {{"batches", r.batches},
          {"images", r.images},
          {"corrupt", r.corrupt},
          {"open_seconds", r.open_seconds},
          {"seconds", r.seconds},
          {"images_per_s", r.images_per_second},
          {"bytes_per_s", r.bytes_per_second},
          {"read_seconds", r.read_seconds},
          {"decode_seconds", r.decode_seconds},
          {"consumer_wait_seconds", r.consumer_wait_seconds},
          {"consumer_wait_share", r.consumer_wait_share},
          {"cpu_seconds", r.cpu_seconds},
          {"cores_busy", r.cores_busy},
          {"keeps_up", r.consumer_simulated ? nlohmann::json(r.keeps_up) : nlohmann::json()},  // null: not asked
          {"predecoded", r.predecoded},
          {"device", r.device},
          {"copy_seconds", r.copy_seconds},
          {"copy_busy_share", r.copy_busy_share},
          {"shuffle_quality", ShuffleQualityToJson(r.shuffle_quality)},
          {"pixels", r.pixels},
          {"pixels_per_s", r.pixels_per_second},
          {"buckets", buckets},
          {"warnings", r.warnings}};
}

nlohmann::json DoctorReportToJson(const DoctorReport& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const DoctorLayer& l : r.layers) {
    layers.push_back(
        {{"name", l.name}, {"images_per_s", l.images_per_s}, {"detail", l.detail}, {"measured", l.measured}});
  }
  return {{"path", r.path},
          {"packed_input", r.packed_input},
          {"threads", r.threads},
          {"cores", r.cores},
          {"storage",
           {{"files_listed", r.files_listed},
            {"list_seconds", r.list_seconds},
            {"files_listed_per_s", r.files_listed_per_s},
            {"sample_files", r.sample_files},
            {"sample_bytes", r.sample_bytes},
            {"read1_files_per_s", r.read1_files_per_s},
            {"read1_mb_per_s", r.read1_mb_per_s},
            {"readn_files_per_s", r.readn_files_per_s},
            {"readn_mb_per_s", r.readn_mb_per_s},
            {"reread_files_per_s", r.reread_files_per_s},
            {"cached_share", r.cached_share},
            {"page_cache_held", r.page_cache_held},
            {"cold", r.cold},
            {"packed_mb_per_s", r.packed_mb_per_s},
            {"packed_images_per_s", r.packed_images_per_s},
            {"packed_cached_share", r.packed_cached_share}}},
          {"decode",
           {{"images", r.decoded},
            {"full_decode_per_core", r.full_decode_per_core},
            {"crop_decode_per_core", r.crop_decode_per_core},
            {"crop_decode_together", r.crop_decode_together},
            {"median_width", r.median_width},
            {"median_height", r.median_height},
            {"median_megapixels", r.median_megapixels},
            {"p90_megapixels", r.p90_megapixels},
            {"share_above_2x_crop", r.share_above_2x_crop},
            {"mean_image_bytes", r.mean_image_bytes}}},
          {"transform", {{"per_core", r.transform_per_core}}},
          {"host_to_device",
           {{"measured", r.host_to_device_measured},
            {"note", r.host_to_device_note},
            {"device", r.host_to_device.device},
            {"pageable_gb_per_s", r.host_to_device.pageable_gb_per_s},
            {"pinned_gb_per_s", r.host_to_device.pinned_gb_per_s},
            {"pinned_batches_per_s", r.host_to_device.pinned_batches_per_s},
            {"images_per_s", r.host_to_device_images_per_s}}},
          {"loader",
           {{"images_per_s", r.loader_images_per_s},
            {"read_seconds", r.loader_read_seconds},
            {"decode_seconds", r.loader_decode_seconds},
            {"slowest_stage", r.loader_slowest_stage}}},
          {"layers", layers},
          {"feed_today", r.feed_today},
          {"bottleneck", r.bottleneck},
          {"verdict", r.verdict},
          {"actions", r.actions}};
}

}  // namespace shardpack
