// Fuzz target: a Parquet file as shardpack reads it (formats/parquet/parquet_file.h): the footer
// and schema through Arrow's Parquet library, the "huggingface" metadata, the choice of columns,
// every row group's pages, each row's image, label and fields, and a row's image read from its own
// page by the page index. Arrow's own parser is not ours to fix; what is fuzzed is that nothing it
// throws or returns gets past shardpack's wrappers, and that our use of what it returns (views into
// its buffers, page offsets, label ranges) stays in bounds.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "formats/parquet/parquet_file.h"
#include "memory_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardpack;
  fuzz::MemoryEnv env;
  env.Put("f.parquet", std::string(reinterpret_cast<const char*>(data), size));
  std::unique_ptr<ParquetFile> file;
  if (!ParquetFile::Open(&env, "f.parquet", &file).ok()) return 0;
  for (int g = 0; g < file->row_groups() && g < 8; ++g) {
    // A row's image from its own page, by the page index (whose offsets may claim anything).
    ParquetImagePages pages;
    if (file->ImagePages(g, &pages)) {
      for (uint64_t r = 0; r < file->rows(g) && r < 16; ++r) {
        std::string bytes;
        bool null = false;
        (void)file->ReadImageByPage(g, pages, r, &bytes, &null);
      }
    }
    ParquetRows rows;
    if (!file->ReadRowGroup(g, /*want_fields=*/true, &rows).ok()) continue;
    for (uint64_t r = 0; r < rows.size(); ++r) {
      std::string_view image;
      int32_t label = 0;
      if (rows.Image(r, &image).ok() && !image.empty()) (void)image[image.size() - 1];
      (void)rows.Label(r, &label);
      (void)rows.Fields(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  return 0;
}
