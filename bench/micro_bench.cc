// Micro-benchmarks of what pack does per image besides reading it: probing the header, hashing,
// and appending members to a tar shard. Run: build/release/bench/shardpack_micro_bench
#include <benchmark/benchmark.h>

#include <cstdio>

#include "formats/wds/tar_shard_writer.h"
#include "shardpack/checksum.h"
#include "shardpack/image.h"
#include "tests/support/image_factory.h"

namespace shardpack {
namespace {

const std::string& Jpeg() {
  static const std::string jpeg = testing::MakeImage(ImageFormat::kJpeg, 500, 375, 1);
  return jpeg;
}

void BM_ProbeJpeg(benchmark::State& state) {
  ImageInfo info;
  for (auto _ : state) benchmark::DoNotOptimize(ProbeImage(Jpeg(), &info));
  state.SetBytesProcessed(int64_t(state.iterations()) * Jpeg().size());
}
BENCHMARK(BM_ProbeJpeg);

void BM_DecodeJpeg(benchmark::State& state) {
  DecodedImage image;
  for (auto _ : state) benchmark::DoNotOptimize(DecodeImage(Jpeg(), 1u << 30, &image));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeJpeg);

void BM_Xxh64(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Xxh64(Jpeg()));
  state.SetBytesProcessed(int64_t(state.iterations()) * Jpeg().size());
}
BENCHMARK(BM_Xxh64);

void BM_TarAppend(benchmark::State& state) {
  const std::string path = "/tmp/shardpack_micro_bench.tar";
  std::unique_ptr<WritableFile> file;
  if (!Env::Default()->NewWritableFile(path, &file).ok()) {
    state.SkipWithError("cannot create temporary file");
    return;
  }
  TarShardWriter writer(std::move(file));
  uint64_t offset = 0;
  for (auto _ : state) {
    writer.BeginRange();
    benchmark::DoNotOptimize(writer.AddMember("000000001.jpg", Jpeg(), &offset));
    benchmark::DoNotOptimize(writer.range_checksum());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * Jpeg().size());
  (void)writer.Finish(false);
  std::remove(path.c_str());
}
BENCHMARK(BM_TarAppend);

}  // namespace
}  // namespace shardpack

BENCHMARK_MAIN();
