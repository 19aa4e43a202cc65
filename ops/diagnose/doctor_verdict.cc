#include "ops/diagnose/doctor_verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ground/printable.h"

namespace shardpack {
namespace {

std::string Rate(double images_per_s) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), images_per_s >= 100 ? "%.0f images/s" : "%.1f images/s", images_per_s);
  return buf;
}

std::string Fixed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

// The input layers as the data is stored today, at the report's thread count.
void AddLayers(DoctorReport* r) {
  const double n = r->threads;
  if (r->packed_input) {
    r->layers.push_back({"storage", r->packed_images_per_s,
                         "packed shards read front to back: " + Fixed("%.1f MB/s", r->packed_mb_per_s), true});
  } else {
    r->layers.push_back({"storage", r->readn_files_per_s,
                         "small files, " + std::to_string(r->threads) + " threads: " +
                             Fixed("%.1f MB/s", r->readn_mb_per_s) + "; 1 thread " + Rate(r->read1_files_per_s) +
                             (r->page_cache_held ? " (from the page cache)"
                              : r->cold          ? " (cold cache)"
                                                 : ""),
                         true});
  }
  if (r->crop_decode_together > 0) {
    // Measured on every thread at once: what the cores decode together, not one core's rate x n.
    r->layers.push_back({"decode", r->crop_decode_together,
                         std::to_string(r->threads) + " threads at once (crop-aware; " + Rate(r->crop_decode_per_core) +
                             " on one core alone), " + Rate(r->full_decode_per_core) + " per core (whole image)",
                         true});
  } else if (r->crop_decode_per_core > 0) {
    r->layers.push_back({"decode", r->crop_decode_per_core * n,
                         Rate(r->crop_decode_per_core) + " per core (crop-aware), " + Rate(r->full_decode_per_core) +
                             " per core (whole image), x " + std::to_string(r->threads) + " threads",
                         true});
  }
  if (r->transform_per_core > 0) {
    r->layers.push_back({"transform", r->transform_per_core * n,
                         Rate(r->transform_per_core) + " per core, x " + std::to_string(r->threads) + " threads",
                         true});
  }
  if (r->host_to_device_measured) {
    const HostToDeviceFigures& h = r->host_to_device;
    r->layers.push_back({"host to device", r->host_to_device_images_per_s,
                         Fixed("pinned %.1f GB/s", h.pinned_gb_per_s) +
                             Fixed(", pageable %.1f GB/s", h.pageable_gb_per_s) + " (" + h.device + ")",
                         true});
  } else {
    r->layers.push_back({"host to device", 0, r->host_to_device_note, false});
  }
}

// The rate the pipeline feeds as the data is stored today, and what limits it.
struct FeedLimit {
  double images_per_s = 0;
  std::string layer;        // the bottleneck's name: "storage", "decode", "transform", "host to device"
  std::string source;       // how the rate was found, for the verdict's parenthesis
  double cpu_per_core = 0;  // images/s one thread turns into batch rows (decode and transform together)
};

// Decode and transform run one after the other on the same threads, so their per-core rates add as
// 1/(1/d + 1/t), never as the slower of the two. The loader measures that work as the training
// path does it (and, for a packed dataset, the reads too), so where it ran its rate is the CPU's:
// a figure above the loader's own row would promise what the loader did not do.
FeedLimit FindFeedLimit(const DoctorReport& r) {
  FeedLimit f;
  const double d = r.crop_decode_per_core, t = r.transform_per_core;
  const std::string costlier = d > 0 && (t <= 0 || d <= t) ? "decode" : "transform";
  if (r.loader_images_per_s > 0) {
    f.images_per_s = r.loader_images_per_s;
    // An image folder's loader read a shard just written to the temporary folder, not the storage.
    f.layer = r.packed_input && r.loader_slowest_stage == "read" ? "storage" : costlier;
    f.source = "the loader's measured rate; slowest stage: " + r.loader_slowest_stage;
    f.cpu_per_core = r.loader_images_per_s / std::max(1, r.threads);
  } else if (d > 0 || t > 0) {
    // A core's decode rate while every thread decodes, where that was measured.
    const double d_busy = r.crop_decode_together > 0 ? r.crop_decode_together / std::max(1, r.threads) : d;
    f.cpu_per_core = 1 / ((d_busy > 0 ? 1 / d_busy : 0) + (t > 0 ? 1 / t : 0));
    f.images_per_s = f.cpu_per_core * std::max(1, r.threads);
    f.layer = costlier;
    f.source = "decode and transform sharing " + std::to_string(r.threads) + " threads, " + Rate(f.cpu_per_core) +
               " per core (estimate)";
  }
  // Storage and the copy to the device are separate resources: each bounds the feed on its own.
  for (const DoctorLayer& l : r.layers) {
    if (!l.measured || (l.name != "storage" && l.name != "host to device")) continue;
    if (f.layer.empty() || l.images_per_s < f.images_per_s) {
      f.images_per_s = l.images_per_s;
      f.layer = l.name;
      f.source = "slowest layer: " + l.name;
    }
  }
  if (f.layer.empty()) f.layer = "storage";
  return f;
}

}  // namespace

