#include "formats/lmdb/lmdb_format.h"

#include <cstdint>
#include <cstring>

#include "ground/checksum.h"
#include "ground/json_integer.h"

namespace shardpack {

void AppendLmdbRecord(const std::string& header_json, std::string_view image, const std::vector<SampleField>* fields,
                      std::string* out) {
  const bool with_fields = fields != nullptr && !fields->empty();
  const uint32_t h = static_cast<uint32_t>(header_json.size());
  out->append(with_fields ? kLmdbRecordWithFieldsMagic : kLmdbRecordMagic, 4);
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((h >> (8 * i)) & 0xFF));
  out->append(header_json);
  out->append(image);
  if (with_fields) {
    for (const SampleField& f : *fields) out->append(f.data);
  }
}

std::string EncodeLmdbRecord(const nlohmann::json& header, std::string_view image,
                             const std::vector<SampleField>* fields) {
  std::string record;
  AppendLmdbRecord(header.dump(), image, fields, &record);
  return record;
}

void AddLmdbFieldsHeader(std::string_view image, const std::vector<SampleField>& fields, nlohmann::json* header) {
  (*header)["image_size"] = image.size();
  nlohmann::json list = nlohmann::json::array();
  for (const SampleField& f : fields) {
    list.push_back({{"name", f.name}, {"size", f.data.size()}, {"xxh64", ChecksumHex(Xxh64(f.data))}});
  }
  (*header)["fields"] = std::move(list);
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
  } integers[] = {{"label", -1, INT32_MAX}, {"width", 0, UINT32_MAX}, {"height", 0, UINT32_MAX}, {"orientation", 1, 8}};
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

// An SPR2 record's image and fields, after its header: the sizes the header gives must add up to
// what follows it exactly.
Status SplitFields(const nlohmann::json& header, std::string_view rest, std::string_view* image,
                   std::vector<LmdbField>* fields) {
  const auto size = header.find("image_size");
  const auto list = header.find("fields");
  if (size == header.end() || !IsJsonIntegerIn(*size, 0, rest.size()) || list == header.end() || !list->is_array()) {
    return Status::DataLoss("SPR2 record header lacks a valid \"image_size\" or \"fields\"");
  }
  uint64_t offset = size->get<uint64_t>();
  *image = rest.substr(0, offset);
  for (const nlohmann::json& f : *list) {
    const auto name = f.find("name"), bytes = f.find("size"), xxh64 = f.find("xxh64");
    if (!f.is_object() || name == f.end() || !name->is_string() || bytes == f.end() ||
        !IsJsonIntegerIn(*bytes, 0, rest.size() - offset) || xxh64 == f.end() || !xxh64->is_string()) {
      return Status::DataLoss("SPR2 record field entry " + f.dump() + " is not {name, size, xxh64} within the record");
    }
    const uint64_t n = bytes->get<uint64_t>();
    if (fields != nullptr)
      fields->push_back({name->get<std::string>(), rest.substr(offset, n), xxh64->get<std::string>()});
    offset += n;
  }
  if (offset != rest.size()) return Status::DataLoss("SPR2 record sizes do not add up to the record");
  return Status::OK();
}

Status ParseLmdbRecord(std::string_view record, nlohmann::json* header, std::string_view* image,
                       std::vector<LmdbField>* fields) {
  if (fields != nullptr) fields->clear();
  const bool v1 = record.size() >= 8 && std::memcmp(record.data(), kLmdbRecordMagic, 4) == 0;
  const bool v2 = record.size() >= 8 && std::memcmp(record.data(), kLmdbRecordWithFieldsMagic, 4) == 0;
  if (!v1 && !v2) return Status::DataLoss("record does not start with the SPR1 or SPR2 magic");
  uint32_t h = 0;
  for (int i = 0; i < 4; ++i) h |= uint32_t(static_cast<unsigned char>(record[4 + i])) << (8 * i);
  if (h > record.size() - 8) return Status::DataLoss("record header length runs past the record");
  *header = nlohmann::json::parse(record.substr(8, h), nullptr, /*allow_exceptions=*/false);
  if (header->is_discarded() || !header->is_object()) return Status::DataLoss("record header is not a JSON object");
  SHARDPACK_RETURN_IF_ERROR(CheckHeaderFields(*header));
  if (v2) return SplitFields(*header, record.substr(8 + h), image, fields);
  *image = record.substr(8 + h);
  return Status::OK();
}

nlohmann::json LmdbRecordMetadata(nlohmann::json header) {
  for (const char* own : {"key", "label", "xxh64", "image_size", "fields"}) header.erase(own);
  return header;
}

Status ParseLmdbSample(std::string_view record, std::string_view db_key, LmdbSample* sample) {
  nlohmann::json h;
  SHARDPACK_RETURN_IF_ERROR(ParseLmdbRecord(record, &h, &sample->image, &sample->fields));
  // CheckHeaderFields passed: value() below cannot throw, and the integers fit their types.
  const std::string fallback(db_key);
  sample->key = h.value("key", fallback);
  sample->path = h.value("path", fallback);
  sample->label = h.value("label", -1);
  const std::string format = h.value("format", "");
  sample->format = ImageFormatFromExtension(format == "jpeg" ? "jpg" : format);
  sample->width = h.value("width", 0u);
  sample->height = h.value("height", 0u);
  sample->original_width = h.value("original_width", 0u);
  sample->original_height = h.value("original_height", 0u);
  sample->orientation = h.value("orientation", 1);
  sample->xxh64 = h.value("xxh64", "");
  return Status::OK();
}

}  // namespace shardpack
