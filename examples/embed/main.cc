// A program that embeds shardpack: opens a packed dataset and prints the labels of its first batch.
// Built against the installed package (README.md, "Embedding"): find_package(shardpack CONFIG) or
// pkg-config shardpack.
#include <shardpack/loader.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DATASET BATCH_SIZE\n", argv[0]);
    return 2;
  }
  shardpack::LoaderOptions options;
  options.sampler.batch_size = std::strtoul(argv[2], nullptr, 10);
  options.sampler.shuffle = false;  // dataset order, so the labels can be checked
  options.height = options.width = 32;
  options.eval = true;
  std::unique_ptr<shardpack::Loader> loader;
  shardpack::Status s = shardpack::Loader::Open(argv[1], options, &loader);
  const shardpack::Batch* batch = nullptr;
  if (s.ok()) s = loader->StartEpoch(0);
  if (s.ok()) s = loader->Next(&batch);
  if (!s.ok() || batch == nullptr) {
    std::fprintf(stderr, "%s\n", s.ok() ? "the dataset is empty" : s.message().c_str());
    return 1;
  }
  for (uint32_t i = 0; i < batch->count; ++i) std::printf("%s%d", i ? " " : "", batch->labels[i]);
  std::printf("\n");
  return 0;
}
