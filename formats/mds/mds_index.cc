#include "formats/mds/mds_index.h"

#include <nlohmann/json.hpp>

namespace shardpack {
namespace {

using nlohmann::json;

Status ParseFile(const json& j, const std::string& where, MdsFile* file) {
  if (!j.is_object()) return Status::DataLoss(where + " is not an object");
  const auto basename = j.find("basename");
  const auto bytes = j.find("bytes");
  if (basename == j.end() || !basename->is_string() || !SafeBasename(basename->get<std::string>())) {
    return Status::DataLoss(where + ".basename is not a file name in the dataset folder");
  }
  if (bytes == j.end() || !bytes->is_number_unsigned()) {
    return Status::DataLoss(where + ".bytes is not a size in bytes");
  }
  file->basename = basename->get<std::string>();
  file->bytes = bytes->get<uint64_t>();
  file->hashes.clear();
  if (const auto hashes = j.find("hashes"); hashes != j.end() && hashes->is_object()) {
    for (const auto& [algo, digest] : hashes->items()) {
      if (digest.is_string()) file->hashes[algo] = digest.get<std::string>();
    }
  }
  return Status::OK();
}

Status ParseColumns(const json& shard, const std::string& where, std::vector<MdsColumn>* columns) {
  const auto names = shard.find("column_names");
  const auto encodings = shard.find("column_encodings");
  const auto sizes = shard.find("column_sizes");
  if (names == shard.end() || encodings == shard.end() || sizes == shard.end() || !names->is_array() ||
      !encodings->is_array() || !sizes->is_array() || names->size() != encodings->size() ||
      names->size() != sizes->size()) {
    return Status::DataLoss(where +
                            ": column_names, column_encodings and column_sizes are not three lists of one length");
  }
  columns->clear();
  for (size_t c = 0; c < names->size(); ++c) {
    const json& name = (*names)[c];
    const json& encoding = (*encodings)[c];
    const json& size = (*sizes)[c];
    if (!name.is_string() || !encoding.is_string()) {
      return Status::DataLoss(where + ": column " + std::to_string(c) + "'s name or encoding is not text");
    }
    MdsColumn column{name.get<std::string>(), encoding.get<std::string>(), 0};
    if (size.is_number_unsigned() && size.get<uint64_t>() > 0 && size.get<uint64_t>() < kMaxMdsShardBytes) {
      column.size = static_cast<uint32_t>(size.get<uint64_t>());
    } else if (!size.is_null()) {
      return Status::DataLoss(where + ": column " + column.name + "'s size is neither null nor a size in bytes");
    }
    columns->push_back(std::move(column));
  }
  if (columns->empty()) return Status::DataLoss(where + " has no columns");
  return Status::OK();
}

bool SameColumns(const std::vector<MdsColumn>& a, const std::vector<MdsColumn>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].encoding != b[i].encoding || a[i].size != b[i].size) return false;
  }
  return true;
}

Status ParseShard(const json& j, const std::string& where, MdsShardInfo* shard, std::vector<MdsColumn>* columns) {
  if (!j.is_object()) return Status::DataLoss(where + " is not an object");
  const auto format = j.find("format");
  if (format == j.end() || !format->is_string()) return Status::DataLoss(where + " has no format");
  if (format->get<std::string>() != "mds") {
    return Status::Unsupported(where + " is a '" + format->get<std::string>() +
                               "' shard; shardpack reads MDS shards (MDSWriter), not Streaming's JSON or CSV ones");
  }
  const auto samples = j.find("samples");
  if (samples == j.end() || !samples->is_number_unsigned() || samples->get<uint64_t>() >= kMaxMdsShardBytes / 4) {
    return Status::DataLoss(where + ".samples is not a sample count");
  }
  shard->samples = samples->get<uint64_t>();
  const auto raw = j.find("raw_data");
  if (raw == j.end()) return Status::DataLoss(where + " has no raw_data");
  SHARDPACK_RETURN_IF_ERROR(ParseFile(*raw, where + ".raw_data", &shard->raw));
  // Header: the count, then one offset more than samples; each uint32.
  if (shard->raw.bytes >= kMaxMdsShardBytes || shard->raw.bytes < 8 + 4 * shard->samples) {
    return Status::DataLoss(where + ".raw_data.bytes " + std::to_string(shard->raw.bytes) +
                            " cannot hold the header of " + std::to_string(shard->samples) + " samples");
  }
  const auto zip = j.find("zip_data");
  shard->compressed = zip != j.end() && !zip->is_null();
  shard->compression.clear();
  if (shard->compressed) {
    SHARDPACK_RETURN_IF_ERROR(ParseFile(*zip, where + ".zip_data", &shard->zip));
    const auto compression = j.find("compression");
    if (compression == j.end() || !compression->is_string()) {
      return Status::DataLoss(where + " has zip_data but no compression");
    }
    shard->compression = compression->get<std::string>();
    shard->codec = MdsCodec::kZstd;
    const std::string family = shard->compression.substr(0, shard->compression.find(':'));
    if (family != "zstd") {
      return Status::Unsupported(where + " is compressed with " + shard->compression +
                                 ", which shardpack does not read (it reads zstd and uncompressed MDS shards): "
                                 "write the dataset again with MDSWriter(compression='zstd') or none");
    }
  }
  return ParseColumns(j, where, columns);
}

}  // namespace

bool SafeBasename(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

bool LooksLikeMdsIndex(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("version") && j.contains("shards");
}

Status ParseMdsIndex(std::string_view text, const std::string& path, MdsIndex* index) {
  *index = MdsIndex();
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::DataLoss(path + " is not a JSON object");
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer() || version->get<int64_t>() != 2) {
    return Status::Unsupported(path + ": index version " + (version == j.end() ? "(none)" : version->dump()) +
                               "; shardpack reads MDS index version 2 (mosaicml-streaming 0.4 and later)");
  }
  const auto shards = j.find("shards");
  if (shards == j.end() || !shards->is_array()) return Status::DataLoss(path + " has no list of shards");
  std::vector<MdsColumn> columns;
  for (size_t i = 0; i < shards->size(); ++i) {
    const std::string where = path + ": shards[" + std::to_string(i) + "]";
    MdsShardInfo shard;
    SHARDPACK_RETURN_IF_ERROR(ParseShard((*shards)[i], where, &shard, &columns));
    if (i == 0) {
      index->columns = columns;
    } else if (!SameColumns(columns, index->columns)) {
      return Status::DataLoss(where + " has other columns than shards[0]; one dataset has one layout");
    }
    index->samples += shard.samples;
    index->shards.push_back(std::move(shard));
  }
  return Status::OK();
}

}  // namespace shardpack