void DrawVerdict(const DoctorOptions& o, DoctorReport* r) {
  r->layers.clear();
  r->actions.clear();
  AddLayers(r);
  const FeedLimit limit = FindFeedLimit(*r);
  r->feed_today = limit.images_per_s;
  const std::string input_layer = limit.layer;
  std::stable_sort(r->layers.begin(), r->layers.end(), [](const DoctorLayer& a, const DoctorLayer& b) {
    if (a.measured != b.measured) return a.measured;
    return a.images_per_s > b.images_per_s;
  });
  const double loader = r->loader_images_per_s;

  const bool input_bound = o.model_rate <= 0 || o.model_rate > r->feed_today;
  r->bottleneck = input_bound ? input_layer : "gpu";
  if (o.model_rate <= 0) {
    r->verdict = "the input pipeline feeds " + Rate(r->feed_today) + " as stored today (" + limit.source + ")" +
                 (r->packed_input ? std::string() : "; the loader over the sample packed to wds fed " + Rate(loader)) +
                 ". Whether that starves the GPU depends on the model's rate: time 50 training steps on one fixed "
                 "batch already in GPU memory (images/s = batch x steps / seconds) and rerun with --model-rate";
  } else if (input_bound) {
    r->verdict = "the input pipeline is the bottleneck: it feeds " + Rate(r->feed_today) + " (" + limit.source +
                 ") and the model takes " + Rate(o.model_rate) + "; the GPU waits " +
                 Fixed("%.0f%%", 100 * (1 - r->feed_today / o.model_rate)) + " of the time";
  } else {
    r->verdict = "the GPU is the bottleneck: the input pipeline feeds " + Rate(r->feed_today) + " (" + limit.source +
                 ") and the model takes " + Rate(o.model_rate) + " (" + Fixed("%.1fx", r->feed_today / o.model_rate) +
                 " headroom)";
  }

  // What would help, for the layer that limits (or, without a model rate, the slowest).
  if (!input_bound) return;
  const double target = o.model_rate > 0 ? o.model_rate : 0;
  if (input_layer == "storage" && !r->packed_input) {
    r->actions.push_back("pack to wds (shardpack pack " + r->path + " OUT): the packed sample read front to back at " +
                         Fixed("%.1f MB/s", r->packed_mb_per_s) + " (" + Rate(r->packed_images_per_s) +
                         ", measured) against " + Rate(r->readn_files_per_s) +
                         " as small files; the loader over it fed " + Rate(loader) + " (measured)");
  }
  // The loader's reads can be slow where the storage streams fast: the global shuffle reads each
  // sample at a random place in the dataset (a shard's index for each shard it enters), the
  // sequential figure front to back. Twice as fast front to back says the order, not the device.
  const bool random_reads = loader > 0 && r->loader_slowest_stage == "read" && r->packed_images_per_s >= 2 * loader;
  if (input_layer == "storage" && r->packed_input && random_reads) {
    r->actions.push_back(
        "the loader's random reads are the limit, not the storage's speed: the shards read front to back at " +
        Fixed("%.1f MB/s", r->packed_mb_per_s) + " (" + Rate(r->packed_images_per_s) +
        "), but the global shuffle reads each sample from a random shard (loading that shard's index): " +
        Rate(loader) + ". The streaming shuffle reads shards front to back: measure it with shardpack bench " +
        r->path + " --shuffle-buffer 10000 (Loader(shuffle_buffer=10000)), and its mixing in bench's shuffle quality");
  } else if (input_layer == "storage" && r->packed_input) {
    r->actions.push_back("storage is slow even for sequential reads (" + Fixed("%.1f MB/s", r->packed_mb_per_s) +
                         "): copy the dataset to local disk, or read it from an object store with a cache "
                         "(docs/remote.md)");
  }
  if (input_layer == "decode" || input_layer == "transform") {
    // Per core as the feed's own figure gives it, so that the advice follows from the verdict's rate.
    const double per_core = limit.cpu_per_core;
    const std::string per_core_source =
        loader > 0 ? " (the loader's " + Rate(loader) + " over " + std::to_string(r->threads) + " threads)" : "";
    if (target > 0 && per_core > 0) {
      const int cores = int(std::ceil(target / per_core));
      r->actions.push_back("more threads: at " + Rate(per_core) + " per core" + per_core_source + ", " + Rate(target) +
                           " needs " + std::to_string(cores) + " cores (this machine has " + std::to_string(r->cores) +
                           "; estimate)");
    } else if (r->threads < int(r->cores)) {
      r->actions.push_back("more threads: " + std::to_string(r->threads) + " of " + std::to_string(r->cores) +
                           " cores were used; --threads " + std::to_string(r->cores) + " gives about " +
                           Rate(per_core * double(r->cores)) + " (estimate)");
    }
  }
  if (input_layer == "host to device") {
    r->actions.push_back("copy from pinned memory (shardpack.Loader(device=\"cuda\") does: " +
                         Fixed("%.1f GB/s", r->host_to_device.pinned_gb_per_s) + " against " +
                         Fixed("%.1f GB/s", r->host_to_device.pageable_gb_per_s) +
                         " pageable, measured), and send uint8 batches, normalising on the GPU (4x fewer bytes "
                         "than float32)");
  }
  // A packed dataset (or a view) is converted, not packed again from a source it may not have.
  const std::string to_raw = r->packed_input ? "shardpack convert " + Printable(r->path) + " OUT --format raw"
                                             : std::string("shardpack pack SRC OUT --format raw");
  if (input_layer == "decode" && !o.buckets.empty()) {
    // Buckets cut at load time: stored pixels must keep each image whole (raw --keep-size).
    const double raw_bytes = 3e6 * r->median_megapixels;
    r->actions.push_back(
        "pre-decode to raw at each image's own size (" + to_raw +
        " --keep-size): no decode at "
        "load time, and the buckets still cut each image as it loads; costs " +
        Fixed("%.0f KB", raw_bytes / 1e3) + " of disk per image at the median size, " +
        (r->mean_image_bytes > 0 ? Fixed("%.1fx", raw_bytes / r->mean_image_bytes) : std::string("?")) +
        " the encoded size (estimate)");
    if (r->share_above_2x_crop > 0.2) {
      uint32_t side = 0;  // the largest bucket side: --max-side at twice it keeps every bucket's detail
      for (const Bucket& b : o.buckets) side = std::max({side, b.width, b.height});
      r->actions.push_back(Fixed("fewer pixels at pack time: %.0f%%", 100 * r->share_above_2x_crop) +
                           " of the images have a shorter side over 2x their bucket's (median " +
                           Fixed("%.1f megapixels", r->median_megapixels) +
                           "); decode time grows with pixels, so packing with --max-side " + std::to_string(2 * side) +
                           " (2x the largest bucket side) pays on every epoch (estimate)");
    }
  } else if (input_layer == "decode") {
    const double raw_bytes = 3.0 * o.crop * o.crop;
    r->actions.push_back(
        "pre-decode to raw (" + to_raw + " --crop " + std::to_string(o.crop) + "): no decode at load time; costs " +
        Fixed("%.0f KB", raw_bytes / 1e3) + " of disk per image, " +
        (r->mean_image_bytes > 0 ? Fixed("%.1fx", raw_bytes / r->mean_image_bytes) : std::string("?")) +
        " the encoded size (estimate), and fixes the crop at pack time");
    if (r->share_above_2x_crop > 0.2) {
      r->actions.push_back(Fixed("fewer pixels at pack time: %.0f%%", 100 * r->share_above_2x_crop) +
                           " of the images have a shorter side over 2x the crop (median " +
                           Fixed("%.1f megapixels", r->median_megapixels) +
                           "); decode time grows with pixels, so resizing them once at pack time "
                           "(--format raw --keep-size --resize " +
                           std::to_string(2 * o.crop) + ") pays on every epoch (estimate)");
    }
  }
}

}  // namespace shardpack
