#include "formats/lmdb/lmdb_format.h"

#include <cstring>

namespace shardpack {

std::string EncodeLmdbRecord(const nlohmann::json& header, std::string_view image) {
  const std::string json = header.dump();
  const uint32_t h = static_cast<uint32_t>(json.size());
  std::string record;
  record.reserve(8 + json.size() + image.size());
  record.append(kLmdbRecordMagic, 4);
  for (int i = 0; i < 4; ++i) record.push_back(static_cast<char>((h >> (8 * i)) & 0xFF));
  record.append(json);
  record.append(image);
  return record;
}

Status ParseLmdbRecord(std::string_view record, nlohmann::json* header, std::string_view* image) {
  if (record.size() < 8 || std::memcmp(record.data(), kLmdbRecordMagic, 4) != 0) {
    return Status::DataLoss("record does not start with the SPR1 magic");
  }
  uint32_t h = 0;
  for (int i = 0; i < 4; ++i) h |= uint32_t(static_cast<unsigned char>(record[4 + i])) << (8 * i);
  if (h > record.size() - 8) return Status::DataLoss("record header length runs past the record");
  *header = nlohmann::json::parse(record.substr(8, h), nullptr, /*allow_exceptions=*/false);
  if (header->is_discarded() || !header->is_object()) return Status::DataLoss("record header is not a JSON object");
  *image = record.substr(8 + h);
  return Status::OK();
}

}  // namespace shardpack
