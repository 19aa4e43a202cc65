#include "formats/mds/litdata_index.h"

#include <nlohmann/json.hpp>

#include "ground/printable.h"

namespace shardpack {
namespace {

using nlohmann::json;

// The encoding the MDS code reads a LitData leaf by.
std::string ColumnEncoding(const std::string& serializer) {
  if (serializer == "float") return "float64";
  if (serializer == "text") return "str";
  if (serializer == "image:png") return "png";
  if (serializer.rfind("image:", 0) == 0) return "jpeg";  // encoded image bytes of any format, sniffed when read
  return serializer;
}

// The leaves' names from the pytree spec (torch.utils._pytree's treespec_dumps: [version, node]).
Status LeafNames(const std::string& spec_text, size_t leaves, const std::string& path,
                 std::vector<std::string>* names) {
  const auto bad = [&](const std::string& why) { return Status::DataLoss(path + ": config.data_spec " + why); };
  const json spec = json::parse(spec_text, nullptr, /*allow_exceptions=*/false);
  if (!spec.is_array() || spec.size() != 2 || !spec[1].is_object()) return bad("is not a pytree spec");
  const json& node = spec[1];
  const json type = node.value("type", json());
  names->clear();
  if (type.is_null()) {
    names->push_back("item");  // the item is one leaf
  } else {
    const json children = node.value("children_spec", json());
    if (!children.is_array()) return bad("has no children_spec");
    for (const json& child : children) {
      if (!child.is_object() || !child.value("type", json()).is_null()) {
        return Status::Unsupported(path + ": its items are nested (" + Printable(type.dump()) +
                                   " holding containers); shardpack reads flat items: a dict, tuple or list of "
                                   "leaves such as {\"image\": ..., \"label\": ...}");
      }
    }
    if (type == "builtins.dict" || type == "collections.OrderedDict") {
      const json keys = json::parse(node.value("context", std::string("null")), nullptr, false);
      if (!keys.is_array() || keys.size() != children.size()) return bad("names its keys in no list");
      for (const json& k : keys) names->push_back(k.is_string() ? k.get<std::string>() : k.dump());
    } else if (type == "builtins.tuple" || type == "builtins.list") {
      for (size_t i = 0; i < children.size(); ++i) names->push_back(std::to_string(i));
    } else {
      return Status::Unsupported(path + ": its items are " + Printable(type.dump()) +
                                 "; shardpack reads items that are a dict, tuple or list of leaves");
    }
  }
  if (names->size() != leaves) {
    return bad("has " + std::to_string(names->size()) + " leaves, data_format " + std::to_string(leaves));
  }
  return Status::OK();
}

Status ParseConfig(const json& config, const std::string& path, MdsCodec* codec, std::string* compression,
                   std::vector<MdsColumn>* columns) {
  if (!config.is_object()) return Status::DataLoss(path + ": config is not an object");
  const std::string loader = config.value("item_loader", std::string("PyTreeLoader"));
  if (loader != "PyTreeLoader") {
    return Status::Unsupported(path + ": its items are read by LitData's " + Printable(loader) +
                               "; shardpack reads datasets of PyTreeLoader items (litdata.optimize's default)");
  }
  if (!config.value("encryption", json()).is_null()) {
    return Status::Unsupported(path + ": its chunks are encrypted; decrypt the dataset with litdata first");
  }
  *codec = MdsCodec::kNone;
  compression->clear();
  if (const json c = config.value("compression", json()); !c.is_null()) {
    *compression = c.is_string() ? c.get<std::string>() : c.dump();
    const json level_json = config.value("compression_level", json());
    const std::string level = level_json.is_string() ? level_json.get<std::string>() : "chunk";
    if (compression->rfind("zstd", 0) != 0 || (level != "chunk" && level != "batch")) {
      return Status::Unsupported(path + ": its chunks are compressed with " + Printable(*compression) + " at the '" +
                                 Printable(level) +
                                 "' level; shardpack reads zstd at the chunk and batch levels and uncompressed "
                                 "chunks: optimize again with compression='zstd' (or None)");
    }
    *codec = level == "batch" ? MdsCodec::kLitDataFramedZstd : MdsCodec::kZstd;
  }
  const json formats = config.value("data_format", json());
  const json spec = config.value("data_spec", json());
  if (!formats.is_array() || formats.empty() || !spec.is_string()) {
    return Status::DataLoss(path + ": config has no data_format list and data_spec");
  }
  std::vector<std::string> names;
  SHARDPACK_RETURN_IF_ERROR(LeafNames(spec.get<std::string>(), formats.size(), path, &names));
  columns->clear();
  for (size_t i = 0; i < formats.size(); ++i) {
    if (!formats[i].is_string()) return Status::DataLoss(path + ": config.data_format holds a non-text entry");
    columns->push_back({names[i], ColumnEncoding(formats[i].get<std::string>()), 0});
  }
  return Status::OK();
}

}  // namespace

bool LooksLikeLitDataIndex(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("chunks") && j.contains("config");
}

Status ParseLitDataIndex(std::string_view text, const std::string& path, MdsIndex* index) {
  *index = MdsIndex();
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::DataLoss(path + " is not a JSON object");
  MdsCodec codec = MdsCodec::kNone;
  std::string compression;
  SHARDPACK_RETURN_IF_ERROR(ParseConfig(j.value("config", json()), path, &codec, &compression, &index->columns));
  const json chunks = j.value("chunks", json());
  if (!chunks.is_array()) return Status::DataLoss(path + " has no list of chunks");
  for (size_t i = 0; i < chunks.size(); ++i) {
    const std::string where = path + ": chunks[" + std::to_string(i) + "]";
    const json& c = chunks[i];
    if (!c.is_object()) return Status::DataLoss(where + " is not an object");
    const json filename = c.value("filename", json()), size = c.value("chunk_size", json()),
               bytes = c.value("chunk_bytes", json());
    if (!filename.is_string() || !SafeBasename(filename.get<std::string>())) {
      return Status::DataLoss(where + ".filename is not a file name in the dataset folder");
    }
    if (!size.is_number_unsigned() || size.get<uint64_t>() >= kMaxMdsShardBytes / 4) {
      return Status::DataLoss(where + ".chunk_size is not an item count");
    }
    if (!bytes.is_number_unsigned() || bytes.get<uint64_t>() >= kMaxMdsShardBytes) {
      return Status::DataLoss(where + ".chunk_bytes is not a size under 4 GiB");
    }
    MdsShardInfo shard;
    shard.samples = size.get<uint64_t>();
    const MdsFile file{filename.get<std::string>(), bytes.get<uint64_t>(), {}};
    shard.codec = codec;
    shard.compressed = codec != MdsCodec::kNone;
    shard.compression = compression;
    if (shard.codec == MdsCodec::kZstd) {
      // The whole file compressed: chunk_bytes is the chunk's size before (LitData counts it
      // before it compresses the file), the file's own size is not recorded.
      shard.raw = file;
      shard.zip = {file.basename, 0, {}, /*size_known=*/false};
    } else if (shard.codec == MdsCodec::kLitDataFramedZstd) {
      // Framed: chunk_bytes is the file's size; what it holds unframed its header says.
      shard.zip = file;
      shard.raw = {file.basename, 0, {}, /*size_known=*/false};
    } else {
      shard.raw = file;
      if (file.bytes < 4 * (shard.samples + 2)) {
        return Status::DataLoss(where + ".chunk_bytes " + std::to_string(file.bytes) + " cannot hold the header of " +
                                std::to_string(shard.samples) + " items");
      }
    }
    index->samples += shard.samples;
    index->shards.push_back(std::move(shard));
  }
  return Status::OK();
}

}  // namespace shardpack
