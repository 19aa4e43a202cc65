// LoaderOptionsFrom, MixtureFrom: loader_options.h.
#include "loader_options.h"

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "option_values.h"
#include "python_errors.h"
#include "tools/environment.h"

namespace py = pybind11;

namespace shardpack {

namespace {

// A dataset URL's options (docs/remote.md): keys as RemoteOptions names them.
RemoteOptions RemoteOptionsFrom(const py::dict& remote) {
  RemoteOptions o;
  for (const auto& item : remote) {
    const std::string key = py::str(item.first);
    if (key == "cache_dir")
      o.cache_dir = item.second.is_none() ? "" : py::str(item.second).cast<std::string>();
    else if (key == "cache_limit")
      o.cache_limit = SizeOptionValue("cache_limit", item.second);
    else if (key == "prefetch_shards")
      o.prefetch_shards = OptionValue<uint32_t>("prefetch_shards", item.second, kCount);
    else if (key == "downloads")
      o.downloads = OptionValue<uint32_t>("downloads", item.second, kCount);
    else
      throw py::value_error("unknown remote option '" + key + "'");
  }
  return o;
}

}  // namespace

// The loader's options from shardpack.Loader's keywords (python/shardpack/loader.py), in one place
// for the CPU loader and the CUDA feed. A keyword this table does not know is a TypeError naming it,
// so that a renamed option cannot be dropped silently. The environment's settings (SHARDPACK_CACHE
// when cache_dir is None, SHARDPACK_HTTP_*, AWS_*) are read here, at the edge (tools/environment.h).
LoaderOptions LoaderOptionsFrom(const py::kwargs& kwargs) {
  using Set = void (*)(LoaderOptions&, py::handle);
  static const std::map<std::string, Set> kSetters = {
      {"batch_size",
       [](LoaderOptions& o, py::handle v) { o.sampler.batch_size = OptionValue<uint64_t>("batch_size", v, kCount); }},
      {"shuffle", [](LoaderOptions& o, py::handle v) { o.sampler.shuffle = OptionValue<bool>("shuffle", v, kBool); }},
      {"seed", [](LoaderOptions& o, py::handle v) { o.sampler.seed = OptionValue<uint64_t>("seed", v, kCount); }},
      {"shuffle_buffer",
       [](LoaderOptions& o, py::handle v) {
         o.sampler.shuffle_buffer = OptionValue<uint64_t>("shuffle_buffer", v, kCount);
       }},
      {"drop_last",
       [](LoaderOptions& o, py::handle v) { o.sampler.drop_last = OptionValue<bool>("drop_last", v, kBool); }},
      {"rank", [](LoaderOptions& o, py::handle v) { o.sampler.rank = OptionValue<uint32_t>("rank", v, kCount); }},
      {"world_size",
       [](LoaderOptions& o, py::handle v) { o.sampler.world_size = OptionValue<uint32_t>("world_size", v, kCount); }},
      {"worker", [](LoaderOptions& o, py::handle v) { o.sampler.worker = OptionValue<uint32_t>("worker", v, kCount); }},
      {"num_workers",
       [](LoaderOptions& o, py::handle v) { o.sampler.num_workers = OptionValue<uint32_t>("num_workers", v, kCount); }},
      {"height", [](LoaderOptions& o, py::handle v) { o.height = OptionValue<uint32_t>("height", v, kCount); }},
      {"width", [](LoaderOptions& o, py::handle v) { o.width = OptionValue<uint32_t>("width", v, kCount); }},
      {"eval", [](LoaderOptions& o, py::handle v) { o.eval = OptionValue<bool>("eval", v, kBool); }},
      {"eval_resize",
       [](LoaderOptions& o, py::handle v) { o.eval_resize = OptionValue<uint32_t>("eval_resize", v, kCount); }},
      {"scale",
       [](LoaderOptions& o, py::handle v) {
         std::tie(o.scale_min, o.scale_max) = OptionValue<std::pair<double, double>>("scale", v, kPair);
       }},
      {"ratio",
       [](LoaderOptions& o, py::handle v) {
         std::tie(o.ratio_min, o.ratio_max) = OptionValue<std::pair<double, double>>("ratio", v, kPair);
       }},
      {"flip", [](LoaderOptions& o, py::handle v) { o.flip = OptionValue<double>("flip", v, kNumber); }},
      {"nchw", [](LoaderOptions& o, py::handle v) { o.nchw = OptionValue<bool>("nchw", v, kBool); }},
      {"threads", [](LoaderOptions& o, py::handle v) { o.threads = OptionValue<int>("threads", v, kInt); }},
      {"prefetch", [](LoaderOptions& o, py::handle v) { o.prefetch = OptionValue<uint32_t>("prefetch", v, kCount); }},
      {"skip_corrupt",
       [](LoaderOptions& o, py::handle v) { o.skip_corrupt = OptionValue<bool>("skip_corrupt", v, kBool); }},
      {"fast_decode",
       [](LoaderOptions& o, py::handle v) { o.fast_decode = OptionValue<bool>("fast_decode", v, kBool); }},
      {"fields",
       [](LoaderOptions& o, py::handle v) { o.fields = OptionValue<std::vector<std::string>>("fields", v, kNames); }},
      {"require_fields",
       [](LoaderOptions& o, py::handle v) { o.require_fields = OptionValue<bool>("require_fields", v, kBool); }},
      {"mask", [](LoaderOptions& o, py::handle v) { o.mask = OptionValue<std::string>("mask", v, kText); }},
      {"buckets",
       [](LoaderOptions& o, py::handle v) {
         Raise(ParseBuckets(OptionValue<std::string>("buckets", v, kText), "buckets", &o.buckets));
       }},
      {"patch", [](LoaderOptions& o, py::handle v) { o.patch = OptionValue<uint32_t>("patch", v, kCount); }},
      {"max_side", [](LoaderOptions& o, py::handle v) { o.max_side = OptionValue<uint32_t>("max_side", v, kCount); }},
      {"tokens_per_batch",
       [](LoaderOptions& o, py::handle v) {
         o.tokens_per_batch = OptionValue<uint64_t>("tokens_per_batch", v, kCount);
       }},
      {"bucket_tail",
       [](LoaderOptions& o, py::handle v) {
         Raise(ParseBucketTail(OptionValue<std::string>("bucket_tail", v, kText), "bucket_tail", &o.bucket_tail));
       }},
      {"bucket_no_upscale",
       [](LoaderOptions& o, py::handle v) {
         o.bucket_choice.no_upscale = OptionValue<bool>("bucket_no_upscale", v, kBool);
       }},
      {"bucket_min_side",
       [](LoaderOptions& o, py::handle v) {
         o.bucket_choice.min_side = OptionValue<uint32_t>("bucket_min_side", v, kCount);
       }},
      {"remote", [](LoaderOptions& o, py::handle v) { o.remote = RemoteOptionsFrom(v.cast<py::dict>()); }},
  };
  LoaderOptions o;
  for (const auto& item : kwargs) {
    const std::string key = py::str(item.first);
    const auto setter = kSetters.find(key);
    if (setter == kSetters.end()) throw py::type_error("unknown loader option '" + key + "'");
    setter->second(o, item.second);
  }
  Raise(ApplyEnvironment(&o.remote));
  return o;
}

// A mixture from shardpack.Loader's `sources` (python/shardpack/loader.py checks and completes it):
// {"sources": [{"location", "weight", "samples", "passes"}], "epoch_size", "per_source_batches",
// "shared_classes"}.
Mixture MixtureFrom(const py::dict& d) {
  Mixture m;
  for (py::handle item : d["sources"].cast<py::list>()) {
    const py::dict source = item.cast<py::dict>();
    MixtureSource s;
    s.location = source["location"].cast<std::string>();
    s.weight = source["weight"].cast<double>();
    s.samples = source["samples"].cast<uint64_t>();
    s.passes = source["passes"].cast<double>();
    m.sources.push_back(s);
  }
  m.epoch_size = d["epoch_size"].cast<uint64_t>();
  m.per_source_batches = d["per_source_batches"].cast<bool>();
  m.shared_classes = d["shared_classes"].cast<bool>();
  return m;
}

}  // namespace shardpack
