// dump_batches DATASET OUT BATCH SEED SIZE EPOCH FIRST_BATCH RANK WORLD: one epoch of the C++ Loader
// (training transform, NHWC) written out for python/tests to compare the Python loader against:
// OUT.bin holds every batch's image bytes in order, OUT.txt a line "index label" per sample.
// Optional, from the environment: DUMP_SHUFFLE_BUFFER (the streaming shuffle), DUMP_BUCKETS (a
// bucket spec as --buckets takes it; each line then ends with its batch's WxH), and for URLs
// DUMP_CACHE_LIMIT, DUMP_DOWNLOADS and DUMP_PREFETCH_SHARDS (LoaderOptions::remote), and what the
// CLI reads (SHARDPACK_CACHE, AWS_*, ...: tools/environment.h).
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "shardpack/buckets.h"
#include "shardpack/loader.h"
#include "tools/environment.h"

int main(int argc, char** argv) {
  if (argc != 10) {
    std::fprintf(stderr, "usage: %s DATASET OUT BATCH SEED SIZE EPOCH FIRST_BATCH RANK WORLD\n", argv[0]);
    return 2;
  }
  shardpack::LoaderOptions o;
  o.sampler.batch_size = std::strtoull(argv[3], nullptr, 10);
  o.sampler.seed = std::strtoull(argv[4], nullptr, 10);
  o.height = o.width = static_cast<uint32_t>(std::strtoul(argv[5], nullptr, 10));
  o.sampler.rank = static_cast<uint32_t>(std::strtoul(argv[8], nullptr, 10));
  o.sampler.world_size = static_cast<uint32_t>(std::strtoul(argv[9], nullptr, 10));
  const auto from_env = [](const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
  };
  o.sampler.shuffle_buffer = from_env("DUMP_SHUFFLE_BUFFER", 0);
  o.remote.cache_limit = from_env("DUMP_CACHE_LIMIT", 0);
  o.remote.downloads = static_cast<uint32_t>(from_env("DUMP_DOWNLOADS", o.remote.downloads));
  o.remote.prefetch_shards = static_cast<uint32_t>(from_env("DUMP_PREFETCH_SHARDS", 0));
  shardpack::Status s = shardpack::ApplyEnvironment(&o.remote);
  const char* buckets = std::getenv("DUMP_BUCKETS");
  if (s.ok() && buckets != nullptr && *buckets != '\0')
    s = shardpack::ParseBuckets(buckets, "DUMP_BUCKETS", &o.buckets);
  std::unique_ptr<shardpack::Loader> loader;
  if (s.ok()) s = shardpack::Loader::Open(argv[1], o, &loader);
  if (s.ok()) s = loader->StartEpoch(std::strtoull(argv[6], nullptr, 10), std::strtoull(argv[7], nullptr, 10));
  std::ofstream bin(std::string(argv[2]) + ".bin", std::ios::binary), txt(std::string(argv[2]) + ".txt");
  while (s.ok()) {
    const shardpack::Batch* b = nullptr;
    s = loader->Next(&b);
    if (!s.ok() || b == nullptr) break;
    bin.write(reinterpret_cast<const char*>(b->images), static_cast<std::streamsize>(b->image_bytes));
    for (uint32_t i = 0; i < b->count; ++i) {
      txt << b->indices[i] << " " << b->labels[i];
      if (!o.buckets.empty()) txt << " " << b->width << "x" << b->height;
      txt << "\n";
    }
  }
  if (!s.ok()) {
    std::fprintf(stderr, "dump_batches: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
