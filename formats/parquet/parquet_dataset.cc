#include "formats/parquet/parquet_dataset.h"

#include <tbb/parallel_for.h>

#include <charconv>
#include <memory>

#include "formats/parquet/parquet_file.h"

namespace shardpack {
namespace {

struct FileSummary {
  Status status;
  ParquetLayout layout;
  std::vector<uint64_t> rows, bytes;  // per row group
};

// Runs on the pool's threads: nothing may escape.
void Summarize(Env* env, const std::string& path, FileSummary* summary) {
  try {
    std::unique_ptr<ParquetFile> file;
    summary->status = ParquetFile::Open(env, path, &file);
    if (!summary->status.ok()) return;
    summary->layout = file->layout();
    for (int g = 0; g < file->row_groups(); ++g) {
      summary->rows.push_back(file->rows(g));
      summary->bytes.push_back(file->bytes(g));
    }
  } catch (const std::exception& e) {
    summary->status = Status::DataLoss(path + ": " + e.what());
  }
}

}  // namespace

std::string ParquetShardName(const std::string& file, int row_group) { return file + "#" + std::to_string(row_group); }

bool ParseParquetShardName(std::string_view name, std::string* file, int* row_group) {
  const size_t hash = name.find_last_of('#');
  if (hash == std::string_view::npos || hash == 0 || hash + 1 == name.size()) return false;
  const char* end = name.data() + name.size();
  const auto [at, ec] = std::from_chars(name.data() + hash + 1, end, *row_group);
  if (ec != std::errc() || at != end || *row_group < 0) return false;
  file->assign(name.substr(0, hash));
  return true;
}

Status OpenParquetDataset(Env* env, const std::string& location, ParquetDataset* dataset) {
  *dataset = ParquetDataset();
  dataset->location = location;
  SHARDPACK_RETURN_IF_ERROR(ListParquetFiles(env, location, &dataset->files));
  const std::vector<std::string>& names = dataset->files.names;
  std::vector<FileSummary> summaries(names.size());
  tbb::parallel_for(size_t(0), names.size(),
                    [&](size_t i) { Summarize(env, JoinPath(dataset->files.base, names[i]), &summaries[i]); });
  for (size_t i = 0; i < names.size(); ++i) {
    SHARDPACK_RETURN_IF_ERROR(summaries[i].status);
    if (!(summaries[i].layout == summaries[0].layout)) {
      return Status::InvalidArgument(JoinPath(dataset->files.base, names[i]) + " has other columns (" +
                                     summaries[i].layout.Describe() + ") than " +
                                     JoinPath(dataset->files.base, names[0]) + " (" + summaries[0].layout.Describe() +
                                     "): a dataset's files must share one layout");
    }
    for (size_t g = 0; g < summaries[i].rows.size(); ++g) {
      if (summaries[i].rows[g] == 0) continue;  // an empty row group holds no sample
      dataset->shards.push_back({uint32_t(i), int(g), summaries[i].rows[g], summaries[i].bytes[g]});
      dataset->samples += summaries[i].rows[g];
    }
  }
  dataset->classes = summaries[0].layout.classes;
  dataset->has_fields = !summaries[0].layout.fields.empty();
  return Status::OK();
}

Manifest ParquetManifest(const ParquetDataset& dataset) {
  Manifest m;
  m.name = BaseName(dataset.files.base) + (dataset.files.split.empty() ? "" : "-" + dataset.files.split);
  m.format = DatasetFormat::kParquet;
  m.samples = dataset.samples;
  m.classes = dataset.classes;
  for (const ParquetShard& shard : dataset.shards) {
    ShardEntry e;
    e.file = ParquetShardName(dataset.files.names[shard.file], shard.row_group);
    e.samples = shard.rows;
    e.bytes = shard.bytes;
    if (dataset.has_fields) e.fields["json"] = shard.rows;
    m.bytes += e.bytes;
    m.shards.push_back(std::move(e));
  }
  return m;
}

}  // namespace shardpack
