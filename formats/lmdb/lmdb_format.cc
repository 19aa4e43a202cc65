#include "formats/lmdb/lmdb_format.h"

#include <cstdint>
#include <cstring>

#include "ground/json_integer.h"

namespace shardpack {

void AppendLmdbRecord(const std::string& header_json, std::string_view image, std::string* out) {
  const uint32_t h = static_cast<uint32_t>(header_json.size());
  out->append(kLmdbRecordMagic, 4);
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((h >> (8 * i)) & 0xFF));
  out->append(header_json);
  out->append(image);
}

std::string EncodeLmdbRecord(const nlohmann::json& header, std::string_view image) {
  std::string record;
  AppendLmdbRecord(header.dump(), image, &record);
  return record;
}

namespace {

// The header fields readers take with json::value(): a wrong type would throw from there, and a
// number out of its type's range would be cast (ground/json_integer.h).
Status CheckHeaderFields(const nlohmann::json& header) {
  for (const char* name : {"key", "path", "format", "xxh64"}) {
    const auto f = header.find(name);
    if (f != header.end() && !f->is_string()) {
      return Status::DataLoss(std::string("record header field \"") + name + "\" is " + f->dump() + ", not a string");
    }
  }
  const struct {
    const char* name;
    int64_t min, max;
  } integers[] = {{"label", -1, INT32_MAX}, {"width", 0, UINT32_MAX}, {"height", 0, UINT32_MAX}};
  for (const auto& n : integers) {
    const auto f = header.find(n.name);
    if (f == header.end()) continue;
    if (!IsJsonIntegerIn(*f, n.min, uint64_t(n.max))) {
      return Status::DataLoss(std::string("record header field \"") + n.name + "\" is " + f->dump() +
                              ", not an integer from " + std::to_string(n.min) + " to " + std::to_string(n.max));
    }
  }
  return Status::OK();
}

}  // namespace

Status ParseLmdbRecord(std::string_view record, nlohmann::json* header, std::string_view* image) {
  if (record.size() < 8 || std::memcmp(record.data(), kLmdbRecordMagic, 4) != 0) {
    return Status::DataLoss("record does not start with the SPR1 magic");
  }
  uint32_t h = 0;
  for (int i = 0; i < 4; ++i) h |= uint32_t(static_cast<unsigned char>(record[4 + i])) << (8 * i);
  if (h > record.size() - 8) return Status::DataLoss("record header length runs past the record");
  *header = nlohmann::json::parse(record.substr(8, h), nullptr, /*allow_exceptions=*/false);
  if (header->is_discarded() || !header->is_object()) return Status::DataLoss("record header is not a JSON object");
  SHARDPACK_RETURN_IF_ERROR(CheckHeaderFields(*header));
  *image = record.substr(8 + h);
  return Status::OK();
}

Status ParseLmdbSample(std::string_view record, std::string_view db_key, LmdbSample* sample) {
  nlohmann::json h;
  SHARDPACK_RETURN_IF_ERROR(ParseLmdbRecord(record, &h, &sample->image));
  // CheckHeaderFields passed: value() below cannot throw, and the integers fit their types.
  const std::string fallback(db_key);
  sample->key = h.value("key", fallback);
  sample->path = h.value("path", fallback);
  sample->label = h.value("label", -1);
  const std::string format = h.value("format", "");
  sample->format = ImageFormatFromExtension(format == "jpeg" ? "jpg" : format);
  sample->width = h.value("width", 0u);
  sample->height = h.value("height", 0u);
  sample->xxh64 = h.value("xxh64", "");
  return Status::OK();
}

}  // namespace shardpack
